/*
 * capture.h — `kprof capture`: run built-in workloads under CUPTI and write a Kineto trace.
 */
#ifndef KPROF_CAPTURE_H
#define KPROF_CAPTURE_H

#include <stddef.h>
#include <stdio.h>

enum {
	WL_MATMUL = 1,
	WL_SDPA = 2,
	WL_CONV = 4,
	WL_SOFTMAX = 8,
	WL_RMSNORM = 16,
	WL_LAYERNORM = 32,
	WL_XENT = 64 /* cross_entropy */
};
/*
 * Backends (--backend): conv reference / cudnn, matmul cublas / cublaslt.  Layouts (--layout).
 */
enum { BE_REFERENCE = 1, BE_CUDNN = 2, BE_CUBLAS = 4, BE_CUBLASLT = 8 };
#define BE_CONV (BE_REFERENCE | BE_CUDNN)
#define BE_MATMUL (BE_CUBLAS | BE_CUBLASLT)
enum { LAYOUT_NCHW = 1, LAYOUT_NHWC = 2 };
/*
 * Matmul variants (--op, --epilogue): mm is epilogue none, addmm epilogue bias; the ReLU and
 * GELU epilogues are torch's _addmm_activation (without bias: beta 0).
 */
enum {
	MM_MM = 1,
	MM_ADDMM = 2,
	MM_BMM = 4,
	MM_RELU = 8,
	MM_RELU_BIAS = 16,
	MM_GELU = 32,
	MM_GELU_BIAS = 64
};
#define MM_NVARIANTS 7
/* Workload dtypes: storage and math.  tf32 stores fp32 and multiplies in TF32. */
enum kp_cap_dtype { CDT_BF16, CDT_FP16, CDT_FP32, CDT_TF32, CDT_N };

struct kp_mm_shape;
struct kp_sdpa_shape;
struct kp_conv_shape;
struct kp_norm_shape;
struct kp_diag;

/*
 * Options of one capture.  The strings are borrowed from argv; capture_opts_finish() expands
 * them into the shape arrays (malloc'ed, freed by capture_opts_free()).
 */
struct kp_capture_opts {
	const char *output;      /* -o FILE */
	int workloads;           /* WL_* mask; 0: matmul */
	int mm_ops;              /* MM_* mask; 0: mm, addmm, bmm (or only the epilogues) */
	int epilogues;           /* --epilogue: MM_* mask of 2-D variants, merged by finish */
	int dtypes;              /* 1 << CDT_*; 0: bf16 */
	const char *shapes;      /* matmul set; NULL: "custom:4096x4096x4096" */
	const char *m_list;      /* --m for llama: "1,16,4096" */
	const char *sdpa_shapes; /* NULL: "default" */
	const char *conv_shapes; /* NULL: "resnet50" */
	const char *norm_shapes; /* softmax/rmsnorm/layernorm rows x hidden, cross_entropy rows x
				       vocab; NULL: "default" (each its own) */
	int backends;            /* BE_* mask; conv none: cudnn when found, else reference;
				       matmul none: cublas */
	int layouts;             /* LAYOUT_* mask for conv; 0: nchw */
	const char *results;     /* --results FILE.json|FILE.csv, or NULL */
	const char *report;      /* --report FILE.html|FILE.svg (the results' charts), or NULL */
	int causal;              /* CAUSAL_BOTH / _YES / _NO for the default SDPA grid */
	long kv_heads;           /* H_kv of the default SDPA grid; 0: H */
	long batch;              /* bmm batch (default 8) and conv N (default 32); 0: defaults */
	long warmup, iters;      /* defaults 3 and 10 */
	int backward;            /* sdpa/conv also run backward (default on) */
	int overhead;            /* time the loop untraced and traced */
	int metrics;             /* re-run each timed loop under the range profiler */
	int sample_period_ms;    /* NVML period, default 10 */
	char **cmd;              /* `-- <cmd> [args...]` (NULL-terminated, borrowed), or NULL */
	const char *inject_so;   /* absolute path of kprof-inject.so for @cmd */
	const char *shim_so;     /* absolute path of kprof-shim.so (LD_PRELOAD), or NULL */
	int nvtx;                /* -- <cmd>: record NVTX ranges (default on); -1 unset */
	int libs;                /* -- <cmd>: record cuBLAS/cuBLASLt calls (default on); -1 unset */
	int trace_api;           /* --trace-api: enum kp_trace_api (capture/record/recorder.h), 0 launch */
	int memory;              /* --memory: device allocations as [memory] events (cmem.h) */
	FILE *out;               /* progress and result lines (cmd-capture.c: stdout); NULL: none */
	FILE *msg;               /* warnings and notes as they happen (stderr); NULL: none */
	int torch;               /* --torch: TORCH_AUTO (default), TORCH_ON, TORCH_OFF */
	const char *torch_dir;   /* -- <cmd>: the torch hook's directory, put first on PYTHONPATH;
				    NULL: the command runs without it */
	int torch_shapes;        /* the hook's emit_nvtx(record_shapes=); --no-torch-shapes: 0 */

