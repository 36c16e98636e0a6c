/*
 * membound-bwd.cu — the backwards of softmax (kk_rowsoftmax_bwd), RMSNorm and LayerNorm
 * (kk_norm_bwd, kk_norm_bwd_workspace; membound.h): the register kernels (kprof_softmax_bwd,
 * kprof_norm_bwd), the two-pass softmax (kprof_softmax_bwd_l2), the split norm (kprof_norm_bwd
 * then kprof_norm_wgrad), the pipelined kernels of membound-pipe.cuh (the softmax's long rows
 * too) and kprof_colsum, as mb_softmax_plan and mb_norm_plan (membound-plan.c) choose.  One
 * file: the softmax backward's pipelined launch is the norms' (pipe_launch, one template).
 */
#include "kernels/kernels.h"
#include "kernels/membound-dev.h"
#include "kernels/membound-pipe.cuh"
#include "kernels/membound-plan.h"

#include <string.h>
#include <type_traits>

/* @a + sum of y dy over one vector of each (the softmax backward's row sum) */
template <typename T>
__device__ __forceinline__ float softmax_dot(const uint4 &y, const uint4 &dy, float a)
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
__device__ __forceinline__ uint4 softmax_grad(const uint4 &y, const uint4 &dy, float a)
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
			a = softmax_dot<T>(ry[u], rd[u], a);
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
			__stcs(xr + j, softmax_grad<T>(ry[u], rd[u], a));
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
		a = softmax_dot<T>(ry[i], rd[i], a);
	block_reduce2(a, unused, sh);
	uint4 *xr = (uint4 *)(dx + off);
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		long j = threadIdx.x + (long)i * blockDim.x;
		if (j >= nvec)
			continue;
		__stcs(xr + j, softmax_grad<T>(ry[i], rd[i], a));
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

/* ---- launchers ---- */

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

/* the cluster kernel of the plan's @ahead: 1 kprof_norm_bwd_ahead, 2 kprof_norm_bwd_lag */
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

template <typename T, int OP, int I> static const void *nb_kernel()
{
	return (const void *)kprof_norm_bwd<T, OP, I, true>;
}

/* The pipelined kernel plan @p names (mb_pipe_plan). */
template <typename T, int OP> static const void *pipe_plan_fn(const struct mb_bwd_plan *p)
{
	if (p->ahead)
		return ahead_fn<T, OP>(p->ahead);
	if (p->vpt == 4)
		return pipe_fn4<T, OP>();
	if (p->nc == 1)
		return p->vpt == 2 ? pipe_fn<T, OP, 2, false>() : pipe_fn<T, OP, 1, false>();
	return p->vpt == 2 ? pipe_fn<T, OP, 2, true>() : pipe_fn<T, OP, 1, true>();
}

/* mb_resident_fn: the kernel @kernel of plan @p, resident on the current device */
template <typename T, int OP>
static long resident(void *ctx, int kernel, const struct mb_bwd_plan *p)
{
	(void)ctx;
	if (kernel == MB_K_PIPE)
		return mb_pipe_resident(pipe_plan_fn<T, OP>(p), p->threads, p->smem, p->nc);
	if constexpr (OP == RW_SOFTMAX) {
		return 0; /* the softmax's plans ask for the pipelined kernel only */
	} else {
		if (kernel == MB_K_WGRAD)
			return mb_resident_blocks((const void *)kprof_norm_wgrad<T, OP>, 256);
		switch (p->items) {
		case 1:
			return mb_resident_blocks(nb_kernel<T, OP, 1>(), p->threads);
		case 2:
			return mb_resident_blocks(nb_kernel<T, OP, 2>(), p->threads);
		default:
			return mb_resident_blocks(nb_kernel<T, OP, 4>(), p->threads);
		}
	}
}

template <typename T, int OP> static struct mb_bwd_plan nb_plan_for(long rows, long hidden)
{
	struct mb_dev d;
	int dev;
	mb_device(&d, &dev);
	return mb_norm_plan(OP, (int)sizeof(T), rows, hidden, &d, mb_env(), resident<T, OP>, NULL);
}

