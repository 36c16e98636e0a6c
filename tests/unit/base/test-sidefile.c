/*
 * test-sidefile.c — small side files read whole (sidefile.c): regular files up to a cap,
 * never a FIFO, a device or a directory (issue 23 item 16: --device-db /dev/zero grew
 * without bound, a FIFO hung).
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

#include <cmocka.h>

#include "kprof/sidefile.h"

static char tmpdir[] = "/tmp/kprof-test-sidefile-XXXXXX";

static void path_of(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s/%s", tmpdir, name);
}

static void write_bytes(const char *path, size_t n)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		fputc('a' + (int)(i % 26), f);
	fclose(f);
}

static void a_file_within_the_cap_is_read_whole(void **state)
{
	(void)state;
	char p[600];
	path_of(p, sizeof(p), "ok.txt");
	write_bytes(p, 100);
	size_t len = 0;
	struct kp_diag d = { 0 };
	char *s = sidefile_read(p, "device table", 100, &len, &d);
	assert_non_null(s);
	assert_int_equal(len, 100);
	assert_int_equal(s[100], '\0');
	assert_int_equal(s[25], 'z');
	free(s);
}

static void a_file_over_the_cap_is_bad_input(void **state)
{
	(void)state;
	char p[600], want[800];
	path_of(p, sizeof(p), "big.txt");
	write_bytes(p, (1u << 20) + 1);
	size_t len = 0;
	struct kp_diag d = { 0 };
	assert_null(sidefile_read(p, "device table", 1u << 20, &len, &d));
	assert_int_equal(d.status, KP_BADINPUT);
	snprintf(want, sizeof(want), "error: device table '%s' is larger than 1 MiB (1048577 bytes)",
		 p);
	assert_string_equal(d.msg, want);
}

static void special_files_are_refused_unread(void **state)
{
	(void)state;
	char fifo[600], want[800];
	path_of(fifo, sizeof(fifo), "fifo");
	assert_int_equal(mkfifo(fifo, 0644), 0);
	const char *paths[] = { fifo, "/dev/zero", tmpdir };
	const char *kinds[] = { "a FIFO", "a character device", "a directory" };
	for (int i = 0; i < 3; i++) {
		size_t len = 0;
		struct kp_diag d = { 0 };
		/* a FIFO without a writer: opened without waiting, then refused */
		assert_null(sidefile_read(paths[i], "limits file", SIDEFILE_MAX, &len, &d));
		assert_int_equal(d.status, KP_ENV);
		snprintf(want, sizeof(want), "error: limits file '%s' is %s, not a regular file",
			 paths[i], kinds[i]);
		assert_string_equal(d.msg, want);
	}
	size_t len;
	struct kp_diag d = { 0 };
	path_of(fifo, sizeof(fifo), "missing");
	assert_null(sidefile_read(fifo, "suite", SIDEFILE_MAX, &len, &d));
	snprintf(want, sizeof(want), "error: cannot open '%s': No such file or directory", fifo);
	assert_string_equal(d.msg, want);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_file_within_the_cap_is_read_whole),
		cmocka_unit_test(a_file_over_the_cap_is_bad_input),
		cmocka_unit_test(special_files_are_refused_unread),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
