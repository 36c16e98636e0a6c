/*
 * test-paths.c — trace arguments to files (paths.c): directories give their *.json,
 * *.json.gz and *.json.zst files in name order, other arguments pass as given, an empty
 * directory is an error.
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

#include "kprof/paths.h"

static char tmpdir[] = "/tmp/kprof-test-paths-XXXXXX";

static void touch(const char *name)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
}

static void sub(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s/%s", tmpdir, name);
}

static void a_directory_gives_its_traces_in_name_order(void **state)
{
	(void)state;
	char dir[512], slash[520], want[600];
	sub(dir, sizeof(dir), "traces");
	assert_int_equal(mkdir(dir, 0755), 0);
	touch("traces/b.json");
	touch("traces/a.json.gz");
	touch("traces/c.json");
	touch("traces/d.json.zst");
	touch("traces/.hidden.json"); /* dot files skipped */
	touch("traces/notes.txt");
	touch("traces/x.json.bz2");
	touch("traces/y.zst");
	touch("traces/json"); /* no stem */
	touch("traces/.json");
	char *args[] = { "-", dir, "missing.json" };
	size_t n = 99;
	struct kp_diag d = { 0 };
	char **v = paths_expand(args, 3, &n, NULL, &d);
	assert_non_null(v);
	assert_int_equal(n, 6);
	assert_string_equal(v[0], "-");
	snprintf(want, sizeof(want), "%s/a.json.gz", dir);
	assert_string_equal(v[1], want);
	snprintf(want, sizeof(want), "%s/b.json", dir);
	assert_string_equal(v[2], want);
	snprintf(want, sizeof(want), "%s/c.json", dir);
	assert_string_equal(v[3], want);
	snprintf(want, sizeof(want), "%s/d.json.zst", dir);
	assert_string_equal(v[4], want);
	assert_string_equal(v[5], "missing.json"); /* not ours to check: the loader says so */
	assert_null(v[6]);
	assert_int_equal(d.status, 0);
	paths_free(v);

	/* a trailing slash is not doubled */
	snprintf(slash, sizeof(slash), "%s/", dir);
	char *args2[] = { slash };
	v = paths_expand(args2, 1, &n, NULL, &d);
	assert_int_equal(n, 4);
	snprintf(want, sizeof(want), "%s/a.json.gz", dir);
	assert_string_equal(v[0], want);
	paths_free(v);
}

/* issue 23 item 16: a FIFO named *.json in a trace directory hung `kprof analyze DIR` */
static void a_directory_skips_entries_that_are_not_files(void **state)
{
	(void)state;
	char dir[512], fifo[600], subdir[600], want[700];
	sub(dir, sizeof(dir), "special");
	assert_int_equal(mkdir(dir, 0755), 0);
	touch("special/a.json");
	snprintf(fifo, sizeof(fifo), "%s/b.json", dir);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	snprintf(subdir, sizeof(subdir), "%s/c.json", dir);
	assert_int_equal(mkdir(subdir, 0755), 0);
	char *args[] = { dir };
	size_t n = 99;
	struct kp_diag d = { 0 };
	struct kp_warnings w = { 0 };
	char **v = paths_expand(args, 1, &n, &w, &d);
	assert_non_null(v);
	assert_int_equal(n, 1);
	snprintf(want, sizeof(want), "%s/a.json", dir);
	assert_string_equal(v[0], want);
	assert_int_equal(diag_warn_total(&w), 2);
	snprintf(want, sizeof(want), "warning: skipped '%s': not a regular file", fifo);
	assert_non_null(strstr(w.k[0].shown[0], want));
	paths_free(v);
	diag_warn_free(&w);
	/* nothing left: the directory holds no traces */
	char fonly[512];
	sub(fonly, sizeof(fonly), "fifo-only");
	assert_int_equal(mkdir(fonly, 0755), 0);
	snprintf(fifo, sizeof(fifo), "%s/x.json", fonly);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	char *args2[] = { fonly };
	assert_null(paths_expand(args2, 1, &n, &w, &d));
	assert_int_equal(d.status, KP_BADINPUT);
	diag_warn_free(&w);
}

