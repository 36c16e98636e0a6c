/*
 * test-json.c — the tokenizer (src/ingest/json.c): JSONTestSuite, exact errors, window
 * boundaries, truncation and mutated input, locations, the bad fixtures, chunks of an array.
 * Every test of the main list runs at each kernel level; shared helpers: json-test.h.
 */
#include "json-test.h"

/* ---- JSONTestSuite ---- */

static void accept_one(const char *name, const char *s, size_t len)
{
	struct sbuf a = { 0 }, b = { 0 };
	enum kp_json_type ty = walk_mem(s, len, &a);
	if (ty != JT_END)
		fail_msg("%s: rejected: %s", name, a.s);
	assert_int_equal(walk_trickle(s, len, 16, &b), JT_END);
	assert_string_equal(a.s, b.s);

	/* skipping the whole document accepts it too */
	struct kp_json p;
	struct kp_json_tok t;
	json_init_mem(&p, s, len);
	if (json_skip(&p) != 0)
		fail_msg("%s: json_skip rejected: %s at %lld", name, p.err, (long long)p.err_off);
	assert_int_equal(json_next(&p, &t), JT_END);
	json_free(&p);
	free(a.s);
	free(b.s);
}

static void json_accepts_every_y_file(void **state)
{
	(void)state;
	assert_int_equal(each_suite_file("y_", accept_one), 95);
}

static void reject_one(const char *name, const char *s, size_t len)
{
	struct kp_json p;
	json_init_mem(&p, s, len);
	if (walk(&p, NULL) != JT_ERROR)
		fail_msg("%s: accepted", name);
	assert_non_null(p.err);
	if (p.err_off < 0 || p.err_off > (int64_t)len)
		fail_msg("%s: error offset %lld outside 0..%zu", name, (long long)p.err_off, len);
	int line, col;
	json_locate(&p, p.err_off, &line, &col);
	assert_true(line >= 1 && col >= 1);
	const char *err = p.err;
	int64_t off = p.err_off;
	int eof = p.err_eof;
	json_free(&p);

	/* the same error, wherever the window boundaries fall */
	struct trickle tr = { s, len, 0, 0 };
	json_init(&p, trickle_read, &tr, 16);
	assert_int_equal(walk(&p, NULL), JT_ERROR);
	assert_string_equal(p.err, err);
	assert_int_equal(p.err_off, off);
	assert_int_equal(p.err_eof, eof);
	json_free(&p);

	/* skipping is lenient about some of these, but must end either way */
	json_init_mem(&p, s, len);
	if (json_skip(&p) == 0)
		walk(&p, NULL);
	json_free(&p);
}

static void json_rejects_every_n_file_with_a_located_error(void **state)
{
	(void)state;
	assert_int_equal(each_suite_file("n_", reject_one), 188);
}

static void survive_one(const char *name, const char *s, size_t len)
{
	(void)name;
	enum kp_json_type ty = walk_mem(s, len, NULL);
	assert_true(ty == JT_END || ty == JT_ERROR);
	assert_int_equal(walk_trickle(s, len, 16, NULL), ty);
	struct kp_json p;
	json_init_mem(&p, s, len);
	if (json_skip(&p) == 0)
		walk(&p, NULL);
	json_free(&p);
}

static void json_survives_every_i_file(void **state)
{
	(void)state;
	assert_int_equal(each_suite_file("i_", survive_one), 35);
}

/* ---- exact errors ---- */

struct err_case {
	const char *in;
	const char *err;
	int64_t off;
	int eof;
};

static void check_errors(const struct err_case *c, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		struct kp_json p;
		size_t len = strlen(c[k].in);
		json_init_mem(&p, c[k].in, len);
		enum kp_json_type ty = walk(&p, NULL);
		if (ty != JT_ERROR)
			fail_msg("'%s' accepted", c[k].in);
		if (strcmp(p.err, c[k].err) != 0 || p.err_off != c[k].off || p.err_eof != c[k].eof)
			fail_msg("'%s': got '%s' @%lld eof=%d, want '%s' @%lld eof=%d", c[k].in,
				 p.err, (long long)p.err_off, p.err_eof, c[k].err,
				 (long long)c[k].off, c[k].eof);
		json_free(&p);
	}
}

