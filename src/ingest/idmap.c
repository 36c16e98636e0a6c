/*
 * idmap.c — the id maps link.c finds records by: int64 -> int32 for keys >= 0, built once in
 * parallel ranges, read many times (include/kprof/idmap.h).
 */
#include "kprof/idmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/arena.h"
#include "kprof/par.h"

static void unset_range(void *arg, size_t lo, size_t hi)
{
	int32_t *val = arg;
	memset(val + lo, 0xff, (hi - lo) * sizeof(*val));
}

/*
 * Paged mode when the pages that hold a key (@touched[p] != 0, NULL: all of them) are at
 * most 4 values a key (as one array was before pages); otherwise sorted mode.
 */
static void imap_init(struct kp_idmap *m, size_t n, int64_t lo, int64_t hi, const void *keys,
		      size_t stride, const uint8_t *touched, int jobs)
{
	memset(m, 0, sizeof(*m));
	m->lo = lo;
	m->hi = hi;
	if (hi < lo)
		return; /* no key: every lookup misses */
	size_t npages = (size_t)((uint64_t)(hi - lo) >> IDMAP_PAGE_BITS) + 1, used = npages;
	if (touched) {
		used = 0;
		for (size_t p = 0; p < npages; p++)
			used += touched[p] != 0;
	}
	if ((uint64_t)used * IDMAP_PAGE <= 4 * (uint64_t)n + 4096 + IDMAP_PAGE) {
		m->page = xmalloc(npages * sizeof(*m->page));
		m->val = xmalloc(used * IDMAP_PAGE * sizeof(*m->val));
		for (size_t p = 0, u = 0; p < npages; p++)
			m->page[p] = !touched || touched[p] ? m->val + IDMAP_PAGE * u++ : NULL;
		par_for(jobs, used * IDMAP_PAGE, 65536, unset_range, m->val);
		return;
	}
	m->keys = keys;
	m->stride = stride;
	m->ord = xmalloc((n + 1) * sizeof(*m->ord));
}

static int32_t *imap_slot(const struct kp_idmap *m, int64_t k)
{
	int32_t *pg = m->page[(uint64_t)(k - m->lo) >> IDMAP_PAGE_BITS];
	return pg ? pg + ((uint64_t)(k - m->lo) & (IDMAP_PAGE - 1)) : NULL;
}

static int64_t imap_key(const struct kp_idmap *m, int32_t v)
{
	int64_t k;
	memcpy(&k, m->keys + (size_t)v * m->stride, sizeof(k));
	return k;
}

static int cmp_ord(const void *a, const void *b, void *arg)
{
	const struct kp_idmap *m = arg;
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	int64_t kx = imap_key(m, x), ky = imap_key(m, y);
	if (kx != ky)
		return kx < ky ? -1 : 1;
	return (x > y) - (x < y);
}

/* After the last put: sorted mode sorts, keeps each key's first value, builds the directory. */
static void imap_seal(struct kp_idmap *m, int jobs)
{
	if (m->page || !m->n)
		return;
	par_sort_i32(jobs, m->ord, m->n, cmp_ord, m);
	size_t w = 1;
	for (size_t i = 1; i < m->n; i++)
		if (imap_key(m, m->ord[i]) != imap_key(m, m->ord[w - 1]))
			m->ord[w++] = m->ord[i];
	m->n = w;
	/* about 4 values a bucket when the keys spread evenly */
	uint64_t range = (uint64_t)(m->hi - m->lo);
	size_t nb = m->n / 4 + 1;
	while (m->shift < 63 && (range >> m->shift) >= nb)
		m->shift++;
	nb = (size_t)(range >> m->shift) + 1;
	m->dir = xmalloc((nb + 1) * sizeof(*m->dir));
	size_t i = 0;
	for (size_t b = 0; b <= nb; b++) {
		while (i < m->n && (uint64_t)(imap_key(m, m->ord[i]) - m->lo) >> m->shift < b)
			i++;
		m->dir[b] = (uint32_t)i;
	}
}

int32_t idmap_get(const struct kp_idmap *m, int64_t k)
{
	if (k < 0 || k < m->lo || k > m->hi)
		return -1;
	if (m->page) {
		const int32_t *v = imap_slot(m, k);
		return v ? *v : -1;
	}
	if (!m->dir)
		return -1;
	size_t b = (size_t)((uint64_t)(k - m->lo) >> m->shift);
	size_t a = m->dir[b], z = m->dir[b + 1];
	while (a < z) {
		size_t mid = a + (z - a) / 2;
		if (imap_key(m, m->ord[mid]) < k)
			a = mid + 1;
		else
			z = mid;
	}
	return a < m->dir[b + 1] && imap_key(m, m->ord[a]) == k ? m->ord[a] : -1;
}

void idmap_free(struct kp_idmap *m)
{
	free(m->page);
	free(m->val);
	free(m->ord);
	free(m->dir);
}

