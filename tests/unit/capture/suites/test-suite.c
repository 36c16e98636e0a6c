/*
 * test-suite.c — `kprof capture --config`: YAML suites into capture options (each torchao
 * generator, several cases, defaults from the command line) and located errors.
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
#include "kprof/suite.h"
#include "workloads/shapes.h"

static const struct kp_capture_opts base = {
	.warmup = 3, .iters = 10, .backward = 1, .sample_period_ms = 10, .nvtx = 1, .libs = 1
};

static void bad(const char *y, const char *msg);

static int parse(const char *y, struct kp_suite *s, struct kp_diag *d)
{
	return suite_parse(y, strlen(y), "s.yaml", &base, s, d);
}

/* the M, K, N of case @c, as "MxKxN " each */
static const char *mm_list(const struct kp_suite_case *c)
{
	static char buf[4096];
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < c->o.nmm && n < sizeof(buf) - 64; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%ldx%ldx%ld ", c->o.mm[i].m,
				      c->o.mm[i].k, c->o.mm[i].n);
	return buf;
}

static void generators_expand_as_torchao(void **state)
{
	(void)state;
	struct kp_suite s;
	struct kp_diag d;
	const char *y =
		"model_params:\n"
		"  - name: c\n"
		"    matrix_shapes:\n"
		"      - name: custom\n"
		"        shapes: [[2048, 4096, 1024], [1_024, 8, 16], ]\n"
		"  - name: p2\n"
		"    matrix_shapes: [{name: pow2, min_power: 3, max_power: 5}]\n"
		"  - name: p2e\n"
		"    matrix_shapes: [{name: pow2_extended, min_power: 10, max_power: 11}]\n"
		"  - name: ss\n"
		"    matrix_shapes: [{name: small_sweep, min_power: 14, max_power: 16}]\n"
		"  - name: sw\n"
		"    matrix_shapes: [{name: sweep}]\n"
		"  - name: l\n"
		"    matrix_shapes: [{name: llama}]\n"
		"  - name: cat\n"
		"    matrix_shapes: [{name: pow2, min_power: 1, max_power: 1}, {name: llama, m: [1, 2]},"
		" {name: custom, shapes: [[3, 4, 5]]}]\n";
	assert_int_equal(parse(y, &s, &d), 0);
	assert_int_equal(s.n, 7);
	assert_string_equal(s.c[0].name, "c");
	assert_string_equal(mm_list(&s.c[0]), "2048x4096x1024 1024x8x16 ");
	assert_string_equal(mm_list(&s.c[1]), "8x8x8 16x16x16 32x32x32 ");
	/* doc/workloads.md §c.3: min 10, max 11 -> 1024, 1536, 2048, 3072 */
	assert_string_equal(mm_list(&s.c[2]), "1024x1024x1024 1536x1536x1536 2048x2048x2048 "
					      "3072x3072x3072 ");
	/* C(k+2, 3) = 10 for 14..16, M <= K <= N, M outermost */
	assert_int_equal(s.c[3].o.nmm, 10);
	assert_string_equal(mm_list(&s.c[3]),
			    "16384x16384x16384 16384x16384x32768 16384x16384x65536 16384x32768x32768 "
			    "16384x32768x65536 16384x65536x65536 32768x32768x32768 32768x32768x65536 "
			    "32768x65536x65536 65536x65536x65536 ");
	/* sweep's defaults 8..15: 512 shapes, N innermost */
	assert_int_equal(s.c[4].o.nmm, 512);
	assert_int_equal(s.c[4].o.mm[0].m, 256);
	assert_int_equal(s.c[4].o.mm[1].n, 512);
	assert_int_equal(s.c[4].o.mm[511].k, 32768);
	/* llama: M = 16384 (torchao), labelled */
	assert_int_equal(s.c[5].o.nmm, 4);
	assert_string_equal(mm_list(&s.c[5]), "16384x8192x1280 16384x1024x8192 16384x8192x7168 "
					      "16384x3584x8192 ");
	assert_string_equal(s.c[5].o.mm[0].label, "attn.wqkv");
	/* generators concatenate in order */
	assert_string_equal(mm_list(&s.c[6]),
			    "2x2x2 1x8192x1280 1x1024x8192 1x8192x7168 1x3584x8192 2x8192x1280 "
			    "2x1024x8192 2x8192x7168 2x3584x8192 3x4x5 ");
	suite_free(&s);
}

