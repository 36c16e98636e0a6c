/*
 * wl-conv.c — the conv workload family: conv2d forward and backward, NCHW or NHWC, on the
 * reference backend (im2col + cuBLAS) or cuDNN (wl-cudnn.c), checked against a host fp64
 * reference.
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

double workloads_conv_flops(const struct kp_conv_shape *sh, int backward)
{
	long oh = conv_out_dim(sh->h, sh->r, sh->stride, sh->pad, sh->dil);
	long ow = conv_out_dim(sh->w, sh->s, sh->stride, sh->pad, sh->dil);
	size_t ny = (size_t)sh->n * sh->k * oh * ow;
	/* 2 FLOPs a multiply-add, C/groups R S of them an output; the backward's dX and dW 2 more */
	return 2.0 * (double)ny * (sh->c / sh->groups) * sh->r * sh->s * (backward ? 3 : 1);
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

/* The reference forward: im2col, a GEMM per group into Ytmp, Ytmp's N and K swapped into Y */
static int conv_ref_fwd(struct kp_wl *w, struct conv_case *c)
{
	const struct kp_conv_shape *s = &c->s;
	const struct dt_info *d = &wl_dts[c->cdt];
	long p = c->oh * c->ow, rs = s->r * s->s, cgrs = c->cg * rs;
	int rc = wl_kcheck(w,
			   kk_im2col(c->col, c->x, d->kt, s->n, s->c, s->h, s->w, s->r, s->s, c->oh,
				     c->ow, s->stride, s->pad, s->dil),
			   "kprof_im2col");
	/* per group: Ytmp_g[Kg, N*P] = W_g[Kg, Cg*R*S] col_g[Cg*R*S, N*P] */
	if (rc == 0)
		rc = wl_gemm(w, c->cdt, 0, 0, c->kg, c->np, cgrs, c->wt, cgrs,
			     (long long)c->kg * cgrs, c->col, c->np, (long long)cgrs * c->np, 0.f,
			     c->ytmp, 0, c->np, (long long)c->kg * c->np, s->groups);
	if (rc == 0)
		rc = wl_kcheck(w, kk_swap01(c->y, c->ytmp, d->kt, s->k, s->n, p), "kprof_swap01");
	return rc;
}

/*
 * The reference backward: dY's N and K swapped into dYt, then per group dW = dYt col^T and
 * dcol = W^T dYt, col2im'ed into dX.
 */
