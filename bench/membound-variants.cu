// bench/membound-variants.cu — kprof's row-wise kernels (capture/membound.cu, compiled in)
// side by side with variants of them, in one run on one GPU: GB/s and % of the DRAM peak from
// the compulsory bytes, and the largest difference of each variant's output from kprof's.
// What decided session 5's kernel choices (bench/RESULTS.md, 2026-11-26 "membound"): register
// kernels with min-blocks bounds (rw_reg), two passes with the second from L2 (rw_l2,
// smb_l2), the cluster backward with row sums one row ahead (nbp_la), and the KPROF_NORM_BWD /
// KPROF_SOFTMAX_BWD settings of the production kernels.
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -Icapture \
//        -o /tmp/mbv bench/membound-variants.cu && /tmp/mbv [fwd,bwd] [SHAPES]
// SHAPES: how many of 8192x32768, 32768x8192, 16384x4096, 4096x4096, 4096x65536 (bf16).
#include "membound.cu"
#include <stdio.h>
#include <vector>
#include <string>

#define CK(x)                                                                                      \
	do {                                                                                       \
		cudaError_t e_ = (x);                                                              \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,                  \
				cudaGetErrorString(e_));                                           \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

typedef __nv_bfloat16 bf;

/* ---- forward variants ---- */

/* register kernel with a min-blocks bound, LayerNorm optionally with one shifted reduction */
template <typename T, int OP, int ITEMS, int NT, int MINB, bool SHIFT>
__global__ void __launch_bounds__(NT, MINB)
	rw_reg(T *y, const T *x, const T *w, const T *b, float *mean_out, float *rstd_out,
	       long hidden, float eps)
{
	__shared__ float sh[64];
	constexpr int VE = vec<T>::N;
	long nvec = hidden / VE;
	long r = blockIdx.x;
	const uint4 *xr = (const uint4 *)(x + (size_t)r * hidden);
	uint4 raw[ITEMS];
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		long j = threadIdx.x + (long)i * NT;
		raw[i] = j < nvec ? __ldcs(xr + j) : make_uint4(0, 0, 0, 0);
	}
	if (!(OP == RW_LAYERNORM && SHIFT)) {
		rowwise_row<T, OP, ITEMS>(raw, r, y, w, b, mean_out, rstd_out, hidden, eps, sh);
		return;
	}
	float k = (float)x[(size_t)r * hidden], a = 0.f, q = 0.f;
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		float v[VE];
		unpack<T>(raw[i], v);
		if (threadIdx.x + (long)i * NT < nvec)
#pragma unroll
			for (int e = 0; e < VE; e++) {
				float d = v[e] - k;
				a += d, q += d * d;
			}
	}
	block_reduce2(a, q, sh);
	float inv = 1.f / (float)hidden, md = a * inv;
	float var = fmaxf(q * inv - md * md, 0.f);
	float mu = k + md, scale = rsqrtf(var + eps), shift = -mu * scale;
	if (threadIdx.x == 0)
		mean_out[r] = mu, rstd_out[r] = scale;
	uint4 *yr = (uint4 *)(y + (size_t)r * hidden);
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		long j = threadIdx.x + (long)i * NT;
		if (j >= nvec)
			continue;
		float v[VE], o[VE], wf[VE], bf_[VE];
		unpack<T>(raw[i], v);
		unpack<T>(__ldg((const uint4 *)w + j), wf);
		unpack<T>(__ldg((const uint4 *)b + j), bf_);
#pragma unroll
		for (int e = 0; e < VE; e++)
			o[e] = (v[e] * scale + shift) * wf[e] + bf_[e];
		__stcs(yr + j, pack<T>(o));
	}
}

