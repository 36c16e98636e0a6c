/*
 * test-diff.c — join, normalization, per-step division, summary, sort, folding and the gate,
 * on analysis rows written as struct literals.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/devdb.h"
#include "kprof/diff-doc.h"
#include "kprof/diff.h"
#include "kprof/pipeline.h"
#include "kprof/sort.h"
#include "kprof/table.h"

/* parse @keys and sort (sort.h), as the command does */
static int diff_sort(struct kp_diff *r, const char *keys, const char **bad)
{
	struct kp_sort_spec sp;
	if (sort_parse(&sp, SORT_DIFF, keys, bad) < 0)
		return -1;
	sort_diff(r, &sp);
	return 0;
}

/* an analysis row as analyze_run() leaves it: name, time, calls; FLOPs unknown */
static struct kp_row row(const char *name, int64_t time_ns, int64_t calls)
{
	struct kp_row r;
	memset(&r, 0, sizeof(r));
	r.name = r.key = name;
	r.time_ns = time_ns;
	r.calls = r.kernels = calls;
	r.flops = r.bytes = -1;
	r.flops_per_s = r.bytes_per_s = r.pct_peak_flops = r.pct_peak_bw = r.intensity = -1;
	return r;
}

static struct kp_row shaped(const char *op, const char *shape, const char *dtype, int64_t time_ns,
			    int64_t calls)
{
	struct kp_row r = row(op, time_ns, calls);
	r.shape = shape;
	r.dtype = dtype;
	r.key = "unused: diff builds its own op-shape key";
	return r;
}

static const struct kp_diff_row *find(const struct kp_diff *d, const char *key)
{
	for (size_t i = 0; i < d->nrows; i++)
		if (!strcmp(d->rows[i].key, key))
			return &d->rows[i];
	return NULL;
}

static struct kp_diff_opts kopts(enum kp_group key)
{
	struct kp_diff_opts o = { .key = key, .threshold_pct = 2, .base_div = 1, .new_div = 1 };
	return o;
}

static struct kp_gate_opts gopts(double pct, double min_pct, int64_t min_delta_ns)
{
	struct kp_gate_opts g = { .fail_above_pct = pct,
				  .min_pct = min_pct,
				  .min_delta_ns = min_delta_ns };
	return g;
}

static int64_t delta_sum(const struct kp_diff *d)
{
	int64_t s = 0;
	for (size_t i = 0; i < d->nrows; i++)
		s += d->rows[i].delta_ns;
	return s;
}

static void normalization_merges_template_noise_but_keeps_distinct_kernels(void **state)
{
	(void)state;
	struct kp_arena a;
	arena_init(&a);
	/* 2022 vs 2026 spelling of one instantiation */
	assert_string_equal(
		diff_normalize_kernel(
			&a,
			"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)"),
		"at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1>>");
	assert_string_equal(diff_normalize_kernel(&a, "void k<int,float>(int *, float)"),
			    "k<int, float>");
	/* vector width 4 vs 2 is a different kernel */
	assert_string_not_equal(diff_normalize_kernel(&a, "void k<4, F>(int)"),
				diff_normalize_kernel(&a, "void k<2, F>(int)"));
	/* identifiers ending in digits and letters keep them: sm90, 128x256x64, 5x */
	assert_string_equal(diff_normalize_kernel(&a,
						  "sm90_xmma_gemm_bf16bf16_tn_128x256x64_5x_cublas"),
			    "sm90_xmma_gemm_bf16bf16_tn_128x256x64_5x_cublas");
	assert_string_equal(diff_normalize_kernel(&a, "void f<unsigned int, 3u>(unsigned int)"),
			    "f<unsigned int, 3>");
	assert_string_equal(diff_normalize_kernel(&a, "Memcpy HtoD (Pageable -> Device)"),
			    "Memcpy HtoD (Pageable -> Device)");
	/* Inductor's per-graph counter, only on triton_ kernels and only a trailing _N */
	assert_string_equal(diff_normalize_kernel(&a, "triton_poi_fused_add_cos_sin_0"),
			    "triton_poi_fused_add_cos_sin");
	assert_string_equal(diff_normalize_kernel(&a, "triton_red_fused_sum_12"),
			    "triton_red_fused_sum");
	assert_string_equal(diff_normalize_kernel(&a, "triton_poi_fused_add"),
			    "triton_poi_fused_add");
	assert_string_equal(diff_normalize_kernel(&a, "my_kernel_3"), "my_kernel_3");
	/* each step: the signature's outermost (...), spaces, literal suffixes, the index */
	assert_string_equal(diff_normalize_kernel(&a, "void k<F>(void (*)(int), int)"), "k<F>");
	assert_string_equal(diff_normalize_kernel(&a, "void (int)"), "(int)");
	assert_string_equal(diff_normalize_kernel(&a, "void k<a  b ,  c  *>(x"), "k<a b, c*>(x");
	assert_string_equal(diff_normalize_kernel(&a, "k<2ULx, 7lu, 5u_>"), "k<2ULx, 7, 5u_>");
	assert_string_equal(diff_normalize_kernel(&a, "triton__3"), "triton__3");
	assert_string_equal(
		diff_normalize_kernel(
			&a,
			"void (anonymous namespace)::softmax_warp_forward<float, 10, true>(float*)"),
		"(anonymous namespace)::softmax_warp_forward<float, 10, true>");
	arena_free(&a);
}

