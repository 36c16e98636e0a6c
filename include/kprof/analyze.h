/*
 * analyze.h — group linked GPU work into rows with time, FLOPs, bytes and % of device peak.
 */
#ifndef KPROF_ANALYZE_H
#define KPROF_ANALYZE_H

#include <stdint.h>

#include "kprof/arena.h"
#include "kprof/devdb.h"
#include "kprof/diag.h"
#include "kprof/trace.h"

/* GROUP_ANNOT: innermost user annotation of the launch (analyze only; load with annotations) */
/* GROUP_MODULE, GROUP_SOURCE: the nn.Module path / user source line the launch runs under
   (python_function events, src/ingest/pytree.c; kprof-analyze(1), WHERE IN THE MODEL) */
enum kp_group { GROUP_KERNEL = 0, GROUP_OP, GROUP_OP_SHAPE, GROUP_ANNOT, GROUP_MODULE, GROUP_SOURCE };

enum kp_clock_source { CLOCK_DATASHEET = 0, CLOCK_TRACE, CLOCK_OPTION };

struct kp_analyze_opts {
	enum kp_group group;
	const char *device;           /* --device NAME: overrides the trace's device name */
	double sm_clock_mhz;          /* --sm-clock MHZ, 0 = not given */
	const struct kp_devdb *db;    /* borrowed */
	int full_names;               /* --name=full: do not shorten kernel names */
	int step_series;              /* keep each row's time per ProfilerStep (kp_row.step_ns) */
	struct kp_event_cost *events; /* NULL, or trace.ngpu entries filled per GPU event
					 (kprof augment; meaningful with group kernel) */
	int warn_all;                 /* keep every warning message (--warnings=all) */
	int depth;                    /* GROUP_MODULE: fold module paths deeper than this, 0 all */
	int folded;                   /* GROUP_MODULE/SOURCE: fill kp_report.folds */
};

/* A line of the folded (flame graph) output: frames root first joined by ';', GPU ns. */
struct kp_fold {
	const char *stack; /* report arena */
	int64_t ns;
};

/* One GPU event's share of its op's model and the peaks it is held to (0: unknown). */
struct kp_event_cost {
	double flops, bytes; /* -1 unknown */
	double peak_flops;   /* FLOP/s of its precision at its clock */
	double peak_bw;      /* B/s of the memory path it crossed */
	const char *prec;    /* static, NULL */
};

/* Per-step series are kept only up to this many ProfilerStep spans (8 bytes per row and step). */
#define KP_STEP_SERIES_MAX 4096

/* Row flags */
#define ROW_OVER_PEAK 0x1 /* a rate above 100% of peak: wrong model or device entry */
#define ROW_VERIFY 0x2    /* a rate >= 90% of peak */
#define ROW_OTHERS 0x4    /* the folded "(others)" row */
#define ROW_UNLINKED 0x8  /* GPU work with no launching op */
#define ROW_MEASURED 0x10 /* FLOPs or bytes from measured counters (no model): `measured` */
#define ROW_FITS_L2 0x20  /* over the DRAM peak on bytes while the modelled bytes per kernel
			     fit in the device's L2: the data can come from L2 (`fits-L2`) */

/* One output row.  Strings are interned in the trace or in the report arena. */
/*
 * The part of an op-shape row whose work has one functional signature: that of the outermost
 * op above it with one (opmodel_signature(); NULL none), and one variant, the backend its ops
 * name ("math", "cudnn", "mm").  kprof-diff(1), PAIRS ACROSS BACKENDS.
 */
struct kp_sigpart {
	const char *sig;
	const char *variant;
	int64_t time_ns;
	int64_t calls;
	int64_t sig_calls; /* calls of the signature's op (distinct ones whose work is here) */
	int64_t flops;     /* -1 unknown */
	double peak_flop_ns;
	int64_t *step_ns; /* as kp_row.step_ns, NULL when the row has none */
};