static void cases_take_keys_and_defaults(void **state)
{
	(void)state;
	struct kp_suite s;
	struct kp_diag d;
	const char *y = "benchmark_mode: inference\n"
			"output_dir: out\n"
			"iters: 7\n"
			"cases:\n"
			"  - high_precision_dtype: torch.float16\n"
			"  - name: attn\n"
			"    workloads: sdpa\n"
			"    dtypes: [bf16, fp32]\n"
			"    sdpa_shapes: custom:1x8x2x64x64x64c\n"
			"    backward: yes\n"
			"    warmup: 0\n"
			"    output: /tmp/a.json\n"
			"    results: attn.csv\n"
			"  - name: conv\n"
			"    workloads: [conv, rmsnorm]\n"
			"    backends: [reference, cudnn]\n"
			"    layouts: nhwc\n"
			"    conv_shapes: 'custom:2x4x8x8x4x3x3:p1'\n"
			"    norm_shapes: custom:16x64\n"
			"    causal: false\n"
			"    batch: 4\n";
	assert_int_equal(parse(y, &s, &d), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.c[0].name, "case1");
	assert_string_equal(s.c[0].o.output, "out/case1.json");
	assert_int_equal(s.c[0].o.dtypes, 1 << CDT_FP16);
	assert_int_equal(s.c[0].o.workloads, WL_MATMUL);
	assert_int_equal(s.c[0].o.nmm, 1); /* the command line's default 4096^3 */
	assert_int_equal(s.c[0].o.iters, 7);
	assert_int_equal(s.c[0].o.warmup, 3);
	assert_int_equal(s.c[0].o.backward, 0);
	assert_null(s.c[0].o.results);
	assert_string_equal(s.c[1].o.output, "/tmp/a.json");
	assert_string_equal(s.c[1].o.results, "out/attn.csv");
	assert_int_equal(s.c[1].o.workloads, WL_SDPA);
	assert_int_equal(s.c[1].o.dtypes, (1 << CDT_BF16) | (1 << CDT_FP32));
	assert_int_equal(s.c[1].o.backward, 1);
	assert_int_equal(s.c[1].o.warmup, 0);
	assert_int_equal(s.c[1].o.nsdpa, 1);
	assert_int_equal(s.c[1].o.sdpa[0].hkv, 2);
	assert_int_equal(s.c[1].o.sdpa[0].causal, 1);
	assert_int_equal(s.c[2].o.workloads, WL_CONV | WL_RMSNORM);
	assert_int_equal(s.c[2].o.backends, BE_REFERENCE | BE_CUDNN);
	assert_int_equal(s.c[2].o.layouts, LAYOUT_NHWC);
	assert_int_equal(s.c[2].o.causal, CAUSAL_NO);
	assert_int_equal(s.c[2].o.batch, 4);
	assert_int_equal(s.c[2].o.nconv, 1);
	assert_int_equal(s.c[2].o.conv[0].pad, 1);
	assert_int_equal(s.c[2].o.nnorm, 1);
	assert_int_equal(s.c[2].o.norm[0].hidden, 64);
	suite_free(&s);
}

