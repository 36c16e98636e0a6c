/*
 * report-doc.h — an analysis (kprof analyze) as a document: header facts, the rows
 * table and the measured table; table.h renders it.
 */
#ifndef KPROF_REPORT_DOC_H
#define KPROF_REPORT_DOC_H

#include <stdio.h>

#include "kprof/analyze.h"
#include "kprof/doc.h"
#include "kprof/table.h"

struct kp_report_doc_opts {
	enum kp_format format;
	int color;      /* ANSI colours in the table format */
	int stats;      /* add med/min/max columns */
	int full_names; /* --name=full */
};

/* Prototypes */
/* Build the document of @r (columns: kprof-analyze(1), OUTPUT); free it with doc_free(). */
void report_doc(const struct kp_report *r, const struct kp_report_doc_opts *o,
		       struct kp_doc *doc);
/* Build the document and write it in o->format. */
void report_doc_write(const struct kp_report *r, const struct kp_report_doc_opts *o, FILE *fp);
/* "bf16 989.4 TFLOP/s @ 1830 MHz" peak summary of a device (for headers). */
/* The folded lines of @r (kp_report.folds): "a;b;c NS" each (flame graph tools). */
void report_folded_write(const struct kp_report *r, FILE *fp);
void report_doc_device_line(const struct kp_report *r, char *buf, size_t cap);

#endif /* KPROF_REPORT_DOC_H */
