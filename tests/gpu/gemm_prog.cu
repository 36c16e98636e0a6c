// tests/gpu/gemm_prog.cu — a plain CUDA program for `kprof capture -- <cmd>` (issue 7 (e)):
// cuBLAS and cuBLASLt GEMMs of known shapes plus a custom kernel, nothing of kprof linked in.
//   gemm_prog [ITERS] [SMALL_CALLS] [GRAPH_REPLAYS]
// Prints one "call NAME m n k batch flops" line per GEMM kind (closed form 2*m*n*k*batch), then
// times SMALL_CALLS tiny cublasGemmEx calls: "small-calls N ns_per_call X"; then captures one
// cublasGemmEx in a CUDA graph and replays it GRAPH_REPLAYS times: "graph-replays R flops F".
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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

__global__ void saxpy_custom(int n, float a, const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 3;
	int small = argc > 2 ? atoi(argv[2]) : 0;
	int replays = argc > 3 ? atoi(argv[3]) : 0;
	const int M = 1024, N = 2048, K = 512, B = 4;
	void *a, *b, *c;
	float *x, *y, *bias;
	CK(cudaMalloc(&a, (size_t)B * M * K * 4));
	CK(cudaMalloc(&b, (size_t)B * K * N * 4));
	CK(cudaMalloc(&c, (size_t)B * M * N * 4));
	CK(cudaMalloc((void **)&bias, (size_t)M * 4));
	CK(cudaMemset(a, 0, (size_t)B * M * K * 4));
	CK(cudaMemset(b, 0, (size_t)B * K * N * 4));
	CK(cudaMemset(bias, 0, (size_t)M * 4));
	CK(cudaMalloc((void **)&x, (1 << 20) * 4));
	CK(cudaMalloc((void **)&y, (1 << 20) * 4));
	cublasHandle_t h;
	CB(cublasCreate(&h));
	cublasLtHandle_t lt;
	CB(cublasLtCreate(&lt));
	float one = 1.f, zero = 0.f;
	double alpha_d = 1.0, beta_d = 0.0;
	for (int it = 0; it < iters; it++) {
		// bf16 GemmEx, beta 0: aten::mm
		CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, a, CUDA_R_16BF, M, b,
				CUDA_R_16BF, K, &zero, c, CUDA_R_16BF, M, CUBLAS_COMPUTE_32F,
				CUBLAS_GEMM_DEFAULT));
		// fp16 strided batched, beta 1: aten::baddbmm
		CB(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, M, N, K, &one, a,
					      CUDA_R_16F, K, (long long)M * K, b, CUDA_R_16F, K,
					      (long long)K * N, &one, c, CUDA_R_16F, M,
					      (long long)M * N, B, CUBLAS_COMPUTE_32F,
					      CUBLAS_GEMM_DEFAULT));
		// fp32 Sgemm (64-bit API)
		CB(cublasSgemm_v2_64(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, (float *)a, M,
				     (float *)b, K, &zero, (float *)c, M));
		// fp64 Dgemm
		CB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &alpha_d, (double *)a,
			       256, (double *)b, 256, &beta_d, (double *)c, 256));
		// the custom kernel: no model
		saxpy_custom<<<(1 << 20) / 256, 256>>>(1 << 20, 2.f, x, y);
		CK(cudaGetLastError());
		// cuBLASLt bf16 with a bias epilogue, transA = T: aten::addmm
		cublasLtMatmulDesc_t d;
		cublasLtMatrixLayout_t la, lb, lc;
		CB(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F));
		cublasOperation_t tA = CUBLAS_OP_T;
		cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
		CB(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &tA, sizeof(tA)));
		CB(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi,
						  sizeof(epi)));
		void *bp = bias;
		cudaDataType bt = CUDA_R_16BF;
		CB(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp,
						  sizeof(bp)));
		CB(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt,
						  sizeof(bt)));
		CB(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, K, M, K));
		CB(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, K, N, K));
		CB(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, M, N, M));
		CB(cublasLtMatmul(lt, d, &one, a, la, b, lb, &zero, c, lc, c, lc, NULL, NULL, 0,
				  0));
		cublasLtMatrixLayoutDestroy(la);
		cublasLtMatrixLayoutDestroy(lb);
		cublasLtMatrixLayoutDestroy(lc);
		cublasLtMatmulDescDestroy(d);
	}
	CK(cudaDeviceSynchronize());
	printf("call cublasGemmEx aten::mm %d %d %d 1 %lld\n", M, N, K, 2LL * M * N * K);
	printf("call cublasGemmStridedBatchedEx aten::baddbmm %d %d %d %d %lld\n", M, N, K, B,
	       2LL * M * N * K * B);
	printf("call cublasSgemm_v2_64 aten::mm %d %d %d 1 %lld\n", M, N, K, 2LL * M * N * K);
	printf("call cublasDgemm_v2 aten::mm 256 256 256 1 %lld\n", 2LL * 256 * 256 * 256);
	printf("call cublasLtMatmul aten::addmm %d %d %d 1 %lld\n", M, N, K, 2LL * M * N * K);
	printf("iters %d\n", iters);
	if (small > 0) {
		for (int i = 0; i < 100; i++)
			CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, &one, a,
					CUDA_R_16BF, 16, b, CUDA_R_16BF, 16, &zero, c, CUDA_R_16BF,
					16, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
		CK(cudaDeviceSynchronize());
		double t0 = now_s();
		for (int i = 0; i < small; i++)
			CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, &one, a,
					CUDA_R_16BF, 16, b, CUDA_R_16BF, 16, &zero, c, CUDA_R_16BF,
					16, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
		double t1 = now_s();
		CK(cudaDeviceSynchronize());
		double t2 = now_s();
		printf("small-calls %d host_ns_per_call %.1f total_ns_per_call %.1f\n", small,
		       (t1 - t0) * 1e9 / small, (t2 - t0) * 1e9 / small);
	}
	if (replays > 0) {
		cudaStream_t st;
		cudaGraph_t g;
		cudaGraphExec_t ge;
		CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
		CB(cublasSetStream(h, st));
		// one warm-up call on the stream, outside the capture
		CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 512, 768, 256, &one, a, CUDA_R_16BF,
				512, b, CUDA_R_16BF, 256, &zero, c, CUDA_R_16BF, 512,
				CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
		CK(cudaStreamSynchronize(st));
		CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
		CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 512, 768, 256, &one, a, CUDA_R_16BF,
				512, b, CUDA_R_16BF, 256, &zero, c, CUDA_R_16BF, 512,
				CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
		saxpy_custom<<<(1 << 20) / 256, 256, 0, st>>>(1 << 20, 2.f, x, y);
		CK(cudaStreamEndCapture(st, &g));
		CK(cudaGraphInstantiate(&ge, g, 0));
		for (int i = 0; i < replays; i++)
			CK(cudaGraphLaunch(ge, st));
		CK(cudaStreamSynchronize(st));
		printf("graph-replays %d flops %lld\n", replays, 2LL * 512 * 768 * 256);
		cudaGraphExecDestroy(ge);
		cudaGraphDestroy(g);
		CB(cublasSetStream(h, 0));
	}
	cublasLtDestroy(lt);
	cublasDestroy(h);
	printf("gemm-prog-ok\n");
	return 0;
}
