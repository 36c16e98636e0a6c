/*
 * output.h — where a report goes: standard output, or the file of -o FILE.
 */
#ifndef KPROF_OUTPUT_H
#define KPROF_OUTPUT_H

#include <stdio.h>

#include "kprof/diag.h"

/* Prototypes */
/* stdout for NULL or "-", else @path opened for writing; NULL with @d (KP_ENV) on failure. */
FILE *output_open(const char *path, struct kp_diag *d);
/* Close a file of output_open() (stdout is left to main.c); -1 with @d on a write error. */
int output_close(FILE *fp, const char *path, struct kp_diag *d);

#endif /* KPROF_OUTPUT_H */
