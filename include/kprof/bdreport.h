/*
 * bdreport.h — a breakdown (breakdown.h) as part of a report document: header facts, the
 * json "breakdown" object, the per-step/per-stream table and the launch statistics table.
 */
#ifndef KPROF_BDREPORT_H
#define KPROF_BDREPORT_H

#include "kprof/breakdown.h"
#include "kprof/report.h"

/* Prototypes */
/* The breakdown facts, the json "breakdown" object and the "breakdown_rows" table. */
void bdreport_breakdown(struct kp_doc *doc, const struct kp_breakdown *b);
/* The json "breakdown" object alone (also used per rank). */
void bdreport_json(struct kp_doc *doc, const char *jkey, const struct kp_bd *x);
/*
 * Launch facts and the "launches" table (@top rows, 0 = all; @by_op: op rows; kernel names
 * shortened for table/markdown unless @full_names).
 */
void bdreport_launches(struct kp_doc *doc, const struct kp_breakdown *b, long top, int by_op,
		       int full_names);

#endif /* KPROF_BDREPORT_H */
