/*
 * membound.cu — row-wise kernels (softmax, RMSNorm, LayerNorm, cross-entropy): one block per row,
 * each thread keeps ITEMS 16-byte vectors of the row in registers (packed), so the row is read from
 * DRAM once and written once (the byte count analyze's models assume).  Rows too long for that
 * are read twice by their block, the second time from L2 (kprof_rowwise_l2), or staged through
 * shared memory by persistent blocks (kprof_norm_bwd_pipe); DRAM still sees one read.
 */
#include "kernels/kernels.h"
#include "kernels/membound.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>
#include <type_traits>

/*
 * The row a kernel reads and writes for its row @r.  bench/membound-variants.cu builds with it
 * wrapped to a few rows, so that the data stays in L2 and a kernel's own limit shows (what it
 * could stream from a faster DRAM, e.g. the H200's).
 */
#ifndef MB_ROW
#define MB_ROW(r) (r)
#endif

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

#define L2E 1.4426950408889634f

/* 2^x with the SFU (ex2.approx, flush-to-zero): one MUFU op, what __expf uses after its FMUL. */
__device__ __forceinline__ float ex2(float x)
{
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
}

/* Combine two (max, sum of exp(x - max)) pairs. */
__device__ __forceinline__ void ms_combine(float &m, float &s, float m2, float s2)
{
	float n = fmaxf(m, m2);
	if (n == -INFINITY)
		return;
	s = s * ex2((m - n) * L2E) + s2 * ex2((m2 - n) * L2E);
	m = n;
}

/* The (max, sum-exp) pair over the block; every thread gets it.  @sh: 64 floats. */
__device__ __forceinline__ void block_reduce_ms(float &m, float &s, float *sh)
{
	for (int o = 16; o; o >>= 1)
		ms_combine(m, s, __shfl_xor_sync(0xffffffffu, m, o),
			   __shfl_xor_sync(0xffffffffu, s, o));
	int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
	__syncthreads();
	if (lane == 0)
		sh[wid] = m, sh[32 + wid] = s;
	__syncthreads();
	m = lane < nw ? sh[lane] : -INFINITY;
	s = lane < nw ? sh[32 + lane] : 0.f;
	for (int o = 16; o; o >>= 1)
		ms_combine(m, s, __shfl_xor_sync(0xffffffffu, m, o),
			   __shfl_xor_sync(0xffffffffu, s, o));
}

/* Two sums over the block at once; @sh: 64 floats. */
__device__ __forceinline__ void block_reduce2(float &a, float &b, float *sh)
{
	for (int o = 16; o; o >>= 1) {
		a += __shfl_xor_sync(0xffffffffu, a, o);
		b += __shfl_xor_sync(0xffffffffu, b, o);
	}
	int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
	__syncthreads();
	if (lane == 0)
		sh[wid] = a, sh[32 + wid] = b;
	__syncthreads();
	a = lane < nw ? sh[lane] : 0.f;
	b = lane < nw ? sh[32 + lane] : 0.f;
	for (int o = 16; o; o >>= 1) {
		a += __shfl_xor_sync(0xffffffffu, a, o);
		b += __shfl_xor_sync(0xffffffffu, b, o);
	}
}

/* A norm's output vector from x (@raw), w (@wv) and b (@bv): (x * @scale + @shift) * w (+ b) */
template <typename T, int OP>
__device__ __forceinline__ uint4 norm_out(const uint4 &raw, const uint4 &wv, const uint4 &bv,
					  float scale, float shift)
{
	constexpr int VE = vec<T>::N;
	float v[VE], o[VE], wf[VE], bf[VE];
	unpack<T>(raw, v);
	unpack<T>(wv, wf);
	if (OP == RW_LAYERNORM)
		unpack<T>(bv, bf);
#pragma unroll
	for (int e = 0; e < VE; e++)
		o[e] = (v[e] * scale + shift) * wf[e] + (OP == RW_LAYERNORM ? bf[e] : 0.f);
	return pack<T>(o);
}

/*
 * One output vector @j of a row: softmax exp(x - max) * @scale (@ml: max * log2 e), the norms
 * (x * @scale + @shift) * w (+ b), @scale the rstd and @shift -mean * rstd.
 */
template <typename T, int OP>
__device__ __forceinline__ uint4 vec_out(const uint4 &raw, long j, const T *w, const T *b, float ml,
					 float scale, float shift)
{
	constexpr int VE = vec<T>::N;
	if (OP == RW_SOFTMAX) {
		float v[VE], o[VE];
		unpack<T>(raw, v);
#pragma unroll
		for (int e = 0; e < VE; e++)
			o[e] = ex2(fmaf(v[e], L2E, -ml)) * scale;
		return pack<T>(o);
	}
	return norm_out<T, OP>(raw, __ldg((const uint4 *)w + j),
			       OP == RW_LAYERNORM ? __ldg((const uint4 *)b + j) : make_uint4(0, 0, 0, 0),
			       scale, shift);
}

/* Softmax: per thread a max, then a sum of exp over its own elements; one (max, sum) reduction. */
template <typename T, int ITEMS>
__device__ __forceinline__ void softmax_stats(const uint4 *raw, long nvec, float *sh, float &m,
					      float &scale)
{
	constexpr int VE = vec<T>::N;
	float a = 0.f;
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
	float ml = m * L2E;
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		float v[VE];
		unpack<T>(raw[i], v);
		if (threadIdx.x + (long)i * blockDim.x < nvec)
#pragma unroll
			for (int e = 0; e < VE; e++)
				a += ex2(fmaf(v[e], L2E, -ml));
	}
	block_reduce_ms(m, a, sh);
	scale = 1.f / a;
}

/* RMSNorm: rstd = 1 / sqrt(mean(x^2) + eps) (padding vectors are zeros) */
template <typename T, int ITEMS>
__device__ __forceinline__ float rms_stats(const uint4 *raw, long hidden, float eps, float *sh)
{
	constexpr int VE = vec<T>::N;
	float a = 0.f;
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		float v[VE];
		unpack<T>(raw[i], v);
#pragma unroll
		for (int e = 0; e < VE; e++)
			a += v[e] * v[e];
	}
	return rsqrtf(block_reduce<false>(a, sh) / (float)hidden + eps);
}

/* LayerNorm: the mean, then the variance about it from the registers (two reductions) */
template <typename T, int ITEMS>
__device__ __forceinline__ void ln_stats(const uint4 *raw, long nvec, long hidden, float eps,
					 float *sh, float &mu, float &rstd)
{
	constexpr int VE = vec<T>::N;
	float a = 0.f, q = 0.f;
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		float v[VE];
		unpack<T>(raw[i], v);
#pragma unroll
		for (int e = 0; e < VE; e++)
			a += v[e];
	}
	mu = block_reduce<false>(a, sh) / (float)hidden;
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		float v[VE];
		unpack<T>(raw[i], v);
		if (threadIdx.x + (long)i * blockDim.x < nvec)
#pragma unroll
			for (int e = 0; e < VE; e++)
				q += (v[e] - mu) * (v[e] - mu);
	}
	rstd = rsqrtf(block_reduce<false>(q, sh) / (float)hidden + eps);
}

/*
 * One row @r of the forward from its vectors in @raw (packed: half the registers of fp32 for
 * 16-bit types, so more rows are in flight per SM; every pass unpacks again): the row's
 * statistics, then each vector out through vec_out.
 */
template <typename T, int OP, int ITEMS>
__device__ __forceinline__ void rowwise_row(const uint4 *raw, long r, T *y, const T *w, const T *b,
					    float *mean_out, float *rstd_out, long hidden,
					    float eps, float *sh)
{
	long nvec = hidden / vec<T>::N;
	uint4 *yr = (uint4 *)(y + (size_t)MB_ROW(r) * hidden);
	float m = 0.f, scale, shift = 0.f;
	if constexpr (OP == RW_SOFTMAX) {
		softmax_stats<T, ITEMS>(raw, nvec, sh, m, scale);
	} else if constexpr (OP == RW_RMSNORM) {
		scale = rms_stats<T, ITEMS>(raw, hidden, eps, sh);
		if (threadIdx.x == 0)
			rstd_out[r] = scale;
	} else {
		float mu;
		ln_stats<T, ITEMS>(raw, nvec, hidden, eps, sh, mu, scale);
		shift = -mu * scale;
		if (threadIdx.x == 0)
			mean_out[r] = mu, rstd_out[r] = scale;
	}
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		long j = threadIdx.x + (long)i * blockDim.x;
		if (j < nvec)
			__stcs(yr + j, vec_out<T, OP>(raw[i], j, w, b, m * L2E, scale, shift));
	}
}

/*
 * 8 vectors a thread need more than the 64 registers of a 1024-thread bound: 512 (128), one
 * block an SM asked for (bf16 8192x32768 RMSNorm: H100 89.4% instead of 88.5, H200 81.8
 * instead of 79.1: ptxas's own choice left less room to the loads in flight)
 */
template <typename T, int OP, int ITEMS>
__global__ void __launch_bounds__(ITEMS == 8 ? 512 : 1024, 1)
	kprof_rowwise(T *y, const T *x, const T *w, const T *b, float *mean_out, float *rstd_out,
		      long hidden, float eps)
{
	__shared__ float sh[64];
	long nvec = hidden / vec<T>::N;
	const uint4 *xr = (const uint4 *)(x + (size_t)MB_ROW(blockIdx.x) * hidden);
	uint4 raw[ITEMS];
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		long j = threadIdx.x + (long)i * blockDim.x;
		raw[i] = j < nvec ? __ldcs(xr + j) : make_uint4(0, 0, 0, 0);
	}
	rowwise_row<T, OP, ITEMS>(raw, blockIdx.x, y, w, b, mean_out, rstd_out, hidden, eps, sh);
}

/*
 * Per-thread statistics of one 16-byte vector @raw for a streaming pass (kprof_rowwise_l2's
 * first, the cross-entropy forward): softmax an online (max @m, sum of exp @a); the norms sums
 * of x - @k and its square (@a, @q), @k the row's first element, so that the variance loses no
 * digits to a large mean.
 */
template <typename T, int OP>
__device__ __forceinline__ void vec_stats(const uint4 &raw, float k, float &m, float &a, float &q)
{
	constexpr int VE = vec<T>::N;
	float v[VE];
	unpack<T>(raw, v);
	if constexpr (OP == RW_SOFTMAX) {
		float mv = v[0];
#pragma unroll
		for (int e = 1; e < VE; e++)
			mv = fmaxf(mv, v[e]);
		if (mv > m) {
			a *= ex2((m - mv) * L2E);
			m = mv;
		}
		float ml = m * L2E;
#pragma unroll
		for (int e = 0; e < VE; e++)
			a += ex2(fmaf(v[e], L2E, -ml));
	} else {
#pragma unroll
		for (int e = 0; e < VE; e++) {
			float d = v[e] - k;
			a += d, q += d * d;
		}
	}
}

/*
 * Rows too long for registers (over 2048 vectors; RMSNorm over 4096): one block of NT threads a
 * row streams it twice, U vectors a thread in flight: the first pass reduces (L2-allocating
 * loads), the second reads the row back from L2 (the block read it a few microseconds before)
 * and writes.  Few registers, so the reduction of one row overlaps other rows' loads; DRAM
 * still sees one read and one write.  H100, bf16 8192x32768: softmax 88.0% of the DRAM peak
 * instead of 80.7% (the prefetching register kernel it replaces), LayerNorm 87.1 instead of
 * 80.6; 4096x65536: 73-78% instead of 13-21% (16 vectors a thread spilled).  kprof launches it
 * with NT 1024, U 2 (bench/membound-variants.cu measures others).
 */
template <typename T, int OP, int NT, int U>
__global__ void __launch_bounds__(NT)
	kprof_rowwise_l2(T *y, const T *x, const T *w, const T *b, float *mean_out, float *rstd_out,
			 long hidden, float eps)
{
	__shared__ float sh[64];
	long nvec = hidden / vec<T>::N, r = blockIdx.x;
	const uint4 *xr = (const uint4 *)(x + (size_t)MB_ROW(r) * hidden);
	float m = -INFINITY, a = 0.f, q = 0.f,
	      k = OP == RW_LAYERNORM ? (float)x[(size_t)MB_ROW(r) * hidden] : 0.f;
	for (long base = threadIdx.x; base < nvec; base += (long)U * NT) {
		uint4 raw[U];
#pragma unroll
		for (int u = 0; u < U; u++) {
			long j = base + (long)u * NT;
			raw[u] = j < nvec ? __ldcg(xr + j) : make_uint4(0, 0, 0, 0);
		}
#pragma unroll
		for (int u = 0; u < U; u++)
			if (base + (long)u * NT < nvec)
				vec_stats<T, OP>(raw[u], k, m, a, q);
	}
	float scale, shift = 0.f, inv = 1.f / (float)hidden;
	if (OP == RW_SOFTMAX) {
		block_reduce_ms(m, a, sh);
		scale = 1.f / a;
	} else if (OP == RW_RMSNORM) {
		scale = rsqrtf(block_reduce<false>(q, sh) * inv + eps);
		if (threadIdx.x == 0)
			rstd_out[r] = scale;
	} else {
		block_reduce2(a, q, sh);
		float md = a * inv, mu = k + md;
		scale = rsqrtf(fmaxf(q * inv - md * md, 0.f) + eps), shift = -mu * scale;
		if (threadIdx.x == 0)
			mean_out[r] = mu, rstd_out[r] = scale;
	}
	uint4 *yr = (uint4 *)(y + (size_t)MB_ROW(r) * hidden);
	for (long base = threadIdx.x; base < nvec; base += (long)U * NT) {
		uint4 raw[U];
#pragma unroll
		for (int u = 0; u < U; u++) {
			long j = base + (long)u * NT;
			raw[u] = j < nvec ? __ldcs(xr + j) : make_uint4(0, 0, 0, 0);
		}
#pragma unroll
		for (int u = 0; u < U; u++) {
			long j = base + (long)u * NT;
			if (j < nvec)
				__stcs(yr + j,
				       vec_out<T, OP>(raw[u], j, w, b, m * L2E, scale, shift));
		}
	}
}

