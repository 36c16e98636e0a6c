/*
 * test-sort.c — --sort key lists: names from the enum tables, directions, suggestions, the
 * folded row pinned last and deterministic tie-breaks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/analyze.h"
#include "kprof/diff.h"
#include "kprof/metric.h"
#include "kprof/sort.h"

/* sort_rows reads any table through its readers (diff-sort.c's way, sort.c knowing no diff.h) */
struct plain {
	const char *name, *key;
	double v;
	int folded;
};
static double plain_num(const void *row, int key)
{
	(void)key;
	return ((const struct plain *)row)->v;
}
static const char *plain_text(const void *row, int key)
{
	const struct plain *r = row;
	return key == DK_NAME ? r->name : r->key;
}
static int plain_folded(const void *row)
{
	return ((const struct plain *)row)->folded;
}

static void sort_rows_reads_rows_through_the_callers_readers(void **state)
{
	(void)state;
	struct plain rows[] = { { "(others)", "o", 99, 1 }, { "b", "b1", 2, 0 }, { "a", "a1", 2, 0 },
				{ "c", "c1", 5, 0 } };
	static const struct kp_sort_rows rd = { plain_num, plain_text, plain_folded };
	struct kp_sort_spec sp;
	const char *bad;
	assert_int_equal(sort_parse(&sp, SORT_DIFF, "delta", &bad), 0);
	sort_rows(rows, 4, sizeof(rows[0]), &sp, &rd);
	/* 5 first (numbers descend), the tie 2/2 by name, the folded row last despite 99 */
	assert_string_equal(rows[0].name, "c");
	assert_string_equal(rows[1].name, "a");
	assert_string_equal(rows[2].name, "b");
	assert_string_equal(rows[3].name, "(others)");
	assert_int_equal(sort_parse(&sp, SORT_DIFF, "delta:asc", &bad), 0);
	sort_rows(rows, 4, sizeof(rows[0]), &sp, &rd);
	assert_string_equal(rows[0].name, "a");
	assert_string_equal(rows[2].name, "c");
	assert_string_equal(rows[3].name, "(others)");
	sort_rows(NULL, 0, sizeof(rows[0]), &sp, &rd); /* no rows: nothing read */
}

static void key_lists_come_from_the_enum_tables_in_enum_order(void **state)
{
	(void)state;
	char buf[256];
	assert_string_equal(
		sort_key_list(SORT_ANALYZE, " ", buf, sizeof(buf)),
		"time calls avg min max med tflops gbps pct-peak pct-bw flops bytes intensity name op");
	assert_string_equal(sort_key_list(SORT_DIFF, ", ", buf, sizeof(buf)),
			    "delta-abs, delta, ratio, share, base, new, base-calls, new-calls, name");
}

static void parse_resolves_defaults_and_directions(void **state)
{
	(void)state;
	struct kp_sort_spec sp;
	const char *bad = NULL;
	assert_int_equal(sort_parse(&sp, SORT_ANALYZE, NULL, &bad), 0);
	assert_int_equal(sp.n, 1);
	assert_int_equal(sp.k[0].key, METRIC_TIME);
	assert_true(sp.k[0].desc);
	assert_int_equal(sort_parse(&sp, SORT_ANALYZE, "name,calls:asc,op:desc", &bad), 0);
	assert_int_equal(sp.n, 3);
	assert_int_equal(sp.k[0].key, METRIC_NAME);
	assert_false(sp.k[0].desc);
	assert_int_equal(sp.k[1].key, METRIC_CALLS);
	assert_false(sp.k[1].desc);
	assert_int_equal(sp.k[2].key, METRIC_OP);
	assert_true(sp.k[2].desc);
	assert_int_equal(sort_parse(&sp, SORT_DIFF, "", &bad), 0);
	assert_int_equal(sp.k[0].key, DK_DELTA_ABS);
	assert_int_equal(sort_parse(&sp, SORT_DIFF, "time", &bad), -1);
	assert_string_equal(bad, "time");
	assert_int_equal(sort_parse(&sp, SORT_ANALYZE, "time:up", &bad), -1);
	assert_string_equal(bad, "time:up");
}

static void suggestions_need_three_shared_characters(void **state)
{
	(void)state;
	assert_string_equal(sort_suggest(SORT_ANALYZE, "tflop"), "tflops");
	assert_string_equal(sort_suggest(SORT_ANALYZE, "pct-peaks"), "pct-peak");
	assert_null(sort_suggest(SORT_ANALYZE, "ti"));
	assert_null(sort_suggest(SORT_DIFF, "time"));
}

