/*
 * cudnnrec.h — what a program sets on cuDNN 9 backend descriptors, kept per descriptor, and the
 * execution plans decoded at finalize into the op kprof records when the plan is executed
 * (doc/capture-any.md §1.9).  Pure: no cuDNN header, no locking (kprof-shim.so holds one lock
 * around these calls); CI feeds it the descriptor sequences cudnn-frontend issues.
 */
#ifndef KPROF_CUDNNREC_H
#define KPROF_CUDNNREC_H

#include <stdint.h>

#include "intercept/hcall.h"
#include "kprof/hmap.h"

/* Descriptors by address (cudnnBackendDescriptor_t) -> struct cr_desc *. */
struct cr_store {
	struct kp_hmap map;
};

/* Prototypes */
void cr_init(struct cr_store *s);
void cr_free(struct cr_store *s);
/* cudnnBackendCreateDescriptor(@type) returned @d / cudnnBackendDestroyDescriptor(@d). */
void cr_create(struct cr_store *s, const void *d, int type);
void cr_destroy(struct cr_store *s, const void *d);
/* cudnnBackendSetAttribute(@d, @attr, @type, @n, @v) succeeded. */
void cr_set(struct cr_store *s, const void *d, int attr, int type, int64_t n, const void *v);
/*
 * cudnnBackendGetAttribute(@d, @attr, @type, @n, &@got, @v) succeeded: engine configurations
 * a heuristics descriptor filled in belong to its operation graph.
 */
void cr_got(struct cr_store *s, const void *d, int attr, int type, int64_t got, const void *v);
/*
 * cudnnBackendFinalize(@d) succeeded: an operation keeps what it reads and writes (cudnn-frontend
 * destroys its mode descriptors right after), an operation graph or execution plan is decoded.
 */
void cr_finalize(struct cr_store *s, const void *d);
/*
 * The op of executing plan @plan: @c's kind (HC_CONV, HC_SDPA, HC_CUDNN_GRAPH) and shape
 * fields set, the rest untouched.  0, or -1 when the plan's graph was not seen (a plan
 * deserialized from JSON, descriptors made before the shim was loaded): kernels only.
 */
int cr_plan(const struct cr_store *s, const void *plan, struct kp_hcall *c);

#endif /* KPROF_CUDNNREC_H */
