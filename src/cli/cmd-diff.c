/*
 * cmd-diff.c — kprof diff: options -> diff_run() -> the diff document -> render.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kprof/analyze.h"
#include "kprof/charts.h"
#include "kprof/cmd.h"
#include "kprof/devdb.h"
#include "kprof/diag.h"
#include "kprof/diff-doc.h"
#include "kprof/diff.h"
#include "kprof/input.h"
#include "kprof/opts.h"
#include "kprof/output.h"
#include "kprof/paths.h"
#include "kprof/rankdiff.h"
#include "kprof/sidefile.h"
#include "kprof/sort.h"
#include "kprof/table.h"
#include "kprof/trace.h"

/* --key NAME -> the analysis group it pairs rows by (key_groups[index]) */
static const char *const key_names[] = { "kernel", "op", "op-shape", "module", "source", NULL };
static const enum kp_group key_groups[] = { GROUP_KERNEL, GROUP_OP, GROUP_OP_SHAPE, GROUP_MODULE,
					    GROUP_SOURCE };
static const char *const format_names[] = {
	"table", "csv", "json", "markdown", "html", "svg", NULL
};
static const char *const name_modes[] = { "short", "full", NULL };
static const char *const color_names[] = { "auto", "always", "never", NULL }; /* enum kp_color */

static const char *const warn_names[] = { "summary", "all", NULL }; /* enum kp_warn_mode */
/* --chart NAME -> the chart bits to build; 0 after printing the error */
static unsigned chart_bits(const char *name, int format)
{
	static const unsigned mine = CHART_BIT(CHART_WATERFALL) | CHART_BIT(CHART_DUMBBELL) |
				     CHART_BIT(CHART_LIST);
	if (!name)
		return format == FMT_SVG ? CHART_BIT(CHART_WATERFALL) : mine;
	int k = charts_kind(name);
	if (k < 0 || !(mine & CHART_BIT(k))) {
		diag_fprintf(stderr,
			"kprof: error: unknown chart '%s' (diff draws waterfall, dumbbell)\n",
			name);
		return 0;
	}
	return CHART_BIT(k);
}

/* Each trace is parsed on one thread per CPU (kprof analyze's default -j), one after the other. */
static int cpu_count(void)
{
	long c = sysconf(_SC_NPROCESSORS_ONLN);
	return c < 1 ? 1 : c > 256 ? 256 : (int)c;
}

static const char synopsis[] =
	"[<options>] <base.json[.gz|.zst]|-> <new.json[.gz|.zst]|->\n   or: kprof diff [<options>] [--ranks] <base-dir> <new-dir>";

/* "3,4" -> 3 and 4; NULL or the reason */
static const char *parse_steps(const char *s, double *b, double *n)
{
	char first[32];
	const char *comma = strchr(s, ',');
	long x, y;
	if (!comma || (size_t)(comma - s) >= sizeof(first))
		return "expected two step counts >= 1, as B,N";
	snprintf(first, sizeof(first), "%.*s", (int)(comma - s), s);
	if (opts_parse_long(first, 1, INT_MAX, &x) || opts_parse_long(comma + 1, 1, INT_MAX, &y))
		return "expected two step counts from 1 to 2147483647, as B,N";
	*b = (double)x;
	*n = (double)y;
	return NULL;
}

/* --fail-above values in command-line order (files are read after parsing) */
struct limits {
	const char *v[64];
	int n;
};

static const char *add_limit(const char *arg, void *dst)
{
	struct limits *l = dst;
	if (l->n == 64)
		return "at most 64 --fail-above options";
	l->v[l->n++] = arg;
	return NULL;
}

/* "5us", "800ns", "0.02ms", "0": a time >= 0; a bare number is microseconds */
static const char *parse_min_delta(const char *arg, void *dst)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "ns", 1 },   { "us", 1e3 }, { "\xc2\xb5s", 1e3 },
		      { "ms", 1e6 }, { "s", 1e9 },  { "", 1e3 } };
	char *end;
	double v = strtod(arg, &end);
	if (end == arg || !isfinite(v) || v < 0 || v > 1e6)
		return "expected a time >= 0 such as 5us, 800ns or 0.02ms";
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit)) {
			*(int64_t *)dst = (int64_t)llround(v * units[i].ns);
			return NULL;
		}
	return "expected a time >= 0 such as 5us, 800ns or 0.02ms";
}