static void many_files_grow_the_vector(void **state)
{
	(void)state;
	char dir[512], name[64];
	sub(dir, sizeof(dir), "many");
	assert_int_equal(mkdir(dir, 0755), 0);
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "many/t%02d.json", i);
		touch(name);
	}
	char *args[] = { "first.json", dir, "last.json" };
	size_t n = 0;
	struct kp_diag d = { 0 };
	char **v = paths_expand(args, 3, &n, NULL, &d);
	assert_int_equal(n, 42);
	assert_string_equal(v[0], "first.json");
	assert_non_null(strstr(v[1], "/many/t00.json"));
	assert_non_null(strstr(v[40], "/many/t39.json"));
	assert_string_equal(v[41], "last.json");
	assert_null(v[42]);
	paths_free(v);
}

static void a_directory_without_traces_is_bad_input(void **state)
{
	(void)state;
	char dir[512];
	sub(dir, sizeof(dir), "empty");
	assert_int_equal(mkdir(dir, 0755), 0);
	touch("empty/readme.md");
	char *args[] = { "a.json", dir };
	size_t n = 0;
	struct kp_diag d = { 0 };
	assert_null(paths_expand(args, 2, &n, NULL, &d));
	assert_int_equal(d.status, KP_BADINPUT);
	assert_non_null(strstr(d.msg, "no *.json, *.json.gz or *.json.zst traces in '"));
	assert_non_null(strstr(d.msg, "/empty'"));
	paths_free(NULL); /* a no-op */
}

static void no_arguments_give_an_empty_vector(void **state)
{
	(void)state;
	size_t n = 7;
	struct kp_diag d = { 0 };
	char **v = paths_expand(NULL, 0, &n, NULL, &d);
	assert_non_null(v);
	assert_int_equal(n, 0);
	assert_null(v[0]);
	paths_free(v);
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void mkdir_parents_makes_the_missing_folders_only(void **state)
{
	(void)state;
	char f[512], p[512];
	struct kp_diag d = { 0 };
	snprintf(f, sizeof(f), "%s/out//a/b/case.json", tmpdir);
	assert_int_equal(paths_mkdir_parents(f, &d), 0);
	snprintf(p, sizeof(p), "%s/out/a/b", tmpdir);
	assert_true(is_dir(p));
	assert_int_equal(access(f, F_OK), -1);           /* the file itself is not made */
	assert_int_equal(paths_mkdir_parents(f, &d), 0); /* again: all there */
	assert_int_equal(paths_mkdir_parents("case.json", &d), 0);
}

static void mkdir_parents_names_a_file_in_the_way(void **state)
{
	(void)state;
	char f[512], p[512];
	struct kp_diag d = { 0 };
	snprintf(p, sizeof(p), "%s/plain", tmpdir);
	FILE *fp = fopen(p, "w");
	assert_non_null(fp);
	fclose(fp);
	snprintf(f, sizeof(f), "%s/plain/x/case.csv", tmpdir);
	assert_int_equal(paths_mkdir_parents(f, &d), -1);
	assert_int_equal(d.status, KP_ENV);
	assert_non_null(strstr(d.msg, "/plain"));
	assert_non_null(strstr(d.msg, "error: "));
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
		cmocka_unit_test(a_directory_gives_its_traces_in_name_order),
		cmocka_unit_test(many_files_grow_the_vector),
		cmocka_unit_test(a_directory_skips_entries_that_are_not_files),
		cmocka_unit_test(a_directory_without_traces_is_bad_input),
		cmocka_unit_test(no_arguments_give_an_empty_vector),
		cmocka_unit_test(mkdir_parents_makes_the_missing_folders_only),
		cmocka_unit_test(mkdir_parents_names_a_file_in_the_way),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
