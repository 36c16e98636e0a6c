/*
 * test-diag.c — error messages and grouped warnings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/diag.h"

/* everything diag_warn_print() writes, as one malloc'ed string */
static char *printed(const struct kp_warnings *w)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	diag_warn_print(w, f);
	fclose(f);
	return buf;
}

static void diag_error_formats_the_message_and_status(void **state)
{
	(void)state;
	struct kp_diag d = { 0 };
	assert_int_equal(diag_error(&d, KP_BADINPUT, "%s:%d:%d: error: expected ':'", "a.json", 3, 7),
			 -1);
	assert_string_equal(d.msg, "a.json:3:7: error: expected ':'");
	assert_int_equal(d.status, KP_BADINPUT);
	assert_int_equal(diag_error(NULL, KP_ENV, "ignored"), -1);
}

static void warnings_past_the_shown_few_are_counted_with_the_first_location(void **state)
{
	(void)state;
	struct kp_warnings w = { 0 };
	char loc[32];
	for (int i = 0; i < 8; i++) {
		snprintf(loc, sizeof(loc), "a.json:%d:5", 10 + i);
		diag_warn_add(&w, "events without 'dur'", loc, "skipped event 'k%d' without 'dur'", i);
	}
	diag_warn_add(&w, "GPU events with zero 'dur'", NULL, "zero");
	assert_int_equal(w.nkinds, 2);
	assert_int_equal(diag_warn_total(&w), 9);
	char *out = printed(&w);
	assert_string_equal(out,
		"kprof: a.json:10:5: warning: skipped event 'k0' without 'dur'\n"
		"kprof: a.json:11:5: warning: skipped event 'k1' without 'dur'\n"
		"kprof: a.json:12:5: warning: skipped event 'k2' without 'dur'\n"
		"kprof: a.json:13:5: warning: skipped event 'k3' without 'dur'\n"
		"kprof: a.json:14:5: warning: skipped event 'k4' without 'dur'\n"
		"kprof: warning: skipped 3 more events without 'dur' (first at a.json:10:5)\n"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(diag_error_formats_the_message_and_status),
		cmocka_unit_test(warnings_past_the_shown_few_are_counted_with_the_first_location),
		cmocka_unit_test(kinds_match_by_text),
		cmocka_unit_test(many_kinds_each_keep_their_own_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
