/*
 * test-attribution.c — per-kernel attribution: math kernels get an op's FLOPs, data-movement
 * kernels only their own bytes (kernrole.c, src/opmodel*.c's data-movement part, analyze.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kprof/analyze.h"
#include "kprof/devdb.h"
#include "kprof/kernrole.h"
#include "kprof/link.h"
#include "kprof/opmodel.h"
#include "kprof/trace.h"

static struct kp_devdb db;

static void names_classify_as_math_or_data_movement(void **state)
{
	(void)state;
	static const char *const math[] = {
		"nvjet_sm90_tst_256x128_64x4_1x2_h_badd_coopA_NNT",
		"sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x32x8_stage3_execute_split_k_kernel__5x_cublas",
		"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nn",
		"volta_sgemm_128x64_nn",
		"maxwell_scudnn_128x64_relu_interior_nn",
		"void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int)",
		"sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x32",
		"void convolve_common_engine_float_NHWC<float, float, 1024, 5, 5, 3, 3, 3, true>(int)",
		"void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>(int)",
		"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128",
		"void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4> >(Flash_fwd_params)",
		"fmha_cutlassF_bf16_aligned_64x128_rf_sm80(PyTorchMemEffAttention::AttentionKernel)",
		"triton_tem_fused_mm_0",
		"Cijk_Alik_Bljk_BBS_BH_MT128x128x64_MI16x16x16x1",
		"some_custom_kernel",
		NULL
	};
	static const char *const move[] = {
		"void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)> >(int)",
		"void at::native::vectorized_elementwise_kernel<8, at::native::FillFunctor<c10::BFloat16>, std::array<char*, 1ul> >(int)",
		"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int)",
		"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float> >(at::native::ReduceOp<float>)",
		"void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true>(int)",
		"void cudnn::engines_precompiled::nhwcToNchwKernel<float, float, float, true, false>(int)",
		"void cudnn::engines_precompiled::scalePackedTensor_kernel<float, float>(long, float*, float)",
		"void cutlass__5x_cudnn::Kernel<cutlass__5x_cudnn::reduction::kernel::ReduceSplitK<float> >(int)",
		"void cask_plugin__5x_cudnn::xmma__5x_cudnn::init_device_workspace_kernel<int>(int)",
		"void cudnn::cnn::reduce_wgrad_nchw_helper<float, float>(void*, void const*, float, int, int)",
		"void splitKreduce_kernel<32, 16, int, float, float, float, float, true, false, false>(int)",
		"void pytorch_flash::flash_bwd_convert_dq_kernel<Flash_bwd_kernel_traits<128> >(Flash_bwd_params)",
		"void pytorch_flash::flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<128> >(Flash_bwd_params)",
		"void cudnn::fusion::compute_dot_do_o_specialized<true, 128>(int)",
		"void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 4, 64, 64>(int)",
		"void at::native::im2col_kernel<float>(long, float const*, long)",
		"triton_poi_fused_add_0",
		"triton_red_fused_sum_1",
		"triton_per_fused_softmax_2",
		NULL
	};
	for (const char *const *n = math; *n; n++) {
		if (kernrole_of(*n) != KROLE_MATH)
			fprintf(stderr, "not math: %s\n", *n);
		assert_int_equal(kernrole_of(*n), KROLE_MATH);
	}
	for (const char *const *n = move; *n; n++) {
		if (kernrole_of(*n) != KROLE_MOVE)
			fprintf(stderr, "not data movement: %s\n", *n);
		assert_int_equal(kernrole_of(*n), KROLE_MOVE);
	}
}

static struct kp_slot tensor(int nd, const int64_t *dims, enum kp_dtype dt)
{
	return (struct kp_slot){ .ndim = nd, .dims = dims, .dtype = dt, .concrete = "" };
}

static struct kp_slot scalar(const char *text)
{
	return (struct kp_slot){ .dtype = DT_NONE, .concrete = text };
}

static void gemm_and_conv_models_name_their_data_movement_part(void **state)
{
	(void)state;
	/* baddbmm(self [256], batch1 [4,256,128], batch2 [4,128,256], beta 1, alpha 1) bf16 */
	static const int64_t c[] = { 256 }, a[] = { 4, 256, 128 }, b[] = { 4, 128, 256 };
	struct kp_slot s[5] = { tensor(1, c, DT_BF16), tensor(3, a, DT_BF16), tensor(3, b, DT_BF16),
				scalar("1"), scalar("1") };
	struct kp_op_in in = { .name = "aten::baddbmm",
			       .nslots = 5,
			       .slots = s,
			       .kernel_flop = -1,
			       .kernel_num_gb = -1 };
	struct kp_cost k;
	assert_int_equal(opmodel_eval(&in, &k), 0);
	const int64_t ab = 2 * 4 * 256 * 128 * 2, out = 4 * 256 * 256 * 2;
	assert_int_equal(k.bytes, ab + out + 512);
	/* the copy of C: read C, write the output; the GEMM then reads it back as C */
	assert_int_equal(k.move_bytes, 512 + out);
	assert_int_equal(k.math_bytes, ab + 2 * out);
	/* beta = 0: C is not read, nothing to copy */
	s[3] = scalar("0");
	assert_int_equal(opmodel_eval(&in, &k), 0);
	assert_int_equal(k.move_bytes, -1);
	assert_int_equal(k.math_bytes, -1);
	/* mm has no data-movement part */
	struct kp_op_in mm = { .name = "aten::mm",
			       .nslots = 2,
			       .slots = s + 1,
			       .kernel_flop = -1,
			       .kernel_num_gb = -1 };
	static const int64_t m2[] = { 256, 128 }, n2[] = { 128, 64 };
	struct kp_slot t2[2] = { tensor(2, m2, DT_F32), tensor(2, n2, DT_F32) };
	mm.slots = t2;
	assert_int_equal(opmodel_eval(&mm, &k), 0);
	assert_int_equal(k.move_bytes, -1);

	/* convolution(x [2,3,8,8], w [4,3,3,3], bias [4], [1,1], [1,1], [1,1], False, [0,0], 1) */
	static const int64_t x[] = { 2, 3, 8, 8 }, w[] = { 4, 3, 3, 3 }, bias[] = { 4 };
	struct kp_slot cv[9] = {
		tensor(4, x, DT_F32), tensor(4, w, DT_F32), tensor(1, bias, DT_F32),
		scalar("[1, 1]"),     scalar("[1, 1]"),     scalar("[1, 1]"),
		scalar("False"),      scalar("[0, 0]"),     scalar("1")
	};
	struct kp_op_in conv = { .name = "aten::convolution",
				 .nslots = 9,
				 .slots = cv,
				 .kernel_flop = -1,
				 .kernel_num_gb = -1 };
	assert_int_equal(opmodel_eval(&conv, &k), 0);
	const int64_t y = 2 * 4 * 8 * 8 * 4;
	assert_int_equal(k.bytes, (2 * 3 * 64 + 4 * 27 + 4) * 4 + y);
	assert_int_equal(k.move_bytes, 2 * y + 16);
	assert_int_equal(k.math_bytes, k.bytes - 16);
}

