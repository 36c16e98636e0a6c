/*
 * link.c — GPU work -> launching runtime/driver call -> CPU op -> the op whose model counts it.
 *
 * GPU event -> launch by "correlation" (many kernels may share one: graph launches).
 * Launch -> op by "External id" when it names a cpu_op enclosing the launch (or, for a
 * kernel of a graph launch, any cpu_op: kprof capture's graph-replay ops), else
 * by time nesting on the launching thread (2022-23 traces set "External id" to
 * the correlation and match nothing).  Ops nest by strict containment on their thread
 * (same ts and dur: siblings, unless B/E events made one the other's parent), and the
 * tree is built in one stack pass.  Then one level of the op tree is counted:
 * the outermost ancestor with a primary model (matmul, conv, attention), else the
 * nearest with a secondary model (pointwise, copies, ...), else the innermost op.
 */
#include "kprof/link.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/diag.h"
#include "kprof/fwdbwd.h"
#include "kprof/idmap.h"
#include "kprof/opmodel.h"
#include "kprof/par.h"
#include "kprof/pytree.h"
#include "kprof/trace.h"

static int cmp_op(const void *a, const void *b)
{
	const struct kp_op *x = a, *y = b;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	if (x->dur_ns != y->dur_ns)
		return x->dur_ns > y->dur_ns ? -1 : 1; /* the enclosing one first */
	return x->off < y->off ? -1 : x->off > y->off;
}