static void kernel_rows_join_by_normalized_name_and_one_sided_rows_are_tagged(void **state)
{
	(void)state;
	struct kp_row b[] = {
		row("void k<4, F>(int)", 1000, 10),
		row("void k<4, F >(int)", 500, 5), /* same key after normalization: merged */
		row("gone_kernel", 300, 3),
	};
	struct kp_row n[] = {
		row("void k<4,F>(int, float)", 1600, 16),
		row("new_kernel", 200, 1),
	};
	struct kp_diff_opts o = kopts(GROUP_KERNEL);
	struct kp_diff d;
	diff_join(&d, b, 3, n, 2, &o, NULL, NULL);
	assert_int_equal(d.nrows, 3);
	const struct kp_diff_row *k = find(&d, "k<4, F>");
	assert_non_null(k);
	assert_int_equal(k->base_ns, 1500);
	assert_int_equal(k->new_ns, 1600);
	assert_int_equal(k->delta_ns, 100);
	assert_true(fabs(k->ratio - 1600.0 / 1500.0) < 1e-12);
	assert_true(k->base_calls == 15 && k->new_calls == 16);
	assert_int_equal(k->status, DIFF_CHANGED);
	const struct kp_diff_row *g = find(&d, "gone_kernel");
	assert_int_equal(g->status, DIFF_GONE);
	assert_false(g->has_new);
	assert_true(g->ratio < 0);
	assert_int_equal(g->delta_ns, -300);
	const struct kp_diff_row *w = find(&d, "new_kernel");
	assert_int_equal(w->status, DIFF_NEW);
	assert_int_equal(d.sum.base_ns, 1800);
	assert_int_equal(d.sum.new_ns, 1800);
	assert_int_equal(d.sum.matched, 1);
	assert_int_equal(d.sum.regressed, 1);
	assert_int_equal(d.sum.added, 1);
	assert_int_equal(d.sum.removed, 1);
	assert_int_equal(delta_sum(&d), d.sum.new_ns - d.sum.base_ns);
	/* shares: 1500/1800 -> 1600/1800 */
	assert_true(fabs(k->share_pt - 100.0 * 100 / 1800) < 1e-9);
	diff_free(&d);

	/* --name=full: the raw names do not pair */
	o.full_names = 1;
	diff_join(&d, b, 3, n, 2, &o, NULL, NULL);
	assert_int_equal(d.nrows, 5);
	assert_int_equal(d.sum.matched, 0);
	diff_free(&d);
}

static void op_shape_pairs_across_dtypes_and_shows_both(void **state)
{
	(void)state;
	struct kp_row b[] = {
		shaped("aten::mm", "[8192,8192]x[8192,8192]", "bf16", 1368607, 1),
		shaped("aten::mm", "[1024,1024]x[1024,1024]", "bf16", 6241, 1),
	};
	struct kp_row n[] = {
		shaped("aten::mm", "[8192,8192]x[8192,8192]", "fp16", 1426376, 1),
		shaped("aten::mm", "[1024,1024]x[1024,1024]", "fp16", 6240, 1),
	};
	struct kp_diff_opts o = kopts(GROUP_OP_SHAPE);
	struct kp_diff d;
	diff_join(&d, b, 2, n, 2, &o, NULL, NULL);
	assert_int_equal(d.nrows, 2);
	assert_int_equal(d.sum.matched, 2);
	assert_int_equal(d.sum.cross_dtype, 2);
	const struct kp_diff_row *r = find(&d, "aten::mm [8192,8192]x[8192,8192] bf16->fp16");
	assert_non_null(r);
	assert_string_equal(r->name, "aten::mm [8192,8192]x[8192,8192] bf16->fp16");
	assert_true(r->cross_dtype);
	assert_string_equal(r->base_dtype, "bf16");
	assert_string_equal(r->new_dtype, "fp16");
	assert_true(r->ratio > 1.04 && r->ratio < 1.043);
	assert_int_equal(r->status, DIFF_CHANGED);
	r = find(&d, "aten::mm [1024,1024]x[1024,1024] bf16->fp16");
	assert_int_equal(r->status, DIFF_UNCHANGED);
	assert_int_equal(d.sum.unchanged, 1);
	assert_int_equal(d.sum.regressed, 1);
	/* geomean of base/new over the two matched rows */
	double gm = sqrt((1368607.0 / 1426376.0) * (6241.0 / 6240.0));
	assert_true(fabs(d.sum.geomean_speedup - gm) < 1e-12);
	diff_free(&d);
}

static void op_shape_pairs_exact_dtypes_first_and_keeps_dtypes_apart_within_a_trace(void **state)
{
	(void)state;
	/* base: 3 bf16 calls and 1 fp32 call of one shape; new: 4 bf16 calls, 1 fp16 call */
	struct kp_row b[] = {
		shaped("aten::addmm", "[4096]x[4096,1024]x[1024,4096]", "bf16", 600, 3),
		shaped("aten::addmm", "[4096]x[4096,1024]x[1024,4096]", "fp32", 3000, 1),
		shaped("aten::gelu", "[4096,4096]", "bf16", 100, 1),
	};
	struct kp_row n[] = {
		shaped("aten::addmm", "[4096]x[4096,1024]x[1024,4096]", "bf16", 800, 4),
		shaped("aten::addmm", "[4096]x[4096,1024]x[1024,4096]", "fp16", 210, 1),
		shaped("aten::gelu", "[4096,4096]", "fp32", 120, 1),
		shaped("aten::gelu", "[4096,4096]", "fp16", 110, 1),
	};
	struct kp_diff_opts o = kopts(GROUP_OP_SHAPE);
	struct kp_diff d;
	diff_join(&d, b, 3, n, 4, &o, NULL, NULL);
	/* the fp32 call is its own row, not merged into the bf16 row */
	const struct kp_diff_row *r = find(&d, "aten::addmm [4096]x[4096,1024]x[1024,4096] bf16");
	assert_non_null(r);
	assert_false(r->cross_dtype);
	assert_int_equal(r->base_ns, 600);
	assert_int_equal(r->new_ns, 800);
	r = find(&d, "aten::addmm [4096]x[4096,1024]x[1024,4096] fp32->fp16");
	assert_non_null(r);
	assert_int_equal(r->base_ns, 3000);
	assert_int_equal(r->new_ns, 210);
	/* two leftovers in new: the bigger one (fp32, 120 ns) pairs; fp16 stays new */
	r = find(&d, "aten::gelu [4096,4096] bf16->fp32");
	assert_non_null(r);
	assert_int_equal(r->new_ns, 120);
	r = find(&d, "aten::gelu [4096,4096] fp16");
	assert_non_null(r);
	assert_int_equal(r->status, DIFF_NEW);
	assert_int_equal(d.nrows, 4);
	assert_int_equal(d.sum.matched, 3);
	assert_int_equal(d.sum.cross_dtype, 2);
	assert_int_equal(d.sum.added, 1);
	assert_int_equal(delta_sum(&d), d.sum.new_ns - d.sum.base_ns);
	diff_free(&d);

	/* TF32 math is part of the exact key: fp32/tf32 and fp32 pair only as leftovers */
	struct kp_row b2[] = { shaped("aten::mm", "[8,8]x[8,8]", "fp32", 100, 1) };
	struct kp_row n2[] = { shaped("aten::mm", "[8,8]x[8,8]", "fp32", 40, 1) };
	b2[0].prec = "fp32";
	n2[0].prec = "tf32";
	diff_join(&d, b2, 1, n2, 1, &o, NULL, NULL);
	assert_int_equal(d.nrows, 1);
	assert_string_equal(d.rows[0].key, "aten::mm [8,8]x[8,8] fp32->fp32/tf32");
	diff_free(&d);
}

