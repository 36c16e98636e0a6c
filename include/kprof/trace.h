/*
 * trace.h — a Chrome/Kineto trace reduced to compact records: CPU ops, launches, GPU work.
 */
#ifndef KPROF_TRACE_H
#define KPROF_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "kprof/arena.h"
#include "kprof/diag.h"
#include "kprof/opmodel.h"
#include "kprof/results.h"
#include "kprof/strtab.h"

/*
 * Records are kept small (issue 14: peak RSS): what only linking needs (ids) sits in
 * kp_trace.op_ext / launch_ids / gpu_ids, freed by link_trace(); fields few events carry
 * sit in side tables: kp_trace.opx, one entry per op that has any, in op order (found by
 * a binary search), and kp_trace.gpux, indexed by kp_gpu.x (-1: none).  Read them with
 * trace_opx() / trace_gpux().
 */

/* A CPU op (cat cpu_op; also the legacy "Operator").  Times in ns of the trace's clock. */
struct kp_op {
	int64_t ts_ns, dur_ns;
	const char *name;      /* interned */
	int64_t off;           /* byte offset of the event, for messages */
	struct kp_slot *slots; /* nslots entries, NULL without record_shapes */
	int32_t thread;        /* index into kp_trace.threads */
	int32_t parent;        /* enclosing op on the same thread, -1 (set by link; a B op
				  opened inside a B op: that one, set by load) */
	int32_t model;         /* op whose model counts this op's kernels, -1 (set by link) */
	int16_t nslots;
	int8_t prec_hint; /* kprof traces: "kprof compute" (enum kp_prec), PREC_NONE */
	int8_t cls;       /* opmodel_class(name), cached at load */
};

/* An op's rarer fields (kp_trace.opx). */
struct kp_opx {
	int64_t kernel_flop;  /* Inductor args, -1 when absent */
	double kernel_num_gb; /* < 0 when absent */
	int64_t seq;          /* "Sequence number" (autograd) of the ops fwdbwd.c pairs
				 (trace_keeps_seq()), else -1 */
	int32_t op;           /* the op's index */
	int32_t bwd;          /* forward conv: the backward op giving its output shape, -1
				 (set by link, fwdbwd.c; such an op has a Sequence number) */
};

/* ... of a launch or GPU event (kp_trace.launch_ids, gpu_ids). */
struct kp_corr_ids {
	int64_t corr; /* "correlation", -1 when absent */
	int64_t ext_id;
};

/* A runtime or driver API call (cat cuda_runtime / cuda_driver). */
struct kp_launch {
	int64_t ts_ns, dur_ns;
	const char *name;
	int64_t off;
	int32_t thread;
	int32_t op; /* innermost enclosing op, -1 (set by link) */
};

enum kp_gpu_kind { GPU_KERNEL, GPU_MEMCPY, GPU_MEMSET };

/* GPU work: a kernel, memcpy or memset on a device stream. */
struct kp_gpu {
	int64_t ts_ns, dur_ns;
	const char *name;
	int64_t off;
	int64_t stream;
	int32_t device;
	int32_t launch; /* index into launches, -1 (set by link) */
	int32_t op;     /* op the kernel is attributed to (model level), -1 = unlinked */
	int32_t x;      /* index into kp_trace.gpux, -1: every field there absent */
	int16_t step;   /* ProfilerStep index of the launch, -1 (link; at most
			   INT16_MAX: later spans count there, with a warning) */
	uint8_t kind;   /* enum kp_gpu_kind */
};

/* A GPU event's rarer fields (kp_gpu.x). */
struct kp_gpux {
	int64_t bytes;          /* memcpy/memset "bytes", -1 */
	int64_t kernel_flop;    /* Inductor kernel args, -1 */
	double kernel_num_gb;   /* < 0 when absent */
	int64_t mflops, mbytes; /* kprof capture --metrics: measured FLOPs, DRAM bytes; -1 */
	int32_t sm_clock_mhz;   /* kprof traces: SM clock during the kernel, 0 unknown */
};

