/*
 * wl-cudnn.c — cuDNN 9 for the conv workload, loaded with dlopen (workloads.md §a.1-a.2): the
 * declarations below are the few kprof needs from cudnn.h / cudnn_cnn.h (cuDNN 9: handles are
 * opaque pointers, enums are ints, the *AlgoPerf_t structs share one layout).
 */
#include "wl-cudnn.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels.h"

/* cudnn_graph.h / cudnn_cnn.h (cuDNN 9) */
enum { CUDNN_DATA_FLOAT = 0, CUDNN_DATA_HALF = 2, CUDNN_DATA_BFLOAT16 = 9 };
enum { CUDNN_TENSOR_NCHW = 0, CUDNN_TENSOR_NHWC = 1 };
enum { CUDNN_CROSS_CORRELATION = 1 };
enum { CUDNN_DEFAULT_MATH = 0, CUDNN_TENSOR_OP_MATH = 1, CUDNN_FMA_MATH = 3 };
struct perf {
	int algo, status;
	float time;
	size_t memory;
	int determinism, math, reserved[3];
};
typedef void *hnd;

struct kp_cudnn {
	void *lib;
	hnd h;
	long version;
	char path[512];
	size_t (*GetVersion)(void);
	const char *(*GetErrorString)(int);
	int (*Create)(hnd *);
	int (*Destroy)(hnd);
	int (*CreateTensorDescriptor)(hnd *);
	int (*SetTensor4dDescriptor)(hnd, int, int, int, int, int, int);
	int (*DestroyTensorDescriptor)(hnd);
	int (*CreateFilterDescriptor)(hnd *);
	int (*SetFilter4dDescriptor)(hnd, int, int, int, int, int, int);
	int (*DestroyFilterDescriptor)(hnd);
	int (*CreateConvolutionDescriptor)(hnd *);
	int (*SetConvolution2dDescriptor)(hnd, int, int, int, int, int, int, int, int);
	int (*SetConvolutionGroupCount)(hnd, int);
	int (*SetConvolutionMathType)(hnd, int);
	int (*DestroyConvolutionDescriptor)(hnd);
	int (*FindFwd)(hnd, hnd, hnd, hnd, hnd, int, int *, struct perf *);
	int (*FindBwdData)(hnd, hnd, hnd, hnd, hnd, int, int *, struct perf *);
	int (*FindBwdFilter)(hnd, hnd, hnd, hnd, hnd, int, int *, struct perf *);
	int (*Fwd)(hnd, const void *, hnd, const void *, hnd, const void *, hnd, int, void *, size_t,
		   const void *, hnd, void *);
	int (*BwdData)(hnd, const void *, hnd, const void *, hnd, const void *, hnd, int, void *,
		       size_t, const void *, hnd, void *);
	int (*BwdFilter)(hnd, const void *, hnd, const void *, hnd, const void *, hnd, int, void *,
			 size_t, const void *, hnd, void *);
};

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void add(char out[][512], int *n, int max, const char *a, const char *b)
{
	if (*n < max)
		snprintf(out[(*n)++], 512, "%s%s", a, b);
}

int cudnn_candidates(const char *env, const char *pydirs, char out[][512], int max)
{
	int n = 0;
	if (env && *env)
		add(out, &n, max, env, is_dir(env) ? "/libcudnn.so.9" : "");
	for (const char *s = pydirs; s && *s;) {
		const char *e = strchr(s, '\n');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		if (len > 0 && len < 400) {
			char dir[512];
			snprintf(dir, sizeof(dir), "%.*s/nvidia/cudnn/lib", (int)len, s);
			int dup = 0;
			for (int i = 0; i < n; i++)
				dup |= !strncmp(out[i], dir, strlen(dir));
			if (!dup && is_dir(dir))
				add(out, &n, max, dir, "/libcudnn.so.9");
		}
		s = e ? e + 1 : s + len;
	}
	add(out, &n, max, "libcudnn.so.9", "");
	return n;
}

