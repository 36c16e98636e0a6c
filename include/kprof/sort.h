/*
 * sort.h — the one sort of report rows (analyze and diff): named keys, analyze's the figures
 * of metric.h that have one, diff's an enum with a name in a designated-initializer table;
 * numbers descend and text ascends unless ":asc"/":desc" says otherwise; the folded "(others)" row stays last; name, then the
 * grouping key, break ties so output is deterministic.
 */
#ifndef KPROF_SORT_H
#define KPROF_SORT_H

#include <stddef.h>

struct kp_report;
struct kp_diff;

/* Which rows a key list is for. */
enum kp_sort_table { SORT_ANALYZE = 0, SORT_DIFF };

/* kprof diff --sort keys (kprof-diff(1)). */
/* clang-format off */
enum kp_diff_key {
	DK_DELTA_ABS, DK_DELTA, DK_RATIO, DK_SHARE, DK_BASE, DK_NEW, DK_BASE_CALLS, DK_NEW_CALLS,
	DK_NAME, DK_N
};
/* clang-format on */

#define SORT_MAX_KEYS 32

/*
 * A parsed key list: keys of one table (kprof analyze: enum kp_metric_id, metric.h; kprof
 * diff: enum kp_diff_key) and their resolved directions.
 */
struct kp_sort_spec {
	enum kp_sort_table table;
	int n;
	struct {
		int key;
		int desc;
	} k[SORT_MAX_KEYS];
};

/* Prototypes */
/*
 * Parse "key[:asc|:desc][,key...]" (@spec NULL or "" is the table's default: time for
 * analyze, delta-abs for diff).  Returns 0, or -1 with @bad naming the unknown key or
 * direction (static storage).
 */
int sort_parse(struct kp_sort_spec *sp, enum kp_sort_table table, const char *spec,
	       const char **bad);
/* The table's key names in enum order, joined by @sep, into @buf. */
char *sort_key_list(enum kp_sort_table table, const char *sep, char *buf, size_t cap);
/* A key @bad looks like a typo of (shares its first 3+ characters), or NULL. */
const char *sort_suggest(enum kp_sort_table table, const char *bad);
/* How sort_rows() reads a row of its table (the key enums above). */
struct kp_sort_rows {
	double (*num)(const void *row, int key);       /* a number key's value */
	const char *(*text)(const void *row, int key); /* a text key's; key -1: the grouping key */
	int (*folded)(const void *row);                /* the "(others)" row, sorted last */
};

/*
 * Sort @n rows of @size bytes at @rows by @sp (sort_parse), reading them through @rd:
 * the folded row last, then the keys in order, then name and grouping key ascending.
 */
void sort_rows(void *rows, size_t n, size_t size, const struct kp_sort_spec *sp,
	       const struct kp_sort_rows *rd);
/* Sort @r's rows (an SORT_ANALYZE spec). */
void sort_analyze(struct kp_report *r, const struct kp_sort_spec *sp);
/*
 * Sort @d's rows (a SORT_DIFF spec; diff-sort.c); one-sided rows rank as +inf (new) and 0
 * (gone) by ratio.
 */
void sort_diff(struct kp_diff *d, const struct kp_sort_spec *sp);

#endif /* KPROF_SORT_H */
