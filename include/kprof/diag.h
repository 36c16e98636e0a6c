/*
 * diag.h — errors (one, fatal to the call) and warnings (counted, first few located).
 */
#ifndef KPROF_DIAG_H
#define KPROF_DIAG_H

#include <stdio.h>

/* Exit status table (man kprof(1), EXIT STATUS). Only main.c exits. */
enum kp_status {
	KP_OK = 0,
	KP_REGRESSION = 1, /* diff --fail-above tripped, a capture accuracy check failed */
	KP_USAGE = 2,      /* bad option or argument */
	KP_BADINPUT = 3,   /* malformed trace or device db */
	KP_ENV = 4,        /* I/O, no GPU or CUPTI, stdout write failure */
};

/*
 * The one error of a failed library call.  @msg is the full line without the
 * "kprof: " prefix, e.g. "a.json:3:7: error: expected ':' after object key".
 */
struct kp_diag {
	int status; /* enum kp_status */
	char msg[1024];
};

#define KP_WARN_SHOW 5 /* messages kept per kind (the first one is printed) */

/*
 * Warnings of one run, grouped by kind ("an event without 'dur'").  The first
 * KP_WARN_SHOW messages of a kind are kept (with @all set, --warnings=all, before the
 * first diag_warn_add(): every one); the rest only counted.  Kinds grow without a cap;
 * a zeroed struct is empty.  Free with diag_warn_free().
 */
struct kp_warnings {
	int nkinds;
	int cap;
	int all; /* keep every message, not only the first few */
	struct kp_warn_kind {
		const char *kind; /* static string naming the anomaly (or kind_copy) */
		char *kind_copy;  /* diag_warn_restore(): the kind as read, malloc'ed */
		long count;
		int nshown;
		char *shown[KP_WARN_SHOW];  /* malloc'ed full messages "LOC: warning: TEXT" */
		int text_off[KP_WARN_SHOW]; /* offset of TEXT in each */
		char *first_loc;            /* location of the first one */
		char **more;                /* @all: the messages after shown[], malloc'ed */
		int *more_off;
		long nmore, capmore;
	} *k; /* malloc'ed, nkinds used */
};

/* How warnings are printed (kprof-analyze(1), --warnings). */
enum kp_warn_mode {
	WARN_SUMMARY = 0, /* one line per kind: the first message and the count */
	WARN_ALL,         /* --warnings=all: every message */
	WARN_QUIET,       /* -q: none */
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

/*
 * Add @count warnings of @kind whose kept messages are @shown[0..@nshown) (full
 * "LOC: warning: TEXT" lines; at most KP_WARN_SHOW are kept), as a summary carries a trace's
 * warnings (src/analysis/summary.c).  @kind and the messages are copied.
 */
void diag_warn_restore(struct kp_warnings *w, const char *kind, long count, char *const *shown,
		       int nshown);

/*
 * The lines diag_warn_print() prints, without the "kprof: " prefix, one @emit call each:
 * per kind the first message, with "(first of N KIND)" when there were more; every
 * kept message when @w->all.  @side ("base", "new" or NULL) goes after "warning: "
 * as "[base] ".  Returns the number of lines.
 */
long diag_warn_lines(const struct kp_warnings *w, const char *side,
		     void (*emit)(const char *line, void *arg), void *arg);
/*
 * "kprof: @line" and a newline on @fp, the line's names and file names escaped
 * (utf8_visible: no control character or bidi mark reaches the terminal raw).  Errors
 * (d->msg) and warnings are printed with it.
 */
void diag_print(FILE *fp, const char *line);
/*
 * fprintf() for messages that quote what the user typed (an option's value, a command): the
 * text escaped as names are (utf8_visible_lines(): LF and tab kept), no prefix added.
 */
void diag_fprintf(FILE *fp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "kprof: note: NOTE" on @fp, escaped like diag_print(). */
void diag_note_print(FILE *fp, const char *note);
/* Print diag_warn_lines() to @fp, each prefixed "kprof: "; nothing under WARN_QUIET. */
void diag_warn_print(const struct kp_warnings *w, enum kp_warn_mode mode, const char *side,
		     FILE *fp);
long diag_warn_total(const struct kp_warnings *w);
void diag_warn_free(struct kp_warnings *w);

#endif /* KPROF_DIAG_H */
