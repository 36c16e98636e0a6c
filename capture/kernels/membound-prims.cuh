/*
 * membound-prims.cuh — the device primitives of kprof's row-wise kernels (membound-*.cu):
 * 16-byte vectors packed and unpacked, block reductions, the exp2 and online-softmax helpers,
 * the per-vector statistics of a streaming pass, and the PTX of cp.async, mbarriers, st.async
 * and cluster placement (sm_80 / sm_90).
 */
#ifndef KPROF_MEMBOUND_PRIMS_CUH
#define KPROF_MEMBOUND_PRIMS_CUH

#include "kernels/membound.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cooperative_groups.h>
#include <cuda_runtime.h>

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

#endif /* KPROF_MEMBOUND_PRIMS_CUH */