/* two passes over the row, the second from L2: few registers, many rows an SM */
template <typename T, int OP, int NT, int U, int MINB>
__global__ void __launch_bounds__(NT, MINB)
	rw_l2(T *y, const T *x, const T *w, const T *b, float *mean_out, float *rstd_out,
	      long hidden, float eps)
{
	__shared__ float sh[64];
	constexpr int VE = vec<T>::N;
	long nvec = hidden / VE, r = blockIdx.x;
	const uint4 *xr = (const uint4 *)(x + (size_t)r * hidden);
	float m = -INFINITY, a = 0.f, q = 0.f, k = 0.f;
	if (OP == RW_LAYERNORM)
		k = (float)x[(size_t)r * hidden];
	for (long base = threadIdx.x; base < nvec; base += (long)U * NT) {
		uint4 raw[U];
#pragma unroll
		for (int u = 0; u < U; u++) {
			long j = base + (long)u * NT;
			raw[u] = j < nvec ? __ldcg(xr + j) : make_uint4(0, 0, 0, 0);
		}
#pragma unroll
		for (int u = 0; u < U; u++) {
			if (base + (long)u * NT >= nvec)
				break;
			float v[VE];
			unpack<T>(raw[u], v);
			if (OP == RW_SOFTMAX) {
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
	}
	float scale, shift = 0.f;
	if (OP == RW_SOFTMAX) {
		block_reduce_ms(m, a, sh);
		scale = 1.f / a;
	} else if (OP == RW_RMSNORM) {
		scale = rsqrtf(block_reduce<false>(q, sh) / (float)hidden + eps);
		if (threadIdx.x == 0)
			rstd_out[r] = scale;
	} else {
		block_reduce2(a, q, sh);
		float inv = 1.f / (float)hidden, md = a * inv;
		float var = fmaxf(q * inv - md * md, 0.f);
		float mu = k + md;
		scale = rsqrtf(var + eps), shift = -mu * scale;
		if (threadIdx.x == 0)
			mean_out[r] = mu, rstd_out[r] = scale;
	}
	uint4 *yr = (uint4 *)(y + (size_t)r * hidden);
	float ml = m * L2E;
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
			if (j >= nvec)
				break;
			float v[VE], o[VE];
			unpack<T>(raw[u], v);
			if (OP == RW_SOFTMAX) {
#pragma unroll
				for (int e = 0; e < VE; e++)
					o[e] = ex2(fmaf(v[e], L2E, -ml)) * scale;
			} else {
				float wf[VE], bf_[VE];
				unpack<T>(__ldg((const uint4 *)w + j), wf);
				if (OP == RW_LAYERNORM)
					unpack<T>(__ldg((const uint4 *)b + j), bf_);
#pragma unroll
				for (int e = 0; e < VE; e++)
					o[e] = (v[e] * scale + shift) * wf[e] +
					       (OP == RW_LAYERNORM ? bf_[e] : 0.f);
			}
			__stcs(yr + j, pack<T>(o));
		}
	}
}

/* softmax backward, two passes (second from L2) */
template <typename T, int NT, int U, int MINB>
__global__ void __launch_bounds__(NT, MINB) smb_l2(T *dx, const T *y, const T *dy, long hidden)
{
	__shared__ float sh[64];
	constexpr int VE = vec<T>::N;
	long nvec = hidden / VE;
	size_t off = (size_t)blockIdx.x * hidden;
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
		for (int u = 0; u < U; u++) {
			float p[VE], g[VE];
			unpack<T>(ry[u], p);
			unpack<T>(rd[u], g);
#pragma unroll
			for (int e = 0; e < VE; e++)
				a += p[e] * g[e];
		}
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
			float p[VE], g[VE], o[VE];
			unpack<T>(ry[u], p);
			unpack<T>(rd[u], g);
#pragma unroll
			for (int e = 0; e < VE; e++)
				o[e] = p[e] * (g[e] - a);
			__stcs(xr + j, pack<T>(o));
		}
	}
}


