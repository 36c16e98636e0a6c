/*
 * opmodel-pointwise.c — the elementwise families (doc/flops-bytes.md §6.2): pointwise ops
 * (broadcast, promotion, in-place, dropout), copies (copy_, clone, to, cat, stack) and
 * reductions (sum, mean, amax, argmax, var, vector norms...); their rows of the model table.
 */
#include "kprof/opmodel-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- pointwise (§6.2) --------------------------------------------------------- */

enum pw_kind {
	PW_PROMOTE, /* out: broadcast shape, promoted dtype */
	PW_BOOL,    /* comparisons: broadcast shape, bool */
	PW_SELF,    /* masked_fill: self's shape and dtype */
	PW_WHERE,   /* where(cond, self, other): broadcast of all, dtype of self/other */
	PW_DIV,     /* true division: integer inputs give fp32 */
	PW_WRITE,   /* fill_, zero_: write self only */
	PW_DROPOUT, /* dropout(input, p, train): y and a bool mask when training */
};

struct pw_schema {
	int nin; /* operand positions: slots [0, nin) (tensors among them are read) */
	enum pw_kind kind;
};

static const struct pw_schema s_unary = { 1, PW_PROMOTE };
static const struct pw_schema s_binary = { 2, PW_PROMOTE };
static const struct pw_schema s_ternary = { 3, PW_PROMOTE };
static const struct pw_schema s_compare = { 2, PW_BOOL };
static const struct pw_schema s_div = { 2, PW_DIV };
static const struct pw_schema s_masked_fill = { 3, PW_SELF };
static const struct pw_schema s_where = { 3, PW_WHERE };
static const struct pw_schema s_write = { 2, PW_WRITE };
static const struct pw_schema s_dropout = { 1, PW_DROPOUT };

/* numpy broadcasting of @s's shape into @shape (@nd dims, right-aligned); -1 if it cannot. */
static int broadcast(int64_t *shape, int *nd, const struct kp_slot *s)
{
	int i, j;

	if (s->ndim > MAXDIM)
		return -1;
	for (i = s->ndim - 1, j = MAXDIM - 1; i >= 0; i--, j--) {
		int64_t a = shape[j], b = s->dims[i];

		if (MAXDIM - j > *nd)
			shape[j] = b;
		else if (a == 1)
			shape[j] = b;
		else if (b != 1 && a != b)
			return -1;
	}
	if (s->ndim > *nd)
		*nd = s->ndim;
	return 0;
}

/* The last char of the op name is '_': an in-place variant writing self. */
static int in_place(const char *name)
{
	size_t n = strlen(name);

	return n > 1 && name[n - 1] == '_' && name[n - 2] != '_';
}

/*
 * self is a tensor except in pow.Scalar (Scalar self, tensor exponent); ops that write self
 * need it.  Sets c->dtype from self (else the exponent); -1 (with the reason in @c) when the
 * operands do not fit the op.
 */
static int pw_self(const struct kp_op_in *in, const struct pw_schema *ps,
		   const struct kp_slot *const *ops, int n, struct kp_cost *c)
{
	const struct kp_slot *self = slot(in, 0);

	if (!is_tensor(self) && !(n > 1 && is_tensor(ops[1])))
		return fail(c, "pointwise op has no tensor operand");
	if (!is_tensor(self) && (ps->kind == PW_SELF || ps->kind == PW_WRITE ||
				 ps->kind == PW_DROPOUT || in_place(in->name)))
		return fail(c, "pointwise op writes a self that is not a tensor");
	c->dtype = is_tensor(self) ? self->dtype : ops[1]->dtype;
	return 0;
}

/*
 * fill_ / zero_ write numel(self) only; fill_.Tensor also reads its 0-dim value.  dropout in
 * training reads x, writes y (x's dtype) and the bool keep-mask; train=False returns x itself:
 * no traffic.
 */
static int64_t pw_self_only_bytes(const struct kp_op_in *in, const struct pw_schema *ps,
				  const struct kp_slot *const *ops, int n)
{
	const struct kp_slot *self = slot(in, 0);

	if (ps->kind == PW_WRITE)
		return add(tbytes(self), n > 1 ? tbytes(ops[1]) : 0);
	if (opm_parse_bool(text(slot(in, 2))) != 0)
		return add(mul(tbytes(self), 2), nbytes(numel(self), DT_BOOL));
	return 0;
}

