/*
 * test-diff-doc.c — the diff document (diff-doc.c) of a synthetic struct kp_diff: header
 * lines, the gate verdict and its json, and the rows table's cells and tones.
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

#include "kprof/diff-doc.h"

static const struct kp_item *fact(const struct kp_doc *doc, const char *key)
{
	for (size_t i = 0; i < doc->nitems; i++)
		if (doc->items[i].type == ITEM_FACT && doc->items[i].key &&
		    !strcmp(doc->items[i].key, key))
			return &doc->items[i];
	return NULL;
}

static const char *ftext(const struct kp_doc *doc, const char *key)
{
	const struct kp_item *it = fact(doc, key);
	return it ? it->v.s : NULL;
}

/* The first json-only fact with member name @jkey after the object/array named @within. */
static const struct kp_item *jfact(const struct kp_doc *doc, const char *within, const char *jkey)
{
	size_t i = 0;
	if (within)
		while (i < doc->nitems && !(doc->items[i].jkey && doc->items[i].type != ITEM_FACT &&
					    !strcmp(doc->items[i].jkey, within)))
			i++;
	for (; i < doc->nitems; i++)
		if (doc->items[i].type == ITEM_FACT && doc->items[i].jkey &&
		    !strcmp(doc->items[i].jkey, jkey))
			return &doc->items[i];
	return NULL;
}

