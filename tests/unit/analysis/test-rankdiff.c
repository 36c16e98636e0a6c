/*
 * test-rankdiff.c — two synthetic sets of rank summaries compared (rankdiff.c): per-rank
 * deltas and ratios, an unpaired rank on each side, the merged row, and the gate on the
 * merged step-time mean naming the ranks that crossed it.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/rankdiff.h"

static size_t find(const struct kp_doc *doc, const char *jkey)
{
	for (size_t i = 0; i < doc->nitems; i++)
		if (doc->items[i].jkey && !strcmp(doc->items[i].jkey, jkey))
			return i;
	fail_msg("no %s", jkey);
	return 0;
}

static const char *fact(const struct kp_doc *doc, const char *key)
{
	for (size_t i = 0; i < doc->nitems; i++)
		if (doc->items[i].type == ITEM_FACT && doc->items[i].key &&
		    !strcmp(doc->items[i].key, key))
			return doc->items[i].v.s;
	fail_msg("no fact %s", key);
	return NULL;
}

static int col(const struct kp_table *tb, const char *key)
{
	for (int i = 0; i < tb->ncols; i++)
		if (!strcmp(tb->cols[i].key, key))
			return i;
	fail_msg("no column %s", key);
	return -1;
}

static const struct kp_cell *cell(const struct kp_table *tb, size_t row, const char *key)
{
	return &tb->cells[row * (size_t)tb->ncols + (size_t)col(tb, key)];
}

/* rank @id: step mean/max, busy = span - idle, compute, comm, idle */
static struct kp_rank rank(int64_t id, int64_t mean, int64_t max, int64_t span, int64_t compute,
			   int64_t comm, int64_t idle)
{
	struct kp_rank r;
	memset(&r, 0, sizeof(r));
	r.rank = id;
	r.step_mean_ns = mean;
	r.step_max_ns = max;
	r.bd.span_ns = span;
	r.bd.idle_ns = idle;
	r.bd.class_ns[BD_COMPUTE] = compute;
	r.bd.class_ns[BD_COMM] = comm;
	return r;
}

/* base ranks 0,1,2; new ranks 0,1,3: rank 1 is 20% slower, 2 gone, 3 new */
static void sets(struct kp_rank b[3], struct kp_rank n[3], struct kp_ranks *bs, struct kp_ranks *ns)
{
	b[0] = rank(0, 1000, 1200, 5000, 3000, 1000, 1000);
	b[1] = rank(1, 1000, 1100, 5000, 3000, 1000, 1000);
	b[2] = rank(2, 2000, 2000, 4000, 1000, 1000, 2000);
	n[0] = rank(0, 1000, 1200, 5000, 3000, 1000, 1000);
	n[1] = rank(1, 1200, 1500, 6000, 3000, 2000, 1000);
	n[2] = rank(3, 500, 600, 1000, 500, 100, 400);
	*bs = (struct kp_ranks){ .r = b, .n = 3 };
	*ns = (struct kp_ranks){ .r = n, .n = 3 };
}

