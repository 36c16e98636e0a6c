/*
 * fuzz-devdb.c — libFuzzer harness for src/model/devdb.c: the input bytes are a device table
 * (`--device-db FILE`, $KPROF_DEVICE_DB: a user's file, in device_db/devices.txt's format),
 * parsed by devdb_parse(); when it parses, every entry is looked up by its names, its peaks
 * read at a few clocks, and the table's document built and rendered as `kprof devices` does.
 *
 * Checked beyond the sanitizers: 0, or -1 with status 3 and a message naming the file; each
 * entry named, its numbers finite and >= 0, its exact names finding an entry; peaks at any
 * clock finite and >= 0.
 * Build and run: tests/fuzz/run.sh devdb.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/devdb.h"
#include "kprof/devices-doc.h"
#include "kprof/diag.h"
#include "kprof/doc.h"
#include "kprof/dtype.h"
#include "kprof/table.h"

#define FUZZ_NAME "fuzz-devdb"
#include "fuzz.h"

static void check_entry(const struct kp_devdb *db, const struct kp_device *dev)
{
	CHECK(dev->name && dev->name[0]);
	CHECK(dev->sms >= 0 && dev->clk_max_mhz >= 0 && dev->mem_clk_mhz >= 0 && dev->bus_bits >= 0);
	CHECK(isfinite(dev->mem_gb) && dev->mem_gb >= 0);
	CHECK(isfinite(dev->mem_bw_byte_per_s) && dev->mem_bw_byte_per_s >= 0);
	for (int p = 0; p < PREC_N; p++)
		CHECK(isfinite(dev->peak[p].flop_per_s) && dev->peak[p].flop_per_s >= 0);
	for (int i = 0; i < dev->nexact; i++)
		CHECK(devdb_match(db, dev->exact[i], NULL) != NULL);
	static const double clocks[] = { 0, 1, 345, 1980, 1e9 };
	for (size_t c = 0; c < sizeof(clocks) / sizeof(clocks[0]); c++) {
		for (int p = 0; p < PREC_N; p++) {
			double f = devdb_peak_flops(dev, (enum kp_prec)p, clocks[c]);
			CHECK(isfinite(f) && f >= 0);
		}
		double b = devdb_peak_bw(dev, clocks[c]);
		CHECK(isfinite(b) && b >= 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kp_devdb db;
	memset(&db, 0, sizeof(db));
	struct kp_diag d;
	memset(&d, 0, sizeof(d));
	int rc = devdb_parse(&db, (const char *)data, size, "fuzz.txt", &d);
	CHECK(rc == 0 || rc == -1);
	if (rc < 0) {
		CHECK(d.status == KP_BADINPUT && strstr(d.msg, "fuzz.txt"));
		devdb_free(&db);
		return 0;
	}
	const struct kp_device **all = malloc(((size_t)db.ndev + 1) * sizeof(*all));
	if (!all) {
		devdb_free(&db);
		return 0;
	}
	for (int i = 0; i < db.ndev; i++) {
		check_entry(&db, &db.dev[i]);
		all[i] = &db.dev[i];
	}
	static const char *const names[] = { "NVIDIA H100 80GB HBM3", "NVIDIA H200", "", "H20",
					      "AMD Instinct MI300X", "x" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *how = NULL;
		devdb_match_sms(&db, names[i], 132, &how);
	}
	static FILE *null;
	if (!null)
		null = fopen("/dev/null", "w");
	if (null) {
		struct kp_doc doc;
		doc_init(&doc, "devices", 10);
		devices_doc(&db, all, db.ndev, NULL, NULL, &doc);
		table_render(&doc, FMT_TABLE, 0, null);
		table_render(&doc, FMT_JSON, 0, null);
		doc_free(&doc);
	}
	free(all);
	devdb_free(&db);
	return 0;
}
