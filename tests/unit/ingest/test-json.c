/*
 * test-json.c — the tokenizer: JSONTestSuite, exact errors, window boundaries, skipping,
 * locations and number conversions.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/json.h"

/* ---- helpers ---- */

static const char *testdata(void)
{
	const char *d = getenv("KPROF_TESTDATA");
	return d ? d : "../../testdata";
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	size_t cap = 1 << 16, n = 0;
	char *s = malloc(cap);
	size_t r;
	while ((r = fread(s + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap)
			s = realloc(s, cap *= 2);
	}
	fclose(f);
	*len = n;
	return s;
}

/* A growable text buffer for token streams. */
struct sbuf {
	char *s;
	size_t len, cap;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if ((size_t)n < b->cap - b->len) {
			b->len += n;
			return;
		}
		b->cap = b->cap * 2 + 4096 + (size_t)n;
		b->s = realloc(b->s, b->cap);
	}
}

static void sb_tok(struct sbuf *b, const struct kp_json_tok *t)
{
	sb_printf(b, "%d@%lld d%d e%d [%.*s]\n", t->type, (long long)t->off, t->depth, t->escaped,
		  (int)t->len, t->s ? t->s : "");
}

/* Reads 1 to 7 bytes at a time, so tokens straddle every possible refill boundary. */
struct trickle {
	const char *s;
	size_t len, off;
	unsigned step;
};

static ssize_t trickle_read(void *ctx, void *buf, size_t cap)
{
	struct trickle *t = ctx;
	size_t n = 1 + t->step++ % 7;
	if (n > cap)
		n = cap;
	if (n > t->len - t->off)
		n = t->len - t->off;
	memcpy(buf, t->s + t->off, n);
	t->off += n;
	return n;
}

static ssize_t failing_read(void *ctx, void *buf, size_t cap)
{
	struct trickle *t = ctx;
	if (t->off >= t->len)
		return -1;
	return trickle_read(ctx, buf, cap);
}

/* Walk every token; returns the final type and the stream as text in @b (may be NULL). */
static enum kp_json_type walk(struct kp_json *p, struct sbuf *b)
{
	struct kp_json_tok t;
	enum kp_json_type ty;
	long guard = 0;
	do {
		ty = json_next(p, &t);
		if (b)
			sb_tok(b, &t);
		assert_true(++guard < 100000000);
	} while (ty != JT_END && ty != JT_ERROR);
	if (ty == JT_ERROR && b)
		sb_printf(b, "error %s @%lld eof=%d\n", p->err, (long long)p->err_off, p->err_eof);
	return ty;
}

static enum kp_json_type walk_mem(const char *s, size_t len, struct sbuf *b)
{
	struct kp_json p;
	json_init_mem(&p, s, len);
	enum kp_json_type ty = walk(&p, b);
	json_free(&p);
	return ty;
}

static enum kp_json_type walk_trickle(const char *s, size_t len, size_t window, struct sbuf *b)
{
	struct kp_json p;
	struct trickle tr = { s, len, 0, 0 };
	json_init(&p, trickle_read, &tr, window);
	enum kp_json_type ty = walk(&p, b);
	json_free(&p);
	return ty;
}

/* Calls @fn for every JSONTestSuite file whose name starts with @prefix. */
static int each_suite_file(const char *prefix,
			   void (*fn)(const char *name, const char *s, size_t len))
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/jsontestsuite/test_parsing", testdata());
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *de;
	int n = 0;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
			continue;
		char path[8192];
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		size_t len;
		char *s = slurp(path, &len);
		fn(de->d_name, s, len);
		free(s);
		n++;
	}
	closedir(d);
	return n;
}

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

static unsigned rnd(unsigned *x)
{
	*x = *x * 1103515245u + 12345u;
	return (*x >> 16) & 0x7fff;
}

/*
 * A trace-like document with the awkward cases: escaped quotes and brackets in strings,
 * backslash runs before quotes, long strings, deep nesting, every number form, CRLF.
 */
