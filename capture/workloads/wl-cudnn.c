/*
 * wl-cudnn.c — cuDNN 9 for the conv workload, loaded with dlopen (doc/workloads.md §a.1-a.2): the
 * declarations below are the few kprof needs from cudnn.h / cudnn_cnn.h (cuDNN 9: handles are
 * opaque pointers, enums are ints, the *AlgoPerf_t structs share one layout).
 */
#include "workloads/wl-cudnn.h"

#include <dlfcn.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/kernels.h"
#include "workloads/cudnn-graph.h"
#include "workloads/cudnn-tune.h"

/* cudnn_graph.h (cuDNN 9): the backend (graph) API's enum values that kprof uses */
enum { CUDNN_DATA_FLOAT = 0, CUDNN_DATA_HALF = 2, CUDNN_DATA_BFLOAT16 = 9 };
enum { CUDNN_CROSS_CORRELATION = 1 };
/* clang-format off */
enum {
	T_HANDLE = 0, T_DATA_TYPE = 1, T_INT64 = 3, T_FLOAT = 4, T_VOID_PTR = 6, T_CONV_MODE = 7,
	T_HEUR_MODE = 8, T_NUMERICAL_NOTE = 11, T_BACKEND_DESCRIPTOR = 15
};
enum {
	D_CONVOLUTION = 1, D_ENGINE = 2, D_ENGINECFG = 3, D_ENGINEHEUR = 4, D_EXECUTION_PLAN = 5,
	D_OP_CONV_FWD = 10, D_OP_CONV_BWD_FILTER = 11, D_OP_CONV_BWD_DATA = 12,
	D_OPERATIONGRAPH = 15, D_VARIANT_PACK = 16, D_TENSOR = 17
};
enum {
	A_CONV_COMP_TYPE = 100, A_CONV_MODE = 101, A_CONV_DILATIONS = 102,
	A_CONV_FILTER_STRIDES = 103, A_CONV_POST_PADDINGS = 104, A_CONV_PRE_PADDINGS = 105,
	A_CONV_SPATIAL_DIMS = 106, A_HEUR_MODE = 200, A_HEUR_GRAPH = 201, A_HEUR_RESULTS = 202,
	A_CFG_ENGINE = 300, A_PLAN_HANDLE = 400, A_PLAN_CONFIG = 401, A_PLAN_WORKSPACE = 402,
	A_FWD_ALPHA = 700, A_FWD_BETA = 701, A_FWD_CONV = 702, A_FWD_W = 703, A_FWD_X = 704,
	A_FWD_Y = 705, A_BD_ALPHA = 706, A_BD_BETA = 707, A_BD_CONV = 708, A_BD_W = 709,
	A_BD_DX = 710, A_BD_DY = 711, A_BF_ALPHA = 712, A_BF_BETA = 713, A_BF_CONV = 714,
	A_BF_DW = 715, A_BF_X = 716, A_BF_DY = 717, A_GRAPH_HANDLE = 800, A_GRAPH_OPS = 801,
	A_T_ALIGN = 900, A_T_DTYPE = 901, A_T_DIMS = 902, A_T_STRIDES = 903, A_T_UID = 906,
	A_VP_UIDS = 1000, A_VP_PTRS = 1001, A_VP_WORKSPACE = 1003, A_ENGINE_INDEX = 1301,
	A_ENGINE_NOTE = 1303
};
/* clang-format on */
enum { HEUR_MODE_INSTANT = 0, HEUR_MODE_FALLBACK = 2 };
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
	int (*BCreate)(int, hnd *);
	int (*BDestroy)(hnd);
	int (*BSet)(hnd, int, int, int64_t, const void *);
	int (*BGet)(hnd, int, int, int64_t, int64_t *, void *);
	int (*BFinalize)(hnd);
	int (*BExecute)(hnd, hnd, hnd);
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
	static const char *const subs[] = {
		"graph",    "ops", "cnn", "engines_precompiled", "engines_runtime_compiled",
		"heuristic"
	};
	const char *slash = strrchr(shim, '/');
	if (!slash)
		return;
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
		char p[640];
		snprintf(p, sizeof(p), "%.*s/libcudnn_%s.so.9", (int)(slash - shim), shim, subs[i]);
		dlopen(p, RTLD_NOW | RTLD_GLOBAL);
	}
	/*
	 * The runtime-compiled engines (fused attention among them) dlopen NVRTC by soname: a
	 * Python environment's copy beside cuDNN's (nvidia/<pkg>/lib/libnvrtc.so.N), loaded first,
	 * is the one they then find (doc/workloads.md §a.1).
	 */
	char pat[640];
	glob_t gl;
	snprintf(pat, sizeof(pat), "%.*s/../../*/lib/libnvrtc.so.[0-9]*", (int)(slash - shim),
		 shim);
	if (glob(pat, 0, NULL, &gl) == 0) {
		for (size_t i = 0; i < gl.gl_pathc; i++)
			if (!strstr(gl.gl_pathv[i], "alt") &&
			    dlopen(gl.gl_pathv[i], RTLD_NOW | RTLD_GLOBAL))
				break;
		globfree(&gl);
	}
}

