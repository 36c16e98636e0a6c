/*
 * opmodel.c — FLOPs and compulsory bytes of one recorded PyTorch op (pure math, no I/O).
 * The formulas and slot tables are in doc/flops-bytes.md; section numbers below refer to it.
 */
#include "kprof/opmodel.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Checked arithmetic.  Every real quantity (a count of elements, bytes or FLOPs)
 * is >= 0, so two negative values poison a result: UNK when a tensor's dtype has
 * no size (bytes unknown), OVF when a product leaves int64.  OVF wins over UNK.
 */
#define UNK (-1)
#define OVF (-2)

#define MAXSP 3   /* spatial dims of conv1d/2d/3d */
#define MAXDIM 64 /* dims of a tensor the models accept */

/* What a result of @a and @b is when either is negative (OVF or UNK); 0 when both are real. */
static int64_t poisoned(int64_t a, int64_t b)
{
	if (a == OVF || b == OVF)
		return OVF;
	return a < 0 || b < 0 ? UNK : 0;
}

static int64_t mul(int64_t a, int64_t b)
{
	int64_t r = poisoned(a, b);

	if (r == 0 && __builtin_mul_overflow(a, b, &r))
		return OVF;
	return r;
}

static int64_t add(int64_t a, int64_t b)
{
	int64_t r = poisoned(a, b);

	if (r == 0 && __builtin_add_overflow(a, b, &r))
		return OVF;
	return r;
}

static int64_t mul3(int64_t a, int64_t b, int64_t c)
{
	return mul(mul(a, b), c);
}

/* ---- slots -------------------------------------------------------------- */

static const struct kp_slot *slot(const struct kp_op_in *in, int i)
{
	if (i < 0 || i >= in->nslots)
		return NULL;
	return &in->slots[i];
}

/*
 * A tensor slot: a tensor dtype, not a TensorList.  An unknown type string on a
 * [] slot is taken for a non-tensor argument (a Device or a string) rather than a
 * 0-dim tensor: either way it is at most one element.
 */
static int is_tensor(const struct kp_slot *s)
{
	return s != NULL && s->nlist == 0 && s->dtype != DT_NONE &&
	       !(s->dtype == DT_UNKNOWN && s->ndim == 0);
}

static const char *text(const struct kp_slot *s)
{
	return s != NULL && s->concrete != NULL ? s->concrete : "";
}

/* Elements of a tensor slot: the product of its dims (1 for a 0-dim tensor). */
static int64_t numel(const struct kp_slot *s)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < s->ndim; i++)
		n = mul(n, s->dims[i]);
	return n;
}

/* @n elements of @dt in bytes; UNK when @dt has no size. */
static int64_t nbytes(int64_t n, enum kp_dtype dt)
{
	size_t sz = dtype_size(dt);

	return sz == 0 ? (n == OVF ? OVF : UNK) : mul(n, (int64_t)sz);
}

/* Bytes of a whole tensor slot; 0 for a non-tensor (scalars cost nothing, §6.2). */
static int64_t tbytes(const struct kp_slot *s)
{
	return is_tensor(s) ? nbytes(numel(s), s->dtype) : 0;
}

/* The out= tensor: a tensor slot at index >= @first (the last one); NULL if none. */
static const struct kp_slot *out_slot(const struct kp_op_in *in, int first)
{
	int i;

	for (i = in->nslots - 1; i >= first; i--) {
		if (is_tensor(&in->slots[i]))
			return &in->slots[i];
	}
	return NULL;
}

/* ---- Concrete Inputs text ----------------------------------------------- */

static const char *skip_ws(const char *p)
{
	while (*p == ' ')
		p++;
	return p;
}

/* A whole-string integer ("2", "-1"); 0 on success. */
static int parse_int(const char *s, int64_t *v)
{
	char *end;
	long long x;

	s = skip_ws(s);
	if (*s == '\0')
		return -1;
	errno = 0;
	x = strtoll(s, &end, 10);
	/* beyond int64 is unreadable: strtoll would saturate to a plausible INT64_MAX */
	if (end == s || errno == ERANGE || *skip_ws(end) != '\0')
		return -1;
	*v = x;
	return 0;
}

/* "True" / "False" (also "1" / "0"); -1 when neither. */
static int parse_bool(const char *s)
{
	s = skip_ws(s);
	if (strcmp(s, "True") == 0 || strcmp(s, "true") == 0 || strcmp(s, "1") == 0)
		return 1;
	if (strcmp(s, "False") == 0 || strcmp(s, "false") == 0 || strcmp(s, "0") == 0)
		return 0;
	return -1;
}

/*
 * A list of integers "[2, 2]" or a bare integer "2" into @v (at most @max).
 * Returns the count (0 for "[]"), or -1 when the text is not such a list.
 */
static int parse_ints(const char *s, int64_t *v, int max)
{
	char *end;
	int n = 0;

	s = skip_ws(s);
	if (*s != '[')
		return parse_int(s, v) == 0 && max >= 1 ? 1 : -1;
	s = skip_ws(s + 1);
	if (*s == ']')
		return *skip_ws(s + 1) == '\0' ? 0 : -1;
	for (;;) {
		if (n == max)
			return -1;
		errno = 0;
		v[n++] = strtoll(s, &end, 10);
		if (end == s || errno == ERANGE)
			return -1;
		s = skip_ws(end);
		if (*s == ']')
			return *skip_ws(s + 1) == '\0' ? n : -1;
		if (*s != ',')
			return -1;
		s = skip_ws(s + 1);
	}
}

/* A list of booleans "[True, True, False]"; the count, or -1. */
static int parse_bools(const char *s, int *v, int max)
{
	int n = 0;
	size_t len;

	s = skip_ws(s);
	if (*s++ != '[')
		return -1;
	s = skip_ws(s);
	if (*s == ']')
		return 0;
	for (;;) {
		if (n == max)
			return -1;
		if (strncmp(s, "True", 4) == 0) {
			v[n++] = 1;
			len = 4;
		} else if (strncmp(s, "False", 5) == 0) {
			v[n++] = 0;
			len = 5;
		} else {
			return -1;
		}
		s = skip_ws(s + len);
		if (*s == ']')
			return *skip_ws(s + 1) == '\0' ? n : -1;
		if (*s != ',')
			return -1;
		s = skip_ws(s + 1);
	}
}

/* A numeric scalar equal to zero ("0", "0.", "0.0"); "" is not. */
static int is_zero(const char *s)
{
	char *end;
	double x;

	s = skip_ws(s);
	if (*s == '\0')
		return 0;
	x = strtod(s, &end);
	return *skip_ws(end) == '\0' && x == 0.0;
}

/* A ScalarType number in Concrete Inputs ("15"): its dtype, or @def when absent. */
static enum kp_dtype scalar_type_or(const struct kp_slot *s, enum kp_dtype def)
{
	int64_t st;

	if (s == NULL || parse_int(text(s), &st) != 0)
		return def;
	return st < 0 || st > INT_MAX ? DT_UNKNOWN : dtype_from_scalar_type((int)st);
}

/* ---- type promotion (torch.result_type, simplified) ---------------------- */

static int category(enum kp_dtype dt)
{
	switch (dt) {
	case DT_BOOL:
		return 0;
	case DT_I8:
	case DT_U8:
	case DT_I16:
	case DT_I32:
	case DT_I64:
	case DT_U16:
	case DT_U32:
	case DT_U64:
		return 1;
	case DT_C32:
	case DT_C64:
	case DT_C128:
		return 3;
	default:
		return 2;
	}
}

