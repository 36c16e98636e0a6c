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
#include <sys/stat.h>
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
	assert_int_equal(augment_write(&t, ev, in_path, out_path, NULL, &d), 0);
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
	assert_int_equal(augment_write(&t, &ev, in_path, out_path, NULL, &d), -1);
	assert_int_equal(d.status, KP_BADINPUT);
	assert_non_null(strstr(d.msg, "is not where the first pass found it"));
	unlink(out_path);
	unlink(in_path);
}

/*
 * augment_write() over @in (truncated when @trunc) with one GPU event, the first "{\"ph\"";
 * returns its status, the output (malloc'ed, NULL when no file was left) and *cut.
 */
static int run_text(const char *in, int trunc, char **out, int64_t *cut, struct kp_diag *d)
{
	char in_path[] = "/tmp/kprof-augment-XXXXXX";
	int fd = mkstemp(in_path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, in, strlen(in)), (ssize_t)strlen(in));
	close(fd);
	char out_path[64];
	snprintf(out_path, sizeof(out_path), "%s.out", in_path);
	struct kp_op op = { .name = "aten::mm" };
	struct kp_gpu g = { .off = strstr(in, "{\"ph\"") - in,
			    .ts_ns = 1000,
			    .dur_ns = 2000,
			    .op = 0,
			    .name = "k",
			    .kind = GPU_KERNEL };
	struct kp_event_cost ev = { .flops = 4e9, .bytes = -1, .peak_flops = 1e15 };
	struct kp_trace t = {
		.display = "t", .ops = &op, .nops = 1, .gpu = &g, .ngpu = 1, .truncated = trunc
	};
	memset(d, 0, sizeof(*d));
	int rc = augment_write(&t, &ev, in_path, out_path, cut, d);
	*out = NULL;
	if (access(out_path, F_OK) == 0) {
		size_t n;
		*out = read_file(out_path, &n);
	}
	unlink(out_path);
	unlink(in_path);
	return rc;
}

static const char members_text[] =
	"\"kprof op\": \"aten::mm\", \"kprof flops\": 4000000000, \"kprof bytes\": null, "
	"\"kprof TFLOP/s\": 2000, \"kprof % peak\": 200, \"kprof bound\": null}}";

/*
 * A cut trace ends after its last complete event (or top-level member), what was open there
 * closed; an event cut short is left out whole, even in a bare array where its members sit
 * one level from the top.
 */
static void a_truncated_trace_ends_after_its_last_complete_value(void **state)
{
	(void)state;
	char *out, want[1024];
	int64_t cut;
	struct kp_diag d;
	const char *in = "{\"schemaVersion\": 1, \"traceEvents\": [\n"
			 "{\"ph\": \"X\", \"name\": \"k\", \"args\": {}},\n"
			 "{\"ph\": \"X\", \"name\": \"k2\", \"args\": {\"a\": [1, 2";
	assert_int_equal(run_text(in, 1, &out, &cut, &d), 0);
	const char *end = strstr(in, "{}}") + 3;
	assert_int_equal(cut, end - in);
	snprintf(want, sizeof(want), "%.*s%s", (int)(end - in - 2), in, members_text);
	assert_true(!strncmp(out, want, strlen(want)));
	/* the counters follow the event, then the closers */
	assert_non_null(strstr(out, "{\"ph\": \"C\", \"name\": \"kprof GB/s\""));
	assert_string_equal(out + strlen(out) - 5, "}\n]}\n");
	assert_null(strstr(out, "k2"));
	free(out);

	/* a bare array: the cut event's members are at depth 2, inside an object: no cut there */
	in = "[{\"ph\": \"X\", \"name\": \"k\"}, {\"ph\": \"X\", \"name\": \"k2\", \"ts\": 3";
	assert_int_equal(run_text(in, 1, &out, &cut, &d), 0);
	assert_int_equal(cut, strchr(in, '}') + 1 - in);
	assert_true(!strncmp(out, "[{\"ph\": \"X\", \"name\": \"k\", \"args\": {\"kprof op\"", 44));
	assert_string_equal(out + strlen(out) - 4, "}\n]\n");
	assert_null(strstr(out, "k2"));
	free(out);

	/* cut in a member after traceEvents: the complete members are kept */
	in = "{\"traceEvents\": [{\"ph\": \"X\", \"args\": {}}], \"x\": 2, \"deviceProperties\": [{\"id\"";
	assert_int_equal(run_text(in, 1, &out, &cut, &d), 0);
	assert_int_equal(cut, strstr(in, ", \"deviceP") - in);
	assert_string_equal(out + strlen(out) - 12, "], \"x\": 2\n}\n");
	free(out);

	/* the same cut when the first pass saw a whole file: the file changed, nothing written */
	assert_int_equal(run_text(in, 0, &out, &cut, &d), -1);
	assert_int_equal(d.status, KP_BADINPUT);
	assert_non_null(strstr(d.msg, "error: the input ended early (did the file change?)"));
	assert_null(out);
	assert_int_equal(cut, -1);
}