/* torchao's sample (benchmarks/microbenchmarks/test/benchmark_config.yml), baseline only */
static void torchao_files_parse(void **state)
{
	(void)state;
	struct kp_suite s;
	struct kp_diag d;
	const char *y = "quantization_config_recipe_names:\n"
			"  - \"baseline\"\n"
			"sparsity_config_recipe_names: [null]\n"
			"output_dir: \"res\"  # Directory for results and plots\n"
			"model_params:\n"
			"  matrix_shapes:\n"
			"    - name: \"custom\"\n"
			"      shapes: [\n"
			"        [1024, 1024, 1024],  # [m, k, n]\n"
			"        [2048, 4096, 1024],\n"
			"      ]\n"
			"  high_precision_dtype: \"torch.bfloat16\"\n"
			"  use_torch_compile: true\n"
			"  torch_compile_mode: \"max-autotune\"\n"
			"  device: \"cuda\"\n"
			"  model_type: \"linear\"\n"
			"  enable_profiler: false\n"
			"  sparsity: null\n";
	assert_int_equal(parse(y, &s, &d), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.c[0].o.output, "res/case1.json");
	assert_string_equal(mm_list(&s.c[0]), "1024x1024x1024 2048x4096x1024 ");
	suite_free(&s);
	bad("quantization_config_recipe_names: [baseline, int8dq]\ncases:\n  - name: a\n",
	    "s.yaml:1:46: error: 'quantization_config_recipe_names': kprof runs no quantization "
	    "recipe ('int8dq'): only 'baseline'");
	bad("cases:\n  - sparsity: \"2:4\"\n",
	    "s.yaml:2:15: error: 'sparsity': kprof runs no sparse kernels: only null is accepted");
	bad("cases:\n  - device: cpu\n",
	    "s.yaml:2:13: error: 'device': kprof runs 'cuda' only, not 'cpu'");
	bad("cases:\n  - model_type: transformer_block\n",
	    "s.yaml:2:17: error: 'model_type': kprof runs 'linear' only, not 'transformer_block'");
}

static void command_line_options_are_defaults(void **state)
{
	(void)state;
	struct kp_suite s;
	struct kp_diag d;
	struct kp_capture_opts b = base;
	b.dtypes = 1 << CDT_TF32;
	b.iters = 99;
	b.shapes = "custom:1x2x3";
	const char *y = "cases:\n  - name: x\n  - name: y\n    iters: 5\n";
	assert_int_equal(suite_parse(y, strlen(y), "s.yaml", &b, &s, &d), 0);
	assert_int_equal(s.c[0].o.dtypes, 1 << CDT_TF32);
	assert_int_equal(s.c[0].o.iters, 99);
	assert_int_equal(s.c[1].o.iters, 5);
	assert_string_equal(mm_list(&s.c[1]), "1x2x3 ");
	assert_string_equal(s.c[1].o.output, "y.json");
	suite_free(&s);
}

/* @y fails with exactly @msg */
static void bad(const char *y, const char *msg)
{
	struct kp_suite s;
	struct kp_diag d;
	assert_int_equal(parse(y, &s, &d), -1);
	assert_int_equal(d.status, 2);
	assert_string_equal(d.msg, msg);
	assert_int_equal(s.n, 0);
	assert_null(s.c);
}

