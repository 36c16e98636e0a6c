/*
 * breakdown-doc.c — the breakdown and launch statistics in the document.
 */
#include "kprof/breakdown-doc.h"

#include <inttypes.h>
#include <stdio.h>

#include "kprof/analyze.h"
#include "kprof/kernrole.h"
#include "kprof/units.h"

static double pct(int64_t x, int64_t of)
{
	return of > 0 ? 100.0 * (double)x / (double)of : 0;
}

void breakdown_doc_json(struct kp_doc *doc, const char *jkey, const struct kp_bd *x)
{
	doc_object(doc, jkey);
	doc_fact_time(doc, NULL, "gpu_span_ns", x->span_ns);
	doc_fact_time(doc, NULL, "compute_ns", x->class_ns[BD_COMPUTE]);
	doc_fact_time(doc, NULL, "comm_ns", x->class_ns[BD_COMM]);
	doc_fact_time(doc, NULL, "memcpy_ns", x->class_ns[BD_MEMCPY]);
	doc_fact_time(doc, NULL, "other_ns", x->class_ns[BD_OTHER]);
	doc_fact_time(doc, NULL, "idle_ns", x->idle_ns);
	doc_fact_time(doc, NULL, "comm_total_ns", x->comm_total_ns);
	doc_fact_time(doc, NULL, "comm_overlapped_ns", x->comm_overlapped_ns);
	doc_object(doc, "idle_by_cause");
	doc_fact_time(doc, NULL, "host_ns", x->idle_cause_ns[IDLE_HOST]);
	doc_fact_time(doc, NULL, "sync_ns", x->idle_cause_ns[IDLE_SYNC]);
	doc_fact_time(doc, NULL, "launch_ns", x->idle_cause_ns[IDLE_LAUNCH]);
	doc_fact_time(doc, NULL, "other_ns", x->idle_cause_ns[IDLE_OTHER]);
	doc_end(doc);
	doc_end(doc);
}

/* Per-step and per-stream rows. */
/* clang-format off */
enum bd_col {
	BC_SPAN, BC_COMPUTE, BC_COMM, BC_MEMCPY, BC_OTHER, BC_IDLE, BC_IDLE_PCT, BC_OVERLAP,
	BC_HOST, BC_SYNC, BC_LAUNCH, BC_IDLE_OTHER, BC_STEP, BC_DEVICE, BC_STREAM, BC_PARTIAL,
	BC_NAME, BC_N
};
/* clang-format on */

static const struct kp_col bd_cols[BC_N] = {
	[BC_SPAN] = { "GPU span", "gpu_span_ns", COL_BOTH, 0 },
	[BC_COMPUTE] = { "Compute", "compute_ns", COL_BOTH, 0 },
	[BC_COMM] = { "Comm", "comm_ns", COL_BOTH, 0 },
	[BC_MEMCPY] = { "Memcpy", "memcpy_ns", COL_BOTH, 0 },
	[BC_OTHER] = { "Other", "other_ns", COL_BOTH, 0 },
	[BC_IDLE] = { "Idle", "idle_ns", COL_BOTH, 0 },
	[BC_IDLE_PCT] = { "Idle%", "idle_pct", COL_BOTH, 0 },
	[BC_OVERLAP] = { "Comm||Comp", "comm_overlapped_ns", COL_BOTH, 0 },
	[BC_HOST] = { "Host", "idle_host_ns", COL_BOTH, 0 },
	[BC_SYNC] = { "Sync", "idle_sync_ns", COL_BOTH, 0 },
	[BC_LAUNCH] = { "Launch", "idle_launch_ns", COL_BOTH, 0 },
	[BC_IDLE_OTHER] = { "IdleOther", "idle_other_ns", COL_BOTH, 0 },
	[BC_STEP] = { "Step", "step", COL_MACHINE, 0 },
	[BC_DEVICE] = { "Device", "device", COL_MACHINE, 0 },
	[BC_STREAM] = { "Stream", "stream", COL_MACHINE, 0 },
	[BC_PARTIAL] = { "Partial", "partial", COL_MACHINE, 0 },
	[BC_NAME] = { "Window", "window", COL_BOTH, 1 },
};

static void time_cell(struct kp_table *tb, struct kp_cell *c, int64_t ns)
{
	char b[32];
	doc_cell_int(tb, c, ns, units_time(b, sizeof(b), ns));
}

