/*
 * test-listcases.c — capture/suites/listcases.c: `kprof capture --list-cases`, the cases and
 * shapes a capture expands to, for every workload, from options built here (no suite file).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/capture.h"
#include "workloads/shapes.h"

static char *list(const struct kp_capture_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	capture_list_cases(fp, "c1", o);
	fclose(fp);
	return buf;
}

static void every_workload_lists_its_shapes(void **state)
{
	(void)state;
	struct kp_mm_shape mm[] = { { 16, 32, 64, "" } };
	struct kp_sdpa_shape sd[] = { { 2, 16, 4, 128, 256, 64, 1 }, { 1, 8, 8, 64, 64, 128, 0 } };
	struct kp_conv_shape cv[] = { { 32, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1 } };
	struct kp_norm_shape nm[] = { { 4096, 8192 } };
	struct kp_norm_shape xe[] = { { 2048, 128256 } };
	struct kp_capture_opts o;
	memset(&o, 0, sizeof(o));
	o.output = "out.json", o.results = "r.csv", o.warmup = 1, o.iters = 5;
	o.dtypes = 1 << CDT_FP16 | 1 << CDT_TF32;
	o.workloads = WL_MATMUL | WL_SDPA | WL_CONV | WL_RMSNORM | WL_XENT;
	o.mm_ops = MM_ADDMM | MM_GELU_BIAS;
	o.backends = BE_CUBLASLT | BE_REFERENCE | BE_CUDNN;
	o.layouts = LAYOUT_NCHW | LAYOUT_NHWC;
	o.mm = mm, o.nmm = 1, o.sdpa = sd, o.nsdpa = 2, o.conv = cv, o.nconv = 1;
	o.norm = nm, o.nnorm = 1, o.xent = xe, o.nxent = 1;
	char *s = list(&o);
	assert_string_equal(
		s, "case c1: output out.json, results r.csv, warmup 1, iters 5, backward off, "
		   "dtypes fp16,tf32\n"
		   "  matmul: 1 shapes, ops addmm,addmm+gelu, backends cublaslt\n"
		   "    16x32x64\n"
		   "  sdpa: 2 shapes (BxHxH_KVxS_QxS_KxD, c: causal)\n"
		   "    2x16x4x128x256x64c\n"
		   "    1x8x8x64x64x128\n"
		   "  conv: 1 shapes (NxCxHxWxKxRxS:s:p:d:g), backends reference,cudnn, layouts "
		   "nchw,nhwc\n"
		   "    32x64x56x56x64x3x3:s1:p1:d1:g1\n"
		   "  rmsnorm: 1 shapes (ROWSxHIDDEN)\n"
		   "    4096x8192\n"
		   "  cross_entropy: 1 shapes (ROWSxVOCAB)\n"
		   "    2048x128256\n");
	free(s);
}

static void unset_masks_read_as_defaults(void **state)
{
	(void)state;
	/* no dtype, no op, no backend, no layout chosen: "auto", cublas, nchw */
	struct kp_conv_shape cv[] = { { 1, 3, 8, 8, 4, 1, 1, 2, 0, 1, 1 } };
	struct kp_capture_opts o;
	memset(&o, 0, sizeof(o));
	o.output = "x.json", o.warmup = 3, o.iters = 10, o.backward = 1;
	o.workloads = WL_MATMUL | WL_CONV | WL_SOFTMAX | WL_LAYERNORM;
	o.conv = cv, o.nconv = 1;
	char *s = list(&o);
	assert_string_equal(
		s, "case c1: output x.json, results -, warmup 3, iters 10, backward on, dtypes auto\n"
		   "  matmul: 0 shapes, ops auto, backends cublas\n"
		   "  conv: 1 shapes (NxCxHxWxKxRxS:s:p:d:g), backends auto, layouts nchw\n"
		   "    1x3x8x8x4x1x1:s2:p0:d1:g1\n"
		   "  softmax: 0 shapes (ROWSxHIDDEN)\n"
		   "  layernorm: 0 shapes (ROWSxHIDDEN)\n");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_workload_lists_its_shapes),
		cmocka_unit_test(unset_masks_read_as_defaults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