/* @a + sum of y dy over one vector of each (the softmax backward's row sum) */
template <typename T>
__device__ __forceinline__ float sm_dot(const uint4 &y, const uint4 &dy, float a)
{
	constexpr int VE = vec<T>::N;
	float p[VE], g[VE];
	unpack<T>(y, p);
	unpack<T>(dy, g);
#pragma unroll
	for (int e = 0; e < VE; e++)
		a += p[e] * g[e];
	return a;
}

/* one vector of dx = y (dy - @a) */
template <typename T>
__device__ __forceinline__ uint4 sm_grad(const uint4 &y, const uint4 &dy, float a)
{
	constexpr int VE = vec<T>::N;
	float p[VE], g[VE], o[VE];
	unpack<T>(y, p);
	unpack<T>(dy, g);
#pragma unroll
	for (int e = 0; e < VE; e++)
		o[e] = p[e] * (g[e] - a);
	return pack<T>(o);
}

/*
 * Softmax backward of rows of 2049-4096 vectors: two passes as kprof_rowwise_l2, 1024 threads
 * of 2 vectors of y and dy (H100, bf16 8192x32768: 90.3% of the DRAM peak instead of the
 * cluster pipeline's 83.3%).
 */
template <typename T, int NT, int U>
__global__ void __launch_bounds__(NT)
	kprof_softmax_bwd_l2(T *dx, const T *y, const T *dy, long hidden)
{
	constexpr int VE = vec<T>::N;
	__shared__ float sh[64];
	long nvec = hidden / VE;
	size_t off = (size_t)MB_ROW(blockIdx.x) * hidden;
	const uint4 *yr = (const uint4 *)(y + off), *dr = (const uint4 *)(dy + off);
	float a = 0.f, unused = 0.f;
	for (long base = threadIdx.x; base < nvec; base += (long)U * NT) {
		uint4 ry[U], rd[U];
#pragma unroll
		for (int u = 0; u < U; u++) {
			long j = base + (long)u * NT;
			ry[u] = j < nvec ? __ldcg(yr + j) : make_uint4(0, 0, 0, 0);
			rd[u] = j < nvec ? __ldcg(dr + j) : make_uint4(0, 0, 0, 0);
		}
#pragma unroll
		for (int u = 0; u < U; u++)
			a = sm_dot<T>(ry[u], rd[u], a);
	}
	block_reduce2(a, unused, sh);
	uint4 *xr = (uint4 *)(dx + off);
	for (long base = threadIdx.x; base < nvec; base += (long)U * NT) {
		uint4 ry[U], rd[U];
#pragma unroll
		for (int u = 0; u < U; u++) {
			long j = base + (long)u * NT;
			ry[u] = j < nvec ? __ldcs(yr + j) : make_uint4(0, 0, 0, 0);
			rd[u] = j < nvec ? __ldcs(dr + j) : make_uint4(0, 0, 0, 0);
		}
#pragma unroll
		for (int u = 0; u < U; u++) {
			long j = base + (long)u * NT;
			if (j >= nvec)
				break;
			__stcs(xr + j, sm_grad<T>(ry[u], rd[u], a));
		}
	}
}

/* dx = y * (dy - sum(y * dy)) per row; y and dy stay in registers (one read each). */
template <typename T, int ITEMS>
__global__ void __launch_bounds__(1024)
	kprof_softmax_bwd(T *dx, const T *y, const T *dy, long hidden)
{
	constexpr int VE = vec<T>::N;
	__shared__ float sh[64];
	long nvec = hidden / VE;
	size_t off = (size_t)MB_ROW(blockIdx.x) * hidden;
	const uint4 *yr = (const uint4 *)(y + off), *dr = (const uint4 *)(dy + off);
	uint4 ry[ITEMS], rd[ITEMS];
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		long j = threadIdx.x + (long)i * blockDim.x;
		ry[i] = j < nvec ? __ldcs(yr + j) : make_uint4(0, 0, 0, 0);
		rd[i] = j < nvec ? __ldcs(dr + j) : make_uint4(0, 0, 0, 0);
	}
	float a = 0.f, unused = 0.f;
#pragma unroll
	for (int i = 0; i < ITEMS; i++)
		a = sm_dot<T>(ry[i], rd[i], a);
	block_reduce2(a, unused, sh);
	uint4 *xr = (uint4 *)(dx + off);
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		long j = threadIdx.x + (long)i * blockDim.x;
		if (j >= nvec)
			continue;
		__stcs(xr + j, sm_grad<T>(ry[i], rd[i], a));
	}
}

/*
 * RMSNorm / LayerNorm backward.  ACC: a persistent grid, one block per row at a time; x and dy
 * of the row in registers (the next row's loaded while this one is reduced and written, for
 * up to 2 vectors a thread), weight re-read from L1/L2 per row; dw (and db) accumulate per
 * thread in fp32 over the block's rows and go out as one fp32 partial row per block (@pw,
 * @pb: [grid, hidden]), summed by kprof_colsum.  !ACC (rows too long for the accumulators in
 * registers): one block per row (grid = rows), dx only; kprof_norm_wgrad then reads dy and x
 * once more.
 *   rms:   xh = x r, g = w dy, dx = r (g - xh mean(g xh)), dw += dy xh
 *   layer: xh = (x - mu) r, dx = r (g - mean(g) - xh mean(g xh)), dw += dy xh, db += dy
 */
/* This thread's vectors of row offset @off of x and dy (zeros past the row's @nvec). */
template <typename T, int ITEMS>
__device__ __forceinline__ void load_row(uint4 (&rx)[ITEMS], uint4 (&rd)[ITEMS], const T *x,
					 const T *dy, size_t off, long nvec)
{
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		long j = threadIdx.x + (long)i * blockDim.x;
		rx[i] = j < nvec ? __ldcs((const uint4 *)(x + off) + j) : make_uint4(0, 0, 0, 0);
		rd[i] = j < nvec ? __ldcs((const uint4 *)(dy + off) + j) : make_uint4(0, 0, 0, 0);
	}
}

/* This thread's sums of g = w dy and g xh over its vectors of the row. */
template <typename T, int ITEMS>
__device__ __forceinline__ void norm_row_sums(const uint4 (&rx)[ITEMS], const uint4 (&rd)[ITEMS],
					      const T *w, long nvec, float rs, float mu, float &sg,
					      float &sgx)
{
	constexpr int VE = vec<T>::N;
	sg = 0.f, sgx = 0.f;
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		long j = threadIdx.x + (long)i * blockDim.x;
		if (j >= nvec)
			continue;
		float xv[VE], dv[VE], wv[VE];
		unpack<T>(rx[i], xv);
		unpack<T>(rd[i], dv);
		unpack<T>(__ldg((const uint4 *)w + j), wv);
#pragma unroll
		for (int e = 0; e < VE; e++) {
			float g = wv[e] * dv[e], xh = (xv[e] - mu) * rs;
			sg += g, sgx += g * xh;
		}
	}
}

/* dx of the row at @outr from the block's (@a, @c); with ACC, dw (and db) add up per thread */
template <typename T, int OP, int ITEMS, bool ACC, int AI, int BI>
__device__ __forceinline__ void
norm_row_finish(const uint4 (&rx)[ITEMS], const uint4 (&rd)[ITEMS], const T *w, uint4 *outr,
		long nvec, float rs, float mu, float a, float c, float (&dw)[AI][vec<T>::N],
		float (&db)[BI][vec<T>::N])
{
	constexpr int VE = vec<T>::N;
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		long j = threadIdx.x + (long)i * blockDim.x;
		if (j >= nvec)
			continue;
		float xv[VE], dv[VE], wv[VE], o[VE];
		unpack<T>(rx[i], xv);
		unpack<T>(rd[i], dv);
		unpack<T>(__ldg((const uint4 *)w + j), wv);
#pragma unroll
		for (int e = 0; e < VE; e++) {
			float xh = (xv[e] - mu) * rs;
			o[e] = rs * (wv[e] * dv[e] - a - xh * c);
			if (ACC) {
				dw[ACC ? i : 0][e] += dv[e] * xh;
				if (OP == RW_LAYERNORM)
					db[ACC && OP == RW_LAYERNORM ? i : 0][e] += dv[e];
			}
		}
		__stcs(outr + j, pack<T>(o));
	}
}

/* The block's partial rows of dw (and db) at row blockIdx.x of @pw (@pb) */
template <typename T, int OP, bool ACC, int AI, int BI>
__device__ __forceinline__ void norm_partials(float *pw, float *pb, long hidden, long nvec,
					      const float (&dw)[AI][vec<T>::N],
					      const float (&db)[BI][vec<T>::N])
{
	constexpr int VE = vec<T>::N;
#pragma unroll
	for (int i = 0; i < AI; i++) {
		long j = threadIdx.x + (long)i * blockDim.x;
		if (!ACC || j >= nvec)
			continue;
		float4 *p = (float4 *)(pw + (size_t)blockIdx.x * hidden + j * VE);
#pragma unroll
		for (int e = 0; e < VE; e += 4)
			p[e / 4] = make_float4(dw[i][e], dw[i][e + 1], dw[i][e + 2], dw[i][e + 3]);
		if (OP == RW_LAYERNORM) {
			float4 *q = (float4 *)(pb + (size_t)blockIdx.x * hidden + j * VE);
#pragma unroll
			for (int e = 0; e < VE; e += 4)
				q[e / 4] = make_float4(db[BI > 1 ? i : 0][e],
						       db[BI > 1 ? i : 0][e + 1],
						       db[BI > 1 ? i : 0][e + 2],
						       db[BI > 1 ? i : 0][e + 3]);
		}
	}
}

template <typename T, int OP, int ITEMS, bool ACC>
__global__ void __launch_bounds__(1024)
	kprof_norm_bwd(T *dx, float *pw, float *pb, const T *dy, const T *x, const float *mean,
		       const float *rstd, const T *w, long rows, long hidden)
{
	constexpr int VE = vec<T>::N, AI = ACC ? ITEMS : 1,
		      BI = ACC && OP == RW_LAYERNORM ? ITEMS : 1;
	/* measured on H200: prefetching gains RMSNorm 2-4% and costs LayerNorm 3-4% */
	constexpr bool PF = ACC && ITEMS <= 2 && OP == RW_RMSNORM;
	__shared__ float sh[64];
	long nvec = hidden / VE;
	float dw[AI][VE], db[BI][VE];
#pragma unroll
	for (int i = 0; i < AI; i++)
#pragma unroll
		for (int e = 0; e < VE; e++)
			dw[i][e] = 0.f;
#pragma unroll
	for (int i = 0; i < BI; i++)
#pragma unroll
		for (int e = 0; e < VE; e++)
			db[i][e] = 0.f;
	float inv_h = 1.f / (float)hidden;
	uint4 rx[ITEMS], rd[ITEMS], nx[ITEMS], nd[ITEMS];
	(void)nx, (void)nd; /* PF only */
	for (long r = blockIdx.x; r < rows; r += gridDim.x) {
		size_t off = (size_t)r * hidden;
		long rn = r + gridDim.x;
		if (!PF || r == (long)blockIdx.x)
			load_row<T, ITEMS>(rx, rd, x, dy, off, nvec);
		if constexpr (PF)
			if (rn < rows)
				load_row<T, ITEMS>(nx, nd, x, dy, (size_t)rn * hidden, nvec);
		float rs = __ldg(rstd + r), mu = OP == RW_LAYERNORM ? __ldg(mean + r) : 0.f;
		float sg, sgx;
		norm_row_sums<T, ITEMS>(rx, rd, w, nvec, rs, mu, sg, sgx);
		block_reduce2(sg, sgx, sh);
		float a = OP == RW_LAYERNORM ? sg * inv_h : 0.f, c = sgx * inv_h;
		norm_row_finish<T, OP, ITEMS, ACC, AI, BI>(rx, rd, w, (uint4 *)(dx + off), nvec, rs,
							   mu, a, c, dw, db);
		if constexpr (PF) {
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
				rx[i] = nx[i], rd[i] = nd[i];
		}
	}
	norm_partials<T, OP, ACC, AI, BI>(pw, pb, hidden, nvec, dw, db);
}

