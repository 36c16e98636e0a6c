/*
 * cudnnrec.c — cuDNN 9 backend descriptors as the program set them, and execution plans decoded
 * into kprof's ops (doc/capture-any.md §1.9).  Names and values are cuDNN 9's cudnn_graph.h
 * (declared here: the headers may be absent).  Plan -> engine config -> engine (or the heuristics
 * descriptor that filled the config in) -> operation graph -> operations -> tensors.  A graph of
 * one convolution (and pointwise epilogues) is a convolution; two matmuls with a softmax between
 * them (the exp's inputs lead back to the first) are attention, forward, and four or more are its
 * backward, as cudnn-frontend's CompositeSDPANode / CompositeSDPABackwardNode build them
 * (node/scaled_dot_product_flash_attention.h); a top-left causal mask is gen_index(axis 2) >=
 * gen_index(axis 3) feeding a select (node/diagonal_band_mask.h).  cuDNN's own SDPA operations
 * (UnifiedSDPANode) give Q, K, V and O directly.  Anything else is a graph without a shape.
 */
#include "intercept/cudnnrec.h"

#include <stdlib.h>
#include <string.h>

/* cudnnBackendDescriptorType_t */
/* clang-format off */
enum {
	D_POINTWISE = 0, D_CONVOLUTION = 1, D_ENGINE = 2, D_ENGINECFG = 3, D_ENGINEHEUR = 4,
	D_PLAN = 5, D_OP_CONV_FWD = 10, D_OP_CONV_BWD_FILTER = 11, D_OP_CONV_BWD_DATA = 12,
	D_OP_POINTWISE = 13, D_OPERATIONGRAPH = 15, D_TENSOR = 17, D_MATMUL = 18, D_OP_MATMUL = 19,
	D_REDUCTION = 21, D_OP_REDUCTION = 22, D_OP_RESHAPE = 31, D_OP_SDPA_FWD = 41,
	D_OP_SDPA_BWD = 43
};
/* clang-format on */
/* cudnnBackendAttributeType_t: the ones whose values are kept */
enum {
	T_DATA_TYPE = 1,
	T_BOOLEAN = 2,
	T_INT64 = 3,
	T_CONV_MODE = 7,
	T_POINTWISE_MODE = 14,
	T_BACKEND_DESCRIPTOR = 15,
	T_REDUCTION_OPERATOR = 18,
	T_INT32 = 23
};
/* cudnnBackendAttributeName_t */
/* clang-format off */
enum {
	A_PW_MODE = 0, A_PW_AXIS = 9,
	A_CONV_COMP = 100, A_CONV_DIL = 102, A_CONV_STRIDES = 103, A_CONV_PRE_PAD = 105,
	A_CONV_SPATIAL = 106,
	A_HEUR_GRAPH = 201, A_HEUR_RESULTS = 202, A_CFG_ENGINE = 300, A_PLAN_CFG = 401,
	A_FWD_CONV = 702, A_FWD_W = 703, A_FWD_X = 704, A_FWD_Y = 705,
	A_BD_CONV = 708, A_BD_W = 709, A_BD_DX = 710, A_BD_DY = 711,
	A_BF_CONV = 714, A_BF_DW = 715, A_BF_X = 716, A_BF_DY = 717,
	A_OPPW_DESC = 750, A_OPPW_X = 751, A_OPPW_B = 752, A_OPPW_Y = 753, A_OPPW_T = 758,
	A_GRAPH_OPS = 801,
	A_T_DTYPE = 901, A_T_DIMS = 902, A_T_STRIDES = 903, A_T_UID = 906, A_T_VIRTUAL = 907,
	A_ENGINE_GRAPH = 1300,
	A_OPMM_A = 1520, A_OPMM_B = 1521, A_OPMM_C = 1522,
	A_OPRED_X = 1610, A_OPRED_Y = 1611,
	A_RESHAPE_X = 2200, A_RESHAPE_Y = 2201,
	A_SF_Q = 2800, A_SF_K = 2801, A_SF_V = 2802, A_SF_O = 2803, A_SF_STATS = 2804,
	A_SF_SEQ_Q = 2809, A_SF_SEQ_KV = 2810,
	A_SB_Q = 2851, A_SB_K = 2852, A_SB_V = 2853, A_SB_O = 2854, A_SB_SEQ_Q = 2857,
	A_SB_SEQ_KV = 2858, A_SB_DO = 2862,
};
/* cudnnPointwiseMode_t */
enum {
	PW_ADD = 0, PW_SUB = 9, PW_EXP = 13, PW_CMP_EQ = 300, PW_CMP_GE = 303, PW_CMP_LE = 305,
	PW_GEN_INDEX = 501
};
/* clang-format on */

