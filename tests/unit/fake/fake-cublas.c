/*
 * fake-cublas.c — a stand-in libcublas.so.13 for test-shim.c (no GPU): the entry points
 * kprof-shim.so wraps or calls, with plain int/void* types.  cublasGemmEx returns
 * FAKE_STATUS and keeps its arguments; cublasGetProperty reports $FAKE_CUBLAS_MAJOR (13).
 */
#include <stdint.h>
#include <stdlib.h>

int fake_calls, fake_m, fake_n, fake_k;

int cublasGetProperty(int type, int *value);
int cublasGetPointerMode_v2(void *handle, int *mode);
int cublasGemmEx(void *h, int ta, int tb, int m, int n, int k, const void *alpha, const void *A,
		 int at, int lda, const void *B, int bt, int ldb, const void *beta, void *C, int ct,
		 int ldc, int compute, int algo);

int cublasGetProperty(int type, int *value)
{
	const char *e = getenv("FAKE_CUBLAS_MAJOR");
	*value = type == 0 ? (e ? atoi(e) : 13) : 0;
	return 0;
}

int cublasGetPointerMode_v2(void *handle, int *mode)
{
	(void)handle;
	*mode = 0; /* CUBLAS_POINTER_MODE_HOST */
	return 0;
}

int cublasGemmEx(void *h, int ta, int tb, int m, int n, int k, const void *alpha, const void *A,
		 int at, int lda, const void *B, int bt, int ldb, const void *beta, void *C, int ct,
		 int ldc, int compute, int algo)
{
	(void)h, (void)ta, (void)tb, (void)alpha, (void)A, (void)at, (void)lda, (void)B, (void)bt;
	(void)ldb, (void)beta, (void)C, (void)ct, (void)ldc, (void)compute, (void)algo;
	fake_calls++;
	fake_m = m, fake_n = n, fake_k = k;
	return 7; /* CUBLAS_STATUS_INVALID_VALUE: passed through as is */
}