/* One row of the breakdown table; returns its cells. */
static struct kp_cell *bd_row(struct kp_doc *doc, struct kp_table *tb, const struct kp_bd *x,
			      int causes, const char *name)
{
	char b[32];
	struct kp_cell *c = doc_row(tb);
	time_cell(tb, &c[BC_SPAN], x->span_ns);
	for (int k = 0; k < BD_NCLASS; k++)
		time_cell(tb, &c[BC_COMPUTE + k], x->class_ns[k]);
	time_cell(tb, &c[BC_IDLE], x->idle_ns);
	double p = pct(x->idle_ns, x->span_ns);
	doc_cell_num(tb, &c[BC_IDLE_PCT], p, units_fixed(b, sizeof(b), p, 1, 1));
	time_cell(tb, &c[BC_OVERLAP], x->comm_overlapped_ns);
	for (int k = 0; k < IDLE_NCAUSE; k++) {
		if (causes)
			time_cell(tb, &c[BC_HOST + k], x->idle_cause_ns[k]);
		else
			doc_cell_num(tb, &c[BC_HOST + k], -1, "-");
	}
	doc_cell_str(tb, &c[BC_NAME], arena_strdup(&doc->arena, name), NULL);
	return c;
}

/* "split": the GPU span, each class's time and share of it, and idle. */
static void split_fact(struct kp_doc *doc, const struct kp_bd *x)
{
	char t0[32], t1[32], t2[32], t3[32], t4[32], t5[32];
	doc_fact_textf(
		doc, "split", NULL,
		"GPU span %s: compute %s %.1f%%, comm %s %.1f%%, memcpy %s %.1f%%, other %s %.1f%%, idle %s %.1f%%",
		units_time(t0, sizeof(t0), x->span_ns),
		units_time(t1, sizeof(t1), x->class_ns[BD_COMPUTE]),
		pct(x->class_ns[BD_COMPUTE], x->span_ns),
		units_time(t2, sizeof(t2), x->class_ns[BD_COMM]),
		pct(x->class_ns[BD_COMM], x->span_ns),
		units_time(t3, sizeof(t3), x->class_ns[BD_MEMCPY]),
		pct(x->class_ns[BD_MEMCPY], x->span_ns),
		units_time(t4, sizeof(t4), x->class_ns[BD_OTHER]),
		pct(x->class_ns[BD_OTHER], x->span_ns), units_time(t5, sizeof(t5), x->idle_ns),
		pct(x->idle_ns, x->span_ns));
}

/* "comm": communication time and the share of it overlapped with compute. */
static void comm_fact(struct kp_doc *doc, const struct kp_bd *x)
{
	char t0[32], t1[32];
	if (x->comm_total_ns > 0)
		doc_fact_textf(doc, "comm", NULL,
				  "%s in communication kernels, %s (%.1f%%) overlapped with compute",
				  units_time(t0, sizeof(t0), x->comm_total_ns),
				  units_time(t1, sizeof(t1), x->comm_overlapped_ns),
				  pct(x->comm_overlapped_ns, x->comm_total_ns));
	else
		doc_fact_text(doc, "comm", NULL, "no communication kernels");
}

/* "idle": each cause's time and gaps, with the launch gap bound. */
static void idle_fact(struct kp_doc *doc, const struct kp_breakdown *b)
{
	const struct kp_bd *x = &b->all;
	char t0[32], t1[32], t2[32], t3[32], t4[32];
	doc_fact_textf(doc, "idle", NULL,
			  "host %s (%" PRId64 " gaps), sync %s (%" PRId64 "), launch %s (%" PRId64
			  ", gaps < %s), other %s (%" PRId64 ")",
			  units_time(t0, sizeof(t0), x->idle_cause_ns[IDLE_HOST]),
			  x->idle_gaps[IDLE_HOST],
			  units_time(t1, sizeof(t1), x->idle_cause_ns[IDLE_SYNC]),
			  x->idle_gaps[IDLE_SYNC],
			  units_time(t2, sizeof(t2), x->idle_cause_ns[IDLE_LAUNCH]),
			  x->idle_gaps[IDLE_LAUNCH], units_time(t4, sizeof(t4), b->launch_gap_ns),
			  units_time(t3, sizeof(t3), x->idle_cause_ns[IDLE_OTHER]),
			  x->idle_gaps[IDLE_OTHER]);
}

