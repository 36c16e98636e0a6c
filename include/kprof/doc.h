/*
 * doc.h — the document every command builds: header facts (typed key/values),
 * JSON objects and arrays, and tables of typed cells, in the order they print.  One
 * renderer (table.h) turns it into table, csv, json or markdown; builders never look at
 * the format.
 *
 * Adding a header fact is one line in the command's builder:
 *     doc_fact_pct(doc, "noise", "noise_pct", 1.8);
 * prints "# noise   1.8%" (table), "- noise: 1.8%" (markdown) and "noise_pct": 1.8 (json);
 * a NULL key keeps it out of table/markdown, a NULL json key out of json.
 * Adding a column is one line in the command's column enum, one in its designated-initializer
 * table ([DC_NOISE] = { "Noise", "noise_pct", COL_BOTH, 0 }) and the doc_cell_*() call
 * that fills it; columns print in enum order, the text name column last.
 *
 * Charts (html and svg formats; json carries them under their key, table/csv/markdown skip
 * them) are typed data, not pictures: doc_chart() and the chart_*() appenders below.  A
 * fact's tone (doc_fact_tone()) marks a verdict: html shows it as a coloured banner.
 */
#ifndef KPROF_DOC_H
#define KPROF_DOC_H

#include <stddef.h>
#include <stdint.h>

#include "kprof/arena.h"

/* Where a column shows. */
#define COL_HUMAN 0x1   /* table and markdown */
#define COL_MACHINE 0x2 /* csv and json */
#define COL_BOTH 0x3

/* A column: table/markdown title, csv/json key, where it shows, left-aligned text. */
struct kp_col {
	const char *title; /* "TFLOP/s"; NULL for machine-only columns */
	const char *key;   /* "flops_per_s" */
	unsigned where;    /* COL_* */
	int text;          /* left-aligned text column (the name column comes last) */
};

enum kp_cell_type { CELL_NULL = 0, CELL_INT, CELL_NUM, CELL_STR };

/* How the renderer may colour a cell on a terminal (table format only). */
enum kp_tone { TONE_NONE = 0, TONE_BAD, TONE_GOOD, TONE_WARN };

/* One cell: raw value for csv/json, text for humans. */
struct kp_cell {
	enum kp_cell_type type;
	enum kp_tone tone;
	int64_t i;
	double d;
	const char *s;     /* CELL_STR value */
	const char *human; /* table/markdown text; NULL -> derived from the value ("-" for null) */
};

/* A table of the document; cells are row-major, ncols per row; strings in the doc's arena. */
struct kp_table {
	struct kp_arena *arena; /* the document's */
	const char *title;      /* html heading (in the arena), NULL: the json key */
	int ncols;
	struct kp_col *cols; /* a copy: doc_col_*() adjust it for this document */
	struct kp_cell *cells;
	size_t nrows, caprows;
};

/* Header-fact types: how the value reads in table/markdown and in json. */
enum kp_val_type {
	VAL_NULL = 0, /* "-" / null */
	VAL_TEXT,     /* as is / string */
	VAL_COUNT,    /* 1234 / integer */
	VAL_TIME,     /* "4.812 ms" / integer ns */
	VAL_NUM,      /* %g / number */
	VAL_PCT,      /* "42.8%" / number */
	VAL_RATE,     /* "3.4 TB/s" (SI prefix before the unit) / number per second */
	VAL_BOOL,     /* yes, no / true, false */
};

struct kp_val {
	enum kp_val_type type;
	int64_t i;     /* COUNT, TIME, BOOL */
	double d;      /* NUM, PCT, RATE */
	const char *s; /* TEXT; RATE: the unit ("B/s") */
};

enum kp_item_type { ITEM_FACT, ITEM_OBJECT, ITEM_ARRAY, ITEM_END, ITEM_TABLE, ITEM_CHART };

