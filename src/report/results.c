/*
 * results.c — per-case results: the summary table (report model) and the benchmark-db writers.
 */
#include "kprof/results.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/arena.h"
#include "kprof/doc.h"
#include "kprof/hmap.h"
#include "kprof/jsonw.h"
#include "kprof/table.h"

char *results_ms_text(char *buf, size_t cap, double ms)
{
	if (!(ms > 0)) {
		snprintf(buf, cap, "-");
		return buf;
	}
	int dec = 3 - (int)floor(log10(ms));
	snprintf(buf, cap, "%.*f", dec < 4 ? 4 : dec > 12 ? 12 : dec, ms);
	return buf;
}

/*
 * Per row, the first row of its case (op, shape, dtype, layout, mode) when that one ran
 * another backend, else -1: the speedup's reference.  One pass through hmap; malloc'ed.
 */
static long *first_of_cases(const struct kp_results *rs)
{
	long *first = xmalloc((rs->n + 1) * sizeof(*first));
	struct kp_hmap map;
	struct kp_arena keys;
	hmap_init(&map, HMAP_STR);
	arena_init(&keys);
	for (size_t i = 0; i < rs->n; i++) {
		const struct kp_result *r = &rs->r[i];
		char key[256];
		int n = snprintf(key, sizeof(key), "%s\x1f%s\x1f%s\x1f%s\x1f%s", r->op, r->shape,
				 r->dtype, r->layout, r->mode);
		size_t len = n < 0 ? 0 : (size_t)n < sizeof(key) ? (size_t)n : sizeof(key) - 1;
		int created;
		struct kp_hmap_entry *e = hmap_put_str(&map, key, len, &created);
		if (created) {
			e->key.ptr = arena_strndup(&keys, key, len);
			e->val.i = (int64_t)i;
		}
		size_t j = (size_t)e->val.i;
		first[i] = j < i && strcmp(rs->r[j].backend, r->backend) ? (long)j : -1;
	}
	hmap_free(&map);
	arena_free(&keys);
	return first;
}

static double geomean_of(const struct kp_results *rs, const long *first)
{
	double s = 0;
	long n = 0;
	for (size_t i = 0; i < rs->n; i++) {
		long j = first[i];
		if (j >= 0 && rs->r[i].ms > 0 && rs->r[j].ms > 0)
			s += log(rs->r[j].ms / rs->r[i].ms), n++;
	}
	return n ? exp(s / (double)n) : 0;
}

double results_geomean(const struct kp_results *rs)
{
	long *first = first_of_cases(rs);
	double g = geomean_of(rs, first);
	free(first);
	return g;
}

enum {
	RC_TIME,
	RC_TFLOPS,
	RC_GBS,
	RC_PEAK,
	RC_SPEEDUP,
	RC_ERR,
	RC_OK,
	RC_DTYPE,
	RC_BACKEND,
	RC_LAYOUT,
	RC_MODE,
	RC_SHAPE,
	RC_OP,
	RC_N
};

static const struct kp_col cols[RC_N] = {
	[RC_TIME] = { "Time", "time_ns", COL_BOTH, 0 },
	[RC_TFLOPS] = { "TFLOP/s", "tflops", COL_BOTH, 0 },
	[RC_GBS] = { "GB/s", "gbs", COL_BOTH, 0 },
	[RC_PEAK] = { "%Peak", "peak_pct", COL_BOTH, 0 },
	[RC_SPEEDUP] = { "Speedup", "speedup", COL_BOTH, 0 },
	[RC_ERR] = { "Err", "err", COL_BOTH, 0 },
	[RC_OK] = { "Acc", "accuracy_ok", COL_BOTH, 1 },
	[RC_DTYPE] = { "Dtype", "dtype", COL_BOTH, 1 },
	[RC_BACKEND] = { "Backend", "backend", COL_BOTH, 1 },
	[RC_LAYOUT] = { "Layout", "layout", COL_BOTH, 1 },
	[RC_MODE] = { "Mode", "mode", COL_BOTH, 1 },
	[RC_SHAPE] = { "Shape", "shape", COL_BOTH, 1 },
	[RC_OP] = { "Op", "op", COL_BOTH, 1 },
};