#define MAXN 4096 /* elements kept of one attribute (an operation graph's operations) */

struct cr_attr {
	int32_t name, type;
	int64_t n;
	int64_t *v; /* values widened to int64; descriptors as addresses */
};

struct opsnap;

struct cr_desc {
	int type;
	int nattr, cap;
	struct cr_attr *a;
	/*
	 * Plans, heuristics and the engine configurations heuristics filled in: 1 @op holds the
	 * op of the graph, -1 none was found, 0 not decoded.  A configuration keeps its graph's
	 * op because cudnn-frontend destroys the heuristics descriptor before it builds plans.
	 */
	int decoded;
	struct kp_hcall op;
	struct opsnap *snap; /* an operation: what it read and wrote, at its finalize */
};

void cr_init(struct cr_store *s)
{
	hmap_init(&s->map, HMAP_PTR);
}

static void desc_free(struct cr_desc *d)
{
	if (!d)
		return;
	for (int i = 0; i < d->nattr; i++)
		free(d->a[i].v);
	free(d->a);
	free(d->snap);
	free(d);
}

void cr_free(struct cr_store *s)
{
	for (struct kp_hmap_entry *e = hmap_next(&s->map, NULL); e; e = hmap_next(&s->map, e))
		desc_free(e->val.ptr);
	hmap_free(&s->map);
}

static struct cr_desc *get(const struct cr_store *s, const void *d)
{
	struct kp_hmap_entry *e = d ? hmap_get_ptr(&s->map, d) : NULL;
	return e ? e->val.ptr : NULL;
}

void cr_create(struct cr_store *s, const void *d, int type)
{
	if (!d)
		return;
	struct cr_desc *r = calloc(1, sizeof(*r));
	if (!r)
		return;
	r->type = type;
	struct kp_hmap_entry *e = hmap_put_ptr(&s->map, d, NULL);
	desc_free(e->val.ptr); /* an address reused after a destroy we did not see */
	e->val.ptr = r;
}

void cr_destroy(struct cr_store *s, const void *d)
{
	struct kp_hmap_entry *e = d ? hmap_get_ptr(&s->map, d) : NULL;
	if (e) {
		desc_free(e->val.ptr);
		e->val.ptr = NULL;
	}
}

static int elem_size(int type)
{
	switch (type) {
	case T_BOOLEAN:
		return 1;
	case T_DATA_TYPE:
	case T_CONV_MODE:
	case T_POINTWISE_MODE:
	case T_REDUCTION_OPERATOR:
	case T_INT32:
		return 4;
	case T_INT64:
		return 8;
	case T_BACKEND_DESCRIPTOR:
		return (int)sizeof(void *);
	default:
		return 0;
	}
}

static int64_t elem(int type, const void *v, int64_t i)
{
	const unsigned char *p = v;
	switch (elem_size(type)) {
	case 1:
		return p[i] != 0;
	case 4: {
		int32_t x;
		memcpy(&x, p + 4 * i, 4);
		return x;
	}
	default: {
		if (type == T_BACKEND_DESCRIPTOR) {
			void *x;
			memcpy(&x, p + sizeof(x) * (size_t)i, sizeof(x));
			return (int64_t)(intptr_t)x;
		}
		int64_t x;
		memcpy(&x, p + 8 * i, 8);
		return x;
	}
	}
}

