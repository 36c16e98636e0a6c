/*
 * test-workloads.c — workload pieces that need no GPU: where cuDNN is looked for, what its
 * absence says, the --backend / --layout / --norm-shapes / --epilogue values, the row-wise shape
 * sets, the ops the matmul variants record and what kprof analyze counts for them.
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

#include "kprof/analyze.h"
#include "kprof/capture.h"
#include "kprof/devdb.h"
#include "kprof/diag.h"
#include "kprof/link.h"
#include "kprof/trace.h"
#include "workloads/shapes.h"
#include "workloads/wl-cudnn.h"
#include "workloads/workloads.h"

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
	assert_string_equal(capture_parse_backends("cublas,tensorrt", &m),
			    "valid: reference, cudnn, cublas, cublaslt");
	m = 0;
	assert_null(capture_parse_backends("cublas,cublaslt", &m));
	assert_int_equal(m, BE_CUBLAS | BE_CUBLASLT);
	assert_int_equal(m & BE_CONV, 0);
	m = 0;
	assert_null(capture_parse_layouts("nhwc", &m));
	assert_int_equal(m, LAYOUT_NHWC);
	assert_non_null(capture_parse_layouts("nchw,chwn", &m));
	m = 0;
	assert_null(capture_parse_workloads("softmax,rmsnorm,layernorm", &m));
	assert_int_equal(m, WL_SOFTMAX | WL_RMSNORM | WL_LAYERNORM);
	m = 0;
	assert_null(capture_parse_workloads("cross_entropy", &m));
	assert_int_equal(m, WL_XENT);
	assert_non_null(capture_parse_workloads("crossentropy", &m));
}

static void vocab_shape_sets_expand(void **state)
{
	(void)state;
	struct kp_norm_shape *s = NULL;
	size_t n = 0;
	char why[200];
	assert_int_equal(shapes_vocab("default", &s, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 4);
	assert_int_equal(s[0].rows, 4096);
	assert_int_equal(s[0].hidden, 32000);
	assert_int_equal(s[3].rows, 16384);
	assert_int_equal(s[3].hidden, 128256);
	free(s);
	/* a vocabulary beyond the row-wise kernels' 65536 */
	assert_int_equal(shapes_vocab("custom:8x262144", &s, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].hidden, 262144);
	free(s);
	s = NULL;
	assert_int_equal(shapes_vocab("custom:8x2097152", &s, &n, why, sizeof(why)), -1);
	assert_string_equal(why, "hidden must be a multiple of 8, at most 1048576");
	assert_null(s);
	assert_int_equal(shapes_vocab("custom:8x32001", &s, &n, why, sizeof(why)), -1);

	/* -w cross_entropy: --norm-shapes names its rows x vocab; default: its own set */
	struct kp_capture_opts o = { .output = "x.json",
				     .workloads = WL_XENT | WL_SOFTMAX,
				     .iters = 1,
				     .sample_period_ms = 10 };
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), 0);
	assert_int_equal(o.nxent, 4);
	assert_int_equal(o.xent[2].hidden, 128256);
	assert_int_equal(o.nnorm, 4);
	assert_int_equal(o.norm[2].hidden, 8192);
	capture_opts_free(&o);
	assert_null(o.xent);
	assert_int_equal(o.nxent, 0);
	o.workloads = WL_XENT;
	o.norm_shapes = "custom:4x131072";
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), 0);
	assert_int_equal(o.nxent, 1);
	assert_int_equal(o.nnorm, 0);
	capture_opts_free(&o);
	/* the same set for softmax too: over the row-wise limit */
	o.workloads = WL_XENT | WL_SOFTMAX;
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "at most 65536"));
	capture_opts_free(&o);
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
	struct kp_capture_opts o = { .output = "x.json",
				     .workloads = WL_RMSNORM,
				     .iters = 1,
				     .sample_period_ms = 10,
				     .norm_shapes = "custom:2x64" };
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), 0);
	assert_int_equal(o.nnorm, 1);
	assert_int_equal(o.norm[0].hidden, 64);
	capture_opts_free(&o);
	o.norm_shapes = "custom:2x63";
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "--norm-shapes"));
	capture_opts_free(&o);
}