static void out_variants_pair_with_the_functional_op(void **state)
{
	(void)state;
	struct kp_arena a;
	arena_init(&a);
	/* Inductor's extern_kernels.mm(a, b, out=buf) records the output as a third slot */
	assert_string_equal(diff_functional_shape(&a, "aten::mm", "[256,512]x[512,768]x[256,768]"),
			    "[256,512]x[512,768]");
	assert_string_equal(diff_functional_shape(&a, "aten::mm", "[256,512]x[512,768]"),
			    "[256,512]x[512,768]");
	assert_string_equal(diff_functional_shape(&a, "aten::addmm",
						  "[768]x[256,512]x[512,768]x[256,768]"),
			    "[768]x[256,512]x[512,768]");
	assert_string_equal(diff_functional_shape(&a, "aten::baddbmm",
						  "[8,256,768]x[8,256,512]x[8,512,768]x[8,256,768]"),
			    "[8,256,768]x[8,256,512]x[8,512,768]");
	/* not in the table, or not exactly one slot more: unchanged */
	assert_string_equal(diff_functional_shape(&a, "aten::cat", "{[2,3],[2,3]}x[4,3]"),
			    "{[2,3],[2,3]}x[4,3]");
	assert_string_equal(diff_functional_shape(&a, "aten::mm", "[1]x[2]x[3]x[4]"),
			    "[1]x[2]x[3]x[4]");
	/* separators inside a tensor list do not count */
	assert_string_equal(diff_functional_shape(&a, "aten::bmm", "[2,2,2]x[2,2,2]"),
			    "[2,2,2]x[2,2,2]");
	arena_free(&a);

	struct kp_row b[] = { shaped("aten::mm", "[256,512]x[512,768]", "bf16", 1000, 1) };
	struct kp_row n[] = { shaped("aten::mm", "[256,512]x[512,768]x[256,768]", "bf16", 900, 1) };
	struct kp_diff_opts o = kopts(GROUP_OP_SHAPE);
	struct kp_diff d;
	diff_join(&d, b, 1, n, 1, &o, NULL, NULL);
	assert_int_equal(d.nrows, 1);
	assert_int_equal(d.sum.matched, 1);
	assert_string_equal(d.rows[0].key, "aten::mm [256,512]x[512,768] bf16");
	diff_free(&d);
}

static void identical_inputs_give_zero_deltas_and_pass_a_zero_gate(void **state)
{
	(void)state;
	struct kp_row b[] = { row("a", 123457, 3), row("b", 1, 1), row("c", 0, 1) };
	struct kp_diff_opts o = kopts(GROUP_KERNEL);
	o.base_div = o.new_div = 3; /* per step: the rounding is the same on both sides */
	o.per_step = 1;
	struct kp_diff d;
	diff_join(&d, b, 3, b, 3, &o, NULL, NULL);
	for (size_t i = 0; i < d.nrows; i++) {
		assert_int_equal(d.rows[i].delta_ns, 0);
		assert_int_equal(d.rows[i].status, DIFF_UNCHANGED);
	}
	assert_true(d.sum.total_ratio == 1);
	assert_true(d.sum.geomean_speedup == 1);
	struct kp_gate_hit h[4];
	struct kp_gate_opts g = gopts(0, 0, 0);
	assert_int_equal(diff_gate(&d, &g, h, 4), 0);
	diff_free(&d);
}

static void per_step_divides_times_and_calls_and_deltas_still_sum_to_the_total(void **state)
{
	(void)state;
	struct kp_row b[] = { row("x", 3000, 30), row("y", 1001, 3), row("z", 1000, 1) };
	struct kp_row n[] = { row("x", 5000, 50), row("y", 1001, 5), row("w", 7, 1) };
	struct kp_diff_opts o = kopts(GROUP_KERNEL);
	o.base_div = 3;
	o.new_div = 5;
	o.per_step = 1;
	struct kp_diff d;
	diff_join(&d, b, 3, n, 3, &o, NULL, NULL);
	const struct kp_diff_row *x = find(&d, "x");
	/* 1000 ns and 10 calls per step on both sides: unchanged */
	assert_int_equal(x->base_ns, 1000);
	assert_int_equal(x->new_ns, 1000);
	assert_true(x->base_calls == 10 && x->new_calls == 10);
	assert_int_equal(x->status, DIFF_UNCHANGED);
	const struct kp_diff_row *y = find(&d, "y");
	assert_int_equal(y->base_ns, 334); /* 333.67 rounded */
	assert_int_equal(y->new_ns, 200);  /* 200.2 rounded */
	/* the ratio is taken before rounding */
	assert_true(fabs(y->ratio - (1001.0 / 5) / (1001.0 / 3)) < 1e-12);
	assert_int_equal(d.base.time_ns, 1000 + 334 + 333);
	assert_int_equal(d.new.time_ns, 1000 + 200 + 1);
	assert_int_equal(delta_sum(&d), d.new.time_ns - d.base.time_ns);
	assert_int_equal(d.sum.delta_ns, d.new.time_ns - d.base.time_ns);
	diff_free(&d);
}