/*
 * baddbmm as cuBLAS runs it: a 1 us copy of C into the output, then a 3 us beta=1 GEMM.
 */
static const char trace_text[] =
	"{\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA H100 80GB HBM3\",\"numSms\":132}],"
	"\"traceEvents\":["
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::baddbmm\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":50,"
	"\"args\":{\"External id\":1,\"Input Dims\":[[256],[4,256,128],[4,128,256],[],[]],"
	"\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"],"
	"\"Concrete Inputs\":[\"\",\"\",\"\",\"1\",\"1\"]}},"
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":1,"
	"\"dur\":1,\"args\":{\"correlation\":10,\"External id\":1}},"
	"{\"ph\":\"X\",\"cat\":\"cuda_driver\",\"name\":\"cuLaunchKernelEx\",\"pid\":1,\"tid\":1,\"ts\":3,"
	"\"dur\":1,\"args\":{\"correlation\":11,\"External id\":1}},"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"void at::native::elementwise_kernel<128, 4, "
	"direct_copy_kernel_cuda>(int)\",\"pid\":0,\"tid\":7,\"ts\":10,\"dur\":1,\"args\":{\"correlation\":10}},"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"nvjet_sm90_tst_64x64_64x13_2x1_v_badd_NNT\",\"pid\":0,"
	"\"tid\":7,\"ts\":12,\"dur\":3,\"args\":{\"correlation\":11}}"
	"]}";

static char path[] = "/tmp/kprof-test-attribution-XXXXXX";

static const struct kp_row *row(const struct kp_report *r, const char *prefix)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (!strncmp(r->rows[i].name, prefix, strlen(prefix)))
			return &r->rows[i];
	return NULL;
}

static void run(struct kp_trace *t, struct kp_report *r, const char *file, enum kp_group g)
{
	struct kp_diag d = { 0 };
	struct kp_load_opts lo = { 0 };
	assert_int_equal(trace_load(t, file, &lo, &d), 0);
	link_trace(t);
	struct kp_analyze_opts o = { .group = g, .db = &db };
	assert_int_equal(analyze_run(t, &o, r), 0);
}

static void copy_of_c_gets_its_bytes_and_the_gemm_the_flops(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_report r;
	run(&t, &r, path, GROUP_KERNEL);
	const int64_t flops = 2LL * 4 * 256 * 256 * 128, ab = 2 * 4 * 256 * 128 * 2;
	const int64_t out = 4 * 256 * 256 * 2;
	const struct kp_row *cp = row(&r, "void at::native::elementwise_kernel");
	const struct kp_row *mm = row(&r, "nvjet_");
	assert_non_null(cp);
	assert_non_null(mm);
	assert_int_equal(cp->flops, -1);
	assert_int_equal(cp->bytes, 512 + out);
	assert_null(cp->bound);
	assert_true(cp->pct_peak_flops < 0);
	assert_true(cp->pct_peak_bw > 0);
	assert_int_equal(mm->flops, flops);
	assert_int_equal(mm->bytes, ab + 2 * out);
	/* totals stay the op's compulsory figures */
	assert_int_equal(r.tot.flops, flops);
	assert_int_equal(r.tot.bytes, ab + out + 512);
	analyze_free(&r);
	trace_free(&t);
	/* op rows: unchanged, the op's figures over all its kernels */
	run(&t, &r, path, GROUP_OP);
	assert_int_equal(r.nrows, 1);
	assert_int_equal(r.rows[0].flops, flops);
	assert_int_equal(r.rows[0].bytes, ab + out + 512);
	assert_int_equal(r.rows[0].time_ns, 4000);
	analyze_free(&r);
	trace_free(&t);
}