/* --epilogue takes cuBLASLt's epilogue names and selects the torch op of each */
static void epilogue_option_parses(void **state)
{
	(void)state;
	int m = 0;
	assert_null(capture_parse_epilogues("none,bias,gelu_bias", &m));
	assert_int_equal(m, MM_MM | MM_ADDMM | MM_GELU_BIAS);
	assert_null(capture_parse_epilogues("relu,relu_bias,gelu", &m));
	assert_int_equal(m, MM_MM | MM_ADDMM | MM_GELU_BIAS | MM_RELU | MM_RELU_BIAS | MM_GELU);
	m = 0;
	assert_string_equal(capture_parse_epilogues("bias_gelu", &m),
			    "valid: none, bias, relu, relu_bias, gelu, gelu_bias");
	assert_string_equal(capture_parse_epilogues("", &m),
			    "valid: none, bias, relu, relu_bias, gelu, gelu_bias");
	assert_int_equal(m, 0);
	assert_string_equal(workloads_mm_variant(MM_GELU_BIAS), "addmm+gelu");
	assert_string_equal(workloads_mm_variant(MM_RELU), "mm+relu");
	assert_null(workloads_mm_variant(MM_MM | MM_ADDMM));
}

/* --epilogue alone runs only its variants; with --op both; cublas(lt) needs -w matmul */
static void epilogue_and_backend_finish(void **state)
{
	(void)state;
	char why[300];
	struct kp_capture_opts o = { .output = "t.json",
				     .iters = 1,
				     .sample_period_ms = 10,
				     .epilogues = MM_GELU_BIAS,
				     .backends = BE_CUBLASLT };
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), 0);
	assert_int_equal(o.mm_ops, MM_GELU_BIAS);
	capture_opts_free(&o);
	o = (struct kp_capture_opts){ .output = "t.json",
				      .iters = 1,
				      .sample_period_ms = 10,
				      .mm_ops = MM_BMM,
				      .epilogues = MM_MM | MM_GELU };
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), 0);
	assert_int_equal(o.mm_ops, MM_BMM | MM_MM | MM_GELU);
	capture_opts_free(&o);
	o = (struct kp_capture_opts){ .output = "t.json", .iters = 1, .sample_period_ms = 10 };
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), 0);
	assert_int_equal(o.mm_ops, MM_MM | MM_ADDMM | MM_BMM);
	capture_opts_free(&o);
	o = (struct kp_capture_opts){ .output = "t.json",
				      .iters = 1,
				      .sample_period_ms = 10,
				      .workloads = WL_CONV,
				      .backends = BE_CUDNN | BE_CUBLASLT };
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_string_equal(why, "'--backend cublaslt' is a matmul backend: add '-w matmul'");
	capture_opts_free(&o);
}

