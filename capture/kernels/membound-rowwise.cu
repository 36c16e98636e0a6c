/*
 * membound-rowwise.cu — the forwards of softmax, RMSNorm and LayerNorm over the last dim of a
 * [rows, hidden] tensor (kk_rowwise, membound.h): one kernel template for the three (OP), in
 * registers (kprof_rowwise), in two passes over L2 (kprof_rowwise_l2) or on a cluster
 * (kprof_rowwise_cl), as mb_fwd_plan (membound-plan.c) chooses.
 */
#include "kernels/kernels.h"
#include "kernels/membound-dev.h"
#include "kernels/membound-plan.h"
#include "kernels/membound-prims.cuh"

#include <string.h>

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

/*
 * Vectors a thread of the forward kernels keeps: grow up to MB_FWD_ITEMS while the block has
 * more than 128 threads (more rows in flight per SM), beyond it only to stay within the block
 * size (8 vectors: a 512-thread bound, 16: 1024).
 */
#ifndef MB_FWD_ITEMS
#define MB_FWD_ITEMS 8
#endif

/* kprof_rowwise_cl on plan @p: clusters of p->nc blocks of p->threads */
template <typename T, int OP>
static int cl_launch(const struct mb_fwd_plan *p, int dev, void *y, const void *x, const void *w,
		     const void *b, float *mean, float *rstd, long rows, long hidden, float eps)
{
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute at[1];
	memset(&cfg, 0, sizeof(cfg));
	memset(at, 0, sizeof(at));
	cfg.gridDim = dim3((unsigned)(rows * p->nc));
	cfg.blockDim = dim3(p->threads);
	at[0].id = cudaLaunchAttributeClusterDimension;
	at[0].val.clusterDim.x = p->nc, at[0].val.clusterDim.y = 1, at[0].val.clusterDim.z = 1;
	cfg.attrs = at, cfg.numAttrs = 1;
	/* the kernel's dynamic shared-memory limit on each device, raised as needed */
	static size_t set[MB_MAX_DEV];
	size_t have = dev >= 0 && dev < MB_MAX_DEV ? set[dev] : 0;
	cfg.dynamicSmemBytes = p->smem;
	if (cfg.dynamicSmemBytes > have) {
		cudaError_t e = cudaFuncSetAttribute(kprof_rowwise_cl<T, OP>,
						     cudaFuncAttributeMaxDynamicSharedMemorySize,
						     (int)cfg.dynamicSmemBytes);
		if (e != cudaSuccess)
			return (int)e;
		if (dev >= 0 && dev < MB_MAX_DEV)
			set[dev] = cfg.dynamicSmemBytes;
	}
	return (int)cudaLaunchKernelEx(&cfg, kprof_rowwise_cl<T, OP>, (T *)y, (const T *)x,
				       (const T *)w, (const T *)b, mean, rstd, hidden, eps);
}

template <typename T, int OP>
static int launch(void *y, const void *x, const void *w, const void *b, float *mean, float *rstd,
		  long rows, long hidden, float eps)
{
	struct mb_dev d;
	struct mb_fwd_plan p;
	int dev;
	mb_device(&d, &dev);
	if (mb_fwd_plan(&p, OP, (int)sizeof(T), rows, hidden, &d, mb_env(), MB_FWD_ITEMS) < 0)
		return (int)cudaErrorInvalidValue;
	if (p.kind == MB_FWD_CL)
		return cl_launch<T, OP>(&p, dev, y, x, w, b, mean, rstd, rows, hidden, eps);
	dim3 g((unsigned)rows);
	if (p.kind == MB_FWD_L2) {
		kprof_rowwise_l2<T, OP, 1024, 2><<<g, 1024>>>((T *)y, (const T *)x, (const T *)w,
							      (const T *)b, mean, rstd, hidden,
							      eps);
		return (int)cudaGetLastError();
	}
	dim3 blk(p.threads);
#define L(I)                                                                                       \
	kprof_rowwise<T, OP, I><<<g, blk>>>((T *)y, (const T *)x, (const T *)w, (const T *)b,      \
					    mean, rstd, hidden, eps)
	switch (p.items) {
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
