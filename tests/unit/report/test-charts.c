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

/* ---- icicle ---- */

/* The path a box stands for: the first line of its tip ("" for the whole). */
static void box_path(const struct kp_cspan *s, char *b, size_t cap)
{
	size_t n = strcspn(s->tip, "\n");
	if (s->lane == 0 || !strcmp(s->label, "(others)"))
		n = 0;
	snprintf(b, cap, "%.*s", (int)n, s->tip);
}

/* The rows' GPU time at path @p (@self) and under it (return), from the keys alone. */
static int64_t rows_under(const struct kp_row *rows, size_t n, const char *p, int64_t *self)
{
	int64_t sum = 0;
	size_t pl = strlen(p);
	*self = 0;
	for (size_t i = 0; i < n; i++) {
		const char *k = rows[i].key;
		size_t kl = strlen(k);
		if (!strcmp(k, p))
			*self += rows[i].time_ns;
		if (!pl) {
			sum += rows[i].time_ns;
			continue;
		}
		if (kl > 6 && !strcmp(k + kl - 6, " [bwd]") && !strstr(p, " [bwd]"))
			kl -= 6;
		if ((kl == pl && !strncmp(k, p, pl)) ||
		    (kl > pl && !strncmp(k, p, pl) && k[pl] == '/') || !strcmp(k, p))
			sum += rows[i].time_ns;
	}
	return sum;
}

/* Every box but (others): as wide as its rows, its children (the boxes one level down inside
   it) and its own time filling it exactly; the whole is the GPU time. */
static void check_boxes(const struct kp_chart *ch, const struct kp_row *rows, size_t n)
{
	int64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += rows[i].time_ns;
	assert_int_equal(ch->x1, total);
	assert_int_equal(ch->spans[0].lane, 0);
	assert_int_equal(ch->spans[0].t0, 0);
	assert_int_equal(ch->spans[0].t1, total);
	char p[2048];
	for (size_t i = 0; i < ch->nspans; i++) {
		const struct kp_cspan *s = &ch->spans[i];
		if (!strcmp(s->label, "(others)"))
			continue;
		box_path(s, p, sizeof(p));
		int64_t self, under = rows_under(rows, n, p, &self);
		assert_int_equal(s->t1 - s->t0, under);
		int64_t kids = 0;
		for (size_t j = 0; j < ch->nspans; j++) {
			const struct kp_cspan *c = &ch->spans[j];
			if (c->lane == s->lane + 1 && c->t0 >= s->t0 && c->t1 <= s->t1)
				kids += c->t1 - c->t0;
		}
		assert_int_equal(kids + self, s->t1 - s->t0);
	}
}

static struct kp_row mrow(const char *key, int64_t ns)
{
	return (struct kp_row){ .name = key, .key = key, .time_ns = ns, .flops = -1, .bytes = -1 };
}

static void icicle_boxes_hold_their_children_and_own_time(void **state)
{
	(void)state;
	struct kp_row rows[] = {
		mrow("M_0/A_0", 300),	     mrow("M_0/A_0 [bwd]", 200), mrow("M_0/B_0", 100),
		mrow("M_0", 50),	     mrow("(no module)", 25),	 mrow("M_0/A_0/L_10", 40),
		mrow("M_0/A_0/L_2", 60), mrow("M_0/A_0/L_2 [bwd]", 90),
	};
	/* L_10: compute-bound at 40% of its peak FLOP/s, 10% of B/s */
	rows[5].flops = 400;
	rows[5].peak_flop_ns = 400 * 1e9 / 0.4;
	rows[5].bytes = 10;
	rows[5].peak_bw_ns = 10 * 1e9 / 0.1;
	struct kp_trace t = { .display = "t.json" };
	struct kp_report r = { .trace = &t, .rows = rows, .nrows = 8, .group = GROUP_MODULE };
	struct kp_doc doc;
	doc_init(&doc, "analyze", 6);
	charts_icicle(&doc, &r);
	const struct kp_chart *ch = doc_find_chart(&doc, "flame");
	assert_non_null(ch);
	check_boxes(ch, rows, 8);
	/* depth-first, children by name with numbers as numbers, [bwd] last */
	const char *order[] = { "all GPU time", "(no module)", "M_0", "A_0", "L_2", "[bwd]",
				"L_10",		"[bwd]",       "B_0" };
	assert_int_equal(ch->nspans, 9);
	for (size_t i = 0; i < 9; i++)
		assert_string_equal(ch->spans[i].label, order[i]);
	assert_int_equal(ch->spans[2].lane, 1);
	assert_int_equal(ch->spans[5].lane, 4); /* M_0/A_0/L_2 [bwd] */
	assert_non_null(strstr(ch->spans[5].tip, "M_0/A_0/L_2 [bwd]\n90 ns GPU time"));
	/* colour: the nearer roof and how near */
	assert_int_equal(ch->spans[6].series, 0);
	assert_true(ch->spans[6].fill > 0.399 && ch->spans[6].fill < 0.401);
	assert_non_null(strstr(ch->spans[6].tip, "compute-bound: 40.0% of peak FLOP/s, 10.0% of peak B/s"));
	assert_int_equal(ch->spans[8].series, 2);
	/* svg: one box per span, widths in pixels of the GPU time */
	char *s = doc_text(&doc, FMT_HTML);
	assert_non_null(strstr(s, "<svg class=\"kc ic\""));
	assert_non_null(strstr(s, "data-a=\"0\" data-b=\"865\" data-d=\"0\""));
	assert_non_null(strstr(s, "width=\"1000.00\""));
	free(s);
	doc_free(&doc);
}