/* The sub-libraries beside the shim, loaded first so that its soname loads resolve to them. */
static void preload_siblings(const char *shim)
{
	static const char *const subs[] = { "graph", "ops", "cnn", "engines_precompiled",
					    "engines_runtime_compiled", "heuristic" };
	const char *slash = strrchr(shim, '/');
	if (!slash)
		return;
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
		char p[640];
		snprintf(p, sizeof(p), "%.*s/libcudnn_%s.so.9", (int)(slash - shim), shim, subs[i]);
		dlopen(p, RTLD_NOW | RTLD_GLOBAL);
	}
}

#define SYM(field, name)                                                                       \
	do {                                                                                   \
		*(void **)&c->field = dlsym(c->lib, name);                                     \
		if (!c->field) {                                                               \
			missing = name;                                                        \
			goto bad;                                                              \
		}                                                                              \
	} while (0)

struct kp_cudnn *cudnn_open_paths(char paths[][512], int n, char *why, size_t whylen)
{
	char tried[2048] = "";
	struct kp_cudnn *c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		const char *missing = NULL;
		size_t tl = strlen(tried);
		if (strchr(paths[i], '/') && access(paths[i], R_OK) != 0) {
			snprintf(tried + tl, sizeof(tried) - tl, "%s%s (absent)", tl ? ", " : "", paths[i]);
			continue;
		}
		preload_siblings(paths[i]);
		c->lib = dlopen(paths[i], RTLD_NOW | RTLD_GLOBAL);
		if (!c->lib) {
			snprintf(tried + tl, sizeof(tried) - tl, "%s%s (cannot load)", tl ? ", " : "",
				 paths[i]);
			continue;
		}
		SYM(GetVersion, "cudnnGetVersion");
		SYM(GetErrorString, "cudnnGetErrorString");
		SYM(Create, "cudnnCreate");
		SYM(Destroy, "cudnnDestroy");
		SYM(CreateTensorDescriptor, "cudnnCreateTensorDescriptor");
		SYM(SetTensor4dDescriptor, "cudnnSetTensor4dDescriptor");
		SYM(DestroyTensorDescriptor, "cudnnDestroyTensorDescriptor");
		SYM(CreateFilterDescriptor, "cudnnCreateFilterDescriptor");
		SYM(SetFilter4dDescriptor, "cudnnSetFilter4dDescriptor");
		SYM(DestroyFilterDescriptor, "cudnnDestroyFilterDescriptor");
		SYM(CreateConvolutionDescriptor, "cudnnCreateConvolutionDescriptor");
		SYM(SetConvolution2dDescriptor, "cudnnSetConvolution2dDescriptor");
		SYM(SetConvolutionGroupCount, "cudnnSetConvolutionGroupCount");
		SYM(SetConvolutionMathType, "cudnnSetConvolutionMathType");
		SYM(DestroyConvolutionDescriptor, "cudnnDestroyConvolutionDescriptor");
		SYM(FindFwd, "cudnnFindConvolutionForwardAlgorithm");
		SYM(FindBwdData, "cudnnFindConvolutionBackwardDataAlgorithm");
		SYM(FindBwdFilter, "cudnnFindConvolutionBackwardFilterAlgorithm");
		SYM(Fwd, "cudnnConvolutionForward");
		SYM(BwdData, "cudnnConvolutionBackwardData");
		SYM(BwdFilter, "cudnnConvolutionBackwardFilter");
		c->version = (long)c->GetVersion();
		if (c->version < 90000 || c->version >= 100000) {
			snprintf(tried + tl, sizeof(tried) - tl, "%s%s (version %ld, not 9.x)",
				 tl ? ", " : "", paths[i], c->version);
			dlclose(c->lib);
			continue;
		}
		int st = c->Create(&c->h);
		if (st != 0) {
			snprintf(tried + tl, sizeof(tried) - tl, "%s%s (cudnnCreate: %s)", tl ? ", " : "",
				 paths[i], c->GetErrorString(st));
			dlclose(c->lib);
			continue;
		}
		snprintf(c->path, sizeof(c->path), "%s", paths[i]);
		return c;
	bad:
		snprintf(tried + tl, sizeof(tried) - tl, "%s%s (no %s)", tl ? ", " : "", paths[i],
			 missing);
		dlclose(c->lib);
	}
	free(c);
	snprintf(why, whylen, "cuDNN 9 not found (tried %s; set KPROF_CUDNN to libcudnn.so.9 or its "
			      "directory)", tried);
	return NULL;
}

