/*
 * capture.c — `kprof capture`: option values, shape expansion, and the run: CUPTI on, NVML
 * sampler, workloads, flush, Kineto JSON out.
 */
#include "kprof/capture.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kprof/diag.h"
#include "kprof/doc.h"
#include "kprof/table.h"
#include "record/cmsg.h"
#include "record/ctrace.h"
#include "record/devprops.h"
#include "record/metrics.h"
#include "record/nvml.h"
#include "record/recorder.h"
#include "kprof/results.h"
#include "record/wtrace.h"
#include "workloads/shapes.h"
#include "workloads/wl-cudnn.h"
#include "workloads/workloads.h"

static const char *const cdt_names[CDT_N] = { "bf16", "fp16", "fp32", "tf32" };

#define CAPTURE_MAX_M 64 /* values of --m */

/* "a,b,c" -> mask of the names' bits; NULL or a reason */
static const char *parse_list(const char *arg, int *mask, const char *const *names, int n,
			      const char *why)
{
	int m = 0;
	const char *s = arg;
	while (*s) {
		size_t len = strcspn(s, ",");
		int hit = -1;
		for (int i = 0; i < n; i++)
			if (strlen(names[i]) == len && !strncmp(s, names[i], len))
				hit = i;
		if (hit < 0)
			return why;
		m |= 1 << hit;
		s += len;
		if (*s == ',')
			s++;
	}
	if (!m)
		return why;
	*mask |= m;
	return NULL;
}

const char *capture_parse_workloads(const char *arg, void *mask)
{
	static const char *const names[] = { "matmul",  "sdpa",      "conv",         "softmax",
					     "rmsnorm", "layernorm", "cross_entropy" };
	return parse_list(arg, mask, names, 7,
			  "valid: matmul, sdpa, conv, softmax, rmsnorm, layernorm, cross_entropy");
}

const char *capture_parse_backends(const char *arg, void *mask)
{
	static const char *const names[] = { "reference", "cudnn", "cublas", "cublaslt" };
	return parse_list(arg, mask, names, 4, "valid: reference, cudnn, cublas, cublaslt");
}

const char *capture_parse_layouts(const char *arg, void *mask)
{
	static const char *const names[] = { "nchw", "nhwc" };
	return parse_list(arg, mask, names, 2, "valid: nchw, nhwc");
}

const char *capture_parse_mm_ops(const char *arg, void *mask)
{
	static const char *const names[] = { "mm", "addmm", "bmm" };
	return parse_list(arg, mask, names, 3, "valid: mm, addmm, bmm");
}

/* The names of cuBLASLt's CUBLASLT_EPILOGUE_{DEFAULT,BIAS,RELU,RELU_BIAS,GELU,GELU_BIAS}. */
const char *capture_parse_epilogues(const char *arg, void *mask)
{
	static const char *const names[] = { "none",      "bias", "relu",
					     "relu_bias", "gelu", "gelu_bias" };
	static const int bits[] = { MM_MM, MM_ADDMM, MM_RELU, MM_RELU_BIAS, MM_GELU, MM_GELU_BIAS };
	int m = 0;
	const char *why = parse_list(arg, &m, names, 6,
				     "valid: none, bias, relu, relu_bias, gelu, gelu_bias");
	if (why)
		return why;
	for (int i = 0; i < 6; i++)
		if (m & (1 << i))
			*(int *)mask |= bits[i];
	return NULL;
}

const char *capture_parse_dtypes(const char *arg, void *mask)
{
	return parse_list(arg, mask, cdt_names, CDT_N, "valid: bf16, fp16, fp32, tf32");
}

const char *capture_parse_causal(const char *arg, void *causal)
{
	int *c = causal;
	if (!strcmp(arg, "both"))
		*c = CAUSAL_BOTH;
	else if (!strcmp(arg, "yes"))
		*c = CAUSAL_YES;
	else if (!strcmp(arg, "no"))
		*c = CAUSAL_NO;
	else
		return "valid: both, yes, no";
	return NULL;
}

