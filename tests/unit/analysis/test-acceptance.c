/*
 * test-acceptance.c — issue #2's acceptance list over the bundled real traces, through the library.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/analyze.h"
#include "kprof/devdb.h"
#include "kprof/link.h"
#include "kprof/trace.h"

static struct kp_devdb db;

static const char *path(const char *rel)
{
	static char buf[1024];
	const char *dir = getenv("KPROF_TESTDATA");
	snprintf(buf, sizeof(buf), "%s/%s", dir ? dir : "../../testdata", rel);
	return buf;
}

static void load(struct kp_trace *t, const char *rel)
{
	struct kp_diag d = { 0 };
	struct kp_load_opts lo = { 0 };
	int rc = trace_load(t, path(rel), &lo, &d);
	if (rc)
		fprintf(stderr, "%s\n", d.msg);
	assert_int_equal(rc, 0);
	link_trace(t);
}

static void report(struct kp_report *r, const struct kp_trace *t, enum kp_group g)
{
	struct kp_analyze_opts o = { .group = g, .db = &db };
	assert_int_equal(analyze_run(t, &o, r), 0);
}

static int64_t op_flops(const struct kp_report *r, const char *op)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (!strcmp(r->rows[i].name, op))
			return r->rows[i].flops;
	return -2;
}

struct expect {
	const char *op;
	int64_t flops; /* FlopCounterMode per_call x steps (flop_counter.json) */
};

static void check_flops(const char *trace, const struct expect *e, size_t n)
{
	struct kp_trace t;
	struct kp_report r;
	load(&t, trace);
	report(&r, &t, GROUP_OP);
	for (size_t i = 0; i < n; i++) {
		int64_t got = op_flops(&r, e[i].op);
		if (got != e[i].flops)
			fprintf(stderr, "%s %s: got %lld want %lld\n", trace, e[i].op,
				(long long)got, (long long)e[i].flops);
		assert_true(got == e[i].flops);
	}
	analyze_free(&r);
	trace_free(&t);
}

static void flops_match_flop_counter_for_matmul_bf16_and_fp16(void **state)
{
	(void)state;
	static const struct expect e[] = {
		{ "aten::mm", 1153198718976 },
		{ "aten::addmm", 2306397437952 },
		{ "aten::bmm", 576599359488 },
		{ "aten::baddbmm", 576599359488 },
	};
	check_flops("torch211-h100/matmul_bf16.json", e, 4);
	check_flops("torch211-h100/matmul_fp16.json", e, 4);
}

static void flops_match_flop_counter_for_conv_forward_and_backward(void **state)
{
	(void)state;
	static const struct expect e[] = {
		{ "aten::convolution", 36325818368 },
		{ "aten::convolution_backward", 72651636736 },
	};
	check_flops("torch211-h100/conv_fp32.json", e, 2);
}

static void flops_match_flop_counter_for_compiled_fp32(void **state)
{
	(void)state;
	static const struct expect e[] = {
		{ "aten::convolution", 4867200 }, { "aten::mm", 201326592 },
		{ "aten::addmm", 201326592 },     { "aten::bmm", 1610612736 },
		{ "aten::baddbmm", 1610612736 },
	};
	check_flops("torch211-h100/compiled_fp32.json", e, 5);
}

static void block_bf16_matmuls_match_and_causal_attention_is_scaled(void **state)
{
	(void)state;
	/* 3 steps; causal S=1024: FlopCounterMode's dense count x (S+1)/(2S) = x 1025/2048 */
	static const struct expect e[] = {
		{ "aten::addmm", 824633720832LL * 3 },
		{ "aten::mm", 1649267441664LL * 3 },
		{ "aten::_scaled_dot_product_cudnn_attention", 68719476736LL * 3 / 2048 * 1025 },
		{ "aten::_scaled_dot_product_cudnn_attention_backward",
		  171798691840LL * 3 / 2048 * 1025 },
	};
	check_flops("torch211-h100/block_bf16.json", e, 4);
}

static void sdpa_flash_counts_causal_half_exactly(void **state)
{
	(void)state;
	/*
	 * FlopCounterMode: 2667174690816 fwd (dense for every call).  Half the calls are
	 * causal: B in (1,8) -> sum 9, H=16, D=128, S in (512,1024,4096):
	 * dense per flag = 4*9*16*128*sum(S^2); causal = 4*9*16*128*sum(S(S+1)/2).
	 */
	int64_t k = 4LL * 9 * 16 * 128;
	int64_t dense = k * (512LL * 512 + 1024LL * 1024 + 4096LL * 4096);
	int64_t causal = k * (512LL * 513 / 2 + 1024LL * 1025 / 2 + 4096LL * 4097 / 2);
	assert_true(2 * dense == 2667174690816LL);
	const struct expect e[] = {
		{ "aten::_scaled_dot_product_flash_attention", dense + causal },
		{ "aten::_scaled_dot_product_flash_attention_backward", (dense + causal) / 2 * 5 },
	};
	check_flops("torch211-h100/sdpa_flash.json", e, 2);
}

