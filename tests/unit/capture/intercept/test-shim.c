/*
 * test-shim.c — kprof-shim.so without a GPU, against a fake libcublas.so.13 opened
 * RTLD_LOCAL as PyTorch's wheel copy is: the wrapper finds the real function through the
 * loaded soname (RTLD_NEXT cannot see it), passes arguments and the status code through,
 * records the call, and passes an unknown cuBLAS major version through unrecorded.  Likewise
 * cuDNN's graph API against a fake libcudnn.so.9: cudnn-frontend's causal SDPA graph built
 * through the wrapped entry points executes as one attention call.  A fake libcudart.so.13:
 * the program's cudaMalloc recorded with --memory.  NVTX ranges through nvtx3's loader.
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "intercept/hcall.h"
#include "workloads/cudnn-graph.h"
#ifdef KPROF_TEST_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

typedef int (*gemm_fn)(void *h, int ta, int tb, int m, int n, int k, const void *alpha,
		       const void *A, int at, int lda, const void *B, int bt, int ldb,
		       const void *beta, void *C, int ct, int ldc, int compute, int algo);

static char build_dir[PATH_MAX];

/* $(O) of this test binary ($(O)/tests/capture/intercept/test-shim): before its last "/tests/" */
static int find_build(void)
{
	ssize_t n = readlink("/proc/self/exe", build_dir, sizeof(build_dir) - 1);
	if (n <= 0)
		return -1;
	build_dir[n] = '\0';
	char *s = NULL;
	for (char *p = strstr(build_dir, "/tests/"); p; p = strstr(p + 1, "/tests/"))
		s = p;
	if (!s)
		return -1;
	*s = '\0';
	return 0;
}

static void *open_in(const char *rel, int flags)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/%s", build_dir, rel);
	return dlopen(p, flags);
}

static int ncalls;
static struct kp_hcall last;

static void take(const struct kp_hcall *c, void *arg)
{
	(void)arg;
	ncalls++;
	last = *c;
}

