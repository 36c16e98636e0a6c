/*
 * charts.c — chart data for the html and svg formats: what to draw, already aggregated
 * (points binned, timeline bucketed, lanes and bars capped), so a page stays small.
 */
#include "kprof/charts.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kprof/dtype.h"
#include "kprof/hmap.h"
#include "kprof/kernrole.h"
#include "kprof/metric.h"
#include "kprof/units.h"
#include "kprof/utf8.h"

/* in legend order; colour i is family i in every chart */
static const char *const families[] = {
	"gemm",   "conv", "attention", "norm",          "pointwise",
	"reduce", "copy", "comm",      "memcpy/memset", "other",
};
#define NFAM (int)(sizeof(families) / sizeof(families[0]))

/* clang-format off */
static const struct {
	const char *sub;
	int fam;
} fam_rules[] = {
	{ "nccl", 7 }, { "record_param_comms", 7 }, { "c10d", 7 }, { "allreduce", 7 },
	{ "all_reduce", 7 }, { "all_gather", 7 }, { "allgather", 7 }, { "reduce_scatter", 7 },
	{ "attention", 2 }, { "sdpa", 2 }, { "flash", 2 }, { "fmha", 2 },
	{ "conv", 1 }, { "cudnn::detail::dgrad", 1 }, { "wgrad", 1 },
	{ "::mm", 0 }, { "addmm", 0 }, { "bmm", 0 }, { "matmul", 0 }, { "linear", 0 },
	{ "gemm", 0 },
	{ "_mm", 0 }, { "cutlass", 0 }, { "nvjet", 0 }, { "xmma", 0 }, { "cublas", 0 },
	{ "norm", 3 },
	{ "copy", 6 }, { "cat", 6 }, { "fill", 6 }, { "zero", 6 }, { "index", 6 },
	{ "embedding", 6 },
	{ "gather", 6 }, { "scatter", 6 }, { "clone", 6 }, { "transpose", 6 }, { "permute", 6 },
	{ "contiguous", 6 },
	{ "softmax", 5 }, { "reduce", 5 }, { "sum", 5 }, { "mean", 5 }, { "triton_red", 5 },
	{ "amax", 5 },
	{ "elementwise", 4 }, { "triton_poi", 4 }, { "add", 4 }, { "mul", 4 }, { "relu", 4 },
	{ "gelu", 4 },
	{ "silu", 4 }, { "sigmoid", 4 }, { "tanh", 4 }, { "div", 4 }, { "sub", 4 },
	{ "dropout", 4 },
	{ "where", 4 }, { "pow", 4 }, { "exp", 4 }, { "neg", 4 }, { "sqrt", 4 }, { "clamp", 4 },
};
/* clang-format on */

static int family_index(const char *op, const char *name, int gpu_kind)
{
	if (gpu_kind == GPU_MEMCPY || gpu_kind == GPU_MEMSET)
		return 8;
	const char *s = op ? op : name;
	for (size_t i = 0; s && i < sizeof(fam_rules) / sizeof(fam_rules[0]); i++)
		if (strcasestr(s, fam_rules[i].sub))
			return fam_rules[i].fam;
	return NFAM - 1;
}

const char *charts_family(const char *op, const char *name, int gpu_kind)
{
	return families[family_index(op, name, gpu_kind)];
}

static void all_families(struct kp_chart *ch)
{
	for (int i = 0; i < NFAM; i++)
		chart_series(ch, families[i]);
}

int charts_kind(const char *name)
{
	static const char *const names[] = {
		[CHART_ROOFLINE] = "roofline", [CHART_TOP] = "top",
		[CHART_TIMELINE] = "timeline", [CHART_WATERFALL] = "waterfall",
		[CHART_DUMBBELL] = "dumbbell", [CHART_ICICLE] = "flame",
		[CHART_MEMORY] = "memory",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i] && !strcmp(names[i], name))
			return (int)i;
	/* capture results: "results" (all) or "results-N" (results-charts.c) */
	if (!strncmp(name, "results", 7) &&
	    (!name[7] || (name[7] == '-' && name[8] >= '1' && name[8] <= '9' &&
			  strspn(name + 8, "0123456789") == strlen(name + 8))))
		return CHART_LINES;
	return -1;
}

/* ---- roofline ---- */

static double peak_at_clock(const struct kp_report *r, enum kp_prec p)
{
	const struct kp_peak *pk = &r->dev->peak[p];
	if (r->clock_source == CLOCK_DATASHEET || r->sm_clock_mhz <= 0)
		return pk->flop_per_s;
	return devdb_peak_flops(r->dev, p, r->sm_clock_mhz);
}

static int cmp_row_time(const void *a, const void *b)
{
	const struct kp_row *x = *(const struct kp_row *const *)a,
			    *y = *(const struct kp_row *const *)b;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? 1 : -1;
	return strcmp(x->key ? x->key : x->name, y->key ? y->key : y->name);
}

struct bin {
	double flops, bytes;
	int64_t time_ns, best_ns;
	int n, fam;
};

/* The range of the points' intensities (x) and rates (y). */
struct roof_box {
	double xlo, xhi, ylo, yhi;
};

static int row_family(const struct kp_row *row)
{
	return family_index(row->op ? row->op : row->name, row->name, GPU_KERNEL);
}

/* A roof for each precision that a row with FLOPs uses, at the report's clock. */
static void precision_roofs(struct kp_doc *doc, struct kp_chart *ch, const struct kp_report *r,
			    const struct kp_report *s)
{
	char b[512], b1[64];
	int seen[PREC_N] = { 0 };
	for (size_t i = 0; i < s->nrows; i++)
		if (s->rows[i].prec && s->rows[i].flops > 0) {
			enum kp_prec p = dtype_prec_parse(s->rows[i].prec);
			if (p != PREC_NONE)
				seen[p] = 1;
		}
	for (int p = 0; p < PREC_N; p++) {
		double v = seen[p] ? peak_at_clock(r, p) : 0;
		if (v > 0) {
			snprintf(b, sizeof(b), "%s %s", dtype_prec_name(p),
				 units_rate(b1, sizeof(b1), v, "FLOP/s"));
			chart_mark(doc, ch, v, b);
		}
	}
}

