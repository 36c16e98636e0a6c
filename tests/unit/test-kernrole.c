/*
 * test-kernrole.c — kernel names from real traces -> math or data movement; memcpy paths.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "kprof/devdb.h"
#include "kprof/kernrole.h"

static void library_math_kernels_are_math(void **state)
{
	(void)state;
	static const char *const names[] = {
		"nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_TNT",
		"sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage4",
		"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>"
		"(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8::Params)",
		"void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>",
		"cudnn_generated_fort_native_sdpa_sm90_knob_7_64x128x128_4x1x1_kernel0_0",
		"triton_tem_fused_mm_0",
		"Cijk_Ailk_Bljk_BBS_BH_MT128x128x32",
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
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_int_equal(kernrole_of(names[i]), KROLE_MOVE);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(library_math_kernels_are_math),
		cmocka_unit_test(math_library_helpers_and_generic_kernels_move_data),
		cmocka_unit_test(memcpy_kinds_map_to_their_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
