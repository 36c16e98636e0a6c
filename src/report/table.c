/*
 * table.c — the one renderer: a document as an aligned text table (with '#' fact
 * lines), RFC 4180 csv, json (through jsonw.c) or markdown.
 */
#include "kprof/table.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kprof/html.h"
#include "kprof/jsonw.h"
#include "kprof/svg.h"
#include "kprof/utf8.h"

/* ANSI SGR per tone: regressions red, improvements green, suspicious values yellow. */
static const char *const tone_sgr[] = {
	[TONE_NONE] = "",
	[TONE_BAD] = "\033[31m",
	[TONE_GOOD] = "\033[32m",
	[TONE_WARN] = "\033[33m",
};

int table_use_color(enum kp_color when, FILE *fp)
{
	if (when != COLOR_AUTO)
		return when == COLOR_ALWAYS;
	const char *no = getenv("NO_COLOR");
	return (!no || !*no) && isatty(fileno(fp));
}

long table_default_top(enum kp_format fmt)
{
	return fmt == FMT_TABLE || fmt == FMT_MARKDOWN ? 20 : 0;
}

static const struct kp_cell *cell_at(const struct kp_table *tb, size_t row, int col)
{
	return &tb->cells[row * (size_t)tb->ncols + (size_t)col];
}

/* ---- csv ---- */

/*
 * A string field: escaped (utf8_visible), a would-be formula quoted with a leading "'"
 * so it reads as text, quoted when it holds ',', '"' or a line break (RFC 4180).
 */
static void csv_put(FILE *fp, const char *s, struct kp_visbuf *vb)
{
	s = utf8_visible(s, vb);
	int formula = utf8_csv_formula(s);
	if (!formula && !strpbrk(s, ",\"\r\n")) {
		fputs(s, fp);
		return;
	}
	fputc('"', fp);
	if (formula)
		fputc('\'', fp);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', fp);
		fputc(*s, fp);
	}
	fputc('"', fp);
}

void table_csv_field(FILE *fp, const char *s)
{
	struct kp_visbuf vb = { 0 };
	csv_put(fp, s, &vb);
	utf8_visible_free(&vb);
}

static void render_csv(const struct kp_table *tb, FILE *fp)
{
	char buf[40];
	struct kp_visbuf vb = { 0 };
	int first = 1;
	for (int j = 0; j < tb->ncols; j++) {
		if (!(tb->cols[j].where & COL_MACHINE))
			continue;
		fprintf(fp, "%s%s", first ? "" : ",", tb->cols[j].key);
		first = 0;
	}
	fputs("\r\n", fp);
	for (size_t i = 0; i < tb->nrows; i++) {
		first = 1;
		for (int j = 0; j < tb->ncols; j++) {
			const struct kp_cell *c = cell_at(tb, i, j);
			if (!(tb->cols[j].where & COL_MACHINE))
				continue;
			if (!first)
				fputc(',', fp);
			first = 0;
			switch (c->type) {
			case CELL_INT:
				fprintf(fp, "%" PRId64, c->i);
				break;
			case CELL_NUM:
				fputs(jw_format_double(buf, sizeof(buf), c->d), fp);
				break;
			case CELL_STR:
				csv_put(fp, c->s, &vb);
				break;
			default:
				break; /* empty field = unknown */
			}
		}
		fputs("\r\n", fp);
	}
	utf8_visible_free(&vb);
}

/* ---- json ---- */

static void json_rows(struct kp_jw *jw, const char *jkey, const struct kp_table *tb)
{
	jw_array_begin(jw, jkey, 1);
	for (size_t i = 0; i < tb->nrows; i++) {
		jw_object_begin(jw, NULL, 0);
		for (int j = 0; j < tb->ncols; j++) {
			const struct kp_cell *c = cell_at(tb, i, j);
			const char *k = tb->cols[j].key;
			if (!(tb->cols[j].where & COL_MACHINE))
				continue;
			switch (c->type) {
			case CELL_INT:
				jw_int(jw, k, c->i);
				break;
			case CELL_NUM:
				jw_double(jw, k, c->d);
				break;
			case CELL_STR:
				jw_string(jw, k, c->s);
				break;
			default:
				jw_null(jw, k);
				break;
			}
		}
		jw_end(jw);
	}
	jw_end(jw);
}

