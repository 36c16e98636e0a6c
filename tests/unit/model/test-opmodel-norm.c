/*
 * test-opmodel-norm.c — the row-wise families (src/model/opmodel-norm.c): layer and RMS norms,
 * softmax, cross-entropy and NLL losses, forward and backward.
 * Shared slot macros and FlopCounterMode counts: opmodel-test.h.
 */
#include "opmodel-test.h"

static void layer_norm_reads_x_weight_bias_and_writes_y_and_statistics(void **state)
{
	struct kp_cost c;
	const int64_t n = 8LL * 1024 * 2048, rows = 8 * 1024;

	(void)state;
	/* block_bf16: native_layer_norm(input, [2048], weight, bias, eps) */
	assert_int_equal(EVAL(&c, "aten::native_layer_norm", T(DT_BF16, 8, 1024, 2048),
			      SC("[2048]"), T(DT_BF16, 2048), T(DT_BF16, 2048),
			      SC("1.0000000000000001e-05")),
			 0);
	assert_int_equal(c.bytes, 2 * n * 2 + 2 * 2048 * 2 + 2 * rows * 4);
	assert_string_equal(c.family, "norm");
	assert_int_equal(EVAL(&c, "aten::layer_norm", T(DT_BF16, 8, 1024, 2048), SC("[2048]"),
			      T(DT_BF16, 2048), T(DT_BF16, 2048), SC("1.0000000000000001e-05"),
			      SC("True")),
			 0);
	assert_int_equal(c.bytes, 2 * n * 2 + 2 * 2048 * 2 + 2 * rows * 4);
	/* native_layer_norm_backward(grad_out, input, shape, mean, rstd, weight, bias, mask) */
	assert_int_equal(EVAL(&c, "aten::native_layer_norm_backward", T(DT_BF16, 8, 1024, 2048),
			      T(DT_BF16, 8, 1024, 2048), SC("[2048]"), T(DT_F32, 8, 1024, 1),
			      T(DT_F32, 8, 1024, 1), T(DT_BF16, 2048), T(DT_BF16, 2048),
			      SC("[True, True, True]")),
			 0);
	assert_int_equal(c.bytes, (2 * n * 2 + 2 * rows * 4 + 2048 * 2) + (n * 2 + 2 * 2048 * 2));
	assert_int_equal(EVAL(&c, "aten::native_layer_norm", T(DT_BF16, 8, 1024, 2048),
			      SC("[1024]"), T(DT_BF16, 1024), T(DT_BF16, 1024), SC("1e-05")),
			 -1);
	assert_string_equal(c.note, "norm 'normalized_shape' does not match the input");
}

static void rms_norm_reads_x_and_weight(void **state)
{
	struct kp_cost c;

	(void)state;
	assert_int_equal(EVAL(&c, "aten::rms_norm", T(DT_BF16, 4, 512), SC("[512]"),
			      T(DT_BF16, 512), NONE),
			 0);
	assert_int_equal(c.bytes, 2 * (2 * 4 * 512 + 512));
	assert_int_equal(EVAL(&c, "aten::_fused_rms_norm", T(DT_BF16, 4, 512), SC("[512]"),
			      T(DT_BF16, 512), NONE),
			 0);
	assert_int_equal(c.bytes, 2 * (2 * 4 * 512 + 512) + 4 * 4);
	assert_int_equal(EVAL(&c, "aten::_fused_rms_norm_backward", T(DT_BF16, 4, 512),
			      T(DT_BF16, 4, 512), SC("[512]"), T(DT_F32, 4, 1), T(DT_BF16, 512),
			      SC("[True, False]")),
			 0);
	assert_int_equal(c.bytes, 2 * (2 * 4 * 512 + 512) + 4 * 4 + 2 * 4 * 512);
}

/*
 * eval_norm's steps: rows from the weight when normalized_shape is empty (2022 traces; the
 * weight's slot differs per op), fp64 statistics for fp64 input, output_mask gradients (empty:
 * all of them) and a mask of the wrong length refused.
 */
