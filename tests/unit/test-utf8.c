/*
 * test-utf8.c — names made valid UTF-8: what passes untouched and what becomes U+FFFD.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/utf8.h"

#define R "\xef\xbf\xbd" /* U+FFFD */

static void expect(const char *in, size_t len, const char *want)
{
	char out[256];
	memset(out, 'X', sizeof(out));
	size_t n = utf8_clean(in, len, out);
	assert_int_equal(n, strlen(want));
	assert_memory_equal(out, want, n + 1);
	assert_true(n <= len * UTF8_REPLACEMENT_LEN);
	assert_int_equal(utf8_is_clean(out, n), 1);
	assert_int_equal(utf8_is_clean(in, len), strcmp(in, want) == 0 && strlen(in) == len);
}

static void utf8_keeps_valid_text_unchanged(void **state)
{
	(void)state;
	expect("", 0, "");
	expect("aten::mm", 8, "aten::mm");
	expect("\xc3\xa9t\xc3\xa9", 5, "\xc3\xa9t\xc3\xa9"); /* U+00E9 */
	expect("\xe2\x82\xac", 3, "\xe2\x82\xac");           /* U+20AC */
	expect("\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80");   /* U+1F600 */
	expect("\xf4\x8f\xbf\xbf", 4, "\xf4\x8f\xbf\xbf");   /* U+10FFFF */
	expect("\xed\x9f\xbf", 3, "\xed\x9f\xbf");           /* U+D7FF */
}

static void utf8_replaces_each_invalid_byte_and_nul(void **state)
{
	(void)state;
	expect("a\0b", 3, "a" R "b");           /* NUL no longer ends the name */
	expect("\x80", 1, R);                   /* lone continuation */
	expect("\xc0\xaf", 2, R R);             /* overlong '/' */
	expect("\xe0\x80\xaf", 3, R R R);       /* overlong 3-byte */
	expect("\xed\xa0\x80", 3, R R R);       /* surrogate U+D800 */
	expect("\xf4\x90\x80\x80", 4, R R R R); /* above U+10FFFF */
	expect("\xf5\xff", 2, R R);
	expect("x\xe2\x82", 3, "x" R R); /* cut at the end */
	expect("\xe2\x82x", 3, R R "x"); /* cut in the middle */
	expect("\xc3\xa9\xff\xc3\xa9", 5, "\xc3\xa9" R "\xc3\xa9");
}

static void utf8_finds_a_bad_byte_at_any_position_of_a_long_name(void **state)
{
	(void)state;
	char name[40];
	memset(name, 'k', sizeof(name));
	assert_int_equal(utf8_is_clean(name, sizeof(name)), 1);
	static const char bad[] = { '\0', '\x80', '\xff', '\x01' };
	for (size_t pos = 0; pos < sizeof(name); pos++)
		for (size_t b = 0; b < sizeof(bad); b++) {
			name[pos] = bad[b];
			/* \x01 is a valid control character, kept; the rest are not */
			assert_int_equal(utf8_is_clean(name, sizeof(name)), bad[b] == '\x01');
			char out[sizeof(name) * UTF8_REPLACEMENT_LEN + 1];
			size_t n = utf8_clean(name, sizeof(name), out);
			assert_int_equal(n, sizeof(name) + (bad[b] == '\x01' ? 0 : 2));
			name[pos] = 'k';
		}
}

static void utf8_prefix_never_cuts_inside_a_sequence(void **state)
{
	(void)state;
	const char *s = "ab\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z"; /* a b e-acute euro emoji z */
	size_t len = strlen(s);
	static const size_t want[] = { 0, 1, 2, 2, 4, 4, 4, 7, 7, 7, 7, 11, 12 };
	for (size_t max = 0; max <= len; max++)
		assert_int_equal(utf8_prefix(s, len, max), want[max]);
	assert_int_equal(utf8_prefix(s, len, 100), len);
	/* a string snprintf cut after a lead byte */
	assert_int_equal(utf8_prefix("x\xe2\x82", 3, 3), 1);
	assert_int_equal(utf8_prefix("x\xc3", 2, 99), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(utf8_keeps_valid_text_unchanged),
		cmocka_unit_test(utf8_replaces_each_invalid_byte_and_nul),
		cmocka_unit_test(utf8_finds_a_bad_byte_at_any_position_of_a_long_name),
		cmocka_unit_test(utf8_prefix_never_cuts_inside_a_sequence),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
