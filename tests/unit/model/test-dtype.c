/*
 * test-dtype.c — Kineto type strings, c10::ScalarType numbers, sizes, precisions.
 */
#include "kprof/dtype.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static enum kp_dtype parse(const char *s)
{
	return dtype_parse(s, strlen(s));
}

static void dtype_parse_maps_every_kineto_tensor_type(void **state)
{
	(void)state;
	assert_int_equal(parse("c10::BFloat16"), DT_BF16);
	assert_int_equal(parse("c10::Half"), DT_F16);
	assert_int_equal(parse("float"), DT_F32);
	assert_int_equal(parse("double"), DT_F64);
	assert_int_equal(parse("long int"), DT_I64);
	assert_int_equal(parse("int"), DT_I32);
	assert_int_equal(parse("short int"), DT_I16);
	assert_int_equal(parse("short"), DT_I16);
	assert_int_equal(parse("signed char"), DT_I8);
	assert_int_equal(parse("unsigned char"), DT_U8);
	assert_int_equal(parse("bool"), DT_BOOL);
	assert_int_equal(parse("c10::Float8_e4m3fn"), DT_F8E4M3);
	assert_int_equal(parse("c10::Float8_e4m3fnuz"), DT_F8E4M3);
	assert_int_equal(parse("c10::Float8_e5m2"), DT_F8E5M2);
	assert_int_equal(parse("c10::Float8_e5m2fnuz"), DT_F8E5M2);
	assert_int_equal(parse("c10::complex<float>"), DT_C64);
	assert_int_equal(parse("c10::complex<double>"), DT_C128);
	assert_int_equal(parse("c10::complex<c10::Half>"), DT_C32);
	assert_int_equal(parse("long unsigned int"), DT_U64);
	assert_int_equal(parse("unsigned int"), DT_U32);
	assert_int_equal(parse("short unsigned int"), DT_U16);
}

static void dtype_parse_treats_scalars_lists_and_none_as_no_tensor(void **state)
{
	(void)state;
	assert_int_equal(parse(""), DT_NONE);
	assert_int_equal(parse("Scalar"), DT_NONE);
	assert_int_equal(parse("ScalarList"), DT_NONE);
	assert_int_equal(parse("TensorList"), DT_NONE);
	assert_int_equal(parse("GenericList"), DT_NONE);
	assert_int_equal(dtype_parse(NULL, 0), DT_NONE);
}

static void dtype_parse_returns_unknown_for_other_strings(void **state)
{
	(void)state;
	assert_int_equal(parse("c10::qint8"), DT_UNKNOWN);
	assert_int_equal(parse("c10::Float8_e8m0fnu"), DT_UNKNOWN);
	assert_int_equal(parse("Float"), DT_UNKNOWN);
	assert_int_equal(parse("c10::BFloat16 "), DT_UNKNOWN);
}

static void dtype_parse_reads_exactly_len_bytes(void **state)
{
	(void)state;
	assert_int_equal(dtype_parse("float\", \"c10::Half", 5), DT_F32);
	assert_int_equal(dtype_parse("c10::Half", 4), DT_UNKNOWN);
	assert_int_equal(dtype_parse("int", 0), DT_NONE);
	assert_int_equal(dtype_parse("long int", 4), DT_I64); /* "long" */
}

static void dtype_from_scalar_type_follows_c10_numbering(void **state)
{
	static const enum kp_dtype want[30] = {
		DT_U8,      DT_I8,      DT_I16,     DT_I32,     DT_I64,     DT_F16,
		DT_F32,     DT_F64,     DT_C32,     DT_C64,     DT_C128,    DT_BOOL,
		DT_UNKNOWN, DT_UNKNOWN, DT_UNKNOWN, DT_BF16,    DT_UNKNOWN, DT_UNKNOWN,
		DT_UNKNOWN, DT_UNKNOWN, DT_UNKNOWN, DT_UNKNOWN, DT_UNKNOWN, DT_F8E5M2,
		DT_F8E4M3,  DT_F8E5M2,  DT_F8E4M3,  DT_U16,     DT_U32,     DT_U64,
	};
	int i;

	(void)state;
	for (i = 0; i < 30; i++)
		assert_int_equal(dtype_from_scalar_type(i), want[i]);
	assert_int_equal(dtype_from_scalar_type(44), DT_UNKNOWN); /* Float8_e8m0fnu */
	assert_int_equal(dtype_from_scalar_type(45), DT_UNKNOWN); /* Float4_e2m1fn_x2 */
	assert_int_equal(dtype_from_scalar_type(-1), DT_UNKNOWN);
	assert_int_equal(dtype_from_scalar_type(1000), DT_UNKNOWN);
}

