/*
 * augment.h — kprof augment: the input trace again, byte for byte, with kprof's numbers
 * added to the args of every GPU event it attributed and counter tracks of achieved
 * TFLOP/s and GB/s, for Perfetto or chrome://tracing.
 */
#ifndef KPROF_AUGMENT_H
#define KPROF_AUGMENT_H

#include "kprof/analyze.h"
#include "kprof/diag.h"
#include "kprof/trace.h"

/* Counter samples over the GPU span (one per bucket where the value changes). */
#define AUGMENT_BUCKETS 1000

/* Prototypes */
/*
 * Second pass over @in_path (the file @t was loaded from; not stdin): copy its bytes to
 * @out_path (gzip when it ends in ".gz"), inserting before the closing brace of the args of
 * each GPU event with an op (ev[i] from analyze_run with opts.events, group kernel, over
 * @t): "kprof op", "kprof flops", "kprof bytes", "kprof TFLOP/s", "kprof % peak",
 * "kprof bound" (null when unknown); an event without args gains an "args" object (one whose
 * "args" is not an object is left alone).  After
 * the GPU event that comes last in the file, counter events (ph "C") "kprof TFLOP/s" and
 * "kprof GB/s" follow.  Nothing else changes.  A truncated input (@t->truncated) ends
 * after its last complete event or top-level member, with the arrays and objects open
 * there closed; *@cut (may be NULL) is that input offset, -1 for a whole input.  The output
 * is written to a temporary file beside it and renamed at the end: a failed call leaves no
 * file (an existing one unchanged).  Returns 0, or -1 with @d.
 */
int augment_write(const struct kp_trace *t, const struct kp_event_cost *ev, const char *in_path,
		  const char *out_path, int64_t *cut, struct kp_diag *d);

#endif /* KPROF_AUGMENT_H */
