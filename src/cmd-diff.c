/*
 * cmd-diff.c — kprof diff: options -> two analyses (in parallel) -> diff_join -> gate -> render.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/analyze.h"
#include "kprof/cmd.h"
#include "kprof/devdb.h"
#include "kprof/diff.h"
#include "kprof/diff-render.h"
#include "kprof/opts.h"
#include "kprof/table.h"
#include "kprof/trace.h"

static const char *const key_names[] = { "kernel", "op", "op-shape", NULL };
static const char *const format_names[] = { "table", "csv", "json", "markdown", NULL };
static const char *const name_modes[] = { "short", "full", NULL };

static const char synopsis[] = "[<options>] <base.json[.gz]> <new.json[.gz]>";

#define GATE_SHOW 5

/* One input: load, link and analyze it the way kprof analyze does. */
struct side {
	const char *path;
	const struct kp_load_opts *lo;
	struct kp_analyze_opts ao;
	struct kp_trace t;
	struct kp_report r;
	struct kp_diag d;
	int rc;
};

static void *run_side(void *arg)
{
	struct side *s = arg;
	s->rc = trace_load(&s->t, s->path, s->lo, &s->d);
	if (s->rc == 0) {
		trace_link(&s->t);
		analyze_run(&s->t, &s->ao, &s->r);
	}
	return NULL;
}

/* "3,4" -> 3 and 4; NULL or the reason */
static const char *parse_steps(const char *s, double *b, double *n)
{
	char *end;
	long x = strtol(s, &end, 10);
	if (end == s || *end != ',' || x < 1)
		return "expected two step counts >= 1, as B,N";
	const char *p = end + 1;
	long y = strtol(p, &end, 10);
	if (end == p || *end || y < 1)
		return "expected two step counts >= 1, as B,N";
	*b = (double)x;
	*n = (double)y;
	return NULL;
}