#define SYM(field, name)                                                                           \
	do {                                                                                       \
		*(void **)&c->field = dlsym(c->lib, name);                                         \
		if (!c->field) {                                                                   \
			missing = name;                                                            \
			goto bad;                                                                  \
		}                                                                                  \
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
			snprintf(tried + tl, sizeof(tried) - tl, "%s%s (absent)", tl ? ", " : "",
				 paths[i]);
			continue;
		}
		preload_siblings(paths[i]);
		c->lib = dlopen(paths[i], RTLD_NOW | RTLD_GLOBAL);
		if (!c->lib) {
			snprintf(tried + tl, sizeof(tried) - tl, "%s%s (cannot load)",
				 tl ? ", " : "", paths[i]);
			continue;
		}
		SYM(GetVersion, "cudnnGetVersion");
		SYM(GetErrorString, "cudnnGetErrorString");
		SYM(Create, "cudnnCreate");
		SYM(Destroy, "cudnnDestroy");
		SYM(BCreate, "cudnnBackendCreateDescriptor");
		SYM(BDestroy, "cudnnBackendDestroyDescriptor");
		SYM(BSet, "cudnnBackendSetAttribute");
		SYM(BGet, "cudnnBackendGetAttribute");
		SYM(BFinalize, "cudnnBackendFinalize");
		SYM(BExecute, "cudnnBackendExecute");
		c->version = (long)c->GetVersion();
		if (c->version < 90000 || c->version >= 100000) {
			snprintf(tried + tl, sizeof(tried) - tl, "%s%s (version %ld, not 9.x)",
				 tl ? ", " : "", paths[i], c->version);
			dlclose(c->lib);
			continue;
		}
		int st = c->Create(&c->h);
		if (st != 0) {
			snprintf(tried + tl, sizeof(tried) - tl, "%s%s (cudnnCreate: %s)",
				 tl ? ", " : "", paths[i], c->GetErrorString(st));
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
	snprintf(why, whylen,
		 "cuDNN 9 not found (tried %s; set KPROF_CUDNN to libcudnn.so.9 or its "
		 "directory)",
		 tried);
	return NULL;
}

