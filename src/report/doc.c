/*
 * doc.c — build the document: typed header facts, json nesting, tables of cells.
 */
#include "kprof/doc.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/units.h"
#include "kprof/utf8.h"

void doc_init(struct kp_doc *doc, const char *command, int key_width)
{
	memset(doc, 0, sizeof(*doc));
	arena_init(&doc->arena);
	doc->command = command;
	doc->key_width = key_width;
}

void doc_free(struct kp_doc *doc)
{
	for (size_t i = 0; i < doc->nitems; i++) {
		if (doc->items[i].table)
			free(doc->items[i].table->cells);
		struct kp_chart *ch = doc->items[i].chart;
		if (ch) {
			free(ch->pts);
			free(ch->spans);
			free(ch->marks);
			free(ch->lanes);
		}
	}
	free(doc->items);
	arena_free(&doc->arena);
	memset(doc, 0, sizeof(*doc));
}

static char *vfmt(struct kp_arena *a, const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	char *s = arena_alloc(a, (size_t)(n < 0 ? 0 : n) + 1);
	vsnprintf(s, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap);
	return s;
}

void doc_summary(struct kp_doc *doc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	doc->summary = vfmt(&doc->arena, fmt, ap);
	va_end(ap);
}

static struct kp_item *add_item(struct kp_doc *doc, enum kp_item_type type, const char *key,
				const char *jkey)
{
	if (doc->nitems == doc->capitems) {
		doc->capitems = doc->capitems ? doc->capitems * 2 : 32;
		doc->items = xrealloc(doc->items, doc->capitems * sizeof(*doc->items));
	}
	struct kp_item *it = &doc->items[doc->nitems++];
	memset(it, 0, sizeof(*it));
	it->type = type;
	it->key = doc->depth ? NULL : key;
	it->jkey = jkey;
	return it;
}

static void fact(struct kp_doc *doc, const char *key, const char *jkey, struct kp_val v)
{
	add_item(doc, ITEM_FACT, key, jkey)->v = v;
}

/*
 * A copy of @s in @a.  Names are clean UTF-8 (utf8_clean() when read), but a caller's fixed
 * buffer may have cut one inside a sequence: the partial sequence at the end is dropped.
 */
static char *text_copy(struct kp_arena *a, const char *s)
{
	char *d = arena_strdup(a, s);
	size_t len = strlen(d);
	d[utf8_prefix(d, len, len)] = '\0';
	return d;
}

void doc_fact_text(struct kp_doc *doc, const char *key, const char *jkey, const char *s)
{
	fact(doc, key, jkey,
	     (struct kp_val){ .type = s ? VAL_TEXT : VAL_NULL,
			      .s = s ? text_copy(&doc->arena, s) : NULL });
}

void doc_fact_textf(struct kp_doc *doc, const char *key, const char *jkey, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = vfmt(&doc->arena, fmt, ap);
	va_end(ap);
	fact(doc, key, jkey, (struct kp_val){ .type = VAL_TEXT, .s = s });
}

void doc_fact_count(struct kp_doc *doc, const char *key, const char *jkey, int64_t n)
{
	fact(doc, key, jkey, (struct kp_val){ .type = VAL_COUNT, .i = n });
}

void doc_fact_time(struct kp_doc *doc, const char *key, const char *jkey, int64_t ns)
{
	fact(doc, key, jkey, (struct kp_val){ .type = VAL_TIME, .i = ns });
}

void doc_fact_num(struct kp_doc *doc, const char *key, const char *jkey, double v)
{
	fact(doc, key, jkey, (struct kp_val){ .type = isfinite(v) ? VAL_NUM : VAL_NULL, .d = v });
}

void doc_fact_pct(struct kp_doc *doc, const char *key, const char *jkey, double pct)
{
	fact(doc, key, jkey,
	     (struct kp_val){ .type = isfinite(pct) ? VAL_PCT : VAL_NULL, .d = pct });
}

void doc_fact_rate(struct kp_doc *doc, const char *key, const char *jkey, double per_s,
		      const char *unit)
{
	fact(doc, key, jkey,
	     (struct kp_val){
		     .type = isfinite(per_s) ? VAL_RATE : VAL_NULL, .d = per_s, .s = unit });
}