static int conv_ref_bwd(struct kp_wl *w, struct conv_case *c)
{
	const struct kp_conv_shape *s = &c->s;
	const struct dt_info *d = &wl_dts[c->cdt];
	long p = c->oh * c->ow, rs = s->r * s->s, cgrs = c->cg * rs;
	int rc = wl_kcheck(w, kk_swap01(c->dyt, c->dy, d->kt, s->n, s->k, p), "kprof_swap01");
	/* grad weight: dW_g[Kg, Cg*R*S] = dYt_g[Kg, N*P] col_g^T */
	if (rc == 0)
		rc = wl_gemm(w, c->cdt, 0, 1, c->kg, cgrs, c->np, c->dyt, c->np,
			     (long long)c->kg * c->np, c->col, c->np, (long long)cgrs * c->np, 0.f,
			     c->dw, 0, cgrs, (long long)c->kg * cgrs, s->groups);
	/* grad input: dcol_g[Cg*R*S, N*P] = W_g^T dYt_g, then col2im */
	if (rc == 0)
		rc = wl_gemm(w, c->cdt, 1, 0, cgrs, c->np, c->kg, c->wt, cgrs,
			     (long long)c->kg * cgrs, c->dyt, c->np, (long long)c->kg * c->np, 0.f,
			     c->dcol, 0, c->np, (long long)cgrs * c->np, s->groups);
	if (rc == 0)
		rc = wl_kcheck(w,
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
	const char *ty = wl_dts[c->cdt].torch_type, *be = c->cv ? "cudnn" : "im2col+cublas";
	const char *algo = c->cv ? c->algo : NULL;
	char groups[24], why[300];
	snprintf(groups, sizeof(groups), "%ld", s->groups);
	/* clang-format off */
	struct slot fs[9] = {
		wl_tensor(ty, 4, s->n, s->c, s->h, s->w), wl_tensor(ty, 4, s->k, c->cg, s->r, s->s),
		wl_scalar("", ""), wl_pair(s->stride), wl_pair(s->pad), wl_pair(s->dil),
		wl_scalar("Scalar", "False"), wl_pair(0), wl_scalar("Scalar", groups),
	};
	/* clang-format on */
	int tr = w->traced, rc;
	char *args = tr ? wl_mk_args(fs, 9, be, c->cdt, algo) : NULL;
	struct op op;
	wl_op_begin(w, &op);
	if (c->cv)
		rc = cudnn_conv_fwd(c->cv, why, sizeof(why)) < 0 ? wl_cudnn_fail(w, why) : 0;
	else
		rc = conv_ref_fwd(w, c);
	wl_op_end(w, &op, "aten::convolution", args);
	if (rc < 0 || !c->backward)
		return rc;

	/* clang-format off */
	struct slot bs[11] = {
		wl_tensor(ty, 4, s->n, s->k, c->oh, c->ow), fs[0], fs[1],
		wl_scalar("ScalarList", "[0]"), fs[3], fs[4], fs[5], fs[6], fs[7], fs[8],
		wl_scalar("ScalarList", "[True, True, False]"),
	};
	/* clang-format on */
	args = tr ? wl_mk_args(bs, 11, be, c->cdt, algo) : NULL;
	wl_op_begin(w, &op);
	if (c->cv)
		rc = cudnn_conv_bwd(c->cv, why, sizeof(why)) < 0 ? wl_cudnn_fail(w, why) : 0;
	else
		rc = conv_ref_bwd(w, c);
	wl_op_end(w, &op, "aten::convolution_backward", args);
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
	int kt = wl_dts[c->cdt].kt, L = c->nhwc;
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
				double v = wl_hval(h->x, at4(L, n, ci, iy, ix, s->c, s->h, s->w),
						   kt) *
					   wl_hval(h->wt, at4(L, k, cl, r, q, c->cg, s->r, s->s),
						   kt);
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
	int kt = wl_dts[c->cdt].kt, L = c->nhwc;
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
				double v = wl_hval(h->dy, at4(L, n, k, oy, ox, s->k, c->oh, c->ow),
						   kt) *
					   wl_hval(h->wt, at4(L, k, cl, r, q, c->cg, s->r, s->s),
						   kt);
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
	int kt = wl_dts[c->cdt].kt, L = c->nhwc;
	long ci = k / c->kg * c->cg + cl;
	double ref = 0, mag = 0;
	for (long n = 0; n < s->n; n++)
		for (long oy = 0; oy < c->oh; oy++)
			for (long ox = 0; ox < c->ow; ox++) {
				long iy = oy * s->stride - s->pad + r * s->dil;
				long ix = ox * s->stride - s->pad + q * s->dil;
				if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w)
					continue;
				double v = wl_hval(h->dy, at4(L, n, k, oy, ox, s->k, c->oh, c->ow),
						   kt) *
					   wl_hval(h->x, at4(L, n, ci, iy, ix, s->c, s->h, s->w),
						   kt);
				ref += v, mag += fabs(v);
			}
	*magp = mag;
	return ref;
}

/* A uniform random element of a [d0, @d1, @d2, @d3] tensor of @n elements as its indices @i */
static void pick4(uint64_t *seed, size_t n, long d1, long d2, long d3, long i[4])
{
	size_t idx = wl_rng_next(seed) % n;
	i[3] = idx % d3;
	i[2] = idx / d3 % d2;
	i[1] = idx / ((size_t)d3 * d2) % d1;
	i[0] = idx / ((size_t)d3 * d2 * d1);
}

