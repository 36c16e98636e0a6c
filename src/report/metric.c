/*
 * metric.c — the figures of an analysis row, one entry each (metric.h): readers, the cell
 * writers of the few figures that need their own, and the table.
 */
#include "kprof/metric.h"

#include <string.h>

#include "kprof/kernrole.h"
#include "kprof/units.h"

/* ---- readers ---- */

/* clang-format off */
static int64_t time_ns(const struct kp_row *r) { return r->time_ns; }
static int64_t calls(const struct kp_row *r) { return r->calls; }
/* per call, each: a call's GPU time sums its events in the row (analyze.c, add_event) */
static int64_t avg_ns(const struct kp_row *r) { return r->calls ? r->time_ns / r->calls : 0; }
static double avg_exact(const struct kp_row *r)
{
	return r->calls ? (double)r->time_ns / r->calls : 0;
}
static int64_t med_ns(const struct kp_row *r) { return r->med_ns; }
static int64_t min_ns(const struct kp_row *r) { return r->min_ns; }
static int64_t max_ns(const struct kp_row *r) { return r->max_ns; }
static int64_t flops(const struct kp_row *r) { return r->flops; }
static int64_t bytes(const struct kp_row *r) { return r->bytes; }
static double time_pct(const struct kp_row *r) { return r->time_pct; }
static double flops_per_s(const struct kp_row *r) { return r->flops_per_s; }
static double bytes_per_s(const struct kp_row *r) { return r->bytes_per_s; }
static double mflops_per_s(const struct kp_row *r) { return r->mflops_per_s; }
static double mratio_flops(const struct kp_row *r) { return r->mratio_flops; }
static double mbytes_per_s(const struct kp_row *r) { return r->mbytes_per_s; }
static double mratio_bytes(const struct kp_row *r) { return r->mratio_bytes; }
static double pct_peak_flops(const struct kp_row *r) { return r->pct_peak_flops; }
static double pct_peak_bw(const struct kp_row *r) { return r->pct_peak_bw; }
static double intensity(const struct kp_row *r) { return r->intensity; }
static const char *bound(const struct kp_row *r) { return r->bound; }
static const char *dtype(const struct kp_row *r) { return r->dtype; }
static const char *prec(const struct kp_row *r) { return r->prec; }
static const char *shape(const struct kp_row *r) { return r->shape; }
static const char *op(const struct kp_row *r) { return r->op; }
static const char *name(const struct kp_row *r) { return r->name; }
/* clang-format on */

/* ---- cell writers of their own ---- */

/* a FLOP peak applies only to rows with modelled FLOPs; csv/json keep the row's prec */
static void prec_cell(struct kp_table *tb, struct kp_cell *c, const struct kp_row *row,
		      const struct kp_metric_ctx *x)
{
	(void)x;
	const char *shown = row->flops_per_s >= 0 ? row->prec : NULL;
	doc_cell_str(tb, c, row->prec, shown ? shown : "-");
}

static void flags_text(unsigned f, char *buf, size_t cap)
{
	buf[0] = '\0';
	if (f & ROW_OVER_PEAK)
		strncat(buf, f & ROW_FITS_L2 ? "over-peak,fits-L2" : "over-peak", cap - 1);
	else if (f & ROW_VERIFY)
		strncat(buf, "verify", cap - 1);
	if (f & ROW_UNLINKED)
		strncat(buf, buf[0] ? ",unlinked" : "unlinked", cap - strlen(buf) - 1);
	if (f & ROW_MEASURED)
		strncat(buf, buf[0] ? ",measured" : "measured", cap - strlen(buf) - 1);
}

/* the row's flags, over-peak ones in the warning tone */
static void flags_cell(struct kp_table *tb, struct kp_cell *c, const struct kp_row *row,
		       const struct kp_metric_ctx *x)
{
	(void)x;
	char b[128];
	flags_text(row->flags & ~ROW_UNLINKED, b, sizeof(b));
	if (b[0])
		doc_cell_str(tb, c, arena_strdup(tb->arena, b), NULL);
	else
		doc_cell_str(tb, c, NULL, "-");
	if (row->flags & ROW_OVER_PEAK)
		c->tone = TONE_WARN;
}

