/*
 * breakdown-doc.h — a breakdown (breakdown.h) as part of a document: header facts, the
 * json "breakdown" object, the per-step/per-stream table and the launch statistics table.
 */
#ifndef KPROF_BREAKDOWN_DOC_H
#define KPROF_BREAKDOWN_DOC_H

#include "kprof/breakdown.h"
#include "kprof/doc.h"

/* Prototypes */
/* The breakdown facts, the json "breakdown" object and the "breakdown_rows" table. */
void breakdown_doc(struct kp_doc *doc, const struct kp_breakdown *b);
/* The json "breakdown" object alone (also used per rank). */
void breakdown_doc_json(struct kp_doc *doc, const char *jkey, const struct kp_bd *x);
/*
 * Launch facts and the "launches" table (@top rows, 0 = all; @by_op: op rows; kernel names
 * shortened for table/markdown unless @full_names).
 */
void breakdown_doc_launches(struct kp_doc *doc, const struct kp_breakdown *b, long top, int by_op,
		       int full_names);

#endif /* KPROF_BREAKDOWN_DOC_H */
