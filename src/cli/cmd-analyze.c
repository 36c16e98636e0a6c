/*
 * cmd-analyze.c — kprof analyze: options -> pipeline_run (load, link, analyze) -> render.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kprof/analyze.h"
#include "kprof/breakdown-doc.h"
#include "kprof/breakdown.h"
#include "kprof/charts.h"
#include "kprof/cmd.h"
#include "kprof/devdb.h"
#include "kprof/diag.h"
#include "kprof/opts.h"
#include "kprof/output.h"
#include "kprof/paths.h"
#include "kprof/memory-doc.h"
#include "kprof/results.h"
#include "kprof/pipeline.h"
#include "kprof/ranks-doc.h"
#include "kprof/ranks.h"
#include "kprof/report-doc.h"
#include "kprof/sort.h"
#include "kprof/stages.h"
#include "kprof/trace.h"

static const char *const group_names[] = { "kernel", "op",     "op-shape", "annotation",
					    "module", "source", NULL };
static const char *const format_names[] = {
	"table", "csv", "json", "markdown", "html", "svg", "folded", NULL
};
static const char *const name_modes[] = { "short", "full", NULL };
static const char *const color_names[] = { "auto", "always", "never", NULL }; /* enum kp_color */

static int bad_sort_key(const char *bad)
{
	const char *hint = sort_suggest(SORT_ANALYZE, bad);
	char keys[256];
	diag_fprintf(stderr, "kprof: error: unknown sort key '%s'", bad);
	if (hint)
		diag_fprintf(stderr, " (did you mean '%s'?)", hint);
	diag_fprintf(stderr, "\nkprof: valid sort keys: %s, each with optional :asc or :desc\n",
		sort_key_list(SORT_ANALYZE, " ", keys, sizeof(keys)));
	return KP_USAGE;
}

/* --chart NAME -> the chart bits to build; 0 after printing the error */
static unsigned chart_bits(const char *name, int format)
{
	static const unsigned mine = CHART_BIT(CHART_ROOFLINE) | CHART_BIT(CHART_TOP) |
				     CHART_BIT(CHART_TIMELINE) | CHART_BIT(CHART_ICICLE) |
				     CHART_BIT(CHART_MEMORY) | CHART_BIT(CHART_LINES);
	if (!name)
		return format == FMT_SVG ? CHART_BIT(CHART_ROOFLINE) : mine;
	int k = charts_kind(name);
	if (k < 0 || !(mine & CHART_BIT(k))) {
		diag_fprintf(stderr,
			"kprof: error: unknown chart '%s' (analyze draws roofline, timeline, top, flame, "
			"memory, results-N)\n",
			name);
		return 0;
	}
	return CHART_BIT(k);
}

static const char synopsis[] =
	"[<options>] <trace.json[.gz|.zst]|->\n   or: kprof analyze [<options>] <rank-trace>... | <dir>"
	"\n   or: kprof analyze [<options>] --results <results.json|results.csv>";

