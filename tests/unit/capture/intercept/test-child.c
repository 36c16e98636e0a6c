/*
 * test-child.c — capture/intercept/child.c without a GPU: the environment `kprof capture -- <cmd>`
 * hands the command (child_env), and the exit status kprof returns for it, as bash and env(1)
 * do: the command's own status, 128 + N for signal N, 127 not found, 126 not runnable.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "intercept/child.h"

/* kprof's status for a command run through child_spawn + child_wait, or its exec status */
static int run(char *const *argv)
{
	char *env[] = { "PATH=/usr/bin:/bin", NULL };
	pid_t pid;
	int err;
	if (child_spawn(argv, env, &pid, &err) < 0)
		return child_exec_status(err);
	return child_exit_status(child_wait(pid));
}

static void env_replaces_and_appends(void **state)
{
	(void)state;
	char *env[] = { "HOME=/root", "CUDA_INJECTION64_PATH=/old.so", "LANG=C", "CUDA=x", NULL };
	char *set[] = { "CUDA_INJECTION64_PATH=/usr/lib/kprof/kprof-inject.so", "KPROF_OUT=/tmp/d",
			NULL };
	char **out = child_env(env, set);
	assert_non_null(out);
	/* the variable set replaces its old value, a name that is only a prefix stays */
	const char *want[] = { "HOME=/root", "LANG=C", "CUDA=x",
			       "CUDA_INJECTION64_PATH=/usr/lib/kprof/kprof-inject.so",
			       "KPROF_OUT=/tmp/d", NULL };
	for (int i = 0; want[i]; i++)
		assert_string_equal(out[i], want[i]);
	assert_null(out[5]);
	free(out);
	/* no environment at all: only the variables set */
	out = child_env(NULL, set);
	assert_string_equal(out[0], set[0]);
	assert_string_equal(out[1], set[1]);
	assert_null(out[2]);
	free(out);
}

static void exit_status_mapping(void **state)
{
	(void)state;
	/* wait(2) statuses built the way Linux encodes them: exit code << 8, signal in the low bits */
	assert_int_equal(child_exit_status(0), 0);
	assert_int_equal(child_exit_status(3 << 8), 3);
	assert_int_equal(child_exit_status(255 << 8), 255);
	assert_int_equal(child_exit_status(SIGKILL), 128 + 9);
	assert_int_equal(child_exit_status(SIGSEGV | 0x80), 128 + 11); /* core dumped */
	assert_int_equal(child_exit_status(0x137f), CHILD_ABNORMAL);   /* stopped by SIGSTOP */
	assert_int_equal(child_exec_status(ENOENT), 127);
	assert_int_equal(child_exec_status(ENOTDIR), 127);
	assert_int_equal(child_exec_status(EACCES), 126);
	assert_int_equal(child_exec_status(ENOEXEC), 126);
}

static void real_children(void **state)
{
	(void)state;
	char *ok[] = { "sh", "-c", "exit 0", NULL };
	char *seven[] = { "sh", "-c", "exit 7", NULL };
	char *killed[] = { "sh", "-c", "kill -TERM $$", NULL };
	char *missing[] = { "kprof-no-such-command-29", NULL };
	char *dir[] = { "/", NULL }; /* a directory: found, not runnable (EACCES) */
	assert_int_equal(run(ok), 0);
	assert_int_equal(run(seven), 7);
	assert_int_equal(run(killed), 128 + SIGTERM);
	assert_int_equal(run(missing), 127);
	assert_int_equal(run(dir), 126);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(env_replaces_and_appends),
		cmocka_unit_test(exit_status_mapping),
		cmocka_unit_test(real_children),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
