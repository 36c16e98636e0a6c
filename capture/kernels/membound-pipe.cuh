/*
 * membound-pipe.cuh — the pipelined backward (kprof_norm_bwd_pipe, and in clusters
 * kprof_norm_bwd_lag and kprof_norm_bwd_ahead): its per-thread state, ring and cluster row-sum
 * exchanges.  Included by membound-bwd.cu, which launches it for RMSNorm, LayerNorm and the
 * softmax backward.
 */
#ifndef KPROF_MEMBOUND_PIPE_CUH
#define KPROF_MEMBOUND_PIPE_CUH

#include "kernels/membound-prims.cuh"

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
 * the exchange, cluster_sums or cluster_warp_sums (mb_pipe_plan).
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

#endif /* KPROF_MEMBOUND_PIPE_CUH */
