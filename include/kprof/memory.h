/*
 * memory.h — device memory from a trace's [memory] events (kprof analyze --memory): per
 * device the peak allocated and reserved bytes, when the first peak happens, the blocks live
 * at it by the op (and module) that allocated them, and per-op allocation counts.  Format
 * facts: doc/memory.md; the rules: kprof-analyze(1), MEMORY.
 */
#ifndef KPROF_MEMORY_H
#define KPROF_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "kprof/arena.h"
#include "kprof/trace.h"

/* One (op, module) group: blocks live at the peak, or the op's allocation counts. */
struct kp_mem_row {
	const char *op;      /* the innermost op on the allocating thread (interned in the
				trace), MEM_NO_OP outside any op, MEM_BEFORE for the baseline */
	const char *module;  /* that op's nn.Module path ("LlamaForCausalLM_0/...", interned),
				NULL without python_function events or outside any module */
	int64_t bytes;       /* live_at_peak: live bytes (MEM_BEFORE: the remainder) */
	int64_t count;       /* live_at_peak: live blocks (MEM_BEFORE: 0, unknown) */
	int64_t alloc_bytes, alloc_count; /* ops: allocations made in the window */
	int64_t freed_bytes, freed_count; /* ops: ... freed in the window */
	int64_t kept_bytes, kept_count;   /* ops: ... never freed in the window */
};

#define MEM_NO_OP "(no op)"
#define MEM_BEFORE "(allocated before the trace)"

/*
 * One point of a device's curve: an event kept by the downsampling (memory_run keeps, of the
 * events in each of MEM_CURVE_BUCKETS equal stretches of the device's events' span, the
 * first, the last, the lowest and highest allocated and the highest reserved, so the
 * curve's maximum is the peak exactly).
 */
struct kp_mem_pt {
	int64_t ts_ns;      /* trace clock */
	int64_t alloc;      /* allocated after the event (bytes_only: the running sum) */
	int64_t res;        /* reserved after the event, -1 unknown */
	const char *op;     /* the innermost op on the event's thread, NULL none */
	const char *module; /* that op's nn.Module path, NULL none */
	int32_t bucket;     /* its stretch: [curve_t0 + bucket * curve_bw, + curve_bw) */
	int32_t top;        /* 1: its stretch's highest allocated (the first event at it) */
};

#define MEM_CURVE_BUCKETS 600

/* One device of one process: a (pid, Device Type, Device Id). */
struct kp_mem_dev {
	int64_t pid;           /* the process (merged traces hold several), -1 when a string */
	int dev_type;          /* c10::DeviceType: 0 CPU, 1 CUDA, 6 HIP; -1 absent */
	int dev_id;            /* Device Id; -1 for the CPU */
	int bytes_only;        /* some event lacks Addr or Total Allocated (torch <= 1.9):
				  allocated is the running sum of Bytes from the trace's start,
				  no pairing, no reserved, no live set */
	int64_t nevents, nallocs, nfrees;
	int64_t peak_alloc;    /* the maximum Total Allocated (bytes_only: of the running sum) */
	int64_t peak_res;      /* the maximum Total Reserved, -1 unknown */
	int64_t peak_ts_ns;    /* the first event at peak_alloc (trace clock) */
	int64_t res_at_peak;   /* Total Reserved at that event, -1 unknown */
	int64_t baseline;      /* allocated before the window (first Total Allocated - its Bytes),
				  -1 unknown */
	int64_t step;          /* ProfilerStep number at the peak, -1 none */
	const char *peak_op;   /* the op the peak event ran in, NULL none */
	const char *peak_module;
	int64_t unmatched_frees, unmatched_free_bytes; /* frees of blocks from before the window */
	int64_t double_allocs; /* an address allocated again with no free between (a lost free) */
	int64_t kept_bytes, kept_count; /* allocations of the window live at its end */
	struct kp_mem_row *live; /* live at the peak, bytes descending; the last row MEM_BEFORE */
	size_t nlive;
	struct kp_mem_row *ops; /* per (op, module), allocated bytes descending */
	size_t nops;
	struct kp_mem_pt *curve; /* allocated and reserved over time, downsampled, time order */
	size_t ncurve;
	int64_t curve_t0, curve_bw; /* the first event's time, the stretches' width (ns, >= 1) */
};

/* The memory analysis of a trace.  Owns its arrays; names are borrowed from the trace. */
struct kp_memrep {
	struct kp_arena arena;
	struct kp_mem_dev *devs; /* GPU devices (Device Type != 0) first, then the CPU ones;
				    each by pid, type, id */
	size_t ndevs, ngpu;      /* ngpu: how many of devs are not the CPU */
	int64_t nevents;         /* [memory] events read */
	int64_t t0_ns;           /* the trace's first op, launch, GPU or memory event (relative
				    times) */
	int64_t t1_ns;           /* the last end of one of them */
};

/* Prototypes */
/*
 * The memory analysis of @t (loaded and linked: ops' parents, python frames).  Events are put
 * in time order per device (file order between equal times); each allocation is attributed to
 * the innermost op on its thread whose [ts, ts + dur) holds it; a free to its allocation.
 * Never fails on data; an empty report when the trace has no [memory] event.
 */
void memory_run(const struct kp_trace *t, struct kp_memrep *m);
void memory_free(struct kp_memrep *m);

#endif /* KPROF_MEMORY_H */
