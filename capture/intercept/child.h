/*
 * child.h — run the command of `kprof capture -- <cmd>`: environment, fork/exec, wait, and
 * its exit status as bash and env(1) report it.
 */
#ifndef KPROF_CHILD_H
#define KPROF_CHILD_H

#include <sys/types.h>

/*
 * The command's own exit statuses, as bash and env(1) report them; kprof passes them through
 * unchanged, so they are not enum kp_status values.
 */
enum child_status {
	CHILD_CANNOT_EXEC = 126, /* found but exec failed (EACCES, ENOEXEC, fork failed) */
	CHILD_NOT_FOUND = 127,   /* ENOENT, ENOTDIR */
	CHILD_SIGNALED = 128,    /* + N when signal N ended it */
	CHILD_ABNORMAL = 255, /* neither exited nor signalled (cannot happen without WUNTRACED) */
};

/* Prototypes */
/*
 * A copy of @env (NULL-terminated "NAME=value" strings) with the "NAME=value" entries of @set
 * replacing those of the same name or appended.  The array is malloc'ed and its strings are
 * borrowed from @env and @set: free only the array (xmalloc: out of memory exits, as src's).
 */
char **child_env(char *const *env, char *const *set);
/*
 * fork + execvpe(@argv[0], @argv, @envp).  SIGINT and SIGQUIT go back to their defaults in
 * the child.  Returns 0 with *pid set once the exec succeeded; -1 with *err = the exec's errno
 * (the child is reaped), or with *err = fork's errno and *pid = 0.
 */
int child_spawn(char *const *argv, char *const *envp, pid_t *pid, int *err);
/* waitpid until @pid ends; returns its wait status, or -1 with errno set. */
int child_wait(pid_t pid);
/* Exit status of a wait status: the child's code, or 128 + N when signal N ended it. */
int child_exit_status(int wstatus);
/* Exit status when exec failed with @err: 127 not found (ENOENT, ENOTDIR), else 126. */
int child_exec_status(int err);

#endif /* KPROF_CHILD_H */