static void pairs_by_rank_with_deltas_and_unpaired(void **state)
{
	(void)state;
	struct kp_rank b[3], n[3];
	struct kp_ranks bs, ns;
	sets(b, n, &bs, &ns);
	struct kp_rankdiff_gate g = { .limit_pct = -1 };
	struct kp_doc doc;
	rankdiff_doc(&bs, &ns, &g, &doc);
	assert_string_equal(fact(&doc, "ranks"),
			    "3 base, 3 new: 2 paired by rank id, 1 new, 1 gone");
	assert_false(g.tripped);
	const struct kp_table *tb = doc.items[find(&doc, "rank_rows")].table;
	assert_int_equal(tb->nrows, 5);
	/* rows: 0 both, 1 both, 2 gone, 3 new, all */
	static const char *const pair[] = { "both", "both", "gone", "new", "all" };
	static const int64_t id[] = { 0, 1, 2, 3 };
	for (size_t r = 0; r < 5; r++) {
		assert_string_equal(cell(tb, r, "pair")->s, pair[r]);
		if (r < 4)
			assert_int_equal(cell(tb, r, "rank")->i, id[r]);
		else
			assert_int_equal(cell(tb, r, "rank")->type, CELL_NULL);
	}
	assert_int_equal(cell(tb, 0, "step_mean_delta_ns")->i, 0);
	assert_int_equal(cell(tb, 1, "step_mean_delta_ns")->i, 200);
	assert_true(fabs(cell(tb, 1, "step_mean_ratio")->d - 1.2) < 1e-12);
	assert_int_equal(cell(tb, 1, "step_max_delta_ns")->i, 400);
	assert_int_equal(cell(tb, 1, "gpu_busy_delta_ns")->i, 1000);
	assert_int_equal(cell(tb, 1, "comm_delta_ns")->i, 1000);
	assert_int_equal(cell(tb, 1, "compute_delta_ns")->i, 0);
	assert_int_equal(cell(tb, 1, "step_mean_delta_ns")->tone, TONE_BAD);
	/* gone: base only; new: new only; no delta or ratio */
	assert_int_equal(cell(tb, 2, "step_mean_base_ns")->i, 2000);
	assert_int_equal(cell(tb, 2, "step_mean_new_ns")->type, CELL_NULL);
	assert_int_equal(cell(tb, 2, "step_mean_delta_ns")->type, CELL_NULL);
	assert_int_equal(cell(tb, 3, "step_mean_base_ns")->type, CELL_NULL);
	assert_int_equal(cell(tb, 3, "idle_new_ns")->i, 400);
	assert_int_equal(cell(tb, 3, "idle_ratio")->type, CELL_NULL);
	/* all: mean of means (4000/3 -> 1333, 2700/3 = 900), largest max, sums */
	assert_int_equal(cell(tb, 4, "step_mean_base_ns")->i, 1333);
	assert_int_equal(cell(tb, 4, "step_mean_new_ns")->i, 900);
	assert_int_equal(cell(tb, 4, "step_mean_delta_ns")->i, -433);
	assert_int_equal(cell(tb, 4, "step_mean_delta_ns")->tone, TONE_GOOD);
	assert_int_equal(cell(tb, 4, "step_max_base_ns")->i, 2000);
	assert_int_equal(cell(tb, 4, "step_max_new_ns")->i, 1500);
	assert_int_equal(cell(tb, 4, "gpu_busy_base_ns")->i, 4000 + 4000 + 2000);
	assert_int_equal(cell(tb, 4, "gpu_busy_new_ns")->i, 4000 + 5000 + 600);
	assert_int_equal(cell(tb, 4, "compute_new_ns")->i, 6500);
	doc_free(&doc);
}

static void gate_on_merged_mean_names_crossing_ranks(void **state)
{
	(void)state;
	struct kp_rank b[3], n[3];
	struct kp_ranks bs, ns;
	sets(b, n, &bs, &ns);
	/* only the paired ranks: merged 1000 -> 1100 (+10%); rank 1 +20% */
	bs.n = ns.n = 2;
	struct kp_rankdiff_gate g = { .limit_pct = 5 };
	struct kp_doc doc;
	rankdiff_doc(&bs, &ns, &g, &doc);
	assert_true(g.tripped);
	assert_false(g.unknown);
	assert_string_equal(fact(&doc, "gate"),
			    "FAIL: merged step mean +10.00% (limit 5%); ranks above it: 1");
	assert_string_equal(g.ranks_above, "1");
	assert_true(fabs(g.change_pct - 10) < 1e-9);
	doc_free(&doc);
	g.limit_pct = 10;
	rankdiff_doc(&bs, &ns, &g, &doc);
	assert_false(g.tripped);
	assert_string_equal(fact(&doc, "gate"),
			    "pass: merged step mean +10.00% (limit 10%); ranks above it: 1");
	doc_free(&doc);
	/* no step times on the new side: the gate cannot judge */
	n[0].step_mean_ns = n[1].step_mean_ns = -1;
	rankdiff_doc(&bs, &ns, &g, &doc);
	assert_true(g.unknown);
	assert_false(g.tripped);
	doc_free(&doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pairs_by_rank_with_deltas_and_unpaired),
		cmocka_unit_test(gate_on_merged_mean_names_crossing_ranks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