/* The ops each matmul variant records: torch's names and schema slots */
static void matmul_variants_record_torch_ops(void **state)
{
	(void)state;
	const char *name;
	char *a = workloads_mm_args(MM_GELU_BIAS, 0, CDT_BF16, 1, 64, 32, 48, "cublaslt",
				    "heuristic algo 66", &name);
	assert_string_equal(name, "aten::_addmm_activation");
	assert_string_equal(a,
			    "\"Input Dims\":[[48],[64,32],[32,48],[],[],[]],"
			    "\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\","
			    "\"Scalar\",\"Scalar\",\"Scalar\"],"
			    "\"Concrete Inputs\":[\"\",\"\",\"\",\"1\",\"1\",\"True\"],"
			    "\"kprof backend\":\"cublaslt\",\"kprof compute\":\"bf16\","
			    "\"kprof algo\":\"heuristic algo 66\"");
	free(a);
	/* no bias: beta 0; relu: use_gelu False */
	a = workloads_mm_args(MM_RELU, 0, CDT_FP16, 1, 64, 32, 48, "cublas", NULL, &name);
	assert_string_equal(name, "aten::_addmm_activation");
	assert_string_equal(a, "\"Input Dims\":[[48],[64,32],[32,48],[],[],[]],"
			       "\"Input type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\","
			       "\"Scalar\",\"Scalar\",\"Scalar\"],"
			       "\"Concrete Inputs\":[\"\",\"\",\"\",\"0\",\"1\",\"False\"],"
			       "\"kprof backend\":\"cublas\",\"kprof compute\":\"fp16\"");
	free(a);
	/* the cublas backend's activation child, in place on the [M,N] output */
	a = workloads_mm_args(MM_GELU_BIAS, 1, CDT_TF32, 1, 64, 32, 48, "cublas", NULL, &name);
	assert_string_equal(name, "aten::gelu_");
	assert_string_equal(a, "\"Input Dims\":[[64,48],[]],\"Input type\":[\"float\",\"\"],"
			       "\"Concrete Inputs\":[\"\",\"\"],"
			       "\"kprof backend\":\"cublas\",\"kprof compute\":\"tf32\"");
	free(a);
	a = workloads_mm_args(MM_RELU_BIAS, 1, CDT_BF16, 1, 64, 32, 48, "cublas", NULL, &name);
	assert_string_equal(name, "aten::relu_");
	assert_string_equal(a, "\"Input Dims\":[[64,48]],\"Input type\":[\"c10::BFloat16\"],"
			       "\"Concrete Inputs\":[\"\"],"
			       "\"kprof backend\":\"cublas\",\"kprof compute\":\"bf16\"");
	free(a);
	assert_null(workloads_mm_args(MM_ADDMM, 1, CDT_BF16, 1, 64, 32, 48, "cublas", NULL, &name));
	assert_null(name);
	a = workloads_mm_args(MM_ADDMM, 0, CDT_BF16, 1, 64, 32, 48, "cublaslt", NULL, &name);
	assert_string_equal(name, "aten::addmm");
	assert_string_equal(a,
			    "\"Input Dims\":[[48],[64,32],[32,48],[],[]],"
			    "\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\","
			    "\"Scalar\",\"Scalar\"],\"Concrete Inputs\":[\"\",\"\",\"\",\"1\",\"1\"],"
			    "\"kprof backend\":\"cublaslt\",\"kprof compute\":\"bf16\"");
	free(a);
	a = workloads_mm_args(MM_MM, 0, CDT_BF16, 1, 64, 32, 48, "cublas", NULL, &name);
	assert_string_equal(name, "aten::mm");
	assert_string_equal(a, "\"Input Dims\":[[64,32],[32,48]],"
			       "\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],"
			       "\"Concrete Inputs\":[\"\",\"\"],"
			       "\"kprof backend\":\"cublas\",\"kprof compute\":\"bf16\"");
	free(a);
	a = workloads_mm_args(MM_BMM, 0, CDT_BF16, 8, 64, 32, 48, "cublaslt", NULL, &name);
	assert_string_equal(name, "aten::bmm");
	assert_string_equal(a, "\"Input Dims\":[[8,64,32],[8,32,48]],"
			       "\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],"
			       "\"Concrete Inputs\":[\"\",\"\"],"
			       "\"kprof backend\":\"cublaslt\",\"kprof compute\":\"bf16\"");
	free(a);
}

/*
 * A trace of every variant on both backends as capture writes it (the ops from
 * workloads_mm_args, kernels named as they run): kprof analyze -g op counts each op's
 * 2*M*N*K exactly, the cublas backend's bias and activation kernels included in the op
 * (the aten::gelu_ / relu_ child has no row of its own), and no FLOPs for the epilogue.
 */