/* The roofs and the note naming the device and its clock. */
static void device_roofs(struct kp_doc *doc, struct kp_chart *ch, const struct kp_report *r,
			 const struct kp_report *s)
{
	char b[512], b1[64];
	if (!r->dev) {
		ch->note = "device not in the device table: no roofs";
		return;
	}
	ch->bw = devdb_peak_bw(r->dev, 0);
	precision_roofs(doc, ch, r, s);
	if (r->clock_source == CLOCK_DATASHEET || r->sm_clock_mhz <= 0)
		snprintf(b, sizeof(b), "%s, peaks at their datasheet clocks, DRAM %s", r->dev->name,
			 units_rate(b1, sizeof(b1), ch->bw, "B/s"));
	else
		snprintf(b, sizeof(b), "%s at %.0f MHz SM clock (%s), DRAM %s", r->dev->name,
			 r->sm_clock_mhz,
			 r->clock_source == CLOCK_TRACE ? "from the trace" : "--sm-clock",
			 units_rate(b1, sizeof(b1), ch->bw, "B/s"));
	ch->note = arena_strdup(&doc->arena, b);
}

/* The roofline's axes: figures of metric.h (x FLOP/byte, y FLOP/s), its weight GPU time. */
#define ROOF_X METRIC_INTENSITY
#define ROOF_Y METRIC_TFLOPS
#define ROOF_W METRIC_TIME

/* The rows with a rate and an intensity, largest first, into @ord; their range into @box. */
static size_t roof_rows(const struct kp_report *s, const struct kp_row **ord, struct roof_box *box)
{
	size_t n = 0;
	*box = (struct roof_box){ INFINITY, 0, INFINITY, 0 };
	for (size_t i = 0; i < s->nrows; i++) {
		const struct kp_row *row = &s->rows[i];
		double x = metric_num(row, ROOF_X), y = metric_num(row, ROOF_Y);
		if (row->flags & ROW_OTHERS || !(y > 0) || !(x > 0))
			continue;
		ord[n++] = row;
		box->xlo = fmin(box->xlo, x);
		box->xhi = fmax(box->xhi, x);
		box->ylo = fmin(box->ylo, y);
		box->yhi = fmax(box->yhi, y);
	}
	qsort(ord, n, sizeof(*ord), cmp_row_time);
	return n;
}

/* One row's point, its numbers in the hover text. */
static void row_point(struct kp_doc *doc, struct kp_chart *ch, const struct kp_row *row)
{
	char b[512], b1[64], b2[64];
	double x = metric_num(row, ROOF_X), y = metric_num(row, ROOF_Y);
	struct kp_visbuf vn = { 0 }, vs = { 0 };
	int len = snprintf(b, sizeof(b), "%s%s%s\n%s GPU time (%.1f%%), %" PRId64 " calls\n%s",
			   utf8_visible(row->name, &vn), row->shape ? " " : "",
			   row->shape ? utf8_visible(row->shape, &vs) : "",
			   units_time(b1, sizeof(b1), row->time_ns), row->time_pct, row->calls,
			   units_rate(b2, sizeof(b2), y, metric_table[ROOF_Y].unit));
	if (row->pct_peak_flops >= 0 && len < (int)sizeof(b))
		len += snprintf(b + len, sizeof(b) - len, " (%.1f%% of %s peak)",
				row->pct_peak_flops, row->prec ? row->prec : "the");
	if (row->bytes_per_s >= 0 && len < (int)sizeof(b))
		len += snprintf(b + len, sizeof(b) - len, ", %s",
				units_rate(b1, sizeof(b1), metric_num(row, METRIC_GBPS),
					   metric_table[METRIC_GBPS].unit));
	if (len < (int)sizeof(b))
		snprintf(b + len, sizeof(b) - len, ", %.1f FLOP/byte%s%s%s", x,
			 row->bound ? ", " : "", row->bound ? row->bound : "",
			 row->bound ? "-bound" : "");
	utf8_visible_free(&vn);
	utf8_visible_free(&vs);
	chart_point(doc, ch, x, y, metric_num(row, ROOF_W), row_family(row), row->name, b);
}

enum { ROOF_GRID = 24 }; /* bins per axis for the small rows */

/* Add @row to its cell of the log-space grid over @box; the cell takes its largest row's family. */
static void bin_row(struct bin *bins, const struct roof_box *box, const struct kp_row *row)
{
	enum { G = ROOF_GRID };
	double lx0 = log10(box->xlo), lx1 = log10(box->xhi) + 1e-9, ly0 = log10(box->ylo),
	       ly1 = log10(box->yhi) + 1e-9;
	double x = metric_num(row, ROOF_X), y = metric_num(row, ROOF_Y);
	int gx = (int)((log10(x) - lx0) / (lx1 - lx0 + 1e-12) * G);
	int gy = (int)((log10(y) - ly0) / (ly1 - ly0 + 1e-12) * G);
	gx = gx < 0 ? 0 : gx >= G ? G - 1 : gx;
	gy = gy < 0 ? 0 : gy >= G ? G - 1 : gy;
	struct bin *c = &bins[gy * G + gx];
	double t = (double)row->time_ns;
	c->flops += y * t;
	c->bytes += y * t / x;
	c->time_ns += row->time_ns;
	if (c->n++ == 0 || row->time_ns > c->best_ns) {
		c->best_ns = row->time_ns;
		c->fam = row_family(row);
	}
}

