/*
 * charts-memory.c — the memory chart's data (include/kprof/charts.h, charts_memory): a
 * device's downsampled curve (memory.c), its peak, hover bands and step boundaries.
 */
#include "kprof/charts.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kprof/memory-doc.h"
#include "kprof/units.h"
#include "kprof/utf8.h"

/*
 * "12.475 ms: allocated 205.22 MiB, reserved 226.00 MiB\nin OP (MODULE)" for @p; the names
 * with their line breaks and other controls escaped, so that only the tip's own break is one.
 */
static void pt_text(char *b, size_t cap, const char *what, const struct kp_mem_pt *p, int64_t t0)
{
	char tm[32], a[32], r[32];
	struct kp_visbuf vo = { 0 }, vm = { 0 };
	snprintf(b, cap, "%s%s: allocated %s, reserved %s\nin %s%s%s%s", what,
		 units_time(tm, sizeof(tm), p->ts_ns - t0), memory_bytes(a, sizeof(a), p->alloc),
		 p->res >= 0 ? memory_bytes(r, sizeof(r), p->res) : "unknown",
		 p->op ? utf8_visible(p->op, &vo) : "no op", p->module ? " (" : "",
		 p->module ? utf8_visible(p->module, &vm) : "", p->module ? ")" : "");
	utf8_visible_free(&vo);
	utf8_visible_free(&vm);
}

/*
 * Lane 0: one hover band per stretch with events (its highest point's text), and one per
 * gap before the next such stretch (the level the last event left).
 */
static void hover_bands(struct kp_doc *doc, struct kp_chart *ch, const struct kp_mem_dev *d,
			int64_t t0)
{
	char tip[1024], a[32], b[32], al[32], rs[32];
	for (size_t i = 0; i < d->ncurve;) {
		size_t j = i, top = i;
		while (j < d->ncurve && d->curve[j].bucket == d->curve[i].bucket) {
			if (d->curve[j].top)
				top = j;
			j++;
		}
		int64_t s0 = d->curve_t0 + d->curve[i].bucket * d->curve_bw - t0, s1 = s0 + d->curve_bw;
		pt_text(tip, sizeof(tip), "", &d->curve[top], t0);
		chart_span(doc, ch, 0, 0, s0, s1, 0, d->curve[top].op)->tip =
			arena_strdup(&doc->arena, tip);
		if (j < d->ncurve) {
			int64_t n0 = d->curve_t0 + d->curve[j].bucket * d->curve_bw - t0;
			const struct kp_mem_pt *l = &d->curve[j - 1];
			if (n0 > s1) {
				snprintf(tip, sizeof(tip),
					 "%s to %s: no event\nallocated %s, reserved %s",
					 units_time(a, sizeof(a), s1), units_time(b, sizeof(b), n0),
					 memory_bytes(al, sizeof(al), l->alloc),
					 l->res >= 0 ? memory_bytes(rs, sizeof(rs), l->res) : "unknown");
				chart_span(doc, ch, 0, 0, s1, n0, 0, NULL)->tip =
					arena_strdup(&doc->arena, tip);
			}
		}
		i = j;
	}
}

/*
 * ProfilerStep starts (marks) and Optimizer.step spans (lane 1), about CHARTS_MARKS of each.
 * Returns a note of what is drawn.
 */