static char *gen_doc(size_t *len, unsigned seed, int nevents)
{
	struct sbuf b = { 0 };
	unsigned x = seed;
#define RND() rnd(&x)
	sb_printf(&b, "{\"schemaVersion\": 1,\r\n \"traceEvents\": [\n");
	for (int e = 0; e < nevents; e++) {
		sb_printf(&b, "%s  {\n    \"ph\": \"X\", \"cat\": \"%s\",", e ? ",\n" : "",
			  RND() % 3 ? "kernel" : "python_function");
		sb_printf(&b, " \"name\": \"op\\\"%d[{\\\\\",", e);
		sb_printf(&b, " \"ts\": %u.%03u, \"dur\": %ue%d,", RND() * 1000 + 7, RND() % 1000,
			  RND() % 50, (int)(RND() % 4));
		sb_printf(&b, "\t\"x\": -%u.5E-2,\n", RND());
		unsigned d0 = RND(), d1 = RND();
		sb_printf(&b, "    \"args\": {\"Input Dims\": [[%u, %u], [], [[1]]],", d0, d1);
		sb_printf(&b, " \"s\": \"\\\\\\\\\", \"u\": \"\\u00e9\\ud83d\\ude00\",");
		sb_printf(&b, " \"b\": [true,false,null,{},[]]");
		if (RND() % 4 == 0) {
			/* brackets, backslash runs and escaped quotes inside a long string */
			static const char set[] = "ab{}[] x.:,";
			static const char *const esc[] = { "\\\"", "\\\\", "\\\\\\\"" };
			sb_printf(&b, ", \"long\": \"");
			int n = RND() % 300;
			for (int k = 0; k < n; k++) {
				unsigned r = RND() % 16;
				if (r < 3)
					sb_printf(&b, "%s", esc[r]);
				sb_printf(&b, "%c", set[k % (sizeof(set) - 1)]);
			}
			sb_printf(&b, "\\\"\\\\\"");
		}
		if (RND() % 8 == 0) {
			sb_printf(&b, ", \"deep\": ");
			int d = RND() % 40;
			for (int k = 0; k < d; k++)
				sb_printf(&b, k % 2 ? "{\"k\":" : "[");
			sb_printf(&b, "0");
			for (int k = d - 1; k >= 0; k--)
				sb_printf(&b, k % 2 ? "}" : "]");
		}
		sb_printf(&b, "}");
		if (RND() % 5 == 0)
			sb_printf(&b, ", \"skiprest\": 1, \"after\": [\"]\", \"}\", %s]",
				  "{\"a\\\\\": [\"[\"]}");
		sb_printf(&b, "\n  }");
	}
	sb_printf(&b, "\n],\n\"tail\": \"\\\\\"}\n");
#undef RND
	*len = b.len;
	return b.s;
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

/*
 * Walk @s recording tokens; the value of every "args" key is passed over and every object
 * holding a "skiprest" key is abandoned there.  With @fast the tokenizer's skips do it,
 * otherwise json_next() walks over the same bytes.
 */
static void walk_skipping(const char *s, size_t len, size_t window, int fast, struct sbuf *b)
{
	struct kp_json p;
	struct trickle tr = { s, len, 0, 0 };
	struct kp_json_tok t;
	if (window)
		json_init(&p, trickle_read, &tr, window);
	else
		json_init_mem(&p, s, len);
	for (;;) {
		enum kp_json_type ty = json_next(&p, &t);
		sb_tok(b, &t);
		assert_int_not_equal(ty, JT_ERROR);
		if (ty == JT_END)
			break;
		if (ty != JT_KEY)
			continue;
		int args = t.len == 4 && memcmp(t.s, "args", 4) == 0;
		int rest = t.len == 8 && memcmp(t.s, "skiprest", 8) == 0;
		if (!args && !rest)
			continue;
		if (fast) {
			assert_int_equal(args ? json_skip(&p) : json_skip_rest(&p), 0);
			continue;
		}
		/* args: the value ends at the key's depth; skiprest: its object's close */
		int stop = args ? t.depth : t.depth - 1;
		if (args) {
			ty = json_next(&p, &t);
			assert_int_not_equal(ty, JT_ERROR);
			if (ty != JT_OBJ && ty != JT_ARR)
				continue;
		}
		do {
			ty = json_next(&p, &t);
			assert_int_not_equal(ty, JT_ERROR);
		} while (t.depth != stop);
	}
	json_free(&p);
}

static void json_skip_lands_where_walking_does(void **state)
{
	(void)state;
	size_t len;
	char *s = gen_doc(&len, 3, 400);
	struct sbuf a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };
	walk_skipping(s, len, 0, 0, &a);
	walk_skipping(s, len, 0, 1, &b);
	assert_string_equal(a.s, b.s);
	walk_skipping(s, len, 16, 1, &c);
	assert_string_equal(a.s, c.s);
	walk_skipping(s, len, 200, 1, &d);
	assert_string_equal(a.s, d.s);
	free(a.s);
	free(b.s);
	free(c.s);
	free(d.s);
	free(s);
}

