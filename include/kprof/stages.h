/*
 * stages.h — KPROF_TIMING: how long each stage of a command took, printed on stderr after the
 * command's own output (profiling; the report itself does not change).
 */
#ifndef KPROF_STAGES_H
#define KPROF_STAGES_H

#include <stdint.h>
#include <stdio.h>

/* Prototypes */
/* KPROF_TIMING is set, not empty and not "0". */
int stages_on(void);
/* A monotonic clock in nanoseconds. */
int64_t stages_now(void);
/*
 * "kprof: timing: @stage S.SSSS s" and, when @fmt is not NULL, " (" the formatted details
 * ")", one line on @out.
 */
void stages_print(FILE *out, const char *stage, int64_t ns, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* KPROF_STAGES_H */
