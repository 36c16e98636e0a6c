/*
 * test-analyze.c — rows from linked work, FLOP splitting, folding, sorting, options.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kprof/analyze.h"
#include "kprof/breakdown.h"
#include "kprof/devdb.h"
#include "kprof/kernrole.h"
#include "kprof/link.h"
#include "kprof/opts.h"
#include "kprof/sort.h"
#include "kprof/trace.h"
#include "kprof/units.h"

/* parse @keys and sort (sort.h), as the command does */
static int analyze_sort(struct kp_report *r, const char *keys, const char **bad)
{
	struct kp_sort_spec sp;
	if (sort_parse(&sp, SORT_ANALYZE, keys, bad) < 0)
		return -1;
	sort_analyze(r, &sp);
	return 0;
}

static struct kp_devdb db;

/*
 * One aten::mm [1024,1024]x[1024,1024] bf16 (2^31 FLOPs) with two kernels of 3 us and
 * 1 us, and one unlinked memcpy of 4096 bytes taking 4 us.
 */
static const char trace_text[] =
	"{\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA H100 80GB HBM3\",\"numSms\":132}],"
	"\"traceEvents\":["
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":50,"
	"\"args\":{\"External id\":1,\"Input Dims\":[[1024,1024],[1024,1024]],"
	"\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Concrete Inputs\":[\"\",\"\"]}},"
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":1,"
	"\"dur\":1,\"args\":{\"correlation\":10,\"External id\":1}},"
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":3,"
	"\"dur\":1,\"args\":{\"correlation\":11,\"External id\":1}},"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"void gemm_main<float>(int, char*)\",\"pid\":0,\"tid\":7,"
	"\"ts\":10,\"dur\":3,\"args\":{\"correlation\":10}},"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"splitk_reduce\",\"pid\":0,\"tid\":7,\"ts\":14,\"dur\":1,"
	"\"args\":{\"correlation\":11}},"
	"{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> Device)\",\"pid\":0,"
	"\"tid\":7,\"ts\":20,\"dur\":4,\"args\":{\"bytes\":4096}}"
	"]}";

static char path[] = "/tmp/kprof-test-analyze-XXXXXX";

static void run(struct kp_trace *t, struct kp_report *r, enum kp_group g)
{
	struct kp_diag d = { 0 };
	struct kp_load_opts lo = { 0 };
	assert_int_equal(trace_load(t, path, &lo, &d), 0);
	link_trace(t);
	struct kp_analyze_opts o = { .group = g, .db = &db };
	assert_int_equal(analyze_run(t, &o, r), 0);
	assert_int_equal(analyze_sort(r, NULL, &(const char *){ NULL }), 0);
}

static const struct kp_row *row(const struct kp_report *r, const char *name)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (!strcmp(r->rows[i].name, name))
			return &r->rows[i];
	return NULL;
}

static void op_rows_carry_op_flops_over_the_sum_of_kernel_time(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_report r;
	run(&t, &r, GROUP_OP);
	assert_int_equal(r.nrows, 2);
	const struct kp_row *mm = row(&r, "aten::mm");
	assert_int_equal(mm->calls, 1);
	assert_int_equal(mm->kernels, 2);
	assert_int_equal(mm->time_ns, 4000);
	assert_int_equal(mm->flops, 2LL * 1024 * 1024 * 1024);
	assert_int_equal(mm->bytes, 3LL * 1024 * 1024 * 2);
	/* 2^31 FLOP in 4 us = 536.9 TFLOP/s = 54.3% of 989.4 */
	assert_true(mm->flops_per_s > 5.368e14 && mm->flops_per_s < 5.369e14);
	assert_true(mm->pct_peak_flops > 54.2 && mm->pct_peak_flops < 54.3);
	assert_string_equal(mm->bound, "compute");
	const struct kp_row *un = row(&r, "(unlinked)");
	assert_int_equal(un->bytes, 4096);
	assert_int_equal(un->flops, -1);
	assert_true(un->flags & ROW_UNLINKED);
	assert_int_equal(r.tot.gpu_time_ns, 8000);
	assert_int_equal(r.tot.gpu_busy_ns, 8000);
	assert_int_equal(r.tot.flops, 2LL * 1024 * 1024 * 1024);
	analyze_free(&r);
	trace_free(&t);
}

