/*
 * input.c — a trace's bytes from a file or stdin; gzip (magic 1f 8b) inflated with ISA-L where
 * it can be (see below) and zlib otherwise, zstd (magic 28 b5 2f fd) decompressed with libzstd
 * (linked statically, see the Makefile).
 */
#include "kprof/input.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <pthread.h>
#include <stdint.h>
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

/*
 * ISA-L's isal_inflate() inflates 3-4x as fast as zlib (bench/inflate-speed.sh).  Debian ships
 * no libisal.a, so libisal.so.2 is loaded at run time: kprof starts without it and inflates with
 * zlib then.  ISA-L reads regular files only (anything that can seek), and zlib has the last
 * word on every member ISA-L does not finish cleanly: on an ISA-L error, or at the end of a cut
 * file, the member is inflated again by zlib from its first byte, the bytes ISA-L returned are
 * dropped, and zlib goes on to the end of the file.  The stream, the cut offsets and the error
 * messages are therefore zlib's.  A member whose header ISA-L would accept and zlib refuses
 * (a method other than deflate, reserved flag bits) goes to zlib before ISA-L sees it.  The one
 * difference left is in deflate data zlib refuses and ISA-L decodes further (ISA-L checks less of
 * a block's code lengths): the bytes ISA-L returned before the member's CRC check fails stay
 * returned, and zlib then names the error.  KPROF_INFLATE=zlib turns ISA-L off (benchmarks,
 * tests).
 */
static struct {
	void (*init)(struct inflate_state *);
	void (*reset)(struct inflate_state *);
	int (*inflate)(struct inflate_state *);
} isal;
static pthread_once_t isal_once = PTHREAD_ONCE_INIT;

