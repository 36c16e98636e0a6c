/*
 * ranks.h — many traces of one distributed job: each read on a worker thread and reduced to
 * a small per-rank summary (breakdown, steps, communication kernels), then compared across
 * ranks: per-collective bandwidth (nccl-tests formulas), stragglers per step, step skew.
 */
#ifndef KPROF_RANKS_H
#define KPROF_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "kprof/breakdown.h"
#include "kprof/collective.h"
#include "kprof/devdb.h"
#include "kprof/diag.h"
#include "kprof/trace.h"

/* One communication kernel of a rank. */
struct kp_rank_comm {
	int64_t ts_ns, dur_ns;
	int64_t bytes; /* nccl-tests S, -1 unknown */
	int64_t step;  /* ProfilerStep number of its launch, -1 */
	int32_t group; /* "Group size", -1 unknown */
	int8_t kind;   /* enum kp_coll_kind */
};

/* One ProfilerStep window of a rank (breakdown.h). */
struct kp_rank_step {
	int64_t num;
	int64_t start_ns, span_ns;
	int partial;
};

/* A rank's summary: what survives its trace (kept: summaries, never events). */
struct kp_rank {
	char *file;          /* as given, owned */
	int64_t rank;        /* distributedInfo.rank, else from the file name, else -1 */
	int rank_from;       /* 0 distributedInfo, 1 file name, 2 argument order */
	int64_t world_size;  /* distributedInfo, -1 */
	char backend[16];    /* distributedInfo, "" */
	char device[64];     /* deviceProperties[0].name, "" */
	struct kp_devprops props; /* deviceProperties[0]'s SMs, memory and cc; 0 unknown */
	int64_t gpu_time_ns; /* sum of GPU durations */
	struct kp_bd bd;     /* the whole trace's breakdown */
	struct kp_rank_step *steps;
	size_t nsteps;
	struct kp_rank_comm *comms; /* in start order */
	size_t ncomms;
	int64_t step_mean_ns, step_max_ns, slowest_step; /* over complete steps; -1 none */
	int status;                                      /* KP_OK or the load error's exit status */
	char err[1024];                                  /* the load error */
	struct kp_warnings warn;                         /* the trace's warnings */
};

/* Collectives of one kind and size, matched across ranks by order. */
struct kp_coll_row {
	int kind;        /* enum kp_coll_kind */
	int64_t bytes;   /* S, -1 unknown */
	int32_t n;       /* ranks in the group */
	int64_t calls;   /* matched instances */
	int64_t time_ns; /* sum over instances of the shortest rank's duration */
	double algbw;    /* bytes/s: sum S / time; < 0 unknown */
	double busbw;    /* algbw x factor(kind, n); < 0 unknown */
};

/* The straggler of one step. */
struct kp_straggler {
	int64_t step;
	int64_t rank;
	int64_t lag_ns; /* see ranks.c: how long the others waited for it */
	int64_t late;   /* instances it reached last (0: judged by step end) */
	int64_t instances;
	int64_t skew_ns; /* max - min step window length over ranks */
};

struct kp_ranks {
	struct kp_rank *r; /* sorted by rank */
	size_t n;
	int jobs; /* worker threads used */
	struct kp_coll_row *colls;
	size_t ncolls;
	int64_t matched;   /* instances matched across all ranks */
	int64_t unmatched; /* comm kernels beyond the smallest rank's count */
	struct kp_straggler *strag;
	size_t nstrag;
	int64_t step_skew_max_ns; /* over steps */
	int64_t step_skew_step;
	double link_peak; /* the device table's peer link B/s, < 0 none */
	/*
	 * Set before ranks_compare() for one rank's own summary (analyze --ranks of one trace):
	 * the unit kprof merge combines, so the other ranks of its world size are not "missing"
	 * there; merge, which sees the set, warns about them.
	 */
	int one_rank;
	struct kp_warnings warn;
};

/* Prototypes */
/*
 * Read @npaths traces on @jobs threads (0: one per online CPU), each reduced to a summary
 * and freed before the next, so memory is jobs x one trace, not npaths.  Returns 0, or -1
 * with @d set to the first failing file's error (@out still valid for ranks_free()).
 */
int ranks_load(struct kp_ranks *out, char *const *paths, size_t npaths, int jobs,
	       const struct kp_load_opts *lo, struct kp_diag *d);
/* Reduce one linked trace to a summary (used by ranks_load; public for tests). */
void ranks_summarize(struct kp_rank *r, const struct kp_trace *t);
/* Order ranks, match collectives across ranks, find stragglers.  @link_peak: B/s or < 0. */
void ranks_compare(struct kp_ranks *rs, double link_peak);
/* The ranks' device (its peer link is ranks_compare()'s @link_peak): @device (--device NAME),
   else the first rank's name and properties, matched as one trace's (devdb_choose()). */
void ranks_device(const struct kp_ranks *rs, const struct kp_devdb *db, const char *device,
		  struct kp_devchoice *c);
void ranks_free(struct kp_ranks *rs);
/* Rank from a file name: "rank[-_/[]?<digits>" (TraceLens' pattern); -1 none. */
int64_t ranks_rank_from_name(const char *path);

#endif /* KPROF_RANKS_H */