/* Several traces (or a directory): one job's ranks, read in parallel, compared. */
static int analyze_ranks(char **args, size_t nargs, long jobs, const struct kp_load_opts *lo,
			 const struct kp_devdb *db, const char *device, int format,
			 enum kp_warn_mode wm, const char *out_path)
{
	struct kp_diag d = { 0 };
	size_t n;
	struct kp_warnings pw = { 0 };
	char **paths = paths_expand(args, nargs, &n, &pw, &d);
	diag_warn_print(&pw, wm, NULL, stderr);
	diag_warn_free(&pw);
	if (!paths) {
		diag_print(stderr, d.msg);
		return d.status;
	}
	if (output_clash(out_path, (const char *const *)paths, n, "analyze", &d) < 0) {
		diag_print(stderr, d.msg);
		paths_free(paths);
		return d.status;
	}
	struct kp_ranks rs;
	int rc = ranks_load(&rs, paths, n, (int)jobs, lo, &d);
	if (rc < 0) {
		for (size_t i = 0; i < rs.n; i++)
			diag_warn_print(&rs.r[i].warn, wm, NULL, stderr);
		diag_print(stderr, d.msg);
		ranks_free(&rs);
		paths_free(paths);
		return d.status;
	}
	char note[1024];
	if (device && devdb_pick_note(db, device, 0, note, sizeof(note)))
		diag_note_print(stderr, note);
	struct kp_devchoice dc;
	ranks_device(&rs, db, device, &dc);
	const struct kp_device *dev = dc.dev;
	/* one rank's trace: a summary for kprof merge, which tells the ranks missing from a set */
	rs.one_rank = n == 1;
	ranks_compare(&rs, dev && dev->peer_bw_byte_per_s > 0 ? dev->peer_bw_byte_per_s : -1);
	struct kp_doc doc;
	ranks_doc(&rs, dev ? dev->name : dc.name, &doc);
	int status = KP_OK;
	struct kp_output o;
	FILE *out = output_open(&o, out_path, &d);
	if (out) {
		table_render(&doc, format, 0, out);
		output_close(&o, &d);
	}
	if (d.status) {
		diag_print(stderr, d.msg);
		status = d.status;
	}
	doc_free(&doc);
	for (size_t i = 0; i < rs.n; i++)
		diag_warn_print(&rs.r[i].warn, wm, NULL, stderr);
	diag_warn_print(&rs.warn, wm, NULL, stderr);
	ranks_free(&rs);
	paths_free(paths);
	return status;
}
static const char *const warn_names[] = { "summary", "all", NULL }; /* enum kp_warn_mode */

/* Several traces (or a directory, or --ranks): the per-rank view (ranks.c). */
static int analyze_many(char **paths, size_t npaths, long jobs, int strict, int warn_mode,
			const char *db_path, const char *device, int format, const char *out_path)
{
	struct kp_diag dd = { 0 };
	struct kp_devdb rdb;
	if (devdb_load_default(&rdb, db_path, &dd) < 0) {
		diag_print(stderr, dd.msg);
		return dd.status;
	}
	struct kp_load_opts rlo = { .strict = strict, .warn_all = warn_mode == WARN_ALL };
	if (format == FMT_SVG) {
		diag_fprintf(stderr,
			"kprof: error: --format svg draws a chart of one trace; several traces have none\n");
		devdb_free(&rdb);
		return KP_USAGE;
	}
	int rrc = analyze_ranks(paths, npaths, jobs, &rlo, &rdb, device, format,
				(enum kp_warn_mode)warn_mode, out_path);
	devdb_free(&rdb);
	return rrc;
}

/* -j N for one trace: parse it on N threads; 0 (the default) is one per CPU. */
static int parse_jobs(long jobs)
{
	if (jobs <= 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		jobs = c > 0 ? c : 1;
	}
	return jobs > 256 ? 256 : (int)jobs;
}

/* --breakdown and --launches: sections after the table (breakdown.c, breakdown-doc.c). */
static void add_breakdown(struct kp_doc *doc, const struct kp_trace *t, int breakdown, int launches,
			  double idle_gap_us, double short_us, int group, long top, int full_names)
{
	struct kp_bd_opts bo = { .launch_gap_ns = (int64_t)(idle_gap_us * 1e3 + 0.5),
				 .short_ns = (int64_t)(short_us * 1e3 + 0.5),
				 .launch_by_op = group != GROUP_KERNEL };
	struct kp_breakdown b;
	breakdown_run(t, &bo, &b);
	if (breakdown)
		breakdown_doc(doc, &b);
	if (launches)
		breakdown_doc_launches(doc, &b, top, group != GROUP_KERNEL, full_names);
	breakdown_free(&b);
}

/*
 * The document with its charts when the format draws them (html, svg, json with --chart).
 * The roofline has one point per op and shape, whatever the table's grouping (@shapes).
 */
