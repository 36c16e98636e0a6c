/*
 * cmd-devices.c — kprof devices: options -> devdb_load_default -> devdb_match_sms -> document -> render.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/cmd.h"
#include "kprof/devdb.h"
#include "kprof/devices-doc.h"
#include "kprof/diag.h"
#include "kprof/opts.h"
#include "kprof/table.h"

static const char *const format_names[] = { "table", "csv", "json", "markdown", NULL };
static const char synopsis[] = "[<options>] [<name>]";

int cmd_devices(int argc, char **argv)
{
	int format = FMT_TABLE;
	long sms = 0;
	const char *db_path = NULL;
	/* clang-format off */
	const struct kp_opt opts[] = {
		{ "format", 'f', OPT_CHOICE, "FMT", "output format", &format, format_names, NULL },
		{ "device-db", 0, OPT_STR, "FILE",
		  "device table replacing the built-in one (also $KPROF_DEVICE_DB)", &db_path, NULL,
		  NULL },
		{ "sms", 0, OPT_INT, "N", "SM/CU count the device reports, for names shared by parts",
		  &sms, NULL, NULL },
		{ NULL, 0, 0, NULL, NULL, NULL, NULL, NULL },
	};
	/* clang-format on */
	int nargs;
	int rc = opts_parse("devices", synopsis, opts, argc, argv, &nargs);
	if (rc)
		return rc > 0 ? KP_OK : KP_USAGE;
	if (nargs > 1) {
		diag_fprintf(stderr, "kprof: error: devices takes at most one device name\n");
		opts_usage(stderr, "devices", synopsis, opts);
		return KP_USAGE;
	}
	if (sms < 0 || sms > 1000000) {
		diag_fprintf(stderr, "kprof: error: --sms out of range\n");
		return KP_USAGE;
	}

	struct kp_diag d = { 0 };
	struct kp_devdb db;
	if (devdb_load_default(&db, db_path, &d) < 0) {
		diag_print(stderr, d.msg);
		return d.status;
	}
	struct kp_doc doc;
	if (nargs == 1) {
		const char *how;
		const struct kp_device *dv = devdb_match_sms(&db, argv[1], (int)sms, &how);
		if (!dv) {
			diag_error(&d, KP_BADINPUT, "error: no device entry matches '%s'", argv[1]);
			diag_print(stderr, d.msg);
			devdb_free(&db);
			return KP_BADINPUT;
		}
		char note[1024];
		if (devdb_pick_note(&db, argv[1], (int)sms, note, sizeof(note)))
			diag_note_print(stderr, note);
		devices_doc(&db, &dv, 1, argv[1], how, &doc);
	} else {
		const struct kp_device **all = xmalloc(sizeof(*all) * db.ndev);
		for (int i = 0; i < db.ndev; i++)
			all[i] = &db.dev[i];
		devices_doc(&db, all, db.ndev, NULL, NULL, &doc);
		free(all);
	}
	table_render(&doc, format, 0, stdout);
	doc_free(&doc);
	devdb_free(&db);
	return KP_OK;
}
