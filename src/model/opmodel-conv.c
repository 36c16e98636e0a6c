/*
 * opmodel-conv.c — the convolution family (doc/flops-bytes.md §3.2, §6.2): convolution and its
 * backend ops (cudnn, miopen, mkldnn, slow_conv2d), convolution_backward and cuDNN's backward
 * parts; their rows of the model table and their functional signature (kprof-diff(1)).
 */
#include "kprof/opmodel-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- convolution (§3.2, §6.2) ------------------------------------------- */

struct conv_schema {
	int x, w, bias;                /* bias -1: the op has none */
	int stride, pad, dil, out_pad; /* -1: the default (1, 0, 1, 0) */
	int groups;                    /* -1: 1 */
	int transposed;                /* slot of the flag, or -1 */
	int fixed_transposed;          /* with transposed == -1: 0 or 1 */
	int out;                       /* first slot an out= tensor can take */
};

/* aten::convolution / _convolution / convolution_overrideable (NF 1718, 1740) */
static const struct conv_schema s_convolution = { 0, 1, 2, 3, 4, 5, 7, 8, 6, 0, 99 };
/* cudnn_convolution: padding BEFORE stride; slot 6 is benchmark, never transposed (§3.7) */
static const struct conv_schema s_cudnn_conv = { 0, 1, -1, 3, 2, 4, -1, 5, -1, 0, 9 };
/* cudnn_convolution_transpose(self, weight, padding, output_padding, stride, dilation, groups) */
static const struct conv_schema s_cudnn_conv_t = { 0, 1, -1, 4, 2, 5, 3, 6, -1, 1, 10 };
/* miopen_convolution(self, weight, bias, padding, stride, dilation, groups, ..), mkldnn_ alike */
static const struct conv_schema s_miopen_conv = { 0, 1, 2, 4, 3, 5, -1, 6, -1, 0, 99 };
/* miopen_convolution_transpose(self, weight, bias, padding, output_padding, stride, ..) */
static const struct conv_schema s_miopen_conv_t = { 0, 1, 2, 5, 3, 6, 4, 7, -1, 1, 99 };
/* _slow_conv2d_forward(self, weight, kernel_size, bias, stride, padding) */
static const struct conv_schema s_slow_conv2d = { 0, 1, 3, 4, 5, -1, -1, -1, -1, 0, 6 };

/*
 * Output size of one spatial dim (never recorded, §3.2):
 *   y = floor((H + 2p - d(k-1) - 1) / s) + 1
 *   transposed: y = (H-1)s - 2p + d(k-1) + output_padding + 1
 * 0 when not positive (or the parameters are out of their domain: h >= 0, k, s, d >= 1,
 * p, op >= 0), OVF when a term leaves int64.  Every step is checked.
 */
static int64_t conv_out_size(int64_t h, int64_t k, int64_t s, int64_t p, int64_t d, int64_t op,
			     int transposed)
{
	int64_t span, p2, t;
	int ovf = 0;

	if (h < 0 || k < 1 || s < 1 || d < 1 || p < 0 || op < 0)
		return 0;
	ovf |= __builtin_mul_overflow(d, k - 1, &span);
	ovf |= __builtin_mul_overflow(p, 2, &p2);
	/* the "+ 1"s are checked steps too: op or span may be INT64_MAX (fuzz-opmodel) */
	if (transposed) {
		ovf |= __builtin_mul_overflow(h - 1, s, &t);
		ovf |= __builtin_sub_overflow(t, p2, &t);
		ovf |= __builtin_add_overflow(t, span, &t);
		ovf |= __builtin_add_overflow(t, op, &t);
		ovf |= __builtin_add_overflow(t, 1, &t);
	} else {
		ovf |= __builtin_add_overflow(h, p2, &t);
		ovf |= __builtin_sub_overflow(t, span, &t);
		ovf |= __builtin_sub_overflow(t, 1, &t);
		if (t < 0)
			t = 0;
		else
			ovf |= __builtin_add_overflow(t / s, 1, &t);
	}
	if (ovf)
		return OVF;
	return t < 1 ? 0 : t;
}

