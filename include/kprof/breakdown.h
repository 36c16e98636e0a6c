/*
 * breakdown.h — where a trace's GPU time went: compute, communication, memcpy/memset, other
 * and idle (every ns of the span in exactly one bucket), idle time by cause, per step and
 * per stream; and kernel launch statistics (CPU launch cost, launch -> start latency, short
 * kernels).  Definitions: kprof-analyze(1), BREAKDOWN.
 */
#ifndef KPROF_BREAKDOWN_H
#define KPROF_BREAKDOWN_H

#include <stddef.h>
#include <stdint.h>

#include "kprof/trace.h"

/* Defaults (kprof-analyze(1) gives their origins). */
#define BD_LAUNCH_GAP_NS                                                                           \
	30000 /* idle gap shorter than this with work queued: launch latency (HTA) */
#define BD_SHORT_KERNEL_NS 10000 /* a kernel shorter than this is short (TraceLens) */

/* Buckets in priority order: a ns covered by several classes goes to the first. */
enum kp_bd_class { BD_COMPUTE = 0, BD_COMM, BD_MEMCPY, BD_OTHER, BD_NCLASS };

enum kp_idle_cause { IDLE_HOST = 0, IDLE_SYNC, IDLE_LAUNCH, IDLE_OTHER, IDLE_NCAUSE };

/*
 * One window's breakdown.  Invariant: class_ns[0..3] + idle_ns == span_ns, and
 * idle_cause_ns[0..3] add up to idle_ns (0 causes where not computed: per stream).
 */
struct kp_bd {
	int64_t start_ns, span_ns;   /* window [start, start + span) */
	int64_t class_ns[BD_NCLASS]; /* exclusive time per class */
	int64_t idle_ns;             /* no GPU activity at all */
	int64_t comm_total_ns;       /* |union of comm|, overlapped or not */
	int64_t comm_overlapped_ns;  /* |comm ∩ compute| */
	int64_t idle_cause_ns[IDLE_NCAUSE];
	int64_t idle_gaps[IDLE_NCAUSE]; /* number of idle intervals (pieces, per window) */
};

/* A ProfilerStep#N window: from its first GPU activity to the next step's (see .c). */
struct kp_bd_step {
	int64_t num;    /* N; -1 = the whole trace has no steps */
	int partial;    /* the last step: its GPU work may be cut off by the trace end */
	int64_t cpu_ns; /* ProfilerStep#N span on the CPU, -1 */
	struct kp_bd b;
};

/* One stream over the trace window (idle = window - the stream's busy time; no causes). */
struct kp_bd_stream {
	int32_t device;
	int64_t stream;
	struct kp_bd b;
};

/* Launch statistics of one kernel name or op (pairs of a launch call and its GPU work). */
struct kp_launch_row {
	const char *name; /* kernel or op name (interned in the trace), "(all)" */
	int64_t launches;
	int64_t cpu_ns; /* sum of launch call durations */
	int64_t lat_ns; /* sum of launch call start -> GPU start */
	int64_t lat_max_ns;
	int64_t gpu_ns;    /* sum of GPU durations (kernels, memcpy, memset) */
	int64_t kernels;   /* of the launches, those of kernels (not memcpy/memset) */
	int64_t kernel_ns; /* their GPU time */
	int64_t short_n;   /* kernels (not memcpy/memset) shorter than the short threshold */
	int64_t short_ns;
	int64_t cheaper_n; /* GPU events (memcpy/memset too, as HTA) shorter than their launch call */
};

struct kp_bd_opts {
	int64_t launch_gap_ns; /* 0: BD_LAUNCH_GAP_NS */
	int64_t short_ns;      /* 0: BD_SHORT_KERNEL_NS */
	int launch_by_op;      /* launch rows per op (the op the kernel is attributed to) */
};

/* The breakdown of one trace.  Owns its arrays; free with breakdown_free(). */
struct kp_breakdown {
	struct kp_bd all;         /* the trace window: first GPU start to last GPU end */
	struct kp_bd_step *steps; /* windows in time order; partition @all */
	size_t nsteps;
	struct kp_bd_stream *streams; /* by device, stream */
	size_t nstreams;
	int ndevices;                      /* distinct devices with GPU work */
	struct kp_launch_row *launch_rows; /* by CPU launch time, descending, then name */
	size_t nlaunch_rows;
	struct kp_launch_row launch_all; /* every pair */
	int64_t unlaunched;              /* GPU events without a launch call */
	struct kp_prefix prefix;         /* the trace's unlaunched prefix: counted or dropped */
	int64_t launch_gap_ns, short_ns; /* thresholds used */
};

/* Prototypes */
/*
 * Classify one GPU event: comm for NCCL/RCCL/HCCL kernels or kernels with collective
 * metadata (@has_coll), memcpy for copies and fills (memcpy, memset and ROCm's copy/fill
 * kernels), compute for other kernels.
 */
enum kp_bd_class breakdown_class(const struct kp_gpu *g, int has_coll);
/* Build @b from a linked trace (link_trace()); never fails on data.  Returns 0. */
int breakdown_run(const struct kp_trace *t, const struct kp_bd_opts *o, struct kp_breakdown *b);
void breakdown_free(struct kp_breakdown *b);

#endif /* KPROF_BREAKDOWN_H */
