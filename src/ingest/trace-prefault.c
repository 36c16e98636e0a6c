/*
 * trace-prefault.c — the trace's record arrays made resident just ahead of the parallel
 * parse's merge, on a thread of their own.
 *
 * In a parallel parse (src/ingest/trace-chunk.c) the main thread copies every chunk's records
 * into the trace's arrays, and so is the first to touch each of their pages: on the H200
 * machine's host that merge was 0.116 s of a 1 GB trace's 0.28 s at -j 16, most of it the
 * kernel handing out zeroed pages (bench/RESULTS.md, issue 26: madvise(MADV_POPULATE_WRITE) on
 * the main thread itself changed nothing).  So once a few percent of the input is merged,
 * prefault_start() gives each array room for the whole input at the density seen so far
 * (address space only), and a thread keeps the pages a little ahead of what the merge has
 * written resident (prefault_progress() says how far it is): a few percent of each array
 * beyond its records, so a wrong estimate costs address space, not memory.
 * MADV_POPULATE_WRITE faults pages in as if written without writing them, so the main thread
 * may copy into the same pages meanwhile.
 *
 * An array that outgrows its room is reallocated: before that, trace_vec_growing() (called by
 * every growth of a trace vector, trace-internal.h) stops the thread when the array is one of
 * its, so it never touches freed memory.  Without MADV_POPULATE_WRITE (Linux < 5.14) the thread
 * stops at its first call and the merge faults as before.
 */
#include "kprof/trace-internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14, uapi/asm-generic/mman-common.h */
#endif

/* resident ahead of an array's records: this part of its room, within bounds */
#define PF_AHEAD_DIV 32
#define PF_AHEAD_MIN (256u << 10)
#define PF_AHEAD_MAX (16u << 20)
/* the thread's nap when the merge has not moved */
#define PF_NAP_NS 100000

struct pf_range {
	const void *vec;        /* the array, as the trace holds it (trace_vec_growing's key) */
	char *base;             /* its first byte */
	const size_t *n;        /* its record count (the main thread's) */
	size_t size;            /* bytes a record */
	char *start;            /* first whole page after the records at prefault_start() */
	size_t len, ahead;      /* bytes of whole pages to the room's end; kept resident ahead */
	atomic_size_t written;  /* bytes of records, as prefault_progress() last saw them */
	size_t done;            /* the thread's: bytes from start populated */
};

struct prefault {
	struct pf_range r[16];
	int n;
	pthread_t th;
	int running;         /* the thread is started and not joined */
	atomic_int stop;     /* asked to stop */
	atomic_size_t bytes; /* populated so far */
	int err;             /* errno of the madvise that stopped it, 0 */
};

/* the main thread's prefaulter while it runs (the thread that started it) */
static __thread struct prefault *tl_pf;

/* Range @r populated up to @ahead past its records: 0, 1 when it did some, -1 on an error. */
static int pf_step(struct prefault *pf, struct pf_range *r, size_t page)
{
	size_t w = atomic_load_explicit(&r->written, memory_order_relaxed);
	char *want = r->base + w + r->ahead;
	if (want > r->start + r->len)
		want = r->start + r->len;
	if (want <= r->start + r->done)
		return 0;
	size_t to = ((size_t)(want - r->start) + page - 1) / page * page;
	if (to > r->len)
		to = r->len;
	if (madvise(r->start + r->done, to - r->done, MADV_POPULATE_WRITE) != 0) {
		pf->err = errno;
		return -1;
	}
	atomic_fetch_add_explicit(&pf->bytes, to - r->done, memory_order_relaxed);
	r->done = to;
	return 1;
}

static void *pf_main(void *arg)
{
	struct prefault *pf = arg;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const struct timespec nap = { 0, PF_NAP_NS };
	while (!atomic_load_explicit(&pf->stop, memory_order_relaxed)) {
		int moved = 0, left = 0;
		for (int i = 0; i < pf->n; i++) {
			int rc = pf_step(pf, &pf->r[i], page);
			if (rc < 0)
				return NULL;
			moved |= rc;
			left |= pf->r[i].done < pf->r[i].len;
		}
		if (!left)
			break;
		if (!moved)
			nanosleep(&nap, NULL);
	}
	return NULL;
}

