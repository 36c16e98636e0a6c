// bench/membound-variants.cu — kprof's row-wise kernels (capture/kernels/membound.cu, compiled in)
// side by side with variants of them, in one run on one GPU: GB/s and % of the DRAM peak from
// the compulsory bytes, and the largest difference of each variant's output from kprof's.
// What decided session 5's kernel choices (bench/RESULTS.md, 2026-11-26 "membound"):
// kprof_rowwise bounded to more blocks an SM (rw_reg), kprof_rowwise_l2 and
// kprof_softmax_bwd_l2 at other block sizes and occupancies, the norm backwards under the
// KPROF_NORM_BWD / KPROF_SOFTMAX_BWD settings, and LayerNorm's cluster backward in clusters of 8.
// Session 6's (MBV_WX=1, RESULTS 13:10-13:38): the row-sum exchange by block or by warp, one
// row ahead or behind, one or two vectors a thread, and each one's latency floor; built with
// -DMB_ROW(r)='((r) & 127)' every kernel runs from L2 and shows its own limit (bench/README).
// Session 7's (MBV_LN=1, RESULTS 14:20-15:05): LayerNorm's backward at 4 vectors a thread.
// Session 8's (fwd, RESULTS 16:20): the 512-vector forward (hidden 4096) at other block shapes.
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -Icapture \
//        -o /tmp/mbv bench/membound-variants.cu capture/kernels/membound-plan.c \
//        && /tmp/mbv [fwd,bwd] [SHAPES]
// SHAPES: how many of 8192x32768, 32768x8192, 16384x4096, 4096x4096, 4096x65536 (bf16).
#include "kernels/membound.cu"
#include "kernels/membound-rowwise.cu"
#include "kernels/membound-bwd.cu"
#include "kernels/membound-xent.cu"
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