void results_report(const struct kp_results *rs, struct kp_doc *doc)
{
	long *first = first_of_cases(rs);
	double g = geomean_of(rs, first);
	doc_fact_count(doc, "cases", "cases", (int64_t)rs->n);
	if (g > 0) { /* the text for people, the number for machines */
		doc_fact_textf(doc, "geomean", NULL, "%.3fx (each case's backends vs its first)", g);
		doc_fact_num(doc, NULL, "geomean_speedup", g);
	}
	struct kp_table *tb = doc_table(doc, "results", cols, RC_N);
	for (size_t i = 0; tb && i < rs->n; i++) {
		const struct kp_result *r = &rs->r[i];
		struct kp_cell *c = doc_row(tb);
		if (!c)
			break;
		char buf[40];
		if (r->ms > 0) { /* else unknown: an empty cell, null in json */
			results_ms_text(buf, sizeof(buf) - 3, r->ms);
			strcat(buf, " ms");
			doc_cell_int(tb, &c[RC_TIME], llround(r->ms * 1e6), buf);
		}
		if (r->tflops > 0) {
			snprintf(buf, sizeof(buf), "%.1f", r->tflops);
			doc_cell_num(tb, &c[RC_TFLOPS], r->tflops, buf);
		}
		if (r->gbs > 0) {
			snprintf(buf, sizeof(buf), "%.0f", r->gbs);
			doc_cell_num(tb, &c[RC_GBS], r->gbs, buf);
		}
		if (r->peak_pct > 0) {
			snprintf(buf, sizeof(buf), "%.1f%%", r->peak_pct);
			doc_cell_num(tb, &c[RC_PEAK], r->peak_pct, buf);
		}
		long j = first[i];
		if (j >= 0 && r->ms > 0) {
			snprintf(buf, sizeof(buf), "%.3fx", rs->r[j].ms / r->ms);
			doc_cell_num(tb, &c[RC_SPEEDUP], rs->r[j].ms / r->ms, buf);
		}
		snprintf(buf, sizeof(buf), "%.2e", r->err);
		doc_cell_num(tb, &c[RC_ERR], r->err, buf);
		doc_cell_str(tb, &c[RC_OK], r->err <= r->tol ? "yes" : "no",
				r->err <= r->tol ? "\u2713" : "\u2717");
		doc_cell_str(tb, &c[RC_DTYPE], r->dtype, NULL);
		doc_cell_str(tb, &c[RC_BACKEND], r->backend, NULL);
		doc_cell_str(tb, &c[RC_LAYOUT], r->layout[0] ? r->layout : "-", NULL);
		doc_cell_str(tb, &c[RC_MODE], r->mode, NULL);
		doc_cell_str(tb, &c[RC_SHAPE], r->shape, NULL);
		doc_cell_str(tb, &c[RC_OP], r->op, NULL);
	}
	free(first);
}

/* benchmark.dtype as PyTorch spells it */
static const char *torch_dtype(const char *d)
{
	if (!strcmp(d, "bf16"))
		return "bfloat16";
	if (!strcmp(d, "fp16"))
		return "float16";
	if (!strcmp(d, "tf32"))
		return "tf32";
	return "float32";
}

/* One record's metrics: latency always, then TFLOP/s or GB/s, then % of DRAM peak. */
struct metric {
	const char *name;
	double v, target;
};

static int metrics(const struct kp_result *r, struct metric *m)
{
	int n = 0;
	m[n++] = (struct metric){ "latency (ms)", r->ms, 0 };
	if (r->tflops > 0)
		m[n++] = (struct metric){ "TFLOPS", r->tflops, 0 };
	if (r->gbs > 0)
		m[n++] = (struct metric){ "bandwidth (GB/s)", r->gbs, 0 };
	if (r->peak_pct > 0)
		m[n++] = (struct metric){ "% of DRAM peak", r->peak_pct, 85 };
	return n;
}

static void model_name(const struct kp_result *r, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s-%s%s%s", r->kind, r->shape, r->layout[0] ? "-" : "", r->layout);
}