/* One point per non-empty cell, with its rows' sums. */
static void bin_point(struct kp_doc *doc, struct kp_chart *ch, const struct bin *c)
{
	char b[512], b1[64], b2[64];
	if (!c->n || c->time_ns <= 0 || c->bytes <= 0)
		return;
	snprintf(b, sizeof(b), "%d smaller op shapes binned\n%s GPU time, %s, %.1f FLOP/byte", c->n,
		 units_time(b1, sizeof(b1), c->time_ns),
		 units_rate(b2, sizeof(b2), c->flops / (double)c->time_ns, "FLOP/s"),
		 c->flops / c->bytes);
	chart_point(doc, ch, c->flops / c->bytes, c->flops / (double)c->time_ns, (double)c->time_ns,
		    c->fam, "(binned)", b);
}

/* The rows after the first CHARTS_ROOF_POINTS of @ord, binned in log space; said in the note. */
static void bin_small_rows(struct kp_doc *doc, struct kp_chart *ch, const struct kp_row **ord,
			   size_t n, const struct roof_box *box)
{
	char b[512];
	struct bin *bins = xcalloc(ROOF_GRID * ROOF_GRID, sizeof(*bins));
	for (size_t i = CHARTS_ROOF_POINTS; i < n; i++)
		bin_row(bins, box, ord[i]);
	for (int k = 0; k < ROOF_GRID * ROOF_GRID; k++)
		bin_point(doc, ch, &bins[k]);
	free(bins);
	snprintf(b, sizeof(b),
		 "%s; the %d op shapes with most GPU time drawn one by one, %zu smaller ones binned",
		 ch->note, CHARTS_ROOF_POINTS, n - CHARTS_ROOF_POINTS);
	ch->note = arena_strdup(&doc->arena, b);
}

static void roofline(struct kp_doc *doc, const struct kp_report *r, const struct kp_report *s)
{
	struct kp_chart *ch = doc_chart(
		doc, "roofline", CHART_ROOFLINE, "roofline",
		"Roofline: achieved FLOP/s against arithmetic intensity, one point per op and shape");
	all_families(ch);
	device_roofs(doc, ch, r, s);
	const struct kp_row **ord = xcalloc(s->nrows + 1, sizeof(*ord));
	struct roof_box box;
	size_t n = roof_rows(s, ord, &box);
	for (size_t i = 0; i < n && i < CHARTS_ROOF_POINTS; i++)
		row_point(doc, ch, ord[i]);
	if (n > CHARTS_ROOF_POINTS)
		bin_small_rows(doc, ch, ord, n, &box);
	free(ord);
}

/* ---- top ops split into kernels ---- */

struct opk {
	const char *op, *kernel;
	int64_t ns;
	int fam;
};

static int cmp_opk_name(const void *a, const void *b)
{
	const struct opk *x = a, *y = b;
	int c = strcmp(x->op, y->op);
	return c ? c : strcmp(x->kernel, y->kernel);
}

struct opsum {
	size_t first, n; /* range of opk records */
	int64_t ns;
};

static int cmp_opsum(const void *a, const void *b, void *arg)
{
	const struct opsum *x = a, *y = b;
	const struct opk *k = arg;
	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	return strcmp(k[x->first].op, k[y->first].op);
}

static int cmp_opk_time(const void *a, const void *b)
{
	const struct opk *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	return strcmp(x->kernel, y->kernel);
}

static void top_ops(struct kp_doc *doc, const struct kp_report *r)
{
	const struct kp_trace *t = r->trace;
	struct kp_chart *ch = doc_chart(doc, "top", CHART_TOP, "top",
					   "Top ops by GPU time, split into their kernels");
	all_families(ch);
	ch->note =
		"each bar is one op (all its calls), each segment one kernel it launched; unlinked GPU work is one bar";
	struct opk *k = xcalloc(t->ngpu + 1, sizeof(*k));
	for (size_t i = 0; i < t->ngpu; i++) {
		const struct kp_gpu *g = &t->gpu[i];
		const char *op = g->op >= 0 ? t->ops[g->op].name : NULL;
		k[i] = (struct opk){ .op = op ? op : "(unlinked)",
				     .kernel = g->name ? g->name : "?",
				     .ns = g->dur_ns,
				     .fam = family_index(op, g->name, g->kind) };
	}
	qsort(k, t->ngpu, sizeof(*k), cmp_opk_name);
	/* merge equal (op, kernel) records, then one opsum per op */
	size_t m = 0;
	for (size_t i = 0; i < t->ngpu; i++) {
		if (m && !strcmp(k[m - 1].op, k[i].op) && !strcmp(k[m - 1].kernel, k[i].kernel)) {
			k[m - 1].ns += k[i].ns;
			continue;
		}
		k[m++] = k[i];
	}
	struct opsum *ops = xcalloc(m + 1, sizeof(*ops));
	size_t nops = 0;
	for (size_t i = 0; i < m; i++) {
		if (!nops || strcmp(k[ops[nops - 1].first].op, k[i].op))
			ops[nops++] = (struct opsum){ .first = i };
		ops[nops - 1].n++;
		ops[nops - 1].ns += k[i].ns;
	}
	qsort_r(ops, nops, sizeof(*ops), cmp_opsum, k);
	char b[128];
	for (size_t i = 0; i < nops && i < CHARTS_TOP_OPS; i++) {
		struct opk *ks = &k[ops[i].first];
		qsort(ks, ops[i].n, sizeof(*ks), cmp_opk_time);
		int lane = chart_lane(doc, ch, ks[0].op);
		int64_t at = 0;
		for (size_t j = 0; j < ops[i].n; j++) {
			if (j == CHARTS_TOP_KERNELS && ops[i].n > CHARTS_TOP_KERNELS + 1) {
				snprintf(b, sizeof(b), "(%zu other kernels)", ops[i].n - j);
				chart_span(doc, ch, lane, ks[0].fam, at, at + (ops[i].ns - at), 1,
					   b);
				break;
			}
			chart_span(doc, ch, lane, ks[j].fam, at, at + ks[j].ns, 1,
				   kernrole_short_name(&doc->arena, ks[j].kernel));
			at += ks[j].ns;
		}
	}
	free(ops);
	free(k);
}

