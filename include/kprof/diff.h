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
#include "kprof/memdiff.h"
#include "kprof/memory.h"
#include "kprof/sort.h"
#include "kprof/trace.h"

enum kp_diff_status { DIFF_CHANGED = 0, DIFF_UNCHANGED, DIFF_NEW, DIFF_GONE, DIFF_OTHERS };

/* How times were normalized: auto (steps in both traces or not), or forced by an option. */
enum kp_diff_norm { NORM_AUTO = 0, NORM_PER_STEP, NORM_STEPS, NORM_TOTAL };

struct kp_diff_opts {
	enum kp_group key;    /* join key: kernel, op, op-shape, module or source */
	int depth;            /* module: the paths were folded to this depth (headers), 0 all */
	int full_names;       /* --name=full: join kernels on the raw name */
	double threshold_pct; /* noise floor: |ratio - 1| <= this is "unchanged" */
	double base_div;      /* per-step divisors (ProfilerStep count); 1 = totals */
	double new_div;
	int per_step;          /* the divisors are step counts (for headers) */
	enum kp_diff_norm how; /* how per_step was chosen (for headers) */
	size_t base_steps;     /* length of the base rows' step_ns series (0: none) */
	size_t new_steps;
	double noise_k; /* noise = k x pooled sd x sqrt(1/nb + 1/nn); 0 = KP_NOISE_K, < 0 off */
};

/* Default noise multiplier (kprof-diff(1), GATE) and the fewest steps a side needs for it. */
#define KP_NOISE_K 3.0
#define KP_NOISE_MIN_STEPS 3

/* One input side of a diff.  @rep is borrowed and may be NULL (unit tests). */
struct kp_diff_side {
	const char *label; /* "base" / "new" */
	const struct kp_report *rep;
	double div;      /* times and calls are divided by this */
	int64_t time_ns; /* normalized total: the sum of the normalized rows */
	size_t nkeys;    /* distinct join keys */
};

/*
 * One joined row.  Per side, times and calls are the side's rows with this key,
 * summed, then divided by the side's div (times rounded to 1 ns).
 * Invariant: delta_ns == new_ns - base_ns, and the rows' deltas sum to
 * new.time_ns - base.time_ns (the folded "(others)" row included).
 */
struct kp_diff_row {
	const char *key;        /* join key (diff arena or borrowed) */
	const char *name;       /* display name */
	const char *base_dtype; /* op-shape: dtype per side, NULL unknown or mixed */
	const char *new_dtype;
	int has_base, has_new;
	int64_t base_raw_ns, new_raw_ns; /* before division */
	int64_t base_ns, new_ns;         /* normalized; 0 when the side is missing */
	double base_calls, new_calls;
	int64_t base_flops, new_flops;              /* -1 unknown */
	double base_peak_flop_ns, new_peak_flop_ns; /* sum of peak FLOP/s x ns (analyze.c) */
	double base_flops_per_s, new_flops_per_s;   /* -1 unknown */
	double base_pct_peak, new_pct_peak;         /* -1 unknown */
	int64_t delta_ns;
	double ratio;             /* new/base (normalized); -1 when N/A (one side missing or 0) */
	double base_pct, new_pct; /* % of each side's total */
	double share_pt;          /* new_pct - base_pct, percentage points */
	enum kp_diff_status status;
	int64_t nfolded;   /* DIFF_OTHERS: rows folded */
	int cross_dtype;   /* op-shape: paired across dtypes (no exact pair on either side) */
	int cross_backend; /* op-shape: paired across backends by functional signature */
	double noise_ns;   /* per-step noise of the delta (see KP_NOISE_K); -1 N/A */
	int base_mixed_dtype, new_mixed_dtype; /* accumulation state */
};