/* In a child: preload-like shim (global), fake cuBLAS (local), one call; exit code = checks. */
static int one_call(const char *major)
{
	if (major)
		setenv("FAKE_CUBLAS_MAJOR", major, 1);
	void *shim = open_in("kprof-shim.so", RTLD_NOW | RTLD_GLOBAL);
	void *fake = open_in("tests/fake/libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
	if (!shim || !fake)
		return 10;
	gemm_fn g = (gemm_fn)dlsym(shim, "cublasGemmEx");
	kp_shim_drain_fn drain = (kp_shim_drain_fn)dlsym(shim, "kprof_shim_drain");
	int *calls = dlsym(fake, "fake_calls"), *fk = dlsym(fake, "fake_k");
	if (!g || !drain || !calls || !fk)
		return 11;
	float one = 1.f, zero = 0.f;
	int st = g(NULL, 1, 0, 128, 256, 512, &one, NULL, 14, 512, NULL, 14, 512, &zero, NULL, 14,
		   128, 68, -1);
	if (st != 7 || *calls != 1 || *fk != 512)
		return 12; /* status and arguments pass through */
	drain(take, NULL);
	if (major)
		return ncalls == 0 ? 0 : 13; /* unknown version: not recorded */
	if (ncalls != 1 || last.kind != HC_GEMM || strcmp(last.name, "cublasGemmEx") ||
	    last.m != 128 || last.n != 256 || last.k != 512 || last.batch != 1 ||
	    last.atype != 14 || last.compute != 68 || last.transa != 1 ||
	    !(last.flags & HCF_BETA_ZERO) || !(last.flags & HCF_FAILED) || last.status != 7 ||
	    last.end_ns < last.start_ns || last.ext == 0)
		return 14;
	return 0;
}

/* ---- NVTX ranges: the shim as NVTX_INJECTION64_PATH ---- */

#ifdef KPROF_TEST_NVTX
static struct kp_hcall ranges[20100];
static size_t nranges;

static void take_range(const struct kp_hcall *c, void *arg)
{
	(void)arg;
	if (nranges < sizeof(ranges) / sizeof(ranges[0]))
		ranges[nranges++] = *c;
}

static const struct kp_hcall *range_named(const char *name)
{
	for (size_t i = 0; i < nranges; i++)
		if (!strcmp(ranges[i].name, name))
			return &ranges[i];
	return NULL;
}

/* In a child: nested push/pop, a range of kprof's op observer between them (kprof_shim_range_
 * push/pop, found as the observer finds them: capture/intercept/python/kprof_torch_obs.cpp), a
 * start/end range, one never closed, a long message, 20,000 more (two record blocks): each
 * drained as a kp_hcall with its kind, name, times and flag. */
static int nvtx_ranges(void)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/kprof-shim.so", build_dir);
	setenv("NVTX_INJECTION64_PATH", p, 1);
	unsetenv("KPROF_NVTX");
	void *shim = open_in("kprof-shim.so", RTLD_NOW | RTLD_GLOBAL);
	kp_shim_drain_fn drain = shim ? (kp_shim_drain_fn)dlsym(shim, "kprof_shim_drain") : NULL;
	int (*opush)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT,
								  "kprof_shim_range_push");
	int (*opop)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "kprof_shim_range_pop");
	if (!drain || !opush || !opop)
		return 20;
	static char big[40000];
	memset(big, 'x', sizeof(big) - 1);
	const char *obs = "aten::mm, seq = 2, sizes = [[2, 3], [3, 4]], dtypes = [float, float]";
	nvtxRangePushA("outer");
	if (opush(obs) != 1)
		return 27; /* the depth it opened at, as nvtxRangePushA says */
	nvtxRangePushA("inner, seq = 7, op_id = 3, sizes = [[2, 3]]");
	nvtxRangePop();
	if (opop() != 1)
		return 27;
	nvtxRangePop();
	nvtxRangeId_t id = nvtxRangeStartA("async");
	nvtxRangeEnd(id);
	nvtxRangePushA(big);
	nvtxRangePop();
	for (int i = 0; i < 20000; i++) {
		nvtxRangePushA(i % 2 ? "odd" : "even");
		nvtxRangePop();
	}
	nvtxRangePushA("never closed");
	if (drain(take_range, NULL) != 20006 || nranges != 20006)
		return 21;
	const struct kp_hcall *ob = range_named(obs);
	if (!ob || ob->kind != HC_NVTX_PUSH || ob->flags)
		return 28;
	const struct kp_hcall *o = range_named("outer"),
			      *in = range_named("inner, seq = 7, op_id = 3, sizes = [[2, 3]]"),
			      *a = range_named("async"), *b = range_named(big),
			      *nc = range_named("never closed");
	if (!o || !in || !a || !b || !nc)
		return 22;
	if (o->kind != HC_NVTX_PUSH || a->kind != HC_NVTX_START || nc->kind != HC_NVTX_PUSH)
		return 23;
	if (o->flags || in->flags || a->flags || !(nc->flags & HCF_OPEN))
		return 24;
	if (!(o->start_ns <= in->start_ns && in->end_ns <= o->end_ns && in->start_ns <= in->end_ns))
		return 25; /* inner nests in outer */
	if (!(o->start_ns <= ob->start_ns && ob->start_ns <= in->start_ns &&
	      in->end_ns <= ob->end_ns && ob->end_ns <= o->end_ns))
		return 29; /* the observer's range between them */
	if (!o->ext || o->ext == in->ext || o->pid != (uint32_t)getpid() || !o->tid ||
	    o->compute != -1 || o->m != 0)
		return 26;
	return 0;
}

/* ---- the texts of ranges: each range's own copy (shim.c text_copy) ---- */

#define TEXTS 300000
static unsigned char seen_m[TEXTS];
static const char *add_name[2];
static int n_add, n_mul, n_bad;

static void take_text(const struct kp_hcall *c, void *arg)
{
	(void)arg;
	char *end;
	if (!strcmp(c->name, "aten::add, seq = 1")) {
		if (n_add < 2)
			add_name[n_add] = c->name;
		n_add++;
	} else if (!strcmp(c->name, "aten::mul, seq = 2")) {
		n_mul++;
	} else if (c->name[0] == 'm') {
		long i = strtol(c->name + 1, &end, 10);
		if (*end || i < 0 || i >= TEXTS || seen_m[i] >= 2)
			n_bad++;
		else
			seen_m[i]++;
	} else {
		n_bad++;
	}
}

