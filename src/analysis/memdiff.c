/*
 * memdiff.c — two memory analyses compared per GPU device (include/kprof/memdiff.h).
 */
#include "kprof/memdiff.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/arena.h"
#include "kprof/memory-doc.h"

/* the k-th device of @m (GPU devices only) with @d's type and id: 0 for the first */
static size_t nth_of_kind(const struct kp_memrep *m, size_t i)
{
	size_t k = 0;
	for (size_t j = 0; j < i; j++)
		k += m->devs[j].dev_type == m->devs[i].dev_type &&
		     m->devs[j].dev_id == m->devs[i].dev_id;
	return k;
}

/* the GPU device of @m that pairs with device @i of @other; -1 none */
static long pair_of(const struct kp_memrep *m, const struct kp_memrep *other, size_t i)
{
	const struct kp_mem_dev *d = &other->devs[i];
	size_t k = nth_of_kind(other, i);
	for (size_t j = 0; j < m->ngpu; j++)
		if (m->devs[j].dev_type == d->dev_type && m->devs[j].dev_id == d->dev_id &&
		    nth_of_kind(m, j) == k)
			return (long)j;
	return -1;
}

/* one side's live-at-peak row, tagged with its side, for the merge by op name */
struct tagged {
	const char *op;
	int side;
	int64_t bytes;
};

static int cmp_tagged(const void *a, const void *b)
{
	return strcmp(((const struct tagged *)a)->op, ((const struct tagged *)b)->op);
}

static int cmp_op(const void *a, const void *b)
{
	const struct kp_memdiff_op *x = a, *y = b;
	if (x->delta_bytes != y->delta_bytes)
		return x->delta_bytes > y->delta_bytes ? -1 : 1;
	return strcmp(x->op, y->op);
}

/* the ops live at either peak, bytes summed over modules, paired by name */
static void join_ops(struct kp_memdiff_dev *md)
{
	size_t n = md->base->nlive + md->new->nlive, k = 0;
	struct tagged *t = xcalloc(n + 1, sizeof(*t));
	for (int s = 0; s < 2; s++) {
		const struct kp_mem_dev *d = s ? md->new : md->base;
		for (size_t i = 0; i < d->nlive; i++)
			t[k++] = (struct tagged){ d->live[i].op, s, d->live[i].bytes };
	}
	qsort(t, n, sizeof(*t), cmp_tagged);
	md->ops = xcalloc(n + 1, sizeof(*md->ops));
	for (size_t i = 0; i < n; i++) {
		if (!md->nops || strcmp(md->ops[md->nops - 1].op, t[i].op))
			md->ops[md->nops++] = (struct kp_memdiff_op){ .op = t[i].op };
		struct kp_memdiff_op *o = &md->ops[md->nops - 1];
		if (t[i].side)
			o->new_bytes += t[i].bytes;
		else
			o->base_bytes += t[i].bytes;
		o->delta_bytes = o->new_bytes - o->base_bytes;
	}
	free(t);
	qsort(md->ops, md->nops, sizeof(*md->ops), cmp_op);
}

static double ratio(int64_t b, int64_t n)
{
	return b > 0 ? (double)n / (double)b : -1;
}

static void fill_dev(struct kp_memdiff_dev *md)
{
	md->base_alloc = md->base ? md->base->peak_alloc : 0;
	md->new_alloc = md->new ? md->new->peak_alloc : 0;
	md->base_res = md->base ? md->base->peak_res : -1;
	md->new_res = md->new ? md->new->peak_res : -1;
	md->delta_alloc = md->new_alloc - md->base_alloc;
	md->ratio_alloc = md->base && md->new ? ratio(md->base_alloc, md->new_alloc) : -1;
	int res = md->base_res >= 0 && md->new_res >= 0;
	md->delta_res = res ? md->new_res - md->base_res : 0;
	md->ratio_res = res ? ratio(md->base_res, md->new_res) : -1;
	md->live_known = md->base && md->new && !md->base->bytes_only && !md->new->bytes_only;
	if (md->live_known)
		join_ops(md);
}