struct kp_diff_summary {
	int64_t base_ns, new_ns, delta_ns;
	double total_ratio;     /* new_ns / base_ns; -1 when base_ns is 0 */
	double geomean_speedup; /* exp(mean(ln(base/new))) over matched rows, both > 0; -1 none */
	int64_t geomean_rows;   /* the matched rows it is over (both sides > 0) */
	int64_t matched, improved, regressed, unchanged, added, removed;
	/* delta_ns == paired_delta_ns + onesided_new_ns - onesided_base_ns, exactly */
	int64_t paired_delta_ns; /* the matched rows' deltas, summed */
	int64_t cross_dtype;      /* matched rows paired across dtypes */
	int64_t cross_backend;    /* matched rows paired across backends (functional signature) */
	int64_t onesided_base_ns; /* time in gone rows (base side) and new rows (new side) */
	int64_t onesided_new_ns;
	double noise_ns; /* noise of the total's delta; -1 N/A */
	int noise_steps; /* per-step series used for noise (both sides >= KP_NOISE_MIN_STEPS) */
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

/*
 * A per-key limit: rows whose key, or op name (the key's first word), matches @pattern:
 * '*' matches any run of characters, '?' one, everything else itself.
 */
struct kp_gate_rule {
	const char *pattern;
	double pct;
};

/* The regression gate (kprof-diff(1), GATE). */
struct kp_gate_opts {
	double fail_above_pct; /* limit of the total and of rows no rule matches; < 0: none */
	double min_pct;        /* skip rows under this % of their side's time */
	int64_t min_delta_ns;  /* absolute floor of a change (per step when dividing) */
	const struct kp_gate_rule *rules; /* per-key limits, the last match wins */
	size_t nrules;
};

/* Default --min-delta: changes of 5 us or less (per step) never trip the gate. */
#define KP_MIN_DELTA_NS 5000

/* A gate crossing: the total (key NULL) or one row regressed past all three limits. */
struct kp_gate_hit {
	const char *key; /* NULL = total GPU time */
	const char *name;
	enum kp_diff_status status; /* DIFF_CHANGED (a matched row), or DIFF_NEW (new only) */
	int64_t base_ns, new_ns, delta_ns;
	double change_pct; /* (ratio - 1) x 100; NAN for a new row or a row with no base time */
	double limit_pct;  /* the limit it crossed (--fail-above or a rule) */
	double noise_ns;   /* -1 N/A */
};

/* What kprof diff asks of diff_run(): the options, parsed. */
struct kp_diff_run_opts {
	const char *path[2]; /* base, new; "-" is standard input (one side at most) */
	const char *device;  /* --device NAME (both sides) or BASE,NEW; NULL: the traces' */
	struct kp_load_opts load;
	struct kp_analyze_opts
		analyze;          /* group = diff.key, clock, db, names; device is set per side */
	struct kp_diff_opts diff; /* key, names, threshold; with steps_given the divisors */
	int per_step;    /* -1 when both traces have steps, 0 --no-per-step, 1 --per-step */
	int steps_given; /* --steps B,N: diff.base_div and diff.new_div are B and N */
	struct kp_sort_spec sort;
	long top; /* rows kept before "(others)"; 0 all */
	double min_pct;
	struct kp_gate_opts gate;    /* no limit and no rule: no gate (diff_gated()) */
	enum kp_warn_mode warn_mode; /* how diff_run_print() prints warnings */
	int memory;                  /* --memory: compare the [memory] events' peaks (memdiff.h) */
	double fail_above_mem_pct;   /* --fail-above-mem PCT (implies memory); < 0 none */
};

/*
 * One kprof diff run: both traces loaded and analyzed, joined, sorted, gated, selected.
 * Owns everything; free with diff_run_free() whatever diff_run() returned.
 */
struct kp_diff_run {
	struct kp_trace trace[2];
	struct kp_report rep[2];
	int loaded[2];          /* trace_load() succeeded (rep[] is valid) */
	struct kp_diag diag[2]; /* why a side failed to load */
	struct kp_diag err;     /* a run-level error (err.status != 0) */
	struct kp_diff diff;    /* valid when diff_run() returned KP_OK or KP_REGRESSION */
	int joined;
	struct kp_gate_hit *hits; /* every crossing, the total first */
	size_t nhits;
	struct kp_gate_opts gate;
	enum kp_warn_mode warn_mode;
	struct kp_memrep mem[2];   /* o->memory: each side's memory analysis (when loaded) */
	int has_mem[2];
	struct kp_memdiff memdiff; /* o->memory and both sides with GPU [memory] events */
	int has_memdiff;
	const char *no_mem[2];     /* o->memory: the inputs without GPU [memory] events, NULL */
	double mem_limit_pct;      /* o->fail_above_mem_pct */
	struct kp_memgate_hit *memhits; /* every device over mem_limit_pct */
	size_t nmemhits;
};

/* Prototypes */
/*
 * Load and analyze both traces (in parallel), pick the per-step normalization, join, sort,
 * gate and select; with o->memory, compare the memory analyses and gate them too.  Returns
 * KP_OK, KP_REGRESSION (a gate tripped), or the status of the first error (a side that does
 * not load, --per-step without steps, --fail-above-mem and a side without GPU [memory]
 * events: KP_BADINPUT); diff_run_print() tells.
 */
int diff_run(struct kp_diff_run *run, const struct kp_diff_run_opts *o);
/*
 * To @fp: the errors of a failed run, or the warnings of both sides (each line names its
 * side, "[base]" or "[new]"; once, "[base, new]", when both sides are one file) and the
 * gates' crossings (time, then memory).
 */
void diff_run_print(const struct kp_diff_run *run, FILE *fp);
void diff_run_free(struct kp_diff_run *run);
/*
 * The join key of an analysis row (kp_row) under @o: kernel names normalized
 * unless o->full_names (see diff_normalize_kernel()), op names as they are,
 * op-shape keys "aten::mm [8192,8192]x[8192,8192] bf16" with out= slots dropped
 * (diff_functional_shape()) and the row's dtype (and math precision, "fp32/tf32")
 * last.  With @group non-NULL, *group is the key without the dtype (leftovers
 * pair across dtypes on it; the key itself for kernel and op keys).
 * The results live in @a or are @row's own strings.
 */
const char *diff_row_key(struct kp_arena *a, const struct kp_row *row, const struct kp_diff_opts *o,
			 const char **group);
/*
 * The input shapes of @op as its functional form records them: for the ops of
 * kprof-diff(1), OUT= VARIANTS (aten::mm, aten::addmm, ...), a trailing output
 * tensor slot ("[256,512]x[512,768]x[256,768]" of Inductor's mm(out=)) is dropped.
 * Returns @shape itself or a string in @a.
 */
const char *diff_functional_shape(struct kp_arena *a, const char *op, const char *shape);
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
 * The regression gate: the total, and every row (new rows included) holding
 * >= g->min_pct of its side's time, whose change is above its limit (a rule's or
 * --fail-above), above g->min_delta_ns and above its noise when known.  Fills up
 * to @cap hits (total first, then rows in their current order) and returns how
 * many crossed.  Call before diff_select().
 */