struct kp_thread {
	int64_t pid, tid;
	uint8_t pid_str, tid_str; /* the id was a JSON string (then pid/tid hold an interned ptr) */
};

/*
 * The unlaunched prefix (link.c): GPU events with no launch call that start before the first
 * GPU event with one, i.e. work launched before the profiler's window opened.  Counted in
 * every span and total unless dropped (kprof analyze --drop-unlaunched-prefix).
 */
struct kp_prefix {
	int64_t n;        /* such events; 0 when no GPU event has a launch call */
	int64_t gpu_ns;   /* their GPU time */
	int64_t start_ns; /* the first one's start */
	int64_t until_ns; /* the start of the first GPU event with a launch call */
	int dropped;      /* left out of kp_trace.gpu (link_drop_unlaunched_prefix()) */
};

/* deviceProperties[i] */
struct kp_devprop {
	int id;
	const char *name;
	int sms;
	int cc_major, cc_minor;
	int64_t total_mem;
	int clock_khz; /* kprof traces: max SM clock */
	int mem_clock_khz;
	int bus_bits;
};

/* A ProfilerStep#N span (user_annotation on a CPU thread). */
struct kp_step {
	int64_t ts_ns, dur_ns;
	int64_t num; /* N */
	int32_t thread;
};

/*
 * A CUPTI range-profiler record (cat cuda_profiler_range): measured SASS thread
 * instruction counts of one kernel.  Its ts/dur are the profiler's range spacing, not
 * the kernel's time, so only the counts are kept.
 */
struct kp_range {
	const char *name;
	int64_t off;
	int64_t flops[3]; /* fp64, fp32, fp16: add + mul + 2 x fma instructions, -1 none */
};

/*
 * Collective metadata Kineto copies from record_param_comms onto the NCCL kernel it
 * launched (2024+ traces): one record per such kernel.
 */
struct kp_coll {
	int32_t gpu;        /* index into kp_trace.gpu */
	int32_t group_size; /* "Group size", -1 absent */
	const char *name;   /* "Collective name" ("allreduce"), interned, NULL absent */
	const char *dtype;  /* "dtype" ("Float"), interned, NULL absent */
	int64_t in_nelems;  /* "In msg nelems", -1 absent */
	int64_t out_nelems; /* "Out msg nelems", -1 absent */
};

/* What a parallel parse did, in nanoseconds (kp_load_opts.stats; KPROF_TIMING prints it). */
struct kp_load_stats {
	int threads;             /* parsing threads, the main one included; 0: a serial parse */
	int direct;              /* workers read their own chunks (a plain regular file) */
	int64_t chunks, merged;  /* chunks cut; chunks whose records were taken */
	int64_t main_merge_ns;   /* the main thread taking chunks' records into the trace */
	int64_t main_release_ns; /* ... handing chunks back */
	int64_t main_wait_ns;    /* ... waiting for a chunk to be cut or parsed */
	int64_t reader_busy_ns;  /* the producer reading, inflating and cutting */
	int64_t workers_busy_ns; /* threads parsing chunks (the main thread's included) */
	int64_t workers_read_ns; /* ... of which reading them (direct) */
	int64_t workers_ns;      /* the workers' lifetimes, summed (main thread not included) */
};

struct kp_load_opts {
	int strict;                  /* truncation and anomalies become errors (status 3) */
	int annotations;             /* keep user_annotation spans in kp_trace.annots */
	int warn_all;                /* keep every warning message (--warnings=all) */
	int jobs;                    /* parse on this many threads (regular files; <= 1: serial) */
	size_t chunk;                /* bytes per parallel chunk, 0 = from the file size (tests) */
	struct kp_load_stats *stats; /* filled in when not NULL */
};

/*
 * A python_function event (torch.profiler with_stack=True): a Python frame, an nn.Module call
 * ("nn.Module: Linear_0") or a C call ("<built-in method ...>").  The tree fields are set by
 * pytree_link() (src/ingest/pytree.c; doc/attribution.md).
 */
enum kp_pyframe_kind { PYF_FUNC = 0, PYF_MODULE, PYF_CCALL };