/* What a chart draws; the fields of kp_chart each kind uses are listed with them. */
enum kp_chart_kind {
	CHART_ROOFLINE, /* pts: x FLOP/byte, y FLOP/s, w time ns; marks: compute roofs (FLOP/s);
			    bw: DRAM roof (B/s); log-log */
	CHART_TOP, /* lanes: bars (ops); spans: lane = bar, t0..t1 cumulative ns, label kernel */
	CHART_TIMELINE,  /* lanes: streams; spans: t0..t1 ns from the first GPU event, series
			    family, fill = busy share of the span; marks: step starts (ns) */
	CHART_WATERFALL, /* pts: x = base total ns, then each row's delta ns, then x = new total ns
			    (series: 0 total, 1 regression, 2 improvement) */
	CHART_DUMBBELL,  /* pts: x base FLOP/s, y new FLOP/s, w new time ns, label row */
	CHART_LIST,      /* pts: x time ns, label name (new or gone rows) */
	CHART_ICICLE,    /* spans: one box each, lane = depth (0 the whole GPU time), t0..t1 ns
			    from the left edge (a box's children lie inside it), series 0 compute,
			    1 memory, 2 no model, 3 "(others)", fill = % of that peak / 100, label
			    the frame name, tip the full path and figures; x1 the GPU time */
	CHART_MEMORY,    /* one device's memory: pts the curve in time order (series 0), x ns
			    since the trace's first event, y allocated bytes, w reserved bytes
			    (-1 unknown), label the op; then the peak (series 2, tip its text);
			    spans: lane 0 hover bands (t0..t1 ns, tip), lane 1 Optimizer.step
			    spans (series 3, label the annotation); marks: ProfilerStep starts
			    (ns); x1 the time axis' end (ns) */
	CHART_LINES,     /* capture results of one workload/op: lanes: the x labels (shapes in run
			    order); pts: x lane index, y the value in yunit (TFLOP/s or GB/s), w
			    time ns, series the backend (legend with its geomean speedup), flag 1
			    an accuracy failure, label the shape, tip the figures; marks: peaks
			    in yunit (dashed) */
};

/* CHART_ICICLE: the width in pixels boxes are laid out for (a "pixel" is x1 / this). */
#define CHART_ICICLE_PX 1000

#define CHART_SERIES_MAX 16

/* A point (roofline, waterfall, dumbbell, list); strings in the document's arena. */
struct kp_cpoint {
	double x, y, w;
	int series;
	int flag; /* CHART_LINES: 1 accuracy failure */
	const char *label;
	const char *tip; /* hover text, NULL: label */
};

/* A span on a lane (timeline busy stretch, top bar segment). */
struct kp_cspan {
	int lane;
	int series;
	int64_t t0, t1;
	double fill; /* 0..1 */
	const char *label;
	const char *tip; /* hover text (CHART_ICICLE), NULL: label */
};

/* A reference value: a roof (FLOP/s) or a marker (ns) with its label. */
struct kp_cmark {
	double v;
	const char *label;
};

struct kp_chart {
	enum kp_chart_kind kind;
	const char *name; /* "roofline": --chart name and the svg's id */
	const char *title;
	const char *note;                     /* one line under the title, NULL none */
	const char *series[CHART_SERIES_MAX]; /* legend; colour i is series i */
	int nseries;
	double bw;  /* CHART_ROOFLINE: DRAM bytes/s, 0 unknown */
	const char *yunit; /* CHART_LINES: "TFLOP/s" or "GB/s" */
	int64_t x1; /* CHART_TIMELINE: span end ns; CHART_ICICLE: GPU time ns */
	struct kp_cpoint *pts;
	size_t npts, cappts;
	struct kp_cspan *spans;
	size_t nspans, capspans;
	struct kp_cmark *marks;
	size_t nmarks, capmarks;
	const char **lanes;
	size_t nlanes, caplanes;
};

/*
 * One element of the document.  Facts at the top level show in table/markdown when they
 * have a key and in json when they have a json key; inside an object or array they are
 * json only.  Tables show in every format (csv prints the document's first table), except
 * a top-level table without a json key: it is for people (table, markdown, html) only.
 */
struct kp_item {
	enum kp_item_type type;
	const char *key;        /* FACT: table/markdown key ("span") */
	const char *jkey;       /* json member name; NULL inside arrays */
	struct kp_val v;        /* FACT */
	int lines;              /* ARRAY: one element a line in json */
	struct kp_table *table; /* TABLE */
	struct kp_chart *chart; /* CHART */
	enum kp_tone tone;      /* FACT: TONE_BAD/TONE_GOOD make it a verdict */
};

/* The document.  Owns its items, tables and strings; free with doc_free(). */
struct kp_doc {
	struct kp_arena arena;
	const char *command; /* "analyze": the json "kprof" object and markdown title */
	const char *summary; /* one line under the markdown title, NULL none */
	int key_width;       /* table-format fact keys are padded to this */
	int depth;           /* open objects/arrays while building */
	struct kp_item *items;
	size_t nitems, capitems;
};

