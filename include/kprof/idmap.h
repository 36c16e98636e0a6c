/*
 * idmap.h — an int64 -> int32 index map for keys >= 0 (src/ingest/idmap.c), what link.c finds
 * a launch by its correlation and an op by its External id with.
 */
#ifndef KPROF_IDMAP_H
#define KPROF_IDMAP_H

#include <stddef.h>
#include <stdint.h>

/*
 * int64 -> int32 index map for keys >= 0.  Profiler ids (External id, correlation) are
 * mostly dense, so plain arrays serve: pages of IDMAP_PAGE keys over [lo, hi], only those
 * that hold a key (a long trace, or copies of one, counts its ids up in stretches with gaps
 * between them: the pages keep it in this mode, linear in the ids, where one array over the
 * range would not fit); otherwise the values sorted by key (4 bytes an id beside the keys
 * the trace already holds, where a hash map at load 1/2 took 40-73), found by a binary
 * search inside one bucket of a directory over the key range.  The value v's key is read at
 * keys + v * stride.
 */
#define IDMAP_PAGE_BITS 12
#define IDMAP_PAGE ((size_t)1 << IDMAP_PAGE_BITS)

struct kp_idmap {
	int32_t **page;   /* paged mode: page[(k - lo) >> IDMAP_PAGE_BITS], NULL: no key there;
			     NULL in sorted mode */
	int32_t *val;     /* paged mode: the pages' values, -1 none */
	int64_t lo, hi;   /* key range */
	const char *keys; /* sorted mode: borrowed, live until idmap_free() */
	size_t stride;
	int32_t *ord; /* sorted mode: values by (key, value), one per key once imap_seal() ran */
	size_t n;
	uint32_t *dir; /* sorted mode: dir[b] = first of bucket b in ord, nbuckets + 1 */
	int shift;     /* bucket of k: (k - lo) >> shift */
};

/* Prototypes */
/*
 * The map of value i -> the int64 key at @keys + i * @stride (i < @n; keys < 0 left out; the
 * lowest i of a key wins), built on @jobs threads.  Sorted mode borrows @keys until
 * idmap_free().
 */
void idmap_build(struct kp_idmap *m, const void *keys, size_t stride, size_t n, int jobs);
/* The value of key @k, or -1. */
int32_t idmap_get(const struct kp_idmap *m, int64_t k);
/* Whether @m holds its values in pages (no longer reading the keys), else sorted mode. */
int idmap_paged(const struct kp_idmap *m);
void idmap_free(struct kp_idmap *m);

#endif /* KPROF_IDMAP_H */