struct kp_row {
	const char *name;  /* kernel name (group kernel) or op name */
	const char *key;   /* grouping key as text (diff joins on it) */
	const char *op;    /* op the work is attributed to; "(unlinked)"; NULL if several */
	const char *shape; /* op input shapes "[M,K]x[K,N]" or NULL */
	const char *dtype; /* "bf16", NULL when unknown or mixed */
	const char *prec;  /* precision of the peak used ("tf32"), NULL */
	int64_t calls;     /* kernels (group kernel) or op calls (group op) */
	int64_t kernels;   /* GPU events in the row */
	int64_t time_ns;   /* sum of GPU durations */
	int64_t min_ns, max_ns, med_ns;
	int64_t flops;         /* -1 unknown */
	int64_t bytes;         /* -1 unknown */
	int64_t *step_ns;      /* opts.step_series: GPU time in ProfilerStep i, tot.steps entries
				    (report arena); NULL when off, no steps or over KP_STEP_SERIES_MAX */
	double flops_per_s;    /* -1 unknown */
	double bytes_per_s;    /* -1 unknown */
	double pct_peak_flops; /* -1 unknown */
	double pct_peak_bw;    /* -1 unknown */
	double intensity;      /* FLOP/byte, -1 unknown */
	/* kprof capture --metrics counters of the row's kernels (kernel args), -1 none */
	int64_t mflops, mbytes;
	int64_t mflops_ns, mbytes_ns;      /* GPU time of the kernels that carry them */
	int64_t kern_ns;                   /* GPU time of the row's kernels (not memcpy/memset) */
	double mflops_per_s, mbytes_per_s; /* -1 unknown */
	double mratio_flops, mratio_bytes; /* measured / modelled, -1 unknown */
	const char *bound;                 /* "compute" | "memory" | NULL */
	double time_pct;                   /* % of total GPU time in the report */
	unsigned flags;
	int64_t nfolded; /* ROW_OTHERS: rows folded */
	/* accumulation state, used while building */
	double peak_flop_ns; /* sum of peak FLOP/s x dur over kernels with flops */
	double peak_bw_ns;
	int64_t flops_time_ns, bytes_time_ns;
	int64_t *durs;
	int64_t ndurs, capdurs;
	int mixed_op, mixed_dtype;
	int off_dram; /* some bytes crossed a path other than DRAM (copies, links) */
	/* op-shape rows: the row's figures split by functional signature (report arena) */
	struct kp_sigpart *parts;
	int nparts, capparts;
};

struct kp_totals {
	/* trace span: first start to last end of the CPU ops, runtime calls and GPU events */
	int64_t trace_span_ns;
	int64_t gpu_span_ns; /* GPU span: first start to last end of GPU events with a duration */
	int64_t gpu_busy_ns; /* union of GPU intervals (its share of the GPU span is busy %) */
	int64_t gpu_time_ns; /* sum of GPU durations */
	int64_t kernels;     /* GPU kernel events */
	int64_t memops;      /* memcpy + memset events */
	int64_t ops;         /* op calls with GPU work */
	int64_t unlinked;    /* GPU events with no op */
	int64_t flops;       /* sum of op FLOPs, -1 when none known */
	int64_t bytes;
	int64_t steps;    /* ProfilerStep spans in range */
	int64_t measured; /* kernels whose flops or bytes are measured counters (no model) */
	/*
	 * Model coverage of the GPU time: events that got FLOPs (math kernels of a modelled
	 * op, Inductor kernel_flop), events that move data with a byte model and no FLOPs
	 * (copies, pointwise, memcpy/memset), and kernels without any model; of those last,
	 * the distinct kernel names per enum kp_nomodel.
	 */
	int64_t flops_ns, bytes_only_ns, unmodelled_ns;
	int64_t nomodel_kernels[6];
};

/* Why a kernel has no model, for kp_totals.nomodel_kernels. */
enum kp_nomodel {
	NOMODEL_TRITON,
	NOMODEL_NCCL,
	NOMODEL_ATEN,
	NOMODEL_CUSTOM,
	NOMODEL_UNLINKED,
	NOMODEL_NOSHAPES, /* an op with a model but no recorded shapes (record_shapes off) */
};

/* Measured counters of cuda_profiler_range records, per kernel name (no time: see trace.h). */
struct kp_mrow {
	const char *name;
	int64_t calls;
	int64_t flops[3]; /* fp64, fp32, fp16 FLOPs from SASS instruction counts, -1 none */
};

struct kp_report {
	struct kp_arena arena;
	const struct kp_trace *trace; /* borrowed */
	const char *device_name;      /* as reported (or --device) */
	const struct kp_device *dev;  /* NULL when unknown */
	const char *match;            /* "exact", "pattern 'X'", "match: properties (...)" */
	const char *device_warning;   /* set when deviceProperties matched no entry or
						entries with different peaks (arena) */
	enum kp_clock_source clock_source;
	double sm_clock_mhz; /* clock used (time-weighted for trace clocks), 0 = ref */
	enum kp_group group;
	struct kp_row *rows;
	size_t nrows;
	struct kp_totals tot;
	struct kp_mrow *mrows; /* sorted by total FLOPs, then name */
	size_t nmrows;
	struct kp_warnings warn; /* analysis warnings (trace warnings live in trace) */
	unsigned mempaths;       /* 1 << enum kp_mempath of each memcpy/memset seen */
	struct kp_fold *folds;   /* kp_analyze_opts.folded: first-seen order, sums to the GPU time */
	size_t nfolds;
};

/* Prototypes */
/* Build @r from a linked trace.  Never fails on data; returns 0. */
int analyze_run(const struct kp_trace *t, const struct kp_analyze_opts *o, struct kp_report *r);
/* Keep @top rows (0 = all) and rows >= @min_pct of time; fold the rest into "(others)". */
void analyze_select(struct kp_report *r, long top, double min_pct);
void analyze_free(struct kp_report *r);

#endif /* KPROF_ANALYZE_H */
