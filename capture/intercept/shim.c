/*
 * shim.c — kprof-shim.so, preloaded (LD_PRELOAD) into the command of `kprof capture -- <cmd>`:
 * the GEMM entry points of cuBLAS and cuBLASLt record their shapes (doc/capture-any.md §1), and,
 * as the NVTX injection library (NVTX_INJECTION64_PATH), NVTX ranges (§2).  kprof-inject.so
 * hands it CUPTI's external-correlation push/pop and drains its records at exit.
 *
 * Rules (§1.3, §1.8): no DT_NEEDED on any CUDA library; the real functions are found lazily
 * (RTLD_NEXT, then the loaded soname with RTLD_NOLOAD, then a scan of the loaded objects);
 * only the outermost wrapped call of a thread is recorded; no locks, allocation or formatting
 * on a GEMM's path but a new 4096-record block now and then; results and status codes pass
 * through untouched.
 */
#if defined(KPROF_SHIM)

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <cublasLt.h>
#include <cublas_api.h>
#include <cudnn.h>
#include <nvtx3/nvToolsExt.h>

#include "intercept/cudnnrec.h"
#include "intercept/hcall.h"
#include "intercept/ltshape.h"

#define API __attribute__((visibility("default")))

/* ---- records: per-thread blocks on one global list ---- */

