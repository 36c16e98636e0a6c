/*
 * diff-doc.c — a comparison as a document: which inputs, how they were paired and
 * normalized, the totals, the gate, and one row per key.
 */
#include "kprof/diff-doc.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kprof/devdb.h"
#include "kprof/trace.h"
#include "kprof/units.h"

static const char *const status_names[] = {
	[DIFF_CHANGED] = "changed", [DIFF_UNCHANGED] = "unchanged", [DIFF_NEW] = "new",
	[DIFF_GONE] = "gone",       [DIFF_OTHERS] = "others",
};

static const char *key_name(enum kp_group g)
{
	return g == GROUP_KERNEL ? "kernel"
	       : g == GROUP_OP   ? "op"
	       : g == GROUP_MODULE ? "module"
	       : g == GROUP_SOURCE ? "source"
				   : "op-shape";
}

/* the name column's title: what a row is */
static const char *name_title(enum kp_group g)
{
	return g == GROUP_KERNEL ? "Kernel"
	       : g == GROUP_MODULE ? "Module"
	       : g == GROUP_SOURCE ? "Source"
				   : "Op";
}

/* what the rows are, plural, for the rows line */
static const char *rows_noun(enum kp_group g)
{
	return g == GROUP_KERNEL ? "kernels"
	       : g == GROUP_MODULE ? "modules"
	       : g == GROUP_SOURCE ? "source lines"
				   : "ops";
}

static const char *time_text(char *buf, size_t cap, int64_t ns)
{
	return units_time(buf, cap, ns);
}

static const char *signed_time(char *buf, size_t cap, int64_t ns)
{
	return units_signed(buf, cap, ns, time_text);
}

static int any_flops(const struct kp_diff *d)
{
	for (size_t i = 0; i < d->nrows; i++)
		if (d->rows[i].base_flops_per_s >= 0 || d->rows[i].new_flops_per_s >= 0)
			return 1;
	return 0;
}

/* The rows table's columns, in print order (kprof-diff(1), OUTPUT). */
/* clang-format off */
enum diff_col {
	DC_KEY, DC_STATUS, DC_BASE, DC_NEW, DC_DELTA, DC_RATIO, DC_SHARE, DC_BPCT, DC_NPCT,
	DC_BCALLS, DC_NCALLS, DC_BTFL, DC_NTFL, DC_BPPK, DC_NPPK, DC_NOISE, DC_BDT, DC_NDT, DC_NAME,
	DC_N
};
/* clang-format on */

static const struct kp_col diff_cols[DC_N] = {
	[DC_KEY] = { "Key", "key", COL_MACHINE, 1 },
	[DC_STATUS] = { "Status", "status", COL_MACHINE, 1 },
	[DC_BASE] = { "Base", "base_time_ns", COL_BOTH, 0 },
	[DC_NEW] = { "New", "new_time_ns", COL_BOTH, 0 },
	[DC_DELTA] = { "Delta", "delta_ns", COL_BOTH, 0 },
	[DC_RATIO] = { "Ratio", "ratio", COL_BOTH, 0 },
	[DC_SHARE] = { "Share", "share_pt", COL_BOTH, 0 },
	[DC_BPCT] = { "Base%", "base_pct", COL_MACHINE, 0 },
	[DC_NPCT] = { "New%", "new_pct", COL_MACHINE, 0 },
	[DC_BCALLS] = { "Calls(B)", "base_calls", COL_BOTH, 0 },
	[DC_NCALLS] = { "Calls(N)", "new_calls", COL_BOTH, 0 },
	[DC_BTFL] = { "TFLOP/s(B)", "base_flops_per_s", COL_MACHINE, 0 }, /* any FLOPs: both */
	[DC_NTFL] = { "TFLOP/s(N)", "new_flops_per_s", COL_MACHINE, 0 },
	[DC_BPPK] = { "%Peak(B)", "base_pct_peak_flops", COL_MACHINE, 0 },
	[DC_NPPK] = { "%Peak(N)", "new_pct_peak_flops", COL_MACHINE, 0 },
	[DC_NOISE] = { "Noise", "noise_ns", COL_MACHINE, 0 },
	[DC_BDT] = { "Dtype(B)", "base_dtype", COL_MACHINE, 1 },
	[DC_NDT] = { "Dtype(N)", "new_dtype", COL_MACHINE, 1 },
	[DC_NAME] = { "Kernel", "name", COL_BOTH, 1 }, /* op keys: "Op" */
};

