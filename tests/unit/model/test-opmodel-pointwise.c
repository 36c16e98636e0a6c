/*
 * test-opmodel-pointwise.c — the elementwise families (src/model/opmodel-pointwise.c): pointwise
 * ops with broadcasting and promotion, in-place and out variants, dropout, copies, cat,
 * reductions.
 * Shared slot macros and FlopCounterMode counts: opmodel-test.h.
 */
#include "opmodel-test.h"

/* ---- secondary ops ---- */

static void pointwise_binary_bytes_follow_broadcasting(void **state)
{
	struct kp_cost c;

	(void)state;
	/* [8,1,4] + [3,1] -> [8,3,4]: read 32 + 3, write 96 elements */
	assert_int_equal(EVAL(&c, "aten::add", T(DT_BF16, 8, 1, 4), T(DT_BF16, 3, 1), SC("1")), 0);
	assert_int_equal(c.bytes, 2 * (32 + 3 + 96));
	assert_int_equal(c.flops, -1);
	assert_int_equal(c.cls, MODEL_SECONDARY);
	assert_string_equal(c.family, "pointwise");
	/* a scalar operand costs nothing */
	assert_int_equal(EVAL(&c, "aten::mul", T(DT_F32, 1024), SC("0.5")), 0);
	assert_int_equal(c.bytes, 4 * 2 * 1024);
	/* bf16 * fp32 writes fp32 */
	assert_int_equal(EVAL(&c, "aten::mul", T(DT_BF16, 1024), T(DT_F32, 1024)), 0);
	assert_int_equal(c.bytes, 1024 * (2 + 4 + 4));
	/* a 0-dim fp32 tensor does not widen a bf16 tensor */
	assert_int_equal(EVAL(&c, "aten::mul", T(DT_BF16, 1024), T0(DT_F32)), 0);
	assert_int_equal(c.bytes, 1024 * 2 * 2 + 4);
	/* an int tensor times a float scalar writes fp32; times a bool or int scalar, int64 */
	assert_int_equal(EVAL(&c, "aten::mul", T(DT_I64, 1024), SC("0.5")), 0);
	assert_int_equal(c.bytes, 1024 * (8 + 4));
	assert_int_equal(EVAL(&c, "aten::add", T(DT_I64, 1024), SC("-inf"), SC("1")), 0);
	assert_int_equal(c.bytes, 1024 * (8 + 4));
	assert_int_equal(EVAL(&c, "aten::mul", T(DT_I64, 1024), SC("False")), 0);
	assert_int_equal(c.bytes, 1024 * (8 + 8));
	assert_int_equal(EVAL(&c, "aten::mul", T(DT_I64, 1024), SC("3")), 0);
	assert_int_equal(c.bytes, 1024 * (8 + 8));
	/* true division of integers writes fp32 */
	assert_int_equal(EVAL(&c, "aten::div", T(DT_I32, 16), T(DT_I32, 16)), 0);
	assert_int_equal(c.bytes, 16 * (4 + 4 + 4));
	assert_int_equal(EVAL(&c, "aten::add", T(DT_BF16, 8, 3), T(DT_BF16, 4), SC("1")), -1);
	assert_string_equal(c.note, "pointwise operand shapes do not broadcast");
}

static void in_place_and_out_variants_write_self_or_out(void **state)
{
	struct kp_cost c;

	(void)state;
	/* AccumulateGrad's add_ in block_bf16 */
	assert_int_equal(EVAL(&c, "aten::add_", T(DT_BF16, 2048), T(DT_BF16, 2048), SC("1")), 0);
	assert_int_equal(c.bytes, 3 * 2048 * 2);
	/* in place keeps self's dtype and shape: bf16 += fp32 [1] */
	assert_int_equal(EVAL(&c, "aten::mul_", T(DT_BF16, 64, 64), T(DT_F32, 1)), 0);
	assert_int_equal(c.bytes, 64 * 64 * 2 * 2 + 4);
	/* add.out(self, other, alpha, out) */
	assert_int_equal(EVAL(&c, "aten::add", T(DT_F16, 64), T(DT_F16, 64), SC("1"),
			      T(DT_F32, 64)),
			 0);
	assert_int_equal(c.bytes, 64 * (2 + 2 + 4));
	/* exp.out(self, out) */
	assert_int_equal(EVAL(&c, "aten::exp", T(DT_F32, 100), T(DT_F32, 100)), 0);
	assert_int_equal(c.bytes, 100 * 8);
}

