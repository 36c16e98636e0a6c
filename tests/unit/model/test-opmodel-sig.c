/*
 * test-opmodel-sig.c — functional signatures (opmodel_signature()): one text for one
 * computation whatever the backend's op and slot layout, none where a value is not recorded.
 * Slots follow the ops' schemas as PyTorch and kprof capture record them.
 */
#include "kprof/opmodel.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

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
#define SIG(buf, nm, ...)                                                                          \
	opmodel_signature(&(struct kp_op_in){ .name = (nm),                                        \
					      .nslots = NSLOTS(__VA_ARGS__),                       \
					      .slots = SLOTS(__VA_ARGS__),                         \
					      .kernel_flop = -1,                                   \
					      .kernel_num_gb = -1.0 },                             \
			  (buf), sizeof(buf))

#define Q T(DT_BF16, 2, 8, 256, 64)
#define QS T(DT_BF16, 2, 256, 8, 64) /* flash/efficient kernels' [B, S, H, D] */
#define LSE T(DT_F32, 2, 8, 256)
#define CAUSAL_FWD "attention fwd B=2 H=8 H_kv=8 S_q=256 S_k=256 D=64 D_v=64 causal bf16"
#define CAUSAL_BWD "attention bwd B=2 H=8 H_kv=8 S_q=256 S_k=256 D=64 D_v=64 causal bf16"

static void every_sdpa_forward_has_one_signature(void **state)
{
	(void)state;
	char s[256];
	assert_int_equal(SIG(s, "aten::scaled_dot_product_attention", Q, Q, Q, NONE, SC("0."),
			     SC("True"), NONE, SC("False")),
			 0);
	assert_string_equal(s, CAUSAL_FWD);
	assert_int_equal(SIG(s, "aten::_scaled_dot_product_flash_attention", Q, Q, Q, SC("0."),
			     SC("True"), SC("False"), NONE),
			 0);
	assert_string_equal(s, CAUSAL_FWD);
	assert_int_equal(SIG(s, "aten::_scaled_dot_product_efficient_attention", Q, Q, Q, NONE,
			     SC("True"), SC("0."), SC("True"), NONE),
			 0);
	assert_string_equal(s, CAUSAL_FWD);
	assert_int_equal(SIG(s, "aten::_scaled_dot_product_cudnn_attention", Q, Q, Q, NONE,
			     SC("True"), SC("0."), SC("True"), SC("False"), NONE),
			 0);
	assert_string_equal(s, CAUSAL_FWD);
	/* the kernels' own layout [B, S, H, D]: flash (is_causal 8), efficient (mask type 10) */
	assert_int_equal(SIG(s, "aten::_flash_attention_forward", QS, QS, QS, NONE, NONE, SC("256"),
			     SC("256"), SC("0."), SC("True"), SC("False"), NONE),
			 0);
	assert_string_equal(s, CAUSAL_FWD);
	assert_int_equal(SIG(s, "aten::_efficient_attention_forward", QS, QS, QS, NONE, NONE, NONE,
			     SC("256"), SC("256"), SC("0."), SC("1"), SC("True"), NONE),
			 0);
	assert_string_equal(s, CAUSAL_FWD);
	/* dense is another computation */
	assert_int_equal(SIG(s, "aten::_scaled_dot_product_flash_attention", Q, Q, Q, SC("0."),
			     SC("False"), SC("False"), NONE),
			 0);
	assert_string_equal(s, "attention fwd B=2 H=8 H_kv=8 S_q=256 S_k=256 D=64 D_v=64 bf16");
}

