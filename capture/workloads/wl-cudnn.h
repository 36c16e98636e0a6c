/*
 * wl-cudnn.h — the cudnn backend of the built-in conv workload: cuDNN 9 loaded at run time
 * (dlopen, no link-time or header dependency) and its graph (backend) API, as PyTorch uses it:
 * one-operation graphs for forward, backward data and backward filter, plans built once.
 */
#ifndef KPROF_WL_CUDNN_H
#define KPROF_WL_CUDNN_H

#include <stddef.h>

#define CUDNN_MAX_CANDIDATES 16

struct cg_api;
struct cg_sdpa;
struct kp_cudnn;
struct kp_cudnn_conv;
struct kp_cudnn_sdpa;

/* Prototypes */
/*
 * Paths to try for libcudnn.so.9, in order: $KPROF_CUDNN (@env: a file, or a directory holding
 * libcudnn.so.9), then <dir>/nvidia/cudnn/lib/libcudnn.so.9 for each Python path in @pydirs
 * (newline-separated, may be NULL), then the bare soname (system paths).  Returns the count.
 */
int cudnn_candidates(const char *env, const char *pydirs, char out[][512], int max);
/*
 * Load cuDNN from the first of @paths that opens, check its version (9.x) and create a handle.
 * NULL with a one-line reason listing every path tried in @why.
 */
struct kp_cudnn *cudnn_open_paths(char paths[][512], int n, char *why, size_t whylen);
/* cudnn_open_paths() over cudnn_candidates($KPROF_CUDNN, python3's sys.path). */
struct kp_cudnn *cudnn_open(char *why, size_t whylen);
/* cuDNN's version as major*10000 + minor*100 + patch, and the file it came from. */
long cudnn_version(const struct kp_cudnn *c);
const char *cudnn_path(const struct kp_cudnn *c);
void cudnn_close(struct kp_cudnn *c);
/* @c's backend (graph) API as a table, and its handle: the SDPA graphs are emitted through it. */
void cudnn_backend(struct kp_cudnn *c, struct cg_api *api, void **handle);

/*
 * Plans of one 2-D convolution through cuDNN's graph API (@kt: KT_*; @tf32: fp32 may use TF32;
 * @nhwc: channels-last x, w, y), over the case's fixed buffers; @dy == NULL: forward only.
 * For each direction the first TUNE_MAX engine configurations that finalize, of the instant
 * heuristics' then the fallback list's, are timed and the fastest kept; @algo names each
 * direction's engine and why it was kept (tune_describe()).  NULL with a reason in @why.
 */
struct kp_cudnn_conv *cudnn_conv_new(struct kp_cudnn *c, int kt, int tf32, int nhwc, long n,
				     long ch, long h, long w, long k, long r, long s, long stride,
				     long pad, long dil, long groups, const void *x, const void *wt,
				     void *y, const void *dy, void *dx, void *dw, char *algo,
				     size_t algolen, char *why, size_t whylen);
/*
 * Mean GPU ms of one execution of @plan through @exec (cudnnBackendExecute) on @h: one untimed,
 * one timed to size the rounds (tune_reps()), then the faster of 2 rounds; < 0 when one fails.
 */
double cudnn_time_plan(int (*exec)(void *, void *, void *), void *h, void *plan, void *vp);
/* y = conv(x, wt); then dx = conv_bwd_data(dy, wt), dw = conv_bwd_filter(x, dy).  0 or -1. */
int cudnn_conv_fwd(struct kp_cudnn_conv *cv, char *why, size_t whylen);
int cudnn_conv_bwd(struct kp_cudnn_conv *cv, char *why, size_t whylen);
void cudnn_conv_free(struct kp_cudnn_conv *cv);

/*
 * Plans of one attention problem (wl-cudnn-sdpa.c): cudnn-frontend's composite SDPA graphs
 * (cudnn-graph.c), forward with Stats (fp32 [b, h, sq]) when @dq is not NULL, and backward then;
 * of heuristics mode A's configurations (then FALLBACK's), the first 4 that finalize are timed
 * over the case's buffers and the fastest kept; @algo names the engines and the kept
 * configurations' ranks.  NULL with a reason in @why.
 */
struct kp_cudnn_sdpa *cudnn_sdpa_new(struct kp_cudnn *c, const struct cg_sdpa *s, const void *q,
				     const void *k, const void *v, void *o, float *stats,
				     const void *dout, void *dq, void *dk, void *dv, char *algo,
				     size_t algolen, char *why, size_t whylen);
/* O (and Stats) = sdpa(Q, K, V); dQ, dK, dV from dO, O and Stats.  0 or -1. */
int cudnn_sdpa_fwd(struct kp_cudnn_sdpa *a, char *why, size_t whylen);
int cudnn_sdpa_bwd(struct kp_cudnn_sdpa *a, char *why, size_t whylen);
void cudnn_sdpa_free(struct kp_cudnn_sdpa *a);

#endif /* KPROF_WL_CUDNN_H */
