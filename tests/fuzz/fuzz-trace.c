/*
 * fuzz-trace.c — libFuzzer harness for the analyze pipeline: the input is a trace
 * file (plain or gzip), put in a memfd and loaded by path (/proc/self/fd/N), so
 * input.c, trace.c, link.c, analyze.c, opmodel.c, table.c and report-doc.c all run:
 *
 *   trace_load (strict or not) -> link_trace -> analyze_run for one group key
 *   (kernel, op, op-shape; picked by the second-to-last byte) with the built-in
 *   device db -> analyze_sort -> analyze_select -> report_doc_write in all four formats.
 *
 * One group per input, not all three: the mutator reaches every group through that
 * byte, and an input costs a third of the analysis and rendering (with run.sh's small
 * arena blocks and JSON window, about twice the execs per second: tests/fuzz/README.md).
 *
 * Checked beyond the sanitizers: a failed load is status 3 with a message that
 * names the file and says "error:" (JSON: FILE:LINE:COL; gzip: in 'FILE');
 * the json format parses as JSON; every format and every warning is valid UTF-8 without NUL;
 * rows have no negative times or counts and no NaN percentages.
 * With HOSTILE_CHECKS (1 unless built with -DHOSTILE_CHECKS=0): every format's text holds no
 * C0 control byte but '\n' and '\t' (a name from the trace with ESC, CR or BS would drive
 * the terminal it is printed on); HOSTILE_WARN_CHECKS (HOSTILE_CHECKS unless set) the same for
 * the warnings.
 * Build and run: tests/fuzz/run.sh trace.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <math.h>

#include "kprof/analyze.h"
#include "kprof/devdb.h"
#include "kprof/json.h"
#include "kprof/link.h"
#include "kprof/report-doc.h"
#include "kprof/trace.h"
#include "kprof/utf8.h"
#include "kprof/sort.h"

/* parse @keys and sort (sort.h), as the command does */
static int analyze_sort(struct kp_report *r, const char *keys, const char **bad)
{
	struct kp_sort_spec sp;
	if (sort_parse(&sp, SORT_ANALYZE, keys, bad) < 0)
		return -1;
	sort_analyze(r, &sp);
	return 0;
}

#define FUZZ_NAME "fuzz-trace"
#include "fuzz.h"

static struct kp_devdb db;
static FILE *devnull;
static int fd = -1;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct kp_diag d = { 0 };
	(void)argc;
	(void)argv;
	if (devdb_load_builtin(&db, &d) < 0) {
		fprintf(stderr, "fuzz-trace: built-in device db: %s\n", d.msg);
		abort();
	}
	devnull = fopen("/dev/null", "w");
	CHECK(devnull);
	fd = fuzz_memfd(path, sizeof(path));
	return 0;
}

#ifndef HOSTILE_CHECKS
#define HOSTILE_CHECKS 1
#endif
#ifndef HOSTILE_WARN_CHECKS
#define HOSTILE_WARN_CHECKS HOSTILE_CHECKS
#endif

/*
 * Text for a terminal: valid UTF-8 without NUL and, when @hostile, no C0 control byte but
 * '\n' and '\t' (and CR before LF in csv, whose records end in CRLF: RFC 4180, table.c).
 * @what names the output in the report.
 */
static void check_text(const char *s, size_t n, const char *what, int hostile)
{
	if (!utf8_is_clean(s, n)) {
		fprintf(stderr, "fuzz-trace: %s is not valid UTF-8 without NUL\n", what);
		abort();
	}
	for (size_t i = 0; hostile && i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		int crlf = ch == '\r' && i + 1 < n && s[i + 1] == '\n' && !strcmp(what, "the csv format");
		if (ch < 0x20 && ch != '\n' && ch != '\t' && !crlf) {
			fprintf(stderr, "fuzz-trace: %s holds control byte 0x%02x at offset %zu\n",
				what, ch, i);
			abort();
		}
	}
}

/* The json format must be one valid JSON document. */
static void check_json(const char *s, size_t n)
{
	struct kp_json p;
	struct kp_json_tok t;
	enum kp_json_type ty;

	json_init_mem(&p, s, n);
	while ((ty = json_next(&p, &t)) != JT_END && ty != JT_ERROR)
		;
	if (ty == JT_ERROR) {
		fprintf(stderr, "fuzz-trace: json output invalid at %lld: %s\n%.*s\n",
			(long long)p.err_off, p.err, (int)n, s);
		abort();
	}
	json_free(&p);
}

