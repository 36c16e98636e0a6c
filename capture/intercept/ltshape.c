/*
 * ltshape.c — cublasLtMatmul descriptors -> GEMM shape (doc/capture-any.md §1.5).
 */
#include "intercept/ltshape.h"

#include <string.h>

#include "intercept/hcall.h"

#define LT_EPI_BIAS 4u    /* CUBLASLT_EPILOGUE_BIAS bit */
#define LT_PM_HOST 0      /* CUBLASLT_POINTER_MODE_HOST */
#define LT_PM_BETA_ZERO 3 /* CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO */
#define LT_PM_BETA_HOST 4 /* CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST */

int ltshape_scale_size(int32_t t)
{
	switch (t) {
	case 2:
	case 14:
		return 2; /* CUDA_R_16F, CUDA_R_16BF */
	case 0:
	case 10:
		return 4; /* CUDA_R_32F, CUDA_R_32I */
	case 1:
	case 4:
		return 8; /* CUDA_R_64F, CUDA_C_32F */
	case 5:
		return 16; /* CUDA_C_64F */
	default:
		return 0;
	}
}

int ltshape_is_zero(const void *p, int size)
{
	const unsigned char *b = p;
	if (!p || size <= 0)
		return 0;
	for (int i = 0; i < size; i++)
		if (b[i])
			return 0;
	return 1;
}

int ltshape_decode(const struct kp_lt_attrs *a, struct kp_hcall *c)
{
	c->m = c->n = c->k = -1;
	c->batch = 1;
	c->compute = a->compute;
	c->transa = a->transa;
	c->transb = a->transb;
	c->epilogue = a->epilogue;
	c->atype = (int32_t)a->type[LT_A];
	c->btype = (int32_t)a->type[LT_B];
	int d = a->has[LT_D] ? LT_D : LT_C;
	c->dtype = (int32_t)a->type[d];
	c->ctype = a->has[LT_C] ? (int32_t)a->type[LT_C] : c->dtype;
	c->bias_type = -1;
	if (a->epilogue & LT_EPI_BIAS) {
		c->flags |= HCF_BIAS;
		c->bias_type = a->bias_type >= 0 ? a->bias_type : c->dtype;
	}
	if (a->pointer_mode == LT_PM_BETA_ZERO) {
		c->flags |= HCF_BETA_KNOWN | HCF_BETA_ZERO;
	} else if ((a->pointer_mode == LT_PM_HOST || a->pointer_mode == LT_PM_BETA_HOST) &&
		   a->beta_readable && a->beta) {
		int size = ltshape_scale_size(a->scale_type);
		if (size) {
			c->flags |= HCF_BETA_KNOWN;
			if (ltshape_is_zero(a->beta, size))
				c->flags |= HCF_BETA_ZERO;
		}
	}
	if (!a->has[LT_A] || !a->has[LT_B] || !a->has[d])
		return -1;
	int64_t m = (int64_t)a->rows[d], n = (int64_t)a->cols[d];
	int64_t k = a->transa == 0 ? (int64_t)a->cols[LT_A] : (int64_t)a->rows[LT_A];
	int64_t kb = a->transb == 0 ? (int64_t)a->rows[LT_B] : (int64_t)a->cols[LT_B];
	int64_t ma = a->transa == 0 ? (int64_t)a->rows[LT_A] : (int64_t)a->cols[LT_A];
	int64_t nb = a->transb == 0 ? (int64_t)a->cols[LT_B] : (int64_t)a->rows[LT_B];
	if (m <= 0 || n <= 0 || k <= 0 || k != kb || ma != m || nb != n)
		return -1;
	int32_t b = a->batch[d] > 0 ? a->batch[d] : 1;
	c->m = m, c->n = n, c->k = k, c->batch = b;
	return 0;
}
