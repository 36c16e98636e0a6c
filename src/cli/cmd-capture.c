/*
 * cmd-capture.c — `kprof capture`: options -> capture_run().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef KPROF_CAPTURE_DL
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <unistd.h>
#endif

#include "kprof/capture.h"
#include "kprof/cmd.h"
#include "kprof/diag.h"
#include "kprof/libpath.h"
#include "kprof/opts.h"
#include "kprof/paths.h"
#include "kprof/suite.h"
#include "kprof/utf8.h"

static const char synopsis[] = "[<options>] -o <trace.json> [-- <command> [<args>...]]";

#ifdef KPROF_CAPTURE_DL
/* The kprof binary's own path, "" when unknown. */
static void exe_path(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	buf[n > 0 ? n : 0] = '\0';
}

/* "\n  PATH: REASON" for one failed candidate */
static void tried(char *list, size_t size, const char *path, const char *why)
{
	size_t len = strlen(list);
	if (len < size)
		snprintf(list + len, size - len, "\n  %s: %s", path, why);
}

/*
 * CUPTI, cuBLAS and cudart live in kprof-capture.so so that analyze and diff never load
 * them.  Search order: libpath.h; a failure lists every path tried with its reason.
 */
static int run_capture_so(const struct kp_capture_opts *o, struct kp_diag *d)
{
	char exe[PATH_MAX], list[4 * (LIBPATH_LEN + 300)] = "";
	struct kp_libpath lp;
	exe_path(exe, sizeof(exe));
	libpath_candidates(&lp, exe, getenv("KPROF_CAPTURE_SO"), KPROF_LIBDIR, "kprof-capture.so");
	void *h = NULL;
	for (int i = 0; i < lp.n && !h; i++) {
		h = dlopen(lp.path[i], RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			const char *e = dlerror();
			size_t pl = strlen(lp.path[i]);
			/* dlerror() starts with the path itself */
			if (e && !strncmp(e, lp.path[i], pl) && !strncmp(e + pl, ": ", 2))
				e += pl + 2;
			tried(list, sizeof(list), lp.path[i], e ? e : "cannot load");
		}
	}
	if (!h) {
		diag_fprintf(stderr,
			"kprof: error: cannot load kprof-capture.so (CUPTI, cuBLAS); tried:%s\n"
			"kprof: set KPROF_CAPTURE_SO to its path\n",
			list);
		return KP_ENV;
	}
	int (*run)(const struct kp_capture_opts *, struct kp_diag *) = (int (*)(
		const struct kp_capture_opts *, struct kp_diag *))dlsym(h, "capture_run");
	if (!run) {
		diag_fprintf(stderr, "kprof: error: kprof-capture.so has no capture_run: %s\n",
			dlerror());
		dlclose(h);
		return KP_ENV;
	}
	return run(o, d);
}

/*
 * kprof-inject.so and kprof-shim.so are found as kprof-capture.so is ($KPROF_INJECT_SO,
 * $KPROF_SHIM_SO).  The driver and the loader open them in the command, which may chdir: the
 * path is made absolute.  NULL when none is readable, with the paths tried in @list.
 */
static char *find_so(const char *env_name, const char *file, char *list, size_t size)
{
	char exe[PATH_MAX];
	struct kp_libpath lp;
	exe_path(exe, sizeof(exe));
	libpath_candidates(&lp, exe, getenv(env_name), KPROF_LIBDIR, file);
	list[0] = '\0';
	for (int i = 0; i < lp.n; i++) {
		if (access(lp.path[i], R_OK) == 0) {
			char *r = realpath(lp.path[i], NULL);
			if (r)
				return r;
		}
		tried(list, size, lp.path[i], strerror(errno));
	}
	return NULL;
}

/*
 * --torch: the directory of kprof's Python start-up hook (python/kprof_torch_hook.py, found as
 * the libraries are; $KPROF_TORCH_HOOK names the directory) when the command gets it: with
 * "on", or with "auto" when it runs Python (capture_cmd_is_python); it needs NVTX.  NULL
 * otherwise, with a warning when it was asked for and is missing.
 */
