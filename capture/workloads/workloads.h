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
struct kp_diag;
struct kp_cudnn;
struct kp_results;
struct kp_sdpa_shape;
struct kp_conv_shape;

/* Accuracy of one check: max over samples of |gpu - ref| / (sum of |terms| of ref). */
struct kp_check {
	double max_err, tol;
	long samples;
};

/* Prototypes */
/* Tolerance of the normalised error for a workload dtype (CDT_*) and op family factor. */
double workloads_tolerance(int cdt);
/* SDPA's tolerances: the forward's check 2x workloads_tolerance(), the backward's 4x. */
double workloads_sdpa_tolerance(int cdt, int backward);
/* Bytes one batch item of the reference SDPA keeps: fp32 scores and P in @es-byte elements. */
double workloads_sdpa_item_bytes(const struct kp_sdpa_shape *sh, size_t es);
/*
 * Batch items per chunk of the reference SDPA: as many as fit in half of @free_bytes, at most
 * @batch; below 1 when one item does not fit.
 */
long workloads_sdpa_chunk_items(size_t free_bytes, double item_bytes, long batch);
/* FLOPs of one conv2d call (forward, or forward and backward): 2 N K OH OW C/groups R S (x3). */
double workloads_conv_flops(const struct kp_conv_shape *sh, int backward);
/* Host conversions used by the references (exact). */
double workloads_bf16_to_double(uint16_t h);
double workloads_fp16_to_double(uint16_t h);
/* The name of matmul variant @op (one MM_* bit): "mm", "addmm", "bmm", "mm+gelu", ...; or NULL. */
const char *workloads_mm_variant(int op);
/*
 * The op one call of matmul variant @op records (PyTorch's name and schema slots, doc/
 * flops-bytes.md §4.3): part 0 the op itself (aten::mm, addmm, bmm, _addmm_activation), part 1
 * the in-place activation child of the cublas backend's activation variants (aten::gelu_,
 * aten::relu_).  Returns the event's args members (Input Dims, Input type, Concrete Inputs,
 * kprof backend / compute / algo; malloc'ed) and sets *name, or NULL and *name NULL when the
 * part does not exist (or out of memory: then *name is set).
 */
char *workloads_mm_args(int op, int part, int cdt, long b, long m, long k, long n,
			const char *backend, const char *algo, const char **name);

#ifdef KPROF_HAVE_CUPTI
/* Per-run state shared by the workloads. */
struct kp_wl {
	struct kp_ctrace *t;
	const struct kp_capture_opts *o;
	void *cublas;               /* cublasHandle_t */
	struct kp_cudnn *cudnn;     /* loaded on the first cudnn conv, or NULL */
	void *cublaslt;             /* cublasLtHandle_t, created by the first cublaslt case */
	void *lt_ws;                /* its workspace (LT_WORKSPACE bytes), or NULL */
	struct kp_results *results; /* timed conv and row-wise cases, or NULL */
	uint32_t pid, tid;
	uint64_t next_ext;           /* External ids handed out so far */
	long step;                   /* ProfilerStep# counter */
	int traced;                  /* ops are recorded (CUPTI on, not warm-up) */
	int failures;                /* accuracy checks that failed */
	struct kp_diag *d;           /* the run's error (capture/record/cmsg.h), its exit status */
	double untraced_s, traced_s; /* --overhead: summed loop times */
};

/* Run every selected workload, shape and dtype.  Returns 0, or -1 with the error in w->d. */
int workloads_run(struct kp_wl *w);
/* Release what the workloads created on demand (the cuBLASLt handle and workspace). */
void workloads_close(struct kp_wl *w);
#endif

#endif /* KPROF_WORKLOADS_H */
