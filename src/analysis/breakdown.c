/*
 * breakdown.c — GPU time by class (one sweep over start/end events per window set), idle
 * gaps by cause, per step and per stream; launch statistics of launch/GPU pairs.
 */
#include "kprof/breakdown.h"

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "kprof/arena.h"

/* @needle (lowercase letters) anywhere in @s, ignoring case */
static int has_ci(const char *s, const char *needle)
{
	size_t n = strlen(needle);
	for (; *s; s++) {
		size_t i = 0;
		while (i < n && s[i] && (s[i] | 0x20) == needle[i])
			i++;
		if (i == n)
			return 1;
	}
	return 0;
}

enum kp_bd_class breakdown_class(const struct kp_gpu *g, int has_coll)
{
	if (g->kind != GPU_KERNEL)
		return BD_MEMCPY;
	const char *n = g->name;
	/* ROCm 7.1 runs copies and fills as kernels (TraceLens moves them the same way) */
	if (!strncmp(n, "MEMORY_COPY_", 12) || !strncmp(n, "__amd_rocclr_copyBuffer", 23) ||
	    !strncmp(n, "__amd_rocclr_fillBuffer", 23))
		return BD_MEMCPY;
	/* TraceLens' rule (nccl/rccl anywhere) plus HTA's ^hccl */
	if (has_coll || has_ci(n, "nccl") || has_ci(n, "rccl") || !strncmp(n, "hccl", 4))
		return BD_COMM;
	return BD_COMPUTE;
}

/* A start or end of one GPU event. */
struct sev {
	int64_t t;
	int64_t stream;
	int32_t gpu;
	int8_t start; /* 1 start, 0 end */
	int8_t cls;
};

/* time, ends before starts (touching is not overlapping), then stream, then index */
static int cmp_sev(const void *pa, const void *pb)
{
	const struct sev *a = pa, *b = pb;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	if (a->start != b->start)
		return a->start - b->start;
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	return (a->gpu > b->gpu) - (a->gpu < b->gpu);
}

/* A window [start, end) and the breakdown it accumulates into. */
struct win {
	int64_t start, end;
	struct kp_bd *b;
};

/* What idle_cause() reads. */
struct cause_ctx {
	const struct kp_trace *t;
	const int32_t *prev;  /* previous GPU event on the same device stream, -1 */
	const int32_t *syncs; /* launch indices of host-blocking syncs, by (thread, ts) */
	size_t nsyncs;
	const int32_t *waits; /* launch indices of cross-stream waits, by (thread, ts) */
	size_t nwaits;
	int64_t gap_ns;
};

/* The last entry of @v (sorted by thread, ts) on thread @th starting at or before @when; -1. */
static ssize_t last_at(const struct kp_trace *t, const int32_t *v, size_t n, int32_t th,
		       int64_t when)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct kp_launch *l = &t->launches[v[mid]];
		if (l->thread < th || (l->thread == th && l->ts_ns <= when))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || t->launches[v[lo - 1]].thread != th)
		return -1;
	return (ssize_t)(lo - 1);
}

/*
 * The cause of the device idle gap [a, b) ended by GPU event @x (kprof-analyze(1)):
 * no launch call -> other; launched at or after a -> sync when its thread was blocked in a
 * sync when the GPU went idle (up to the sync's return, *split; host after it), else host; queued
 * before a -> sync when a stream-wait call on its thread lies between the launch of the
 * stream's previous work and its own, else launch latency when the gap is shorter than
 * gap_ns, else other.
 */
