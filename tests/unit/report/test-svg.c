/*
 * test-svg.c — charts drawn as SVG (svg.c) from document charts built with doc.h: escaping,
 * standalone vs inline elements, "no data" frames, and each kind's marks, classes and hover
 * text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/doc.h"
#include "kprof/svg.h"

static char *esc(const char *s)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&buf, &n);
	svg_escape(s, fp);
	fclose(fp);
	return buf;
}

static char *draw(const struct kp_chart *ch, int standalone)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&buf, &n);
	svg_chart(ch, standalone, fp);
	fclose(fp);
	return buf;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

static void escaping_covers_markup_and_controls(void **state)
{
	(void)state;
	char *s = esc("a<b>&\"c\"'d'");
	assert_string_equal(s, "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
	free(s);
	/* C0 and bidi marks escaped as text (utf8_visible_lines); tab, newline, UTF-8 kept */
	s = esc("x\x01y\tz\n\xc3\xa9\x1b\xe2\x80\xae");
	assert_string_equal(s, "x\\u0001y\tz\n\xc3\xa9\\u001b\\u202e");
	free(s);
	s = esc(NULL);
	assert_string_equal(s, "");
	free(s);
}

static void only_lists_are_not_drawable(void **state)
{
	(void)state;
	struct kp_chart ch = { .kind = CHART_LIST };
	assert_false(svg_drawable(&ch));
	for (int k = CHART_ROOFLINE; k < CHART_LIST; k++) {
		ch.kind = (enum kp_chart_kind)k;
		assert_true(svg_drawable(&ch));
	}
}

static void charts_without_data_draw_a_frame(void **state)
{
	(void)state;
	for (int k = CHART_ROOFLINE; k < CHART_LIST; k++) {
		struct kp_chart ch = { .kind = (enum kp_chart_kind)k, .name = "c", .title = "T" };
		char *s = draw(&ch, 0);
		assert_non_null(strstr(s, "<svg class=\"kc\" id=\"chart-c\""));
		assert_non_null(strstr(s, ">no data</text>"));
		assert_null(strstr(s, "xmlns"));
		assert_int_equal(count(s, "</svg>"), 1);
		free(s);
	}
}

static void standalone_svgs_carry_namespace_title_and_style(void **state)
{
	(void)state;
	struct kp_chart ch = { .kind = CHART_TOP, .name = "top", .title = "Top <ops>" };
	char *s = draw(&ch, 1);
	assert_non_null(strstr(s, " xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\">"));
	assert_non_null(strstr(s, "<title>Top &lt;ops&gt;</title>"));
	assert_non_null(strstr(s, "<style>\n"));
	assert_non_null(strstr(s, ".s15{fill:"));
	assert_non_null(strstr(s, "<text class=\"ttl\" x=\"8\" y=\"14\">Top &lt;ops&gt;</text>"));
	free(s);
	/* the stylesheet alone: one class per series colour */
	char *css = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&css, &n);
	svg_css(fp);
	fclose(fp);
	assert_non_null(strstr(css, ".s0{fill:"));
	assert_non_null(strstr(css, ".s15{fill:"));
	assert_null(strstr(css, ".s16{"));
	assert_non_null(strstr(css, ".kc .bad{"));
	free(css);
}

