/*
 * opmodel-gemm.c — the GEMM family (doc/flops-bytes.md §3.1, §6.2): mm, addmm, bmm, baddbmm,
 * _int_mm, _scaled_mm, _addmm_activation, _grouped_mm; their rows of the model table and
 * their functional signature (kprof-diff(1)).
 */
#include "kprof/opmodel-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	o = opm_out_slot(in, g->out);
	out_dt = g->out_dtype != DT_NONE ? g->out_dtype : a->dtype;
	if (g->scaled)
		out_dt = opm_scalar_type_or(slot(in, 6), a->dtype);
	if (o != NULL)
		out_dt = o->dtype;

	/* bytes: B*(M*K*s_a + K*N*s_b + M*N*s_out), each operand read once (TL GEMM) */
	per = add(add(nbytes(mul(mm, k), a->dtype), nbytes(mul(k, n), b->dtype)),
		  nbytes(mul(mm, n), out_dt));
	c->bytes = mul(bt, per);

	/* the addend, [N] or [M,N] as recorded; not read when beta == 0 */
	self = slot(in, g->self);
	if (is_tensor(self) && !(g->beta >= 0 && opm_is_zero(text(slot(in, g->beta))))) {
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

	out_dt = opm_scalar_type_or(slot(in, 4), a->dtype);
	c->bytes = add(add(tbytes(a), tbytes(b)), nbytes(mul3(groups_out, mm, n), out_dt));
	c->bytes = add(c->bytes, add(tbytes(offs), tbytes(slot(in, 3))));
	return 0;
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
		int gelu = opm_parse_bool(text(slot(in, 5)));
		if (gelu < 0)
			return -1;
		act = gelu ? " gelu" : " relu";
	}
	char bias[96] = "";
	if (is_tensor(self)) {
		const char *beta = text(slot(in, g->beta));
		if (*beta == '\0' && g != &s_addmm_act)
			return -1; /* beta not recorded: is the addend read? */
		if (!opm_is_zero(beta)) {
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

/* The signature of a GEMM row (-1 for _int_mm and _grouped_mm: none) */
static int gemm_signature(const struct kp_op_in *in, const struct model *m, char *buf, size_t cap)
{
	if (m->eval != eval_gemm || m->aux == &s_int_mm)
		return -1;
	return sig_gemm(in, m->aux, buf, cap);
}

#define P(n, fam, fn, aux) { "aten::" n, MODEL_PRIMARY, fam, fn, aux }
#define S(n, fam, fn, aux) { "aten::" n, MODEL_SECONDARY, fam, fn, aux }
/* sorted by name (strcmp order) for bsearch */
static const struct model models[] = {
	P("_addmm_activation", "gemm", eval_gemm, &s_addmm_act),
	P("_grouped_mm", "gemm", eval_grouped_mm, NULL),
	P("_int_mm", "gemm", eval_gemm, &s_int_mm),
	P("_scaled_mm", "gemm", eval_gemm, &s_scaled_mm),
	P("addmm", "gemm", eval_gemm, &s_addmm),
	P("baddbmm", "gemm", eval_gemm, &s_baddbmm),
	P("bmm", "gemm", eval_gemm, &s_bmm),
	P("mm", "gemm", eval_gemm, &s_mm),
};
#undef P
#undef S

const struct opm_family opm_family_gemm = {
	.models = models,
	.n = sizeof(models) / sizeof(models[0]),
	.signature = gemm_signature,
};