/* numel of the broadcast of the tensor operands' shapes into *n_out; -1 if they do not. */
static int pw_broadcast_numel(const struct kp_slot *const *ops, int n, int64_t *n_out)
{
	int64_t shape[MAXDIM];
	int nd = 0, i;

	for (i = 0; i < MAXDIM; i++)
		shape[i] = 1;
	for (i = 0; i < n; i++) {
		if (is_tensor(ops[i]) && broadcast(shape, &nd, ops[i]) != 0)
			return -1;
	}
	*n_out = 1;
	for (i = MAXDIM - nd; i < MAXDIM; i++)
		*n_out = mul(*n_out, shape[i]);
	return 0;
}

/* The output dtype of an op writing the broadcast shape (not self). */
static enum kp_dtype pw_out_dtype(const struct kp_op_in *in, const struct pw_schema *ps,
				  const struct kp_slot *const *ops, int n)
{
	enum kp_dtype dt;

	switch (ps->kind) {
	case PW_BOOL:
		return DT_BOOL;
	case PW_WHERE:
		return opm_result_type(ops + 1, n - 1);
	default:
		dt = opm_result_type(ops, n);
		if (ps->kind == PW_DIV && opm_category(dt) < 2 && dt != DT_UNKNOWN &&
		    text(slot(in, 2))[0] == '\0')
			dt = DT_F32; /* div without rounding_mode is true division */
		return dt;
	}
}

/*
 * Pointwise bytes (§6.2, TL Unary/BinaryElementwise):
 *   sum of numel_i * s_i over the tensor operands + n_out * s_out,
 * n_out = numel(broadcast of the operand shapes), s_out of the promoted dtype;
 * in place (and masked_fill): n_out = numel(self) in self's dtype (written though it aliases).
 */
static int eval_pointwise(const struct kp_op_in *in, const struct model *m, struct kp_cost *c)
{
	const struct pw_schema *ps = m->aux;
	const struct kp_slot *self = slot(in, 0), *ops[3], *o;
	int64_t n_out;
	int i, n = ps->nin < in->nslots ? ps->nin : in->nslots;
	enum kp_dtype out_dt;

	for (i = 0; i < n; i++)
		ops[i] = slot(in, i);
	if (pw_self(in, ps, ops, n, c) < 0)
		return -1;
	if (ps->kind == PW_WRITE || ps->kind == PW_DROPOUT) {
		c->bytes = pw_self_only_bytes(in, ps, ops, n);
		return 0;
	}
	c->bytes = 0; /* every tensor operand read once */
	for (i = 0; i < n; i++)
		c->bytes = add(c->bytes, tbytes(ops[i]));
	if (in_place(in->name) || ps->kind == PW_SELF) {
		n_out = numel(self);
		out_dt = self->dtype;
	} else {
		if (pw_broadcast_numel(ops, n, &n_out) < 0)
			return fail(c, "pointwise operand shapes do not broadcast");
		out_dt = pw_out_dtype(in, ps, ops, n);
	}
	o = opm_out_slot(in, ps->nin);
	if (o != NULL)
		out_dt = o->dtype;
	c->bytes = add(c->bytes, nbytes(n_out, out_dt));
	return 0;
}

/* ---- copies (§6.2) --------------------------------------------------------- */

enum copy_kind { CP_COPY_, CP_SAME, CP_TO_COPY, CP_TO, CP_CAT };

static const int k_copy_ = CP_COPY_, k_same = CP_SAME, k_to_copy = CP_TO_COPY, k_to = CP_TO;
static const int k_cat = CP_CAT;

/*
 * Output dtype of aten::to by overload (all slot counts without out=):
 *   to.dtype_layout(self, dtype, layout, device, pin_memory, non_blocking, copy, mf) 8
 *   to.device(self, device, dtype, non_blocking, copy, mf)                          6
 *   to.dtype(self, dtype, non_blocking, copy, mf) / to.other(self, other, ..)       5
 * A dtype slot of None ("") keeps self's dtype.
 */