#define BLOCK_RECS 4096
struct block {
	struct block *next;
	_Atomic uint32_t n; /* records published in v[] */
	struct kp_hcall v[BLOCK_RECS];
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct block *g_blocks;
static _Atomic uint64_t g_ext; /* External ids handed out */
static _Atomic(kp_push_fn) g_push;
static _Atomic(kp_pop_fn) g_pop;
static _Atomic(kp_clock_fn) g_clock; /* CUPTI's clock, the one of the API records */
static int g_extcorr;                /* KPROF_SHIM_EXTCORR=on: push an External id per call */
static int g_memory;                 /* KPROF_MEMORY=on (--memory): record cudaMalloc calls */
static _Atomic int g_off;            /* KPROF_SHIM=off, or the library version is unknown */
static uint32_t g_pid;

static __thread struct block *t_block;
static __thread uint32_t t_tid;
static __thread int t_depth;
static __thread struct kp_hcall *t_cur; /* the thread's library call in progress */

static uint64_t now_ns(void)
{
	kp_clock_fn clk = atomic_load_explicit(&g_clock, memory_order_relaxed);
	if (clk)
		return clk();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A fresh record of the calling thread, or NULL when out of memory. */
static struct kp_hcall *new_rec(void)
{
	struct block *b = t_block;
	if (!b || atomic_load_explicit(&b->n, memory_order_relaxed) == BLOCK_RECS) {
		b = calloc(1, sizeof(*b));
		if (!b)
			return NULL;
		pthread_mutex_lock(&g_lock);
		b->next = g_blocks;
		g_blocks = b;
		pthread_mutex_unlock(&g_lock);
		t_block = b;
	}
	if (!t_tid)
		t_tid = (uint32_t)syscall(SYS_gettid);
	uint32_t i = atomic_load_explicit(&b->n, memory_order_relaxed);
	struct kp_hcall *r = &b->v[i];
	memset(r, 0, sizeof(*r));
	r->pid = g_pid ? g_pid : (uint32_t)getpid();
	r->tid = t_tid;
	r->compute = r->bias_type = -1;
	/* published now, completed by its owner: the drain runs at exit */
	atomic_store_explicit(&b->n, i + 1, memory_order_release);
	return r;
}

API void kprof_shim_attach(kp_push_fn push, kp_pop_fn pop, kp_clock_fn clock);
API uint64_t kprof_shim_drain(kp_drain_fn fn, void *arg);
API uint64_t kprof_shim_context(void);
API int kprof_shim_range_push(const char *msg);
API int kprof_shim_range_pop(void);

void kprof_shim_attach(kp_push_fn push, kp_pop_fn pop, kp_clock_fn clock)
{
	g_pid = (uint32_t)getpid();
	atomic_store(&g_clock, clock);
	atomic_store(&g_pop, g_extcorr ? pop : NULL);
	atomic_store(&g_push, g_extcorr ? push : NULL);
}

static uint64_t drain_ranges(kp_drain_fn fn, void *arg);

uint64_t kprof_shim_drain(kp_drain_fn fn, void *arg)
{
	uint64_t n = drain_ranges(fn, arg);
	pthread_mutex_lock(&g_lock);
	for (struct block *b = g_blocks; b; b = b->next) {
		uint32_t cnt = atomic_load_explicit(&b->n, memory_order_acquire);
		for (uint32_t i = 0; i < cnt; i++, n++)
			fn(&b->v[i], arg);
	}
	pthread_mutex_unlock(&g_lock);
	return n;
}

__attribute__((constructor)) static void shim_init(void)
{
	const char *e = getenv("KPROF_SHIM");
	if (e && !strcmp(e, "off"))
		atomic_store(&g_off, 1);
	e = getenv("KPROF_SHIM_EXTCORR");
	g_extcorr = e && !strcmp(e, "on");
	e = getenv("KPROF_MEMORY");
	g_memory = e && !strcmp(e, "on");
	g_pid = (uint32_t)getpid();
}

/* ---- finding the real functions (§1.3) ---- */

struct find {
	const char *suffix;
	char path[4096];
};

/* A loaded object named @f->suffix, or that name and more version numbers ("libcudart.so"
 * finds libcudart.so.13; "libcublas.so.13" finds libcublas.so.13.1.0 too). */
static int find_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find *f = arg;
	(void)size;
	const char *p = info->dlpi_name, *b = p ? strrchr(p, '/') : NULL;
	size_t ls = strlen(f->suffix);
	if (b && !strncmp(b + 1, f->suffix, ls) && (b[1 + ls] == '\0' || b[1 + ls] == '.')) {
		snprintf(f->path, sizeof(f->path), "%s", p);
		return 1;
	}
	return 0;
}

static void *resolve(const char *soname, const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (p)
		return p;
	void *h = dlopen(soname, RTLD_NOLOAD | RTLD_LAZY);
	if (!h) {
		struct find f = { soname, "" };
		dl_iterate_phdr(find_loaded, &f);
		if (f.path[0])
			h = dlopen(f.path, RTLD_NOLOAD | RTLD_LAZY);
	}
	if (!h)
		return NULL;
	p = dlsym(h, name);
	dlclose(h); /* RTLD_NOLOAD only took a reference */
	return p;
}

static void *cached(_Atomic(void *) *slot, const char *soname, const char *name)
{
	void *p = atomic_load_explicit(slot, memory_order_acquire);
	if (!p && (p = resolve(soname, name)))
		atomic_store_explicit(slot, p, memory_order_release);
	/* cuDNN's graph API is also libcudnn_graph.so.9's own, for programs that load only it */
	if (!p && !strcmp(soname, "libcudnn.so.9") && (p = resolve("libcudnn_graph.so.9", name)))
		atomic_store_explicit(slot, p, memory_order_release);
	return p;
}

static void once_warn(_Atomic int *flag, const char *fmt, const char *a)
{
	if (!atomic_exchange(flag, 1)) {
		fprintf(stderr, "kprof: warning: ");
		fprintf(stderr, fmt, a);
		fputc('\n', stderr);
	}
}

/*
 * cublas_api.h declares the fp16 entry points for C++ only (so they have no prototype here);
 * their __half arguments are 2 bytes either way.
 */
typedef uint16_t kp_half;
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

#define CUBLAS_SO "libcublas.so.13"
#define CUBLASLT_SO "libcublasLt.so.13"

/* cuBLAS 13.x and cuBLASLt 13.x have the argument and attribute layouts kprof reads */
static _Atomic int g_ver_cublas, g_ver_lt; /* 0 unchecked, 1 known, -1 unknown */

static int cublas_known(void)
{
	int v = atomic_load_explicit(&g_ver_cublas, memory_order_relaxed);
	if (v)
		return v > 0;
	static _Atomic(void *) fp;
	cublasStatus_t (*get)(libraryPropertyType,
			      int *) = (cublasStatus_t(*)(libraryPropertyType,
							  int *))cached(&fp, CUBLAS_SO,
									"cublasGetProperty");
	int major = 0;
	v = get && get(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS && major == 13 ? 1 : -1;
	atomic_store(&g_ver_cublas, v);
	if (v < 0) {
		static _Atomic int w;
		char buf[32];
		snprintf(buf, sizeof(buf), "%d", major);
		once_warn(&w,
			  "cuBLAS major version %s is not one kprof knows; its calls are not "
			  "recorded",
			  buf);
	}
	return v > 0;
}

static int lt_known(void)
{
	int v = atomic_load_explicit(&g_ver_lt, memory_order_relaxed);
	if (v)
		return v > 0;
	static _Atomic(void *) fp;
	size_t (*get)(void) = (size_t (*)(void))cached(&fp, CUBLASLT_SO, "cublasLtGetVersion");
	size_t ver = get ? get() : 0;
	v = ver >= 130000 && ver < 140000 ? 1 : -1;
	atomic_store(&g_ver_lt, v);
	if (v < 0) {
		static _Atomic int w;
		char buf[32];
		snprintf(buf, sizeof(buf), "%zu", ver);
		once_warn(&w,
			  "cuBLASLt version %s is not one kprof knows; its calls are not recorded",
			  buf);
	}
	return v > 0;
}

/* ---- GEMM recording ---- */

/* Begin a wrapped call: a record when it is the thread's outermost one, else NULL. */
static struct kp_hcall *gemm_begin(const char *name, int lt)
{
	if (t_depth++ > 0 || atomic_load_explicit(&g_off, memory_order_relaxed))
		return NULL;
	if (!(lt ? lt_known() : cublas_known()))
		return NULL;
	struct kp_hcall *r = new_rec();
	if (!r)
		return NULL;
	r->kind = HC_GEMM;
	r->name = name;
	r->ext = atomic_fetch_add_explicit(&g_ext, 1, memory_order_relaxed) + 1;
	t_cur = r;
	return r;
}

static void gemm_call_start(struct kp_hcall *r)
{
	kp_push_fn push = atomic_load_explicit(&g_push, memory_order_acquire);
	if (push)
		push(r->ext);
	r->start_ns = now_ns();
}

static void gemm_end(struct kp_hcall *r, int status)
{
	t_depth--;
	if (!r)
		return;
	t_cur = NULL;
	r->end_ns = now_ns();
	kp_pop_fn pop = atomic_load_explicit(&g_pop, memory_order_acquire);
	if (pop && atomic_load_explicit(&g_push, memory_order_relaxed))
		pop();
	r->status = status;
	if (status != 0)
		r->flags |= HCF_FAILED;
}

static void gemm_shape(struct kp_hcall *r, cublasHandle_t h, int ta, int tb, int64_t m, int64_t n,
		       int64_t k, int64_t batch, int at, int bt, int ct, int compute,
		       const void *beta, int beta_size)
{
	if (!r)
		return;
	r->transa = ta, r->transb = tb;
	r->m = m, r->n = n, r->k = k, r->batch = batch;
	r->atype = at, r->btype = bt, r->ctype = r->dtype = ct;
	r->compute = compute;
	static _Atomic(void *) fp;
	cublasStatus_t (*pm)(cublasHandle_t, cublasPointerMode_t *) =
		(cublasStatus_t(*)(cublasHandle_t, cublasPointerMode_t *))
			cached(&fp, CUBLAS_SO, "cublasGetPointerMode_v2");
	cublasPointerMode_t mode;
	if (pm && beta && pm(h, &mode) == CUBLAS_STATUS_SUCCESS &&
	    mode == CUBLAS_POINTER_MODE_HOST) {
		r->flags |= HCF_BETA_KNOWN;
		if (ltshape_is_zero(beta, beta_size))
			r->flags |= HCF_BETA_ZERO;
	}
}

static int compute_scale_size(int compute)
{
	switch (compute) {
	case CUBLAS_COMPUTE_16F:
	case CUBLAS_COMPUTE_16F_PEDANTIC:
		return 2;
	case CUBLAS_COMPUTE_64F:
	case CUBLAS_COMPUTE_64F_PEDANTIC:
	case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT:
		return 8;
	default:
		return 4;
	}
}

static _Atomic int g_unresolved_warned;

static cublasStatus_t unresolved(const char *name)
{
	once_warn(&g_unresolved_warned,
		  "kprof-shim: cannot find the real %s; returning "
		  "CUBLAS_STATUS_NOT_INITIALIZED",
		  name);
	return CUBLAS_STATUS_NOT_INITIALIZED;
}

/*
 * The wrappers.  REAL(name, type) declares the cached pointer @real of the function's own type.
 */
/* clang-format off */
#define REAL(so, fn)                                                                            \
	static _Atomic(void *) slot_;                                                           \
	__typeof__(&fn) real = (__typeof__(&fn))cached(&slot_, so, #fn);                        \
	if (!real)                                                                              \
		return unresolved(#fn)
/* clang-format on */

/* cublasGemmEx and _64 */
#define GEMM_EX(fn, IT)                                                                            \
	API cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, IT m,  \
			      IT n, IT k, const void *alpha, const void *A, cudaDataType at,       \
			      IT lda, const void *B, cudaDataType bt, IT ldb, const void *beta,    \
			      void *C, cudaDataType ct, IT ldc, cublasComputeType_t cp,            \
			      cublasGemmAlgo_t al)                                                 \
	{                                                                                          \
		REAL(CUBLAS_SO, fn);                                                               \
		struct kp_hcall *r = gemm_begin(#fn, 0);                                           \
		gemm_shape(r, h, ta, tb, m, n, k, 1, at, bt, ct, cp, beta,                         \
			   compute_scale_size(cp));                                                \
		if (r)                                                                             \
			gemm_call_start(r);                                                        \
		cublasStatus_t st = real(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta,  \
					 C, ct, ldc, cp, al);                                      \
		gemm_end(r, st);                                                                   \
		return st;                                                                         \
	}
GEMM_EX(cublasGemmEx, int)
GEMM_EX(cublasGemmEx_64, int64_t)

#define GEMM_SB_EX(fn, IT)                                                                         \
	API cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, IT m,  \
			      IT n, IT k, const void *alpha, const void *A, cudaDataType at,       \
			      IT lda, long long sA, const void *B, cudaDataType bt, IT ldb,        \
			      long long sB, const void *beta, void *C, cudaDataType ct, IT ldc,    \
			      long long sC, IT batch, cublasComputeType_t cp, cublasGemmAlgo_t al) \
	{                                                                                          \
		REAL(CUBLAS_SO, fn);                                                               \
		struct kp_hcall *r = gemm_begin(#fn, 0);                                           \
		gemm_shape(r, h, ta, tb, m, n, k, batch, at, bt, ct, cp, beta,                     \
			   compute_scale_size(cp));                                                \
		if (r)                                                                             \
			gemm_call_start(r);                                                        \
		cublasStatus_t st = real(h, ta, tb, m, n, k, alpha, A, at, lda, sA, B, bt, ldb,    \
					 sB, beta, C, ct, ldc, sC, batch, cp, al);                 \
		gemm_end(r, st);                                                                   \
		return st;                                                                         \
	}
GEMM_SB_EX(cublasGemmStridedBatchedEx, int)
GEMM_SB_EX(cublasGemmStridedBatchedEx_64, int64_t)

#define GEMM_B_EX(fn, IT)                                                                          \
	API cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, IT m,  \
			      IT n, IT k, const void *alpha, const void *const A[],                \
			      cudaDataType at, IT lda, const void *const B[], cudaDataType bt,     \
			      IT ldb, const void *beta, void *const C[], cudaDataType ct, IT ldc,  \
			      IT batch, cublasComputeType_t cp, cublasGemmAlgo_t al)               \
	{                                                                                          \
		REAL(CUBLAS_SO, fn);                                                               \
		struct kp_hcall *r = gemm_begin(#fn, 0);                                           \
		gemm_shape(r, h, ta, tb, m, n, k, batch, at, bt, ct, cp, beta,                     \
			   compute_scale_size(cp));                                                \
		if (r)                                                                             \
			gemm_call_start(r);                                                        \
		cublasStatus_t st = real(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta,  \
					 C, ct, ldc, batch, cp, al);                               \
		gemm_end(r, st);                                                                   \
		return st;                                                                         \
	}
GEMM_B_EX(cublasGemmBatchedEx, int)
GEMM_B_EX(cublasGemmBatchedEx_64, int64_t)

/* typed: S (fp32, CUDA_R_32F = 0), D (fp64, 1), H (fp16, 2); compute types as cuBLAS's own */
#define GEMM_T(fn, IT, T, DT, CP)                                                                  \
	API cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, IT m,  \
			      IT n, IT k, const T *alpha, const T *A, IT lda, const T *B, IT ldb,  \
			      const T *beta, T *C, IT ldc)                                         \
	{                                                                                          \
		REAL(CUBLAS_SO, fn);                                                               \
		struct kp_hcall *r = gemm_begin(#fn, 0);                                           \
		gemm_shape(r, h, ta, tb, m, n, k, 1, DT, DT, DT, CP, beta, (int)sizeof(T));        \
		if (r)                                                                             \
			gemm_call_start(r);                                                        \
		cublasStatus_t st = real(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc); \
		gemm_end(r, st);                                                                   \
		return st;                                                                         \
	}
GEMM_T(cublasSgemm_v2, int, float, CUDA_R_32F, -1)
GEMM_T(cublasSgemm_v2_64, int64_t, float, CUDA_R_32F, -1)
GEMM_T(cublasDgemm_v2, int, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
GEMM_T(cublasDgemm_v2_64, int64_t, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
GEMM_T(cublasHgemm, int, kp_half, CUDA_R_16F, CUBLAS_COMPUTE_16F)
GEMM_T(cublasHgemm_64, int64_t, kp_half, CUDA_R_16F, CUBLAS_COMPUTE_16F)

#define GEMM_TSB(fn, IT, T, DT, CP)                                                                \
	API cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, IT m,  \
			      IT n, IT k, const T *alpha, const T *A, IT lda, long long sA,        \
			      const T *B, IT ldb, long long sB, const T *beta, T *C, IT ldc,       \
			      long long sC, IT batch)                                              \
	{                                                                                          \
		REAL(CUBLAS_SO, fn);                                                               \
		struct kp_hcall *r = gemm_begin(#fn, 0);                                           \
		gemm_shape(r, h, ta, tb, m, n, k, batch, DT, DT, DT, CP, beta, (int)sizeof(T));    \
		if (r)                                                                             \
			gemm_call_start(r);                                                        \
		cublasStatus_t st = real(h, ta, tb, m, n, k, alpha, A, lda, sA, B, ldb, sB, beta,  \
					 C, ldc, sC, batch);                                       \
		gemm_end(r, st);                                                                   \
		return st;                                                                         \
	}
GEMM_TSB(cublasSgemmStridedBatched, int, float, CUDA_R_32F, -1)
GEMM_TSB(cublasSgemmStridedBatched_64, int64_t, float, CUDA_R_32F, -1)
GEMM_TSB(cublasDgemmStridedBatched, int, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
GEMM_TSB(cublasDgemmStridedBatched_64, int64_t, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
GEMM_TSB(cublasHgemmStridedBatched, int, kp_half, CUDA_R_16F, CUBLAS_COMPUTE_16F)
GEMM_TSB(cublasHgemmStridedBatched_64, int64_t, kp_half, CUDA_R_16F, CUBLAS_COMPUTE_16F)

#define GEMM_TB(fn, IT, T, DT, CP)                                                                 \
	API cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, IT m,  \
			      IT n, IT k, const T *alpha, const T *const A[], IT lda,              \
			      const T *const B[], IT ldb, const T *beta, T *const C[], IT ldc,     \
			      IT batch)                                                            \
	{                                                                                          \
		REAL(CUBLAS_SO, fn);                                                               \
		struct kp_hcall *r = gemm_begin(#fn, 0);                                           \
		gemm_shape(r, h, ta, tb, m, n, k, batch, DT, DT, DT, CP, beta, (int)sizeof(T));    \
		if (r)                                                                             \
			gemm_call_start(r);                                                        \
		cublasStatus_t st = real(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,  \
					 batch);                                                   \
		gemm_end(r, st);                                                                   \
		return st;                                                                         \
	}
GEMM_TB(cublasSgemmBatched, int, float, CUDA_R_32F, -1)
GEMM_TB(cublasSgemmBatched_64, int64_t, float, CUDA_R_32F, -1)
GEMM_TB(cublasDgemmBatched, int, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
GEMM_TB(cublasDgemmBatched_64, int64_t, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
GEMM_TB(cublasHgemmBatched, int, kp_half, CUDA_R_16F, CUBLAS_COMPUTE_16F)
GEMM_TB(cublasHgemmBatched_64, int64_t, kp_half, CUDA_R_16F, CUBLAS_COMPUTE_16F)

/* ---- cuBLASLt (§1.5) ---- */

typedef cublasStatus_t (*desc_get_fn)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, void *,
				      size_t, size_t *);
typedef cublasStatus_t (*layout_get_fn)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t,
					void *, size_t, size_t *);

static void lt_read(struct kp_hcall *r, cublasLtMatmulDesc_t desc,
		    const cublasLtMatrixLayout_t l[4], const void *beta)
{
	static _Atomic(void *) fd, fl;
	desc_get_fn dg = (desc_get_fn)cached(&fd, CUBLASLT_SO, "cublasLtMatmulDescGetAttribute");
	layout_get_fn lg = (layout_get_fn)cached(&fl, CUBLASLT_SO,
						 "cublasLtMatrixLayoutGetAttribute");
	struct kp_lt_attrs a;
	memset(&a, 0, sizeof(a));
	a.compute = -1;
	a.bias_type = -1;
	a.scale_type = -1;
	size_t w;
	if (!dg || !lg)
		goto bad;
	if (dg(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &a.compute, sizeof(a.compute), &w) ||
	    dg(desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &a.scale_type, sizeof(a.scale_type), &w) ||
	    dg(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &a.pointer_mode, sizeof(a.pointer_mode),
	       &w) ||
	    dg(desc, CUBLASLT_MATMUL_DESC_TRANSA, &a.transa, sizeof(a.transa), &w) ||
	    dg(desc, CUBLASLT_MATMUL_DESC_TRANSB, &a.transb, sizeof(a.transb), &w) ||
	    dg(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &a.epilogue, sizeof(a.epilogue), &w))
		goto bad;
	if (a.epilogue & CUBLASLT_EPILOGUE_BIAS)
		dg(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &a.bias_type, sizeof(a.bias_type),
		   &w);
	for (int i = 0; i < 4; i++) {
		if (!l[i])
			continue;
		a.has[i] = 1;
		a.batch[i] = 1;
		if (lg(l[i], CUBLASLT_MATRIX_LAYOUT_TYPE, &a.type[i], sizeof(a.type[i]), &w) ||
		    lg(l[i], CUBLASLT_MATRIX_LAYOUT_ROWS, &a.rows[i], sizeof(a.rows[i]), &w) ||
		    lg(l[i], CUBLASLT_MATRIX_LAYOUT_COLS, &a.cols[i], sizeof(a.cols[i]), &w))
			goto bad;
		if (i == LT_D || (i == LT_C && !l[LT_D]))
			lg(l[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &a.batch[i],
			   sizeof(a.batch[i]), &w);
	}
	a.beta = beta;
	a.beta_readable = 1;
	if (ltshape_decode(&a, r) == 0)
		return;
bad:
	r->m = r->n = r->k = -1;
}

API cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void *alpha,
				  const void *A, cublasLtMatrixLayout_t Ad, const void *B,
				  cublasLtMatrixLayout_t Bd, const void *beta, const void *C,
				  cublasLtMatrixLayout_t Cd, void *D, cublasLtMatrixLayout_t Dd,
				  const cublasLtMatmulAlgo_t *algo, void *ws, size_t wss,
				  cudaStream_t stream)
{
	REAL(CUBLASLT_SO, cublasLtMatmul);
	struct kp_hcall *r = gemm_begin("cublasLtMatmul", 1);
	if (r) {
		const cublasLtMatrixLayout_t l[4] = { Ad, Bd, Cd, Dd };
		lt_read(r, desc, l, beta);
		gemm_call_start(r);
	}
	cublasStatus_t st = real(h, desc, alpha, A, Ad, B, Bd, beta, C, Cd, D, Dd, algo, ws, wss,
				 stream);
	gemm_end(r, st);
	return st;
}

/* ---- cuDNN legacy convolutions (doc/capture-any.md §1.7) ---- */

#define CUDNN_SO "libcudnn.so.9"
static _Atomic int g_ver_cudnn;

static int cudnn_known(void)
{
	int v = atomic_load_explicit(&g_ver_cudnn, memory_order_relaxed);
	if (v)
		return v > 0;
	static _Atomic(void *) fp;
	size_t (*get)(void) = (size_t (*)(void))cached(&fp, CUDNN_SO, "cudnnGetVersion");
	size_t ver = get ? get() : 0;
	v = ver >= 90000 && ver < 100000 ? 1 : -1;
	atomic_store(&g_ver_cudnn, v);
	if (v < 0) {
		static _Atomic int w;
		char buf[32];
		snprintf(buf, sizeof(buf), "%zu", ver);
		once_warn(&w, "cuDNN version %s is not one kprof knows; its calls are not recorded",
			  buf);
	}
	return v > 0;
}

static cudnnStatus_t cudnn_unresolved(const char *name)
{
	once_warn(&g_unresolved_warned,
		  "kprof-shim: cannot find the real %s; returning "
		  "CUDNN_STATUS_NOT_INITIALIZED",
		  name);
	return CUDNN_STATUS_NOT_INITIALIZED;
}

static int tensor_dims(cudnnTensorDescriptor_t d, int32_t *type, int32_t *dims)
{
	static _Atomic(void *) fp;
	cudnnStatus_t (*get)(const cudnnTensorDescriptor_t, int, cudnnDataType_t *, int *, int *,
			     int *) = (cudnnStatus_t(*)(const cudnnTensorDescriptor_t, int,
							cudnnDataType_t *, int *, int *,
							int *))cached(&fp, CUDNN_SO,
								      "cudnnGetTensorNdDescriptor");
	cudnnDataType_t t;
	int nd = 0, st[8];
	if (!get || get(d, 5, &t, &nd, dims, st) != CUDNN_STATUS_SUCCESS)
		return -1;
	*type = (int32_t)t;
	return nd;
}

static int filter_dims(cudnnFilterDescriptor_t d, int32_t *type, int32_t *dims)
{
	static _Atomic(void *) fp;
	cudnnStatus_t (*get)(const cudnnFilterDescriptor_t, int, cudnnDataType_t *,
			     cudnnTensorFormat_t *, int *, int *) =
		(cudnnStatus_t(*)(const cudnnFilterDescriptor_t, int, cudnnDataType_t *,
				  cudnnTensorFormat_t *, int *,
				  int *))cached(&fp, CUDNN_SO, "cudnnGetFilterNdDescriptor");
	cudnnDataType_t t;
	cudnnTensorFormat_t f;
	int nd = 0;
	if (!get || get(d, 5, &t, &f, &nd, dims) != CUDNN_STATUS_SUCCESS)
		return -1;
	*type = (int32_t)t;
	return nd;
}

/* Read the descriptors of one convolution call into @r (conv_nd 0 when they do not fit). */
static void conv_read(struct kp_hcall *r, int op, cudnnTensorDescriptor_t x,
		      cudnnFilterDescriptor_t w, cudnnTensorDescriptor_t y,
		      cudnnConvolutionDescriptor_t cd)
{
	static _Atomic(void *) fc, fg;
	cudnnStatus_t (*getc)(const cudnnConvolutionDescriptor_t, int, int *, int *, int *, int *,
			      cudnnConvolutionMode_t *, cudnnDataType_t *) =
		(cudnnStatus_t(*)(const cudnnConvolutionDescriptor_t, int, int *, int *, int *,
				  int *, cudnnConvolutionMode_t *,
				  cudnnDataType_t *))cached(&fc, CUDNN_SO,
							    "cudnnGetConvolutionNdDescriptor");
	cudnnStatus_t (*getg)(cudnnConvolutionDescriptor_t,
			      int *) = (cudnnStatus_t(*)(cudnnConvolutionDescriptor_t, int *))
		cached(&fg, CUDNN_SO, "cudnnGetConvolutionGroupCount");
	r->conv_op = op;
	r->conv_nd = 0;
	int nx = tensor_dims(x, &r->atype, r->xd), nw = filter_dims(w, &r->btype, r->wd);
	int ny = tensor_dims(y, &r->dtype, r->yd);
	int len = 0, pad[3], str[3], dil[3], g = 1;
	cudnnConvolutionMode_t mode;
	cudnnDataType_t ct;
	if (nx < 3 || nx > 5 || nw != nx || ny != nx || !getc || !getg ||
	    getc(cd, 3, &len, pad, str, dil, &mode, &ct) != CUDNN_STATUS_SUCCESS || len != nx - 2 ||
	    getg(cd, &g) != CUDNN_STATUS_SUCCESS)
		return;
	r->compute = (int32_t)ct;
	r->groups = g;
	for (int i = 0; i < len; i++)
		r->cpad[i] = (int16_t)pad[i], r->cstride[i] = (int16_t)str[i],
		r->cdil[i] = (int16_t)dil[i];
	r->conv_nd = len;
}

static struct kp_hcall *conv_begin(const char *name)
{
	if (t_depth++ > 0 || atomic_load_explicit(&g_off, memory_order_relaxed) || !cudnn_known())
		return NULL;
	struct kp_hcall *r = new_rec();
	if (!r)
		return NULL;
	r->kind = HC_CONV;
	r->name = name;
	r->ext = atomic_fetch_add_explicit(&g_ext, 1, memory_order_relaxed) + 1;
	t_cur = r;
	return r;
}

/* clang-format off */
#define REAL_CUDNN(fn)                                                                          \
	static _Atomic(void *) slot_;                                                           \
	__typeof__(&fn) real = (__typeof__(&fn))cached(&slot_, CUDNN_SO, #fn);                  \
	if (!real)                                                                              \
		return cudnn_unresolved(#fn)
/* clang-format on */

API cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *alpha,
					  const cudnnTensorDescriptor_t xd, const void *x,
					  const cudnnFilterDescriptor_t wd, const void *w,
					  const cudnnConvolutionDescriptor_t cd,
					  cudnnConvolutionFwdAlgo_t algo, void *ws, size_t wss,
					  const void *beta, const cudnnTensorDescriptor_t yd,
					  void *y)
{
	REAL_CUDNN(cudnnConvolutionForward);
	struct kp_hcall *r = conv_begin("cudnnConvolutionForward");
	if (r) {
		conv_read(r, CONV_FWD, xd, wd, yd, cd);
		gemm_call_start(r);
	}
	cudnnStatus_t st = real(h, alpha, xd, x, wd, w, cd, algo, ws, wss, beta, yd, y);
	gemm_end(r, st);
	return st;
}

API cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t h, const void *alpha,
					       const cudnnFilterDescriptor_t wd, const void *w,
					       const cudnnTensorDescriptor_t dyd, const void *dy,
					       const cudnnConvolutionDescriptor_t cd,
					       cudnnConvolutionBwdDataAlgo_t algo, void *ws,
					       size_t wss, const void *beta,
					       const cudnnTensorDescriptor_t dxd, void *dx)
{
	REAL_CUDNN(cudnnConvolutionBackwardData);
	struct kp_hcall *r = conv_begin("cudnnConvolutionBackwardData");
	if (r) {
		conv_read(r, CONV_BWD_DATA, dxd, wd, dyd, cd);
		gemm_call_start(r);
	}
	cudnnStatus_t st = real(h, alpha, wd, w, dyd, dy, cd, algo, ws, wss, beta, dxd, dx);
	gemm_end(r, st);
	return st;
}

API cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t h, const void *alpha,
						 const cudnnTensorDescriptor_t xd, const void *x,
						 const cudnnTensorDescriptor_t dyd, const void *dy,
						 const cudnnConvolutionDescriptor_t cd,
						 cudnnConvolutionBwdFilterAlgo_t algo, void *ws,
						 size_t wss, const void *beta,
						 const cudnnFilterDescriptor_t dwd, void *dw)
{
	REAL_CUDNN(cudnnConvolutionBackwardFilter);
	struct kp_hcall *r = conv_begin("cudnnConvolutionBackwardFilter");
	if (r) {
		conv_read(r, CONV_BWD_FILTER, xd, dwd, dyd, cd);
		gemm_call_start(r);
	}
	cudnnStatus_t st = real(h, alpha, xd, x, dyd, dy, cd, algo, ws, wss, beta, dwd, dw);
	gemm_end(r, st);
	return st;
}

/*
 * ---- cuDNN graph API (doc/capture-any.md §1.9) ----
 * Descriptor creation, attributes, heuristics results and finalization are recorded (cudnnrec.c,
 * under one lock: graphs are built once and cached by the frameworks); an execution plan is
 * decoded when it is finalized, so that cudnnBackendExecute costs a lookup.  Calls cuDNN makes
 * into these entry points itself (depth > 0) are not recorded.
 */

static pthread_mutex_t g_cr_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cr_store g_cr;
static int g_cr_ready;

static int graph_on(void)
{
	return t_depth == 0 && !atomic_load_explicit(&g_off, memory_order_relaxed) && cudnn_known();
}

static struct cr_store *cr_lock(void)
{
	pthread_mutex_lock(&g_cr_lock);
	if (!g_cr_ready) {
		cr_init(&g_cr);
		g_cr_ready = 1;
	}
	return &g_cr;
}

API cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
					       cudnnBackendDescriptor_t *desc)
{
	REAL_CUDNN(cudnnBackendCreateDescriptor);
	int on = graph_on();
	t_depth++;
	cudnnStatus_t st = real(type, desc);
	t_depth--;
	if (on && st == CUDNN_STATUS_SUCCESS && desc) {
		cr_create(cr_lock(), *desc, (int)type);
		pthread_mutex_unlock(&g_cr_lock);
	}
	return st;
}

API cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t desc)
{
	REAL_CUDNN(cudnnBackendDestroyDescriptor);
	if (graph_on() && g_cr_ready) {
		cr_destroy(cr_lock(), desc);
		pthread_mutex_unlock(&g_cr_lock);
	}
	t_depth++;
	cudnnStatus_t st = real(desc);
	t_depth--;
	return st;
}

API cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t desc,
					   cudnnBackendAttributeName_t name,
					   cudnnBackendAttributeType_t type, int64_t count,
					   const void *elems)
{
	REAL_CUDNN(cudnnBackendSetAttribute);
	int on = graph_on();
	t_depth++;
	cudnnStatus_t st = real(desc, name, type, count, elems);
	t_depth--;
	if (on && st == CUDNN_STATUS_SUCCESS) {
		cr_set(cr_lock(), desc, (int)name, (int)type, count, elems);
		pthread_mutex_unlock(&g_cr_lock);
	}
	return st;
}

API cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const desc,
					   cudnnBackendAttributeName_t name,
					   cudnnBackendAttributeType_t type, int64_t requested,
					   int64_t *count, void *elems)
{
	REAL_CUDNN(cudnnBackendGetAttribute);
	int on = graph_on();
	t_depth++;
	cudnnStatus_t st = real(desc, name, type, requested, count, elems);
	t_depth--;
	if (on && st == CUDNN_STATUS_SUCCESS && count && elems &&
	    name == CUDNN_ATTR_ENGINEHEUR_RESULTS) {
		cr_got(cr_lock(), desc, (int)name, (int)type,
		       *count < requested ? *count : requested, elems);
		pthread_mutex_unlock(&g_cr_lock);
	}
	return st;
}

API cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t desc)
{
	REAL_CUDNN(cudnnBackendFinalize);
	int on = graph_on();
	t_depth++;
	cudnnStatus_t st = real(desc);
	t_depth--;
	if (on && st == CUDNN_STATUS_SUCCESS) {
		cr_finalize(cr_lock(), desc);
		pthread_mutex_unlock(&g_cr_lock);
	}
	return st;
}

API cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t executionPlan,
				      cudnnBackendDescriptor_t variantPack)
{
	REAL_CUDNN(cudnnBackendExecute);
	struct kp_hcall op, *r = NULL;
	if (graph_on() && g_cr_ready) {
		memset(&op, 0, sizeof(op));
		int known = cr_plan(cr_lock(), executionPlan, &op) == 0;
		pthread_mutex_unlock(&g_cr_lock);
		if (known && (r = conv_begin("cudnnBackendExecute")) != NULL) {
			r->kind = op.kind;
			r->conv_op = op.conv_op, r->conv_nd = op.conv_nd, r->groups = op.groups;
			memcpy(r->xd, op.xd, sizeof(r->xd));
			memcpy(r->wd, op.wd, sizeof(r->wd));
			memcpy(r->yd, op.yd, sizeof(r->yd));
			memcpy(r->cpad, op.cpad, sizeof(r->cpad));
			memcpy(r->cstride, op.cstride, sizeof(r->cstride));
			memcpy(r->cdil, op.cdil, sizeof(r->cdil));
			r->atype = op.atype, r->btype = op.btype, r->dtype = op.dtype;
			r->compute = op.compute;
			r->sdpa_flags = op.sdpa_flags;
			memcpy(r->sd, op.sd, sizeof(r->sd));
			gemm_call_start(r);
		} else if (known) {
			t_depth--; /* conv_begin counted the call */
		}
	}
	if (!r)
		t_depth++;
	cudnnStatus_t st = real(handle, executionPlan, variantPack);
	gemm_end(r, st);
	return st;
}

/* ---- device allocations: the program's cudaMalloc (doc/memory.md §6.2) ---- */

/*
 * cudaMalloc, when a library the program loaded dynamically calls it (PyTorch's caching
 * allocator does): with --memory its block is recorded, so that kprof can tell the program's
 * allocations from those that cuBLAS and cuDNN make through their own static runtime, which
 * CUPTI records alike (capture/record/cmem.c).
 */
API cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	static _Atomic(void *) slot; /* any major version's runtime: the call is the same */
	cudaError_t (*real)(void **, size_t) =
		(cudaError_t(*)(void **, size_t))cached(&slot, "libcudart.so", "cudaMalloc");
	if (!real)
		return cudaErrorInitializationError; /* unreachable: a caller links a runtime */
	if (!g_memory) /* also under KPROF_SHIM=off: the allocations are not a library's calls */
		return real(devPtr, size);
	uint64_t t0 = now_ns();
	cudaError_t st = real(devPtr, size);
	struct kp_hcall *r = st == cudaSuccess && devPtr ? new_rec() : NULL;
	if (r) {
		r->kind = HC_DEVALLOC;
		r->name = "cudaMalloc";
		r->m = (int64_t)size;
		r->k = (int64_t)(uintptr_t)*devPtr;
		r->start_ns = t0;
		r->end_ns = now_ns();
	}
	return st;
}

