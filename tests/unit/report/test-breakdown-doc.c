/*
 * test-breakdown-doc.c — the breakdown and launch statistics in the document (breakdown-doc.c),
 * from struct kp_breakdown literals: header lines, the json objects, the rows tables.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/breakdown-doc.h"

static const char *ftext(const struct kp_doc *doc, const char *key)
{
	for (size_t i = 0; i < doc->nitems; i++)
		if (doc->items[i].type == ITEM_FACT && doc->items[i].key &&
		    !strcmp(doc->items[i].key, key))
			return doc->items[i].v.s;
	return NULL;
}

static const struct kp_item *jfact(const struct kp_doc *doc, const char *within, const char *jkey)
{
	size_t i = 0;
	while (i < doc->nitems && !(doc->items[i].type == ITEM_OBJECT && doc->items[i].jkey &&
				    !strcmp(doc->items[i].jkey, within)))
		i++;
	for (; i < doc->nitems; i++)
		if (doc->items[i].type == ITEM_FACT && doc->items[i].jkey &&
		    !strcmp(doc->items[i].jkey, jkey))
			return &doc->items[i];
	fail_msg("no %s in %s", jkey, within);
	return NULL;
}

static const struct kp_table *table(const struct kp_doc *doc, const char *jkey)
{
	for (size_t i = 0; i < doc->nitems; i++)
		if (doc->items[i].type == ITEM_TABLE && !strcmp(doc->items[i].jkey, jkey))
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

/* 1 ms span: 600 us compute, 100 us comm, 50 us memcpy, 50 us other, 200 us idle */
static struct kp_bd bd(void)
{
	return (struct kp_bd){ .span_ns = 1000000,
			       .class_ns = { 600000, 100000, 50000, 50000 },
			       .idle_ns = 200000,
			       .comm_total_ns = 160000,
			       .comm_overlapped_ns = 60000,
			       .idle_cause_ns = { 120000, 50000, 20000, 10000 },
			       .idle_gaps = { 3, 1, 4, 2 } };
}

static void the_split_comm_and_idle_lines(void **state)
{
	(void)state;
	struct kp_bd_step steps[] = { { .num = -1, .b = bd() } };
	struct kp_breakdown b = {
		.all = bd(), .steps = steps, .nsteps = 1, .ndevices = 1, .launch_gap_ns = 10000
	};
	struct kp_doc doc;
	doc_init(&doc, "analyze", 8);
	breakdown_doc(&doc, &b);
	assert_string_equal(
		ftext(&doc, "split"),
		"GPU span 1.000 ms: compute 600.000 us 60.0%, comm 100.000 us 10.0%, memcpy 50.000 us "
		"5.0%, other 50.000 us 5.0%, idle 200.000 us 20.0%");
	assert_string_equal(
		ftext(&doc, "comm"),
		"160.000 us in communication kernels, 60.000 us (37.5%) overlapped with compute");
	assert_string_equal(ftext(&doc, "idle"),
			    "host 120.000 us (3 gaps), sync 50.000 us (1), launch 20.000 us (4, gaps < "
			    "10.000 us), other 10.000 us (2)");
	assert_null(ftext(&doc, "note"));
	assert_int_equal(jfact(&doc, "breakdown", "compute_ns")->v.i, 600000);
	assert_int_equal(jfact(&doc, "breakdown", "memcpy_ns")->v.i, 50000);
	assert_int_equal(jfact(&doc, "idle_by_cause", "sync_ns")->v.i, 50000);
	/* no ProfilerSteps (one window numbered -1) and no streams: an empty table */
	assert_int_equal(table(&doc, "breakdown_rows")->nrows, 0);
	doc_free(&doc);

	b.all.comm_total_ns = 0;
	b.all.span_ns = 0; /* an empty trace: percentages 0, not NaN */
	b.ndevices = 2;
	doc_init(&doc, "analyze", 8);
	breakdown_doc(&doc, &b);
	assert_string_equal(ftext(&doc, "comm"), "no communication kernels");
	assert_non_null(strstr(ftext(&doc, "split"), "compute 600.000 us 0.0%"));
	assert_string_equal(ftext(&doc, "note"),
			    "GPU work on 2 devices: the split is of their union");
	doc_free(&doc);
}

