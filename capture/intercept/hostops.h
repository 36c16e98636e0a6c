/*
 * hostops.h — host calls (hcall.h) -> trace events: a cuBLAS / cuBLASLt GEMM becomes a cpu_op
 * named and laid out as the PyTorch op that the analyzer's models know (aten::mm, addmm, bmm,
 * baddbmm); an NVTX range becomes a user_annotation, or, in PyTorch's emit_nvtx form, a cpu_op
 * with Input Dims.  Pure: no CUDA.
 */
#ifndef KPROF_HOSTOPS_H
#define KPROF_HOSTOPS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct kp_ctrace;
struct kp_hcall;

#define NVTX_MAX_SLOTS 64
#define NVTX_MAX_DIMS 8

/* One parsed emit_nvtx message: "aten::mm, seq = 12, op_id = 7, sizes = [[4, 8], []]". */
struct kp_nvtx_msg {
	char name[256];
	int label;          /* @name has a space: a record_function label, not an op */
	int64_t seq, op_id; /* -1 when absent */
	int has_sizes;      /* its sizes, kept: none when a list was past the bounds below */
	int over;           /* a list past NVTX_MAX_SLOTS inputs or NVTX_MAX_DIMS dims: skipped */
	int nslots;
	struct {
		int nd;
		int64_t d[NVTX_MAX_DIMS];
	} slot[NVTX_MAX_SLOTS];
	int ninput_ids;                   /* (op,out) pairs of input_op_ids */
	int64_t input_op[NVTX_MAX_SLOTS]; /* the producing op of each input, 0 none */
	/* kprof's op observer's fields, one per slot (last: nvtxmsg_parse clears the counts only) */
	int ndtypes, nconc;              /* "dtypes = [...]", "concrete = [...]" */
	char dtype[NVTX_MAX_SLOTS][32];  /* torch's type names ("c10::BFloat16"); "" not a tensor */
	char conc[NVTX_MAX_SLOTS][64];   /* a scalar argument as Kineto's "Concrete Inputs" writes it
					    ("2", "False", "1.", "[1, 1]"); "" for the rest */
};

struct kp_hostops_stats {
	size_t gemms, gemms_unshaped;      /* library ops written; those without a shape */
	size_t nvtx_ranges, nvtx_ops;      /* ranges written; those that became cpu_ops */
	size_t nvtx_open;                  /* ranges never closed (not written) */
	size_t nvtx_malformed;             /* emit_nvtx-like messages that did not parse */
	size_t replay_ops, replay_kernels; /* CUDA graph replays: ops made, GPU records linked */
	size_t module_ranges;              /* torch hook module ranges -> python_function events */
	size_t bwd_ops, bwd_linked;        /* autograd node ops; those with a fwdbwd flow */
};

/*
 * The message of a module range of kprof's torch hook (capture/intercept/python/
 * kprof_torch_hook.py): "kprof: nn.Module: Linear_3", Linear_3 the 4th Linear instance called
 * in the process.  It becomes the python_function "nn.Module: Linear_3".
 */
#define HOSTOPS_MODULE_PREFIX "kprof: "
#define HOSTOPS_MODULE_NAME "nn.Module: "

/* Graph-replay ops sit on the launching thread's id plus this (a thread of their own). */
#define HOSTOPS_REPLAY_TID 1000000000u

/* Prototypes */
/*
 * Parse @msg.  Returns 0 for an emit_nvtx message (@m filled; the name ends at the first
 * ", seq = ", ", op_id = " or ", sizes = "), 1 for an ordinary message (none of them), -1
 * for a malformed one, with the reason in @why.  Never reads past the terminating NUL.
 */
int nvtxmsg_parse(const char *msg, struct kp_nvtx_msg *m, char *why, size_t whylen);
/*
 * The op of one GEMM call: *name (static) and the JSON args members (malloc'ed), in PyTorch's
 * row-major terms (torch M = cuBLAS n, N = m).  Returns 0, or -1 without a shape.
 */
int hostops_gemm(const struct kp_hcall *c, const char **name, char **args);
/*
 * The op of one cuDNN convolution call: aten::convolution (forward) or
 * aten::convolution_backward with output_mask [True, False, False] (data) or
 * [False, True, False] (filter).  Returns 0, or -1 without readable descriptors.
 */
int hostops_conv(const struct kp_hcall *c, const char **name, char **args);
/*
 * The op of one cuDNN graph recognized as attention: aten::_scaled_dot_product_cudnn_attention
 * (forward) or its _backward, slots as PyTorch records them, is_causal from the graph's mask.
 * Returns 0, or -1 when @c holds no attention shape.
 */
int hostops_sdpa(const struct kp_hcall *c, const char **name, char **args);
/* The op of another cuDNN graph execution: cudnn::graph, its operations counted, no model. */
int hostops_cudnn_graph(const struct kp_hcall *c, const char **name, char **args);
/* PyTorch's "Input type" of a cudnnDataType_t, "" when it has none. */
const char *hostops_cudnn_type_name(int32_t cudnn_type);
/* PyTorch's "Input type" of a cudaDataType, "" when it has none. */
const char *hostops_type_name(int32_t cuda_type);
/*
 * Turn every host call of @t into spans (cpu_op / user_annotation).  An NVTX op's input
 * takes the dtype of the op that produced it (input_op_ids); else the op's own: from the
 * first GEMM it encloses, else from the kernels its launches started, else from a producer.
 * An emit_nvtx attention op without is_causal (emit_nvtx records no scalars) takes it from the
 * cuDNN attention graph it encloses on its thread.
 * GPU records replayed from CUDA graph nodes created inside an op (kp_rec.gext) get a copy
 * of that op per graph launch.  Warnings (malformed messages, at most 5 quoted) go to @warn
 * when it is not NULL.
 */
int hostops_emit(struct kp_ctrace *t, struct kp_hostops_stats *st, FILE *warn);

#endif /* KPROF_HOSTOPS_H */
