/*
 * test-charts.c — chart data (charts.c) from struct literals, and its html, svg and json
 * rendering (html.c, svg.c, table.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/charts.h"
#include "kprof/html.h"
#include "kprof/svg.h"
#include "kprof/table.h"

static char *doc_text(const struct kp_doc *doc, enum kp_format f)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&buf, &n);
	table_render(doc, f, 0, fp);
	fclose(fp);
	return buf;
}

static void families_come_from_the_op_else_the_kernel(void **state)
{
	(void)state;
	assert_string_equal(charts_family("aten::addmm", "nvjet_tst", GPU_KERNEL), "gemm");
	assert_string_equal(charts_family("aten::add", "vectorized_elementwise_kernel", GPU_KERNEL),
			    "pointwise");
	assert_string_equal(charts_family(NULL, "ncclKernel_AllReduce_RING", GPU_KERNEL), "comm");
	assert_string_equal(charts_family("aten::copy_", "Memcpy DtoD", GPU_MEMCPY),
			    "memcpy/memset");
	assert_string_equal(charts_family("aten::_scaled_dot_product_flash_attention", "flash_fwd",
					  GPU_KERNEL),
			    "attention");
	assert_string_equal(charts_family("aten::layer_norm", "x", GPU_KERNEL), "norm");
	assert_string_equal(charts_family("my_op", "my_kernel", GPU_KERNEL), "other");
}

/* many rows: at most CHARTS_ROOF_POINTS single points plus bins, and no GPU time lost */
static void roofline_bins_small_rows_and_keeps_their_time(void **state)
{
	(void)state;
	enum { N = 10000 };
	struct kp_row *rows = calloc(N, sizeof(*rows));
	char(*names)[32] = calloc(N, sizeof(*names));
	int64_t total = 0;
	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "aten::mm#%d", i);
		rows[i] = (struct kp_row){ .name = names[i],
					   .key = names[i],
					   .calls = 1,
					   .time_ns = 1000 + i,
					   .flops = 1000,
					   .bytes = 10,
					   .flops_per_s = 1e12 * (1 + i % 50),
					   .intensity = 1 + i % 300,
					   .prec = "bf16" };
		total += rows[i].time_ns;
	}
	struct kp_trace t = { .display = "t.json" };
	struct kp_report r = { .trace = &t, .rows = rows, .nrows = N };
	struct kp_doc doc;
	doc_init(&doc, "analyze", 6);
	charts_analyze(&doc, &r, &r, CHART_BIT(CHART_ROOFLINE));
	const struct kp_chart *ch = doc_find_chart(&doc, "roofline");
	assert_non_null(ch);
	assert_true(ch->npts > CHARTS_ROOF_POINTS);
	assert_true(ch->npts <= CHARTS_ROOF_POINTS + 24 * 24);
	assert_string_equal(ch->note,
			    "device not in the device table: no roofs; the 300 op shapes "
			    "with most GPU time drawn one by one, 9700 smaller ones binned");
	assert_int_equal(ch->nmarks, 0);
	/* a binned point's tip sums its rows */
	const struct kp_cpoint *bin = &ch->pts[CHARTS_ROOF_POINTS];
	assert_string_equal(bin->label, "(binned)");
	assert_non_null(strstr(bin->tip, " smaller op shapes binned\n"));
	double w = 0;
	for (size_t i = 0; i < ch->npts; i++)
		w += ch->pts[i].w;
	assert_int_equal((int64_t)w, total);
	/* the largest row is drawn on its own, with its numbers in the hover text */
	assert_string_equal(ch->pts[0].label, "aten::mm#9999");
	assert_non_null(strstr(ch->pts[0].tip, "50.0 TFLOP/s"));
	/* the page stays small: 10 000 rows draw in well under 1 MB of svg */
	char *s = doc_text(&doc, FMT_SVG);
	assert_true(strlen(s) < 1000000);
	assert_non_null(strstr(s, "xmlns=\"http://www.w3.org/2000/svg\""));
	free(s);
	doc_free(&doc);
	free(rows);
	free(names);
}

