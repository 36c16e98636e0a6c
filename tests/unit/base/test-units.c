/*
 * test-units.c — human-readable cells: times, fixed decimals, counts, rates, plurals, calls.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kprof/units.h"

static void times_scale_with_integer_arithmetic_and_keep_the_sign(void **state)
{
	(void)state;
	char b[64];
	assert_string_equal(units_time(b, sizeof(b), 0), "0 ns");
	assert_string_equal(units_time(b, sizeof(b), 999), "999 ns");
	assert_string_equal(units_time(b, sizeof(b), 1000), "1.000 us");
	assert_string_equal(units_time(b, sizeof(b), 4812345), "4.812 ms");
	assert_string_equal(units_time(b, sizeof(b), 11842000000), "11.842 s");
	assert_string_equal(units_time(b, sizeof(b), -685898), "-685.898 us");
	assert_string_equal(units_time(b, sizeof(b), 61000000000LL), "61.000 s");
	/* rounded half up, not truncated (issue 23, item 6) */
	assert_string_equal(units_time(b, sizeof(b), 1367807), "1.368 ms");
	assert_string_equal(units_time(b, sizeof(b), 1367499), "1.367 ms");
	assert_string_equal(units_time(b, sizeof(b), -1367500), "-1.368 ms");
	assert_string_equal(units_time(b, sizeof(b), 999999600), "1.000 s");
	assert_string_equal(units_time(b, sizeof(b), 1999500000), "2.000 s");
	assert_string_equal(units_time(b, sizeof(b), INT64_MIN), "-9223372036.855 s");
}

static const char *time_of(char *buf, size_t cap, int64_t ns)
{
	return units_time(buf, cap, ns);
}

static void signed_values_carry_a_plus_when_positive(void **state)
{
	(void)state;
	char b[32];
	assert_string_equal(units_signed(b, sizeof(b), 1250000, time_of), "+1.250 ms");
	assert_string_equal(units_signed(b, sizeof(b), -1250000, time_of), "-1.250 ms");
	assert_string_equal(units_signed(b, sizeof(b), 0, time_of), "0 ns");
}

static void fixed_and_count_cells_print_a_dash_when_unknown(void **state)
{
	(void)state;
	char b[64];
	assert_string_equal(units_fixed(b, sizeof(b), 814.2e12, 1e12, 1), "814.2");
	assert_string_equal(units_fixed(b, sizeof(b), -1, 1, 1), "-");
	assert_string_equal(units_count(b, sizeof(b), 999999), "999999");
	assert_string_equal(units_count(b, sizeof(b), 4.613e12), "4.613e+12");
	assert_string_equal(units_count(b, sizeof(b), -1), "-");
}

static void rates_take_an_si_prefix_before_the_unit(void **state)
{
	(void)state;
	char b[64];
	assert_string_equal(units_rate(b, sizeof(b), 3.35e12, "B/s"), "3.4 TB/s");
	assert_string_equal(units_rate(b, sizeof(b), 989.4e12, "FLOP/s"), "989.4 TFLOP/s");
	assert_string_equal(units_rate(b, sizeof(b), 12, "B/s"), "12.0 B/s");
	assert_string_equal(units_rate(b, sizeof(b), -1, "B/s"), "-");
}

static void plurals_and_calls_per_step_read_naturally(void **state)
{
	(void)state;
	char b[64];
	assert_string_equal(units_plural(1, "step", "steps"), "step");
	assert_string_equal(units_plural(0, "step", "steps"), "steps");
	assert_string_equal(units_plural(2, "launch", "launches"), "launches");
	assert_string_equal(units_calls(b, sizeof(b), 774.1666), "774.2");
	assert_string_equal(units_calls(b, sizeof(b), 3), "3");
	assert_string_equal(units_calls(b, sizeof(b), 1508.5), "1508.5");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(times_scale_with_integer_arithmetic_and_keep_the_sign),
		cmocka_unit_test(signed_values_carry_a_plus_when_positive),
		cmocka_unit_test(fixed_and_count_cells_print_a_dash_when_unknown),
		cmocka_unit_test(rates_take_an_si_prefix_before_the_unit),
		cmocka_unit_test(plurals_and_calls_per_step_read_naturally),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