static void bad_configs_are_located(void **state)
{
	(void)state;
	bad("cases:\n  - name: a\n    iter: 5\n",
	    "s.yaml:3:5: error: unknown key 'iter' in a case (did you mean 'iters'?)");
	bad("cases:\n  - iters: 1\n    name: a\n    iters: 2\n",
	    "s.yaml:4:5: error: duplicate key 'iters' in a case");
	bad("cases:\n  - matrix_shapes: [{name: pow2, name: sweep}]\n",
	    "s.yaml:2:34: error: duplicate key 'name' in a shape generator");
	bad("cases:\n  - name: a\n---\ncases:\n  - name: b\n",
	    "s.yaml:4:1: error: a second YAML document: a suite is one document");
	bad("casez: []\n", "s.yaml:1:1: error: unknown key 'casez' in the config (did you mean "
			   "'cases'?)");
	/* a name that names nothing (fuzz-suite: "name: >" and a comment is "") or holds a
	 * control character: at the value */
	bad("model_params:\n  - name: >#--config\n",
	    "s.yaml:2:11: error: 'name': empty (leave the key out for its default)");
	bad("cases:\n  - name: \"\"\n",
	    "s.yaml:2:11: error: 'name': empty (leave the key out for its default)");
	bad("cases:\n  - name: \"a\\x1b[2Jb\"\n",
	    "s.yaml:2:11: error: 'name': a control character (0x1b)");
	bad("cases:\n  - output: \"\"\n",
	    "s.yaml:2:13: error: 'output': empty (leave the key out for its default)");
	bad("cases:\n  - results: \"r\\x1b]0;x\\x07.json\"\n",
	    "s.yaml:2:14: error: 'results': a control character (0x1b)");
	bad("cases:\n  - name: a\n    iters: ten\n",
	    "s.yaml:3:12: error: 'iters': expected an integer, got a string 'ten'");
	bad("cases:\n  - backward: 3\n",
	    "s.yaml:2:15: error: 'backward': expected true or false, got an integer '3'");
	bad("cases:\n  - name: [a]\n", "s.yaml:2:11: error: 'name': expected a string, got a list");
	bad("cases:\n  - dtypes: bf17\n",
	    "s.yaml:2:13: error: invalid value 'bf17' for 'dtypes': valid: bf16, fp16, fp32, tf32");
	bad("cases:\n  - matrix_shapes:\n      - name: custom\n        shapes: [[1, 2]]\n",
	    "s.yaml:4:18: error: a shape is [M, K, N]: expected 3 integers, got 2");
	bad("cases:\n  - matrix_shapes: [{name: custom, shapes: [[1, 0, 2]]}]\n",
	    "s.yaml:2:49: error: 'shapes': 0 is out of range 1..2147483648");
	bad("cases:\n  - matrix_shapes: [{name: pow3}]\n",
	    "s.yaml:2:28: error: unknown shape generator 'pow3' (did you mean 'pow2'?); valid: "
	    "custom, llama, pow2, pow2_extended, sweep, small_sweep");
	bad("cases:\n  - matrix_shapes: [{name: pow2, min_power: 12, max_power: 10}]\n",
	    "s.yaml:2:45: error: min_power 12 is greater than max_power 10");
	bad("cases:\n  - matrix_shapes: [{name: pow2, shapes: [[1, 2, 3]]}]\n",
	    "s.yaml:2:21: error: generator 'pow2' takes no 'shapes'");
	bad("cases:\n  - matrix_shapes: [{name: sweep, min_power: 1, max_power: 20}]\n",
	    "s.yaml:2:21: error: 'sweep' with 20 powers makes 8000 shapes; at most 16 powers");
	bad("cases:\n  - name: a\n    dtypes: [bf16\n",
	    "s.yaml:4:1: error: YAML: did not find expected ',' or ']' while parsing a flow "
	    "sequence at 3:13");
	bad("", "s.yaml:1:1: error: empty config: expected a mapping with 'cases'");
	bad("cases: []\n",
	    "s.yaml:1:8: error: 'cases': expected a list of cases, got an empty list");
	bad("warmup: 1\n", "s.yaml:1:1: error: no 'cases' (or 'model_params') list");
	bad("cases:\n  - workloads: sdpa\n    sdpa_shapes: custom:1x2\n",
	    "s.yaml:3:18: error: case 'case1': invalid value 'custom:1x2' for 'sdpa_shapes': "
	    "expected custom:BxHxH_KVxS_QxS_KxD[c],...");
	bad("cases:\n  - workloads: conv\n    conv_shapes: custom:1x1x2x2x1x3x3\n",
	    "s.yaml:3:18: error: case 'case1': invalid value 'custom:1x1x2x2x1x3x3' for "
	    "'conv_shapes': the filter is larger than the padded input");
	bad("cases:\n  - workloads: softmax\n    norm_shapes: custom:4x7\n",
	    "s.yaml:3:18: error: case 'case1': invalid value 'custom:4x7' for 'norm_shapes': "
	    "hidden must be a multiple of 8, at most 65536");
	bad("cases:\n  - name: a\n  - name: a\n",
	    "s.yaml:3:5: error: case 'a' writes 'a.json', as case 'a' does");
	bad("cases:\n  - results: case1.json\n",
	    "s.yaml:2:5: error: case 'case1' writes its trace and results to 'case1.json'");
	bad("cases:\n  - results: r.txt\n",
	    "s.yaml:2:14: error: case 'case1': invalid value 'r.txt' for 'results': expected "
	    "FILE.json or FILE.csv");
	/* a shape set's error without its key in the file is at the case */
	bad("cases:\n  - workloads: sdpa\n    kv_heads: 3\n",
	    "s.yaml:2:5: error: case 'case1': invalid value 'default' for '--sdpa-shapes': "
	    "--kv-heads must divide 16");
}

