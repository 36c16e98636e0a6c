/*
 * test-diag.c — error messages and grouped warnings: one line per kind with its count, every
 * instance with --warnings=all, the side of a diff after "warning: ", nothing with -q.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/diag.h"

/* everything diag_warn_print() writes, as one malloc'ed string */
static char *printed_as(const struct kp_warnings *w, enum kp_warn_mode mode, const char *side)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	diag_warn_print(w, mode, side, f);
	fclose(f);
	return buf;
}

static char *printed(const struct kp_warnings *w)
{
	return printed_as(w, WARN_SUMMARY, NULL);
}

static void diag_error_formats_the_message_and_status(void **state)
{
	(void)state;
	struct kp_diag d = { 0 };
	assert_int_equal(diag_error(&d, KP_BADINPUT, "%s:%d:%d: error: expected ':'", "a.json", 3,
				    7),
			 -1);
	assert_string_equal(d.msg, "a.json:3:7: error: expected ':'");
	assert_int_equal(d.status, KP_BADINPUT);
	assert_int_equal(diag_error(NULL, KP_ENV, "ignored"), -1);
}

static void warnings_print_one_line_per_kind_with_the_count_and_the_first_instance(void **state)
{
	(void)state;
	struct kp_warnings w = { 0 };
	char loc[32];
	for (int i = 0; i < 8; i++) {
		snprintf(loc, sizeof(loc), "a.json:%d:5", 10 + i);
		diag_warn_add(&w, "events without 'dur'", loc, "skipped event 'k%d' without 'dur'",
			      i);
	}
	diag_warn_add(&w, "GPU events with zero 'dur'", NULL, "zero");
	assert_int_equal(w.nkinds, 2);
	assert_int_equal(diag_warn_total(&w), 9);
	char *out = printed(&w);
	/* one line per kind: the first instance and the count */
	assert_string_equal(
		out,
		"kprof: a.json:10:5: warning: skipped event 'k0' without 'dur' (first of 8 events without 'dur')\n"
		"kprof: warning: zero\n");
	free(out);
	diag_warn_free(&w);
	assert_int_equal(w.nkinds, 0);
	assert_null(w.k);
}

/* kinds are matched by content, not by pointer: two copies of one string are one kind */
static void kinds_match_by_text(void **state)
{
	(void)state;
	struct kp_warnings w = { 0 };
	char a[] = "malformed events", b[] = "malformed events";
	diag_warn_add(&w, a, NULL, "one");
	diag_warn_add(&w, b, NULL, "two");
	assert_int_equal(w.nkinds, 1);
	assert_int_equal(w.k[0].count, 2);
	diag_warn_free(&w);
}

/* 100 kinds stay 100 kinds: none is folded into another's count */
static void many_kinds_each_keep_their_own_count(void **state)
{
	(void)state;
	static char names[100][16];
	struct kp_warnings w = { 0 };
	for (int i = 0; i < 100; i++) {
		snprintf(names[i], sizeof(names[i]), "kind %d", i);
		for (int j = 0; j <= i % 3; j++)
			diag_warn_add(&w, names[i], NULL, "w %d", i);
	}
	assert_int_equal(w.nkinds, 100);
	long total = 0;
	for (int i = 0; i < 100; i++) {
		assert_string_equal(w.k[i].kind, names[i]);
		assert_int_equal(w.k[i].count, i % 3 + 1);
		total += i % 3 + 1;
	}
	assert_int_equal(diag_warn_total(&w), total);
	diag_warn_free(&w);
}

static void fill(struct kp_warnings *w)
{
	for (int i = 0; i < 12; i++)
		diag_warn_add(w, "malformed events", i == 0 ? "a.json:2:3" : "a.json:9:1",
			      "skipped malformed event: %s", i == 0 ? "no 'ph'" : "not an object");
	diag_warn_add(w, "unknown devices", NULL, "device '%s' is not in the device table", "X1");
}

static void summary_is_one_line_per_kind_with_the_count_and_the_first_instance(void **state)
{
	(void)state;
	struct kp_warnings w = { 0 };
	fill(&w);
	assert_int_equal(diag_warn_total(&w), 13);
	char *s = printed_as(&w, WARN_SUMMARY, NULL);
	assert_string_equal(
		s,
		"kprof: a.json:2:3: warning: skipped malformed event: no 'ph' (first of 12 malformed events)\n"
		"kprof: warning: device 'X1' is not in the device table\n");
	free(s);
	/* a diff names the side after "warning: ", so file:line:col stays first */
	s = printed_as(&w, WARN_SUMMARY, "new");
	assert_string_equal(
		s,
		"kprof: a.json:2:3: warning: [new] skipped malformed event: no 'ph' (first of 12 malformed events)\n"
		"kprof: warning: [new] device 'X1' is not in the device table\n");
	free(s);
	/* -q: nothing */
	s = printed_as(&w, WARN_QUIET, "base");
	assert_string_equal(s, "");
	free(s);
	/* past the first few, instances are only counted */
	assert_int_equal(w.k[0].nshown, KP_WARN_SHOW);
	assert_int_equal(w.k[0].nmore, 0);
	diag_warn_free(&w);
}

