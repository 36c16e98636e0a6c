/*
 * workloads.c — built-in workloads: cuBLAS mm/addmm/bmm, math-path SDPA (strided-batched GEMMs
 * + softmax, scores in memory) and im2col convolution, each recorded as the PyTorch op with the
 * same meaning (doc/flops-bytes.md §4.3) and checked once against a host fp64 reference.
 */
#include "workloads.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kprof/capture.h"
#include "kprof/jsonw.h"
#include "kprof/diag.h"
#include "shapes.h"

double workloads_tolerance(int cdt)
{
	/*
	 * The error is normalised by the sum of |terms| of the reference, so it is bounded by the
	 * output's unit roundoff plus the fp32 accumulation: bf16 2^-8, fp16 2^-11, TF32 inputs
	 * 2^-11 per product; ~2x margin.  fp32 must fail if TF32 sneaks in (~1e-3).
	 */
	switch (cdt) {
	case CDT_BF16:
		return 8e-3;
	case CDT_FP16:
		return 1.5e-3;
	case CDT_TF32:
		return 2e-3;
	default:
		return 5e-5;
	}
}

double workloads_sdpa_tolerance(int cdt, int backward)
{
	return workloads_tolerance(cdt) * (backward ? 4 : 2);
}

double workloads_sdpa_item_bytes(const struct kp_sdpa_shape *sh, size_t es)
{
	/* fp32 scores [H, S_q, S_k] and P (then dS) in the dtype */
	return (double)sh->h * sh->sq * sh->sk * (4 + es);
}

long workloads_sdpa_chunk_items(size_t free_bytes, double item_bytes, long batch)
{
	long bc = (long)(free_bytes * 0.5 / item_bytes);
	return bc < 1 || bc <= batch ? bc : batch;
}

double workloads_conv_flops(const struct kp_conv_shape *sh, int backward)
{
	long oh = conv_out_dim(sh->h, sh->r, sh->stride, sh->pad, sh->dil);
	long ow = conv_out_dim(sh->w, sh->s, sh->stride, sh->pad, sh->dil);
	size_t ny = (size_t)sh->n * sh->k * oh * ow;
	/* 2 FLOPs a multiply-add, C/groups R S of them an output; the backward's dX and dW 2 more */
	return 2.0 * (double)ny * (sh->c / sh->groups) * sh->r * sh->s * (backward ? 3 : 1);
}

double workloads_bf16_to_double(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

double workloads_fp16_to_double(uint16_t h)
{
	int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
	double v;
	if (exp == 0)
		v = ldexp(man, -24);
	else if (exp == 31)
		v = man ? NAN : INFINITY;
	else
		v = ldexp(man | 0x400, exp - 25);
	return sign ? -v : v;
}

static const char *const cdt_names[CDT_N] = { "bf16", "fp16", "fp32", "tf32" };
static const char *const cdt_torch[CDT_N] = { "c10::BFloat16", "c10::Half", "float", "float" };

/* ---- op recording ---- */

struct slot {
	int nd; /* -1: not a tensor */
	long d[5];
	const char *type; /* Input type */
	char conc[40];    /* Concrete Inputs */
};

static struct slot tensor(const char *type, int nd, long a, long b, long c, long d)
{
	struct slot s = { .nd = nd, .d = { a, b, c, d }, .type = type };
	return s;
}

static struct slot scalar(const char *type, const char *value)
{
	struct slot s = { .nd = -1, .type = type };
	snprintf(s.conc, sizeof(s.conc), "%s", value);
	return s;
}

/* JSON members for a cpu_op: Input Dims / Input type / Concrete Inputs + kprof's backend. */
static char *mk_args(const struct slot *s, int n, const char *backend, int cdt, const char *algo)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fputs("\"Input Dims\":[", f);
	for (int i = 0; i < n; i++) {
		fputs(i ? ",[" : "[", f);
		for (int j = 0; j < s[i].nd; j++)
			fprintf(f, "%s%ld", j ? "," : "", s[i].d[j]);
		putc(']', f);
	}
	fputs("],\"Input type\":[", f);
	for (int i = 0; i < n; i++) {
		fputs(i ? "," : "", f);
		jw_put_string(f, s[i].type);
	}
	fputs("],\"Concrete Inputs\":[", f);
	for (int i = 0; i < n; i++) {
		fputs(i ? "," : "", f);
		jw_put_string(f, s[i].conc);
	}
	fprintf(f, "],\"kprof backend\":\"%s\",\"kprof compute\":\"%s\"", backend, cdt_names[cdt]);
	if (algo) {
		fputs(",\"kprof algo\":", f);
		jw_put_string(f, algo);
	}
	fclose(f);
	return buf;
}

/* ---- matmul variants: the op each one records ---- */

static const char *const mm_variants[MM_NVARIANTS] = { "mm",        "addmm",      "bmm",
						       "mm+relu",   "addmm+relu", "mm+gelu",
						       "addmm+gelu" };

const char *workloads_mm_variant(int op)
{
	for (int i = 0; i < MM_NVARIANTS; i++)
		if (op == 1 << i)
			return mm_variants[i];
	return NULL;
}

char *workloads_mm_args(int op, int part, int cdt, long b, long m, long k, long n,
			const char *backend, const char *algo, const char **name)
{
	const char *ty = cdt_torch[cdt];
	int act = op & (MM_RELU | MM_RELU_BIAS | MM_GELU | MM_GELU_BIAS);
	int gelu = op & (MM_GELU | MM_GELU_BIAS), bias = op & (MM_RELU_BIAS | MM_GELU_BIAS);
	struct slot s[6];
	int ns;
	*name = NULL;
	if (part == 1) {
		/* the reference's in-place activation: gelu_(self, approximate="tanh") | relu_(self);
		 * Kineto records a str argument as type "" with no value */
		if (!act)
			return NULL;
		s[0] = tensor(ty, 2, m, n, 0, 0);
		s[1] = scalar("", "");
		*name = gelu ? "aten::gelu_" : "aten::relu_";
		return mk_args(s, gelu ? 2 : 1, backend, cdt, NULL);
	}
	if (part != 0)
		return NULL;
	if (op == MM_MM) {
		s[0] = tensor(ty, 2, m, k, 0, 0);
		s[1] = tensor(ty, 2, k, n, 0, 0);
		ns = 2, *name = "aten::mm";
	} else if (op == MM_ADDMM) {
		s[0] = tensor(ty, 1, n, 0, 0, 0);
		s[1] = tensor(ty, 2, m, k, 0, 0);
		s[2] = tensor(ty, 2, k, n, 0, 0);
		s[3] = scalar("Scalar", "1");
		s[4] = scalar("Scalar", "1");
		ns = 5, *name = "aten::addmm";
	} else if (op == MM_BMM) {
		s[0] = tensor(ty, 3, b, m, k, 0);
		s[1] = tensor(ty, 3, b, k, n, 0);
		ns = 2, *name = "aten::bmm";
	} else if (act) {
		/*
		 * _addmm_activation(self, mat1, mat2, *, beta=1, alpha=1, use_gelu=False): without
		 * bias, beta 0 (self [N] is not read, and not counted by kprof analyze)
		 */
		s[0] = tensor(ty, 1, n, 0, 0, 0);
		s[1] = tensor(ty, 2, m, k, 0, 0);
		s[2] = tensor(ty, 2, k, n, 0, 0);
		s[3] = scalar("Scalar", bias ? "1" : "0");
		s[4] = scalar("Scalar", "1");
		s[5] = scalar("Scalar", gelu ? "True" : "False");
		ns = 6, *name = "aten::_addmm_activation";
	} else {
		return NULL;
	}
	return mk_args(s, ns, backend, cdt, algo);
}
#ifdef KPROF_HAVE_CUPTI

/* cublasLt.h declares cublasLtLoggerForceDisable() without a prototype */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <cublasLt.h>
#pragma GCC diagnostic pop
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "ctrace.h"
#include "kernels.h"
#include "membound.h"
#include "metrics.h"
#include "recorder.h"
#include "results.h"
#include "cudnn-graph.h"
#include "wl-cudnn.h"

struct dt_info {
	const char *name, *torch_type, *scalar_type; /* scalar_type: c10::ScalarType number */
	int kt;
	cudaDataType cuda;
	cublasComputeType_t compute;
	size_t size;
};

static const struct dt_info dts[CDT_N] = {
	[CDT_BF16] = { "bf16", "c10::BFloat16", "15", KT_BF16, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2 },
	[CDT_FP16] = { "fp16", "c10::Half", "5", KT_F16, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2 },
	[CDT_FP32] = { "fp32", "float", "6", KT_F32, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4 },
	[CDT_TF32] = { "tf32", "float", "6", KT_F32, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4 },
};

#define NSAMPLES 512

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rng_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 17;
}

/* ---- errors ---- */

static int cuda_fail(struct kp_wl *w, const char *what, cudaError_t e)
{
	fprintf(stderr, "kprof: error: %s: %s\n", what, cudaGetErrorString(e));
	w->status = KP_ENV;
	return -1;
}

