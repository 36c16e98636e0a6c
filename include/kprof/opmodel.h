/*
 * opmodel.h — FLOP and byte models of PyTorch ops (pure math; doc/flops-bytes.md).
 */
#ifndef KPROF_OPMODEL_H
#define KPROF_OPMODEL_H

#include <stdint.h>

#include "kprof/dtype.h"

/*
 * One schema slot of a recorded op: the parallel entries of "Input Dims",
 * "Input type" and "Concrete Inputs".  A 0-dim tensor has ndim 0 and a tensor
 * dtype; a scalar or None has ndim 0 and DT_NONE.  A TensorList (aten::cat,
 * aten::stack: Input Dims [[..],[..]], Input type "TensorList") is one slot with
 * DT_NONE whose @list holds the tensors; Kineto records no element type, so a
 * caller that cannot tell sets the elements' dtype to DT_UNKNOWN.
 */
/* A dims entry the trace wrote as no int64 integer (1.5e300): out of range, not negative */
#define KP_DIM_BAD INT64_MIN

struct kp_slot {
	int ndim;                   /* number of dims (0 for [] ) */
	const int64_t *dims;        /* ndim entries */
	enum kp_dtype dtype;        /* from Input type */
	const char *concrete;       /* Concrete Inputs text, "" when none; never NULL */
	int nlist;                  /* TensorList: number of tensors in @list; 0 otherwise */
	const struct kp_slot *list; /* TensorList: the tensors (NULL when nlist == 0) */
};

/*
 * An op as the model sees it.  @slots are all recorded slots in schema order,
 * including the trailing output slot of "out=" variants (Inductor records
 * aten::mm with 3 slots); the models find operands by schema position.
 */
struct kp_op_in {
	const char *name; /* "aten::mm" */
	int nslots;
	const struct kp_slot *slots; /* may be NULL when nslots == 0 */
	int64_t kernel_flop;         /* Inductor's args.kernel_flop, -1 when absent */
	double kernel_num_gb;        /* Inductor's args.kernel_num_gb, < 0 when absent */
	/*
	 * Shapes the trace records on other ops (fwdbwd.c), NULL when none: a forward
	 * convolution's output (the grad_output of its backward, linked by Sequence
	 * number), and the input and weight of a legacy cudnn_convolution_backward_input
	 * / _weight (from their aten::cudnn_convolution_backward parent).
	 */
	const struct kp_slot *linked_out;
	const struct kp_slot *linked_x;
	const struct kp_slot *linked_w;
	/*
	 * is_causal read from the names of the op's kernels (kernrole_causal), for an attention
	 * op whose is_causal slot holds no value (emit_nvtx records no scalars): enum
	 * kp_causal_hint, CAUSAL_HINT_NONE (0) when the kernels do not say or disagree.
	 */
	int causal_hint;
};

enum kp_causal_hint { CAUSAL_HINT_NONE = 0, CAUSAL_HINT_DENSE, CAUSAL_HINT_CAUSAL };

enum kp_model_class {
	MODEL_NONE = 0,  /* no model */
	MODEL_PRIMARY,   /* matmul, conv, attention: the level counted in an op tree */
	MODEL_SECONDARY, /* pointwise, reductions, copies, norms, softmax: bytes (FLOPs 0 or none) */
};

/* The cost of one op call.  Unknown values are -1. */
struct kp_cost {
	enum kp_model_class cls;
	int64_t flops; /* FLOPs (2 per MAC; causal attention: unmasked pairs only) */
	int64_t bytes; /* compulsory bytes: each operand read once, each output written once */
	enum kp_dtype dtype; /* dtype of the main input (math dtype before the tf32 rule) */
	enum kp_prec prec;   /* math precision from the inputs (PREC_FP32 for fp32; the caller
	                           upgrades to tf32 when the kernel name says so) */
	const char *family;  /* static: "gemm" "conv" "attn" "pointwise" "reduce" "copy" "norm"
	                           "softmax" "inductor"; NULL with MODEL_NONE */
	/*
	 * The op's data-movement part, when it runs in kernels of its own (man
	 * kprof-analyze, PER-KERNEL ATTRIBUTION): addmm/baddbmm copy the addend C into
	 * the output before a beta=1 GEMM; cuDNN adds a conv's bias in a separate
	 * kernel; convolution_backward's bias gradient is a reduction.  -1 when the op
	 * has no such part or its bytes are unknown.
	 */
	int64_t move_bytes; /* bytes the data-movement kernels move */
	int64_t math_bytes; /* bytes of the math kernels when the part above ran apart */
	/*
	 * static: an assumption the model made for a value the trace does not record (attention
	 * whose is_causal is neither recorded nor in its kernels' names: dense; an emit_nvtx
	 * convolution_backward without output_mask: both gradients); the caller
	 * warns with it; else NULL.
	 */
	const char *assumed;
	const char *note; /* static reason when the model could not apply (bad shapes,
	                           overflow) or left flops/bytes -1 (varlen attention, a
	                           dtype without a size): the caller warns with it; else NULL */
};

/* Prototypes */
/* Model class of an op name without evaluating it (for walking op trees). */
enum kp_model_class opmodel_class(const char *name);
/*
 * Evaluate the model of @in.  Returns 0 and fills @out (flops/bytes may still be
 * -1 when a part is unknown); returns 1 when the op has no model (@out->cls
 * MODEL_NONE); returns -1 when the op has a model but its slots don't fit it or a
 * shape product overflows int64 (@out->note says why; flops/bytes -1).
 * Inductor's kernel_flop / kernel_num_gb win when present.
 */
int opmodel_eval(const struct kp_op_in *in, struct kp_cost *out);
/*
 * The slot of an attention op's is_causal flag (aten::_scaled_dot_product_*_attention[_backward],
 * _flash_attention_*, _cudnn_attention_*), -1 for other ops.
 */
int opmodel_causal_slot(const char *name);
/* Exact causal (i, j) pair count for top-left (bottom_right=0) or bottom-right alignment. */
int64_t opmodel_causal_pairs(int64_t s_q, int64_t s_k, int bottom_right);

/*
 * The functional signature of an op (kprof-diff(1), PAIRS ACROSS BACKENDS): what it
 * computes, whatever the backend.  Attention (every SDPA variant, flash, efficient,
 * cuDNN, and the ops of opmodel_sig_carrier()): "attention fwd|bwd B= H= H_kv= S_q= S_k=
 * D= D_v= [causal|causal-br] [bias=[..]] DTYPE"; matmul (mm, addmm, bmm, baddbmm,
 * _addmm_activation): "matmul M= N= K= [batch=] [add=[..]] [relu|gelu] DTYPE"; forward
 * convolution: "conv x=[..] w=[..] stride= pad= dil= out_pad= groups= [bias] DTYPE".
 * Writes it to @buf and returns 0; -1 when the op has none or a value it needs is not
 * recorded (is_causal, use_gelu, beta).
 */
int opmodel_signature(const struct kp_op_in *in, char *buf, size_t cap);
/* Ops without a model that carry a signature (the sdpa entry point): their shapes are read. */
int opmodel_sig_carrier(const char *name);
/* The attention backend an op name says: "flash", "efficient", "cudnn", else "math". */
const char *opmodel_attn_variant(const char *name);

#endif /* KPROF_OPMODEL_H */