static void render_with_charts(struct kp_doc *doc, const struct kp_pipeline_out *p,
			       const struct kp_report_doc_opts *ro, unsigned charts, int draw,
			       const char *chart, FILE *out)
{
	if (draw)
		charts_analyze(doc, &p->report, pipeline_shapes(p), charts);
	/* the icicle when the trace has module frames; --chart flame draws "no module frames" */
	if (draw && (charts & CHART_BIT(CHART_ICICLE)) &&
	    (pipeline_modules(p) || charts == CHART_BIT(CHART_ICICLE)))
		charts_icicle(doc, pipeline_modules(p));
	/* the memory charts with --memory or --chart memory (which runs the analysis) */
	if (draw && (charts & CHART_BIT(CHART_MEMORY)) && p->has_memory)
		charts_memory(doc, &p->memory, &p->trace);
	/* a capture trace's results (capture.c): the charts `--results FILE` draws */
	if (draw && (charts & CHART_BIT(CHART_LINES)) &&
	    (p->trace.kprof_results.n || (chart && !strncmp(chart, "results", 7))))
		results_charts(doc, &p->trace.kprof_results, p->report.dev,
			       chart && strcmp(chart, "results") ? chart : NULL);
	table_render(doc, ro->format, ro->color, out);
}

/* KPROF_TIMING: the load stage and what its threads did (lo->stats). */
static void print_load(int64_t ns, const struct kp_load_stats *s)
{
	if (!s->threads) {
		stages_print(stderr, "load", ns, "1 thread");
		return;
	}
	stages_print(stderr, "load", ns,
		     "%d threads, %s; %lld chunks, %lld taken; main thread: merge %.4f s, release %.4f s, waiting %.4f s; reader busy %.4f s; chunk parsing %.4f s (reading %.4f s) on all threads; workers alive %.4f s",
		     s->threads,
		     s->direct ? "chunks read by the workers" : "chunks read by the reader",
		     (long long)s->chunks, (long long)s->merged, s->main_merge_ns / 1e9,
		     s->main_release_ns / 1e9, s->main_wait_ns / 1e9, s->reader_busy_ns / 1e9,
		     s->workers_busy_ns / 1e9, s->workers_read_ns / 1e9, s->workers_ns / 1e9);
}

/* how one trace's report is written */
struct view {
	int format, color, stats, full_names;
	int breakdown, launches, memory;
	double idle_gap_us, short_us;
	long top;
	unsigned charts;
	const char *chart, *path;
	int opened; /* set by write_one: the output was opened */
};

/* the format draws charts: html, svg, json with --chart */
static int draws(const struct view *v)
{
	return v->format == FMT_HTML || v->format == FMT_SVG || (v->format == FMT_JSON && v->chart);
}

/* The report of @r (and the sections and charts @v asks for) to v->path; 0 or the status. */
static int write_one(const struct kp_pipeline_out *p, int group, struct view *v)
{
	struct kp_diag d = { 0 };
	struct kp_output o;
	FILE *out = output_open(&o, v->path, &d);
	v->opened = out != NULL;
	if (!out) {
		diag_print(stderr, d.msg);
		return d.status;
	}
	struct kp_report_doc_opts ro = { .format = v->format,
				     .stats = v->stats,
				     .full_names = v->full_names,
				     .color = table_use_color(v->color, out) };
	if (v->format == FMT_FOLDED) {
		report_folded_write(&p->report, out);
		if (output_close(&o, &d) < 0) {
			diag_print(stderr, d.msg);
			return d.status;
		}
		return KP_OK;
	}
	struct kp_doc doc;
	report_doc(&p->report, &ro, &doc);
	if (v->breakdown || v->launches)
		add_breakdown(&doc, &p->trace, v->breakdown, v->launches, v->idle_gap_us,
			      v->short_us, group, v->top, v->full_names);
	if (v->memory)
		memory_doc(&doc, &p->memory, v->top);
	render_with_charts(&doc, p, &ro, v->charts, draws(v), v->chart, out);
	doc_free(&doc);
	if (output_close(&o, &d) < 0) {
		diag_print(stderr, d.msg);
		return d.status;
	}
	return KP_OK;
}

/*
 * @in's trace loaded, linked and analysed (pipeline.c), sorted, cut to v->top and @min_pct and
 * written as @v says, then its warnings.  0 or the status after the message.
 */
