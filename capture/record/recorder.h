/*
 * recorder.h — the CUPTI Activity-API recorder: buffers, kinds, external correlation, and the
 * conversion of CUPTI records into struct kp_rec.
 */
#ifndef KPROF_RECORDER_H
#define KPROF_RECORDER_H

#include <stddef.h>
#include <stdint.h>

struct kp_ctrace;

/* Which host API calls a capture records (--trace-api, kprof-capture(1)). */
enum kp_trace_api {
	TRACE_API_LAUNCH, /* the calls analyze needs (recorder_api_wanted), by callbacks */
	TRACE_API_ALL,    /* every runtime and driver call, synchronization, overhead */
	TRACE_API_NONE,   /* none: GPU records only, nothing links (CUPTI's floor) */
};

/*
 * One API call recorded by --trace-api launch's callbacks on its own thread: its CPU time on
 * CUPTI's clock, correlation id, the External id pushed on the thread at the time (0 none).
 */
struct kp_apicall {
	uint64_t start_ns, end_ns;
	uint64_t ext;
	uint32_t corr, cbid;
	uint32_t tid;    /* OS thread id */
	uint32_t driver; /* 1: driver API, 0: runtime API */
};

/* Prototypes */
/*
 * Add @c to @t: a REC_RUNTIME / REC_DRIVER record named @name (interned, _vNNNN stripped) of
 * process @pid, and its correlation -> External id mapping when it has one.  -1 on
 * out-of-memory.
 */
int recorder_add_call(struct kp_ctrace *t, const struct kp_apicall *c, uint32_t pid,
		      const char *name);
/* Before recorder_start(): what it records of API calls (enum kp_trace_api). */
void recorder_set_api(int mode);
/*
 * Before recorder_start(): --memory, CUPTI's MEMORY2 records (REC_MEMORY) and, with
 * --trace-api launch or all, the allocation and free calls they correlate with.
 */
void recorder_set_memory(int on);
/*
 * Is @name (a runtime or driver API name, with or without its _vNNNN suffix) one of the calls
 * --trace-api launch records?  Launches, copies, sets, graph launches, synchronize and
 * stream-wait calls; after recorder_set_memory(1) also cudaMalloc*, cudaFree*, cuMemAlloc*,
 * cuMemFree*, cuMemCreate and cuMemRelease.
 */
int recorder_api_wanted(const char *name);
/*
 * Claim CUPTI, register buffers and enable the kinds of doc/cupti-capture.md §2.1 (never KERNEL)
 * that recorder_set_api() asks for.
 * Call before the first CUDA call.  Records go to @t.  Returns 0, or -1 with a reason in @why.
 */
int recorder_start(struct kp_ctrace *t, char *why, size_t whylen);
/*
 * `-- <cmd>` --metrics run: claim CUPTI without activity kinds; every kernel launch (driver
 * API, with its kernel's name) and memset call becomes a REC_KERNEL / REC_MEMSET in @t whose
 * start_ns is its launch ordinal.  Returns 0, or -1 with a reason in @why.
 */
int recorder_start_launches(struct kp_ctrace *t, char *why, size_t whylen);
/* Turn tracing of all kinds off (0) or back on (1), for --overhead's untraced loop. */
int recorder_enable(int on);
/* Push / pop a CUSTOM0 external correlation id on the calling thread. */
void recorder_push(uint64_t ext);
void recorder_pop(void);
/* After cudaDeviceSynchronize(): forced flush, dropped-record count, cuptiFinalize(). */
void recorder_stop(void);
/*
 * Record which op each CUDA graph node was created in: @context gives the calling thread's
 * op External id (0 none).  Returns 0, or -1 when CUPTI refuses the callbacks.
 */
int recorder_graph_nodes(uint64_t (*context)(void));
/*
 * Call @fn(context, 1) when a CUDA context is created and @fn(context, 0) when one starts being
 * destroyed (CUPTI resource callbacks; --metrics in kprof-inject.so).  Returns 0, or -1.
 */
int recorder_contexts(void (*fn)(void *ctx, int created));
/* CUPTI's clock (cuptiGetTimestamp), the one of its records; 0 when unknown. */
uint64_t recorder_timestamp(void);
/* CUPTI's version (cuptiGetVersion), 0 when unknown. */
int recorder_cupti_version(void);

#ifdef KPROF_HAVE_CUPTI
#include <cupti.h>
/*
 * Convert one CUPTI record into @t (a kp_rec, or an External-id mapping).  Kinds kprof does not
 * write are ignored (returns 0); -1 on out-of-memory.  Pure apart from name lookups, so tests
 * can feed synthetic CUpti_ActivityKernel10 and friends.
 */
int recorder_convert(struct kp_ctrace *t, const CUpti_Activity *rec);
#endif

#endif /* KPROF_RECORDER_H */
