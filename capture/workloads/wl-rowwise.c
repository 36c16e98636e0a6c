/*
 * wl-rowwise.c — the memory-bound row-wise family: softmax, RMSNorm and LayerNorm forward and
 * backward, and cross-entropy, on kprof's one-pass and streaming kernels (membound*.cu), checked
 * against a host fp64 reference.
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
	const char *ty = wl_dts[c->cdt].torch_type;
	char hs[40], eps[24];
	snprintf(hs, sizeof(hs), "[%ld]", c->hidden);
	snprintf(eps, sizeof(eps), "%g", (double)norm_eps[c->op]);
	struct slot s[5];
	int ns;
	s[0] = wl_tensor(ty, 2, c->rows, c->hidden, 0, 0);
	if (c->op == RW_SOFTMAX) {
		s[1] = wl_scalar("Scalar", "-1"), s[2] = wl_scalar("Scalar", "False"), ns = 3;
	} else {
		s[1] = wl_scalar("ScalarList", hs);
		s[2] = wl_tensor(ty, 1, c->hidden, 0, 0, 0);
		if (c->op == RW_LAYERNORM)
			s[3] = wl_tensor(ty, 1, c->hidden, 0, 0, 0),
			s[4] = wl_scalar("Scalar", eps), ns = 5;
		else
			s[3] = wl_scalar("Scalar", eps), ns = 4;
	}
	char *args = w->traced ? wl_mk_args(s, ns, "kprof", c->cdt, NULL) : NULL;
	struct op op;
	wl_op_begin(w, &op);
	int rc = wl_kcheck(w,
			   kk_rowwise(c->op, c->y, c->x, c->wt, c->bias, c->mean, c->rstd,
				      wl_dts[c->cdt].kt, c->rows, c->hidden, norm_eps[c->op]),
			   "kprof_rowwise");
	wl_op_end(w, &op, norm_ops[c->op], args);
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
	const char *ty = wl_dts[c->cdt].torch_type;
	char hs[40];
	snprintf(hs, sizeof(hs), "[%ld]", c->hidden);
	struct slot s[8];
	int ns;
	s[0] = wl_tensor(ty, 2, c->rows, c->hidden, 0, 0);
	s[1] = wl_tensor(ty, 2, c->rows, c->hidden, 0, 0);
	if (c->op == RW_SOFTMAX) {
		s[2] = wl_scalar("Scalar", "-1"),
		s[3] = wl_scalar("ScalarType", wl_dts[c->cdt].scalar_type);
		ns = 4;
	} else if (c->op == RW_RMSNORM) {
		s[2] = wl_scalar("ScalarList", hs);
		s[3] = wl_tensor("float", 2, c->rows, 1, 0, 0);
		s[4] = wl_tensor(ty, 1, c->hidden, 0, 0, 0);
		s[5] = wl_scalar("ScalarList", "[True, True]");
		ns = 6;
	} else {
		s[2] = wl_scalar("ScalarList", hs);
		s[3] = wl_tensor("float", 2, c->rows, 1, 0, 0);
		s[4] = wl_tensor("float", 2, c->rows, 1, 0, 0);
		s[5] = wl_tensor(ty, 1, c->hidden, 0, 0, 0);
		s[6] = wl_tensor(ty, 1, c->hidden, 0, 0, 0);
		s[7] = wl_scalar("ScalarList", "[True, True, True]");
		ns = 8;
	}
	char *args = w->traced ? wl_mk_args(s, ns, "kprof", c->cdt, NULL) : NULL;
	struct op op;
	wl_op_begin(w, &op);
	int kt = wl_dts[c->cdt].kt, e;
	if (c->op == RW_SOFTMAX)
		e = kk_rowsoftmax_bwd(c->dx, c->y, c->dy, kt, c->rows, c->hidden);
	else
		e = kk_norm_bwd(c->op, c->dx, c->dw, c->db, c->dy, c->x, c->mean, c->rstd, c->wt,
				c->ws, kt, c->rows, c->hidden);
	int rc = wl_kcheck(w, e, "kprof_rowwise_backward");
	wl_op_end(w, &op, norm_bwd_ops[c->op], args);
	return rc;
}

/* 64 whole rows against fp64: |got - ref| / (|terms of ref|) per element. */
static int norm_check(struct kp_wl *w, struct norm_case *c, struct kp_check *chk)
{
	int kt = wl_dts[c->cdt].kt, rc = -1;
	size_t es = wl_dts[c->cdt].size, rb = (size_t)c->hidden * es;
	void *hw = NULL, *hb = NULL, *hx = NULL, *hy = NULL;
	double *f = malloc((size_t)c->hidden * sizeof(double));
	uint64_t seed = 5;
	if (!f)
		goto out;
	if (c->op != RW_SOFTMAX && !(hw = wl_host_copy(w, c->wt, rb)))
		goto out;
	if (c->op == RW_LAYERNORM && !(hb = wl_host_copy(w, c->bias, rb)))
		goto out;
	for (int t = 0; t < 64; t++) {
		size_t row = wl_rng_next(&seed) % (size_t)c->rows;
		free(hx), free(hy);
		hy = NULL;
		if (!(hx = wl_host_copy(w, (char *)c->x + row * rb, rb)) ||
		    !(hy = wl_host_copy(w, (char *)c->y + row * rb, rb)))
			goto out;
		double a = 0, q = 0, m = -INFINITY;
		for (long j = 0; j < c->hidden; j++) {
			f[j] = wl_hval(hx, j, kt);
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
				ref = f[j] * rstd * wl_hval(hw, j, kt), mag = fabs(ref);
			} else {
				double u = (f[j] - mu) * rstd * wl_hval(hw, j, kt),
				       v = wl_hval(hb, j, kt);
				ref = u + v, mag = fabs(u) + fabs(v);
			}
			/* fp16 outputs below its smallest normal lose relative precision */
			wl_note_err(chk, wl_hval(hy, j, kt), ref,
				    mag + (kt == KT_F16 ? 0x1p-14 : 0.0));
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
	void *h = xmalloc((size_t)rows * es);
	recorder_push(w->t->untraced_ext);
	cudaError_t e = cudaMemcpy2D(h, es, (const char *)dev + (size_t)col * es, (size_t)cols * es,
				     es, (size_t)rows, cudaMemcpyDeviceToHost);
	recorder_pop();
	if (e != cudaSuccess) {
		free(h);
		wl_cuda_fail(w, "cudaMemcpy2D", e);
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
		double p = wl_hval(b->hx, j, kt) * wl_hval(b->hd, j, kt);
		s += p, sa += fabs(p);
	}
	for (long j = 0; j < H; j++) {
		double y = wl_hval(b->hx, j, kt), d = wl_hval(b->hd, j, kt);
		wl_note_err(chk, wl_hval(b->ho, j, kt), y * (d - s),
			    fabs(y) * (fabs(d) + sa) + b->tiny);
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
		double g = wl_hval(b->hw, j, kt) * wl_hval(b->hd, j, kt),
		       xh = (wl_hval(b->hx, j, kt) - mu) * r;
		sg += g, sgx += g * xh, ag += fabs(g), agx += fabs(g * xh);
	}
	double a = b->op == RW_LAYERNORM ? sg / H : 0, aa = b->op == RW_LAYERNORM ? ag / H : 0;
	for (long j = 0; j < H; j++) {
		double g = wl_hval(b->hw, j, kt) * wl_hval(b->hd, j, kt),
		       xh = (wl_hval(b->hx, j, kt) - mu) * r;
		double ref = r * (g - a - xh * sgx / H);
		wl_note_err(chk, wl_hval(b->ho, j, kt), ref,
			    r * (fabs(g) + aa + fabs(xh) * agx / H) + b->tiny);
	}
}

/* dw (and db for layernorm) of column @col, in hx (x) and hd (dy): sums over every row */
static void check_norm_col(struct kp_check *chk, const struct bwd_host *b, long col)
{
	int kt = b->kt;
	double sw = 0, aw = 0, sb = 0, ab = 0;
	for (long i = 0; i < b->R; i++) {
		double d = wl_hval(b->hd, i, kt);
		double xh = (wl_hval(b->hx, i, kt) - (b->op == RW_LAYERNORM ? b->hm[i] : 0)) *
			    b->hr[i];
		sw += d * xh, aw += fabs(d * xh), sb += d, ab += fabs(d);
	}
	wl_note_err(chk, wl_hval(b->hdw, col, kt), sw, aw + b->tiny);
	if (b->op == RW_LAYERNORM)
		wl_note_err(chk, wl_hval(b->hdb, col, kt), sb, ab + b->tiny);
}

/* A norm's weight, saved rstd and mean, dw (and layernorm's db) to the host; -1 after a message */
static int copy_params(struct kp_wl *w, const struct norm_case *c, struct bwd_host *b, size_t rb)
{
	if (!(b->hw = wl_host_copy(w, c->wt, rb)) ||
	    !(b->hr = wl_host_copy(w, c->rstd, b->R * 4)) ||
	    !(b->hm = wl_host_copy(w, c->mean, b->R * 4)) ||
	    !(b->hdw = wl_host_copy(w, c->dw, rb)) ||
	    (c->op == RW_LAYERNORM && !(b->hdb = wl_host_copy(w, c->db, rb))))
		return -1;
	return 0;
}

/* dx on 64 whole rows drawn from @seed; -1 after the message */
static int check_rows(struct kp_wl *w, const struct norm_case *c, struct bwd_host *b,
		      struct kp_check *chk, uint64_t *seed, size_t rb)
{
	for (int t = 0; t < 64; t++) {
		size_t row = wl_rng_next(seed) % (size_t)b->R;
		free(b->hx), free(b->hd), free(b->ho);
		b->hd = b->ho = NULL;
		/* hx: y for softmax, x for the norms */
		if (!(b->hx = wl_host_copy(w,
					   (char *)(c->op == RW_SOFTMAX ? c->y : c->x) + row * rb,
					   rb)) ||
		    !(b->hd = wl_host_copy(w, (char *)c->dy + row * rb, rb)) ||
		    !(b->ho = wl_host_copy(w, (char *)c->dx + row * rb, rb)))
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
		long col = (long)(wl_rng_next(seed) % (uint64_t)b->H);
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
	size_t es = wl_dts[c->cdt].size, rb = (size_t)c->hidden * es;
	struct bwd_host b = { .kt = wl_dts[c->cdt].kt, .op = c->op, .H = c->hidden, .R = c->rows };
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
	wl_print_check(w, label, chk);
	TRY(wl_timed_loop(w, label, fn, ctx));
	double ms = wl_event_ms(w, fn, ctx), peak = kk_dram_peak();
	if (ms > 0) {
		double gbs = bytes / (ms * 1e-3) / 1e9;
		char mt[32];
		cmsg_out(w->o, "     time  %s ms/iter  %.0f GB/s (%.0f%% of DRAM peak %.0f GB/s)  %s\n",
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
		snprintf(r.dtype, sizeof(r.dtype), "%s", wl_dts[cdt].name);
		snprintf(r.backend, sizeof(r.backend), "kprof");
		snprintf(r.mode, sizeof(r.mode), "%s", mode);
		wl_keep_result(w, &r, label);
	}
	return 0;
out:
	return -1;
}

/* The case's device buffers, the backward's with --backward; -1 after the message */
static int norm_alloc(struct kp_wl *w, struct bufs *b, struct norm_case *c, int bwd)
{
	int op = c->op, kt = wl_dts[c->cdt].kt;
	size_t es = wl_dts[c->cdt].size, n = (size_t)c->rows * c->hidden;
	if (!(c->x = wl_dalloc(w, b, n * es)) || !(c->y = wl_dalloc(w, b, n * es)) ||
	    !(c->wt = wl_dalloc(w, b, c->hidden * es)) ||
	    !(c->bias = wl_dalloc(w, b, c->hidden * es)) ||
	    !(c->mean = wl_dalloc(w, b, c->rows * 4)) || !(c->rstd = wl_dalloc(w, b, c->rows * 4)))
		return -1;
	if (bwd && (!(c->dy = wl_dalloc(w, b, n * es)) || !(c->dx = wl_dalloc(w, b, n * es)) ||
		    !(c->dw = wl_dalloc(w, b, c->hidden * es)) ||
		    !(c->db = wl_dalloc(w, b, c->hidden * es))))
		return -1;
	if (bwd && op != RW_SOFTMAX &&
	    !(c->ws = wl_dalloc(w, b, kk_norm_bwd_workspace(op, kt, c->rows, c->hidden))))
		return -1;
	return 0;
}

/* x, the weight, the bias and (with @bwd) dy filled from their seeds; -1 after the message */
static int norm_fill(struct kp_wl *w, struct norm_case *c, int bwd)
{
	size_t n = (size_t)c->rows * c->hidden;
	TRY(wl_fill(w, c->x, c->cdt, n, 41));
	TRY(wl_fill(w, c->wt, c->cdt, c->hidden, 42));
	TRY(wl_fill(w, c->bias, c->cdt, c->hidden, 43));
	if (bwd)
		TRY(wl_fill(w, c->dy, c->cdt, n, 44));
	return 0;
out:
	return -1;
}

/* analyze's byte model of the forward: x and y, plus weight/bias and the fp32 row statistics */
static double norm_fwd_bytes(const struct norm_case *c)
{
	size_t es = wl_dts[c->cdt].size, n = (size_t)c->rows * c->hidden;
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
	size_t es = wl_dts[c->cdt].size, n = (size_t)c->rows * c->hidden;
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
	snprintf(bl, sizeof(bl), "%s bwd %s rows=%ld hidden=%ld", name, wl_dts[c->cdt].name,
		 c->rows, c->hidden);
	TRY(norm_bwd_iter(w, c));
	TRY(wl_dev_sync(w));
	struct kp_check bc = { .tol = tol };
	TRY(norm_bwd_check(w, c, &bc));
	TRY(mb_measure(w, bl, norm_bwd_iter, c, &bc, norm_bwd_bytes(c), norm_bwd_ops[c->op], name,
		       shape, c->cdt, "bwd"));
	return 0;
out:
	return -1;
}

int wl_run_norm(struct kp_wl *w, int op, int cdt, const struct kp_norm_shape *sh)
{
	static const char *const names[] = { "softmax", "rmsnorm", "layernorm" };
	struct bufs b = { .n = 0 };
	struct norm_case c = { .cdt = cdt, .op = op, .rows = sh->rows, .hidden = sh->hidden };
	int rc = -1, bwd = w->o->backward;
	char label[120], shape[48];
	snprintf(label, sizeof(label), "%s %s rows=%ld hidden=%ld", names[op], wl_dts[cdt].name,
		 sh->rows, sh->hidden);
	snprintf(shape, sizeof(shape), "%ldx%ld", sh->rows, sh->hidden);
	if (cdt == CDT_TF32) {
		cmsg_out(w->o, "  -  %s: no tf32 variant (skipped)\n", label);
		return 0;
	}
	TRY(norm_alloc(w, &b, &c, bwd));
	TRY(norm_fill(w, &c, bwd));
	/* rmsnorm writes no mean: the backward check reads zeros */
	CU(cudaMemset(c.mean, 0, sh->rows * 4));
	w->traced = 0;
	TRY(norm_iter(w, &c));
	TRY(wl_dev_sync(w));
	struct kp_check chk = { .tol = workloads_tolerance(cdt == CDT_FP32 ? CDT_FP16 : cdt) };
	TRY(norm_check(w, &c, &chk));
	TRY(mb_measure(w, label, norm_iter, &c, &chk, norm_fwd_bytes(&c), norm_ops[op], names[op],
		       shape, cdt, "fwd"));
	if (bwd)
		TRY(norm_bwd(w, &c, names[op], shape, chk.tol));
	rc = 0;
out:
	wl_bufs_free(&b);
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
	const char *ty = wl_dts[c->cdt].torch_type;
	struct slot s[6] = {
		wl_tensor(ty, 2, c->rows, c->vocab, 0, 0),
		wl_tensor("long int", 1, c->rows, 0, 0, 0),
		wl_tensor("", 0, 0, 0, 0, 0),
		wl_scalar("Scalar", "0"),
		wl_scalar("Scalar", "-100"),
		wl_scalar("Scalar", "0.0"),
	};
	char *args = w->traced ? wl_mk_args(s, 6, "kprof", c->cdt, NULL) : NULL;
	struct op op;
	wl_op_begin(w, &op);
	int rc = wl_kcheck(w,
			   kk_xent_fwd(c->loss, c->lse, c->x, c->target, wl_dts[c->cdt].kt, c->rows,
				       c->vocab, XENT_IGNORE),
			   "kprof_xent_fwd");
	wl_op_end(w, &op, "aten::cross_entropy_loss", args);
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
	const char *ty = wl_dts[c->cdt].torch_type;
	struct slot s[7] = {
		wl_tensor(ty, 1, c->rows, 0, 0, 0),
		wl_tensor(ty, 2, c->rows, c->vocab, 0, 0),
		wl_tensor("long int", 1, c->rows, 0, 0, 0),
		wl_tensor("float", 1, c->rows, 0, 0, 0),
		wl_scalar("Scalar", "0"),
		wl_scalar("Scalar", "-100"),
		wl_scalar("Scalar", "0.0"),
	};
	char *args = w->traced ? wl_mk_args(s, 7, "kprof", c->cdt, NULL) : NULL;
	struct op op;
	wl_op_begin(w, &op);
	int rc = wl_kcheck(w,
			   kk_xent_bwd(c->dx, c->dloss, c->x, c->target, c->lse, wl_dts[c->cdt].kt,
				       c->rows, c->vocab, XENT_IGNORE),
			   "kprof_xent_bwd");
	wl_op_end(w, &op, "kprof::cross_entropy_loss_backward", args);
	return rc;
}

/* 64 whole rows against fp64: the loss (forward) and every element of dx (backward). */
static int xent_check(struct kp_wl *w, struct xent_case *c, int bwd, struct kp_check *chk)
{
	int kt = wl_dts[c->cdt].kt, rc = -1;
	size_t es = wl_dts[c->cdt].size, rb = (size_t)c->vocab * es;
	void *hx = NULL, *ho = NULL, *hl = NULL, *hg = NULL;
	int64_t *ht = NULL;
	uint64_t seed = 9;
	double tiny = kt == KT_F16 ? 0x1p-14 : 0.0;
	if (!(ht = wl_host_copy(w, c->target, c->rows * sizeof(int64_t))) ||
	    !(hl = wl_host_copy(w, c->loss, c->rows * es)) ||
	    (bwd && !(hg = wl_host_copy(w, c->dloss, c->rows * es))))
		goto out;
	for (int t = 0; t < 64; t++) {
		size_t row = wl_rng_next(&seed) % (size_t)c->rows;
		free(hx), free(ho);
		ho = NULL;
		if (!(hx = wl_host_copy(w, (char *)c->x + row * rb, rb)) ||
		    (bwd && !(ho = wl_host_copy(w, (char *)c->dx + row * rb, rb))))
			goto out;
		double m = -INFINITY, z = 0;
		for (long j = 0; j < c->vocab; j++)
			m = fmax(m, wl_hval(hx, j, kt));
		for (long j = 0; j < c->vocab; j++)
			z += exp(wl_hval(hx, j, kt) - m);
		double lse = m + log(z);
		long tg = (long)ht[row];
		if (tg < 0 || tg >= c->vocab) {
			chk->max_err = INFINITY; /* the fill kernel writes targets in [0, vocab) */
			continue;
		}
		double xt = wl_hval(hx, tg, kt);
		if (!bwd) {
			wl_note_err(chk, wl_hval(hl, row, kt), lse - xt, fabs(lse) + fabs(xt));
			continue;
		}
		double g = wl_hval(hg, row, kt);
		for (long j = 0; j < c->vocab; j++) {
			double p = exp(wl_hval(hx, j, kt) - lse), oh = j == tg ? 1 : 0;
			wl_note_err(chk, wl_hval(ho, j, kt), (p - oh) * g,
				    (p + oh) * fabs(g) + tiny);
		}
	}
	rc = 0;
out:
	free(hx), free(ho), free(hl), free(hg), free(ht);
	return rc;
}

int wl_run_xent(struct kp_wl *w, int cdt, const struct kp_norm_shape *sh)
{
	struct bufs b = { .n = 0 };
	struct xent_case c = { .cdt = cdt, .rows = sh->rows, .vocab = sh->hidden };
	int rc = -1, bwd = w->o->backward;
	size_t es = wl_dts[cdt].size, n = (size_t)sh->rows * sh->hidden;
	char label[120], shape[48];
	snprintf(label, sizeof(label), "cross_entropy %s rows=%ld vocab=%ld", wl_dts[cdt].name,
		 sh->rows, sh->hidden);
	snprintf(shape, sizeof(shape), "%ldx%ld", sh->rows, sh->hidden);
	if (cdt == CDT_TF32) {
		cmsg_out(w->o, "  -  %s: no tf32 variant (skipped)\n", label);
		return 0;
	}
	if (!(c.x = wl_dalloc(w, &b, n * es)) || !(c.loss = wl_dalloc(w, &b, sh->rows * es)) ||
	    !(c.target = wl_dalloc(w, &b, sh->rows * sizeof(int64_t))) ||
	    !(c.lse = wl_dalloc(w, &b, sh->rows * 4)))
		goto out;
	if (bwd &&
	    (!(c.dx = wl_dalloc(w, &b, n * es)) || !(c.dloss = wl_dalloc(w, &b, sh->rows * es))))
		goto out;
	TRY(wl_fill(w, c.x, cdt, n, 51));
	if (bwd)
		TRY(wl_fill(w, c.dloss, cdt, sh->rows, 52));
	recorder_push(w->t->untraced_ext);
	int e = kk_fill_targets(c.target, sh->rows, sh->hidden, 53);
	recorder_pop();
	TRY(wl_kcheck(w, e, "kprof_fill_targets"));
	w->traced = 0;
	TRY(xent_iter(w, &c));
	TRY(wl_dev_sync(w));
	struct kp_check chk = { .tol = workloads_tolerance(cdt == CDT_FP32 ? CDT_FP16 : cdt) };
	TRY(xent_check(w, &c, 0, &chk));
	/* read logits and int64 targets, write the loss (analyze's cross_entropy_loss model) */
	double bytes = (double)n * es + sh->rows * 8.0 + sh->rows * (double)es;
	TRY(mb_measure(w, label, xent_iter, &c, &chk, bytes, "aten::cross_entropy_loss",
		       "cross_entropy", shape, cdt, "fwd"));
	if (bwd) {
		char bl[130];
		snprintf(bl, sizeof(bl), "cross_entropy bwd %s rows=%ld vocab=%ld",
			 wl_dts[cdt].name, sh->rows, sh->hidden);
		TRY(xent_bwd_iter(w, &c));
		TRY(wl_dev_sync(w));
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
	wl_bufs_free(&b);
	return rc;
}

#endif /* KPROF_HAVE_CUPTI */
