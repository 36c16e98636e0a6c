/*
 * fuzz-results.c — libFuzzer harness for src/ingest/results-read.c: the input bytes are a
 * `kprof analyze --results` file (a JSON array of benchmark-db records when its first
 * non-blank byte is '[', else CSV), read by results_read(); when read, its report document
 * built (the summary table and one chart per workload, results_doc()) and rendered as html
 * and svg, as analyze does.
 *
 * Checked beyond the sanitizers: 0, or -1 with status 3 (4 when out of memory) and a message
 * naming the file; every case read has a backend and finite figures >= 0.
 * Build and run: tests/fuzz/run.sh results.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/diag.h"
#include "kprof/doc.h"
#include "kprof/results.h"
#include "kprof/table.h"

#define FUZZ_NAME "fuzz-results"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kp_results rs;
	memset(&rs, 0, sizeof(rs));
	struct kp_diag d;
	memset(&d, 0, sizeof(d));
	int rc = results_read(&rs, (const char *)data, size, "fuzz.csv", &d);
	CHECK(rc == 0 || rc == -1);
	if (rc < 0) {
		CHECK((d.status == KP_BADINPUT || d.status == KP_ENV) && strstr(d.msg, "fuzz.csv"));
		results_free(&rs);
		return 0;
	}
	for (size_t i = 0; i < rs.n; i++) {
		const struct kp_result *r = &rs.r[i];
		CHECK(r->backend[0] != '\0');
		CHECK(isfinite(r->ms) && r->ms >= 0 && isfinite(r->tflops) && r->tflops >= 0 &&
		      isfinite(r->gbs) && r->gbs >= 0 && isfinite(r->peak_pct) && r->peak_pct >= 0);
	}
	/* rendered as analyze --results -f html and -f svg do, into nothing */
	static FILE *null;
	if (!null)
		null = fopen("/dev/null", "w");
	struct kp_doc doc;
	doc_init(&doc, "analyze", 10);
	results_doc(&doc, &rs, NULL, 1, NULL);
	if (null) {
		table_render(&doc, FMT_HTML, 0, null);
		table_render(&doc, FMT_SVG, 0, null);
	}
	doc_free(&doc);
	results_free(&rs);
	return 0;
}
