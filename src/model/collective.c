/*
 * collective.c — collective kinds: their names and nccl-tests bus-bandwidth factors.
 */
#include "kprof/collective.h"

static const char *const kind_names[COLL_NKIND] = {
	"allreduce", "allgather", "reducescatter", "alltoall",
	"sendrecv",  "broadcast", "reduce",        "other",
};

const char *coll_kind_name(int kind)
{
	return kind >= 0 && kind < COLL_NKIND ? kind_names[kind] : "other";
}

/*
 * nccl-tests doc/PERFORMANCE.md: an all-reduce moves 2(n-1) pieces per element over n links,
 * reduce-scatter, all-gather and all-to-all (n-1); broadcast, reduce and point-to-point are
 * bound by one link (factor 1).
 */
double coll_bus_factor(int kind, int n)
{
	if (n < 1)
		return -1;
	switch (kind) {
	case COLL_ALLREDUCE:
		return 2.0 * (n - 1) / n;
	case COLL_ALLGATHER:
	case COLL_REDUCESCATTER:
	case COLL_ALLTOALL:
		return (double)(n - 1) / n;
	case COLL_SENDRECV:
	case COLL_BROADCAST:
	case COLL_REDUCE:
		return 1;
	default:
		return -1;
	}
}