/* regressions red, improvements green: only rows that changed beyond the noise floor */
static enum kp_tone change_tone(const struct kp_diff_row *r)
{
	if (r->status != DIFF_CHANGED || r->delta_ns == 0)
		return TONE_NONE;
	return r->delta_ns > 0 ? TONE_BAD : TONE_GOOD;
}

static void rows_table(const struct kp_diff *d, struct kp_doc *doc)
{
	struct kp_table *tb = doc_table(doc, "rows", diff_cols, DC_N);
	if (any_flops(d))
		for (int j = DC_BTFL; j <= DC_NPPK; j++)
			doc_col_show(tb, j, COL_BOTH);
	if (d->opts.key != GROUP_KERNEL)
		doc_col_title(tb, DC_NAME, name_title(d->opts.key));
	char b[128];
	for (size_t i = 0; i < d->nrows; i++) {
		const struct kp_diff_row *r = &d->rows[i];
		struct kp_cell *c = doc_row(tb);
		doc_cell_str(tb, &c[DC_KEY], r->key, NULL);
		doc_cell_str(tb, &c[DC_STATUS], status_names[r->status], NULL);
		if (r->has_base)
			doc_cell_int(tb, &c[DC_BASE], r->base_ns,
					units_time(b, sizeof(b), r->base_ns));
		if (r->has_new)
			doc_cell_int(tb, &c[DC_NEW], r->new_ns,
					units_time(b, sizeof(b), r->new_ns));
		doc_cell_int(tb, &c[DC_DELTA], r->delta_ns,
				signed_time(b, sizeof(b), r->delta_ns));
		if (r->ratio >= 0) {
			snprintf(b, sizeof(b), "%.3fx", r->ratio);
			doc_cell_num(tb, &c[DC_RATIO], r->ratio, b);
		} else {
			doc_cell_num(tb, &c[DC_RATIO], -1, "N/A");
		}
		c[DC_DELTA].tone = c[DC_RATIO].tone = change_tone(r);
		snprintf(b, sizeof(b), "%+.1fpt", r->share_pt);
		if (!strcmp(b, "-0.0pt") || !strcmp(b, "+0.0pt"))
			strcpy(b, "0.0pt");
		doc_cell_signed(tb, &c[DC_SHARE], r->share_pt, b);
		doc_cell_num(tb, &c[DC_BPCT], r->base_pct, NULL);
		doc_cell_num(tb, &c[DC_NPCT], r->new_pct, NULL);
		if (r->has_base)
			doc_cell_num(tb, &c[DC_BCALLS], r->base_calls,
					units_calls(b, sizeof(b), r->base_calls));
		if (r->has_new)
			doc_cell_num(tb, &c[DC_NCALLS], r->new_calls,
					units_calls(b, sizeof(b), r->new_calls));
		doc_cell_fixed(tb, &c[DC_BTFL], r->base_flops_per_s, 1e12, 1);
		doc_cell_fixed(tb, &c[DC_NTFL], r->new_flops_per_s, 1e12, 1);
		doc_cell_fixed(tb, &c[DC_BPPK], r->base_pct_peak, 1, 1);
		doc_cell_fixed(tb, &c[DC_NPPK], r->new_pct_peak, 1, 1);
		doc_cell_num(tb, &c[DC_NOISE], r->noise_ns, NULL);
		doc_cell_str(tb, &c[DC_BDT], r->base_dtype, NULL);
		doc_cell_str(tb, &c[DC_NDT], r->new_dtype, NULL);
		const char *shown = r->name;
		if (r->status == DIFF_NEW || r->status == DIFF_GONE) {
			size_t n = strlen(r->name) + strlen(status_names[r->status]) + 4;
			char *t = arena_alloc(&doc->arena, n);
			snprintf(t, n, "%s (%s)", r->name, status_names[r->status]);
			shown = t;
		}
		doc_cell_str(tb, &c[DC_NAME], r->name, shown);
	}
}

static const char *side_device(const struct kp_diff_side *s)
{
	if (!s->rep)
		return NULL;
	return s->rep->dev ? s->rep->dev->name : s->rep->device_name;
}

static const char *side_input(const struct kp_diff_side *s)
{
	return s->rep && s->rep->trace ? s->rep->trace->display : s->label;
}

