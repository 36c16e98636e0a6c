/*
 * test-doc.c — the document (doc.c): facts and their text, json nesting, tables
 * and cell setters, charts and their appenders.
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

#include "kprof/doc.h"

static const char *vtext(const struct kp_doc *doc, size_t i, char *buf, size_t cap)
{
	return doc_val_text(&doc->items[i].v, buf, cap);
}

/* doc_cell_text (moved from table.c so html.c needs no table.c): the text of each type */
static void cell_text_reads_as_its_type(void **state)
{
	(void)state;
	char buf[32];
	struct kp_cell c = { .type = CELL_INT, .i = -42 };
	assert_string_equal(doc_cell_text(&c, buf, sizeof(buf)), "-42");
	c = (struct kp_cell){ .type = CELL_NUM, .d = 2.25 };
	assert_string_equal(doc_cell_text(&c, buf, sizeof(buf)), "2.2");
	c = (struct kp_cell){ .type = CELL_STR, .s = "aten::mm" };
	assert_string_equal(doc_cell_text(&c, buf, sizeof(buf)), "aten::mm");
	c = (struct kp_cell){ .type = CELL_NULL };
	assert_string_equal(doc_cell_text(&c, buf, sizeof(buf)), "-");
	c = (struct kp_cell){ .type = CELL_INT, .i = 4812, .human = "4.812 us" };
	assert_string_equal(doc_cell_text(&c, buf, sizeof(buf)), "4.812 us");
}

static void facts_read_as_their_type(void **state)
{
	(void)state;
	struct kp_doc doc;
	char buf[64];
	doc_init(&doc, "analyze", 8);
	assert_string_equal(doc.command, "analyze");
	assert_int_equal(doc.key_width, 8);
	doc_fact_text(&doc, "device", "device", "H100");
	doc_fact_count(&doc, "kernels", "kernels", 1234);
	doc_fact_time(&doc, "span", "span_ns", 4812000);
	doc_fact_num(&doc, "ratio", "ratio", 0.25);
	doc_fact_pct(&doc, "noise", "noise_pct", 1.84);
	doc_fact_bool(&doc, "gated", "gated", 7);
	doc_fact_null(&doc, "peak", "peak");
	doc_fact_textf(&doc, "x", NULL, "%d-%s", 3, "b");
	doc_fact_bool(&doc, "off", "off", 0);
	assert_int_equal(doc.nitems, 9);
	assert_string_equal(vtext(&doc, 0, buf, sizeof(buf)), "H100");
	assert_string_equal(vtext(&doc, 1, buf, sizeof(buf)), "1234");
	assert_string_equal(vtext(&doc, 2, buf, sizeof(buf)), "4.812 ms");
	assert_string_equal(vtext(&doc, 3, buf, sizeof(buf)), "0.25");
	assert_string_equal(vtext(&doc, 4, buf, sizeof(buf)), "1.8%");
	assert_int_equal(doc.items[5].v.i, 1); /* any non-zero is true */
	assert_string_equal(vtext(&doc, 5, buf, sizeof(buf)), "yes");
	assert_string_equal(vtext(&doc, 6, buf, sizeof(buf)), "-");
	assert_string_equal(vtext(&doc, 7, buf, sizeof(buf)), "3-b");
	assert_null(doc.items[7].jkey);
	assert_string_equal(vtext(&doc, 8, buf, sizeof(buf)), "no");
	doc_free(&doc);
	assert_int_equal(doc.nitems, 0);
	assert_null(doc.items);
}

static void non_finite_numbers_and_null_text_are_null_facts(void **state)
{
	(void)state;
	struct kp_doc doc;
	doc_init(&doc, "t", 0);
	doc_fact_num(&doc, "a", "a", NAN);
	doc_fact_pct(&doc, "b", "b", INFINITY);
	doc_fact_rate(&doc, "c", "c", -INFINITY, "B/s");
	doc_fact_text(&doc, "d", "d", NULL);
	doc_fact_rate(&doc, "e", "e", 3.4e12, "B/s");
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(doc.items[i].v.type, VAL_NULL);
	assert_int_equal(doc.items[4].v.type, VAL_RATE);
	assert_string_equal(doc.items[4].v.s, "B/s");
	doc_free(&doc);
}

static void text_facts_are_copied_and_cut_sequences_dropped(void **state)
{
	(void)state;
	struct kp_doc doc;
	char name[16];
	doc_init(&doc, "t", 0);
	strcpy(name, "gemm");
	doc_fact_text(&doc, "k", "k", name);
	strcpy(name, "XXXX");
	assert_string_equal(doc.items[0].v.s, "gemm");
	/* "ab" then the first two bytes of U+20AC (e2 82 ac): the partial sequence goes */
	doc_fact_text(&doc, "k", "k", "ab\xe2\x82");
	assert_string_equal(doc.items[1].v.s, "ab");
	doc_fact_text(&doc, "k", "k", "ab\xe2\x82\xac");
	assert_string_equal(doc.items[2].v.s, "ab\xe2\x82\xac");
	doc_summary(&doc, "%d traces", 2);
	assert_string_equal(doc.summary, "2 traces");
	doc_free(&doc);
}

