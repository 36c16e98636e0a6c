/*
 * memory.c — the [memory] events of a trace per device: peak, live set at the peak by op and
 * module, per-op allocation counts (include/kprof/memory.h; doc/memory.md §2, §8).
 */
#include "kprof/memory.h"

#include <stdlib.h>
#include <string.h>

#include "kprof/hmap.h"

/* The ops of each thread in start order, for the innermost op holding a time. */
struct opindex {
	int32_t *order;  /* op indices by (thread, ts, longer first, index) */
	size_t *start;   /* nthreads + 1 offsets into order */
	const struct kp_trace *t;
};

static int cmp_op(const void *a, const void *b, void *arg)
{
	const struct kp_trace *t = arg;
	const struct kp_op *x = &t->ops[*(const int32_t *)a], *y = &t->ops[*(const int32_t *)b];
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	if (x->dur_ns != y->dur_ns)
		return x->dur_ns > y->dur_ns ? -1 : 1;
	return *(const int32_t *)a < *(const int32_t *)b ? -1 : 1;
}

static void opindex_build(struct opindex *ix, const struct kp_trace *t)
{
	ix->t = t;
	ix->order = xmalloc((t->nops + 1) * sizeof(*ix->order));
	ix->start = xcalloc(t->nthreads + 2, sizeof(*ix->start));
	for (size_t i = 0; i < t->nops; i++)
		ix->order[i] = (int32_t)i;
	qsort_r(ix->order, t->nops, sizeof(*ix->order), cmp_op, (void *)t);
	for (size_t i = 0; i < t->nops; i++)
		ix->start[t->ops[i].thread + 1]++;
	for (size_t th = 0; th < t->nthreads; th++)
		ix->start[th + 1] += ix->start[th];
}

/*
 * The innermost op of @thread whose [ts, ts + dur) holds @ts, -1 none: the last op started at
 * or before @ts, or the first of its ancestors (link.c's kp_op.parent) still running.
 */
