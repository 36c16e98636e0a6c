/*
 * fuzz-json.c — libFuzzer harness for json.c (after jq's tests/jq_fuzz_parse.c).
 *
 * Every input is run three ways:
 *   1. json_init_mem() and json_next() over all tokens; each string is unescaped
 *      and each number converted, with their contracts checked.
 *   2. the same walk over a tiny window (16 bytes) fed by a read callback that
 *      returns 1..7 bytes at a time; the token stream (type, text, offset, depth,
 *      escaped) and the error (reason, offset, eof flag) must equal walk 1's.
 *   3. json_skip() / json_skip_rest() at pseudo-random points (seeded from the
 *      input), once over memory and once over the tiny window: both must agree.
 * Build and run: tests/fuzz/run.sh json.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/json.h"

#define FUZZ_NAME "fuzz-json"
#include "fuzz.h"

/* A tiny-chunk reader: 1..7 bytes per call, chunk sizes from a xorshift seed. */
struct tiny_src {
	const uint8_t *s;
	size_t len, off;
	uint64_t rng;
};

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static ssize_t tiny_read(void *ctx, void *buf, size_t cap)
{
	struct tiny_src *t = ctx;
	size_t n = 1 + xorshift(&t->rng) % 7;
	if (n > cap)
		n = cap;
	if (n > t->len - t->off)
		n = t->len - t->off;
	memcpy(buf, t->s + t->off, n);
	t->off += n;
	return (ssize_t)n;
}

static uint64_t seed_of(const uint8_t *d, size_t n)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ d[i]) * 1099511628211ull;
	return h | 1;
}

/* One recorded token (text copied: the slices die with the next call). */
struct rec {
	enum kp_json_type type;
	char *s;
	size_t len;
	int escaped;
	int64_t off;
	int depth;
};

struct stream {
	struct rec *r;
	size_t n, cap;
	const char *err;
	int64_t err_off;
	int err_eof;
	int skip_rc; /* mode 3: OR of skip return codes */
};

static void push(struct stream *st, const struct kp_json_tok *t)
{
	if (st->n == st->cap) {
		st->cap = st->cap ? 2 * st->cap : 64;
		st->r = realloc(st->r, st->cap * sizeof(*st->r));
		CHECK(st->r);
	}
	struct rec *r = &st->r[st->n++];
	r->type = t->type;
	r->len = 0;
	r->s = NULL;
	if (t->type == JT_KEY || t->type == JT_STR || t->type == JT_NUM) {
		r->len = t->len;
		r->s = malloc(t->len + 1);
		CHECK(r->s);
		memcpy(r->s, t->s, t->len);
		r->s[t->len] = 0;
	}
	r->escaped = t->escaped;
	r->off = t->off;
	r->depth = t->depth;
}

static void stream_free(struct stream *st)
{
	for (size_t i = 0; i < st->n; i++)
		free(st->r[i].s);
	free(st->r);
}

static void check_token(const struct kp_json *p, const struct kp_json_tok *t, size_t inlen)
{
	int line, col;

	CHECK(t->off >= 0 && (size_t)t->off <= inlen);
	json_locate(p, t->off, &line, &col);
	CHECK(line >= 1 && col >= 1);
	if (t->type == JT_KEY || t->type == JT_STR) {
		CHECK((size_t)t->off + t->len + 2 <= inlen);
		static const size_t caps[] = { 1, 2, 3, 4, 5, 8, 4096 };
		for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
			char out[4096 + 8];
			memset(out, 'X', sizeof(out));
			size_t n = json_unescape(t->s, t->len, out, caps[i]);
			CHECK(n < caps[i]);
			CHECK(out[n] == 0);
			CHECK(out[caps[i]] == 'X'); /* nothing written past cap */
			if (!t->escaped && t->len < caps[i])
				CHECK(n == t->len && memcmp(out, t->s, n) == 0);
		}
	} else if (t->type == JT_NUM) {
		CHECK(t->len > 0 && (size_t)t->off + t->len <= inlen);
		int64_t i64 = 0, ns = 0;
		int ri = json_num_i64(t->s, t->len, &i64);
		int rn = json_num_us_to_ns(t->s, t->len, &ns);
		(void)json_num_double(t->s, t->len);
		/* an integral value that fits in ns also converts exactly */
		if (ri == 0 && rn == 0 && i64 > -9000000000000000ll && i64 < 9000000000000000ll)
			CHECK(ns == i64 * 1000);
	}
}

