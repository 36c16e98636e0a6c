/*
 * json-scan.c — the tokenizer's block kernels at three levels, scalar C, SSE2 and AVX2
 * (chosen at run time: json_simd(), KPROF_SIMD): newline counts (json_locate(), the window's
 * line count) and the 64-byte bracket scanner behind json_skip() and json_skip_rest()
 * (simdjson's string masks).  Every level gives the same counts, offsets and errors
 * (test-json-scan compares them).  The per-token scanners (strings, digits) stay inline in
 * src/ingest/json.c; this file calls nothing there (json-internal.h).
 */
#include "kprof/json-internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- kernel levels ---- */

static int simd_level = -1; /* enum kp_json_simd; -1: not chosen yet */

static enum kp_json_simd simd_best(void)
{
#ifdef HAVE_AVX2
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2"))
		return JSON_SIMD_AVX2;
#endif
#ifdef __SSE2__
	return JSON_SIMD_SSE2;
#else
	return JSON_SIMD_SCALAR;
#endif
}

/* clang-format off */
static const char *const simd_names[] = {
	[JSON_SIMD_SCALAR] = "scalar", [JSON_SIMD_SSE2] = "sse2", [JSON_SIMD_AVX2] = "avx2",
};
/* clang-format on */

const char *json_simd_name(enum kp_json_simd level)
{
	return level >= JSON_SIMD_SCALAR && level <= JSON_SIMD_AVX2 ? simd_names[level] : "?";
}

/* KPROF_SIMD's level, capped at @best; @best when unset or not a level's name. */
static enum kp_json_simd simd_env(enum kp_json_simd best)
{
	const char *env = getenv("KPROF_SIMD");
	for (int k = JSON_SIMD_SCALAR; env && k < (int)best; k++)
		if (strcmp(env, simd_names[k]) == 0)
			return (enum kp_json_simd)k;
	return best;
}

enum kp_json_simd json_simd_set(enum kp_json_simd level)
{
	enum kp_json_simd best = simd_best();
	if (level == JSON_SIMD_AUTO)
		level = simd_env(best);
	else if (level < JSON_SIMD_SCALAR || level > best)
		level = best;
	__atomic_store_n(&simd_level, (int)level, __ATOMIC_RELAXED);
	return level;
}

enum kp_json_simd json_simd(void)
{
	int level = __atomic_load_n(&simd_level, __ATOMIC_RELAXED);
	return level >= 0 ? (enum kp_json_simd)level : json_simd_set(JSON_SIMD_AUTO);
}

/* ---- newline counts ---- */

static int64_t count_nl_scalar(const char *s, size_t n)
{
	int64_t c = 0;
	for (size_t i = 0; i < n; i++)
		c += s[i] == '\n';
	return c;
}

#ifdef __SSE2__
/* 16 bytes a compare, 64 a step in two accumulators, summed with psadbw. */
static int64_t count_nl_sse2(const char *s, size_t n)
{
	int64_t c = 0;
	size_t i = 0;
	const __m128i nl = _mm_set1_epi8('\n');
	while (n - i >= 16) {
		size_t stop = n - i > 255 * 16 ? i + 255 * 16 : n;
		__m128i acc = _mm_setzero_si128();
		/* each lane gains at most 255 in all */
		__m128i acc2 = _mm_setzero_si128();
		for (; i + 64 <= stop; i += 64) {
			__m128i e0 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(s + i)), nl);
			__m128i e1 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(s + i + 16)),
						    nl);
			__m128i e2 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(s + i + 32)),
						    nl);
			__m128i e3 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(s + i + 48)),
						    nl);
			acc = _mm_sub_epi8(acc, _mm_add_epi8(e0, e1));
			acc2 = _mm_sub_epi8(acc2, _mm_add_epi8(e2, e3));
		}
		acc = _mm_add_epi8(acc, acc2);
		for (; i + 16 <= stop; i += 16) {
			__m128i x = _mm_loadu_si128((const __m128i *)(s + i));
			acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(x, nl));
		}
		__m128i sad = _mm_sad_epu8(acc, _mm_setzero_si128());
		c += _mm_extract_epi16(sad, 0) + _mm_extract_epi16(sad, 4);
	}
	return c + count_nl_scalar(s + i, n - i);
}
#endif

