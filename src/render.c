/*
 * render.c — analysis report -> '#' header lines and a table of cells; the json envelope.
 */
#include "kprof/render.h"

#include <inttypes.h>
#include <string.h>

#include "kprof/dtype.h"
#include "kprof/units.h"

static const char *clock_source_name(enum kp_clock_source s)
{
	return s == CLOCK_TRACE ? "trace" : s == CLOCK_OPTION ? "option" : "datasheet";
}

static void flags_text(unsigned f, char *buf, size_t cap)
{
	buf[0] = '\0';
	if (f & ROW_OVER_PEAK)
		strncat(buf, "over-peak", cap - 1);
	else if (f & ROW_VERIFY)
		strncat(buf, "verify", cap - 1);
	if (f & ROW_UNLINKED)
		strncat(buf, buf[0] ? ",unlinked" : "unlinked", cap - strlen(buf) - 1);
}

void render_report_table(const struct kp_report *r, const struct kp_render_opts *o,
			 struct kp_table *tb)
{
	int by_kernel = r->group == GROUP_KERNEL;
	table_init(tb);
	int c_time = table_add_col(tb, "Time", "time_ns", COL_BOTH, 0);
	int c_pct = table_add_col(tb, "Time%", "time_pct", COL_BOTH, 0);
	int c_calls = table_add_col(tb, "Calls", "calls", COL_BOTH, 0);
	int c_avg = table_add_col(tb, "Avg", "avg_ns", COL_BOTH, 0);
	int c_med = table_add_col(tb, "Med", "med_ns", o->stats ? COL_BOTH : COL_MACHINE, 0);
	int c_min = table_add_col(tb, "Min", "min_ns", o->stats ? COL_BOTH : COL_MACHINE, 0);
	int c_max = table_add_col(tb, "Max", "max_ns", o->stats ? COL_BOTH : COL_MACHINE, 0);
	int c_flops = table_add_col(tb, "GFLOP", "flops", COL_MACHINE, 0);
	int c_bytes = table_add_col(tb, "MB", "bytes", COL_MACHINE, 0);
	int c_tfl = table_add_col(tb, "TFLOP/s", "flops_per_s", COL_BOTH, 0);
	int c_gbs = table_add_col(tb, "GB/s", "bytes_per_s", COL_BOTH, 0);
	int c_ppf = table_add_col(tb, "%Peak", "pct_peak_flops", COL_BOTH, 0);
	int c_ppb = table_add_col(tb, "%BW", "pct_peak_bw", COL_BOTH, 0);
	int c_ai = table_add_col(tb, "FLOP/B", "intensity", COL_BOTH, 0);
	int c_bound = table_add_col(tb, "Bound", "bound", COL_BOTH, 1);
	int c_prec = table_add_col(tb, "Prec", "dtype", COL_BOTH, 1);
	int c_peakp = table_add_col(tb, "PeakPrec", "prec", COL_MACHINE, 1);
	int c_flags = table_add_col(tb, "Flags", "flags", COL_BOTH, 1);
	int c_shape = table_add_col(tb, "Shape", "shape",
				    r->group == GROUP_OP_SHAPE ? COL_BOTH : COL_MACHINE, 1);
	int c_op = table_add_col(tb, "Op", "op", by_kernel ? COL_BOTH : COL_MACHINE, 1);
	int c_name = table_add_col(tb, by_kernel ? "Kernel" : "Op", "name", COL_BOTH, 1);

