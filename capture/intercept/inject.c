/*
 * inject.c — kprof-inject.so, the CUDA injection library of `kprof capture -- <cmd>`: CUPTI on
 * in InitializeInjection, the records to $KPROF_INJECT_DIR/<pid>.kprec at exit (§3).
 */
#include "record/recorder.h"

/* Built only into kprof-inject.so; kprof-capture.so and libkprof.a compile it empty. */
#if defined(KPROF_HAVE_CUPTI) && defined(KPROF_INJECT)

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "intercept/hcall.h"
#include "record/ctrace.h"
#include "record/metrics.h"
#include "record/recfile.h"

static struct kp_ctrace g_trace;

/* kprof-shim.so's library calls and NVTX ranges join the records */
static void take_hcall(const struct kp_hcall *c, void *arg)
{
	ctrace_add_hcall(arg, c);
}
static pid_t g_pid;
static char g_dir[4096];

/*
 * The metrics run of --metrics ($KPROF_METRICS=only): no activity tracing (CUPTI 13.0
 * segfaults in its activity flush once the range profiler has replayed kernels in the
 * process), the kernel launches and memsets in launch order, and the range profiler (auto
 * range, kernel replay) on the first CUDA context from its creation to its destruction or the
 * process's exit; its ranges are one window (kmetrics.h), joined to the timed run's kernels by
 * the parent (kmetrics_join_runs).
 */
enum { MET_OFF, MET_WANTED, MET_ON, MET_DONE };
static int g_met;
static void *g_met_ctx;

static void metrics_finish(void)
{
	char why[512], label[64];
	if (g_met != MET_ON)
		return;
	g_met = MET_DONE;
	snprintf(label, sizeof(label), "process %d", (int)g_pid);
	if (metrics_end(&g_trace, 0, UINT64_MAX, label, why, sizeof(why)) < 0)
		fprintf(stderr, "kprof: error: --metrics: process %d: %s\n", (int)g_pid, why);
	metrics_close();
}

static void on_context(void *ctx, int created)
{
	char why[512];
	if (!created) {
		if (ctx == g_met_ctx)
			metrics_finish();
		return;
	}
	if (g_met == MET_ON) {
		fprintf(stderr,
			"kprof: warning: --metrics: process %d: a second CUDA context; only "
			"the first is profiled, so this process's kernels get no counters\n",
			(int)g_pid);
		return;
	}
	if (g_met != MET_WANTED)
		return;
	g_met = MET_DONE;
	if (metrics_open_ctx(ctx, why, sizeof(why)) < 0 || metrics_begin(why, sizeof(why)) < 0) {
		fprintf(stderr, "kprof: error: --metrics: process %d: %s\n", (int)g_pid, why);
		metrics_close();
		return;
	}
	g_met = MET_ON;
	g_met_ctx = ctx;
	fprintf(stderr, "kprof: --metrics: process %d: %d counters, %d replay passes per kernel\n",
		(int)g_pid, metrics_count(), metrics_passes());
}

/*
 * atexit: forced flush, cuptiFinalize (the CUPTI 13.0 exit segfault, §3.5), then the file
 * under a temporary name, renamed when whole.  No CUDA calls: cudart may be torn down already.
 */
static void write_records(void)
{
	char path[4200], tmp[4300];
	if (getpid() != g_pid)
		return; /* a fork of the traced process: the CUPTI state is its parent's */
	g_trace.cupti_version = recorder_cupti_version();
	/* no more pushes: any CUPTI call after cuptiFinalize() would attach CUPTI again */
	kp_shim_attach_fn attach = (kp_shim_attach_fn)dlsym(RTLD_DEFAULT, "kprof_shim_attach");
	if (attach)
		attach(NULL, NULL, NULL);
	metrics_finish(); /* before cuptiFinalize */
	recorder_stop();
	kp_shim_drain_fn drain = (kp_shim_drain_fn)dlsym(RTLD_DEFAULT, "kprof_shim_drain");
	if (drain)
		drain(take_hcall, &g_trace);
	ctrace_resolve_gnodes(&g_trace);
	snprintf(path, sizeof(path), "%s/%d.kprec", g_dir, (int)g_pid);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "wb");
	int bad = !f || recfile_write(&g_trace, (uint32_t)g_pid, f) < 0;
	int e = errno;
	if (f && fclose(f) != 0 && !bad)
		bad = 1, e = errno;
	if (bad || rename(tmp, path) < 0) {
		fprintf(stderr, "kprof: error: cannot write '%s': %s\n", tmp,
			strerror(bad ? e : errno));
		unlink(tmp);
	}
}

/* Called by the CUDA driver inside the first cuInit; must stay visible to dlsym. */
__attribute__((visibility("default"))) int InitializeInjection(void);

int InitializeInjection(void)
{
	static int done;
	char why[512];
	if (done)
		return 1;
	done = 1;
	const char *dir = getenv("KPROF_INJECT_DIR");
	if (!dir || !*dir) {
		fprintf(stderr,
			"kprof: warning: kprof-inject.so loaded without KPROF_INJECT_DIR; "
			"process %d not traced\n",
			(int)getpid());
		return 1;
	}
	snprintf(g_dir, sizeof(g_dir), "%s", dir);
	g_pid = getpid();
	ctrace_init(&g_trace);
	const char *met = getenv("KPROF_METRICS");
	if (met && !strcmp(met, "only")) {
		g_met = MET_WANTED;
		if (recorder_start_launches(&g_trace, why, sizeof(why)) < 0 ||
		    recorder_contexts(on_context) < 0) {
			fprintf(stderr, "kprof: error: --metrics: process %d: no counters: %s\n",
				(int)g_pid, why);
			return 1;
		}
		atexit(write_records);
		return 1;
	}
	const char *api = getenv("KPROF_TRACE_API");
	static const char *const api_names[] = { "launch", "all", "none" };
	for (int i = 0; api && i < 3; i++)
		if (!strcmp(api, api_names[i]))
			recorder_set_api(i);
	/* --memory (capture/cmdrun.c sets on or off) */
	const char *mem = getenv("KPROF_MEMORY");
	if (mem && !strcmp(mem, "on"))
		recorder_set_memory(1);
	else if (mem && *mem && strcmp(mem, "off"))
		fprintf(stderr,
			"kprof: warning: process %d: KPROF_MEMORY='%s' is neither on nor off; "
			"no memory records\n",
			(int)g_pid, mem);
	if (recorder_start(&g_trace, why, sizeof(why)) < 0) {
		fprintf(stderr, "kprof: error: process %d not traced: %s\n", (int)g_pid, why);
		return 1;
	}
	atexit(write_records);
	/* kprof-shim.so (LD_PRELOAD) times its calls on CUPTI's clock */
	kp_shim_attach_fn attach = (kp_shim_attach_fn)dlsym(RTLD_DEFAULT, "kprof_shim_attach");
	if (attach)
		attach(recorder_push, recorder_pop, recorder_timestamp);
	/* and says which call or NVTX range each CUDA graph node is created in */
	kp_shim_context_fn ctx = (kp_shim_context_fn)dlsym(RTLD_DEFAULT, "kprof_shim_context");
	if (ctx && recorder_graph_nodes(ctx) < 0)
		fprintf(stderr,
			"kprof: warning: process %d: CUPTI graph-node callbacks refused; "
			"kernels replayed from CUDA graphs stay without ops\n",
			(int)g_pid);
	return 1;
}

#endif
