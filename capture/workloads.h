/*
 * workloads.h — the built-in workloads (cuBLAS matmul, math-path SDPA, im2col conv), each op
 * recorded as the PyTorch op with the same meaning and checked once against a host reference.
 */
#ifndef KPROF_WORKLOADS_H
#define KPROF_WORKLOADS_H

#include <stddef.h>
#include <stdint.h>

struct kp_ctrace;
struct kp_capture_opts;
struct kp_cudnn;
struct kp_results;

/* Accuracy of one check: max over samples of |gpu - ref| / (sum of |terms| of ref). */
struct kp_check {
	double max_err, tol;
	long samples;
};

/* Prototypes */
/* Tolerance of the normalised error for a workload dtype (CDT_*) and op family factor. */
double workloads_tolerance(int cdt);
/* Host conversions used by the references (exact). */
double workloads_bf16_to_double(uint16_t h);
double workloads_fp16_to_double(uint16_t h);

#ifdef KPROF_HAVE_CUPTI
/* Per-run state shared by the workloads. */
struct kp_wl {
	struct kp_ctrace *t;
	const struct kp_capture_opts *o;
	void *cublas;               /* cublasHandle_t */
	struct kp_cudnn *cudnn;     /* loaded on the first cudnn conv, or NULL */
	struct kp_results *results; /* timed conv and row-wise cases, or NULL */
	uint32_t pid, tid;
	uint64_t next_ext;          /* External ids handed out so far */
	long step;                  /* ProfilerStep# counter */
	int traced;                 /* ops are recorded (CUPTI on, not warm-up) */
	int failures;               /* accuracy checks that failed */
	int status;                 /* exit status of a fatal CUDA/cuBLAS error, else 0 */
	double untraced_s, traced_s;/* --overhead: summed loop times */
};

/* Run every selected workload, shape and dtype.  Returns 0, or -1 with w->status set. */
int workloads_run(struct kp_wl *w);
#endif

#endif /* KPROF_WORKLOADS_H */
