/*
 * cudnn-graph.c — the SDPA operation graphs of cudnn-frontend's composite nodes, as data, and
 * their emission through the backend API (doc/workloads.md §a.3, §a.6-a.7).  Names and values
 * are cuDNN 9's cudnn_graph.h; the graphs follow NVIDIA/cudnn-frontend
 * include/cudnn_frontend/node/scaled_dot_product_flash_attention.h (CompositeSDPANode,
 * CompositeSDPABackwardNode), node/softmax.h (CompositeSoftmaxNode) and
 * node/diagonal_band_mask.h (CompositeDiagonalBandMaskNode), down to the strides the frontend
 * gives the virtual tensors.
 */
#include "workloads/cudnn-graph.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* cudnnBackendDescriptorType_t */
enum {
	D_POINTWISE = 0,
	D_OP_POINTWISE = 13,
	D_OPERATIONGRAPH = 15,
	D_TENSOR = 17,
	D_MATMUL = 18,
	D_OP_MATMUL = 19,
	D_REDUCTION = 21,
	D_OP_REDUCTION = 22,
	D_OP_RESHAPE = 31
};
/* cudnnBackendAttributeType_t */
enum {
	T_HANDLE = 0,
	T_DATA_TYPE = 1,
	T_BOOLEAN = 2,
	T_INT64 = 3,
	T_POINTWISE_MODE = 14,
	T_BACKEND_DESCRIPTOR = 15,
	T_REDUCTION_OPERATOR = 18
};
/* cudnnBackendAttributeName_t */
/* clang-format off */
enum {
	A_PW_MODE = 0, A_PW_MATH_PREC = 1, A_PW_AXIS = 9, A_OPPW_DESC = 750, A_OPPW_X = 751,
	A_OPPW_B = 752, A_OPPW_Y = 753, A_OPPW_T = 758, A_GRAPH_HANDLE = 800, A_GRAPH_OPS = 801,
	A_T_ALIGN = 900, A_T_DTYPE = 901, A_T_DIMS = 902, A_T_STRIDES = 903, A_T_UID = 906,
	A_T_VIRTUAL = 907, A_T_BY_VALUE = 908, A_MM_COMP = 1500, A_OPMM_A = 1520, A_OPMM_B = 1521,
	A_OPMM_C = 1522, A_OPMM_DESC = 1523, A_RED_OP = 1600, A_RED_COMP = 1601, A_OPRED_X = 1610,
	A_OPRED_Y = 1611, A_OPRED_DESC = 1612, A_RESHAPE_X = 2200, A_RESHAPE_Y = 2201
};
/* clang-format on */

/* ---- building ---- */

static int tensor(struct cg_graph *g, int64_t uid, int dt, const int64_t dim[4],
		  const int64_t stride[4], int virt)
{
	if (g->nt == CG_MAXT) {
		g->full = 1;
		return 0;
	}
	struct cg_tensor *t = &g->t[g->nt];
	*t = (struct cg_tensor){
		.uid = uid ? uid : SDPA_VIRT + g->nt, .dtype = dt, .nd = 4, .virt = virt
	};
	memcpy(t->dim, dim, sizeof(t->dim));
	memcpy(t->stride, stride, sizeof(t->stride));
	return g->nt++;
}

/* A virtual fp32 tensor (the frontend's intermediate data type). */
static int virt(struct cg_graph *g, int64_t a, int64_t b, int64_t c, int64_t d, int64_t sa,
		int64_t sb, int64_t sc, int64_t sd)
{
	int64_t dim[4] = { a, b, c, d }, st[4] = { sa, sb, sc, sd };
	return tensor(g, 0, CG_FLOAT, dim, st, 1);
}

/* A virtual tensor shaped as @like, of type @dt. */
static int like(struct cg_graph *g, int like_i, int dt)
{
	int64_t dim[4], st[4];
	memcpy(dim, g->t[like_i].dim, sizeof(dim));
	memcpy(st, g->t[like_i].stride, sizeof(st));
	return tensor(g, 0, dt, dim, st, 1);
}

/* A scalar passed by value, rank 4 (as PyTorch gives the attention scale). */
static int scalar(struct cg_graph *g, int64_t uid, float v)
{
	int64_t one[4] = { 1, 1, 1, 1 };
	int i = tensor(g, uid, CG_FLOAT, one, one, 0);
	g->t[i].by_value = 1, g->t[i].value = v;
	return i;
}

