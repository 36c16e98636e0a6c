/*
 * test-par.c — parallel loops: every task runs once, ranges cover [0, n) in order, -j 1 runs
 * inline on the caller, calls nest, come from several threads at once and from a forked
 * child, and the parallel sort equals qsort_r (ties in input order) for every job count, size
 * and run boundary.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "kprof/par.h"

struct count {
	int *hits;
	pthread_t caller;
	int others; /* tasks run off the caller's thread */
	pthread_mutex_t lock;
};

static void hit(void *p, size_t k)
{
	struct count *c = p;
	pthread_mutex_lock(&c->lock);
	c->hits[k]++;
	if (!pthread_equal(pthread_self(), c->caller))
		c->others++;
	pthread_mutex_unlock(&c->lock);
}

static void every_task_runs_once(void **state)
{
	(void)state;
	static const int jobs[] = { 0, 1, 2, 3, 8, 64 };
	for (size_t ji = 0; ji < sizeof(jobs) / sizeof(*jobs); ji++)
		for (size_t n = 0; n < 40; n += 7) {
			struct count c = { .hits = calloc(n + 1, sizeof(int)),
					   .caller = pthread_self() };
			pthread_mutex_init(&c.lock, NULL);
			par_run(jobs[ji], n, hit, &c);
			for (size_t k = 0; k < n; k++)
				assert_int_equal(c.hits[k], 1);
			if (jobs[ji] <= 1)
				assert_int_equal(c.others, 0);
			pthread_mutex_destroy(&c.lock);
			free(c.hits);
		}
}

struct ranges {
	size_t lo[256], hi[256];
	size_t n;
	pthread_mutex_t lock;
};