/* "a,b,..." of positive longs into @out; -1 when malformed, -2 when more than @max */
static int parse_longs(const char *s, long *out, size_t max, size_t *n)
{
	*n = 0;
	while (*s) {
		char *e;
		errno = 0;
		long v = strtol(s, &e, 10);
		if (e == s || errno || v <= 0 || (*e && *e != ','))
			return -1;
		if (*n == max)
			return -2;
		out[(*n)++] = v;
		s = *e ? e + 1 : e;
	}
	return *n ? 0 : -1;
}

int capture_split_argv(int argc, char **argv, char ***cmd)
{
	*cmd = NULL;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			*cmd = argv + i + 1;
			argv[i] = NULL;
			return i;
		}
	return argc;
}

/* `capture -- <cmd>`: a command, and the NVML sampling period */
static int finish_cmd(const struct kp_capture_opts *o, char *why, size_t whylen)
{
	if (!o->cmd[0]) {
		snprintf(why, whylen, "missing command after '--'");
		return -1;
	}
	if (o->sample_period_ms < 1 || o->sample_period_ms > 100) {
		snprintf(why, whylen, "--sample-period must be 1..100 ms");
		return -1;
	}
	return 0;
}

/* default workloads, matmul variants and dtype; a matmul backend needs the matmul workload */
static int finish_defaults(struct kp_capture_opts *o, char *why, size_t whylen)
{
	if (!o->workloads)
		o->workloads = WL_MATMUL;
	if (!o->mm_ops && !o->epilogues)
		o->mm_ops = MM_MM | MM_ADDMM | MM_BMM;
	o->mm_ops |= o->epilogues;
	if ((o->backends & BE_MATMUL) && !(o->workloads & WL_MATMUL)) {
		snprintf(why, whylen, "'--backend %s' is a matmul backend: add '-w matmul'",
			 o->backends & BE_CUBLASLT ? "cublaslt" : "cublas");
		return -1;
	}
	if (!o->dtypes)
		o->dtypes = 1 << CDT_BF16;
	return 0;
}

/* --results' suffix, the loop counts, --batch, --kv-heads, --sample-period */
static int check_values(const struct kp_capture_opts *o, char *why, size_t whylen)
{
	if (o->results) {
		size_t rl = strlen(o->results);
		if (!(rl > 5 && !strcmp(o->results + rl - 5, ".json")) &&
		    !(rl > 4 && !strcmp(o->results + rl - 4, ".csv"))) {
			snprintf(why, whylen,
				 "invalid value '%s' for '--results': expected FILE.json or "
				 "FILE.csv",
				 o->results);
			return -1;
		}
	}
	if (o->report && !results_report_suffix(o->report)) {
		snprintf(why, whylen,
			 "invalid value '%s' for '--report': expected FILE.html or FILE.svg",
			 o->report);
		return -1;
	}
	if (o->warmup < 0 || o->iters < 1) {
		snprintf(why, whylen, "--iters must be at least 1 and --warmup at least 0");
		return -1;
	}
	if (o->batch < 0 || o->kv_heads < 0) {
		snprintf(why, whylen, "--batch and --kv-heads must be positive");
		return -1;
	}
	if (o->sample_period_ms < 1 || o->sample_period_ms > 100) {
		snprintf(why, whylen, "--sample-period must be 1..100 ms");
		return -1;
	}
	return 0;
}

/* --m's values into @ms (at most CAPTURE_MAX_M), or 4096 without it */
static int m_values(const struct kp_capture_opts *o, long *ms, size_t *nms, char *why,
		    size_t whylen)
{
	int rc = o->m_list ? parse_longs(o->m_list, ms, CAPTURE_MAX_M, nms) : 0;
	if (rc == -2) {
		snprintf(why, whylen, "invalid value '%s' for '--m': at most %d values", o->m_list,
			 CAPTURE_MAX_M);
		return -1;
	}
	if (rc < 0) {
		snprintf(why, whylen, "invalid value '%s' for '--m': expected M[,M...]", o->m_list);
		return -1;
	}
	if (!o->m_list)
		ms[(*nms)++] = 4096;
	return 0;
}