#define CU(call)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (cudaError_t)(call);                                              \
		if (e_ != cudaSuccess) {                                                           \
			cuda_fail(w, #call, e_);                                                   \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)
#define TRY(x)                                                                                     \
	do {                                                                                       \
		if ((x) < 0)                                                                       \
			goto out;                                                                  \
	} while (0)

/* ---- device buffers of one case ---- */

struct bufs {
	void *p[24];
	int n;
};

static void *dalloc(struct kp_wl *w, struct bufs *b, size_t bytes)
{
	void *p = NULL;
	cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
	if (e != cudaSuccess || b->n == 24) {
		fprintf(stderr, "kprof: error: cannot allocate %zu bytes on the GPU: %s\n", bytes,
			cudaGetErrorString(e));
		w->status = KP_ENV;
		if (p)
			cudaFree(p);
		return NULL;
	}
	b->p[b->n++] = p;
	return p;
}

static void bufs_free(struct bufs *b)
{
	while (b->n)
		cudaFree(b->p[--b->n]);
}

static void *host_copy(struct kp_wl *w, const void *dev, size_t bytes)
{
	void *h = malloc(bytes ? bytes : 1);
	if (!h) {
		fprintf(stderr, "kprof: error: out of host memory (%zu bytes)\n", bytes);
		w->status = KP_ENV;
		return NULL;
	}
	/* linked to the untraced id: the copy stays out of the trace */
	recorder_push(w->t->untraced_ext);
	cudaError_t e = cudaMemcpy(h, dev, bytes, cudaMemcpyDeviceToHost);
	recorder_pop();
	if (e != cudaSuccess) {
		free(h);
		cuda_fail(w, "cudaMemcpy", e);
		return NULL;
	}
	return h;
}

static int fill(struct kp_wl *w, void *p, int cdt, size_t n, uint64_t seed)
{
	recorder_push(w->t->untraced_ext);
	int e = kk_fill_uniform(p, dts[cdt].kt, n, seed);
	recorder_pop();
	return e ? cuda_fail(w, "kprof_fill_uniform", (cudaError_t)e) : 0;
}

static double hval(const void *p, size_t i, int kt)
{
	if (kt == KT_F32)
		return ((const float *)p)[i];
	uint16_t h = ((const uint16_t *)p)[i];
	return kt == KT_BF16 ? workloads_bf16_to_double(h) : workloads_fp16_to_double(h);
}

struct op {
	uint64_t ext, t0;
};

/* Kineto pushes CUSTOM0 = op id around every op, so kernels link to the innermost op. */
static void op_begin(struct kp_wl *w, struct op *op)
{
	op->ext = w->traced ? ++w->next_ext : w->t->untraced_ext;
	recorder_push(op->ext);
	op->t0 = now_ns();
}

static void op_end(struct kp_wl *w, struct op *op, const char *name, char *args)
{
	uint64_t t1 = now_ns();
	recorder_pop();
	if (w->traced)
		ctrace_add_span(w->t, "cpu_op", strdup(name), op->t0, t1, w->pid, w->tid, op->ext,
				args);
	else
		free(args);
}

static struct slot pair(long v)
{
	struct slot s = { .nd = -1, .type = "ScalarList" };
	snprintf(s.conc, sizeof(s.conc), "[%ld, %ld]", v, v);
	return s;
}

/* ---- cuBLAS, row-major ---- */

/*
 * Row-major C[M,N] = op(A)[M,K] op(B)[K,N] + beta C, @batch times with element strides.  cuBLAS
 * is column-major, so compute C^T = op(B)^T op(A)^T: swap the operands, keep the op flags.
 */
static int gemm(struct kp_wl *w, int cdt, int ta, int tb, long M, long N, long K, const void *A,
		long lda, long long sA, const void *B, long ldb, long long sB, float beta, void *C,
		int c_fp32, long ldc, long long sC, long batch)
{
	const struct dt_info *d = &dts[cdt];
	cudaDataType ct = c_fp32 ? CUDA_R_32F : d->cuda;
	float alpha = 1.f;
	cublasStatus_t st;
	cublasOperation_t oa = tb ? CUBLAS_OP_T : CUBLAS_OP_N, ob = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
	if (batch == 1)
		st = cublasGemmEx(w->cublas, oa, ob, (int)N, (int)M, (int)K, &alpha, B, d->cuda,
				  (int)ldb, A, d->cuda, (int)lda, &beta, C, ct, (int)ldc,
				  d->compute, CUBLAS_GEMM_DEFAULT);
	else
		st = cublasGemmStridedBatchedEx(w->cublas, oa, ob, (int)N, (int)M, (int)K, &alpha,
						B, d->cuda, (int)ldb, sB, A, d->cuda, (int)lda, sA,
						&beta, C, ct, (int)ldc, sC, (int)batch, d->compute,
						CUBLAS_GEMM_DEFAULT);
	if (st != CUBLAS_STATUS_SUCCESS) {
		fprintf(stderr, "kprof: error: cuBLAS GEMM %ldx%ldx%ld (batch %ld, %s): %s\n", M, N,
			K, batch, d->name, cublasGetStatusString(st));
		w->status = KP_ENV;
		return -1;
	}
	return 0;
}

static int kcheck(struct kp_wl *w, int e, const char *what)
{
	return e ? cuda_fail(w, what, (cudaError_t)e) : 0;
}

/* ---- the timed loop ---- */

typedef int (*iter_fn)(struct kp_wl *w, void *ctx);

static int dev_sync(struct kp_wl *w)
{
	cudaError_t e = cudaDeviceSynchronize();
	return e == cudaSuccess ? 0 : cuda_fail(w, "cudaDeviceSynchronize", e);
}

/* one case's summary row into --results (when asked); out of memory only warns */
static void keep_result(struct kp_wl *w, const struct kp_result *r, const char *label)
{
	if (w->results && results_add(w->results, r) < 0)
		fprintf(stderr, "kprof: warning: out of memory: %s left out of the results\n",
			label);
}

static void print_check(struct kp_wl *w, const char *label, const struct kp_check *c)
{
	int ok = c->max_err <= c->tol;
	if (!ok)
		w->failures++;
	printf("  %s  %-52s err %.2e (tol %.1e, %ld samples)\n", ok ? "\u2713" : "\u2717", label,
	       c->max_err, c->tol, c->samples);
	fflush(stdout);
}

/* The loop with CUPTI's kinds disabled: seconds, or a negative value on error. */
static double untraced_loop(struct kp_wl *w, iter_fn fn, void *ctx)
{
	recorder_enable(0);
	uint64_t t0 = now_ns();
	for (long i = 0; i < w->o->iters; i++)
		if (fn(w, ctx) < 0)
			return -1;
	if (dev_sync(w) < 0)
		return -1;
	double s = (double)(now_ns() - t0) / 1e9;
	recorder_enable(1);
	return s;
}

/*
 * --metrics: the traced iterations again, untraced, under the range profiler; their ranges
 * belong to the kernels the timed loop launched in CUPTI time [c0, c1] (kmetrics_join).
 */
static int metrics_loop(struct kp_wl *w, const char *label, iter_fn fn, void *ctx, uint64_t c0,
			uint64_t c1)
{
	char why[300];
	recorder_enable(0);
	if (metrics_begin(why, sizeof(why)) < 0)
		goto fail;
	for (long i = 0; i < w->o->iters; i++)
		if (fn(w, ctx) < 0)
			return -1;
	if (dev_sync(w) < 0)
		return -1;
	if (metrics_end(w->t, c0, c1, label, why, sizeof(why)) < 0)
		goto fail;
	recorder_enable(1);
	return 0;
fail:
	fprintf(stderr, "kprof: error: --metrics: %s\n", why);
	w->status = KP_ENV;
	return -1;
}

/*
 * Warm-up, then the traced iterations inside ProfilerStep#N.  --overhead times the untraced loop
 * before and after the traced one and uses their mean, so clock drift does not pose as overhead.
 */
static int timed_loop(struct kp_wl *w, const char *label, iter_fn fn, void *ctx)
{
	const struct kp_capture_opts *o = w->o;
	w->traced = 0;
	for (long i = 0; i < o->warmup; i++)
		if (fn(w, ctx) < 0)
			return -1;
	if (dev_sync(w) < 0)
		return -1;
	double before = 0, after = 0;
	if (o->overhead && (before = untraced_loop(w, fn, ctx)) < 0)
		return -1;
	w->traced = 1;
	uint64_t t0 = now_ns(), c0 = recorder_timestamp();
	for (long i = 0; i < o->iters; i++) {
		uint64_t ext = ++w->next_ext, s0 = now_ns();
		if (fn(w, ctx) < 0) {
			w->traced = 0;
			return -1;
		}
		char name[40];
		snprintf(name, sizeof(name), "ProfilerStep#%ld", w->step++);
		ctrace_add_span(w->t, "user_annotation", strdup(name), s0, now_ns(), w->pid, w->tid,
				ext, NULL);
	}
	int rc = dev_sync(w);
	double traced = (double)(now_ns() - t0) / 1e9;
	w->traced = 0;
	if (rc < 0)
		return -1;
	if (o->metrics && metrics_loop(w, label, fn, ctx, c0, recorder_timestamp()) < 0)
		return -1;
	if (o->overhead) {
		if ((after = untraced_loop(w, fn, ctx)) < 0)
			return -1;
		double untraced = (before + after) / 2;
		w->untraced_s += untraced;
		w->traced_s += traced;
		char u[32], t[32];
		printf("     overhead  untraced %s ms/iter  traced %s ms/iter  %.3fx  %s\n",
		       results_ms_text(u, sizeof(u), untraced * 1e3 / o->iters),
		       results_ms_text(t, sizeof(t), traced * 1e3 / o->iters),
		       untraced > 0 ? traced / untraced : 0.0, label);
	}
	return 0;
}

/* Mean time of one call of @fn over --iters untraced calls (CUDA events), ms; <0 on error. */
static double event_ms(struct kp_wl *w, iter_fn fn, void *ctx)
{
	cudaEvent_t a, b;
	float ms = -1;
	if (cudaEventCreate(&a) != cudaSuccess)
		return -1;
	if (cudaEventCreate(&b) != cudaSuccess) {
		cudaEventDestroy(a);
		return -1;
	}
	recorder_enable(0);
	w->traced = 0;
	cudaEventRecord(a, 0);
	long i;
	for (i = 0; i < w->o->iters; i++)
		if (fn(w, ctx) < 0)
			break;
	cudaEventRecord(b, 0);
	if (i == w->o->iters && cudaEventSynchronize(b) == cudaSuccess)
		cudaEventElapsedTime(&ms, a, b);
	recorder_enable(1);
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	return ms < 0 ? -1 : ms / (double)w->o->iters;
}

/* ---- matmul: cublas (bias copy, GEMM, activation kernel) or cublaslt (fused epilogue) ---- */

#define LT_WORKSPACE ((size_t)32 << 20) /* PyTorch's cuBLAS(Lt) workspace on Hopper, 32 MiB */

#define MM_BIAS (MM_ADDMM | MM_RELU_BIAS | MM_GELU_BIAS)
#define MM_ACT (MM_RELU | MM_RELU_BIAS | MM_GELU | MM_GELU_BIAS)
#define MM_GELUS (MM_GELU | MM_GELU_BIAS)

/* One cuBLASLt matmul, planned once per case (heuristic algorithm, as PyTorch's Lt path). */
struct lt_plan {
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, lc;
	cublasLtMatmulAlgo_t algo;
	size_t ws;
};

struct mm_case {
	int op, cdt;
	long b, m, k, n;
	void *a, *bm, *c, *bias;
	struct lt_plan *lt; /* NULL: the cublas backend */
	char algo[120];
};

static int lt_fail(struct kp_wl *w, const char *what, cublasStatus_t st)
{
	fprintf(stderr, "kprof: error: cuBLASLt: %s: %s\n", what, cublasGetStatusString(st));
	w->status = KP_ENV;
	return -1;
}

#define LT(call)                                                                                   \
	do {                                                                                       \
		cublasStatus_t st_ = (call);                                                       \
		if (st_ != CUBLAS_STATUS_SUCCESS) {                                                \
			lt_fail(w, #call, st_);                                                    \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)

static void lt_plan_free(struct lt_plan *p)
{
	if (!p)
		return;
	if (p->la)
		cublasLtMatrixLayoutDestroy(p->la);
	if (p->lb)
		cublasLtMatrixLayoutDestroy(p->lb);
	if (p->lc)
		cublasLtMatrixLayoutDestroy(p->lc);
	if (p->op)
		cublasLtMatmulDescDestroy(p->op);
	free(p);
}

static cublasLtEpilogue_t lt_epilogue(int op)
{
	switch (op) {
	case MM_ADDMM:
		return CUBLASLT_EPILOGUE_BIAS;
	case MM_RELU:
		return CUBLASLT_EPILOGUE_RELU;
	case MM_RELU_BIAS:
		return CUBLASLT_EPILOGUE_RELU_BIAS;
	case MM_GELU:
		return CUBLASLT_EPILOGUE_GELU;
	case MM_GELU_BIAS:
		return CUBLASLT_EPILOGUE_GELU_BIAS;
	default:
		return CUBLASLT_EPILOGUE_DEFAULT;
	}
}

/* The handle and the workspace, on the first cublaslt case. */
static int lt_open(struct kp_wl *w)
{
	if (w->cublaslt)
		return 0;
	cublasLtHandle_t h;
	cublasStatus_t st = cublasLtCreate(&h);
	if (st != CUBLAS_STATUS_SUCCESS)
		return lt_fail(w, "cublasLtCreate", st);
	w->cublaslt = h;
	cudaError_t e = cudaMalloc(&w->lt_ws, LT_WORKSPACE);
	if (e != cudaSuccess) {
		w->lt_ws = NULL;
		return cuda_fail(w, "cudaMalloc (cuBLASLt workspace)", e);
	}
	return 0;
}

void workloads_close(struct kp_wl *w)
{
	if (w->lt_ws)
		cudaFree(w->lt_ws);
	if (w->cublaslt)
		cublasLtDestroy(w->cublaslt);
	w->lt_ws = w->cublaslt = NULL;
}

/*
 * The operation: no transposes, the case's epilogue, its bias; -1 after the message.  (The
 * calls' text is the message: LT() prints it.)
 */
static int lt_desc(struct kp_wl *w, struct lt_plan *p, struct mm_case *c, const struct dt_info *d)
{
	cublasOperation_t no = CUBLAS_OP_N;
	cublasLtEpilogue_t epi = lt_epilogue(c->op);
	LT(cublasLtMatmulDescCreate(&p->op, d->compute, CUDA_R_32F));
	LT(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &no, sizeof(no)));
	LT(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &no, sizeof(no)));
	LT(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
	if (c->op & MM_BIAS)
		LT(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
						  &c->bias, sizeof(c->bias)));
	return 0;
out:
	return -1;
}

/* The operands' layouts (B^T, A^T, C^T), strided batches when b > 1; -1 after the message */
static int lt_layouts(struct kp_wl *w, struct lt_plan *p, struct mm_case *c,
		      const struct dt_info *d)
{
	LT(cublasLtMatrixLayoutCreate(&p->la, d->cuda, (uint64_t)c->n, (uint64_t)c->k, c->n));
	LT(cublasLtMatrixLayoutCreate(&p->lb, d->cuda, (uint64_t)c->k, (uint64_t)c->m, c->k));
	LT(cublasLtMatrixLayoutCreate(&p->lc, d->cuda, (uint64_t)c->n, (uint64_t)c->m, c->n));
	if (c->b > 1) {
		int32_t bc = (int32_t)c->b;
		int64_t sa = c->k * c->n, sb = c->m * c->k, sc = c->m * c->n;
		cublasLtMatrixLayout_t l[3] = { p->la, p->lb, p->lc };
		int64_t s[3] = { sa, sb, sc };
		for (int i = 0; i < 3; i++) {
			LT(cublasLtMatrixLayoutSetAttribute(l[i],
							    CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc,
							    sizeof(bc)));
			LT(cublasLtMatrixLayoutSetAttribute(l[i],
							    CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
							    &s[i], sizeof(s[i])));
		}
	}
	return 0;
out:
	return -1;
}

/* The heuristic's one algorithm for the 32 MiB workspace, and the workspace it needs */
static int lt_heuristic(struct kp_wl *w, struct lt_plan *p, struct mm_case *c,
			const struct dt_info *d)
{
	cublasLtMatmulPreference_t pref = NULL;
	uint64_t wsmax = LT_WORKSPACE;
	cublasLtMatmulHeuristicResult_t hr;
	int nres = 0;
	LT(cublasLtMatmulPreferenceCreate(&pref));
	LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
						&wsmax, sizeof(wsmax)));
	LT(cublasLtMatmulAlgoGetHeuristic(w->cublaslt, p->op, p->la, p->lb, p->lc, p->lc, pref, 1,
					  &hr, &nres));
	if (nres < 1) {
		fprintf(stderr, "kprof: error: cuBLASLt: no algorithm for a %ldx%ldx%ld %s GEMM\n",
			c->m, c->k, c->n, d->name);
		w->status = KP_ENV;
		goto out;
	}
	cublasLtMatmulPreferenceDestroy(pref);
	p->algo = hr.algo;
	p->ws = hr.workspaceSize;
	return 0;
out:
	if (pref)
		cublasLtMatmulPreferenceDestroy(pref);
	return -1;
}

/* "heuristic algo 21 tile 18 stages 20 splitK 1 ws 0": the chosen algorithm into @c->algo */
static void lt_describe(struct lt_plan *p, struct mm_case *c)
{
	int32_t id = 0, splitk = 0;
	uint32_t tile = 0, stages = 0;
	size_t got;
	cublasLtMatmulAlgoConfigGetAttribute(&p->algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof(id),
					     &got);
	cublasLtMatmulAlgoConfigGetAttribute(&p->algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile,
					     sizeof(tile), &got);
	cublasLtMatmulAlgoConfigGetAttribute(&p->algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages,
					     sizeof(stages), &got);
	cublasLtMatmulAlgoConfigGetAttribute(&p->algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
					     sizeof(splitk), &got);
	snprintf(c->algo, sizeof(c->algo), "heuristic algo %d tile %u stages %u splitK %d ws %zu",
		 id, tile, stages, splitk, p->ws);
}

/*
 * Row-major C[M,N] = epilogue(A[M,K] B[K,N] + bias[N]) as column-major C^T[N,M] = B^T A^T (the
 * operands swapped, both not transposed): cuBLASLt's bias is one value per row of C^T, i.e.
 * per column of C, as torch's addmm bias.  One algorithm from cublasLtMatmulAlgoGetHeuristic
 * with the 32 MiB workspace, described in @c->algo.
 */
static struct lt_plan *lt_plan_new(struct kp_wl *w, struct mm_case *c)
{
	const struct dt_info *d = &dts[c->cdt];
	struct lt_plan *p = calloc(1, sizeof(*p));
	if (!p) {
		fprintf(stderr, "kprof: error: out of host memory\n");
		w->status = KP_ENV;
		return NULL;
	}
	if (lt_desc(w, p, c, d) < 0 || lt_layouts(w, p, c, d) < 0 || lt_heuristic(w, p, c, d) < 0) {
		lt_plan_free(p);
		return NULL;
	}
	lt_describe(p, c);
	return p;
}

static int lt_run(struct kp_wl *w, struct mm_case *c)
{
	float alpha = 1.f, beta = 0.f;
	/* D = C = the output: beta 0, so C is not read (the bias comes through the epilogue) */
	cublasStatus_t st = cublasLtMatmul(w->cublaslt, c->lt->op, &alpha, c->bm, c->lt->la, c->a,
					   c->lt->lb, &beta, c->c, c->lt->lc, c->c, c->lt->lc,
					   &c->lt->algo, w->lt_ws, c->lt->ws, 0);
	return st == CUBLAS_STATUS_SUCCESS ? 0 : lt_fail(w, "cublasLtMatmul", st);
}

static int mm_iter(struct kp_wl *w, void *ctx)
{
	struct mm_case *c = ctx;
	const char *be = c->lt ? "cublaslt" : "cublas", *name = NULL, *aname = NULL;
	char *args = NULL, *aargs = NULL;
	int kt = dts[c->cdt].kt;
	if (w->traced) {
		args = workloads_mm_args(c->op, 0, c->cdt, c->b, c->m, c->k, c->n, be,
					 c->lt ? c->algo : NULL, &name);
		if (!c->lt)
			aargs = workloads_mm_args(c->op, 1, c->cdt, c->b, c->m, c->k, c->n, be,
						  NULL, &aname);
	}
	struct op op, aop;
	op_begin(w, &op);
	int rc = 0;
	if (c->lt) {
		rc = lt_run(w, c);
	} else {
		/* as torch's addmm without cuBLASLt: C = bias, then C = A B + C */
		if (c->op & MM_BIAS)
			rc = kcheck(w, kk_bias_rows(c->c, c->bias, kt, c->m, c->n),
				    "kprof_bias_rows");
		if (rc == 0)
			rc = gemm(w, c->cdt, 0, 0, c->m, c->n, c->k, c->a, c->k, c->m * c->k, c->bm,
				  c->n, c->k * c->n, c->op & MM_BIAS ? 1.f : 0.f, c->c, 0, c->n,
				  c->m * c->n, c->b);
		if (c->op & MM_ACT) {
			op_begin(w, &aop);
			if (rc == 0)
				rc = kcheck(w,
					    kk_activation(c->c, kt, (size_t)c->m * c->n,
							  (c->op & MM_GELUS) != 0),
					    "kprof_activation");
			op_end(w, &aop, aname, aargs);
		}
	}
	op_end(w, &op, name, args);
	return rc;
}

/* torch's gelu(approximate="tanh"), as cuBLASLt's GELU epilogue and kprof_activation */
static double gelu_tanh(double x)
{
	return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

static int mm_check(struct kp_wl *w, struct mm_case *c, struct kp_check *chk)
{
	int kt = dts[c->cdt].kt;
	size_t es = dts[c->cdt].size;
	int rc = -1;
	void *ha = host_copy(w, c->a, c->b * c->m * c->k * es);
	void *hb = ha ? host_copy(w, c->bm, c->b * c->k * c->n * es) : NULL;
	void *hc = hb ? host_copy(w, c->c, c->b * c->m * c->n * es) : NULL;
	void *hbias = hc && (c->op & MM_BIAS) ? host_copy(w, c->bias, c->n * es) : NULL;
	if (!hc || ((c->op & MM_BIAS) && !hbias))
		goto out;
	size_t total = (size_t)c->b * c->m * c->n;
	uint64_t seed = 1;
	long ns = total < NSAMPLES ? (long)total : NSAMPLES;
	for (long s = 0; s < ns; s++) {
		size_t idx = total <= NSAMPLES ? (size_t)s : rng_next(&seed) % total;
		size_t bi = idx / ((size_t)c->m * c->n), i = idx / c->n % c->m, j = idx % c->n;
		double ref = hbias ? hval(hbias, j, kt) : 0, mag = fabs(ref);
		for (long k = 0; k < c->k; k++) {
			double p = hval(ha, (bi * c->m + i) * c->k + k, kt) *
				   hval(hb, (bi * c->k + k) * c->n + j, kt);
			ref += p;
			mag += fabs(p);
		}
		/* |relu'|, |gelu'| <= 1.13: the activation keeps the error within the same bound */
		if (c->op & MM_GELUS)
			ref = gelu_tanh(ref);
		else if (c->op & MM_ACT)
			ref = ref > 0 ? ref : 0;
		double err = fabs(hval(hc, idx, kt) - ref) / (mag > 1e-30 ? mag : 1e-30);
		if (!(err <= chk->max_err)) /* NaN propagates */
			chk->max_err = isnan(err) ? INFINITY : err;
		chk->samples++;
	}
	rc = 0;
out:
	free(ha);
	free(hb);
	free(hc);
	free(hbias);
	return rc;
}

/* A, B, C (and the bias) on the device, A, B and the bias filled; -1 after the message */
static int mm_alloc(struct kp_wl *w, struct bufs *b, struct mm_case *c)
{
	int cdt = c->cdt;
	size_t es = dts[cdt].size;
	if (!(c->a = dalloc(w, b, c->b * c->m * c->k * es)) ||
	    !(c->bm = dalloc(w, b, c->b * c->k * c->n * es)) ||
	    !(c->c = dalloc(w, b, c->b * c->m * c->n * es)) ||
	    ((c->op & MM_BIAS) && !(c->bias = dalloc(w, b, c->n * es))))
		return -1;
	TRY(fill(w, c->a, cdt, c->b * c->m * c->k, 11));
	TRY(fill(w, c->bm, cdt, c->b * c->k * c->n, 12));
	if (c->bias)
		TRY(fill(w, c->bias, cdt, c->n, 13));
	return 0;
out:
	return -1;
}

/* The 'time' line of a timed case (@ms per iteration) and its --results row */
static void mm_report(struct kp_wl *w, const struct mm_case *c, const struct kp_check *chk,
		      double ms, const char *be, const char *batch, const char *label)
{
	int op = c->op, cdt = c->cdt;
	double fl = 2.0 * c->b * c->m * c->n * c->k;
	char mt[32];
	printf("     time  %s ms/iter  %.1f TFLOP/s  %s\n", results_ms_text(mt, sizeof(mt), ms),
	       fl / (ms * 1e-3) / 1e12, label);
	struct kp_result r = {
		.ms = ms, .tflops = fl / (ms * 1e-3) / 1e12, .err = chk->max_err, .tol = chk->tol
	};
	const char *opname = NULL;
	free(workloads_mm_args(op, 0, cdt, c->b, c->m, c->k, c->n, be, NULL, &opname));
	snprintf(r.op, sizeof(r.op), "%s", opname ? opname : "?");
	snprintf(r.kind, sizeof(r.kind), "%s", workloads_mm_variant(op));
	snprintf(r.shape, sizeof(r.shape), "%ldx%ldx%ld%s", c->m, c->k, c->n, batch);
	snprintf(r.dtype, sizeof(r.dtype), "%s", dts[cdt].name);
	snprintf(r.backend, sizeof(r.backend), "%s", be);
	snprintf(r.mode, sizeof(r.mode), "fwd");
	keep_result(w, &r, label);
}

static int run_matmul(struct kp_wl *w, int op, int cdt, const struct kp_mm_shape *sh, int lt)
{
	struct bufs b = { .n = 0 };
	struct mm_case c = { .op = op, .cdt = cdt, .b = 1, .m = sh->m, .k = sh->k, .n = sh->n };
	int rc = -1;
	const char *be = lt ? "cublaslt" : "cublas";
	if (op == MM_BMM)
		c.b = w->o->batch ? w->o->batch : 8;
	char label[160], batch[32] = "";
	if (op == MM_BMM)
		snprintf(batch, sizeof(batch), " b=%ld", c.b);
	snprintf(label, sizeof(label), "matmul %s %s %s %ldx%ldx%ld%s%s%s",
		 workloads_mm_variant(op), dts[cdt].name, be, c.m, c.k, c.n, batch,
		 sh->label[0] ? " " : "", sh->label);
	TRY(mm_alloc(w, &b, &c));
	if (lt) {
		TRY(lt_open(w));
		if (!(c.lt = lt_plan_new(w, &c)))
			goto out;
		printf("     cublaslt  %s: %s\n", label, c.algo);
	}
	w->traced = 0;
	TRY(mm_iter(w, &c));
	TRY(dev_sync(w));
	struct kp_check chk = { .tol = workloads_tolerance(cdt) };
	TRY(mm_check(w, &c, &chk));
	print_check(w, label, &chk);
	TRY(timed_loop(w, label, mm_iter, &c));
	double ms = event_ms(w, mm_iter, &c);
	if (ms > 0)
		mm_report(w, &c, &chk, ms, be, batch, label);
	rc = 0;
out:
	lt_plan_free(c.lt);
	bufs_free(&b);
	return rc;
}

/* ---- SDPA: math path (reference) or cuDNN's fused flash attention (cudnn) ---- */

struct sdpa_case {
	int cdt;
	struct kp_sdpa_shape s;
	long g, bc; /* query heads per KV head; batch items per chunk */
	float scale;
	int backward;
	void *q, *k, *v, *o, *dout, *dq, *dk, *dv;
	float *scores;            /* chunk: fp32 scores, then dP */
	void *p;                  /* chunk: P in dtype, then dS */
	struct kp_cudnn_sdpa *cu; /* NULL: reference (math path) */
	float *stats;             /* cudnn: logsumexp, fp32 [b, h, s_q] */
	char algo[512];
};

/* One chunk of the batch: its items' slices of the case's tensors, and the GEMM strides. */
struct sdpa_view {
	long bc, nb, mq;      /* batch items; GEMM batch (items x KV heads); rows of a group */
	long long qs, ks, ss; /* element strides of Q (and O, dO, dQ), K (and V, dK, dV), S */
	char *q, *k, *v, *o, *dout, *dq, *dk, *dv;
};

static void sdpa_view_of(const struct sdpa_case *c, long c0, long bc, struct sdpa_view *v)
{
	const struct kp_sdpa_shape *s = &c->s;
	size_t es = dts[c->cdt].size;
	size_t qoff = (size_t)c0 * s->h * s->sq * s->d * es;
	size_t koff = (size_t)c0 * s->hkv * s->sk * s->d * es;
	v->bc = bc, v->nb = bc * s->hkv, v->mq = c->g * s->sq;
	v->qs = v->mq * s->d, v->ks = s->sk * s->d, v->ss = v->mq * s->sk;
	v->q = (char *)c->q + qoff;
	v->k = (char *)c->k + koff;
	v->v = (char *)c->v + koff;
	v->o = (char *)c->o + qoff;
	v->dout = (char *)c->dout + qoff;
	v->dq = (char *)c->dq + qoff;
	v->dk = (char *)c->dk + koff;
	v->dv = (char *)c->dv + koff;
}

/* aten::scaled_dot_product_attention's slots for @bc batch items */
static void sdpa_top_slots(const struct sdpa_case *c, long bc, struct slot top[8])
{
	const struct kp_sdpa_shape *s = &c->s;
	const char *ty = dts[c->cdt].torch_type;
	const char *causal = s->causal ? "True" : "False", *gqa = c->g > 1 ? "True" : "False";
	top[0] = tensor(ty, 4, bc, s->h, s->sq, s->d);
	top[1] = tensor(ty, 4, bc, s->hkv, s->sk, s->d);
	top[2] = tensor(ty, 4, bc, s->hkv, s->sk, s->d);
	top[3] = scalar("", "");
	top[4] = scalar("Scalar", "0.");
	top[5] = scalar("Scalar", causal);
	top[6] = scalar("", "");
	top[7] = scalar("Scalar", gqa);
}

/* the forward as the math path: S = Q K^T (fp32), P = softmax(scale S), O = P V */
static int sdpa_chunk_fwd(struct kp_wl *w, struct sdpa_case *c, const struct sdpa_view *v)
{
	const struct kp_sdpa_shape *s = &c->s;
	const struct dt_info *d = &dts[c->cdt];
	const char *ty = d->torch_type, *be = "cublas-math-sdpa";
	const char *causal = s->causal ? "True" : "False", *gqa = c->g > 1 ? "True" : "False";
	long nb = v->nb, mq = v->mq;
	int tr = w->traced, rc = 0;
	struct slot top[8];
	sdpa_top_slots(c, v->bc, top);
	/* clang-format off */
	struct slot math[9] = {
		top[0], top[1], top[2], scalar("", ""), scalar("Scalar", "0."), scalar("Scalar", causal),
		scalar("", ""), scalar("", ""), scalar("Scalar", gqa),
	};
	/* clang-format on */
	struct slot b1[2] = { tensor(ty, 3, nb, mq, s->d, 0), tensor(ty, 3, nb, s->d, s->sk, 0) };
	struct slot sm[3] = { tensor("float", 3, nb, mq, s->sk, 0), scalar("Scalar", "-1"),
			      scalar("", "") };
	struct slot b2[2] = { tensor(ty, 3, nb, mq, s->sk, 0), tensor(ty, 3, nb, s->sk, s->d, 0) };

	struct op o_top, o_math, o1, o2, o3;
	char *a_top = tr ? mk_args(top, 8, be, c->cdt, NULL) : NULL;
	char *a_math = tr ? mk_args(math, 9, be, c->cdt, NULL) : NULL;
	char *a1 = tr ? mk_args(b1, 2, be, c->cdt, NULL) : NULL;
	char *a2 = tr ? mk_args(sm, 3, be, c->cdt, NULL) : NULL;
	char *a3 = tr ? mk_args(b2, 2, be, c->cdt, NULL) : NULL;
	op_begin(w, &o_top);
	op_begin(w, &o_math);
	op_begin(w, &o1); /* S = Q K^T, fp32 scores in memory */
	rc = gemm(w, c->cdt, 0, 1, mq, s->sk, s->d, v->q, s->d, v->qs, v->k, s->d, v->ks, 0.f,
		  c->scores, 1, s->sk, v->ss, nb);
	op_end(w, &o1, "aten::bmm", a1);
	op_begin(w, &o2); /* P = softmax(scale S) with the causal mask */
	if (rc == 0)
		rc = kcheck(w,
			    kk_softmax_fwd(c->p, c->scores, d->kt, nb * mq, s->sq, s->sk, c->scale,
					   s->causal),
			    "kprof_softmax_fwd");
	op_end(w, &o2, "aten::_safe_softmax", a2);
	op_begin(w, &o3); /* O = P V */
	if (rc == 0)
		rc = gemm(w, c->cdt, 0, 0, mq, s->d, s->sk, c->p, s->sk, v->ss, v->v, s->d, v->ks,
			  0.f, v->o, 0, s->d, v->qs, nb);
	op_end(w, &o3, "aten::bmm", a3);
	op_end(w, &o_math, "aten::_scaled_dot_product_attention_math", a_math);
	op_end(w, &o_top, "aten::scaled_dot_product_attention", a_top);
	return rc;
}

/* the backward's op args: p0 the wrapper, p1-p3 the autograd nodes, q1-q5 their aten ops */
struct sdpa_bwd_args {
	char *p0, *p1, *p2, *p3, *q1, *q2, *q3, *q4, *q5;
};

static void sdpa_bwd_args_new(struct kp_wl *w, const struct sdpa_case *c, const struct sdpa_view *v,
			      struct sdpa_bwd_args *a)
{
	const struct kp_sdpa_shape *s = &c->s;
	const char *ty = dts[c->cdt].torch_type, *be = "cublas-math-sdpa";
	long nb = v->nb, mq = v->mq;
	int tr = w->traced;
	struct slot top[8];
	sdpa_top_slots(c, v->bc, top);
	struct slot g1[2] = { tensor(ty, 3, nb, mq, s->d, 0), tensor(ty, 3, nb, s->d, s->sk, 0) };
	struct slot g2[2] = { tensor(ty, 3, nb, s->sk, mq, 0), tensor(ty, 3, nb, mq, s->d, 0) };
	struct slot sb[4] = { tensor("float", 3, nb, mq, s->sk, 0), tensor(ty, 3, nb, mq, s->sk, 0),
			      scalar("Scalar", "-1"), scalar("Scalar", "6") };
	struct slot g3[2] = { tensor(ty, 3, nb, mq, s->sk, 0), tensor(ty, 3, nb, s->sk, s->d, 0) };
	struct slot g4[2] = { tensor(ty, 3, nb, s->sk, mq, 0), tensor(ty, 3, nb, mq, s->d, 0) };
	struct slot one[1] = { tensor(ty, 3, nb, mq, s->d, 0) };
	struct slot onep[1] = { tensor(ty, 3, nb, mq, s->sk, 0) };
	a->p0 = tr ? mk_args(top, 8, be, c->cdt, NULL) : NULL;
	a->p1 = tr ? mk_args(one, 1, be, c->cdt, NULL) : NULL;
	a->p2 = tr ? mk_args(onep, 1, be, c->cdt, NULL) : NULL;
	a->p3 = tr ? mk_args(onep, 1, be, c->cdt, NULL) : NULL;
	a->q1 = tr ? mk_args(g1, 2, be, c->cdt, NULL) : NULL;
	a->q2 = tr ? mk_args(g2, 2, be, c->cdt, NULL) : NULL;
	a->q3 = tr ? mk_args(sb, 4, be, c->cdt, NULL) : NULL;
	a->q4 = tr ? mk_args(g3, 2, be, c->cdt, NULL) : NULL;
	a->q5 = tr ? mk_args(g4, 2, be, c->cdt, NULL) : NULL;
}

/*
 * backward as autograd runs the math path: BmmBackward0, SoftmaxBackward0, BmmBackward0,
 * inside kprof::scaled_dot_product_attention_math_backward (the forward's slots): it
 * has no model, so its ops are counted as they are, and it names the attention they
 * compute, which kprof diff pairs with a fused backward (kprof-diff(1), PAIRS ACROSS
 * BACKENDS)
 */
static int sdpa_chunk_bwd(struct kp_wl *w, struct sdpa_case *c, const struct sdpa_view *v)
{
	const struct kp_sdpa_shape *s = &c->s;
	long nb = v->nb, mq = v->mq;
	long long qs = v->qs, ks = v->ks, ss = v->ss;
	struct sdpa_bwd_args a;
	struct op p0, p1, p2, p3, q1, q2, q3, q4, q5;
	int rc;
	sdpa_bwd_args_new(w, c, v, &a);
	op_begin(w, &p0);
	op_begin(w, &p1);
	op_begin(w, &q1); /* dP = dO V^T (fp32, into the scores buffer) */
	rc = gemm(w, c->cdt, 0, 1, mq, s->sk, s->d, v->dout, s->d, qs, v->v, s->d, ks, 0.f,
		  c->scores, 1, s->sk, ss, nb);
	op_end(w, &q1, "aten::bmm", a.q1);
	op_begin(w, &q2); /* dV = P^T dO (sums the query heads of a GQA group) */
	if (rc == 0)
		rc = gemm(w, c->cdt, 1, 0, s->sk, s->d, mq, c->p, s->sk, ss, v->dout, s->d, qs, 0.f,
			  v->dv, 0, s->d, ks, nb);
	op_end(w, &q2, "aten::bmm", a.q2);
	op_end(w, &p1, "BmmBackward0", a.p1);
	op_begin(w, &p2);
	op_begin(w, &q3); /* dS = scale P (dP - rowsum(P dP)), in place of P */
	if (rc == 0)
		rc = kcheck(w,
			    kk_softmax_bwd(c->p, c->p, c->scores, dts[c->cdt].kt, nb * mq, s->sk,
					   c->scale),
			    "kprof_softmax_bwd");
	op_end(w, &q3, "aten::_softmax_backward_data", a.q3);
	op_end(w, &p2, "SoftmaxBackward0", a.p2);
	op_begin(w, &p3);
	op_begin(w, &q4); /* dQ = dS K */
	if (rc == 0)
		rc = gemm(w, c->cdt, 0, 0, mq, s->d, s->sk, c->p, s->sk, ss, v->k, s->d, ks, 0.f,
			  v->dq, 0, s->d, qs, nb);
	op_end(w, &q4, "aten::bmm", a.q4);
	op_begin(w, &q5); /* dK = dS^T Q */
	if (rc == 0)
		rc = gemm(w, c->cdt, 1, 0, s->sk, s->d, mq, c->p, s->sk, ss, v->q, s->d, qs, 0.f,
			  v->dk, 0, s->d, ks, nb);
	op_end(w, &q5, "aten::bmm", a.q5);
	op_end(w, &p3, "BmmBackward0", a.p3);
	op_end(w, &p0, "kprof::scaled_dot_product_attention_math_backward", a.p0);
	return rc;
}

/* batch items [c0, c0 + bc) on the math path: the forward, then (--backward) the backward */
static int sdpa_chunk(struct kp_wl *w, struct sdpa_case *c, long c0, long bc)
{
	struct sdpa_view v;
	sdpa_view_of(c, c0, bc, &v);
	int rc = sdpa_chunk_fwd(w, c, &v);
	if (rc < 0 || !c->backward)
		return rc;
	return sdpa_chunk_bwd(w, c, &v);
}

static int cudnn_fail(struct kp_wl *w, const char *why);

/*
 * The cudnn backend, recorded as PyTorch records SDPBackend.CUDNN_ATTENTION:
 * aten::scaled_dot_product_attention > aten::_scaled_dot_product_cudnn_attention, and the
 * autograd node > aten::_scaled_dot_product_cudnn_attention_backward.
 */
static int sdpa_cudnn_iter(struct kp_wl *w, struct sdpa_case *c)
{
	const struct kp_sdpa_shape *s = &c->s;
	const char *ty = dts[c->cdt].torch_type, *be = "cudnn";
	const char *causal = s->causal ? "True" : "False", *gqa = c->g > 1 ? "True" : "False";
	const char *lse = c->backward ? "True" : "False";
	char scale[24], why[300], maxq[24], maxk[24];
	snprintf(scale, sizeof(scale), "%g", (double)c->scale);
	snprintf(maxq, sizeof(maxq), "%ld", s->sq);
	snprintf(maxk, sizeof(maxk), "%ld", s->sk);
	int tr = w->traced, rc;
	struct slot q = tensor(ty, 4, s->b, s->h, s->sq, s->d);
	struct slot kv = tensor(ty, 4, s->b, s->hkv, s->sk, s->d);
	/* clang-format off */
	struct slot top[8] = {
		q, kv, kv, scalar("", ""), scalar("Scalar", "0."), scalar("Scalar", causal),
		scalar("", ""), scalar("Scalar", gqa),
	};
	struct slot fwd[9] = {
		q, kv, kv, scalar("", ""), scalar("Scalar", lse), scalar("Scalar", "0."),
		scalar("Scalar", causal), scalar("Scalar", "False"), scalar("Scalar", scale),
	};
	/* clang-format on */
	struct op o_top, o_fwd;
	char *a_top = tr ? mk_args(top, 8, be, c->cdt, c->algo) : NULL;
	char *a_fwd = tr ? mk_args(fwd, 9, be, c->cdt, c->algo) : NULL;
	op_begin(w, &o_top);
	op_begin(w, &o_fwd);
	rc = cudnn_sdpa_fwd(c->cu, why, sizeof(why)) < 0 ? cudnn_fail(w, why) : 0;
	op_end(w, &o_fwd, "aten::_scaled_dot_product_cudnn_attention", a_fwd);
	op_end(w, &o_top, "aten::scaled_dot_product_attention", a_top);
	if (rc < 0 || !c->backward)
		return rc;
	/* clang-format off */
	struct slot bwd[16] = {
		q, q, kv, kv, q, tensor("float", 4, s->b, s->h, s->sq, 1), tensor("Long", 0, 0, 0, 0, 0),
		tensor("Long", 0, 0, 0, 0, 0), scalar("", ""), scalar("", ""), scalar("", ""),
		scalar("Scalar", maxq), scalar("Scalar", maxk), scalar("Scalar", "0."),
		scalar("Scalar", causal), scalar("Scalar", scale),
	};
	/* clang-format on */
	struct slot one[1] = { q };
	struct op o_node, o_bwd;
	char *a_node = tr ? mk_args(one, 1, be, c->cdt, c->algo) : NULL;
	char *a_bwd = tr ? mk_args(bwd, 16, be, c->cdt, c->algo) : NULL;
	op_begin(w, &o_node);
	op_begin(w, &o_bwd);
	rc = cudnn_sdpa_bwd(c->cu, why, sizeof(why)) < 0 ? cudnn_fail(w, why) : 0;
	op_end(w, &o_bwd, "aten::_scaled_dot_product_cudnn_attention_backward", a_bwd);
	op_end(w, &o_node, "ScaledDotProductCudnnAttentionBackward0", a_node);
	return rc;
}

static int sdpa_iter(struct kp_wl *w, void *ctx)
{
	struct sdpa_case *c = ctx;
	if (c->cu)
		return sdpa_cudnn_iter(w, c);
	for (long c0 = 0; c0 < c->s.b; c0 += c->bc) {
		long bc = c->s.b - c0 < c->bc ? c->s.b - c0 : c->bc;
		if (sdpa_chunk(w, c, c0, bc) < 0)
			return -1;
	}
	return 0;
}

static void note_err(struct kp_check *chk, double got, double ref, double mag)
{
	double err = fabs(got - ref) / (mag > 1e-30 ? mag : 1e-30);
	if (!(err <= chk->max_err))
		chk->max_err = isnan(err) ? INFINITY : err;
	chk->samples++;
}

/* Softmax row i of one head in fp64: p[j] for the allowed keys, returns their count. */
static long ref_row(const void *q, const void *k, int kt, long i, long sk, long d, double scale,
		    int causal, long sq_row, double *p)
{
	long lim = causal ? (i + 1 < sk ? i + 1 : sk) : sk;
	(void)sq_row;
	double m = -INFINITY, sum = 0;
	for (long j = 0; j < lim; j++) {
		double acc = 0;
		for (long e = 0; e < d; e++)
			acc += hval(q, (size_t)i * d + e, kt) * hval(k, (size_t)j * d + e, kt);
		p[j] = acc * scale;
		if (p[j] > m)
			m = p[j];
	}
	for (long j = 0; j < lim; j++)
		sum += (p[j] = exp(p[j] - m));
	for (long j = 0; j < lim; j++)
		p[j] /= sum;
	for (long j = lim; j < sk; j++)
		p[j] = 0;
	return lim;
}

/* sdpa_check's host copies and fp64 sums, all freed by it */
struct sdpa_host {
	double *p, *dp;                  /* one softmax row, its dP */
	void *q, *k, *v, *o, *dout, *dq; /* one (batch item, head) */
	void *gq, *gdo, *dk, *dv;        /* one GQA group (k, v: its KV head) */
	double *dkr, *dvr, *dkm, *dvm;   /* dK, dV of the sampled keys: sums and sums of |terms| */
};

/* dP[j] = dO_i . V_j for the allowed keys; returns D_i = sum_j P[j] dP[j] */
static double ref_dp_row(const void *dout, size_t ro, const void *v, int kt, long lim, long d,
			 const double *p, double *dp)
{
	double di = 0;
	for (long j = 0; j < lim; j++) {
		double acc = 0;
		for (long e = 0; e < d; e++)
			acc += hval(dout, ro + e, kt) * hval(v, (size_t)j * d + e, kt);
		dp[j] = acc;
		di += p[j] * acc;
	}
	return di;
}

/* Q, K, V, O, dO, dQ of batch item @b, query head @hd (and its KV head) */
static int sdpa_copy_head(struct kp_wl *w, const struct sdpa_case *c, struct sdpa_host *h, long b,
			  long hd)
{
	const struct kp_sdpa_shape *s = &c->s;
	size_t es = dts[c->cdt].size, qsz = (size_t)s->sq * s->d * es,
	       ksz = (size_t)s->sk * s->d * es;
	long kvh = hd / c->g;
	size_t qoff = ((size_t)b * s->h + hd) * qsz, koff = ((size_t)b * s->hkv + kvh) * ksz;
	free(h->q), free(h->k), free(h->v), free(h->o), free(h->dout), free(h->dq);
	h->q = h->k = h->v = h->o = h->dout = h->dq = NULL;
	if (!(h->q = host_copy(w, (char *)c->q + qoff, qsz)) ||
	    !(h->k = host_copy(w, (char *)c->k + koff, ksz)) ||
	    !(h->v = host_copy(w, (char *)c->v + koff, ksz)) ||
	    !(h->o = host_copy(w, (char *)c->o + qoff, qsz)) ||
	    !(h->dout = host_copy(w, (char *)c->dout + qoff, qsz)) ||
	    !(h->dq = host_copy(w, (char *)c->dq + qoff, qsz)))
		return -1;
	return 0;
}

/* O row i = P V, with P in h->p */
static void sdpa_check_o_row(const struct sdpa_case *c, const struct sdpa_host *h, long i, long lim,
			     struct kp_check *fwd)
{
	const struct kp_sdpa_shape *s = &c->s;
	int kt = dts[c->cdt].kt;
	for (long e = 0; e < s->d; e++) {
		double ref = 0, mag = 0;
		for (long j = 0; j < lim; j++) {
			double t = h->p[j] * hval(h->v, (size_t)j * s->d + e, kt);
			ref += t, mag += fabs(t);
		}
		note_err(fwd, hval(h->o, (size_t)i * s->d + e, kt), ref, mag);
	}
}

/* dQ row i = scale sum_j P[j] (dP[j] - D_i) K_j */
static void sdpa_check_dq_row(const struct sdpa_case *c, struct sdpa_host *h, long i, long lim,
			      struct kp_check *bwd)
{
	const struct kp_sdpa_shape *s = &c->s;
	int kt = dts[c->cdt].kt;
	double di = ref_dp_row(h->dout, (size_t)i * s->d, h->v, kt, lim, s->d, h->p, h->dp);
	for (long e = 0; e < s->d; e++) {
		double ref = 0, mag = 0;
		for (long j = 0; j < lim; j++) {
			double t = c->scale * h->p[j] * (h->dp[j] - di) *
				   hval(h->k, (size_t)j * s->d + e, kt);
			ref += t, mag += fabs(t);
		}
		note_err(bwd, hval(h->dq, (size_t)i * s->d + e, kt), ref, mag);
	}
}

/* one random (batch item, head): O (and dQ) of 8 query rows, the last row first */
static int sdpa_check_head(struct kp_wl *w, const struct sdpa_case *c, struct sdpa_host *h,
			   struct kp_check *fwd, struct kp_check *bwd, uint64_t *seed)
{
	const struct kp_sdpa_shape *s = &c->s;
	int kt = dts[c->cdt].kt;
	long b = (long)(rng_next(seed) % s->b), hd = (long)(rng_next(seed) % s->h);
	if (sdpa_copy_head(w, c, h, b, hd) < 0)
		return -1;
	for (int r = 0; r < 8; r++) {
		long i = r == 0 ? s->sq - 1 : (long)(rng_next(seed) % s->sq);
		long lim = ref_row(h->q, h->k, kt, i, s->sk, s->d, c->scale, s->causal, 0, h->p);
		sdpa_check_o_row(c, h, i, lim, fwd);
		if (c->backward)
			sdpa_check_dq_row(c, h, i, lim, bwd);
	}
	return 0;
}

/* Q and dO of the last batch item's last GQA group, K, V, dK, dV of its KV head */
static int sdpa_copy_group(struct kp_wl *w, const struct sdpa_case *c, struct sdpa_host *h)
{
	const struct kp_sdpa_shape *s = &c->s;
	size_t es = dts[c->cdt].size, qsz = (size_t)s->sq * s->d * es,
	       ksz = (size_t)s->sk * s->d * es;
	long b = s->b - 1, kvh = s->hkv - 1;
	size_t goff = ((size_t)b * s->h + (size_t)kvh * c->g) * qsz;
	size_t koff = ((size_t)b * s->hkv + kvh) * ksz;
	free(h->k), free(h->v);
	h->k = h->v = NULL;
	if (!(h->gq = host_copy(w, (char *)c->q + goff, qsz * c->g)) ||
	    !(h->gdo = host_copy(w, (char *)c->dout + goff, qsz * c->g)) ||
	    !(h->k = host_copy(w, (char *)c->k + koff, ksz)) ||
	    !(h->v = host_copy(w, (char *)c->v + koff, ksz)) ||
	    !(h->dk = host_copy(w, (char *)c->dk + koff, ksz)) ||
	    !(h->dv = host_copy(w, (char *)c->dv + koff, ksz)))
		return -1;
	return 0;
}

/* query row i of group head @gh: its terms of dV_j = sum_i P_ij dO_i, dK_j = sum_i dS_ij Q_i */
static void sdpa_accum_row(const struct sdpa_case *c, struct sdpa_host *h, long gh, long i,
			   const long *js, long nj)
{
	const struct kp_sdpa_shape *s = &c->s;
	int kt = dts[c->cdt].kt;
	size_t qsz = (size_t)s->sq * s->d * dts[c->cdt].size, ro = (size_t)i * s->d;
	const char *qh = (const char *)h->gq + gh * qsz, *doh = (const char *)h->gdo + gh * qsz;
	long lim = ref_row(qh, h->k, kt, i, s->sk, s->d, c->scale, s->causal, 0, h->p);
	double di = ref_dp_row(doh, ro, h->v, kt, lim, s->d, h->p, h->dp);
	for (long t = 0; t < nj; t++) {
		long j = js[t];
		if (j >= lim)
			continue;
		double dsj = c->scale * h->p[j] * (h->dp[j] - di);
		for (long e = 0; e < s->d; e++) {
			double x = h->p[j] * hval(doh, ro + e, kt);
			double y = dsj * hval(qh, ro + e, kt);
			h->dvr[t * s->d + e] += x, h->dvm[t * s->d + e] += fabs(x);
			h->dkr[t * s->d + e] += y, h->dkm[t * s->d + e] += fabs(y);
		}
	}
}

/* dK, dV of up to 8 keys (key 0 first): every query row of the group adds to them */
static int sdpa_check_group(struct kp_wl *w, const struct sdpa_case *c, struct sdpa_host *h,
			    struct kp_check *bwd, uint64_t *seed)
{
	const struct kp_sdpa_shape *s = &c->s;
	int kt = dts[c->cdt].kt;
	long nj = s->sk < 8 ? s->sk : 8, js[8];
	if (sdpa_copy_group(w, c, h) < 0)
		return -1;
	h->dkr = calloc(nj * s->d, sizeof(double)), h->dvr = calloc(nj * s->d, sizeof(double));
	h->dkm = calloc(nj * s->d, sizeof(double)), h->dvm = calloc(nj * s->d, sizeof(double));
	if (!h->dkr || !h->dvr || !h->dkm || !h->dvm)
		return -1;
	for (long t = 0; t < nj; t++)
		js[t] = t == 0 ? 0 : (long)(rng_next(seed) % s->sk);
	for (long gh = 0; gh < c->g; gh++)
		for (long i = 0; i < s->sq; i++)
			sdpa_accum_row(c, h, gh, i, js, nj);
	for (long t = 0; t < nj; t++)
		for (long e = 0; e < s->d; e++) {
			size_t at = (size_t)js[t] * s->d + e;
			note_err(bwd, hval(h->dv, at, kt), h->dvr[t * s->d + e],
				 h->dvm[t * s->d + e]);
			note_err(bwd, hval(h->dk, at, kt), h->dkr[t * s->d + e],
				 h->dkm[t * s->d + e]);
		}
	return 0;
}

static int sdpa_check(struct kp_wl *w, struct sdpa_case *c, struct kp_check *fwd,
		      struct kp_check *bwd)
{
	const struct kp_sdpa_shape *s = &c->s;
	struct sdpa_host h = { .p = NULL };
	uint64_t seed = 7;
	int rc = -1;
	h.p = malloc(s->sk * sizeof(double));
	h.dp = malloc(s->sk * sizeof(double));
	if (!h.p || !h.dp)
		goto out;
	for (int pair_i = 0; pair_i < 2; pair_i++)
		if (sdpa_check_head(w, c, &h, fwd, bwd, &seed) < 0)
			goto out;
	/* dK, dV need every query row of a GQA group: only for moderate sizes */
	if (c->backward && (double)c->g * s->sq * s->sk * s->d <= (double)(1 << 27) &&
	    sdpa_check_group(w, c, &h, bwd, &seed) < 0)
		goto out;
	rc = 0;
out:
	free(h.p), free(h.dp), free(h.q), free(h.k), free(h.v), free(h.o), free(h.dout), free(h.dq);
	free(h.gq), free(h.gdo), free(h.dk), free(h.dv), free(h.dkr), free(h.dvr), free(h.dkm),
		free(h.dvm);
	return rc;
}

/* FLOPs of one forward: 2 matmuls over the unmasked (query, key) pairs (top-left causal). */
static double sdpa_fwd_flops(const struct kp_sdpa_shape *s)
{
	double pairs = (double)s->sq * s->sk;
	if (s->causal) {
		long full = s->sq < s->sk ? s->sq : s->sk; /* rows i < S_k keep i + 1 keys */
		pairs = (double)full * (full + 1) / 2 + (double)(s->sq - full) * s->sk;
	}
	return 4.0 * s->b * s->h * pairs * s->d;
}

/* one SDPA case's time line and its --results row (the worse of forward and backward errors) */
static void sdpa_report(struct kp_wl *w, const struct sdpa_case *c, int cdt, int cudnn, double ms,
			const struct kp_check *fwd, const struct kp_check *bwd, const char *label)
{
	const struct kp_sdpa_shape *sh = &c->s;
	/* the backward is 2.5 forwards (5 matmuls to 2), as FlashAttention counts it */
	double fl = sdpa_fwd_flops(sh) * (c->backward ? 3.5 : 1);
	char mt[32];
	printf("     time  %s ms/iter  %.1f TFLOP/s (%s)  %s\n",
	       results_ms_text(mt, sizeof(mt), ms), fl / (ms * 1e-3) / 1e12,
	       c->backward ? "fwd+bwd" : "fwd", label);
	struct kp_result r = {
		.ms = ms, .tflops = fl / (ms * 1e-3) / 1e12, .err = fwd->max_err, .tol = fwd->tol
	};
	if (c->backward && bwd->max_err / bwd->tol > r.err / r.tol)
		r.err = bwd->max_err, r.tol = bwd->tol;
	snprintf(r.op, sizeof(r.op), "aten::scaled_dot_product_attention");
	snprintf(r.kind, sizeof(r.kind), "sdpa");
	snprintf(r.shape, sizeof(r.shape), "%ldx%ldx%ldx%ldx%ldx%ld%s", sh->b, sh->h, sh->hkv,
		 sh->sq, sh->sk, sh->d, sh->causal ? "c" : "");
	snprintf(r.dtype, sizeof(r.dtype), "%s", dts[cdt].name);
	snprintf(r.backend, sizeof(r.backend), "%s", cudnn ? "cudnn" : "reference");
	snprintf(r.mode, sizeof(r.mode), "%s", c->backward ? "fwd+bwd" : "fwd");
	keep_result(w, &r, label);
}

/* Q, K, V, O, dO, dQ, dK, dV of the whole batch; Q, K, V, dO filled */
static int sdpa_alloc(struct kp_wl *w, struct bufs *b, struct sdpa_case *c)
{
	const struct kp_sdpa_shape *sh = &c->s;
	int cdt = c->cdt;
	size_t es = dts[cdt].size;
	size_t nq = (size_t)sh->b * sh->h * sh->sq * sh->d,
	       nk = (size_t)sh->b * sh->hkv * sh->sk * sh->d;
	if (!(c->q = dalloc(w, b, nq * es)) || !(c->k = dalloc(w, b, nk * es)) ||
	    !(c->v = dalloc(w, b, nk * es)) || !(c->o = dalloc(w, b, nq * es)) ||
	    !(c->dout = dalloc(w, b, nq * es)) || !(c->dq = dalloc(w, b, nq * es)) ||
	    !(c->dk = dalloc(w, b, nk * es)) || !(c->dv = dalloc(w, b, nk * es)))
		return -1;
	if (fill(w, c->q, cdt, nq, 21) < 0 || fill(w, c->k, cdt, nk, 22) < 0 ||
	    fill(w, c->v, cdt, nk, 23) < 0 || fill(w, c->dout, cdt, nq, 24) < 0)
		return -1;
	return 0;
}

/*
 * The cudnn backend's plans, built outside the trace.  Returns 0; 1 when cuDNN cannot plan the
 * case and @fallback sends it to the reference path; -1 on error.
 */
static int sdpa_cudnn_plan(struct kp_wl *w, struct bufs *b, struct sdpa_case *c, const char *label,
			   int fallback)
{
	const struct kp_sdpa_shape *sh = &c->s;
	char why[400];
	if (!(c->stats = dalloc(w, b, (size_t)sh->b * sh->h * sh->sq * 4)))
		return -1;
	struct cg_sdpa gs = { .b = sh->b,
			      .h = sh->h,
			      .hkv = sh->hkv,
			      .sq = sh->sq,
			      .sk = sh->sk,
			      .d = sh->d,
			      .io = c->cdt == CDT_BF16 ? CG_BF16 : CG_HALF,
			      .causal = sh->causal,
			      .scale = c->scale };
	recorder_push(w->t->untraced_ext);
	c->cu = cudnn_sdpa_new(w->cudnn, &gs, c->q, c->k, c->v, c->o, c->stats, c->dout,
			       c->backward ? c->dq : NULL, c->dk, c->dv, c->algo, sizeof(c->algo),
			       why, sizeof(why));
	recorder_pop();
	if (!c->cu) {
		if (fallback) {
			fprintf(stderr,
				"kprof: warning: %s: cuDNN: %s; the reference backend "
				"runs it\n",
				label, why);
			return 1;
		}
		fprintf(stderr, "kprof: error: %s: cuDNN: %s\n", label, why);
		w->status = KP_ENV;
		return -1;
	}
	printf("     cudnn  %s: %s\n", label, c->algo);
	return 0;
}

/*
 * The reference path's chunks of the batch: one chunk's scores (fp32) and P fit in half the free
 * memory.  Allocates them and names the chunk size in @label when the batch is split.
 */
static int sdpa_plan_chunks(struct kp_wl *w, struct bufs *b, struct sdpa_case *c, char *label,
			    size_t labelsz)
{
	const struct kp_sdpa_shape *sh = &c->s;
	size_t es = dts[c->cdt].size;
	size_t freeb = 0, totalb = 0;
	CU(cudaMemGetInfo(&freeb, &totalb));
	double per_b = workloads_sdpa_item_bytes(sh, es);
	c->bc = workloads_sdpa_chunk_items(freeb, per_b, sh->b);
	if (c->bc < 1) {
		fprintf(stderr,
			"kprof: error: %s: one batch item's scores need %.1f GB, %.1f GB free\n",
			label, per_b / 1e9, freeb / 1e9);
		w->status = KP_ENV;
		return -1;
	}
	size_t nsc = (size_t)c->bc * sh->h * sh->sq * sh->sk;
	if (!(c->scores = dalloc(w, b, nsc * 4)) || !(c->p = dalloc(w, b, nsc * es)))
		return -1;
	if (c->bc < sh->b) {
		size_t len = strlen(label);
		snprintf(label + len, labelsz - len, " (chunks of B=%ld)", c->bc);
	}
	return 0;
out:
	return -1;
}

/* one untimed call, the accuracy checks, the timed loop and the time line */
static int sdpa_measure(struct kp_wl *w, struct sdpa_case *c, int cudnn, const char *label)
{
	int cdt = c->cdt;
	w->traced = 0;
	TRY(sdpa_iter(w, c));
	TRY(dev_sync(w));
	struct kp_check fwd = { .tol = workloads_sdpa_tolerance(cdt, 0) };
	struct kp_check bwd = { .tol = workloads_sdpa_tolerance(cdt, 1) };
	TRY(sdpa_check(w, c, &fwd, &bwd));
	char l2[200];
	snprintf(l2, sizeof(l2), "%s fwd", label);
	print_check(w, l2, &fwd);
	if (c->backward) {
		snprintf(l2, sizeof(l2), "%s bwd", label);
		print_check(w, l2, &bwd);
	}
	TRY(timed_loop(w, label, sdpa_iter, c));
	double ms = event_ms(w, sdpa_iter, c);
	if (ms > 0)
		sdpa_report(w, c, cdt, cudnn, ms, &fwd, &bwd, label);
	return 0;
out:
	return -1;
}

/*
 * One sdpa case on the reference (math) path or on cuDNN.  @fallback: the backend was not asked
 * for, so a shape or dtype cuDNN cannot plan runs on the reference path instead (returns 1).
 */
static int run_sdpa(struct kp_wl *w, int cdt, const struct kp_sdpa_shape *sh, int cudnn,
		    int fallback)
{
	struct bufs b = { .n = 0 };
	struct sdpa_case c = { .cdt = cdt,
			       .s = *sh,
			       .g = sh->h / sh->hkv,
			       .scale = (float)(1.0 / sqrt((double)sh->d)),
			       .backward = w->o->backward };
	int rc = -1;
	char label[160];
	snprintf(label, sizeof(label), "sdpa %s %s B=%ld H=%ld H_kv=%ld S_q=%ld S_k=%ld D=%ld%s",
		 dts[cdt].name, cudnn ? "cudnn" : "reference", sh->b, sh->h, sh->hkv, sh->sq,
		 sh->sk, sh->d, sh->causal ? " causal" : "");
	if (cudnn && cdt != CDT_BF16 && cdt != CDT_FP16) {
		/* as PyTorch's SDPBackend.CUDNN_ATTENTION: no fp32 (nor tf32) kernel */
		printf("  -  %s: cuDNN's fused attention is bf16/fp16 only (%s)\n", label,
		       fallback ? "the reference backend runs it"
				: "skipped; --backend reference runs it");
		return fallback ? 1 : 0;
	}
	if (sdpa_alloc(w, &b, &c) < 0)
		goto out;
	if (cudnn)
		rc = sdpa_cudnn_plan(w, &b, &c, label, fallback);
	else
		rc = sdpa_plan_chunks(w, &b, &c, label, sizeof(label));
	if (rc == 0)
		rc = sdpa_measure(w, &c, cudnn, label);
out:
	cudnn_sdpa_free(c.cu);
	bufs_free(&b);
	return rc;
}

/* ---- convolution: im2col + cuBLAS (reference) or cuDNN (cudnn), NCHW or NHWC ---- */

struct conv_case {
	int cdt, nhwc;
	struct kp_conv_shape s;
	long oh, ow, cg, kg, crs, np;
	int backward;
	struct kp_cudnn_conv *cv; /* NULL: reference */
	char algo[512];
	void *x, *wt, *y, *ytmp, *col, *dy, *dyt, *dw, *dcol, *dx;
};

/* Element offset of logical [a, b, y, x] in a [A, B, Y, X] tensor, NCHW or NHWC (KRSC). */
static size_t at4(int nhwc, long a, long b, long y, long x, long B, long Y, long X)
{
	if (nhwc)
		return (((size_t)a * Y + y) * X + x) * B + b;
	return (((size_t)a * B + b) * Y + y) * X + x;
}

static int cudnn_fail(struct kp_wl *w, const char *why)
{
	fprintf(stderr, "kprof: error: cuDNN: %s\n", why);
	w->status = KP_ENV;
	return -1;
}

/* The reference forward: im2col, a GEMM per group into Ytmp, Ytmp's N and K swapped into Y */
static int conv_ref_fwd(struct kp_wl *w, struct conv_case *c)
{
	const struct kp_conv_shape *s = &c->s;
	const struct dt_info *d = &dts[c->cdt];
	long p = c->oh * c->ow, rs = s->r * s->s, cgrs = c->cg * rs;
	int rc = kcheck(w,
			kk_im2col(c->col, c->x, d->kt, s->n, s->c, s->h, s->w, s->r, s->s, c->oh,
				  c->ow, s->stride, s->pad, s->dil),
			"kprof_im2col");
	/* per group: Ytmp_g[Kg, N*P] = W_g[Kg, Cg*R*S] col_g[Cg*R*S, N*P] */
	if (rc == 0)
		rc = gemm(w, c->cdt, 0, 0, c->kg, c->np, cgrs, c->wt, cgrs, (long long)c->kg * cgrs,
			  c->col, c->np, (long long)cgrs * c->np, 0.f, c->ytmp, 0, c->np,
			  (long long)c->kg * c->np, s->groups);
	if (rc == 0)
		rc = kcheck(w, kk_swap01(c->y, c->ytmp, d->kt, s->k, s->n, p), "kprof_swap01");
	return rc;
}

/*
 * The reference backward: dY's N and K swapped into dYt, then per group dW = dYt col^T and
 * dcol = W^T dYt, col2im'ed into dX.
 */
static int conv_ref_bwd(struct kp_wl *w, struct conv_case *c)
{
	const struct kp_conv_shape *s = &c->s;
	const struct dt_info *d = &dts[c->cdt];
	long p = c->oh * c->ow, rs = s->r * s->s, cgrs = c->cg * rs;
	int rc = kcheck(w, kk_swap01(c->dyt, c->dy, d->kt, s->n, s->k, p), "kprof_swap01");
	/* grad weight: dW_g[Kg, Cg*R*S] = dYt_g[Kg, N*P] col_g^T */
	if (rc == 0)
		rc = gemm(w, c->cdt, 0, 1, c->kg, cgrs, c->np, c->dyt, c->np,
			  (long long)c->kg * c->np, c->col, c->np, (long long)cgrs * c->np, 0.f,
			  c->dw, 0, cgrs, (long long)c->kg * cgrs, s->groups);
	/* grad input: dcol_g[Cg*R*S, N*P] = W_g^T dYt_g, then col2im */
	if (rc == 0)
		rc = gemm(w, c->cdt, 1, 0, cgrs, c->np, c->kg, c->wt, cgrs, (long long)c->kg * cgrs,
			  c->dyt, c->np, (long long)c->kg * c->np, 0.f, c->dcol, 0, c->np,
			  (long long)cgrs * c->np, s->groups);
	if (rc == 0)
		rc = kcheck(w,
			    kk_col2im(c->dx, c->dcol, d->kt, s->n, s->c, s->h, s->w, s->r, s->s,
				      c->oh, c->ow, s->stride, s->pad, s->dil),
			    "kprof_col2im");
	return rc;
}

/* One iteration: aten::convolution, then aten::convolution_backward, on cuDNN or the reference */
static int conv_iter(struct kp_wl *w, void *ctx)
{
	struct conv_case *c = ctx;
	const struct kp_conv_shape *s = &c->s;
	const char *ty = dts[c->cdt].torch_type, *be = c->cv ? "cudnn" : "im2col+cublas";
	const char *algo = c->cv ? c->algo : NULL;
	char groups[24], why[300];
	snprintf(groups, sizeof(groups), "%ld", s->groups);
	/* clang-format off */
	struct slot fs[9] = {
		tensor(ty, 4, s->n, s->c, s->h, s->w), tensor(ty, 4, s->k, c->cg, s->r, s->s),
		scalar("", ""), pair(s->stride), pair(s->pad), pair(s->dil), scalar("Scalar", "False"),
		pair(0), scalar("Scalar", groups),
	};
	/* clang-format on */
	int tr = w->traced, rc;
	char *args = tr ? mk_args(fs, 9, be, c->cdt, algo) : NULL;
	struct op op;
	op_begin(w, &op);
	if (c->cv)
		rc = cudnn_conv_fwd(c->cv, why, sizeof(why)) < 0 ? cudnn_fail(w, why) : 0;
	else
		rc = conv_ref_fwd(w, c);
	op_end(w, &op, "aten::convolution", args);
	if (rc < 0 || !c->backward)
		return rc;

	/* clang-format off */
	struct slot bs[11] = {
		tensor(ty, 4, s->n, s->k, c->oh, c->ow), fs[0], fs[1], scalar("ScalarList", "[0]"),
		fs[3], fs[4], fs[5], fs[6], fs[7], fs[8], scalar("ScalarList", "[True, True, False]"),
	};
	/* clang-format on */
	args = tr ? mk_args(bs, 11, be, c->cdt, algo) : NULL;
	op_begin(w, &op);
	if (c->cv)
		rc = cudnn_conv_bwd(c->cv, why, sizeof(why)) < 0 ? cudnn_fail(w, why) : 0;
	else
		rc = conv_ref_bwd(w, c);
	op_end(w, &op, "aten::convolution_backward", args);
	return rc;
}

/* conv_check's host copies, freed by it */
struct conv_host {
	void *x, *wt, *y, *dy, *dx, *dw;
};

/* Y[n,k,oy,ox] = sum over (cl, r, q) of X[n, g Cg + cl, iy, ix] W[k, cl, r, q], g = k / Kg */
static double conv_ref_y(const struct conv_case *c, const struct conv_host *h, long n, long k,
			 long oy, long ox, double *magp)
{
	const struct kp_conv_shape *s = &c->s;
	int kt = dts[c->cdt].kt, L = c->nhwc;
	long g = k / c->kg;
	double ref = 0, mag = 0;
	for (long cl = 0; cl < c->cg; cl++)
		for (long r = 0; r < s->r; r++)
			for (long q = 0; q < s->s; q++) {
				long iy = oy * s->stride - s->pad + r * s->dil;
				long ix = ox * s->stride - s->pad + q * s->dil;
				if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w)
					continue;
				long ci = g * c->cg + cl;
				double v = hval(h->x, at4(L, n, ci, iy, ix, s->c, s->h, s->w), kt) *
					   hval(h->wt, at4(L, k, cl, r, q, c->cg, s->r, s->s), kt);
				ref += v, mag += fabs(v);
			}
	*magp = mag;
	return ref;
}

/* dX[n,ci,iy,ix] = sum over the outputs (k, oy, ox) that read it of dY W */
static double conv_ref_dx(const struct conv_case *c, const struct conv_host *h, long n, long ci,
			  long iy, long ix, double *magp)
{
	const struct kp_conv_shape *s = &c->s;
	int kt = dts[c->cdt].kt, L = c->nhwc;
	long g = ci / c->cg, cl = ci % c->cg;
	double ref = 0, mag = 0;
	for (long kl = 0; kl < c->kg; kl++)
		for (long r = 0; r < s->r; r++)
			for (long q = 0; q < s->s; q++) {
				long ty = iy + s->pad - r * s->dil, tx = ix + s->pad - q * s->dil;
				if (ty < 0 || tx < 0 || ty % s->stride || tx % s->stride)
					continue;
				long oy = ty / s->stride, ox = tx / s->stride;
				if (oy >= c->oh || ox >= c->ow)
					continue;
				long k = g * c->kg + kl;
				double v = hval(h->dy, at4(L, n, k, oy, ox, s->k, c->oh, c->ow),
						kt) *
					   hval(h->wt, at4(L, k, cl, r, q, c->cg, s->r, s->s), kt);
				ref += v, mag += fabs(v);
			}
	*magp = mag;
	return ref;
}

/* dW[k,cl,r,q] = sum over (n, oy, ox) of dY[n,k,oy,ox] X[n, ci, iy, ix] */
static double conv_ref_dw(const struct conv_case *c, const struct conv_host *h, long k, long cl,
			  long r, long q, double *magp)
{
	const struct kp_conv_shape *s = &c->s;
	int kt = dts[c->cdt].kt, L = c->nhwc;
	long ci = k / c->kg * c->cg + cl;
	double ref = 0, mag = 0;
	for (long n = 0; n < s->n; n++)
		for (long oy = 0; oy < c->oh; oy++)
			for (long ox = 0; ox < c->ow; ox++) {
				long iy = oy * s->stride - s->pad + r * s->dil;
				long ix = ox * s->stride - s->pad + q * s->dil;
				if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w)
					continue;
				double v = hval(h->dy, at4(L, n, k, oy, ox, s->k, c->oh, c->ow),
						kt) *
					   hval(h->x, at4(L, n, ci, iy, ix, s->c, s->h, s->w), kt);
				ref += v, mag += fabs(v);
			}
	*magp = mag;
	return ref;
}

