/*
 * diff.h — pair the analysis rows of two traces by key: base/new/delta/ratio, summary, gate.
 */
#ifndef KPROF_DIFF_H
#define KPROF_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kprof/analyze.h"
#include "kprof/arena.h"
#include "kprof/diag.h"
#include "kprof/sort.h"
#include "kprof/trace.h"

enum kp_diff_status { DIFF_CHANGED = 0, DIFF_UNCHANGED, DIFF_NEW, DIFF_GONE, DIFF_OTHERS };

/* How times were normalized: auto (steps in both traces or not), or forced by an option. */
enum kp_diff_norm { NORM_AUTO = 0, NORM_PER_STEP, NORM_STEPS, NORM_TOTAL };

struct kp_diff_opts {
	enum kp_group key;       /* join key: kernel, op or op-shape */
	int full_names;          /* --name=full: join kernels on the raw name */
	double threshold_pct;    /* noise floor: |ratio - 1| <= this is "unchanged" */
	double base_div;         /* per-step divisors (ProfilerStep count); 1 = totals */
	double new_div;
	int per_step;            /* the divisors are step counts (for headers) */
	enum kp_diff_norm how;   /* how per_step was chosen (for headers) */
};

/* One input side of a diff.  @rep is borrowed and may be NULL (unit tests). */
struct kp_diff_side {
	const char *label;       /* "base" / "new" */
	const struct kp_report *rep;
	double div;              /* times and calls are divided by this */
	int64_t time_ns;         /* normalized total: the sum of the normalized rows */
	size_t nkeys;            /* distinct join keys */
};

/*
 * One joined row.  Per side, times and calls are the side's rows with this key,
 * summed, then divided by the side's div (times rounded to 1 ns).
 * Invariant: delta_ns == new_ns - base_ns, and the rows' deltas sum to
 * new.time_ns - base.time_ns (the folded "(others)" row included).
 */
struct kp_diff_row {
	const char *key;          /* join key (diff arena or borrowed) */
	const char *name;         /* display name */
	const char *base_dtype;   /* op-shape: dtype per side, NULL unknown or mixed */
	const char *new_dtype;
	int has_base, has_new;
	int64_t base_raw_ns, new_raw_ns;  /* before division */
	int64_t base_ns, new_ns;  /* normalized; 0 when the side is missing */
	double base_calls, new_calls;
	int64_t base_flops, new_flops;    /* -1 unknown */
	double base_peak_flop_ns, new_peak_flop_ns; /* sum of peak FLOP/s x ns (analyze.c) */
	double base_flops_per_s, new_flops_per_s;   /* -1 unknown */
	double base_pct_peak, new_pct_peak;         /* -1 unknown */
	int64_t delta_ns;
	double ratio;             /* new/base (normalized); -1 when N/A (one side missing or 0) */
	double base_pct, new_pct; /* % of each side's total */
	double share_pt;          /* new_pct - base_pct, percentage points */
	enum kp_diff_status status;
	int64_t nfolded;          /* DIFF_OTHERS: rows folded */
	int base_mixed_dtype, new_mixed_dtype; /* accumulation state */
};

struct kp_diff_summary {
	int64_t base_ns, new_ns, delta_ns;
	double total_ratio;       /* new_ns / base_ns; -1 when base_ns is 0 */
	double geomean_speedup;   /* exp(mean(ln(base/new))) over matched rows, both > 0; -1 none */
	int64_t matched, improved, regressed, unchanged, added, removed;
};

/* The whole comparison.  Rows borrow strings from both reports; free with diff_free(). */
struct kp_diff {
	struct kp_arena arena;
	struct kp_diff_opts opts;
	struct kp_diff_side base, new;
	struct kp_diff_row *rows;
	size_t nrows;
	struct kp_diff_summary sum;
};

/* A gate crossing: the total (key NULL) or one matched row regressed past the limit. */
struct kp_gate_hit {
	const char *key;          /* NULL = total GPU time */
	const char *name;
	int64_t base_ns, new_ns;
	double change_pct;        /* (ratio - 1) x 100 */
};

