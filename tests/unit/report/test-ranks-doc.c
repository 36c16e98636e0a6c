/*
 * test-ranks-doc.c — the cross-rank document (ranks-doc.c) of a synthetic struct kp_ranks:
 * header lines, the rank, collective and straggler tables, the per-rank json and warnings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/collective.h"
#include "kprof/ranks-doc.h"
#include "kprof/table.h"

static const char *ftext(const struct kp_doc *doc, const char *key)
{
	for (size_t i = 0; i < doc->nitems; i++)
		if (doc->items[i].type == ITEM_FACT && doc->items[i].key &&
		    !strcmp(doc->items[i].key, key))
			return doc->items[i].v.s;
	return NULL;
}

/* index of the first item named @jkey at or after @from */
static size_t find(const struct kp_doc *doc, size_t from, const char *jkey)
{
	for (size_t i = from; i < doc->nitems; i++)
		if (doc->items[i].jkey && !strcmp(doc->items[i].jkey, jkey))
			return i;
	fail_msg("no %s", jkey);
	return 0;
}

static const struct kp_table *table(const struct kp_doc *doc, const char *jkey)
{
	return doc->items[find(doc, 0, jkey)].table;
}

static int col(const struct kp_table *tb, const char *key)
{
	for (int i = 0; i < tb->ncols; i++)
		if (!strcmp(tb->cols[i].key, key))
			return i;
	fail_msg("no column %s", key);
	return -1;
}

static struct kp_rank_step steps0[] = { { 1, 0, 1000000, 0 }, { 2, 1000000, 1200000, 1 } };
static struct kp_rank_comm comms0[] = { { 500, 100, 1 << 20, 1, 2, COLL_ALLREDUCE } };

static void two_ranks(struct kp_rank r[2], struct kp_ranks *rs)
{
	memset(r, 0, 2 * sizeof(*r));
	r[0] = (struct kp_rank){ .file = "rank0.json",
				 .rank = 0,
				 .rank_from = 0,
				 .world_size = 2,
				 .gpu_time_ns = 700000,
				 .steps = steps0,
				 .nsteps = 2,
				 .comms = comms0,
				 .ncomms = 1,
				 .step_mean_ns = 1000000,
				 .step_max_ns = 1000000,
				 .slowest_step = 1,
				 .bd = { .span_ns = 2000000,
					 .idle_ns = 500000,
					 .class_ns = { 1000000, 300000, 200000, 0 },
					 .comm_overlapped_ns = 100000 } };
	strcpy(r[0].backend, "nccl");
	strcpy(r[0].device, "H100");
	r[1] = (struct kp_rank){ .file = "trace-1.json",
				 .rank = 1,
				 .rank_from = 1,
				 .world_size = -1,
				 .step_mean_ns = -1,
				 .step_max_ns = -1,
				 .slowest_step = -1,
				 .bd = { .span_ns = 0 } };
	/* clang-format off */
	static struct kp_coll_row colls[] = {
		{ .kind = COLL_ALLREDUCE, .bytes = 1 << 20, .n = 2, .calls = 4, .time_ns = 400000,
		  .algbw = 10.5e9, .busbw = 10.5e9 },
		{ .kind = COLL_SENDRECV, .bytes = -1, .n = 2, .calls = 0, .time_ns = 0, .algbw = -1, .busbw = -1 },
	};
	/* clang-format on */
	static struct kp_straggler strag[] = {
		{ .step = 1, .rank = 1, .lag_ns = 30000, .late = 3, .instances = 4, .skew_ns = 5000 },
		{ .step = 2, .rank = 0, .lag_ns = -1, .late = 0, .instances = 0, .skew_ns = 200000 },
	};
	*rs = (struct kp_ranks){ .r = r,
				 .n = 2,
				 .jobs = 2,
				 .colls = colls,
				 .ncolls = 2,
				 .matched = 8,
				 .unmatched = 1,
				 .strag = strag,
				 .nstrag = 2,
				 .step_skew_max_ns = 200000,
				 .step_skew_step = 2,
				 .link_peak = 450e9 };
}