/* BHSD tensor (PyTorch's contiguous [b, h, s, d]); @transposed swaps dims and strides 2 and 3. */
static int bhsd(struct cg_graph *g, int64_t uid, int dt, long b, long h, long s, long d,
		int transposed)
{
	int64_t dim[4] = { b, h, s, d }, st[4] = { h * s * d, s * d, d, 1 };
	if (transposed) {
		dim[2] = d, dim[3] = s;
		st[2] = 1, st[3] = d;
	}
	return tensor(g, uid, dt, dim, st, 0);
}

static int op(struct cg_graph *g, int kind, int mode, int comp, int axis, int a, int b, int c,
	      int y)
{
	if (g->nop == CG_MAXOP) {
		g->full = 1;
		return y;
	}
	struct cg_op *o = &g->op[g->nop++];
	*o = (struct cg_op){ .kind = kind,
			     .mode = mode,
			     .comp = comp,
			     .axis = axis,
			     .in = { a, b, c },
			     .nin = c >= 0   ? 3
				    : b >= 0 ? 2
					     : 1,
			     .out = y };
	return y;
}

static int pw(struct cg_graph *g, int mode, int a, int b, int y)
{
	return op(g, CG_POINTWISE, mode, CG_FLOAT, -1, a, b, -1, y);
}

static int matmul(struct cg_graph *g, int a, int b, int y)
{
	return op(g, CG_MATMUL, 0, CG_FLOAT, -1, a, b, -1, y);
}

static int reduce(struct cg_graph *g, int mode, int x, int y)
{
	return op(g, CG_REDUCTION, mode, CG_FLOAT, -1, x, -1, -1, y);
}

/* Row max over the scores, [b, h, sq, 1]: the frontend's (h*sq, sq, 1, 1) strides. */
static int rowvec(struct cg_graph *g, const struct cg_sdpa *s)
{
	return virt(g, s->b, s->h, s->sq, 1, s->h * s->sq, s->sq, 1, 1);
}

/*
 * Top-left causal mask over @x (CompositeDiagonalBandMaskNode, right bound 0): keep where
 * row >= col, else -inf.  Returns the masked scores.
 */
static int causal_mask(struct cg_graph *g, const struct cg_sdpa *s, int x)
{
	int neg = scalar(g, SDPA_NEG_INF, s->lowest_mask ? -FLT_MAX : -INFINITY);
	int row = op(g, CG_POINTWISE, CG_PW_GEN_INDEX, CG_FLOAT, 2, x, -1, -1,
		     like(g, x, CG_INT32));
	int col = op(g, CG_POINTWISE, CG_PW_GEN_INDEX, CG_FLOAT, 3, x, -1, -1,
		     like(g, x, CG_INT32));
	int keep = op(g, CG_POINTWISE, CG_PW_CMP_GE, CG_BOOL, -1, row, col, -1,
		      like(g, x, CG_BOOL));
	return op(g, CG_POINTWISE, CG_PW_BINARY_SELECT, CG_FLOAT, -1, x, neg, keep,
		  like(g, x, CG_FLOAT));
}

static int scores(struct cg_graph *g, const struct cg_sdpa *s)
{
	return virt(g, s->b, s->h, s->sq, s->sk, s->h * s->sq * s->sk, s->sq * s->sk, s->sk, 1);
}

int cg_sdpa_fwd(struct cg_graph *g, const struct cg_sdpa *s)
{
	memset(g, 0, sizeof(*g));
	int q = bhsd(g, SDPA_Q, s->io, s->b, s->h, s->sq, s->d, 0);
	int kt = bhsd(g, SDPA_K, s->io, s->b, s->hkv, s->sk, s->d, 1);
	int v = bhsd(g, SDPA_V, s->io, s->b, s->hkv, s->sk, s->d, 0);
	int o = bhsd(g, SDPA_O, s->io, s->b, s->h, s->sq, s->d, 0);
	int64_t sdim[4] = { s->b, s->h, s->sq, 1 }, sst[4] = { s->h * s->sq, s->sq, 1, 1 };
	int stats = tensor(g, s->stats ? SDPA_STATS : 0, CG_FLOAT, sdim, sst, !s->stats);
	int scale = scalar(g, SDPA_SCALE, s->scale);

	int x = matmul(g, q, kt, scores(g, s));
	x = pw(g, CG_PW_MUL, x, scale, like(g, x, CG_FLOAT));
	if (s->causal)
		x = causal_mask(g, s, x);
	/* softmax (CompositeSoftmaxNode with Stats) */
	int m = reduce(g, CG_RED_MAX, x, rowvec(g, s));
	int e = pw(g, CG_PW_SUB, x, m, like(g, x, CG_FLOAT));
	e = pw(g, CG_PW_EXP, e, -1, like(g, x, CG_FLOAT));
	int z = reduce(g, CG_RED_ADD, e, rowvec(g, s));
	int lz = pw(g, CG_PW_LOG, z, -1, rowvec(g, s));
	pw(g, CG_PW_ADD, m, lz, stats);
	/* P in the I/O type: cuDNN wants the second matmul's A operand so */
	int p = pw(g, CG_PW_DIV, e, z, like(g, x, s->io));
	matmul(g, p, v, o);
	return g->full ? -1 : 0;
}

