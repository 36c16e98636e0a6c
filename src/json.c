/*
 * json.c — streaming pull tokenizer over a refillable window; json_locate() -> line:col.
 * json_next() validates RFC 8259 token by token; json_skip() scans 64-byte blocks (simdjson).
 * The scanning kernels come at three levels, chosen at run time (json_simd()): scalar C, SSE2,
 * and AVX2 for the 64-byte blocks and newline counts; every level gives the same tokens,
 * errors and offsets (test-json compares them).
 */
#include "kprof/json.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
/* AVX2 kernels are compiled with a target attribute and chosen at run time */
#define HAVE_AVX2 1
#include <immintrin.h>
#define AVX2_FN __attribute__((target("avx2")))
#endif

#include "kprof/arena.h"

/* What may come next (p->state). */
enum {
	S_TOP,       /* the top-level value */
	S_VALUE,     /* a member value, after ':' */
	S_ARR_FIRST, /* after '[': a value or ']' */
	S_ARR_NEXT,  /* after json_skip() stepped over ',': a value */
	S_OBJ_FIRST, /* after '{': a key or '}' */
	S_COLON,     /* after a key: ':' */
	S_AFTER,     /* after a value inside a container: ',' or the closing bracket */
	S_DONE,      /* after the top-level value: only whitespace */
	S_END,       /* JT_END was returned */
};

/*
 * Readable bytes past p->cap, so 16- and 64-byte loads at any index below p->end stay
 * inside the allocation; what they read past p->end is masked off by the callers.
 */
#define PAD 64
/* Bytes kept before the current token when the window moves, so json_locate() stays exact
 * for the start of the event being parsed (events are far smaller than this). */
#define LOOKBACK (64u << 10)
#define MIN_WINDOW 16
/* the window grows for a pinned event up to this much (json.h, pin); past it the pin is
 * dropped, so an event of any length costs bounded memory */
#define PIN_MAX_WINDOW (64u << 20)

static const char E_EOF[] = "unexpected end of input";
static const char E_READ[] = "read error";

/* JSON whitespace: most bytes are above ' ', so one compare settles them. */
static inline __attribute__((always_inline)) int is_ws(int c)
{
	return c <= ' ' && (c == ' ' || c == '\n' || c == '\r' || c == '\t');
}

/*
 * Bytes that may not follow a number or literal without a separator ("01", "1.2.3", "truex"):
 * digits, letters, '.', '+', '-', '_'.  A table, as this runs after every number.
 */
#define W6(c) [c] = 1, [c + 1] = 1, [c + 2] = 1, [c + 3] = 1, [c + 4] = 1, [c + 5] = 1
#define W10(c) W6(c), [c + 6] = 1, [c + 7] = 1, [c + 8] = 1, [c + 9] = 1
/* clang-format off */
static const unsigned char wordch[256] = {
	W10('0'), W10('A'), W10('K'), W6('U'), W10('a'), W10('k'), W6('u'),
	['.'] = 1, ['+'] = 1, ['-'] = 1, ['_'] = 1,
};
/* clang-format on */
#undef W10
#undef W6

static inline int is_wordch(int c)
{
	return wordch[c];
}

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

/* '\n' count in @s[0..n) with the kernels of @level. */
static int64_t count_nl(int level, const char *s, size_t n)
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

/* ---- window ---- */

/* Drop buf[0..from): count its lines first, then move the rest to the front. */
static void discard(struct kp_json *p, size_t from)
{
	p->lines_before += count_nl(p->simd, p->buf, from);
	const char *nl = memrchr(p->buf, '\n', from);
	if (nl)
		p->last_nl_before = p->base + (nl - p->buf);
	memmove(p->buf, p->buf + from, p->end - from);
	p->base += from;
	p->end -= from;
	p->pos = p->pos >= from ? p->pos - from : 0;
}

/*
 * Read more input past p->end, keeping buf[keep..end) (the token being scanned) and up to
 * LOOKBACK bytes before it.  The window grows only when the kept token fills all of it and
 * @grow is set.  Returns the bytes added: 0 at end of input, after a read error, or when
 * there is no room.  Kept bytes move toward the front by *shift.
 *
 * buf[end] is always a NUL sentinel: it is neither whitespace nor part of any token, so the
 * lexers scan without bounds checks and look at p->end only when they stop on a NUL.
 */
static __attribute__((noinline)) size_t fill(struct kp_json *p, size_t keep, int grow,
					     size_t *shift)
{
	*shift = 0;
	if (p->eof || p->read_failed)
		return 0;
	if (p->end == p->cap) {
		size_t lb = p->cap / 4 < LOOKBACK ? p->cap / 4 : LOOKBACK;
		size_t from = keep > lb ? keep - lb : keep;
		if (p->pin >= p->base && (uint64_t)(p->pin - p->base) < from) {
			if (p->cap >= PIN_MAX_WINDOW) {
				p->pin = -1; /* an event this long is not held: its start is unknown */
			} else {
				from = (size_t)(p->pin - p->base);
				grow = 1; /* the pinned bytes stay: grow rather than stop */
			}
		}
		if (from > 0) {
			discard(p, from);
			*shift = from;
		} else if (grow) {
			p->cap *= 2;
			p->buf = xrealloc(p->buf, p->cap + PAD);
			memset(p->buf + p->cap, 0, PAD);
		} else {
			return 0;
		}
	}
	size_t added = 0;
	while (p->end < p->cap && !(added && p->short_reads)) {
		ssize_t n = p->read(p->ctx, p->buf + p->end, p->cap - p->end);
		if (n < 0 || (size_t)n > p->cap - p->end) {
			p->read_failed = 1;
			break;
		}
		if (n == 0) {
			p->eof = 1;
			break;
		}
		p->end += n;
		added += n;
	}
	p->buf[p->end] = 0;
	return added;
}

/* More input for the token at *start, which reached the window's end; 0 if there is none. */
static int refill(struct kp_json *p, size_t *start)
{
	size_t shift;
	size_t n = fill(p, *start, 1, &shift);
	*start -= shift;
	return n > 0;
}

/* ---- errors ---- */

/* Error paths are cold and out of line, so the token paths keep their registers. */
#define COLD __attribute__((cold, noinline))

static COLD int set_err(struct kp_json *p, const char *why, int64_t off, int eof)
{
	if (!p->err) {
		p->err = why;
		p->err_off = off;
		p->err_eof = eof;
		p->detour = 1;
	}
	return -1;
}

/* The input ended (or could not be read) where more was required. */
static COLD int err_end(struct kp_json *p)
{
	if (p->read_failed)
		return set_err(p, E_READ, p->base + p->end, 0);
	return set_err(p, E_EOF, p->base + p->end, 1);
}

/* ---- setup ---- */

