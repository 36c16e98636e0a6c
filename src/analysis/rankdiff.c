/*
 * rankdiff.c — two sets of ranks compared rank by rank and merged (rankdiff.h).
 *
 * Ranks pair by rank id; a rank on one side only is "gone" (base only) or "new" (new only).
 * The merged row ("all") is, per side: the mean of the ranks' step-time means (ranks with
 * complete steps), the largest step max, and the sums of busy, compute, comm and idle time.
 */
#include "kprof/rankdiff.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/units.h"

/* The compared quantities, each shown as base, new, delta, ratio. */
enum rd_metric { RM_STEP_MEAN, RM_STEP_MAX, RM_BUSY, RM_COMPUTE, RM_COMM, RM_IDLE, RM_N };
enum { RD_BASE, RD_NEW, RD_DELTA, RD_RATIO, RD_PER };

#define RD_RANK 0
#define RD_PAIR 1
#define RD_M0 2
#define RD_NCOL (RD_M0 + RM_N * RD_PER)

/* human: which of base/new/delta/ratio show in table/markdown (json and csv have all) */
#define H_ALL COL_BOTH, COL_BOTH, COL_BOTH, COL_BOTH
#define H_NEW_DELTA COL_MACHINE, COL_BOTH, COL_BOTH, COL_MACHINE
/* clang-format off */
#define MCOLS(t, k, hb, hn, hd, hr)                                   \
	{ t " base", k "_base_ns", hb, 0 }, { t " new", k "_new_ns", hn, 0 }, \
	{ t " delta", k "_delta_ns", hd, 0 }, { t " ratio", k "_ratio", hr, 0 }
/* clang-format on */
#define MC(t, k, h) MCOLS(t, k, h)

static const struct kp_col rd_cols[RD_NCOL] = {
	{ "Rank", "rank", COL_BOTH, 0 },
	{ "Pair", "pair", COL_BOTH, 1 },
	MC("Step", "step_mean", H_ALL),
	MCOLS("Max", "step_max", COL_BOTH, COL_BOTH, COL_BOTH, COL_MACHINE),
	MC("Busy", "gpu_busy", H_NEW_DELTA),
	MC("Compute", "compute", H_NEW_DELTA),
	MC("Comm", "comm", H_NEW_DELTA),
	MC("Idle", "idle", H_NEW_DELTA),
};

/* One side's values of one rank (or of all), -1 unknown. */
struct rd_side {
	int64_t v[RM_N];
};

static void side_of(const struct kp_rank *r, struct rd_side *s)
{
	s->v[RM_STEP_MEAN] = r->step_mean_ns;
	s->v[RM_STEP_MAX] = r->step_max_ns;
	s->v[RM_BUSY] = r->bd.span_ns - r->bd.idle_ns;
	s->v[RM_COMPUTE] = r->bd.class_ns[BD_COMPUTE];
	s->v[RM_COMM] = r->bd.class_ns[BD_COMM];
	s->v[RM_IDLE] = r->bd.idle_ns;
}

/* The merged values of a side (see the top of the file); all -1 for no ranks. */
static void side_merged(const struct kp_ranks *rs, struct rd_side *s)
{
	int64_t sum_mean = 0, nmean = 0;
	for (int m = 0; m < RM_N; m++)
		s->v[m] = rs->n ? 0 : -1;
	s->v[RM_STEP_MAX] = -1;
	for (size_t i = 0; i < rs->n; i++) {
		struct rd_side r;
		side_of(&rs->r[i], &r);
		if (r.v[RM_STEP_MEAN] >= 0) {
			sum_mean += r.v[RM_STEP_MEAN];
			nmean++;
		}
		if (r.v[RM_STEP_MAX] > s->v[RM_STEP_MAX])
			s->v[RM_STEP_MAX] = r.v[RM_STEP_MAX];
		for (int m = RM_BUSY; m < RM_N; m++)
			s->v[m] += r.v[m];
	}
	s->v[RM_STEP_MEAN] = nmean ? (sum_mean + nmean / 2) / nmean : -1;
}

