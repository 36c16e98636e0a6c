/*
 * inflate-speed.c — zlib's inflate() against ISA-L's isal_inflate() on the same .gz files, for
 * bench/inflate-speed.sh (a bench-only program: ISA-L is Debian's libisal-dev).
 *
 * usage: inflate-speed [-n N] FILE.gz...
 *
 * Each file is read into memory first, so the times are inflating alone.  Both decoders stream
 * (256 KiB of output at a time, as kprof's reader asks for it) through every gzip member, as
 * `gzip -d` does: another member continues the stream.  Before timing, both outputs are checked
 * to be the same length and CRC-32; a file one decoder rejects stops the program (status 3).
 * Prints per file: "FILE GZ_BYTES OUT_BYTES MEMBERS ZLIB_S ISAL_S", best of N runs each,
 * the two decoders alternating.
 */
#include <isa-l/igzip_lib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#define OUT_CAP (256 << 10)

struct result {
	size_t out;
	unsigned long crc;
	int members;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* 0 on success; @crc: CRC-32 of the output when @check is set */
static int run_zlib(const unsigned char *gz, size_t len, unsigned char *out, int check,
		    struct result *r)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	memset(r, 0, sizeof(*r));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return -1;
	z.next_in = (unsigned char *)gz;
	z.avail_in = (uInt)len;
	r->crc = crc32(0, NULL, 0);
	r->members = 1;
	for (;;) {
		z.next_out = out;
		z.avail_out = OUT_CAP;
		int rc = inflate(&z, Z_NO_FLUSH);
		size_t n = OUT_CAP - z.avail_out;
		r->out += n;
		if (check)
			r->crc = crc32(r->crc, out, (uInt)n);
		if (rc == Z_STREAM_END) {
			if (z.avail_in >= 2 && z.next_in[0] == 0x1f && z.next_in[1] == 0x8b) {
				inflateReset(&z);
				r->members++;
				continue;
			}
			break;
		}
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			inflateEnd(&z);
			return -1;
		}
		if (z.avail_in == 0 && z.avail_out > 0) {
			inflateEnd(&z);
			return -1; /* cut */
		}
	}
	inflateEnd(&z);
	return 0;
}

static int run_isal(const unsigned char *gz, size_t len, unsigned char *out, int check,
		    struct result *r, struct inflate_state *s)
{
	memset(r, 0, sizeof(*r));
	isal_inflate_init(s);
	s->crc_flag = ISAL_GZIP;
	s->next_in = (unsigned char *)gz;
	s->avail_in = (uint32_t)len;
	r->crc = crc32(0, NULL, 0);
	r->members = 1;
	for (;;) {
		s->next_out = out;
		s->avail_out = OUT_CAP;
		int rc = isal_inflate(s);
		size_t n = OUT_CAP - s->avail_out;
		r->out += n;
		if (check)
			r->crc = crc32(r->crc, out, (uInt)n);
		if (rc != ISAL_DECOMP_OK)
			return -1;
		if (s->block_state == ISAL_BLOCK_FINISH) {
			if (s->avail_in >= 2 && s->next_in[0] == 0x1f && s->next_in[1] == 0x8b) {
				isal_inflate_reset(s);
				s->crc_flag = ISAL_GZIP;
				r->members++;
				continue;
			}
			break;
		}
		if (s->avail_in == 0 && s->avail_out > 0)
			return -1; /* cut */
	}
	return 0;
}

int main(int argc, char **argv)
{
	int runs = 5, i = 1;
	if (argc > 2 && !strcmp(argv[1], "-n")) {
		runs = atoi(argv[2]);
		i = 3;
	}
	if (i >= argc || runs < 1) {
		fprintf(stderr, "usage: inflate-speed [-n N] FILE.gz...\n");
		return 2;
	}
	unsigned char *out = malloc(OUT_CAP);
	struct inflate_state *s = malloc(sizeof(*s));
	if (!out || !s)
		return 4;
	for (; i < argc; i++) {
		size_t len;
		unsigned char *gz = slurp(argv[i], &len);
		if (!gz) {
			fprintf(stderr, "inflate-speed: error: cannot read '%s'\n", argv[i]);
			return 4;
		}
		struct result a, b;
		if (run_zlib(gz, len, out, 1, &a) || run_isal(gz, len, out, 1, &b, s)) {
			fprintf(stderr, "inflate-speed: error: '%s' is not a complete gzip file\n",
				argv[i]);
			return 3;
		}
		if (a.out != b.out || a.crc != b.crc || a.members != b.members) {
			fprintf(stderr,
				"inflate-speed: error: '%s': zlib %zu bytes crc %08lx %d members, "
				"ISA-L %zu bytes crc %08lx %d members\n",
				argv[i], a.out, a.crc, a.members, b.out, b.crc, b.members);
			return 3;
		}
		double best_z = 1e30, best_i = 1e30;
		for (int k = 0; k < runs; k++) {
			double t0 = now();
			run_zlib(gz, len, out, 0, &a);
			double t1 = now();
			run_isal(gz, len, out, 0, &b, s);
			double t2 = now();
			if (t1 - t0 < best_z)
				best_z = t1 - t0;
			if (t2 - t1 < best_i)
				best_i = t2 - t1;
		}
		printf("%s %zu %zu %d %.6f %.6f\n", argv[i], len, a.out, a.members, best_z, best_i);
		fflush(stdout);
		free(gz);
	}
	free(out);
	free(s);
	return 0;
}