static void threshold_is_the_noise_floor(void **state)
{
	(void)state;
	struct kp_row b[] = { row("a", 10000, 1), row("b", 10000, 1), row("c", 10000, 1) };
	struct kp_row n[] = { row("a", 10200, 1), row("b", 10201, 1), row("c", 9700, 1) };
	struct kp_diff_opts o = kopts(GROUP_KERNEL);
	struct kp_diff d;
	diff_join(&d, b, 3, n, 3, &o, NULL, NULL);
	assert_int_equal(find(&d, "a")->status, DIFF_UNCHANGED); /* exactly 2% */
	assert_int_equal(find(&d, "b")->status, DIFF_CHANGED);
	assert_int_equal(find(&d, "c")->status, DIFF_CHANGED);
	assert_int_equal(d.sum.unchanged, 1);
	assert_int_equal(d.sum.regressed, 1);
	assert_int_equal(d.sum.improved, 1);
	diff_free(&d);
	o.threshold_pct = 5;
	diff_join(&d, b, 3, n, 3, &o, NULL, NULL);
	assert_int_equal(d.sum.unchanged, 3);
	diff_free(&d);
}

static void gate_trips_on_the_total_a_big_row_or_a_new_row_and_not_in_reverse(void **state)
{
	(void)state;
	struct kp_row b[] = { row("big", 9000, 1), row("small", 1000, 1), row("gone", 50, 1) };
	struct kp_row n[] = { row("big", 9100, 1), row("small", 1500, 1), row("new", 5000, 1) };
	struct kp_diff_opts o = kopts(GROUP_KERNEL);
	struct kp_diff d;
	struct kp_gate_hit h[8];
	char msg[256];
	diff_join(&d, b, 3, n, 3, &o, NULL, NULL);
	assert_int_equal(diff_sort(&d, NULL, &(const char *){ NULL }), 0);
	/* total 10050 -> 15600 (+55.2%); new +5000; small +50%; big +1.1% */
	struct kp_gate_opts g = gopts(10, 0, 0);
	size_t k = diff_gate(&d, &g, h, 8);
	assert_int_equal(k, 3);
	assert_null(h[0].key);
	assert_string_equal(h[1].key, "new");
	assert_int_equal(h[1].status, DIFF_NEW);
	assert_string_equal(h[2].key, "small");
	diff_gate_message(&h[2], &g, msg, sizeof(msg));
	assert_string_equal(
		msg,
		"'small' 1.000 us -> 1.500 us: +500 ns (+50.0%), limit 10%, floor 0 ns, noise N/A");
	diff_gate_message(&h[1], &g, msg, sizeof(msg));
	assert_string_equal(msg, "'new' (new) 5.000 us: +5.000 us, floor 0 ns, noise N/A");
	diff_gate_message(&h[0], &g, msg, sizeof(msg));
	assert_string_equal(
		msg,
		"total GPU time 10.050 us -> 15.600 us: +5.550 us (+55.2%), limit 10%, floor 0 ns, noise N/A");
	/* --min-pct 20: "small" holds 9.95% of base time; "new" 32% of new time */
	g = gopts(10, 20, 0);
	assert_int_equal(diff_gate(&d, &g, h, 8), 2);
	/* the floor: changes of 500 ns or less never trip, whatever the percentage */
	g = gopts(10, 0, 500);
	assert_int_equal(diff_gate(&d, &g, h, 8), 2);
	g = gopts(10, 0, 499);
	assert_int_equal(diff_gate(&d, &g, h, 8), 3);
	/* above the total's change: only the new row */
	g = gopts(60, 0, 0);
	assert_int_equal(diff_gate(&d, &g, h, 8), 1);
	/* the cap bounds what is filled, not the count */
	g = gopts(1, 0, 0);
	assert_int_equal(diff_gate(&d, &g, h, 1), 4);
	diff_free(&d);

	/* reversed: everything got faster, the new row is gone */
	diff_join(&d, n, 3, b, 3, &o, NULL, NULL);
	g = gopts(0, 0, 0);
	assert_int_equal(diff_gate(&d, &g, h, 8), 1); /* "gone" of 50 ns is new here */
	assert_string_equal(h[0].key, "gone");
	g = gopts(0, 0, 50);
	assert_int_equal(diff_gate(&d, &g, h, 8), 0);
	diff_free(&d);
}

static void per_key_limits_match_keys_or_op_names_and_the_last_rule_wins(void **state)
{
	(void)state;
	struct kp_arena a;
	arena_init(&a);
	struct kp_gate_rule *rules = NULL;
	size_t n = 0, cap = 0;
	double global = -1;
	assert_null(diff_gate_parse_limit(&a, "5", 1, &global, &rules, &n, &cap));
	assert_true(global == 5);
	assert_null(diff_gate_parse_limit(&a, "aten::mm=1", 10, &global, &rules, &n, &cap));
	assert_string_equal(diff_gate_parse_limit(&a, "x=", 2, &global, &rules, &n, &cap),
			    "expected PCT or PATTERN=PCT");
	assert_string_equal(diff_gate_parse_limit(&a, "x=-1", 4, &global, &rules, &n, &cap),
			    "expected PATTERN=PCT with PCT a number >= 0");
	assert_string_equal(diff_gate_parse_limit(&a, "=3", 2, &global, &rules, &n, &cap),
			    "empty pattern before '='");
	assert_string_equal(diff_gate_parse_limit(&a, "fast", 4, &global, &rules, &n, &cap),
			    "expected PCT (a number >= 0) or PATTERN=PCT");
	const char file[] = "# team limits\n  nvjet_*=20\n\n*gelu* [4096,4096] bf16=0.5\n3\n";
	struct kp_diag d = { 0 };
	assert_int_equal(diff_gate_parse_file(&a, file, strlen(file), "gate.txt", &global, &rules,
					      &n, &cap, &d),
			 0);
	assert_int_equal(n, 3);
	assert_true(global == 3);
	assert_string_equal(rules[2].pattern, "*gelu* [4096,4096] bf16");
	const char bad[] = "aten::mm=1\naten::bmm=two\n";
	assert_int_equal(diff_gate_parse_file(&a, bad, strlen(bad), "gate.txt", &global, &rules, &n,
					      &cap, &d),
			 -1);
	assert_string_equal(d.msg,
			    "gate.txt:2: error: expected PATTERN=PCT with PCT a number >= 0");
	assert_int_equal(d.status, KP_BADINPUT);
	assert_int_equal(n, 4); /* the bad file's first line was read */

	struct kp_gate_opts g = { .fail_above_pct = 3, .rules = rules, .nrules = n };
	/* op-shape keys: "aten::mm" matches the op name */
	assert_true(diff_gate_limit(&g, "aten::mm [8,8]x[8,8] bf16", 1) == 1);
	assert_true(diff_gate_limit(&g, "aten::mm [8,8]x[8,8] bf16", 0) == 3);
	assert_true(diff_gate_limit(&g, "aten::gelu [4096,4096] bf16", 1) == 0.5);
	assert_true(diff_gate_limit(&g, "nvjet_sm90_tst_256x128", 0) == 20);
	assert_true(diff_gate_limit(&g, "xnvjet_sm90", 0) == 3);
	/* a later rule wins */
	assert_true(n < cap);
	rules[n] = (struct kp_gate_rule){ "aten::*", 7 };
	g.nrules = n + 1;
	assert_true(diff_gate_limit(&g, "aten::mm [8,8]x[8,8] bf16", 1) == 7);
	free(rules);
	arena_free(&a);
}

