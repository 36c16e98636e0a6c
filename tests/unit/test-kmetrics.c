/*
 * test-kmetrics.c — `kprof capture --metrics` without a GPU: range-profiler values -> FLOPs by
 * precision, the join of a profiled window to the timed kernels (start order, count check) and
 * the kernel args written into the trace.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "ctrace.h"
#include "kmetrics.h"

#define T0 1795653390000000000ull

static struct kp_kmet none(void)
{
	struct kp_kmet m;
	for (int k = 0; k < KM_N; k++)
		m.v[k] = NAN;
	return m;
}

static void flops_by_precision(void **state)
{
	(void)state;
	struct kp_kmet m = none();
	int64_t f[7];
	assert_int_equal(kmetrics_flops(&m, f), -1);
	for (int k = 0; k < 7; k++)
		assert_int_equal(f[k], -1);
	m.v[KM_TENSOR_BF16] = 137438953472.0; /* 2 x 4096^3 */
	m.v[KM_FFMA] = 10, m.v[KM_FADD] = 3, m.v[KM_FMUL] = 4;
	m.v[KM_HFMA] = 0;
	assert_int_equal(kmetrics_flops(&m, f), 137438953472ll + 27);
	assert_int_equal(f[0], 137438953472ll);
	assert_int_equal(f[1], -1);
	assert_int_equal(f[5], 27);   /* fp32: 2 x 10 + 3 + 4 */
	assert_int_equal(f[6], 0);    /* fp16 measured, zero */
	assert_int_equal(f[4], -1);   /* fp64 not measured */
	m.v[KM_DFMA] = -1;            /* a negative count is not a count */
	assert_int_equal(kmetrics_flops(&m, f), 137438953472ll + 27);
}

static void add_kernel(struct kp_ctrace *t, const char *name, uint64_t start, uint32_t corr)
{
	struct kp_rec r = { .kind = REC_KERNEL, .start_ns = start, .end_ns = start + 1000,
			    .corr = corr, .name = ctrace_intern(t, name, strlen(name)) };
	assert_int_equal(ctrace_add_rec(t, &r), 0);
}

static size_t nwarn;
static void on_warn(const struct kp_mwin *w, size_t nkern)
{
	(void)w;
	nwarn++;
	assert_int_equal(nkern, 1);
}

static void join_by_start_order(void **state)
{
	(void)state;
	struct kp_ctrace t;
	ctrace_init(&t);
	/* window 1: three kernels, recorded out of order; a kernel before it stays unjoined */
	add_kernel(&t, "warmup", T0, 1);
	add_kernel(&t, "gemm_b", T0 + 300, 12);
	add_kernel(&t, "bias_a", T0 + 200, 11);
	add_kernel(&t, "gemm_c", T0 + 400, 13);
	/* window 2: one kernel for two ranges: not joined */
	add_kernel(&t, "lonely", T0 + 900, 20);
	t.kmet = calloc(5, sizeof(*t.kmet));
	t.nkmet = 5;
	for (size_t i = 0; i < 5; i++) {
		t.kmet[i] = none();
		t.kmet[i].v[KM_DRAM_READ] = (double)(i + 1);
	}
	t.mwin = calloc(2, sizeof(*t.mwin));
	t.nmwin = 2;
	t.mwin[0] = (struct kp_mwin){ .t0_ns = T0 + 100, .t1_ns = T0 + 500, .first = 0, .n = 3 };
	t.mwin[1] = (struct kp_mwin){ .t0_ns = T0 + 800, .t1_ns = T0 + 1000, .first = 3, .n = 2 };
	nwarn = 0;
	assert_int_equal(kmetrics_join(&t, on_warn), 1);
	assert_int_equal(nwarn, 1);
	assert_int_equal(t.recs[0].met, 0);
	assert_int_equal(t.recs[2].met, 1); /* bias_a started first: range 0 */
	assert_int_equal(t.recs[1].met, 2);
	assert_int_equal(t.recs[3].met, 3);
	assert_int_equal(t.recs[4].met, 0);
	ctrace_free(&t);
}

static void args_in_trace(void **state)
{
	(void)state;
	struct kp_kmet m = none();
	m.v[KM_TENSOR_BF16] = 1099511627776.0;
	m.v[KM_FFMA] = 5, m.v[KM_FADD] = 0, m.v[KM_FMUL] = 0;
	m.v[KM_DRAM_READ] = 100, m.v[KM_DRAM_WRITE] = 50;
	m.v[KM_SM_HZ] = 1635.04e6;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	kmetrics_put_args(f, &m);
	fclose(f);
	assert_string_equal(buf,
			    ",\"kprof measured flops\":1099511627786"
			    ",\"kprof measured flops tensor_bf16\":1099511627776"
			    ",\"kprof measured flops fp32\":10"
			    ",\"kprof dram bytes\":150,\"kprof dram bytes read\":100"
			    ",\"kprof dram bytes written\":50,\"kprof measured sm clock mhz\":1635.0");
	free(buf);
	/* nothing measured: nothing written */
	m = none();
	f = open_memstream(&buf, &len);
	kmetrics_put_args(f, &m);
	fclose(f);
	assert_string_equal(buf, "");
	free(buf);
}

static void written_on_the_kernel_event(void **state)
{
	(void)state;
	struct kp_ctrace t;
	ctrace_init(&t);
	add_kernel(&t, "gemm", T0 + 300, 12);
	t.kmet = calloc(1, sizeof(*t.kmet));
	t.nkmet = 1;
	t.kmet[0] = none();
	t.kmet[0].v[KM_DRAM_WRITE] = 4096;
	t.mwin = calloc(1, sizeof(*t.mwin));
	t.nmwin = 1;
	t.mwin[0] = (struct kp_mwin){ .t0_ns = T0, .t1_ns = T0 + 1000, .first = 0, .n = 1 };
	assert_int_equal(kmetrics_join(&t, NULL), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(ctrace_write(&t, f, "trace.json"), 0);
	fclose(f);
	const char *k = strstr(buf, "\"name\":\"gemm\"");
	assert_non_null(k);
	const char *a = strstr(k, "\"kprof dram bytes written\":4096}}");
	assert_non_null(a);
	assert_null(strstr(k, "\"kprof dram bytes read\""));
	free(buf);
	ctrace_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flops_by_precision),
		cmocka_unit_test(join_by_start_order),
		cmocka_unit_test(args_in_trace),
		cmocka_unit_test(written_on_the_kernel_event),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
