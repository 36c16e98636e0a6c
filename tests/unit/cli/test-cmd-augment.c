/*
 * test-cmd-augment.c — kprof augment's steps: options, path checks, device table, load, write;
 * each refusal with its message and status, and the augmented file when all pass.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kprof/cmd.h"
#include "kprof/diag.h"

static const char trace[] =
	"{\"traceEvents\": [\n"
	"  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k1\", \"pid\": 0, \"tid\": 7, \"ts\": 1, "
	"\"dur\": 2, \"args\": {\"stream\": 7}}\n"
	"]}\n";

static char dir[] = "/tmp/kprof-test-cmd-augment-XXXXXX";
static char err[4096], out[4096];

static const char *path_of(const char *name)
{
	static char buf[4][256];
	static int next;
	char *p = buf[next++ % 4];
	snprintf(p, sizeof(buf[0]), "%s/%s", dir, name);
	return p;
}

static void put_file(const char *name, const char *text)
{
	FILE *f = fopen(path_of(name), "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* cmd_augment over a NULL-ended argument list; stderr into err[], stdout into out[] */
static int augment(const char *arg, ...)
{
	char *argv[16];
	int argc = 0;
	argv[argc++] = "augment";
	va_list ap;
	va_start(ap, arg);
	for (const char *a = arg; a && argc < 15; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	FILE *saved_err = stderr, *saved_out = stdout;
	memset(err, 0, sizeof(err));
	memset(out, 0, sizeof(out));
	stderr = fmemopen(err, sizeof(err) - 1, "w");
	stdout = fmemopen(out, sizeof(out) - 1, "w");
	int rc = cmd_augment(argc, argv);
	fclose(stderr);
	fclose(stdout);
	stderr = saved_err;
	stdout = saved_out;
	return rc;
}

static int setup(void **state)
{
	(void)state;
	unsetenv("KPROF_DEVICE_DB");
	if (!mkdtemp(dir))
		return -1;
	put_file("t.json", trace);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	const char *names[] = { "t.json", "out.json", "db.txt", "none.json" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlink(path_of(names[i]));
	return rmdir(dir);
}

static void options_are_checked_first(void **state)
{
	(void)state;
	assert_int_equal(augment("-h", NULL), KP_OK);
	assert_true(!strncmp(out, "usage: kprof augment ", 21));
	assert_int_equal(augment("--x", NULL), KP_USAGE);
	assert_string_equal(err,
			    "kprof: error: unknown option '--x'\nkprof: see 'kprof augment -h'\n");
	assert_int_equal(augment(path_of("t.json"), path_of("t.json"), "-o", "o", NULL), KP_USAGE);
	assert_true(
		!strncmp(err, "kprof: error: augment takes one trace\nusage: kprof augment ", 58));
	assert_int_equal(augment(path_of("t.json"), NULL), KP_USAGE);
	assert_true(
		!strncmp(err, "kprof: error: no output file (-o FILE)\nusage: kprof augment ", 59));
	assert_null(strstr(out, "usage"));
}

static void paths_are_checked_before_reading(void **state)
{
	(void)state;
	const char *dash =
		"kprof: error: augment reads the trace twice and writes a file: '-' is not allowed\n";
	assert_int_equal(augment("-", "-o", path_of("out.json"), NULL), KP_USAGE);
	assert_string_equal(err, dash);
	assert_int_equal(augment(path_of("t.json"), "-o", "-", NULL), KP_USAGE);
	assert_string_equal(err, dash);
	/* the same file under another name */
	char other[300];
	snprintf(other, sizeof(other), "%s/./t.json", dir);
	assert_int_equal(augment(path_of("t.json"), "-o", other, NULL), KP_USAGE);
	char want[400];
	snprintf(want, sizeof(want),
		 "kprof: error: '%s' is an input: augment would overwrite a file it reads\n",
		 other);
	assert_string_equal(err, want);
	/* a bad path is not refused here: the device table is read first, then the trace */
	put_file("db.txt", "this is not a device table\n");
	assert_int_equal(augment("--device-db", path_of("db.txt"), path_of("none.json"), "-o",
				 path_of("out.json"), NULL),
			 KP_BADINPUT);
	assert_true(!strncmp(err, "kprof: ", 7) && strstr(err, "db.txt"));
	assert_int_equal(access(path_of("out.json"), F_OK), -1);
	/* ... but after the path checks */
	assert_int_equal(augment("--device-db", path_of("db.txt"), "-", "-o", path_of("out.json"),
				 NULL),
			 KP_USAGE);
	assert_string_equal(err, dash);
}

static void a_trace_that_cannot_be_read_writes_nothing(void **state)
{
	(void)state;
	int rc = augment(path_of("none.json"), "-o", path_of("out.json"), NULL);
	assert_true(rc == KP_ENV || rc == KP_BADINPUT);
	assert_true(!strncmp(err, "kprof: ", 7) && strstr(err, "none.json"));
	assert_int_equal(access(path_of("out.json"), F_OK), -1);
	put_file("none.json", "{\"traceEvents\": [");
	assert_int_equal(augment("--strict", path_of("none.json"), "-o", path_of("out.json"), NULL),
			 KP_BADINPUT);
	assert_int_equal(access(path_of("out.json"), F_OK), -1);
}

static void a_good_trace_is_written_with_its_costs(void **state)
{
	(void)state;
	assert_int_equal(augment(path_of("t.json"), "-o", path_of("out.json"), NULL), KP_OK);
	FILE *f = fopen(path_of("out.json"), "r");
	assert_non_null(f);
	char buf[4096] = "";
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	assert_true(n > sizeof(trace) - 1);
	assert_non_null(strstr(buf, "\"name\": \"k1\""));
	assert_non_null(strstr(buf, "\"kprof"));
	assert_string_equal(out, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(options_are_checked_first),
		cmocka_unit_test(paths_are_checked_before_reading),
		cmocka_unit_test(a_trace_that_cannot_be_read_writes_nothing),
		cmocka_unit_test(a_good_trace_is_written_with_its_costs),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