static void side_text(const struct kp_diff_side *s, char *buf, size_t cap)
{
	char t[32];
	if (!s->rep) {
		snprintf(buf, cap, "%s", units_time(t, sizeof(t), s->time_ns));
		return;
	}
	const struct kp_report *r = s->rep;
	const char *dev = side_device(s);
	size_t n = snprintf(buf, cap, "%s, %" PRId64 " %s", dev ? dev : "unknown device",
			    r->tot.kernels, units_plural(r->tot.kernels, "kernel", "kernels"));
	if (r->tot.memops && n < cap)
		n += snprintf(buf + n, cap - n, ", %" PRId64 " memcpy/memset", r->tot.memops);
	if (r->tot.steps && n < cap)
		n += snprintf(buf + n, cap - n, ", %" PRId64 " %s", r->tot.steps,
			      units_plural(r->tot.steps, "step", "steps"));
	if (n < cap)
		snprintf(buf + n, cap - n, ", %s GPU time",
			 units_time(t, sizeof(t), r->tot.gpu_time_ns));
}

static void compare_text(const struct kp_diff *d, char *buf, size_t cap)
{
	const struct kp_diff_opts *o = &d->opts;
	size_t n = snprintf(buf, cap, "%s",
			    o->key == GROUP_KERNEL
				    ? (o->full_names ? "kernel names as recorded (--name=full)"
						     : "normalized kernel names")
			    : o->key == GROUP_OP ? "op names"
			    : o->key == GROUP_MODULE
				    ? (o->depth ? "module paths folded to depth" : "module paths")
			    : o->key == GROUP_SOURCE
				    ? "source lines"
				    : "op names, input shapes and dtype, then across dtypes");
	if (n < cap && o->key == GROUP_MODULE && o->depth)
		n += snprintf(buf + n, cap - n, " %d", o->depth);
	if (n >= cap)
		return;
	if (o->per_step) {
		snprintf(buf + n, cap - n, ", per step (%s): base / %g, new / %g",
			 o->how == NORM_STEPS ? "--steps" : "ProfilerStep spans", d->base.div,
			 d->new.div);
		return;
	}
	if (o->how == NORM_TOTAL) {
		snprintf(buf + n, cap - n, ", totals (--no-per-step)");
		return;
	}
	const struct kp_report *b = d->base.rep, *w = d->new.rep;
	if (b && w && !b->tot.steps && !w->tot.steps)
		snprintf(buf + n, cap - n, ", totals (no ProfilerStep spans in either trace)");
	else if (b && !b->tot.steps)
		snprintf(buf + n, cap - n, ", totals (no ProfilerStep spans in %s)",
			 side_input(&d->base));
	else if (w && !w->tot.steps)
		snprintf(buf + n, cap - n, ", totals (no ProfilerStep spans in %s)",
			 side_input(&d->new));
	else
		snprintf(buf + n, cap - n, ", totals");
}

/*
 * "GPU time 2.926 ms -> 6.663 ms: +3.737 ms (+127.7%, 2.277x) = paired -101.122 us + new
 * 3.838 ms - gone 0 ns": the total's change is, to the ns, the paired rows' deltas plus the
 * new rows' time minus the gone rows' (every row's time is in its side's total).
 */
static void total_text(const struct kp_diff *d, char *buf, size_t cap)
{
	const struct kp_diff_summary *s = &d->sum;
	char b1[32], b2[32], t[3][32];
	size_t n = snprintf(buf, cap, "GPU time%s %s -> %s: %s", d->opts.per_step ? " per step" : "",
			    units_time(b1, sizeof(b1), s->base_ns),
			    units_time(b2, sizeof(b2), s->new_ns),
			    signed_time(t[0], sizeof(t[0]), s->delta_ns));
	if (n >= cap)
		return;
	if (s->total_ratio >= 0)
		n += snprintf(buf + n, cap - n, " (%+.1f%%, %.3fx)", (s->total_ratio - 1) * 100,
			      s->total_ratio);
	else
		n += snprintf(buf + n, cap - n, " (N/A)");
	if (n >= cap)
		return;
	snprintf(buf + n, cap - n, " = paired %s + new %s - gone %s",
		 signed_time(t[0], sizeof(t[0]), s->paired_delta_ns),
		 units_time(t[1], sizeof(t[1]), s->onesided_new_ns),
		 units_time(t[2], sizeof(t[2]), s->onesided_base_ns));
}