void json_init(struct kp_json *p, kp_json_read_fn read, void *ctx, size_t window)
{
	memset(p, 0, sizeof(*p));
	p->read = read;
	p->ctx = ctx;
	p->cap = window ? window : JSON_DEFAULT_WINDOW;
	if (p->cap < MIN_WINDOW)
		p->cap = MIN_WINDOW;
	/* zeroed for the sentinel and so block loads never see uninitialized bytes; calloc
	 * gets fresh zero pages from the kernel instead of writing 8 MB */
	p->buf = xcalloc(1, p->cap + PAD);
	p->last_nl_before = -1;
	p->pin = -1;
	p->max_depth = JSON_MAX_DEPTH;
	p->stack = xmalloc(JSON_MAX_DEPTH);
	p->state = S_TOP;
	p->simd = json_simd();
	p->detour = p->simd == JSON_SIMD_SCALAR;
}

struct mem_src {
	const char *s;
	size_t len, off;
};

static ssize_t mem_read(void *ctx, void *buf, size_t cap)
{
	struct mem_src *m = ctx;
	size_t n = m->len - m->off < cap ? m->len - m->off : cap;
	memcpy(buf, m->s + m->off, n);
	m->off += n;
	return n;
}

void json_init_mem(struct kp_json *p, const char *s, size_t len)
{
	struct mem_src *m = xmalloc(sizeof(*m));
	m->s = s;
	m->len = len;
	m->off = 0;
	/* +1: the first fill reads everything and sees EOF without a second pass */
	json_init(p, mem_read, m, len + 1 < JSON_DEFAULT_WINDOW ? len + 1 : JSON_DEFAULT_WINDOW);
}

void json_free(struct kp_json *p)
{
	if (p->read == mem_read)
		free(p->ctx);
	if (!p->borrowed)
		free(p->buf);
	free(p->stack);
	p->buf = NULL;
	p->stack = NULL;
}

void json_init_elems(struct kp_json *p, char *s, size_t len, int64_t base, int max_depth)
{
	memset(p, 0, sizeof(*p));
	p->buf = s;
	p->cap = p->end = len;
	p->borrowed = 1;
	p->eof = 1;
	p->base = base;
	p->last_nl_before = -1;
	p->pin = -1;
	p->max_depth = max_depth;
	p->simd = json_simd();
	p->detour = p->simd == JSON_SIMD_SCALAR;
	p->stack = xmalloc(JSON_MAX_DEPTH);
	p->stack[0] = 'a';
	p->depth = 1;
	p->state = S_AFTER;
}

int json_elems_done(struct kp_json *p)
{
	size_t i = p->pos;
	while (is_ws((unsigned char)p->buf[i]))
		i++;
	return i >= p->end && !p->err && p->depth == 1 && p->state == S_AFTER;
}

int json_after_value(const struct kp_json *p, int64_t *off)
{
	if (p->err || p->state != S_AFTER)
		return 0;
	*off = p->base + (int64_t)p->pos;
	return 1;
}

void json_lines_at(const struct kp_json *p, int64_t *lines, int64_t *last_nl)
{
	*lines = p->lines_before + count_nl(p->simd, p->buf, p->pos);
	const char *nl = memrchr(p->buf, '\n', p->pos);
	*last_nl = nl ? p->base + (nl - p->buf) : p->last_nl_before;
}

void json_resume(struct kp_json *p, int64_t off, int64_t lines, int64_t last_nl)
{
	p->base = off;
	p->pos = p->end = 0;
	p->buf[0] = 0;
	p->eof = 0;
	p->lines_before = lines;
	p->last_nl_before = last_nl;
}

int64_t json_count_nl(const char *s, size_t n)
{
	return count_nl(json_simd(), s, n);
}

/* ---- tokens ---- */

/* Advance p->pos past whitespace; returns the next byte, or -1 at end of input. */
static inline __attribute__((always_inline)) int skip_ws(struct kp_json *p)
{
	for (;;) {
		const unsigned char *s = (const unsigned char *)p->buf + p->pos, *q = s;
		/* scalar on purpose: runs are short (" ", "\n    "), and a 16-byte SSE2 scan
		 * measured 30% slower for json_next on Kineto traces (and 4-8% slower as the
		 * tail of a run after two scalar bytes); a pointer walk keeps the loop at 6
		 * instructions a byte in every caller */
		while (is_ws(*q))
			q++;
		size_t i = p->pos + (size_t)(q - s);
		p->pos = i;
		if (i < p->end)
			return *q;
		size_t shift;
		if (!fill(p, i, 1, &shift))
			return -1;
	}
}

/*
 * Index of the first '"', '\\' or control byte at or after @i; the sentinel bounds it.
 * SSE2 also on the AVX2 level: most strings (keys, short names) end within 16 bytes.
 */
static inline size_t scan_str(int level, const char *buf, size_t i)
{
#ifdef __SSE2__
	if (level != JSON_SIMD_SCALAR) {
		const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
		const __m128i ctl = _mm_set1_epi8(0x1f);
		for (;;) {
			__m128i x = _mm_loadu_si128((const __m128i *)(buf + i));
			__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, q),
							      _mm_cmpeq_epi8(x, bs)),
						 _mm_cmpeq_epi8(_mm_min_epu8(x, ctl), x));
			unsigned mask = _mm_movemask_epi8(m);
			if (mask)
				return i + __builtin_ctz(mask);
			i += 16;
		}
	}
#endif
	(void)level;
	while ((unsigned char)buf[i] >= 0x20 && buf[i] != '"' && buf[i] != '\\')
		i++;
	return i;
}

static inline int is_hex(int c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static inline int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* Index of the first non-digit at or after @i; the sentinel bounds it. */
static inline size_t scan_digits(int level, const unsigned char *b, size_t i)
{
#ifdef __SSE2__
	if (level != JSON_SIMD_SCALAR) {
		/* timestamps have 13-19 digits: one compare instead of a mispredicted loop exit */
		const __m128i zero = _mm_set1_epi8('0'), nine = _mm_set1_epi8(9);
		for (;;) {
			__m128i d = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(b + i)), zero);
			__m128i isd = _mm_cmpeq_epi8(_mm_min_epu8(d, nine), d);
			unsigned other = ~_mm_movemask_epi8(isd) & 0xffff;
			if (other)
				return i + __builtin_ctz(other);
			i += 16;
		}
	}
#endif
	(void)level;
	while (is_digit(b[i]))
		i++;
	return i;
}

static inline void set_tok(struct kp_json *p, struct kp_json_tok *tok, size_t s, size_t len,
			   int escaped)
{
	tok->s = p->buf + s;
	tok->len = len;
	tok->escaped = escaped;
	tok->off = p->base + s;
}