/* @vec grown to hold @want elements of @size (at least its @cap), and the pages after its
 * @n records a range of @pf */
static void *reserve(struct prefault *pf, void *vec, const size_t *n, size_t *cap, size_t want,
		     size_t size)
{
	if (!vec || want <= *cap || want <= *n || pf->n == (int)(sizeof(pf->r) / sizeof(pf->r[0])))
		return vec;
	vec = xrealloc(vec, want * size);
	*cap = want;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t s = ((uintptr_t)vec + *n * size + page - 1) / page * page,
		  e = ((uintptr_t)vec + want * size) / page * page;
	if (e > s) {
		struct pf_range *r = &pf->r[pf->n++];
		r->vec = vec;
		r->base = vec;
		r->n = n;
		r->size = size;
		r->start = (char *)s;
		r->len = e - s;
		r->ahead = want * size / PF_AHEAD_DIV;
		r->ahead = r->ahead < PF_AHEAD_MIN ? PF_AHEAD_MIN
			   : r->ahead > PF_AHEAD_MAX ? PF_AHEAD_MAX
						     : r->ahead;
		atomic_init(&r->written, *n * size);
	}
	return vec;
}

/* x @scale, saturating */
static size_t scaled(size_t n, double scale)
{
	double v = (double)n * scale;
	return v >= (double)(SIZE_MAX / 64) ? SIZE_MAX / 64 : (size_t)v;
}

#define RESERVE(vec, n, cap) \
	((vec) = reserve(pf, (vec), &(n), &(cap), scaled((n), scale), sizeof(*(vec))))

struct prefault *prefault_start(struct kp_trace *t, double scale)
{
	if (!(scale > 1.0))
		return NULL;
	struct prefault *pf = xcalloc(1, sizeof(*pf));
	RESERVE(t->ops, t->nops, t->capops);
	RESERVE(t->op_ext, t->nops, t->capop_ext);
	RESERVE(t->opx, t->nopx, t->capopx);
	RESERVE(t->launches, t->nlaunches, t->caplaunches);
	RESERVE(t->launch_ids, t->nlaunches, t->caplaunch_ids);
	RESERVE(t->gpu, t->ngpu, t->capgpu);
	RESERVE(t->gpu_ids, t->ngpu, t->capgpu_ids);
	RESERVE(t->gpux, t->ngpux, t->capgpux);
	RESERVE(t->colls, t->ncolls, t->capcolls);
	RESERVE(t->steps, t->nsteps, t->capsteps);
	RESERVE(t->annots, t->nannots, t->capannots);
	RESERVE(t->ranges, t->nranges, t->capranges);
	RESERVE(t->mem, t->nmem, t->capmem);
	RESERVE(t->py, t->npy, t->cappy);
	if (pf->n == 0 || pthread_create(&pf->th, NULL, pf_main, pf) != 0) {
		free(pf); /* the arrays keep their room: it is used as they grow */
		return NULL;
	}
	pf->running = 1;
	tl_pf = pf;
	return pf;
}

static void pf_join(struct prefault *pf)
{
	if (!pf->running)
		return;
	atomic_store(&pf->stop, 1);
	pthread_join(pf->th, NULL);
	pf->running = 0;
	if (tl_pf == pf)
		tl_pf = NULL;
}

void prefault_progress(struct prefault *pf)
{
	if (!pf || !pf->running)
		return;
	for (int i = 0; i < pf->n; i++)
		atomic_store_explicit(&pf->r[i].written, *pf->r[i].n * pf->r[i].size,
				      memory_order_relaxed);
}

void trace_vec_growing(const void *vec)
{
	struct prefault *pf = tl_pf;
	if (!pf || !vec)
		return;
	for (int i = 0; i < pf->n; i++)
		if (pf->r[i].vec == vec) {
			pf_join(pf);
			return;
		}
}

size_t prefault_stop(struct prefault *pf)
{
	if (!pf)
		return 0;
	pf_join(pf);
	size_t bytes = atomic_load(&pf->bytes);
	free(pf);
	return bytes;
}
