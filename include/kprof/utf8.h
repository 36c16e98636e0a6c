/*
 * utf8.h — names made valid UTF-8 text: invalid bytes and NUL become U+FFFD.
 */
#ifndef KPROF_UTF8_H
#define KPROF_UTF8_H

#include <stddef.h>

/* Bytes of U+FFFD in UTF-8: the most utf8_clean() writes per input byte. */
#define UTF8_REPLACEMENT_LEN 3

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

#endif /* KPROF_UTF8_H */