static void json_rejects_trailing_comma(void **state)
{
	(void)state;
	static const struct err_case c[] = {
		{ "[1,]", "expected value after ','", 3, 0 },
		{ "{\"a\":1,}", "expected object key after ','", 7, 0 },
		{ "[1,,2]", "expected value after ','", 3, 0 },
	};
	check_errors(c, sizeof(c) / sizeof(c[0]));
}

static void json_names_the_expected_punctuation(void **state)
{
	(void)state;
	static const struct err_case c[] = {
		{ "{\"a\" 1}", "expected ':' after object key", 5, 0 },
		{ "{\"a\":1 \"b\":2}", "expected ',' or '}' after object member", 7, 0 },
		{ "[1 2]", "expected ',' or ']' after array element", 3, 0 },
		{ "{\"a\":}", "expected value after ':'", 5, 0 },
		{ "{1:2}", "expected object key or '}'", 1, 0 },
		{ "[}", "expected value or ']'", 1, 0 },
		{ "]", "expected value", 0, 0 },
		{ "[1]]", "trailing characters after JSON value", 3, 0 },
		{ "{} x", "trailing characters after JSON value", 3, 0 },
		{ "{\"a\":1]", "expected ',' or '}' after object member", 6, 0 },
	};
	check_errors(c, sizeof(c) / sizeof(c[0]));
}

static void json_blames_the_byte_after_a_string_not_its_quote(void **state)
{
	(void)state;
	/* jq#1437 points at the closing quote (offset 7); the offending byte is 'c' */
	static const struct err_case c[] = {
		{ "{\"a\":\"b\"c}", "expected ',' or '}' after object member", 8, 0 },
	};
	check_errors(c, 1);
}

static void json_rejects_bad_numbers(void **state)
{
	(void)state;
	static const struct err_case c[] = {
		{ "01", "invalid number", 1, 0 },
		{ "[-01]", "invalid number", 3, 0 },
		{ "[.5]", "invalid number", 1, 0 },
		{ "[+1]", "invalid number", 1, 0 },
		{ "[1.]", "invalid number", 3, 0 },
		{ "[1.e5]", "invalid number", 3, 0 },
		{ "[1e]", "invalid number", 3, 0 },
		{ "[1e+]", "invalid number", 4, 0 },
		{ "[1.2.3]", "invalid number", 4, 0 },
		{ "[12abc]", "invalid number", 3, 0 },
		{ "[0x10]", "invalid number", 2, 0 },
		{ "[- 1]", "invalid number", 2, 0 },
		{ "[-]", "invalid number", 2, 0 },
		{ "-", "unexpected end of input", 1, 1 },
		{ "[1e", "unexpected end of input", 3, 1 },
		{ "[Infinity]", "expected value or ']'", 1, 0 },
	};
	check_errors(c, sizeof(c) / sizeof(c[0]));
}

static void json_rejects_bad_strings(void **state)
{
	(void)state;
	static const struct err_case c[] = {
		{ "[\"a\x01\"]", "control character in string", 3, 0 },
		{ "[\"a\tb\"]", "control character in string", 3, 0 },
		{ "[\"a\nb\"]", "control character in string", 3, 0 },
		{ "[\"\\x\"]", "invalid escape in string", 3, 0 },
		{ "[\"\\u12G4\"]", "invalid escape in string", 6, 0 },
		{ "[\"\\u12\"]", "invalid escape in string", 6, 0 },
		{ "['a']", "expected value or ']'", 1, 0 },
		{ "[\"abc", "unexpected end of input", 5, 1 },
		{ "[\"abc\\", "unexpected end of input", 6, 1 },
		{ "[\"\\u00", "unexpected end of input", 6, 1 },
	};
	check_errors(c, sizeof(c) / sizeof(c[0]));
}

static void json_rejects_bad_literals(void **state)
{
	(void)state;
	static const struct err_case c[] = {
		{ "tru", "unexpected end of input", 3, 1 },   { "trux", "invalid literal", 3, 0 },
		{ "truex", "invalid literal", 4, 0 },         { "[nul]", "invalid literal", 4, 0 },
		{ "[False]", "expected value or ']'", 1, 0 },
	};
	check_errors(c, sizeof(c) / sizeof(c[0]));
}

