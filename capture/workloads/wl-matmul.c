/*
 * wl-matmul.c — the matmul workload family: mm, addmm, bmm and the fused-activation variants
 * (the op each records, doc/flops-bytes.md §4.3), run through cuBLAS (bias copy, GEMM,
 * activation kernel) or cuBLASLt (fused epilogue), checked against a host fp64 reference.
 */

#include "workloads/wl-common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/capture.h"
#include "kprof/diag.h"
#include "kprof/jsonw.h"
#include "workloads/shapes.h"

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
	const char *ty = wl_cdt_torch[cdt];
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
		s[0] = wl_tensor(ty, 2, m, n, 0, 0);
		s[1] = wl_scalar("", "");
		*name = gelu ? "aten::gelu_" : "aten::relu_";
		return wl_mk_args(s, gelu ? 2 : 1, backend, cdt, NULL);
	}
	if (part != 0)
		return NULL;
	if (op == MM_MM) {
		s[0] = wl_tensor(ty, 2, m, k, 0, 0);
		s[1] = wl_tensor(ty, 2, k, n, 0, 0);
		ns = 2, *name = "aten::mm";
	} else if (op == MM_ADDMM) {
		s[0] = wl_tensor(ty, 1, n, 0, 0, 0);
		s[1] = wl_tensor(ty, 2, m, k, 0, 0);
		s[2] = wl_tensor(ty, 2, k, n, 0, 0);
		s[3] = wl_scalar("Scalar", "1");
		s[4] = wl_scalar("Scalar", "1");
		ns = 5, *name = "aten::addmm";
	} else if (op == MM_BMM) {
		s[0] = wl_tensor(ty, 3, b, m, k, 0);
		s[1] = wl_tensor(ty, 3, b, k, n, 0);
		ns = 2, *name = "aten::bmm";
	} else if (act) {
		/*
		 * _addmm_activation(self, mat1, mat2, *, beta=1, alpha=1, use_gelu=False): without
		 * bias, beta 0 (self [N] is not read, and not counted by kprof analyze)
		 */
		s[0] = wl_tensor(ty, 1, n, 0, 0, 0);
		s[1] = wl_tensor(ty, 2, m, k, 0, 0);
		s[2] = wl_tensor(ty, 2, k, n, 0, 0);
		s[3] = wl_scalar("Scalar", bias ? "1" : "0");
		s[4] = wl_scalar("Scalar", "1");
		s[5] = wl_scalar("Scalar", gelu ? "True" : "False");
		ns = 6, *name = "aten::_addmm_activation";
	} else {
		return NULL;
	}
	return wl_mk_args(s, ns, backend, cdt, algo);
}
#ifdef KPROF_HAVE_CUPTI
/* cublasLt.h declares cublasLtLoggerForceDisable() without a prototype */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <cublasLt.h>
#pragma GCC diagnostic pop
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
	return cmsg_error(w->o, w->d, KP_ENV, "cuBLASLt: %s: %s", what, cublasGetStatusString(st));
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
		return wl_cuda_fail(w, "cudaMalloc (cuBLASLt workspace)", e);
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
		cmsg_error(w->o, w->d, KP_ENV, "cuBLASLt: no algorithm for a %ldx%ldx%ld %s GEMM",
			   c->m, c->k, c->n, d->name);
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
	const struct dt_info *d = &wl_dts[c->cdt];
	struct lt_plan *p = xcalloc(1, sizeof(*p));
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
	int kt = wl_dts[c->cdt].kt;
	if (w->traced) {
		args = workloads_mm_args(c->op, 0, c->cdt, c->b, c->m, c->k, c->n, be,
					 c->lt ? c->algo : NULL, &name);
		if (!c->lt)
			aargs = workloads_mm_args(c->op, 1, c->cdt, c->b, c->m, c->k, c->n, be,
						  NULL, &aname);
	}
	struct op op, aop;
	wl_op_begin(w, &op);
	int rc = 0;
	if (c->lt) {
		rc = lt_run(w, c);
	} else {
		/* as torch's addmm without cuBLASLt: C = bias, then C = A B + C */
		if (c->op & MM_BIAS)
			rc = wl_kcheck(w, kk_bias_rows(c->c, c->bias, kt, c->m, c->n),
				       "kprof_bias_rows");
		if (rc == 0)
			rc = wl_gemm(w, c->cdt, 0, 0, c->m, c->n, c->k, c->a, c->k, c->m * c->k,
				     c->bm, c->n, c->k * c->n, c->op & MM_BIAS ? 1.f : 0.f, c->c, 0,
				     c->n, c->m * c->n, c->b);
		if (c->op & MM_ACT) {
			wl_op_begin(w, &aop);
			if (rc == 0)
				rc = wl_kcheck(w,
					       kk_activation(c->c, kt, (size_t)c->m * c->n,
							     (c->op & MM_GELUS) != 0),
					       "kprof_activation");
			wl_op_end(w, &aop, aname, aargs);
		}
	}
	wl_op_end(w, &op, name, args);
	return rc;
}

