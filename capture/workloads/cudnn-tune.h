/*
 * cudnn-tune.h — choosing one of cuDNN's engine configurations by timing them, as PyTorch's
 * cudnn.benchmark does (doc/workloads.md §a.5, §a.8): the candidates in the heuristics' order
 * (then the fallback list's), the executions to time each, the fastest, and the text that says
 * what was chosen and why.  Pure: no CUDA, no cuDNN; wl-cudnn.c and wl-cudnn-sdpa.c build,
 * time and keep the plans.
 */
#ifndef KPROF_CUDNN_TUNE_H
#define KPROF_CUDNN_TUNE_H

#include <stddef.h>
#include <stdint.h>

#define TUNE_MAX 8 /* plans timed per graph, at most */

/* Where a candidate came from: heuristics mode A / instant, or cuDNN's fallback list. */
enum { TUNE_HEUR, TUNE_FALLBACK };

struct tune_cand {
	int64_t engine; /* cuDNN's global engine index; -1 unknown */
	int src;        /* TUNE_HEUR, TUNE_FALLBACK */
	int rank;       /* 1-based place in its source's order */
	double ms;      /* mean per execution; < 0: not timed or failed */
};

struct tune {
	struct tune_cand c[TUNE_MAX];
	int n, max; /* max: candidates wanted (1..TUNE_MAX; 0 means TUNE_MAX) */
};

/* Prototypes */
/* 1 when an engine with these numerical notes must not run (down-converts inputs; or, @strict
 * fp32, uses tensor cores), as PyTorch's filterEngineConfigs. */
int tune_skip_notes(const int *notes, int n, int strict);
/*
 * 1 when the configuration at @rank of @src, of @engine, is worth a plan: there is room, and a
 * fallback configuration's engine is not already a candidate.
 */
int tune_wants(const struct tune *t, int64_t engine, int src);
/* Append a candidate (untimed); its index, or -1 when full. */
int tune_add(struct tune *t, int64_t engine, int src, int rank);
/*
 * Executions per timed round for a plan whose one execution took @one_ms: enough for about 1 ms
 * of GPU time, 1 to 20 (event timing's resolution is about 0.5 us).
 */
int tune_reps(double one_ms);
/* The fastest timed candidate (ties keep the heuristics' order), or -1 when none was timed. */
int tune_best(const struct tune *t);
/*
 * "engine 27 (heuristics #3, 0.04612 ms; #1 engine 12 0.05101 ms; 8 timed)": the kept
 * candidate @best, and the first candidate when another was faster.  Returns @buf.
 */
char *tune_describe(const struct tune *t, int best, char *buf, size_t cap);

#endif /* KPROF_CUDNN_TUNE_H */
