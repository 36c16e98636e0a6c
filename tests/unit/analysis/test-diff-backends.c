/*
 * test-diff-backends.c — op-shape pairs across backends by functional signature
 * (kprof-diff(1), PAIRS ACROSS BACKENDS), on analysis rows written as struct literals whose
 * parts say which signature their work computes, as analyze_run() splits them.
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

#include "kprof/diff.h"

#define FWD "attention fwd B=2 H=4 H_kv=2 S_q=128 S_k=128 D=64 D_v=64 causal bf16"
#define BWD "attention bwd B=2 H=4 H_kv=2 S_q=128 S_k=128 D=64 D_v=64 causal bf16"
#define DENSE "attention fwd B=2 H=4 H_kv=2 S_q=128 S_k=128 D=64 D_v=64 bf16"

/* an op-shape row, its work in parts[0..np) (time, calls, flops summed from them) */
static struct kp_row shaped(const char *op, const char *shape, const char *dtype,
			    struct kp_sigpart *parts, int np)
{
	struct kp_row r;
	memset(&r, 0, sizeof(r));
	r.name = op;
	r.key = "unused: diff builds its own op-shape key";
	r.shape = shape;
	r.dtype = dtype;
	r.flops = r.bytes = -1;
	r.parts = parts;
	r.nparts = r.capparts = np;
	for (int k = 0; k < np; k++) {
		r.time_ns += parts[k].time_ns;
		r.calls += parts[k].calls;
		if (parts[k].flops >= 0)
			r.flops = (r.flops < 0 ? 0 : r.flops) + parts[k].flops;
	}
	r.kernels = r.calls;
	return r;
}

static struct kp_sigpart part(const char *sig, const char *variant, int64_t ns, int64_t calls,
			      int64_t sig_calls, int64_t flops)
{
	struct kp_sigpart p = { sig, variant, ns, calls, sig_calls, flops, 0, NULL };
	return p;
}

static struct kp_diff_opts opshape(void)
{
	struct kp_diff_opts o = {
		.key = GROUP_OP_SHAPE, .threshold_pct = 2, .base_div = 1, .new_div = 1
	};
	return o;
}

static const struct kp_diff_row *find(const struct kp_diff *d, const char *key)
{
	for (size_t i = 0; i < d->nrows; i++)
		if (!strcmp(d->rows[i].key, key))
			return &d->rows[i];
	return NULL;
}

static int64_t delta_sum(const struct kp_diff *d)
{
	int64_t s = 0;
	for (size_t i = 0; i < d->nrows; i++)
		s += d->rows[i].delta_ns;
	return s;
}

/* the math path's bmm, softmax, bmm against one fused op: one row, summed, one call */
static void math_forward_pairs_whole_with_one_fused_op(void **state)
{
	(void)state;
	struct kp_sigpart b1 = part(FWD, "math", 9000, 1, 1, 1000);
	struct kp_sigpart b2 = part(FWD, "math", 7000, 1, 1, -1);
	struct kp_sigpart b3 = part(FWD, "math", 8000, 1, 1, 1000);
	struct kp_sigpart n1 = part(FWD, "cudnn", 5000, 1, 1, 1500);
	struct kp_row b[] = {
		shaped("aten::bmm", "[4,256,64]x[4,64,128]", "bf16", &b1, 1),
		shaped("aten::_safe_softmax", "[4,256,128]", "fp32", &b2, 1),
		shaped("aten::bmm", "[4,256,128]x[4,128,64]", "bf16", &b3, 1),
	};
	struct kp_row n[] = {
		shaped("aten::_scaled_dot_product_cudnn_attention", "[2,4,128,64]x[2,2,128,64]",
		       "bf16", &n1, 1),
	};
	struct kp_diff_opts o = opshape();
	struct kp_diff d;
	diff_join(&d, b, 3, n, 1, &o, NULL, NULL);
	assert_int_equal(d.nrows, 1);
	const struct kp_diff_row *r = find(&d, FWD " math->cudnn");
	assert_non_null(r);
	assert_string_equal(r->name, FWD " math->cudnn");
	assert_true(r->cross_backend);
	assert_false(r->cross_dtype);
	assert_int_equal(r->base_ns, 24000);
	assert_int_equal(r->new_ns, 5000);
	assert_true(r->base_calls == 1 && r->new_calls == 1);
	assert_int_equal(r->base_flops, 2000);
	assert_int_equal(r->new_flops, 1500);
	assert_string_equal(r->base_dtype, "bf16");
	assert_string_equal(r->new_dtype, "bf16");
	assert_int_equal(r->status, DIFF_CHANGED);
	assert_int_equal(d.sum.matched, 1);
	assert_int_equal(d.sum.cross_backend, 1);
	assert_int_equal(d.sum.added + d.sum.removed, 0);
	assert_true(fabs(d.sum.geomean_speedup - 24000.0 / 5000.0) < 1e-12);
	assert_int_equal(delta_sum(&d), d.sum.new_ns - d.sum.base_ns);
	diff_free(&d);
}