/* kprof_norm_bwd_pipe with the cluster exchange one row ahead (4 exchange buffers) */
template <typename T, int OP, int VPT, int MINB = 1, int NT = (VPT == 1 ? 1024 : 512), bool WREG = true>
__global__ void __launch_bounds__(NT, MINB)
	nbp_la(T *dx, float *pw, float *pb, const T *dy, const T *x, const float *mean,
	       const float *rstd, const T *w, long rows, long hidden, long cw, int stages)
{
	constexpr int VE = vec<T>::N;
	extern __shared__ uint4 ring[];
	__shared__ float sh[64];
	__shared__ float red[4][8][2];
	__shared__ unsigned long long xbar[4];
	long nvec = hidden / VE;
	cg::cluster_group cl = cg::this_cluster();
	int q = (int)cl.block_rank(), nc = (int)cl.num_blocks();
	long cid = blockIdx.x / nc, ncl = gridDim.x / nc;
	if (threadIdx.x == 0) {
		for (int i = 0; i < 4; i++)
			mbar_init(&xbar[i], 1);
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
	}
	cl.sync();
	long j0 = (long)q * cw, jend = j0 + cw < nvec ? j0 + cw : nvec;
	unsigned bd = blockDim.x;
	uint4 wr[VPT];
	float dw[VPT][VE], db[OP == RW_LAYERNORM ? VPT : 1][VE];
#pragma unroll
	for (int i = 0; i < VPT; i++) {
		long j = j0 + threadIdx.x + (long)i * bd;
		wr[i] = WREG && j < jend && OP != RW_SOFTMAX ? __ldg((const uint4 *)w + j)
						     : make_uint4(0, 0, 0, 0);
#pragma unroll
		for (int e = 0; e < VE; e++) {
			dw[i][e] = 0.f;
			db[OP == RW_LAYERNORM ? i : 0][e] = 0.f;
		}
	}
	auto wv_at = [&](int i, long j) {
		return WREG || OP == RW_SOFTMAX ? wr[i] : __ldg((const uint4 *)w + j);
	};
	auto issue = [&](long r, int s) {
		if (r < rows) {
			size_t off = (size_t)r * hidden;
#pragma unroll
			for (int i = 0; i < VPT; i++) {
				long j = j0 + threadIdx.x + (long)i * bd;
				if (j < jend) {
					cp_async16(&ring[((size_t)(s * 2) * VPT + i) * bd + threadIdx.x],
						   (const uint4 *)(x + off) + j);
					cp_async16(&ring[((size_t)(s * 2 + 1) * VPT + i) * bd + threadIdx.x],
						   (const uint4 *)(dy + off) + j);
				}
			}
		}
		cp_commit();
	};
	/* this thread's partial sums of row k (slot s) pushed to every peer's buffer k & 3 */
	auto sums = [&](long k, int s, float rs, float mu) {
		float sg = 0.f, sgx = 0.f;
#pragma unroll
		for (int i = 0; i < VPT; i++) {
			long j = j0 + threadIdx.x + (long)i * bd;
			if (j >= jend)
				continue;
			float xv[VE], dv[VE], wv[VE];
			unpack<T>(ring[((size_t)(s * 2) * VPT + i) * bd + threadIdx.x], xv);
			unpack<T>(ring[((size_t)(s * 2 + 1) * VPT + i) * bd + threadIdx.x], dv);
			unpack<T>(wv_at(i, j), wv);
#pragma unroll
			for (int e = 0; e < VE; e++) {
				float g = OP == RW_SOFTMAX ? xv[e] * dv[e] : wv[e] * dv[e];
				sg += g, sgx += g * ((xv[e] - mu) * rs);
			}
		}
		block_reduce2(sg, sgx, sh);
		int b = (int)(k & 3);
		if (threadIdx.x == 0)
			mbar_expect(&xbar[b], (unsigned)nc * 8);
		if ((int)threadIdx.x < nc)
			st_async2(&red[b][q][0], &xbar[b], (unsigned)threadIdx.x, sg, sgx);
	};
	for (int s = 0; s < stages; s++)
		issue(cid + (long)s * ncl, s);
	float inv_h = 1.f / (float)hidden;
	float rs = OP != RW_SOFTMAX && cid < rows ? __ldg(rstd + cid) : 0.f;
	float mu = OP == RW_LAYERNORM && cid < rows ? __ldg(mean + cid) : 0.f;
	if (cid < rows) {
		cp_wait(stages - 1);
		sums(0, 0, rs, mu);
	}
	long k = 0;
	for (long r = cid; r < rows; r += ncl, k++) {
		int s = (int)(k % stages), s1 = (int)((k + 1) % stages);
		float rs1 = 0.f, mu1 = 0.f;
		if (r + ncl < rows) {
			rs1 = OP != RW_SOFTMAX ? __ldg(rstd + r + ncl) : 0.f;
			mu1 = OP == RW_LAYERNORM ? __ldg(mean + r + ncl) : 0.f;
			cp_wait(stages - 2);
			sums(k + 1, s1, rs1, mu1);
		}
		int b = (int)(k & 3);
		mbar_wait_cluster(&xbar[b], (unsigned)(k >> 2) & 1);
		float sg = 0.f, sgx = 0.f;
		for (int t = 0; t < nc; t++)
			sg += red[b][t][0], sgx += red[b][t][1];
		float a = OP == RW_LAYERNORM ? sg * inv_h : 0.f, c = sgx * inv_h;
		uint4 *outr = (uint4 *)(dx + (size_t)r * hidden);
#pragma unroll
		for (int i = 0; i < VPT; i++) {
			long j = j0 + threadIdx.x + (long)i * bd;
			if (j >= jend)
				continue;
			float xv[VE], dv[VE], wv[VE], o[VE];
			unpack<T>(ring[((size_t)(s * 2) * VPT + i) * bd + threadIdx.x], xv);
			unpack<T>(ring[((size_t)(s * 2 + 1) * VPT + i) * bd + threadIdx.x], dv);
			unpack<T>(wv_at(i, j), wv);
#pragma unroll
			for (int e = 0; e < VE; e++) {
				float xh = (xv[e] - mu) * rs;
				if (OP == RW_SOFTMAX) {
					o[e] = xv[e] * (dv[e] - sg);
					continue;
				}
				o[e] = rs * (wv[e] * dv[e] - a - xh * c);
				dw[i][e] += dv[e] * xh;
				if (OP == RW_LAYERNORM)
					db[OP == RW_LAYERNORM ? i : 0][e] += dv[e];
			}
			__stcs(outr + j, pack<T>(o));
		}
		issue(r + (long)stages * ncl, s);
		rs = rs1, mu = mu1;
	}
	cp_wait(0);
#pragma unroll
	for (int i = 0; i < VPT; i++) {
		long j = j0 + threadIdx.x + (long)i * bd;
		if (OP == RW_SOFTMAX || j >= jend)
			continue;
		float4 *p = (float4 *)(pw + (size_t)cid * hidden + j * VE);
#pragma unroll
		for (int e = 0; e < VE; e += 4)
			p[e / 4] = make_float4(dw[i][e], dw[i][e + 1], dw[i][e + 2], dw[i][e + 3]);
		if (OP == RW_LAYERNORM) {
			float4 *pq = (float4 *)(pb + (size_t)cid * hidden + j * VE);
			constexpr int kk = OP == RW_LAYERNORM ? 1 : 0;
#pragma unroll
			for (int e = 0; e < VE; e += 4)
				pq[e / 4] = make_float4(db[i * kk][e], db[i * kk][e + 1],
							db[i * kk][e + 2], db[i * kk][e + 3]);
		}
	}
	cl.sync();
}