	char b[128];
	for (size_t i = 0; i < r->nrows; i++) {
		const struct kp_row *row = &r->rows[i];
		struct kp_cell *c = table_add_row(tb);
		int others = row->flags & ROW_OTHERS;
		cell_int(tb, &c[c_time], row->time_ns, units_time(b, sizeof(b), row->time_ns));
		cell_num(tb, &c[c_pct], row->time_pct, units_fixed(b, sizeof(b), row->time_pct, 1, 1));
		cell_int(tb, &c[c_calls], row->calls, NULL);
		int64_t avg = row->calls ? row->time_ns / row->calls : 0;
		if (others) {
			cell_num(tb, &c[c_avg], -1, "-");
		} else {
			cell_int(tb, &c[c_avg], avg, units_time(b, sizeof(b), avg));
			cell_int(tb, &c[c_med], row->med_ns, units_time(b, sizeof(b), row->med_ns));
			cell_int(tb, &c[c_min], row->min_ns, units_time(b, sizeof(b), row->min_ns));
			cell_int(tb, &c[c_max], row->max_ns, units_time(b, sizeof(b), row->max_ns));
		}
		if (row->flops >= 0)
			cell_int(tb, &c[c_flops], row->flops, NULL);
		if (row->bytes >= 0)
			cell_int(tb, &c[c_bytes], row->bytes, NULL);
		cell_num(tb, &c[c_tfl], row->flops_per_s, units_fixed(b, sizeof(b), row->flops_per_s, 1e12, 1));
		cell_num(tb, &c[c_gbs], row->bytes_per_s, units_fixed(b, sizeof(b), row->bytes_per_s, 1e9, 1));
		cell_num(tb, &c[c_ppf], row->pct_peak_flops,
			 units_fixed(b, sizeof(b), row->pct_peak_flops, 1, 1));
		cell_num(tb, &c[c_ppb], row->pct_peak_bw, units_fixed(b, sizeof(b), row->pct_peak_bw, 1, 1));
		cell_num(tb, &c[c_ai], row->intensity, units_fixed(b, sizeof(b), row->intensity, 1, 1));
		cell_str(tb, &c[c_bound], row->bound, row->bound ? NULL : "-");
		cell_str(tb, &c[c_prec], row->dtype, row->dtype ? NULL : "-");
		cell_str(tb, &c[c_peakp], row->prec, NULL);
		flags_text(row->flags & ~ROW_UNLINKED, b, sizeof(b));
		if (b[0])
			cell_str(tb, &c[c_flags], arena_strdup(&tb->arena, b), NULL);
		else
			cell_str(tb, &c[c_flags], NULL, "-");
		cell_str(tb, &c[c_shape], row->shape, row->shape ? NULL : "-");
		cell_str(tb, &c[c_op], row->op, row->op ? NULL : "(several)");
		const char *shown = row->name;
		if (by_kernel && !o->full_names && o->format != FMT_CSV && o->format != FMT_JSON)
			shown = analyze_short_name(&tb->arena, row->name);
		cell_str(tb, &c[c_name], row->name, shown);
	}
}

void render_device_line(const struct kp_report *r, char *buf, size_t cap)
{
	const struct kp_device *d = r->dev;
	if (!d) {
		snprintf(buf, cap, "%s (not in the device table: no %% of peak)",
			 r->device_name ? r->device_name : "unknown");
		return;
	}
	size_t n = snprintf(buf, cap, "%s -> %s (%s)", r->device_name, d->name, r->match ? r->match : "");
	/* the precisions the rows used, at the clock used */
	int seen[PREC_N] = { 0 };
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].prec && r->rows[i].flops >= 0) {
			enum kp_prec p = prec_parse(r->rows[i].prec);
			if (p != PREC_NONE)
				seen[p] = 1;
		}
	for (int p = 0; p < PREC_N && n < cap; p++) {
		if (!seen[p] || d->peak[p].flop_per_s <= 0)
			continue;
		const struct kp_peak *pk = &d->peak[p];
		if (r->clock_source == CLOCK_DATASHEET || r->sm_clock_mhz <= 0) {
			n += snprintf(buf + n, cap - n, ", %s %.1f TFLOP/s at %d MHz", prec_name(p),
				      pk->flop_per_s / 1e12, pk->clk_ref_mhz);
		} else {
			double adj = devdb_peak_flops(d, p, r->sm_clock_mhz);
			n += snprintf(buf + n, cap - n, ", %s %.1f TFLOP/s at %.0f MHz (datasheet %.1f at %d)",
				      prec_name(p), adj / 1e12, r->sm_clock_mhz, pk->flop_per_s / 1e12,
				      pk->clk_ref_mhz);
		}
	}
	if (n < cap)
		snprintf(buf + n, cap - n, ", DRAM %.0f GB/s", devdb_peak_bw(d, 0) / 1e9);
}