/* torch's gelu(approximate="tanh"), as cuBLASLt's GELU epilogue and kprof_activation */
static double gelu_tanh(double x)
{
	return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

static int mm_check(struct kp_wl *w, struct mm_case *c, struct kp_check *chk)
{
	int kt = wl_dts[c->cdt].kt;
	size_t es = wl_dts[c->cdt].size;
	int rc = -1;
	void *ha = wl_host_copy(w, c->a, c->b * c->m * c->k * es);
	void *hb = ha ? wl_host_copy(w, c->bm, c->b * c->k * c->n * es) : NULL;
	void *hc = hb ? wl_host_copy(w, c->c, c->b * c->m * c->n * es) : NULL;
	void *hbias = hc && (c->op & MM_BIAS) ? wl_host_copy(w, c->bias, c->n * es) : NULL;
	if (!hc || ((c->op & MM_BIAS) && !hbias))
		goto out;
	size_t total = (size_t)c->b * c->m * c->n;
	uint64_t seed = 1;
	long ns = total < NSAMPLES ? (long)total : NSAMPLES;
	for (long s = 0; s < ns; s++) {
		size_t idx = total <= NSAMPLES ? (size_t)s : wl_rng_next(&seed) % total;
		size_t bi = idx / ((size_t)c->m * c->n), i = idx / c->n % c->m, j = idx % c->n;
		double ref = hbias ? wl_hval(hbias, j, kt) : 0, mag = fabs(ref);
		for (long k = 0; k < c->k; k++) {
			double p = wl_hval(ha, (bi * c->m + i) * c->k + k, kt) *
				   wl_hval(hb, (bi * c->k + k) * c->n + j, kt);
			ref += p;
			mag += fabs(p);
		}
		/* |relu'|, |gelu'| <= 1.13: the activation keeps the error within the same bound */
		if (c->op & MM_GELUS)
			ref = gelu_tanh(ref);
		else if (c->op & MM_ACT)
			ref = ref > 0 ? ref : 0;
		double err = fabs(wl_hval(hc, idx, kt) - ref) / (mag > 1e-30 ? mag : 1e-30);
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
	size_t es = wl_dts[cdt].size;
	if (!(c->a = wl_dalloc(w, b, c->b * c->m * c->k * es)) ||
	    !(c->bm = wl_dalloc(w, b, c->b * c->k * c->n * es)) ||
	    !(c->c = wl_dalloc(w, b, c->b * c->m * c->n * es)) ||
	    ((c->op & MM_BIAS) && !(c->bias = wl_dalloc(w, b, c->n * es))))
		return -1;
	TRY(wl_fill(w, c->a, cdt, c->b * c->m * c->k, 11));
	TRY(wl_fill(w, c->bm, cdt, c->b * c->k * c->n, 12));
	if (c->bias)
		TRY(wl_fill(w, c->bias, cdt, c->n, 13));
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
	cmsg_out(w->o, "     time  %s ms/iter  %.1f TFLOP/s  %s\n", results_ms_text(mt, sizeof(mt), ms),
		 fl / (ms * 1e-3) / 1e12, label);
	struct kp_result r = {
		.ms = ms, .tflops = fl / (ms * 1e-3) / 1e12, .err = chk->max_err, .tol = chk->tol
	};
	const char *opname = NULL;
	free(workloads_mm_args(op, 0, cdt, c->b, c->m, c->k, c->n, be, NULL, &opname));
	snprintf(r.op, sizeof(r.op), "%s", opname ? opname : "?");
	snprintf(r.kind, sizeof(r.kind), "%s", workloads_mm_variant(op));
	snprintf(r.shape, sizeof(r.shape), "%ldx%ldx%ld%s", c->m, c->k, c->n, batch);
	snprintf(r.dtype, sizeof(r.dtype), "%s", wl_dts[cdt].name);
	snprintf(r.backend, sizeof(r.backend), "%s", be);
	snprintf(r.mode, sizeof(r.mode), "fwd");
	wl_keep_result(w, &r, label);
}

int wl_run_matmul(struct kp_wl *w, int op, int cdt, const struct kp_mm_shape *sh, int lt)
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
		 workloads_mm_variant(op), wl_dts[cdt].name, be, c.m, c.k, c.n, batch,
		 sh->label[0] ? " " : "", sh->label);
	TRY(mm_alloc(w, &b, &c));
	if (lt) {
		TRY(lt_open(w));
		if (!(c.lt = lt_plan_new(w, &c)))
			goto out;
		cmsg_out(w->o, "     cublaslt  %s: %s\n", label, c.algo);
	}
	w->traced = 0;
	TRY(mm_iter(w, &c));
	TRY(wl_dev_sync(w));
	struct kp_check chk = { .tol = workloads_tolerance(cdt) };
	TRY(mm_check(w, &c, &chk));
	wl_print_check(w, label, &chk);
	TRY(wl_timed_loop(w, label, mm_iter, &c));
	double ms = wl_event_ms(w, mm_iter, &c);
	if (ms > 0)
		mm_report(w, &c, &chk, ms, be, batch, label);
	rc = 0;
out:
	lt_plan_free(c.lt);
	wl_bufs_free(&b);
	return rc;
}

#endif /* KPROF_HAVE_CUPTI */
