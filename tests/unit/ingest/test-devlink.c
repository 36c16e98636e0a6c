/*
 * test-devlink.c — device links: host_link / peer_gbs in the device table and the peak each
 * memory path is held to (devdb_path_bw, kernrole_mempath, analyze's %BW per path).
 */
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

#include "kprof/analyze.h"
#include "kprof/devdb.h"
#include "kprof/diag.h"
#include "kprof/kernrole.h"
#include "kprof/link.h"
#include "kprof/trace.h"

static struct kp_devdb builtin;

#define assert_close(a, b) assert_true(fabs((a) - (b)) <= 1e-6 * fabs(b))

static const struct kp_device *entry(const char *canonical)
{
	const struct kp_device *dv = devdb_find(&builtin, canonical);
	assert_non_null(dv);
	return dv;
}

static void builtin_links_follow_the_datasheets(void **state)
{
	(void)state;
	/* PCIe per direction: 16 lanes x 32 GT/s x 128/130 / 8 = 63.0 GB/s (gen 5), 31.5 (gen 4) */
	const struct kp_device *h100 = entry("NVIDIA H100 80GB HBM3");
	assert_string_equal(h100->host_link, "PCIe 5.0 x16");
	assert_close(h100->host_bw_byte_per_s, 16 * 32e9 * 128 / 130 / 8);
	assert_close(h100->peer_bw_byte_per_s, 450e9);
	assert_string_equal(h100->host_flag, "datasheet");
	assert_close(entry("NVIDIA A100-SXM4-40GB")->host_bw_byte_per_s, 16 * 16e9 * 128 / 130 / 8);
	/* inherited: the A100 PG509 board takes the SXM4 links */
	assert_string_equal(entry("NVIDIA A100-PG509-200")->host_link, "PCIe 4.0 x16");
	assert_close(entry("Tesla T4")->host_bw_byte_per_s, 16 * 8e9 * 128 / 130 / 8);
	/* Grace Hopper: the host link is NVLink-C2C, 900 GB/s both ways */
	const struct kp_device *gh = entry("NVIDIA GH200 480GB");
	assert_string_equal(gh->host_link, "NVLink-C2C");
	assert_close(gh->host_bw_byte_per_s, 450e9);
	assert_string_equal(entry("NVIDIA GH200 144G HBM3e")->host_link, "NVLink-C2C");
	assert_string_equal(entry("NVIDIA GB200")->host_link, "NVLink-C2C");
	/* V100 PCIe inherits from the SXM2 entry but has no NVLink */
	assert_true(entry("Tesla V100-SXM2-16GB")->peer_bw_byte_per_s > 0);
	assert_true(entry("Tesla V100-PCIE-16GB")->peer_bw_byte_per_s == 0);
	/* an APU has no host link; the MI250 GCDs share their OAM's PCIe 4.0 x16 */
	assert_null(entry("AMD Instinct MI300A")->host_link);
	assert_string_equal(entry("AMD Instinct MI250 (one GCD)")->host_link, "PCIe 4.0 x16");
	assert_non_null(entry("AMD Instinct MI210")->host_link);
	/* every NVIDIA entry knows its host link */
	for (int i = 0; i < builtin.ndev; i++)
		if (!strncmp(builtin.dev[i].name, "NVIDIA", 6) ||
		    !strncmp(builtin.dev[i].name, "Tesla", 5))
			assert_non_null(builtin.dev[i].host_link);
}

