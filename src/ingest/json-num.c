/*
 * json-num.c — number text to values: json_num_i64(), json_num_us_to_ns() (trace µs to
 * integer ns, truncated toward zero) and json_num_double().  A fast path for what traces
 * hold ([-]digits[.digits], 8 digits a step) and a general one for exponents and long
 * digit strings.  json_next_int()'s inline conversion of a number just lexed is in
 * src/ingest/json.c; the 8-digit helpers they share are in json-internal.h.
 */
#include "kprof/json-internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/arena.h"

/* ---- numbers ---- */

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
