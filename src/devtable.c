/*
 * devtable.c — the device table as '#' lines and a table in every format (kprof devices).
 */
#include "kprof/devtable.h"

#include <stdio.h>
#include <string.h>

/* Column titles of the peaks, in enum kp_prec order. */
static const char *const prec_titles[PREC_N] = { "FP64", "FP32", "TF32", "BF16",
						 "FP16", "FP8",  "INT8" };

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
		cell_num(tb, c, v, human);
	else
		cell_num(tb, c, -1, NULL);
}

static void build_table(struct kp_table *tb, const struct kp_device *const *devs, int n,
			const char *how)
{
	char key[32], buf[64];
	table_init(tb);
	int c_sms = table_add_col(tb, "SMs", "sms", COL_BOTH, 0);
	int c_clk = table_add_col(tb, "MHz", "clk_max_mhz", COL_BOTH, 0);
	int c_mem = table_add_col(tb, "GB", "mem_bytes", COL_BOTH, 0);
	int c_bw = table_add_col(tb, "GB/s", "dram_byte_per_s", COL_BOTH, 0);
	int c_mclk = table_add_col(tb, NULL, "mem_clk_mhz", COL_MACHINE, 0);
	int c_bus = table_add_col(tb, NULL, "bus_bits", COL_MACHINE, 0);
	int c_nosc = table_add_col(tb, NULL, "no_clock_scaling", COL_MACHINE, 0);
	int c_peak[PREC_N], c_ref[PREC_N], c_flag[PREC_N];
	for (int p = 0; p < PREC_N; p++) {
		const char *pn = prec_name((enum kp_prec)p);
		snprintf(key, sizeof(key), "%s_%s_per_s", pn, p == PREC_INT8 ? "op" : "flop");
		c_peak[p] = table_add_col(tb, prec_titles[p], arena_strdup(&tb->arena, key), COL_BOTH, 0);
		snprintf(key, sizeof(key), "%s_clk_ref_mhz", pn);
		c_ref[p] = table_add_col(tb, NULL, arena_strdup(&tb->arena, key), COL_MACHINE, 0);
		snprintf(key, sizeof(key), "%s_flag", pn);
		c_flag[p] = table_add_col(tb, NULL, arena_strdup(&tb->arena, key), COL_MACHINE, 1);
	}
	int c_conf = table_add_col(tb, "Confidence", "confidence", COL_BOTH, 1);
	int c_src = table_add_col(tb, NULL, "source", COL_MACHINE, 1);
	int c_how = how ? table_add_col(tb, NULL, "match", COL_MACHINE, 1) : -1;
	int c_name = table_add_col(tb, "Name", "name", COL_BOTH, 1);

	for (int i = 0; i < n; i++) {
		const struct kp_device *dv = devs[i];
		struct kp_cell *c = table_add_row(tb);
		if (dv->sms > 0)
			cell_int(tb, &c[c_sms], dv->sms, NULL);
		if (dv->clk_max_mhz > 0)
			cell_int(tb, &c[c_clk], dv->clk_max_mhz, NULL);
		snprintf(buf, sizeof(buf), "%g", dv->mem_gb);
		num_or_null(tb, &c[c_mem], dv->mem_gb * 1e9, buf);
		snprintf(buf, sizeof(buf), "%.0f", dv->mem_bw_byte_per_s / 1e9);
		num_or_null(tb, &c[c_bw], dv->mem_bw_byte_per_s, buf);
		if (dv->mem_clk_mhz > 0)
			cell_int(tb, &c[c_mclk], dv->mem_clk_mhz, NULL);
		if (dv->bus_bits > 0)
			cell_int(tb, &c[c_bus], dv->bus_bits, NULL);
		cell_int(tb, &c[c_nosc], dv->no_clock_scaling, NULL);
		for (int p = 0; p < PREC_N; p++) {
			const struct kp_peak *pk = &dv->peak[p];
			num_or_null(tb, &c[c_peak[p]], pk->flop_per_s,
				    tflops_text(buf, sizeof(buf), pk->flop_per_s));
			if (pk->flop_per_s > 0 && pk->clk_ref_mhz > 0)
				cell_int(tb, &c[c_ref[p]], pk->clk_ref_mhz, NULL);
			cell_str(tb, &c[c_flag[p]], pk->flag, NULL);
		}
		cell_str(tb, &c[c_conf], dv->confidence, NULL);
		cell_str(tb, &c[c_src], dv->source, NULL);
		if (how)
			cell_str(tb, &c[c_how], how, NULL);
		cell_str(tb, &c[c_name], dv->name, NULL);
	}
}