/*
 * In a child: ranges pushed from one buffer that the caller rewrites between pushes (as
 * kprof's op observer does, capture/intercept/python/kprof_torch_obs.cpp) keep each its own
 * text, whatever the buffer holds at the drain; equal texts pushed twice come back twice.
 */
static int nvtx_texts(void)
{
	void *shim = open_in("kprof-shim.so", RTLD_NOW | RTLD_GLOBAL);
	kp_shim_drain_fn drain = shim ? (kp_shim_drain_fn)dlsym(shim, "kprof_shim_drain") : NULL;
	int (*opush)(const char *) = shim ? (int (*)(const char *))dlsym(shim,
								      "kprof_shim_range_push") : NULL;
	int (*opop)(void) = shim ? (int (*)(void))dlsym(shim, "kprof_shim_range_pop") : NULL;
	if (!drain || !opush || !opop)
		return 40;
	char buf[64], other[64];
	strcpy(buf, "aten::add, seq = 1");
	opush(buf);
	opop();
	strcpy(buf, "aten::mul, seq = 2");
	opush(buf);
	opop();
	strcpy(other, "aten::add, seq = 1");
	opush(other);
	opop();
	for (int i = 0; i < TEXTS; i++) {
		snprintf(buf, sizeof(buf), "m%d", i);
		opush(buf);
		opop();
	}
	for (int i = 0; i < 10; i++) { /* some again */
		snprintf(buf, sizeof(buf), "m%d", i % 2 ? i : TEXTS - 1 - i);
		opush(buf);
		opop();
	}
	strcpy(buf, "overwritten");
	strcpy(other, "overwritten");
	if (drain(take_text, NULL) != 3 + TEXTS + 10)
		return 41;
	if (n_bad || n_add != 2 || n_mul != 1)
		return 42;
	if (add_name[0] == buf || add_name[0] == other || add_name[1] == buf || add_name[1] == other)
		return 43; /* copies, not the caller's buffers */
	for (int i = 0; i < TEXTS; i++) {
		int want = 1 + (i < 10 && i % 2) + (i >= TEXTS - 10 && !((TEXTS - 1 - i) % 2));
		if (seen_m[i] != want)
			return 44;
	}
	return 0;
}

/* ---- a drain while another thread pushes (kprof-inject.so drains at exit) ---- */

static _Atomic int pushing = 1;
static _Atomic long pushed;
static int (*race_push)(const char *), (*race_pop)(void);

static void *pusher(void *arg)
{
	(void)arg;
	while (atomic_load(&pushing)) {
		race_push("aten::mm, seq = 1, sizes = [[2, 2], [2, 2]]");
		race_pop();
		atomic_fetch_add(&pushed, 1);
	}
	return NULL;
}

static long race_bad;
static void check_range(const struct kp_hcall *c, void *arg)
{
	(void)arg;
	if (!c->name || c->kind != HC_NVTX_PUSH || !c->ext || !c->start_ns)
		race_bad++;
}

/* In a child: every record a drain hands out is whole, while another thread keeps pushing. */
static int nvtx_drain_while_pushing(void)
{
	void *shim = open_in("kprof-shim.so", RTLD_NOW | RTLD_GLOBAL);
	kp_shim_drain_fn drain = shim ? (kp_shim_drain_fn)dlsym(shim, "kprof_shim_drain") : NULL;
	race_push = (int (*)(const char *))dlsym(RTLD_DEFAULT, "kprof_shim_range_push");
	race_pop = (int (*)(void))dlsym(RTLD_DEFAULT, "kprof_shim_range_pop");
	if (!drain || !race_push || !race_pop)
		return 30;
	pthread_t th;
	if (pthread_create(&th, NULL, pusher, NULL))
		return 31;
	while (atomic_load(&pushed) < 1000)
		sched_yield();
	uint64_t seen = 0;
	for (int i = 0; i < 400; i++)
		seen += drain(check_range, NULL);
	atomic_store(&pushing, 0);
	pthread_join(th, NULL);
	return race_bad ? 32 : seen ? 0 : 33;
}
#endif

/* ---- the program's cudaMalloc (--memory) ---- */

