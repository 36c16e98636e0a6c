/*
 * test-results-charts.c — capture results as charts (src/report/results-charts.c): every
 * point equals the summary table's number for its case, the legend's geomean speedup (computed
 * here from the times), the peak line (the device table's peak at the run's clock), failed
 * accuracy checks flagged; the results read back from --results JSON and CSV
 * (src/ingest/results-read.c) and from a capture trace's "kprof"."results" draw the same charts.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kprof/devdb.h"
#include "kprof/diag.h"
#include "kprof/doc.h"
#include "kprof/dtype.h"
#include "kprof/results.h"
#include "kprof/table.h"
#include "kprof/trace.h"

static const char *const conv_shapes[] = {
	"32x64x56x56->64 3x3 s1 p1 d1 g1",   "32x128x28x28->128 3x3 s1 p1 d1 g1",
	"32x256x14x14->256 3x3 s1 p1 d1 g1", "32x512x7x7->512 3x3 s1 p1 d1 g1",
	"32x3x224x224->64 7x7 s2 p3 d1 g1",  "32x256x56x56->64 1x1 s1 p0 d1 g1",
};
static const char *const row_shapes[] = { "4096x1024",  "4096x4096",  "16384x1024",
					   "16384x4096", "32768x8192", "65536x8192" };

static void add(struct kp_results *rs, const char *op, const char *kind, const char *shape,
		const char *backend, double ms, double tflops, double gbs, int bad)
{
	struct kp_result r = { .ms = ms, .tflops = tflops, .gbs = gbs, .err = bad ? 9e-3 : 1e-4,
			       .tol = 8e-3 };
	if (gbs > 0)
		r.peak_pct = 100 * gbs / 4800;
	snprintf(r.op, sizeof(r.op), "%s", op);
	snprintf(r.kind, sizeof(r.kind), "%s", kind);
	snprintf(r.shape, sizeof(r.shape), "%s", shape);
	snprintf(r.dtype, sizeof(r.dtype), "bf16");
	snprintf(r.backend, sizeof(r.backend), "%s", backend);
	snprintf(r.layout, sizeof(r.layout), "%s", gbs > 0 ? "" : "nchw");
	snprintf(r.mode, sizeof(r.mode), "fwd");
	assert_int_equal(results_add(rs, &r), 0);
}

/* 3 workloads x 2 backends x 6 shapes; the rmsnorm kprof case of shape 2 fails its check */
static void fill(struct kp_results *rs)
{
	snprintf(rs->device, sizeof(rs->device), "NVIDIA H200");
	rs->sm_clock_mhz = 1830, rs->mem_clock_mhz = 3201;
	for (int i = 0; i < 6; i++) {
		add(rs, "aten::convolution", "conv2d", conv_shapes[i], "reference", 1.1 - 0.1 * i,
		    236.8 / (1.1 - 0.1 * i), 0, 0);
		add(rs, "aten::convolution", "conv2d", conv_shapes[i], "cudnn", 0.43 - 0.03 * i,
		    236.8 / (0.43 - 0.03 * i), 0, 0);
	}
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 6; i++) {
			const char *op = k ? "aten::_fused_rms_norm" : "aten::_softmax";
			const char *kind = k ? "rmsnorm" : "softmax";
			add(rs, op, kind, row_shapes[i], "reference", 0.01 * (i + 1), 0,
			    2000 + 100 * i, 0);
			add(rs, op, kind, row_shapes[i], "kprof", 0.006 * (i + 1) + 0.001 * k, 0,
			    3400 + 120 * i, k && i == 2);
		}
}

/* The table row of @shape / @backend / @op in @doc's "results" table, or -1. */
static long table_row(const struct kp_table *tb, const char *op, const char *shape,
		      const char *backend)
{
	int cop = tb->ncols - 1, cshape = tb->ncols - 2;
	int cback = -1;
	for (int c = 0; c < tb->ncols; c++)
		if (!strcmp(tb->cols[c].key, "backend"))
			cback = c;
	for (size_t r = 0; r < tb->nrows; r++) {
		const struct kp_cell *c = &tb->cells[r * (size_t)tb->ncols];
		if (!strcmp(c[cop].s, op) && !strcmp(c[cshape].s, shape) &&
		    !strcmp(c[cback].s, backend))
			return (long)r;
	}
	return -1;
}