static char *torch_hook_dir(const struct kp_capture_opts *o)
{
	if (o->torch == TORCH_OFF ||
	    (o->torch == TORCH_AUTO && !capture_cmd_is_python(o->cmd, getenv("PATH"))))
		return NULL;
	if (!o->nvtx || !o->shim_so) {
		if (o->torch == TORCH_ON)
			diag_fprintf(stderr, "kprof: warning: --torch on needs NVTX ranges (%s); no "
					     "torch hook\n",
				     o->nvtx ? "kprof-shim.so not found" : "--no-nvtx given");
		return NULL;
	}
	char list[4 * (LIBPATH_LEN + 300)] = "", env[LIBPATH_LEN], exe[PATH_MAX];
	const char *e = getenv("KPROF_TORCH_HOOK");
	if (e && *e)
		snprintf(env, sizeof(env), "%s/kprof_torch_hook.py", e);
	struct kp_libpath lp;
	exe_path(exe, sizeof(exe));
	libpath_candidates(&lp, exe, e && *e ? env : NULL, KPROF_LIBDIR,
			   "python/kprof_torch_hook.py");
	char *f = NULL;
	for (int i = 0; i < lp.n && !f; i++) {
		if (access(lp.path[i], R_OK) == 0)
			f = realpath(lp.path[i], NULL);
		if (!f)
			tried(list, sizeof(list), lp.path[i], strerror(errno));
	}
	if (!f) {
		diag_fprintf(stderr,
			     "kprof: warning: cannot find kprof's torch hook; tried:%s\n"
			     "kprof: no ops over every kernel, no module tree (set KPROF_TORCH_HOOK)\n",
			     list);
		return NULL;
	}
	*strrchr(f, '/') = '\0';
	return f;
}
#endif

static int run(struct kp_capture_opts *o);

/* A suite's output_dir and the folders of its cases' files, as torchao's runner makes them */
static int make_dirs(const struct kp_capture_opts *o, struct kp_diag *d)
{
	if (o->output && paths_mkdir_parents(o->output, d) < 0)
		return -1;
	if (o->report && paths_mkdir_parents(o->report, d) < 0)
		return -1;
	return o->results ? paths_mkdir_parents(o->results, d) : 0;
}

/* Run (or with @list, list) every case of the suite @path; the command line gives defaults. */
static int run_suite(const char *path, const struct kp_capture_opts *base, int list)
{
	struct kp_suite s;
	struct kp_diag d;
	if (suite_load(path, base, &s, &d) < 0) {
		diag_print(stderr, d.msg);
		return d.status;
	}
	int rc = KP_OK;
	for (size_t i = 0; i < s.n; i++) {
		struct kp_capture_opts *o = &s.c[i].o;
		if (list) {
			capture_list_cases(stdout, s.c[i].name, o);
			continue;
		}
		fputs("case ", stdout);
		utf8_fputs_visible(s.c[i].name, stdout);
		printf(" (%zu of %zu)\n", i + 1, s.n);
		fflush(stdout);
		int r = make_dirs(o, &d) < 0 ? (diag_print(stderr, d.msg), d.status)
					     : run(o);
		rc = r > rc ? r : rc;
		if (r >= KP_USAGE)
			break;
	}
	suite_free(&s);
	return rc;
}

/* The long name of the first built-in-workload option set, or NULL. */
static const char *workload_option(const struct kp_capture_opts *o, const struct kp_capture_opts *d)
{
	if (o->workloads != d->workloads)
		return "workload";
	if (o->mm_ops != d->mm_ops || o->epilogues != d->epilogues)
		return o->mm_ops != d->mm_ops ? "op" : "epilogue";
	if (o->dtypes != d->dtypes)
		return "dtype";
	if (o->shapes || o->m_list)
		return o->shapes ? "shapes" : "m";
	if (o->sdpa_shapes || o->causal != d->causal || o->kv_heads != d->kv_heads)
		return o->sdpa_shapes           ? "sdpa-shapes"
		       : o->causal != d->causal ? "causal"
						: "kv-heads";
	if (o->conv_shapes || o->batch != d->batch)
		return o->conv_shapes ? "conv-shapes" : "batch";
	if (o->backends || o->layouts || o->norm_shapes)
		return o->backends ? "backend" : o->layouts ? "layout" : "norm-shapes";
	if (o->results || o->report)
		return o->results ? "results" : "report";
	if (o->warmup != d->warmup || o->iters != d->iters)
		return o->warmup != d->warmup ? "warmup" : "iters";
	if (o->backward != d->backward || o->overhead != d->overhead)
		return o->backward != d->backward ? "backward" : "overhead";
	return NULL;
}