/* the shape sets of the selected workloads, their defaults where not given */
/*
 * "invalid value 'V' for 'OPT': REASON" with V whole up to 80 bytes, else its first 60 (cut
 * between UTF-8 sequences) and its length: a set of thousands of shapes must not push the
 * reason out of @why (issue 23 item 19).
 */
static void bad_value(char *why, size_t whylen, const char *v, const char *opt, const char *r)
{
	size_t n = strlen(v), k = 60;
	if (n <= 80) {
		snprintf(why, whylen, "invalid value '%s' for '%s': %s", v, opt, r);
		return;
	}
	while (k > 0 && ((unsigned char)v[k] & 0xc0) == 0x80)
		k--;
	snprintf(why, whylen, "invalid value '%.*s...' (%zu bytes) for '%s': %s", (int)k, v, n,
		 opt, r);
}

static int expand_shapes(struct kp_capture_opts *o, const long *ms, size_t nms, char *why,
			 size_t whylen)
{
	char r[200];
	const char *mm = o->shapes ? o->shapes : "custom:4096x4096x4096";
	if ((o->workloads & WL_MATMUL) &&
	    shapes_matmul(mm, ms, nms, &o->mm, &o->nmm, r, sizeof(r)) < 0) {
		bad_value(why, whylen, mm, "--shapes", r);
		return -1;
	}
	const char *sd = o->sdpa_shapes ? o->sdpa_shapes : "default";
	if ((o->workloads & WL_SDPA) &&
	    shapes_sdpa(sd, o->causal, o->kv_heads, &o->sdpa, &o->nsdpa, r, sizeof(r)) < 0) {
		bad_value(why, whylen, sd, "--sdpa-shapes", r);
		return -1;
	}
	const char *cv = o->conv_shapes ? o->conv_shapes : "resnet50";
	if ((o->workloads & WL_CONV) &&
	    shapes_conv(cv, o->batch ? o->batch : 32, &o->conv, &o->nconv, r, sizeof(r)) < 0) {
		bad_value(why, whylen, cv, "--conv-shapes", r);
		return -1;
	}
	const char *ns = o->norm_shapes ? o->norm_shapes : "default";
	if ((o->workloads & (WL_SOFTMAX | WL_RMSNORM | WL_LAYERNORM)) &&
	    shapes_norm(ns, &o->norm, &o->nnorm, r, sizeof(r)) < 0) {
		bad_value(why, whylen, ns, "--norm-shapes", r);
		return -1;
	}
	if ((o->workloads & WL_XENT) && shapes_vocab(ns, &o->xent, &o->nxent, r, sizeof(r)) < 0) {
		bad_value(why, whylen, ns, "--norm-shapes", r);
		return -1;
	}
	return 0;
}

int capture_opts_finish(struct kp_capture_opts *o, char *why, size_t whylen)
{
	long ms[CAPTURE_MAX_M];
	size_t nms = 0;
	if (!o->output) {
		snprintf(why, whylen, "missing output file (-o FILE)");
		return -1;
	}
	if (o->cmd)
		return finish_cmd(o, why, whylen);
	if (finish_defaults(o, why, whylen) < 0 || check_values(o, why, whylen) < 0 ||
	    m_values(o, ms, &nms, why, whylen) < 0)
		return -1;
	return expand_shapes(o, ms, nms, why, whylen);
}

void capture_opts_free(struct kp_capture_opts *o)
{
	free(o->mm);
	free(o->sdpa);
	free(o->conv);
	free(o->norm);
	free(o->xent);
	o->mm = NULL, o->sdpa = NULL, o->conv = NULL, o->norm = NULL, o->xent = NULL;
	o->nmm = o->nsdpa = o->nconv = o->nnorm = o->nxent = 0;
}

#ifdef KPROF_HAVE_CUPTI

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