static void norms_take_rows_from_the_weight_and_gradients_from_the_mask(void **state)
{
	struct kp_cost c;

	(void)state;
	/* 32 fp64 elements in 4 rows: y, x, weight, bias, and mean + rstd as fp64 */
	assert_int_equal(EVAL(&c, "aten::native_layer_norm", T(DT_F64, 4, 8), NONE, T(DT_F64, 8),
			      T(DT_F64, 8), SC("1e-05")),
			 0);
	assert_int_equal(c.bytes, 2 * 32 * 8 + 2 * 8 * 8 + 2 * 4 * 8);
	assert_int_equal(c.dtype, DT_F64);
	assert_int_equal(EVAL(&c, "aten::_fused_rms_norm", T(DT_F64, 4, 8), NONE, T(DT_F64, 8),
			      NONE),
			 0);
	assert_int_equal(c.bytes, 2 * 32 * 8 + 8 * 8 + 4 * 8);
	assert_int_equal(EVAL(&c, "aten::rms_norm", T(DT_BF16, 4, 8), NONE, T(DT_BF16, 3), NONE),
			 -1);
	assert_string_equal(c.note, "norm 'normalized_shape' does not match the input");
	/* layer_norm backward: dy, x, mean, rstd, weight read; then dx, dw, db as masked */
	const int64_t ln_read = 64 + 64 + 16 + 16 + 16;
	static const struct {
		const char *mask;
		int64_t bytes;
	} ln[] = {
		{ "[False, True, False]", ln_read + 16 },
		{ "[True, False, True]", ln_read + 64 + 16 },
		{ "", ln_read + 64 + 16 + 16 },
	};
	for (int i = 0; i < 3; i++) {
		assert_int_equal(EVAL(&c, "aten::native_layer_norm_backward", T(DT_BF16, 4, 8),
				      T(DT_BF16, 4, 8), NONE, T(DT_F32, 4, 1), T(DT_F32, 4, 1),
				      T(DT_BF16, 8), T(DT_BF16, 8), SC(ln[i].mask)),
				 0);
		assert_int_equal(c.bytes, ln[i].bytes);
	}
	assert_int_equal(EVAL(&c, "aten::native_layer_norm_backward", T(DT_BF16, 4, 8),
			      T(DT_BF16, 4, 8), SC("[8]"), T(DT_F32, 4, 1), T(DT_F32, 4, 1),
			      T(DT_BF16, 8), T(DT_BF16, 8), SC("[True, True]")),
			 -1);
	assert_string_equal(c.note, "native_layer_norm_backward output_mask is not three booleans");
	/* _fused_rms_norm backward: dy, x, rstd, weight read; then dx, dw as masked */
	assert_int_equal(EVAL(&c, "aten::_fused_rms_norm_backward", T(DT_BF16, 4, 8),
			      T(DT_BF16, 4, 8), NONE, T(DT_F32, 4, 1), T(DT_BF16, 8), NONE),
			 0);
	assert_int_equal(c.bytes, 64 + 64 + 16 + 16 + 64 + 16);
	assert_int_equal(EVAL(&c, "aten::_fused_rms_norm_backward", T(DT_BF16, 4, 8),
			      T(DT_BF16, 4, 8), NONE, T(DT_F32, 4, 1), T(DT_BF16, 8),
			      SC("[False, True]")),
			 0);
	assert_int_equal(c.bytes, 64 + 64 + 16 + 16 + 16);
	assert_int_equal(EVAL(&c, "aten::_fused_rms_norm_backward", T(DT_BF16, 4, 8),
			      T(DT_BF16, 4, 8), SC("[8]"), T(DT_F32, 4, 1), T(DT_BF16, 8),
			      SC("[True]")),
			 -1);
	assert_string_equal(c.note, "_fused_rms_norm_backward output_mask is not two booleans");
}

static void softmax_forward_moves_two_tensors_and_backward_three(void **state)
{
	struct kp_cost c;
	const int64_t n = 2LL * 8 * 128 * 128;

	(void)state;
	assert_int_equal(EVAL(&c, "aten::_softmax", T(DT_BF16, 2, 8, 128, 128), SC("-1"),
			      SC("False")),
			 0);
	assert_int_equal(c.bytes, 2 * n * 2);
	assert_string_equal(c.family, "softmax");
	/* half_to_float writes fp32 */
	assert_int_equal(EVAL(&c, "aten::_softmax", T(DT_F16, 2, 8, 128, 128), SC("-1"),
			      SC("True")),
			 0);
	assert_int_equal(c.bytes, n * (2 + 4));
	assert_int_equal(EVAL(&c, "aten::_safe_softmax", T(DT_F32, 2, 8, 128, 128), SC("-1"), NONE),
			 0);
	assert_int_equal(c.bytes, 2 * n * 4);
	assert_int_equal(EVAL(&c, "aten::_softmax_backward_data", T(DT_BF16, 2, 8, 128, 128),
			      T(DT_BF16, 2, 8, 128, 128), SC("-1"), SC("15")),
			 0);
	assert_int_equal(c.bytes, 3 * n * 2);
	assert_int_equal(EVAL(&c, "aten::log_softmax", T(DT_BF16, 64, 32000), SC("1"), SC("6")), 0);
	assert_int_equal(c.bytes, 64 * 32000 * (2 + 4));
}