/* Each kind of case and config key: set where valid, located where not. */
static void config_keys_of_every_kind_are_checked(void **state)
{
	(void)state;
	struct kp_suite s;
	struct kp_diag d;
	const char *y = "benchmark_mode: training\n"
			"cases:\n"
			"  - name: a\n"
			"    ops: [addmm, bmm]\n"
			"    epilogues: relu\n"
			"    causal: both\n"
			"    kv_heads: 4\n"
			"    compile: max-autotune\n"
			"    enable_memory_profiler: no\n"
			"  - name: b\n"
			"    causal: \"yes\"\n"
			"    results: b.csv\n";
	assert_int_equal(parse(y, &s, &d), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.c[0].o.backward, 1);
	assert_int_equal(s.c[0].o.mm_ops & (MM_MM | MM_ADDMM | MM_BMM), MM_ADDMM | MM_BMM);
	assert_true(s.c[0].o.mm_ops & MM_RELU);
	assert_int_equal(s.c[0].o.causal, CAUSAL_BOTH);
	assert_int_equal(s.c[0].o.kv_heads, 4);
	assert_int_equal(s.c[1].o.causal, CAUSAL_YES);
	assert_string_equal(s.c[1].o.results, "b.csv");
	suite_free(&s);
	y = "benchmark_mode: inference\nbackward: true\ncases:\n  name: one\n";
	assert_int_equal(parse(y, &s, &d), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.c[0].name, "one");
	assert_int_equal(s.c[0].o.backward, 1);
	suite_free(&s);
	bad("cases:\n  - name: a\nmodel_params:\n  - name: b\n",
	    "s.yaml:3:1: error: 'cases' and 'model_params' name the same list: give one");
	bad("model_params: 3\n",
	    "s.yaml:1:15: error: 'model_params': expected a list of cases, got an integer");
	bad("benchmark_mode: train\ncases:\n  - name: a\n",
	    "s.yaml:1:17: error: invalid value 'train' for 'benchmark_mode': valid: inference, "
	    "training");
	bad("cases:\n  - causal: maybe\n",
	    "s.yaml:2:13: error: invalid value 'maybe' for 'causal': valid: both, yes, no");
	bad("cases:\n  - compile: [a]\n",
	    "s.yaml:2:14: error: 'compile': expected a scalar, got a list");
	bad("cases:\n  - use_torch_compile: 3\n",
	    "s.yaml:2:24: error: 'use_torch_compile': expected true or false, got an integer '3'");
	bad("cases:\n  - kv_heads: 0\n",
	    "s.yaml:2:15: error: 'kv_heads': 0 is out of range 1..1048576");
	bad("cases:\n  - ops: [mm, gemm]\n",
	    "s.yaml:2:10: error: invalid value 'mm,gemm' for 'ops': valid: mm, addmm, bmm");
	/* a case's results against an earlier case's trace, and both ways round */
	bad("cases:\n  - name: a\n  - name: b\n    results: a.json\n",
	    "s.yaml:3:5: error: case 'b' writes 'a.json', as case 'a' does");
	bad("cases:\n  - name: a\n    results: b.json\n  - name: b\n",
	    "s.yaml:4:5: error: case 'b' writes 'b.json', as case 'a' does");
	bad("cases:\n  - name: a\n    results: r.csv\n  - name: b\n    results: r.csv\n",
	    "s.yaml:4:5: error: case 'b' writes 'r.csv', as case 'a' does");
}

