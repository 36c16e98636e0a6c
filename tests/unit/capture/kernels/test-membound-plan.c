/*
 * test-membound-plan.c — the row-wise kernels' launch choices (capture/kernels/membound-plan.c)
 * without a GPU: the plans for the H100 and H200 shapes its comments cite, against values
 * worked out here by hand from the rules those comments state; the A/B environment variables
 * parsed and read once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/membound-plan.h"
#include "kernels/membound.h"

/* H100 SXM and H200: 132 SMs, sm_90, 227 KiB of opt-in shared memory a block */
static const struct mb_dev h100 = { 9, 132, 232448, 3352e9 };
static const struct mb_dev h200 = { 9, 132, 232448, 4814e9 };
static const struct mb_dev a100 = { 8, 108, 166912, 2039e9 };

/* a fake occupancy: what each kernel kind gets, and the last plan asked about */
static struct {
	long pipe, norm, wgrad;
	int calls, last_kind;
	struct mb_bwd_plan last;
} occ;

static long fake_resident(void *ctx, int kernel, const struct mb_bwd_plan *p)
{
	(void)ctx;
	occ.calls++, occ.last_kind = kernel, occ.last = *p;
	return kernel == MB_K_PIPE ? occ.pipe : kernel == MB_K_NORM_BWD ? occ.norm : occ.wgrad;
}

static struct mb_env env(const char *fwd, const char *norm, const char *smx, const char *xent)
{
	struct mb_env e;
	mb_env_parse(&e, fwd, norm, smx, xent);
	return e;
}

static void fwd_plans(void **state)
{
	(void)state;
	struct mb_env e = env(NULL, NULL, NULL, NULL), l2 = env("l2", NULL, NULL, NULL);
	struct mb_fwd_plan p;
	/* bf16 8192x32768 softmax: 4096 vectors a row, two passes of 1024 threads */
	assert_int_equal(mb_fwd_plan(&p, RW_SOFTMAX, 2, 8192, 32768, &h100, &e, 8), 0);
	assert_int_equal(p.kind, MB_FWD_L2);
	assert_int_equal(p.threads, 1024);
	/* ... RMSNorm: its register kernel up to 4096 vectors: 8 a thread, 512 threads */
	assert_int_equal(mb_fwd_plan(&p, RW_RMSNORM, 2, 8192, 32768, &h100, &e, 8), 0);
	assert_int_equal(p.kind, MB_FWD_REG);
	assert_int_equal(p.items, 8);
	assert_int_equal(p.threads, 512);
	/* bf16 4096x65536 (8192 vectors): clusters of 4096 vectors, 8 a thread; LayerNorm 2048 */
	assert_int_equal(mb_fwd_plan(&p, RW_SOFTMAX, 2, 4096, 65536, &h100, &e, 8), 0);
	assert_int_equal(p.kind, MB_FWD_CL);
	assert_int_equal(p.nc, 2);
	assert_int_equal(p.threads, 512);
	assert_int_equal(p.smem, 0);
	assert_int_equal(mb_fwd_plan(&p, RW_RMSNORM, 2, 4096, 65536, &h100, &e, 8), 0);
	assert_int_equal(p.kind, MB_FWD_CL);
	assert_int_equal(p.nc, 2);
	assert_int_equal(p.smem, 8 * 16 * 512); /* the weight of 8 vectors a thread */
	assert_int_equal(mb_fwd_plan(&p, RW_LAYERNORM, 2, 4096, 65536, &h100, &e, 8), 0);
	assert_int_equal(p.nc, 4);
	assert_int_equal(p.threads, 256);
	/* fp32 4096x65536: 16384 vectors on 4 blocks of 4096 */
	assert_int_equal(mb_fwd_plan(&p, RW_SOFTMAX, 4, 4096, 65536, &h100, &e, 8), 0);
	assert_int_equal(p.nc, 4);
	assert_int_equal(p.threads, 512);
	/* not for fewer rows than twice the SMs (77x65536), before sm_90, nor KPROF_FWD=l2 */
	assert_int_equal(mb_fwd_plan(&p, RW_SOFTMAX, 2, 77, 65536, &h100, &e, 8), 0);
	assert_int_equal(p.kind, MB_FWD_L2);
	assert_int_equal(mb_fwd_plan(&p, RW_SOFTMAX, 2, 264, 65536, &h100, &e, 8), 0);
	assert_int_equal(p.kind, MB_FWD_CL);
	assert_int_equal(mb_fwd_plan(&p, RW_SOFTMAX, 2, 4096, 65536, &a100, &e, 8), 0);
	assert_int_equal(p.kind, MB_FWD_L2);
	assert_int_equal(mb_fwd_plan(&p, RW_SOFTMAX, 2, 4096, 65536, &h100, &l2, 8), 0);
	assert_int_equal(p.kind, MB_FWD_L2);
	/* bf16 8192x45056 RMSNorm (5632 vectors): under 6144, the two passes */
	assert_int_equal(mb_fwd_plan(&p, RW_RMSNORM, 2, 8192, 45056, &h100, &e, 8), 0);
	assert_int_equal(p.kind, MB_FWD_L2);
	/* bf16 4096x4096 LayerNorm (512 vectors): 4 a thread, 128 threads */
	assert_int_equal(mb_fwd_plan(&p, RW_LAYERNORM, 2, 4096, 4096, &h100, &e, 8), 0);
	assert_int_equal(p.kind, MB_FWD_REG);
	assert_int_equal(p.items, 4);
	assert_int_equal(p.threads, 128);
	/* not a multiple of 16 bytes; no rows */
	assert_int_equal(mb_fwd_plan(&p, RW_SOFTMAX, 2, 4096, 4100, &h100, &e, 8), -1);
	assert_int_equal(mb_fwd_plan(&p, RW_SOFTMAX, 2, 0, 4096, &h100, &e, 8), -1);
}