/* ---- GPU timeline ---- */

struct lanekey {
	int64_t device, stream;
};

static int cmp_lanekey(const void *a, const void *b)
{
	const struct lanekey *x = a, *y = b;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return (x->stream > y->stream) - (x->stream < y->stream);
}

/* The timeline's lanes and buckets. */
struct tl {
	const struct kp_trace *t;
	int64_t t0, t1;     /* first start, last end of GPU work */
	struct lanekey *lk; /* the distinct streams, by device and stream */
	size_t nl, shown;   /* streams; lanes drawn (the last one shared past CHARTS_LANES) */
	int64_t bw;         /* bucket width, ns */
	int nb;             /* buckets per lane */
	double *acc;        /* busy ns per lane, bucket and family */
};

/*
 * The GPU span (GPU events with a duration, as the report's header and breakdown.c count it)
 * and the distinct streams, sorted.
 */
static void timeline_streams(struct tl *x)
{
	const struct kp_trace *t = x->t;
	x->t0 = INT64_MAX, x->t1 = INT64_MIN;
	x->lk = xcalloc(t->ngpu, sizeof(*x->lk));
	for (size_t i = 0; i < t->ngpu; i++) {
		const struct kp_gpu *g = &t->gpu[i];
		if (g->dur_ns > 0) {
			x->t0 = g->ts_ns < x->t0 ? g->ts_ns : x->t0;
			x->t1 = g->ts_ns + g->dur_ns > x->t1 ? g->ts_ns + g->dur_ns : x->t1;
		}
		x->lk[i] = (struct lanekey){ g->device, g->stream };
	}
	if (x->t0 == INT64_MAX) /* no event with a duration: an empty span at the first one */
		x->t0 = x->t1 = t->gpu[0].ts_ns;
	qsort(x->lk, t->ngpu, sizeof(*x->lk), cmp_lanekey);
	x->nl = 0;
	for (size_t i = 0; i < t->ngpu; i++)
		if (!x->nl || cmp_lanekey(&x->lk[x->nl - 1], &x->lk[i]))
			x->lk[x->nl++] = x->lk[i];
	x->shown = x->nl > CHARTS_LANES ? CHARTS_LANES : x->nl;
}

/* A lane per stream, the last one "N more streams" when they do not fit. */
static void timeline_lanes(struct kp_doc *doc, struct kp_chart *ch, const struct tl *x)
{
	char b[128];
	for (size_t l = 0; l < x->shown; l++) {
		if (l == CHARTS_LANES - 1 && x->nl > CHARTS_LANES)
			snprintf(b, sizeof(b), "%zu more streams", x->nl - l);
		else
			snprintf(b, sizeof(b), "GPU %" PRId64 " s%" PRId64, x->lk[l].device,
				 x->lk[l].stream);
		chart_lane(doc, ch, b);
	}
}

/* The busy time of each GPU event, by lane, bucket and family, into x->acc. */
static void bucket_busy_time(struct tl *x)
{
	const struct kp_trace *t = x->t;
	int64_t bw = x->bw;
	x->acc = xcalloc(x->shown * (size_t)x->nb * NFAM, sizeof(*x->acc));
	for (size_t i = 0; i < t->ngpu; i++) {
		const struct kp_gpu *g = &t->gpu[i];
		struct lanekey key = { g->device, g->stream };
		struct lanekey *f = bsearch(&key, x->lk, x->nl, sizeof(*x->lk), cmp_lanekey);
		size_t l = (size_t)(f - x->lk);
		if (l >= x->shown)
			l = x->shown - 1;
		int fam = family_index(g->op >= 0 ? t->ops[g->op].name : NULL, g->name, g->kind);
		int64_t a = g->ts_ns - x->t0, e = a + g->dur_ns;
		for (int64_t k = a / bw; k < x->nb && k * bw < e; k++) {
			int64_t lo = k * bw > a ? k * bw : a,
				hi = (k + 1) * bw < e ? (k + 1) * bw : e;
			if (hi > lo)
				x->acc[(l * (size_t)x->nb + (size_t)k) * NFAM + (size_t)fam] +=
					(double)(hi - lo);
		}
	}
}

/* Bucket @c's main family (-1: idle), its busy share in quarters into *@fill. */
static int bucket_family(const double *c, int64_t bw, double *fill)
{
	int fam = -1;
	double best = 0, sum = 0;
	for (int f = 0; f < NFAM; f++) {
		sum += c[f];
		if (c[f] > best) {
			best = c[f];
			fam = f;
		}
	}
	/* busy share in quarters, so runs merge; streams overlapping themselves cap at 1 */
	*fill = ceil(fmin(sum / (double)bw, 1) * 4) / 4;
	return fam;
}

/* Lane @l's buckets as runs of one family and shade, one span each. */
static void lane_spans(struct kp_doc *doc, struct kp_chart *ch, const struct tl *x, size_t l)
{
	int cur = -1;
	double curfill = 0;
	int64_t start = 0;
	for (int k = 0; k <= x->nb; k++) {
		int fam = -1;
		double fill = 0;
		if (k < x->nb)
			fam = bucket_family(&x->acc[(l * (size_t)x->nb + (size_t)k) * NFAM], x->bw,
					    &fill);
		if (fam == cur && fill == curfill)
			continue;
		if (cur >= 0)
			chart_span(doc, ch, (int)l, cur, start, (int64_t)k * x->bw, curfill,
				   ch->lanes[l]);
		cur = fam;
		curfill = fill;
		start = (int64_t)k * x->bw;
	}
}