static void roofline_draws_roofs_ridges_and_largest_points_first(void **state)
{
	(void)state;
	struct kp_doc doc;
	doc_init(&doc, "t", 0);
	struct kp_chart *ch = doc_chart(&doc, "roofline", CHART_ROOFLINE, "roofline",
					   "Roofline");
	ch->bw = 3e12;
	int g = chart_series(ch, "gemm");
	chart_mark(&doc, ch, 989e12, "bf16 989 TFLOP/s");
	chart_point(&doc, ch, 100, 400e12, 10, g, "small", NULL);
	chart_point(&doc, ch, 10, 20e12, 1000, g, "big", "big & slow");
	chart_point(&doc, ch, -1, 5e12, 1, g, "no intensity", NULL); /* not drawable: skipped */
	char *s = draw(ch, 0);
	assert_non_null(strstr(s, "<title>DRAM roof 3.0 TB/s</title>"));
	assert_non_null(
		strstr(s, "<title>ridge point: bf16 989 TFLOP/s at 329.7 FLOP/byte</title>"));
	assert_non_null(strstr(s, "clip-path=\"url(#clip-roofline)\""));
	assert_int_equal(count(s, "<circle class=\"pt s0\""), 2);
	const char *big = strstr(s, "<title>big &amp; slow</title>"),
		   *small = strstr(s, "<title>small</title>");
	assert_non_null(big);
	assert_non_null(small);
	assert_true(big < small); /* drawn first, so the small one stays visible on top */
	assert_null(strstr(s, "no intensity"));
	assert_non_null(strstr(s, ">gemm</text>")); /* legend */
	free(s);
	doc_free(&doc);
}

/* The plot box, labels in the right margin, and the DRAM roof's label where it enters the plot. */
static void roofline_labels_its_roofs_in_the_margin(void **state)
{
	(void)state;
	struct kp_doc doc;
	doc_init(&doc, "t", 0);
	struct kp_chart *ch = doc_chart(&doc, "roofline", CHART_ROOFLINE, "roofline",
					   "Roofline");
	ch->bw = 1e12;
	int g = chart_series(ch, "gemm");
	chart_mark(&doc, ch, 100e12, "fp32 roof with a very long label");
	chart_point(&doc, ch, 10, 5e12, 1, g, "p", NULL);
	char *s = draw(ch, 0);
	assert_non_null(strstr(s, "<rect class=\"ax\" x=\"72\" y=\"28\" width=\"538\" "
				  "height=\"356\"/>\n"));
	assert_non_null(strstr(s, "<text x=\"341\" y=\"418\" text-anchor=\"middle\">arithmetic "
				  "intensity (FLOP/byte, log)</text>"));
	assert_non_null(strstr(s, "<text transform=\"translate(16 206) rotate(-90)\""));
	assert_non_null(strstr(s, "<clipPath id=\"clip-roofline\"><rect x=\"72\" y=\"28\" "
				  "width=\"538\" height=\"356\"/></clipPath>\n"));
	/* the label is cut to 26 bytes, in the margin right of the plot, whole on hover */
	assert_non_null(strstr(s, "<text class=\"sm\" x=\"614\" y=\"149.7\"><title>fp32 roof with "
				  "a very long label</title>fp32 roof with a very "
				  "long\xe2\x80\xa6</text>"));
	assert_non_null(strstr(s, "text-anchor=\"end\">DRAM 1.0 TB/s</text>"));
	/* roofs and points inside the clip, labels after it */
	const char *clip_end = strstr(s, "</g>\n"), *ridge = strstr(s, "<circle class=\"ridge\"");
	assert_non_null(clip_end);
	assert_true(strstr(s, "<title>DRAM roof 1.0 TB/s</title>") < clip_end);
	assert_true(strstr(s, "<circle class=\"pt s0\"") < clip_end);
	assert_true(ridge > clip_end);
	assert_non_null(strstr(s, ">circle area ~ GPU time</text>"));
	free(s);
	doc_free(&doc);
}

/* Without a bandwidth: flat roofs across the whole plot, no DRAM roof and no ridge. */
static void roofline_without_a_bandwidth_draws_flat_roofs(void **state)
{
	(void)state;
	struct kp_doc doc;
	doc_init(&doc, "t", 0);
	struct kp_chart *ch = doc_chart(&doc, "roofline", CHART_ROOFLINE, "roofline",
					   "Roofline");
	int g = chart_series(ch, "gemm");
	chart_mark(&doc, ch, 100e12, "fp32");
	chart_point(&doc, ch, 10, 5e12, 1, g, "p", NULL);
	char *s = draw(ch, 0);
	assert_null(strstr(s, "ridge"));
	assert_null(strstr(s, "DRAM"));
	assert_int_equal(count(s, "<line class=\"roof\""), 1);
	/* y: 10^14 on a log axis 10^12..10^15 from 384 up to 28 px */
	assert_non_null(strstr(s, "<line class=\"roof\" x1=\"72.0\" y1=\"146.7\" x2=\"610.0\" "
				  "y2=\"146.7\">"));
	free(s);
	doc_free(&doc);
}

