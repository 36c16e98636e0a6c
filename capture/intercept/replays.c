/*
 * replays.c — kernels replayed from a CUDA graph, mapped to a copy of the op their graph node
 * was created in, one per graph launch (hostops_emit_replays, called by hostops_emit in
 * hostops.c after the library ops and ranges are written).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "intercept/hostops-internal.h"
#include "intercept/hostops.h"
#include "record/ctrace.h"

/* ---- CUDA graph replays ---- */

struct extspan {
	uint64_t ext;
	size_t span;
};

static int cmp_extspan(const void *a, const void *b)
{
	const struct extspan *x = a, *y = b;
	return x->ext < y->ext ? -1 : x->ext > y->ext;
}

struct apiref {
	uint32_t corr;
	size_t rec;
};

static int cmp_apiref(const void *a, const void *b)
{
	const struct apiref *x = a, *y = b;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static int cmp_replay(const void *a, const void *b, void *arg)
{
	const struct kp_rec *v = arg;
	const struct kp_rec *x = &v[*(const size_t *)a], *y = &v[*(const size_t *)b];
	if (x->corr != y->corr)
		return x->corr < y->corr ? -1 : 1;
	if (x->gext != y->gext)
		return x->gext < y->gext ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* What the replays are built from: the replayed kernels, the ops and launches they point to. */
struct replays {
	struct kp_ctrace *t;
	size_t *idx; /* replayed kernels (recs with a gext), by (corr, gext, start) */
	size_t n;
	struct extspan *es; /* cpu_op spans by External id */
	size_t nsp;
	struct apiref *api; /* runtime and driver API records by correlation id */
	size_t napi;
	uint64_t maxext; /* highest External id in use: new ops take the ones above it */
};

/* The launch window of one replay: the graph launch's time, thread and process. */
struct replay_window {
	const struct apiref *launch; /* NULL: no API record for the replay's correlation id */
	uint64_t s0, dur;
	uint32_t pid, tid;
	size_t k; /* distinct creating ops in the replay: the window's slices */
};

static void replays_free(struct replays *rp)
{
	free(rp->idx), free(rp->es), free(rp->api);
}

/* Records with a gext; 0 when there are none. */
static size_t count_replayed(const struct kp_ctrace *t)
{
	size_t n = 0;
	for (size_t i = 0; i < t->nrecs; i++)
		n += t->recs[i].gext != 0;
	return n;
}

/* The cpu_op spans by External id, and the highest External id of spans and calls. */
static void index_cpu_ops(struct replays *rp)
{
	const struct kp_ctrace *t = rp->t;
	for (size_t i = 0; i < t->nspans; i++) {
		if (t->spans[i].ext > rp->maxext)
			rp->maxext = t->spans[i].ext;
		if (!strcmp(t->spans[i].cat, "cpu_op"))
			rp->es[rp->nsp++] = (struct extspan){ t->spans[i].ext, i };
	}
	for (size_t i = 0; i < t->nhcalls; i++)
		if (t->hcalls[i].ext > rp->maxext)
			rp->maxext = t->hcalls[i].ext;
	qsort(rp->es, rp->nsp, sizeof(*rp->es), cmp_extspan);
}

/* The replayed kernels in replay order, and the API records by correlation id. */
static void index_records(struct replays *rp)
{
	const struct kp_ctrace *t = rp->t;
	for (size_t i = 0, k = 0; i < t->nrecs; i++) {
		const struct kp_rec *r = &t->recs[i];
		if (r->gext)
			rp->idx[k++] = i;
		if (r->kind == REC_RUNTIME || r->kind == REC_DRIVER)
			rp->api[rp->napi++] = (struct apiref){ r->corr, i };
	}
	qsort(rp->api, rp->napi, sizeof(*rp->api), cmp_apiref);
	qsort_r(rp->idx, rp->n, sizeof(*rp->idx), cmp_replay, t->recs);
}

/* Allocate and fill @rp for the @n replayed kernels of @t; -1: out of memory. */
static int replays_index(struct replays *rp, struct kp_ctrace *t, size_t n)
{
	*rp = (struct replays){ .t = t, .n = n };
	rp->idx = malloc(n * sizeof(*rp->idx));
	rp->es = malloc((t->nspans + 1) * sizeof(*rp->es));
	rp->api = malloc((t->nrecs + 1) * sizeof(*rp->api));
	if (!rp->idx || !rp->es || !rp->api) {
		replays_free(rp);
		return -1;
	}
	index_cpu_ops(rp);
	index_records(rp);
	return 0;
}

/* The end of the replay starting at idx[@a] (same corr), its distinct creating ops in *@k. */
static size_t replay_end(const struct replays *rp, size_t a, size_t *k)
{
	const struct kp_rec *v = rp->t->recs;
	uint32_t corr = v[rp->idx[a]].corr;
	size_t b = a;
	*k = 0;
	for (; b < rp->n && v[rp->idx[b]].corr == corr; b++)
		*k += b == a || v[rp->idx[b]].gext != v[rp->idx[b - 1]].gext;
	return b;
}

/* The graph launch of the replay starting at idx[@a]; without one, its first kernel's start. */
static struct replay_window replay_window(const struct replays *rp, size_t a)
{
	const struct kp_rec *first = &rp->t->recs[rp->idx[a]];
	struct apiref key = { first->corr, 0 };
	struct replay_window w = { 0 };
	w.launch = bsearch(&key, rp->api, rp->napi, sizeof(*rp->api), cmp_apiref);
	if (w.launch) {
		const struct kp_rec *lr = &rp->t->recs[w.launch->rec];
		w.s0 = lr->start_ns;
		w.dur = lr->end_ns > lr->start_ns ? lr->end_ns - lr->start_ns : 0;
		w.pid = lr->pid, w.tid = lr->tid;
	} else {
		w.s0 = first->start_ns;
	}
	return w;
}

/* The original op's args plus "kprof graph replay of" (malloc'ed; NULL without memory). */
static char *replay_args(const struct kp_span *sp, uint64_t gext)
{
	char *args = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&args, &len);
	if (f) {
		fprintf(f, "%s%s\"kprof graph replay of\":%" PRIu64, sp->args ? sp->args : "",
			sp->args ? "," : "", gext);
		fclose(f);
	}
	return args;
}

/* The copy of op @o for kernels idx[@c..@d) in slice @slice of @w; the kernels relinked to it */
static int emit_replay_op(struct replays *rp, const struct extspan *o, size_t c, size_t d,
			  struct replay_window *w, size_t slice, struct kp_hostops_stats *st)
{
	struct kp_ctrace *t = rp->t;
	const struct kp_span *sp = &t->spans[o->span];
	uint64_t gext = t->recs[rp->idx[c]].gext;
	uint64_t ext = ++rp->maxext;
	uint64_t b0 = w->s0 + w->dur * slice / w->k, b1 = w->s0 + w->dur * (slice + 1) / w->k;
	char *args = replay_args(sp, gext);
	if (!w->launch)
		w->pid = sp->pid, w->tid = sp->tid;
	int rc = ctrace_add_span(t, "cpu_op", strdup(sp->name), b0, b1 > b0 ? b1 - 1 : b0, w->pid,
				 w->tid + HOSTOPS_REPLAY_TID, ext, args);
	for (size_t e = c; e < d; e++)
		t->recs[rp->idx[e]].gext = ext;
	st->replay_ops++;
	st->replay_kernels += d - c;
	return rc;
}

/* One replay, kernels idx[@a..@b): one op per distinct creating op, in disjoint slices. */
static int emit_replay(struct replays *rp, size_t a, size_t b, size_t k,
		       struct kp_hostops_stats *st)
{
	const struct kp_rec *v = rp->t->recs;
	struct replay_window w = replay_window(rp, a);
	w.k = k;
	int rc = 0;
	size_t slice = 0;
	for (size_t c = a; c < b && rc == 0; slice++) {
		uint64_t gext = v[rp->idx[c]].gext;
		size_t d = c;
		while (d < b && v[rp->idx[d]].gext == gext)
			d++;
		struct extspan ek = { gext, 0 };
		const struct extspan *o = bsearch(&ek, rp->es, rp->nsp, sizeof(*rp->es),
						  cmp_extspan);
		if (o)
			rc = emit_replay_op(rp, o, c, d, &w, slice, st);
		c = d;
	}
	return rc;
}

/*
 * Kernels replayed from a CUDA graph carry (gext) the op their node was created in.  Each
 * replay (graph launch) gets its own copy of that op, so that the op's FLOPs count once per
 * replay: a cpu_op with the original's name and args plus "kprof graph replay of", on a thread
 * beside the launching one (tid + HOSTOPS_REPLAY_TID), in a slice of the graph launch's time.
 */
int hostops_emit_replays(struct kp_ctrace *t, struct kp_hostops_stats *st)
{
	size_t n = count_replayed(t);
	if (!n)
		return 0;
	struct replays rp;
	if (replays_index(&rp, t, n) < 0)
		return -1;
	int rc = 0;
	for (size_t a = 0; a < n && rc == 0;) {
		size_t k;
		size_t b = replay_end(&rp, a, &k);
		rc = emit_replay(&rp, a, b, k, st);
		a = b;
	}
	replays_free(&rp);
	return rc;
}