/* '#' lines of one matched entry: each peak with its clock and flag, and the source. */
static void entry_lines(FILE *fp, const char *pre, const struct kp_device *dv)
{
	char buf[64];
	for (int p = 0; p < PREC_N; p++) {
		const struct kp_peak *pk = &dv->peak[p];
		if (pk->flop_per_s <= 0)
			continue;
		fprintf(fp, "%s%-10s %s %s", pre, prec_name((enum kp_prec)p),
			tflops_text(buf, sizeof(buf), pk->flop_per_s),
			p == PREC_INT8 ? "TOP/s" : "TFLOP/s");
		if (dv->no_clock_scaling)
			fputs(" (not clock-scaled)", fp);
		else if (pk->clk_ref_mhz > 0)
			fprintf(fp, " at %d MHz", pk->clk_ref_mhz);
		else
			fputs(" (clock unknown, not scaled)", fp);
		fprintf(fp, ", %s\n", pk->flag);
	}
	fprintf(fp, "%s%-10s %.0f GB/s, %s", pre, "dram", dv->mem_bw_byte_per_s / 1e9, dv->bw_flag);
	if (dv->mem_clk_mhz > 0 && dv->bus_bits > 0)
		fprintf(fp, " (%d MHz x 2 x %d bits / 8 = %.0f GB/s)", dv->mem_clk_mhz, dv->bus_bits,
			dv->mem_clk_mhz * 2.0 * dv->bus_bits / 8 / 1e3);
	fputc('\n', fp);
	fprintf(fp, "%s%-10s %s\n", pre, "source", dv->source);
}

void devtable_render(const struct kp_devdb *db, const struct kp_device *const *devs, int n,
		     const char *query, const char *how, enum kp_format format, FILE *fp)
{
	struct kp_table tb;
	build_table(&tb, devs, n, how);
	const char *pre = format == FMT_MARKDOWN ? "    " : "# ";
	switch (format) {
	case FMT_CSV:
		table_render(&tb, FMT_CSV, fp);
		break;
	case FMT_JSON:
		fprintf(fp, "{\n  \"kprof\": {\"version\": \"%s\", \"command\": \"devices\"},\n",
			KPROF_VERSION);
		fputs("  \"device_db\": ", fp);
		json_put_str(fp, db->origin);
		if (query) {
			fputs(",\n  \"query\": ", fp);
			json_put_str(fp, query);
			fputs(",\n  \"match\": ", fp);
			json_put_str(fp, how);
		}
		fputs(",\n  \"rows\": ", fp);
		table_render(&tb, FMT_JSON, fp);
		fputs("\n}\n", fp);
		break;
	default:
		fprintf(fp, "%s%-10s %s (%d entries)\n", pre, "device_db", db->origin, db->ndev);
		if (query) {
			fprintf(fp, "%s%-10s %s\n", pre, "query", query);
			fprintf(fp, "%s%-10s %s (%s)\n", pre, "match", devs[0]->name, how);
			entry_lines(fp, pre, devs[0]);
		} else {
			fprintf(fp, "%s%-10s dense TFLOP/s (INT8: TOP/s) at the SM clock each assumes; "
				    "'-' unknown\n", pre, "peaks");
		}
		if (format == FMT_MARKDOWN)
			fputc('\n', fp);
		table_render(&tb, format, fp);
		break;
	}
	table_free(&tb);
}

