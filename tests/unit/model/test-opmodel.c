/*
 * test-opmodel.c — op FLOP/byte models against FlopCounterMode's counts for the
 * torch211-h100 fixtures (testdata/torch211-h100/flop_counter.json) and hand math.
 * Slots are struct literals copied from the fixtures' cpu_op events.
 */
#include "kprof/opmodel-internal.h"
#include "kprof/opmodel.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

/* A tensor slot with the given dims, a 0-dim tensor, a scalar / None slot */
#define T(dt, ...)                                                                                 \
	{ .ndim = (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)),                     \
	  .dims = (const int64_t[]){ __VA_ARGS__ },                                                \
	  .dtype = (dt),                                                                           \
	  .concrete = "" }
#define T0(dt) { .ndim = 0, .dims = NULL, .dtype = (dt), .concrete = "" }
#define SC(txt) { .ndim = 0, .dims = NULL, .dtype = DT_NONE, .concrete = (txt) }
#define NONE SC("")
#define SLOTS(...) ((const struct kp_slot[]){ __VA_ARGS__ })
#define NSLOTS(...) ((int)(sizeof(SLOTS(__VA_ARGS__)) / sizeof(struct kp_slot)))

/* Evaluate op @nm over the slots; the result code goes to @rc, the cost to @c. */
#define EVAL(c, nm, ...)                                                                           \
	opmodel_eval(&(struct kp_op_in){ .name = (nm),                                             \
					 .nslots = NSLOTS(__VA_ARGS__),                            \
					 .slots = SLOTS(__VA_ARGS__),                              \
					 .kernel_flop = -1,                                        \
					 .kernel_num_gb = -1.0 },                                  \
		     (c))

/* FlopCounterMode per_call counts, testdata/torch211-h100/flop_counter.json */
#define FC_MATMUL_MM 1153198718976LL
#define FC_MATMUL_ADDMM 2306397437952LL
#define FC_MATMUL_BMM 576599359488LL
#define FC_SDPA_FLASH_FWD 2667174690816LL
#define FC_SDPA_FLASH_BWD 6667936727040LL
#define FC_CONV_FWD 36325818368LL
#define FC_CONV_BWD 72651636736LL
#define FC_COMPILED_CONV 4867200LL
#define FC_COMPILED_MM 201326592LL
#define FC_COMPILED_BMM 1610612736LL
#define FC_BLOCK_CUDNN_FWD 68719476736LL
#define FC_BLOCK_CUDNN_BWD 171798691840LL

/* matmul_bf16: (M, K, N) */
static const int64_t mkn[4][3] = {
	{ 1024, 1024, 1024 },
	{ 2048, 4096, 1024 },
	{ 4096, 4096, 1024 },
	{ 8192, 8192, 8192 },
};

static int64_t eval_ok(const struct kp_op_in *in, struct kp_cost *c)
{
	assert_int_equal(opmodel_eval(in, c), 0);
	assert_null(c->note);
	return c->flops;
}

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

/* ---- convolution ---- */

/* conv_fp32 layers (N, C, H, W, K, R, stride, pad) as recorded */
static const struct conv_layer {
	int64_t n, c, h, k, r, out;
	const char *stride, *pad;
} layers[6] = {
	{ 32, 64, 56, 64, 3, 56, "[1, 1]", "[1, 1]" },
	{ 32, 128, 28, 128, 3, 28, "[1, 1]", "[1, 1]" },
	{ 32, 256, 14, 256, 3, 14, "[1, 1]", "[1, 1]" },
	{ 32, 3, 224, 64, 7, 112, "[2, 2]", "[3, 3]" },
	{ 32, 256, 56, 64, 1, 56, "[1, 1]", "[0, 0]" },
	{ 32, 512, 7, 2048, 1, 7, "[1, 1]", "[0, 0]" },
};

static void convolution_reproduces_flop_counter_for_conv_fp32(void **state)
{
	struct kp_cost c;
	int64_t sum = 0;
	int i;

	(void)state;
	for (i = 0; i < 6; i++) {
		const struct conv_layer *l = &layers[i];
		struct kp_slot s[9] = {
			{ 4, (const int64_t[]){ l->n, l->c, l->h, l->h }, DT_F32, "", 0, NULL },
			{ 4, (const int64_t[]){ l->k, l->c, l->r, l->r }, DT_F32, "", 0, NULL },
			{ 0, NULL, DT_NONE, "", 0, NULL },
			{ 0, NULL, DT_NONE, l->stride, 0, NULL },
			{ 0, NULL, DT_NONE, l->pad, 0, NULL },
			{ 0, NULL, DT_NONE, "[1, 1]", 0, NULL },
			{ 0, NULL, DT_NONE, "False", 0, NULL },
			{ 0, NULL, DT_NONE, "[0, 0]", 0, NULL },
			{ 0, NULL, DT_NONE, "1", 0, NULL },
		};
		struct kp_op_in in = { .name = "aten::convolution",
				       .nslots = 9,
				       .slots = s,
				       .kernel_flop = -1,
				       .kernel_num_gb = -1.0 };
		int64_t y = l->n * l->k * l->out * l->out;

		sum += eval_ok(&in, &c);
		/* x + w + y, fp32; the output size is derived from stride and padding */
		assert_int_equal(c.bytes,
				 4 * (l->n * l->c * l->h * l->h + l->k * l->c * l->r * l->r + y));
		assert_string_equal(c.family, "conv");
		assert_int_equal(c.prec, PREC_FP32);
	}
	assert_int_equal(sum, FC_CONV_FWD);
}

static void convolution_backward_reproduces_flop_counter_for_conv_fp32(void **state)
{
	struct kp_cost c;
	int64_t sum = 0;
	int i;

	(void)state;
	for (i = 0; i < 6; i++) {
		const struct conv_layer *l = &layers[i];
		struct kp_slot s[11] = {
			{ 4, (const int64_t[]){ l->n, l->k, l->out, l->out }, DT_F32, "", 0, NULL },
			{ 4, (const int64_t[]){ l->n, l->c, l->h, l->h }, DT_F32, "", 0, NULL },
			{ 4, (const int64_t[]){ l->k, l->c, l->r, l->r }, DT_F32, "", 0, NULL },
			{ 0, NULL, DT_NONE, "[0]", 0, NULL },
			{ 0, NULL, DT_NONE, l->stride, 0, NULL },
			{ 0, NULL, DT_NONE, l->pad, 0, NULL },
			{ 0, NULL, DT_NONE, "[1, 1]", 0, NULL },
			{ 0, NULL, DT_NONE, "False", 0, NULL },
			{ 0, NULL, DT_NONE, "[0, 0]", 0, NULL },
			{ 0, NULL, DT_NONE, "1", 0, NULL },
			{ 0, NULL, DT_NONE, "[True, True, False]", 0, NULL },
		};
		struct kp_op_in in = { .name = "aten::convolution_backward",
				       .nslots = 11,
				       .slots = s,
				       .kernel_flop = -1,
				       .kernel_num_gb = -1.0 };
		int64_t dy = l->n * l->k * l->out * l->out, x = l->n * l->c * l->h * l->h;
		int64_t w = l->k * l->c * l->r * l->r;

		sum += eval_ok(&in, &c);
		/* grad-input dy + w + dx, grad-weight dy + x + dw */
		assert_int_equal(c.bytes, 4 * ((dy + w + x) + (dy + x + w)));
	}
	assert_int_equal(sum, FC_CONV_BWD);
}

static void convolution_of_compiled_fp32_matches_flop_counter(void **state)
{
	struct kp_cost c;

	(void)state;
	/* [1,3,56,56] x [12,3,5,5], stride 1, padding 0: a 52x52 output */
	assert_int_equal(EVAL(&c, "aten::convolution", T(DT_F32, 1, 3, 56, 56),
			      T(DT_F32, 12, 3, 5, 5), NONE, SC("[1, 1]"), SC("[0, 0]"),
			      SC("[1, 1]"), SC("False"), SC("[0, 0]"), SC("1")),
			 0);
	assert_int_equal(c.flops, FC_COMPILED_CONV);
	assert_int_equal(c.bytes, 4 * (3 * 56 * 56 + 12 * 3 * 25 + 12 * 52 * 52));
	/* _convolution: the same first 9 slots plus 4 flags */
	assert_int_equal(EVAL(&c, "aten::_convolution", T(DT_F32, 1, 3, 56, 56),
			      T(DT_F32, 12, 3, 5, 5), NONE, SC("[1, 1]"), SC("[0, 0]"),
			      SC("[1, 1]"), SC("False"), SC("[0, 0]"), SC("1"), SC("False"),
			      SC("False"), SC("True"), SC("True")),
			 0);
	assert_int_equal(c.flops, FC_COMPILED_CONV);
}

