/*
 * recorder.c — CUPTI Activity API: buffers, kinds, external correlation, record conversion
 * (doc/cupti-capture.md §2).
 */
#include "record/recorder.h"

#include <string.h>

#include "record/ctrace.h"

static int g_memory; /* recorder_set_memory() */

void recorder_set_memory(int on)
{
	g_memory = on;
}

/*
 * --memory: the calls that allocate and free device memory, whose thread and time place the
 * MEMORY2 records with their correlation ids (capture/record/cmem.h).  cuMemCreate/cuMemRelease:
 * expandable segments (doc/memory.md §6.2).
 */
static int memory_api(const char *name)
{
	static const char *const prefixes[] = { "cudaMalloc", "cudaFree",    "cuMemAlloc",
						"cuMemFree",  "cuMemCreate", "cuMemRelease" };
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

/*
 * The API calls analyze needs (doc/cupti-capture.md §2.1): launches (flow sources of kernels,
 * their launch thread and CPU time), copies, sets, graph launches, and the synchronize and
 * stream-wait calls that give idle gaps their cause.  Driver calls too: cuBLAS, cuDNN and
 * Triton launch through cuLaunchKernel(Ex).  With --memory, the allocation calls too.
 */
int recorder_api_wanted(const char *name)
{
	static const char *const prefixes[] = {
		"cudaLaunch", "cudaMemcpy", "cudaMemset", "cudaGraphLaunch", "cudaStreamWaitEvent",
		"cuLaunch",   "cuMemcpy",   "cuMemset",   "cuGraphLaunch",   "cuStreamWaitEvent"
	};
	if (!name)
		return 0;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
	if (g_memory && memory_api(name))
		return 1;
	return (!strncmp(name, "cu", 2) && strstr(name, "Synchronize") != NULL);
}

int recorder_add_call(struct kp_ctrace *t, const struct kp_apicall *c, uint32_t pid,
		      const char *name)
{
	struct kp_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = c->driver ? REC_DRIVER : REC_RUNTIME;
	r.name = ctrace_intern(t, name, ctrace_api_name_len(name));
	r.start_ns = c->start_ns;
	r.end_ns = c->end_ns;
	r.corr = c->corr;
	r.cbid = c->cbid;
	r.pid = pid;
	r.tid = c->tid;
	if (ctrace_add_rec(t, &r) < 0)
		return -1;
	return c->ext ? ctrace_add_ext(t, c->corr, c->ext) : 0;
}

#ifdef KPROF_HAVE_CUPTI

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BUF_SIZE (8u << 20) /* 8 MiB, CUPTI's sample size; CUPTI recommends 1-10 MB */

/* libstdc++ (linked for the nvcc objects) demangles kernel names as Kineto does */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static struct kp_ctrace *g_trace;
static CUpti_SubscriberHandle g_sub;
static int g_subscribed;

/* clang-format off */
/* --trace-api all: every runtime and driver call, syncs and CUPTI's overhead (§2.1) */
static const CUpti_ActivityKind kinds_all[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME,
	CUPTI_ACTIVITY_KIND_DRIVER,            CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
	CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,   CUPTI_ACTIVITY_KIND_OVERHEAD,
	CUPTI_ACTIVITY_KIND_DEVICE,            CUPTI_ACTIVITY_KIND_CONTEXT,
};
/* clang-format on */
/* launch and none: the GPU's records only; launch adds the API calls through callbacks */
static const CUpti_ActivityKind kinds_gpu[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
	CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET,
};
static int g_api = TRACE_API_LAUNCH;
static const CUpti_ActivityKind *kinds = kinds_gpu;
static size_t nkinds = sizeof(kinds_gpu) / sizeof(kinds_gpu[0]);
#define NKINDS nkinds

static const char *intern_kernel(struct kp_ctrace *t, const char *name)
{
	if (!name)
		return "";
	if (name[0] == '_' && name[1] == 'Z') {
		int status = -1;
		char *d = __cxa_demangle(name, NULL, NULL, &status);
		if (d && status == 0) {
			const char *r = ctrace_intern(t, d, strlen(d));
			free(d);
			return r;
		}
		free(d);
	}
	return ctrace_intern(t, name, strlen(name));
}

static const char *api_name(struct kp_ctrace *t, CUpti_CallbackDomain dom, uint32_t cbid)
{
	const char *name = NULL;
	if (cuptiGetCallbackName(dom, cbid, &name) != CUPTI_SUCCESS || !name) {
		char buf[48];
		snprintf(buf, sizeof(buf), "%s cbid %u",
			 dom == CUPTI_CB_DOMAIN_RUNTIME_API ? "runtime" : "driver", cbid);
		return ctrace_intern(t, buf, strlen(buf));
	}
	return ctrace_intern(t, name, ctrace_api_name_len(name));
}

/* read only Kernel10 fields: newer CUPTIs have only appended (§2.3) */
static int convert_kernel(struct kp_ctrace *t, const CUpti_Activity *rec)
{
	const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
	struct kp_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = REC_KERNEL;
	r.start_ns = k->start;
	r.end_ns = k->end;
	r.corr = k->correlationId;
	r.device = k->deviceId;
	r.context = k->contextId;
	r.stream = k->streamId;
	r.name = intern_kernel(t, k->name);
	r.grid[0] = k->gridX, r.grid[1] = k->gridY, r.grid[2] = k->gridZ;
	r.block[0] = k->blockX, r.block[1] = k->blockY, r.block[2] = k->blockZ;
	r.regs = k->registersPerThread;
	r.smem = (uint32_t)(k->staticSharedMemory + k->dynamicSharedMemory);
	r.queued = k->queued == CUPTI_TIMESTAMP_UNKNOWN ? 0 : k->queued;
	r.graph_id = k->graphId;
	r.graph_node_id = k->graphNodeId;
	return ctrace_add_rec(t, &r);
}

/* a runtime or driver API call (--trace-api all) */
static int convert_api(struct kp_ctrace *t, const CUpti_Activity *rec)
{
	const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)rec;
	int rt = rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
	struct kp_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = rt ? REC_RUNTIME : REC_DRIVER;
	r.name = api_name(t, rt ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API,
			  a->cbid);
	if (rt ? !strcmp(r.name, "cudaGetDevice") : !recorder_api_wanted(r.name))
		return 0; /* Kineto drops the first, and logs only registered driver cbids */
	r.start_ns = a->start;
	r.end_ns = a->end;
	r.corr = a->correlationId;
	r.cbid = a->cbid;
	r.pid = a->processId;
	r.tid = a->threadId;
	return ctrace_add_rec(t, &r);
}