/*
 * Promote two dtypes: the higher category wins; within one, the wider type.
 * Same-width pairs go up: bf16 with fp16 -> fp32, int8 with uint8 -> int16.
 */
static enum kp_dtype promote(enum kp_dtype a, enum kp_dtype b)
{
	if (a == DT_NONE)
		return b;
	if (b == DT_NONE || a == b)
		return a;
	if (a == DT_UNKNOWN || b == DT_UNKNOWN)
		return DT_UNKNOWN;
	if (category(a) != category(b))
		return category(a) > category(b) ? a : b;
	if (dtype_size(a) != dtype_size(b))
		return dtype_size(a) > dtype_size(b) ? a : b;
	if (category(a) == 2)
		return dtype_size(a) < 4 ? DT_F32 : a;
	if (category(a) == 1 && dtype_size(a) == 1)
		return DT_I16;
	return a;
}

/* A Python float as Concrete Inputs prints it: "0.5", "1.", "1e-05", "-inf", "nan" */
static int is_float_literal(const char *s)
{
	char *end;

	s = skip_ws(s);
	if (*s == '\0')
		return 0;
	strtod(s, &end);
	return *skip_ws(end) == '\0' && strpbrk(s, ".eEnN") != NULL;
}

/*
 * Result dtype of a pointwise op over @n slots: dimensioned tensors decide,
 * unless a 0-dim tensor or a Python scalar is of a higher category (a float
 * scalar turns an integer tensor into the default fp32).
 */
static enum kp_dtype result_type(const struct kp_slot *const *s, int n)
{
	enum kp_dtype dim = DT_NONE, zero = DT_NONE;
	int i, float_scalar = 0;

	for (i = 0; i < n; i++) {
		if (s[i] == NULL)
			continue;
		if (is_tensor(s[i])) {
			if (s[i]->ndim > 0)
				dim = promote(dim, s[i]->dtype);
			else
				zero = promote(zero, s[i]->dtype);
		} else if (s[i]->dtype == DT_NONE && is_float_literal(text(s[i]))) {
			float_scalar = 1;
		}
	}
	if (dim == DT_NONE)
		dim = zero;
	else if (zero != DT_NONE && category(zero) > category(dim))
		dim = zero;
	if (float_scalar && dim != DT_NONE && dim != DT_UNKNOWN && category(dim) < 2)
		dim = DT_F32;
	return dim;
}

/* ---- the table ------------------------------------------------------------ */

struct model;
typedef int (*eval_fn)(const struct kp_op_in *in, const struct model *m, struct kp_cost *c);

struct model {
	const char *name;
	enum kp_model_class cls;
	const char *family;
	eval_fn eval;
	const void *aux; /* the model's schema descriptor */
};

static int fail(struct kp_cost *c, const char *note)
{
	c->note = note;
	return -1;
}

/* ---- GEMM (§3.1, §6.2) ---------------------------------------------------- */

struct gemm_schema {
	int a, b; /* [M,K] x [K,N] (batched: [B,M,K] x [B,K,N]) */
	int self; /* addend of addmm/baddbmm, -1 */
	int beta; /* beta scalar, -1 */
	int out;  /* first slot an out= tensor can take */
	int batched;
	int scaled; /* _scaled_mm: scales at 2,3, bias 4, scale_result 5, out_dtype 6 */
	enum kp_dtype out_dtype; /* the output's dtype when fixed (_int_mm: int32), else DT_NONE */
};

static const struct gemm_schema s_mm = { 0, 1, -1, -1, 2, 0, 0, DT_NONE };
static const struct gemm_schema s_int_mm = { 0, 1, -1, -1, 2, 0, 0, DT_I32 };
static const struct gemm_schema s_addmm = { 1, 2, 0, 3, 5, 0, 0, DT_NONE };
static const struct gemm_schema s_addmm_act = { 1, 2, 0, 3, 6, 0, 0, DT_NONE };
static const struct gemm_schema s_bmm = { 0, 1, -1, -1, 2, 1, 0, DT_NONE };
static const struct gemm_schema s_baddbmm = { 1, 2, 0, 3, 5, 1, 0, DT_NONE };
static const struct gemm_schema s_scaled_mm = { 0, 1, -1, -1, 8, 0, 1, DT_NONE };

static int eval_gemm(const struct kp_op_in *in, const struct model *m, struct kp_cost *c)
{
	const struct gemm_schema *g = m->aux;
	const struct kp_slot *a = slot(in, g->a), *b = slot(in, g->b), *o, *self;
	int nd = g->batched ? 3 : 2, i;
	int64_t bt = 1, mm, k, n, per;
	enum kp_dtype out_dt;

	if (!is_tensor(a) || !is_tensor(b))
		return fail(c, "matmul operands are not tensors");
	if (a->ndim != nd || b->ndim != nd)
		return fail(c, g->batched ? "bmm operands are not 3-D" : "mm operands are not 2-D");
	if (g->batched) {
		/* baddbmm: B from batch1, never from self, which may broadcast ([1]) */
		bt = a->dims[0];
		if (b->dims[0] != bt)
			return fail(c, "bmm operands differ in batch size");
	}
	mm = a->dims[nd - 2];
	k = a->dims[nd - 1];
	n = b->dims[nd - 1];
	if (b->dims[nd - 2] != k)
		return fail(c, "matmul operands differ in the inner dimension");
	c->dtype = a->dtype;

	/* 2 FLOPs per multiply-add: 2*B*M*N*K (FC mm/addmm/bmm/baddbmm/_scaled_mm) */
	c->flops = mul(mul3(2, bt, mm), mul(n, k));

	/*
	 * Output dtype: the out= tensor's; _scaled_mm's out_dtype (a ScalarType number)
	 * or else self's dtype; _int_mm's int32; the other ops return mat1's dtype.
	 */
	o = out_slot(in, g->out);
	out_dt = g->out_dtype != DT_NONE ? g->out_dtype : a->dtype;
	if (g->scaled)
		out_dt = scalar_type_or(slot(in, 6), a->dtype);
	if (o != NULL)
		out_dt = o->dtype;

	/* bytes: B*(M*K*s_a + K*N*s_b + M*N*s_out), each operand read once (TL GEMM) */
	per = add(add(nbytes(mul(mm, k), a->dtype), nbytes(mul(k, n), b->dtype)),
		  nbytes(mul(mm, n), out_dt));
	c->bytes = mul(bt, per);

	/* the addend, [N] or [M,N] as recorded; not read when beta == 0 */
	self = slot(in, g->self);
	if (is_tensor(self) && !(g->beta >= 0 && is_zero(text(slot(in, g->beta))))) {
		/*
		 * When C is copied into the output by a kernel of its own (beta != 0 and no
		 * bias epilogue), that copy reads C and writes the output; the GEMM then
		 * reads A, B and the output as C and writes the output.
		 */
		c->move_bytes = add(tbytes(self), nbytes(mul3(bt, mm, n), out_dt));
		c->math_bytes = add(c->bytes, nbytes(mul3(bt, mm, n), out_dt));
		c->bytes = add(c->bytes, tbytes(self));
	}

	/* _scaled_mm: scale_a, scale_b (0-dim fp32), bias, scale_result */
	if (g->scaled) {
		for (i = 2; i <= 5; i++)
			c->bytes = add(c->bytes, tbytes(slot(in, i)));
	}
	return 0;
}