/* Every warning, as --warnings=all prints it, is valid UTF-8 too. */
static void check_warnings(const struct kp_warnings *w)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *mf = open_memstream(&buf, &n);
	CHECK(mf);
	diag_warn_print(w, WARN_ALL, "base", mf);
	diag_warn_print(w, WARN_SUMMARY, NULL, mf);
	fclose(mf);
	check_text(buf, n, "a warning", HOSTILE_WARN_CHECKS);
	free(buf);
}

static void check_report(const struct kp_report *r)
{
	for (size_t i = 0; i < r->nrows; i++) {
		const struct kp_row *w = &r->rows[i];
		CHECK(w->name != NULL);
		CHECK(w->time_ns >= 0);
		CHECK(w->calls >= 0 && w->kernels >= 0);
		CHECK(w->flops >= -1 && w->bytes >= -1);
		CHECK(!isnan(w->time_pct) && !isnan(w->pct_peak_flops) && !isnan(w->pct_peak_bw));
		CHECK(!isnan(w->flops_per_s) && !isnan(w->bytes_per_s) && !isnan(w->intensity));
	}
	CHECK(r->tot.gpu_time_ns >= 0 && r->tot.gpu_busy_ns >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_fill(fd, data, size);

	/* the last byte picks strict mode and the sort keys, so it still parses as JSON */
	unsigned sel = size ? data[size - 1] : 0;
	struct kp_diag d = { 0 };
	struct kp_trace t;
	struct kp_load_opts lo = { .strict = (sel & 1) };
	if (trace_load(&t, path, &lo, &d) < 0) {
		if (d.status != KP_BADINPUT || strstr(d.msg, path) == NULL ||
		    strstr(d.msg, "error:") == NULL) {
			fprintf(stderr, "fuzz-trace: bad failure: status %d: %s\n", d.status,
				d.msg);
			abort();
		}
		check_warnings(&t.warn);
		trace_free(&t);
		return 0;
	}
	link_trace(&t);
	int group = GROUP_KERNEL + (size > 1 ? data[size - 2] : 0) % 3;
	static const char *const sorts[] = {
		NULL,       "calls",  "pct-peak,name:asc", "intensity:asc,op",
		"med,gbps", "tflops", "bytes:asc",         "min,max,avg"
	};
	struct kp_analyze_opts ao = {
		.group = group,
		.db = &db,
		.full_names = (sel >> 1) & 1,
		.step_series = (sel >> 7) & 1,
	};
	if (sel & 0x40)
		ao.sm_clock_mhz = 1 + (sel & 0x3f) * 40;
	struct kp_report r;
	const char *bad;
	CHECK(analyze_run(&t, &ao, &r) == 0);
	check_report(&r);
	CHECK(analyze_sort(&r, sorts[(sel >> 2) & 7], &bad) == 0);
	analyze_select(&r, (sel >> 4) & 3 ? (sel >> 4) & 3 : 20, (sel & 8) ? 5.0 : 0);
	check_report(&r);
	for (int f = FMT_TABLE; f <= FMT_MARKDOWN; f++) {
		struct kp_report_doc_opts ro = { .format = f,
					     .stats = (sel >> 5) & 1,
					     .full_names = ao.full_names };
		char *buf = NULL;
		size_t n = 0;
		FILE *mf = open_memstream(&buf, &n);
		CHECK(mf);
		report_doc_write(&r, &ro, mf);
		fclose(mf);
		if (f == FMT_JSON)
			check_json(buf, n);
		static const char *const fmt_names[] = { "the table format", "the csv format",
							 "the json format",
							 "the markdown format" };
		/* names are cleaned (UTF-8) when read; control bytes are the renderer's to escape */
		check_text(buf, n, fmt_names[(f - FMT_TABLE) % 4], HOSTILE_CHECKS);
		fwrite(buf, 1, n, devnull);
		free(buf);
	}
	check_warnings(&r.warn);
	analyze_free(&r);
	check_warnings(&t.warn);
	trace_free(&t);
	return 0;
}
