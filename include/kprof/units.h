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
/* "%.1f" of x / scale, or "-" when x < 0 (unknown). */
char *units_fixed(char *buf, size_t cap, double x, double scale, int decimals);
/* "1.23e+12" style compact count, "-" when negative. */
char *units_count(char *buf, size_t cap, double x);

#endif /* KPROF_UNITS_H */