static int idle_cause(const struct cause_ctx *c, int64_t a, int64_t b, int32_t x, int64_t *split)
{
	const struct kp_trace *t = c->t;
	const struct kp_gpu *g = &t->gpu[x];
	if (g->launch < 0)
		return IDLE_OTHER;
	const struct kp_launch *L = &t->launches[g->launch];
	if (L->ts_ns >= a) {
		ssize_t s = last_at(t, c->syncs, c->nsyncs, L->thread, L->ts_ns);
		if (s >= 0) {
			const struct kp_launch *S = &t->launches[c->syncs[s]];
			if (S->ts_ns <= a && S->ts_ns + S->dur_ns >= a) {
				/* the host waited for the GPU until the sync returned; what follows is host time */
				*split = S->ts_ns + S->dur_ns;
				return IDLE_SYNC;
			}
		}
		return IDLE_HOST;
	}
	int32_t p = c->prev[x];
	if (p >= 0 && t->gpu[p].launch >= 0) {
		int64_t lo = t->launches[t->gpu[p].launch].ts_ns;
		ssize_t w = last_at(t, c->waits, c->nwaits, L->thread, L->ts_ns);
		if (w >= 0 && t->launches[c->waits[w]].ts_ns >= lo)
			return IDLE_SYNC;
	}
	return b - a < c->gap_ns ? IDLE_LAUNCH : IDLE_OTHER;
}

/* Add [a, b) in @state (class bits; 0 = idle, of @cause) to the windows it crosses. */
static void add_span(struct win *w, size_t nw, size_t *wi, int64_t a, int64_t b, unsigned state,
		     int cause)
{
	while (a < b) {
		while (*wi + 1 < nw && w[*wi].end <= a)
			(*wi)++;
		int64_t e = *wi + 1 < nw && w[*wi].end < b ? w[*wi].end : b;
		int64_t d = e - a;
		struct kp_bd *x = w[*wi].b;
		if (!state) {
			if (cause >= 0) {
				x->idle_cause_ns[cause] += d;
				x->idle_gaps[cause]++;
			}
		} else {
			x->class_ns[__builtin_ctz(state)] += d;
			if (state & (1u << BD_COMM))
				x->comm_total_ns += d;
			if ((state & (1u << BD_COMM)) && (state & (1u << BD_COMPUTE)))
				x->comm_overlapped_ns += d;
		}
		a = e;
	}
}

/*
 * One sweep over sorted events: per-class reference counts (streams overlap within a
 * class), the state between consecutive event times goes to its highest-priority class.
 * Idle gaps get a cause when @cc is given.
 */
static void sweep(const struct sev *ev, size_t n, struct win *w, size_t nw,
		  const struct cause_ctx *cc)
{
	int64_t cnt[BD_NCLASS] = { 0 };
	unsigned state = 0;
	size_t wi = 0;
	int64_t prev = n ? ev[0].t : 0;
	for (size_t i = 0; i < n; i++) {
		const struct sev *e = &ev[i];
		if (e->t > prev) {
			/* after an idle stretch the next event is a start: the work ending the gap */
			int64_t split = e->t;
			int cause = !state && cc ? idle_cause(cc, prev, e->t, e->gpu, &split) : -1;
			if (cause == IDLE_SYNC && split > prev && split < e->t) {
				add_span(w, nw, &wi, prev, split, state, IDLE_SYNC);
				add_span(w, nw, &wi, split, e->t, state, IDLE_HOST);
			} else {
				add_span(w, nw, &wi, prev, e->t, state, cause);
			}
			prev = e->t;
		}
		if (e->start) {
			if (cnt[e->cls]++ == 0)
				state |= 1u << e->cls;
		} else if (--cnt[e->cls] == 0) {
			state &= ~(1u << e->cls);
		}
	}
}

/* idle = span - busy (the sweep never sees a stream's time before its first event) */
static void close_bd(struct kp_bd *b)
{
	int64_t busy = 0;
	for (int c = 0; c < BD_NCLASS; c++)
		busy += b->class_ns[c];
	b->idle_ns = b->span_ns - busy;
}