/*
 * issue 23 item 19: a custom list over the 4096 shapes a set holds was refused with the reason
 * cut off (the whole list was quoted into a 512-byte message); the value is now abbreviated
 * and the reason names the count and the limit.
 */
static void a_custom_list_over_the_limit_names_its_count(void **state)
{
	(void)state;
	size_t cap = 5000 * 24 + 256, n = 0;
	char *y = malloc(cap);
	assert_non_null(y);
	n += (size_t)snprintf(y + n, cap - n,
			      "cases:\n  - name: big\n    matrix_shapes:\n      - name: custom\n"
			      "        shapes: [");
	for (int i = 1; i <= 5000; i++)
		n += (size_t)snprintf(y + n, cap - n, "%s[%d, 8, 8]", i > 1 ? ", " : "", i);
	n += (size_t)snprintf(y + n, cap - n, "]\n");
	struct kp_suite s;
	struct kp_diag d;
	char why[512];
	/* the value's first 60 bytes, its length, the option and the whole reason */
	char *spec = malloc(5000 * 12 + 16);
	assert_non_null(spec);
	n = (size_t)sprintf(spec, "custom:");
	for (int i = 1; i <= 5000; i++)
		n += (size_t)sprintf(spec + n, "%s%dx8x8", i > 1 ? "," : "", i);
	char want[300];
	snprintf(want, sizeof(want),
		 "s.yaml:4:7: error: case 'big': invalid value '%.60s...' (%zu bytes) for "
		 "'matrix_shapes': 5000 shapes: a set holds at most 4096",
		 spec, n);
	assert_int_equal(parse(y, &s, &d), -1);
	assert_string_equal(d.msg, want);
	free(y);
	/* 4097 from the command line; 4096 is allowed */
	struct kp_capture_opts o = base;
	o.output = "o.json";
	o.workloads = WL_MATMUL;
	*strstr(spec, ",4098x8x8") = '\0';
	o.shapes = spec;
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "bytes) for '--shapes': 4097 shapes: a set holds at most 4096"));
	capture_opts_free(&o);
	*strrchr(spec, ',') = '\0';
	o = base;
	o.output = "o.json";
	o.workloads = WL_MATMUL;
	o.shapes = spec;
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), 0);
	assert_int_equal(o.nmm, 4096);
	capture_opts_free(&o);
	free(spec);
}

/*
 * Nesting past SUITE_MAX_DEPTH, aliases and text over SUITE_MAX_BYTES are refused before the
 * document is built, located; a file that is not a regular one is not read.
 */