/* ---- NVTX (§2): kprof-shim.so is also NVTX_INJECTION64_PATH ---- */

/*
 * NVTX ranges: a PyTorch program under the torch hook opens one per op (thousands a step), so
 * a range is a compact record (56 bytes, not a 250-byte kp_hcall) and its message text is
 * bump-allocated per thread; kprof_shim_drain() hands them out as kp_hcalls.  This halves
 * the cost of a push/pop pair and the memory the traced process grows by (bench/RESULTS.md).
 */
struct nrange {
	uint64_t start_ns, end_ns, ext;
	const char *name, *domain;
	uint32_t pid, tid;
	uint16_t kind, open;
};

#define NBLOCK_RECS 16384
struct nblock {
	struct nblock *next;
	_Atomic uint32_t n; /* records published in v[] */
	struct nrange v[NBLOCK_RECS];
};

static struct nblock *g_nblocks; /* under g_lock */
static __thread struct nblock *t_nblock;

#define TEXT_CHUNK (256 * 1024)
static __thread char *t_text;
static __thread size_t t_text_left;

/* A copy of @s that lives until the process ends; NULL on out-of-memory. */
static const char *text_copy(const char *s)
{
	size_t n = strlen(s) + 1;
	if (n > TEXT_CHUNK / 8)
		return strdup(s);
	if (n > t_text_left) {
		t_text = malloc(TEXT_CHUNK);
		t_text_left = t_text ? TEXT_CHUNK : 0;
		if (!t_text)
			return NULL;
	}
	char *p = t_text;
	memcpy(p, s, n);
	t_text += n, t_text_left -= n;
	return p;
}