/* A uniform random element of a [d0, @d1, @d2, @d3] tensor of @n elements as its indices @i */
static void pick4(uint64_t *seed, size_t n, long d1, long d2, long d3, long i[4])
{
	size_t idx = rng_next(seed) % n;
	i[3] = idx % d3;
	i[2] = idx / d3 % d2;
	i[1] = idx / ((size_t)d3 * d2) % d1;
	i[0] = idx / ((size_t)d3 * d2 * d1);
}

/* a reference element of a conv tensor (conv_ref_y, conv_ref_dx, conv_ref_dw) */
typedef double (*conv_ref_fn)(const struct conv_case *c, const struct conv_host *h, long i0,
			      long i1, long i2, long i3, double *magp);

/* @count random elements of @got, a [., d1, d2, d3] tensor of @n elements, against @ref */
static void conv_check_n(const struct conv_case *c, const struct conv_host *h, const void *got,
			 conv_ref_fn ref, int count, size_t n, long d1, long d2, long d3,
			 struct kp_check *chk, uint64_t *seed)
{
	int kt = dts[c->cdt].kt, L = c->nhwc;
	for (int t = 0; t < count; t++) {
		long i[4];
		pick4(seed, n, d1, d2, d3, i);
		double mag, r = ref(c, h, i[0], i[1], i[2], i[3], &mag);
		note_err(chk, hval(got, at4(L, i[0], i[1], i[2], i[3], d1, d2, d3), kt), r, mag);
	}
}

