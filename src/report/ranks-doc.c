/*
 * ranks-doc.c — the cross-rank view in the document.
 */
#include "kprof/ranks-doc.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "kprof/breakdown-doc.h"
#include "kprof/collective.h"
#include "kprof/units.h"

/* clang-format off */
enum rk_col {
	RC_RANK, RC_BUSY, RC_BUSY_PCT, RC_COMPUTE, RC_COMM, RC_MEMCPY, RC_IDLE, RC_OVERLAP,
	RC_STEPS, RC_STEP_AVG, RC_STEP_MAX, RC_SLOWEST, RC_FILE, RC_N
};
/* clang-format on */

static const struct kp_col rk_cols[RC_N] = {
	[RC_RANK] = { "Rank", "rank", COL_BOTH, 0 },
	[RC_BUSY] = { "GPU busy", "gpu_busy_ns", COL_BOTH, 0 },
	[RC_BUSY_PCT] = { "Busy%", "gpu_busy_pct", COL_BOTH, 0 },
	[RC_COMPUTE] = { "Compute", "compute_ns", COL_BOTH, 0 },
	[RC_COMM] = { "Comm", "comm_ns", COL_BOTH, 0 },
	[RC_MEMCPY] = { "Memcpy", "memcpy_ns", COL_BOTH, 0 },
	[RC_IDLE] = { "Idle", "idle_ns", COL_BOTH, 0 },
	[RC_OVERLAP] = { "Comm||Comp", "comm_overlapped_ns", COL_BOTH, 0 },
	[RC_STEPS] = { "Steps", "steps", COL_BOTH, 0 },
	[RC_STEP_AVG] = { "Step avg", "step_mean_ns", COL_BOTH, 0 },
	[RC_STEP_MAX] = { "Step max", "step_max_ns", COL_BOTH, 0 },
	[RC_SLOWEST] = { "Slowest", "slowest_step", COL_BOTH, 0 },
	[RC_FILE] = { "File", "file", COL_BOTH, 1 },
};

enum co_col {
	CC_CALLS,
	CC_BYTES,
	CC_N,
	CC_TIME,
	CC_AVG,
	CC_ALGBW,
	CC_BUSBW,
	CC_PCT_LINK,
	CC_NAME,
	CC_NCOL
};

static const struct kp_col co_cols[CC_NCOL] = {
	[CC_CALLS] = { "Calls", "calls", COL_BOTH, 0 },
	[CC_BYTES] = { "Size", "bytes", COL_BOTH, 0 },
	[CC_N] = { "Ranks", "group_size", COL_BOTH, 0 },
	[CC_TIME] = { "Time", "time_ns", COL_BOTH, 0 },
	[CC_AVG] = { "Avg", "avg_ns", COL_BOTH, 0 },
	[CC_ALGBW] = { "AlgBW GB/s", "algbw_bytes_per_s", COL_BOTH, 0 },
	[CC_BUSBW] = { "BusBW GB/s", "busbw_bytes_per_s", COL_BOTH, 0 },
	[CC_PCT_LINK] = { "%Link", "pct_link", COL_BOTH, 0 },
	[CC_NAME] = { "Collective", "name", COL_BOTH, 1 },
};

enum st_col { SC_STEP, SC_RANK, SC_LAG, SC_LATE, SC_INST, SC_SKEW, SC_BY, SC_NCOL };

static const struct kp_col st_cols[SC_NCOL] = {
	[SC_STEP] = { "Step", "step", COL_BOTH, 0 },
	[SC_RANK] = { "Rank", "rank", COL_BOTH, 0 },
	[SC_LAG] = { "Lag", "lag_ns", COL_BOTH, 0 },
	[SC_LATE] = { "Last", "last_arrivals", COL_BOTH, 0 },
	[SC_INST] = { "Colls", "collectives", COL_BOTH, 0 },
	[SC_SKEW] = { "Step skew", "step_skew_ns", COL_BOTH, 0 },
	[SC_BY] = { "By", "by", COL_BOTH, 1 },
};

static void tcell(struct kp_table *tb, struct kp_cell *c, int64_t ns)
{
	char b[32];
	if (ns < 0)
		doc_cell_num(tb, c, -1, "-");
	else
		doc_cell_int(tb, c, ns, units_time(b, sizeof(b), ns));
}