static int convert_memcpy(struct kp_ctrace *t, const CUpti_Activity *rec)
{
	const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
	struct kp_rec r;
	char buf[96];
	memset(&r, 0, sizeof(r));
	r.kind = REC_MEMCPY;
	r.start_ns = m->start;
	r.end_ns = m->end;
	r.corr = m->correlationId;
	r.device = m->deviceId;
	r.context = m->contextId;
	r.stream = m->streamId;
	r.bytes = m->bytes;
	ctrace_memcpy_name(buf, sizeof(buf), m->copyKind, m->srcKind, m->dstKind);
	r.name = ctrace_intern(t, buf, strlen(buf));
	return ctrace_add_rec(t, &r);
}

static int convert_memset(struct kp_ctrace *t, const CUpti_Activity *rec)
{
	const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
	struct kp_rec r;
	char buf[96];
	memset(&r, 0, sizeof(r));
	r.kind = REC_MEMSET;
	r.start_ns = m->start;
	r.end_ns = m->end;
	r.corr = m->correlationId;
	r.device = m->deviceId;
	r.context = m->contextId;
	r.stream = m->streamId;
	r.bytes = m->bytes;
	ctrace_memset_name(buf, sizeof(buf), m->memoryKind);
	r.name = ctrace_intern(t, buf, strlen(buf));
	return ctrace_add_rec(t, &r);
}