static void facts_inside_objects_lose_their_table_key(void **state)
{
	(void)state;
	struct kp_doc doc;
	doc_init(&doc, "t", 0);
	doc_fact_count(&doc, "top", "top", 1);
	doc_object(&doc, "obj");
	doc_fact_count(&doc, "inner", "inner", 2);
	doc_array(&doc, "arr", 1);
	doc_fact_count(&doc, "elem", NULL, 3);
	doc_end(&doc);
	doc_end(&doc);
	doc_end(&doc); /* unbalanced: ignored */
	assert_int_equal(doc.depth, 0);
	assert_int_equal(doc.nitems, 7);
	assert_string_equal(doc.items[0].key, "top");
	assert_int_equal(doc.items[1].type, ITEM_OBJECT);
	assert_string_equal(doc.items[1].jkey, "obj");
	assert_null(doc.items[2].key);
	assert_string_equal(doc.items[2].jkey, "inner");
	assert_int_equal(doc.items[3].type, ITEM_ARRAY);
	assert_int_equal(doc.items[3].lines, 1);
	assert_null(doc.items[4].key);
	assert_int_equal(doc.items[5].type, ITEM_END);
	assert_int_equal(doc.items[6].type, ITEM_END);
	doc_free(&doc);
}

static void tone_marks_only_the_last_fact(void **state)
{
	(void)state;
	struct kp_doc doc;
	doc_init(&doc, "t", 0);
	doc_fact_tone(&doc, TONE_BAD); /* nothing yet: no-op */
	doc_fact_text(&doc, "verdict", "verdict", "regression");
	doc_fact_tone(&doc, TONE_BAD);
	doc_object(&doc, "o");
	doc_fact_tone(&doc, TONE_GOOD); /* last item is an object: no-op */
	doc_end(&doc);
	assert_int_equal(doc.items[0].tone, TONE_BAD);
	assert_int_equal(doc.items[1].tone, TONE_NONE);
	doc_free(&doc);
}

static void tables_copy_columns_and_rows_start_null(void **state)
{
	(void)state;
	struct kp_col cols[] = { { "Time", "time_ns", COL_BOTH, 0 },
				 { "Name", "name", COL_BOTH, 1 } };
	struct kp_doc doc;
	doc_init(&doc, "t", 0);
	struct kp_table *tb = doc_table(&doc, "rows", cols, 2);
	doc_col_show(tb, 0, COL_MACHINE);
	doc_col_title(tb, 1, "Kernel");
	assert_int_equal(cols[0].where, COL_BOTH); /* the caller's table is untouched */
	assert_string_equal(cols[1].title, "Name");
	assert_int_equal(tb->cols[0].where, COL_MACHINE);
	assert_string_equal(tb->cols[1].title, "Kernel");
	assert_int_equal(doc.items[0].type, ITEM_TABLE);
	assert_ptr_equal(doc.items[0].table, tb);
	/* more rows than the first allocation: cells stay addressable row-major */
	for (int r = 0; r < 100; r++) {
		struct kp_cell *c = doc_row(tb);
		assert_int_equal(c[0].type, CELL_NULL);
		assert_int_equal(c[1].type, CELL_NULL);
		doc_cell_int(tb, &c[0], r, NULL);
	}
	assert_int_equal(tb->nrows, 100);
	assert_int_equal(tb->cells[99 * 2].i, 99);
	assert_int_equal(tb->cells[64 * 2].i, 64);
	doc_free(&doc);
}