typedef int (*malloc_fn)(void **, size_t);

/*
 * In a child: the shim's cudaMalloc finds a libcudart.so.13 opened RTLD_LOCAL, passes the
 * call through, and records the block with KPROF_MEMORY=on (@memory), not without it, nor a
 * failed call.
 */
static int device_malloc(int memory)
{
	if (memory)
		setenv("KPROF_MEMORY", "on", 1);
	else
		unsetenv("KPROF_MEMORY");
	void *shim = open_in("kprof-shim.so", RTLD_NOW | RTLD_GLOBAL);
	void *fake = open_in("tests/fake/libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
	if (!shim || !fake)
		return 30;
	malloc_fn m = (malloc_fn)dlsym(shim, "cudaMalloc");
	kp_shim_drain_fn drain = (kp_shim_drain_fn)dlsym(shim, "kprof_shim_drain");
	size_t *fsize = dlsym(fake, "fake_size");
	if (!m || !drain || !fsize)
		return 31;
	void *p = NULL;
	if (m(&p, 1 << 20) != 0 || p != (void *)0x7f0000000000 || *fsize != 1 << 20)
		return 32; /* passed through */
	setenv("FAKE_CUDART_STATUS", "2", 1);
	if (m(&p, 4096) != 2)
		return 33; /* the runtime's status, and no record of a failed call */
	drain(take, NULL);
	if (!memory)
		return ncalls == 0 ? 0 : 34;
	if (ncalls != 1 || last.kind != HC_DEVALLOC || last.m != 1 << 20 ||
	    last.k != 0x7f0000000000 || last.end_ns < last.start_ns || last.pid != (uint32_t)getpid())
		return 35;
	return 0;
}

/* ---- cuDNN graph API ---- */

typedef int (*create_fn)(int, void **);
typedef int (*destroy_fn)(void *);
typedef int (*set_fn)(void *, int, int, int64_t, const void *);
typedef int (*get_fn)(void *, int, int, int64_t, int64_t *, void *);
typedef int (*fin_fn)(void *);
typedef int (*exec_fn)(void *, void *, void *);

static const char *errstr(int st)
{
	(void)st;
	return "error";
}

/*
 * In a child: the shim (global), fake cuDNN (local); cudnn-frontend's causal GQA forward graph,
 * heuristics, a plan, one execution.  Exit code = checks.
 */
static int one_graph(const char *version)
{
	if (version)
		setenv("FAKE_CUDNN_VERSION", version, 1);
	void *shim = open_in("kprof-shim.so", RTLD_NOW | RTLD_GLOBAL);
	void *fake = open_in("tests/fake/libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
	if (!shim || !fake)
		return 20;
	struct cg_api a = { (create_fn)dlsym(shim, "cudnnBackendCreateDescriptor"),
			    (destroy_fn)dlsym(shim, "cudnnBackendDestroyDescriptor"),
			    (set_fn)dlsym(shim, "cudnnBackendSetAttribute"),
			    (fin_fn)dlsym(shim, "cudnnBackendFinalize"),
			    errstr,
			    (get_fn)dlsym(shim, "cudnnBackendGetAttribute"),
			    (exec_fn)dlsym(shim, "cudnnBackendExecute") };
	kp_shim_drain_fn drain = (kp_shim_drain_fn)dlsym(shim, "kprof_shim_drain");
	int *execs = dlsym(fake, "fake_executes"), *sets = dlsym(fake, "fake_sets");
	if (!a.create || !a.destroy || !a.set || !a.finalize || !a.get || !a.execute || !drain ||
	    !execs || !sets)
		return 21;
	const struct cg_sdpa sd = { .b = 2,
				    .h = 8,
				    .hkv = 2,
				    .sq = 256,
				    .sk = 256,
				    .d = 64,
				    .io = CG_BF16,
				    .causal = 1,
				    .stats = 1,
				    .scale = 0.125f };
	struct cg_graph g;
	struct cg_built b;
	char why[128];
	static int handle_obj;
	void *handle = &handle_obj, *heur = NULL, *cfg = NULL, *plan = NULL;
	if (cg_sdpa_fwd(&g, &sd) || cg_emit(&a, handle, &g, &b, why, sizeof(why)) || *sets == 0)
		return 22; /* the wrappers pass the calls on */
	int64_t n = 0;
	if (a.create(4, &heur) || a.set(heur, 201, 15, 1, &b.graph) || a.finalize(heur) ||
	    a.create(3, &cfg) || a.get(heur, 202, 15, 1, &n, &cfg) || n != 1 || a.destroy(heur) ||
	    a.create(5, &plan) || a.set(plan, 401, 15, 1, &cfg) || a.finalize(plan))
		return 23;
	if (a.execute(handle, plan, NULL) != 3000 || *execs != 1)
		return 24; /* the status passes through */
	drain(take, NULL);
	if (version)
		return ncalls == 0 ? 0 : 25; /* unknown version: not recorded */
	int64_t want[7] = { 2, 8, 2, 256, 256, 64, 64 };
	if (ncalls != 1 || last.kind != HC_SDPA || strcmp(last.name, "cudnnBackendExecute") ||
	    last.sdpa_flags != (SDPA_F_CAUSAL | SDPA_F_STATS) ||
	    memcmp(last.sd, want, sizeof(want)) || last.status != 3000 ||
	    !(last.flags & HCF_FAILED) || last.end_ns < last.start_ns || last.ext == 0)
		return 26;
	return 0;
}

static int in_child(const char *major)
{
	fflush(NULL);
	pid_t p = fork();
#ifdef KPROF_TEST_NVTX
	if (p == 0 && major && !strcmp(major, "nvtx"))
		_exit(nvtx_ranges());
	if (p == 0 && major && !strcmp(major, "nvtx-race"))
		_exit(nvtx_drain_while_pushing());
	if (p == 0 && major && !strcmp(major, "nvtx-texts"))
		_exit(nvtx_texts());
#endif
	if (p == 0 && major && !strncmp(major, "malloc", 6))
		_exit(device_malloc(!strcmp(major, "malloc-memory")));
	if (p == 0)
		_exit(!strncmp(major ? major : "", "graph", 5)
			      ? one_graph(major[5] ? major + 5 : NULL)
			      : one_call(major));
	int ws;
	waitpid(p, &ws, 0);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 100;
}

static void wrapper_finds_a_local_cublas_and_passes_through(void **state)
{
	(void)state;
	assert_int_equal(in_child(NULL), 0);
}

static void unknown_cublas_version_is_passed_through_unrecorded(void **state)
{
	(void)state;
	assert_int_equal(in_child("12"), 0);
}

static void cudnn_graph_executions_are_recorded_as_attention(void **state)
{
	(void)state;
	assert_int_equal(in_child("graph"), 0);
}

static void cuda_malloc_is_passed_through_and_recorded_with_memory(void **state)
{
	(void)state;
	assert_int_equal(in_child("malloc-memory"), 0);
	assert_int_equal(in_child("malloc"), 0);
}

static void nvtx_ranges_drain_as_host_calls(void **state)
{
	(void)state;
#ifdef KPROF_TEST_NVTX
	assert_int_equal(in_child("nvtx"), 0);
	assert_int_equal(in_child("nvtx-race"), 0);
	assert_int_equal(in_child("nvtx-texts"), 0);
#else
	skip();
#endif
}

static void unknown_cudnn_version_is_passed_through_unrecorded(void **state)
{
	(void)state;
	assert_int_equal(in_child("graph80900"), 0);
}

int main(void)
{
	char p[PATH_MAX + 64];
	if (find_build() < 0)
		return 1;
	snprintf(p, sizeof(p), "%s/kprof-shim.so", build_dir);
	if (access(p, R_OK) != 0) {
		printf("test-shim: %s not built (no CUDA toolkit): skipped\n", p);
		return 0;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wrapper_finds_a_local_cublas_and_passes_through),
		cmocka_unit_test(unknown_cublas_version_is_passed_through_unrecorded),
		cmocka_unit_test(cudnn_graph_executions_are_recorded_as_attention),
		cmocka_unit_test(unknown_cudnn_version_is_passed_through_unrecorded),
		cmocka_unit_test(nvtx_ranges_drain_as_host_calls),
		cmocka_unit_test(cuda_malloc_is_passed_through_and_recorded_with_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