/* kprof_rowwise with a min-blocks bound and its own block size */
template <typename T, int OP, int ITEMS, int NT, int MINB>
__global__ void __launch_bounds__(NT, MINB)
	rw_reg(T *y, const T *x, const T *w, const T *b, float *mean_out, float *rstd_out,
	       long hidden, float eps)
{
	__shared__ float sh[64];
	long nvec = hidden / vec<T>::N;
	const uint4 *xr = (const uint4 *)(x + (size_t)blockIdx.x * hidden);
	uint4 raw[ITEMS];
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		long j = threadIdx.x + (long)i * NT;
		raw[i] = j < nvec ? __ldcs(xr + j) : make_uint4(0, 0, 0, 0);
	}
	rowwise_row<T, OP, ITEMS>(raw, blockIdx.x, y, w, b, mean_out, rstd_out, hidden, eps, sh);
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
#define REG(IT, NT, MB)                                                                            \
	if (nvec <= (long)(IT) * (NT) && nvec > (long)(IT) * (NT) / 2) {                           \
		t = time_ms([&] {                                                                  \
			rw_reg<bf, OP, IT, NT, MB><<<(unsigned)R, NT>>>(y, x, w, b, mean, rstd, H, \
									 1e-5f);                  \
		});                                                                                \
		row(nm, R, H, "reg it" #IT " nt" #NT " mb" #MB, t, bytes, diff(y, yref, n, d));    \
	}
	REG(8, 512, 1);
	REG(8, 512, 2);
	REG(16, 256, 2);
	REG(8, 128, 5);
	REG(4, 256, 4);
	/* 512 vectors (hidden 4096): kprof's 4 vectors x 128 threads at 8 blocks an SM, 2 x 256 */
	REG(4, 128, 8);
	REG(2, 256, 4);
	REG(2, 256, 8);
#define L2V(NT, U)                                                                                 \
	t = time_ms([&] {                                                                          \
		kprof_rowwise_l2<bf, OP, NT, U><<<(unsigned)R, NT>>>(y, x, w, b, mean, rstd, H,    \
								      1e-5f);                      \
	});                                                                                        \
	row(nm, R, H, "l2 nt" #NT " u" #U, t, bytes, diff(y, yref, n, d));
	L2V(512, 4);
	L2V(256, 4);
	L2V(1024, 2);
}

/* @p's ring: as many stages of @V vectors a thread as @kb KiB hold (3-12); 0 under 3 */
static int ring_fit(struct mb_bwd_plan *p, int V, int kb, int minst = 3)
{
	size_t stage = (size_t)2 * V * p->threads * 16;
	p->stages = (int)(((size_t)kb << 10) / stage);
	if (p->stages > 12)
		p->stages = 12;
	p->smem = stage * p->stages;
	return p->stages >= minst;
}

/*
 * The cluster backward (kprof_norm_bwd_ahead for RMSNorm, kprof_norm_bwd_pipe for LayerNorm)
 * on clusters of @ncw blocks with a ring of at most @kb KiB a block: more, smaller blocks an SM
 * than mb_pipe_plan picks.
 */
template <int OP>
static void cluster_variant(long R, long H, int ncw, int kb, bf *dx, bf *dxref, bf *dy, bf *x,
			    bf *w, float *mean, float *rstd, bf *dw, bf *db, bf *dwref, bf *dbref,
			    void *ws, float *d, const char *nm, double nbb)
{
	struct mb_bwd_plan p2 = nb_plan_for<bf, OP>(R, H);
	long nvec = H / 8, n = R * H;
	p2.nc = ncw, p2.cw = (nvec + ncw - 1) / ncw, p2.vpt = 2;
	p2.ahead = OP != RW_LAYERNORM;
	p2.threads = (unsigned)((p2.cw / 2 + 31) / 32 * 32);
	if (p2.cw > 1024 || !p2.pipe || p2.threads > 512)
		return;
	if (!ring_fit(&p2, 2, kb))
		return;
	const void *fn = p2.ahead ? ahead_fn<bf, OP>(p2.ahead) : pipe_fn<bf, OP, 2, true>();
	long ncl = mb_pipe_resident(fn, p2.threads, p2.smem, ncw);
	p2.partial = ncl < R ? ncl : R;
	p2.grid = p2.partial * ncw;
	float *pw = (float *)ws, *pb = pw + (size_t)p2.partial * H;
	double t = time_ms([&] {
		int pe = pipe_launch<bf, OP>(&p2, dx, pw, pb, dy, x, mean, rstd, w, R, H);
		CK((cudaError_t)pe);
		pe = colsum_launch<bf>(dw, db, pw, pb, OP == RW_LAYERNORM ? 2 : 1, p2.partial, H);
		CK((cudaError_t)pe);
	});
	char nmv[64];
	snprintf(nmv, sizeof nmv, "nc%d thr%u %dk st%d ctas%ld", ncw, p2.threads, kb, p2.stages,
		 p2.grid);
	row(nm, R, H, nmv, t, nbb, diff(dx, dxref, n, d));
	printf("   dw maxdiff %.3g db maxdiff %.3g\n", diff(dw, dwref, H, d),
	       OP == RW_LAYERNORM ? diff(db, dbref, H, d) : 0.f);
}

/*
 * The cluster backward (kprof_norm_bwd_ahead for RMSNorm, kprof_norm_bwd_pipe for LayerNorm)
 * with the row sums exchanged warp by warp (WX: cluster_warp_sums) or block by block
 * (cluster_sums), on clusters of @ncw blocks and a ring of at most @kb KiB.  @ncl_force > 0:
 * only that many clusters over @R rows (R / ncl rows each): far from the DRAM limit, the time a
 * row takes a block, its latency floor (what the H200's 1.4x bandwidth an SM asks of it).
 */
template <int OP, bool WX, int V = 2, int KIND = OP != RW_LAYERNORM, bool HOLD = false>
static void wx_variant(long R, long H, int ncw, int kb, long ncl_force, bf *dx, bf *dxref, bf *dy,
		       bf *x, bf *w, float *mean, float *rstd, bf *dw, bf *db, bf *dwref, bf *dbref,
		       void *ws, float *d, const char *nm, double nbb)
{
	typedef typename std::conditional<WX, cluster_warp_sums, cluster_sums>::type X;
	struct mb_bwd_plan p2 = nb_plan_for<bf, OP>(8192, H);
	long nvec = H / 8, n = R * H;
	p2.nc = ncw, p2.cw = (nvec + ncw - 1) / ncw;
	p2.threads = (unsigned)(((p2.cw + V - 1) / V + 31) / 32 * 32);
	if ((V <= 2 && p2.cw > 1024) || !p2.pipe || p2.threads > 1024 ||
	    (WX && ncw * (int)(p2.threads / 32) > XW_SLOTS))
		return;
	if (!ring_fit(&p2, V, kb, kb == 64 ? 2 : 3))
		return;
	const void *fn;
	if constexpr (KIND == 2)
		fn = (const void *)kprof_norm_bwd_lag<bf, OP, X>;
	else if constexpr (KIND == 0 || V == 1)
		fn = (const void *)kprof_norm_bwd_pipe<bf, OP, V, true, HOLD, X>;
	else
		fn = (const void *)kprof_norm_bwd_ahead<bf, OP, X>;
	long ncl = mb_pipe_resident(fn, p2.threads, p2.smem, ncw);
	if (ncl_force > 0)
		ncl = ncl_force;
	p2.partial = ncl < R ? ncl : R;
	p2.grid = p2.partial * ncw;
	float *pw = (float *)ws, *pb = pw + (size_t)p2.partial * H;
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute at[1];
	memset(&cfg, 0, sizeof(cfg));
	memset(at, 0, sizeof(at));
	cfg.gridDim = dim3((unsigned)p2.grid), cfg.blockDim = dim3(p2.threads);
	cfg.dynamicSmemBytes = p2.smem;
	at[0].id = cudaLaunchAttributeClusterDimension;
	at[0].val.clusterDim.x = (unsigned)ncw, at[0].val.clusterDim.y = 1, at[0].val.clusterDim.z = 1;
	cfg.attrs = at, cfg.numAttrs = 1;
	double t = time_ms([&] {
		if constexpr (KIND == 2)
			CK(cudaLaunchKernelEx(&cfg, kprof_norm_bwd_lag<bf, OP, X>, dx, pw, pb, dy, x,
					      mean, rstd, w, R, H, p2.cw, p2.stages));
		else if constexpr (KIND == 0 || V == 1)
			CK(cudaLaunchKernelEx(&cfg, kprof_norm_bwd_pipe<bf, OP, V, true, HOLD, X>, dx,
					      pw, pb, dy, x, mean, rstd, w, R, H, p2.cw, p2.stages));
		else
			CK(cudaLaunchKernelEx(&cfg, kprof_norm_bwd_ahead<bf, OP, X>, dx, pw, pb, dy, x,
					      mean, rstd, w, R, H, p2.cw, p2.stages));
		if (ncl_force <= 0)
			CK((cudaError_t)colsum_launch<bf>(dw, db, pw, pb, OP == RW_LAYERNORM ? 2 : 1,
							  p2.partial, H));
	});
	char nmv[80];
	snprintf(nmv, sizeof nmv, "%s v%d%s%s nc%d thr%u %dk st%d ctas%ld", WX ? "warpx" : "blockx", V,
		 KIND == 2 ? " lag" : KIND ? " ahead" : "", HOLD ? " hold" : "", ncw, p2.threads, kb,
		 p2.stages, p2.grid);
	if (ncl_force > 0) {
		printf("%-10s %6ldx%-6ld %-28s floor %7.3f us a row (%ld rows a cluster)\n", nm, R, H,
		       nmv, t * 1e3 / (double)(R / ncl), R / ncl);
		return;
	}
	row(nm, R, H, nmv, t, nbb, diff(dx, dxref, n, d));
	printf("   dw maxdiff %.3g db maxdiff %.3g\n", diff(dw, dwref, H, d),
	       OP == RW_LAYERNORM ? diff(db, dbref, H, d) : 0.f);
}

/* MBV_WX: both exchanges at full size and their latency floors, beside kprof's choice */
template <int OP>
static void wx_all(long R, long H, bf *dx, bf *dxref, bf *dy, bf *x, bf *w, float *mean,
		   float *rstd, bf *dw, bf *db, bf *dwref, bf *dbref, void *ws, float *d, const char *nm,
		   double nbb)
{
#define WXV(WX, RR, NC, KB, F)                                                                     \
	wx_variant<OP, WX>(RR, H, NC, KB, F, dx, dxref, dy, x, w, mean, rstd, dw, db, dwref, dbref, \
			   ws, d, nm, nbb)
	for (int ncw : { 4, 8 })
		for (int kb : { 48, 96 }) {
			if (ncw == 4 && kb == 48)
				continue;
			WXV(false, R, ncw, kb, 0);
			WXV(true, R, ncw, kb, 0);
		}
	for (int ncw : { 4, 8 }) {
		WXV(false, 1024, ncw, 96, 4);
		WXV(true, 1024, ncw, 96, 4);
	}
#undef WXV
	/* LayerNorm with the row sums one row ahead (one block an SM: its db sums) */
	if constexpr (OP == RW_LAYERNORM)
		for (int ncw : { 4, 8 })
			for (int kb : { 96, 144, 192 }) {
				wx_variant<OP, false, 2, 1>(R, H, ncw, kb, 0, dx, dxref, dy, x, w, mean,
							    rstd, dw, db, dwref, dbref, ws, d, nm, nbb);
				wx_variant<OP, true, 2, 1>(R, H, ncw, kb, 0, dx, dxref, dy, x, w, mean,
							   rstd, dw, db, dwref, dbref, ws, d, nm, nbb);
			}
	/* the row sums one row behind, rows held in registers (both norms) */
	for (int ncw : { 4, 8 })
		for (int kb : { 96, 192 }) {
			wx_variant<OP, false, 2, 2>(R, H, ncw, kb, 0, dx, dxref, dy, x, w, mean, rstd, dw,
						    db, dwref, dbref, ws, d, nm, nbb);
			wx_variant<OP, true, 2, 2>(R, H, ncw, kb, 0, dx, dxref, dy, x, w, mean, rstd, dw,
						   db, dwref, dbref, ws, d, nm, nbb);
		}
	for (int ncw : { 4, 8 }) {
		wx_variant<OP, false, 2, 2>(1024, H, ncw, 96, 4, dx, dxref, dy, x, w, mean, rstd, dw,
					    db, dwref, dbref, ws, d, nm, nbb);
		wx_variant<OP, true, 2, 2>(1024, H, ncw, 96, 4, dx, dxref, dy, x, w, mean, rstd, dw,
					   db, dwref, dbref, ws, d, nm, nbb);
	}
	/* one vector a thread: fewer registers, more warps an SM */
	for (int ncw : { 4, 8 })
		for (int kb : { 48, 96 }) {
			wx_variant<OP, false, 1>(R, H, ncw, kb, 0, dx, dxref, dy, x, w, mean, rstd, dw, db,
						 dwref, dbref, ws, d, nm, nbb);
			wx_variant<OP, true, 1>(R, H, ncw, kb, 0, dx, dxref, dy, x, w, mean, rstd, dw, db,
						dwref, dbref, ws, d, nm, nbb);
		}
}

/* MBV_LN: LayerNorm's cluster backward at 4 vectors a thread (half the per-row work a thread) */
static void ln4_all(long R, long H, bf *dx, bf *dxref, bf *dy, bf *x, bf *w, float *mean,
		    float *rstd, bf *dw, bf *db, bf *dwref, bf *dbref, void *ws, float *d,
		    const char *nm, double nbb)
{
	const int L = RW_LAYERNORM;
#define LV(WX, V, HOLD, NC, KB, F)                                                                 \
	wx_variant<L, WX, V, 0, HOLD>(F > 0 ? 1024 : R, H, NC, KB, F, dx, dxref, dy, x, w, mean,    \
				      rstd, dw, db, dwref, dbref, ws, d, nm, nbb)
	LV(true, 2, false, 4, 96, 0);
	if (getenv("MBV_LN")[0] == '2') { /* for ncu: kprof's and one 4-vector variant */
		LV(true, 4, false, 4, 96, 0);
		return;
	}
	LV(true, 2, false, 4, 96, 4);
	LV(true, 2, false, 4, 64, 0);
	LV(true, 4, false, 4, 64, 0);
	LV(true, 4, false, 8, 64, 0);
	/* warp and block exchange, and the warp exchange with the rows held in registers */
	auto three = [&](int nc, int kb) {
		LV(true, 4, false, nc, kb, 0);
		LV(false, 4, false, nc, kb, 0);
		LV(true, 4, true, nc, kb, 0);
	};
	three(4, 96), three(4, 128);
	LV(true, 4, false, 4, 96, 4);
	LV(true, 4, true, 4, 96, 4);
	three(2, 96), three(2, 192);
	LV(true, 4, false, 2, 192, 4);
	LV(true, 4, false, 8, 48, 0);
#undef LV
}

static void bwd_variants(long R, long H, bf *dx, bf *dxref, bf *y, bf *dy, bf *x, bf *w,
			 float *mean, float *rstd, bf *dw, bf *db, void *ws, float *d)
{
	long n = R * H;
	double sb = 3.0 * n * 2;
	static const char *envs[] = { "", "pipe:2:96", "pipe:2:200", "pipe:1:96", "pipe:1:200" };
	int base_only = getenv("MBV_BASE") != NULL; /* only kprof's choices (for ncu) */
	int ln_only = getenv("MBV_LN") != NULL;      /* LayerNorm's 4-vector variants only */
	unsetenv("KPROF_SOFTMAX_BWD");
	mb_env_reload(); /* kprof reads its environment once */
	double t = 0;
	if (!ln_only) {
	t = time_ms([&] { kk_rowsoftmax_bwd(dxref, y, dy, KT_BF16, R, H); });
	row("smbwd", R, H, "base", t, sb, 0);
	}
	for (int k = 1; k < 3 && !base_only && !ln_only; k++) {
		setenv("KPROF_SOFTMAX_BWD", envs[k], 1);
		mb_env_reload(); /* kprof reads its environment once */
		t = time_ms([&] { kk_rowsoftmax_bwd(dx, y, dy, KT_BF16, R, H); });
		row("smbwd", R, H, envs[k], t, sb, diff(dx, dxref, n, d));
	}
	unsetenv("KPROF_SOFTMAX_BWD");
	mb_env_reload(); /* kprof reads its environment once */
	for (int one = 0; one < 2 && !base_only && !ln_only; one++) {
		const void *fn = (const void *)kprof_softmax_bwd_l2<bf, 1024, 2>;
		int per_sm = 0;
		CK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0));
		size_t smem = one ? (size_t)per_sm / 2 + 1024 : 0;
		CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
		t = time_ms([&] {
			kprof_softmax_bwd_l2<bf, 1024, 2><<<(unsigned)R, 1024, smem>>>(dx, y, dy, H);
		});
		row("smbwd", R, H, one ? "l2 nt1024 u2, 1 block an SM" : "l2 nt1024 u2, as many as fit",
		    t, sb, diff(dx, dxref, n, d));
	}
	for (int op = ln_only ? RW_LAYERNORM : RW_RMSNORM; op <= RW_LAYERNORM; op++) {
		const char *nm = op == RW_RMSNORM ? "rmsbwd" : "lnbwd";
		double nbb = 3.0 * n * 2 + (op == RW_RMSNORM ? 2 * H * 2 + 4 * R : 3 * H * 2 + 8 * R);
		kk_rowwise(op, y, x, w, w, mean, rstd, KT_BF16, R, H, 1e-5f);
		unsetenv("KPROF_NORM_BWD");
		mb_env_reload(); /* kprof reads its environment once */
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
		if (ln_only && H / 8 > 1024) {
			ln4_all(R, H, dx, dxref, dy, x, w, mean, rstd, dw, db, dwref, dbref, ws, d, nm, nbb);
			continue;
		}
		for (int k = 1; k < 5 && !base_only; k++) {
			setenv("KPROF_NORM_BWD", envs[k], 1);
			mb_env_reload(); /* kprof reads its environment once */
			t = time_ms([&] {
				kk_norm_bwd(op, dx, dw, db, dy, x, mean, rstd, w, ws, KT_BF16, R, H);
			});
			row(nm, R, H, envs[k], t, nbb, diff(dx, dxref, n, d));
		}
		unsetenv("KPROF_NORM_BWD");
		mb_env_reload(); /* kprof reads its environment once */
		if (H / 8 > 1024 && getenv("MBV_WX")) {
			if (op == RW_LAYERNORM)
				wx_all<RW_LAYERNORM>(R, H, dx, dxref, dy, x, w, mean, rstd, dw, db, dwref, dbref, ws, d, nm, nbb);
			else
				wx_all<RW_RMSNORM>(R, H, dx, dxref, dy, x, w, mean, rstd, dw, db, dwref, dbref, ws, d, nm, nbb);
			continue;
		}
		if (H / 8 > 1024 && !base_only)
			for (int ncw : { 4, 8 })
				for (int kb : { 48, 96, 144 }) {
					if (op == RW_LAYERNORM)
						cluster_variant<RW_LAYERNORM>(R, H, ncw, kb, dx, dxref, dy,
									      x, w, mean, rstd, dw, db,
									      dwref, dbref, ws, d, nm, nbb);
					else
						cluster_variant<RW_RMSNORM>(R, H, ncw, kb, dx, dxref, dy, x,
									    w, mean, rstd, dw, db, dwref,
									    dbref, ws, d, nm, nbb);
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