static void put_attr(struct cr_desc *r, int name, int type, int64_t n, const void *v)
{
	if (!elem_size(type) || n < 0 || n > MAXN || (n && !v))
		return;
	struct cr_attr *a = NULL;
	for (int i = 0; i < r->nattr && !a; i++)
		if (r->a[i].name == name)
			a = &r->a[i];
	if (!a) {
		if (r->nattr == r->cap) {
			int cap = r->cap ? 2 * r->cap : 8;
			struct cr_attr *na = realloc(r->a, (size_t)cap * sizeof(*na));
			if (!na)
				return;
			r->a = na, r->cap = cap;
		}
		a = &r->a[r->nattr++];
		a->v = NULL;
	}
	int64_t *nv = malloc((size_t)(n ? n : 1) * sizeof(*nv));
	if (!nv) {
		a->n = 0;
		return;
	}
	for (int64_t i = 0; i < n; i++)
		nv[i] = elem(type, v, i);
	free(a->v);
	a->name = name, a->type = type, a->n = n, a->v = nv;
}

void cr_set(struct cr_store *s, const void *d, int attr, int type, int64_t n, const void *v)
{
	struct cr_desc *r = get(s, d);
	if (r && (r->type != D_PLAN || r->decoded == 0))
		put_attr(r, attr, type, n, v);
}

static const struct cr_attr *attr(const struct cr_desc *r, int name)
{
	for (int i = 0; r && i < r->nattr; i++)
		if (r->a[i].name == name)
			return &r->a[i];
	return NULL;
}

/* The descriptor an attribute names (its first element), or NULL. */
static const struct cr_desc *ref(const struct cr_store *s, const struct cr_desc *r, int name)
{
	const struct cr_attr *a = attr(r, name);
	return a && a->type == T_BACKEND_DESCRIPTOR && a->n >= 1
		       ? get(s, (const void *)(intptr_t)a->v[0])
		       : NULL;
}

static int64_t ival(const struct cr_desc *r, int name, int64_t dflt)
{
	const struct cr_attr *a = attr(r, name);
	return a && a->n >= 1 ? a->v[0] : dflt;
}

/* ---- tensors and operations, as they were when the operation was finalized ---- */

struct tinfo {
	int64_t uid; /* -1: absent */
	int nd, dtype, virt;
	int64_t dim[8];
};

static void tensor(const struct cr_desc *t, struct tinfo *o)
{
	memset(o, 0, sizeof(*o));
	o->uid = -1;
	const struct cr_attr *d = attr(t, A_T_DIMS);
	if (!t || t->type != D_TENSOR || !d || d->n < 1 || d->n > 8)
		return;
	o->nd = (int)d->n;
	memcpy(o->dim, d->v, (size_t)d->n * sizeof(int64_t));
	o->uid = ival(t, A_T_UID, -1);
	o->dtype = (int)ival(t, A_T_DTYPE, -1);
	o->virt = (int)ival(t, A_T_VIRTUAL, 0);
}

enum { MASK_NONE, MASK_CAUSAL_TL, MASK_CAUSAL_BR, MASK_OTHER };
/* Why a graph is a cudnn::graph (hcall.h CG_WHY_*), returned negated by the decoders. */
#define NROLE 6

/*
 * What an operation reads and writes, taken when it is finalized: cudnn-frontend destroys the
 * pointwise, matmul, reduction and convolution descriptors once the operation holds them, and
 * may drop tensors later.  Roles: inputs first, the output at @out.
 */
struct opsnap {
	int mode, axis; /* pointwise mode and axis, reduction operator; -1 */
	int out;        /* role of the output, -1 */
	int mask;       /* SDPA operations: MASK_* of the graphs they reference */
	int seqlen;     /* SDPA operations: per-batch sequence lengths given */
	struct tinfo t[NROLE];
	int conv_ok; /* convolution descriptor read */
	int64_t spatial, comp, pad[3], str[3], dil[3];
};

