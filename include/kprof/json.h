/*
 * json.h — streaming pull tokenizer for JSON over a refillable window.
 *
 * The shape is jq --stream / jsmn: json_next() returns one token at a time;
 * strings and numbers are borrowed slices of the window, valid only until the
 * next call into the tokenizer (a refill may move the window).  Whole values
 * nobody needs are skipped with json_skip() without building anything.
 * The grammar is validated (RFC 8259): commas, colons, nesting, literals,
 * number syntax, string escapes and control characters.  UTF-8 is not
 * validated (Kineto writes invalid UTF-8 at times).
 */
#ifndef KPROF_JSON_H
#define KPROF_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum kp_json_type {
	JT_ERROR = -1, /* malformed input or read error: see json_error() */
	JT_END = 0,    /* the document is complete (only whitespace followed) */
	JT_OBJ,        /* '{' */
	JT_OBJ_END,    /* '}' */
	JT_ARR,        /* '[' */
	JT_ARR_END,    /* ']' */
	JT_KEY,        /* an object member name (tok.s/len: raw contents between the quotes) */
	JT_STR,        /* a string value (raw contents between the quotes) */
	JT_NUM,        /* a number (its text) */
	JT_TRUE,
	JT_FALSE,
	JT_NULL,
};

struct kp_json_tok {
	enum kp_json_type type;
	const char *s; /* borrowed: valid until the next json_* call on the parser */
	size_t len;
	int escaped; /* JT_KEY/JT_STR: raw text contains '\' escapes; use json_unescape() */
	int64_t off; /* absolute byte offset of the token's first byte in the stream */
	int depth;   /* nesting depth after this token (top-level value's opening: 1) */
};

/* Read callback: fill @buf with up to @cap bytes; return count, 0 at EOF, -1 on error. */
typedef ssize_t (*kp_json_read_fn)(void *ctx, void *buf, size_t cap);

/*
 * The tokenizer.  Opaque in spirit; fields are here so it can live on the stack.
 * The window grows only when a single token is larger than it.
 */
struct kp_json {
	kp_json_read_fn read;
	void *ctx;
	char *buf;       /* window */
	size_t cap;      /* window size */
	size_t pos, end; /* next unread byte, end of valid bytes */
	int64_t base;    /* absolute stream offset of buf[0] */
	int eof;         /* read() returned 0 */
	int read_failed; /* read() returned -1; err is "read error", ask the source why */
	/* line tracking of bytes discarded from the window, for json_locate() */
	int64_t lines_before;   /* '\n' count in [0, base) */
	int64_t last_nl_before; /* absolute offset of the last '\n' before base, -1 if none */
	/* grammar state */
	int depth;
	int max_depth;
	uint8_t *stack; /* per depth: 'o' object or 'a' array */
	int state;      /* internal: what may come next */
	int done;       /* top-level value complete */
	/* the error, when JT_ERROR was returned */
	const char *err; /* static reason, e.g. "expected ':' after object key" */
	int64_t err_off; /* absolute offset of the offending byte */
	int err_eof;     /* 1: the input ended early (truncation); 0: malformed bytes */
	int borrowed;    /* buf is the caller's (json_init_elems): never refilled or freed */
	int short_reads; /* a refill stops after one read that returned bytes */
	int simd;        /* enum kp_json_simd: the block kernels this parser uses */
	int detour;      /* the token calls take their slow way in: an error, or scalar */
	int64_t pin;     /* a stream offset the window keeps, so json_locate() stays
				     exact for it (the event being read), -1 none; the window
				     grows when it must, up to 64 MiB, past which the pin is
				     dropped (-1) and that offset is no longer located */
};

/*
 * The kernels that scan blocks of bytes: string ends, digit runs, newlines and the 64-byte
 * structural masks of json_skip().  Every level gives the same tokens, errors and offsets.
 */
enum kp_json_simd {
	JSON_SIMD_AUTO = -1, /* json_simd_set(): the CPU's best, or KPROF_SIMD */
	JSON_SIMD_SCALAR,    /* plain C, every architecture */
	JSON_SIMD_SSE2,      /* 16-byte compares (x86-64 baseline) */
	JSON_SIMD_AVX2,      /* 32-byte compares, when the CPU has AVX2 */
};

#define JSON_DEFAULT_WINDOW (8u << 20)
#define JSON_MAX_DEPTH 1024

/* Prototypes */
/* Set up @p over @read/@ctx with a window of @window bytes (0 = default). */
void json_init(struct kp_json *p, kp_json_read_fn read, void *ctx, size_t window);
/* Set up @p over a memory buffer (copied lazily; @s must outlive @p). For tests. */
void json_init_mem(struct kp_json *p, const char *s, size_t len);
void json_free(struct kp_json *p);

/* Readable bytes a json_init_elems() buffer needs past its end (s[len] is one of them). */
#define JSON_PAD 64

/*
 * Set up @p over s[0..len), bytes of a larger stream that start at offset @base right after
 * an element of an array (a chunk of traceEvents for a parallel parse): the parser stands in
 * that array (depth 1) after an element, as the whole stream's parser would; s[len] must be
 * NUL and JSON_PAD bytes past len readable.  The end of the bytes is the end of input.
 * @max_depth bounds the depth counted from that array.  Offsets are the stream's.
 */
void json_init_elems(struct kp_json *p, char *s, size_t len, int64_t base, int max_depth);

/* Every byte consumed (whitespace aside), the parser after an element at depth 1, no error. */
int json_elems_done(struct kp_json *p);