static void warn_unjoined(void *arg, const struct kp_mwin *w, size_t nkern)
{
	cmsg_warn(arg, "--metrics: '%s': %zu ranges for %zu timed kernels: not joined", w->label,
		  w->n, nkern);
}

/*
 * NVML for device 0: its max clocks into @t (and the device properties CUDA left at 0) and
 * the clock sampler thread; without NVML a warning, and the SM clock stays unknown.
 */
static void open_nvml(const struct kp_capture_opts *o, struct kp_nvml *nv, struct kp_ctrace *t,
		      unsigned *sm_max, unsigned *mem_max)
{
	char bus[32] = "", why[512];
	cudaDeviceGetPCIBusId(bus, sizeof(bus), 0);
	if (nvml_open(nv, "libnvidia-ml.so.1", bus[0] ? bus : NULL, why, sizeof(why)) < 0) {
		cmsg_warn(o, "%s; the SM clock is unknown", why);
		return;
	}
	nvml_max_clocks(nv, sm_max, mem_max);
	t->sm_clock_max_mhz = *sm_max, t->mem_clock_max_mhz = *mem_max;
	if (!t->dev[0].clock_rate_khz)
		t->dev[0].clock_rate_khz = (int)*sm_max * 1000;
	if (!t->dev[0].mem_clock_rate_khz)
		t->dev[0].mem_clock_rate_khz = (int)*mem_max * 1000;
	if (nvml_sampler_start(nv, t, o->sample_period_ms) < 0)
		cmsg_warn(o, "cannot start the clock sampler thread");
}

/*
 * The built-in workloads on a cuBLAS handle into @res, and their results table;
 * 0 or the status of the error in w->d.
 */
static int run_workloads(struct kp_wl *w, unsigned sm_max, unsigned mem_max,
			 struct kp_results *res)
{
	const struct kp_capture_opts *o = w->o;
	const struct kp_cdevprops *dev = &w->t->dev[0];
	int status = 0;
	cublasHandle_t h = NULL;
	cublasStatus_t st = cublasCreate(&h);
	if (st != CUBLAS_STATUS_SUCCESS) {
		cmsg_error(o, w->d, KP_ENV, "cublasCreate: %s", cublasGetStatusString(st));
		return KP_ENV;
	}
	w->cublas = h;
	cmsg_out(o, "# device  %s (cc %d.%d, %d SMs), SM clock max %u MHz, memory clock max %u MHz\n",
		 dev->name, dev->compute_major, dev->compute_minor, dev->num_sms, sm_max, mem_max);
	w->results = res;
	if (workloads_run(w) < 0)
		status = w->d->status ? w->d->status : KP_ENV;
	if (res->n && o->out) {
		struct kp_doc doc;
		doc_init(&doc, "capture", 8);
		results_report(res, &doc);
		cmsg_out(o, "\n");
		table_render(&doc, FMT_TABLE, 0, o->out);
		doc_free(&doc);
	}
	w->results = NULL;
	cudaDeviceSynchronize();
	cudnn_close(w->cudnn);
	workloads_close(w);
	cublasDestroy(h);
	return status;
}

/*
 * The run's device and the clocks it measured into @res: the time-weighted mean of the NVML
 * SM clock samples over the run (ctrace_clock_at()), else the max clock; the max memory clock.
 */
static void results_clocks(struct kp_results *res, const struct kp_ctrace *t, unsigned sm_max,
			   unsigned mem_max)
{
	double mhz = 0;
	snprintf(res->device, sizeof(res->device), "%.63s", t->dev[0].name);
	res->sm_clock_mhz = (int)sm_max, res->mem_clock_mhz = (int)mem_max;
	if (t->nsamples &&
	    ctrace_clock_at(t->samples, t->nsamples, (uint64_t)t->sample_period_ms * 1000000,
			    t->samples[0].t_ns, t->samples[t->nsamples - 1].t_ns + 1, &mhz) == 0 &&
	    mhz > 0)
		res->sm_clock_mhz = (int)lround(mhz);
}