static void push_events(struct sev *ev, size_t *n, const struct kp_trace *t, int32_t i, int cls)
{
	const struct kp_gpu *g = &t->gpu[i];
	if (g->dur_ns <= 0)
		return;
	ev[*n] = (struct sev){ g->ts_ns, g->stream, i, 1, (int8_t)cls };
	ev[*n + 1] = (struct sev){ g->ts_ns + g->dur_ns, g->stream, i, 0, (int8_t)cls };
	*n += 2;
}

static int cmp_stream_ts(const void *pa, const void *pb, void *arg)
{
	const struct kp_gpu *gpu = arg;
	const struct kp_gpu *a = &gpu[*(const int32_t *)pa], *b = &gpu[*(const int32_t *)pb];
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	if (a->ts_ns != b->ts_ns)
		return a->ts_ns < b->ts_ns ? -1 : 1;
	return (*(const int32_t *)pa > *(const int32_t *)pb) -
	       (*(const int32_t *)pa < *(const int32_t *)pb);
}

static int cmp_thread_ts(const void *pa, const void *pb, void *arg)
{
	const struct kp_launch *l = arg;
	const struct kp_launch *a = &l[*(const int32_t *)pa], *b = &l[*(const int32_t *)pb];
	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	return (a->ts_ns > b->ts_ns) - (a->ts_ns < b->ts_ns);
}

/* cudaDeviceSynchronize, cudaStreamSynchronize, hipEventSynchronize, cuCtxSynchronize, ... */
static int is_sync(const char *n)
{
	return strstr(n, "Synchronize") != NULL;
}

/* cudaStreamWaitEvent, hipStreamWaitEvent, cuStreamWaitEvent */
static int is_wait(const char *n)
{
	return strstr(n, "StreamWaitEvent") != NULL;
}

/* Step windows (see kprof-analyze(1)): returns the count, windows in @w, rows in b->steps. */
static size_t step_windows(const struct kp_trace *t, struct kp_breakdown *b, int64_t S, int64_t E,
			   struct win **wout)
{
	int64_t *first = NULL;
	size_t nw = 0;
	if (t->nsteps) {
		first = xmalloc(t->nsteps * sizeof(*first));
		for (size_t k = 0; k < t->nsteps; k++)
			first[k] = INT64_MAX;
		for (size_t i = 0; i < t->ngpu; i++) {
			const struct kp_gpu *g = &t->gpu[i];
			if (g->step >= 0 && (size_t)g->step < t->nsteps &&
			    g->ts_ns < first[g->step])
				first[g->step] = g->ts_ns;
		}
		for (size_t k = 0; k < t->nsteps; k++)
			nw += first[k] != INT64_MAX;
	}
	struct win *w;
	if (!nw) {
		b->nsteps = 1;
		b->steps = xcalloc(1, sizeof(*b->steps));
		b->steps[0].num = -1;
		b->steps[0].cpu_ns = -1;
		w = xcalloc(1, sizeof(*w));
		w[0] = (struct win){ S, E, &b->steps[0].b };
		free(first);
		*wout = w;
		return 1;
	}
	b->steps = xcalloc(nw, sizeof(*b->steps));
	b->nsteps = nw;
	w = xcalloc(nw, sizeof(*w));
	size_t j = 0;
	int64_t at = S;
	for (size_t k = 0; k < t->nsteps; k++) {
		if (first[k] == INT64_MAX)
			continue;
		struct kp_bd_step *st = &b->steps[j];
		st->num = t->steps[k].num;
		st->cpu_ns = t->steps[k].dur_ns;
		st->partial = k == t->nsteps - 1;
		/* windows start at the step's first GPU work, never before the previous one's */
		int64_t start = j == 0 ? S : (first[k] > at ? first[k] : at);
		if (j > 0)
			w[j - 1].end = start;
		w[j] = (struct win){ start, E, &st->b };
		at = start;
		j++;
	}
	free(first);
	*wout = w;
	return nw;
}

