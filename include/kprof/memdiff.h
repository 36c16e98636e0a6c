/*
 * memdiff.h — two memory analyses (memory.h) compared per GPU device (kprof diff --memory):
 * the peaks base/new/delta, the blocks live at each peak by op, and the memory gate
 * (--fail-above-mem).  The rules: kprof-diff(1), MEMORY.
 */
#ifndef KPROF_MEMDIFF_H
#define KPROF_MEMDIFF_H

#include <stddef.h>
#include <stdint.h>

#include "kprof/memory.h"

/* One op's bytes live at each side's peak (all modules summed). */
struct kp_memdiff_op {
	const char *op;    /* borrowed from a memory report (MEM_BEFORE, MEM_NO_OP too) */
	int64_t base_bytes, new_bytes; /* 0 when the op holds nothing at that side's peak */
	int64_t delta_bytes;           /* new_bytes - base_bytes */
};

/*
 * One GPU device, paired by (Device Type, Device Id, k-th process with it).  A side that
 * lacks it has NULL there.  Invariant (both sides with a live set): the ops' deltas sum to
 * delta_alloc exactly, since each side's live_at_peak rows sum to its peak.
 */
struct kp_memdiff_dev {
	const struct kp_mem_dev *base, *new; /* borrowed; NULL: not on that side */
	int64_t base_alloc, new_alloc;       /* peak allocated; 0 on a missing side */
	int64_t base_res, new_res;           /* peak reserved; -1 unknown */
	int64_t delta_alloc;                 /* new_alloc - base_alloc */
	double ratio_alloc;                  /* new/base; -1 N/A (a side missing or 0) */
	int64_t delta_res;                   /* when both reserved are known, else 0 */
	double ratio_res;                    /* -1 N/A */
	int live_known;                      /* both sides have a live set (not bytes_only) */
	struct kp_memdiff_op *ops;           /* delta descending, then op name; NULL when
						!live_known */
	size_t nops;
	char label[64]; /* "cuda:0", with " (pid N)" when another device here has its name */
};

/* The comparison; free with memdiff_free(). */
struct kp_memdiff {
	struct kp_memdiff_dev *devs; /* base's GPU devices in order, then new's unpaired ones */
	size_t ndevs;
};

/* A device whose peak allocated grew by more than the limit. */
struct kp_memgate_hit {
	const struct kp_memdiff_dev *dev;
	double change_pct; /* (ratio - 1) x 100; NAN for a device only in new */
	double limit_pct;
};

/* Prototypes */
/* Compare the GPU devices of @b and @n (borrowed: @md points into them). */
void memdiff_join(struct kp_memdiff *md, const struct kp_memrep *b, const struct kp_memrep *n);
/*
 * The memory gate: every device whose peak allocated grew by more than @limit_pct percent
 * of its base peak, and every device only in new that allocated anything.  Fills up to @cap
 * hits in device order and returns how many crossed.
 */
size_t memdiff_gate(const struct kp_memdiff *md, double limit_pct, struct kp_memgate_hit *hits,
		    size_t cap);
/*
 * "cuda:0 peak allocated 205.22 MiB -> 390.10 MiB (+90.1%), limit 10%; grew most:
 * aten::mm +96.00 MiB, ..." (up to @nops ops that grew) into @buf.
 */
void memdiff_gate_message(const struct kp_memgate_hit *h, size_t nops, char *buf, size_t cap);
void memdiff_free(struct kp_memdiff *md);

#endif /* KPROF_MEMDIFF_H */
