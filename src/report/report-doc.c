/*
 * report-doc.c — an analysis as a document: header facts, json objects, rows and measured tables.
 */
#include "kprof/report-doc.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kprof/dtype.h"
#include "kprof/kernrole.h"
#include "kprof/metric.h"
#include "kprof/units.h"

static const char *clock_source_name(enum kp_clock_source s)
{
	return s == CLOCK_TRACE ? "trace" : s == CLOCK_OPTION ? "option" : "datasheet";
}

/* The rows table: one column per figure of metric.h, in its order. */
static struct kp_table *rows_columns(const struct kp_report *r, const struct kp_report_doc_opts *o,
				     struct kp_doc *doc)
{
	struct kp_col cols[METRIC_N];
	for (int k = 0; k < METRIC_N; k++)
		cols[k] = metric_table[k].col;
	struct kp_table *tb = doc_table(doc, "rows", cols, METRIC_N);
	if (o->stats) {
		doc_col_show(tb, METRIC_MED, COL_BOTH);
		doc_col_show(tb, METRIC_MIN, COL_BOTH);
		doc_col_show(tb, METRIC_MAX, COL_BOTH);
	}
	if (r->group == GROUP_OP_SHAPE)
		doc_col_show(tb, METRIC_SHAPE, COL_BOTH);
	if (r->group == GROUP_KERNEL)
		doc_col_show(tb, METRIC_OP, COL_BOTH);
	else
		doc_col_title(tb, METRIC_NAME, r->group == GROUP_ANNOT	 ? "Annotation"
					      : r->group == GROUP_MODULE ? "Module"
					      : r->group == GROUP_SOURCE ? "Source"
									 : "Op");
	if (r->group == GROUP_MODULE)
		doc_col_show(tb, METRIC_MODULE, COL_MACHINE);
	if (r->group == GROUP_SOURCE)
		doc_col_show(tb, METRIC_SOURCE, COL_MACHINE);
	return tb;
}

/* Columns a row brings in: measured counters, a Dtype that differs from the Prec. */
static void row_columns(struct kp_table *tb, const struct kp_row *row)
{
	if (row->mflops >= 0 || row->mbytes >= 0)
		for (int k = METRIC_MTFLOPS; k <= METRIC_MBRATIO; k++)
			doc_col_show(tb, k, COL_BOTH);
	const char *prec = row->flops_per_s >= 0 ? row->prec : NULL;
	if (row->dtype && prec && strcmp(row->dtype, prec))
		doc_col_show(tb, METRIC_DTYPE, COL_BOTH);
}

static void rows_table(const struct kp_report *r, const struct kp_report_doc_opts *o,
		       struct kp_doc *doc)
{
	struct kp_table *tb = rows_columns(r, o, doc);
	struct kp_metric_ctx x = { .short_names = r->group == GROUP_KERNEL && !o->full_names };
	for (size_t i = 0; i < r->nrows; i++) {
		const struct kp_row *row = &r->rows[i];
		struct kp_cell *c = doc_row(tb);
		for (int k = 0; k < METRIC_N; k++)
			metric_cell(tb, &c[k], row, k, &x);
		row_columns(tb, row);
	}
}

void report_folded_write(const struct kp_report *r, FILE *fp)
{
	for (size_t i = 0; i < r->nfolds; i++)
		fprintf(fp, "%s %" PRId64 "\n", r->folds[i].stack, r->folds[i].ns);
}

