/*
 * test-trace.c — trace reading (every Kineto variant) and kernel -> op linking.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "kprof/link.h"
#include "kprof/trace.h"
#include "kprof/utf8.h"

static char tmpdir[] = "/tmp/kprof-test-trace-XXXXXX";

static const char *write_file(const char *name, const char *text, int gz)
{
	static char path[512];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	if (gz) {
		gzFile f = gzopen(path, "wb");
		gzwrite(f, text, (unsigned)strlen(text));
		gzclose(f);
	} else {
		FILE *f = fopen(path, "w");
		fputs(text, f);
		fclose(f);
	}
	return path;
}

static int load_text(struct kp_trace *t, const char *text, int strict, struct kp_diag *d)
{
	struct kp_load_opts o = { .strict = strict };
	memset(d, 0, sizeof(*d));
	int rc = trace_load(t, write_file("t.json", text, 0), &o, d);
	if (rc == 0)
		link_trace(t);
	return rc;
}

static const struct kp_op *op_named(const struct kp_trace *t, const char *name)
{
	for (size_t i = 0; i < t->nops; i++)
		if (!strcmp(t->ops[i].name, name))
			return &t->ops[i];
	return NULL;
}

static const char *gpu_op(const struct kp_trace *t, const char *kernel)
{
	for (size_t i = 0; i < t->ngpu; i++)
		if (!strcmp(t->gpu[i].name, kernel))
			return t->gpu[i].op >= 0 ? t->ops[t->gpu[i].op].name : "(unlinked)";
	return NULL;
}

/* A 2024+ trace: relative float µs, baseTimeNanoseconds, External id names the op. */
static const char modern[] =
	"{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA H100 80GB HBM3\","
	"\"numSms\":132,\"computeMajor\":9}],\"baseTimeNanoseconds\":1790857026000000000,"
	"\"traceEvents\":["
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":483,\"tid\":483,"
	"\"ts\":4795881956000.000,\"dur\":100.5,\"args\":{\"External id\":1}},"
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":483,\"tid\":483,"
	"\"ts\":4795881956010.250,\"dur\":80,\"args\":{\"External id\":2,\"Input Dims\":[[64],[32,128],[128,64],[],[]],"
	"\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"],"
	"\"Concrete Inputs\":[\"\",\"\",\"\",\"1\",\"1\"],\"Input Strides\":[[1],[128,1],[64,1],[],[]]}},"
	"{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"torch/nn/functional.py(1): linear\",\"pid\":483,"
	"\"tid\":483,\"ts\":4795881955000,\"dur\":2000,\"args\":{\"Python id\":5}},"
	"{\"ph\":\"X\",\"cat\":\"cuda_driver\",\"name\":\"cuLaunchKernelEx\",\"pid\":483,\"tid\":483,"
	"\"ts\":4795881956020.001,\"dur\":9,\"args\":{\"External id\":2,\"cbid\":652,\"correlation\":14}},"
	"{\"ph\":\"s\",\"id\":14,\"pid\":483,\"tid\":483,\"ts\":4795881956020.001,\"cat\":\"ac2g\",\"name\":\"ac2g\"},"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"nvjet_gemm\",\"pid\":0,\"tid\":7,"
	"\"ts\":4795881956040.123,\"dur\":6.241,\"args\":{\"External id\":2,\"correlation\":14,"
	"\"device\":0,\"stream\":7,\"grid\":[2,64,1],\"occupancy\":{\"x\":1},\"unknown key\":[1,{\"a\":null}]}},"
	"{\"ph\":\"f\",\"id\":14,\"pid\":0,\"tid\":7,\"ts\":4795881956040.123,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"},"
	"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":0,\"tid\":7,\"args\":{\"name\":\"stream 7 \"}},"
	"{\"name\":\"Record Window End\",\"ph\":\"i\",\"s\":\"g\",\"pid\":\"\",\"tid\":\"\",\"ts\":4795881959000}"
	"],\"traceName\":\"x.json\",\"distributedInfo\":{\"rank\":0}}";

static void reads_relative_float_times_as_integer_ns(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_diag d;
	assert_int_equal(load_text(&t, modern, 0, &d), 0);
	assert_int_equal(t.has_base, 1);
	assert_true(t.base_ns == 1790857026000000000LL);
	assert_int_equal(t.nops, 2);
	assert_int_equal(t.ngpu, 1);
	assert_true(t.gpu[0].ts_ns == 4795881956040123LL);
	assert_int_equal(t.gpu[0].dur_ns, 6241);
	assert_int_equal(op_named(&t, "aten::linear")->dur_ns, 100500);
	assert_int_equal(t.ndevs, 1);
	assert_string_equal(t.devs[0].name, "NVIDIA H100 80GB HBM3");
	assert_int_equal(t.devs[0].sms, 132);
	/* flows, metadata and instants are skipped, not kept; python_function is a frame */
	assert_int_equal(t.nevents, 9);
	assert_int_equal(t.npy, 1);
	assert_string_equal(t.py[0].name, "torch/nn/functional.py(1): linear");
	assert_int_equal(t.py[0].pyid, 5);
	assert_int_equal(t.py[0].dur_ns, 2000000);
	assert_int_equal(t.nflows, 2);
	trace_free(&t);
}

static void links_kernel_to_the_model_level_op_through_the_driver_launch(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_diag d;
	assert_int_equal(load_text(&t, modern, 0, &d), 0);
	assert_string_equal(gpu_op(&t, "nvjet_gemm"), "aten::addmm");
	const struct kp_op *addmm = op_named(&t, "aten::addmm");
	assert_int_equal(addmm->nslots, 5);
	assert_int_equal(addmm->slots[1].ndim, 2);
	assert_int_equal(addmm->slots[1].dims[1], 128);
	assert_int_equal(addmm->slots[0].dtype, DT_BF16);
	assert_string_equal(addmm->slots[3].concrete, "1");
	assert_int_equal(addmm->parent >= 0, 1);
	assert_string_equal(t.ops[addmm->parent].name, "aten::linear");
	trace_free(&t);
}

/* 2022: integer absolute µs, External id == correlation (names no op), negative tid. */
static const char old2022[] =
	"{\"traceEvents\":["
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::conv2d\",\"pid\":7,\"tid\":-1029147072,"
	"\"ts\":1650000000000100,\"dur\":50,\"args\":{\"External id\":900}},"
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::convolution\",\"pid\":7,\"tid\":-1029147072,"
	"\"ts\":1650000000000101,\"dur\":48,\"args\":{\"External id\":901}},"
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::cudnn_convolution\",\"pid\":7,\"tid\":-1029147072,"
	"\"ts\":1650000000000102,\"dur\":40,\"args\":{\"External id\":902}},"
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":7,\"tid\":-1029147072,"
	"\"ts\":1650000000000110,\"dur\":5,\"args\":{\"External id\":77,\"correlation\":77}},"
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":7,\"tid\":-1029147072,"
	"\"ts\":1650000000000300,\"dur\":5,\"args\":{\"External id\":78,\"correlation\":78}},"
	"{\"ph\":\"s\",\"id\":77,\"pid\":7,\"tid\":-1029147072,\"ts\":1650000000000110,\"cat\":\"async_cpu_to_gpu\",\"name\":\"async_gpu\"},"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"implicit_gemm\",\"pid\":0,\"tid\":\"stream 7\","
	"\"ts\":1650000000000120,\"dur\":30,\"args\":{\"External id\":77,\"correlation\":77,\"stream\":7}},"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"lonely\",\"pid\":0,\"tid\":7,"
	"\"ts\":1650000000000320,\"dur\":3,\"args\":{\"External id\":78,\"correlation\":78}},"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"orphan\",\"pid\":0,\"tid\":7,"
	"\"ts\":1650000000000400,\"dur\":3,\"args\":{\"correlation\":99}}"
	"]}";

