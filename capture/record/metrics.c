/*
 * metrics.c — the CUPTI 13 range profiler for `kprof capture --metrics` (doc/cupti-capture.md §6):
 * auto range + kernel replay, so every kernel launched between metrics_begin() and
 * metrics_end() is one range, replayed once per pass with device memory saved and restored.
 */
#include "record/metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/ctrace.h"
#include "record/kmetrics.h"

int metrics_drop_sass(const char **names, int *idx, int n)
{
	int kept = 0;
	for (int j = 0; j < n; j++)
		if (!kmetrics_sass(idx[j]))
			names[kept] = names[j], idx[kept++] = idx[j];
	return kept;
}

void metrics_store(struct kp_kmet *m, const double *vals, const int *idx, int n)
{
	for (int k = 0; k < KM_N; k++)
		m->v[k] = NAN;
	for (int j = 0; j < n; j++)
		m->v[idx[j]] = vals[j];
}

#ifdef KPROF_HAVE_CUPTI

#include <cuda.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <dlfcn.h>

#define MAX_RANGES 4096

static struct {
	CUpti_Profiler_Host_Object *host;
	CUpti_RangeProfiler_Object *rp;
	const char *names[KM_N]; /* accepted metrics */
	int idx[KM_N];           /* their kp_kmetric */
	int n;
	size_t passes;
	uint8_t *config, *data;
	size_t config_size, data_size;
	int inited;
} M;