/* --fail-above values -> @g (rules in @a, vector *rules); 0, or the exit status after the error */
static int build_gate(const struct limits *l, struct kp_arena *a, struct kp_gate_opts *g,
		      struct kp_gate_rule **rules)
{
	size_t n = 0, cap = 0;
	for (int i = 0; i < l->n; i++) {
		const char *v = l->v[i];
		if (v[0] == '@') {
			struct kp_diag d = { 0 };
			size_t len;
			char *text = sidefile_read(v + 1, "limits file", SIDEFILE_MAX, &len, &d);
			int rc = text ? diff_gate_parse_file(a, text, len, v + 1,
							     &g->fail_above_pct, rules, &n, &cap,
							     &d)
				      : -1;
			free(text);
			if (rc < 0) {
				diag_print(stderr, d.msg);
				return d.status;
			}
			continue;
		}
		const char *why = diff_gate_parse_limit(a, v, strlen(v), &g->fail_above_pct, rules,
							&n, &cap);
		if (why) {
			diag_fprintf(stderr, "kprof: error: invalid value '%s' for '--fail-above': %s\n",
				v, why);
			diag_fprintf(stderr, "kprof: see 'kprof diff -h'\n");
			return KP_USAGE;
		}
	}
	g->rules = *rules;
	g->nrules = n;
	return 0;
}

/* The checks of options against each other, after parsing; -1 after the message (usage). */
static int finish_opts(struct kp_diff_run_opts *ro, const char *steps, const char *sort)
{
	if (steps) {
		const char *why = parse_steps(steps, &ro->diff.base_div, &ro->diff.new_div);
		if (why || ro->per_step == 0) {
			diag_fprintf(stderr, "kprof: error: %s\n",
				why ? why : "--steps and --no-per-step exclude each other");
			if (why)
				diag_fprintf(stderr, "kprof: see 'kprof diff -h'\n");
			return -1;
		}
	}
	if (!strcmp(ro->path[0], "-") && !strcmp(ro->path[1], "-")) {
		diag_fprintf(stderr,
			"kprof: error: only one of the traces can be read from standard input\n");
		return -1;
	}
	const char *bad;
	if (sort_parse(&ro->sort, SORT_DIFF, sort, &bad) < 0) {
		char keys[256];
		diag_fprintf(stderr,
			"kprof: error: unknown sort key '%s' (valid: %s; suffix :asc or :desc)\n",
			bad, sort_key_list(SORT_DIFF, ", ", keys, sizeof(keys)));
		return -1;
	}
	return 0;
}

/* where and how the report goes */
struct output {
	int format, color;
	const char *chart;
	unsigned charts;
	const char *path;
};

/* The report of @run written to o->path; 0, or the status after the message. */
static int write_report(const struct kp_diff_run *run, const struct kp_diff_run_opts *ro,
			const struct output *o)
{
	const struct kp_gate_opts *gate = &ro->gate;
	struct kp_memdiff_doc_opts mem = { .md = run->has_memdiff ? &run->memdiff : NULL,
					   .no_mem = { run->no_mem[0], run->no_mem[1] },
					   .limit_pct = run->mem_limit_pct,
					   .hits = run->memhits,
					   .nhits = run->nmemhits,
					   .top = ro->top };
	struct kp_diff_doc_opts rend = { .gate = diff_gated(gate) ? gate : NULL,
					    .hits = run->hits,
					    .nhits = run->nhits,
					    .mem = ro->memory ? &mem : NULL };
	struct kp_doc doc;
	diff_doc(&run->diff, &rend, &doc);
	if (o->format == FMT_HTML || o->format == FMT_SVG || (o->format == FMT_JSON && o->chart))
		charts_diff(&doc, &run->diff, o->charts);
	struct kp_diag od = { 0 };
	struct kp_output oo;
	FILE *out = output_open(&oo, o->path, &od);
	if (out) {
		table_render(&doc, o->format, table_use_color(o->color, out), out);
		output_close(&oo, &od);
	}
	if (od.status)
		diag_print(stderr, od.msg);
	doc_free(&doc);
	return od.status;
}

/*
 * Two traces: the gate's rules from @l, the device table, diff_run() and the report to @o;
 * the status (KP_REGRESSION when the gate tripped) after any message.
 */
