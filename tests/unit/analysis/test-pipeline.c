/*
 * test-pipeline.c — pipeline_run (src/analysis/pipeline.c) on a bundled trace: its figures against the
 * shapes in the trace, the device it picks, the op-shape report, the per-event costs and a
 * load error; devdb_choose (src/model/devdb.c) by name, by --device and by properties.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/devdb.h"
#include "kprof/pipeline.h"

static struct kp_devdb db;

static int setup(void **state)
{
	(void)state;
	struct kp_diag d = { 0 };
	return devdb_load_builtin(&db, &d);
}

static int teardown(void **state)
{
	(void)state;
	devdb_free(&db);
	return 0;
}

static const char *tdata(char *buf, size_t cap, const char *rel)
{
	const char *dir = getenv("KPROF_TESTDATA");
	snprintf(buf, cap, "%s/%s", dir ? dir : "../../testdata", rel);
	return buf;
}

static const struct kp_row *row(const struct kp_report *r, const char *name)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (!strcmp(r->rows[i].name, name))
			return &r->rows[i];
	return NULL;
}

/* 2*M*N*K per product; the shapes are aten::mm's and aten::bmm's Input Dims in the trace */
static const int64_t mm_flops = 2LL * 1024 * 1024 * 1024 + 2LL * 2048 * 4096 * 1024 +
				2LL * 4096 * 4096 * 1024 + 2LL * 8192 * 8192 * 8192;
static const int64_t bmm_flops = 2LL * 8 *
				 (256LL * 1024 * 256 + 512LL * 4096 * 256 +
				  1024LL * 4096 * 256 + 2048LL * 8192 * 2048);

static void matmul_trace_by_op(void **state)
{
	(void)state;
	char p[512];
	struct kp_pipeline_in in = { .path = tdata(p, sizeof(p), "torch211-h100/matmul_bf16.json"),
				     .db = &db,
				     .analyze = { .group = GROUP_OP },
				     .shapes = 1 };
	struct kp_pipeline_out o;
	assert_int_equal(pipeline_run(&in, &o), 0);
	assert_true(o.loaded && o.analysed);
	const struct kp_row *mm = row(&o.report, "aten::mm"), *bmm = row(&o.report, "aten::bmm");
	assert_non_null(mm);
	assert_non_null(bmm);
	assert_int_equal(mm->calls, 4);
	assert_int_equal(mm->flops, mm_flops);
	assert_int_equal(bmm->calls, 4);
	assert_int_equal(bmm->flops, bmm_flops);
	/* the device the trace names, matched exactly, and no --device note */
	assert_non_null(o.report.dev);
	assert_string_equal(o.report.device_name, "NVIDIA H100 80GB HBM3");
	assert_string_equal(o.note, "");
	/* the roofline's report: by op and shape, the same FLOPs in all */
	assert_true(o.has_shapes);
	assert_int_equal(pipeline_shapes(&o)->group, GROUP_OP_SHAPE);
	assert_int_equal(pipeline_shapes(&o)->tot.flops, o.report.tot.flops);
	/* aten::mm: one row for each of its 4 shapes, their FLOPs the op's */
	int64_t sum = 0, n = 0;
	for (size_t i = 0; i < o.shapes.nrows; i++)
		if (!strcmp(o.shapes.rows[i].name, "aten::mm")) {
			sum += o.shapes.rows[i].flops;
			n++;
		}
	assert_int_equal(n, 4);
	assert_int_equal(sum, mm_flops);
	pipeline_free(&o);
}

static void device_override_and_events(void **state)
{
	(void)state;
	char p[512];
	struct kp_pipeline_in in = { .path = tdata(p, sizeof(p), "torch211-h100/matmul_bf16.json"),
				     .db = &db,
				     .device = "H100",
				     .analyze = { .group = GROUP_KERNEL },
				     .events = 1 };
	struct kp_pipeline_out o;
	assert_int_equal(pipeline_run(&in, &o), 0);
	assert_string_equal(o.report.device_name, "H100");
	/* "H100" could mean the SXM5, PCIe and NVL parts: the note says which was picked */
	assert_non_null(strstr(o.note, "'H100' could mean"));
	assert_false(o.has_shapes);
	assert_ptr_equal(pipeline_shapes(&o), &o.report);
	/* each GPU event's FLOPs add up to the report's */
	int64_t sum = 0;
	for (size_t i = 0; i < o.trace.ngpu; i++)
		if (o.events[i].flops > 0)
			sum += (int64_t)o.events[i].flops;
	assert_int_equal(sum, o.report.tot.flops);
	pipeline_free(&o);
}

static void link_only_and_load_error(void **state)
{
	(void)state;
	char p[512];
	struct kp_pipeline_in in = { .path = tdata(p, sizeof(p), "torch211-h100/matmul_bf16.json"),
				     .link_only = 1 };
	struct kp_pipeline_out o;
	assert_int_equal(pipeline_run(&in, &o), 0);
	assert_true(o.loaded);
	assert_false(o.analysed);
	assert_int_equal(o.trace.ngpu, 33); /* 28 kernels and 5 memsets */
	pipeline_free(&o);
	in.path = tdata(p, sizeof(p), "no/such/trace.json");
	assert_int_equal(pipeline_run(&in, &o), -1);
	assert_int_equal(o.diag.status, KP_ENV);
	assert_non_null(strstr(o.diag.msg, "no/such/trace.json"));
	pipeline_free(&o);
}

static void choose_by_name_override_and_properties(void **state)
{
	(void)state;
	struct kp_devchoice c;
	devdb_choose(&db, NULL, "NVIDIA H100 80GB HBM3", NULL, &c);
	assert_non_null(c.dev);
	assert_string_equal(c.name, "NVIDIA H100 80GB HBM3");
	assert_null(c.warning);
	/* --device wins over the trace's name and properties */
	struct kp_devprops mi = { 104, 64LL << 30, 9, 0 };
	devdb_choose(&db, "NVIDIA A100-SXM4-80GB", "", &mi, &c);
	assert_string_equal(c.name, "NVIDIA A100-SXM4-80GB");
	assert_non_null(c.dev);
	assert_non_null(strstr(c.dev->name, "A100"));
	/* a generic name and no properties: no entry, no warning, no guess */
	devdb_choose(&db, NULL, "AMD Radeon Graphics", NULL, &c);
	assert_null(c.dev);
	assert_null(c.warning);
	/* a generic name with properties nothing has: the warning names them */
	struct kp_devprops none = { 7, 3LL << 30, 1, 0 };
	devdb_choose(&db, NULL, "", &none, &c);
	assert_null(c.dev);
	assert_non_null(c.warning);
	assert_non_null(strstr(c.warning, "numSms 7, 3 GiB, cc 1.0"));
	/* no table: nothing */
	devdb_choose(NULL, NULL, "NVIDIA H100 80GB HBM3", NULL, &c);
	assert_null(c.dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(matmul_trace_by_op),
		cmocka_unit_test(device_override_and_events),
		cmocka_unit_test(link_only_and_load_error),
		cmocka_unit_test(choose_by_name_override_and_properties),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
