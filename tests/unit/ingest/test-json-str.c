/*
 * test-json-str.c — strings: json_unescape() (src/ingest/json-str.c) and json_str_capped().
 * Every test of the main list runs at each kernel level; shared helpers: json-test.h.
 */
#include "json-test.h"

static void json_unescapes_to_utf8(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} c[] = {
		{ "plain", "plain" },
		{ "a\\nb\\t\\\"\\\\\\/\\b\\f\\r", "a\nb\t\"\\/\b\f\r" },
		{ "\\u00e9", "\xc3\xa9" },
		{ "\\u20AC!", "\xe2\x82\xac!" },
		{ "\\ud83d\\ude00", "\xf0\x9f\x98\x80" },
		{ "\\ud800x", "\xef\xbf\xbdx" },
		{ "\\udc00", "\xef\xbf\xbd" },
		{ "\\ud800\\u0041", "\xef\xbf\xbd"
				    "A" },
	};
	char out[64];
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		size_t n = json_unescape(c[k].in, strlen(c[k].in), out, sizeof(out));
		assert_string_equal(out, c[k].out);
		assert_int_equal(n, strlen(c[k].out));
	}
	/* truncation never splits a UTF-8 sequence */
	assert_int_equal(json_unescape("ab\\u00e9", 8, out, 4), 2);
	assert_string_equal(out, "ab");
	assert_int_equal(json_unescape("abcdef", 6, out, 4), 3);
	assert_string_equal(out, "abc");
	assert_int_equal(json_unescape("abc", 3, out, 0), 0);
}

/* json_unescape's steps at their edges: each UTF-8 length, surrogates, malformed escapes. */
static void json_unescape_copies_malformed_escapes_as_they_are(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} c[] = {
		{ "a\\x", "a\\x" },
		{ "\\", "\\" },
		{ "ab\\", "ab\\" },
		{ "\\u12", "\\u12" },
		{ "\\u12G4z", "\\u12G4z" },
		{ "\\U0041", "\\U0041" },
		{ "\\u0041\\u007f", "A\x7f" },
		{ "\\u0080\\u07FF", "\xc2\x80\xdf\xbf" },
		{ "\\u0800\\uffff", "\xe0\xa0\x80\xef\xbf\xbf" },
		{ "\\uDBFF\\uDFFF", "\xf4\x8f\xbf\xbf" },
		{ "\\ud800\\ud800", "\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\\ud800\\", "\xef\xbf\xbd\\" },
		{ "\\ud800\\udc0", "\xef\xbf\xbd\\udc0" },
		{ "\\ud800\\n", "\xef\xbf\xbd\n" },
		{ "\\dfff", "\\dfff" },
	};
	char out[64];
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		size_t n = json_unescape(c[k].in, strlen(c[k].in), out, sizeof(out));
		assert_string_equal(out, c[k].out);
		assert_int_equal(n, strlen(c[k].out));
	}
	/* an escape that just fits is kept whole; one byte less drops it */
	assert_int_equal(json_unescape("\\u20ac", 6, out, 4), 3);
	assert_string_equal(out, "\xe2\x82\xac");
	assert_int_equal(json_unescape("\\u20ac", 6, out, 3), 0);
	assert_string_equal(out, "");
	assert_int_equal(json_unescape("a\\n", 3, out, 3), 2);
	assert_string_equal(out, "a\n");
	assert_int_equal(json_unescape("a\\n", 3, out, 2), 1);
	assert_string_equal(out, "a");
	/* only the first len bytes count: an escape cut by len is malformed */
	assert_int_equal(json_unescape("\\u0041", 5, out, sizeof(out)), 5);
	assert_string_equal(out, "\\u004");
}