static const char *boundaries(struct kp_doc *doc, struct kp_chart *ch, const struct kp_trace *t,
			      int64_t t0)
{
	char b[64];
	size_t every = t->nsteps > CHARTS_MARKS ? (t->nsteps + CHARTS_MARKS - 1) / CHARTS_MARKS : 1;
	for (size_t i = 0; i < t->nsteps; i += every) {
		snprintf(b, sizeof(b), "step %" PRId64, t->steps[i].num);
		chart_mark(doc, ch, (double)(t->steps[i].ts_ns - t0), b);
	}
	size_t nopt = 0;
	for (size_t i = 0; i < t->nannots; i++)
		nopt += !strncmp(t->annots[i].name, "Optimizer.step", 14);
	every = nopt > CHARTS_MARKS ? (nopt + CHARTS_MARKS - 1) / CHARTS_MARKS : 1;
	int s = chart_series(ch, "Optimizer.step");
	for (size_t i = 0, k = 0; i < t->nannots; i++) {
		const struct kp_annot *a = &t->annots[i];
		if (strncmp(a->name, "Optimizer.step", 14) || k++ % every)
			continue;
		chart_span(doc, ch, 1, s, a->ts_ns - t0, a->ts_ns + a->dur_ns - t0, 0, a->name);
	}
	if (t->nsteps && nopt)
		return "dashed: ProfilerStep starts; shaded: Optimizer.step";
	if (t->nsteps)
		return "dashed: ProfilerStep starts; no Optimizer.step annotation";
	if (nopt)
		return "no ProfilerStep in the trace; shaded: Optimizer.step (the optimizer's update)";
	return "no ProfilerStep nor Optimizer.step in the trace: no step drawn";
}

static void device_chart(struct kp_doc *doc, const struct kp_memrep *m, const struct kp_trace *t,
			 size_t i)
{
	const struct kp_mem_dev *d = &m->devs[i];
	char name[32], jkey[32], dn[48], title[96], b[1024], bw[32];
	snprintf(name, sizeof(name), i ? "memory-%zu" : "memory", i + 1);
	snprintf(jkey, sizeof(jkey), i ? "memory_chart_%zu" : "memory_chart", i + 1);
	memory_dev_label(m, d, dn, sizeof(dn));
	snprintf(title, sizeof(title), "Device memory over time: %s", dn);
	struct kp_chart *ch = doc_chart(doc, arena_strdup(&doc->arena, jkey), CHART_MEMORY,
					arena_strdup(&doc->arena, name),
					arena_strdup(&doc->arena, title));
	chart_series(ch, "allocated");
	chart_series(ch, "reserved");
	chart_series(ch, "peak");
	int64_t t0 = m->t0_ns;
	ch->x1 = m->t1_ns - t0 > 0 ? m->t1_ns - t0 : 1;
	for (size_t k = 0; k < d->ncurve; k++) {
		const struct kp_mem_pt *p = &d->curve[k];
		chart_point(doc, ch, (double)(p->ts_ns - t0), (double)p->alloc, (double)p->res, 0,
			    p->op, NULL);
	}
	struct kp_mem_pt pk = { .ts_ns = d->peak_ts_ns,
				.alloc = d->peak_alloc,
				.res = d->res_at_peak,
				.op = d->peak_op,
				.module = d->peak_module };
	pt_text(b, sizeof(b), "peak at ", &pk, t0);
	chart_point(doc, ch, (double)(pk.ts_ns - t0), (double)pk.alloc, (double)pk.res, 2, pk.op,
		    b);
	hover_bands(doc, ch, d, t0);
	const char *steps = boundaries(doc, ch, t, t0);
	snprintf(b, sizeof(b),
		 "%" PRId64 " [memory] events drawn by stretches of %s: each keeps its first, last, lowest and highest points, so the peak is exact; %s",
		 d->nevents, units_time(bw, sizeof(bw), d->curve_bw), steps);
	ch->note = arena_strdup(&doc->arena, b);
}

void charts_memory(struct kp_doc *doc, const struct kp_memrep *m, const struct kp_trace *t)
{
	for (size_t i = 0; i < m->ngpu; i++)
		device_chart(doc, m, t, i);
	if (m->ngpu)
		return;
	struct kp_chart *ch = doc_chart(doc, "memory_chart", CHART_MEMORY, "memory",
					"Device memory over time");
	ch->note = "no GPU [memory] events: record with torch.profiler.profile(profile_memory=True)";
}
