/*
 * test-idmap.c — the id map link.c finds records by (src/ingest/idmap.c): each mode it picks
 * for the key layouts traces have (dense ids, dense stretches far apart, sparse clusters),
 * every key found at its value, every other key missed, the lowest value of a repeated key
 * winning, on one thread and on several.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "kprof/idmap.h"

/* past 2 x 8192 keys, so that idmap_build() splits them into ranges on 4 threads */
enum { N = 40000 };

/* keys of value i at keys[i]: record-like, a pad beside each key, as the trace's arrays */
struct rec {
	int64_t key;
	int64_t pad;
};

static struct rec recs[N + 16];
static int32_t order[N + 16];

static int by_key(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	if (recs[x].key != recs[y].key)
		return recs[x].key < recs[y].key ? -1 : 1;
	return (x > y) - (x < y);
}

/*
 * Each value i < n found by its key, unless an earlier value has that key or the key is < 0;
 * @miss[0..nmiss) found by none.  On 1 and on 4 threads, the same mode both times (@paged).
 */
static void check_map(size_t n, const int64_t *miss, size_t nmiss, int paged)
{
	/* the expected value of each key: the lowest index holding it (a sort, not the map) */
	for (size_t i = 0; i < n; i++)
		order[i] = (int32_t)i;
	qsort(order, n, sizeof(*order), by_key);
	for (int jobs = 1; jobs <= 4; jobs += 3) {
		struct kp_idmap m;
		idmap_build(&m, &recs[0].key, sizeof(recs[0]), n, jobs);
		assert_int_equal(idmap_paged(&m), paged);
		for (size_t i = 0; i < n; i++) {
			int64_t k = recs[order[i]].key;
			if (k < 0)
				continue;
			int32_t first = i && recs[order[i - 1]].key == k ? -2 : order[i];
			if (first != -2)
				assert_int_equal(idmap_get(&m, k), first);
		}
		for (size_t i = 0; i < nmiss; i++)
			assert_int_equal(idmap_get(&m, miss[i]), -1);
		idmap_free(&m);
	}
}

/* ids 1..N in order, as one short trace counts them: pages over the whole range */
static void dense_ids_are_paged(void **state)
{
	(void)state;
	for (size_t i = 0; i < N; i++)
		recs[i].key = (int64_t)i + 1;
	const int64_t miss[] = { 0, -1, N + 1, INT64_MAX, INT64_MIN };
	check_map(N, miss, sizeof(miss) / sizeof(*miss), 1);
}

/*
 * 20 stretches of 2000 ids 200000 apart (a long trace, copies of one): pages only where ids
 * are, so still paged; ids between two of a stretch and between stretches missed.
 */
static void stretches_far_apart_are_paged(void **state)
{
	(void)state;
	for (size_t i = 0; i < N; i++)
		recs[i].key = (int64_t)(i / 2000) * 200000 + (int64_t)(i % 2000) * 2 + 1;
	const int64_t miss[] = { 2, 250000, 500000, 1404001, 2000000, 4000001 };
	check_map(N, miss, sizeof(miss) / sizeof(*miss), 1);
}

/* clusters 1e9 apart with a gap in each every 13 ids: too spread for pages, sorted */
static void sparse_clusters_are_sorted(void **state)
{
	(void)state;
	for (size_t i = 0; i < N; i++)
		recs[i].key = (int64_t)(i % 7) * 1000000007LL + (int64_t)i * 13 + 1;
	const int64_t miss[] = { 0, 2, 1000000007LL, 6 * 1000000007LL + 13 * N + 2, INT64_MAX };
	check_map(N, miss, sizeof(miss) / sizeof(*miss), 0);
}

/* a key repeated (an External id on two ops) gives its first value, in either mode; keys < 0
 * (no id) are left out */
static void a_repeated_key_gives_its_first_value(void **state)
{
	(void)state;
	for (size_t i = 0; i < N; i++)
		recs[i].key = i % 3 == 2 ? -1 : (int64_t)(i % 500) + 1;
	const int64_t miss[] = { 0, 501, -1 };
	check_map(N, miss, sizeof(miss) / sizeof(*miss), 1);
	for (size_t i = 0; i < N; i++)
		recs[i].key = i % 3 == 2 ? -1 : (int64_t)(i % 500) * 1000000007LL + 1;
	const int64_t miss2[] = { 0, 2, 1000000007LL };
	check_map(N, miss2, sizeof(miss2) / sizeof(*miss2), 0);
}

/* no keys (no records, or every key < 0): every lookup misses */
static void no_keys_miss_everything(void **state)
{
	(void)state;
	const int64_t miss[] = { 0, 1, -1, INT64_MAX };
	check_map(0, miss, sizeof(miss) / sizeof(*miss), 0);
	for (size_t i = 0; i < 16; i++)
		recs[i].key = -1 - (int64_t)i;
	check_map(16, miss, sizeof(miss) / sizeof(*miss), 0);
	struct kp_idmap m;
	idmap_build(&m, NULL, sizeof(recs[0]), 5, 1); /* no key array at all */
	assert_int_equal(idmap_get(&m, 1), -1);
	idmap_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dense_ids_are_paged),
		cmocka_unit_test(stretches_far_apart_are_paged),
		cmocka_unit_test(sparse_clusters_are_sorted),
		cmocka_unit_test(a_repeated_key_gives_its_first_value),
		cmocka_unit_test(no_keys_miss_everything),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
