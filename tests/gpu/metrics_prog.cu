// tests/gpu/metrics_prog.cu — a plain CUDA program for `kprof capture --metrics -- <cmd>` (issue 7
// (e)): one bf16 cublasGemmEx of M = N = K = 4096 and one custom kernel of known FP32 work.
// Prints "gemm M N K flops F" (2*M*N*K) and "fma_loop threads T fmas_per_thread F flops X"
// (2 FLOPs per FFMA; the kernel does nothing else in floating point).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { \
	fprintf(stderr, "%s: status %d\n", #x, (int)s_); exit(1); } } while (0)

#define FMAS 1024

// FMAS dependent FFMAs per thread on runtime operands: the compiler can neither fold nor drop them.
__global__ void fma_loop(float *y, float a, float b)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float v = y[i];
#pragma unroll 16
	for (int k = 0; k < FMAS; k++)
		v = fmaf(v, a, b);
	y[i] = v;
}

int main(void)
{
	const int M = 4096, N = 4096, K = 4096;
	const int blocks = 1024, threads = 256;
	void *a, *b, *c;
	float *y;
	CK(cudaMalloc(&a, (size_t)M * K * 2));
	CK(cudaMalloc(&b, (size_t)K * N * 2));
	CK(cudaMalloc(&c, (size_t)M * N * 2));
	CK(cudaMalloc((void **)&y, (size_t)blocks * threads * 4));
	CK(cudaMemset(a, 0, (size_t)M * K * 2));
	CK(cudaMemset(b, 0, (size_t)K * N * 2));
	CK(cudaMemset(y, 0, (size_t)blocks * threads * 4));
	cublasHandle_t h;
	CB(cublasCreate(&h));
	float one = 1.f, zero = 0.f;
	CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, a, CUDA_R_16BF, M, b,
			CUDA_R_16BF, K, &zero, c, CUDA_R_16BF, M, CUBLAS_COMPUTE_32F,
			CUBLAS_GEMM_DEFAULT));
	fma_loop<<<blocks, threads>>>(y, 0.999f, 0.001f);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	printf("gemm %d %d %d flops %lld\n", M, N, K, 2LL * M * N * K);
	printf("fma_loop threads %d fmas_per_thread %d flops %lld\n", blocks * threads, FMAS,
	       2LL * blocks * threads * FMAS);
	CB(cublasDestroy(h));
	return 0;
}