/* Options of the other mode: built-in workload options with a command and the reverse;
 * --config with a command or --output, --list-cases with a command. */
static int check_mode(const struct kp_capture_opts *o, const struct kp_capture_opts *dflt,
		      char **cmd, const char *config, int list_cases)
{
	const char *wl = workload_option(o, dflt);
	if (cmd && wl) {
		diag_fprintf(stderr,
			"kprof: error: option '--%s' is for built-in workloads, not '-- <command>'\n",
			wl);
		diag_fprintf(stderr, "kprof: see 'kprof capture -h'\n");
		return -1;
	}
	if (!cmd && (o->nvtx != dflt->nvtx || o->libs != dflt->libs || o->torch != dflt->torch ||
		     o->torch_shapes != dflt->torch_shapes)) {
		diag_fprintf(stderr, "kprof: error: option '--%s' is for '-- <command>'\n",
			o->nvtx != dflt->nvtx ? "nvtx" : o->libs != dflt->libs ? "blas" :
			o->torch != dflt->torch ? "torch" : "no-torch-shapes");
		diag_fprintf(stderr, "kprof: see 'kprof capture -h'\n");
		return -1;
	}
	if (config && (cmd || o->output)) {
		diag_fprintf(stderr,
			"kprof: error: option '--config' runs built-in workloads and names each "
			"case's output: remove '%s'\n",
			cmd ? "-- <command>" : "--output");
		diag_fprintf(stderr, "kprof: see 'kprof capture -h'\n");
		return -1;
	}
	if (!config && cmd && list_cases) {
		diag_fprintf(stderr,
			"kprof: error: option '--list-cases' is for built-in workloads, not "
			"'-- <command>'\n");
		diag_fprintf(stderr, "kprof: see 'kprof capture -h'\n");
		return -1;
	}
	return 0;
}

/* The capture itself: through kprof-capture.so (with the -- <cmd> libraries found) or linked. */
static int run(struct kp_capture_opts *o)
{
	struct kp_diag d = { 0 };
	o->out = stdout; /* the cases' lines; warnings and notes as they happen, the error after */
	o->msg = stderr;
#ifdef KPROF_CAPTURE_DL
	char *inject = NULL, *shim = NULL, list[4 * (LIBPATH_LEN + 300)];
	if (o->cmd &&
	    !(inject = find_so("KPROF_INJECT_SO", "kprof-inject.so", list, sizeof(list)))) {
		diag_fprintf(stderr,
			"kprof: error: cannot find kprof-inject.so; tried:%s\n"
			"kprof: set KPROF_INJECT_SO to its path\n",
			list);
		return KP_ENV;
	}
	if (o->cmd && (o->nvtx || o->libs) &&
	    !(shim = find_so("KPROF_SHIM_SO", "kprof-shim.so", list, sizeof(list))))
		diag_fprintf(stderr,
			"kprof: warning: cannot find kprof-shim.so; tried:%s\n"
			"kprof: library calls and NVTX ranges are not recorded (set "
			"KPROF_SHIM_SO)\n",
			list);
	o->inject_so = inject;
	o->shim_so = shim;
	char *torch = o->cmd ? torch_hook_dir(o) : NULL;
	o->torch_dir = torch;
	int rc = run_capture_so(o, &d);
	free(inject);
	free(shim);
	free(torch);
#else
	int rc = capture_run(o, &d);
#endif
	if (d.msg[0])
		diag_print(stderr, d.msg);
	return rc;
}

/* One capture (or with @list, its cases listed) from the command line's options. */
static int capture_one(struct kp_capture_opts *o, char **cmd, int list)
{
	o->cmd = cmd;
	char why[512];
	if (capture_opts_finish(o, why, sizeof(why)) < 0) {
		diag_fprintf(stderr, "kprof: error: %s\n", why);
		diag_fprintf(stderr, "kprof: see 'kprof capture -h'\n");
		return KP_USAGE;
	}
	if (list) {
		capture_list_cases(stdout, "command-line", o);
		capture_opts_free(o);
		return KP_OK;
	}
	int rc = run(o);
	capture_opts_free(o);
	return rc;
}