/*
 * A new range of @kind, @name (lives until exit), @domain, started now: every field is set
 * before the record is published, since the drain at exit may run while this thread pushes.
 */
static struct nrange *new_range(int kind, const char *name, const char *domain)
{
	struct nblock *b = t_nblock;
	if (!b || atomic_load_explicit(&b->n, memory_order_relaxed) == NBLOCK_RECS) {
		b = malloc(sizeof(*b));
		if (!b)
			return NULL;
		atomic_init(&b->n, 0);
		pthread_mutex_lock(&g_lock);
		b->next = g_nblocks;
		g_nblocks = b;
		pthread_mutex_unlock(&g_lock);
		t_nblock = b;
	}
	if (!t_tid)
		t_tid = (uint32_t)syscall(SYS_gettid);
	uint32_t i = atomic_load_explicit(&b->n, memory_order_relaxed);
	struct nrange *r = &b->v[i];
	r->pid = g_pid ? g_pid : (uint32_t)getpid();
	r->tid = t_tid;
	r->kind = (uint16_t)kind;
	r->open = 1;
	r->name = name;
	r->domain = domain;
	r->ext = atomic_fetch_add_explicit(&g_ext, 1, memory_order_relaxed) + 1;
	r->end_ns = 0;
	r->start_ns = now_ns();
	/* published whole; its owner sets only end_ns and open later (range_close) */
	atomic_store_explicit(&b->n, i + 1, memory_order_release);
	return r;
}

