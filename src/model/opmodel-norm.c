/*
 * opmodel-norm.c — the row-wise families (doc/flops-bytes.md §6.2): layer and RMS norms,
 * softmax and log-softmax, cross-entropy and NLL losses, forward and backward; their rows of
 * the model table.
 */
#include "kprof/opmodel-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- norms (§6.2) ------------------------------------------------------------ */

enum norm_kind { N_LAYER, N_LAYER_BWD, N_RMS, N_FUSED_RMS, N_FUSED_RMS_BWD };

static const int k_layer = N_LAYER, k_layer_bwd = N_LAYER_BWD, k_rms = N_RMS;
static const int k_fused_rms = N_FUSED_RMS, k_fused_rms_bwd = N_FUSED_RMS_BWD;

/* Rows of a norm: numel(x) / prod(normalized_shape); -1 when the shape does not fit. */
static int64_t norm_rows(const struct kp_slot *x, const char *t)
{
	int64_t ns[MAXDIM], inner = 1;
	int n = opm_parse_ints(t, ns, MAXDIM), i;

	if (n < 0 || n > x->ndim)
		return -1;
	for (i = 0; i < n; i++) {
		if (ns[i] != x->dims[x->ndim - n + i])
			return -1;
		inner = mul(inner, ns[i]);
	}
	if (inner <= 0)
		return inner == 0 ? 0 : -1;
	return numel(x) < 0 ? numel(x) : numel(x) / inner;
}

/*
 * Rows of a norm op: from normalized_shape (slot 1, or 2 in the backwards).  Traces before
 * Concrete Inputs (2022) leave it empty: the affine weight has that shape, so rows =
 * numel(x) / numel(weight).  -1 when neither gives the rows.
 */
static int64_t norm_op_rows(const struct kp_op_in *in, int kind, const struct kp_slot *x)
{
	int bwd = kind == N_LAYER_BWD || kind == N_FUSED_RMS_BWD;
	const char *shape = text(slot(in, bwd ? 2 : 1));
	int64_t rows = norm_rows(x, shape);

	if (rows < 0 && !*shape) {
		const struct kp_slot *wt = slot(in, kind == N_LAYER_BWD       ? 5
						    : kind == N_FUSED_RMS_BWD ? 4
									      : 2);
		if (is_tensor(wt) && numel(wt) > 0 && numel(x) >= 0 && numel(x) % numel(wt) == 0)
			rows = numel(x) / numel(wt);
	}
	return rows;
}

/*
 * Forward: read x, weight (and bias); write y, and per row layer_norm's mean and rstd or
 * _fused_rms_norm's rstd, in fp32 (fp64 for fp64 x).
 */
static int64_t norm_fwd_bytes(const struct kp_op_in *in, int kind, const struct kp_slot *x,
			      int64_t rows)
{
	enum kp_dtype stat = x->dtype == DT_F64 ? DT_F64 : DT_F32;
	const struct kp_slot *w = slot(in, 2);
	int64_t bytes;

	if (kind == N_LAYER) {
		bytes = add(mul(tbytes(x), 2), add(tbytes(w), tbytes(slot(in, 3))));
		return add(bytes, nbytes(mul(rows, 2), stat));
	}
	bytes = add(mul(tbytes(x), 2), tbytes(w));
	if (kind == N_FUSED_RMS)
		bytes = add(bytes, nbytes(rows, stat));
	return bytes;
}

/*
 * A norm backward's output_mask (slot @i) into @mask (@n booleans); traces without Concrete
 * Inputs (2022) leave it empty: all @n gradients, as autograd asks.  0 when it is not @n
 * booleans.
 */
static int norm_mask(const struct kp_op_in *in, int i, int *mask, int n)
{
	const char *t = text(slot(in, i));

	if (!*t) {
		for (int k = 0; k < n; k++)
			mask[k] = 1;
		return 1;
	}
	return opm_parse_bools(t, mask, n) == n;
}

