/*
 * test-opts.c — the option parser: validated numbers, prefixes, errors with exit status 2.
 */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/opts.h"

static void numbers_must_be_finite_whole_and_in_range(void **state)
{
	(void)state;
	double v = -1;
	assert_null(opts_parse_double("2.5", 0, 100, &v));
	assert_true(v == 2.5);
	assert_null(opts_parse_double("100", 0, 100, &v));
	assert_null(opts_parse_double("0", 0, 100, &v));
	static const char *const bad[] = { "nan", "NaN", "-nan", "inf", "-inf", "infinity", "1e999",
					   "1e-400", "-1", "100.5", "", " ", "5%", "1,5", "0x", NULL };
	for (int i = 0; bad[i]; i++) {
		v = 7;
		const char *why = opts_parse_double(bad[i], 0, 100, &v);
		assert_non_null(why);
		assert_string_equal(why, "expects a number from 0 to 100");
		assert_true(v == 7); /* untouched */
	}
	assert_string_equal(opts_parse_double("-0.5", 0, HUGE_VAL, &v), "expects a number >= 0");
	assert_null(opts_parse_double("1e300", 0, HUGE_VAL, &v));

	long l = -1;
	assert_null(opts_parse_long("20", 0, LONG_MAX, &l));
	assert_int_equal(l, 20);
	static const char *const badl[] = { "99999999999999999999", "-1", "1.5", "1e3", "ten", "",
					    "3 ", NULL };
	for (int i = 0; badl[i]; i++) {
		assert_string_equal(opts_parse_long(badl[i], 0, LONG_MAX, &l), "expects an integer >= 0");
		assert_int_equal(l, 20);
	}
	assert_string_equal(opts_parse_long("2147483648", 1, INT_MAX, &l),
			    "expects an integer from 1 to 2147483647");
}

static void clock_callback_rejects_absurd_clocks(void **state)
{
	(void)state;
	double mhz = 0;
	assert_null(opts_cb_clock_mhz("1500", &mhz));
	assert_true(mhz == 1500);
	assert_non_null(opts_cb_clock_mhz("1e-300", &mhz));
	assert_non_null(opts_cb_clock_mhz("nan", &mhz));
	assert_non_null(opts_cb_clock_mhz("0", &mhz));
	assert_non_null(opts_cb_clock_mhz("1e9", &mhz));
	assert_true(mhz == 1500);
}

/* opts_parse over a small table; returns its status, argv copied so it can be compacted. */
static long top;
static double pct, num;
static int flag;
static const char *str;

static int parse(int argc, const char **args)
{
	static const struct kp_opt opts[] = {
		{ "top", 'n', OPT_INT, "N", "rows", &top, NULL, NULL },
		{ "min-pct", 0, OPT_PCT, "PCT", "fold", &pct, NULL, NULL },
		{ "threshold", 0, OPT_DOUBLE, "PCT", "noise", &num, NULL, NULL },
		{ "stats", 0, OPT_FLAG, NULL, "stats", &flag, NULL, NULL },
		{ "device", 0, OPT_STR, "NAME", "device", &str, NULL, NULL },
		{ "device-db", 0, OPT_STR, "FILE", "db", &str, NULL, NULL },
		{ NULL, 0, 0, NULL, NULL, NULL, NULL, NULL },
	};
	char *argv[16];
	for (int i = 0; i < argc; i++)
		argv[i] = (char *)args[i];
	argv[argc] = NULL;
	int nargs;
	FILE *saved = stderr;
	stderr = fopen("/dev/null", "w");
	int rc = opts_parse("test", "[<options>]", opts, argc, argv, &nargs);
	fclose(stderr);
	stderr = saved;
	return rc;
}

static void table_numbers_reject_nan_inf_and_out_of_range(void **state)
{
	(void)state;
	assert_int_equal(parse(3, (const char *[]){ "t", "--min-pct", "5" }), 0);
	assert_true(pct == 5);
	assert_int_equal(parse(2, (const char *[]){ "t", "--min-pct=nan" }), -1);
	assert_int_equal(parse(2, (const char *[]){ "t", "--min-pct=101" }), -1);
	assert_int_equal(parse(2, (const char *[]){ "t", "--threshold=inf" }), -1);
	assert_int_equal(parse(2, (const char *[]){ "t", "--threshold=-3" }), -1);
	assert_int_equal(parse(2, (const char *[]){ "t", "--threshold=250" }), 0);
	assert_int_equal(parse(2, (const char *[]){ "t", "-n-1" }), -1);
	assert_int_equal(parse(3, (const char *[]){ "t", "-n", "99999999999999999999" }), -1);
	assert_int_equal(parse(3, (const char *[]){ "t", "-n", "0" }), 0);
	assert_int_equal(top, 0);
	assert_true(pct == 5 && num == 250);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(numbers_must_be_finite_whole_and_in_range),
		cmocka_unit_test(clock_callback_rejects_absurd_clocks),
		cmocka_unit_test(table_numbers_reject_nan_inf_and_out_of_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
