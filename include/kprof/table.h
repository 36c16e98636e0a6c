/*
 * table.h — the one renderer: a document (doc.h) as an aligned text table,
 * RFC 4180 csv, json or markdown.
 */
#ifndef KPROF_TABLE_H
#define KPROF_TABLE_H

#include <stdio.h>

#include "kprof/doc.h"

/* In the order of the --format choices (cmd-analyze.c, cmd-diff.c). */
/* FMT_FOLDED: kprof analyze -g module|source only (report_folded_write(), not a table format) */
enum kp_format { FMT_TABLE = 0, FMT_CSV, FMT_JSON, FMT_MARKDOWN, FMT_HTML, FMT_SVG, FMT_FOLDED };

/* --color=WHEN, in the order of the option's choices. */
enum kp_color { COLOR_AUTO = 0, COLOR_ALWAYS, COLOR_NEVER };

/* Prototypes */
/*
 * Write @doc to @fp.
 *   table:    "# key  value" fact lines, then each table (if it has rows), name column last
 *             and unpadded; @color adds ANSI colours from the cells' tones.
 *   csv:      the first table only: a header row of keys, base units, empty = unknown.
 *   json:     {"kprof": {"version", "command"}, facts/objects/arrays/tables in order}.
 *   markdown: "**kprof <command>**: <summary>", facts as a list, pipe tables.
 *   html:     one self-contained page (html.h): facts, charts, sortable tables.
 *   svg:      the document's first chart that draws (svg.h), standalone.
 * Charts show in html, svg and json ("kind", "series", "points", "spans", "marks", "lanes").
 */
void table_render(const struct kp_doc *doc, enum kp_format fmt, int color, FILE *fp);
/*
 * Whether tables on @fp get colour: always, never, or (auto) when @fp is a terminal and
 * NO_COLOR is unset or empty (https://no-color.org: the option overrides the variable).
 */
int table_use_color(enum kp_color when, FILE *fp);
/* --top's default for @fmt: 20 rows for people (table, markdown), all for programs. */
long table_default_top(enum kp_format fmt);
/*
 * One CSV field as every kprof CSV writes one: escaped, quoted when it must be, a would-be
 * formula ("=...", "+...") quoted with a leading "'" (results-read.c reads it back).
 */
void table_csv_field(FILE *fp, const char *s);

#endif /* KPROF_TABLE_H */