void report_doc_device_line(const struct kp_report *r, char *buf, size_t cap)
{
	const struct kp_device *d = r->dev;
	if (!d) {
		snprintf(buf, cap, "%s (not in the device table: no %% of peak)",
			 !r->device_name   ? "unknown"
			 : *r->device_name ? r->device_name
					   : "''");
		return;
	}
	size_t n = snprintf(buf, cap, "%s -> %s (%s)",
			    r->device_name && *r->device_name ? r->device_name : "''", d->name,
			    r->match ? r->match : "");
	/* the precisions the rows used, at the clock used */
	int seen[PREC_N] = { 0 };
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].prec && r->rows[i].flops >= 0) {
			enum kp_prec p = dtype_prec_parse(r->rows[i].prec);
			if (p != PREC_NONE)
				seen[p] = 1;
		}
	for (int p = 0; p < PREC_N && n < cap; p++) {
		if (!seen[p] || d->peak[p].flop_per_s <= 0)
			continue;
		const struct kp_peak *pk = &d->peak[p];
		if (r->clock_source == CLOCK_DATASHEET || r->sm_clock_mhz <= 0) {
			n += snprintf(buf + n, cap - n, ", %s %.1f TFLOP/s at %d MHz",
				      dtype_prec_name(p), pk->flop_per_s / 1e12, pk->clk_ref_mhz);
		} else {
			double adj = devdb_peak_flops(d, p, r->sm_clock_mhz);
			n += snprintf(buf + n, cap - n,
				      ", %s %.1f TFLOP/s at %.0f MHz (datasheet %.1f at %d)",
				      dtype_prec_name(p), adj / 1e12, r->sm_clock_mhz,
				      pk->flop_per_s / 1e12, pk->clk_ref_mhz);
		}
	}
	if (n < cap)
		n += snprintf(buf + n, cap - n, ", DRAM %.0f GB/s", devdb_peak_bw(d, 0) / 1e9);
	/* the links, when host or peer copies were held to them */
	if (n < cap && (r->mempaths & (1u << MEMPATH_HOST | 1u << MEMPATH_PEER))) {
		if (d->host_link)
			n += snprintf(buf + n, cap - n, ", host %s %.1f GB/s", d->host_link,
				      d->host_bw_byte_per_s / 1e9);
		else
			n += snprintf(buf + n, cap - n, ", host link unknown");
	}
	if (n < cap && (r->mempaths & (1u << MEMPATH_PEER)) && d->peer_bw_byte_per_s > 0)
		snprintf(buf + n, cap - n, ", peer %.0f GB/s", d->peer_bw_byte_per_s / 1e9);
}

static const char *group_name(enum kp_group g)
{
	return g == GROUP_KERNEL  ? "kernel"
	       : g == GROUP_OP    ? "op"
	       : g == GROUP_ANNOT ? "annotation"
	       : g == GROUP_MODULE ? "module"
	       : g == GROUP_SOURCE ? "source"
				  : "op-shape";
}

static const char *const nomodel_names[6][2] = {
	[NOMODEL_TRITON] = { "Triton", "triton" },
	[NOMODEL_NCCL] = { "NCCL", "nccl" },
	[NOMODEL_ATEN] = { "aten", "aten" },
	[NOMODEL_CUSTOM] = { "custom", "custom" },
	[NOMODEL_UNLINKED] = { "unlinked", "unlinked" },
	[NOMODEL_NOSHAPES] = { "of ops without shapes", "no_shapes" },
};

/*
 * "FLOPs modelled for 71.0% of GPU time; 20.0% moves data (bytes only); 9.0% in kernels
 * without a model: 12 Triton, 3 custom" (distinct kernel names).
 */
static void coverage_fact(const struct kp_report *r, struct kp_doc *doc)
{
	char buf[256];
	double tot = (double)r->tot.gpu_time_ns;
	size_t n = (size_t)snprintf(buf, sizeof(buf), "FLOPs modelled for %.1f%% of GPU time",
				    100.0 * r->tot.flops_ns / tot);
	if (r->tot.bytes_only_ns)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "; %.1f%% moves data (bytes only)",
				      100.0 * r->tot.bytes_only_ns / tot);
	if (r->tot.unmodelled_ns) {
		n += (size_t)snprintf(buf + n, sizeof(buf) - n,
				      "; %.1f%% in kernels without a model:",
				      100.0 * r->tot.unmodelled_ns / tot);
		const char *sep = " ";
		for (int k = 0; k < 6 && n < sizeof(buf); k++)
			if (r->tot.nomodel_kernels[k]) {
				n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%" PRId64 " %s",
						      sep, r->tot.nomodel_kernels[k],
						      nomodel_names[k][0]);
				sep = ", ";
			}
	}
	doc_fact_text(doc, "model", NULL, buf);
}

/*
 * "prefix": the GPU events without a launch call before the first one with a launch call
 * (link.c), counted or left out (--drop-unlaunched-prefix); nothing when there are none.
 */
