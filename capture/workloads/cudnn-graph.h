/*
 * cudnn-graph.h — cuDNN 9 backend operation graphs as plain data, and their emission through a
 * table of the backend API's functions (pure: no CUDA, no cuDNN header; CI-tested with a fake
 * table).  The SDPA graphs are the ones cudnn-frontend's composite nodes build
 * (doc/workloads.md §a.6-a.7): cuDNN's runtime fusion recognizes them as flash attention.
 */
#ifndef KPROF_CUDNN_GRAPH_H
#define KPROF_CUDNN_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#define CG_MAXT 48  /* tensors of one graph */
#define CG_MAXOP 40 /* operations of one graph */

/* cudnnDataType_t */
enum { CG_FLOAT = 0, CG_HALF = 2, CG_INT32 = 4, CG_BF16 = 9, CG_BOOL = 11 };
/* operation kinds */
enum { CG_MATMUL, CG_POINTWISE, CG_REDUCTION, CG_RESHAPE };
/* cudnnPointwiseMode_t and cudnnReduceTensorOp_t values kprof uses */
/* clang-format off */
enum {
	CG_PW_ADD = 0, CG_PW_MUL = 1, CG_PW_DIV = 6, CG_PW_SUB = 9, CG_PW_EXP = 13, CG_PW_LOG = 15,
	CG_PW_IDENTITY = 21, CG_PW_CMP_GE = 303, CG_PW_GEN_INDEX = 501, CG_PW_BINARY_SELECT = 601
};
/* clang-format on */
enum { CG_RED_ADD = 0, CG_RED_MAX = 3 };
/* UIDs of the SDPA graphs' variant-pack tensors; intermediates are numbered from SDPA_VIRT */
/* clang-format off */
enum {
	SDPA_Q = 1, SDPA_K, SDPA_V, SDPA_O, SDPA_STATS, SDPA_DO, SDPA_DQ, SDPA_DK, SDPA_DV,
	SDPA_DQ_ACCUM, SDPA_SOFTMAX_SUM, SDPA_SCALE, SDPA_NEG_INF, SDPA_ONE, SDPA_VIRT = 100
};
/* clang-format on */

struct cg_tensor {
	int64_t uid;
	int dtype, nd, virt, by_value;
	int64_t dim[4], stride[4];
	float value; /* by_value: passed by host pointer in the variant pack */
};

struct cg_op {
	int kind, mode, comp; /* mode: CG_PW_* / CG_RED_*; comp: math precision (CG_FLOAT...) */
	int axis;             /* GEN_INDEX: the dimension indexed; else -1 */
	int in[3], nin, out;  /* indices into cg_graph.t */
};

struct cg_graph {
	struct cg_tensor t[CG_MAXT];
	struct cg_op op[CG_MAXOP];
	int nt, nop, full; /* full: a tensor or op did not fit */
};

/* One attention problem: Q [b, h, sq, d], K and V [b, hkv, sk, d], contiguous (BHSD). */
struct cg_sdpa {
	long b, h, hkv, sq, sk, d;
	int io;     /* CG_BF16 or CG_HALF */
	int causal; /* top-left, PyTorch's is_causal */
	int stats;  /* forward: write Stats (logsumexp) for the backward */
	float scale;
	int lowest_mask; /* mask with -FLT_MAX, not -inf (cuDNN < 9.10, as the frontend) */
};

/* The backend functions the graphs are emitted through (cudnnBackend*). */
struct cg_api {
	int (*create)(int type, void **desc);
	int (*destroy)(void *desc);
	int (*set)(void *desc, int attr, int type, int64_t n, const void *v);
	int (*finalize)(void *desc);
	const char *(*errstr)(int status);
	/* used by the plans, not by cg_emit() */
	int (*get)(void *desc, int attr, int type, int64_t n, int64_t *got, void *v);
	int (*execute)(void *handle, void *plan, void *vpack);
};

/* The descriptors of one emitted graph, destroyed by cg_release(). */
struct cg_built {
	void *d[CG_MAXT + 2 * CG_MAXOP + 1];
	int nd;
	void *graph; /* the finalized operation graph, or NULL (no handle given) */
};

/* Prototypes */
/*
 * The forward graph: S = Q K^T, scale, the causal mask (gen-index, compare, select), softmax as
 * max / sub / exp / sum / div (Stats = max + log(sum), virtual unless @s->stats), O = P V.
 * 0, or -1 when the graph does not fit.
 */
int cg_sdpa_fwd(struct cg_graph *g, const struct cg_sdpa *s);
/*
 * The backward graph: softmax_sum = rowsum(dO * O), P = exp(scale Q K^T - Stats) masked,
 * dV = P^T dO, dS = P (dO V^T - softmax_sum) scale, dK = dS^T Q, dQ_accum = dS K, dQ = dQ_accum;
 * with GQA (hkv < h) dK and dV are reduced over each group's full-head products.
 */
int cg_sdpa_bwd(struct cg_graph *g, const struct cg_sdpa *s);
/*
 * Bytes of the backward's fp32 side tensors kprof places at the start of the workspace (each
 * 16-byte aligned): dQ_accum at 0, softmax_sum at *@sum_off.
 */
size_t cg_sdpa_bwd_side_bytes(const struct cg_sdpa *s, size_t *sum_off);
/* The tensor of @g with @uid, or NULL. */
const struct cg_tensor *cg_find(const struct cg_graph *g, int64_t uid);
/*
 * Create and finalize @g's tensor, operation and (when @handle is not NULL) operation-graph
 * descriptors through @api into @b.  0, or -1 with the failing call in @why (@b then holds what
 * was created: cg_release() it).
 */
int cg_emit(const struct cg_api *api, void *handle, const struct cg_graph *g, struct cg_built *b,
	    char *why, size_t whylen);
void cg_release(const struct cg_api *api, struct cg_built *b);

#endif /* KPROF_CUDNN_GRAPH_H */
