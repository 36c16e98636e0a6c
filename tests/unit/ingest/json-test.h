/*
 * json-test.h — what the tokenizer suites (test-json.c, test-json-str.c, test-json-num.c,
 * test-json-scan.c; src/ingest/json.c and json-*.c) share: reading testdata/, a growing text
 * buffer of tokens, trickled and failing reads, whole-document walks, the JSONTestSuite file
 * loop, a generated trace-like document, and the group setups that run a suite once per kernel
 * level (scalar, SSE2, AVX2).
 */
#ifndef KPROF_TEST_JSON_H
#define KPROF_TEST_JSON_H

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

static inline const char *testdata(void)
{
	const char *d = getenv("KPROF_TESTDATA");
	return d ? d : "../../testdata";
}

static inline char *slurp(const char *path, size_t *len)
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

static inline void sb_printf(struct sbuf *b, const char *fmt, ...)
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

static inline void sb_tok(struct sbuf *b, const struct kp_json_tok *t)
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

static inline ssize_t trickle_read(void *ctx, void *buf, size_t cap)
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

/* Walk every token; returns the final type and the stream as text in @b (may be NULL). */
static inline enum kp_json_type walk(struct kp_json *p, struct sbuf *b)
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

static inline enum kp_json_type walk_mem(const char *s, size_t len, struct sbuf *b)
{
	struct kp_json p;
	json_init_mem(&p, s, len);
	enum kp_json_type ty = walk(&p, b);
	json_free(&p);
	return ty;
}

static inline enum kp_json_type walk_trickle(const char *s, size_t len, size_t window,
					     struct sbuf *b)
{
	struct kp_json p;
	struct trickle tr = { s, len, 0, 0 };
	json_init(&p, trickle_read, &tr, window);
	enum kp_json_type ty = walk(&p, b);
	json_free(&p);
	return ty;
}

/* Calls @fn for every JSONTestSuite file whose name starts with @prefix. */
static inline int each_suite_file(const char *prefix,
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

static inline unsigned rnd(unsigned *x)
{
	*x = *x * 1103515245u + 12345u;
	return (*x >> 16) & 0x7fff;
}

/*
 * A trace-like document with the awkward cases: escaped quotes and brackets in strings,
 * backslash runs before quotes, long strings, deep nesting, every number form, CRLF.
 */
static inline char *gen_doc(size_t *len, unsigned seed, int nevents)
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

/*
 * Walk with the fast calls where a parser of events uses them: json_key() where a member name
 * may come, json_next_int() for member values.  Numbers also get their converted value.
 */
static inline enum kp_json_type walk_fast(struct kp_json *p, struct sbuf *b)
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

/* Group setups: every test of the main list runs once per level. */
static inline int at_level(enum kp_json_simd level)
{
	return json_simd_set(level) == level ? 0 : -1;
}

static inline int at_scalar(void **state)
{
	(void)state;
	return at_level(JSON_SIMD_SCALAR);
}

static inline int at_sse2(void **state)
{
	(void)state;
	return at_level(JSON_SIMD_SSE2);
}

static inline int at_avx2(void **state)
{
	(void)state;
	return at_level(JSON_SIMD_AVX2);
}

static inline int at_auto(void **state)
{
	(void)state;
	json_simd_set(JSON_SIMD_AUTO);
	return 0;
}

/*
 * Run @tests once per level this CPU has, as groups "@suite, scalar", ", sse2", ", avx2" (the
 * levels' setups above); the failures are added to @fail.
 */
#define RUN_AT_LEVELS(fail, suite, tests)                                                      \
	do {                                                                                   \
		(fail) += cmocka_run_group_tests_name(suite ", scalar", tests, at_scalar,      \
						      at_auto);                                \
		if (json_simd_set(JSON_SIMD_SSE2) == JSON_SIMD_SSE2)                           \
			(fail) += cmocka_run_group_tests_name(suite ", sse2", tests, at_sse2, \
							      at_auto);                      \
		if (json_simd_set(JSON_SIMD_AVX2) == JSON_SIMD_AVX2)                           \
			(fail) += cmocka_run_group_tests_name(suite ", avx2", tests, at_avx2, \
							      at_auto);                      \
		else                                                                           \
			printf(suite ": this CPU has no AVX2: that level is not tested here\n"); \
	} while (0)

#endif /* KPROF_TEST_JSON_H */