/* cudnn_convolution(self, weight, padding, stride, dilation, groups, benchmark, ..) */
static void cudnn_convolution_reads_padding_first_and_slot_6_as_benchmark(void **state)
{
	struct kp_cost c;

	(void)state;
	/* conv_fp32 layer 4 as recorded: padding [3, 3] at slot 2, stride [2, 2] at slot 3 */
	assert_int_equal(EVAL(&c, "aten::cudnn_convolution", T(DT_F32, 32, 3, 224, 224),
			      T(DT_F32, 64, 3, 7, 7), SC("[3, 3]"), SC("[2, 2]"), SC("[1, 1]"),
			      SC("1"), SC("False"), SC("False"), SC("True")),
			 0);
	assert_int_equal(c.flops, 7552892928LL);
	/* torch.backends.cudnn.benchmark = True: slot 6 "True", still a forward conv */
	assert_int_equal(EVAL(&c, "aten::cudnn_convolution", T(DT_F32, 32, 3, 224, 224),
			      T(DT_F32, 64, 3, 7, 7), SC("[3, 3]"), SC("[2, 2]"), SC("[1, 1]"),
			      SC("1"), SC("True"), SC("False"), SC("True")),
			 0);
	assert_int_equal(c.flops, 7552892928LL);
	assert_int_equal(c.bytes, 4 * (32 * 3 * 224 * 224 + 64 * 3 * 49 + 32 * 64 * 112 * 112));
}

static void transposed_convolution_uses_input_spatial_size(void **state)
{
	struct kp_cost c;

	(void)state;
	/*
	 * x [1,16,8,8], w [C_in=16, C_out=8, 3, 3], stride 2, padding 1, output_padding 1:
	 * y = (8-1)*2 - 2 + 2 + 1 + 1 = 16; FLOPs 2*1*16*8*9*(8*8) over the input pixels.
	 */
	assert_int_equal(EVAL(&c, "aten::convolution", T(DT_BF16, 1, 16, 8, 8),
			      T(DT_BF16, 16, 8, 3, 3), T(DT_BF16, 8), SC("[2, 2]"), SC("[1, 1]"),
			      SC("[1, 1]"), SC("True"), SC("[1, 1]"), SC("1")),
			 0);
	assert_int_equal(c.flops, 2 * 16 * 8 * 9 * 64);
	assert_int_equal(c.bytes, 2 * (16 * 64 + 16 * 8 * 9 + 8 + 8 * 16 * 16));
	/* cudnn_convolution_transpose(self, weight, padding, output_padding, stride, ..) */
	assert_int_equal(EVAL(&c, "aten::cudnn_convolution_transpose", T(DT_BF16, 1, 16, 8, 8),
			      T(DT_BF16, 16, 8, 3, 3), SC("[1, 1]"), SC("[1, 1]"), SC("[2, 2]"),
			      SC("[1, 1]"), SC("1"), SC("False"), SC("False"), SC("True")),
			 0);
	assert_int_equal(c.flops, 2 * 16 * 8 * 9 * 64);
	assert_int_equal(c.bytes, 2 * (16 * 64 + 16 * 8 * 9 + 8 * 16 * 16));
}

static void grouped_convolution_counts_input_channels_per_group(void **state)
{
	struct kp_cost c;

	(void)state;
	/* groups 4: w [64, 32/4, 3, 3]; FLOPs 2*N*C_out*(C_in/g)*9*H*W */
	assert_int_equal(EVAL(&c, "aten::convolution", T(DT_F32, 2, 32, 16, 16),
			      T(DT_F32, 64, 8, 3, 3), NONE, SC("[1, 1]"), SC("[1, 1]"),
			      SC("[1, 1]"), SC("False"), SC("[0, 0]"), SC("4")),
			 0);
	assert_int_equal(c.flops, 2 * 2 * 64 * 8 * 9 * 256);
	/* depthwise: groups = C_in = C_out */
	assert_int_equal(EVAL(&c, "aten::convolution", T(DT_F32, 2, 32, 16, 16),
			      T(DT_F32, 32, 1, 3, 3), NONE, SC("[1, 1]"), SC("[1, 1]"),
			      SC("[1, 1]"), SC("False"), SC("[0, 0]"), SC("32")),
			 0);
	assert_int_equal(c.flops, 2 * 2 * 32 * 1 * 9 * 256);
	/* channels that do not fit the groups */
	assert_int_equal(EVAL(&c, "aten::convolution", T(DT_F32, 2, 32, 16, 16),
			      T(DT_F32, 64, 8, 3, 3), NONE, SC("[1, 1]"), SC("[1, 1]"),
			      SC("[1, 1]"), SC("False"), SC("[0, 0]"), SC("1")),
			 -1);
	assert_string_equal(c.note, "convolution channels do not match the weight and groups");
}

static void convolution_output_size_follows_dilation_and_rejects_empty_ones(void **state)
{
	struct kp_cost c;

	(void)state;
	/* 1-D: L = 10, k = 3, dilation 2, stride 1, padding 0: y = 10 - 4 - 1 + 1 = 6 */
	assert_int_equal(EVAL(&c, "aten::convolution", T(DT_F32, 1, 4, 10), T(DT_F32, 8, 4, 3),
			      T(DT_F32, 8), SC("[1]"), SC("[0]"), SC("[2]"), SC("False"), SC("[0]"),
			      SC("1")),
			 0);
	assert_int_equal(c.flops, 2 * 8 * 4 * 3 * 6);
	assert_int_equal(c.bytes, 4 * (4 * 10 + 8 * 4 * 3 + 8 + 8 * 6));
	/* 3-D, single-value lists broadcast: k = 3, stride 2, padding 1 on 9^3: y = 5^3 */
	assert_int_equal(EVAL(&c, "aten::convolution", T(DT_F32, 1, 2, 9, 9, 9),
			      T(DT_F32, 4, 2, 3, 3, 3), NONE, SC("[2]"), SC("[1]"), SC("[1]"),
			      SC("False"), SC("[0]"), SC("1")),
			 0);
	assert_int_equal(c.flops, 2 * 4 * 2 * 27 * 125);
	/* kernel larger than the padded input */
	assert_int_equal(EVAL(&c, "aten::convolution", T(DT_F32, 1, 4, 2), T(DT_F32, 8, 4, 5), NONE,
			      SC("[1]"), SC("[0]"), SC("[1]"), SC("False"), SC("[0]"), SC("1")),
			 -1);
	assert_string_equal(c.note, "convolution output size is not positive");
	/* an unreadable stride */
	assert_int_equal(EVAL(&c, "aten::convolution", T(DT_F32, 1, 4, 8), T(DT_F32, 8, 4, 3), NONE,
			      SC(""), SC("[0]"), SC("[1]"), SC("False"), SC("[0]"), SC("1")),
			 -1);
	assert_string_equal(c.note,
			    "convolution stride, padding, dilation or output_padding unreadable");
}

/*
 * fuzz-opmodel (UBSan): an output_padding or a dilated kernel span of INT64_MAX
 * overflowed in the "+ 1" of the output size, so the note named the wrong reason.
 */
static void convolution_output_size_checks_every_step_for_overflow(void **state)
{
	struct kp_cost c;

	(void)state;
	/* transposed, output_padding INT64_MAX: y = (8-1)*1 - 0 + 2 + INT64_MAX + 1 */
	assert_int_equal(EVAL(&c, "aten::convolution", T(DT_F32, 1, 4, 8), T(DT_F32, 4, 8, 3), NONE,
			      SC("[1]"), SC("[0]"), SC("[1]"), SC("True"),
			      SC("[9223372036854775807]"), SC("1")),
			 -1);
	assert_string_equal(c.note, "shape product overflows int64");
	/* dilation INT64_MAX with k = 2: the span d(k-1) is INT64_MAX, far beyond the input;
	 * span + 1 overflowed and the wrapped subtraction read as an overflow */
	assert_int_equal(EVAL(&c, "aten::convolution", T(DT_F32, 1, 4, 8), T(DT_F32, 8, 4, 2), NONE,
			      SC("[1]"), SC("[0]"), SC("[9223372036854775807]"), SC("False"),
			      SC("[0]"), SC("1")),
			 -1);
	assert_string_equal(c.note, "convolution output size is not positive");
}

/*
 * Shape arithmetic near int64's limits: exact where the result fits, -1 or a failure note
 * where it does not, never a wrapped value (make check ASAN=1 makes UBSan reports fatal).
 */
static void causal_pairs_near_int64_max_are_exact_or_overflow(void **state)
{
	(void)state;
	/* n odd and INT64_MAX: (n + 1) / 2 overflowed before the multiplication */
	assert_int_equal(opmodel_causal_pairs(INT64_MAX, INT64_MAX, 0), -1);
	assert_int_equal(opmodel_causal_pairs(INT64_MAX, INT64_MAX, 1), -1);
	/* results of exactly INT64_MAX: T(1) + (INT64_MAX - 1) * 1 */
	assert_int_equal(opmodel_causal_pairs(INT64_MAX, 1, 0), INT64_MAX);
	assert_int_equal(opmodel_causal_pairs(1, INT64_MAX, 1), INT64_MAX);
	/* the largest odd n whose T(n) fits: 4294967295 * 2147483648 */
	assert_int_equal(opmodel_causal_pairs(4294967295LL, 4294967295LL, 0),
			 9223372034707292160LL);
}