/* a reference element of a conv wl_tensor (conv_ref_y, conv_ref_dx, conv_ref_dw) */
typedef double (*conv_ref_fn)(const struct conv_case *c, const struct conv_host *h, long i0,
			      long i1, long i2, long i3, double *magp);

/* @count random elements of @got, a [., d1, d2, d3] tensor of @n elements, against @ref */
static void conv_check_n(const struct conv_case *c, const struct conv_host *h, const void *got,
			 conv_ref_fn ref, int count, size_t n, long d1, long d2, long d3,
			 struct kp_check *chk, uint64_t *seed)
{
	int kt = wl_dts[c->cdt].kt, L = c->nhwc;
	for (int t = 0; t < count; t++) {
		long i[4];
		pick4(seed, n, d1, d2, d3, i);
		double mag, r = ref(c, h, i[0], i[1], i[2], i[3], &mag);
		wl_note_err(chk, wl_hval(got, at4(L, i[0], i[1], i[2], i[3], d1, d2, d3), kt), r,
			    mag);
	}
}

/* indices are logical NCHW / KCRS; at4() maps them to the case's layout */
static int conv_check(struct kp_wl *w, struct conv_case *c, struct kp_check *fwd,
		      struct kp_check *bwd)
{
	const struct kp_conv_shape *s = &c->s;
	size_t es = wl_dts[c->cdt].size;
	size_t nx = (size_t)s->n * s->c * s->h * s->w, nw = (size_t)s->k * c->cg * s->r * s->s;
	size_t ny = (size_t)s->n * s->k * c->oh * c->ow;
	struct conv_host h = { .x = NULL };
	uint64_t seed = 3;
	int rc = -1;
	h.x = wl_host_copy(w, c->x, nx * es);
	h.wt = h.x ? wl_host_copy(w, c->wt, nw * es) : NULL;
	h.y = h.wt ? wl_host_copy(w, c->y, ny * es) : NULL;
	if (!h.y)
		goto out;
	/* 256 random outputs, then 128 input gradients and 32 weight gradients */
	conv_check_n(c, &h, h.y, conv_ref_y, 256, ny, s->k, c->oh, c->ow, fwd, &seed);
	if (c->backward) {
		if (!(h.dy = wl_host_copy(w, c->dy, ny * es)) ||
		    !(h.dx = wl_host_copy(w, c->dx, nx * es)) ||
		    !(h.dw = wl_host_copy(w, c->dw, nw * es)))
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
	size_t es = wl_dts[cdt].size;
	size_t nx = (size_t)sh->n * sh->c * sh->h * sh->w,
	       nw = (size_t)sh->k * c->cg * sh->r * sh->s;
	size_t ny = (size_t)sh->n * sh->k * c->oh * c->ow, ncol = (size_t)c->crs * c->np;
	if (!(c->x = wl_dalloc(w, b, nx * es)) || !(c->wt = wl_dalloc(w, b, nw * es)) ||
	    !(c->y = wl_dalloc(w, b, ny * es)))
		return -1;
	if (!cudnn &&
	    (!(c->ytmp = wl_dalloc(w, b, ny * es)) || !(c->col = wl_dalloc(w, b, ncol * es))))
		return -1;
	if (c->backward &&
	    (!(c->dy = wl_dalloc(w, b, ny * es)) || !(c->dw = wl_dalloc(w, b, nw * es)) ||
	     !(c->dx = wl_dalloc(w, b, nx * es))))
		return -1;
	if (c->backward && !cudnn &&
	    (!(c->dyt = wl_dalloc(w, b, ny * es)) || !(c->dcol = wl_dalloc(w, b, ncol * es))))
		return -1;
	if (wl_fill(w, c->x, cdt, nx, 31) < 0 || wl_fill(w, c->wt, cdt, nw, 32) < 0)
		return -1;
	if (c->backward && wl_fill(w, c->dy, cdt, ny, 33) < 0)
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
	c->cv = cudnn_conv_new(w->cudnn, wl_dts[cdt].kt, cdt == CDT_TF32, c->nhwc, sh->n, sh->c,
			       sh->h, sh->w, sh->k, sh->r, sh->s, sh->stride, sh->pad, sh->dil,
			       sh->groups, c->x, c->wt, c->y, c->backward ? c->dy : NULL, c->dx,
			       c->dw, c->algo, sizeof(c->algo), why, sizeof(why));
	recorder_pop();
	if (!c->cv) {
		return cmsg_error(w->o, w->d, KP_ENV, "%s: cuDNN: %s", label, why);
	}
	cmsg_out(w->o, "     cudnn  %s: %s\n", label, c->algo);
	return 0;
}

/* one conv case's time line and its --results row (the worse of forward and backward errors) */
static void conv_report(struct kp_wl *w, const struct conv_case *c, int cudnn, double ms,
			const struct kp_check *fwd, const struct kp_check *bwd, const char *label)
{
	const struct kp_conv_shape *sh = &c->s;
	double fl = workloads_conv_flops(sh, c->backward);
	char mt[32];
	cmsg_out(w->o, "     time  %s ms/iter  %.1f TFLOP/s (%s)  %s\n",
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
	snprintf(r.dtype, sizeof(r.dtype), "%s", wl_dts[c->cdt].name);
	snprintf(r.backend, sizeof(r.backend), "%s", cudnn ? "cudnn" : "reference");
	snprintf(r.layout, sizeof(r.layout), "%s", c->nhwc ? "nhwc" : "nchw");
	snprintf(r.mode, sizeof(r.mode), "%s", c->backward ? "fwd+bwd" : "fwd");
	wl_keep_result(w, &r, label);
}

/* one untimed call, the accuracy checks, the timed loop and the time line */
static int conv_measure(struct kp_wl *w, struct conv_case *c, int cudnn, const char *label)
{
	w->traced = 0;
	TRY(conv_iter(w, c));
	TRY(wl_dev_sync(w));
	struct kp_check fwd = { .tol = workloads_tolerance(c->cdt) };
	struct kp_check bwd = { .tol = workloads_tolerance(c->cdt) };
	TRY(conv_check(w, c, &fwd, &bwd));
	char l2[200];
	snprintf(l2, sizeof(l2), "%s fwd", label);
	wl_print_check(w, l2, &fwd);
	if (c->backward) {
		snprintf(l2, sizeof(l2), "%s bwd", label);
		wl_print_check(w, l2, &bwd);
	}
	TRY(wl_timed_loop(w, label, conv_iter, c));
	double ms = wl_event_ms(w, conv_iter, c);
	if (ms > 0)
		conv_report(w, c, cudnn, ms, &fwd, &bwd, label);
	return 0;
out:
	return -1;
}

int wl_run_conv(struct kp_wl *w, int cdt, const struct kp_conv_shape *sh, int cudnn, int nhwc)
{
	struct bufs b = { .n = 0 };
	struct conv_case c = { .cdt = cdt, .nhwc = nhwc, .s = *sh, .backward = w->o->backward };
	int rc = -1;
	char label[160];
	conv_dims(&c);
	snprintf(label, sizeof(label),
		 "conv %s %s %s N=%ld C=%ld H=%ld W=%ld K=%ld R=%ld S=%ld s%ld p%ld d%ld g%ld",
		 wl_dts[cdt].name, cudnn ? "cudnn" : "reference", nhwc ? "nhwc" : "nchw", sh->n,
		 sh->c, sh->h, sh->w, sh->k, sh->r, sh->s, sh->stride, sh->pad, sh->dil,
		 sh->groups);
	if (nhwc && !cudnn) {
		cmsg_out(w->o, "  -  %s: the reference backend is NCHW only (skipped)\n", label);
		return 0;
	}
	if (conv_alloc(w, &b, &c, cudnn) < 0)
		goto out;
	if (cudnn && conv_cudnn_plan(w, &c, label) < 0)
		goto out;
	rc = conv_measure(w, &c, cudnn, label);
out:
	cudnn_conv_free(c.cv);
	wl_bufs_free(&b);
	return rc;
}

#endif /* KPROF_HAVE_CUPTI */
