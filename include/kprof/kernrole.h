/*
 * kernrole.h — what a GPU kernel does for its op, from its name: math or data movement.
 */
#ifndef KPROF_KERNROLE_H
#define KPROF_KERNROLE_H

#include "kprof/arena.h"

enum kp_krole {
	KROLE_MATH = 0, /* GEMM, convolution, attention (and names kprof does not know) */
	KROLE_MOVE,     /* copies, fills, casts, elementwise, reductions, layout transforms */
};

/* Prototypes */
/*
 * The role of kernel @name under an op with a math model (man kprof-analyze,
 * PER-KERNEL ATTRIBUTION).  Case-insensitive substring rules, in order: a
 * helper of a math library (split-K reduction, layout transform, workspace
 * init, dQ conversion) is data movement; a math-library or math-template name
 * is math; a generic PyTorch/Triton elementwise, copy, fill or reduction
 * kernel is data movement; anything else is math.
 */
enum kp_krole kernrole_of(const char *name);
/*
 * The memory path of a GPU event (enum kp_mempath, devdb.h): kernels and memsets
 * DRAM; memcpys by the kind in Kineto's name "Memcpy KIND (SRC -> DST)": DtoD, AtoD,
 * DtoA, AtoA device to device; HtoD, DtoH, HtoA, AtoH the host link; PtoP the peer
 * link; HtoH and anything else unknown.
 */
int kernrole_mempath(const char *name, int is_memcpy);
/*
 * Is_causal of a FlashAttention 2 kernel from its demangled name's template arguments
 * (pytorch_flash::flash_fwd_kernel<Traits, Is_dropout, Is_causal, ...>, the split-KV and
 * backward dQ/dK/dV kernels; flash-attn's flash:: copies alike): 1 causal, 0 not, -1 when
 * the name does not say (any other kernel, cuDNN's and CUTLASS's attention included).
 */
int kernrole_causal(const char *name);
/* "void foo<int>(float*, int)" -> "foo<int>" (display only). Result in @a. */
const char *kernrole_short_name(struct kp_arena *a, const char *name);

#endif /* KPROF_KERNROLE_H */