/* An imap of value i -> key at keys + i * stride (i < n, keys < 0 left out), built in ranges. */
struct build_ctx {
	struct kp_idmap *m;
	const char *keys;
	size_t stride, n, nranges;
	int64_t *lo, *hi; /* per range: its keys' bounds */
	size_t *cnt;      /* per range: its keys >= 0, then where its first goes in m->ord */
	int64_t klo;      /* the lowest key */
	uint8_t *touched; /* [page]: 1 where a key is (pages of IDMAP_PAGE keys from klo) */
};

static int64_t key_at(const struct build_ctx *b, size_t i)
{
	int64_t k;
	memcpy(&k, b->keys + i * b->stride, sizeof(k));
	return k;
}

/* Range r: the bounds and count of its keys */
static void scan_keys(void *arg, size_t r)
{
	struct build_ctx *b = arg;
	int64_t lo = INT64_MAX, hi = -1;
	size_t c = 0;
	for (size_t i = b->n * r / b->nranges; i < b->n * (r + 1) / b->nranges; i++) {
		int64_t k = key_at(b, i);
		if (k >= 0) {
			lo = k < lo ? k : lo;
			hi = k > hi ? k : hi;
			c++;
		}
	}
	b->lo[r] = lo;
	b->hi[r] = hi;
	b->cnt[r] = c;
}

/* Range r: the pages its keys are on */
static void mark_pages(void *arg, size_t r)
{
	struct build_ctx *b = arg;
	for (size_t i = b->n * r / b->nranges; i < b->n * (r + 1) / b->nranges; i++) {
		int64_t k = key_at(b, i);
		if (k >= 0)
			__atomic_store_n(&b->touched[(uint64_t)(k - b->klo) >> IDMAP_PAGE_BITS], 1,
					 __ATOMIC_RELAXED);
	}
}

/*
 * Range r's values put: sorted mode, in index order from the range's place; dense mode, the
 * lowest index of a key wins (the first in file order), by compare-and-swap when ranges run
 * at once.
 */
static void put_keys(void *arg, size_t r)
{
	struct build_ctx *b = arg;
	struct kp_idmap *m = b->m;
	size_t w = b->cnt[r];
	for (size_t i = b->n * r / b->nranges; i < b->n * (r + 1) / b->nranges; i++) {
		int64_t k = key_at(b, i);
		if (k < 0)
			continue;
		if (!m->page) {
			m->ord[w++] = (int32_t)i;
		} else if (b->nranges == 1) {
			int32_t *slot = imap_slot(m, k);
			if (*slot < 0)
				*slot = (int32_t)i;
		} else {
			int32_t *slot = imap_slot(m, k);
			int32_t cur = __atomic_load_n(slot, __ATOMIC_RELAXED);
			while ((cur < 0 || cur > (int32_t)i) &&
			       !__atomic_compare_exchange_n(slot, &cur, (int32_t)i, 1,
							    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
				;
		}
	}
}

void idmap_build(struct kp_idmap *m, const void *keys, size_t stride, size_t n, int jobs)
{
	struct build_ctx b = { m, keys, stride, keys ? n : 0, 1, NULL, NULL, NULL, 0, NULL };
	if (jobs > 1 && b.n / 8192 > 1)
		b.nranges = b.n / 8192 < 4 * (size_t)jobs ? b.n / 8192 : 4 * (size_t)jobs;
	b.lo = xmalloc(b.nranges * sizeof(*b.lo));
	b.hi = xmalloc(b.nranges * sizeof(*b.hi));
	b.cnt = xmalloc(b.nranges * sizeof(*b.cnt));
	par_run(jobs, b.nranges, scan_keys, &b);
	int64_t lo = INT64_MAX, hi = -1;
	size_t total = 0;
	for (size_t r = 0; r < b.nranges; r++) {
		lo = b.lo[r] < lo ? b.lo[r] : lo;
		hi = b.hi[r] > hi ? b.hi[r] : hi;
		size_t c = b.cnt[r];
		b.cnt[r] = total;
		total += c;
	}
	/* ids spread over more than one array would take: which pages hold them */
	if (hi >= lo && (uint64_t)(hi - lo) >= 4 * (uint64_t)n + 4096 &&
	    (uint64_t)(hi - lo) >> IDMAP_PAGE_BITS < n / 16 + 64) {
		b.klo = lo;
		b.touched = xcalloc(((uint64_t)(hi - lo) >> IDMAP_PAGE_BITS) + 1, 1);
		par_run(jobs, b.nranges, mark_pages, &b);
	}
	imap_init(m, n, lo, hi, keys, stride, b.touched, jobs);
	free(b.touched);
	if (m->page || m->ord) {
		par_run(jobs, b.nranges, put_keys, &b);
		if (m->ord)
			m->n = total;
	}
	free(b.lo);
	free(b.hi);
	free(b.cnt);
	imap_seal(m, jobs);
}

int idmap_paged(const struct kp_idmap *m)
{
	return m->page != NULL;
}