struct kp_pyframe {
	int64_t ts_ns, dur_ns;
	const char *name;   /* interned, as the trace names it */
	int64_t pyid;       /* "Python id", -1 absent */
	int64_t pyparent;   /* "Python parent id", -1 absent or null */
	int64_t module_id;  /* "Python module id", -1 absent */
	int32_t thread;
	int32_t parent;     /* enclosing frame on its thread by time nesting, -1 (pytree) */
	int32_t module;     /* innermost nn.Module frame at or above this one, -1 (pytree) */
	int32_t source;     /* innermost frame "path(line): func" whose path has no "torch/"
			       at or above this one, -1 (pytree) */
	int32_t stack;      /* index into kp_trace.pystacks: the names root first (pytree) */
	const char *path;   /* PYF_MODULE: the module path "M_0/B_1" (interned), else NULL */
	uint8_t kind;       /* enum kp_pyframe_kind */
};

/*
 * A node of the frame-stack trie: one per distinct stack of frame names, root first (C-call
 * names without their " at 0x..." address).  parent -1 at the root.
 */
struct kp_pystack {
	const char *name;
	int32_t parent;
	int32_t depth; /* 1 at the root */
};

/*
 * A [memory] instant event (torch.profiler profile_memory=True; doc/memory.md §2):
 * one allocation (bytes > 0) or free (bytes < 0) of an allocator block.  Traces of torch <= 1.9
 * carry only Bytes, Device Type and Device Id (§2.4): the other fields are KP_MEM_NONE.
 */
#define KP_MEM_NONE INT64_MIN
struct kp_mem {
	int64_t ts_ns;
	int64_t off;         /* byte offset of the event, for messages */
	int64_t addr;        /* "Addr": the block, KP_MEM_NONE absent */
	int64_t bytes;       /* "Bytes": +size on an allocation, -size on a free */
	int64_t total_alloc; /* "Total Allocated" after the event, KP_MEM_NONE absent */
	int64_t total_res;   /* "Total Reserved" after the event, KP_MEM_NONE absent */
	int32_t thread;      /* the allocating or freeing thread */
	int16_t dev_type;    /* "Device Type" (c10::DeviceType: 0 CPU, 1 CUDA, 6 HIP), -1 absent */
	int16_t dev_id;      /* "Device Id" (-1 for the CPU), -1 absent */
};

/* A user_annotation span other than ProfilerStep#N: record_function, NVTX range (kprof). */
struct kp_annot {
	int64_t ts_ns, dur_ns;
	const char *name;
	int32_t thread;
};

/*
 * One parsed trace.  Owns its arena; every pointer inside lives until trace_free().
 * Record arrays are malloc'ed vectors, also freed by trace_free().
 */
