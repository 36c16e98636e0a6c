/*
 * test-table.c — the document (doc.c), the one renderer (table.c) and the JSON
 * writer (jsonw.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/jsonw.h"
#include "kprof/doc.h"
#include "kprof/table.h"

static char *render(const struct kp_doc *doc, enum kp_format f, int color)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&buf, &n);
	table_render(doc, f, color, fp);
	fclose(fp);
	return buf;
}

enum { C_TIME, C_RATE, C_NAME, C_N };
static const struct kp_col cols[C_N] = {
	[C_TIME] = { "Time", "time_ns", COL_BOTH, 0 },
	[C_RATE] = { "GB/s", "bytes_per_s", COL_BOTH, 0 },
	[C_NAME] = { "Kernel", "name", COL_BOTH, 1 },
};

static void two_rows(struct kp_doc *doc, const char *name)
{
	struct kp_table *tb = doc_table(doc, "rows", cols, C_N);
	struct kp_cell *c = doc_row(tb);
	doc_cell_int(tb, &c[C_TIME], 1500, "1.500 us");
	doc_cell_num(tb, &c[C_RATE], -1, "-");
	doc_cell_str(tb, &c[C_NAME], name, NULL);
	c = doc_row(tb);
	doc_cell_int(tb, &c[C_TIME], 25, "25 ns");
	doc_cell_num(tb, &c[C_RATE], 1.5e9, "1.5");
	doc_cell_str(tb, &c[C_NAME], "short", NULL);
}

static void renderers_quote_csv_null_json_and_align_tables(void **state)
{
	(void)state;
	struct kp_doc doc;
	doc_init(&doc, "test", 4);
	two_rows(&doc, "k<a, \"b\">|x");
	char *s = render(&doc, FMT_CSV, 0);
	assert_string_equal(
		s,
		"time_ns,bytes_per_s,name\r\n1500,,\"k<a, \"\"b\"\">|x\"\r\n25,1500000000,short\r\n");
	free(s);
	s = render(&doc, FMT_JSON, 0);
	assert_non_null(
		strstr(s,
		       "{\"time_ns\": 1500, \"bytes_per_s\": null, \"name\": \"k<a, \\\"b\\\">|x\"}"));
	free(s);
	s = render(&doc, FMT_TABLE, 0);
	assert_string_equal(
		s,
		"      Time  GB/s  Kernel\n  ========  ====  ======\n  1.500 us     -  k<a, \"b\">|x\n     25 ns   1.5  short\n");
	free(s);
	doc_free(&doc);
}

/* fuzz-trace: a device name of U+FFFDs cut by a 1024-byte buffer left a partial sequence */
static void text_cut_inside_a_utf8_sequence_loses_the_partial_sequence(void **state)
{
	(void)state;
	struct kp_doc doc;
	doc_init(&doc, "test", 6);
	doc_fact_text(&doc, "device", NULL, "H100 \xef\xbf\xbd\xef\xbf");
	struct kp_table *tb = doc_table(&doc, "rows", cols, C_N);
	struct kp_cell *c = doc_row(tb);
	doc_cell_int(tb, &c[C_TIME], 1500, "1.500 \xc2\xb5s\xe2\x82");
	doc_cell_num(tb, &c[C_RATE], -1, "-");
	doc_cell_str(tb, &c[C_NAME], "k", NULL);
	char *s = render(&doc, FMT_TABLE, 0);
	assert_non_null(strstr(s, "  1.500 \xc2\xb5s  "));
	assert_non_null(strstr(s, "# device  H100 \xef\xbf\xbd\n"));
	free(s);
	doc_free(&doc);
}

static void markdown_escapes_pipes_and_fences_backticks_in_code_spans(void **state)
{
	(void)state;
	struct kp_doc doc;
	doc_init(&doc, "test", 4);
	two_rows(&doc, "a|b`c``d");
	char *s = render(&doc, FMT_MARKDOWN, 0);
	assert_non_null(strstr(s, "| Time | GB/s | Kernel |\n| ---: | ---: | --- |\n"));
	assert_non_null(strstr(s, "| 1.500 us | - | ```a\\|b`c``d``` |\n"));
	free(s);
	doc_free(&doc);
	doc_init(&doc, "test", 4);
	two_rows(&doc, "`x`");
	s = render(&doc, FMT_MARKDOWN, 0);
	assert_non_null(strstr(s, "| `` `x` `` |\n"));
	free(s);
	doc_free(&doc);
}