static void top_bars_give_each_segment_its_share(void **state)
{
	(void)state;
	struct kp_doc doc;
	doc_init(&doc, "t", 0);
	struct kp_chart *ch = doc_chart(&doc, "top", CHART_TOP, "top", "Top");
	int l = chart_lane(&doc, ch, "aten::mm");
	int a = chart_series(ch, "gemm"), b = chart_series(ch, "other");
	chart_span(&doc, ch, l, a, 0, 3000, 0, "sm90_gemm");
	chart_span(&doc, ch, l, b, 3000, 4000, 0, "copy");
	char *s = draw(ch, 0);
	assert_non_null(
		strstr(s, "<title>aten::mm\nsm90_gemm: 3.000 us (75.0% of the op)</title>"));
	assert_non_null(strstr(s, "<title>aten::mm\ncopy: 1.000 us (25.0% of the op)</title>"));
	assert_non_null(strstr(s, "fill-opacity=\"0.6\"")); /* alternate segments are lighter */
	assert_non_null(strstr(s, ">4.000 us</text>"));     /* the lane's total */
	assert_non_null(strstr(s, "GPU time (us)"));
	free(s);
	doc_free(&doc);
}

static void waterfall_colours_regressions_and_improvements(void **state)
{
	(void)state;
	struct kp_doc doc;
	doc_init(&doc, "t", 0);
	struct kp_chart *ch = doc_chart(&doc, "waterfall", CHART_WATERFALL, "waterfall",
					   "Waterfall");
	chart_point(&doc, ch, 10e6, 0, 0, 0, "base", NULL);
	chart_point(&doc, ch, 2e6, 0, 0, 1, "gemm", NULL);
	chart_point(&doc, ch, -1e6, 0, 0, 2, "relu", NULL);
	chart_point(&doc, ch, 11e6, 0, 0, 0, "new", NULL);
	char *s = draw(ch, 0);
	assert_int_equal(count(s, "<rect class=\"tot\""), 2);
	assert_int_equal(count(s, "<rect class=\"bad\""), 1);
	assert_int_equal(count(s, "<rect class=\"good\""), 1);
	assert_non_null(strstr(s, "<title>gemm: +2.000 ms</title>"));
	assert_non_null(strstr(s, "<title>relu: -1.000 ms</title>"));
	assert_non_null(strstr(s, "<title>new: 11.000 ms</title>"));
	assert_non_null(strstr(s, "axis does not start at 0")); /* 10 ms base, 1-2 ms deltas */
	free(s);
	/* one point is not a comparison */
	ch->npts = 1;
	s = draw(ch, 0);
	assert_non_null(strstr(s, ">no data</text>"));
	free(s);
	doc_free(&doc);
}

/*
 * waterfall's steps: the axis spans every running total and both totals (wf_range), each
 * delta starts where the last one ended (wf_span), connectors join consecutive deltas only,
 * and values carry their sign; a point's own tip replaces the default one (wf_row).
 */
static void waterfall_rows_walk_the_running_total(void **state)
{
	(void)state;
	struct kp_doc doc;
	doc_init(&doc, "t", 0);
	struct kp_chart *ch = doc_chart(&doc, "waterfall", CHART_WATERFALL, "waterfall",
					   "Waterfall");
	chart_point(&doc, ch, 10e6, 0, 0, 0, "base", NULL);
	chart_point(&doc, ch, 2e6, 0, 0, 1, "gemm", NULL);
	chart_point(&doc, ch, -1e6, 0, 0, 2, "relu", NULL);
	chart_point(&doc, ch, 0.5e6, 0, 0, 3, "copy", "copy: its own tip");
	chart_point(&doc, ch, 9.5e6, 0, 0, 0, "new", NULL);
	char *s = draw(ch, 0);
	/* axis 9.5 ms (the new total) - 0.375 ms .. 12 ms + 0.375 ms over pixels 250..670 */
	assert_non_null(
		strstr(s,
		       "<rect class=\"good\" x=\"492.3\" y=\"75\" width=\"129.2\" height=\"16\">"));
	assert_int_equal(count(s, "</rect><line class=\"grid\""), 2); /* connectors */
	assert_non_null(strstr(s, ">+2.000 ms</text>"));
	assert_non_null(strstr(s, ">-1.000 ms</text>"));
	assert_non_null(strstr(s, ">9.500 ms</text>"));
	assert_non_null(strstr(s, "<title>copy: its own tip</title>"));
	assert_null(strstr(s, "<title>copy: +500.000 us</title>"));
	free(s);
	doc_free(&doc);
}

