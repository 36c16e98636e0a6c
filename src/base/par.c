/*
 * par.c — parallel loops over tasks on a pool of threads (see par.h).
 *
 * The passes that use it take milliseconds, and a link and analysis make a few dozen calls:
 * starting jobs - 1 threads a call cost 0.05-0.4 ms each time (2-core machine, 2-16 jobs),
 * so the workers are started on first use and kept, parked on a condition variable; a call
 * publishes its task counter, wakes them and works too, then waits for the ones it asked
 * for.  One call uses the pool at a time: a call made while it is taken (another thread's,
 * or from inside a task) starts its own threads and joins them.  A forked child forgets the
 * parent's workers.  A thread that cannot be started only means fewer workers: the caller
 * alone finishes every task.
 */
#include "kprof/par.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/arena.h"

struct job {
	atomic_size_t next;
	size_t ntasks;
	void (*fn)(void *arg, size_t k);
	void *arg;
};

static void *work(void *p)
{
	struct job *j = p;
	for (size_t k; (k = atomic_fetch_add(&j->next, 1)) < j->ntasks;)
		j->fn(j->arg, k);
	return NULL;
}

#define POOL_MAX 255

/* The kept workers; gen, job, want and active under m. */
static struct {
	pthread_mutex_t owner; /* held by the call using the pool */
	pthread_mutex_t m;
	pthread_cond_t go, done;
	size_t nthreads;   /* started */
	unsigned long gen; /* one a call */
	struct job *job;
	size_t want;   /* workers 0 .. want-1 take part in this call */
	size_t active; /* of those, still working */
} pool = { .owner = PTHREAD_MUTEX_INITIALIZER,
	   .m = PTHREAD_MUTEX_INITIALIZER,
	   .go = PTHREAD_COND_INITIALIZER,
	   .done = PTHREAD_COND_INITIALIZER };

static void *pool_worker(void *arg)
{
	size_t me = (size_t)arg;
	unsigned long seen = 0;
	pthread_mutex_lock(&pool.m);
	for (;;) {
		while (pool.gen == seen)
			pthread_cond_wait(&pool.go, &pool.m);
		seen = pool.gen;
		if (me >= pool.want)
			continue;
		struct job *j = pool.job;
		pthread_mutex_unlock(&pool.m);
		work(j);
		pthread_mutex_lock(&pool.m);
		if (--pool.active == 0)
			pthread_cond_signal(&pool.done);
	}
	return NULL;
}

/* A forked child has none of the parent's workers: it starts its own on first use. */
static void pool_forget(void)
{
	pthread_mutex_init(&pool.owner, NULL);
	pthread_mutex_init(&pool.m, NULL);
	pthread_cond_init(&pool.go, NULL);
	pthread_cond_init(&pool.done, NULL);
	pool.nthreads = 0;
	pool.want = pool.active = 0;
}

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void pool_setup(void)
{
	pthread_atfork(NULL, NULL, pool_forget);
}

/* @j on the pool's first @want workers (started as needed) and the caller; the owner held. */
static void pool_run(struct job *j, size_t want)
{
	pthread_once(&pool_once, pool_setup);
	while (pool.nthreads < want && pool.nthreads < POOL_MAX) {
		pthread_t th;
		if (pthread_create(&th, NULL, pool_worker, (void *)pool.nthreads) != 0)
			break;
		pthread_detach(th);
		pool.nthreads++;
	}
	want = want < pool.nthreads ? want : pool.nthreads;
	pthread_mutex_lock(&pool.m);
	pool.job = j;
	pool.want = pool.active = want;
	pool.gen++;
	pthread_cond_broadcast(&pool.go);
	pthread_mutex_unlock(&pool.m);
	work(j);
	pthread_mutex_lock(&pool.m);
	while (pool.active)
		pthread_cond_wait(&pool.done, &pool.m);
	pthread_mutex_unlock(&pool.m);
}