/* Each device's name as the memory report of its side names it (memory_dev_label; a pair:
 * the base's). */
static void label_devs(struct kp_memdiff *md, const struct kp_memrep *b, const struct kp_memrep *n)
{
	for (size_t i = 0; i < md->ndevs; i++) {
		struct kp_memdiff_dev *d = &md->devs[i];
		memory_dev_label(d->base ? b : n, d->base ? d->base : d->new, d->label,
				 sizeof(d->label));
	}
}

void memdiff_join(struct kp_memdiff *md, const struct kp_memrep *b, const struct kp_memrep *n)
{
	memset(md, 0, sizeof(*md));
	md->devs = xcalloc(b->ngpu + n->ngpu + 1, sizeof(*md->devs));
	for (size_t i = 0; i < b->ngpu; i++) {
		long j = pair_of(n, b, i);
		md->devs[md->ndevs++] = (struct kp_memdiff_dev){
			.base = &b->devs[i], .new = j >= 0 ? &n->devs[j] : NULL
		};
	}
	for (size_t i = 0; i < n->ngpu; i++)
		if (pair_of(b, n, i) < 0)
			md->devs[md->ndevs++] = (struct kp_memdiff_dev){ .new = &n->devs[i] };
	for (size_t i = 0; i < md->ndevs; i++)
		fill_dev(&md->devs[i]);
	label_devs(md, b, n);
}

size_t memdiff_gate(const struct kp_memdiff *md, double limit_pct, struct kp_memgate_hit *hits,
		    size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < md->ndevs; i++) {
		const struct kp_memdiff_dev *d = &md->devs[i];
		double pct;
		if (!d->new)
			continue;
		if (!d->base) {
			if (d->new_alloc <= 0)
				continue;
			pct = NAN;
		} else if (d->base_alloc > 0) {
			pct = 100.0 * (double)d->delta_alloc / (double)d->base_alloc;
			if (!(pct > limit_pct))
				continue;
		} else if (d->new_alloc > 0) {
			pct = NAN; /* from nothing */
		} else {
			continue;
		}
		if (n < cap)
			hits[n] = (struct kp_memgate_hit){ d, pct, limit_pct };
		n++;
	}
	return n;
}

void memdiff_gate_message(const struct kp_memgate_hit *h, size_t nops, char *buf, size_t cap)
{
	const struct kp_memdiff_dev *d = h->dev;
	const char *dn = d->label;
	char b0[32], b1[32];
	size_t n;
	if (!d->base)
		n = snprintf(buf, cap, "%s (new) peak allocated %s, limit %g%%", dn,
			     memory_bytes(b1, sizeof(b1), d->new_alloc), h->limit_pct);
	else if (isnan(h->change_pct))
		n = snprintf(buf, cap, "%s peak allocated %s -> %s (from nothing), limit %g%%", dn,
			     memory_bytes(b0, sizeof(b0), d->base_alloc),
			     memory_bytes(b1, sizeof(b1), d->new_alloc), h->limit_pct);
	else
		n = snprintf(buf, cap, "%s peak allocated %s -> %s (%+.1f%%), limit %g%%", dn,
			     memory_bytes(b0, sizeof(b0), d->base_alloc),
			     memory_bytes(b1, sizeof(b1), d->new_alloc), h->change_pct,
			     h->limit_pct);
	size_t shown = 0;
	for (size_t i = 0; i < d->nops && shown < nops && n < cap; i++) {
		if (d->ops[i].delta_bytes <= 0)
			break;
		n += snprintf(buf + n, cap - n, "%s%s +%s", shown ? ", " : "; grew most: ",
			      d->ops[i].op, memory_bytes(b0, sizeof(b0), d->ops[i].delta_bytes));
		shown++;
	}
}

void memdiff_free(struct kp_memdiff *md)
{
	for (size_t i = 0; i < md->ndevs; i++)
		free(md->devs[i].ops);
	free(md->devs);
	memset(md, 0, sizeof(*md));
}