static void cell_setters_null_what_they_cannot_show(void **state)
{
	(void)state;
	struct kp_col cols[] = { { "A", "a", COL_BOTH, 0 } };
	struct kp_doc doc;
	char human[8] = "1.0 us";
	doc_init(&doc, "t", 0);
	struct kp_table *tb = doc_table(&doc, "r", cols, 1);
	struct kp_cell *c = doc_row(tb);
	doc_cell_num(tb, c, -1, NULL);
	assert_int_equal(c->type, CELL_NULL);
	doc_cell_num(tb, c, NAN, "n/a");
	assert_int_equal(c->type, CELL_NULL);
	assert_string_equal(c->human, "n/a");
	doc_cell_num(tb, c, 2.5, human);
	human[0] = 'X';
	assert_int_equal(c->type, CELL_NUM);
	assert_true(c->d == 2.5);
	assert_string_equal(c->human, "1.0 us"); /* copied */
	doc_cell_signed(tb, c, -3.0, NULL);
	assert_int_equal(c->type, CELL_NUM);
	assert_true(c->d == -3.0);
	assert_null(c->human);
	doc_cell_signed(tb, c, INFINITY, NULL);
	assert_int_equal(c->type, CELL_NULL);
	const char *s = "gemm";
	doc_cell_str(tb, c, s, NULL);
	assert_int_equal(c->type, CELL_STR);
	assert_ptr_equal(c->s, s); /* borrowed */
	doc_cell_str(tb, c, NULL, NULL);
	assert_int_equal(c->type, CELL_NULL);
	/* doc_cell_fixed: the value kept, shown scaled with its decimals, "-" below 0 */
	doc_cell_fixed(tb, c, 1.25e12, 1e12, 1);
	assert_int_equal(c->type, CELL_NUM);
	assert_true(c->d == 1.25e12);
	assert_string_equal(c->human, "1.2");
	doc_cell_fixed(tb, c, 0.5, 1, 3);
	assert_string_equal(c->human, "0.500");
	doc_cell_fixed(tb, c, -1, 1e9, 1);
	assert_int_equal(c->type, CELL_NULL);
	assert_string_equal(c->human, "-");
	doc_free(&doc);
}

static void chart_series_are_unique_and_capped(void **state)
{
	(void)state;
	struct kp_doc doc;
	doc_init(&doc, "t", 0);
	struct kp_chart *ch = doc_chart(&doc, "roofline", CHART_ROOFLINE, "roofline",
					   "Roofline");
	assert_int_equal(chart_series(ch, "gemm"), 0);
	assert_int_equal(chart_series(ch, "conv"), 1);
	assert_int_equal(chart_series(ch, "gemm"), 0);
	static const char *names[] = { "s2",  "s3",  "s4",  "s5",  "s6",  "s7",  "s8",  "s9",
				       "s10", "s11", "s12", "s13", "s14", "s15", "s16", "s17" };
	for (int i = 0; i < 14; i++)
		assert_int_equal(chart_series(ch, names[i]), i + 2);
	assert_int_equal(ch->nseries, CHART_SERIES_MAX);
	/* full: the last index, and no new entry */
	assert_int_equal(chart_series(ch, names[15]), CHART_SERIES_MAX - 1);
	assert_int_equal(ch->nseries, CHART_SERIES_MAX);
	doc_free(&doc);
}

static void chart_appenders_copy_strings_and_grow(void **state)
{
	(void)state;
	struct kp_doc doc;
	char label[16];
	doc_init(&doc, "t", 0);
	doc_chart(&doc, "a", CHART_LIST, "first", "First");
	struct kp_chart *ch = doc_chart(&doc, "b", CHART_TIMELINE, "timeline", "Timeline");
	for (int i = 0; i < 40; i++) {
		snprintf(label, sizeof(label), "p%d", i);
		chart_point(&doc, ch, i, 2.0 * i, 1, 0, label, i == 0 ? "tip" : NULL);
		chart_span(&doc, ch, i % 2, 1, i * 10, i * 10 + 5, 0.5, label);
		chart_mark(&doc, ch, i, label);
		assert_int_equal(chart_lane(&doc, ch, label), i);
	}
	strcpy(label, "gone");
	assert_int_equal(ch->npts, 40);
	assert_int_equal(ch->nspans, 40);
	assert_int_equal(ch->nmarks, 40);
	assert_int_equal(ch->nlanes, 40);
	assert_string_equal(ch->pts[39].label, "p39");
	assert_true(ch->pts[39].y == 78.0);
	assert_string_equal(ch->pts[0].tip, "tip");
	assert_null(ch->pts[1].tip);
	assert_int_equal(ch->spans[17].lane, 1);
	assert_int_equal(ch->spans[17].t1, 175);
	assert_string_equal(ch->marks[20].label, "p20");
	assert_string_equal(ch->lanes[33], "p33");
	assert_ptr_equal(doc_find_chart(&doc, "timeline"), ch);
	assert_non_null(doc_find_chart(&doc, "first"));
	assert_null(doc_find_chart(&doc, "roofline"));
	doc_free(&doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(facts_read_as_their_type),
		cmocka_unit_test(non_finite_numbers_and_null_text_are_null_facts),
		cmocka_unit_test(text_facts_are_copied_and_cut_sequences_dropped),
		cmocka_unit_test(facts_inside_objects_lose_their_table_key),
		cmocka_unit_test(tone_marks_only_the_last_fact),
		cmocka_unit_test(tables_copy_columns_and_rows_start_null),
		cmocka_unit_test(cell_setters_null_what_they_cannot_show),
		cmocka_unit_test(cell_text_reads_as_its_type),
		cmocka_unit_test(chart_series_are_unique_and_capped),
		cmocka_unit_test(chart_appenders_copy_strings_and_grow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