static void softmax_bwd_plans(void **state)
{
	(void)state;
	struct mb_env e = env(NULL, NULL, NULL, NULL), rows = env(NULL, NULL, "rows", NULL);
	struct mb_softmax_plan p;
	memset(&occ, 0, sizeof(occ));
	occ.pipe = 16;
	/* bf16 8192x32768 (4096 vectors): not the pipe (softmax only beyond 4096), two passes */
	assert_int_equal(mb_softmax_plan(&p, 2, 8192, 32768, &h100, &e, fake_resident, NULL), 0);
	assert_int_equal(p.kind, MB_SMX_L2);
	assert_int_equal(p.one_block, 1); /* H100, 3352 GB/s: one block an SM */
	assert_int_equal(mb_softmax_plan(&p, 2, 8192, 32768, &h200, &e, fake_resident, NULL), 0);
	assert_int_equal(p.one_block, 0); /* H200, 4814 GB/s: as many as fit */
	assert_int_equal(occ.calls, 0);	  /* rejected before asking the occupancy */
	/* KPROF_SOFTMAX_BWD=rows: the register kernel, 4 vectors a thread in 1024 threads */
	assert_int_equal(mb_softmax_plan(&p, 2, 8192, 32768, &h100, &rows, fake_resident, NULL), 0);
	assert_int_equal(p.kind, MB_SMX_REG);
	assert_int_equal(p.items, 4);
	assert_int_equal(p.threads, 1024);
	/*
	 * bf16 4096x65536 (8192 vectors): the pipe, clusters of 8 blocks of 1024 vectors, 2 a
	 * thread (512 threads), row sums one row ahead; stages of 2 x 2 x 512 x 16 = 32 KiB, 3 in
	 * 96 KiB; 16 clusters resident: 16 partial rows, 128 blocks
	 */
	assert_int_equal(mb_softmax_plan(&p, 2, 4096, 65536, &h100, &e, fake_resident, NULL), 0);
	assert_int_equal(p.kind, MB_SMX_PIPE);
	assert_int_equal(p.pipe.nc, 8);
	assert_int_equal(p.pipe.cw, 1024);
	assert_int_equal(p.pipe.vpt, 2);
	assert_int_equal(p.pipe.threads, 512);
	assert_int_equal(p.pipe.ahead, 1);
	assert_int_equal(p.pipe.stages, 3);
	assert_int_equal(p.pipe.smem, 3 * 32768);
	assert_int_equal(p.pipe.partial, 16);
	assert_int_equal(p.pipe.grid, 128);
	assert_int_equal(occ.last_kind, MB_K_PIPE);
	assert_int_equal(occ.last.ahead, 1);
	/* bf16 4096x4096 (512 vectors): 2 vectors a thread, 256 threads */
	assert_int_equal(mb_softmax_plan(&p, 2, 4096, 4096, &h100, &e, fake_resident, NULL), 0);
	assert_int_equal(p.kind, MB_SMX_REG);
	assert_int_equal(p.items, 2);
	assert_int_equal(p.threads, 256);
	assert_int_equal(mb_softmax_plan(&p, 2, 4096, 4092, &h100, &e, fake_resident, NULL), -1);
}