/*
 * Integers in Concrete Inputs beyond int64 ("99999999999999999999") were read as
 * INT64_MAX or INT64_MIN (strtoll saturates): a stride of INT64_MAX gave a 1-pixel output
 * and FLOPs for a conv that no run could have had.  They are unreadable now.
 */
static void out_of_range_integers_in_concrete_inputs_are_unreadable(void **state)
{
	struct kp_cost c;

	(void)state;
	assert_int_equal(EVAL(&c, "aten::convolution", T(DT_F32, 1, 4, 8, 8), T(DT_F32, 8, 4, 3, 3),
			      NONE, SC("[99999999999999999999, 1]"), SC("[0, 0]"), SC("[1, 1]"),
			      SC("False"), SC("[0, 0]"), SC("1")),
			 -1);
	assert_string_equal(c.note,
			    "convolution stride, padding, dilation or output_padding unreadable");
	assert_int_equal(c.flops, -1);
	assert_int_equal(EVAL(&c, "aten::convolution", T(DT_F32, 1, 4, 8, 8), T(DT_F32, 8, 4, 3, 3),
			      NONE, SC("[1, 1]"), SC("-99999999999999999999"), SC("[1, 1]"),
			      SC("False"), SC("[0, 0]"), SC("1")),
			 -1);
	assert_string_equal(c.note,
			    "convolution stride, padding, dilation or output_padding unreadable");
	assert_int_equal(EVAL(&c, "aten::convolution", T(DT_F32, 1, 4, 8, 8), T(DT_F32, 8, 4, 3, 3),
			      NONE, SC("[1, 1]"), SC("[0, 0]"), SC("[1, 1]"), SC("False"),
			      SC("[0, 0]"), SC("99999999999999999999")),
			 -1);
	assert_string_equal(c.note, "convolution 'groups' is not a positive integer");
	/* the largest int64 still reads: a stride of INT64_MAX is legal, if useless */
	assert_int_equal(EVAL(&c, "aten::convolution", T(DT_F32, 1, 4, 8, 8), T(DT_F32, 8, 4, 3, 3),
			      NONE, SC("[9223372036854775807, 1]"), SC("[0, 0]"), SC("[1, 1]"),
			      SC("False"), SC("[0, 0]"), SC("1")),
			 0);
	assert_int_equal(c.flops, 2LL * 8 * 4 * 9 * 1 * 6);
	/* a ScalarType number beyond int (4294967311 = 2^32 + 15) is not bf16 (15) */
	assert_int_equal(EVAL(&c, "aten::_scaled_mm", T(DT_F8E4M3, 16, 32), T(DT_F8E4M3, 32, 16),
			      T0(DT_F32), T0(DT_F32), NONE, NONE, SC("4294967311"), SC("False")),
			 0);
	assert_int_equal(c.bytes, -1);
	assert_string_equal(c.note, "tensor of unknown dtype: bytes unknown");
}

static void convolution_backward_counts_only_the_masked_gradients(void **state)
{
	struct kp_cost c;
	const int64_t fwd = 2LL * 32 * 64 * 64 * 9 * 56 * 56;
	const int64_t dy = 32 * 64 * 56 * 56, x = dy, w = 64 * 64 * 9;

	(void)state;
	/* grad-weight only */
	assert_int_equal(EVAL(&c, "aten::convolution_backward", T(DT_BF16, 32, 64, 56, 56),
			      T(DT_BF16, 32, 64, 56, 56), T(DT_BF16, 64, 64, 3, 3), SC("[64]"),
			      SC("[1, 1]"), SC("[1, 1]"), SC("[1, 1]"), SC("False"), SC("[0, 0]"),
			      SC("1"), SC("[False, True, False]")),
			 0);
	assert_int_equal(c.flops, fwd);
	assert_int_equal(c.bytes, 2 * (dy + x + w));
	/* grad-input and bias: the bias gradient reads dy and writes C_out, 0 FLOPs */
	assert_int_equal(EVAL(&c, "aten::convolution_backward", T(DT_BF16, 32, 64, 56, 56),
			      T(DT_BF16, 32, 64, 56, 56), T(DT_BF16, 64, 64, 3, 3), SC("[64]"),
			      SC("[1, 1]"), SC("[1, 1]"), SC("[1, 1]"), SC("False"), SC("[0, 0]"),
			      SC("1"), SC("[True, False, True]")),
			 0);
	assert_int_equal(c.flops, fwd);
	assert_int_equal(c.bytes, 2 * (dy + w + x) + 2 * (dy + 64));
	assert_int_equal(EVAL(&c, "aten::convolution_backward", T(DT_BF16, 32, 64, 56, 56),
			      T(DT_BF16, 32, 64, 56, 56), T(DT_BF16, 64, 64, 3, 3), SC("[64]"),
			      SC("[1, 1]"), SC("[1, 1]"), SC("[1, 1]"), SC("False"), SC("[0, 0]"),
			      SC("1"), SC("[True, False]")),
			 -1);
	assert_string_equal(c.note, "convolution_backward output_mask is not three booleans");
}

/*
 * emit_nvtx records sizes only: "aten::convolution_backward, seq = 12, op_id = 345, sizes =
 * [[32, 128, 28, 28], [32, 64, 56, 56], [128, 64, 3, 3], [], [], [], [], [], [], [], []]"
 * becomes these slots (capture/intercept/hostops.c nvtx_args: "" Concrete Inputs).  Without cuDNN calls
 * that say the scalars, transposed and groups come from the shapes and both gradients are
 * assumed, with the assumption reported: 2 x 2 N K (C/g) R S P Q.
 */
static void emit_nvtx_convolution_backward_takes_its_form_from_the_shapes(void **state)
{
	struct kp_cost c;

	(void)state;
	/* ResNet's stride-2 3x3, 64 -> 128 channels: only the plain form fits the channels */
	assert_int_equal(EVAL(&c, "aten::convolution_backward", T(DT_BF16, 32, 128, 28, 28),
			      T(DT_BF16, 32, 64, 56, 56), T(DT_BF16, 128, 64, 3, 3), NONE, NONE,
			      NONE, NONE, NONE, NONE, NONE, NONE),
			 0);
	assert_null(c.note);
	assert_int_equal(c.flops, 2 * (2LL * 32 * 128 * 64 * 3 * 3 * 28 * 28));
	assert_non_null(c.assumed);
	assert_non_null(strstr(c.assumed, "output_mask not recorded"));
	/* 64 -> 64, stride 1: both forms fit the channels, equal sizes: the same FLOPs */
	assert_int_equal(EVAL(&c, "aten::convolution_backward", T(DT_BF16, 32, 64, 56, 56),
			      T(DT_BF16, 32, 64, 56, 56), T(DT_BF16, 64, 64, 3, 3), NONE, NONE,
			      NONE, NONE, NONE, NONE, NONE, NONE),
			 0);
	assert_int_equal(c.flops, 2 * (2LL * 32 * 64 * 64 * 3 * 3 * 56 * 56));
	/* depthwise (groups 32 from the channels): 2 x 2 N K (C/g) R S P Q with C/g = 1 */
	assert_int_equal(EVAL(&c, "aten::convolution_backward", T(DT_F16, 8, 32, 14, 14),
			      T(DT_F16, 8, 32, 28, 28), T(DT_F16, 32, 1, 3, 3), NONE, NONE, NONE,
			      NONE, NONE, NONE, NONE, NONE),
			 0);
	assert_int_equal(c.flops, 2 * (2LL * 8 * 32 * 1 * 3 * 3 * 14 * 14));
	/* transposed (only it fits: x[1] = w[0]): the input's spatial size */
	assert_int_equal(EVAL(&c, "aten::convolution_backward", T(DT_F32, 1, 8, 16, 16),
			      T(DT_F32, 1, 16, 8, 8), T(DT_F32, 16, 8, 3, 3), NONE, NONE, NONE,
			      NONE, NONE, NONE, NONE, NONE),
			 0);
	assert_int_equal(c.flops, 2 * (2LL * 1 * 16 * 8 * 3 * 3 * 8 * 8));
	/* recorded values still win: the mask says grad weight only, no assumption */
	assert_int_equal(EVAL(&c, "aten::convolution_backward", T(DT_BF16, 32, 128, 28, 28),
			      T(DT_BF16, 32, 64, 56, 56), T(DT_BF16, 128, 64, 3, 3), NONE, NONE,
			      NONE, NONE, NONE, NONE, NONE, SC("[False, True, False]")),
			 0);
	assert_int_equal(c.flops, 2LL * 32 * 128 * 64 * 3 * 3 * 28 * 28);
	assert_null(c.assumed);
	/* channels that fit neither form */
	assert_int_equal(EVAL(&c, "aten::convolution_backward", T(DT_F32, 1, 5, 8, 8),
			      T(DT_F32, 1, 6, 8, 8), T(DT_F32, 7, 3, 3, 3), NONE, NONE, NONE, NONE,
			      NONE, NONE, NONE, NONE),
			 -1);
	assert_non_null(strstr(c.note, "'transposed' not recorded"));
}