/* Walk every token; record them unless @st is NULL. */
static void walk(struct kp_json *p, struct stream *st, size_t inlen)
{
	struct kp_json_tok t;
	enum kp_json_type ty;
	long guard = 0;

	while ((ty = json_next(p, &t)) != JT_END && ty != JT_ERROR) {
		CHECK(++guard <= (long)inlen + 2); /* every token consumes a byte */
		check_token(p, &t, inlen);
		push(st, &t);
	}
	/* sticky */
	struct kp_json_tok t2;
	CHECK(json_next(p, &t2) == ty);
	st->err = ty == JT_ERROR ? p->err : NULL;
	st->err_off = ty == JT_ERROR ? p->err_off : -1;
	st->err_eof = ty == JT_ERROR ? p->err_eof : 0;
	if (ty == JT_ERROR) {
		CHECK(p->err != NULL);
		CHECK(p->err_off >= 0 && (size_t)p->err_off <= inlen);
		if (p->err_eof)
			CHECK((size_t)p->err_off == inlen);
	}
}

/* Mode 3: tokens interleaved with skips at points chosen by @rng. */
static void walk_skips(struct kp_json *p, struct stream *st, uint64_t rng, size_t inlen)
{
	struct kp_json_tok t;
	enum kp_json_type ty = JT_END;
	long guard = 0;

	for (;;) {
		CHECK(++guard <= 2 * (long)inlen + 4);
		uint64_t r = xorshift(&rng) % 8;
		if (r == 0 || r == 1) {
			struct kp_json_tok sk = { .type = 100 + (int)r };
			int rc = r == 0 ? json_skip(p) : json_skip_rest(p);
			sk.off = rc;
			sk.depth = p->depth;
			push(st, &sk);
			if (rc < 0) {
				CHECK(p->err != NULL);
				ty = JT_ERROR;
				break;
			}
			continue;
		}
		ty = json_next(p, &t);
		if (ty == JT_END || ty == JT_ERROR)
			break;
		check_token(p, &t, inlen);
		push(st, &t);
	}
	st->err = ty == JT_ERROR ? p->err : NULL;
	st->err_off = ty == JT_ERROR ? p->err_off : -1;
	st->err_eof = ty == JT_ERROR ? p->err_eof : 0;
	if (ty == JT_ERROR)
		CHECK(p->err_off >= 0 && (size_t)p->err_off <= inlen);
}

static void same(const struct stream *a, const struct stream *b)
{
	CHECK(a->n == b->n);
	for (size_t i = 0; i < a->n; i++) {
		const struct rec *x = &a->r[i], *y = &b->r[i];
		CHECK(x->type == y->type);
		CHECK(x->len == y->len);
		CHECK(x->len == 0 || memcmp(x->s, y->s, x->len) == 0);
		CHECK(x->escaped == y->escaped || (x->type != JT_KEY && x->type != JT_STR));
		CHECK(x->off == y->off);
		CHECK(x->depth == y->depth);
	}
	CHECK((a->err == NULL) == (b->err == NULL));
	if (a->err) {
		CHECK(strcmp(a->err, b->err) == 0);
		CHECK(a->err_off == b->err_off);
		CHECK(a->err_eof == b->err_eof);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t seed = seed_of(data, size);
	struct kp_json p;
	struct stream a = { 0 }, b = { 0 };

	/* 1. memory */
	json_init_mem(&p, (const char *)data, size);
	walk(&p, &a, size);
	json_free(&p);

	/* 2. tiny window, tiny reads */
	struct tiny_src ts = { data, size, 0, seed };
	json_init(&p, tiny_read, &ts, 16);
	walk(&p, &b, size);
	json_free(&p);
	same(&a, &b);
	stream_free(&a);
	stream_free(&b);

	/* 3. skips, memory vs tiny window */
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	json_init_mem(&p, (const char *)data, size);
	walk_skips(&p, &a, seed * 3, size);
	json_free(&p);
	struct tiny_src ts2 = { data, size, 0, seed * 5 };
	json_init(&p, tiny_read, &ts2, 16);
	walk_skips(&p, &b, seed * 3, size);
	json_free(&p);
	same(&a, &b);
	stream_free(&a);
	stream_free(&b);
	return 0;
}