int cmd_diff(int argc, char **argv)
{
	int key = GROUP_KERNEL, format = FMT_TABLE, name_mode = 0, strict = 0, per_step = -1;
	long top = -1;
	double min_pct = 0, sm_clock = 0, threshold = 2, fail_above = NAN;
	const char *sort = NULL, *device = NULL, *db_path = NULL, *steps = NULL;
	const struct kp_opt opts[] = {
		{ "key", 'k', OPT_CHOICE, "KEY", "pair rows by", &key, key_names, NULL },
		{ "sort", 's', OPT_STR, "KEY[:asc|:desc],...",
		  "sort keys: delta-abs (default) delta ratio share base new base-calls new-calls name",
		  &sort, NULL, NULL },
		{ "top", 'n', OPT_INT, "N", "show N rows, fold the rest into (others); 0 = all (default 20 for table/markdown)",
		  &top, NULL, NULL },
		{ "min-pct", 0, OPT_DOUBLE, "PCT",
		  "fold rows under PCT % of GPU time on both sides; the gate skips rows under PCT % of base time",
		  &min_pct, NULL, NULL },
		{ "threshold", 0, OPT_DOUBLE, "PCT", "noise floor: smaller changes count as unchanged (default 2)",
		  &threshold, NULL, NULL },
		{ "fail-above", 0, OPT_DOUBLE, "PCT",
		  "exit 1 when the total or a matched row regresses by more than PCT %", &fail_above, NULL, NULL },
		{ "per-step", 0, OPT_FLAG, NULL,
		  "divide times and calls by each trace's ProfilerStep count (default: when both have steps)",
		  &per_step, NULL, NULL },
		{ "steps", 0, OPT_STR, "B,N", "per step, with B steps in base and N in new", &steps, NULL, NULL },
		{ "format", 'f', OPT_CHOICE, "FMT", "output format", &format, format_names, NULL },
		{ "name", 0, OPT_CHOICE, "MODE", "kernel names: short = normalized for pairing, full = as recorded",
		  &name_mode, name_modes, NULL },
		{ "device", 0, OPT_STR, "NAME[,NAME]", "device name(s) to look up instead of the traces' (base,new)",
		  &device, NULL, NULL },
		{ "device-db", 0, OPT_STR, "FILE", "device table replacing the built-in one (also $KPROF_DEVICE_DB)",
		  &db_path, NULL, NULL },
		{ "sm-clock", 0, OPT_DOUBLE, "MHZ", "SM clock the GPUs ran at, when a trace has none", &sm_clock, NULL, NULL },
		{ "strict", 0, OPT_FLAG, NULL, "treat truncation and data anomalies as errors (exit 3)", &strict, NULL, NULL },
		{ NULL, 0, 0, NULL, NULL, NULL, NULL, NULL },
	};
	int nargs;
	int rc = opts_parse("diff", synopsis, opts, argc, argv, &nargs);
	if (rc)
		return rc > 0 ? KP_OK : KP_USAGE;
	if (nargs != 2) {
		fprintf(stderr, "kprof: error: %s\n", nargs < 2 ? "diff takes two traces: <base> <new>" : "diff takes two traces, not more");
		opts_usage(stderr, "diff", synopsis, opts);
		return KP_USAGE;
	}
	if (sm_clock < 0 || min_pct < 0 || min_pct > 100 || threshold < 0 || fail_above < 0) {
		fprintf(stderr, "kprof: error: %s out of range\n",
			sm_clock < 0 ? "--sm-clock" : threshold < 0 ? "--threshold"
			: fail_above < 0 ? "--fail-above" : "--min-pct");
		return KP_USAGE;
	}
	struct kp_diff_opts dopts = { .key = key, .full_names = name_mode == 1, .threshold_pct = threshold,
				      .base_div = 1, .new_div = 1 };
	if (steps) {
		const char *why = parse_steps(steps, &dopts.base_div, &dopts.new_div);
		if (why || per_step == 0) {
			fprintf(stderr, "kprof: error: %s\n", why ? why : "--steps and --no-per-step exclude each other");
			if (why)
				fprintf(stderr, "kprof: see 'kprof diff -h'\n");
			return KP_USAGE;
		}
	}
	if (!strcmp(argv[1], "-") && !strcmp(argv[2], "-")) {
		fprintf(stderr, "kprof: error: only one of the traces can be read from standard input\n");
		return KP_USAGE;
	}
	if (top < 0)
		top = table_default_top(format);

	struct kp_diag dd = { 0 };
	struct kp_devdb db;
	if (devdb_load_default(&db, db_path, &dd) < 0) {
		fprintf(stderr, "kprof: %s\n", dd.msg);
		return dd.status;
	}
	/* --device A,B names each side; --device A names both */
	char devbuf[512];
	const char *dev_b = device, *dev_n = device;
	const char *comma = device ? strchr(device, ',') : NULL;
	if (comma) {
		snprintf(devbuf, sizeof(devbuf), "%.*s", (int)(comma - device), device);
		dev_b = devbuf;
		dev_n = comma + 1;
	}
	struct kp_load_opts lo = { .strict = strict };
	struct kp_analyze_opts ao = {
		.group = key, .sm_clock_mhz = sm_clock, .db = &db, .full_names = name_mode == 1,
		.step_lo = -1, .step_hi = -1,
	};
	struct side sd[2];
	memset(sd, 0, sizeof(sd));
	for (int i = 0; i < 2; i++) {
		sd[i].path = argv[1 + i];
		sd[i].lo = &lo;
		sd[i].ao = ao;
		sd[i].ao.device = i ? dev_n : dev_b;
	}
	/* the two inputs share nothing: parse them at once, like analyzing both side by side */
	pthread_t th;
	int threaded = pthread_create(&th, NULL, run_side, &sd[0]) == 0;
	if (!threaded)
		run_side(&sd[0]);
	run_side(&sd[1]);
	if (threaded)
		pthread_join(th, NULL);

	int status = KP_OK;
	for (int i = 0; i < 2; i++)
		if (sd[i].rc < 0) {
			warn_print(&sd[i].t.warn, stderr);
			fprintf(stderr, "kprof: %s\n", sd[i].d.msg);
			if (status == KP_OK)
				status = sd[i].d.status;
		}
	if (status != KP_OK)
		goto out;

	if (steps) {
		dopts.per_step = 1;
		dopts.how = NORM_STEPS;
	} else if (per_step == 1) {
		for (int i = 0; i < 2; i++)
			if (!sd[i].r.tot.steps) {
				fprintf(stderr, "kprof: error: --per-step: no ProfilerStep spans in '%s' (give the step counts with --steps B,N)\n",
					sd[i].t.display);
				status = KP_USAGE;
				goto out;
			}
		dopts.per_step = 1;
		dopts.how = NORM_PER_STEP;
	} else if (per_step == 0) {
		dopts.how = NORM_TOTAL;
	} else {
		dopts.per_step = sd[0].r.tot.steps > 0 && sd[1].r.tot.steps > 0;
	}
	if (dopts.per_step && dopts.how != NORM_STEPS) {
		dopts.base_div = (double)sd[0].r.tot.steps;
		dopts.new_div = (double)sd[1].r.tot.steps;
	}

	struct kp_diff df;
	diff_join(&df, sd[0].r.rows, sd[0].r.nrows, sd[1].r.rows, sd[1].r.nrows, &dopts, &sd[0].r, &sd[1].r);
	const char *bad;
	if (diff_sort(&df, sort, &bad) < 0) {
		fprintf(stderr, "kprof: error: unknown sort key '%s' (valid: delta-abs, delta, ratio, share, base, new, base-calls, new-calls, name; suffix :asc or :desc)\n", bad);
		diff_free(&df);
		status = KP_USAGE;
		goto out;
	}
	double gate = isnan(fail_above) ? -1 : fail_above;
	size_t nhits = diff_gate(&df, gate, min_pct, NULL, 0);
	struct kp_gate_hit *hits = xcalloc(nhits + 1, sizeof(*hits));
	diff_gate(&df, gate, min_pct, hits, nhits);
	diff_select(&df, top, min_pct);
	struct kp_diff_render_opts ro = { .fail_above_pct = gate, .min_pct = min_pct, .hits = hits,
					  .nhits = nhits };
	struct kp_doc doc;
	diff_render_doc(&df, &ro, &doc);
	table_render(&doc, format, 0, stdout);
	report_free(&doc);
	for (int i = 0; i < 2; i++) {
		warn_print(&sd[i].t.warn, stderr);
		warn_print(&sd[i].r.warn, stderr);
	}
	for (size_t i = 0; i < nhits && i < GATE_SHOW; i++) {
		char msg[1024];
		diff_gate_message(&hits[i], gate, msg, sizeof(msg));
		fprintf(stderr, "kprof: regression: %s\n", msg);
	}
	if (nhits > GATE_SHOW)
		fprintf(stderr, "kprof: regression: and %zu more above --fail-above %g%%\n", nhits - GATE_SHOW, gate);
	if (nhits)
		status = KP_REGRESSION;
	free(hits);
	diff_free(&df);
out:
	for (int i = 0; i < 2; i++) {
		if (sd[i].rc == 0)
			analyze_free(&sd[i].r);
		trace_free(&sd[i].t);
	}
	devdb_free(&db);
	return status;
}
