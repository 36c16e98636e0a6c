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
#include <stdlib.h>
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
	static const char *const bad[] = { "nan",   "NaN",    "-nan", "inf",   "-inf", "infinity",
					   "1e999", "1e-400", "-1",   "100.5", "",     " ",
					   "5%",    "1,5",    "0x",   NULL };
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
	static const char *const badl[] = {
		"99999999999999999999", "-1", "1.5", "1e3", "ten", "", "3 ", NULL
	};
	for (int i = 0; badl[i]; i++) {
		assert_string_equal(opts_parse_long(badl[i], 0, LONG_MAX, &l),
				    "expects an integer >= 0");
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

static void long_options_accept_unambiguous_prefixes(void **state)
{
	(void)state;
	top = 0;
	assert_int_equal(parse(3, (const char *[]){ "t", "--to", "7" }), 0);
	assert_int_equal(top, 7);
	assert_int_equal(parse(2, (const char *[]){ "t", "--min=3" }), 0);
	assert_true(pct == 3);
	flag = 0;
	assert_int_equal(parse(2, (const char *[]){ "t", "--st" }), 0);
	assert_int_equal(flag, 1);
	assert_int_equal(parse(2, (const char *[]){ "t", "--no-s" }), 0);
	assert_int_equal(flag, 0);
	/* an exact name wins over a longer option it starts */
	str = NULL;
	assert_int_equal(parse(2, (const char *[]){ "t", "--device=H100" }), 0);
	assert_string_equal(str, "H100");
	assert_int_equal(parse(2, (const char *[]){ "t", "--device-d=f.txt" }), 0);
	assert_string_equal(str, "f.txt");
	/* ambiguous, unknown and help */
	assert_int_equal(parse(2, (const char *[]){ "t", "--dev=H100" }), -1);
	assert_string_equal(str, "f.txt");
	assert_int_equal(parse(2, (const char *[]){ "t", "--x" }), -1);
	assert_int_equal(parse(2, (const char *[]){ "t", "--" }), 0);
}

/* The error text of one opts_parse() call over @opts. */
static const char *errors_of(const struct kp_opt *opts, const char *arg)
{
	static char buf[1024];
	char *argv[] = { "t", (char *)arg, NULL };
	int nargs;
	FILE *saved = stderr;
	stderr = fmemopen(buf, sizeof(buf), "w");
	opts_parse("test", "[<options>]", opts, 2, argv, &nargs);
	fputc(0, stderr);
	fclose(stderr);
	stderr = saved;
	return buf;
}

static void ambiguous_prefixes_list_every_candidate(void **state)
{
	(void)state;
	static int f1, f2;
	static const char *s1;
	static long n1;
	/* capture's table has options that share first letters, and one named "m" */
	static const struct kp_opt opts[] = {
		{ "shapes", 's', OPT_STR, "SET", "", &s1, NULL, NULL },
		{ "m", 0, OPT_STR, "M", "", &s1, NULL, NULL },
		{ "sdpa-shapes", 0, OPT_STR, "SET", "", &s1, NULL, NULL },
		{ "sample-period", 0, OPT_INT, "MS", "", &n1, NULL, NULL },
		{ "stats", 0, OPT_FLAG, NULL, "", &f1, NULL, NULL },
		{ "strict", 0, OPT_FLAG, NULL, "", &f2, NULL, NULL },
		{ NULL, 0, 0, NULL, NULL, NULL, NULL, NULL },
	};
	assert_string_equal(
		errors_of(opts, "--s=x"),
		"kprof: error: ambiguous option '--s' (could be '--shapes', '--sdpa-shapes', "
		"'--sample-period', '--stats', '--strict')\nkprof: see 'kprof test -h'\n");
	assert_string_equal(
		errors_of(opts, "--no-st"),
		"kprof: error: ambiguous option '--no-st' (could be '--no-stats', '--no-strict')\n"
		"kprof: see 'kprof test -h'\n");
	assert_string_equal(errors_of(opts, "--sa=5"), "");
	assert_int_equal(n1, 5);
	assert_string_equal(errors_of(opts, "--m=128"), "");
	assert_string_equal(s1, "128");
	assert_string_equal(errors_of(opts, "--sd=a"), "");
	assert_string_equal(s1, "a");
	assert_string_equal(
		errors_of(opts, "--stats=1"),
		"kprof: error: option '--stats' takes no value\nkprof: see 'kprof test -h'\n");
}

/* Operands keep their order, options take inline, attached or next-argument values, "--" ends them */
static void operands_and_values_each_step(void **state)
{
	(void)state;
	static long n1;
	static int f1;
	static const char *s1;
	static const struct kp_opt opts[] = {
		{ "top", 'n', OPT_INT, "N", "", &n1, NULL, NULL },
		{ "stats", 0, OPT_FLAG, NULL, "", &f1, NULL, NULL },
		{ "device", 'd', OPT_STR, "NAME", "", &s1, NULL, NULL },
		{ NULL, 0, 0, NULL, NULL, NULL, NULL, NULL },
	};
	char *argv[] = {
		"t", "a", "-n", "4", "-", "--stats", "-dH100", "b", "--", "-n", "--x", NULL
	};
	int nargs = -1;
	assert_int_equal(opts_parse("test", "", opts, 11, argv, &nargs), 0);
	assert_int_equal(nargs, 5);
	assert_string_equal(argv[1], "a");
	assert_string_equal(argv[2], "-");
	assert_string_equal(argv[3], "b");
	assert_string_equal(argv[4], "-n");
	assert_string_equal(argv[5], "--x");
	assert_null(argv[6]);
	assert_int_equal(n1, 4);
	assert_int_equal(f1, 1);
	assert_string_equal(s1, "H100");
	assert_string_equal(
		errors_of(opts, "-n"),
		"kprof: error: option '--top' requires a value\nkprof: see 'kprof test -h'\n");
	assert_string_equal(errors_of(opts, "-x"),
			    "kprof: error: unknown switch '-x'\nkprof: see 'kprof test -h'\n");
	assert_string_equal(errors_of(opts, "--tpo=1"),
			    "kprof: error: unknown option '--tpo' (did "
			    "you mean '--top'?)\nkprof: see 'kprof test -h'\n");
	assert_string_equal(
		errors_of(opts, "--help=1"),
		"kprof: error: option '--help' takes no value\nkprof: see 'kprof test -h'\n");
	assert_string_equal(errors_of(opts, "-n-1"),
			    "kprof: error: option '--top' expects an integer "
			    ">= 0, not '-1'\nkprof: see 'kprof test -h'\n");
	FILE *saved = stdout;
	stdout = fopen("/dev/null", "w");
	char *help[] = { "t", "--he", "--x", NULL };
	int rc = opts_parse("test", "", opts, 3, help, &nargs);
	fclose(stdout);
	stdout = saved;
	assert_int_equal(rc, 1);
}

static void suggests_the_closest_name(void **state)
{
	(void)state;
	static const char *const cmds[] = { "analyze", "diff", "capture", "devices", "help", NULL };
	assert_string_equal(opts_suggest("analyse", cmds), "analyze");
	assert_string_equal(opts_suggest("ana", cmds), "analyze");
	assert_string_equal(opts_suggest("dif", cmds), "diff");
	assert_string_equal(opts_suggest("devcies", cmds), "devices");
	assert_null(opts_suggest("xyzzy", cmds));
	assert_null(opts_suggest("", cmds));
}

static void help_columns_line_up(void **state)
{
	(void)state;
	static long n1;
	static const struct kp_opt opts[] = {
		{ "top", 'n', OPT_INT, "N", "rows", &n1, NULL, NULL },
		{ "sort", 's', OPT_STR, "KEY[:asc|:desc],...", "sort keys", &n1, NULL, NULL },
		{ NULL, 0, 0, NULL, NULL, NULL, NULL, NULL },
	};
	char buf[1024];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	opts_usage(f, "test", "[<options>]", opts);
	fputc(0, f);
	fclose(f);
	assert_string_equal(buf, "usage: kprof test [<options>]\n\n"
				 "    -n, --top=N  rows\n"
				 "    -s, --sort=KEY[:asc|:desc],...\n"
				 "                 sort keys\n"
				 "    -h, --help   show this help\n");
}

/* issue 23 item 14: KPROF_PARSE_CHUNK=-1 became 2^64-1 bytes and 2 * size + pad wrapped */
static void environment_variables_are_read_like_options(void **state)
{
	(void)state;
	struct kp_diag d = { 0 };
	long v = 7;
	unsetenv("KPROF_PARSE_CHUNK");
	assert_int_equal(opts_env_long("KPROF_PARSE_CHUNK", 64, 1L << 30, &v, &d), 0);
	assert_int_equal(v, 7);
	setenv("KPROF_PARSE_CHUNK", "4096", 1);
	assert_int_equal(opts_env_long("KPROF_PARSE_CHUNK", 64, 1L << 30, &v, &d), 1);
	assert_int_equal(v, 4096);
	const char *bad[] = { "-1", "18446744073709551615", "63", "1073741825", "12k" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("KPROF_PARSE_CHUNK", bad[i], 1);
		memset(&d, 0, sizeof(d));
		assert_int_equal(opts_env_long("KPROF_PARSE_CHUNK", 64, 1L << 30, &v, &d), -1);
		assert_int_equal(d.status, 2);
		char want[160];
		snprintf(want, sizeof(want),
			 "error: invalid value '%s' for KPROF_PARSE_CHUNK: expects an integer from 64 to 1073741824",
			 bad[i]);
		assert_string_equal(d.msg, want);
		assert_int_equal(opts_env_check(&d), -1);
	}
	unsetenv("KPROF_PARSE_CHUNK");
	static const char *const lv[] = { "scalar", "sse2", "avx2", NULL };
	int k = -1;
	setenv("KPROF_SIMD", "sse2", 1);
	assert_int_equal(opts_env_choice("KPROF_SIMD", lv, &k, &d), 1);
	assert_int_equal(k, 1);
	assert_int_equal(opts_env_check(&d), 0);
	setenv("KPROF_SIMD", "avx512", 1);
	assert_int_equal(opts_env_choice("KPROF_SIMD", lv, &k, &d), -1);
	assert_string_equal(d.msg,
			    "error: invalid value 'avx512' for KPROF_SIMD (valid: scalar, sse2, avx2)");
	unsetenv("KPROF_SIMD");
	setenv("KPROF_TIMING", "yes", 1);
	assert_int_equal(opts_env_check(&d), -1);
	setenv("KPROF_TIMING", "1", 1);
	assert_int_equal(opts_env_check(&d), 0);
	unsetenv("KPROF_TIMING");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(numbers_must_be_finite_whole_and_in_range),
		cmocka_unit_test(clock_callback_rejects_absurd_clocks),
		cmocka_unit_test(table_numbers_reject_nan_inf_and_out_of_range),
		cmocka_unit_test(long_options_accept_unambiguous_prefixes),
		cmocka_unit_test(ambiguous_prefixes_list_every_candidate),
		cmocka_unit_test(operands_and_values_each_step),
		cmocka_unit_test(suggests_the_closest_name),
		cmocka_unit_test(help_columns_line_up),
		cmocka_unit_test(environment_variables_are_read_like_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