static int convert_sync(struct kp_ctrace *t, const CUpti_Activity *rec)
{
	const CUpti_ActivitySynchronization2 *s = (const CUpti_ActivitySynchronization2 *)rec;
	struct kp_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = REC_SYNC;
	r.start_ns = s->start;
	r.end_ns = s->end;
	r.corr = s->correlationId;
	r.context = s->contextId;
	r.stream = s->streamId;
	r.sync_type = s->type;
	r.event_id = s->cudaEventId;
	r.name = ctrace_sync_name(s->type);
	return ctrace_add_rec(t, &r);
}

static int convert_overhead(struct kp_ctrace *t, const CUpti_Activity *rec)
{
	const CUpti_ActivityOverhead3 *o = (const CUpti_ActivityOverhead3 *)rec;
	struct kp_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = REC_OVERHEAD;
	r.start_ns = o->start;
	r.end_ns = o->end;
	r.corr = o->correlationId;
	r.name = ctrace_overhead_name(o->overheadKind);
	return ctrace_add_rec(t, &r);
}

/* --memory: a device, host or managed allocation or release (cmem.h keeps device memory) */
static int convert_memory(struct kp_ctrace *t, const CUpti_Activity *rec)
{
	const CUpti_ActivityMemory4 *m = (const CUpti_ActivityMemory4 *)rec;
	struct kp_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = REC_MEMORY;
	r.start_ns = r.end_ns = m->timestamp;
	r.corr = m->correlationId;
	r.device = m->deviceId;
	r.context = m->contextId;
	r.stream = m->streamId;
	r.pid = m->processId;
	r.addr = m->address;
	r.bytes = m->bytes;
	r.mem_op = (uint32_t)m->memoryOperationType;
	r.mem_kind = (uint32_t)m->memoryKind;
	r.name = "";
	return ctrace_add_rec(t, &r);
}

/* kprof's (and Kineto's) op ids: CUSTOM0 only */
static int convert_ext(struct kp_ctrace *t, const CUpti_Activity *rec)
{
	const CUpti_ActivityExternalCorrelation *e = (const CUpti_ActivityExternalCorrelation *)rec;
	if (e->externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
		return 0;
	return ctrace_add_ext(t, e->correlationId, e->externalId);
}

int recorder_convert(struct kp_ctrace *t, const CUpti_Activity *rec)
{
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return convert_kernel(t, rec);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return convert_api(t, rec);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return convert_memcpy(t, rec);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return convert_memset(t, rec);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return convert_sync(t, rec);
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return convert_overhead(t, rec);
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		return convert_ext(t, rec);
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return convert_memory(t, rec);
	default:
		return 0; /* DEVICE, CONTEXT: metadata comes from cudaGetDeviceProperties */
	}
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, BUF_SIZE);
	*size = *buffer ? BUF_SIZE : 0;
	*max_records = 0;
}

/* Runs on CUPTI's worker thread or in cuptiActivityFlushAll's caller: convert and free only. */
static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
				      size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;
	(void)size;
	if (g_trace && valid > 0) {
		for (;;) {
			CUptiResult rc = cuptiActivityGetNextRecord(buffer, valid, &rec);
			if (rc != CUPTI_SUCCESS)
				break; /* MAX_LIMIT_REACHED at the end, INVALID_KIND on garbage */
			recorder_convert(g_trace, rec);
		}
		size_t dropped = 0;
		if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS &&
		    dropped) {
			pthread_mutex_lock(&g_trace->lock);
			g_trace->dropped_records += dropped;
			pthread_mutex_unlock(&g_trace->lock);
		}
	}
	free(buffer);
}

/*
 * --trace-api launch: the wanted API calls through CUPTI callbacks (only their cbids are
 * enabled), one kp_apicall each in per-thread blocks; no CUPTI activity record, no lock, no
 * allocation but a new block now and then.  External ids are kept here per thread, not pushed
 * to CUPTI.  The blocks become records in recorder_stop().
 */
