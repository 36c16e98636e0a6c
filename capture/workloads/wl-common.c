/*
 * wl-common.c — what the built-in workload families share (wl-common.h): the tolerances and host
 * conversions of the checks, the op-recording slots, device buffers, the timed loop and the
 * accuracy-check helpers.  The driver that runs the families is workloads.c.
 */
#include "workloads/wl-common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kprof/capture.h"
#include "kprof/diag.h"
#include "kprof/jsonw.h"
#include "workloads/shapes.h"

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
const char *const wl_cdt_torch[CDT_N] = { "c10::BFloat16", "c10::Half", "float", "float" };

/* ---- op recording ---- */

struct slot wl_tensor(const char *type, int nd, long a, long b, long c, long d)
{
	struct slot s = { .nd = nd, .d = { a, b, c, d }, .type = type };
	return s;
}

struct slot wl_scalar(const char *type, const char *value)
{
	struct slot s = { .nd = -1, .type = type };
	snprintf(s.conc, sizeof(s.conc), "%s", value);
	return s;
}

/* JSON members for a cpu_op: Input Dims / Input type / Concrete Inputs + kprof's backend. */
char *wl_mk_args(const struct slot *s, int n, const char *backend, int cdt, const char *algo)
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

#ifdef KPROF_HAVE_CUPTI

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "kernels/kernels.h"
#include "kernels/membound.h"
#include "record/ctrace.h"
#include "record/metrics.h"
#include "record/recorder.h"
#include "kprof/results.h"
#include "kprof/arena.h"
#include "kprof/diag.h"
#include "record/cmsg.h"
#include "workloads/cudnn-graph.h"
#include "workloads/wl-cudnn.h"

const struct dt_info wl_dts[CDT_N] = {
	[CDT_BF16] = { "bf16", "c10::BFloat16", "15", KT_BF16, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2 },
	[CDT_FP16] = { "fp16", "c10::Half", "5", KT_F16, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2 },
	[CDT_FP32] = { "fp32", "float", "6", KT_F32, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4 },
	[CDT_TF32] = { "tf32", "float", "6", KT_F32, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4 },
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t wl_rng_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 17;
}

/* ---- errors ---- */

int wl_cuda_fail(struct kp_wl *w, const char *what, cudaError_t e)
{
	return cmsg_error(w->o, w->d, KP_ENV, "%s: %s", what, cudaGetErrorString(e));
}

/* ---- device buffers of one case ---- */

void *wl_dalloc(struct kp_wl *w, struct bufs *b, size_t bytes)
{
	void *p = NULL;
	cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
	if (e != cudaSuccess || b->n == 24) {
		cmsg_error(w->o, w->d, KP_ENV, "cannot allocate %zu bytes on the GPU: %s", bytes,
			   cudaGetErrorString(e));
		if (p)
			cudaFree(p);
		return NULL;
	}
	b->p[b->n++] = p;
	return p;
}

void wl_bufs_free(struct bufs *b)
{
	while (b->n)
		cudaFree(b->p[--b->n]);
}

void *wl_host_copy(struct kp_wl *w, const void *dev, size_t bytes)
{
	void *h = xmalloc(bytes);
	/* linked to the untraced id: the copy stays out of the trace */
	recorder_push(w->t->untraced_ext);
	cudaError_t e = cudaMemcpy(h, dev, bytes, cudaMemcpyDeviceToHost);
	recorder_pop();
	if (e != cudaSuccess) {
		free(h);
		wl_cuda_fail(w, "cudaMemcpy", e);
		return NULL;
	}
	return h;
}

int wl_fill(struct kp_wl *w, void *p, int cdt, size_t n, uint64_t seed)
{
	recorder_push(w->t->untraced_ext);
	int e = kk_fill_uniform(p, wl_dts[cdt].kt, n, seed);
	recorder_pop();
	return e ? wl_cuda_fail(w, "kprof_fill_uniform", (cudaError_t)e) : 0;
}

double wl_hval(const void *p, size_t i, int kt)
{
	if (kt == KT_F32)
		return ((const float *)p)[i];
	uint16_t h = ((const uint16_t *)p)[i];
	return kt == KT_BF16 ? workloads_bf16_to_double(h) : workloads_fp16_to_double(h);
}

/* Kineto pushes CUSTOM0 = op id around every op, so kernels link to the innermost op. */
void wl_op_begin(struct kp_wl *w, struct op *op)
{
	op->ext = w->traced ? ++w->next_ext : w->t->untraced_ext;
	recorder_push(op->ext);
	op->t0 = now_ns();
}