/* ProfilerStep starts inside the span, at most about CHARTS_MARKS of them. */
static void step_marks(struct kp_doc *doc, struct kp_chart *ch, const struct tl *x)
{
	const struct kp_trace *t = x->t;
	char b[128];
	size_t nin = 0;
	for (size_t i = 0; i < t->nsteps; i++)
		nin += t->steps[i].ts_ns >= x->t0 && t->steps[i].ts_ns <= x->t1;
	size_t every = nin > CHARTS_MARKS ? (nin + CHARTS_MARKS - 1) / CHARTS_MARKS : 1, seen = 0;
	for (size_t i = 0; i < t->nsteps; i++) {
		const struct kp_step *s = &t->steps[i];
		if (s->ts_ns < x->t0 || s->ts_ns > x->t1 || seen++ % every)
			continue;
		snprintf(b, sizeof(b), "step %" PRId64, s->num);
		chart_mark(doc, ch, (double)(s->ts_ns - x->t0), b);
	}
}

static void timeline(struct kp_doc *doc, const struct kp_report *r)
{
	const struct kp_trace *t = r->trace;
	struct kp_chart *ch =
		doc_chart(doc, "timeline", CHART_TIMELINE, "timeline",
			     "GPU timeline: busy time per stream, coloured by op family");
	all_families(ch);
	if (!t->ngpu)
		return;
	struct tl x = { .t = t };
	timeline_streams(&x);
	timeline_lanes(doc, ch, &x);
	ch->x1 = x.t1 - x.t0 > 0 ? x.t1 - x.t0 : 1;
	x.bw = (ch->x1 + CHARTS_BUCKETS - 1) / CHARTS_BUCKETS;
	if (x.bw < 1)
		x.bw = 1;
	x.nb = (int)((ch->x1 + x.bw - 1) / x.bw);
	bucket_busy_time(&x);
	for (size_t l = 0; l < x.shown; l++)
		lane_spans(doc, ch, &x, l);
	free(x.acc);
	free(x.lk);
	step_marks(doc, ch, &x);
	char b[128], b1[32];
	snprintf(b, sizeof(b),
		 "%zu %s, %s GPU span in %d buckets of %s; a bucket shows its main family, its shade how busy it was",
		 x.nl, units_plural((int64_t)x.nl, "stream", "streams"),
		 units_time(b1, sizeof(b1), ch->x1), x.nb, units_time((char[32]){ 0 }, 32, x.bw));
	ch->note = arena_strdup(&doc->arena, b);
}

void charts_analyze(struct kp_doc *doc, const struct kp_report *r, const struct kp_report *shapes,
		    unsigned which)
{
	if (which & CHART_BIT(CHART_ROOFLINE))
		roofline(doc, r, shapes ? shapes : r);
	if (which & CHART_BIT(CHART_TOP))
		top_ops(doc, r);
	if (which & CHART_BIT(CHART_TIMELINE))
		timeline(doc, r);
}

/* ---- diff ---- */

static int cmp_drow_absdelta(const void *a, const void *b)
{
	const struct kp_diff_row *x = *(const struct kp_diff_row *const *)a,
				 *y = *(const struct kp_diff_row *const *)b;
	int64_t ax = x->delta_ns < 0 ? -x->delta_ns : x->delta_ns,
		ay = y->delta_ns < 0 ? -y->delta_ns : y->delta_ns;
	if (ax != ay)
		return ax < ay ? 1 : -1;
	return strcmp(x->key, y->key);
}

static int cmp_drow_size(const void *a, const void *b)
{
	const struct kp_diff_row *x = *(const struct kp_diff_row *const *)a,
				 *y = *(const struct kp_diff_row *const *)b;
	int64_t ax = x->base_ns > x->new_ns ? x->base_ns : x->new_ns;
	int64_t ay = y->base_ns > y->new_ns ? y->base_ns : y->new_ns;
	if (ax != ay)
		return ax < ay ? 1 : -1;
	return strcmp(x->key, y->key);
}

static void waterfall(struct kp_doc *doc, const struct kp_diff *d)
{
	const char *per = d->opts.per_step ? " per step" : "";
	char b[256], b1[32], b2[32];
	struct kp_visbuf vn = { 0 };
	snprintf(b, sizeof(b), "GPU time%s: base total, the largest changes, new total", per);
	struct kp_chart *ch = doc_chart(doc, "waterfall", CHART_WATERFALL, "waterfall",
					   arena_strdup(&doc->arena, b));
	chart_series(ch, "total");
	chart_series(ch, "slower");
	chart_series(ch, "faster");
	const struct kp_diff_row **ord = xcalloc(d->nrows + 1, sizeof(*ord));
	size_t n = 0;
	for (size_t i = 0; i < d->nrows; i++)
		if (d->rows[i].status != DIFF_OTHERS && d->rows[i].delta_ns)
			ord[n++] = &d->rows[i];
	qsort(ord, n, sizeof(*ord), cmp_drow_absdelta);
	chart_point(doc, ch, (double)d->sum.base_ns, 0, 0, 0, "base total", NULL);
	int64_t shown = 0;
	for (size_t i = 0; i < n && i < CHARTS_DELTAS; i++) {
		const struct kp_diff_row *r = ord[i];
		snprintf(b, sizeof(b), "%s\n%s -> %s (%s%s)", utf8_visible(r->name, &vn),
			 units_time(b1, sizeof(b1), r->base_ns),
			 units_time(b2, sizeof(b2), r->new_ns), r->delta_ns > 0 ? "+" : "",
			 units_time((char[32]){ 0 }, 32, r->delta_ns));
		chart_point(doc, ch, (double)r->delta_ns, 0, 0, r->delta_ns > 0 ? 1 : 2, r->name,
			    b);
		shown += r->delta_ns;
	}
	int64_t rest = d->sum.delta_ns - shown;
	if (rest) {
		snprintf(b, sizeof(b), "%zu other rows", n > CHARTS_DELTAS ? n - CHARTS_DELTAS : 0);
		chart_point(doc, ch, (double)rest, 0, 0, rest > 0 ? 1 : 2, b, NULL);
	}
	chart_point(doc, ch, (double)d->sum.new_ns, 0, 0, 0, "new total", NULL);
	utf8_visible_free(&vn);
	free(ord);
}