struct kp_cudnn *cudnn_open(char *why, size_t whylen)
{
	char paths[CUDNN_MAX_CANDIDATES][512], py[8192] = "";
	/* Python environments with PyTorch carry cuDNN in site-packages/nvidia/cudnn/lib */
	FILE *p = popen("python3 -c 'import sys, sysconfig; print(sysconfig.get_path(\"purelib\")); "
			"print(\"\\n\".join(sys.path))' 2>/dev/null", "r");
	if (p) {
		size_t got = fread(py, 1, sizeof(py) - 1, p);
		py[got] = '\0';
		pclose(p);
	}
	int n = cudnn_candidates(getenv("KPROF_CUDNN"), py, paths, CUDNN_MAX_CANDIDATES);
	return cudnn_open_paths(paths, n, why, whylen);
}

long cudnn_version(const struct kp_cudnn *c)
{
	return c->version;
}

const char *cudnn_path(const struct kp_cudnn *c)
{
	return c->path;
}

void cudnn_close(struct kp_cudnn *c)
{
	if (!c)
		return;
	c->Destroy(c->h);
	free(c);
}

#ifdef KPROF_HAVE_CUPTI
#include <cuda_runtime.h>

struct kp_cudnn_conv {
	struct kp_cudnn *c;
	hnd x, w, y, conv;
	int afwd, adata, afilt;
	void *ws;
	size_t wsz;
};

static const char *const fwd_names[] = { "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM",
					 "DIRECT", "FFT", "FFT_TILING", "WINOGRAD",
					 "WINOGRAD_NONFUSED" };
static const char *const bd_names[] = { "ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD",
					"WINOGRAD_NONFUSED" };
static const char *const bf_names[] = { "ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD",
					"WINOGRAD_NONFUSED", "FFT_TILING" };
#define NAME(tab, i) ((i) >= 0 && (size_t)(i) < sizeof(tab) / sizeof(tab[0]) ? tab[i] : "?")

/* The fastest result usable for the dtype: fp32 without TF32 must not use tensor cores. */
static int pick(const struct perf *r, int n, int strict_fp32, size_t *ws, int *math)
{
	for (int i = 0; i < n; i++)
		if (r[i].status == 0 && (!strict_fp32 || r[i].math == CUDNN_FMA_MATH)) {
			if (r[i].memory > *ws)
				*ws = r[i].memory;
			*math = r[i].math;
			return r[i].algo;
		}
	return -1;
}