void doc_fact_bool(struct kp_doc *doc, const char *key, const char *jkey, int v)
{
	fact(doc, key, jkey, (struct kp_val){ .type = VAL_BOOL, .i = v != 0 });
}

void doc_fact_null(struct kp_doc *doc, const char *key, const char *jkey)
{
	fact(doc, key, jkey, (struct kp_val){ .type = VAL_NULL });
}

void doc_object(struct kp_doc *doc, const char *jkey)
{
	add_item(doc, ITEM_OBJECT, NULL, jkey);
	doc->depth++;
}

void doc_array(struct kp_doc *doc, const char *jkey, int lines)
{
	add_item(doc, ITEM_ARRAY, NULL, jkey)->lines = lines;
	doc->depth++;
}

void doc_end(struct kp_doc *doc)
{
	if (doc->depth == 0)
		return;
	add_item(doc, ITEM_END, NULL, NULL);
	doc->depth--;
}

struct kp_table *doc_table(struct kp_doc *doc, const char *jkey, const struct kp_col *cols,
			      int ncols)
{
	struct kp_table *tb = arena_zalloc(&doc->arena, sizeof(*tb));
	tb->arena = &doc->arena;
	tb->ncols = ncols;
	tb->cols = arena_alloc(&doc->arena, (size_t)ncols * sizeof(*cols));
	memcpy(tb->cols, cols, (size_t)ncols * sizeof(*cols));
	add_item(doc, ITEM_TABLE, NULL, jkey)->table = tb;
	return tb;
}

void doc_col_show(struct kp_table *tb, int col, unsigned where)
{
	tb->cols[col].where = where;
}

void doc_col_title(struct kp_table *tb, int col, const char *title)
{
	tb->cols[col].title = title;
}

struct kp_cell *doc_row(struct kp_table *tb)
{
	if (tb->nrows == tb->caprows) {
		tb->caprows = tb->caprows ? tb->caprows * 2 : 64;
		tb->cells = xrealloc(tb->cells,
				     tb->caprows * (size_t)tb->ncols * sizeof(*tb->cells));
	}
	struct kp_cell *c = &tb->cells[tb->nrows++ * (size_t)tb->ncols];
	memset(c, 0, (size_t)tb->ncols * sizeof(*c));
	return c;
}

static const char *copy(struct kp_table *tb, const char *s)
{
	return s ? text_copy(tb->arena, s) : NULL;
}

void doc_cell_int(struct kp_table *tb, struct kp_cell *c, int64_t v, const char *human)
{
	c->type = CELL_INT;
	c->i = v;
	c->human = copy(tb, human);
}

void doc_cell_num(struct kp_table *tb, struct kp_cell *c, double v, const char *human)
{
	c->type = isfinite(v) && v >= 0 ? CELL_NUM : CELL_NULL;
	c->d = v;
	c->human = copy(tb, human);
}

void doc_cell_fixed(struct kp_table *tb, struct kp_cell *c, double v, double scale, int decimals)
{
	char b[128];
	doc_cell_num(tb, c, v, units_fixed(b, sizeof(b), v, scale, decimals));
}

void doc_cell_signed(struct kp_table *tb, struct kp_cell *c, double v, const char *human)
{
	c->type = isfinite(v) ? CELL_NUM : CELL_NULL;
	c->d = v;
	c->human = copy(tb, human);
}

void doc_cell_str(struct kp_table *tb, struct kp_cell *c, const char *s, const char *human)
{
	c->type = s ? CELL_STR : CELL_NULL;
	c->s = s;
	c->human = copy(tb, human);
}

void doc_fact_tone(struct kp_doc *doc, enum kp_tone tone)
{
	if (doc->nitems && doc->items[doc->nitems - 1].type == ITEM_FACT)
		doc->items[doc->nitems - 1].tone = tone;
}