/* --results FILE and --report FILE.html|.svg (the results' charts); 0 or KP_ENV in w->d */
static int write_results(struct kp_wl *w, const struct kp_results *res)
{
	const struct kp_capture_opts *o = w->o;
	char why[512];
	int status = 0;
	if (o->results && results_write(res, o->results, why, sizeof(why)) < 0) {
		cmsg_error(o, w->d, KP_ENV, "%s", why);
		status = KP_ENV;
	} else if (o->results) {
		cmsg_out(o, "# results %s: %zu cases\n", o->results, res->n);
	}
	if (o->report && results_report_file(res, o->report, why, sizeof(why)) < 0) {
		cmsg_error(o, w->d, KP_ENV, "%s", why);
		status = KP_ENV;
	} else if (o->report) {
		cmsg_out(o, "# report  %s\n", o->report);
	}
	return status;
}

/*
 * The run's metadata into the trace, the trace written to @out (closed, capture/record/wtrace.c)
 * and its summary lines; -1 with the error in w->d when it cannot be written.
 */
static int write_trace(const struct kp_wl *w, const struct kp_results *res, FILE *out)
{
	const struct kp_capture_opts *o = w->o;
	struct kp_ctrace *t = w->t;
	char *meta = NULL;
	size_t mlen = 0;
	FILE *mf = open_memstream(&meta, &mlen);
	if (mf) {
		fprintf(mf, "\"warmup\":%ld,\"iters\":%ld,\"accuracy_failures\":%d", o->warmup,
			o->iters, w->failures);
		if (o->overhead && w->untraced_s > 0)
			fprintf(mf, ",\"overhead_ratio\":%.4f", w->traced_s / w->untraced_s);
		/* the results as --results' JSON records, so analyze draws them from the trace */
		if (res->n) {
			fputs(",\"results\":", mf);
			results_write_json(res, mf);
		}
		fclose(mf);
		t->meta = meta;
	}
	struct kp_trace_sum sum;
	struct kp_diag wd;
	if (wtrace_write(t, out, o->output, &sum, &wd) < 0)
		return cmsg_pass(o, w->d, &wd);
	if (o->overhead && w->untraced_s > 0)
		cmsg_out(o, "# overhead  untraced %.3f s  traced %.3f s  ratio %.3fx\n", w->untraced_s,
			 w->traced_s, w->traced_s / w->untraced_s);
	cmsg_out(o, "# trace   %s: %zu kernel records, %llu dropped records, %zu clock samples%s\n",
		 o->output, sum.nkern, (unsigned long long)t->dropped_records, t->nsamples,
		 sum.sm_range);
	return 0;
}

/* 0, or -1 with the error in @d when there is no CUDA device (or no driver at all) */
static int check_device(const struct kp_capture_opts *o, struct kp_diag *d)
{
	int ndev = 0;
	cudaError_t e = cudaGetDeviceCount(&ndev);
	if (e != cudaSuccess || ndev == 0) {
		/* cudart loads the driver at run time; say so when there is none at all */
		void *drv = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
		return cmsg_error(o, d, KP_ENV, "no CUDA device: %s",
				  !drv               ? "no CUDA driver (libcuda.so.1 not found)"
				  : e != cudaSuccess ? cudaGetErrorString(e)
						     : "none found");
	}
	return 0;
}

/*
 * CUPTI recording into @t, a CUDA context and --metrics' counters; -1 with the error in @d,
 * what was started stopped again.
 */
static int start_recording(struct kp_ctrace *t, const struct kp_capture_opts *o,
			   struct kp_diag *d)
{
	char why[512];
	cudaError_t e;
	recorder_set_api(o->trace_api);
	recorder_set_memory(o->memory);
	t->memory = o->memory;
	if (recorder_start(t, why, sizeof(why)) < 0)
		return cmsg_error(o, d, KP_ENV, "%s", why);
	if ((e = cudaSetDevice(0)) != cudaSuccess || (e = cudaFree(NULL)) != cudaSuccess) {
		recorder_stop();
		return cmsg_error(o, d, KP_ENV, "cannot create a CUDA context: %s",
				  cudaGetErrorString(e));
	}
	if (o->metrics) {
		if (metrics_open(why, sizeof(why)) < 0) {
			metrics_close();
			recorder_stop();
			return cmsg_error(o, d, KP_ENV, "--metrics: %s", why);
		}
		cmsg_out(o, "# metrics %d counters, %d replay passes per kernel\n", metrics_count(),
			 metrics_passes());
	}
	return 0;
}

