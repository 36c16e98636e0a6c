/*
 * test-annot.c — kprof analyze --group-by annotation: GPU time under the innermost
 * user_annotation around each launch (nested spans, another thread, ProfilerStep#N not an
 * annotation, launches outside any span), op FLOPs counted once per row.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/analyze.h"
#include "kprof/devdb.h"
#include "kprof/link.h"
#include "kprof/trace.h"

static const char *path(void)
{
	static char p[512];
	const char *d = getenv("KPROF_TESTDATA");
	snprintf(p, sizeof(p), "%s/handmade/annotations.json", d ? d : "../../testdata");
	return p;
}

static const struct kp_row *row(const struct kp_report *r, const char *name)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (!strcmp(r->rows[i].name, name))
			return &r->rows[i];
	return NULL;
}

static void annotations_load_only_on_request(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_diag d;
	struct kp_load_opts lo = { 0 };
	assert_int_equal(trace_load(&t, path(), &lo, &d), 0);
	assert_int_equal(t.nannots, 0);
	assert_int_equal(t.nsteps, 1);
	trace_free(&t);
	lo.annotations = 1;
	assert_int_equal(trace_load(&t, path(), &lo, &d), 0);
	assert_int_equal(t.nannots, 3); /* forward, attention x2; ProfilerStep#0 is a step */
	assert_int_equal(t.nsteps, 1);
	assert_string_equal(t.annots[0].name, "forward");
	assert_int_equal(t.annots[0].ts_ns, 10000);
	assert_int_equal(t.annots[0].dur_ns, 490000);
	trace_free(&t);
}

static void gpu_time_goes_to_the_innermost_annotation(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_diag d;
	struct kp_load_opts lo = { .annotations = 1 };
	assert_int_equal(trace_load(&t, path(), &lo, &d), 0);
	link_trace(&t);
	struct kp_devdb db;
	assert_int_equal(devdb_load_builtin(&db, &d), 0);
	struct kp_analyze_opts o = { .group = GROUP_ANNOT, .db = &db };
	struct kp_report r;
	assert_int_equal(analyze_run(&t, &o, &r), 0);
	assert_int_equal(r.nrows, 3);
	const struct kp_row *att = row(&r, "attention"), *fwd = row(&r, "forward"),
			    *none = row(&r, "(no annotation)");
	assert_non_null(att);
	assert_non_null(fwd);
	assert_non_null(none);
	/* two GEMMs inside attention on thread 1, one add inside attention on thread 2 */
	assert_int_equal(att->time_ns, 26000);
	assert_int_equal(att->kernels, 3);
	assert_int_equal(att->calls, 2);
	assert_int_equal(att->flops, 2 * (2ll * 64 * 128 * 32));
	/* an add launched in forward but outside attention */
	assert_int_equal(fwd->time_ns, 4000);
	assert_int_equal(fwd->calls, 1);
	/* launched inside ProfilerStep#0 only */
	assert_int_equal(none->time_ns, 2000);
	assert_int_equal(r.tot.flops, 2 * (2ll * 64 * 128 * 32));
	analyze_free(&r);
	devdb_free(&db);
	trace_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(annotations_load_only_on_request),
		cmocka_unit_test(gpu_time_goes_to_the_innermost_annotation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