static void note_range(void *p, size_t lo, size_t hi)
{
	struct ranges *r = p;
	pthread_mutex_lock(&r->lock);
	r->lo[r->n] = lo;
	r->hi[r->n++] = hi;
	pthread_mutex_unlock(&r->lock);
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

/* the ranges, sorted by start, tile [0, n) with none shorter than grain (unless one) */
static void ranges_tile(int jobs, size_t n, size_t grain, size_t most)
{
	struct ranges r = { .n = 0 };
	pthread_mutex_init(&r.lock, NULL);
	par_for(jobs, n, grain, note_range, &r);
	assert_true(r.n >= 1 && r.n <= most);
	qsort(r.hi, r.n, sizeof(*r.hi), cmp_size);
	qsort(r.lo, r.n, sizeof(*r.lo), cmp_size);
	assert_int_equal(r.lo[0], 0);
	for (size_t i = 0; i < r.n; i++) {
		assert_true(r.hi[i] > r.lo[i] || n == 0);
		if (r.n > 1)
			assert_true(r.hi[i] - r.lo[i] >= grain);
		if (i + 1 < r.n)
			assert_int_equal(r.hi[i], r.lo[i + 1]);
	}
	assert_int_equal(r.hi[r.n - 1], n);
	pthread_mutex_destroy(&r.lock);
}

static void for_ranges_tile_the_interval(void **state)
{
	(void)state;
	ranges_tile(1, 1000, 10, 1);
	ranges_tile(4, 1000, 10, 16);
	ranges_tile(4, 15, 10, 1); /* under two grains: one call */
	ranges_tile(3, 0, 10, 1);
	ranges_tile(16, 100000, 1, 64);
	ranges_tile(2, 33, 0, 8);
}

/* keys with many ties: value v sorts by v % m; ties keep input order in a stable sort */
static int cmp_mod(const void *a, const void *b, void *arg)
{
	int32_t m = *(const int32_t *)arg;
	int32_t x = *(const int32_t *)a % m, y = *(const int32_t *)b % m;
	return (x > y) - (x < y);
}

static void sort_equals_qsort_r(void **state)
{
	(void)state;
	static const size_t sizes[] = { 0, 1, 5, 4095, 4096, 8192, 8193, 50000, 123457 };
	static const int jobs[] = { 1, 2, 3, 5, 8, 16 };
	static const int32_t mods[] = { 7, 1000, 1 << 30 };
	srand(14);
	for (size_t si = 0; si < sizeof(sizes) / sizeof(*sizes); si++) {
		size_t n = sizes[si];
		int32_t *in = malloc((n + 1) * sizeof(*in)), *want = malloc((n + 1) * sizeof(*in)),
			*got = malloc((n + 1) * sizeof(*in));
		for (size_t i = 0; i < n; i++)
			in[i] = rand() & 0x3fffffff;
		for (size_t mi = 0; mi < sizeof(mods) / sizeof(*mods); mi++) {
			int32_t m = mods[mi];
			memcpy(want, in, n * sizeof(*in));
			qsort_r(want, n, sizeof(*want), cmp_mod, &m);
			for (size_t ji = 0; ji < sizeof(jobs) / sizeof(*jobs); ji++) {
				memcpy(got, in, n * sizeof(*in));
				par_sort_i32(jobs[ji], got, n, cmp_mod, &m);
				if (n)
					assert_memory_equal(got, want, n * sizeof(*in));
			}
		}
		free(in);
		free(want);
		free(got);
	}
}

/* already sorted and reversed input: the co-rank cuts at run edges */
static void sort_handles_sorted_and_reversed_runs(void **state)
{
	(void)state;
	size_t n = 40000;
	int32_t m = 1 << 30;
	int32_t *v = malloc(n * sizeof(*v));
	for (int rev = 0; rev < 2; rev++) {
		for (size_t i = 0; i < n; i++)
			v[i] = rev ? (int32_t)(n - i) : (int32_t)i;
		par_sort_i32(7, v, n, cmp_mod, &m);
		for (size_t i = 0; i < n; i++)
			assert_int_equal(v[i], rev ? (int32_t)(i + 1) : (int32_t)i);
	}
	free(v);
}

/* cmp_mod, counting its calls */
struct counted {
	int32_t m;
	size_t calls;
};

static int cmp_mod_counted(const void *a, const void *b, void *arg)
{
	struct counted *c = arg;
	c->calls++;
	return cmp_mod(a, b, &c->m);
}

/*
 * n values in 8 sorted stretches, with (ties 1) or without (0) repeated keys, or (2) in order
 * but for blocks of 40 reversed and one value a block 20 places late (ops written as they
 * end, children before parents), and 10 strays out of place; sorted by par_sort_i32 (checked against qsort_r, 1 and 4 jobs): the
 * comparisons @cmp made on one job.
 */
static size_t sort_stretches(size_t n, int ties)
{
	size_t per = n / 8;
	int32_t *in = malloc(n * sizeof(*in)), *want = malloc(n * sizeof(*in)),
		*got = malloc(n * sizeof(*in));
	struct counted c = { ties == 1 ? 1000 : 1 << 30, 0 };
	/* ties: keys v % 1000 rise in steps inside a stretch, above them random bits the
	 * comparator does not see */
	for (size_t i = 0; i < n; i++)
		in[i] = ties == 1 ? (int32_t)((rand() % 1000) * 1000 + (i / per) * 7 +
					      (i % per) * 990 / per)
			: ties == 2 ? (int32_t)(i - i % 40 + 39 - i % 40 + 20 * (i % 40 == 7))
				    : (int32_t)((i / per) * 100 + (i % per) * 1000 / (n / 200000));
	for (size_t k = 0; k < 10; k++)
		in[n / 10 * k + 777] = (int32_t)(k * 7919 % 1003);
	memcpy(want, in, n * sizeof(*in));
	qsort_r(want, n, sizeof(*want), cmp_mod, &c.m);
	memcpy(got, in, n * sizeof(*in));
	par_sort_i32(1, got, n, cmp_mod_counted, &c);
	assert_memory_equal(got, want, n * sizeof(*in));
	memcpy(got, in, n * sizeof(*in));
	par_sort_i32(4, got, n, cmp_mod, &c.m);
	assert_memory_equal(got, want, n * sizeof(*in));
	free(in);
	free(want);
	free(got);
	return c.calls;
}

/*
 * A trace's ids and start times count up through the file in a few stretches (a copy per
 * step or rank; bench/gen-big-trace.py's copies), and out of order only within short
 * distances (ops written as they end): sorting them takes linear time, as
 * bench/parse-floor.sh --linear measures end to end.  Comparisons per value at 8x the values
 * are those at 1x (qsort_r's merge sort: 10.2 a value at 200k, 11.6 at 1.6M, log2 n).
 */
static void sort_of_sorted_stretches_is_linear(void **state)
{
	(void)state;
	srand(26);
	for (int ties = 0; ties < 3; ties++) {
		size_t n = 200000;
		double c1 = (double)sort_stretches(n, ties) / (double)n;
		double c8 = (double)sort_stretches(8 * n, ties) / (double)(8 * n);
		print_message("comparisons a value: %.2f at %zu, %.2f at %zu\n", c1, n, c8, 8 * n);
		assert_true(c8 <= 1.02 * c1);
		assert_true(c1 <= 8.0);
	}
}

/* a task that runs a parallel loop itself: the pool is taken, so it starts its own threads */
struct nest {
	int hits[8][16];
};

static void inner(void *p, size_t k)
{
	int *row = p;
	row[k]++;
}

static void outer(void *p, size_t k)
{
	struct nest *n = p;
	par_run(4, 16, inner, n->hits[k]);
}

static void *caller(void *p)
{
	struct nest *n = p;
	for (int r = 0; r < 50; r++)
		par_run(3, 8, outer, n);
	return NULL;
}

/* nested calls and calls from two threads at once (one on the pool, one on its own threads) */
static void nested_and_concurrent_calls_run_every_task(void **state)
{
	(void)state;
	struct nest a, b;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, caller, &a), 0);
	caller(&b);
	pthread_join(th, NULL);
	for (int i = 0; i < 8; i++)
		for (int k = 0; k < 16; k++) {
			assert_int_equal(a.hits[i][k], 50);
			assert_int_equal(b.hits[i][k], 50);
		}
}

/* after fork() the child has no workers of the parent's pool: its calls must still finish */
static void a_forked_child_runs_its_own_calls(void **state)
{
	(void)state;
	struct nest a;
	memset(&a, 0, sizeof(a));
	par_run(4, 16, inner, a.hits[0]); /* the pool now has workers */
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(10); /* a child waiting for workers it does not have dies instead */
		par_run(4, 16, inner, a.hits[1]);
		for (int k = 0; k < 16; k++)
			if (a.hits[1][k] != 1)
				_exit(1);
		_exit(0);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_task_runs_once),
		cmocka_unit_test(for_ranges_tile_the_interval),
		cmocka_unit_test(sort_equals_qsort_r),
		cmocka_unit_test(sort_handles_sorted_and_reversed_runs),
		cmocka_unit_test(sort_of_sorted_stretches_is_linear),
		cmocka_unit_test(nested_and_concurrent_calls_run_every_task),
		cmocka_unit_test(a_forked_child_runs_its_own_calls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
