/*
 * test-opmodel-gemm.c — matrix products (src/model/opmodel-gemm.c): mm, addmm, bmm, baddbmm,
 * their out variants, _scaled_mm, _int_mm, _grouped_mm, against FlopCounterMode for matmul_bf16
 * and hand math.
 * Shared slot macros and FlopCounterMode counts: opmodel-test.h.
 */
#include "opmodel-test.h"

/* matmul_bf16: (M, K, N) */
static const int64_t mkn[4][3] = {
	{ 1024, 1024, 1024 },
	{ 2048, 4096, 1024 },
	{ 4096, 4096, 1024 },
	{ 8192, 8192, 8192 },
};

/* ---- GEMM ---- */

static void mm_reproduces_flop_counter_for_matmul_bf16(void **state)
{
	struct kp_cost c;
	int64_t sum = 0;
	int i;

	(void)state;
	for (i = 0; i < 4; i++) {
		int64_t m = mkn[i][0], k = mkn[i][1], n = mkn[i][2];
		struct kp_slot s[2] = {
			{ 2, (const int64_t[]){ m, k }, DT_BF16, "", 0, NULL },
			{ 2, (const int64_t[]){ k, n }, DT_BF16, "", 0, NULL },
		};
		struct kp_op_in in = { .name = "aten::mm",
				       .nslots = 2,
				       .slots = s,
				       .kernel_flop = -1,
				       .kernel_num_gb = -1.0 };

		sum += eval_ok(&in, &c);
		/* bytes: M*K*2 + K*N*2 + M*N*2, bf16 is 2 bytes */
		assert_int_equal(c.bytes, 2 * (m * k + k * n + m * n));
		assert_int_equal(c.cls, MODEL_PRIMARY);
		assert_string_equal(c.family, "gemm");
		assert_int_equal(c.dtype, DT_BF16);
		assert_int_equal(c.prec, PREC_BF16);
	}
	assert_int_equal(sum, FC_MATMUL_MM);
}

/* FC's addmm per_call is addmm(bias, a, b) plus F.linear's addmm: twice the mm sum. */
static void addmm_counts_each_call_as_its_mm_and_flop_counter_counts_two(void **state)
{
	struct kp_cost c;
	int64_t sum = 0;
	int i;

	(void)state;
	for (i = 0; i < 4; i++) {
		int64_t m = mkn[i][0], k = mkn[i][1], n = mkn[i][2];
		struct kp_slot s[5] = {
			{ 1, (const int64_t[]){ n }, DT_BF16, "", 0, NULL },
			{ 2, (const int64_t[]){ m, k }, DT_BF16, "", 0, NULL },
			{ 2, (const int64_t[]){ k, n }, DT_BF16, "", 0, NULL },
			{ 0, NULL, DT_NONE, "1", 0, NULL },
			{ 0, NULL, DT_NONE, "1", 0, NULL },
		};
		struct kp_op_in in = { .name = "aten::addmm",
				       .nslots = 5,
				       .slots = s,
				       .kernel_flop = -1,
				       .kernel_num_gb = -1.0 };

		sum += eval_ok(&in, &c);
		/* the [N] bias adds N elements to the mm bytes */
		assert_int_equal(c.bytes, 2 * (m * k + k * n + m * n + n));
	}
	assert_int_equal(sum, FC_MATMUL_MM);
	assert_int_equal(2 * sum, FC_MATMUL_ADDMM);
}

static void bmm_and_baddbmm_reproduce_flop_counter_for_matmul_bf16(void **state)
{
	struct kp_cost c;
	int64_t sum = 0, sum_add = 0;
	int i;

	(void)state;
	for (i = 0; i < 4; i++) {
		int64_t m = mkn[i][0] / 4, k = mkn[i][1], n = mkn[i][2] / 4;
		struct kp_slot s[5] = {
			{ 1, (const int64_t[]){ 1 }, DT_BF16, "", 0, NULL },
			{ 3, (const int64_t[]){ 8, m, k }, DT_BF16, "", 0, NULL },
			{ 3, (const int64_t[]){ 8, k, n }, DT_BF16, "", 0, NULL },
			{ 0, NULL, DT_NONE, "1", 0, NULL },
			{ 0, NULL, DT_NONE, "1", 0, NULL },
		};
		struct kp_op_in bmm = { .name = "aten::bmm",
					.nslots = 2,
					.slots = s + 1,
					.kernel_flop = -1,
					.kernel_num_gb = -1.0 };
		struct kp_op_in baddbmm = { .name = "aten::baddbmm",
					    .nslots = 5,
					    .slots = s,
					    .kernel_flop = -1,
					    .kernel_num_gb = -1.0 };

		sum += eval_ok(&bmm, &c);
		assert_int_equal(c.bytes, 8 * 2 * (m * k + k * n + m * n));
		/* baddbmm: B from batch1 (8), not from the broadcast self [1] */
		sum_add += eval_ok(&baddbmm, &c);
		assert_int_equal(c.bytes, 8 * 2 * (m * k + k * n + m * n) + 1 * 2);
	}
	assert_int_equal(sum, FC_MATMUL_BMM);
	assert_int_equal(sum_add, FC_MATMUL_BMM);
}