/*
 * One bmm shape computes in the forward and the backward (S = QK^T and dP = dO V^T): its
 * row's parts go to each signature's pair; with the backward unpaired the row keeps that part.
 */
static void a_row_of_two_signatures_gives_each_its_part(void **state)
{
	(void)state;
	struct kp_sigpart shared[2] = { part(FWD, "math", 9000, 1, 1, 100),
					part(BWD, "math", 9500, 1, 1, 100) };
	struct kp_sigpart sm = part(FWD, "math", 7000, 1, 1, -1);
	struct kp_sigpart smb = part(BWD, "math", 6000, 1, 1, -1);
	struct kp_sigpart nf = part(FWD, "cudnn", 5000, 1, 1, 300);
	struct kp_sigpart nb = part(BWD, "cudnn", 12000, 1, 1, 700);
	struct kp_row b[] = {
		shaped("aten::bmm", "[4,256,64]x[4,64,128]", "bf16", shared, 2),
		shaped("aten::_safe_softmax", "[4,256,128]", "fp32", &sm, 1),
		shaped("aten::_softmax_backward_data", "[4,256,128]x[4,256,128]", "fp32", &smb, 1),
	};
	struct kp_row n[] = {
		shaped("aten::_scaled_dot_product_cudnn_attention", "[..]", "bf16", &nf, 1),
		shaped("aten::_scaled_dot_product_cudnn_attention_backward", "[..]", "bf16", &nb,
		       1),
	};
	struct kp_diff_opts o = opshape();
	struct kp_diff d;
	diff_join(&d, b, 3, n, 2, &o, NULL, NULL);
	assert_int_equal(d.nrows, 2);
	const struct kp_diff_row *f = find(&d, FWD " math->cudnn");
	const struct kp_diff_row *w = find(&d, BWD " math->cudnn");
	assert_non_null(f);
	assert_non_null(w);
	assert_int_equal(f->base_ns, 16000);
	assert_int_equal(w->base_ns, 15500);
	assert_int_equal(w->new_ns, 12000);
	assert_int_equal(d.sum.cross_backend, 2);
	diff_free(&d);

	/* no fused backward on the new side: the bmm row keeps its backward part alone */
	diff_join(&d, b, 3, n, 1, &o, NULL, NULL);
	assert_int_equal(d.nrows, 3);
	assert_non_null(find(&d, FWD " math->cudnn"));
	const struct kp_diff_row *rest = find(&d, "aten::bmm [4,256,64]x[4,64,128] bf16");
	assert_non_null(rest);
	assert_int_equal(rest->status, DIFF_GONE);
	assert_int_equal(rest->base_ns, 9500);
	assert_true(rest->base_calls == 1);
	assert_int_equal(rest->base_flops, 100);
	const struct kp_diff_row *sb =
		find(&d, "aten::_softmax_backward_data [4,256,128]x[4,256,128] fp32");
	assert_non_null(sb);
	assert_int_equal(sb->base_ns, 6000);
	assert_int_equal(d.sum.base_ns, 9000 + 9500 + 7000 + 6000);
	assert_int_equal(delta_sum(&d), d.sum.new_ns - d.sum.base_ns);
	diff_free(&d);
}