static void rank_table(const struct kp_ranks *rs, struct kp_doc *doc)
{
	struct kp_table *tb = doc_table(doc, "rank_rows", rk_cols, RC_N);
	char b[32];
	for (size_t i = 0; i < rs->n; i++) {
		const struct kp_rank *r = &rs->r[i];
		struct kp_cell *c = doc_row(tb);
		int64_t busy = r->bd.span_ns - r->bd.idle_ns;
		doc_cell_int(tb, &c[RC_RANK], r->rank, NULL);
		tcell(tb, &c[RC_BUSY], busy);
		double p = r->bd.span_ns > 0 ? 100.0 * (double)busy / (double)r->bd.span_ns : -1;
		doc_cell_num(tb, &c[RC_BUSY_PCT], p, units_fixed(b, sizeof(b), p, 1, 1));
		tcell(tb, &c[RC_COMPUTE], r->bd.class_ns[BD_COMPUTE]);
		tcell(tb, &c[RC_COMM], r->bd.class_ns[BD_COMM]);
		tcell(tb, &c[RC_MEMCPY], r->bd.class_ns[BD_MEMCPY]);
		tcell(tb, &c[RC_IDLE], r->bd.idle_ns);
		tcell(tb, &c[RC_OVERLAP], r->bd.comm_overlapped_ns);
		doc_cell_int(tb, &c[RC_STEPS], (int64_t)r->nsteps, NULL);
		tcell(tb, &c[RC_STEP_AVG], r->step_mean_ns);
		tcell(tb, &c[RC_STEP_MAX], r->step_max_ns);
		if (r->slowest_step >= 0)
			doc_cell_int(tb, &c[RC_SLOWEST], r->slowest_step, NULL);
		else
			doc_cell_num(tb, &c[RC_SLOWEST], -1, "-");
		doc_cell_str(tb, &c[RC_FILE], r->file, NULL);
	}
}

static void coll_table(const struct kp_ranks *rs, struct kp_doc *doc)
{
	struct kp_table *tb = doc_table(doc, "collectives", co_cols, CC_NCOL);
	char b[32];
	for (size_t i = 0; i < rs->ncolls; i++) {
		const struct kp_coll_row *r = &rs->colls[i];
		struct kp_cell *c = doc_row(tb);
		doc_cell_int(tb, &c[CC_CALLS], r->calls, NULL);
		if (r->bytes >= 0)
			doc_cell_int(tb, &c[CC_BYTES], r->bytes,
					units_rate(b, sizeof(b), (double)r->bytes, "B"));
		else
			doc_cell_num(tb, &c[CC_BYTES], -1, "-");
		doc_cell_int(tb, &c[CC_N], r->n, NULL);
		tcell(tb, &c[CC_TIME], r->time_ns);
		tcell(tb, &c[CC_AVG], r->calls ? r->time_ns / r->calls : 0);
		doc_cell_num(tb, &c[CC_ALGBW], r->algbw,
				units_fixed(b, sizeof(b), r->algbw, 1e9, 1));
		doc_cell_num(tb, &c[CC_BUSBW], r->busbw,
				units_fixed(b, sizeof(b), r->busbw, 1e9, 1));
		double pl = r->busbw >= 0 && rs->link_peak > 0 ? 100.0 * r->busbw / rs->link_peak
							       : -1;
		doc_cell_num(tb, &c[CC_PCT_LINK], pl, units_fixed(b, sizeof(b), pl, 1, 1));
		doc_cell_str(tb, &c[CC_NAME], coll_kind_name(r->kind), NULL);
	}
}

static void straggler_table(const struct kp_ranks *rs, struct kp_doc *doc)
{
	struct kp_table *tb = doc_table(doc, "stragglers", st_cols, SC_NCOL);
	for (size_t i = 0; i < rs->nstrag; i++) {
		const struct kp_straggler *s = &rs->strag[i];
		struct kp_cell *c = doc_row(tb);
		doc_cell_int(tb, &c[SC_STEP], s->step, NULL);
		doc_cell_int(tb, &c[SC_RANK], s->rank, NULL);
		tcell(tb, &c[SC_LAG], s->lag_ns);
		doc_cell_int(tb, &c[SC_LATE], s->late, NULL);
		doc_cell_int(tb, &c[SC_INST], s->instances, NULL);
		tcell(tb, &c[SC_SKEW], s->skew_ns);
		doc_cell_str(tb, &c[SC_BY], s->instances ? "collectives" : "step-end", NULL);
	}
}

