/*
 * recfile.h — the per-process record file that kprof-inject.so writes at exit and `kprof
 * capture -- <cmd>` merges: struct kp_rec and External-id records in binary, names interned.
 */
#ifndef KPROF_RECFILE_H
#define KPROF_RECFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct kp_ctrace;

/*
 * Header facts of one file.  The layout is the in-memory one of struct kp_rec: kprof-inject.so
 * and kprof-capture.so come from the same build, and a reader rejects files whose magic,
 * version or struct sizes differ.
 */
struct kp_recfile_info {
	uint32_t pid;          /* the traced process */
	uint64_t nrecs, next;  /* records and External-id mappings read */
	uint32_t max_corr;     /* largest correlation id in the file (before the offset) */
	uint64_t max_ext;      /* largest External id in the file (before the offset) */
	uint64_t nhcalls;      /* host calls (library calls, NVTX ranges) read */
	uint64_t nkmet, nmwin; /* --metrics: range values and their windows read */
};

/* Prototypes */
/*
 * Write @t's records, External-id map, host calls, CUPTI version, dropped-record count and --metrics
 * range values and windows (kmetrics.h) for process @pid.  Returns 0, or -1 with errno set (ENOMEM, or the write error).
 */
int recfile_write(const struct kp_ctrace *t, uint32_t pid, FILE *out);
/*
 * Append the records of file @path to @t, adding @corr_base to every non-zero correlation id
 * and @ext_base to every non-zero External id, so that the ids of several processes stay
 * apart (CUPTI and kprof-shim.so number them per process).  Names are
 * interned in @t; dropped-record counts add up; @t's CUPTI version is set if still 0.  Metrics windows
 * are appended with their first range moved past @t's earlier ones and rec_lo/rec_hi set to
 * this file's records, so kmetrics_join() joins them to this process's kernels only.  Returns
 * 0 and fills @info, or -1 with a one-line reason in @why ("'f': not a kprof record file").
 * On error @t keeps only whole records of earlier files.
 */
int recfile_read(struct kp_ctrace *t, const char *path, uint32_t corr_base, uint64_t ext_base,
		 struct kp_recfile_info *info, char *why, size_t whylen);
/*
 * Merge every "*.kprec" file of directory @dir into @t in PID order, each after the previous
 * one's correlation ids, deleting the files.  Files that fail to read are reported on @warn
 * (NULL: not at all) as warnings and skipped.  Returns the number of processes merged, or -1 when @dir cannot be
 * read (reason in @why).
 */
int recfile_merge_dir(struct kp_ctrace *t, const char *dir, FILE *warn, char *why, size_t whylen);

#endif /* KPROF_RECFILE_H */