/* One list parameter of a conv: @nsp values, a single value broadcast, or @def when absent. */
static int conv_param(const struct kp_op_in *in, int idx, int nsp, int64_t def, int64_t *v)
{
	int n, i;

	if (idx < 0) {
		for (i = 0; i < nsp; i++)
			v[i] = def;
		return 0;
	}
	if (slot(in, idx) == NULL)
		return -1;
	n = opm_parse_ints(text(slot(in, idx)), v, MAXSP);
	if (n == 1) {
		for (i = 1; i < nsp; i++)
			v[i] = v[0];
		return 0;
	}
	return n == nsp ? 0 : -1;
}

/*
 * Forward conv FLOPs as FC's conv_flop_count: 2 * N * w[0] * w[1] * prod(k) *
 * prod(spatial), with spatial = the output's, or the input's for a transposed
 * conv (its weight is [C_in, C_out/g, k..], so w[0]*w[1] is again the MACs per
 * output-input pixel pair).  Groups are implicit in w[1].
 */
static int64_t conv_flops(const struct kp_slot *x, const struct kp_slot *w, const int64_t *sp)
{
	int64_t f = mul3(2, x->dims[0], mul(w->dims[0], w->dims[1]));
	int i;

	for (i = 2; i < w->ndim; i++)
		f = mul(f, mul(w->dims[i], sp[i - 2]));
	return f;
}

/* bytes: x + w + bias (C_out) + y (@y elements), each in its dtype (TL CONV) */
static void conv_bytes(const struct kp_op_in *in, const struct conv_schema *cs,
		       const struct kp_slot *x, const struct kp_slot *w, int64_t y,
		       struct kp_cost *c)
{
	const struct kp_slot *o = opm_out_slot(in, cs->out);

	c->bytes = add(add(tbytes(x), tbytes(w)), nbytes(y, o ? o->dtype : x->dtype));
	if (is_tensor(slot(in, cs->bias))) {
		/* a bias added by a kernel of its own (cuDNN's aten::add_): read y and bias, write y */
		c->math_bytes = c->bytes;
		c->move_bytes = add(mul(nbytes(y, o ? o->dtype : x->dtype), 2),
				    tbytes(slot(in, cs->bias)));
	}
	c->bytes = add(c->bytes, tbytes(slot(in, cs->bias)));
}

/*
 * Traces written before Concrete Inputs (PyTorch 1.8-2.0) leave stride, padding,
 * dilation, transposed and groups empty (GenericList, bool and int slots without values).
 * The forward's output shape is then the grad_output of its backward (in->linked_out,
 * linked by Sequence number): N, C_out and the output size come from it, groups from the
 * channels, and an unknown 'transposed' from the sizes (a convolution's output is not
 * larger than its input, a transposed one's not smaller; equal sizes count the same).
 */
static int eval_conv_linked(const struct kp_op_in *in, const struct conv_schema *cs,
			    const struct kp_slot *x, const struct kp_slot *w, struct kp_cost *c,
			    const char *why)
{
	const struct kp_slot *lo = in->linked_out;
	int nsp = x->ndim - 2, i, le = 1, ge = 1, transposed;
	int64_t groups, c_out;

	if (!is_tensor(lo) || lo->ndim != x->ndim || lo->dims[0] != x->dims[0] || w->dims[1] < 1)
		return fail(c, why);
	for (i = 0; i < nsp; i++) {
		if (lo->dims[2 + i] < 1 || w->dims[2 + i] < 1)
			return fail(c, "convolution output size is not positive");
		le &= lo->dims[2 + i] <= x->dims[2 + i];
		ge &= lo->dims[2 + i] >= x->dims[2 + i];
	}
	transposed = cs->transposed >= 0 ? opm_parse_bool(text(slot(in, cs->transposed)))
					 : cs->fixed_transposed;
	if (transposed < 0)
		transposed = le ? 0 : ge ? 1 : -1;
	if (transposed < 0)
		return fail(c, why);
	c_out = lo->dims[1];
	/* weight [C_out, C_in/g, k..]; transposed [C_in, C_out/g, k..] */
	if (transposed ? x->dims[1] != w->dims[0] || c_out % w->dims[1] != 0
		       : c_out != w->dims[0] || x->dims[1] % w->dims[1] != 0)
		return fail(c, "convolution channels do not match the weight and its backward's "
			       "grad_output");
	groups = transposed ? c_out / w->dims[1] : x->dims[1] / w->dims[1];
	if (groups < 1 || w->dims[0] % groups != 0)
		return fail(c, "convolution channels do not match the weight and groups");
	c->dtype = x->dtype;
	c->flops = conv_flops(x, w, transposed ? x->dims + 2 : lo->dims + 2);
	conv_bytes(in, cs, x, w, numel(lo), c);
	return 0;
}

