/*
 * dtype.c — Kineto "Input type" strings and c10::ScalarType numbers -> element types and sizes.
 */
#include "kprof/dtype.h"

#include <string.h>
#include <strings.h>

/*
 * Kineto writes a tensor's caffe2::TypeMeta name: the demangled C++ type
 * (c10::BFloat16, float, long int, ...).  Non-tensors get a category name or ""
 * (doc/flops-bytes.md §4.2).  "short" and "long" are accepted as spelled in the docs.
 */
static const struct {
	const char *s;
	enum kp_dtype dt;
} type_names[] = {
	{ "", DT_NONE },
	{ "Scalar", DT_NONE },
	{ "ScalarList", DT_NONE },
	{ "TensorList", DT_NONE },
	{ "GenericList", DT_NONE },
	{ "c10::BFloat16", DT_BF16 },
	{ "c10::Half", DT_F16 },
	{ "float", DT_F32 },
	{ "double", DT_F64 },
	{ "c10::Float8_e4m3fn", DT_F8E4M3 },
	{ "c10::Float8_e4m3fnuz", DT_F8E4M3 },
	{ "c10::Float8_e5m2", DT_F8E5M2 },
	{ "c10::Float8_e5m2fnuz", DT_F8E5M2 },
	{ "signed char", DT_I8 },
	{ "unsigned char", DT_U8 },
	{ "short int", DT_I16 },
	{ "short", DT_I16 },
	{ "int", DT_I32 },
	{ "long int", DT_I64 },
	{ "long", DT_I64 },
	{ "long long int", DT_I64 },
	{ "bool", DT_BOOL },
	{ "c10::complex<float>", DT_C64 },
	{ "c10::complex<double>", DT_C128 },
	{ "c10::complex<c10::Half>", DT_C32 },
	{ "short unsigned int", DT_U16 },
	{ "unsigned int", DT_U32 },
	{ "long unsigned int", DT_U64 },
	{ "long long unsigned int", DT_U64 },
};

enum kp_dtype dtype_parse(const char *s, size_t len)
{
	size_t i;

	if (s == NULL)
		return DT_NONE;
	for (i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++) {
		if (strlen(type_names[i].s) == len && memcmp(type_names[i].s, s, len) == 0)
			return type_names[i].dt;
	}
	return DT_UNKNOWN;
}

/*
 * c10/core/ScalarType.h, AT_FORALL_SCALAR_TYPES_WITH_COMPLEX_AND_QINTS: 0 Byte,
 * 1 Char, 2 Short, 3 Int, 4 Long, 5 Half, 6 Float, 7 Double, 8 ComplexHalf,
 * 9 ComplexFloat, 10 ComplexDouble, 11 Bool, 12-14 QInt8/QUInt8/QInt32,
 * 15 BFloat16, 16-22 QUInt4x2/QUInt2x4/Bits*, 23 Float8_e5m2, 24 Float8_e4m3fn,
 * 25 Float8_e5m2fnuz, 26 Float8_e4m3fnuz, 27-29 UInt16/32/64, 30-43 UInt1-7 and
 * Int1-7, 44 Float8_e8m0fnu, 45 Float4_e2m1fn_x2.
 */
enum kp_dtype dtype_from_scalar_type(int st)
{
	static const enum kp_dtype by_number[] = {
		[0] = DT_U8,       [1] = DT_I8,       [2] = DT_I16,      [3] = DT_I32,
		[4] = DT_I64,      [5] = DT_F16,      [6] = DT_F32,      [7] = DT_F64,
		[8] = DT_C32,      [9] = DT_C64,      [10] = DT_C128,    [11] = DT_BOOL,
		[12] = DT_UNKNOWN, [13] = DT_UNKNOWN, [14] = DT_UNKNOWN, [15] = DT_BF16,
		[16] = DT_UNKNOWN, [17] = DT_UNKNOWN, [18] = DT_UNKNOWN, [19] = DT_UNKNOWN,
		[20] = DT_UNKNOWN, [21] = DT_UNKNOWN, [22] = DT_UNKNOWN, [23] = DT_F8E5M2,
		[24] = DT_F8E4M3,  [25] = DT_F8E5M2,  [26] = DT_F8E4M3,  [27] = DT_U16,
		[28] = DT_U32,     [29] = DT_U64,
	};