/* indices are logical NCHW / KCRS; at4() maps them to the case's layout */
static int conv_check(struct kp_wl *w, struct conv_case *c, struct kp_check *fwd,
		      struct kp_check *bwd)
{
	const struct kp_conv_shape *s = &c->s;
	size_t es = dts[c->cdt].size;
	size_t nx = (size_t)s->n * s->c * s->h * s->w, nw = (size_t)s->k * c->cg * s->r * s->s;
	size_t ny = (size_t)s->n * s->k * c->oh * c->ow;
	struct conv_host h = { .x = NULL };
	uint64_t seed = 3;
	int rc = -1;
	h.x = host_copy(w, c->x, nx * es);
	h.wt = h.x ? host_copy(w, c->wt, nw * es) : NULL;
	h.y = h.wt ? host_copy(w, c->y, ny * es) : NULL;
	if (!h.y)
		goto out;
	/* 256 random outputs, then 128 input gradients and 32 weight gradients */
	conv_check_n(c, &h, h.y, conv_ref_y, 256, ny, s->k, c->oh, c->ow, fwd, &seed);
	if (c->backward) {
		if (!(h.dy = host_copy(w, c->dy, ny * es)) ||
		    !(h.dx = host_copy(w, c->dx, nx * es)) ||
		    !(h.dw = host_copy(w, c->dw, nw * es)))
			goto out;
		conv_check_n(c, &h, h.dx, conv_ref_dx, 128, nx, s->c, s->h, s->w, bwd, &seed);
		conv_check_n(c, &h, h.dw, conv_ref_dw, 32, nw, c->cg, s->r, s->s, bwd, &seed);
	}
	rc = 0;
out:
	free(h.x), free(h.wt), free(h.y), free(h.dy), free(h.dx), free(h.dw);
	return rc;
}

