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

#include "record/ctrace.h"
#include "record/kmetrics.h"

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
	assert_int_equal(f[5], 27); /* fp32: 2 x 10 + 3 + 4 */
	assert_int_equal(f[6], 0);  /* fp16 measured, zero */
	assert_int_equal(f[4], -1); /* fp64 not measured */
	m.v[KM_DFMA] = -1;          /* a negative count is not a count */
	assert_int_equal(kmetrics_flops(&m, f), 137438953472ll + 27);
}

/*
 * The counters tests/gpu/metrics_prog's custom kernels read on an H200 (CUPTI 13 range profiler,
 * equal to ncu's smsp__sass_thread_inst_executed_op_*_pred_on.sum; 262144 threads x 1024
 * instructions each), and the FLOPs kprof makes of them: 2 x fma + add + mul per precision.
 */
static void sass_counters_to_flops(void **state)
{
	(void)state;
	int64_t f[7];
	struct kp_kmet m = none();
	for (int k = KM_TENSOR_BF16; k <= KM_HMUL; k++)
		m.v[k] = 0;
	/* fma_loop: 1024 FFMA a thread; one HFMA2.MMA a thread, the compiler's register move */
	m.v[KM_FFMA] = 268435456, m.v[KM_HFMA] = 262144;
	assert_int_equal(kmetrics_flops(&m, f), 536870912ll + 524288);
	assert_int_equal(f[5], 536870912ll); /* fp32 = 2 x 262144 x 1024 */
	assert_int_equal(f[6], 524288);      /* fp16: the moves, 0.1% */
	assert_int_equal(f[4], 0);
	/* fadd_fmul: 1026 FADD and 1024 FMUL a thread */
	m.v[KM_FFMA] = 0, m.v[KM_HFMA] = 262144;
	m.v[KM_FADD] = 268959744, m.v[KM_FMUL] = 268435456;
	kmetrics_flops(&m, f);
	assert_int_equal(f[5], 268959744ll + 268435456ll);
	/* dfma_loop: 1024 DFMA a thread */
	m.v[KM_FADD] = 0, m.v[KM_FMUL] = 0, m.v[KM_DFMA] = 268435456;
	kmetrics_flops(&m, f);
	assert_int_equal(f[4], 536870912ll);
	assert_int_equal(f[5], 0);
	/* hfma2_loop: 1024 packed HFMA2 a thread (+ the move), one FMA instruction each */
	m.v[KM_DFMA] = 0, m.v[KM_HFMA] = 268697600;
	kmetrics_flops(&m, f);
	assert_int_equal(f[6], 537395200ll);
	assert_int_equal(f[4], 0);
	/* DADD and DMUL count once each */
	m.v[KM_HFMA] = 0, m.v[KM_DADD] = 7, m.v[KM_DMUL] = 11;
	assert_int_equal(kmetrics_flops(&m, f), 18);
	assert_int_equal(f[4], 18);
	/* a precision whose three counters are all missing is unmeasured, not 0 */
	m.v[KM_HFMA] = m.v[KM_HADD] = m.v[KM_HMUL] = NAN;
	kmetrics_flops(&m, f);
	assert_int_equal(f[6], -1);
	/* one of three missing: the other two still count */
	m.v[KM_DMUL] = NAN;
	kmetrics_flops(&m, f);
	assert_int_equal(f[4], 7);
}

/* The SASS-instrumented metrics are the nine FP instruction counters, nothing else. */
static void sass_metrics(void **state)
{
	(void)state;
	for (int k = 0; k < KM_N; k++)
		assert_int_equal(kmetrics_sass(k), k >= KM_DFMA && k <= KM_HMUL);
	assert_int_equal(kmetrics_sass(-1), 0);
	assert_int_equal(kmetrics_sass(KM_N), 0);
}

static void add_kernel(struct kp_ctrace *t, const char *name, uint64_t start, uint32_t corr)
{
	struct kp_rec r = { .kind = REC_KERNEL,
			    .start_ns = start,
			    .end_ns = start + 1000,
			    .corr = corr,
			    .name = ctrace_intern(t, name, strlen(name)) };
	assert_int_equal(ctrace_add_rec(t, &r), 0);
}

