/*
 * test-metrics.c — capture/record/metrics.c without a GPU: the SASS fallback (the metrics kept
 * when CUPTI refuses the FP instruction counters together), a range's values stored by metric
 * with NaN for those not measured, and the no-CUPTI build's refusal.  The range profiler itself
 * runs on tests/gpu (capture --metrics).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "record/ctrace.h"
#include "record/kmetrics.h"
#include "record/metrics.h"

static void sass_counters_are_dropped_in_order(void **state)
{
	(void)state;
	/* every metric accepted, in kprof's order */
	const char *names[KM_N];
	int idx[KM_N];
	for (int k = 0; k < KM_N; k++)
		names[k] = kmetrics_names[k], idx[k] = k;
	/* kept: the 4 tensor paths, DRAM read and write, the SM clock; not the 9 FP op counts */
	static const int want[] = { KM_TENSOR_BF16, KM_TENSOR_FP16, KM_TENSOR_TF32, KM_TENSOR_FP64,
				    KM_DRAM_READ,   KM_DRAM_WRITE,  KM_SM_HZ };
	assert_int_equal(metrics_drop_sass(names, idx, KM_N), 7);
	for (int j = 0; j < 7; j++) {
		assert_int_equal(idx[j], want[j]);
		assert_string_equal(names[j], kmetrics_names[want[j]]);
	}
	assert_string_equal(names[4], "dram__bytes_read.sum");
	/* only SASS counters accepted: none left (capture --metrics then fails: none available) */
	const char *s[2] = { kmetrics_names[KM_FFMA], kmetrics_names[KM_DMUL] };
	int si[2] = { KM_FFMA, KM_DMUL };
	assert_int_equal(metrics_drop_sass(s, si, 2), 0);
}

static void range_values_land_on_their_metric(void **state)
{
	(void)state;
	/* the chip accepted three metrics, in this order */
	int idx[] = { KM_DRAM_WRITE, KM_TENSOR_BF16, KM_FFMA };
	double vals[] = { 1048576.0, 137438953472.0, 4096.0 };
	struct kp_kmet m;
	memset(&m, 0, sizeof(m));
	metrics_store(&m, vals, idx, 3);
	assert_true(m.v[KM_DRAM_WRITE] == 1048576.0);
	assert_true(m.v[KM_TENSOR_BF16] == 137438953472.0);
	assert_true(m.v[KM_FFMA] == 4096.0);
	for (int k = 0; k < KM_N; k++)
		if (k != KM_DRAM_WRITE && k != KM_TENSOR_BF16 && k != KM_FFMA)
			assert_true(isnan(m.v[k]));
	/* what a user reads: bf16 tensor FLOPs measured, fp32 = FFMA x 2, fp64 unknown */
	int64_t f[7];
	kmetrics_flops(&m, f);
	assert_int_equal(f[0], 137438953472LL);
	/* nothing accepted: every value unknown */
	metrics_store(&m, vals, idx, 0);
	for (int k = 0; k < KM_N; k++)
		assert_true(isnan(m.v[k]));
}

static void without_cupti_metrics_are_refused(void **state)
{
	(void)state;
	/* libkprof.a (the unit tests' build) has capture/ without CUPTI */
	char why[128] = "";
	assert_int_equal(metrics_open(why, sizeof(why)), -1);
	assert_string_equal(why, "built without CUPTI support");
	assert_int_equal(metrics_count(), 0);
	assert_int_equal(metrics_passes(), 0);
	struct kp_ctrace t;
	ctrace_init(&t);
	why[0] = 0;
	assert_int_equal(metrics_end(&t, 1, 2, "w", why, sizeof(why)), -1);
	assert_string_equal(why, "built without CUPTI support");
	assert_int_equal(t.nmwin, 0);
	ctrace_free(&t);
	metrics_close();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sass_counters_are_dropped_in_order),
		cmocka_unit_test(range_values_land_on_their_metric),
		cmocka_unit_test(without_cupti_metrics_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
