/*
 * test-output.c — -o FILE: stdout for none or '-', a file otherwise, write errors reported.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kprof/output.h"

static void no_path_and_dash_are_stdout(void **state)
{
	(void)state;
	struct kp_diag d = { 0 };
	assert_ptr_equal(output_open(NULL, &d), stdout);
	assert_ptr_equal(output_open("-", &d), stdout);
	assert_int_equal(output_close(stdout, "-", &d), 0);
	assert_int_equal(d.status, 0);
}

static void a_file_is_written_and_closed(void **state)
{
	(void)state;
	char path[] = "/tmp/kprof-test-output-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct kp_diag d = { 0 };
	FILE *fp = output_open(path, &d);
	assert_non_null(fp);
	fputs("time_ns,name\n", fp);
	assert_int_equal(output_close(fp, path, &d), 0);
	char buf[64] = { 0 };
	FILE *in = fopen(path, "r");
	assert_non_null(in);
	assert_non_null(fgets(buf, sizeof(buf), in));
	fclose(in);
	assert_string_equal(buf, "time_ns,name\n");
	unlink(path);
}

static void an_unwritable_path_is_an_environment_error(void **state)
{
	(void)state;
	struct kp_diag d = { 0 };
	assert_null(output_open("/nonexistent-dir/out.json", &d));
	assert_int_equal(d.status, KP_ENV);
	assert_string_equal(
		d.msg,
		"error: cannot write '/nonexistent-dir/out.json': No such file or directory");
}

/* a full device: the data is lost at fclose, and that is reported, not silently dropped */
static void a_write_error_at_close_is_reported(void **state)
{
	(void)state;
	if (access("/dev/full", W_OK) != 0)
		skip();
	struct kp_diag d = { 0 };
	FILE *fp = output_open("/dev/full", &d);
	assert_non_null(fp);
	fputs("x\n", fp);
	assert_int_equal(output_close(fp, "/dev/full", &d), -1);
	assert_int_equal(d.status, KP_ENV);
	assert_non_null(strstr(d.msg, "error: cannot write '/dev/full': "));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_path_and_dash_are_stdout),
		cmocka_unit_test(a_file_is_written_and_closed),
		cmocka_unit_test(an_unwritable_path_is_an_environment_error),
		cmocka_unit_test(a_write_error_at_close_is_reported),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
