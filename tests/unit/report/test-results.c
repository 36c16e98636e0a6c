/*
 * test-results.c — the workloads' results: speedups and geomean, the summary table, and the
 * --results writers checked against a schema written from the PyTorch OSS benchmark database
 * format (pytorch/test-infra benchmark.oss_ci_benchmark_v3; doc/workloads.md §d.2).
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

#include "kprof/capture.h"
#include "kprof/json.h"
#include "kprof/doc.h"
#include "kprof/table.h"
#include "kprof/results.h"

static struct kp_result mk(const char *backend, const char *layout, double ms, double err)
{
	struct kp_result r = { .ms = ms, .tflops = 2.0 / ms, .err = err, .tol = 8e-3 };
	snprintf(r.op, sizeof(r.op), "aten::convolution");
	snprintf(r.kind, sizeof(r.kind), "conv2d");
	snprintf(r.shape, sizeof(r.shape), "32x64x56x56->64 3x3 s1 p1 d1 g1");
	snprintf(r.dtype, sizeof(r.dtype), "bf16");
	snprintf(r.backend, sizeof(r.backend), "%s", backend);
	snprintf(r.layout, sizeof(r.layout), "%s", layout);
	snprintf(r.mode, sizeof(r.mode), "fwd");
	return r;
}

static void fill(struct kp_results *rs)
{
	struct kp_result a = mk("reference", "nchw", 0.5, 4e-4),
			 b = mk("cudnn", "nchw", 0.0625, 2e-4);
	struct kp_result c = mk("cudnn", "nhwc", 0.025, 1e-4);
	struct kp_result d = {
		.ms = 0.0691, .gbs = 3884.7, .peak_pct = 80.7, .err = 9e-3, .tol = 8e-3
	};
	snprintf(d.op, sizeof(d.op), "aten::_softmax");
	snprintf(d.kind, sizeof(d.kind), "softmax");
	snprintf(d.shape, sizeof(d.shape), "16384x4096");
	snprintf(d.dtype, sizeof(d.dtype), "bf16");
	snprintf(d.backend, sizeof(d.backend), "kprof");
	snprintf(d.mode, sizeof(d.mode), "fwd");
	assert_int_equal(results_add(rs, &a), 0);
	assert_int_equal(results_add(rs, &b), 0);
	assert_int_equal(results_add(rs, &c), 0);
	assert_int_equal(results_add(rs, &d), 0);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void speedup_is_against_the_first_backend(void **state)
{
	(void)state;
	struct kp_results rs = { 0 };
	fill(&rs);
	/* only nchw ran on two backends: 0.5 / 0.0625 */
	assert_true(fabs(results_geomean(&rs) - 8.0) < 1e-12);

	struct kp_doc doc;
	doc_init(&doc, "capture", 8);
	results_report(&rs, &doc);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	table_render(&doc, FMT_TABLE, 0, f);
	fclose(f);
	assert_non_null(strstr(buf, "8.000x (each case's backends vs its first)"));
	assert_non_null(strstr(buf, "\u2717")); /* the softmax row's err is over its tol */
	assert_non_null(strstr(buf, "aten::_softmax"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	table_render(&doc, FMT_JSON, 0, f);
	fclose(f);
	assert_non_null(strstr(buf, "\"speedup\": 8,"));
	const char *gm = strstr(buf, "\"geomean_speedup\": "); /* a number, not its text */
	assert_non_null(gm);
	assert_true(fabs(strtod(gm + 19, NULL) - 8.0) < 1e-9);
	assert_non_null(strstr(buf, "\"time_ns\": 62500,"));
	free(buf);
	doc_free(&doc);
	results_free(&rs);
}

/* Capture's times keep 4 significant digits below 0.1 ms, and 4 decimals above. */
static void times_keep_four_significant_digits(void **state)
{
	(void)state;
	char b[32];
	assert_string_equal(results_ms_text(b, sizeof(b), 0.0510), "0.05100");
	assert_string_equal(results_ms_text(b, sizeof(b), 0.04637), "0.04637");
	assert_string_equal(results_ms_text(b, sizeof(b), 0.0051234), "0.005123");
	assert_string_equal(results_ms_text(b, sizeof(b), 0.5), "0.5000");
	assert_string_equal(results_ms_text(b, sizeof(b), 1.37512), "1.3751");
	assert_string_equal(results_ms_text(b, sizeof(b), 2370.4), "2370.4000");
	assert_string_equal(results_ms_text(b, sizeof(b), 0), "-");
	assert_string_equal(results_ms_text(b, sizeof(b), -1), "-");

	/* the summary table's Time column too */
	struct kp_results rs = { 0 };
	struct kp_result r = mk("cudnn", "nhwc", 0.0510, 1e-4);
	assert_int_equal(results_add(&rs, &r), 0);
	struct kp_doc doc;
	doc_init(&doc, "capture", 8);
	results_report(&rs, &doc);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	table_render(&doc, FMT_TABLE, 0, f);
	fclose(f);
	assert_non_null(strstr(buf, "0.05100 ms"));
	free(buf);
	doc_free(&doc);
	/* a case without a time: null in json, not 0 ns */
	rs.r[0].ms = 0;
	doc_init(&doc, "capture", 8);
	results_report(&rs, &doc);
	f = open_memstream(&buf, &len);
	table_render(&doc, FMT_JSON, 0, f);
	fclose(f);
	assert_non_null(strstr(buf, "\"time_ns\": null"));
	free(buf);
	doc_free(&doc);
	results_free(&rs);
}

/* The record schema: every path a record may hold, its JSON type, required or not. */
static const struct field {
	const char *path;
	enum kp_json_type type;
	int required;
} schema[] = {
	{ "benchmark", JT_OBJ, 1 },
	{ "benchmark.name", JT_STR, 1 },
	{ "benchmark.mode", JT_STR, 0 },
	{ "benchmark.dtype", JT_STR, 0 },
	{ "benchmark.extra_info", JT_OBJ, 0 },
	{ "model", JT_OBJ, 1 },
	{ "model.name", JT_STR, 1 },
	{ "model.type", JT_STR, 0 },
	{ "model.backend", JT_STR, 0 },
	{ "model.origins", JT_ARR, 0 },
	{ "model.origins[]", JT_STR, 0 },
	{ "model.extra_info", JT_OBJ, 0 },
	{ "metric", JT_OBJ, 1 },
	{ "metric.name", JT_STR, 1 },
	{ "metric.benchmark_values", JT_ARR, 1 },
	{ "metric.benchmark_values[]", JT_NUM, 1 },
	{ "metric.target_value", JT_NUM, 0 },
	{ "metric.extra_info", JT_OBJ, 0 },
};
#define NSCHEMA (sizeof(schema) / sizeof(schema[0]))

/*
 * Check a document against the schema: an array of records, each with every required field,
 * no field outside the schema, the schema's JSON types, and strings only in the extra_info maps
 * (Map(String, String)).  NULL and the record count in @records, or what is wrong.
 */
static const char *schema_error(const char *text, int *records)
{
	static char err[512];
	struct kp_json p;
	struct kp_json_tok t;
	const char *e = NULL;
	json_init_mem(&p, text, strlen(text));
	*records = 0;
	if (json_next(&p, &t) != JT_ARR) {
		e = "not an array of records";
		goto out;
	}
	for (;;) {
		enum kp_json_type ty = json_next(&p, &t);
		if (ty == JT_ARR_END)
			break;
		if (ty != JT_OBJ) {
			e = "a record is not an object";
			goto out;
		}
		++*records;
		int seen[NSCHEMA] = { 0 }, depth = 0, haskey = 0;
		char path[4][200], key[64] = "";
		for (;;) {
			ty = json_next(&p, &t);
			if (ty == JT_ERROR || ty == JT_END) {
				e = "malformed JSON";
				goto out;
			}
			if (ty == JT_OBJ_END || ty == JT_ARR_END) {
				if (depth-- == 0)
					break;
				continue;
			}
			if (ty == JT_KEY) {
				snprintf(key, sizeof(key), "%.*s", (int)t.len, t.s);
				haskey = 1;
				continue;
			}
			char full[300];
			if (depth == 0)
				snprintf(full, sizeof(full), "%s", key);
			else if (haskey)
				snprintf(full, sizeof(full), "%s.%s", path[depth - 1], key);
			else
				snprintf(full, sizeof(full), "%s[]", path[depth - 1]);
			haskey = 0;
			if (depth > 0 && strlen(path[depth - 1]) >= 11 &&
			    !strcmp(path[depth - 1] + strlen(path[depth - 1]) - 10, "extra_info")) {
				if (ty != JT_STR) {
					snprintf(err, sizeof(err),
						 "'%s' is not a string (extra_info is "
						 "Map(String, String))",
						 full);
					e = err;
					goto out;
				}
				continue;
			}
			size_t k;
			for (k = 0; k < NSCHEMA && strcmp(schema[k].path, full); k++)
				;
			if (k == NSCHEMA || ty != schema[k].type) {
				snprintf(err, sizeof(err), "'%s' %s", full,
					 k == NSCHEMA ? "is not in the schema"
						      : "has the wrong type");
				e = err;
				goto out;
			}
			seen[k] = 1;
			if (ty == JT_OBJ || ty == JT_ARR) {
				if (depth == 4) {
					e = "nested too deep";
					goto out;
				}
				snprintf(path[depth++], sizeof(path[0]), "%.199s", full);
			}
		}
		for (size_t k = 0; k < NSCHEMA; k++)
			if (schema[k].required && !seen[k]) {
				snprintf(err, sizeof(err), "record %d lacks '%s'", *records,
					 schema[k].path);
				e = err;
				goto out;
			}
	}
	if (json_next(&p, &t) != JT_END)
		e = "data after the array";
out:
	json_free(&p);
	return e;
}

static void json_records_match_the_schema(void **state)
{
	(void)state;
	struct kp_results rs = { 0 };
	fill(&rs);
	char path[] = "/tmp/kprof-results-XXXXXX.json", why[200];
	int fd = mkstemps(path, 5);
	assert_true(fd >= 0);
	close(fd);
	snprintf(rs.device, sizeof(rs.device), "NVIDIA H200");
	assert_int_equal(results_write(&rs, path, why, sizeof(why)), 0);
	char *text = slurp(path);
	/* 3 conv cases x (latency, TFLOPS) + softmax x (latency, GB/s, % of peak) */
	int n = 0;
	const char *e = schema_error(text, &n);
	assert_null(e);
	assert_int_equal(n, 9);
	assert_non_null(strstr(text, "\"name\": \"kprof capture\""));
	assert_non_null(strstr(text, "\"dtype\": \"bfloat16\""));
	assert_non_null(strstr(text, "\"name\": \"conv2d-32x64x56x56->64 3x3 s1 p1 d1 g1-nhwc\""));
	assert_non_null(strstr(text, "\"target_value\": 85"));
	assert_non_null(strstr(text, "\"accuracy_ok\": \"false\""));
	/* the schema check itself rejects a missing required field, a number in a map, an
	 * unknown field and a string value */
	static const char *const bad[][2] = {
		{ "[{\"benchmark\":{\"name\":\"x\"},\"model\":{\"name\":\"m\"},\"metric\":"
		  "{\"name\":\"t\",\"target_value\":0}}]",
		  "lacks 'metric.benchmark_values'" },
		{ "[{\"benchmark\":{\"name\":\"x\",\"extra_info\":{\"sm\":1980}},\"model\":"
		  "{\"name\":\"m\"},\"metric\":{\"name\":\"t\",\"benchmark_values\":[1]}}]",
		  "Map(String, String)" },
		{ "[{\"benchmark\":{\"name\":\"x\"},\"model\":{\"name\":\"m\"},\"metric\":"
		  "{\"name\":\"t\",\"benchmark_values\":[1],\"unit\":\"ms\"}}]",
		  "not in the schema" },
		{ "[{\"benchmark\":{\"name\":\"x\"},\"model\":{\"name\":\"m\"},\"metric\":"
		  "{\"name\":\"t\",\"benchmark_values\":[\"1\"]}}]",
		  "wrong type" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e = schema_error(bad[i][0], &n);
		assert_non_null(e);
		assert_non_null(strstr(e, bad[i][1]));
	}
	unlink(path);
	results_free(&rs);
}

static void csv_has_one_line_per_metric(void **state)
{
	(void)state;
	struct kp_results rs = { 0 };
	fill(&rs);
	char path[] = "/tmp/kprof-results-XXXXXX.csv", why[200];
	int fd = mkstemps(path, 4);
	assert_true(fd >= 0);
	close(fd);
	snprintf(rs.device, sizeof(rs.device), "NVIDIA H200");
	rs.sm_clock_mhz = 1830, rs.mem_clock_mhz = 3201;
	assert_int_equal(results_write(&rs, path, why, sizeof(why)), 0);
	char *text = slurp(path);
	int lines = 0;
	for (const char *s = text; *s; s++)
		lines += *s == '\n';
	assert_int_equal(lines, 1 + 9);
	assert_true(!strncmp(text,
			     "benchmark_name,benchmark_mode,benchmark_dtype,device,model_name,",
			     64));
	assert_non_null(strstr(text,
			       "kprof capture,inference,bfloat16,NVIDIA H200,softmax-16384x4096,"
			       "softmax,kprof,aten::_softmax,,false,% of DRAM peak,80.7,85,fwd,0.009,"
			       "1830,3201\n"));
	unlink(path);
	assert_int_equal(results_write(&rs, "/tmp/x.txt", why, sizeof(why)), -1);
	assert_non_null(strstr(why, ".json or .csv"));
	assert_int_equal(results_write(&rs, "/nonexistent/dir/r.json", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "cannot write"));
	results_free(&rs);

	/* --results is checked before anything runs */
	struct kp_capture_opts o = { .output = "x.json",
				     .workloads = WL_SOFTMAX,
				     .iters = 1,
				     .sample_period_ms = 10,
				     .results = "r.txt" };
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "--results"));
	capture_opts_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(speedup_is_against_the_first_backend),
		cmocka_unit_test(times_keep_four_significant_digits),
		cmocka_unit_test(json_records_match_the_schema),
		cmocka_unit_test(csv_has_one_line_per_metric),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