/* The attributes of each role of an operation type, and the role of its output. */
static int roles(int type, int a[NROLE])
{
	static const struct {
		int type, out, a[NROLE];
	} tab[] = {
		{ D_OP_MATMUL, 2, { A_OPMM_A, A_OPMM_B, A_OPMM_C } },
		{ D_OP_POINTWISE, 3, { A_OPPW_X, A_OPPW_B, A_OPPW_T, A_OPPW_Y } },
		{ D_OP_REDUCTION, 1, { A_OPRED_X, A_OPRED_Y } },
		{ D_OP_RESHAPE, 1, { A_RESHAPE_X, A_RESHAPE_Y } },
		{ D_OP_CONV_FWD, 2, { A_FWD_X, A_FWD_W, A_FWD_Y } },
		{ D_OP_CONV_BWD_DATA, 0, { A_BD_DX, A_BD_W, A_BD_DY } },
		{ D_OP_CONV_BWD_FILTER, 1, { A_BF_X, A_BF_DW, A_BF_DY } },
		{ D_OP_SDPA_FWD, 3, { A_SF_Q, A_SF_K, A_SF_V, A_SF_O, A_SF_STATS } },
		{ D_OP_SDPA_BWD, -1, { A_SB_Q, A_SB_K, A_SB_V, A_SB_O, 0, A_SB_DO } },
	};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (tab[i].type == type) {
			memcpy(a, tab[i].a, sizeof(tab[i].a));
			return tab[i].out;
		}
	memset(a, 0, NROLE * sizeof(int));
	return -1;
}

static int sub_mask(struct cr_store *s, const struct cr_desc *op);

static struct opsnap *snapshot(struct cr_store *s, const struct cr_desc *o)
{
	struct opsnap *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	int a[NROLE];
	n->out = roles(o->type, a);
	for (int i = 0; i < NROLE; i++)
		tensor(a[i] ? ref(s, o, a[i]) : NULL, &n->t[i]);
	n->mode = n->axis = -1;
	if (o->type == D_OP_POINTWISE) {
		const struct cr_desc *pd = ref(s, o, A_OPPW_DESC);
		n->mode = (int)ival(pd, A_PW_MODE, -1);
		n->axis = (int)ival(pd, A_PW_AXIS, -1);
	}
	const struct cr_desc *cd = o->type == D_OP_CONV_FWD          ? ref(s, o, A_FWD_CONV)
				   : o->type == D_OP_CONV_BWD_DATA   ? ref(s, o, A_BD_CONV)
				   : o->type == D_OP_CONV_BWD_FILTER ? ref(s, o, A_BF_CONV)
								     : NULL;
	const struct cr_attr *pad = attr(cd, A_CONV_PRE_PAD), *str = attr(cd, A_CONV_STRIDES);
	const struct cr_attr *dil = attr(cd, A_CONV_DIL);
	int64_t nd = pad ? pad->n : 0;
	if (cd && nd >= 1 && nd <= 3 && str && str->n == nd && dil && dil->n == nd) {
		n->conv_ok = 1;
		n->spatial = ival(cd, A_CONV_SPATIAL, nd);
		n->comp = ival(cd, A_CONV_COMP, -1);
		for (int i = 0; i < nd; i++)
			n->pad[i] = pad->v[i], n->str[i] = str->v[i], n->dil[i] = dil->v[i];
	}
	if (o->type == D_OP_SDPA_FWD || o->type == D_OP_SDPA_BWD) {
		n->mask = sub_mask(s, o);
		n->seqlen = attr(o, o->type == D_OP_SDPA_BWD ? A_SB_SEQ_Q : A_SF_SEQ_Q) ||
			    attr(o, o->type == D_OP_SDPA_BWD ? A_SB_SEQ_KV : A_SF_SEQ_KV);
	}
	return n;
}

/* ---- operations of a graph ---- */

#define MAXOP 256

struct gop {
	int type, mode, axis;
	const struct opsnap *sn;
	const struct tinfo *in[3], *out; /* NULL when absent */
	int64_t in_uid[3], out_uid;
};

struct graph {
	struct gop op[MAXOP];
	int nop;
	int n_mm, n_pw, n_red, n_conv, n_other;
};