static void rows_text(const struct kp_diff *d, char *buf, size_t cap)
{
	const struct kp_diff_summary *s = &d->sum;
	const char *what = rows_noun(d->opts.key);
	size_t n = snprintf(buf, cap,
			    "%s: %" PRId64 " paired (%" PRId64 " regressed, %" PRId64
			    " improved, %" PRId64 " unchanged within %g%%), %" PRId64
			    " new, %" PRId64 " gone; geomean speedup ",
			    what, s->matched, s->regressed, s->improved, s->unchanged,
			    d->opts.threshold_pct, s->added, s->removed);
	if (n >= cap)
		return;
	/* over the paired rows only (new and gone rows have no ratio): say so, and how many */
	if (s->geomean_speedup > 0)
		n += snprintf(buf + n, cap - n, "of %" PRId64 " paired %s%s %.3fx",
			      s->geomean_rows, s->geomean_rows == 1 ? "row" : "rows",
			      s->geomean_rows < s->matched ? " with time on both sides" : "",
			      s->geomean_speedup);
	else
		n += snprintf(buf + n, cap - n, "N/A (no paired row with time on both sides)");
	if (s->cross_dtype && n < cap)
		n += snprintf(buf + n, cap - n, "; %" PRId64 " paired across dtypes",
			      s->cross_dtype);
	if (s->cross_backend && n < cap)
		snprintf(buf + n, cap - n, "; %" PRId64 " paired across backends",
			 s->cross_backend);
}

/*
 * Kernel keys: when most time sits in new/gone rows the backend renamed its kernels
 * (cuBLAS heuristics, torch.compile) and the rows say little: "most" = over half of a side.
 */
static int kernels_unpaired(const struct kp_diff *d, char *buf, size_t cap)
{
	const struct kp_diff_summary *s = &d->sum;
	if (d->opts.key != GROUP_KERNEL || s->base_ns <= 0 || s->new_ns <= 0)
		return 0;
	double b = 100.0 * s->onesided_base_ns / s->base_ns,
	       n = 100.0 * s->onesided_new_ns / s->new_ns;
	if (b <= 50 && n <= 50)
		return 0;
	snprintf(buf, cap,
		 "%.0f%% of base and %.0f%% of new time is in kernels found on one side only; try --key op-shape",
		 b, n);
	return 1;
}

static int devices_differ(const struct kp_diff *d)
{
	const char *a = side_device(&d->base), *b = side_device(&d->new);
	return a && b && strcmp(a, b);
}

static double noise_k(const struct kp_diff *d)
{
	return d->opts.noise_k > 0 ? d->opts.noise_k : KP_NOISE_K;
}

static void gate_text(const struct kp_diff *d, const struct kp_diff_doc_opts *o, char *buf,
		      size_t cap)
{
	const struct kp_gate_opts *g = o->gate;
	char fl[32], nz[32];
	size_t n = 0;
	if (g->fail_above_pct >= 0)
		n += snprintf(buf + n, cap - n, "--fail-above %g%%", g->fail_above_pct);
	if (g->nrules && n < cap)
		n += snprintf(buf + n, cap - n, "%s%zu per-key limit%s", n ? " and " : "",
			      g->nrules, g->nrules == 1 ? "" : "s");
	if (g->min_pct > 0 && n < cap)
		n += snprintf(buf + n, cap - n, " (rows >= %g%% of their side)", g->min_pct);
	if (n < cap)
		n += snprintf(buf + n, cap - n, ", --min-delta %s",
			      units_time(fl, sizeof(fl), g->min_delta_ns));
	if (n < cap && d->sum.noise_steps)
		n += snprintf(buf + n, cap - n, ", noise %g x pooled sd (total %s)", noise_k(d),
			      units_time(nz, sizeof(nz), (int64_t)llround(d->sum.noise_ns)));
	else if (n < cap && d->opts.noise_k < 0)
		n += snprintf(buf + n, cap - n, ", no noise test (--noise-k 0)");
	else if (n < cap)
		n += snprintf(buf + n, cap - n,
			      ", no noise estimate (needs %d+ ProfilerSteps per trace)",
			      KP_NOISE_MIN_STEPS);
	if (n >= cap)
		return;
	if (!o->nhits) {
		snprintf(buf + n, cap - n, ": passed");
		return;
	}
	/* what tripped it, counted as the rows line counts: paired rows and new rows */
	size_t nrow[2] = { 0, 0 }; /* paired, new */
	int total = 0;
	for (size_t i = 0; i < o->nhits; i++) {
		if (!o->hits[i].key)
			total = 1;
		else
			nrow[o->hits[i].status == DIFF_NEW]++;
	}
	const char *part[3];
	char pb[2][48];
	int np = 0;
	if (total)
		part[np++] = "the total";
	for (int k = 0; k < 2; k++)
		if (nrow[k]) {
			snprintf(pb[k], sizeof(pb[k]), "%zu %s %s", nrow[k], k ? "new" : "paired",
				 nrow[k] == 1 ? "row" : "rows");
			part[np++] = pb[k];
		}
	n += snprintf(buf + n, cap - n, ": tripped by %s", part[0]);
	for (int k = 1; k < np && n < cap; k++)
		n += snprintf(buf + n, cap - n, "%s%s", k == np - 1 ? " and " : ", ", part[k]);
}

