/*
 * cmd-augment.c — kprof augment: trace_load -> link -> analyze_run (per event) -> augment_write.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kprof/analyze.h"
#include "kprof/augment.h"
#include "kprof/cmd.h"
#include "kprof/devdb.h"
#include "kprof/link.h"
#include "kprof/opts.h"
#include "kprof/trace.h"

static const char synopsis[] = "[<options>] <trace.json[.gz]> -o <out.json[.gz]>";

int cmd_augment(int argc, char **argv)
{
	int strict = 0;
	double sm_clock = 0;
	const char *device = NULL, *db_path = NULL, *out_path = NULL;
	/* clang-format off */
	const struct kp_opt opts[] = {
		{ "output", 'o', OPT_STR, "FILE", "the augmented trace (gzip when FILE ends in .gz)", &out_path, NULL, NULL },
		{ "device", 0, OPT_STR, "NAME", "device name to look up instead of the trace's", &device, NULL, NULL },
		{ "device-db", 0, OPT_STR, "FILE", "device table replacing the built-in one (also $KPROF_DEVICE_DB)",
		  &db_path, NULL, NULL },
		{ "sm-clock", 0, OPT_CALLBACK, "MHZ", "SM clock the GPU ran at, when the trace has none", &sm_clock, NULL, opts_cb_clock_mhz },
		{ "strict", 0, OPT_FLAG, NULL, "treat truncation and data anomalies as errors (exit 3)", &strict, NULL, NULL },
		{ NULL, 0, 0, NULL, NULL, NULL, NULL, NULL },
	};
	/* clang-format on */
	int nargs;
	int rc = opts_parse("augment", synopsis, opts, argc, argv, &nargs);
	if (rc)
		return rc > 0 ? KP_OK : KP_USAGE;
	if (nargs != 1 || !out_path) {
		fprintf(stderr, "kprof: error: %s\n",
			nargs != 1 ? "augment takes one trace" : "no output file (-o FILE)");
		opts_usage(stderr, "augment", synopsis, opts);
		return KP_USAGE;
	}
	if (!strcmp(argv[1], "-") || !strcmp(out_path, "-")) {
		fprintf(stderr,
			"kprof: error: augment reads the trace twice and writes a file: '-' is not allowed\n");
		return KP_USAGE;
	}
	struct stat si, so;
	if (stat(argv[1], &si) == 0 && stat(out_path, &so) == 0 && si.st_dev == so.st_dev &&
	    si.st_ino == so.st_ino) {
		fprintf(stderr,
			"kprof: error: '%s' is the input: augment would overwrite the trace it reads\n",
			out_path);
		return KP_USAGE;
	}
	struct kp_diag d = { 0 };
	struct kp_devdb db;
	if (devdb_load_default(&db, db_path, &d) < 0) {
		fprintf(stderr, "kprof: %s\n", d.msg);
		return d.status;
	}
	struct kp_trace t;
	struct kp_load_opts lo = { .strict = strict };
	if (trace_load(&t, argv[1], &lo, &d) < 0) {
		diag_warn_print(&t.warn, WARN_SUMMARY, NULL, stderr);
		fprintf(stderr, "kprof: %s\n", d.msg);
		trace_free(&t);
		devdb_free(&db);
		return d.status;
	}
	link_trace(&t);
	struct kp_event_cost *ev = xcalloc(t.ngpu + 1, sizeof(*ev));
	struct kp_analyze_opts ao = { .group = GROUP_KERNEL,
				      .device = device,
				      .sm_clock_mhz = sm_clock,
				      .db = &db,
				      .events = ev };
	struct kp_report r;
	analyze_run(&t, &ao, &r);
	int status = KP_OK;
	if (augment_write(&t, ev, argv[1], out_path, &d) < 0) {
		fprintf(stderr, "kprof: %s\n", d.msg);
		status = d.status;
	}
	diag_warn_print(&t.warn, WARN_SUMMARY, NULL, stderr);
	diag_warn_print(&r.warn, WARN_SUMMARY, NULL, stderr);
	free(ev);
	analyze_free(&r);
	trace_free(&t);
	devdb_free(&db);
	return status;
}