#define CALL_BLOCK 8192
struct call_block {
	struct call_block *next;
	_Atomic uint32_t n; /* calls published in v[] */
	struct kp_apicall v[CALL_BLOCK];
};
#define EXT_DEPTH 64
static pthread_mutex_t g_blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct call_block *g_blocks;  /* this capture's */
static struct call_block *g_retired; /* drained; freed by the next recorder_start() */
static _Atomic uint32_t g_gen = 1; /* capture number: a thread's block of an older one is retired */
static _Atomic int g_calls_on;     /* recorder_enable() */
static __thread struct call_block *t_block;
static __thread uint32_t t_gen;
static __thread uint32_t t_tid;
static __thread uint32_t t_rt_corr; /* the runtime call in progress on this thread */
static __thread uint64_t t_ext[EXT_DEPTH];
static __thread int t_next; /* depth of the External-id stack (may exceed EXT_DEPTH) */
/* the cbids enabled, for recorder_enable() */
static uint16_t g_cbids[2][1024];
static size_t g_ncbids[2];

static uint64_t cupti_now(void)
{
	uint64_t ts = 0;
	cuptiGetTimestamp(&ts);
	return ts;
}

static struct kp_apicall *new_call(void)
{
	struct call_block *b = t_block;
	uint32_t gen = atomic_load_explicit(&g_gen, memory_order_relaxed);
	if (!b || t_gen != gen || atomic_load_explicit(&b->n, memory_order_relaxed) == CALL_BLOCK) {
		b = malloc(sizeof(*b));
		if (!b)
			return NULL;
		b->n = 0;
		pthread_mutex_lock(&g_blocks_lock);
		b->next = g_blocks;
		g_blocks = b;
		pthread_mutex_unlock(&g_blocks_lock);
		t_block = b;
		t_gen = gen;
	}
	return &b->v[atomic_load_explicit(&b->n, memory_order_relaxed)];
}

/*
 * Entry: note the time.  Exit: write the call.  A driver call made by the runtime inside a
 * runtime call shares its correlation id and is not written twice.
 */
static void on_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	int drv = domain == CUPTI_CB_DOMAIN_DRIVER_API;
	if (cb->callbackSite == CUPTI_API_ENTER) {
		*cb->correlationData = cupti_now();
		if (!drv)
			t_rt_corr = cb->correlationId;
		return;
	}
	uint64_t end = cupti_now();
	if (!drv)
		t_rt_corr = 0;
	else if (t_rt_corr && t_rt_corr == cb->correlationId)
		return;
	if (!atomic_load_explicit(&g_calls_on, memory_order_relaxed))
		return;
	struct kp_apicall *c = new_call();
	if (!c)
		return;
	if (!t_tid)
		t_tid = (uint32_t)syscall(SYS_gettid);
	c->start_ns = *cb->correlationData ? *cb->correlationData : end; /* enabled mid-call */
	c->end_ns = end;
	c->ext = t_next > 0 && t_next <= EXT_DEPTH ? t_ext[t_next - 1] : 0;
	c->corr = cb->correlationId;
	c->cbid = cbid;
	c->tid = t_tid;
	c->driver = (uint32_t)drv;
	/* published whole: recorder_stop() may run on another thread */
	atomic_store_explicit(&t_block->n, t_block->n + 1, memory_order_release);
}

static const char *cbid_name(int drv, uint32_t cbid)
{
	const char *name = NULL;
	if (cuptiGetCallbackName(drv ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
				 cbid, &name) != CUPTI_SUCCESS)
		return NULL;
	return name;
}

/* Every wanted cbid of both domains known to the headers (and up to 2x beyond, for newer CUPTIs). */
static void find_cbids(void)
{
	static const uint32_t size[2] = { CUPTI_RUNTIME_TRACE_CBID_SIZE,
					  CUPTI_DRIVER_TRACE_CBID_SIZE };
	for (int d = 0; d < 2; d++) {
		g_ncbids[d] = 0;
		for (uint32_t id = 1; id < 2 * size[d] && g_ncbids[d] < 1024; id++)
			if (recorder_api_wanted(cbid_name(d, id)))
				g_cbids[d][g_ncbids[d]++] = (uint16_t)id;
	}
}

/*
 * Turn the wanted cbids' callbacks on or off.  (Their CUPTI activity records instead, through
 * cuptiActivityEnableRuntimeApi/DriverApi, cost more: bench/RESULTS.md.)
 */
