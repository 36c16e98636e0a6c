/*
 * wl-sdpa.c — the sdpa workload family: scaled dot-product attention, forward and backward, on
 * the math path (strided-batched GEMMs + softmax, scores in memory, chunked by batch items) or
 * cuDNN's fused flash attention (wl-cudnn-sdpa.c), checked against a host fp64 reference.
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
	size_t es = wl_dts[c->cdt].size;
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
	const char *ty = wl_dts[c->cdt].torch_type;
	const char *causal = s->causal ? "True" : "False", *gqa = c->g > 1 ? "True" : "False";
	top[0] = wl_tensor(ty, 4, bc, s->h, s->sq, s->d);
	top[1] = wl_tensor(ty, 4, bc, s->hkv, s->sk, s->d);
	top[2] = wl_tensor(ty, 4, bc, s->hkv, s->sk, s->d);
	top[3] = wl_scalar("", "");
	top[4] = wl_scalar("Scalar", "0.");
	top[5] = wl_scalar("Scalar", causal);
	top[6] = wl_scalar("", "");
	top[7] = wl_scalar("Scalar", gqa);
}

/* the forward as the math path: S = Q K^T (fp32), P = softmax(scale S), O = P V */
static int sdpa_chunk_fwd(struct kp_wl *w, struct sdpa_case *c, const struct sdpa_view *v)
{
	const struct kp_sdpa_shape *s = &c->s;
	const struct dt_info *d = &wl_dts[c->cdt];
	const char *ty = d->torch_type, *be = "cublas-math-sdpa";
	const char *causal = s->causal ? "True" : "False", *gqa = c->g > 1 ? "True" : "False";
	long nb = v->nb, mq = v->mq;
	int tr = w->traced, rc = 0;
	struct slot top[8];
	sdpa_top_slots(c, v->bc, top);
	/* clang-format off */
	struct slot math[9] = {
		top[0], top[1], top[2], wl_scalar("", ""), wl_scalar("Scalar", "0."),
		wl_scalar("Scalar", causal), wl_scalar("", ""), wl_scalar("", ""),
		wl_scalar("Scalar", gqa),
	};
	/* clang-format on */
	struct slot b1[2] = { wl_tensor(ty, 3, nb, mq, s->d, 0),
			      wl_tensor(ty, 3, nb, s->d, s->sk, 0) };
	struct slot sm[3] = { wl_tensor("float", 3, nb, mq, s->sk, 0), wl_scalar("Scalar", "-1"),
			      wl_scalar("", "") };
	struct slot b2[2] = { wl_tensor(ty, 3, nb, mq, s->sk, 0),
			      wl_tensor(ty, 3, nb, s->sk, s->d, 0) };

	struct op o_top, o_math, o1, o2, o3;
	char *a_top = tr ? wl_mk_args(top, 8, be, c->cdt, NULL) : NULL;
	char *a_math = tr ? wl_mk_args(math, 9, be, c->cdt, NULL) : NULL;
	char *a1 = tr ? wl_mk_args(b1, 2, be, c->cdt, NULL) : NULL;
	char *a2 = tr ? wl_mk_args(sm, 3, be, c->cdt, NULL) : NULL;
	char *a3 = tr ? wl_mk_args(b2, 2, be, c->cdt, NULL) : NULL;
	wl_op_begin(w, &o_top);
	wl_op_begin(w, &o_math);
	wl_op_begin(w, &o1); /* S = Q K^T, fp32 scores in memory */
	rc = wl_gemm(w, c->cdt, 0, 1, mq, s->sk, s->d, v->q, s->d, v->qs, v->k, s->d, v->ks, 0.f,
		     c->scores, 1, s->sk, v->ss, nb);
	wl_op_end(w, &o1, "aten::bmm", a1);
	wl_op_begin(w, &o2); /* P = softmax(scale S) with the causal mask */
	if (rc == 0)
		rc = wl_kcheck(w,
			       kk_softmax_fwd(c->p, c->scores, d->kt, nb * mq, s->sq, s->sk,
					      c->scale, s->causal),
			       "kprof_softmax_fwd");
	wl_op_end(w, &o2, "aten::_safe_softmax", a2);
	wl_op_begin(w, &o3); /* O = P V */
	if (rc == 0)
		rc = wl_gemm(w, c->cdt, 0, 0, mq, s->d, s->sk, c->p, s->sk, v->ss, v->v, s->d,
			     v->ks, 0.f, v->o, 0, s->d, v->qs, nb);
	wl_op_end(w, &o3, "aten::bmm", a3);
	wl_op_end(w, &o_math, "aten::_scaled_dot_product_attention_math", a_math);
	wl_op_end(w, &o_top, "aten::scaled_dot_product_attention", a_top);
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
	const char *ty = wl_dts[c->cdt].torch_type, *be = "cublas-math-sdpa";
	long nb = v->nb, mq = v->mq;
	int tr = w->traced;
	struct slot top[8];
	sdpa_top_slots(c, v->bc, top);
	struct slot g1[2] = { wl_tensor(ty, 3, nb, mq, s->d, 0),
			      wl_tensor(ty, 3, nb, s->d, s->sk, 0) };
	struct slot g2[2] = { wl_tensor(ty, 3, nb, s->sk, mq, 0),
			      wl_tensor(ty, 3, nb, mq, s->d, 0) };
	struct slot sb[4] = { wl_tensor("float", 3, nb, mq, s->sk, 0),
			      wl_tensor(ty, 3, nb, mq, s->sk, 0), wl_scalar("Scalar", "-1"),
			      wl_scalar("Scalar", "6") };
	struct slot g3[2] = { wl_tensor(ty, 3, nb, mq, s->sk, 0),
			      wl_tensor(ty, 3, nb, s->sk, s->d, 0) };
	struct slot g4[2] = { wl_tensor(ty, 3, nb, s->sk, mq, 0),
			      wl_tensor(ty, 3, nb, mq, s->d, 0) };
	struct slot one[1] = { wl_tensor(ty, 3, nb, mq, s->d, 0) };
	struct slot onep[1] = { wl_tensor(ty, 3, nb, mq, s->sk, 0) };
	a->p0 = tr ? wl_mk_args(top, 8, be, c->cdt, NULL) : NULL;
	a->p1 = tr ? wl_mk_args(one, 1, be, c->cdt, NULL) : NULL;
	a->p2 = tr ? wl_mk_args(onep, 1, be, c->cdt, NULL) : NULL;
	a->p3 = tr ? wl_mk_args(onep, 1, be, c->cdt, NULL) : NULL;
	a->q1 = tr ? wl_mk_args(g1, 2, be, c->cdt, NULL) : NULL;
	a->q2 = tr ? wl_mk_args(g2, 2, be, c->cdt, NULL) : NULL;
	a->q3 = tr ? wl_mk_args(sb, 4, be, c->cdt, NULL) : NULL;
	a->q4 = tr ? wl_mk_args(g3, 2, be, c->cdt, NULL) : NULL;
	a->q5 = tr ? wl_mk_args(g4, 2, be, c->cdt, NULL) : NULL;
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
	wl_op_begin(w, &p0);
	wl_op_begin(w, &p1);
	wl_op_begin(w, &q1); /* dP = dO V^T (fp32, into the scores buffer) */
	rc = wl_gemm(w, c->cdt, 0, 1, mq, s->sk, s->d, v->dout, s->d, qs, v->v, s->d, ks, 0.f,
		     c->scores, 1, s->sk, ss, nb);
	wl_op_end(w, &q1, "aten::bmm", a.q1);
	wl_op_begin(w, &q2); /* dV = P^T dO (sums the query heads of a GQA group) */
	if (rc == 0)
		rc = wl_gemm(w, c->cdt, 1, 0, s->sk, s->d, mq, c->p, s->sk, ss, v->dout, s->d, qs,
			     0.f, v->dv, 0, s->d, ks, nb);
	wl_op_end(w, &q2, "aten::bmm", a.q2);
	wl_op_end(w, &p1, "BmmBackward0", a.p1);
	wl_op_begin(w, &p2);
	wl_op_begin(w, &q3); /* dS = scale P (dP - rowsum(P dP)), in place of P */
	if (rc == 0)
		rc = wl_kcheck(w,
			       kk_softmax_bwd(c->p, c->p, c->scores, wl_dts[c->cdt].kt, nb * mq,
					      s->sk, c->scale),
			       "kprof_softmax_bwd");
	wl_op_end(w, &q3, "aten::_softmax_backward_data", a.q3);
	wl_op_end(w, &p2, "SoftmaxBackward0", a.p2);
	wl_op_begin(w, &p3);
	wl_op_begin(w, &q4); /* dQ = dS K */
	if (rc == 0)
		rc = wl_gemm(w, c->cdt, 0, 0, mq, s->d, s->sk, c->p, s->sk, ss, v->k, s->d, ks, 0.f,
			     v->dq, 0, s->d, qs, nb);
	wl_op_end(w, &q4, "aten::bmm", a.q4);
	wl_op_begin(w, &q5); /* dK = dS^T Q */
	if (rc == 0)
		rc = wl_gemm(w, c->cdt, 1, 0, s->sk, s->d, mq, c->p, s->sk, ss, v->q, s->d, qs, 0.f,
			     v->dk, 0, s->d, ks, nb);
	wl_op_end(w, &q5, "aten::bmm", a.q5);
	wl_op_end(w, &p3, "BmmBackward0", a.p3);
	wl_op_end(w, &p0, "kprof::scaled_dot_product_attention_math_backward", a.p0);
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

/*
 * The cudnn backend, recorded as PyTorch records SDPBackend.CUDNN_ATTENTION:
 * aten::scaled_dot_product_attention > aten::_scaled_dot_product_cudnn_attention, and the
 * autograd node > aten::_scaled_dot_product_cudnn_attention_backward.
 */
static int sdpa_cudnn_iter(struct kp_wl *w, struct sdpa_case *c)
{
	const struct kp_sdpa_shape *s = &c->s;
	const char *ty = wl_dts[c->cdt].torch_type, *be = "cudnn";
	const char *causal = s->causal ? "True" : "False", *gqa = c->g > 1 ? "True" : "False";
	const char *lse = c->backward ? "True" : "False";
	char scale[24], why[300], maxq[24], maxk[24];
	snprintf(scale, sizeof(scale), "%g", (double)c->scale);
	snprintf(maxq, sizeof(maxq), "%ld", s->sq);
	snprintf(maxk, sizeof(maxk), "%ld", s->sk);
	int tr = w->traced, rc;
	struct slot q = wl_tensor(ty, 4, s->b, s->h, s->sq, s->d);
	struct slot kv = wl_tensor(ty, 4, s->b, s->hkv, s->sk, s->d);
	/* clang-format off */
	struct slot top[8] = {
		q, kv, kv, wl_scalar("", ""), wl_scalar("Scalar", "0."),
		wl_scalar("Scalar", causal), wl_scalar("", ""), wl_scalar("Scalar", gqa),
	};
	struct slot fwd[9] = {
		q, kv, kv, wl_scalar("", ""), wl_scalar("Scalar", lse),
		wl_scalar("Scalar", "0."), wl_scalar("Scalar", causal),
		wl_scalar("Scalar", "False"), wl_scalar("Scalar", scale),
	};
	/* clang-format on */
	struct op o_top, o_fwd;
	char *a_top = tr ? wl_mk_args(top, 8, be, c->cdt, c->algo) : NULL;
	char *a_fwd = tr ? wl_mk_args(fwd, 9, be, c->cdt, c->algo) : NULL;
	wl_op_begin(w, &o_top);
	wl_op_begin(w, &o_fwd);
	rc = cudnn_sdpa_fwd(c->cu, why, sizeof(why)) < 0 ? wl_cudnn_fail(w, why) : 0;
	wl_op_end(w, &o_fwd, "aten::_scaled_dot_product_cudnn_attention", a_fwd);
	wl_op_end(w, &o_top, "aten::scaled_dot_product_attention", a_top);
	if (rc < 0 || !c->backward)
		return rc;
	/* clang-format off */
	struct slot bwd[16] = {
		q, q, kv, kv, q, wl_tensor("float", 4, s->b, s->h, s->sq, 1),
		wl_tensor("Long", 0, 0, 0, 0, 0), wl_tensor("Long", 0, 0, 0, 0, 0),
		wl_scalar("", ""), wl_scalar("", ""), wl_scalar("", ""),
		wl_scalar("Scalar", maxq), wl_scalar("Scalar", maxk), wl_scalar("Scalar", "0."),
		wl_scalar("Scalar", causal), wl_scalar("Scalar", scale),
	};
	/* clang-format on */
	struct slot one[1] = { q };
	struct op o_node, o_bwd;
	char *a_node = tr ? wl_mk_args(one, 1, be, c->cdt, c->algo) : NULL;
	char *a_bwd = tr ? wl_mk_args(bwd, 16, be, c->cdt, c->algo) : NULL;
	wl_op_begin(w, &o_node);
	wl_op_begin(w, &o_bwd);
	rc = cudnn_sdpa_bwd(c->cu, why, sizeof(why)) < 0 ? wl_cudnn_fail(w, why) : 0;
	wl_op_end(w, &o_bwd, "aten::_scaled_dot_product_cudnn_attention_backward", a_bwd);
	wl_op_end(w, &o_node, "ScaledDotProductCudnnAttentionBackward0", a_node);
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
			acc += wl_hval(q, (size_t)i * d + e, kt) *
			       wl_hval(k, (size_t)j * d + e, kt);
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
			acc += wl_hval(dout, ro + e, kt) * wl_hval(v, (size_t)j * d + e, kt);
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
	size_t es = wl_dts[c->cdt].size, qsz = (size_t)s->sq * s->d * es,
	       ksz = (size_t)s->sk * s->d * es;
	long kvh = hd / c->g;
	size_t qoff = ((size_t)b * s->h + hd) * qsz, koff = ((size_t)b * s->hkv + kvh) * ksz;
	free(h->q), free(h->k), free(h->v), free(h->o), free(h->dout), free(h->dq);
	h->q = h->k = h->v = h->o = h->dout = h->dq = NULL;
	if (!(h->q = wl_host_copy(w, (char *)c->q + qoff, qsz)) ||
	    !(h->k = wl_host_copy(w, (char *)c->k + koff, ksz)) ||
	    !(h->v = wl_host_copy(w, (char *)c->v + koff, ksz)) ||
	    !(h->o = wl_host_copy(w, (char *)c->o + qoff, qsz)) ||
	    !(h->dout = wl_host_copy(w, (char *)c->dout + qoff, qsz)) ||
	    !(h->dq = wl_host_copy(w, (char *)c->dq + qoff, qsz)))
		return -1;
	return 0;
}

/* O row i = P V, with P in h->p */
static void sdpa_check_o_row(const struct sdpa_case *c, const struct sdpa_host *h, long i, long lim,
			     struct kp_check *fwd)
{
	const struct kp_sdpa_shape *s = &c->s;
	int kt = wl_dts[c->cdt].kt;
	for (long e = 0; e < s->d; e++) {
		double ref = 0, mag = 0;
		for (long j = 0; j < lim; j++) {
			double t = h->p[j] * wl_hval(h->v, (size_t)j * s->d + e, kt);
			ref += t, mag += fabs(t);
		}
		wl_note_err(fwd, wl_hval(h->o, (size_t)i * s->d + e, kt), ref, mag);
	}
}

/* dQ row i = scale sum_j P[j] (dP[j] - D_i) K_j */
static void sdpa_check_dq_row(const struct sdpa_case *c, struct sdpa_host *h, long i, long lim,
			      struct kp_check *bwd)
{
	const struct kp_sdpa_shape *s = &c->s;
	int kt = wl_dts[c->cdt].kt;
	double di = ref_dp_row(h->dout, (size_t)i * s->d, h->v, kt, lim, s->d, h->p, h->dp);
	for (long e = 0; e < s->d; e++) {
		double ref = 0, mag = 0;
		for (long j = 0; j < lim; j++) {
			double t = c->scale * h->p[j] * (h->dp[j] - di) *
				   wl_hval(h->k, (size_t)j * s->d + e, kt);
			ref += t, mag += fabs(t);
		}
		wl_note_err(bwd, wl_hval(h->dq, (size_t)i * s->d + e, kt), ref, mag);
	}
}

/* one random (batch item, head): O (and dQ) of 8 query rows, the last row first */
static int sdpa_check_head(struct kp_wl *w, const struct sdpa_case *c, struct sdpa_host *h,
			   struct kp_check *fwd, struct kp_check *bwd, uint64_t *seed)
{
	const struct kp_sdpa_shape *s = &c->s;
	int kt = wl_dts[c->cdt].kt;
	long b = (long)(wl_rng_next(seed) % s->b), hd = (long)(wl_rng_next(seed) % s->h);
	if (sdpa_copy_head(w, c, h, b, hd) < 0)
		return -1;
	for (int r = 0; r < 8; r++) {
		long i = r == 0 ? s->sq - 1 : (long)(wl_rng_next(seed) % s->sq);
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
	size_t es = wl_dts[c->cdt].size, qsz = (size_t)s->sq * s->d * es,
	       ksz = (size_t)s->sk * s->d * es;
	long b = s->b - 1, kvh = s->hkv - 1;
	size_t goff = ((size_t)b * s->h + (size_t)kvh * c->g) * qsz;
	size_t koff = ((size_t)b * s->hkv + kvh) * ksz;
	free(h->k), free(h->v);
	h->k = h->v = NULL;
	if (!(h->gq = wl_host_copy(w, (char *)c->q + goff, qsz * c->g)) ||
	    !(h->gdo = wl_host_copy(w, (char *)c->dout + goff, qsz * c->g)) ||
	    !(h->k = wl_host_copy(w, (char *)c->k + koff, ksz)) ||
	    !(h->v = wl_host_copy(w, (char *)c->v + koff, ksz)) ||
	    !(h->dk = wl_host_copy(w, (char *)c->dk + koff, ksz)) ||
	    !(h->dv = wl_host_copy(w, (char *)c->dv + koff, ksz)))
		return -1;
	return 0;
}

/* query row i of group head @gh: its terms of dV_j = sum_i P_ij dO_i, dK_j = sum_i dS_ij Q_i */
static void sdpa_accum_row(const struct sdpa_case *c, struct sdpa_host *h, long gh, long i,
			   const long *js, long nj)
{
	const struct kp_sdpa_shape *s = &c->s;
	int kt = wl_dts[c->cdt].kt;
	size_t qsz = (size_t)s->sq * s->d * wl_dts[c->cdt].size, ro = (size_t)i * s->d;
	const char *qh = (const char *)h->gq + gh * qsz, *doh = (const char *)h->gdo + gh * qsz;
	long lim = ref_row(qh, h->k, kt, i, s->sk, s->d, c->scale, s->causal, 0, h->p);
	double di = ref_dp_row(doh, ro, h->v, kt, lim, s->d, h->p, h->dp);
	for (long t = 0; t < nj; t++) {
		long j = js[t];
		if (j >= lim)
			continue;
		double dsj = c->scale * h->p[j] * (h->dp[j] - di);
		for (long e = 0; e < s->d; e++) {
			double x = h->p[j] * wl_hval(doh, ro + e, kt);
			double y = dsj * wl_hval(qh, ro + e, kt);
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
	int kt = wl_dts[c->cdt].kt;
	long nj = s->sk < 8 ? s->sk : 8, js[8];
	if (sdpa_copy_group(w, c, h) < 0)
		return -1;
	h->dkr = calloc(nj * s->d, sizeof(double)), h->dvr = calloc(nj * s->d, sizeof(double));
	h->dkm = calloc(nj * s->d, sizeof(double)), h->dvm = calloc(nj * s->d, sizeof(double));
	if (!h->dkr || !h->dvr || !h->dkm || !h->dvm)
		return -1;
	for (long t = 0; t < nj; t++)
		js[t] = t == 0 ? 0 : (long)(wl_rng_next(seed) % s->sk);
	for (long gh = 0; gh < c->g; gh++)
		for (long i = 0; i < s->sq; i++)
			sdpa_accum_row(c, h, gh, i, js, nj);
	for (long t = 0; t < nj; t++)
		for (long e = 0; e < s->d; e++) {
			size_t at = (size_t)js[t] * s->d + e;
			wl_note_err(bwd, wl_hval(h->dv, at, kt), h->dvr[t * s->d + e],
				    h->dvm[t * s->d + e]);
			wl_note_err(bwd, wl_hval(h->dk, at, kt), h->dkr[t * s->d + e],
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
	cmsg_out(w->o, "     time  %s ms/iter  %.1f TFLOP/s (%s)  %s\n",
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
	snprintf(r.dtype, sizeof(r.dtype), "%s", wl_dts[cdt].name);
	snprintf(r.backend, sizeof(r.backend), "%s", cudnn ? "cudnn" : "reference");
	snprintf(r.mode, sizeof(r.mode), "%s", c->backward ? "fwd+bwd" : "fwd");
	wl_keep_result(w, &r, label);
}

/* Q, K, V, O, dO, dQ, dK, dV of the whole batch; Q, K, V, dO filled */
static int sdpa_alloc(struct kp_wl *w, struct bufs *b, struct sdpa_case *c)
{
	const struct kp_sdpa_shape *sh = &c->s;
	int cdt = c->cdt;
	size_t es = wl_dts[cdt].size;
	size_t nq = (size_t)sh->b * sh->h * sh->sq * sh->d,
	       nk = (size_t)sh->b * sh->hkv * sh->sk * sh->d;
	if (!(c->q = wl_dalloc(w, b, nq * es)) || !(c->k = wl_dalloc(w, b, nk * es)) ||
	    !(c->v = wl_dalloc(w, b, nk * es)) || !(c->o = wl_dalloc(w, b, nq * es)) ||
	    !(c->dout = wl_dalloc(w, b, nq * es)) || !(c->dq = wl_dalloc(w, b, nq * es)) ||
	    !(c->dk = wl_dalloc(w, b, nk * es)) || !(c->dv = wl_dalloc(w, b, nk * es)))
		return -1;
	if (wl_fill(w, c->q, cdt, nq, 21) < 0 || wl_fill(w, c->k, cdt, nk, 22) < 0 ||
	    wl_fill(w, c->v, cdt, nk, 23) < 0 || wl_fill(w, c->dout, cdt, nq, 24) < 0)
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
	if (!(c->stats = wl_dalloc(w, b, (size_t)sh->b * sh->h * sh->sq * 4)))
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
			cmsg_warn(w->o, "%s: cuDNN: %s; the reference backend runs it", label,
				  why);
			return 1;
		}
		return cmsg_error(w->o, w->d, KP_ENV, "%s: cuDNN: %s", label, why);
	}
	cmsg_out(w->o, "     cudnn  %s: %s\n", label, c->algo);
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
	size_t es = wl_dts[c->cdt].size;
	size_t freeb = 0, totalb = 0;
	CU(cudaMemGetInfo(&freeb, &totalb));
	double per_b = workloads_sdpa_item_bytes(sh, es);
	c->bc = workloads_sdpa_chunk_items(freeb, per_b, sh->b);
	if (c->bc < 1) {
		return cmsg_error(w->o, w->d, KP_ENV,
				  "%s: one batch item's scores need %.1f GB, %.1f GB free", label,
				  per_b / 1e9, freeb / 1e9);
	}
	size_t nsc = (size_t)c->bc * sh->h * sh->sq * sh->sk;
	if (!(c->scores = wl_dalloc(w, b, nsc * 4)) || !(c->p = wl_dalloc(w, b, nsc * es)))
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
	TRY(wl_dev_sync(w));
	struct kp_check fwd = { .tol = workloads_sdpa_tolerance(cdt, 0) };
	struct kp_check bwd = { .tol = workloads_sdpa_tolerance(cdt, 1) };
	TRY(sdpa_check(w, c, &fwd, &bwd));
	char l2[200];
	snprintf(l2, sizeof(l2), "%s fwd", label);
	wl_print_check(w, l2, &fwd);
	if (c->backward) {
		snprintf(l2, sizeof(l2), "%s bwd", label);
		wl_print_check(w, l2, &bwd);
	}
	TRY(wl_timed_loop(w, label, sdpa_iter, c));
	double ms = wl_event_ms(w, sdpa_iter, c);
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
int wl_run_sdpa(struct kp_wl *w, int cdt, const struct kp_sdpa_shape *sh, int cudnn, int fallback)
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
		 wl_dts[cdt].name, cudnn ? "cudnn" : "reference", sh->b, sh->h, sh->hkv, sh->sq,
		 sh->sk, sh->d, sh->causal ? " causal" : "");
	if (cudnn && cdt != CDT_BF16 && cdt != CDT_FP16) {
		/* as PyTorch's SDPBackend.CUDNN_ATTENTION: no fp32 (nor tf32) kernel */
		cmsg_out(w->o, "  -  %s: cuDNN's fused attention is bf16/fp16 only (%s)\n", label,
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
	wl_bufs_free(&b);
	return rc;
}

#endif /* KPROF_HAVE_CUPTI */
