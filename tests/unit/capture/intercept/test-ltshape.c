/*
 * test-ltshape.c — capture/intercept/ltshape.c without a GPU: the cublasLtMatmul descriptors of
 * a captured call -> the GEMM shape, types, bias and beta flags that analyze models.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "intercept/hcall.h"
#include "intercept/ltshape.h"

/* D[m,n] = op(A) op(B) (+ C), column-major cuBLASLt layouts, all of type @t */
static struct kp_lt_attrs gemm(int ta, int tb, uint64_t m, uint64_t n, uint64_t k, uint32_t t)
{
	struct kp_lt_attrs a;
	memset(&a, 0, sizeof(a));
	a.compute = 68; /* CUBLAS_COMPUTE_32F */
	a.scale_type = 0;
	a.transa = ta, a.transb = tb;
	a.bias_type = -1;
	for (int i = 0; i < 4; i++)
		a.type[i] = t, a.has[i] = 1;
	a.rows[LT_A] = ta ? k : m, a.cols[LT_A] = ta ? m : k;
	a.rows[LT_B] = tb ? n : k, a.cols[LT_B] = tb ? k : n;
	a.rows[LT_C] = a.rows[LT_D] = m, a.cols[LT_C] = a.cols[LT_D] = n;
	return a;
}

static void shapes_follow_the_transposes(void **state)
{
	(void)state;
	for (int ta = 0; ta < 2; ta++)
		for (int tb = 0; tb < 2; tb++) {
			struct kp_lt_attrs a = gemm(ta, tb, 4096, 1280, 8192, 14);
			struct kp_hcall c = { 0 };
			assert_int_equal(ltshape_decode(&a, &c), 0);
			assert_int_equal(c.m, 4096);
			assert_int_equal(c.n, 1280);
			assert_int_equal(c.k, 8192);
			assert_int_equal(c.batch, 1);
			assert_int_equal(c.transa, ta);
			assert_int_equal(c.transb, tb);
			assert_int_equal(c.atype, 14);
			assert_int_equal(c.dtype, 14);
			assert_int_equal(c.compute, 68);
			assert_int_equal(c.flags, 0); /* device beta, no epilogue */
		}
	/* a batched call: D's batch count */
	struct kp_lt_attrs a = gemm(0, 1, 64, 64, 128, 2);
	a.batch[LT_D] = 12;
	struct kp_hcall c = { 0 };
	assert_int_equal(ltshape_decode(&a, &c), 0);
	assert_int_equal(c.batch, 12);
}

static void c_and_d_and_mismatches(void **state)
{
	(void)state;
	/* no D layout: C's is the output; no C: ctype is D's type */
	struct kp_lt_attrs a = gemm(0, 0, 32, 48, 64, 0);
	a.has[LT_D] = 0, a.type[LT_C] = 14;
	struct kp_hcall c = { 0 };
	assert_int_equal(ltshape_decode(&a, &c), 0);
	assert_int_equal(c.m, 32);
	assert_int_equal(c.dtype, 14);
	a = gemm(0, 0, 32, 48, 64, 2);
	a.has[LT_C] = 0, a.type[LT_C] = 0;
	memset(&c, 0, sizeof(c));
	assert_int_equal(ltshape_decode(&a, &c), 0);
	assert_int_equal(c.ctype, 2);
	/* inner dimensions that disagree, or a missing operand: no shape (-1, m n k unknown) */
	a = gemm(0, 0, 32, 48, 64, 2);
	a.rows[LT_B] = 63;
	memset(&c, 0, sizeof(c));
	assert_int_equal(ltshape_decode(&a, &c), -1);
	assert_int_equal(c.m, -1);
	assert_int_equal(c.k, -1);
	a = gemm(0, 0, 32, 48, 64, 2);
	a.has[LT_A] = 0;
	assert_int_equal(ltshape_decode(&a, &c), -1);
	a = gemm(0, 0, 32, 48, 64, 2);
	a.rows[LT_D] = 0, a.rows[LT_A] = 0;
	assert_int_equal(ltshape_decode(&a, &c), -1);
}

static void bias_and_beta(void **state)
{
	(void)state;
	/* CUBLASLT_EPILOGUE_RELU_BIAS (6): bias of D's type unless its own is set */
	struct kp_lt_attrs a = gemm(0, 0, 8, 8, 8, 14);
	a.epilogue = 6;
	struct kp_hcall c = { 0 };
	assert_int_equal(ltshape_decode(&a, &c), 0);
	assert_int_equal(c.flags, HCF_BIAS);
	assert_int_equal(c.bias_type, 14);
	assert_int_equal(c.epilogue, 6);
	a.bias_type = 0;
	memset(&c, 0, sizeof(c));
	ltshape_decode(&a, &c);
	assert_int_equal(c.bias_type, 0);
	/* host beta 0.0f and 1.0f, read with the scale type's size */
	float zero = 0.0f, one = 1.0f;
	a = gemm(0, 0, 8, 8, 8, 14);
	a.beta = &zero, a.beta_readable = 1;
	memset(&c, 0, sizeof(c));
	ltshape_decode(&a, &c);
	assert_int_equal(c.flags, HCF_BETA_KNOWN | HCF_BETA_ZERO);
	assert_int_equal(c.bias_type, -1);
	a.beta = &one;
	memset(&c, 0, sizeof(c));
	ltshape_decode(&a, &c);
	assert_int_equal(c.flags, HCF_BETA_KNOWN);
	/* a device pointer (not readable) says nothing; BETA_ZERO pointer mode says zero */
	a.beta_readable = 0;
	memset(&c, 0, sizeof(c));
	ltshape_decode(&a, &c);
	assert_int_equal(c.flags, 0);
	a.pointer_mode = 3;
	memset(&c, 0, sizeof(c));
	ltshape_decode(&a, &c);
	assert_int_equal(c.flags, HCF_BETA_KNOWN | HCF_BETA_ZERO);
	/* an unknown scale type: beta is not read */
	a = gemm(0, 0, 8, 8, 8, 14);
	a.scale_type = 99, a.beta = &zero, a.beta_readable = 1;
	memset(&c, 0, sizeof(c));
	ltshape_decode(&a, &c);
	assert_int_equal(c.flags, 0);
}

static void scale_sizes(void **state)
{
	(void)state;
	assert_int_equal(ltshape_scale_size(2), 2);  /* CUDA_R_16F */
	assert_int_equal(ltshape_scale_size(14), 2); /* CUDA_R_16BF */
	assert_int_equal(ltshape_scale_size(0), 4);  /* CUDA_R_32F */
	assert_int_equal(ltshape_scale_size(1), 8);  /* CUDA_R_64F */
	assert_int_equal(ltshape_scale_size(5), 16); /* CUDA_C_64F */
	assert_int_equal(ltshape_scale_size(3), 0);  /* CUDA_R_8I: not a scale type */
	double d0 = 0.0, dneg = -0.0;
	unsigned char bytes[16] = { 0 };
	assert_int_equal(ltshape_is_zero(&d0, 8), 1);
	assert_int_equal(ltshape_is_zero(&dneg, 8), 0); /* -0.0: bits set, treated as read C */
	assert_int_equal(ltshape_is_zero(bytes, 16), 1);
	bytes[15] = 1;
	assert_int_equal(ltshape_is_zero(bytes, 16), 0);
	assert_int_equal(ltshape_is_zero(NULL, 4), 0);
	assert_int_equal(ltshape_is_zero(bytes, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shapes_follow_the_transposes),
		cmocka_unit_test(c_and_d_and_mismatches),
		cmocka_unit_test(bias_and_beta),
		cmocka_unit_test(scale_sizes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