/* Add to @bytes the gradients @mask asks for, each the size of its input @g[i]. */
static int64_t masked_grads(int64_t bytes, const int *mask, const struct kp_slot *const *g, int n)
{
	for (int i = 0; i < n; i++) {
		if (mask[i])
			bytes = add(bytes, tbytes(g[i]));
	}
	return bytes;
}

/* native_layer_norm_backward: read dy, x, mean, rstd, weight; write dx, dweight, dbias. */
static int layer_norm_bwd_bytes(const struct kp_op_in *in, const struct kp_slot *x,
				struct kp_cost *c)
{
	const struct kp_slot *w = slot(in, 5), *grads[3] = { x, w, slot(in, 6) };
	int mask[3];

	if (!norm_mask(in, 7, mask, 3))
		return fail(c, "native_layer_norm_backward output_mask is not three booleans");
	c->bytes = add(add(tbytes(slot(in, 0)), tbytes(x)), tbytes(slot(in, 3)));
	c->bytes = add(c->bytes, tbytes(slot(in, 4)));
	c->bytes = add(c->bytes, tbytes(w));
	c->bytes = masked_grads(c->bytes, mask, grads, 3);
	return 0;
}

/* _fused_rms_norm_backward: read dy, x, rstd, weight; write dx, dweight. */
static int fused_rms_norm_bwd_bytes(const struct kp_op_in *in, const struct kp_slot *x,
				    struct kp_cost *c)
{
	const struct kp_slot *w = slot(in, 4), *grads[2] = { x, w };
	int mask[2];

	if (!norm_mask(in, 5, mask, 2))
		return fail(c, "_fused_rms_norm_backward output_mask is not two booleans");
	c->bytes = add(add(tbytes(slot(in, 0)), tbytes(x)), add(tbytes(slot(in, 3)), tbytes(w)));
	c->bytes = masked_grads(c->bytes, mask, grads, 2);
	return 0;
}

/*
 * layer_norm(input, normalized_shape, weight, bias, eps, cudnn_enable) and
 * native_layer_norm(input, normalized_shape, weight, bias, eps):
 *   read x, weight, bias; write y and fp32 mean, rstd per row (fp64 for fp64 x).
 * native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd,
 * weight, bias, output_mask): read dy, x, mean, rstd, weight (bias only names the
 * grad_bias shape and is not read); write dx, dweight, dbias as masked.
 * rms_norm(input, normalized_shape, weight, eps): read x, weight; write y.
 * _fused_rms_norm(...): rms_norm plus the fp32 rstd per row.
 * _fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight,
 * output_mask): read dy, x, rstd, weight; write dx, dweight as masked.
 */
static int eval_norm(const struct kp_op_in *in, const struct model *m, struct kp_cost *c)
{
	int kind = *(const int *)m->aux;
	int bwd = kind == N_LAYER_BWD || kind == N_FUSED_RMS_BWD;
	const struct kp_slot *x = slot(in, bwd ? 1 : 0);
	int64_t rows;

	if (!is_tensor(x) || (bwd && !is_tensor(slot(in, 0))))
		return fail(c, "norm input is not a tensor");
	c->dtype = x->dtype;
	rows = norm_op_rows(in, kind, x);
	if (rows < 0)
		return fail(c, "norm 'normalized_shape' does not match the input");
	switch (kind) {
	case N_LAYER_BWD:
		return layer_norm_bwd_bytes(in, x, c);
	case N_FUSED_RMS_BWD:
		return fused_rms_norm_bwd_bytes(in, x, c);
	default:
		c->bytes = norm_fwd_bytes(in, kind, x, rows);
		return 0;
	}
}

/* ---- softmax (§6.2) ------------------------------------------------------------- */

enum sm_kind { SM_DTYPE, SM_HALF_TO_FLOAT, SM_BWD };

static const int k_sm_dtype = SM_DTYPE, k_sm_h2f = SM_HALF_TO_FLOAT, k_sm_bwd = SM_BWD;

/*
 * softmax / _safe_softmax / log_softmax(self, dim, dtype);
 * _softmax / _log_softmax(self, dim, half_to_float): read x, write y (2*numel*s).
 * _softmax_backward_data / _log_softmax_backward_data(grad_output, output, dim,
 * input_dtype): read dy and y, write dx in input_dtype (3*numel*s).
 */