static int32_t innermost(const struct opindex *ix, int32_t thread, int64_t ts)
{
	const struct kp_trace *t = ix->t;
	if (thread < 0 || (size_t)thread >= t->nthreads)
		return -1;
	size_t lo = ix->start[thread], hi = ix->start[thread + 1];
	while (lo < hi) { /* first op starting after ts */
		size_t mid = lo + (hi - lo) / 2;
		if (t->ops[ix->order[mid]].ts_ns <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == ix->start[thread])
		return -1;
	int32_t o = ix->order[lo - 1];
	while (o >= 0 && !(t->ops[o].ts_ns <= ts && ts - t->ops[o].ts_ns < t->ops[o].dur_ns))
		o = t->ops[o].parent;
	return o;
}

/* The nn.Module path op @o runs under (pytree.c's kp_trace.op_frame), NULL none. */
static const char *op_module(const struct kp_trace *t, int32_t o)
{
	if (o < 0 || !t->op_frame || t->op_frame[o] < 0)
		return NULL;
	int32_t m = t->py[t->op_frame[o]].module;
	return m >= 0 ? t->py[m].path : NULL;
}

/* Rows keyed by (op, module) pointers (both interned). */
struct rowset {
	struct kp_hmap map; /* key -> index + 1 */
	struct kp_mem_row *rows;
	size_t n, cap;
};

static struct kp_mem_row *row_of(struct rowset *s, const char *op, const char *module)
{
	const char *key[2] = { op, module };
	int created;
	struct kp_hmap_entry *e = hmap_put_str(&s->map, key, sizeof(key), &created);
	if (created) {
		s->rows = xgrow(s->rows, s->n + 1, &s->cap, 16, sizeof(*s->rows));
		memset(&s->rows[s->n], 0, sizeof(*s->rows));
		s->rows[s->n].op = op;
		s->rows[s->n].module = module;
		e->val.i = (int64_t)++s->n;
	}
	return &s->rows[e->val.i - 1];
}

static int cmp_str(const char *a, const char *b)
{
	if (a == b)
		return 0;
	if (!a || !b)
		return a ? 1 : -1;
	return strcmp(a, b);
}

static int cmp_live(const void *a, const void *b)
{
	const struct kp_mem_row *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	int c = cmp_str(x->op, y->op);
	return c ? c : cmp_str(x->module, y->module);
}

static int cmp_alloc(const void *a, const void *b)
{
	const struct kp_mem_row *x = a, *y = b;
	if (x->alloc_bytes != y->alloc_bytes)
		return x->alloc_bytes > y->alloc_bytes ? -1 : 1;
	int c = cmp_str(x->op, y->op);
	return c ? c : cmp_str(x->module, y->module);
}

/* @s's rows into the report's arena, sorted by @cmp; the set is freed. */
static struct kp_mem_row *rows_take(struct kp_memrep *m, struct rowset *s, size_t extra,
				    int (*cmp)(const void *, const void *), size_t *n)
{
	qsort(s->rows, s->n, sizeof(*s->rows), cmp);
	struct kp_mem_row *r = arena_zalloc(&m->arena, (s->n + extra + 1) * sizeof(*r));
	if (s->n)
		memcpy(r, s->rows, s->n * sizeof(*r));
	*n = s->n;
	free(s->rows);
	hmap_free(&s->map);
	memset(s, 0, sizeof(*s));
	return r;
}

/* A device's events, by time then file order. */
static int cmp_mem(const void *a, const void *b, void *arg)
{
	const struct kp_trace *t = arg;
	int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
	const struct kp_mem *x = &t->mem[i], *y = &t->mem[j];
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return i < j ? -1 : 1;
}

/* What one device's walk needs. */
struct walk {
	const struct kp_trace *t;
	const struct opindex *ix;
	const int32_t *ev; /* the device's events in time order */
	size_t n;
	int32_t *op;      /* per event: the op it ran in (allocations; -1) */
	int32_t *free_at; /* per allocation: the event freeing it, n never */
};

/* The allocations' ops and the events that free them (pairing by address). */
static void pair(struct walk *w, struct kp_mem_dev *d)
{
	const struct kp_trace *t = w->t;
	struct kp_hmap live; /* Addr -> allocation event + 1, 0 when freed */
	hmap_init(&live, HMAP_INT);
	for (size_t k = 0; k < w->n; k++) {
		const struct kp_mem *e = &t->mem[w->ev[k]];
		w->free_at[k] = (int32_t)w->n;
		w->op[k] = -1;
		if (e->bytes > 0) {
			w->op[k] = innermost(w->ix, e->thread, e->ts_ns);
			d->nallocs++;
			if (d->bytes_only)
				continue;
			struct kp_hmap_entry *h = hmap_put_int(&live, e->addr, NULL);
			if (h->val.i) { /* reused with no free between: that free was lost */
				d->double_allocs++;
				w->free_at[h->val.i - 1] = (int32_t)k;
			}
			h->val.i = (int64_t)k + 1;
		} else if (e->bytes < 0) {
			d->nfrees++;
			if (d->bytes_only)
				continue;
			struct kp_hmap_entry *h = hmap_get_int(&live, e->addr);
			if (h && h->val.i) {
				w->free_at[h->val.i - 1] = (int32_t)k;
				h->val.i = 0;
			} else {
				d->unmatched_frees++;
				d->unmatched_free_bytes += -e->bytes;
			}
		}
	}
	hmap_free(&live);
}

/* The peak: the first event at the maximum allocated (Total Allocated, or the running sum). */
static size_t find_peak(struct walk *w, struct kp_mem_dev *d)
{
	const struct kp_trace *t = w->t;
	size_t pk = 0;
	int64_t sum = 0;
	d->peak_res = -1;
	for (size_t k = 0; k < w->n; k++) {
		const struct kp_mem *e = &t->mem[w->ev[k]];
		int64_t a = d->bytes_only ? (sum += e->bytes) : e->total_alloc;
		if (k == 0 || a > d->peak_alloc) {
			d->peak_alloc = a;
			pk = k;
		}
		if (e->total_res != KP_MEM_NONE && e->total_res > d->peak_res)
			d->peak_res = e->total_res;
	}
	const struct kp_mem *p = &t->mem[w->ev[pk]], *f = &t->mem[w->ev[0]];
	d->peak_ts_ns = p->ts_ns;
	d->res_at_peak = p->total_res != KP_MEM_NONE ? p->total_res : -1;
	d->baseline = d->bytes_only ? -1 : f->total_alloc - f->bytes;
	return pk;
}

static void device_rows(struct kp_memrep *m, struct walk *w, struct kp_mem_dev *d, size_t pk)
{
	const struct kp_trace *t = w->t;
	struct rowset live = { 0 }, ops = { 0 };
	hmap_init(&live.map, HMAP_STR);
	hmap_init(&ops.map, HMAP_STR);
	int64_t live_sum = 0;
	for (size_t k = 0; k < w->n; k++) {
		const struct kp_mem *e = &t->mem[w->ev[k]];
		if (e->bytes <= 0)
			continue;
		const char *op = w->op[k] >= 0 ? t->ops[w->op[k]].name : MEM_NO_OP;
		const char *mod = op_module(t, w->op[k]);
		struct kp_mem_row *r = row_of(&ops, op, mod);
		r->alloc_bytes += e->bytes;
		r->alloc_count++;
		if (d->bytes_only) {
			r->freed_bytes = r->freed_count = r->kept_bytes = r->kept_count = -1;
			continue;
		}
		if ((size_t)w->free_at[k] < w->n) {
			r->freed_bytes += e->bytes;
			r->freed_count++;
		} else {
			r->kept_bytes += e->bytes;
			r->kept_count++;
			d->kept_bytes += e->bytes;
			d->kept_count++;
		}
		if (k <= pk && (size_t)w->free_at[k] > pk) {
			struct kp_mem_row *l = row_of(&live, op, mod);
			l->bytes += e->bytes;
			l->count++;
			live_sum += e->bytes;
		}
	}
	d->ops = rows_take(m, &ops, 0, cmp_alloc, &d->nops);
	if (d->bytes_only) {
		hmap_free(&live.map);
		return;
	}
	d->live = rows_take(m, &live, 1, cmp_live, &d->nlive);
	/* the rest of the peak was live before the window: the rows sum to the peak exactly */
	d->live[d->nlive++] = (struct kp_mem_row){ .op = MEM_BEFORE,
						   .bytes = d->peak_alloc - live_sum };
}

/* One stretch of the curve: the events it keeps (event positions, -1 none). */
struct stretch {
	int32_t first, last, lo, hi, res;
};

/* @k when it beats the stretch's kept event @at by @v (@less: lower; else higher). */
static void keep_if(int32_t *at, const int64_t *v, int32_t k, int less)
{
	if (*at < 0 || (less ? v[k] < v[*at] : v[k] > v[*at]))
		*at = k;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* The curve's point for event position @k of the walk. */
static struct kp_mem_pt curve_pt(const struct walk *w, const int64_t *alloc, int32_t k,
				 int32_t bucket)
{
	const struct kp_mem *e = &w->t->mem[w->ev[k]];
	int32_t o = innermost(w->ix, e->thread, e->ts_ns);
	return (struct kp_mem_pt){ .ts_ns = e->ts_ns,
				   .alloc = alloc[k],
				   .res = e->total_res != KP_MEM_NONE ? e->total_res : -1,
				   .op = o >= 0 ? w->t->ops[o].name : NULL,
				   .module = op_module(w->t, o),
				   .bucket = bucket };
}

/*
 * The downsampled curve (kp_mem_pt): per stretch of MEM_CURVE_BUCKETS, its first and last
 * events, its lowest and highest allocated (the first such events) and its highest reserved,
 * in time order.  The first event at the peak is its stretch's highest, so it is kept.
 */
static void curve(struct kp_memrep *m, const struct walk *w, struct kp_mem_dev *d)
{
	const struct kp_trace *t = w->t;
	int64_t *alloc = xmalloc(w->n * sizeof(*alloc)), *res = xmalloc(w->n * sizeof(*res)),
		sum = 0;
	for (size_t k = 0; k < w->n; k++) {
		const struct kp_mem *e = &t->mem[w->ev[k]];
		alloc[k] = d->bytes_only ? (sum += e->bytes) : e->total_alloc;
		res[k] = e->total_res != KP_MEM_NONE ? e->total_res : -1;
	}
	int64_t t0 = t->mem[w->ev[0]].ts_ns, span = t->mem[w->ev[w->n - 1]].ts_ns - t0 + 1;
	int64_t bw = (span + MEM_CURVE_BUCKETS - 1) / MEM_CURVE_BUCKETS;
	struct stretch *b = xmalloc(MEM_CURVE_BUCKETS * sizeof(*b));
	memset(b, 0xff, MEM_CURVE_BUCKETS * sizeof(*b)); /* every position -1 */
	for (size_t k = 0; k < w->n; k++) {
		struct stretch *s = &b[(t->mem[w->ev[k]].ts_ns - t0) / bw];
		if (s->first < 0)
			s->first = (int32_t)k;
		s->last = (int32_t)k;
		keep_if(&s->lo, alloc, (int32_t)k, 1);
		keep_if(&s->hi, alloc, (int32_t)k, 0);
		keep_if(&s->res, res, (int32_t)k, 0);
	}
	d->curve = arena_alloc(&m->arena, 5 * MEM_CURVE_BUCKETS * sizeof(*d->curve));
	d->curve_t0 = t0;
	d->curve_bw = bw;
	for (int32_t i = 0; i < MEM_CURVE_BUCKETS; i++) {
		if (b[i].first < 0)
			continue;
		int32_t v[5] = { b[i].first, b[i].lo, b[i].hi, b[i].res, b[i].last };
		qsort(v, 5, sizeof(*v), cmp_i32);
		for (int j = 0; j < 5; j++) {
			if (j && v[j] == v[j - 1])
				continue;
			struct kp_mem_pt *p = &d->curve[d->ncurve++];
			*p = curve_pt(w, alloc, v[j], i);
			p->top = v[j] == b[i].hi;
		}
	}
	free(b);
	free(alloc);
	free(res);
}

static void device_run(struct kp_memrep *m, const struct kp_trace *t, const struct opindex *ix,
		       struct kp_mem_dev *d, const int32_t *ev, size_t n)
{
	struct walk w = { t, ix, ev, n, xmalloc(n * sizeof(int32_t)),
			  xmalloc(n * sizeof(int32_t)) };
	d->nevents = (int64_t)n;
	for (size_t k = 0; k < n; k++)
		if (t->mem[ev[k]].addr == KP_MEM_NONE || t->mem[ev[k]].total_alloc == KP_MEM_NONE)
			d->bytes_only = 1;
	pair(&w, d);
	size_t pk = find_peak(&w, d);
	const struct kp_mem *p = &t->mem[ev[pk]];
	int32_t o = innermost(ix, p->thread, p->ts_ns);
	d->peak_op = o >= 0 ? t->ops[o].name : NULL;
	d->peak_module = op_module(t, o);
	d->step = -1;
	for (size_t i = 0; i < t->nsteps; i++)
		if (t->steps[i].ts_ns <= p->ts_ns && p->ts_ns - t->steps[i].ts_ns < t->steps[i].dur_ns) {
			d->step = t->steps[i].num;
			break;
		}
	device_rows(m, &w, d, pk);
	curve(m, &w, d);
	free(w.op);
	free(w.free_at);
}

/* Devices by CPU last, then pid, type, id. */
static int cmp_dev(const void *a, const void *b)
{
	const struct kp_mem_dev *x = a, *y = b;
	if ((x->dev_type == 0) != (y->dev_type == 0))
		return x->dev_type == 0 ? 1 : -1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->dev_type != y->dev_type)
		return x->dev_type < y->dev_type ? -1 : 1;
	return x->dev_id < y->dev_id ? -1 : x->dev_id > y->dev_id;
}

static int64_t first_ts(const struct kp_trace *t)
{
	int64_t t0 = INT64_MAX;
	for (size_t i = 0; i < t->nops; i++)
		t0 = t->ops[i].ts_ns < t0 ? t->ops[i].ts_ns : t0;
	for (size_t i = 0; i < t->nlaunches; i++)
		t0 = t->launches[i].ts_ns < t0 ? t->launches[i].ts_ns : t0;
	for (size_t i = 0; i < t->ngpu; i++)
		t0 = t->gpu[i].ts_ns < t0 ? t->gpu[i].ts_ns : t0;
	for (size_t i = 0; i < t->nmem; i++)
		t0 = t->mem[i].ts_ns < t0 ? t->mem[i].ts_ns : t0;
	return t0 == INT64_MAX ? 0 : t0;
}

static int64_t last_end(const struct kp_trace *t)
{
	int64_t t1 = INT64_MIN;
	for (size_t i = 0; i < t->nops; i++)
		t1 = t->ops[i].ts_ns + t->ops[i].dur_ns > t1 ? t->ops[i].ts_ns + t->ops[i].dur_ns : t1;
	for (size_t i = 0; i < t->nlaunches; i++)
		t1 = t->launches[i].ts_ns + t->launches[i].dur_ns > t1
			     ? t->launches[i].ts_ns + t->launches[i].dur_ns
			     : t1;
	for (size_t i = 0; i < t->ngpu; i++)
		t1 = t->gpu[i].ts_ns + t->gpu[i].dur_ns > t1 ? t->gpu[i].ts_ns + t->gpu[i].dur_ns : t1;
	for (size_t i = 0; i < t->nmem; i++)
		t1 = t->mem[i].ts_ns > t1 ? t->mem[i].ts_ns : t1;
	return t1 == INT64_MIN ? 0 : t1;
}

void memory_run(const struct kp_trace *t, struct kp_memrep *m)
{
	memset(m, 0, sizeof(*m));
	arena_init(&m->arena);
	m->nevents = (int64_t)t->nmem;
	if (!t->nmem)
		return;
	m->t0_ns = first_ts(t);
	m->t1_ns = last_end(t);
	/* the devices, then each one's events in time order */
	struct kp_mem_dev *devs = NULL;
	size_t ndevs = 0, cap = 0;
	for (size_t i = 0; i < t->nmem; i++) {
		const struct kp_mem *e = &t->mem[i];
		const struct kp_thread *th = &t->threads[e->thread];
		int64_t pid = th->pid_str ? -1 : th->pid;
		size_t k = 0;
		while (k < ndevs && !(devs[k].pid == pid && devs[k].dev_type == e->dev_type &&
				      devs[k].dev_id == e->dev_id))
			k++;
		if (k == ndevs) {
			devs = xgrow(devs, ndevs + 1, &cap, 4, sizeof(*devs));
			memset(&devs[ndevs], 0, sizeof(*devs));
			devs[ndevs].pid = pid;
			devs[ndevs].dev_type = e->dev_type;
			devs[ndevs].dev_id = e->dev_id;
			ndevs++;
		}
	}
	qsort(devs, ndevs, sizeof(*devs), cmp_dev);
	struct opindex ix;
	opindex_build(&ix, t);
	int32_t *ev = xmalloc(t->nmem * sizeof(*ev));
	for (size_t k = 0; k < ndevs; k++) {
		size_t n = 0;
		for (size_t i = 0; i < t->nmem; i++) {
			const struct kp_mem *e = &t->mem[i];
			const struct kp_thread *th = &t->threads[e->thread];
			if ((th->pid_str ? -1 : th->pid) == devs[k].pid &&
			    e->dev_type == devs[k].dev_type && e->dev_id == devs[k].dev_id)
				ev[n++] = (int32_t)i;
		}
		qsort_r(ev, n, sizeof(*ev), cmp_mem, (void *)t);
		device_run(m, t, &ix, &devs[k], ev, n);
		m->ngpu += devs[k].dev_type != 0;
	}
	free(ev);
	free(ix.order);
	free(ix.start);
	m->devs = arena_alloc(&m->arena, ndevs * sizeof(*devs));
	memcpy(m->devs, devs, ndevs * sizeof(*devs));
	m->ndevs = ndevs;
	free(devs);
}

void memory_free(struct kp_memrep *m)
{
	arena_free(&m->arena);
	memset(m, 0, sizeof(*m));
}
