/*
 * test-cudnn-tune.c — which cuDNN engine configuration a case keeps (cudnn-tune.c): the notes
 * filter, the fallback list without engines already offered, the cap, the executions per timed
 * round, the fastest, and the text recorded as the op's "kprof algo".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "workloads/cudnn-tune.h"

static void notes_filter_as_pytorch(void **state)
{
	(void)state;
	int tc[] = { 0 }, down[] = { 3, 1 }, other[] = { 2, 3 };
	assert_int_equal(tune_skip_notes(NULL, 0, 1), 0);
	/* down-converting inputs: always out; tensor cores: only for strict fp32 */
	assert_int_equal(tune_skip_notes(down, 2, 0), 1);
	assert_int_equal(tune_skip_notes(tc, 1, 0), 0);
	assert_int_equal(tune_skip_notes(tc, 1, 1), 1);
	assert_int_equal(tune_skip_notes(other, 2, 1), 0);
}

static void candidates_heuristics_then_new_fallback_engines(void **state)
{
	(void)state;
	struct tune t = { .n = 0 };
	assert_true(tune_wants(&t, 12, TUNE_HEUR));
	assert_int_equal(tune_add(&t, 12, TUNE_HEUR, 1), 0);
	assert_int_equal(tune_add(&t, 27, TUNE_HEUR, 3), 1);
	/* the heuristics' own list is taken as offered; the fallback list adds new engines only */
	assert_true(tune_wants(&t, 12, TUNE_HEUR));
	assert_false(tune_wants(&t, 27, TUNE_FALLBACK));
	assert_true(tune_wants(&t, 5, TUNE_FALLBACK));
	assert_true(tune_wants(&t, -1, TUNE_FALLBACK)); /* engine unknown: cannot be a duplicate */
	/* the cap: TUNE_MAX by default, @max when set */
	for (int i = 2; i < TUNE_MAX; i++)
		assert_int_equal(tune_add(&t, 100 + i, TUNE_FALLBACK, i), i);
	assert_false(tune_wants(&t, 999, TUNE_HEUR));
	assert_int_equal(tune_add(&t, 999, TUNE_HEUR, 9), -1);
	struct tune s = { .max = 2 };
	tune_add(&s, 1, TUNE_HEUR, 1);
	tune_add(&s, 2, TUNE_HEUR, 2);
	assert_false(tune_wants(&s, 3, TUNE_HEUR));
	assert_int_equal(tune_add(&s, 3, TUNE_HEUR, 3), -1);
}

static void reps_fill_about_a_millisecond(void **state)
{
	(void)state;
	assert_int_equal(tune_reps(0.046), 20); /* 22 would be needed: capped */
	assert_int_equal(tune_reps(0.05), 20);
	assert_int_equal(tune_reps(0.1), 10);
	assert_int_equal(tune_reps(0.3), 4);
	assert_int_equal(tune_reps(1.0), 1);
	assert_int_equal(tune_reps(7.1), 1);
	assert_int_equal(tune_reps(-1), 20); /* the sizing run failed to time: the most */
	assert_int_equal(tune_reps(0), 20);
}

static void fastest_wins_ties_keep_the_heuristics_order(void **state)
{
	(void)state;
	struct tune t = { .n = 0 };
	assert_int_equal(tune_best(&t), -1);
	tune_add(&t, 12, TUNE_HEUR, 1);
	tune_add(&t, 27, TUNE_HEUR, 3);
	tune_add(&t, 40, TUNE_FALLBACK, 2);
	assert_int_equal(tune_best(&t), -1); /* none timed */
	t.c[0].ms = 0.0510, t.c[1].ms = 0.0461, t.c[2].ms = -1;
	assert_int_equal(tune_best(&t), 1);
	t.c[2].ms = 0.0461; /* equal to #3: the earlier stays */
	assert_int_equal(tune_best(&t), 1);
	t.c[2].ms = 0.0460;
	assert_int_equal(tune_best(&t), 2);
	t.c[0].ms = 0.0400;
	assert_int_equal(tune_best(&t), 0);
}

static void describe_says_which_and_why(void **state)
{
	(void)state;
	char b[200];
	struct tune t = { .n = 0 };
	assert_string_equal(tune_describe(&t, -1, b, sizeof(b)), "no engine");
	tune_add(&t, 12, TUNE_HEUR, 1);
	assert_string_equal(tune_describe(&t, 0, b, sizeof(b)),
			    "engine 12 (heuristics #1, untimed: the only candidate)");
	tune_add(&t, 27, TUNE_HEUR, 3);
	tune_add(&t, 40, TUNE_FALLBACK, 2);
	t.c[0].ms = 0.05101, t.c[1].ms = 0.04612, t.c[2].ms = -1; /* #2 of fallback failed */
	assert_string_equal(tune_describe(&t, 1, b, sizeof(b)),
			    "engine 27 (heuristics #3, fastest of 2 timed: 0.04612 ms; "
			    "heuristics #1 engine 12 0.05101 ms)");
	t.c[2].ms = 0.04;
	assert_string_equal(tune_describe(&t, 2, b, sizeof(b)),
			    "engine 40 (fallback #2, fastest of 3 timed: 0.04 ms; "
			    "heuristics #1 engine 12 0.05101 ms)");
	t.c[0].ms = 0.039;
	assert_string_equal(tune_describe(&t, 0, b, sizeof(b)),
			    "engine 12 (heuristics #1, fastest of 3 timed: 0.039 ms)");
	/* a short buffer is cut, never overrun */
	char s[16];
	tune_describe(&t, 0, s, sizeof(s));
	assert_int_equal(strlen(s), 15);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(notes_filter_as_pytorch),
		cmocka_unit_test(candidates_heuristics_then_new_fallback_engines),
		cmocka_unit_test(reps_fill_about_a_millisecond),
		cmocka_unit_test(fastest_wins_ties_keep_the_heuristics_order),
		cmocka_unit_test(describe_says_which_and_why),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