static void links_2022_traces_by_time_nesting_and_counts_one_level(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_diag d;
	assert_int_equal(load_text(&t, old2022, 0, &d), 0);
	assert_int_equal(t.has_base, 0);
	assert_true(t.gpu[0].ts_ns == 1650000000000120000LL);
	/* the innermost op is cudnn_convolution; the counted level is convolution */
	assert_string_equal(gpu_op(&t, "implicit_gemm"), "aten::convolution");
	/* a launch outside any op and a kernel without a launch are unlinked, not dropped */
	assert_string_equal(gpu_op(&t, "lonely"), "(unlinked)");
	assert_string_equal(gpu_op(&t, "orphan"), "(unlinked)");
	assert_int_equal(t.ngpu, 3);
	assert_true(t.threads[t.ops[0].thread].tid == -1029147072LL);
	trace_free(&t);
}

static void graph_kernels_sharing_one_correlation_all_link(void **state)
{
	(void)state;
	static const char text[] =
		"{\"traceEvents\":["
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":100,"
		"\"args\":{\"External id\":5}},"
		"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaGraphLaunch\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":5,"
		"\"args\":{\"correlation\":3}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":30,\"dur\":5,\"args\":{\"correlation\":3}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k2\",\"pid\":0,\"tid\":7,\"ts\":32,\"dur\":5,\"args\":{\"correlation\":3}},"
		"{\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":\"Memset (Device)\",\"pid\":0,\"tid\":7,\"ts\":40,\"dur\":1,"
		"\"args\":{\"correlation\":3,\"bytes\":64}}"
		"]}";
	struct kp_trace t;
	struct kp_diag d;
	assert_int_equal(load_text(&t, text, 0, &d), 0);
	assert_string_equal(gpu_op(&t, "k1"), "aten::mm");
	assert_string_equal(gpu_op(&t, "k2"), "aten::mm");
	assert_string_equal(gpu_op(&t, "Memset (Device)"), "aten::mm");
	assert_int_equal(t.gpu[2].kind, GPU_MEMSET);
	assert_int_equal(trace_gpux(&t, &t.gpu[2])->bytes, 64);
	trace_free(&t);
}

/*
 * Records keep what is read after linking; the rest sits aside: a Sequence number only
 * for the ops fwdbwd.c pairs, Inductor args and bytes in side tables, ids freed by link.
 */
static void rare_fields_sit_in_side_tables_and_link_ids_are_freed(void **state)
{
	(void)state;
	static const char text[] =
		"{\"traceEvents\":["
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::convolution\",\"pid\":1,"
		"\"tid\":1,\"ts\":0,\"dur\":9,\"args\":{\"External id\":1,\"Sequence number\":7}},"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,"
		"\"ts\":10,\"dur\":9,\"args\":{\"External id\":2,\"Sequence number\":8}},"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"triton_poi_0\",\"pid\":1,\"tid\":1,"
		"\"ts\":20,\"dur\":9,\"args\":{\"kernel_flop\":1000,\"kernel_num_gb\":0.5}}"
		"]}";
	struct kp_trace t;
	struct kp_diag d;
	assert_int_equal(load_text(&t, text, 0, &d), 0);
	assert_null(t.op_ext);
	assert_null(t.launch_ids);
	assert_null(t.gpu_ids);
	assert_int_equal(trace_opx(&t, op_named(&t, "aten::convolution"))->seq, 7);
	/* every op's Sequence number is kept: pytree.c links backward ops by it (issue 24) */
	assert_int_equal(trace_opx(&t, op_named(&t, "aten::mm"))->seq, 8);
	const struct kp_opx *x = trace_opx(&t, op_named(&t, "triton_poi_0"));
	assert_int_equal(x->kernel_flop, 1000);
	assert_true(x->kernel_num_gb == 0.5);
	assert_int_equal(x->seq, -1);
	assert_int_equal(t.nopx, 3);
	trace_free(&t);
}

/*
 * The ops whose Sequence number the loader keeps (trace_keeps_seq(), the table fwdbwd.c reads
 * too): forward convolutions and a convolution's autograd node, not its evaluate_function
 * wrapper, an aten:: backward op or a matmul.
 */
static void sequence_numbers_are_kept_for_conv_forwards_and_their_nodes(void **state)
{
	(void)state;
	assert_true(trace_conv_fwd_op("aten::cudnn_convolution"));
	assert_false(trace_conv_fwd_op("aten::convolution_backward"));
	assert_true(trace_conv_bwd_node("CudnnConvolutionBackward"));
	assert_false(trace_conv_bwd_node("autograd::engine::evaluate_function: ConvolutionBackward0"));
	assert_true(trace_keeps_seq("aten::mkldnn_convolution"));
	assert_true(trace_keeps_seq("ConvolutionBackward0"));
	assert_false(trace_keeps_seq("aten::cudnn_convolution_backward"));
	assert_false(trace_keeps_seq("aten::mm"));
	assert_false(trace_keeps_seq("AddmmBackward0"));
}

/*
 * The integer members of args (int_member()): counts kprof measures and collective sizes keep
 * only values >= 0, ids and plain counts any value, sm_clock_mhz only (0, 100000).
 */
static void integer_args_keep_the_values_their_bounds_allow(void **state)
{
	(void)state;
	static const char text[] =
		"{\"traceEvents\":["
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":1,"
		"\"dur\":1,\"args\":{\"kprof measured flops\":100,\"kprof dram bytes\":200,"
		"\"sm_clock_mhz\":1500,\"kernel_flop\":-42,\"device\":3,\"stream\":9,"
		"\"correlation\":5,\"Collective name\":\"allreduce\",\"dtype\":\"Float\","
		"\"In msg nelems\":1024,\"Out msg nelems\":2048,\"Group size\":8}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k2\",\"pid\":0,\"tid\":7,\"ts\":2,"
		"\"dur\":1,\"args\":{\"kprof measured flops\":-5,\"kprof dram bytes\":-2,"
		"\"sm_clock_mhz\":100000,\"In msg nelems\":-3,\"Out msg nelems\":16,"
		"\"Group size\":-8,\"stream\":\"x\"}},"
		"{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"m\",\"pid\":0,\"tid\":7,\"ts\":3,"
		"\"dur\":1,\"args\":{\"bytes\":4096,\"device\":1}}"
		"]}";
	struct kp_trace t;
	struct kp_diag d;
	assert_int_equal(load_text(&t, text, 0, &d), 0);
	assert_int_equal(t.ngpu, 3);
	const struct kp_gpux *x = trace_gpux(&t, &t.gpu[0]);
	assert_int_equal(x->mflops, 100);
	assert_int_equal(x->mbytes, 200);
	assert_int_equal(x->sm_clock_mhz, 1500);
	assert_int_equal(x->kernel_flop, -42);
	assert_int_equal(t.gpu[0].device, 3);
	assert_int_equal(t.gpu[0].stream, 9);
	x = trace_gpux(&t, &t.gpu[1]);
	assert_int_equal(x->mflops, -1);
	assert_int_equal(x->mbytes, -1);
	assert_int_equal(x->sm_clock_mhz, 0);
	assert_int_equal(t.gpu[1].stream, 7); /* not a number: the tid */
	x = trace_gpux(&t, &t.gpu[2]);
	assert_int_equal(x->bytes, 4096);
	assert_int_equal(t.gpu[2].device, 1);
	assert_int_equal(t.gpu[2].kind, GPU_MEMCPY);
	assert_int_equal(t.ncolls, 2);
	assert_string_equal(t.colls[0].name, "allreduce");
	assert_string_equal(t.colls[0].dtype, "Float");
	assert_int_equal(t.colls[0].in_nelems, 1024);
	assert_int_equal(t.colls[0].out_nelems, 2048);
	assert_int_equal(t.colls[0].group_size, 8);
	assert_null(t.colls[1].name);
	assert_int_equal(t.colls[1].in_nelems, -1);
	assert_int_equal(t.colls[1].out_nelems, 16);
	assert_int_equal(t.colls[1].group_size, -1);
	trace_free(&t);
}