static void every_sdpa_backward_has_one_signature(void **state)
{
	(void)state;
	char s[256];
	assert_int_equal(SIG(s, "aten::_scaled_dot_product_flash_attention_backward", Q, Q, Q, Q, Q,
			     LSE, NONE, NONE, SC("256"), SC("256"), SC("0."), SC("True"),
			     T0(DT_I64), T0(DT_I64), NONE),
			 0);
	assert_string_equal(s, CAUSAL_BWD);
	assert_int_equal(SIG(s, "aten::_scaled_dot_product_efficient_attention_backward", Q, Q, Q,
			     Q, NONE, Q, LSE, T0(DT_I64), T0(DT_I64), SC("0."),
			     SC("[True, True, True, False]"), SC("True"), NONE),
			 0);
	assert_string_equal(s, CAUSAL_BWD);
	assert_int_equal(SIG(s, "aten::_scaled_dot_product_cudnn_attention_backward", Q, Q, Q, Q, Q,
			     T(DT_F32, 2, 8, 256, 1), T0(DT_I64), T0(DT_I64), NONE, NONE, NONE,
			     SC("256"), SC("256"), SC("0."), SC("True"), NONE),
			 0);
	assert_string_equal(s, CAUSAL_BWD);
	/* kprof capture's math-path backward: the forward's slots */
	assert_int_equal(SIG(s, "kprof::scaled_dot_product_attention_math_backward", Q, Q, Q, NONE,
			     SC("0."), SC("True"), NONE, SC("False")),
			 0);
	assert_string_equal(s, CAUSAL_BWD);
	assert_true(opmodel_sig_carrier("kprof::scaled_dot_product_attention_math_backward"));
	assert_true(opmodel_sig_carrier("aten::scaled_dot_product_attention"));
	assert_false(opmodel_sig_carrier("aten::bmm"));
}

static void gqa_and_unequal_lengths_are_in_the_signature(void **state)
{
	(void)state;
	char s[256];
	assert_int_equal(SIG(s, "aten::scaled_dot_product_attention", T(DT_F16, 1, 32, 128, 128),
			     T(DT_F16, 1, 8, 512, 128), T(DT_F16, 1, 8, 512, 96), NONE, SC("0."),
			     SC("True"), NONE, SC("True")),
			 0);
	/* sdpa's is_causal is top-left: with S_q != S_k it is not flash's bottom-right */
	assert_string_equal(s, "attention fwd B=1 H=32 H_kv=8 S_q=128 S_k=512 D=128 D_v=96 causal "
			       "fp16");
	assert_int_equal(SIG(s, "aten::_flash_attention_forward", T(DT_F16, 1, 128, 32, 128),
			     T(DT_F16, 1, 512, 8, 128), T(DT_F16, 1, 512, 8, 96), NONE, NONE,
			     SC("128"), SC("512"), SC("0."), SC("True"), SC("False"), NONE),
			 0);
	assert_string_equal(s, "attention fwd B=1 H=32 H_kv=8 S_q=128 S_k=512 D=128 D_v=96 "
			       "causal-br fp16");
}

static void unrecorded_values_give_no_signature(void **state)
{
	(void)state;
	char s[256];
	/* emit_nvtx records no scalars: is_causal unknown */
	assert_int_equal(SIG(s, "aten::_scaled_dot_product_flash_attention", Q, Q, Q, NONE, NONE,
			     NONE, NONE),
			 -1);
	/* varlen (3-D) */
	assert_int_equal(SIG(s, "aten::_flash_attention_forward", T(DT_BF16, 512, 8, 64),
			     T(DT_BF16, 512, 8, 64), T(DT_BF16, 512, 8, 64), T(DT_I32, 3),
			     T(DT_I32, 3), SC("256"), SC("256"), SC("0."), SC("True"), SC("False"),
			     NONE),
			 -1);
	/* use_gelu not recorded */
	assert_int_equal(SIG(s, "aten::_addmm_activation", T(DT_BF16, 64), T(DT_BF16, 32, 16),
			     T(DT_BF16, 16, 64), SC("1"), SC("1"), NONE),
			 -1);
	/* no model, no carrier; a secondary op */
	assert_int_equal(SIG(s, "aten::linear", T(DT_BF16, 32, 16), T(DT_BF16, 64, 16)), -1);
	assert_int_equal(SIG(s, "aten::_softmax", T(DT_BF16, 32, 16), SC("-1"), SC("False")), -1);
}

