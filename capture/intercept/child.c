/*
 * child.c — fork/exec/wait of `kprof capture -- <cmd>`, exit statuses as bash and env(1).
 */
#include "intercept/child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kprof/arena.h"

char **child_env(char *const *env, char *const *set)
{
	size_t ne = 0, ns = 0;
	while (env && env[ne])
		ne++;
	while (set && set[ns])
		ns++;
	char **out = xmalloc((ne + ns + 1) * sizeof(*out));
	size_t n = 0;
	for (size_t i = 0; i < ne; i++) {
		size_t len = strcspn(env[i], "=");
		int replaced = 0;
		for (size_t k = 0; k < ns && !replaced; k++)
			replaced = strcspn(set[k], "=") == len && !strncmp(env[i], set[k], len);
		if (!replaced)
			out[n++] = env[i];
	}
	for (size_t k = 0; k < ns; k++)
		out[n++] = set[k];
	out[n] = NULL;
	return out;
}

int child_spawn(char *const *argv, char *const *envp, pid_t *pid, int *err)
{
	/* the exec's errno comes back through a close-on-exec pipe: EOF means it succeeded */
	int p[2];
	*pid = 0;
	*err = 0;
	if (pipe2(p, O_CLOEXEC) < 0) {
		*err = errno;
		return -1;
	}
	pid_t c = fork();
	if (c < 0) {
		*err = errno;
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (c == 0) {
		/* only async-signal-safe calls until exec: the parent may have threads */
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		close(p[0]);
		execvpe(argv[0], argv, envp);
		int e = errno;
		ssize_t w = write(p[1], &e, sizeof(e));
		(void)w;
		_exit(child_exec_status(e));
	}
	close(p[1]);
	int e = 0;
	ssize_t r;
	while ((r = read(p[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(p[0]);
	*pid = c;
	if (r == (ssize_t)sizeof(e)) {
		child_wait(c);
		*err = e;
		return -1;
	}
	return 0;
}

int child_wait(pid_t pid)
{
	int st;
	for (;;) {
		if (waitpid(pid, &st, 0) == pid)
			return st;
		if (errno != EINTR)
			return -1;
	}
}

int child_exit_status(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return CHILD_SIGNALED + WTERMSIG(wstatus);
	return CHILD_ABNORMAL;
}

int child_exec_status(int err)
{
	return err == ENOENT || err == ENOTDIR ? CHILD_NOT_FOUND : CHILD_CANNOT_EXEC;
}
