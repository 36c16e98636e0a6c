/*
 * hostops.c — library calls and NVTX ranges -> cpu_op / user_annotation events
 * (doc/capture-any.md §1.4-1.6, §2.4): the indices of one trace's calls and launches, the
 * dtypes and convolution scalars an emit_nvtx op takes from what it encloses, the fwdbwd links
 * of autograd nodes, and hostops_emit's pass over the calls.  The emit_nvtx parser is
 * nvtxmsg.c, the library-call op texts libops.c, CUDA-graph replays replays.c, the torch hook's
 * module ranges pyranges.c.
 */
#include "intercept/hostops.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "intercept/hcall.h"
#include "intercept/hostops-internal.h"
#include "kprof/hmap.h"
#include "kprof/jsonw.h"
#include "kprof/opmodel.h"
#include "kprof/pytree.h"
#include "record/ctrace.h"

/* ---- emitting ---- */

static int cmp_idx_tid_start(const void *a, const void *b, void *arg)
{
	const struct kp_hcall *v = arg;
	const struct kp_hcall *x = &v[*(const size_t *)a], *y = &v[*(const size_t *)b];
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static int cmp_idx_start(const void *a, const void *b, void *arg)
{
	const struct kp_hcall *v = arg;
	const struct kp_hcall *x = &v[*(const size_t *)a], *y = &v[*(const size_t *)b];
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

struct launch {
	uint32_t tid;
	uint64_t t;
	uint32_t corr;
};

static int cmp_launch(const void *a, const void *b)
{
	const struct launch *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->t < y->t ? -1 : x->t > y->t;
}

struct kern {
	uint32_t corr;
	const char *name;
};

static int cmp_kern(const void *a, const void *b)
{
	const struct kern *x = a, *y = b;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

/* PyTorch's type name from a kernel's template arguments, or NULL */
static const char *kernel_dtype(const char *k)
{
	if (strstr(k, "BFloat16") || strstr(k, "bfloat16") || strstr(k, "bf16"))
		return "c10::BFloat16";
	if (strstr(k, "c10::Half") || strstr(k, "__half"))
		return "c10::Half";
	if (strstr(k, "double"))
		return "double";
	if (strstr(k, "float"))
		return "float";
	return NULL;
}

/* A forward op with a seq: where its fwdbwd flow starts, the number of its thread. */
struct fwdop {
	uint64_t start_ns;
	uint32_t pid, tid;
	int64_t thread_no;
	int flowed; /* its first autograd node has its flow */
};

struct ctx {
	struct kp_ctrace *t;
	struct kp_hmap ops; /* op_key(pid, op_id) -> dtype name of the op's output (val.ptr) */
	struct kp_hmap fwd; /* op_key(pid, seq) -> 1 + index in @fw of its latest forward op */
	struct fwdop *fw;
	size_t nfw;
	struct kp_hmap threads; /* pid << 32 | tid -> the number of a forward thread */
	int64_t nthreads;
	size_t *gemm;       /* indices of GEMM calls by (tid, start) */
	size_t ngemm;
	size_t *sdpa; /* indices of cuDNN attention graphs by (tid, start) */
	size_t nsdpa;
	size_t *conv; /* indices of cuDNN convolutions by (tid, start) */
	size_t nconv;
	struct launch *l;
	size_t nl;
	struct kern *k;
	size_t nk;
};

/* The first of @idx[@n] (calls by (tid, start)) at or after range @r's start on its thread. */
static size_t first_call_in(const struct kp_hcall *v, const size_t *idx, size_t n,
			    const struct kp_hcall *r)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct kp_hcall *g = &v[idx[mid]];
		if (g->tid < r->tid || (g->tid == r->tid && g->start_ns < r->start_ns))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first cuDNN attention graph executed inside NVTX range @r on its thread, or NULL. */
static const struct kp_hcall *enclosed_sdpa(const struct ctx *x, const struct kp_hcall *r)
{
	const struct kp_hcall *v = x->t->hcalls;
	size_t lo = first_call_in(v, x->sdpa, x->nsdpa, r);
	if (lo < x->nsdpa) {
		const struct kp_hcall *g = &v[x->sdpa[lo]];
		if (g->tid == r->tid && g->start_ns <= r->end_ns)
			return g;
	}
	return NULL;
}

/* "True" or "False": the is_causal of the attention graph inside @r, NULL when none */
static const char *enclosed_causal(const struct ctx *x, const struct kp_hcall *r)
{
	const struct kp_hcall *g = enclosed_sdpa(x, r);
	return g ? g->sdpa_flags & SDPA_F_CAUSAL ? "True" : "False" : NULL;
}

/*
 * emit_nvtx records sizes, never scalars: an aten convolution op's stride, padding, dilation,
 * transposed, output_padding, groups (and the backward's output_mask) are "[]" in its message,
 * so no model applied ("convolution 'transposed' is not True or False").  The cuDNN
 * convolutions executed inside the range on its thread (HC_CONV: a legacy call or a graph of
 * one conv op, capture/intercept/cudnnrec.c) say them.  A call belongs to the op when its tensors are the
 * op's (the weight always; torch's input and output as below), so a range that encloses other
 * convolutions takes only its own:
 *   convolution (x, w):  CONV_FWD (x, w, y) is a convolution; CONV_BWD_DATA with dy = x is a
 *     transposed one (cuDNN's dgrad computes its output, dx).
 *   convolution_backward (dy, x, w):  not transposed, CONV_BWD_DATA (dx = x, dy) is the grad
 *     input and CONV_BWD_FILTER (x, dy) the grad weight; transposed, CONV_FWD (x = dy, y = x)
 *     is the grad input and CONV_BWD_FILTER (x = dy, dy = x) the grad weight.
 * A grad weight alone with dy and x of one shape fits both; it counts as not transposed, which
 * gives the same FLOPs (the spatial sizes multiplied are equal).  output_mask[2] (the bias
 * gradient, a reduction cuDNN does not run) is False: the op's bytes leave it out, as those of
 * the library ops a capture without NVTX writes (hostops_conv).
 */
struct conv_slots {
	const char *name;
	int bwd;
	int stride, pad, dil, transposed, opad, groups, mask; /* Concrete Inputs slots */
};

/* clang-format off */
static const struct conv_slots conv_ops[] = {
	/* (input, weight, bias, stride, padding, dilation, transposed, output_padding, groups) */
	{ "aten::convolution",          0, 3, 4, 5, 6, 7, 8, -1 },
	{ "aten::_convolution",         0, 3, 4, 5, 6, 7, 8, -1 },
	/* (grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
	 *  output_padding, groups, output_mask) */
	{ "aten::convolution_backward", 1, 4, 5, 6, 7, 8, 9, 10 },
};
/* clang-format on */

/* The Concrete Inputs texts an emit_nvtx conv op takes from its cuDNN calls (conv_fill). */
struct conv_args {
	const char *conc[NVTX_MAX_SLOTS]; /* NULL: "" */
	char buf[7][64];
	const char *from; /* the call's function name */
};

/* cuDNN's dims @cd (int32, @nd of them) are slot @i's */
static int same_dims(const int32_t *cd, int nd, const struct kp_nvtx_msg *m, int i)
{
	if (i >= m->nslots || m->slot[i].nd != nd)
		return 0;
	for (int k = 0; k < nd; k++)
		if (m->slot[i].d[k] != cd[k])
			return 0;
	return 1;
}

enum { CF_PLAIN = 1, CF_TRANSPOSED = 2 };

/*
 * What call @c says of conv op @m (@cs): the forms it allows (CF_*, 0 when it is not the op's)
 * and, for a backward, the gradient it computes in *@grad (0 input, 1 weight).
 */
static int conv_call_fits(const struct kp_hcall *c, const struct kp_nvtx_msg *m,
			  const struct conv_slots *cs, int *grad)
{
	int nd = c->conv_nd + 2;
	if (c->conv_nd < 1 || c->conv_nd > 3 || c->groups < 1)
		return 0;
	if (!cs->bwd) {
		if (!same_dims(c->wd, nd, m, 1))
			return 0;
		if (c->conv_op == CONV_FWD && same_dims(c->xd, nd, m, 0))
			return CF_PLAIN;
		if (c->conv_op == CONV_BWD_DATA && same_dims(c->yd, nd, m, 0))
			return CF_TRANSPOSED;
		return 0;
	}
	if (!same_dims(c->wd, nd, m, 2))
		return 0;
	int plain = same_dims(c->xd, nd, m, 1) && same_dims(c->yd, nd, m, 0);
	int tr = same_dims(c->xd, nd, m, 0) && same_dims(c->yd, nd, m, 1);
	*grad = c->conv_op == CONV_BWD_FILTER;
	switch (c->conv_op) {
	case CONV_BWD_DATA:
		return plain ? CF_PLAIN : 0;
	case CONV_FWD:
		return tr ? CF_TRANSPOSED : 0;
	default:
		return (plain ? CF_PLAIN : 0) | (tr ? CF_TRANSPOSED : 0);
	}
}

static void put_ilist(char *buf, size_t len, const int64_t *v, int n)
{
	size_t o = (size_t)snprintf(buf, len, "[");
	for (int i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%" PRId64, i ? ", " : "", v[i]);
	if (o < len)
		snprintf(buf + o, len - o, "]");
}

/*
 * output_padding of a transposed conv: out - ((in - 1) s - 2p + d(k - 1) + 1) per spatial dim,
 * torch's input @in and output @out; 0 when it is not in [0, max(s, d)) (not what torch took).
 */
static int conv_opad(const struct kp_hcall *c, const int64_t *in, const int32_t *out,
		     int64_t *op)
{
	for (int i = 0; i < c->conv_nd; i++) {
		int64_t s = c->cstride[i], d = c->cdil[i];
		op[i] = out[2 + i] - ((in[2 + i] - 1) * s - 2 * (int64_t)c->cpad[i] +
				      d * (c->wd[2 + i] - 1) + 1);
		if (op[i] < 0 || (op[i] >= s && op[i] >= d))
			return 0;
	}
	return 1;
}

/* The texts of @cs's scalar slots from call @c in form @tr (1 transposed), grads @mask. */
static void conv_texts(struct conv_args *a, const struct conv_slots *cs,
		       const struct kp_nvtx_msg *m, const struct kp_hcall *c, int tr,
		       const int *mask)
{
	int nd = c->conv_nd;
	int64_t v[3][3], op[3] = { 0, 0, 0 };
	for (int i = 0; i < nd; i++)
		v[0][i] = c->cstride[i], v[1][i] = c->cpad[i], v[2][i] = c->cdil[i];
	const int slots[3] = { cs->stride, cs->pad, cs->dil };
	for (int k = 0; k < 3; k++) {
		put_ilist(a->buf[k], sizeof(a->buf[k]), v[k], nd);
		a->conc[slots[k]] = a->buf[k];
	}
	a->conc[cs->transposed] = tr ? "True" : "False";
	/* torch's input and output: (x, cuDNN's dx) forward, (x, dy) backward */
	if (!tr || conv_opad(c, m->slot[cs->bwd ? 1 : 0].d, c->xd, op)) {
		put_ilist(a->buf[3], sizeof(a->buf[3]), op, nd);
		a->conc[cs->opad] = a->buf[3];
	}
	snprintf(a->buf[4], sizeof(a->buf[4]), "%d", (int)c->groups);
	a->conc[cs->groups] = a->buf[4];
	if (cs->mask >= 0) {
		snprintf(a->buf[5], sizeof(a->buf[5]), "[%s, %s, False]",
			 mask[0] ? "True" : "False", mask[1] ? "True" : "False");
		a->conc[cs->mask] = a->buf[5];
	}
	a->from = c->name ? c->name : "cudnn";
}

/*
 * Fill @a for emit_nvtx op @m (range @r) from the cuDNN convolutions inside it; 1 when it
 * did, 0 when @m is no conv op kprof fills or none of its calls is there.
 */
static int conv_fill(const struct ctx *x, const struct kp_hcall *r, const struct kp_nvtx_msg *m,
		     struct conv_args *a)
{
	const struct conv_slots *cs = NULL;
	for (size_t i = 0; i < sizeof(conv_ops) / sizeof(conv_ops[0]); i++)
		if (!strcmp(m->name, conv_ops[i].name))
			cs = &conv_ops[i];
	if (!cs || !m->has_sizes || m->nslots <= (cs->mask >= 0 ? cs->mask : cs->groups))
		return 0;
	const struct kp_hcall *v = x->t->hcalls, *first = NULL;
	int forms = CF_PLAIN | CF_TRANSPOSED, mask[2] = { 0, 0 };
	for (size_t i = first_call_in(v, x->conv, x->nconv, r); i < x->nconv; i++) {
		const struct kp_hcall *c = &v[x->conv[i]];
		if (c->tid != r->tid || c->start_ns > r->end_ns)
			break;
		int grad = 0, f = conv_call_fits(c, m, cs, &grad);
		if (!(f & forms))
			continue;
		forms &= f;
		mask[grad] = 1;
		if (!first)
			first = c;
	}
	if (!first)
		return 0;
	/* both forms only when dy and x have one shape: the same FLOPs (see above) */
	conv_texts(a, cs, m, first, forms == CF_TRANSPOSED, mask);
	return 1;
}

static const char *infer_dtype(const struct ctx *x, const struct kp_hcall *r)
{
	const struct kp_hcall *v = x->t->hcalls;
	size_t lo = 0, hi = x->ngemm;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct kp_hcall *g = &v[x->gemm[mid]];
		if (g->tid < r->tid || (g->tid == r->tid && g->start_ns < r->start_ns))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < x->ngemm) {
		const struct kp_hcall *g = &v[x->gemm[lo]];
		if (g->tid == r->tid && g->start_ns <= r->end_ns && g->m > 0) {
			const char *s = hostops_type_name(g->btype);
			if (*s)
				return s;
		}
	}
	const struct kp_hcall *a = enclosed_sdpa(x, r);
	if (a && *hostops_cudnn_type_name(a->atype))
		return hostops_cudnn_type_name(a->atype);
	/*
	 * a cuDNN convolution inside: its input's type (the first conv of a program, whose input
	 * no op in the trace made, and whose kernel names say no type: "..._f32f32_f32f32_...")
	 */
	lo = first_call_in(v, x->conv, x->nconv, r);
	if (lo < x->nconv) {
		const struct kp_hcall *c = &v[x->conv[lo]];
		if (c->tid == r->tid && c->start_ns <= r->end_ns &&
		    *hostops_cudnn_type_name(c->atype))
			return hostops_cudnn_type_name(c->atype);
	}
	lo = 0, hi = x->nl;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (x->l[mid].tid < r->tid ||
		    (x->l[mid].tid == r->tid && x->l[mid].t < r->start_ns))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, n = 0; i < x->nl && n < 64; i++, n++) {
		if (x->l[i].tid != r->tid || x->l[i].t > r->end_ns)
			break;
		struct kern key = { x->l[i].corr, NULL };
		struct kern *k = bsearch(&key, x->k, x->nk, sizeof(*x->k), cmp_kern);
		const char *s = k ? kernel_dtype(k->name) : NULL;
		if (s)
			return s;
	}
	return "";
}

static int64_t op_key(uint32_t pid, int64_t op_id)
{
	return (int64_t)((uint64_t)pid << 40 ^ (uint64_t)op_id);
}

static const char *producer_dtype(const struct ctx *x, uint32_t pid, int64_t op_id)
{
	if (op_id <= 0)
		return "";
	struct kp_hmap_entry *e = hmap_get_int(&x->ops, op_key(pid, op_id));
	return e ? e->val.ptr : "";
}

/* Each input slot's dtype (@dts), the op's own dtype returned; remembered for consumers. */
static const char *op_dtypes(struct ctx *x, const struct kp_hcall *r, const struct kp_nvtx_msg *m,
			     const char **dts)
{
	const char *own = infer_dtype(x, r);
	for (int i = 0; i < m->ninput_ids && !*own; i++)
		own = producer_dtype(x, r->pid, m->input_op[i]);
	/* kprof's op observer says each input's type: the op's is its kernel's, else its first's */
	int in_msg = 0; /* @own points into @m: not kept in x->ops past this range */
	for (int i = 0; i < m->ndtypes && !*own; i++)
		own = m->dtype[i], in_msg = 1;
	for (int i = 0; i < m->nslots; i++) {
		const char *p = i < m->ninput_ids ? producer_dtype(x, r->pid, m->input_op[i])
			      : i < m->ndtypes	  ? m->dtype[i]
						  : "";
		dts[i] = *p ? p : own;
	}
	if (*own && m->op_id > 0 && !in_msg) {
		int created;
		struct kp_hmap_entry *e = hmap_put_int(&x->ops, op_key(r->pid, m->op_id), &created);
		if (created)
			e->val.ptr = (void *)
				own; /* static or interned; never freed through the map */
	}
	return own;
}

/*
 * The args of range @m: @conc[i] is slot i's Concrete Input (a value the op's library calls
 * say; NULL: ""), @from_key ("kprof is_causal from") names where they came from, @from_val.
 */
static char *nvtx_args(const struct kp_nvtx_msg *m, const char *const *dts, const char *domain,
		       const char *const *conc, const char *from_key, const char *from_val)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	/*
	 * the Sequence number first, right after External id, where torch 2.11 writes it: the
	 * loader looks for it there only (src/ingest/trace-decode.c, read_args)
	 */
	if (m && m->seq >= 0)
		fprintf(f, "\"Sequence number\":%" PRId64 ",", m->seq);
	if (m && m->has_sizes) {
		fputs("\"Input Dims\":[", f);
		for (int i = 0; i < m->nslots; i++) {
			fputs(i ? ",[" : "[", f);
			for (int j = 0; j < m->slot[i].nd; j++)
				fprintf(f, "%s%" PRId64, j ? "," : "", m->slot[i].d[j]);
			putc(']', f);
		}
		fputs("],\"Input type\":[", f);
		for (int i = 0; i < m->nslots; i++) {
			fputs(i ? "," : "", f);
			/* a 0-dim slot is a tensor only when the op observer typed it */
			int typed = m->slot[i].nd > 0 || (i < m->ndtypes && m->dtype[i][0]);
			jw_put_string(f, typed ? dts[i] : "");
		}
		fputs("],\"Concrete Inputs\":[", f);
		for (int i = 0; i < m->nslots; i++) {
			fputs(i ? "," : "", f);
			jw_put_string(f, conc[i] ? conc[i] : "");
		}
		fputs("],", f);
		if (from_key) {
			jw_put_string(f, from_key);
			putc(':', f);
			jw_put_string(f, from_val);
			putc(',', f);
		}
	}
	if (m && m->op_id >= 0)
		fprintf(f, "\"kprof op_id\":%" PRId64 ",", m->op_id);
	fputs("\"kprof source\":\"nvtx\"", f);
	if (domain) {
		fputs(",\"kprof nvtx domain\":", f);
		jw_put_string(f, domain);
	}
	fclose(f);
	return buf;
}

static void ctx_free(struct ctx *x)
{
	free(x->gemm), free(x->sdpa), free(x->conv), free(x->l), free(x->k), free(x->fw);
	hmap_free(&x->ops), hmap_free(&x->fwd), hmap_free(&x->threads);
}

/* The GEMM and attention calls by (tid, start), for the ranges that enclose them. */
static void index_library_calls(struct ctx *x)
{
	const struct kp_ctrace *t = x->t;
	for (size_t i = 0; i < t->nhcalls; i++) {
		if (t->hcalls[i].kind == HC_GEMM)
			x->gemm[x->ngemm++] = i;
		else if (t->hcalls[i].kind == HC_SDPA)
			x->sdpa[x->nsdpa++] = i;
		else if (t->hcalls[i].kind == HC_CONV)
			x->conv[x->nconv++] = i;
	}
	if (x->ngemm)
		qsort_r(x->gemm, x->ngemm, sizeof(*x->gemm), cmp_idx_tid_start, t->hcalls);
	if (x->nsdpa)
		qsort_r(x->sdpa, x->nsdpa, sizeof(*x->sdpa), cmp_idx_tid_start, t->hcalls);
	if (x->nconv)
		qsort_r(x->conv, x->nconv, sizeof(*x->conv), cmp_idx_tid_start, t->hcalls);
}

/* The launches by (tid, time) and the kernels by correlation id, for kernel dtypes. */
static void index_launches(struct ctx *x)
{
	const struct kp_ctrace *t = x->t;
	for (size_t i = 0; i < t->nrecs; i++) {
		const struct kp_rec *r = &t->recs[i];
		if (r->kind == REC_RUNTIME || r->kind == REC_DRIVER)
			x->l[x->nl++] = (struct launch){ r->tid, r->start_ns, r->corr };
		else if (r->kind == REC_KERNEL)
			x->k[x->nk++] = (struct kern){ r->corr, r->name };
	}
	if (x->nl)
		qsort(x->l, x->nl, sizeof(*x->l), cmp_launch);
	if (x->nk)
		qsort(x->k, x->nk, sizeof(*x->k), cmp_kern);
}

/* Allocate and fill @x's indices of @t; -1: out of memory (nothing held). */
static int ctx_index(struct ctx *x, struct kp_ctrace *t)
{
	*x = (struct ctx){ .t = t };
	hmap_init(&x->ops, HMAP_INT);
	hmap_init(&x->fwd, HMAP_INT);
	hmap_init(&x->threads, HMAP_INT);
	x->fw = malloc((t->nhcalls + 1) * sizeof(*x->fw));
	x->gemm = malloc((t->nhcalls + 1) * sizeof(*x->gemm));
	x->sdpa = malloc((t->nhcalls + 1) * sizeof(*x->sdpa));
	x->conv = malloc((t->nhcalls + 1) * sizeof(*x->conv));
	x->l = malloc((t->nrecs + 1) * sizeof(*x->l));
	x->k = malloc((t->nrecs + 1) * sizeof(*x->k));
	if (!x->gemm || !x->sdpa || !x->conv || !x->l || !x->k || !x->fw) {
		ctx_free(x);
		return -1;
	}
	index_library_calls(x);
	index_launches(x);
	return 0;
}

/* The indices of @t's calls in time order (malloc'ed): producers before their consumers. */
static size_t *calls_in_time_order(const struct kp_ctrace *t)
{
	size_t *order = malloc((t->nhcalls + 1) * sizeof(*order));
	if (!order)
		return NULL;
	for (size_t i = 0; i < t->nhcalls; i++)
		order[i] = i;
	qsort_r(order, t->nhcalls, sizeof(*order), cmp_idx_start, t->hcalls);
	return order;
}

static int is_library_op(const struct kp_hcall *c)
{
	return c->kind == HC_GEMM || c->kind == HC_CONV || c->kind == HC_SDPA ||
	       c->kind == HC_CUDNN_GRAPH;
}

/* A library call as a cpu_op: shaped when its call says the shape, else only named. */
static int emit_library_op(struct kp_ctrace *t, const struct kp_hcall *c,
			   struct kp_hostops_stats *st)
{
	const char *name;
	char *args = NULL;
	int shaped = c->kind == HC_GEMM   ? hostops_gemm(c, &name, &args)
		     : c->kind == HC_CONV ? hostops_conv(c, &name, &args)
		     : c->kind == HC_SDPA ? hostops_sdpa(c, &name, &args)
					  : hostops_cudnn_graph(c, &name, &args);
	if (shaped < 0) {
		/* no shape: the call still holds its kernels, without a model */
		st->gemms_unshaped++;
		name = c->name ? c->name : "cublas";
		FILE *f = open_memstream(&args, &(size_t){ 0 });
		if (f) {
			fputs("\"kprof library call\":", f);
			jw_put_string(f, name);
			fclose(f);
		}
	}
	st->gemms++;
	return ctrace_add_span(t, "cpu_op", strdup(name), c->start_ns, c->end_ns, c->pid, c->tid,
			       c->ext, args);
}

/* Parse range @c's message into @m: 0, 1 (no emit_nvtx message) or -1 (warned, counted). */
static int parse_range(const struct kp_hcall *c, struct kp_nvtx_msg *m, struct kp_hostops_stats *st,
		       FILE *warn)
{
	char why[128];
	int p = nvtxmsg_parse(c->name, m, why, sizeof(why));
	if (p < 0) {
		if (warn && st->nvtx_malformed < 5)
			fprintf(warn,
				"kprof: warning: NVTX range '%.120s': %s; kept as an "
				"annotation\n",
				c->name, why);
		st->nvtx_malformed++;
	}
	return p;
}

/* ---- forward and backward ops (doc: doc/attribution.md §2.4) ---- */

/* The number of @pid/@tid as a forward thread: 1, 2, ... in the order they first appear. */
static int64_t thread_no(struct ctx *x, uint32_t pid, uint32_t tid)
{
	int created;
	struct kp_hmap_entry *e = hmap_put_int(&x->threads, (int64_t)((uint64_t)pid << 32 | tid),
					       &created);
	if (created)
		e->val.i = ++x->nthreads;
	return e->val.i;
}

/*
 * Range @c (name @name, seq @seq): a forward op is remembered as the latest of its seq; an
 * autograd node takes the latest forward op of its seq in its process, and the first node of
 * that op gets the fwdbwd flow from it.  Returns the "Fwd thread id": 0 forward, else the
 * number of the forward op's thread (without one: 1, torch's number of the first thread that
 * records); -1 out of memory.
 */
static int64_t fwdbwd_link(struct ctx *x, const struct kp_hcall *c, const char *name, int64_t seq,
			   struct kp_hostops_stats *st)
{
	int64_t key = op_key(c->pid, seq);
	if (!pytree_bwd_node(name) /* "AddmmBackward0", "torch::autograd::CopySlices" */) {
		int created;
		struct kp_hmap_entry *e = hmap_put_int(&x->fwd, key, &created);
		if (created)
			e->val.i = (int64_t)++x->nfw;
		x->fw[e->val.i - 1] = (struct fwdop){ c->start_ns, c->pid, c->tid,
						      thread_no(x, c->pid, c->tid), 0 };
		return 0;
	}
	st->bwd_ops++;
	struct kp_hmap_entry *e = hmap_get_int(&x->fwd, key);
	if (!e)
		return 1;
	struct fwdop *f = &x->fw[e->val.i - 1];
	if (!f->flowed) {
		uint64_t id = (uint64_t)f->thread_no << 48 | ((uint64_t)seq & ((1ull << 48) - 1));
		if (ctrace_add_flow(x->t, 's', id, f->start_ns, f->pid, f->tid) < 0 ||
		    ctrace_add_flow(x->t, 'f', id, c->start_ns, c->pid, c->tid) < 0)
			return -1;
		f->flowed = 1;
		st->bwd_linked++;
	}
	return f->thread_no;
}

/* @args (malloc'ed) with ,"Fwd thread id":@v appended; @v < 0: freed, NULL. */
static char *fwd_thread_arg(char *args, int64_t v)
{
	if (v < 0) {
		free(args);
		return NULL;
	}
	size_t n = strlen(args);
	char *a = realloc(args, n + 48);
	if (!a) {
		free(args);
		return NULL;
	}
	snprintf(a + n, 48, ",\"Fwd thread id\":%" PRId64, v);
	return a;
}

/* A closed NVTX range as a cpu_op (an emit_nvtx op) or a user_annotation. */
static int emit_range(struct ctx *x, const struct kp_hcall *c, struct kp_hostops_stats *st,
		      FILE *warn)
{
	struct kp_nvtx_msg m;
	int p = parse_range(c, &m, st, warn);
	st->nvtx_ranges++;
	/*
	 * An emit_nvtx op is a cpu_op; one of a primary model (matmul, conv, attention)
	 * without shapes stays an annotation, so that the library op inside it counts.
	 */
	int op = p == 0 && !m.label && (m.has_sizes || opmodel_class(m.name) != MODEL_PRIMARY);
	const char *dts[NVTX_MAX_SLOTS] = { 0 };
	if (op && m.has_sizes)
		op_dtypes(x, c, &m, dts);
	/* scalars emit_nvtx does not record, from the library calls inside the range */
	struct conv_args ca = { .conc = { 0 } };
	const char *from_key = NULL;
	int cslot = op && m.has_sizes ? opmodel_causal_slot(m.name) : -1;
	const char *cval = cslot >= 0 ? enclosed_causal(x, c) : NULL;
	if (cval && cslot < m.nslots) {
		ca.conc[cslot] = cval;
		from_key = "kprof is_causal from";
		ca.from = "cudnnBackendExecute";
	} else if (op && conv_fill(x, c, &m, &ca)) {
		from_key = "kprof conv args from";
	}
	/*
	 * kprof's op observer's own texts: the arguments the program passed, over the library
	 * call's; the call is named only while a text of its own is left (the observer writes
	 * no bool list: a backward's output_mask stays the call's)
	 */
	int from_call = 0;
	for (int i = 0; i < NVTX_MAX_SLOTS; i++) {
		int own = op && i < m.nconc && m.conc[i][0];
		from_call |= ca.conc[i] && !own;
		if (own)
			ca.conc[i] = m.conc[i];
	}
	if (!from_call)
		from_key = NULL;
	char *args = nvtx_args(p == 0 && !m.label ? &m : NULL, dts, c->domain, ca.conc, from_key,
			       ca.from);
	if (p == 0 && !m.label && m.seq >= 0 && args)
		args = fwd_thread_arg(args, fwdbwd_link(x, c, m.name, m.seq, st));
	if (op)
		st->nvtx_ops++;
	return ctrace_add_span(x->t, op ? "cpu_op" : "user_annotation",
			       strdup(p == 0    ? m.name
				      : c->name ? c->name
						: ""),
			       c->start_ns, c->end_ns, c->pid, c->tid, c->ext, args);
}

/* One call: a library op, a range, or (never closed) only counted. */
static int emit_call(struct ctx *x, const struct kp_hcall *c, struct kp_hostops_stats *st,
		     FILE *warn)
{
	if (is_library_op(c))
		return emit_library_op(x->t, c, st);
	if (c->kind == HC_DEVALLOC)
		return 0; /* capture/record/cmem.c: which allocations are the program's */
	if (c->flags & HCF_OPEN) {
		st->nvtx_open++;
		return 0;
	}
	if (hostops_is_module_range(c))
		return 0; /* hostops_emit_modules() */
	return emit_range(x, c, st, warn);
}

int hostops_emit(struct kp_ctrace *t, struct kp_hostops_stats *st, FILE *warn)
{
	struct kp_hostops_stats s0;
	if (!st)
		st = &s0;
	memset(st, 0, sizeof(*st));
	struct ctx x;
	if (ctx_index(&x, t) < 0)
		return -1;
	size_t *order = calls_in_time_order(t);
	if (!order) {
		ctx_free(&x);
		return -1;
	}
	int rc = 0;
	for (size_t oi = 0, n = t->nhcalls; oi < n && rc == 0; oi++) {
		const struct kp_hcall c = t->hcalls[order[oi]];
		rc = emit_call(&x, &c, st, warn);
	}
	if (rc == 0)
		rc = hostops_emit_replays(t, st);
	if (rc == 0)
		rc = hostops_emit_modules(t, st);
	free(order);
	ctx_free(&x);
	return rc;
}