static int load_graph(struct cr_store *s, const struct cr_desc *g, struct graph *G)
{
	memset(G, 0, sizeof(*G));
	const struct cr_attr *ops = attr(g, A_GRAPH_OPS);
	if (!g || g->type != D_OPERATIONGRAPH || !ops || ops->n < 1 || ops->n > MAXOP)
		return -1;
	for (int64_t i = 0; i < ops->n; i++) {
		struct cr_desc *o = get(s, (const void *)(intptr_t)ops->v[i]);
		if (!o)
			return -1;
		if (!o->snap && !(o->snap = snapshot(s, o)))
			return -1;
		const struct opsnap *n = o->snap;
		struct gop *p = &G->op[G->nop++];
		p->type = o->type, p->sn = n, p->mode = n->mode, p->axis = n->axis;
		for (int r = 0, k = 0; r < NROLE; r++) {
			if (r == n->out)
				p->out = n->t[r].nd ? &n->t[r] : NULL;
			else if (k < 3 && o->type != D_OP_SDPA_FWD && o->type != D_OP_SDPA_BWD)
				p->in[k++] = n->t[r].nd ? &n->t[r] : NULL;
		}
		for (int k = 0; k < 3; k++)
			p->in_uid[k] = p->in[k] ? p->in[k]->uid : -1;
		p->out_uid = p->out ? p->out->uid : -1;
		switch (o->type) {
		case D_OP_MATMUL:
			G->n_mm++;
			break;
		case D_OP_POINTWISE:
			G->n_pw++;
			break;
		case D_OP_REDUCTION:
			G->n_red++;
			break;
		case D_OP_CONV_FWD:
		case D_OP_CONV_BWD_DATA:
		case D_OP_CONV_BWD_FILTER:
			G->n_conv++;
			break;
		default:
			G->n_other++;
			break;
		}
	}
	return 0;
}

/* The operation writing tensor @uid, or -1. */
static int producer(const struct graph *G, int64_t uid)
{
	for (int i = 0; uid >= 0 && i < G->nop; i++)
		if (G->op[i].out_uid == uid)
			return i;
	return -1;
}

/*
 * The matmuls whose outputs reach op @i's inputs through non-matmul operations: a bit set over
 * @G's matmul indices (the first 64 ops), 0 when none.
 */
static uint64_t matmuls_before(const struct graph *G, int i, unsigned char *seen)
{
	uint64_t m = 0;
	for (int k = 0; k < 3; k++) {
		int p = producer(G, G->op[i].in_uid[k]);
		if (p < 0 || seen[p])
			continue;
		seen[p] = 1;
		if (G->op[p].type == D_OP_MATMUL)
			m |= p < 64 ? (uint64_t)1 << p : 0;
		else
			m |= matmuls_before(G, p, seen);
	}
	return m;
}

/*
 * Follow tensor @uid back through pointwise ADD/SUB (the diagonal shifts) to a GEN_INDEX: its
 * axis, or -1; *@shifts counts the ADD/SUB passed.
 */
static int index_axis(const struct graph *G, int64_t uid, int *shifts)
{
	for (int hop = 0; hop < 8; hop++) {
		int p = producer(G, uid);
		if (p < 0 || G->op[p].type != D_OP_POINTWISE)
			return -1;
		if (G->op[p].mode == PW_GEN_INDEX)
			return G->op[p].axis;
		if (G->op[p].mode != PW_ADD && G->op[p].mode != PW_SUB)
			return -1;
		(*shifts)++;
		uid = G->op[p].in_uid[0];
	}
	return -1;
}

/* What the comparisons against generated indices of @G mask. */
static int mask_kind(const struct graph *G)
{
	int kind = MASK_NONE, n = 0;
	for (int i = 0; i < G->nop; i++) {
		const struct gop *o = &G->op[i];
		if (o->type != D_OP_POINTWISE || o->mode < PW_CMP_EQ || o->mode > PW_CMP_LE)
			continue;
		int sx = 0, sb = 0;
		int ax = index_axis(G, o->in_uid[0], &sx), ab = index_axis(G, o->in_uid[1], &sb);
		if (ax < 0 && ab < 0)
			continue;
		n++;
		if (o->mode == PW_CMP_GE && ax == 2 && ab == 3 && sb == 0 && (sx == 0 || sx == 2))
			kind = sx == 0 ? MASK_CAUSAL_TL : MASK_CAUSAL_BR;
		else
			kind = MASK_OTHER; /* a padding mask, a sliding window, a shifted band */
	}
	return n > 1 ? MASK_OTHER : kind;
}