static void analyze_counts_matmul_variants_exactly(void **state)
{
	(void)state;
	const long M = 4096, K = 14336, N = 16384;
	char tmpl[] = "/tmp/kprof-test-mm-XXXXXX";
	int fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("{\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA H100 80GB HBM3\"}],"
	      "\"traceEvents\":[\n",
	      f);
	long ext = 0, corr = 0, ts = 1000;
	for (int op = MM_MM; op < 1 << MM_NVARIANTS; op <<= 1) {
		for (int lt = 0; lt < 2; lt++) {
			const char *be = lt ? "cublaslt" : "cublas", *name, *aname;
			long b = op == MM_BMM ? 4 : 1;
			char *a = workloads_mm_args(op, 0, CDT_BF16, b, M, K, N, be, NULL, &name);
			char *aa = lt ? NULL
				      : workloads_mm_args(op, 1, CDT_BF16, b, M, K, N, be, NULL,
							  &aname);
			long e0 = ++ext;
			fprintf(f,
				"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s\",\"pid\":1,\"tid\":1,"
				"\"ts\":%ld,\"dur\":90,\"args\":{\"External id\":%ld,%s}},\n",
				name, ts, e0, a);
			const char *kern[3] = { NULL,
						"sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_"
						"tilesize128x256x64_cublas",
						NULL };
			if (!lt && (op & (MM_ADDMM | MM_RELU_BIAS | MM_GELU_BIAS)))
				kern[0] = "void kprof_bias_rows<__nv_bfloat16>(__nv_bfloat16*, "
					  "__nv_bfloat16 const*, long, long)";
			if (aa)
				kern[2] = "void kprof_activation<__nv_bfloat16>(__nv_bfloat16*, "
					  "unsigned long, int)";
			for (int k = 0; k < 3; k++) {
				if (!kern[k])
					continue;
				long e = e0, t = ts + 10 + 20 * k;
				if (k == 2) {
					e = ++ext;
					fprintf(f,
						"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s\","
						"\"pid\":1,\"tid\":1,\"ts\":%ld,\"dur\":10,"
						"\"args\":{\"External id\":%ld,%s}},\n",
						aname, t - 2, e, aa);
				}
				fprintf(f,
					"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":"
					"\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":%ld,\"dur\":1,"
					"\"args\":{\"External id\":%ld,\"correlation\":%ld}},\n"
					"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,"
					"\"tid\":7,\"ts\":%ld,\"dur\":5,\"args\":{\"correlation\":%ld,"
					"\"device\":0,\"stream\":7}},\n",
					t, e, corr + 1, kern[k], 100000 + t, corr + 1);
				corr++;
			}
			free(a);
			free(aa);
			ts += 100;
		}
	}
	fputs("{\"ph\":\"i\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":0,\"s\":\"t\"}]}\n", f);
	assert_int_equal(fclose(f), 0);

	struct kp_devdb db;
	struct kp_diag d = { 0 };
	assert_int_equal(devdb_load_builtin(&db, &d), 0);
	struct kp_trace t;
	struct kp_load_opts lo = { 0 };
	assert_int_equal(trace_load(&t, tmpl, &lo, &d), 0);
	link_trace(&t);
	struct kp_analyze_opts o = { .group = GROUP_OP_SHAPE, .db = &db };
	struct kp_report r;
	assert_int_equal(analyze_run(&t, &o, &r), 0);
	int64_t mnk = 2 * M * N * K;
	/* mm, addmm, bmm: 2 calls each, one per backend; _addmm_activation's four variants
	 * share one shape (Input Dims): 8 calls */
	int seen = 0;
	for (size_t i = 0; i < r.nrows; i++) {
		const struct kp_row *row = &r.rows[i];
		assert_true(strncmp(row->name, "aten::gelu_", 11) &&
			    strncmp(row->name, "aten::relu_", 11));
		int64_t per = !strncmp(row->name, "aten::bmm", 9) ? 4 * mnk : mnk;
		assert_int_equal(row->flops, per * row->calls);
		assert_int_equal(row->calls, strstr(row->name, "_addmm_activation") ? 8 : 2);
		seen += (int)row->calls;
	}
	assert_int_equal(seen, 2 * MM_NVARIANTS);
	assert_int_equal(r.tot.unlinked, 0);
	analyze_free(&r);
	trace_free(&t);
	devdb_free(&db);
	unlink(tmpl);
}