static void gate_facts(const struct kp_diff *d, const struct kp_diff_doc_opts *o,
		       struct kp_doc *doc)
{
	static const struct kp_gate_opts off = { .fail_above_pct = -1,
						 .min_delta_ns = KP_MIN_DELTA_NS };
	const struct kp_gate_opts *g = o->gate ? o->gate : &off;
	doc_object(doc, "gate");
	doc_fact_num(doc, NULL, "fail_above_pct",
			g->fail_above_pct >= 0 ? g->fail_above_pct : NAN);
	doc_array(doc, "rules", 0);
	for (size_t i = 0; i < g->nrules; i++) {
		doc_object(doc, NULL);
		doc_fact_text(doc, NULL, "pattern", g->rules[i].pattern);
		doc_fact_num(doc, NULL, "pct", g->rules[i].pct);
		doc_end(doc);
	}
	doc_end(doc);
	doc_fact_num(doc, NULL, "min_pct", g->min_pct);
	doc_fact_time(doc, NULL, "min_delta_ns", g->min_delta_ns);
	doc_fact_num(doc, NULL, "noise_k", d->sum.noise_steps ? noise_k(d) : NAN);
	doc_fact_bool(doc, NULL, "tripped", o->nhits != 0);
	doc_array(doc, "crossed", 0);
	for (size_t i = 0; i < o->nhits; i++) {
		const struct kp_gate_hit *h = &o->hits[i];
		doc_object(doc, NULL);
		doc_fact_text(doc, NULL, "key", h->key);
		doc_fact_text(doc, NULL, "status", status_names[h->status]);
		if (h->status == DIFF_NEW)
			doc_fact_null(doc, NULL, "base_time_ns");
		else
			doc_fact_time(doc, NULL, "base_time_ns", h->base_ns);
		doc_fact_time(doc, NULL, "new_time_ns", h->new_ns);
		doc_fact_time(doc, NULL, "delta_ns", h->delta_ns);
		doc_fact_num(doc, NULL, "change_pct", h->change_pct);
		doc_fact_num(doc, NULL, "limit_pct", h->limit_pct);
		doc_fact_num(doc, NULL, "noise_ns", h->noise_ns >= 0 ? h->noise_ns : NAN);
		doc_end(doc);
	}
	doc_end(doc);
	doc_end(doc);
}

static void side_facts(const struct kp_diff_side *s, const char *jkey, struct kp_doc *doc)
{
	const struct kp_report *r = s->rep;
	doc_object(doc, jkey);
	doc_fact_text(doc, NULL, "input", side_input(s));
	doc_object(doc, "device");
	doc_fact_text(doc, NULL, "name", r ? r->device_name : NULL);
	doc_fact_text(doc, NULL, "matched", r && r->dev ? r->dev->name : NULL);
	doc_end(doc);
	doc_object(doc, "totals");
	if (r) {
		doc_fact_time(doc, NULL, "gpu_time_ns", r->tot.gpu_time_ns);
		doc_fact_time(doc, NULL, "gpu_busy_ns", r->tot.gpu_busy_ns);
		doc_fact_time(doc, NULL, "trace_span_ns", r->tot.trace_span_ns);
		doc_fact_time(doc, NULL, "gpu_span_ns", r->tot.gpu_span_ns);
		doc_fact_count(doc, NULL, "kernels", r->tot.kernels);
		doc_fact_count(doc, NULL, "memops", r->tot.memops);
		doc_fact_count(doc, NULL, "steps", r->tot.steps);
	}
	doc_fact_num(doc, NULL, "divisor", s->div);
	doc_fact_time(doc, NULL, "time_ns", s->time_ns);
	doc_fact_count(doc, NULL, "keys", (int64_t)s->nkeys);
	doc_end(doc);
	doc_end(doc);
}

