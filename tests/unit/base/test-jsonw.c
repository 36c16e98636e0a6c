/*
 * test-jsonw.c — the JSON writer: commas and layout placed by the writer, escaping, and
 * shortest round-trip doubles.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/jsonw.h"

struct out {
	char *buf;
	size_t len;
	FILE *fp;
};

static void out_open(struct out *o)
{
	o->buf = NULL;
	o->len = 0;
	o->fp = open_memstream(&o->buf, &o->len);
	assert_non_null(o->fp);
}

static char *out_close(struct out *o)
{
	fclose(o->fp);
	return o->buf;
}

static void commas_and_lines_are_placed_by_the_writer(void **state)
{
	(void)state;
	struct out o;
	struct kp_jw jw;
	out_open(&o);
	jw_init(&jw, o.fp);
	jw_object_begin(&jw, NULL, 1);
	jw_string(&jw, "name", "aten::mm");
	jw_array_begin(&jw, "dims", 0);
	jw_int(&jw, NULL, 1024);
	jw_int(&jw, NULL, -1);
	jw_end(&jw);
	jw_object_begin(&jw, "empty", 1);
	jw_end(&jw);
	jw_array_begin(&jw, "rows", 1);
	jw_object_begin(&jw, NULL, 0);
	jw_bool(&jw, "ok", 1);
	jw_null(&jw, "flops");
	jw_end(&jw);
	jw_end(&jw);
	jw_end(&jw);
	char *s = out_close(&o);
	assert_string_equal(s, "{\n"
			       "  \"name\": \"aten::mm\",\n"
			       "  \"dims\": [1024, -1],\n"
			       "  \"empty\": {},\n"
			       "  \"rows\": [\n"
			       "    {\"ok\": true, \"flops\": null}\n"
			       "  ]\n"
			       "}");
	free(s);
}

static void strings_escape_quotes_backslashes_and_control_bytes(void **state)
{
	(void)state;
	struct out o;
	out_open(&o);
	jw_put_string(o.fp, "a\"b\\c\nd\te\r\x01\x1f \xc3\xa9");
	jw_put_string(o.fp, NULL);
	char *s = out_close(&o);
	/* UTF-8 passes through as bytes; only what RFC 8259 requires is escaped */
	assert_string_equal(s, "\"a\\\"b\\\\c\\nd\\te\\r\\u0001\\u001f \xc3\xa9\"null");
	free(s);
}

/*
 * Bytes of no valid UTF-8 sequence (a stray continuation, a cut or overlong sequence, a
 * surrogate) are U+FFFD, one per byte, so the document stays UTF-8 (fuzz-summary: a device
 * name with a raw 0xE0); whole sequences of 2, 3 and 4 bytes pass, C1 and bidi escaped.
 */
static void strings_that_are_not_utf8_become_replacement_characters(void **state)
{
	(void)state;
	struct out o;
	out_open(&o);
	jw_put_string(o.fp, "A100-2\xe0" "00|\x80|\xc3|\xc0\xaf|\xed\xa0\x80|\xf0\x9f\x98\x80|"
			    "\xe2\x82\xac|\xc2\x9b|\xe2\x80\xae");
	char *s = out_close(&o);
	assert_string_equal(s, "\"A100-2\\ufffd00|\\ufffd|\\ufffd|\\ufffd\\ufffd|"
			       "\\ufffd\\ufffd\\ufffd|\xf0\x9f\x98\x80|\xe2\x82\xac|\\u009b|\\u202e\"");
	free(s);
}

static void doubles_are_the_shortest_text_that_reads_back(void **state)
{
	(void)state;
	char buf[40];
	assert_string_equal(jw_format_double(buf, sizeof(buf), 47.848680568750993),
			    "47.84868056875099");
	assert_string_equal(jw_format_double(buf, sizeof(buf), 0.1), "0.1");
	assert_string_equal(jw_format_double(buf, sizeof(buf), 1.5e-9), "1.5e-09");
	assert_string_equal(jw_format_double(buf, sizeof(buf), 989400000000000.0),
			    "989400000000000");
	assert_string_equal(jw_format_double(buf, sizeof(buf), -3.0), "-3");
	/* integers at 2^53 and beyond are printed with %g, never rounded to another integer */
	double big = 9007199254740993.0 * 4;
	assert_true(strtod(jw_format_double(buf, sizeof(buf), big), NULL) == big);
	for (double v = 1e-12; v < 1e12; v *= 7.31)
		assert_true(strtod(jw_format_double(buf, sizeof(buf), v), NULL) == v);
	/* the shortest: as the plain search from 1 digit up finds it, on ratios, times and
	 * percentages with 1 to 17 significant digits */
	unsigned long long x = 88172645463325252ull;
	for (int i = 0; i < 20000 + 2 * 2098; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		double v = (double)(x >> 11) / (double)(1ull << (x % 53)) * (i % 2 ? 1 : -1);
		if (i % 3 == 0)
			v = (double)(x % 100000) / 1000.0; /* few digits */
		if (i >= 20000) /* every power of two, where rounding intervals are uneven */
			v = ldexp(i % 2 ? 1.0 : 3.0, (i - 20000) / 2 - 1074);
		char want[40];
		for (int prec = 1; prec <= 17; prec++) {
			snprintf(want, sizeof(want), "%.*g", prec, v);
			if (strtod(want, NULL) == v)
				break;
		}
		if (v == floor(v) && fabs(v) < 9e15)
			snprintf(want, sizeof(want), "%.0f", v);
		assert_string_equal(jw_format_double(buf, sizeof(buf), v), want);
	}

	/* not finite: null */
	struct out o;
	struct kp_jw jw;
	out_open(&o);
	jw_init(&jw, o.fp);
	jw_array_begin(&jw, NULL, 0);
	jw_double(&jw, NULL, NAN);
	jw_double(&jw, NULL, INFINITY);
	jw_double(&jw, NULL, 0.25);
	jw_end(&jw);
	char *s = out_close(&o);
	assert_string_equal(s, "[null, null, 0.25]");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(commas_and_lines_are_placed_by_the_writer),
		cmocka_unit_test(strings_escape_quotes_backslashes_and_control_bytes),
		cmocka_unit_test(strings_that_are_not_utf8_become_replacement_characters),
		cmocka_unit_test(doubles_are_the_shortest_text_that_reads_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