static void json_rejects_empty_input(void **state)
{
	(void)state;
	static const struct err_case c[] = {
		{ "", "empty input", 0, 1 },
		{ " \n\t ", "empty input", 4, 1 },
		{ "\f", "expected value", 0, 0 },
	};
	check_errors(c, sizeof(c) / sizeof(c[0]));
}

static void json_rejects_nesting_deeper_than_the_limit(void **state)
{
	(void)state;
	char s[JSON_MAX_DEPTH + 2];
	memset(s, '[', sizeof(s) - 1);
	s[sizeof(s) - 1] = 0;
	struct err_case c[] = { { s, "nesting too deep", JSON_MAX_DEPTH, 0 } };
	check_errors(c, 1);

	/* json_skip counts depth the same way */
	char t[2 * JSON_MAX_DEPTH + 8];
	size_t n = 0;
	t[n++] = '[';
	for (int k = 0; k < JSON_MAX_DEPTH; k++)
		t[n++] = '[';
	for (int k = 0; k < JSON_MAX_DEPTH + 1; k++)
		t[n++] = ']';
	struct kp_json p;
	json_init_mem(&p, t, n);
	assert_int_equal(json_skip(&p), -1);
	assert_string_equal(p.err, "nesting too deep");
	assert_int_equal(p.err_off, JSON_MAX_DEPTH);
	json_free(&p);

	/* exactly JSON_MAX_DEPTH is fine for both */
	json_init_mem(&p, t + 1, n - 2);
	assert_int_equal(walk(&p, NULL), JT_END);
	json_free(&p);
	json_init_mem(&p, t + 1, n - 2);
	assert_int_equal(json_skip(&p), 0);
	json_free(&p);
}

static void json_accepts_a_byte_order_mark_only_at_the_start(void **state)
{
	(void)state;
	assert_int_equal(walk_mem("\xef\xbb\xbf{}", 5, NULL), JT_END);
	static const struct err_case c[] = {
		{ "\xef\xbb{}", "expected value", 0, 0 },
		{ "[\xef\xbb\xbf]", "expected value or ']'", 1, 0 },
	};
	check_errors(c, sizeof(c) / sizeof(c[0]));
}

static void json_does_not_validate_utf8(void **state)
{
	(void)state;
	assert_int_equal(walk_mem("[\"\xff\xfe\xc0\x80\"]", 8, NULL), JT_END);
}

static void json_keeps_returning_the_error_and_the_end(void **state)
{
	(void)state;
	struct kp_json p;
	struct kp_json_tok t;
	json_init_mem(&p, "[1,]", 4);
	assert_int_equal(walk(&p, NULL), JT_ERROR);
	assert_int_equal(json_next(&p, &t), JT_ERROR);
	assert_int_equal(t.off, 3);
	assert_int_equal(json_skip(&p), -1);
	assert_int_equal(json_skip_rest(&p), -1);
	json_free(&p);

	json_init_mem(&p, " 7 ", 3);
	assert_int_equal(json_next(&p, &t), JT_NUM);
	assert_int_equal(json_next(&p, &t), JT_END);
	assert_int_equal(json_next(&p, &t), JT_END);
	json_free(&p);
}

static ssize_t failing_read(void *ctx, void *buf, size_t cap)
{
	struct trickle *t = ctx;
	if (t->off >= t->len)
		return -1;
	return trickle_read(ctx, buf, cap);
}

static void json_reports_a_read_error_apart_from_truncation(void **state)
{
	(void)state;
	struct kp_json p;
	struct trickle tr = { "[1, 2, 3", 8, 0, 0 };
	json_init(&p, failing_read, &tr, 16);
	assert_int_equal(walk(&p, NULL), JT_ERROR);
	assert_int_equal(p.read_failed, 1);
	assert_string_equal(p.err, "read error");
	assert_int_equal(p.err_eof, 0);
	json_free(&p);
}

/* ---- tokens ---- */