static void isal_load(void)
{
	void *h = dlopen("libisal.so.2", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return;
	*(void **)&isal.init = dlsym(h, "isal_inflate_init");
	*(void **)&isal.reset = dlsym(h, "isal_inflate_reset");
	*(void **)&isal.inflate = dlsym(h, "isal_inflate");
	if (!isal.init || !isal.reset || !isal.inflate) {
		memset(&isal, 0, sizeof(isal));
		dlclose(h);
	}
}

static int isal_wanted(void)
{
	const char *e = getenv("KPROF_INFLATE");
	if (e && strcmp(e, "zlib") == 0)
		return 0;
	pthread_once(&isal_once, isal_load);
	return isal.inflate != NULL;
}

struct gz {
	z_stream z; /* next_in/avail_in: the input not yet inflated, also while ISA-L inflates */
	struct inflate_state *is; /* while ISA-L inflates; NULL: zlib */
	off_t base;               /* file offset of the stream's first byte */
	long long member_raw;     /* ISA-L: where the current member starts (stream offset) */
	long long member_out;     /* ISA-L: bytes of it returned */
	long long skip;           /* zlib after ISA-L: bytes of the member to inflate and drop */
	int in_eof;               /* read(2) returned 0 */
	int member_end;           /* a gzip member ended; another may follow */
	int done;                 /* no more output */
	int err;                  /* an error found after inflating bytes not yet returned: 1 out of
				     memory, 2 corrupt data; reported by the next call */
	int header_check;         /* ISA-L: the member's header is still to be checked */
	unsigned char in[INPUT_GZ_BUF];
};

/* ISA-L inflates a stream that can seek back to a member's first byte (a regular file). */
static void gz_try_isal(struct kp_input *in, struct gz *g)
{
	in->inflater = "zlib";
	off_t at = lseek(in->fd, 0, SEEK_CUR);
	if (at < 0 || !isal_wanted())
		return;
	g->is = malloc(sizeof(*g->is));
	if (!g->is)
		return;
	g->base = at - in->raw_bytes;
	isal.init(g->is);
	g->is->crc_flag = ISAL_GZIP; /* header, CRC-32 and length checked */
	g->header_check = 1;
	in->inflater = "isal";
}

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

/* @path's descriptor ('-': stdin) into in->fd; a directory is refused. */
static int open_fd(struct kp_input *in, const char *path, struct kp_diag *d)
{
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
	return 0;
}

/* Peek at the magic; a short read (pipe) is retried until 4 bytes or EOF. */
static int peek_magic(struct kp_input *in, struct kp_diag *d)
{
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
	return 0;
}

/* gzip (1f 8b): zlib's inflater, and ISA-L's where it can be used. */
static int start_gzip(struct kp_input *in, struct kp_diag *d)
{
	struct gz *g = xcalloc(1, sizeof(*g));
	/* 16 + MAX_WBITS: gzip wrapper only, with its CRC and length checked */
	if (inflateInit2(&g->z, 16 + MAX_WBITS) != Z_OK) {
		free(g);
		input_close(in);
		return diag_error(d, KP_ENV, "error: cannot inflate '%s': out of memory", in->name);
	}
	in->gz = g;
	gz_try_isal(in, g);
	in->is_gzip = 1;
	in->codec = "gzip";
	return 0;
}

/* zstd (28 b5 2f fd): a decompression stream. */
static int start_zstd(struct kp_input *in, struct kp_diag *d)
{
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
	return 0;
}

/* The decompressor the peeked magic names; plain bytes need none. */
static int start_codec(struct kp_input *in, struct kp_diag *d)
{
	if (in->npeek >= 2 && in->peek[0] == 0x1f && in->peek[1] == 0x8b)
		return start_gzip(in, d);
	if (in->npeek == 4 && in->peek[0] == 0x28 && in->peek[1] == 0xb5 && in->peek[2] == 0x2f &&
	    in->peek[3] == 0xfd)
		return start_zstd(in, d);
	return 0;
}

int input_open(struct kp_input *in, const char *path, struct kp_diag *d)
{
	memset(in, 0, sizeof(*in));
	in->path = path;
	in->fd = -1;
	if (open_fd(in, path, d) < 0 || peek_magic(in, d) < 0 || start_codec(in, d) < 0)
		return -1;
	/* the peek buffer is returned first; keep it right-aligned for raw_read() */
	if (in->npeek && in->npeek < (int)sizeof(in->peek))
		memmove(in->peek + sizeof(in->peek) - in->npeek, in->peek, in->npeek);
	return 0;
}

/* The stream offset of the next byte not yet inflated. */
static long long gz_pos(const struct kp_input *in, const struct gz *g)
{
	return in->raw_bytes - in->npeek - (long long)g->z.avail_in;
}

/* Keep at least 4 input bytes around, so a member's magic and flags can be seen. */
static int gz_refill(struct kp_input *in, struct gz *g)
{
	if (g->z.avail_in >= 4 || g->in_eof)
		return 0;
	if (g->z.avail_in)
		memmove(g->in, g->z.next_in, g->z.avail_in);
	size_t have = g->z.avail_in;
	ssize_t n = raw_read(in, g->in + have, sizeof(g->in) - have);
	if (n < 0)
		return -1;
	if (n == 0)
		g->in_eof = 1;
	g->z.next_in = g->in;
	g->z.avail_in += n;
	return 0;
}

/*
 * zlib inflates from here on.  @again: the current member from its first byte (ISA-L failed
 * or the file was cut), dropping the bytes ISA-L returned of it.  -1 if the file cannot seek.
 */
static int gz_to_zlib(struct kp_input *in, struct gz *g, int again)
{
	free(g->is);
	g->is = NULL;
	in->inflater = "zlib";
	if (!again)
		return 0;
	off_t at = g->base + (off_t)g->member_raw;
	if (lseek(in->fd, at, SEEK_SET) != at)
		return -1;
	in->npeek = 0;
	in->raw_bytes = g->member_raw;
	g->z.next_in = g->in;
	g->z.avail_in = 0;
	g->in_eof = 0;
	g->skip = g->member_out;
	inflateReset(&g->z);
	return 0;
}

/* Members ISA-L would read and zlib refuses (method, reserved flags) go to zlib; 0: need bytes. */
static int gz_check_header(struct kp_input *in, struct gz *g)
{
	if (g->z.avail_in < 4 && !g->in_eof)
		return 0;
	const unsigned char *h = g->z.next_in;
	if (g->z.avail_in < 4 || h[2] != Z_DEFLATED || (h[3] & 0xe0))
		gz_to_zlib(in, g, 0);
	g->header_check = 0;
	return 1;
}

/*
 * After a member: like gzip -d, another member continues the stream; anything else after a
 * complete member (tar padding, garbage) is ignored.  1: a member starts, 0: need bytes,
 * -1: the stream ended.
 */
static int gz_next_member(struct kp_input *in, struct gz *g)
{
	const unsigned char *m = g->z.next_in;
	if (g->z.avail_in >= 2 && m[0] == 0x1f && m[1] == 0x8b) {
		inflateReset(&g->z);
		if (g->is) {
			isal.reset(g->is);
			g->is->crc_flag = ISAL_GZIP;
			g->member_raw = gz_pos(in, g);
			g->member_out = 0;
			g->header_check = 1;
		}
		g->member_end = 0;
		return 1;
	}
	if (g->z.avail_in >= 2 || g->in_eof) {
		g->done = 1;
		return -1;
	}
	return 0;
}

/*
 * ISA-L inflates into @buf.  Returns the bytes inflated, or 0 after handing the member to zlib
 * (an error or a cut: zlib decides what the stream is), -1 if that fails.
 */
static ssize_t isal_step(struct kp_input *in, struct gz *g, unsigned char *buf, size_t room)
{
	struct inflate_state *s = g->is;
	uint32_t cap = room < (1u << 30) ? (uint32_t)room : 1u << 30;
	s->next_in = g->z.next_in;
	s->avail_in = g->z.avail_in;
	s->next_out = buf;
	s->avail_out = cap;
	int r = isal.inflate(s);
	g->z.next_in = s->next_in;
	g->z.avail_in = s->avail_in;
	if (r == ISAL_DECOMP_OK && s->block_state == ISAL_BLOCK_FINISH)
		g->member_end = 1;
	else if (r != ISAL_DECOMP_OK || (g->z.avail_in == 0 && g->in_eof && s->avail_out > 0))
		return gz_to_zlib(in, g, 1);
	g->member_out += cap - s->avail_out;
	return cap - s->avail_out;
}

/*
 * zlib inflates into @buf + *@out (bytes ISA-L already returned are inflated and dropped).
 * 0: go on, 1: stop with an error to report after the bytes in @buf, -1: fail now.
 */
static int zlib_step(struct kp_input *in, struct gz *g, unsigned char *buf, size_t cap, size_t *out)
{
	size_t room = cap - *out;
	if (g->skip && (unsigned long long)g->skip < room)
		room = (size_t)g->skip;
	g->z.next_out = buf + *out;
	g->z.avail_out = room;
	int r = inflate(&g->z, Z_NO_FLUSH);
	size_t n = room - g->z.avail_out;
	if (g->skip)
		g->skip -= (long long)n;
	else
		*out += n;
	if (r == Z_STREAM_END) {
		g->member_end = 1;
	} else if (r == Z_MEM_ERROR || r == Z_DATA_ERROR || r == Z_NEED_DICT ||
		   r == Z_STREAM_ERROR) {
		/* the bytes inflated before the error first, whatever @cap was: the reader sees
		 * the same stream for any read size (trace.c reads in chunks) */
		g->err = r == Z_MEM_ERROR ? 1 : 2;
		g->done = 1;
		return *out ? 1 : -1;
	} else if (g->z.avail_in == 0 && g->in_eof && g->z.avail_out > 0) {
		/*
		 * Z_OK or Z_BUF_ERROR, all input used, room left: the file was cut (a profiler
		 * killed mid-write).  Like a cut plain file: the bytes inflated so far are the
		 * stream, which ends here; the reader says where.
		 */
		in->truncated = 1;
		in->trunc_raw = in->raw_bytes;
		in->trunc_out = in->out_bytes + (long long)*out;
		g->done = 1;
	}
	return 0;
}

static ssize_t gz_read(struct kp_input *in, unsigned char *buf, size_t cap, struct kp_diag *d)
{
	struct gz *g = in->gz;
	size_t out = 0;
	if (g->err)
		goto fail;
	while (out < cap && !g->done) {
		if (gz_refill(in, g) < 0)
			goto read_error;
		if (g->member_end) {
			int m = gz_next_member(in, g);
			if (m < 0)
				break;
			if (m == 0)
				continue;
		}
		if (g->is && g->header_check && !gz_check_header(in, g))
			continue;
		if (g->is) {
			ssize_t n = isal_step(in, g, buf + out, cap - out);
			if (n < 0)
				goto read_error;
			out += (size_t)n;
			continue;
		}
		int r = zlib_step(in, g, buf, cap, &out);
		if (r > 0)
			break;
		if (r < 0)
			goto fail;
	}
	in->out_bytes += (long long)out;
	return out;
read_error:
	return diag_error(d, KP_ENV, "error: cannot read '%s': %s", in->name, strerror(errno));
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

ssize_t input_pread(struct kp_input *in, void *buf, size_t cap, long long off, struct kp_diag *d)
{
	size_t got = 0;
	while (got < cap) {
		ssize_t n = pread(in->fd, (char *)buf + got, cap - got,
				  (off_t)(off + (long long)got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && got == 0)
			return diag_error(d, KP_ENV, "error: cannot read '%s': %s", in->name,
					  strerror(errno));
		if (n <= 0)
			break; /* end of file; an error comes back on the next call */
		got += (size_t)n;
	}
	return (ssize_t)got;
}

void input_close(struct kp_input *in)
{
	if (in->gz) {
		inflateEnd(&((struct gz *)in->gz)->z);
		free(((struct gz *)in->gz)->is);
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