static void each_path_has_its_peak(void **state)
{
	(void)state;
	const struct kp_device *h100 = entry("NVIDIA H100 80GB HBM3");
	assert_close(devdb_path_bw(h100, MEMPATH_DRAM), 3350e9);
	assert_close(devdb_path_bw(h100, MEMPATH_DTOD), 3350e9 / 2);
	assert_close(devdb_path_bw(h100, MEMPATH_HOST), h100->host_bw_byte_per_s);
	assert_close(devdb_path_bw(h100, MEMPATH_PEER), 450e9);
	assert_true(devdb_path_bw(h100, MEMPATH_UNKNOWN) == 0);
	/* no peer link: peer copies cross PCIe */
	const struct kp_device *l4 = entry("NVIDIA L4");
	assert_close(devdb_path_bw(l4, MEMPATH_PEER), l4->host_bw_byte_per_s);
	assert_true(devdb_path_bw(entry("AMD Instinct MI300A"), MEMPATH_HOST) == 0);
	assert_true(devdb_path_bw(NULL, MEMPATH_DRAM) == 0);

	assert_int_equal(kernrole_mempath("Memcpy HtoD (Pinned -> Device)", 1), MEMPATH_HOST);
	assert_int_equal(kernrole_mempath("Memcpy DtoH (Device -> Pageable)", 1), MEMPATH_HOST);
	assert_int_equal(kernrole_mempath("Memcpy DtoD (Device -> Device)", 1), MEMPATH_DTOD);
	assert_int_equal(kernrole_mempath("Memcpy PtoP (Device -> Device)", 1), MEMPATH_PEER);
	assert_int_equal(kernrole_mempath("Memcpy HtoH (Pinned -> Pinned)", 1), MEMPATH_UNKNOWN);
	assert_int_equal(kernrole_mempath("Memcpy HtoDx", 1), MEMPATH_UNKNOWN);
	assert_int_equal(kernrole_mempath("Memset (Device)", 0), MEMPATH_DRAM);
	assert_int_equal(kernrole_mempath("nvjet_sm90", 0), MEMPATH_DRAM);
}

static void parse_fails(const char *text, const char *msg)
{
	struct kp_devdb db;
	struct kp_diag d = { 0 };
	assert_int_equal(devdb_parse(&db, text, strlen(text), "my.txt", &d), -1);
	if (strcmp(d.msg, msg))
		fprintf(stderr, "got: %s\n", d.msg);
	assert_string_equal(d.msg, msg);
	devdb_free(&db);
}

static void parse_reads_and_checks_links(void **state)
{
	(void)state;
	static const char text[] =
		"[A]\nexact = A\nhost_link = PCIe 6.0 x8 derived\npeer_gbs = 100\n"
		"confidence = secondary\nsource = s\n"
		"[B]\nbase = A\nexact = B\nhost_link = NVLink-C2C 200\nsource = t\n"
		"[C]\nbase = A\nexact = C\nhost_link = none\nsource = u\n";
	struct kp_devdb db;
	struct kp_diag d = { 0 };
	assert_int_equal(devdb_parse(&db, text, strlen(text), "t.txt", &d), 0);
	const struct kp_device *a = devdb_find(&db, "A"), *b = devdb_find(&db, "B");
	assert_string_equal(a->host_link, "PCIe 6.0 x8");
	assert_close(a->host_bw_byte_per_s, 8 * 64e9 * 242 / 256 / 8);
	assert_string_equal(a->host_flag, "derived");
	assert_close(a->peer_bw_byte_per_s, 100e9);
	assert_string_equal(a->peer_flag, "secondary");
	assert_string_equal(b->host_link, "NVLink-C2C");
	assert_close(b->host_bw_byte_per_s, 200e9);
	assert_close(b->peer_bw_byte_per_s, 100e9);
	assert_null(devdb_find(&db, "C")->host_link);
	devdb_free(&db);

	parse_fails("[A]\nexact = A\nhost_link = PCIe 7.0 x16\n",
		    "my.txt:3:13: error: bad PCIe link 'PCIe 7.0 x16' for 'host_link' in [A] "
		    "(expected 'PCIe 5.0 x16')");
	parse_fails("[A]\nexact = A\nhost_link = PCIe 5.0 16\n",
		    "my.txt:3:13: error: bad PCIe link 'PCIe 5.0 16' for 'host_link' in [A] "
		    "(expected 'PCIe 5.0 x16')");
	parse_fails("[A]\nexact = A\nhost_link = USB 3\n",
		    "my.txt:3:13: error: expected 'PCIe GEN xLANES [FLAG]', 'NVLink-C2C GBS [FLAG]' "
		    "or 'none' for 'host_link' in [A]");
	parse_fails("[A]\nexact = A\nhost_link = PCIe 4.0 x16 guessed\n",
		    "my.txt:3:26: error: unknown flag 'guessed' in [A] (valid: datasheet, secondary, "
		    "derived, unverified, observed)");
	parse_fails("[A]\nexact = A\nhost_link = NVLink-C2C 0\n",
		    "my.txt:3:24: error: bad bandwidth '0' for 'host_link' in [A] (GB/s per direction)");
	parse_fails("[A]\nexact = A\npeer_gbs = fast\n",
		    "my.txt:3:12: error: bad number 'fast' for 'peer_gbs' in [A]");
}

