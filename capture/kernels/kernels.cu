/*
 * kernels.cu — kprof's own device kernels for the built-in workloads (compiled by nvcc;
 * the kprof_ prefix makes them easy to tell from cuBLAS kernels in a trace).
 */
#include "kernels/kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

template <typename T> __device__ __forceinline__ float ld(const T *p, size_t i);
template <> __device__ __forceinline__ float ld<float>(const float *p, size_t i)
{
	return p[i];
}
template <> __device__ __forceinline__ float ld<__half>(const __half *p, size_t i)
{
	return __half2float(p[i]);
}
template <> __device__ __forceinline__ float ld<__nv_bfloat16>(const __nv_bfloat16 *p, size_t i)
{
	return __bfloat162float(p[i]);
}
template <typename T> __device__ __forceinline__ void st(T *p, size_t i, float v);
template <> __device__ __forceinline__ void st<float>(float *p, size_t i, float v)
{
	p[i] = v;
}
template <> __device__ __forceinline__ void st<__half>(__half *p, size_t i, float v)
{
	p[i] = __float2half_rn(v);
}
template <> __device__ __forceinline__ void st<__nv_bfloat16>(__nv_bfloat16 *p, size_t i, float v)
{
	p[i] = __float2bfloat16_rn(v);
}

static unsigned blocks_for(size_t n, unsigned threads)
{
	size_t b = (n + threads - 1) / threads;
	return b > 65535u * 8u ? 65535u * 8u : (unsigned)(b ? b : 1);
}

/* splitmix64 of (seed, i) -> uniform [-1, 1) */
template <typename T> __global__ void kprof_fill_uniform(T *p, size_t n, uint64_t seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		uint64_t z = seed + i * 0x9E3779B97F4A7C15ull;
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
		z ^= z >> 31;
		st(p, i, (float)((double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0));
	}
}

template <typename T> __global__ void kprof_bias_rows(T *c, const T *bias, long m, long n)
{
	size_t total = (size_t)m * n;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
	     i += (size_t)gridDim.x * blockDim.x)
		c[i] = bias[i % n];
}

/*
 * In place: ReLU, or GELU with PyTorch's approximate="tanh" (what _addmm_activation applies
 * when it does not use cuBLASLt's epilogue):
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), in fp32.
 */
template <typename T> __global__ void kprof_activation(T *c, size_t n, int gelu)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float x = ld(c, i);
		st(c, i,
		   gelu ? 0.5f * x *
				   (1.f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)))
			: fmaxf(x, 0.f));
	}
}

/* one block per row; three passes over the row: max, sum of exp, write */
template <typename T>
__global__ void kprof_softmax_fwd(T *p, const float *scores, long sq, long sk, float scale,
				  int causal)
{
	__shared__ float red[32];
	long row = blockIdx.x;
	long i = row % sq;
	long lim = causal ? (i + 1 < sk ? i + 1 : sk) : sk;
	const float *x = scores + row * sk;
	float m = -INFINITY;
	for (long j = threadIdx.x; j < lim; j += blockDim.x)
		m = fmaxf(m, x[j] * scale);
	for (int o = 16; o; o >>= 1)
		m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
	if ((threadIdx.x & 31) == 0)
		red[threadIdx.x >> 5] = m;
	__syncthreads();
	if (threadIdx.x < 32) {
		m = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : -INFINITY;
		for (int o = 16; o; o >>= 1)
			m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
		if (threadIdx.x == 0)
			red[0] = m;
	}
	__syncthreads();
	m = red[0];
	__syncthreads();
	float s = 0.f;
	for (long j = threadIdx.x; j < lim; j += blockDim.x)
		s += __expf(x[j] * scale - m);
	for (int o = 16; o; o >>= 1)
		s += __shfl_xor_sync(0xffffffffu, s, o);
	if ((threadIdx.x & 31) == 0)
		red[threadIdx.x >> 5] = s;
	__syncthreads();
	if (threadIdx.x < 32) {
		s = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : 0.f;
		for (int o = 16; o; o >>= 1)
			s += __shfl_xor_sync(0xffffffffu, s, o);
		if (threadIdx.x == 0)
			red[0] = s;
	}
	__syncthreads();
	float inv = 1.f / red[0];
	T *y = p + row * sk;
	for (long j = threadIdx.x; j < sk; j += blockDim.x)
		st(y, j, j < lim ? __expf(x[j] * scale - m) * inv : 0.f);
}

template <typename T>
__global__ void kprof_softmax_bwd(T *ds, const T *p, const float *dp, long sk, float scale)
{
	__shared__ float red[32];
	long row = blockIdx.x;
	const T *pr = p + row * sk;
	const float *g = dp + row * sk;
	float s = 0.f;
	for (long j = threadIdx.x; j < sk; j += blockDim.x)
		s += ld(pr, j) * g[j];
	for (int o = 16; o; o >>= 1)
		s += __shfl_xor_sync(0xffffffffu, s, o);
	if ((threadIdx.x & 31) == 0)
		red[threadIdx.x >> 5] = s;
	__syncthreads();
	if (threadIdx.x < 32) {
		s = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : 0.f;
		for (int o = 16; o; o >>= 1)
			s += __shfl_xor_sync(0xffffffffu, s, o);
		if (threadIdx.x == 0)
			red[0] = s;
	}
	__syncthreads();
	float dot = red[0];
	T *out = ds + row * sk;
	for (long j = threadIdx.x; j < sk; j += blockDim.x) {
		float pj = ld(pr, j);
		st(out, j, scale * pj * (g[j] - dot));
	}
}

