/*
 * table.c — render a table of cells as an aligned text table, RFC 4180 csv, json or markdown.
 */
#include "kprof/table.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void table_init(struct kp_table *tb)
{
	memset(tb, 0, sizeof(*tb));
	arena_init(&tb->arena);
}

int table_add_col(struct kp_table *tb, const char *title, const char *key, unsigned where, int text)
{
	if (tb->ncols == 32)
		return -1;
	tb->cols[tb->ncols] = (struct kp_col){ title, key, where, text };
	return tb->ncols++;
}

struct kp_cell *table_add_row(struct kp_table *tb)
{
	if (tb->nrows == tb->caprows) {
		tb->caprows = tb->caprows ? tb->caprows * 2 : 64;
		tb->cells = xrealloc(tb->cells, tb->caprows * tb->ncols * sizeof(*tb->cells));
	}
	struct kp_cell *c = &tb->cells[tb->nrows++ * tb->ncols];
	memset(c, 0, tb->ncols * sizeof(*c));
	return c;
}

void cell_int(struct kp_table *tb, struct kp_cell *c, int64_t v, const char *human)
{
	c->type = CELL_INT;
	c->i = v;
	c->human = human ? arena_strdup(&tb->arena, human) : NULL;
}

void cell_num(struct kp_table *tb, struct kp_cell *c, double v, const char *human)
{
	c->type = isfinite(v) && v >= 0 ? CELL_NUM : CELL_NULL;
	c->d = v;
	c->human = human ? arena_strdup(&tb->arena, human) : NULL;
}

void cell_str(struct kp_table *tb, struct kp_cell *c, const char *s, const char *human)
{
	c->type = s ? CELL_STR : CELL_NULL;
	c->s = s;
	c->human = human ? arena_strdup(&tb->arena, human) : NULL;
}

static const char *human_text(const struct kp_cell *c, char *buf, size_t cap)
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

void json_put_str(FILE *fp, const char *s)
{
	if (!s) {
		fputs("null", fp);
		return;
	}
	fputc('"', fp);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", fp); break;
		case '\\': fputs("\\\\", fp); break;
		case '\n': fputs("\\n", fp); break;
		case '\t': fputs("\\t", fp); break;
		case '\r': fputs("\\r", fp); break;
		default:
			if (*p < 0x20)
				fprintf(fp, "\\u%04x", *p);
			else
				fputc(*p, fp);
		}
	}
	fputc('"', fp);
}

void json_put_num(FILE *fp, double v)
{
	if (!isfinite(v))
		fputs("null", fp);
	else if (v == floor(v) && fabs(v) < 9e15)
		fprintf(fp, "%.0f", v);
	else
		fprintf(fp, "%.17g", v);
}

void json_put_i64(FILE *fp, int64_t v)
{
	fprintf(fp, "%" PRId64, v);
}

static void csv_put(FILE *fp, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, fp);
		return;
	}
	fputc('"', fp);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', fp);
		fputc(*s, fp);
	}
	fputc('"', fp);
}

static void render_csv(const struct kp_table *tb, FILE *fp)
{
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
			const struct kp_cell *c = &tb->cells[i * tb->ncols + j];
			if (!(tb->cols[j].where & COL_MACHINE))
				continue;
			if (!first)
				fputc(',', fp);
			first = 0;
			switch (c->type) {
			case CELL_INT: fprintf(fp, "%" PRId64, c->i); break;
			case CELL_NUM: json_put_num(fp, c->d); break;
			case CELL_STR: csv_put(fp, c->s); break;
			default: break; /* empty field = unknown */
			}
		}
		fputs("\r\n", fp);
	}
}