static void dumbbell_marks_faster_and_slower_rows(void **state)
{
	(void)state;
	struct kp_doc doc;
	doc_init(&doc, "t", 0);
	struct kp_chart *ch = doc_chart(&doc, "dumbbell", CHART_DUMBBELL, "dumbbell", "TFLOP/s");
	chart_point(&doc, ch, 100e12, 150e12, 1, 0, "gemm", NULL);
	chart_point(&doc, ch, 80e12, 40e12, 1, 0, "conv", NULL);
	char *s = draw(ch, 0);
	assert_non_null(strstr(s, "<title>gemm: 100.0 -&gt; 150.0 TFLOP/s (1.50x)</title>"));
	assert_non_null(strstr(s, "<title>conv: 80.0 -&gt; 40.0 TFLOP/s (0.50x)</title>"));
	/* the legend's circles plus one per row */
	assert_int_equal(count(s, "<circle class=\"good\""), 2);
	assert_int_equal(count(s, "<circle class=\"bad\""), 2);
	assert_int_equal(count(s, "<circle class=\"base\""), 3);
	free(s);
	doc_free(&doc);
}

static void timeline_lanes_spans_and_step_marks(void **state)
{
	(void)state;
	struct kp_doc doc;
	doc_init(&doc, "t", 0);
	struct kp_chart *ch = doc_chart(&doc, "timeline", CHART_TIMELINE, "timeline",
					   "Timeline");
	ch->x1 = 2000000;
	int s7 = chart_lane(&doc, ch, "stream 7");
	chart_lane(&doc, ch, "a very long stream name indeed");
	int gemm = chart_series(ch, "gemm");
	chart_span(&doc, ch, s7, gemm, 0, 1000000, 0.5, "step 1");
	chart_mark(&doc, ch, 0, "step 1");
	chart_mark(&doc, ch, 1000, "step 2"); /* too close to label again */
	char *s = draw(ch, 0);
	assert_int_equal(count(s, "<rect class=\"lane\""), 2);
	assert_non_null(strstr(s, "<title>step 1, gemm busy 50% from 0 ns</title>"));
	assert_non_null(strstr(s, "fill-opacity=\"0.65\""));
	assert_non_null(strstr(s, ">a very long stre\xe2\x80\xa6</text>")); /* cut to 16 bytes */
	assert_int_equal(count(s, "<line class=\"step\""), 2);
	assert_int_equal(count(s, "<text class=\"sm\""), 1);
	assert_non_null(strstr(s, "time since the first GPU event (ms)"));
	free(s);
	doc_free(&doc);
}