static void all_lists_every_instance(void **state)
{
	(void)state;
	struct kp_warnings w = { .all = 1 };
	fill(&w);
	assert_int_equal(w.k[0].nshown + w.k[0].nmore, 12);
	char *s = printed_as(&w, WARN_ALL, "base");
	int lines = 0;
	for (char *p = s; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 13);
	assert_non_null(
		strstr(s, "kprof: a.json:2:3: warning: [base] skipped malformed event: no 'ph'\n"));
	assert_non_null(
		strstr(s,
		       "kprof: a.json:9:1: warning: [base] skipped malformed event: not an object\n"));
	assert_null(strstr(s, "first of"));
	free(s);
	diag_warn_free(&w);
}

/*
 * A location longer than the message buffer (a deep path; a summary's rank file name, which
 * is input): its first 512 bytes, cut between UTF-8 sequences, then "...", and the warning's
 * text whole after it.  (The location once filled the buffer and "warning: " and the text were
 * written past its end: fuzz-summary.)
 */
static void a_long_location_is_cut_and_the_text_kept(void **state)
{
	(void)state;
	struct kp_warnings w = { 0 };
	char loc[2001];
	memset(loc, 'a', sizeof(loc) - 1);
	loc[sizeof(loc) - 1] = '\0';
	memcpy(loc + 510, "\xc3\xa9", 2);     /* bytes 510-511: kept whole */
	memcpy(loc + 1500, ":12:3", 5);
	diag_warn_add(&w, "world sizes differ", loc, "world size %d, not %d", 8, 4);
	memcpy(loc + 510, "a\xc3\xa9", 3);    /* bytes 511-512: across the cut, dropped whole */
	diag_warn_add(&w, "other", loc, "text %s", "two");
	char *s = printed_as(&w, WARN_SUMMARY, "new");
	char want[2048];
	snprintf(want, sizeof(want),
		 "kprof: %.*s\xc3\xa9...: warning: [new] world size 8, not 4\n"
		 "kprof: %.*s...: warning: [new] text two\n",
		 510, loc, 511, loc);
	assert_string_equal(s, want);
	free(s);
	diag_warn_free(&w);
}

/*
 * Warnings read back from a summary (diag_warn_restore()) print as the trace's did: the first
 * message, "(first of N KIND)", a [side] after "warning: "; kept messages are capped.
 */
static void restored_warnings_print_as_the_originals(void **state)
{
	(void)state;
	struct kp_warnings orig = { 0 }, back = { 0 };
	char loc[32];
	for (int i = 0; i < 7; i++) {
		snprintf(loc, sizeof(loc), "a.json:%d:5", 10 + i);
		diag_warn_add(&orig, "events without 'dur'", loc, "skipped 'k%d'", i);
	}
	char kind[] = "events without 'dur'"; /* not the static string: copied */
	diag_warn_restore(&back, kind, orig.k[0].count, orig.k[0].shown, orig.k[0].nshown);
	kind[0] = 'X';
	char *a = printed_as(&orig, WARN_SUMMARY, "new");
	char *b = printed_as(&back, WARN_SUMMARY, "new");
	assert_string_equal(
		b, "kprof: a.json:10:5: warning: [new] skipped 'k0' (first of 7 events without 'dur')\n");
	assert_string_equal(a, b);
	free(a);
	free(b);
	/* a second summary's ranks add to the kind, keeping KP_WARN_SHOW messages */
	diag_warn_restore(&back, "events without 'dur'", 2, orig.k[0].shown, 2);
	assert_int_equal(back.nkinds, 1);
	assert_int_equal(back.k[0].count, 9);
	assert_int_equal(back.k[0].nshown, KP_WARN_SHOW);
	/* counts read from summaries saturate instead of overflowing */
	diag_warn_restore(&back, "events without 'dur'", LONG_MAX - 3, NULL, 0);
	diag_warn_restore(&back, "events without 'dur'", LONG_MAX, NULL, 0);
	assert_true(back.k[0].count == LONG_MAX);
	diag_warn_free(&orig);
	diag_warn_free(&back);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(diag_error_formats_the_message_and_status),
		cmocka_unit_test(
			warnings_print_one_line_per_kind_with_the_count_and_the_first_instance),
		cmocka_unit_test(kinds_match_by_text),
		cmocka_unit_test(many_kinds_each_keep_their_own_count),
		cmocka_unit_test(
			summary_is_one_line_per_kind_with_the_count_and_the_first_instance),
		cmocka_unit_test(all_lists_every_instance),
		cmocka_unit_test(restored_warnings_print_as_the_originals),
		cmocka_unit_test(a_long_location_is_cut_and_the_text_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