static void dumbbell(struct kp_doc *doc, const struct kp_diff *d)
{
	struct kp_chart *ch = doc_chart(doc, "dumbbell", CHART_DUMBBELL, "dumbbell",
					   "Achieved TFLOP/s of paired rows, base vs new");
	ch->note = "rows with modelled FLOPs on both sides, largest GPU time first";
	const struct kp_diff_row **ord = xcalloc(d->nrows + 1, sizeof(*ord));
	size_t n = 0;
	for (size_t i = 0; i < d->nrows; i++) {
		const struct kp_diff_row *r = &d->rows[i];
		if (r->has_base && r->has_new && r->base_flops_per_s > 0 &&
		    r->new_flops_per_s > 0 && r->status != DIFF_OTHERS)
			ord[n++] = r;
	}
	qsort(ord, n, sizeof(*ord), cmp_drow_size);
	for (size_t i = 0; i < n && i < CHARTS_PAIRS; i++)
		chart_point(doc, ch, ord[i]->base_flops_per_s, ord[i]->new_flops_per_s,
			    (double)ord[i]->new_ns, 0, ord[i]->name, NULL);
	free(ord);
}

static void onesided(struct kp_doc *doc, const struct kp_diff *d, enum kp_diff_status st)
{
	const char *name = st == DIFF_NEW ? "new" : "gone";
	struct kp_chart *ch = doc_chart(doc, name, CHART_LIST, name,
					   st == DIFF_NEW
						   ? "New: rows found only in the new trace"
						   : "Gone: rows found only in the base trace");
	const struct kp_diff_row **ord = xcalloc(d->nrows + 1, sizeof(*ord));
	size_t n = 0;
	for (size_t i = 0; i < d->nrows; i++)
		if (d->rows[i].status == st)
			ord[n++] = &d->rows[i];
	qsort(ord, n, sizeof(*ord), cmp_drow_size);
	for (size_t i = 0; i < n && i < CHARTS_LIST; i++)
		chart_point(doc, ch, (double)(st == DIFF_NEW ? ord[i]->new_ns : ord[i]->base_ns), 0,
			    0, 0, ord[i]->name, NULL);
	if (n > CHARTS_LIST) {
		char b[64];
		snprintf(b, sizeof(b), "%zu rows, the %d with most GPU time listed", n,
			 CHARTS_LIST);
		ch->note = arena_strdup(&doc->arena, b);
	}
	free(ord);
}

void charts_diff(struct kp_doc *doc, const struct kp_diff *d, unsigned which)
{
	if (which & CHART_BIT(CHART_WATERFALL))
		waterfall(doc, d);
	if (which & CHART_BIT(CHART_DUMBBELL))
		dumbbell(doc, d);
	if (which & CHART_BIT(CHART_LIST)) {
		onesided(doc, d, DIFF_NEW);
		onesided(doc, d, DIFF_GONE);
	}
}

/* ---- icicle of GPU time by module path ---- */

/* A frame of the module tree: a path component, or the "[bwd]" box of a module. */
struct inode {
	const char *name; /* borrowed from the row key, or a literal */
	size_t nlen;
	int32_t parent, depth;
	int32_t first, next; /* children, in drawing order */
	int bwd;             /* the backward of its parent module's own ops */
	int64_t self_ns, ns; /* own GPU time; with the children's */
	int64_t flops, bytes;     /* known sums, -1 none */
	double pf_ns, pb_ns;      /* peak FLOP/s x ns, peak B/s x ns (kp_row.peak_*_ns) */
	int drawn;
};

struct itree {
	struct inode *v;
	size_t n, cap;
	struct kp_hmap map; /* (parent, bwd, name) -> node index */
	struct kp_arena keys; /* the map's keys */
	char *kbuf;
	size_t kcap;
};

static void add_known64(int64_t *sum, int64_t x)
{
	if (x >= 0)
		*sum = (*sum < 0 ? 0 : *sum) + x;
}

/* The child @name (@bwd: the "[bwd]" box) of node @parent, created on first sight. */
static int32_t inode_child(struct itree *tr, int32_t parent, const char *name, size_t len, int bwd)
{
	size_t klen = sizeof(int32_t) + 1 + len;
	if (klen > tr->kcap) {
		tr->kcap = klen * 2;
		tr->kbuf = xrealloc(tr->kbuf, tr->kcap);
	}
	memcpy(tr->kbuf, &parent, sizeof(int32_t));
	tr->kbuf[sizeof(int32_t)] = (char)bwd;
	memcpy(tr->kbuf + sizeof(int32_t) + 1, name, len);
	int created;
	struct kp_hmap_entry *e = hmap_put_str(&tr->map, tr->kbuf, klen, &created);
	if (!created)
		return (int32_t)e->val.i;
	char *key = arena_alloc(&tr->keys, klen);
	memcpy(key, tr->kbuf, klen);
	e->key.ptr = key;
	e->val.i = (int64_t)tr->n;
	tr->v = xgrow(tr->v, tr->n + 1, &tr->cap, 64, sizeof(*tr->v));
	tr->v[tr->n] = (struct inode){ .name = name,
				       .nlen = len,
				       .parent = parent,
				       .depth = tr->v[parent].depth + 1,
				       .first = -1,
				       .next = -1,
				       .bwd = bwd,
				       .flops = -1,
				       .bytes = -1 };
	return (int32_t)tr->n++;
}

#define ICICLE_BWD " [bwd]" /* the key suffix of a backward row (src/analysis/where.h) */