static void free_v(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Issue 23 item 23: shortened labels stay distinct; the tail that tells them apart shows. */
static void short_labels_keep_the_distinguishing_tail(void **state)
{
	(void)state;
	/* 32 and 33 bytes, the same first 30: the old cut gave "aten::mm [4096,4096]x[4096,102…" twice */
	const char *mm[] = { "aten::mm [4096,4096]x[4096,1024]", "aten::mm [4096,4096]x[4096,10240]",
			     "aten::add", "aten::mm [1,2]x[2,3]" };
	char **v = svg_short_labels(mm, 4, 30);
	/* the heads collide; the labels first differ at byte 31 (']' vs '0'): tails from 4 bytes
	   before, byte 27, "1024]" (5 bytes) and "10240]" (6), after heads of 30 - 5 and 30 - 6 */
	assert_string_equal(v[0], "aten::mm [4096,4096]x[409\xe2\x80\xa6"
				  "1024]");
	assert_string_equal(v[1], "aten::mm [4096,4096]x[40\xe2\x80\xa6"
				  "10240]");
	assert_string_equal(v[2], "aten::add");
	assert_string_equal(v[3], "aten::mm [1,2]x[2,3]");
	free_v(v, 4);

	/* SDPA forward and backward: the same 28-byte head */
	const char *sdpa[] = {
		"aten::_scaled_dot_product_flash_attention [8,32,4096,128]",
		"aten::_scaled_dot_product_flash_attention_backward [8,32,4096,128]",
	};
	v = svg_short_labels(sdpa, 2, 28);
	/* they differ at byte 41 (' ' vs '_'): the forward's tail from byte 37 fits (20 bytes and
	   a head of 8); the backward's, 29 bytes from byte 37 or 25 from 41, leaves no 4-byte
	   head: 23 bytes from byte 41 between two ellipses */
	assert_string_equal(v[0], "aten::_s\xe2\x80\xa6tion [8,32,4096,128]");
	assert_string_equal(v[1], "aten\xe2\x80\xa6_backward [8,32,4096,12\xe2\x80\xa6");
	free_v(v, 2);

	/* a difference far from the end: a window from it; two that agree there: numbered */
	const char *mid[] = { "kernel_common_prefix_A_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
			      "kernel_common_prefix_B_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
			      "kernel_common_prefix_A_xxxxxxxxxxxxxxxxxxxyxxxxxxxxxxxxxxxxxxxx" };
	v = svg_short_labels(mid, 3, 12);
	assert_string_equal(v[0], "kern\xe2\x80\xa6"
				  "A_xxxxx\xe2\x80\xa6");
	assert_string_equal(v[1], "kern\xe2\x80\xa6"
				  "B_xxxxx\xe2\x80\xa6");
	assert_string_equal(v[2], "kernel_co\xe2\x80\xa6 #2");
	free_v(v, 3);

	/* the same full label twice is one label, shown the same; UTF-8 is cut whole */
	const char *same[] = { "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 x1",
			       "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 x1" };
	v = svg_short_labels(same, 2, 5);
	assert_string_equal(v[0], v[1]);
	assert_string_equal(v[0], "\xc3\xa9\xc3\xa9\xe2\x80\xa6");
	free_v(v, 2);

	/* labels of continuation bytes only (not UTF-8; fuzz-results): heads alike, a window
	 * that cannot start on a character; cut, never past the label's start (was a memcpy
	 * of SIZE_MAX bytes) */
	char c1[64], c2[64];
	memset(c1, 0x80, sizeof(c1) - 1), memset(c2, 0x80, sizeof(c2) - 1);
	c1[63] = c2[63] = 0, c2[40] = (char)0x81;
	const char *cont[] = { c1, c2 };
	v = svg_short_labels(cont, 2, 12);
	assert_true(strlen(v[0]) < 64 && strlen(v[1]) < 64);
	free_v(v, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(escaping_covers_markup_and_controls),
		cmocka_unit_test(only_lists_are_not_drawable),
		cmocka_unit_test(charts_without_data_draw_a_frame),
		cmocka_unit_test(standalone_svgs_carry_namespace_title_and_style),
		cmocka_unit_test(roofline_draws_roofs_ridges_and_largest_points_first),
		cmocka_unit_test(roofline_labels_its_roofs_in_the_margin),
		cmocka_unit_test(roofline_without_a_bandwidth_draws_flat_roofs),
		cmocka_unit_test(top_bars_give_each_segment_its_share),
		cmocka_unit_test(waterfall_colours_regressions_and_improvements),
		cmocka_unit_test(waterfall_rows_walk_the_running_total),
		cmocka_unit_test(dumbbell_marks_faster_and_slower_rows),
		cmocka_unit_test(timeline_lanes_spans_and_step_marks),
		cmocka_unit_test(short_labels_keep_the_distinguishing_tail),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