/* kprof_norm_bwd_pipe on plan @p (clusters of p->nc blocks where p->nc > 1). */
template <typename T, int OP>
static int pipe_launch(const struct mb_bwd_plan *p, void *dx, float *pw, float *pb, const void *dy,
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
 * kprof_softmax_bwd_l2's dynamic shared memory (unused) for one block an SM on @dev
 * (mb_softmax_one_block): half an SM's and 1 KiB, 0 (no limit) where that cannot be set.  Once
 * per element type and device: the attribute set and queries stay off the timed launches.
 */
template <typename T> static size_t softmax_l2_smem(int dev)
{
	static struct {
		int known;
		size_t smem;
	} cache[MB_MAX_DEV];
	const void *fn = (const void *)kprof_softmax_bwd_l2<T, 1024, 2>;
	int per_sm = 0;
	if (dev >= 0 && dev < MB_MAX_DEV && cache[dev].known)
		return cache[dev].smem;
	size_t smem = 0;
	if (cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) !=
	    cudaSuccess) {
		cudaGetLastError();
	} else {
		smem = (size_t)per_sm / 2 + 1024;
		if (cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
					 (int)smem) != cudaSuccess) {
			cudaGetLastError();
			smem = 0;
		}
	}
	if (dev >= 0 && dev < MB_MAX_DEV)
		cache[dev].smem = smem, cache[dev].known = 1;
	return smem;
}

template <typename T>
static int softmax_bwd(void *dx, const void *y, const void *dy, long rows, long hidden)
{
	struct mb_dev d;
	struct mb_softmax_plan p;
	int dev;
	mb_device(&d, &dev);
	if (mb_softmax_plan(&p, (int)sizeof(T), rows, hidden, &d, mb_env(), resident<T, RW_SOFTMAX>,
			    NULL) < 0)
		return (int)cudaErrorInvalidValue;
	if (p.kind == MB_SMX_PIPE) {
		/* y in x's place, no weight, no partial rows */
		int e = pipe_launch<T, RW_SOFTMAX>(&p.pipe, dx, NULL, NULL, dy, y, NULL, NULL, NULL,
						   rows, hidden);
		return e ? e : (int)cudaGetLastError();
	}
	dim3 g((unsigned)rows), b(p.threads);
	if (p.kind == MB_SMX_L2) {
		size_t smem = p.one_block ? softmax_l2_smem<T>(dev) : 0;
		kprof_softmax_bwd_l2<T, 1024, 2>
			<<<g, 1024, smem>>>((T *)dx, (const T *)y, (const T *)dy, hidden);
		return (int)cudaGetLastError();
	}
#define L(I) kprof_softmax_bwd<T, I><<<g, b>>>((T *)dx, (const T *)y, (const T *)dy, hidden)
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
		return softmax_bwd<float>(dx, y, dy, rows, hidden);
	case KT_F16:
		return softmax_bwd<__half>(dx, y, dy, rows, hidden);
	default:
		return softmax_bwd<__nv_bfloat16>(dx, y, dy, rows, hidden);
	}
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
	struct mb_dev d;
	int dev;
	mb_device(&d, &dev);
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute at[1];
	memset(&cfg, 0, sizeof(cfg));
	memset(at, 0, sizeof(at));
	cfg.gridDim = dim3((unsigned)((hidden + 31) / 32), (unsigned)nout),
	cfg.blockDim = dim3(256);
	at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
	at[0].val.programmaticStreamSerializationAllowed = 1;
	cfg.attrs = at, cfg.numAttrs = d.major >= 9 ? 1 : 0;
	return (int)cudaLaunchKernelEx(&cfg, kprof_colsum<T>, dw, db, pw, pb, n, hidden);
}

template <typename T, int OP>
static int nb_launch(void *dx, void *dw, void *db, const void *dy, const void *x, const float *mean,
		     const float *rstd, const void *w, void *ws, long rows, long hidden)
{
	if (hidden % vec<T>::N || rows <= 0 || rows > 2147483647L || hidden <= 0 || hidden > 65536)
		return (int)cudaErrorInvalidValue;
	struct mb_bwd_plan p = nb_plan_for<T, OP>(rows, hidden);
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
	struct mb_bwd_plan p;
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