static int eval_conv(const struct kp_op_in *in, const struct model *m, struct kp_cost *c)
{
	const struct conv_schema *cs = m->aux;
	const struct kp_slot *x = slot(in, cs->x), *w = slot(in, cs->w);
	int64_t stride[MAXSP], pad[MAXSP], dil[MAXSP], opad[MAXSP], groups = 1, out[MAXSP];
	int64_t c_out, y;
	int nsp, i, transposed = cs->fixed_transposed;

	if (!is_tensor(x) || !is_tensor(w))
		return fail(c, "convolution input or weight is not a tensor");
	if (x->ndim < 3 || x->ndim > 2 + MAXSP || w->ndim != x->ndim)
		return fail(c, "convolution input and weight are not 3-D to 5-D of equal rank");
	nsp = x->ndim - 2;
	if (cs->transposed >= 0 && (transposed = opm_parse_bool(text(slot(in, cs->transposed)))) < 0)
		return eval_conv_linked(in, cs, x, w, c,
					"convolution 'transposed' is not True or False");
	if (cs->groups >= 0 &&
	    (opm_parse_int(text(slot(in, cs->groups)), &groups) != 0 || groups < 1))
		return eval_conv_linked(in, cs, x, w, c,
					"convolution 'groups' is not a positive integer");
	if (conv_param(in, cs->stride, nsp, 1, stride) || conv_param(in, cs->pad, nsp, 0, pad) ||
	    conv_param(in, cs->dil, nsp, 1, dil) || conv_param(in, cs->out_pad, nsp, 0, opad))
		return eval_conv_linked(
			in, cs, x, w, c,
			"convolution stride, padding, dilation or output_padding unreadable");

	/* weight [C_out, C_in/g, k..]; transposed [C_in, C_out/g, k..] */
	if (transposed) {
		if (x->dims[1] != w->dims[0] || w->dims[0] % groups != 0)
			return fail(c, "transposed convolution channels do not match the weight");
		c_out = mul(w->dims[1], groups);
	} else {
		if (x->dims[1] != mul(w->dims[1], groups) || w->dims[0] % groups != 0)
			return fail(c, "convolution channels do not match the weight and groups");
		c_out = w->dims[0];
	}

	for (i = 0; i < nsp; i++) {
		if (stride[i] < 1 || dil[i] < 1 || pad[i] < 0 || opad[i] < 0 || w->dims[2 + i] < 1)
			return fail(c, "convolution stride, dilation or kernel below 1, "
				       "or negative padding");
		out[i] = conv_out_size(x->dims[2 + i], w->dims[2 + i], stride[i], pad[i], dil[i],
				       opad[i], transposed);
		if (out[i] == OVF)
			return fail(c, "shape product overflows int64");
		if (out[i] < 1)
			return fail(c, "convolution output size is not positive");
	}

	c->dtype = x->dtype;
	c->flops = conv_flops(x, w, transposed ? x->dims + 2 : out);

	y = mul(x->dims[0], c_out);
	for (i = 0; i < nsp; i++)
		y = mul(y, out[i]);
	conv_bytes(in, cs, x, w, y, c);
	return 0;
}

/*
 * aten::convolution_backward(grad_output, input, weight, bias_sizes, stride,
 * padding, dilation, transposed, output_padding, groups, output_mask).
 * grad-input and grad-weight each cost the forward FLOPs; the bias gradient is
 * a reduction, 0 FLOPs.  FC's grad-weight term is groups x this for grouped convs
 * (it passes t(grad_out) as a dense weight); kprof keeps the true MAC count.
 * The forward output size is grad_output's, so stride and padding are not needed.
 */
