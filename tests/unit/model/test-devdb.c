/*
 * test-devdb.c — device table: the built-in text, name matching, clock and memory scaling,
 * parse errors with their exact text and line.
 */
#include "kprof/devdb.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kprof/diag.h"

static struct kp_devdb builtin;

static int load_builtin(void **state)
{
	(void)state;
	struct kp_diag d = { 0 };
	if (devdb_load_builtin(&builtin, &d) < 0) {
		fprintf(stderr, "%s\n", d.msg);
		return -1;
	}
	return 0;
}

static int free_builtin(void **state)
{
	(void)state;
	devdb_free(&builtin);
	return 0;
}

#define assert_close(a, b) assert_true(fabs((a) - (b)) <= 1e-9 * fabs(b))

/* The entry @name matches, by canonical name, or "-" when none. */
static const char *match(const char *name)
{
	const struct kp_device *dv = devdb_match(&builtin, name, NULL);
	return dv ? dv->name : "-";
}

static const struct kp_device *entry(const char *canonical)
{
	const struct kp_device *dv = devdb_find(&builtin, canonical);
	assert_non_null(dv);
	return dv;
}

static void builtin_table_parses_and_every_entry_is_sourced(void **state)
{
	(void)state;
	assert_string_equal(builtin.origin, "built-in");
	assert_true(builtin.ndev >= 35);
	for (int i = 0; i < builtin.ndev; i++) {
		const struct kp_device *dv = &builtin.dev[i];
		assert_non_null(dv->source);
		assert_true(strstr(dv->source, "2026") || strstr(dv->source, "2022"));
		assert_non_null(dv->confidence);
		assert_true(dv->nexact + dv->nsubstr > 0);
		assert_true(dv->mem_bw_byte_per_s > 0);
		assert_non_null(dv->sms_flag);
		assert_non_null(dv->bw_flag);
		int npeak = 0;
		for (int p = 0; p < PREC_N; p++) {
			const struct kp_peak *pk = &dv->peak[p];
			if (pk->flop_per_s <= 0) {
				assert_null(pk->flag);
				continue;
			}
			npeak++;
			assert_non_null(pk->flag);
			/* dense peaks only: nothing in the table reaches 6 PFLOP/s */
			assert_true(pk->flop_per_s < 6e15);
			if (dv->clk_max_mhz && pk->clk_ref_mhz)
				assert_true(pk->clk_ref_mhz <= dv->clk_max_mhz);
		}
		assert_true(npeak >= 3);
	}
}

static void builtin_covers_every_device_of_the_reference(void **state)
{
	(void)state;
	/* clang-format off */
	static const char *const names[] = {
		"NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H200",
		"NVIDIA H200 NVL", "NVIDIA H20", "NVIDIA GH200 480GB", "NVIDIA GH200 144G HBM3e",
		"NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-40GB", "NVIDIA A100-PCIE-40GB",
		"NVIDIA A100 80GB PCIe", "NVIDIA A100-PG509-200", "NVIDIA A10G", "NVIDIA A10",
		"NVIDIA L4", "NVIDIA L40S", "NVIDIA L40", "Tesla V100-SXM2-16GB",
		"Tesla V100-SXM2-32GB", "Tesla V100-PCIE-16GB", "Tesla T4", "NVIDIA B200",
		"NVIDIA GB200", "NVIDIA B100", "NVIDIA GeForce RTX 4090",
		"NVIDIA RTX 6000 Ada Generation", "NVIDIA GeForce RTX 5090", "AMD Instinct MI300X",
		"AMD Instinct MI300A", "AMD Instinct MI325X", "AMD Instinct MI350X",
		"AMD Instinct MI210",
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *how;
		const struct kp_device *dv = devdb_match(&builtin, names[i], &how);
		assert_non_null(dv);
		assert_string_equal(dv->name, names[i]);
		assert_string_equal(how, "exact");
	}
}

static void builtin_matches_every_device_name_in_the_shared_traces(void **state)
{
	(void)state;
	/* deviceProperties names of the traces in ../shared/testdata (torch211-h100, hta) */
	assert_string_equal(match("NVIDIA H100 80GB HBM3"), "NVIDIA H100 80GB HBM3");
	assert_string_equal(match("NVIDIA A100-PG509-200"), "NVIDIA A100-PG509-200");
	assert_string_equal(match("Tesla V100-SXM2-32GB"), "Tesla V100-SXM2-32GB");
	assert_string_equal(match("Tesla V100-SXM2-16GB"), "Tesla V100-SXM2-16GB");
	/* amd_mi250_rocm62: the generic ROCm name stays unmatched, with or without its CUs */
	assert_string_equal(match("AMD Radeon Graphics"), "-");
	assert_null(devdb_match_sms(&builtin, "AMD Radeon Graphics", 104, NULL));
}

static void a100_pg509_200_is_the_a100_40gb_class_flagged_unverified(void **state)
{
	(void)state;
	const struct kp_device *pg = entry("NVIDIA A100-PG509-200");
	const struct kp_device *sxm = entry("NVIDIA A100-SXM4-40GB");
	assert_int_equal(pg->sms, 108);
	assert_close(pg->mem_bw_byte_per_s, 1555e9);
	assert_close(pg->peak[PREC_BF16].flop_per_s, 312e12);
	for (int p = 0; p < PREC_N; p++) {
		assert_close(pg->peak[p].flop_per_s, sxm->peak[p].flop_per_s);
		if (pg->peak[p].flop_per_s > 0)
			assert_string_equal(pg->peak[p].flag, "unverified");
	}
	assert_string_equal(pg->confidence, "unverified");
	assert_string_equal(pg->sms_flag, "unverified");
	assert_string_equal(pg->bw_flag, "unverified");
	/* the entry it was copied from keeps its own flags */
	assert_string_equal(sxm->peak[PREC_BF16].flag, "datasheet");
}

static void match_keeps_l40s_l40_and_l4_apart(void **state)
{
	(void)state;
	assert_string_equal(match("NVIDIA L40S"), "NVIDIA L40S");
	assert_string_equal(match("NVIDIA L40"), "NVIDIA L40");
	assert_string_equal(match("NVIDIA L4"), "NVIDIA L4");
	/* through patterns too (no exact name): suffixes that are not in the table */
	assert_string_equal(match("NVIDIA L40S-48Q"), "NVIDIA L40S");
	assert_string_equal(match("NVIDIA L40-48Q"), "NVIDIA L40");
	assert_string_equal(match("NVIDIA L4-24Q"), "NVIDIA L4");
	assert_string_equal(match("NVIDIA L20"), "-");
}