static void tcell(struct kp_table *tb, struct kp_cell *c, int64_t ns)
{
	char b[32];
	if (ns < 0)
		doc_cell_num(tb, c, -1, "-");
	else
		doc_cell_int(tb, c, ns, units_time(b, sizeof(b), ns));
}

/* new / base; NAN when either is unknown or base is 0 */
static double ratio(int64_t b, int64_t n)
{
	return b > 0 && n >= 0 ? (double)n / (double)b : NAN;
}

/* One row: @b or @n NULL for a rank on one side only. */
static void row(struct kp_table *tb, int64_t rank, const char *pair, const struct rd_side *b,
		const struct rd_side *n)
{
	char buf[48];
	struct kp_cell *c = doc_row(tb);
	if (rank >= 0)
		doc_cell_int(tb, &c[RD_RANK], rank, NULL);
	else
		doc_cell_num(tb, &c[RD_RANK], -1, "-");
	doc_cell_str(tb, &c[RD_PAIR], pair, NULL);
	for (int m = 0; m < RM_N; m++) {
		struct kp_cell *mc = &c[RD_M0 + m * RD_PER];
		int64_t bv = b ? b->v[m] : -1, nv = n ? n->v[m] : -1;
		tcell(tb, &mc[RD_BASE], bv);
		tcell(tb, &mc[RD_NEW], nv);
		if (bv >= 0 && nv >= 0) {
			char t[32];
			units_time(t, sizeof(t), nv - bv);
			snprintf(buf, sizeof(buf), "%s%s", nv > bv ? "+" : "", t);
			doc_cell_int(tb, &mc[RD_DELTA], nv - bv, buf);
		} else {
			doc_cell_num(tb, &mc[RD_DELTA], -1, "-");
		}
		double r = ratio(bv, nv);
		doc_cell_num(tb, &mc[RD_RATIO], r,
				isfinite(r) ? units_fixed(buf, sizeof(buf), r, 1, 3) : "-");
		if (isfinite(r) && m == RM_STEP_MEAN && r != 1.0)
			mc[RD_DELTA].tone = mc[RD_RATIO].tone = r > 1 ? TONE_BAD : TONE_GOOD;
	}
}

/* Did the step mean grow by more than @limit_pct (exact: 100 x delta > limit x base)? */
static int crossed(const struct rd_side *b, const struct rd_side *n, double limit_pct)
{
	int64_t bv = b->v[RM_STEP_MEAN], nv = n->v[RM_STEP_MEAN];
	return bv > 0 && nv >= 0 && (double)(nv - bv) * 100 > limit_pct * (double)bv;
}

static void gate(const struct kp_ranks *base, const struct kp_ranks *nw, const struct rd_side *mb,
		 const struct rd_side *mn, struct kp_rankdiff_gate *g, struct kp_doc *doc)
{
	char list[512] = "";
	size_t len = 0, i = 0, j = 0;
	/* the paired ranks whose own step mean crossed the limit */
	while (i < base->n && j < nw->n) {
		if (base->r[i].rank < nw->r[j].rank) {
			i++;
		} else if (base->r[i].rank > nw->r[j].rank) {
			j++;
		} else {
			struct rd_side b, n;
			side_of(&base->r[i], &b);
			side_of(&nw->r[j], &n);
			if (crossed(&b, &n, g->limit_pct) && len + 24 < sizeof(list))
				len += (size_t)snprintf(list + len, sizeof(list) - len,
							"%s%" PRId64, len ? "," : "",
							base->r[i].rank);
			i++;
			j++;
		}
	}
	double r = ratio(mb->v[RM_STEP_MEAN], mn->v[RM_STEP_MEAN]);
	g->unknown = !isfinite(r);
	g->change_pct = g->unknown ? NAN : (r - 1) * 100;
	snprintf(g->ranks_above, sizeof(g->ranks_above), "%s", list);
	g->tripped = !g->unknown && crossed(mb, mn, g->limit_pct);
	if (g->unknown)
		doc_fact_textf(doc, "gate", NULL,
				  "cannot judge: a side has no complete ProfilerStep");
	else
		doc_fact_textf(doc, "gate", NULL,
				  "%s: merged step mean %+.2f%% (limit %g%%); ranks above it: %s",
				  g->tripped ? "FAIL" : "pass", (r - 1) * 100, g->limit_pct,
				  len ? list : "none");
	doc_fact_tone(doc, g->tripped || g->unknown ? TONE_BAD : TONE_GOOD);
	doc_object(doc, "gate");
	doc_fact_num(doc, NULL, "fail_above_pct", g->limit_pct);
	doc_fact_num(doc, NULL, "step_mean_change_pct", g->unknown ? NAN : (r - 1) * 100);
	doc_fact_bool(doc, NULL, "tripped", g->tripped);
	doc_array(doc, "ranks_above", 0);
	for (const char *p = list; *p;) {
		char *end;
		doc_fact_count(doc, NULL, NULL, strtoll(p, &end, 10));
		p = *end ? end + 1 : end;
	}
	doc_end(doc);
	doc_end(doc);
}