static void matmul_bf16_kernel_rows_give_no_flops_to_copies(void **state)
{
	(void)state;
	static const char *const traces[] = {
		"torch211-h100/matmul_bf16.json", "torch211-h100/matmul_fp16.json",
		"torch211-h100/conv_fp32.json",   "torch211-h100/sdpa_flash.json",
		"torch211-h100/block_bf16.json",  "torch211-h100/compiled_fp32.json",
	};
	for (size_t k = 0; k < sizeof(traces) / sizeof(traces[0]); k++) {
		char file[1024];
		const char *dir = getenv("KPROF_TESTDATA");
		snprintf(file, sizeof(file), "%s/%s", dir ? dir : "../../testdata", traces[k]);
		struct kp_trace t;
		struct kp_report r, ro;
		run(&t, &r, file, GROUP_KERNEL);
		int copies = 0;
		for (size_t i = 0; i < r.nrows; i++) {
			const struct kp_row *x = &r.rows[i];
			if (kernrole_of(x->name) == KROLE_MOVE || !strncmp(x->name, "Mem", 3)) {
				copies += strstr(x->name, "copy") != NULL;
				if (x->flops >= 0)
					fprintf(stderr, "%s: %s has FLOPs\n", traces[k], x->name);
				assert_true(x->flops < 0);
			}
			if (x->flops < 0)
				assert_null(x->bound);
		}
		if (k == 0)
			assert_true(copies > 0);
		/* op totals do not depend on the grouping */
		struct kp_analyze_opts o = { .group = GROUP_OP, .db = &db };
		assert_int_equal(analyze_run(&t, &o, &ro), 0);
		assert_int_equal(ro.tot.flops, r.tot.flops);
		assert_int_equal(ro.tot.bytes, r.tot.bytes);
		analyze_free(&ro);
		analyze_free(&r);
		trace_free(&t);
	}
}

static void gpu_time_splits_by_model_coverage(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_report r;
	/* baddbmm: the 3 us GEMM has FLOPs, the 1 us copy of C moves data */
	run(&t, &r, path, GROUP_KERNEL);
	assert_int_equal(r.tot.flops_ns, 3000);
	assert_int_equal(r.tot.bytes_only_ns, 1000);
	assert_int_equal(r.tot.unmodelled_ns, 0);
	analyze_free(&r);
	trace_free(&t);
	/* a real Triton trace without Inductor counts: all time in one Triton kernel without a model */
	char file[1024];
	const char *dir = getenv("KPROF_TESTDATA");
	snprintf(file, sizeof(file), "%s/hta/triton_example_2024.json.gz",
		 dir ? dir : "../../testdata");
	run(&t, &r, file, GROUP_OP);
	assert_int_equal(r.tot.flops_ns, 0);
	assert_int_equal(r.tot.unmodelled_ns, r.tot.gpu_time_ns);
	assert_int_equal(r.tot.nomodel_kernels[NOMODEL_TRITON], 1);
	assert_int_equal(r.tot.nomodel_kernels[NOMODEL_CUSTOM] +
				 r.tot.nomodel_kernels[NOMODEL_ATEN],
			 0);
	analyze_free(&r);
	trace_free(&t);
	/* the three shares cover all GPU time on every fixture */
	snprintf(file, sizeof(file), "%s/hta/trace_diff_control_2022.json.gz",
		 dir ? dir : "../../testdata");
	run(&t, &r, file, GROUP_KERNEL);
	assert_int_equal(r.tot.flops_ns + r.tot.bytes_only_ns + r.tot.unmodelled_ns,
			 r.tot.gpu_time_ns);
	assert_true(r.tot.flops_ns > 0 && r.tot.bytes_only_ns > 0 && r.tot.unmodelled_ns > 0);
	assert_true(r.tot.nomodel_kernels[NOMODEL_NCCL] > 0);
	analyze_free(&r);
	trace_free(&t);
}

static int setup(void **state)
{
	(void)state;
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "w");
	fputs(trace_text, f);
	fclose(f);
	struct kp_diag d = { 0 };
	return devdb_load_builtin(&db, &d);
}

static int teardown(void **state)
{
	(void)state;
	devdb_free(&db);
	return unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_classify_as_math_or_data_movement),
		cmocka_unit_test(gemm_and_conv_models_name_their_data_movement_part),
		cmocka_unit_test(copy_of_c_gets_its_bytes_and_the_gemm_the_flops),
		cmocka_unit_test(matmul_bf16_kernel_rows_give_no_flops_to_copies),
		cmocka_unit_test(gpu_time_splits_by_model_coverage),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