static void match_takes_h20_only_as_a_whole_word(void **state)
{
	(void)state;
	assert_string_equal(match("NVIDIA H20"), "NVIDIA H20");
	assert_string_equal(match("NVIDIA H20-3e"), "NVIDIA H20");
	assert_string_equal(match("NVIDIA H20 NVL16"), "NVIDIA H20");
	assert_string_equal(match("NVIDIA H200"), "NVIDIA H200");
	assert_string_equal(match("NVIDIA H200 NVL"), "NVIDIA H200 NVL");
	assert_string_equal(match("NVIDIA H200 SXM 141GB"), "NVIDIA H200");
	assert_string_equal(match("NVIDIA H20 MIG 1g.12gb"), "NVIDIA H20");
}

static void match_puts_gh200_before_h200_and_gb200_before_b200(void **state)
{
	(void)state;
	assert_string_equal(match("NVIDIA GH200 480GB"), "NVIDIA GH200 480GB");
	assert_string_equal(match("NVIDIA GH200 120GB"), "NVIDIA GH200 480GB");
	assert_string_equal(match("NVIDIA GH200 144G HBM3e"), "NVIDIA GH200 144G HBM3e");
	assert_string_equal(match("NVIDIA GH200 96GB HBM3"), "NVIDIA GH200 480GB");
	assert_string_equal(match("NVIDIA GB200"), "NVIDIA GB200");
	assert_string_equal(match("NVIDIA B200"), "NVIDIA B200");
	assert_string_equal(match("NVIDIA GB200 NVL72"), "NVIDIA GB200");
}

static void match_keeps_a10g_a100_and_a10_apart(void **state)
{
	(void)state;
	assert_string_equal(match("NVIDIA A10G"), "NVIDIA A10G");
	assert_string_equal(match("NVIDIA A10"), "NVIDIA A10");
	assert_string_equal(match("NVIDIA A10-24Q"), "NVIDIA A10");
	assert_string_equal(match("NVIDIA A10M"), "-");
	assert_string_equal(match("NVIDIA A100-SXM4-80GB"), "NVIDIA A100-SXM4-80GB");
	assert_string_equal(match("NVIDIA A100-SXM-64GB"), "NVIDIA A100-SXM4-40GB");
	assert_string_equal(match("NVIDIA A100 80GB PCIe MIG 1g.10gb"), "NVIDIA A100 80GB PCIe");
}

static void match_sends_h100_variants_to_their_form_factor(void **state)
{
	(void)state;
	const char *how;
	assert_string_equal(match("NVIDIA H100 NVL"), "NVIDIA H100 NVL");
	assert_string_equal(match("NVIDIA H100 PCIe"), "NVIDIA H100 PCIe");
	assert_non_null(devdb_match(&builtin, "NVIDIA H100 80GB HBM3 MIG 1g.10gb", &how));
	assert_string_equal(how, "pattern 'H100 80GB HBM3'");
	assert_string_equal(match("NVIDIA H100"), "NVIDIA H100 80GB HBM3");
	assert_non_null(devdb_match(&builtin, "NVIDIA H100", &how));
	assert_string_equal(how, "pattern 'H100'");
	assert_string_equal(match("NVIDIA H100 NVL MIG 1g.12gb"), "NVIDIA H100 NVL");
	assert_string_equal(match("NVIDIA H800"), "-");
}

static void match_ignores_case_and_surrounding_blanks(void **state)
{
	(void)state;
	const char *how;
	assert_non_null(devdb_match(&builtin, "nvidia h100 80gb hbm3", &how));
	assert_string_equal(how, "exact");
	assert_string_equal(match("  NVIDIA L4 \t"), "NVIDIA L4");
	assert_string_equal(match("AMD INSTINCT MI300X"), "AMD Instinct MI300X");
	assert_string_equal(match("amd instinct mi300x vf"), "AMD Instinct MI300X");
	assert_string_equal(match("AMD Instinct MI300X VF"), "AMD Instinct MI300X");
	assert_string_equal(match("tesla t4"), "Tesla T4");
}

static void match_leaves_other_geforce_cards_alone(void **state)
{
	(void)state;
	assert_string_equal(match("NVIDIA GeForce RTX 4090"), "NVIDIA GeForce RTX 4090");
	assert_string_equal(match("NVIDIA GeForce RTX 4090 D"), "-");
	assert_string_equal(match("NVIDIA GeForce RTX 4090 Laptop GPU"), "-");
	assert_string_equal(match("NVIDIA RTX 5000 Ada Generation"), "-");
	assert_string_equal(match("NVIDIA T400"), "-");
	assert_string_equal(match(""), "-");
	assert_null(devdb_match(&builtin, NULL, NULL));
}

static void match_sms_tells_mi250x_from_mi250(void **state)
{
	(void)state;
	const char *how;
	const struct kp_device *dv;
	dv = devdb_match_sms(&builtin, "AMD Instinct MI250X/MI250", 110, &how);
	assert_string_equal(dv->name, "AMD Instinct MI250X (one GCD)");
	assert_string_equal(how, "exact");
	dv = devdb_match_sms(&builtin, "AMD Instinct MI250X/MI250", 104, &how);
	assert_string_equal(dv->name, "AMD Instinct MI250 (one GCD)");
	assert_close(dv->peak[PREC_FP64].flop_per_s, 22.6e12);
	dv = devdb_match_sms(&builtin, "AMD Instinct MI250X/MI250", 0, &how);
	assert_string_equal(dv->name, "AMD Instinct MI250X (one GCD)");
	assert_string_equal(how, "exact (SM count not checked)");
	assert_null(devdb_match_sms(&builtin, "AMD Instinct MI250X/MI250", 96, &how));
	assert_null(how);
	/* entries without match_sms ignore the count (MIG slices report fewer SMs) */
	dv = devdb_match_sms(&builtin, "NVIDIA H100 80GB HBM3 MIG 1g.10gb", 16, &how);
	assert_string_equal(dv->name, "NVIDIA H100 80GB HBM3");
}

static void peak_scales_with_the_clock_up_to_the_clock_it_assumes(void **state)
{
	(void)state;
	const struct kp_device *h100 = entry("NVIDIA H100 80GB HBM3");
	assert_close(devdb_peak_flops(h100, PREC_BF16, 0), 989.4e12);
	assert_close(devdb_peak_flops(h100, PREC_BF16, -1), 989.4e12);
	assert_close(devdb_peak_flops(h100, PREC_BF16, 1830), 989.4e12);
	assert_close(devdb_peak_flops(h100, PREC_BF16, 1630), 989.4e12 * 1630 / 1830);
	/* never above the datasheet: 1980 is the max boost, not the tensor clock */
	assert_close(devdb_peak_flops(h100, PREC_BF16, 1980), 989.4e12);
	assert_close(devdb_peak_flops(h100, PREC_FP64, 1980), 33.5e12);
	assert_close(devdb_peak_flops(h100, PREC_FP64, 990), 33.5e12 / 2);
	assert_close(devdb_peak_flops(h100, PREC_FP32, 1830), 66.9e12 * 1830 / 1980);
	assert_close(devdb_peak_flops(h100, PREC_INT8, 0), 1978.9e12);
	assert_close(devdb_peak_flops(h100, PREC_TF32, 1340), 494.7e12 * 1340 / 1830);
	assert_true(devdb_peak_flops(h100, PREC_NONE, 0) == 0);
	assert_true(devdb_peak_flops(h100, PREC_N, 0) == 0);
	assert_true(devdb_peak_flops(NULL, PREC_BF16, 0) == 0);
}

