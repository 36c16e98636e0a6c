/*
 * sidefile.c — small side files read whole, bounded: regular files up to a size cap.
 */
#include "kprof/sidefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kprof/arena.h"

/* "a FIFO", "a directory": what a non-regular file is, for the message */
static const char *kind_of(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISSOCK(m) ? "a socket"
			     : "a special file";
}

char *sidefile_read(const char *path, const char *what, size_t max, size_t *len,
		    struct kp_diag *d)
{
	/* O_NONBLOCK: opening a FIFO without a writer returns at once instead of waiting */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return diag_error(d, KP_ENV, "error: cannot open '%s': %s", path,
				  strerror(errno)),
		       NULL;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		diag_error(d, KP_ENV, "error: cannot read '%s': %s", path, strerror(e));
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) { /* never read: /dev/zero never ends, a FIFO may never */
		close(fd);
		diag_error(d, KP_ENV, "error: %s '%s' is %s, not a regular file", what, path,
			   kind_of(st.st_mode));
		return NULL;
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		diag_error(d, KP_BADINPUT, "error: %s '%s' is larger than %zu MiB (%lld bytes)",
			   what, path, max >> 20, (long long)st.st_size);
		return NULL;
	}
	size_t cap = (size_t)st.st_size + 1, n = 0;
	char *buf = xmalloc(cap + 1);
	for (;;) {
		if (n == cap) { /* it grew since fstat(): up to @max + 1 bytes, then refused */
			if (cap > max)
				break;
			cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			buf = xrealloc(buf, cap + 1);
		}
		ssize_t k = read(fd, buf + n, cap - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = errno;
			free(buf);
			close(fd);
			diag_error(d, KP_ENV, "error: cannot read '%s': %s", path,
				   strerror(e));
			return NULL;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	if (n > max) {
		free(buf);
		diag_error(d, KP_BADINPUT, "error: %s '%s' is larger than %zu MiB", what, path,
			   max >> 20);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}
