/*
 * fwdbwd.c — forward/backward links that give a convolution model the shapes its own op
 * does not record.
 *
 * Traces before Concrete Inputs (PyTorch 1.8-2.0) leave a convolution's stride and padding
 * empty, so its output size cannot be derived.  Its backward records grad_output, whose
 * shape is exactly the forward's output.  The link: the forward op and the autograd node
 * that runs its backward share a "Sequence number" (thread-local on the forward thread;
 * the node adds "Fwd thread id", a profiler thread number that names no tid of the trace,
 * so equal input and weight shapes settle collisions between forward threads).
 */
#include "kprof/fwdbwd.h"

#include <stdlib.h>
#include <string.h>

#include "kprof/arena.h"
#include "kprof/par.h"

/* Backward conv ops and the slots of their grad_output, input and weight (-1 none). */
static const struct {
	const char *name;
	int dy, x, w;
} bwd_ops[] = {
	{ "aten::convolution_backward", 0, 1, 2 },
	{ "aten::cudnn_convolution_backward", 1, 0, 2 },
	{ "aten::miopen_convolution_backward", 1, 0, 2 },
	{ "aten::cudnn_convolution_backward_input", 1, -1, 2 },
	{ "aten::cudnn_convolution_backward_weight", 1, 2, -1 },
};

static int bwd_kind(const char *name)
{
	for (size_t k = 0; k < sizeof(bwd_ops) / sizeof(bwd_ops[0]); k++)
		if (!strcmp(name, bwd_ops[k].name))
			return (int)k;
	return -1;
}

static const struct kp_slot *tensor_slot(const struct kp_op *op, int i)
{
	if (i < 0 || i >= op->nslots || op->slots[i].dtype == DT_NONE || op->slots[i].nlist)
		return NULL;
	return &op->slots[i];
}

static int same_dims(const struct kp_slot *a, const struct kp_slot *b)
{
	return a && b && a->ndim == b->ndim &&
	       !memcmp(a->dims, b->dims, (size_t)a->ndim * sizeof(*a->dims));
}

/* Op @i's "Sequence number" (the loader keeps it where trace_keeps_seq()), -1 */
static int64_t op_seq(const struct kp_trace *t, int32_t i)
{
	return trace_opx(t, &t->ops[i])->seq;
}

/* An autograd node of a convolution. */
static int conv_node(const struct kp_trace *t, int32_t i)
{
	const struct kp_op *op = &t->ops[i];
	return op_seq(t, i) >= 0 && trace_conv_bwd_node(op->name);
}

struct pair {
	int64_t seq;
	int32_t op;
};

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->op < y->op ? -1 : x->op > y->op;
}

/* Ops cut into ranges; range k's pairs are written from b + lo and f + lo (lo its start). */
struct scan {
	const struct kp_trace *t;
	struct pair *b, *f;
	size_t *nb, *nf; /* per range */
	size_t nranges;
};

/* Range k: its backward conv ops with their node's sequence number, its forward convs. */
static void scan_range(void *arg, size_t k)
{
	struct scan *s = arg;
	const struct kp_trace *t = s->t;
	size_t lo = t->nops * k / s->nranges, hi = t->nops * (k + 1) / s->nranges;
	struct pair *b = s->b + lo, *f = s->f + lo;
	size_t nb = 0, nf = 0;
	for (size_t i = lo; i < hi; i++) {
		const struct kp_op *op = &t->ops[i];
		if (op->cls != MODEL_PRIMARY && strncmp(op->name, "aten::cudnn_conv", 16) &&
		    strncmp(op->name, "aten::miopen_conv", 17))
			continue;
		int kind = bwd_kind(op->name);
		if (kind >= 0) {
			/* the sequence number of the nearest autograd node above it */
			int32_t p = op->parent;
			for (int depth = 0; p >= 0 && depth < 8 && !conv_node(t, p); depth++)
				p = t->ops[p].parent;
			if (p >= 0 && conv_node(t, p) && tensor_slot(op, bwd_ops[kind].dy))
				b[nb++] = (struct pair){ op_seq(t, p), (int32_t)i };
		} else if (op_seq(t, (int32_t)i) >= 0 && trace_conv_fwd_op(op->name)) {
			f[nf++] = (struct pair){ op_seq(t, (int32_t)i), (int32_t)i };
		}
	}
	s->nb[k] = nb;
	s->nf[k] = nf;
}