/* a signature some of whose work paired exactly on its own pairs no more: never half of it */
static void a_signature_with_work_in_a_matched_row_does_not_pair(void **state)
{
	(void)state;
	struct kp_sigpart b1 = part(FWD, "math", 9000, 1, 1, -1);
	struct kp_sigpart b2 = part(FWD, "math", 7000, 1, 1, -1);
	struct kp_sigpart n1 = part(NULL, NULL, 8000, 1, 0, -1);
	struct kp_sigpart n2 = part(FWD, "cudnn", 5000, 1, 1, -1);
	struct kp_row b[] = {
		shaped("aten::bmm", "[4,256,64]x[4,64,128]", "bf16", &b1, 1),
		shaped("aten::_safe_softmax", "[4,256,128]", "fp32", &b2, 1),
	};
	struct kp_row n[] = {
		shaped("aten::bmm", "[4,256,64]x[4,64,128]", "bf16", &n1, 1),
		shaped("aten::_scaled_dot_product_cudnn_attention", "[..]", "bf16", &n2, 1),
	};
	struct kp_diff_opts o = opshape();
	struct kp_diff d;
	diff_join(&d, b, 2, n, 2, &o, NULL, NULL);
	assert_int_equal(d.sum.cross_backend, 0);
	assert_int_equal(d.sum.matched, 1);
	assert_int_equal(d.nrows, 3);
	diff_free(&d);
}

/* causal against dense, or work of no signature: left as they are */
static void different_or_no_signatures_stay_apart(void **state)
{
	(void)state;
	struct kp_sigpart b1 = part(FWD, "flash", 9000, 1, 1, -1);
	struct kp_sigpart b2 = part(NULL, NULL, 300, 1, 0, -1);
	struct kp_sigpart n1 = part(DENSE, "cudnn", 5000, 1, 1, -1);
	struct kp_sigpart n2 = part(NULL, NULL, 200, 1, 0, -1);
	struct kp_row b[] = {
		shaped("aten::_scaled_dot_product_flash_attention", "[..]", "bf16", &b1, 1),
		shaped("aten::add", "[8]x[8]", "bf16", &b2, 1),
	};
	struct kp_row n[] = {
		shaped("aten::_scaled_dot_product_cudnn_attention", "[..]", "bf16", &n1, 1),
		shaped("aten::mul", "[8]x[8]", "bf16", &n2, 1),
	};
	struct kp_diff_opts o = opshape();
	struct kp_diff d;
	diff_join(&d, b, 2, n, 2, &o, NULL, NULL);
	assert_int_equal(d.nrows, 4);
	assert_int_equal(d.sum.matched, 0);
	assert_int_equal(d.sum.cross_backend, 0);
	diff_free(&d);

	/* op and kernel keys never pair by signature */
	struct kp_sigpart n3 = part(FWD, "cudnn", 5000, 1, 1, -1);
	n[0] = shaped("aten::_scaled_dot_product_cudnn_attention", "[..]", "bf16", &n3, 1);
	o.key = GROUP_OP;
	diff_join(&d, b, 2, n, 2, &o, NULL, NULL);
	assert_int_equal(d.sum.cross_backend, 0);
	diff_free(&d);
	o = opshape();
	diff_join(&d, b, 2, n, 2, &o, NULL, NULL);
	assert_int_equal(d.sum.cross_backend, 1);
	assert_non_null(find(&d, FWD " flash->cudnn"));
	diff_free(&d);
}

