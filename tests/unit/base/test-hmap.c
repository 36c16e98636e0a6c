/*
 * test-hmap.c — the one hash map: pointer, integer and string keys, growth, iteration.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/hmap.h"

static void pointer_keys_compare_by_address(void **state)
{
	(void)state;
	struct kp_hmap m;
	hmap_init(&m, HMAP_PTR);
	char a[] = "same", b[] = "same";
	int created;
	struct kp_hmap_entry *e = hmap_put_ptr(&m, a, &created);
	assert_true(created);
	assert_int_equal(e->val.i, 0);
	e->val.i = 7;
	e = hmap_put_ptr(&m, b, &created);
	assert_true(created); /* equal bytes, other address: another key */
	e->val.i = 8;
	assert_int_equal(hmap_put_ptr(&m, a, &created)->val.i, 7);
	assert_false(created);
	assert_int_equal(hmap_get_ptr(&m, b)->val.i, 8);
	assert_null(hmap_get_ptr(&m, a + 1));
	/* NULL is a key like any other */
	hmap_put_ptr(&m, NULL, NULL)->val.i = 9;
	assert_int_equal(hmap_get_ptr(&m, NULL)->val.i, 9);
	assert_int_equal(m.n, 3);
	hmap_free(&m);
}

/* 0, -1, INT64_MIN/MAX and ids that collide modulo the table size are all distinct keys */
static void integer_keys_include_zero_negative_and_extremes(void **state)
{
	(void)state;
	struct kp_hmap m;
	hmap_init(&m, HMAP_INT);
	const int64_t keys[] = { 0, -1, 1, INT64_MIN, INT64_MAX, 64, 128, 1LL << 40, -(1LL << 40) };
	const size_t nk = sizeof(keys) / sizeof(keys[0]);
	for (size_t i = 0; i < nk; i++)
		hmap_put_int(&m, keys[i], NULL)->val.i = (int64_t)i + 100;
	assert_int_equal(m.n, nk);
	for (size_t i = 0; i < nk; i++)
		assert_int_equal(hmap_get_int(&m, keys[i])->val.i, (int64_t)i + 100);
	assert_null(hmap_get_int(&m, 2));
	assert_null(hmap_get_int(&m, INT64_MIN + 1));
	hmap_free(&m);
	/* an empty map answers gets without a table */
	assert_null(hmap_get_int(&m, 0));
}

static void string_keys_compare_bytes_and_length(void **state)
{
	(void)state;
	struct kp_hmap m;
	hmap_init(&m, HMAP_STR);
	int created;
	hmap_put_str(&m, "aten::mm", 8, &created)->val.i = 1;
	assert_true(created);
	char copy[] = "aten::mm";
	assert_int_equal(hmap_put_str(&m, copy, 8, &created)->val.i, 1);
	assert_false(created);
	/* a prefix, an embedded NUL and the empty string are other keys */
	hmap_put_str(&m, "aten::m", 7, NULL)->val.i = 2;
	hmap_put_str(&m, "aten::mm\0x", 10, NULL)->val.i = 3;
	hmap_put_str(&m, "", 0, NULL)->val.i = 4;
	assert_int_equal(m.n, 4);
	assert_int_equal(hmap_get_str(&m, "aten::m", 7)->val.i, 2);
	assert_int_equal(hmap_get_str(&m, "aten::mm\0x", 10)->val.i, 3);
	assert_int_equal(hmap_get_str(&m, "", 0)->val.i, 4);
	assert_null(hmap_get_str(&m, "aten::mm\0y", 10));
	hmap_free(&m);
}

/* through many doublings every key keeps its value; the load stays at most 1/2 */
static void values_survive_growth_and_iteration_visits_each_entry_once(void **state)
{
	(void)state;
	enum { N = 100000 };
	struct kp_hmap m;
	hmap_init(&m, HMAP_INT);
	for (int64_t k = 0; k < N; k++)
		hmap_put_int(&m, k * 4096, NULL)->val.i = k; /* strided ids: a weak hash clusters */
	assert_int_equal(m.n, N);
	assert_true(m.n * 2 <= m.cap);
	for (int64_t k = N - 1; k >= 0; k--) {
		struct kp_hmap_entry *e = hmap_get_int(&m, k * 4096);
		assert_non_null(e);
		assert_int_equal(e->val.i, k);
	}
	unsigned char *seen = calloc(N, 1);
	size_t n = 0;
	for (struct kp_hmap_entry *e = hmap_next(&m, NULL); e; e = hmap_next(&m, e)) {
		assert_int_equal(e->key.i, e->val.i * 4096);
		assert_int_equal(seen[e->val.i], 0);
		seen[e->val.i] = 1;
		n++;
	}
	assert_int_equal(n, N);
	free(seen);
	hmap_free(&m);
}

static void reserve_sizes_the_table_once(void **state)
{
	(void)state;
	struct kp_hmap m;
	hmap_init(&m, HMAP_PTR);
	hmap_reserve(&m, 1000);
	size_t cap = m.cap;
	assert_true(cap >= 2000);
	static char keys[1000];
	for (int i = 0; i < 1000; i++)
		hmap_put_ptr(&m, &keys[i], NULL)->val.ptr = &keys[i];
	assert_int_equal(m.cap, cap);
	for (int i = 0; i < 1000; i++)
		assert_ptr_equal(hmap_get_ptr(&m, &keys[i])->val.ptr, &keys[i]);
	hmap_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pointer_keys_compare_by_address),
		cmocka_unit_test(integer_keys_include_zero_negative_and_extremes),
		cmocka_unit_test(string_keys_compare_bytes_and_length),
		cmocka_unit_test(values_survive_growth_and_iteration_visits_each_entry_once),
		cmocka_unit_test(reserve_sizes_the_table_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