/* Row @row's path as nodes (split at '/'; " [bwd]" a last "[bwd]" box); its figures there. */
static void inode_add_row(struct itree *tr, const struct kp_row *row)
{
	const char *k = row->key ? row->key : row->name;
	size_t n = strlen(k), bl = sizeof(ICICLE_BWD) - 1;
	int bwd = n > bl && !strcmp(k + n - bl, ICICLE_BWD);
	if (bwd)
		n -= bl;
	int32_t at = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && k[j] != '/')
			j++;
		at = inode_child(tr, at, k + i, j - i, 0);
		i = j + 1;
	}
	if (bwd)
		at = inode_child(tr, at, "[bwd]", 5, 1);
	struct inode *x = &tr->v[at];
	x->self_ns += row->time_ns;
	add_known64(&x->flops, row->flops);
	add_known64(&x->bytes, row->bytes);
	x->pf_ns += row->peak_flop_ns;
	x->pb_ns += row->peak_bw_ns;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* @a and @b (lengths @na, @nb) with digit runs compared as numbers: Layer_2 before Layer_10. */
static int natcmp(const char *a, size_t na, const char *b, size_t nb)
{
	size_t i = 0, j = 0;
	while (i < na && j < nb) {
		if (is_digit(a[i]) && is_digit(b[j])) {
			while (i < na && a[i] == '0')
				i++;
			while (j < nb && b[j] == '0')
				j++;
			size_t ie = i, je = j;
			while (ie < na && is_digit(a[ie]))
				ie++;
			while (je < nb && is_digit(b[je]))
				je++;
			if (ie - i != je - j)
				return ie - i < je - j ? -1 : 1;
			int c = memcmp(a + i, b + j, ie - i);
			if (c)
				return c;
			i = ie;
			j = je;
			continue;
		}
		if (a[i] != b[j])
			return (unsigned char)a[i] < (unsigned char)b[j] ? -1 : 1;
		i++;
		j++;
	}
	return (na - i > nb - j) - (na - i < nb - j);
}

/* Children order: forward frames by name (natcmp, then bytes), the [bwd] box last. */
static int cmp_inode_order(const void *a, const void *b, void *arg)
{
	const struct inode *v = arg, *x = &v[*(const int32_t *)a], *y = &v[*(const int32_t *)b];
	if (x->bwd != y->bwd)
		return x->bwd - y->bwd;
	int c = natcmp(x->name, x->nlen, y->name, y->nlen);
	if (!c)
		c = x->nlen != y->nlen ? (x->nlen < y->nlen ? -1 : 1)
				       : memcmp(x->name, y->name, x->nlen);
	if (c)
		return c;
	return *(const int32_t *)a < *(const int32_t *)b ? -1 : 1;
}

/* Inclusive sums (children come after their parents) and each node's children, sorted. */
static void inode_sums(struct itree *tr)
{
	for (size_t i = 0; i < tr->n; i++)
		tr->v[i].ns = tr->v[i].self_ns;
	for (size_t i = tr->n; i-- > 1;) {
		struct inode *x = &tr->v[i], *p = &tr->v[x->parent];
		p->ns += x->ns;
		add_known64(&p->flops, x->flops);
		add_known64(&p->bytes, x->bytes);
		p->pf_ns += x->pf_ns;
		p->pb_ns += x->pb_ns;
	}
	int32_t *ord = xmalloc((tr->n + 1) * sizeof(*ord));
	size_t m = 0;
	for (size_t i = 1; i < tr->n; i++)
		ord[m++] = (int32_t)i;
	qsort_r(ord, m, sizeof(*ord), cmp_inode_order, tr->v);
	/* prepend in reverse order: each list ends up sorted */
	for (size_t k = m; k-- > 0;) {
		struct inode *x = &tr->v[ord[k]];
		x->next = tr->v[x->parent].first;
		tr->v[x->parent].first = ord[k];
	}
	free(ord);
}

static int cmp_inode_size(const void *a, const void *b, void *arg)
{
	const struct inode *v = arg, *x = &v[*(const int32_t *)a], *y = &v[*(const int32_t *)b];
	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return *(const int32_t *)a < *(const int32_t *)b ? -1 : 1;
}

/*
 * The boxes drawn one by one: at least a pixel wide, at most CHARTS_ICICLE_DEPTH deep, the
 * CHARTS_ICICLE_BOXES largest (larger first, then shallower: a parent is never left out
 * while its child is drawn).  Returns how many.
 */
static size_t inode_pick(struct itree *tr)
{
	int64_t px = tr->v[0].ns / CHART_ICICLE_PX;
	int32_t *ord = xmalloc((tr->n + 1) * sizeof(*ord));
	size_t m = 0;
	for (size_t i = 1; i < tr->n; i++)
		if (tr->v[i].ns > 0 && tr->v[i].ns >= px && tr->v[i].depth <= CHARTS_ICICLE_DEPTH)
			ord[m++] = (int32_t)i;
	qsort_r(ord, m, sizeof(*ord), cmp_inode_size, tr->v);
	if (m > CHARTS_ICICLE_BOXES)
		m = CHARTS_ICICLE_BOXES;
	tr->v[0].drawn = 1;
	for (size_t k = 0; k < m; k++)
		tr->v[ord[k]].drawn = 1;
	free(ord);
	return m + 1;
}

/* The figures of a box: its share, the roof it is nearer and how near (series, fill). */
struct ifig {
	int series; /* 0 compute, 1 memory, 2 no model */
	double pct, pf, pb;
};

static struct ifig inode_fig(const struct inode *x)
{
	struct ifig f = { 2, 0, -1, -1 };
	if (x->flops >= 0 && x->pf_ns > 0)
		f.pf = 100.0 * (double)x->flops * 1e9 / x->pf_ns;
	if (x->bytes >= 0 && x->pb_ns > 0)
		f.pb = 100.0 * (double)x->bytes * 1e9 / x->pb_ns;
	if (f.pf < 0 && f.pb < 0)
		return f;
	f.series = f.pf >= f.pb ? 0 : 1;
	f.pct = f.pf >= f.pb ? f.pf : f.pb;
	return f;
}

