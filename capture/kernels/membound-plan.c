/*
 * membound-plan.c — the row-wise kernels' launch choices (membound-plan.h), moved out of
 * membound-*.cu unchanged; the measurements behind each rule are cited where it is made.
 */
#include "kernels/membound-plan.h"
#include "kernels/membound.h"

#include <stdlib.h>
#include <string.h>

#define MB_ROWS_MAX 2147483647L

static void bwd_env_parse(struct mb_bwd_env *b, const char *v)
{
	b->pipe = 1, b->force = 0, b->vpt = 2, b->cap = 96 * 1024;
	if (!v || !*v)
		return;
	if (!strcmp(v, "rows")) {
		b->pipe = 0;
		return;
	}
	if (strncmp(v, "pipe", 4))
		return;
	b->force = 1;
	if (v[4] == ':') {
		char *e;
		b->vpt = strtol(v + 5, &e, 10) == 1 ? 1 : 2;
		if (*e == ':')
			b->cap = strtol(e + 1, NULL, 10) * 1024;
	}
}

void mb_env_parse(struct mb_env *e, const char *fwd, const char *norm_bwd, const char *softmax_bwd,
		  const char *xent_bwd)
{
	memset(e, 0, sizeof(*e));
	e->fwd_l2 = fwd && !strcmp(fwd, "l2");
	bwd_env_parse(&e->norm, norm_bwd);
	bwd_env_parse(&e->softmax, softmax_bwd);
	int u = 8, t = 512;
	if (xent_bwd && *xent_bwd) {
		char *end;
		u = (int)strtol(xent_bwd, &end, 10);
		if (*end == ':')
			t = (int)strtol(end + 1, NULL, 10);
	}
	if (u != 1 && u != 2 && u != 4)
		u = 8;
	if (t != 128 && t != 256 && t != 1024)
		t = 512;
	e->xent_u = u, e->xent_t = t;
}

static struct mb_env env_now;
static int env_read;

void mb_env_reload(void)
{
	mb_env_parse(&env_now, getenv("KPROF_FWD"), getenv("KPROF_NORM_BWD"),
		     getenv("KPROF_SOFTMAX_BWD"), getenv("KPROF_XENT_BWD"));
	env_read = 1;
}

const struct mb_env *mb_env(void)
{
	if (!env_read)
		mb_env_reload();
	return &env_now;
}

/* ---- forward ---- */

/*
 * Long rows on a cluster (kprof_rowwise_cl) of blocks of 4096 vectors (2048 for LayerNorm,
 * whose weight and bias loads follow the exchange), 2-8 blocks, 8 vectors a thread, where it
 * measured faster than the two passes (H100, bf16 4096x65536 softmax, RMSNorm and LayerNorm
 * 86/85/83% instead of 73/74/71%, fp32 86-88% instead of 62-71%, fp32 LayerNorm 82% instead of
 * 61%): softmax over 4096 vectors, RMSNorm and LayerNorm over 6144, below which the two passes
 * keep up (bf16 8192x45056 RMSNorm 85% against 82%, LayerNorm 84% against 80%), and not for
 * fewer rows than twice the SMs (77x65536: 47-65% against 53-80%); sm_90 and newer, unless
 * KPROF_FWD=l2 (A/B measurements: the two-pass kernel).
 */
static int fwd_cluster(struct mb_fwd_plan *p, int op, long rows, long nvec, const struct mb_dev *d,
		       const struct mb_env *e)
{
	long sms = d->major >= 9 && !e->fwd_l2 ? d->sms : 0;
	if (!(nvec > (op == RW_SOFTMAX ? 4096 : 6144) && nvec <= 8 * 4096 &&
	      rows <= MB_ROWS_MAX / 8 && sms > 0 && rows >= 2L * sms))
		return 0;
	long want = op == RW_LAYERNORM ? 2048 : 4096;
	unsigned nc = (unsigned)((nvec + want - 1) / want);
	if (nc > 8)
		nc = 8;
	long cw = (nvec + nc - 1) / nc;
	p->kind = MB_FWD_CL, p->nc = nc;
	p->threads = (unsigned)((cw + 8 * 32 - 1) / (8 * 32) * 32); /* 8 vectors a thread */
	p->smem = op == RW_RMSNORM ? 8 * 16 * (size_t)p->threads : 0;
	return 1;
}