static void json_skip_passes_over_scalars_and_array_elements(void **state)
{
	(void)state;
	const char *s = "[\"a\\\"]\", 12.5, {\"x\":[1,{}]}, [[]], null, 9]";
	struct kp_json p;
	struct kp_json_tok t;
	json_init_mem(&p, s, strlen(s));
	assert_int_equal(json_next(&p, &t), JT_ARR);
	for (int k = 0; k < 5; k++)
		assert_int_equal(json_skip(&p), 0);
	assert_int_equal(json_next(&p, &t), JT_NUM);
	assert_int_equal(t.off, (int64_t)(strchr(s, '9') - s));
	assert_int_equal(json_next(&p, &t), JT_ARR_END);
	assert_int_equal(json_next(&p, &t), JT_END);
	json_free(&p);

	/* no value where the array ends: a caller bug, reported as such */
	json_init_mem(&p, "[]", 2);
	assert_int_equal(json_next(&p, &t), JT_ARR);
	assert_int_equal(json_skip(&p), -1);
	assert_string_equal(p.err, "json_skip() where no value starts");
	json_free(&p);
}

static void json_skip_rest_closes_the_current_container(void **state)
{
	(void)state;
	const char *s = "{\"a\": {\"b\": [1, \"}\", {\"c\": []}], \"d\": 2}, \"e\": 3}";
	struct kp_json p;
	struct kp_json_tok t;
	json_init_mem(&p, s, strlen(s));
	assert_int_equal(json_next(&p, &t), JT_OBJ);
	assert_int_equal(json_next(&p, &t), JT_KEY);
	assert_int_equal(json_next(&p, &t), JT_OBJ);
	assert_int_equal(json_next(&p, &t), JT_KEY);
	assert_int_equal(json_next(&p, &t), JT_ARR);
	assert_int_equal(json_next(&p, &t), JT_NUM);
	assert_int_equal(p.depth, 3);
	assert_int_equal(json_skip_rest(&p), 0); /* the array */
	assert_int_equal(p.depth, 2);
	assert_int_equal(json_next(&p, &t), JT_KEY);
	assert_int_equal(t.len, 1);
	assert_int_equal(t.s[0], 'd');
	assert_int_equal(json_skip_rest(&p), 0); /* from before "d"'s value */
	assert_int_equal(json_next(&p, &t), JT_KEY);
	assert_int_equal(t.s[0], 'e');
	assert_int_equal(json_skip_rest(&p), 0); /* the top-level object */
	assert_int_equal(p.depth, 0);
	assert_int_equal(json_next(&p, &t), JT_END);
	json_free(&p);
}

static void json_skip_rejects_broken_structure(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		const char *err;
		int64_t off;
		int eof;
	} c[] = {
		{ "[1, {\"a\": 2]]", "unmatched ']'", 11, 0 },
		{ "[[1}", "unmatched '}'", 3, 0 },
		{ "[1, \"]", "unexpected end of input", 6, 1 },
		{ "[1, \"\\\"]\"", "unexpected end of input", 9, 1 },
		{ "{\"a\": [", "unexpected end of input", 7, 1 },
		{ "[1] x", "trailing characters after JSON value", 4, 0 },
	};
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		for (size_t w = 0; w < 2; w++) {
			struct kp_json p;
			struct trickle tr = { c[k].in, strlen(c[k].in), 0, 0 };
			if (w)
				json_init(&p, trickle_read, &tr, 16);
			else
				json_init_mem(&p, c[k].in, strlen(c[k].in));
			if (json_skip(&p) == 0)
				walk(&p, NULL);
			assert_non_null(p.err);
			if (strcmp(p.err, c[k].err) != 0 || p.err_off != c[k].off ||
			    p.err_eof != c[k].eof)
				fail_msg("'%s': got '%s' @%lld eof=%d", c[k].in, p.err,
					 (long long)p.err_off, p.err_eof);
			json_free(&p);
		}
	}
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

/* ---- strings and numbers ---- */

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

