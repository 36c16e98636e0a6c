/*
 * test-hostops.c — library calls and NVTX ranges of `kprof capture -- <cmd>` without a GPU:
 * cuBLASLt descriptor decoding, synthetic cuBLAS / cuBLASLt calls -> ops whose models give the
 * closed-form FLOPs, PyTorch emit_nvtx messages (well-formed and malformed), and the one-level
 * rule when an emit_nvtx op encloses a library op.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "intercept/hcall.h"
#include "intercept/hostops.h"
#include "intercept/ltshape.h"
#include "kprof/analyze.h"
#include "kprof/devdb.h"
#include "kprof/link.h"
#include "kprof/trace.h"
#include "record/ctrace.h"

#define T0 1795653390000000000ull /* CLOCK_REALTIME ns */

enum { R32F = 0, R64F = 1, R16F = 2, R16BF = 14, C32F = 68, FAST_TF32 = 77 };

static void lt_descriptors_give_the_gemm_shape(void **state)
{
	(void)state;
	/* torch.addmm(bias, a, b) bf16 (doc/capture-any.md §1.5, observed): D 128x256, A 128x512 */
	struct kp_lt_attrs a = { .compute = C32F,
				 .scale_type = R32F,
				 .transa = 0,
				 .transb = 0,
				 .epilogue = 4,
				 .bias_type = -1,
				 .type = { R16BF, R16BF, R16BF, R16BF },
				 .rows = { 128, 512, 128, 128 },
				 .cols = { 512, 256, 256, 256 },
				 .batch = { 1, 1, 1, 1 },
				 .has = { 1, 1, 1, 1 } };
	float beta = 0.f;
	a.beta = &beta, a.beta_readable = 1;
	struct kp_hcall c;
	memset(&c, 0, sizeof(c));
	assert_int_equal(ltshape_decode(&a, &c), 0);
	assert_int_equal(c.m, 128);
	assert_int_equal(c.n, 256);
	assert_int_equal(c.k, 512);
	assert_int_equal(c.batch, 1);
	assert_true(c.flags & HCF_BIAS);
	assert_true(c.flags & HCF_BETA_ZERO);
	assert_int_equal(c.bias_type, R16BF);
	assert_int_equal(c.compute, C32F);

	/* F.linear on 3-D input: A stored 512x128 with transA = T, batched D */
	a.transa = 1;
	a.rows[LT_A] = 512, a.cols[LT_A] = 128;
	a.batch[LT_D] = 4;
	a.epilogue = 1;
	beta = 1.f;
	memset(&c, 0, sizeof(c));
	assert_int_equal(ltshape_decode(&a, &c), 0);
	assert_int_equal(c.k, 512);
	assert_int_equal(c.batch, 4);
	assert_false(c.flags & HCF_BIAS);
	assert_true(c.flags & HCF_BETA_KNOWN);
	assert_false(c.flags & HCF_BETA_ZERO);

	/* device pointer mode: beta is never read */
	a.pointer_mode = 1;
	memset(&c, 0, sizeof(c));
	assert_int_equal(ltshape_decode(&a, &c), 0);
	assert_false(c.flags & HCF_BETA_KNOWN);
	/* ALPHA_DEVICE_VECTOR_BETA_ZERO says so itself */
	a.pointer_mode = 3;
	memset(&c, 0, sizeof(c));
	assert_int_equal(ltshape_decode(&a, &c), 0);
	assert_true(c.flags & HCF_BETA_ZERO);

	/* inner dimensions that disagree: no shape */
	a.rows[LT_B] = 511;
	memset(&c, 0, sizeof(c));
	assert_int_equal(ltshape_decode(&a, &c), -1);
	assert_int_equal(c.m, -1);
	/* no A layout */
	a.rows[LT_B] = 512;
	a.has[LT_A] = 0;
	assert_int_equal(ltshape_decode(&a, &c), -1);
}

static struct kp_hcall gemm(const char *name, int64_t m, int64_t n, int64_t k, int64_t batch,
			    int32_t type, int32_t ctype, int32_t compute, uint32_t flags)
{
	struct kp_hcall c;
	memset(&c, 0, sizeof(c));
	c.kind = HC_GEMM;
	c.name = name;
	c.m = m, c.n = n, c.k = k, c.batch = batch;
	c.atype = c.btype = type;
	c.ctype = c.dtype = ctype;
	c.compute = compute;
	c.bias_type = -1;
	c.flags = flags;
	return c;
}

static void gemm_calls_are_laid_out_as_aten_ops(void **state)
{
	(void)state;
	const char *name;
	char *args;
	/* torch.mm 256x512 @ 512x128 bf16 arrives as GemmEx(m=128, n=256, k=512) (§1.4) */
	struct kp_hcall c = gemm("cublasGemmEx", 128, 256, 512, 1, R16BF, R16BF, C32F,
				 HCF_BETA_KNOWN | HCF_BETA_ZERO);
	assert_int_equal(hostops_gemm(&c, &name, &args), 0);
	assert_string_equal(name, "aten::mm");
	assert_non_null(strstr(args,
			       "\"Input Dims\":[[256,512],[512,128],[256,128]],\"Input type\":"
			       "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\"]"));
	assert_non_null(strstr(args, "\"kprof library call\":\"cublasGemmEx\""));
	assert_non_null(strstr(args, "m=128 n=256 k=512 batch=1 transa=N transb=N compute=68"));
	assert_null(strstr(args, "kprof compute"));
	free(args);
	/* strided batched, beta != 0 (fp32 C): baddbmm with C as the addend */
	c = gemm("cublasGemmStridedBatchedEx", 64, 32, 16, 8, R16F, R32F, C32F, HCF_BETA_KNOWN);
	assert_int_equal(hostops_gemm(&c, &name, &args), 0);
	assert_string_equal(name, "aten::baddbmm");
	assert_non_null(
		strstr(args, "\"Input Dims\":[[8,32,64],[8,32,16],[8,16,64],[],[],[8,32,64]]"));
	assert_non_null(strstr(args,
			       "\"Input type\":[\"float\",\"c10::Half\",\"c10::Half\",\"Scalar\","
			       "\"Scalar\",\"float\"]"));
	free(args);
	/* Lt with a bias epilogue and TF32 math: addmm with the bias vector as self */
	c = gemm("cublasLtMatmul", 128, 256, 512, 1, R32F, R32F, FAST_TF32,
		 HCF_BETA_KNOWN | HCF_BETA_ZERO | HCF_BIAS);
	c.bias_type = R32F;
	c.epilogue = 4;
	assert_int_equal(hostops_gemm(&c, &name, &args), 0);
	assert_string_equal(name, "aten::addmm");
	assert_non_null(strstr(args, "\"Input Dims\":[[128],[256,512],[512,128],[],[],[256,128]]"));
	assert_non_null(strstr(args, "\"Concrete Inputs\":[\"\",\"\",\"\",\"1\",\"\",\"\"]"));
	assert_non_null(strstr(args, "\"kprof compute\":\"tf32\""));
	free(args);
	/* a call without a shape */
	c = gemm("cublasLtMatmul", -1, -1, -1, 1, R32F, R32F, C32F, 0);
	assert_int_equal(hostops_gemm(&c, &name, &args), -1);
	assert_null(args);
	assert_string_equal(hostops_type_name(R16BF), "c10::BFloat16");
	assert_string_equal(hostops_type_name(99), "");
}

/*
 * cuDNN attention with a bias, as aten's cudnn attention ops: the forward's nine arguments (its
 * logsumexp asked for), the backward's sixteen (grad_out and out first, fp32 logsumexp, max_q and
 * max_k known), each list whole
 */
static void sdpa_calls_are_laid_out_as_aten_ops(void **state)
{
	(void)state;
	const char *name;
	char *args;
	struct kp_hcall c;
	memset(&c, 0, sizeof(c));
	int64_t sd[7] = { 2, 8, 2, 128, 256, 64, 64 };
	memcpy(c.sd, sd, sizeof(sd));
	c.atype = 9; /* CUDNN_DATA_BFLOAT16 */
	c.name = "cudnnBackendExecute";
	c.sdpa_flags = SDPA_F_BIAS | SDPA_F_STATS;
	assert_int_equal(hostops_sdpa(&c, &name, &args), 0);
	assert_string_equal(name, "aten::_scaled_dot_product_cudnn_attention");
	assert_string_equal(
		args,
		"\"Input Dims\":[[2,8,128,64],[2,2,256,64],[2,2,256,64],[2,8,128,256],[],[],[],"
		"[],[]],\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\","
		"\"c10::BFloat16\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\",\"\"],"
		"\"Concrete Inputs\":[\"\",\"\",\"\",\"\",\"True\",\"0.\",\"False\",\"False\","
		"\"\"],\"kprof library call\":\"cudnnBackendExecute\",\"kprof sdpa\":\"b=2 h=8 "
		"hkv=2 sq=128 sk=256 d=64 dv=64 causal=0 bwd=0 status=0\"");
	free(args);
	c.sdpa_flags = SDPA_F_BWD | SDPA_F_BIAS | SDPA_F_CAUSAL;
	assert_int_equal(hostops_sdpa(&c, &name, &args), 0);
	assert_string_equal(name, "aten::_scaled_dot_product_cudnn_attention_backward");
	assert_string_equal(
		args,
		"\"Input Dims\":[[2,8,128,64],[2,8,128,64],[2,2,256,64],[2,2,256,64],[2,8,128,64],"
		"[2,8,128,1],[],[],[2,8,128,256],[],[],[],[],[],[],[]],\"Input type\":["
		"\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\","
		"\"c10::BFloat16\",\"float\",\"\",\"\",\"c10::BFloat16\",\"\",\"\",\"Scalar\","
		"\"Scalar\",\"Scalar\",\"Scalar\",\"\"],\"Concrete Inputs\":[\"\",\"\",\"\",\"\",\"\","
		"\"\",\"\",\"\",\"\",\"\",\"\",\"128\",\"256\",\"0.\",\"True\",\"\"],\"kprof library "
		"call\":\"cudnnBackendExecute\",\"kprof sdpa\":\"b=2 h=8 hkv=2 sq=128 sk=256 d=64 "
		"dv=64 causal=1 bwd=1 status=0\"");
	free(args);
	c.sd[SD_DV] = 0; /* a shape it does not know */
	assert_int_equal(hostops_sdpa(&c, &name, &args), -1);
	assert_null(args);
}