static uint64_t drain_ranges(kp_drain_fn fn, void *arg)
{
	uint64_t n = 0;
	pthread_mutex_lock(&g_lock);
	for (struct nblock *b = g_nblocks; b; b = b->next) {
		uint32_t cnt = atomic_load_explicit(&b->n, memory_order_acquire);
		for (uint32_t i = 0; i < cnt; i++, n++) {
			const struct nrange *r = &b->v[i];
			struct kp_hcall c;
			memset(&c, 0, sizeof(c));
			c.kind = r->kind;
			/* its owner may be closing it now (end_ns, then open, plain stores): a
			 * range with no end yet is open whatever open says */
			c.flags = r->open || !r->end_ns ? HCF_OPEN : 0;
			c.start_ns = r->start_ns, c.end_ns = r->end_ns;
			c.pid = r->pid, c.tid = r->tid;
			c.ext = r->ext;
			c.name = r->name, c.domain = r->domain;
			c.compute = c.bias_type = -1;
			fn(&c, arg);
		}
	}
	pthread_mutex_unlock(&g_lock);
	return n;
}

#define NVTX_STACK 256
static __thread struct nrange *t_nvtx[NVTX_STACK];
static __thread int t_nvtx_depth; /* may exceed NVTX_STACK: deeper ranges are not recorded */