/* launch nbp_la like nb_pipe_plan's cluster plan with a ring of @cap bytes; then colsum */
static long la_ncl;
template <int OP, int VPT, int MINB = 1, int NT = (VPT == 1 ? 1024 : 512), bool WREG = true>
static void nbp_la_run(bf *dx, bf *dw, bf *db, const bf *dy, const bf *x, const float *mean,
		       const float *rstd, const bf *w, float *pw, long rows, long hidden, long cap,
		       long maxcw = 1024)
{
	long nvec = hidden / 8;
	int nc = 1;
	while (nc < 8 && (nvec + nc - 1) / nc > maxcw)
		nc *= 2;
	long cw = (nvec + nc - 1) / nc;
	unsigned threads = (unsigned)(((cw + VPT - 1) / VPT + 31) / 32 * 32);
	size_t stage = (size_t)2 * VPT * threads * 16;
	int stages = (int)(cap / stage);
	if (stages > 12)
		stages = 12;
	const void *fn = (const void *)nbp_la<bf, OP, VPT, MINB, NT, WREG>;
	long ncl = pipe_resident(fn, threads, stage * stages, nc);
	la_ncl = ncl * nc;
	long partial = ncl < rows ? ncl : rows;
	float *pb = pw + (size_t)partial * hidden;
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute at[1];
	memset(&cfg, 0, sizeof(cfg));
	memset(at, 0, sizeof(at));
	cfg.gridDim = dim3((unsigned)(partial * nc)), cfg.blockDim = dim3(threads);
	cfg.dynamicSmemBytes = stage * stages;
	at[0].id = cudaLaunchAttributeClusterDimension;
	at[0].val.clusterDim.x = (unsigned)nc, at[0].val.clusterDim.y = 1, at[0].val.clusterDim.z = 1;
	cfg.attrs = at, cfg.numAttrs = 1;
	CK(cudaLaunchKernelEx(&cfg, nbp_la<bf, OP, VPT, MINB, NT, WREG>, dx, pw, pb, dy, x, mean, rstd, w, rows,
			      hidden, cw, stages));
	if (OP == RW_SOFTMAX)
		return;
	dim3 g2((unsigned)((hidden + 31) / 32)), b2(256);
	kprof_colsum<bf><<<g2, b2>>>(dw, dw, pw, pw, partial, hidden);
	if (OP == RW_LAYERNORM)
		kprof_colsum<bf><<<g2, b2>>>(db, db, pb, pb, partial, hidden);
}