static const struct kp_table *rows_of(const struct kp_doc *doc)
{
	for (size_t i = 0; i < doc->nitems; i++)
		if (doc->items[i].type == ITEM_TABLE)
			return doc->items[i].table;
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

static struct kp_diff_row row(const char *key, int64_t b, int64_t n, enum kp_diff_status st)
{
	return (struct kp_diff_row){ .key = key,
				     .name = key,
				     .has_base = b >= 0,
				     .has_new = n >= 0,
				     .base_ns = b < 0 ? 0 : b,
				     .new_ns = n < 0 ? 0 : n,
				     .delta_ns = (n < 0 ? 0 : n) - (b < 0 ? 0 : b),
				     .ratio = b > 0 && n > 0 ? (double)n / b : -1,
				     .status = st,
				     .base_calls = b >= 0 ? 2 : 0,
				     .new_calls = n >= 0 ? 2 : 0,
				     .base_flops_per_s = -1,
				     .new_flops_per_s = -1,
				     .base_pct_peak = -1,
				     .new_pct_peak = -1,
				     .base_pct = -1,
				     .new_pct = -1,
				     .noise_ns = -1 };
}

static void fill(struct kp_diff *d, struct kp_diff_row *rows, size_t n)
{
	memset(d, 0, sizeof(*d));
	d->opts = (struct kp_diff_opts){ .key = GROUP_KERNEL,
					 .threshold_pct = 2,
					 .how = NORM_TOTAL,
					 .base_div = 1,
					 .new_div = 1 };
	d->base = (struct kp_diff_side){
		.label = "base.json", .div = 1, .time_ns = 2000000, .nkeys = 3
	};
	d->new = (struct kp_diff_side){
		.label = "new.json", .div = 1, .time_ns = 2500000, .nkeys = 3
	};
	d->rows = rows;
	d->nrows = n;
	d->sum = (struct kp_diff_summary){ .base_ns = 2000000,
					   .new_ns = 2500000,
					   .delta_ns = 500000,
					   .total_ratio = 1.25,
					   .geomean_speedup = 0.9,
					   .geomean_rows = 2,
					   .paired_delta_ns = 400000, /* gemm +500 us, relu -100 us */
					   .onesided_new_ns = 100000, /* newk */
					   .matched = 2,
					   .regressed = 1,
					   .improved = 1,
					   .added = 1,
					   .removed = 0,
					   .noise_ns = -1 };
}

static void header_lines_tell_inputs_totals_and_rows(void **state)
{
	(void)state;
	struct kp_diff_row rows[] = { row("gemm", 1000000, 1500000, DIFF_CHANGED),
				      row("relu", 1000000, 900000, DIFF_CHANGED),
				      row("newk", -1, 100000, DIFF_NEW) };
	struct kp_diff d;
	fill(&d, rows, 3);
	struct kp_diff_doc_opts o = { 0 };
	struct kp_doc doc;
	diff_doc(&d, &o, &doc);
	assert_string_equal(doc.command, "diff");
	assert_string_equal(doc.summary, "GPU time 2.000 ms -> 2.500 ms: +500.000 us (+25.0%, 1.250x) "
					 "= paired +400.000 us + new 100.000 us - gone 0 ns");
	assert_string_equal(ftext(&doc, "[0] base"), "base.json  (2.000 ms)");
	assert_string_equal(ftext(&doc, "[1] new"), " new.json   (2.500 ms)");
	assert_string_equal(ftext(&doc, "compare"),
			    "normalized kernel names, totals (--no-per-step)");
	assert_string_equal(ftext(&doc, "rows"),
			    "kernels: 2 paired (1 regressed, 1 improved, 0 unchanged within 2%), 1 new, "
			    "0 gone; geomean speedup of 2 paired rows 0.900x");
	assert_int_equal(jfact(&doc, "summary", "paired_delta_ns")->v.i, 400000);
	assert_int_equal(jfact(&doc, "summary", "new_rows_time_ns")->v.i, 100000);
	assert_int_equal(jfact(&doc, "summary", "gone_rows_time_ns")->v.i, 0);
	assert_int_equal(jfact(&doc, "summary", "geomean_rows")->v.i, 2);
	assert_null(fact(&doc, "gate")); /* no gate asked */
	assert_null(fact(&doc, "note"));
	assert_null(fact(&doc, "device")); /* no reports: no devices to compare */
	assert_string_equal(jfact(&doc, NULL, "key")->v.s, "kernel");
	assert_string_equal(jfact(&doc, NULL, "normalize")->v.s, "total");
	assert_int_equal(jfact(&doc, "new", "time_ns")->v.i, 2500000);
	assert_true(jfact(&doc, "summary", "total_ratio")->v.d == 1.25);
	assert_int_equal(jfact(&doc, "summary", "noise_ns")->v.type, VAL_NULL);
	assert_int_equal(jfact(&doc, "gate", "tripped")->v.i, 0);
	assert_int_equal(jfact(&doc, "gate", "fail_above_pct")->v.type, VAL_NULL);
	doc_free(&doc);

	d.opts.per_step = 1;
	d.opts.how = NORM_STEPS;
	d.base.div = 4;
	d.new.div = 5;
	d.sum.base_ns = 0;
	d.sum.delta_ns = 2500000;
	d.sum.paired_delta_ns = 2400000;
	d.sum.total_ratio = -1;
	d.sum.geomean_speedup = -1;
	d.opts.key = GROUP_OP;
	diff_doc(&d, &o, &doc);
	assert_string_equal(doc.summary, "GPU time per step 0 ns -> 2.500 ms: +2.500 ms (N/A) = "
					 "paired +2.400 ms + new 100.000 us - gone 0 ns");
	assert_string_equal(ftext(&doc, "compare"),
			    "op names, per step (--steps): base / 4, new / 5");
	assert_non_null(strstr(ftext(&doc, "rows"), "ops: 2 paired"));
	assert_non_null(strstr(ftext(&doc, "rows"), "geomean speedup N/A"));
	assert_string_equal(rows_of(&doc)->cols[rows_of(&doc)->ncols - 1].title, "Op");
	doc_free(&doc);
}

static void renamed_kernels_get_a_note(void **state)
{
	(void)state;
	struct kp_diff_row rows[] = { row("a", 1000000, -1, DIFF_GONE),
				      row("b", -1, 1000000, DIFF_NEW) };
	struct kp_diff d;
	fill(&d, rows, 2);
	d.sum.base_ns = d.sum.new_ns = 1000000;
	d.sum.onesided_base_ns = 800000;
	d.sum.onesided_new_ns = 300000;
	struct kp_diff_doc_opts o = { 0 };
	struct kp_doc doc;
	diff_doc(&d, &o, &doc);
	assert_string_equal(ftext(&doc, "note"),
			    "80% of base and 30% of new time is in kernels found on "
			    "one side only; try --key op-shape");
	doc_free(&doc);
	d.sum.onesided_base_ns = 500000; /* exactly half: not "most" */
	diff_doc(&d, &o, &doc);
	assert_null(fact(&doc, "note"));
	doc_free(&doc);
}

static void the_gate_is_a_verdict_with_its_crossings(void **state)
{
	(void)state;
	struct kp_diff_row rows[] = { row("gemm", 1000000, 1500000, DIFF_CHANGED) };
	struct kp_diff d;
	fill(&d, rows, 1);
	struct kp_gate_rule rules[] = { { "gemm*", 10 } };
	struct kp_gate_opts g = {
		.fail_above_pct = 5, .min_delta_ns = KP_MIN_DELTA_NS, .rules = rules, .nrules = 1
	};
	struct kp_diff_doc_opts o = { .gate = &g };
	struct kp_doc doc;
	diff_doc(&d, &o, &doc);
	assert_string_equal(ftext(&doc, "gate"),
			    "--fail-above 5% and 1 per-key limit, --min-delta 5.000 us, no noise estimate "
			    "(needs 3+ ProfilerSteps per trace): passed");
	assert_int_equal(fact(&doc, "gate")->tone, TONE_GOOD);
	assert_string_equal(jfact(&doc, "rules", "pattern")->v.s, "gemm*");
	doc_free(&doc);

	/* clang-format off */
	struct kp_gate_hit hits[] = {
		{ .key = NULL, .status = DIFF_CHANGED, .base_ns = 2000000, .new_ns = 2500000,
		  .delta_ns = 500000, .change_pct = 25, .limit_pct = 5, .noise_ns = -1 },
		{ .key = "gemm", .name = "gemm", .status = DIFF_CHANGED, .base_ns = 1000000,
		  .new_ns = 1500000, .delta_ns = 500000, .change_pct = 50, .limit_pct = 10, .noise_ns = -1 },
		{ .key = "newk", .name = "newk", .status = DIFF_NEW, .new_ns = 9000, .delta_ns = 9000,
		  .change_pct = NAN, .limit_pct = 5, .noise_ns = 12 },
	};
	/* clang-format on */
	o.hits = hits;
	o.nhits = 3;
	d.opts.noise_k = -1;
	diff_doc(&d, &o, &doc);
	assert_string_equal(ftext(&doc, "gate"),
			    "--fail-above 5% and 1 per-key limit, --min-delta 5.000 us, "
			    "no noise test (--noise-k 0): tripped by the total, 1 paired row and 1 new row");
	assert_int_equal(fact(&doc, "gate")->tone, TONE_BAD);
	assert_int_equal(jfact(&doc, "gate", "tripped")->v.i, 1);
	assert_int_equal(jfact(&doc, "crossed", "key")->v.type, VAL_NULL); /* the total */
	/* the new row's crossing: no base time, its noise kept */
	const struct kp_item *it = jfact(&doc, "crossed", "key");
	while (!(it->v.s && !strcmp(it->v.s, "newk")))
		it++;
	assert_string_equal(it[1].v.s, "new");
	assert_int_equal(it[2].v.type, VAL_NULL);
	assert_string_equal(it[2].jkey, "base_time_ns");
	assert_int_equal(it[5].v.type, VAL_NULL); /* change_pct NAN */
	assert_true(it[7].v.d == 12);
	doc_free(&doc);

	o.nhits = 1; /* the total alone */
	diff_doc(&d, &o, &doc);
	assert_non_null(strstr(ftext(&doc, "gate"), ": tripped by the total"));
	doc_free(&doc);
}

static void rows_carry_status_tone_and_shown_names(void **state)
{
	(void)state;
	struct kp_diff_row rows[] = { row("gemm", 1000000, 1500000, DIFF_CHANGED),
				      row("relu", 1000000, 900000, DIFF_CHANGED),
				      row("copy", 1000, 1000, DIFF_UNCHANGED),
				      row("newk", -1, 100000, DIFF_NEW),
				      row("old", 5000, -1, DIFF_GONE) };
	rows[2].share_pt = -0.04;
	rows[0].share_pt = 12.34;
	struct kp_diff d;
	fill(&d, rows, 5);
	struct kp_diff_doc_opts o = { 0 };
	struct kp_doc doc;
	diff_doc(&d, &o, &doc);
	const struct kp_table *tb = rows_of(&doc);
	assert_int_equal(tb->nrows, 5);
	const struct kp_cell *c = tb->cells;
	size_t w = (size_t)tb->ncols;
	assert_string_equal(c[col(tb, "status")].s, "changed");
	assert_string_equal(c[col(tb, "delta_ns")].human, "+500.000 us");
	assert_int_equal(c[col(tb, "delta_ns")].tone, TONE_BAD);
	assert_string_equal(c[col(tb, "ratio")].human, "1.500x");
	assert_string_equal(c[col(tb, "share_pt")].human, "+12.3pt");
	assert_int_equal(c[w + col(tb, "ratio")].tone, TONE_GOOD);
	assert_int_equal(c[2 * w + col(tb, "delta_ns")].tone, TONE_NONE);
	assert_string_equal(c[2 * w + col(tb, "share_pt")].human, "0.0pt"); /* never "-0.0pt" */
	/* new: no base cells, ratio N/A, the name says so; the json name stays the key's */
	const struct kp_cell *nw = &c[3 * w];
	assert_int_equal(nw[col(tb, "base_time_ns")].type, CELL_NULL);
	assert_int_equal(nw[col(tb, "base_calls")].type, CELL_NULL);
	assert_int_equal(nw[col(tb, "ratio")].type, CELL_NULL);
	assert_string_equal(nw[col(tb, "ratio")].human, "N/A");
	assert_string_equal(nw[col(tb, "name")].s, "newk");
	assert_string_equal(nw[col(tb, "name")].human, "newk (new)");
	assert_string_equal(c[4 * w + col(tb, "name")].human, "old (gone)");
	assert_string_equal(c[4 * w + col(tb, "status")].s, "gone");
	/* no FLOPs anywhere: the TFLOP/s columns stay machine-only */
	assert_int_equal(tb->cols[col(tb, "base_flops_per_s")].where, COL_MACHINE);
	doc_free(&doc);
	rows[1].new_flops_per_s = 2e12;
	diff_doc(&d, &o, &doc);
	tb = rows_of(&doc);
	assert_int_equal(tb->cols[col(tb, "base_flops_per_s")].where, COL_BOTH);
	assert_int_equal(tb->cols[col(tb, "new_pct_peak_flops")].where, COL_BOTH);
	assert_string_equal(tb->cells[w + col(tb, "new_flops_per_s")].human, "2.0");
	doc_free(&doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(header_lines_tell_inputs_totals_and_rows),
		cmocka_unit_test(renamed_kernels_get_a_note),
		cmocka_unit_test(the_gate_is_a_verdict_with_its_crossings),
		cmocka_unit_test(rows_carry_status_tone_and_shown_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
