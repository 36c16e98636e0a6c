/*
 * devtable.h — render device-table entries (kprof devices).
 */
#ifndef KPROF_DEVTABLE_H
#define KPROF_DEVTABLE_H

#include <stdio.h>

#include "kprof/devdb.h"
#include "kprof/table.h"

/* Prototypes */
/*
 * Print @n entries of @db: '#' lines (with @query and @how, the entry's peaks, clocks and
 * source when one name was looked up) and a table; csv and json in base units.
 */
void devtable_render(const struct kp_devdb *db, const struct kp_device *const *devs, int n,
		     const char *query, const char *how, enum kp_format format, FILE *fp);

#endif /* KPROF_DEVTABLE_H */