static void transposed_convolution_backward_uses_input_spatial_size(void **state)
{
	struct kp_cost c;

	(void)state;
	/* forward as in transposed_convolution_uses_input_spatial_size: dy is the 16x16 output */
	assert_int_equal(EVAL(&c, "aten::convolution_backward", T(DT_F32, 1, 8, 16, 16),
			      T(DT_F32, 1, 16, 8, 8), T(DT_F32, 16, 8, 3, 3), SC("[0]"),
			      SC("[2, 2]"), SC("[1, 1]"), SC("[1, 1]"), SC("True"), SC("[1, 1]"),
			      SC("1"), SC("[True, True, False]")),
			 0);
	assert_int_equal(c.flops, 2 * (2 * 16 * 8 * 9 * 64));
}

/* ---- attention ---- */

static void causal_pairs_count_top_left_and_bottom_right_masks_exactly(void **state)
{
	(void)state;
	assert_int_equal(opmodel_causal_pairs(4, 4, 0), 10);
	assert_int_equal(opmodel_causal_pairs(4, 4, 1), 10);
	assert_int_equal(opmodel_causal_pairs(1024, 1024, 0), 524800);
	/* s_q < s_k: top-left rows 1, 2; bottom-right rows 3, 4 */
	assert_int_equal(opmodel_causal_pairs(2, 4, 0), 3);
	assert_int_equal(opmodel_causal_pairs(2, 4, 1), 7);
	/* s_q > s_k: top-left 1, 2, 2, 2; bottom-right 0, 0, 1, 2 */
	assert_int_equal(opmodel_causal_pairs(4, 2, 0), 7);
	assert_int_equal(opmodel_causal_pairs(4, 2, 1), 3);
	assert_int_equal(opmodel_causal_pairs(0, 5, 0), 0);
	assert_int_equal(opmodel_causal_pairs(-1, 5, 0), -1);
	assert_int_equal(opmodel_causal_pairs((int64_t)1 << 30, (int64_t)1 << 30, 1),
			 ((int64_t)1 << 29) * (((int64_t)1 << 30) + 1));
	assert_int_equal(opmodel_causal_pairs((int64_t)1 << 62, (int64_t)1 << 62, 0), -1);
}

#define FLASH "aten::_scaled_dot_product_flash_attention"

/*
 * sdpa_flash: B in (1, 8), H 16, S in (512, 1024, 4096), D 128, is_causal False
 * and True.  FC counts causal calls dense; kprof counts S(S+1)/2 pairs of S^2.
 */
static void sdpa_flash_matches_flop_counter_dense_and_counts_causal_pairs(void **state)
{
	static const int64_t bs[2] = { 1, 8 }, ss[3] = { 512, 1024, 4096 };
	struct kp_cost c;
	int64_t dense_fwd = 0, dense_bwd = 0;
	int i, j, causal;

	(void)state;
	for (i = 0; i < 2; i++) {
		for (j = 0; j < 3; j++) {
			for (causal = 0; causal < 2; causal++) {
				int64_t b = bs[i], s = ss[j], dense = 4 * b * 16 * s * s * 128;
				const int64_t *qd = (const int64_t[]){ b, 16, s, 128 };
				const int64_t *lse = (const int64_t[]){ b, 16, s };
				const char *flag = causal ? "True" : "False";
				struct kp_slot fw[7] = {
					{ 4, qd, DT_BF16, "", 0, NULL },
					{ 4, qd, DT_BF16, "", 0, NULL },
					{ 4, qd, DT_BF16, "", 0, NULL },
					{ 0, NULL, DT_NONE, "0.", 0, NULL },
					{ 0, NULL, DT_NONE, flag, 0, NULL },
					{ 0, NULL, DT_NONE, "False", 0, NULL },
					{ 0, NULL, DT_NONE, "0.088388347648318433", 0, NULL },
				};
				struct kp_slot bw[15] = {
					{ 4, qd, DT_BF16, "", 0, NULL },
					{ 4, qd, DT_BF16, "", 0, NULL },
					{ 4, qd, DT_BF16, "", 0, NULL },
					{ 4, qd, DT_BF16, "", 0, NULL },
					{ 4, qd, DT_BF16, "", 0, NULL },
					{ 3, lse, DT_F32, "", 0, NULL },
					{ 0, NULL, DT_NONE, "", 0, NULL },
					{ 0, NULL, DT_NONE, "", 0, NULL },
					{ 0, NULL, DT_NONE, "512", 0, NULL },
					{ 0, NULL, DT_NONE, "512", 0, NULL },
					{ 0, NULL, DT_NONE, "0.", 0, NULL },
					{ 0, NULL, DT_NONE, flag, 0, NULL },
					{ 1, (const int64_t[]){ 2 }, DT_U64, "", 0, NULL },
					{ 0, NULL, DT_U64, "", 0, NULL },
					{ 0, NULL, DT_NONE, "0.088388347648318433", 0, NULL },
				};
				struct kp_op_in f = { .name = FLASH,
						      .nslots = 7,
						      .slots = fw,
						      .kernel_flop = -1,
						      .kernel_num_gb = -1.0 };
				struct kp_op_in bk = { .name = FLASH "_backward",
						       .nslots = 15,
						       .slots = bw,
						       .kernel_flop = -1,
						       .kernel_num_gb = -1.0 };
				int64_t qb = b * 16 * s * 128 * 2, lb = b * 16 * s * 4;

				eval_ok(&f, &c);
				if (causal)
					assert_int_equal(c.flops * 2 * s, dense * (s + 1));
				else
					assert_int_equal(c.flops, dense);
				dense_fwd += dense;
				/* read Q, K, V; write O and the fp32 logsumexp */
				assert_int_equal(c.bytes, 4 * qb + lb);
				assert_string_equal(c.family, "attn");

				eval_ok(&bk, &c);
				/* backward = 2.5x forward: 10*b*h*d per pair */
				if (causal)
					assert_int_equal(c.flops * 2 * s, dense * 5 / 2 * (s + 1));
				else
					assert_int_equal(c.flops, dense * 5 / 2);
				dense_bwd += dense * 5 / 2;
				/* read Q, K, V, O, dO, LSE; write dQ, dK, dV */
				assert_int_equal(c.bytes, 8 * qb + lb);
			}
		}
	}
	assert_int_equal(dense_fwd, FC_SDPA_FLASH_FWD);
	assert_int_equal(dense_bwd, FC_SDPA_FLASH_BWD);
}

/* block_bf16: cuDNN SDPA, causal, B=8, H=16, S=1024, D=128 (doc/flops-bytes.md §3.5) */
static void cudnn_attention_of_block_bf16_counts_unmasked_pairs(void **state)
{
	struct kp_cost c;
	const int64_t qb = 8LL * 16 * 1024 * 128 * 2, lb = 8LL * 16 * 1024 * 4;

	(void)state;
	assert_int_equal(EVAL(&c, "aten::_scaled_dot_product_cudnn_attention",
			      T(DT_BF16, 8, 16, 1024, 128), T(DT_BF16, 8, 16, 1024, 128),
			      T(DT_BF16, 8, 16, 1024, 128), NONE, SC("True"), SC("0."), SC("True"),
			      SC("False"), NONE),
			 0);
	assert_int_equal(c.flops, 34393292800LL);
	assert_int_equal(c.flops * 2 * 1024, FC_BLOCK_CUDNN_FWD * 1025);
	assert_int_equal(c.bytes, 4 * qb + lb);
	assert_int_equal(EVAL(&c, "aten::_scaled_dot_product_cudnn_attention_backward",
			      T(DT_BF16, 8, 16, 1024, 128), T(DT_BF16, 8, 16, 1024, 128),
			      T(DT_BF16, 8, 16, 1024, 128), T(DT_BF16, 8, 16, 1024, 128),
			      T(DT_BF16, 8, 16, 1024, 128), T(DT_F32, 8, 16, 1024, 1), T0(DT_I64),
			      T0(DT_I64), NONE, NONE, NONE, SC("1024"), SC("1024"), SC("0."),
			      SC("True"), NONE),
			 0);
	assert_int_equal(c.flops, 85983232000LL);
	assert_int_equal(c.flops * 2 * 1024, FC_BLOCK_CUDNN_BWD * 1025);
	/* + the two 0-dim int64 philox tensors are not attention operands */
	assert_int_equal(c.bytes, 8 * qb + lb);
	/* the inner _cudnn_attention_forward: is_causal at slot 10 */
	assert_int_equal(EVAL(&c, "aten::_cudnn_attention_forward", T(DT_BF16, 8, 16, 1024, 128),
			      T(DT_BF16, 8, 16, 1024, 128), T(DT_BF16, 8, 16, 1024, 128), NONE,
			      NONE, NONE, SC("1024"), SC("1024"), SC("True"), SC("0."), SC("True"),
			      SC("False"), NONE),
			 0);
	assert_int_equal(c.flops, 34393292800LL);
	assert_int_equal(c.bytes, 4 * qb + lb);
	assert_int_equal(EVAL(&c, "aten::_cudnn_attention_backward", T(DT_BF16, 8, 16, 1024, 128),
			      T(DT_BF16, 8, 16, 1024, 128), T(DT_BF16, 8, 16, 1024, 128),
			      T(DT_BF16, 8, 16, 1024, 128), T(DT_BF16, 8, 16, 1024, 128),
			      T(DT_F32, 8, 16, 1024, 1), T0(DT_I64), T0(DT_I64), NONE, NONE, NONE,
			      SC("1024"), SC("1024"), SC("0."), SC("True"), NONE),
			 0);
	assert_int_equal(c.flops, 85983232000LL);
}