static void steps_then_streams_fill_the_rows_table(void **state)
{
	(void)state;
	struct kp_bd_step steps[] = { { .num = 4, .b = bd() },
				      { .num = 5, .partial = 1, .b = bd() } };
	struct kp_bd_stream streams[] = { { .device = 0, .stream = 7, .b = bd() },
					  { .device = 1, .stream = 13, .b = bd() } };
	steps[1].b.idle_ns = 250000;
	struct kp_breakdown b = { .all = bd(),
				  .steps = steps,
				  .nsteps = 2,
				  .streams = streams,
				  .nstreams = 2,
				  .ndevices = 1 };
	struct kp_doc doc;
	doc_init(&doc, "analyze", 8);
	breakdown_doc(&doc, &b);
	const struct kp_table *tb = table(&doc, "breakdown_rows");
	assert_int_equal(tb->nrows, 4);
	size_t w = (size_t)tb->ncols;
	const struct kp_cell *c = tb->cells;
	assert_string_equal(c[col(tb, "window")].s, "step 4");
	assert_int_equal(c[col(tb, "step")].i, 4);
	assert_int_equal(c[col(tb, "partial")].i, 0);
	assert_string_equal(c[col(tb, "compute_ns")].human, "600.000 us");
	assert_string_equal(c[col(tb, "idle_pct")].human, "20.0");
	assert_int_equal(c[col(tb, "idle_host_ns")].i, 120000);
	assert_int_equal(c[col(tb, "stream")].type, CELL_NULL); /* a step row has no stream */
	assert_string_equal(c[w + col(tb, "window")].s, "step 5 (partial)");
	assert_int_equal(c[w + col(tb, "partial")].i, 1);
	assert_string_equal(c[w + col(tb, "idle_pct")].human, "25.0");
	/* stream rows: no idle causes, one device: no device in the name */
	assert_string_equal(c[2 * w + col(tb, "window")].s, "stream 7");
	assert_int_equal(c[2 * w + col(tb, "stream")].i, 7);
	assert_int_equal(c[2 * w + col(tb, "idle_host_ns")].type, CELL_NULL);
	assert_string_equal(c[2 * w + col(tb, "idle_host_ns")].human, "-");
	assert_int_equal(c[2 * w + col(tb, "step")].type, CELL_NULL);
	doc_free(&doc);

	b.ndevices = 2;
	doc_init(&doc, "analyze", 8);
	breakdown_doc(&doc, &b);
	tb = table(&doc, "breakdown_rows");
	assert_string_equal(tb->cells[3 * (size_t)tb->ncols + col(tb, "window")].s,
			    "device 1 stream 13");
	assert_int_equal(tb->cells[3 * (size_t)tb->ncols + col(tb, "device")].i, 1);
	doc_free(&doc);
}

static void launch_lines_and_rows(void **state)
{
	(void)state;
	const char *longname =
		"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
		"at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
		"at::detail::Array<char*, 1>)";
	/* clang-format off */
	struct kp_launch_row rows[] = {
		{ .name = longname, .launches = 4, .cpu_ns = 40000, .lat_ns = 20000, .lat_max_ns = 9000,
		  .gpu_ns = 8000, .short_n = 4, .short_ns = 8000, .cheaper_n = 4 },
		{ .name = "gemm", .launches = 2, .cpu_ns = 10000, .lat_ns = 4000, .lat_max_ns = 3000,
		  .gpu_ns = 900000 },
		{ .name = "zero", .launches = 0 },
	};
	/* clang-format on */
	struct kp_breakdown b = { .launch_rows = rows,
				  .nlaunch_rows = 3,
				  .launch_all = { .name = "(all)",
						  .launches = 6,
						  .cpu_ns = 50000,
						  .lat_ns = 24000,
						  .lat_max_ns = 9000,
						  .gpu_ns = 908000,
						  .kernels = 5,
						  .kernel_ns = 907000,
						  .short_n = 4,
						  .short_ns = 8000,
						  .cheaper_n = 4 },
				  .unlaunched = 3,
				  .short_ns = 10000 };
	struct kp_doc doc;
	doc_init(&doc, "analyze", 8);
	breakdown_doc_launches(&doc, &b, 2, 0, 0);
	assert_string_equal(ftext(&doc, "launch"),
			    "6 launch calls with GPU work: CPU 50.000 us (avg 8.333 us), launch->start avg "
			    "4.000 us (max 9.000 us); 3 GPU events without a launch call");
	assert_string_equal(ftext(&doc, "short"),
			    "4 of 5 launched kernels under 10.000 us (8.000 us of their 907.000 us); "
			    "4 GPU events (memcpy/memset included) ran shorter than their launch call");
	assert_int_equal(jfact(&doc, "launch_stats", "launch_to_start_total_ns")->v.i, 24000);
	assert_int_equal(jfact(&doc, "launch_stats", "unlaunched")->v.i, 3);
	const struct kp_table *tb = table(&doc, "launches");
	assert_int_equal(tb->nrows, 2); /* --top 2 */
	const struct kp_cell *c = tb->cells;
	assert_int_equal(c[col(tb, "cpu_avg_ns")].i, 10000);
	assert_int_equal(c[col(tb, "launch_to_start_avg_ns")].i, 5000);
	assert_string_equal(c[col(tb, "name")].s, longname);
	assert_non_null(c[col(tb, "name")].human); /* shortened for humans */
	assert_true(strlen(c[col(tb, "name")].human) < strlen(longname));
	assert_string_equal(tb->cols[col(tb, "name")].title, "Kernel");
	doc_free(&doc);

	/* all rows; op names and full names are shown as they are; 0 launches divide by 1 */
	doc_init(&doc, "analyze", 8);
	breakdown_doc_launches(&doc, &b, 0, 1, 0);
	tb = table(&doc, "launches");
	assert_int_equal(tb->nrows, 3);
	assert_string_equal(tb->cols[col(tb, "name")].title, "Op");
	assert_null(tb->cells[col(tb, "name")].human);
	assert_int_equal(tb->cells[2 * (size_t)tb->ncols + col(tb, "cpu_avg_ns")].i, 0);
	doc_free(&doc);
	doc_init(&doc, "analyze", 8);
	breakdown_doc_launches(&doc, &b, 5, 0, 1);
	tb = table(&doc, "launches");
	assert_int_equal(tb->nrows, 3);
	assert_null(tb->cells[col(tb, "name")].human);
	doc_free(&doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_split_comm_and_idle_lines),
		cmocka_unit_test(steps_then_streams_fill_the_rows_table),
		cmocka_unit_test(launch_lines_and_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
