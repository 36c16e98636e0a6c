/*
 * dtype.h — tensor element types as PyTorch traces name them, and math precisions.
 */
#ifndef KPROF_DTYPE_H
#define KPROF_DTYPE_H

#include <stddef.h>

/* Element type of a tensor slot.  DT_NONE: not a tensor (Scalar, None, lists). */
enum kp_dtype {
	DT_NONE = 0,
	DT_UNKNOWN, /* a tensor of a type kprof does not know: size unknown */
	DT_F64,
	DT_F32,
	DT_F16,
	DT_BF16,
	DT_F8E4M3, /* c10::Float8_e4m3fn, _e4m3fnuz */
	DT_F8E5M2, /* c10::Float8_e5m2, _e5m2fnuz */
	DT_I8,
	DT_U8,
	DT_I16,
	DT_I32,
	DT_I64,
	DT_BOOL,
	DT_C64,  /* c10::complex<float> */
	DT_C128, /* c10::complex<double> */
	DT_U16,  /* "short unsigned int" (uint16) */
	DT_U32,  /* "unsigned int" (uint32) */
	DT_U64,  /* "long unsigned int" (uint64, e.g. philox seed/offset) */
	DT_C32,  /* c10::complex<c10::Half> */
	DT_N
};

/* Math precision classes with separate datasheet peaks (device_db). */
enum kp_prec {
	PREC_NONE = -1,
	PREC_FP64 = 0,
	PREC_FP32,
	PREC_TF32,
	PREC_BF16,
	PREC_FP16,
	PREC_FP8,
	PREC_INT8,
	PREC_N
};

/* Prototypes */
/*
 * Parse a Kineto "Input type" string ("c10::BFloat16", "c10::Half", "float",
 * "double", "long int", "int", "bool", "unsigned char", "signed char", "short int",
 * "c10::Float8_e4m3fn", "c10::complex<float>", ...).  "" / "Scalar" /
 * "ScalarList" / "TensorList" / "GenericList" -> DT_NONE; anything else DT_UNKNOWN.
 */
enum kp_dtype dtype_parse(const char *s, size_t len);
/*
 * c10::ScalarType number as written in Concrete Inputs (e.g. 15 = BFloat16);
 * DT_UNKNOWN for quantized, bit, sub-byte and out-of-range numbers.
 */
enum kp_dtype dtype_from_scalar_type(int st);
size_t dtype_size(enum kp_dtype dt);      /* bytes per element; 0 for NONE/UNKNOWN */
const char *dtype_name(enum kp_dtype dt); /* "bf16", "fp32", ... ; "-" for NONE */
/* Default math precision of an op whose inputs are @dt (fp32 -> PREC_FP32, not tf32). */
enum kp_prec dtype_prec(enum kp_dtype dt);
/* "fp64" "fp32" "tf32" "bf16" "fp16" "fp8" "int8"; dtype_prec_parse() the inverse (PREC_NONE) */
const char *dtype_prec_name(enum kp_prec p);
enum kp_prec dtype_prec_parse(const char *s);

#endif /* KPROF_DTYPE_H */
