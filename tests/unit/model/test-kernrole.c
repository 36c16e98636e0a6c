/*
 * test-kernrole.c — kernel names from real traces -> math or data movement; memcpy paths.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <string.h>

#include <cmocka.h>

#include "kprof/devdb.h"
#include "kprof/kernrole.h"

static void library_math_kernels_are_math(void **state)
{
	(void)state;
	static const char *const names[] = {
		"nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_TNT",
		/* cuBLASLt with a fused GELU+bias epilogue (kprof capture --backend cublaslt) */
		"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_gelubias_NNT",
		"sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage4",
		"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>"
		"(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8::Params)",
		"void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>",
		"cudnn_generated_fort_native_sdpa_sm90_knob_7_64x128x128_4x1x1_kernel0_0",
		"triton_tem_fused_mm_0", "Cijk_Ailk_Bljk_BBS_BH_MT128x128x32",
		"some_kernel_kprof_has_never_seen", /* unknown: math, so the op's FLOPs stay */
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_int_equal(kernrole_of(names[i]), KROLE_MATH);
	assert_int_equal(kernrole_of(NULL), KROLE_MATH);
}

/* helpers inside math libraries move data although their names say gemm, cudnn or flash */
static void math_library_helpers_and_generic_kernels_move_data(void **state)
{
	(void)state;
	static const char *const names[] = {
		"void cutlass::Kernel2<cutlass::gemm::kernel::ReduceSplitK<float>>",
		"void cudnn::ops::nchwToNhwcKernel<__nv_bfloat16, __nv_bfloat16, float, false>",
		"void flash_bwd_convert_dq_kernel<Flash_bwd_kernel_traits<128>>",
		"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
		"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>",
		"void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 4>",
		"triton_poi_fused_add_0",
		"triton_red_fused_sum_1",
		"IM2COL_kernel",
		/* kprof capture's own: addmm's bias broadcast, SDPA's head/seq swap */
		"void kprof_bias_rows<__nv_bfloat16>(__nv_bfloat16*, const __nv_bfloat16*, long, long)",
		"void kprof_swap01<__half>(__half*, const __half*, long, long, long)",
		/* the cublas backend's GELU / ReLU after the GEMM, inside aten::_addmm_activation */
		"void kprof_activation<__nv_bfloat16>(__nv_bfloat16*, unsigned long, int)",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_int_equal(kernrole_of(names[i]), KROLE_MOVE);
	/* a name past the stack copy (1,024 bytes), in any case: its fragment still found */
	char big[3000];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big + 2000, "REDUCESPLITK", 12);
	memcpy(big + 10, "Gemm", 4);
	assert_int_equal(kernrole_of(big), KROLE_MOVE); /* a helper first, then math */
	memcpy(big + 2000, "xxxxxxxxxxxx", 12);
	assert_int_equal(kernrole_of(big), KROLE_MATH);
	memcpy(big + 10, "xxxx", 4);
	memcpy(big + 2990, "Relu", 4);
	assert_int_equal(kernrole_of(big), KROLE_MOVE);
}

static void memcpy_kinds_map_to_their_path(void **state)
{
	(void)state;
	assert_int_equal(kernrole_mempath("Memcpy HtoD (Pageable -> Device)", 1), MEMPATH_HOST);
	assert_int_equal(kernrole_mempath("Memcpy DtoH (Device -> Pinned)", 1), MEMPATH_HOST);
	assert_int_equal(kernrole_mempath("Memcpy DtoD (Device -> Device)", 1), MEMPATH_DTOD);
	assert_int_equal(kernrole_mempath("Memcpy AtoD", 1), MEMPATH_DTOD);
	assert_int_equal(kernrole_mempath("Memcpy PtoP (Device -> Device)", 1), MEMPATH_PEER);
	assert_int_equal(kernrole_mempath("Memcpy HtoH (Pinned -> Pinned)", 1), MEMPATH_UNKNOWN);
	/* the kind is a whole word: "HtoDx" is no kind kprof knows */
	assert_int_equal(kernrole_mempath("Memcpy HtoDx", 1), MEMPATH_UNKNOWN);
	assert_int_equal(kernrole_mempath("cudaMemcpyAsync", 1), MEMPATH_UNKNOWN);
	assert_int_equal(kernrole_mempath(NULL, 1), MEMPATH_UNKNOWN);
	/* kernels and memsets: DRAM whatever the name */
	assert_int_equal(kernrole_mempath("Memcpy HtoD", 0), MEMPATH_DRAM);
	assert_int_equal(kernrole_mempath("Memset (Device)", 0), MEMPATH_DRAM);
}