/*
 * A synthetic program recorded twice: per-step jitter of a few percent on every row.  The
 * gate passes the same program at --fail-above 2 and trips on a real +20% row, naming it.
 */
struct synth {
	int64_t steps[3][8];
	struct kp_row rows[3];
};

static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

static void synth_trace(struct synth *t, uint64_t seed, double slow_b)
{
	static const char *const names[3] = { "gemm_a", "gemm_b", "elementwise" };
	static const int64_t mean_ns[3] = { 400000, 200000, 30000 };
	for (int r = 0; r < 3; r++) {
		t->rows[r] = row(names[r], 0, 8);
		t->rows[r].step_ns = t->steps[r];
		for (int s = 0; s < 8; s++) {
			/* +-8% uniform jitter per step */
			double j = ((double)(lcg(&seed) % 16001) - 8000) / 100000.0;
			double v = (double)mean_ns[r] * (1 + j) * (r == 1 ? slow_b : 1);
			t->steps[r][s] = (int64_t)v;
			t->rows[r].time_ns += t->steps[r][s];
		}
	}
}

static void noise_gate_passes_jitter_and_trips_on_a_real_regression(void **state)
{
	(void)state;
	struct synth base, same, slow;
	synth_trace(&base, 1, 1);
	synth_trace(&same, 2, 1);
	synth_trace(&slow, 3, 1.2);
	struct kp_diff_opts o = kopts(GROUP_KERNEL);
	o.base_div = o.new_div = 8;
	o.per_step = 1;
	o.how = NORM_PER_STEP;
	o.base_steps = o.new_steps = 8;
	struct kp_gate_opts g = gopts(2, 0, KP_MIN_DELTA_NS);
	struct kp_gate_hit h[8];
	struct kp_diff d;

	diff_join(&d, base.rows, 3, same.rows, 3, &o, NULL, NULL);
	assert_true(d.sum.noise_steps);
	/* jitter alone moves some row past 2%: without the noise estimate it would trip */
	int past = 0;
	for (size_t i = 0; i < d.nrows; i++)
		past |= fabs(d.rows[i].ratio - 1) > 0.02 && d.rows[i].delta_ns > KP_MIN_DELTA_NS;
	assert_true(past);
	for (size_t i = 0; i < d.nrows; i++)
		assert_true(d.rows[i].noise_ns > 0);
	assert_int_equal(diff_gate(&d, &g, h, 8), 0);
	diff_free(&d);

	diff_join(&d, base.rows, 3, slow.rows, 3, &o, NULL, NULL);
	size_t k = diff_gate(&d, &g, h, 8);
	assert_true(k >= 1);
	assert_string_equal(h[k - 1].key, "gemm_b");
	assert_true(h[k - 1].change_pct > 15 && h[k - 1].change_pct < 25);
	assert_true(h[k - 1].noise_ns > 0 && h[k - 1].delta_ns > h[k - 1].noise_ns);
	diff_free(&d);

	/* noise = k x pooled sd x sqrt(1/nb + 1/nn): series {1,2,3} and {2,3,4} -> sd 1 */
	int64_t sb[3] = { 1000, 2000, 3000 }, sn[3] = { 2000, 3000, 4000 };
	struct kp_row b1 = row("x", 6000, 3), n1 = row("x", 9000, 3);
	b1.step_ns = sb;
	n1.step_ns = sn;
	o.base_div = o.new_div = 3;
	o.base_steps = o.new_steps = 3;
	diff_join(&d, &b1, 1, &n1, 1, &o, NULL, NULL);
	assert_true(fabs(d.rows[0].noise_ns - 3 * 1000 * sqrt(2.0 / 3)) < 1e-6);
	assert_true(fabs(d.sum.noise_ns - d.rows[0].noise_ns) < 1e-6);
	diff_free(&d);
	/* fewer than 3 steps on a side, or --steps: no estimate */
	o.new_steps = 2;
	diff_join(&d, &b1, 1, &n1, 1, &o, NULL, NULL);
	assert_true(d.rows[0].noise_ns < 0 && d.sum.noise_ns < 0);
	diff_free(&d);
}

static void sort_defaults_to_absolute_delta_and_rejects_unknown_keys(void **state)
{
	(void)state;
	struct kp_row b[] = { row("a", 100, 1), row("b", 1000, 1), row("c", 500, 1) };
	struct kp_row n[] = { row("a", 400, 1), row("b", 500, 1), row("c", 510, 1) };
	struct kp_diff_opts o = kopts(GROUP_KERNEL);
	struct kp_diff d;
	const char *bad = NULL;
	diff_join(&d, b, 3, n, 3, &o, NULL, NULL);
	assert_int_equal(diff_sort(&d, NULL, &bad), 0);
	assert_string_equal(d.rows[0].key, "b"); /* -500 */
	assert_string_equal(d.rows[1].key, "a"); /* +300 */
	assert_string_equal(d.rows[2].key, "c"); /* +10 */
	assert_int_equal(diff_sort(&d, "delta", &bad), 0);
	assert_string_equal(d.rows[0].key, "a");
	assert_string_equal(d.rows[2].key, "b");
	assert_int_equal(diff_sort(&d, "ratio:asc", &bad), 0);
	assert_string_equal(d.rows[0].key, "b");
	assert_int_equal(diff_sort(&d, "name", &bad), 0);
	assert_string_equal(d.rows[0].key, "a");
	assert_int_equal(diff_sort(&d, "base,nope", &bad), -1);
	assert_string_equal(bad, "nope");
	assert_int_equal(diff_sort(&d, "delta:up", &bad), -1);
	assert_string_equal(bad, "delta:up");
	diff_free(&d);
}