static void header_lines(const struct kp_report *r, FILE *fp, const char *pfx)
{
	const struct kp_trace *t = r->trace;
	char b1[64], b2[64], dev[1024];
	fprintf(fp, "%sinput   %s  (%" PRId64 " events, %zu ops, %zu launches, %zu GPU events%s)\n",
		pfx, t->display, t->nevents, t->nops, t->nlaunches, t->ngpu,
		t->truncated ? ", truncated" : "");
	render_device_line(r, dev, sizeof(dev));
	fprintf(fp, "%sdevice  %s\n", pfx, dev);
	if (r->clock_source == CLOCK_TRACE)
		fprintf(fp, "%sclock   trace: %.0f MHz SM clock, time-weighted over kernels\n", pfx,
			r->sm_clock_mhz);
	else if (r->clock_source == CLOCK_OPTION)
		fprintf(fp, "%sclock   option: --sm-clock %.0f MHz\n", pfx, r->sm_clock_mhz);
	else
		fprintf(fp, "%sclock   datasheet: each peak at the clock it assumes (no clock in the trace)\n", pfx);
	fprintf(fp, "%sspan    %s, GPU busy %s", pfx, units_time(b1, sizeof(b1), r->tot.span_ns),
		units_time(b2, sizeof(b2), r->tot.gpu_busy_ns));
	if (r->tot.span_ns > 0)
		fprintf(fp, " (%.1f%%)", 100.0 * r->tot.gpu_busy_ns / r->tot.span_ns);
	fprintf(fp, ", GPU time %s\n", units_time(b1, sizeof(b1), r->tot.gpu_time_ns));
	fprintf(fp, "%swork    %" PRId64 " kernels, %" PRId64 " memcpy/memset, %" PRId64
		" op calls, %" PRId64 " unlinked", pfx, r->tot.kernels, r->tot.memops, r->tot.ops,
		r->tot.unlinked);
	if (r->tot.steps)
		fprintf(fp, ", %" PRId64 " steps", r->tot.steps);
	fputc('\n', fp);
	fprintf(fp, "%sflops   %s FLOP total (modelled), %s bytes compulsory\n", pfx,
		units_count(b1, sizeof(b1), (double)r->tot.flops),
		units_count(b2, sizeof(b2), (double)r->tot.bytes));
	if (t->ngpu == 0)
		fprintf(fp, "%snote    the trace holds no GPU events (kernels, memcpy, memset): the GPU table is empty\n", pfx);
}

/* The measured table of cuda_profiler_range records (see kp_mrow). */
static void measured_table(const struct kp_report *r, struct kp_table *tb)
{
	table_init(tb);
	int c_calls = table_add_col(tb, "Calls", "calls", COL_BOTH, 0);
	int c64 = table_add_col(tb, "FP64 GFLOP", "flops_fp64", COL_BOTH, 0);
	int c32 = table_add_col(tb, "FP32 GFLOP", "flops_fp32", COL_BOTH, 0);
	int c16 = table_add_col(tb, "FP16 GFLOP", "flops_fp16", COL_BOTH, 0);
	int c_name = table_add_col(tb, "Kernel (measured)", "name", COL_BOTH, 1);
	char b[64];
	for (size_t i = 0; i < r->nmrows; i++) {
		const struct kp_mrow *m = &r->mrows[i];
		struct kp_cell *c = table_add_row(tb);
		cell_int(tb, &c[c_calls], m->calls, NULL);
		int cols[3] = { c64, c32, c16 };
		for (int k = 0; k < 3; k++) {
			if (m->flops[k] >= 0)
				cell_int(tb, &c[cols[k]], m->flops[k],
					 units_fixed(b, sizeof(b), (double)m->flops[k], 1e9, 3));
			else
				cell_num(tb, &c[cols[k]], -1, "-");
		}
		cell_str(tb, &c[c_name], m->name, analyze_short_name(&tb->arena, m->name));
	}
}

static void measured_section(const struct kp_report *r, FILE *fp, int markdown)
{
	if (!r->nmrows)
		return;
	struct kp_table tb;
	measured_table(r, &tb);
	fprintf(fp, "%s%zu cuda_profiler_range records (CUPTI range profiler): FLOPs from SASS FP instruction counts (add + mul + 2 x fma; tensor-core instructions not counted); their durations are profiler spacing, not kernel time\n",
		markdown ? "\n    " : "# measured  ", r->trace->nranges);
	if (markdown)
		fputc('\n', fp);
	table_render(&tb, markdown ? FMT_MARKDOWN : FMT_TABLE, fp);
	table_free(&tb);
}