/* compiled_fp32: Inductor calls the out= variants, the output slot last */
static void out_variants_read_operands_by_schema_position(void **state)
{
	struct kp_cost c;
	const int64_t mm_bytes = 4 * (256 * 512 + 512 * 768 + 256 * 768);

	(void)state;
	assert_int_equal(EVAL(&c, "aten::mm", T(DT_F32, 256, 512), T(DT_F32, 512, 768),
			      T(DT_F32, 256, 768)),
			 0);
	assert_int_equal(c.flops, FC_COMPILED_MM);
	assert_int_equal(c.bytes, mm_bytes);
	assert_int_equal(c.prec, PREC_FP32);

	assert_int_equal(EVAL(&c, "aten::addmm", T(DT_F32, 256, 768), T(DT_F32, 256, 512),
			      T(DT_F32, 512, 768), SC("1"), SC("1"), T(DT_F32, 256, 768)),
			 0);
	assert_int_equal(c.flops, FC_COMPILED_MM);
	assert_int_equal(c.bytes, mm_bytes + 4 * 256 * 768);

	assert_int_equal(EVAL(&c, "aten::bmm", T(DT_F32, 8, 256, 512), T(DT_F32, 8, 512, 768),
			      T(DT_F32, 8, 256, 768)),
			 0);
	assert_int_equal(c.flops, FC_COMPILED_BMM);
	assert_int_equal(c.bytes, 8 * mm_bytes);

	assert_int_equal(EVAL(&c, "aten::baddbmm", T(DT_F32, 8, 256, 768), T(DT_F32, 8, 256, 512),
			      T(DT_F32, 8, 512, 768), SC("1"), SC("1"), T(DT_F32, 8, 256, 768)),
			 0);
	assert_int_equal(c.flops, FC_COMPILED_BMM);
	assert_int_equal(c.bytes, 8 * mm_bytes + 4 * 8 * 256 * 768);
}

static void mm_out_slot_of_another_dtype_sizes_the_write(void **state)
{
	struct kp_cost c;

	(void)state;
	assert_int_equal(EVAL(&c, "aten::mm", T(DT_BF16, 64, 32), T(DT_BF16, 32, 16),
			      T(DT_F32, 64, 16)),
			 0);
	assert_int_equal(c.bytes, 64 * 32 * 2 + 32 * 16 * 2 + 64 * 16 * 4);
	assert_int_equal(c.dtype, DT_BF16);
}

static void addmm_with_matrix_bias_reads_m_times_n_and_zero_beta_none(void **state)
{
	struct kp_cost c;

	(void)state;
	assert_int_equal(EVAL(&c, "aten::addmm", T(DT_F16, 128, 64), T(DT_F16, 128, 256),
			      T(DT_F16, 256, 64), SC("1"), SC("1")),
			 0);
	assert_int_equal(c.flops, 2LL * 128 * 64 * 256);
	assert_int_equal(c.bytes, 2 * (128 * 256 + 256 * 64 + 128 * 64 + 128 * 64));
	assert_int_equal(c.prec, PREC_FP16);
	/* beta = 0: PyTorch ignores self */
	assert_int_equal(EVAL(&c, "aten::addmm", T(DT_F16, 128, 64), T(DT_F16, 128, 256),
			      T(DT_F16, 256, 64), SC("0."), SC("1")),
			 0);
	assert_int_equal(c.bytes, 2 * (128 * 256 + 256 * 64 + 128 * 64));
}