static void norm_bwd_plans(void **state)
{
	(void)state;
	struct mb_env e = env(NULL, NULL, NULL, NULL), rows = env(NULL, "rows", NULL, NULL);
	struct mb_env pipe = env(NULL, "pipe:1:200", NULL, NULL);
	struct mb_bwd_plan p;
	memset(&occ, 0, sizeof(occ));
	occ.pipe = 66, occ.norm = 264, occ.wgrad = 8 * 132;
	/*
	 * bf16 8192x32768 LayerNorm (4096 vectors): the pipe on clusters of 4 blocks of 1024
	 * vectors, 512 threads, its own row sums (ahead 0); 3 stages of 32 KiB; 66 clusters
	 */
	p = mb_norm_plan(RW_LAYERNORM, 2, 8192, 32768, &h100, &e, fake_resident, NULL);
	assert_int_equal(p.pipe, 1);
	assert_int_equal(p.nc, 4);
	assert_int_equal(p.threads, 512);
	assert_int_equal(p.ahead, 0);
	assert_int_equal(p.stages, 3);
	assert_int_equal(p.partial, 66);
	assert_int_equal(p.grid, 264);
	/* ... RMSNorm: the row sums one row behind (kprof_norm_bwd_lag) */
	p = mb_norm_plan(RW_RMSNORM, 2, 8192, 32768, &h100, &e, fake_resident, NULL);
	assert_int_equal(p.ahead, 2);
	assert_int_equal(occ.last.ahead, 2);
	/* bf16 8192x40960 LayerNorm (5120 vectors): 5 blocks of 1024, not 8 */
	p = mb_norm_plan(RW_LAYERNORM, 2, 8192, 40960, &h100, &e, fake_resident, NULL);
	assert_int_equal(p.nc, 5);
	assert_int_equal(p.cw, 1024);
	/* fp32 8192x20480 LayerNorm (5120 vectors): 4 blocks of 1280, 4 vectors a thread */
	p = mb_norm_plan(RW_LAYERNORM, 4, 8192, 20480, &h100, &e, fake_resident, NULL);
	assert_int_equal(p.nc, 4);
	assert_int_equal(p.vpt, 4);
	assert_int_equal(p.threads, 320);
	assert_int_equal(p.stages, 5); /* 2 x 4 x 320 x 16 = 40 KiB a stage, no 96 KiB cap */
	/* fp32 4096x65536 RMSNorm: 8 blocks of 2048, 4 a thread, 3 stages of 64 KiB */
	p = mb_norm_plan(RW_RMSNORM, 4, 4096, 65536, &h100, &e, fake_resident, NULL);
	assert_int_equal(p.nc, 8);
	assert_int_equal(p.vpt, 4);
	assert_int_equal(p.ahead, 0);
	assert_int_equal(p.smem, 3 * 65536);
	/*
	 * bf16 4096x4096 RMSNorm (H200: 15.5 rows a block, slower): 264 blocks resident, 4096 rows
	 * under 16 x 264: the register kernel, one vector a thread, 512 threads, 264 blocks
	 */
	occ.pipe = 264;
	p = mb_norm_plan(RW_RMSNORM, 2, 4096, 4096, &h200, &e, fake_resident, NULL);
	assert_int_equal(p.pipe, 0);
	assert_int_equal(p.split, 0);
	assert_int_equal(p.items, 1);
	assert_int_equal(p.threads, 512);
	assert_int_equal(p.grid, 264);
	assert_int_equal(p.partial, 264);
	/* 16384x4096: 6 stages of 16 KiB, one block a row chunk */
	p = mb_norm_plan(RW_RMSNORM, 2, 16384, 4096, &h200, &e, fake_resident, NULL);
	assert_int_equal(p.pipe, 1);
	assert_int_equal(p.nc, 1);
	assert_int_equal(p.stages, 6);
	assert_int_equal(p.grid, 264);
	/* KPROF_NORM_BWD=pipe:1:200: any rows, 1 vector a thread, 12 stages in 200 KiB */
	p = mb_norm_plan(RW_RMSNORM, 2, 4096, 4096, &h200, &pipe, fake_resident, NULL);
	assert_int_equal(p.pipe, 1);
	assert_int_equal(p.vpt, 1);
	assert_int_equal(p.threads, 512);
	assert_int_equal(p.stages, 12);
	/*
	 * KPROF_NORM_BWD=rows, bf16 8192x32768 LayerNorm: 4 vectors a thread, split; wgrad over
	 * 128 column blocks, 1056 resident / 128 = 8 row groups of 1024 rows
	 */
	p = mb_norm_plan(RW_LAYERNORM, 2, 8192, 32768, &h100, &rows, fake_resident, NULL);
	assert_int_equal(p.pipe, 0);
	assert_int_equal(p.split, 1);
	assert_int_equal(p.items, 4);
	assert_int_equal(p.gx, 128);
	assert_int_equal(p.gy, 8);
	assert_int_equal(p.per, 1024);
	assert_int_equal(p.grid, 8192);
	assert_int_equal(p.partial, 8);
	/* A100 (sm_80): no clusters, so no pipe for 4096 vectors */
	p = mb_norm_plan(RW_RMSNORM, 2, 8192, 32768, &a100, &e, fake_resident, NULL);
	assert_int_equal(p.pipe, 0);
	assert_int_equal(p.items, 4);
}