static int eval_softmax(const struct kp_op_in *in, const struct model *m, struct kp_cost *c)
{
	int kind = *(const int *)m->aux;
	const struct kp_slot *x = slot(in, 0), *o;
	enum kp_dtype out_dt;

	if (!is_tensor(x))
		return fail(c, "softmax input is not a tensor");
	c->dtype = x->dtype;
	switch (kind) {
	case SM_BWD:
		if (!is_tensor(slot(in, 1)))
			return fail(c, "softmax backward output is not a tensor");
		c->bytes = add(tbytes(x), tbytes(slot(in, 1)));
		out_dt = opm_scalar_type_or(slot(in, 3), x->dtype);
		o = opm_out_slot(in, 4);
		break;
	case SM_HALF_TO_FLOAT:
		c->bytes = tbytes(x);
		out_dt = opm_parse_bool(text(slot(in, 2))) == 1 ? DT_F32 : x->dtype;
		o = opm_out_slot(in, 3);
		break;
	default:
		c->bytes = tbytes(x);
		out_dt = opm_scalar_type_or(slot(in, 2), x->dtype);
		o = opm_out_slot(in, 3);
		break;
	}
	if (o != NULL)
		out_dt = o->dtype;
	c->bytes = add(c->bytes, nbytes(numel(x), out_dt));
	return 0;
}

/* ---- cross-entropy / NLL loss ------------------------------------------------ */

enum xent_kind { XE_CE, XE_CE_BWD, XE_NLL, XE_NLL_BWD };

static const int k_xe_ce = XE_CE, k_xe_ce_bwd = XE_CE_BWD, k_xe_nll = XE_NLL,
		 k_xe_nll_bwd = XE_NLL_BWD;

/* The loss elements of reduction 'none' for input @x: numel(x) / classes (dim 1; dim 0 if 1-D). */
static int64_t loss_numel(const struct kp_slot *x)
{
	int64_t c = x->ndim == 0 ? 1 : x->dims[x->ndim == 1 ? 0 : 1];

	if (x->ndim <= 1)
		return 1;
	return c > 0 ? numel(x) / c : 0;
}

/*
 * The loss's elements for the reduction slot @r: 'none' (0) gives @n, mean (1) and sum (2)
 * one; an empty slot is torch's default, mean.  -1 on an unreadable value.
 */
static int64_t reduced_loss(const struct kp_slot *r, int64_t n)
{
	int64_t v = 1;

	if (*text(r) && (opm_parse_int(text(r), &v) != 0 || v < 0 || v > 2))
		return -1;
	return v == 0 ? n : 1;
}

/*
 * cross_entropy_loss(self, target, weight, reduction, ignore_index, label_smoothing): read
 *   self, target and weight once; write the loss (self's dtype).  A one-pass kernel that also
 *   keeps the per-row log-sum-exp for a backward writes 4 bytes a row more (not counted: no
 *   such output in the op).
 * kprof::cross_entropy_loss_backward(grad_output, self, target, lse, reduction, ignore_index,
 *   label_smoothing): read grad, self, target, lse; write grad_input (self's shape and dtype).
 * nll_loss / nll_loss_nd / nll_loss_forward(self, target, weight, reduction, ignore_index):
 *   a gather: read target and the one element of self (and weight) it picks per loss
 *   element; write the loss (+ total_weight, one element, for nll_loss_forward).
 * nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index,
 *   total_weight): read grad_output, target, total_weight (+ the picked weights); write the
 *   dense grad_input (numel(self)).
 */