/* _scaled_mm(self, mat2, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum) */
static void scaled_mm_writes_out_dtype_and_reads_fp8_and_scales(void **state)
{
	struct kp_cost c;

	(void)state;
	assert_int_equal(EVAL(&c, "aten::_scaled_mm", T(DT_F8E4M3, 512, 1024),
			      T(DT_F8E4M3, 1024, 256), T0(DT_F32), T0(DT_F32), NONE, NONE, SC("15"),
			      SC("False")),
			 0);
	assert_int_equal(c.flops, 2LL * 512 * 1024 * 256);
	/* fp8 operands 1 byte, bf16 (ScalarType 15) output 2 bytes, two fp32 scales */
	assert_int_equal(c.bytes, 512 * 1024 + 1024 * 256 + 512 * 256 * 2 + 4 + 4);
	assert_int_equal(c.prec, PREC_FP8);
	assert_int_equal(c.dtype, DT_F8E4M3);
	/* out_dtype None: self's dtype */
	assert_int_equal(EVAL(&c, "aten::_scaled_mm", T(DT_F8E5M2, 16, 32), T(DT_F8E4M3, 32, 16),
			      T0(DT_F32), T0(DT_F32), T(DT_BF16, 16), NONE, NONE, SC("True")),
			 0);
	assert_int_equal(c.bytes, 16 * 32 + 32 * 16 + 16 * 16 + 8 + 16 * 2);
}

/* _int_mm(self, mat2): int8 operands, int32 output */
static void int_mm_counts_int8_operands_and_an_int32_output(void **state)
{
	struct kp_cost c;

	(void)state;
	assert_int_equal(EVAL(&c, "aten::_int_mm", T(DT_I8, 64, 128), T(DT_I8, 128, 32)), 0);
	assert_int_equal(c.flops, 2 * 64 * 128 * 32);
	assert_int_equal(c.bytes, 64 * 128 + 128 * 32 + 64 * 32 * 4);
	assert_int_equal(c.prec, PREC_INT8);
}

/*
 * _grouped_mm(self, mat2, offs, bias, out_dtype): MoE experts.  An MoE layer with E = 8
 * experts, T = 4096 routed tokens, d = 1024, ffn = 2816 in bf16.
 */
static void grouped_mm_2d_x_3d_with_offsets_counts_every_token_once(void **state)
{
	struct kp_cost c;

	(void)state;
	/* tokens [T,d] x expert weights [E,d,ffn], offs [E] int32 -> [T,ffn] */
	assert_int_equal(EVAL(&c, "aten::_grouped_mm", T(DT_BF16, 4096, 1024),
			      T(DT_BF16, 8, 1024, 2816), T(DT_I32, 8), NONE, NONE),
			 0);
	assert_null(c.note);
	assert_int_equal(c.cls, MODEL_PRIMARY);
	assert_string_equal(c.family, "gemm");
	assert_int_equal(c.flops, 2LL * 4096 * 1024 * 2816);
	assert_int_equal(c.bytes, 2LL * (4096 * 1024 + 8LL * 1024 * 2816 + 4096 * 2816) + 8 * 4);
	assert_int_equal(c.prec, PREC_BF16);
	/* out_dtype fp32 (ScalarType 6) and a bias [E,ffn] */
	assert_int_equal(EVAL(&c, "aten::_grouped_mm", T(DT_BF16, 4096, 1024),
			      T(DT_BF16, 8, 1024, 2816), T(DT_I32, 8), T(DT_BF16, 8, 2816),
			      SC("6")),
			 0);
	assert_int_equal(c.flops, 2LL * 4096 * 1024 * 2816);
	assert_int_equal(c.bytes, 2LL * (4096 * 1024 + 8LL * 1024 * 2816) + 4LL * 4096 * 2816 +
					  8 * 4 + 2 * 8 * 2816);
	/* the offsets must name as many groups as mat2 holds */
	assert_int_equal(EVAL(&c, "aten::_grouped_mm", T(DT_BF16, 4096, 1024),
			      T(DT_BF16, 8, 1024, 2816), T(DT_I32, 7), NONE, NONE),
			 -1);
	assert_string_equal(c.note, "grouped mm offsets differ from the group count");
	assert_int_equal(c.flops, -1);
}