static void peak_is_zero_when_unknown_and_fixed_when_capped(void **state)
{
	(void)state;
	assert_true(devdb_peak_flops(entry("Tesla V100-SXM2-16GB"), PREC_BF16, 0) == 0);
	assert_true(devdb_peak_flops(entry("NVIDIA A100-SXM4-40GB"), PREC_FP8, 1410) == 0);
	const struct kp_device *h20 = entry("NVIDIA H20");
	assert_true(h20->no_clock_scaling);
	assert_close(devdb_peak_flops(h20, PREC_BF16, 1000), 148e12);
	assert_close(devdb_peak_flops(h20, PREC_BF16, 0), 148e12);
	/* B100 figures carry no clock: never scaled */
	const struct kp_device *b100 = entry("NVIDIA B100");
	assert_int_equal(b100->peak[PREC_BF16].clk_ref_mhz, 0);
	assert_close(devdb_peak_flops(b100, PREC_BF16, 1000), 1750e12);
}

static void peaks_are_the_dense_datasheet_figures(void **state)
{
	(void)state;
	/* doc/devices.md section 3, and the clocks of section 4.1 */
	const struct kp_device *dv = entry("NVIDIA H100 PCIe");
	assert_close(dv->peak[PREC_BF16].flop_per_s, 756.5e12);
	assert_int_equal(dv->peak[PREC_BF16].clk_ref_mhz, 1620);
	assert_int_equal(dv->peak[PREC_FP32].clk_ref_mhz, 1755);
	dv = entry("NVIDIA L4");
	assert_close(dv->peak[PREC_BF16].flop_per_s, 121e12);
	assert_close(dv->peak[PREC_FP64].flop_per_s, 473e9);
	assert_close(dv->mem_bw_byte_per_s, 300e9);
	dv = entry("NVIDIA L40S");
	assert_int_equal(dv->peak[PREC_BF16].clk_ref_mhz, 2490);
	assert_int_equal(dv->peak[PREC_FP8].clk_ref_mhz, 2520);
	dv = entry("NVIDIA B200");
	assert_close(dv->peak[PREC_BF16].flop_per_s, 2250e12);
	assert_int_equal(dv->peak[PREC_BF16].clk_ref_mhz, 1856);
	dv = entry("AMD Instinct MI300X");
	assert_close(dv->peak[PREC_BF16].flop_per_s, 1307.4e12);
	assert_close(dv->peak[PREC_FP64].flop_per_s, 81.7e12);
	dv = entry("NVIDIA A10G");
	assert_close(dv->peak[PREC_BF16].flop_per_s, 70e12);
	dv = entry("AMD Instinct MI325X");
	assert_close(dv->peak[PREC_FP8].flop_per_s, 2614.9e12);
	assert_close(dv->mem_bw_byte_per_s, 6000e9);
	assert_string_equal(dv->peak[PREC_FP8].flag, "secondary");
}

static void bandwidth_follows_only_a_lower_memory_clock(void **state)
{
	(void)state;
	const struct kp_device *h100 = entry("NVIDIA H100 80GB HBM3");
	assert_close(devdb_peak_bw(h100, 0), 3350e9);
	assert_close(devdb_peak_bw(h100, 2619), 3350e9);
	assert_close(devdb_peak_bw(h100, 3000), 3350e9);
	assert_close(devdb_peak_bw(h100, 1309.5), 3350e9 / 2);
	const struct kp_device *h200 = entry("NVIDIA H200");
	assert_int_equal(h200->bus_bits, 6016);
	assert_close(devdb_peak_bw(h200, 3201), 4800e9);
	/* no reference memory clock: nothing to scale by */
	assert_close(devdb_peak_bw(entry("NVIDIA H20"), 1000), 4000e9);
	assert_true(devdb_peak_bw(NULL, 0) == 0);
}

/* Parse @text, expecting failure with exactly @msg (status 3). */
static void parse_fails(const char *text, const char *msg)
{
	struct kp_devdb db;
	struct kp_diag d = { 0 };
	assert_int_equal(devdb_parse(&db, text, strlen(text), "my.txt", &d), -1);
	assert_int_equal(d.status, KP_BADINPUT);
	assert_string_equal(d.msg, msg);
	assert_null(db.dev);
}

#define STANZA "[X]\nexact = X\nconfidence = datasheet\nsource = s (2026-11)\n"

static void parse_reports_unknown_keys_with_file_and_line(void **state)
{
	(void)state;
	parse_fails("# c\n\n[NVIDIA X]\nexact = NVIDIA X\nsmz = 3\n",
		    "my.txt:5:1: error: unknown key 'smz' in [NVIDIA X]");
	parse_fails("sms = 3\n", "my.txt:1:1: error: 'sms' before the first [entry]");
	parse_fails(STANZA "peak.fp4 = 1 TFLOPS datasheet\n",
		    "my.txt:5:6: error: unknown precision 'fp4' in [X] (valid: fp64, fp32, tf32, "
		    "bf16, fp16, fp8, int8)");
	parse_fails(STANZA "what\n", "my.txt:5:1: error: expected '[name]' or 'key = value'");
	parse_fails("[X\n", "my.txt:1:1: error: expected '[name]' or 'key = value'");
	parse_fails(STANZA "sms = 3\nsms = 4\n", "my.txt:6:1: error: duplicate key 'sms' in [X]");
	parse_fails("", "my.txt: error: no device entries");
}

/*
 * A control byte in an entry's or a key's line is an error at its column (fuzz-devdb: a NUL
 * inside "exact = NV\r\0IA H100 80GB HBM3" left the name "NV\r", which its own lookup did not
 * find); a tab is a blank, and a comment may hold anything but a NUL.
 */
static void parse_rejects_control_bytes(void **state)
{
	(void)state;
	static const char nul[] = STANZA "[Y]\nexact = NV\r\0IA H100\n";
	struct kp_devdb db;
	struct kp_diag d = { 0 };
	assert_int_equal(devdb_parse(&db, nul, sizeof(nul) - 1, "my.txt", &d), -1);
	assert_string_equal(d.msg, "my.txt:6:11: error: a control character (0x0d): a device table "
				   "is text");
	parse_fails(STANZA "[Y\x1b[2J]\n",
		    "my.txt:5:3: error: a control character (0x1b): a device table is text");
	parse_fails(STANZA "source = a\x7f\n",
		    "my.txt:5:11: error: a control character (0x7f): a device table is text");
	static const char nul_comment[] = "# a\0b\n" STANZA;
	d = (struct kp_diag){ 0 };
	assert_int_equal(devdb_parse(&db, nul_comment, sizeof(nul_comment) - 1, "my.txt", &d), -1);
	assert_string_equal(d.msg, "my.txt:1:4: error: a control character (0x00): a device table "
				   "is text");
	/* a tab between key and value, and ESC in a comment: read */
	static const char ok[] = "# colour \x1b[31m\n[X]\nexact\t=\tX\nconfidence = datasheet\n"
				 "source = s (2026-11)\n";
	d = (struct kp_diag){ 0 };
	assert_int_equal(devdb_parse(&db, ok, sizeof(ok) - 1, "my.txt", &d), 0);
	assert_non_null(devdb_match(&db, "X", NULL));
	devdb_free(&db);
}

