/*
 * test-workloads.c — workload pieces that need no GPU: where cuDNN is looked for, what its
 * absence says, the --backend / --layout / --norm-shapes values, the row-wise shape sets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "kprof/capture.h"
#include "shapes.h"
#include "wl-cudnn.h"

static void cudnn_candidates_in_order(void **state)
{
	(void)state;
	char p[CUDNN_MAX_CANDIDATES][512];
	char tmpl[] = "/tmp/kprof-cudnn-XXXXXX";
	char *root = mkdtemp(tmpl);
	assert_non_null(root);
	char d[600], py[2000];
	snprintf(d, sizeof(d), "%s/nvidia", root);
	assert_int_equal(mkdir(d, 0700), 0);
	snprintf(d, sizeof(d), "%s/nvidia/cudnn", root);
	assert_int_equal(mkdir(d, 0700), 0);
	snprintf(d, sizeof(d), "%s/nvidia/cudnn/lib", root);
	assert_int_equal(mkdir(d, 0700), 0);

	/* no env, no Python: the bare soname only */
	assert_int_equal(cudnn_candidates(NULL, NULL, p, CUDNN_MAX_CANDIDATES), 1);
	assert_string_equal(p[0], "libcudnn.so.9");

	/* $KPROF_CUDNN as a file, then site-packages with nvidia/cudnn/lib (once), then soname;
	 * a Python path without cuDNN is skipped */
	snprintf(py, sizeof(py), "/nonexistent/site-packages\n%s\n%s\n", root, root);
	int n = cudnn_candidates("/opt/x/libcudnn.so.9", py, p, CUDNN_MAX_CANDIDATES);
	assert_int_equal(n, 3);
	assert_string_equal(p[0], "/opt/x/libcudnn.so.9");
	char want[700];
	snprintf(want, sizeof(want), "%s/nvidia/cudnn/lib/libcudnn.so.9", root);
	assert_string_equal(p[1], want);
	assert_string_equal(p[2], "libcudnn.so.9");

	/* $KPROF_CUDNN as a directory names the shim inside it */
	n = cudnn_candidates(d, NULL, p, CUDNN_MAX_CANDIDATES);
	assert_int_equal(n, 2);
	assert_string_equal(p[0], want);

	rmdir(d);
	snprintf(d, sizeof(d), "%s/nvidia/cudnn", root);
	rmdir(d);
	snprintf(d, sizeof(d), "%s/nvidia", root);
	rmdir(d);
	rmdir(root);
}

static void cudnn_absence_says_what_was_tried(void **state)
{
	(void)state;
	char p[3][512] = { "/nonexistent/libcudnn.so.9", "libz.so.1", "libkprof-no-such.so.9" };
	char why[2400];
	struct kp_cudnn *c = cudnn_open_paths(p, 3, why, sizeof(why));
	assert_null(c);
	assert_non_null(strstr(why, "cuDNN 9 not found"));
	assert_non_null(strstr(why, "/nonexistent/libcudnn.so.9 (absent)"));
	/* a library that loads but is not cuDNN */
	assert_non_null(strstr(why, "libz.so.1 (no cudnnGetVersion)"));
	assert_non_null(strstr(why, "libkprof-no-such.so.9 (cannot load)"));
	assert_non_null(strstr(why, "KPROF_CUDNN"));
}

static void backend_layout_options_parse(void **state)
{
	(void)state;
	int m = 0;
	assert_null(capture_parse_backends("reference,cudnn", &m));
	assert_int_equal(m, BE_REFERENCE | BE_CUDNN);
	m = 0;
	assert_null(capture_parse_backends("cudnn", &m));
	assert_int_equal(m, BE_CUDNN);
	assert_non_null(capture_parse_backends("cublas", &m));
	m = 0;
	assert_null(capture_parse_layouts("nhwc", &m));
	assert_int_equal(m, LAYOUT_NHWC);
	assert_non_null(capture_parse_layouts("nchw,chwn", &m));
	m = 0;
	assert_null(capture_parse_workloads("softmax,rmsnorm,layernorm", &m));
	assert_int_equal(m, WL_SOFTMAX | WL_RMSNORM | WL_LAYERNORM);
}

static void norm_shape_sets_expand(void **state)
{
	(void)state;
	struct kp_norm_shape *s = NULL;
	size_t n = 0;
	char why[200];
	assert_int_equal(shapes_norm("default", &s, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 4);
	assert_int_equal(s[2].rows, 32768);
	assert_int_equal(s[2].hidden, 8192);
	free(s);
	assert_int_equal(shapes_norm("custom:8x1024,3x4096", &s, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(s[1].rows, 3);
	assert_int_equal(s[1].hidden, 4096);
	free(s);
	s = NULL;
	assert_int_equal(shapes_norm("custom:8x1020", &s, &n, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "multiple of 8"));
	assert_null(s);
	assert_int_equal(shapes_norm("custom:8x1024,", &s, &n, why, sizeof(why)), -1);
	assert_int_equal(shapes_norm("llama", &s, &n, why, sizeof(why)), -1);
	assert_int_equal(shapes_norm("custom:8x131072", &s, &n, why, sizeof(why)), -1);

	/* capture_opts_finish expands --norm-shapes only for the row-wise workloads */
	struct kp_capture_opts o = { .output = "x.json", .workloads = WL_RMSNORM, .iters = 1,
				     .sample_period_ms = 10, .norm_shapes = "custom:2x64" };
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), 0);
	assert_int_equal(o.nnorm, 1);
	assert_int_equal(o.norm[0].hidden, 64);
	capture_opts_free(&o);
	o.norm_shapes = "custom:2x63";
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "--norm-shapes"));
	capture_opts_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cudnn_candidates_in_order),
		cmocka_unit_test(cudnn_absence_says_what_was_tried),
		cmocka_unit_test(backend_layout_options_parse),
		cmocka_unit_test(norm_shape_sets_expand),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