/* json_str_capped(): a name cut whole escapes and UTF-8 sequences short, the rest skipped */
static void json_str_capped_cuts_long_strings_and_skips_their_rest(void **state)
{
	(void)state;
	const char *doc = "{\"a\": \"H100 \\u00e9\\u00e9 x\", \"b\": \"ab\xc3\xa9\xc3\xa9\", "
			  "\"c\": \"ok\", \"d\": 5, \"e\" : \"ab\\\"\"}";
	struct kp_json p;
	struct kp_json_tok tk;
	char buf[12];
	int cut = -1;
	json_init_mem(&p, doc, strlen(doc));
	assert_int_equal(json_next(&p, &tk), JT_OBJ);
	assert_int_equal(json_key(&p, &tk), JT_KEY);
	assert_int_equal(json_str_capped(&p, &tk, buf, sizeof(buf), &cut), JT_STR);
	assert_int_equal(cut, 1);
	assert_int_equal(tk.escaped, 1);
	assert_string_equal(buf, "H100 \\u00e9"); /* 11 bytes: the next escape would not fit */
	assert_int_equal(tk.off, 6);
	assert_int_equal(json_key(&p, &tk), JT_KEY);
	assert_int_equal(json_str_capped(&p, &tk, buf, 6, &cut), JT_STR);
	assert_int_equal(cut, 1);
	assert_string_equal(buf, "ab\xc3\xa9"); /* not half of the second e-acute */
	assert_int_equal(json_key(&p, &tk), JT_KEY);
	assert_int_equal(json_str_capped(&p, &tk, buf, sizeof(buf), &cut), JT_STR);
	assert_int_equal(cut, 0);
	assert_string_equal(buf, "ok");
	assert_int_equal(json_key(&p, &tk), JT_KEY);
	assert_int_equal(json_str_capped(&p, &tk, buf, sizeof(buf), &cut), JT_NUM);
	assert_int_equal(cut, 0);
	assert_int_equal(json_next(&p, &tk), JT_KEY); /* "e" with its ':' left to the call */
	assert_int_equal(json_str_capped(&p, &tk, buf, sizeof(buf), &cut), JT_STR);
	assert_string_equal(buf, "ab\\\"");
	assert_int_equal(json_next(&p, &tk), JT_OBJ_END);
	assert_int_equal(json_next(&p, &tk), JT_END);
	json_free(&p);

	/* 100 kB through a 256-byte window: cut, the window unchanged, the next key found */
	size_t n = 100000;
	char *s = malloc(n + 64);
	size_t k = (size_t)sprintf(s, "{\"name\": \"");
	memset(s + k, 'x', n);
	k += n;
	k += (size_t)sprintf(s + k, "\", \"id\": 1}");
	struct trickle t = { s, k, 0, 0 };
	char name[257];
	json_init(&p, trickle_read, &t, 256);
	assert_int_equal(json_next(&p, &tk), JT_OBJ);
	assert_int_equal(json_key(&p, &tk), JT_KEY);
	assert_int_equal(json_str_capped(&p, &tk, name, sizeof(name), &cut), JT_STR);
	assert_int_equal(cut, 1);
	assert_int_equal(tk.len, 256);
	assert_int_equal(p.cap, 256);
	assert_int_equal(json_key(&p, &tk), JT_KEY);
	assert_int_equal(tk.len, 2);
	assert_int_equal(json_next(&p, &tk), JT_NUM);
	json_free(&p);
	/* cut off inside the string: truncation, at the end of input */
	t = (struct trickle){ s, 20000, 0, 0 };
	json_init(&p, trickle_read, &t, 256);
	json_next(&p, &tk);
	json_key(&p, &tk);
	assert_int_equal(json_str_capped(&p, &tk, name, sizeof(name), &cut), JT_ERROR);
	assert_int_equal(p.err_eof, 1);
	assert_int_equal(p.err_off, 20000);
	json_free(&p);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(json_unescapes_to_utf8),
		cmocka_unit_test(json_unescape_copies_malformed_escapes_as_they_are),
		cmocka_unit_test(json_str_capped_cuts_long_strings_and_skips_their_rest),
	};
	int fail = 0;
	RUN_AT_LEVELS(fail, "json-str", tests);
	return fail;
}