static void parse_rejects_bad_values(void **state)
{
	(void)state;
	parse_fails(STANZA "sms = 13x\n", "my.txt:5:7: error: bad integer '13x' for 'sms' in [X]");
	parse_fails(STANZA "sms = 13.5\n", "my.txt:5:7: error: bad integer '13.5' for 'sms' in [X]");
	parse_fails(STANZA "mem_gb = -1\n", "my.txt:5:10: error: bad number '-1' for 'mem_gb' in [X]");
	parse_fails(STANZA "sms = 13 sure\n",
		    "my.txt:5:10: error: unknown flag 'sure' in [X] (valid: datasheet, secondary, "
		    "derived, unverified, observed)");
	parse_fails(STANZA "sms = 1 datasheet extra\n",
		    "my.txt:5:7: error: expected 'NUMBER [FLAG]' for 'sms' in [X]");
	parse_fails(STANZA "peak.bf16 = 989.4 TFLOPS @1830\n",
		    "my.txt:5:26: error: expected a flag after '@1830' for 'peak.bf16' in [X]");
	parse_fails(STANZA "peak.bf16 = 989.4 TFLOPS dense\n",
		    "my.txt:5:26: error: unknown flag 'dense' in [X] (valid: datasheet, secondary, "
		    "derived, unverified, observed)");
	parse_fails(STANZA "peak.bf16 = 989.4\n",
		    "my.txt:5:13: error: expected 'VALUE UNIT [@MHZ] FLAG' for 'peak.bf16' in [X]");
	parse_fails(
		STANZA "peak.int8 = 624 TFLOPS datasheet\n",
		"my.txt:5:17: error: unknown unit 'TFLOPS' for 'peak.int8' in [X] (valid: TOPS, GOPS)");
	parse_fails(
		STANZA "peak.bf16 = 312 TOPS datasheet\n",
		"my.txt:5:17: error: unknown unit 'TOPS' for 'peak.bf16' in [X] (valid: TFLOPS, GFLOPS)");
	parse_fails(STANZA "peak.bf16 = 312 TFLOPS 1410 datasheet\n",
		    "my.txt:5:24: error: bad clock '1410' for 'peak.bf16' in [X] (expected '@MHZ')");
	parse_fails(STANZA "peak.bf16 = 0 TFLOPS datasheet\n",
		    "my.txt:5:13: error: peak.bf16 = 0 TFLOPS is outside 0.01..100000 TFLOPS in [X]");
	parse_fails(
		STANZA "no_clock_scaling = maybe\n",
		"my.txt:5:20: error: bad value 'maybe' for 'no_clock_scaling' in [X] (valid: yes, no)");
	parse_fails("[X]\nexact = X\nconfidence = sure\n",
		    "my.txt:3:14: error: unknown flag 'sure' in [X] (valid: datasheet, secondary, "
		    "derived, unverified, observed)");
	parse_fails(STANZA "pattern = A, , B\n", "my.txt:5:11: error: empty name in 'pattern' of [X]");
	parse_fails(STANZA "sms =\n", "my.txt:5:1: error: empty value for 'sms' in [X]");
	static const char *const bad_cc[] = { "9",   "9.",           ".5",     "9.0.1", "9,0",
					      "0.5", "9.0 observed", "1000.0", "x9.0",  "9.-1" };
	for (size_t i = 0; i < sizeof(bad_cc) / sizeof(bad_cc[0]); i++) {
		char text[128], want[160];
		snprintf(text, sizeof(text), STANZA "cc = %s\n", bad_cc[i]);
		snprintf(want, sizeof(want),
			 "my.txt:5:6: error: bad value '%s' for 'cc' in [X] (want MAJOR.MINOR, e.g. 9.0)",
			 bad_cc[i]);
		parse_fails(text, want);
	}
}

/* set_value's steps: each scalar key lands in its own field with its own flag. */
static void parse_puts_each_scalar_and_flag_in_its_field(void **state)
{
	(void)state;
	static const char text[] = STANZA "sms = 132 datasheet\n"
					  "clk_max_mhz = 1980 secondary\n"
					  "mem_gb = 79.5 observed\n"
					  "dram_gbs = 1024 derived\n"
					  "mem_clk_mhz = 1000 unverified\n"
					  "bus_bits = 4096 observed\n"
					  "peer_gbs = 450.5 secondary\n"
					  "no_clock_scaling = NO\n"
					  "[Y]\nbase = x\nexact = Y\nmatch_sms = 66\n"
					  "no_clock_scaling = Yes\n";
	struct kp_devdb db;
	struct kp_diag d = { 0 };
	assert_int_equal(devdb_parse(&db, text, strlen(text), "t.txt", &d), 0);
	const struct kp_device *x = &db.dev[0], *y = &db.dev[1];
	assert_int_equal(x->sms, 132);
	assert_string_equal(x->sms_flag, "datasheet");
	assert_int_equal(x->clk_max_mhz, 1980);
	assert_string_equal(x->clk_flag, "secondary");
	assert_close(x->mem_gb, 79.5);
	assert_string_equal(x->mem_flag, "observed");
	assert_close(x->mem_bw_byte_per_s, 1024e9);
	assert_string_equal(x->bw_flag, "derived");
	assert_int_equal(x->mem_clk_mhz, 1000);
	assert_string_equal(x->mem_clk_flag, "unverified");
	assert_int_equal(x->bus_bits, 4096);
	assert_string_equal(x->bus_flag, "observed");
	assert_close(x->peer_bw_byte_per_s, 450.5e9);
	assert_string_equal(x->peer_flag, "secondary");
	assert_int_equal(x->no_clock_scaling, 0);
	assert_int_equal(x->match_sms, 0);
	assert_int_equal(y->match_sms, 66);
	assert_int_equal(y->sms, 132);
	assert_int_equal(y->no_clock_scaling, 1);
	devdb_free(&db);

	parse_fails(STANZA "match_sms = 66 observed\n",
		    "my.txt:5:13: error: 'match_sms' takes a count only in [X]");
	parse_fails(STANZA "match_sms = 0\n",
		    "my.txt:5:13: error: match_sms = 0 is outside 1..100000 in [X]");
	parse_fails(STANZA "match_sms = 6.5\n",
		    "my.txt:5:13: error: bad integer '6.5' for 'match_sms' in [X]");
	parse_fails(STANZA "bus_bits = 4096 wide\n",
		    "my.txt:5:17: error: unknown flag 'wide' in [X] (valid: datasheet, secondary, "
		    "derived, unverified, observed)");
	parse_fails(STANZA "dram_gbs = 1 2 3\n",
		    "my.txt:5:12: error: expected 'NUMBER [FLAG]' for 'dram_gbs' in [X]");
}

