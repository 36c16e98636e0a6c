/*
 * devices-doc.c — the device table (kprof devices) as a document: facts and one table.
 */
#include "kprof/devices-doc.h"

#include <stdio.h>
#include <string.h>

#include "kprof/dtype.h"
#include "kprof/units.h"

/* TFLOP/s: 1 decimal, 3 significant digits under 10 (0.473 and 1.43 keep their digits). */
static const char *tflops_text(char *buf, size_t cap, double flop_per_s)
{
	double t = flop_per_s / 1e12;
	snprintf(buf, cap, t >= 10 ? "%.1f" : "%.3g", t);
	return buf;
}

static void num_or_null(struct kp_table *tb, struct kp_cell *c, double v, const char *human)
{
	if (v > 0)
		doc_cell_num(tb, c, v, human);
	else
		doc_cell_num(tb, c, -1, NULL);
}

/* Per precision: the peak, the clock it assumes, its confidence flag. */
/* clang-format off */
#define PREC_COLS(P, p, T, unit)                                                       \
	[DC_PEAK + 3 * (P)] = { T, #p "_" unit "_per_s", COL_BOTH, 0 },                \
	[DC_PEAK + 3 * (P) + 1] = { NULL, #p "_clk_ref_mhz", COL_MACHINE, 0 },          \
	[DC_PEAK + 3 * (P) + 2] = { NULL, #p "_flag", COL_MACHINE, 1 }
/* clang-format on */

/* The device table's columns, in print order (kprof(1), DEVICES). */
/* clang-format off */
enum dev_col {
	DC_SMS, DC_CLK, DC_PCLK, DC_MEM, DC_BW, DC_L2, DC_MCLK, DC_BUS, DC_NOSC, DC_HOST, DC_HBW,
	DC_PBW,
	DC_PEAK, /* 3 columns per enum kp_prec */
	DC_CONF = DC_PEAK + 3 * PREC_N, DC_SRC, DC_HOW, DC_NAME, DC_N
};
/* clang-format on */

static const struct kp_col dev_cols[DC_N] = {
	[DC_SMS] = { "SMs", "sms", COL_BOTH, 0 },
	[DC_CLK] = { "MaxMHz", "clk_max_mhz", COL_BOTH, 0 },
	[DC_PCLK] = { "PeakMHz", "peak_clk_mhz", COL_BOTH, 0 },
	[DC_MEM] = { "GB", "mem_bytes", COL_BOTH, 0 },
	[DC_BW] = { "GB/s", "dram_byte_per_s", COL_BOTH, 0 },
	[DC_L2] = { "L2MiB", "l2_bytes", COL_BOTH, 0 },
	[DC_MCLK] = { NULL, "mem_clk_mhz", COL_MACHINE, 0 },
	[DC_BUS] = { NULL, "bus_bits", COL_MACHINE, 0 },
	[DC_NOSC] = { NULL, "no_clock_scaling", COL_MACHINE, 0 },
	[DC_HOST] = { NULL, "host_link", COL_MACHINE, 1 },
	[DC_HBW] = { NULL, "host_byte_per_s", COL_MACHINE, 0 },
	[DC_PBW] = { NULL, "peer_byte_per_s", COL_MACHINE, 0 },
	PREC_COLS(PREC_FP64, fp64, "FP64", "flop"),
	PREC_COLS(PREC_FP32, fp32, "FP32", "flop"),
	PREC_COLS(PREC_TF32, tf32, "TF32", "flop"),
	PREC_COLS(PREC_BF16, bf16, "BF16", "flop"),
	PREC_COLS(PREC_FP16, fp16, "FP16", "flop"),
	PREC_COLS(PREC_FP8, fp8, "FP8", "flop"),
	PREC_COLS(PREC_INT8, int8, "INT8", "op"),
	[DC_CONF] = { "Confidence", "confidence", COL_BOTH, 1 },
	[DC_SRC] = { NULL, "source", COL_MACHINE, 1 },
	[DC_HOW] = { NULL, "match", 0, 1 }, /* a lookup: machine */
	[DC_NAME] = { "Name", "name", COL_BOTH, 1 },
};

/*
 * The SM clock the tensor peaks assume (BF16's, else FP16's, else FP32's): below the max
 * boost on Hopper and Blackwell (H100 SXM: 1830 vs 1980 MHz, doc/devices.md section 4.1).
 * 0 when no peak names its clock.
 */
static int peak_clock(const struct kp_device *dv)
{
	static const enum kp_prec order[] = { PREC_BF16, PREC_FP16, PREC_FP32 };
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (dv->peak[order[i]].flop_per_s > 0 && dv->peak[order[i]].clk_ref_mhz > 0)
			return dv->peak[order[i]].clk_ref_mhz;
	return 0;
}

static void build_table(struct kp_doc *doc, const struct kp_device *const *devs, int n,
			const char *how)
{
	char buf[64];
	struct kp_table *tb = doc_table(doc, "rows", dev_cols, DC_N);
	if (how)
		doc_col_show(tb, DC_HOW, COL_MACHINE);
	for (int i = 0; i < n; i++) {
		const struct kp_device *dv = devs[i];
		struct kp_cell *c = doc_row(tb);
		if (dv->sms > 0)
			doc_cell_int(tb, &c[DC_SMS], dv->sms, NULL);
		if (dv->clk_max_mhz > 0)
			doc_cell_int(tb, &c[DC_CLK], dv->clk_max_mhz, NULL);
		if (peak_clock(dv) > 0)
			doc_cell_int(tb, &c[DC_PCLK], peak_clock(dv), NULL);
		snprintf(buf, sizeof(buf), "%g", dv->mem_gb);
		num_or_null(tb, &c[DC_MEM], dv->mem_gb * 1e9, buf);
		snprintf(buf, sizeof(buf), "%.0f", dv->mem_bw_byte_per_s / 1e9);
		num_or_null(tb, &c[DC_BW], dv->mem_bw_byte_per_s, buf);
		snprintf(buf, sizeof(buf), "%g", dv->l2_bytes / (1024.0 * 1024));
		num_or_null(tb, &c[DC_L2], dv->l2_bytes, buf);
		if (dv->mem_clk_mhz > 0)
			doc_cell_int(tb, &c[DC_MCLK], dv->mem_clk_mhz, NULL);
		if (dv->bus_bits > 0)
			doc_cell_int(tb, &c[DC_BUS], dv->bus_bits, NULL);
		doc_cell_int(tb, &c[DC_NOSC], dv->no_clock_scaling, NULL);
		doc_cell_str(tb, &c[DC_HOST], dv->host_link, NULL);
		num_or_null(tb, &c[DC_HBW], dv->host_bw_byte_per_s, NULL);
		num_or_null(tb, &c[DC_PBW], dv->peer_bw_byte_per_s, NULL);
		for (int p = 0; p < PREC_N; p++) {
			const struct kp_peak *pk = &dv->peak[p];
			struct kp_cell *pc = &c[DC_PEAK + 3 * p];
			num_or_null(tb, &pc[0], pk->flop_per_s,
				    tflops_text(buf, sizeof(buf), pk->flop_per_s));
			if (pk->flop_per_s > 0 && pk->clk_ref_mhz > 0)
				doc_cell_int(tb, &pc[1], pk->clk_ref_mhz, NULL);
			doc_cell_str(tb, &pc[2], pk->flag, NULL);
		}
		doc_cell_str(tb, &c[DC_CONF], dv->confidence, NULL);
		doc_cell_str(tb, &c[DC_SRC], dv->source, NULL);
		doc_cell_str(tb, &c[DC_HOW], how, NULL);
		doc_cell_str(tb, &c[DC_NAME], dv->name, NULL);
	}
}

/* The facts of one matched entry: each peak with its clock and flag, and the source. */
static void entry_facts(struct kp_doc *doc, const struct kp_device *dv)
{
	char buf[64], clk[64];
	for (int p = 0; p < PREC_N; p++) {
		const struct kp_peak *pk = &dv->peak[p];
		if (pk->flop_per_s <= 0)
			continue;
		if (dv->no_clock_scaling)
			snprintf(clk, sizeof(clk), " (not clock-scaled)");
		else if (pk->clk_ref_mhz > 0)
			snprintf(clk, sizeof(clk), " at %d MHz", pk->clk_ref_mhz);
		else
			snprintf(clk, sizeof(clk), " (clock unknown, not scaled)");
		doc_fact_textf(doc, dtype_prec_name((enum kp_prec)p), NULL, "%s %s%s, %s",
				  tflops_text(buf, sizeof(buf), pk->flop_per_s),
				  p == PREC_INT8 ? "TOP/s" : "TFLOP/s", clk, pk->flag);
	}
	clk[0] = '\0';
	if (dv->mem_clk_mhz > 0 && dv->bus_bits > 0)
		snprintf(clk, sizeof(clk), " (%d MHz x 2 x %d bits / 8 = %.0f GB/s)",
			 dv->mem_clk_mhz, dv->bus_bits,
			 dv->mem_clk_mhz * 2.0 * dv->bus_bits / 8 / 1e3);
	doc_fact_textf(doc, "dram", NULL, "%.0f GB/s, %s%s", dv->mem_bw_byte_per_s / 1e9,
			  dv->bw_flag, clk);
	if (dv->l2_bytes > 0)
		doc_fact_textf(doc, "l2", NULL, "%g MiB (%.1f MB), %s", dv->l2_bytes / 1048576,
				  dv->l2_bytes / 1e6, dv->l2_flag);
	if (dv->host_link)
		doc_fact_textf(doc, "host link", NULL, "%s, %.1f GB/s per direction, %s",
				  dv->host_link, dv->host_bw_byte_per_s / 1e9, dv->host_flag);
	if (dv->peer_bw_byte_per_s > 0)
		doc_fact_textf(doc, "peer link", NULL, "%.0f GB/s per direction, %s",
				  dv->peer_bw_byte_per_s / 1e9, dv->peer_flag);
	doc_fact_text(doc, "source", NULL, dv->source);
}

void devices_doc(const struct kp_devdb *db, const struct kp_device *const *devs, int n,
		  const char *query, const char *how, struct kp_doc *doc)
{
	doc_init(doc, "devices", 9);
	doc_fact_textf(doc, "device_db", NULL, "%s (%d %s)", db->origin, db->ndev,
			  units_plural(db->ndev, "entry", "entries"));
	doc_fact_text(doc, NULL, "device_db", db->origin);
	if (query) {
		doc_summary(doc, "'%s' is %s (%s)", query, devs[0]->name, how);
		doc_fact_text(doc, "query", "query", query);
		doc_fact_textf(doc, "match", NULL, "%s (%s)", devs[0]->name, how);
		doc_fact_text(doc, NULL, "match", how);
		entry_facts(doc, devs[0]);
	} else {
		doc_summary(doc, "%d %s in %s", db->ndev,
			       units_plural(db->ndev, "entry", "entries"), db->origin);
		doc_fact_text(
			doc, "peaks", NULL,
			"dense TFLOP/s (INT8: TOP/s) at the SM clock each assumes; '-' unknown");
		doc_fact_text(doc, "clocks", NULL,
				 "MaxMHz: max boost SM clock; PeakMHz: the clock the BF16 tensor peak "
				 "assumes (FP32/FP64 may assume another: kprof devices NAME)");
	}
	build_table(doc, devs, n, how);
}