static int diff_two(struct kp_diff_run_opts *ro, const struct limits *l, const char *db_path,
		    const struct output *o)
{
	struct kp_arena garena;
	arena_init(&garena);
	struct kp_gate_rule *rules = NULL;
	int status = build_gate(l, &garena, &ro->gate, &rules);
	if (status) {
		free(rules);
		arena_free(&garena);
		return status;
	}

	struct kp_diag dd = { 0 };
	struct kp_devdb db;
	if (devdb_load_default(&db, db_path, &dd) < 0) {
		diag_print(stderr, dd.msg);
		free(rules);
		arena_free(&garena);
		return dd.status;
	}
	ro->analyze.db = &db;
	struct kp_diff_run run;
	status = diff_run(&run, ro);
	if (status == KP_OK || status == KP_REGRESSION) {
		int ost = write_report(&run, ro, o);
		status = ost ? ost : status;
	}
	diff_run_print(&run, stderr);
	diff_run_free(&run);
	devdb_free(&db);
	free(rules);
	arena_free(&garena);
	return status;
}

/*
 * One side's rank traces (a directory or a trace), loaded, none of them @out_path; 0 or the
 * status after the message.
 */
static int load_side(const char *arg, int strict, const char *out_path, struct kp_ranks *rs)
{
	struct kp_diag d = { 0 };
	size_t n;
	char *args[1] = { (char *)arg };
	struct kp_warnings pw = { 0 };
	char **paths = paths_expand(args, 1, &n, &pw, &d);
	diag_warn_print(&pw, WARN_SUMMARY, NULL, stderr);
	diag_warn_free(&pw);
	memset(rs, 0, sizeof(*rs));
	if (!paths) {
		diag_print(stderr, d.msg);
		return d.status;
	}
	if (output_clash(out_path, (const char *const *)paths, n, "diff", &d) < 0) {
		diag_print(stderr, d.msg);
		paths_free(paths);
		return d.status;
	}
	struct kp_load_opts lo = { .strict = strict };
	int rc = ranks_load(rs, paths, n, 0, &lo, &d);
	paths_free(paths);
	if (rc < 0) {
		diag_print(stderr, d.msg);
		return d.status;
	}
	return 0;
}

/* kprof diff BASE_DIR NEW_DIR: two sets of ranks (rankdiff.c). */
static int diff_ranks(char **argv, const struct limits *l, int strict, int warn_mode, int format,
		      const char *out_path)
{
	struct kp_rankdiff_gate g = { .limit_pct = -1 };
	if (l->n > 1 || (l->n == 1 && opts_parse_double(l->v[0], 0, 1e9, &g.limit_pct))) {
		diag_fprintf(stderr,
			"kprof: error: with two sets of ranks, --fail-above takes one PCT >= 0 (the merged step-time mean)\n");
		return KP_USAGE;
	}
	struct kp_ranks rs[2];
	int status = load_side(argv[1], strict, out_path, &rs[0]);
	if (!status)
		status = load_side(argv[2], strict, out_path, &rs[1]);
	if (!status) {
		struct kp_doc doc;
		rankdiff_doc(&rs[0], &rs[1], &g, &doc);
		struct kp_diag od = { 0 };
		struct kp_output oo;
		FILE *out = output_open(&oo, out_path, &od);
		if (out) {
			table_render(&doc, format, 0, out);
			output_close(&oo, &od);
		}
		doc_free(&doc);
		if (od.status) {
			diag_print(stderr, od.msg);
			status = od.status;
		} else if (g.unknown) {
			diag_fprintf(stderr,
				"kprof: error: --fail-above: a side has no complete ProfilerStep to compare\n");
			status = KP_BADINPUT;
		} else if (g.tripped) {
			diag_fprintf(stderr,
				"kprof: regression: merged step mean %+.2f%% > %g%% (ranks above it: %s)\n",
				g.change_pct, g.limit_pct,
				g.ranks_above[0] ? g.ranks_above : "none");
			status = KP_REGRESSION;
		}
	}
	for (int s = 0; s < 2; s++) {
		for (size_t i = 0; i < rs[s].n; i++)
			diag_warn_print(&rs[s].r[i].warn, warn_mode, NULL, stderr);
		ranks_free(&rs[s]);
	}
	return status;
}

/* kprof diff's options as given; diff_defaults before parsing. */
struct diff_args {
	int key, format, color, name_mode, strict, per_step;
	long top, depth;
	double min_pct, sm_clock, threshold, noise_k, fail_above_mem;
	int64_t min_delta;
	int quiet, warn_mode, ranks, memory;
	struct limits limits;
	const char *sort, *device, *db_path, *steps, *out_path, *chart;
};

static const struct diff_args diff_defaults = {
	.key = 0, /* kernel */
	.format = FMT_TABLE,
	.color = COLOR_AUTO,
	.per_step = -1,
	.top = -1,
	.threshold = 2,
	.noise_k = KP_NOISE_K,
	.min_delta = KP_MIN_DELTA_NS,
	.warn_mode = WARN_SUMMARY,
	.fail_above_mem = -1,
};