static void kernel_rows_give_op_flops_to_math_kernels_only(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_report r;
	run(&t, &r, GROUP_KERNEL);
	assert_int_equal(r.nrows, 3);
	const struct kp_row *a = row(&r, "void gemm_main<float>(int, char*)");
	const struct kp_row *b = row(&r, "splitk_reduce");
	/* the GEMM kernel gets all FLOPs and bytes; the split-K reduction none, never "compute" */
	assert_int_equal(a->flops, 1LL << 31);
	assert_int_equal(a->bytes, 3LL * 1024 * 1024 * 2);
	assert_int_equal(b->flops, -1);
	assert_int_equal(b->bytes, -1);
	assert_null(b->bound);
	assert_true(b->pct_peak_flops < 0);
	assert_string_equal(a->op, "aten::mm");
	/* totals are the op's, whatever the grouping */
	assert_int_equal(r.tot.flops, 1LL << 31);
	/* default sort: time descending (the 4 us memcpy, then the 3 us kernel) */
	assert_string_equal(r.rows[0].name, "Memcpy HtoD (Pageable -> Device)");
	assert_string_equal(r.rows[1].name, "void gemm_main<float>(int, char*)");
	analyze_free(&r);
	trace_free(&t);
}

/*
 * attribute()'s last step: each event with a figure is held against its own peak (the op's
 * precision for FLOPs, the path it crossed for bytes), weighted by its time.
 */
static void rows_weigh_each_event_against_its_own_peak(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_report r;
	run(&t, &r, GROUP_KERNEL);
	const struct kp_row *a = row(&r, "void gemm_main<float>(int, char*)");
	const struct kp_row *b = row(&r, "splitk_reduce");
	const struct kp_row *m = row(&r, "Memcpy HtoD (Pageable -> Device)");
	double pk = devdb_peak_flops(r.dev, PREC_BF16, 0), bw = devdb_path_bw(r.dev, MEMPATH_DRAM);
	double host = devdb_path_bw(r.dev, MEMPATH_HOST);
	assert_true(pk > 0 && bw > 0 && host > 0);
	assert_int_equal(a->flops_time_ns, 3000);
	assert_int_equal(a->bytes_time_ns, 3000);
	assert_true(fabs(a->peak_flop_ns - pk * 3000) <= 1e-9 * pk * 3000);
	assert_true(fabs(a->peak_bw_ns - bw * 3000) <= 1e-9 * bw * 3000);
	assert_int_equal(b->flops_time_ns, 0);
	assert_int_equal(b->bytes_time_ns, 0);
	assert_int_equal(m->flops_time_ns, 0);
	assert_int_equal(m->bytes_time_ns, 4000);
	assert_true(fabs(m->peak_bw_ns - host * 4000) <= 1e-9 * host * 4000);
	assert_int_equal(r.mempaths, 1u << MEMPATH_HOST);
	analyze_free(&r);
	trace_free(&t);
}

/*
 * opts.events (kprof augment): each GPU event's own figures and peaks, the ones its kernel
 * row sums: the GEMM all of the op's 2^31 FLOPs and 3 x 2 MiB, the split-K reduction
 * none, the unlinked memcpy its 4096 bytes against the host link.
 */
