/*
 * link.h — GPU work -> launch -> CPU op -> the op whose model counts it (doc/trace-format.md).
 */
#ifndef KPROF_LINK_H
#define KPROF_LINK_H

struct kp_trace;

/* Prototypes */
/*
 * Link a loaded trace in place: each GPU event to its launch (correlation) and op
 * (External id, else time nesting on the launching thread), ops into their tree, and each
 * op to the level whose model counts it.  Never fails on data; allocates in @t's arena.
 */
void link_trace(struct kp_trace *t);
/*
 * Leave out of @t's GPU events (and their collectives) the unlaunched prefix that
 * link_trace() counted in t->prefix: GPU events with no launch call that start before the
 * first one with a launch call.  Sets t->prefix.dropped when there were any.
 */
void link_drop_unlaunched_prefix(struct kp_trace *t);

#endif /* KPROF_LINK_H */