static void mm_8192_bf16_is_60_to_95_pct_of_h100_dense_peak(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_report r;
	load(&t, "torch211-h100/matmul_bf16.json");
	report(&r, &t, GROUP_OP_SHAPE);
	int found = 0;
	for (size_t i = 0; i < r.nrows; i++) {
		const struct kp_row *row = &r.rows[i];
		if (strcmp(row->name, "aten::mm") || strcmp(row->shape, "[8192,8192]x[8192,8192]"))
			continue;
		found = 1;
		assert_string_equal(row->dtype, "bf16");
		/* bf16 counts 2 bytes: 3 x 8192^2 x 2 compulsory bytes */
		assert_true(row->bytes >= 3LL * 8192 * 8192 * 2);
		assert_true(row->bytes < 3LL * 8192 * 8192 * 2 + 4096);
		assert_true(row->pct_peak_flops >= 60 && row->pct_peak_flops <= 95);
	}
	assert_true(found);
	assert_non_null(r.dev);
	assert_string_equal(r.dev->name, "NVIDIA H100 80GB HBM3");
	analyze_free(&r);
	trace_free(&t);
}

static const char *all_traces[] = {
	"torch211-h100/matmul_bf16.json",   "torch211-h100/matmul_fp16.json",
	"torch211-h100/conv_fp32.json",     "torch211-h100/compiled_fp32.json",
	"torch211-h100/sdpa_flash.json",    "torch211-h100/block_bf16.json",
	"hta/alexnet_2023.json.gz",         "hta/amd_mi250_rocm62.json.gz",
	"hta/cpu_only_2022.json.gz",        "hta/cupti_profiler_2023.json.gz",
	"hta/ns_resolution_2024.json.gz",   "hta/trace_diff_control_2022.json.gz",
	"hta/trace_diff_test_2022.json.gz", "hta/triton_example_2024.json.gz",
};

static void every_trace_loads_with_finite_figures_and_flagged_overpeak(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(all_traces) / sizeof(all_traces[0]); k++) {
		for (int g = GROUP_KERNEL; g <= GROUP_OP_SHAPE; g++) {
			struct kp_trace t;
			struct kp_report r;
			load(&t, all_traces[k]);
			report(&r, &t, g);
			int64_t sum = 0;
			for (size_t i = 0; i < r.nrows; i++) {
				const struct kp_row *row = &r.rows[i];
				sum += row->time_ns;
				assert_true(isfinite(row->flops_per_s) &&
					    isfinite(row->bytes_per_s));
				assert_true(isfinite(row->pct_peak_flops) &&
					    isfinite(row->pct_peak_bw));
				if (row->pct_peak_flops > 100 || row->pct_peak_bw > 100)
					assert_true(row->flags & ROW_OVER_PEAK);
			}
			/* no GPU event is dropped: rows add up to all GPU time */
			assert_int_equal(sum, r.tot.gpu_time_ns);
			if (strstr(all_traces[k], "cpu_only")) {
				assert_int_equal(r.nrows, 0);
			} else if (strstr(all_traces[k], "cupti_profiler")) {
				/* no kernel events, but 77 range-profiler records with counters */
				assert_int_equal(r.nrows, 0);
				assert_true(r.nmrows > 0);
				assert_int_equal(t.nranges, 77);
			} else
				assert_true(r.nrows > 0);
			analyze_free(&r);
			trace_free(&t);
		}
	}
}

static void kernels_of_2022_traces_link_by_time_nesting(void **state)
{
	(void)state;
	/* External id == correlation there and names no op; most kernels still get an op */
	struct kp_trace t;
	load(&t, "hta/trace_diff_control_2022.json.gz");
	size_t linked = 0;
	for (size_t i = 0; i < t.ngpu; i++)
		linked += t.gpu[i].op >= 0;
	assert_true(linked * 100 >= t.ngpu * 99);
	trace_free(&t);
}

int main(void)
{
	struct kp_diag d = { 0 };
	if (devdb_load_builtin(&db, &d) < 0) {
		fprintf(stderr, "%s\n", d.msg);
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flops_match_flop_counter_for_matmul_bf16_and_fp16),
		cmocka_unit_test(flops_match_flop_counter_for_conv_forward_and_backward),
		cmocka_unit_test(flops_match_flop_counter_for_compiled_fp32),
		cmocka_unit_test(block_bf16_matmuls_match_and_causal_attention_is_scaled),
		cmocka_unit_test(sdpa_flash_counts_causal_half_exactly),
		cmocka_unit_test(mm_8192_bf16_is_60_to_95_pct_of_h100_dense_peak),
		cmocka_unit_test(every_trace_loads_with_finite_figures_and_flagged_overpeak),
		cmocka_unit_test(kernels_of_2022_traces_link_by_time_nesting),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	devdb_free(&db);
	return rc;
}
