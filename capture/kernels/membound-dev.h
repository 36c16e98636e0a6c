/*
 * membound-dev.h — what the row-wise kernels' launchers (membound-*.cu) ask of the current
 * device, kept per device (cudaGetDevice): a second GPU of the process gets its own answers.
 * Defined in membound.cu (C++: these take kernel addresses).
 */
#ifndef KPROF_MEMBOUND_DEV_H
#define KPROF_MEMBOUND_DEV_H

#include "kernels/membound-plan.h"

#include <stddef.h>

/* Devices whose answers are kept; others are asked again at every launch. */
#define MB_MAX_DEV 64

/*
 * The current device's facts into @d (all 0 when a query failed; kept once known) and its
 * ordinal into *@dev (-1 when unknown).
 */
void mb_device(struct mb_dev *d, int *dev);
/* Blocks of @fn with @threads threads resident on the whole GPU (at least the SM count). */
long mb_resident_blocks(const void *fn, unsigned threads);
/*
 * Clusters of @nc blocks of @fn (@threads threads, @smem bytes of dynamic shared memory)
 * resident on the whole GPU (blocks for @nc 1), 0 when unknown; raises @fn's dynamic
 * shared-memory limit to the most a block may have.
 */
long mb_pipe_resident(const void *fn, unsigned threads, size_t smem, int nc);

#endif /* KPROF_MEMBOUND_DEV_H */
