/*
 * sort.c — parse --sort key lists and sort report rows with one comparator: analyze's rows
 * here, any other table's through the row readers its owner passes to sort_rows() (diff's in
 * diff-sort.c, so sort.c knows nothing of diff.c).
 */
#include "kprof/sort.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/analyze.h"
#include "kprof/metric.h"

/* diff's keys; analyze's are the figures of metric.h with a --sort key */
struct keydef {
	const char *name;
	int text; /* compared as text, ascending by default */
};

static const struct keydef diff_keys[DK_N] = {
	[DK_DELTA_ABS] = { "delta-abs", 0 },
	[DK_DELTA] = { "delta", 0 },
	[DK_RATIO] = { "ratio", 0 },
	[DK_SHARE] = { "share", 0 },
	[DK_BASE] = { "base", 0 },
	[DK_NEW] = { "new", 0 },
	[DK_BASE_CALLS] = { "base-calls", 0 },
	[DK_NEW_CALLS] = { "new-calls", 0 },
	[DK_NAME] = { "name", 1 },
};

static const char *const dflt[] = { [SORT_ANALYZE] = "time", [SORT_DIFF] = "delta-abs" };

/* distinct keys always fit: repeats are dropped in sort_parse() */
_Static_assert(METRIC_N <= SORT_MAX_KEYS && DK_N <= SORT_MAX_KEYS, "SORT_MAX_KEYS below a table");

/* The key at place @i of @table's list (its id: enum kp_metric_id or kp_diff_key), -1 past the end. */
static int key_at(enum kp_sort_table table, int i)
{
	if (table == SORT_ANALYZE)
		return metric_sort_key_at(i);
	return i < DK_N ? i : -1;
}

static const char *key_name(enum kp_sort_table table, int k)
{
	return table == SORT_ANALYZE ? metric_table[k].sort : diff_keys[k].name;
}

/* compared as text, ascending by default */
static int key_text(enum kp_sort_table table, int k)
{
	return table == SORT_ANALYZE ? metric_table[k].form == MF_TEXT : diff_keys[k].text;
}

static int key_find(enum kp_sort_table table, const char *name)
{
	if (table == SORT_ANALYZE)
		return metric_by_sort_key(name);
	for (int k = 0; k < DK_N; k++)
		if (!strcmp(diff_keys[k].name, name))
			return k;
	return -1;
}

int sort_parse(struct kp_sort_spec *sp, enum kp_sort_table table, const char *spec,
	       const char **bad)
{
	static char badbuf[64];
	const char *p = spec && *spec ? spec : dflt[table];
	memset(sp, 0, sizeof(*sp));
	sp->table = table;
	while (*p) {
		size_t len = strcspn(p, ",");
		char tok[48];
		snprintf(tok, sizeof(tok), "%.*s", (int)len, p);
		char *colon = strchr(tok, ':');
		int dir = 0; /* the key's own direction */
		if (colon) {
			*colon = '\0';
			if (!strcmp(colon + 1, "asc")) {
				dir = 1;
			} else if (!strcmp(colon + 1, "desc")) {
				dir = 2;
			} else {
				snprintf(badbuf, sizeof(badbuf), "%.30s:%.30s", tok, colon + 1);
				*bad = badbuf;
				return -1;
			}
		}
		int k = key_find(table, tok);
		if (k < 0) {
			snprintf(badbuf, sizeof(badbuf), "%s", tok);
			*bad = badbuf;
			return -1;
		}
		/* a repeated key never breaks a tie the first one left: the first one counts */
		int seen = 0;
		for (int i = 0; i < sp->n; i++)
			seen |= sp->k[i].key == k;
		if (!seen) {
			sp->k[sp->n].key = k;
			sp->k[sp->n].desc = dir ? dir == 2 : !key_text(table, k);
			sp->n++;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

char *sort_key_list(enum kp_sort_table table, const char *sep, char *buf, size_t cap)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0, k; (k = key_at(table, i)) >= 0 && n < cap; i++)
		n += snprintf(buf + n, cap - n, "%s%s", i ? sep : "", key_name(table, k));
	return buf;
}

const char *sort_suggest(enum kp_sort_table table, const char *bad)
{
	const char *hint = NULL;
	size_t n = strlen(bad);
	for (int i = 0, k; (k = key_at(table, i)) >= 0; i++) {
		const char *name = key_name(table, k);
		size_t m = strlen(name);
		if (n >= 3 && !strncmp(bad, name, n < m ? n : m))
			hint = name;
	}
	return hint;
}

/* ---- one comparator, per-table accessors ---- */

struct sorter {
	const struct kp_sort_spec *sp;
	const struct kp_sort_rows *rd;
};

static int cmp_rows(const void *a, const void *b, void *arg)
{
	const struct sorter *s = arg;
	const struct kp_sort_rows *rd = s->rd;
	int fa = rd->folded(a), fb = rd->folded(b);
	if (fa != fb)
		return fa ? 1 : -1;
	enum kp_sort_table table = s->sp->table;
	int name_key = table == SORT_ANALYZE ? METRIC_NAME : DK_NAME;
	for (int i = 0; i < s->sp->n; i++) {
		int k = s->sp->k[i].key, c;
		if (key_text(table, k)) {
			c = strcmp(rd->text(a, k), rd->text(b, k));
		} else {
			double u = rd->num(a, k), v = rd->num(b, k);
			c = u < v ? -1 : u > v;
		}
		if (c)
			return s->sp->k[i].desc ? -c : c;
	}
	int c = strcmp(rd->text(a, name_key), rd->text(b, name_key));
	return c ? c : strcmp(rd->text(a, -1), rd->text(b, -1));
}

/* analyze's rows: the figure's reader (metric.h); key -1 is the grouping key */
static double analyze_num(const void *row, int key)
{
	return metric_num(row, key);
}

static const char *analyze_text(const void *row, int key)
{
	const struct kp_row *r = row;
	return key < 0 ? r->key : metric_text(r, key);
}

static int analyze_folded(const void *row)
{
	return (((const struct kp_row *)row)->flags & ROW_OTHERS) != 0;
}

void sort_rows(void *rows, size_t n, size_t size, const struct kp_sort_spec *sp,
	       const struct kp_sort_rows *rd)
{
	struct sorter s = { sp, rd };
	if (n)
		qsort_r(rows, n, size, cmp_rows, &s);
}

void sort_analyze(struct kp_report *r, const struct kp_sort_spec *sp)
{
	static const struct kp_sort_rows rd = { analyze_num, analyze_text, analyze_folded };
	sort_rows(r->rows, r->nrows, sizeof(*r->rows), sp, &rd);
}
