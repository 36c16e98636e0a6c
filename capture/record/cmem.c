/*
 * cmem.c — CUPTI device-memory records into [memory] events with running sums (cmem.h).
 */
#include "record/cmem.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/hmap.h"
#include "record/ctrace.h"

#define MEMKIND_DEVICE 3 /* CUPTI_ACTIVITY_MEMORY_KIND_DEVICE (cupti_activity.h) */
#define MEMOP_ALLOC 1    /* CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION */
#define MEMOP_RELEASE 2  /* CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE */

/* An API call record by correlation id. */
struct apiref {
	uint32_t corr;
	size_t rec;
};

static int cmp_apiref(const void *a, const void *b)
{
	const struct apiref *x = a, *y = b;
	if (x->corr != y->corr)
		return x->corr < y->corr ? -1 : 1;
	return x->rec < y->rec ? -1 : x->rec > y->rec;
}

static int cmp_ev(const void *a, const void *b)
{
	const struct kp_cmem *x = a, *y = b;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return x->rec < y->rec ? -1 : x->rec > y->rec;
}

/* The first API call record of correlation @corr, NULL none. */
static const struct kp_rec *api_of(const struct kp_ctrace *t, const struct apiref *v, size_t n,
				   uint32_t corr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].corr < corr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return corr && lo < n && v[lo].corr == corr ? &t->recs[v[lo].rec] : NULL;
}

/* A cudaMalloc of the program's, recorded by kprof-shim.so (HC_DEVALLOC). */
struct devalloc {
	uint32_t pid, tid;
	uint64_t addr, start_ns, end_ns;
};

/* The program's cudaMalloc calls sorted by (pid, address, start). */
struct progallocs {
	struct devalloc *v;
	size_t n;
};

