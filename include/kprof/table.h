/*
 * table.h — columns + cells and their renderers: table, csv, json, markdown.
 */
#ifndef KPROF_TABLE_H
#define KPROF_TABLE_H

#include <stdint.h>
#include <stdio.h>

#include "kprof/arena.h"

enum kp_format { FMT_TABLE = 0, FMT_CSV, FMT_JSON, FMT_MARKDOWN };

/* Where a column shows. */
#define COL_HUMAN 0x1   /* table and markdown */
#define COL_MACHINE 0x2 /* csv and json */
#define COL_BOTH 0x3

struct kp_col {
	const char *title;  /* table/markdown header, e.g. "TFLOP/s" */
	const char *key;    /* csv/json key, e.g. "flops_per_s" */
	unsigned where;     /* COL_* */
	int text;           /* left-aligned text column (the name column comes last) */
};

enum kp_cell_type { CELL_NULL = 0, CELL_INT, CELL_NUM, CELL_STR };

/* One cell: raw value for csv/json, text for humans. */
struct kp_cell {
	enum kp_cell_type type;
	int64_t i;
	double d;
	const char *s;      /* CELL_STR value */
	const char *human;  /* table/markdown text; NULL -> derived from the value ("-" for null) */
};

/* A table; cells are row-major, ncols per row; all strings in @arena. */
struct kp_table {
	struct kp_arena arena;
	int ncols;
	struct kp_col cols[32];
	struct kp_cell *cells;
	size_t nrows, caprows;
};

/* Prototypes */
void table_init(struct kp_table *tb);
int table_add_col(struct kp_table *tb, const char *title, const char *key, unsigned where, int text);
/* Append a row; returns its cells (ncols, zeroed = null). */
struct kp_cell *table_add_row(struct kp_table *tb);
void cell_int(struct kp_table *tb, struct kp_cell *c, int64_t v, const char *human);
void cell_num(struct kp_table *tb, struct kp_cell *c, double v, const char *human); /* v<0 and !human: null */
void cell_str(struct kp_table *tb, struct kp_cell *c, const char *s, const char *human);
/* Render the rows.  json: an array of row objects only (the caller writes the envelope). */
void table_render(const struct kp_table *tb, enum kp_format fmt, FILE *fp);
void table_free(struct kp_table *tb);

/* JSON writing helpers for envelopes */
void json_put_str(FILE *fp, const char *s);
void json_put_num(FILE *fp, double v);    /* null when not finite */
void json_put_i64(FILE *fp, int64_t v);

#endif /* KPROF_TABLE_H */