/*
 * convolution_backward's 'transposed' when the trace has no value for it (emit_nvtx records
 * no scalars, and no cuDNN call inside the op said it: capture/intercept/hostops.c conv_fill): the form
 * the channels allow (plain: dy[1] = w[0] and w[1] divides x[1]; transposed: x[1] = w[0] and
 * w[1] divides dy[1]); when both do (C_in = C_out = w[0]), the sizes decide as in
 * eval_conv_linked: a plain conv's output is not larger than its input, a transposed one's not
 * smaller, and equal sizes give the same FLOPs either way.  Wrong only for a conv with
 * C_in = C_out padded beyond its kernel (output larger than input).  -1 when neither fits.
 */
static int conv_bwd_transposed(const struct kp_slot *dy, const struct kp_slot *x,
			       const struct kp_slot *w)
{
	int plain, tr, le = 1, ge = 1, i;

	if (w->dims[1] < 1)
		return -1;
	plain = dy->dims[1] == w->dims[0] && x->dims[1] % w->dims[1] == 0;
	tr = x->dims[1] == w->dims[0] && dy->dims[1] % w->dims[1] == 0;
	if (plain != tr)
		return tr;
	if (!plain)
		return -1;
	for (i = 2; i < x->ndim; i++) {
		le &= dy->dims[i] <= x->dims[i];
		ge &= dy->dims[i] >= x->dims[i];
	}
	return le ? 0 : ge ? 1 : -1;
}

static int eval_conv_bwd(const struct kp_op_in *in, const struct model *m, struct kp_cost *c)
{
	const struct kp_slot *dy = slot(in, 0), *x = slot(in, 1), *w = slot(in, 2);
	int64_t groups, c_out, fwd;
	int mask[3], transposed, i;

	(void)m;
	if (!is_tensor(dy) || !is_tensor(x) || !is_tensor(w))
		return fail(c, "convolution_backward grad_output, input or weight is not a tensor");
	if (x->ndim < 3 || x->ndim > 2 + MAXSP || w->ndim != x->ndim || dy->ndim != x->ndim)
		return fail(c, "convolution_backward tensors are not 3-D to 5-D of equal rank");
	/* a slot without a value (emit_nvtx): from the shapes, conv_bwd_transposed */
	if (*opm_skip_ws(text(slot(in, 7))) == '\0') {
		if ((transposed = conv_bwd_transposed(dy, x, w)) < 0)
			return fail(c, "convolution 'transposed' not recorded, and the channels and "
				       "sizes of grad_output, input and weight fit neither form");
	} else if ((transposed = opm_parse_bool(text(slot(in, 7)))) < 0) {
		return fail(c, "convolution 'transposed' is not True or False");
	}
	/* groups not recorded: the channels per group are w[1] */
	if (*opm_skip_ws(text(slot(in, 9))) == '\0' && w->dims[1] >= 1)
		groups = (transposed ? dy->dims[1] : x->dims[1]) / w->dims[1];
	else if (opm_parse_int(text(slot(in, 9)), &groups) != 0)
		groups = 0;
	if (groups < 1)
		return fail(c, "convolution 'groups' is not a positive integer");
	if (*opm_skip_ws(text(slot(in, 10))) == '\0') {
		mask[0] = mask[1] = 1, mask[2] = 0;
		c->assumed = "output_mask not recorded: FLOPs assume both the input's and the "
			     "weight's gradient (a first layer computes only the weight's: half)";
	} else if (opm_parse_bools(text(slot(in, 10)), mask, 3) != 3) {
		return fail(c, "convolution_backward output_mask is not three booleans");
	}
	c_out = transposed ? mul(w->dims[1], groups) : w->dims[0];
	if (dy->dims[0] != x->dims[0] || dy->dims[1] != c_out)
		return fail(c, "convolution_backward grad_output does not match the weight");
	if (transposed ? x->dims[1] != w->dims[0] : x->dims[1] != mul(w->dims[1], groups))
		return fail(c, "convolution channels do not match the weight and groups");
	for (i = 2; i < x->ndim; i++) {
		if (dy->dims[i] < 1)
			return fail(c, "convolution output size is not positive");
	}

	c->dtype = x->dtype;
	fwd = conv_flops(x, w, transposed ? x->dims + 2 : dy->dims + 2);
	/* FLOPs: (mask[0] + mask[1]) x forward; 2x forward for a full backward */
	c->flops = mul(fwd, mask[0] + mask[1]);

	/*
	 * bytes, one term per gradient kernel (TL bytes_bwd_func), each in its dtype:
	 *   grad-input  dy + w + dx(= numel x);  grad-weight  dy + x + dw(= numel w);
	 *   grad-bias   dy + C_out.
	 */
	c->bytes = 0;
	if (mask[0])
		c->bytes = add(c->bytes, add(add(tbytes(dy), tbytes(w)), tbytes(x)));
	if (mask[1])
		c->bytes = add(c->bytes, add(add(tbytes(dy), tbytes(x)), tbytes(w)));
	if (mask[2]) {
		/* the bias gradient is a reduction kernel of its own */
		c->math_bytes = c->bytes;
		c->move_bytes = add(tbytes(dy), nbytes(c_out, dy->dtype));
		c->bytes = add(c->bytes, c->move_bytes);
	}
	return 0;
}