void rankdiff_doc(const struct kp_ranks *base, const struct kp_ranks *nw,
		  struct kp_rankdiff_gate *g, struct kp_doc *doc)
{
	size_t paired = 0, gone = 0, added = 0, i = 0, j = 0;
	while (i < base->n || j < nw->n) {
		if (j == nw->n || (i < base->n && base->r[i].rank < nw->r[j].rank))
			i++, gone++;
		else if (i == base->n || base->r[i].rank > nw->r[j].rank)
			j++, added++;
		else
			i++, j++, paired++;
	}
	struct rd_side mb, mn;
	side_merged(base, &mb);
	side_merged(nw, &mn);
	doc_init(doc, "diff", 6);
	doc_summary(doc, "%zu base ranks, %zu new ranks: %zu paired, %zu new, %zu gone", base->n,
		       nw->n, paired, added, gone);
	doc_fact_textf(doc, "ranks", NULL,
			  "%zu base, %zu new: %zu paired by rank id, %zu new, %zu gone", base->n,
			  nw->n, paired, added, gone);
	doc_fact_text(
		doc, "merged", NULL,
		"row all: step mean = mean of the ranks' step means, step max = the largest, busy/compute/comm/idle = sums over ranks");
	doc_fact_count(doc, NULL, "base_ranks", (int64_t)base->n);
	doc_fact_count(doc, NULL, "new_ranks", (int64_t)nw->n);
	doc_fact_count(doc, NULL, "paired_ranks", (int64_t)paired);
	doc_fact_count(doc, NULL, "new_only_ranks", (int64_t)added);
	doc_fact_count(doc, NULL, "gone_ranks", (int64_t)gone);
	g->tripped = g->unknown = 0;
	g->change_pct = NAN;
	g->ranks_above[0] = '\0';
	if (g->limit_pct >= 0)
		gate(base, nw, &mb, &mn, g, doc);
	struct kp_table *tb = doc_table(doc, "rank_rows", rd_cols, RD_NCOL);
	i = j = 0;
	while (i < base->n || j < nw->n) {
		struct rd_side b, n;
		if (j == nw->n || (i < base->n && base->r[i].rank < nw->r[j].rank)) {
			side_of(&base->r[i], &b);
			row(tb, base->r[i].rank, "gone", &b, NULL);
			i++;
		} else if (i == base->n || base->r[i].rank > nw->r[j].rank) {
			side_of(&nw->r[j], &n);
			row(tb, nw->r[j].rank, "new", NULL, &n);
			j++;
		} else {
			side_of(&base->r[i], &b);
			side_of(&nw->r[j], &n);
			row(tb, base->r[i].rank, "both", &b, &n);
			i++, j++;
		}
	}
	row(tb, -1, "all", &mb, &mn);
}