static void matmuls_sign_by_what_they_compute(void **state)
{
	(void)state;
	char s[256], t[256];
	assert_int_equal(SIG(s, "aten::mm", T(DT_BF16, 32, 16), T(DT_BF16, 16, 64)), 0);
	assert_string_equal(s, "matmul M=32 N=64 K=16 bf16");
	/* a batch of one, and an addmm whose addend is not read (beta 0), are the same mm */
	assert_int_equal(SIG(t, "aten::bmm", T(DT_BF16, 1, 32, 16), T(DT_BF16, 1, 16, 64)), 0);
	assert_string_equal(s, t);
	assert_int_equal(SIG(t, "aten::addmm", T(DT_BF16, 64), T(DT_BF16, 32, 16),
			     T(DT_BF16, 16, 64), SC("0"), SC("1")),
			 0);
	assert_string_equal(s, t);
	assert_int_equal(SIG(s, "aten::addmm", T(DT_BF16, 64), T(DT_BF16, 32, 16),
			     T(DT_BF16, 16, 64), SC("1"), SC("1")),
			 0);
	assert_string_equal(s, "matmul M=32 N=64 K=16 add=[64] bf16");
	assert_int_equal(SIG(s, "aten::_addmm_activation", T(DT_BF16, 64), T(DT_BF16, 32, 16),
			     T(DT_BF16, 16, 64), SC("1"), SC("1"), SC("True")),
			 0);
	assert_string_equal(s, "matmul M=32 N=64 K=16 add=[64] gelu bf16");
	assert_int_equal(SIG(s, "aten::_addmm_activation", T(DT_BF16, 64), T(DT_BF16, 32, 16),
			     T(DT_BF16, 16, 64), SC("0"), SC("1"), SC("False")),
			 0);
	assert_string_equal(s, "matmul M=32 N=64 K=16 relu bf16");
	assert_int_equal(SIG(s, "aten::baddbmm", T(DT_BF16, 4, 32, 64), T(DT_BF16, 4, 32, 16),
			     T(DT_BF16, 4, 16, 64), SC("1"), SC("1")),
			 0);
	assert_string_equal(s, "matmul M=32 N=64 K=16 batch=4 add=[4,32,64] bf16");
}

static void convolutions_sign_by_their_parameters(void **state)
{
	(void)state;
	char s[256], t[256];
	assert_int_equal(SIG(s, "aten::convolution", T(DT_BF16, 32, 64, 56, 56),
			     T(DT_BF16, 64, 64, 3, 3), NONE, SC("[1, 1]"), SC("[1, 1]"),
			     SC("[1, 1]"), SC("False"), SC("[0, 0]"), SC("1")),
			 0);
	assert_string_equal(s, "conv x=[32,64,56,56] w=[64,64,3,3] stride=1,1 pad=1,1 dil=1,1 "
			       "out_pad=0,0 groups=1 bf16");
	/* cudnn_convolution(self, weight, padding, stride, dilation, groups, ...) */
	assert_int_equal(SIG(t, "aten::cudnn_convolution", T(DT_BF16, 32, 64, 56, 56),
			     T(DT_BF16, 64, 64, 3, 3), SC("[1, 1]"), SC("[1, 1]"), SC("[1, 1]"),
			     SC("1"), SC("False"), SC("False"), SC("True")),
			 0);
	assert_string_equal(s, t);
	assert_int_equal(SIG(t, "aten::convolution", T(DT_BF16, 32, 64, 56, 56),
			     T(DT_BF16, 64, 64, 3, 3), NONE, SC("[2, 2]"), SC("[1, 1]"),
			     SC("[1, 1]"), SC("False"), SC("[0, 0]"), SC("1")),
			 0);
	assert_string_not_equal(s, t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_sdpa_forward_has_one_signature),
		cmocka_unit_test(every_sdpa_backward_has_one_signature),
		cmocka_unit_test(gqa_and_unequal_lengths_are_in_the_signature),
		cmocka_unit_test(unrecorded_values_give_no_signature),
		cmocka_unit_test(matmuls_sign_by_what_they_compute),
		cmocka_unit_test(convolutions_sign_by_their_parameters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