static void summary_facts(const struct kp_diff *d, struct kp_doc *doc)
{
	const struct kp_diff_summary *s = &d->sum;
	doc_object(doc, "summary");
	doc_fact_time(doc, NULL, "base_time_ns", s->base_ns);
	doc_fact_time(doc, NULL, "new_time_ns", s->new_ns);
	doc_fact_time(doc, NULL, "delta_ns", s->delta_ns);
	doc_fact_num(doc, NULL, "total_ratio", s->total_ratio >= 0 ? s->total_ratio : NAN);
	doc_fact_time(doc, NULL, "paired_delta_ns", s->paired_delta_ns);
	doc_fact_time(doc, NULL, "new_rows_time_ns", s->onesided_new_ns);
	doc_fact_time(doc, NULL, "gone_rows_time_ns", s->onesided_base_ns);
	doc_fact_num(doc, NULL, "geomean_speedup",
			s->geomean_speedup > 0 ? s->geomean_speedup : NAN);
	doc_fact_count(doc, NULL, "geomean_rows", s->geomean_rows);
	doc_fact_num(doc, NULL, "threshold_pct", d->opts.threshold_pct);
	doc_fact_count(doc, NULL, "matched", s->matched);
	doc_fact_count(doc, NULL, "regressed", s->regressed);
	doc_fact_count(doc, NULL, "improved", s->improved);
	doc_fact_count(doc, NULL, "unchanged", s->unchanged);
	doc_fact_count(doc, NULL, "new", s->added);
	doc_fact_count(doc, NULL, "gone", s->removed);
	doc_fact_count(doc, NULL, "cross_dtype", s->cross_dtype);
	doc_fact_count(doc, NULL, "cross_backend", s->cross_backend);
	doc_fact_num(doc, NULL, "noise_ns", s->noise_ns >= 0 ? s->noise_ns : NAN);
	doc_end(doc);
}

/* table '#' lines and the markdown list */
static void human_facts(const struct kp_diff *d, const struct kp_diff_doc_opts *o,
			struct kp_doc *doc)
{
	char buf[2048];
	const char *in0 = side_input(&d->base), *in1 = side_input(&d->new);
	int w = (int)(strlen(in0) > strlen(in1) ? strlen(in0) : strlen(in1));
	side_text(&d->base, buf, sizeof(buf));
	doc_fact_textf(doc, "[0] base", NULL, "%-*s  (%s)", w, in0, buf);
	side_text(&d->new, buf, sizeof(buf));
	/* " ": the value starts under "[0] base"'s, one column past the other keys' */
	doc_fact_textf(doc, "[1] new", NULL, " %-*s  (%s)", w, in1, buf);
	if (devices_differ(d))
		doc_fact_textf(
			doc, "device", NULL,
			"base %s, new %s: TFLOP/s and %%Peak of each side are against its own device",
			side_device(&d->base), side_device(&d->new));
	compare_text(d, buf, sizeof(buf));
	doc_fact_text(doc, "compare", NULL, buf);
	total_text(d, buf, sizeof(buf));
	doc_fact_text(doc, "total", NULL, buf);
	rows_text(d, buf, sizeof(buf));
	doc_fact_text(doc, "rows", NULL, buf);
	if (kernels_unpaired(d, buf, sizeof(buf)))
		doc_fact_text(doc, "note", NULL, buf);
	if (o->gate) {
		gate_text(d, o, buf, sizeof(buf));
		doc_fact_text(doc, "gate", NULL, buf);
		doc_fact_tone(doc, o->nhits ? TONE_BAD : TONE_GOOD);
	}
}

void diff_doc(const struct kp_diff *d, const struct kp_diff_doc_opts *o,
		     struct kp_doc *doc)
{
	char buf[512];
	doc_init(doc, "diff", 7);
	total_text(d, buf, sizeof(buf));
	doc_summary(doc, "%s", buf);
	human_facts(d, o, doc);
	doc_fact_text(doc, NULL, "key", key_name(d->opts.key));
	doc_fact_text(doc, NULL, "normalize", d->opts.per_step ? "per-step" : "total");
	side_facts(&d->base, "base", doc);
	side_facts(&d->new, "new", doc);
	summary_facts(d, doc);
	gate_facts(d, o, doc);
	if (o->mem)
		memdiff_doc(doc, o->mem);
	rows_table(d, doc);
}