static void events_get_the_figures_their_kernel_rows_sum(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_report r;
	struct kp_diag d = { 0 };
	struct kp_load_opts lo = { 0 };
	assert_int_equal(trace_load(&t, path, &lo, &d), 0);
	link_trace(&t);
	assert_int_equal(t.ngpu, 3);
	struct kp_event_cost ev[3];
	memset(ev, 0, sizeof(ev));
	struct kp_analyze_opts o = { .group = GROUP_KERNEL, .db = &db, .events = ev };
	assert_int_equal(analyze_run(&t, &o, &r), 0);
	double pk = devdb_peak_flops(r.dev, PREC_BF16, 0);
	double host = devdb_path_bw(r.dev, MEMPATH_HOST), bw = devdb_path_bw(r.dev, MEMPATH_DRAM);
	int seen = 0;
	for (size_t i = 0; i < t.ngpu; i++) {
		const char *name = t.gpu[i].name;
		if (!strcmp(name, "void gemm_main<float>(int, char*)")) {
			assert_true(ev[i].flops == (double)(1LL << 31));
			assert_true(ev[i].bytes == 3.0 * 1024 * 1024 * 2);
			assert_true(ev[i].peak_flops == pk && ev[i].peak_bw == bw);
			assert_string_equal(ev[i].prec, "bf16");
			seen |= 1;
		} else if (!strcmp(name, "splitk_reduce")) {
			assert_true(ev[i].flops == -1 && ev[i].bytes == -1);
			seen |= 2;
		} else {
			assert_true(ev[i].flops == -1 && ev[i].bytes == 4096);
			assert_true(ev[i].peak_bw == host);
			seen |= 4;
		}
	}
	assert_int_equal(seen, 7);
	analyze_free(&r);
	trace_free(&t);
}

static void top_folds_the_rest_into_an_others_row_summing_to_100(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_report r;
	run(&t, &r, GROUP_KERNEL);
	analyze_select(&r, 1, 0);
	assert_int_equal(r.nrows, 2);
	assert_true(r.rows[1].flags & ROW_OTHERS);
	assert_string_equal(r.rows[1].name, "(others: 2 kernels)");
	assert_true(r.rows[0].time_pct + r.rows[1].time_pct > 99.999);
	analyze_free(&r);
	trace_free(&t);
}

static void min_pct_folds_small_rows(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_report r;
	run(&t, &r, GROUP_KERNEL);
	analyze_select(&r, 0, 20); /* 50%, 37.5%, 12.5% */
	assert_int_equal(r.nrows, 3);
	assert_string_equal(r.rows[2].name, "(others: 1 kernel)");
	analyze_free(&r);
	trace_free(&t);
}

static void sort_keys_are_checked_and_directions_apply(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_report r;
	const char *bad = NULL;
	run(&t, &r, GROUP_KERNEL);
	assert_int_equal(analyze_sort(&r, "tflop", &bad), -1);
	assert_string_equal(bad, "tflop");
	assert_int_equal(analyze_sort(&r, "time:sideways", &bad), -1);
	assert_int_equal(analyze_sort(&r, "time:asc", &bad), 0);
	assert_string_equal(r.rows[0].name, "splitk_reduce");
	assert_int_equal(analyze_sort(&r, "name", &bad), 0);
	assert_string_equal(r.rows[0].name, "Memcpy HtoD (Pageable -> Device)");
	analyze_free(&r);
	trace_free(&t);
}

static void unknown_device_keeps_absolute_figures_and_warns(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_report r;
	struct kp_diag d = { 0 };
	struct kp_load_opts lo = { 0 };
	assert_int_equal(trace_load(&t, path, &lo, &d), 0);
	link_trace(&t);
	struct kp_analyze_opts o = { .group = GROUP_OP, .db = &db, .device = "Imaginary GPU 9000" };
	analyze_run(&t, &o, &r);
	assert_null(r.dev);
	const struct kp_row *mm = row(&r, "aten::mm");
	assert_true(mm->flops_per_s > 0);
	assert_true(mm->pct_peak_flops < 0);
	assert_int_equal(diag_warn_total(&r.warn), 1);
	analyze_free(&r);
	trace_free(&t);
}

/*
 * Issue 23 item 8: two aten::fill_ over the H100's DRAM peak.  fill_ writes its tensor once:
 * [32,64,56,56] fp32 is 32*64*56*56*4 = 25,690,112 B, within the 50 MiB (52,428,800 B) L2,
 * in 7 us = 3670 GB/s; [128,64,56,56] is 102,760,448 B, past the L2, in 28 us = 3670 GB/s.
 */
