/*
 * rankreport.h — many ranks (ranks.h) as a report document: header facts, the per-rank,
 * per-collective and straggler tables, and the json "ranks" array.
 */
#ifndef KPROF_RANKREPORT_H
#define KPROF_RANKREPORT_H

#include "kprof/ranks.h"
#include "kprof/report.h"

/* Prototypes */
/* Build @doc (report_init() included; free with report_free()). */
void rankreport_doc(const struct kp_ranks *rs, const char *link_name, struct kp_doc *doc);

#endif /* KPROF_RANKREPORT_H */