static void header_lines_name_world_link_and_skew(void **state)
{
	(void)state;
	struct kp_rank r[2];
	struct kp_ranks rs;
	two_ranks(r, &rs);
	struct kp_doc doc;
	ranks_doc(&rs, "H100", &doc);
	assert_string_equal(doc.command, "analyze");
	assert_string_equal(doc.summary, "2 ranks, 2 collective kinds and sizes, 2 steps");
	assert_string_equal(ftext(&doc, "ranks"),
			    "2 traces of world size 2, backend nccl, read on 2 threads");
	assert_non_null(
		strstr(ftext(&doc, "colls"),
		       "8 communication kernels matched by order across ranks, 1 unmatched;"));
	assert_string_equal(ftext(&doc, "link"), "H100: peer link 450.0 GB/s (%Link = busbw / it)");
	assert_string_equal(ftext(&doc, "skew"),
			    "step-time skew up to 200.000 us (step 2), over 2 steps on every rank");
	assert_int_equal(doc.items[find(&doc, 0, "world_size")].v.i, 2);
	assert_true(doc.items[find(&doc, 0, "link_peak_bytes_per_s")].v.d == 450e9);
	doc_free(&doc);

	r[0].world_size = -1;
	r[0].backend[0] = '\0';
	rs.jobs = 0;
	rs.link_peak = -1;
	rs.step_skew_max_ns = -1;
	rs.n = 1;
	ranks_doc(&rs, NULL, &doc);
	assert_string_equal(ftext(&doc, "ranks"),
			    "1 trace (no distributedInfo), merged from summaries");
	assert_string_equal(ftext(&doc, "link"),
			    "unknown device: no peer link bandwidth in the device table");
	assert_null(ftext(&doc, "skew"));
	/* unknown in json is null (kprof-analyze(1)), not -1 */
	assert_int_equal(doc.items[find(&doc, 0, "link_peak_bytes_per_s")].v.type, VAL_NULL);
	doc_free(&doc);
}

static void the_rank_table_derives_busy_time(void **state)
{
	(void)state;
	struct kp_rank r[2];
	struct kp_ranks rs;
	two_ranks(r, &rs);
	struct kp_doc doc;
	ranks_doc(&rs, "H100", &doc);
	const struct kp_table *tb = table(&doc, "rank_rows");
	assert_int_equal(tb->nrows, 2);
	const struct kp_cell *c = tb->cells, *c1 = tb->cells + tb->ncols;
	assert_int_equal(c[col(tb, "gpu_busy_ns")].i, 1500000);
	assert_string_equal(c[col(tb, "gpu_busy_pct")].human, "75.0");
	assert_int_equal(c[col(tb, "comm_ns")].i, 300000);
	assert_int_equal(c[col(tb, "steps")].i, 2);
	assert_int_equal(c[col(tb, "slowest_step")].i, 1);
	assert_string_equal(c[col(tb, "file")].s, "rank0.json");
	/* an empty rank: no busy share, no step statistics */
	assert_int_equal(c1[col(tb, "gpu_busy_pct")].type, CELL_NULL);
	assert_int_equal(c1[col(tb, "step_mean_ns")].type, CELL_NULL);
	assert_string_equal(c1[col(tb, "step_mean_ns")].human, "-");
	assert_int_equal(c1[col(tb, "slowest_step")].type, CELL_NULL);
	doc_free(&doc);
}

static void collectives_and_stragglers(void **state)
{
	(void)state;
	struct kp_rank r[2];
	struct kp_ranks rs;
	two_ranks(r, &rs);
	struct kp_doc doc;
	ranks_doc(&rs, "H100", &doc);
	const struct kp_table *tb = table(&doc, "collectives");
	assert_int_equal(tb->nrows, 2);
	const struct kp_cell *c = tb->cells, *c1 = tb->cells + tb->ncols;
	assert_string_equal(c[col(tb, "name")].s, coll_kind_name(COLL_ALLREDUCE));
	assert_int_equal(c[col(tb, "bytes")].i, 1 << 20);
	assert_int_equal(c[col(tb, "avg_ns")].i, 100000);
	assert_string_equal(c[col(tb, "busbw_bytes_per_s")].human, "10.5");
	assert_true(c[col(tb, "pct_link")].d > 2.33 && c[col(tb, "pct_link")].d < 2.34);
	/* unknown size and bandwidth, no calls: nulls and no division by zero */
	assert_int_equal(c1[col(tb, "bytes")].type, CELL_NULL);
	assert_int_equal(c1[col(tb, "avg_ns")].i, 0);
	assert_int_equal(c1[col(tb, "busbw_bytes_per_s")].type, CELL_NULL);
	assert_int_equal(c1[col(tb, "pct_link")].type, CELL_NULL);
	tb = table(&doc, "stragglers");
	assert_int_equal(tb->nrows, 2);
	c = tb->cells;
	c1 = tb->cells + tb->ncols;
	assert_int_equal(c[col(tb, "rank")].i, 1);
	assert_int_equal(c[col(tb, "lag_ns")].i, 30000);
	assert_string_equal(c[col(tb, "by")].s, "collectives");
	assert_string_equal(c1[col(tb, "by")].s, "step-end");
	assert_int_equal(c1[col(tb, "lag_ns")].type, CELL_NULL);
	doc_free(&doc);
}