/* One row per ProfilerStep window (none when the trace has no steps: one window, -1). */
static void step_rows(struct kp_doc *doc, struct kp_table *tb, const struct kp_breakdown *b)
{
	char name[96];
	if (b->nsteps == 1 && b->steps[0].num < 0)
		return;
	for (size_t i = 0; i < b->nsteps; i++) {
		const struct kp_bd_step *s = &b->steps[i];
		snprintf(name, sizeof(name), "step %" PRId64 "%s", s->num,
			 s->partial ? " (partial)" : "");
		struct kp_cell *c = bd_row(doc, tb, &s->b, 1, name);
		doc_cell_int(tb, &c[BC_STEP], s->num, NULL);
		doc_cell_int(tb, &c[BC_PARTIAL], s->partial, NULL);
	}
}

/* One row per stream, named with its device when there are several. */
static void stream_rows(struct kp_doc *doc, struct kp_table *tb, const struct kp_breakdown *b)
{
	char name[96];
	for (size_t i = 0; i < b->nstreams; i++) {
		const struct kp_bd_stream *s = &b->streams[i];
		if (b->ndevices > 1)
			snprintf(name, sizeof(name), "device %d stream %" PRId64, (int)s->device,
				 s->stream);
		else
			snprintf(name, sizeof(name), "stream %" PRId64, s->stream);
		struct kp_cell *c = bd_row(doc, tb, &s->b, 0, name);
		doc_cell_int(tb, &c[BC_DEVICE], s->device, NULL);
		doc_cell_int(tb, &c[BC_STREAM], s->stream, NULL);
	}
}

/*
 * "window": where the GPU span starts when GPU events without a launch call come before the
 * first one with a launch call (link.c); said only then, in json always.
 */
static void window_fact(struct kp_doc *doc, const struct kp_breakdown *b)
{
	const struct kp_prefix *p = &b->prefix;
	char t0[32];
	if (p->n && p->dropped)
		doc_fact_textf(
			doc, "window", NULL,
			"GPU span from the first GPU event with a launch call: %" PRId64
			" earlier GPU %s without one (%s GPU time) left out (--drop-unlaunched-prefix)",
			p->n, units_plural(p->n, "event", "events"),
			units_time(t0, sizeof(t0), p->gpu_ns));
	else if (p->n)
		doc_fact_textf(
			doc, "window", NULL,
			"GPU span from the first GPU event: counts %" PRId64
			" GPU %s without a launch call before the first one with a launch call (%s GPU time); --drop-unlaunched-prefix leaves them out",
			p->n, units_plural(p->n, "event", "events"),
			units_time(t0, sizeof(t0), p->gpu_ns));
	doc_object(doc, "breakdown_window");
	doc_fact_text(doc, NULL, "start",
			 p->n && p->dropped ? "first_launched_gpu_event" : "first_gpu_event");
	doc_fact_count(doc, NULL, "unlaunched_prefix_events", p->n);
	doc_fact_bool(doc, NULL, "unlaunched_prefix_dropped", p->dropped);
	doc_end(doc);
}

void breakdown_doc(struct kp_doc *doc, const struct kp_breakdown *b)
{
	window_fact(doc, b);
	split_fact(doc, &b->all);
	comm_fact(doc, &b->all);
	idle_fact(doc, b);
	if (b->ndevices > 1)
		doc_fact_textf(doc, "note", NULL,
				  "GPU work on %d devices: the split is of their union",
				  b->ndevices);
	breakdown_doc_json(doc, "breakdown", &b->all);
	struct kp_table *tb = doc_table(doc, "breakdown_rows", bd_cols, BC_N);
	step_rows(doc, tb, b);
	stream_rows(doc, tb, b);
}

enum ln_col {
	LC_N,
	LC_CPU,
	LC_CPU_AVG,
	LC_LAT_AVG,
	LC_LAT_MAX,
	LC_GPU,
	LC_SHORT,
	LC_SHORT_T,
	LC_CHEAP,
	LC_NAME,
	LC_NCOL
};

static const struct kp_col ln_cols[LC_NCOL] = {
	[LC_N] = { "Launches", "launches", COL_BOTH, 0 },
	[LC_CPU] = { "CPU", "cpu_ns", COL_BOTH, 0 },
	[LC_CPU_AVG] = { "CPU avg", "cpu_avg_ns", COL_BOTH, 0 },
	[LC_LAT_AVG] = { "Lat avg", "launch_to_start_avg_ns", COL_BOTH, 0 },
	[LC_LAT_MAX] = { "Lat max", "launch_to_start_max_ns", COL_BOTH, 0 },
	[LC_GPU] = { "GPU", "gpu_ns", COL_BOTH, 0 },
	[LC_SHORT] = { "Short", "short_kernels", COL_BOTH, 0 }, /* kernels only */
	[LC_SHORT_T] = { "Short time", "short_ns", COL_BOTH, 0 },
	[LC_CHEAP] = { "GPU<CPU", "gpu_under_cpu", COL_BOTH, 0 },
	[LC_NAME] = { "Kernel", "name", COL_BOTH, 1 },
};

