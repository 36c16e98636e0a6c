/*
 * ctrace.h — what a capture collects (CUPTI records in kprof's own fixed-size form, op spans,
 * NVML clock samples, device properties) and the Kineto-compatible JSON writer.  No CUDA here:
 * the unit tests feed synthetic records.
 */
#ifndef KPROF_CTRACE_H
#define KPROF_CTRACE_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "intercept/hcall.h"
#include "kprof/hmap.h"
#include "record/kmetrics.h"

enum kp_rec_kind {
	REC_KERNEL,
	REC_MEMCPY,
	REC_MEMSET,
	REC_RUNTIME,
	REC_DRIVER,
	REC_SYNC,
	REC_OVERHEAD,
	REC_MEMORY, /* --memory: one CUPTI MEMORY2 allocation or release (cmem.h) */
};

/*
 * One CUPTI activity record, decoupled from CUPTI struct versions.  Fields a kind does not have
 * stay 0.  @name is interned in the owning struct kp_ctrace (never freed alone).
 */
struct kp_rec {
	int kind;          /* enum kp_rec_kind */
	uint64_t start_ns; /* CUPTI timestamps: CLOCK_REALTIME ns */
	uint64_t end_ns;
	uint32_t corr; /* CUPTI correlation id */
	uint32_t device, context, stream;
	const char *name; /* kernel (demangled), API (no _vNNNN), "Memcpy HtoD (...)" */
	int32_t grid[3], block[3];
	uint32_t regs;     /* registers per thread */
	uint32_t smem;     /* static + dynamic shared memory, bytes */
	uint64_t queued;   /* 0 unless latency timestamps were enabled */
	uint64_t bytes;    /* memcpy / memset */
	uint32_t cbid;     /* runtime / driver */
	uint32_t pid, tid; /* runtime / driver: OS pid and thread id */
	uint32_t graph_id;
	uint64_t graph_node_id;
	uint64_t gext;      /* graph replays: External id of the op that created the node */
	uint32_t sync_type; /* REC_SYNC: CUpti_ActivitySynchronizationType */
	uint32_t event_id;  /* REC_SYNC: cudaEventId */
	uint32_t met;       /* REC_KERNEL: 1 + index of its measured counters (kmet), 0 none */
	uint64_t addr;      /* REC_MEMORY: the block's address (bytes: its size; start_ns: when;
			       pid: CUPTI's processId; corr: the allocating API call's) */
	uint32_t mem_op;    /* REC_MEMORY: CUpti_ActivityMemoryOperationType, 1 alloc 2 release */
	uint32_t mem_kind;  /* REC_MEMORY: CUpti_ActivityMemoryKind, 3 device */
};

/* CUPTI correlation -> External id (CUSTOM0 external correlation records). */
struct kp_extcorr {
	uint32_t corr;
	uint64_t ext;
};

/* A CUDA graph node and the op it was created in (@ext), or the node it was cloned from. */
struct kp_gnode {
	uint64_t node;
	uint64_t ext;  /* 0 for a clone */
	uint64_t orig; /* the original of a clone, 0 otherwise */
};

/*
 * A host span: a cpu_op or a user_annotation, recorded by the workloads, or (hostops.c) a
 * python_function, written without "External id" as Kineto writes the Python tree.
 */
struct kp_span {
	const char *cat; /* "cpu_op", "user_annotation" or "python_function" (static) */
	char *name;      /* malloc'ed */
	uint64_t start_ns, end_ns;
	uint32_t pid, tid;
	uint64_t ext; /* External id; unique per span */
	char *args;   /* malloc'ed JSON members after "External id" (no braces), or NULL */
};

/*
 * One end of a flow arrow between host spans (Kineto's "fwdbwd": a forward op -> the backward
 * op of its autograd node): @ph 's' at the forward op, 'f' at the backward one; @id pairs them.
 */
struct kp_flow {
	char ph;
	uint64_t id;
	uint64_t ts_ns;
	uint32_t pid, tid;
};

/* One NVML sample; t_ns is the midpoint of the NVML calls (CLOCK_REALTIME). */
struct kp_clk_sample {
	uint64_t t_ns;
	uint32_t sm_mhz, mem_mhz;
	uint64_t reasons; /* nvmlClocksEventReasons bits */
};

/* Properties of one device as Kineto writes them, plus clocks (cudaDeviceProp names). */
struct kp_cdevprops {
	int id;
	char name[256];
	uint64_t total_global_mem;
	int compute_major, compute_minor;
	int max_threads_per_block, max_threads_per_mp;
	int regs_per_block, warp_size;
	uint64_t smem_per_block;
	int num_sms;
	int regs_per_mp;
	uint64_t smem_per_block_optin, smem_per_mp;
	int clock_rate_khz;     /* max SM clock; 0 unknown */
	int mem_clock_rate_khz; /* 0 unknown */
	int mem_bus_width;      /* bits; 0 unknown */
};

struct kp_strnode;

/*
 * Everything a capture collects.  Records and samples arrive from other threads (CUPTI's
 * buffer-completion thread, the NVML sampler), so appends take @lock.  Free with ctrace_free().
 */
