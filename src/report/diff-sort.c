/*
 * diff-sort.c — kprof diff's --sort keys read from a compared row (struct kp_diff_row,
 * diff.h) for sort.c's one comparator: diff.c calls sort_diff(), which calls sort_rows();
 * sort.c needs no diff.h (issue 29: sort.c and diff.c depended on each other).
 */
#include <math.h>

#include "kprof/diff.h"
#include "kprof/sort.h"

static double ratio_key(const struct kp_diff_row *r)
{
	/* one-sided rows: new grew from nothing (+inf), gone shrank to nothing (0) */
	if (r->status == DIFF_NEW)
		return INFINITY;
	if (r->status == DIFF_GONE)
		return 0;
	if (r->ratio < 0)
		return r->new_raw_ns > 0 ? INFINITY : 1;
	return r->ratio;
}

static double diff_num(const void *row, int key)
{
	const struct kp_diff_row *r = row;
	switch ((enum kp_diff_key)key) {
	case DK_DELTA_ABS:
		return fabs((double)r->delta_ns);
	case DK_DELTA:
		return (double)r->delta_ns;
	case DK_RATIO:
		return ratio_key(r);
	case DK_SHARE:
		return r->share_pt;
	case DK_BASE:
		return (double)r->base_ns;
	case DK_NEW:
		return (double)r->new_ns;
	case DK_BASE_CALLS:
		return r->base_calls;
	case DK_NEW_CALLS:
		return r->new_calls;
	default:
		return 0;
	}
}

static const char *diff_text(const void *row, int key)
{
	const struct kp_diff_row *r = row;
	return key == DK_NAME ? r->name : r->key;
}

static int diff_folded(const void *row)
{
	return ((const struct kp_diff_row *)row)->status == DIFF_OTHERS;
}

void sort_diff(struct kp_diff *d, const struct kp_sort_spec *sp)
{
	static const struct kp_sort_rows rd = { diff_num, diff_text, diff_folded };
	sort_rows(d->rows, d->nrows, sizeof(*d->rows), sp, &rd);
}
