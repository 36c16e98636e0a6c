/*
 * test-pyhook.c — kprof capture --torch without a GPU: which commands get kprof's Python
 * start-up hook by default (capture_cmd_is_python), the PYTHONPATH they run with, the option's
 * values (capture/intercept/pyhook.c).
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

#include "kprof/capture.h"
#include "kprof/diag.h"

static int is_py(const char *a0, const char *a1, const char *path)
{
	char *cmd[] = { (char *)a0, (char *)a1, NULL };
	return capture_cmd_is_python(cmd, path);
}

/* An executable script @dir/@name whose first line is @line. */
static void script(const char *dir, const char *name, const char *line)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f, "%s\nprint(1)\n", line);
	fclose(f);
	assert_int_equal(chmod(p, 0755), 0);
}

static void python_commands_get_the_hook_by_default(void **state)
{
	(void)state;
	assert_true(is_py("python3", "train.py", NULL));
	assert_true(is_py("python", "-m", NULL));
	assert_true(is_py("/usr/bin/python3.12", "x.py", NULL));
	assert_true(is_py("/opt/conda/bin/python3.9d", NULL, NULL));
	assert_true(is_py("./train.py", NULL, NULL));
	assert_false(is_py("pythonista", NULL, "/nonexistent"));
	assert_false(is_py("python3.", NULL, "/nonexistent"));
	assert_false(is_py("bash", "-c", "/nonexistent"));
	assert_false(is_py(".py", NULL, "/nonexistent"));
	assert_false(is_py("", NULL, "/nonexistent"));
	char *none[] = { NULL };
	assert_false(capture_cmd_is_python(none, NULL));
	assert_false(capture_cmd_is_python(NULL, NULL));

	/* Python console scripts (torchrun, accelerate), by path and found in PATH */
	char dir[] = "/tmp/kprof-test-pyhook-XXXXXX";
	assert_non_null(mkdtemp(dir));
	script(dir, "torchrun", "#!/usr/bin/python3");
	script(dir, "launch", "#!/usr/bin/env python3.12");
	script(dir, "run.sh", "#!/bin/sh");
	char p[600];
	snprintf(p, sizeof(p), "%s/torchrun", dir);
	assert_true(is_py(p, NULL, NULL));
	snprintf(p, sizeof(p), "/nonexistent:%s", dir);
	assert_true(is_py("torchrun", "--nproc-per-node=2", p));
	assert_true(is_py("launch", NULL, p));
	assert_false(is_py("run.sh", NULL, p));
	assert_false(is_py("torchrun", NULL, "/nonexistent"));
	snprintf(p, sizeof(p), "%s/run.sh", dir);
	assert_false(is_py(p, NULL, NULL));
	/* "python" further down the file does not count */
	script(dir, "late", "#!/bin/sh\n# python");
	snprintf(p, sizeof(p), "%s/late", dir);
	assert_false(is_py(p, NULL, NULL));
	static const char *const files[] = { "torchrun", "launch", "run.sh", "late" };
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		unlink(p);
	}
	rmdir(dir);
}

static void pythonpath_puts_the_hook_first(void **state)
{
	(void)state;
	char *s = capture_pythonpath("/opt/kprof/lib/kprof/python", NULL);
	assert_string_equal(s, "PYTHONPATH=/opt/kprof/lib/kprof/python");
	free(s);
	s = capture_pythonpath("/h", "");
	assert_string_equal(s, "PYTHONPATH=/h");
	free(s);
	s = capture_pythonpath("/h", "/a:/b");
	assert_string_equal(s, "PYTHONPATH=/h:/a:/b");
	free(s);
	/* PYTHONPATH cannot hold a directory with its separator, nor an empty one */
	assert_null(capture_pythonpath("/a:b/python", "/x"));
	assert_null(capture_pythonpath("", "/x"));
	assert_null(capture_pythonpath(NULL, "/x"));
	char big[5000];
	memset(big, 'a', sizeof(big) - 1);
	big[0] = '/', big[sizeof(big) - 1] = '\0';
	assert_null(capture_pythonpath(big, NULL));
}

static void torch_option_values(void **state)
{
	(void)state;
	int mode = -1;
	assert_null(capture_parse_torch("auto", &mode));
	assert_int_equal(mode, TORCH_AUTO);
	assert_null(capture_parse_torch("on", &mode));
	assert_int_equal(mode, TORCH_ON);
	assert_null(capture_parse_torch("off", &mode));
	assert_int_equal(mode, TORCH_OFF);
	assert_string_equal(capture_parse_torch("yes", &mode), "valid: auto, on, off");
	assert_int_equal(mode, TORCH_OFF);
	assert_string_equal(capture_torch_names[TORCH_ON], "on");
}

/*
 * The command runs with the hook's directory first on PYTHONPATH and KPROF_TORCH_SHAPES as
 * --[no-]torch-shapes says, whatever kprof's own environment holds; without the hook, neither.
 */
static void command_gets_the_hook_and_its_shapes_setting(void **state)
{
	(void)state;
	char dir[] = "/tmp/kprof-test-pyhook-XXXXXX", out[128];
	assert_non_null(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/t.json", dir);
	char *cmd[] = { "/bin/sh", "-c",
			"test \"$KPROF_TORCH_SHAPES\" = \"$WANT\" && "
			"test \"${PYTHONPATH%%:*}\" = \"$WANT_PATH\" || exit 9",
			NULL };
	struct kp_capture_opts o = { .output = out, .sample_period_ms = 10, .cmd = cmd,
				     .inject_so = "/nonexistent/kprof-inject.so",
				     .torch_dir = "/opt/kprof/python", .torch_shapes = 0 };
	struct kp_diag d;
	setenv("KPROF_TORCH_SHAPES", "1", 1); /* kprof's own: not what the command gets */
	setenv("PYTHONPATH", "/a", 1);
	setenv("WANT", "0", 1);
	setenv("WANT_PATH", "/opt/kprof/python", 1);
	assert_int_equal(capture_run_cmd(&o, &d), 0);
	o.torch_shapes = 1;
	setenv("KPROF_TORCH_SHAPES", "0", 1);
	setenv("WANT", "1", 1);
	assert_int_equal(capture_run_cmd(&o, &d), 0);
	o.torch_dir = NULL; /* no hook: the command's own environment, untouched */
	unsetenv("KPROF_TORCH_SHAPES");
	setenv("WANT", "", 1);
	setenv("WANT_PATH", "/a", 1);
	assert_int_equal(capture_run_cmd(&o, &d), 0);
	unsetenv("KPROF_TORCH_SHAPES");
	unsetenv("PYTHONPATH");
	unsetenv("WANT");
	unsetenv("WANT_PATH");
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(python_commands_get_the_hook_by_default),
		cmocka_unit_test(pythonpath_puts_the_hook_first),
		cmocka_unit_test(torch_option_values),
		cmocka_unit_test(command_gets_the_hook_and_its_shapes_setting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