/* A launch on thread 483 and its kernel, linked to External id @ext when non-zero. */
static void add_kernel(struct kp_ctrace *t, uint32_t corr, uint64_t launch_ns, uint64_t ext,
		       const char *kname)
{
	struct kp_rec api = { .kind = REC_DRIVER,
			      .start_ns = launch_ns,
			      .end_ns = launch_ns + 1000,
			      .corr = corr,
			      .cbid = 652,
			      .pid = 483,
			      .tid = 483,
			      .name = ctrace_intern(t, "cuLaunchKernelEx", 16) };
	struct kp_rec k = { .kind = REC_KERNEL,
			    .start_ns = launch_ns + 50000,
			    .end_ns = launch_ns + 60000,
			    .corr = corr,
			    .stream = 7,
			    .grid = { 1, 1, 1 },
			    .block = { 128, 1, 1 },
			    .name = ctrace_intern(t, kname, strlen(kname)) };
	ctrace_add_rec(t, &api);
	ctrace_add_rec(t, &k);
	if (ext)
		ctrace_add_ext(t, corr, ext);
}

static void add_call(struct kp_ctrace *t, struct kp_hcall c, uint64_t s, uint64_t e, uint64_t ext)
{
	c.start_ns = s, c.end_ns = e, c.pid = 483, c.tid = 483, c.ext = ext;
	assert_int_equal(ctrace_add_hcall(t, &c), 0);
}

static void add_range(struct kp_ctrace *t, const char *msg, uint64_t s, uint64_t e, uint64_t ext)
{
	struct kp_hcall c;
	memset(&c, 0, sizeof(c));
	c.kind = HC_NVTX_PUSH;
	c.name = msg;
	add_call(t, c, s, e, ext);
}

/* Write @t, load, link and analyze it by op. */
static void analyze_ctrace(struct kp_ctrace *t, struct kp_trace *tr, struct kp_report *r,
			   struct kp_devdb *db)
{
	char path[64];
	snprintf(path, sizeof(path), "/tmp/kprof-test-hostops-%d.json", (int)getpid());
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(ctrace_write(t, f, "t"), 0);
	fclose(f);
	struct kp_diag d;
	memset(tr, 0, sizeof(*tr));
	struct kp_load_opts lo = { 0 };
	assert_int_equal(trace_load(tr, path, &lo, &d), 0);
	link_trace(tr);
	memset(db, 0, sizeof(*db));
	assert_int_equal(devdb_load_builtin(db, &d), 0);
	struct kp_analyze_opts o = { .group = GROUP_OP, .db = db };
	memset(r, 0, sizeof(*r));
	assert_int_equal(analyze_run(tr, &o, r), 0);
	unlink(path);
}

/* Warnings of @kind in @r, and that the first holds @text. */
static long count_warnings(const struct kp_report *r, const char *kind, const char *text)
{
	for (int i = 0; i < r->warn.nkinds; i++)
		if (!strcmp(r->warn.k[i].kind, kind)) {
			assert_true(r->warn.k[i].nshown > 0);
			assert_non_null(strstr(r->warn.k[i].shown[0], text));
			return r->warn.k[i].count;
		}
	return 0;
}

static const struct kp_row *row_named(const struct kp_report *r, const char *name)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (!strcmp(r->rows[i].name, name))
			return &r->rows[i];
	return NULL;
}

/* @t analyzed by op; row @name's FLOPs and bytes (-1 unknown); fails when there is no row */
static void row_figures(struct kp_ctrace *t, const char *name, int64_t *flops, int64_t *bytes)
{
	struct kp_trace tr;
	struct kp_report r;
	struct kp_devdb db;
	analyze_ctrace(t, &tr, &r, &db);
	const struct kp_row *f = row_named(&r, name);
	assert_non_null(f);
	*flops = f->flops, *bytes = f->bytes;
	analyze_free(&r);
	devdb_free(&db);
	trace_free(&tr);
}

static void library_ops_get_closed_form_flops(void **state)
{
	(void)state;
	struct kp_ctrace t;
	ctrace_init(&t);
	struct kp_hostops_stats st;
	add_call(&t,
		 gemm("cublasGemmEx", 128, 256, 512, 1, R16BF, R16BF, C32F,
		      HCF_BETA_KNOWN | HCF_BETA_ZERO),
		 T0 + 1000, T0 + 9000, 1);
	add_kernel(&t, 10, T0 + 2000, 1, "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_NNT");
	add_call(&t,
		 gemm("cublasGemmStridedBatchedEx", 64, 32, 16, 8, R16BF, R16BF, C32F,
		      HCF_BETA_KNOWN | HCF_BETA_ZERO),
		 T0 + 20000, T0 + 29000, 2);
	add_kernel(&t, 11, T0 + 21000, 2, "nvjet_sm90_tst_64x32_h_bz_NNT");
	/* a GEMM that failed launches nothing, and a call without a shape keeps its kernel */
	add_call(&t, gemm("cublasLtMatmul", -1, -1, -1, 1, R16BF, R16BF, C32F, 0), T0 + 40000,
		 T0 + 49000, 3);
	add_kernel(&t, 12, T0 + 41000, 3, "nvjet_lt");
	assert_int_equal(hostops_emit(&t, &st, NULL), 0);
	assert_int_equal(st.gemms, 3);
	assert_int_equal(st.gemms_unshaped, 1);
	struct kp_trace tr;
	struct kp_report r;
	struct kp_devdb db;
	analyze_ctrace(&t, &tr, &r, &db);
	assert_int_equal(r.tot.unlinked, 0);
	const struct kp_row *mm = row_named(&r, "aten::mm"), *bmm = row_named(&r, "aten::bmm");
	assert_non_null(mm);
	assert_non_null(bmm);
	assert_int_equal(mm->flops, 2ll * 128 * 256 * 512);
	/* bytes: A, B read once, C written once, bf16 */
	assert_int_equal(mm->bytes, 2ll * (256 * 512 + 512 * 128 + 256 * 128));
	assert_int_equal(bmm->flops, 2ll * 8 * 64 * 32 * 16);
	assert_non_null(row_named(&r, "cublasLtMatmul"));
	assert_int_equal(r.tot.flops, 2ll * 128 * 256 * 512 + 2ll * 8 * 64 * 32 * 16);
	analyze_free(&r);
	devdb_free(&db);
	trace_free(&tr);
	ctrace_free(&t);
}

