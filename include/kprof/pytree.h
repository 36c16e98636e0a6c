/*
 * pytree.h — the Python frames of a torch.profiler trace recorded with_stack=True
 * (python_function events) as a tree per thread, and the frame each CPU op, launch and GPU
 * event runs under: the rules are in kprof-analyze(1), WHERE IN THE MODEL, and
 * doc/attribution.md.
 */
#ifndef KPROF_PYTREE_H
#define KPROF_PYTREE_H

#include <stddef.h>
#include <stdint.h>

#include "kprof/trace.h"

/* A frame that ends this many ns after its enclosing one ends is its sibling, not its child
 * (a rounding "bleed"); a longer overlap is cut at the enclosing frame's end. */
#define PYTREE_BLEED_NS 1000

/* Prototypes */
/*
 * Build the frame tree of @t (kp_pyframe.parent/module/source/stack/path, kp_trace.pystacks)
 * and each op's and launch's frame (kp_trace.op_frame, op_bwd, launch_frame).  Needs the op
 * tree (kp_op.parent, link.c).  Nothing is set when the trace has no python_function events.
 * One sort of the frames and one of the ops and launches, then linear sweeps.
 */
void pytree_link(struct kp_trace *t);
/*
 * The frame GPU event @i runs under: its launching op's (kp_trace.op_frame), else the
 * launch's own; -1 when none.  *bwd: 1 when it is a backward op's forward frame.
 */
int32_t pytree_gpu_frame(const struct kp_trace *t, size_t i, int *bwd);
/* A frame name "path(line): func" (not "<built-in ...>", not "nn.Module: ...") whose path
 * does not contain "torch/": a line of the user's code. */
int pytree_user_source(const char *name);
/*
 * An autograd node op: "XBackwardN" (N digits, optional), "torch::autograd::..." (CopySlices,
 * AccumulateGrad), "autograd::engine::evaluate_function: ...".  The one rule of analyze's
 * backward attribution and capture's fwdbwd links (capture/intercept/hostops.c).
 */
int pytree_bwd_node(const char *name);
/*
 * Write the names of stack @s root first, joined by ';', into @buf (cap bytes, NUL-ended,
 * cut when it does not fit, never inside a character); each name escaped as every text output
 * escapes names (utf8_visible(): controls, C1, bidi marks, U+2028/9 as \uXXXX) and ';' as '_'
 * (folded format).  Returns the length written.
 */
size_t pytree_stack_folded(const struct kp_trace *t, int32_t s, char *buf, size_t cap);
/* Append @name to @buf at @n the same way; returns the new length. */
size_t pytree_fold_name(const char *name, char *buf, size_t n, size_t cap);

#endif /* KPROF_PYTREE_H */