static void gqa_counts_flops_with_query_heads_and_bytes_with_kv_heads(void **state)
{
	struct kp_cost c;
	const int64_t q = 2 * 8 * 128 * 64, kv = 2 * 2 * 128 * 64;

	(void)state;
	/* cuDNN accepts GQA: Q 8 heads, K/V 2 heads, compute_log_sumexp True */
	assert_int_equal(EVAL(&c, "aten::_scaled_dot_product_cudnn_attention",
			      T(DT_BF16, 2, 8, 128, 64), T(DT_BF16, 2, 2, 128, 64),
			      T(DT_BF16, 2, 2, 128, 64), NONE, SC("True"), SC("0."), SC("False"),
			      SC("False"), NONE),
			 0);
	assert_int_equal(c.flops, 4LL * 2 * 8 * 128 * 128 * 64);
	assert_int_equal(c.bytes, 2 * (q + kv + kv + q) + 2 * 8 * 128 * 4);
	/* no logsumexp when compute_log_sumexp is False (inference) */
	assert_int_equal(EVAL(&c, "aten::_scaled_dot_product_cudnn_attention",
			      T(DT_BF16, 2, 8, 128, 64), T(DT_BF16, 2, 2, 128, 64),
			      T(DT_BF16, 2, 2, 128, 64), NONE, SC("False"), SC("0."), SC("False"),
			      SC("False"), NONE),
			 0);
	assert_int_equal(c.bytes, 2 * (q + kv + kv + q));
	/* flash backward in [B,S,H,D]: Q/dO/O 8 heads, K/V 2 heads */
	assert_int_equal(EVAL(&c, "aten::_flash_attention_backward", T(DT_F16, 2, 128, 8, 64),
			      T(DT_F16, 2, 128, 8, 64), T(DT_F16, 2, 128, 2, 64),
			      T(DT_F16, 2, 128, 2, 64), T(DT_F16, 2, 128, 8, 64),
			      T(DT_F32, 2, 8, 128), NONE, NONE, SC("128"), SC("128"), SC("0."),
			      SC("False"), T(DT_U64, 2), T0(DT_U64), NONE, NONE, NONE),
			 0);
	assert_int_equal(c.flops, 10LL * 2 * 8 * 128 * 128 * 64);
	assert_int_equal(c.bytes, 2 * (3 * q + 2 * kv) + 2 * 8 * 128 * 4 + 2 * (q + 2 * kv));
	assert_int_equal(c.prec, PREC_FP16);
	/* 8 query heads over 3 key/value heads */
	assert_int_equal(EVAL(&c, "aten::_scaled_dot_product_cudnn_attention",
			      T(DT_BF16, 2, 8, 128, 64), T(DT_BF16, 2, 3, 128, 64),
			      T(DT_BF16, 2, 3, 128, 64), NONE, SC("True"), SC("0."), SC("False"),
			      SC("False"), NONE),
			 -1);
	assert_string_equal(c.note, "attention query heads are not a multiple of key/value heads");
}

static void flash_attention_forward_reads_batch_seq_heads_dim(void **state)
{
	struct kp_cost c;

	(void)state;
	/* observed [2,128,8,64]: B 2, S 128, H 8, D 64; FC's observed dense 67,108,864 */
	assert_int_equal(EVAL(&c, "aten::_flash_attention_forward", T(DT_BF16, 2, 128, 8, 64),
			      T(DT_BF16, 2, 128, 8, 64), T(DT_BF16, 2, 128, 8, 64), NONE, NONE,
			      SC("128"), SC("128"), SC("0."), SC("False"), SC("False"), SC("0.125"),
			      NONE, NONE, NONE, NONE),
			 0);
	assert_int_equal(c.flops, 67108864);
	assert_int_equal(c.bytes, 4 * 2 * 2 * 128 * 8 * 64 + 2 * 8 * 128 * 4);
	/* causal: 128*129/2 of 128^2 pairs */
	assert_int_equal(EVAL(&c, "aten::_flash_attention_forward", T(DT_BF16, 2, 128, 8, 64),
			      T(DT_BF16, 2, 128, 8, 64), T(DT_BF16, 2, 128, 8, 64), NONE, NONE,
			      SC("128"), SC("128"), SC("0."), SC("True"), SC("False"), SC("0.125"),
			      NONE, NONE, NONE, NONE),
			 0);
	assert_int_equal(c.flops, 4LL * 2 * 8 * 64 * (128 * 129 / 2));
	/* called directly with s_q != s_k, causal is FlashAttention's bottom-right */
	assert_int_equal(EVAL(&c, "aten::_flash_attention_forward", T(DT_BF16, 1, 64, 4, 32),
			      T(DT_BF16, 1, 256, 4, 32), T(DT_BF16, 1, 256, 4, 32), NONE, NONE,
			      SC("64"), SC("256"), SC("0."), SC("True"), SC("False"), NONE, NONE,
			      NONE, NONE, NONE),
			 0);
	assert_int_equal(c.flops, 4LL * 1 * 4 * 32 * (64 * 192 + 64 * 65 / 2));
}

/* _efficient_attention_forward(q, k, v, bias, cu_seqlens_q, cu_seqlens_k, max_q, max_k,
 * dropout_p, custom_mask_type, compute_log_sumexp, scale, seqlen_k, window_size) */
static void efficient_attention_reads_bmhk_and_custom_mask_type(void **state)
{
	struct kp_cost c;
	const int64_t dense = 4LL * 2 * 16 * 1024 * 1024 * 64;

	(void)state;
	/* §3.7: B 2, M 1024, H 16, K 64 -> 8,589,934,592 dense */
	assert_int_equal(EVAL(&c, "aten::_efficient_attention_forward", T(DT_BF16, 2, 1024, 16, 64),
			      T(DT_BF16, 2, 1024, 16, 64), T(DT_BF16, 2, 1024, 16, 64), NONE, NONE,
			      NONE, SC("1024"), SC("1024"), SC("0."), SC("0"), SC("True"), NONE,
			      NONE, NONE),
			 0);
	assert_int_equal(c.flops, dense);
	assert_int_equal(c.flops, 8589934592LL);
	assert_int_equal(c.bytes, 4 * 2 * 2 * 1024 * 16 * 64 + 2 * 16 * 1024 * 4);
	/* mask type 1: causal top-left */
	assert_int_equal(EVAL(&c, "aten::_efficient_attention_forward", T(DT_BF16, 2, 1024, 16, 64),
			      T(DT_BF16, 2, 1024, 16, 64), T(DT_BF16, 2, 1024, 16, 64), NONE, NONE,
			      NONE, SC("1024"), SC("1024"), SC("0."), SC("1"), SC("False"), NONE,
			      NONE, NONE),
			 0);
	assert_int_equal(c.flops * 2 * 1024, dense * 1025);
	assert_int_equal(c.bytes, 4 * 2 * 2 * 1024 * 16 * 64);
	/* s_q 256 < s_k 1024: top-left keeps 256*257/2 pairs, bottom-right adds 256*768 */
	assert_int_equal(EVAL(&c, "aten::_efficient_attention_forward", T(DT_BF16, 1, 256, 2, 64),
			      T(DT_BF16, 1, 1024, 2, 64), T(DT_BF16, 1, 1024, 2, 64), NONE, NONE,
			      NONE, SC("8"), SC("8"), SC("0."), SC("1"), SC("False"), NONE, NONE,
			      NONE),
			 0);
	assert_int_equal(c.flops, 4LL * 2 * 64 * (256 * 257 / 2));
	assert_int_equal(EVAL(&c, "aten::_efficient_attention_forward", T(DT_BF16, 1, 256, 2, 64),
			      T(DT_BF16, 1, 1024, 2, 64), T(DT_BF16, 1, 1024, 2, 64), NONE, NONE,
			      NONE, SC("8"), SC("8"), SC("0."), SC("2"), SC("False"), NONE, NONE,
			      NONE),
			 0);
	assert_int_equal(c.flops, 4LL * 2 * 64 * (256 * 768 + 256 * 257 / 2));
	assert_int_equal(EVAL(&c, "aten::_efficient_attention_forward", T(DT_BF16, 1, 256, 2, 64),
			      T(DT_BF16, 1, 1024, 2, 64), T(DT_BF16, 1, 1024, 2, 64), NONE, NONE,
			      NONE, SC("8"), SC("8"), SC("0."), SC("3"), SC("False"), NONE, NONE,
			      NONE),
			 -1);
	assert_string_equal(c.note, "attention 'custom_mask_type' is not 0, 1 or 2");
}

