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
#include <unistd.h>

#include <cmocka.h>

#include "kprof/rankreport.h"
#include "kprof/ranks.h"
#include "kprof/summary.h"
#include "kprof/table.h"

static char tmpdir[] = "/tmp/kprof-test-summary-XXXXXX";

#include "ranks-job.h"

/* The json document of @rs (compared), with the thread count left out: it is how, not what. */
static char *render(struct kp_ranks *rs)
{
	rs->jobs = 0;
	struct kp_doc doc;
	rankreport_doc(rs, "NVIDIA H100 80GB HBM3", &doc);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	table_render(&doc, FMT_JSON, 0, f);
	fclose(f);
	report_free(&doc);
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
		cmocka_unit_test(a_trace_document_is_not_a_summary),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