static int analyze_write(const struct kp_pipeline_in *in, const struct kp_sort_spec *sp,
			 double min_pct, struct view *v, int warn_mode)
{
	struct kp_pipeline_out p;
	if (pipeline_run(in, &p) < 0) {
		diag_warn_print(&p.trace.warn, warn_mode, NULL, stderr);
		diag_print(stderr, p.diag.msg);
		int status = p.diag.status;
		pipeline_free(&p);
		return status;
	}
	if (in->load.stats) {
		print_load(p.load_ns, in->load.stats);
		stages_print(stderr, "link", p.link_ns, NULL);
	}
	if (p.note[0])
		diag_note_print(stderr, p.note);
	int64_t t0 = stages_now();
	sort_analyze(&p.report, sp);
	analyze_select(&p.report, v->top, min_pct);
	int64_t t1 = stages_now();
	int status = write_one(&p, in->analyze.group, v);
	if (stages_on()) {
		stages_print(stderr, "analyze", p.analyze_ns + (t1 - t0), NULL);
		stages_print(stderr, "write", stages_now() - t1, NULL);
	}
	if (v->opened) { /* nothing written: no warnings either */
		diag_warn_print(&p.trace.warn, warn_mode, NULL, stderr);
		diag_warn_print(&p.report.warn, warn_mode, NULL, stderr);
	}
	pipeline_free(&p);
	return status;
}

/* KPROF_PARSE_CHUNK: the parallel parse's chunk size in bytes (tests: small chunks on small
 * traces); 0 when unset (the size follows the file).  main.c refused a bad value. */
static size_t parse_chunk_env(void)
{
	long chunk = 0;
	struct kp_diag d = { 0 };
	return opts_env_long("KPROF_PARSE_CHUNK", OPTS_CHUNK_MIN, OPTS_CHUNK_MAX, &chunk, &d) > 0
		       ? (size_t)chunk
		       : 0;
}

/* kprof analyze's options as given; analyze_defaults before parsing. */
struct analyze_args {
	int group, format, color, name_mode, strict;
	int stats, quiet, warn_mode;
	int breakdown, launches, ranks, drop_prefix, memory;
	double idle_gap_us, short_us;
	long top, jobs, depth;
	double min_pct, sm_clock;
	const char *sort, *device, *db_path, *out_path, *chart, *results;
};

static const struct analyze_args analyze_defaults = {
	.group = GROUP_KERNEL,
	.format = FMT_TABLE,
	.color = COLOR_AUTO,
	.warn_mode = WARN_SUMMARY,
	.idle_gap_us = BD_LAUNCH_GAP_NS / 1e3,
	.short_us = BD_SHORT_KERNEL_NS / 1e3,
	.top = -1,
};