static int api_enable(int on)
{
	for (int d = 0; d < 2; d++)
		for (size_t i = 0; i < g_ncbids[d]; i++)
			if (cuptiEnableCallback((uint32_t)on, g_sub,
						d ? CUPTI_CB_DOMAIN_DRIVER_API
						  : CUPTI_CB_DOMAIN_RUNTIME_API,
						g_cbids[d][i]) != CUPTI_SUCCESS)
				return -1;
	atomic_store(&g_calls_on, on);
	return 0;
}

/* recorder_stop(): every thread's calls become records (names looked up once per cbid). */
static void drain_calls(void)
{
	uint32_t pid = (uint32_t)getpid();
	pthread_mutex_lock(&g_blocks_lock);
	atomic_fetch_add(&g_gen, 1);
	for (struct call_block *b = g_blocks, *next; b; b = next) {
		next = b->next;
		b->next = g_retired;
		g_retired = b;
		uint32_t n = atomic_load_explicit(&b->n, memory_order_acquire);
		for (uint32_t i = 0; i < n && g_trace; i++) {
			const struct kp_apicall *c = &b->v[i];
			const char *name = cbid_name((int)c->driver, c->cbid);
			char buf[48];
			if (!name) {
				snprintf(buf, sizeof(buf), "%s cbid %u",
					 c->driver ? "driver" : "runtime", c->cbid);
				name = buf;
			}
			recorder_add_call(g_trace, c, pid, name);
		}
	}
	g_blocks = NULL;
	pthread_mutex_unlock(&g_blocks_lock);
}

static uint64_t (*g_context)(void);              /* recorder_graph_nodes(): the op a thread is in */
static void (*g_on_ctx)(void *ctx, int created); /* recorder_contexts() */
static int g_launches;     /* recorder_start_launches(): no activity kinds, launches only */
static uint64_t g_ordinal; /* their launch ordinals */

/* --metrics run: a kernel launch or memset call becomes a REC_KERNEL / REC_MEMSET in order */
static void on_driver(const CUpti_CallbackData *cb)
{
	const char *fn = cb->functionName;
	if (cb->callbackSite != CUPTI_API_ENTER || !fn)
		return;
	struct kp_rec r;
	memset(&r, 0, sizeof(r));
	if (!strncmp(fn, "cuLaunch", 8) && strncmp(fn, "cuLaunchHostFunc", 16) && cb->symbolName) {
		r.kind = REC_KERNEL;
		r.name = intern_kernel(g_trace, cb->symbolName);
	} else if (!strncmp(fn, "cuMemset", 8)) {
		r.kind = REC_MEMSET;
		r.name = ctrace_intern(g_trace, fn, strlen(fn));
	} else {
		return;
	}
	r.start_ns = r.end_ns = __atomic_add_fetch(&g_ordinal, 1, __ATOMIC_RELAXED);
	r.corr = cb->correlationId;
	ctrace_add_rec(g_trace, &r);
}

/*
 * Graph-node callbacks (doc/capture-any.md §3): a node created inside an op (stream capture runs
 * the library call, which creates the nodes) maps to that op's External id; a clone made by
 * cudaGraphInstantiate maps to its original.  The data is valid only during the callback.
 */
static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *cbdata)
{
	(void)userdata;
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API && g_launches && g_trace && cbdata) {
		on_driver(cbdata);
		return;
	}
	if ((domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) &&
	    cbdata) {
		on_api(domain, cbid, cbdata);
		return;
	}
	if (domain != CUPTI_CB_DOMAIN_RESOURCE || !g_trace || !cbdata)
		return;
	const CUpti_ResourceData *rd = cbdata;
	if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED ||
	    cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
		if (g_on_ctx)
			g_on_ctx(rd->context, cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
		return;
	}
	if (!g_context)
		return;
	const CUpti_GraphData *gd = rd->resourceDescriptor;
	uint64_t id = 0, orig = 0;
	if (!gd || !gd->node || cuptiGetGraphNodeId(gd->node, &id) != CUPTI_SUCCESS || !id)
		return;
	if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) {
		uint64_t ext = g_context();
		if (ext)
			ctrace_add_gnode(g_trace, id, ext, 0);
	} else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED && gd->originalNode &&
		   cuptiGetGraphNodeId(gd->originalNode, &orig) == CUPTI_SUCCESS && orig) {
		ctrace_add_gnode(g_trace, id, 0, orig);
	}
}