/* ---- harness ---- */

static double peak_gbs;
static cudaEvent_t e0, e1;

template <typename F> static double time_ms(F fn)
{
	for (int i = 0; i < 3; i++)
		fn();
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	CK(cudaEventRecord(e0, 0));
	for (int i = 0; i < 20; i++)
		fn();
	CK(cudaEventRecord(e1, 0));
	CK(cudaEventSynchronize(e1));
	float ms = 0;
	CK(cudaEventElapsedTime(&ms, e0, e1));
	CK(cudaGetLastError());
	return ms / 20;
}

__global__ void init_bf(bf *p, long n, unsigned seed, float sc, float off)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	for (; i < n; i += (long)gridDim.x * blockDim.x) {
		unsigned z = (unsigned)i * 2654435761u + seed;
		z ^= z >> 13, z *= 0x5bd1e995u, z ^= z >> 15;
		p[i] = __float2bfloat16(((z & 0xffff) / 65536.f - 0.5f) * sc + off);
	}
}

__global__ void maxdiff(const bf *a, const bf *b, long n, float *out)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	float m = 0.f;
	for (; i < n; i += (long)gridDim.x * blockDim.x)
		m = fmaxf(m, fabsf(__bfloat162float(a[i]) - __bfloat162float(b[i])));
	atomicMax((int *)out, __float_as_int(m));
}

static float diff(const bf *a, const bf *b, long n, float *d)
{
	CK(cudaMemset(d, 0, 4));
	maxdiff<<<1024, 256>>>(a, b, n, d);
	float h;
	CK(cudaMemcpy(&h, d, 4, cudaMemcpyDeviceToHost));
	return h;
}

