/*
 * results-charts.c — capture results as CHART_LINES charts (doc.h): one per workload and op,
 * backends compared across shapes, as the benchmark drivers kprof grew from draw them.
 */
#include "kprof/results.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kprof/devdb.h"
#include "kprof/diag.h"
#include "kprof/doc.h"
#include "kprof/dtype.h"
#include "kprof/table.h"
#include "kprof/utf8.h"

/* Bounds: shapes on one chart's x axis; charts per document */
#define RESULTS_CHART_SHAPES 64
#define RESULTS_CHARTS 64

/* @a and @b belong on one chart: same workload (model.type), op and pass */
static int same_chart(const struct kp_result *a, const struct kp_result *b)
{
	return !strcmp(a->kind, b->kind) && !strcmp(a->op, b->op) && !strcmp(a->mode, b->mode);
}

/* What varies across a chart's results besides backend: bit 0 dtype, bit 1 layout */
static unsigned varies(const struct kp_results *rs, size_t first)
{
	unsigned v = 0;
	const struct kp_result *f = &rs->r[first];
	for (size_t i = first; i < rs->n; i++) {
		if (!same_chart(f, &rs->r[i]))
			continue;
		v |= strcmp(f->dtype, rs->r[i].dtype) ? 1u : 0u;
		v |= strcmp(f->layout, rs->r[i].layout) ? 2u : 0u;
	}
	return v;
}

static int series_of(struct kp_doc *doc, struct kp_chart *ch, const struct kp_result *r, unsigned v)
{
	char name[64];
	snprintf(name, sizeof(name), "%s%s%s%s%s", r->backend, v & 1 ? " " : "",
		 v & 1 ? r->dtype : "", v & 2 && r->layout[0] ? " " : "", v & 2 ? r->layout : "");
	for (int i = 0; i < ch->nseries; i++)
		if (!strcmp(ch->series[i], name))
			return i;
	return chart_series(ch, arena_strdup(&doc->arena, name));
}

/* The x index of @shape, added when new; -1 past RESULTS_CHART_SHAPES */
static int lane_of(struct kp_doc *doc, struct kp_chart *ch, const char *shape)
{
	for (size_t i = 0; i < ch->nlanes; i++)
		if (!strcmp(ch->lanes[i], shape))
			return (int)i;
	if (ch->nlanes >= RESULTS_CHART_SHAPES)
		return -1;
	return chart_lane(doc, ch, shape);
}

/* The peak in the chart's unit for @r's dtype (TFLOP/s) or DRAM (GB/s); 0 unknown */
static double peak_of(const struct kp_results *rs, const struct kp_device *dev,
		      const struct kp_result *r, int tflops)
{
	if (!dev)
		return 0;
	if (!tflops)
		return devdb_peak_bw(dev, rs->mem_clock_mhz) / 1e9;
	enum kp_prec p = dtype_prec_parse(r->dtype);
	return p == PREC_NONE ? 0 : devdb_peak_flops(dev, p, rs->sm_clock_mhz) / 1e12;
}

static void add_peak(struct kp_doc *doc, struct kp_chart *ch, const struct kp_results *rs,
		     const struct kp_device *dev, const struct kp_result *r, int tflops)
{
	double pk = peak_of(rs, dev, r, tflops);
	if (!(pk > 0))
		return;
	for (size_t i = 0; i < ch->nmarks; i++)
		if (ch->marks[i].v == pk)
			return;
	char lab[96], clk[32] = "";
	int mhz = tflops ? rs->sm_clock_mhz : rs->mem_clock_mhz;
	if (mhz > 0)
		snprintf(clk, sizeof(clk), " at %d MHz", mhz);
	if (tflops)
		snprintf(lab, sizeof(lab), "%s peak %.1f TFLOP/s%s", r->dtype, pk, clk);
	else
		snprintf(lab, sizeof(lab), "DRAM peak %.0f GB/s%s", pk, clk);
	chart_mark(doc, ch, pk, lab);
}