/*
 * The string whose opening quote is at p->pos: tok gets the raw contents and p->pos moves
 * past the closing quote.  A string cut by the window's end is lexed again after a refill.
 * With @skip (json_skip(): nobody reads the token) the window keeps only the bytes being
 * scanned instead, so a skipped string of any length costs no memory; tok is then unusable.
 */
static inline __attribute__((always_inline)) int
lex_string_with(struct kp_json *p, struct kp_json_tok *tok, int level, int skip)
{
	size_t start, i;
	int escaped;
again:
	start = p->pos;
	i = start + 1;
	escaped = 0;
scan:
	for (;;) {
		i = scan_str(level, p->buf, i);
		unsigned char c = p->buf[i];
		if (c == '"')
			break;
		if (c == '\\') {
			escaped = 1;
			switch (p->buf[i + 1]) {
			case '"':
			case '\\':
			case '/':
			case 'b':
			case 'f':
			case 'n':
			case 'r':
			case 't':
				i += 2;
				continue;
			case 'u':
				for (size_t k = i + 2; k < i + 6; k++) {
					if (k >= p->end)
						goto more;
					if (!is_hex((unsigned char)p->buf[k]))
						return set_err(p, "invalid escape in string",
							       p->base + k, 0);
				}
				i += 6;
				continue;
			default:
				if (i + 1 >= p->end)
					goto more;
				return set_err(p, "invalid escape in string", p->base + i + 1, 0);
			}
		}
		if (i >= p->end)
			goto more;
		return set_err(p, "control character in string", p->base + i, 0);
	}
	if (skip) {
		p->pos = i + 1;
		return 0;
	}
	set_tok(p, tok, start + 1, i - start - 1, escaped);
	tok->off = p->base + start;
	p->pos = i + 1;
	return 0;
more:
	if (skip) {
		size_t shift;
		/* i: the window's end, or an escape cut by it, rescanned whole */
		if (!fill(p, i, 1, &shift))
			return err_end(p);
		start = start >= shift ? start - shift : 0;
		i -= shift;
		goto scan;
	}
	if (!refill(p, &start))
		return err_end(p);
	goto again;
}

static inline __attribute__((always_inline)) int lex_string(struct kp_json *p,
							    struct kp_json_tok *tok, int level)
{
	return lex_string_with(p, tok, level, 0);
}

/* Where a lexed number's parts lie: digits before and after the point, an exponent. */
struct num_shape {
	size_t nint, nfrac;
	int exp;
};

/*
 * The number at p->pos (RFC 8259: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?); @sh, when
 * not NULL, gets its shape for num_convert().
 */
static inline __attribute__((always_inline)) int
lex_number_sh(struct kp_json *p, struct kp_json_tok *tok, struct num_shape *sh, int level)
{
	size_t start, i, d0, d1, f0 = 0, f1 = 0;
	const unsigned char *b;
again:
	start = i = p->pos;
	b = (const unsigned char *)p->buf;
	if (b[i] == '-')
		i++;
	d0 = i;
	if (b[i] == '0') {
		i++;
	} else if (is_digit(b[i])) {
		i = scan_digits(level, b, i + 1);
	} else {
		goto bad;
	}
	d1 = i;
	if (b[i] == '.') {
		i++;
		if (!is_digit(b[i]))
			goto bad;
		f0 = i;
		i = scan_digits(level, b, i + 1);
		f1 = i;
	}
	if (sh) {
		sh->nint = d1 - d0;
		sh->nfrac = f1 - f0;
		sh->exp = 0;
	}
	if ((b[i] | 0x20) == 'e') {
		if (sh)
			sh->exp = 1;
		i++;
		if (b[i] == '+' || b[i] == '-')
			i++;
		if (!is_digit(b[i]))
			goto bad;
		i = scan_digits(level, b, i + 1);
	}
	if (i >= p->end) {
		/* stopped by the sentinel: the number may go on in the next read */
		size_t len = i - start;
		if (refill(p, &start))
			goto again;
		/* no bytes came, but refill() may still have moved the window (start shifted):
		 * i must move with it, or the token would take in the sentinel (fuzz-json) */
		i = start + len;
		if (p->read_failed)
			return err_end(p);
	} else if (is_wordch(b[i])) {
		goto bad; /* "01", "1.2.3", "12abc": blame the byte that cannot belong */
	}
	set_tok(p, tok, start, i - start, 0);
	p->pos = i;
	return 0;
bad:
	if (i >= p->end) {
		if (refill(p, &start))
			goto again;
		return err_end(p);
	}
	return set_err(p, "invalid number", p->base + i, 0);
}

static __attribute__((noinline)) int lex_number_vec(struct kp_json *p, struct kp_json_tok *tok)
{
	return lex_number_sh(p, tok, NULL, JSON_SIMD_SSE2);
}

static __attribute__((noinline)) int lex_number_scalar(struct kp_json *p, struct kp_json_tok *tok)
{
	return lex_number_sh(p, tok, NULL, JSON_SIMD_SCALAR);
}

static inline __attribute__((always_inline)) int lex_number(struct kp_json *p,
							    struct kp_json_tok *tok, int level)
{
	return level == JSON_SIMD_SCALAR ? lex_number_scalar(p, tok) : lex_number_vec(p, tok);
}

/* The literal @word (true, false, null) at p->pos. */
static int lex_literal(struct kp_json *p, struct kp_json_tok *tok, const char *word, size_t n)
{
	size_t start = p->pos;
	/* n bytes and the one after, unless the input ends first */
	while (p->end - start <= n && refill(p, &start))
		;
	size_t i = start;
	for (size_t k = 0; k < n; k++, i++) {
		if (i >= p->end)
			return err_end(p);
		if (p->buf[i] != word[k])
			return set_err(p, "invalid literal", p->base + i, 0);
	}
	if (i < p->end && is_wordch((unsigned char)p->buf[i]))
		return set_err(p, "invalid literal", p->base + i, 0);
	if (i >= p->end && p->read_failed)
		return err_end(p);
	set_tok(p, tok, start, n, 0);
	p->pos = i;
	return 0;
}

static COLD enum kp_json_type fail(struct kp_json *p, struct kp_json_tok *tok)
{
	tok->type = JT_ERROR;
	tok->s = NULL;
	tok->len = 0;
	tok->escaped = 0;
	tok->off = p->err_off;
	tok->depth = p->depth;
	return JT_ERROR;
}

static inline void after_value(struct kp_json *p)
{
	p->state = p->depth ? S_AFTER : S_DONE;
}

static inline __attribute__((always_inline)) enum kp_json_type
open_container(struct kp_json *p, struct kp_json_tok *tok, int c)
{
	if (p->depth >= p->max_depth) {
		set_err(p, "nesting too deep", p->base + p->pos, 0);
		return fail(p, tok);
	}
	int obj = c == '{';
	p->stack[p->depth++] = obj ? 'o' : 'a';
	p->state = obj ? S_OBJ_FIRST : S_ARR_FIRST;
	tok->type = obj ? JT_OBJ : JT_ARR;
	set_tok(p, tok, p->pos, 1, 0);
	tok->depth = p->depth;
	p->pos++;
	return tok->type;
}

