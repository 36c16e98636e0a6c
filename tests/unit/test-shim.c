/*
 * test-shim.c — kprof-shim.so without a GPU, against a fake libcublas.so.13 opened
 * RTLD_LOCAL as PyTorch's wheel copy is: the wrapper finds the real function through the
 * loaded soname (RTLD_NEXT cannot see it), passes arguments and the status code through,
 * records the call, and passes an unknown cuBLAS major version through unrecorded.
 */
#include <dlfcn.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "hcall.h"

typedef int (*gemm_fn)(void *h, int ta, int tb, int m, int n, int k, const void *alpha,
		       const void *A, int at, int lda, const void *B, int bt, int ldb,
		       const void *beta, void *C, int ct, int ldc, int compute, int algo);

static char build_dir[PATH_MAX];

/* $(O) of this test binary ($(O)/tests/test-shim) */
static int find_build(void)
{
	ssize_t n = readlink("/proc/self/exe", build_dir, sizeof(build_dir) - 1);
	if (n <= 0)
		return -1;
	build_dir[n] = '\0';
	for (int i = 0; i < 2; i++) {
		char *s = strrchr(build_dir, '/');
		if (!s)
			return -1;
		*s = '\0';
	}
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
	int st = g(NULL, 1, 0, 128, 256, 512, &one, NULL, 14, 512, NULL, 14, 512, &zero, NULL, 14, 128,
		   68, -1);
	if (st != 7 || *calls != 1 || *fk != 512)
		return 12; /* status and arguments pass through */
	drain(take, NULL);
	if (major)
		return ncalls == 0 ? 0 : 13; /* unknown version: not recorded */
	if (ncalls != 1 || last.kind != HC_GEMM || strcmp(last.name, "cublasGemmEx") || last.m != 128 ||
	    last.n != 256 || last.k != 512 || last.batch != 1 || last.atype != 14 || last.compute != 68 ||
	    last.transa != 1 || !(last.flags & HCF_BETA_ZERO) || !(last.flags & HCF_FAILED) ||
	    last.status != 7 || last.end_ns < last.start_ns || last.ext == 0)
		return 14;
	return 0;
}

static int in_child(const char *major)
{
	fflush(NULL);
	pid_t p = fork();
	if (p == 0)
		_exit(one_call(major));
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