/*
 * The External id of what the calling thread is inside now: its library call, else its
 * innermost NVTX push range; 0 when neither.  kprof-inject.so asks in CUPTI's graph-node
 * callbacks, which run inside the call that creates the node (stream capture, §3.3).
 */
uint64_t kprof_shim_context(void)
{
	if (t_cur)
		return t_cur->ext;
	for (int d = (t_nvtx_depth < NVTX_STACK ? t_nvtx_depth : NVTX_STACK) - 1; d >= 0; d--)
		if (t_nvtx[d])
			return t_nvtx[d]->ext;
	return 0;
}

struct domain {
	char *name;
};

static const char *msg_text(const nvtxEventAttributes_t *a)
{
	if (!a)
		return NULL;
	if (a->messageType == NVTX_MESSAGE_TYPE_ASCII)
		return a->message.ascii;
	if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED && a->message.registered)
		return (const char *)a->message.registered; /* our handles are the strings */
	return NULL;
}

static struct nrange *range_open(int kind, const char *msg, const char *domain)
{
	if (atomic_load_explicit(&g_off, memory_order_relaxed))
		return NULL;
	const char *name = msg && *msg ? text_copy(msg) : "";
	return new_range(kind, name ? name : "", domain);
}

static void range_close(struct nrange *r)
{
	if (r) {
		r->end_ns = now_ns();
		r->open = 0;
	}
}