/* dK or dV: the matmul of a transposed [b, h, sk, sq] operand, summed over each GQA group. */
static void grad_kv(struct cg_graph *g, const struct cg_sdpa *s, int at, int b_op, int out)
{
	if (s->h == s->hkv) {
		matmul(g, at, b_op, out);
		return;
	}
	int64_t dim[4] = { s->b, s->h, s->sk, s->d };
	int64_t st[4] = { s->h * s->sk * s->d, s->sk * s->d, s->d, 1 };
	int full = matmul(g, at, b_op, tensor(g, 0, s->io, dim, st, 1));
	reduce(g, CG_RED_ADD, full, out);
}

/* [b, h, sq, sk] -> [b, h, sk, sq] by strides (a reshape op), in the I/O type. */
static int transpose_scores(struct cg_graph *g, const struct cg_sdpa *s, int x)
{
	int64_t dim[4] = { s->b, s->h, s->sk, s->sq };
	int64_t st[4] = { s->h * s->sq * s->sk, s->sq * s->sk, 1, s->sk };
	return op(g, CG_RESHAPE, 0, CG_FLOAT, -1, x, -1, -1, tensor(g, 0, s->io, dim, st, 1));
}

int cg_sdpa_bwd(struct cg_graph *g, const struct cg_sdpa *s)
{
	memset(g, 0, sizeof(*g));
	int q = bhsd(g, SDPA_Q, s->io, s->b, s->h, s->sq, s->d, 0);
	int kt = bhsd(g, SDPA_K, s->io, s->b, s->hkv, s->sk, s->d, 1);
	int vt = bhsd(g, SDPA_V, s->io, s->b, s->hkv, s->sk, s->d, 1);
	int o = bhsd(g, SDPA_O, s->io, s->b, s->h, s->sq, s->d, 0);
	int d_o = bhsd(g, SDPA_DO, s->io, s->b, s->h, s->sq, s->d, 0);
	int dq = bhsd(g, SDPA_DQ, s->io, s->b, s->h, s->sq, s->d, 0);
	int dk = bhsd(g, SDPA_DK, s->io, s->b, s->hkv, s->sk, s->d, 0);
	int dv = bhsd(g, SDPA_DV, s->io, s->b, s->hkv, s->sk, s->d, 0);
	int64_t sdim[4] = { s->b, s->h, s->sq, 1 }, sst[4] = { s->h * s->sq, s->sq, 1, 1 };
	int stats = tensor(g, SDPA_STATS, CG_FLOAT, sdim, sst, 0);
	int sum = tensor(g, SDPA_SOFTMAX_SUM, CG_FLOAT, sdim, sst, 0);
	int acc = bhsd(g, SDPA_DQ_ACCUM, CG_FLOAT, s->b, s->h, s->sq, s->d, 0);
	int scale = scalar(g, SDPA_SCALE, s->scale), one = scalar(g, SDPA_ONE, 1.f);

	/* softmax_sum = rowsum(dO * O) * 1 (the frontend's dropout-scale slot) */
	int t = pw(g, CG_PW_MUL, d_o, o,
		   virt(g, s->b, s->h, s->sq, s->d, s->h * s->sq * s->d, s->sq * s->d, s->h * s->d,
			1));
	t = reduce(g, CG_RED_ADD, t, rowvec(g, s));
	pw(g, CG_PW_MUL, t, one, sum);
	/* P = exp(scale S - Stats), masked */
	int x = matmul(g, q, kt, scores(g, s));
	x = pw(g, CG_PW_MUL, x, scale, like(g, x, CG_FLOAT));
	x = pw(g, CG_PW_SUB, x, stats, like(g, x, CG_FLOAT));
	if (s->causal)
		x = causal_mask(g, s, x);
	int p = pw(g, CG_PW_EXP, x, -1, like(g, x, CG_FLOAT));
	grad_kv(g, s, transpose_scores(g, s, p), d_o, dv);
	/* dS = P (dO V^T - softmax_sum) scale */
	int dp = matmul(g, d_o, vt, scores(g, s));
	int ds = pw(g, CG_PW_SUB, dp, sum, like(g, dp, CG_FLOAT));
	ds = pw(g, CG_PW_MUL, ds, p, like(g, dp, CG_FLOAT));
	ds = pw(g, CG_PW_MUL, ds, scale, like(g, dp, CG_FLOAT));
	grad_kv(g, s, transpose_scores(g, s, ds), q, dk);
	/* dQ = dS K through the fp32 accumulator */
	int k = bhsd(g, 0, s->io, s->b, s->hkv, s->sk, s->d, 0);
	g->t[k].virt = 1;
	op(g, CG_RESHAPE, 0, CG_FLOAT, -1, kt, -1, -1, k);
	matmul(g, ds, k, acc);
	pw(g, CG_PW_IDENTITY, acc, -1, dq);
	return g->full ? -1 : 0;
}