static size_t nwarn;
static void on_warn(void *arg, const struct kp_mwin *w, size_t nkern)
{
	(void)arg, (void)w;
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
	assert_int_equal(kmetrics_join(&t, on_warn, NULL), 1);
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
	/* every FP counter read 0 (a kernel that only moves data): no FLOPs written, so a kernel
	 * without a model is not given a measured 0; DRAM bytes still are */
	m = none();
	for (int k = KM_TENSOR_BF16; k <= KM_HMUL; k++)
		m.v[k] = 0;
	m.v[KM_DRAM_READ] = 8, m.v[KM_DRAM_WRITE] = 0;
	f = open_memstream(&buf, &len);
	kmetrics_put_args(f, &m);
	fclose(f);
	assert_string_equal(buf, ",\"kprof dram bytes\":8,\"kprof dram bytes read\":8"
				 ",\"kprof dram bytes written\":0");
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
	assert_int_equal(kmetrics_join(&t, NULL, NULL), 0);
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

/* The timed run: a launch call (pid, corr) and its kernel, per kernel. */
static void timed_kernel(struct kp_ctrace *t, uint32_t pid, const char *name, uint64_t start,
			 uint32_t corr)
{
	struct kp_rec api = { .kind = REC_RUNTIME,
			      .start_ns = start - 500,
			      .end_ns = start - 400,
			      .corr = corr,
			      .pid = pid,
			      .name = ctrace_intern(t, "cudaLaunchKernel", 16) };
	assert_int_equal(ctrace_add_rec(t, &api), 0);
	add_kernel(t, name, start, corr);
}

/* The metrics run: one process's launches (and memsets) in order, @nr ranges of FFMA = i + 1. */
static void metrics_process(struct kp_ctrace *m, const char *const *names, size_t n, size_t nr,
			    const char *label)
{
	size_t lo = m->nrecs;
	for (size_t i = 0; i < n; i++) {
		int ms = !strcmp(names[i], "memset");
		struct kp_rec r = { .kind = ms ? REC_MEMSET : REC_KERNEL,
				    .start_ns = i + 1,
				    .name = ctrace_intern(m, names[i], strlen(names[i])) };
		assert_int_equal(ctrace_add_rec(m, &r), 0);
	}
	m->kmet = realloc(m->kmet, (m->nkmet + nr) * sizeof(*m->kmet));
	m->mwin = realloc(m->mwin, (m->nmwin + 1) * sizeof(*m->mwin));
	assert_true(m->kmet && m->mwin);
	struct kp_mwin *w = &m->mwin[m->nmwin++];
	memset(w, 0, sizeof(*w));
	w->first = m->nkmet, w->n = nr, w->rec_lo = lo, w->rec_hi = m->nrecs;
	snprintf(w->label, sizeof(w->label), "%s", label);
	for (size_t i = 0; i < nr; i++) {
		for (int k = 0; k < KM_N; k++)
			m->kmet[m->nkmet].v[k] = 0;
		m->kmet[m->nkmet++].v[KM_FFMA] = (double)(i + 1);
	}
}

static double ffma_of(const struct kp_ctrace *t, const char *name, uint32_t pid_corr_lo)
{
	for (size_t i = 0; i < t->nrecs; i++) {
		const struct kp_rec *r = &t->recs[i];
		if (r->kind == REC_KERNEL && !strcmp(r->name, name) && r->corr >= pid_corr_lo &&
		    r->corr < pid_corr_lo + 100)
			return r->met ? t->kmet[r->met - 1].v[KM_FFMA] : -1;
	}
	return -2;
}

/*
 * `-- <cmd>` --metrics: the metrics run's ranges join the timed run's kernels per process (PID
 * order), in launch order, memset ranges skipped; a name or count that differs joins nothing.
 */
static void join_of_two_runs(void **state)
{
	(void)state;
	struct kp_ctrace t, m;
	ctrace_init(&t);
	ctrace_init(&m);
	/* pid 20: gemm, custom; pid 30: custom (timed out of order: start order decides) */
	timed_kernel(&t, 30, "custom", 9000, 201);
	timed_kernel(&t, 20, "custom", 6000, 102);
	timed_kernel(&t, 20, "gemm", 5000, 101);
	/* pid 20's run: memset, gemm, memset, custom; ranges for all four */
	const char *p20[] = { "memset", "gemm", "memset", "custom" };
	metrics_process(&m, p20, 4, 4, "process 1020");
	/* pid 30's: a memset the profiler did not count as a range, then custom */
	const char *p30[] = { "memset", "custom" };
	metrics_process(&m, p30, 2, 1, "process 1030");
	FILE *err = tmpfile();
	assert_non_null(err);
	assert_int_equal(kmetrics_join_runs(&t, &m, err), 3);
	assert_true(ffma_of(&t, "gemm", 100) == 2.0);
	assert_true(ffma_of(&t, "custom", 100) == 4.0);
	assert_true(ffma_of(&t, "custom", 200) == 1.0);
	assert_int_equal(ftell(err), 0);
	fclose(err);
	ctrace_free(&t);
	ctrace_free(&m);

	/* names that differ (the program launched other kernels this time): nothing joins */
	ctrace_init(&t);
	ctrace_init(&m);
	timed_kernel(&t, 20, "gemm", 5000, 101);
	timed_kernel(&t, 20, "custom", 6000, 102);
	const char *other[] = { "gemm", "other" };
	metrics_process(&m, other, 2, 2, "process 1020");
	char buf[512] = "";
	err = tmpfile();
	assert_int_equal(kmetrics_join_runs(&t, &m, err), 0);
	rewind(err);
	assert_non_null(fgets(buf, sizeof(buf), err));
	assert_string_equal(buf, "kprof: warning: --metrics: process 1020: kernel 1 is 'other' in "
				 "the metrics run, 'custom' in the timed run: not joined\n");
	fclose(err);
	assert_true(ffma_of(&t, "gemm", 100) == -1);
	ctrace_free(&m);

	/* a range count matching neither the launches nor launches + memsets */
	ctrace_init(&m);
	const char *three[] = { "gemm", "memset", "custom" };
	metrics_process(&m, three, 3, 1, "process 1020");
	err = tmpfile();
	assert_int_equal(kmetrics_join_runs(&t, &m, err), 0);
	rewind(err);
	assert_non_null(fgets(buf, sizeof(buf), err));
	assert_string_equal(buf, "kprof: warning: --metrics: process 1020: 1 ranges for 2 kernel "
				 "launches and 1 memsets: not joined\n");
	fclose(err);
	ctrace_free(&m);

	/* no metrics windows at all */
	ctrace_init(&m);
	err = tmpfile();
	assert_int_equal(kmetrics_join_runs(&t, &m, err), 0);
	assert_true(ftell(err) > 0);
	fclose(err);
	ctrace_free(&m);
	ctrace_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flops_by_precision), cmocka_unit_test(sass_counters_to_flops),
		cmocka_unit_test(sass_metrics),       cmocka_unit_test(join_by_start_order),
		cmocka_unit_test(args_in_trace),      cmocka_unit_test(written_on_the_kernel_event),
		cmocka_unit_test(join_of_two_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