struct kp_cudnn *cudnn_open(char *why, size_t whylen)
{
	char paths[CUDNN_MAX_CANDIDATES][512], py[8192] = "";
	/* Python environments with PyTorch carry cuDNN in site-packages/nvidia/cudnn/lib */
	FILE *p = popen("python3 -c 'import sys, sysconfig; print(sysconfig.get_path(\"purelib\")); "
			"print(\"\\n\".join(sys.path))' 2>/dev/null",
			"r");
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

void cudnn_backend(struct kp_cudnn *c, struct cg_api *api, void **handle)
{
	api->create = c->BCreate, api->destroy = c->BDestroy, api->set = c->BSet;
	api->finalize = c->BFinalize, api->errstr = c->GetErrorString, api->get = c->BGet;
	api->execute = c->BExecute;
	*handle = c->h;
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

/* descriptors of one convolution: 3 directions x (graph, op, 2 heuristics, their configs) + 5 */
#define MAXD 320
#define MAXCFG 64 /* configurations read from the instant heuristics */
#define MAXFB 16  /* and from the fallback list */

/* One direction's plan and its variant pack (the buffers are fixed per case). */
struct dir {
	hnd plan, vpack;
	int64_t engine, ws;
	char why[200]; /* tune_describe(): the engine and why it was kept */
};

struct kp_cudnn_conv {
	struct kp_cudnn *c;
	hnd d[MAXD];
	int nd;
	struct dir f, bd, bf;
	void *ws;
	size_t wsz;
	char *why;
	size_t whylen;
};

static hnd mk(struct kp_cudnn_conv *cv, int type)
{
	hnd h = NULL;
	int st = cv->nd < MAXD ? cv->c->BCreate(type, &h) : -1;
	if (st != 0 || !h) {
		snprintf(cv->why, cv->whylen, "cudnnBackendCreateDescriptor(%d): %s", type,
			 st < 0 ? "too many" : cv->c->GetErrorString(st));
		return NULL;
	}
	cv->d[cv->nd++] = h;
	return h;
}

static int set(struct kp_cudnn_conv *cv, hnd h, int attr, int type, int64_t n, const void *v)
{
	int st = cv->c->BSet(h, attr, type, n, v);
	if (st != 0)
		snprintf(cv->why, cv->whylen, "cudnnBackendSetAttribute(%d): %s", attr,
			 cv->c->GetErrorString(st));
	return st ? -1 : 0;
}

static int fin(struct kp_cudnn_conv *cv, hnd h, const char *what)
{
	int st = cv->c->BFinalize(h);
	if (st != 0)
		snprintf(cv->why, cv->whylen, "cudnnBackendFinalize(%s): %s", what,
			 cv->c->GetErrorString(st));
	return st ? -1 : 0;
}

static hnd tensor_desc(struct kp_cudnn_conv *cv, int64_t uid, int dt, int nhwc, long a, long b,
		       long y, long x)
{
	int64_t dims[4] = { a, b, y, x }, st[4], align = 16;
	if (nhwc)
		st[0] = y * x * b, st[1] = 1, st[2] = x * b, st[3] = b;
	else
		st[0] = b * y * x, st[1] = y * x, st[2] = x, st[3] = 1;
	hnd t = mk(cv, D_TENSOR);
	if (!t || set(cv, t, A_T_DTYPE, T_DATA_TYPE, 1, &dt) ||
	    set(cv, t, A_T_DIMS, T_INT64, 4, dims) || set(cv, t, A_T_STRIDES, T_INT64, 4, st) ||
	    set(cv, t, A_T_UID, T_INT64, 1, &uid) || set(cv, t, A_T_ALIGN, T_INT64, 1, &align) ||
	    fin(cv, t, "tensor"))
		return NULL;
	return t;
}

/* GPU ms between @a and @b after @n executions of @plan; < 0 when one fails. */
static double timed_execs(int (*exec)(void *, void *, void *), void *h, void *plan, void *vp, int n,
			  cudaEvent_t a, cudaEvent_t b)
{
	float ms = -1;
	int ok = 1;
	cudaEventRecord(a, 0);
	for (int i = 0; i < n && ok; i++)
		ok = exec(h, plan, vp) == 0;
	cudaEventRecord(b, 0);
	if (cudaEventSynchronize(b) != cudaSuccess || !ok ||
	    cudaEventElapsedTime(&ms, a, b) != cudaSuccess)
		return -1;
	return ms;
}

double cudnn_time_plan(int (*exec)(void *, void *, void *), void *h, void *plan, void *vp)
{
	cudaEvent_t a, b;
	double best = -1;
	if (exec(h, plan, vp) != 0 || cudaDeviceSynchronize() != cudaSuccess)
		return -1;
	if (cudaEventCreate(&a) != cudaSuccess)
		return -1;
	if (cudaEventCreate(&b) != cudaSuccess) {
		cudaEventDestroy(a);
		return -1;
	}
	double one = timed_execs(exec, h, plan, vp, 1, a, b);
	int reps = tune_reps(one);
	for (int round = 0; round < 2 && one >= 0; round++) {
		double ms = timed_execs(exec, h, plan, vp, reps, a, b);
		if (ms < 0) {
			best = -1;
			break;
		}
		if (best < 0 || ms / reps < best)
			best = ms / reps;
	}
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	return best;
}

/* The configurations heuristics @mode offers for graph @g, into @cfg (at most @max); -1 on error. */
static int heur_configs(struct kp_cudnn_conv *cv, hnd g, int mode, hnd *cfg, int max)
{
	struct kp_cudnn *c = cv->c;
	hnd heur = mk(cv, D_ENGINEHEUR);
	int64_t n = 0, got = 0;
	if (!heur)
		return -1;
	if (set(cv, heur, A_HEUR_GRAPH, T_BACKEND_DESCRIPTOR, 1, &g) ||
	    set(cv, heur, A_HEUR_MODE, T_HEUR_MODE, 1, &mode) || fin(cv, heur, "heuristics"))
		return 0; /* this mode offers nothing */
	if (c->BGet(heur, A_HEUR_RESULTS, T_BACKEND_DESCRIPTOR, 0, &n, NULL) != 0 || n <= 0)
		return 0;
	if (n > max)
		n = max;
	for (int64_t i = 0; i < n; i++)
		if (!(cfg[i] = mk(cv, D_ENGINECFG)))
			return -1;
	if (c->BGet(heur, A_HEUR_RESULTS, T_BACKEND_DESCRIPTOR, n, &got, cfg) != 0)
		return 0;
	return (int)got;
}

/* The global index of @cfg's engine (-1 unknown); *@skip when its numerical notes rule it out. */
static int64_t cfg_engine(struct kp_cudnn *c, hnd cfg, int strict, int *skip)
{
	hnd eng = NULL;
	int64_t ne = 0, idx = -1, nn = 0;
	int notes[16];
	*skip = 0;
	if (c->BCreate(D_ENGINE, &eng) != 0)
		return -1;
	if (c->BGet(cfg, A_CFG_ENGINE, T_BACKEND_DESCRIPTOR, 1, &ne, &eng) == 0) {
		if (c->BGet(eng, A_ENGINE_NOTE, T_NUMERICAL_NOTE, 16, &nn, notes) == 0)
			*skip = tune_skip_notes(notes, (int)nn, strict);
		c->BGet(eng, A_ENGINE_INDEX, T_INT64, 1, &ne, &idx);
	}
	c->BDestroy(eng);
	return idx;
}

/* A plan of @cfg, timed over @uids/@ptrs in a workspace of its own; NULL when it cannot run. */
static hnd timed_plan(struct kp_cudnn_conv *cv, hnd cfg, const int64_t *uids, void *const *ptrs,
		      size_t free_b, int64_t *ws, double *ms)
{
	struct kp_cudnn *c = cv->c;
	hnd plan = NULL, vp = NULL;
	void *wsp = NULL;
	int64_t ne = 0;
	*ws = 0;
	if (c->BCreate(D_EXECUTION_PLAN, &plan) != 0)
		return NULL;
	int ok = c->BSet(plan, A_PLAN_HANDLE, T_HANDLE, 1, &c->h) == 0 &&
		 c->BSet(plan, A_PLAN_CONFIG, T_BACKEND_DESCRIPTOR, 1, &cfg) == 0 &&
		 c->BFinalize(plan) == 0 &&
		 c->BGet(plan, A_PLAN_WORKSPACE, T_INT64, 1, &ne, ws) == 0 &&
		 (size_t)*ws <= free_b / 2 &&
		 (*ws == 0 || cudaMalloc(&wsp, (size_t)*ws) == cudaSuccess) &&
		 c->BCreate(D_VARIANT_PACK, &vp) == 0 &&
		 c->BSet(vp, A_VP_UIDS, T_INT64, 3, uids) == 0 &&
		 c->BSet(vp, A_VP_PTRS, T_VOID_PTR, 3, ptrs) == 0 &&
		 c->BSet(vp, A_VP_WORKSPACE, T_VOID_PTR, 1, &wsp) == 0 && c->BFinalize(vp) == 0;
	*ms = ok ? cudnn_time_plan(c->BExecute, c->h, plan, vp) : -1;
	if (vp)
		c->BDestroy(vp);
	if (wsp)
		cudaFree(wsp);
	cudaGetLastError();
	if (*ms < 0) {
		c->BDestroy(plan);
		return NULL;
	}
	return plan;
}

/*
 * The candidates of one source (@mode's configurations, in order): each that passes the notes
 * and the tuner and finalizes is timed; plans go to @plans, workspaces to @wss.  -1 on error.
 */
static int add_source(struct kp_cudnn_conv *cv, struct tune *t, hnd g, int mode, int strict,
		      const int64_t *uids, void *const *ptrs, hnd *plans, int64_t *wss)
{
	int src = mode == HEUR_MODE_FALLBACK ? TUNE_FALLBACK : TUNE_HEUR, skip;
	hnd cfg[MAXCFG];
	int n = heur_configs(cv, g, mode, cfg, src == TUNE_FALLBACK ? MAXFB : MAXCFG);
	size_t free_b = 0, total_b = 0;
	cudaMemGetInfo(&free_b, &total_b);
	for (int i = 0; i < n; i++) {
		int64_t idx = cfg_engine(cv->c, cfg[i], strict, &skip), ws;
		double ms;
		if (skip || !tune_wants(t, idx, src))
			continue;
		hnd plan = timed_plan(cv, cfg[i], uids, ptrs, free_b, &ws, &ms);
		int k = plan ? tune_add(t, idx, src, i + 1) : -1;
		if (k >= 0)
			t->c[k].ms = ms, plans[k] = plan, wss[k] = ws;
	}
	return n < 0 ? -1 : 0;
}

/*
 * One-operation graph -> the instant heuristics' configurations, then the fallback list's
 * (engines not offered yet): the first TUNE_MAX plans that finalize are timed and the fastest
 * kept, as PyTorch's cudnn.benchmark times every plan.  Engines that down-convert inputs are
 * skipped (as PyTorch does), and for strict fp32 those that use tensor cores.
 */
static int build_dir(struct kp_cudnn_conv *cv, struct dir *dr, hnd op, int strict,
		     const int64_t *uids, void *const *ptrs)
{
	struct kp_cudnn *c = cv->c;
	hnd g = mk(cv, D_OPERATIONGRAPH), plans[TUNE_MAX];
	int64_t wss[TUNE_MAX];
	struct tune t = { .n = 0 };
	if (!g || set(cv, g, A_GRAPH_HANDLE, T_HANDLE, 1, &c->h) ||
	    set(cv, g, A_GRAPH_OPS, T_BACKEND_DESCRIPTOR, 1, &op) || fin(cv, g, "operation graph"))
		return -1;
	if (add_source(cv, &t, g, HEUR_MODE_INSTANT, strict, uids, ptrs, plans, wss) < 0 ||
	    add_source(cv, &t, g, HEUR_MODE_FALLBACK, strict, uids, ptrs, plans, wss) < 0)
		goto bad;
	int best = tune_best(&t);
	if (best < 0) {
		snprintf(cv->why, cv->whylen,
			 "no cuDNN engine configuration finalizes for this convolution");
		return -1;
	}
	for (int i = 0; i < t.n; i++)
		if (i != best)
			c->BDestroy(plans[i]);
	dr->plan = plans[best], dr->engine = t.c[best].engine, dr->ws = wss[best];
	tune_describe(&t, best, dr->why, sizeof(dr->why));
	if ((size_t)dr->ws > cv->wsz)
		cv->wsz = (size_t)dr->ws;
	return 0;
bad:
	for (int i = 0; i < t.n; i++)
		c->BDestroy(plans[i]);
	return -1;
}

/* The variant pack of a direction, over the case's fixed buffers and the shared workspace. */
static int mk_vpack(struct kp_cudnn_conv *cv, struct dir *dr, const int64_t *uids,
		    void *const *ptrs)
{
	if (!dr->plan)
		return 0;
	hnd vp = mk(cv, D_VARIANT_PACK);
	if (!vp || set(cv, vp, A_VP_UIDS, T_INT64, 3, uids) ||
	    set(cv, vp, A_VP_PTRS, T_VOID_PTR, 3, ptrs) ||
	    set(cv, vp, A_VP_WORKSPACE, T_VOID_PTR, 1, &cv->ws) || fin(cv, vp, "variant pack"))
		return -1;
	dr->vpack = vp;
	return 0;
}

/* The case's geometry and cuDNN data type */
struct conv_shape {
	int dt, nhwc;
	long n, ch, h, w, k, r, s, stride, pad, dil, groups;
};

/* The tensors and the convolution that every direction's operation shares */
struct conv_descs {
	hnd tx, tw, ty, conv;
};

/*
 * One direction's operation: its descriptor type, the attributes that take x (or dx), w (or
 * dw), y (or dy), the convolution, alpha and beta, in that order, and its name in messages.
 */
struct conv_op {
	int type, attr[6];
	const char *what;
};

/* clang-format off */
static const struct conv_op op_fwd = {
	D_OP_CONV_FWD, { A_FWD_X, A_FWD_W, A_FWD_Y, A_FWD_CONV, A_FWD_ALPHA, A_FWD_BETA },
	"convolution forward"
};
static const struct conv_op op_bwd_data = {
	D_OP_CONV_BWD_DATA, { A_BD_DX, A_BD_W, A_BD_DY, A_BD_CONV, A_BD_ALPHA, A_BD_BETA },
	"convolution backward data"
};
static const struct conv_op op_bwd_filter = {
	D_OP_CONV_BWD_FILTER, { A_BF_X, A_BF_DW, A_BF_DY, A_BF_CONV, A_BF_ALPHA, A_BF_BETA },
	"convolution backward filter"
};
/* clang-format on */

/* The buffers each direction runs over (uids 'x', 'w', 'y'), fixed per case */
struct conv_bufs {
	int64_t uids[3];
	void *f[3], *bd[3], *bf[3];
};

/* x, w, y and the convolution (cross-correlation, fp32 compute); -1 with cv->why */
static int shared_descs(struct kp_cudnn_conv *cv, struct conv_descs *d, const struct conv_shape *sh)
{
	int comp = CUDNN_DATA_FLOAT, mode = CUDNN_CROSS_CORRELATION;
	long oh = (sh->h + 2 * sh->pad - sh->dil * (sh->r - 1) - 1) / sh->stride + 1;
	long ow = (sh->w + 2 * sh->pad - sh->dil * (sh->s - 1) - 1) / sh->stride + 1;
	int64_t sd = 2, dl[2] = { sh->dil, sh->dil }, str[2] = { sh->stride, sh->stride },
		pd[2] = { sh->pad, sh->pad };
	d->tx = tensor_desc(cv, 'x', sh->dt, sh->nhwc, sh->n, sh->ch, sh->h, sh->w);
	d->tw = d->tx ? tensor_desc(cv, 'w', sh->dt, sh->nhwc, sh->k, sh->ch / sh->groups, sh->r,
				    sh->s)
		      : NULL;
	d->ty = d->tw ? tensor_desc(cv, 'y', sh->dt, sh->nhwc, sh->n, sh->k, oh, ow) : NULL;
	d->conv = d->ty ? mk(cv, D_CONVOLUTION) : NULL;
	if (!d->conv || set(cv, d->conv, A_CONV_COMP_TYPE, T_DATA_TYPE, 1, &comp) ||
	    set(cv, d->conv, A_CONV_MODE, T_CONV_MODE, 1, &mode) ||
	    set(cv, d->conv, A_CONV_SPATIAL_DIMS, T_INT64, 1, &sd) ||
	    set(cv, d->conv, A_CONV_DILATIONS, T_INT64, 2, dl) ||
	    set(cv, d->conv, A_CONV_FILTER_STRIDES, T_INT64, 2, str) ||
	    set(cv, d->conv, A_CONV_PRE_PADDINGS, T_INT64, 2, pd) ||
	    set(cv, d->conv, A_CONV_POST_PADDINGS, T_INT64, 2, pd) ||
	    fin(cv, d->conv, "convolution"))
		return -1;
	return 0;
}

/* Operation @k over @d (alpha 1, beta 0), then its tuned plan into @dr; -1 with cv->why */
static int build_op(struct kp_cudnn_conv *cv, struct dir *dr, const struct conv_op *k,
		    const struct conv_descs *d, int strict, const int64_t *uids, void *const *ptrs)
{
	float one = 1.f, zero = 0.f;
	hnd op = mk(cv, k->type);
	if (!op || set(cv, op, k->attr[0], T_BACKEND_DESCRIPTOR, 1, &d->tx) ||
	    set(cv, op, k->attr[1], T_BACKEND_DESCRIPTOR, 1, &d->tw) ||
	    set(cv, op, k->attr[2], T_BACKEND_DESCRIPTOR, 1, &d->ty) ||
	    set(cv, op, k->attr[3], T_BACKEND_DESCRIPTOR, 1, &d->conv) ||
	    set(cv, op, k->attr[4], T_FLOAT, 1, &one) ||
	    set(cv, op, k->attr[5], T_FLOAT, 1, &zero) || fin(cv, op, k->what) ||
	    build_dir(cv, dr, op, strict, uids, ptrs) < 0)
		return -1;
	return 0;
}

/* The workspace the hungriest direction needs, each direction's variant pack; -1 with cv->why */
static int bind_buffers(struct kp_cudnn_conv *cv, const struct conv_bufs *b)
{
	if (cv->wsz && cudaMalloc(&cv->ws, cv->wsz) != cudaSuccess) {
		snprintf(cv->why, cv->whylen, "cannot allocate a %zu-byte cuDNN workspace",
			 cv->wsz);
		return -1;
	}
	if (mk_vpack(cv, &cv->f, b->uids, b->f) < 0 || mk_vpack(cv, &cv->bd, b->uids, b->bd) < 0 ||
	    mk_vpack(cv, &cv->bf, b->uids, b->bf) < 0)
		return -1;
	return 0;
}

struct kp_cudnn_conv *cudnn_conv_new(struct kp_cudnn *c, int kt, int tf32, int nhwc, long n,
				     long ch, long h, long w, long k, long r, long s, long stride,
				     long pad, long dil, long groups, const void *x, const void *wt,
				     void *y, const void *dy, void *dx, void *dw, char *algo,
				     size_t algolen, char *why, size_t whylen)
{
	struct kp_cudnn_conv *cv = calloc(1, sizeof(*cv));
	if (!cv) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	cv->c = c, cv->why = why, cv->whylen = whylen;
	int dt = kt == KT_BF16  ? CUDNN_DATA_BFLOAT16
		 : kt == KT_F16 ? CUDNN_DATA_HALF
				: CUDNN_DATA_FLOAT;
	int strict = kt == KT_F32 && !tf32;
	struct conv_shape sh = { dt, nhwc, n, ch, h, w, k, r, s, stride, pad, dil, groups };
	/* backward data writes dx through x's descriptor, backward filter dw through w's */
	struct conv_bufs b = { .uids = { 'x', 'w', 'y' },
			       .f = { (void *)x, (void *)wt, y },
			       .bd = { dx, (void *)wt, (void *)dy },
			       .bf = { (void *)x, dw, (void *)dy } };
	struct conv_descs d;
	if (shared_descs(cv, &d, &sh) < 0 ||
	    build_op(cv, &cv->f, &op_fwd, &d, strict, b.uids, b.f) < 0)
		goto bad;
	if (dy && (build_op(cv, &cv->bd, &op_bwd_data, &d, strict, b.uids, b.bd) < 0 ||
		   build_op(cv, &cv->bf, &op_bwd_filter, &d, strict, b.uids, b.bf) < 0))
		goto bad;
	if (bind_buffers(cv, &b) < 0)
		goto bad;
	if (dy)
		snprintf(algo, algolen, "graph API; fwd %s; bwd_data %s; bwd_filter %s", cv->f.why,
			 cv->bd.why, cv->bf.why);
	else
		snprintf(algo, algolen, "graph API; fwd %s", cv->f.why);
	return cv;
bad:
	cudnn_conv_free(cv);
	return NULL;
}

static int exec(struct kp_cudnn_conv *cv, struct dir *dr, char *why, size_t whylen)
{
	int st = cv->c->BExecute(cv->c->h, dr->plan, dr->vpack);
	if (st != 0)
		snprintf(why, whylen, "cudnnBackendExecute: %s", cv->c->GetErrorString(st));
	return st ? -1 : 0;
}

int cudnn_conv_fwd(struct kp_cudnn_conv *cv, char *why, size_t whylen)
{
	return exec(cv, &cv->f, why, whylen);
}

int cudnn_conv_bwd(struct kp_cudnn_conv *cv, char *why, size_t whylen)
{
	if (exec(cv, &cv->bd, why, whylen) < 0)
		return -1;
	return exec(cv, &cv->bf, why, whylen);
}

void cudnn_conv_free(struct kp_cudnn_conv *cv)
{
	if (!cv)
		return;
	struct dir *ds[3] = { &cv->f, &cv->bd, &cv->bf };
	for (int i = 0; i < 3; i++)
		if (ds[i]->plan)
			cv->c->BDestroy(ds[i]->plan);
	while (cv->nd)
		cv->c->BDestroy(cv->d[--cv->nd]);
	if (cv->ws)
		cudaFree(cv->ws);
	free(cv);
}
#endif /* KPROF_HAVE_CUPTI */