/* "A/B/C", "A/B [bwd]" of node @i into @b. */
static void inode_path(const struct itree *tr, int32_t i, char *b, size_t cap)
{
	int32_t chain[CHARTS_ICICLE_DEPTH + 2];
	int n = 0;
	for (int32_t k = i; k > 0 && n < CHARTS_ICICLE_DEPTH + 2; k = tr->v[k].parent)
		chain[n++] = k;
	size_t len = 0;
	b[0] = '\0';
	while (n-- > 0 && len + 1 < cap) {
		const struct inode *x = &tr->v[chain[n]];
		const char *sep = x->bwd ? " " : len ? "/" : "";
		len += (size_t)snprintf(b + len, cap - len, "%s%.*s", sep, (int)x->nlen, x->name);
		if (len >= cap)
			len = cap - 1;
	}
}

/* Node @i's box at depth lane, from @at ns; its tip. */
static void inode_box(struct kp_doc *doc, struct kp_chart *ch, const struct itree *tr, int32_t i,
		      int64_t at)
{
	const struct inode *x = &tr->v[i];
	struct ifig f = inode_fig(x);
	char path[2048], tip[3072], b1[32], b2[32];
	if (i == 0)
		snprintf(path, sizeof(path), "all GPU time");
	else
		inode_path(tr, i, path, sizeof(path));
	struct kp_visbuf vp = { 0 };
	int len = snprintf(tip, sizeof(tip), "%s\n%s GPU time (%.1f%%), self %s",
			   utf8_visible(path, &vp), units_time(b1, sizeof(b1), x->ns),
			   tr->v[0].ns ? 100.0 * (double)x->ns / (double)tr->v[0].ns : 0,
			   units_time(b2, sizeof(b2), x->self_ns));
	if (len < (int)sizeof(tip)) {
		if (f.series == 2)
			snprintf(tip + len, sizeof(tip) - len, "\nno FLOPs or bytes modelled");
		else
			snprintf(tip + len, sizeof(tip) - len,
				 "\n%s-bound: %.1f%% of peak FLOP/s, %.1f%% of peak B/s",
				 f.series == 0 ? "compute" : "memory", f.pf < 0 ? 0 : f.pf,
				 f.pb < 0 ? 0 : f.pb);
	}
	utf8_visible_free(&vp);
	char name[1024];
	snprintf(name, sizeof(name), "%.*s", (int)(x->nlen < 1000 ? x->nlen : 1000), x->name);
	struct kp_cspan *s = chart_span(doc, ch, x->depth, f.series, at, at + x->ns,
					fmin(f.pct / 100, 1), i == 0 ? "all GPU time" : name);
	s->tip = arena_strdup(&doc->arena, tip);
}

/* The boxes of node @i's drawn subtree from @at ns, its small children one "(others)". */
static void inode_layout(struct kp_doc *doc, struct kp_chart *ch, const struct itree *tr, int32_t i,
			 int64_t at)
{
	inode_box(doc, ch, tr, i, at);
	int64_t rest = 0, x = at;
	size_t nrest = 0;
	for (int32_t c = tr->v[i].first; c >= 0; c = tr->v[c].next) {
		if (tr->v[c].drawn) {
			inode_layout(doc, ch, tr, c, x);
			x += tr->v[c].ns;
		} else if (tr->v[c].ns > 0) {
			rest += tr->v[c].ns;
			nrest++;
		}
	}
	if (!nrest)
		return;
	char path[2048], tip[3072], b1[32];
	if (i == 0)
		snprintf(path, sizeof(path), "the top level");
	else
		inode_path(tr, i, path, sizeof(path));
	struct kp_visbuf vp = { 0 };
	snprintf(tip, sizeof(tip), "(others) under %s: %zu %s too small to draw\n%s GPU time (%.1f%%)",
		 utf8_visible(path, &vp), nrest, units_plural((int64_t)nrest, "frame", "frames"),
		 units_time(b1, sizeof(b1), rest),
		 tr->v[0].ns ? 100.0 * (double)rest / (double)tr->v[0].ns : 0);
	utf8_visible_free(&vp);
	struct kp_cspan *s =
		chart_span(doc, ch, tr->v[i].depth + 1, 3, x, x + rest, 0, "(others)");
	s->tip = arena_strdup(&doc->arena, tip);
}

void charts_icicle(struct kp_doc *doc, const struct kp_report *m)
{
	struct kp_chart *ch = doc_chart(
		doc, "flame", CHART_ICICLE, "flame",
		"GPU time by module path (icicle): width is GPU time, colour the nearer roof");
	chart_series(ch, "compute-bound");
	chart_series(ch, "memory-bound");
	chart_series(ch, "no FLOPs or bytes modelled");
	chart_series(ch, "(others)");
	struct itree tr = { 0 };
	hmap_init(&tr.map, HMAP_STR);
	arena_init(&tr.keys);
	tr.v = xgrow(tr.v, 1, &tr.cap, 64, sizeof(*tr.v));
	tr.v[tr.n++] = (struct inode){ .name = "", .parent = -1, .first = -1, .next = -1,
				       .flops = -1, .bytes = -1 };
	for (size_t i = 0; m && i < m->nrows; i++)
		if (!(m->rows[i].flags & ROW_OTHERS))
			inode_add_row(&tr, &m->rows[i]);
	inode_sums(&tr);
	ch->x1 = tr.v[0].ns;
	char b[512];
	if (tr.v[0].ns > 0) {
		size_t drawn = inode_pick(&tr);
		inode_layout(doc, ch, &tr, 0, 0);
		snprintf(b, sizeof(b),
			 "%zu frames, %zu drawn; forward and backward in each box, a module's "
			 "own backward ops in its [bwd] box; darker: nearer that roof's peak; frames "
			 "narrower than a pixel grouped as (others) per parent; click a box to zoom, "
			 "the top box to zoom out",
			 tr.n - 1, drawn - 1);
		ch->note = arena_strdup(&doc->arena, b);
	}
	hmap_free(&tr.map);
	arena_free(&tr.keys);
	free(tr.kbuf);
	free(tr.v);
}