static void json_returns_tokens_with_offsets_and_depths(void **state)
{
	(void)state;
	const char *s = " {\"k\\n\": [1.5e3, \"v\", true, false, null, {}], \"z\": -0}";
	struct sbuf b = { 0 };
	assert_int_equal(walk_mem(s, strlen(s), &b), JT_END);
	assert_string_equal(b.s, "1@1 d1 e0 [{]\n"
				 "5@2 d1 e1 [k\\n]\n"
				 "3@9 d2 e0 [[]\n"
				 "7@10 d2 e0 [1.5e3]\n"
				 "6@17 d2 e0 [v]\n"
				 "8@22 d2 e0 [true]\n"
				 "9@28 d2 e0 [false]\n"
				 "10@35 d2 e0 [null]\n"
				 "1@41 d3 e0 [{]\n"
				 "2@42 d2 e0 [}]\n"
				 "4@43 d1 e0 []]\n"
				 "5@46 d1 e0 [z]\n"
				 "7@51 d1 e0 [-0]\n"
				 "2@53 d0 e0 [}]\n"
				 "0@54 d0 e0 []\n");
	free(b.s);
}

static void json_tokens_match_across_window_boundaries(void **state)
{
	(void)state;
	size_t len;
	char *s = gen_doc(&len, 1, 300);
	struct sbuf a = { 0 }, b = { 0 }, c = { 0 };
	assert_int_equal(walk_mem(s, len, &a), JT_END);
	assert_int_equal(walk_trickle(s, len, 16, &b), JT_END);
	assert_string_equal(a.s, b.s);
	assert_int_equal(walk_trickle(s, len, 100, &c), JT_END);
	assert_string_equal(a.s, c.s);
	free(a.s);
	free(b.s);
	free(c.s);
	free(s);
}

/*
 * fuzz-json: a number that ends the input where the window is full.  The refill that
 * finds no more bytes still moves the window; the token must not take in the sentinel.
 */
static void json_number_at_the_end_of_a_full_window_keeps_its_length(void **state)
{
	(void)state;
	static const char doc[] = "[-123123e1000001"; /* 16 bytes: fills a 16-byte window */
	struct kp_json p;
	struct kp_json_tok t;
	struct trickle tr = { doc, sizeof(doc) - 1, 0, 0 };
	json_init(&p, trickle_read, &tr, 16);
	assert_int_equal(json_next(&p, &t), JT_ARR);
	assert_int_equal(json_next(&p, &t), JT_NUM);
	assert_int_equal(t.off, 1);
	assert_int_equal(t.len, 15);
	assert_memory_equal(t.s, "-123123e1000001", 15);
	assert_int_equal(json_next(&p, &t), JT_ERROR);
	assert_string_equal(p.err, "unexpected end of input");
	assert_int_equal(p.err_off, 16);
	json_free(&p);
}

static void json_grows_the_window_only_for_a_token_larger_than_it(void **state)
{
	(void)state;
	size_t n = 5000;
	char *s = malloc(n + 3);
	s[0] = '"';
	memset(s + 1, 'a', n);
	s[n + 1] = '"';
	struct kp_json p;
	struct trickle tr = { s, n + 2, 0, 0 };
	struct kp_json_tok t;
	json_init(&p, trickle_read, &tr, 64);
	assert_int_equal(json_next(&p, &t), JT_STR);
	assert_int_equal(t.len, n);
	assert_true(p.cap >= n && p.cap <= 4 * n);
	assert_int_equal(json_next(&p, &t), JT_END);
	json_free(&p);

	/* a big document of small tokens keeps the window small */
	size_t len;
	char *d = gen_doc(&len, 2, 200);
	struct trickle tr2 = { d, len, 0, 0 };
	json_init(&p, trickle_read, &tr2, 1024);
	assert_int_equal(walk(&p, NULL), JT_END);
	assert_int_equal(p.cap, 1024);
	json_free(&p);
	free(d);
	free(s);
}