static int eval_xent(const struct kp_op_in *in, const struct model *m, struct kp_cost *c)
{
	int kind = *(const int *)m->aux, bwd = kind == XE_CE_BWD || kind == XE_NLL_BWD;
	const struct kp_slot *x = slot(in, bwd ? 1 : 0), *t = slot(in, bwd ? 2 : 1), *w;
	int64_t n, picked;

	if (!is_tensor(x) || !is_tensor(t) || (bwd && !is_tensor(slot(in, 0))))
		return fail(c, "loss input or target is not a tensor");
	c->dtype = x->dtype;
	n = loss_numel(x);
	/* class-index targets pick one element per loss element */
	picked = numel(t);
	switch (kind) {
	case XE_CE:
		w = slot(in, 2);
		n = reduced_loss(slot(in, 3), n);
		if (n < 0)
			return fail(c, "cross_entropy_loss reduction is not 0, 1 or 2");
		c->bytes = add(add(tbytes(x), tbytes(t)), tbytes(w));
		c->bytes = add(c->bytes, nbytes(n, x->dtype));
		break;
	case XE_CE_BWD:
		c->bytes = add(add(tbytes(slot(in, 0)), tbytes(x)),
			       add(tbytes(t), tbytes(slot(in, 3))));
		c->bytes = add(c->bytes, tbytes(x));
		break;
	case XE_NLL:
		w = slot(in, 2);
		n = reduced_loss(slot(in, 3), n);
		if (n < 0)
			return fail(c, "nll_loss reduction is not 0, 1 or 2");
		c->bytes = add(tbytes(t), nbytes(picked, x->dtype));
		if (is_tensor(w))
			c->bytes = add(c->bytes, nbytes(picked, w->dtype));
		c->bytes = add(c->bytes, nbytes(n, x->dtype));
		if (strcmp(in->name, "aten::nll_loss_forward") == 0)
			c->bytes = add(c->bytes, nbytes(1, x->dtype));
		break;
	default: /* XE_NLL_BWD */
		w = slot(in, 3);
		c->bytes = add(add(tbytes(slot(in, 0)), tbytes(t)), tbytes(slot(in, 6)));
		if (is_tensor(w))
			c->bytes = add(c->bytes, nbytes(picked, w->dtype));
		c->bytes = add(c->bytes, tbytes(x));
		break;
	}
	return 0;
}


#define P(n, fam, fn, aux) { "aten::" n, MODEL_PRIMARY, fam, fn, aux }
#define S(n, fam, fn, aux) { "aten::" n, MODEL_SECONDARY, fam, fn, aux }
/* sorted by name (strcmp order) for bsearch */
static const struct model models[] = {
	S("_fused_rms_norm", "norm", eval_norm, &k_fused_rms),
	S("_fused_rms_norm_backward", "norm", eval_norm, &k_fused_rms_bwd),
	S("_log_softmax", "softmax", eval_softmax, &k_sm_h2f),
	S("_log_softmax_backward_data", "softmax", eval_softmax, &k_sm_bwd),
	S("_safe_softmax", "softmax", eval_softmax, &k_sm_dtype),
	S("_softmax", "softmax", eval_softmax, &k_sm_h2f),
	S("_softmax_backward_data", "softmax", eval_softmax, &k_sm_bwd),
	S("cross_entropy_loss", "loss", eval_xent, &k_xe_ce),
	S("layer_norm", "norm", eval_norm, &k_layer),
	S("log_softmax", "softmax", eval_softmax, &k_sm_dtype),
	S("native_layer_norm", "norm", eval_norm, &k_layer),
	S("native_layer_norm_backward", "norm", eval_norm, &k_layer_bwd),
	S("nll_loss", "loss", eval_xent, &k_xe_nll),
	S("nll_loss_backward", "loss", eval_xent, &k_xe_nll_bwd),
	S("nll_loss_forward", "loss", eval_xent, &k_xe_nll),
	S("nll_loss_nd", "loss", eval_xent, &k_xe_nll),
	S("rms_norm", "norm", eval_norm, &k_rms),
	S("softmax", "softmax", eval_softmax, &k_sm_dtype),
	/* kprof capture's own fused ops (no aten op has their meaning); "kprof::" > "aten::" */
	{ "kprof::cross_entropy_loss_backward", MODEL_SECONDARY, "loss", eval_xent, &k_xe_ce_bwd },
};
#undef P
#undef S

const struct opm_family opm_family_norm = {
	.models = models,
	.n = sizeof(models) / sizeof(models[0]),
};
