/*
 * units.h — human-readable cells: scaled times with their unit, rates, percentages.
 */
#ifndef KPROF_UNITS_H
#define KPROF_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Prototypes */
/* "4.812 ms" (3 decimals, unit in the cell: ns, us, ms, s). */
char *units_time(char *buf, size_t cap, int64_t ns);
/* @fmt(@v) with a '+' before a positive value: "+1.25 ms", "-2.00 KiB", "0 B" */
const char *units_signed(char *buf, size_t cap, int64_t v,
			 const char *(*fmt)(char *buf, size_t cap, int64_t v));
/* "%.1f" of x / scale, or "-" when x < 0 (unknown). */
char *units_fixed(char *buf, size_t cap, double x, double scale, int decimals);
/* "1.23e+12" style compact count, "-" when negative. */
char *units_count(char *buf, size_t cap, double x);
/* @one when @n is 1, else @many: "1 step", "2 steps", "1 launch", "2 launches". */
const char *units_plural(int64_t n, const char *one, const char *many);
/* "774.2": a count that may be fractional (calls per step) with one decimal, "774" when whole. */
char *units_calls(char *buf, size_t cap, double x);
/* "3.4 TB/s": @x per second with an SI prefix (k M G T P E) before @unit, 1 decimal; "-" when negative. */
char *units_rate(char *buf, size_t cap, double x, const char *unit);

#endif /* KPROF_UNITS_H */