static void unary_and_activation_backward_ops_read_and_write_once(void **state)
{
	struct kp_cost c;
	const int64_t n = 8LL * 1024 * 8192;

	(void)state;
	/* block_bf16: gelu(self, approximate) and gelu_backward(grad, self, approximate) */
	assert_int_equal(EVAL(&c, "aten::gelu", T(DT_BF16, 8, 1024, 8192), NONE), 0);
	assert_int_equal(c.bytes, 2 * n * 2);
	assert_int_equal(EVAL(&c, "aten::gelu_backward", T(DT_BF16, 8, 1024, 8192),
			      T(DT_BF16, 8, 1024, 8192), NONE),
			 0);
	assert_int_equal(c.bytes, 3 * n * 2);
	assert_int_equal(EVAL(&c, "aten::threshold_backward", T(DT_F32, 32, 64, 56, 56),
			      T(DT_F32, 32, 64, 56, 56), SC("0")),
			 0);
	assert_int_equal(c.bytes, 3 * 4 * 32 * 64 * 56 * 56);
	assert_int_equal(EVAL(&c, "aten::relu_", T(DT_F16, 10)), 0);
	assert_int_equal(c.bytes, 2 * 10 * 2);
	/* pow.Scalar(self Scalar, exponent Tensor) */
	assert_int_equal(EVAL(&c, "aten::pow", SC("2"), T(DT_F32, 10)), 0);
	assert_int_equal(c.bytes, 2 * 10 * 4);
}

static void where_masked_fill_and_comparisons_size_their_outputs(void **state)
{
	struct kp_cost c;

	(void)state;
	/* where(cond [S,S] bool, self [B,H,S,S] fp32, other 0-dim fp32) */
	assert_int_equal(EVAL(&c, "aten::where", T(DT_BOOL, 128, 128), T(DT_F32, 2, 4, 128, 128),
			      T0(DT_F32)),
			 0);
	assert_int_equal(c.bytes,
			 128 * 128 + 4 * (2 * 4 * 128 * 128) + 4 + 4 * (2 * 4 * 128 * 128));
	/* masked_fill(self, mask, value): writes self's shape */
	assert_int_equal(EVAL(&c, "aten::masked_fill", T(DT_BF16, 2, 4, 128, 128),
			      T(DT_BOOL, 128, 128), SC("-inf")),
			 0);
	assert_int_equal(c.bytes, 2 * (2 * 4 * 128 * 128) * 2 + 128 * 128);
	assert_int_equal(EVAL(&c, "aten::eq", T(DT_I64, 4096), SC("0")), 0);
	assert_int_equal(c.bytes, 4096 * 8 + 4096);
}

static void fill_and_zero_write_only(void **state)
{
	struct kp_cost c;

	(void)state;
	assert_int_equal(EVAL(&c, "aten::fill_", T(DT_F32, 32, 64, 56, 56), SC("1.")), 0);
	assert_int_equal(c.bytes, 4 * 32 * 64 * 56 * 56);
	assert_int_equal(EVAL(&c, "aten::zero_", T(DT_BF16, 1)), 0);
	assert_int_equal(c.bytes, 2);
	/* fill_ of a 0-dim bf16 tensor (block_bf16's backward seed) */
	assert_int_equal(EVAL(&c, "aten::fill_", T0(DT_BF16), SC("1.")), 0);
	assert_int_equal(c.bytes, 2);
}