static void render_json(const struct kp_table *tb, FILE *fp)
{
	fputc('[', fp);
	for (size_t i = 0; i < tb->nrows; i++) {
		fputs(i ? ",\n    {" : "\n    {", fp);
		int first = 1;
		for (int j = 0; j < tb->ncols; j++) {
			const struct kp_cell *c = &tb->cells[i * tb->ncols + j];
			if (!(tb->cols[j].where & COL_MACHINE))
				continue;
			fprintf(fp, "%s\"%s\": ", first ? "" : ", ", tb->cols[j].key);
			first = 0;
			switch (c->type) {
			case CELL_INT: fprintf(fp, "%" PRId64, c->i); break;
			case CELL_NUM: json_put_num(fp, c->d); break;
			case CELL_STR: json_put_str(fp, c->s); break;
			default: fputs("null", fp); break;
			}
		}
		fputc('}', fp);
	}
	fputs(tb->nrows ? "\n  ]" : "]", fp);
}

static void render_text(const struct kp_table *tb, FILE *fp, int markdown)
{
	int w[32] = { 0 };
	char buf[128];
	for (int j = 0; j < tb->ncols; j++)
		if (tb->cols[j].where & COL_HUMAN)
			w[j] = (int)strlen(tb->cols[j].title);
	for (size_t i = 0; i < tb->nrows; i++)
		for (int j = 0; j < tb->ncols; j++) {
			if (!(tb->cols[j].where & COL_HUMAN) || tb->cols[j].text)
				continue;
			int n = (int)strlen(human_text(&tb->cells[i * tb->ncols + j], buf, sizeof(buf)));
			if (n > w[j])
				w[j] = n;
		}
	int last = -1;
	for (int j = 0; j < tb->ncols; j++)
		if (tb->cols[j].where & COL_HUMAN)
			last = j;
	/* header */
	for (int pass = 0; pass < 2; pass++) {
		if (markdown)
			fputc('|', fp);
		else
			fputs("  ", fp);
		for (int j = 0; j < tb->ncols; j++) {
			const struct kp_col *c = &tb->cols[j];
			if (!(c->where & COL_HUMAN))
				continue;
			if (markdown) {
				if (pass == 0)
					fprintf(fp, " %s |", c->title);
				else
					fprintf(fp, " %s |", c->text ? "---" : "---:");
				continue;
			}
			int width = c->text && j == last ? 0 : w[j];
			if (pass == 0) {
				if (c->text)
					fprintf(fp, "%-*s", width, c->title);
				else
					fprintf(fp, "%*s", width, c->title);
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
		if (markdown)
			fputc('|', fp);
		else
			fputs("  ", fp);
		for (int j = 0; j < tb->ncols; j++) {
			const struct kp_col *c = &tb->cols[j];
			if (!(c->where & COL_HUMAN))
				continue;
			const char *s = human_text(&tb->cells[i * tb->ncols + j], buf, sizeof(buf));
			if (markdown) {
				if (c->text && tb->cells[i * tb->ncols + j].type == CELL_STR) {
					fputs(" `", fp);
					for (const char *p = s; *p; p++)
						fputc(*p == '|' || *p == '`' ? '\'' : *p, fp);
					fputs("` |", fp);
				} else {
					fprintf(fp, " %s |", s);
				}
				continue;
			}
			if (c->text && j == last)
				fputs(s, fp);
			else if (c->text)
				fprintf(fp, "%-*s", w[j], s);
			else
				fprintf(fp, "%*s", w[j], s);
			if (j != last)
				fputs("  ", fp);
		}
		fputc('\n', fp);
	}
}

void table_render(const struct kp_table *tb, enum kp_format fmt, FILE *fp)
{
	switch (fmt) {
	case FMT_CSV: render_csv(tb, fp); break;
	case FMT_JSON: render_json(tb, fp); break;
	case FMT_MARKDOWN: render_text(tb, fp, 1); break;
	default: render_text(tb, fp, 0); break;
	}
}

void table_free(struct kp_table *tb)
{
	free(tb->cells);
	arena_free(&tb->arena);
	memset(tb, 0, sizeof(*tb));
}
