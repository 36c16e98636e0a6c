/*
 * test-utf8.c — names made valid UTF-8: what passes untouched and what becomes U+FFFD.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

static void utf8_visible_escapes_controls_c1_bidi_and_bad_bytes(void **state)
{
	(void)state;
	struct kp_visbuf vb = { 0 };
	const char *plain = "aten::mm caf\xc3\xa9 \\ `x` |y| <z> \xe2\x82\xac";
	assert_ptr_equal(utf8_visible(plain, &vb), plain); /* nothing to escape: no copy */
	assert_int_equal(utf8_visible_len(plain), strlen(plain));
	static const char *const in[] = {
		"a\x1b[2Jb", "t\tl\nr\r", "\x07\x7f",     "\xc2\x9b" "31m",   "x\xe2\x80\xaey",
		"\xe2\x81\xa6\xe2\x81\xa9", "\xe2\x80\x8f\xd8\x9c\xe2\x80\xa8", "bad\xff\xc3", "\xe2\x80\x8d",
	};
	static const char *const out[] = {
		"a\\u001b[2Jb", "t\\tl\\nr\\r", "\\u0007\\u007f", "\\u009b31m", "x\\u202ey",
		"\\u2066\\u2069", "\\u200f\\u061c\\u2028", "bad\\xff\\xc3", "\xe2\x80\x8d",
	};
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		assert_string_equal(utf8_visible(in[i], &vb), out[i]);
		assert_int_equal(utf8_visible_len(in[i]), strlen(out[i]));
	}
	/* LF and tab kept for xml text */
	assert_string_equal(utf8_visible_lines("a\nb\tc\x1b", &vb), "a\nb\tc\\u001b");
	/* a 100 KB name: escaped whole */
	size_t n = 100000;
	char *big = malloc(n + 2);
	memset(big, 'k', n);
	big[n] = '\x1b';
	big[n + 1] = '\0';
	const char *v = utf8_visible(big, &vb);
	assert_int_equal(strlen(v), n + 6);
	assert_string_equal(v + n, "\\u001b");
	free(big);
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	utf8_fputs_visible("x\x1b]0;t\x07\xe2\x80\xae.json", fp);
	fclose(fp);
	assert_string_equal(buf, "x\\u001b]0;t\\u0007\\u202e.json");
	free(buf);
	utf8_visible_free(&vb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(utf8_keeps_valid_text_unchanged),
		cmocka_unit_test(utf8_replaces_each_invalid_byte_and_nul),
		cmocka_unit_test(utf8_finds_a_bad_byte_at_any_position_of_a_long_name),
		cmocka_unit_test(utf8_prefix_never_cuts_inside_a_sequence),
		cmocka_unit_test(utf8_visible_escapes_controls_c1_bidi_and_bad_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