/* What kprof diff asks of diff_run(): the options, parsed. */
struct kp_diff_run_opts {
	const char *path[2];            /* base, new; "-" is standard input (one side at most) */
	const char *device;             /* --device NAME (both sides) or BASE,NEW; NULL: the traces' */
	struct kp_load_opts load;
	struct kp_analyze_opts analyze; /* group = diff.key, clock, db, names; device is set per side */
	struct kp_diff_opts diff;       /* key, names, threshold; with steps_given the divisors */
	int per_step;                   /* -1 when both traces have steps, 0 --no-per-step, 1 --per-step */
	int steps_given;                /* --steps B,N: diff.base_div and diff.new_div are B and N */
	struct kp_sort_spec sort;
	long top;                       /* rows kept before "(others)"; 0 all */
	double min_pct;
	double fail_above_pct;          /* < 0: no gate */
};

#define DIFF_GATE_SHOW 5 /* crossings printed before "and N more" */

/*
 * One kprof diff run: both traces loaded and analyzed, joined, sorted, gated, selected.
 * Owns everything; free with diff_run_free() whatever diff_run() returned.
 */
struct kp_diff_run {
	struct kp_trace trace[2];
	struct kp_report rep[2];
	int loaded[2];            /* trace_load() succeeded (rep[] is valid) */
	struct kp_diag diag[2];   /* why a side failed to load */
	struct kp_diag err;       /* a run-level error (err.status != 0) */
	struct kp_diff diff;      /* valid when diff_run() returned KP_OK or KP_REGRESSION */
	int joined;
	struct kp_gate_hit *hits; /* every crossing, the total first */
	size_t nhits;
	double fail_above_pct;
};

/* Prototypes */
/*
 * Load and analyze both traces (in parallel), pick the per-step normalization, join, sort,
 * gate and select.  Returns KP_OK, KP_REGRESSION (the gate tripped), or the status of the
 * first error (a side that does not load, --per-step without steps); diff_run_print() tells.
 */
int diff_run(struct kp_diff_run *run, const struct kp_diff_run_opts *o);
/* To @fp: the errors of a failed run, or the warnings of both sides and the gate's crossings. */
void diff_run_print(const struct kp_diff_run *run, FILE *fp);
void diff_run_free(struct kp_diff_run *run);
/*
 * The join key of an analysis row (kp_row) under @o: kernel names normalized
 * unless o->full_names (see diff_normalize_kernel()), op names as they are,
 * op-shape keys without the dtype ("aten::mm [8192,8192]x[8192,8192]").
 * The result lives in @a or is @row's own string.
 */
const char *diff_row_key(struct kp_arena *a, const struct kp_row *row, const struct kp_diff_opts *o);
/*
 * Kernel-name normalization (documented in kprof-diff(1), KERNEL NAMES):
 * drop a leading "void " and the argument list, drop spaces around punctuation
 * (then one space after each comma), drop integer-literal suffixes of template
 * arguments ("3ul" -> "3"), and drop Inductor's trailing "_<n>" counter of
 * "triton_*" kernels.  Returns a string in @a.
 */
const char *diff_normalize_kernel(struct kp_arena *a, const char *name);
/*
 * Join @nb base rows and @nn new rows (analysis rows, not folded) by
 * diff_row_key(), compute every column and the summary.  @d is initialized
 * here; @base_rep/@new_rep (may be NULL) are only kept for rendering.  Returns 0.
 */
int diff_join(struct kp_diff *d, const struct kp_row *brows, size_t nb, const struct kp_row *nrows,
	      size_t nn, const struct kp_diff_opts *o, const struct kp_report *base_rep,
	      const struct kp_report *new_rep);
/*
 * Keep the first @top rows (0 = all) whose share is >= @min_pct on either side;
 * fold the rest into one "(others: N kernels)" row carrying their sums, so the
 * delta column still sums to the change of the total.
 */
void diff_select(struct kp_diff *d, long top, double min_pct);
/*
 * The regression gate: the total, and every matched row holding >= @min_pct of
 * base time, whose (ratio - 1) x 100 is above @fail_above_pct.  Fills up to
 * @cap hits (total first, then rows in their current order) and returns how
 * many crossed.  Call before diff_select().
 */
size_t diff_gate(const struct kp_diff *d, double fail_above_pct, double min_pct,
		 struct kp_gate_hit *hits, size_t cap);
/* "total GPU time 4.812 ms -> 5.104 ms (+6.1%, above --fail-above 5%)" */
void diff_gate_message(const struct kp_gate_hit *h, double fail_above_pct, char *buf, size_t cap);
void diff_free(struct kp_diff *d);

#endif /* KPROF_DIFF_H */