static void emit_nvtx_messages_parse(void **state)
{
	(void)state;
	struct kp_nvtx_msg m;
	char why[128];
	assert_int_equal(
		nvtxmsg_parse("aten::mm, seq = 12, op_id = 7, sizes = [[4096, 4096], [4096, 4096]]",
			      &m, why, sizeof(why)),
		0);
	assert_string_equal(m.name, "aten::mm");
	assert_int_equal(m.seq, 12);
	assert_int_equal(m.op_id, 7);
	assert_true(m.has_sizes);
	assert_int_equal(m.nslots, 2);
	assert_int_equal(m.slot[1].nd, 2);
	assert_int_equal(m.slot[1].d[1], 4096);
	/* observed torch 2.11 form with input_op_ids (doc/capture-any.md §2.4) */
	assert_int_equal(nvtxmsg_parse("aten::linear, seq = 0, op_id = 7, sizes = [[64, 512], [128, 512], []], "
				       "input_op_ids = [(1,0), (4,0), (0,-1)]",
				       &m, why, sizeof(why)),
			 0);
	assert_int_equal(m.nslots, 3);
	assert_int_equal(m.slot[2].nd, 0);
	assert_int_equal(m.ninput_ids, 3);
	assert_int_equal(nvtxmsg_parse("aten::randn, op_id = 1, sizes = [[], [], [], [], []], input_op_ids = "
				       "[(0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]",
				       &m, why, sizeof(why)),
			 0);
	assert_int_equal(m.seq, -1);
	assert_int_equal(m.nslots, 5);
	/* without record_shapes */
	assert_int_equal(nvtxmsg_parse("aten::mm, seq = 3, op_id = 9", &m, why, sizeof(why)), 0);
	assert_false(m.has_sizes);
	assert_int_equal(nvtxmsg_parse("aten::empty, sizes = []", &m, why, sizeof(why)), 0);
	assert_int_equal(m.nslots, 0);
	assert_false(m.label);
	/* a record_function label (torch 2.11 Dynamo): its ", " is part of the name */
	assert_int_equal(nvtxmsg_parse("entire_frame_compile_data: fn_name=_compile.compile_inner, "
				       "compile_id=0/0, op_id = 7",
				       &m, why, sizeof(why)),
			 0);
	assert_string_equal(m.name, "entire_frame_compile_data: fn_name=_compile.compile_inner, "
				    "compile_id=0/0");
	assert_true(m.label);
	assert_int_equal(m.op_id, 7);
	assert_int_equal(nvtxmsg_parse("Torch-Compiled Region: 0/0, op_id = 12", &m, why,
				       sizeof(why)),
			 0);
	assert_true(m.label);
	/* Inductor's launch of a Triton kernel: an op named after the kernel */
	assert_int_equal(nvtxmsg_parse("triton_poi_fused__unsafe_view_add_5, op_id = 1090, sizes = "
				       "[[4, 512, 1024], [4, 512, 1024], []]",
				       &m, why, sizeof(why)),
			 0);
	assert_string_equal(m.name, "triton_poi_fused__unsafe_view_add_5");
	assert_false(m.label);
	assert_int_equal(m.nslots, 3);
	/* kprof's op observer: a type per input (capture/intercept/python/kprof_torch_obs.cpp) */
	assert_int_equal(nvtxmsg_parse("aten::addmm, seq = 5, sizes = [[128], [4, 64], [64, 128], "
				       "[], []], dtypes = [c10::BFloat16, c10::BFloat16, c10::BFloat16, , ]",
				       &m, why, sizeof(why)),
			 0);
	assert_int_equal(m.seq, 5);
	assert_int_equal(m.op_id, -1);
	assert_int_equal(m.nslots, 5);
	assert_int_equal(m.ndtypes, 5);
	assert_string_equal(m.dtype[0], "c10::BFloat16");
	assert_string_equal(m.dtype[2], "c10::BFloat16");
	assert_string_equal(m.dtype[3], "");
	assert_string_equal(m.dtype[4], "");
	assert_int_equal(nvtxmsg_parse("aten::cat, sizes = [[2, 3], [2, 5], []], dtypes = [long int, "
				       "c10::complex<c10::Half>, ]",
				       &m, why, sizeof(why)),
			 0);
	assert_string_equal(m.dtype[0], "long int");
	assert_string_equal(m.dtype[1], "c10::complex<c10::Half>");
	assert_int_equal(nvtxmsg_parse("aten::empty, sizes = [], dtypes = []", &m, why, sizeof(why)),
			 0);
	assert_int_equal(m.ndtypes, 0);
	assert_int_equal(nvtxmsg_parse("aten::sum, seq = 3, sizes = [[64, 64], [], [], []], dtypes = "
				       "[float, , , ], concrete = [\"\", \"[1]\", \"False\", \"6\"]",
				       &m, why, sizeof(why)),
			 0);
	assert_int_equal(m.nconc, 4);
	assert_string_equal(m.conc[0], "");
	assert_string_equal(m.conc[1], "[1]");
	assert_string_equal(m.conc[2], "False");
	assert_string_equal(m.conc[3], "6");
	/* counts cleared by the next parse, whatever the texts hold */
	assert_int_equal(nvtxmsg_parse("aten::mm, seq = 3, op_id = 9", &m, why, sizeof(why)), 0);
	assert_int_equal(m.nconc, 0);
	assert_int_equal(m.ndtypes, 0);
	/* ordinary ranges */
	assert_int_equal(nvtxmsg_parse("forward", &m, why, sizeof(why)), 1);
	assert_int_equal(nvtxmsg_parse("layer 3, attention", &m, why, sizeof(why)), 1);
	assert_int_equal(nvtxmsg_parse(NULL, &m, why, sizeof(why)), 1);
	/* malformed: a reason, never a crash */
	static const char *const bad[] = {
		", seq = 1",
		"aten::mm, seq = x",
		"aten::mm, seq = 1, op_id = ",
		"aten::mm, sizes = [[4, 4], [4, 4]",
		"aten::mm, sizes = [[4, -4]]",
		"aten::mm, sizes = [[4 4]]",
		"aten::mm, sizes = [[4, 4]], input_op_ids = [(1,0), (2",
		"aten::mm, sizes = [[4, 4]], colour = red",
		"aten::mm, sizes = [[4, 4]],",
		"aten::mm, op_id = 7 , seq = 1x",
		"aten::mm, seq = 1, dtypes = [float], sizes = [[4]]",
		"aten::mm, sizes = [[4], [4]], dtypes = [float]",
		"aten::mm, sizes = [[4]], dtypes = [float, float]",
		"aten::mm, sizes = [[4]], dtypes = [float",
		"aten::mm, sizes = [[4]], dtypes = [[4]]",
		"aten::mm, sizes = [[4]], dtypes = [a_type_name_of_thirty_two_bytes_]",
		"aten::mm, seq = 1, concrete = [\"\"], sizes = [[4]]",
		"aten::mm, sizes = [[4], []], concrete = [\"\"]",
		"aten::mm, sizes = [[4]], concrete = [\"\", \"2\"]",
		"aten::mm, sizes = [[4]], concrete = [\"2]",
		"aten::mm, sizes = [[4]], concrete = [2]",
		"aten::mm, sizes = [[4]], concrete = [\"a\\\"b\"]",
		"aten::mm, sizes = [[4]], concrete = [\"0123456789012345678901234567890123456789012345678901234567890123\"]",
		/* a field twice (fuzz-nvtxmsg: the second sizes left the first one's types) */
		"x, sizes = [[]], dtypes = [ ], sizes = []",
		"aten::mm, seq = 1, seq = 2",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		assert_int_equal(nvtxmsg_parse(bad[i], &m, why, sizeof(why)), -1);
		assert_true(why[0] != '\0');
	}
	/* every prefix of a valid message: any answer, within bounds (ASan checks) */
	const char *full = "aten::bmm, seq = 4, op_id = 12, sizes = [[8, 64, 32], [8, 32, 16]], "
			   "input_op_ids = [(3,0), (11,0)], dtypes = [float, c10::Half]";
	char buf[256];
	for (size_t n = 0; n <= strlen(full); n++) {
		memcpy(buf, full, n);
		buf[n] = '\0';
		int rc = nvtxmsg_parse(buf, &m, why, sizeof(why));
		assert_true(rc >= -1 && rc <= 1);
	}
	/*
	 * Past the bounds (65 inputs, 9 dims), as emit_nvtx writes a _foreach op or a cat of
	 * many tensors: an op with its name, seq and op_id, its lists skipped whole (a quoted
	 * "]" or "(" inside them too), no sizes, no types, no texts
	 */
	char big[2048] = "aten::_foreach_add_, seq = 3, op_id = 9, sizes = [";
	for (int i = 0; i < 65; i++)
		strcat(big, i ? ", [4]" : "[4]");
	strcat(big, "], input_op_ids = [");
	for (int i = 0; i < 65; i++)
		strcat(big, i ? ", (1,0)" : "(1,0)");
	strcat(big, "]");
	assert_int_equal(nvtxmsg_parse(big, &m, why, sizeof(why)), 0);
	assert_string_equal(m.name, "aten::_foreach_add_");
	assert_true(m.seq == 3 && m.op_id == 9 && m.over && !m.label);
	assert_true(!m.has_sizes && m.nslots == 0 && m.ninput_ids == 0);
	char obs[4096] = "aten::cat, seq = 5, sizes = [[2, 2]";
	for (int i = 1; i < 65; i++)
		strcat(obs, ", [2, 2]");
	strcat(obs, "], dtypes = [float");
	for (int i = 1; i < 65; i++)
		strcat(obs, ", float");
	strcat(obs, "], concrete = [\"[1, (2]\"");
	for (int i = 1; i < 65; i++)
		strcat(obs, ", \"\"");
	strcat(obs, "]");
	assert_int_equal(nvtxmsg_parse(obs, &m, why, sizeof(why)), 0);
	assert_true(m.seq == 5 && m.over && !m.has_sizes && m.ndtypes == 0 && m.nconc == 0);
	assert_int_equal(nvtxmsg_parse("aten::view, seq = 2, sizes = [[1, 2, 3, 4, 5, 6, 7, 8, 9]], "
				       "dtypes = [float], concrete = [\"\"]",
				       &m, why, sizeof(why)),
			 0);
	assert_true(!strcmp(m.name, "aten::view") && m.seq == 2 && !m.has_sizes && m.ndtypes == 0);
	/* within the bounds nothing is skipped */
	assert_int_equal(nvtxmsg_parse("aten::mm, sizes = [[1, 2, 3, 4, 5, 6, 7, 8]]", &m, why,
				       sizeof(why)),
			 0);
	assert_true(!m.over && m.has_sizes && m.nslots == 1 && m.slot[0].nd == 8);
	/* 65 types for one input's sizes: malformed, not skipped */
	char types[1024] = "aten::mm, sizes = [[4]], dtypes = [float";
	for (int i = 1; i < 65; i++)
		strcat(types, ", float");
	strcat(types, "]");
	assert_int_equal(nvtxmsg_parse(types, &m, why, sizeof(why)), -1);
	/* a list past the bounds that does not end, or a bad field after one: malformed */
	char open_list[1024] = "aten::cat, sizes = [";
	for (int i = 0; i < 65; i++)
		strcat(open_list, i ? ", [1]" : "[1]");
	assert_int_equal(nvtxmsg_parse(open_list, &m, why, sizeof(why)), -1);
	strcat(open_list, "], colour = red");
	assert_int_equal(nvtxmsg_parse(open_list, &m, why, sizeof(why)), -1);
	assert_int_equal(nvtxmsg_parse("aten::cat, sizes = [[1, 2, 3, 4, 5, 6, 7, 8, 9]], concrete = [\"]",
				       &m, why, sizeof(why)),
			 -1);
}

static void nvtx_ops_enclosing_library_ops_count_once(void **state)
{
	(void)state;
	struct kp_ctrace t;
	ctrace_init(&t);
	struct kp_hostops_stats st;
	/* emit_nvtx: aten::linear > aten::mm (sizes) > cublasGemmEx > kernel */
	add_range(&t, "aten::linear, seq = 0, op_id = 7, sizes = [[256, 512], [128, 512], []]",
		  T0 + 500, T0 + 40000, 1);
	add_range(&t,
		  "aten::mm, seq = 0, op_id = 10, sizes = [[256, 512], [512, 128]], "
		  "input_op_ids = [(1,0), (8,0)]",
		  T0 + 800, T0 + 30000, 2);
	add_call(&t,
		 gemm("cublasGemmEx", 128, 256, 512, 1, R16BF, R16BF, C32F,
		      HCF_BETA_KNOWN | HCF_BETA_ZERO),
		 T0 + 1000, T0 + 9000, 3);
	add_kernel(&t, 10, T0 + 2000, 3, "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_NNT");
	/* an add with its dtype from the kernel, and a plain range around everything */
	add_range(&t, "aten::add, seq = 1, op_id = 11, sizes = [[256, 128], [256, 128], []]",
		  T0 + 50000, T0 + 59000, 4);
	add_kernel(&t, 11, T0 + 51000, 0,
		   "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>>()");
	add_range(&t, "block 0", T0 + 100, T0 + 90000, 5);
	/* a matmul op without shapes stays an annotation: its library op counts */
	add_range(&t, "aten::mm, seq = 2, op_id = 12", T0 + 60000, T0 + 80000, 6);
	add_call(&t,
		 gemm("cublasGemmEx", 64, 64, 64, 1, R16BF, R16BF, C32F,
		      HCF_BETA_KNOWN | HCF_BETA_ZERO),
		 T0 + 61000, T0 + 62000, 7);
	add_kernel(&t, 12, T0 + 61100, 7, "nvjet_small");
	/* SDPA whose kernel names no dtype: its inputs take the dtype of their producer (op 11) */
	add_range(&t,
		  "aten::_scaled_dot_product_cudnn_attention, seq = 3, op_id = 30, sizes = "
		  "[[1, 2, 64, 32], [1, 2, 64, 32], [1, 2, 64, 32], [], [], [], [], []], "
		  "input_op_ids = [(11,0), (11,0), (11,0), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]",
		  T0 + 82000, T0 + 84000, 10);
	add_kernel(&t, 13, T0 + 82500, 0,
		   "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16");
	/* malformed and never-closed ranges */
	add_range(&t, "aten::mm, sizes = [[4, 4", T0 + 85000, T0 + 86000, 8);
	struct kp_hcall open;
	memset(&open, 0, sizeof(open));
	open.kind = HC_NVTX_START;
	open.flags = HCF_OPEN;
	open.name = "never closed";
	add_call(&t, open, T0 + 87000, 0, 9);
	FILE *w = tmpfile();
	assert_int_equal(hostops_emit(&t, &st, w), 0);
	assert_int_equal(st.nvtx_ops, 4);
	assert_int_equal(st.nvtx_ranges, 7);
	assert_int_equal(st.nvtx_open, 1);
	assert_int_equal(st.nvtx_malformed, 1);
	char line[512] = "";
	rewind(w);
	assert_non_null(fgets(line, sizeof(line), w));
	assert_non_null(
		strstr(line, "kprof: warning: NVTX range 'aten::mm, sizes = [[4, 4': sizes:"));
	fclose(w);
	struct kp_trace tr;
	struct kp_report r;
	struct kp_devdb db;
	analyze_ctrace(&t, &tr, &r, &db);
	/* the GEMM kernel is counted under the emit_nvtx aten::mm, once */
	assert_int_equal(r.tot.unlinked, 0);
	const struct kp_row *sdpa = row_named(&r, "aten::_scaled_dot_product_cudnn_attention");
	assert_non_null(sdpa);
	assert_string_equal(sdpa->dtype, "bf16");
	/*
	 * emit_nvtx records no scalar arguments and cuDNN's kernel names do not say is_causal:
	 * dense FLOPs, 2*B*H*(D+Dv)*Sq*Sk, with the assumption in a warning
	 */
	assert_int_equal(sdpa->flops, 2ll * 1 * 2 * (32 + 32) * 64 * 64);
	assert_int_equal(r.tot.flops, 2ll * 256 * 512 * 128 + 2ll * 64 * 64 * 64 + sdpa->flops);
	assert_int_equal(count_warnings(&r, "attention ops without is_causal",
					"FLOPs assume is_causal=False"),
			 1);
	const struct kp_row *mm = row_named(&r, "aten::mm");
	assert_non_null(mm);
	assert_int_equal(mm->calls, 2);
	assert_string_equal(mm->dtype, "bf16");
	const struct kp_row *add = row_named(&r, "aten::add");
	assert_non_null(add);
	assert_string_equal(add->dtype, "bf16");
	assert_int_equal(add->bytes, 3ll * 256 * 128 * 2);
	int kprof_src = 0;
	for (size_t i = 0; i < tr.nops; i++)
		kprof_src += !strcmp(tr.ops[i].name, "aten::mm");
	assert_int_equal(kprof_src, 3); /* NVTX mm with sizes + two library mms */
	analyze_free(&r);
	devdb_free(&db);
	trace_free(&tr);
	ctrace_free(&t);
}

