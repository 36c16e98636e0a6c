/*
 * pipeline.h — one trace from its file to its report: trace_load -> link_trace -> analyze_run,
 * with the device chosen one way (devdb_choose(), in analyze_run).  kprof analyze, augment,
 * diff (each side) and the per-rank view (ranks.c, link_only) all read a trace through it.
 * It never prints: the load error is in out->diag, the warnings in out->trace.warn and
 * out->report.warn, the --device note in out->note; the command prints them.
 */
#ifndef KPROF_PIPELINE_H
#define KPROF_PIPELINE_H

#include <stdint.h>

#include "kprof/analyze.h"
#include "kprof/devdb.h"
#include "kprof/diag.h"
#include "kprof/memory.h"
#include "kprof/trace.h"

struct kp_pipeline_in {
	const char *path;         /* the trace; "-" is standard input */
	struct kp_load_opts load; /* trace_load()'s options */
	const struct kp_devdb *db; /* the device table, borrowed; NULL: no peaks */
	const char *device;        /* --device NAME instead of the trace's; NULL */
	double sm_clock_mhz;       /* --sm-clock MHZ; 0 not given */
	/* analyze_run()'s options; its db, device and sm_clock_mhz are the three above, its
	   events out->events when @events */
	struct kp_analyze_opts analyze;
	int drop_prefix;  /* --drop-unlaunched-prefix (link_drop_unlaunched_prefix()) */
	int shapes;       /* also out->shapes, the report grouped by op and shape (the roofline's
			     points) when analyze.group is another */
	int modules;      /* also out->modules, the report grouped by module path with no --depth
			     (the icicle's boxes), when the trace has nn.Module frames */
	int drop_records; /* after the analysis, the trace's records freed (trace_drop_records()) */
	int events;       /* each GPU event's cost into out->events (kprof augment) */
	int link_only;    /* load and link, no analysis (out->report unset) */
	int memory;       /* also out->memory, the [memory] events' analysis (memory.c) */
};

struct kp_pipeline_out {
	struct kp_trace trace;   /* loaded and linked; on a load error, its warnings so far */
	struct kp_report report; /* when analysed */
	struct kp_report shapes; /* in->shapes and another grouping: by op and shape */
	struct kp_report modules; /* in->modules and a trace with module frames: grouped by
				     module path, all depths, every row (no --top) */
	struct kp_event_cost *events; /* in->events: trace.ngpu entries (analyze.h) */
	struct kp_memrep memory;      /* in->memory */
	int loaded, analysed, has_shapes, has_modules, has_memory;
	int module_frames; /* in->modules: the trace has nn.Module frames */
	struct kp_diag diag; /* the load error */
	char note[1024];     /* --device NAME that could mean several entries: which one was
				picked (devdb_pick_note()); "" */
	int64_t load_ns, link_ns, analyze_ns; /* the stages' times (stages_now()) */
};

/* Prototypes */
/* @in's trace into @out; 0, or -1 with out->diag (out->trace holds the warnings). */
int pipeline_run(const struct kp_pipeline_in *in, struct kp_pipeline_out *out);
/* The report grouped by op and shape: out->shapes, or out->report when grouped so. */
const struct kp_report *pipeline_shapes(const struct kp_pipeline_out *out);
/* The report grouped by module path, all depths: out->modules; NULL when the trace has no
 * nn.Module frames (or in->modules was not set). */
const struct kp_report *pipeline_modules(const struct kp_pipeline_out *out);
/* Everything of @out (after pipeline_run(), whatever it returned). */
void pipeline_free(struct kp_pipeline_out *out);

#endif /* KPROF_PIPELINE_H */