void results_write_json(const struct kp_results *rs, FILE *f)
{
	struct kp_jw jw;
	jw_init(&jw, f);
	jw_array_begin(&jw, NULL, 1);
	for (size_t i = 0; i < rs->n; i++) {
		const struct kp_result *r = &rs->r[i];
		struct metric m[4];
		int nm = metrics(r, m);
		char name[160], buf[40];
		model_name(r, name, sizeof(name));
		for (int k = 0; k < nm; k++) {
			if (!isfinite(m[k].v))
				continue;
			jw_object_begin(&jw, NULL, 1);
			jw_object_begin(&jw, "benchmark", 0);
			jw_string(&jw, "name", "kprof capture");
			jw_string(&jw, "mode", strcmp(r->mode, "fwd") ? "training" : "inference");
			jw_string(&jw, "dtype", torch_dtype(r->dtype));
			jw_object_begin(&jw, "extra_info", 0);
			jw_string(&jw, "device", rs->device);
			jw_string(&jw, "backend", r->backend);
			if (rs->sm_clock_mhz > 0)
				jw_int(&jw, "sm_clock_mhz", rs->sm_clock_mhz);
			if (rs->mem_clock_mhz > 0)
				jw_int(&jw, "mem_clock_mhz", rs->mem_clock_mhz);
			jw_end(&jw);
			jw_end(&jw);
			jw_object_begin(&jw, "model", 0);
			jw_string(&jw, "name", name);
			jw_string(&jw, "type", r->kind);
			jw_string(&jw, "backend", r->backend);
			jw_array_begin(&jw, "origins", 0);
			jw_string(&jw, NULL, "kprof");
			jw_end(&jw);
			jw_object_begin(&jw, "extra_info", 0);
			jw_string(&jw, "op", r->op);
			jw_string(&jw, "layout", r->layout);
			jw_string(&jw, "pass", r->mode);
			snprintf(buf, sizeof(buf), "%.3g", r->err);
			jw_string(&jw, "accuracy_err", buf);
			jw_string(&jw, "accuracy_ok", r->err <= r->tol ? "true" : "false");
			jw_end(&jw);
			jw_end(&jw);
			jw_object_begin(&jw, "metric", 0);
			jw_string(&jw, "name", m[k].name);
			jw_array_begin(&jw, "benchmark_values", 0);
			jw_double(&jw, NULL, m[k].v);
			jw_end(&jw);
			jw_double(&jw, "target_value", m[k].target);
			jw_end(&jw);
			jw_end(&jw);
		}
	}
	jw_end(&jw);
	fputc('\n', f);
}

/* A CSV field, quoted when it holds a comma or a quote. */
static void csv_field(FILE *f, const char *s, int last)
{
	table_csv_field(f, s);
	putc(last ? '\n' : ',', f);
}

static void write_csv(const struct kp_results *rs, FILE *f)
{
	fputs("benchmark_name,benchmark_mode,benchmark_dtype,device,model_name,model_type,backend,"
	      "op,layout,accuracy_ok,metric_name,benchmark_value,target_value,pass,accuracy_err,"
	      "sm_clock_mhz,mem_clock_mhz\n",
	      f);
	for (size_t i = 0; i < rs->n; i++) {
		const struct kp_result *r = &rs->r[i];
		struct metric m[4];
		int nm = metrics(r, m);
		char name[160], v[40], t[40];
		model_name(r, name, sizeof(name));
		for (int k = 0; k < nm; k++) {
			if (!isfinite(m[k].v))
				continue;
			csv_field(f, "kprof capture", 0);
			csv_field(f, strcmp(r->mode, "fwd") ? "training" : "inference", 0);
			csv_field(f, torch_dtype(r->dtype), 0);
			csv_field(f, rs->device, 0);
			csv_field(f, name, 0);
			csv_field(f, r->kind, 0);
			csv_field(f, r->backend, 0);
			csv_field(f, r->op, 0);
			csv_field(f, r->layout, 0);
			csv_field(f, r->err <= r->tol ? "true" : "false", 0);
			csv_field(f, m[k].name, 0);
			jw_format_double(v, sizeof(v), m[k].v);
			jw_format_double(t, sizeof(t), m[k].target);
			csv_field(f, v, 0);
			csv_field(f, t, 0);
			csv_field(f, r->mode, 0);
			snprintf(v, sizeof(v), "%.3g", r->err);
			csv_field(f, v, 0);
			snprintf(v, sizeof(v), "%d", rs->sm_clock_mhz);
			csv_field(f, v, 0);
			snprintf(v, sizeof(v), "%d", rs->mem_clock_mhz);
			csv_field(f, v, 1);
		}
	}
}

int results_write(const struct kp_results *rs, const char *path, char *why, size_t whylen)
{
	size_t len = strlen(path);
	int json = len >= 5 && !strcmp(path + len - 5, ".json");
	int csv = len >= 4 && !strcmp(path + len - 4, ".csv");
	if (!json && !csv) {
		snprintf(why, whylen, "%s: the results file must end in .json or .csv", path);
		return -1;
	}
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(why, whylen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	if (json)
		results_write_json(rs, f);
	else
		write_csv(rs, f);
	if (fclose(f) != 0) {
		snprintf(why, whylen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