static void add_bd(struct kp_bd *to, const struct kp_bd *x)
{
	for (int c = 0; c < BD_NCLASS; c++)
		to->class_ns[c] += x->class_ns[c];
	to->idle_ns += x->idle_ns;
	to->comm_total_ns += x->comm_total_ns;
	to->comm_overlapped_ns += x->comm_overlapped_ns;
	for (int c = 0; c < IDLE_NCAUSE; c++) {
		to->idle_cause_ns[c] += x->idle_cause_ns[c];
		to->idle_gaps[c] += x->idle_gaps[c];
	}
}

/* The launch row key of one pair: kernel name or the op the kernel is attributed to. */
struct lpair {
	const char *key;
	int32_t gpu;
};

static int cmp_lpair(const void *pa, const void *pb)
{
	const struct lpair *a = pa, *b = pb;
	if (a->key != b->key)
		return (uintptr_t)a->key < (uintptr_t)b->key ? -1 : 1;
	return (a->gpu > b->gpu) - (a->gpu < b->gpu);
}

static int cmp_lrow(const void *pa, const void *pb)
{
	const struct kp_launch_row *a = pa, *b = pb;
	if (a->cpu_ns != b->cpu_ns)
		return a->cpu_ns > b->cpu_ns ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* HTA's short kernel: GPU time under its launch call's CPU time, for calls up to 50 µs */
#define HTA_RUNTIME_CUTOFF_NS 50000

static void launch_add(struct kp_launch_row *r, const struct kp_gpu *g, const struct kp_launch *L,
		       int64_t short_ns)
{
	int64_t lat = g->ts_ns - L->ts_ns;
	if (lat < 0)
		lat = 0; /* clocks of CPU and GPU records disagree: no latency rather than a negative one */
	r->launches++;
	r->cpu_ns += L->dur_ns;
	r->lat_ns += lat;
	if (lat > r->lat_max_ns)
		r->lat_max_ns = lat;
	r->gpu_ns += g->dur_ns;
	/* short kernels are kernels: a memset or memcpy is not one, however short */
	if (g->kind == GPU_KERNEL) {
		r->kernels++;
		r->kernel_ns += g->dur_ns;
		if (g->dur_ns < short_ns) {
			r->short_n++;
			r->short_ns += g->dur_ns;
		}
	}
	if (g->dur_ns < L->dur_ns && L->dur_ns <= HTA_RUNTIME_CUTOFF_NS)
		r->cheaper_n++;
}

static void launch_stats(const struct kp_trace *t, const struct kp_bd_opts *o,
			 struct kp_breakdown *b)
{
	struct lpair *p = xmalloc((t->ngpu ? t->ngpu : 1) * sizeof(*p));
	size_t n = 0;
	b->launch_all.name = "(all)";
	for (size_t i = 0; i < t->ngpu; i++) {
		const struct kp_gpu *g = &t->gpu[i];
		if (g->launch < 0) {
			b->unlaunched++;
			continue;
		}
		const char *key = g->name;
		if (o->launch_by_op)
			key = g->op >= 0 ? t->ops[g->op].name : "(unlinked)";
		p[n++] = (struct lpair){ key, (int32_t)i };
		launch_add(&b->launch_all, g, &t->launches[g->launch], b->short_ns);
	}
	qsort(p, n, sizeof(*p), cmp_lpair);
	size_t nrows = 0;
	for (size_t i = 0; i < n; i++)
		nrows += i == 0 || p[i].key != p[i - 1].key;
	b->launch_rows = xcalloc(nrows ? nrows : 1, sizeof(*b->launch_rows));
	struct kp_launch_row *r = NULL;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || p[i].key != p[i - 1].key) {
			r = &b->launch_rows[b->nlaunch_rows++];
			r->name = p[i].key;
		}
		const struct kp_gpu *g = &t->gpu[p[i].gpu];
		launch_add(r, g, &t->launches[g->launch], b->short_ns);
	}
	qsort(b->launch_rows, b->nlaunch_rows, sizeof(*b->launch_rows), cmp_lrow);
	free(p);
}