static int push_msg(const char *msg, const char *domain)
{
	int d = t_nvtx_depth++;
	struct nrange *r = range_open(HC_NVTX_PUSH, msg, domain);
	if (d < NVTX_STACK)
		t_nvtx[d] = r;
	return d;
}

static int pop_range(void)
{
	if (t_nvtx_depth <= 0)
		return -2; /* NVTX: no range open */
	int d = --t_nvtx_depth;
	if (d < NVTX_STACK)
		range_close(t_nvtx[d]);
	return d;
}

static int NVTX_API x_push_a(const char *msg)
{
	return push_msg(msg, NULL);
}
static int NVTX_API x_push_ex(const nvtxEventAttributes_t *a)
{
	return push_msg(msg_text(a), NULL);
}
static int NVTX_API x_pop(void)
{
	return pop_range();
}

/* kprof's PyTorch op observer's ranges: NVTX push/pop without NVTX's loader (hcall.h) */
int kprof_shim_range_push(const char *msg)
{
	return push_msg(msg, NULL);
}
int kprof_shim_range_pop(void)
{
	return pop_range();
}
static nvtxRangeId_t NVTX_API x_start_a(const char *msg)
{
	return (nvtxRangeId_t)(uintptr_t)range_open(HC_NVTX_START, msg, NULL);
}
static nvtxRangeId_t NVTX_API x_start_ex(const nvtxEventAttributes_t *a)
{
	return (nvtxRangeId_t)(uintptr_t)range_open(HC_NVTX_START, msg_text(a), NULL);
}
static void NVTX_API x_end(nvtxRangeId_t id)
{
	range_close((struct nrange *)(uintptr_t)id);
}