/* Issue 23 item 18: every number outside its physical range is a located error. */
static void parse_refuses_values_outside_physical_ranges(void **state)
{
	(void)state;
	static const struct {
		const char *line, *msg;
	} bad[] = {
		{ "peak.bf16 = 1e308 TFLOPS @1830 datasheet",
		  "my.txt:5:13: error: peak.bf16 = 1e308 TFLOPS is outside 0.01..100000 TFLOPS in [X]" },
		{ "peak.fp64 = 5 GFLOPS datasheet",
		  "my.txt:5:13: error: peak.fp64 = 5 GFLOPS is outside 10..100000000 GFLOPS in [X]" },
		{ "peak.int8 = 200000 TOPS datasheet",
		  "my.txt:5:13: error: peak.int8 = 200000 TOPS is outside 0.01..100000 TOPS in [X]" },
		{ "peak.bf16 = 900 TFLOPS @50 datasheet",
		  "my.txt:5:25: error: peak.bf16 = 50 MHz is outside 100..10000 MHz in [X]" },
		{ "dram_gbs = 1e-300",
		  "my.txt:5:12: error: dram_gbs = 1e-300 is outside 1..1000000 in [X]" },
		{ "dram_gbs = 0", "my.txt:5:12: error: dram_gbs = 0 is outside 1..1000000 in [X]" },
		{ "sms = 0", "my.txt:5:7: error: sms = 0 is outside 1..100000 in [X]" },
		{ "sms = 100001", "my.txt:5:7: error: sms = 100001 is outside 1..100000 in [X]" },
		{ "clk_max_mhz = 99", "my.txt:5:15: error: clk_max_mhz = 99 is outside 100..10000 in [X]" },
		{ "mem_gb = 0.05", "my.txt:5:10: error: mem_gb = 0.05 is outside 0.1..100000 in [X]" },
		{ "mem_clk_mhz = 0",
		  "my.txt:5:15: error: mem_clk_mhz = 0 is outside 100..100000 in [X]" },
		{ "bus_bits = 4", "my.txt:5:12: error: bus_bits = 4 is outside 8..65536 in [X]" },
		{ "peer_gbs = 0.5", "my.txt:5:12: error: peer_gbs = 0.5 is outside 0 or 1..100000 in [X]" },
		{ "l2_mb = 1e9 datasheet", "my.txt:5:9: error: l2_mb = 1e9 is outside 0.25..65536 in [X]" },
		{ "host_link = NVLink-C2C 1e7",
		  "my.txt:5:24: error: host_link NVLink-C2C = 1e7 GB/s is outside 0 or 1..100000 GB/s "
		  "in [X]" },
		{ "  match_sms = 0", "my.txt:5:15: error: match_sms = 0 is outside 1..100000 in [X]" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[256];
		snprintf(text, sizeof(text), STANZA "%s\n", bad[i].line);
		parse_fails(text, bad[i].msg);
	}
	/* the bounds themselves are valid; 0 is "no peer link"; the L2 is MiB */
	static const char ok[] = STANZA "sms = 100000\nclk_max_mhz = 10000\nmem_gb = 0.1\n"
					"dram_gbs = 1\nbus_bits = 8\npeer_gbs = 0\nl2_mb = 50 derived\n"
					"peak.fp64 = 10 GFLOPS datasheet\n"
					"peak.bf16 = 100000 TFLOPS @100 datasheet\n";
	struct kp_devdb db;
	struct kp_diag d = { 0 };
	assert_int_equal(devdb_parse(&db, ok, strlen(ok), "ok.txt", &d), 0);
	assert_close(db.dev[0].l2_bytes, 50.0 * 1024 * 1024);
	assert_string_equal(db.dev[0].l2_flag, "derived");
	assert_close(db.dev[0].peak[PREC_FP64].flop_per_s, 10e9);
	devdb_free(&db);
}

/* Issue 23 item 22: "H100" is a word of three entries' names; "H20" of one (not H200's). */
static void candidates_are_the_entries_a_typed_name_could_mean(void **state)
{
	(void)state;
	const struct kp_device *c[4];
	int n = devdb_candidates(&builtin, "h100", 0, c, 4);
	assert_int_equal(n, 3);
	assert_string_equal(c[0]->name, "NVIDIA H100 80GB HBM3");
	assert_string_equal(c[1]->name, "NVIDIA H100 PCIe");
	assert_string_equal(c[2]->name, "NVIDIA H100 NVL");
	assert_int_equal(devdb_candidates(&builtin, "H20", 0, c, 4), 1);
	assert_int_equal(devdb_candidates(&builtin, "NVIDIA H100 PCIe", 0, c, 4), 1);
	assert_int_equal(devdb_candidates(&builtin, "A100", 0, c, 1), 5);
	assert_int_equal(devdb_candidates(&builtin, "MI250", 0, c, 4), 2);
	assert_int_equal(devdb_candidates(&builtin, "MI250", 104, c, 4), 1);
	assert_int_equal(devdb_candidates(&builtin, "  ", 0, c, 4), 0);

	char note[1024];
	assert_int_equal(devdb_pick_note(&builtin, "H100", 0, note, sizeof(note)), 1);
	assert_string_equal(note, "'H100' could mean 3 entries: NVIDIA H100 80GB HBM3, NVIDIA H100 "
				  "PCIe, NVIDIA H100 NVL; picked NVIDIA H100 80GB HBM3, the entry the "
				  "device table gives pattern 'H100', the longest pattern in the name; "
				  "pass the full name to choose another");
	/* an exact name, a name only one entry has, an MI250 known by its 104 CUs: no note */
	assert_int_equal(devdb_pick_note(&builtin, "NVIDIA H100 PCIe", 0, note, sizeof(note)), 0);
	assert_int_equal(devdb_pick_note(&builtin, "H100 PCIe", 0, note, sizeof(note)), 0);
	assert_int_equal(devdb_pick_note(&builtin, "MI250", 104, note, sizeof(note)), 0);
	assert_int_equal(devdb_pick_note(&builtin, "MI250", 0, note, sizeof(note)), 1);
}

static void parse_checks_each_entry_as_a_whole(void **state)
{
	(void)state;
	parse_fails("[X]\nexact = X\nconfidence = datasheet\n\n[Y]\n",
		    "my.txt:1:1: error: [X] has no 'source'");
	parse_fails("[X]\nexact = X\nsource = s\n", "my.txt:1:1: error: [X] has no 'confidence'");
	parse_fails("[X]\nsource = s\nconfidence = derived\n",
		    "my.txt:1:1: error: [X] has neither 'exact' nor 'pattern'");
	parse_fails(STANZA "clk_max_mhz = 1980\npeak.bf16 = 1 TFLOPS @2000 datasheet\n",
		    "my.txt:6:1: error: clock 2000 MHz of 'peak.bf16' is above clk_max_mhz 1980 in [X]");
	parse_fails(STANZA "dram_gbs = 3350\nmem_clk_mhz = 2619\nbus_bits = 4096\n",
		    "my.txt:1:1: error: dram_gbs 3350 differs from mem_clk_mhz x 2 x bus_bits / 8 = "
		    "2682 GB/s by more than 5% in [X]");
	parse_fails(STANZA "\n[x]\nexact = Y\n",
		    "my.txt:6:1: error: duplicate entry [x] (first at line 1)");
	parse_fails(STANZA "[Y]\nexact = x\nconfidence = datasheet\nsource = s\n",
		    "my.txt:5:1: error: exact name 'x' of [Y] is also in [X] (line 1)");
	parse_fails("[X]\npattern = H100\nconfidence = datasheet\nsource = s\n"
		    "[Y]\npattern = h100\nconfidence = datasheet\nsource = s\n",
		    "my.txt:5:1: error: pattern 'h100' of [Y] is also in [X] (line 1)");
	parse_fails(STANZA "[Y]\nexact = Y\nbase = X\n",
		    "my.txt:7:1: error: 'base' must be the first key in [Y]");
	parse_fails(STANZA "[Y]\nbase = Z\n",
		    "my.txt:6:8: error: unknown base entry 'Z' in [Y] (it must come earlier)");
	parse_fails("[Y]\nbase = Y\n",
		    "my.txt:2:8: error: unknown base entry 'Y' in [Y] (it must come earlier)");
}

static void parse_reads_a_stanza_with_every_key(void **state)
{
	(void)state;
	static const char text[] = "# comment\r\n"
				   "[ Dev A ]\r\n"
				   "exact = Dev A, Dev A Rev 2\r\n"
				   "pattern = DevA, Dev-A\n"
				   "sms = 100 observed\n"
				   "clk_max_mhz = 2000\n"
				   "mem_gb = 40.5 secondary\n"
				   "dram_gbs = 1024\n"
				   "mem_clk_mhz = 1000 derived\n"
				   "bus_bits = 4096\n"
				   "cc = 12.10\n"
				   "  peak.fp32 = 51.2 TFLOPS @2000 datasheet  \n"
				   "peak.fp64 = 800 GFLOPS @2000 unverified\n"
				   "peak.int8 = 500 GOPS @1500 derived\n"
				   "peak.bf16 = 409.6 TFLOPS secondary\n"
				   "confidence = secondary\n"
				   "source = https://example.com/a#x (2026-11)\n"
				   "source = second\n"
				   "[Dev B]\n"
				   "base = dev a\n"
				   "exact = Dev B\n"
				   "match_sms = 50\n"
				   "sms = 50\n"
				   "confidence = derived\n"
				   "peak.fp32 = 25.6 TFLOPS @2000 datasheet\n";
	struct kp_devdb db;
	struct kp_diag d = { 0 };
	assert_int_equal(devdb_parse(&db, text, strlen(text), "t.txt", &d), 0);
	assert_int_equal(db.ndev, 2);
	const struct kp_device *a = &db.dev[0], *b = &db.dev[1];
	assert_string_equal(a->name, "Dev A");
	assert_int_equal(a->line, 2);
	assert_int_equal(a->nexact, 2);
	assert_string_equal(a->exact[1], "Dev A Rev 2");
	assert_int_equal(a->nsubstr, 2);
	assert_string_equal(a->substr[1], "Dev-A");
	assert_int_equal(a->sms, 100);
	assert_string_equal(a->sms_flag, "observed");
	assert_string_equal(a->clk_flag, "secondary");
	assert_close(a->mem_gb, 40.5);
	assert_close(a->mem_bw_byte_per_s, 1024e9);
	assert_string_equal(a->mem_clk_flag, "derived");
	assert_close(a->peak[PREC_FP32].flop_per_s, 51.2e12);
	assert_close(a->peak[PREC_FP64].flop_per_s, 800e9);
	assert_close(a->peak[PREC_INT8].flop_per_s, 500e9);
	assert_int_equal(a->peak[PREC_INT8].clk_ref_mhz, 1500);
	assert_int_equal(a->peak[PREC_BF16].clk_ref_mhz, 0);
	assert_string_equal(a->peak[PREC_BF16].flag, "secondary");
	assert_null(a->peak[PREC_FP16].flag);
	assert_string_equal(a->source, "https://example.com/a#x (2026-11); second");
	assert_int_equal(a->match_sms, 0);
	assert_int_equal(a->cc_major, 12);
	assert_int_equal(a->cc_minor, 10);

	/* base: numbers and source inherited, identity not, flags capped at 'derived' */
	assert_string_equal(b->name, "Dev B");
	assert_int_equal(b->nexact, 1);
	assert_int_equal(b->nsubstr, 0);
	assert_int_equal(b->match_sms, 50);
	assert_int_equal(b->sms, 50);
	assert_string_equal(b->sms_flag, "derived");
	assert_int_equal(b->clk_max_mhz, 2000);
	assert_int_equal(b->cc_major, 12);
	assert_string_equal(b->clk_flag, "derived");
	assert_string_equal(b->source, a->source);
	assert_close(b->peak[PREC_FP32].flop_per_s, 25.6e12);
	assert_string_equal(b->peak[PREC_FP32].flag, "datasheet");
	assert_string_equal(b->peak[PREC_BF16].flag, "derived");
	assert_string_equal(b->peak[PREC_FP64].flag, "unverified");

	const char *how;
	assert_ptr_equal(devdb_match(&db, "dev a rev 2", &how), a);
	assert_string_equal(how, "exact");
	assert_ptr_equal(devdb_match(&db, "Vendor DevA 16GB", &how), a);
	assert_string_equal(how, "pattern 'DevA'");
	assert_ptr_equal(devdb_match_sms(&db, "Dev B", 50, &how), b);
	assert_null(devdb_match_sms(&db, "Dev B", 51, &how));
	assert_ptr_equal(devdb_find(&db, "DEV B"), b);
	devdb_free(&db);
	assert_null(db.dev);
}

static void patterns_are_word_anchored_even_without_a_longer_rival(void **state)
{
	(void)state;
	/* a table with only the short patterns: the traps must not fall into them */
	static const char text[] = "[H20]\npattern = H20\nconfidence = unverified\nsource = s\n"
				   "[L4]\npattern = L4\nconfidence = datasheet\nsource = s\n"
				   "[A10]\npattern = A10\nconfidence = datasheet\nsource = s\n"
				   "[H200]\npattern = H200\nconfidence = datasheet\nsource = s\n";
	struct kp_devdb db;
	struct kp_diag d = { 0 };
	assert_int_equal(devdb_parse(&db, text, strlen(text), "t.txt", &d), 0);
	assert_null(devdb_match(&db, "NVIDIA L40S", NULL));
	assert_null(devdb_match(&db, "NVIDIA L40", NULL));
	assert_null(devdb_match(&db, "NVIDIA A10G", NULL));
	assert_null(devdb_match(&db, "NVIDIA A100-SXM4-40GB", NULL));
	assert_null(devdb_match(&db, "NVIDIA GH200 480GB", NULL));
	assert_null(devdb_match(&db, "NVIDIA XH20", NULL));
	assert_string_equal(devdb_match(&db, "NVIDIA H200", NULL)->name, "H200");
	assert_string_equal(devdb_match(&db, "NVIDIA H20", NULL)->name, "H20");
	assert_string_equal(devdb_match(&db, "H20", NULL)->name, "H20");
	assert_string_equal(devdb_match(&db, "NVIDIA L4", NULL)->name, "L4");
	assert_string_equal(devdb_match(&db, "NVIDIA A10 (vGPU)", NULL)->name, "A10");
	devdb_free(&db);
}

static void patterns_are_tried_longest_first_whatever_the_file_order(void **state)
{
	(void)state;
	static const char text[] = "[Any]\npattern = H100\nconfidence = derived\nsource = s\n"
				   "[Pcie]\npattern = H100 PCIe\nconfidence = derived\nsource = s\n"
				   "[Nvl]\npattern = H100 NVL\nconfidence = derived\nsource = s\n";
	struct kp_devdb db;
	struct kp_diag d = { 0 };
	const char *how;
	assert_int_equal(devdb_parse(&db, text, strlen(text), "t.txt", &d), 0);
	assert_string_equal(devdb_match(&db, "NVIDIA H100 NVL", &how)->name, "Nvl");
	assert_string_equal(how, "pattern 'H100 NVL'");
	assert_string_equal(devdb_match(&db, "NVIDIA H100 PCIe", NULL)->name, "Pcie");
	assert_string_equal(devdb_match(&db, "NVIDIA H100 SXM5", &how)->name, "Any");
	assert_string_equal(how, "pattern 'H100'");
	devdb_free(&db);
}

static char *write_tmp(const char *text)
{
	char *path = strdup("/tmp/kprof-devdb-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void load_file_names_the_file_in_errors(void **state)
{
	(void)state;
	struct kp_devdb db;
	struct kp_diag d = { 0 };
	assert_int_equal(devdb_load_file(&db, "/nonexistent/devices.txt", &d), -1);
	assert_int_equal(d.status, KP_ENV);
	assert_string_equal(d.msg,
			    "error: cannot open '/nonexistent/devices.txt': No such file or directory");

	char *path = write_tmp("[X]\nexact = X\nsize = 1\n");
	char want[256];
	snprintf(want, sizeof(want), "%s:3:1: error: unknown key 'size' in [X]", path);
	assert_int_equal(devdb_load_file(&db, path, &d), -1);
	assert_int_equal(d.status, KP_BADINPUT);
	assert_string_equal(d.msg, want);
	unlink(path);
	free(path);
}

static void load_default_prefers_the_option_then_the_environment(void **state)
{
	(void)state;
	char *path = write_tmp("[Env Dev]\nexact = E\nconfidence = derived\nsource = s\n"
			       "peak.fp32 = 1 TFLOPS derived\n");
	struct kp_devdb db;
	struct kp_diag d = { 0 };

	unsetenv("KPROF_DEVICE_DB");
	assert_int_equal(devdb_load_default(&db, NULL, &d), 0);
	assert_string_equal(db.origin, "built-in");
	devdb_free(&db);

	setenv("KPROF_DEVICE_DB", "", 1);
	assert_int_equal(devdb_load_default(&db, NULL, &d), 0);
	assert_string_equal(db.origin, "built-in");
	devdb_free(&db);

	setenv("KPROF_DEVICE_DB", path, 1);
	assert_int_equal(devdb_load_default(&db, NULL, &d), 0);
	assert_string_equal(db.origin, path);
	assert_int_equal(db.ndev, 1);
	assert_string_equal(devdb_match(&db, "e", NULL)->name, "Env Dev");
	devdb_free(&db);

	assert_int_equal(devdb_load_default(&db, "/nonexistent/x.txt", &d), -1);
	assert_int_equal(d.status, KP_ENV);
	unsetenv("KPROF_DEVICE_DB");
	unlink(path);
	free(path);
}

/* 1 GiB */
#define GIB (1024LL * 1024 * 1024)

static void every_builtin_entry_has_a_compute_capability(void **state)
{
	(void)state;
	for (int i = 0; i < builtin.ndev; i++) {
		const struct kp_device *dv = &builtin.dev[i];
		if (dv->cc_major <= 0)
			fail_msg("[%s] has no cc", dv->name);
	}
	assert_int_equal(entry("AMD Instinct MI300X")->cc_minor, 4);
	assert_int_equal(entry("NVIDIA A100-SXM4-80GB")->cc_major, 8); /* inherited through base */
}

static void generic_names_are_empty_or_amd_radeon_graphics(void **state)
{
	(void)state;
	assert_true(devdb_generic_name(NULL));
	assert_true(devdb_generic_name(""));
	assert_true(devdb_generic_name("  "));
	assert_true(devdb_generic_name("AMD Radeon Graphics"));
	assert_true(devdb_generic_name(" amd radeon graphics "));
	assert_false(devdb_generic_name("AMD Radeon Graphics 780M"));
	assert_false(devdb_generic_name("AMD Instinct MI250X/MI250"));
	assert_false(devdb_generic_name("NVIDIA H100 80GB HBM3"));
}

static void props_match_the_mi250_trace_to_an_mi210_class_entry(void **state)
{
	(void)state;
	/* HTA amd_mi250_rocm62: "AMD Radeon Graphics", numSms 104, cc 9.0, 68702699520 bytes */
	struct kp_devprops q = { 104, 68702699520LL, 9, 0 };
	struct kp_devmatch m;
	assert_int_equal(devdb_match_props(&builtin, &q, &m), 2);
	assert_string_equal(m.cand[0]->name, "AMD Instinct MI210");
	assert_string_equal(m.cand[1]->name, "AMD Instinct MI250 (one GCD)");
	assert_int_equal(m.same_peaks, 1);
	assert_ptr_equal(m.dev, m.cand[0]);
	/* 110 CUs: the MI250X GCD alone */
	q.sms = 110;
	assert_int_equal(devdb_match_props(&builtin, &q, &m), 1);
	assert_string_equal(m.dev->name, "AMD Instinct MI250X (one GCD)");
	/* an MI300X as ROCm 7 reports it (name ""): 304 CUs, cc 9.4, 192 GiB */
	struct kp_devprops mi300x = { 304, 192 * GIB, 9, 4 };
	assert_int_equal(devdb_match_props(&builtin, &mi300x, &m), 1);
	assert_string_equal(m.dev->name, "AMD Instinct MI300X");
	/* the same with 256 GiB is an MI325X */
	mi300x.mem_bytes = 256 * GIB;
	assert_int_equal(devdb_match_props(&builtin, &mi300x, &m), 1);
	assert_string_equal(m.dev->name, "AMD Instinct MI325X");
}

static void props_with_different_peaks_give_no_guess(void **state)
{
	(void)state;
	struct kp_devmatch m;
	/* an H200 (143155 MiB seen): H200, H200 NVL and the 144 GB GH200 all have 132 SMs,
	 * cc 9.0 and 141-144 GB, with different peaks */
	struct kp_devprops h200 = { 132, 143155LL * 1024 * 1024, 9, 0 };
	assert_int_equal(devdb_match_props(&builtin, &h200, &m), 3);
	assert_int_equal(m.same_peaks, 0);
	assert_null(m.dev);
	assert_string_equal(m.cand[0]->name, "NVIDIA H200");
	assert_string_equal(m.cand[1]->name, "NVIDIA H200 NVL");
	assert_string_equal(m.cand[2]->name, "NVIDIA GH200 144G HBM3e");
	/* memory keeps 40 and 80 GB A100s apart; the three 40 GB entries have the same peaks
	 * and bandwidth (a pick), the two 80 GB ones differ in bandwidth (no guess) */
	struct kp_devprops a100 = { 108, 40536LL * 1024 * 1024, 8, 0 };
	assert_int_equal(devdb_match_props(&builtin, &a100, &m), 3);
	assert_int_equal(m.same_peaks, 1);
	assert_string_equal(m.dev->name, "NVIDIA A100-SXM4-40GB");
	a100.mem_bytes = 81920LL * 1024 * 1024;
	assert_int_equal(devdb_match_props(&builtin, &a100, &m), 2);
	assert_null(m.dev);
	/* H100 SXM: one candidate (80 GB; the 94 GB NVL is out of range) */
	struct kp_devprops h100 = { 132, 85017493504LL, 9, 0 };
	assert_int_equal(devdb_match_props(&builtin, &h100, &m), 1);
	assert_string_equal(m.dev->name, "NVIDIA H100 80GB HBM3");
}

static void props_need_sms_memory_and_cc(void **state)
{
	(void)state;
	struct kp_devmatch m;
	struct kp_devprops q = { 104, 68702699520LL, 9, 0 };
	q.sms = 0;
	assert_int_equal(devdb_match_props(&builtin, &q, &m), 0);
	assert_null(m.dev);
	q = (struct kp_devprops){ 104, 0, 9, 0 };
	assert_int_equal(devdb_match_props(&builtin, &q, &m), 0);
	q = (struct kp_devprops){ 104, 68702699520LL, 0, 0 };
	assert_int_equal(devdb_match_props(&builtin, &q, &m), 0);
	/* each property must agree: another cc, CU count or memory size matches nothing */
	q = (struct kp_devprops){ 104, 68702699520LL, 9, 4 };
	assert_int_equal(devdb_match_props(&builtin, &q, &m), 0);
	q = (struct kp_devprops){ 12, 16 * GIB, 11, 0 }; /* an APU named AMD Radeon Graphics */
	assert_int_equal(devdb_match_props(&builtin, &q, &m), 0);
	q = (struct kp_devprops){ 104, 57 * GIB, 9, 0 }; /* below 90% of 64 */
	assert_int_equal(devdb_match_props(&builtin, &q, &m), 0);
	q = (struct kp_devprops){ 104, 66 * GIB, 9, 0 }; /* above 103% of 64 */
	assert_int_equal(devdb_match_props(&builtin, &q, &m), 0);
	assert_int_equal(devdb_match_props(&builtin, NULL, &m), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(builtin_table_parses_and_every_entry_is_sourced),
		cmocka_unit_test(builtin_covers_every_device_of_the_reference),
		cmocka_unit_test(builtin_matches_every_device_name_in_the_shared_traces),
		cmocka_unit_test(a100_pg509_200_is_the_a100_40gb_class_flagged_unverified),
		cmocka_unit_test(match_keeps_l40s_l40_and_l4_apart),
		cmocka_unit_test(match_takes_h20_only_as_a_whole_word),
		cmocka_unit_test(match_puts_gh200_before_h200_and_gb200_before_b200),
		cmocka_unit_test(match_keeps_a10g_a100_and_a10_apart),
		cmocka_unit_test(match_sends_h100_variants_to_their_form_factor),
		cmocka_unit_test(match_ignores_case_and_surrounding_blanks),
		cmocka_unit_test(match_leaves_other_geforce_cards_alone),
		cmocka_unit_test(match_sms_tells_mi250x_from_mi250),
		cmocka_unit_test(peak_scales_with_the_clock_up_to_the_clock_it_assumes),
		cmocka_unit_test(peak_is_zero_when_unknown_and_fixed_when_capped),
		cmocka_unit_test(peaks_are_the_dense_datasheet_figures),
		cmocka_unit_test(bandwidth_follows_only_a_lower_memory_clock),
		cmocka_unit_test(parse_reports_unknown_keys_with_file_and_line),
		cmocka_unit_test(parse_rejects_control_bytes),
		cmocka_unit_test(parse_rejects_bad_values),
		cmocka_unit_test(parse_puts_each_scalar_and_flag_in_its_field),
		cmocka_unit_test(parse_checks_each_entry_as_a_whole),
		cmocka_unit_test(parse_refuses_values_outside_physical_ranges),
		cmocka_unit_test(candidates_are_the_entries_a_typed_name_could_mean),
		cmocka_unit_test(parse_reads_a_stanza_with_every_key),
		cmocka_unit_test(patterns_are_word_anchored_even_without_a_longer_rival),
		cmocka_unit_test(patterns_are_tried_longest_first_whatever_the_file_order),
		cmocka_unit_test(load_file_names_the_file_in_errors),
		cmocka_unit_test(load_default_prefers_the_option_then_the_environment),
		cmocka_unit_test(every_builtin_entry_has_a_compute_capability),
		cmocka_unit_test(generic_names_are_empty_or_amd_radeon_graphics),
		cmocka_unit_test(props_match_the_mi250_trace_to_an_mi210_class_entry),
		cmocka_unit_test(props_with_different_peaks_give_no_guess),
		cmocka_unit_test(props_need_sms_memory_and_cc),
	};
	return cmocka_run_group_tests(tests, load_builtin, free_builtin);
}