struct kp_ctrace {
	pthread_mutex_t lock;
	struct kp_rec *recs;
	size_t nrecs, caprecs;
	struct kp_extcorr *ext;
	size_t next, capext;
	struct kp_span *spans;
	size_t nspans, capspans;
	struct kp_flow *flows; /* fwdbwd flow ends between spans (hostops.c) */
	size_t nflows, capflows;
	struct kp_hcall *hcalls; /* library calls and NVTX ranges (names interned) */
	size_t nhcalls, caphcalls;
	struct kp_gnode *gnodes; /* graph nodes created inside ops (kprof-inject.so) */
	size_t ngnodes, capgnodes;
	struct kp_clk_sample *samples;
	size_t nsamples, capsamples;
	struct kp_kmet *kmet; /* --metrics: range-profiler values (kmetrics.h) */
	size_t nkmet;
	struct kp_mwin *mwin; /* --metrics: the timed windows they belong to */
	size_t nmwin;
	struct kp_cdevprops dev[16];
	int ndev;
	struct kp_hmap strs; /* interned names: HMAP_STR, val.ptr the malloc'ed copy */

	uint64_t untraced_ext;    /* records linked to this External id are dropped */
	uint64_t dropped_records; /* CUPTI's count, summed over buffers */
	int clock_known;          /* NVML samples exist */
	uint32_t sm_clock_max_mhz, mem_clock_max_mhz;
	int sample_period_ms;
	int cupti_version, cuda_runtime_version, cuda_driver_version;
	int memory; /* --memory: REC_MEMORY records become [memory] events (cmem.h) */
	size_t mem_library;         /* set by ctrace_write(): libraries' own allocations left */
	uint64_t mem_library_bytes; /* out of the [memory] events, and their bytes (cmem.h) */
	char *meta;         /* malloc'ed extra members of the "kprof" object, or NULL */
	char *process_name; /* malloc'ed name of the CPU processes; NULL: "kprof" */
};

/* Prototypes */
void ctrace_init(struct kp_ctrace *t);
void ctrace_free(struct kp_ctrace *t);

/* Intern @s (length @len); the copy lives until ctrace_free().  Thread-safe. */
const char *ctrace_intern(struct kp_ctrace *t, const char *s, size_t len);

/* Append (copying); thread-safe.  Return -1 on out-of-memory. */
int ctrace_add_rec(struct kp_ctrace *t, const struct kp_rec *r);
int ctrace_add_ext(struct kp_ctrace *t, uint32_t corr, uint64_t ext);
int ctrace_add_sample(struct kp_ctrace *t, const struct kp_clk_sample *s);
/* Copies @c, interning its name and domain. */
int ctrace_add_hcall(struct kp_ctrace *t, const struct kp_hcall *c);
int ctrace_add_gnode(struct kp_ctrace *t, uint64_t node, uint64_t ext, uint64_t orig);
/*
 * Set gext of every GPU record replayed from a graph node whose creation happened inside an
 * op (clones followed to their original).  Returns the number of records set.
 */
size_t ctrace_resolve_gnodes(struct kp_ctrace *t);
/* Takes ownership of @name and @args (malloc'ed). */
int ctrace_add_span(struct kp_ctrace *t, const char *cat, char *name, uint64_t start_ns,
		    uint64_t end_ns, uint32_t pid, uint32_t tid, uint64_t ext, char *args);

/* A "fwdbwd" flow end (@ph 's' or 'f'); thread-safe.  Returns -1 on out-of-memory. */
int ctrace_add_flow(struct kp_ctrace *t, char ph, uint64_t id, uint64_t ts_ns, uint32_t pid,
		    uint32_t tid);

/*
 * Time-weighted mean SM clock over [start_ns, end_ns) of the samples, each holding from the
 * midpoint with its predecessor to the midpoint with its successor; a kernel inside one cell
 * gets that (nearest) sample.  Samples must be sorted by t_ns.  Returns 0 and sets *mhz, or -1
 * when the interval lies more than @period_ns outside the sampled window or there are none.
 */
int ctrace_clock_at(const struct kp_clk_sample *s, size_t n, uint64_t period_ns, uint64_t start_ns,
		    uint64_t end_ns, double *mhz);

/* Strip a trailing "_vNNNN" API version: "cudaLaunchKernel_v7000" -> length of "cudaLaunchKernel". */
size_t ctrace_api_name_len(const char *name);

/* Kineto's names: "Memcpy HtoD (Pageable -> Device)", "Memset (Device)". */
void ctrace_memcpy_name(char *buf, size_t size, int copy_kind, int src_kind, int dst_kind);
void ctrace_memset_name(char *buf, size_t size, int mem_kind);
const char *ctrace_overhead_name(int overhead_kind);
const char *ctrace_sync_name(int sync_type);

/*
 * Write the Kineto-compatible trace (doc/trace-format.md §2-§5, doc/cupti-capture.md §4).  Sorts the
 * samples and the External-id map.  Returns 0, or -1 with errno set on a write error.
 */
int ctrace_write(struct kp_ctrace *t, FILE *out, const char *trace_name);

#endif /* KPROF_CTRACE_H */