/* The options into @a, the traces to argv[1 .. 1 + *nargs); -1 to go on, else the status. */
static int parse_options(struct analyze_args *a, int argc, char **argv, int *nargs)
{
	/* clang-format off */
	const struct kp_opt opts[] = {
		{ "group-by", 'g', OPT_CHOICE, "KEY", "group rows by", &a->group, group_names, NULL },
		{ "depth", 0, OPT_INT, "N", "-g module: fold module paths deeper than N into their ancestor at depth N",
		  &a->depth, NULL, NULL },
		{ "sort", 's', OPT_STR, "KEY[:asc|:desc],...",
		  "sort keys: time calls avg min max med tflops gbps pct-peak pct-bw flops bytes intensity name op",
		  &a->sort, NULL, NULL },
		{ "top", 'n', OPT_INT, "N", "show N rows, fold the rest into (others); 0 = all (default 20 for table/markdown)",
		  &a->top, NULL, NULL },
		{ "min-pct", 0, OPT_PCT, "PCT", "fold rows under PCT % of GPU time into (others)", &a->min_pct, NULL, NULL },
		{ "format", 'f', OPT_CHOICE, "FMT", "output format", &a->format, format_names, NULL },
		{ "output", 'o', OPT_STR, "FILE", "write the report to FILE instead of standard output", &a->out_path, NULL, NULL },
		{ "chart", 0, OPT_STR, "NAME", "svg: the chart to draw (roofline, timeline, top, flame, memory); html: only that chart; json: add its data",
		  &a->chart, NULL, NULL },
		{ "color", 0, OPT_CHOICE, "WHEN",
		  "colour tables: auto = on a terminal when NO_COLOR is unset", &a->color,
		  color_names, NULL },
		{ "stats", 0, OPT_FLAG, NULL, "add median, min and max columns", &a->stats, NULL, NULL },
		{ "name", 0, OPT_CHOICE, "MODE", "kernel names in tables", &a->name_mode, name_modes, NULL },
		{ "device", 0, OPT_STR, "NAME", "device name to look up instead of the trace's", &a->device, NULL, NULL },
		{ "device-db", 0, OPT_STR, "FILE", "device table replacing the built-in one (also $KPROF_DEVICE_DB)",
		  &a->db_path, NULL, NULL },
		{ "sm-clock", 0, OPT_CALLBACK, "MHZ", "SM clock the GPU ran at, when the trace has none", &a->sm_clock, NULL, opts_cb_clock_mhz },
		{ "breakdown", 0, OPT_FLAG, NULL, "GPU time split into compute, comm, memcpy, other and idle (by cause), per step and stream",
		  &a->breakdown, NULL, NULL },
		{ "results", 0, OPT_STR, "FILE", "instead of a trace: capture --results' FILE.json or FILE.csv, its charts (html, svg) and table",
		  &a->results, NULL, NULL },
		{ "memory", 0, OPT_FLAG, NULL, "device memory from [memory] events (profile_memory=True): peak, who holds it, allocations per op",
		  &a->memory, NULL, NULL },
		{ "launches", 0, OPT_FLAG, NULL, "launch statistics per kernel (per op with -g op): CPU cost, launch->start latency, short kernels",
		  &a->launches, NULL, NULL },
		{ "idle-gap", 0, OPT_DOUBLE, "US", "--breakdown: idle gaps shorter than US with work queued are launch latency (default 30)",
		  &a->idle_gap_us, NULL, NULL },
		{ "short-kernel", 0, OPT_DOUBLE, "US", "--launches: kernels shorter than US are short (default 10)",
		  &a->short_us, NULL, NULL },
		{ "drop-unlaunched-prefix", 0, OPT_FLAG, NULL, "leave out GPU events without a launch call that start before the first one with a launch call",
		  &a->drop_prefix, NULL, NULL },
		{ "ranks", 0, OPT_FLAG, NULL, "the per-rank view even for one trace (json: a summary for kprof merge)",
		  &a->ranks, NULL, NULL },
		{ "jobs", 'j', OPT_INT, "N", "threads: one trace is parsed on N, several traces are read N at a time (default: one per CPU)",
		  &a->jobs, NULL, NULL },
		{ "strict", 0, OPT_FLAG, NULL, "treat truncation and data anomalies as errors (exit 3)", &a->strict, NULL, NULL },
		{ "quiet", 'q', OPT_FLAG, NULL, "print no warnings, only errors", &a->quiet, NULL, NULL },
		{ "warnings", 0, OPT_CHOICE, "WHICH", "one line per kind of warning with its count, or every one",
		  &a->warn_mode, warn_names, NULL },
		{ NULL, 0, 0, NULL, NULL, NULL, NULL, NULL },
	};
	/* clang-format on */
	int rc = opts_parse("analyze", synopsis, opts, argc, argv, nargs);
	if (rc)
		return rc > 0 ? KP_OK : KP_USAGE;
	if (a->quiet)
		a->warn_mode = WARN_QUIET;
	if (*nargs == 0 && !a->results) {
		diag_fprintf(stderr, "kprof: error: no trace given\n");
		opts_usage(stderr, "analyze", synopsis, opts);
		return KP_USAGE;
	}
	return -1;
}

/* Several traces, a directory or --ranks: the per-rank view. */
static int is_many(const struct analyze_args *a, int nargs, const char *first)
{
	struct stat st;
	return nargs > 1 || (nargs == 1 && a->ranks) ||
	       (nargs == 1 && strcmp(first, "-") && stat(first, &st) == 0 && S_ISDIR(st.st_mode));
}