static int col_of(const struct kp_table *tb, const char *key)
{
	for (int c = 0; c < tb->ncols; c++)
		if (!strcmp(tb->cols[c].key, key))
			return c;
	return -1;
}

static const struct kp_table *results_table(const struct kp_doc *doc)
{
	for (size_t i = 0; i < doc->nitems; i++)
		if (doc->items[i].type == ITEM_TABLE && !strcmp(doc->items[i].jkey, "results"))
			return doc->items[i].table;
	return NULL;
}

static const struct kp_device *h200(struct kp_devdb *db)
{
	struct kp_diag d;
	assert_int_equal(devdb_load_builtin(db, &d), 0);
	const struct kp_device *dev = devdb_find(db, "NVIDIA H200");
	assert_non_null(dev);
	return dev;
}

/* The backend of legend entry @s ("cudnn  2.417x") */
static void legend_backend(const char *s, char *out, size_t cap)
{
	snprintf(out, cap, "%.*s", (int)strcspn(s, " "), s);
}

static void points_equal_the_table(void **state)
{
	(void)state;
	struct kp_results rs = { 0 };
	struct kp_devdb db;
	const struct kp_device *dev = h200(&db);
	fill(&rs);
	struct kp_doc doc;
	doc_init(&doc, "capture", 10);
	results_doc(&doc, &rs, dev, 1, NULL);
	const struct kp_table *tb = results_table(&doc);
	assert_non_null(tb);
	int ctime = col_of(tb, "time_ns"), cfl = col_of(tb, "tflops"), cgb = col_of(tb, "gbs");
	int nch = 0;
	size_t npts = 0;
	for (size_t i = 0; i < doc.nitems; i++) {
		if (doc.items[i].type != ITEM_CHART)
			continue;
		const struct kp_chart *ch = doc.items[i].chart;
		nch++;
		assert_int_equal(ch->kind, CHART_LINES);
		assert_int_equal(ch->nlanes, 6);
		assert_int_equal(ch->nseries, 2);
		int tfl = !strcmp(ch->yunit, "TFLOP/s");
		const char *op = nch == 1 ? "aten::convolution"
				 : nch == 2 ? "aten::_softmax"
					    : "aten::_fused_rms_norm";
		assert_int_equal(tfl, nch == 1);
		for (size_t k = 0; k < ch->npts; k++) {
			const struct kp_cpoint *p = &ch->pts[k];
			char be[32];
			legend_backend(ch->series[p->series], be, sizeof(be));
			long r = table_row(tb, op, ch->lanes[(size_t)p->x], be);
			assert_true(r >= 0);
			const struct kp_cell *c = &tb->cells[(size_t)r * (size_t)tb->ncols];
			/* y is the number the table prints in the column the chart's unit names */
			assert_true(c[tfl ? cfl : cgb].type == CELL_NUM);
			assert_true(p->y == c[tfl ? cfl : cgb].d);
			assert_true(fabs(p->w - (double)c[ctime].i) <= 0.5);
			/* the shape's label and run order: lane i is the case's i-th shape */
			assert_string_equal(p->label, ch->lanes[(size_t)p->x]);
			assert_string_equal(ch->lanes[(size_t)p->x],
					    (tfl ? conv_shapes : row_shapes)[(size_t)p->x]);
			npts++;
		}
	}
	assert_int_equal(nch, 3);
	assert_int_equal(npts, rs.n);
	doc_free(&doc);
	results_free(&rs);
	devdb_free(&db);
}

static void legend_carries_the_geomean_speedup(void **state)
{
	(void)state;
	struct kp_results rs = { 0 };
	fill(&rs);
	struct kp_doc doc;
	doc_init(&doc, "capture", 10);
	results_charts(&doc, &rs, NULL, NULL);
	/* conv: cudnn over reference, by hand from the times fill() gives */
	double s = 0;
	for (int i = 0; i < 6; i++)
		s += log((1.1 - 0.1 * i) / (0.43 - 0.03 * i));
	char want[64];
	snprintf(want, sizeof(want), "cudnn  %.3fx", exp(s / 6));
	const struct kp_chart *ch = doc_find_chart(&doc, "results-1");
	assert_non_null(ch);
	assert_string_equal(ch->series[1], want);
	assert_string_equal(ch->series[0], "reference  1.000x (base)");
	/* rmsnorm: kprof's times are 0.006 (i + 1) + 0.001 */
	s = 0;
	for (int i = 0; i < 6; i++)
		s += log(0.01 * (i + 1) / (0.006 * (i + 1) + 0.001));
	snprintf(want, sizeof(want), "kprof  %.3fx", exp(s / 6));
	ch = doc_find_chart(&doc, "results-3");
	assert_non_null(ch);
	assert_string_equal(ch->series[1], want);
	/* without a device entry, no peak line */
	assert_int_equal(ch->nmarks, 0);
	doc_free(&doc);
	results_free(&rs);
}

