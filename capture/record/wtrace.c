/*
 * wtrace.c — the trace file of a capture written, and the numbers of its summary line.
 */
#include "record/wtrace.h"

#include <errno.h>
#include <string.h>

#include "kprof/diag.h"
#include "record/ctrace.h"

/* kernel records and the SM clock range while busy */
static void sum_up(const struct kp_ctrace *t, struct kp_trace_sum *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < t->nrecs; i++)
		s->nkern += t->recs[i].kind == REC_KERNEL;
	for (size_t i = 0; i < t->nsamples; i++) {
		if (t->samples[i].reasons & 1) /* GpuIdle */
			continue;
		unsigned v = t->samples[i].sm_mhz;
		s->sm_lo = !s->sm_lo || v < s->sm_lo ? v : s->sm_lo;
		s->sm_hi = v > s->sm_hi ? v : s->sm_hi;
	}
	if (s->sm_hi)
		snprintf(s->sm_range, sizeof(s->sm_range), " (SM %u-%u MHz while busy)", s->sm_lo,
			 s->sm_hi);
}

int wtrace_write(struct kp_ctrace *t, FILE *out, const char *path, struct kp_trace_sum *sum,
		 struct kp_diag *d)
{
	sum_up(t, sum);
	int bad = ctrace_write(t, out, path) < 0;
	int e = errno;
	if (fclose(out) != 0 && !bad)
		bad = 1, e = errno;
	if (bad)
		return diag_error(d, KP_ENV, "error: cannot write '%s': %s", path, strerror(e));
	return 0;
}