static void dtype_size_gives_bytes_per_element(void **state)
{
	(void)state;
	assert_int_equal(dtype_size(DT_BF16), 2);
	assert_int_equal(dtype_size(DT_F16), 2);
	assert_int_equal(dtype_size(DT_F32), 4);
	assert_int_equal(dtype_size(DT_F64), 8);
	assert_int_equal(dtype_size(DT_F8E4M3), 1);
	assert_int_equal(dtype_size(DT_F8E5M2), 1);
	assert_int_equal(dtype_size(DT_I8), 1);
	assert_int_equal(dtype_size(DT_U8), 1);
	assert_int_equal(dtype_size(DT_I16), 2);
	assert_int_equal(dtype_size(DT_I32), 4);
	assert_int_equal(dtype_size(DT_I64), 8);
	assert_int_equal(dtype_size(DT_BOOL), 1);
	assert_int_equal(dtype_size(DT_C32), 4);
	assert_int_equal(dtype_size(DT_C64), 8);
	assert_int_equal(dtype_size(DT_C128), 16);
	assert_int_equal(dtype_size(DT_U16), 2);
	assert_int_equal(dtype_size(DT_U32), 4);
	assert_int_equal(dtype_size(DT_U64), 8);
	assert_int_equal(dtype_size(DT_NONE), 0);
	assert_int_equal(dtype_size(DT_UNKNOWN), 0);
}

static void dtype_name_names_every_dtype(void **state)
{
	int dt;

	(void)state;
	assert_string_equal(dtype_name(DT_NONE), "-");
	assert_string_equal(dtype_name(DT_BF16), "bf16");
	assert_string_equal(dtype_name(DT_F32), "fp32");
	assert_string_equal(dtype_name(DT_F16), "fp16");
	assert_string_equal(dtype_name(DT_F8E4M3), "fp8e4m3");
	assert_string_equal(dtype_name(DT_I64), "int64");
	for (dt = DT_F64; dt < DT_N; dt++)
		assert_string_not_equal(dtype_name((enum kp_dtype)dt), "unknown");
	assert_string_equal(dtype_name(DT_UNKNOWN), "unknown");
}

static void dtype_prec_maps_inputs_to_datasheet_precisions(void **state)
{
	(void)state;
	assert_int_equal(dtype_prec(DT_BF16), PREC_BF16);
	assert_int_equal(dtype_prec(DT_F16), PREC_FP16);
	assert_int_equal(dtype_prec(DT_F32), PREC_FP32); /* never tf32: the caller decides */
	assert_int_equal(dtype_prec(DT_F64), PREC_FP64);
	assert_int_equal(dtype_prec(DT_F8E4M3), PREC_FP8);
	assert_int_equal(dtype_prec(DT_F8E5M2), PREC_FP8);
	assert_int_equal(dtype_prec(DT_I8), PREC_INT8);
	assert_int_equal(dtype_prec(DT_U8), PREC_INT8);
	assert_int_equal(dtype_prec(DT_I64), PREC_NONE);
	assert_int_equal(dtype_prec(DT_BOOL), PREC_NONE);
	assert_int_equal(dtype_prec(DT_NONE), PREC_NONE);
	assert_int_equal(dtype_prec(DT_UNKNOWN), PREC_NONE);
}

static void prec_parse_inverts_prec_name(void **state)
{
	int p;

	(void)state;
	for (p = 0; p < PREC_N; p++)
		assert_int_equal(dtype_prec_parse(dtype_prec_name((enum kp_prec)p)), p);
	assert_string_equal(dtype_prec_name(PREC_TF32), "tf32");
	assert_string_equal(dtype_prec_name(PREC_FP8), "fp8");
	assert_string_equal(dtype_prec_name(PREC_NONE), "-");
	assert_int_equal(dtype_prec_parse("TF32"), PREC_TF32);
	assert_int_equal(dtype_prec_parse("fp4"), PREC_NONE);
	assert_int_equal(dtype_prec_parse(""), PREC_NONE);
	assert_int_equal(dtype_prec_parse(NULL), PREC_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dtype_parse_maps_every_kineto_tensor_type),
		cmocka_unit_test(dtype_parse_treats_scalars_lists_and_none_as_no_tensor),
		cmocka_unit_test(dtype_parse_returns_unknown_for_other_strings),
		cmocka_unit_test(dtype_parse_reads_exactly_len_bytes),
		cmocka_unit_test(dtype_from_scalar_type_follows_c10_numbering),
		cmocka_unit_test(dtype_size_gives_bytes_per_element),
		cmocka_unit_test(dtype_name_names_every_dtype),
		cmocka_unit_test(dtype_prec_maps_inputs_to_datasheet_precisions),
		cmocka_unit_test(prec_parse_inverts_prec_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