/* Prototypes */
void doc_init(struct kp_doc *doc, const char *command, int key_width);
void doc_free(struct kp_doc *doc);
/* The markdown summary line (printf format), copied. */
void doc_summary(struct kp_doc *doc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Header facts.  @key and @jkey are borrowed (string literals), values are copied. */
void doc_fact_text(struct kp_doc *doc, const char *key, const char *jkey, const char *s);
void doc_fact_textf(struct kp_doc *doc, const char *key, const char *jkey, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void doc_fact_count(struct kp_doc *doc, const char *key, const char *jkey, int64_t n);
void doc_fact_time(struct kp_doc *doc, const char *key, const char *jkey, int64_t ns);
/* Non-finite values are null. */
void doc_fact_num(struct kp_doc *doc, const char *key, const char *jkey, double v);
void doc_fact_pct(struct kp_doc *doc, const char *key, const char *jkey, double pct);
void doc_fact_rate(struct kp_doc *doc, const char *key, const char *jkey, double per_s,
		      const char *unit);
void doc_fact_bool(struct kp_doc *doc, const char *key, const char *jkey, int v);
void doc_fact_null(struct kp_doc *doc, const char *key, const char *jkey);

/* json nesting: an object or array member (@jkey NULL inside an array), closed by doc_end(). */
void doc_object(struct kp_doc *doc, const char *jkey);
void doc_array(struct kp_doc *doc, const char *jkey, int lines);
void doc_end(struct kp_doc *doc);

/* A table (json member @jkey) with a copy of @cols; rows follow with doc_row(). */
struct kp_table *doc_table(struct kp_doc *doc, const char *jkey, const struct kp_col *cols,
			      int ncols);
void doc_col_show(struct kp_table *tb, int col, unsigned where);
void doc_col_title(struct kp_table *tb, int col, const char *title);
/* Append a row; returns its ncols cells, all null. */
struct kp_cell *doc_row(struct kp_table *tb);
/* Cell setters; @human (copied) is the table/markdown text, NULL derives it from the value. */
void doc_cell_int(struct kp_table *tb, struct kp_cell *c, int64_t v, const char *human);
/* @v < 0 or not finite: unknown (null), shown as @human or "-". */
void doc_cell_num(struct kp_table *tb, struct kp_cell *c, double v, const char *human);
/* doc_cell_num() shown as units_fixed(): @v / @scale with @decimals decimals, "-" if < 0. */
void doc_cell_fixed(struct kp_table *tb, struct kp_cell *c, double v, double scale,
		       int decimals);
/* A signed number (deltas): only non-finite values are null. */
void doc_cell_signed(struct kp_table *tb, struct kp_cell *c, double v, const char *human);
/* @s borrowed (it must outlive the document); NULL is null. */
void doc_cell_str(struct kp_table *tb, struct kp_cell *c, const char *s, const char *human);
/* The tone of the last fact added (a gate verdict). */
void doc_fact_tone(struct kp_doc *doc, enum kp_tone tone);

/* A chart (json member @jkey) of @kind named @name (both borrowed); data follow. */
struct kp_chart *doc_chart(struct kp_doc *doc, const char *jkey, enum kp_chart_kind kind,
			      const char *name, const char *title);
/* The index of legend entry @name (borrowed), added when new; the last one when full. */
int chart_series(struct kp_chart *ch, const char *name);
/* Appenders: strings are copied into the document's arena; they return the new element. */
struct kp_cpoint *chart_point(struct kp_doc *doc, struct kp_chart *ch, double x, double y, double w,
			      int series, const char *label, const char *tip);
struct kp_cspan *chart_span(struct kp_doc *doc, struct kp_chart *ch, int lane, int series,
			    int64_t t0, int64_t t1, double fill, const char *label);
void chart_mark(struct kp_doc *doc, struct kp_chart *ch, double v, const char *label);
int chart_lane(struct kp_doc *doc, struct kp_chart *ch, const char *label);
/* The document's first chart named @name, NULL none. */
const struct kp_chart *doc_find_chart(const struct kp_doc *doc, const char *name);
/* The table/markdown text of cell @c ("-" for null), in @buf or the cell's (html.c too). */
const char *doc_cell_text(const struct kp_cell *c, char *buf, size_t cap);
/* The table/markdown text of a fact value ("4.812 ms", "42.8%"), in @buf or the value's. */
const char *doc_val_text(const struct kp_val *v, char *buf, size_t cap);

#endif /* KPROF_DOC_H */