static void peak_is_the_device_table_at_the_run_clock(void **state)
{
	(void)state;
	struct kp_results rs = { 0 };
	struct kp_devdb db;
	const struct kp_device *dev = h200(&db);
	fill(&rs);
	struct kp_doc doc;
	doc_init(&doc, "capture", 10);
	results_charts(&doc, &rs, dev, NULL);
	/* bf16 dense peak x min(f, clk_ref) / clk_ref (doc/devices.md §4.2), in TFLOP/s */
	const struct kp_peak *pk = &dev->peak[PREC_BF16];
	double f = 1830 < pk->clk_ref_mhz ? 1830 : pk->clk_ref_mhz;
	const struct kp_chart *ch = doc_find_chart(&doc, "results-1");
	assert_int_equal(ch->nmarks, 1);
	assert_true(fabs(ch->marks[0].v - pk->flop_per_s * f / pk->clk_ref_mhz / 1e12) < 1e-9);
	assert_non_null(strstr(ch->marks[0].label, "at 1830 MHz"));
	/* DRAM: the datasheet bandwidth (3201 MHz is not below the entry's memory clock) */
	ch = doc_find_chart(&doc, "results-2");
	assert_int_equal(ch->nmarks, 1);
	double bw = dev->mem_bw_byte_per_s;
	if (dev->mem_clk_mhz > 3201)
		bw = bw * 3201 / dev->mem_clk_mhz;
	assert_true(fabs(ch->marks[0].v - bw / 1e9) < 1e-9);
	doc_free(&doc);
	results_free(&rs);
	devdb_free(&db);
}

static void failed_checks_are_flagged(void **state)
{
	(void)state;
	struct kp_results rs = { 0 };
	fill(&rs);
	struct kp_doc doc;
	doc_init(&doc, "capture", 10);
	results_charts(&doc, &rs, NULL, NULL);
	int flagged = 0;
	for (size_t i = 0; i < doc.nitems; i++) {
		if (doc.items[i].type != ITEM_CHART)
			continue;
		const struct kp_chart *ch = doc.items[i].chart;
		for (size_t k = 0; k < ch->npts; k++)
			if (ch->pts[k].flag) {
				flagged++;
				assert_string_equal(ch->name, "results-3");
				assert_string_equal(ch->pts[k].label, "16384x1024");
				assert_non_null(strstr(ch->pts[k].tip, "FAILED"));
				assert_non_null(strstr(ch->pts[k].tip, "time 0.01900 ms"));
			}
	}
	assert_int_equal(flagged, 1);
	doc_free(&doc);
	results_free(&rs);
}