static const char l2_trace[] =
	"{\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA H100 80GB HBM3\",\"numSms\":132}],"
	"\"traceEvents\":["
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::fill_\",\"pid\":1,\"tid\":1,\"ts\":0,"
	"\"dur\":5,\"args\":{\"External id\":1,\"Input Dims\":[[32,64,56,56],[]],"
	"\"Input type\":[\"float\",\"Scalar\"],\"Concrete Inputs\":[\"\",\"0\"]}},"
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
	"\"ts\":1,\"dur\":1,\"args\":{\"correlation\":10,\"External id\":1}},"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"fill_kernel\",\"pid\":0,\"tid\":7,\"ts\":10,"
	"\"dur\":7,\"args\":{\"correlation\":10}},"
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::fill_\",\"pid\":1,\"tid\":1,\"ts\":20,"
	"\"dur\":5,\"args\":{\"External id\":2,\"Input Dims\":[[128,64,56,56],[]],"
	"\"Input type\":[\"float\",\"Scalar\"],\"Concrete Inputs\":[\"\",\"0\"]}},"
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
	"\"ts\":21,\"dur\":1,\"args\":{\"correlation\":11,\"External id\":2}},"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"fill_kernel\",\"pid\":0,\"tid\":7,\"ts\":30,"
	"\"dur\":28,\"args\":{\"correlation\":11}}"
	"]}";

static void over_dram_peak_within_l2_is_marked_fits_l2(void **state)
{
	(void)state;
	char tp[] = "/tmp/kprof-test-l2-XXXXXX";
	int fd = mkstemp(tp);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, l2_trace, strlen(l2_trace)), (ssize_t)strlen(l2_trace));
	close(fd);
	struct kp_trace t;
	struct kp_report r;
	struct kp_diag d = { 0 };
	struct kp_load_opts lo = { 0 };
	assert_int_equal(trace_load(&t, tp, &lo, &d), 0);
	link_trace(&t);
	struct kp_analyze_opts o = { .group = GROUP_OP_SHAPE, .db = &db };
	assert_int_equal(analyze_run(&t, &o, &r), 0);
	assert_int_equal(r.nrows, 2);
	const struct kp_row *small = NULL, *big = NULL;
	for (size_t i = 0; i < r.nrows; i++)
		if (r.rows[i].bytes == 25690112)
			small = &r.rows[i];
		else if (r.rows[i].bytes == 102760448)
			big = &r.rows[i];
	assert_non_null(small);
	assert_non_null(big);
	/* 25690112 / 7e-6 / 3350e9 = 109.6%; 102760448 / 28e-6 / 3350e9 = 109.6% */
	assert_true(small->pct_peak_bw > 109.5 && small->pct_peak_bw < 109.6);
	assert_int_equal(small->flags & (ROW_OVER_PEAK | ROW_FITS_L2), ROW_OVER_PEAK | ROW_FITS_L2);
	assert_true(big->flags & ROW_OVER_PEAK);
	assert_false(big->flags & ROW_FITS_L2);
	analyze_free(&r);
	trace_free(&t);
	unlink(tp);
}

static void sm_clock_option_scales_the_peak(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_report r;
	struct kp_diag d = { 0 };
	struct kp_load_opts lo = { 0 };
	assert_int_equal(trace_load(&t, path, &lo, &d), 0);
	link_trace(&t);
	struct kp_analyze_opts o = { .group = GROUP_OP, .db = &db, .sm_clock_mhz = 915 };
	analyze_run(&t, &o, &r);
	/* half the 1830 MHz reference clock: twice the % of peak */
	const struct kp_row *mm = row(&r, "aten::mm");
	assert_true(mm->pct_peak_flops > 108.4 && mm->pct_peak_flops < 108.6);
	assert_true(mm->flags & ROW_OVER_PEAK);
	assert_int_equal(r.clock_source, CLOCK_OPTION);
	analyze_free(&r);
	trace_free(&t);
}

static void short_names_drop_return_type_and_arguments_only_for_signatures(void **state)
{
	(void)state;
	struct kp_arena a;
	arena_init(&a);
	assert_string_equal(kernrole_short_name(&a,
					       "void at::k<float, (int)3>(int, at::F<(char)1>)"),
			    "at::k<float, (int)3>");
	assert_string_equal(kernrole_short_name(&a, "Memcpy HtoD (Pageable -> Device)"),
			    "Memcpy HtoD (Pageable -> Device)");
	assert_string_equal(kernrole_short_name(&a, "nvjet_sm90_tst_256x128"),
			    "nvjet_sm90_tst_256x128");
	arena_free(&a);
}