static enum kp_json_type close_container(struct kp_json *p, struct kp_json_tok *tok)
{
	tok->type = p->stack[p->depth - 1] == 'o' ? JT_OBJ_END : JT_ARR_END;
	set_tok(p, tok, p->pos, 1, 0);
	p->depth--;
	tok->depth = p->depth;
	p->pos++;
	after_value(p);
	return tok->type;
}

/* The byte at p->pos does not fit: report it, or the end of input. */
static COLD enum kp_json_type unexpected(struct kp_json *p, struct kp_json_tok *tok, int c,
					 const char *why)
{
	if (c < 0)
		err_end(p);
	else
		set_err(p, why, p->base + p->pos, 0);
	return fail(p, tok);
}

/* A UTF-8 byte order mark at offset 0 (tolerated before the document). */
static COLD int at_bom(struct kp_json *p)
{
	size_t start = 0;
	if (p->base + p->pos != 0)
		return 0;
	while (p->end < 3 && refill(p, &start))
		;
	return p->end >= 3 && memcmp(p->buf, "\xef\xbb\xbf", 3) == 0;
}

/*
 * What the state's punctuation leads to (state_step()): a key or a value for next_tok() to lex,
 * or else the type of a token already made (a closing bracket, the end, an error).
 */
enum { LEX_KEY = JT_NULL + 1, LEX_VALUE };

/*
 * After a value inside a container: ',' (consumed, *c the byte after it and *why what must
 * follow) or the closing bracket.
 */
static inline __attribute__((always_inline)) int
after_step(struct kp_json *p, struct kp_json_tok *tok, int *c, const char **why)
{
	if (p->stack[p->depth - 1] == 'o') {
		if (*c == ',') {
			p->pos++;
			*c = skip_ws(p);
			*why = "expected object key after ','";
			return LEX_KEY;
		}
		if (*c == '}')
			return close_container(p, tok);
		return unexpected(p, tok, *c, "expected ',' or '}' after object member");
	}
	if (*c == ',') {
		p->pos++;
		*c = skip_ws(p);
		*why = "expected value after ','";
		return LEX_VALUE;
	}
	if (*c == ']')
		return close_container(p, tok);
	return unexpected(p, tok, *c, "expected ',' or ']' after array element");
}

/*
 * The top-level value, after a byte order mark if one comes first.  Inlined like the other
 * steps: called, it would take c's and why's addresses and keep them in memory all through
 * next_tok() (1.7% slower with KPROF_SIMD=scalar, bench/load-loop.sh).
 */
static inline __attribute__((always_inline)) int
top_step(struct kp_json *p, struct kp_json_tok *tok, int *c, const char **why)
{
	if (*c == 0xef && at_bom(p)) {
		p->pos = 3;
		*c = skip_ws(p);
	}
	if (*c < 0 && !p->read_failed) {
		set_err(p, "empty input", p->base + p->end, 1);
		return fail(p, tok);
	}
	*why = "expected value";
	return LEX_VALUE;
}

/* After the top-level value (only whitespace may follow) and once JT_END was returned. */
static enum kp_json_type end_tok(struct kp_json *p, struct kp_json_tok *tok, int c)
{
	if (p->state == S_DONE) {
		if (c >= 0) {
			set_err(p, "trailing characters after JSON value", p->base + p->pos, 0);
			return fail(p, tok);
		}
		if (p->read_failed)
			return unexpected(p, tok, c, NULL);
		p->state = S_END;
	}
	tok->type = JT_END;
	set_tok(p, tok, p->end, 0, 0);
	tok->depth = 0;
	return JT_END;
}

/*
 * The punctuation p->state expects before the next token, consumed: *c becomes the byte after
 * it and *why what the token lexed next must be.
 */
static inline __attribute__((always_inline)) int
state_step(struct kp_json *p, struct kp_json_tok *tok, int *c, const char **why)
{
	switch (p->state) {
	case S_AFTER:
		return after_step(p, tok, c, why);
	case S_COLON:
		if (*c != ':')
			return unexpected(p, tok, *c, "expected ':' after object key");
		p->pos++;
		*c = skip_ws(p);
		/* fall through */
	case S_VALUE:
		*why = "expected value after ':'";
		return LEX_VALUE;
	case S_OBJ_FIRST:
		if (*c == '}')
			return close_container(p, tok);
		*why = "expected object key or '}'";
		return LEX_KEY;
	case S_ARR_FIRST:
		if (*c == ']')
			return close_container(p, tok);
		*why = "expected value or ']'";
		return LEX_VALUE;
	case S_ARR_NEXT:
		*why = "expected value after ','";
		return LEX_VALUE;
	case S_TOP:
		return top_step(p, tok, c, why);
	default:
		return end_tok(p, tok, *c);
	}
}

/* The member name starting at byte @c, or the error @why. */
static inline __attribute__((always_inline)) enum kp_json_type
lex_key(struct kp_json *p, struct kp_json_tok *tok, int c, const char *why, int level)
{
	if (c != '"')
		return unexpected(p, tok, c, why);
	if (lex_string(p, tok, level) < 0)
		return fail(p, tok);
	tok->type = JT_KEY;
	tok->depth = p->depth;
	p->state = S_COLON;
	return JT_KEY;
}

/* The value starting at byte @c (a scalar, or a container's opening bracket), or the error @why. */
static inline __attribute__((always_inline)) enum kp_json_type
lex_value(struct kp_json *p, struct kp_json_tok *tok, int c, const char *why, int level)
{
	int r;
	if (c == '"') {
		tok->type = JT_STR;
		r = lex_string(p, tok, level);
	} else if (is_digit(c) || c == '-') {
		tok->type = JT_NUM;
		r = lex_number(p, tok, level);
	} else if (c == '{' || c == '[') {
		return open_container(p, tok, c);
	} else if (c == 't') {
		tok->type = JT_TRUE;
		r = lex_literal(p, tok, "true", 4);
	} else if (c == 'f') {
		tok->type = JT_FALSE;
		r = lex_literal(p, tok, "false", 5);
	} else if (c == 'n') {
		tok->type = JT_NULL;
		r = lex_literal(p, tok, "null", 4);
	} else if (c == '+' || c == '.') {
		r = set_err(p, "invalid number", p->base + p->pos, 0);
	} else {
		return unexpected(p, tok, c, why);
	}
	if (r < 0)
		return fail(p, tok);
	tok->depth = p->depth;
	after_value(p);
	return tok->type;
}