/* the options' defaults; --config's cases start from these plus the command line's */
static const struct kp_capture_opts capture_defaults = {
	.warmup = 3,
	.iters = 10,
	.backward = 1,
	.sample_period_ms = 10,
	.nvtx = -1,
	.libs = -1,
	.torch_shapes = 1,
};

/* kprof capture's options as given. */
struct capture_args {
	struct kp_capture_opts o;
	long period; /* --sample-period, ms */
	const char *config;
	int list_cases;
};

/* The options into @a (argv without "-- <command>"); -1 to go on, else the status. */
static int parse_options(struct capture_args *a, int argc, char **argv)
{
	/* clang-format off */
	const struct kp_opt table[] = {
		{ "output", 'o', OPT_STR, "FILE", "write the Kineto-compatible trace here", &a->o.output, NULL, NULL },
		{ "config", 0, OPT_STR, "FILE", "run the cases of a suite (YAML, torchao microbenchmark style; see kprof-capture(1)); other options give their defaults",
		  &a->config, NULL, NULL },
		{ "list-cases", 0, OPT_FLAG, NULL, "print the cases and shapes the options or --config expand to; run nothing",
		  &a->list_cases, NULL, NULL },
		{ "workload", 'w', OPT_CALLBACK, "LIST", "matmul, sdpa, conv, softmax, rmsnorm, layernorm, cross_entropy (comma-separated or repeated; default matmul)",
		  &a->o.workloads, NULL, capture_parse_workloads },
		{ "op", 0, OPT_CALLBACK, "LIST", "matmul ops: mm, addmm, bmm (default all)",
		  &a->o.mm_ops, NULL, capture_parse_mm_ops },
		{ "epilogue", 0, OPT_CALLBACK, "LIST", "matmul epilogues (cuBLASLt's names): none (mm), bias (addmm), relu, relu_bias, gelu, gelu_bias (_addmm_activation); without --op only these run",
		  &a->o.epilogues, NULL, capture_parse_epilogues },
		{ "dtype", 't', OPT_CALLBACK, "LIST", "bf16, fp16, fp32, tf32 (default bf16)",
		  &a->o.dtypes, NULL, capture_parse_dtypes },
		{ "shapes", 'S', OPT_STR, "SET", "matmul: custom:MxKxN,..., llama, pow2:MIN:MAX, pow2_extended:MIN:MAX, sweep:MIN:MAX, small_sweep:MIN:MAX; SET+SET... concatenates",
		  &a->o.shapes, NULL, NULL },
		{ "m", 0, OPT_STR, "M[,M...]", "M of the llama shapes (default 4096)", &a->o.m_list, NULL, NULL },
		{ "sdpa-shapes", 0, OPT_STR, "SET", "default, custom:BxHxH_KVxS_QxS_KxD[c],...", &a->o.sdpa_shapes, NULL, NULL },
		{ "causal", 0, OPT_CALLBACK, "WHICH", "default SDPA grid: both, yes, no",
		  &a->o.causal, NULL, capture_parse_causal },
		{ "kv-heads", 0, OPT_INT, "N", "H_kv of the default SDPA grid (GQA; default H)", &a->o.kv_heads, NULL, NULL },
		{ "conv-shapes", 0, OPT_STR, "SET", "resnet50, custom:NxCxHxWxKxRxS[:sS][:pP][:dD][:gG],...",
		  &a->o.conv_shapes, NULL, NULL },
		{ "backend", 0, OPT_CALLBACK, "LIST", "conv, sdpa: reference, cudnn (default cudnn when found, else reference); matmul: cublas, cublaslt (default cublas)",
		  &a->o.backends, NULL, capture_parse_backends },
		{ "layout", 0, OPT_CALLBACK, "LIST", "conv memory layout: nchw, nhwc (default nchw; nhwc needs cudnn)",
		  &a->o.layouts, NULL, capture_parse_layouts },
		{ "norm-shapes", 0, OPT_STR, "SET", "softmax, rmsnorm, layernorm, cross_entropy: default, custom:ROWSxHIDDEN,...",
		  &a->o.norm_shapes, NULL, NULL },
		{ "results", 0, OPT_STR, "FILE", "matmul, conv and row-wise cases as benchmark-db records: FILE.json or FILE.csv",
		  &a->o.results, NULL, NULL },
		{ "report", 0, OPT_STR, "FILE", "the results as charts, one per workload and op: FILE.html (all) or FILE.svg (the first)",
		  &a->o.report, NULL, NULL },
		{ "batch", 'b', OPT_INT, "N", "bmm batch (default 8), conv N (default 32)", &a->o.batch, NULL, NULL },
		{ "warmup", 0, OPT_INT, "N", "untraced iterations per case first (default 3)", &a->o.warmup, NULL, NULL },
		{ "iters", 'i', OPT_INT, "N", "traced iterations per case (default 10)", &a->o.iters, NULL, NULL },
		{ "backward", 0, OPT_FLAG, NULL, "sdpa, conv and the memory-bound workloads also run backward (default on)",
		  &a->o.backward, NULL, NULL },
		{ "metrics", 0, OPT_FLAG, NULL, "per-kernel FLOPs, DRAM bytes, SM clock (CUPTI range profiler, every kernel replayed once per pass: 5 on H200): each timed loop runs again (11x the capture time); with -- <cmd> the command runs a second time under the profiler",
		  &a->o.metrics, NULL, NULL },
		{ "overhead", 0, OPT_FLAG, NULL, "also time the loop untraced; print the ratio", &a->o.overhead, NULL, NULL },
		{ "nvtx", 0, OPT_FLAG, NULL, "-- <cmd>: NVTX ranges become annotations / ops (default on)",
		  &a->o.nvtx, NULL, NULL },
		{ "blas", 0, OPT_FLAG, NULL, "-- <cmd>: cuBLAS / cuBLASLt GEMM calls become ops (default on)",
		  &a->o.libs, NULL, NULL },
		{ "torch", 0, OPT_CALLBACK, "WHEN", "-- <cmd>: kprof's Python start-up hook on PYTHONPATH (emit_nvtx ops with shapes, nn.Module ranges): auto (default: when the command runs Python), on, off",
		  &a->o.torch, NULL, capture_parse_torch },
		{ "torch-shapes", 0, OPT_FLAG, NULL, "-- <cmd>: the torch hook's ops with their input shapes (default on; --no-torch-shapes: names only, cheaper: FLOPs of matmuls, convolutions and attention from their library calls, none for other ops)",
		  &a->o.torch_shapes, NULL, NULL },
		{ "memory", 0, OPT_FLAG, NULL, "device memory: CUPTI's allocation and release records as [memory] events (running sums of driver-level allocations: what the caching allocator reserves) for 'kprof analyze --memory'",
		  &a->o.memory, NULL, NULL },
		{ "trace-api", 0, OPT_CALLBACK, "WHAT", "API calls recorded: launch (those analyze links and breaks down; default), all (every runtime and driver call, sync and CUPTI overhead records), none",
		  &a->o.trace_api, NULL, capture_parse_trace_api },
		{ "sample-period", 0, OPT_INT, "MS", "NVML clock sampling period, 1..100 (default 10)", &a->period, NULL, NULL },
		{ NULL, 0, 0, NULL, NULL, NULL, NULL, NULL },
	};
	/* clang-format on */
	int nargs = 0;
	int rc = opts_parse("capture", synopsis, table, argc, argv, &nargs);
	if (rc)
		return rc > 0 ? KP_OK : KP_USAGE;
	if (nargs > 0) {
		diag_fprintf(stderr, "kprof: error: unexpected argument '%s'\n", argv[1]);
		diag_fprintf(stderr, "kprof: see 'kprof capture -h'\n");
		return KP_USAGE;
	}
	return -1;
}

int cmd_capture(int argc, char **argv)
{
	struct capture_args a = { .o = capture_defaults, .period = 10 };
	char **cmd;
	argc = capture_split_argv(argc, argv, &cmd);
	int rc = parse_options(&a, argc, argv);
	if (rc >= 0)
		return rc;
	a.o.sample_period_ms = (int)(a.period > 1000 ? 1000 : a.period);
	if (check_mode(&a.o, &capture_defaults, cmd, a.config, a.list_cases) < 0)
		return KP_USAGE;
	a.o.nvtx = a.o.nvtx != 0;
	a.o.libs = a.o.libs != 0;
	if (a.config)
		return run_suite(a.config, &a.o, a.list_cases);
	return capture_one(&a.o, cmd, a.list_cases);
}
