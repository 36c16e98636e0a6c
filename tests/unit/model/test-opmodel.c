/*
 * test-opmodel.c — the model table (src/model/opmodel.c): op classes, composites without a
 * model, Inductor kernels' own flop and num_gb, the family tables sorted and disjoint.
 * Shared slot macros and FlopCounterMode counts: opmodel-test.h.
 */
#include "opmodel-test.h"

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
		cmocka_unit_test(opmodel_class_finds_every_modeled_op),
		cmocka_unit_test(opmodel_class_answers_without_evaluating),
		cmocka_unit_test(composite_ops_have_no_model),
		cmocka_unit_test(inductor_kernel_flop_and_num_gb_win),
		cmocka_unit_test(family_tables_are_sorted_disjoint_and_found),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
