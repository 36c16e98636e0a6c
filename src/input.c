/*
 * input.c — a trace's bytes from a file or stdin; gzip (magic 1f 8b) inflated with zlib,
 * zstd (magic 28 b5 2f fd) decompressed with libzstd (linked statically, see the Makefile).
 */
#include "kprof/input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

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

/*
 * zstd: ZSTD_decompressStream() over an input buffer as large as gzip's and an output buffer of
 * one block (128 KiB); the window is capped by libzstd's default (128 MiB: frames written with
 * --long=31 are refused as corrupt).  Concatenated (and skippable) frames are one stream, as
 * `zstd -d` reads them.  libzstd drops what a call decoded when the call fails, so the calls
 * must not depend on the caller's read sizes nor on how a pipe splits its bytes: the input
 * buffer is filled whole before each pass and output goes to the buffer of fixed size, whose
 * bytes are then copied out.  The stream (and, for corrupt data, where it stops) is thus the
 * same for any read size (trace.c reads in chunks; --jobs reads in others).
 */
#define INPUT_ZS_OUT (128 << 10)

struct zs {
	ZSTD_DStream *ds;
	size_t in_pos, in_len;   /* @in[in_pos, in_len) not yet given to libzstd */
	size_t out_pos, out_len; /* @out[out_pos, out_len) not yet returned */
	long long produced;      /* bytes decompressed so far */
	int in_eof;
	int full;    /* the last call filled @out: it may hold more output back */
	int done;    /* no more output */
	int err;     /* as struct gz's: 1 out of memory, 2 corrupt data */
	size_t code; /* the failing ZSTD_decompressStream() result, for its message */
	size_t hint; /* last result: 0 at the end of a frame, else mid-frame */
	unsigned char in[INPUT_GZ_BUF];
	unsigned char out[INPUT_ZS_OUT];
};

/* read(2) that retries EINTR; the not-yet-returned peek bytes come first. */
static ssize_t raw_read(struct kp_input *in, unsigned char *buf, size_t cap)
{
	size_t got = 0;
	if (in->npeek && cap) {
		size_t n = (size_t)in->npeek < cap ? (size_t)in->npeek : cap;
		memcpy(buf, in->peek + (sizeof(in->peek) - in->npeek), n);
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

	/* peek at the magic; a short read (pipe) is retried until 4 bytes or EOF */
	while (in->npeek < (int)sizeof(in->peek)) {
		ssize_t n = read(in->fd, in->peek + in->npeek, sizeof(in->peek) - in->npeek);
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
	if (in->npeek >= 2 && in->peek[0] == 0x1f && in->peek[1] == 0x8b) {
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
		in->codec = "gzip";
	} else if (in->npeek == 4 && in->peek[0] == 0x28 && in->peek[1] == 0xb5 &&
		   in->peek[2] == 0x2f && in->peek[3] == 0xfd) {
		struct zs *z = xcalloc(1, sizeof(*z));
		z->ds = ZSTD_createDStream();
		if (!z->ds || ZSTD_isError(ZSTD_initDStream(z->ds))) {
			ZSTD_freeDStream(z->ds);
			free(z);
			input_close(in);
			return diag_error(d, KP_ENV, "error: cannot decompress '%s': out of memory",
					  in->name);
		}
		z->hint = 1; /* inside a frame until one ends */
		in->zs = z;
		in->is_zstd = 1;
		in->codec = "zstd";
	}
	/* the peek buffer is returned first; keep it right-aligned for raw_read() */
	if (in->npeek && in->npeek < (int)sizeof(in->peek))
		memmove(in->peek + sizeof(in->peek) - in->npeek, in->peek, in->npeek);
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

/* Decompress into @z->out until it holds bytes or the stream ends; -1 on a read error. */
static int zs_fill(struct kp_input *in, struct zs *z)
{
	z->out_pos = z->out_len = 0;
	while (z->out_len == 0 && !z->done) {
		if (z->in_pos == z->in_len && !z->in_eof) {
			/* a whole buffer, however the pipe splits it */
			z->in_pos = z->in_len = 0;
			while (z->in_len < sizeof(z->in)) {
				ssize_t n = raw_read(in, z->in + z->in_len,
						     sizeof(z->in) - z->in_len);
				if (n < 0)
					return -1;
				if (n == 0) {
					z->in_eof = 1;
					break;
				}
				z->in_len += (size_t)n;
			}
		}
		if (z->in_pos == z->in_len && z->in_eof && !z->full) {
			/*
			 * All input used and all output out.  After a frame's end: a clean end.
			 * Mid-frame: the file was cut (a profiler killed mid-write); like a cut
			 * gzip file, the bytes decoded so far (whole blocks) are the stream, which
			 * ends here; the reader says where.
			 */
			if (z->hint != 0) {
				in->truncated = 1;
				in->trunc_raw = in->raw_bytes;
				in->trunc_out = z->produced;
			}
			z->done = 1;
			break;
		}
		ZSTD_inBuffer ib = { z->in, z->in_len, z->in_pos };
		ZSTD_outBuffer ob = { z->out, sizeof(z->out), 0 };
		size_t r = ZSTD_decompressStream(z->ds, &ob, &ib);
		z->in_pos = ib.pos;
		if (ZSTD_isError(r)) {
			z->err = ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation ? 1 : 2;
			z->code = r;
			z->done = 1;
			break;
		}
		z->hint = r;
		z->full = ob.pos == ob.size;
		z->out_len = ob.pos;
		z->produced += (long long)ob.pos;
	}
	return 0;
}

static ssize_t zs_read(struct kp_input *in, unsigned char *buf, size_t cap, struct kp_diag *d)
{
	struct zs *z = in->zs;
	size_t out = 0;
	while (out < cap) {
		if (z->out_pos == z->out_len) {
			if (z->done)
				break;
			if (zs_fill(in, z) < 0)
				return diag_error(d, KP_ENV, "error: cannot read '%s': %s",
						  in->name, strerror(errno));
			continue;
		}
		size_t n = z->out_len - z->out_pos;
		if (n > cap - out)
			n = cap - out;
		memcpy(buf + out, z->out + z->out_pos, n);
		z->out_pos += n;
		out += n;
	}
	/* every byte decoded before an error first, then the error */
	if (out == 0 && z->err == 1)
		return diag_error(d, KP_ENV, "error: cannot decompress '%s': out of memory",
				  in->name);
	if (out == 0 && z->err)
		return diag_error(d, KP_BADINPUT, "error: corrupt zstd data in '%s': %s", in->name,
				  ZSTD_getErrorName(z->code));
	in->out_bytes += (long long)out;
	return out;
}

ssize_t input_read(struct kp_input *in, void *buf, size_t cap, struct kp_diag *d)
{
	if (in->zs)
		return zs_read(in, buf, cap, d);
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
	if (in->zs) {
		ZSTD_freeDStream(((struct zs *)in->zs)->ds);
		free(in->zs);
		in->zs = NULL;
	}
	if (in->fd > STDIN_FILENO)
		close(in->fd);
	in->fd = -1;
}