/* the output's height and width, channels and filters per group, im2col's rows and columns */
static void conv_dims(struct conv_case *c)
{
	const struct kp_conv_shape *sh = &c->s;
	c->oh = conv_out_dim(sh->h, sh->r, sh->stride, sh->pad, sh->dil);
	c->ow = conv_out_dim(sh->w, sh->s, sh->stride, sh->pad, sh->dil);
	c->cg = sh->c / sh->groups, c->kg = sh->k / sh->groups;
	c->crs = sh->c * sh->r * sh->s, c->np = sh->n * c->oh * c->ow;
}

/*
 * X, W, Y; the reference's Ytmp and col; with --backward dY, dW, dX (and the reference's dYt,
 * dcol).  X, W and dY filled.
 */
static int conv_alloc(struct kp_wl *w, struct bufs *b, struct conv_case *c, int cudnn)
{
	const struct kp_conv_shape *sh = &c->s;
	int cdt = c->cdt;
	size_t es = dts[cdt].size;
	size_t nx = (size_t)sh->n * sh->c * sh->h * sh->w,
	       nw = (size_t)sh->k * c->cg * sh->r * sh->s;
	size_t ny = (size_t)sh->n * sh->k * c->oh * c->ow, ncol = (size_t)c->crs * c->np;
	if (!(c->x = dalloc(w, b, nx * es)) || !(c->wt = dalloc(w, b, nw * es)) ||
	    !(c->y = dalloc(w, b, ny * es)))
		return -1;
	if (!cudnn && (!(c->ytmp = dalloc(w, b, ny * es)) || !(c->col = dalloc(w, b, ncol * es))))
		return -1;
	if (c->backward && (!(c->dy = dalloc(w, b, ny * es)) || !(c->dw = dalloc(w, b, nw * es)) ||
			    !(c->dx = dalloc(w, b, nx * es))))
		return -1;
	if (c->backward && !cudnn &&
	    (!(c->dyt = dalloc(w, b, ny * es)) || !(c->dcol = dalloc(w, b, ncol * es))))
		return -1;
	if (fill(w, c->x, cdt, nx, 31) < 0 || fill(w, c->wt, cdt, nw, 32) < 0)
		return -1;
	if (c->backward && fill(w, c->dy, cdt, ny, 33) < 0)
		return -1;
	return 0;
}