void wl_op_end(struct kp_wl *w, struct op *op, const char *name, char *args)
{
	uint64_t t1 = now_ns();
	recorder_pop();
	if (w->traced)
		ctrace_add_span(w->t, "cpu_op", strdup(name), op->t0, t1, w->pid, w->tid, op->ext,
				args);
	else
		free(args);
}

struct slot wl_pair(long v)
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
int wl_gemm(struct kp_wl *w, int cdt, int ta, int tb, long M, long N, long K, const void *A,
	    long lda, long long sA, const void *B, long ldb, long long sB, float beta, void *C,
	    int c_fp32, long ldc, long long sC, long batch)
{
	const struct dt_info *d = &wl_dts[cdt];
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
		return cmsg_error(w->o, w->d, KP_ENV, "cuBLAS GEMM %ldx%ldx%ld (batch %ld, %s): %s",
				  M, N, K, batch, d->name, cublasGetStatusString(st));
	}
	return 0;
}

int wl_kcheck(struct kp_wl *w, int e, const char *what)
{
	return e ? wl_cuda_fail(w, what, (cudaError_t)e) : 0;
}

/* ---- the timed loop ---- */

int wl_dev_sync(struct kp_wl *w)
{
	cudaError_t e = cudaDeviceSynchronize();
	return e == cudaSuccess ? 0 : wl_cuda_fail(w, "cudaDeviceSynchronize", e);
}

/* one case's summary row into --results (when asked); out of memory only warns */
void wl_keep_result(struct kp_wl *w, const struct kp_result *r, const char *label)
{
	if (w->results && results_add(w->results, r) < 0)
		cmsg_warn(w->o, "out of memory: %s left out of the results", label);
}

void wl_print_check(struct kp_wl *w, const char *label, const struct kp_check *c)
{
	int ok = c->max_err <= c->tol;
	if (!ok)
		w->failures++;
	cmsg_out(w->o, "  %s  %-52s err %.2e (tol %.1e, %ld samples)\n", ok ? "\u2713" : "\u2717",
		 label, c->max_err, c->tol, c->samples);
	cmsg_flush(w->o);
}

/* The loop with CUPTI's kinds disabled: seconds, or a negative value on error. */
static double untraced_loop(struct kp_wl *w, iter_fn fn, void *ctx)
{
	recorder_enable(0);
	uint64_t t0 = now_ns();
	for (long i = 0; i < w->o->iters; i++)
		if (fn(w, ctx) < 0)
			return -1;
	if (wl_dev_sync(w) < 0)
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
	if (wl_dev_sync(w) < 0)
		return -1;
	if (metrics_end(w->t, c0, c1, label, why, sizeof(why)) < 0)
		goto fail;
	recorder_enable(1);
	return 0;
fail:
	return cmsg_error(w->o, w->d, KP_ENV, "--metrics: %s", why);
}

/*
 * Warm-up, then the traced iterations inside ProfilerStep#N.  --overhead times the untraced loop
 * before and after the traced one and uses their mean, so clock drift does not pose as overhead.
 */
int wl_timed_loop(struct kp_wl *w, const char *label, iter_fn fn, void *ctx)
{
	const struct kp_capture_opts *o = w->o;
	w->traced = 0;
	for (long i = 0; i < o->warmup; i++)
		if (fn(w, ctx) < 0)
			return -1;
	if (wl_dev_sync(w) < 0)
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
	int rc = wl_dev_sync(w);
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
		cmsg_out(o, "     overhead  untraced %s ms/iter  traced %s ms/iter  %.3fx  %s\n",
			 results_ms_text(u, sizeof(u), untraced * 1e3 / o->iters),
			 results_ms_text(t, sizeof(t), traced * 1e3 / o->iters),
			 untraced > 0 ? traced / untraced : 0.0, label);
	}
	return 0;
}

/* Mean time of one call of @fn over --iters untraced calls (CUDA events), ms; <0 on error. */
double wl_event_ms(struct kp_wl *w, iter_fn fn, void *ctx)
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

void wl_note_err(struct kp_check *chk, double got, double ref, double mag)
{
	double err = fabs(got - ref) / (mag > 1e-30 ? mag : 1e-30);
	if (!(err <= chk->max_err))
		chk->max_err = isnan(err) ? INFINITY : err;
	chk->samples++;
}

int wl_cudnn_fail(struct kp_wl *w, const char *why)
{
	return cmsg_error(w->o, w->d, KP_ENV, "cuDNN: %s", why);
}

#endif /* KPROF_HAVE_CUPTI */