/*
 * One token.  Commas and colons are consumed on the way, so a call dispatches on the state
 * once and then runs straight into the key or value lexer.
 */
static inline __attribute__((always_inline)) enum kp_json_type
next_tok(struct kp_json *p, struct kp_json_tok *tok, int level)
{
	const char *why = "expected value after ':'";
	int c = skip_ws(p), step = LEX_VALUE;
	/* a member value after json_key(): a direct branch, not the jump table */
	if (p->state != S_VALUE)
		step = state_step(p, tok, &c, &why);
	if (step == LEX_VALUE)
		return lex_value(p, tok, c, why, level);
	if (step == LEX_KEY)
		return lex_key(p, tok, c, why, level);
	return step;
}

/*
 * The token calls are compiled twice: with the vector kernels inlined (SSE2 and AVX2 share the
 * string and digit ones) and with the scalar ones.  The scalar copy is the way in when
 * p->detour is set, which the check for an earlier error already reads: an error (repeated
 * by every call) or the scalar level.  So the level costs the vector path nothing.
 */
static __attribute__((noinline)) enum kp_json_type next_detour(struct kp_json *p,
							       struct kp_json_tok *tok)
{
	if (p->err)
		return fail(p, tok);
	return next_tok(p, tok, JSON_SIMD_SCALAR);
}

enum kp_json_type json_next(struct kp_json *p, struct kp_json_tok *tok)
{
	if (p->detour)
		return next_detour(p, tok);
	return next_tok(p, tok, JSON_SIMD_SSE2);
}

/*
 * The next member name of the object the parser is in, with the ':' after it consumed when
 * it is already in the window (the usual case), so the value's call dispatches straight to
 * the value lexer.  Elsewhere it is json_next().  Errors are the ones json_next() reports,
 * at the same byte: a missing ':' is left for the next call to find.
 */
static inline __attribute__((always_inline)) enum kp_json_type
key_tok(struct kp_json *p, struct kp_json_tok *tok, int level)
{
	int c = skip_ws(p);
	if (p->state == S_AFTER && p->stack[p->depth - 1] == 'o') {
		if (c == ',') {
			p->pos++;
			c = skip_ws(p);
			if (c != '"')
				return unexpected(p, tok, c, "expected object key after ','");
		} else if (c == '}') {
			return close_container(p, tok);
		} else {
			return unexpected(p, tok, c, "expected ',' or '}' after object member");
		}
	} else if (p->state == S_OBJ_FIRST) {
		if (c == '}')
			return close_container(p, tok);
		if (c != '"')
			return unexpected(p, tok, c, "expected object key or '}'");
	} else {
		return json_next(p, tok);
	}
	if (lex_string(p, tok, level) < 0)
		return fail(p, tok);
	tok->type = JT_KEY;
	tok->depth = p->depth;
	p->state = S_COLON;
	/* no refill here: it could move the window under tok->s; the sentinel stops the scans */
	const unsigned char *b = (const unsigned char *)p->buf;
	size_t i = p->pos;
	while (is_ws(b[i]))
		i++;
	if (b[i] == ':') {
		i++;
		while (is_ws(b[i]))
			i++;
		p->pos = i;
		p->state = S_VALUE;
	}
	return JT_KEY;
}

static __attribute__((noinline)) enum kp_json_type key_detour(struct kp_json *p,
							      struct kp_json_tok *tok)
{
	if (p->err)
		return fail(p, tok);
	return key_tok(p, tok, JSON_SIMD_SCALAR);
}

enum kp_json_type json_key(struct kp_json *p, struct kp_json_tok *tok)
{
	if (p->detour)
		return key_detour(p, tok);
	return key_tok(p, tok, JSON_SIMD_SSE2);
}

/* @n bytes of @s less an incomplete UTF-8 sequence at their end. */
static size_t utf8_whole(const char *s, size_t n)
{
	size_t k = n;
	while (k > 0 && n - k < 4 && ((unsigned char)s[k - 1] & 0xc0) == 0x80)
		k--;
	if (k == 0 || (unsigned char)s[k - 1] < 0xc0)
		return n; /* ASCII last, or stray continuation bytes: nothing to cut */
	unsigned char lead = (unsigned char)s[k - 1];
	size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
	return n - (k - 1) >= need ? n : k - 1;
}

/* More bytes past @i (the window moves; *i follows); 0 at the end of input. */
static int more_at(struct kp_json *p, size_t *i)
{
	size_t shift;
	size_t n = fill(p, *i, 1, &shift);
	*i -= shift;
	return n > 0;
}

enum kp_json_type json_str_capped(struct kp_json *p, struct kp_json_tok *tok, char *buf,
				  size_t cap, int *cut)
{
	*cut = 0;
	if (p->err)
		return fail(p, tok);
	int c = skip_ws(p);
	if (p->state == S_COLON && c == ':') {
		p->pos++;
		p->state = S_VALUE;
		c = skip_ws(p);
	}
	if (p->state != S_VALUE || c != '"')
		return json_next(p, tok);
	int64_t off = p->base + p->pos;
	size_t i = p->pos + 1, n = 0;
	int escaped = 0;
	for (;;) {
		if (*cut) /* the rest: only its end and escapes matter */
			i = scan_str(p->simd, p->buf, i);
		if (p->end - i < 6 && !p->eof && !p->read_failed && more_at(p, &i))
			continue; /* an escape is whole in the window from here on */
		if (i >= p->end) {
			err_end(p);
			return fail(p, tok);
		}
		unsigned char ch = (unsigned char)p->buf[i];
		if (ch == '"')
			break;
		size_t len = 1;
		if (ch < 0x20) {
			set_err(p, "control character in string", p->base + i, 0);
			return fail(p, tok);
		}
		if (ch == '\\') {
			int e = (unsigned char)p->buf[i + 1];
			len = e == 'u' ? 6 : 2;
			int ok = strchr("\"\\/bfnrtu", e) != NULL && e != 0;
			for (size_t k = i + 2; ok && e == 'u' && k < i + 6; k++)
				ok = k < p->end && is_hex((unsigned char)p->buf[k]);
			if (!ok) {
				if (i + len > p->end) {
					err_end(p);
					return fail(p, tok);
				}
				set_err(p, "invalid escape in string", p->base + i + 1, 0);
				return fail(p, tok);
			}
		}
		if (!*cut && n + len < cap) {
			memcpy(buf + n, p->buf + i, len);
			n += len;
			escaped |= ch == '\\';
		} else if (!*cut) {
			*cut = 1;
			n = utf8_whole(buf, n);
		}
		i += len;
	}
	p->pos = i + 1;
	if (cap)
		buf[n] = '\0';
	tok->type = JT_STR;
	tok->s = buf;
	tok->len = n;
	tok->escaped = escaped;
	tok->off = off;
	after_value(p);
	tok->depth = p->depth;
	return JT_STR;
}