/*
 * _grouped_mm(self, mat2, offs=None, bias=None, out_dtype=None): G GEMMs in one call (MoE
 * experts; FlopCounterMode counts nothing).  The ranks of the operands say which dimension
 * is cut into G groups (PyTorch's create_grouped_gemm_output_tensor):
 *   2-D x 3-D  [T,K] x [G,K,N], offs [G] cuts T (rows)     -> [T,N]     2*T*K*N
 *   3-D x 2-D  [G,M,K] x [K,T], offs [G] cuts T (columns)  -> [M,T]     2*M*K*T
 *   2-D x 2-D  [M,T] x [T,N], offs [G] cuts T (inner)      -> [G,M,N]   2*M*T*N
 *   3-D x 3-D  [G,M,K] x [G,K,N], a batched mm             -> [G,M,N]   2*G*M*K*N
 * Kineto records offs' shape, not its values: the groups are taken to cover all of T
 * (offs[G-1] == T, as MoE token dispatch makes them); rows or columns left past
 * offs[G-1] would make these figures upper bounds.  Bytes: self, mat2, offs and bias read
 * once, the output written once.
 */
static int eval_grouped_mm(const struct kp_op_in *in, const struct model *m, struct kp_cost *c)
{
	const struct kp_slot *a = slot(in, 0), *b = slot(in, 1), *offs = slot(in, 2);
	int64_t g = -1, mm, k, n, groups_out = 1;
	enum kp_dtype out_dt;

	(void)m;
	if (!is_tensor(a) || !is_tensor(b))
		return fail(c, "grouped mm operands are not tensors");
	if (a->ndim < 2 || a->ndim > 3 || b->ndim < 2 || b->ndim > 3)
		return fail(c, "grouped mm operands are not 2-D or 3-D");
	if (is_tensor(offs)) {
		if (offs->ndim != 1)
			return fail(c, "grouped mm offsets are not 1-D");
		g = offs->dims[0];
	}
	if (a->ndim == 3 && b->ndim == 3) {
		if (a->dims[0] != b->dims[0])
			return fail(c, "grouped mm operands differ in group count");
		groups_out = a->dims[0];
	} else if (g < 0) {
		return fail(c, "grouped mm with a 2-D operand records no offsets");
	} else if ((a->ndim == 3 && a->dims[0] != g) || (b->ndim == 3 && b->dims[0] != g)) {
		return fail(c, "grouped mm offsets differ from the group count");
	}
	mm = a->dims[a->ndim - 2];
	k = a->dims[a->ndim - 1];
	n = b->dims[b->ndim - 1];
	if (b->dims[b->ndim - 2] != k)
		return fail(c, "grouped mm operands differ in the inner dimension");
	c->dtype = a->dtype;
	/* the groups split T, so only 3-D x 3-D multiplies by G */
	c->flops = mul(mul3(2, groups_out, mm), mul(k, n));
	if (a->ndim == 2 && b->ndim == 2)
		groups_out = g; /* one [M,N] output per group of the inner dimension */

	out_dt = scalar_type_or(slot(in, 4), a->dtype);
	c->bytes = add(add(tbytes(a), tbytes(b)), nbytes(mul3(groups_out, mm, n), out_dt));
	c->bytes = add(c->bytes, add(tbytes(offs), tbytes(slot(in, 3))));
	return 0;
}

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
	n = parse_ints(text(slot(in, idx)), v, MAXSP);
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
	const struct kp_slot *o = out_slot(in, cs->out);

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
	transposed = cs->transposed >= 0 ? parse_bool(text(slot(in, cs->transposed)))
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
	if (cs->transposed >= 0 && (transposed = parse_bool(text(slot(in, cs->transposed)))) < 0)
		return eval_conv_linked(in, cs, x, w, c,
					"convolution 'transposed' is not True or False");
	if (cs->groups >= 0 && (parse_int(text(slot(in, cs->groups)), &groups) != 0 || groups < 1))
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
 * no scalars, and no cuDNN call inside the op said it: capture/hostops.c conv_fill): the form
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
	if (*skip_ws(text(slot(in, 7))) == '\0') {
		if ((transposed = conv_bwd_transposed(dy, x, w)) < 0)
			return fail(c, "convolution 'transposed' not recorded, and the channels and "
				       "sizes of grad_output, input and weight fit neither form");
	} else if ((transposed = parse_bool(text(slot(in, 7)))) < 0) {
		return fail(c, "convolution 'transposed' is not True or False");
	}
	/* groups not recorded: the channels per group are w[1] */
	if (*skip_ws(text(slot(in, 9))) == '\0' && w->dims[1] >= 1)
		groups = (transposed ? dy->dims[1] : x->dims[1]) / w->dims[1];
	else if (parse_int(text(slot(in, 9)), &groups) != 0)
		groups = 0;
	if (groups < 1)
		return fail(c, "convolution 'groups' is not a positive integer");
	if (*skip_ws(text(slot(in, 10))) == '\0') {
		mask[0] = mask[1] = 1, mask[2] = 0;
		c->assumed = "output_mask not recorded: FLOPs assume both the input's and the "
			     "weight's gradient (a first layer computes only the weight's: half)";
	} else if (parse_bools(text(slot(in, 10)), mask, 3) != 3) {
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
	int k = parse_ints(t, v, MAXDIM), i;

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
		if (parse_ints(text(slot(in, 0)), wd, MAXSP + 2) != dy->ndim)
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

/* ---- attention (§3.3-§3.6, §6.2) -------------------------------------------- */

enum { L_BHSD, L_BSHD }; /* SDPA level [B,H,S,D]; flash [B,S,H,D], efficient [B,M,H,K] */
enum { CAUSAL_NONE, CAUSAL_TOP_LEFT, CAUSAL_BOTTOM_RIGHT };
enum { LSE_ALWAYS = -2 };

struct attn_schema {
	int bwd;
	int layout;
	int q, k, v;
	int grad_out, o, lse; /* backward reads; -1 in forward */
	int bias;             /* attn_bias, -1 */
	int cum_q;            /* cum_seq_q / cu_seqlens_q: varlen when a tensor; -1 */
	int causal;           /* is_causal flag, -1 */
	int causal_align;     /* what is_causal means */
	int mask_type;        /* _efficient_attention_*: custom_mask_type 0/1/2, -1 */
	int lse_flag;         /* forward: slot of compute_log_sumexp, or LSE_ALWAYS */
	int bias_grad;        /* backward: slot saying grad_bias is written, -1 */
	int bias_grad_index;  /* -1: @bias_grad is a bool; else an index into a bool list */
};

/*
 * is_causal at the _scaled_dot_product_* level is PyTorch's top-left tril.  The
 * flash kernel called directly is FlashAttention >= 2.1, bottom-right aligned
 * (identical when s_q == s_k, the only causal case sdpa lets flash run).
 */
/* clang-format off */
static const struct attn_schema s_sdpa_flash = {
	0, L_BHSD, 0, 1, 2, -1, -1, -1, -1, -1, 4, CAUSAL_TOP_LEFT, -1, LSE_ALWAYS, -1, -1 };
static const struct attn_schema s_sdpa_flash_bwd = {
	1, L_BHSD, 1, 2, 3, 0, 4, 5, -1, 6, 11, CAUSAL_TOP_LEFT, -1, 0, -1, -1 };
static const struct attn_schema s_sdpa_eff = {
	0, L_BHSD, 0, 1, 2, -1, -1, -1, 3, -1, 6, CAUSAL_TOP_LEFT, -1, 4, -1, -1 };
static const struct attn_schema s_sdpa_eff_bwd = {
	1, L_BHSD, 1, 2, 3, 0, 5, 6, 4, -1, 11, CAUSAL_TOP_LEFT, -1, 0, 10, 3 };
static const struct attn_schema s_sdpa_cudnn = {
	0, L_BHSD, 0, 1, 2, -1, -1, -1, 3, -1, 6, CAUSAL_TOP_LEFT, -1, 4, -1, -1 };
static const struct attn_schema s_sdpa_cudnn_bwd = {
	1, L_BHSD, 1, 2, 3, 0, 4, 5, 8, 9, 14, CAUSAL_TOP_LEFT, -1, 0, -1, -1 };
static const struct attn_schema s_flash_fwd = {
	0, L_BSHD, 0, 1, 2, -1, -1, -1, -1, 3, 8, CAUSAL_BOTTOM_RIGHT, -1, LSE_ALWAYS, -1, -1 };
static const struct attn_schema s_flash_bwd = {
	1, L_BSHD, 1, 2, 3, 0, 4, 5, -1, 6, 11, CAUSAL_BOTTOM_RIGHT, -1, 0, -1, -1 };
static const struct attn_schema s_eff_fwd = {
	0, L_BSHD, 0, 1, 2, -1, -1, -1, 3, 4, -1, CAUSAL_NONE, 9, 10, -1, -1 };
static const struct attn_schema s_eff_bwd = {
	1, L_BSHD, 1, 2, 3, 0, 5, 10, 4, 6, -1, CAUSAL_NONE, 14, 0, 15, -1 };
/* _cudnn_attention_forward adds cum_seq_q/k, max_q/k at 4-7: is_causal at 10 (NF 15291) */
static const struct attn_schema s_cudnn_fwd = {
	0, L_BHSD, 0, 1, 2, -1, -1, -1, 3, 4, 10, CAUSAL_TOP_LEFT, -1, 8, -1, -1 };
/* _cudnn_attention_backward: the slots of its sdpa parent (observed) */
static const struct attn_schema s_cudnn_bwd = {
	1, L_BHSD, 1, 2, 3, 0, 4, 5, 8, 9, 14, CAUSAL_TOP_LEFT, -1, 0, -1, -1 };
/* clang-format on */

struct attn_dims {
	int64_t b, h, s, d;
};

static void attn_unpack(const struct kp_slot *t, int layout, struct attn_dims *a)
{
	a->b = t->dims[0];
	a->h = t->dims[layout == L_BHSD ? 1 : 2];
	a->s = t->dims[layout == L_BHSD ? 2 : 1];
	a->d = t->dims[3];
}

int64_t opmodel_causal_pairs(int64_t s_q, int64_t s_k, int bottom_right)
{
	int64_t n, tri, rest;

	if (s_q < 0 || s_k < 0)
		return -1;
	/*
	 * Top-left: sum_{i<s_q} min(i+1, s_k) = T(min(s_q,s_k)) + (s_q - s_k)^+ * s_k.
	 * Bottom-right: sum_i clamp(s_k - s_q + i + 1, 0, s_k)
	 *   s_q <= s_k: s_q*(s_k - s_q) + T(s_q);  s_q > s_k: T(s_k).
	 * T(n) = n(n+1)/2, halved on the even factor so it cannot overflow early.
	 */
	n = s_q < s_k ? s_q : s_k;
	/* odd n: (n + 1) / 2 = n / 2 + 1, which cannot overflow for n = INT64_MAX */
	tri = n % 2 == 0 ? mul(n / 2, n + 1) : mul(n, n / 2 + 1);
	if (!bottom_right)
		rest = s_q > s_k ? mul(s_q - s_k, s_k) : 0;
	else
		rest = s_q <= s_k ? mul(s_q, s_k - s_q) : 0;
	n = add(tri, rest);
	return n < 0 ? -1 : n;
}

/*
 * The mask of an attention op into @causal (CAUSAL_NONE unless set).  A flag without a value
 * (emit_nvtx records no scalars): what the op's kernels say (FlashAttention names Is_causal),
 * else dense, with the assumption reported.  0, or -1 with the note set.
 */
static int attn_mask(const struct kp_op_in *in, const struct attn_schema *as, struct kp_cost *c,
		     int *causal)
{
	int flag = as->causal >= 0 ? as->causal : as->mask_type;

	if (flag >= 0 && *text(slot(in, flag)) == '\0') {
		if (in->causal_hint == CAUSAL_HINT_CAUSAL)
			*causal = as->causal >= 0 ? as->causal_align : CAUSAL_BOTTOM_RIGHT;
		else if (in->causal_hint != CAUSAL_HINT_DENSE)
			c->assumed =
				"is_causal not recorded and not in its kernels' names: FLOPs "
				"assume is_causal=False (every query-key pair; causal does about half)";
	} else if (as->causal >= 0) {
		if ((flag = parse_bool(text(slot(in, as->causal)))) < 0)
			return fail(c, "attention 'is_causal' is not True or False");
		*causal = flag ? as->causal_align : CAUSAL_NONE;
	} else if (as->mask_type >= 0) {
		int64_t mt;

		/* custom_mask_type: 0 none, 1 causal top-left, 2 causal bottom-right */
		if (parse_int(text(slot(in, as->mask_type)), &mt) != 0 || mt < 0 || mt > 2)
			return fail(c, "attention 'custom_mask_type' is not 0, 1 or 2");
		*causal = (int)mt;
	}
	return 0;
}

/*
 * Bytes of an attention op, compulsory (§6.2), each tensor in its own dtype; K/V sized by
 * H_kv as recorded.  Forward: read Q, K, V (+ attn_bias), write O = @rows_q * @d_v in Q's
 * dtype and the fp32 logsumexp [B, H_q, S_q] when it is computed.  Backward: read Q, K, V,
 * O, dO, LSE (+ attn_bias), write dQ, dK, dV (+ grad_bias).  FA2's fp32 dQ accumulator is
 * workspace, not counted.
 */
static int64_t attn_bytes(const struct kp_op_in *in, const struct attn_schema *as, int64_t rows_q,
			  int64_t d_v)
{
	const struct kp_slot *q = slot(in, as->q), *k = slot(in, as->k), *v = slot(in, as->v);
	const struct kp_slot *bias = slot(in, as->bias);
	int64_t bytes = add(add(tbytes(q), tbytes(k)), add(tbytes(v), tbytes(bias)));
	int flag, list[8];

	if (!as->bwd) {
		bytes = add(bytes, nbytes(mul(rows_q, d_v), q->dtype));
		if (as->lse_flag == LSE_ALWAYS ||
		    (as->lse_flag >= 0 && parse_bool(text(slot(in, as->lse_flag))) == 1))
			bytes = add(bytes, nbytes(rows_q, DT_F32)); /* one fp32 per row */
		return bytes;
	}
	bytes = add(bytes, tbytes(slot(in, as->grad_out)));
	bytes = add(bytes, tbytes(slot(in, as->o)));
	bytes = add(bytes, tbytes(slot(in, as->lse)));
	bytes = add(bytes, add(add(tbytes(q), tbytes(k)), tbytes(v)));
	if (is_tensor(bias) && as->bias_grad >= 0) {
		const char *t = text(slot(in, as->bias_grad));

		flag = as->bias_grad_index < 0 ? parse_bool(t)
					       : (parse_bools(t, list, 8) > as->bias_grad_index
							  ? list[as->bias_grad_index]
							  : 0);
		if (flag == 1)
			bytes = add(bytes, tbytes(bias));
	}
	return bytes;
}

/*
 * Query, key and value: tensors of one rank, 4-D ([B, H, S, D] in the op's layout) or, for
 * varlen ops (cum_seq/cu_seqlens tensors, or 3-D [total, H, D] inputs where the op has
 * them), 3-D.  Sets c->dtype and *varlen; -1 (with the reason in @c) when they are not.
 */
static int attn_operands(const struct kp_op_in *in, const struct attn_schema *as, struct kp_cost *c,
			 int *varlen)
{
	const struct kp_slot *q = slot(in, as->q), *k = slot(in, as->k), *v = slot(in, as->v);

	if (!is_tensor(q) || !is_tensor(k) || !is_tensor(v))
		return fail(c, "attention query, key or value is not a tensor");
	if (q->ndim != k->ndim || q->ndim != v->ndim || q->ndim < 3 || q->ndim > 4)
		return fail(c, "attention query, key and value are not all 3-D or all 4-D");
	c->dtype = q->dtype;
	*varlen = is_tensor(slot(in, as->cum_q)) || (q->ndim == 3 && as->cum_q >= 0);
	if (!*varlen && q->ndim != 4)
		return fail(c, "attention query, key and value are not 4-D");
	return 0;
}

/* Rows of Q and O: B*H_q*S_q (or total_q*H_q when varlen) = numel(q) / D. */
static int64_t attn_rows(const struct kp_slot *q)
{
	int64_t rows = 1;

	for (int i = 0; i < q->ndim - 1; i++)
		rows = mul(rows, q->dims[i]);
	return rows;
}

/*
 * The 4-D query, key and value into @aq and @ak: one batch, one head dim for Q and K, K and
 * V alike, and (GQA/MQA) H_q a multiple of H_kv; -1 (with the reason in @c) otherwise.
 */
static int attn_heads(const struct kp_op_in *in, const struct attn_schema *as, struct attn_dims *aq,
		      struct attn_dims *ak, struct kp_cost *c)
{
	struct attn_dims av;

	attn_unpack(slot(in, as->q), as->layout, aq);
	attn_unpack(slot(in, as->k), as->layout, ak);
	attn_unpack(slot(in, as->v), as->layout, &av);
	if (aq->b != ak->b || aq->b != av.b)
		return fail(c, "attention query, key and value differ in batch size");
	if (aq->d != ak->d)
		return fail(c, "attention query and key differ in head dim");
	if (ak->s != av.s || ak->h != av.h)
		return fail(c, "attention key and value differ in length or heads");
	/* FLOPs use the query heads (§3.6) */
	if (ak->h < 1 || aq->h % ak->h != 0)
		return fail(c, "attention query heads are not a multiple of key/value heads");
	return 0;
}

/*
 * FLOPs per (b, h_q) head and unmasked (i, j) pair (§3.3, §3.5):
 *   forward  QK^T + PV                          = 2*(d + d_v)
 *   backward QK^T, dO V^T, P^T dO, dS K, dS^T Q = 2*(3d + 2d_v)  (2.5x forward)
 * pairs = s_q*s_k dense, or the exact causal count, so causal FLOPs are the
 * dense ones times pairs/(s_q*s_k), kept exact in integers.
 */
static int64_t attn_flops(const struct attn_schema *as, const struct attn_dims *aq,
			  const struct attn_dims *ak, int64_t d_v, int causal)
{
	int64_t pairs, flops;

	if (causal == CAUSAL_NONE)
		pairs = mul(aq->s, ak->s);
	else
		pairs = opmodel_causal_pairs(aq->s, ak->s, causal == CAUSAL_BOTTOM_RIGHT);
	if (!as->bwd)
		flops = mul(mul3(2, aq->b, aq->h), mul(add(aq->d, d_v), pairs));
	else
		flops = mul(mul3(2, aq->b, aq->h), mul(add(mul(3, aq->d), mul(2, d_v)), pairs));
	return pairs < 0 ? OVF : flops;
}

static int eval_attn(const struct kp_op_in *in, const struct model *m, struct kp_cost *c)
{
	const struct attn_schema *as = m->aux;
	const struct kp_slot *v = slot(in, as->v);
	struct attn_dims aq, ak;
	int causal = CAUSAL_NONE, varlen;
	int64_t d_v;

	if (attn_operands(in, as, c, &varlen) < 0 || attn_mask(in, as, c, &causal) < 0)
		return -1;
	d_v = v->dims[v->ndim - 1];
	c->bytes = attn_bytes(in, as, attn_rows(slot(in, as->q)), d_v);
	if (varlen) {
		/*
		 * Per-sequence lengths live in the cum_seq tensors, whose values are not
		 * recorded; max lengths would overstate ragged batches, so no FLOPs.
		 */
		c->flops = -1;
		c->note = "varlen attention: sequence lengths not recorded, FLOPs unknown";
		return 0;
	}
	if (attn_heads(in, as, &aq, &ak, c) < 0)
		return -1;
	c->flops = attn_flops(as, &aq, &ak, d_v, causal);
	return 0;
}

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
	if (parse_bool(text(slot(in, 2))) != 0)
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
		return result_type(ops + 1, n - 1);
	default:
		dt = result_type(ops, n);
		if (ps->kind == PW_DIV && category(dt) < 2 && dt != DT_UNKNOWN &&
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
	o = out_slot(in, ps->nin);
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
		return scalar_type_or(s1, self->dtype);
	case 6:
		return scalar_type_or(slot(in, 2), self->dtype);
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
		dt = promote(dt, elems[i].dtype);
	}
	o = out_slot(in, first_out);
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
		out_dt = scalar_type_or(src, self->dtype);
		break;
	case CP_TO:
		out_dt = to_dtype(in, self);
		break;
	default:
		out_dt = self->dtype;
		break;
	}
	/* read numel(self) in its dtype, write as many in the output dtype */
	o = out_slot(in, kind == CP_TO ? 2 : 1);
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

	if (*skip_ws(t) == '\0' || strcmp(skip_ws(t), "None") == 0)
		return 1;
	nd = parse_ints(t, dims, MAXDIM);
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
	o = out_slot(in, 1);
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
		out_dt = scalar_type_or(slot(in, rs->full_dtype), x->dtype);
		if (kind == RO_VALUES_INDICES)
			kind = RO_SAME; /* max(self): the value only */
	} else {
		n_out = reduced_numel(x, text(slot(in, rs->dim)));
		if (n_out == -1)
			return fail(c, "reduction 'dim' is unreadable or out of range");
		out_dt = scalar_type_or(slot(in, rs->dtype), x->dtype);
	}
	/* sum and prod of bool/integers accumulate into int64 unless dtype= says */
	if (kind == RO_SUM && category(out_dt) < 2 && out_dt != DT_UNKNOWN &&
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

/* ---- norms (§6.2) ------------------------------------------------------------ */

enum norm_kind { N_LAYER, N_LAYER_BWD, N_RMS, N_FUSED_RMS, N_FUSED_RMS_BWD };

static const int k_layer = N_LAYER, k_layer_bwd = N_LAYER_BWD, k_rms = N_RMS;
static const int k_fused_rms = N_FUSED_RMS, k_fused_rms_bwd = N_FUSED_RMS_BWD;

/* Rows of a norm: numel(x) / prod(normalized_shape); -1 when the shape does not fit. */
static int64_t norm_rows(const struct kp_slot *x, const char *t)
{
	int64_t ns[MAXDIM], inner = 1;
	int n = parse_ints(t, ns, MAXDIM), i;

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
	return parse_bools(t, mask, n) == n;
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
		out_dt = scalar_type_or(slot(in, 3), x->dtype);
		o = out_slot(in, 4);
		break;
	case SM_HALF_TO_FLOAT:
		c->bytes = tbytes(x);
		out_dt = parse_bool(text(slot(in, 2))) == 1 ? DT_F32 : x->dtype;
		o = out_slot(in, 3);
		break;
	default:
		c->bytes = tbytes(x);
		out_dt = scalar_type_or(slot(in, 2), x->dtype);
		o = out_slot(in, 3);
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

	if (*text(r) && (parse_int(text(r), &v) != 0 || v < 0 || v > 2))
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

/*
 * The models, sorted by name (strcmp order) for bsearch.  Composites without a
 * model (aten::linear, matmul, conv2d, scaled_dot_product_attention,
 * _scaled_dot_product_attention_math, dropout's autograd nodes, ...) are absent:
 * their children carry the work (§5).
 */
#define P(n, fam, fn, aux) { "aten::" n, MODEL_PRIMARY, fam, fn, aux }
#define S(n, fam, fn, aux) { "aten::" n, MODEL_SECONDARY, fam, fn, aux }
static const struct model models[] = {
	P("_addmm_activation", "gemm", eval_gemm, &s_addmm_act),
	P("_convolution", "conv", eval_conv, &s_convolution),
	P("_cudnn_attention_backward", "attn", eval_attn, &s_cudnn_bwd),
	P("_cudnn_attention_forward", "attn", eval_attn, &s_cudnn_fwd),
	P("_efficient_attention_backward", "attn", eval_attn, &s_eff_bwd),
	P("_efficient_attention_forward", "attn", eval_attn, &s_eff_fwd),
	P("_flash_attention_backward", "attn", eval_attn, &s_flash_bwd),
	P("_flash_attention_forward", "attn", eval_attn, &s_flash_fwd),
	S("_fused_rms_norm", "norm", eval_norm, &k_fused_rms),
	S("_fused_rms_norm_backward", "norm", eval_norm, &k_fused_rms_bwd),
	P("_grouped_mm", "gemm", eval_grouped_mm, NULL),
	P("_int_mm", "gemm", eval_gemm, &s_int_mm),
	S("_log_softmax", "softmax", eval_softmax, &k_sm_h2f),
	S("_log_softmax_backward_data", "softmax", eval_softmax, &k_sm_bwd),
	S("_safe_softmax", "softmax", eval_softmax, &k_sm_dtype),
	P("_scaled_dot_product_cudnn_attention", "attn", eval_attn, &s_sdpa_cudnn),
	P("_scaled_dot_product_cudnn_attention_backward", "attn", eval_attn, &s_sdpa_cudnn_bwd),
	P("_scaled_dot_product_efficient_attention", "attn", eval_attn, &s_sdpa_eff),
	P("_scaled_dot_product_efficient_attention_backward", "attn", eval_attn, &s_sdpa_eff_bwd),
	P("_scaled_dot_product_flash_attention", "attn", eval_attn, &s_sdpa_flash),
	P("_scaled_dot_product_flash_attention_backward", "attn", eval_attn, &s_sdpa_flash_bwd),
	P("_scaled_mm", "gemm", eval_gemm, &s_scaled_mm),
	P("_slow_conv2d_forward", "conv", eval_conv, &s_slow_conv2d),
	S("_softmax", "softmax", eval_softmax, &k_sm_h2f),
	S("_softmax_backward_data", "softmax", eval_softmax, &k_sm_bwd),
	S("_to_copy", "copy", eval_copy, &k_to_copy),
	S("abs", "pointwise", eval_pointwise, &s_unary),
	S("abs_", "pointwise", eval_pointwise, &s_unary),
	S("add", "pointwise", eval_pointwise, &s_binary),
	S("add_", "pointwise", eval_pointwise, &s_binary),
	S("addcdiv", "pointwise", eval_pointwise, &s_ternary),
	S("addcdiv_", "pointwise", eval_pointwise, &s_ternary),
	S("addcmul", "pointwise", eval_pointwise, &s_ternary),
	S("addcmul_", "pointwise", eval_pointwise, &s_ternary),
	P("addmm", "gemm", eval_gemm, &s_addmm),
	S("all", "reduce", eval_reduce, &s_any),
	S("amax", "reduce", eval_reduce, &s_amax),
	S("amin", "reduce", eval_reduce, &s_amax),
	S("any", "reduce", eval_reduce, &s_any),
	S("argmax", "reduce", eval_reduce, &s_argmax),
	S("argmin", "reduce", eval_reduce, &s_argmax),
	P("baddbmm", "gemm", eval_gemm, &s_baddbmm),
	P("bmm", "gemm", eval_gemm, &s_bmm),
	S("cat", "copy", eval_copy, &k_cat),
	S("clamp", "pointwise", eval_pointwise, &s_ternary),
	S("clamp_", "pointwise", eval_pointwise, &s_ternary),
	S("clamp_max", "pointwise", eval_pointwise, &s_binary),
	S("clamp_min", "pointwise", eval_pointwise, &s_binary),
	S("clone", "copy", eval_copy, &k_same),
	S("contiguous", "copy", eval_copy, &k_same),
	P("convolution", "conv", eval_conv, &s_convolution),
	P("convolution_backward", "conv", eval_conv_bwd, NULL),
	P("convolution_overrideable", "conv", eval_conv, &s_convolution),
	S("copy_", "copy", eval_copy, &k_copy_),
	S("cos", "pointwise", eval_pointwise, &s_unary),
	S("cross_entropy_loss", "loss", eval_xent, &k_xe_ce),
	P("cudnn_convolution", "conv", eval_conv, &s_cudnn_conv),
	P("cudnn_convolution_backward_input", "conv", eval_conv_bwd_part, &k_bwd_input),
	P("cudnn_convolution_backward_weight", "conv", eval_conv_bwd_part, &k_bwd_weight),
	P("cudnn_convolution_transpose", "conv", eval_conv, &s_cudnn_conv_t),
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
	S("layer_norm", "norm", eval_norm, &k_layer),
	S("le", "pointwise", eval_pointwise, &s_compare),
	S("leaky_relu", "pointwise", eval_pointwise, &s_unary),
	S("leaky_relu_", "pointwise", eval_pointwise, &s_unary),
	S("leaky_relu_backward", "pointwise", eval_pointwise, &s_binary),
	S("lerp", "pointwise", eval_pointwise, &s_ternary),
	S("lerp_", "pointwise", eval_pointwise, &s_ternary),
	S("linalg_vector_norm", "reduce", eval_reduce, &s_vnorm),
	S("log", "pointwise", eval_pointwise, &s_unary),
	S("log_softmax", "softmax", eval_softmax, &k_sm_dtype),
	S("logsumexp", "reduce", eval_reduce, &s_amax),
	S("lt", "pointwise", eval_pointwise, &s_compare),
	S("masked_fill", "pointwise", eval_pointwise, &s_masked_fill),
	S("masked_fill_", "pointwise", eval_pointwise, &s_masked_fill),
	S("max", "reduce", eval_reduce, &s_max),
	S("maximum", "pointwise", eval_pointwise, &s_binary),
	S("mean", "reduce", eval_reduce, &s_mean),
	S("min", "reduce", eval_reduce, &s_max),
	S("minimum", "pointwise", eval_pointwise, &s_binary),
	P("miopen_convolution", "conv", eval_conv, &s_miopen_conv),
	P("miopen_convolution_transpose", "conv", eval_conv, &s_miopen_conv_t),
	P("mkldnn_convolution", "conv", eval_conv, &s_miopen_conv),
	P("mm", "gemm", eval_gemm, &s_mm),
	S("mul", "pointwise", eval_pointwise, &s_binary),
	S("mul_", "pointwise", eval_pointwise, &s_binary),
	S("nansum", "reduce", eval_reduce, &s_sum),
	S("native_dropout", "pointwise", eval_pointwise, &s_dropout),
	S("native_dropout_backward", "pointwise", eval_pointwise, &s_binary),
	S("native_layer_norm", "norm", eval_norm, &k_layer),
	S("native_layer_norm_backward", "norm", eval_norm, &k_layer_bwd),
	S("ne", "pointwise", eval_pointwise, &s_compare),
	S("neg", "pointwise", eval_pointwise, &s_unary),
	S("neg_", "pointwise", eval_pointwise, &s_unary),
	S("nll_loss", "loss", eval_xent, &k_xe_nll),
	S("nll_loss_backward", "loss", eval_xent, &k_xe_nll_bwd),
	S("nll_loss_forward", "loss", eval_xent, &k_xe_nll),
	S("nll_loss_nd", "loss", eval_xent, &k_xe_nll),
	S("pow", "pointwise", eval_pointwise, &s_binary),
	S("pow_", "pointwise", eval_pointwise, &s_binary),
	S("prod", "reduce", eval_reduce, &s_sum),
	S("reciprocal", "pointwise", eval_pointwise, &s_unary),
	S("relu", "pointwise", eval_pointwise, &s_unary),
	S("relu_", "pointwise", eval_pointwise, &s_unary),
	S("rms_norm", "norm", eval_norm, &k_rms),
	S("rsqrt", "pointwise", eval_pointwise, &s_unary),
	S("rsub", "pointwise", eval_pointwise, &s_binary),
	S("sigmoid", "pointwise", eval_pointwise, &s_unary),
	S("sigmoid_", "pointwise", eval_pointwise, &s_unary),
	S("sigmoid_backward", "pointwise", eval_pointwise, &s_binary),
	S("silu", "pointwise", eval_pointwise, &s_unary),
	S("silu_", "pointwise", eval_pointwise, &s_unary),
	S("silu_backward", "pointwise", eval_pointwise, &s_binary),
	S("sin", "pointwise", eval_pointwise, &s_unary),
	S("softmax", "softmax", eval_softmax, &k_sm_dtype),
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
	/* kprof capture's own fused ops (no aten op has their meaning); "kprof::" > "aten::" */
	{ "kprof::cross_entropy_loss_backward", MODEL_SECONDARY, "loss", eval_xent, &k_xe_ce_bwd },
};
#undef P
#undef S

static int cmp_model(const void *key, const void *elem)
{
	return strcmp(key, ((const struct model *)elem)->name);
}

static const struct model *lookup(const char *name)
{
	if (name == NULL || (strncmp(name, "aten::", 6) != 0 && strncmp(name, "kprof::", 7) != 0))
		return NULL;
	return bsearch(name, models, sizeof(models) / sizeof(models[0]), sizeof(models[0]),
		       cmp_model);
}

int opmodel_causal_slot(const char *name)
{
	const struct model *m = lookup(name);

	if (m == NULL || m->eval != eval_attn)
		return -1;
	return ((const struct attn_schema *)m->aux)->causal;
}

enum kp_model_class opmodel_class(const char *name)
{
	const struct model *m = lookup(name);

	return m != NULL ? m->cls : MODEL_NONE;
}

/* Every slot well-formed: dims present and >= 0, TensorList elements present. */
static const char *check_slots(const struct kp_op_in *in)
{
	int i, j;

	if (in->nslots < 0 || (in->nslots > 0 && in->slots == NULL))
		return "op has a negative slot count or no slots array";
	for (i = 0; i < in->nslots; i++) {
		const struct kp_slot *s = &in->slots[i];

		if (s->ndim < 0 || (s->ndim > 0 && s->dims == NULL) || s->ndim > MAXDIM)
			return "op slot has a bad dims array";
		for (j = 0; j < s->ndim; j++) {
			if (s->dims[j] == KP_DIM_BAD)
				return "dimension out of range in the op's Input Dims";
			if (s->dims[j] < 0)
				return "negative dimension in the op's Input Dims";
		}
		if (s->nlist < 0 || (s->nlist > 0 && s->list == NULL))
			return "op TensorList slot has no elements";
	}
	return NULL;
}

/*
 * Inductor's kernel_flop / kernel_num_gb win (PA).  bytes = round(gb * 1e9);
 * a value beyond int64 is dropped.
 */
static void apply_inductor(const struct kp_op_in *in, struct kp_cost *c)
{
	if (in->kernel_flop >= 0)
		c->flops = in->kernel_flop;
	if (in->kernel_num_gb >= 0 && in->kernel_num_gb * 1e9 < 9.2e18)
		c->bytes = llround(in->kernel_num_gb * 1e9);
}

int opmodel_eval(const struct kp_op_in *in, struct kp_cost *out)
{
	const struct model *m = lookup(in->name);
	int inductor = in->kernel_flop >= 0 || in->kernel_num_gb >= 0;
	const char *bad;
	int rc;

	memset(out, 0, sizeof(*out));
	out->cls = MODEL_NONE;
	out->flops = -1;
	out->bytes = -1;
	out->move_bytes = -1;
	out->math_bytes = -1;
	out->dtype = DT_NONE;
	out->prec = PREC_NONE;

	if (m == NULL) {
		if (!inductor)
			return 1;
		/* an Inductor kernel: its own counts are the model */
		out->cls = in->kernel_flop > 0 ? MODEL_PRIMARY : MODEL_SECONDARY;
		out->family = "inductor";
		apply_inductor(in, out);
		return 0;
	}

	out->cls = m->cls;
	out->family = m->family;
	/* secondary ops model bytes only: FLOPs stay -1 so primary totals stay FC-comparable */
	bad = check_slots(in);
	if (bad != NULL) {
		out->note = bad;
		rc = -1;
	} else {
		rc = m->eval(in, m, out);
		if (m->cls == MODEL_SECONDARY)
			out->flops = -1;
		if (rc == 0 && (out->flops == OVF || out->bytes == OVF)) {
			out->note = "shape product overflows int64";
			rc = -1;
		}
	}
	out->prec = dtype_prec(out->dtype);
	if (rc != 0 || out->bytes < 0 || out->move_bytes < 0 || out->math_bytes < 0)
		out->move_bytes = out->math_bytes = -1;
	if (rc != 0) {
		out->flops = -1;
		out->bytes = -1;
	} else if (out->bytes == UNK && out->note == NULL) {
		out->note = "tensor of unknown dtype: bytes unknown";
	}
	if (inductor) {
		apply_inductor(in, out);
		out->move_bytes = out->math_bytes = -1;
		if (rc != 0 && out->flops >= 0 && out->bytes >= 0) {
			out->note = NULL;
			rc = 0;
		}
	}
	return rc;
}

/* ---- functional signatures (kprof-diff(1), PAIRS ACROSS BACKENDS) ------------------ */

/*
 * Ops without a model whose slots name a whole attention call: the sdpa entry point,
 * its math decomposition, and the enclosing op kprof capture records around the math
 * path's backward (autograd runs it as bmm/softmax nodes of its own).  The layout of
 * aten::scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal,
 * scale, enable_gqa): is_causal is top-left.
 */
static const struct attn_schema s_sdpa_top = { 0, L_BHSD,          0,  1,  2,  -1, -1, -1, 3, -1,
					       5, CAUSAL_TOP_LEFT, -1, -1, -1, -1 };
static const struct attn_schema s_sdpa_top_bwd = { 1,  L_BHSD, 0,  1,  2, -1,
						   -1, -1,     3,  -1, 5, CAUSAL_TOP_LEFT,
						   -1, -1,     -1, -1 };

static const struct {
	const char *name;
	const struct attn_schema *s;
} sig_attn_tops[] = {
	{ "aten::scaled_dot_product_attention", &s_sdpa_top },
	{ "aten::_scaled_dot_product_attention_math", &s_sdpa_top },
	{ "kprof::scaled_dot_product_attention_math_backward", &s_sdpa_top_bwd },
};

int opmodel_sig_carrier(const char *name)
{
	for (size_t i = 0; i < sizeof(sig_attn_tops) / sizeof(sig_attn_tops[0]); i++)
		if (name && !strcmp(name, sig_attn_tops[i].name))
			return 1;
	return 0;
}

/* "flash", "efficient", "cudnn" from an attention op's name; "math" for the rest */
const char *opmodel_attn_variant(const char *name)
{
	if (!name)
		return "math";
	if (strstr(name, "flash"))
		return "flash";
	if (strstr(name, "efficient"))
		return "efficient";
	if (strstr(name, "cudnn"))
		return "cudnn";
	return "math";
}

static int sig_attn(const struct kp_op_in *in, const struct attn_schema *as, char *buf, size_t cap)
{
	const struct kp_slot *q = slot(in, as->q), *k = slot(in, as->k), *v = slot(in, as->v);
	const struct kp_slot *bias = slot(in, as->bias);
	struct attn_dims aq, ak, av;
	int causal = CAUSAL_NONE, flag = as->causal >= 0 ? as->causal : as->mask_type;
	char bt[96] = "";

	if (!is_tensor(q) || !is_tensor(k) || !is_tensor(v) || q->ndim != 4 || k->ndim != 4 ||
	    v->ndim != 4 || is_tensor(slot(in, as->cum_q)))
		return -1;
	/* is_causal must be recorded: a guess could pair a causal call with a dense one */
	if (flag < 0 || *text(slot(in, flag)) == '\0') {
		return -1;
	} else if (as->causal >= 0) {
		int f = parse_bool(text(slot(in, as->causal)));
		if (f < 0)
			return -1;
		causal = f ? as->causal_align : CAUSAL_NONE;
	} else {
		int64_t mt;
		if (parse_int(text(slot(in, as->mask_type)), &mt) != 0 || mt < 0 || mt > 2)
			return -1;
		causal = (int)mt;
	}
	attn_unpack(q, as->layout, &aq);
	attn_unpack(k, as->layout, &ak);
	attn_unpack(v, as->layout, &av);
	if (aq.b != ak.b || aq.b != av.b || ak.s != av.s || ak.h != av.h)
		return -1;
	/* top-left and bottom-right masks are one mask when S_q == S_k */
	if (causal != CAUSAL_NONE && aq.s == ak.s)
		causal = CAUSAL_TOP_LEFT;
	if (is_tensor(bias)) {
		size_t n = (size_t)snprintf(bt, sizeof(bt), " bias=[");
		for (int i = 0; i < bias->ndim && n < sizeof(bt) - 24; i++)
			n += (size_t)snprintf(bt + n, sizeof(bt) - n, "%s%lld", i ? "," : "",
					      (long long)bias->dims[i]);
		if (n < sizeof(bt) - 1)
			snprintf(bt + n, sizeof(bt) - n, "]");
	}
	int n = snprintf(buf, cap,
			 "attention %s B=%lld H=%lld H_kv=%lld S_q=%lld S_k=%lld D=%lld "
			 "D_v=%lld%s%s %s",
			 as->bwd ? "bwd" : "fwd", (long long)aq.b, (long long)aq.h, (long long)ak.h,
			 (long long)aq.s, (long long)ak.s, (long long)aq.d, (long long)av.d,
			 causal == CAUSAL_NONE       ? ""
			 : causal == CAUSAL_TOP_LEFT ? " causal"
						     : " causal-br",
			 bt, dtype_name(q->dtype));
	return n > 0 && (size_t)n < cap ? 0 : -1;
}

static int sig_gemm(const struct kp_op_in *in, const struct gemm_schema *g, char *buf, size_t cap)
{
	const struct kp_slot *a = slot(in, g->a), *b = slot(in, g->b), *self = slot(in, g->self);
	int nd = g->batched ? 3 : 2;
	int64_t bt = 1;
	const char *act = "";

	if (g->scaled || !is_tensor(a) || !is_tensor(b) || a->ndim != nd || b->ndim != nd ||
	    a->dtype != b->dtype)
		return -1;
	if (g->batched && (bt = a->dims[0]) != b->dims[0])
		return -1;
	if (b->dims[nd - 2] != a->dims[nd - 1])
		return -1;
	if (g == &s_addmm_act) {
		int gelu = parse_bool(text(slot(in, 5)));
		if (gelu < 0)
			return -1;
		act = gelu ? " gelu" : " relu";
	}
	char bias[96] = "";
	if (is_tensor(self)) {
		const char *beta = text(slot(in, g->beta));
		if (*beta == '\0' && g != &s_addmm_act)
			return -1; /* beta not recorded: is the addend read? */
		if (!is_zero(beta)) {
			size_t n = (size_t)snprintf(bias, sizeof(bias), " add=[");
			for (int i = 0; i < self->ndim && n < sizeof(bias) - 24; i++)
				n += (size_t)snprintf(bias + n, sizeof(bias) - n, "%s%lld",
						      i ? "," : "", (long long)self->dims[i]);
			if (n < sizeof(bias) - 1)
				snprintf(bias + n, sizeof(bias) - n, "]");
		}
	}
	/* a batch of one is one matmul: bmm [1,M,K]x[1,K,N] is mm [M,K]x[K,N] */
	char batch[32] = "";
	if (bt != 1)
		snprintf(batch, sizeof(batch), " batch=%lld", (long long)bt);
	int n = snprintf(buf, cap, "matmul M=%lld N=%lld K=%lld%s%s%s %s",
			 (long long)a->dims[nd - 2], (long long)b->dims[nd - 1],
			 (long long)a->dims[nd - 1], batch, bias, act, dtype_name(a->dtype));
	return n > 0 && (size_t)n < cap ? 0 : -1;
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
	if (cs->transposed >= 0 && (transposed = parse_bool(text(slot(in, cs->transposed)))) < 0)
		return -1;
	if (cs->groups >= 0 && (parse_int(text(slot(in, cs->groups)), &groups) != 0 || groups < 1))
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

int opmodel_signature(const struct kp_op_in *in, char *buf, size_t cap)
{
	const struct model *m;

	if (!in || !in->name || !buf || cap == 0 || check_slots(in) != NULL)
		return -1;
	for (size_t i = 0; i < sizeof(sig_attn_tops) / sizeof(sig_attn_tops[0]); i++)
		if (!strcmp(in->name, sig_attn_tops[i].name))
			return sig_attn(in, sig_attn_tops[i].s, buf, cap);
	if ((m = lookup(in->name)) == NULL || m->cls != MODEL_PRIMARY)
		return -1;
	if (m->eval == eval_attn)
		return sig_attn(in, m->aux, buf, cap);
	if (m->eval == eval_gemm && m->aux != &s_int_mm)
		return sig_gemm(in, m->aux, buf, cap);
	if (m->eval == eval_conv)
		return sig_conv(in, m->aux, buf, cap);
	return -1;
}