struct kp_chart *doc_chart(struct kp_doc *doc, const char *jkey, enum kp_chart_kind kind,
			      const char *name, const char *title)
{
	struct kp_chart *ch = arena_zalloc(&doc->arena, sizeof(*ch));
	ch->kind = kind;
	ch->name = name;
	ch->title = title;
	add_item(doc, ITEM_CHART, NULL, jkey)->chart = ch;
	return ch;
}

int chart_series(struct kp_chart *ch, const char *name)
{
	for (int i = 0; i < ch->nseries; i++)
		if (!strcmp(ch->series[i], name))
			return i;
	if (ch->nseries == CHART_SERIES_MAX)
		return CHART_SERIES_MAX - 1;
	ch->series[ch->nseries] = name;
	return ch->nseries++;
}

struct kp_cpoint *chart_point(struct kp_doc *doc, struct kp_chart *ch, double x, double y, double w,
			      int series, const char *label, const char *tip)
{
	ch->pts = xgrow(ch->pts, ch->npts, &ch->cappts, 16, sizeof(*ch->pts));
	struct kp_cpoint *p = &ch->pts[ch->npts++];
	*p = (struct kp_cpoint){ .x = x,
				 .y = y,
				 .w = w,
				 .series = series,
				 .label = label ? arena_strdup(&doc->arena, label) : NULL,
				 .tip = tip ? arena_strdup(&doc->arena, tip) : NULL };
	return p;
}

struct kp_cspan *chart_span(struct kp_doc *doc, struct kp_chart *ch, int lane, int series,
			    int64_t t0, int64_t t1, double fill, const char *label)
{
	ch->spans = xgrow(ch->spans, ch->nspans, &ch->capspans, 16, sizeof(*ch->spans));
	struct kp_cspan *s = &ch->spans[ch->nspans++];
	*s = (struct kp_cspan){ .lane = lane,
				.series = series,
				.t0 = t0,
				.t1 = t1,
				.fill = fill,
				.label = label ? arena_strdup(&doc->arena, label) : NULL };
	return s;
}

void chart_mark(struct kp_doc *doc, struct kp_chart *ch, double v, const char *label)
{
	ch->marks = xgrow(ch->marks, ch->nmarks, &ch->capmarks, 16, sizeof(*ch->marks));
	ch->marks[ch->nmarks++] = (struct kp_cmark){ .v = v,
						     .label = arena_strdup(&doc->arena, label) };
}

int chart_lane(struct kp_doc *doc, struct kp_chart *ch, const char *label)
{
	ch->lanes = xgrow(ch->lanes, ch->nlanes, &ch->caplanes, 16, sizeof(*ch->lanes));
	ch->lanes[ch->nlanes] = arena_strdup(&doc->arena, label);
	return (int)ch->nlanes++;
}

const struct kp_chart *doc_find_chart(const struct kp_doc *doc, const char *name)
{
	for (size_t i = 0; i < doc->nitems; i++)
		if (doc->items[i].type == ITEM_CHART && !strcmp(doc->items[i].chart->name, name))
			return doc->items[i].chart;
	return NULL;
}

const char *doc_cell_text(const struct kp_cell *c, char *buf, size_t cap)
{
	if (c->human)
		return c->human;
	switch (c->type) {
	case CELL_INT:
		snprintf(buf, cap, "%" PRId64, c->i);
		return buf;
	case CELL_NUM:
		snprintf(buf, cap, "%.1f", c->d);
		return buf;
	case CELL_STR:
		return c->s;
	default:
		return "-";
	}
}

const char *doc_val_text(const struct kp_val *v, char *buf, size_t cap)
{
	switch (v->type) {
	case VAL_TEXT:
		return v->s;
	case VAL_COUNT:
		snprintf(buf, cap, "%" PRId64, v->i);
		return buf;
	case VAL_TIME:
		return units_time(buf, cap, v->i);
	case VAL_NUM:
		snprintf(buf, cap, "%g", v->d);
		return buf;
	case VAL_PCT:
		snprintf(buf, cap, "%.1f%%", v->d);
		return buf;
	case VAL_RATE:
		return units_rate(buf, cap, v->d, v->s);
	case VAL_BOOL:
		return v->i ? "yes" : "no";
	default:
		return "-";
	}
}
