/*
 * charts.h — the chart data of an analysis (roofline, top ops, GPU timeline) and of a
 * comparison (waterfall, dumbbell, new/gone lists), added to a document (doc.h)
 * for the html and svg formats.
 */
#ifndef KPROF_CHARTS_H
#define KPROF_CHARTS_H

#include "kprof/analyze.h"
#include "kprof/diff.h"
#include "kprof/doc.h"
#include "kprof/memory.h"

/* Which charts to build: bits of enum kp_chart_kind. */
#define CHARTS_ALL 0xffffu
#define CHART_BIT(kind) (1u << (kind))

/* Caps that keep pages small and legible with any number of rows or events. */
#define CHARTS_ROOF_POINTS 300 /* rows drawn one by one; the rest binned on a 24 x 24 grid */
#define CHARTS_TOP_OPS 15      /* bars of the top chart */
#define CHARTS_TOP_KERNELS 6   /* kernels named per bar; the rest one segment */
#define CHARTS_LANES 16        /* timeline lanes (streams); the rest share the last */
#define CHARTS_BUCKETS 600     /* timeline resolution per lane */
#define CHARTS_MARKS 200       /* step marks */
#define CHARTS_DELTAS 12       /* waterfall rows */
#define CHARTS_PAIRS 20        /* dumbbell rows */
#define CHARTS_LIST 50         /* new / gone names listed */
#define CHARTS_ICICLE_BOXES 1000 /* icicle boxes drawn one by one (plus one "(others)" each) */
#define CHARTS_ICICLE_DEPTH 40   /* icicle levels drawn below the whole */

/* Prototypes */
/*
 * The op family of GPU work for colours (display only): "gemm", "conv", "attention",
 * "norm", "copy", "reduce", "pointwise", "comm", "memcpy/memset" or "other", from @op
 * (NULL when unlinked), else from the kernel @name, by case-insensitive substrings.
 */
const char *charts_family(const char *op, const char *name, int gpu_kind);
/*
 * Add the analysis charts in @which to @doc: roofline of @shapes' rows (an op-shape
 * analysis of the same trace; may be @r), top ops split into kernels and the timeline
 * from @r's trace.
 */
void charts_analyze(struct kp_doc *doc, const struct kp_report *r, const struct kp_report *shapes,
		    unsigned which);
/* Add the comparison charts in @which to @doc: waterfall, dumbbell, new and gone lists. */
void charts_diff(struct kp_doc *doc, const struct kp_diff *d, unsigned which);
/*
 * Add the icicle of GPU time by module path ("flame") to @doc from @m, an analysis grouped
 * by module path with no --depth (its row keys "A/B/C", "A/B/C [bwd]", "(no module)"): one
 * box per path component, each box as wide as its GPU time with its children inside it and
 * its own time the gap at its right; a module's backward ops in a "[bwd]" child box (as
 * --format folded writes them).  Boxes narrower than a pixel (CHART_ICICLE_PX across) or
 * past CHARTS_ICICLE_BOXES / CHARTS_ICICLE_DEPTH are one "(others)" box per parent.
 */
void charts_icicle(struct kp_doc *doc, const struct kp_report *m);
/*
 * Add one memory chart per GPU device of @m (memory.c's curves; its names "memory",
 * "memory-2", ...) to @doc: allocated and reserved over time, the peak with its op, hover
 * bands, ProfilerStep starts and Optimizer.step spans of @t (annotations loaded).  With no
 * GPU device, one empty chart that says so.
 */
void charts_memory(struct kp_doc *doc, const struct kp_memrep *m, const struct kp_trace *t);
/* The chart kind named @name ("roofline", ...), -1 when none. */
int charts_kind(const char *name);

#endif /* KPROF_CHARTS_H */