/* The options into @a, the two traces to argv[1], argv[2]; -1 to go on, else the status. */
static int parse_options(struct diff_args *a, int argc, char **argv)
{
	/* clang-format off */
	const struct kp_opt opts[] = {
		{ "key", 'k', OPT_CHOICE, "KEY", "pair rows by", &a->key, key_names, NULL },
		{ "depth", 0, OPT_INT, "N", "--key module: fold module paths deeper than N into their ancestor at depth N",
		  &a->depth, NULL, NULL },
		{ "sort", 's', OPT_STR, "KEY[:asc|:desc],...",
		  "sort keys: delta-abs (default) delta ratio share base new base-calls new-calls name",
		  &a->sort, NULL, NULL },
		{ "top", 'n', OPT_INT, "N", "show N rows, fold the rest into (others); 0 = all (default 20 for table/markdown)",
		  &a->top, NULL, NULL },
		{ "min-pct", 0, OPT_PCT, "PCT",
		  "fold rows under PCT % of GPU time on both sides; the gate skips rows under PCT % of base time",
		  &a->min_pct, NULL, NULL },
		{ "threshold", 0, OPT_DOUBLE, "PCT", "noise floor: smaller changes count as unchanged (default 2)",
		  &a->threshold, NULL, NULL },
		{ "fail-above", 0, OPT_CALLBACK, "LIMIT",
		  "exit 1 when the total or a row grew by more than LIMIT: PCT, PATTERN=PCT or @FILE (repeatable)",
		  &a->limits, NULL, add_limit },
		{ "memory", 0, OPT_FLAG, NULL,
		  "compare each GPU's peak allocated and reserved memory and the ops live at the peaks ([memory] events)",
		  &a->memory, NULL, NULL },
		{ "fail-above-mem", 0, OPT_DOUBLE, "PCT",
		  "exit 1 when a GPU's peak allocated memory grew by more than PCT % (implies --memory)",
		  &a->fail_above_mem, NULL, NULL },
		{ "min-delta", 0, OPT_CALLBACK, "TIME", "the gate ignores changes of TIME or less, per step (default 5us)",
		  &a->min_delta, NULL, parse_min_delta },
		{ "noise-k", 0, OPT_DOUBLE, "K", "the gate ignores changes under K x the per-step noise (default 3)",
		  &a->noise_k, NULL, NULL },
		{ "per-step", 0, OPT_FLAG, NULL,
		  "divide times and calls by each trace's ProfilerStep count (default: when both have steps)",
		  &a->per_step, NULL, NULL },
		{ "steps", 0, OPT_STR, "B,N", "per step, with B steps in base and N in new", &a->steps, NULL, NULL },
		{ "format", 'f', OPT_CHOICE, "FMT", "output format", &a->format, format_names, NULL },
		{ "output", 'o', OPT_STR, "FILE", "write the report to FILE instead of standard output", &a->out_path, NULL, NULL },
		{ "chart", 0, OPT_STR, "NAME", "svg: the chart to draw (waterfall, dumbbell); html: only that chart; json: add its data",
		  &a->chart, NULL, NULL },
		{ "color", 0, OPT_CHOICE, "WHEN",
		  "colour tables: auto = on a terminal when NO_COLOR is unset", &a->color,
		  color_names, NULL },
		{ "name", 0, OPT_CHOICE, "MODE", "kernel names: short = normalized for pairing, full = as recorded",
		  &a->name_mode, name_modes, NULL },
		{ "device", 0, OPT_STR, "NAME[,NAME]", "device name(s) to look up instead of the traces' (base,new)",
		  &a->device, NULL, NULL },
		{ "device-db", 0, OPT_STR, "FILE", "device table replacing the built-in one (also $KPROF_DEVICE_DB)",
		  &a->db_path, NULL, NULL },
		{ "sm-clock", 0, OPT_CALLBACK, "MHZ", "SM clock the GPUs ran at, when a trace has none", &a->sm_clock, NULL, opts_cb_clock_mhz },
		{ "ranks", 0, OPT_FLAG, NULL, "compare two sets of rank traces (implied when both are directories)",
		  &a->ranks, NULL, NULL },
		{ "strict", 0, OPT_FLAG, NULL, "treat truncation and data anomalies as errors (exit 3)", &a->strict, NULL, NULL },
		{ "quiet", 'q', OPT_FLAG, NULL, "print no warnings, only errors and the gate's crossings", &a->quiet, NULL, NULL },
		{ "warnings", 0, OPT_CHOICE, "WHICH", "one line per kind of warning with its count, or every one",
		  &a->warn_mode, warn_names, NULL },
		{ NULL, 0, 0, NULL, NULL, NULL, NULL, NULL },
	};
	/* clang-format on */
	int nargs, rc = opts_parse("diff", synopsis, opts, argc, argv, &nargs);
	if (rc)
		return rc > 0 ? KP_OK : KP_USAGE;
	if (a->depth < 0 || (a->depth && key_groups[a->key] != GROUP_MODULE)) {
		diag_fprintf(stderr, a->depth < 0 ? "kprof: error: --depth must be positive\n"
						  : "kprof: error: --depth applies to --key module\n");
		return KP_USAGE;
	}
	if (nargs == 2)
		return -1;
	diag_fprintf(stderr, "kprof: error: %s\n",
		nargs < 2 ? "diff takes two traces: <base> <new>"
			  : "diff takes two traces, not more");
	opts_usage(stderr, "diff", synopsis, opts);
	return KP_USAGE;
}

