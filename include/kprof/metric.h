/*
 * metric.h — the figures of an analysis row (struct kp_row), one entry each: its --sort key,
 * its column (header, csv/json key), how its value is read, compared and written as a cell,
 * and its unit.  sort.c's comparator (kprof analyze --sort), report-doc.c's rows table and
 * charts.c's roofline read this one table, so adding a figure is one entry (perf keeps its
 * sort keys the same way: tools/perf/util/sort.c, struct sort_entry).
 *
 * Entries are in column order (the order the rows table prints, the name column last);
 * --sort keys list in .sort_at order (kprof-analyze(1), "valid keys").
 */
#ifndef KPROF_METRIC_H
#define KPROF_METRIC_H

#include <stdint.h>

#include "kprof/analyze.h"
#include "kprof/doc.h"

/* clang-format off */
enum kp_metric_id {
	METRIC_TIME, METRIC_PCT, METRIC_CALLS, METRIC_AVG, METRIC_MED, METRIC_MIN, METRIC_MAX,
	METRIC_FLOPS, METRIC_BYTES, METRIC_TFLOPS, METRIC_GBPS, METRIC_MTFLOPS, METRIC_MFRATIO,
	METRIC_MGBPS, METRIC_MBRATIO, METRIC_PCT_PEAK, METRIC_PCT_BW, METRIC_INTENSITY,
	METRIC_BOUND, METRIC_DTYPE, METRIC_PREC, METRIC_FLAGS, METRIC_SHAPE, METRIC_OP,
	METRIC_MODULE, METRIC_SOURCE, METRIC_NAME, METRIC_N
};
/* clang-format on */

/* How a figure is written as a cell (metric_cell()). */
enum kp_metric_form {
	MF_TIME,  /* integer ns (.count), shown by units_time() */
	MF_COUNT, /* integer (.count), null when < 0 */
	MF_FIXED, /* number (.num) / .scale with .decimals decimals, null when < 0 */
	MF_TEXT,  /* string (.text), null shown as .none */
};

/* What a cell writer needs besides the row. */
struct kp_metric_ctx {
	int short_names; /* kernel names shortened (kernel rows without --name=full) */
};

struct kp_metric {
	const char *sort; /* kprof analyze --sort key; NULL: not one */
	int sort_at;      /* its place in the key list, from 1 */
	struct kp_col col; /* header, csv/json key, where it shows, text column */
	enum kp_metric_form form;
	const char *unit;   /* of the csv/json value: "ns", "FLOP/s", "%"; NULL none */
	double scale;       /* MF_FIXED: shown as value / scale ... */
	int decimals;       /* ... with this many decimals */
	int per_call;       /* null on the folded "(others)" row */
	double warn_above;  /* on ROW_OVER_PEAK rows, a value above this is TONE_WARN; 0 never */
	const char *none;   /* MF_TEXT: the text of a null */
	int64_t (*count)(const struct kp_row *row);     /* MF_TIME, MF_COUNT: the cell's value */
	double (*num)(const struct kp_row *row);        /* numbers: the value sorted and charted */
	const char *(*text)(const struct kp_row *row);  /* MF_TEXT: the value sorted and written */
	/* a cell writer of its own (NULL: by .form) */
	void (*cell)(struct kp_table *tb, struct kp_cell *c, const struct kp_row *row,
		     const struct kp_metric_ctx *x);
};

extern const struct kp_metric metric_table[METRIC_N];

/* Prototypes */
/* @row's figure @id as a number (its sort value; -1 unknown); 0 for text figures. */
double metric_num(const struct kp_row *row, enum kp_metric_id id);
/* @row's figure @id as text, "" when none; NULL for number figures. */
const char *metric_text(const struct kp_row *row, enum kp_metric_id id);
/* Write @row's figure @id into cell @c of @tb. */
void metric_cell(struct kp_table *tb, struct kp_cell *c, const struct kp_row *row,
		 enum kp_metric_id id, const struct kp_metric_ctx *x);
/* The figure whose --sort key is @name, -1 none. */
int metric_by_sort_key(const char *name);
/* The figure at place @i (from 0) of the --sort key list, -1 past its end. */
int metric_sort_key_at(int i);

#endif /* KPROF_METRIC_H */