static int cmp_launch(const void *a, const void *b)
{
	const struct kp_launch *x = a, *y = b;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

struct order_ctx {
	const char *base;
	size_t size;
	int (*cmp)(const void *, const void *);
	int32_t *ord;
	const size_t *start; /* thread k's run: ord[start[k] .. start[k + 1]) */
};

static int cmp_index(const void *a, const void *b, void *arg)
{
	const struct order_ctx *c = arg;
	return c->cmp(c->base + (size_t)*(const int32_t *)a * c->size,
		      c->base + (size_t)*(const int32_t *)b * c->size);
}

/* Thread k's run sorted, when out of order (a task of order_by_thread) */
static void sort_thread_run(void *arg, size_t k)
{
	const struct order_ctx *c = arg;
	/* one job: a natural merge sort, one pass when the run is in order (src/base/par.c) */
	par_sort_i32(1, c->ord + c->start[k], c->start[k + 1] - c->start[k], cmp_index,
		     (void *)c);
}

/* A check of one run's order, cut into ranges of pairs */
struct run_check {
	const struct order_ctx *c;
	const int32_t *run;
	atomic_int unsorted;
};

static void check_pairs(void *arg, size_t lo, size_t hi)
{
	struct run_check *rc = arg;
	const struct order_ctx *c = rc->c;
	for (size_t i = lo; i < hi && !atomic_load_explicit(&rc->unsorted, memory_order_relaxed);
	     i++)
		if (c->cmp(c->base + (size_t)rc->run[i] * c->size,
			   c->base + (size_t)rc->run[i + 1] * c->size) > 0)
			atomic_store(&rc->unsorted, 1);
}

/*
 * Each thread's run sorted when out of order: threads on the jobs, or, with fewer threads
 * than jobs (most traces have one or two), one run after the other, each checked in ranges
 * and sorted by par_sort_i32 (stable, as qsort_r: the same order).
 */
static void sort_runs(struct order_ctx *c, size_t nthreads, int jobs)
{
	if (jobs <= 1 || nthreads >= (size_t)jobs) {
		par_run(jobs, nthreads, sort_thread_run, c);
		return;
	}
	for (size_t k = 0; k < nthreads; k++) {
		size_t m = c->start[k + 1] - c->start[k];
		struct run_check rc = { .c = c, .run = c->ord + c->start[k] };
		atomic_init(&rc.unsorted, 0);
		if (m > 1)
			par_for(jobs, m - 1, 4096, check_pairs, &rc);
		if (atomic_load(&rc.unsorted))
			par_sort_i32(jobs, c->ord + c->start[k], m, cmp_index, c);
	}
}

/* A stable counting sort of record indexes by thread, in ranges of records. */
struct bucket_ctx {
	const char *base;
	size_t size, thread_off, nthreads, n;
	int32_t *ord;
	size_t *count; /* [range][thread]: records, then where the range's next one goes */
	size_t nranges;
};

static int32_t thread_of(const struct bucket_ctx *b, size_t i)
{
	int32_t th;
	memcpy(&th, b->base + i * b->size + b->thread_off, sizeof(th));
	return th;
}

/* Range r's records counted per thread */
static void count_range(void *arg, size_t r)
{
	struct bucket_ctx *b = arg;
	size_t *c = b->count + r * (b->nthreads + 1);
	for (size_t i = b->n * r / b->nranges; i < b->n * (r + 1) / b->nranges; i++)
		c[thread_of(b, i)]++;
}

/* Range r's records placed at their positions (in record order within each thread) */
static void scatter_range(void *arg, size_t r)
{
	struct bucket_ctx *b = arg;
	size_t *next = b->count + r * (b->nthreads + 1);
	for (size_t i = b->n * r / b->nranges; i < b->n * (r + 1) / b->nranges; i++)
		b->ord[next[thread_of(b, i)]++] = (int32_t)i;
}

/*
 * Indices of the records in (thread, ...) order; the records themselves stay put (ops are
 * referred to by index everywhere).  A stable counting pass by thread (ranges of records
 * counted and placed on the jobs), then each thread's run is sorted only when out of order
 * (in parallel, sort_runs): Kineto writes a thread's events mostly in time order, so this
 * is usually two linear passes.  *startp: the runs' bounds, nthreads + 1 of them.
 */
static int32_t *order_by_thread(const void *base, size_t n, size_t size, size_t thread_off,
				size_t nthreads, int (*cmp)(const void *, const void *), int jobs,
				size_t **startp)
{
	int32_t *ord = xmalloc((n + 1) * sizeof(*ord));
	size_t *start = xcalloc(nthreads + 2, sizeof(*start));
	struct bucket_ctx b = { base, size, thread_off, nthreads, n, ord, NULL, 1 };
	if (jobs > 1 && n / 16384 > 1)
		b.nranges = n / 16384 < 4 * (size_t)jobs ? n / 16384 : 4 * (size_t)jobs;
	b.count = xcalloc(b.nranges * (nthreads + 1), sizeof(*b.count));
	par_run(jobs, b.nranges, count_range, &b);
	/* range r of thread k goes after thread k's records of ranges before it */
	size_t pos = 0;
	for (size_t k = 0; k < nthreads; k++) {
		start[k] = pos;
		for (size_t r = 0; r < b.nranges; r++) {
			size_t c = b.count[r * (nthreads + 1) + k];
			b.count[r * (nthreads + 1) + k] = pos;
			pos += c;
		}
	}
	start[nthreads] = pos;
	par_run(jobs, b.nranges, scatter_range, &b);
	free(b.count);
	struct order_ctx ctx = { base, size, cmp, ord, start };
	sort_runs(&ctx, nthreads, jobs);
	*startp = start;
	return ord;
}

static int cmp_step(const void *a, const void *b)
{
	const struct kp_step *x = a, *y = b;
	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

/* cudaGraphLaunch / cuGraphLaunch (any version suffix) */
static int graph_launch(const struct kp_launch *l)
{
	const char *n = l->name;
	return n && (!strncmp(n, "cudaGraphLaunch", 15) || !strncmp(n, "cuGraphLaunch", 13));
}

static int encloses(const struct kp_op *op, int32_t thread, int64_t ts)
{
	return op->thread == thread && op->ts_ns <= ts && ts <= op->ts_ns + op->dur_ns;
}

/*
 * Does @p (index @pi) enclose @op, which comes after it in cmp_op order?  Strictly: an op
 * with the same interval is a sibling (250k identical aten::mm calls are 250k calls, not
 * one chain), unless trace_load recorded @p as its explicit parent (B/E nesting, @hint).
 */
static int nests_in(const struct kp_op *p, int32_t pi, const struct kp_op *op, int32_t hint)
{
	if (p->thread != op->thread || op->ts_ns + op->dur_ns > p->ts_ns + p->dur_ns)
		return 0;
	return p->ts_ns != op->ts_ns || p->dur_ns != op->dur_ns || hint == pi;
}

/* The ops of one thread and where they start in the (thread, ts) order. */
struct tree_ctx {
	struct kp_trace *t;
	const int32_t *oord;
	const size_t *start;
};

/* Thread k's stack walk: each op's parent and encoded model level (see op_tree). */
static void thread_tree(void *arg, size_t k)
{
	const struct tree_ctx *c = arg;
	struct kp_trace *t = c->t;
	int32_t *stack = xmalloc((c->start[k + 1] - c->start[k] + 1) * sizeof(*stack));
	size_t sp = 0;
	for (size_t j = c->start[k]; j < c->start[k + 1]; j++) {
		int32_t i = c->oord[j];
		struct kp_op *op = &t->ops[i];
		int32_t hint = op->parent; /* explicit parent from trace_load, else -1 */
		while (sp && !nests_in(&t->ops[stack[sp - 1]], stack[sp - 1], op, hint))
			sp--;
		int32_t par = sp ? stack[sp - 1] : -1;
		enum kp_model_class cl = (enum kp_model_class)op->cls;
		op->parent = par;
		int32_t pm = par >= 0 ? t->ops[par].model : -1; /* encoded as above */
		if (pm >= 0)
			op->model = pm;
		else if (cl == MODEL_PRIMARY)
			op->model = i;
		else if (cl == MODEL_SECONDARY)
			op->model = -2 - i;
		else
			op->model = pm; /* the parent's secondary, or -1 */
		stack[sp++] = i;
	}
	free(stack);
}

/* The model levels of ops [lo, hi) decoded */
static void decode_models(void *arg, size_t lo, size_t hi)
{
	struct kp_op *ops = arg;
	for (size_t i = lo; i < hi; i++) {
		struct kp_op *op = &ops[i];
		op->model = op->model >= 0    ? op->model
			    : op->model <= -2 ? -2 - op->model
					      : (int32_t)i;
	}
}

/*
 * Pass 1: the op tree per thread and each op's model level, memoized down the tree (a
 * parent is placed before its children, so each op costs O(1) whatever the depth): the
 * outermost ancestor-or-self with a primary model, else the nearest with a secondary
 * model, else the op itself.  Returns the ops' order by (thread, ts) for pass 3, and in
 * *startp where each thread's ops start in it.  Threads are walked in parallel (a walk
 * pops every op of another thread, so each thread's tree is its own).
 * While the tree is walked, each op's model field holds its primary ancestor-or-self, else
 * -2 - its secondary one, else -1 (an op below a primary never needs the secondary): no
 * arrays beside.
 */
static int32_t *op_tree(struct kp_trace *t, size_t **startp)
{
	int32_t *oord = order_by_thread(t->ops, t->nops, sizeof(*t->ops),
					offsetof(struct kp_op, thread), t->nthreads, cmp_op,
					t->jobs, startp);
	struct tree_ctx c = { t, oord, *startp };
	par_run(t->jobs, t->nthreads, thread_tree, &c);
	par_for(t->jobs, t->nops, 16384, decode_models, t->ops);
	return oord;
}

/* The ids trace_load kept for linking (-1: none, also once link_trace freed them) */
static struct kp_corr_ids launch_ids(const struct kp_trace *t, size_t i)
{
	return t->launch_ids ? t->launch_ids[i] : (struct kp_corr_ids){ -1, -1 };
}

static struct kp_corr_ids gpu_ids(const struct kp_trace *t, size_t i)
{
	return t->gpu_ids ? t->gpu_ids[i] : (struct kp_corr_ids){ -1, -1 };
}

/* Pass 2: External id -> op (the first op in file order wins). */
static void ext_map(const struct kp_trace *t, struct kp_idmap *ext)
{
	idmap_build(ext, t->op_ext, sizeof(*t->op_ext), t->nops, t->jobs);
}

/* Pass 3's state: both orders by (thread, ts) and where each thread starts in them. */
struct sweep_ctx {
	struct kp_trace *t;
	const struct kp_idmap *ext;
	const int32_t *oord, *lord;
	const size_t *ostart, *lstart;
};

/* Thread k's launches -> innermost enclosing op: merge sweep over its ops and launches. */
static void thread_launches(void *arg, size_t k)
{
	const struct sweep_ctx *c = arg;
	struct kp_trace *t = c->t;
	int32_t *stack = xmalloc((c->ostart[k + 1] - c->ostart[k] + 1) * sizeof(*stack));
	size_t sp = 0;
	size_t ok = c->ostart[k];
	for (size_t lk = c->lstart[k]; lk < c->lstart[k + 1]; lk++) {
		struct kp_launch *l = &t->launches[c->lord[lk]];
		while (ok < c->ostart[k + 1]) {
			struct kp_op *op = &t->ops[c->oord[ok]];
			if (op->ts_ns > l->ts_ns)
				break;
			while (sp && op->ts_ns >= t->ops[stack[sp - 1]].ts_ns +
							  t->ops[stack[sp - 1]].dur_ns)
				sp--;
			stack[sp++] = c->oord[ok++];
		}
		while (sp && !encloses(&t->ops[stack[sp - 1]], l->thread, l->ts_ns))
			sp--;
		l->op = sp ? stack[sp - 1] : -1;
	}
	free(stack);
}

/* Launches [lo, hi): the op their External id names wins when it encloses them. */
static void launch_range_ext(void *arg, size_t lo, size_t hi)
{
	const struct sweep_ctx *c = arg;
	struct kp_trace *t = c->t;
	for (size_t i = lo; i < hi; i++) {
		struct kp_launch *l = &t->launches[i];
		int32_t e = idmap_get(c->ext, launch_ids(t, i).ext_id);
		if (e >= 0 && encloses(&t->ops[e], l->thread, l->ts_ns))
			l->op = e;
	}
}

/*
 * Pass 3: launch -> innermost enclosing op: merge sweep over both orders by (thread, ts),
 * one thread's records at a time (threads in parallel: an op of another thread never
 * encloses a launch, so each thread's sweep starts from an empty stack); then, launches in
 * parallel, the op their External id names where it encloses them.
 */
static void launch_ops(struct kp_trace *t, const int32_t *oord, const size_t *ostart,
		       const struct kp_idmap *ext)
{
	size_t *lstart;
	int32_t *lord = order_by_thread(t->launches, t->nlaunches, sizeof(*t->launches),
					offsetof(struct kp_launch, thread), t->nthreads, cmp_launch,
					t->jobs, &lstart);
	struct sweep_ctx c = { t, ext, oord, lord, ostart, lstart };
	par_run(t->jobs, t->nthreads, thread_launches, &c);
	par_for(t->jobs, t->nlaunches, 4096, launch_range_ext, &c);
	free(lstart);
	free(lord);
}

struct gpu_ctx {
	struct kp_trace *t;
	const struct kp_idmap *ext, *corr;
};

/* GPU events [lo, hi) -> launch by correlation -> op (its model level). */
static void gpu_range_ops(void *arg, size_t lo, size_t hi)
{
	const struct gpu_ctx *c = arg;
	struct kp_trace *t = c->t;
	for (size_t i = lo; i < hi; i++) {
		struct kp_gpu *g = &t->gpu[i];
		struct kp_corr_ids ids = gpu_ids(t, i);
		g->launch = idmap_get(c->corr, ids.corr);
		int32_t op = -1;
		if (g->launch >= 0) {
			struct kp_launch *l = &t->launches[g->launch];
			int32_t e = idmap_get(c->ext, ids.ext_id);
			/*
			 * A kernel replayed by a graph launch may name the op its node was
			 * created in (kprof capture --): that op need not enclose the launch.
			 */
			op = e >= 0 && (encloses(&t->ops[e], l->thread, l->ts_ns) ||
					graph_launch(l))
				     ? e
				     : l->op;
		} else {
			/* no runtime event recorded: trust External id only if it names an op */
			op = idmap_get(c->ext, ids.ext_id);
		}
		g->op = op >= 0 ? t->ops[op].model : -1;
	}
}

/* Pass 4: GPU event -> launch by correlation -> op (its model level), events in parallel. */
static void gpu_ops(struct kp_trace *t, const struct kp_idmap *ext)
{
	struct kp_idmap corr;
	idmap_build(&corr, t->launch_ids ? &t->launch_ids[0].corr : NULL, sizeof(*t->launch_ids),
		   t->nlaunches, t->jobs);
	if (idmap_paged(&corr)) { /* the paged map holds its values: the launches' ids are done with */
		free(t->launch_ids);
		t->launch_ids = NULL;
		t->caplaunch_ids = 0;
	}
	struct gpu_ctx c = { t, ext, &corr };
	par_for(t->jobs, t->ngpu, 4096, gpu_range_ops, &c);
	idmap_free(&corr);
}

/* GPU events [lo, hi): the step holding their launch (steps sorted by start). */
static void gpu_range_steps(void *arg, size_t lo, size_t hi)
{
	struct kp_trace *t = arg;
	for (size_t i = lo; i < hi; i++) {
		struct kp_gpu *g = &t->gpu[i];
		int64_t when = g->launch >= 0 ? t->launches[g->launch].ts_ns : g->ts_ns;
		/* last step starting at or before @when (steps do not overlap) */
		size_t a = 0, b = t->nsteps;
		while (a < b) {
			size_t mid = (a + b) / 2;
			if (t->steps[mid].ts_ns <= when)
				a = mid + 1;
			else
				b = mid;
		}
		if (a > 0 && when <= t->steps[a - 1].ts_ns + t->steps[a - 1].dur_ns)
			g->step = (int16_t)(a - 1 < INT16_MAX ? a - 1 : INT16_MAX);
	}
}

/* Pass 5: steps: a GPU event belongs to the ProfilerStep span holding its launch. */
static void gpu_steps(struct kp_trace *t)
{
	if (!t->nsteps)
		return;
	if (t->nsteps > INT16_MAX)
		diag_warn_add(
			&t->warn, "traces with too many steps", t->display,
			"%zu ProfilerStep spans: GPU work of spans past the %d-th counts in the %d-th",
			t->nsteps, INT16_MAX + 1, INT16_MAX + 1);
	qsort(t->steps, t->nsteps, sizeof(*t->steps), cmp_step);
	par_for(t->jobs, t->ngpu, 4096, gpu_range_steps, t);
}

/*
 * Pass 6: the GPU events without a launch call that start before the first GPU event with
 * one: work launched before the profiler's window opened (its launches are not in the
 * trace), counted in t->prefix.  None when no GPU event has a launch call.
 */
static void unlaunched_prefix(struct kp_trace *t)
{
	struct kp_prefix *p = &t->prefix;
	memset(p, 0, sizeof(*p));
	p->until_ns = INT64_MAX;
	for (size_t i = 0; i < t->ngpu; i++)
		if (t->gpu[i].launch >= 0 && t->gpu[i].ts_ns < p->until_ns)
			p->until_ns = t->gpu[i].ts_ns;
	if (p->until_ns == INT64_MAX) { /* no launch call at all: nothing marks the window */
		p->until_ns = 0;
		return;
	}
	p->start_ns = p->until_ns;
	for (size_t i = 0; i < t->ngpu; i++) {
		const struct kp_gpu *g = &t->gpu[i];
		if (g->launch >= 0 || g->ts_ns >= p->until_ns)
			continue;
		p->n++;
		p->gpu_ns += g->dur_ns;
		if (g->ts_ns < p->start_ns)
			p->start_ns = g->ts_ns;
	}
}

void link_drop_unlaunched_prefix(struct kp_trace *t)
{
	const struct kp_prefix *p = &t->prefix;
	if (!p->n || p->dropped)
		return;
	/* new index of each GPU event, -1 when dropped; collectives follow their kernel */
	size_t was = t->ngpu, n = 0;
	int32_t *to = xmalloc(was * sizeof(*to));
	for (size_t i = 0; i < was; i++) {
		const struct kp_gpu *g = &t->gpu[i];
		if (g->launch < 0 && g->ts_ns < p->until_ns) {
			to[i] = -1;
			continue;
		}
		to[i] = (int32_t)n;
		t->gpu[n++] = *g;
	}
	t->ngpu = n;
	size_t nc = 0;
	for (size_t i = 0; i < t->ncolls; i++) {
		int32_t g = t->colls[i].gpu;
		if (g < 0 || (size_t)g >= was || to[g] < 0)
			continue;
		t->colls[nc] = t->colls[i];
		t->colls[nc++].gpu = to[g];
	}
	t->ncolls = nc;
	free(to);
	t->prefix.dropped = 1;
}

/*
 * The passes in order; each runs its independent parts (threads, ranges of GPU events,
 * sort runs) on t->jobs threads, joined before the next pass.
 */
void link_trace(struct kp_trace *t)
{
	size_t *ostart;
	int32_t *oord = op_tree(t, &ostart);
	fwdbwd_link(t);
	pytree_link(t); /* needs op parents, sets no field linking reads */
	struct kp_idmap ext;
	ext_map(t, &ext);
	if (idmap_paged(&ext)) { /* the paged map holds its values, fewer bytes at link's peak */
		free(t->op_ext);
		t->op_ext = NULL;
		t->capop_ext = 0;
	}
	launch_ops(t, oord, ostart, &ext);
	free(ostart);
	free(oord);
	gpu_ops(t, &ext);
	idmap_free(&ext);
	trace_free_ids(t); /* nothing after linking reads them (the maps read keys there) */
	gpu_steps(t);
	unlaunched_prefix(t);
}