static void launch_row(struct kp_doc *doc, struct kp_table *tb, const struct kp_launch_row *r,
		       int shorten)
{
	struct kp_cell *c = doc_row(tb);
	int64_t n = r->launches ? r->launches : 1;
	doc_cell_int(tb, &c[LC_N], r->launches, NULL);
	time_cell(tb, &c[LC_CPU], r->cpu_ns);
	time_cell(tb, &c[LC_CPU_AVG], r->cpu_ns / n);
	time_cell(tb, &c[LC_LAT_AVG], r->lat_ns / n);
	time_cell(tb, &c[LC_LAT_MAX], r->lat_max_ns);
	time_cell(tb, &c[LC_GPU], r->gpu_ns);
	doc_cell_int(tb, &c[LC_SHORT], r->short_n, NULL);
	time_cell(tb, &c[LC_SHORT_T], r->short_ns);
	doc_cell_int(tb, &c[LC_CHEAP], r->cheaper_n, NULL);
	doc_cell_str(tb, &c[LC_NAME], r->name,
			shorten ? kernrole_short_name(&doc->arena, r->name) : NULL);
}

void breakdown_doc_launches(struct kp_doc *doc, const struct kp_breakdown *b, long top, int by_op,
		       int full_names)
{
	const struct kp_launch_row *a = &b->launch_all;
	char t0[32], t1[32], t2[32], t3[32], t4[32];
	int64_t n = a->launches ? a->launches : 1;
	doc_fact_textf(
		doc, "launch", NULL,
		"%" PRId64
		" launch calls with GPU work: CPU %s (avg %s), launch->start avg %s (max %s); %" PRId64
		" GPU events without a launch call",
		a->launches, units_time(t0, sizeof(t0), a->cpu_ns),
		units_time(t1, sizeof(t1), a->cpu_ns / n),
		units_time(t2, sizeof(t2), a->lat_ns / n),
		units_time(t3, sizeof(t3), a->lat_max_ns), b->unlaunched);
	doc_fact_textf(doc, "short", NULL,
			  "%" PRId64 " of %" PRId64 " launched kernels under %s (%s of their %s)"
			  "; %" PRId64 " GPU events (memcpy/memset included) ran shorter than their launch call",
			  a->short_n, a->kernels, units_time(t0, sizeof(t0), b->short_ns),
			  units_time(t1, sizeof(t1), a->short_ns),
			  units_time(t4, sizeof(t4), a->kernel_ns), a->cheaper_n);
	doc_object(doc, "launch_stats");
	doc_fact_count(doc, NULL, "launches", a->launches);
	doc_fact_time(doc, NULL, "cpu_ns", a->cpu_ns);
	doc_fact_time(doc, NULL, "launch_to_start_total_ns", a->lat_ns);
	doc_fact_time(doc, NULL, "launch_to_start_max_ns", a->lat_max_ns);
	doc_fact_time(doc, NULL, "gpu_ns", a->gpu_ns);
	doc_fact_time(doc, NULL, "short_threshold_ns", b->short_ns);
	doc_fact_count(doc, NULL, "kernels", a->kernels);
	doc_fact_time(doc, NULL, "kernel_ns", a->kernel_ns);
	doc_fact_count(doc, NULL, "short_kernels", a->short_n);
	doc_fact_time(doc, NULL, "short_ns", a->short_ns);
	doc_fact_count(doc, NULL, "gpu_under_cpu", a->cheaper_n);
	doc_fact_count(doc, NULL, "unlaunched", b->unlaunched);
	doc_end(doc);
	struct kp_table *tb = doc_table(doc, "launches", ln_cols, LC_NCOL);
	if (by_op)
		doc_col_title(tb, LC_NAME, "Op");
	size_t shown = top > 0 && (size_t)top < b->nlaunch_rows ? (size_t)top : b->nlaunch_rows;
	for (size_t i = 0; i < shown; i++)
		launch_row(doc, tb, &b->launch_rows[i], !by_op && !full_names);
}
