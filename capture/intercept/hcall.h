/*
 * hcall.h — host calls recorded in the traced process by kprof-shim.so (LD_PRELOAD): math-library
 * calls (cuBLAS, cuBLASLt, cuDNN), NVTX ranges and, with --memory, the program's cudaMalloc calls.  kprof-inject.so drains them into its record file;
 * `kprof capture -- <cmd>` turns them into cpu_op and user_annotation events (hostops.c).
 */
#ifndef KPROF_HCALL_H
#define KPROF_HCALL_H

#include <stdint.h>

enum kp_hcall_kind {
	HC_GEMM = 1,    /* a cuBLAS / cuBLASLt GEMM call */
	HC_NVTX_PUSH,   /* a push/pop range (nests per thread) */
	HC_NVTX_START,  /* a start/end range (may end on another thread) */
	HC_CONV,        /* a cuDNN convolution: legacy call, or a graph of one conv op */
	HC_SDPA,        /* a cuDNN graph recognized as attention (forward or backward) */
	HC_CUDNN_GRAPH, /* another cuDNN graph execution: kernels, no shape */
	HC_DEVALLOC,    /* a successful cudaMalloc through the dynamic CUDA runtime (the program's
			   own, e.g. PyTorch's caching allocator; libraries with a static runtime,
			   cuBLAS and cuDNN, are not seen): m = bytes, k = the address (cmem.c) */
};

enum { CONV_FWD, CONV_BWD_DATA, CONV_BWD_FILTER };

/* GEMM flags */
enum {
	HCF_BETA_ZERO = 1,  /* beta was read and is 0: C is not read */
	HCF_BETA_KNOWN = 2, /* beta was read (host pointer mode) */
	HCF_BIAS = 4,       /* cuBLASLt epilogue adds a bias vector */
	HCF_FAILED = 8,     /* the call returned an error status: no kernels */
	HCF_OPEN = 16,      /* NVTX: never closed before the process exited */
};

/*
 * One host call, in the column-major terms of the library for GEMMs: D[m,n] = op(A)[m,k]
 * op(B)[k,n] (+ C), @batch times.  Types are cudaDataType numbers, @compute a
 * cublasComputeType_t.  Fixed size: it is written to the record file as is.
 */
struct kp_hcall {
	int32_t kind; /* enum kp_hcall_kind */
	uint32_t flags;
	uint64_t start_ns, end_ns; /* CLOCK_REALTIME, as CUPTI's timestamps */
	uint32_t pid, tid;         /* OS ids, as CUPTI's SYSTEM thread ids */
	uint64_t ext;              /* CUSTOM0 External id pushed around the call / range */
	const char *name;   /* function name (static) or NVTX message (owned by the recorder) */
	const char *domain; /* NVTX domain name, NULL = default domain */
	int64_t m, n, k, batch;
	int32_t atype, btype, ctype, dtype;
	int32_t compute;        /* cublasComputeType_t, or -1 */
	int32_t transa, transb; /* cublasOperation_t: 0 N, 1 T, 2 C */
	int32_t bias_type;      /* cudaDataType of the bias (HCF_BIAS), -1 */
	uint32_t epilogue;      /* cublasLtEpilogue_t, 0 for classic cuBLAS */
	int32_t status;         /* the call's return status */
	uint32_t pad;
	/* HC_CONV: atype = x, btype = w, dtype = y (cudnnDataType_t); y is dy in backward */
	int32_t conv_op; /* CONV_* */
	int32_t conv_nd; /* spatial dims, 1-3; 0 when the descriptors were not read */
	int32_t groups;
	int32_t xd[5], wd[5], yd[5];
	int16_t cpad[3], cstride[3], cdil[3];
	int16_t pad2;
	/*
	 * HC_SDPA: q [b, h, sq, d], k [b, hkv, sk, d], v [b, hkv, sk, dv], BHSD; atype = the I/O
	 * type (cudnnDataType_t).  HC_CUDNN_GRAPH: sd[0..4] count the graph's matmul, pointwise,
	 * reduction, convolution and other operations, sd[5] says why it is no op kprof models
	 * (CG_WHY_*).
	 */
	uint32_t sdpa_flags; /* SDPA_F_* */
	int32_t pad3;
	int64_t sd[7]; /* b, h, hkv, sq, sk, d, dv */
};

enum {
	SDPA_F_BWD = 1,    /* the backward graph */
	SDPA_F_CAUSAL = 2, /* a top-left causal mask (PyTorch's is_causal) */
	SDPA_F_STATS = 4,  /* forward: Stats (logsumexp) written */
	SDPA_F_BIAS = 8,   /* an additive bias of [b|1, h|1, sq, sk] */
};
enum { SD_B, SD_H, SD_HKV, SD_SQ, SD_SK, SD_D, SD_DV };
enum {
	CG_WHY_OTHER = 1,  /* neither one convolution nor matmuls around a softmax */
	CG_WHY_NO_SOFTMAX, /* matmuls without an exponential between two of them */
	CG_WHY_SCORES,     /* no single matmul feeds the softmax */
	CG_WHY_SHAPES,     /* tensors that do not form Q, K, V (or x, w, y) */
	CG_WHY_MASK,       /* a mask other than PyTorch's causal one */
	CG_WHY_VARLEN,     /* per-batch sequence lengths */
};

/*
 * The interface between kprof-inject.so and kprof-shim.so, found with dlsym(RTLD_DEFAULT):
 * kprof_shim_attach() hands the shim CUPTI's external-correlation push/pop and timestamp once
 * CUPTI is set up (NULLs detach it); kprof_shim_context() says which call or range the thread is
 * in (graph nodes created now belong to it); kprof_shim_drain() passes every recorded call to @fn at exit (message strings stay
 * valid until the process ends).  kprof_shim_range_push()/_pop() are the same as an NVTX
 * push/pop on the calling thread, for kprof's PyTorch op observer
 * (capture/intercept/python/kprof_torch_obs.cpp), which finds them the same way.
 */
typedef void (*kp_push_fn)(uint64_t ext);
typedef void (*kp_pop_fn)(void);
typedef uint64_t (*kp_clock_fn)(void);
typedef void (*kp_drain_fn)(const struct kp_hcall *c, void *arg);
typedef void (*kp_shim_attach_fn)(kp_push_fn push, kp_pop_fn pop, kp_clock_fn clock);
typedef uint64_t (*kp_shim_drain_fn)(kp_drain_fn fn, void *arg);
typedef uint64_t (*kp_shim_context_fn)(void);

#endif /* KPROF_HCALL_H */