static void add_point(struct kp_doc *doc, struct kp_chart *ch, const struct kp_results *rs,
		      const struct kp_device *dev, size_t i, unsigned v, int tflops)
{
	const struct kp_result *r = &rs->r[i];
	int x = lane_of(doc, ch, r->shape);
	double y = tflops ? r->tflops : r->gbs;
	if (x < 0 || !(y > 0))
		return;
	int s = series_of(doc, ch, r, v);
	char tip[512], ms[32], fl[32] = "-", gb[32] = "-", pc[32] = "-";
	double pk = peak_of(rs, dev, r, tflops);
	results_ms_text(ms, sizeof(ms), r->ms);
	if (r->tflops > 0)
		snprintf(fl, sizeof(fl), "%.1f", r->tflops);
	if (r->gbs > 0)
		snprintf(gb, sizeof(gb), "%.0f", r->gbs);
	if (pk > 0)
		snprintf(pc, sizeof(pc), "%.1f%%", 100 * y / pk);
	int bad = !(r->err <= r->tol);
	struct kp_visbuf v1 = { 0 }, v2 = { 0 }, v3 = { 0 };
	snprintf(tip, sizeof(tip),
		 "%s  %s%s%s\ntime %s ms  TFLOP/s %s  GB/s %s  %s of peak%s",
		 utf8_visible(ch->series[s], &v1), utf8_visible(r->shape, &v2),
		 r->layout[0] ? " " : "", utf8_visible(r->layout, &v3), ms, fl, gb, pc,
		 bad ? "\naccuracy check FAILED" : "");
	utf8_visible_free(&v1);
	utf8_visible_free(&v2);
	utf8_visible_free(&v3);
	struct kp_cpoint *p = chart_point(doc, ch, x, y, r->ms * 1e6, s, r->shape, tip);
	p->flag = bad;
	add_peak(doc, ch, rs, dev, r, tflops);
}

/*
 * Each series' legend with its geomean speedup over series 0: exp(mean(log(t0 / t))) over
 * the x positions both have.
 */
static void legend_speedups(struct kp_doc *doc, struct kp_chart *ch)
{
	for (int s = 1; s < ch->nseries; s++) {
		double sum = 0;
		int n = 0;
		for (size_t i = 0; i < ch->npts; i++) {
			const struct kp_cpoint *a = &ch->pts[i];
			if (a->series != s || !(a->w > 0))
				continue;
			for (size_t j = 0; j < ch->npts; j++)
				if (ch->pts[j].series == 0 && ch->pts[j].x == a->x && ch->pts[j].w > 0) {
					sum += log(ch->pts[j].w / a->w), n++;
					break;
				}
		}
		char b[96];
		if (n)
			snprintf(b, sizeof(b), "%s  %.3fx", ch->series[s], exp(sum / n));
		else
			snprintf(b, sizeof(b), "%s  (no shape in common)", ch->series[s]);
		ch->series[s] = arena_strdup(&doc->arena, b);
	}
	if (ch->nseries > 1) {
		char b[96];
		snprintf(b, sizeof(b), "%s  1.000x (base)", ch->series[0]);
		ch->series[0] = arena_strdup(&doc->arena, b);
	}
}

static void one_chart(struct kp_doc *doc, const struct kp_results *rs, const struct kp_device *dev,
		      size_t first, int k)
{
	const struct kp_result *f = &rs->r[first];
	int tflops = 0;
	for (size_t i = first; i < rs->n; i++)
		if (same_chart(f, &rs->r[i]) && rs->r[i].tflops > 0)
			tflops = 1;
	char name[32], title[160];
	snprintf(name, sizeof(name), "results-%d", k);
	snprintf(title, sizeof(title), "%s  %s  %s: %s by shape", f->kind, f->op, f->mode,
		 tflops ? "TFLOP/s" : "GB/s");
	const char *nm = arena_strdup(&doc->arena, name);
	struct kp_chart *ch = doc_chart(doc, nm, CHART_LINES, nm, arena_strdup(&doc->arena, title));
	if (!ch)
		return;
	ch->yunit = tflops ? "TFLOP/s" : "GB/s";
	unsigned v = varies(rs, first);
	for (size_t i = first; i < rs->n; i++)
		if (same_chart(f, &rs->r[i]))
			add_point(doc, ch, rs, dev, i, v, tflops);
	legend_speedups(doc, ch);
	int failed = 0;
	for (size_t i = 0; i < ch->npts; i++)
		failed += ch->pts[i].flag;
	char note[200];
	snprintf(note, sizeof(note), "%zu shapes in run order%s%s", ch->nlanes,
		 ch->nseries > 1 ? "; legend: geomean speedup over the first backend" : "",
		 failed ? "; red rings: accuracy check failed" : "");
	ch->note = arena_strdup(&doc->arena, note);
}