static void json_reports_truncation_at_every_cut(void **state)
{
	(void)state;
	size_t len;
	char *s = gen_doc(&len, 4, 6);
	for (size_t cut = 0; cut < len - 1; cut++) {
		for (int mode = 0; mode < 3; mode++) {
			struct kp_json p;
			struct trickle tr = { s, cut, 0, 0 };
			if (mode == 1)
				json_init(&p, trickle_read, &tr, 16);
			else
				json_init_mem(&p, s, cut);
			if (mode == 2) {
				if (json_skip(&p) == 0)
					walk(&p, NULL);
			} else {
				walk(&p, NULL);
			}
			if (!p.err || !p.err_eof || p.err_off != (int64_t)cut)
				fail_msg("cut %zu mode %d: %s @%lld eof=%d", cut, mode,
					 p.err ? p.err : "(accepted)", (long long)p.err_off,
					 p.err_eof);
			json_free(&p);
		}
	}
	free(s);
}

static void json_never_crashes_on_mutated_input(void **state)
{
	(void)state;
	size_t len;
	char *s = gen_doc(&len, 5, 8);
	char *m = malloc(len);
	unsigned x = 42;
	static const char bytes[] = "{}[]\",:\\ 0-.eEtfnu\x01\xff";
	for (int k = 0; k < 3000; k++) {
		memcpy(m, s, len);
		for (int j = 0; j < 1 + k % 4; j++) {
			x = x * 1103515245u + 12345u;
			m[(x >> 8) % len] = bytes[(x >> 20) % (sizeof(bytes) - 1)];
		}
		size_t n = k % 7 ? len : (x >> 4) % len;
		struct sbuf a = { 0 }, b = { 0 };
		enum kp_json_type ty = walk_mem(m, n, &a);
		assert_int_equal(walk_trickle(m, n, 16, &b), ty);
		assert_string_equal(a.s, b.s);
		free(a.s);
		free(b.s);
		struct sbuf c = { 0 }, d = { 0 };
		struct kp_json p;
		for (int w = 0; w < 2; w++) {
			struct trickle tr = { m, n, 0, 0 };
			if (w)
				json_init(&p, trickle_read, &tr, 16);
			else
				json_init_mem(&p, m, n);
			struct kp_json_tok t;
			enum kp_json_type t2;
			struct sbuf *o = w ? &d : &c;
			while ((t2 = json_next(&p, &t)) != JT_END && t2 != JT_ERROR) {
				sb_tok(o, &t);
				if (t2 == JT_KEY && t.len == 4 && memcmp(t.s, "args", 4) == 0)
					json_skip(&p);
				else if (t2 == JT_KEY && t.len == 8 && !memcmp(t.s, "skiprest", 8))
					json_skip_rest(&p);
			}
			sb_printf(o, "%d %s @%lld\n", t2, p.err ? p.err : "", (long long)p.err_off);
			json_free(&p);
		}
		assert_string_equal(c.s, d.s);
		free(c.s);
		free(d.s);
	}
	free(m);
	free(s);
}

/* ---- locations ---- */

static void json_locates_lines_and_columns(void **state)
{
	(void)state;
	const char *s = "{\n  \"a\": 1,\n  \"b\" 2\n}";
	struct kp_json p;
	json_init_mem(&p, s, strlen(s));
	assert_int_equal(walk(&p, NULL), JT_ERROR);
	assert_string_equal(p.err, "expected ':' after object key");
	int line, col;
	json_locate(&p, p.err_off, &line, &col);
	assert_int_equal(line, 3);
	assert_int_equal(col, 7);
	json_locate(&p, 0, &line, &col);
	assert_int_equal(line, 1);
	assert_int_equal(col, 1);
	json_locate(&p, 2, &line, &col);
	assert_int_equal(line, 2);
	assert_int_equal(col, 1);
	json_free(&p);
}

/* Newline counting has per-byte counters: runs of nothing but '\n' must not wrap them. */
static void json_counts_long_runs_of_newlines(void **state)
{
	(void)state;
	for (size_t n = 4000; n <= 70000; n += 3331) {
		char *s = malloc(n + 3);
		s[0] = '[';
		memset(s + 1, '\n', n);
		memcpy(s + 1 + n, "x]", 2);
		for (size_t w = 1024; w <= 1 << 17; w *= 16) {
			struct kp_json p;
			struct kp_json_tok t;
			struct trickle tr = { s, n + 3, 0, 0 };
			int line, col;
			json_init(&p, trickle_read, &tr, w);
			assert_int_equal(json_next(&p, &t), JT_ARR);
			assert_int_equal(json_next(&p, &t), JT_ERROR);
			json_locate(&p, p.err_off, &line, &col);
			assert_int_equal(line, (int)n + 1);
			assert_int_equal(col, 1);
			json_free(&p);
		}
		free(s);
	}
}