/* cuDNN's plans, built and timed here, outside the trace */
static int conv_cudnn_plan(struct kp_wl *w, struct conv_case *c, const char *label)
{
	const struct kp_conv_shape *sh = &c->s;
	int cdt = c->cdt;
	char why[300];
	recorder_push(w->t->untraced_ext);
	c->cv = cudnn_conv_new(w->cudnn, dts[cdt].kt, cdt == CDT_TF32, c->nhwc, sh->n, sh->c, sh->h,
			       sh->w, sh->k, sh->r, sh->s, sh->stride, sh->pad, sh->dil, sh->groups,
			       c->x, c->wt, c->y, c->backward ? c->dy : NULL, c->dx, c->dw, c->algo,
			       sizeof(c->algo), why, sizeof(why));
	recorder_pop();
	if (!c->cv) {
		fprintf(stderr, "kprof: error: %s: cuDNN: %s\n", label, why);
		w->status = KP_ENV;
		return -1;
	}
	printf("     cudnn  %s: %s\n", label, c->algo);
	return 0;
}

/* one conv case's time line and its --results row (the worse of forward and backward errors) */
static void conv_report(struct kp_wl *w, const struct conv_case *c, int cudnn, double ms,
			const struct kp_check *fwd, const struct kp_check *bwd, const char *label)
{
	const struct kp_conv_shape *sh = &c->s;
	double fl = workloads_conv_flops(sh, c->backward);
	char mt[32];
	printf("     time  %s ms/iter  %.1f TFLOP/s (%s)  %s\n",
	       results_ms_text(mt, sizeof(mt), ms), fl / (ms * 1e-3) / 1e12,
	       c->backward ? "fwd+bwd" : "fwd", label);
	struct kp_result r = {
		.ms = ms, .tflops = fl / (ms * 1e-3) / 1e12, .err = fwd->max_err, .tol = fwd->tol
	};
	if (c->backward && bwd->max_err / bwd->tol > r.err / r.tol)
		r.err = bwd->max_err, r.tol = bwd->tol;
	snprintf(r.op, sizeof(r.op), "aten::convolution");
	snprintf(r.kind, sizeof(r.kind), "conv2d");
	snprintf(r.shape, sizeof(r.shape), "%ldx%ldx%ldx%ld->%ld %ldx%ld s%ld p%ld d%ld g%ld",
		 sh->n, sh->c, sh->h, sh->w, sh->k, sh->r, sh->s, sh->stride, sh->pad, sh->dil,
		 sh->groups);
	snprintf(r.dtype, sizeof(r.dtype), "%s", dts[c->cdt].name);
	snprintf(r.backend, sizeof(r.backend), "%s", cudnn ? "cudnn" : "reference");
	snprintf(r.layout, sizeof(r.layout), "%s", c->nhwc ? "nhwc" : "nchw");
	snprintf(r.mode, sizeof(r.mode), "%s", c->backward ? "fwd+bwd" : "fwd");
	keep_result(w, &r, label);
}

/* one untimed call, the accuracy checks, the timed loop and the time line */
static int conv_measure(struct kp_wl *w, struct conv_case *c, int cudnn, const char *label)
{
	w->traced = 0;
	TRY(conv_iter(w, c));
	TRY(dev_sync(w));
	struct kp_check fwd = { .tol = workloads_tolerance(c->cdt) };
	struct kp_check bwd = { .tol = workloads_tolerance(c->cdt) };
	TRY(conv_check(w, c, &fwd, &bwd));
	char l2[200];
	snprintf(l2, sizeof(l2), "%s fwd", label);
	print_check(w, l2, &fwd);
	if (c->backward) {
		snprintf(l2, sizeof(l2), "%s bwd", label);
		print_check(w, l2, &bwd);
	}
	TRY(timed_loop(w, label, conv_iter, c));
	double ms = event_ms(w, conv_iter, c);
	if (ms > 0)
		conv_report(w, c, cudnn, ms, &fwd, &bwd, label);
	return 0;
out:
	return -1;
}

static int run_conv(struct kp_wl *w, int cdt, const struct kp_conv_shape *sh, int cudnn, int nhwc)
{
	struct bufs b = { .n = 0 };
	struct conv_case c = { .cdt = cdt, .nhwc = nhwc, .s = *sh, .backward = w->o->backward };
	int rc = -1;
	char label[160];
	conv_dims(&c);
	snprintf(label, sizeof(label),
		 "conv %s %s %s N=%ld C=%ld H=%ld W=%ld K=%ld R=%ld S=%ld s%ld p%ld d%ld g%ld",
		 dts[cdt].name, cudnn ? "cudnn" : "reference", nhwc ? "nhwc" : "nchw", sh->n, sh->c,
		 sh->h, sh->w, sh->k, sh->r, sh->s, sh->stride, sh->pad, sh->dil, sh->groups);
	if (nhwc && !cudnn) {
		printf("  -  %s: the reference backend is NCHW only (skipped)\n", label);
		return 0;
	}
	if (conv_alloc(w, &b, &c, cudnn) < 0)
		goto out;
	if (cudnn && conv_cudnn_plan(w, &c, label) < 0)
		goto out;
	rc = conv_measure(w, &c, cudnn, label);
out:
	cudnn_conv_free(c.cv);
	bufs_free(&b);
	return rc;
}

/* ---- memory-bound row-wise ops: softmax, RMSNorm, LayerNorm (kprof's one-pass kernels) ---- */

struct norm_case {
	int cdt, op;
	long rows, hidden;
	void *x, *y, *wt, *bias;
	float *mean, *rstd;
	void *dy, *dx, *dw, *db, *ws; /* backward */
};

static const char *const norm_ops[] = { "aten::_softmax", "aten::_fused_rms_norm",
					"aten::native_layer_norm" };
static const char *const norm_bwd_ops[] = { "aten::_softmax_backward_data",
					    "aten::_fused_rms_norm_backward",
					    "aten::native_layer_norm_backward" };
static const float norm_eps[] = { 0.f, 1e-6f, 1e-5f };

static int norm_iter(struct kp_wl *w, void *ctx)
{
	struct norm_case *c = ctx;
	const char *ty = dts[c->cdt].torch_type;
	char hs[40], eps[24];
	snprintf(hs, sizeof(hs), "[%ld]", c->hidden);
	snprintf(eps, sizeof(eps), "%g", (double)norm_eps[c->op]);
	struct slot s[5];
	int ns;
	s[0] = tensor(ty, 2, c->rows, c->hidden, 0, 0);
	if (c->op == RW_SOFTMAX) {
		s[1] = scalar("Scalar", "-1"), s[2] = scalar("Scalar", "False"), ns = 3;
	} else {
		s[1] = scalar("ScalarList", hs);
		s[2] = tensor(ty, 1, c->hidden, 0, 0, 0);
		if (c->op == RW_LAYERNORM)
			s[3] = tensor(ty, 1, c->hidden, 0, 0, 0), s[4] = scalar("Scalar", eps),
			ns = 5;
		else
			s[3] = scalar("Scalar", eps), ns = 4;
	}
	char *args = w->traced ? mk_args(s, ns, "kprof", c->cdt, NULL) : NULL;
	struct op op;
	op_begin(w, &op);
	int rc = kcheck(w,
			kk_rowwise(c->op, c->y, c->x, c->wt, c->bias, c->mean, c->rstd,
				   dts[c->cdt].kt, c->rows, c->hidden, norm_eps[c->op]),
			"kprof_rowwise");
	op_end(w, &op, norm_ops[c->op], args);
	return rc;
}