#ifdef HAVE_AVX2
/* count_nl_sse2() with 32-byte compares. */
static AVX2_FN int64_t count_nl_avx2(const char *s, size_t n)
{
	int64_t c = 0;
	size_t i = 0;
	const __m256i nl = _mm256_set1_epi8('\n');
	while (n - i >= 32) {
		size_t stop = n - i > 255 * 32 ? i + 255 * 32 : n;
		__m256i acc = _mm256_setzero_si256(), acc2 = _mm256_setzero_si256();
		for (; i + 64 <= stop; i += 64) {
			__m256i e0 = _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(s + i)),
						       nl);
			__m256i e1 = _mm256_cmpeq_epi8(_mm256_loadu_si256(
							       (const __m256i *)(s + i + 32)),
						       nl);
			acc = _mm256_sub_epi8(acc, e0);
			acc2 = _mm256_sub_epi8(acc2, e1);
		}
		acc = _mm256_add_epi8(acc, acc2);
		for (; i + 32 <= stop; i += 32) {
			__m256i x = _mm256_loadu_si256((const __m256i *)(s + i));
			acc = _mm256_sub_epi8(acc, _mm256_cmpeq_epi8(x, nl));
		}
		__m256i sad = _mm256_sad_epu8(acc, _mm256_setzero_si256());
		c += _mm256_extract_epi64(sad, 0) + _mm256_extract_epi64(sad, 1) +
		     _mm256_extract_epi64(sad, 2) + _mm256_extract_epi64(sad, 3);
	}
	return c + count_nl_scalar(s + i, n - i);
}
#endif

int64_t json_count_nl_at(int level, const char *s, size_t n)
{
#ifdef HAVE_AVX2
	if (level >= JSON_SIMD_AVX2)
		return count_nl_avx2(s, n);
#endif
#ifdef __SSE2__
	if (level >= JSON_SIMD_SSE2)
		return count_nl_sse2(s, n);
#endif
	(void)level;
	return count_nl_scalar(s, n);
}

int64_t json_count_nl(const char *s, size_t n)
{
	return json_count_nl_at(json_simd(), s, n);
}


/* ---- the bracket scanner of json_skip() ---- */

/*
 * Bit i of *quote / *bslash / *brk set: byte i of @b is '"' / '\\' / a bracket; @b has 64
 * readable bytes.  '[' | 0x20 == '{' and ']' | 0x20 == '}': one compare pair finds all four.
 */
static inline void block_masks_scalar(const char *b, uint64_t *quote, uint64_t *bslash,
				      uint64_t *brk)
{
	uint64_t mq = 0, mb = 0, mk = 0;
	for (int k = 0; k < 64; k++) {
		unsigned char c = b[k];
		mq |= (uint64_t)(c == '"') << k;
		mb |= (uint64_t)(c == '\\') << k;
		mk |= (uint64_t)((c | 0x20) == '{' || (c | 0x20) == '}') << k;
	}
	*quote = mq;
	*bslash = mb;
	*brk = mk;
}

#ifdef __SSE2__
static inline void block_masks_sse2(const char *b, uint64_t *quote, uint64_t *bslash, uint64_t *brk)
{
	const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
	const __m128i lc = _mm_set1_epi8(0x20), op = _mm_set1_epi8('{'), cl = _mm_set1_epi8('}');
#define LANE(k, mq, mb, mk)                                                                        \
	do {                                                                                       \
		__m128i x = _mm_loadu_si128((const __m128i *)(b + 16 * (k)));                      \
		__m128i y = _mm_or_si128(x, lc);                                                   \
		mq = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, q));                            \
		mb = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, bs));                           \
		mk = (unsigned)_mm_movemask_epi8(                                                  \
			_mm_or_si128(_mm_cmpeq_epi8(y, op), _mm_cmpeq_epi8(y, cl)));               \
	} while (0)
	uint64_t q0, q1, q2, q3, b0, b1, b2, b3, k0, k1, k2, k3;
	LANE(0, q0, b0, k0);
	LANE(1, q1, b1, k1);
	LANE(2, q2, b2, k2);
	LANE(3, q3, b3, k3);