static enum kp_dtype to_dtype(const struct kp_op_in *in, const struct kp_slot *self)
{
	const struct kp_slot *s1 = slot(in, 1);

	if (is_tensor(s1))
		return s1->dtype;
	switch (in->nslots) {
	case 8:
	case 5:
		return opm_scalar_type_or(s1, self->dtype);
	case 6:
		return opm_scalar_type_or(slot(in, 2), self->dtype);
	default:
		return self->dtype;
	}
}

/*
 * cat / stack: the inputs are one TensorList slot (as Kineto records them) or,
 * failing that, the leading tensor slots.  Output numel = the sum of the
 * inputs'; bytes = sum(numel_i * s_i) + numel_out * s_out.
 */
static int eval_cat(const struct kp_op_in *in, struct kp_cost *c)
{
	const struct kp_slot *s0 = slot(in, 0), *elems, *o;
	int n, i, first_out;
	int64_t total = 0, rd = 0;
	enum kp_dtype dt = DT_NONE;

	if (s0 != NULL && s0->nlist > 0) {
		if (s0->list == NULL)
			return fail(c, "cat TensorList has no elements");
		elems = s0->list;
		n = s0->nlist;
		first_out = 1;
	} else {
		elems = in->slots;
		for (n = 0; n < in->nslots && is_tensor(&in->slots[n]); n++)
			;
		first_out = n + 1;
		if (n == 0)
			return fail(c, "cat has no tensor inputs");
	}
	for (i = 0; i < n; i++) {
		if (elems[i].ndim < 0 || (elems[i].ndim > 0 && elems[i].dims == NULL))
			return fail(c, "cat TensorList element has no dims");
		for (int j = 0; j < elems[i].ndim; j++) {
			if (elems[i].dims[j] == KP_DIM_BAD)
				return fail(c, "dimension out of range in the op's Input Dims");
			if (elems[i].dims[j] < 0)
				return fail(c, "negative dimension in the op's Input Dims");
		}
		total = add(total, numel(&elems[i]));
		rd = add(rd, nbytes(numel(&elems[i]), elems[i].dtype));
		dt = opm_promote(dt, elems[i].dtype);
	}
	o = opm_out_slot(in, first_out);
	if (o != NULL)
		dt = o->dtype;
	c->dtype = dt == DT_NONE ? DT_UNKNOWN : dt;
	c->bytes = add(rd, nbytes(total, c->dtype));
	if (c->bytes == UNK)
		c->note = "TensorList element dtype not recorded: bytes unknown";
	return 0;
}

static int eval_copy(const struct kp_op_in *in, const struct model *m, struct kp_cost *c)
{
	const struct kp_slot *self = slot(in, 0), *src = slot(in, 1), *o;
	int kind = *(const int *)m->aux;
	enum kp_dtype out_dt;

	if (kind == CP_CAT)
		return eval_cat(in, c);
	if (!is_tensor(self))
		return fail(c, "copy source is not a tensor");
	c->dtype = self->dtype;
	switch (kind) {
	case CP_COPY_:
		/* copy_(self, src): read src (broadcast into self), write self */
		if (!is_tensor(src))
			return fail(c, "copy_ source is not a tensor");
		c->dtype = src->dtype;
		c->bytes = add(tbytes(src), tbytes(self));
		return 0;
	case CP_TO_COPY:
		/* _to_copy(self, dtype, layout, device, pin_memory, non_blocking, memory_format) */
		out_dt = opm_scalar_type_or(src, self->dtype);
		break;
	case CP_TO:
		out_dt = to_dtype(in, self);
		break;
	default:
		out_dt = self->dtype;
		break;
	}
	/* read numel(self) in its dtype, write as many in the output dtype */
	o = opm_out_slot(in, kind == CP_TO ? 2 : 1);
	if (o != NULL && kind != CP_TO)
		out_dt = o->dtype;
	c->bytes = add(tbytes(self), nbytes(numel(self), out_dt));
	return 0;
}

/* ---- reductions (§6.2) ---------------------------------------------------- */

