/*
 * utf8.c — names made valid UTF-8 text: invalid bytes and NUL become U+FFFD.
 */
#include "kprof/utf8.h"

#include <stdint.h>
#include <string.h>

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
