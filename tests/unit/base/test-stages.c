/*
 * test-stages.c — KPROF_TIMING: when it is on, and the line a stage prints.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/stages.h"

static void timing_is_on_for_a_value_other_than_0(void **state)
{
	(void)state;
	unsetenv("KPROF_TIMING");
	assert_false(stages_on());
	setenv("KPROF_TIMING", "", 1);
	assert_false(stages_on());
	setenv("KPROF_TIMING", "0", 1);
	assert_false(stages_on());
	setenv("KPROF_TIMING", "1", 1);
	assert_true(stages_on());
	setenv("KPROF_TIMING", "yes", 1);
	assert_true(stages_on());
	unsetenv("KPROF_TIMING");
}

static void a_stage_prints_one_line_in_seconds(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	stages_print(f, "load", 123456789, NULL);
	stages_print(f, "link", 2000000000, "%d threads, %s", 4, "x");
	fclose(f);
	assert_string_equal(buf, "kprof: timing: load 0.1235 s\n"
				 "kprof: timing: link 2.0000 s (4 threads, x)\n");
	free(buf);
}

static void the_clock_does_not_go_back(void **state)
{
	(void)state;
	int64_t a = stages_now(), b = stages_now();
	assert_true(a > 0);
	assert_true(b >= a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(timing_is_on_for_a_value_other_than_0),
		cmocka_unit_test(a_stage_prints_one_line_in_seconds),
		cmocka_unit_test(the_clock_does_not_go_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