/*
 * dw (and db) of rows too long for kprof_norm_bwd's accumulators: a block is 32 vectors of
 * columns x 8 warps over the rows [blockIdx.y * @per, +@per); per thread fp32 sums of one
 * vector's columns, summed over the warps in shared memory into one partial row per blockIdx.y
 * (@pw, @pb: [gridDim.y, hidden]) for kprof_colsum.
 */
template <typename T, int OP>
__global__ void __launch_bounds__(256)
	kprof_norm_wgrad(float *pw, float *pb, const T *dy, const T *x, const float *mean,
			 const float *rstd, long rows, long hidden, long per)
{
	constexpr int VE = vec<T>::N, U = 4;
	__shared__ float sw[8][32][VE + 1], sb[OP == RW_LAYERNORM ? 8 : 1][32][VE + 1];
	long nvec = hidden / VE, j = (long)blockIdx.x * 32 + (threadIdx.x & 31);
	int g = threadIdx.x >> 5;
	long r0 = (long)blockIdx.y * per, r1 = r0 + per < rows ? r0 + per : rows;
	float aw[VE], ab[VE];
#pragma unroll
	for (int e = 0; e < VE; e++)
		aw[e] = ab[e] = 0.f;
	if (j < nvec)
		for (long r = r0 + g; r < r1; r += 8 * U) {
			uint4 rx[U], rd[U];
#pragma unroll
			for (int u = 0; u < U; u++) {
				long rr = r + 8L * u;
				rx[u] = rr < r1 ? __ldcs((const uint4 *)(x + (size_t)rr * hidden) +
							 j)
						: make_uint4(0, 0, 0, 0);
				rd[u] = rr < r1 ? __ldcs((const uint4 *)(dy + (size_t)rr * hidden) +
							 j)
						: make_uint4(0, 0, 0, 0);
			}
#pragma unroll
			for (int u = 0; u < U; u++) {
				long rr = r + 8L * u;
				if (rr >= r1)
					break;
				float xv[VE], dv[VE];
				unpack<T>(rx[u], xv);
				unpack<T>(rd[u], dv);
				float rs = __ldg(rstd + rr),
				      mu = OP == RW_LAYERNORM ? __ldg(mean + rr) : 0.f;
#pragma unroll
				for (int e = 0; e < VE; e++) {
					aw[e] += dv[e] * ((xv[e] - mu) * rs);
					ab[e] += dv[e];
				}
			}
		}
	int lane = threadIdx.x & 31;
#pragma unroll
	for (int e = 0; e < VE; e++) {
		sw[g][lane][e] = aw[e];
		if (OP == RW_LAYERNORM)
			sb[OP == RW_LAYERNORM ? g : 0][lane][e] = ab[e];
	}
	__syncthreads();
	if (g == 0 && j < nvec) {
		float *ow = pw + (size_t)blockIdx.y * hidden + j * VE;
		float *ob = pb + (size_t)blockIdx.y * hidden + j * VE;
#pragma unroll
		for (int e = 0; e < VE; e++) {
			float s = 0.f, t = 0.f;
			for (int k = 0; k < 8; k++) {
				s += sw[k][lane][e];
				if (OP == RW_LAYERNORM)
					t += sb[OP == RW_LAYERNORM ? k : 0][lane][e];
			}
			ow[e] = s;
			if (OP == RW_LAYERNORM)
				ob[e] = t;
		}
	}
}

/*
 * RMSNorm / LayerNorm backward, pipelined (rows of at least 512 vectors, sm_80 and newer): a
 * persistent grid whose block (or cluster of @nc blocks on sm_90, each with a contiguous chunk
 * of @cw vectors of the columns) runs down rows r = cluster, + clusters, ...  Each thread
 * copies the x and dy vectors it owns of the next @stages - 1 rows into a shared-memory ring
 * with cp.async (no registers held, so several rows are in flight per SM while this one is
 * reduced and written), keeps its weight vectors and its fp32 dw (and db) in registers over all
 * rows, and writes one partial row per cluster (@pw, @pb: [clusters, hidden]) for
 * kprof_colsum.  A cluster adds its blocks' row sums through distributed shared memory with
 * st.async on an mbarrier (H100, bf16 8192x32768, LayerNorm: 0.625 ms instead of 0.686 with a
 * cluster barrier a row, whose release waited for the dx stores: ncu's "membar" stall 1.9 ->
 * 0.03 per issue; RMSNorm 0.613 ms instead of its register kernel's 0.676).
 * OP RW_SOFTMAX: the softmax backward, y in @x's place (dx = y (dy - sum(y dy)); no weight,
 * statistics or partial rows).
 */
namespace cg = cooperative_groups;

__device__ __forceinline__ void cp_async16(void *smem, const void *g)
{
#if __CUDA_ARCH__ >= 800
	unsigned s = (unsigned)__cvta_generic_to_shared(smem);
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(g) : "memory");
#endif
}

__device__ __forceinline__ void cp_commit()
{
#if __CUDA_ARCH__ >= 800
	asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

/* wait until at most @n of this thread's cp.async groups are pending (n < 16) */
__device__ __forceinline__ void cp_wait(int n)
{
#if __CUDA_ARCH__ >= 800
#define W(N)                                                                                       \
	case N:                                                                                    \
		asm volatile("cp.async.wait_group " #N ";" ::: "memory");                          \
		break
	switch (n) {
		W(0);
		W(1);
		W(2);
		W(3);
		W(4);
		W(5);
		W(6);
		W(7);
		W(8);
		W(9);
		W(10);
		W(11);
		W(12);
		W(13);
		W(14);
	default:
		asm volatile("cp.async.wait_group 15;" ::: "memory");
		break;
	}
#undef W
#endif
}

/* mbarriers (sm_90) for the cluster's row sums in kprof_norm_bwd_pipe */
__device__ __forceinline__ void mbar_init(unsigned long long *bar, unsigned count)
{
#if __CUDA_ARCH__ >= 900
	unsigned a = (unsigned)__cvta_generic_to_shared(bar);
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(a), "r"(count) : "memory");
#endif
}

/* arrive on @bar and expect @bytes more of its phase from st.async */
__device__ __forceinline__ void mbar_expect(unsigned long long *bar, unsigned bytes)
{
#if __CUDA_ARCH__ >= 900
	unsigned a = (unsigned)__cvta_generic_to_shared(bar);
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(a), "r"(bytes)
		     : "memory");
#endif
}

/* wait for phase @parity of @bar, acquiring what the cluster's st.async wrote */
__device__ __forceinline__ void mbar_wait_cluster(unsigned long long *bar, unsigned parity)
{
#if __CUDA_ARCH__ >= 900
	unsigned a = (unsigned)__cvta_generic_to_shared(bar), ok = 0;
	while (!ok)
		asm volatile("{\n\t.reg .pred p;\n\t"
			     "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n\t"
			     "selp.u32 %0, 1, 0, p;\n\t}"
			     : "=r"(ok)
			     : "r"(a), "r"(parity)
			     : "memory");
#endif
}

/* (x, y) into @dst of cluster block @rank, completing 8 bytes on its @bar (same offsets) */
__device__ __forceinline__ void st_async2(float *dst, unsigned long long *bar, unsigned rank,
					  float x, float y)
{
#if __CUDA_ARCH__ >= 900
	unsigned d = (unsigned)__cvta_generic_to_shared(dst);
	unsigned b = (unsigned)__cvta_generic_to_shared(bar), rd, rb;
	asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rd) : "r"(d), "r"(rank));
	asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rb) : "r"(b), "r"(rank));
	asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, "
		     "[%3];" ::"r"(rd),
		     "f"(x), "f"(y), "r"(rb)
		     : "memory");
#endif
}

/*
 * The pipelined backward's per-thread state: VPT vectors of the block's columns [@j0, @jend) a
 * thread (stride bd), their weight vectors and fp32 dw (and db) sums, with the row's
 * addresses, ring slots and bounds worked out once, not at every access (H100, bf16
 * 8192x32768 RMSNorm: 13% fewer instructions than with them computed per access and a 64-bit
 * modulo for the ring stage; the kernels are issue-bound on H200).  Its vectors come from
 * @src(t, i): vector i of x (t 0) or dy (t 1), held in registers or in the ring.
 */
template <typename T, int OP, int V> struct pipe_thread {
	static constexpr int VE = vec<T>::N;
	long jt, nvec; /* the tensors' addresses stay kernel parameters: no registers */
	unsigned bd, ok;
	/*
	 * The weight: RMSNorm's unpacked once, not in both passes of every row (its own limit,
	 * bench/README's L2 build: 4305 -> 4646 GB/s); LayerNorm's packed (no gain: 3483 vs
	 * 3462, and 0.5-1% slower from DRAM on H100)
	 */
	static constexpr bool WF = OP == RW_RMSNORM;
	float wf[WF ? V : 1][VE];
	uint4 wr[WF ? 1 : V];
	float dw[V][VE], db[OP == RW_LAYERNORM ? V : 1][VE];

	__device__ __forceinline__ void init(const T *w, long j0, long jend, long nvec_)
	{
		bd = blockDim.x, nvec = nvec_, jt = j0 + threadIdx.x, ok = 0;
#pragma unroll
		for (int i = 0; i < V; i++) {
			ok |= jt + (long)i * bd < jend ? 1u << i : 0u;
			uint4 wi = has(i) && OP != RW_SOFTMAX
					   ? __ldg((const uint4 *)w + jt + i * bd)
					   : make_uint4(0, 0, 0, 0);
			if constexpr (WF)
				unpack<T>(wi, wf[i]);
			else
				wr[i] = wi;
#pragma unroll
			for (int e = 0; e < VE; e++)
				dw[i][e] = 0.f, db[OP == RW_LAYERNORM ? i : 0][e] = 0.f;
		}
	}
	/* weight vector @i as floats */
	__device__ __forceinline__ void weight(int i, float (&wv)[VE]) const
	{
		if constexpr (WF) {
#pragma unroll
			for (int e = 0; e < VE; e++)
				wv[e] = wf[i][e];
		} else {
			unpack<T>(wr[i], wv);
		}
	}
	__device__ __forceinline__ bool has(int i) const
	{
		return ok >> i & 1;
	}
	/* this thread's slot of ring stage @s: vector i of x at [i * bd], of dy at [(V + i) * bd] */
	__device__ __forceinline__ uint4 *stage(uint4 *ring, int s) const
	{
		return ring + (unsigned)(s * 2 * V) * bd + threadIdx.x;
	}
	/* copy row @r's vectors of this thread into stage @s (one commit group, maybe empty) */
	__device__ __forceinline__ void issue(uint4 *ring, const T *x, const T *dy, long r,
					      long rows, int s) const
	{
		if (r < rows) {
			size_t o = (size_t)MB_ROW(r) * nvec + jt;
			uint4 *p = stage(ring, s);
#pragma unroll
			for (int i = 0; i < V; i++)
				if (has(i)) {
					cp_async16(p + i * bd, (const uint4 *)x + o + i * bd);
					cp_async16(p + (V + i) * bd,
						   (const uint4 *)dy + o + i * bd);
				}
		}
		cp_commit();
	}
	/* this thread's vectors of x (@rx) and dy (@rd) in its ring slot @p */
	__device__ __forceinline__ void load(const uint4 *p, uint4 (&rx)[V], uint4 (&rd)[V]) const
	{
#pragma unroll
		for (int i = 0; i < V; i++)
			rx[i] = p[i * bd], rd[i] = p[(V + i) * bd];
	}
	/*
	 * sums of g = w dy (LayerNorm only; softmax: y dy) and of g xh, xh = (x - mu) rs, over the
	 * thread's vectors; sum g (x - mu) as sum g x - mu sum g, the form PyTorch's LayerNorm
	 * backward takes (ds - db mean): two instructions an element instead of three (bf16
	 * 8192x32768 on the L2 build of bench/README: 3487 -> 3581 GB/s, H100)
	 */
	template <typename S>
	__device__ __forceinline__ void sums(S src, float rs, float mu, float &sg, float &sgx) const
	{
		float a = 0.f, c = 0.f;
#pragma unroll
		for (int i = 0; i < V; i++) {
			if (!has(i))
				continue;
			float xv[VE], dv[VE], wv[VE];
			unpack<T>(src(0, i), xv);
			unpack<T>(src(1, i), dv);
			weight(i, wv);
#pragma unroll
			for (int e = 0; e < VE; e++) {
				if (OP == RW_SOFTMAX) {
					a = fmaf(xv[e], dv[e], a);
					continue;
				}
				float g = wv[e] * dv[e];
				if (OP == RW_LAYERNORM)
					a += g;
				c = fmaf(g, xv[e], c);
			}
		}
		sg = a, sgx = (OP == RW_LAYERNORM ? c - mu * a : c) * rs;
	}
	/*
	 * dx of row @r from the sums: rs (w dy - a - xh c) = w (dy rs) + (x - mu) K2 + K3, K2 =
	 * -rs^2 c, K3 = -rs a (softmax: y (dy - sg)); dw += (x - mu) (dy rs), db += dy
	 */
	template <typename S>
	__device__ __forceinline__ void finish(S src, T *dx, long r, float rs, float mu, float sg,
					       float sgx, float inv_h)
	{
		float a = OP == RW_LAYERNORM ? sg * inv_h : 0.f, c = sgx * inv_h;
		float k2 = -rs * rs * c, k3 = -rs * a;
		uint4 *outr = (uint4 *)dx + (size_t)MB_ROW(r) * nvec + jt;
#pragma unroll
		for (int i = 0; i < V; i++) {
			if (!has(i))
				continue;
			float xv[VE], dv[VE], wv[VE], o[VE];
			unpack<T>(src(0, i), xv);
			unpack<T>(src(1, i), dv);
			weight(i, wv);
#pragma unroll
			for (int e = 0; e < VE; e++) {
				if (OP == RW_SOFTMAX) {
					o[e] = xv[e] * (dv[e] - sg);
					continue;
				}
				float xm = OP == RW_LAYERNORM ? xv[e] - mu : xv[e], dr = dv[e] * rs;
				o[e] = fmaf(wv[e], dr,
					    OP == RW_LAYERNORM ? fmaf(xm, k2, k3) : xm * k2);
				dw[i][e] = fmaf(xm, dr, dw[i][e]);
				if (OP == RW_LAYERNORM)
					db[OP == RW_LAYERNORM ? i : 0][e] += dv[e];
			}
			__stcs(outr + i * bd, pack<T>(o));
		}
	}
	/* the block's (cluster's) partial row @cid of dw (and db) */
	__device__ __forceinline__ void partials(float *pw, float *pb, long cid, long hidden) const
	{
#pragma unroll
		for (int i = 0; i < V; i++) {
			long j = jt + (long)i * bd;
			if (OP == RW_SOFTMAX || !has(i))
				continue;
			float4 *p = (float4 *)(pw + (size_t)cid * hidden + j * VE);
#pragma unroll
			for (int e = 0; e < VE; e += 4)
				p[e / 4] = make_float4(dw[i][e], dw[i][e + 1], dw[i][e + 2],
						       dw[i][e + 3]);
			if (OP == RW_LAYERNORM) {
				float4 *pq = (float4 *)(pb + (size_t)cid * hidden + j * VE);
				constexpr int k = OP == RW_LAYERNORM ? 1 : 0;
#pragma unroll
				for (int e = 0; e < VE; e += 4)
					pq[e / 4] = make_float4(db[i * k][e], db[i * k][e + 1],
								db[i * k][e + 2], db[i * k][e + 3]);
			}
		}
	}
};