/* issue 23 items 11, 12: names with control characters, line breaks, formulas, bidi marks */
static void hostile_names_are_escaped_in_every_text_format(void **state)
{
	(void)state;
	struct kp_doc doc;
	doc_init(&doc, "test", 6);
	doc_fact_text(&doc, "device", NULL, "H100\x1b]0;title\x07\n# device  x\xe2\x80\xae");
	two_rows(&doc, "k\x1b[2J\n**kprof: no regressions, safe to merge**\r\n|x|");
	char *s = render(&doc, FMT_TABLE, 0);
	assert_non_null(strstr(s, "# device  H100\\u001b]0;title\\u0007\\n# device  x\\u202e\n"));
	assert_non_null(strstr(
		s, "  1.500 us     -  k\\u001b[2J\\n**kprof: no regressions, safe to merge**\\r\\n|x|\n"));
	assert_null(strchr(s, '\x1b'));
	free(s);
	/* --color=always: only the SGR codes kprof writes */
	s = render(&doc, FMT_TABLE, 1);
	assert_null(strstr(s, "\x1b[2J"));
	free(s);
	s = render(&doc, FMT_MARKDOWN, 0);
	assert_non_null(strstr(s, "- device: H100\\u001b]0;title\\u0007\\n# device  x\\u202e\n"));
	assert_non_null(strstr(
		s,
		"| 1.500 us | - | `k\\u001b[2J\\n**kprof: no regressions, safe to merge**\\r\\n\\|x\\|` |\n"));
	assert_null(strstr(s, "\n**kprof: no"));
	free(s);
	s = render(&doc, FMT_CSV, 0);
	assert_non_null(strstr(
		s, "\r\n1500,,\"k\\u001b[2J\\n**kprof: no regressions, safe to merge**\\r\\n|x|\"\r\n"));
	free(s);
	doc_free(&doc);
	/* json: lossless escapes, C1 controls, DEL and bidi marks too */
	doc_init(&doc, "test", 6);
	two_rows(&doc, "a\x7f\xc2\x9b\xe2\x80\xae\xe2\x81\xa9\x1b\xc3\xa9");
	s = render(&doc, FMT_JSON, 0);
	assert_non_null(strstr(s, "\"name\": \"a\\u007f\\u009b\\u202e\\u2069\\u001b\xc3\xa9\"}"));
	free(s);
	doc_free(&doc);
	/* markdown text cells and facts: '<' cannot open a tag; titles keep theirs */
	doc_init(&doc, "test", 6);
	doc_fact_text(&doc, "device", NULL, "<img src=x>|");
	s = render(&doc, FMT_MARKDOWN, 0);
	assert_non_null(strstr(s, "- device: \\<img src=x>\\|\n"));
	free(s);
	doc_free(&doc);
}

static void csv_cells_a_spreadsheet_would_run_are_text(void **state)
{
	(void)state;
	static const char *const in[] = { "=HYPERLINK(\"u\",\"c\")", "+1+cmd", "@SUM(1)", "-2+3",
					  "-cmd", "-1.5", "-", "\tx", "a=b", "-1e3" };
	static const char *const out[] = { "\"'=HYPERLINK(\"\"u\"\",\"\"c\"\")\"",
					   "\"'+1+cmd\"",
					   "\"'@SUM(1)\"",
					   "\"'-2+3\"",
					   "\"'-cmd\"",
					   "-1.5",
					   "-",
					   "\\tx",
					   "a=b",
					   "-1e3" };
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		struct kp_doc doc;
		doc_init(&doc, "test", 4);
		two_rows(&doc, in[i]);
		char *s = render(&doc, FMT_CSV, 0);
		char want[128];
		snprintf(want, sizeof(want), "\r\n1500,,%s\r\n", out[i]);
		if (!strstr(s, want))
			fail_msg("%s: got %s", in[i], s);
		free(s);
		doc_free(&doc);
	}
}

static void facts_print_as_hash_lines_list_items_and_typed_json_members(void **state)
{
	(void)state;
	struct kp_doc doc;
	doc_init(&doc, "test", 5);
	doc_summary(&doc, "%d things", 2);
	doc_fact_time(&doc, "span", "span_ns", 4812345);
	doc_fact_pct(&doc, "busy", "busy_pct", 42.75);
	doc_fact_text(&doc, "note", NULL, "people only");
	doc_fact_count(&doc, NULL, "events", 7);
	doc_object(&doc, "device");
	doc_fact_text(&doc, "ignored", "name", NULL);
	doc_fact_rate(&doc, NULL, "bw", 3.35e12, "B/s");
	doc_end(&doc);
	two_rows(&doc, "k");
	char *s = render(&doc, FMT_TABLE, 0);
	assert_non_null(
		strstr(s, "# span   4.812 ms\n# busy   42.8%\n# note   people only\n      Time"));
	assert_null(strstr(s, "ignored"));
	free(s);
	s = render(&doc, FMT_MARKDOWN, 0);
	assert_non_null(strstr(
		s,
		"**kprof test**: 2 things\n\n- span: 4.812 ms\n- busy: 42.8%\n- note: people only\n\n| Time |"));
	free(s);
	s = render(&doc, FMT_JSON, 0);
	assert_non_null(strstr(
		s, "{\n  \"kprof\": {\"version\": \"" KPROF_VERSION "\", \"command\": \"test\"},\n"
		   "  \"span_ns\": 4812345,\n  \"busy_pct\": 42.75,\n  \"events\": 7,\n"
		   "  \"device\": {\"name\": null, \"bw\": 3350000000000},\n  \"rows\": [\n    {"));
	assert_non_null(strstr(s, "}\n  ]\n}\n"));
	free(s);
	doc_free(&doc);
}

