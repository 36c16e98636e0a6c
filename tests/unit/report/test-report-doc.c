/*
 * test-report-doc.c — the documents of analyze (report-doc.c) and devices (devices-doc.c), built
 * from struct literals and rendered through table.c.
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
#include "kprof/devices-doc.h"
#include "kprof/report-doc.h"
#include "kprof/table.h"

static char *doc_text(struct kp_doc *doc, enum kp_format f, int color)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&buf, &n);
	table_render(doc, f, color, fp);
	fclose(fp);
	return buf;
}

static char *analyze_text(const struct kp_report *r, enum kp_format f, int color)
{
	struct kp_report_doc_opts o = { .format = f, .color = color };
	struct kp_doc doc;
	report_doc(r, &o, &doc);
	char *s = doc_text(&doc, f, color);
	doc_free(&doc);
	return s;
}

static struct kp_row mrow(const char *name, const char *dtype, const char *prec, double fps,
			  double pct, unsigned flags)
{
	return (struct kp_row){ .name = name,
				.key = name,
				.op = "aten::mm",
				.dtype = dtype,
				.prec = prec,
				.calls = 1,
				.time_ns = 1000,
				.flops = fps < 0 ? -1 : 1000,
				.bytes = -1,
				.flops_per_s = fps,
				.bytes_per_s = -1,
				.pct_peak_flops = pct,
				.pct_peak_bw = -1,
				.intensity = -1,
				.flags = flags,
				.time_pct = 50 };
}

static void prec_is_the_peak_precision_and_dtype_shows_only_when_they_differ(void **state)
{
	(void)state;
	struct kp_trace t = { .display = "t.json" };
	struct kp_row rows[] = { mrow("gemm_tf32", "fp32", "tf32", 1e12, 40, 0),
				 mrow("copy", "fp32", "fp32", -1, -1, 0) };
	struct kp_report r = { .trace = &t, .device_name = "X", .rows = rows, .nrows = 2 };
	char *s = analyze_text(&r, FMT_TABLE, 0);
	assert_non_null(strstr(s, "Dtype  Prec"));
	assert_non_null(strstr(s, "fp32   tf32"));
	assert_non_null(strstr(s, "fp32   -     ")); /* no FLOPs: no peak */
	free(s);
	s = analyze_text(&r, FMT_CSV, 0);
	assert_non_null(strstr(s, ",dtype,prec,"));
	assert_non_null(strstr(s, ",fp32,fp32,")); /* csv keeps the row's prec */
	free(s);
	rows[0].dtype = "tf32";
	s = analyze_text(&r, FMT_TABLE, 0);
	assert_null(strstr(s, "Dtype"));
	free(s);
}

static void header_uses_plurals_and_explains_overlapping_streams(void **state)
{
	(void)state;
	struct kp_trace t = {
		.display = "t.json", .nevents = 1, .nops = 1, .nlaunches = 1, .ngpu = 1
	};
	struct kp_report r = { .trace = &t,
			       .device_name = "X",
			       .tot = { .trace_span_ns = 1500,
					.gpu_span_ns = 1000,
					.gpu_busy_ns = 800,
					.gpu_time_ns = 1200,
					.kernels = 1,
					.ops = 1,
					.steps = 1,
					.flops = -1,
					.bytes = -1 } };
	char *s = analyze_text(&r, FMT_TABLE, 0);
	assert_non_null(strstr(s, "(1 event, 1 op, 1 launch, 1 GPU event)"));
	assert_non_null(
		strstr(s, "# work    1 kernel, 0 memcpy/memset, 1 op call, 0 unlinked, 1 step\n"));
	assert_non_null(strstr(
		s,
		"# note    GPU time sums the GPU events' durations and GPU busy is their union: "
		"work overlapped on several streams for 400 ns, so GPU time exceeds GPU busy and the GPU span\n"));
	/* two spans, each named; busy is a share of the GPU span (issue 23 item 3) */
	assert_non_null(strstr(s, "# span    trace 1.500 us, GPU 1.000 us; GPU busy 800 ns (80.0% of "
				  "the GPU span), GPU time 1.200 us\n"));
	free(s);
	r.tot.gpu_time_ns = 800;
	s = analyze_text(&r, FMT_TABLE, 0);
	assert_null(strstr(s, "# note"));
	free(s);
	s = analyze_text(&r, FMT_MARKDOWN, 0);
	assert_non_null(strstr(
		s,
		"**kprof analyze**: 800 ns GPU time in 1 GPU event, 1.000 us GPU span\n\n- input: t.json"));
	free(s);
}

static void over_peak_rows_are_flagged_yellow_on_a_colour_table(void **state)
{
	(void)state;
	struct kp_trace t = { .display = "t.json" };
	struct kp_row rows[] = { mrow("k", "bf16", "bf16", 2e15, 150, ROW_OVER_PEAK) };
	struct kp_report r = { .trace = &t, .device_name = "X", .rows = rows, .nrows = 1 };
	char *s = analyze_text(&r, FMT_TABLE, 1);
	assert_non_null(strstr(s, "\033[33m150.0\033[m"));
	assert_non_null(strstr(s, "\033[33mover-peak\033[m"));
	free(s);
	s = analyze_text(&r, FMT_JSON, 1);
	assert_null(strchr(s, '\033'));
	assert_non_null(strstr(s, "\"flags\": \"over-peak\""));
	free(s);
}