static void json_converts_microseconds_to_exact_nanoseconds(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		int r;
		int64_t ns;
	} c[] = {
		{ "4795881956492.880", 0, 4795881956492880LL },
		{ "1712195495505583.0", 0, 1712195495505583000LL },
		{ "12", 0, 12000 },
		{ "6.241", 0, 6241 },
		{ "6.2419", 0, 6241 },
		{ "0.0005", 0, 0 },
		{ "-0.0005", 0, 0 },
		{ "-3", 0, -3000 },
		{ "-6.2419", 0, -6241 },
		{ "1.5e3", 0, 1500000 },
		{ "1.5E+3", 0, 1500000 },
		{ "25e-1", 0, 2500 },
		{ "1e-4", 0, 0 },
		{ "0", 0, 0 },
		{ "9223372036854775.807", 0, INT64_MAX },
		{ "9223372036854775.808", -1, 0 },
		{ "-9223372036854775.808", 0, INT64_MIN },
		{ "1e16", -1, 0 },
		{ "0e999999999999", 0, 0 },
		{ "1e-999999999999", 0, 0 },
		{ "123456789012345678901234567890e-20", 0, 1234567890123LL },
		{ "", -1, 0 },
		{ "1.", -1, 0 },
		{ "abc", -1, 0 },
		{ "1e", -1, 0 },
		/* each step of dec_scaled(): 16 integer digits (19 in ns) on the fast path and
		 * past it, a fraction beyond ns, empty parts, leading zeros */
		{ "1662490216123456", 0, 1662490216123456000LL },
		{ "1662490216123456.9", 0, 1662490216123456900LL },
		{ "9223372036854775", 0, 9223372036854775000LL },
		{ "9223372036854776", -1, 0 },
		{ "-9223372036854776", -1, 0 },
		{ "1.e3", -1, 0 },
		{ "-", -1, 0 },
		{ "1e+", -1, 0 },
		{ "00000000000000000000001", 0, 1000 },
	};
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		int64_t v = 0;
		int r = json_num_us_to_ns(c[k].in, strlen(c[k].in), &v);
		if (r != c[k].r || (r == 0 && v != c[k].ns))
			fail_msg("'%s': got %d %lld", c[k].in, r, (long long)v);
	}
}

static void json_converts_integers_exactly(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		int r;
		int64_t v;
	} c[] = {
		{ "0", 0, 0 },
		{ "-0", 0, 0 },
		{ "85017493504", 0, 85017493504LL },
		{ "9223372036854775807", 0, INT64_MAX },
		{ "-9223372036854775808", 0, INT64_MIN },
		{ "9223372036854775808", -1, 0 },
		{ "3.0", 0, 3 },
		{ "1e3", 0, 1000 },
		{ "1.25e2", 0, 125 },
		{ "1250e-1", 0, 125 },
		{ "1.5", -1, 0 },
		{ "1e-1", -1, 0 },
		{ "1e19", -1, 0 },
		{ "12x", -1, 0 },
		{ "1.00", 0, 1 },
		{ "1.50", -1, 0 },
		{ "1.0e1", 0, 10 },
		{ "-1e18", 0, -1000000000000000000LL },
		{ "12345678901234567.5", -1, 0 },
	};
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		int64_t v = 0;
		int r = json_num_i64(c[k].in, strlen(c[k].in), &v);
		if (r != c[k].r || (r == 0 && v != c[k].v))
			fail_msg("'%s': got %d %lld", c[k].in, r, (long long)v);
	}
	assert_true(json_num_double("2.5e-3", 6) == 2.5e-3);
}

/*
 * Walk with the fast calls where a parser of events uses them: json_key() where a member name
 * may come, json_next_int() for member values.  Numbers also get their converted value.
 */
static enum kp_json_type walk_fast(struct kp_json *p, struct sbuf *b)
{
	struct kp_json_tok t;
	enum kp_json_type ty = JT_END;
	char st[JSON_MAX_DEPTH + 2];
	int d = 0, n = 0;
	do {
		int in_obj = d > 0 && st[d - 1] == 'o';
		if (in_obj && ty != JT_KEY) {
			ty = json_key(p, &t);
		} else if (in_obj) {
			int64_t v = 0;
			int r = 7, us = n++ & 1;
			ty = json_next_int(p, &t, us, &v, &r);
			if (ty == JT_NUM) {
				int64_t w = 0;
				int rw = us ? json_num_us_to_ns(t.s, t.len, &w)
					    : json_num_i64(t.s, t.len, &w);
				if (r != rw || (r == 0 && v != w))
					fail_msg("'%.*s' us=%d: %d %lld, want %d %lld", (int)t.len,
						 t.s, us, r, (long long)v, rw, (long long)w);
			} else {
				assert_int_equal(r, 7);
			}
		} else {
			ty = json_next(p, &t);
		}
		if (ty == JT_OBJ || ty == JT_ARR)
			st[d++] = ty == JT_OBJ ? 'o' : 'a';
		else if (ty == JT_OBJ_END || ty == JT_ARR_END)
			d--;
		if (b)
			sb_tok(b, &t);
	} while (ty != JT_END && ty != JT_ERROR);
	if (ty == JT_ERROR && b)
		sb_printf(b, "error %s @%lld eof=%d\n", p->err, (long long)p->err_off, p->err_eof);
	return ty;
}