static void folding_keeps_the_delta_sum_in_the_others_row(void **state)
{
	(void)state;
	struct kp_row b[] = { row("a", 1000, 1), row("b", 800, 2), row("c", 30, 3),
			      row("d", 20, 1) };
	struct kp_row n[] = { row("a", 1500, 1), row("b", 700, 2), row("c", 60, 4),
			      row("e", 15, 1) };
	struct kp_diff_opts o = kopts(GROUP_KERNEL);
	struct kp_diff d;
	const char *bad;
	diff_join(&d, b, 4, n, 4, &o, NULL, NULL);
	int64_t total = d.sum.new_ns - d.sum.base_ns;
	diff_sort(&d, NULL, &bad);
	diff_select(&d, 2, 0);
	assert_int_equal(d.nrows, 3);
	const struct kp_diff_row *x = &d.rows[2];
	assert_int_equal(x->status, DIFF_OTHERS);
	assert_string_equal(x->name, "(others: 3 kernels)");
	assert_int_equal(x->base_ns, 50);
	assert_int_equal(x->new_ns, 75);
	assert_true(x->base_calls == 4 && x->new_calls == 5);
	assert_int_equal(delta_sum(&d), total);
	diff_free(&d);

	/* --min-pct: a row big on either side stays */
	diff_join(&d, b, 4, n, 4, &o, NULL, NULL);
	diff_sort(&d, NULL, &bad);
	diff_select(&d, 0, 2);
	assert_int_equal(d.nrows, 4); /* a, b, c (2.6% of new), others {d, e} */
	assert_non_null(find(&d, "c"));
	assert_int_equal(delta_sum(&d), total);
	diff_free(&d);
}

static void rates_of_merged_rows_follow_analyze(void **state)
{
	(void)state;
	struct kp_row b[] = { row("void g<1>(int)", 1000, 1), row("void g<1ul>(int)", 1000, 1) };
	b[0].flops = 2000000; /* 2e6 FLOP in 1 us = 2 TFLOP/s */
	b[0].peak_flop_ns = 1e15 * 1000;
	b[1].flops = 6000000;
	b[1].peak_flop_ns = 1e15 * 1000;
	struct kp_row n[] = { row("void g<1>(int)", 4000, 2) };
	struct kp_diff_opts o = kopts(GROUP_KERNEL);
	struct kp_diff d;
	diff_join(&d, b, 2, n, 1, &o, NULL, NULL);
	assert_int_equal(d.nrows, 1);
	const struct kp_diff_row *r = &d.rows[0];
	assert_true(fabs(r->base_flops_per_s - 4e12) < 1);
	assert_true(fabs(r->base_pct_peak - 0.4) < 1e-9);
	assert_true(r->new_flops_per_s < 0 && r->new_pct_peak < 0);
	diff_free(&d);
}

static void renderers_write_null_for_a_missing_side(void **state)
{
	(void)state;
	struct kp_row b[] = { row("a", 1000, 1), row("g", 10, 1) };
	struct kp_row n[] = { row("a", 2000, 1) };
	struct kp_diff_opts o = kopts(GROUP_KERNEL);
	struct kp_diff d;
	const char *bad;
	diff_join(&d, b, 2, n, 1, &o, NULL, NULL);
	diff_sort(&d, NULL, &bad);
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct kp_diff_doc_opts ro = { .gate = NULL };
	struct kp_doc doc;
	diff_doc(&d, &ro, &doc);
	table_render(&doc, FMT_CSV, 0, fp);
	fclose(fp);
	assert_non_null(
		strstr(buf, "key,status,base_time_ns,new_time_ns,delta_ns,ratio,share_pt,"));
	assert_non_null(strstr(buf, "\r\na,changed,1000,2000,1000,2,"));
	assert_non_null(strstr(buf, "\r\ng,gone,10,,-10,,"));
	free(buf);

	fp = open_memstream(&buf, &len);
	table_render(&doc, FMT_TABLE, 0, fp);
	doc_free(&doc);
	fclose(fp);
	assert_non_null(strstr(buf, "  1.000 us  2.000 us  +1.000 us  2.000x"));
	assert_non_null(strstr(buf, "  g (gone)\n"));
	assert_non_null(strstr(buf, "N/A"));
	free(buf);
	diff_free(&d);
}

static const char *tdata(char *buf, size_t cap, const char *rel)
{
	const char *dir = getenv("KPROF_TESTDATA");
	snprintf(buf, cap, "%s/%s", dir ? dir : "../../testdata", rel);
	return buf;
}

static void run_joins_two_traces_gates_and_refuses_per_step_without_steps(void **state)
{
	(void)state;
	char b[512], n[512];
	struct kp_diag dd = { 0 };
	struct kp_devdb db;
	assert_int_equal(devdb_load_builtin(&db, &dd), 0);
	struct kp_diff_run_opts o = {
		.path = { tdata(b, sizeof(b), "torch211-h100/matmul_bf16.json"),
			  tdata(n, sizeof(n), "torch211-h100/matmul_fp16.json") },
		.analyze = { .group = GROUP_KERNEL, .db = &db },
		.diff = { .key = GROUP_KERNEL, .threshold_pct = 2, .base_div = 1, .new_div = 1 },
		.per_step = -1,
		.top = 3,
		.gate = { .fail_above_pct = 0, .min_delta_ns = KP_MIN_DELTA_NS },
	};
	const char *bad;
	assert_int_equal(sort_parse(&o.sort, SORT_DIFF, NULL, &bad), 0);
	struct kp_diff_run run;
	/* fp16 is 3.9% slower in total: a 0% gate trips on the total first */
	assert_int_equal(diff_run(&run, &o), KP_REGRESSION);
	assert_true(run.nhits >= 1);
	assert_null(run.hits[0].key);
	assert_int_equal(run.diff.nrows, 4); /* 3 rows and (others) */
	assert_int_equal(run.diff.rows[3].status, DIFF_OTHERS);
	diff_run_free(&run);

	o.per_step = 1;
	assert_int_equal(diff_run(&run, &o), KP_USAGE);
	assert_non_null(strstr(run.err.msg, "--per-step: no ProfilerStep spans in"));
	diff_run_free(&run);

	o.per_step = -1;
	o.path[1] = tdata(n, sizeof(n), "no-such-trace.json");
	assert_int_equal(diff_run(&run, &o), KP_ENV);
	assert_true(run.loaded[0] && !run.loaded[1]);
	diff_run_free(&run);
	devdb_free(&db);
}