static void roofs_are_the_peaks_of_the_rows_precisions_at_the_clock(void **state)
{
	(void)state;
	struct kp_device dev = { .name = "GPU-X" };
	dev.peak[PREC_BF16] = (struct kp_peak){ .flop_per_s = 1000e12, .clk_ref_mhz = 2000 };
	dev.peak[PREC_FP32] = (struct kp_peak){ .flop_per_s = 60e12, .clk_ref_mhz = 2000 };
	dev.mem_bw_byte_per_s = 4e12;
	struct kp_row row = { .name = "aten::mm",
			      .key = "k",
			      .calls = 1,
			      .time_ns = 100,
			      .flops = 5,
			      .bytes = 1,
			      .flops_per_s = 1e14,
			      .intensity = 5,
			      .prec = "bf16" };
	struct kp_trace t = { .display = "t.json" };
	struct kp_report r = { .trace = &t,
			       .rows = &row,
			       .nrows = 1,
			       .dev = &dev,
			       .clock_source = CLOCK_OPTION,
			       .sm_clock_mhz = 1000 };
	struct kp_doc doc;
	doc_init(&doc, "analyze", 6);
	charts_analyze(&doc, &r, &r, CHART_BIT(CHART_ROOFLINE));
	const struct kp_chart *ch = doc_find_chart(&doc, "roofline");
	assert_int_equal(ch->nmarks, 1);                                 /* fp32 unused: no roof */
	assert_true(ch->marks[0].v > 499e12 && ch->marks[0].v < 501e12); /* half the clock */
	assert_true(ch->bw == devdb_peak_bw(&dev, 0));
	assert_non_null(strstr(ch->note, "1000 MHz"));
	doc_free(&doc);
}

/* one op with 10 kernels: CHARTS_TOP_KERNELS named segments and the rest in one */
static void top_ops_split_into_kernels(void **state)
{
	(void)state;
	static char names[10][8];
	struct kp_op op = { .name = "aten::mm" };
	struct kp_gpu g[11];
	for (int i = 0; i < 10; i++) {
		snprintf(names[i], sizeof(names[i]), "k%d", i);
		g[i] = (struct kp_gpu){ .ts_ns = i * 100,
					.dur_ns = 10 * (i + 1),
					.name = names[i],
					.op = 0,
					.kind = GPU_KERNEL };
	}
	g[10] = (struct kp_gpu){
		.ts_ns = 5000, .dur_ns = 7, .name = "lonely", .op = -1, .kind = GPU_KERNEL
	};
	struct kp_trace t = { .display = "t.json", .ops = &op, .nops = 1, .gpu = g, .ngpu = 11 };
	struct kp_report r = { .trace = &t };
	struct kp_doc doc;
	doc_init(&doc, "analyze", 6);
	charts_analyze(&doc, &r, &r, CHART_BIT(CHART_TOP));
	const struct kp_chart *ch = doc_find_chart(&doc, "top");
	assert_int_equal(ch->nlanes, 2);
	assert_string_equal(ch->lanes[0], "aten::mm");
	assert_string_equal(ch->lanes[1], "(unlinked)");
	int segs = 0;
	int64_t end = 0;
	for (size_t i = 0; i < ch->nspans; i++)
		if (ch->spans[i].lane == 0) {
			segs++;
			end = ch->spans[i].t1;
		}
	assert_int_equal(segs, CHARTS_TOP_KERNELS + 1);
	assert_int_equal(end, 550); /* 10 + 20 + ... + 100 */
	assert_string_equal(ch->spans[0].label, "k9");
	doc_free(&doc);
}

