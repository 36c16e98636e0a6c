/*
 * rankdiff.h — kprof diff of two sets of ranks (two directories of rank traces): per-rank
 * step time, GPU busy, compute, comm and idle, base vs new, paired by rank id, plus a merged
 * row over all ranks; --fail-above gates on the merged step-time mean.
 */
#ifndef KPROF_RANKDIFF_H
#define KPROF_RANKDIFF_H

#include "kprof/ranks.h"
#include "kprof/doc.h"

/* The gate's result. */
struct kp_rankdiff_gate {
	double limit_pct;      /* --fail-above PCT, < 0 no gate */
	int tripped;           /* the merged step mean grew by more than limit_pct */
	int unknown;           /* a gate was asked but a side has no step times */
	double change_pct;     /* the merged step mean's change, NAN unknown */
	char ranks_above[512]; /* "1,3": paired ranks whose step mean crossed, "" none */
};

/* Prototypes */
/*
 * Build @doc (doc_init() included; free with doc_free()) comparing @base with @nw
 * (both sorted by rank, as ranks_load() leaves them) and fill @g (limit_pct set by the caller).
 */
void rankdiff_doc(const struct kp_ranks *base, const struct kp_ranks *nw,
		  struct kp_rankdiff_gate *g, struct kp_doc *doc);

#endif /* KPROF_RANKDIFF_H */