/* 10,000 distinct frames: the total kept, the boxes bounded, the small ones as (others) */
static void icicle_aggregates_small_frames(void **state)
{
	(void)state;
	enum { N = 10000 };
	struct kp_row *rows = calloc(N, sizeof(*rows));
	char(*keys)[64] = calloc(N, sizeof(*keys));
	for (int i = 0; i < N; i++) {
		snprintf(keys[i], sizeof(keys[i]), "Net_0/Block_%d/Layer_%d%s", i % 97, i,
			 i % 3 ? "" : " [bwd]");
		rows[i] = mrow(keys[i], i < 20 ? 5000000 : 1000 + i % 7);
	}
	struct kp_trace t = { .display = "t.json" };
	struct kp_report r = { .trace = &t, .rows = rows, .nrows = N, .group = GROUP_MODULE };
	struct kp_doc doc;
	doc_init(&doc, "analyze", 6);
	charts_icicle(&doc, &r);
	const struct kp_chart *ch = doc_find_chart(&doc, "flame");
	assert_true(ch->nspans <= 2 * CHARTS_ICICLE_BOXES + 1);
	check_boxes(ch, rows, N);
	/* each level's boxes sum to at most the whole, level 1 (Net_0) to all of it */
	int64_t lv[8] = { 0 };
	size_t others = 0;
	for (size_t i = 0; i < ch->nspans; i++) {
		lv[ch->spans[i].lane] += ch->spans[i].t1 - ch->spans[i].t0;
		others += !strcmp(ch->spans[i].label, "(others)");
		/* every box drawn but (others) is at least a pixel wide */
		if (strcmp(ch->spans[i].label, "(others)"))
			assert_true((ch->spans[i].t1 - ch->spans[i].t0) * CHART_ICICLE_PX >= ch->x1);
	}
	assert_int_equal(lv[1], ch->x1);
	assert_true(lv[2] == ch->x1);
	assert_true(others > 0);
	assert_non_null(strstr(ch->note, "13432 frames, "));
	char *s = doc_text(&doc, FMT_HTML);
	assert_true(strlen(s) < 1000000);
	free(s);
	doc_free(&doc);
	free(rows);
	free(keys);
}

/* names as the trace has them, escaped in the page; no module frames: a note */
static void icicle_escapes_names_and_says_when_empty(void **state)
{
	(void)state;
	struct kp_row rows[] = { mrow("<script>alert(1)</script>&\"'_0/\x1b[31mX_0", 10),
				 mrow("<script>alert(1)</script>&\"'_0/\x1b[31mX_0 [bwd]", 5) };
	struct kp_trace t = { .display = "t.json" };
	struct kp_report r = { .trace = &t, .rows = rows, .nrows = 2, .group = GROUP_MODULE };
	struct kp_doc doc;
	doc_init(&doc, "analyze", 6);
	charts_icicle(&doc, &r);
	char *s = doc_text(&doc, FMT_HTML);
	assert_null(strstr(s, "<script>alert"));
	assert_null(strstr(s, "\x1b"));
	assert_non_null(strstr(s, "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;_0/\\u001b[31mX_0 [bwd]"));
	free(s);
	doc_free(&doc);
	doc_init(&doc, "analyze", 6);
	charts_icicle(&doc, NULL);
	const struct kp_chart *ch = doc_find_chart(&doc, "flame");
	assert_int_equal(ch->nspans, 0);
	FILE *fp = open_memstream(&s, &(size_t){ 0 });
	svg_chart(ch, 1, fp);
	fclose(fp);
	assert_non_null(strstr(s, "no module frames"));
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
		cmocka_unit_test(icicle_boxes_hold_their_children_and_own_time),
		cmocka_unit_test(icicle_aggregates_small_frames),
		cmocka_unit_test(icicle_escapes_names_and_says_when_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