/*
 * The parser stands right after a value inside a container (before the ',' or closing
 * bracket), without an error: 1 and *off = the stream offset of the next byte; else 0.
 */
int json_after_value(const struct kp_json *p, int64_t *off);

/* Newlines before the next byte (p->pos) and the stream offset of the last one (-1: none). */
void json_lines_at(const struct kp_json *p, int64_t *lines, int64_t *last_nl);

/*
 * Drop the window and go on at stream offset @off: the next read must return the bytes from
 * @off on.  The grammar state is kept; @lines and @last_nl are json_lines_at()'s at @off.
 */
void json_resume(struct kp_json *p, int64_t off, int64_t lines, int64_t last_nl);

/*
 * The level parsers set up from now on use: the best the CPU has, or KPROF_SIMD (scalar,
 * sse2, avx2; capped at the best, other values ignored) when set.
 */
enum kp_json_simd json_simd(void);
/*
 * Use @level (capped at the CPU's best; JSON_SIMD_AUTO: as when nothing was set) for parsers
 * set up from now on; returns the level in use.  For tests.
 */
enum kp_json_simd json_simd_set(enum kp_json_simd level);
/* "scalar", "sse2", "avx2". */
const char *json_simd_name(enum kp_json_simd level);

/* '\n' bytes in s[0..n). */
int64_t json_count_nl(const char *s, size_t n);

/* Next token.  After JT_ERROR or JT_END further calls return the same. */
enum kp_json_type json_next(struct kp_json *p, struct kp_json_tok *tok);

/*
 * The next member name (JT_KEY) of the object the parser is in, or JT_OBJ_END, or JT_ERROR:
 * json_next() with the ':' after the name consumed on the way, so the value's json_next() or
 * json_skip() starts right at it.  Same tokens and errors as json_next().
 */
enum kp_json_type json_key(struct kp_json *p, struct kp_json_tok *tok);

/*
 * json_next() for a value read as an integer: when it is a number (JT_NUM), also its
 * json_num_us_to_ns() (@us) or json_num_i64() value in *out and that call's result in *rc,
 * from the one pass that lexed it.
 */
enum kp_json_type json_next_int(struct kp_json *p, struct kp_json_tok *tok, int us, int64_t *out,
				int *rc);

/*
 * Skip the value that starts at the next token (a scalar, or a whole object or
 * array) — or, when called right after JT_KEY, that member's value; between
 * array elements it steps over the ',' first.  Returns 0, or -1 with the error
 * set (as JT_ERROR); where no value can start (before '}' or ']') that is a
 * caller bug, reported as "json_skip() where no value starts".
 * Scalars are validated fully.  Containers take the fast path (64-byte blocks,
 * simdjson-style string masks), which checks only brackets and string
 * boundaries: mismatched or unbalanced brackets ("unmatched ']'"), unterminated
 * strings, truncation and depth are errors; commas, colons, number and literal
 * syntax, escapes and control characters inside the skipped value are not.
 */
int json_skip(struct kp_json *p);

/*
 * A member's string value, right after json_key() (or JT_KEY): its raw contents (as JT_STR's,
 * escapes kept) copied into @buf, NUL-terminated; a value longer than @cap - 1 bytes is cut
 * there (never inside an escape or a UTF-8 sequence), *cut set, and its rest skipped without
 * growing the window.  tok->s points into @buf.  Any other value: json_next()'s token, *cut 0.
 * Same errors as json_next().  For names kept from untrusted input (a device's name).
 */
enum kp_json_type json_str_capped(struct kp_json *p, struct kp_json_tok *tok, char *buf,
				  size_t cap, int *cut);

/*
 * Skip the rest of the container the parser is inside, up to and including its
 * closing bracket (e.g. after reading the args you need), with json_skip()'s
 * fast path and leniency.  Returns 0 or -1.
 */
int json_skip_rest(struct kp_json *p);

/*
 * Turn an absolute offset into 1-based line and column (bytes).  Exact for any
 * offset at or after p->base: newlines are counted as bytes leave the window, and
 * the window keeps a quarter of itself (at most 64 KiB) before the current token, and
 * everything from p->pin on, so the start of the event being parsed can still be
 * located.  Older offsets give line = col = 0 (unknown): locate while the event is
 * being read.
 */
void json_locate(const struct kp_json *p, int64_t off, int *line, int *col);

/*
 * Unescape a JT_KEY/JT_STR slice into @out (cap bytes, NUL-terminated, truncated
 * if needed but never inside a UTF-8 sequence; \uXXXX becomes UTF-8, lone
 * surrogates U+FFFD; \u0000 yields a NUL byte inside the result).  Returns the
 * length written, without the terminating NUL.
 */
size_t json_unescape(const char *s, size_t len, char *out, size_t cap);

/*
 * Number conversions from a JT_NUM slice.  All exact, no double on the time path.
 *   json_num_i64: an integer (also "3.0", "1e3" when integral); -1 if not integral
 *                 or out of range.
 *   json_num_us_to_ns: a decimal count of µs ("4795881956492.880", "12", "1.5e3",
 *                 "-3") to integer ns; digits past ns truncated toward zero; -1 if
 *                 out of int64 range.
 *   json_num_double: strtod semantics (for rates, not times; LC_NUMERIC must be "C").
 * These check the grammar loosely (leading zeros pass); json_next() already did.
 */
int json_num_i64(const char *s, size_t len, int64_t *out);
int json_num_us_to_ns(const char *s, size_t len, int64_t *out);
double json_num_double(const char *s, size_t len);

#endif /* KPROF_JSON_H */
