/*
 * test-output.c — -o FILE: stdout for none or '-', never an input (same st_dev/st_ino), written
 * to a temporary file renamed onto FILE when complete, write errors reported with FILE intact.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "kprof/output.h"

static char dir[] = "/tmp/kprof-test-output-XXXXXX";

static const char *path_of(const char *name)
{
	static char buf[4][256];
	static int next;
	char *p = buf[next++ % 4];
	snprintf(p, sizeof(buf[0]), "%s/%s", dir, name);
	return p;
}

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static const char *slurp(const char *path)
{
	static char buf[256];
	memset(buf, 0, sizeof(buf));
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* files in dir: a temporary file left behind shows here */
static int nfiles(void)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."));
	closedir(d);
	return n;
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static void no_path_and_dash_are_stdout(void **state)
{
	(void)state;
	struct kp_diag d = { 0 };
	struct kp_output o;
	assert_ptr_equal(output_open(&o, NULL, &d), stdout);
	assert_ptr_equal(output_open(&o, "-", &d), stdout);
	assert_int_equal(output_close(&o, &d), 0);
	assert_int_equal(d.status, 0);
}

static void a_file_is_replaced_whole_and_no_temporary_stays(void **state)
{
	(void)state;
	const char *path = path_of("out.csv");
	put_file(path, "old contents, longer than the new ones\n");
	int before = nfiles();
	struct kp_diag d = { 0 };
	struct kp_output o;
	FILE *fp = output_open(&o, path, &d);
	assert_non_null(fp);
	assert_ptr_not_equal(fp, stdout);
	fputs("time_ns,name\n", fp);
	/* until closed, FILE is untouched: the report goes to the temporary file beside it */
	assert_string_equal(slurp(path), "old contents, longer than the new ones\n");
	assert_int_equal(nfiles(), before + 1);
	assert_int_equal(output_close(&o, &d), 0);
	assert_string_equal(slurp(path), "time_ns,name\n");
	assert_int_equal(nfiles(), before);
	/* the mode fopen() would give a new file, not mkstemp's 0600 */
	struct stat st;
	mode_t m = umask(0);
	umask(m);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0666 & ~m);
	unlink(path);
}

static void a_failed_run_leaves_the_file_as_it_was(void **state)
{
	(void)state;
	const char *path = path_of("keep.json");
	put_file(path, "{\"kept\": 1}\n");
	int before = nfiles();
	struct kp_diag d = { 0 };
	struct kp_output o;
	FILE *fp = output_open(&o, path, &d);
	assert_non_null(fp);
	fputs("{\"half\": ", fp);
	fclose(fp);
	assert_int_equal(output_commit(&o, 1, &d), -1);
	assert_string_equal(slurp(path), "{\"kept\": 1}\n");
	assert_int_equal(nfiles(), before);
	/* output_discard: the same, for a run that stops before closing */
	fp = output_open(&o, path_of("new.json"), &d);
	assert_non_null(fp);
	fclose(fp);
	output_discard(&o);
	assert_int_equal(access(path_of("new.json"), F_OK), -1);
	assert_int_equal(nfiles(), before);
	unlink(path);
}

static void an_unwritable_path_is_an_environment_error(void **state)
{
	(void)state;
	struct kp_diag d = { 0 };
	struct kp_output o;
	assert_null(output_open(&o, "/nonexistent-dir/out.json", &d));
	assert_int_equal(d.status, KP_ENV);
	assert_string_equal(
		d.msg,
		"error: cannot write '/nonexistent-dir/out.json': No such file or directory");
}

/* a full device: written in place (never replaced), the loss at fclose reported */
static void a_write_error_at_close_is_reported(void **state)
{
	(void)state;
	if (access("/dev/full", W_OK) != 0)
		skip();
	struct kp_diag d = { 0 };
	struct kp_output o;
	FILE *fp = output_open(&o, "/dev/full", &d);
	assert_non_null(fp);
	fputs("x\n", fp);
	assert_int_equal(output_close(&o, &d), -1);
	assert_int_equal(d.status, KP_ENV);
	assert_non_null(strstr(d.msg, "error: cannot write '/dev/full': "));
	struct stat st;
	assert_int_equal(stat("/dev/full", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
}

static void an_input_is_never_the_output(void **state)
{
	(void)state;
	put_file(path_of("t.json"), "{}\n");
	assert_int_equal(link(path_of("t.json"), path_of("hard.json")), 0);
	char dotted[300];
	snprintf(dotted, sizeof(dotted), "%s/./t.json", dir);
	char t[300];
	snprintf(t, sizeof(t), "%s", path_of("t.json"));
	const char *in[3] = { "-", NULL, t };
	struct kp_diag d = { 0 };
	/* the same name, another spelling, a hard link: refused (usage) */
	assert_int_equal(output_clash(path_of("t.json"), in, 3, "diff", &d), -1);
	assert_int_equal(d.status, KP_USAGE);
	char want[400];
	snprintf(want, sizeof(want), "error: '%s' is an input: diff would overwrite a file it reads",
		 path_of("t.json"));
	assert_string_equal(d.msg, want);
	assert_int_equal(output_clash(dotted, in, 3, "analyze", &d), -1);
	assert_int_equal(output_clash(path_of("hard.json"), in, 3, "analyze", &d), -1);
	/* another file, a file not yet there, stdout: no clash; '-' as an input never clashes */
	memset(&d, 0, sizeof(d));
	put_file(path_of("other.json"), "{}\n");
	assert_int_equal(output_clash(path_of("other.json"), in, 3, "analyze", &d), 0);
	assert_int_equal(output_clash(path_of("none.json"), in, 3, "analyze", &d), 0);
	assert_int_equal(output_clash("-", in, 3, "analyze", &d), 0);
	assert_int_equal(output_clash(NULL, in, 3, "analyze", &d), 0);
	assert_int_equal(d.status, 0);
	assert_string_equal(slurp(path_of("t.json")), "{}\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_path_and_dash_are_stdout),
		cmocka_unit_test(a_file_is_replaced_whole_and_no_temporary_stays),
		cmocka_unit_test(a_failed_run_leaves_the_file_as_it_was),
		cmocka_unit_test(an_unwritable_path_is_an_environment_error),
		cmocka_unit_test(a_write_error_at_close_is_reported),
		cmocka_unit_test(an_input_is_never_the_output),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
