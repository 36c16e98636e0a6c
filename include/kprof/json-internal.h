/*
 * json-internal.h — what the parts of the JSON tokenizer share (not for other modules): the
 * SIMD headers and the AVX2 target attribute, the per-byte character tests and the 8-digit
 * SWAR helpers (static inline: they run per byte or per token in more than one file), and
 * the calls from src/ingest/json.c (the pull tokenizer: window, tokens, skipping, json_next_int)
 * into src/ingest/json-scan.c (the scalar/SSE2/AVX2 kernels: level choice, newline counts, the
 * bracket scanner of json_skip).  src/ingest/json-num.c (numbers) and src/ingest/json-str.c
 * (json_unescape) use only the inline helpers.  Calls go one way, json.c -> the others.
 */
#ifndef KPROF_JSON_INTERNAL_H
#define KPROF_JSON_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kprof/json.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
/* AVX2 kernels are compiled with a target attribute and chosen at run time */
#define HAVE_AVX2 1
#include <immintrin.h>
#define AVX2_FN __attribute__((target("avx2")))
#endif

/* Error paths are cold and out of line, so the token paths keep their registers. */
#define COLD __attribute__((cold, noinline))
/*
 * The token calls start on a 64-byte line: where they fall otherwise moves with the code
 * before them, and json_next() at 32 mod 64 measured 8% slower (bench/RESULTS.md, json split).
 */
#define HOT_ALIGN __attribute__((aligned(64)))

static inline int is_hex(int c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static inline int is_digit(int c)
{
	return c >= '0' && c <= '9';
}


/* ---- numbers ---- */

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SWAR_DIGITS 1 /* 8 ASCII digits per 64-bit load (simdjson's parse_eight_digits) */
#endif

#ifdef SWAR_DIGITS
static inline uint64_t load8(const char *s)
{
	uint64_t v;
	memcpy(&v, s, 8);
	return v;
}

/* The 8 bytes of @v (little-endian) are all '0'..'9' (simdjson's is_made_of_eight_digits). */
static inline int all8_digits(uint64_t v)
{
	return ((v & 0xf0f0f0f0f0f0f0f0ULL) |
		(((v + 0x0606060606060606ULL) & 0xf0f0f0f0f0f0f0f0ULL) >> 4)) ==
	       0x3333333333333333ULL;
}

/* The value of 8 ASCII digits loaded little-endian (first digit in the low byte). */
static inline uint64_t parse8(uint64_t v)
{
	const uint64_t mask = 0x000000ff000000ffULL;
	const uint64_t mul1 = 100 + (1000000ULL << 32);
	const uint64_t mul2 = 1 + (10000ULL << 32);
	v -= 0x3030303030303030ULL;
	v = v * 10 + (v >> 8);
	return ((v & mask) * mul1 + ((v >> 16) & mask) * mul2) >> 32;
}
#endif


/* '\n' count in @s[0..n) with the kernels of @level (enum kp_json_simd). */
int64_t json_count_nl_at(int level, const char *s, size_t n);

/*
 * fill() of src/ingest/json.c: more input past p->end keeping buf[keep..end); returns the bytes
 * added, and the kept bytes move toward the front by *shift.
 */
typedef size_t (*json_fill_fn)(struct kp_json *p, size_t keep, int grow, size_t *shift);

/*
 * Scan from buf[i] to the bracket that brings the relative depth @d back to 0 with the
 * block kernels of p->simd (src/ingest/json-scan.c); @st holds the open brackets (st[0..d)), at
 * most @limit deep.  0: p->pos is past that bracket.  -1: an error at *at, *why its message,
 * or *why NULL when the input ended (or could not be read) first.
 */
int json_scan_close(struct kp_json *p, size_t i, int d, unsigned char *st, int limit,
		    json_fill_fn fill, const char **why, int64_t *at);

#endif
