/*
 * output.h — where a report goes: standard output, or the file of -o FILE.  FILE is never an
 * input of the run (output_clash) and is written whole or not at all: the report goes to a
 * temporary file beside it (".FILE.XXXXXX"), renamed onto FILE when complete and removed on
 * failure.  A FILE that exists and is not a regular file (/dev/null, a fifo) is written in place.
 */
#ifndef KPROF_OUTPUT_H
#define KPROF_OUTPUT_H

#include <stdio.h>

#include "kprof/diag.h"

/* One -o FILE being written. */
struct kp_output {
	FILE *fp;         /* output_open(): stdout or the temporary file */
	const char *path; /* FILE (borrowed), NULL for stdout */
	char *tmp;        /* the temporary file, malloc'ed; NULL when none */
	char *target;     /* what a symbolic link FILE names, malloc'ed; NULL when not a link */
};

/* Prototypes */
/*
 * -1 with @d (KP_USAGE) when @path is one of @inputs[0..n) (the same file: st_dev and
 * st_ino, so "./t.json", "t.json" and hard links match), else 0.  "-" (stdout, stdin) and
 * NULL entries never clash.  @cmd names the command in the message.
 */
int output_clash(const char *path, const char *const *inputs, size_t n, const char *cmd,
		 struct kp_diag *d);
/* stdout for NULL or "-", else the temporary file of @path; NULL with @d (KP_ENV) on failure. */
FILE *output_open(struct kp_output *o, const char *path, struct kp_diag *d);
/*
 * Close a file of output_open() (stdout is left to main.c) and rename it onto its path; -1 with
 * @d on a write error, the temporary file removed and the path untouched.
 */
int output_close(struct kp_output *o, struct kp_diag *d);
/* The temporary file of @path opened for writing, as a descriptor; -1 with @d (KP_ENV). */
int output_open_fd(struct kp_output *o, const char *path, struct kp_diag *d);
/* After the descriptor is closed: renamed onto the path, or removed when @failed; -1 on error. */
int output_commit(struct kp_output *o, int failed, struct kp_diag *d);
/* The temporary file removed (a run that stops before its report is complete). */
void output_discard(struct kp_output *o);

#endif /* KPROF_OUTPUT_H */