/*
 * PyTorch 1.8-1.10 (2021): aten::cudnn_convolution_backward(self, grad_output, weight, ...)
 * calls two recorded ops that launch the kernels:
 *   cudnn_convolution_backward_input(self_size, grad_output, weight, padding, stride,
 *     dilation, groups, benchmark, deterministic, allow_tf32)
 *   cudnn_convolution_backward_weight(weight_size, grad_output, self, padding, ...)
 * Each costs the forward's FLOPs, 2 * N * w[0] * w[1] * prod(k) * prod(grad_output
 * spatial); the *_size lists carry no dims, so dx and w come from the parent
 * (in->linked_x, linked_w) or, when recorded, from the list's Concrete Inputs text.
 */
static const int k_bwd_input = 0, k_bwd_weight = 1;

static int64_t size_list_numel(const char *t, int nd)
{
	int64_t v[MAXDIM], n = 1;
	int k = opm_parse_ints(t, v, MAXDIM), i;

	if (k != nd)
		return -1;
	for (i = 0; i < k; i++)
		n = v[i] < 0 ? -1 : mul(n, v[i]);
	return n;
}

static int eval_conv_bwd_part(const struct kp_op_in *in, const struct model *m, struct kp_cost *c)
{
	int weight = *(const int *)m->aux == k_bwd_weight, i;
	const struct kp_slot *dy = slot(in, 1), *other = slot(in, 2), *w, *x;
	struct kp_slot ws;
	int64_t wn, xn, wd[MAXSP + 2];

	if (!is_tensor(dy) || !is_tensor(other) || dy->ndim < 3 || dy->ndim > 2 + MAXSP ||
	    other->ndim != dy->ndim)
		return fail(c,
			    "convolution backward grad_output and input or weight are not 3-D to "
			    "5-D tensors of equal rank");
	w = weight ? in->linked_w : other;
	x = weight ? other : in->linked_x;
	if (weight && !is_tensor(w)) {
		/* weight_size as text, or no weight shape at all */
		if (opm_parse_ints(text(slot(in, 0)), wd, MAXSP + 2) != dy->ndim)
			return fail(c,
				    "cudnn_convolution_backward_weight: weight shape not recorded "
				    "(no aten::cudnn_convolution_backward parent)");
		ws = (struct kp_slot){
			.ndim = dy->ndim, .dims = wd, .dtype = dy->dtype, .concrete = ""
		};
		w = &ws;
	}
	if (!is_tensor(w) || w->ndim != dy->ndim || dy->dims[1] != w->dims[0])
		return fail(c, "convolution backward grad_output does not match the weight");
	for (i = 0; i < w->ndim; i++) {
		if (w->dims[i] < 1)
			return fail(c, "convolution weight dimension below 1");
	}
	c->dtype = dy->dtype;
	c->flops = conv_flops(dy, w, dy->dims + 2);
	/* bytes: grad-input dy + w + dx; grad-weight dy + x + dw, each the forward's dtype */
	wn = numel(w);
	xn = is_tensor(x) && x->ndim == dy->ndim ? numel(x)
						 : size_list_numel(text(slot(in, 0)), dy->ndim);
	if (weight)
		c->bytes = add(add(tbytes(dy), tbytes(x)), nbytes(wn, dy->dtype));
	else if (xn >= 0)
		c->bytes = add(add(tbytes(dy), tbytes(w)), nbytes(xn, dy->dtype));
	else
		c->note = "cudnn_convolution_backward_input: input size not recorded: bytes unknown";
	return 0;
}