/* @p's vectors (a thread's ring slot) as a pipe_thread source */
template <int V> struct ring_src {
	const uint4 *p;
	unsigned bd;
	__device__ __forceinline__ uint4 operator()(int t, int i) const
	{
		return p[(t * V + i) * bd];
	}
};

/* the four exchange mbarriers of a block, visible to the cluster (thread 0) */
__device__ __forceinline__ void xbar_init(unsigned long long *xbar)
{
	if (threadIdx.x == 0) {
		for (int i = 0; i < 4; i++)
			mbar_init(&xbar[i], 1);
#if __CUDA_ARCH__ >= 900
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
	}
}

/*
 * A cluster's row sums: block q's (sg, sgx) of its k-th row go with st.async into buffer k % 4
 * of every block, completing bytes on that block's xbar[k % 4] (no release: this thread's dx
 * stores need not be done, as a cluster barrier would wait for).  Four buffers: a peer pushes
 * row k + 4 only after it has this block's row k + 2, pushed after this block read row k.
 */
struct cluster_sums {
	static constexpr bool per_warp = false;
	float red[4][8][2];
	unsigned long long xbar[4];

	__device__ __forceinline__ void init()
	{
		xbar_init(xbar);
	}
	/* after block_reduce2: every thread has the block's (sg, sgx) */
	__device__ __forceinline__ void push(long k, int q, int nc, float sg, float sgx)
	{
		int b = (int)(k & 3);
		if (threadIdx.x == 0)
			mbar_expect(&xbar[b], (unsigned)nc * 8);
		if ((int)threadIdx.x < nc)
			st_async2(&red[b][q][0], &xbar[b], (unsigned)threadIdx.x, sg, sgx);
	}
	__device__ __forceinline__ void wait(long k, int nc, float &sg, float &sgx)
	{
		int b = (int)(k & 3);
		mbar_wait_cluster(&xbar[b], (unsigned)(k >> 2) & 1);
		sg = 0.f, sgx = 0.f;
		for (int t = 0; t < nc; t++)
			sg += red[b][t][0], sgx += red[b][t][1];
	}
};

/*
 * A cluster's row sums without block barriers: warp w of block q sends its own (sg, sgx) of its
 * k-th row with st.async into slot q * nw + w of buffer k % 4 of every block (nw warps a block,
 * nc * nw <= XW_SLOTS), and every warp adds the nc * nw slots up once the buffer's mbarrier
 * completes.  No __syncthreads a row: a thread reads only its own ring vectors, so the block's
 * warps run apart, held together by the exchange alone.  Four buffers, as in cluster_sums: a
 * peer warp pushes row k + 4 only after it has every warp's row k + 2 (+ 3 without the
 * look-ahead), pushed after that warp read row k.
 */
#define XW_SLOTS 128
struct cluster_warp_sums {
	static constexpr bool per_warp = true;
	float red[4][XW_SLOTS][2];
	unsigned long long xbar[4];

	__device__ __forceinline__ void init()
	{
		xbar_init(xbar);
	}
	/* this thread's (sg, sgx) of its vectors: the warp's sums go to every block of the cluster */
	__device__ __forceinline__ void push(long k, int q, int nc, float sg, float sgx)
	{
		int b = (int)(k & 3), lane = (int)(threadIdx.x & 31), nw = (int)(blockDim.x >> 5);
		for (int o = 16; o; o >>= 1) {
			sg += __shfl_xor_sync(0xffffffffu, sg, o);
			sgx += __shfl_xor_sync(0xffffffffu, sgx, o);
		}
		if (threadIdx.x == 0)
			mbar_expect(&xbar[b], (unsigned)(nc * nw) * 8);
		if (lane < nc)
			st_async2(&red[b][q * nw + (int)(threadIdx.x >> 5)][0], &xbar[b],
				  (unsigned)lane, sg, sgx);
	}
	__device__ __forceinline__ void wait(long k, int nc, float &sg, float &sgx)
	{
		int b = (int)(k & 3), n = nc * (int)(blockDim.x >> 5);
		mbar_wait_cluster(&xbar[b], (unsigned)(k >> 2) & 1);
		float a = 0.f, c = 0.f;
		for (int t = (int)(threadIdx.x & 31); t < n; t += 32)
			a += red[b][t][0], c += red[b][t][1];
		for (int o = 16; o; o >>= 1) {
			a += __shfl_xor_sync(0xffffffffu, a, o);
			c += __shfl_xor_sync(0xffffffffu, c, o);
		}
		sg = a, sgx = c;
	}
};

/* this block's rank in its cluster, the cluster count and index (1, grid, block without CL) */
template <bool CL>
__device__ __forceinline__ void cluster_place(int &q, int &nc, long &cid, long &ncl)
{
	q = 0, nc = 1, cid = blockIdx.x, ncl = gridDim.x;
#if __CUDA_ARCH__ >= 900
	if (CL) {
		cg::cluster_group cl = cg::this_cluster();
		q = (int)cl.block_rank();
		nc = (int)cl.num_blocks();
		cid = blockIdx.x / nc;
		ncl = gridDim.x / nc;
	}
#endif
}

template <bool CL> __device__ __forceinline__ void cluster_sync()
{
#if __CUDA_ARCH__ >= 900
	if (CL)
		cg::this_cluster().sync();
#endif
}

/*
 * The forward of rows over 4096 vectors on a cluster (sm_90): each of its @nc blocks holds a
 * contiguous part of the row in registers (up to 512 threads of 8 vectors, as kprof_rowwise),
 * reduces it, and hands its partial statistics to every block of the cluster through
 * distributed shared memory; DRAM sees one read and one write, with no second pass over L2
 * (kprof_rowwise_l2: fp32 4096x65536 at 60-71% of the DRAM peak on H100, its 256 KiB rows
 * falling out of L2).  Two blocks an SM: LayerNorm in 64 registers, not 74 and one block (H100,
 * fp32 8192x32768 84% of the DRAM peak against 80, for 8 bytes of spills; bf16 without spills).
 * RMSNorm's weight comes into shared memory with cp.async while the row's statistics are
 * exchanged, not from L2 after them (H100, bf16 8192x57344 88% against 85%); LayerNorm's weight
 * and bias, or its weight alone, lost that way (bf16 4096x65536 74-76% against 81%).
 */
template <typename T, int OP>
__global__ void __launch_bounds__(512, 2)
	kprof_rowwise_cl(T *y, const T *x, const T *w, const T *b, float *mean_out, float *rstd_out,
			 long hidden, float eps)
{
#if __CUDA_ARCH__ >= 900
	constexpr int ITEMS = 8;
	constexpr bool WS = OP == RW_RMSNORM; /* the weight staged in shared memory */
	extern __shared__ uint4 wsm[];       /* WS: [ITEMS][blockDim.x], a thread's own slots */
	__shared__ float sh[64];
	__shared__ float part[8][2]; /* block t's partial statistics, from block t */
	cg::cluster_group cl = cg::this_cluster();
	int q = (int)cl.block_rank(), nc = (int)cl.num_blocks();
	long r = blockIdx.x / nc, nvec = hidden / vec<T>::N, cw = (nvec + nc - 1) / nc;
	unsigned bd = blockDim.x, t = threadIdx.x;
	long c0 = (long)q * cw, jend = c0 + cw < nvec ? c0 + cw : nvec, j0 = c0 + t;
	const uint4 *xr = (const uint4 *)(x + (size_t)MB_ROW(r) * hidden);
	uint4 raw[ITEMS];
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		long j = j0 + (long)i * bd;
		raw[i] = j < jend ? __ldcs(xr + j) : make_uint4(0, 0, 0, 0);
	}
	if (WS) {
#pragma unroll
		for (int i = 0; i < ITEMS; i++) {
			long j = j0 + (long)i * bd;
			if (j < jend)
				cp_async16(wsm + i * bd + t, (const uint4 *)w + j);
		}
		cp_commit();
	}
	float m = -INFINITY, a = 0.f, qv = 0.f,
	      k = OP == RW_LAYERNORM ? (float)x[(size_t)MB_ROW(r) * hidden] : 0.f;
	cl.sync(); /* every block of the cluster started: its shared memory may be written */
#pragma unroll
	for (int i = 0; i < ITEMS; i++)
		if (j0 + (long)i * bd < jend)
			vec_stats<T, OP>(raw[i], k, m, a, qv);
	if (OP == RW_SOFTMAX)
		block_reduce_ms(m, a, sh);
	else
		block_reduce2(a, qv, sh);
	if (threadIdx.x == 0)
		for (int t = 0; t < nc; t++) {
			float *d = cl.map_shared_rank(&part[q][0], t);
			d[0] = OP == RW_SOFTMAX ? m : a, d[1] = OP == RW_SOFTMAX ? a : qv;
		}
	cl.sync();
	m = -INFINITY, a = 0.f, qv = 0.f;
	for (int t = 0; t < nc; t++) {
		if (OP == RW_SOFTMAX)
			ms_combine(m, a, part[t][0], part[t][1]);
		else
			a += part[t][0], qv += part[t][1];
	}
	float scale, shift = 0.f, inv = 1.f / (float)hidden;
	if (OP == RW_SOFTMAX) {
		scale = 1.f / a;
	} else if (OP == RW_RMSNORM) {
		scale = rsqrtf(qv * inv + eps);
		if (q == 0 && threadIdx.x == 0)
			rstd_out[r] = scale;
	} else {
		float md = a * inv, mu = k + md;
		scale = rsqrtf(fmaxf(qv * inv - md * md, 0.f) + eps), shift = -mu * scale;
		if (q == 0 && threadIdx.x == 0)
			mean_out[r] = mu, rstd_out[r] = scale;
	}
	uint4 *yr = (uint4 *)(y + (size_t)MB_ROW(r) * hidden);
	if (WS)
		cp_wait(0);
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		long j = j0 + (long)i * bd;
		if (j >= jend)
			continue;
		if (WS)
			__stcs(yr + j, norm_out<T, OP>(raw[i], wsm[i * bd + t], make_uint4(0, 0, 0, 0),
						       scale, shift));
		else
			__stcs(yr + j, vec_out<T, OP>(raw[i], j, w, b, m * L2E, scale, shift));
	}
#endif
}