int recorder_graph_nodes(uint64_t (*context)(void))
{
	if (!g_subscribed || !context)
		return -1;
	g_context = context;
	if (cuptiEnableCallback(1, g_sub, CUPTI_CB_DOMAIN_RESOURCE,
				CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) != CUPTI_SUCCESS ||
	    cuptiEnableCallback(1, g_sub, CUPTI_CB_DOMAIN_RESOURCE,
				CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) != CUPTI_SUCCESS)
		return -1;
	return 0;
}

int recorder_contexts(void (*fn)(void *ctx, int created))
{
	if (!g_subscribed || !fn)
		return -1;
	g_on_ctx = fn;
	if (cuptiEnableCallback(1, g_sub, CUPTI_CB_DOMAIN_RESOURCE,
				CUPTI_CBID_RESOURCE_CONTEXT_CREATED) != CUPTI_SUCCESS ||
	    cuptiEnableCallback(1, g_sub, CUPTI_CB_DOMAIN_RESOURCE,
				CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) != CUPTI_SUCCESS)
		return -1;
	return 0;
}

static const char *cupti_err(CUptiResult rc)
{
	const char *s = NULL;
	if (cuptiGetResultString(rc, &s) != CUPTI_SUCCESS || !s)
		return "unknown CUPTI error";
	return s;
}

int recorder_start_launches(struct kp_ctrace *t, char *why, size_t whylen)
{
	CUpti_SubscriberParams p;
	memset(&p, 0, sizeof(p));
	p.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
	p.subscriberName = "kprof";
	CUptiResult rc = cuptiSubscribe_v2(&g_sub, on_callback, NULL, &p);
	if (rc != CUPTI_SUCCESS) {
		snprintf(why, whylen, "cannot subscribe to CUPTI: %s", cupti_err(rc));
		return -1;
	}
	g_subscribed = 1;
	g_trace = t;
	g_launches = 1;
	rc = cuptiEnableDomain(1, g_sub, CUPTI_CB_DOMAIN_DRIVER_API);
	if (rc != CUPTI_SUCCESS) {
		snprintf(why, whylen, "cannot enable CUPTI driver callbacks: %s", cupti_err(rc));
		return -1;
	}
	return 0;
}

void recorder_set_api(int mode)
{
	g_api = mode;
}

int recorder_start(struct kp_ctrace *t, char *why, size_t whylen)
{
	CUptiResult rc;
	char old[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = "";
	CUpti_SubscriberParams p;
	memset(&p, 0, sizeof(p));
	p.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
	p.subscriberName = "kprof";
	p.oldSubscriberName = old;
	p.oldSubscriberSize = sizeof(old) - 1;
	rc = cuptiSubscribe_v2(&g_sub, on_callback, NULL, &p);
	if (rc != CUPTI_SUCCESS) {
		if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
			snprintf(why, whylen, "CUPTI is already in use by '%s'",
				 old[0] ? old : "another tool");
		else
			snprintf(why, whylen, "cannot subscribe to CUPTI: %s", cupti_err(rc));
		return -1;
	}
	g_subscribed = 1;
	g_trace = t;
	pthread_mutex_lock(&g_blocks_lock);
	while (g_retired) {
		struct call_block *b = g_retired;
		g_retired = b->next;
		free(b);
	}
	pthread_mutex_unlock(&g_blocks_lock);
	switch (g_api) {
	case TRACE_API_ALL:
		kinds = kinds_all, nkinds = sizeof(kinds_all) / sizeof(kinds_all[0]);
		break;
	default:
		kinds = kinds_gpu, nkinds = sizeof(kinds_gpu) / sizeof(kinds_gpu[0]);
		break;
	}
	cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	rc = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (rc != CUPTI_SUCCESS) {
		snprintf(why, whylen, "cannot register CUPTI buffers: %s", cupti_err(rc));
		return -1;
	}
	for (size_t i = 0; i < NKINDS; i++) {
		rc = cuptiActivityEnable(kinds[i]);
		if (rc != CUPTI_SUCCESS) {
			snprintf(why, whylen, "cannot enable CUPTI activity kind %d: %s",
				 (int)kinds[i], cupti_err(rc));
			return -1;
		}
	}
	if (g_memory && (rc = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2)) != CUPTI_SUCCESS) {
		snprintf(why, whylen, "--memory: cannot enable CUPTI memory records: %s",
			 cupti_err(rc));
		return -1;
	}
	if (g_api == TRACE_API_LAUNCH) {
		find_cbids();
		if (api_enable(1) < 0) {
			snprintf(why, whylen, "CUPTI refused the launch callbacks");
			return -1;
		}
	}
	if (g_api == TRACE_API_ALL)
		cuptiActivityEnableCudaEventDeviceTimestamps(1);
	cuptiActivityFlushPeriod(1000); /* deliver full buffers during long runs */
	return 0;
}