/* The number of ops that warned "ops with too many shape slots" */
static long slot_warnings(const struct kp_trace *t)
{
	for (int i = 0; i < t->warn.nkinds; i++)
		if (!strcmp(t->warn.k[i].kind, "ops with too many shape slots"))
			return t->warn.k[i].count;
	return 0;
}

/* "Input Dims": shapes, TensorLists, skipped elements and the slot cap, each step of read_dims */
static void input_dims_keep_shapes_lists_and_the_slot_cap(void **state)
{
	(void)state;
	char text[4096];
	int n = snprintf(text, sizeof(text),
			 "{\"traceEvents\":["
			 "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,"
			 "\"ts\":0,\"dur\":9,\"args\":{\"Input Dims\":[[2,3],[[4,5],[6]],{\"a\":[1]},"
			 "[7,[8,[9]],{\"b\":1}],\"x\",[99999999999999999999],[]]}},"
			 "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":1,\"tid\":1,"
			 "\"ts\":10,\"dur\":9,\"args\":{\"Input Dims\":[");
	for (int i = 0; i < 130; i++)
		n += snprintf(text + n, sizeof(text) - n, "%s[%d]", i ? "," : "", i);
	snprintf(text + n, sizeof(text) - n, "]}}]}");
	struct kp_trace t;
	struct kp_diag d;
	assert_int_equal(load_text(&t, text, 0, &d), 0);
	const struct kp_op *mm = op_named(&t, "aten::mm");
	assert_int_equal(mm->nslots, 7);
	const struct kp_slot *s = mm->slots;
	assert_int_equal(s[0].ndim, 2);
	assert_true(s[0].dims[0] == 2 && s[0].dims[1] == 3 && s[0].nlist == 0);
	assert_int_equal(s[1].ndim, 0);
	assert_int_equal(s[1].nlist, 2);
	assert_int_equal(s[1].list[0].ndim, 2);
	assert_true(s[1].list[0].dims[0] == 4 && s[1].list[0].dims[1] == 5);
	assert_int_equal(s[1].list[1].ndim, 1);
	assert_true(s[1].list[1].dims[0] == 6);
	assert_true(s[2].ndim == 0 && s[2].nlist == 0);
	assert_int_equal(s[3].ndim, 1);
	assert_true(s[3].dims[0] == 7);
	assert_int_equal(s[3].nlist, 1);
	assert_int_equal(s[3].list[0].ndim, 1);
	assert_true(s[3].list[0].dims[0] == 8);
	assert_true(s[4].ndim == 0 && s[4].nlist == 0);
	assert_int_equal(s[5].ndim, 1);
	/* past int64: out of range, told apart from a negative dimension (issue 23 item 21) */
	assert_true(s[5].dims[0] == KP_DIM_BAD);
	int warned = 0;
	for (int k = 0; k < t.warn.nkinds; k++)
		if (!strcmp(t.warn.k[k].kind, "Input Dims out of range"))
			warned = strstr(t.warn.k[k].shown[0],
					"dimension 99999999999999999999 in 'Input Dims' out of range") !=
				 NULL;
	assert_true(warned);
	assert_true(s[6].ndim == 0 && s[6].nlist == 0);
	const struct kp_op *add = op_named(&t, "aten::add");
	assert_int_equal(add->nslots, 128);
	assert_true(add->slots[127].ndim == 1 && add->slots[127].dims[0] == 127);
	/* both warn: mm for [9] and {"b":1} inside its slots, add for its 2 slots past the cap */
	assert_int_equal(slot_warnings(&t), 2);
	trace_free(&t);
}

/* dropping the records keeps names and warnings: what a report of the trace points at */
static void dropped_records_leave_names_and_warnings(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_diag d;
	assert_int_equal(load_text(&t, old2022, 0, &d), 0);
	assert_true(t.nops > 0 && t.ngpu > 0 && t.nlaunches > 0);
	const char *name = t.gpu[0].name;
	char copy[256];
	snprintf(copy, sizeof(copy), "%s", name);
	int warned = diag_warn_total(&t.warn);
	trace_drop_records(&t);
	assert_null(t.ops);
	assert_null(t.gpu);
	assert_null(t.launches);
	assert_int_equal(t.nops + t.ngpu + t.nlaunches + t.nthreads + t.nsteps, 0);
	assert_string_equal(name, copy); /* interned in the trace's arena, still there */
	assert_int_equal(diag_warn_total(&t.warn), warned);
	assert_non_null(t.display);
	trace_free(&t);
}

static void reads_b_e_pairs_string_pids_and_bare_event_arrays(void **state)
{
	(void)state;
	static const char text[] =
		"[{\"ph\":\"B\",\"cat\":\"cpu_op\",\"name\":\"aten::bmm\",\"pid\":\"main\",\"tid\":\"t\",\"ts\":100},"
		"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":\"main\",\"tid\":\"t\",\"ts\":110,"
		"\"dur\":2,\"args\":{\"correlation\":1}},"
		"{\"ph\":\"E\",\"cat\":\"cpu_op\",\"name\":\"aten::bmm\",\"pid\":\"main\",\"tid\":\"t\",\"ts\":150},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":1,\"ts\":120,\"dur\":10,\"args\":{\"correlation\":1}}]";
	struct kp_trace t;
	struct kp_diag d;
	assert_int_equal(load_text(&t, text, 0, &d), 0);
	assert_int_equal(t.nops, 1);
	assert_int_equal(t.ops[0].dur_ns, 50000);
	assert_string_equal(gpu_op(&t, "k"), "aten::bmm");
	assert_int_equal(t.bytes, (int64_t)strlen(text));
	trace_free(&t);
}

static void keeps_complete_events_of_a_truncated_trace(void **state)
{
	(void)state;
	static const char text[] =
		"{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":1,"
		"\"ts\":1,\"dur\":2},{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k2\",\"pid\":0,\"tid\":1,\"ts\":";
	struct kp_trace t;
	struct kp_diag d;
	assert_int_equal(load_text(&t, text, 0, &d), 0);
	assert_int_equal(t.truncated, 1);
	assert_int_equal(t.ngpu, 1);
	assert_int_equal(t.trunc_off, (int64_t)strlen(text));
	assert_int_equal(t.bytes, (int64_t)strlen(text)); /* every byte was read */
	assert_int_equal(diag_warn_total(&t.warn), 1);
	char want[128];
	snprintf(want, sizeof(want), "t.json:1:%zu: warning: trace is truncated at byte %zu",
		 strlen(text) + 1, strlen(text));
	assert_non_null(strstr(t.warn.k[0].shown[0], want));
	trace_free(&t);
	assert_int_equal(load_text(&t, text, 1, &d), -1);
	assert_int_equal(d.status, KP_BADINPUT);
	snprintf(want, sizeof(want),
		 "t.json:1:%zu: error: trace is truncated at byte %zu (--strict)", strlen(text) + 1,
		 strlen(text));
	assert_non_null(strstr(d.msg, want));
	trace_free(&t);
}

