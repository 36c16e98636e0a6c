/*
 * ltshape.h — the GEMM shape of a cublasLtMatmul call from its descriptors' attributes
 * (doc/capture-any.md §1.5).  Pure: kprof-shim.so reads the attributes, the unit tests feed them.
 */
#ifndef KPROF_LTSHAPE_H
#define KPROF_LTSHAPE_H

#include <stdint.h>

struct kp_hcall;

/* Matrices of a cublasLtMatmul call, in argument order. */
enum { LT_A, LT_B, LT_C, LT_D };

/* What kprof-shim.so reads back with cublasLtMatmulDescGetAttribute / MatrixLayoutGetAttribute. */
struct kp_lt_attrs {
	int32_t compute;        /* CUBLASLT_MATMUL_DESC_COMPUTE_TYPE */
	int32_t scale_type;     /* CUBLASLT_MATMUL_DESC_SCALE_TYPE (cudaDataType) */
	int32_t pointer_mode;   /* CUBLASLT_MATMUL_DESC_POINTER_MODE */
	int32_t transa, transb; /* CUBLASLT_MATMUL_DESC_TRANSA / _TRANSB */
	uint32_t epilogue;      /* CUBLASLT_MATMUL_DESC_EPILOGUE */
	int32_t bias_type;      /* CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, -1 when unset (D's type) */
	uint32_t type[4];       /* CUBLASLT_MATRIX_LAYOUT_TYPE of A, B, C, D */
	uint64_t rows[4], cols[4];
	int32_t batch[4];  /* CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT */
	int has[4];        /* the layout was given (C may be NULL) */
	const void *beta;  /* the beta argument */
	int beta_readable; /* host pointer mode: *beta may be read */
};

/* Prototypes */
/*
 * Fill @c's m, n, k, batch, types, compute, transposes, epilogue, bias type and beta flags.
 * m = rows(D), n = cols(D), k = cols(op(A)); k is cross-checked against B.  Returns 0, or -1
 * when the layouts do not form a GEMM (then @c is left without a shape: m = n = k = -1).
 */
int ltshape_decode(const struct kp_lt_attrs *a, struct kp_hcall *c);
/* Bytes of a scale (alpha/beta) of cudaDataType @t, 0 when unknown. */
int ltshape_scale_size(int32_t t);
/* Whether the @size bytes at @p are all zero (a +0 beta). */
int ltshape_is_zero(const void *p, int size);

#endif /* KPROF_LTSHAPE_H */
