/*
 * utf8.c — names made valid UTF-8 text: invalid bytes and NUL become U+FFFD; text made safe to
 * show: control characters and bidi marks escaped (utf8_visible).
 */
#include "kprof/utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/arena.h"

/*
 * Length of the valid sequence at s[0..n) (1-4), or 0 when s[0] does not start one.
 * Table 3-7 of the Unicode standard: second-byte ranges exclude overlongs (E0, F0),
 * surrogates (ED) and code points above U+10FFFF (F4).
 */
static size_t seq_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	if (c >= 0x01 && c < 0x80)
		return 1;
	size_t len;
	unsigned lo = 0x80, hi = 0xBF;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else {
		return 0; /* NUL, continuation byte, C0/C1, F5-FF */
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return len;
}

int utf8_is_clean(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < len) {
		/* 8 ASCII bytes without NUL at a time: no high bit, no zero byte (SWAR) */
		if (len - i >= 8) {
			uint64_t x;
			memcpy(&x, p + i, 8);
			const uint64_t lo = 0x0101010101010101ull, hi = 0x8080808080808080ull;
			if (!((x | ((x - lo) & ~x)) & hi)) {
				i += 8;
				continue;
			}
		}
		if (p[i] >= 0x01 && p[i] < 0x80) {
			i++;
			continue;
		}
		size_t k = seq_len(p + i, len - i);
		if (!k)
			return 0;
		i += k;
	}
	return 1;
}

size_t utf8_clean(const char *s, size_t len, char *out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0;
	while (i < len) {
		size_t k = seq_len(p + i, len - i);
		if (k) {
			memcpy(out + o, p + i, k);
			o += k;
			i += k;
		} else {
			memcpy(out + o, "\xEF\xBF\xBD", UTF8_REPLACEMENT_LEN);
			o += UTF8_REPLACEMENT_LEN;
			i++;
		}
	}
	out[o] = '\0';
	return o;
}

size_t utf8_prefix(const char *s, size_t len, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = len < max ? len : max;
	/* the last sequence's lead byte: back over at most 3 continuation bytes */
	size_t i = n;
	while (i > 0 && n - i < 3 && (p[i - 1] & 0xC0) == 0x80)
		i--;
	if (i == 0 || (p[i - 1] & 0xC0) != 0xC0)
		return n; /* ends in ASCII (or is not UTF-8 there: nothing to protect) */
	unsigned lead = p[i - 1];
	size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
	return n - (i - 1) < need ? i - 1 : n;
}

/*
 * The code point of the sequence s[0..k) when it is shown escaped in text, else 0: C1
 * controls (U+0080-U+009F: 8-bit CSI and OSC to a terminal), the bidi marks and overrides
 * (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069: they reorder the text around them,
 * CVE-2021-42574) and the line and paragraph separators (U+2028, U+2029).
 */
unsigned utf8_hidden(const char *str, size_t k)
{
	const unsigned char *s = (const unsigned char *)str;
	if (k == 2 && s[0] == 0xC2 && s[1] <= 0x9F)
		return s[1];
	if (k == 2 && s[0] == 0xD8 && s[1] == 0x9C)
		return 0x061C;
	if (k != 3 || s[0] != 0xE2)
		return 0;
	unsigned cp = 0x2000u | (s[1] & 0x3Fu) << 6 | (s[2] & 0x3Fu);
	if ((cp >= 0x200E && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) ||
	    (cp >= 0x2066 && cp <= 0x2069))
		return cp;
	return 0;
}

/*
 * The escape of the sequence at s[0..n) into @out (at least 7 bytes) and its length; 0 when
 * the sequence is shown as it is (*k: its length either way).  @lines: LF and tab stay.
 */
static size_t escape_one(const unsigned char *s, size_t n, int lines, char *out, size_t *k)
{
	unsigned c = s[0];
	*k = 1;
	if ((c >= 0x20 && c < 0x7F) || (lines && (c == '\n' || c == '\t')))
		return 0;
	if (c < 0x80) {
		const char *named = c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
		if (named) {
			memcpy(out, named, 2);
			return 2;
		}
		return (size_t)snprintf(out, 7, "\\u%04x", c);
	}
	size_t len = seq_len(s, n);
	if (!len)
		return (size_t)snprintf(out, 7, "\\x%02x", c);
	*k = len;
	unsigned cp = utf8_hidden((const char *)s, len);
	return cp ? (size_t)snprintf(out, 7, "\\u%04x", cp) : 0;
}

static size_t visible_len(const char *s, int lines)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, out = 0;
	char esc[8];
	while (i < n) {
		size_t k, e = escape_one(p + i, n - i, lines, esc, &k);
		out += e ? e : k;
		i += k;
	}
	return out;
}

static const char *visible(const char *s, int lines, struct kp_visbuf *b)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, o = 0;
	char esc[8];
	/* the common case: nothing to escape, the name itself */
	while (i < n && p[i] >= 0x20 && p[i] < 0x7F)
		i++;
	if (i == n)
		return s;
	size_t need = visible_len(s, lines) + 1;
	if (need == n + 1)
		return s;
	if (need > b->cap) {
		b->buf = xrealloc(b->buf, need);
		b->cap = need;
	}
	for (i = 0; i < n;) {
		size_t k, e = escape_one(p + i, n - i, lines, esc, &k);
		memcpy(b->buf + o, e ? esc : (const char *)p + i, e ? e : k);
		o += e ? e : k;
		i += k;
	}
	b->buf[o] = '\0';
	return b->buf;
}

size_t utf8_visible_len(const char *s)
{
	return visible_len(s, 0);
}

const char *utf8_visible(const char *s, struct kp_visbuf *b)
{
	return visible(s, 0, b);
}

const char *utf8_visible_lines(const char *s, struct kp_visbuf *b)
{
	return visible(s, 1, b);
}

void utf8_visible_free(struct kp_visbuf *b)
{
	free(b->buf);
	b->buf = NULL;
	b->cap = 0;
}

void utf8_fputs_visible(const char *s, FILE *fp)
{
	const int lines = 0;
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, run = 0;
	char esc[8];
	while (i < n) {
		size_t k, e = escape_one(p + i, n - i, lines, esc, &k);
		if (e) {
			fwrite(p + run, 1, i - run, fp);
			fwrite(esc, 1, e, fp);
			run = i + k;
		}
		i += k;
	}
	fwrite(p + run, 1, n - run, fp);
}

/*
 * Whether a spreadsheet would read @s as a formula (OWASP, CSV injection): it starts with
 * '=', '+', '@', a tab or CR, or '-' that does not start a number ("-1.5" stays a number).
 * Also such a text behind "'"s, so that the "'" src/report/table.c puts before a formula
 * and src/ingest/results-read.c takes off again are one rule: "'=x" is written "''=x".
 */
int utf8_csv_formula(const char *s)
{
	while (s[0] == '\'')
		s++;
	if (strchr("=+@\t\r", s[0]) && s[0])
		return 1;
	if (s[0] != '-' || !s[1])
		return 0;
	char *end;
	strtod(s, &end);
	return end == s || *end;
}