/* kernel names shortened unless --name=full */
static void name_cell(struct kp_table *tb, struct kp_cell *c, const struct kp_row *row,
		      const struct kp_metric_ctx *x)
{
	const char *shown = row->name;
	if (x->short_names)
		shown = kernrole_short_name(tb->arena, row->name);
	doc_cell_str(tb, c, row->name, shown);
}

/* ---- the table ---- */

#define TIME(k, at, t, j, w, rd) .sort = k, .sort_at = at, .col = { t, j, w, 0 }, \
	.form = MF_TIME, .unit = "ns", .count = rd
#define FIXED(k, at, t, j, w, rd, u, s, d) .sort = k, .sort_at = at, .col = { t, j, w, 0 }, \
	.form = MF_FIXED, .unit = u, .scale = s, .decimals = d, .num = rd
#define TEXT(k, at, t, j, w, rd, n) .sort = k, .sort_at = at, .col = { t, j, w, 1 }, \
	.form = MF_TEXT, .text = rd, .none = n

/* clang-format off */
const struct kp_metric metric_table[METRIC_N] = {
	[METRIC_TIME]      = { TIME("time", 1, "Time", "time_ns", COL_BOTH, time_ns) },
	[METRIC_PCT]       = { FIXED(NULL, 0, "Time%", "time_pct", COL_BOTH, time_pct, "%", 1, 1) },
	[METRIC_CALLS]     = { .sort = "calls", .sort_at = 2, .col = { "Calls", "calls", COL_BOTH, 0 },
			       .form = MF_COUNT, .count = calls },
	[METRIC_AVG]       = { TIME("avg", 3, "Avg/call", "avg_call_ns", COL_BOTH, avg_ns),
			       .num = avg_exact, .per_call = 1 },
	/* --stats: both */
	[METRIC_MED]       = { TIME("med", 6, "Med/call", "med_call_ns", COL_MACHINE, med_ns), .per_call = 1 },
	[METRIC_MIN]       = { TIME("min", 4, "Min/call", "min_call_ns", COL_MACHINE, min_ns), .per_call = 1 },
	[METRIC_MAX]       = { TIME("max", 5, "Max/call", "max_call_ns", COL_MACHINE, max_ns), .per_call = 1 },
	[METRIC_FLOPS]     = { .sort = "flops", .sort_at = 11, .col = { "GFLOP", "flops", COL_MACHINE, 0 },
			       .form = MF_COUNT, .unit = "FLOP", .count = flops },
	[METRIC_BYTES]     = { .sort = "bytes", .sort_at = 12, .col = { "MB", "bytes", COL_MACHINE, 0 },
			       .form = MF_COUNT, .unit = "B", .count = bytes },
	[METRIC_TFLOPS]    = { FIXED("tflops", 7, "TFLOP/s", "flops_per_s", COL_BOTH, flops_per_s, "FLOP/s", 1e12, 1) },
	[METRIC_GBPS]      = { FIXED("gbps", 8, "GB/s", "bytes_per_s", COL_BOTH, bytes_per_s, "B/s", 1e9, 1) },
	/* kprof capture --metrics: shown only when a row has measured counters */
	[METRIC_MTFLOPS]   = { FIXED(NULL, 0, "mTFLOP/s", "measured_flops_per_s", 0, mflops_per_s, "FLOP/s", 1e12, 1) },
	[METRIC_MFRATIO]   = { FIXED(NULL, 0, "mFLOP/FLOP", "measured_flops_ratio", 0, mratio_flops, NULL, 1, 3) },
	[METRIC_MGBPS]     = { FIXED(NULL, 0, "mGB/s", "measured_bytes_per_s", 0, mbytes_per_s, "B/s", 1e9, 1) },
	[METRIC_MBRATIO]   = { FIXED(NULL, 0, "mB/B", "measured_bytes_ratio", 0, mratio_bytes, NULL, 1, 3) },
	[METRIC_PCT_PEAK]  = { FIXED("pct-peak", 9, "%Peak", "pct_peak_flops", COL_BOTH, pct_peak_flops, "%", 1, 1),
			       .warn_above = 100 },
	[METRIC_PCT_BW]    = { FIXED("pct-bw", 10, "%BW", "pct_peak_bw", COL_BOTH, pct_peak_bw, "%", 1, 1),
			       .warn_above = 100 },
	[METRIC_INTENSITY] = { FIXED("intensity", 13, "FLOP/B", "intensity", COL_BOTH, intensity, "FLOP/B", 1, 1) },
	[METRIC_BOUND]     = { TEXT(NULL, 0, "Bound", "bound", COL_BOTH, bound, "-") },
	/* both when a Prec differs */
	[METRIC_DTYPE]     = { TEXT(NULL, 0, "Dtype", "dtype", COL_MACHINE, dtype, "-") },
	[METRIC_PREC]      = { TEXT(NULL, 0, "Prec", "prec", COL_BOTH, prec, "-"), .cell = prec_cell },
	[METRIC_FLAGS]     = { TEXT(NULL, 0, "Flags", "flags", COL_BOTH, NULL, "-"), .cell = flags_cell },
	/* op-shape rows: both */
	[METRIC_SHAPE]     = { TEXT(NULL, 0, "Shape", "shape", COL_MACHINE, shape, "-") },
	/* kernel rows: both */
	[METRIC_OP]        = { TEXT("op", 15, "Op", "op", COL_MACHINE, op, "(several)") },
	/* -g module / -g source: csv/json (the name column's value under its own key) */
	[METRIC_MODULE]    = { TEXT(NULL, 0, "Module", "module", 0, name, NULL) },
	[METRIC_SOURCE]    = { TEXT(NULL, 0, "Source", "source", 0, name, NULL) },
	/* op rows: "Op", annotation rows: "Annotation", module and source rows likewise */
	[METRIC_NAME]      = { TEXT("name", 14, "Kernel", "name", COL_BOTH, name, NULL), .cell = name_cell },
};
/* clang-format on */