static int cmp_devalloc(const void *a, const void *b)
{
	const struct devalloc *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* @pa from @t's HC_DEVALLOC calls; -1 on out-of-memory. */
static int prog_allocs(const struct kp_ctrace *t, struct progallocs *pa)
{
	pa->n = 0;
	pa->v = malloc((t->nhcalls + 1) * sizeof(*pa->v));
	if (!pa->v)
		return -1;
	for (size_t i = 0; i < t->nhcalls; i++) {
		const struct kp_hcall *c = &t->hcalls[i];
		if (c->kind == HC_DEVALLOC)
			pa->v[pa->n++] = (struct devalloc){ c->pid, c->tid, (uint64_t)c->k,
							    c->start_ns, c->end_ns };
	}
	qsort(pa->v, pa->n, sizeof(*pa->v), cmp_devalloc);
	return 0;
}

/* The first of @pa's calls at or after (@pid, @addr). */
static size_t devalloc_lower(const struct progallocs *pa, uint32_t pid, uint64_t addr)
{
	size_t lo = 0, hi = pa->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct devalloc *d = &pa->v[mid];
		if (d->pid < pid || (d->pid == pid && d->addr < addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Is allocation @r (its API call @a, process @pid) a library's own?  A cudaMalloc of a process
 * with recorded cudaMalloc calls, none of them on its thread at its address while it ran.
 */
static int library_alloc(const struct progallocs *pa, const struct kp_rec *a, uint32_t pid,
			 uint64_t addr)
{
	if (!a || !a->name || strcmp(a->name, "cudaMalloc"))
		return 0;
	size_t i = devalloc_lower(pa, pid, 0);
	if (i == pa->n || pa->v[i].pid != pid)
		return 0; /* no call recorded in this process: nothing to tell them apart by */
	for (i = devalloc_lower(pa, pid, addr); i < pa->n; i++) {
		const struct devalloc *d = &pa->v[i];
		if (d->pid != pid || d->addr != addr)
			break;
		if (d->tid == a->tid && d->start_ns <= a->end_ns && a->start_ns <= d->end_ns)
			return 0;
	}
	return 1;
}

/* One (pid, device): its live blocks (addr -> bytes, 0 when released) and their sum. */
struct devsum {
	uint32_t pid, device;
	int64_t sum;
	struct kp_hmap live;
};

static struct devsum *devsum_of(struct devsum **v, size_t *n, uint32_t pid, uint32_t device)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].pid == pid && (*v)[i].device == device)
			return &(*v)[i];
	struct devsum *p = realloc(*v, (*n + 1) * sizeof(**v));
	if (!p)
		return NULL;
	*v = p;
	struct devsum *d = &p[(*n)++];
	d->pid = pid, d->device = device, d->sum = 0;
	hmap_init(&d->live, HMAP_INT);
	return d;
}

/* The device records as unsized events: thread and time from their API calls; -1 ENOMEM. */
static int collect(const struct kp_ctrace *t, struct kp_cmem *ev, size_t *n,
		   struct kp_cmem_stats *st)
{
	struct apiref *api = malloc((t->nrecs + 1) * sizeof(*api));
	struct progallocs pa;
	if (!api || prog_allocs(t, &pa) < 0) {
		free(api);
		return -1;
	}
	size_t napi = 0;
	for (size_t i = 0; i < t->nrecs; i++)
		if (t->recs[i].kind == REC_RUNTIME || t->recs[i].kind == REC_DRIVER)
			api[napi++] = (struct apiref){ t->recs[i].corr, i };
	qsort(api, napi, sizeof(*api), cmp_apiref);
	for (size_t i = 0; i < t->nrecs; i++) {
		const struct kp_rec *r = &t->recs[i];
		if (r->kind != REC_MEMORY)
			continue;
		if (r->mem_kind != MEMKIND_DEVICE) {
			st->other_kinds++;
			continue;
		}
		const struct kp_rec *a = api_of(t, api, napi, r->corr);
		struct kp_cmem *e = &ev[(*n)++];
		memset(e, 0, sizeof(*e));
		e->rec = i;
		e->pid = r->pid ? r->pid : a ? a->pid : 0;
		e->tid = a ? a->tid : e->pid;
		e->ts_ns = r->start_ns;
		if (a && e->ts_ns < a->start_ns)
			e->ts_ns = a->start_ns;
		if (a && e->ts_ns > a->end_ns && a->end_ns >= a->start_ns)
			e->ts_ns = a->end_ns;
		e->no_call = a == NULL;
		e->device = r->device;
		e->addr = r->addr;
		e->bytes = r->mem_op == MEMOP_RELEASE ? -(int64_t)r->bytes : (int64_t)r->bytes;
		e->library = r->mem_op != MEMOP_RELEASE && library_alloc(&pa, a, e->pid, r->addr);
	}
	free(pa.v);
	free(api);
	return 0;
}

/*
 * Sizes and running sums in time order; drops zero-size allocations and releases of unknown
 * blocks (compacting @ev).  -1 on out-of-memory.
 */
static int running_sums(const struct kp_ctrace *t, struct kp_cmem *ev, size_t *n,
			struct kp_cmem_stats *st)
{
	struct devsum *ds = NULL;
	size_t nds = 0, k = 0;
	int rc = 0;
	for (size_t i = 0; i < *n && rc == 0; i++) {
		struct kp_cmem e = ev[i];
		const struct kp_rec *r = &t->recs[e.rec];
		struct devsum *d = devsum_of(&ds, &nds, e.pid, e.device);
		if (!d) {
			rc = -1;
			break;
		}
		if (r->mem_op == MEMOP_RELEASE) {
			struct kp_hmap_entry *h = hmap_get_int(&d->live, (int64_t)e.addr);
			if (h && h->val.i < 0) { /* a library's block (-size): left out */
				h->val.i = 0;
				continue;
			}
			if (!h || h->val.i <= 0) {
				st->unmatched_releases++;
				continue;
			}
			e.bytes = -h->val.i; /* the allocation's size, whatever CUPTI says here */
			h->val.i = 0;
		} else {
			if (e.bytes <= 0)
				continue;
			hmap_put_int(&d->live, (int64_t)e.addr, NULL)->val.i =
				e.library ? -e.bytes : e.bytes;
			if (e.library) {
				st->library++;
				st->library_bytes += (uint64_t)e.bytes;
				continue;
			}
		}
		d->sum += e.bytes;
		e.total = d->sum;
		st->unattributed += e.no_call;
		ev[k++] = e;
	}
	for (size_t i = 0; i < nds; i++)
		hmap_free(&ds[i].live);
	free(ds);
	*n = k;
	return rc;
}

struct kp_cmem *cmem_build(const struct kp_ctrace *t, size_t *n, struct kp_cmem_stats *st)
{
	memset(st, 0, sizeof(*st));
	*n = 0;
	size_t nmem = 0;
	for (size_t i = 0; i < t->nrecs; i++)
		nmem += t->recs[i].kind == REC_MEMORY;
	if (!nmem)
		return NULL;
	struct kp_cmem *ev = malloc(nmem * sizeof(*ev));
	if (!ev || collect(t, ev, n, st) < 0) {
		free(ev);
		*n = SIZE_MAX;
		return NULL;
	}
	qsort(ev, *n, sizeof(*ev), cmp_ev);
	if (running_sums(t, ev, n, st) < 0) {
		free(ev);
		*n = SIZE_MAX;
		return NULL;
	}
	st->events = *n;
	if (!*n) {
		free(ev);
		return NULL;
	}
	return ev;
}

void cmem_put(FILE *out, const struct kp_cmem *ev, size_t n, uint64_t base)
{
	for (size_t i = 0; i < n; i++) {
		const struct kp_cmem *e = &ev[i];
		uint64_t rel = e->ts_ns >= base ? e->ts_ns - base : 0;
		fprintf(out,
			",\n{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\",\"name\":\"[memory]\""
			",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":%" PRIu64 ".%03" PRIu64
			",\"args\":{\"Total Reserved\":%" PRId64 ",\"Total Allocated\":%" PRId64
			",\"Bytes\":%" PRId64 ",\"Device Id\":%" PRIu32
			",\"Device Type\":1,\"Addr\":%" PRIu64 ",\"kprof source\":\"cupti\"}}",
			e->pid, e->tid, rel / 1000, rel % 1000, e->total, e->total, e->bytes,
			e->device, e->addr);
	}
}
