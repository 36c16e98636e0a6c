/*
 * test-summary.c — kprof merge's contract: a summary written by the per-rank view reads back
 * to the same ranks, merge(split) == whole, and merging is associative.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "kprof/ranks-doc.h"
#include "kprof/ranks.h"
#include "kprof/summary.h"
#include "kprof/table.h"

static char tmpdir[] = "/tmp/kprof-test-summary-XXXXXX";

#include "ranks-job.h"

/* The json document of @rs (compared; the thread count is no part of it: ranks-doc.c) */
static char *render(struct kp_ranks *rs)
{
	struct kp_doc doc;
	ranks_doc(rs, "NVIDIA H100 80GB HBM3", &doc);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	table_render(&doc, FMT_JSON, 0, f);
	fclose(f);
	doc_free(&doc);
	return buf;
}

/* analyze --ranks of the ranks @lo..@hi of the job, written as a summary file */
static const char *summary_of(char **paths, const int *idx, int n, const char *name)
{
	static char out[8][600];
	static int next;
	char *sel[NR];
	for (int i = 0; i < n; i++)
		sel[i] = paths[idx[i]];
	struct kp_ranks rs;
	struct kp_load_opts lo = { 0 };
	struct kp_diag d = { 0 };
	assert_int_equal(ranks_load(&rs, sel, (size_t)n, 1, &lo, &d), 0);
	ranks_compare(&rs, 450e9);
	char *s = render(&rs);
	char *path = out[next++ % 8];
	snprintf(path, 600, "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(s, f);
	fclose(f);
	free(s);
	ranks_free(&rs);
	return path;
}

static char *merge_of(const char **files, int n, const char *save_as)
{
	struct kp_ranks rs;
	memset(&rs, 0, sizeof(rs));
	struct kp_diag d = { 0 };
	for (int i = 0; i < n; i++)
		assert_int_equal(summary_load(&rs, files[i], &d), 0);
	ranks_compare(&rs, 450e9);
	char *s = render(&rs);
	if (save_as) {
		char path[600];
		snprintf(path, sizeof(path), "%s/%s", tmpdir, save_as);
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(s, f);
		fclose(f);
	}
	ranks_free(&rs);
	return s;
}

static void merge_of_a_split_equals_the_whole(void **state)
{
	(void)state;
	size_t n;
	char **paths = write_job(tmpdir, 1, &n);
	struct kp_ranks whole;
	struct kp_load_opts lo = { 0 };
	struct kp_diag d = { 0 };
	assert_int_equal(ranks_load(&whole, paths, n, 2, &lo, &d), 0);
	ranks_compare(&whole, 450e9);
	char *w = render(&whole);
	/* the straggler survives the round trip */
	assert_non_null(strstr(w, "{\"step\": 2, \"rank\": 2, \"lag_ns\": 500000"));
	ranks_free(&whole);

	static const int a[] = { 0, 2 }, b[] = { 1, 3 }, one[] = { 0 }, two[] = { 1 },
			 three[] = { 2 }, four[] = { 3 };
	const char *parts[2] = { summary_of(paths, a, 2, "a.json"),
				 summary_of(paths, b, 2, "b.json") };
	char *m = merge_of(parts, 2, NULL);
	assert_string_equal(m, w);
	free(m);

	/* one summary per rank, merged in one go and as a tree */
	const char *each[4] = { summary_of(paths, one, 1, "r0.json"),
				summary_of(paths, two, 1, "r1.json"),
				summary_of(paths, three, 1, "r2.json"),
				summary_of(paths, four, 1, "r3.json") };
	m = merge_of(each, 4, NULL);
	assert_string_equal(m, w);
	free(m);
	char *x = merge_of(each + 2, 2, "r23.json");
	free(x);
	char p23[600], p123[600];
	snprintf(p23, sizeof(p23), "%s/r23.json", tmpdir);
	const char *right[2] = { each[1], p23 };
	x = merge_of(right, 2, "r123.json");
	free(x);
	snprintf(p123, sizeof(p123), "%s/r123.json", tmpdir);
	const char *assoc[2] = { each[0], p123 };
	m = merge_of(assoc, 2, NULL);
	assert_string_equal(m, w);
	free(m);
	free(w);
}

/*
 * A trace's own warnings travel in its rank's summary: the merge of the per-rank summaries
 * lists them as analyze of all the traces does (they were dropped: the merged json differed
 * from the job's and a truncated rank went unnoticed), through a tree of merges too.
 */
static void a_traces_warnings_survive_the_merge(void **state)
{
	(void)state;
	char dir[600];
	snprintf(dir, sizeof(dir), "%s/warn", tmpdir);
	assert_int_equal(mkdir(dir, 0700), 0);
	size_t n;
	char **paths = write_job(dir, 1, &n);
	struct stat st;
	assert_int_equal(stat(paths[0], &st), 0); /* rank 3, cut: a truncated trace */
	assert_int_equal(truncate(paths[0], st.st_size * 7 / 10), 0);
	struct kp_ranks whole;
	struct kp_load_opts lo = { 0 };
	struct kp_diag d = { 0 };
	assert_int_equal(ranks_load(&whole, paths, n, 2, &lo, &d), 0);
	ranks_compare(&whole, 450e9);
	assert_int_equal(whole.r[3].rank, 3);
	assert_int_equal(whole.r[3].warn.nkinds, 1);
	char *w = render(&whole);
	ranks_free(&whole);
	assert_non_null(strstr(w, "job_rank3.json:"));
	assert_non_null(strstr(w, ": warning: trace is truncated at byte"));

	static const int one[] = { 0 }, two[] = { 1 }, three[] = { 2 }, four[] = { 3 };
	const char *each[4] = { summary_of(paths, one, 1, "w3.json"),
				summary_of(paths, two, 1, "w1.json"),
				summary_of(paths, three, 1, "w0.json"),
				summary_of(paths, four, 1, "w2.json") };
	char *m = merge_of(each, 4, NULL);
	assert_string_equal(m, w);
	free(m);
	free(merge_of(each, 2, "w31.json"));
	char p31[600];
	snprintf(p31, sizeof(p31), "%s/w31.json", tmpdir);
	const char *tree[3] = { p31, each[2], each[3] };
	m = merge_of(tree, 3, NULL);
	assert_string_equal(m, w);
	free(m);

	/* read back: the kind, its count and the message, its text after "warning: " */
	struct kp_ranks rs;
	memset(&rs, 0, sizeof(rs));
	assert_int_equal(summary_load(&rs, p31, &d), 0);
	assert_int_equal(rs.n, 2);
	const struct kp_warnings *rw = rs.r[0].rank == 3 ? &rs.r[0].warn : &rs.r[1].warn;
	assert_int_equal(rw->nkinds, 1);
	assert_int_equal(rw->k[0].count, 1);
	assert_int_equal(rw->k[0].nshown, 1);
	assert_true(strstr(rw->k[0].shown[0], "job_rank3.json:") != NULL);
	assert_true(!strncmp(rw->k[0].shown[0] + rw->k[0].text_off[0], "trace is truncated", 18));
	ranks_free(&rs);
	free(w);
}

/* A summary written before the breakdown's span was named "gpu_span_ns" still reads. */
static void a_summary_with_the_old_span_name_reads(void **state)
{
	(void)state;
	size_t n;
	char **paths = write_job(tmpdir, 1, &n);
	static const int one[] = { 0 };
	const char *file = summary_of(paths, one, 1, "old.json");
	FILE *f = fopen(file, "r");
	assert_non_null(f);
	static char buf[1 << 20], out[1 << 20];
	size_t len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	/* "gpu_span_ns" -> "span_ns" throughout */
	char *o = out;
	for (const char *p = buf; *p;) {
		if (!strncmp(p, "\"gpu_span_ns\"", 13)) {
			memcpy(o, "\"span_ns\"", 9);
			o += 9, p += 13;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	assert_null(strstr(out, "gpu_span_ns"));
	struct kp_ranks now, old;
	struct kp_diag d = { 0 };
	memset(&now, 0, sizeof(now));
	memset(&old, 0, sizeof(old));
	assert_int_equal(summary_load(&now, file, &d), 0);
	f = fopen(file, "w");
	assert_non_null(f);
	fputs(out, f);
	fclose(f);
	assert_int_equal(summary_load(&old, file, &d), 0);
	assert_true(now.r[0].bd.span_ns > 0);
	assert_int_equal(old.r[0].bd.span_ns, now.r[0].bd.span_ns);
	ranks_free(&now);
	ranks_free(&old);
}

static void a_trace_document_is_not_a_summary(void **state)
{
	(void)state;
	char path[600];
	snprintf(path, sizeof(path), "%s/plain.json", tmpdir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"kprof\": {\"version\": \"0.1.0\", \"command\": \"analyze\"}, \"rows\": []}\n", f);
	fclose(f);
	struct kp_ranks rs;
	memset(&rs, 0, sizeof(rs));
	struct kp_diag d = { 0 };
	assert_int_equal(summary_load(&rs, path, &d), -1);
	assert_int_equal(d.status, KP_BADINPUT);
	char want[800];
	snprintf(want, sizeof(want),
		 "%s: error: not a kprof summary (write one with 'kprof analyze --ranks --format json')",
		 path);
	assert_string_equal(d.msg, want);
	ranks_free(&rs);
}

static int load_summary(struct kp_ranks *rs, const char *text, struct kp_diag *d)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/rows.json", tmpdir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	memset(rs, 0, sizeof(*rs));
	memset(d, 0, sizeof(*d));
	return summary_load(rs, path, d);
}

/* issue 23 item 15: no ranks reached qsort(NULL, 0) and printed an empty report (exit 0) */
static void a_summary_of_no_ranks_is_refused(void **state)
{
	(void)state;
	struct kp_ranks rs;
	struct kp_diag d;
	assert_int_equal(load_summary(&rs, "{\"kprof_summary_version\":1,\"ranks\":[]}", &d), -1);
	assert_int_equal(d.status, KP_BADINPUT);
	char want[800];
	snprintf(want, sizeof(want), "%s/rows.json: error: the summary holds no ranks ('ranks' is empty)",
		 tmpdir);
	assert_string_equal(d.msg, want);
	assert_int_equal(rs.n, 0);
	ranks_free(&rs);
}

/*
 * "steps" and "comms" rows (open_rows, next_row, end_row): each row's values in order, a
 * second member appending past the first's capacity, a row of the wrong length refused.
 */
static void summary_rows_read_in_order_and_wrong_rows_are_refused(void **state)
{
	(void)state;
	char text[4096];
	int n = snprintf(text, sizeof(text),
			 "{\"kprof_summary_version\": 1, \"ranks\": [{\"rank\": 3, \"steps\": "
			 "[[1, 100, 50, 0], [2, 150, 60, 1]], \"comms\": [[10, 5, 1024, 1, 8, "
			 "\"allgather\"], [20, 6, 0, 2, -1, \"nonsense\"]], \"steps\": [");
	for (int i = 0; i < 20; i++)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "%s[%d, %d, 10, 0]",
			      i ? ", " : "", 10 + i, 1000 + 10 * i);
	snprintf(text + n, sizeof(text) - (size_t)n, "]}]}");
	struct kp_ranks rs;
	struct kp_diag d;
	assert_int_equal(load_summary(&rs, text, &d), 0);
	assert_int_equal(rs.n, 1);
	const struct kp_rank *r = &rs.r[0];
	assert_int_equal(r->rank, 3);
	assert_int_equal(r->nsteps, 22);
	assert_int_equal(r->steps[1].num, 2);
	assert_int_equal(r->steps[1].start_ns, 150);
	assert_int_equal(r->steps[1].span_ns, 60);
	assert_true(r->steps[1].partial);
	assert_false(r->steps[0].partial);
	assert_int_equal(r->steps[21].num, 29);
	assert_int_equal(r->steps[21].start_ns, 1190);
	assert_int_equal(r->ncomms, 2);
	assert_int_equal(r->comms[0].ts_ns, 10);
	assert_int_equal(r->comms[0].dur_ns, 5);
	assert_int_equal(r->comms[0].bytes, 1024);
	assert_int_equal(r->comms[0].step, 1);
	assert_int_equal(r->comms[0].group, 8);
	assert_int_equal(r->comms[0].kind, COLL_ALLGATHER);
	assert_int_equal(r->comms[1].group, -1);
	assert_int_equal(r->comms[1].kind, COLL_OTHER);
	ranks_free(&rs);
	static const char *const bad[] = {
		"{\"kprof_summary_version\": 1, \"ranks\": [{\"steps\": [[1, 2, 3, 4, 5]]}]}",
		"{\"kprof_summary_version\": 1, \"ranks\": [{\"steps\": [[1, 2, 3]]}]}",
		"{\"kprof_summary_version\": 1, \"ranks\": [{\"comms\": [7]}]}",
		"{\"kprof_summary_version\": 1, \"ranks\": [{\"comms\": {}}]}",
		/* a count past int64 as a double (fuzz-summary: was cast, undefined behaviour) */
		"{\"kprof_summary_version\": 1, \"ranks\": [{\"rank\": 4.2e218}]}",
		"{\"kprof_summary_version\": 1, \"ranks\": [{\"rank\": -1e19}]}",
	};
	for (int i = 0; i < 6; i++) {
		assert_int_equal(load_summary(&rs, bad[i], &d), -1);
		assert_non_null(strstr(d.msg, "error: not a kprof summary (a 'ranks' member of an "
					      "unexpected shape)"));
		ranks_free(&rs);
	}
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(merge_of_a_split_equals_the_whole),
		cmocka_unit_test(a_traces_warnings_survive_the_merge),
		cmocka_unit_test(a_trace_document_is_not_a_summary),
		cmocka_unit_test(a_summary_with_the_old_span_name_reads),
		cmocka_unit_test(a_summary_of_no_ranks_is_refused),
		cmocka_unit_test(summary_rows_read_in_order_and_wrong_rows_are_refused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