static void options_parse_values_and_reject_bad_ones(void **state)
{
	(void)state;
	static const char *const fmts[] = { "table", "csv", NULL };
	long n = 0;
	int f = 0, flag = 1;
	const char *s = NULL;
	const struct kp_opt opts[] = {
		{ "top", 'n', OPT_INT, "N", "rows", &n, NULL, NULL },
		{ "format", 'f', OPT_CHOICE, "F", "fmt", &f, fmts, NULL },
		{ "strict", 0, OPT_FLAG, NULL, "strict", &flag, NULL, NULL },
		{ "sort", 's', OPT_STR, "K", "sort", &s, NULL, NULL },
		{ NULL, 0, 0, NULL, NULL, NULL, NULL, NULL },
	};
	char *argv[] = { "x",  "-n5",  "a.json", "--format=csv", "--no-strict",
			 "-s", "time", "--",     "-b",           NULL };
	int nargs;
	assert_int_equal(opts_parse("x", "", opts, 9, argv, &nargs), 0);
	assert_int_equal(n, 5);
	assert_int_equal(f, 1);
	assert_int_equal(flag, 0);
	assert_string_equal(s, "time");
	assert_int_equal(nargs, 2);
	assert_string_equal(argv[1], "a.json");
	assert_string_equal(argv[2], "-b");
	char *bad1[] = { "x", "--top", "ten", NULL };
	assert_int_equal(opts_parse("x", "", opts, 3, bad1, &nargs), -1);
	char *bad2[] = { "x", "--format", "xml", NULL };
	assert_int_equal(opts_parse("x", "", opts, 3, bad2, &nargs), -1);
	char *bad3[] = { "x", "--formt", "csv", NULL };
	assert_int_equal(opts_parse("x", "", opts, 3, bad3, &nargs), -1);
	char *bad4[] = { "x", "--top", NULL };
	assert_int_equal(opts_parse("x", "", opts, 2, bad4, &nargs), -1);
}