static struct kp_row arow(const char *name, int64_t ns, int64_t calls, unsigned flags)
{
	return (struct kp_row){ .name = name,
				.key = name,
				.time_ns = ns,
				.calls = calls,
				.flags = flags,
				.flops = -1,
				.bytes = -1 };
}

static void the_folded_row_stays_last_and_name_breaks_ties(void **state)
{
	(void)state;
	struct kp_row rows[] = { arow("(others: 9 kernels)", 900, 9, ROW_OTHERS),
				 arow("b", 10, 1, 0), arow("a", 10, 1, 0), arow("c", 50, 2, 0) };
	struct kp_report r = { .rows = rows, .nrows = 4 };
	struct kp_sort_spec sp;
	const char *bad;
	assert_int_equal(sort_parse(&sp, SORT_ANALYZE, "time", &bad), 0);
	sort_analyze(&r, &sp);
	assert_string_equal(rows[0].name, "c");
	assert_string_equal(rows[1].name, "a");
	assert_string_equal(rows[2].name, "b");
	assert_int_equal(rows[3].flags, ROW_OTHERS);
	assert_int_equal(sort_parse(&sp, SORT_ANALYZE, "time:asc", &bad), 0);
	sort_analyze(&r, &sp);
	assert_string_equal(rows[0].name, "a");
	assert_string_equal(rows[2].name, "c");
	assert_int_equal(rows[3].flags, ROW_OTHERS);
}

static void diff_ratio_ranks_new_rows_first_and_gone_rows_last(void **state)
{
	(void)state;
	struct kp_diff_row rows[] = {
		{ .key = "g", .name = "g", .status = DIFF_GONE, .ratio = -1 },
		{ .key = "x", .name = "x", .status = DIFF_CHANGED, .ratio = 1.5 },
		{ .key = "n", .name = "n", .status = DIFF_NEW, .ratio = -1 },
	};
	struct kp_diff d = { .rows = rows, .nrows = 3 };
	struct kp_sort_spec sp;
	const char *bad;
	assert_int_equal(sort_parse(&sp, SORT_DIFF, "ratio", &bad), 0);
	sort_diff(&d, &sp);
	assert_string_equal(rows[0].key, "n");
	assert_string_equal(rows[1].key, "x");
	assert_string_equal(rows[2].key, "g");
}

/* a repeated key is dropped (it cannot break a tie); past the table's keys nothing is lost unchecked */
static void repeated_keys_count_once_and_every_key_is_checked(void **state)
{
	(void)state;
	struct kp_sort_spec sp;
	const char *bad = NULL;
	assert_int_equal(sort_parse(&sp, SORT_ANALYZE, "time,calls,time:asc,calls", &bad), 0);
	assert_int_equal(sp.n, 2);
	assert_int_equal(sp.k[0].key, METRIC_TIME);
	assert_int_equal(sp.k[0].desc, 1);
	assert_int_equal(sp.k[1].key, METRIC_CALLS);
	/* 20 keys, the last one unknown: an error, not silently cut */
	assert_int_equal(sort_parse(&sp, SORT_ANALYZE,
				    "time,calls,avg,min,max,med,tflops,gbps,pct-peak,pct-bw,flops,bytes,"
				    "intensity,name,op,time,calls,avg,min,tflop",
				    &bad),
			 -1);
	assert_string_equal(bad, "tflop");
	/* every key of the table at once fits */
	assert_int_equal(sort_parse(&sp, SORT_ANALYZE,
				    "time,calls,avg,min,max,med,tflops,gbps,pct-peak,pct-bw,flops,bytes,"
				    "intensity,name,op,name,op",
				    &bad),
			 0);
	int nkeys = 0;
	while (metric_sort_key_at(nkeys) >= 0)
		nkeys++;
	assert_int_equal(nkeys, 15);
	assert_int_equal(sp.n, nkeys);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(key_lists_come_from_the_enum_tables_in_enum_order),
		cmocka_unit_test(parse_resolves_defaults_and_directions),
		cmocka_unit_test(suggestions_need_three_shared_characters),
		cmocka_unit_test(the_folded_row_stays_last_and_name_breaks_ties),
		cmocka_unit_test(diff_ratio_ranks_new_rows_first_and_gone_rows_last),
		cmocka_unit_test(repeated_keys_count_once_and_every_key_is_checked),
		cmocka_unit_test(sort_rows_reads_rows_through_the_callers_readers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