/* expected module rows: "A/B/C [bwd]" at depth 3 and its base and new GPU ns */
struct mod_sum {
	char key[512];
	int64_t ns[2];
};

/* @path cut after its @depth-th module, its " [bwd]" kept ("(no module)" as it is) */
static void cut_path(const char *path, int depth, char *out, size_t cap)
{
	const char *bwd = strstr(path, " [bwd]");
	size_t n = bwd ? (size_t)(bwd - path) : strlen(path), k = 0;
	int d = 1;
	while (k < n && !(path[k] == '/' && d == depth))
		d += path[k++] == '/';
	snprintf(out, cap, "%.*s%s", (int)k, path, bwd ? " [bwd]" : "");
}

/* analyze -g module (full depth) of @path, each row added to its depth-3 path's side @side */
static void add_module_rows(const char *path, const struct kp_devdb *db, int side,
			    struct mod_sum *m, size_t *n, size_t cap)
{
	struct kp_pipeline_in in = { .path = path, .db = db, .analyze = { .group = GROUP_MODULE } };
	struct kp_pipeline_out o;
	assert_int_equal(pipeline_run(&in, &o), 0);
	for (size_t i = 0; i < o.report.nrows; i++) {
		char k[512];
		cut_path(o.report.rows[i].name, 3, k, sizeof(k));
		size_t j = 0;
		while (j < *n && strcmp(m[j].key, k))
			j++;
		if (j == *n) {
			assert_true(*n < cap);
			memset(&m[j], 0, sizeof(m[j]));
			snprintf(m[j].key, sizeof(m[j].key), "%s", k);
			(*n)++;
		}
		m[j].ns[side] += o.report.rows[i].time_ns;
	}
	pipeline_free(&o);
}

/*
 * H200 llama, layer 1's MLP 2x wider in new (testdata/README.md): diff --key module --depth 3
 * has, per module, the time analyze -g module gives its submodules on each side, and names
 * layer 1 first; forward and backward together, layer 1 grew more than any other path.
 */
static void module_key_pairs_paths_and_names_the_wider_layer_first(void **state)
{
	(void)state;
	char b[512], n[512];
	struct kp_diag dd = { 0 };
	struct kp_devdb db;
	assert_int_equal(devdb_load_builtin(&db, &dd), 0);
	tdata(b, sizeof(b), "torch211-h200/llama_eager.json.gz");
	tdata(n, sizeof(n), "torch211-h200/llama_wide.json.gz");
	struct mod_sum m[64];
	size_t nm = 0;
	add_module_rows(b, &db, 0, m, &nm, 64);
	add_module_rows(n, &db, 1, m, &nm, 64);

	struct kp_diff_run_opts o = {
		.path = { b, n },
		.analyze = { .group = GROUP_MODULE, .depth = 3, .db = &db },
		.diff = { .key = GROUP_MODULE, .depth = 3, .threshold_pct = 2, .base_div = 1,
			  .new_div = 1 },
		.per_step = -1,
		.gate = { .fail_above_pct = -1, .min_delta_ns = KP_MIN_DELTA_NS },
	};
	const char *bad;
	assert_int_equal(sort_parse(&o.sort, SORT_DIFF, NULL, &bad), 0);
	struct kp_diff_run run;
	assert_int_equal(diff_run(&run, &o), KP_OK);
	assert_int_equal(run.diff.nrows, nm);
	for (size_t i = 0; i < run.diff.nrows; i++) {
		const struct kp_diff_row *r = &run.diff.rows[i];
		size_t j = 0;
		while (j < nm && strcmp(m[j].key, r->key))
			j++;
		assert_true(j < nm);
		assert_int_equal(r->base_ns, m[j].ns[0]);
		assert_int_equal(r->new_ns, m[j].ns[1]);
		assert_int_equal(r->delta_ns, m[j].ns[1] - m[j].ns[0]);
	}
	assert_string_equal(run.diff.rows[0].key,
			    "LlamaForCausalLM_0/LlamaModel_0/LlamaDecoderLayer_1 [bwd]");
	/* forward and backward together: no other path grew as much ("(no module)" included) */
	const char *layer1 = "LlamaForCausalLM_0/LlamaModel_0/LlamaDecoderLayer_1";
	int64_t grew = 0, most_other = 0;
	for (size_t j = 0; j < nm; j++) {
		int64_t d = m[j].ns[1] - m[j].ns[0];
		if (!strncmp(m[j].key, layer1, strlen(layer1)))
			grew += d;
		else if (d > most_other)
			most_other = d;
	}
	assert_true(grew > most_other);
	diff_run_free(&run);
	devdb_free(&db);
}

