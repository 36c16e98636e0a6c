/*
 * membound-xent.cu — cross-entropy over the last dim of logits [rows, vocab] (kk_xent_fwd,
 * kk_xent_bwd, membound.h), streaming (any vocab), and kk_fill_targets (its random targets).
 */
#include "kernels/kernels.h"
#include "kernels/membound-plan.h"
#include "kernels/membound-prims.cuh"

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
 * The backward's launch: U vectors a thread in flight in blocks of T threads, 8 and 512 by
 * default (measured against 4 and 256: +2 to +4% on H100 and H200, bf16, vocab 32000 and
 * 128256); KPROF_XENT_BWD=U:T for A/B measurements (U 1, 2, 4 or 8; T 128, 256, 512 or 1024;
 * read once: mb_env).
 */
template <typename T>
static int xent_bwd(void *out, const void *dloss, const void *x, const int64_t *target,
		    const float *lse, long rows, long vocab, long ignore)
{
	int u = mb_env()->xent_u, t = mb_env()->xent_t;
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