#undef LANE
	*quote = q0 | q1 << 16 | q2 << 32 | q3 << 48;
	*bslash = b0 | b1 << 16 | b2 << 32 | b3 << 48;
	*brk = k0 | k1 << 16 | k2 << 32 | k3 << 48;
}
#endif

#ifdef HAVE_AVX2
static inline AVX2_FN void block_masks_avx2(const char *b, uint64_t *quote, uint64_t *bslash,
					    uint64_t *brk)
{
	const __m256i q = _mm256_set1_epi8('"'), bs = _mm256_set1_epi8('\\');
	const __m256i lc = _mm256_set1_epi8(0x20), op = _mm256_set1_epi8('{');
	const __m256i cl = _mm256_set1_epi8('}');
	__m256i x0 = _mm256_loadu_si256((const __m256i *)b);
	__m256i x1 = _mm256_loadu_si256((const __m256i *)(b + 32));
	__m256i y0 = _mm256_or_si256(x0, lc), y1 = _mm256_or_si256(x1, lc);
#define MASK64(v0, v1)                                                                             \
	((uint64_t)(uint32_t)_mm256_movemask_epi8(v0) |                                            \
	 (uint64_t)(uint32_t)_mm256_movemask_epi8(v1) << 32)
	*quote = MASK64(_mm256_cmpeq_epi8(x0, q), _mm256_cmpeq_epi8(x1, q));
	*bslash = MASK64(_mm256_cmpeq_epi8(x0, bs), _mm256_cmpeq_epi8(x1, bs));
	*brk = MASK64(_mm256_or_si256(_mm256_cmpeq_epi8(y0, op), _mm256_cmpeq_epi8(y0, cl)),
		      _mm256_or_si256(_mm256_cmpeq_epi8(y1, op), _mm256_cmpeq_epi8(y1, cl)));
#undef MASK64
}
#endif

/*
 * Bytes escaped by a backslash (simdjson's find_escaped): runs of backslashes escape the
 * next byte when odd in length.  @carry: the first byte of the block is escaped (0 or 1).
 */
static inline uint64_t find_escaped(uint64_t bs, uint64_t *carry)
{
	const uint64_t even = 0x5555555555555555ULL;
	bs &= ~*carry;
	uint64_t follows = bs << 1 | *carry;
	uint64_t odd_starts = bs & ~even & ~follows;
	uint64_t seq_even;
	*carry = __builtin_add_overflow(odd_starts, bs, &seq_even);
	return (even ^ (seq_even << 1)) & follows;
}

/* Bit i: an odd number of set bits in @x at or below i (in-string regions from quotes). */
static inline uint64_t prefix_xor(uint64_t x)
{
	x ^= x << 1;
	x ^= x << 2;
	x ^= x << 4;
	x ^= x << 8;
	x ^= x << 16;
	x ^= x << 32;
	return x;
}

/*
 * json_scan_close() (json-internal.h) with the block kernel @block_masks.
 *
 * Leniency, for speed: only brackets and string boundaries are checked.  Commas, colons,
 * numbers, literals, escapes and control characters inside the skipped value are not, so
 * `{"a" 1 x}` skips cleanly.  Unbalanced or mismatched brackets, unterminated strings and
 * truncation are errors, and the scan always advances, so it never loops or reads outside
 * the window.
 */