static void per_rank_json_and_warnings(void **state)
{
	(void)state;
	struct kp_rank r[2];
	struct kp_ranks rs;
	two_ranks(r, &rs);
	diag_warn_add(&rs.warn, "a thing", "x.json:1:2", "top %d", 1);
	diag_warn_add(&r[1].warn, "b thing", "trace-1.json:3:4", "rank %d", 1);
	struct kp_doc doc;
	ranks_doc(&rs, "H100", &doc);
	size_t a = find(&doc, 0, "ranks");
	assert_int_equal(doc.items[a].type, ITEM_ARRAY);
	assert_string_equal(doc.items[find(&doc, a, "rank_from")].v.s, "distributedInfo");
	assert_string_equal(doc.items[find(&doc, a, "backend")].v.s, "nccl");
	assert_int_equal(doc.items[find(&doc, a, "gpu_busy_ns")].v.i, 1500000);
	assert_int_equal(doc.items[find(&doc, a, "comm_kernels")].v.i, 1);
	size_t st = find(&doc, find(&doc, a, "steps") + 1,
			 "steps"); /* totals' count, then the array */
	/* [[1, 0, 1000000, 0], [2, 1000000, 1200000, 1]] */
	assert_int_equal(doc.items[st + 1].type, ITEM_ARRAY);
	assert_int_equal(doc.items[st + 2].v.i, 1);
	assert_int_equal(doc.items[st + 4].v.i, 1000000);
	assert_int_equal(doc.items[st + 8].v.i, 2);
	assert_int_equal(doc.items[st + 11].v.i, 1);
	size_t cm = find(&doc, st, "comms");
	assert_int_equal(doc.items[cm + 4].v.i, 1 << 20);
	assert_string_equal(doc.items[cm + 7].v.s, coll_kind_name(COLL_ALLREDUCE));
	/* the second rank: from its file name, no world size, backend or steps */
	size_t r1 = find(&doc, cm, "rank_from");
	assert_string_equal(doc.items[r1].v.s, "file name");
	assert_int_equal(doc.items[find(&doc, r1, "world_size")].v.type, VAL_NULL);
	assert_int_equal(doc.items[find(&doc, r1, "backend")].v.type, VAL_NULL);
	assert_int_equal(doc.items[find(&doc, r1, "mean")].v.type, VAL_NULL);
	/* the second rank's own warnings, in its json: kind, count, the messages (summary.c) */
	size_t rw = find(&doc, r1, "warnings");
	assert_int_equal(doc.items[rw].type, ITEM_ARRAY);
	assert_string_equal(doc.items[find(&doc, rw, "kind")].v.s, "b thing");
	assert_int_equal(doc.items[find(&doc, rw, "count")].v.i, 1);
	size_t msgs = find(&doc, rw, "messages");
	assert_string_equal(doc.items[msgs + 1].v.s, "trace-1.json:3:4: warning: rank 1");
	assert_int_equal(doc.items[msgs + 2].type, ITEM_END);
	/* the document's warnings: the run's, then each rank's */
	size_t w = find(&doc, msgs + 2, "warnings");
	assert_non_null(strstr(doc.items[w + 1].v.s, "top 1"));
	assert_non_null(strstr(doc.items[w + 2].v.s, "rank 1"));
	assert_int_equal(doc.items[w + 3].type, ITEM_END);
	doc_free(&doc);
	diag_warn_free(&rs.warn);
	diag_warn_free(&r[1].warn);
}

/*
 * The json of a job is a property of its traces, not of the machine that read them: the same
 * ranks read on 2 threads by kprof analyze and merged from summaries by kprof merge are the
 * same bytes ("jobs" made them differ, and differ between a 2-core and a 16-core host).
 */
static char *render_json(const struct kp_ranks *rs)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	assert_non_null(fp);
	struct kp_doc doc;
	ranks_doc(rs, "H100", &doc);
	table_render(&doc, FMT_JSON, 0, fp);
	doc_free(&doc);
	fclose(fp);
	return buf;
}

static void json_is_the_same_read_or_merged(void **state)
{
	(void)state;
	struct kp_rank r[2];
	struct kp_ranks rs;
	two_ranks(r, &rs);
	char *read2 = render_json(&rs);
	rs.jobs = 16;
	char *read16 = render_json(&rs);
	rs.jobs = 0; /* kprof merge */
	char *merged = render_json(&rs);
	assert_string_equal(read2, merged);
	assert_string_equal(read16, merged);
	assert_null(strstr(merged, "\"jobs\""));
	free(read2);
	free(read16);
	free(merged);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(header_lines_name_world_link_and_skew),
		cmocka_unit_test(the_rank_table_derives_busy_time),
		cmocka_unit_test(collectives_and_stragglers),
		cmocka_unit_test(per_rank_json_and_warnings),
		cmocka_unit_test(json_is_the_same_read_or_merged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
