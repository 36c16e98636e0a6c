/*
 * membound.cu — one-pass row-wise kernels (softmax, RMSNorm, LayerNorm): one block per row,
 * each thread keeps ITEMS 16-byte vectors of the row in registers (packed), so the row is read from
 * DRAM once and written once (the byte count analyze's models assume).
 */
#include "kernels.h"
#include "membound.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

template <typename T> struct vec {
	static constexpr int N = 16 / sizeof(T);
};

template <typename T> __device__ __forceinline__ void unpack(const uint4 &u, float *f);
template <> __device__ __forceinline__ void unpack<float>(const uint4 &u, float *f)
{
	f[0] = __uint_as_float(u.x), f[1] = __uint_as_float(u.y);
	f[2] = __uint_as_float(u.z), f[3] = __uint_as_float(u.w);
}
template <> __device__ __forceinline__ void unpack<__half>(const uint4 &u, float *f)
{
	const __half2 *h = (const __half2 *)&u;
	for (int i = 0; i < 4; i++) {
		float2 t = __half22float2(h[i]);
		f[2 * i] = t.x, f[2 * i + 1] = t.y;
	}
}
template <> __device__ __forceinline__ void unpack<__nv_bfloat16>(const uint4 &u, float *f)
{
	const __nv_bfloat162 *h = (const __nv_bfloat162 *)&u;
	for (int i = 0; i < 4; i++) {
		float2 t = __bfloat1622float2(h[i]);
		f[2 * i] = t.x, f[2 * i + 1] = t.y;
	}
}
template <typename T> __device__ __forceinline__ uint4 pack(const float *f);
template <> __device__ __forceinline__ uint4 pack<float>(const float *f)
{
	return make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]), __float_as_uint(f[2]),
			  __float_as_uint(f[3]));
}
template <> __device__ __forceinline__ uint4 pack<__half>(const float *f)
{
	uint4 u;
	__half2 *h = (__half2 *)&u;
	for (int i = 0; i < 4; i++)
		h[i] = __floats2half2_rn(f[2 * i], f[2 * i + 1]);
	return u;
}
template <> __device__ __forceinline__ uint4 pack<__nv_bfloat16>(const float *f)
{
	uint4 u;
	__nv_bfloat162 *h = (__nv_bfloat162 *)&u;
	for (int i = 0; i < 4; i++)
		h[i] = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
	return u;
}

/* Sum (or max) over the block; every thread gets the result.  @sh: 32 floats. */
template <bool MAX> __device__ __forceinline__ float block_reduce(float v, float *sh)
{
	for (int o = 16; o; o >>= 1) {
		float t = __shfl_xor_sync(0xffffffffu, v, o);
		v = MAX ? fmaxf(v, t) : v + t;
	}
	int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
	__syncthreads(); /* sh may still be read by the previous reduction */
	if (lane == 0)
		sh[wid] = v;
	__syncthreads();
	v = lane < nw ? sh[lane] : (MAX ? -INFINITY : 0.f);
	for (int o = 16; o; o >>= 1) {
		float t = __shfl_xor_sync(0xffffffffu, v, o);
		v = MAX ? fmaxf(v, t) : v + t;
	}
	return v;
}

