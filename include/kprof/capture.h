/*
 * capture.h — `kprof capture`: run built-in workloads under CUPTI and write a Kineto trace.
 */
#ifndef KPROF_CAPTURE_H
#define KPROF_CAPTURE_H

#include <stddef.h>

enum { WL_MATMUL = 1, WL_SDPA = 2, WL_CONV = 4 };
enum { MM_MM = 1, MM_ADDMM = 2, MM_BMM = 4 };
/* Workload dtypes: storage and math.  tf32 stores fp32 and multiplies in TF32. */
enum kp_cap_dtype { CDT_BF16, CDT_FP16, CDT_FP32, CDT_TF32, CDT_N };

struct kp_mm_shape;
struct kp_sdpa_shape;
struct kp_conv_shape;

/*
 * Options of one capture.  The strings are borrowed from argv; capture_opts_finish() expands
 * them into the shape arrays (malloc'ed, freed by capture_opts_free()).
 */
struct kp_capture_opts {
	const char *output;         /* -o FILE */
	int workloads;              /* WL_* mask; 0: matmul */
	int mm_ops;                 /* MM_* mask; 0: all three */
	int dtypes;                 /* 1 << CDT_*; 0: bf16 */
	const char *shapes;         /* matmul set; NULL: "custom:4096x4096x4096" */
	const char *m_list;         /* --m for llama: "1,16,4096" */
	const char *sdpa_shapes;    /* NULL: "default" */
	const char *conv_shapes;    /* NULL: "resnet50" */
	int causal;                 /* CAUSAL_BOTH / _YES / _NO for the default SDPA grid */
	long kv_heads;              /* H_kv of the default SDPA grid; 0: H */
	long batch;                 /* bmm batch (default 8) and conv N (default 32); 0: defaults */
	long warmup, iters;         /* defaults 3 and 10 */
	int backward;               /* sdpa/conv also run backward (default on) */
	int overhead;               /* time the loop untraced and traced */
	int sample_period_ms;       /* NVML period, default 10 */

	/* filled by capture_opts_finish() */
	struct kp_mm_shape *mm;
	size_t nmm;
	struct kp_sdpa_shape *sdpa;
	size_t nsdpa;
	struct kp_conv_shape *conv;
	size_t nconv;
};

/* Prototypes */
/* Option-value parsers for the option table: NULL or a static reason (opts.h OPT_CALLBACK). */
const char *capture_parse_workloads(const char *arg, void *mask);
const char *capture_parse_mm_ops(const char *arg, void *mask);
const char *capture_parse_dtypes(const char *arg, void *mask);
const char *capture_parse_causal(const char *arg, void *causal);
/* "matmul", "bf16", ... */
const char *capture_dtype_name(int cdt);

/*
 * Fill defaults and expand the shape sets.  Returns 0, or -1 with a message (without the
 * "kprof: error: " prefix) in @why: a usage error, exit status 2.
 */
int capture_opts_finish(struct kp_capture_opts *o, char *why, size_t whylen);
void capture_opts_free(struct kp_capture_opts *o);

/*
 * Run the capture and write o->output.  Prints the accuracy lines (and --overhead times) on
 * stdout, warnings and errors on stderr.  Returns an exit status: 0, 1 when an accuracy check
 * failed (the trace is still written), 4 without CUPTI support, a CUDA device or on I/O errors.
 */
int capture_run(const struct kp_capture_opts *o);

#endif /* KPROF_CAPTURE_H */