static void grouped_mm_3d_x_3d_is_a_batched_mm(void **state)
{
	struct kp_cost c;

	(void)state;
	/* [E,C,d] x [E,d,ffn] (capacity-padded experts), no offsets -> [E,C,ffn] */
	assert_int_equal(EVAL(&c, "aten::_grouped_mm", T(DT_BF16, 8, 512, 1024),
			      T(DT_BF16, 8, 1024, 2816), NONE, NONE, NONE),
			 0);
	assert_int_equal(c.flops, 2LL * 8 * 512 * 1024 * 2816);
	assert_int_equal(c.bytes, 2LL * 8 * (512 * 1024 + 1024 * 2816 + 512 * 2816));
	assert_int_equal(EVAL(&c, "aten::_grouped_mm", T(DT_BF16, 8, 512, 1024),
			      T(DT_BF16, 4, 1024, 2816), NONE, NONE, NONE),
			 -1);
	assert_string_equal(c.note, "grouped mm operands differ in group count");
	assert_int_equal(EVAL(&c, "aten::_grouped_mm", T(DT_BF16, 8, 512, 1024),
			      T(DT_BF16, 8, 512, 2816), NONE, NONE, NONE),
			 -1);
	assert_string_equal(c.note, "grouped mm operands differ in the inner dimension");
}

static void grouped_mm_2d_x_2d_splits_the_inner_dimension(void **state)
{
	struct kp_cost c;

	(void)state;
	/* the weight gradient: grad_out^T [ffn,T] x tokens [T,d], offs [E] -> [E,ffn,d] */
	assert_int_equal(EVAL(&c, "aten::_grouped_mm", T(DT_BF16, 2816, 4096),
			      T(DT_BF16, 4096, 1024), T(DT_I32, 8), NONE, NONE),
			 0);
	/* sum over experts of 2*ffn*t_e*d = 2*ffn*T*d: the groups split T, not multiply it */
	assert_int_equal(c.flops, 2LL * 2816 * 4096 * 1024);
	assert_int_equal(c.bytes,
			 2LL * (2816 * 4096 + 4096 * 1024) + 2LL * 8 * 2816 * 1024 + 8 * 4);
	/* without offsets the groups are unknown */
	assert_int_equal(EVAL(&c, "aten::_grouped_mm", T(DT_BF16, 2816, 4096),
			      T(DT_BF16, 4096, 1024), NONE, NONE, NONE),
			 -1);
	assert_string_equal(c.note, "grouped mm with a 2-D operand records no offsets");
}

static void grouped_mm_3d_x_2d_splits_the_columns(void **state)
{
	struct kp_cost c;

	(void)state;
	/* [E,M,K] x [K,T], offs [E] -> [M,T] */
	assert_int_equal(EVAL(&c, "aten::_grouped_mm", T(DT_F16, 8, 64, 128), T(DT_F16, 128, 4096),
			      T(DT_I32, 8), NONE, NONE),
			 0);
	assert_int_equal(c.flops, 2LL * 64 * 128 * 4096);
	assert_int_equal(c.bytes, 2LL * (8 * 64 * 128 + 128 * 4096 + 64 * 4096) + 8 * 4);
	/* 1-D or 4-D operands, 2-D offsets and overflowing shapes are refused */
	assert_int_equal(EVAL(&c, "aten::_grouped_mm", T(DT_F16, 128), T(DT_F16, 128, 4096),
			      T(DT_I32, 8), NONE, NONE),
			 -1);
	assert_string_equal(c.note, "grouped mm operands are not 2-D or 3-D");
	assert_int_equal(EVAL(&c, "aten::_grouped_mm", T(DT_F16, 8, 64, 128), T(DT_F16, 128, 4096),
			      T(DT_I32, 8, 1), NONE, NONE),
			 -1);
	assert_string_equal(c.note, "grouped mm offsets are not 1-D");
	assert_int_equal(EVAL(&c, "aten::_grouped_mm", T(DT_F16, 1LL << 40, 1LL << 20),
			      T(DT_F16, 2, 1LL << 20, 1LL << 20), T(DT_I32, 2), NONE, NONE),
			 -1);
	assert_string_equal(c.note, "shape product overflows int64");
	assert_int_equal(EVAL(&c, "aten::_grouped_mm", NONE, T(DT_F16, 128, 4096)), -1);
	assert_string_equal(c.note, "grouped mm operands are not tensors");
}

static void mm_rejects_operands_that_do_not_multiply(void **state)
{
	struct kp_cost c;

	(void)state;
	assert_int_equal(EVAL(&c, "aten::mm", T(DT_BF16, 64, 32), T(DT_BF16, 64, 16)), -1);
	assert_string_equal(c.note, "matmul operands differ in the inner dimension");
	assert_int_equal(c.flops, -1);
	assert_int_equal(c.bytes, -1);
	assert_int_equal(c.cls, MODEL_PRIMARY);
	assert_int_equal(EVAL(&c, "aten::bmm", T(DT_BF16, 64, 32), T(DT_BF16, 32, 16)), -1);
	assert_string_equal(c.note, "bmm operands are not 3-D");
	assert_int_equal(EVAL(&c, "aten::mm", T(DT_BF16, 64, 32)), -1);
	assert_string_equal(c.note, "matmul operands are not tensors");
	assert_int_equal(EVAL(&c, "aten::mm", T(DT_BF16, 64, -32), T(DT_BF16, -32, 16)), -1);
	assert_string_equal(c.note, "negative dimension in the op's Input Dims");
}