static void malformed_json_is_a_located_error(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_diag d;
	assert_int_equal(load_text(&t, "{\"traceEvents\":[\n  {\"ph\" \"X\"}]}", 0, &d), -1);
	assert_int_equal(d.status, KP_BADINPUT);
	assert_non_null(strstr(d.msg, "t.json:2:9: error: expected ':' after object key"));
	trace_free(&t);
}

static void warns_on_kernels_without_dur_and_keeps_going(void **state)
{
	(void)state;
	static const char text[] =
		"{\"traceEvents\":[\n{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"nodur\",\"pid\":0,\"tid\":1,\"ts\":1},\n"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ok\",\"pid\":0,\"tid\":1,\"ts\":1,\"dur\":1}]}";
	struct kp_trace t;
	struct kp_diag d;
	assert_int_equal(load_text(&t, text, 0, &d), 0);
	assert_int_equal(t.ngpu, 1);
	assert_int_equal(diag_warn_total(&t.warn), 1);
	assert_non_null(strstr(t.warn.k[0].shown[0],
			       "t.json:2:1: warning: skipped event 'nodur' without 'dur'"));
	trace_free(&t);
	assert_int_equal(load_text(&t, text, 1, &d), -1);
	assert_int_equal(d.status, KP_BADINPUT);
	trace_free(&t);
}

static void reads_gzip_and_reports_missing_files(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_diag d = { 0 };
	struct kp_load_opts o = { 0 };
	assert_int_equal(trace_load(&t, write_file("t.json.gz", modern, 1), &o, &d), 0);
	assert_int_equal(t.ngpu, 1);
	trace_free(&t);
	assert_int_equal(trace_load(&t, "/nonexistent/x.json", &o, &d), -1);
	assert_int_equal(d.status, KP_ENV);
	assert_string_equal(d.msg,
			    "error: cannot open '/nonexistent/x.json': No such file or directory");
	trace_free(&t);
}

static void reads_kprof_clock_metadata(void **state)
{
	(void)state;
	static const char text[] =
		"{\"kprof\":{\"version\":\"0.1.0\",\"clock\":\"nvml\",\"sm_clock_max_mhz\":1980},"
		"\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA H200\",\"clockRate\":1980000,"
		"\"memoryClockRate\":3201000,\"memoryBusWidth\":6016}],"
		"\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":1,\"ts\":1,\"dur\":1,"
		"\"args\":{\"sm_clock_mhz\":1755}}]}";
	struct kp_trace t;
	struct kp_diag d;
	assert_int_equal(load_text(&t, text, 0, &d), 0);
	assert_int_equal(t.kprof_clock_known, 1);
	assert_int_equal(t.kprof_sm_clock_max_mhz, 1980);
	assert_int_equal(trace_gpux(&t, &t.gpu[0])->sm_clock_mhz, 1755);
	assert_int_equal(t.devs[0].mem_clock_khz, 3201000);
	assert_int_equal(t.devs[0].bus_bits, 6016);
	trace_free(&t);
}

/*
 * deviceProperties (new_devprop, read_devprop, devprop_member): Kineto's and CUDA's member
 * names, the index as the id until "id" says otherwise, other elements and members skipped.
 */
static void device_properties_take_either_name_and_skip_the_rest(void **state)
{
	(void)state;
	static const char text[] =
		"{\"deviceProperties\":[7,[1,[2]],\"x\",{\"id\":5,\"name\":\"A\",\"numSms\":132,"
		"\"computeMajor\":9,\"computeMinor\":0,\"totalGlobalMem\":85520809984,"
		"\"extra\":{\"a\":[1]},\"clockRate\":1980000},"
		"{\"name\":\"B\",\"multiProcessorCount\":108,\"major\":8,\"minor\":6,"
		"\"numSms\":\"many\",\"memoryClockRate\":1593000,\"memoryBusWidth\":5120}],"
		"\"traceEvents\":[]}";
	struct kp_trace t;
	struct kp_diag d;
	assert_int_equal(load_text(&t, text, 0, &d), 0);
	assert_int_equal(t.ndevs, 2);
	const struct kp_devprop *a = &t.devs[0], *b = &t.devs[1];
	assert_string_equal(a->name, "A");
	assert_int_equal(a->id, 5);
	assert_int_equal(a->sms, 132);
	assert_int_equal(a->cc_major, 9);
	assert_int_equal(a->cc_minor, 0);
	assert_int_equal(a->total_mem, 85520809984LL);
	assert_int_equal(a->clock_khz, 1980000);
	assert_int_equal(a->bus_bits, 0);
	assert_string_equal(b->name, "B");
	assert_int_equal(b->id, 1);    /* its index */
	assert_int_equal(b->sms, 108); /* "many" is not a number */
	assert_int_equal(b->cc_major, 8);
	assert_int_equal(b->cc_minor, 6);
	assert_int_equal(b->mem_clock_khz, 1593000);
	assert_int_equal(b->bus_bits, 5120);
	trace_free(&t);
	/* an object where the array belongs is ignored */
	assert_int_equal(load_text(&t, "{\"deviceProperties\":{\"name\":\"A\"},\"traceEvents\":[]}",
				   0, &d),
			 0);
	assert_int_equal(t.ndevs, 0);
	trace_free(&t);
}

/* ---- bad input: not a trace, malformed events, names, cut gzip ---- */

static void expect_not_a_trace(const char *text, const char *want)
{
	struct kp_trace t;
	struct kp_diag d;
	assert_int_equal(load_text(&t, text, 0, &d), -1);
	assert_int_equal(d.status, KP_BADINPUT);
	assert_string_equal(d.msg, want);
	assert_int_equal(diag_warn_total(&t.warn), 0);
	trace_free(&t);
}

static void json_that_is_not_a_trace_is_refused(void **state)
{
	(void)state;
	char want[600];
	snprintf(want, sizeof(want),
		 "%s/t.json:1:16: error: not a Chrome trace: 'traceEvents' is not an array",
		 tmpdir);
	expect_not_a_trace("{\"traceEvents\":{\"ph\":\"X\"}}", want);
	snprintf(want, sizeof(want),
		 "%s/t.json:1:2: error: not a Chrome trace: the top-level array holds no event objects",
		 tmpdir);
	expect_not_a_trace("[1, 2, 3]", want);
	snprintf(want, sizeof(want),
		 "%s/t.json:1:17: error: not a Chrome trace: 'traceEvents' holds no event objects",
		 tmpdir);
	expect_not_a_trace("{\"traceEvents\":[\"a\", [1]]}", want);
	snprintf(want, sizeof(want),
		 "%s/t.json: error: not a Chrome trace: no 'traceEvents' array in the top-level object",
		 tmpdir);
	expect_not_a_trace("{\"device\":\"H100\",\"flop_counter\":{\"mm\":1}}", want);
	expect_not_a_trace("{}", want);
	snprintf(want, sizeof(want),
		 "%s/t.json:1:1: error: not a Chrome trace: expected an object or array at the top level",
		 tmpdir);
	expect_not_a_trace("42", want);

	/* the array form and empty event lists are traces */
	struct kp_trace t;
	struct kp_diag d;
	assert_int_equal(
		load_text(&t,
			  "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":2}]",
			  0, &d),
		0);
	assert_int_equal(t.ngpu, 1);
	trace_free(&t);
	assert_int_equal(load_text(&t, "[]", 1, &d), 0);
	trace_free(&t);
	assert_int_equal(load_text(&t, "{\"traceEvents\":[]}", 1, &d), 0);
	trace_free(&t);
}

