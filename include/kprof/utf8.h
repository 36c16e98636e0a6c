/*
 * utf8.h — names made valid UTF-8 text: invalid bytes and NUL become U+FFFD.
 */
#ifndef KPROF_UTF8_H
#define KPROF_UTF8_H

#include <stddef.h>
#include <stdio.h>

/* Bytes of U+FFFD in UTF-8: the most utf8_clean() writes per input byte. */
#define UTF8_REPLACEMENT_LEN 3

/* Room for utf8_visible()'s escaped copies; zeroed is empty, free with utf8_visible_free(). */
struct kp_visbuf {
	char *buf;
	size_t cap;
};

/* Prototypes */
/*
 * 1 when s[0..len) is valid UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
 * above U+10FFFF) and holds no NUL byte; else 0.  Pure ASCII is the fast path.
 */
int utf8_is_clean(const char *s, size_t len);
/*
 * Copy s[0..len) to @out, each byte that does not start a valid sequence, and each NUL,
 * replaced by U+FFFD (EF BF BD), so a name never ends early at a "\u0000" and every
 * output format gets valid text.  @out must hold len * UTF8_REPLACEMENT_LEN + 1 bytes;
 * it is NUL-terminated.  Returns the length written.
 */
size_t utf8_clean(const char *s, size_t len, char *out);
/*
 * How many of the first min(@len, @max) bytes of @s to keep so the cut does not end inside
 * a UTF-8 sequence (a trailing lead byte without all its continuation bytes is dropped):
 * where to cut a clean name ("%.*s") or a message snprintf truncated, so it stays valid.
 */
size_t utf8_prefix(const char *s, size_t len, size_t max);

/*
 * The one escape of names and file names for text (kprof(1), ESCAPING): @s as it may reach a
 * terminal, a markdown comment or any text format.  Control characters become \n, \r, \t or
 * \u00XX (as json writes them; DEL \u007f), C1 controls \u0080-\u009f, the bidi marks
 * and overrides and U+2028/U+2029 \uXXXX (U+202E is \u202e), a byte that is not UTF-8 \xNN;
 * every other character, backslash included, stays.  Returns @s itself when nothing needs
 * escaping (ordinary names cost a scan), else the copy in @b (valid until the next call).
 */
const char *utf8_visible(const char *s, struct kp_visbuf *b);
/*
 * The code point of the valid UTF-8 sequence @s[0..@len) when utf8_visible() escapes it (a C1
 * control, a bidi mark or override, U+2028, U+2029), else 0.  jsonw.c writes these \uXXXX too.
 */
unsigned utf8_hidden(const char *s, size_t len);
/* utf8_visible(), LF and tab kept: for xml text, where they are white space. */
const char *utf8_visible_lines(const char *s, struct kp_visbuf *b);
/* strlen(utf8_visible(@s)), without the copy. */
size_t utf8_visible_len(const char *s);
/* utf8_visible(@s) written to @fp. */
void utf8_fputs_visible(const char *s, FILE *fp);
void utf8_visible_free(struct kp_visbuf *b);
/* Whether a spreadsheet would read @s as a formula (CSV injection), 's before it aside:
 * table.c puts a ' before it, results-read.c takes one off */
int utf8_csv_formula(const char *s);

#endif /* KPROF_UTF8_H */