/* the timeline: lanes per stream, buckets merged into runs, steps marked */
static void timeline_buckets_streams_and_marks_steps(void **state)
{
	(void)state;
	struct kp_gpu g[40];
	for (int i = 0; i < 40; i++)
		g[i] = (struct kp_gpu){ .ts_ns = (int64_t)i * 1000000,
					.dur_ns = 1000000,
					.name = "gemm_kernel",
					.op = -1,
					.stream = i % 20,
					.kind = GPU_KERNEL };
	struct kp_step st = { .ts_ns = 2000000, .dur_ns = 10, .num = 7 };
	struct kp_trace t = { .display = "t.json", .gpu = g, .ngpu = 40, .steps = &st, .nsteps = 1 };
	struct kp_report r = { .trace = &t };
	struct kp_doc doc;
	doc_init(&doc, "analyze", 6);
	charts_analyze(&doc, &r, &r, CHART_BIT(CHART_TIMELINE));
	const struct kp_chart *ch = doc_find_chart(&doc, "timeline");
	assert_int_equal(ch->nlanes, CHARTS_LANES);
	assert_string_equal(ch->lanes[CHARTS_LANES - 1], "5 more streams");
	assert_int_equal(ch->x1, 40000000);
	assert_int_equal(ch->nmarks, 1);
	assert_string_equal(ch->marks[0].label, "step 7");
	/* stream 0 is busy in [0, 1 ms) and [20, 21 ms): spans there only, to a bucket */
	int64_t bw = (ch->x1 + CHARTS_BUCKETS - 1) / CHARTS_BUCKETS;
	int first = 0, second = 0;
	for (size_t i = 0; i < ch->nspans; i++) {
		const struct kp_cspan *s = &ch->spans[i];
		if (s->lane != 0)
			continue;
		if (s->t0 >= 0 && s->t1 <= 1000000 + bw)
			first = 1;
		else if (s->t0 >= 20000000 - bw && s->t1 <= 21000000 + bw)
			second = 1;
		else
			fail_msg("span [%ld, %ld) outside the busy times", (long)s->t0,
				 (long)s->t1);
	}
	assert_true(first && second);
	assert_true(ch->nspans <= (size_t)CHARTS_LANES * CHARTS_BUCKETS);
	doc_free(&doc);
}

/* The note names the clock the roofs are at; a point's tip carries every number of its row. */
static void roofline_notes_the_clock_and_tips_carry_the_rows_numbers(void **state)
{
	(void)state;
	struct kp_device dev = { .name = "GPU-X" };
	dev.peak[PREC_BF16] = (struct kp_peak){ .flop_per_s = 1000e12, .clk_ref_mhz = 2000 };
	dev.mem_bw_byte_per_s = 4e12;
	struct kp_row rows[2] = {
		{ .name = "aten::mm",
		  .key = "a",
		  .shape = "[8,16]x[16,32]",
		  .calls = 3,
		  .time_ns = 1500,
		  .flops = 5,
		  .flops_per_s = 1e14,
		  .bytes_per_s = 2e13,
		  .pct_peak_flops = 10,
		  .intensity = 5,
		  .time_pct = 75,
		  .bound = "memory",
		  .prec = "bf16" },
		{ .name = "aten::add",
		  .key = "b",
		  .calls = 1,
		  .time_ns = 500,
		  .flops_per_s = 1e9,
		  .bytes_per_s = -1,
		  .pct_peak_flops = -1,
		  .intensity = 0.25,
		  .time_pct = 25 },
	};
	struct kp_trace t = { .display = "t.json" };
	struct kp_report r = {
		.trace = &t, .rows = rows, .nrows = 2, .dev = &dev, .clock_source = CLOCK_DATASHEET
	};
	struct kp_doc doc;
	doc_init(&doc, "analyze", 6);
	charts_analyze(&doc, &r, &r, CHART_BIT(CHART_ROOFLINE));
	const struct kp_chart *ch = doc_find_chart(&doc, "roofline");
	assert_string_equal(ch->note, "GPU-X, peaks at their datasheet clocks, DRAM 4.0 TB/s");
	assert_int_equal(ch->nmarks, 1);
	assert_string_equal(ch->marks[0].label, "bf16 1.0 PFLOP/s");
	assert_int_equal(ch->npts, 2);
	assert_string_equal(ch->pts[0].label, "aten::mm");
	assert_string_equal(ch->pts[0].tip,
			    "aten::mm [8,16]x[16,32]\n1.500 us GPU time (75.0%), 3 calls\n"
			    "100.0 TFLOP/s (10.0% of bf16 peak), 20.0 TB/s, 5.0 FLOP/byte, "
			    "memory-bound");
	assert_string_equal(ch->pts[1].tip,
			    "aten::add\n500 ns GPU time (25.0%), 1 calls\n1.0 GFLOP/s, 0.2 FLOP/byte");
	doc_free(&doc);
	r.clock_source = CLOCK_TRACE;
	r.sm_clock_mhz = 1500;
	doc_init(&doc, "analyze", 6);
	charts_analyze(&doc, &r, &r, CHART_BIT(CHART_ROOFLINE));
	ch = doc_find_chart(&doc, "roofline");
	assert_string_equal(ch->note, "GPU-X at 1500 MHz SM clock (from the trace), DRAM 4.0 TB/s");
	doc_free(&doc);
}