template <typename T, int OP, int VPT, bool CL, bool HOLD = !CL, typename X = cluster_sums>
__global__ void __launch_bounds__(VPT == 1 ? 1024 : 512, HOLD && sizeof(T) == 2 ? 1 : 0)
	kprof_norm_bwd_pipe(T *dx, float *pw, float *pb, const T *dy, const T *x, const float *mean,
			    const float *rstd, const T *w, long rows, long hidden, long cw,
			    int stages)
{
	extern __shared__ uint4 ring[]; /* [stages][2 (x, dy)][VPT][blockDim.x] */
	__shared__ float sh[64];
	__shared__ X xs;
	int q, nc;
	long cid, ncl, nvec = hidden / vec<T>::N, k = 0;
	cluster_place<CL>(q, nc, cid, ncl);
	if (CL)
		xs.init();
	cluster_sync<CL>(); /* every block started, its barriers initialised */
	pipe_thread<T, OP, VPT> pt;
	pt.init(w, (long)q * cw, (long)q * cw + cw < nvec ? (long)q * cw + cw : nvec, nvec);
	float inv_h = 1.f / (float)hidden;
	for (int s = 0; s < stages - 1; s++)
		pt.issue(ring, x, dy, cid + (long)s * ncl, rows, s);
	float rs_n = OP != RW_SOFTMAX && cid < rows ? __ldg(rstd + cid) : 0.f;
	float mu_n = OP == RW_LAYERNORM && cid < rows ? __ldg(mean + cid) : 0.f;
	int s = 0;
	for (long r = cid; r < rows; r += ncl, k++) {
		pt.issue(ring, x, dy, r + (long)(stages - 1) * ncl, rows,
			 s == 0 ? stages - 1 : s - 1);
		float rs = rs_n, mu = mu_n, sg, sgx;
		if (OP != RW_SOFTMAX && r + ncl < rows) {
			rs_n = __ldg(rstd + r + ncl);
			if (OP == RW_LAYERNORM)
				mu_n = __ldg(mean + r + ncl);
		}
		cp_wait(stages - 1);
		uint4 rx[VPT], rd[VPT];
		const uint4 *p = pt.stage(ring, s);
		pt.load(p, rx, rd);
		auto held = [&](int t, int i) { return t ? rd[i] : rx[i]; };
		pt.sums(held, rs, mu, sg, sgx);
		if (!(CL && X::per_warp))
			block_reduce2(sg, sgx, sh);
		if (CL) {
			xs.push(k, q, nc, sg, sgx);
			xs.wait(k, nc, sg, sgx);
		}
		if (HOLD)
			pt.finish(held, dx, r, rs, mu, sg, sgx, inv_h);
		else /* not held over the cluster's exchange */
			pt.finish(ring_src<VPT>{ p, pt.bd }, dx, r, rs, mu, sg, sgx, inv_h);
		s = s + 1 == stages ? 0 : s + 1;
	}
	cp_wait(0);
	pt.partials(pw, pb, cid, hidden);
	cluster_sync<CL>(); /* no block leaves while a peer may still write to it */
}

/*
 * kprof_norm_bwd_pipe on a cluster with the row sums exchanged one row behind: a thread takes
 * row k out of the ring into registers (its stage refilled at once), reduces and pushes it,
 * then finishes row k - 1, held in registers since the last round, whose sums have had a row's
 * work to arrive.  The exchange hides as in kprof_norm_bwd_ahead, but no ring stage is held
 * back from the loads in flight.  One block an SM (two rows of x and dy in registers).
 */
template <typename T, int OP, typename X = cluster_warp_sums>
__global__ void __launch_bounds__(512, 1)
	kprof_norm_bwd_lag(T *dx, float *pw, float *pb, const T *dy, const T *x, const float *mean,
			   const float *rstd, const T *w, long rows, long hidden, long cw,
			   int stages)
{
	extern __shared__ uint4 ring[]; /* [stages][2 (x, dy)][2][blockDim.x] */
	__shared__ float sh[64];
	__shared__ X xs;
	int q, nc;
	long cid, ncl, nvec = hidden / vec<T>::N, k = 0, rp = 0;
	cluster_place<true>(q, nc, cid, ncl);
	xs.init();
	cluster_sync<true>();
	pipe_thread<T, OP, 2> pt;
	pt.init(w, (long)q * cw, (long)q * cw + cw < nvec ? (long)q * cw + cw : nvec, nvec);
	float inv_h = 1.f / (float)hidden, prs = 0.f, pmu = 0.f, sg, sgx;
	for (int s = 0; s < stages; s++)
		pt.issue(ring, x, dy, cid + (long)s * ncl, rows, s);
	uint4 px[2] = {}, pd[2] = {}; /* row k - 1 */
	auto prev = [&](int t, int i) { return t ? pd[i] : px[i]; };
	int s = 0;
	for (long r = cid; r < rows; r += ncl, k++) {
		float rs = OP != RW_SOFTMAX ? __ldg(rstd + r) : 0.f;
		float mu = OP == RW_LAYERNORM ? __ldg(mean + r) : 0.f;
		cp_wait(stages - 1);
		uint4 rx[2], rd[2];
		pt.load(pt.stage(ring, s), rx, rd);
		pt.sums([&](int t, int i) { return t ? rd[i] : rx[i]; }, rs, mu, sg, sgx);
		pt.issue(ring, x, dy, r + (long)stages * ncl, rows, s); /* after the reads above */
		if (!X::per_warp)
			block_reduce2(sg, sgx, sh);
		xs.push(k, q, nc, sg, sgx);
		if (k > 0) {
			xs.wait(k - 1, nc, sg, sgx);
			pt.finish(prev, dx, rp, prs, pmu, sg, sgx, inv_h);
		}
		px[0] = rx[0], px[1] = rx[1], pd[0] = rd[0], pd[1] = rd[1];
		prs = rs, pmu = mu, rp = r;
		s = s + 1 == stages ? 0 : s + 1;
	}
	if (k > 0) {
		xs.wait(k - 1, nc, sg, sgx);
		pt.finish(prev, dx, rp, prs, pmu, sg, sgx, inv_h);
	}
	cp_wait(0);
	pt.partials(pw, pb, cid, hidden);
	cluster_sync<true>();
}

/*
 * kprof_norm_bwd_pipe on a cluster with the row sums one row ahead: a block reduces and pushes
 * row k + 1's sums before it waits for row k's from its peers, so the exchange's latency hides
 * behind a row's work; 2 blocks an SM (a 64-register bound).  H100, bf16 8192x32768: RMSNorm
 * 85.3% of the DRAM peak instead of 77.5%.  LayerNorm's db sums do not fit that bound (40
 * bytes spilled: 67%), and at one block an SM (its bound here, for the variants of
 * bench/membound-variants.cu) it is slower than kprof_norm_bwd_pipe (H200: 62% vs 71%).  @X:
 * the exchange, cluster_sums or cluster_warp_sums (nb_pipe_plan).
 */
template <typename T, int OP, typename X = cluster_sums>
__global__ void __launch_bounds__(512, OP == RW_LAYERNORM ? 1 : 2)
	kprof_norm_bwd_ahead(T *dx, float *pw, float *pb, const T *dy, const T *x,
			     const float *mean, const float *rstd, const T *w, long rows,
			     long hidden, long cw, int stages)
{
	extern __shared__ uint4 ring[]; /* [stages][2 (x, dy)][2][blockDim.x] */
	__shared__ float sh[64];
	__shared__ X xs;
	int q, nc;
	long cid, ncl, nvec = hidden / vec<T>::N, k = 0;
	cluster_place<true>(q, nc, cid, ncl);
	xs.init();
	cluster_sync<true>();
	pipe_thread<T, OP, 2> pt;
	pt.init(w, (long)q * cw, (long)q * cw + cw < nvec ? (long)q * cw + cw : nvec, nvec);
	float inv_h = 1.f / (float)hidden;
	for (int s = 0; s < stages; s++)
		pt.issue(ring, x, dy, cid + (long)s * ncl, rows, s);
	float rs = OP != RW_SOFTMAX && cid < rows ? __ldg(rstd + cid) : 0.f;
	float mu = OP == RW_LAYERNORM && cid < rows ? __ldg(mean + cid) : 0.f, sg, sgx;
	if (cid < rows) {
		cp_wait(stages - 1);
		pt.sums(ring_src<2>{ pt.stage(ring, 0), pt.bd }, rs, mu, sg, sgx);
		if (!X::per_warp)
			block_reduce2(sg, sgx, sh);
		xs.push(0, q, nc, sg, sgx);
	}
	int s = 0, s1 = 1;
	for (long r = cid; r < rows; r += ncl, k++) {
		float rs1 = 0.f, mu1 = 0.f;
		if (r + ncl < rows) {
			rs1 = OP != RW_SOFTMAX ? __ldg(rstd + r + ncl) : 0.f;
			mu1 = OP == RW_LAYERNORM ? __ldg(mean + r + ncl) : 0.f;
			cp_wait(stages - 2);
			pt.sums(ring_src<2>{ pt.stage(ring, s1), pt.bd }, rs1, mu1, sg, sgx);
			if (!X::per_warp)
				block_reduce2(sg, sgx, sh);
			xs.push(k + 1, q, nc, sg, sgx);
		}
		xs.wait(k, nc, sg, sgx);
		pt.finish(ring_src<2>{ pt.stage(ring, s), pt.bd }, dx, r, rs, mu, sg, sgx, inv_h);
		pt.issue(ring, x, dy, r + (long)stages * ncl, rows, s);
		rs = rs1, mu = mu1;
		s = s1, s1 = s1 + 1 == stages ? 0 : s1 + 1;
	}
	cp_wait(0);
	pt.partials(pw, pb, cid, hidden);
	cluster_sync<true>();
}

/*
 * out[j] = sum over @n rows of p[., j] (fp32 partials), in T: 32 columns x 8 row groups a block;
 * blockIdx.y 1 sums @p1 into @out1 (LayerNorm's dbias in the same launch as dweight).  Launched
 * as a programmatic dependent of the backward (sm_90): it may start while the backward's last
 * blocks run, and waits for their partial rows here.
 */
template <typename T>
__global__ void __launch_bounds__(256)
	kprof_colsum(T *out0, T *out1, const float *p0, const float *p1, long n, long hidden)
{
	__shared__ float sh[8][33];
	long j = (long)blockIdx.x * 32 + (threadIdx.x & 31);
	int g = threadIdx.x >> 5;
	const float *p = blockIdx.y ? p1 : p0;
	T *out = blockIdx.y ? out1 : out0;
	float a = 0.f;
#if __CUDA_ARCH__ >= 900
	cudaGridDependencySynchronize();
#endif
	if (j < hidden)
		for (long r = g; r < n; r += 8)
			a += p[(size_t)r * hidden + j];
	sh[g][threadIdx.x & 31] = a;
	__syncthreads();
	if (g == 0 && j < hidden) {
		for (int k = 1; k < 8; k++)
			a += sh[k][threadIdx.x];
		out[j] = (T)a;
	}
}

/* vectors a thread of the cross-entropy kernels loads before using them */
#ifndef XENT_U
#define XENT_U 4
#endif

/*
 * Cross-entropy forward, one block per row, streaming: per thread an online (max, sum-exp) over
 * 4 vectors at a time, then one block reduction.  loss = lse - x[target] (0 for ignore_index),
 * written in T; lse in fp32 for the backward.
 */
template <typename T>
__global__ void __launch_bounds__(256)
	kprof_xent_fwd(T *loss, float *lse_out, const T *x, const long long *target, long vocab,
		       long long ignore)
{
	constexpr int VE = vec<T>::N, U = XENT_U;
	__shared__ float sh[64];
	long nvec = vocab / VE;
	const uint4 *xr = (const uint4 *)(x + (size_t)blockIdx.x * vocab);
	float m = -INFINITY, s = 0.f, unused = 0.f;
	for (long base = threadIdx.x; base < nvec; base += (long)U * blockDim.x) {
		uint4 raw[U];
#pragma unroll
		for (int u = 0; u < U; u++) {
			long j = base + (long)u * blockDim.x;
			raw[u] = j < nvec ? __ldcs(xr + j) : make_uint4(0, 0, 0, 0);
		}
#pragma unroll
		for (int u = 0; u < U; u++) {
			if (base + (long)u * blockDim.x >= nvec)
				break;
			vec_stats<T, RW_SOFTMAX>(raw[u], 0.f, m, s, unused);
		}
	}
	block_reduce_ms(m, s, sh);
	if (threadIdx.x == 0) {
		float lse = m + __logf(s);
		long long t = target[blockIdx.x];
		float l = t == ignore ? 0.f : lse - (float)x[(size_t)blockIdx.x * vocab + t];
		loss[blockIdx.x] = (T)l;
		lse_out[blockIdx.x] = lse;
	}
}