static void malformed_events_are_counted_warned_and_refused_under_strict(void **state)
{
	(void)state;
	static const char text[] =
		"{\"traceEvents\":[\n"
		"{\"cat\":\"kernel\",\"name\":\"noph\",\"ts\":1,\"dur\":2},\n"
		"{\"ph\":1,\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":2},\n"
		"{\"ph\":\"X\",\"cat\":[\"kernel\"],\"name\":\"k\",\"ts\":1,\"dur\":2},\n"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":7,\"ts\":1,\"dur\":2},\n"
		"17,\n"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ok\",\"ts\":1,\"dur\":2}]}";
	struct kp_trace t;
	struct kp_diag d;
	assert_int_equal(load_text(&t, text, 0, &d), 0);
	assert_int_equal(t.ngpu, 1);
	assert_string_equal(t.gpu[0].name, "ok");
	assert_int_equal(t.nevents, 6);
	assert_int_equal(t.nskipped, 5);
	assert_int_equal(diag_warn_total(&t.warn), 5);
	assert_int_equal(t.warn.nkinds, 1);
	assert_string_equal(t.warn.k[0].kind, "malformed events");
	static const char *const why[] = {
		"2:1: warning: skipped malformed event: no 'ph'",
		"3:1: warning: skipped malformed event: 'ph' is not a string",
		"4:1: warning: skipped malformed event: 'cat' is not a string",
		"5:1: warning: skipped malformed event: 'name' is not a string",
		"6:1: warning: skipped malformed event: not an object"
	};
	for (int i = 0; i < 5; i++) {
		char want[700];
		snprintf(want, sizeof(want), "%s/t.json:%s", tmpdir, why[i]);
		assert_string_equal(t.warn.k[0].shown[i], want);
	}
	trace_free(&t);
	assert_int_equal(load_text(&t, text, 1, &d), -1);
	assert_int_equal(d.status, KP_BADINPUT);
	assert_non_null(strstr(d.msg, "error: 5 data anomalies (--strict); first: "));
	assert_non_null(strstr(d.msg, "t.json:2:1: warning: skipped malformed event: no 'ph'"));
	trace_free(&t);
}

/*
 * read_event()'s member steps: "ph", "cat" and "name" skip an event on sight (counted, flows
 * apart; what follows is not read, so a bad "name" after a skipped "cat" is no anomaly); "ts"/"dur" are µs to ns, "pid"/"tid" numbers or strings; other members are skipped
 * whole, containers included; keys come in any order.
 */
static void event_members_read_or_skip_the_event_on_sight(void **state)
{
	(void)state;
	static const char text[] =
		"{\"traceEvents\":["
		"{\"ph\":\"i\",\"cat\":\"kernel\",\"name\":\"instant\",\"ts\":1},"
		"{\"ph\":\"s\",\"id\":1,\"ts\":1},{\"ph\":\"t\",\"id\":1,\"ts\":2},"
		"{\"ph\":\"f\",\"id\":1,\"ts\":3},{\"ph\":\"C\",\"name\":\"ctr\",\"ts\":3},"
		"{\"ph\":\"X\",\"cat\":\"overhead\",\"name\":7,\"ts\":1,\"dur\":1},"
		"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"mark\",\"pid\":1,\"tid\":1,"
		"\"ts\":2,\"dur\":5},"
		"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#4\","
		"\"pid\":\"host\",\"tid\":\"main\",\"ts\":10,\"dur\":50},"
		"{\"x\":{\"a\":[1,{\"ph\":\"i\"}]},\"dur\":3.5,\"tid\":7,\"args\":{\"device\":2,"
		"\"stream\":7},\"ts\":12,\"pid\":0,\"name\":\"k\",\"cat\":\"kernel\",\"ph\":\"X\"}"
		"]}";
	const char *path = write_file("members.json", text, 0);
	for (int annotations = 0; annotations <= 1; annotations++) {
		struct kp_trace t;
		struct kp_diag d = { 0 };
		struct kp_load_opts o = { .annotations = annotations };
		assert_int_equal(trace_load(&t, path, &o, &d), 0);
		assert_int_equal(t.nevents, 9);
		/* i, s, t, f, C, overhead; "mark" too unless annotations are kept */
		assert_int_equal(t.nskipped, annotations ? 6 : 7);
		assert_int_equal(t.nflows, 3);
		assert_int_equal(t.nannots, annotations ? 1 : 0);
		if (annotations) {
			assert_string_equal(t.annots[0].name, "mark");
			assert_int_equal(t.annots[0].ts_ns, 2000);
			assert_int_equal(t.annots[0].dur_ns, 5000);
			assert_int_equal(t.threads[t.annots[0].thread].pid, 1);
		}
		assert_int_equal(t.nsteps, 1);
		assert_int_equal(t.steps[0].num, 4);
		assert_int_equal(t.steps[0].ts_ns, 10000);
		assert_int_equal(t.steps[0].dur_ns, 50000);
		const struct kp_thread *th = &t.threads[t.steps[0].thread];
		assert_int_equal(th->pid_str, 1);
		assert_int_equal(th->tid_str, 1);
		assert_string_equal((const char *)(intptr_t)th->pid, "host");
		assert_string_equal((const char *)(intptr_t)th->tid, "main");
		assert_int_equal(t.ngpu, 1);
		assert_string_equal(t.gpu[0].name, "k");
		assert_int_equal(t.gpu[0].ts_ns, 12000);
		assert_int_equal(t.gpu[0].dur_ns, 3500);
		assert_int_equal(t.gpu[0].device, 2);
		assert_int_equal(t.gpu[0].stream, 7);
		assert_int_equal(diag_warn_total(&t.warn), 0);
		trace_free(&t);
	}
}

static void names_are_valid_utf8_and_keep_text_after_nul(void **state)
{
	(void)state;
	/* "\u0000", a lone continuation byte, an overlong '/', a cut 3-byte sequence, and an
	 * escaped lone surrogate (json_unescape makes it U+FFFD) */
	static const char text[] =
		"{\"traceEvents\":["
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"a\\u0000b\x80"
		"c\xc0\xaf"
		"d\xe2\x82\",\"ts\":1,\"dur\":2},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"s\\ud800t \xc3\xa9\",\"ts\":1,\"dur\":2}]}";
	struct kp_trace t;
	struct kp_diag d;
	assert_int_equal(load_text(&t, text, 0, &d), 0);
	assert_int_equal(t.ngpu, 2);
	assert_string_equal(t.gpu[0].name, "a\xef\xbf\xbd"
					   "b\xef\xbf\xbd"
					   "c\xef\xbf\xbd\xef\xbf\xbd"
					   "d\xef\xbf\xbd\xef\xbf\xbd");
	assert_string_equal(t.gpu[1].name, "s\xef\xbf\xbdt \xc3\xa9");
	trace_free(&t);
}