/* One trace's option checks, before any file is read; -1 to go on, else the status. */
static int check_options(struct analyze_args *a, unsigned *charts, struct kp_sort_spec *sp)
{
	if (a->idle_gap_us <= 0 || a->short_us <= 0) {
		diag_fprintf(stderr, "kprof: error: %s must be positive\n",
			a->idle_gap_us <= 0 ? "--idle-gap" : "--short-kernel");
		return KP_USAGE;
	}
	if (a->depth < 0 || (a->depth && a->group != GROUP_MODULE)) {
		diag_fprintf(stderr, a->depth < 0 ? "kprof: error: --depth must be positive\n"
						  : "kprof: error: --depth applies to -g module\n");
		return KP_USAGE;
	}
	if (a->format == FMT_FOLDED && a->group != GROUP_MODULE && a->group != GROUP_SOURCE) {
		diag_fprintf(stderr, "kprof: error: --format folded needs -g module or -g source\n");
		return KP_USAGE;
	}
	if (a->format == FMT_FOLDED && (a->breakdown || a->launches || a->chart || a->memory)) {
		diag_fprintf(stderr,
			"kprof: error: --format folded writes stacks only (no --breakdown, --launches, --memory, --chart)\n");
		return KP_USAGE;
	}
	if (a->top < 0)
		a->top = table_default_top(a->format);
	*charts = chart_bits(a->chart, a->format);
	if (!*charts)
		return KP_USAGE;
	/* bad sort keys are usage errors, found before any file is read */
	const char *bad;
	if (sort_parse(sp, SORT_ANALYZE, a->sort, &bad) < 0)
		return bad_sort_key(bad);
	return -1;
}

/* One trace: loaded, analysed and written as @a says. */
static int analyze_one(const struct analyze_args *a, const char *path, unsigned charts,
		       const struct kp_sort_spec *sp)
{
	struct kp_diag d = { 0 };
	struct kp_devdb db;
	if (devdb_load_default(&db, a->db_path, &d) < 0) {
		diag_print(stderr, d.msg);
		return d.status;
	}
	struct kp_load_stats ls;
	/* --chart memory alone runs the memory analysis; its charts mark Optimizer.step spans */
	int memchart = charts == CHART_BIT(CHART_MEMORY);
	int memory = a->memory || memchart;
	int drawn = a->format == FMT_HTML || a->format == FMT_SVG || (a->format == FMT_JSON && a->chart);
	struct kp_pipeline_in in = {
		.path = path,
		.load = { .strict = a->strict,
			  .annotations = a->group == GROUP_ANNOT ||
					 (memory && drawn && (charts & CHART_BIT(CHART_MEMORY))),
			  .warn_all = a->warn_mode == WARN_ALL,
			  .jobs = parse_jobs(a->jobs),
			  .chunk = parse_chunk_env(),
			  .stats = stages_on() ? &ls : NULL },
		.db = &db,
		.device = a->device,
		.sm_clock_mhz = a->sm_clock,
		.analyze = { .group = a->group,
			     .depth = (int)a->depth,
			     .folded = a->format == FMT_FOLDED,
			     .full_names = a->name_mode == 1,
			     .warn_all = a->warn_mode == WARN_ALL },
		.drop_prefix = a->drop_prefix,
		.memory = memory,
	};
	struct view v = {
		.format = a->format,
		.color = a->color,
		.stats = a->stats,
		.full_names = a->name_mode == 1,
		.breakdown = a->breakdown,
		.launches = a->launches,
		.memory = a->memory,
		.idle_gap_us = a->idle_gap_us,
		.short_us = a->short_us,
		.top = a->top,
		.charts = charts,
		.chart = a->chart,
		.path = a->out_path,
	};
	in.shapes = draws(&v) && (charts & CHART_BIT(CHART_ROOFLINE));
	in.modules = draws(&v) && (charts & CHART_BIT(CHART_ICICLE));
	int status = analyze_write(&in, sp, a->min_pct, &v, a->warn_mode);
	devdb_free(&db);
	return status;
}

/*
 * --results FILE: capture's benchmark-db records drawn as results_doc() (charts, summary
 * table), the device entry chosen by the records' device name (or --device).
 */