static void json_warnings(const struct kp_warnings *w, FILE *fp, int *first)
{
	for (int i = 0; i < w->nkinds; i++) {
		const struct kp_warn_kind *k = &w->k[i];
		for (int j = 0; j < k->nshown; j++) {
			fputs(*first ? "\n    " : ",\n    ", fp);
			*first = 0;
			json_put_str(fp, k->shown[j]);
		}
		if (k->count > k->nshown) {
			char buf[512];
			snprintf(buf, sizeof(buf), "warning: skipped %ld more %s", k->count - k->nshown,
				 k->kind);
			fputs(*first ? "\n    " : ",\n    ", fp);
			*first = 0;
			json_put_str(fp, buf);
		}
	}
}

void render_report(const struct kp_report *r, const struct kp_render_opts *o, FILE *fp)
{
	struct kp_table tb;
	render_report_table(r, o, &tb);
	switch (o->format) {
	case FMT_CSV:
		table_render(&tb, FMT_CSV, fp);
		break;
	case FMT_JSON: {
		const struct kp_trace *t = r->trace;
		fprintf(fp, "{\n  \"kprof\": {\"version\": \"%s\", \"command\": \"analyze\"},\n", KPROF_VERSION);
		fputs("  \"input\": ", fp);
		json_put_str(fp, t->display);
		fprintf(fp, ",\n  \"truncated\": %s,\n", t->truncated ? "true" : "false");
		fputs("  \"group_by\": ", fp);
		json_put_str(fp, r->group == GROUP_KERNEL ? "kernel" : r->group == GROUP_OP ? "op" : "op-shape");
		fputs(",\n  \"device\": {\"name\": ", fp);
		json_put_str(fp, r->device_name);
		fputs(", \"matched\": ", fp);
		json_put_str(fp, r->dev ? r->dev->name : NULL);
		fputs(", \"match\": ", fp);
		json_put_str(fp, r->dev ? r->match : NULL);
		fputs(", \"sm_clock_mhz\": ", fp);
		if (r->clock_source == CLOCK_DATASHEET)
			fputs("null", fp);
		else
			json_put_num(fp, r->sm_clock_mhz);
		fputs(", \"clock_source\": ", fp);
		json_put_str(fp, clock_source_name(r->clock_source));
		fputs(", \"peak_dram_bytes_per_s\": ", fp);
		json_put_num(fp, r->dev ? devdb_peak_bw(r->dev, 0) : -1.0 / 0.0);
		fputs("},\n", fp);
		fprintf(fp, "  \"totals\": {\"span_ns\": %" PRId64 ", \"gpu_busy_ns\": %" PRId64
			", \"gpu_time_ns\": %" PRId64 ", \"kernels\": %" PRId64 ", \"memops\": %" PRId64
			", \"ops\": %" PRId64 ", \"unlinked\": %" PRId64 ", \"steps\": %" PRId64 ", \"flops\": ",
			r->tot.span_ns, r->tot.gpu_busy_ns, r->tot.gpu_time_ns, r->tot.kernels,
			r->tot.memops, r->tot.ops, r->tot.unlinked, r->tot.steps);
		if (r->tot.flops >= 0)
			json_put_i64(fp, r->tot.flops);
		else
			fputs("null", fp);
		fputs(", \"bytes\": ", fp);
		if (r->tot.bytes >= 0)
			json_put_i64(fp, r->tot.bytes);
		else
			fputs("null", fp);
		fputs("},\n  \"rows\": ", fp);
		table_render(&tb, FMT_JSON, fp);
		if (r->nmrows) {
			struct kp_table mt;
			measured_table(r, &mt);
			fputs(",\n  \"measured\": ", fp);
			table_render(&mt, FMT_JSON, fp);
			table_free(&mt);
		}
		fputs(",\n  \"warnings\": [", fp);
		int first = 1;
		json_warnings(&t->warn, fp, &first);
		json_warnings(&r->warn, fp, &first);
		fputs(first ? "]\n}\n" : "\n  ]\n}\n", fp);
		break;
	}
	case FMT_MARKDOWN:
		header_lines(r, fp, "    ");
		fputc('\n', fp);
		table_render(&tb, FMT_MARKDOWN, fp);
		measured_section(r, fp, 1);
		break;
	default:
		header_lines(r, fp, "# ");
		if (r->nrows)
			table_render(&tb, FMT_TABLE, fp);
		measured_section(r, fp, 0);
		break;
	}
	table_free(&tb);
}