struct kp_trace {
	struct kp_arena arena;
	struct kp_strtab strs;
	const char *path;    /* as given */
	const char *display; /* name used in messages ("<stdin>" for -) */
	struct kp_op *ops;
	size_t nops, capops;
	struct kp_launch *launches;
	size_t nlaunches, caplaunches;
	struct kp_gpu *gpu;
	size_t ngpu, capgpu;
	/* linking's ids, one per record (same index, own capacity); NULL after link_trace() */
	int64_t *op_ext; /* ops' "External id", -1 when absent */
	struct kp_corr_ids *launch_ids, *gpu_ids;
	size_t capop_ext, caplaunch_ids, capgpu_ids;
	struct kp_opx *opx; /* kp_op.x */
	size_t nopx, capopx;
	struct kp_gpux *gpux; /* kp_gpu.x */
	size_t ngpux, capgpux;
	struct kp_thread *threads;
	size_t nthreads, capthreads;
	struct kp_devprop *devs;
	int ndevs, capdevs;
	struct kp_step *steps;
	size_t nsteps, capsteps;
	struct kp_range *ranges;
	size_t nranges, capranges;
	struct kp_coll *colls;
	size_t ncolls, capcolls;
	struct kp_prefix prefix; /* set by link_trace() */
	int64_t rank, world_size; /* distributedInfo, -1 when absent */
	const char *backend;      /* distributedInfo "backend", NULL when absent */
	struct kp_annot *annots;  /* only with kp_load_opts.annotations */
	size_t nannots, capannots;
	struct kp_mem *mem; /* [memory] events, in file order */
	size_t nmem, capmem;
	struct kp_pyframe *py; /* python_function events, in file order */
	size_t npy, cappy;
	/* set by pytree_link() when the trace has python_function events, else NULL */
	struct kp_pystack *pystacks;
	size_t npystacks;
	int32_t *op_frame;     /* per op: the python frame it runs under, -1 (a backward op:
				  its forward op's frame) */
	uint8_t *op_bwd;       /* per op: 1 when op_frame is its forward op's (backward) */
	int32_t *launch_frame; /* per launch: innermost frame enclosing it on its thread, -1 */
	int64_t base_ns; /* baseTimeNanoseconds, 0 when absent */
	int has_base;
	int kprof_trace;       /* top-level "kprof" object present */
	int kprof_clock_known; /* kprof trace with "clock": "nvml" */
	int kprof_sm_clock_max_mhz;
	struct kp_results kprof_results; /* "kprof"."results": the built-in workloads' results
					    (capture.c), in run order; n 0 none */
	int64_t nevents;  /* events seen in traceEvents */
	int64_t nskipped; /* events skipped by category */
	int64_t nflows;
	int64_t bytes; /* bytes of JSON read (inflated) */
	int truncated; /* input ended early; events before trunc_off are kept */
	int64_t trunc_off;
	struct kp_warnings warn;
	int jobs;   /* threads linking and analysis may use (kp_load_opts.jobs, at least 1) */
	void *priv; /* loader/linker private data */
};

/* Prototypes */
/*
 * Read @path ("-" = stdin, gzip detected) into @t.  A truncated file keeps every
 * complete event and adds a warning naming the byte offset (with o->strict: error,
 * status 3).  Malformed JSON: "FILE:LINE:COL: error: ..." status 3.  Open/read
 * failures status 4.  On error @t is still valid for trace_free().
 */
int trace_load(struct kp_trace *t, const char *path, const struct kp_load_opts *o,
	       struct kp_diag *d);
void trace_free(struct kp_trace *t);
/*
 * Free the record vectors (ops, launches, GPU events, threads, steps, annotations, ranges,
 * collectives; their counts become 0), keeping names, warnings and metadata: for a caller
 * done analysing @t whose report (which points at @t's names) lives on (diff).
 */
void trace_drop_records(struct kp_trace *t);
/* Free the ids only linking reads (link_trace() calls it). */
void trace_free_ids(struct kp_trace *t);

/*
 * A forward convolution op (aten::convolution, _convolution, cudnn_convolution, ...):
 * fwdbwd.c pairs it with its backward by their Sequence number.
 */
int trace_conv_fwd_op(const char *name);
/*
 * An autograd node of a convolution ("CudnnConvolutionBackward", "ConvolutionBackward0",
 * "ThnnConv2DBackward"): it carries the Sequence number of its forward.  Not the
 * "autograd::engine::evaluate_function: ..." wrapper, not an aten:: op.
 */
int trace_conv_bwd_node(const char *name);
/* Whether the loader keeps the Sequence number of ops named @name (kp_opx.seq): either. */
int trace_keeps_seq(const char *name);

extern const struct kp_opx kp_opx_none;
extern const struct kp_gpux kp_gpux_none;

/* @op's side fields, NULL when it has none. */
struct kp_opx *trace_opx_of(const struct kp_trace *t, const struct kp_op *op);

/* @op's side fields (kp_opx_none's when it has none). */
static inline const struct kp_opx *trace_opx(const struct kp_trace *t, const struct kp_op *op)
{
	const struct kp_opx *x = t->nopx ? trace_opx_of(t, op) : NULL;
	return x ? x : &kp_opx_none;
}

static inline const struct kp_gpux *trace_gpux(const struct kp_trace *t, const struct kp_gpu *g)
{
	return g->x >= 0 ? &t->gpux[g->x] : &kp_gpux_none;
}

#endif /* KPROF_TRACE_H */