static int analyze_results(const struct analyze_args *a)
{
	if (a->format == FMT_FOLDED ||
	    (a->chart && charts_kind(a->chart) != CHART_LINES)) {
		diag_fprintf(stderr, "kprof: error: --results draws the results charts "
				     "(--chart results or results-N) and table; not %s\n",
			     a->chart ? a->chart : "--format folded");
		return KP_USAGE;
	}
	struct kp_diag d = { 0 };
	struct kp_devdb db;
	struct kp_results rs = { 0 };
	if (devdb_load_default(&db, a->db_path, &d) < 0) {
		diag_print(stderr, d.msg);
		return d.status;
	}
	int status = KP_OK;
	struct kp_output o;
	FILE *out = NULL;
	if (results_load(&rs, a->results, &d) < 0 || !(out = output_open(&o, a->out_path, &d))) {
		diag_print(stderr, d.msg);
		status = d.status;
	} else {
		struct kp_devchoice c;
		devdb_choose(&db, a->device, rs.device[0] ? rs.device : NULL, NULL, &c);
		struct kp_doc doc;
		doc_init(&doc, "analyze", 10);
		int draw = a->format == FMT_HTML || a->format == FMT_SVG ||
			   (a->format == FMT_JSON && a->chart);
		results_doc(&doc, &rs, c.dev, draw,
			    a->chart && strcmp(a->chart, "results") ? a->chart : NULL);
		table_render(&doc, a->format, table_use_color(a->color, out), out);
		doc_free(&doc);
		if (output_close(&o, &d) < 0) {
			diag_print(stderr, d.msg);
			status = d.status;
		}
	}
	results_free(&rs);
	devdb_free(&db);
	return status;
}

/* -o FILE is none of the traces nor the device table; -1 to go on, else the status. */
static int check_output(const struct analyze_args *a, char **args, int nargs)
{
	struct kp_diag d = { 0 };
	const char *db = a->db_path ? a->db_path : getenv("KPROF_DEVICE_DB");
	if (output_clash(a->out_path, (const char *const *)args, (size_t)nargs, "analyze", &d) <
		    0 ||
	    output_clash(a->out_path, &db, 1, "analyze", &d) < 0 ||
	    output_clash(a->out_path, &a->results, 1, "analyze", &d) < 0) {
		diag_print(stderr, d.msg);
		return d.status;
	}
	return -1;
}

int cmd_analyze(int argc, char **argv)
{
	struct analyze_args a = analyze_defaults;
	int nargs;
	int rc = parse_options(&a, argc, argv, &nargs);
	if (rc < 0)
		rc = check_output(&a, argv + 1, nargs);
	if (rc >= 0)
		return rc;
	if (a.results && nargs) {
		diag_fprintf(stderr, "kprof: error: --results FILE takes the place of a trace\n");
		return KP_USAGE;
	}
	if (a.results)
		return analyze_results(&a);
	if (is_many(&a, nargs, argv[1]) && a.drop_prefix) {
		diag_fprintf(stderr,
			"kprof: error: --drop-unlaunched-prefix applies to one trace, not to the per-rank view\n");
		return KP_USAGE;
	}
	for (int i = 1, stdin_seen = 0; i <= nargs; i++)
		if (!strcmp(argv[i], "-") && stdin_seen++) {
			diag_fprintf(stderr,
				"kprof: error: only one of the traces can be read from standard input\n");
			return KP_USAGE;
		}
	if (is_many(&a, nargs, argv[1]) && a.memory) {
		diag_fprintf(stderr,
			"kprof: error: --memory applies to one trace, not to the per-rank view\n");
		return KP_USAGE;
	}
	if (is_many(&a, nargs, argv[1]) && a.format == FMT_FOLDED) {
		diag_fprintf(stderr,
			"kprof: error: --format folded applies to one trace, not to the per-rank view\n");
		return KP_USAGE;
	}
	if (is_many(&a, nargs, argv[1]))
		return analyze_many(argv + 1, (size_t)nargs, a.jobs, a.strict, a.warn_mode,
				    a.db_path, a.device, a.format, a.out_path);
	unsigned charts;
	struct kp_sort_spec sp;
	rc = check_options(&a, &charts, &sp);
	if (rc >= 0)
		return rc;
	return analyze_one(&a, argv[1], charts, &sp);
}