/* Buckets shade by how busy they were; steps past CHARTS_MARKS are thinned to every n-th. */
static void timeline_shades_partly_busy_buckets_and_thins_step_marks(void **state)
{
	(void)state;
	/* one stream, 600 us: [0, 300) fully busy, then the last 1 us bucket half busy */
	struct kp_gpu g[2] = {
		{ .ts_ns = 0, .dur_ns = 300000, .name = "gemm", .op = -1, .kind = GPU_KERNEL },
		{ .ts_ns = 599500, .dur_ns = 500, .name = "gemm", .op = -1, .kind = GPU_KERNEL },
	};
	struct kp_step st[500];
	for (int i = 0; i < 500; i++)
		st[i] = (struct kp_step){ .ts_ns = i * 1000, .dur_ns = 10, .num = i };
	struct kp_trace t = { .display = "t.json", .gpu = g, .ngpu = 2, .steps = st, .nsteps = 500 };
	struct kp_report r = { .trace = &t };
	struct kp_doc doc;
	doc_init(&doc, "analyze", 6);
	charts_analyze(&doc, &r, &r, CHART_BIT(CHART_TIMELINE));
	const struct kp_chart *ch = doc_find_chart(&doc, "timeline");
	assert_int_equal(ch->x1, 600000);
	assert_int_equal(ch->nlanes, 1);
	assert_string_equal(ch->lanes[0], "GPU 0 s0");
	/* 600 buckets of 1 us: the busy run, then the last bucket half busy */
	assert_int_equal(ch->nspans, 2);
	assert_int_equal(ch->spans[0].t0, 0);
	assert_int_equal(ch->spans[0].t1, 300000);
	assert_true(ch->spans[0].fill == 1);
	assert_int_equal(ch->spans[1].t0, 599000);
	assert_int_equal(ch->spans[1].t1, 600000);
	assert_true(ch->spans[1].fill == 0.5);
	assert_string_equal(ch->spans[1].label, "GPU 0 s0");
	/* 500 steps start inside the span (0 .. 499 us): every 3rd is marked */
	assert_int_equal(ch->nmarks, 167);
	assert_string_equal(ch->marks[1].label, "step 3");
	assert_true(ch->marks[1].v == 3000);
	assert_string_equal(ch->note, "1 stream, 600.000 us GPU span in 600 buckets of 1.000 us; a "
				      "bucket shows its main family, its shade how busy it was");
	doc_free(&doc);
}

/* the waterfall walks from the base total to the new total */
static void waterfall_deltas_sum_to_the_change(void **state)
{
	(void)state;
	struct kp_diff_row rows[20];
	char keys[20][16];
	int64_t base = 0, nw = 0;
	for (int i = 0; i < 20; i++) {
		snprintf(keys[i], sizeof(keys[i]), "op%d", i);
		int64_t b = 1000 * (i + 1), n = b + (i % 2 ? 100 * i : -50 * i);
		rows[i] = (struct kp_diff_row){ .key = keys[i],
						.name = keys[i],
						.has_base = 1,
						.has_new = 1,
						.base_ns = b,
						.new_ns = n,
						.delta_ns = n - b,
						.status = DIFF_CHANGED,
						.base_flops_per_s = 1e12,
						.new_flops_per_s = 2e12 };
		base += b;
		nw += n;
	}
	rows[3].status = DIFF_NEW;
	rows[3].has_base = 0;
	struct kp_diff d = { .rows = rows,
			     .nrows = 20,
			     .sum = { .base_ns = base, .new_ns = nw, .delta_ns = nw - base } };
	struct kp_doc doc;
	doc_init(&doc, "diff", 7);
	charts_diff(&doc, &d, CHARTS_ALL);
	const struct kp_chart *ch = doc_find_chart(&doc, "waterfall");
	assert_int_equal(ch->npts, CHARTS_DELTAS + 3);
	assert_true(ch->pts[0].x == (double)base);
	assert_true(ch->pts[ch->npts - 1].x == (double)nw);
	double run = ch->pts[0].x;
	for (size_t i = 1; i + 1 < ch->npts; i++)
		run += ch->pts[i].x;
	assert_true(run == (double)nw);
	assert_string_equal(ch->pts[1].label, "op19"); /* largest |delta| first */
	const struct kp_chart *db = doc_find_chart(&doc, "dumbbell");
	assert_int_equal(db->npts, 19); /* the new row is not paired */
	const struct kp_chart *nl = doc_find_chart(&doc, "new");
	assert_int_equal(nl->npts, 1);
	assert_string_equal(nl->pts[0].label, "op3");
	doc_free(&doc);
}