int mb_fwd_plan(struct mb_fwd_plan *p, int op, int esize, long rows, long hidden,
		const struct mb_dev *d, const struct mb_env *e, int max_items)
{
	long n = 16 / esize, nvec = hidden / n;
	int items = 1;
	memset(p, 0, sizeof(*p));
	if (hidden % n || rows <= 0 || rows > MB_ROWS_MAX)
		return -1;
	if (fwd_cluster(p, op, rows, nvec, d, e))
		return 0;
	/*
	 * Two passes, 1024 threads of 2 vectors, for long rows (bf16 8192x32768 softmax and
	 * LayerNorm: 512 threads of 4 measured the same on H100, 88.2 vs 87.9%, and less on H200,
	 * 76.8 vs 78.1%); RMSNorm's register kernel up to 4096 vectors (H100 88.9%, two passes 83.0)
	 */
	if (nvec > 4096 || (op != RW_RMSNORM && nvec > 2048)) {
		p->kind = MB_FWD_L2, p->items = 2, p->threads = 1024;
		return 0;
	}
	/*
	 * Small blocks with several 16-byte vectors per thread: more rows in flight per SM.  Up to
	 * @max_items while the block has more than 128 threads, beyond it only to stay within the
	 * block size: at most 8 vectors a thread (32 registers of data, a 512-thread bound: rows
	 * up to 4096 vectors).
	 */
	while (items < max_items && (nvec + items - 1) / items > 128)
		items *= 2;
	while (items < 8 && (nvec + items - 1) / items > 1024)
		items *= 2;
	long threads = ((nvec + items - 1) / items + 31) / 32 * 32;
	if (threads > 1024 || (items == 8 && threads > 512))
		return -1;
	p->kind = MB_FWD_REG, p->items = items, p->threads = (unsigned)threads;
	return 0;
}

/* ---- backwards ---- */

int mb_items_for(long nvec, int min_items)
{
	int items = 1;
	while (items < min_items && (nvec + items - 1) / items > 128)
		items *= 2;
	while (items < 16 && (nvec + items - 1) / items > 1024)
		items *= 2;
	return items;
}

unsigned mb_threads_for(long nvec, int items)
{
	return (unsigned)(((nvec + items - 1) / items + 31) / 32 * 32);
}

/*
 * The blocks a row of @nvec vectors is split over in the pipelined plan's cluster (1 for a
 * block a row): the fewest powers of two of blocks of at most 1024 vectors, with two
 * exceptions.  4-byte types beyond 8192 vectors (hidden over 32768) run 4 vectors a thread, the
 * 16 values a row that 2 vectors of a 16-bit type are, and a ring as large as fits (H100, fp32
 * 4096x65536: the register kernels ran RMSNorm and LayerNorm at 18% of the DRAM peak, softmax
 * at 36%); so too rows of 4097-6144 vectors, on 4 blocks of up to 2048 instead of 8 of
 * 2-vector threads (H100, fp32 8192x20480: LayerNorm 87% instead of 77%; 8192x24576: RMSNorm
 * and LayerNorm 86% instead of 83-84%; not 8192x32768: 85-86% instead of 86-88%), unless
 * @force asks for the 2-vector kernel.  16-bit RMSNorm and LayerNorm rows of 4097-5120 vectors
 * run on 5 blocks of up to 1024 vectors, not 8 of 513-640 (H100, bf16 and fp16: LayerNorm
 * 1.10-1.16x faster, 8192x40960 85% of the DRAM peak instead of 74%; RMSNorm 0.99-1.08x;
 * softmax 0.93-1.04x: not it); not 6 or 7 blocks for longer rows (8192x45056 and 8192x53248:
 * 3-12% slower than 8).
 */
static int pipe_cluster(int op, int esize, long nvec, int force)
{
	if (op != RW_SOFTMAX && esize == 2 && nvec > 4096 && nvec <= 5120)
		return 5;
	long most = esize == 4 && !force && nvec > 4096 && nvec <= 6144 ? 2048 : 1024;
	int nc = 1;
	while (nc < 8 && (nvec + nc - 1) / nc > most)
		nc *= 2;
	return nc;
}

/*
 * The pipelined plan: blocks of at most 1024 vectors of the row (a cluster of 2-8 for longer
 * rows, sm_90), 2 vectors a thread (4 in 4-byte rows over 8192 vectors, pipe_cluster), as many
 * ring stages of (x, dy) as 96 KiB hold (at most 12; on H200 2 blocks an SM of a 96 KiB ring
 * beat one of 224 KiB: 4096 hidden 0.107 vs 0.135 ms RMSNorm, 0.115 vs 0.147 LayerNorm, 16384
 * rows bf16).  0 where it does not apply (rows under 512 vectors, before sm_80,
 * KPROF_NORM_BWD=rows) or measured slower (below).
 */
