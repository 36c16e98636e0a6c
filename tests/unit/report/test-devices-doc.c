/*
 * test-devices-doc.c — the devices document (devices-doc.c) of synthetic device entries: header
 * facts for a listing and for one lookup, and the table's cells (base units, nulls).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/devdb.h"
#include "kprof/devices-doc.h"
#include "kprof/dtype.h"

static struct kp_device gpu_a(void)
{
	struct kp_device dv = { .name = "Test GPU A",
				.sms = 132,
				.clk_max_mhz = 1980,
				.mem_gb = 80,
				.mem_bw_byte_per_s = 3.35e12,
				.mem_clk_mhz = 2619,
				.bus_bits = 5120,
				.source = "https://example.test/a",
				.confidence = "datasheet",
				.bw_flag = "datasheet",
				.host_link = "PCIe 5.0 x16",
				.host_bw_byte_per_s = 63e9,
				.host_flag = "derived",
				.peer_bw_byte_per_s = 450e9,
				.peer_flag = "secondary" };
	dv.peak[PREC_BF16] = (struct kp_peak){ 989.4e12, 1830, "datasheet" };
	dv.peak[PREC_FP32] = (struct kp_peak){ 6.69e12, 0, "derived" };
	dv.peak[PREC_INT8] = (struct kp_peak){ 1979e12, 1830, "datasheet" };
	return dv;
}

/* The column index of json key @key, -1 none. */
static int col(const struct kp_table *tb, const char *key)
{
	for (int i = 0; i < tb->ncols; i++)
		if (!strcmp(tb->cols[i].key, key))
			return i;
	return -1;
}

/* The table/markdown text of the top-level fact keyed @key, NULL none. */
static const char *fact(const struct kp_doc *doc, const char *key, char *buf, size_t cap)
{
	for (size_t i = 0; i < doc->nitems; i++)
		if (doc->items[i].type == ITEM_FACT && doc->items[i].key &&
		    !strcmp(doc->items[i].key, key))
			return doc_val_text(&doc->items[i].v, buf, cap);
	return NULL;
}

static const struct kp_table *first_table(const struct kp_doc *doc)
{
	for (size_t i = 0; i < doc->nitems; i++)
		if (doc->items[i].type == ITEM_TABLE)
			return doc->items[i].table;
	return NULL;
}

static void a_listing_counts_entries_and_explains_peaks(void **state)
{
	(void)state;
	struct kp_device a = gpu_a(), b = { .name = "Test GPU B", .confidence = "unverified" };
	const struct kp_device *devs[] = { &a, &b };
	struct kp_devdb db = { .ndev = 2, .origin = "my.yaml" };
	struct kp_doc doc;
	char buf[128];
	devices_doc(&db, devs, 2, NULL, NULL, &doc);
	assert_string_equal(doc.command, "devices");
	assert_string_equal(doc.summary, "2 entries in my.yaml");
	assert_string_equal(fact(&doc, "device_db", buf, sizeof(buf)), "my.yaml (2 entries)");
	assert_non_null(fact(&doc, "peaks", buf, sizeof(buf)));
	assert_null(fact(&doc, "query", buf, sizeof(buf)));
	const struct kp_table *tb = first_table(&doc);
	assert_non_null(tb);
	assert_int_equal(tb->nrows, 2);
	assert_int_equal(tb->cols[col(tb, "match")].where, 0); /* no lookup: no match column */
	assert_string_equal(tb->cols[tb->ncols - 1].key, "name");
	doc_free(&doc);
	db.ndev = 1;
	devices_doc(&db, devs, 1, NULL, NULL, &doc);
	assert_string_equal(doc.summary, "1 entry in my.yaml");
	doc_free(&doc);
}