double metric_num(const struct kp_row *row, enum kp_metric_id id)
{
	const struct kp_metric *m = &metric_table[id];
	if (m->num)
		return m->num(row);
	return m->count ? (double)m->count(row) : 0;
}

const char *metric_text(const struct kp_row *row, enum kp_metric_id id)
{
	const struct kp_metric *m = &metric_table[id];
	if (!m->text)
		return NULL;
	const char *s = m->text(row);
	return s ? s : "";
}

void metric_cell(struct kp_table *tb, struct kp_cell *c, const struct kp_row *row,
		 enum kp_metric_id id, const struct kp_metric_ctx *x)
{
	const struct kp_metric *m = &metric_table[id];
	char b[128];
	if (m->per_call && row->flags & ROW_OTHERS) {
		doc_cell_num(tb, c, -1, "-");
		return;
	}
	if (m->cell) {
		m->cell(tb, c, row, x);
		return;
	}
	switch (m->form) {
	case MF_TIME: {
		int64_t v = m->count(row);
		doc_cell_int(tb, c, v, units_time(b, sizeof(b), v));
		break;
	}
	case MF_COUNT:
		if (m->count(row) >= 0)
			doc_cell_int(tb, c, m->count(row), NULL);
		break;
	case MF_FIXED:
		doc_cell_fixed(tb, c, m->num(row), m->scale, m->decimals);
		break;
	case MF_TEXT: {
		const char *s = m->text(row);
		doc_cell_str(tb, c, s, s ? NULL : m->none);
		break;
	}
	}
	if (m->warn_above && row->flags & ROW_OVER_PEAK)
		c->tone = metric_num(row, id) > m->warn_above ? TONE_WARN : TONE_NONE;
}

int metric_by_sort_key(const char *key)
{
	for (int i = 0; i < METRIC_N; i++)
		if (metric_table[i].sort && !strcmp(metric_table[i].sort, key))
			return i;
	return -1;
}

int metric_sort_key_at(int at)
{
	for (int i = 0; at >= 0 && i < METRIC_N; i++)
		if (metric_table[i].sort && metric_table[i].sort_at == at + 1)
			return i;
	return -1;
}