static int fail(char *why, size_t whylen, const char *call, CUptiResult rc)
{
	const char *s = NULL;
	cuptiGetResultString(rc, &s);
	if (rc == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
		snprintf(why, whylen,
			 "%s: %s: reading GPU performance counters needs privileges this user lacks "
			 "(run as root or set NVreg_RestrictProfilingToAdminUsers=0)",
			 call, s ? s : "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
	else
		snprintf(why, whylen, "%s: %s", call, s ? s : "CUPTI error");
	return -1;
}

#define CK(call, p)                                                                                \
	do {                                                                                       \
		CUptiResult rc_ = call(p);                                                         \
		if (rc_ != CUPTI_SUCCESS)                                                          \
			return fail(why, whylen, #call, rc_);                                      \
	} while (0)

static CUcontext current_ctx(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		h = dlopen("libcuda.so.1", RTLD_LAZY);
	CUresult (*get)(CUcontext *) = h ? (CUresult(*)(CUcontext *))dlsym(h, "cuCtxGetCurrent")
					 : NULL;
	CUcontext c = NULL;
	if (get)
		get(&c);
	return c;
}

int metrics_open(char *why, size_t whylen)
{
	return metrics_open_ctx(current_ctx(), why, whylen);
}

/* the metrics of kmetrics_names the chip accepts into M.names/M.idx; -1 when none */
static int accepted_metrics(const char *chip, char *why, size_t whylen)
{
	/*
	 * Which metrics the chip accepts: one at a time on a scratch host object, so that a metric
	 * it lacks is skipped, not fatal.
	 */
	CUpti_Profiler_Host_Initialize_Params hi = {
		.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE
	};
	hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	hi.pChipName = chip;
	CK(cuptiProfilerHostInitialize, &hi);
	for (int k = 0; k < KM_N; k++) {
		CUpti_Profiler_Host_ConfigAddMetrics_Params am = {
			.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE
		};
		am.pHostObject = hi.pHostObject;
		const char *nm = kmetrics_names[k];
		am.ppMetricNames = &nm;
		am.numMetrics = 1;
		if (cuptiProfilerHostConfigAddMetrics(&am) == CUPTI_SUCCESS) {
			M.names[M.n] = kmetrics_names[k];
			M.idx[M.n++] = k;
		} else {
			fprintf(stderr, "kprof: warning: --metrics: %s: not available on %s\n",
				kmetrics_names[k], chip);
		}
	}
	CUpti_Profiler_Host_Deinitialize_Params hd = {
		.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE
	};
	hd.pHostObject = hi.pHostObject;
	cuptiProfilerHostDeinitialize(&hd);
	if (!M.n) {
		snprintf(why, whylen, "--metrics: no metric is available on %s", chip);
		return -1;
	}
	return 0;
}

/* M.host: a host object configured with every accepted metric */
static int host_config(const char *chip, char *why, size_t whylen)
{
	/*
	 * The config: every accepted metric in ONE ConfigAddMetrics call.  Added one call each,
	 * CUPTI 13 schedules one pass per SASS-instrumented metric (smsp__sass_*) and every such
	 * pass reads the first one's count (H200: FADD, FMUL, DFMA ... all equal to FFMA, so a
	 * kernel without the first one's instruction reads 0 in all); added together they share
	 * one instrumented pass and each reads its own count (equal to ncu's).  Should the
	 * combined call fail, the SASS metrics are dropped with a warning and the rest kept.
	 */
	CUpti_Profiler_Host_Initialize_Params hi = {
		.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE
	};
	hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	hi.pChipName = chip;
	CUpti_Profiler_Host_Deinitialize_Params hd = {
		.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE
	};
	CK(cuptiProfilerHostInitialize, &hi);
	M.host = hi.pHostObject;
	CUpti_Profiler_Host_ConfigAddMetrics_Params am = {
		.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE
	};
	am.pHostObject = M.host;
	am.ppMetricNames = M.names;
	am.numMetrics = (size_t)M.n;
	CUptiResult rc = cuptiProfilerHostConfigAddMetrics(&am);
	if (rc != CUPTI_SUCCESS) {
		int n = metrics_drop_sass(M.names, M.idx, M.n);
		const char *s = NULL;
		cuptiGetResultString(rc, &s);
		fprintf(stderr,
			"kprof: warning: --metrics: %d metrics together: %s; the %d SASS "
			"FP counters are left out (no measured fp64/fp32/fp16 FLOPs)\n",
			M.n, s ? s : "CUPTI error", M.n - n);
		M.n = n;
		hd.pHostObject = M.host;
		cuptiProfilerHostDeinitialize(&hd);
		hi.pHostObject = NULL;
		CK(cuptiProfilerHostInitialize, &hi);
		M.host = hi.pHostObject;
		am.pHostObject = M.host;
		am.numMetrics = (size_t)M.n;
		if (!M.n) {
			snprintf(why, whylen, "--metrics: no metric is available on %s", chip);
			return -1;
		}
		CK(cuptiProfilerHostConfigAddMetrics, &am);
	}
	return 0;
}

/* M.config (the config image) and M.passes from M.host */
static int config_image(char *why, size_t whylen)
{
	CUpti_Profiler_Host_GetConfigImageSize_Params cs = {
		.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE
	};
	cs.pHostObject = M.host;
	CK(cuptiProfilerHostGetConfigImageSize, &cs);
	M.config_size = cs.configImageSize;
	M.config = malloc(M.config_size);
	if (!M.config) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	CUpti_Profiler_Host_GetConfigImage_Params ci = {
		.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE
	};
	ci.pHostObject = M.host;
	ci.configImageSize = M.config_size;
	ci.pConfigImage = M.config;
	CK(cuptiProfilerHostGetConfigImage, &ci);
	CUpti_Profiler_Host_GetNumOfPasses_Params np = {
		.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE
	};
	np.configImageSize = M.config_size;
	np.pConfigImage = M.config;
	if (cuptiProfilerHostGetNumOfPasses(&np) == CUPTI_SUCCESS)
		M.passes = np.numOfPasses;
	return 0;
}

/* the range profiler on @ctx (M.rp) and its counter-data buffer (M.data) */
static int enable_profiler(void *ctx, char *why, size_t whylen)
{
	CUpti_RangeProfiler_Enable_Params en = {
		.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE
	};
	en.ctx = ctx;
	if (!en.ctx) {
		snprintf(why, whylen, "--metrics: no current CUDA context (cuCtxGetCurrent)");
		return -1;
	}
	CK(cuptiRangeProfilerEnable, &en);
	M.rp = en.pRangeProfilerObject;
	CUpti_RangeProfiler_GetCounterDataSize_Params ds = {
		.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE
	};
	ds.pRangeProfilerObject = M.rp;
	ds.pMetricNames = M.names;
	ds.numMetrics = (size_t)M.n;
	ds.maxNumOfRanges = MAX_RANGES;
	ds.maxNumRangeTreeNodes = MAX_RANGES;
	CK(cuptiRangeProfilerGetCounterDataSize, &ds);
	M.data_size = ds.counterDataSize;
	M.data = malloc(M.data_size);
	if (!M.data) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	return 0;
}

int metrics_open_ctx(void *ctx, char *why, size_t whylen)
{
	CUpti_Profiler_Initialize_Params pi = {
		.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE
	};
	CK(cuptiProfilerInitialize, &pi);
	M.inited = 1;
	CUpti_Device_GetChipName_Params cn = {
		.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE
	};
	cn.deviceIndex = 0;
	CK(cuptiDeviceGetChipName, &cn);
	if (accepted_metrics(cn.pChipName, why, whylen) < 0 ||
	    host_config(cn.pChipName, why, whylen) < 0 || config_image(why, whylen) < 0)
		return -1;
	return enable_profiler(ctx, why, whylen);
}

int metrics_count(void)
{
	return M.n;
}

int metrics_passes(void)
{
	return (int)M.passes;
}

int metrics_begin(char *why, size_t whylen)
{
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params di = {
		.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE
	};
	di.pRangeProfilerObject = M.rp;
	di.counterDataSize = M.data_size;
	di.pCounterData = M.data;
	CK(cuptiRangeProfilerCounterDataImageInitialize, &di);
	CUpti_RangeProfiler_SetConfig_Params sc = {
		.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE
	};
	sc.pRangeProfilerObject = M.rp;
	sc.configSize = M.config_size;
	sc.pConfig = M.config;
	sc.counterDataImageSize = M.data_size;
	sc.pCounterDataImage = M.data;
	sc.range = CUPTI_AutoRange;
	sc.replayMode = CUPTI_KernelReplay;
	sc.maxRangesPerPass = MAX_RANGES;
	sc.numNestingLevels = 1;
	sc.minNestingLevel = 1;
	CK(cuptiRangeProfilerSetConfig, &sc);
	CUpti_RangeProfiler_Start_Params st = {
		.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE
	};
	st.pRangeProfilerObject = M.rp;
	CK(cuptiRangeProfilerStart, &st);
	return 0;
}

int metrics_end(struct kp_ctrace *t, uint64_t t0_ns, uint64_t t1_ns, const char *label, char *why,
		size_t whylen)
{
	CUpti_RangeProfiler_Stop_Params sp = {
		.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE
	};
	sp.pRangeProfilerObject = M.rp;
	CK(cuptiRangeProfilerStop, &sp);

	CUpti_RangeProfiler_DecodeData_Params dd = {
		.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE
	};
	dd.pRangeProfilerObject = M.rp;
	CK(cuptiRangeProfilerDecodeData, &dd);

	if (dd.numOfRangeDropped)
		fprintf(stderr, "kprof: warning: --metrics: %zu ranges dropped in '%s'\n",
			dd.numOfRangeDropped, label);
	CUpti_RangeProfiler_GetCounterDataInfo_Params gi = {
		.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE
	};
	gi.pCounterDataImage = M.data;
	gi.counterDataImageSize = M.data_size;
	CK(cuptiRangeProfilerGetCounterDataInfo, &gi);
	size_t n = gi.numTotalRanges;
	struct kp_kmet *km = realloc(t->kmet, (t->nkmet + n + 1) * sizeof(*km));
	struct kp_mwin *mw = km ? realloc(t->mwin, (t->nmwin + 1) * sizeof(*mw)) : NULL;
	if (km)
		t->kmet = km;
	if (!mw) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	t->mwin = mw;
	double vals[KM_N];
	for (size_t i = 0; i < n; i++) {
		CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
			.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE
		};
		ev.pHostObject = M.host;
		ev.pCounterDataImage = M.data;
		ev.counterDataImageSize = M.data_size;
		ev.rangeIndex = i;
		ev.ppMetricNames = M.names;
		ev.numMetrics = (size_t)M.n;
		ev.pMetricValues = vals;
		CK(cuptiProfilerHostEvaluateToGpuValues, &ev);
		metrics_store(&t->kmet[t->nkmet + i], vals, M.idx, M.n);
	}
	struct kp_mwin *w = &t->mwin[t->nmwin++];
	memset(w, 0, sizeof(*w));
	w->t0_ns = t0_ns, w->t1_ns = t1_ns, w->first = t->nkmet, w->n = n;
	snprintf(w->label, sizeof(w->label), "%s", label);
	t->nkmet += n;
	return 0;
}

void metrics_close(void)
{
	if (M.rp) {
		CUpti_RangeProfiler_Disable_Params di = {
			.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE
		};
		di.pRangeProfilerObject = M.rp;
		cuptiRangeProfilerDisable(&di);
	}
	if (M.host) {
		CUpti_Profiler_Host_Deinitialize_Params hd = {
			.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE
		};
		hd.pHostObject = M.host;
		cuptiProfilerHostDeinitialize(&hd);
	}
	if (M.inited) {
		CUpti_Profiler_DeInitialize_Params pd = {
			.structSize = CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE
		};
		cuptiProfilerDeInitialize(&pd);
	}
	free(M.config);
	free(M.data);
	memset(&M, 0, sizeof(M));
}

#else /* !KPROF_HAVE_CUPTI */

int metrics_open(char *why, size_t whylen)
{
	snprintf(why, whylen, "built without CUPTI support");
	return -1;
}
int metrics_open_ctx(void *ctx, char *why, size_t whylen)
{
	(void)ctx;
	snprintf(why, whylen, "built without CUPTI support");
	return -1;
}
int metrics_count(void)
{
	return 0;
}
int metrics_passes(void)
{
	return 0;
}
int metrics_begin(char *why, size_t whylen)
{
	snprintf(why, whylen, "built without CUPTI support");
	return -1;
}
int metrics_end(struct kp_ctrace *t, uint64_t t0_ns, uint64_t t1_ns, const char *label, char *why,
		size_t whylen)
{
	(void)t, (void)t0_ns, (void)t1_ns, (void)label;
	snprintf(why, whylen, "built without CUPTI support");
	return -1;
}
void metrics_close(void)
{
}

#endif
