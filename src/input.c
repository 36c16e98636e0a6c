/*
 * input.c — a trace's bytes from a file or stdin; gzip (magic 1f 8b) inflated with zlib.
 */
#include "kprof/input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "kprof/arena.h"
#include "kprof/diag.h"

/*
 * zlib's inflate() rather than gzdopen(): the two magic bytes were already consumed to
 * detect gzip, and a pipe cannot seek back to give them to gzread().
 */
#ifndef INPUT_GZ_BUF
#define INPUT_GZ_BUF (256 << 10) /* compressed bytes read at a time (tests/fuzz: smaller) */
#endif

struct gz {
	z_stream z;
	int in_eof;     /* read(2) returned 0 */
	int member_end; /* a gzip member ended; another may follow */
	int done;       /* no more output */
	int err;        /* an error found after inflating bytes not yet returned: 1 out of
			       memory, 2 corrupt data; reported by the next call */
	unsigned char in[INPUT_GZ_BUF];
};

/* read(2) that retries EINTR; the not-yet-returned peek bytes come first. */
static ssize_t raw_read(struct kp_input *in, unsigned char *buf, size_t cap)
{
	size_t got = 0;
	if (in->npeek && cap) {
		size_t n = (size_t)in->npeek < cap ? (size_t)in->npeek : cap;
		memcpy(buf, in->peek + (2 - in->npeek), n);
		in->npeek -= n;
		got = n;
		if (got == cap)
			return got;
	}
	for (;;) {
		ssize_t n = read(in->fd, buf + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return got ? (ssize_t)got : -1; /* the error comes back on the next call */
		in->raw_bytes += n;
		return got + n;
	}
}

int input_open(struct kp_input *in, const char *path, struct kp_diag *d)
{
	memset(in, 0, sizeof(*in));
	in->path = path;
	in->fd = -1;
	if (strcmp(path, "-") == 0) {
		in->name = "<stdin>";
		in->fd = STDIN_FILENO;
	} else {
		in->name = path;
		in->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (in->fd < 0)
			return diag_error(d, KP_ENV, "error: cannot open '%s': %s", path,
					  strerror(errno));
	}
	struct stat st;
	if (fstat(in->fd, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			input_close(in);
			return diag_error(d, KP_ENV, "error: cannot open '%s': %s", path,
					  strerror(EISDIR));
		}
		if (S_ISREG(st.st_mode))
			posix_fadvise(in->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	}

	/* peek at the magic; a short read (pipe) is retried until 2 bytes or EOF */
	while (in->npeek < 2) {
		ssize_t n = read(in->fd, in->peek + in->npeek, 2 - in->npeek);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			input_close(in);
			return diag_error(d, KP_ENV, "error: cannot read '%s': %s", in->name,
					  strerror(e));
		}
		if (n == 0)
			break;
		in->npeek += n;
		in->raw_bytes += n;
	}
	if (in->npeek == 2 && in->peek[0] == 0x1f && in->peek[1] == 0x8b) {
		struct gz *g = xcalloc(1, sizeof(*g));
		/* 16 + MAX_WBITS: gzip wrapper only, with its CRC and length checked */
		if (inflateInit2(&g->z, 16 + MAX_WBITS) != Z_OK) {
			free(g);
			input_close(in);
			return diag_error(d, KP_ENV, "error: cannot inflate '%s': out of memory",
					  in->name);
		}
		in->gz = g;
		in->is_gzip = 1;
	}
	/* the peek buffer is returned first; keep it right-aligned for raw_read() */
	if (in->npeek == 1)
		in->peek[1] = in->peek[0];
	return 0;
}

static ssize_t gz_read(struct kp_input *in, unsigned char *buf, size_t cap, struct kp_diag *d)
{
	struct gz *g = in->gz;
	size_t out = 0;
	if (g->err)
		goto fail;
	while (out < cap && !g->done) {
		/* keep at least 2 input bytes around so a following member's magic can be seen */
		if (g->z.avail_in < 2 && !g->in_eof) {
			if (g->z.avail_in)
				memmove(g->in, g->z.next_in, g->z.avail_in);
			size_t have = g->z.avail_in;
			ssize_t n = raw_read(in, g->in + have, sizeof(g->in) - have);
			if (n < 0)
				return diag_error(d, KP_ENV, "error: cannot read '%s': %s",
						  in->name, strerror(errno));
			if (n == 0)
				g->in_eof = 1;
			g->z.next_in = g->in;
			g->z.avail_in += n;
		}
		if (g->member_end) {
			/* like gzip -d: another member continues the stream; anything else after a
			 * complete member (tar padding, garbage) is ignored */
			const unsigned char *m = g->z.next_in;
			if (g->z.avail_in >= 2 && m[0] == 0x1f && m[1] == 0x8b) {
				inflateReset(&g->z);
				g->member_end = 0;
			} else if (g->z.avail_in >= 2 || g->in_eof) {
				g->done = 1;
				break;
			} else {
				continue;
			}
		}
		g->z.next_out = buf + out;
		g->z.avail_out = cap - out;
		int r = inflate(&g->z, Z_NO_FLUSH);
		out = cap - g->z.avail_out;
		if (r == Z_STREAM_END) {
			g->member_end = 1;
		} else if (r == Z_MEM_ERROR || r == Z_DATA_ERROR || r == Z_NEED_DICT ||
			   r == Z_STREAM_ERROR) {
			/* the bytes inflated before the error first, whatever @cap was: the reader
			 * sees the same stream for any read size (trace.c reads in chunks) */
			g->err = r == Z_MEM_ERROR ? 1 : 2;
			g->done = 1;
			if (out)
				break;
			goto fail;
		} else if (g->z.avail_in == 0 && g->in_eof && g->z.avail_out > 0) {
			/*
			 * Z_OK or Z_BUF_ERROR, all input used, room left: the file was cut (a
			 * profiler killed mid-write).  Like a cut plain file: the bytes inflated
			 * so far are the stream, which ends here; the reader says where.
			 */
			in->truncated = 1;
			in->trunc_raw = in->raw_bytes;
			in->trunc_out = in->out_bytes + (long long)out;
			g->done = 1;
		}
	}
	in->out_bytes += (long long)out;
	return out;
fail:
	if (g->err == 1)
		return diag_error(d, KP_ENV, "error: cannot inflate '%s': out of memory", in->name);
	return diag_error(d, KP_BADINPUT, "error: corrupt gzip data in '%s': %s", in->name,
			  g->z.msg ? g->z.msg : "invalid data");
}

ssize_t input_read(struct kp_input *in, void *buf, size_t cap, struct kp_diag *d)
{
	if (in->gz)
		return gz_read(in, buf, cap, d);
	ssize_t n = raw_read(in, buf, cap);
	if (n < 0)
		return diag_error(d, KP_ENV, "error: cannot read '%s': %s", in->name,
				  strerror(errno));
	return n;
}

void input_close(struct kp_input *in)
{
	if (in->gz) {
		inflateEnd(&((struct gz *)in->gz)->z);
		free(in->gz);
		in->gz = NULL;
	}
	if (in->fd > STDIN_FILENO)
		close(in->fd);
	in->fd = -1;
}
