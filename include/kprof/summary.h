/*
 * summary.h — read the per-rank summaries that `kprof analyze --ranks --format json` writes
 * (kprof_summary_version 1: "ranks" with breakdown, steps and communication kernels) back
 * into struct kp_rank, so `kprof merge` can redo the cross-rank view over any split of a job.
 */
#ifndef KPROF_SUMMARY_H
#define KPROF_SUMMARY_H

#include "kprof/diag.h"
#include "kprof/ranks.h"

/* Prototypes */
/*
 * Append the ranks of the summary document @path ("-" = stdin, gzip detected) to @rs.
 * Malformed JSON: "FILE:LINE:COL: error: ..." status 3; a document that is no kprof
 * summary: "FILE: error: not a kprof summary ..." status 3; I/O: status 4.
 */
int summary_load(struct kp_ranks *rs, const char *path, struct kp_diag *d);

#endif /* KPROF_SUMMARY_H */
