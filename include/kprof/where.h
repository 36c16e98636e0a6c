/*
 * where.h — the keys of kprof analyze -g module and -g source (where in the model a GPU event
 * was launched) and their folded (flame graph) stacks.  The frames come from
 * src/ingest/pytree.c; the rules are in kprof-analyze(1), WHERE IN THE MODEL.
 */
#ifndef KPROF_WHERE_H
#define KPROF_WHERE_H

#include <stdint.h>

#include "kprof/analyze.h"
#include "kprof/hmap.h"
#include "kprof/strtab.h"
#include "kprof/trace.h"

#define WHERE_NO_MODULE "(no module)"
#define WHERE_NO_SOURCE "(no source)"
#define WHERE_BWD " [bwd]"

struct kp_where {
	const struct kp_trace *t;
	enum kp_group group; /* GROUP_MODULE or GROUP_SOURCE */
	int depth;           /* module paths folded to this many modules, 0 all */
	struct kp_strtab *st; /* keys are interned here (the report's) */
	const char **keys;   /* per (frame, bwd): its key, NULL not yet made */
	int64_t *calls;      /* per (frame, bwd) + 2 for none: the caller's call marks, -1 */
	struct kp_hmap folds; /* fold key -> index into *folds */
	struct kp_fold *fv;
	size_t nf, capf;
	int64_t *fkey;       /* per fold: stack * 2 + bwd (source), or the key string's index */
};

/* Prototypes */
void where_init(struct kp_where *w, const struct kp_trace *t, enum kp_group g, int depth,
		struct kp_strtab *st);
/*
 * GPU event @i's key (interned in w->st: "M_0/B_1", "M_0/B_1 [bwd]", "(no module)"; the
 * source frame's name; "(no source)") and where its call mark is kept: one call per module
 * or source frame instance (*mark; NULL for none: each event is its own call).
 */
const char *where_key(struct kp_where *w, size_t i, int64_t **mark);
/* Add GPU event @i (key @key from where_key) to the folded stacks. */
void where_fold(struct kp_where *w, size_t i, const char *key);
/* The folded lines into @r (r->folds in r->arena). */
void where_folds(struct kp_where *w, struct kp_report *r);
void where_free(struct kp_where *w);

#endif /* KPROF_WHERE_H */
