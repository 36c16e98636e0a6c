/*
 * par.h — parallel loops for the passes after the parse (link, analyze): a task counter
 * shared by up to --jobs threads, started for one call and joined before it returns.
 * With jobs <= 1 (or work too small to split) everything runs inline on the calling
 * thread, in index order, so -j 1 is the serial code path.
 */
#ifndef KPROF_PAR_H
#define KPROF_PAR_H

#include <stddef.h>
#include <stdint.h>

/* Prototypes */
/*
 * Run fn(arg, k) for every task k in [0, ntasks), on up to @jobs threads (the caller is one
 * of them).  Tasks are taken in index order from a shared counter; fn must only write what
 * task k owns.  Returns when every task is done.
 */
void par_run(int jobs, size_t ntasks, void (*fn)(void *arg, size_t k), void *arg);
/*
 * fn(arg, lo, hi) over [0, n) cut into ranges of at least @grain elements (about four a
 * thread, in order): a parallel for.  n < 2 * grain or jobs <= 1: one call fn(arg, 0, n).
 */
void par_for(int jobs, size_t n, size_t grain, void (*fn)(void *arg, size_t lo, size_t hi),
	     void *arg);
/*
 * Sort @n int32 values with @cmp (qsort_r's comparator): runs sorted on the threads, then
 * merged pairwise, each merge cut into pieces at equal output ranks.  Stable, so the result
 * is qsort_r's for any comparator that orders every pair (ties keep input order).  Each run
 * is a natural merge sort (src/base/par.c): linear on input already sorted or made of a few
 * sorted stretches, as the id and time orders of a trace are.
 */
void par_sort_i32(int jobs, int32_t *v, size_t n,
		  int (*cmp)(const void *a, const void *b, void *arg), void *arg);

#endif /* KPROF_PAR_H */