size_t cg_sdpa_bwd_side_bytes(const struct cg_sdpa *s, size_t *sum_off)
{
	size_t acc = (size_t)s->b * s->h * s->sq * s->d * 4, sum = (size_t)s->b * s->h * s->sq * 4;
	acc = (acc + 15) / 16 * 16;
	*sum_off = acc;
	return acc + (sum + 15) / 16 * 16;
}

const struct cg_tensor *cg_find(const struct cg_graph *g, int64_t uid)
{
	for (int i = 0; i < g->nt; i++)
		if (g->t[i].uid == uid)
			return &g->t[i];
	return NULL;
}

/* ---- emission ---- */

struct emit {
	const struct cg_api *api;
	struct cg_built *b;
	char *why;
	size_t whylen;
};

static void *mk(struct emit *e, int type)
{
	void *d = NULL;
	int st = e->b->nd < (int)(sizeof(e->b->d) / sizeof(e->b->d[0])) ? e->api->create(type, &d)
									: -1;
	if (st != 0 || !d) {
		snprintf(e->why, e->whylen, "cudnnBackendCreateDescriptor(%d): %s", type,
			 st < 0 ? "too many descriptors" : e->api->errstr(st));
		return NULL;
	}
	e->b->d[e->b->nd++] = d;
	return d;
}

static int set(struct emit *e, void *d, int attr, int type, int64_t n, const void *v)
{
	int st = e->api->set(d, attr, type, n, v);
	if (st != 0)
		snprintf(e->why, e->whylen, "cudnnBackendSetAttribute(%d): %s", attr,
			 e->api->errstr(st));
	return st ? -1 : 0;
}

static int fin(struct emit *e, void *d, const char *what)
{
	int st = e->api->finalize(d);
	if (st != 0)
		snprintf(e->why, e->whylen, "cudnnBackendFinalize(%s): %s", what,
			 e->api->errstr(st));
	return st ? -1 : 0;
}

static void *emit_tensor(struct emit *e, const struct cg_tensor *t)
{
	int64_t align = 16, uid = t->uid;
	bool virt = t->virt, byval = t->by_value;
	void *d = mk(e, D_TENSOR);
	if (!d || set(e, d, A_T_DTYPE, T_DATA_TYPE, 1, &t->dtype) ||
	    set(e, d, A_T_DIMS, T_INT64, t->nd, t->dim) ||
	    set(e, d, A_T_STRIDES, T_INT64, t->nd, t->stride) ||
	    set(e, d, A_T_UID, T_INT64, 1, &uid) || set(e, d, A_T_ALIGN, T_INT64, 1, &align) ||
	    set(e, d, A_T_VIRTUAL, T_BOOLEAN, 1, &virt) ||
	    (byval && set(e, d, A_T_BY_VALUE, T_BOOLEAN, 1, &byval)) || fin(e, d, "tensor"))
		return NULL;
	return d;
}