/* fuzz-trace: a warning quoting the first 80 bytes of a name cut a U+FFFD in two */
static void warnings_cut_names_between_utf8_sequences(void **state)
{
	(void)state;
	char text[512];
	char name[200] = "";
	for (int i = 0; i < 40; i++)
		strcat(name, "\xff"); /* 40 x U+FFFD = 120 bytes once cleaned */
	snprintf(text, sizeof(text),
		 "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"ts\":1}]}",
		 name);
	struct kp_trace t;
	struct kp_diag d;
	assert_int_equal(load_text(&t, text, 0, &d), 0);
	assert_int_equal(diag_warn_total(&t.warn), 1);
	const char *w = t.warn.k[0].shown[0];
	assert_int_equal(utf8_is_clean(w, strlen(w)), 1);
	/* 26 whole replacement characters (78 bytes) fit in 80 */
	char want[200] = "warning: skipped event '";
	for (int i = 0; i < 26; i++)
		strcat(want, "\xef\xbf\xbd");
	strcat(want, "' without 'dur'");
	assert_non_null(strstr(w, want));
	trace_free(&t);
}

/* A gzip file of @text cut to @keep bytes. */
static const char *write_cut_gz(const char *text, size_t keep)
{
	const char *p = write_file("cut.json.gz", text, 1);
	FILE *f = fopen(p, "rb");
	static unsigned char z[1 << 16];
	size_t n = fread(z, 1, sizeof(z), f);
	fclose(f);
	assert_true(keep < n);
	f = fopen(p, "wb");
	fwrite(z, 1, keep, f);
	fclose(f);
	return p;
}

static void a_cut_gzip_trace_keeps_its_complete_events(void **state)
{
	(void)state;
	/* incompressible names, so the cut lands inside the events */
	char text[8192];
	size_t n = (size_t)snprintf(text, sizeof(text), "{\"traceEvents\":[");
	unsigned x = 12345;
	for (int i = 0; i < 40; i++) {
		char name[41];
		for (int k = 0; k < 40; k++) {
			x = x * 1103515245u + 12345u;
			name[k] = (char)('a' + (x >> 16) % 26);
		}
		name[40] = 0;
		n += (size_t)snprintf(
			text + n, sizeof(text) - n,
			"%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"ts\":%d,\"dur\":2}",
			i ? "," : "", name, i);
	}
	snprintf(text + n, sizeof(text) - n, "]}");
	struct kp_load_opts o = { 0 };
	struct kp_trace t;
	struct kp_diag d = { 0 };
	const char *p = write_cut_gz(text, 1200);
	assert_int_equal(trace_load(&t, p, &o, &d), 0);
	assert_int_equal(t.truncated, 1);
	assert_true(t.ngpu > 5 && t.ngpu < 40);
	assert_int_equal(t.warn.nkinds, 1);
	char want[200];
	snprintf(want, sizeof(want),
		 "warning: trace is truncated at byte %lld (decompressed; the gzip data ends at compressed byte 1200); analyzed the %zu complete events",
		 (long long)t.trunc_off, t.ngpu);
	assert_non_null(strstr(t.warn.k[0].shown[0], want));
	trace_free(&t);
	o.strict = 1;
	assert_int_equal(trace_load(&t, p, &o, &d), -1);
	assert_int_equal(d.status, KP_BADINPUT);
	assert_non_null(
		strstr(d.msg,
		       "(decompressed; the gzip data ends at compressed byte 1200) (--strict)"));
	trace_free(&t);

	/* cut in the 8-byte trailer: the JSON is whole, the gzip is not */
	const char *small =
		"{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":2}]}";
	p = write_file("whole.json.gz", small, 1);
	FILE *f = fopen(p, "rb");
	fseek(f, 0, SEEK_END);
	long zlen = ftell(f);
	fclose(f);
	p = write_cut_gz(small, (size_t)zlen - 3);
	o.strict = 0;
	assert_int_equal(trace_load(&t, p, &o, &d), 0);
	assert_int_equal(t.ngpu, 1);
	assert_int_equal(t.truncated, 0);
	snprintf(want, sizeof(want),
		 "warning: gzip data ends early at compressed byte %ld, after decompressed byte %zu; the JSON in it is complete",
		 zlen - 3, strlen(small));
	assert_non_null(strstr(t.warn.k[0].shown[0], want));
	trace_free(&t);
	o.strict = 1;
	assert_int_equal(trace_load(&t, p, &o, &d), -1);
	assert_int_equal(d.status, KP_BADINPUT);
	trace_free(&t);
}

/* ---- parallel parse ---- */

/* A trace of @n events with traps for the chunk cuts; malloc'ed. */
static char *many_events(int n)
{
	size_t cap = (size_t)n * 400 + 1024, len = 0;
	char *s = malloc(cap);
	len += (size_t)
		sprintf(s, "{\"deviceProperties\": [{\"id\": 0, \"numSms\": 132}, {\"id\": 1}],\n"
			   "\"traceEvents\": [\n");
	for (int i = 0; i < n; i++) {
		const char *sep = i ? ",\n" : "";
		switch (i % 7) {
		case 0: /* an op, a name with the cut pattern, a nested object */
			len += (size_t)sprintf(
				s + len,
				"%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm }, {\\\"x\", \"pid\": 1, \"tid\": \"t%d\", \"ts\": %d, \"dur\": 50, \"args\": {\"External id\": %d, \"Input Dims\": [[4, 4], [4, 4]], \"o\": [{\"a\": 1}, {\"b\": 2}]}}",
				sep, i % 3, 1000 + i * 10, i);
			break;
		case 1:
			len += (size_t)sprintf(
				s + len,
				"%s{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": \"t%d\", \"ts\": %d, \"dur\": 5, \"args\": {\"External id\": %d, \"correlation\": %d}}",
				sep, (i - 1) % 3, 1000 + i * 10, i - 1, i);
			break;
		case 2: /* zero dur: a warning located at merge */
			len += (size_t)sprintf(
				s + len,
				"%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d\", \"pid\": 0, \"tid\": 7, \"ts\": %d, \"dur\": %d, \"args\": {\"correlation\": %d, \"Collective name\": \"allreduce\"%s}}",
				sep, i % 5, 1000 + i * 10, i % 4 ? 20 : 0, i - 1,
				i % 3 ? ""
				      : ", \"kernel_flop\": 77, \"kernel_num_gb\": 0.25"); /* side table */
			break;
		case 3: /* B/E pairs: the serial path */
			len += (size_t)sprintf(
				s + len,
				"%s{\"ph\": \"%c\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 1, \"tid\": \"t0\", \"ts\": %d}",
				sep, i % 2 ? 'B' : 'E', 1000 + i * 10);
			break;
		case 4:
			len += (size_t)sprintf(
				s + len,
				"%s{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\", \"pid\": 1, \"tid\": 9, \"ts\": %d, \"dur\": 60}",
				sep, i, 1000 + i * 10);
			break;
		case 5:
			len += (size_t)sprintf(
				s + len,
				"%s{\"ph\": \"M\", \"name\": \"thread_name\", \"args\": {\"name\": \"}, {\"}}",
				sep);
			break;
		default:
			if (i % 2) /* an op with side fields (kp_trace.opx, op indexes rebased) */
				len += (size_t)sprintf(
					s + len,
					"%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"triton_poi_%d\", \"pid\": 1, \"tid\": \"t1\", \"ts\": %d, \"dur\": 5, \"args\": {\"kernel_flop\": %d}}",
					sep, i % 3, 1000 + i * 10, i);
			else
				len += (size_t)sprintf(
					s + len,
					"%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"no ts\", \"dur\": 1}",
					sep);
		}
	}
	sprintf(s + len, "\n], \"traceName\": \"x\"}\n");
	return s;
}