int mb_pipe_plan(struct mb_bwd_plan *p, int op, int esize, long rows, long hidden,
		 const struct mb_dev *d, const struct mb_bwd_env *e, mb_resident_fn res, void *ctx)
{
	int force = e->force, vpt = e->vpt;
	long cap = e->cap, nvec = hidden / (16 / esize);
	if (!e->pipe || nvec < 512 || d->major < 8)
		return 0;
	int nc = pipe_cluster(op, esize, nvec, force);
	long cw = (nvec + nc - 1) / nc;
	if (cw > 1024 && cw <= 2048 && esize == 4 && !force)
		vpt = 4, cap = 0;
	if ((cw > 1024 && vpt != 4) || (nc > 1 && d->major < 9))
		return 0;
	/*
	 * Softmax: only rows beyond the register kernel's 4096 vectors (which spill there; H100,
	 * bf16 4096x65536: 0.58 ms instead of 1.85; 8192x32768: 0.58 vs 0.58)
	 */
	if (op == RW_SOFTMAX && !force && nvec <= 4096)
		return 0;
	unsigned threads = (unsigned)(((cw + vpt - 1) / vpt + 31) / 32 * 32);
	/*
	 * Clusters of 2-vector threads: softmax's row sums one row ahead (ahead 1), RMSNorm's one
	 * row behind (2: bf16 8192x32768 on H100 86.8% instead of 86.1%; its own limit, bench/
	 * README's L2 build, 4247 GB/s instead of 3846).  LayerNorm stays on kprof_norm_bwd_pipe:
	 * one row ahead it spills at 2 blocks an SM and is slower at one (H200 62% vs 71%), one
	 * row behind too (H100 82.8% vs 86.7%).
	 */
	int ahead = nc > 1 && vpt == 2 && op != RW_LAYERNORM ? (op == RW_RMSNORM ? 2 : 1) : 0;
	size_t stage = (size_t)2 * vpt * threads * 16, lim = (size_t)d->optin - 1024;
	if (cap > 0 && (size_t)cap < lim)
		lim = (size_t)cap;
	int stages = (int)(lim / stage);
	if (stages > 12)
		stages = 12;
	if (stages < 2)
		return 0;
	struct mb_bwd_plan q;
	memset(&q, 0, sizeof(q));
	q.pipe = 1, q.ahead = ahead, q.vpt = vpt, q.nc = nc, q.stages = stages;
	q.threads = threads, q.cw = cw, q.smem = stage * stages;
	long ncl = res(ctx, MB_K_PIPE, &q);
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
	p->cw = cw, p->smem = q.smem;
	p->partial = ncl < rows ? ncl : rows;
	p->grid = p->partial * nc;
	return 1;
}

struct mb_bwd_plan mb_norm_plan(int op, int esize, long rows, long hidden, const struct mb_dev *d,
				const struct mb_env *e, mb_resident_fn res, void *ctx)
{
	struct mb_bwd_plan p;
	memset(&p, 0, sizeof(p));
	if (mb_pipe_plan(&p, op, esize, rows, hidden, d, &e->norm, res, ctx))
		return p;
	long nvec = hidden / (16 / esize);
	p.items = mb_items_for(nvec, 1);
	p.threads = mb_threads_for(nvec, p.items);
	p.split = p.items >= (op == RW_LAYERNORM ? 4 : 8);
	if (p.split) {
		p.gx = (nvec + 31) / 32;
		/* one wave: a second, partial one left most SMs idle (H200: 0.90 ms, 37% of peak) */
		long want = res(ctx, MB_K_WGRAD, &p) / p.gx;
		long most = (rows + 63) / 64;
		p.gy = want < most ? want : most;
		if (p.gy < 1)
			p.gy = 1;
		p.per = (rows + p.gy - 1) / p.gy;
		p.grid = rows;
		p.partial = p.gy;
		return p;
	}
	long g = res(ctx, MB_K_NORM_BWD, &p);
	p.grid = g < rows ? g : rows;
	p.partial = p.grid;
	return p;
}

/*
 * kprof_softmax_bwd_l2 with dynamic shared memory (unused) that leaves room for one block an
 * SM: its second pass must find its rows in L2, and two 1024-thread blocks an SM keep twice the
 * rows in flight.  Measured, bf16 8192x32768: H100 (3352 GB/s) 80% of the DRAM peak at 2
 * blocks, 90% at one; H200 (4814 GB/s) 83% at 2, 75% at one.  So one block only on GPUs under
 * 4000 GB/s (or of an unknown peak); no limit above.
 */
int mb_softmax_one_block(double peak)
{
	return !(peak > 4000e9);
}

int mb_softmax_plan(struct mb_softmax_plan *p, int esize, long rows, long hidden,
		    const struct mb_dev *d, const struct mb_env *e, mb_resident_fn res, void *ctx)
{
	long n = 16 / esize, nvec = hidden / n;
	int items = mb_items_for(nvec, 2);
	memset(p, 0, sizeof(*p));
	if (hidden % n || rows <= 0 || rows > MB_ROWS_MAX || (nvec + items - 1) / items > 1024)
		return -1;
	if (mb_pipe_plan(&p->pipe, RW_SOFTMAX, esize, rows, hidden, d, &e->softmax, res, ctx)) {
		p->kind = MB_SMX_PIPE;
		return 0;
	}
	/* rows of 2049-4096 vectors: two passes, unless KPROF_SOFTMAX_BWD=rows */
	if (nvec > 2048 && nvec <= 4096 && e->softmax.pipe) {
		p->kind = MB_SMX_L2, p->one_block = mb_softmax_one_block(d->peak);
		return 0;
	}
	p->kind = MB_SMX_REG, p->items = items, p->threads = mb_threads_for(nvec, items);
	return 0;
}