void results_charts(struct kp_doc *doc, const struct kp_results *rs, const struct kp_device *dev,
		    const char *only)
{
	int k = 0, drawn = 0;
	for (size_t i = 0; i < rs->n && k < RESULTS_CHARTS; i++) {
		size_t j = 0;
		while (j < i && !same_chart(&rs->r[j], &rs->r[i]))
			j++;
		if (j < i)
			continue;
		char name[32];
		snprintf(name, sizeof(name), "results-%d", ++k);
		if (!only || !strcmp(only, name))
			one_chart(doc, rs, dev, i, k), drawn++;
	}
	if (drawn || (!only && k))
		return;
	/* a chart asked for that this run does not have: say which it has, as memory does */
	char note[160];
	if (k)
		snprintf(note, sizeof(note), "no chart '%.40s': this run's results draw results-1 "
					     "to results-%d", only, k);
	else
		snprintf(note, sizeof(note), "no capture results here: kprof capture writes them "
					     "(kprof-capture(1), --results)");
	struct kp_chart *ch = doc_chart(doc, "results", CHART_LINES, "results", "Capture results");
	ch->note = arena_strdup(&doc->arena, note);
}

void results_doc(struct kp_doc *doc, const struct kp_results *rs, const struct kp_device *dev,
		 int draw, const char *only)
{
	doc_summary(doc, "%zu cases%s%s", rs->n, rs->device[0] ? " on " : "", rs->device);
	doc_fact_text(doc, "device", "device", rs->device[0] ? rs->device : "-");
	if (dev)
		doc_fact_text(doc, "entry", "device_entry", dev->name);
	if (rs->sm_clock_mhz > 0)
		doc_fact_count(doc, "sm clock", "sm_clock_mhz", rs->sm_clock_mhz);
	if (rs->mem_clock_mhz > 0)
		doc_fact_count(doc, "mem clock", "mem_clock_mhz", rs->mem_clock_mhz);
	if (draw)
		results_charts(doc, rs, dev, only);
	results_report(rs, doc);
}

int results_report_suffix(const char *path)
{
	size_t n = strlen(path);
	if (n > 5 && !strcmp(path + n - 5, ".html"))
		return 1;
	if (n > 4 && !strcmp(path + n - 4, ".svg"))
		return 2;
	return 0;
}

int results_report_file(const struct kp_results *rs, const char *path, char *why, size_t whylen)
{
	struct kp_devdb db = { 0 };
	struct kp_diag d;
	const struct kp_device *dev = NULL;
	if (rs->device[0] && devdb_load_builtin(&db, &d) == 0) {
		struct kp_devchoice c;
		devdb_choose(&db, NULL, rs->device, NULL, &c);
		dev = c.dev;
	}
	struct kp_doc doc;
	doc_init(&doc, "capture", 10);
	results_doc(&doc, rs, dev, 1, NULL);
	int rc = 0;
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(why, whylen, "cannot write %s: %s", path, strerror(errno));
		rc = -1;
	} else {
		table_render(&doc, results_report_suffix(path) == 2 ? FMT_SVG : FMT_HTML, 0, f);
		if (fclose(f) != 0) {
			snprintf(why, whylen, "cannot write %s: %s", path, strerror(errno));
			rc = -1;
		}
	}
	doc_free(&doc);
	devdb_free(&db);
	return rc;
}
