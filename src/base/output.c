/*
 * output.c — -o FILE: never an input; written to a temporary file beside FILE and renamed onto
 * it when complete, so a failed run leaves FILE as it was.  Write errors are KP_ENV.
 */
#include "kprof/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kprof/arena.h"

static int is_stdout(const char *path)
{
	return !path || !strcmp(path, "-");
}

int output_clash(const char *path, const char *const *inputs, size_t n, const char *cmd,
		 struct kp_diag *d)
{
	struct stat so, si;
	if (is_stdout(path) || stat(path, &so) != 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (inputs[i] && strcmp(inputs[i], "-") && stat(inputs[i], &si) == 0 &&
		    si.st_dev == so.st_dev && si.st_ino == so.st_ino)
			return diag_error(d, KP_USAGE,
					  "error: '%s' is an input: %s would overwrite a file it reads",
					  path, cmd);
	return 0;
}

/* umask's file mode for a new file: what fopen(path, "w") would have given */
static mode_t new_file_mode(void)
{
	mode_t m = umask(0);
	umask(m);
	return 0666 & ~m;
}

static int cannot_write(const char *path, int err, struct kp_diag *d)
{
	return diag_error(d, KP_ENV, "error: cannot write '%s': %s", path, strerror(err));
}

/* cannot_write() after what output_open_fd() had allocated is released */
static int cannot_fail(struct kp_output *o, const char *name, int err, struct kp_diag *d)
{
	cannot_write(name, err, d);
	output_discard(o);
	return -1;
}

int output_open_fd(struct kp_output *o, const char *name, struct kp_diag *d)
{
	const char *path = name;
	memset(o, 0, sizeof(*o));
	struct stat st;
	/* a symbolic link stays one: the file it names is replaced, not the link */
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		o->target = realpath(path, NULL);
	path = o->path = o->target ? o->target : path;
	int exists = stat(path, &st) == 0;
	if (exists && access(path, W_OK) != 0) /* a read-only FILE stays so, as with fopen */
		return cannot_fail(o, name, errno, d);
	if (exists && !S_ISREG(st.st_mode)) {
		/* /dev/null, a fifo, /dev/stdout: written in place, never replaced */
		int fd = open(path, O_WRONLY | O_TRUNC);
		return fd < 0 ? cannot_fail(o, name, errno, d) : fd;
	}
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	size_t cap = strlen(path) + 16;
	o->tmp = xmalloc(cap);
	snprintf(o->tmp, cap, "%.*s.%s.XXXXXX", (int)dirlen, path, path + dirlen);
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		int err = errno;
		free(o->tmp);
		o->tmp = NULL;
		return cannot_fail(o, name, err, d);
	}
	if (fchmod(fd, new_file_mode()) != 0) {
		int err = errno;
		close(fd);
		output_discard(o);
		return cannot_fail(o, name, err, d);
	}
	return fd;
}

FILE *output_open(struct kp_output *o, const char *path, struct kp_diag *d)
{
	if (is_stdout(path)) {
		memset(o, 0, sizeof(*o));
		return o->fp = stdout;
	}
	int fd = output_open_fd(o, path, d);
	if (fd < 0)
		return NULL;
	o->fp = fdopen(fd, "w");
	if (!o->fp) {
		int err = errno;
		close(fd);
		output_discard(o);
		cannot_write(path, err, d);
	}
	return o->fp;
}

void output_discard(struct kp_output *o)
{
	if (o->tmp) {
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
	free(o->target);
	o->target = NULL;
}

int output_commit(struct kp_output *o, int failed, struct kp_diag *d)
{
	if (failed) {
		output_discard(o);
		return -1;
	}
	if (o->tmp && rename(o->tmp, o->path) != 0) {
		cannot_write(o->path, errno, d);
		output_discard(o);
		return -1;
	}
	free(o->tmp);
	o->tmp = NULL;
	free(o->target);
	o->target = NULL;
	return 0;
}

int output_close(struct kp_output *o, struct kp_diag *d)
{
	if (!o->fp || o->fp == stdout)
		return 0;
	int bad = ferror(o->fp);
	int err = fclose(o->fp) != 0 ? errno : 0;
	o->fp = NULL;
	if (bad || err) {
		output_commit(o, 1, d);
		return diag_error(d, KP_ENV, "error: cannot write '%s': %s", o->path,
				  bad ? "write error" : strerror(err));
	}
	return output_commit(o, 0, d);
}