/* Device 0's properties and the CUPTI, runtime and driver versions into the trace */
static void read_versions(struct kp_ctrace *t)
{
	devprops_read(&t->dev[0], 0);
	t->ndev = 1;
	t->cupti_version = recorder_cupti_version();
	cudaRuntimeGetVersion(&t->cuda_runtime_version);
	cudaDriverGetVersion(&t->cuda_driver_version);
}

/* The clock sampler and CUPTI off; --metrics' counters closed and joined to the loops */
static void stop_recording(struct kp_ctrace *t, struct kp_nvml *nv, const struct kp_capture_opts *o)
{
	nvml_sampler_stop(nv);
	recorder_stop();
	t->clock_known = t->nsamples > 0;
	if (o->metrics) {
		metrics_close();
		if (kmetrics_join(t, warn_unjoined, (void *)o))
			cmsg_warn(o, "--metrics: some loops' counters are not in the trace");
	}
}

/*
 * The trace written to @out and freed with NVML; the run's status: @status, KP_ENV when the
 * trace cannot be written, KP_REGRESSION after a clean run with failed accuracy checks (the
 * error in w->d).
 */
static int finish_run(struct kp_wl *w, struct kp_nvml *nv, struct kp_results *res, FILE *out,
		      int status)
{
	struct kp_ctrace *t = w->t;
	if (write_trace(w, res, out) < 0)
		status = KP_ENV;
	results_free(res);
	if (t->dropped_records)
		cmsg_warn(w->o, "CUPTI dropped %llu records", (unsigned long long)t->dropped_records);
	nvml_close(nv);
	ctrace_free(t);
	if (status == 0 && w->failures) {
		cmsg_error(w->o, w->d, KP_REGRESSION, "%d accuracy check%s failed", w->failures,
			   w->failures > 1 ? "s" : "");
		status = KP_REGRESSION;
	}
	return status;
}

int capture_run(const struct kp_capture_opts *o, struct kp_diag *d)
{
	if (o->cmd)
		return capture_run_cmd(o, d);
	d->msg[0] = '\0', d->status = KP_OK;
	if (check_device(o, d) < 0)
		return KP_ENV;
	FILE *out = fopen(o->output, "w");
	if (!out) {
		cmsg_error(o, d, KP_ENV, "cannot open '%s': %s", o->output, strerror(errno));
		return KP_ENV;
	}
	struct kp_ctrace t;
	ctrace_init(&t);
	t.sample_period_ms = o->sample_period_ms;
	if (start_recording(&t, o, d) < 0) {
		fclose(out);
		ctrace_free(&t);
		return KP_ENV;
	}
	read_versions(&t);

	struct kp_nvml nv;
	unsigned sm_max = 0, mem_max = 0;
	open_nvml(o, &nv, &t, &sm_max, &mem_max);

	struct kp_wl w = {
		.t = &t, .o = o, .d = d, .pid = (uint32_t)getpid(), .tid = (uint32_t)gettid()
	};
	struct kp_results res = { 0 };
	int status = run_workloads(&w, sm_max, mem_max, &res);
	stop_recording(&t, &nv, o);
	results_clocks(&res, &t, sm_max, mem_max);
	int ws = write_results(&w, &res);
	return finish_run(&w, &nv, &res, out, status ? status : ws);
}

#else /* !KPROF_HAVE_CUPTI */

int capture_run(const struct kp_capture_opts *o, struct kp_diag *d)
{
	d->msg[0] = '\0', d->status = KP_OK;
	return cmsg_error(o, d, KP_ENV, "built without CUPTI support"), KP_ENV;
}

#endif
