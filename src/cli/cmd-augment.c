/*
 * cmd-augment.c — kprof augment: pipeline_run (load, link, each event's cost) -> augment_write.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/analyze.h"
#include "kprof/augment.h"
#include "kprof/cmd.h"
#include "kprof/devdb.h"
#include "kprof/diag.h"
#include "kprof/opts.h"
#include "kprof/output.h"
#include "kprof/pipeline.h"
#include "kprof/trace.h"

static const char synopsis[] = "[<options>] <trace.json[.gz]> -o <out.json[.gz]>";

/* kprof augment's options as given, and its one trace */
struct augment_args {
	int strict;
	double sm_clock;
	const char *device, *db_path, *out_path, *in_path;
};

/* The options and the trace into @a; -1 to go on, else the status. */
static int parse_options(struct augment_args *a, int argc, char **argv)
{
	/* clang-format off */
	const struct kp_opt opts[] = {
		{ "output", 'o', OPT_STR, "FILE", "the augmented trace (gzip when FILE ends in .gz)", &a->out_path, NULL, NULL },
		{ "device", 0, OPT_STR, "NAME", "device name to look up instead of the trace's", &a->device, NULL, NULL },
		{ "device-db", 0, OPT_STR, "FILE", "device table replacing the built-in one (also $KPROF_DEVICE_DB)",
		  &a->db_path, NULL, NULL },
		{ "sm-clock", 0, OPT_CALLBACK, "MHZ", "SM clock the GPU ran at, when the trace has none", &a->sm_clock, NULL, opts_cb_clock_mhz },
		{ "strict", 0, OPT_FLAG, NULL, "treat truncation and data anomalies as errors (exit 3)", &a->strict, NULL, NULL },
		{ NULL, 0, 0, NULL, NULL, NULL, NULL, NULL },
	};
	/* clang-format on */
	int nargs;
	int rc = opts_parse("augment", synopsis, opts, argc, argv, &nargs);
	if (rc)
		return rc > 0 ? KP_OK : KP_USAGE;
	if (nargs != 1 || !a->out_path) {
		diag_fprintf(stderr, "kprof: error: %s\n",
			nargs != 1 ? "augment takes one trace" : "no output file (-o FILE)");
		opts_usage(stderr, "augment", synopsis, opts);
		return KP_USAGE;
	}
	a->in_path = argv[1];
	return -1;
}

/* '-' on either side, or the input as the output: refused; -1 to go on, else the status. */
static int check_paths(const struct augment_args *a)
{
	if (!strcmp(a->in_path, "-") || !strcmp(a->out_path, "-")) {
		diag_fprintf(stderr,
			"kprof: error: augment reads the trace twice and writes a file: '-' is not allowed\n");
		return KP_USAGE;
	}
	struct kp_diag d = { 0 };
	const char *in[2] = { a->in_path, a->db_path ? a->db_path : getenv("KPROF_DEVICE_DB") };
	if (output_clash(a->out_path, in, 2, "augment", &d) < 0) {
		diag_print(stderr, d.msg);
		return d.status;
	}
	return -1;
}

/* The trace loaded, linked and each GPU event's cost found (pipeline_run), then the trace with
   them into the output; the status. */
static int write_costs(const struct augment_args *a, const struct kp_devdb *db)
{
	struct kp_pipeline_in in = { .path = a->in_path,
				     .load = { .strict = a->strict },
				     .db = db,
				     .device = a->device,
				     .sm_clock_mhz = a->sm_clock,
				     .analyze = { .group = GROUP_KERNEL },
				     .events = 1 };
	struct kp_pipeline_out p;
	int status = KP_OK;
	if (pipeline_run(&in, &p) < 0) {
		diag_warn_print(&p.trace.warn, WARN_SUMMARY, NULL, stderr);
		diag_print(stderr, p.diag.msg);
		status = p.diag.status;
		pipeline_free(&p);
		return status;
	}
	struct kp_diag d = { 0 };
	int64_t cut = -1;
	if (augment_write(&p.trace, p.events, a->in_path, a->out_path, &cut, &d) < 0) {
		diag_print(stderr, d.msg);
		status = d.status;
	} else if (cut >= 0) {
		diag_warn_add(&p.report.warn, "truncated outputs", a->out_path,
			      "the trace is truncated: the output holds the input up to byte %lld "
			      "(its last complete event or member) and closes the arrays and objects "
			      "open there",
			      (long long)cut);
	}
	diag_warn_print(&p.trace.warn, WARN_SUMMARY, NULL, stderr);
	diag_warn_print(&p.report.warn, WARN_SUMMARY, NULL, stderr);
	pipeline_free(&p);
	return status;
}

int cmd_augment(int argc, char **argv)
{
	struct augment_args a = { 0 };
	int rc = parse_options(&a, argc, argv);
	if (rc < 0)
		rc = check_paths(&a);
	if (rc >= 0)
		return rc;
	struct kp_diag d = { 0 };
	struct kp_devdb db;
	if (devdb_load_default(&db, a.db_path, &d) < 0) {
		diag_print(stderr, d.msg);
		return d.status;
	}
	rc = write_costs(&a, &db);
	devdb_free(&db);
	return rc;
}
