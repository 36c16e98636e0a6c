/*
 * jsonw.h — a streaming JSON writer that places commas, newlines and indentation itself
 * (git's json-writer.h): every JSON document kprof prints goes through it.
 */
#ifndef KPROF_JSONW_H
#define KPROF_JSONW_H

#include <stdint.h>
#include <stdio.h>

#define JW_MAX_DEPTH 16

/*
 * Writer state.  A container opened with @lines puts each element on its own line,
 * indented two spaces a level, and closes on a line of its own; other containers stay
 * on one line with ", " between elements.  Empty containers print as {} and [].
 * Invariant: depth <= JW_MAX_DEPTH (deeper opens are a caller bug and are not written).
 */
struct kp_jw {
	FILE *fp;
	int depth;
	char close[JW_MAX_DEPTH + 1];          /* per open container: '}' or ']' */
	unsigned char lines[JW_MAX_DEPTH + 1]; /* per open container: one element a line */
	unsigned char any[JW_MAX_DEPTH + 1];   /* per open container: an element was written */
};

/* Prototypes */
void jw_init(struct kp_jw *jw, FILE *fp);
/*
 * In all of these, @key names the member inside an object and must be NULL inside an
 * array and at the top level.
 */
void jw_object_begin(struct kp_jw *jw, const char *key, int lines);
void jw_array_begin(struct kp_jw *jw, const char *key, int lines);
/* Close the innermost open container. */
void jw_end(struct kp_jw *jw);
/* A string (escaped per RFC 8259), or null when @s is NULL. */
void jw_string(struct kp_jw *jw, const char *key, const char *s);
void jw_int(struct kp_jw *jw, const char *key, int64_t v);
/* The shortest decimal that reads back as @v (jw_format_double()); null when not finite. */
void jw_double(struct kp_jw *jw, const char *key, double v);
void jw_bool(struct kp_jw *jw, const char *key, int v);
void jw_null(struct kp_jw *jw, const char *key);
/*
 * The escaped string @s with its quotes, on its own (csv and tests use it): control characters
 * and DEL as \n, \t, \r or \u00XX, C1 controls and bidi marks (utf8_hidden) as \uXXXX.
 */
void jw_put_string(FILE *fp, const char *s);
/*
 * @v as JSON/CSV writes it into @buf: integers below 2^53 without a fraction, others with
 * the fewest significant digits (at most 17) that strtod() reads back as @v.
 */
char *jw_format_double(char *buf, size_t cap, double v);

#endif /* KPROF_JSONW_H */
