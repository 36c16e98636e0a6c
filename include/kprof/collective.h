/*
 * collective.h — the collective operations of a distributed job: their kinds, names and the
 * nccl-tests bus-bandwidth factor of each.
 */
#ifndef KPROF_COLLECTIVE_H
#define KPROF_COLLECTIVE_H

/* Collective kinds, with their nccl-tests bus-bandwidth factors (collective.c). */
enum kp_coll_kind {
	COLL_ALLREDUCE = 0,
	COLL_ALLGATHER,
	COLL_REDUCESCATTER,
	COLL_ALLTOALL,
	COLL_SENDRECV,
	COLL_BROADCAST,
	COLL_REDUCE,
	COLL_OTHER,
	COLL_NKIND
};

/* Prototypes */
/* The kind's name as kprof prints it ("allreduce"); "other" out of range. */
const char *coll_kind_name(int kind);
/* nccl-tests bus-bandwidth factor for @kind among @n ranks (2(n-1)/n, (n-1)/n or 1); -1 none. */
double coll_bus_factor(int kind, int n);

#endif /* KPROF_COLLECTIVE_H */