template <typename T>
__global__ void kprof_im2col(T *col, const T *x, long n, long c, long h, long w, long r, long s,
			     long oh, long ow, long stride, long pad, long dil)
{
	long np = n * oh * ow;
	size_t total = (size_t)c * r * s * np;
	for (size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x; idx < total;
	     idx += (size_t)gridDim.x * blockDim.x) {
		long q = (long)(idx % np), row = (long)(idx / np);
		long ni = q / (oh * ow), pq = q % (oh * ow), y = pq / ow, xo = pq % ow;
		long ci = row / (r * s), rs = row % (r * s), ri = rs / s, si = rs % s;
		long iy = y * stride - pad + ri * dil, ix = xo * stride - pad + si * dil;
		float v = 0.f;
		if (iy >= 0 && iy < h && ix >= 0 && ix < w)
			v = ld(x, ((size_t)(ni * c + ci) * h + iy) * w + ix);
		st(col, idx, v);
	}
}

template <typename T>
__global__ void kprof_col2im(T *dx, const T *dcol, long n, long c, long h, long w, long r, long s,
			     long oh, long ow, long stride, long pad, long dil)
{
	long np = n * oh * ow;
	size_t total = (size_t)n * c * h * w;
	for (size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x; idx < total;
	     idx += (size_t)gridDim.x * blockDim.x) {
		long ix = (long)(idx % w), iy = (long)(idx / w % h),
		     ci = (long)(idx / ((size_t)w * h) % c), ni = (long)(idx / ((size_t)w * h * c));
		float acc = 0.f;
		for (long ri = 0; ri < r; ri++) {
			long ty = iy + pad - ri * dil;
			if (ty < 0 || ty % stride)
				continue;
			long y = ty / stride;
			if (y >= oh)
				continue;
			for (long si = 0; si < s; si++) {
				long tx = ix + pad - si * dil;
				if (tx < 0 || tx % stride)
					continue;
				long xo = tx / stride;
				if (xo >= ow)
					continue;
				long row = (ci * r + ri) * s + si;
				acc += ld(dcol, (size_t)row * np + (ni * oh + y) * ow + xo);
			}
		}
		st(dx, idx, acc);
	}
}

template <typename T> __global__ void kprof_swap01(T *out, const T *in, long a, long b, long p)
{
	size_t total = (size_t)a * b * p;
	for (size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x; idx < total;
	     idx += (size_t)gridDim.x * blockDim.x) {
		long pi = (long)(idx % p), bi = (long)(idx / p % b),
		     ai = (long)(idx / ((size_t)p * b));
		out[((size_t)bi * a + ai) * p + pi] = in[idx];
	}
}

#define DISPATCH(kt, launch)                                                                       \
	do {                                                                                       \
		if ((kt) == KT_F32) {                                                              \
			typedef float T;                                                           \
			launch;                                                                    \
		} else if ((kt) == KT_F16) {                                                       \
			typedef __half T;                                                          \
			launch;                                                                    \
		} else {                                                                           \
			typedef __nv_bfloat16 T;                                                   \
			launch;                                                                    \
		}                                                                                  \
		return (int)cudaGetLastError();                                                    \
	} while (0)

extern "C" {

int kk_fill_uniform(void *p, int kt, size_t n, uint64_t seed)
{
	DISPATCH(kt, (kprof_fill_uniform<T><<<blocks_for(n, 256), 256>>>((T *)p, n, seed)));
}

int kk_bias_rows(void *c, const void *bias, int kt, long m, long n)
{
	DISPATCH(kt, (kprof_bias_rows<T>
		      <<<blocks_for((size_t)m * n, 256), 256>>>((T *)c, (const T *)bias, m, n)));
}

int kk_activation(void *c, int kt, size_t n, int gelu)
{
	DISPATCH(kt, (kprof_activation<T><<<blocks_for(n, 256), 256>>>((T *)c, n, gelu)));
}

int kk_softmax_fwd(void *p, const float *scores, int kt, long rows, long sq, long sk, float scale,
		   int causal)
{
	DISPATCH(kt, (kprof_softmax_fwd<T>
		      <<<(unsigned)rows, 256>>>((T *)p, scores, sq, sk, scale, causal)));
}

int kk_softmax_bwd(void *ds, const void *p, const float *dp, int kt, long rows, long sk,
		   float scale)
{
	DISPATCH(kt, (kprof_softmax_bwd<T>
		      <<<(unsigned)rows, 256>>>((T *)ds, (const T *)p, dp, sk, scale)));
}

int kk_im2col(void *col, const void *x, int kt, long n, long c, long h, long w, long r, long s,
	      long oh, long ow, long stride, long pad, long dil)
{
	size_t total = (size_t)c * r * s * n * oh * ow;
	DISPATCH(kt, (kprof_im2col<T><<<blocks_for(total, 256), 256>>>((T *)col, (const T *)x, n, c,
								       h, w, r, s, oh, ow, stride,
								       pad, dil)));
}

int kk_col2im(void *dx, const void *dcol, int kt, long n, long c, long h, long w, long r, long s,
	      long oh, long ow, long stride, long pad, long dil)
{
	size_t total = (size_t)n * c * h * w;
	DISPATCH(kt, (kprof_col2im<T><<<blocks_for(total, 256), 256>>>((T *)dx, (const T *)dcol, n,
								       c, h, w, r, s, oh, ow,
								       stride, pad, dil)));
}

int kk_swap01(void *out, const void *in, int kt, long a, long b, long p)
{
	DISPATCH(kt,
		 (kprof_swap01<T>
		  <<<blocks_for((size_t)a * b * p, 256), 256>>>((T *)out, (const T *)in, a, b, p)));
}

} /* extern "C" */