static void row(const char *what, long R, long H, const char *v, double ms, double bytes, float md)
{
	double gbs = bytes / ms / 1e6;
	printf("%-10s %6ldx%-6ld %-28s %8.4f ms %7.1f GB/s %5.1f%%  maxdiff %.3g\n", what, R, H, v,
	       ms, gbs, 100 * gbs / peak_gbs, md);
	fflush(stdout);
}

template <int OP> static void fwd_variants(long R, long H, bf *y, bf *yref, bf *x, bf *w, bf *b,
					   float *mean, float *rstd, float *d)
{
	const char *nm = OP == RW_SOFTMAX ? "softmax" : OP == RW_RMSNORM ? "rmsnorm" : "layernorm";
	long n = R * H;
	double bytes = 2.0 * n * 2 + (OP == RW_RMSNORM ? H * 2 + 4 * R : OP == RW_LAYERNORM ? 2 * H * 2 + 8 * R : 0);
	long nvec = H / 8;
	double t = time_ms([&] { kk_rowwise(OP, yref, x, w, b, mean, rstd, KT_BF16, R, H, 1e-5f); });
	row(nm, R, H, "base", t, bytes, 0);
#define REG(IT, NT, MB, SH)                                                                        \
	if (nvec <= (long)(IT) * (NT) && nvec > (long)(IT) * (NT) / 2) {                           \
		t = time_ms([&] {                                                                  \
			rw_reg<bf, OP, IT, NT, MB, SH><<<(unsigned)R, NT>>>(y, x, w, b, mean, rstd, \
									     H, 1e-5f);           \
		});                                                                                \
		row(nm, R, H, "reg it" #IT " nt" #NT " mb" #MB " sh" #SH, t, bytes,                \
		    diff(y, yref, n, d));                                                          \
	}
	REG(8, 512, 1, false);
	REG(8, 128, 5, false);
	REG(4, 256, 4, false);
	if (OP == RW_LAYERNORM) {
		REG(16, 256, 2, true);
		REG(8, 128, 5, true);
	}
#define L2V(NT, U, MB)                                                                             \
	t = time_ms([&] {                                                                          \
		rw_l2<bf, OP, NT, U, MB><<<(unsigned)R, NT>>>(y, x, w, b, mean, rstd, H, 1e-5f);   \
	});                                                                                        \
	row(nm, R, H, "l2 nt" #NT " u" #U " mb" #MB, t, bytes, diff(y, yref, n, d));
	L2V(512, 4, 2);
	L2V(512, 4, 1);
	L2V(256, 4, 4);
	L2V(1024, 2, 1);
}

static void bwd_variants(long R, long H, bf *dx, bf *dxref, bf *y, bf *dy, bf *x, bf *w,
			 float *mean, float *rstd, bf *dw, bf *db, void *ws, float *d)
{
	long n = R * H;
	double sb = 3.0 * n * 2;
	static const char *envs[] = { "", "pipe:2:96", "pipe:2:200" };
	unsetenv("KPROF_SOFTMAX_BWD");
	double t = time_ms([&] { kk_rowsoftmax_bwd(dxref, y, dy, KT_BF16, R, H); });
	row("smbwd", R, H, "base", t, sb, 0);
	for (int k = 1; k < 3; k++) {
		setenv("KPROF_SOFTMAX_BWD", envs[k], 1);
		t = time_ms([&] { kk_rowsoftmax_bwd(dx, y, dy, KT_BF16, R, H); });
		row("smbwd", R, H, envs[k], t, sb, diff(dx, dxref, n, d));
	}
	unsetenv("KPROF_SOFTMAX_BWD");
#define SML2(NT, U, MB)                                                                            \
	t = time_ms([&] { smb_l2<bf, NT, U, MB><<<(unsigned)R, NT>>>(dx, y, dy, H); });            \
	row("smbwd", R, H, "l2 nt" #NT " u" #U " mb" #MB, t, sb, diff(dx, dxref, n, d));
	SML2(256, 4, 3);
	SML2(512, 2, 2);
	SML2(1024, 2, 1);
	if (H / 8 > 1024) {
		t = time_ms([&] { nbp_la_run<RW_SOFTMAX, 2>(dx, NULL, NULL, dy, y, NULL, NULL, NULL, (float *)ws, R, H, 96 << 10); });
		row("smbwd", R, H, "lookahead 96k", t, sb, diff(dx, dxref, n, d));
		t = time_ms([&] { nbp_la_run<RW_SOFTMAX, 2, 2>(dx, NULL, NULL, dy, y, NULL, NULL, NULL, (float *)ws, R, H, 96 << 10); });
		row("smbwd", R, H, "lookahead 96k mb2", t, sb, diff(dx, dxref, n, d));
	}
	for (int op = RW_RMSNORM; op <= RW_LAYERNORM; op++) {
		const char *nm = op == RW_RMSNORM ? "rmsbwd" : "lnbwd";
		double nbb = 3.0 * n * 2 + (op == RW_RMSNORM ? 2 * H * 2 + 4 * R : 3 * H * 2 + 8 * R);
		kk_rowwise(op, y, x, w, w, mean, rstd, KT_BF16, R, H, 1e-5f);
		unsetenv("KPROF_NORM_BWD");
		t = time_ms([&] {
			kk_norm_bwd(op, dxref, dw, db, dy, x, mean, rstd, w, ws, KT_BF16, R, H);
		});
		row(nm, R, H, "base", t, nbb, 0);
		static bf *dwref, *dbref;
		if (!dwref) {
			CK(cudaMalloc(&dwref, 65536 * 2));
			CK(cudaMalloc(&dbref, 65536 * 2));
		}
		CK(cudaMemcpy(dwref, dw, H * 2, cudaMemcpyDeviceToDevice));
		CK(cudaMemcpy(dbref, db, H * 2, cudaMemcpyDeviceToDevice));
		CK(cudaMemset(dw, 0, H * 2));
		CK(cudaMemset(db, 0, H * 2));
		for (int k = 1; k < 3; k++) {
			setenv("KPROF_NORM_BWD", envs[k], 1);
			t = time_ms([&] {
				kk_norm_bwd(op, dx, dw, db, dy, x, mean, rstd, w, ws, KT_BF16, R, H);
			});
			row(nm, R, H, envs[k], t, nbb, diff(dx, dxref, n, d));
		}
		unsetenv("KPROF_NORM_BWD");
		if (op == RW_LAYERNORM && H / 8 > 1024) {
			for (int ncw : { 8, 2 }) {
				struct nb_plan p2 = nb_plan_for<bf, RW_LAYERNORM>(R, H);
				long nvec = H / 8;
				p2.nc = ncw, p2.cw = (nvec + ncw - 1) / ncw;
				if (p2.cw > 1024 || !p2.pipe)
					continue;
				p2.vpt = p2.cw > 512 ? 2 : 2;
				p2.threads = (unsigned)((p2.cw / 2 + 31) / 32 * 32);
				if (p2.threads > 512)
					continue;
				size_t stage = (size_t)2 * 2 * p2.threads * 16;
				p2.stages = (int)((96 << 10) / stage);
				if (p2.stages > 12)
					p2.stages = 12;
				p2.smem = stage * p2.stages;
				long ncl = pipe_resident(pipe_fn<bf, RW_LAYERNORM, 2, true>(), p2.threads, p2.smem, ncw);
				p2.partial = ncl < R ? ncl : R;
				p2.grid = p2.partial * ncw;
				float *pw = (float *)ws, *pb = pw + (size_t)p2.partial * H;
				t = time_ms([&] {
					{ int pe = pipe_launch<bf, RW_LAYERNORM>(&p2, dx, pw, pb, dy, x, mean, rstd, w, R, H); CK((cudaError_t)pe); }
					kprof_colsum<bf><<<(unsigned)((H + 31) / 32), 256>>>(dw, dw, pw, pw, p2.partial, H);
					kprof_colsum<bf><<<(unsigned)((H + 31) / 32), 256>>>(db, db, pb, pb, p2.partial, H);
				});
				char nmv[64];
				snprintf(nmv, sizeof nmv, "nc%d thr%u st%d ctas%ld", ncw, p2.threads, p2.stages, p2.grid);
				row(nm, R, H, nmv, t, nbb, diff(dx, dxref, n, d));
				printf("   dw maxdiff %.3g db maxdiff %.3g\n", diff(dw, dwref, H, d), diff(db, dbref, H, d));
			}
		}
	}
}

int main(int argc, char **argv)
{
	int dev = 0, khz = 0, bits = 0;
	CK(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev));
	CK(cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, dev));
	peak_gbs = 2.0 * khz * 1e3 * bits / 8 / 1e9;
	cudaDeviceProp p;
	CK(cudaGetDeviceProperties(&p, dev));
	printf("# %s, DRAM peak %.0f GB/s\n", p.name, peak_gbs);
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	long shapes[][2] = { { 8192, 32768 }, { 32768, 8192 }, { 16384, 4096 }, { 4096, 4096 }, { 4096, 65536 } };
	long maxn = 8192L * 32768;
	bf *x, *y, *yref, *dy, *w, *b, *dw, *db, *dx2;
	float *mean, *rstd, *d;
	void *ws;
	CK(cudaMalloc(&x, maxn * 2));
	CK(cudaMalloc(&y, maxn * 2));
	CK(cudaMalloc(&yref, maxn * 2));
	CK(cudaMalloc(&dy, maxn * 2));
	CK(cudaMalloc(&dx2, maxn * 2));
	CK(cudaMalloc(&w, 65536 * 2));
	CK(cudaMalloc(&b, 65536 * 2));
	CK(cudaMalloc(&dw, 65536 * 2));
	CK(cudaMalloc(&db, 65536 * 2));
	CK(cudaMalloc(&mean, 65536 * 4));
	CK(cudaMalloc(&rstd, 65536 * 4));
	CK(cudaMalloc(&d, 4));
	CK(cudaMalloc(&ws, 1L << 30));
	init_bf<<<2048, 256>>>(x, maxn, 1, 4.f, 0.5f);
	init_bf<<<2048, 256>>>(dy, maxn, 2, 2.f, 0.f);
	init_bf<<<64, 256>>>(w, 65536, 3, 1.f, 1.f);
	init_bf<<<64, 256>>>(b, 65536, 4, 1.f, 0.f);
	CK(cudaDeviceSynchronize());
	{
		double t = time_ms([&] { CK(cudaMemcpyAsync(y, x, maxn * 2, cudaMemcpyDeviceToDevice, 0)); });
		row("memcpy", 8192, 32768, "cudaMemcpyAsync", t, 4.0 * maxn, 0);
	}
	const char *only = argc > 1 ? argv[1] : "fwd,bwd";
	int nshapes = argc > 2 ? atoi(argv[2]) : 4, si = 0;
	for (auto &s : shapes) {
		long R = s[0], H = s[1];
		if (si++ >= nshapes)
			break;
		if (strstr(only, "fwd")) {
			fwd_variants<RW_SOFTMAX>(R, H, y, yref, x, w, b, mean, rstd, d);
			fwd_variants<RW_LAYERNORM>(R, H, y, yref, x, w, b, mean, rstd, d);
			fwd_variants<RW_RMSNORM>(R, H, y, yref, x, w, b, mean, rstd, d);
		}
		if (strstr(only, "bwd")) {
			kk_rowwise(RW_SOFTMAX, yref, x, w, b, mean, rstd, KT_BF16, R, H, 1e-5f);
			CK(cudaMemcpy(y, yref, R * H * 2, cudaMemcpyDeviceToDevice));
			bwd_variants(R, H, yref, dx2, y, dy, x, w, mean, rstd, dw,
				     db, ws, d);
		}
	}
	return 0;
}