/*
 * emit_nvtx SDPA on the flash backend: is_causal is not recorded, but the flash kernels'
 * template arguments say it, forward and backward; the FLOPs are those a torch.profiler
 * trace (is_causal "True") gives, with no warning.
 */
static void flash_kernel_names_give_emit_nvtx_sdpa_its_causality(void **state)
{
	(void)state;
	struct kp_ctrace t;
	ctrace_init(&t);
	struct kp_hostops_stats st;
	add_range(&t,
		  "aten::_scaled_dot_product_flash_attention, seq = 3, op_id = 30, sizes = "
		  "[[4, 16, 512, 64], [4, 16, 512, 64], [4, 16, 512, 64], [], [], [], []]",
		  T0 + 1000, T0 + 9000, 1);
	add_range(&t,
		  "aten::_flash_attention_forward, op_id = 31, sizes = [[4, 512, 16, 64], "
		  "[4, 512, 16, 64], [4, 512, 16, 64], [], [], [], [], [], [], [], [], [], []]",
		  T0 + 2000, T0 + 8000, 2);
	add_kernel(&t, 20, T0 + 3000, 0,
		   "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, "
		   "false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, "
		   "false, true, false, true, true, false>(pytorch_flash::Flash_fwd_params)");
	add_range(&t,
		  "aten::_scaled_dot_product_flash_attention_backward, seq = 3, op_id = 40, sizes = "
		  "[[4, 16, 512, 64], [4, 16, 512, 64], [4, 16, 512, 64], [4, 16, 512, 64], "
		  "[4, 16, 512, 64], [4, 16, 512], [], [], [], [], [], [], [], [], []]",
		  T0 + 20000, T0 + 29000, 3);
	add_kernel(&t, 21, T0 + 21000, 0,
		   "void pytorch_flash::flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<64, 128, "
		   "128, 8, 4, 4, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, "
		   "8, cutlass::bfloat16_t> > >(pytorch_flash::Flash_bwd_params)");
	add_kernel(
		&t, 22, T0 + 22000, 0,
		"void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<"
		"64, 128, 128, 8, 4, 4, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, "
		"128, 8, cutlass::bfloat16_t> >, false, true, false, true, true>(pytorch_flash::Flash_bwd_params)");
	/* a non-causal flash call beside them */
	add_range(&t,
		  "aten::_scaled_dot_product_flash_attention, seq = 4, op_id = 50, sizes = "
		  "[[4, 16, 512, 64], [4, 16, 512, 64], [4, 16, 512, 64], [], [], [], []]",
		  T0 + 40000, T0 + 49000, 4);
	add_kernel(&t, 23, T0 + 41000, 0,
		   "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, "
		   "false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, "
		   "false, false, false, true, true, false>(pytorch_flash::Flash_fwd_params)");
	assert_int_equal(hostops_emit(&t, &st, NULL), 0);
	struct kp_trace tr;
	struct kp_report r;
	struct kp_devdb db;
	analyze_ctrace(&t, &tr, &r, &db);
	/* causal pairs of s_q = s_k = 512: 512*513/2 (top-left = bottom-right when square) */
	int64_t pairs = 512ll * 513 / 2, dense = 512ll * 512;
	int64_t fwd = 2ll * 4 * 16 * (64 + 64), bwd = 2ll * 4 * 16 * (3 * 64 + 2 * 64);
	const struct kp_row *f = row_named(&r, "aten::_scaled_dot_product_flash_attention");
	const struct kp_row *b = row_named(&r,
					   "aten::_scaled_dot_product_flash_attention_backward");
	assert_non_null(f);
	assert_non_null(b);
	assert_int_equal(f->calls, 2);
	assert_int_equal(f->flops, fwd * pairs + fwd * dense);
	assert_int_equal(b->flops, bwd * pairs);
	assert_int_equal(count_warnings(&r, "attention ops without is_causal", ""), 0);
	analyze_free(&r);
	devdb_free(&db);
	trace_free(&tr);
	ctrace_free(&t);
}

/* A kernel replayed by graph launch @corr from node @node. */
static void add_graph_kernel(struct kp_ctrace *t, uint32_t corr, uint64_t node, uint64_t start)
{
	struct kp_rec k = { .kind = REC_KERNEL,
			    .start_ns = start,
			    .end_ns = start + 8000,
			    .corr = corr,
			    .stream = 9,
			    .grid = { 1, 1, 1 },
			    .block = { 128, 1, 1 },
			    .graph_id = 3,
			    .graph_node_id = node,
			    .name = ctrace_intern(t, "nvjet_graph", 11) };
	ctrace_add_rec(t, &k);
}

static void graph_replays_count_the_capturing_op_once_each(void **state)
{
	(void)state;
	struct kp_ctrace t;
	ctrace_init(&t);
	/* captured: cublasGemmEx (ext 5) created node 100; instantiation cloned it as 200 */
	add_call(&t,
		 gemm("cublasGemmEx", 128, 256, 512, 1, R16BF, R16BF, C32F,
		      HCF_BETA_KNOWN | HCF_BETA_ZERO),
		 T0 + 1000, T0 + 9000, 5);
	assert_int_equal(ctrace_add_gnode(&t, 100, 5, 0), 0);
	assert_int_equal(ctrace_add_gnode(&t, 200, 0, 100), 0);
	assert_int_equal(ctrace_add_gnode(&t, 201, 0, 999), 0); /* clone of an unknown node */
	/* two replays: cudaGraphLaunch on thread 483, each running the clone's kernel */
	for (int i = 0; i < 2; i++) {
		uint64_t s0 = T0 + 100000 + (uint64_t)i * 100000;
		struct kp_rec api = { .kind = REC_RUNTIME,
				      .start_ns = s0,
				      .end_ns = s0 + 4000,
				      .corr = 50 + (uint32_t)i,
				      .cbid = 311,
				      .pid = 483,
				      .tid = 483,
				      .name = ctrace_intern(&t, "cudaGraphLaunch", 15) };
		ctrace_add_rec(&t, &api);
		add_graph_kernel(&t, 50 + (uint32_t)i, 200, s0 + 10000);
		add_graph_kernel(&t, 50 + (uint32_t)i, 201, s0 + 20000);
	}
	assert_int_equal(ctrace_resolve_gnodes(&t), 2);
	struct kp_hostops_stats st;
	assert_int_equal(hostops_emit(&t, &st, NULL), 0);
	assert_int_equal(st.replay_ops, 2);
	assert_int_equal(st.replay_kernels, 2);
	struct kp_trace tr;
	struct kp_report r;
	struct kp_devdb db;
	analyze_ctrace(&t, &tr, &r, &db);
	/* the kernels of node 201 stay unlinked; those of 200 count 2*m*n*k per replay */
	assert_int_equal(r.tot.unlinked, 2);
	assert_int_equal(r.tot.flops, 2 * (2ll * 128 * 256 * 512));
	const struct kp_row *mm = row_named(&r, "aten::mm");
	assert_non_null(mm);
	assert_int_equal(mm->calls, 2);
	assert_int_equal(mm->kernels, 2);
	analyze_free(&r);
	devdb_free(&db);
	trace_free(&tr);
	ctrace_free(&t);
}

/* Whether @args ends with @tail. */
static int ends_with(const char *args, const char *tail)
{
	size_t n = strlen(args), m = strlen(tail);
	return n >= m && !strcmp(args + n - m, tail);
}

/*
 * A replay running kernels of two capturing ops splits its launch's time in two slices, one
 * op each; a replay without its launch record sits at its first kernel, on the op's thread.
 */