static void prefix_fact(const struct kp_trace *t, struct kp_doc *doc)
{
	const struct kp_prefix *p = &t->prefix;
	char b1[64], b2[64];
	if (!p->n)
		return;
	units_time(b1, sizeof(b1), p->gpu_ns);
	units_time(b2, sizeof(b2), p->until_ns - p->start_ns);
	if (p->dropped)
		doc_fact_textf(
			doc, "prefix", NULL,
			"%" PRId64 " GPU %s without a launch call before the first one with a launch call (%s GPU time over the %s before it): left out (--drop-unlaunched-prefix)",
			p->n, units_plural(p->n, "event", "events"), b1, b2);
	else
		doc_fact_textf(
			doc, "prefix", NULL,
			"%" PRId64 " GPU %s without a launch call before the first one with a launch call (%s GPU time over the %s before it): counted (--drop-unlaunched-prefix leaves them out)",
			p->n, units_plural(p->n, "event", "events"), b1, b2);
}

/* Rows over the DRAM peak whose bytes per kernel fit in L2 (ROW_FITS_L2): say why. */
static void l2_fact(const struct kp_report *r, struct kp_doc *doc)
{
	int64_t n = 0;
	double most = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		const struct kp_row *row = &r->rows[i];
		if (!(row->flags & ROW_FITS_L2))
			continue;
		n++;
		if ((double)row->bytes / (double)row->kernels > most)
			most = (double)row->bytes / (double)row->kernels;
	}
	if (!n)
		return;
	doc_fact_textf(doc, "l2", NULL,
			  "%" PRId64 " %s over the DRAM peak %s the %g MiB L2 (fits-L2: modelled "
			  "bytes per kernel up to %.1f MB): their data can come from L2, not DRAM",
			  n, units_plural(n, "row", "rows"), n == 1 ? "fits" : "fit",
			  r->dev->l2_bytes / 1048576, most / 1e6);
}

/* '#' lines / markdown list: what was read, against which peaks, and the totals */
static void human_facts(const struct kp_report *r, struct kp_doc *doc)
{
	const struct kp_trace *t = r->trace;
	char b1[64], b2[64], dev[1024];
	doc_fact_textf(doc, "input", NULL, "%s  (%" PRId64 " %s, %zu %s, %zu %s, %zu GPU %s%s)",
			  t->display, t->nevents, units_plural(t->nevents, "event", "events"),
			  t->nops, units_plural((int64_t)t->nops, "op", "ops"), t->nlaunches,
			  units_plural((int64_t)t->nlaunches, "launch", "launches"), t->ngpu,
			  units_plural((int64_t)t->ngpu, "event", "events"),
			  t->truncated ? ", truncated" : "");
	report_doc_device_line(r, dev, sizeof(dev));
	doc_fact_text(doc, "device", NULL, dev);
	if (r->clock_source == CLOCK_TRACE)
		doc_fact_textf(doc, "clock", NULL,
				  "trace: %.0f MHz SM clock, time-weighted over kernels",
				  r->sm_clock_mhz);
	else if (r->clock_source == CLOCK_OPTION)
		doc_fact_textf(doc, "clock", NULL, "option: --sm-clock %.0f MHz",
				  r->sm_clock_mhz);
	else
		doc_fact_text(
			doc, "clock", NULL,
			"datasheet: each peak at the clock it assumes (no clock in the trace)");
	/* two spans, each named; busy % is of the GPU span, as in the breakdown's split */
	char busy[48] = "", b3[64];
	if (r->tot.gpu_span_ns > 0)
		snprintf(busy, sizeof(busy), " (%.1f%% of the GPU span)",
			 100.0 * r->tot.gpu_busy_ns / r->tot.gpu_span_ns);
	doc_fact_textf(doc, "span", NULL, "trace %s, GPU %s; GPU busy %s%s, GPU time %s",
			  units_time(b1, sizeof(b1), r->tot.trace_span_ns),
			  units_time(b2, sizeof(b2), r->tot.gpu_span_ns),
			  units_time(b3, sizeof(b3), r->tot.gpu_busy_ns), busy,
			  units_time(dev, sizeof(dev), r->tot.gpu_time_ns));
	prefix_fact(t, doc);
	char steps[48] = "";
	if (r->tot.steps)
		snprintf(steps, sizeof(steps), ", %" PRId64 " %s", r->tot.steps,
			 units_plural(r->tot.steps, "step", "steps"));
	doc_fact_textf(doc, "work", NULL,
			  "%" PRId64 " %s, %" PRId64 " memcpy/memset, %" PRId64 " op %s, %" PRId64
			  " unlinked%s",
			  r->tot.kernels, units_plural(r->tot.kernels, "kernel", "kernels"),
			  r->tot.memops, r->tot.ops, units_plural(r->tot.ops, "call", "calls"),
			  r->tot.unlinked, steps);
	char meas[64] = "";
	if (r->tot.measured)
		snprintf(meas, sizeof(meas), "; %" PRId64 " %s measured", r->tot.measured,
			 units_plural(r->tot.measured, "kernel", "kernels"));
	doc_fact_textf(doc, "flops", NULL, "%s FLOP total (modelled%s), %s bytes compulsory",
			  units_count(b1, sizeof(b1), (double)r->tot.flops), meas,
			  units_count(b2, sizeof(b2), (double)r->tot.bytes));
	if (r->tot.gpu_time_ns > 0)
		coverage_fact(r, doc);
	l2_fact(r, doc);
	if (t->ngpu == 0)
		doc_fact_text(
			doc, "note", NULL,
			"the trace holds no GPU events (kernels, memcpy, memset): the GPU table is empty");
	if (r->tot.gpu_time_ns > r->tot.gpu_busy_ns)
		doc_fact_textf(
			doc, "note", NULL,
			"GPU time sums the GPU events' durations and GPU busy is their union: work "
			"overlapped on several streams for %s, so GPU time exceeds GPU busy%s",
			units_time(b1, sizeof(b1), r->tot.gpu_time_ns - r->tot.gpu_busy_ns),
			r->tot.gpu_time_ns > r->tot.gpu_span_ns ? " and the GPU span" : "");
}

