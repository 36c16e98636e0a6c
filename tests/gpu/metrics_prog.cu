// tests/gpu/metrics_prog.cu — a plain CUDA program for `kprof capture --metrics -- <cmd>` (issue 7
// (e)): one bf16 cublasGemmEx of M = N = K = 4096 and four custom kernels of known FP work.
// Prints "gemm M N K flops F" (2*M*N*K) and, per custom kernel,
// "kernel NAME precision P threads T flops F": F counted as kprof and ncu count FLOPs from SASS
// thread instructions, 2 per FMA and 1 per ADD or MUL instruction (a packed HFMA2 is one FMA
// instruction: fp16 FLOPs count instructions, not lanes).  Each loop's operands are runtime
// values and each step depends on the previous one, so the compiler can neither fold nor drop
// them; fadd_fmul's two FADDs outside its loop are counted in F.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                                      \
	do {                                                                                       \
		cudaError_t e_ = (x);                                                              \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                   \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)
#define CB(x)                                                                                      \
	do {                                                                                       \
		cublasStatus_t s_ = (x);                                                           \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                                                 \
			fprintf(stderr, "%s: status %d\n", #x, (int)s_);                           \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#define FMAS 1024

// FMAS dependent FFMAs per thread
__global__ void fma_loop(float *y, float a, float b)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float v = y[i];
#pragma unroll 16
	for (int k = 0; k < FMAS; k++)
		v = fmaf(v, a, b);
	y[i] = v;
}

// FMAS FADDs and FMAS FMULs per thread (the _rn intrinsics are never fused into an FFMA), plus
// the FADD of w's start and the FADD of the result: FMAS + 2 FADD, FMAS FMUL
__global__ void fadd_fmul(float *y, float a, float b)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float v = y[i], w = y[i] + 1.f;
#pragma unroll 16
	for (int k = 0; k < FMAS; k++) {
		v = __fadd_rn(v, a);
		w = __fmul_rn(w, b);
	}
	y[i] = v + w;
}

// FMAS dependent DFMAs per thread
__global__ void dfma_loop(double *y, double a, double b)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	double v = y[i];
#pragma unroll 16
	for (int k = 0; k < FMAS; k++)
		v = fma(v, a, b);
	y[i] = v;
}

// FMAS dependent packed HFMA2s per thread
__global__ void hfma2_loop(__half2 *y, __half2 a, __half2 b)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	__half2 v = y[i];
#pragma unroll 16
	for (int k = 0; k < FMAS; k++)
		v = __hfma2(v, a, b);
	y[i] = v;
}

int main(void)
{
	const int M = 4096, N = 4096, K = 4096;
	const int blocks = 1024, threads = 256;
	const long long nt = (long long)blocks * threads;
	void *a, *b, *c;
	float *y;
	double *yd;
	__half2 *yh;
	CK(cudaMalloc(&a, (size_t)M * K * 2));
	CK(cudaMalloc(&b, (size_t)K * N * 2));
	CK(cudaMalloc(&c, (size_t)M * N * 2));
	CK(cudaMalloc((void **)&y, (size_t)nt * 4));
	CK(cudaMalloc((void **)&yd, (size_t)nt * 8));
	CK(cudaMalloc((void **)&yh, (size_t)nt * 4));
	CK(cudaMemset(a, 0, (size_t)M * K * 2));
	CK(cudaMemset(b, 0, (size_t)K * N * 2));
	CK(cudaMemset(y, 0, (size_t)nt * 4));
	CK(cudaMemset(yd, 0, (size_t)nt * 8));
	CK(cudaMemset(yh, 0, (size_t)nt * 4));
	cublasHandle_t h;
	CB(cublasCreate(&h));
	float one = 1.f, zero = 0.f;
	CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, a, CUDA_R_16BF, M, b,
			CUDA_R_16BF, K, &zero, c, CUDA_R_16BF, M, CUBLAS_COMPUTE_32F,
			CUBLAS_GEMM_DEFAULT));
	fma_loop<<<blocks, threads>>>(y, 0.999f, 0.001f);
	CK(cudaGetLastError());
	fadd_fmul<<<blocks, threads>>>(y, 0.001f, 0.999f);
	CK(cudaGetLastError());
	dfma_loop<<<blocks, threads>>>(yd, 0.999, 0.001);
	CK(cudaGetLastError());
	hfma2_loop<<<blocks, threads>>>(yh, __floats2half2_rn(0.999f, 0.999f),
					__floats2half2_rn(0.001f, 0.001f));
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	printf("gemm %d %d %d flops %lld\n", M, N, K, 2LL * M * N * K);
	printf("kernel fma_loop precision fp32 threads %lld flops %lld\n", nt, 2 * nt * FMAS);
	printf("kernel fadd_fmul precision fp32 threads %lld flops %lld\n", nt,
	       nt * (FMAS + 2) + nt * FMAS);
	printf("kernel dfma_loop precision fp64 threads %lld flops %lld\n", nt, 2 * nt * FMAS);
	printf("kernel hfma2_loop precision fp16 threads %lld flops %lld\n", nt, 2 * nt * FMAS);
	CB(cublasDestroy(h));
	return 0;
}