/* An NVTX push range on @pid/@tid. */
static void add_range_on(struct kp_ctrace *t, const char *msg, uint64_t s, uint64_t e, uint32_t pid,
			 uint32_t tid)
{
	struct kp_hcall c;
	memset(&c, 0, sizeof(c));
	c.kind = HC_NVTX_PUSH;
	c.name = msg;
	c.start_ns = s, c.end_ns = e, c.pid = pid, c.tid = tid;
	assert_int_equal(ctrace_add_hcall(t, &c), 0);
}

/* The written line of the event named @name (the first after @from), or NULL; static. */
static const char *event_line(const char *text, const char *name, const char *from)
{
	static char line[2048];
	char key[300];
	snprintf(key, sizeof(key), "\"name\":\"%s\"", name);
	const char *p = strstr(from ? strstr(text, from) : text, key);
	if (!p)
		return NULL;
	const char *a = p, *b = strchr(p, '\n');
	while (a > text && a[-1] != '\n')
		a--;
	size_t n = b ? (size_t)(b - a) : strlen(a);
	snprintf(line, sizeof(line), "%.*s", (int)n, a);
	return line;
}

static char *read_all(FILE *f)
{
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	return buf;
}

/*
 * kprof's torch hook: module ranges become the python_function events torch.profiler's Python
 * tracer writes (ids by start over the trace, parent = enclosing module range on the thread,
 * module id = _N), and emit_nvtx ops with a seq get "Fwd thread id" and the fwdbwd flows that
 * tie an autograd node to the latest forward op of its seq in its process
 * (doc/attribution.md §2.1, §2.4).
 */
static void torch_hook_ranges_become_the_python_tree_and_fwdbwd_links(void **state)
{
	(void)state;
	struct kp_ctrace t;
	ctrace_init(&t);
	/* process 483: forward on thread 483, autograd on 484 */
	add_range_on(&t, "kprof: nn.Module: M_0", T0 + 100, T0 + 10000, 483, 483);
	add_range_on(&t, "kprof: nn.Module: Linear_0", T0 + 200, T0 + 3000, 483, 483);
	add_range_on(&t, "aten::linear, seq = 5, op_id = 1, sizes = [[4, 8], [16, 8], [16]]",
		     T0 + 300, T0 + 2900, 483, 483);
	add_range_on(&t, "aten::addmm, seq = 5, op_id = 2, sizes = [[16], [4, 8], [8, 16], [], []]",
		     T0 + 400, T0 + 2800, 483, 483);
	add_range_on(&t, "kprof: nn.Module: Linear_1", T0 + 4000, T0 + 9000, 483, 483);
	add_range_on(&t, "aten::relu, seq = 6, op_id = 3, sizes = [[4, 16]]", T0 + 4100,
		     T0 + 8000, 483, 483);
	/* a module range on another thread while M_0 is open: no parent across threads */
	add_range_on(&t, "kprof: nn.Module: Dropout_0", T0 + 5000, T0 + 6000, 483, 484);
	add_range_on(&t, "ReluBackward0, seq = 6, op_id = 9, sizes = [[4, 16], [4, 16]]",
		     T0 + 15000, T0 + 18000, 483, 484);
	add_range_on(&t, "AddmmBackward0, seq = 5, op_id = 10, sizes = [[4, 16]]", T0 + 20000,
		     T0 + 25000, 483, 484);
	add_range_on(&t, "aten::mm, op_id = 11, sizes = [[4, 16], [16, 8]]", T0 + 21000,
		     T0 + 22000, 483, 484);
	/* process 900 reuses seq 5: its node pairs with its own forward op */
	add_range_on(&t, "aten::mul, seq = 5, op_id = 1, sizes = [[2], [2]]", T0 + 30000,
		     T0 + 31000, 900, 900);
	add_range_on(&t, "MulBackward0, seq = 5, op_id = 4, sizes = [[2]]", T0 + 32000,
		     T0 + 33000, 900, 901);
	/* a module range still open at exit is not written */
	struct kp_hcall open;
	memset(&open, 0, sizeof(open));
	open.kind = HC_NVTX_PUSH;
	open.flags = HCF_OPEN;
	open.name = "kprof: nn.Module: M_1";
	add_call(&t, open, T0 + 40000, 0, 0);
	add_kernel(&t, 20, T0 + 500, 0, "void at::native::elementwise_kernel<float>()");

	struct kp_hostops_stats st;
	assert_int_equal(hostops_emit(&t, &st, NULL), 0);
	assert_int_equal(st.module_ranges, 4);
	assert_int_equal(st.nvtx_open, 1);
	assert_int_equal(st.bwd_ops, 3);
	assert_int_equal(st.bwd_linked, 3);
	assert_int_equal(t.nflows, 6);

	FILE *f = tmpfile();
	assert_non_null(f);
	assert_int_equal(ctrace_write(&t, f, "t"), 0);
	char *text = read_all(f);
	fclose(f);
	const char *l;
	/* ids 1-4 by start; Linear_0 and Linear_1 in M_0, Dropout_0 alone on its thread */
	assert_non_null(l = event_line(text, "nn.Module: M_0", NULL));
	assert_non_null(strstr(l, "\"cat\":\"python_function\""));
	assert_non_null(strstr(l, "\"pid\":483,\"tid\":483,\"ts\":0.100,\"dur\":9.900,"
				  "\"args\":{\"Python parent id\":null,\"Python id\":1,"
				  "\"Python module id\":0}}"));
	assert_non_null(l = event_line(text, "nn.Module: Linear_0", NULL));
	assert_non_null(strstr(l, "{\"Python parent id\":1,\"Python id\":2,\"Python module id\":0}"));
	assert_non_null(l = event_line(text, "nn.Module: Linear_1", NULL));
	assert_non_null(strstr(l, "{\"Python parent id\":1,\"Python id\":3,\"Python module id\":1}"));
	assert_non_null(l = event_line(text, "nn.Module: Dropout_0", NULL));
	assert_non_null(strstr(l, "\"tid\":484,"));
	assert_non_null(strstr(l, "{\"Python parent id\":null,\"Python id\":4,"));
	assert_null(event_line(text, "nn.Module: M_1", NULL));
	assert_null(strstr(text, "kprof: nn.Module"));
	/* forward ops: Fwd thread id 0; nodes: their forward thread's number (1, then 2) */
	/* right after External id: the loader looks for it there only (trace-decode.c) */
	assert_non_null(l = event_line(text, "aten::linear", NULL));
	const char *ext = strstr(l, "\"args\":{\"External id\":");
	assert_non_null(ext);
	ext += strlen("\"args\":{\"External id\":");
	while (*ext >= '0' && *ext <= '9')
		ext++;
	assert_memory_equal(ext, ",\"Sequence number\":5,", 21);
	assert_non_null(strstr(l, "\"Fwd thread id\":0}"));
	assert_non_null(l = event_line(text, "aten::mm", NULL));
	assert_null(strstr(l, "Fwd thread id"));
	assert_non_null(l = event_line(text, "AddmmBackward0", NULL));
	assert_non_null(strstr(l, "\"cat\":\"cpu_op\""));
	assert_non_null(strstr(l, "\"Sequence number\":5,"));
	assert_non_null(strstr(l, "\"Fwd thread id\":1}"));
	assert_non_null(l = event_line(text, "MulBackward0", NULL));
	assert_non_null(strstr(l, "\"Fwd thread id\":2}"));
	/* flows: from the latest forward op of the seq (addmm, not linear) to the node */
	char s5[200], f5[200];
	unsigned long long id1 = 1ull << 48 | 5, id2 = 2ull << 48 | 5, id6 = 1ull << 48 | 6;
	snprintf(s5, sizeof(s5),
		 "{\"ph\":\"s\",\"id\":%llu,\"pid\":483,\"tid\":483,\"ts\":0.400,"
		 "\"cat\":\"fwdbwd\",\"name\":\"fwdbwd\"}",
		 id1);
	snprintf(f5, sizeof(f5),
		 "{\"ph\":\"f\",\"id\":%llu,\"pid\":483,\"tid\":484,\"ts\":20.000,"
		 "\"cat\":\"fwdbwd\",\"name\":\"fwdbwd\",\"bp\":\"e\"}",
		 id1);
	assert_non_null(strstr(text, s5));
	assert_non_null(strstr(text, f5));
	snprintf(s5, sizeof(s5), "{\"ph\":\"s\",\"id\":%llu,\"pid\":483,\"tid\":483,\"ts\":4.100,",
		 id6);
	assert_non_null(strstr(text, s5));
	snprintf(s5, sizeof(s5), "{\"ph\":\"s\",\"id\":%llu,\"pid\":900,\"tid\":900,\"ts\":30.000,",
		 id2);
	snprintf(f5, sizeof(f5), "{\"ph\":\"f\",\"id\":%llu,\"pid\":900,\"tid\":901,\"ts\":32.000,",
		 id2);
	assert_non_null(strstr(text, s5));
	assert_non_null(strstr(text, f5));
	free(text);
	/* the trace loads and links: the kernel is under aten::addmm */
	struct kp_trace tr;
	struct kp_report r;
	struct kp_devdb db;
	analyze_ctrace(&t, &tr, &r, &db);
	assert_int_equal(r.tot.unlinked, 0);
	assert_non_null(row_named(&r, "aten::addmm"));
	analyze_free(&r);
	devdb_free(&db);
	trace_free(&tr);
	ctrace_free(&t);
}