static void json_locates_exactly_after_the_window_moved(void **state)
{
	(void)state;
	/* 20000 lines of varying length, then an error */
	struct sbuf b = { 0 };
	sb_printf(&b, "[");
	for (int k = 0; k < 20000; k++)
		sb_printf(&b, "%s%*d\n", k ? "," : "", 1 + k % 13, k);
	sb_printf(&b, "  ,x]");
	/* the expected line and column of every offset */
	int *lines = malloc((b.len + 1) * sizeof(int)), *cols = malloc((b.len + 1) * sizeof(int));
	int64_t ln = 1, last_nl = -1;
	for (size_t k = 0; k <= b.len; k++) {
		lines[k] = ln;
		cols[k] = k - last_nl;
		if (k < b.len && b.s[k] == '\n') {
			ln++;
			last_nl = k;
		}
	}
	int64_t bad = b.len - 2;
	for (size_t w = 16; w <= 1 << 20; w *= 8) {
		struct kp_json p;
		struct kp_json_tok t;
		struct trickle tr = { b.s, b.len, 0, 0 };
		int line, col;
		json_init(&p, trickle_read, &tr, w);
		while (json_next(&p, &t) != JT_ERROR) {
			/* the window keeps a quarter of itself, up to 64 KiB, before the token */
			int64_t back = w / 4 < 200 ? (int64_t)w / 4 : 200;
			int64_t o = t.off - back > 0 ? t.off - back : 0;
			json_locate(&p, o, &line, &col);
			if (line != lines[o] || col != cols[o])
				fail_msg("window %zu, offset %lld: %d:%d, want %d:%d", w,
					 (long long)o, line, col, lines[o], cols[o]);
		}
		assert_string_equal(p.err, "expected value after ','");
		assert_int_equal(p.err_off, bad);
		json_locate(&p, p.err_off, &line, &col);
		assert_int_equal(line, lines[bad]);
		assert_int_equal(col, cols[bad]);
		if (w == 16) {
			/* long gone from a 16-byte window: unknown, not wrong */
			json_locate(&p, 5, &line, &col);
			assert_int_equal(line, 0);
			assert_int_equal(col, 0);
		}
		json_free(&p);
	}
	free(lines);
	free(cols);
	free(b.s);
}

/* ---- testdata/bad ---- */

static void json_locates_errors_in_the_bad_fixtures(void **state)
{
	(void)state;
	static const struct {
		const char *file, *err;
		int line, col, eof;
	} c[] = {
		{ "truncated.json", "unexpected end of input", 15, 43, 1 },
		{ "trailing-comma.json", "expected object key after ','", 10, 5, 0 },
		{ "missing-colon.json", "expected ':' after object key", 8, 21, 0 },
		{ "bad-number.json", "invalid number", 6, 12, 0 },
		{ "control-char.json", "control character in string", 5, 70, 0 },
		{ "bad-escape.json", "invalid escape in string", 5, 55, 0 },
		{ "garbage-after.json", "trailing characters after JSON value", 14, 1, 0 },
		{ "empty.json", "empty input", 1, 1, 1 },
	};
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/bad/%s", testdata(), c[k].file);
		size_t len;
		char *s = slurp(path, &len);
		struct kp_json p;
		json_init_mem(&p, s, len);
		assert_int_equal(walk(&p, NULL), JT_ERROR);
		int line, col;
		json_locate(&p, p.err_off, &line, &col);
		if (strcmp(p.err, c[k].err) || line != c[k].line || col != c[k].col ||
		    p.err_eof != c[k].eof)
			fail_msg("%s: got %d:%d '%s' eof=%d", c[k].file, line, col, p.err,
				 p.err_eof);
		json_free(&p);
		free(s);
	}
}

/* ---- chunks of an array (parallel parse) ---- */

static void elems_parse(const char *text, int64_t base, struct kp_json *p, char *buf)
{
	size_t len = strlen(text);
	memcpy(buf, text, len);
	memset(buf + len, 0, JSON_PAD);
	json_init_elems(p, buf, len, base, JSON_MAX_DEPTH - 1);
}