/* H200 recordings (tests/gpu/record_gate.py): per-step series come from ProfilerStep spans */
static void run_passes_an_unchanged_recording_and_trips_on_an_fp32_layer(void **state)
{
	(void)state;
	char b[512], n[512];
	struct kp_diag dd = { 0 };
	struct kp_devdb db;
	assert_int_equal(devdb_load_builtin(&db, &dd), 0);
	struct kp_diff_run_opts o = {
		.path = { tdata(b, sizeof(b), "torch211-h200-gate/train_a.json.gz"),
			  tdata(n, sizeof(n), "torch211-h200-gate/train_b.json.gz") },
		.analyze = { .group = GROUP_OP_SHAPE, .db = &db },
		.diff = { .key = GROUP_OP_SHAPE, .threshold_pct = 2, .base_div = 1, .new_div = 1 },
		.per_step = -1,
		.gate = { .fail_above_pct = 2, .min_delta_ns = KP_MIN_DELTA_NS },
	};
	const char *bad;
	assert_int_equal(sort_parse(&o.sort, SORT_DIFF, NULL, &bad), 0);
	struct kp_diff_run run;
	assert_int_equal(diff_run(&run, &o), KP_OK);
	assert_true(run.diff.sum.noise_steps);
	assert_true(run.diff.sum.noise_ns > 0);
	/* every row's per-step series sums to its time: steps cover all GPU work here */
	for (size_t i = 0; i < run.rep[0].nrows; i++) {
		const struct kp_row *r = &run.rep[0].rows[i];
		int64_t s = 0;
		assert_non_null(r->step_ns);
		for (int64_t k = 0; k < run.rep[0].tot.steps; k++)
			s += r->step_ns[k];
		assert_int_equal(s, r->time_ns);
	}
	diff_run_free(&run);

	o.path[1] = tdata(n, sizeof(n), "torch211-h200-gate/train_fp32.json.gz");
	assert_int_equal(diff_run(&run, &o), KP_REGRESSION);
	int fp32_mm = 0;
	for (size_t i = 0; i < run.nhits; i++)
		fp32_mm |= run.hits[i].key && run.hits[i].status == DIFF_NEW &&
			   !strcmp(run.hits[i].key, "aten::mm [4096,4096]x[4096,1024] fp32");
	assert_true(fp32_mm);
	diff_run_free(&run);
	devdb_free(&db);
}

/*
 * The total's change is the paired rows' deltas + new rows' time - gone rows' time, to the ns;
 * the geomean covers the paired rows with time on both sides; a paired row with no base time
 * trips the gate as a paired row (counted where the rows line counts it), not as a new one.
 */
static void summary_splits_the_total_into_paired_new_and_gone(void **state)
{
	(void)state;
	struct kp_row b[] = { row("a", 1000, 1), row("b", 2000, 1), row("gone", 700, 1),
			      row("zero", 0, 1) };
	struct kp_row n[] = { row("a", 800, 1), row("b", 2500, 1), row("new", 9000, 1),
			      row("zero", 40000, 1) };
	struct kp_diff_opts o = kopts(GROUP_KERNEL);
	struct kp_diff d;
	diff_join(&d, b, 4, n, 4, &o, NULL, NULL);
	/* a: -200, b: +500, zero: +40000 (paired); new +9000; gone 700 */
	assert_int_equal(d.sum.paired_delta_ns, -200 + 500 + 40000);
	assert_int_equal(d.sum.onesided_new_ns, 9000);
	assert_int_equal(d.sum.onesided_base_ns, 700);
	assert_int_equal(d.sum.delta_ns, (800 + 2500 + 9000 + 40000) - (1000 + 2000 + 700));
	assert_int_equal(d.sum.delta_ns,
			 d.sum.paired_delta_ns + d.sum.onesided_new_ns - d.sum.onesided_base_ns);
	assert_int_equal(d.sum.matched, 3);
	assert_int_equal(d.sum.geomean_rows, 2); /* "zero" has no base time: no ratio */
	assert_true(fabs(d.sum.geomean_speedup - sqrt((1000.0 / 800) * (2000.0 / 2500))) < 1e-12);
	struct kp_gate_opts g = gopts(5, 0, 0);
	struct kp_gate_hit h[8];
	size_t k = diff_gate(&d, &g, h, 8);
	int zero_paired = 0, new_new = 0;
	for (size_t i = 0; i < k; i++) {
		if (h[i].key && !strcmp(h[i].key, "zero"))
			zero_paired = h[i].status == DIFF_CHANGED && isnan(h[i].change_pct);
		if (h[i].key && !strcmp(h[i].key, "new"))
			new_new = h[i].status == DIFF_NEW;
	}
	assert_true(zero_paired);
	assert_true(new_new);
	char msg[512];
	for (size_t i = 0; i < k; i++)
		if (h[i].key && !strcmp(h[i].key, "zero")) {
			diff_gate_message(&h[i], &g, msg, sizeof(msg));
			assert_string_equal(msg, "'zero' 0 ns -> 40.000 us: +40.000 us, floor 0 ns, noise N/A");
		}
	diff_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(normalization_merges_template_noise_but_keeps_distinct_kernels),
		cmocka_unit_test(run_joins_two_traces_gates_and_refuses_per_step_without_steps),
		cmocka_unit_test(run_passes_an_unchanged_recording_and_trips_on_an_fp32_layer),
		cmocka_unit_test(module_key_pairs_paths_and_names_the_wider_layer_first),
		cmocka_unit_test(kernel_rows_join_by_normalized_name_and_one_sided_rows_are_tagged),
		cmocka_unit_test(op_shape_pairs_across_dtypes_and_shows_both),
		cmocka_unit_test(
			op_shape_pairs_exact_dtypes_first_and_keeps_dtypes_apart_within_a_trace),
		cmocka_unit_test(out_variants_pair_with_the_functional_op),
		cmocka_unit_test(identical_inputs_give_zero_deltas_and_pass_a_zero_gate),
		cmocka_unit_test(
			per_step_divides_times_and_calls_and_deltas_still_sum_to_the_total),
		cmocka_unit_test(threshold_is_the_noise_floor),
		cmocka_unit_test(gate_trips_on_the_total_a_big_row_or_a_new_row_and_not_in_reverse),
		cmocka_unit_test(per_key_limits_match_keys_or_op_names_and_the_last_rule_wins),
		cmocka_unit_test(noise_gate_passes_jitter_and_trips_on_a_real_regression),
		cmocka_unit_test(sort_defaults_to_absolute_delta_and_rejects_unknown_keys),
		cmocka_unit_test(folding_keeps_the_delta_sum_in_the_others_row),
		cmocka_unit_test(rates_of_merged_rows_follow_analyze),
		cmocka_unit_test(renderers_write_null_for_a_missing_side),
		cmocka_unit_test(summary_splits_the_total_into_paired_new_and_gone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
