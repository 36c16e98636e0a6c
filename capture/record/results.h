/*
 * results.h — the per-case results of the built-in workloads: the summary table after a
 * capture (through the report model) and --results FILE in the PyTorch OSS benchmark database
 * format (doc/workloads.md §d: one record per case and metric; .json an array of records, .csv
 * the same records flattened).  Pure: no CUDA.
 */
#ifndef KPROF_RESULTS_H
#define KPROF_RESULTS_H

#include <stddef.h>

struct kp_doc;

/* One timed case. */
struct kp_result {
	char op[48];   /* "aten::convolution", "aten::scaled_dot_product_attention" */
	char kind[24]; /* model.type: "conv2d", "softmax", "rmsnorm", "layernorm", "cross_entropy" */
	char shape[96];   /* "32x64x56x56->64 3x3 s1 p1 d1 g1", "16384x4096" */
	char dtype[8];    /* "bf16" */
	char backend[16]; /* "cudnn", "reference", "kprof" */
	char layout[8];   /* "nchw", "nhwc", "" */
	char mode[16];    /* "fwd", "bwd", "fwd+bwd" */
	double ms;        /* mean per call */
	double tflops;    /* 0: not compute-bound (no FLOP count) */
	double gbs;       /* 0: no byte count */
	double peak_pct;  /* of the DRAM peak (row-wise) or 0 */
	double err, tol;  /* the accuracy check */
};

struct kp_results {
	struct kp_result *r;
	size_t n, cap;
};

/* Prototypes */
/*
 * @ms as capture prints times: at least 4 decimals and at least 4 significant digits
 * ("1.3751", "0.05100", "0.005123"); "-" when not positive.  Returns @buf.
 */
char *results_ms_text(char *buf, size_t cap, double ms);
/* Append a copy of @r; -1 when out of memory. */
int results_add(struct kp_results *rs, const struct kp_result *r);
void results_free(struct kp_results *rs);
/*
 * The summary table (op, shape, dtype, backend, layout, mode, time, TFLOP/s, GB/s, % peak,
 * accuracy) and, when a case ran on several backends, the speedup of each over the first
 * backend of that case and the geomean of those speedups as a header fact.
 */
void results_report(const struct kp_results *rs, struct kp_doc *doc);
/* The geomean of the speedups over each case's first backend; 0 when no case has two. */
double results_geomean(const struct kp_results *rs);
/*
 * Write @path: ".json" an array of benchmark-db records, ".csv" one line per record.  @device
 * names the GPU (benchmark.extra_info.device).  0, or -1 with a reason in @why.
 */
int results_write(const struct kp_results *rs, const char *path, const char *device, char *why,
		  size_t whylen);

#endif /* KPROF_RESULTS_H */