static void json_parses_a_chunk_as_elements_of_an_array(void **state)
{
	(void)state;
	char buf[256 + JSON_PAD];
	struct kp_json p;
	struct kp_json_tok t;
	/* a clean chunk: elements after a ',' each, ending right after an element */
	elems_parse(" ,\n {\"a\": [1, {\"b\": 2}]},{\"c\": \"}, {\\\"\"}", 1000, &p, buf);
	assert_false(json_elems_done(&p));
	assert_int_equal(json_next(&p, &t), JT_OBJ);
	assert_int_equal(t.off, 1004); /* stream offsets */
	assert_int_equal(json_skip_rest(&p), 0);
	assert_false(json_elems_done(&p));
	assert_int_equal(json_next(&p, &t), JT_OBJ);
	assert_int_equal(json_next(&p, &t), JT_KEY);
	assert_int_equal(json_next(&p, &t), JT_STR);
	assert_int_equal(json_next(&p, &t), JT_OBJ_END);
	assert_true(json_elems_done(&p));
	json_free(&p);

	/* a cut inside a string: the chunk does not end after an element */
	elems_parse(", {\"n\": \"a}", 0, &p, buf);
	assert_int_equal(json_next(&p, &t), JT_OBJ);
	assert_int_equal(json_skip_rest(&p), -1);
	assert_true(p.err_eof);
	assert_false(json_elems_done(&p));
	json_free(&p);

	/* a cut inside a nested object: depth 2 at the end */
	elems_parse(", {\"a\": 1}, {\"b\": {\"c\": 1}", 0, &p, buf);
	assert_int_equal(json_next(&p, &t), JT_OBJ);
	assert_int_equal(json_skip_rest(&p), 0);
	assert_int_equal(json_next(&p, &t), JT_OBJ);
	assert_int_equal(json_key(&p, &t), JT_KEY);
	assert_int_equal(json_next(&p, &t), JT_OBJ);
	assert_int_equal(json_skip_rest(&p), 0);
	assert_false(json_elems_done(&p));
	json_free(&p);

	/* the array's end inside the chunk */
	elems_parse(", {}]", 0, &p, buf);
	assert_int_equal(json_next(&p, &t), JT_OBJ);
	assert_int_equal(json_next(&p, &t), JT_OBJ_END);
	assert_int_equal(json_next(&p, &t), JT_ARR_END);
	assert_false(json_elems_done(&p));
	json_free(&p);

	/* the depth limit counts from the array */
	elems_parse(", [[[[1]]]]", 0, &p, buf);
	p.max_depth = 4;
	assert_int_equal(json_skip(&p), -1);
	assert_string_equal(p.err, "nesting too deep");
	json_free(&p);
}

struct from_off {
	const char *s;
	size_t len, off;
};

static ssize_t from_off_read(void *ctx, void *buf, size_t cap)
{
	struct from_off *f = ctx;
	size_t n = f->len - f->off < 3 ? f->len - f->off : 3; /* short reads */
	(void)cap;
	memcpy(buf, f->s + f->off, n);
	f->off += n;
	return (ssize_t)n;
}

static void json_resumes_at_an_offset_with_exact_locations(void **state)
{
	(void)state;
	static const char text[] = "[{\"a\": 1},\n {\"b\": 2},\n {\"c\": x}]";
	struct from_off src = { text, sizeof(text) - 1, 0 };
	struct kp_json p;
	struct kp_json_tok t;
	int64_t off, lines, last_nl;
	json_init(&p, from_off_read, &src, 64);
	p.short_reads = 1;
	assert_int_equal(json_next(&p, &t), JT_ARR);
	assert_false(json_after_value(&p, &off)); /* before the first element */
	assert_int_equal(json_next(&p, &t), JT_OBJ);
	assert_int_equal(json_skip_rest(&p), 0);
	assert_true(json_after_value(&p, &off));
	assert_int_equal(off, 9);
	/* skip the second element as if parsed elsewhere: go on after it */
	const char *third = strstr(text, ",\n {\"c");
	off = third - text;
	lines = 1;
	last_nl = strchr(text, '\n') - text;
	src.off = (size_t)off;
	json_resume(&p, off, lines, last_nl);
	assert_int_equal(json_next(&p, &t), JT_OBJ);
	assert_int_equal(t.off, off + 3);
	assert_int_equal(json_key(&p, &t), JT_KEY);
	assert_int_equal(json_next(&p, &t), JT_ERROR);
	int line, col;
	json_locate(&p, p.err_off, &line, &col);
	assert_int_equal(line, 3);
	assert_int_equal(col, 8);
	json_lines_at(&p, &lines, &last_nl);
	assert_int_equal(lines, 2);
	assert_int_equal(last_nl, strrchr(text, '\n') - text);
	json_free(&p);
}