static void json_val(struct kp_jw *jw, const char *jkey, const struct kp_val *v)
{
	switch (v->type) {
	case VAL_TEXT:
		jw_string(jw, jkey, v->s);
		break;
	case VAL_COUNT:
	case VAL_TIME:
		jw_int(jw, jkey, v->i);
		break;
	case VAL_NUM:
	case VAL_PCT:
	case VAL_RATE:
		jw_double(jw, jkey, v->d);
		break;
	case VAL_BOOL:
		jw_bool(jw, jkey, (int)v->i);
		break;
	default:
		jw_null(jw, jkey);
		break;
	}
}

static const char *const chart_kinds[] = {
	[CHART_ROOFLINE] = "roofline", [CHART_TOP] = "top",
	[CHART_TIMELINE] = "timeline", [CHART_WATERFALL] = "waterfall",
	[CHART_DUMBBELL] = "dumbbell", [CHART_LIST] = "list",
	[CHART_ICICLE] = "icicle",     [CHART_MEMORY] = "memory",     [CHART_LINES] = "lines",
};

static void json_chart(struct kp_jw *jw, const char *jkey, const struct kp_chart *ch)
{
	jw_object_begin(jw, jkey, 1);
	jw_string(jw, "kind", chart_kinds[ch->kind]);
	jw_string(jw, "title", ch->title);
	if (ch->note)
		jw_string(jw, "note", ch->note);
	jw_array_begin(jw, "series", 0);
	for (int i = 0; i < ch->nseries; i++)
		jw_string(jw, NULL, ch->series[i]);
	jw_end(jw);
	if (ch->kind == CHART_ROOFLINE)
		jw_double(jw, "dram_bytes_per_s", ch->bw > 0 ? ch->bw : NAN);
	if (ch->kind == CHART_TIMELINE)
		jw_int(jw, "end_ns", ch->x1);
	if (ch->kind == CHART_ICICLE)
		jw_int(jw, "gpu_time_ns", ch->x1);
	if (ch->kind == CHART_MEMORY)
		jw_int(jw, "end_ns", ch->x1);
	if (ch->kind == CHART_LINES)
		jw_string(jw, "unit", ch->yunit);
	jw_array_begin(jw, "lanes", 0);
	for (size_t i = 0; i < ch->nlanes; i++)
		jw_string(jw, NULL, ch->lanes[i]);
	jw_end(jw);
	jw_array_begin(jw, "marks", 1);
	for (size_t i = 0; i < ch->nmarks; i++) {
		jw_object_begin(jw, NULL, 0);
		jw_double(jw, "v", ch->marks[i].v);
		jw_string(jw, "label", ch->marks[i].label);
		jw_end(jw);
	}
	jw_end(jw);
	jw_array_begin(jw, "points", 1);
	for (size_t i = 0; i < ch->npts; i++) {
		const struct kp_cpoint *p = &ch->pts[i];
		jw_object_begin(jw, NULL, 0);
		jw_double(jw, "x", p->x);
		jw_double(jw, "y", p->y);
		jw_double(jw, "w", p->w);
		jw_int(jw, "series", p->series);
		jw_string(jw, "label", p->label);
		if (ch->kind == CHART_LINES) {
			jw_bool(jw, "accuracy_failed", p->flag);
			jw_string(jw, "tip", p->tip);
		}
		jw_end(jw);
	}
	jw_end(jw);
	jw_array_begin(jw, "spans", 1);
	for (size_t i = 0; i < ch->nspans; i++) {
		const struct kp_cspan *s = &ch->spans[i];
		jw_object_begin(jw, NULL, 0);
		jw_int(jw, "lane", s->lane);
		jw_int(jw, "series", s->series);
		jw_int(jw, "t0_ns", s->t0);
		jw_int(jw, "t1_ns", s->t1);
		jw_double(jw, "fill", s->fill);
		jw_string(jw, "label", s->label);
		if (s->tip)
			jw_string(jw, "tip", s->tip);
		jw_end(jw);
	}
	jw_end(jw);
	jw_end(jw);
}

static void render_json(const struct kp_doc *doc, FILE *fp)
{
	struct kp_jw jw;
	jw_init(&jw, fp);
	jw_object_begin(&jw, NULL, 1);
	jw_object_begin(&jw, "kprof", 0);
	jw_string(&jw, "version", KPROF_VERSION);
	jw_string(&jw, "command", doc->command);
	jw_end(&jw);
	int depth = 0;
	for (size_t i = 0; i < doc->nitems; i++) {
		const struct kp_item *it = &doc->items[i];
		switch (it->type) {
		case ITEM_FACT:
			if (depth || it->jkey)
				json_val(&jw, it->jkey, &it->v);
			break;
		case ITEM_OBJECT:
			jw_object_begin(&jw, it->jkey, 0);
			depth++;
			break;
		case ITEM_ARRAY:
			jw_array_begin(&jw, it->jkey, it->lines);
			depth++;
			break;
		case ITEM_END:
			jw_end(&jw);
			depth--;
			break;
		case ITEM_TABLE:
			if (depth || it->jkey) /* no json key at the top: a table for people */
				json_rows(&jw, it->jkey, it->table);
			break;
		case ITEM_CHART:
			json_chart(&jw, it->jkey, it->chart);
			break;
		}
	}
	while (jw.depth)
		jw_end(&jw);
	fputc('\n', fp);
}