static inline __attribute__((always_inline)) int
skip_scan_with(struct kp_json *p, size_t i, int d, unsigned char *st, int limit, json_fill_fn fill,
	       const char **why, int64_t *at,
	       void (*block_masks)(const char *, uint64_t *, uint64_t *, uint64_t *))
{
	uint64_t esc_carry = 0, in_carry = 0;
	char tmp[64];
	for (;;) {
		size_t n = p->end - i;
		if (n < 64 && !p->eof && !p->read_failed) {
			size_t shift;
			fill(p, i, 0, &shift);
			i -= shift;
			n = p->end - i;
		}
		if (n == 0) {
			if (p->eof || p->read_failed) {
				*why = NULL; /* the caller's err_end() */
				return -1;
			}
			continue; /* fill() made room by moving the window; read again */
		}
		const char *b = p->buf + i;
		if (n < 64) {
			memcpy(tmp, b, n);
			memset(tmp + n, ' ', 64 - n);
			b = tmp;
		} else {
			n = 64;
		}
		uint64_t quote, bs, brk;
		block_masks(b, &quote, &bs, &brk);
		uint64_t esc = (bs | esc_carry) ? find_escaped(bs, &esc_carry) : 0;
		uint64_t in = prefix_xor(quote & ~esc) ^ in_carry;
		uint64_t s = brk & ~in;
		while (s) {
			unsigned k = __builtin_ctzll(s);
			unsigned char c = b[k];
			s &= s - 1;
			/* branchy on purpose: the predictor learns the bracket patterns of
			 * repeated events, and a branch-free push/pop measured slower */
			if (c & 2) { /* '[' 0x5b and '{' 0x7b have bit 1 set; ']' and '}' do not */
				if (d >= limit) {
					*why = "nesting too deep";
					*at = p->base + i + k;
					return -1;
				}
				st[d++] = c;
			} else {
				/* '[' ^ ']' == '{' ^ '}' == 6 */
				if (d == 0 || st[d - 1] != (c ^ 6)) {
					*why = c == '}' ? "unmatched '}'" : "unmatched ']'";
					*at = p->base + i + k;
					return -1;
				}
				if (--d == 0) {
					p->pos = i + k + 1;
					return 0;
				}
			}
		}
		if (n < 64) {
			/* the padding is spaces: bit n says if the next real byte is escaped */
			esc_carry = (esc >> n) & 1;
			in_carry = 0 - ((in >> (n - 1)) & 1);
		} else {
			in_carry = (uint64_t)((int64_t)in >> 63);
		}
		i += n;
	}
}

/* skip_scan_with() for each level: the block kernel inlined into the loop. */
static int skip_scan_scalar(struct kp_json *p, size_t i, int d, unsigned char *st, int limit,
			     json_fill_fn fill, const char **why, int64_t *at)
{
	return skip_scan_with(p, i, d, st, limit, fill, why, at, block_masks_scalar);
}

#ifdef __SSE2__
static int skip_scan_sse2(struct kp_json *p, size_t i, int d, unsigned char *st, int limit,
			     json_fill_fn fill, const char **why, int64_t *at)
{
	return skip_scan_with(p, i, d, st, limit, fill, why, at, block_masks_sse2);
}
#endif

#ifdef HAVE_AVX2
static AVX2_FN int skip_scan_avx2(struct kp_json *p, size_t i, int d, unsigned char *st, int limit,
			     json_fill_fn fill, const char **why, int64_t *at)
{
	return skip_scan_with(p, i, d, st, limit, fill, why, at, block_masks_avx2);
}
#endif

int json_scan_close(struct kp_json *p, size_t i, int d, unsigned char *st, int limit,
		    json_fill_fn fill, const char **why, int64_t *at)
{
#ifdef HAVE_AVX2
	if (p->simd >= JSON_SIMD_AVX2)
		return skip_scan_avx2(p, i, d, st, limit, fill, why, at);
#endif
#ifdef __SSE2__
	if (p->simd >= JSON_SIMD_SSE2)
		return skip_scan_sse2(p, i, d, st, limit, fill, why, at);
#endif
	return skip_scan_scalar(p, i, d, st, limit, fill, why, at);
}