/* The mask of the operation graphs an SDPA operation names (its score-modifier subgraph). */
static int sub_mask(struct cr_store *s, const struct cr_desc *op)
{
	static int depth; /* a subgraph holding SDPA operations that name graphs in turn */
	int kind = MASK_NONE;
	if (depth > 1)
		return MASK_OTHER;
	depth++;
	for (int i = 0; i < op->nattr; i++) {
		const struct cr_attr *a = &op->a[i];
		if (a->type != T_BACKEND_DESCRIPTOR)
			continue;
		for (int64_t j = 0; j < a->n; j++) {
			const struct cr_desc *g = get(s, (const void *)(intptr_t)a->v[j]);
			struct graph *G;
			if (!g || g->type != D_OPERATIONGRAPH || !(G = malloc(sizeof(*G))))
				continue;
			if (load_graph(s, g, G) == 0) {
				int k = mask_kind(G);
				kind = kind == MASK_NONE ? k : k == MASK_NONE ? kind : MASK_OTHER;
			}
			free(G);
		}
	}
	depth--;
	return kind;
}

/* ---- convolution ---- */

static void dims32(int32_t *o, const struct tinfo *t)
{
	for (int i = 0; i < 5; i++)
		o[i] = i < t->nd ? (int32_t)t->dim[i] : 0;
}

static int decode_conv(const struct graph *G, struct kp_hcall *c)
{
	const struct gop *o = NULL;
	for (int i = 0; i < G->nop && !o; i++)
		if (G->op[i].type >= D_OP_CONV_FWD && G->op[i].type <= D_OP_CONV_BWD_DATA)
			o = &G->op[i];
	const struct opsnap *n = o->sn;
	const struct tinfo *x = &n->t[0], *w = &n->t[1], *y = &n->t[2];
	int nd = x->nd - 2;
	if (!n->conv_ok || nd < 1 || nd > 3 || w->nd != x->nd || y->nd != x->nd ||
	    n->spatial != nd || w->dim[1] < 1 || x->dim[1] % w->dim[1] != 0)
		return -CG_WHY_SHAPES;
	c->kind = HC_CONV;
	c->conv_op = o->type == D_OP_CONV_FWD        ? CONV_FWD
		     : o->type == D_OP_CONV_BWD_DATA ? CONV_BWD_DATA
						     : CONV_BWD_FILTER;
	c->conv_nd = nd;
	c->groups = (int32_t)(x->dim[1] / w->dim[1]);
	dims32(c->xd, x), dims32(c->wd, w), dims32(c->yd, y);
	c->atype = x->dtype, c->btype = w->dtype, c->dtype = y->dtype;
	c->compute = (int32_t)n->comp;
	for (int i = 0; i < nd; i++)
		c->cpad[i] = (int16_t)n->pad[i], c->cstride[i] = (int16_t)n->str[i],
		c->cdil[i] = (int16_t)n->dil[i];
	return 0;
}

/* ---- attention ---- */

static int sdpa_fill(struct kp_hcall *c, const struct tinfo *q, const struct tinfo *k, int kt,
		     int64_t sk, int64_t dv, int bwd, int mask, int stats)
{
	int64_t hkv = k->dim[1], d = q->dim[3];
	if (q->nd != 4 || k->nd != 4 || q->dim[0] != k->dim[0] ||
	    (kt ? k->dim[2] : k->dim[3]) != d || hkv < 1 || q->dim[1] % hkv != 0 || sk < 1 ||
	    dv < 1 || d < 1 || q->dim[2] < 1)
		return -CG_WHY_SHAPES;
	if (mask == MASK_OTHER || (mask == MASK_CAUSAL_BR && q->dim[2] != sk))
		return -CG_WHY_MASK;
	c->kind = HC_SDPA;
	c->atype = q->dtype;
	c->sdpa_flags = (bwd ? SDPA_F_BWD : 0) | (mask != MASK_NONE ? SDPA_F_CAUSAL : 0) |
			(stats ? SDPA_F_STATS : 0);
	int64_t v[7] = { q->dim[0], q->dim[1], hkv, q->dim[2], sk, d, dv };
	memcpy(c->sd, v, sizeof(v));
	return 0;
}

/* An additive bias [.., sq, sk] read by a pointwise ADD on the scores. */
static int has_bias(const struct graph *G, int64_t sq, int64_t sk)
{
	for (int i = 0; i < G->nop; i++) {
		const struct gop *o = &G->op[i];
		const struct tinfo *b = o->in[1];
		if (o->type == D_OP_POINTWISE && o->mode == PW_ADD && b && !b->virt && b->nd == 4 &&
		    b->dim[2] == sq && b->dim[3] == sk)
			return 1;
	}
	return 0;
}