static void env_parsed(void **state)
{
	(void)state;
	struct mb_env e = env("l2", "pipe:1:200", "pipe", "4:256");
	assert_int_equal(e.fwd_l2, 1);
	assert_int_equal(e.norm.pipe, 1);
	assert_int_equal(e.norm.force, 1);
	assert_int_equal(e.norm.vpt, 1);
	assert_int_equal(e.norm.cap, 200 * 1024);
	assert_int_equal(e.softmax.force, 1);
	assert_int_equal(e.softmax.vpt, 2);
	assert_int_equal(e.softmax.cap, 96 * 1024);
	assert_int_equal(e.xent_u, 4);
	assert_int_equal(e.xent_t, 256);
	e = env("cl", "rows", "other", "3:100");
	assert_int_equal(e.fwd_l2, 0);
	assert_int_equal(e.norm.pipe, 0);
	assert_int_equal(e.softmax.pipe, 1);
	assert_int_equal(e.softmax.force, 0);
	assert_int_equal(e.xent_u, 8);
	assert_int_equal(e.xent_t, 512);
	e = env(NULL, NULL, NULL, "1");
	assert_int_equal(e.xent_u, 1);
	assert_int_equal(e.xent_t, 512);
}

static void env_read_once(void **state)
{
	(void)state;
	setenv("KPROF_XENT_BWD", "2:128", 1);
	mb_env_reload();
	assert_int_equal(mb_env()->xent_u, 2);
	setenv("KPROF_XENT_BWD", "4:256", 1);
	assert_int_equal(mb_env()->xent_u, 2); /* not read again at every launch */
	mb_env_reload();
	assert_int_equal(mb_env()->xent_u, 4);
	assert_int_equal(mb_env()->xent_t, 256);
	unsetenv("KPROF_XENT_BWD");
	mb_env_reload();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fwd_plans),	   cmocka_unit_test(softmax_bwd_plans),
		cmocka_unit_test(norm_bwd_plans), cmocka_unit_test(env_parsed),
		cmocka_unit_test(env_read_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
