/*
 * memdiff-doc.h — the memory comparison (memdiff.h) in the diff document: one json object
 * "memory" and, for people and csv, a table of each device's peaks and the ops that grew.
 */
#ifndef KPROF_MEMDIFF_DOC_H
#define KPROF_MEMDIFF_DOC_H

#include <stddef.h>

#include "kprof/doc.h"
#include "kprof/memdiff.h"

/* What to show (kprof-diff(1), MEMORY). */
struct kp_memdiff_doc_opts {
	const struct kp_memdiff *md;  /* NULL when a side has no GPU [memory] events */
	const char *no_mem[2];        /* base, new: the input without GPU [memory] events, NULL */
	double limit_pct;             /* --fail-above-mem; < 0 none */
	const struct kp_memgate_hit *hits;
	size_t nhits;
	long top; /* op rows per device in the table (0 all), the rest folded into "(others)" */
};

/* Prototypes */
/*
 * Append the comparison to @doc: "memory" facts (table/markdown), the json object "memory"
 * ({"devices": [...], "without_memory_events": [...], "gate": {...}}) and the memory table
 * (table, markdown and csv; not json, which has every row in "memory").
 */
void memdiff_doc(struct kp_doc *doc, const struct kp_memdiff_doc_opts *o);

#endif /* KPROF_MEMDIFF_DOC_H */