/*
 * json: a rank's own warnings (its trace's), [{"kind", "count", "messages": [...]}], so that
 * kprof merge prints and lists them as kprof analyze does (src/analysis/summary.c reads them)
 */
static void rank_warnings_json(const struct kp_warnings *w, struct kp_doc *doc)
{
	if (!w->nkinds)
		return;
	doc_array(doc, "warnings", 0);
	for (int i = 0; i < w->nkinds; i++) {
		doc_object(doc, NULL);
		doc_fact_text(doc, NULL, "kind", w->k[i].kind);
		doc_fact_count(doc, NULL, "count", w->k[i].count);
		doc_array(doc, "messages", 0);
		for (int j = 0; j < w->k[i].nshown; j++)
			doc_fact_text(doc, NULL, NULL, w->k[i].shown[j]);
		doc_end(doc);
		doc_end(doc);
	}
	doc_end(doc);
}

/* json: ranks[{rank, file, totals, breakdown, step_ns{mean, max}}] */
static void rank_json(const struct kp_ranks *rs, struct kp_doc *doc)
{
	static const char *const from[] = { "distributedInfo", "file name", "argument order" };
	doc_array(doc, "ranks", 1);
	for (size_t i = 0; i < rs->n; i++) {
		const struct kp_rank *r = &rs->r[i];
		doc_object(doc, NULL);
		doc_fact_count(doc, NULL, "rank", r->rank);
		doc_fact_text(doc, NULL, "rank_from", from[r->rank_from]);
		doc_fact_text(doc, NULL, "file", r->file);
		if (r->world_size > 0)
			doc_fact_count(doc, NULL, "world_size", r->world_size);
		else
			doc_fact_null(doc, NULL, "world_size");
		doc_fact_text(doc, NULL, "backend", r->backend[0] ? r->backend : NULL);
		doc_fact_text(doc, NULL, "device", r->device[0] ? r->device : NULL);
		doc_object(doc, "totals");
		doc_fact_time(doc, NULL, "gpu_span_ns", r->bd.span_ns);
		doc_fact_time(doc, NULL, "gpu_busy_ns", r->bd.span_ns - r->bd.idle_ns);
		doc_fact_time(doc, NULL, "gpu_time_ns", r->gpu_time_ns);
		doc_fact_count(doc, NULL, "comm_kernels", (int64_t)r->ncomms);
		doc_fact_count(doc, NULL, "steps", (int64_t)r->nsteps);
		doc_end(doc);
		breakdown_doc_json(doc, "breakdown", &r->bd);
		doc_object(doc, "step_ns");
		if (r->step_mean_ns >= 0) {
			doc_fact_time(doc, NULL, "mean", r->step_mean_ns);
			doc_fact_time(doc, NULL, "max", r->step_max_ns);
			doc_fact_count(doc, NULL, "slowest_step", r->slowest_step);
		} else {
			doc_fact_null(doc, NULL, "mean");
			doc_fact_null(doc, NULL, "max");
			doc_fact_null(doc, NULL, "slowest_step");
		}
		doc_end(doc);
		/* what kprof merge needs to redo the cross-rank view (summary.h) */
		doc_array(doc, "steps", 0);
		for (size_t k = 0; k < r->nsteps; k++) {
			const struct kp_rank_step *s = &r->steps[k];
			doc_array(doc, NULL, 0);
			doc_fact_count(doc, NULL, NULL, s->num);
			doc_fact_count(doc, NULL, NULL, s->start_ns);
			doc_fact_count(doc, NULL, NULL, s->span_ns);
			doc_fact_count(doc, NULL, NULL, s->partial);
			doc_end(doc);
		}
		doc_end(doc);
		doc_array(doc, "comms", 0);
		for (size_t k = 0; k < r->ncomms; k++) {
			const struct kp_rank_comm *c = &r->comms[k];
			doc_array(doc, NULL, 0);
			doc_fact_count(doc, NULL, NULL, c->ts_ns);
			doc_fact_count(doc, NULL, NULL, c->dur_ns);
			doc_fact_count(doc, NULL, NULL, c->bytes);
			doc_fact_count(doc, NULL, NULL, c->step);
			doc_fact_count(doc, NULL, NULL, c->group);
			doc_fact_text(doc, NULL, NULL, coll_kind_name(c->kind));
			doc_end(doc);
		}
		doc_end(doc);
		rank_warnings_json(&r->warn, doc);
		doc_end(doc);
	}
	doc_end(doc);
}