/* A failed run leaves no output and no temporary file; an earlier output stays as it was. */
static void a_failed_run_leaves_nothing_half_written(void **state)
{
	(void)state;
	char dir[] = "/tmp/kprof-augment-dir-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char in_path[128], out_path[128];
	snprintf(in_path, sizeof(in_path), "%s/in.json", dir);
	snprintf(out_path, sizeof(out_path), "%s/out.json", dir);
	/* the event is found, then the input ends inside the document: the file changed */
	FILE *f = fopen(in_path, "w");
	fputs("{\"traceEvents\": [{\"ph\": \"X\", \"args\": {}}, {\"ph\"", f);
	fclose(f);
	f = fopen(out_path, "w");
	fputs("earlier output\n", f);
	fclose(f);
	struct kp_op op = { .name = "aten::mm" };
	struct kp_gpu g = { .off = 17, .op = 0, .dur_ns = 1, .name = "k" };
	struct kp_event_cost ev = { .flops = -1, .bytes = -1 };
	struct kp_trace t = { .display = "t", .ops = &op, .nops = 1, .gpu = &g, .ngpu = 1 };
	struct kp_diag d = { 0 };
	int64_t cut = 7;
	assert_int_equal(augment_write(&t, &ev, in_path, out_path, &cut, &d), -1);
	assert_non_null(strstr(d.msg, "the input ended early"));
	assert_int_equal(cut, -1);
	size_t n;
	char *out = read_file(out_path, &n);
	assert_string_equal(out, "earlier output\n");
	free(out);
	/* only the two files: no temporary one left */
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "test $(ls -A %s | wc -l) = 2", dir);
	assert_int_equal(system(cmd), 0);
	/* a whole file replaces the earlier output; nothing else is left beside it */
	f = fopen(in_path, "w");
	fputs("{\"traceEvents\": [{\"ph\": \"X\", \"args\": {}}]}", f);
	fclose(f);
	assert_int_equal(augment_write(&t, &ev, in_path, out_path, &cut, &d), 0);
	assert_int_equal(cut, -1);
	out = read_file(out_path, &n);
	assert_true(!strncmp(out, "{\"traceEvents\": [{\"ph\": \"X\", \"args\": {\"kprof op\"", 45));
	free(out);
	assert_int_equal(system(cmd), 0);
	/* an output that is not a regular file is written, not replaced */
	assert_int_equal(augment_write(&t, &ev, in_path, "/dev/null", &cut, &d), 0);
	struct stat st;
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	unlink(in_path);
	unlink(out_path);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(inserts_into_args_and_keeps_every_other_byte),
		cmocka_unit_test(writes_gzip_for_a_gz_name),
		cmocka_unit_test(a_changed_file_is_an_error),
		cmocka_unit_test(a_truncated_trace_ends_after_its_last_complete_value),
		cmocka_unit_test(a_failed_run_leaves_nothing_half_written),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