/* json: the input, device and totals objects */
static void machine_facts(const struct kp_report *r, struct kp_doc *doc)
{
	const struct kp_trace *t = r->trace;
	doc_fact_text(doc, NULL, "input", t->display);
	doc_fact_bool(doc, NULL, "truncated", t->truncated);
	doc_fact_text(doc, NULL, "group_by", group_name(r->group));
	doc_object(doc, "device");
	doc_fact_text(doc, NULL, "name", r->device_name);
	doc_fact_text(doc, NULL, "matched", r->dev ? r->dev->name : NULL);
	doc_fact_text(doc, NULL, "match", r->dev ? r->match : NULL);
	doc_fact_num(doc, NULL, "sm_clock_mhz",
			r->clock_source == CLOCK_DATASHEET ? NAN : r->sm_clock_mhz);
	doc_fact_text(doc, NULL, "clock_source", clock_source_name(r->clock_source));
	doc_fact_rate(doc, NULL, "peak_dram_bytes_per_s",
			 r->dev ? devdb_peak_bw(r->dev, 0) : NAN, "B/s");
	doc_fact_text(doc, NULL, "host_link", r->dev ? r->dev->host_link : NULL);
	double hbw = devdb_path_bw(r->dev, MEMPATH_HOST), pbw = devdb_path_bw(r->dev, MEMPATH_PEER);
	doc_fact_rate(doc, NULL, "peak_host_bytes_per_s", hbw > 0 ? hbw : NAN, "B/s");
	doc_fact_rate(doc, NULL, "peak_peer_bytes_per_s", pbw > 0 ? pbw : NAN, "B/s");
	doc_end(doc);
	doc_object(doc, "totals");
	doc_fact_time(doc, NULL, "trace_span_ns", r->tot.trace_span_ns);
	doc_fact_time(doc, NULL, "gpu_span_ns", r->tot.gpu_span_ns);
	doc_fact_time(doc, NULL, "gpu_busy_ns", r->tot.gpu_busy_ns);
	doc_fact_time(doc, NULL, "gpu_time_ns", r->tot.gpu_time_ns);
	doc_fact_count(doc, NULL, "kernels", r->tot.kernels);
	doc_fact_count(doc, NULL, "memops", r->tot.memops);
	doc_fact_count(doc, NULL, "ops", r->tot.ops);
	doc_fact_count(doc, NULL, "unlinked", r->tot.unlinked);
	doc_fact_count(doc, NULL, "steps", r->tot.steps);
	const struct kp_prefix *p = &t->prefix;
	doc_object(doc, "unlaunched_prefix");
	doc_fact_count(doc, NULL, "events", p->n);
	doc_fact_time(doc, NULL, "gpu_time_ns", p->gpu_ns);
	doc_fact_time(doc, NULL, "before_first_launched_ns", p->n ? p->until_ns - p->start_ns : 0);
	doc_fact_bool(doc, NULL, "dropped", p->dropped);
	doc_end(doc);
	if (r->tot.flops >= 0)
		doc_fact_count(doc, NULL, "flops", r->tot.flops);
	else
		doc_fact_null(doc, NULL, "flops");
	if (r->tot.bytes >= 0)
		doc_fact_count(doc, NULL, "bytes", r->tot.bytes);
	else
		doc_fact_null(doc, NULL, "bytes");
	doc_fact_time(doc, NULL, "flops_modelled_ns", r->tot.flops_ns);
	doc_fact_time(doc, NULL, "bytes_only_ns", r->tot.bytes_only_ns);
	doc_fact_time(doc, NULL, "unmodelled_ns", r->tot.unmodelled_ns);
	doc_object(doc, "unmodelled_kernels");
	for (int k = 0; k < 6; k++)
		doc_fact_count(doc, NULL, nomodel_names[k][1], r->tot.nomodel_kernels[k]);
	doc_end(doc);
	doc_end(doc);
}

