/*
 * wtrace.h — a capture's trace file written and summed up: the one write of capture.c (the
 * built-in workloads) and cmdrun.c (-- <cmd>).  Not in kprof-inject.so: its errors go into a
 * struct kp_diag (include/kprof/diag.h), which that library does not link.
 */
#ifndef KPROF_WTRACE_H
#define KPROF_WTRACE_H

#include <stddef.h>
#include <stdio.h>

struct kp_ctrace;
struct kp_diag;

/* What the summary line says of a written trace */
struct kp_trace_sum {
	size_t nkern;          /* kernel records */
	unsigned sm_lo, sm_hi; /* SM clock range of the samples while busy; 0 without */
	char sm_range[64];     /* " (SM LO-HI MHz while busy)", or "" */
};

/* Prototypes */
/*
 * @t written as @path into @out, which is closed here, and its numbers into @sum; 0, or -1
 * with "error: cannot write 'PATH': REASON" (exit status 4) in @d.
 */
int wtrace_write(struct kp_ctrace *t, FILE *out, const char *path, struct kp_trace_sum *sum,
		 struct kp_diag *d);

#endif /* KPROF_WTRACE_H */
