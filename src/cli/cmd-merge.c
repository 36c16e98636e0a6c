/*
 * cmd-merge.c — kprof merge: summaries (kprof analyze --ranks --format json) -> one cross-rank
 * view, itself a summary when written as json (so merges nest).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/cmd.h"
#include "kprof/devdb.h"
#include "kprof/diag.h"
#include "kprof/opts.h"
#include "kprof/ranks-doc.h"
#include "kprof/ranks.h"
#include "kprof/summary.h"
#include "kprof/table.h"

static const char *const format_names[] = { "table", "csv", "json", "markdown", NULL };
static const char synopsis[] = "[<options>] <summary.json[.gz]|->...";

int cmd_merge(int argc, char **argv)
{
	int format = FMT_TABLE;
	const char *device = NULL, *db_path = NULL;
	/* clang-format off */
	const struct kp_opt opts[] = {
		{ "format", 'f', OPT_CHOICE, "FMT", "output format (json: a summary again)", &format, format_names, NULL },
		{ "device", 0, OPT_STR, "NAME", "device whose peer link %Link compares with, instead of rank 0's",
		  &device, NULL, NULL },
		{ "device-db", 0, OPT_STR, "FILE", "device table replacing the built-in one (also $KPROF_DEVICE_DB)",
		  &db_path, NULL, NULL },
		{ NULL, 0, 0, NULL, NULL, NULL, NULL, NULL },
	};
	/* clang-format on */
	int nargs;
	int rc = opts_parse("merge", synopsis, opts, argc, argv, &nargs);
	if (rc)
		return rc > 0 ? KP_OK : KP_USAGE;
	if (nargs < 1) {
		diag_fprintf(stderr, "kprof: error: no summary given\n");
		opts_usage(stderr, "merge", synopsis, opts);
		return KP_USAGE;
	}
	struct kp_diag d = { 0 };
	struct kp_devdb db;
	if (devdb_load_default(&db, db_path, &d) < 0) {
		diag_print(stderr, d.msg);
		return d.status;
	}
	struct kp_ranks rs;
	memset(&rs, 0, sizeof(rs));
	for (int i = 1; i <= nargs; i++)
		if (summary_load(&rs, argv[i], &d) < 0) {
			diag_print(stderr, d.msg);
			ranks_free(&rs);
			devdb_free(&db);
			return d.status;
		}
	struct kp_devchoice dc;
	ranks_device(&rs, &db, device, &dc);
	const struct kp_device *dev = dc.dev;
	ranks_compare(&rs, dev && dev->peer_bw_byte_per_s > 0 ? dev->peer_bw_byte_per_s : -1);
	struct kp_doc doc;
	ranks_doc(&rs, dev ? dev->name : dc.name, &doc);
	table_render(&doc, format, 0, stdout);
	doc_free(&doc);
	/* the traces' own warnings (carried by the summaries), then the job's: as kprof analyze */
	for (size_t i = 0; i < rs.n; i++)
		diag_warn_print(&rs.r[i].warn, WARN_SUMMARY, NULL, stderr);
	diag_warn_print(&rs.warn, WARN_SUMMARY, NULL, stderr);
	ranks_free(&rs);
	devdb_free(&db);
	return KP_OK;
}
