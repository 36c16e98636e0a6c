/*
 * json.c — streaming pull tokenizer over a refillable window; json_locate() -> line:col.
 * json_next() validates RFC 8259 token by token; json_skip() scans 64-byte blocks (simdjson).
 * This file owns the window, the lexers and their per-token SIMD scans (kept inline here:
 * they run on every token), skipping and json_next_int().  The block kernels (newline counts,
 * json_skip's bracket scanner, the scalar/SSE2/AVX2 choice) are in src/ingest/json-scan.c, number
 * decoding in src/ingest/json-num.c, json_unescape() in src/ingest/json-str.c; shared helpers in
 * include/kprof/json-internal.h.  Every kernel level gives the same tokens, errors and
 * offsets (test-json-scan compares them).
 */
#include "kprof/json.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/arena.h"
#include "kprof/json-internal.h"

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

/* ---- window ---- */

/* Drop buf[0..from): count its lines first, then move the rest to the front. */
static void discard(struct kp_json *p, size_t from)
{
	p->lines_before += json_count_nl_at(p->simd, p->buf, from);
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
	*lines = p->lines_before + json_count_nl_at(p->simd, p->buf, p->pos);
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

HOT_ALIGN enum kp_json_type json_next(struct kp_json *p, struct kp_json_tok *tok)
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

HOT_ALIGN enum kp_json_type json_key(struct kp_json *p, struct kp_json_tok *tok)
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

/* json_scan_close() (src/ingest/json-scan.c), its errors set here. */
static int skip_scan(struct kp_json *p, size_t i, int d, unsigned char *st, int limit)
{
	const char *why = NULL;
	int64_t at = 0;
	if (json_scan_close(p, i, d, st, limit, fill, &why, &at) == 0)
		return 0;
	return why ? set_err(p, why, at, 0) : err_end(p);
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

HOT_ALIGN int json_skip(struct kp_json *p)
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
	int64_t lines = p->lines_before + json_count_nl_at(p->simd, p->buf, n);
	const char *nl = memrchr(p->buf, '\n', n);
	int64_t last = nl ? p->base + (nl - p->buf) : p->last_nl_before;
	int64_t l = lines + 1, c = off - last;
	*line = l > INT_MAX ? INT_MAX : (int)l;
	*col = c > INT_MAX ? INT_MAX : (int)c;
}

/* ---- json_next_int() ---- */

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

HOT_ALIGN enum kp_json_type json_next_int(struct kp_json *p, struct kp_json_tok *tok, int us, int64_t *out,
				int *rc)
{
	if (p->detour)
		return int_detour(p, tok, us, out, rc);
	return int_tok(p, tok, us, out, rc, JSON_SIMD_SSE2);
}
