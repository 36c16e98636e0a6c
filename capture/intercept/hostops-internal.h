/*
 * hostops-internal.h — what hostops_emit (hostops.c) calls in the other files of the host-call
 * emitter: the CUDA-graph replay mapping (replays.c) and the torch hook's module ranges
 * (pyranges.c).  The emit_nvtx parser (nvtxmsg.c) and the library-call op writers (libops.c)
 * are declared in hostops.h.  Internal to kprof-capture.so: declared hidden, so the library
 * exports no more than before the split.
 */
#ifndef KPROF_HOSTOPS_INTERNAL_H
#define KPROF_HOSTOPS_INTERNAL_H

struct kp_ctrace;
struct kp_hcall;
struct kp_hostops_stats;

/* Everything below is hidden (the rest of kprof-capture.so is built with default visibility). */
#pragma GCC visibility push(hidden)

/*
 * Kernels replayed from a CUDA graph carry (gext) the op their node was created in: each replay
 * gets its own copy of that op (replays.c).  Returns 0, -1 out of memory.
 */
int hostops_emit_replays(struct kp_ctrace *t, struct kp_hostops_stats *st);
/* Whether @c is a module range of kprof's torch hook (HOSTOPS_MODULE_PREFIX, hostops.h). */
int hostops_is_module_range(const struct kp_hcall *c);
/* The closed module ranges of @t as python_function events (pyranges.c); 0, -1 out of memory. */
int hostops_emit_modules(struct kp_ctrace *t, struct kp_hostops_stats *st);

#pragma GCC visibility pop

#endif /* KPROF_HOSTOPS_INTERNAL_H */