/* Cross-entropy backward: dx = (exp(x - lse) - [j == target]) * dloss, 0 rows for ignore_index. */
template <typename T, int U>
__global__ void __launch_bounds__(1024)
	kprof_xent_bwd(T *dx, const T *dloss, const T *x, const long long *target, const float *lse,
		       long vocab, long long ignore)
{
	constexpr int VE = vec<T>::N;
	long nvec = vocab / VE;
	size_t off = (size_t)blockIdx.x * vocab;
	const uint4 *xr = (const uint4 *)(x + off);
	uint4 *dr = (uint4 *)(dx + off);
	long long t = target[blockIdx.x];
	float g = t == ignore ? 0.f : (float)dloss[blockIdx.x], ll = lse[blockIdx.x] * L2E;
	for (long base = threadIdx.x; base < nvec; base += (long)U * blockDim.x) {
		uint4 raw[U];
#pragma unroll
		for (int u = 0; u < U; u++) {
			long j = base + (long)u * blockDim.x;
			raw[u] = j < nvec ? __ldcs(xr + j) : make_uint4(0, 0, 0, 0);
		}
#pragma unroll
		for (int u = 0; u < U; u++) {
			long j = base + (long)u * blockDim.x;
			if (j >= nvec)
				break;
			float v[VE], o[VE];
			unpack<T>(raw[u], v);
#pragma unroll
			for (int e = 0; e < VE; e++)
				o[e] = (ex2(fmaf(v[e], L2E, -ll)) - (j * VE + e == t ? 1.f : 0.f)) *
				       g;
			__stcs(dr + j, pack<T>(o));
		}
	}
}

__global__ void kprof_fill_targets(long long *t, long n, long vocab, unsigned long long seed)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	unsigned long long z = seed + 0x9e3779b97f4a7c15ull * (unsigned long long)(i + 1);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	t[i] = (long long)(z % (unsigned long long)vocab);
}

/*
 * Vectors a thread of the forward kernels keeps: grow up to MB_FWD_ITEMS while the block has
 * more than 128 threads (more rows in flight per SM), beyond it only to stay within the block
 * size (8 vectors: a 512-thread bound, 16: 1024).
 */
#ifndef MB_FWD_ITEMS
#define MB_FWD_ITEMS 8
#endif

static long resident_blocks(const void *fn, unsigned threads);

/*
 * The cluster forward for @rows rows: sm_90 and newer, at least twice as many rows as SMs,
 * unless KPROF_FWD=l2 (A/B measurements: the two-pass kernel)
 */
static int cl_forward(long rows)
{
	static int sms = -1;
	if (sms < 0) {
		int dev = 0, major = 0, n = 0;
		const char *e = getenv("KPROF_FWD");
		int ok = cudaGetDevice(&dev) == cudaSuccess &&
			 cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) ==
				 cudaSuccess &&
			 cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess;
		sms = ok && major >= 9 && !(e && !strcmp(e, "l2")) ? n : 0;
		cudaGetLastError();
	}
	return sms > 0 && rows >= 2L * sms;
}

/* kprof_rowwise_cl over @rows rows: clusters of 4096 vectors a block (LayerNorm 2048), 2-8 */
template <typename T, int OP>
static int cl_launch(void *y, const void *x, const void *w, const void *b, float *mean,
		     float *rstd, long rows, long hidden, float eps)
{
	long nvec = hidden / vec<T>::N, want = OP == RW_LAYERNORM ? 2048 : 4096;
	unsigned nc = (unsigned)((nvec + want - 1) / want);
	if (nc > 8)
		nc = 8;
	long cw = (nvec + nc - 1) / nc;
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute at[1];
	memset(&cfg, 0, sizeof(cfg));
	memset(at, 0, sizeof(at));
	cfg.gridDim = dim3((unsigned)(rows * nc));
	cfg.blockDim = dim3((unsigned)((cw + 8 * 32 - 1) / (8 * 32) * 32)); /* 8 vectors a thread */
	at[0].id = cudaLaunchAttributeClusterDimension;
	at[0].val.clusterDim.x = nc, at[0].val.clusterDim.y = 1, at[0].val.clusterDim.z = 1;
	cfg.attrs = at, cfg.numAttrs = 1;
	static size_t set; /* the kernel's dynamic shared-memory limit, raised as needed */
	cfg.dynamicSmemBytes = OP == RW_RMSNORM ? 8 * 16 * (size_t)cfg.blockDim.x : 0;
	if (cfg.dynamicSmemBytes > set) {
		cudaError_t e = cudaFuncSetAttribute(kprof_rowwise_cl<T, OP>,
						     cudaFuncAttributeMaxDynamicSharedMemorySize,
						     (int)cfg.dynamicSmemBytes);
		if (e != cudaSuccess)
			return (int)e;
		set = cfg.dynamicSmemBytes;
	}
	return (int)cudaLaunchKernelEx(&cfg, kprof_rowwise_cl<T, OP>, (T *)y, (const T *)x,
				       (const T *)w, (const T *)b, mean, rstd, hidden, eps);
}

template <typename T, int OP>
static int launch(void *y, const void *x, const void *w, const void *b, float *mean, float *rstd,
		  long rows, long hidden, float eps)
{
	long nvec = hidden / vec<T>::N;
	int items = 1;
	if (hidden % vec<T>::N || rows <= 0 || rows > 2147483647L)
		return (int)cudaErrorInvalidValue;
	/*
	 * Two passes, 1024 threads of 2 vectors, for long rows (bf16 8192x32768 softmax and
	 * LayerNorm: 512 threads of 4 measured the same on H100, 88.2 vs 87.9%, and less on H200,
	 * 76.8 vs 78.1%); RMSNorm's register kernel up to 4096 vectors (H100 88.9%, two passes 83.0)
	 */
	dim3 g((unsigned)rows);
	/*
	 * Long rows on a cluster (kprof_rowwise_cl) of blocks of 4096 vectors (2048 for LayerNorm,
	 * whose weight and bias loads follow the exchange), where it measured faster than the two
	 * passes (H100, bf16 4096x65536 softmax, RMSNorm and LayerNorm 86/85/83% instead of
	 * 73/74/71%, fp32 86-88% instead of 62-71%, fp32 LayerNorm 82% instead of 61%): softmax
	 * over 4096 vectors, RMSNorm and LayerNorm over 6144, below which the two passes keep up
	 * (bf16 8192x45056 RMSNorm 85% against 82%, LayerNorm 84% against 80%), and not for fewer
	 * rows than twice the SMs (77x65536: 47-65% against 53-80%)
	 */
	if (nvec > (OP == RW_SOFTMAX ? 4096 : 6144) && nvec <= 8 * 4096 &&
	    rows <= 2147483647L / 8 && cl_forward(rows))
		return cl_launch<T, OP>(y, x, w, b, mean, rstd, rows, hidden, eps);
	if (nvec > 4096 || (OP != RW_RMSNORM && nvec > 2048)) {
		kprof_rowwise_l2<T, OP, 1024, 2><<<g, 1024>>>((T *)y, (const T *)x, (const T *)w,
							      (const T *)b, mean, rstd, hidden,
							      eps);
		return (int)cudaGetLastError();
	}
	/*
	 * Small blocks with several 16-byte vectors per thread: more rows in flight per SM.  At most
	 * 8 vectors a thread (32 registers of data, a 512-thread bound: rows up to 4096 vectors).
	 */
	while (items < MB_FWD_ITEMS && (nvec + items - 1) / items > 128)
		items *= 2;
	while (items < 8 && (nvec + items - 1) / items > 1024)
		items *= 2;
	long threads = ((nvec + items - 1) / items + 31) / 32 * 32;
	if (threads > 1024 || (items == 8 && threads > 512))
		return (int)cudaErrorInvalidValue;
	dim3 blk((unsigned)threads);
#define L(I)                                                                                       \
	kprof_rowwise<T, OP, I><<<g, blk>>>((T *)y, (const T *)x, (const T *)w, (const T *)b,      \
					    mean, rstd, hidden, eps)
	switch (items) {
	case 1:
		L(1);
		break;
	case 2:
		L(2);
		break;
	case 4:
		L(4);
		break;
	default:
		L(8);
		break;
	}
#undef L
	return (int)cudaGetLastError();
}

template <typename T>
static int by_op(int op, void *y, const void *x, const void *w, const void *b, float *mean,
		 float *rstd, long rows, long hidden, float eps)
{
	switch (op) {
	case RW_SOFTMAX:
		return launch<T, RW_SOFTMAX>(y, x, w, b, mean, rstd, rows, hidden, eps);
	case RW_RMSNORM:
		return launch<T, RW_RMSNORM>(y, x, w, b, mean, rstd, rows, hidden, eps);
	default:
		return launch<T, RW_LAYERNORM>(y, x, w, b, mean, rstd, rows, hidden, eps);
	}
}

extern "C" int kk_rowwise(int op, void *y, const void *x, const void *w, const void *b, float *mean,
			  float *rstd, int kt, long rows, long hidden, float eps)
{
	switch (kt) {
	case KT_F32:
		return by_op<float>(op, y, x, w, b, mean, rstd, rows, hidden, eps);
	case KT_F16:
		return by_op<__half>(op, y, x, w, b, mean, rstd, rows, hidden, eps);
	default:
		return by_op<__nv_bfloat16>(op, y, x, w, b, mean, rstd, rows, hidden, eps);
	}
}

/* ---- backward and cross-entropy launchers ---- */

/* Smallest power-of-two vectors a thread (<= 16) that fits the row in 1024 threads. */
static int items_for(long nvec, int min_items)
{
	int items = 1;
	while (items < min_items && (nvec + items - 1) / items > 128)
		items *= 2;
	while (items < 16 && (nvec + items - 1) / items > 1024)
		items *= 2;
	return items;
}

static unsigned threads_for(long nvec, int items)
{
	return (unsigned)(((nvec + items - 1) / items + 31) / 32 * 32);
}

struct nb_plan;
template <typename T, int OP> static int nb_pipe_plan(struct nb_plan *p, long rows, long hidden);
template <typename T>
static int sm_bwd_pipe(void *dx, const void *y, const void *dy, long rows, long hidden);

/* membound.h; kept once known (a capture runs on one device, as resident_blocks assumes) */
extern "C" double kk_dram_peak(void)
{
	static double peak;
	int dev = 0, khz = 0, bits = 0;
	if (peak > 0)
		return peak;
	if (cudaGetDevice(&dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, dev) != cudaSuccess) {
		cudaGetLastError();
		return 0;
	}
	peak = 2.0 * khz * 1e3 * bits / 8;
	return peak;
}

/*
 * Dynamic shared memory (unused) that leaves room for one block of @fn an SM: the softmax
 * backward's second pass must find its rows in L2, and two 1024-thread blocks an SM keep twice
 * the rows in flight.  Measured, bf16 8192x32768: H100 (3352 GB/s) 80% of the DRAM peak at 2
 * blocks, 90% at one; H200 (4814 GB/s) 83% at 2, 75% at one.  So one block only on GPUs
 * under 4000 GB/s; 0 (no limit) above.
 */
static size_t one_block_an_sm(const void *fn)
{
	int dev = 0, per_sm = 0;
	if (kk_dram_peak() > 4000e9)
		return 0;
	if (cudaGetDevice(&dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) !=
		    cudaSuccess) {
		cudaGetLastError();
		return 0;
	}
	size_t smem = (size_t)per_sm / 2 + 1024;
	if (cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) !=
	    cudaSuccess) {
		cudaGetLastError();
		return 0;
	}
	return smem;
}

template <typename T>
static int sm_bwd(void *dx, const void *y, const void *dy, long rows, long hidden)
{
	long nvec = hidden / vec<T>::N;
	int items = items_for(nvec, 2);
	if (hidden % vec<T>::N || rows <= 0 || rows > 2147483647L ||
	    (nvec + items - 1) / items > 1024)
		return (int)cudaErrorInvalidValue;
	int e = sm_bwd_pipe<T>(dx, y, dy, rows, hidden);
	if (e >= 0)
		return e;
	dim3 g((unsigned)rows), b(threads_for(nvec, items));
	const char *env = getenv("KPROF_SOFTMAX_BWD");
	if (nvec > 2048 && nvec <= 4096 && !(env && !strcmp(env, "rows"))) {
		/* once per element type: the attribute set and queries stay off the timed launches */
		static size_t smem = one_block_an_sm(
			(const void *)kprof_softmax_bwd_l2<T, 1024, 2>);
		kprof_softmax_bwd_l2<T, 1024, 2>
			<<<g, 1024, smem>>>((T *)dx, (const T *)y, (const T *)dy, hidden);
		return (int)cudaGetLastError();
	}
#define L(I) kprof_softmax_bwd<T, I><<<g, b>>>((T *)dx, (const T *)y, (const T *)dy, hidden)
	switch (items) {
	case 1:
		L(1);
		break;
	case 2:
		L(2);
		break;
	case 4:
		L(4);
		break;
	case 8:
		L(8);
		break;
	default:
		L(16);
		break;
	}
#undef L
	return (int)cudaGetLastError();
}

extern "C" int kk_rowsoftmax_bwd(void *dx, const void *y, const void *dy, int kt, long rows,
				 long hidden)
{
	switch (kt) {
	case KT_F32:
		return sm_bwd<float>(dx, y, dy, rows, hidden);
	case KT_F16:
		return sm_bwd<__half>(dx, y, dy, rows, hidden);
	default:
		return sm_bwd<__nv_bfloat16>(dx, y, dy, rows, hidden);
	}
}