/* The measured table of cuda_profiler_range records (see kp_mrow). */
enum m_col { MC_CALLS, MC_FP64, MC_FP32, MC_FP16, MC_NAME, MC_N };

static const struct kp_col m_cols[MC_N] = {
	[MC_CALLS] = { "Calls", "calls", COL_BOTH, 0 },
	[MC_FP64] = { "FP64 GFLOP", "flops_fp64", COL_BOTH, 0 },
	[MC_FP32] = { "FP32 GFLOP", "flops_fp32", COL_BOTH, 0 },
	[MC_FP16] = { "FP16 GFLOP", "flops_fp16", COL_BOTH, 0 },
	[MC_NAME] = { "Kernel (measured)", "name", COL_BOTH, 1 },
};

static void measured_table(const struct kp_report *r, struct kp_doc *doc)
{
	if (!r->nmrows)
		return;
	doc_fact_textf(
		doc, "measured", NULL,
		"%zu cuda_profiler_range %s (CUPTI range profiler): FLOPs from SASS FP instruction counts (add + mul + 2 x fma; tensor-core instructions not counted); their durations are profiler spacing, not kernel time",
		r->trace->nranges, units_plural((int64_t)r->trace->nranges, "record", "records"));
	struct kp_table *tb = doc_table(doc, "measured", m_cols, MC_N);
	char b[64];
	for (size_t i = 0; i < r->nmrows; i++) {
		const struct kp_mrow *m = &r->mrows[i];
		struct kp_cell *c = doc_row(tb);
		doc_cell_int(tb, &c[MC_CALLS], m->calls, NULL);
		for (int k = 0; k < 3; k++) {
			if (m->flops[k] >= 0)
				doc_cell_int(tb, &c[MC_FP64 + k], m->flops[k],
						units_fixed(b, sizeof(b), (double)m->flops[k], 1e9,
							    3));
			else
				doc_cell_num(tb, &c[MC_FP64 + k], -1, "-");
		}
		doc_cell_str(tb, &c[MC_NAME], m->name, kernrole_short_name(&doc->arena, m->name));
	}
}

static void warning_fact(const char *line, void *doc)
{
	doc_fact_text(doc, NULL, NULL, line);
}

/* the lines stderr gets (one per kind, or every one with --warnings=all) */
static void warnings(const struct kp_warnings *w, struct kp_doc *doc)
{
	diag_warn_lines(w, NULL, warning_fact, doc);
}

void report_doc(const struct kp_report *r, const struct kp_report_doc_opts *o,
		       struct kp_doc *doc)
{
	char b1[32], b2[32];
	doc_init(doc, "analyze", 6);
	int64_t nev = r->tot.kernels + r->tot.memops;
	doc_summary(doc, "%s GPU time in %" PRId64 " GPU %s, %s GPU span",
		       units_time(b1, sizeof(b1), r->tot.gpu_time_ns), nev,
		       units_plural(nev, "event", "events"),
		       units_time(b2, sizeof(b2), r->tot.gpu_span_ns));
	human_facts(r, doc);
	machine_facts(r, doc);
	rows_table(r, o, doc);
	measured_table(r, doc);
	doc_array(doc, "warnings", 1);
	warnings(&r->trace->warn, doc);
	warnings(&r->warn, doc);
	doc_end(doc);
}

void report_doc_write(const struct kp_report *r, const struct kp_report_doc_opts *o, FILE *fp)
{
	struct kp_doc doc;
	report_doc(r, o, &doc);
	table_render(&doc, o->format, o->color, fp);
	doc_free(&doc);
}