static void warnings(const struct kp_warnings *w, struct kp_doc *doc)
{
	for (int i = 0; i < w->nkinds; i++)
		for (int j = 0; j < w->k[i].nshown; j++)
			doc_fact_text(doc, NULL, NULL, w->k[i].shown[j]);
}

void ranks_doc(const struct kp_ranks *rs, const char *link_name, struct kp_doc *doc)
{
	char b1[32], b2[32];
	doc_init(doc, "analyze", 6);
	int64_t ws = rs->n ? rs->r[0].world_size : -1;
	const char *backend = rs->n && rs->r[0].backend[0] ? rs->r[0].backend : "unknown";
	doc_summary(doc, "%zu ranks, %zu collective kinds and sizes, %zu steps", rs->n,
		       rs->ncolls, rs->nstrag);
	char how[48];
	if (rs->jobs > 0)
		snprintf(how, sizeof(how), "read on %d thread%s", rs->jobs,
			 rs->jobs == 1 ? "" : "s");
	else
		snprintf(how, sizeof(how), "merged from summaries");
	if (ws > 0)
		doc_fact_textf(doc, "ranks", NULL,
				  "%zu trace%s of world size %" PRId64 ", backend %s, %s", rs->n,
				  rs->n == 1 ? "" : "s", ws, backend, how);
	else
		doc_fact_textf(doc, "ranks", NULL, "%zu trace%s (no distributedInfo), %s", rs->n,
				  rs->n == 1 ? "" : "s", how);
	doc_fact_textf(
		doc, "colls", NULL,
		"%" PRId64 " communication kernels matched by order across ranks, %" PRId64
		" unmatched; bandwidth in GB/s = 1e9 B/s (nccl-tests): algbw = size / shortest rank's time, busbw = algbw x factor",
		rs->matched, rs->unmatched);
	if (rs->link_peak > 0)
		doc_fact_textf(doc, "link", NULL, "%s: peer link %s (%%Link = busbw / it)",
				  link_name, units_rate(b1, sizeof(b1), rs->link_peak, "B/s"));
	else
		doc_fact_textf(doc, "link", NULL,
				  "%s: no peer link bandwidth in the device table",
				  link_name ? link_name : "unknown device");
	if (rs->step_skew_max_ns >= 0)
		doc_fact_textf(doc, "skew", NULL,
				  "step-time skew up to %s (step %" PRId64
				  "), over %zu steps on every rank",
				  units_time(b2, sizeof(b2), rs->step_skew_max_ns),
				  rs->step_skew_step, rs->nstrag);
	doc_fact_count(doc, NULL, "kprof_summary_version", 1);
	doc_fact_count(doc, NULL, "world_size", ws);
	/* no "jobs" (threads used): json is the traces', the same bytes whoever read or merged
	 * them (kprof-merge(1); tests/unit/report/test-ranks-doc.c) */
	doc_fact_count(doc, NULL, "matched_collectives", rs->matched);
	doc_fact_count(doc, NULL, "unmatched_collectives", rs->unmatched);
	doc_fact_rate(doc, NULL, "link_peak_bytes_per_s",
			 rs->link_peak > 0 ? rs->link_peak : NAN, "B/s");
	rank_table(rs, doc);
	rank_json(rs, doc);
	coll_table(rs, doc);
	straggler_table(rs, doc);
	doc_array(doc, "warnings", 1);
	warnings(&rs->warn, doc);
	for (size_t i = 0; i < rs->n; i++)
		warnings(&rs->r[i].warn, doc);
	doc_end(doc);
}
