/*
 * test-opmodel-conv.c — convolutions (src/model/opmodel-conv.c): forward, backward by
 * output_mask, transposed and grouped, output sizes and their overflow, against FlopCounterMode
 * for conv_fp32 and hand math.
 * Shared slot macros and FlopCounterMode counts: opmodel-test.h.
 */
#include "opmodel-test.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