/* kprof capture's cross-entropy records: compulsory bytes from the slots alone */
static void cross_entropy_reads_logits_once(void **state)
{
	struct kp_cost c;
	const int64_t r = 4096, v = 32000;

	(void)state;
	/* cross_entropy_loss(self, target, weight, reduction, ignore_index, label_smoothing) */
	assert_int_equal(EVAL(&c, "aten::cross_entropy_loss", T(DT_BF16, r, v), T(DT_I64, r), NONE,
			      SC("0"), SC("-100"), SC("0.0")),
			 0);
	assert_int_equal(c.bytes, r * v * 2 + r * 8 + r * 2);
	assert_string_equal(c.family, "loss");
	assert_int_equal(c.flops, -1);
	/* mean (and torch's default, an empty slot) write one element; a weight is read */
	assert_int_equal(EVAL(&c, "aten::cross_entropy_loss", T(DT_F32, r, v), T(DT_I64, r),
			      T(DT_F32, v), SC("1"), SC("-100"), SC("0.0")),
			 0);
	assert_int_equal(c.bytes, r * v * 4 + r * 8 + v * 4 + 4);
	assert_int_equal(EVAL(&c, "aten::cross_entropy_loss", T(DT_BF16, 2, 10, 7), T(DT_I64, 2, 7),
			      NONE, NONE, NONE, NONE),
			 0);
	assert_int_equal(c.bytes, 2 * 10 * 7 * 2 + 2 * 7 * 8 + 2);
	/* reduction none over [N, C, d]: N*d losses */
	assert_int_equal(EVAL(&c, "aten::cross_entropy_loss", T(DT_BF16, 2, 10, 7), T(DT_I64, 2, 7),
			      NONE, SC("0"), SC("-100"), SC("0.0")),
			 0);
	assert_int_equal(c.bytes, 2 * 10 * 7 * 2 + 2 * 7 * 8 + 2 * 7 * 2);
	assert_int_equal(EVAL(&c, "aten::cross_entropy_loss", T(DT_BF16, r, v), T(DT_I64, r), NONE,
			      SC("3"), SC("-100"), SC("0.0")),
			 -1);
	assert_string_equal(c.note, "cross_entropy_loss reduction is not 0, 1 or 2");
	assert_int_equal(EVAL(&c, "aten::cross_entropy_loss", T(DT_BF16, r, v), SC("1")), -1);
	/* kprof::cross_entropy_loss_backward(grad, self, target, lse, reduction, ignore, smoothing) */
	assert_int_equal(EVAL(&c, "kprof::cross_entropy_loss_backward", T(DT_BF16, r),
			      T(DT_BF16, r, v), T(DT_I64, r), T(DT_F32, r), SC("0"), SC("-100"),
			      SC("0.0")),
			 0);
	assert_int_equal(c.bytes, 2 * r * v * 2 + r * (2 + 8 + 4));
	assert_int_equal(opmodel_class("kprof::cross_entropy_loss_backward"), MODEL_SECONDARY);
	assert_int_equal(opmodel_class("kprof::nothing"), MODEL_NONE);
}

/* eager torch's pieces: nll_loss gathers one element a row, its backward writes dense */
static void nll_loss_gathers_and_backward_writes_dense(void **state)
{
	struct kp_cost c;
	const int64_t r = 64, v = 1000;

	(void)state;
	/* nll_loss_forward(self, target, weight, reduction, ignore_index) -> (out, total_weight) */
	assert_int_equal(EVAL(&c, "aten::nll_loss_forward", T(DT_F32, r, v), T(DT_I64, r), NONE,
			      SC("1"), SC("-100")),
			 0);
	assert_int_equal(c.bytes, r * 8 + r * 4 + 4 + 4);
	assert_int_equal(EVAL(&c, "aten::nll_loss_nd", T(DT_F32, r, v), T(DT_I64, r), T(DT_F32, v),
			      SC("0"), SC("-100")),
			 0);
	assert_int_equal(c.bytes, r * 8 + r * 4 + r * 4 + r * 4);
	/* nll_loss_backward(grad_output, self, target, weight, reduction, ignore, total_weight) */
	assert_int_equal(EVAL(&c, "aten::nll_loss_backward", T(DT_F32), T(DT_F32, r, v),
			      T(DT_I64, r), NONE, SC("1"), SC("-100"), T(DT_F32)),
			 0);
	assert_int_equal(c.bytes, 4 + r * 8 + 4 + r * v * 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(layer_norm_reads_x_weight_bias_and_writes_y_and_statistics),
		cmocka_unit_test(rms_norm_reads_x_and_weight),
		cmocka_unit_test(norms_take_rows_from_the_weight_and_gradients_from_the_mask),
		cmocka_unit_test(softmax_forward_moves_two_tensors_and_backward_three),
		cmocka_unit_test(cross_entropy_reads_logits_once),
		cmocka_unit_test(nll_loss_gathers_and_backward_writes_dense),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