/*
 * The pairs of all ops in op order (ranges scanned on t->jobs threads, then joined in order):
 * *nb backward pairs in b, *nf forward pairs in f.
 */
static void scan_ops(const struct kp_trace *t, struct pair *b, size_t *nb, struct pair *f,
		     size_t *nf)
{
	size_t nr = t->nops / 4096 + 1;
	nr = t->jobs > 1 && nr > 4 * (size_t)t->jobs ? 4 * (size_t)t->jobs : t->jobs > 1 ? nr : 1;
	size_t *counts = xmalloc(2 * nr * sizeof(*counts));
	struct scan s = { t, b, f, counts, counts + nr, nr };
	par_run(t->jobs, nr, scan_range, &s);
	*nb = *nf = 0;
	for (size_t k = 0; k < nr; k++) {
		size_t lo = t->nops * k / nr;
		memmove(b + *nb, b + lo, s.nb[k] * sizeof(*b));
		memmove(f + *nf, f + lo, s.nf[k] * sizeof(*f));
		*nb += s.nb[k];
		*nf += s.nf[k];
	}
	free(counts);
}

void fwdbwd_link(struct kp_trace *t)
{
	/* interned names: test each distinct pointer once per pass via the first op's result */
	struct pair *b = xmalloc((t->nops + 1) * sizeof(*b)),
		    *f = xmalloc((t->nops + 1) * sizeof(*f));
	size_t nb, nf;
	scan_ops(t, b, &nb, f, &nf);
	if (nb && nf) {
		qsort(b, nb, sizeof(*b), cmp_pair);
		qsort(f, nf, sizeof(*f), cmp_pair);
		size_t j = 0;
		for (size_t i = 0; i < nf; i++) {
			struct kp_op *fo = &t->ops[f[i].op];
			const struct kp_slot *x = tensor_slot(fo, 0), *w = tensor_slot(fo, 1);
			while (j < nb && b[j].seq < f[i].seq)
				j++;
			/* among the backward ops of this sequence number, one whose shapes agree */
			for (size_t k = j; k < nb && b[k].seq == f[i].seq; k++) {
				const struct kp_op *bo = &t->ops[b[k].op];
				int kind = bwd_kind(bo->name);
				const struct kp_slot *bx = tensor_slot(bo, bwd_ops[kind].x);
				const struct kp_slot *bw = tensor_slot(bo, bwd_ops[kind].w);
				if ((bx || bw) && (!bx || same_dims(bx, x)) &&
				    (!bw || same_dims(bw, w))) {
					trace_opx_of(t, fo)->bwd = b[k].op;
					break;
				}
			}
		}
	}
	free(b);
	free(f);
}

void fwdbwd_inputs(const struct kp_trace *t, int32_t i, struct kp_op_in *in)
{
	const struct kp_op *op = &t->ops[i];
	in->linked_out = in->linked_x = in->linked_w = NULL;
	int32_t bwd = trace_opx(t, op)->bwd;
	if (bwd >= 0) {
		const struct kp_op *bo = &t->ops[bwd];
		in->linked_out = tensor_slot(bo, bwd_ops[bwd_kind(bo->name)].dy);
	}
	if (op->parent >= 0 && (!strcmp(op->name, "aten::cudnn_convolution_backward_input") ||
				!strcmp(op->name, "aten::cudnn_convolution_backward_weight"))) {
		const struct kp_op *p = &t->ops[op->parent];
		if (!strcmp(p->name, "aten::cudnn_convolution_backward")) {
			in->linked_x = tensor_slot(p, 0);
			in->linked_w = tensor_slot(p, 2);
		}
	}
}
