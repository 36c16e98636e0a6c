/*
 * test-html.c — a document as an html page (html.c), built with doc.h: title and
 * summary, verdict banners, facts, charts (inline SVG or a list), sortable tables.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/html.h"
#include "kprof/doc.h"

static char *page(const struct kp_doc *doc)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&buf, &n);
	html_render(doc, fp);
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

static void the_page_is_self_contained_with_title_and_summary(void **state)
{
	(void)state;
	struct kp_doc doc;
	doc_init(&doc, "diff", 7);
	doc_summary(&doc, "GPU time 1 ms -> 2 ms <slower>");
	char *s = page(&doc);
	assert_true(
		!strncmp(s,
			 "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">",
			 69));
	assert_non_null(
		strstr(s, "<title>kprof diff: GPU time 1 ms -&gt; 2 ms &lt;slower&gt;</title>"));
	assert_non_null(strstr(
		s,
		"<header><h1>kprof diff</h1>\n<p class=\"sum\">GPU time 1 ms -&gt; 2 ms &lt;slower&gt;</p>"));
	assert_non_null(strstr(s, ".s0{fill:")); /* the chart stylesheet is inline */
	assert_non_null(strstr(s, "//<![CDATA[\n"));
	assert_null(strstr(s, "src=\"")); /* nothing fetched */
	assert_null(strstr(s, "href=\""));
	assert_null(strstr(s, "<table")); /* no facts, no tables */
	assert_true(strlen(s) > 20 && !strcmp(s + strlen(s) - 16, "</body>\n</html>\n"));
	free(s);
	doc_free(&doc);
	doc_init(&doc, "analyze", 8); /* no summary: no paragraph */
	s = page(&doc);
	assert_non_null(strstr(s, "<title>kprof analyze</title>"));
	assert_null(strstr(s, "class=\"sum\""));
	free(s);
	doc_free(&doc);
}

static void toned_facts_become_banners_and_facts_a_table(void **state)
{
	(void)state;
	struct kp_doc doc;
	doc_init(&doc, "diff", 7);
	doc_fact_text(&doc, "gate", NULL, "--fail-above 5%: tripped by 1 row");
	doc_fact_tone(&doc, TONE_BAD);
	doc_fact_pct(&doc, "noise", "noise_pct", 1.84);
	doc_fact_tone(&doc, TONE_WARN);
	doc_fact_time(&doc, "span", "span_ns", 4812000);
	doc_fact_count(&doc, NULL, "json_only", 3); /* no key: not shown */
	doc_object(&doc, "nested");
	doc_fact_count(&doc, "inner", "inner", 4); /* inside an object: json only */
	doc_end(&doc);
	char *s = page(&doc);
	assert_non_null(strstr(
		s,
		"<p class=\"verdict bad\" role=\"status\">&#10007; FAILED gate: --fail-above 5%: tripped by 1 row</p>"));
	assert_int_equal(count(s, "class=\"verdict"), 1); /* a warning is no verdict */
	assert_non_null(strstr(s, "<table class=\"facts\">\n<tr><th>gate</th><td class=\"bad\">"));
	assert_non_null(strstr(s, "<tr><th>noise</th><td class=\"warn\">1.8%</td></tr>"));
	assert_non_null(strstr(s, "<tr><th>span</th><td>4.812 ms</td></tr>"));
	assert_null(strstr(s, "json_only"));
	assert_null(strstr(s, "inner"));
	free(s);
	doc_free(&doc);

	doc_init(&doc, "diff", 7);
	doc_fact_text(&doc, "gate", NULL, "passed");
	doc_fact_tone(&doc, TONE_GOOD);
	s = page(&doc);
	assert_non_null(
		strstr(s,
		       "<p class=\"verdict good\" role=\"status\">&#10003; PASSED gate: passed</p>"));
	free(s);
	doc_free(&doc);
}