static void sdpa_tolerances_scale_the_gemm_one(void **state)
{
	(void)state;
	/* the forward check allows twice the GEMM tolerance, the backward four times */
	assert_true(workloads_sdpa_tolerance(CDT_BF16, 0) == 2 * 8e-3);
	assert_true(workloads_sdpa_tolerance(CDT_BF16, 1) == 4 * 8e-3);
	assert_true(workloads_sdpa_tolerance(CDT_FP16, 0) == 2 * 1.5e-3);
	assert_true(workloads_sdpa_tolerance(CDT_FP32, 1) == 4 * 5e-5);
}

static void sdpa_chunks_fit_half_the_free_memory(void **state)
{
	(void)state;
	/* one item of H=16, S_q=S_k=4096 in bf16: 16*4096*4096 * (4 + 2) bytes */
	struct kp_sdpa_shape sh = { .b = 8, .h = 16, .hkv = 16, .sq = 4096, .sk = 4096, .d = 128 };
	double item = workloads_sdpa_item_bytes(&sh, 2);
	assert_true(item == 16.0 * 4096 * 4096 * 6);
	/* 80 GB free: 40 GB hold 24 items, the batch of 8 is one chunk */
	assert_int_equal(workloads_sdpa_chunk_items((size_t)80e9, item, sh.b), 8);
	/* 10 GB free: 5 GB hold 3 items (3 * 1.61 GB) */
	assert_int_equal(workloads_sdpa_chunk_items((size_t)10e9, item, sh.b), 3);
	/* exactly two items in half the memory: 2, at the boundary */
	assert_int_equal(workloads_sdpa_chunk_items((size_t)(4 * item), item, sh.b), 2);
	/* not even one: 0, which run_sdpa reports as an error */
	assert_int_equal(workloads_sdpa_chunk_items((size_t)item, item, sh.b), 0);
	assert_int_equal(workloads_sdpa_chunk_items(0, item, 1), 0);
	/* fp32: 8 bytes an element */
	assert_true(workloads_sdpa_item_bytes(&sh, 4) == 16.0 * 4096 * 4096 * 8);
}

static void conv_flops_count_each_output_once(void **state)
{
	(void)state;
	/* ResNet-50's stem: 3x224x224 -> 64x112x112 (7x7, stride 2, pad 3): 2 * 64*112*112 * 3*49 */
	struct kp_conv_shape stem = { .n = 1,
				      .c = 3,
				      .h = 224,
				      .w = 224,
				      .k = 64,
				      .r = 7,
				      .s = 7,
				      .stride = 2,
				      .pad = 3,
				      .dil = 1,
				      .groups = 1 };
	assert_true(workloads_conv_flops(&stem, 0) == 236027904.0);
	/* the backward adds dX and dW: 3 forwards */
	assert_true(workloads_conv_flops(&stem, 1) == 3 * 236027904.0);
	/* depthwise 3x3 (groups = channels): one input channel an output, 2 * 2*32*8*8 * 9 */
	struct kp_conv_shape dw = { .n = 2,
				    .c = 32,
				    .h = 8,
				    .w = 8,
				    .k = 32,
				    .r = 3,
				    .s = 3,
				    .stride = 1,
				    .pad = 1,
				    .dil = 1,
				    .groups = 32 };
	assert_true(workloads_conv_flops(&dw, 0) == 73728.0);
	/* dilation 2 without padding: 8x8 -> 4x4 */
	dw.pad = 0, dw.dil = 2;
	assert_true(workloads_conv_flops(&dw, 0) == 2.0 * 2 * 32 * 4 * 4 * 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cudnn_candidates_in_order),
		cmocka_unit_test(cudnn_absence_says_what_was_tried),
		cmocka_unit_test(backend_layout_options_parse),
		cmocka_unit_test(epilogue_option_parses),
		cmocka_unit_test(epilogue_and_backend_finish),
		cmocka_unit_test(matmul_variants_record_torch_ops),
		cmocka_unit_test(analyze_counts_matmul_variants_exactly),
		cmocka_unit_test(norm_shape_sets_expand),
		cmocka_unit_test(vocab_shape_sets_expand),
		cmocka_unit_test(sdpa_tolerances_scale_the_gemm_one),
		cmocka_unit_test(sdpa_chunks_fit_half_the_free_memory),
		cmocka_unit_test(conv_flops_count_each_output_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
