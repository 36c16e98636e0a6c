/*
 * kmetrics.h — measured counters per kernel (`kprof capture --metrics`): the metric list, the
 * join of range-profiler windows to the timed trace's kernels, and their trace args.  No CUDA
 * here: the unit tests feed synthetic windows and records.
 */
#ifndef KPROF_KMETRICS_H
#define KPROF_KMETRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The range-profiler metrics, in this order (kmetrics_names). */
enum kp_kmetric {
	KM_TENSOR_BF16, /* sm__ops_path_tensor_src_bf16_dst_fp32.sum: FLOPs (2 per MAC) */
	KM_TENSOR_FP16, /* sm__ops_path_tensor_src_fp16.sum */
	KM_TENSOR_TF32, /* sm__ops_path_tensor_src_tf32_dst_fp32.sum */
	KM_TENSOR_FP64, /* sm__ops_path_tensor_src_fp64.sum */
	KM_DFMA,
	KM_DADD,
	KM_DMUL, /* smsp__sass_thread_inst_executed_op_*_pred_on.sum */
	KM_FFMA,
	KM_FADD,
	KM_FMUL,
	KM_HFMA,
	KM_HADD,
	KM_HMUL,
	KM_DRAM_READ,  /* dram__bytes_read.sum */
	KM_DRAM_WRITE, /* dram__bytes_write.sum */
	KM_SM_HZ,      /* sm__cycles_elapsed.avg.per_second */
	KM_N
};

/* Values of one kernel; a metric the chip lacks is NAN. */
struct kp_kmet {
	double v[KM_N];
};

/*
 * One profiled window: the timed loop [t0_ns, t1_ns] (CUPTI clock) whose kernels the same
 * loop, run again under the range profiler, measured as ranges first .. first + n - 1.
 */
struct kp_mwin {
	uint64_t t0_ns, t1_ns;
	size_t first, n;
	/* `-- <cmd>`: only records [rec_lo, rec_hi) (one process's file) join; 0, 0: all */
	size_t rec_lo, rec_hi;
	char label[160];
};

struct kp_ctrace;

/* Prototypes */
extern const char *const kmetrics_names[KM_N];
/*
 * FLOPs by precision from one kernel's values: out[0..3] tensor bf16, fp16, tf32, fp64;
 * out[4..6] fp64, fp32, fp16 FMA/ADD/MUL (2 x fma + add + mul).  -1 where unmeasured.
 * Returns the total over the measured ones, -1 when none is.
 */
int64_t kmetrics_flops(const struct kp_kmet *m, int64_t out[7]);
/*
 * Whether metric @k is counted by SASS instrumentation (smsp__sass_*): CUPTI 13's range profiler
 * counts those right only when they are added to its config in one call (metrics.c).
 */
int kmetrics_sass(int k);
/* The precision names of kmetrics_flops' slots ("tensor_bf16", ..., "fp16"). */
extern const char *const kmetrics_flop_names[7];
/*
 * Join every window of @t to its kernel records: the kernels that started inside the window,
 * in start order, take ranges first.. in turn (only records rec_lo.. rec_hi - 1 when rec_hi).  A window whose kernel count differs from its
 * range count is left unjoined: its label goes to @warn (when not NULL, with @arg) and it is
 * counted.
 * Returns the number of unjoined windows.
 */
size_t kmetrics_join(struct kp_ctrace *t,
		     void (*warn)(void *arg, const struct kp_mwin *w, size_t nkern), void *arg);
/*
 * `-- <cmd>` --metrics: join the metrics run @m (the command run once more under the range
 * profiler, no activity tracing: its record files hold, per process, one window of ranges and
 * the kernel launches and memsets in launch order as REC_KERNEL / REC_MEMSET records whose
 * start_ns is the launch ordinal) to the timed run @t.  The n-th window joins the n-th process
 * of @t (PID order, a kernel's process is its launch call's); ranges are the launches (or the
 * launches and memsets) in order; the process's kernels in start order must have the same count
 * and names as the launches.  Values are copied into @t's kmet.  Each process that does not
 * join gets a warning on @err (NULL: none).  Returns the number of kernels that got counters.
 */
size_t kmetrics_join_runs(struct kp_ctrace *t, const struct kp_ctrace *m, FILE *err);
/* Append ,"kprof measured ..." members of one kernel's args. */
void kmetrics_put_args(FILE *out, const struct kp_kmet *m);

#endif /* KPROF_KMETRICS_H */