/* One H100 trace with a copy on each path (unlinked GPU events; bytes as Kineto records them). */
static const char trace_text[] =
	"{\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA H100 80GB HBM3\",\"numSms\":132}],"
	"\"traceEvents\":["
	"{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pinned -> Device)\",\"pid\":0,\"tid\":7,"
	"\"ts\":0,\"dur\":2000,\"args\":{\"bytes\":67108864}},"
	"{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoD (Device -> Device)\",\"pid\":0,\"tid\":7,"
	"\"ts\":3000,\"dur\":800,\"args\":{\"bytes\":1073741824}},"
	"{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy PtoP (Device -> Device)\",\"pid\":0,\"tid\":7,"
	"\"ts\":4000,\"dur\":1000,\"args\":{\"bytes\":268435456}},"
	"{\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":\"Memset (Device)\",\"pid\":0,\"tid\":7,"
	"\"ts\":6000,\"dur\":400,\"args\":{\"bytes\":1073741824}},"
	"{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoH (Pinned -> Pinned)\",\"pid\":0,\"tid\":7,"
	"\"ts\":7000,\"dur\":2,\"args\":{\"bytes\":4096}}"
	"]}";

static char path[] = "/tmp/kprof-test-devlink-XXXXXX";

static const struct kp_row *row(const struct kp_report *r, const char *name)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (!strcmp(r->rows[i].name, name))
			return &r->rows[i];
	fail_msg("no row %s", name);
	return NULL;
}

static void copies_are_held_to_the_peak_of_their_path(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_report r;
	struct kp_diag d = { 0 };
	struct kp_load_opts lo = { 0 };
	assert_int_equal(trace_load(&t, path, &lo, &d), 0);
	link_trace(&t);
	struct kp_analyze_opts o = { .group = GROUP_KERNEL, .db = &builtin };
	assert_int_equal(analyze_run(&t, &o, &r), 0);
	const double pcie5 = 16 * 32e9 * 128 / 130 / 8;
	assert_close(row(&r, "Memcpy HtoD (Pinned -> Device)")->pct_peak_bw,
		     100.0 * 67108864 / 2000e-6 / pcie5);
	/* a device-to-device copy reads and writes each byte: half the DRAM peak */
	assert_close(row(&r, "Memcpy DtoD (Device -> Device)")->pct_peak_bw,
		     100.0 * 1073741824 / 800e-6 / (3350e9 / 2));
	assert_close(row(&r, "Memcpy PtoP (Device -> Device)")->pct_peak_bw,
		     100.0 * 268435456 / 1000e-6 / 450e9);
	assert_close(row(&r, "Memset (Device)")->pct_peak_bw, 100.0 * 1073741824 / 400e-6 / 3350e9);
	assert_true(row(&r, "Memcpy HtoH (Pinned -> Pinned)")->pct_peak_bw < 0);
	assert_true(row(&r, "Memcpy HtoH (Pinned -> Pinned)")->bytes_per_s > 0);
	assert_true(r.mempaths & (1u << MEMPATH_HOST));
	assert_true(r.mempaths & (1u << MEMPATH_PEER));
	analyze_free(&r);
	trace_free(&t);
}

static int setup(void **state)
{
	(void)state;
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "w");
	fputs(trace_text, f);
	fclose(f);
	struct kp_diag d = { 0 };
	if (devdb_load_builtin(&builtin, &d) < 0) {
		fprintf(stderr, "%s\n", d.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	devdb_free(&builtin);
	return unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(builtin_links_follow_the_datasheets),
		cmocka_unit_test(each_path_has_its_peak),
		cmocka_unit_test(parse_reads_and_checks_links),
		cmocka_unit_test(copies_are_held_to_the_peak_of_their_path),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
