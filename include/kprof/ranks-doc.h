/*
 * ranks-doc.h — many ranks (ranks.h) as a document: header facts, the per-rank,
 * per-collective and straggler tables, and the json "ranks" array.
 */
#ifndef KPROF_RANKS_DOC_H
#define KPROF_RANKS_DOC_H

#include "kprof/ranks.h"
#include "kprof/doc.h"

/* Prototypes */
/* Build @doc (doc_init() included; free with doc_free()). */
void ranks_doc(const struct kp_ranks *rs, const char *link_name, struct kp_doc *doc);

#endif /* KPROF_RANKS_DOC_H */