/* html: escaped text, verdict banner, no URL but xmlns, sortable table; json carries charts */
static void html_page_is_self_contained_and_escaped(void **state)
{
	(void)state;
	static const struct kp_col cols[] = { { "Time", "time_ns", COL_BOTH, 0 },
					      { "Op", "op", COL_BOTH, 1 } };
	struct kp_doc doc;
	doc_init(&doc, "diff", 7);
	doc_summary(&doc, "a <b> & c");
	doc_fact_text(&doc, "gate", NULL, "tripped by 1 row");
	doc_fact_tone(&doc, TONE_BAD);
	struct kp_table *tb = doc_table(&doc, "rows", cols, 2);
	struct kp_cell *c = doc_row(tb);
	doc_cell_int(tb, &c[0], 1500, "1.500 us");
	doc_cell_str(tb, &c[1], "f<int>&\x01", NULL);
	struct kp_chart *ch = doc_chart(&doc, "waterfall", CHART_WATERFALL, "waterfall",
					   "W <1>");
	chart_point(&doc, ch, 100, 0, 0, 0, "base total", NULL);
	chart_point(&doc, ch, 20, 0, 0, 1, "x<y", NULL);
	chart_point(&doc, ch, 120, 0, 0, 0, "new total", NULL);
	char *s = doc_text(&doc, FMT_HTML);
	assert_non_null(strstr(s, "<title>kprof diff: a &lt;b&gt; &amp; c</title>"));
	assert_non_null(strstr(s, "class=\"verdict bad\""));
	assert_non_null(strstr(s, "f&lt;int&gt;&amp;\\u0001"));
	assert_non_null(strstr(s, "data-v=\"1500\""));
	assert_non_null(strstr(s, "x&lt;y"));
	assert_null(strstr(s, "https://"));
	const char *h = s;
	while ((h = strstr(h, "http://")) != NULL) {
		assert_true(!strncmp(h - 7, "xmlns=\"", 7));
		h++;
	}
	assert_null(strstr(s, " src="));
	free(s);
	s = doc_text(&doc, FMT_JSON);
	assert_non_null(strstr(s, "\"waterfall\": {"));
	assert_non_null(strstr(s, "\"kind\": \"waterfall\""));
	free(s);
	/* table and markdown have no charts */
	s = doc_text(&doc, FMT_TABLE);
	assert_null(strstr(s, "W <1>"));
	free(s);
	doc_free(&doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(families_come_from_the_op_else_the_kernel),
		cmocka_unit_test(roofline_bins_small_rows_and_keeps_their_time),
		cmocka_unit_test(roofs_are_the_peaks_of_the_rows_precisions_at_the_clock),
		cmocka_unit_test(top_ops_split_into_kernels),
		cmocka_unit_test(timeline_buckets_streams_and_marks_steps),
		cmocka_unit_test(roofline_notes_the_clock_and_tips_carry_the_rows_numbers),
		cmocka_unit_test(timeline_shades_partly_busy_buckets_and_thins_step_marks),
		cmocka_unit_test(waterfall_deltas_sum_to_the_change),
		cmocka_unit_test(html_page_is_self_contained_and_escaped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
