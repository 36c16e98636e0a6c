/*
 * render.h — an analysis (kprof analyze) as a report document: header facts, the rows
 * table and the measured table; table.h renders it.
 */
#ifndef KPROF_RENDER_H
#define KPROF_RENDER_H

#include <stdio.h>

#include "kprof/analyze.h"
#include "kprof/report.h"
#include "kprof/table.h"

struct kp_render_opts {
	enum kp_format format;
	int color;      /* ANSI colours in the table format */
	int stats;      /* add med/min/max columns */
	int full_names; /* --name=full */
};

/* Prototypes */
/* Build the document of @r (columns: kprof-analyze(1), OUTPUT); free it with report_free(). */
void render_report_doc(const struct kp_report *r, const struct kp_render_opts *o,
		       struct kp_doc *doc);
/* Build the document and write it in o->format. */
void render_report(const struct kp_report *r, const struct kp_render_opts *o, FILE *fp);
/* "bf16 989.4 TFLOP/s @ 1830 MHz" peak summary of a device (for headers). */
/* The folded lines of @r (kp_report.folds): "a;b;c NS" each (flame graph tools). */
void render_folded(const struct kp_report *r, FILE *fp);
void render_device_line(const struct kp_report *r, char *buf, size_t cap);

#endif /* KPROF_RENDER_H */