/* @j on @nth threads started for it and the caller. */
static void spawn_run(struct job *j, size_t nth)
{
	pthread_t *th = xmalloc(nth * sizeof(*th));
	size_t started = 0;
	while (started < nth && pthread_create(&th[started], NULL, work, j) == 0)
		started++;
	work(j);
	for (size_t i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	free(th);
}

void par_run(int jobs, size_t ntasks, void (*fn)(void *arg, size_t k), void *arg)
{
	if (jobs <= 1 || ntasks <= 1) {
		for (size_t k = 0; k < ntasks; k++)
			fn(arg, k);
		return;
	}
	struct job j = { .ntasks = ntasks, .fn = fn, .arg = arg };
	atomic_init(&j.next, 0);
	size_t nth = (size_t)jobs < ntasks ? (size_t)jobs - 1 : ntasks - 1;
	if (pthread_mutex_trylock(&pool.owner) == 0) {
		pool_run(&j, nth);
		pthread_mutex_unlock(&pool.owner);
	} else {
		spawn_run(&j, nth);
	}
}

struct range_job {
	size_t n, nranges;
	void (*fn)(void *arg, size_t lo, size_t hi);
	void *arg;
};

static void range_task(void *p, size_t k)
{
	const struct range_job *r = p;
	r->fn(r->arg, r->n * k / r->nranges, r->n * (k + 1) / r->nranges);
}

void par_for(int jobs, size_t n, size_t grain, void (*fn)(void *arg, size_t lo, size_t hi),
	     void *arg)
{
	size_t nr = grain ? n / grain : n;
	if (nr > 4 * (size_t)jobs)
		nr = 4 * (size_t)jobs;
	if (jobs <= 1 || nr < 2) {
		fn(arg, 0, n);
		return;
	}
	struct range_job r = { n, nr, fn, arg };
	par_run(jobs, nr, range_task, &r);
}

/* ---- sort: sorted runs, then rounds of pairwise merges cut at equal output ranks ---- */

struct sort_job {
	int32_t *src, *dst;
	size_t *bound; /* runs of this round: [bound[r], bound[r + 1]) */
	size_t nruns;
	size_t pieces; /* per merge */
	int (*cmp)(const void *, const void *, void *);
	void *arg;
};

/* The natural runs of one sort: at least SORT_MINRUN values each but the last. */
#define SORT_MINRUN 32

static void merge(const struct sort_job *s, const int32_t *a, size_t na, const int32_t *b,
		  size_t nb, int32_t *out);

/*
 * Runs src[a0..b0) and src[b0..b1) merged into dst[a0..b1): a's values up to b's first and
 * b's values from a's last on are copied, only the overlap merged (found by binary search),
 * so runs that meet in a short stretch -- a trace's later records out of order only within
 * a short distance -- cost that stretch and not their lengths.
 */
static void merge_trimmed(const struct sort_job *s, size_t a0, size_t b0, size_t b1)
{
	const int32_t *src = s->src;
	int32_t *dst = s->dst;
	size_t i = a0, j = b1;
	if (b1 > b0 && s->cmp(&src[b0 - 1], &src[b0], s->arg) > 0) {
		size_t lo = a0, hi = b0; /* i: a's first value after b's first (ties: a first) */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (s->cmp(&src[mid], &src[b0], s->arg) <= 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		i = lo;
		lo = b0, hi = b1; /* j: b's first value not before a's last */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (s->cmp(&src[mid], &src[b0 - 1], s->arg) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		j = lo;
	} else {
		i = b0; /* in order already */
		j = b0;
	}
	memcpy(dst + a0, src + a0, (i - a0) * sizeof(*src));
	merge(s, src + i, b0 - i, src + b0, j - b0, dst + i);
	memcpy(dst + i + (b0 - i) + (j - b0), src + j, (b1 - j) * sizeof(*src));
}

/* After a round of pairwise merges of @s's runs (of @n values): run m is what runs 2m and
 * 2m+1 were, and the merged values are the source of the next round. */
static void end_round(struct sort_job *s, size_t n)
{
	size_t nm = (s->nruns + 1) / 2;
	for (size_t m = 0; m < nm; m++)
		s->bound[m] = s->bound[2 * m];
	s->bound[nm] = n;
	s->nruns = nm;
	int32_t *x = s->src;
	s->src = s->dst;
	s->dst = x;
}

/*
 * Sort v[0..n) stably: its non-descending runs, the short ones grown to SORT_MINRUN by binary
 * insertion, then merged pairwise.  Linear on the nearly sorted arrays link and analyze sort
 * (ids and start times counting up through the file, a few runs a trace; qsort_r's merge sort
 * made log2(n) passes over them whatever their order), n log n on others.
 */
static void nat_sort(int32_t *v, size_t n, int (*cmp)(const void *, const void *, void *),
		     void *arg)
{
	if (n < 2)
		return;
	size_t nb = 0, cap = 64;
	size_t *bound = xmalloc(cap * sizeof(*bound));
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && cmp(&v[j - 1], &v[j], arg) <= 0)
			j++;
		if (j - i < SORT_MINRUN && j < n) {
			size_t e = i + SORT_MINRUN < n ? i + SORT_MINRUN : n;
			for (; j < e; j++) {
				int32_t x = v[j];
				size_t lo = i, hi = j; /* after every value <= x: stable */
				while (lo < hi) {
					size_t mid = lo + (hi - lo) / 2;
					if (cmp(&v[mid], &x, arg) <= 0)
						lo = mid + 1;
					else
						hi = mid;
				}
				memmove(&v[lo + 1], &v[lo], (j - lo) * sizeof(*v));
				v[lo] = x;
			}
			while (j < n && cmp(&v[j - 1], &v[j], arg) <= 0)
				j++;
		}
		if (nb + 2 > cap) {
			cap *= 2;
			bound = xrealloc(bound, cap * sizeof(*bound));
		}
		bound[nb++] = i;
		i = j;
	}
	bound[nb] = n;
	if (nb > 1) {
		int32_t *tmp = xmalloc(n * sizeof(*tmp));
		struct sort_job s = { v, tmp, bound, nb, 1, cmp, arg };
		while (s.nruns > 1) {
			size_t nm = (s.nruns + 1) / 2;
			for (size_t m = 0; m < nm; m++) {
				size_t a0 = bound[2 * m], b0 = bound[2 * m + 1];
				size_t b1 = 2 * m + 2 <= s.nruns ? bound[2 * m + 2] : b0;
				merge_trimmed(&s, a0, b0, b1);
			}
			end_round(&s, n);
		}
		if (s.src != v)
			memcpy(v, s.src, n * sizeof(*v));
		free(tmp);
	}
	free(bound);
}

static void sort_run(void *p, size_t k)
{
	struct sort_job *s = p;
	nat_sort(s->src + s->bound[k], s->bound[k + 1] - s->bound[k], s->cmp, s->arg);
}

/*
 * How many of the first @k outputs of the stable merge of a[0..na) and b[0..nb) come from
 * @a (a's element first on ties).
 */
static size_t co_rank(const struct sort_job *s, const int32_t *a, size_t na, const int32_t *b,
		      size_t nb, size_t k)
{
	size_t lo = k > nb ? k - nb : 0, hi = k < na ? k : na;
	while (lo < hi) {
		size_t i = lo + (hi - lo) / 2, j = k - i;
		if (j > 0 && s->cmp(&a[i], &b[j - 1], s->arg) <= 0)
			lo = i + 1;
		else
			hi = i;
	}
	return lo;
}

static void merge(const struct sort_job *s, const int32_t *a, size_t na, const int32_t *b,
		  size_t nb, int32_t *out)
{
	size_t i = 0, j = 0, o = 0;
	while (i < na && j < nb)
		out[o++] = s->cmp(&b[j], &a[i], s->arg) < 0 ? b[j++] : a[i++];
	memcpy(out + o, a + i, (na - i) * sizeof(*a));
	memcpy(out + o + (na - i), b + j, (nb - j) * sizeof(*b));
}

/* Task k: piece k % pieces of the merge of runs 2m and 2m+1 (m = k / pieces); an odd last
 * run is copied. */
static void merge_piece(void *p, size_t k)
{
	const struct sort_job *s = p;
	size_t m = k / s->pieces, q = k % s->pieces;
	size_t a0 = s->bound[2 * m], b0 = s->bound[2 * m + 1];
	size_t b1 = 2 * m + 2 <= s->nruns ? s->bound[2 * m + 2] : b0;
	size_t na = b0 - a0, nb = b1 - b0, len = na + nb;
	size_t k0 = len * q / s->pieces, k1 = len * (q + 1) / s->pieces;
	const int32_t *a = s->src + a0, *b = s->src + b0;
	size_t i0 = co_rank(s, a, na, b, nb, k0), i1 = co_rank(s, a, na, b, nb, k1);
	merge(s, a + i0, i1 - i0, b + (k0 - i0), (k1 - i1) - (k0 - i0), s->dst + a0 + k0);
}

void par_sort_i32(int jobs, int32_t *v, size_t n,
		  int (*cmp)(const void *a, const void *b, void *arg), void *arg)
{
	size_t nruns = jobs > 1 ? (size_t)jobs : 1;
	if (nruns > n / 4096)
		nruns = n / 4096;
	if (nruns < 2) {
		nat_sort(v, n, cmp, arg);
		return;
	}
	size_t *bound = xmalloc((nruns + 1) * sizeof(*bound));
	for (size_t r = 0; r <= nruns; r++)
		bound[r] = n * r / nruns;
	int32_t *tmp = xmalloc(n * sizeof(*tmp));
	struct sort_job s = { v, tmp, bound, nruns, 1, cmp, arg };
	par_run(jobs, nruns, sort_run, &s);
	while (s.nruns > 1) {
		size_t nm = (s.nruns + 1) / 2;
		s.pieces = ((size_t)jobs + nm - 1) / nm;
		par_run(jobs, nm * s.pieces, merge_piece, &s);
		end_round(&s, n);
	}
	if (s.src != v)
		memcpy(v, s.src, n * sizeof(*v));
	free(tmp);
	free(bound);
}