/*
 * The backward ops with torch's schemas: _softmax_backward_data(grad_output, output, dim,
 * input_dtype); _fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight,
 * output_mask); native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd,
 * weight, bias, output_mask).  mean/rstd are [rows, 1] fp32 as torch saves them.
 */
static int norm_bwd_iter(struct kp_wl *w, void *ctx)
{
	struct norm_case *c = ctx;
	const char *ty = dts[c->cdt].torch_type;
	char hs[40];
	snprintf(hs, sizeof(hs), "[%ld]", c->hidden);
	struct slot s[8];
	int ns;
	s[0] = tensor(ty, 2, c->rows, c->hidden, 0, 0);
	s[1] = tensor(ty, 2, c->rows, c->hidden, 0, 0);
	if (c->op == RW_SOFTMAX) {
		s[2] = scalar("Scalar", "-1"), s[3] = scalar("ScalarType", dts[c->cdt].scalar_type);
		ns = 4;
	} else if (c->op == RW_RMSNORM) {
		s[2] = scalar("ScalarList", hs);
		s[3] = tensor("float", 2, c->rows, 1, 0, 0);
		s[4] = tensor(ty, 1, c->hidden, 0, 0, 0);
		s[5] = scalar("ScalarList", "[True, True]");
		ns = 6;
	} else {
		s[2] = scalar("ScalarList", hs);
		s[3] = tensor("float", 2, c->rows, 1, 0, 0);
		s[4] = tensor("float", 2, c->rows, 1, 0, 0);
		s[5] = tensor(ty, 1, c->hidden, 0, 0, 0);
		s[6] = tensor(ty, 1, c->hidden, 0, 0, 0);
		s[7] = scalar("ScalarList", "[True, True, True]");
		ns = 8;
	}
	char *args = w->traced ? mk_args(s, ns, "kprof", c->cdt, NULL) : NULL;
	struct op op;
	op_begin(w, &op);
	int kt = dts[c->cdt].kt, e;
	if (c->op == RW_SOFTMAX)
		e = kk_rowsoftmax_bwd(c->dx, c->y, c->dy, kt, c->rows, c->hidden);
	else
		e = kk_norm_bwd(c->op, c->dx, c->dw, c->db, c->dy, c->x, c->mean, c->rstd, c->wt,
				c->ws, kt, c->rows, c->hidden);
	int rc = kcheck(w, e, "kprof_rowwise_backward");
	op_end(w, &op, norm_bwd_ops[c->op], args);
	return rc;
}

/* 64 whole rows against fp64: |got - ref| / (|terms of ref|) per element. */
static int norm_check(struct kp_wl *w, struct norm_case *c, struct kp_check *chk)
{
	int kt = dts[c->cdt].kt, rc = -1;
	size_t es = dts[c->cdt].size, rb = (size_t)c->hidden * es;
	void *hw = NULL, *hb = NULL, *hx = NULL, *hy = NULL;
	double *f = malloc((size_t)c->hidden * sizeof(double));
	uint64_t seed = 5;
	if (!f)
		goto out;
	if (c->op != RW_SOFTMAX && !(hw = host_copy(w, c->wt, rb)))
		goto out;
	if (c->op == RW_LAYERNORM && !(hb = host_copy(w, c->bias, rb)))
		goto out;
	for (int t = 0; t < 64; t++) {
		size_t row = rng_next(&seed) % (size_t)c->rows;
		free(hx), free(hy);
		hy = NULL;
		if (!(hx = host_copy(w, (char *)c->x + row * rb, rb)) ||
		    !(hy = host_copy(w, (char *)c->y + row * rb, rb)))
			goto out;
		double a = 0, q = 0, m = -INFINITY;
		for (long j = 0; j < c->hidden; j++) {
			f[j] = hval(hx, j, kt);
			a += f[j], q += f[j] * f[j], m = f[j] > m ? f[j] : m;
		}
		double mu = a / c->hidden, var = 0, z = 0;
		for (long j = 0; j < c->hidden; j++)
			var += (f[j] - mu) * (f[j] - mu), z += exp(f[j] - m);
		double rstd = c->op == RW_RMSNORM ? 1 / sqrt(q / c->hidden + norm_eps[c->op])
						  : 1 / sqrt(var / c->hidden + norm_eps[c->op]);
		for (long j = 0; j < c->hidden; j++) {
			double ref, mag;
			if (c->op == RW_SOFTMAX) {
				ref = exp(f[j] - m) / z, mag = ref;
			} else if (c->op == RW_RMSNORM) {
				ref = f[j] * rstd * hval(hw, j, kt), mag = fabs(ref);
			} else {
				double u = (f[j] - mu) * rstd * hval(hw, j, kt),
				       v = hval(hb, j, kt);
				ref = u + v, mag = fabs(u) + fabs(v);
			}
			/* fp16 outputs below its smallest normal lose relative precision */
			note_err(chk, hval(hy, j, kt), ref, mag + (kt == KT_F16 ? 0x1p-14 : 0.0));
		}
	}
	rc = 0;
out:
	free(f), free(hw), free(hb), free(hx), free(hy);
	return rc;
}

/* Column @col of a [rows, cols] device matrix (elements of @es bytes) to the host. */
static void *host_column(struct kp_wl *w, const void *dev, size_t es, long rows, long cols,
			 long col)
{
	void *h = malloc((size_t)rows * es);
	if (!h) {
		fprintf(stderr, "kprof: error: out of host memory (%zu bytes)\n",
			(size_t)rows * es);
		w->status = KP_ENV;
		return NULL;
	}
	recorder_push(w->t->untraced_ext);
	cudaError_t e = cudaMemcpy2D(h, es, (const char *)dev + (size_t)col * es, (size_t)cols * es,
				     es, (size_t)rows, cudaMemcpyDeviceToHost);
	recorder_pop();
	if (e != cudaSuccess) {
		free(h);
		cuda_fail(w, "cudaMemcpy2D", e);
		return NULL;
	}
	return h;
}

/* What norm_bwd_check() holds on the host: the case, its parameters, statistics, a row or column */
struct bwd_host {
	int kt, op;
	long H, R;
	double tiny; /* fp16: the smallest normal, for results near zero */
	void *hw, *hx, *hd, *ho, *hdw, *hdb;
	float *hm, *hr;
};

/* softmax's dx of the row in hx (y), hd (dy), ho (dx): y (dy - sum(y dy)) */
static void check_softmax_row(struct kp_check *chk, const struct bwd_host *b)
{
	int kt = b->kt;
	long H = b->H;
	double s = 0, sa = 0;
	for (long j = 0; j < H; j++) {
		double p = hval(b->hx, j, kt) * hval(b->hd, j, kt);
		s += p, sa += fabs(p);
	}
	for (long j = 0; j < H; j++) {
		double y = hval(b->hx, j, kt), d = hval(b->hd, j, kt);
		note_err(chk, hval(b->ho, j, kt), y * (d - s), fabs(y) * (fabs(d) + sa) + b->tiny);
	}
}

/*
 * A norm's dx of row @row, in hx (x), hd (dy), ho (dx): r (g - mean(g) - x^ sum(g x^) / H),
 * g = w dy, x^ = (x - mean) r; mean(g) and the mean of x for layernorm only.
 */
static void check_norm_row(struct kp_check *chk, const struct bwd_host *b, size_t row)
{
	int kt = b->kt;
	long H = b->H;
	double r = b->hr[row], mu = b->op == RW_LAYERNORM ? b->hm[row] : 0;
	double sg = 0, sgx = 0, ag = 0, agx = 0;
	for (long j = 0; j < H; j++) {
		double g = hval(b->hw, j, kt) * hval(b->hd, j, kt),
		       xh = (hval(b->hx, j, kt) - mu) * r;
		sg += g, sgx += g * xh, ag += fabs(g), agx += fabs(g * xh);
	}
	double a = b->op == RW_LAYERNORM ? sg / H : 0, aa = b->op == RW_LAYERNORM ? ag / H : 0;
	for (long j = 0; j < H; j++) {
		double g = hval(b->hw, j, kt) * hval(b->hd, j, kt),
		       xh = (hval(b->hx, j, kt) - mu) * r;
		double ref = r * (g - a - xh * sgx / H);
		note_err(chk, hval(b->ho, j, kt), ref,
			 r * (fabs(g) + aa + fabs(xh) * agx / H) + b->tiny);
	}
}

/* dw (and db for layernorm) of column @col, in hx (x) and hd (dy): sums over every row */
static void check_norm_col(struct kp_check *chk, const struct bwd_host *b, long col)
{
	int kt = b->kt;
	double sw = 0, aw = 0, sb = 0, ab = 0;
	for (long i = 0; i < b->R; i++) {
		double d = hval(b->hd, i, kt);
		double xh = (hval(b->hx, i, kt) - (b->op == RW_LAYERNORM ? b->hm[i] : 0)) *
			    b->hr[i];
		sw += d * xh, aw += fabs(d * xh), sb += d, ab += fabs(d);
	}
	note_err(chk, hval(b->hdw, col, kt), sw, aw + b->tiny);
	if (b->op == RW_LAYERNORM)
		note_err(chk, hval(b->hdb, col, kt), sb, ab + b->tiny);
}

/* A norm's weight, saved rstd and mean, dw (and layernorm's db) to the host; -1 after a message */
static int copy_params(struct kp_wl *w, const struct norm_case *c, struct bwd_host *b, size_t rb)
{
	if (!(b->hw = host_copy(w, c->wt, rb)) || !(b->hr = host_copy(w, c->rstd, b->R * 4)) ||
	    !(b->hm = host_copy(w, c->mean, b->R * 4)) || !(b->hdw = host_copy(w, c->dw, rb)) ||
	    (c->op == RW_LAYERNORM && !(b->hdb = host_copy(w, c->db, rb))))
		return -1;
	return 0;
}

/* dx on 64 whole rows drawn from @seed; -1 after the message */
static int check_rows(struct kp_wl *w, const struct norm_case *c, struct bwd_host *b,
		      struct kp_check *chk, uint64_t *seed, size_t rb)
{
	for (int t = 0; t < 64; t++) {
		size_t row = rng_next(seed) % (size_t)b->R;
		free(b->hx), free(b->hd), free(b->ho);
		b->hd = b->ho = NULL;
		/* hx: y for softmax, x for the norms */
		if (!(b->hx = host_copy(w, (char *)(c->op == RW_SOFTMAX ? c->y : c->x) + row * rb,
					rb)) ||
		    !(b->hd = host_copy(w, (char *)c->dy + row * rb, rb)) ||
		    !(b->ho = host_copy(w, (char *)c->dx + row * rb, rb)))
			return -1;
		if (c->op == RW_SOFTMAX)
			check_softmax_row(chk, b);
		else
			check_norm_row(chk, b, row);
	}
	return 0;
}

/* A norm's dw and db on 8 whole columns drawn from @seed; -1 after the message */
static int check_cols(struct kp_wl *w, const struct norm_case *c, struct bwd_host *b,
		      struct kp_check *chk, uint64_t *seed, size_t es)
{
	for (int t = 0; t < 8; t++) {
		long col = (long)(rng_next(seed) % (uint64_t)b->H);
		free(b->hx), free(b->hd);
		b->hd = NULL;
		if (!(b->hx = host_column(w, c->x, es, b->R, b->H, col)) ||
		    !(b->hd = host_column(w, c->dy, es, b->R, b->H, col)))
			return -1;
		check_norm_col(chk, b, col);
	}
	return 0;
}

/*
 * The backward against fp64 from the same inputs (the forward's y, or x with the saved fp32
 * mean/rstd): dx on 64 whole rows, dw and db on 8 whole columns (sums over every row).
 */
static int norm_bwd_check(struct kp_wl *w, struct norm_case *c, struct kp_check *chk)
{
	size_t es = dts[c->cdt].size, rb = (size_t)c->hidden * es;
	struct bwd_host b = { .kt = dts[c->cdt].kt, .op = c->op, .H = c->hidden, .R = c->rows };
	b.tiny = b.kt == KT_F16 ? 0x1p-14 : 0.0;
	uint64_t seed = 7;
	int norm = c->op != RW_SOFTMAX, rc = -1;
	if ((!norm || copy_params(w, c, &b, rb) == 0) &&
	    check_rows(w, c, &b, chk, &seed, rb) == 0 &&
	    (!norm || check_cols(w, c, &b, chk, &seed, es) == 0))
		rc = 0;
	free(b.hw), free(b.hx), free(b.hd), free(b.ho), free(b.hdw), free(b.hdb), free(b.hm),
		free(b.hr);
	return rc;
}

/*
 * The accuracy line, the timed loop and the 'time' line of one memory-bound case; @bytes is
 * the compulsory traffic of analyze's model of the recorded op.
 */
static int mb_measure(struct kp_wl *w, const char *label, iter_fn fn, void *ctx,
		      const struct kp_check *chk, double bytes, const char *opname,
		      const char *kind, const char *shape, int cdt, const char *mode)
{
	print_check(w, label, chk);
	TRY(timed_loop(w, label, fn, ctx));
	double ms = event_ms(w, fn, ctx), peak = kk_dram_peak();
	if (ms > 0) {
		double gbs = bytes / (ms * 1e-3) / 1e9;
		char mt[32];
		printf("     time  %s ms/iter  %.0f GB/s (%.0f%% of DRAM peak %.0f GB/s)  %s\n",
		       results_ms_text(mt, sizeof(mt), ms), gbs,
		       peak > 0 ? 100 * gbs * 1e9 / peak : 0.0, peak / 1e9, label);
		struct kp_result r = { .ms = ms,
				       .gbs = gbs,
				       .peak_pct = peak > 0 ? 100 * gbs * 1e9 / peak : 0,
				       .err = chk->max_err,
				       .tol = chk->tol };
		snprintf(r.op, sizeof(r.op), "%s", opname);
		snprintf(r.kind, sizeof(r.kind), "%s", kind);
		snprintf(r.shape, sizeof(r.shape), "%s", shape);
		snprintf(r.dtype, sizeof(r.dtype), "%s", dts[cdt].name);
		snprintf(r.backend, sizeof(r.backend), "kprof");
		snprintf(r.mode, sizeof(r.mode), "%s", mode);
		keep_result(w, &r, label);
	}
	return 0;
out:
	return -1;
}

/* The case's device buffers, the backward's with --backward; -1 after the message */
static int norm_alloc(struct kp_wl *w, struct bufs *b, struct norm_case *c, int bwd)
{
	int op = c->op, kt = dts[c->cdt].kt;
	size_t es = dts[c->cdt].size, n = (size_t)c->rows * c->hidden;
	if (!(c->x = dalloc(w, b, n * es)) || !(c->y = dalloc(w, b, n * es)) ||
	    !(c->wt = dalloc(w, b, c->hidden * es)) || !(c->bias = dalloc(w, b, c->hidden * es)) ||
	    !(c->mean = dalloc(w, b, c->rows * 4)) || !(c->rstd = dalloc(w, b, c->rows * 4)))
		return -1;
	if (bwd &&
	    (!(c->dy = dalloc(w, b, n * es)) || !(c->dx = dalloc(w, b, n * es)) ||
	     !(c->dw = dalloc(w, b, c->hidden * es)) || !(c->db = dalloc(w, b, c->hidden * es))))
		return -1;
	if (bwd && op != RW_SOFTMAX &&
	    !(c->ws = dalloc(w, b, kk_norm_bwd_workspace(op, kt, c->rows, c->hidden))))
		return -1;
	return 0;
}