static int is4(const struct tinfo *t)
{
	return t && t->nd == 4;
}

static int decode_composite(const struct graph *G, struct kp_hcall *c)
{
	int exp = -1, smm = -1;
	for (int i = 0; i < G->nop && exp < 0; i++)
		if (G->op[i].type == D_OP_POINTWISE && G->op[i].mode == PW_EXP)
			exp = i;
	if (exp < 0 || G->nop > 64)
		return -CG_WHY_NO_SOFTMAX;
	unsigned char seen[MAXOP] = { 0 };
	uint64_t m = matmuls_before(G, exp, seen);
	if (!m || (m & (m - 1)))
		return -CG_WHY_SCORES; /* no single matmul feeds the softmax */
	smm = __builtin_ctzll(m);
	const struct tinfo *q = G->op[smm].in[0], *kt = G->op[smm].in[1], *sc = G->op[smm].out;
	if (!is4(q) || !is4(kt) || !is4(sc) || sc->dim[1] != q->dim[1])
		return -CG_WHY_SHAPES;
	int64_t sk = sc->dim[3], dv = -1;
	int bwd = G->n_mm >= 4, stats = 0;
	for (int i = 0; i < G->nop; i++) {
		const struct tinfo *a = G->op[i].in[0], *b = G->op[i].in[1], *o = G->op[i].out;
		if (i == smm || G->op[i].type != D_OP_MATMUL || !is4(a) || !is4(b))
			continue;
		if (!bwd && b->dim[2] == sk)
			dv = b->dim[3]; /* O = P V */
		else if (bwd && is4(o) && o->dim[2] == q->dim[2] && o->dim[3] == sk &&
			 b->dim[3] == sk)
			dv = b->dim[2]; /* dP = dO V^T */
	}
	if (bwd && dv < 0)
		dv = q->dim[3];
	if (!bwd && G->n_mm != 2)
		return -CG_WHY_NO_SOFTMAX;
	for (int i = 0; i < G->nop && !bwd; i++) {
		const struct tinfo *t = G->op[i].out;
		if (G->op[i].type != D_OP_MATMUL && is4(t) && !t->virt && t->dim[2] == q->dim[2] &&
		    t->dim[3] == 1)
			stats = 1;
	}
	int rc = sdpa_fill(c, q, kt, 1, sk, dv, bwd, mask_kind(G), stats);
	if (rc)
		return rc;
	if (has_bias(G, q->dim[2], sk))
		c->sdpa_flags |= SDPA_F_BIAS;
	return 0;
}

static int decode_unified(const struct gop *o, struct kp_hcall *c)
{
	int bwd = o->type == D_OP_SDPA_BWD;
	const struct opsnap *n = o->sn;
	const struct tinfo *q = &n->t[0], *k = &n->t[1], *v = &n->t[2];
	if (!is4(q) || !is4(k) || !is4(v))
		return -CG_WHY_SHAPES;
	if (n->seqlen)
		return -CG_WHY_VARLEN;   /* per-batch lengths */
	int kt = k->dim[3] != q->dim[3]; /* K given transposed, [b, hkv, d, sk] */
	int64_t sk = kt ? k->dim[3] : k->dim[2];
	int64_t dv = v->dim[2] == sk ? v->dim[3] : v->dim[2];
	return sdpa_fill(c, q, k, kt, sk, dv, bwd, n->mask, !bwd && n->t[4].nd > 0);
}

static int decode_graph(struct cr_store *s, const struct cr_desc *g, struct kp_hcall *c)
{
	struct graph *G = malloc(sizeof(*G));
	if (!G)
		return -1;
	int rc = -CG_WHY_OTHER;
	if (load_graph(s, g, G) == 0) {
		int other = G->n_other;
		for (int i = 0; i < G->nop; i++)
			if (G->op[i].type == D_OP_RESHAPE)
				other--;
		if (G->n_conv == 1 && G->n_mm == 0 && G->n_red == 0 && G->n_other == 0)
			rc = decode_conv(G, c);
		else if (G->nop == 1 &&
			 (G->op[0].type == D_OP_SDPA_FWD || G->op[0].type == D_OP_SDPA_BWD))
			rc = decode_unified(&G->op[0], c);
		else if (G->n_conv == 0 && other == 0 && G->n_mm >= 2)
			rc = decode_composite(G, c);
		if (rc != 0) {
			memset(c, 0, sizeof(*c));
			c->kind = HC_CUDNN_GRAPH;
			int64_t n[7] = { G->n_mm, G->n_pw, G->n_red, G->n_conv, G->n_other, -rc, 0 };
			memcpy(c->sd, n, sizeof(n));
			rc = 0;
		}
	} else {
		rc = -1;
	}
	free(G);
	return rc;
}

