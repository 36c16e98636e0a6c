/*
 * test-strtab.c — interning: equal bytes give one pointer, different bytes never do.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/strtab.h"

static void equal_strings_share_one_pointer(void **state)
{
	(void)state;
	struct kp_arena a;
	struct kp_strtab st;
	arena_init(&a);
	strtab_init(&st, &a);
	char buf[] = "aten::mm";
	const char *p = strtab_intern(&st, buf, 8);
	buf[0] = 'X'; /* the interned copy does not alias the caller's bytes */
	assert_string_equal(p, "aten::mm");
	assert_ptr_equal(strtab_intern(&st, "aten::mm", 8), p);
	/* a prefix is a different string, and the copy is NUL-terminated at len */
	const char *q = strtab_intern(&st, "aten::mm_out", 6);
	assert_string_equal(q, "aten::");
	assert_ptr_not_equal(q, p);
	assert_ptr_equal(strtab_intern(&st, "", 0), strtab_intern(&st, "x", 0));
	/* lookup finds interned strings only, and adds nothing */
	assert_ptr_equal(strtab_lookup(&st, "aten::mm", 8), p);
	assert_null(strtab_lookup(&st, "aten::bmm", 9));
	assert_null(strtab_lookup(&st, "aten::bmm", 9));
	assert_ptr_equal(strtab_lookup(&st, "aten::mm_out", 6), q);
	strtab_free(&st);
	arena_free(&a);
}

/* embedded NULs and bytes past 8 count: names differing only in their tail stay apart */
static void strings_differing_in_any_byte_stay_apart(void **state)
{
	(void)state;
	struct kp_arena a;
	struct kp_strtab st;
	arena_init(&a);
	strtab_init(&st, &a);
	const char *x = strtab_intern(&st, "void gemm_kernel<float, 128>\0A", 30);
	const char *y = strtab_intern(&st, "void gemm_kernel<float, 128>\0B", 30);
	assert_ptr_not_equal(x, y);
	assert_int_equal(x[29], 'A');
	assert_int_equal(y[29], 'B');
	strtab_free(&st);
	arena_free(&a);
}

/* across growth (1024 slots initially) every string keeps its one pointer */
static void pointers_survive_growth(void **state)
{
	(void)state;
	struct kp_arena a;
	struct kp_strtab st;
	arena_init(&a);
	strtab_init(&st, &a);
	enum { N = 50000 };
	static const char *first[N];
	char name[64];
	for (int i = 0; i < N; i++) {
		int n = snprintf(name, sizeof(name), "kernel_%d_sm90_xmma_gemm", i);
		first[i] = strtab_intern(&st, name, (size_t)n);
	}
	assert_int_equal(st.map.n, N);
	for (int i = N - 1; i >= 0; i--) {
		int n = snprintf(name, sizeof(name), "kernel_%d_sm90_xmma_gemm", i);
		assert_ptr_equal(strtab_intern(&st, name, (size_t)n), first[i]);
		assert_string_equal(first[i], name);
	}
	assert_int_equal(st.map.n, N);
	strtab_free(&st);
	arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(equal_strings_share_one_pointer),
		cmocka_unit_test(strings_differing_in_any_byte_stay_apart),
		cmocka_unit_test(pointers_survive_growth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
