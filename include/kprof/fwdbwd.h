/*
 * fwdbwd.h — shapes an op's model needs from other ops: a forward convolution's output
 * from its backward (Sequence number), a legacy backward part's input and weight from
 * its parent.
 */
#ifndef KPROF_FWDBWD_H
#define KPROF_FWDBWD_H

#include "kprof/opmodel.h"
#include "kprof/trace.h"

/* Prototypes */
/*
 * Set kp_opx.bwd of each forward convolution op (aten::convolution, _convolution,
 * cudnn_convolution, ...) whose backward is in the trace: the backward conv op under the
 * autograd node ("CudnnConvolutionBackward", "ConvolutionBackward0") whose Sequence number
 * is the forward's and whose input and weight shapes are the forward's.  Needs op parents
 * (call after the op tree is built).  Sorts, no map; O(n log n).
 */
void fwdbwd_link(struct kp_trace *t);
/* Fill @in's linked_out / linked_x / linked_w for op @i (NULL when none). */
void fwdbwd_inputs(const struct kp_trace *t, int32_t i, struct kp_op_in *in);

#endif /* KPROF_FWDBWD_H */