/* What breakdown_run()'s sweeps share. */
struct bd_run {
	const struct kp_trace *t;
	int8_t *cls;    /* breakdown_class() of each GPU event */
	int64_t S, E;   /* first start and last end of GPU work with a duration */
	int32_t *ord;   /* GPU events by (device, stream, ts) */
	int32_t *prev;  /* previous GPU event on the same device stream, -1 */
	struct sev *ev; /* room for a start and an end of every GPU event */
};

/* Each GPU event's class (colls name the kernels that carry collective metadata), and the
 * span of the work with a duration; 0 when there is none. */
static int classify(struct bd_run *r)
{
	const struct kp_trace *t = r->t;
	uint8_t *coll = xcalloc(t->ngpu ? t->ngpu : 1, 1);
	for (size_t i = 0; i < t->ncolls; i++)
		if (t->colls[i].gpu >= 0 && (size_t)t->colls[i].gpu < t->ngpu)
			coll[t->colls[i].gpu] = 1;
	r->S = INT64_MAX, r->E = INT64_MIN;
	for (size_t i = 0; i < t->ngpu; i++) {
		const struct kp_gpu *g = &t->gpu[i];
		r->cls[i] = (int8_t)breakdown_class(g, coll[i]);
		if (g->dur_ns <= 0)
			continue;
		if (g->ts_ns < r->S)
			r->S = g->ts_ns;
		if (g->ts_ns + g->dur_ns > r->E)
			r->E = g->ts_ns + g->dur_ns;
	}
	free(coll);
	return r->S != INT64_MAX;
}

/* The GPU events by stream and time, each one's predecessor on its stream; returns the number
 * of streams. */
static size_t order_streams(struct bd_run *r)
{
	const struct kp_trace *t = r->t;
	size_t nstreams = 0;
	for (size_t i = 0; i < t->ngpu; i++)
		r->ord[i] = (int32_t)i;
	qsort_r(r->ord, t->ngpu, sizeof(*r->ord), cmp_stream_ts, (void *)t->gpu);
	for (size_t i = 0; i < t->ngpu; i++) {
		const struct kp_gpu *g = &t->gpu[r->ord[i]], *h = i ? &t->gpu[r->ord[i - 1]] : NULL;
		int same = h && h->device == g->device && h->stream == g->stream;
		r->prev[r->ord[i]] = same ? r->ord[i - 1] : -1;
		nstreams += !same;
	}
	return nstreams;
}

/* The stream whose events start at ord[@i], swept alone over the whole span; returns the index
 * of the next stream's first event. */
static size_t stream_breakdown(struct bd_run *r, size_t i, struct kp_breakdown *b)
{
	const struct kp_trace *t = r->t;
	const struct kp_gpu *g = &t->gpu[r->ord[i]];
	int32_t last_dev = b->nstreams ? b->streams[b->nstreams - 1].device : INT32_MIN;
	size_t j = i, n = 0;
	while (j < t->ngpu && t->gpu[r->ord[j]].device == g->device &&
	       t->gpu[r->ord[j]].stream == g->stream) {
		push_events(r->ev, &n, t, r->ord[j], r->cls[r->ord[j]]);
		j++;
	}
	struct kp_bd_stream *s = &b->streams[b->nstreams++];
	s->device = g->device;
	s->stream = g->stream;
	s->b.start_ns = r->S;
	s->b.span_ns = r->E - r->S;
	if (g->device != last_dev)
		b->ndevices++;
	qsort(r->ev, n, sizeof(*r->ev), cmp_sev);
	struct win w = { r->S, r->E, &s->b };
	sweep(r->ev, n, &w, 1, NULL);
	close_bd(&s->b);
	return j;
}