/* ---- skipping ---- */

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
 * Scan from buf[i] to the bracket that brings the relative depth @d back to 0; @st holds
 * the open brackets (st[0..d)), at most @limit deep.  Sets p->pos past that bracket.
 *
 * Leniency, for speed: only brackets and string boundaries are checked.  Commas, colons,
 * numbers, literals, escapes and control characters inside the skipped value are not, so
 * `{"a" 1 x}` skips cleanly.  Unbalanced or mismatched brackets, unterminated strings and
 * truncation are errors, and the scan always advances, so it never loops or reads outside
 * the window.
 */
static inline __attribute__((always_inline)) int
skip_scan_with(struct kp_json *p, size_t i, int d, unsigned char *st, int limit,
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
			if (p->eof || p->read_failed)
				return err_end(p);
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
				if (d >= limit)
					return set_err(p, "nesting too deep", p->base + i + k, 0);
				st[d++] = c;
			} else {
				/* '[' ^ ']' == '{' ^ '}' == 6 */
				if (d == 0 || st[d - 1] != (c ^ 6))
					return set_err(p,
						       c == '}' ? "unmatched '}'" : "unmatched ']'",
						       p->base + i + k, 0);
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
static int skip_scan_scalar(struct kp_json *p, size_t i, int d, unsigned char *st, int limit)
{
	return skip_scan_with(p, i, d, st, limit, block_masks_scalar);
}

#ifdef __SSE2__
static int skip_scan_sse2(struct kp_json *p, size_t i, int d, unsigned char *st, int limit)
{
	return skip_scan_with(p, i, d, st, limit, block_masks_sse2);
}
#endif

#ifdef HAVE_AVX2
static AVX2_FN int skip_scan_avx2(struct kp_json *p, size_t i, int d, unsigned char *st, int limit)
{
	return skip_scan_with(p, i, d, st, limit, block_masks_avx2);
}
#endif

static int skip_scan(struct kp_json *p, size_t i, int d, unsigned char *st, int limit)
{
#ifdef HAVE_AVX2
	if (p->simd >= JSON_SIMD_AVX2)
		return skip_scan_avx2(p, i, d, st, limit);
#endif
#ifdef __SSE2__
	if (p->simd >= JSON_SIMD_SSE2)
		return skip_scan_sse2(p, i, d, st, limit);
#endif
	return skip_scan_scalar(p, i, d, st, limit);
}

static inline __attribute__((always_inline)) int skip_value(struct kp_json *p, int level)
{
	struct kp_json_tok tok;
	int c = skip_ws(p);
	if (p->state == S_VALUE)
		goto start; /* a member value after json_key(): the common case */
	switch (p->state) {
	case S_COLON:
		if (c != ':')
			return unexpected(p, &tok, c, "expected ':' after object key"), -1;
		p->pos++;
		p->state = S_VALUE;
		c = skip_ws(p);
		break;
	case S_AFTER:
		/* the next array element: step over the comma */
		if (c != ',' || p->stack[p->depth - 1] != 'a')
			return set_err(p, "json_skip() where no value starts", p->base + p->pos, 0);
		p->pos++;
		p->state = S_ARR_NEXT;
		c = skip_ws(p);
		break;
	case S_TOP:
	case S_VALUE:
	case S_ARR_NEXT:
		break;
	case S_ARR_FIRST:
		if (c == ']')
			return set_err(p, "json_skip() where no value starts", p->base + p->pos, 0);
		break;
	default:
		return set_err(p, "json_skip() where no value starts", p->base + p->pos, 0);
	}
start:
	if (c == '"' || is_digit(c)) {
		/* the common scalars, lexed (and validated) without a second dispatch */
		if ((c == '"' ? lex_string_with(p, &tok, level, 1) : lex_number(p, &tok, level)) < 0)
			return -1;
		after_value(p);
		return 0;
	}
	if (c != '{' && c != '[')
		return json_next(p, &tok) == JT_ERROR ? -1 : 0; /* literals, errors, the end */
	unsigned char st[JSON_MAX_DEPTH + 1];
	int limit = p->max_depth - p->depth;
	if (limit > JSON_MAX_DEPTH)
		limit = JSON_MAX_DEPTH;
	if (skip_scan(p, p->pos, 0, st, limit) < 0)
		return -1;
	after_value(p);
	return 0;
}

static __attribute__((noinline)) int skip_detour(struct kp_json *p)
{
	if (p->err)
		return -1;
	return skip_value(p, JSON_SIMD_SCALAR);
}

int json_skip(struct kp_json *p)
{
	if (p->detour)
		return skip_detour(p);
	return skip_value(p, JSON_SIMD_SSE2);
}

int json_skip_rest(struct kp_json *p)
{
	if (p->err)
		return -1;
	if (p->depth == 0 || p->state == S_DONE || p->state == S_END)
		return set_err(p, "json_skip_rest() outside a container", p->base + p->pos, 0);
	unsigned char st[JSON_MAX_DEPTH + 1];
	st[0] = p->stack[p->depth - 1] == 'o' ? '{' : '[';
	int limit = p->max_depth - p->depth + 1;
	if (limit > JSON_MAX_DEPTH)
		limit = JSON_MAX_DEPTH;
	if (skip_scan(p, p->pos, 1, st, limit) < 0)
		return -1;
	p->depth--;
	after_value(p);
	return 0;
}

/* ---- locations ---- */

void json_locate(const struct kp_json *p, int64_t off, int *line, int *col)
{
	if (off < p->base) {
		/* discarded from the window more than LOOKBACK bytes ago: unknown */
		*line = 0;
		*col = 0;
		return;
	}
	size_t n = (uint64_t)(off - p->base) < p->end ? (size_t)(off - p->base) : p->end;
	int64_t lines = p->lines_before + count_nl(p->simd, p->buf, n);
	const char *nl = memrchr(p->buf, '\n', n);
	int64_t last = nl ? p->base + (nl - p->buf) : p->last_nl_before;
	int64_t l = lines + 1, c = off - last;
	*line = l > INT_MAX ? INT_MAX : (int)l;
	*col = c > INT_MAX ? INT_MAX : (int)c;
}

/* ---- strings ---- */

static int hex4(const char *s)
{
	int v = 0;
	for (int k = 0; k < 4; k++) {
		int c = (unsigned char)s[k];
		if (!is_hex(c))
			return -1;
		v = v * 16 + (c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	return v;
}

static size_t utf8_put(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = 0xc0 | cp >> 6;
		o[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = 0xe0 | cp >> 12;
		o[1] = 0x80 | (cp >> 6 & 0x3f);
		o[2] = 0x80 | (cp & 0x3f);
		return 3;
	}
	o[0] = 0xf0 | cp >> 18;
	o[1] = 0x80 | (cp >> 12 & 0x3f);
	o[2] = 0x80 | (cp >> 6 & 0x3f);
	o[3] = 0x80 | (cp & 0x3f);
	return 4;
}

/* The byte a one-letter escape (\" \\ \/ \b \f \n \r \t) stands for, or -1. */
static int simple_escape(int e)
{
	switch (e) {
	case '"':
	case '\\':
	case '/':
		return e;
	case 'b':
		return '\b';
	case 'f':
		return '\f';
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 't':
		return '\t';
	default:
		return -1;
	}
}

/*
 * The code point of a \uXXXX just read (@cp; *i past it): a high surrogate joins the low one
 * that follows (*i moves past that too); a high one without it, or a lone low one, is U+FFFD.
 */
static int surrogate_pair(const char *s, size_t len, size_t *i, int cp)
{
	if (cp >= 0xd800 && cp < 0xdc00) {
		int lo = -1;
		if (*i + 6 <= len && s[*i] == '\\' && s[*i + 1] == 'u')
			lo = hex4(s + *i + 2);
		if (lo < 0xdc00 || lo >= 0xe000)
			return 0xfffd;
		*i += 6;
		return 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	return cp >= 0xdc00 && cp < 0xe000 ? 0xfffd : cp;
}

/* The escape at s[*i] == '\\' as UTF-8 into @u (its length); *i moves past it. */
static size_t unescape_one(const char *s, size_t len, size_t *i, char *u)
{
	int e = *i + 1 < len ? s[*i + 1] : 0;
	int c = simple_escape(e);
	if (c >= 0) {
		u[0] = c;
		*i += 2;
		return 1;
	}
	int cp = e == 'u' && *i + 6 <= len ? hex4(s + *i + 2) : -1;
	if (cp < 0) {
		/* malformed escapes (never from json_next) are copied as they are */
		u[0] = '\\';
		(*i)++;
		return 1;
	}
	*i += 6;
	return utf8_put(u, surrogate_pair(s, len, i, cp));
}

size_t json_unescape(const char *s, size_t len, char *out, size_t cap)
{
	size_t o = 0, i = 0;
	if (cap == 0)
		return 0;
	while (i < len) {
		const char *bs = memchr(s + i, '\\', len - i);
		size_t run = (bs ? (size_t)(bs - s) : len) - i;
		if (run > cap - 1 - o) {
			memcpy(out + o, s + i, cap - 1 - o);
			o = cap - 1;
			break;
		}
		memcpy(out + o, s + i, run);
		o += run;
		i += run;
		if (i >= len)
			break;
		char u[4];
		size_t n = unescape_one(s, len, &i, u);
		if (n > cap - 1 - o)
			break; /* never split a UTF-8 sequence */
		memcpy(out + o, u, n);
		o += n;
	}
	out[o] = 0;
	return o;
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

/*
 * The digits from s[*i] on, accumulated into *acc (8 a step where SWAR_DIGITS: a timestamp has
 * 13-19 and the digit chain is the cost), *i moved past them; returns how many.
 */
static inline __attribute__((always_inline)) int lead_digits(const char *s, size_t len, size_t *i,
							     uint64_t *acc)
{
	size_t j = *i;
	uint64_t a = 0;
	int nd = 0;
#ifdef SWAR_DIGITS
	while (len - j >= 8 && all8_digits(load8(s + j))) {
		a = a * 100000000 + parse8(load8(s + j));
		j += 8;
		nd += 8;
	}
#endif
	while (j < len && is_digit(s[j])) {
		a = a * 10 + (uint64_t)(s[j++] - '0');
		nd++;
	}
	*i = j;
	*acc = a;
	return nd;
}

/*
 * The fraction after the '.' at s[*i]: its first @scale digits go into *acc, *i moves past all
 * of them.  Returns how many went in, or -1 for no digits or (with @exact) a nonzero one dropped.
 */
static inline __attribute__((always_inline)) int frac_digits(const char *s, size_t len, size_t *i,
							     uint64_t *acc, int scale, int exact)
{
	size_t j = *i + 1, f0 = j;
	uint64_t a = *acc;
	int fr = 0, ok = 1;
	while (j < len && is_digit(s[j])) {
		if (fr < scale) {
			a = a * 10 + (uint64_t)(s[j] - '0');
			fr++;
		} else if (exact && s[j] != '0') {
			ok = 0; /* not integral at this scale */
		}
		j++;
	}
	*i = j;
	*acc = a;
	return ok && j != f0 ? fr : -1;
}

/*
 * dec_scaled() of what traces hold: [-]digits[.digits], no exponent, at most 18 significant
 * digits after scaling (fits int64 without checks).  Returns 1 for any other form.
 */
static inline __attribute__((always_inline)) int dec_fast(const char *s, size_t len, int scale,
							  int exact, int64_t *out)
{
	if (!len || len > 32)
		return 1;
	size_t i = s[0] == '-';
	uint64_t acc;
	int nd = lead_digits(s, len, &i, &acc), fr = 0;
	/* 19 digits (absolute 2022 µs timestamps in ns) fit when the value is small enough */
	if (!nd ||
	    !(nd + scale <= 18 || (scale == 3 && nd == 16 && acc < (uint64_t)INT64_MAX / 1000)))
		return 1;
	if (i < len && s[i] == '.')
		fr = frac_digits(s, len, &i, &acc, scale, exact);
	if (i != len)
		return 1;
	if (fr < 0)
		return -1;
	for (; fr < scale; fr++)
		acc *= 10;
	*out = s[0] == '-' ? -(int64_t)acc : (int64_t)acc;
	return 0;
}

/* Where a number's parts lie: digits s[int0..int1) and s[frac0..frac1), exponent e. */
struct dec_parts {
	size_t int0, int1, frac0, frac1;
	int64_t e;
	int neg;
};

/* The exponent after the 'e' at s[*i] into *e, *i moved past it; -1 when it has no digits. */
static int dec_exp(const char *s, size_t len, size_t *i, int64_t *e)
{
	size_t j = *i + 1;
	int neg = 0;
	int64_t v = 0;
	if (j < len && (s[j] == '+' || s[j] == '-'))
		neg = s[j++] == '-';
	size_t e0 = j;
	while (j < len && is_digit(s[j])) {
		/* saturates: 1e999999999999 is out of range anyway */
		if (v < 1000000000)
			v = v * 10 + (s[j] - '0');
		j++;
	}
	if (j == e0)
		return -1;
	*i = j;
	*e = neg ? -v : v;
	return 0;
}

/* @s split into its parts (RFC 8259's number grammar, leading zeros allowed), or -1. */
static int dec_split(const char *s, size_t len, struct dec_parts *d)
{
	size_t i = 0;
	d->neg = len && s[0] == '-';
	i += d->neg;
	d->int0 = i;
	while (i < len && is_digit(s[i]))
		i++;
	d->int1 = d->frac0 = d->frac1 = i;
	if (d->int1 == d->int0)
		return -1;
	if (i < len && s[i] == '.') {
		d->frac0 = ++i;
		while (i < len && is_digit(s[i]))
			i++;
		d->frac1 = i;
		if (d->frac1 == d->frac0)
			return -1;
	}
	d->e = 0;
	if (i < len && (s[i] == 'e' || s[i] == 'E') && dec_exp(s, len, &i, &d->e) < 0)
		return -1;
	return i == len ? 0 : -1;
}

/*
 * The number of parts @d times 10^@scale: value = D * 10^k with D the digit string int.frac
 * without the point; -1 when it leaves int64 or (with @exact) drops a nonzero digit.
 */
static int dec_value(const char *s, const struct dec_parts *d, int scale, int exact, int64_t *out)
{
	size_t nint = d->int1 - d->int0, nfrac = d->frac1 - d->frac0;
	int64_t k = d->e - (int64_t)nfrac + scale;
	int64_t ndig = (int64_t)(nint + nfrac);
	int64_t keep = k < 0 ? ndig + k : ndig; /* digits that stay left of the point */
	uint64_t lim = d->neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	uint64_t acc = 0;
	for (int64_t j = 0; j < ndig; j++) {
		size_t at = j < (int64_t)nint ? d->int0 + j : d->frac0 + (j - nint);
		int dg = s[at] - '0';
		if (j >= keep) {
			if (!exact)
				break;
			if (dg)
				return -1;
			continue;
		}
		if (acc > (lim - dg) / 10)
			return -1;
		acc = acc * 10 + dg;
	}
	for (int64_t j = 0; j < k && acc; j++) {
		if (acc > lim / 10)
			return -1;
		acc *= 10;
	}
	*out = d->neg ? (int64_t)(0 - acc) : (int64_t)acc;
	return 0;
}

/*
 * dec_scaled() of any form: exponents, more digits than int64 holds (rare in traces).  Out
 * of line, so the fast path's call ends in a jump and keeps no frame, and cold: in .text it
 * moved the scalar token code 32 bytes, 2.5% slower (bench/RESULTS.md, json split).
 */
static COLD int dec_general(const char *s, size_t len, int scale, int exact, int64_t *out)
{
	struct dec_parts d;
	if (dec_split(s, len, &d) < 0)
		return -1;
	return dec_value(s, &d, scale, exact, out);
}

/*
 * @s as a decimal times 10^@scale, truncated toward zero; with @exact, fail when nonzero
 * digits would be dropped.  Digits are accumulated in uint64 so every int64 is exact.
 */
static int dec_scaled(const char *s, size_t len, int scale, int exact, int64_t *out)
{
	int r = dec_fast(s, len, scale, exact, out);
	return r <= 0 ? r : dec_general(s, len, scale, exact, out);
}

int json_num_i64(const char *s, size_t len, int64_t *out)
{
	return dec_scaled(s, len, 0, 1, out);
}

int json_num_us_to_ns(const char *s, size_t len, int64_t *out)
{
	return dec_scaled(s, len, 3, 0, out);
}

double json_num_double(const char *s, size_t len)
{
	char buf[128];
	char *t = len < sizeof(buf) ? buf : xmalloc(len + 1);
	memcpy(t, s, len);
	t[len] = 0;
	double v = strtod(t, NULL);
	if (t != buf)
		free(t);
	return v;
}

#ifdef SWAR_DIGITS
/* The value of @n (1..8) ASCII digits at @s; reads 8 bytes (the window's padding covers it). */
static inline uint64_t digits_upto8(const char *s, size_t n)
{
	if (n == 8)
		return parse8(load8(s));
	/* the digits to the top bytes, '0's below them */
	return parse8(load8(s) << (8 * (8 - n)) | 0x3030303030303030ULL >> (8 * n));
}

/*
 * json_num_i64() (@us 0) or json_num_us_to_ns() (@us 1) of the number tok just lexed, whose
 * shape is @sh: the digits are known, so the common forms take no second scan.  The rest
 * (exponents, more than 16 integer digits, fractions of integers) go to dec_scaled().
 */
static inline __attribute__((always_inline)) int
num_convert(const struct kp_json_tok *tok, const struct num_shape *sh, int us, int64_t *out)
{
	static const uint64_t p10[] = { 1,      10,      100,      1000,     10000,
					100000, 1000000, 10000000, 100000000 };
	const char *s = tok->s;
	int neg = s[0] == '-';
	size_t ni = sh->nint, nf = sh->nfrac;
	if (sh->exp || ni > (us ? 15 : 16) || (!us && nf))
		return us ? json_num_us_to_ns(tok->s, tok->len, out)
			  : json_num_i64(tok->s, tok->len, out);
	s += neg;
	uint64_t v = ni <= 8 ? digits_upto8(s, ni)
			     : parse8(load8(s)) * p10[ni - 8] + digits_upto8(s + 8, ni - 8);
	if (us) {
		size_t k = nf < 3 ? nf : 3; /* digits past ns are truncated */
		v = v * 1000 + (k ? digits_upto8(s + ni + 1, k) * p10[3 - k] : 0);
	}
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

#endif

static inline __attribute__((always_inline)) enum kp_json_type
int_tok(struct kp_json *p, struct kp_json_tok *tok, int us, int64_t *out, int *rc, int level)
{
#ifdef SWAR_DIGITS
	if (p->state == S_VALUE) {
		int c = skip_ws(p);
		if (is_digit(c) || c == '-') {
			struct num_shape sh = { 0, 0, 0 };
			if (lex_number_sh(p, tok, &sh, level) < 0)
				return fail(p, tok);
			tok->type = JT_NUM;
			tok->depth = p->depth;
			after_value(p);
			*rc = num_convert(tok, &sh, us, out);
			return JT_NUM;
		}
	}
#endif
	enum kp_json_type ty = json_next(p, tok);
	if (ty == JT_NUM)
		*rc = us ? json_num_us_to_ns(tok->s, tok->len, out)
			 : json_num_i64(tok->s, tok->len, out);
	return ty;
}

static __attribute__((noinline)) enum kp_json_type
int_detour(struct kp_json *p, struct kp_json_tok *tok, int us, int64_t *out, int *rc)
{
	if (p->err)
		return fail(p, tok); /* what json_next() returns, *rc untouched */
	return int_tok(p, tok, us, out, rc, JSON_SIMD_SCALAR);
}

enum kp_json_type json_next_int(struct kp_json *p, struct kp_json_tok *tok, int us, int64_t *out,
				int *rc)
{
	if (p->detour)
		return int_detour(p, tok, us, out, rc);
	return int_tok(p, tok, us, out, rc, JSON_SIMD_SSE2);
}