static int load_jobs(struct kp_trace *t, const char *path, int jobs, size_t chunk,
		     struct kp_diag *d)
{
	struct kp_load_opts o = { .jobs = jobs, .chunk = chunk, .warn_all = 1 };
	memset(d, 0, sizeof(*d));
	return trace_load(t, path, &o, d);
}

/* Every record, count and warning of @a and @b alike (names by text and by sharing). */
static void same_trace(const struct kp_trace *a, const struct kp_trace *b)
{
	assert_int_equal(a->nevents, b->nevents);
	assert_int_equal(a->nskipped, b->nskipped);
	assert_int_equal(a->nops, b->nops);
	assert_int_equal(a->nlaunches, b->nlaunches);
	assert_int_equal(a->ngpu, b->ngpu);
	assert_int_equal(a->ncolls, b->ncolls);
	assert_int_equal(a->nsteps, b->nsteps);
	assert_int_equal(a->nthreads, b->nthreads);
	assert_int_equal(a->truncated, b->truncated);
	assert_int_equal(a->trunc_off, b->trunc_off);
	for (size_t i = 0; i < a->nthreads; i++) {
		assert_int_equal(a->threads[i].tid_str, b->threads[i].tid_str);
		if (a->threads[i].tid_str)
			assert_string_equal((const char *)(intptr_t)a->threads[i].tid,
					    (const char *)(intptr_t)b->threads[i].tid);
	}
	for (size_t i = 0; i < a->nops; i++) {
		assert_int_equal(a->ops[i].ts_ns, b->ops[i].ts_ns);
		assert_int_equal(a->ops[i].dur_ns, b->ops[i].dur_ns);
		assert_int_equal(a->ops[i].thread, b->ops[i].thread);
		assert_int_equal(a->ops[i].parent, b->ops[i].parent);
		assert_int_equal(a->ops[i].off, b->ops[i].off);
		assert_int_equal(a->ops[i].nslots, b->ops[i].nslots);
		assert_string_equal(a->ops[i].name, b->ops[i].name);
		/* interned once: equal names are one pointer in each trace */
		assert_int_equal(a->ops[i].name == a->ops[0].name,
				 b->ops[i].name == b->ops[0].name);
		assert_int_equal(a->op_ext[i], b->op_ext[i]);
		const struct kp_opx *ax = trace_opx(a, &a->ops[i]), *bx = trace_opx(b, &b->ops[i]);
		assert_int_equal(ax->kernel_flop, bx->kernel_flop);
		assert_true(ax->kernel_num_gb == bx->kernel_num_gb);
		assert_int_equal(ax->seq, bx->seq);
	}
	for (size_t i = 0; i < a->nlaunches; i++) {
		assert_int_equal(a->launches[i].thread, b->launches[i].thread);
		assert_int_equal(a->launch_ids[i].corr, b->launch_ids[i].corr);
		assert_int_equal(a->launch_ids[i].ext_id, b->launch_ids[i].ext_id);
	}
	for (size_t i = 0; i < a->ngpu; i++) {
		assert_int_equal(a->gpu[i].ts_ns, b->gpu[i].ts_ns);
		assert_string_equal(a->gpu[i].name, b->gpu[i].name);
		assert_int_equal(a->gpu_ids[i].corr, b->gpu_ids[i].corr);
		assert_int_equal(a->gpu_ids[i].ext_id, b->gpu_ids[i].ext_id);
		const struct kp_gpux *ax = trace_gpux(a, &a->gpu[i]),
				     *bx = trace_gpux(b, &b->gpu[i]);
		assert_int_equal(ax->bytes, bx->bytes);
		assert_int_equal(ax->kernel_flop, bx->kernel_flop);
		assert_true(ax->kernel_num_gb == bx->kernel_num_gb);
		assert_int_equal(ax->mflops, bx->mflops);
		assert_int_equal(ax->sm_clock_mhz, bx->sm_clock_mhz);
	}
	for (size_t i = 0; i < a->ncolls; i++)
		assert_int_equal(a->colls[i].gpu, b->colls[i].gpu);
	for (size_t i = 0; i < a->nsteps; i++)
		assert_int_equal(a->steps[i].thread, b->steps[i].thread);
	assert_int_equal(a->warn.nkinds, b->warn.nkinds);
	for (int k = 0; k < a->warn.nkinds; k++) {
		const struct kp_warn_kind *x = &a->warn.k[k], *y = &b->warn.k[k];
		assert_string_equal(x->kind, y->kind);
		assert_int_equal(x->count, y->count);
		assert_int_equal(x->nshown, y->nshown);
		for (int m = 0; m < x->nshown; m++)
			assert_string_equal(x->shown[m], y->shown[m]);
		assert_int_equal(x->nmore, y->nmore);
		for (long m = 0; m < x->nmore; m++)
			assert_string_equal(x->more[m], y->more[m]);
	}
}

static void parallel_parse_gives_the_serial_records(void **state)
{
	(void)state;
	char *text = many_events(3000);
	const char *path = write_file("many.json", text, 0);
	struct kp_trace a, b;
	struct kp_diag d;
	assert_int_equal(load_jobs(&a, path, 1, 0, &d), 0);
	assert_true(a.nops > 100 && a.warn.nkinds > 0);
	assert_true(a.ngpux > 100 && a.ngpux < a.ngpu); /* side table, indexes rebased at merge */
	assert_true(a.nopx > 100 && a.nopx < a.nops);
	static const size_t chunks[] = { 64, 300, 4096, 65536 };
	for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
		assert_int_equal(load_jobs(&b, path, 3, chunks[c], &d), 0);
		same_trace(&a, &b);
		trace_free(&b);
	}
	trace_free(&a);

	/* truncated: the same complete events and the same warning */
	text[strlen(text) * 2 / 3] = '\0';
	path = write_file("cut.json", text, 0);
	assert_int_equal(load_jobs(&a, path, 1, 0, &d), 0);
	assert_true(a.truncated);
	assert_int_equal(load_jobs(&b, path, 4, 500, &d), 0);
	same_trace(&a, &b);
	trace_free(&a);
	trace_free(&b);

	/* malformed: the same error at the same place */
	char *bad = strstr(text + strlen(text) / 2, "\"dur\": 5");
	bad[7] = 'x';
	path = write_file("bad.json", text, 0);
	struct kp_diag d1;
	assert_int_equal(load_jobs(&a, path, 1, 0, &d1), -1);
	assert_int_equal(load_jobs(&b, path, 2, 700, &d), -1);
	assert_int_equal(d.status, d1.status);
	assert_string_equal(d.msg, d1.msg);
	assert_non_null(strstr(d.msg, "bad.json:"));
	assert_non_null(strstr(d.msg, ": error: "));
	trace_free(&a);
	trace_free(&b);
	free(text);
}