/* x, the weight, the bias and (with @bwd) dy filled from their seeds; -1 after the message */
static int norm_fill(struct kp_wl *w, struct norm_case *c, int bwd)
{
	size_t n = (size_t)c->rows * c->hidden;
	TRY(fill(w, c->x, c->cdt, n, 41));
	TRY(fill(w, c->wt, c->cdt, c->hidden, 42));
	TRY(fill(w, c->bias, c->cdt, c->hidden, 43));
	if (bwd)
		TRY(fill(w, c->dy, c->cdt, n, 44));
	return 0;
out:
	return -1;
}

/* analyze's byte model of the forward: x and y, plus weight/bias and the fp32 row statistics */
static double norm_fwd_bytes(const struct norm_case *c)
{
	size_t es = dts[c->cdt].size, n = (size_t)c->rows * c->hidden;
	double bytes = 2.0 * n * es;
	if (c->op == RW_RMSNORM)
		bytes += c->hidden * es + c->rows * 4.0;
	if (c->op == RW_LAYERNORM)
		bytes += 2.0 * c->hidden * es + c->rows * 8.0;
	return bytes;
}

/* The backward's: read dy and y/x (+ rstd, mean, weight), write dx (+ dweight, dbias) */
static double norm_bwd_bytes(const struct norm_case *c)
{
	size_t es = dts[c->cdt].size, n = (size_t)c->rows * c->hidden;
	double bytes = 3.0 * n * es;
	if (c->op == RW_RMSNORM)
		bytes += 2.0 * c->hidden * es + c->rows * 4.0;
	if (c->op == RW_LAYERNORM)
		bytes += 3.0 * c->hidden * es + c->rows * 8.0;
	return bytes;
}

/* The backward of a checked forward: one run checked against fp64 (tolerance @tol), timed */
static int norm_bwd(struct kp_wl *w, struct norm_case *c, const char *name, const char *shape,
		    double tol)
{
	char bl[130];
	snprintf(bl, sizeof(bl), "%s bwd %s rows=%ld hidden=%ld", name, dts[c->cdt].name, c->rows,
		 c->hidden);
	TRY(norm_bwd_iter(w, c));
	TRY(dev_sync(w));
	struct kp_check bc = { .tol = tol };
	TRY(norm_bwd_check(w, c, &bc));
	TRY(mb_measure(w, bl, norm_bwd_iter, c, &bc, norm_bwd_bytes(c), norm_bwd_ops[c->op], name,
		       shape, c->cdt, "bwd"));
	return 0;
out:
	return -1;
}

static int run_norm(struct kp_wl *w, int op, int cdt, const struct kp_norm_shape *sh)
{
	static const char *const names[] = { "softmax", "rmsnorm", "layernorm" };
	struct bufs b = { .n = 0 };
	struct norm_case c = { .cdt = cdt, .op = op, .rows = sh->rows, .hidden = sh->hidden };
	int rc = -1, bwd = w->o->backward;
	char label[120], shape[48];
	snprintf(label, sizeof(label), "%s %s rows=%ld hidden=%ld", names[op], dts[cdt].name,
		 sh->rows, sh->hidden);
	snprintf(shape, sizeof(shape), "%ldx%ld", sh->rows, sh->hidden);
	if (cdt == CDT_TF32) {
		printf("  -  %s: no tf32 variant (skipped)\n", label);
		return 0;
	}
	TRY(norm_alloc(w, &b, &c, bwd));
	TRY(norm_fill(w, &c, bwd));
	/* rmsnorm writes no mean: the backward check reads zeros */
	CU(cudaMemset(c.mean, 0, sh->rows * 4));
	w->traced = 0;
	TRY(norm_iter(w, &c));
	TRY(dev_sync(w));
	struct kp_check chk = { .tol = workloads_tolerance(cdt == CDT_FP32 ? CDT_FP16 : cdt) };
	TRY(norm_check(w, &c, &chk));
	TRY(mb_measure(w, label, norm_iter, &c, &chk, norm_fwd_bytes(&c), norm_ops[op], names[op],
		       shape, cdt, "fwd"));
	if (bwd)
		TRY(norm_bwd(w, &c, names[op], shape, chk.tol));
	rc = 0;
out:
	bufs_free(&b);
	return rc;
}

/* ---- cross-entropy (kprof's streaming kernels) ---- */

struct xent_case {
	int cdt;
	long rows, vocab;
	void *x, *loss, *dloss, *dx;
	int64_t *target;
	float *lse;
};

#define XENT_IGNORE (-100)

/*
 * Forward: aten::cross_entropy_loss(self, target, weight, reduction, ignore_index,
 * label_smoothing) with reduction 'none' (0): loss [rows] in self's dtype.  The kernel also
 * writes the fp32 log-sum-exp per row that the backward reads (not part of the op's outputs).
 */
static int xent_iter(struct kp_wl *w, void *ctx)
{
	struct xent_case *c = ctx;
	const char *ty = dts[c->cdt].torch_type;
	struct slot s[6] = {
		tensor(ty, 2, c->rows, c->vocab, 0, 0),
		tensor("long int", 1, c->rows, 0, 0, 0),
		tensor("", 0, 0, 0, 0, 0),
		scalar("Scalar", "0"),
		scalar("Scalar", "-100"),
		scalar("Scalar", "0.0"),
	};
	char *args = w->traced ? mk_args(s, 6, "kprof", c->cdt, NULL) : NULL;
	struct op op;
	op_begin(w, &op);
	int rc = kcheck(w,
			kk_xent_fwd(c->loss, c->lse, c->x, c->target, dts[c->cdt].kt, c->rows,
				    c->vocab, XENT_IGNORE),
			"kprof_xent_fwd");
	op_end(w, &op, "aten::cross_entropy_loss", args);
	return rc;
}

/*
 * Backward: no aten op is one fused cross-entropy backward (eager torch runs nll_loss_backward
 * and _log_softmax_backward_data), so the op is kprof's own, with the meaning and slots
 * kprof::cross_entropy_loss_backward(grad_output [rows], self, target, lse [rows] fp32,
 * reduction, ignore_index, label_smoothing) -> grad_input [rows, vocab] in self's dtype.
 */
static int xent_bwd_iter(struct kp_wl *w, void *ctx)
{
	struct xent_case *c = ctx;
	const char *ty = dts[c->cdt].torch_type;
	struct slot s[7] = {
		tensor(ty, 1, c->rows, 0, 0, 0),
		tensor(ty, 2, c->rows, c->vocab, 0, 0),
		tensor("long int", 1, c->rows, 0, 0, 0),
		tensor("float", 1, c->rows, 0, 0, 0),
		scalar("Scalar", "0"),
		scalar("Scalar", "-100"),
		scalar("Scalar", "0.0"),
	};
	char *args = w->traced ? mk_args(s, 7, "kprof", c->cdt, NULL) : NULL;
	struct op op;
	op_begin(w, &op);
	int rc = kcheck(w,
			kk_xent_bwd(c->dx, c->dloss, c->x, c->target, c->lse, dts[c->cdt].kt,
				    c->rows, c->vocab, XENT_IGNORE),
			"kprof_xent_bwd");
	op_end(w, &op, "kprof::cross_entropy_loss_backward", args);
	return rc;
}

/* 64 whole rows against fp64: the loss (forward) and every element of dx (backward). */
static int xent_check(struct kp_wl *w, struct xent_case *c, int bwd, struct kp_check *chk)
{
	int kt = dts[c->cdt].kt, rc = -1;
	size_t es = dts[c->cdt].size, rb = (size_t)c->vocab * es;
	void *hx = NULL, *ho = NULL, *hl = NULL, *hg = NULL;
	int64_t *ht = NULL;
	uint64_t seed = 9;
	double tiny = kt == KT_F16 ? 0x1p-14 : 0.0;
	if (!(ht = host_copy(w, c->target, c->rows * sizeof(int64_t))) ||
	    !(hl = host_copy(w, c->loss, c->rows * es)) ||
	    (bwd && !(hg = host_copy(w, c->dloss, c->rows * es))))
		goto out;
	for (int t = 0; t < 64; t++) {
		size_t row = rng_next(&seed) % (size_t)c->rows;
		free(hx), free(ho);
		ho = NULL;
		if (!(hx = host_copy(w, (char *)c->x + row * rb, rb)) ||
		    (bwd && !(ho = host_copy(w, (char *)c->dx + row * rb, rb))))
			goto out;
		double m = -INFINITY, z = 0;
		for (long j = 0; j < c->vocab; j++)
			m = fmax(m, hval(hx, j, kt));
		for (long j = 0; j < c->vocab; j++)
			z += exp(hval(hx, j, kt) - m);
		double lse = m + log(z);
		long tg = (long)ht[row];
		if (tg < 0 || tg >= c->vocab) {
			chk->max_err = INFINITY; /* the fill kernel writes targets in [0, vocab) */
			continue;
		}
		double xt = hval(hx, tg, kt);
		if (!bwd) {
			note_err(chk, hval(hl, row, kt), lse - xt, fabs(lse) + fabs(xt));
			continue;
		}
		double g = hval(hg, row, kt);
		for (long j = 0; j < c->vocab; j++) {
			double p = exp(hval(hx, j, kt) - lse), oh = j == tg ? 1 : 0;
			note_err(chk, hval(ho, j, kt), (p - oh) * g, (p + oh) * fabs(g) + tiny);
		}
	}
	rc = 0;
out:
	free(hx), free(ho), free(hl), free(hg), free(ht);
	return rc;
}

static int run_xent(struct kp_wl *w, int cdt, const struct kp_norm_shape *sh)
{
	struct bufs b = { .n = 0 };
	struct xent_case c = { .cdt = cdt, .rows = sh->rows, .vocab = sh->hidden };
	int rc = -1, bwd = w->o->backward;
	size_t es = dts[cdt].size, n = (size_t)sh->rows * sh->hidden;
	char label[120], shape[48];
	snprintf(label, sizeof(label), "cross_entropy %s rows=%ld vocab=%ld", dts[cdt].name,
		 sh->rows, sh->hidden);
	snprintf(shape, sizeof(shape), "%ldx%ld", sh->rows, sh->hidden);
	if (cdt == CDT_TF32) {
		printf("  -  %s: no tf32 variant (skipped)\n", label);
		return 0;
	}
	if (!(c.x = dalloc(w, &b, n * es)) || !(c.loss = dalloc(w, &b, sh->rows * es)) ||
	    !(c.target = dalloc(w, &b, sh->rows * sizeof(int64_t))) ||
	    !(c.lse = dalloc(w, &b, sh->rows * 4)))
		goto out;
	if (bwd && (!(c.dx = dalloc(w, &b, n * es)) || !(c.dloss = dalloc(w, &b, sh->rows * es))))
		goto out;
	TRY(fill(w, c.x, cdt, n, 51));
	if (bwd)
		TRY(fill(w, c.dloss, cdt, sh->rows, 52));
	recorder_push(w->t->untraced_ext);
	int e = kk_fill_targets(c.target, sh->rows, sh->hidden, 53);
	recorder_pop();
	TRY(kcheck(w, e, "kprof_fill_targets"));
	w->traced = 0;
	TRY(xent_iter(w, &c));
	TRY(dev_sync(w));
	struct kp_check chk = { .tol = workloads_tolerance(cdt == CDT_FP32 ? CDT_FP16 : cdt) };
	TRY(xent_check(w, &c, 0, &chk));
	/* read logits and int64 targets, write the loss (analyze's cross_entropy_loss model) */
	double bytes = (double)n * es + sh->rows * 8.0 + sh->rows * (double)es;
	TRY(mb_measure(w, label, xent_iter, &c, &chk, bytes, "aten::cross_entropy_loss",
		       "cross_entropy", shape, cdt, "fwd"));
	if (bwd) {
		char bl[130];
		snprintf(bl, sizeof(bl), "cross_entropy bwd %s rows=%ld vocab=%ld", dts[cdt].name,
			 sh->rows, sh->hidden);
		TRY(xent_bwd_iter(w, &c));
		TRY(dev_sync(w));
		struct kp_check bc = { .tol = chk.tol };
		TRY(xent_check(w, &c, 1, &bc));
		/* read grad, logits, targets, lse; write dx */
		bytes = 2.0 * n * es + sh->rows * (es + 8.0 + 4.0);
		TRY(mb_measure(w, bl, xent_bwd_iter, &c, &bc, bytes,
			       "kprof::cross_entropy_loss_backward", "cross_entropy", shape, cdt,
			       "bwd"));
	}
	rc = 0;
out:
	bufs_free(&b);
	return rc;
}

/*
 * The conv and sdpa backends: --backend as given, else cudnn when it loads, else reference.
 * cuDNN's absence is a warning and the reference backend runs instead.
 */
static int pick_backends(struct kp_wl *w)
{
	const struct kp_capture_opts *o = w->o;
	int be = o->backends & BE_CONV;
	if (!(o->workloads & (WL_CONV | WL_SDPA)) || (be && !(be & BE_CUDNN)))
		return be ? be : BE_REFERENCE;
	char why[2400];
	if (!w->cudnn)
		w->cudnn = cudnn_open(why, sizeof(why));
	if (!w->cudnn) {
		fprintf(stderr, "kprof: warning: %s; conv and sdpa run on the reference backend\n",
			why);
		return BE_REFERENCE;
	}
	long v = cudnn_version(w->cudnn);
	printf("     cudnn  %ld.%ld.%ld from %s\n", v / 10000, v / 100 % 100, v % 100,
	       cudnn_path(w->cudnn));
	return be ? be : BE_CUDNN;
}

int workloads_run(struct kp_wl *w)
{
	const struct kp_capture_opts *o = w->o;
	int backends = pick_backends(w), layouts = o->layouts ? o->layouts : LAYOUT_NCHW;
	int mm_be = o->backends & BE_MATMUL ? o->backends & BE_MATMUL : BE_CUBLAS;
	for (int cdt = 0; cdt < CDT_N; cdt++) {
		if (!(o->dtypes & (1 << cdt)))
			continue;
		if (o->workloads & WL_MATMUL)
			for (size_t i = 0; i < o->nmm; i++)
				for (int op = MM_MM; op < 1 << MM_NVARIANTS; op <<= 1)
					for (int be = BE_CUBLAS; be <= BE_CUBLASLT; be <<= 1)
						if ((o->mm_ops & op) && (mm_be & be) &&
						    run_matmul(w, op, cdt, &o->mm[i],
							       be == BE_CUBLASLT) < 0)
							return -1;
		if (o->workloads & WL_SDPA)
			for (size_t i = 0; i < o->nsdpa; i++)
				for (int be = BE_REFERENCE; be <= BE_CUDNN; be <<= 1) {
					if (!(backends & be))
						continue;
					/* the default backend: cuDNN where it plans the case */
					int r = run_sdpa(w, cdt, &o->sdpa[i], be == BE_CUDNN,
							 !(o->backends & BE_CONV));
					if (r < 0 ||
					    (r > 0 && run_sdpa(w, cdt, &o->sdpa[i], 0, 0) < 0))
						return -1;
				}
		if (o->workloads & WL_CONV)
			for (size_t i = 0; i < o->nconv; i++)
				for (int be = BE_REFERENCE; be <= BE_CUDNN; be <<= 1)
					for (int l = LAYOUT_NCHW; l <= LAYOUT_NHWC; l <<= 1)
						if ((backends & be) && (layouts & l) &&
						    run_conv(w, cdt, &o->conv[i], be == BE_CUDNN,
							     l == LAYOUT_NHWC) < 0)
							return -1;
		for (int op = RW_SOFTMAX; op <= RW_LAYERNORM; op++)
			if (o->workloads & (WL_SOFTMAX << op))
				for (size_t i = 0; i < o->nnorm; i++)
					if (run_norm(w, op, cdt, &o->norm[i]) < 0)
						return -1;
		if (o->workloads & WL_XENT)
			for (size_t i = 0; i < o->nxent; i++)
				if (run_xent(w, cdt, &o->xent[i]) < 0)
					return -1;
	}
	return 0;
}

#endif /* KPROF_HAVE_CUPTI */