#define CK(call)                                                                               \
	do {                                                                                   \
		int st_ = (call);                                                              \
		if (st_ != 0) {                                                                \
			snprintf(why, whylen, "%s: %s", #call, c->GetErrorString(st_));        \
			goto bad;                                                              \
		}                                                                              \
	} while (0)

struct kp_cudnn_conv *cudnn_conv_new(struct kp_cudnn *c, int kt, int tf32, int nhwc, long n,
				     long ch, long h, long w, long k, long r, long s, long stride,
				     long pad, long dil, long groups, int backward, char *algo,
				     size_t algolen, char *why, size_t whylen)
{
	struct kp_cudnn_conv *cv = calloc(1, sizeof(*cv));
	if (!cv) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	cv->c = c;
	int dt = kt == KT_BF16 ? CUDNN_DATA_BFLOAT16 : kt == KT_F16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
	int fmt = nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, strict = kt == KT_F32 && !tf32;
	long oh = (h + 2 * pad - dil * (r - 1) - 1) / stride + 1;
	long ow = (w + 2 * pad - dil * (s - 1) - 1) / stride + 1;
	CK(c->CreateTensorDescriptor(&cv->x));
	CK(c->CreateTensorDescriptor(&cv->y));
	CK(c->CreateFilterDescriptor(&cv->w));
	CK(c->CreateConvolutionDescriptor(&cv->conv));
	CK(c->SetTensor4dDescriptor(cv->x, fmt, dt, (int)n, (int)ch, (int)h, (int)w));
	CK(c->SetTensor4dDescriptor(cv->y, fmt, dt, (int)n, (int)k, (int)oh, (int)ow));
	CK(c->SetFilter4dDescriptor(cv->w, dt, fmt, (int)k, (int)(ch / groups), (int)r, (int)s));
	CK(c->SetConvolution2dDescriptor(cv->conv, (int)pad, (int)pad, (int)stride, (int)stride,
					 (int)dil, (int)dil, CUDNN_CROSS_CORRELATION,
					 CUDNN_DATA_FLOAT));
	CK(c->SetConvolutionGroupCount(cv->conv, (int)groups));
	CK(c->SetConvolutionMathType(cv->conv, strict ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH));
	struct perf res[16];
	int got = 0, math = 0; /* the math type is fixed by the descriptor above */
	CK(c->FindFwd(c->h, cv->x, cv->w, cv->conv, cv->y, 16, &got, res));
	if ((cv->afwd = pick(res, got, strict, &cv->wsz, &math)) < 0) {
		snprintf(why, whylen, "no forward algorithm for this convolution");
		goto bad;
	}
	cv->adata = cv->afilt = -1;
	if (backward) {
		CK(c->FindBwdData(c->h, cv->w, cv->y, cv->conv, cv->x, 16, &got, res));
		if ((cv->adata = pick(res, got, strict, &cv->wsz, &math)) < 0) {
			snprintf(why, whylen, "no backward-data algorithm for this convolution");
			goto bad;
		}
		CK(c->FindBwdFilter(c->h, cv->x, cv->y, cv->conv, cv->w, 16, &got, res));
		if ((cv->afilt = pick(res, got, strict, &cv->wsz, &math)) < 0) {
			snprintf(why, whylen, "no backward-filter algorithm for this convolution");
			goto bad;
		}
	}
	if (cv->wsz && cudaMalloc(&cv->ws, cv->wsz) != cudaSuccess) {
		snprintf(why, whylen, "cannot allocate a %zu-byte cuDNN workspace", cv->wsz);
		goto bad;
	}
	if (backward)
		snprintf(algo, algolen, "fwd %s, bwd_data %s, bwd_filter %s", NAME(fwd_names, cv->afwd),
			 NAME(bd_names, cv->adata), NAME(bf_names, cv->afilt));
	else
		snprintf(algo, algolen, "fwd %s", NAME(fwd_names, cv->afwd));
	return cv;
bad:
	cudnn_conv_free(cv);
	return NULL;
}

int cudnn_conv_fwd(struct kp_cudnn_conv *cv, const void *x, const void *wt, void *y, char *why,
		   size_t whylen)
{
	struct kp_cudnn *c = cv->c;
	float one = 1.f, zero = 0.f;
	CK(c->Fwd(c->h, &one, cv->x, x, cv->w, wt, cv->conv, cv->afwd, cv->ws, cv->wsz, &zero, cv->y,
		  y));
	return 0;
bad:
	return -1;
}

int cudnn_conv_bwd(struct kp_cudnn_conv *cv, const void *x, const void *wt, const void *dy,
		   void *dx, void *dw, char *why, size_t whylen)
{
	struct kp_cudnn *c = cv->c;
	float one = 1.f, zero = 0.f;
	CK(c->BwdData(c->h, &one, cv->w, wt, cv->y, dy, cv->conv, cv->adata, cv->ws, cv->wsz, &zero,
		      cv->x, dx));
	CK(c->BwdFilter(c->h, &one, cv->x, x, cv->y, dy, cv->conv, cv->afilt, cv->ws, cv->wsz, &zero,
			cv->w, dw));
	return 0;
bad:
	return -1;
}

void cudnn_conv_free(struct kp_cudnn_conv *cv)
{
	if (!cv)
		return;
	struct kp_cudnn *c = cv->c;
	if (cv->ws)
		cudaFree(cv->ws);
	if (cv->conv)
		c->DestroyConvolutionDescriptor(cv->conv);
	if (cv->w)
		c->DestroyFilterDescriptor(cv->w);
	if (cv->y)
		c->DestroyTensorDescriptor(cv->y);
	if (cv->x)
		c->DestroyTensorDescriptor(cv->x);
	free(cv);
}
#endif /* KPROF_HAVE_CUPTI */