static void json_keeps_the_pinned_offset_locatable(void **state)
{
	(void)state;
	/* one object of 400 members on 2 lines: far longer than the 64-byte window */
	char text[8192];
	size_t n = (size_t)sprintf(text, "[1,\n {");
	for (int k = 0; k < 400; k++)
		n += (size_t)sprintf(text + n, "%s\"m%d\": %d", k ? ", " : "", k, k);
	sprintf(text + n, "}]");
	for (int pinned = 0; pinned <= 1; pinned++) {
		struct kp_json p;
		struct kp_json_tok t;
		json_init_mem(&p, text, strlen(text));
		p.cap = 64; /* the window json_init_mem chose is larger: shrink it before any read */
		assert_int_equal(json_next(&p, &t), JT_ARR);
		assert_int_equal(json_next(&p, &t), JT_NUM);
		assert_int_equal(json_next(&p, &t), JT_OBJ);
		int64_t start = t.off;
		if (pinned)
			p.pin = start;
		while (json_key(&p, &t) == JT_KEY)
			assert_int_equal(json_skip(&p), 0);
		int line, col;
		json_locate(&p, start, &line, &col);
		assert_int_equal(line, pinned ? 2 : 0);
		assert_int_equal(col, pinned ? 2 : 0);
		json_free(&p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(json_accepts_every_y_file),
		cmocka_unit_test(json_rejects_every_n_file_with_a_located_error),
		cmocka_unit_test(json_survives_every_i_file),
		cmocka_unit_test(json_rejects_trailing_comma),
		cmocka_unit_test(json_names_the_expected_punctuation),
		cmocka_unit_test(json_blames_the_byte_after_a_string_not_its_quote),
		cmocka_unit_test(json_rejects_bad_numbers),
		cmocka_unit_test(json_rejects_bad_strings),
		cmocka_unit_test(json_rejects_bad_literals),
		cmocka_unit_test(json_rejects_empty_input),
		cmocka_unit_test(json_rejects_nesting_deeper_than_the_limit),
		cmocka_unit_test(json_accepts_a_byte_order_mark_only_at_the_start),
		cmocka_unit_test(json_does_not_validate_utf8),
		cmocka_unit_test(json_keeps_returning_the_error_and_the_end),
		cmocka_unit_test(json_reports_a_read_error_apart_from_truncation),
		cmocka_unit_test(json_returns_tokens_with_offsets_and_depths),
		cmocka_unit_test(json_tokens_match_across_window_boundaries),
		cmocka_unit_test(json_number_at_the_end_of_a_full_window_keeps_its_length),
		cmocka_unit_test(json_grows_the_window_only_for_a_token_larger_than_it),
		cmocka_unit_test(json_counts_long_runs_of_newlines),
		cmocka_unit_test(json_reports_truncation_at_every_cut),
		cmocka_unit_test(json_never_crashes_on_mutated_input),
		cmocka_unit_test(json_locates_lines_and_columns),
		cmocka_unit_test(json_locates_exactly_after_the_window_moved),
		cmocka_unit_test(json_locates_errors_in_the_bad_fixtures),
		cmocka_unit_test(json_parses_a_chunk_as_elements_of_an_array),
		cmocka_unit_test(json_resumes_at_an_offset_with_exact_locations),
		cmocka_unit_test(json_keeps_the_pinned_offset_locatable),
	};
	int fail = 0;
	RUN_AT_LEVELS(fail, "json", tests);
	return fail;
}
