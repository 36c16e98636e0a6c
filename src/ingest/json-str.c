/*
 * json-str.c — json_unescape(): a string token's escapes (\n, \uXXXX, surrogate pairs) to
 * UTF-8.  The tokenizer (src/ingest/json.c) validates strings as it lexes them; this decodes them.
 */
#include "kprof/json-internal.h"

#include <string.h>

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