static void efficient_attention_backward_reads_mask_type_at_slot_14(void **state)
{
	struct kp_cost c;
	const int64_t t = 2LL * 128 * 8 * 64;

	(void)state;
	/* observed: max_seqlen_q/k recorded as "8" for S = 128; lengths come from shapes */
	assert_int_equal(EVAL(&c, "aten::_efficient_attention_backward", T(DT_F16, 2, 128, 8, 64),
			      T(DT_F16, 2, 128, 8, 64), T(DT_F16, 2, 128, 8, 64),
			      T(DT_F16, 2, 128, 8, 64), NONE, T(DT_F16, 2, 128, 8, 64), NONE, NONE,
			      SC("8"), SC("8"), T(DT_F32, 2, 8, 128), SC("0."), T0(DT_I64),
			      T0(DT_I64), SC("1"), SC("False"), SC("0.125"), NONE, NONE,
			      SC("False")),
			 0);
	assert_int_equal(c.flops, 10LL * 2 * 8 * 64 * (128 * 129 / 2));
	assert_int_equal(c.bytes, 2 * 5 * t + 2 * 8 * 128 * 4 + 2 * 3 * t);
}

static void sdpa_efficient_reads_attn_bias_and_writes_its_gradient_when_asked(void **state)
{
	struct kp_cost c;
	const int64_t t = 1LL * 4 * 64 * 32, bias = 1LL * 4 * 64 * 64;

	(void)state;
	assert_int_equal(EVAL(&c, "aten::_scaled_dot_product_efficient_attention",
			      T(DT_F32, 1, 4, 64, 32), T(DT_F32, 1, 4, 64, 32),
			      T(DT_F32, 1, 4, 64, 32), T(DT_F32, 1, 4, 64, 64), SC("False"),
			      SC("0."), SC("False"), NONE),
			 0);
	assert_int_equal(c.flops, 4LL * 4 * 64 * 64 * 32);
	assert_int_equal(c.bytes, 4 * (4 * t + bias));
	assert_int_equal(EVAL(&c, "aten::_scaled_dot_product_efficient_attention_backward",
			      T(DT_F32, 1, 4, 64, 32), T(DT_F32, 1, 4, 64, 32),
			      T(DT_F32, 1, 4, 64, 32), T(DT_F32, 1, 4, 64, 32),
			      T(DT_F32, 1, 4, 64, 64), T(DT_F32, 1, 4, 64, 32), T(DT_F32, 1, 4, 64),
			      T0(DT_I64), T0(DT_I64), SC("0."), SC("[True, True, True, True]"),
			      SC("False"), NONE),
			 0);
	assert_int_equal(c.flops, 10LL * 4 * 64 * 64 * 32);
	/* dO, Q, K, V, O, LSE, bias; dQ, dK, dV, dbias */
	assert_int_equal(c.bytes, 4 * (5 * t + 4 * 64 + bias) + 4 * (3 * t + bias));
}

/*
 * An attention op whose is_causal slot holds no value (emit_nvtx): the kernels' hint decides;
 * without one the FLOPs are dense and the assumption is said; a recorded flag wins.
 */
static void unrecorded_is_causal_takes_the_kernel_hint_else_assumes_dense(void **state)
{
	const int64_t *qd = (const int64_t[]){ 2, 8, 256, 64 };
	int64_t dense = 2ll * 2 * 8 * (64 + 64) * 256 * 256,
		causal = dense / 256 / 256 * (256 * 257 / 2);
	struct kp_slot fw[7] = {
		{ 4, qd, DT_BF16, "", 0, NULL },   { 4, qd, DT_BF16, "", 0, NULL },
		{ 4, qd, DT_BF16, "", 0, NULL },   { 0, NULL, DT_NONE, "", 0, NULL },
		{ 0, NULL, DT_NONE, "", 0, NULL }, { 0, NULL, DT_NONE, "", 0, NULL },
		{ 0, NULL, DT_NONE, "", 0, NULL },
	};
	struct kp_op_in in = {
		.name = FLASH, .nslots = 7, .slots = fw, .kernel_flop = -1, .kernel_num_gb = -1
	};
	struct kp_cost c;

	(void)state;
	in.causal_hint = CAUSAL_HINT_CAUSAL;
	assert_int_equal(opmodel_eval(&in, &c), 0);
	assert_int_equal(c.flops, causal);
	assert_null(c.assumed);
	in.causal_hint = CAUSAL_HINT_DENSE;
	assert_int_equal(opmodel_eval(&in, &c), 0);
	assert_int_equal(c.flops, dense);
	assert_null(c.assumed);
	in.causal_hint = CAUSAL_HINT_NONE;
	assert_int_equal(opmodel_eval(&in, &c), 0);
	assert_int_equal(c.flops, dense);
	assert_non_null(c.assumed);
	assert_non_null(strstr(c.assumed, "is_causal=False"));
	/* a recorded flag is the op's own argument: it wins over the kernels */
	fw[4].concrete = "False";
	in.causal_hint = CAUSAL_HINT_CAUSAL;
	assert_int_equal(opmodel_eval(&in, &c), 0);
	assert_int_equal(c.flops, dense);
	assert_null(c.assumed);
	fw[4].concrete = "maybe";
	assert_int_equal(opmodel_eval(&in, &c), -1);
	/* _efficient_attention_forward's custom_mask_type alike: causal is bottom-right there */
	const int64_t *ed = (const int64_t[]){ 1, 128, 4, 64 },
		      *kd = (const int64_t[]){ 1, 256, 4, 64 };
	struct kp_slot ef[12] = {
		{ 4, ed, DT_F16, "", 0, NULL },    { 4, kd, DT_F16, "", 0, NULL },
		{ 4, kd, DT_F16, "", 0, NULL },    { 0, NULL, DT_NONE, "", 0, NULL },
		{ 0, NULL, DT_NONE, "", 0, NULL }, { 0, NULL, DT_NONE, "", 0, NULL },
		{ 0, NULL, DT_NONE, "", 0, NULL }, { 0, NULL, DT_NONE, "", 0, NULL },
		{ 0, NULL, DT_NONE, "", 0, NULL }, { 0, NULL, DT_NONE, "", 0, NULL },
		{ 0, NULL, DT_NONE, "", 0, NULL }, { 0, NULL, DT_NONE, "", 0, NULL },
	};
	struct kp_op_in ein = { .name = "aten::_efficient_attention_forward",
				.nslots = 12,
				.slots = ef,
				.kernel_flop = -1,
				.kernel_num_gb = -1,
				.causal_hint = CAUSAL_HINT_CAUSAL };
	assert_int_equal(opmodel_eval(&ein, &c), 0);
	assert_int_equal(c.flops, 2ll * 1 * 4 * (64 + 64) * opmodel_causal_pairs(128, 256, 1));
	ein.causal_hint = CAUSAL_HINT_NONE;
	assert_int_equal(opmodel_eval(&ein, &c), 0);
	assert_int_equal(c.flops, 2ll * 1 * 4 * (64 + 64) * 128 * 256);
	assert_non_null(c.assumed);
}

static void varlen_flash_attention_leaves_flops_unknown_with_a_note(void **state)
{
	struct kp_cost c;

	(void)state;
	/* 3-D [total, H, D] with cum_seq tensors of B+1 = 5 offsets */
	assert_int_equal(EVAL(&c, "aten::_flash_attention_forward", T(DT_BF16, 1000, 8, 64),
			      T(DT_BF16, 1000, 8, 64), T(DT_BF16, 1000, 8, 64), T(DT_I32, 5),
			      T(DT_I32, 5), SC("400"), SC("400"), SC("0."), SC("True"), SC("False"),
			      NONE, NONE, NONE, NONE, NONE),
			 0);
	assert_int_equal(c.flops, -1);
	assert_int_equal(c.bytes, 4 * 2 * 1000 * 8 * 64 + 1000 * 8 * 4);
	assert_string_equal(c.note,
			    "varlen attention: sequence lengths not recorded, FLOPs unknown");
	/* a 3-D input to an op that has no varlen form */
	assert_int_equal(EVAL(&c, "aten::_scaled_dot_product_flash_attention",
			      T(DT_BF16, 16, 128, 64), T(DT_BF16, 16, 128, 64),
			      T(DT_BF16, 16, 128, 64), SC("0."), SC("False"), SC("False"), NONE),
			 -1);
	assert_string_equal(c.note, "attention query, key and value are not 4-D");
}