/* Events apart by runs of whitespace, some longer than a chunk or the cut search's window. */
static void parallel_parse_cuts_across_long_whitespace(void **state)
{
	(void)state;
	char *text = many_events(400);
	size_t len = strlen(text), cap = len * 40 + 1, n = 0, k = 0;
	char *sp = malloc(cap);
	for (const char *q = text; *q; q++) {
		if (q[0] == ',' && q[1] == '\n' && q[2] == '{') {
			size_t w = k++ % 9 == 0 ? 9000 : k % 3 ? 1 : 70;
			memset(sp + n, ' ', w); /* before the ',' */
			n += w;
			sp[n++] = ',';
			memset(sp + n, k % 2 ? '\n' : '\t', w); /* between ',' and '{' */
			n += w;
			continue;
		}
		assert_true(n + 1 < cap);
		sp[n++] = *q;
	}
	sp[n] = '\0';
	assert_true(k > 300);
	const char *path = write_file("spaced.json", sp, 0);
	struct kp_trace a, b;
	struct kp_diag d;
	assert_int_equal(load_jobs(&a, path, 1, 0, &d), 0);
	assert_true(a.nops > 50);
	static const size_t chunks[] = { 64, 3000, 8192, 20000 };
	for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
		assert_int_equal(load_jobs(&b, path, 3, chunks[c], &d), 0);
		same_trace(&a, &b);
		trace_free(&b);
	}
	trace_free(&a);
	free(sp);
	free(text);
}

/* KPROF_TIMING's counts: a parallel parse takes most chunks' records, and says how it read. */
static void parallel_parse_reports_what_its_threads_did(void **state)
{
	(void)state;
	size_t cap = 3000 * 160 + 64, len = 0;
	char *text = malloc(cap);
	len += (size_t)sprintf(text, "{\"traceEvents\": [\n");
	for (int i = 0; i < 3000; i++)
		len += (size_t)sprintf(
			text + len,
			"%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": %d, \"dur\": 5}",
			i ? ",\n" : "", 1000 + 10 * i);
	sprintf(text + len, "\n]}\n");
	struct kp_load_stats st;
	struct kp_load_opts o = { .jobs = 3, .chunk = 4096, .stats = &st };
	struct kp_trace t;
	struct kp_diag d = { 0 };
	assert_int_equal(trace_load(&t, write_file("k.json", text, 0), &o, &d), 0);
	assert_int_equal(t.ngpu, 3000);
	assert_int_equal(st.threads, 3);
	assert_int_equal(st.direct, 1);
	assert_true(st.chunks > 30);
	/* all but the first (the document's start) and the last (the array's end) */
	assert_int_equal(st.merged, st.chunks - 2);
	assert_true(st.workers_busy_ns > 0 && st.workers_read_ns > 0);
	assert_true(st.workers_read_ns <= st.workers_busy_ns);
	trace_free(&t);

	assert_int_equal(trace_load(&t, write_file("k.json.gz", text, 1), &o, &d), 0);
	assert_int_equal(t.ngpu, 3000);
	assert_int_equal(st.direct, 0); /* a reader thread inflates */
	assert_true(st.merged > 0 && st.merged < st.chunks);
	assert_int_equal(st.workers_read_ns, 0);
	trace_free(&t);

	o.jobs = 1;
	assert_int_equal(trace_load(&t, write_file("k.json", text, 0), &o, &d), 0);
	assert_int_equal(st.threads, 0);
	assert_int_equal(st.chunks, 0);
	trace_free(&t);
	free(text);
}

/* Threads and chunks in flight fit the memory budget, whatever --jobs asks; records the same. */
static void parallel_parse_threads_fit_the_memory_budget(void **state)
{
	(void)state;
	char *text = many_events(12000);
	/* under 32 MB: the budget is its floor, 1 MB; over it: more chunks than go in flight */
	assert_true(strlen(text) > (1u << 20) && strlen(text) < (32u << 20));
	const char *path = write_file("budget.json", text, 0);
	struct kp_trace a, b;
	struct kp_diag d = { 0 };
	assert_int_equal(load_jobs(&a, path, 1, 0, &d), 0);
	struct kp_load_stats st;
	struct kp_load_opts o = { .jobs = 16, .chunk = 256 << 10, .warn_all = 1, .stats = &st };
	/* 1 MB: 4 chunks of 256 kB, so 2 threads */
	assert_int_equal(trace_load(&b, path, &o, &d), 0);
	assert_int_equal(st.threads, 2);
	same_trace(&a, &b);
	trace_free(&b);
	/* 16 chunks of 64 kB: 14 threads */
	o.chunk = 64 << 10;
	assert_int_equal(trace_load(&b, path, &o, &d), 0);
	assert_int_equal(st.threads, 14);
	same_trace(&a, &b);
	trace_free(&b);
	/* within the budget: the threads asked for */
	o.jobs = 3;
	assert_int_equal(trace_load(&b, path, &o, &d), 0);
	assert_int_equal(st.threads, 3);
	same_trace(&a, &b);
	trace_free(&b);
	trace_free(&a);
	free(text);

	/* chunks from the size (4 to 32 MB: 1 MB budget): -j 200 would cut 64 kB chunks, 16 fit;
	 * 14 threads make larger ones, fewer fit, ... down to 2 threads of 256 kB chunks */
	text = many_events(40000);
	assert_true(strlen(text) > (4u << 20) && strlen(text) < (32u << 20));
	path = write_file("budget4.json", text, 0);
	assert_int_equal(load_jobs(&a, path, 1, 0, &d), 0);
	o.jobs = 200;
	o.chunk = 0;
	assert_int_equal(trace_load(&b, path, &o, &d), 0);
	assert_int_equal(st.threads, 2);
	same_trace(&a, &b);
	trace_free(&b);
	trace_free(&a);
	free(text);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reads_relative_float_times_as_integer_ns),
		cmocka_unit_test(links_kernel_to_the_model_level_op_through_the_driver_launch),
		cmocka_unit_test(links_2022_traces_by_time_nesting_and_counts_one_level),
		cmocka_unit_test(graph_kernels_sharing_one_correlation_all_link),
		cmocka_unit_test(rare_fields_sit_in_side_tables_and_link_ids_are_freed),
		cmocka_unit_test(sequence_numbers_are_kept_for_conv_forwards_and_their_nodes),
		cmocka_unit_test(integer_args_keep_the_values_their_bounds_allow),
		cmocka_unit_test(input_dims_keep_shapes_lists_and_the_slot_cap),
		cmocka_unit_test(dropped_records_leave_names_and_warnings),
		cmocka_unit_test(reads_b_e_pairs_string_pids_and_bare_event_arrays),
		cmocka_unit_test(keeps_complete_events_of_a_truncated_trace),
		cmocka_unit_test(malformed_json_is_a_located_error),
		cmocka_unit_test(warns_on_kernels_without_dur_and_keeps_going),
		cmocka_unit_test(reads_gzip_and_reports_missing_files),
		cmocka_unit_test(reads_kprof_clock_metadata),
		cmocka_unit_test(device_properties_take_either_name_and_skip_the_rest),
		cmocka_unit_test(json_that_is_not_a_trace_is_refused),
		cmocka_unit_test(malformed_events_are_counted_warned_and_refused_under_strict),
		cmocka_unit_test(event_members_read_or_skip_the_event_on_sight),
		cmocka_unit_test(names_are_valid_utf8_and_keep_text_after_nul),
		cmocka_unit_test(a_cut_gzip_trace_keeps_its_complete_events),
		cmocka_unit_test(warnings_cut_names_between_utf8_sequences),
		cmocka_unit_test(parallel_parse_gives_the_serial_records),
		cmocka_unit_test(parallel_parse_threads_fit_the_memory_budget),
		cmocka_unit_test(parallel_parse_cuts_across_long_whitespace),
		cmocka_unit_test(parallel_parse_reports_what_its_threads_did),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
