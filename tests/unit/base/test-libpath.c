/*
 * test-libpath.c — where kprof capture looks for kprof-capture.so, kprof-inject.so and
 * kprof-shim.so: the environment variable alone when set, else beside the binary, then
 * ../lib/kprof (an installed tree under any PREFIX), then the compiled-in directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/libpath.h"

static void installed_tree_is_found_relative_to_the_binary(void **state)
{
	(void)state;
	struct kp_libpath lp;
	libpath_candidates(&lp, "/opt/kp/bin/kprof", NULL, "/usr/local/lib/kprof",
			   "kprof-capture.so");
	assert_int_equal(lp.n, 3);
	assert_string_equal(lp.path[0], "/opt/kp/bin/kprof-capture.so");
	assert_string_equal(lp.path[1], "/opt/kp/bin/../lib/kprof/kprof-capture.so");
	assert_string_equal(lp.path[2], "/usr/local/lib/kprof/kprof-capture.so");
	/* an empty variable counts as unset */
	libpath_candidates(&lp, "/opt/kp/bin/kprof", "", "/usr/local/lib/kprof", "kprof-shim.so");
	assert_int_equal(lp.n, 3);
	assert_string_equal(lp.path[1], "/opt/kp/bin/../lib/kprof/kprof-shim.so");
}

static void the_variable_alone_when_set(void **state)
{
	(void)state;
	struct kp_libpath lp;
	libpath_candidates(&lp, "/opt/kp/bin/kprof", "/x/my.so", "/usr/local/lib/kprof",
			   "kprof-capture.so");
	assert_int_equal(lp.n, 1);
	assert_string_equal(lp.path[0], "/x/my.so");
}

static void unknown_binary_and_duplicates(void **state)
{
	(void)state;
	struct kp_libpath lp;
	libpath_candidates(&lp, "", NULL, "/usr/lib/kprof", "kprof-inject.so");
	assert_int_equal(lp.n, 1);
	assert_string_equal(lp.path[0], "/usr/lib/kprof/kprof-inject.so");
	libpath_candidates(&lp, NULL, NULL, NULL, "kprof-inject.so");
	assert_int_equal(lp.n, 0);
	/* the compiled-in directory spelled as the relative one: listed once */
	libpath_candidates(&lp, "/p/bin/kprof", NULL, "/p/bin/../lib/kprof", "kprof-inject.so");
	assert_int_equal(lp.n, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(installed_tree_is_found_relative_to_the_binary),
		cmocka_unit_test(the_variable_alone_when_set),
		cmocka_unit_test(unknown_binary_and_duplicates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