/* ---- table and markdown ---- */

/*
 * A code span holding @s: a fence longer than any backtick run in it, '|' escaped for tables;
 * line breaks and control characters escaped (utf8_visible), so a name cannot end the table
 */
static void md_code(FILE *fp, const char *s, struct kp_visbuf *vb)
{
	s = utf8_visible(s, vb);
	int run = 0, longest = 0;
	for (const char *p = s; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	size_t n = strlen(s);
	int pad = n && (s[0] == '`' || s[n - 1] == '`');
	for (int k = 0; k <= longest; k++)
		fputc('`', fp);
	if (pad)
		fputc(' ', fp);
	for (const char *p = s; *p; p++) {
		if (*p == '|')
			fputc('\\', fp);
		fputc(*p, fp);
	}
	if (pad)
		fputc(' ', fp);
	for (int k = 0; k <= longest; k++)
		fputc('`', fp);
}

/*
 * @s as markdown text: escaped (utf8_visible), '|' and the bytes of @special backslash-escaped
 * ("<": a name cannot open an html tag; column titles are kprof's own, "GPU<CPU" stays)
 */
static void md_text(FILE *fp, const char *s, const char *special, struct kp_visbuf *vb)
{
	for (s = utf8_visible(s, vb); *s; s++) {
		if (*s == '|' || strchr(special, *s))
			fputc('\\', fp);
		fputc(*s, fp);
	}
}

static void render_markdown_table(const struct kp_table *tb, FILE *fp, struct kp_visbuf *vb)
{
	char buf[128];
	for (int pass = 0; pass < 2; pass++) {
		fputc('|', fp);
		for (int j = 0; j < tb->ncols; j++) {
			const struct kp_col *c = &tb->cols[j];
			if (!(c->where & COL_HUMAN))
				continue;
			fputc(' ', fp);
			md_text(fp, pass ? (c->text ? "---" : "---:") : c->title, "", vb); /* Comm||Comp */
			fputs(" |", fp);
		}
		fputc('\n', fp);
	}
	for (size_t i = 0; i < tb->nrows; i++) {
		fputc('|', fp);
		for (int j = 0; j < tb->ncols; j++) {
			const struct kp_col *col = &tb->cols[j];
			const struct kp_cell *c = cell_at(tb, i, j);
			if (!(col->where & COL_HUMAN))
				continue;
			const char *s = doc_cell_text(c, buf, sizeof(buf));
			fputc(' ', fp);
			if (col->text && c->type == CELL_STR)
				md_code(fp, s, vb);
			else
				md_text(fp, s, "<", vb);
			fputs(" |", fp);
		}
		fputc('\n', fp);
	}
}

/* @s escaped (utf8_visible), padded to @width bytes */
static void put_field(FILE *fp, const char *s, int width, int left, enum kp_tone tone, int color,
		      struct kp_visbuf *vb)
{
	int on = color && tone != TONE_NONE;
	if (on)
		fputs(tone_sgr[tone], fp);
	fprintf(fp, left ? "%-*s" : "%*s", width, utf8_visible(s, vb));
	if (on)
		fputs("\033[m", fp);
}

static void render_text_table(const struct kp_table *tb, int color, FILE *fp, struct kp_visbuf *vb)
{
	int *w = xcalloc((size_t)tb->ncols, sizeof(*w));
	char buf[128];
	int last = -1;
	for (int j = 0; j < tb->ncols; j++)
		if (tb->cols[j].where & COL_HUMAN)
			last = j;
	for (int j = 0; j < tb->ncols; j++) {
		if (!(tb->cols[j].where & COL_HUMAN))
			continue;
		w[j] = (int)strlen(tb->cols[j].title);
		/* every column but a last text one is padded to its widest cell */
		for (size_t i = 0; i < tb->nrows && !(tb->cols[j].text && j == last); i++) {
			const char *s = doc_cell_text(cell_at(tb, i, j), buf, sizeof(buf));
			size_t n = utf8_visible_len(s);
			if (n > (size_t)w[j])
				w[j] = n > INT_MAX ? INT_MAX : (int)n;
		}
	}
	for (int pass = 0; pass < 2; pass++) {
		fputs("  ", fp);
		for (int j = 0; j < tb->ncols; j++) {
			const struct kp_col *c = &tb->cols[j];
			if (!(c->where & COL_HUMAN))
				continue;
			if (pass == 0) {
				fprintf(fp, c->text ? "%-*s" : "%*s",
					c->text && j == last ? 0 : w[j], c->title);
			} else {
				int n = c->text && j == last ? (int)strlen(c->title) : w[j];
				for (int k = 0; k < n; k++)
					fputc('=', fp);
			}
			if (j != last)
				fputs("  ", fp);
		}
		fputc('\n', fp);
	}
	for (size_t i = 0; i < tb->nrows; i++) {
		fputs("  ", fp);
		for (int j = 0; j < tb->ncols; j++) {
			const struct kp_col *col = &tb->cols[j];
			const struct kp_cell *c = cell_at(tb, i, j);
			if (!(col->where & COL_HUMAN))
				continue;
			const char *s = doc_cell_text(c, buf, sizeof(buf));
			put_field(fp, s, col->text && j == last ? 0 : w[j], col->text, c->tone,
				  color, vb);
			if (j != last)
				fputs("  ", fp);
		}
		fputc('\n', fp);
	}
	free(w);
}

static void render_text(const struct kp_doc *doc, int color, FILE *fp)
{
	char buf[64];
	struct kp_visbuf vb = { 0 };
	int depth = 0;
	for (size_t i = 0; i < doc->nitems; i++) {
		const struct kp_item *it = &doc->items[i];
		if (it->type == ITEM_OBJECT || it->type == ITEM_ARRAY)
			depth++;
		else if (it->type == ITEM_END)
			depth--;
		else if (depth)
			continue;
		else if (it->type == ITEM_FACT && it->key)
			fprintf(fp, "# %-*s  %s\n", doc->key_width, it->key,
				utf8_visible(doc_val_text(&it->v, buf, sizeof(buf)), &vb));
		else if (it->type == ITEM_TABLE && it->table->nrows)
			render_text_table(it->table, color, fp, &vb);
	}
	utf8_visible_free(&vb);
}

static void render_markdown(const struct kp_doc *doc, FILE *fp)
{
	char buf[64];
	struct kp_visbuf vb = { 0 };
	int depth = 0, prev = 0; /* what came last: 0 the title, 1 a list, 2 a table */
	fprintf(fp, "**kprof %s**", doc->command);
	if (doc->summary) {
		fputs(": ", fp);
		md_text(fp, doc->summary, "<", &vb);
	}
	fputs("\n\n", fp);
	for (size_t i = 0; i < doc->nitems; i++) {
		const struct kp_item *it = &doc->items[i];
		if (it->type == ITEM_OBJECT || it->type == ITEM_ARRAY) {
			depth++;
		} else if (it->type == ITEM_END) {
			depth--;
		} else if (depth) {
			continue;
		} else if (it->type == ITEM_FACT && it->key) {
			if (prev == 2)
				fputc('\n', fp);
			fprintf(fp, "- %s: ", it->key);
			md_text(fp, doc_val_text(&it->v, buf, sizeof(buf)), "<", &vb);
			fputc('\n', fp);
			prev = 1;
		} else if (it->type == ITEM_TABLE) {
			if (prev)
				fputc('\n', fp);
			render_markdown_table(it->table, fp, &vb);
			prev = 2;
		}
	}
	utf8_visible_free(&vb);
}

void table_render(const struct kp_doc *doc, enum kp_format fmt, int color, FILE *fp)
{
	switch (fmt) {
	case FMT_CSV:
		for (size_t i = 0; i < doc->nitems; i++)
			if (doc->items[i].type == ITEM_TABLE) {
				render_csv(doc->items[i].table, fp);
				break;
			}
		break;
	case FMT_JSON:
		render_json(doc, fp);
		break;
	case FMT_MARKDOWN:
		render_markdown(doc, fp);
		break;
	case FMT_HTML:
		html_render(doc, fp);
		break;
	case FMT_SVG:
		for (size_t i = 0; i < doc->nitems; i++)
			if (doc->items[i].type == ITEM_CHART && svg_drawable(doc->items[i].chart)) {
				svg_chart(doc->items[i].chart, 1, fp);
				break;
			}
		break;
	default:
		render_text(doc, color, fp);
		break;
	}
}
