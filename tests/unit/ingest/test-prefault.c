/*
 * test-prefault.c — the record arrays' prefaulter (src/ingest/trace-prefault.c): room for
 * the whole input at the density so far, records kept, pages resident a little ahead of what
 * the merge has written and not beyond (mincore(2)), and a growing array stopping the thread.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "kprof/trace-internal.h"

/* whole pages of [@p, @p + @len) resident */
static size_t resident(const void *p, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t s = ((uintptr_t)p + page - 1) / page * page, e = ((uintptr_t)p + len) / page * page;
	if (e <= s)
		return 0;
	size_t n = (e - s) / page, in = 0;
	unsigned char *v = malloc(n);
	assert_non_null(v);
	assert_int_equal(mincore((void *)s, e - s, v), 0);
	for (size_t i = 0; i < n; i++)
		in += v[i] & 1;
	free(v);
	return in * page;
}

static void ops_trace(struct kp_trace *t, size_t n)
{
	memset(t, 0, sizeof(*t));
	t->capops = n;
	t->ops = calloc(n, sizeof(*t->ops));
	assert_non_null(t->ops);
	for (size_t i = 0; i < n; i++)
		t->ops[i].ts_ns = (int64_t)i * 7;
	t->nops = n;
}

/* 50 ms for the thread to catch up */
static void settle(void)
{
	const struct timespec ms = { 0, 1000000 };
	for (int i = 0; i < 50; i++)
		nanosleep(&ms, NULL);
}

static void room_for_the_whole_input_records_kept(void **state)
{
	(void)state;
	struct kp_trace t;
	ops_trace(&t, 1000);
	struct prefault *pf = prefault_start(&t, 4000.0); /* 1000 ops at 1/4000 of the input */
	assert_non_null(pf);
	assert_int_equal(t.capops, 4000000);
	assert_int_equal(t.nops, 1000);
	for (size_t i = 0; i < 1000; i++)
		assert_int_equal(t.ops[i].ts_ns, (int64_t)i * 7);
	size_t bytes = prefault_stop(pf);
	/* resident only ahead of the records: 1/32 of the room, at most 16 MB */
	size_t room = 4000000 * sizeof(*t.ops), ahead = room / 32 > (16u << 20) ? 16u << 20 : room / 32;
	assert_true(bytes <= ahead + (size_t)sysconf(_SC_PAGESIZE));
	free(t.ops);
}

static void resident_ahead_of_the_merge_not_beyond(void **state)
{
	(void)state;
	struct kp_trace t;
	ops_trace(&t, 1000);
	struct prefault *pf = prefault_start(&t, 2000.0);
	assert_non_null(pf);
	size_t room = t.capops * sizeof(*t.ops), ahead = room / 32;
	if (ahead > (16u << 20))
		ahead = 16u << 20;
	settle();
	char *b = (char *)t.ops;
	size_t at0 = 1000 * sizeof(*t.ops);
	/* nothing written into them yet: the pages just after the records are resident ... */
	assert_true(resident(b + at0, ahead / 2) >= ahead / 2 - 2 * (size_t)sysconf(_SC_PAGESIZE));
	/* ... the ones past the look-ahead are not (THP: a huge page past it may be) */
	size_t far = at0 + ahead + (4u << 20);
	assert_int_equal(resident(b + far, 4u << 20), 0);
	/* the merge moves on: so does the resident part */
	t.nops = far / sizeof(*t.ops);
	prefault_progress(pf);
	settle();
	assert_true(resident(b + far, ahead / 2) >= ahead / 2 - 2 * (size_t)sysconf(_SC_PAGESIZE));
	assert_int_equal(resident(b + far + ahead + (4u << 20), 4u << 20), 0);
	size_t bytes = prefault_stop(pf);
	assert_true(bytes >= far + ahead - at0 - (1u << 20));
	free(t.ops);
}

static void a_growing_array_stops_the_thread(void **state)
{
	(void)state;
	struct kp_trace t;
	ops_trace(&t, 1000);
	struct prefault *pf = prefault_start(&t, 2000.0);
	assert_non_null(pf);
	size_t ahead = t.capops * sizeof(*t.ops) / 32;
	if (ahead > (16u << 20))
		ahead = 16u << 20;
	settle();
	trace_vec_growing(t.ops); /* joined: the array may move now */
	/* the merge moves on, the thread does not follow any more */
	char *b = (char *)t.ops;
	size_t far = 1000 * sizeof(*t.ops) + ahead + (4u << 20);
	t.nops = far / sizeof(*t.ops);
	prefault_progress(pf);
	settle();
	assert_int_equal(resident(b + far, 4u << 20), 0);
	assert_true(prefault_stop(pf) > 0);
	free(t.ops);
}

static void nothing_to_do_below_one(void **state)
{
	(void)state;
	struct kp_trace t;
	ops_trace(&t, 1000);
	struct kp_op *ops = t.ops;
	assert_null(prefault_start(&t, 1.0));
	assert_null(prefault_start(&t, 0.0 / 0.0));
	assert_ptr_equal(t.ops, ops);
	assert_int_equal(t.capops, 1000);
	assert_int_equal(prefault_stop(NULL), 0);
	prefault_progress(NULL);
	trace_vec_growing(t.ops); /* no prefaulter on this thread */
	free(t.ops);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(room_for_the_whole_input_records_kept),
		cmocka_unit_test(resident_ahead_of_the_merge_not_beyond),
		cmocka_unit_test(a_growing_array_stops_the_thread),
		cmocka_unit_test(nothing_to_do_below_one),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