static void dropout_writes_output_and_mask_only_when_training(void **state)
{
	struct kp_cost c;

	(void)state;
	assert_int_equal(EVAL(&c, "aten::native_dropout", T(DT_BF16, 1000), SC("0.1"), SC("True")),
			 0);
	assert_int_equal(c.bytes, 1000 * (2 + 2 + 1));
	assert_int_equal(EVAL(&c, "aten::dropout", T(DT_BF16, 1000), SC("0.1"), SC("False")), 0);
	assert_int_equal(c.bytes, 0);
}

/*
 * eval_pointwise's steps: pw_self (a Scalar self only where nothing writes it; the dtype from
 * the exponent), pw_self_only_bytes (fill_.Tensor reads its value), pw_out_dtype (div without
 * rounding_mode writes fp32, with one the promoted type).
 */
static void pointwise_steps_check_self_and_size_the_output(void **state)
{
	struct kp_cost c;

	(void)state;
	assert_int_equal(EVAL(&c, "aten::add_", SC("1"), T(DT_BF16, 8), SC("1")), -1);
	assert_string_equal(c.note, "pointwise op writes a self that is not a tensor");
	assert_int_equal(EVAL(&c, "aten::fill_", SC("1"), SC("0")), -1);
	assert_string_equal(c.note, "pointwise op has no tensor operand");
	assert_int_equal(EVAL(&c, "aten::pow", SC("2"), T(DT_F16, 10)), 0);
	assert_int_equal(c.dtype, DT_F16);
	assert_int_equal(c.bytes, 10 * 2 + 10 * 2);
	assert_int_equal(EVAL(&c, "aten::fill_", T(DT_BF16, 4, 4), T0(DT_F32)), 0);
	assert_int_equal(c.bytes, 16 * 2 + 4);
	assert_int_equal(EVAL(&c, "aten::fill_", T(DT_BF16, 4, 4), SC("0.5")), 0);
	assert_int_equal(c.bytes, 16 * 2);
	assert_int_equal(EVAL(&c, "aten::div", T(DT_I64, 16), T(DT_I64, 16)), 0);
	assert_int_equal(c.bytes, 2 * 16 * 8 + 16 * 4);
	assert_int_equal(EVAL(&c, "aten::div", T(DT_I64, 16), T(DT_I64, 16), SC("'floor'")), 0);
	assert_int_equal(c.bytes, 3 * 16 * 8);
	assert_int_equal(EVAL(&c, "aten::div", T(DT_F16, 16), T(DT_F16, 16)), 0);
	assert_int_equal(c.bytes, 3 * 16 * 2);
}

static void copies_read_the_source_and_write_the_destination_dtype(void **state)
{
	struct kp_cost c;
	const int64_t n = 8LL * 256 * 256;

	(void)state;
	/* copy_(self, src, non_blocking): fp32 into bf16 */
	assert_int_equal(EVAL(&c, "aten::copy_", T(DT_BF16, 8, 256, 256), T(DT_F32, 8, 256, 256),
			      SC("False")),
			 0);
	assert_int_equal(c.bytes, n * (4 + 2));
	assert_string_equal(c.family, "copy");
	/* copy_ broadcasting a row into a matrix */
	assert_int_equal(EVAL(&c, "aten::copy_", T(DT_F32, 64, 32), T(DT_F32, 32), SC("False")), 0);
	assert_int_equal(c.bytes, 4 * (32 + 64 * 32));
	/* to.dtype_layout(self, dtype 15 (bf16), layout, device, pin_memory, non_blocking, ..) */
	assert_int_equal(EVAL(&c, "aten::to", T(DT_F32, 1024), SC("15"), NONE, NONE, NONE,
			      SC("False"), SC("False"), NONE),
			 0);
	assert_int_equal(c.bytes, 1024 * (4 + 2));
	/* to.dtype(self, dtype, non_blocking, copy, memory_format) */
	assert_int_equal(EVAL(&c, "aten::to", T(DT_BF16, 1024), SC("6"), SC("False"), SC("False"),
			      NONE),
			 0);
	assert_int_equal(c.bytes, 1024 * (2 + 4));
	/* to.other(self, other, ..) */
	assert_int_equal(EVAL(&c, "aten::to", T(DT_F32, 1024), T(DT_F16, 4), SC("False"),
			      SC("False"), NONE),
			 0);
	assert_int_equal(c.bytes, 1024 * (4 + 2));
	/* conv_fp32's aten::to with every dtype slot None */
	assert_int_equal(EVAL(&c, "aten::to", T(DT_F32, 32, 64, 56, 56), NONE, NONE, NONE, NONE,
			      SC("False"), SC("False"), SC("0")),
			 0);
	assert_int_equal(c.bytes, 2 * 4 * 32 * 64 * 56 * 56);
	/* _to_copy(self, dtype, layout, device, pin_memory, non_blocking, memory_format) */
	assert_int_equal(EVAL(&c, "aten::_to_copy", T(DT_F32, 10), SC("5"), NONE, NONE, NONE,
			      SC("False"), NONE),
			 0);
	assert_int_equal(c.bytes, 10 * (4 + 2));
	assert_int_equal(EVAL(&c, "aten::clone", T(DT_BF16, 8, 1024, 3, 16, 128), SC("0")), 0);
	assert_int_equal(c.bytes, 2 * 2 * 8 * 1024 * 3 * 16 * 128);
	assert_int_equal(EVAL(&c, "aten::contiguous", T(DT_BF16, 1, 512, 16, 128), SC("0")), 0);
	assert_int_equal(c.bytes, 2 * 2 * 512 * 16 * 128);
}