static void mm_whose_flops_overflow_int64_returns_minus_one(void **state)
{
	struct kp_cost c;

	(void)state;
	/* 2 * 2^22 * 2^21 * 2^21 = 2^65 */
	assert_int_equal(EVAL(&c, "aten::mm", T(DT_BF16, 1 << 22, 1 << 21),
			      T(DT_BF16, 1 << 21, 1 << 21)),
			 -1);
	assert_string_equal(c.note, "shape product overflows int64");
	assert_int_equal(c.flops, -1);
	assert_int_equal(c.bytes, -1);
	/* 2^62 FLOPs fit: 2 * 2^21 * 2^20 * 2^20 */
	assert_int_equal(EVAL(&c, "aten::mm", T(DT_BF16, 1 << 21, 1 << 20),
			      T(DT_BF16, 1 << 20, 1 << 20)),
			 0);
	assert_int_equal(c.flops, (int64_t)1 << 62);
}

/* Checked sums and products (poisoned()): an overflow stays one through unknown sizes. */
static void an_overflow_wins_over_an_unknown_size(void **state)
{
	struct kp_cost c;

	(void)state;
	/* numel 2^80 overflows; the other operand's dtype has no size */
	assert_int_equal(EVAL(&c, "aten::add", T(DT_BF16, 1LL << 40, 1LL << 40), T(DT_UNKNOWN, 1),
			      SC("1")),
			 -1);
	assert_string_equal(c.note, "shape product overflows int64");
	assert_int_equal(EVAL(&c, "aten::add", T(DT_UNKNOWN, 1), T(DT_BF16, 1LL << 40, 1LL << 40),
			      SC("1")),
			 -1);
	assert_string_equal(c.note, "shape product overflows int64");
	/* without the overflow the size is unknown, not an error */
	assert_int_equal(EVAL(&c, "aten::add", T(DT_BF16, 1 << 10, 1 << 10), T(DT_UNKNOWN, 1),
			      SC("1")),
			 0);
	assert_int_equal(c.bytes, -1);
}

static void mm_of_unknown_dtype_keeps_flops_and_leaves_bytes_unknown(void **state)
{
	struct kp_cost c;

	(void)state;
	assert_int_equal(EVAL(&c, "aten::mm", T(DT_UNKNOWN, 64, 32), T(DT_UNKNOWN, 32, 16)), 0);
	assert_int_equal(c.flops, 2 * 64 * 32 * 16);
	assert_int_equal(c.bytes, -1);
	assert_string_equal(c.note, "tensor of unknown dtype: bytes unknown");
	assert_int_equal(c.prec, PREC_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mm_reproduces_flop_counter_for_matmul_bf16),
		cmocka_unit_test(addmm_counts_each_call_as_its_mm_and_flop_counter_counts_two),
		cmocka_unit_test(bmm_and_baddbmm_reproduce_flop_counter_for_matmul_bf16),
		cmocka_unit_test(out_variants_read_operands_by_schema_position),
		cmocka_unit_test(mm_out_slot_of_another_dtype_sizes_the_write),
		cmocka_unit_test(addmm_with_matrix_bias_reads_m_times_n_and_zero_beta_none),
		cmocka_unit_test(scaled_mm_writes_out_dtype_and_reads_fp8_and_scales),
		cmocka_unit_test(grouped_mm_2d_x_3d_with_offsets_counts_every_token_once),
		cmocka_unit_test(grouped_mm_3d_x_3d_is_a_batched_mm),
		cmocka_unit_test(grouped_mm_2d_x_2d_splits_the_inner_dimension),
		cmocka_unit_test(grouped_mm_3d_x_2d_splits_the_columns),
		cmocka_unit_test(int_mm_counts_int8_operands_and_an_int32_output),
		cmocka_unit_test(mm_rejects_operands_that_do_not_multiply),
		cmocka_unit_test(mm_whose_flops_overflow_int64_returns_minus_one),
		cmocka_unit_test(an_overflow_wins_over_an_unknown_size),
		cmocka_unit_test(mm_of_unknown_dtype_keeps_flops_and_leaves_bytes_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