/* 70 devices: the one with the most GPU time names the device, however many come before it */
static void the_busiest_of_many_devices_names_the_device(void **state)
{
	(void)state;
	char tmp[] = "/tmp/kprof-test-analyze-devs-XXXXXX";
	int fd = mkstemp(tmp);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs("{\"deviceProperties\":[", f);
	for (int i = 0; i < 70; i++)
		fprintf(f, "%s{\"id\":%d,\"name\":\"%s\",\"numSms\":%d}", i ? "," : "", i,
			i == 69 ? "NVIDIA H100 80GB HBM3" : "NVIDIA A100-SXM4-80GB",
			i == 69 ? 132 : 108);
	fputs("],\"traceEvents\":[", f);
	for (int i = 0; i < 70; i++)
		fprintf(f,
			"%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":%d,\"tid\":7,"
			"\"ts\":%d,\"dur\":%d,\"args\":{\"device\":%d}}",
			i ? "," : "", i, 10 * i, i == 69 ? 9 : 1, i);
	fputs("]}", f);
	fclose(f);

	struct kp_trace t;
	struct kp_report r;
	struct kp_diag d = { 0 };
	struct kp_load_opts lo = { 0 };
	assert_int_equal(trace_load(&t, tmp, &lo, &d), 0);
	link_trace(&t);
	struct kp_analyze_opts o = { .group = GROUP_KERNEL, .db = &db };
	assert_int_equal(analyze_run(&t, &o, &r), 0);
	assert_non_null(r.device_name);
	assert_string_equal(r.device_name, "NVIDIA H100 80GB HBM3");
	assert_non_null(r.dev);
	analyze_free(&r);
	trace_free(&t);
	unlink(tmp);
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

/*
 * op-shape rows split their work by functional signature: the math-path attention's bmm of
 * one shape runs in the forward (S = QK^T) and the backward (dP = dO V^T), one part each.
 */
static void op_shape_rows_split_their_work_by_signature(void **state)
{
	(void)state;
	char file[512];
	const char *dir = getenv("KPROF_TESTDATA");
	snprintf(file, sizeof(file), "%s/handmade/backends_reference.json", dir ? dir : "testdata");
	struct kp_trace t;
	struct kp_report r;
	struct kp_diag d = { 0 };
	struct kp_load_opts lo = { 0 };
	assert_int_equal(trace_load(&t, file, &lo, &d), 0);
	link_trace(&t);
	struct kp_analyze_opts o = { .group = GROUP_OP_SHAPE, .db = &db, .step_series = 1 };
	assert_int_equal(analyze_run(&t, &o, &r), 0);
	const char *fwd = "attention fwd B=2 H=4 H_kv=2 S_q=128 S_k=128 D=64 D_v=64 causal bf16";
	const char *bwd = "attention bwd B=2 H=4 H_kv=2 S_q=128 S_k=128 D=64 D_v=64 causal bf16";
	int seen = 0;
	for (size_t i = 0; i < r.nrows; i++) {
		const struct kp_row *w = &r.rows[i];
		int64_t sum = 0;
		for (int k = 0; k < w->nparts; k++)
			sum += w->parts[k].time_ns;
		assert_int_equal(sum, w->time_ns);
		if (!strcmp(w->key, "aten::bmm [4,256,64]x[4,64,128] bf16")) {
			assert_int_equal(w->nparts, 2);
			assert_string_equal(w->parts[0].sig, fwd);
			assert_string_equal(w->parts[1].sig, bwd);
			assert_string_equal(w->parts[0].variant, "math");
			assert_int_equal(w->parts[0].time_ns, 9000);
			assert_int_equal(w->parts[1].calls, 1);
			assert_non_null(w->parts[1].step_ns);
			assert_int_equal(w->parts[1].step_ns[0], 9000);
			seen++;
		} else if (!strcmp(w->key, "aten::bmm [4,128,256]x[4,256,64] bf16")) {
			/* dV and dK: two calls of one attention backward */
			assert_int_equal(w->nparts, 1);
			assert_string_equal(w->parts[0].sig, bwd);
			assert_int_equal(w->parts[0].calls, 2);
			assert_int_equal(w->parts[0].sig_calls, 1);
			seen++;
		} else if (!strcmp(w->name, "aten::convolution")) {
			assert_int_equal(w->nparts, 1);
			assert_non_null(
				strstr(w->parts[0].sig, "conv x=[32,64,56,56] w=[64,64,3,3]"));
			assert_string_equal(w->parts[0].variant, "convolution");
			seen++;
		} else if (!strcmp(w->name, "aten::convolution_backward")) {
			/* no signature: the work stays in its row whatever the other side holds */
			assert_null(w->parts[0].sig);
			seen++;
		}
	}
	assert_int_equal(seen, 4);
	analyze_free(&r);
	trace_free(&t);
}

/*
 * Avg, Med, Min and Max of an op row are per op call, whose GPU time sums its events: the
 * aten::mm's one call ran a 3 us and a 1 us kernel, so each is 4 us (they were the 2 us, 1 us
 * and 3 us of the events; issue 23 item 5).  Kernel rows keep one kernel per call.
 */
static void op_rows_give_every_figure_per_op_call(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_report r;
	run(&t, &r, GROUP_OP);
	const struct kp_row *mm = row(&r, "aten::mm");
	assert_int_equal(mm->calls, 1);
	assert_int_equal(mm->med_ns, 4000);
	assert_int_equal(mm->min_ns, 4000);
	assert_int_equal(mm->max_ns, 4000);
	analyze_free(&r);
	trace_free(&t);
	run(&t, &r, GROUP_KERNEL);
	const struct kp_row *k = row(&r, "void gemm_main<float>(int, char*)");
	assert_int_equal(k->calls, 1);
	assert_int_equal(k->med_ns, 3000);
	analyze_free(&r);
	trace_free(&t);
}

/* @name in the test data directory, loaded and linked */
static void load_testdata(struct kp_trace *t, const char *name)
{
	char file[512];
	const char *dir = getenv("KPROF_TESTDATA");
	snprintf(file, sizeof(file), "%s/%s", dir ? dir : "testdata", name);
	struct kp_diag d = { 0 };
	struct kp_load_opts lo = { 0 };
	assert_int_equal(trace_load(t, file, &lo, &d), 0);
	link_trace(t);
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

/*
 * A kernel row's median (the mean of the two middle ones of an even count), min and max by
 * src/analysis/analyze.c's selection, against a sort, on orders that stress it: few distinct
 * values (long runs of ties), all equal, descending, organ pipe, random; odd and even counts.
 */
static void medians_by_selection_match_a_sort(void **state)
{
	(void)state;
	enum { N = 6001 };
	static long long dur[N], sorted[N];
	for (int shape = 0; shape < 5; shape++)
		for (int n = N - 1; n <= N; n++) {
			unsigned long long x = 2463534242ull + (unsigned)shape;
			for (int i = 0; i < n; i++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				dur[i] = shape == 0   ? 1000 + (long long)(x % 3)
					 : shape == 1 ? 777
					 : shape == 2 ? 100000 - i
					 : shape == 3 ? 1000 + (i < n / 2 ? i : n - i)
						      : 1000 + (long long)(x % 100000);
			}
			char tp[] = "/tmp/kprof-test-median-XXXXXX";
			int fd = mkstemp(tp);
			assert_true(fd >= 0);
			FILE *f = fdopen(fd, "w");
			assert_non_null(f);
			fputs("{\"traceEvents\":[", f);
			for (int i = 0; i < n; i++)
				fprintf(f,
					"%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,"
					"\"tid\":7,\"ts\":%d,\"dur\":%lld.%03lld,\"args\":{}}",
					i ? "," : "", 200 * i, dur[i] / 1000, dur[i] % 1000);
			fputs("]}", f);
			assert_int_equal(fclose(f), 0);
			struct kp_trace t;
			struct kp_diag d = { 0 };
			struct kp_load_opts lo = { 0 };
			assert_int_equal(trace_load(&t, tp, &lo, &d), 0);
			unlink(tp);
			link_trace(&t);
			struct kp_analyze_opts o = { .group = GROUP_KERNEL, .db = &db };
			struct kp_report r;
			assert_int_equal(analyze_run(&t, &o, &r), 0);
			memcpy(sorted, dur, (size_t)n * sizeof(*dur));
			qsort(sorted, (size_t)n, sizeof(*sorted), cmp_ll);
			long long med = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
			const struct kp_row *k = row(&r, "k");
			assert_non_null(k);
			assert_int_equal(k->calls, n);
			assert_int_equal(k->med_ns, med);
			assert_int_equal(k->min_ns, sorted[0]);
			assert_int_equal(k->max_ns, sorted[n - 1]);
			analyze_free(&r);
			trace_free(&t);
		}
}

/*
 * torch211-h100/block_bf16.json, counted by hand (python3 over the JSON, ts and dur in ns):
 * trace span = first start to last end over cpu_op, cuda_runtime/cuda_driver and GPU events
 * (17239593); GPU span = the same over kernel/gpu_memcpy/gpu_memset events with a duration
 * (14729513); busy = their union (14100314, 95.7% of the GPU span, not the 81.8% of the trace
 * span the header printed).  The breakdown's window is the same GPU span (issue 23 item 3).
 * The op-shape row aten::mm [8192,8192]x[8192,2048]: 6 calls (one kernel each, joined by
 * correlation and External id) of 331064 ns on average, median 330840, 325257 .. 337511.
 */
static void spans_and_per_call_figures_match_a_count_by_hand(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_report r;
	load_testdata(&t, "torch211-h100/block_bf16.json");
	struct kp_analyze_opts o = { .group = GROUP_OP_SHAPE, .db = &db };
	assert_int_equal(analyze_run(&t, &o, &r), 0);
	assert_int_equal(r.tot.trace_span_ns, 17239593);
	assert_int_equal(r.tot.gpu_span_ns, 14729513);
	assert_int_equal(r.tot.gpu_busy_ns, 14100314);
	struct kp_breakdown b;
	breakdown_run(&t, NULL, &b);
	assert_int_equal(b.all.span_ns, r.tot.gpu_span_ns);
	assert_int_equal(b.all.idle_ns, r.tot.gpu_span_ns - r.tot.gpu_busy_ns);
	breakdown_free(&b);
	const struct kp_row *mm = NULL;
	for (size_t i = 0; i < r.nrows; i++)
		if (!strcmp(r.rows[i].key, "aten::mm [8192,8192]x[8192,2048] bf16"))
			mm = &r.rows[i];
	assert_non_null(mm);
	assert_int_equal(mm->calls, 6);
	assert_int_equal(mm->time_ns / mm->calls, 331064);
	assert_int_equal(mm->med_ns, 330840);
	assert_int_equal(mm->min_ns, 325257);
	assert_int_equal(mm->max_ns, 337511);
	analyze_free(&r);
	trace_free(&t);
}

/*
 * ranks-h200x2/rank0.json.gz, counted by hand (python3: GPU events whose correlation no
 * cuda_runtime/cuda_driver event has, starting before the first one whose correlation one
 * has): 19 events, 2081306 ns of GPU time (issue 23 item 9).  Counted by default; left out,
 * they leave the GPU events, spans and totals.
 */
static void the_unlaunched_prefix_is_counted_then_left_out_on_request(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_report r;
	load_testdata(&t, "ranks-h200x2/rank0.json.gz");
	assert_int_equal(t.prefix.n, 19);
	assert_int_equal(t.prefix.gpu_ns, 2081306);
	assert_int_equal(t.prefix.dropped, 0);
	size_t ngpu = t.ngpu;
	struct kp_analyze_opts o = { .group = GROUP_KERNEL, .db = &db };
	assert_int_equal(analyze_run(&t, &o, &r), 0);
	int64_t time = r.tot.gpu_time_ns, unlinked = r.tot.unlinked;
	analyze_free(&r);
	link_drop_unlaunched_prefix(&t);
	assert_int_equal(t.prefix.dropped, 1);
	assert_int_equal(t.ngpu, ngpu - 19);
	for (size_t i = 0; i < t.ngpu; i++)
		assert_false(t.gpu[i].launch < 0 && t.gpu[i].ts_ns < t.prefix.until_ns);
	assert_int_equal(analyze_run(&t, &o, &r), 0);
	assert_int_equal(r.tot.gpu_time_ns, time - 2081306);
	assert_int_equal(r.tot.unlinked, unlinked - 19);
	/* the GPU span now starts at the first GPU event with a launch call */
	int64_t first = INT64_MAX;
	for (size_t i = 0; i < t.ngpu; i++)
		if (t.gpu[i].dur_ns > 0 && t.gpu[i].ts_ns < first)
			first = t.gpu[i].ts_ns;
	assert_int_equal(first, t.prefix.until_ns);
	analyze_free(&r);
	trace_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(op_rows_carry_op_flops_over_the_sum_of_kernel_time),
		cmocka_unit_test(kernel_rows_give_op_flops_to_math_kernels_only),
		cmocka_unit_test(rows_weigh_each_event_against_its_own_peak),
		cmocka_unit_test(events_get_the_figures_their_kernel_rows_sum),
		cmocka_unit_test(top_folds_the_rest_into_an_others_row_summing_to_100),
		cmocka_unit_test(min_pct_folds_small_rows),
		cmocka_unit_test(sort_keys_are_checked_and_directions_apply),
		cmocka_unit_test(unknown_device_keeps_absolute_figures_and_warns),
		cmocka_unit_test(sm_clock_option_scales_the_peak),
		cmocka_unit_test(over_dram_peak_within_l2_is_marked_fits_l2),
		cmocka_unit_test(short_names_drop_return_type_and_arguments_only_for_signatures),
		cmocka_unit_test(options_parse_values_and_reject_bad_ones),
		cmocka_unit_test(the_busiest_of_many_devices_names_the_device),
		cmocka_unit_test(op_shape_rows_split_their_work_by_signature),
		cmocka_unit_test(op_rows_give_every_figure_per_op_call),
		cmocka_unit_test(spans_and_per_call_figures_match_a_count_by_hand),
		cmocka_unit_test(medians_by_selection_match_a_sort),
		cmocka_unit_test(the_unlaunched_prefix_is_counted_then_left_out_on_request),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