/* cross-dtype pairs come first; a side of several variants is labelled "mixed" */
static void cross_dtype_pairs_first_and_mixed_variants_are_named(void **state)
{
	(void)state;
	struct kp_sigpart b1 = part(FWD, "flash", 9000, 1, 1, -1);
	struct kp_sigpart b2 = part(FWD, "efficient", 1000, 1, 1, -1);
	struct kp_sigpart n1 = part(FWD, "cudnn", 5000, 1, 1, -1);
	struct kp_sigpart bm = part("matmul M=8 N=8 K=8 bf16", "mm", 100, 1, 1, -1);
	struct kp_sigpart nm = part("matmul M=8 N=8 K=8 fp16", "mm", 90, 1, 1, -1);
	struct kp_row b[] = {
		shaped("aten::_scaled_dot_product_flash_attention", "[..]", "bf16", &b1, 1),
		shaped("aten::_scaled_dot_product_efficient_attention", "[..]", "bf16", &b2, 1),
		shaped("aten::mm", "[8,8]x[8,8]", "bf16", &bm, 1),
	};
	struct kp_row n[] = {
		shaped("aten::_scaled_dot_product_cudnn_attention", "[..]", "bf16", &n1, 1),
		shaped("aten::mm", "[8,8]x[8,8]", "fp16", &nm, 1),
	};
	struct kp_diff_opts o = opshape();
	struct kp_diff d;
	diff_join(&d, b, 3, n, 2, &o, NULL, NULL);
	assert_int_equal(d.nrows, 2);
	assert_non_null(find(&d, "aten::mm [8,8]x[8,8] bf16->fp16"));
	const struct kp_diff_row *r = find(&d, FWD " mixed->cudnn");
	assert_non_null(r);
	assert_int_equal(r->base_ns, 10000);
	assert_int_equal(d.sum.cross_dtype, 1);
	assert_int_equal(d.sum.cross_backend, 1);
	diff_free(&d);
}

/* per-step series of the parts sum into the pair, so its noise is computed as any row's */
static void per_step_series_follow_the_parts(void **state)
{
	(void)state;
	int64_t s1[3] = { 3000, 3100, 2900 }, s2[3] = { 1000, 1000, 1000 },
		s3[3] = { 2000, 2050, 1950 };
	struct kp_sigpart b1 = part(FWD, "math", 9000, 3, 3, -1);
	struct kp_sigpart b2 = part(FWD, "math", 3000, 3, 3, -1);
	struct kp_sigpart n1 = part(FWD, "cudnn", 6000, 3, 3, -1);
	b1.step_ns = s1;
	b2.step_ns = s2;
	n1.step_ns = s3;
	struct kp_row b[] = {
		shaped("aten::bmm", "[4,256,64]x[4,64,128]", "bf16", &b1, 1),
		shaped("aten::_safe_softmax", "[4,256,128]", "fp32", &b2, 1),
	};
	struct kp_row n[] = {
		shaped("aten::_scaled_dot_product_cudnn_attention", "[..]", "bf16", &n1, 1),
	};
	b[0].step_ns = s1;
	b[1].step_ns = s2;
	n[0].step_ns = s3;
	struct kp_diff_opts o = opshape();
	o.per_step = 1;
	o.base_div = o.new_div = 3;
	o.base_steps = o.new_steps = 3;
	struct kp_diff d;
	diff_join(&d, b, 2, n, 1, &o, NULL, NULL);
	assert_int_equal(d.nrows, 1);
	const struct kp_diff_row *r = &d.rows[0];
	assert_true(r->cross_backend);
	assert_int_equal(r->base_ns, 4000);
	assert_int_equal(r->new_ns, 2000);
	assert_true(r->base_calls == 1 && r->new_calls == 1);
	assert_true(r->noise_ns > 0);
	diff_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(math_forward_pairs_whole_with_one_fused_op),
		cmocka_unit_test(a_row_of_two_signatures_gives_each_its_part),
		cmocka_unit_test(a_signature_with_work_in_a_matched_row_does_not_pair),
		cmocka_unit_test(different_or_no_signatures_stay_apart),
		cmocka_unit_test(cross_dtype_pairs_first_and_mixed_variants_are_named),
		cmocka_unit_test(per_step_series_follow_the_parts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
