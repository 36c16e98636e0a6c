/*
 * wl-common.h — what the built-in workload families (wl-matmul.c, wl-sdpa.c, wl-conv.c,
 * wl-rowwise.c) share (wl-common.c) and the driver in workloads.c calls: the op-recording slots, the device buffers
 * of one case, the timed loop and the accuracy-check helpers, and each family's entry point.
 * Internal to kprof-capture.so: declared hidden, so the library exports no more than before.
 */
#ifndef KPROF_WL_COMMON_H
#define KPROF_WL_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "kprof/capture.h"
#include "workloads/workloads.h"
#ifdef KPROF_HAVE_CUPTI
#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif

/* Everything below is hidden (the rest of kprof-capture.so is built with default visibility). */
#pragma GCC visibility push(hidden)

/* One argument of a recorded op: a tensor's dims, or a scalar's Concrete Inputs value. */
struct slot {
	int nd; /* -1: not a tensor */
	long d[5];
	const char *type; /* Input type */
	char conc[40];    /* Concrete Inputs */
};

/* PyTorch's type name of each CDT_* dtype ("c10::BFloat16", ...). */
extern const char *const wl_cdt_torch[CDT_N];

/* Prototypes */
struct slot wl_tensor(const char *type, int nd, long a, long b, long c, long d);
struct slot wl_scalar(const char *type, const char *value);
/* JSON members for a cpu_op: Input Dims / Input type / Concrete Inputs + kprof's backend. */
char *wl_mk_args(const struct slot *s, int n, const char *backend, int cdt, const char *algo);

#ifdef KPROF_HAVE_CUPTI
struct kp_result;
struct kp_mm_shape;
struct kp_norm_shape;

struct dt_info {
	const char *name, *torch_type, *scalar_type; /* scalar_type: c10::ScalarType number */
	int kt;
	cudaDataType cuda;
	cublasComputeType_t compute;
	size_t size;
};

extern const struct dt_info wl_dts[CDT_N];

#define NSAMPLES 512

#define CU(call)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (cudaError_t)(call);                                              \
		if (e_ != cudaSuccess) {                                                           \
			wl_cuda_fail(w, #call, e_);                                                \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)
#define TRY(x)                                                                                     \
	do {                                                                                       \
		if ((x) < 0)                                                                       \
			goto out;                                                                  \
	} while (0)

struct bufs {
	void *p[24];
	int n;
};

struct op {
	uint64_t ext, t0;
};

typedef int (*iter_fn)(struct kp_wl *w, void *ctx);

uint64_t wl_rng_next(uint64_t *s);
int wl_cuda_fail(struct kp_wl *w, const char *what, cudaError_t e);
int wl_cudnn_fail(struct kp_wl *w, const char *why);
void *wl_dalloc(struct kp_wl *w, struct bufs *b, size_t bytes);
void wl_bufs_free(struct bufs *b);
void *wl_host_copy(struct kp_wl *w, const void *dev, size_t bytes);
int wl_fill(struct kp_wl *w, void *p, int cdt, size_t n, uint64_t seed);
double wl_hval(const void *p, size_t i, int kt);
void wl_op_begin(struct kp_wl *w, struct op *op);
void wl_op_end(struct kp_wl *w, struct op *op, const char *name, char *args);
struct slot wl_pair(long v);
int wl_gemm(struct kp_wl *w, int cdt, int ta, int tb, long M, long N, long K, const void *A,
	    long lda, long long sA, const void *B, long ldb, long long sB, float beta, void *C,
	    int c_fp32, long ldc, long long sC, long batch);
int wl_kcheck(struct kp_wl *w, int e, const char *what);
int wl_dev_sync(struct kp_wl *w);
void wl_keep_result(struct kp_wl *w, const struct kp_result *r, const char *label);
void wl_print_check(struct kp_wl *w, const char *label, const struct kp_check *c);
int wl_timed_loop(struct kp_wl *w, const char *label, iter_fn fn, void *ctx);
double wl_event_ms(struct kp_wl *w, iter_fn fn, void *ctx);
void wl_note_err(struct kp_check *chk, double got, double ref, double mag);

/* The families' entry points, called by workloads_run() per shape, dtype and backend. */
int wl_run_matmul(struct kp_wl *w, int op, int cdt, const struct kp_mm_shape *sh, int lt);
int wl_run_sdpa(struct kp_wl *w, int cdt, const struct kp_sdpa_shape *sh, int cudnn, int fallback);
int wl_run_conv(struct kp_wl *w, int cdt, const struct kp_conv_shape *sh, int cudnn, int nhwc);
int wl_run_norm(struct kp_wl *w, int op, int cdt, const struct kp_norm_shape *sh);
int wl_run_xent(struct kp_wl *w, int cdt, const struct kp_norm_shape *sh);
#endif /* KPROF_HAVE_CUPTI */

#pragma GCC visibility pop

#endif /* KPROF_WL_COMMON_H */