static void *emit_op(struct emit *e, const struct cg_op *o, void *const *td)
{
	void *x = td[o->in[0]], *y = td[o->out], *desc, *d;
	switch (o->kind) {
	case CG_MATMUL:
		desc = mk(e, D_MATMUL);
		if (!desc || set(e, desc, A_MM_COMP, T_DATA_TYPE, 1, &o->comp) ||
		    fin(e, desc, "matmul"))
			return NULL;
		d = mk(e, D_OP_MATMUL);
		if (!d || set(e, d, A_OPMM_A, T_BACKEND_DESCRIPTOR, 1, &x) ||
		    set(e, d, A_OPMM_B, T_BACKEND_DESCRIPTOR, 1, &td[o->in[1]]) ||
		    set(e, d, A_OPMM_C, T_BACKEND_DESCRIPTOR, 1, &y) ||
		    set(e, d, A_OPMM_DESC, T_BACKEND_DESCRIPTOR, 1, &desc) ||
		    fin(e, d, "matmul operation"))
			return NULL;
		return d;
	case CG_POINTWISE: {
		int64_t axis = o->axis;
		desc = mk(e, D_POINTWISE);
		if (!desc || set(e, desc, A_PW_MODE, T_POINTWISE_MODE, 1, &o->mode) ||
		    set(e, desc, A_PW_MATH_PREC, T_DATA_TYPE, 1, &o->comp) ||
		    (o->axis >= 0 && set(e, desc, A_PW_AXIS, T_INT64, 1, &axis)) ||
		    fin(e, desc, "pointwise"))
			return NULL;
		d = mk(e, D_OP_POINTWISE);
		if (!d || set(e, d, A_OPPW_DESC, T_BACKEND_DESCRIPTOR, 1, &desc) ||
		    set(e, d, A_OPPW_X, T_BACKEND_DESCRIPTOR, 1, &x) ||
		    (o->nin >= 2 && set(e, d, A_OPPW_B, T_BACKEND_DESCRIPTOR, 1, &td[o->in[1]])) ||
		    (o->nin >= 3 && set(e, d, A_OPPW_T, T_BACKEND_DESCRIPTOR, 1, &td[o->in[2]])) ||
		    set(e, d, A_OPPW_Y, T_BACKEND_DESCRIPTOR, 1, &y) ||
		    fin(e, d, "pointwise operation"))
			return NULL;
		return d;
	}
	case CG_REDUCTION:
		desc = mk(e, D_REDUCTION);
		if (!desc || set(e, desc, A_RED_OP, T_REDUCTION_OPERATOR, 1, &o->mode) ||
		    set(e, desc, A_RED_COMP, T_DATA_TYPE, 1, &o->comp) || fin(e, desc, "reduction"))
			return NULL;
		d = mk(e, D_OP_REDUCTION);
		if (!d || set(e, d, A_OPRED_DESC, T_BACKEND_DESCRIPTOR, 1, &desc) ||
		    set(e, d, A_OPRED_X, T_BACKEND_DESCRIPTOR, 1, &x) ||
		    set(e, d, A_OPRED_Y, T_BACKEND_DESCRIPTOR, 1, &y) ||
		    fin(e, d, "reduction operation"))
			return NULL;
		return d;
	default:
		d = mk(e, D_OP_RESHAPE);
		if (!d || set(e, d, A_RESHAPE_X, T_BACKEND_DESCRIPTOR, 1, &x) ||
		    set(e, d, A_RESHAPE_Y, T_BACKEND_DESCRIPTOR, 1, &y) ||
		    fin(e, d, "reshape operation"))
			return NULL;
		return d;
	}
}

int cg_emit(const struct cg_api *api, void *handle, const struct cg_graph *g, struct cg_built *b,
	    char *why, size_t whylen)
{
	struct emit e = { api, b, why, whylen };
	void *td[CG_MAXT], *ops[CG_MAXOP];
	memset(b, 0, sizeof(*b));
	if (g->full) {
		snprintf(why, whylen,
			 "the operation graph does not fit (%d tensors, %d operations)", CG_MAXT,
			 CG_MAXOP);
		return -1;
	}
	for (int i = 0; i < g->nt; i++)
		if (!(td[i] = emit_tensor(&e, &g->t[i])))
			return -1;
	for (int i = 0; i < g->nop; i++)
		if (!(ops[i] = emit_op(&e, &g->op[i], td)))
			return -1;
	if (!handle)
		return 0;
	void *gr = mk(&e, D_OPERATIONGRAPH);
	if (!gr || set(&e, gr, A_GRAPH_HANDLE, T_HANDLE, 1, &handle) ||
	    set(&e, gr, A_GRAPH_OPS, T_BACKEND_DESCRIPTOR, g->nop, ops) ||
	    fin(&e, gr, "operation graph"))
		return -1;
	b->graph = gr;
	return 0;
}

void cg_release(const struct cg_api *api, struct cg_built *b)
{
	while (b->nd > 0)
		api->destroy(b->d[--b->nd]);
	b->graph = NULL;
}