static int sig_conv(const struct kp_op_in *in, const struct conv_schema *cs, char *buf, size_t cap)
{
	const struct kp_slot *x = slot(in, cs->x), *w = slot(in, cs->w);
	int64_t stride[MAXSP], pad[MAXSP], dil[MAXSP], opad[MAXSP], groups = 1;
	int transposed = cs->fixed_transposed, nsp;

	if (!is_tensor(x) || !is_tensor(w) || x->ndim < 3 || x->ndim > 2 + MAXSP ||
	    w->ndim != x->ndim)
		return -1;
	nsp = x->ndim - 2;
	if (cs->transposed >= 0 && (transposed = opm_parse_bool(text(slot(in, cs->transposed)))) < 0)
		return -1;
	if (cs->groups >= 0 &&
	    (opm_parse_int(text(slot(in, cs->groups)), &groups) != 0 || groups < 1))
		return -1;
	if (conv_param(in, cs->stride, nsp, 1, stride) || conv_param(in, cs->pad, nsp, 0, pad) ||
	    conv_param(in, cs->dil, nsp, 1, dil) || conv_param(in, cs->out_pad, nsp, 0, opad))
		return -1;
	size_t n = (size_t)snprintf(buf, cap, "conv%s x=[", transposed ? "_transpose" : "");
	for (int i = 0; i < x->ndim && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "",
				      (long long)x->dims[i]);
	if (n < cap)
		n += (size_t)snprintf(buf + n, cap - n, "] w=[");
	for (int i = 0; i < w->ndim && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "",
				      (long long)w->dims[i]);
	const int64_t *lists[4] = { stride, pad, dil, opad };
	static const char *const ln[4] = { "stride", "pad", "dil", "out_pad" };
	for (int l = 0; l < 4 && n < cap; l++) {
		n += (size_t)snprintf(buf + n, cap - n, "%s %s=", l ? "" : "]", ln[l]);
		for (int i = 0; i < nsp && n < cap; i++)
			n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "",
					      (long long)lists[l][i]);
	}
	/* the bias is part of the function when the op takes one (a tensor in its slot) */
	if (n < cap)
		n += (size_t)snprintf(buf + n, cap - n, " groups=%lld%s %s", (long long)groups,
				      is_tensor(slot(in, cs->bias)) ? " bias" : "",
				      dtype_name(x->dtype));
	return n < cap ? 0 : -1;
}

/* The signature of a forward convolution row; -1 for the backward ones */
static int conv_signature(const struct kp_op_in *in, const struct model *m, char *buf, size_t cap)
{
	if (m->eval != eval_conv)
		return -1;
	return sig_conv(in, m->aux, buf, cap);
}

#define P(n, fam, fn, aux) { "aten::" n, MODEL_PRIMARY, fam, fn, aux }
#define S(n, fam, fn, aux) { "aten::" n, MODEL_SECONDARY, fam, fn, aux }
/* sorted by name (strcmp order) for bsearch */
static const struct model models[] = {
	P("_convolution", "conv", eval_conv, &s_convolution),
	P("_slow_conv2d_forward", "conv", eval_conv, &s_slow_conv2d),
	P("convolution", "conv", eval_conv, &s_convolution),
	P("convolution_backward", "conv", eval_conv_bwd, NULL),
	P("convolution_overrideable", "conv", eval_conv, &s_convolution),
	P("cudnn_convolution", "conv", eval_conv, &s_cudnn_conv),
	P("cudnn_convolution_backward_input", "conv", eval_conv_bwd_part, &k_bwd_input),
	P("cudnn_convolution_backward_weight", "conv", eval_conv_bwd_part, &k_bwd_weight),
	P("cudnn_convolution_transpose", "conv", eval_conv, &s_cudnn_conv_t),
	P("miopen_convolution", "conv", eval_conv, &s_miopen_conv),
	P("miopen_convolution_transpose", "conv", eval_conv, &s_miopen_conv_t),
	P("mkldnn_convolution", "conv", eval_conv, &s_miopen_conv),
};
#undef P
#undef S

const struct opm_family opm_family_conv = {
	.models = models,
	.n = sizeof(models) / sizeof(models[0]),
	.signature = conv_signature,
};