static void charts_draw_inline_or_as_lists(void **state)
{
	(void)state;
	struct kp_doc doc;
	doc_init(&doc, "diff", 7);
	struct kp_chart *w = doc_chart(&doc, "waterfall", CHART_WATERFALL, "waterfall",
					  "Where <time> went");
	w->note = "base & new";
	chart_point(&doc, w, 1e6, 0, 0, 0, "base", NULL);
	chart_point(&doc, w, 2e6, 0, 0, 0, "new", NULL);
	struct kp_chart *l = doc_chart(&doc, "new_rows", CHART_LIST, "new", "New kernels");
	chart_point(&doc, l, 1500, 0, 0, 0, "k<1>", NULL);
	doc_chart(&doc, "gone_rows", CHART_LIST, "gone", "Gone kernels");
	doc_object(&doc, "hidden");
	doc_chart(&doc, "inner", CHART_LIST, "inner", "Inner");
	doc_end(&doc);
	char *s = page(&doc);
	assert_non_null(strstr(
		s,
		"<section id=\"waterfall\"><h2>Where &lt;time&gt; went</h2>\n<p class=\"note\">base &amp; new</p>\n<figure>\n<svg class=\"kc\" id=\"chart-waterfall\""));
	assert_null(
		strstr(strstr(s, "<figure>"), "xmlns=\"http://www.w3.org/2000/svg\"")); /* inline */
	assert_non_null(strstr(
		s,
		"<section id=\"new\"><h2>New kernels</h2>\n<ul class=\"list\">\n<li>k&lt;1&gt; <span class=\"note\">1.500 us</span></li>\n</ul>"));
	assert_non_null(
		strstr(s,
		       "<section id=\"gone\"><h2>Gone kernels</h2>\n<p class=\"note\">none</p>"));
	assert_null(strstr(s, "id=\"inner\""));
	free(s);
	doc_free(&doc);
}

static void tables_sort_by_value_and_show_human_columns(void **state)
{
	(void)state;
	struct kp_col cols[] = { { "Time", "time_ns", COL_BOTH, 0 },
				 { NULL, "calls", COL_MACHINE, 0 },
				 { "Ratio", "ratio", COL_BOTH, 0 },
				 { "Name", "name", COL_BOTH, 1 } };
	struct kp_doc doc;
	doc_init(&doc, "analyze", 8);
	struct kp_table *tb = doc_table(&doc, "rows", cols, 4);
	struct kp_cell *c = doc_row(tb);
	doc_cell_int(tb, &c[0], 4812000, "4.812 ms");
	doc_cell_int(tb, &c[1], 7, NULL);
	doc_cell_num(tb, &c[2], 1.5, "1.500x");
	c[2].tone = TONE_BAD;
	doc_cell_str(tb, &c[3], "void k<float>(\"x\")", "k<float>");
	c = doc_row(tb);
	doc_cell_num(tb, &c[2], -1, NULL); /* unknown: empty data-v, sorts last */
	doc_cell_str(tb, &c[3], "copy", NULL);
	doc_table(&doc, "empty", cols, 4); /* no rows: no section */
	char *s = page(&doc);
	assert_non_null(strstr(
		s,
		"<section><h2>rows (2)</h2>\n<div class=\"wrap\"><table class=\"rows\"><thead><tr>"
		"<th class=\"num\" title=\"click to sort\">Time</th><th class=\"num\" title=\"click to sort\">Ratio</th>"
		"<th class=\"txt name\" title=\"click to sort\">Name</th></tr></thead>"));
	/* issue 23 item 23: the name column, last, stays at the right edge of a wide table's
	   scroll box (the page is 1100 px wide at most), over the row's own background */
	assert_non_null(strstr(s, "table.rows th.name,table.rows td.name{position:sticky;right:0;"
				  "background:var(--bg);"));
	assert_non_null(strstr(s, "table.rows tbody tr:nth-child(even) td.name{background:var(--row)}"));
	assert_non_null(strstr(
		s,
		"<tr><td class=\"num\" data-v=\"4812000\">4.812 ms</td>"
		"<td class=\"num bad\" data-v=\"1.5\">1.500x</td>"
		"<td class=\"txt name\" title=\"void k&lt;float&gt;(&quot;x&quot;)\">k&lt;float&gt;</td></tr>"));
	assert_non_null(strstr(
		s,
		"<td class=\"num\" data-v=\"\">-</td><td class=\"txt name\" title=\"copy\">copy</td>"));
	assert_null(strstr(s, "data-v=\"7\"")); /* machine-only column */
	assert_null(strstr(s, "empty ("));
	assert_non_null(strstr(s, "addEventListener('click'"));
	free(s);
	doc_free(&doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_page_is_self_contained_with_title_and_summary),
		cmocka_unit_test(toned_facts_become_banners_and_facts_a_table),
		cmocka_unit_test(charts_draw_inline_or_as_lists),
		cmocka_unit_test(tables_sort_by_value_and_show_human_columns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
