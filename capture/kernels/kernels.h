/*
 * kernels.h — kprof's own device kernels (capture/kernels/kernels.cu): init, bias, softmax, im2col.
 * Element types: KT_F32, KT_F16, KT_BF16.  All launch on the legacy default stream and return
 * a cudaError_t as int.
 */
#ifndef KPROF_KERNELS_H
#define KPROF_KERNELS_H

#include <stddef.h>
#include <stdint.h>

enum { KT_F32 = 0, KT_F16 = 1, KT_BF16 = 2 };

#ifdef __cplusplus
extern "C" {
#endif

/* p[i] = uniform in [-1, 1) from a hash of (seed, i), rounded to @kt. */
int kk_fill_uniform(void *p, int kt, size_t n, uint64_t seed);
/* c[m, n] = bias[n] for a row-major [M, N] matrix (addmm's broadcast before beta=1 GEMM). */
int kk_bias_rows(void *c, const void *bias, int kt, long m, long n);
/* In place over @n elements: GELU (tanh approximation) when @gelu, else ReLU. */
int kk_activation(void *c, int kt, size_t n, int gelu);
/*
 * Row softmax of fp32 scores [rows, sk] scaled by @scale, with the causal top-left mask
 * (key j allowed iff j <= i, i = row % sq) when @causal; writes P in @kt.
 */
int kk_softmax_fwd(void *p, const float *scores, int kt, long rows, long sq, long sk, float scale,
		   int causal);
/* dS = scale * P * (dP - rowsum(P * dP)), written in @kt; P in @kt, dP fp32. */
int kk_softmax_bwd(void *ds, const void *p, const float *dp, int kt, long rows, long sk,
		   float scale);
/* x [N,C,H,W] -> col [C*R*S, N*OH*OW] (row c*R*S + r*S + s, column n*OH*OW + oh*OW + ow). */
int kk_im2col(void *col, const void *x, int kt, long n, long c, long h, long w, long r, long s,
	      long oh, long ow, long stride, long pad, long dil);
/* The adjoint of kk_im2col: dx [N,C,H,W] = sum of dcol entries that read each pixel. */
int kk_col2im(void *dx, const void *dcol, int kt, long n, long c, long h, long w, long r, long s,
	      long oh, long ow, long stride, long pad, long dil);
/* out[b, a, p] = in[a, b, p] for [A, B, P] -> [B, A, P]. */
int kk_swap01(void *out, const void *in, int kt, long a, long b, long p);

#ifdef __cplusplus
}
#endif

#endif /* KPROF_KERNELS_H */
