// tests/gpu/conv_prog.cu — a plain CUDA program calling cuDNN's legacy convolution API (forward,
// backward data, backward filter) for `kprof capture -- <cmd>`; nothing of kprof linked in.
//   conv_prog [ITERS]   -> "conv N C H W K R S stride pad groups flops_per_call F", "iters I"
#include <cuda_runtime.h>
#include <cudnn.h>
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
#define CD(x)                                                                                      \
	do {                                                                                       \
		cudnnStatus_t s_ = (x);                                                            \
		if (s_ != CUDNN_STATUS_SUCCESS) {                                                  \
			fprintf(stderr, "%s: %s\n", #x, cudnnGetErrorString(s_));                  \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 2;
	const int N = 8, C = 64, H = 56, W = 56, K = 128, R = 3, S = 3, st = 2, pad = 1, g = 2;
	const int P = (H + 2 * pad - R) / st + 1, Q = (W + 2 * pad - S) / st + 1;
	cudnnHandle_t h;
	CD(cudnnCreate(&h));
	cudnnTensorDescriptor_t xd, yd;
	cudnnFilterDescriptor_t wd;
	cudnnConvolutionDescriptor_t cd;
	CD(cudnnCreateTensorDescriptor(&xd));
	CD(cudnnCreateTensorDescriptor(&yd));
	CD(cudnnCreateFilterDescriptor(&wd));
	CD(cudnnCreateConvolutionDescriptor(&cd));
	CD(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, N, C, H, W));
	CD(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW, K, C / g, R, S));
	CD(cudnnSetConvolution2dDescriptor(cd, pad, pad, st, st, 1, 1, CUDNN_CROSS_CORRELATION,
					   CUDNN_DATA_FLOAT));
	CD(cudnnSetConvolutionGroupCount(cd, g));
	CD(cudnnSetConvolutionMathType(cd, CUDNN_TENSOR_OP_MATH));
	CD(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, N, K, P, Q));
	void *x, *w, *y, *ws;
	size_t wss = 256 << 20;
	CK(cudaMalloc(&x, (size_t)N * C * H * W * 2));
	CK(cudaMalloc(&w, (size_t)K * (C / g) * R * S * 2));
	CK(cudaMalloc(&y, (size_t)N * K * P * Q * 2));
	CK(cudaMalloc(&ws, wss));
	CK(cudaMemset(x, 0, (size_t)N * C * H * W * 2));
	CK(cudaMemset(w, 0, (size_t)K * (C / g) * R * S * 2));
	CK(cudaMemset(y, 0, (size_t)N * K * P * Q * 2));
	float one = 1.f, zero = 0.f;
	for (int i = 0; i < iters; i++) {
		CD(cudnnConvolutionForward(h, &one, xd, x, wd, w, cd,
					   CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, ws,
					   wss, &zero, yd, y));
		CD(cudnnConvolutionBackwardData(h, &one, wd, w, yd, y, cd,
						CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, ws, wss, &zero,
						xd, x));
		CD(cudnnConvolutionBackwardFilter(h, &one, xd, x, yd, y, cd,
						  CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, ws, wss,
						  &zero, wd, w));
	}
	CK(cudaDeviceSynchronize());
	printf("conv %d %d %d %d %d %d %d %d %d %d flops_per_call %lld\n", N, C, H, W, K, R, S, st,
	       pad, g, 2LL * N * K * (C / g) * R * S * P * Q);
	printf("iters %d\n", iters);
	cudnnDestroy(h);
	printf("conv-prog-ok\n");
	return 0;
}
