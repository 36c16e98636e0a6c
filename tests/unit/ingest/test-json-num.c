/*
 * test-json-num.c — numbers: the conversions of src/ingest/json-num.c (microseconds to exact
 * nanoseconds, integers) and the fast calls json_key() and json_next_int().
 * Every test of the main list runs at each kernel level; shared helpers: json-test.h.
 */
#include "json-test.h"

static void json_converts_microseconds_to_exact_nanoseconds(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		int r;
		int64_t ns;
	} c[] = {
		{ "4795881956492.880", 0, 4795881956492880LL },
		{ "1712195495505583.0", 0, 1712195495505583000LL },
		{ "12", 0, 12000 },
		{ "6.241", 0, 6241 },
		{ "6.2419", 0, 6241 },
		{ "0.0005", 0, 0 },
		{ "-0.0005", 0, 0 },
		{ "-3", 0, -3000 },
		{ "-6.2419", 0, -6241 },
		{ "1.5e3", 0, 1500000 },
		{ "1.5E+3", 0, 1500000 },
		{ "25e-1", 0, 2500 },
		{ "1e-4", 0, 0 },
		{ "0", 0, 0 },
		{ "9223372036854775.807", 0, INT64_MAX },
		{ "9223372036854775.808", -1, 0 },
		{ "-9223372036854775.808", 0, INT64_MIN },
		{ "1e16", -1, 0 },
		{ "0e999999999999", 0, 0 },
		{ "1e-999999999999", 0, 0 },
		{ "123456789012345678901234567890e-20", 0, 1234567890123LL },
		{ "", -1, 0 },
		{ "1.", -1, 0 },
		{ "abc", -1, 0 },
		{ "1e", -1, 0 },
		/* each step of dec_scaled(): 16 integer digits (19 in ns) on the fast path and
		 * past it, a fraction beyond ns, empty parts, leading zeros */
		{ "1662490216123456", 0, 1662490216123456000LL },
		{ "1662490216123456.9", 0, 1662490216123456900LL },
		{ "9223372036854775", 0, 9223372036854775000LL },
		{ "9223372036854776", -1, 0 },
		{ "-9223372036854776", -1, 0 },
		{ "1.e3", -1, 0 },
		{ "-", -1, 0 },
		{ "1e+", -1, 0 },
		{ "00000000000000000000001", 0, 1000 },
	};
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		int64_t v = 0;
		int r = json_num_us_to_ns(c[k].in, strlen(c[k].in), &v);
		if (r != c[k].r || (r == 0 && v != c[k].ns))
			fail_msg("'%s': got %d %lld", c[k].in, r, (long long)v);
	}
}

static void json_converts_integers_exactly(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		int r;
		int64_t v;
	} c[] = {
		{ "0", 0, 0 },
		{ "-0", 0, 0 },
		{ "85017493504", 0, 85017493504LL },
		{ "9223372036854775807", 0, INT64_MAX },
		{ "-9223372036854775808", 0, INT64_MIN },
		{ "9223372036854775808", -1, 0 },
		{ "3.0", 0, 3 },
		{ "1e3", 0, 1000 },
		{ "1.25e2", 0, 125 },
		{ "1250e-1", 0, 125 },
		{ "1.5", -1, 0 },
		{ "1e-1", -1, 0 },
		{ "1e19", -1, 0 },
		{ "12x", -1, 0 },
		{ "1.00", 0, 1 },
		{ "1.50", -1, 0 },
		{ "1.0e1", 0, 10 },
		{ "-1e18", 0, -1000000000000000000LL },
		{ "12345678901234567.5", -1, 0 },
	};
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		int64_t v = 0;
		int r = json_num_i64(c[k].in, strlen(c[k].in), &v);
		if (r != c[k].r || (r == 0 && v != c[k].v))
			fail_msg("'%s': got %d %lld", c[k].in, r, (long long)v);
	}
	assert_true(json_num_double("2.5e-3", 6) == 2.5e-3);
}

static void fast_one(const char *name, const char *s, size_t len)
{
	for (int tr = 0; tr < 2; tr++) {
		struct sbuf a = { 0 }, b = { 0 };
		struct kp_json p, q;
		struct trickle t1 = { s, len, 0, 0 }, t2 = { s, len, 0, 0 };
		if (tr) {
			json_init(&p, trickle_read, &t1, 16);
			json_init(&q, trickle_read, &t2, 16);
		} else {
			json_init_mem(&p, s, len);
			json_init_mem(&q, s, len);
		}
		walk(&p, &a);
		walk_fast(&q, &b);
		if (strcmp(a.s, b.s))
			fail_msg("%s (trickle %d): json_next:\n%s\nfast calls:\n%s", name, tr, a.s,
				 b.s);
		json_free(&p);
		json_free(&q);
		free(a.s);
		free(b.s);
	}
}

static void json_key_and_json_next_int_match_json_next(void **state)
{
	(void)state;
	assert_true(each_suite_file("y_", fast_one) > 0);
	assert_true(each_suite_file("n_", fast_one) > 0);
	assert_true(each_suite_file("i_", fast_one) > 0);
	/* numbers of every length and form, as member values */
	static const char *const frac[] = { "", ".0", ".5", ".25", ".880", ".8801", ".123456" };
	static const char *const ex[] = { "", "e3", "E-2", "e+1" };
	char doc[256];
	for (int neg = 0; neg < 2; neg++)
		for (int nd = 1; nd <= 20; nd++)
			for (size_t f = 0; f < sizeof(frac) / sizeof(*frac); f++)
				for (size_t e = 0; e < sizeof(ex) / sizeof(*ex); e++) {
					char num[64];
					int k = 0;
					if (neg)
						num[k++] = '-';
					for (int i = 0; i < nd; i++)
						num[k++] = i         ? '0' + (i * 7 + nd) % 10
							   : nd == 1 ? '0' + (int)(f % 10)
								     : '9' - nd % 9;
					num[k] = 0;
					int n = snprintf(doc, sizeof(doc),
							 "{\"a\":%s%s%s,\"b\" : %s%s%s}", num,
							 frac[f], ex[e], num, frac[f], ex[e]);
					fast_one(doc, doc, (size_t)n);
				}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(json_key_and_json_next_int_match_json_next),
		cmocka_unit_test(json_converts_microseconds_to_exact_nanoseconds),
		cmocka_unit_test(json_converts_integers_exactly),
	};
	int fail = 0;
	RUN_AT_LEVELS(fail, "json-num", tests);
	return fail;
}