/* Blocks of @fn with @threads threads resident on the whole GPU (cached per kernel and size). */
static long resident_blocks(const void *fn, unsigned threads)
{
	static struct {
		const void *fn;
		unsigned threads;
		long n;
	} cache[64];
	static int ncache;
	for (int i = 0; i < ncache; i++)
		if (cache[i].fn == fn && cache[i].threads == threads)
			return cache[i].n;
	int dev = 0, sms = 1, per = 1;
	if (cudaGetDevice(&dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
	    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, fn, (int)threads, 0) !=
		    cudaSuccess ||
	    per < 1)
		per = 1;
	long n = (long)per * (sms > 0 ? sms : 1);
	if (ncache < 64) {
		cache[ncache].fn = fn, cache[ncache].threads = threads, cache[ncache].n = n;
		ncache++;
	}
	return n;
}

/*
 * How a norm backward runs: @items vectors a thread in @threads-thread blocks; unsplit, a
 * persistent grid of @grid blocks (its partial rows); split (LayerNorm beyond 2 vectors a
 * thread, RMSNorm beyond 4: the accumulators would not fit in registers), one block per row
 * for dx and kprof_norm_wgrad over [gx, gy] blocks of @per rows (gy partial rows).
 */
struct nb_plan {
	int items, split, pipe, ahead, vpt, nc, stages;
	unsigned threads;
	long grid, gx, gy, per, partial, cw;
	size_t smem;
};

/*
 * KPROF_NORM_BWD, KPROF_SOFTMAX_BWD (@env; A/B measurements): "rows" runs the norm (softmax)
 * backwards on the register kernels above; "pipe[:V[:K]]" on kprof_norm_bwd_pipe wherever it
 * applies, with V vectors a thread (1 or 2, default 2) and a ring of at most K KiB a block
 * (default 96).  Unset: the pipelined kernel where it measured faster (nb_pipe_plan).
 * *@force: 1 for "pipe...".
 */
static void nb_env(const char *env, int *pipe, int *force, int *vpt, long *cap)
{
	const char *v = getenv(env);
	*pipe = 1, *force = 0, *vpt = 2, *cap = 96 * 1024;
	if (!v || !*v)
		return;
	if (!strcmp(v, "rows")) {
		*pipe = 0;
		return;
	}
	if (strncmp(v, "pipe", 4))
		return;
	*force = 1;
	if (v[4] == ':') {
		char *e;
		*vpt = strtol(v + 5, &e, 10) == 1 ? 1 : 2;
		if (*e == ':')
			*cap = strtol(e + 1, NULL, 10) * 1024;
	}
}

/*
 * The pipelined kernel's row-sum exchange: per warp on clusters of 2- and 4-vector threads (at
 * most 8 blocks of 16 warps: XW_SLOTS; H100, bf16 8192x32768 LayerNorm: 87.2% of the DRAM peak
 * instead of 86.3%), per block otherwise.
 */
template <bool CL, int V>
using pipe_x = typename std::conditional<CL && V >= 2, cluster_warp_sums, cluster_sums>::type;

template <typename T, int OP, int V, bool CL> static const void *pipe_fn()
{
	return (const void *)kprof_norm_bwd_pipe<T, OP, V, CL, !CL, pipe_x<CL, V>>;
}

/* the cluster kernel of 4-vector threads (4-byte types only) */
template <typename T, int OP> static const void *pipe_fn4()
{
	if constexpr (sizeof(T) == 4)
		return pipe_fn<T, OP, 4, true>();
	else
		return NULL;
}

/* the cluster kernel of nb_plan's @ahead: 1 kprof_norm_bwd_ahead, 2 kprof_norm_bwd_lag */
template <typename T, int OP> static const void *ahead_fn(int ahead)
{
	if constexpr (OP == RW_LAYERNORM)
		return NULL; /* not used: see kprof_norm_bwd_ahead */
	else if constexpr (OP == RW_RMSNORM)
		return ahead == 2 ? (const void *)kprof_norm_bwd_lag<T, OP>
				  : (const void *)kprof_norm_bwd_ahead<T, OP>;
	else
		return (const void *)kprof_norm_bwd_ahead<T, OP>;
}

/* Clusters of @nc blocks of @fn resident on the whole GPU (cached per kernel and size). */
static long pipe_resident(const void *fn, unsigned threads, size_t smem, int nc)
{
	static struct {
		const void *fn;
		unsigned threads;
		size_t smem;
		int nc;
		long n;
	} cache[64];
	static int ncache;
	for (int i = 0; i < ncache; i++)
		if (cache[i].fn == fn && cache[i].threads == threads && cache[i].smem == smem &&
		    cache[i].nc == nc)
			return cache[i].n;
	long n = 0;
	int dev = 0, sms = 0, per = 0, optin = 0;
	cudaFuncAttributes fa;
	/*
	 * The attribute is the kernel's, not the plan's: set to the most a block may have beside
	 * its static shared memory, so that a plan of this kernel with a smaller ring, made after
	 * this one and before this one's launch, does not leave it too low for it (a capture of
	 * 77x65536, 300x24584, 40x40968, 1000x65536 failed the last launch: "invalid argument")
	 */
	if (cudaGetDevice(&dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) !=
		    cudaSuccess ||
	    cudaFuncGetAttributes(&fa, fn) != cudaSuccess ||
	    (size_t)optin < fa.sharedSizeBytes + smem ||
	    cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
				 optin - (int)fa.sharedSizeBytes) != cudaSuccess) {
		cudaGetLastError();
		return 0;
	}
	if (nc == 1) {
		if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, fn, (int)threads, smem) ==
		    cudaSuccess)
			n = (long)per * sms;
	} else {
		cudaLaunchConfig_t cfg;
		cudaLaunchAttribute at[1];
		memset(&cfg, 0, sizeof(cfg));
		memset(at, 0, sizeof(at));
		cfg.gridDim = dim3((unsigned)(nc * (sms / nc > 0 ? sms / nc : 1)));
		cfg.blockDim = dim3(threads);
		cfg.dynamicSmemBytes = smem;
		at[0].id = cudaLaunchAttributeClusterDimension;
		at[0].val.clusterDim.x = (unsigned)nc, at[0].val.clusterDim.y = 1;
		at[0].val.clusterDim.z = 1;
		cfg.attrs = at, cfg.numAttrs = 1;
		int ncl = 0;
		if (cudaOccupancyMaxActiveClusters(&ncl, fn, &cfg) == cudaSuccess)
			n = ncl;
	}
	cudaGetLastError();
	if (ncache < 64) {
		cache[ncache].fn = fn, cache[ncache].threads = threads, cache[ncache].smem = smem;
		cache[ncache].nc = nc, cache[ncache].n = n;
		ncache++;
	}
	return n;
}

/*
 * The pipelined plan: blocks of at most 1024 vectors of the row (a cluster of 2-8 for longer
 * rows, sm_90), 2 vectors a thread (4 in 4-byte rows over 8192 vectors, below), as many ring
 * stages of (x, dy) as 96 KiB hold (at most 12; on H200 2 blocks an SM of a 96 KiB ring beat
 * one of 224 KiB: 4096 hidden 0.107 vs 0.135 ms RMSNorm, 0.115 vs 0.147 LayerNorm, 16384 rows
 * bf16).  0 where it does not apply (rows under 512 vectors, before sm_80,
 * KPROF_NORM_BWD=rows) or measured slower (below).
 */
/*
 * The blocks a row of @nvec vectors is split over in nb_pipe_plan's cluster (1 for a block a
 * row): the fewest powers of two of blocks of at most 1024 vectors, with two exceptions.
 * 4-byte types beyond 8192 vectors (hidden over 32768) run 4 vectors a thread, the 16 values a
 * row that 2 vectors of a 16-bit type are, and a ring as large as fits (H100, fp32 4096x65536:
 * the register kernels ran RMSNorm and LayerNorm at 18% of the DRAM peak, softmax at 36%); so
 * too rows of 4097-6144 vectors, on 4 blocks of up to 2048 instead of 8 of 2-vector threads
 * (H100, fp32 8192x20480: LayerNorm 87% instead of 77%; 8192x24576: RMSNorm and LayerNorm 86%
 * instead of 83-84%; not 8192x32768: 85-86% instead of 86-88%), unless @force asks for the
 * 2-vector kernel.  16-bit RMSNorm and LayerNorm rows of 4097-5120 vectors run on 5 blocks of
 * up to 1024 vectors, not 8 of 513-640 (H100, bf16 and fp16: LayerNorm 1.10-1.16x faster,
 * 8192x40960 85% of the DRAM peak instead of 74%; RMSNorm 0.99-1.08x; softmax 0.93-1.04x: not
 * it); not 6 or 7 blocks for longer rows (8192x45056 and 8192x53248: 3-12% slower than 8).
 */
template <typename T, int OP> static int nb_cluster(long nvec, int force)
{
	if (OP != RW_SOFTMAX && sizeof(T) == 2 && nvec > 4096 && nvec <= 5120)
		return 5;
	long most = sizeof(T) == 4 && !force && nvec > 4096 && nvec <= 6144 ? 2048 : 1024;
	int nc = 1;
	while (nc < 8 && (nvec + nc - 1) / nc > most)
		nc *= 2;
	return nc;
}

template <typename T, int OP> static int nb_pipe_plan(struct nb_plan *p, long rows, long hidden)
{
	int pipe, force, vpt, dev = 0, major = 0, optin = 0;
	long cap, nvec = hidden / vec<T>::N;
	nb_env(OP == RW_SOFTMAX ? "KPROF_SOFTMAX_BWD" : "KPROF_NORM_BWD", &pipe, &force, &vpt,
	       &cap);
	if (!pipe || nvec < 512 || cudaGetDevice(&dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) !=
		    cudaSuccess ||
	    major < 8)
		return 0;
	int nc = nb_cluster<T, OP>(nvec, force);
	long cw = (nvec + nc - 1) / nc;
	if (cw > 1024 && cw <= 2048 && sizeof(T) == 4 && !force)
		vpt = 4, cap = 0;
	if ((cw > 1024 && vpt != 4) || (nc > 1 && major < 9))
		return 0;
	/*
	 * Softmax: only rows beyond the register kernel's 4096 vectors (which spill there; H100,
	 * bf16 4096x65536: 0.58 ms instead of 1.85; 8192x32768: 0.58 vs 0.58)
	 */
	if (OP == RW_SOFTMAX && !force && nvec <= 4096)
		return 0;
	unsigned threads = (unsigned)(((cw + vpt - 1) / vpt + 31) / 32 * 32);
	/*
	 * Clusters of 2-vector threads: softmax's row sums one row ahead (ahead 1), RMSNorm's one
	 * row behind (2: bf16 8192x32768 on H100 86.8% instead of 86.1%; its own limit, bench/
	 * README's L2 build, 4247 GB/s instead of 3846).  LayerNorm stays on kprof_norm_bwd_pipe:
	 * one row ahead it spills at 2 blocks an SM and is slower at one (H200 62% vs 71%), one
	 * row behind too (H100 82.8% vs 86.7%).
	 */
	int ahead = nc > 1 && vpt == 2 && OP != RW_LAYERNORM ? (OP == RW_RMSNORM ? 2 : 1) : 0;
	size_t stage = (size_t)2 * vpt * threads * 16, lim = (size_t)optin - 1024;
	if (cap > 0 && (size_t)cap < lim)
		lim = (size_t)cap;
	int stages = (int)(lim / stage);
	if (stages > 12)
		stages = 12;
	if (stages < 2)
		return 0;
	const void *fn;
	if (ahead)
		fn = ahead_fn<T, OP>(ahead);
	else if (vpt == 4)
		fn = pipe_fn4<T, OP>();
	else if (nc == 1)
		fn = vpt == 2 ? pipe_fn<T, OP, 2, false>() : pipe_fn<T, OP, 1, false>();
	else
		fn = vpt == 2 ? pipe_fn<T, OP, 2, true>() : pipe_fn<T, OP, 1, true>();
	long ncl = pipe_resident(fn, threads, stage * stages, nc);
	/*
	 * fewer than 16 rows a cluster: the ring's fill is not repaid (H200, 4096x4096, 15.5 rows a
	 * block: slower; from 32 rows down to 16 the pipe still won on H100, bf16 8192x4096 and
	 * 4096x8192 at 31 rows: 75-79% of the DRAM peak instead of 64-72%);
	 * but always for rows over 4096 vectors, where the register kernels spill (H100, bf16 and
	 * fp16 77-400 rows of 36864-65536: 0.32-0.90x the time; fp32 4096x65536 RMSNorm and
	 * LayerNorm 18% of the DRAM peak before)
	 */
	if (ncl < 1 || (!force && rows < 16 * ncl && nvec <= 4096))
		return 0;
	p->pipe = 1, p->ahead = ahead, p->vpt = vpt, p->nc = nc, p->stages = stages;
	p->threads = threads;
	p->cw = cw, p->smem = stage * stages;
	p->partial = ncl < rows ? ncl : rows;
	p->grid = p->partial * nc;
	return 1;
}