/* @doc's charts as --format json writes them */
static char *charts_json(const struct kp_results *rs)
{
	struct kp_devdb db;
	const struct kp_device *dev = h200(&db);
	struct kp_doc doc;
	doc_init(&doc, "analyze", 10);
	results_charts(&doc, rs, dev, NULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	table_render(&doc, FMT_JSON, 0, f);
	fclose(f);
	doc_free(&doc);
	devdb_free(&db);
	return buf;
}

static void written_and_read_back_draw_the_same(void **state)
{
	(void)state;
	struct kp_results rs = { 0 };
	fill(&rs);
	char *want = charts_json(&rs);
	static const char *const sfx[] = { ".json", ".csv" };
	for (int k = 0; k < 2; k++) {
		char path[64], why[200];
		snprintf(path, sizeof(path), "/tmp/kprof-rc-XXXXXX%s", sfx[k]);
		int fd = mkstemps(path, (int)strlen(sfx[k]));
		assert_true(fd >= 0);
		close(fd);
		assert_int_equal(results_write(&rs, path, why, sizeof(why)), 0);
		struct kp_results back = { 0 };
		struct kp_diag d;
		assert_int_equal(results_load(&back, path, &d), 0);
		unlink(path);
		assert_int_equal(back.n, rs.n);
		assert_string_equal(back.device, "NVIDIA H200");
		assert_int_equal(back.sm_clock_mhz, 1830);
		assert_int_equal(back.mem_clock_mhz, 3201);
		for (size_t i = 0; i < rs.n; i++) {
			assert_string_equal(back.r[i].shape, rs.r[i].shape);
			assert_string_equal(back.r[i].layout, rs.r[i].layout);
			assert_true(back.r[i].ms == rs.r[i].ms);
			assert_int_equal(back.r[i].err <= back.r[i].tol, rs.r[i].err <= rs.r[i].tol);
		}
		char *got = charts_json(&back);
		assert_string_equal(got, want);
		free(got);
		results_free(&back);
	}
	free(want);
	results_free(&rs);
}

/* @rs written by results_write() as CSV into a new file @path (64 bytes; the caller
 * removes it), its text in @text (@cap bytes, NUL-terminated). */
static void csv_of(const struct kp_results *rs, char *path, char *text, size_t cap)
{
	char why[200];
	snprintf(path, 64, "/tmp/kprof-rc-XXXXXX.csv");
	int fd = mkstemps(path, 4);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(results_write(rs, path, why, sizeof(why)), 0);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t len = fread(text, 1, cap - 1, f);
	fclose(f);
	text[len] = 0;
}

/* A CSV's records sorted by metric (a spreadsheet's sort) read as the same cases. */
static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void records_in_any_order_find_their_case(void **state)
{
	(void)state;
	struct kp_results rs = { 0 };
	fill(&rs);
	char path[64];
	static char text[1 << 20];
	csv_of(&rs, path, text, sizeof(text));
	unlink(path);
	/* the header, then the records sorted on their text (metric_name is not the first
	 * column: each metric's records end up apart from their case's others) */
	char *lines[4096], *save = NULL;
	size_t n = 0;
	for (char *l = strtok_r(text, "\n", &save); l && n < 4096; l = strtok_r(NULL, "\n", &save))
		lines[n++] = l;
	assert_true(n > 2);
	qsort(lines + 1, n - 1, sizeof(*lines), cmp_line);
	static char sorted[1 << 20];
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += (size_t)snprintf(sorted + k, sizeof(sorted) - k, "%s\n", lines[i]);
	struct kp_results back = { 0 };
	struct kp_diag d;
	assert_int_equal(results_read(&back, sorted, k, "s.csv", &d), 0);
	/* the same cases with the same figures (run order is what the sort lost) */
	assert_int_equal(back.n, rs.n);
	for (size_t i = 0; i < rs.n; i++) {
		const struct kp_result *a = &rs.r[i], *b = NULL;
		for (size_t j = 0; j < back.n && !b; j++)
			if (!strcmp(back.r[j].shape, a->shape) && !strcmp(back.r[j].backend, a->backend) &&
			    !strcmp(back.r[j].dtype, a->dtype) && !strcmp(back.r[j].layout, a->layout) &&
			    !strcmp(back.r[j].op, a->op) && !strcmp(back.r[j].mode, a->mode))
				b = &back.r[j];
		assert_non_null(b);
		assert_true(b->ms == a->ms && b->tflops == a->tflops && b->gbs == a->gbs &&
			    b->peak_pct == a->peak_pct);
	}
	results_free(&back);
	results_free(&rs);
}

/* Whether CSV record @l is of metric @m ("...,latency (ms),..."). */
static int of_metric(const char *l, const char *m)
{
	char pat[64];
	snprintf(pat, sizeof(pat), ",%s,", m);
	return strstr(l, pat) != NULL;
}

/*
 * A case run twice is two cases, read case by case (as written) or metric by metric (all
 * latency records, then all TFLOPS records, each metric's in run order): the k-th record of
 * a metric is the k-th run's.
 */
static void a_case_run_twice_is_two_cases_in_either_order(void **state)
{
	(void)state;
	struct kp_results rs = { 0 };
	add(&rs, "aten::mm", "matmul", "4096x4096", "kprof", 1.5, 91.6, 0, 0);
	add(&rs, "aten::mm", "matmul", "4096x4096", "kprof", 2.5, 55.0, 0, 0);
	char path[64];
	static char text[1 << 16], by_metric[1 << 16];
	csv_of(&rs, path, text, sizeof(text));
	unlink(path);
	char *lines[16], *save = NULL;
	size_t n = 0;
	for (char *l = strtok_r(text, "\n", &save); l && n < 16; l = strtok_r(NULL, "\n", &save))
		lines[n++] = l;
	assert_int_equal(n, 5); /* the header, two metrics for each run */
	size_t k = (size_t)snprintf(by_metric, sizeof(by_metric), "%s\n", lines[0]);
	static const char *const metrics[] = { "latency (ms)", "TFLOPS" };
	for (int m = 0; m < 2; m++)
		for (size_t i = 1; i < n; i++)
			if (of_metric(lines[i], metrics[m]))
				k += (size_t)snprintf(by_metric + k, sizeof(by_metric) - k, "%s\n", lines[i]);
	static char as_written[1 << 16];
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		w += (size_t)snprintf(as_written + w, sizeof(as_written) - w, "%s\n", lines[i]);
	const char *inputs[] = { as_written, by_metric };
	size_t lens[] = { w, k };
	for (int t = 0; t < 2; t++) {
		struct kp_results back = { 0 };
		struct kp_diag d;
		assert_int_equal(results_read(&back, inputs[t], lens[t], "twice.csv", &d), 0);
		assert_int_equal(back.n, 2);
		assert_true(back.r[0].ms == 1.5 && back.r[0].tflops == 91.6);
		assert_true(back.r[1].ms == 2.5 && back.r[1].tflops == 55.0);
		results_free(&back);
	}
	results_free(&rs);
}

/*
 * Runs of one case with different metrics, case by case (as files of two captures joined:
 * the second has a bandwidth, the first none): each run's records stay its own, the later
 * run's bandwidth and % of peak on the second case.
 */
static void runs_with_different_metrics_keep_their_records(void **state)
{
	(void)state;
	struct kp_results rs = { 0 };
	add(&rs, "aten::mm", "matmul", "4096x4096", "kprof", 1.5, 91.6, 0, 0);
	add(&rs, "aten::mm", "matmul", "4096x4096", "kprof", 2.5, 55.0, 100.0, 0);
	snprintf(rs.r[1].layout, sizeof(rs.r[1].layout), "%s", rs.r[0].layout); /* one case */
	char path[64];
	static char text[1 << 16];
	csv_of(&rs, path, text, sizeof(text));
	unlink(path);
	struct kp_results back = { 0 };
	struct kp_diag d;
	assert_int_equal(results_read(&back, text, strlen(text), "runs.csv", &d), 0);
	assert_int_equal(back.n, 2);
	assert_true(back.r[0].ms == 1.5 && back.r[0].tflops == 91.6 && back.r[0].gbs == 0 &&
		    back.r[0].peak_pct == 0);
	assert_true(back.r[1].ms == 2.5 && back.r[1].tflops == 55.0 && back.r[1].gbs == 100.0 &&
		    back.r[1].peak_pct == rs.r[1].peak_pct && rs.r[1].peak_pct > 0);
	results_free(&back);
	results_free(&rs);
	/* a run with latency only, then one with TFLOP/s too (L1, L2 T2): each metric in one
	 * stretch, but not as many of each, so read case by case: T2 is the second run's */
	struct kp_results two = { 0 };
	add(&two, "aten::mm", "matmul", "4096x4096", "kprof", 1.5, 0, 0, 0);
	add(&two, "aten::mm", "matmul", "4096x4096", "kprof", 2.5, 55.0, 0, 0);
	csv_of(&two, path, text, sizeof(text));
	unlink(path);
	assert_int_equal(results_read(&back, text, strlen(text), "runs.csv", &d), 0);
	assert_int_equal(back.n, 2);
	assert_true(back.r[0].ms == 1.5 && back.r[0].tflops == 0);
	assert_true(back.r[1].ms == 2.5 && back.r[1].tflops == 55.0);
	results_free(&back);
	results_free(&two);
}

/* testdata/handmade/capture_results_trace.json carries capture_results.json's records */
static void trace_results_equal_the_results_file(void **state)
{
	(void)state;
	const char *td = getenv("KPROF_TESTDATA");
	char p1[512], p2[512];
	snprintf(p1, sizeof(p1), "%s/handmade/capture_results.json", td ? td : "testdata");
	snprintf(p2, sizeof(p2), "%s/handmade/capture_results_trace.json", td ? td : "testdata");
	struct kp_results file = { 0 };
	struct kp_diag d;
	assert_int_equal(results_load(&file, p1, &d), 0);
	struct kp_trace t;
	struct kp_load_opts lo = { 0 };
	assert_int_equal(trace_load(&t, p2, &lo, &d), 0);
	assert_int_equal(t.kprof_results.n, 36);
	char *a = charts_json(&file), *b = charts_json(&t.kprof_results);
	assert_string_equal(a, b);
	free(a), free(b);
	trace_free(&t);
	results_free(&file);
}

static void bad_records_are_located(void **state)
{
	(void)state;
	struct kp_results rs = { 0 };
	struct kp_diag d;
	const char bad[] = "[{\"metric\":{\"name\":\"TFLOPS\"}}]";
	assert_int_equal(results_read(&rs, bad, strlen(bad), "r.json", &d), -1);
	assert_int_equal(d.status, KP_BADINPUT);
	assert_string_equal(d.msg,
			    "r.json:1:2: error: record without metric.name or model.backend");
	const char csv[] = "a,b\n1,2\n";
	assert_int_equal(results_read(&rs, csv, strlen(csv), "r.csv", &d), -1);
	assert_non_null(strstr(d.msg, "r.csv:1:1: error: expected a benchmark-db CSV header"));
	/* values that are not numbers a chart can draw: NaN, infinite, negative */
	static const char *const vals[] = { "\"nan\"", "1e999", "-2.5" };
	for (size_t i = 0; i < 3; i++) {
		char js[256];
		snprintf(js, sizeof(js),
			 "[{\"model\":{\"backend\":\"kprof\"},\"metric\":{\"name\":\"TFLOPS\","
			 "\"benchmark_values\":[%s]}}]",
			 vals[i]);
		assert_int_equal(results_read(&rs, js, strlen(js), "r.json", &d), -1);
		assert_string_equal(d.msg,
				    "r.json:1:2: error: metric value is not a finite number >= 0");
	}
	/* the CSV reader checks what the JSON one does: metric and backend, values */
	const char empty[] = "benchmark_name,metric_name,backend\n,,\n";
	assert_int_equal(results_read(&rs, empty, strlen(empty), "r.csv", &d), -1);
	assert_string_equal(d.msg, "r.csv:2: error: record without metric.name or model.backend");
	const char inf[] = "benchmark_name,metric_name,backend,benchmark_value\nb,TFLOPS,kprof,inf\n";
	assert_int_equal(results_read(&rs, inf, strlen(inf), "r.csv", &d), -1);
	assert_string_equal(d.msg, "r.csv:2: error: metric value is not a finite number >= 0");
	results_free(&rs);
}

/* A results CSV holds no cell a spreadsheet would run, and reads back as it was. */
static void csv_formulas_are_quoted_and_read_back(void **state)
{
	(void)state;
	struct kp_results rs = { 0 };
	fill(&rs);
	snprintf(rs.device, sizeof(rs.device), "=cmd|' /C calc'!A0");
	snprintf(rs.r[0].backend, sizeof(rs.r[0].backend), "@SUM(1+1)");
	/* a text that starts with "'" itself, before a formula or not, and "-" text */
	snprintf(rs.r[1].backend, sizeof(rs.r[1].backend), "'-a,b");
	snprintf(rs.r[2].backend, sizeof(rs.r[2].backend), "'plain");
	snprintf(rs.r[3].backend, sizeof(rs.r[3].backend), "-a");
	char path[64];
	static char text[1 << 20];
	csv_of(&rs, path, text, sizeof(text));
	assert_non_null(strstr(text, ",\"''-a,b\","));
	assert_non_null(strstr(text, ",'plain,"));
	assert_non_null(strstr(text, ",\"'-a\","));
	assert_null(strstr(text, ",=cmd"));
	assert_non_null(strstr(text, ",\"'=cmd|' /C calc'!A0\","));
	assert_non_null(strstr(text, ",\"'@SUM(1+1)\","));
	struct kp_results back = { 0 };
	struct kp_diag d;
	assert_int_equal(results_load(&back, path, &d), 0);
	unlink(path);
	assert_string_equal(back.device, rs.device);
	assert_string_equal(back.r[0].backend, "@SUM(1+1)");
	assert_string_equal(back.r[1].backend, "'-a,b");
	assert_string_equal(back.r[2].backend, "'plain");
	assert_string_equal(back.r[3].backend, "-a");
	results_free(&back);
	results_free(&rs);
}

/* The charts in @doc: how many, and the first's note. */
static int charts_in(const struct kp_doc *doc, const char **note)
{
	int n = 0;
	for (size_t i = 0; i < doc->nitems; i++)
		if (doc->items[i].type == ITEM_CHART && !n++)
			*note = doc->items[i].chart->note;
	return n;
}

/* A chart asked for that the run does not have: one chart that says which it has. */
static void a_missing_chart_says_which_there_are(void **state)
{
	(void)state;
	struct kp_results rs = { 0 };
	struct kp_devdb db;
	const struct kp_device *dev = h200(&db);
	fill(&rs);
	struct kp_doc doc;
	const char *note = NULL;
	doc_init(&doc, "analyze", 10);
	results_charts(&doc, &rs, dev, "results-9");
	assert_int_equal(charts_in(&doc, &note), 1);
	assert_string_equal(note, "no chart 'results-9': this run's results draw results-1 to "
				  "results-3");
	doc_free(&doc);
	doc_init(&doc, "analyze", 10);
	results_charts(&doc, &rs, dev, "results-2");
	assert_int_equal(charts_in(&doc, &note), 1);
	assert_null(strstr(note ? note : "", "no chart"));
	doc_free(&doc);
	struct kp_results none = { 0 };
	doc_init(&doc, "analyze", 10);
	results_charts(&doc, &none, dev, "results");
	assert_int_equal(charts_in(&doc, &note), 1);
	assert_non_null(strstr(note, "no capture results here"));
	doc_free(&doc);
	results_free(&rs);
	devdb_free(&db);
}

/* A shape over its 95 bytes is cut on a character's boundary, never inside one. */
static void long_names_are_cut_between_characters(void **state)
{
	(void)state;
	char js[1024], shape[256] = "";
	for (int i = 0; i < 60; i++)
		strcat(shape, "\xc3\xa9"); /* é: 2 bytes; 94 bytes fit whole, the 48th does not */
	snprintf(js, sizeof(js),
		 "[{\"model\":{\"backend\":\"kprof\",\"name\":\"%s\"},\"metric\":{\"name\":"
		 "\"latency (ms)\",\"benchmark_values\":[1]}}]",
		 shape);
	struct kp_results rs = { 0 };
	struct kp_diag d;
	assert_int_equal(results_read(&rs, js, strlen(js), "r.json", &d), 0);
	assert_int_equal(rs.n, 1);
	assert_int_equal(strlen(rs.r[0].shape), 94);
	assert_memory_equal(rs.r[0].shape, shape, 94);
	results_free(&rs);
}

/* JSON escapes in a record (as other writers may use them) read as their characters */
static void escaped_strings_are_unescaped(void **state)
{
	(void)state;
	struct kp_results rs = { 0 };
	struct kp_diag d;
	const char js[] = "[{\"model\":{\"name\":\"conv2d-8x3x4x4-\\u003e8 1x1-nchw\","
			  "\"type\":\"conv2d\",\"backend\":\"cudnn\",\"extra_info\":"
			  "{\"op\":\"aten::convolution\",\"layout\":\"nchw\",\"pass\":\"fwd\"}},"
			  "\"metric\":{\"name\":\"latency (ms)\",\"benchmark_values\":[0.5]}}]";
	assert_int_equal(results_read(&rs, js, strlen(js), "r.json", &d), 0);
	assert_int_equal(rs.n, 1);
	assert_string_equal(rs.r[0].shape, "8x3x4x4->8 1x1");
	assert_true(rs.r[0].ms == 0.5);
	results_free(&rs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(points_equal_the_table),
		cmocka_unit_test(legend_carries_the_geomean_speedup),
		cmocka_unit_test(peak_is_the_device_table_at_the_run_clock),
		cmocka_unit_test(failed_checks_are_flagged),
		cmocka_unit_test(written_and_read_back_draw_the_same),
		cmocka_unit_test(records_in_any_order_find_their_case),
		cmocka_unit_test(a_case_run_twice_is_two_cases_in_either_order),
		cmocka_unit_test(runs_with_different_metrics_keep_their_records),
		cmocka_unit_test(long_names_are_cut_between_characters),
		cmocka_unit_test(a_missing_chart_says_which_there_are),
		cmocka_unit_test(csv_formulas_are_quoted_and_read_back),
		cmocka_unit_test(trace_results_equal_the_results_file),
		cmocka_unit_test(bad_records_are_located),
		cmocka_unit_test(escaped_strings_are_unescaped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