static void hostile_suites_are_refused_where_they_start(void **state)
{
	(void)state;
	/* level 65 is the 62nd '[' (the root mapping, 'cases', the case: 3 levels) */
	char y[256];
	int n = snprintf(y, sizeof(y), "cases:\n  - name: a\n    dtypes: ");
	for (int i = 0; i < 70; i++)
		y[n++] = '[';
	y[n] = '\0';
	bad(y, "s.yaml:3:74: error: YAML nested deeper than 64 levels");
	/* 64 levels are fine as far as nesting goes (the key then says what it wants) */
	n = snprintf(y, sizeof(y), "cases:\n  - name: a\n    dtypes: ");
	for (int i = 0; i < 61; i++)
		y[n++] = '[';
	y[n++] = 'x';
	for (int i = 0; i < 61; i++)
		y[n++] = ']';
	y[n] = '\0';
	struct kp_suite s;
	struct kp_diag d;
	assert_int_equal(parse(y, &s, &d), -1);
	assert_null(strstr(d.msg, "nested deeper"));
	bad("x: &big [bf16]\ncases:\n  - dtypes: *big\n",
	    "s.yaml:3:13: error: YAML alias '*big': a suite writes each value out");
	/* the fixture, by path */
	const char *dir = getenv("KPROF_TESTDATA");
	char path[512];
	snprintf(path, sizeof(path), "%s/suites/bad-depth.yaml", dir ? dir : "testdata");
	assert_int_equal(suite_load(path, &base, &s, &d), -1);
	assert_int_equal(d.status, 2);
	assert_non_null(strstr(d.msg, "bad-depth.yaml:4:74: error: YAML nested deeper than 64"));
	/* size: the text, and a file, one byte over */
	size_t big = SUITE_MAX_BYTES + 1;
	char *t = malloc(big + 1);
	assert_non_null(t);
	memset(t, '#', big);
	t[big] = '\0';
	assert_int_equal(suite_parse(t, big, "s.yaml", &base, &s, &d), -1);
	assert_string_equal(d.msg, "s.yaml: error: 4194305 bytes: a suite file holds at most "
				   "4194304 (4 MiB)");
	snprintf(path, sizeof(path), "/tmp/kprof-test-suite-%d.yaml", (int)getpid());
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(t, 1, big, f), big);
	fclose(f);
	/* the file: sidefile.c's bounded read refuses it before parsing (status 3) */
	assert_int_equal(suite_load(path, &base, &s, &d), -1);
	assert_int_equal(d.status, 3);
	assert_non_null(strstr(d.msg, "error: suite '"));
	assert_non_null(strstr(d.msg, "' is larger than 4 MiB"));
	unlink(path);
	free(t);
	/* a FIFO is not opened for reading (that would wait for a writer) */
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(suite_load(path, &base, &s, &d), -1);
	assert_int_equal(d.status, 4);
	assert_non_null(strstr(d.msg, "is a FIFO, not a regular file"));
	unlink(path);
}

static void missing_file_is_an_environment_error(void **state)
{
	(void)state;
	struct kp_suite s;
	struct kp_diag d;
	assert_int_equal(suite_load("/nonexistent/suite.yaml", &base, &s, &d), -1);
	assert_int_equal(d.status, 4);
	assert_string_equal(d.msg, "error: cannot open '/nonexistent/suite.yaml': No such file or "
				   "directory");
}

static void list_cases_prints_each_shape(void **state)
{
	(void)state;
	struct kp_suite s;
	struct kp_diag d;
	const char *y =
		"cases:\n  - name: m\n    ops: mm\n    matrix_shapes: [{name: llama, m: 8}]\n";
	assert_int_equal(parse(y, &s, &d), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	capture_list_cases(fp, s.c[0].name, &s.c[0].o);
	fclose(fp);
	assert_string_equal(buf,
			    "case m: output m.json, results -, warmup 3, iters 10, backward on, "
			    "dtypes bf16\n"
			    "  matmul: 4 shapes, ops mm, backends cublas\n"
			    "    8x8192x1280 attn.wqkv\n"
			    "    8x1024x8192 attn.w0\n"
			    "    8x8192x7168 ffn.w13\n"
			    "    8x3584x8192 ffn.w2\n");
	free(buf);
	suite_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(generators_expand_as_torchao),
		cmocka_unit_test(cases_take_keys_and_defaults),
		cmocka_unit_test(torchao_files_parse),
		cmocka_unit_test(command_line_options_are_defaults),
		cmocka_unit_test(bad_configs_are_located),
		cmocka_unit_test(config_keys_of_every_kind_are_checked),
		cmocka_unit_test(a_custom_list_over_the_limit_names_its_count),
		cmocka_unit_test(hostile_suites_are_refused_where_they_start),
		cmocka_unit_test(missing_file_is_an_environment_error),
		cmocka_unit_test(list_cases_prints_each_shape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