template <typename T, int OP, int I> static const void *nb_kernel()
{
	return (const void *)kprof_norm_bwd<T, OP, I, true>;
}

template <typename T, int OP> static struct nb_plan nb_plan_for(long rows, long hidden)
{
	struct nb_plan p;
	memset(&p, 0, sizeof(p));
	if (nb_pipe_plan<T, OP>(&p, rows, hidden))
		return p;
	long nvec = hidden / vec<T>::N;
	p.items = items_for(nvec, 1);
	p.threads = threads_for(nvec, p.items);
	p.split = p.items >= (OP == RW_LAYERNORM ? 4 : 8);
	if (p.split) {
		p.gx = (nvec + 31) / 32;
		/* one wave: a second, partial one left most SMs idle (H200: 0.90 ms, 37% of peak) */
		long want = resident_blocks((const void *)kprof_norm_wgrad<T, OP>, 256) / p.gx;
		long most = (rows + 63) / 64;
		p.gy = want < most ? want : most;
		if (p.gy < 1)
			p.gy = 1;
		p.per = (rows + p.gy - 1) / p.gy;
		p.grid = rows;
		p.partial = p.gy;
		return p;
	}
	const void *fn;
	switch (p.items) {
	case 1:
		fn = nb_kernel<T, OP, 1>();
		break;
	case 2:
		fn = nb_kernel<T, OP, 2>();
		break;
	default:
		fn = nb_kernel<T, OP, 4>();
		break;
	}
	long g = resident_blocks(fn, p.threads);
	p.grid = g < rows ? g : rows;
	p.partial = p.grid;
	return p;
}

/* kprof_norm_bwd_pipe on plan @p (clusters of p->nc blocks where p->nc > 1). */
template <typename T, int OP>
static int pipe_launch(const struct nb_plan *p, void *dx, float *pw, float *pb, const void *dy,
		       const void *x, const float *mean, const float *rstd, const void *w,
		       long rows, long hidden)
{
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute at[1];
	memset(&cfg, 0, sizeof(cfg));
	memset(at, 0, sizeof(at));
	cfg.gridDim = dim3((unsigned)p->grid), cfg.blockDim = dim3(p->threads);
	cfg.dynamicSmemBytes = p->smem, cfg.stream = 0;
	at[0].id = cudaLaunchAttributeClusterDimension;
	at[0].val.clusterDim.x = (unsigned)p->nc, at[0].val.clusterDim.y = 1;
	at[0].val.clusterDim.z = 1;
	cfg.attrs = at, cfg.numAttrs = p->nc > 1 ? 1 : 0;
	T *o = (T *)dx;
	const T *d = (const T *)dy, *xx = (const T *)x, *ww = (const T *)w;
#define K(V, C)                                                                                    \
	cudaLaunchKernelEx(&cfg, kprof_norm_bwd_pipe<T, OP, V, C, !C, pipe_x<C, V>>, o, pw, pb, d, \
			   xx, mean, rstd, ww, rows, hidden, p->cw, p->stages)
	if constexpr (OP == RW_RMSNORM)
		if (p->ahead == 2)
			return (int)cudaLaunchKernelEx(&cfg, kprof_norm_bwd_lag<T, OP>, o, pw, pb,
						       d, xx, mean, rstd, ww, rows, hidden, p->cw,
						       p->stages);
	if constexpr (OP != RW_LAYERNORM)
		if (p->ahead)
			return (int)cudaLaunchKernelEx(&cfg, kprof_norm_bwd_ahead<T, OP>, o, pw, pb,
						       d, xx, mean, rstd, ww, rows, hidden, p->cw,
						       p->stages);
	if constexpr (sizeof(T) == 4)
		if (p->vpt == 4)
			return (int)K(4, true);
	cudaError_t e = p->nc > 1 ? (p->vpt == 2 ? K(2, true) : K(1, true))
				  : (p->vpt == 2 ? K(2, false) : K(1, false));
#undef K
	return (int)e;
}

/*
 * Softmax backward on kprof_norm_bwd_pipe (y in x's place, no weight, no partial rows) where
 * nb_pipe_plan applies; -1 where it does not.
 */
template <typename T>
static int sm_bwd_pipe(void *dx, const void *y, const void *dy, long rows, long hidden)
{
	struct nb_plan p;
	memset(&p, 0, sizeof(p));
	if (!nb_pipe_plan<T, RW_SOFTMAX>(&p, rows, hidden))
		return -1;
	int e = pipe_launch<T, RW_SOFTMAX>(&p, dx, NULL, NULL, dy, y, NULL, NULL, NULL, rows,
					   hidden);
	return e ? e : (int)cudaGetLastError();
}

/*
 * kprof_colsum over @nout partial sets (dweight, and LayerNorm's dbias) in one launch, a
 * programmatic dependent of the kernel before it on sm_90 (H100, bf16 8192x32768 LayerNorm: the
 * two launches and their gaps were 10 us of the op's 565).
 */
template <typename T>
static int colsum_launch(T *dw, T *db, const float *pw, const float *pb, int nout, long n,
			 long hidden)
{
	static int major = -1;
	int dev = 0;
	if (major < 0 && (cudaGetDevice(&dev) != cudaSuccess ||
			  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) !=
				  cudaSuccess)) {
		cudaGetLastError();
		major = 0;
	}
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute at[1];
	memset(&cfg, 0, sizeof(cfg));
	memset(at, 0, sizeof(at));
	cfg.gridDim = dim3((unsigned)((hidden + 31) / 32), (unsigned)nout),
	cfg.blockDim = dim3(256);
	at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
	at[0].val.programmaticStreamSerializationAllowed = 1;
	cfg.attrs = at, cfg.numAttrs = major >= 9 ? 1 : 0;
	return (int)cudaLaunchKernelEx(&cfg, kprof_colsum<T>, dw, db, pw, pb, n, hidden);
}

template <typename T, int OP>
static int nb_launch(void *dx, void *dw, void *db, const void *dy, const void *x, const float *mean,
		     const float *rstd, const void *w, void *ws, long rows, long hidden)
{
	if (hidden % vec<T>::N || rows <= 0 || rows > 2147483647L || hidden <= 0 || hidden > 65536)
		return (int)cudaErrorInvalidValue;
	struct nb_plan p = nb_plan_for<T, OP>(rows, hidden);
	float *pw = (float *)ws, *pb = pw + (size_t)p.partial * hidden;
	dim3 g((unsigned)p.grid), b(p.threads);
#define L(I, A)                                                                                    \
	kprof_norm_bwd<T, OP, I, A><<<g, b>>>((T *)dx, pw, pb, (const T *)dy, (const T *)x, mean,  \
					      rstd, (const T *)w, rows, hidden)
	if (p.pipe) {
		int e = pipe_launch<T, OP>(&p, dx, pw, pb, dy, x, mean, rstd, w, rows, hidden);
		if (e)
			return e;
	} else if (p.split) {
		switch (p.items) {
		case 4:
			L(4, false);
			break;
		case 8:
			L(8, false);
			break;
		default:
			L(16, false);
			break;
		}
		dim3 wg((unsigned)p.gx, (unsigned)p.gy), wb(256);
		kprof_norm_wgrad<T, OP><<<wg, wb>>>(pw, pb, (const T *)dy, (const T *)x, mean, rstd,
						    rows, hidden, p.per);
	} else {
		switch (p.items) {
		case 1:
			L(1, true);
			break;
		case 2:
			L(2, true);
			break;
		default:
			L(4, true);
			break;
		}
	}
#undef L
	return colsum_launch<T>((T *)dw, (T *)db, pw, pb, OP == RW_LAYERNORM ? 2 : 1, p.partial,
				hidden);
}

extern "C" size_t kk_norm_bwd_workspace(int op, int kt, long rows, long hidden)
{
	struct nb_plan p;
	if (rows <= 0 || hidden <= 0)
		return 0;
	if (kt == KT_F32)
		p = op == RW_LAYERNORM ? nb_plan_for<float, RW_LAYERNORM>(rows, hidden)
				       : nb_plan_for<float, RW_RMSNORM>(rows, hidden);
	else if (kt == KT_F16)
		p = op == RW_LAYERNORM ? nb_plan_for<__half, RW_LAYERNORM>(rows, hidden)
				       : nb_plan_for<__half, RW_RMSNORM>(rows, hidden);
	else
		p = op == RW_LAYERNORM ? nb_plan_for<__nv_bfloat16, RW_LAYERNORM>(rows, hidden)
				       : nb_plan_for<__nv_bfloat16, RW_RMSNORM>(rows, hidden);
	return (size_t)p.partial * hidden * sizeof(float) * (op == RW_LAYERNORM ? 2 : 1);
}

extern "C" int kk_norm_bwd(int op, void *dx, void *dw, void *db, const void *dy, const void *x,
			   const float *mean, const float *rstd, const void *w, void *ws, int kt,
			   long rows, long hidden)
{
#define B(T)                                                                                       \
	(op == RW_LAYERNORM                                                                        \
		 ? nb_launch<T, RW_LAYERNORM>(dx, dw, db, dy, x, mean, rstd, w, ws, rows, hidden)  \
		 : nb_launch<T, RW_RMSNORM>(dx, dw, db, dy, x, mean, rstd, w, ws, rows, hidden))
	switch (kt) {
	case KT_F32:
		return B(float);
	case KT_F16:
		return B(__half);
	default:
		return B(__nv_bfloat16);
	}
#undef B
}

/*
 * The backward's launch: U vectors a thread in flight in blocks of T threads, 8 and 512 by
 * default (measured against 4 and 256: +2 to +4% on H100 and H200, bf16, vocab 32000 and
 * 128256); KPROF_XENT_BWD=U:T for A/B measurements (U 1, 2, 4 or 8; T 128, 256, 512 or 1024).
 */
template <typename T>
static int xent_bwd(void *out, const void *dloss, const void *x, const int64_t *target,
		    const float *lse, long rows, long vocab, long ignore)
{
	const char *v = getenv("KPROF_XENT_BWD");
	int u = 8, t = 512;
	if (v && *v) {
		char *e;
		u = (int)strtol(v, &e, 10);
		if (*e == ':')
			t = (int)strtol(e + 1, NULL, 10);
	}
	if (u != 1 && u != 2 && u != 4)
		u = 8;
	if (t != 128 && t != 256 && t != 1024)
		t = 512;
	dim3 g((unsigned)rows), b((unsigned)t);
#define R(U)                                                                                       \
	kprof_xent_bwd<T, U><<<g, b>>>((T *)out, (const T *)dloss, (const T *)x,                   \
				       (const long long *)target, lse, vocab, ignore)
	switch (u) {
	case 1:
		R(1);
		break;
	case 2:
		R(2);
		break;
	case 8:
		R(8);
		break;
	default:
		R(4);
		break;
	}
#undef R
	return (int)cudaGetLastError();
}

template <typename T>
static int xent(int bwd, void *out, float *lse, const void *dloss, const void *x,
		const int64_t *target, long rows, long vocab, long ignore)
{
	if (vocab % vec<T>::N || vocab <= 0 || rows <= 0 || rows > 2147483647L)
		return (int)cudaErrorInvalidValue;
	dim3 g((unsigned)rows), b(256);
	if (bwd)
		return xent_bwd<T>(out, dloss, x, target, lse, rows, vocab, ignore);
	else
		kprof_xent_fwd<T><<<g, b>>>((T *)out, lse, (const T *)x, (const long long *)target,
					    vocab, ignore);
	return (int)cudaGetLastError();
}

extern "C" int kk_xent_fwd(void *loss, float *lse, const void *x, const int64_t *target, int kt,
			   long rows, long vocab, long ignore)
{
	switch (kt) {
	case KT_F32:
		return xent<float>(0, loss, lse, NULL, x, target, rows, vocab, ignore);
	case KT_F16:
		return xent<__half>(0, loss, lse, NULL, x, target, rows, vocab, ignore);
	default:
		return xent<__nv_bfloat16>(0, loss, lse, NULL, x, target, rows, vocab, ignore);
	}
}

extern "C" int kk_xent_bwd(void *dx, const void *dloss, const void *x, const int64_t *target,
			   const float *lse, int kt, long rows, long vocab, long ignore)
{
	float *l = (float *)lse;
	switch (kt) {
	case KT_F32:
		return xent<float>(1, dx, l, dloss, x, target, rows, vocab, ignore);
	case KT_F16:
		return xent<__half>(1, dx, l, dloss, x, target, rows, vocab, ignore);
	default:
		return xent<__nv_bfloat16>(1, dx, l, dloss, x, target, rows, vocab, ignore);
	}
}

extern "C" int kk_fill_targets(int64_t *t, long n, long vocab, uint64_t seed)
{
	if (n <= 0 || vocab <= 0)
		return (int)cudaErrorInvalidValue;
	kprof_fill_targets<<<(unsigned)((n + 255) / 256), 256>>>((long long *)t, n, vocab, seed);
	return (int)cudaGetLastError();
}