static void fast_one(const char *name, const char *s, size_t len)
{
	for (int tr = 0; tr < 2; tr++) {
		struct sbuf a = { 0 }, b = { 0 };
		struct kp_json p, q;
		struct trickle t1 = { s, len, 0, 0 }, t2 = { s, len, 0, 0 };
		if (tr) {
			json_init(&p, trickle_read, &t1, 16);
			json_init(&q, trickle_read, &t2, 16);
		} else {
			json_init_mem(&p, s, len);
			json_init_mem(&q, s, len);
		}
		walk(&p, &a);
		walk_fast(&q, &b);
		if (strcmp(a.s, b.s))
			fail_msg("%s (trickle %d): json_next:\n%s\nfast calls:\n%s", name, tr, a.s,
				 b.s);
		json_free(&p);
		json_free(&q);
		free(a.s);
		free(b.s);
	}
}

static void json_key_and_json_next_int_match_json_next(void **state)
{
	(void)state;
	assert_true(each_suite_file("y_", fast_one) > 0);
	assert_true(each_suite_file("n_", fast_one) > 0);
	assert_true(each_suite_file("i_", fast_one) > 0);
	/* numbers of every length and form, as member values */
	static const char *const frac[] = { "", ".0", ".5", ".25", ".880", ".8801", ".123456" };
	static const char *const ex[] = { "", "e3", "E-2", "e+1" };
	char doc[256];
	for (int neg = 0; neg < 2; neg++)
		for (int nd = 1; nd <= 20; nd++)
			for (size_t f = 0; f < sizeof(frac) / sizeof(*frac); f++)
				for (size_t e = 0; e < sizeof(ex) / sizeof(*ex); e++) {
					char num[64];
					int k = 0;
					if (neg)
						num[k++] = '-';
					for (int i = 0; i < nd; i++)
						num[k++] = i         ? '0' + (i * 7 + nd) % 10
							   : nd == 1 ? '0' + (int)(f % 10)
								     : '9' - nd % 9;
					num[k] = 0;
					int n = snprintf(doc, sizeof(doc),
							 "{\"a\":%s%s%s,\"b\" : %s%s%s}", num,
							 frac[f], ex[e], num, frac[f], ex[e]);
					fast_one(doc, doc, (size_t)n);
				}
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

/* ---- kernel levels: scalar, SSE2, AVX2 give the same tokens, errors and offsets ---- */

/* The levels this CPU runs (json_simd_set() caps at the best). */
static int levels(enum kp_json_simd *lv)
{
	int n = 0;
	for (int k = JSON_SIMD_SCALAR; k <= JSON_SIMD_AVX2; k++)
		if (json_simd_set((enum kp_json_simd)k) == (enum kp_json_simd)k)
			lv[n++] = (enum kp_json_simd)k;
	return n;
}

/*
 * Everything a caller sees of @s[0..len): with @mode 0 json_next() on every token; 1 the
 * fast calls (walk_fast); 2 json_next() with "args" values skipped and objects holding
 * "skiprest" abandoned there; 3 json_skip() of the whole document.  @window 0 reads it all
 * at once, else trickles it through a window that small.  Errors end the record.
 */
static void record(const char *s, size_t len, int mode, size_t window, struct sbuf *b)
{
	struct kp_json p;
	struct kp_json_tok t;
	struct trickle tr = { s, len, 0, 0 };
	if (window)
		json_init(&p, trickle_read, &tr, window);
	else
		json_init_mem(&p, s, len);
	enum kp_json_type ty = JT_END;
	if (mode == 0) {
		walk(&p, b);
	} else if (mode == 1) {
		walk_fast(&p, b);
	} else if (mode == 3) {
		if (json_skip(&p) == 0)
			walk(&p, b);
	} else {
		while ((ty = json_next(&p, &t)) != JT_END && ty != JT_ERROR) {
			sb_tok(b, &t);
			if (ty == JT_KEY && t.len == 4 && memcmp(t.s, "args", 4) == 0)
				json_skip(&p);
			else if (ty == JT_KEY && t.len == 8 && memcmp(t.s, "skiprest", 8) == 0)
				json_skip_rest(&p);
		}
	}
	sb_printf(b, "end %s @%lld eof=%d pos %lld\n", p.err ? p.err : "-", (long long)p.err_off,
		  p.err_eof, (long long)(p.base + (int64_t)p.pos));
	if (p.err) {
		int line, col;
		json_locate(&p, p.err_off, &line, &col);
		sb_printf(b, "at %d:%d\n", line, col);
	}
	json_free(&p);
}

/* record() of @s at every level, in every mode, whole and trickled: all the same. */
static void levels_agree(const char *what, const char *s, size_t len)
{
	static const size_t windows[] = { 0, 16, 100 };
	enum kp_json_simd lv[3];
	int n = levels(lv);
	for (int mode = 0; mode < 4; mode++) {
		for (size_t w = 0; w < sizeof(windows) / sizeof(*windows); w++) {
			struct sbuf ref = { 0 };
			json_simd_set(lv[0]);
			record(s, len, mode, windows[w], &ref);
			for (int k = 1; k < n; k++) {
				struct sbuf b = { 0 };
				json_simd_set(lv[k]);
				record(s, len, mode, windows[w], &b);
				if (strcmp(ref.s, b.s) != 0)
					fail_msg("%s: mode %d window %zu: %s:\n%s\n%s:\n%s", what,
						 mode, windows[w], json_simd_name(lv[0]), ref.s,
						 json_simd_name(lv[k]), b.s);
				free(b.s);
			}
			free(ref.s);
		}
	}
	json_simd_set(JSON_SIMD_AUTO);
}

static void json_levels_agree_on_escapes_across_block_boundaries(void **state)
{
	(void)state;
	/* escapes, backslash runs before quotes, brackets and \u in strings, placed at every
	 * offset around the 16-, 32- and 64-byte block edges of both the string scan and the
	 * skip scan (which starts at the '{' of "args") */
	static const char *const esc[] = {
		"\\\"",           "\\\\", "\\\\\\\"", "\\\\\\\\",   "\\u00e9",
		"\\ud83d\\ude00", "\\/",  "]}[{",     "\\\"]}\\\\", "\\n\\t\\r\\b\\f",
	};
	char doc[1024], pad[160];
	for (size_t e = 0; e < sizeof(esc) / sizeof(*esc); e++) {
		for (int at = 0; at < 140; at++) {
			memset(pad, 'x', (size_t)at);
			pad[at] = 0;
			int n = snprintf(doc, sizeof(doc),
					 "{\"k%s%s\": \"%s%s\", \"args\": {\"s\": \"%s%s]\", \"t\": "
					 "[1, {\"u\": \"%s\"}, \"%s%s\"]}, \"skiprest\": \"%s%s\", "
					 "\"z\": 1}",
					 pad + at / 2, esc[e], pad, esc[e], pad, esc[e], esc[e],
					 pad, esc[e], pad + at / 3, esc[e]);
			assert_true(n > 0 && (size_t)n < sizeof(doc));
			levels_agree(doc, doc, (size_t)n);
		}
	}
}

static void json_levels_agree_on_every_truncation(void **state)
{
	(void)state;
	size_t len;
	char *s = gen_doc(&len, 9, 3);
	for (size_t cut = 0; cut <= len; cut++) {
		char *c = malloc(cut + 1);
		memcpy(c, s, cut);
		levels_agree("truncated", c, cut);
		free(c);
	}
	free(s);
}

static void json_levels_agree_on_invalid_utf8_and_control_bytes(void **state)
{
	(void)state;
	/* not UTF-8 (accepted: not validated), DEL, and control bytes (errors in strings,
	 * unchecked inside skipped values) at every offset of a key, a value and a skip */
	static const char bytes[] = { '\xff', '\xc0', '\x80', '\xe2', '\x7f',
				      '\x01', '\x1f', '\t',   '\n',   '\0' };
	char doc[512], str[96];
	for (size_t b = 0; b < sizeof(bytes); b++) {
		for (int at = 0; at < 70; at++) {
			memset(str, 'a', sizeof(str));
			str[at] = bytes[b];
			str[at + 1] = '\xa9';
			str[80] = 0;
			for (int where = 0; where < 3; where++) {
				int n;
				if (where == 0)
					n = snprintf(doc, sizeof(doc), "{\"%.80s\": 1}", str);
				else if (where == 1)
					n = snprintf(doc, sizeof(doc), "[\"%.80s\", 2]", str);
				else
					n = snprintf(doc, sizeof(doc),
						     "{\"args\": [\"%.80s\", {\"x\": \"%.80s\"}], \"b\": 2}",
						     str, str);
				/* snprintf stops at a NUL in str: put the byte back in by hand */
				for (int k = 0; k < n; k++)
					if (doc[k] == 'a' && k + 1 < n && doc[k + 1] == '\xa9' &&
					    bytes[b] == '\0')
						doc[k] = '\0';
				levels_agree("bytes", doc, (size_t)n);
			}
		}
	}
	/* and UTF-8 that is not valid still passes at every level */
	enum kp_json_simd lv[3];
	int n = levels(lv);
	for (int k = 0; k < n; k++) {
		json_simd_set(lv[k]);
		assert_int_equal(walk_mem("[\"\xff\xfe\xc0\x80\"]", 8, NULL), JT_END);
	}
	json_simd_set(JSON_SIMD_AUTO);
}

static void json_levels_agree_on_mutated_input(void **state)
{
	(void)state;
	size_t len;
	char *s = gen_doc(&len, 11, 6);
	char *m = malloc(len);
	unsigned x = 7;
	static const char bytes[] = "{}[]\",:\\ 0-.eEtfnu\x01\xff";
	for (int k = 0; k < 400; k++) {
		memcpy(m, s, len);
		for (int j = 0; j < 1 + k % 4; j++) {
			x = x * 1103515245u + 12345u;
			m[(x >> 8) % len] = bytes[(x >> 20) % (sizeof(bytes) - 1)];
		}
		levels_agree("mutated", m, k % 7 ? len : (x >> 4) % len);
	}
	free(m);
	free(s);
}

static void json_levels_count_newlines_alike(void **state)
{
	(void)state;
	enum kp_json_simd lv[3];
	int nl = levels(lv);
	char *buf = malloc(9000);
	unsigned x = 3;
	for (size_t len = 0; len < 9000; len += len < 700 ? 1 : 251) {
		for (size_t i = 0; i < len; i++) {
			x = x * 1103515245u + 12345u;
			/* dense runs (a lane's 8-bit counter must not wrap) and sparse stretches */
			buf[i] = (len / 7) % 3 == 0 || (x >> 16) % 5 == 0 ? '\n' : (char)(x >> 24);
		}
		size_t off = len % 33 < len ? len % 33 : 0;
		int64_t want = 0;
		for (size_t i = off; i < len; i++)
			want += buf[i] == '\n';
		for (int k = 0; k < nl; k++) {
			json_simd_set(lv[k]);
			if (json_count_nl(buf + off, len - off) != want)
				fail_msg("%s: %zu bytes at %zu", json_simd_name(lv[k]), len - off,
					 off);
		}
	}
	free(buf);
	json_simd_set(JSON_SIMD_AUTO);
}

static void json_simd_picks_the_level_from_the_cpu_or_kprof_simd(void **state)
{
	(void)state;
	enum kp_json_simd lv[3];
	int n = levels(lv);
	assert_int_equal(lv[0], JSON_SIMD_SCALAR);
#if defined(__x86_64__)
	assert_true(n >= 2); /* SSE2 is x86-64's baseline */
#endif
	enum kp_json_simd best = lv[n - 1];
	assert_int_equal(json_simd_set(JSON_SIMD_AVX2), best); /* capped */
	struct kp_json p;
	json_simd_set(JSON_SIMD_SCALAR);
	json_init_mem(&p, "1", 1);
	assert_int_equal(p.simd, JSON_SIMD_SCALAR);
	json_free(&p);
	assert_string_equal(json_simd_name(JSON_SIMD_SSE2), "sse2");

	setenv("KPROF_SIMD", "scalar", 1);
	assert_int_equal(json_simd_set(JSON_SIMD_AUTO), JSON_SIMD_SCALAR);
	assert_int_equal(json_simd(), JSON_SIMD_SCALAR);
	setenv("KPROF_SIMD", "avx2", 1);
	assert_int_equal(json_simd_set(JSON_SIMD_AUTO), best);
	setenv("KPROF_SIMD", "fast", 1); /* not a level: the CPU's best */
	assert_int_equal(json_simd_set(JSON_SIMD_AUTO), best);
	unsetenv("KPROF_SIMD");
	assert_int_equal(json_simd_set(JSON_SIMD_AUTO), best);
}

/* Group setups: every test of the main list runs once per level. */
static int at_level(enum kp_json_simd level)
{
	return json_simd_set(level) == level ? 0 : -1;
}

static int at_scalar(void **state)
{
	(void)state;
	return at_level(JSON_SIMD_SCALAR);
}

static int at_sse2(void **state)
{
	(void)state;
	return at_level(JSON_SIMD_SSE2);
}

static int at_avx2(void **state)
{
	(void)state;
	return at_level(JSON_SIMD_AVX2);
}

static int at_auto(void **state)
{
	(void)state;
	json_simd_set(JSON_SIMD_AUTO);
	return 0;
}

/* issue 23 item 17: a skipped string of any length leaves the window its size */
static void json_skip_streams_a_string_longer_than_the_window(void **state)
{
	(void)state;
	size_t n = 1u << 20;
	char *s = malloc(n + 64);
	assert_non_null(s);
	size_t body = (size_t)sprintf(s, "{\"junk\": \"");
	memset(s + body, 'a', n);
	for (size_t i = body + 100; i + 6 < body + n; i += 4099)
		memcpy(s + i, "\\u00e9", 6); /* escapes across every refill boundary */
	size_t k = body + n;
	k += (size_t)sprintf(s + k, "\", \"x\": 7}");
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1)
			s[body + 500001] = '\x01';
		struct trickle t = { s, k, 0, 0 };
		struct kp_json p;
		struct kp_json_tok tk;
		json_init(&p, trickle_read, &t, 256);
		assert_int_equal(json_next(&p, &tk), JT_OBJ);
		assert_int_equal(json_key(&p, &tk), JT_KEY);
		if (pass == 1) {
			/* a control byte deep inside is still found and located */
			assert_int_equal(json_skip(&p), -1);
			assert_string_equal(p.err, "control character in string");
			assert_int_equal(p.err_off, (int64_t)(body + 500001));
			int line, col;
			json_locate(&p, p.err_off, &line, &col);
			assert_int_equal(line, 1);
			assert_int_equal(col, (int)(body + 500001 + 1));
			json_free(&p);
			break;
		}
		assert_int_equal(json_skip(&p), 0);
		assert_int_equal(p.cap, 256); /* the window never grew for the string */
		assert_int_equal(json_key(&p, &tk), JT_KEY);
		assert_int_equal(tk.len, 1);
		assert_int_equal(json_next(&p, &tk), JT_NUM);
		assert_int_equal(tk.off, (int64_t)(k - 2));
		assert_int_equal(json_next(&p, &tk), JT_OBJ_END);
		assert_int_equal(json_next(&p, &tk), JT_END);
		json_free(&p);
	}
	free(s);
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
		cmocka_unit_test(json_key_and_json_next_int_match_json_next),
		cmocka_unit_test(json_counts_long_runs_of_newlines),
		cmocka_unit_test(json_skip_lands_where_walking_does),
		cmocka_unit_test(json_skip_passes_over_scalars_and_array_elements),
		cmocka_unit_test(json_skip_rest_closes_the_current_container),
		cmocka_unit_test(json_skip_rejects_broken_structure),
		cmocka_unit_test(json_reports_truncation_at_every_cut),
		cmocka_unit_test(json_never_crashes_on_mutated_input),
		cmocka_unit_test(json_locates_lines_and_columns),
		cmocka_unit_test(json_locates_exactly_after_the_window_moved),
		cmocka_unit_test(json_unescapes_to_utf8),
		cmocka_unit_test(json_unescape_copies_malformed_escapes_as_they_are),
		cmocka_unit_test(json_converts_microseconds_to_exact_nanoseconds),
		cmocka_unit_test(json_converts_integers_exactly),
		cmocka_unit_test(json_locates_errors_in_the_bad_fixtures),
		cmocka_unit_test(json_parses_a_chunk_as_elements_of_an_array),
		cmocka_unit_test(json_resumes_at_an_offset_with_exact_locations),
		cmocka_unit_test(json_keeps_the_pinned_offset_locatable),
		cmocka_unit_test(json_skip_streams_a_string_longer_than_the_window),
		cmocka_unit_test(json_str_capped_cuts_long_strings_and_skips_their_rest),
	};
	const struct CMUnitTest across[] = {
		cmocka_unit_test(json_levels_agree_on_escapes_across_block_boundaries),
		cmocka_unit_test(json_levels_agree_on_every_truncation),
		cmocka_unit_test(json_levels_agree_on_invalid_utf8_and_control_bytes),
		cmocka_unit_test(json_levels_agree_on_mutated_input),
		cmocka_unit_test(json_levels_count_newlines_alike),
		cmocka_unit_test(json_simd_picks_the_level_from_the_cpu_or_kprof_simd),
	};
	int fail = cmocka_run_group_tests_name("json, scalar", tests, at_scalar, at_auto);
	if (json_simd_set(JSON_SIMD_SSE2) == JSON_SIMD_SSE2)
		fail += cmocka_run_group_tests_name("json, sse2", tests, at_sse2, at_auto);
	if (json_simd_set(JSON_SIMD_AVX2) == JSON_SIMD_AVX2)
		fail += cmocka_run_group_tests_name("json, avx2", tests, at_avx2, at_auto);
	else
		printf("json: this CPU has no AVX2: that level is not tested here\n");
	fail += cmocka_run_group_tests_name("json, across levels", across, at_auto, NULL);
	return fail;
}