static void flash_kernels_say_whether_they_are_causal(void **state)
{
	(void)state;
	/* torch 2.x pytorch_flash kernels, demangled as CUPTI/Kineto write them */
	assert_int_equal(
		kernrole_causal(
			"void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, "
			"false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, "
			"false, true, false, true, true, false>(pytorch_flash::Flash_fwd_params)"),
		1);
	assert_int_equal(
		kernrole_causal(
			"void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, "
			"false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, "
			"false, false, false, true, true, false>(pytorch_flash::Flash_fwd_params)"),
		0);
	/* as torch 2.11.0+cu130 launched them on an H200 (tests/gpu, LLAMA_SDPA=flash) */
	assert_int_equal(
		kernrole_causal(
			"void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, "
			"false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, "
			"false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)"),
		1);
	assert_int_equal(
		kernrole_causal(
			"void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<64, "
			"128, 128, 8, 4, 4, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 8, "
			"cutlass::bfloat16_t> >, false, true, false, false, true, true, false>"
			"(pytorch_flash::Flash_bwd_params)"),
		1);
	/* Is_dropout true, Is_causal false: the position matters, not the first bool */
	assert_int_equal(
		kernrole_causal(
			"void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 64, 4, false, false, "
			"cutlass::half_t, Flash_kernel_traits<64, 128, 64, 4, cutlass::half_t> >, true, false, "
			"false, true, true, false>(pytorch_flash::Flash_fwd_params)"),
		0);
	assert_int_equal(
		kernrole_causal(
			"void pytorch_flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<64, 64, 256, 4, false, "
			"false, cutlass::bfloat16_t, Flash_kernel_traits<64, 64, 256, 4, cutlass::bfloat16_t> >, "
			"true, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)"),
		1);
	assert_int_equal(
		kernrole_causal(
			"void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<64, "
			"128, 128, 8, 4, 4, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 8, "
			"cutlass::bfloat16_t> >, false, true, false, true, true>(pytorch_flash::Flash_bwd_params)"),
		1);
	assert_int_equal(
		kernrole_causal(
			"void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
			"cutlass::half_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::half_t> >, false, (bool)1, "
			"false, false, true, true, false, false>(flash::Flash_fwd_params)"),
		1);
	/* names that do not say */
	static const char *const unknown[] = {
		"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0",
		"fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, "
		"cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
		"void pytorch_flash::flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<64, 128, 128, 8, 4, "
		"4, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 8, "
		"cutlass::bfloat16_t> > >(pytorch_flash::Flash_bwd_params)",
		"void pytorch_flash::flash_bwd_convert_dq_kernel<Flash_bwd_kernel_traits<64> >(pytorch_flash::Flash_bwd_params)",
		"void pytorch_flash::flash_fwd_kernel<Traits, false>(pytorch_flash::Flash_fwd_params)",
		"void pytorch_flash::flash_fwd_kernel<Traits, false, 1, false>(p)",
		"void pytorch_flash::flash_fwd_kernel<Traits, false, true",
		"void my_flash_fwd_kernel<Traits, false, true>(p)",
		"flash_fwd_kernel",
		"",
	};
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
		assert_int_equal(kernrole_causal(unknown[i]), -1);
	assert_int_equal(kernrole_causal(NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(library_math_kernels_are_math),
		cmocka_unit_test(math_library_helpers_and_generic_kernels_move_data),
		cmocka_unit_test(memcpy_kinds_map_to_their_path),
		cmocka_unit_test(flash_kernels_say_whether_they_are_causal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
