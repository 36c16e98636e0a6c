/*
 * diff-doc.h — a comparison (kprof diff) as a document: header facts, the
 * summary and gate objects, and the rows table; table.h renders it.
 */
#ifndef KPROF_DIFF_DOC_H
#define KPROF_DIFF_DOC_H

#include <stddef.h>

#include "kprof/diff.h"
#include "kprof/doc.h"
#include "kprof/memdiff-doc.h"

/* What the gate found, for the document (see diff_gate()). */
struct kp_diff_doc_opts {
	const struct kp_gate_opts *gate; /* NULL: no gate */
	const struct kp_gate_hit *hits;
	size_t nhits; /* crossings; hits holds all of them */
	const struct kp_memdiff_doc_opts *mem; /* --memory: its section, before the rows (so
						  that csv prints the memory table); NULL none */
};

/* Prototypes */
/* Build the document of @d (columns: kprof-diff(1), OUTPUT); free it with doc_free(). */
void diff_doc(const struct kp_diff *d, const struct kp_diff_doc_opts *o,
		     struct kp_doc *doc);

#endif /* KPROF_DIFF_DOC_H */
