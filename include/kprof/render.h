/*
 * render.h — an analysis report as header lines + a table in every format.
 */
#ifndef KPROF_RENDER_H
#define KPROF_RENDER_H

#include <stdio.h>

#include "kprof/analyze.h"
#include "kprof/table.h"

struct kp_render_opts {
	enum kp_format format;
	int stats;        /* add med/min/max columns */
	int full_names;   /* --name=full */
};

/* Prototypes */
/* Fill @tb with the report's rows (columns per the man page kprof-analyze(1), OUTPUT). */
void render_report_table(const struct kp_report *r, const struct kp_render_opts *o,
			 struct kp_table *tb);
/* The whole document: '#' header lines + table, csv, or the json envelope. */
void render_report(const struct kp_report *r, const struct kp_render_opts *o, FILE *fp);
/* "bf16 989.4 TFLOP/s @ 1830 MHz" peak summary of a device (for headers). */
void render_device_line(const struct kp_report *r, char *buf, size_t cap);

#endif /* KPROF_RENDER_H */