static void cat_reads_every_list_member_and_writes_their_sum(void **state)
{
	struct kp_cost c;
	const int64_t n = 8LL * 16 * 1024 * 128;
	struct kp_slot bf[3] = {
		{ 4, (const int64_t[]){ 8, 16, 1024, 128 }, DT_BF16, "", 0, NULL },
		{ 4, (const int64_t[]){ 8, 16, 1024, 128 }, DT_BF16, "", 0, NULL },
		{ 4, (const int64_t[]){ 8, 16, 1024, 128 }, DT_BF16, "", 0, NULL },
	};
	struct kp_slot unk[2] = {
		{ 2, (const int64_t[]){ 4, 8 }, DT_UNKNOWN, "", 0, NULL },
		{ 2, (const int64_t[]){ 2, 8 }, DT_UNKNOWN, "", 0, NULL },
	};

	(void)state;
	/* block_bf16: Input Dims [[..],[..],[..]], Input type "TensorList" */
	assert_int_equal(EVAL(&c, "aten::cat", { 0, NULL, DT_NONE, "", 3, bf }, SC("0")), 0);
	assert_int_equal(c.bytes, 3 * n * 2 + 3 * n * 2);
	assert_int_equal(c.dtype, DT_BF16);
	assert_int_equal(EVAL(&c, "aten::stack", { 0, NULL, DT_NONE, "", 3, bf }, SC("0")), 0);
	assert_int_equal(c.bytes, 12 * n);
	/* Kineto records no element type: bytes unknown, said in the note */
	assert_int_equal(EVAL(&c, "aten::cat", { 0, NULL, DT_NONE, "", 2, unk }, SC("0")), 0);
	assert_int_equal(c.bytes, -1);
	assert_string_equal(c.note, "TensorList element dtype not recorded: bytes unknown");
	/* cat.out: the out tensor's dtype sizes the write */
	assert_int_equal(EVAL(&c, "aten::cat", { 0, NULL, DT_NONE, "", 2, unk }, SC("0"),
			      T(DT_F32, 6, 8)),
			 0);
	assert_int_equal(c.bytes, -1);
	/* flattened tensor slots (older traces) */
	assert_int_equal(EVAL(&c, "aten::cat", T(DT_F16, 4, 8), T(DT_F16, 2, 8), SC("0")), 0);
	assert_int_equal(c.bytes, 2 * (32 + 16) + 2 * 48);
}