/* Each check of eval_attn's steps (attn_operands, attn_heads) and attn_flops' causal pairs */
static void attention_refuses_operands_that_do_not_match(void **state)
{
	static const char *const flash = "aten::_scaled_dot_product_flash_attention";
	struct kp_cost c;

	(void)state;
	assert_int_equal(EVAL(&c, flash, SC("1"), T(DT_BF16, 1, 2, 16, 64),
			      T(DT_BF16, 1, 2, 16, 64), SC("0."), SC("False"), SC("False"), NONE),
			 -1);
	assert_string_equal(c.note, "attention query, key or value is not a tensor");
	assert_int_equal(EVAL(&c, flash, T(DT_BF16, 1, 2, 16, 64), T(DT_BF16, 2, 16, 64),
			      T(DT_BF16, 1, 2, 16, 64), SC("0."), SC("False"), SC("False"), NONE),
			 -1);
	assert_string_equal(c.note, "attention query, key and value are not all 3-D or all 4-D");
	assert_int_equal(EVAL(&c, flash, T(DT_BF16, 1, 1, 2, 16, 64), T(DT_BF16, 1, 1, 2, 16, 64),
			      T(DT_BF16, 1, 1, 2, 16, 64), SC("0."), SC("False"), SC("False"),
			      NONE),
			 -1);
	assert_string_equal(c.note, "attention query, key and value are not all 3-D or all 4-D");
	assert_int_equal(EVAL(&c, flash, T(DT_BF16, 2, 2, 16, 64), T(DT_BF16, 1, 2, 16, 64),
			      T(DT_BF16, 2, 2, 16, 64), SC("0."), SC("False"), SC("False"), NONE),
			 -1);
	assert_string_equal(c.note, "attention query, key and value differ in batch size");
	assert_int_equal(EVAL(&c, flash, T(DT_BF16, 1, 2, 16, 64), T(DT_BF16, 1, 2, 16, 32),
			      T(DT_BF16, 1, 2, 16, 64), SC("0."), SC("False"), SC("False"), NONE),
			 -1);
	assert_string_equal(c.note, "attention query and key differ in head dim");
	assert_int_equal(EVAL(&c, flash, T(DT_BF16, 1, 2, 16, 64), T(DT_BF16, 1, 2, 16, 64),
			      T(DT_BF16, 1, 2, 8, 64), SC("0."), SC("False"), SC("False"), NONE),
			 -1);
	assert_string_equal(c.note, "attention key and value differ in length or heads");
	/* causal 4 x 4: 10 of 16 pairs, 2*(d + d_v) FLOPs each; bytes of q, k, v, o and lse */
	assert_int_equal(EVAL(&c, flash, T(DT_F16, 1, 1, 4, 8), T(DT_F16, 1, 1, 4, 8),
			      T(DT_F16, 1, 1, 4, 8), SC("0."), SC("True"), SC("False"), NONE),
			 0);
	assert_int_equal(c.flops, 2 * (8 + 8) * 10);
	assert_int_equal(c.bytes, 4 * 4 * 8 * 2 + 4 * 4);
	assert_int_equal(c.dtype, DT_F16);
}

static void attention_with_different_value_dim_counts_d_and_d_v(void **state)
{
	struct kp_cost c;

	(void)state;
	/* d = 192, d_v = 128 (MLA-like): fwd 2bh(d + d_v)pairs, bwd 2bh(3d + 2d_v)pairs */
	assert_int_equal(EVAL(&c, "aten::_scaled_dot_product_flash_attention",
			      T(DT_BF16, 1, 2, 256, 192), T(DT_BF16, 1, 2, 256, 192),
			      T(DT_BF16, 1, 2, 256, 128), SC("0."), SC("False"), SC("False"), NONE),
			 0);
	assert_int_equal(c.flops, 2LL * 2 * (192 + 128) * 256 * 256);
	assert_int_equal(c.bytes, 2 * (2 * 256 * 192 * 2 + 2 * 256 * 128 * 2) + 2 * 256 * 4);
	assert_int_equal(EVAL(&c, "aten::_scaled_dot_product_flash_attention_backward",
			      T(DT_BF16, 1, 2, 256, 128), T(DT_BF16, 1, 2, 256, 192),
			      T(DT_BF16, 1, 2, 256, 192), T(DT_BF16, 1, 2, 256, 128),
			      T(DT_BF16, 1, 2, 256, 128), T(DT_F32, 1, 2, 256), NONE, NONE,
			      SC("256"), SC("256"), SC("0."), SC("False"), T(DT_U64, 2), T0(DT_U64),
			      NONE),
			 0);
	assert_int_equal(c.flops, 2LL * 2 * (3 * 192 + 2 * 128) * 256 * 256);
}

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

/* ---- classes, composites, Inductor ---- */

/* clang-format off */
static const char *const modeled_names[] = {
	"aten::_addmm_activation", "aten::_convolution", "aten::_cudnn_attention_backward",
	"aten::_cudnn_attention_forward", "aten::_efficient_attention_backward",
	"aten::_efficient_attention_forward", "aten::_flash_attention_backward",
	"aten::_flash_attention_forward", "aten::_fused_rms_norm",
	"aten::_fused_rms_norm_backward", "aten::_grouped_mm", "aten::_int_mm",
	"aten::_log_softmax",
	"aten::_log_softmax_backward_data",
	"aten::_safe_softmax", "aten::_scaled_dot_product_cudnn_attention",
	"aten::_scaled_dot_product_cudnn_attention_backward",
	"aten::_scaled_dot_product_efficient_attention",
	"aten::_scaled_dot_product_efficient_attention_backward",
	"aten::_scaled_dot_product_flash_attention",
	"aten::_scaled_dot_product_flash_attention_backward", "aten::_scaled_mm",
	"aten::_slow_conv2d_forward", "aten::_softmax", "aten::_softmax_backward_data",
	"aten::_to_copy", "aten::abs", "aten::abs_", "aten::add", "aten::add_", "aten::addcdiv",
	"aten::addcdiv_", "aten::addcmul", "aten::addcmul_", "aten::addmm", "aten::all",
	"aten::amax", "aten::amin", "aten::any", "aten::argmax", "aten::argmin", "aten::baddbmm",
	"aten::bmm", "aten::cat", "aten::clamp", "aten::clamp_", "aten::clamp_max",
	"aten::clamp_min", "aten::clone", "aten::contiguous", "aten::convolution",
	"aten::convolution_backward", "aten::convolution_overrideable", "aten::copy_", "aten::cos",
	"aten::cross_entropy_loss",
	"aten::cudnn_convolution", "aten::cudnn_convolution_transpose", "aten::div", "aten::div_",
	"aten::dropout", "aten::eq", "aten::erf", "aten::exp", "aten::exp_", "aten::fill_",
	"aten::ge", "aten::gelu", "aten::gelu_", "aten::gelu_backward", "aten::gt",
	"aten::hardswish", "aten::hardtanh", "aten::hardtanh_", "aten::hardtanh_backward",
	"aten::layer_norm", "aten::le", "aten::leaky_relu", "aten::leaky_relu_",
	"aten::leaky_relu_backward", "aten::lerp", "aten::lerp_", "aten::linalg_vector_norm",
	"aten::log", "aten::log_softmax", "aten::logsumexp", "aten::lt", "aten::masked_fill",
	"aten::masked_fill_", "aten::max", "aten::maximum", "aten::mean", "aten::min",
	"aten::minimum", "aten::miopen_convolution", "aten::miopen_convolution_transpose",
	"aten::mkldnn_convolution", "aten::mm", "aten::mul", "aten::mul_", "aten::nansum",
	"aten::native_dropout", "aten::native_dropout_backward", "aten::native_layer_norm",
	"aten::native_layer_norm_backward", "aten::ne", "aten::neg", "aten::neg_", "aten::nll_loss",
	"aten::nll_loss_backward", "aten::nll_loss_forward", "aten::nll_loss_nd", "aten::pow",
	"aten::pow_", "aten::prod", "aten::reciprocal", "aten::relu", "aten::relu_",
	"aten::rms_norm", "aten::rsqrt", "aten::rsub", "aten::sigmoid", "aten::sigmoid_",
	"aten::sigmoid_backward", "aten::silu", "aten::silu_", "aten::silu_backward", "aten::sin",
	"aten::softmax", "aten::sqrt", "aten::square", "aten::stack", "aten::std",
	"aten::std_mean", "aten::sub", "aten::sub_", "aten::sum", "aten::tanh", "aten::tanh_",
	"aten::tanh_backward", "aten::threshold_backward", "aten::to", "aten::var",
	"aten::var_mean", "aten::where", "aten::zero_", "kprof::cross_entropy_loss_backward",
};
/* clang-format on */

/* bsearch finds every entry only if the table is sorted: this checks both */
static void opmodel_class_finds_every_modeled_op(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(modeled_names) / sizeof(modeled_names[0]); i++) {
		if (opmodel_class(modeled_names[i]) == MODEL_NONE)
			fail_msg("%s is not found", modeled_names[i]);
		if (i > 0)
			assert_true(strcmp(modeled_names[i - 1], modeled_names[i]) < 0);
	}
}

