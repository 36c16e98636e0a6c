/*
 * units.c — 4.812e-3 s -> "4.812 ms", integer arithmetic for times.
 */
#include "kprof/units.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

char *units_time(char *buf, size_t cap, int64_t ns)
{
	/*
	 * uftrace's "%3d.%03d <unit>": no floating point.  Rounded half up
	 * to the digits shown (1,367,807 ns is "1.368 ms"), and the unit is
	 * chosen after rounding, so 999,999,600 ns is "1.000 s".
	 */
	const char *sign = ns < 0 ? "-" : "";
	uint64_t v = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
	uint64_t us, ms;

	if (v < 1000) {
		snprintf(buf, cap, "%s%" PRIu64 " ns", sign, v);
		return buf;
	}
	if (v < 1000000) {
		snprintf(buf, cap, "%s%" PRIu64 ".%03" PRIu64 " us", sign, v / 1000, v % 1000);
		return buf;
	}
	us = v / 1000 + (v % 1000 >= 500);
	if (us < 1000000) {
		snprintf(buf, cap, "%s%" PRIu64 ".%03" PRIu64 " ms", sign, us / 1000, us % 1000);
		return buf;
	}
	ms = v / 1000000 + (v % 1000000 >= 500000);
	snprintf(buf, cap, "%s%" PRIu64 ".%03" PRIu64 " s", sign, ms / 1000, ms % 1000);
	return buf;
}

char *units_fixed(char *buf, size_t cap, double x, double scale, int decimals)
{
	if (x < 0)
		snprintf(buf, cap, "-");
	else
		snprintf(buf, cap, "%.*f", decimals, x / scale);
	return buf;
}

char *units_count(char *buf, size_t cap, double x)
{
	if (x < 0)
		snprintf(buf, cap, "-");
	else if (x < 1e6)
		snprintf(buf, cap, "%.0f", x);
	else
		snprintf(buf, cap, "%.3e", x);
	return buf;
}

char *units_rate(char *buf, size_t cap, double x, const char *unit)
{
	static const char prefix[] = " kMGTPE";
	int k = 0;
	if (x < 0) {
		snprintf(buf, cap, "-");
		return buf;
	}
	while (x >= 1000 && prefix[k + 1]) {
		x /= 1000;
		k++;
	}
	if (k)
		snprintf(buf, cap, "%.1f %c%s", x, prefix[k], unit);
	else
		snprintf(buf, cap, "%.1f %s", x, unit);
	return buf;
}

const char *units_signed(char *buf, size_t cap, int64_t v,
			 const char *(*fmt)(char *buf, size_t cap, int64_t v))
{
	if (v > 0 && cap > 1) {
		buf[0] = '+';
		fmt(buf + 1, cap - 1, v);
	} else {
		fmt(buf, cap, v);
	}
	return buf;
}

const char *units_plural(int64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

char *units_calls(char *buf, size_t cap, double x)
{
	if (x == floor(x))
		snprintf(buf, cap, "%.0f", x);
	else
		snprintf(buf, cap, "%.1f", x);
	return buf;
}