static void reductions_size_the_output_from_dim_and_keepdim(void **state)
{
	struct kp_cost c;

	(void)state;
	/* block_bf16: sum(self [8192,2048], dim [0], keepdim True, dtype None) */
	assert_int_equal(EVAL(&c, "aten::sum", T(DT_BF16, 8192, 2048), SC("[0]"), SC("True"), NONE),
			 0);
	assert_int_equal(c.bytes, 2 * (8192 * 2048 + 2048));
	assert_string_equal(c.family, "reduce");
	/* sum(self, dtype): the full reduction; dim=[] reduces all as well */
	assert_int_equal(EVAL(&c, "aten::sum", T(DT_BF16, 8, 1024, 2048), NONE), 0);
	assert_int_equal(c.bytes, 2 * (8 * 1024 * 2048 + 1));
	assert_int_equal(EVAL(&c, "aten::sum", T(DT_BF16, 8, 1024, 2048), SC("[]"), SC("False"),
			      NONE),
			 0);
	assert_int_equal(c.bytes, 2 * (8 * 1024 * 2048 + 1));
	/* negative dims wrap; dtype= widens the output */
	assert_int_equal(EVAL(&c, "aten::mean", T(DT_BF16, 4, 6, 10), SC("[-1, 0]"), SC("False"),
			      SC("6")),
			 0);
	assert_int_equal(c.bytes, 2 * 240 + 4 * 6);
	/* sum of bool accumulates into int64 */
	assert_int_equal(EVAL(&c, "aten::sum", T(DT_BOOL, 100), NONE), 0);
	assert_int_equal(c.bytes, 100 + 8);
	/* max.dim writes values and int64 indices; max(self) one value; max.other elementwise */
	assert_int_equal(EVAL(&c, "aten::max", T(DT_F32, 16, 32), SC("1"), SC("False")), 0);
	assert_int_equal(c.bytes, 4 * 512 + 16 * (4 + 8));
	assert_int_equal(EVAL(&c, "aten::max", T(DT_F32, 16, 32)), 0);
	assert_int_equal(c.bytes, 4 * 512 + 4);
	assert_int_equal(EVAL(&c, "aten::max", T(DT_F32, 16, 32), T(DT_F32, 16, 32)), 0);
	assert_int_equal(c.bytes, 3 * 4 * 512);
	assert_string_equal(c.family, "pointwise");
	assert_int_equal(EVAL(&c, "aten::amax", T(DT_F16, 16, 32), SC("[1]"), SC("True")), 0);
	assert_int_equal(c.bytes, 2 * (512 + 16));
	assert_int_equal(EVAL(&c, "aten::argmax", T(DT_F16, 16, 32), SC("1"), SC("False")), 0);
	assert_int_equal(c.bytes, 2 * 512 + 8 * 16);
	/* sum.IntList_out: the out tensor decides the written dtype */
	assert_int_equal(EVAL(&c, "aten::sum", T(DT_BF16, 16, 32), SC("[1]"), SC("False"), NONE,
			      T(DT_F32, 16)),
			 0);
	assert_int_equal(c.bytes, 2 * 512 + 4 * 16);
	assert_int_equal(EVAL(&c, "aten::sum", T(DT_BF16, 16, 32), SC("[2]"), SC("False"), NONE),
			 -1);
	assert_string_equal(c.note, "reduction 'dim' is unreadable or out of range");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pointwise_binary_bytes_follow_broadcasting),
		cmocka_unit_test(in_place_and_out_variants_write_self_or_out),
		cmocka_unit_test(unary_and_activation_backward_ops_read_and_write_once),
		cmocka_unit_test(where_masked_fill_and_comparisons_size_their_outputs),
		cmocka_unit_test(fill_and_zero_write_only),
		cmocka_unit_test(dropout_writes_output_and_mask_only_when_training),
		cmocka_unit_test(pointwise_steps_check_self_and_size_the_output),
		cmocka_unit_test(copies_read_the_source_and_write_the_destination_dtype),
		cmocka_unit_test(cat_reads_every_list_member_and_writes_their_sum),
		cmocka_unit_test(reductions_size_the_output_from_dim_and_keepdim),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