static void opmodel_class_answers_without_evaluating(void **state)
{
	(void)state;
	assert_int_equal(opmodel_class("aten::mm"), MODEL_PRIMARY);
	assert_int_equal(opmodel_class("aten::_scaled_dot_product_flash_attention"), MODEL_PRIMARY);
	assert_int_equal(opmodel_class("aten::convolution_backward"), MODEL_PRIMARY);
	assert_int_equal(opmodel_class("aten::cudnn_convolution"), MODEL_PRIMARY);
	assert_int_equal(opmodel_class("aten::add_"), MODEL_SECONDARY);
	assert_int_equal(opmodel_class("aten::native_layer_norm"), MODEL_SECONDARY);
	assert_int_equal(opmodel_class("aten::cat"), MODEL_SECONDARY);
	assert_int_equal(opmodel_class("aten::linear"), MODEL_NONE);
	assert_int_equal(opmodel_class("aten::matmul"), MODEL_NONE);
	assert_int_equal(opmodel_class("aten::conv2d"), MODEL_NONE);
	assert_int_equal(opmodel_class("aten::scaled_dot_product_attention"), MODEL_NONE);
	assert_int_equal(opmodel_class("aten::_scaled_dot_product_attention_math"), MODEL_NONE);
	assert_int_equal(opmodel_class("AddmmBackward0"), MODEL_NONE);
	assert_int_equal(opmodel_class("autograd::engine::evaluate_function: AddmmBackward0"),
			 MODEL_NONE);
	assert_int_equal(opmodel_class("mm"), MODEL_NONE);
	assert_int_equal(opmodel_class("aten::"), MODEL_NONE);
	assert_int_equal(opmodel_class(""), MODEL_NONE);
	assert_int_equal(opmodel_class(NULL), MODEL_NONE);
}

static void composite_ops_have_no_model(void **state)
{
	struct kp_cost c;

	(void)state;
	assert_int_equal(EVAL(&c, "aten::linear", T(DT_BF16, 1024, 1024), T(DT_BF16, 1024, 1024),
			      T(DT_BF16, 1024)),
			 1);
	assert_int_equal(c.cls, MODEL_NONE);
	assert_null(c.family);
	assert_null(c.note);
	assert_int_equal(c.flops, -1);
	assert_int_equal(c.bytes, -1);
	assert_int_equal(EVAL(&c, "aten::scaled_dot_product_attention", T(DT_BF16, 1, 2, 8, 4),
			      T(DT_BF16, 1, 2, 8, 4), T(DT_BF16, 1, 2, 8, 4), NONE, SC("0."),
			      SC("True"), NONE, SC("False")),
			 1);
	assert_int_equal(EVAL(&c, "ConvolutionBackward0", T(DT_F32, 32, 64, 56, 56)), 1);
}

static void inductor_kernel_flop_and_num_gb_win(void **state)
{
	struct kp_cost c;
	struct kp_slot s[2] = {
		{ 2, (const int64_t[]){ 256, 512 }, DT_F32, "", 0, NULL },
		{ 2, (const int64_t[]){ 512, 768 }, DT_F32, "", 0, NULL },
	};
	struct kp_op_in mm = { .name = "aten::mm",
			       .nslots = 2,
			       .slots = s,
			       .kernel_flop = 123456789,
			       .kernel_num_gb = 0.0015 };
	struct kp_op_in tri = { .name = "triton_poi_fused_add_0",
				.nslots = 0,
				.slots = NULL,
				.kernel_flop = 0,
				.kernel_num_gb = 0.0123456789 };
	struct kp_op_in tpl = { .name = "triton_tem_fused_mm_0",
				.nslots = 0,
				.slots = NULL,
				.kernel_flop = 201326592,
				.kernel_num_gb = -1.0 };

	(void)state;
	assert_int_equal(opmodel_eval(&mm, &c), 0);
	assert_int_equal(c.flops, 123456789);
	assert_int_equal(c.bytes, 1500000);
	assert_string_equal(c.family, "gemm");
	assert_int_equal(opmodel_eval(&tri, &c), 0);
	assert_int_equal(c.flops, 0);
	assert_int_equal(c.bytes, 12345679);
	assert_int_equal(c.cls, MODEL_SECONDARY);
	assert_string_equal(c.family, "inductor");
	assert_int_equal(opmodel_eval(&tpl, &c), 0);
	assert_int_equal(c.flops, 201326592);
	assert_int_equal(c.bytes, -1);
	assert_int_equal(c.cls, MODEL_PRIMARY);
	/* the model does not apply (no slots), FLOPs stay unknown: -1, bytes from Inductor */
	tri.name = "aten::add";
	tri.kernel_flop = -1;
	assert_int_equal(opmodel_eval(&tri, &c), -1);
	assert_int_equal(c.flops, -1);
	assert_int_equal(c.bytes, 12345679);
	assert_string_equal(c.note, "pointwise op has no tensor operand");
}

/*
 * The model table split by family (src/opmodel-*.c): each family's rows sorted for bsearch,
 * no name in two families, and every row found by name again with its own class.
 */
static void family_tables_are_sorted_disjoint_and_found(void **state)
{
	(void)state;
	const struct opm_family *fams[] = { &opm_family_gemm, &opm_family_conv, &opm_family_attn,
					    &opm_family_pointwise, &opm_family_norm };
	size_t total = 0;
	for (size_t f = 0; f < sizeof(fams) / sizeof(fams[0]); f++) {
		assert_true(fams[f]->n > 0);
		for (size_t i = 0; i < fams[f]->n; i++) {
			const struct model *m = &fams[f]->models[i];
			if (i > 0)
				assert_true(strcmp(fams[f]->models[i - 1].name, m->name) < 0);
			for (size_t g = 0; g < f; g++)
				for (size_t j = 0; j < fams[g]->n; j++)
					assert_string_not_equal(fams[g]->models[j].name, m->name);
			assert_int_equal(opmodel_class(m->name), m->cls);
			total++;
		}
	}
	assert_int_equal(total, 149); /* 148 aten:: rows and kprof::cross_entropy_loss_backward */
	assert_int_equal(opmodel_causal_slot("aten::_flash_attention_forward") >= 0, 1);
	assert_int_equal(opmodel_causal_slot("aten::mm"), -1);
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
		cmocka_unit_test(convolution_reproduces_flop_counter_for_conv_fp32),
		cmocka_unit_test(convolution_backward_reproduces_flop_counter_for_conv_fp32),
		cmocka_unit_test(convolution_of_compiled_fp32_matches_flop_counter),
		cmocka_unit_test(cudnn_convolution_reads_padding_first_and_slot_6_as_benchmark),
		cmocka_unit_test(transposed_convolution_uses_input_spatial_size),
		cmocka_unit_test(grouped_convolution_counts_input_channels_per_group),
		cmocka_unit_test(convolution_output_size_follows_dilation_and_rejects_empty_ones),
		cmocka_unit_test(convolution_output_size_checks_every_step_for_overflow),
		cmocka_unit_test(causal_pairs_near_int64_max_are_exact_or_overflow),
		cmocka_unit_test(out_of_range_integers_in_concrete_inputs_are_unreadable),
		cmocka_unit_test(convolution_backward_counts_only_the_masked_gradients),
		cmocka_unit_test(emit_nvtx_convolution_backward_takes_its_form_from_the_shapes),
		cmocka_unit_test(transposed_convolution_backward_uses_input_spatial_size),
		cmocka_unit_test(causal_pairs_count_top_left_and_bottom_right_masks_exactly),
		cmocka_unit_test(sdpa_flash_matches_flop_counter_dense_and_counts_causal_pairs),
		cmocka_unit_test(cudnn_attention_of_block_bf16_counts_unmasked_pairs),
		cmocka_unit_test(gqa_counts_flops_with_query_heads_and_bytes_with_kv_heads),
		cmocka_unit_test(flash_attention_forward_reads_batch_seq_heads_dim),
		cmocka_unit_test(efficient_attention_reads_bmhk_and_custom_mask_type),
		cmocka_unit_test(efficient_attention_backward_reads_mask_type_at_slot_14),
		cmocka_unit_test(sdpa_efficient_reads_attn_bias_and_writes_its_gradient_when_asked),
		cmocka_unit_test(varlen_flash_attention_leaves_flops_unknown_with_a_note),
		cmocka_unit_test(attention_refuses_operands_that_do_not_match),
		cmocka_unit_test(unrecorded_is_causal_takes_the_kernel_hint_else_assumes_dense),
		cmocka_unit_test(attention_with_different_value_dim_counts_d_and_d_v),
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
		cmocka_unit_test(layer_norm_reads_x_weight_bias_and_writes_y_and_statistics),
		cmocka_unit_test(rms_norm_reads_x_and_weight),
		cmocka_unit_test(norms_take_rows_from_the_weight_and_gradients_from_the_mask),
		cmocka_unit_test(softmax_forward_moves_two_tensors_and_backward_three),
		cmocka_unit_test(cross_entropy_reads_logits_once),
		cmocka_unit_test(nll_loss_gathers_and_backward_writes_dense),
		cmocka_unit_test(opmodel_class_finds_every_modeled_op),
		cmocka_unit_test(opmodel_class_answers_without_evaluating),
		cmocka_unit_test(composite_ops_have_no_model),
		cmocka_unit_test(inductor_kernel_flop_and_num_gb_win),
		cmocka_unit_test(family_tables_are_sorted_disjoint_and_found),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