/* The launch indices of host-blocking syncs and of cross-stream waits, by thread and time. */
static void index_host_waits(const struct kp_trace *t, struct cause_ctx *cc, int32_t *syncs,
			     int32_t *waits)
{
	for (size_t i = 0; i < t->nlaunches; i++) {
		if (is_sync(t->launches[i].name))
			syncs[cc->nsyncs++] = (int32_t)i;
		else if (is_wait(t->launches[i].name))
			waits[cc->nwaits++] = (int32_t)i;
	}
	qsort_r(syncs, cc->nsyncs, sizeof(*syncs), cmp_thread_ts, (void *)t->launches);
	qsort_r(waits, cc->nwaits, sizeof(*waits), cmp_thread_ts, (void *)t->launches);
}

/* The device: all streams together, split into step windows, idle gaps with their causes. */
static void device_breakdown(struct bd_run *r, const struct cause_ctx *cc, struct kp_breakdown *b)
{
	const struct kp_trace *t = r->t;
	size_t n = 0;
	for (size_t i = 0; i < t->ngpu; i++)
		push_events(r->ev, &n, t, (int32_t)i, r->cls[i]);
	qsort(r->ev, n, sizeof(*r->ev), cmp_sev);
	struct win *w;
	size_t nw = step_windows(t, b, r->S, r->E, &w);
	for (size_t k = 0; k < nw; k++) {
		w[k].b->start_ns = w[k].start;
		w[k].b->span_ns = w[k].end - w[k].start;
	}
	sweep(r->ev, n, w, nw, cc);
	b->all.start_ns = r->S;
	b->all.span_ns = r->E - r->S;
	for (size_t k = 0; k < nw; k++) {
		close_bd(w[k].b);
		add_bd(&b->all, w[k].b);
	}
	free(w);
}

/* Per stream (each alone), then idle causes and the device by step window. */
static void sweep_all(struct bd_run *r, struct kp_breakdown *b)
{
	const struct kp_trace *t = r->t;
	r->ord = xmalloc(t->ngpu * sizeof(*r->ord));
	r->prev = xmalloc(t->ngpu * sizeof(*r->prev));
	r->ev = xmalloc(2 * t->ngpu * sizeof(*r->ev));
	b->streams = xcalloc(order_streams(r), sizeof(*b->streams));
	for (size_t i = 0; i < t->ngpu;)
		i = stream_breakdown(r, i, b);
	size_t nl = t->nlaunches ? t->nlaunches : 1;
	int32_t *syncs = xmalloc(nl * sizeof(*syncs)), *waits = xmalloc(nl * sizeof(*waits));
	struct cause_ctx cc = { t, r->prev, syncs, 0, waits, 0, b->launch_gap_ns };
	index_host_waits(t, &cc, syncs, waits);
	device_breakdown(r, &cc, b);
	free(syncs);
	free(waits);
	free(r->ev);
	free(r->prev);
	free(r->ord);
}

int breakdown_run(const struct kp_trace *t, const struct kp_bd_opts *o, struct kp_breakdown *b)
{
	static const struct kp_bd_opts defaults = { 0 };
	if (!o)
		o = &defaults;
	memset(b, 0, sizeof(*b));
	b->launch_gap_ns = o->launch_gap_ns > 0 ? o->launch_gap_ns : BD_LAUNCH_GAP_NS;
	b->short_ns = o->short_ns > 0 ? o->short_ns : BD_SHORT_KERNEL_NS;
	b->prefix = t->prefix;
	launch_stats(t, o, b);
	struct bd_run r = { .t = t };
	r.cls = xmalloc((t->ngpu ? t->ngpu : 1) * sizeof(*r.cls));
	if (classify(&r))
		sweep_all(&r, b);
	else
		b->nsteps = 0; /* no GPU work with a duration: an empty window */
	free(r.cls);
	return 0;
}

void breakdown_free(struct kp_breakdown *b)
{
	free(b->steps);
	free(b->streams);
	free(b->launch_rows);
	memset(b, 0, sizeof(*b));
}
