/*
 * pipeline.c — one trace from its file to its report (include/kprof/pipeline.h).
 */
#include "kprof/pipeline.h"

#include <stdlib.h>
#include <string.h>

#include "kprof/link.h"
#include "kprof/stages.h"

int pipeline_run(const struct kp_pipeline_in *in, struct kp_pipeline_out *out)
{
	memset(out, 0, sizeof(*out));
	int64_t t0 = stages_now();
	if (trace_load(&out->trace, in->path, &in->load, &out->diag) < 0)
		return -1;
	out->loaded = 1;
	int64_t t1 = stages_now();
	out->load_ns = t1 - t0;
	link_trace(&out->trace);
	out->link_ns = stages_now() - t1;
	if (in->drop_prefix)
		link_drop_unlaunched_prefix(&out->trace);
	if (in->device && in->db && !in->link_only)
		devdb_pick_note(in->db, in->device, 0, out->note, sizeof(out->note));
	if (in->link_only)
		return 0;
	struct kp_analyze_opts ao = in->analyze;
	ao.db = in->db;
	ao.device = in->device;
	ao.sm_clock_mhz = in->sm_clock_mhz;
	if (in->events)
		ao.events = out->events = xcalloc(out->trace.ngpu + 1, sizeof(*out->events));
	int64_t t2 = stages_now();
	analyze_run(&out->trace, &ao, &out->report);
	out->analysed = 1;
	if (in->shapes && ao.group != GROUP_OP_SHAPE) {
		struct kp_analyze_opts so = ao;
		so.group = GROUP_OP_SHAPE;
		so.events = NULL;
		analyze_run(&out->trace, &so, &out->shapes);
		out->has_shapes = 1;
	}
	for (size_t i = 0; in->modules && i < out->trace.npy && !out->module_frames; i++)
		out->module_frames = out->trace.py[i].kind == PYF_MODULE;
	if (out->module_frames) {
		struct kp_analyze_opts mo = ao;
		mo.group = GROUP_MODULE;
		mo.depth = 0;
		mo.folded = 0;
		mo.events = NULL;
		mo.step_series = 0;
		analyze_run(&out->trace, &mo, &out->modules);
		out->has_modules = 1;
	}
	if (in->memory) {
		memory_run(&out->trace, &out->memory);
		out->has_memory = 1;
	}
	out->analyze_ns = stages_now() - t2;
	if (in->drop_records)
		trace_drop_records(&out->trace); /* the rows hold what the caller needs */
	return 0;
}

const struct kp_report *pipeline_shapes(const struct kp_pipeline_out *out)
{
	return out->has_shapes ? &out->shapes : &out->report;
}

const struct kp_report *pipeline_modules(const struct kp_pipeline_out *out)
{
	return out->has_modules ? &out->modules : NULL;
}

void pipeline_free(struct kp_pipeline_out *out)
{
	if (out->has_modules)
		analyze_free(&out->modules);
	if (out->has_shapes)
		analyze_free(&out->shapes);
	if (out->analysed)
		analyze_free(&out->report);
	if (out->has_memory)
		memory_free(&out->memory);
	trace_free(&out->trace);
	free(out->events);
	memset(out, 0, sizeof(*out));
}
