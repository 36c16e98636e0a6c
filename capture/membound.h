/*
 * membound.h — kprof's one-pass row-wise kernels (capture/membound.cu): softmax, RMSNorm,
 * LayerNorm over the last dim of a [rows, hidden] tensor.  Each row is read once with 16-byte
 * vector loads into registers, reduced in the block, and written once.  Element types as in
 * kernels.h; hidden must be a multiple of 8 (16 bytes of 16-bit or 2 vectors of fp32) and at
 * most 65536.  Launch on the legacy default stream; return a cudaError_t as int.
 */
#ifndef KPROF_MEMBOUND_H
#define KPROF_MEMBOUND_H

enum { RW_SOFTMAX, RW_RMSNORM, RW_LAYERNORM };

#ifdef __cplusplus
extern "C" {
#endif

/*
 * RW_SOFTMAX: y = softmax(x) per row.  RW_RMSNORM: y = x * rstd * w, rstd = 1/sqrt(mean(x^2) +
 * eps), @rstd[row] written.  RW_LAYERNORM: y = (x - mean) * rstd * w + b, @mean[row] and
 * @rstd[row] written (fp32).  @w and @b have @hidden elements of @kt.
 */
int kk_rowwise(int op, void *y, const void *x, const void *w, const void *b, float *mean,
	       float *rstd, int kt, long rows, long hidden, float eps);

#ifdef __cplusplus
}
#endif

#endif /* KPROF_MEMBOUND_H */