static void a_lookup_lists_each_known_peak_with_its_clock(void **state)
{
	(void)state;
	struct kp_device a = gpu_a();
	const struct kp_device *devs[] = { &a };
	struct kp_devdb db = { .ndev = 5, .origin = "built-in" };
	struct kp_doc doc;
	char buf[128];
	devices_doc(&db, devs, 1, "gpu a", "substring", &doc);
	assert_string_equal(doc.summary, "'gpu a' is Test GPU A (substring)");
	assert_string_equal(fact(&doc, "query", buf, sizeof(buf)), "gpu a");
	assert_string_equal(fact(&doc, "match", buf, sizeof(buf)), "Test GPU A (substring)");
	assert_string_equal(fact(&doc, "bf16", buf, sizeof(buf)),
			    "989.4 TFLOP/s at 1830 MHz, datasheet");
	assert_string_equal(fact(&doc, "fp32", buf, sizeof(buf)),
			    "6.69 TFLOP/s (clock unknown, not scaled), derived");
	assert_string_equal(fact(&doc, "int8", buf, sizeof(buf)),
			    "1979.0 TOP/s at 1830 MHz, datasheet");
	assert_null(fact(&doc, "fp64", buf, sizeof(buf))); /* unknown peaks are left out */
	assert_string_equal(fact(&doc, "dram", buf, sizeof(buf)),
			    "3350 GB/s, datasheet (2619 MHz x 2 x 5120 bits / 8 = 3352 GB/s)");
	assert_string_equal(fact(&doc, "host link", buf, sizeof(buf)),
			    "PCIe 5.0 x16, 63.0 GB/s per direction, derived");
	assert_string_equal(fact(&doc, "peer link", buf, sizeof(buf)),
			    "450 GB/s per direction, secondary");
	assert_string_equal(fact(&doc, "source", buf, sizeof(buf)), "https://example.test/a");
	const struct kp_table *tb = first_table(&doc);
	assert_int_equal(tb->cols[col(tb, "match")].where, COL_MACHINE);
	assert_string_equal(tb->cells[col(tb, "match")].s, "substring");
	doc_free(&doc);

	a.no_clock_scaling = 1;
	a.host_link = NULL;
	a.peer_bw_byte_per_s = 0;
	a.mem_clk_mhz = 0;
	devices_doc(&db, devs, 1, "gpu a", "exact", &doc);
	assert_string_equal(fact(&doc, "bf16", buf, sizeof(buf)),
			    "989.4 TFLOP/s (not clock-scaled), datasheet");
	assert_string_equal(fact(&doc, "dram", buf, sizeof(buf)), "3350 GB/s, datasheet");
	assert_null(fact(&doc, "host link", buf, sizeof(buf)));
	assert_null(fact(&doc, "peer link", buf, sizeof(buf)));
	doc_free(&doc);
}

static void cells_are_base_units_and_unknowns_are_null(void **state)
{
	(void)state;
	struct kp_device a = gpu_a(), b = { .name = "Test GPU B", .confidence = "unverified" };
	const struct kp_device *devs[] = { &a, &b };
	struct kp_devdb db = { .ndev = 2, .origin = "x" };
	struct kp_doc doc;
	devices_doc(&db, devs, 2, NULL, NULL, &doc);
	const struct kp_table *tb = first_table(&doc);
	const struct kp_cell *r0 = tb->cells, *r1 = tb->cells + tb->ncols;
	assert_int_equal(r0[col(tb, "sms")].i, 132);
	assert_true(r0[col(tb, "mem_bytes")].d == 80e9);
	assert_string_equal(r0[col(tb, "mem_bytes")].human, "80");
	assert_string_equal(r0[col(tb, "dram_byte_per_s")].human, "3350");
	assert_true(r0[col(tb, "bf16_flop_per_s")].d == 989.4e12);
	assert_string_equal(r0[col(tb, "bf16_flop_per_s")].human, "989.4");
	assert_string_equal(r0[col(tb, "fp32_flop_per_s")].human, "6.69");
	assert_int_equal(r0[col(tb, "bf16_clk_ref_mhz")].i, 1830);
	assert_int_equal(r0[col(tb, "fp32_clk_ref_mhz")].type, CELL_NULL); /* clock unknown */
	assert_int_equal(r0[col(tb, "int8_op_per_s")].type, CELL_NUM);
	assert_string_equal(r0[col(tb, "host_link")].s, "PCIe 5.0 x16");
	assert_string_equal(r0[col(tb, "name")].s, "Test GPU A");
	/* an entry with nothing known: null cells, not zeros */
	/* clang-format off */
	const char *nulls[] = { "sms", "clk_max_mhz", "mem_bytes", "dram_byte_per_s", "mem_clk_mhz",
				"bus_bits", "host_link", "host_byte_per_s", "peer_byte_per_s",
				"bf16_flop_per_s", "bf16_clk_ref_mhz", "bf16_flag" };
	/* clang-format on */
	for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
		assert_int_equal(r1[col(tb, nulls[i])].type, CELL_NULL);
	assert_int_equal(r1[col(tb, "no_clock_scaling")].type, CELL_INT);
	assert_string_equal(r1[col(tb, "confidence")].s, "unverified");
	doc_free(&doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_listing_counts_entries_and_explains_peaks),
		cmocka_unit_test(a_lookup_lists_each_known_peak_with_its_clock),
		cmocka_unit_test(cells_are_base_units_and_unknowns_are_null),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
