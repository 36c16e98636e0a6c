/*
 * diag.h — errors (one, fatal to the call) and warnings (counted, first few located).
 */
#ifndef KPROF_DIAG_H
#define KPROF_DIAG_H

#include <stdio.h>

/* Exit status table (man kprof(1), EXIT STATUS). Only main.c exits. */
enum kp_status {
	KP_OK = 0,
	KP_REGRESSION = 1, /* diff --fail-above tripped */
	KP_USAGE = 2,      /* bad option or argument */
	KP_BADINPUT = 3,   /* malformed trace or device db */
	KP_ENV = 4,        /* I/O, no GPU or CUPTI, stdout write failure */
};

/*
 * The one error of a failed library call.  @msg is the full line without the
 * "kprof: " prefix, e.g. "a.json:3:7: error: expected ':' after object key".
 */
struct kp_diag {
	int status;     /* enum kp_status */
	char msg[1024];
};

#define KP_WARN_SHOW 5 /* located warnings printed per kind before counting */

/*
 * Warnings of one run, grouped by kind ("an event without 'dur'").  The first
 * KP_WARN_SHOW messages of a kind are kept; the rest only counted.  Kinds grow
 * without a cap; a zeroed struct is empty.  Free with diag_warn_free().
 */
struct kp_warnings {
	int nkinds;
	int cap;
	struct kp_warn_kind {
		const char *kind;          /* static string naming the anomaly */
		long count;
		int nshown;
		char *shown[KP_WARN_SHOW]; /* malloc'ed full messages */
		char *first_loc;           /* location of the first one, for the summary */
	} *k;                              /* malloc'ed, nkinds used */
};

/* Prototypes */
/* Fill @d (may be NULL) with a formatted message; returns -1 for "return diag_error(...)". */
int diag_error(struct kp_diag *d, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Record one warning of @kind (a static string, e.g. "events without 'dur'")
 * located at @loc ("a.json:88:5", may be NULL).  Message: printf-style.
 */
void diag_warn_add(struct kp_warnings *w, const char *kind, const char *loc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Print kept messages then "skipped N <kind> (first at LOC)" summaries, each prefixed "kprof: ". */
void diag_warn_print(const struct kp_warnings *w, FILE *fp);
long diag_warn_total(const struct kp_warnings *w);
void diag_warn_free(struct kp_warnings *w);

#endif /* KPROF_DIAG_H */