/* --ranks, or two directories: two sets of rank traces. */
static int is_ranks(const struct diff_args *a, char **argv)
{
	struct stat st0, st1;
	return a->ranks == 1 || (stat(argv[1], &st0) == 0 && S_ISDIR(st0.st_mode) &&
				 stat(argv[2], &st1) == 0 && S_ISDIR(st1.st_mode));
}

/* diff_run()'s options from @a for the traces @base and @nw. */
static struct kp_diff_run_opts run_opts(const struct diff_args *a, const char *base, const char *nw)
{
	return (struct kp_diff_run_opts){
		.path = { base, nw },
		.device = a->device,
		.load = { .strict = a->strict, .jobs = cpu_count() },
		.analyze = { .group = key_groups[a->key],
			     .depth = (int)a->depth,
			     .sm_clock_mhz = a->sm_clock,
			     .full_names = a->name_mode == 1 },
		.diff = { .key = key_groups[a->key],
			  .depth = (int)a->depth,
			  .full_names = a->name_mode == 1,
			  .threshold_pct = a->threshold,
			  .base_div = 1,
			  .new_div = 1,
			  .noise_k = a->noise_k > 0 ? a->noise_k : -1 },
		.per_step = a->per_step,
		.steps_given = a->steps != NULL,
		.top = a->top < 0 ? table_default_top(a->format) : a->top,
		.min_pct = a->min_pct,
		.gate = { .fail_above_pct = -1,
			  .min_pct = a->min_pct,
			  .min_delta_ns = a->min_delta },
		.warn_mode = a->quiet ? WARN_QUIET : a->warn_mode,
		.memory = a->memory || a->fail_above_mem >= 0,
		.fail_above_mem_pct = a->fail_above_mem,
	};
}

/* -o FILE is neither trace, nor the device table, nor a --fail-above @FILE; -1 to go on. */
static int check_output(const struct diff_args *a, char **argv)
{
	struct kp_diag d = { 0 };
	const char *in[3] = { argv[1], argv[2],
			      a->db_path ? a->db_path : getenv("KPROF_DEVICE_DB") };
	int rc = output_clash(a->out_path, in, 3, "diff", &d);
	for (int i = 0; !rc && i < a->limits.n; i++) {
		const char *v = a->limits.v[i] + 1;
		if (a->limits.v[i][0] == '@')
			rc = output_clash(a->out_path, &v, 1, "diff", &d);
	}
	if (rc < 0) {
		diag_print(stderr, d.msg);
		return d.status;
	}
	return -1;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_args a = diff_defaults;
	int rc = parse_options(&a, argc, argv);
	if (rc < 0)
		rc = check_output(&a, argv);
	if (rc >= 0)
		return rc;
	if (is_ranks(&a, argv) && (a.memory || a.fail_above_mem >= 0)) {
		diag_fprintf(stderr,
			"kprof: error: --memory and --fail-above-mem compare two traces, not two sets of ranks\n");
		return KP_USAGE;
	}
	if (is_ranks(&a, argv))
		return diff_ranks(argv, &a.limits, a.strict, a.quiet ? WARN_QUIET : a.warn_mode,
				  a.format, a.out_path);
	unsigned charts = chart_bits(a.chart, a.format);
	if (!charts)
		return KP_USAGE;
	struct kp_diff_run_opts ro = run_opts(&a, argv[1], argv[2]);
	if (finish_opts(&ro, a.steps, a.sort) < 0)
		return KP_USAGE;
	struct output o = { a.format, a.color, a.chart, charts, a.out_path };
	return diff_two(&ro, &a.limits, a.db_path, &o);
}