/* 8 vectors a thread need more than the 64 registers of a 1024-thread bound: 512 (128) */
template <typename T, int OP, int ITEMS>
__global__ void __launch_bounds__(ITEMS == 8 ? 512 : 1024)
kprof_rowwise(T *y, const T *x, const T *w, const T *b, float *mean_out, float *rstd_out,
	      long hidden, float eps)
{
	constexpr int VE = vec<T>::N;
	__shared__ float sh[32];
	long nvec = hidden / VE;
	const uint4 *xr = (const uint4 *)(x + (size_t)blockIdx.x * hidden);
	uint4 *yr = (uint4 *)(y + (size_t)blockIdx.x * hidden);
	/* the row stays packed in registers (half the registers of fp32 for 16-bit types), so
	 * more rows are in flight per SM; every pass unpacks again */
	uint4 raw[ITEMS];
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		long j = threadIdx.x + (long)i * blockDim.x;
		raw[i] = j < nvec ? __ldcs(xr + j) : make_uint4(0, 0, 0, 0);
	}
	float a = 0.f, scale = 1.f, shift = 0.f, m = 0.f;
	if (OP == RW_SOFTMAX) {
		m = -INFINITY;
#pragma unroll
		for (int i = 0; i < ITEMS; i++) {
			float v[VE];
			unpack<T>(raw[i], v);
			if (threadIdx.x + (long)i * blockDim.x < nvec)
#pragma unroll
				for (int e = 0; e < VE; e++)
					m = fmaxf(m, v[e]);
		}
		m = block_reduce<true>(m, sh);
#pragma unroll
		for (int i = 0; i < ITEMS; i++) {
			float v[VE];
			unpack<T>(raw[i], v);
			if (threadIdx.x + (long)i * blockDim.x < nvec)
#pragma unroll
				for (int e = 0; e < VE; e++)
					a += __expf(v[e] - m);
		}
		scale = 1.f / block_reduce<false>(a, sh);
	} else if (OP == RW_RMSNORM) {
#pragma unroll
		for (int i = 0; i < ITEMS; i++) {
			float v[VE];
			unpack<T>(raw[i], v);
#pragma unroll
			for (int e = 0; e < VE; e++)
				a += v[e] * v[e];
		}
		scale = rsqrtf(block_reduce<false>(a, sh) / (float)hidden + eps);
		if (threadIdx.x == 0)
			rstd_out[blockIdx.x] = scale;
	} else {
#pragma unroll
		for (int i = 0; i < ITEMS; i++) {
			float v[VE];
			unpack<T>(raw[i], v);
#pragma unroll
			for (int e = 0; e < VE; e++)
				a += v[e];
		}
		float mu = block_reduce<false>(a, sh) / (float)hidden, q = 0.f;
#pragma unroll
		for (int i = 0; i < ITEMS; i++) {
			float v[VE];
			unpack<T>(raw[i], v);
			if (threadIdx.x + (long)i * blockDim.x < nvec)
#pragma unroll
				for (int e = 0; e < VE; e++)
					q += (v[e] - mu) * (v[e] - mu);
		}
		scale = rsqrtf(block_reduce<false>(q, sh) / (float)hidden + eps);
		shift = -mu * scale;
		if (threadIdx.x == 0)
			mean_out[blockIdx.x] = mu, rstd_out[blockIdx.x] = scale;
	}
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		long j = threadIdx.x + (long)i * blockDim.x;
		if (j >= nvec)
			continue;
		float v[VE], o[VE];
		unpack<T>(raw[i], v);
		if (OP == RW_SOFTMAX) {
#pragma unroll
			for (int e = 0; e < VE; e++)
				o[e] = __expf(v[e] - m) * scale;
		} else {
			float wf[VE], bf[VE];
			unpack<T>(__ldg((const uint4 *)w + j), wf);
			if (OP == RW_LAYERNORM)
				unpack<T>(__ldg((const uint4 *)b + j), bf);
#pragma unroll
			for (int e = 0; e < VE; e++)
				o[e] = (v[e] * scale + shift) * wf[e] + (OP == RW_LAYERNORM ? bf[e] : 0.f);
		}
		__stcs(yr + j, pack<T>(o));
	}
}

template <typename T, int OP>
static int launch(void *y, const void *x, const void *w, const void *b, float *mean, float *rstd,
		  long rows, long hidden, float eps)
{
	long nvec = hidden / vec<T>::N;
	int items = 1;
	/*
	 * Small blocks with several 16-byte vectors per thread: more rows in flight per SM.  At most
	 * 8 vectors a thread (32 registers of data, a 512-thread bound); 16 only for rows that need
	 * more than 512 threads of 8 (they spill under the 1024-thread bound).
	 */
	while (items < 8 && (nvec + items - 1) / items > 128)
		items *= 2;
	if (items == 8 && (nvec + 7) / 8 > 512)
		items = 16;
	long threads = ((nvec + items - 1) / items + 31) / 32 * 32;
	if (threads > 1024 || hidden % vec<T>::N || rows <= 0 || rows > 2147483647L)
		return (int)cudaErrorInvalidValue;
	dim3 g((unsigned)rows), blk((unsigned)threads);
#define L(I)                                                                                   \
	kprof_rowwise<T, OP, I><<<g, blk>>>((T *)y, (const T *)x, (const T *)w, (const T *)b, mean, \
					     rstd, hidden, eps)
	switch (items) {
	case 1: L(1); break;
	case 2: L(2); break;
	case 4: L(4); break;
	case 8: L(8); break;
	default: L(16); break;
	}
#undef L
	return (int)cudaGetLastError();
}

template <typename T>
static int by_op(int op, void *y, const void *x, const void *w, const void *b, float *mean,
		 float *rstd, long rows, long hidden, float eps)
{
	switch (op) {
	case RW_SOFTMAX: return launch<T, RW_SOFTMAX>(y, x, w, b, mean, rstd, rows, hidden, eps);
	case RW_RMSNORM: return launch<T, RW_RMSNORM>(y, x, w, b, mean, rstd, rows, hidden, eps);
	default: return launch<T, RW_LAYERNORM>(y, x, w, b, mean, rstd, rows, hidden, eps);
	}
}

extern "C" int kk_rowwise(int op, void *y, const void *x, const void *w, const void *b,
			  float *mean, float *rstd, int kt, long rows, long hidden, float eps)
{
	switch (kt) {
	case KT_F32: return by_op<float>(op, y, x, w, b, mean, rstd, rows, hidden, eps);
	case KT_F16: return by_op<__half>(op, y, x, w, b, mean, rstd, rows, hidden, eps);
	default: return by_op<__nv_bfloat16>(op, y, x, w, b, mean, rstd, rows, hidden, eps);
	}
}