int recorder_enable(int on)
{
	for (size_t i = 0; i < NKINDS; i++) {
		CUptiResult rc = on ? cuptiActivityEnable(kinds[i])
				    : cuptiActivityDisable(kinds[i]);
		if (rc != CUPTI_SUCCESS)
			return -1;
	}
	if (g_api == TRACE_API_LAUNCH && api_enable(on) < 0)
		return -1;
	return 0;
}

void recorder_push(uint64_t ext)
{
	if (g_api == TRACE_API_LAUNCH) {
		if (t_next < EXT_DEPTH)
			t_ext[t_next] = ext;
		t_next++;
		return;
	}
	cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, ext);
}

void recorder_pop(void)
{
	if (g_api == TRACE_API_LAUNCH) {
		if (t_next > 0)
			t_next--;
		return;
	}
	uint64_t last;
	cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

void recorder_stop(void)
{
	if (!g_subscribed)
		return;
	if (g_launches) {
		cuptiEnableDomain(0, g_sub, CUPTI_CB_DOMAIN_DRIVER_API);
	} else {
		if (g_api == TRACE_API_LAUNCH)
			api_enable(0);
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		size_t dropped = 0;
		if (g_trace &&
		    cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS)
			g_trace->dropped_records += dropped;
		for (size_t i = 0; i < NKINDS; i++)
			cuptiActivityDisable(kinds[i]);
		if (g_memory)
			cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMORY2);
		drain_calls();
	}
	g_context = NULL;
	cuptiUnsubscribe(g_sub);
	/* CUPTI 13.0-13.1 segfault at exit without it (§3.5); never dlclose libcupti */
	cuptiFinalize();
	g_subscribed = 0;
	g_trace = NULL;
}

uint64_t recorder_timestamp(void)
{
	uint64_t ts = 0;
	return cuptiGetTimestamp(&ts) == CUPTI_SUCCESS ? ts : 0;
}

int recorder_cupti_version(void)
{
	uint32_t v = 0;
	return cuptiGetVersion(&v) == CUPTI_SUCCESS ? (int)v : 0;
}

#else /* !KPROF_HAVE_CUPTI */

#include <stdio.h>

int recorder_start(struct kp_ctrace *t, char *why, size_t whylen)
{
	(void)t;
	if (whylen)
		why[0] = '\0';
	return -1;
}
void recorder_set_api(int mode)
{
	(void)mode;
}
int recorder_enable(int on)
{
	(void)on;
	return -1;
}
void recorder_push(uint64_t ext)
{
	(void)ext;
}
void recorder_pop(void)
{
}
void recorder_stop(void)
{
}
uint64_t recorder_timestamp(void)
{
	return 0;
}
int recorder_start_launches(struct kp_ctrace *t, char *why, size_t whylen)
{
	(void)t;
	snprintf(why, whylen, "built without CUPTI support");
	return -1;
}
int recorder_contexts(void (*fn)(void *ctx, int created))
{
	(void)fn;
	return -1;
}
int recorder_graph_nodes(uint64_t (*context)(void))
{
	(void)context;
	return -1;
}
int recorder_cupti_version(void)
{
	return 0;
}

#endif