enum red_out { RO_SAME, RO_SUM, RO_INDEX, RO_BOOL, RO_VALUES_INDICES, RO_TWO };

struct red_schema {
	int dim;        /* slot of dim (int, int[] or None) */
	int dtype;      /* slot of the dtype argument, -1 */
	int full_max;   /* at most this many slots (without out=): the full-reduction overload */
	int full_dtype; /* its dtype slot, -1 */
	enum red_out out;
};

/* sum(self, dtype) / sum.dim_IntList(self, dim, keepdim, dtype); mean, nansum, prod alike */
static const struct red_schema s_sum = { 1, 3, 2, 1, RO_SUM };
static const struct red_schema s_mean = { 1, 3, 2, 1, RO_SAME };
static const struct red_schema s_amax = { 1, -1, 1, -1, RO_SAME };
static const struct red_schema s_argmax = { 1, -1, 1, -1, RO_INDEX };
static const struct red_schema s_any = { 1, -1, 1, -1, RO_BOOL };
static const struct red_schema s_max = { 1, -1, 1, -1, RO_VALUES_INDICES };
/* var(self, unbiased) / var.dim / var.correction(self, dim, correction, keepdim) */
static const struct red_schema s_var = { 1, -1, 2, -1, RO_SAME };
static const struct red_schema s_var_mean = { 1, -1, 2, -1, RO_TWO };
/* linalg_vector_norm(self, ord, dim, keepdim, dtype) */
static const struct red_schema s_vnorm = { 2, 4, 0, -1, RO_SAME };

/*
 * Elements left after reducing @x over the dims in @t: "" (None) or "[]" reduce
 * all dims (sum.dim_IntList and amax take [] as all); negative dims wrap.
 * keepdim changes the shape, not the count.  -1 when a dim is out of range.
 */
static int64_t reduced_numel(const struct kp_slot *x, const char *t)
{
	int64_t dims[MAXDIM], n = 1;
	char red[MAXDIM] = { 0 };
	int nd, i;

	if (*opm_skip_ws(t) == '\0' || strcmp(opm_skip_ws(t), "None") == 0)
		return 1;
	nd = opm_parse_ints(t, dims, MAXDIM);
	if (nd < 0)
		return -1;
	if (nd == 0 || x->ndim == 0)
		return 1;
	for (i = 0; i < nd; i++) {
		int64_t d = dims[i] < 0 ? dims[i] + x->ndim : dims[i];

		if (d < 0 || d >= x->ndim)
			return -1;
		red[d] = 1;
	}
	for (i = 0; i < x->ndim; i++) {
		if (!red[i])
			n = mul(n, x->dims[i]);
	}
	return n;
}

static const struct model m_max_other = { "aten::max", MODEL_SECONDARY, "pointwise", eval_pointwise,
					  &s_binary };

static int eval_reduce(const struct kp_op_in *in, const struct model *m, struct kp_cost *c)
{
	const struct red_schema *rs = m->aux;
	const struct kp_slot *x = slot(in, 0), *o;
	int nfunc = in->nslots, full;
	int64_t n_out;
	enum kp_dtype out_dt;
	enum red_out kind = rs->out;

	if (!is_tensor(x))
		return fail(c, "reduction input is not a tensor");
	c->dtype = x->dtype;
	o = opm_out_slot(in, 1);
	if (o != NULL)
		nfunc = (int)(o - in->slots);
	/* max.other / min.other (self, other): elementwise, not a reduction */
	if (kind == RO_VALUES_INDICES && is_tensor(slot(in, 1))) {
		c->family = "pointwise";
		return eval_pointwise(in, &m_max_other, c);
	}
	full = nfunc <= rs->full_max;
	if (full) {
		n_out = 1;
		out_dt = opm_scalar_type_or(slot(in, rs->full_dtype), x->dtype);
		if (kind == RO_VALUES_INDICES)
			kind = RO_SAME; /* max(self): the value only */
	} else {
		n_out = reduced_numel(x, text(slot(in, rs->dim)));
		if (n_out == -1)
			return fail(c, "reduction 'dim' is unreadable or out of range");
		out_dt = opm_scalar_type_or(slot(in, rs->dtype), x->dtype);
	}
	/* sum and prod of bool/integers accumulate into int64 unless dtype= says */
	if (kind == RO_SUM && opm_category(out_dt) < 2 && out_dt != DT_UNKNOWN &&
	    text(slot(in, full ? rs->full_dtype : rs->dtype))[0] == '\0')
		out_dt = DT_I64;
	if (kind == RO_INDEX)
		out_dt = DT_I64;
	if (kind == RO_BOOL)
		out_dt = DT_BOOL;
	if (o != NULL)
		out_dt = o->dtype;

	/* bytes: numel(in)*s_in + numel(out)*s_out (+ int64 indices, + a second output) */
	c->bytes = add(tbytes(x), nbytes(n_out, out_dt));
	if (kind == RO_VALUES_INDICES)
		c->bytes = add(c->bytes, nbytes(n_out, DT_I64));
	if (kind == RO_TWO)
		c->bytes = add(c->bytes, nbytes(n_out, out_dt));
	return 0;
}