	if (st < 0 || st >= (int)(sizeof(by_number) / sizeof(by_number[0])))
		return DT_UNKNOWN;
	return by_number[st];
}

size_t dtype_size(enum kp_dtype dt)
{
	switch (dt) {
	case DT_F64:
	case DT_I64:
	case DT_U64:
	case DT_C64:
		return 8;
	case DT_F32:
	case DT_I32:
	case DT_U32:
	case DT_C32:
		return 4;
	case DT_F16:
	case DT_BF16:
	case DT_I16:
	case DT_U16:
		return 2;
	case DT_F8E4M3:
	case DT_F8E5M2:
	case DT_I8:
	case DT_U8:
	case DT_BOOL:
		return 1;
	case DT_C128:
		return 16;
	case DT_NONE:
	case DT_UNKNOWN:
	case DT_N:
		break;
	}
	return 0;
}

const char *dtype_name(enum kp_dtype dt)
{
	switch (dt) {
	case DT_NONE:
		return "-";
	case DT_UNKNOWN:
		return "unknown";
	case DT_F64:
		return "fp64";
	case DT_F32:
		return "fp32";
	case DT_F16:
		return "fp16";
	case DT_BF16:
		return "bf16";
	case DT_F8E4M3:
		return "fp8e4m3";
	case DT_F8E5M2:
		return "fp8e5m2";
	case DT_I8:
		return "int8";
	case DT_U8:
		return "uint8";
	case DT_I16:
		return "int16";
	case DT_I32:
		return "int32";
	case DT_I64:
		return "int64";
	case DT_BOOL:
		return "bool";
	case DT_C64:
		return "complex64";
	case DT_C128:
		return "complex128";
	case DT_U16:
		return "uint16";
	case DT_U32:
		return "uint32";
	case DT_U64:
		return "uint64";
	case DT_C32:
		return "complex32";
	case DT_N:
		break;
	}
	return "unknown";
}

/*
 * Complex math runs on the pipes of its component type (cgemm on fp32 units).
 * Wider integers and bool have no datasheet peak: PREC_NONE.
 */
enum kp_prec dtype_prec(enum kp_dtype dt)
{
	switch (dt) {
	case DT_F64:
	case DT_C128:
		return PREC_FP64;
	case DT_F32:
	case DT_C64:
		return PREC_FP32;
	case DT_F16:
	case DT_C32:
		return PREC_FP16;
	case DT_BF16:
		return PREC_BF16;
	case DT_F8E4M3:
	case DT_F8E5M2:
		return PREC_FP8;
	case DT_I8:
	case DT_U8:
		return PREC_INT8;
	default:
		return PREC_NONE;
	}
}

static const char *const prec_names[PREC_N] = {
	[PREC_FP64] = "fp64", [PREC_FP32] = "fp32", [PREC_TF32] = "tf32", [PREC_BF16] = "bf16",
	[PREC_FP16] = "fp16", [PREC_FP8] = "fp8",   [PREC_INT8] = "int8",
};

const char *dtype_prec_name(enum kp_prec p)
{
	if (p < 0 || p >= PREC_N)
		return "-";
	return prec_names[p];
}

/* Case-insensitive, so "TF32" from a command line parses too. */
enum kp_prec dtype_prec_parse(const char *s)
{
	int i;

	if (s == NULL)
		return PREC_NONE;
	for (i = 0; i < PREC_N; i++) {
		if (strcasecmp(s, prec_names[i]) == 0)
			return (enum kp_prec)i;
	}
	return PREC_NONE;
}