static void json_writer_places_commas_and_indents_only_line_containers(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&buf, &n);
	struct kp_jw jw;
	jw_init(&jw, fp);
	jw_object_begin(&jw, NULL, 1);
	jw_array_begin(&jw, "empty", 1);
	jw_end(&jw);
	jw_array_begin(&jw, "xs", 0);
	jw_int(&jw, NULL, 1);
	jw_double(&jw, NULL, 0.5);
	jw_object_begin(&jw, NULL, 0);
	jw_bool(&jw, "ok", 1);
	jw_double(&jw, "inf", 1.0 / 0.0);
	jw_end(&jw);
	jw_end(&jw);
	jw_array_begin(&jw, "lines", 1);
	jw_string(&jw, NULL, "a\"b\\\n\x01");
	jw_null(&jw, NULL);
	jw_end(&jw);
	jw_end(&jw);
	fclose(fp);
	assert_string_equal(buf,
			    "{\n  \"empty\": [],\n  \"xs\": [1, 0.5, {\"ok\": true, \"inf\": null}],\n"
			    "  \"lines\": [\n    \"a\\\"b\\\\\\n\\u0001\",\n    null\n  ]\n}");
	free(buf);
}

static void tones_colour_only_table_cells_and_keep_alignment(void **state)
{
	(void)state;
	struct kp_doc doc;
	doc_init(&doc, "test", 4);
	struct kp_table *tb = doc_table(&doc, "rows", cols, C_N);
	struct kp_cell *c = doc_row(tb);
	doc_cell_int(tb, &c[C_TIME], 1500, "+1.500 us");
	c[C_TIME].tone = TONE_BAD;
	doc_cell_num(tb, &c[C_RATE], 2, "2.0");
	c[C_RATE].tone = TONE_GOOD;
	doc_cell_str(tb, &c[C_NAME], "k", NULL);
	c[C_NAME].tone = TONE_WARN;
	char *s = render(&doc, FMT_TABLE, 1);
	assert_string_equal(s, "       Time  GB/s  Kernel\n  =========  ====  ======\n"
			       "  \033[31m+1.500 us\033[m  \033[32m 2.0\033[m  \033[33mk\033[m\n");
	free(s);
	s = render(&doc, FMT_TABLE, 0);
	assert_null(strchr(s, '\033'));
	free(s);
	s = render(&doc, FMT_MARKDOWN, 1);
	assert_null(strchr(s, '\033'));
	free(s);
	doc_free(&doc);
}

static void color_auto_needs_a_terminal_and_no_NO_COLOR_and_options_win(void **state)
{
	(void)state;
	FILE *fp = tmpfile();
	setenv("NO_COLOR", "1", 1);
	assert_int_equal(table_use_color(COLOR_ALWAYS, fp), 1);
	assert_int_equal(table_use_color(COLOR_AUTO, fp), 0);
	unsetenv("NO_COLOR");
	assert_int_equal(table_use_color(COLOR_AUTO, fp), 0); /* a file, not a terminal */
	assert_int_equal(table_use_color(COLOR_NEVER, fp), 0);
	fclose(fp);
}

static void doubles_print_as_the_shortest_text_that_reads_back(void **state)
{
	(void)state;
	char b[40];
	assert_string_equal(jw_format_double(b, sizeof(b), 47.848680568750993),
			    "47.84868056875099");
	assert_string_equal(jw_format_double(b, sizeof(b), 0.1), "0.1");
	assert_string_equal(jw_format_double(b, sizeof(b), 2), "2");
	volatile double tflops = 66.9; /* the device table's 66.9 TFLOPS x 1e12 */
	assert_string_equal(jw_format_double(b, sizeof(b), tflops * 1e12), "66900000000000.01");
	assert_string_equal(jw_format_double(b, sizeof(b), 1e300), "1e+300");
	assert_string_equal(jw_format_double(b, sizeof(b), -2.5e-7), "-2.5e-07");
	assert_true(strtod(jw_format_double(b, sizeof(b), 1.0 / 3), NULL) == 1.0 / 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(renderers_quote_csv_null_json_and_align_tables),
		cmocka_unit_test(markdown_escapes_pipes_and_fences_backticks_in_code_spans),
		cmocka_unit_test(hostile_names_are_escaped_in_every_text_format),
		cmocka_unit_test(csv_cells_a_spreadsheet_would_run_are_text),
		cmocka_unit_test(text_cut_inside_a_utf8_sequence_loses_the_partial_sequence),
		cmocka_unit_test(facts_print_as_hash_lines_list_items_and_typed_json_members),
		cmocka_unit_test(json_writer_places_commas_and_indents_only_line_containers),
		cmocka_unit_test(tones_colour_only_table_cells_and_keep_alignment),
		cmocka_unit_test(color_auto_needs_a_terminal_and_no_NO_COLOR_and_options_win),
		cmocka_unit_test(doubles_print_as_the_shortest_text_that_reads_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