/* rows_table's steps: the columns a grouping and --stats show, per-call and measured cells. */
static void rows_show_the_columns_their_grouping_and_figures_call_for(void **state)
{
	(void)state;
	struct kp_trace t = { .display = "t.json" };
	struct kp_row rows[] = { mrow("void k<int>(int)", "bf16", "bf16", 1e12, 40, 0),
				 mrow("(others)", NULL, NULL, -1, -1, ROW_OTHERS) };
	rows[0].calls = 4, rows[0].time_ns = 4000, rows[0].med_ns = 900, rows[0].min_ns = 700;
	rows[0].max_ns = 1500, rows[0].mflops = rows[0].mbytes = -1;
	rows[1].mflops = rows[1].mbytes = -1;
	struct kp_report r = {
		.trace = &t, .device_name = "X", .rows = rows, .nrows = 2, .group = GROUP_KERNEL
	};
	struct kp_report_doc_opts o = { .format = FMT_TABLE, .stats = 1 };
	struct kp_doc doc;
	report_doc(&r, &o, &doc);
	char *s = doc_text(&doc, FMT_TABLE, 0);
	doc_free(&doc);
	assert_non_null(strstr(s, "Avg/call  Med/call  Min/call  Max/call  TFLOP/s"));
	assert_non_null(
		strstr(s, "  4.000 us   50.0      4  1.000 us    900 ns    700 ns  1.500 us  "));
	assert_non_null(
		strstr(s, "  1.000 us   50.0      1         -         -         -         -  "));
	assert_non_null(strstr(s, "  Op        Kernel\n"));
	assert_non_null(strstr(s, "  aten::mm  k<int>\n")); /* kernel names shortened */
	assert_null(strstr(s, "mTFLOP/s"));
	free(s);
	r.group = GROUP_ANNOT;
	rows[1].mflops = 5;
	s = analyze_text(&r, FMT_TABLE, 0);
	assert_non_null(strstr(s, "GB/s  mTFLOP/s  mFLOP/FLOP  mGB/s   mB/B  %Peak"));
	assert_non_null(strstr(s, "Flags  Annotation\n"));
	assert_non_null(strstr(s, "  void k<int>(int)\n"));
	assert_null(strstr(s, "Med"));
	assert_null(strstr(s, "Shape"));
	free(s);
	r.group = GROUP_OP_SHAPE;
	rows[0].shape = "[4,4]";
	s = analyze_text(&r, FMT_TABLE, 0);
	assert_non_null(strstr(s, "  Shape  Op\n"));
	assert_non_null(strstr(s, "  [4,4]  void k<int>(int)\n"));
	free(s);
	s = analyze_text(&r, FMT_CSV, 0);
	assert_non_null(strstr(s, "\n4000,50,4,1000,900,700,1500,1000,,1000000000000,,"));
	assert_non_null(strstr(s, "\n1000,50,1,,,,,,,,,"));
	free(s);
}

static void devices_document_holds_the_lookup_and_one_row(void **state)
{
	(void)state;
	struct kp_diag d = { 0 };
	struct kp_devdb db;
	assert_int_equal(devdb_load_builtin(&db, &d), 0);
	const char *how;
	const struct kp_device *dv = devdb_match_sms(&db, "NVIDIA H100 80GB HBM3", 0, &how);
	assert_non_null(dv);
	struct kp_doc doc;
	devices_doc(&db, &dv, 1, "NVIDIA H100 80GB HBM3", how, &doc);
	char *s = doc_text(&doc, FMT_TABLE, 0);
	assert_non_null(strstr(
		s,
		"# query      NVIDIA H100 80GB HBM3\n# match      NVIDIA H100 80GB HBM3 (exact)\n"));
	assert_non_null(strstr(s, "# bf16       989.4 TFLOP/s at 1830 MHz, datasheet\n"));
	free(s);
	s = doc_text(&doc, FMT_JSON, 0);
	assert_non_null(
		strstr(s,
		       "\"command\": \"devices\"},\n  \"device_db\": \"built-in\",\n  \"query\": "));
	assert_non_null(strstr(s, "\"fp32_flop_per_s\": 66900000000000.01,"));
	free(s);
	s = doc_text(&doc, FMT_MARKDOWN, 0);
	assert_non_null(strstr(
		s,
		"**kprof devices**: 'NVIDIA H100 80GB HBM3' is NVIDIA H100 80GB HBM3 (exact)\n"));
	free(s);
	doc_free(&doc);
	devdb_free(&db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(prec_is_the_peak_precision_and_dtype_shows_only_when_they_differ),
		cmocka_unit_test(header_uses_plurals_and_explains_overlapping_streams),
		cmocka_unit_test(over_peak_rows_are_flagged_yellow_on_a_colour_table),
		cmocka_unit_test(rows_show_the_columns_their_grouping_and_figures_call_for),
		cmocka_unit_test(devices_document_holds_the_lookup_and_one_row),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
