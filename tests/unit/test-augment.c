/*
 * test-augment.c — augment_write() on hand-written JSON: args with members, empty args, no
 * args, braces and "args" inside strings, gzip output; everything else byte for byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "kprof/augment.h"

static const char text[] =
	"{\"traceEvents\": [\n"
	"  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k{1}\", \"ts\": 1, \"dur\": 2, \"args\": {\"note\": \"\\\"args\\\": {\", \"n\": [1, {\"x\": 2}]}},\n"
	"  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k2\", \"ts\": 4, \"dur\": 2, \"args\": { }},\n"
	"  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k3\", \"args\" : 5, \"ts\": 7, \"dur\": 1},\n"
	"  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k4\", \"ts\": 9, \"dur\": 1}\n"
	"]}\n";

static char *read_file(const char *path, size_t *n)
{
	gzFile gz = gzopen(path, "rb");
	assert_non_null(gz);
	char *buf = calloc(1, 1 << 16);
	int k = gzread(gz, buf, (1 << 16) - 1);
	gzclose(gz);
	assert_true(k >= 0);
	*n = (size_t)k;
	return buf;
}

/* @out with every "<ins>" of the members removed must be @text */
static void every_case(const char *suffix)
{
	char in_path[] = "/tmp/kprof-augment-XXXXXX";
	int fd = mkstemp(in_path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	char out_path[64];
	snprintf(out_path, sizeof(out_path), "%s.out%s", in_path, suffix);

	struct kp_op op = { .name = "aten::mm" };
	struct kp_gpu g[4];
	const char *p = text;
	for (int i = 0; i < 4; i++) {
		p = strstr(p + 1, "{\"ph\"");
		g[i] = (struct kp_gpu){ .off = p - text,
					.ts_ns = 1000 + i * 3000,
					.dur_ns = 2000,
					/* k4 has no args: kprof adds them */ .op = 0,
					.name = "k",
					.kind = GPU_KERNEL };
	}
	struct kp_event_cost ev[4] = {
		{ .flops = 4e9, .bytes = 1e6, .peak_flops = 1e15, .peak_bw = 1e12, .prec = "bf16" },
		{ .flops = -1, .bytes = 2e6, .peak_bw = 1e12 },
		{ .flops = -1, .bytes = -1 },
		{ .flops = -1, .bytes = -1 },
	};
	struct kp_trace t = { .display = "t", .ops = &op, .nops = 1, .gpu = g, .ngpu = 4 };
	struct kp_diag d = { 0 };
	assert_int_equal(augment_write(&t, ev, in_path, out_path, &d), 0);
	size_t n;
	char *out = read_file(out_path, &n);
	/* args with members: a comma, then kprof's; 4e9 FLOP in 2 us = 2 PFLOP/s, 200% of peak */
	assert_non_null(
		strstr(out,
		       "\"n\": [1, {\"x\": 2}], \"kprof op\": \"aten::mm\", \"kprof flops\": 4000000000, "
		       "\"kprof bytes\": 1000000, \"kprof TFLOP/s\": 2000, \"kprof % peak\": 200, "
		       "\"kprof bound\": \"compute\"}}"));
	/* empty args: no comma; no FLOPs: % of the path's bandwidth (2e6 B in 2 us = 1 TB/s) */
	assert_non_null(
		strstr(out,
		       "\"args\": { \"kprof op\": \"aten::mm\", \"kprof flops\": null, \"kprof bytes\": 2000000, "
		       "\"kprof TFLOP/s\": null, \"kprof % peak\": 100, \"kprof bound\": null}}"));
	/* "args" not an object: left alone, no second "args" */
	assert_non_null(strstr(out, "\"args\" : 5, \"ts\": 7, \"dur\": 1},\n"));
	/* no args: an args object is added; the counters follow the last GPU event */
	assert_non_null(strstr(
		out,
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k4\", \"ts\": 9, \"dur\": 1, "
		"\"args\": {\"kprof op\": \"aten::mm\", \"kprof flops\": null, \"kprof bytes\": null, "
		"\"kprof TFLOP/s\": null, \"kprof % peak\": null, \"kprof bound\": null}},\n"
		"{\"ph\": \"C\", \"name\": \"kprof TFLOP/s\", \"pid\": 0, \"ts\": 1.000, \"args\": {\"TFLOP/s\": 2000}}"));
	assert_non_null(strstr(out, "\"name\": \"kprof GB/s\""));
	assert_non_null(strstr(out, "\n]}\n"));
	assert_null(strstr(
		out,
		"k{1}\", \"ts\": 1, \"dur\": 2, \"args\": {\"note\": \"\\\"args\\\": {\", \"kprof"));
	free(out);
	unlink(out_path);
	unlink(in_path);
}

static void inserts_into_args_and_keeps_every_other_byte(void **state)
{
	(void)state;
	every_case("");
}

static void writes_gzip_for_a_gz_name(void **state)
{
	(void)state;
	every_case(".gz");
}

static void a_changed_file_is_an_error(void **state)
{
	(void)state;
	char in_path[] = "/tmp/kprof-augment-XXXXXX";
	int fd = mkstemp(in_path);
	assert_int_equal(write(fd, "[{}]", 4), 4);
	close(fd);
	struct kp_op op = { .name = "aten::mm" };
	struct kp_gpu g = { .off = 2, .op = 0, .dur_ns = 1, .name = "k" };
	struct kp_event_cost ev = { .flops = -1, .bytes = -1 };
	struct kp_trace t = { .display = "t", .ops = &op, .nops = 1, .gpu = &g, .ngpu = 1 };
	struct kp_diag d = { 0 };
	char out_path[64];
	snprintf(out_path, sizeof(out_path), "%s.out", in_path);
	assert_int_equal(augment_write(&t, &ev, in_path, out_path, &d), -1);
	assert_int_equal(d.status, KP_BADINPUT);
	assert_non_null(strstr(d.msg, "is not where the first pass found it"));
	unlink(out_path);
	unlink(in_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(inserts_into_args_and_keeps_every_other_byte),
		cmocka_unit_test(writes_gzip_for_a_gz_name),
		cmocka_unit_test(a_changed_file_is_an_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
