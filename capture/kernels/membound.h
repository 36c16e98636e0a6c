/*
 * membound.h — kprof's one-pass row-wise kernels (capture/kernels/membound*.cu): softmax,
 * RMSNorm, LayerNorm (forward and backward) over the last dim of a [rows, hidden] tensor, and
 * cross-entropy (forward and backward, streaming: any vocab).  Each row is read from DRAM once
 * with 16-byte vector loads (into registers, or for long rows a second time from L2 or through
 * a shared-memory ring), reduced in the block (or cluster), and written once.  Element types as in
 * kernels.h; hidden must be a multiple of 8 (16 bytes of 16-bit or 2 vectors of fp32) and at
 * most 65536.  Launch on the legacy default stream; return a cudaError_t as int.
 */
#ifndef KPROF_MEMBOUND_H
#define KPROF_MEMBOUND_H

#include <stddef.h>
#include <stdint.h>

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
/* Softmax backward (aten::_softmax_backward_data): dx = y * (dy - sum(y * dy)) per row. */
int kk_rowsoftmax_bwd(void *dx, const void *y, const void *dy, int kt, long rows, long hidden);
/*
 * RMSNorm (RW_RMSNORM) or LayerNorm (RW_LAYERNORM) backward from the forward's fp32 @mean
 * (LayerNorm only) and @rstd: dx [rows, hidden], dw and (LayerNorm) db [hidden], all in @kt.
 * @ws: a device workspace of kk_norm_bwd_workspace() bytes (fp32 partial sums of dw/db, one
 * row per block, or cluster, of the persistent grid).
 */
size_t kk_norm_bwd_workspace(int op, int kt, long rows, long hidden);
int kk_norm_bwd(int op, void *dx, void *dw, void *db, const void *dy, const void *x,
		const float *mean, const float *rstd, const void *w, void *ws, int kt, long rows,
		long hidden);
/*
 * Cross-entropy over the last dim of logits @x [rows, vocab] (any vocab, a multiple of 8):
 * forward writes loss[row] = logsumexp(x[row]) - x[row, target[row]] in @kt (0 where target is
 * @ignore) and the fp32 logsumexp @lse[row]; backward writes dx = (exp(x - lse) - onehot) *
 * dloss[row] in @kt (0 rows where target is @ignore).
 */
int kk_xent_fwd(void *loss, float *lse, const void *x, const int64_t *target, int kt, long rows,
		long vocab, long ignore);
int kk_xent_bwd(void *dx, const void *dloss, const void *x, const int64_t *target, const float *lse,
		int kt, long rows, long vocab, long ignore);
/* The current device's DRAM peak in bytes/s (memory clock x bus width), 0 when unknown. */
double kk_dram_peak(void);
/* t[i] uniform in [0, vocab) from a hash of (seed, i). */
int kk_fill_targets(int64_t *t, long n, long vocab, uint64_t seed);

#ifdef __cplusplus
}
#endif

#endif /* KPROF_MEMBOUND_H */
