/*
 * membound-plan.h — the host-side choices of kprof's row-wise kernels (capture/kernels/
 * membound-*.cu), in plain C: which kernel, how many vectors a thread, block and cluster sizes,
 * ring stages, from the shape, the device's facts and the A/B environment variables
 * (man/kprof-capture.1: KPROF_FWD, KPROF_NORM_BWD, KPROF_SOFTMAX_BWD, KPROF_XENT_BWD).  No CUDA
 * here: the .cu files query the device and launch; tests/unit/capture/kernels/
 * test-membound-plan.c checks the plans without a GPU.
 */
#ifndef KPROF_MEMBOUND_PLAN_H
#define KPROF_MEMBOUND_PLAN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One backward's A/B setting (KPROF_NORM_BWD, KPROF_SOFTMAX_BWD): see mb_env_parse. */
struct mb_bwd_env {
	int pipe;  /* 0 for "rows": the register kernels only */
	int force; /* 1 for "pipe[:V[:K]]": the pipelined kernel wherever it applies */
	int vpt;   /* V: vectors a thread (1 or 2, default 2) */
	long cap;  /* K KiB: the most ring bytes a block (default 96 KiB) */
};

/* The environment, read once (mb_env) */
struct mb_env {
	int fwd_l2;		  /* KPROF_FWD=l2: no cluster forward */
	struct mb_bwd_env norm;	  /* KPROF_NORM_BWD */
	struct mb_bwd_env softmax; /* KPROF_SOFTMAX_BWD */
	int xent_u, xent_t;	  /* KPROF_XENT_BWD=U:T (default 8:512) */
};

/*
 * The settings of the four variables' values (NULL: unset).  "rows" and "pipe[:V[:K]]" for the
 * backwards; anything else is as unset.  KPROF_XENT_BWD: U in 1, 2, 4, 8 (else 8), T in 128, 256,
 * 512, 1024 (else 512).
 */
void mb_env_parse(struct mb_env *e, const char *fwd, const char *norm_bwd, const char *softmax_bwd,
		  const char *xent_bwd);
/* The process's settings: its environment at the first call (mb_env_reload reads it again). */
const struct mb_env *mb_env(void);
void mb_env_reload(void);

/* What the planner needs of a device (all 0 when the queries failed). */
struct mb_dev {
	int major;  /* compute capability */
	int sms;    /* streaming multiprocessors */
	int optin;  /* the most shared memory a block may opt in to, bytes */
	double peak; /* DRAM bytes/s (kk_dram_peak), 0 when unknown */
};

/* ---- forward (kk_rowwise) ---- */
enum { MB_FWD_REG, MB_FWD_L2, MB_FWD_CL };
struct mb_fwd_plan {
	int kind;	  /* kprof_rowwise (items), kprof_rowwise_l2 (1024, 2), kprof_rowwise_cl */
	int items;	  /* MB_FWD_REG: vectors a thread */
	unsigned threads; /* MB_FWD_REG, MB_FWD_CL: threads a block */
	unsigned nc;	  /* MB_FWD_CL: blocks a cluster */
	size_t smem;	  /* MB_FWD_CL: dynamic shared memory (RMSNorm's weight) */
};
/*
 * The forward of @op (RW_*) on rows x hidden of @esize-byte elements, @max_items the register
 * kernel's most vectors a thread (MB_FWD_ITEMS).  0, or -1 for a shape it cannot run.
 */
int mb_fwd_plan(struct mb_fwd_plan *p, int op, int esize, long rows, long hidden,
		const struct mb_dev *d, const struct mb_env *e, int max_items);

/* ---- backwards (kk_norm_bwd, kk_rowsoftmax_bwd) ---- */
/*
 * How a backward runs: @items vectors a thread in @threads-thread blocks; unsplit, a persistent
 * grid of @grid blocks (its partial rows); split (LayerNorm beyond 2 vectors a thread, RMSNorm
 * beyond 4: the accumulators would not fit in registers), one block per row for dx and
 * kprof_norm_wgrad over [gx, gy] blocks of @per rows (gy partial rows).  @pipe:
 * kprof_norm_bwd_pipe (@ahead 1: kprof_norm_bwd_ahead, 2: kprof_norm_bwd_lag) with @vpt vectors
 * a thread, clusters of @nc blocks of @cw vectors, a ring of @stages stages (@smem bytes).
 */
struct mb_bwd_plan {
	int items, split, pipe, ahead, vpt, nc, stages;
	unsigned threads;
	long grid, gx, gy, per, partial, cw;
	size_t smem;
};

/* The kernels whose residency a plan asks for (mb_resident_fn's @kernel). */
enum { MB_K_PIPE, MB_K_NORM_BWD, MB_K_WGRAD };
/*
 * Blocks of @kernel resident on the whole GPU (clusters of p->nc for MB_K_PIPE: the kernel
 * p->ahead, p->vpt, p->nc name, p->threads, p->smem; MB_K_NORM_BWD: kprof_norm_bwd of p->items
 * in p->threads; MB_K_WGRAD: kprof_norm_wgrad in 256), 0 when unknown.
 */
typedef long (*mb_resident_fn)(void *ctx, int kernel, const struct mb_bwd_plan *p);

/* The pipelined plan of @op's backward; 1 when it applies, else 0 (and @p untouched). */
int mb_pipe_plan(struct mb_bwd_plan *p, int op, int esize, long rows, long hidden,
		 const struct mb_dev *d, const struct mb_bwd_env *e, mb_resident_fn res, void *ctx);
/* RMSNorm's or LayerNorm's backward plan (the pipelined one where it applies). */
struct mb_bwd_plan mb_norm_plan(int op, int esize, long rows, long hidden, const struct mb_dev *d,
				const struct mb_env *e, mb_resident_fn res, void *ctx);

/* Softmax backward: kprof_norm_bwd_pipe, kprof_softmax_bwd_l2 (1024, 2) or kprof_softmax_bwd. */
enum { MB_SMX_PIPE, MB_SMX_L2, MB_SMX_REG };
struct mb_softmax_plan {
	int kind;
	int items;	     /* MB_SMX_REG: vectors a thread */
	unsigned threads;    /* MB_SMX_REG */
	int one_block;	     /* MB_SMX_L2: one block an SM (mb_softmax_one_block) */
	struct mb_bwd_plan pipe; /* MB_SMX_PIPE */
};
/* 0, or -1 for a shape it cannot run. */
int mb_softmax_plan(struct mb_softmax_plan *p, int esize, long rows, long hidden,
		    const struct mb_dev *d, const struct mb_env *e, mb_resident_fn res, void *ctx);
/* kprof_softmax_bwd_l2 one block an SM: on GPUs of a DRAM peak under 4000 GB/s. */
int mb_softmax_one_block(double peak);

/* Smallest power-of-two vectors a thread (<= 16) that fits the row in 1024 threads. */
int mb_items_for(long nvec, int min_items);
unsigned mb_threads_for(long nvec, int items);

#ifdef __cplusplus
}
#endif

#endif /* KPROF_MEMBOUND_PLAN_H */
