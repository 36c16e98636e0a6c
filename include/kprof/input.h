/*
 * input.h — byte source for a trace: a path, "-" for stdin, gzip and zstd detected by magic
 * bytes.
 */
#ifndef KPROF_INPUT_H
#define KPROF_INPUT_H

#include <stddef.h>
#include <sys/types.h>

struct kp_diag;

/*
 * An open input.  Plain files are read with read(2); gzip through ISA-L's isal_inflate() (a
 * regular file, when libisal.so.2 loads) or zlib's inflate() (not gzread: the magic bytes are
 * already consumed and a pipe cannot seek back), with zlib's results either way (input.c).
 * Concatenated gzip members are one stream; bytes after the last member are ignored.
 * zstd through ZSTD_decompressStream(); concatenated frames are one stream, and bytes after
 * the last frame that are no frame are corrupt data (as for `zstd -d`).
 */
struct kp_input {
	const char *path; /* as given; "-" is stdin (display name "<stdin>") */
	const char *name; /* display name used in messages */
	int fd;
	void *gz; /* inflate state when the input is gzip, else NULL */
	void *zs; /* zstd decompression state when the input is zstd, else NULL */
	int is_gzip, is_zstd;
	const char *codec;    /* "gzip", "zstd", NULL for a plain file: named in messages */
	const char *inflater; /* gzip: "isal" or "zlib", the one inflating now */
	unsigned char peek[4];
	int npeek;           /* bytes of @peek not yet returned */
	long long raw_bytes; /* bytes read from the file (compressed size for gzip, zstd) */
	long long out_bytes; /* gzip, zstd: bytes decompressed so far */
	int truncated;       /* the file ended inside a gzip member or zstd frame; the stream
				ends there */
	long long trunc_raw, trunc_out; /* where: compressed file size, inflated bytes */
};

/* Prototypes */
/* Open @path ("-" = stdin).  Errors: "cannot open 'x': <strerror>" (status 4). */
int input_open(struct kp_input *in, const char *path, struct kp_diag *d);
/*
 * Read up to @cap bytes of the (inflated) stream.  Returns bytes read, 0 at end,
 * -1 on error with @d filled ("read error" status 4, corrupt gzip or zstd status 3).  A
 * gzip or zstd file cut short is no error: every byte that inflates is returned, then 0, with
 * @in->truncated set (the caller decides whether a cut stream is acceptable).
 */
ssize_t input_read(struct kp_input *in, void *buf, size_t cap, struct kp_diag *d);
/*
 * A plain (not compressed) regular file's bytes [@off, @off + @cap), read with pread(2) without
 * moving the read position, so threads can read their own parts at once: the bytes read (fewer
 * only at end of file), or -1 with @d filled as input_read() does.
 */
ssize_t input_pread(struct kp_input *in, void *buf, size_t cap, long long off, struct kp_diag *d);
void input_close(struct kp_input *in);

#endif /* KPROF_INPUT_H */