static const char *dom_name(nvtxDomainHandle_t d)
{
	return d ? ((struct domain *)d)->name : NULL;
}
static int NVTX_API x_dpush(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	return push_msg(msg_text(a), dom_name(d));
}
static int NVTX_API x_dpop(nvtxDomainHandle_t d)
{
	(void)d;
	return pop_range();
}
static nvtxRangeId_t NVTX_API x_dstart(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	return (nvtxRangeId_t)(uintptr_t)range_open(HC_NVTX_START, msg_text(a), dom_name(d));
}
static void NVTX_API x_dend(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	(void)d;
	range_close((struct nrange *)(uintptr_t)id);
}
static nvtxDomainHandle_t NVTX_API x_dcreate(const char *name)
{
	struct domain *d = calloc(1, sizeof(*d));
	if (d && !(d->name = strdup(name ? name : ""))) {
		free(d);
		d = NULL;
	}
	return (nvtxDomainHandle_t)d;
}
static void NVTX_API x_ddestroy(nvtxDomainHandle_t d)
{
	(void)d; /* kept: records still point at the name */
}
static nvtxStringHandle_t NVTX_API x_dstring(nvtxDomainHandle_t d, const char *s)
{
	(void)d;
	return (nvtxStringHandle_t)strdup(s ? s : "");
}

static void set_slot(NvtxFunctionTable t, unsigned size, unsigned id, NvtxFunctionPointer f)
{
	if (t && id < size && t[id])
		*t[id] = f;
}

API int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);

/*
 * Called once per NVTX client object (libtorch_cuda, the application, ...).  Only range, and
 * domain/string-registration slots are filled; the naming slots stay unset, which keeps the
 * crashing path of NVIDIA/NVTX#125 out of reach (§2.3).
 */
int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	const char *e = getenv("KPROF_NVTX");
	if ((e && !strcmp(e, "off")) || !get)
		return 0;
	const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
	if (!cb || !cb->GetModuleFunctionTable)
		return 0;
	NvtxFunctionTable core = NULL, core2 = NULL;
	unsigned n1 = 0, n2 = 0;
	if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &n1))
		return 0;
	if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &n2))
		core2 = NULL, n2 = 0;
	set_slot(core, n1, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)x_push_a);
	set_slot(core, n1, NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)x_push_ex);
	set_slot(core, n1, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)x_pop);
	set_slot(core, n1, NVTX_CBID_CORE_RangeStartA, (NvtxFunctionPointer)x_start_a);
	set_slot(core, n1, NVTX_CBID_CORE_RangeStartEx, (NvtxFunctionPointer)x_start_ex);
	set_slot(core, n1, NVTX_CBID_CORE_RangeEnd, (NvtxFunctionPointer)x_end);
	set_slot(core2, n2, NVTX_CBID_CORE2_DomainRangePushEx, (NvtxFunctionPointer)x_dpush);
	set_slot(core2, n2, NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)x_dpop);
	set_slot(core2, n2, NVTX_CBID_CORE2_DomainRangeStartEx, (NvtxFunctionPointer)x_dstart);
	set_slot(core2, n2, NVTX_CBID_CORE2_DomainRangeEnd, (NvtxFunctionPointer)x_dend);
	set_slot(core2, n2, NVTX_CBID_CORE2_DomainCreateA, (NvtxFunctionPointer)x_dcreate);
	set_slot(core2, n2, NVTX_CBID_CORE2_DomainDestroy, (NvtxFunctionPointer)x_ddestroy);
	set_slot(core2, n2, NVTX_CBID_CORE2_DomainRegisterStringA, (NvtxFunctionPointer)x_dstring);
	return 1;
}

#endif /* KPROF_SHIM */
