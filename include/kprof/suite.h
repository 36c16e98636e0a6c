/*
 * suite.h — `kprof capture --config FILE.yaml`: a benchmark suite (torchao-style YAML) turned
 * into the option structs the command line fills, one per case.  No CUDA: CI tests it.
 */
#ifndef KPROF_SUITE_H
#define KPROF_SUITE_H

#include <stddef.h>

#include "kprof/capture.h"
#include "kprof/diag.h"

#define SUITE_MAX_BYTES (4 << 20) /* a larger suite file is refused */
#define SUITE_MAX_DEPTH 64        /* mappings and sequences nested deeper are refused */
#define SUITE_STRS 16 /* strings a case owns (output, results, shape sets, ...) */

struct kp_suite_case {
	char *name;               /* "name:", default "case<N>" (1-based) */
	struct kp_capture_opts o; /* the defaults given to suite_load() plus the case's keys */
	char *own[SUITE_STRS];    /* malloc'ed strings o points into */
	int nown;
};

struct kp_suite {
	struct kp_suite_case *c; /* malloc'ed, n used */
	size_t n;
};

/* Prototypes */
/*
 * Parse a suite from @text (@len bytes; @file names it in messages) into @s: each case starts
 * as a copy of @base (the command line's options) and takes the config's keys.  Shape sets are
 * not expanded (capture_opts_finish() does that).  Returns 0, or -1 with @d filled:
 * "FILE:LINE:COL: error: ..." and status 2 (also for text over SUITE_MAX_BYTES, nesting
 * deeper than SUITE_MAX_DEPTH and YAML aliases).
 */
int suite_parse(const char *text, size_t len, const char *file, const struct kp_capture_opts *base,
		struct kp_suite *s, struct kp_diag *d);
/*
 * suite_parse() of the file @path, read by sidefile_read(): an unreadable file or one that is
 * not a regular file (a FIFO, a directory; never read) is status 4, one over SUITE_MAX_BYTES
 * status 3.
 */
int suite_load(const char *path, const struct kp_capture_opts *base, struct kp_suite *s,
	       struct kp_diag *d);
void suite_free(struct kp_suite *s);

#endif /* KPROF_SUITE_H */
