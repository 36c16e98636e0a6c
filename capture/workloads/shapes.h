/*
 * shapes.h — shape sets of the built-in workloads: parsing and generators (pure, CI-tested).
 */
#ifndef KPROF_SHAPES_H
#define KPROF_SHAPES_H

#include <stddef.h>

#define SHAPES_MAX 4096 /* a set larger than this is refused */

struct kp_mm_shape {
	long m, k, n;
	char label[24]; /* "attn.wqkv" for llama, else "" */
};

struct kp_sdpa_shape {
	long b, h, hkv, sq, sk, d;
	int causal; /* top-left aligned, PyTorch is_causal=True */
};

struct kp_conv_shape {
	long n, c, h, w, k, r, s;
	long stride, pad, dil, groups;
};

struct kp_norm_shape {
	long rows, hidden; /* softmax / norm over the last dim, hidden % 8 == 0 */
};

enum { CAUSAL_BOTH, CAUSAL_YES, CAUSAL_NO };

/* Prototypes */
/*
 * Matmul sets: "custom:MxKxN,...", "llama" (LLaMA-2-70B 8-way TP linears, one per M of @ms),
 * "pow2:MIN:MAX" (squares 2^p), "pow2_extended:MIN:MAX" (adds 1.5*2^p),
 * "sweep:MIN:MAX" (all M,K,N over the powers of two), "small_sweep:MIN:MAX" (those with
 * M <= K <= N); "SET+SET..." concatenates sets in order.  *out is malloc'ed.  Returns 0, or -1
 * with a reason in @why.
 */
int shapes_matmul(const char *spec, const long *ms, size_t nms, struct kp_mm_shape **out, size_t *n,
		  char *why, size_t whylen);
/*
 * SDPA sets: "default" (B in {1,8,16}, H=16, S in {128..8192}, D=128, causal per @causal) or
 * "custom:BxHxH_KVxS_QxS_KxD[c],..." ("c": causal).  H_kv of the default grid is @hkv (0: H).
 */
int shapes_sdpa(const char *spec, int causal, long hkv, struct kp_sdpa_shape **out, size_t *n,
		char *why, size_t whylen);
/*
 * Conv sets: "resnet50" (its distinct 7x7, 3x3 and 1x1 layers, batch @batch) or
 * "custom:NxCxHxWxKxRxS[:sS][:pP][:dD][:gG],...".
 */
int shapes_conv(const char *spec, long batch, struct kp_conv_shape **out, size_t *n, char *why,
		size_t whylen);
/*
 * Row-wise (softmax, rmsnorm, layernorm) sets: "default" (rows x hidden in {4096x4096,
 * 16384x4096, 32768x8192, 8192x32768}) or "custom:ROWSxHIDDEN,..."; hidden a multiple of 8 up
 * to 65536.
 */
int shapes_norm(const char *spec, struct kp_norm_shape **out, size_t *n, char *why, size_t whylen);
/*
 * Cross-entropy rows x vocab sets: "default" ({4096, 16384} x {32000, 128256}) or
 * "custom:ROWSxVOCAB,..."; vocab a multiple of 8 up to 2^20.
 */
int shapes_vocab(const char *spec, struct kp_norm_shape **out, size_t *n, char *why, size_t whylen);
/* Output size of one spatial dim: floor((x + 2p - d(k-1) - 1)/s) + 1. */
long conv_out_dim(long x, long k, long stride, long pad, long dil);

#endif /* KPROF_SHAPES_H */