/* @r (a graph, heuristics, configuration or plan) takes the op of operation graph @g. */
static void decode_into(struct cr_store *s, struct cr_desc *g, struct cr_desc *r)
{
	if (g && g->type == D_OPERATIONGRAPH && !g->decoded) {
		memset(&g->op, 0, sizeof(g->op));
		g->decoded = decode_graph(s, g, &g->op) == 0 ? 1 : -1;
	}
	r->decoded = g && g->type == D_OPERATIONGRAPH ? g->decoded : -1;
	r->op = r->decoded == 1 ? g->op : r->op;
}

void cr_got(struct cr_store *s, const void *d, int attr_name, int type, int64_t got, const void *v)
{
	struct cr_desc *h = get(s, d);
	if (!h || h->type != D_ENGINEHEUR || attr_name != A_HEUR_RESULTS ||
	    type != T_BACKEND_DESCRIPTOR)
		return;
	if (!h->decoded)
		decode_into(s, (struct cr_desc *)ref(s, h, A_HEUR_GRAPH), h);
	for (int64_t i = 0; i < got && i < MAXN; i++) {
		struct cr_desc *c = get(s, (const void *)(intptr_t)elem(type, v, i));
		if (c && c->type == D_ENGINECFG) {
			c->decoded = h->decoded;
			c->op = h->op;
		}
	}
}

void cr_finalize(struct cr_store *s, const void *d)
{
	struct cr_desc *p = get(s, d);
	if (!p)
		return;
	switch (p->type) {
	case D_OP_MATMUL:
	case D_OP_POINTWISE:
	case D_OP_REDUCTION:
	case D_OP_RESHAPE:
	case D_OP_CONV_FWD:
	case D_OP_CONV_BWD_DATA:
	case D_OP_CONV_BWD_FILTER:
	case D_OP_SDPA_FWD:
	case D_OP_SDPA_BWD:
		free(p->snap);
		p->snap = snapshot(s, p);
		return;
	case D_OPERATIONGRAPH:
		if (!p->decoded)
			decode_into(s, p, p);
		return;
	case D_PLAN:
		break;
	default:
		return;
	}
	if (p->decoded)
		return;
	const struct cr_desc *cfg = ref(s, p, A_PLAN_CFG);
	const struct cr_desc *eng = ref(s, cfg, A_CFG_ENGINE);
	if (eng) {
		decode_into(s, (struct cr_desc *)ref(s, eng, A_ENGINE_GRAPH), p);
	} else if (cfg && cfg->decoded) {
		p->decoded = cfg->decoded;
		p->op = cfg->op;
	} else {
		p->decoded = -1;
	}
}

int cr_plan(const struct cr_store *s, const void *plan, struct kp_hcall *c)
{
	const struct cr_desc *p = get(s, plan);
	if (!p || p->decoded != 1)
		return -1;
	c->kind = p->op.kind;
	c->conv_op = p->op.conv_op, c->conv_nd = p->op.conv_nd, c->groups = p->op.groups;
	memcpy(c->xd, p->op.xd, sizeof(c->xd));
	memcpy(c->wd, p->op.wd, sizeof(c->wd));
	memcpy(c->yd, p->op.yd, sizeof(c->yd));
	memcpy(c->cpad, p->op.cpad, sizeof(c->cpad));
	memcpy(c->cstride, p->op.cstride, sizeof(c->cstride));
	memcpy(c->cdil, p->op.cdil, sizeof(c->cdil));
	c->atype = p->op.atype, c->btype = p->op.btype, c->dtype = p->op.dtype;
	c->compute = p->op.compute;
	c->sdpa_flags = p->op.sdpa_flags;
	memcpy(c->sd, p->op.sd, sizeof(c->sd));
	return 0;
}
