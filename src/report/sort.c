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

struct keydef {
	const char *name;
	int text; /* compared as text, ascending by default */
};

static const struct keydef analyze_keys[AK_N] = {
	[AK_TIME] = { "time", 0 },
	[AK_CALLS] = { "calls", 0 },
	[AK_AVG] = { "avg", 0 },
	[AK_MIN] = { "min", 0 },
	[AK_MAX] = { "max", 0 },
	[AK_MED] = { "med", 0 },
	[AK_TFLOPS] = { "tflops", 0 },
	[AK_GBPS] = { "gbps", 0 },
	[AK_PCT_PEAK] = { "pct-peak", 0 },
	[AK_PCT_BW] = { "pct-bw", 0 },
	[AK_FLOPS] = { "flops", 0 },
	[AK_BYTES] = { "bytes", 0 },
	[AK_INTENSITY] = { "intensity", 0 },
	[AK_NAME] = { "name", 1 },
	[AK_OP] = { "op", 1 },
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

static const struct {
	const struct keydef *keys;
	int n;
	const char *dflt;
} tables[] = {
	[SORT_ANALYZE] = { analyze_keys, AK_N, "time" },
	[SORT_DIFF] = { diff_keys, DK_N, "delta-abs" },
};

/* distinct keys always fit: repeats are dropped in sort_parse() */
_Static_assert(AK_N <= SORT_MAX_KEYS && DK_N <= SORT_MAX_KEYS, "SORT_MAX_KEYS below a table");

int sort_parse(struct kp_sort_spec *sp, enum kp_sort_table table, const char *spec,
	       const char **bad)
{
	static char badbuf[64];
	const char *p = spec && *spec ? spec : tables[table].dflt;
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
		int k;
		for (k = 0; k < tables[table].n && strcmp(tables[table].keys[k].name, tok); k++)
			;
		if (k == tables[table].n) {
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
			sp->k[sp->n].desc = dir ? dir == 2 : !tables[table].keys[k].text;
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
	for (int k = 0; k < tables[table].n && n < cap; k++)
		n += snprintf(buf + n, cap - n, "%s%s", k ? sep : "", tables[table].keys[k].name);
	return buf;
}

const char *sort_suggest(enum kp_sort_table table, const char *bad)
{
	const char *hint = NULL;
	size_t n = strlen(bad);
	for (int k = 0; k < tables[table].n; k++) {
		const char *name = tables[table].keys[k].name;
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
	const struct keydef *keys = tables[s->sp->table].keys;
	int name_key = s->sp->table == SORT_ANALYZE ? AK_NAME : DK_NAME;
	for (int i = 0; i < s->sp->n; i++) {
		int k = s->sp->k[i].key, c;
		if (keys[k].text) {
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

static double analyze_num(const void *row, int key)
{
	const struct kp_row *r = row;
	switch ((enum kp_analyze_key)key) {
	case AK_TIME:
		return (double)r->time_ns;
	case AK_CALLS:
		return (double)r->calls;
	case AK_AVG:
		return r->calls ? (double)r->time_ns / r->calls : 0;
	case AK_MIN:
		return (double)r->min_ns;
	case AK_MAX:
		return (double)r->max_ns;
	case AK_MED:
		return (double)r->med_ns;
	case AK_TFLOPS:
		return r->flops_per_s;
	case AK_GBPS:
		return r->bytes_per_s;
	case AK_PCT_PEAK:
		return r->pct_peak_flops;
	case AK_PCT_BW:
		return r->pct_peak_bw;
	case AK_FLOPS:
		return (double)r->flops;
	case AK_BYTES:
		return (double)r->bytes;
	case AK_INTENSITY:
		return r->intensity;
	default:
		return 0;
	}
}

static const char *analyze_text(const void *row, int key)
{
	const struct kp_row *r = row;
	if (key == AK_NAME)
		return r->name;
	if (key == AK_OP)
		return r->op ? r->op : "";
	return r->key;
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