	/* filled by capture_opts_finish() */
	struct kp_mm_shape *mm;
	size_t nmm;
	struct kp_sdpa_shape *sdpa;
	size_t nsdpa;
	struct kp_conv_shape *conv;
	size_t nconv;
	struct kp_norm_shape *norm;
	size_t nnorm;
	struct kp_norm_shape *xent; /* cross_entropy: rows x vocab */
	size_t nxent;
};

/* Prototypes */
/* Option-value parsers for the option table: NULL or a static reason (opts.h OPT_CALLBACK). */
const char *capture_parse_workloads(const char *arg, void *mask);
const char *capture_parse_mm_ops(const char *arg, void *mask);
const char *capture_parse_epilogues(const char *arg, void *mask);
const char *capture_parse_dtypes(const char *arg, void *mask);
const char *capture_parse_causal(const char *arg, void *causal);
const char *capture_parse_backends(const char *arg, void *mask);
const char *capture_parse_layouts(const char *arg, void *mask);
const char *capture_parse_trace_api(const char *arg, void *mode);
/* --trace-api's values by enum kp_trace_api: "launch", "all", "none" */
extern const char *const capture_trace_api_names[];

/* --torch: kprof's Python start-up hook (capture/intercept/python/) for -- <cmd> */
enum { TORCH_AUTO, TORCH_ON, TORCH_OFF };
extern const char *const capture_torch_names[]; /* "auto", "on", "off" */
const char *capture_parse_torch(const char *arg, void *mode);
/*
 * --torch auto's rule: 1 when @cmd runs Python: argv[0]'s base name is python, pythonN or
 * pythonN.M, or ends in ".py", or argv[0] (looked up in @path_env as execvp does when it has
 * no '/') is a script whose "#!" line names python (torchrun, accelerate).
 */
int capture_cmd_is_python(char *const *cmd, const char *path_env);
/*
 * "PYTHONPATH=@dir:@old" (just @dir when @old is NULL or empty), malloc'ed; NULL when @dir
 * is empty, longer than 4096 bytes or holds a ':' (PYTHONPATH's separator), or without memory.
 */
char *capture_pythonpath(const char *dir, const char *old);

/*
 * Split `capture [options] -- <cmd> [args...]` at the first "--": returns the argument count
 * before it (argv[0] included) and sets *cmd to the words after it, NULL-terminated, or to NULL
 * when there is no "--".  argv[that count] becomes NULL.  A "--" given as the value of a
 * separate option argument ("-o --") is taken as the split; "--output=--" is not.
 */
int capture_split_argv(int argc, char **argv, char ***cmd);

/*
 * Fill defaults and expand the shape sets (with @cmd: only check -o and the period).  Returns 0, or -1 with a message (without the
 * "kprof: error: " prefix) in @why: a usage error, exit status 2.
 */
int capture_opts_finish(struct kp_capture_opts *o, char *why, size_t whylen);
void capture_opts_free(struct kp_capture_opts *o);
/*
 * `--list-cases`: case @name of finished options @o, one header line then each workload's
 * shapes, on @fp.  Needs no GPU.
 */
void capture_list_cases(FILE *fp, const char *name, const struct kp_capture_opts *o);

/*
 * Run the capture and write o->output.  Prints the accuracy lines (and --overhead times) on
 * o->out, warnings on o->msg (capture/record/cmsg.h); the run's error is returned in @d
 * (d->msg empty when there was none) for the caller to print.  Returns an exit status: 0, 1
 * when an accuracy check failed (the trace is still written), 4 without CUPTI support, a CUDA
 * device or on I/O errors.
 */
int capture_run(const struct kp_capture_opts *o, struct kp_diag *d);

/*
 * `kprof capture -- <cmd>`: run o->cmd with CUDA_INJECTION64_PATH=o->inject_so, sample NVML
 * in this process until it exits, merge the records of every process that initialised CUDA
 * and write o->output when there are any.  The command's stdout and stderr pass through;
 * kprof's warnings and notes go to o->msg, its error into @d (d->msg empty when none).  Returns the command's exit status, 128 + N when signal N
 * ended it, 127 when it was not found, 126 when it could not be executed, 4 when kprof could
 * not set up the run (the command did not run) or could not write the trace of a command
 * that exited 0.
 */
int capture_run_cmd(const struct kp_capture_opts *o, struct kp_diag *d);

#endif /* KPROF_CAPTURE_H */
