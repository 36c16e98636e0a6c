/*
 * test-arena.c — bump allocation: alignment, no overlap across blocks, oversize requests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/arena.h"

static void allocations_are_16_byte_aligned_and_do_not_overlap(void **state)
{
	(void)state;
	struct kp_arena a;
	arena_init(&a);
	/* odd sizes across several 256 KiB blocks; each filled with its index */
	enum { N = 5000 };
	unsigned char *p[N];
	size_t sz[N];
	for (int i = 0; i < N; i++) {
		sz[i] = 1 + (size_t)(i * 37) % 301;
		p[i] = arena_alloc(&a, sz[i]);
		assert_int_equal((uintptr_t)p[i] % 16, 0);
		memset(p[i], i & 0xff, sz[i]);
	}
	for (int i = 0; i < N; i++)
		for (size_t j = 0; j < sz[i]; j++)
			assert_int_equal(p[i][j], i & 0xff);
	assert_true(a.total >= 2 * 256 * 1024);
	arena_free(&a);
	assert_null(a.head);
	assert_int_equal(a.total, 0);
}

/* a request larger than any block gets a block of its own, and the arena keeps working */
static void an_oversize_allocation_gets_its_own_block(void **state)
{
	(void)state;
	struct kp_arena a;
	arena_init(&a);
	char *small = arena_alloc(&a, 10);
	memset(small, 'x', 10);
	size_t big = 3 * 1024 * 1024;
	char *p = arena_alloc(&a, big);
	memset(p, 'y', big);
	assert_true(a.total >= big);
	char *after = arena_alloc(&a, 10);
	memset(after, 'z', 10);
	assert_int_equal(small[9], 'x');
	assert_int_equal(p[0], 'y');
	assert_int_equal(p[big - 1], 'y');
	arena_free(&a);
}

static void zalloc_zeroes_and_strndup_terminates(void **state)
{
	(void)state;
	struct kp_arena a;
	arena_init(&a);
	unsigned char *junk = arena_alloc(&a, 64);
	memset(junk, 0xab, 64);
	unsigned char *z = arena_zalloc(&a, 100);
	for (int i = 0; i < 100; i++)
		assert_int_equal(z[i], 0);
	const char *s = arena_strndup(&a, "aten::mm(float)", 8);
	assert_string_equal(s, "aten::mm");
	assert_string_equal(arena_strdup(&a, ""), "");
	arena_free(&a);
}

/* blocks grow with the arena (a quarter of the total), so big traces make few blocks */
static void blocks_grow_with_the_arena(void **state)
{
	(void)state;
	struct kp_arena a;
	arena_init(&a);
	size_t nblocks = 0;
	for (int i = 0; i < 200000; i++) {
		struct kp_arena_block *before = a.head;
		arena_alloc(&a, 512);
		nblocks += a.head != before;
	}
	/* 100 MB in 256 KiB blocks would be ~390; growing blocks need far fewer */
	assert_true(nblocks < 60);
	arena_free(&a);
}

static void adopt_moves_every_block_and_keeps_the_room_of_the_head(void **state)
{
	(void)state;
	struct kp_arena dst, src, empty;
	arena_init(&dst);
	arena_init(&src);
	arena_init(&empty);
	char *d = arena_strndup(&dst, "dst", 3);
	char *s1 = arena_strndup(&src, "src", 3);
	char *big = arena_alloc(&src, 1 << 20); /* a second block */
	memset(big, 7, 1 << 20);
	size_t total = dst.total + src.total;
	struct kp_arena_block *head = dst.head;
	arena_adopt(&dst, &src);
	assert_null(src.head);
	assert_int_equal(src.total, 0);
	assert_ptr_equal(dst.head, head); /* the free room of dst's head is still used */
	assert_int_equal(dst.total, total);
	assert_string_equal(d, "dst");
	assert_string_equal(s1, "src");
	assert_int_equal(big[(1 << 20) - 1], 7);
	char *after = arena_strndup(&dst, "after", 5);
	assert_ptr_equal(after, d + 16); /* right after "dst" in the same block */
	/* into an empty arena: the blocks as they are */
	arena_adopt(&empty, &dst);
	assert_ptr_equal(empty.head, head);
	assert_int_equal(empty.total, total);
	assert_null(dst.head);
	arena_free(&empty); /* every block once (ASan and LSan check it) */
	arena_free(&dst);
}

/* xgrow: room for one more each call, doubling from @first, and from a vector already filled */
static void xgrow_doubles_from_first_and_from_what_is_used(void **state)
{
	(void)state;
	size_t cap = 0, n;
	int *v = NULL;
	for (n = 0; n < 17; n++) {
		v = xgrow(v, n, &cap, 4, sizeof(*v));
		v[n] = (int)n;
	}
	assert_int_equal(cap, 32); /* 4, 8, 16, 32 */
	for (n = 0; n < 17; n++)
		assert_int_equal(v[n], (int)n);
	assert_ptr_equal(xgrow(v, 17, &cap, 4, sizeof(*v)), v); /* room left: unchanged */
	/* 17 used and a fresh capacity (a second member appending to the first's rows) */
	cap = 0;
	v = xgrow(v, 17, &cap, 4, sizeof(*v));
	assert_int_equal(cap, 32);
	assert_int_equal(v[16], 16);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(allocations_are_16_byte_aligned_and_do_not_overlap),
		cmocka_unit_test(an_oversize_allocation_gets_its_own_block),
		cmocka_unit_test(zalloc_zeroes_and_strndup_terminates),
		cmocka_unit_test(blocks_grow_with_the_arena),
		cmocka_unit_test(adopt_moves_every_block_and_keeps_the_room_of_the_head),
		cmocka_unit_test(xgrow_doubles_from_first_and_from_what_is_used),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
