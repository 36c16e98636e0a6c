/*
 * metrics.h — `kprof capture --metrics`: the CUPTI range profiler (auto range, kernel replay:
 * one range per kernel) around a re-run of each timed loop.  Values go to kp_ctrace's kmet and
 * mwin (kmetrics.h), joined to the timed kernels before the trace is written.
 */
#ifndef KPROF_METRICS_H
#define KPROF_METRICS_H

#include <stddef.h>
#include <stdint.h>

struct kp_ctrace;

/* Prototypes */
/*
 * After the CUDA context exists: profiler and host initialisation for device 0's chip, the
 * config of every metric the chip has, and the range profiler enabled on the current context.
 * Returns 0, or -1 with a reason in @why (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES says so).
 */
int metrics_open(char *why, size_t whylen);
/* The same on context @ctx (a CUcontext; kprof-inject.so's context-created callback). */
int metrics_open_ctx(void *ctx, char *why, size_t whylen);
/* Metrics the chip accepted, and the replay passes they need (after metrics_open). */
int metrics_count(void);
int metrics_passes(void);
/* Start a window; returns 0 or -1 with a reason. */
int metrics_begin(char *why, size_t whylen);
/*
 * Stop the window, decode it and append one kp_kmet per range to @t plus a kp_mwin for the
 * timed loop [t0_ns, t1_ns] labelled @label.  Returns 0 or -1 with a reason.
 */
int metrics_end(struct kp_ctrace *t, uint64_t t0_ns, uint64_t t1_ns, const char *label, char *why,
		size_t whylen);
/* Disable the range profiler and free its images. */
void metrics_close(void);

/*
 * The pure steps, here to be unit-tested without a GPU: metrics_drop_sass keeps, in order, the
 * accepted metrics (@names, their kp_kmetric @idx) that are not SASS-instrumented (the fallback
 * when CUPTI refuses them together) and returns how many; metrics_store writes one range's
 * @vals (one per accepted metric, @idx their kp_kmetric) into @m, NaN for every metric not
 * measured.
 */
struct kp_kmet;
int metrics_drop_sass(const char **names, int *idx, int n);
void metrics_store(struct kp_kmet *m, const double *vals, const int *idx, int n);

#endif /* KPROF_METRICS_H */