/* Autograd nodes are told from ops by name: *Backward[N] and torch::autograd::* */
static void emit_nvtx_backward_nodes_by_name(void **state)
{
	(void)state;
	static const struct {
		const char *msg;
		int bwd;
	} cases[] = {
		{ "AddmmBackward0, seq = 1, op_id = 2, sizes = []", 1 },
		{ "MyFunctionBackward, seq = 1, op_id = 2, sizes = []", 1 },
		{ "CompiledFunctionBackward, seq = 1, op_id = 2, sizes = []", 1 },
		{ "torch::autograd::CopySlices, seq = 1, op_id = 2, sizes = []", 1 },
		{ "aten::convolution_backward, seq = 1, op_id = 2, sizes = []", 0 },
		{ "aten::add, seq = 1, op_id = 2, sizes = []", 0 },
		{ "Backward, seq = 1, op_id = 2, sizes = []", 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kp_ctrace t;
		ctrace_init(&t);
		add_range_on(&t, cases[i].msg, T0 + 100, T0 + 200, 1, 1);
		struct kp_hostops_stats st;
		assert_int_equal(hostops_emit(&t, &st, NULL), 0);
		if (st.bwd_ops != (size_t)cases[i].bwd)
			fail_msg("%s: bwd_ops %zu", cases[i].msg, st.bwd_ops);
		assert_non_null(strstr(t.spans[0].args, cases[i].bwd ? "\"Fwd thread id\":1"
								      : "\"Fwd thread id\":0"));
		ctrace_free(&t);
	}
}

static void graph_replays_slice_the_launch_between_their_ops(void **state)
{
	(void)state;
	struct kp_ctrace t;
	ctrace_init(&t);
	struct kp_hcall g = gemm("cublasGemmEx", 128, 256, 512, 1, R16BF, R16BF, C32F,
				 HCF_BETA_KNOWN | HCF_BETA_ZERO);
	add_call(&t, g, T0 + 1000, T0 + 9000, 5);
	add_call(&t, g, T0 + 11000, T0 + 19000, 6);
	assert_int_equal(ctrace_add_gnode(&t, 100, 5, 0), 0);
	assert_int_equal(ctrace_add_gnode(&t, 101, 6, 0), 0);
	assert_int_equal(ctrace_add_gnode(&t, 200, 0, 100), 0);
	assert_int_equal(ctrace_add_gnode(&t, 201, 0, 101), 0);
	uint64_t s0 = T0 + 100000;
	struct kp_rec api = { .kind = REC_RUNTIME,
			      .start_ns = s0,
			      .end_ns = s0 + 4000,
			      .corr = 50,
			      .cbid = 311,
			      .pid = 77,
			      .tid = 78,
			      .name = ctrace_intern(&t, "cudaGraphLaunch", 15) };
	ctrace_add_rec(&t, &api);
	add_graph_kernel(&t, 50, 201, s0 + 20000); /* replay order is by op, then start */
	add_graph_kernel(&t, 50, 200, s0 + 30000);
	add_graph_kernel(&t, 70, 200, T0 + 300000); /* no launch record for corr 70 */
	assert_int_equal(ctrace_resolve_gnodes(&t), 3);
	struct kp_hostops_stats st;
	assert_int_equal(hostops_emit(&t, &st, NULL), 0);
	assert_int_equal(st.replay_ops, 3);
	assert_int_equal(st.replay_kernels, 3);
	assert_int_equal(t.nspans, 5);
	const struct kp_span *a = &t.spans[2], *b = &t.spans[3], *c = &t.spans[4];
	assert_int_equal(a->start_ns, s0);
	assert_int_equal(a->end_ns, s0 + 1999);
	assert_int_equal(b->start_ns, s0 + 2000);
	assert_int_equal(b->end_ns, s0 + 3999);
	assert_int_equal(a->pid, 77);
	assert_int_equal(a->tid, 78 + HOSTOPS_REPLAY_TID);
	assert_int_equal(b->tid, 78 + HOSTOPS_REPLAY_TID);
	assert_int_equal(c->start_ns, T0 + 300000);
	assert_int_equal(c->end_ns, T0 + 300000);
	assert_int_equal(c->pid, 483);
	assert_int_equal(c->tid, 483 + HOSTOPS_REPLAY_TID);
	/* new External ids above every one in use, in replay order */
	assert_int_equal(a->ext, 7);
	assert_int_equal(b->ext, 8);
	assert_int_equal(c->ext, 9);
	for (int i = 2; i < 5; i++) {
		assert_string_equal(t.spans[i].cat, "cpu_op");
		assert_string_equal(t.spans[i].name, "aten::mm");
		assert_true(ends_with(t.spans[i].args, i == 3 ? ",\"kprof graph replay of\":6"
							      : ",\"kprof graph replay of\":5"));
	}
	/* each kernel relinked to its replay's op */
	uint64_t want[] = { 8, 7, 9 };
	for (size_t i = 0, k = 0; i < t.nrecs; i++)
		if (t.recs[i].kind == REC_KERNEL)
			assert_int_equal(t.recs[i].gext, want[k++]);
	ctrace_free(&t);
}

/*
 * torch.compile(mode="reduce-overhead") under emit_nvtx: Inductor wraps each Triton launch in
 * _RecordFunctionFast(kernel name), so the node the launch creates during the CUDA-graph
 * recording belongs to an op named after the kernel; record_function labels around it
 * (names with a space) are annotations, never the op a kernel is counted under.
 */
static void triton_launch_ranges_own_their_replayed_kernels(void **state)
{
	(void)state;
	struct kp_ctrace t;
	ctrace_init(&t);
	add_range(&t, "Torch-Compiled Region: 0/0, op_id = 3", T0 + 100, T0 + 60000, 1);
	add_range(&t,
		  "entire_frame_compile_data: fn_name=_compile.compile_inner, compile_id=0/0, "
		  "op_id = 4",
		  T0 + 200, T0 + 50000, 2);
	add_range(&t,
		  "triton_poi_fused__unsafe_view_add_5, op_id = 1090, sizes = "
		  "[[4, 512, 1024], [4, 512, 1024], []]",
		  T0 + 1000, T0 + 9000, 3);
	/* the launch during capture created node 300, instantiation cloned it as 400 */
	assert_int_equal(ctrace_add_gnode(&t, 300, 3, 0), 0);
	assert_int_equal(ctrace_add_gnode(&t, 400, 0, 300), 0);
	/* a node created inside the label only: it names the label */
	assert_int_equal(ctrace_add_gnode(&t, 301, 2, 0), 0);
	assert_int_equal(ctrace_add_gnode(&t, 401, 0, 301), 0);
	for (int i = 0; i < 3; i++) {
		uint64_t s0 = T0 + 100000 + (uint64_t)i * 100000;
		struct kp_rec api = { .kind = REC_RUNTIME,
				      .start_ns = s0,
				      .end_ns = s0 + 4000,
				      .corr = 60 + (uint32_t)i,
				      .cbid = 311,
				      .pid = 483,
				      .tid = 483,
				      .name = ctrace_intern(&t, "cudaGraphLaunch", 15) };
		ctrace_add_rec(&t, &api);
		add_graph_kernel(&t, 60 + (uint32_t)i, 400, s0 + 10000);
		add_graph_kernel(&t, 60 + (uint32_t)i, 401, s0 + 20000);
	}
	assert_int_equal(ctrace_resolve_gnodes(&t), 6);
	struct kp_hostops_stats st;
	FILE *w = tmpfile();
	assert_int_equal(hostops_emit(&t, &st, w), 0);
	assert_int_equal(ftell(w), 0); /* labels with ", " are not malformed messages */
	fclose(w);
	assert_int_equal(st.nvtx_ranges, 3);
	assert_int_equal(st.nvtx_ops, 1);
	assert_int_equal(st.nvtx_malformed, 0);
	/* one replay op per launch for the Triton op; the label is no op, so none for it */
	assert_int_equal(st.replay_ops, 3);
	assert_int_equal(st.replay_kernels, 3);
	int labels = 0;
	for (size_t i = 0; i < t.nspans; i++)
		if (!strcmp(t.spans[i].cat, "user_annotation"))
			labels += !strcmp(t.spans[i].name, "Torch-Compiled Region: 0/0") ||
				  !strcmp(t.spans[i].name,
					  "entire_frame_compile_data: fn_name="
					  "_compile.compile_inner, compile_id=0/0");
	assert_int_equal(labels, 2);
	struct kp_trace tr;
	struct kp_report r;
	struct kp_devdb db;
	analyze_ctrace(&t, &tr, &r, &db);
	const struct kp_row *k = row_named(&r, "triton_poi_fused__unsafe_view_add_5");
	assert_non_null(k);
	assert_int_equal(k->calls, 3);
	assert_int_equal(k->kernels, 3);
	assert_int_equal(k->flops, -1); /* no model, no invented FLOPs */
	assert_int_equal(r.tot.unlinked, 3);
	analyze_free(&r);
	devdb_free(&db);
	trace_free(&tr);
	ctrace_free(&t);
}

static struct kp_hcall conv(int op, int g)
{
	struct kp_hcall c;
	memset(&c, 0, sizeof(c));
	c.kind = HC_CONV;
	c.name = op == CONV_FWD        ? "cudnnConvolutionForward"
		 : op == CONV_BWD_DATA ? "cudnnConvolutionBackwardData"
				       : "cudnnConvolutionBackwardFilter";
	c.conv_op = op;
	c.conv_nd = 2;
	c.groups = g;
	c.atype = c.btype = c.dtype = 2; /* CUDNN_DATA_HALF */
	int32_t x[4] = { 8, 64, 56, 56 }, w[4] = { 128, 64 / g, 3, 3 }, y[4] = { 8, 128, 28, 28 };
	memcpy(c.xd, x, sizeof(x));
	memcpy(c.wd, w, sizeof(w));
	memcpy(c.yd, y, sizeof(y));
	for (int i = 0; i < 2; i++)
		c.cpad[i] = 1, c.cstride[i] = 2, c.cdil[i] = 1;
	return c;
}

static void cudnn_convolutions_become_conv_ops(void **state)
{
	(void)state;
	const char *name;
	char *args;
	struct kp_hcall c = conv(CONV_FWD, 1);
	assert_int_equal(hostops_conv(&c, &name, &args), 0);
	assert_string_equal(name, "aten::convolution");
	assert_non_null(
		strstr(args, "\"Input Dims\":[[8,64,56,56],[128,64,3,3],[],[],[],[],[],[],[]]"));
	assert_non_null(
		strstr(args, "\"Concrete Inputs\":[\"\",\"\",\"\",\"[2, 2]\",\"[1, 1]\",\"[1, 1]\","
			     "\"False\",\"[0, 0]\",\"1\"]"));
	free(args);
	c = conv(CONV_BWD_FILTER, 2);
	assert_int_equal(hostops_conv(&c, &name, &args), 0);
	assert_string_equal(name, "aten::convolution_backward");
	assert_non_null(strstr(args, "\"Input Dims\":[[8,128,28,28],[8,64,56,56],[128,32,3,3],"));
	assert_non_null(strstr(args, "\"2\",\"[False, True, False]\"]"));
	free(args);
	c.conv_nd = 0; /* descriptors not read */
	assert_int_equal(hostops_conv(&c, &name, &args), -1);
	assert_string_equal(hostops_cudnn_type_name(9), "c10::BFloat16");

	/* through the models: each call 2 N K (C/g) R S P Q */
	struct kp_ctrace t;
	ctrace_init(&t);
	int ops[3] = { CONV_FWD, CONV_BWD_DATA, CONV_BWD_FILTER };
	for (int i = 0; i < 3; i++) {
		add_call(&t, conv(ops[i], 2), T0 + 1000 + i * 20000ull, T0 + 9000 + i * 20000ull,
			 1 + i);
		add_kernel(&t, 10 + i, T0 + 2000 + i * 20000ull, 0, "cudnn_conv_kernel");
	}
	struct kp_hostops_stats st;
	assert_int_equal(hostops_emit(&t, &st, NULL), 0);
	struct kp_trace tr;
	struct kp_report r;
	struct kp_devdb db;
	analyze_ctrace(&t, &tr, &r, &db);
	int64_t fwd = 2ll * 8 * 128 * 32 * 3 * 3 * 28 * 28;
	assert_int_equal(r.tot.unlinked, 0);
	assert_int_equal(r.tot.flops, 3 * fwd);
	const struct kp_row *f = row_named(&r, "aten::convolution");
	assert_non_null(f);
	assert_int_equal(f->flops, fwd);
	analyze_free(&r);
	devdb_free(&db);
	trace_free(&tr);
	ctrace_free(&t);
}

/* A cuDNN convolution of 2-D tensors x, w, y (cuDNN's names: y is dy in backward), bf16. */
static struct kp_hcall conv_of(int op, const int32_t *x, const int32_t *w, const int32_t *y,
			       int stride, int pad)
{
	struct kp_hcall c = conv(op, 1);
	c.name = "cudnnBackendExecute";
	c.atype = c.btype = c.dtype = 9; /* CUDNN_DATA_BFLOAT16 */
	c.groups = x[1] / w[1];
	memcpy(c.xd, x, 4 * sizeof(*x));
	memcpy(c.wd, w, 4 * sizeof(*w));
	memcpy(c.yd, y, 4 * sizeof(*y));
	for (int i = 0; i < 2; i++)
		c.cpad[i] = (int16_t)pad, c.cstride[i] = (int16_t)stride, c.cdil[i] = 1;
	return c;
}

/* The args of the first span named @name in @t, or NULL. */
static const char *span_args(const struct kp_ctrace *t, const char *name)
{
	for (size_t i = 0; i < t->nspans; i++)
		if (!strcmp(t->spans[i].name, name) && t->spans[i].args)
			return t->spans[i].args;
	return NULL;
}

/*
 * issue 23 item 2: emit_nvtx(record_shapes=True) records the sizes of convolution_backward but
 * not transposed, groups or output_mask, so no model applied ("convolution 'transposed' is not
 * True or False") and the conv backward FLOPs were missing.  The cuDNN convolutions executed
 * inside each range say them; the FLOPs are FlopCounterMode's, 2 N K (C/g) R S P Q per
 * gradient computed, with no assumption reported.  Messages as torch's getNvtxStr writes them
 * (torch/csrc/profiler/util.cpp; shared/docs/capture-any.md §2.4).
 */
static void emit_nvtx_conv_backward_takes_its_args_from_cudnn(void **state)
{
	(void)state;
	struct kp_ctrace t;
	ctrace_init(&t);
	/* ResNet's stride-2 3x3 conv, 64 -> 128 channels, batch 32 */
	const int32_t x[4] = { 32, 64, 56, 56 }, w[4] = { 128, 64, 3, 3 }, y[4] = { 32, 128, 28, 28 };
	/* forward: aten::convolution > cuDNN fprop */
	add_range(&t,
		  "aten::convolution, seq = 12, op_id = 300, sizes = [[32, 64, 56, 56], "
		  "[128, 64, 3, 3], [], [], [], [], [], [], []], input_op_ids = [(299,0), (4,0), "
		  "(0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]",
		  T0 + 1000, T0 + 9000, 1);
	add_call(&t, conv_of(CONV_FWD, x, w, y, 2, 1), T0 + 1500, T0 + 8000, 2);
	add_kernel(&t, 10, T0 + 2000, 2, "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32");
	/* backward: grad input (dgrad) and grad weight (wgrad) */
	add_range(&t,
		  "aten::convolution_backward, seq = 12, op_id = 345, sizes = [[32, 128, 28, 28], "
		  "[32, 64, 56, 56], [128, 64, 3, 3], [], [], [], [], [], [], [], []], "
		  "input_op_ids = [(344,0), (299,0), (4,0), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), "
		  "(0,-1), (0,-1), (0,-1)]",
		  T0 + 20000, T0 + 39000, 3);
	add_call(&t, conv_of(CONV_BWD_DATA, x, w, y, 2, 1), T0 + 21000, T0 + 28000, 4);
	add_kernel(&t, 11, T0 + 22000, 4, "sm90_xmma_dgrad_implicit_gemm_bf16bf16_bf16f32");
	add_call(&t, conv_of(CONV_BWD_FILTER, x, w, y, 2, 1), T0 + 29000, T0 + 38000, 5);
	add_kernel(&t, 12, T0 + 30000, 5, "sm90_xmma_wgrad_implicit_gemm_bf16bf16_bf16f32");
	/* the first layer: its input needs no gradient, so only wgrad runs (3 -> 64, 7x7, s2) */
	const int32_t x1[4] = { 32, 3, 224, 224 }, w1[4] = { 64, 3, 7, 7 },
		      y1[4] = { 32, 64, 112, 112 };
	add_range(&t,
		  "aten::convolution_backward, seq = 2, op_id = 400, sizes = [[32, 64, 112, 112], "
		  "[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], [], []], "
		  "input_op_ids = [(399,0), (1,0), (2,0), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), "
		  "(0,-1), (0,-1), (0,-1)]",
		  T0 + 40000, T0 + 49000, 6);
	add_call(&t, conv_of(CONV_BWD_FILTER, x1, w1, y1, 2, 3), T0 + 41000, T0 + 48000, 7);
	add_kernel(&t, 13, T0 + 42000, 7, "sm90_xmma_wgrad_implicit_gemm_bf16bf16_bf16f32");
	/* a transposed conv's backward: cuDNN fprop of dy is the grad input */
	const int32_t tdy[4] = { 1, 8, 16, 16 }, tw[4] = { 16, 8, 3, 3 }, tx[4] = { 1, 16, 8, 8 };
	add_range(&t,
		  "aten::convolution_backward, seq = 30, op_id = 500, sizes = [[1, 8, 16, 16], "
		  "[1, 16, 8, 8], [16, 8, 3, 3], [], [], [], [], [], [], [], []], "
		  "input_op_ids = [(499,0), (498,0), (5,0), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), "
		  "(0,-1), (0,-1), (0,-1)]",
		  T0 + 50000, T0 + 59000, 8);
	add_call(&t, conv_of(CONV_FWD, tdy, tw, tx, 2, 1), T0 + 51000, T0 + 54000, 9);
	add_kernel(&t, 14, T0 + 51500, 9, "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32");
	add_call(&t, conv_of(CONV_BWD_FILTER, tdy, tw, tx, 2, 1), T0 + 55000, T0 + 58000, 10);
	add_kernel(&t, 15, T0 + 55500, 10, "sm90_xmma_wgrad_implicit_gemm_bf16bf16_bf16f32");
	struct kp_hostops_stats st;
	assert_int_equal(hostops_emit(&t, &st, NULL), 0);
	const char *a = span_args(&t, "aten::convolution_backward");
	assert_non_null(a);
	assert_non_null(strstr(a, "\"Concrete Inputs\":[\"\",\"\",\"\",\"\",\"[2, 2]\","
				  "\"[1, 1]\",\"[1, 1]\",\"False\",\"[0, 0]\",\"1\","
				  "\"[True, True, False]\"]"));
	assert_non_null(strstr(a, "\"kprof conv args from\":\"cudnnBackendExecute\""));
	a = span_args(&t, "aten::convolution");
	assert_non_null(a);
	assert_non_null(strstr(a, "\"[2, 2]\",\"[1, 1]\",\"[1, 1]\",\"False\",\"[0, 0]\",\"1\"]"));

	struct kp_trace tr;
	struct kp_report r;
	struct kp_devdb db;
	analyze_ctrace(&t, &tr, &r, &db);
	assert_int_equal(r.tot.unlinked, 0);
	const int64_t fwd = 2ll * 32 * 128 * 64 * 3 * 3 * 28 * 28;
	const int64_t first = 2ll * 32 * 64 * 3 * 7 * 7 * 112 * 112;
	const int64_t tfwd = 2ll * 1 * 16 * 8 * 3 * 3 * 8 * 8; /* transposed: x's spatial size */
	const struct kp_row *f = row_named(&r, "aten::convolution");
	const struct kp_row *b = row_named(&r, "aten::convolution_backward");
	assert_non_null(f);
	assert_non_null(b);
	assert_int_equal(f->flops, fwd);
	assert_int_equal(b->calls, 3);
	assert_int_equal(b->flops, 2 * fwd + first + 2 * tfwd);
	assert_int_equal(r.tot.flops, 3 * fwd + first + 2 * tfwd);
	assert_int_equal(count_warnings(&r, "ops whose model did not apply", ""), 0);
	assert_int_equal(count_warnings(&r, "ops with an argument assumed", ""), 0);
	analyze_free(&r);
	devdb_free(&db);
	trace_free(&tr);
	ctrace_free(&t);

	/*
	 * No cuDNN call inside (the shim off, or a path it does not decode): the form and groups
	 * from the shapes, both gradients assumed and reported (opmodel-conv.c conv_bwd_transposed)
	 */
	ctrace_init(&t);
	add_range(&t,
		  "aten::convolution_backward, seq = 12, op_id = 345, sizes = [[32, 128, 28, 28], "
		  "[32, 64, 56, 56], [128, 64, 3, 3], [], [], [], [], [], [], [], []], "
		  "input_op_ids = [(344,0), (299,0), (4,0), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), "
		  "(0,-1), (0,-1), (0,-1)]",
		  T0 + 20000, T0 + 39000, 3);
	add_kernel(&t, 11, T0 + 22000, 0, "sm90_xmma_dgrad_implicit_gemm_bf16bf16_bf16f32");
	assert_int_equal(hostops_emit(&t, &st, NULL), 0);
	assert_null(strstr(span_args(&t, "aten::convolution_backward"), "kprof conv args from"));
	analyze_ctrace(&t, &tr, &r, &db);
	b = row_named(&r, "aten::convolution_backward");
	assert_non_null(b);
	assert_int_equal(b->flops, 2 * fwd);
	assert_int_equal(count_warnings(&r, "ops with an argument assumed",
					"output_mask not recorded"),
			 1);
	analyze_free(&r);
	devdb_free(&db);
	trace_free(&tr);
	ctrace_free(&t);
}

/*
 * The first convolution of a program (cnn_train.py's stem on an H200, testdata/capture-h200/):
 * its input came from no op in the trace and its kernel's name says no type
 * ("..._indexed_f32f32_f32f32_f32_nchwkcrs_..."), so the type is the cuDNN call's: a fp32
 * conv whose "Input type" was "" had no FLOPs ("input or weight is not a tensor").
 */
static void emit_nvtx_first_conv_takes_its_type_from_cudnn(void **state)
{
	(void)state;
	struct kp_ctrace t;
	ctrace_init(&t);
	const int32_t x[4] = { 16, 3, 64, 64 }, w[4] = { 32, 3, 7, 7 }, y[4] = { 16, 32, 32, 32 };
	add_range(&t,
		  "aten::convolution, seq = 0, op_id = 3, sizes = [[16, 3, 64, 64], [32, 3, 7, 7], "
		  "[], [], [], [], [], [], []], input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1), "
		  "(0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]",
		  T0 + 1000, T0 + 9000, 1);
	struct kp_hcall c = conv_of(CONV_FWD, x, w, y, 2, 3);
	c.atype = c.btype = c.dtype = 0; /* CUDNN_DATA_FLOAT */
	add_call(&t, c, T0 + 1500, T0 + 8000, 2);
	add_kernel(&t, 10, T0 + 2000, 2,
		   "sm80_xmma_fprop_implicit_gemm_indexed_f32f32_f32f32_f32_nchwkcrs_nchw_"
		   "tilesize32x32x8_stage3_warpsize1x2x1_g1_ffma_aligna4_alignc4_execute_kernel__5x_cudnn");
	struct kp_hostops_stats st;
	assert_int_equal(hostops_emit(&t, &st, NULL), 0);
	const char *a = span_args(&t, "aten::convolution");
	assert_non_null(a);
	assert_non_null(strstr(a, "\"Input type\":[\"float\",\"float\","));

	int64_t flops, bytes;
	row_figures(&t, "aten::convolution", &flops, &bytes);
	assert_int_equal(flops, 2ll * 16 * 32 * 3 * 7 * 7 * 32 * 32); /* 154140672 */
	ctrace_free(&t);
}

/*
 * kprof's op observer says each input's type (capture/intercept/python/kprof_torch_obs.cpp):
 * an elementwise op whose kernel name says none, and which has no op_id for a producer to
 * give one, gets its inputs' types, and so its bytes: 1024x1024 bf16 + bf16 -> bf16 moves
 * 3 x 2 MiB.
 */
static void observer_types_give_elementwise_ops_their_bytes(void **state)
{
	(void)state;
	struct kp_ctrace t;
	ctrace_init(&t);
	add_range(&t,
		  "aten::add, seq = 4, sizes = [[1024, 1024], [1024, 1024], []], dtypes = "
		  "[c10::BFloat16, c10::BFloat16, ]",
		  T0 + 1000, T0 + 9000, 1);
	add_kernel(&t, 10, T0 + 2000, 1, "triton_poi_fused_add_0");
	/* a 0-dim tensor (a loss, a scale) keeps the type the observer gave it, as Kineto's */
	add_range(&t, "aten::mul, seq = 6, sizes = [[4], [], []], dtypes = [float, float, ], "
		      "concrete = [\"\", \"\", \"2\"]",
		  T0 + 10000, T0 + 11000, 2);
	struct kp_hostops_stats st;
	assert_int_equal(hostops_emit(&t, &st, NULL), 0);
	const char *a = span_args(&t, "aten::add");
	assert_non_null(a);
	assert_non_null(strstr(a, "\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"\"]"));
	assert_null(strstr(a, "kprof op_id"));
	a = span_args(&t, "aten::mul");
	assert_non_null(a);
	assert_non_null(strstr(a, "\"Input type\":[\"float\",\"float\",\"\"]"));

	int64_t flops, bytes;
	row_figures(&t, "aten::add", &flops, &bytes);
	assert_int_equal(bytes, 3ll * 1024 * 1024 * 2);
	ctrace_free(&t);
}

/*
 * kprof's op observer passes the program's scalar arguments: a convolution with no cuDNN call
 * under it (PyTorch's own kernels) gets its stride and padding from them, so its FLOPs.
 */
static void observer_arguments_give_a_convolution_its_flops(void **state)
{
	(void)state;
	struct kp_ctrace t;
	ctrace_init(&t);
	add_range(&t,
		  "aten::convolution, seq = 0, sizes = [[16, 3, 64, 64], [32, 3, 7, 7], [], [], [], "
		  "[], [], [], []], dtypes = [float, float, , , , , , , ], concrete = [\"\", \"\", "
		  "\"\", \"[2, 2]\", \"[3, 3]\", \"[1, 1]\", \"False\", \"[0, 0]\", \"1\"]",
		  T0 + 1000, T0 + 9000, 1);
	add_kernel(&t, 10, T0 + 2000, 1, "void at::native::conv_depthwise2d_forward_kernel<float>");
	add_range(&t, "aten::foo, seq = 1, sizes = [[], []], dtypes = [, ], concrete = [\"a\ab\", "
		      "\"=1+2\"]",
		  T0 + 10000, T0 + 11000, 2);
	struct kp_hostops_stats st;
	assert_int_equal(hostops_emit(&t, &st, NULL), 0);
	const char *a = span_args(&t, "aten::convolution");
	assert_non_null(a);
	assert_non_null(strstr(a, "\"Concrete Inputs\":[\"\",\"\",\"\",\"[2, 2]\",\"[3, 3]\","
				  "\"[1, 1]\",\"False\",\"[0, 0]\",\"1\"]"));
	assert_null(strstr(a, "kprof conv args from"));
	/* a program's texts are its own: control bytes reach the trace escaped */
	a = span_args(&t, "aten::foo");
	assert_non_null(a);
	assert_non_null(strstr(a, "\"Concrete Inputs\":[\"a\\u0007b\",\"=1+2\"]"));

	int64_t flops, bytes;
	row_figures(&t, "aten::convolution", &flops, &bytes);
	assert_int_equal(flops, 2ll * 16 * 32 * 3 * 7 * 7 * 32 * 32); /* 154140672 */
	ctrace_free(&t);
}

/*
 * A conv backward with a cuDNN call under it and the observer's texts: the program's own
 * arguments win, and the call stays named while a text of its own is left (output_mask, which
 * the observer does not write); with every slot the program's, the call is not named.
 */
static void observer_texts_over_a_cudnn_call_keep_its_name_for_what_is_left(void **state)
{
	(void)state;
	const int32_t x[4] = { 32, 64, 56, 56 }, w[4] = { 128, 64, 3, 3 }, y[4] = { 32, 128, 28, 28 };
	static const char *const mask[2] = { "\"\"", "\"[True, False, False]\"" };
	for (int k = 0; k < 2; k++) {
		struct kp_ctrace t;
		ctrace_init(&t);
		char msg[1024];
		snprintf(msg, sizeof(msg),
			 "aten::convolution_backward, seq = 12, sizes = [[32, 128, 28, 28], "
			 "[32, 64, 56, 56], [128, 64, 3, 3], [], [], [], [], [], [], [], []], dtypes = "
			 "[c10::BFloat16, c10::BFloat16, c10::BFloat16, , , , , , , , ], concrete = "
			 "[\"\", \"\", \"\", \"\", \"[2, 2]\", \"[1, 1]\", \"[1, 1]\", \"False\", "
			 "\"[0, 0]\", \"1\", %s]",
			 mask[k]);
		add_range(&t, msg, T0 + 20000, T0 + 39000, 3);
		add_call(&t, conv_of(CONV_BWD_DATA, x, w, y, 2, 1), T0 + 21000, T0 + 28000, 4);
		add_kernel(&t, 11, T0 + 22000, 4, "sm90_xmma_dgrad_implicit_gemm_bf16bf16_bf16f32");
		add_call(&t, conv_of(CONV_BWD_FILTER, x, w, y, 2, 1), T0 + 29000, T0 + 38000, 5);
		add_kernel(&t, 12, T0 + 30000, 5, "sm90_xmma_wgrad_implicit_gemm_bf16bf16_bf16f32");
		struct kp_hostops_stats st;
		assert_int_equal(hostops_emit(&t, &st, NULL), 0);
		const char *a = span_args(&t, "aten::convolution_backward");
		assert_non_null(a);
		/* the mask: cuDNN's two gradients, or the program's text */
		assert_non_null(strstr(a, k ? "\"1\",\"[True, False, False]\"]"
					    : "\"1\",\"[True, True, False]\"]"));
		if (k)
			assert_null(strstr(a, "kprof conv args from"));
		else
			assert_non_null(strstr(a, "\"kprof conv args from\":\"cudnnBackendExecute\""));
		ctrace_free(&t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lt_descriptors_give_the_gemm_shape),
		cmocka_unit_test(observer_texts_over_a_cudnn_call_keep_its_name_for_what_is_left),
		cmocka_unit_test(gemm_calls_are_laid_out_as_aten_ops),
		cmocka_unit_test(sdpa_calls_are_laid_out_as_aten_ops),
		cmocka_unit_test(library_ops_get_closed_form_flops),
		cmocka_unit_test(emit_nvtx_messages_parse),
		cmocka_unit_test(nvtx_ops_enclosing_library_ops_count_once),
		cmocka_unit_test(torch_hook_ranges_become_the_python_tree_and_fwdbwd_links),
		cmocka_unit_test(emit_nvtx_backward_nodes_by_name),
		cmocka_unit_test(flash_kernel_names_give_emit_nvtx_sdpa_its_causality),
		cmocka_unit_test(graph_replays_count_the_capturing_op_once_each),
		cmocka_unit_test(graph_replays_slice_the_launch_between_their_ops),
		cmocka_unit_test(triton_launch_ranges_own_their_replayed_kernels),
		cmocka_unit_test(cudnn_convolutions_become_conv_ops),
		cmocka_unit_test(emit_nvtx_conv_backward_takes_its_args_from_cudnn),
		cmocka_unit_test(emit_nvtx_first_conv_takes_its_type_from_cudnn),
		cmocka_unit_test(observer_types_give_elementwise_ops_their_bytes),
		cmocka_unit_test(observer_arguments_give_a_convolution_its_flops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
