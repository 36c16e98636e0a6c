/*
 * results.h — the per-case results of the built-in workloads: the summary table after a
 * capture (through the report model), --results FILE in the PyTorch OSS benchmark database
 * format (doc/workloads.md §d: one record per case and metric; .json an array of records, .csv
 * the same records flattened), read back by results_read() for `kprof analyze --results`, and
 * their charts (results_charts()).  Pure: no CUDA.  The container and the reader are in
 * src/ingest/results-read.c (the trace loader reads a capture trace's results), the table,
 * charts and writers in src/report/results*.c: both capture and analyze reach them.
 */
#ifndef KPROF_RESULTS_H
#define KPROF_RESULTS_H

#include <stddef.h>
#include <stdio.h>

struct kp_device;
struct kp_diag;
struct kp_json;
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

/*
 * The cases in run order, and the run's device and clocks (benchmark.extra_info of each
 * record): the chart's peak line is the device table's peak at these clocks.
 */
struct kp_results {
	struct kp_result *r;
	size_t n, cap;
	char device[64];   /* "NVIDIA H200"; "" unknown */
	int sm_clock_mhz;  /* the SM clock the run measured (NVML); 0 unknown */
	int mem_clock_mhz; /* the memory clock; 0 unknown */
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
 * One CHART_LINES chart per workload and op (kind, op, pass) of @rs, in run order: x the
 * case's shapes, one series per backend (with dtype / layout when the chart has several),
 * y TFLOP/s when the cases count FLOPs else GB/s (the number the summary table prints), the
 * legend each backend's geomean speedup over the chart's first backend (shapes both ran),
 * failed accuracy checks flagged, and @dev's peak (devdb_peak_flops() at rs->sm_clock_mhz
 * per dtype, devdb_peak_bw() at rs->mem_clock_mhz) as marks; @dev NULL: no peak.  Chart
 * names are "results-1", "results-2", ... (--chart); @only non-NULL builds only the chart of
 * that name.
 */
void results_charts(struct kp_doc *doc, const struct kp_results *rs, const struct kp_device *dev,
		    const char *only);
/*
 * The document of @rs: device and clock facts, results_charts() and the summary table
 * (results_report()); @dev NULL: no peak lines; @draw 0: no charts; @only as
 * results_charts().
 */
void results_doc(struct kp_doc *doc, const struct kp_results *rs, const struct kp_device *dev,
		 int draw, const char *only);
/* 1 when @path ends in ".html", 2 in ".svg", else 0. */
int results_report_suffix(const char *path);
/*
 * Write results_doc() of @rs to @path (html page, or the first chart as svg), the device
 * entry found in the built-in device table by rs->device.  0, or -1 with a reason in @why.
 */
int results_report_file(const struct kp_results *rs, const char *path, char *why, size_t whylen);
/*
 * Write @path: ".json" an array of benchmark-db records, ".csv" one line per record, with
 * @rs's device and clocks in each.  0, or -1 with a reason in @why.
 */
int results_write(const struct kp_results *rs, const char *path, char *why, size_t whylen);
/* The .json records of @rs to @f (what results_write() writes; a trace's "kprof"."results"). */
void results_write_json(const struct kp_results *rs, FILE *f);
/*
 * Read benchmark-db records (as results_write() writes them) from @s[0..len) into @rs:
 * JSON when the first non-blank byte is '[', else CSV.  The records of one case (model.name,
 * backend, dtype, pass, op, layout) are one result per run: records case by case (as written)
 * start a run at a metric the newest run has; records of each metric in one stretch and as
 * many of each (sorted by metric) give the k-th run the k-th record of each metric.  At most
 * 2^30 records (status 3 past them).  accuracy_ok false reads as tol -1.
 * @origin names the input in errors.  0, or -1 with a located error in @d (status 3).
 */
int results_read(struct kp_results *rs, const char *s, size_t len, const char *origin,
		 struct kp_diag *d);
/* results_read() of the JSON array @p stands in (after its '['), up to its ']'. */
int results_read_json(struct kp_results *rs, struct kp_json *p, const char *origin,
		      struct kp_diag *d);
/* results_read() of the file @path ("-" stdin, gzip and zstd too); errors as input_read(). */
int results_load(struct kp_results *rs, const char *path, struct kp_diag *d);

#endif /* KPROF_RESULTS_H */
