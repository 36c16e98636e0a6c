/*
 * cmem.h — `kprof capture --memory`: CUPTI's device-memory records (REC_MEMORY) as the
 * [memory] instant events torch.profiler writes (doc/memory.md §2.1, §6).
 */
#ifndef KPROF_CMEM_H
#define KPROF_CMEM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct kp_ctrace;

/* One [memory] event, ready to write. */
struct kp_cmem {
	uint64_t ts_ns;     /* the record's time, moved inside its API call when one is known */
	uint32_t pid, tid;  /* tid: the allocating API call's thread; the pid without one */
	uint32_t device;    /* CUDA device id */
	uint64_t addr;
	int64_t bytes;      /* +size on allocation, -size on release */
	int64_t total;      /* the (pid, device)'s device bytes after this event */
	size_t rec;         /* index of the REC_MEMORY record (order between equal times) */
	int no_call;        /* no API call record has its correlation id */
	int library;        /* a library's own allocation (cmem_build), left out of the sums */
};

/* What cmem_build() kept and left out. */
struct kp_cmem_stats {
	size_t events;             /* [memory] events built */
	size_t unattributed;       /* of them, without an API call record: on the process's pid */
	size_t other_kinds;        /* records of pageable, pinned, static, managed... memory */
	size_t unmatched_releases; /* releases of blocks whose allocation was not recorded */
	size_t library;            /* allocations libraries made through their own runtime */
	uint64_t library_bytes;    /* their bytes (left out of the events and the sums) */
};

/* Prototypes */
/*
 * The [memory] events of @t's device-memory records (memory kind 3, device), sorted by time
 * (record order between equal times).  Each (pid, device) keeps a running sum of the bytes
 * allocated and not yet released: Total Allocated and Total Reserved both.  A release takes
 * the size of its allocation at the same address; a release of a block whose allocation was
 * not recorded is left out (and counted), as is a zero-size allocation.  In a process whose
 * own cudaMalloc calls kprof-shim.so recorded (HC_DEVALLOC), a cudaMalloc that is none of
 * them was made by a library through its statically linked runtime (cuBLAS and cuDNN handles
 * and workspaces): it is left out with its release and counted in @st->library, so that
 * Total Reserved is what the program's allocator reserved (doc/memory.md §6.2).  Thread and
 * time come from the API call with the record's correlation id (its thread; the record's time
 * clamped into the call), so that analyze puts the event in the op that made the call.
 * Returns the events (malloc'ed, *@n of them; NULL when none) and fills @st, or sets *@n to
 * SIZE_MAX on out-of-memory.
 */
struct kp_cmem *cmem_build(const struct kp_ctrace *t, size_t *n, struct kp_cmem_stats *st);
/*
 * The events as Kineto writes profile_memory's: ",\n{ph i, cat cpu_instant_event, s t,
 * name [memory], pid, tid, ts, args {Total Reserved, Total Allocated, Bytes, Device Id,
 * Device Type 1, Addr, kprof source cupti}}", ts in µs after @base.
 */
void cmem_put(FILE *out, const struct kp_cmem *ev, size_t n, uint64_t base);

#endif /* KPROF_CMEM_H */