#define P(n, fam, fn, aux) { "aten::" n, MODEL_PRIMARY, fam, fn, aux }
#define S(n, fam, fn, aux) { "aten::" n, MODEL_SECONDARY, fam, fn, aux }
/* sorted by name (strcmp order) for bsearch */
static const struct model models[] = {
	S("_to_copy", "copy", eval_copy, &k_to_copy),
	S("abs", "pointwise", eval_pointwise, &s_unary),
	S("abs_", "pointwise", eval_pointwise, &s_unary),
	S("add", "pointwise", eval_pointwise, &s_binary),
	S("add_", "pointwise", eval_pointwise, &s_binary),
	S("addcdiv", "pointwise", eval_pointwise, &s_ternary),
	S("addcdiv_", "pointwise", eval_pointwise, &s_ternary),
	S("addcmul", "pointwise", eval_pointwise, &s_ternary),
	S("addcmul_", "pointwise", eval_pointwise, &s_ternary),
	S("all", "reduce", eval_reduce, &s_any),
	S("amax", "reduce", eval_reduce, &s_amax),
	S("amin", "reduce", eval_reduce, &s_amax),
	S("any", "reduce", eval_reduce, &s_any),
	S("argmax", "reduce", eval_reduce, &s_argmax),
	S("argmin", "reduce", eval_reduce, &s_argmax),
	S("cat", "copy", eval_copy, &k_cat),
	S("clamp", "pointwise", eval_pointwise, &s_ternary),
	S("clamp_", "pointwise", eval_pointwise, &s_ternary),
	S("clamp_max", "pointwise", eval_pointwise, &s_binary),
	S("clamp_min", "pointwise", eval_pointwise, &s_binary),
	S("clone", "copy", eval_copy, &k_same),
	S("contiguous", "copy", eval_copy, &k_same),
	S("copy_", "copy", eval_copy, &k_copy_),
	S("cos", "pointwise", eval_pointwise, &s_unary),
	S("div", "pointwise", eval_pointwise, &s_div),
	S("div_", "pointwise", eval_pointwise, &s_div),
	S("dropout", "pointwise", eval_pointwise, &s_dropout),
	S("eq", "pointwise", eval_pointwise, &s_compare),
	S("erf", "pointwise", eval_pointwise, &s_unary),
	S("exp", "pointwise", eval_pointwise, &s_unary),
	S("exp_", "pointwise", eval_pointwise, &s_unary),
	S("fill_", "pointwise", eval_pointwise, &s_write),
	S("ge", "pointwise", eval_pointwise, &s_compare),
	S("gelu", "pointwise", eval_pointwise, &s_unary),
	S("gelu_", "pointwise", eval_pointwise, &s_unary),
	S("gelu_backward", "pointwise", eval_pointwise, &s_binary),
	S("gt", "pointwise", eval_pointwise, &s_compare),
	S("hardswish", "pointwise", eval_pointwise, &s_unary),
	S("hardtanh", "pointwise", eval_pointwise, &s_unary),
	S("hardtanh_", "pointwise", eval_pointwise, &s_unary),
	S("hardtanh_backward", "pointwise", eval_pointwise, &s_binary),
	S("le", "pointwise", eval_pointwise, &s_compare),
	S("leaky_relu", "pointwise", eval_pointwise, &s_unary),
	S("leaky_relu_", "pointwise", eval_pointwise, &s_unary),
	S("leaky_relu_backward", "pointwise", eval_pointwise, &s_binary),
	S("lerp", "pointwise", eval_pointwise, &s_ternary),
	S("lerp_", "pointwise", eval_pointwise, &s_ternary),
	S("linalg_vector_norm", "reduce", eval_reduce, &s_vnorm),
	S("log", "pointwise", eval_pointwise, &s_unary),
	S("logsumexp", "reduce", eval_reduce, &s_amax),
	S("lt", "pointwise", eval_pointwise, &s_compare),
	S("masked_fill", "pointwise", eval_pointwise, &s_masked_fill),
	S("masked_fill_", "pointwise", eval_pointwise, &s_masked_fill),
	S("max", "reduce", eval_reduce, &s_max),
	S("maximum", "pointwise", eval_pointwise, &s_binary),
	S("mean", "reduce", eval_reduce, &s_mean),
	S("min", "reduce", eval_reduce, &s_max),
	S("minimum", "pointwise", eval_pointwise, &s_binary),
	S("mul", "pointwise", eval_pointwise, &s_binary),
	S("mul_", "pointwise", eval_pointwise, &s_binary),
	S("nansum", "reduce", eval_reduce, &s_sum),
	S("native_dropout", "pointwise", eval_pointwise, &s_dropout),
	S("native_dropout_backward", "pointwise", eval_pointwise, &s_binary),
	S("ne", "pointwise", eval_pointwise, &s_compare),
	S("neg", "pointwise", eval_pointwise, &s_unary),
	S("neg_", "pointwise", eval_pointwise, &s_unary),
	S("pow", "pointwise", eval_pointwise, &s_binary),
	S("pow_", "pointwise", eval_pointwise, &s_binary),
	S("prod", "reduce", eval_reduce, &s_sum),
	S("reciprocal", "pointwise", eval_pointwise, &s_unary),
	S("relu", "pointwise", eval_pointwise, &s_unary),
	S("relu_", "pointwise", eval_pointwise, &s_unary),
	S("rsqrt", "pointwise", eval_pointwise, &s_unary),
	S("rsub", "pointwise", eval_pointwise, &s_binary),
	S("sigmoid", "pointwise", eval_pointwise, &s_unary),
	S("sigmoid_", "pointwise", eval_pointwise, &s_unary),
	S("sigmoid_backward", "pointwise", eval_pointwise, &s_binary),
	S("silu", "pointwise", eval_pointwise, &s_unary),
	S("silu_", "pointwise", eval_pointwise, &s_unary),
	S("silu_backward", "pointwise", eval_pointwise, &s_binary),
	S("sin", "pointwise", eval_pointwise, &s_unary),
	S("sqrt", "pointwise", eval_pointwise, &s_unary),
	S("square", "pointwise", eval_pointwise, &s_unary),
	S("stack", "copy", eval_copy, &k_cat),
	S("std", "reduce", eval_reduce, &s_var),
	S("std_mean", "reduce", eval_reduce, &s_var_mean),
	S("sub", "pointwise", eval_pointwise, &s_binary),
	S("sub_", "pointwise", eval_pointwise, &s_binary),
	S("sum", "reduce", eval_reduce, &s_sum),
	S("tanh", "pointwise", eval_pointwise, &s_unary),
	S("tanh_", "pointwise", eval_pointwise, &s_unary),
	S("tanh_backward", "pointwise", eval_pointwise, &s_binary),
	S("threshold_backward", "pointwise", eval_pointwise, &s_binary),
	S("to", "copy", eval_copy, &k_to),
	S("var", "reduce", eval_reduce, &s_var),
	S("var_mean", "reduce", eval_reduce, &s_var_mean),
	S("where", "pointwise", eval_pointwise, &s_where),
	S("zero_", "pointwise", eval_pointwise, &s_write),
};
#undef P
#undef S

const struct opm_family opm_family_pointwise = {
	.models = models,
	.n = sizeof(models) / sizeof(models[0]),
};