size_t diff_gate(const struct kp_diff *d, const struct kp_gate_opts *g, struct kp_gate_hit *hits,
		 size_t cap);
/*
 * One --fail-above value: "PCT" sets *global; "PATTERN=PCT" (split at the last '=')
 * appends a rule to the vector *rules (*n used of *cap, grown with xrealloc; the
 * pattern is copied into @a).  PCT is a number >= 0.  Returns NULL or a static reason.
 */
const char *diff_gate_parse_limit(struct kp_arena *a, const char *s, size_t len, double *global,
				  struct kp_gate_rule **rules, size_t *n, size_t *cap);
/*
 * A limits file (--fail-above @FILE): one "PCT" or "PATTERN=PCT" a line; blank lines
 * and lines starting with '#' are skipped; spaces around the line are dropped.
 * Returns -1 with @d = "NAME:LINE: error: <reason>" (status 3) on a bad line.
 */
int diff_gate_parse_file(struct kp_arena *a, const char *text, size_t len, const char *name,
			 double *global, struct kp_gate_rule **rules, size_t *n, size_t *cap,
			 struct kp_diag *d);
/* A gate is on: a --fail-above PCT or a rule. */
static inline int diff_gated(const struct kp_gate_opts *g)
{
	return g->fail_above_pct >= 0 || g->nrules > 0;
}
/*
 * The limit of a row under @g: the last rule whose pattern matches @key, or (@op_key:
 * op and op-shape keys) the key's first word, the op name; else --fail-above; < 0 none.
 */
double diff_gate_limit(const struct kp_gate_opts *g, const char *key, int op_key);
/*
 * "'aten::mm [..] bf16' 1.368 ms -> 1.426 ms: +57.769 us (+4.2%), limit 3%, floor 5.000 us,
 * noise 1.210 us"; new rows "'X' (new) 12.000 us: +12.000 us, floor 5.000 us, noise N/A".
 */
void diff_gate_message(const struct kp_gate_hit *h, const struct kp_gate_opts *g, char *buf,
		       size_t cap);
void diff_free(struct kp_diff *d);

#endif /* KPROF_DIFF_H */
