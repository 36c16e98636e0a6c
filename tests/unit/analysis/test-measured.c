/*
 * test-measured.c — analyze on a trace of `kprof capture --metrics`: measured FLOP/s and GB/s
 * beside the modelled ones with their ratio, and measured figures standing in (flag
 * `measured`) for a kernel no model covers.
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
#include "kprof/link.h"
#include "kprof/trace.h"

static struct kp_devdb db;

/*
 * aten::mm [1024,1024]x[1024,1024] bf16 (2^31 FLOPs modelled, 3 x 2 MiB bytes) whose one
 * kernel (4 us) measured 1.01 x 2^31 FLOPs and 8,000,000 DRAM bytes; an unlinked custom kernel
 * (2 us) with 1e9 measured FLOPs and 4e6 bytes; an unlinked kernel without counters (1 us).
 */
static const char trace_text[] =
	"{\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA H100 80GB HBM3\",\"numSms\":132}],"
	"\"traceEvents\":["
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":50,"
	"\"args\":{\"External id\":1,\"Input Dims\":[[1024,1024],[1024,1024]],"
	"\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Concrete Inputs\":[\"\",\"\"]}},"
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":1,"
	"\"dur\":1,\"args\":{\"correlation\":10,\"External id\":1}},"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"nvjet_gemm\",\"pid\":0,\"tid\":7,"
	"\"ts\":10,\"dur\":4,\"args\":{\"correlation\":10,\"kprof measured flops\":2168958484,"
	"\"kprof measured flops tensor_bf16\":2168958484,\"kprof dram bytes\":8000000,"
	"\"kprof dram bytes read\":6000000,\"kprof dram bytes written\":2000000}},"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"my_custom_kernel\",\"pid\":0,\"tid\":7,"
	"\"ts\":20,\"dur\":2,\"args\":{\"correlation\":20,\"kprof measured flops\":1000000000,"
	"\"kprof dram bytes\":4000000}},"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"plain_kernel\",\"pid\":0,\"tid\":7,"
	"\"ts\":30,\"dur\":1,\"args\":{\"correlation\":30}}"
	"]}";

static char path[] = "/tmp/kprof-test-measured-XXXXXX";

static void run(struct kp_trace *t, struct kp_report *r, enum kp_group g)
{
	struct kp_diag d = { 0 };
	struct kp_load_opts lo = { 0 };
	assert_int_equal(trace_load(t, path, &lo, &d), 0);
	link_trace(t);
	struct kp_analyze_opts o = { .group = g, .db = &db };
	assert_int_equal(analyze_run(t, &o, r), 0);
}

static const struct kp_row *row(const struct kp_report *r, const char *name)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (!strcmp(r->rows[i].name, name))
			return &r->rows[i];
	fail_msg("no row '%s'", name);
	return NULL;
}

static void trace_reads_the_kernel_args(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_diag d = { 0 };
	struct kp_load_opts lo = { 0 };
	assert_int_equal(trace_load(&t, path, &lo, &d), 0);
	assert_int_equal(t.ngpu, 3);
	assert_int_equal(trace_gpux(&t, &t.gpu[0])->mflops, 2168958484ll);
	assert_int_equal(trace_gpux(&t, &t.gpu[0])->mbytes, 8000000);
	assert_int_equal(trace_gpux(&t, &t.gpu[2])->mflops, -1);
	assert_int_equal(trace_gpux(&t, &t.gpu[2])->mbytes, -1);
	trace_free(&t);
}

static void measured_beside_modelled_with_ratio(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_report r;
	run(&t, &r, GROUP_KERNEL);
	const struct kp_row *mm = row(&r, "nvjet_gemm");
	assert_int_equal(mm->flops, 2147483648ll); /* the model's */
	assert_int_equal(mm->mflops, 2168958484ll);
	assert_false(mm->flags & ROW_MEASURED);
	/* 2168958484 FLOP in 4 us = 542.2 TFLOP/s; ratio 1.01 */
	assert_true(mm->mflops_per_s > 5.4223e14 && mm->mflops_per_s < 5.4224e14);
	assert_true(mm->mratio_flops > 1.0099 && mm->mratio_flops < 1.0101);
	assert_true(mm->mbytes_per_s > 1.9999e12 && mm->mbytes_per_s < 2.0001e12);
	/* model bytes 3 x 2 MiB = 6291456 */
	assert_true(mm->mratio_bytes > 8000000.0 / 6291456 - 1e-9 &&
		    mm->mratio_bytes < 8000000.0 / 6291456 + 1e-9);
	analyze_free(&r);
	trace_free(&t);
}

static void measured_stands_in_where_no_model(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_report r;
	run(&t, &r, GROUP_KERNEL);
	const struct kp_row *cu = row(&r, "my_custom_kernel");
	assert_int_equal(cu->flops, 1000000000);
	assert_int_equal(cu->bytes, 4000000);
	assert_true(cu->flags & ROW_MEASURED);
	assert_true(cu->flops_per_s > 4.9999e14 && cu->flops_per_s < 5.0001e14);
	assert_true(cu->mratio_flops < 0); /* no model to compare with */
	const struct kp_row *pl = row(&r, "plain_kernel");
	assert_int_equal(pl->flops, -1);
	assert_int_equal(pl->mflops, -1);
	assert_false(pl->flags & ROW_MEASURED);
	assert_true(pl->mflops_per_s < 0);
	/* totals: the mm's modelled FLOPs plus the custom kernel's measured ones */
	assert_int_equal(r.tot.flops, 2147483648ll + 1000000000);
	analyze_free(&r);
	trace_free(&t);
}

static int setup(void **state)
{
	(void)state;
	int fd = mkstemp(path);
	if (fd < 0 ||
	    write(fd, trace_text, sizeof(trace_text) - 1) != (ssize_t)sizeof(trace_text) - 1)
		return -1;
	close(fd);
	struct kp_diag d = { 0 };
	return devdb_load_builtin(&db, &d);
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	devdb_free(&db);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(trace_reads_the_kernel_args),
		cmocka_unit_test(measured_beside_modelled_with_ratio),
		cmocka_unit_test(measured_stands_in_where_no_model),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
