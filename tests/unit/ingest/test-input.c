/*
 * test-input.c — byte sources: plain files, gzip (one or more members), zstd (one or more
 * frames), stdin, and the errors for missing files, directories and corrupt or truncated gzip
 * and zstd.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cmocka.h>

#include "kprof/diag.h"
#include "kprof/input.h"
#include "kprof/json.h"

static char tmpdir[256];

static int setup(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/kprof-test-input-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *testdata(void)
{
	const char *d = getenv("KPROF_TESTDATA");
	return d ? d : "../../testdata";
}

static const char *tmp_path(const char *name)
{
	static char p[4][512];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", tmpdir, name);
	return p[k];
}

static void write_file(const char *path, const void *s, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(s, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* gzip @s with zlib; @members > 1 splits it into that many concatenated members. */
static void write_gz(const char *path, const char *s, size_t len, int members)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	size_t per = len / members + 1, off = 0;
	for (int m = 0; m < members; m++) {
		size_t n = len - off < per ? len - off : per;
		z_stream z;
		memset(&z, 0, sizeof(z));
		assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8,
					      Z_DEFAULT_STRATEGY),
				 Z_OK);
		size_t cap = deflateBound(&z, n);
		unsigned char *out = malloc(cap);
		z.next_in = (unsigned char *)s + off;
		z.avail_in = n;
		z.next_out = out;
		z.avail_out = cap;
		assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
		assert_int_equal(fwrite(out, 1, z.total_out, f), z.total_out);
		deflateEnd(&z);
		free(out);
		off += n;
	}
	assert_int_equal(fclose(f), 0);
}

/*
 * zstd @s with libzstd (content checksum on); @frames > 1 splits it into that many
 * concatenated frames.  Returns the compressed size.
 */
static size_t write_zst(const char *path, const char *s, size_t len, int frames)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	size_t per = len / frames + 1, off = 0, total = 0;
	ZSTD_CCtx *c = ZSTD_createCCtx();
	assert_non_null(c);
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)));
	for (int m = 0; m < frames; m++) {
		size_t n = len - off < per ? len - off : per;
		size_t cap = ZSTD_compressBound(n);
		unsigned char *out = malloc(cap);
		size_t z = ZSTD_compress2(c, out, cap, s + off, n);
		assert_false(ZSTD_isError(z));
		assert_int_equal(fwrite(out, 1, z, f), z);
		free(out);
		off += n;
		total += z;
	}
	ZSTD_freeCCtx(c);
	assert_int_equal(fclose(f), 0);
	return total;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc(n ? n : 1);
	assert_int_equal(fread(b, 1, n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

/* Some text that compresses but not to nothing: numbers with a few repeats. */
static char *gen_text(size_t len)
{
	char *s = malloc(len);
	unsigned x = 7;
	for (size_t k = 0; k < len; k++) {
		x = x * 1103515245u + 12345u;
		s[k] = "{}[]\"ab:, 0123456789\n"[(x >> 16) % 21];
	}
	return s;
}

/* Read all of @in with reads of at most @step bytes. */
static char *read_all(struct kp_input *in, size_t step, size_t *len, struct kp_diag *d)
{
	size_t cap = 1 << 16, n = 0;
	char *s = malloc(cap);
	for (;;) {
		if (cap - n < step)
			s = realloc(s, cap = cap * 2 + step);
		ssize_t r = input_read(in, s + n, step, d);
		if (r < 0) {
			free(s);
			return NULL;
		}
		if (r == 0)
			break;
		n += r;
	}
	*len = n;
	return s;
}

static void input_reads_a_plain_file_whole(void **state)
{
	(void)state;
	size_t sizes[] = { 0, 1, 2, 3, 100000 };
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		char *s = gen_text(sizes[k]);
		const char *path = tmp_path("plain.json");
		write_file(path, s, sizes[k]);
		size_t steps[] = { 1, 3, 4096, 1 << 20 };
		for (size_t j = 0; j < sizeof(steps) / sizeof(steps[0]); j++) {
			struct kp_input in;
			struct kp_diag d = { 0 };
			assert_int_equal(input_open(&in, path, &d), 0);
			assert_int_equal(in.is_gzip, 0);
			assert_string_equal(in.name, path);
			size_t n;
			char *r = read_all(&in, steps[j], &n, &d);
			assert_non_null(r);
			assert_int_equal(n, sizes[k]);
			assert_memory_equal(r, s, n);
			assert_int_equal(in.raw_bytes, (long long)sizes[k]);
			input_close(&in);
			free(r);
		}
		free(s);
	}
}

static void input_inflates_gzip_detected_by_magic(void **state)
{
	(void)state;
	size_t len = 3 << 20;
	char *s = gen_text(len);
	for (int members = 1; members <= 3; members++) {
		/* the name says nothing: detection is by the bytes 1f 8b */
		const char *path = tmp_path("trace.json");
		write_gz(path, s, len, members);
		struct stat st;
		assert_int_equal(stat(path, &st), 0);
		size_t steps[] = { 7, 65536, 8 << 20 };
		for (size_t j = 0; j < sizeof(steps) / sizeof(steps[0]); j++) {
			struct kp_input in;
			struct kp_diag d = { 0 };
			assert_int_equal(input_open(&in, path, &d), 0);
			assert_int_equal(in.is_gzip, 1);
			size_t n;
			char *r = read_all(&in, steps[j], &n, &d);
			if (!r)
				fail_msg("%s", d.msg);
			assert_int_equal(n, len);
			assert_memory_equal(r, s, n);
			assert_int_equal(in.raw_bytes, (long long)st.st_size);
			input_close(&in);
			free(r);
		}
	}
	free(s);
}

static void input_ignores_bytes_after_the_last_gzip_member(void **state)
{
	(void)state;
	const char *path = tmp_path("padded.json.gz");
	write_gz(path, "[1, 2]", 6, 1);
	FILE *f = fopen(path, "ab");
	assert_non_null(f);
	fwrite("\0\0\0\0\0\0\0\0", 1, 8, f);
	fclose(f);
	struct kp_input in;
	struct kp_diag d = { 0 };
	assert_int_equal(input_open(&in, path, &d), 0);
	size_t n;
	char *r = read_all(&in, 4096, &n, &d);
	assert_non_null(r);
	assert_int_equal(n, 6);
	assert_memory_equal(r, "[1, 2]", 6);
	input_close(&in);
	free(r);
}

/*
 * Standard input becomes a pipe fed by a child writing @path in writes of @chunk bytes;
 * *saved keeps the old stdin for stdin_restore().
 */
static pid_t stdin_from_pipe(const char *path, size_t chunk, int *saved)
{
	*saved = dup(STDIN_FILENO);
	int fd = open(path, O_RDONLY);
	assert_true(*saved >= 0 && fd >= 0);
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		char buf[1000];
		ssize_t n;
		while ((n = read(fd, buf, chunk < sizeof(buf) ? chunk : sizeof(buf))) > 0)
			if (write(pfd[1], buf, n) != n)
				_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	close(fd);
	dup2(pfd[0], STDIN_FILENO);
	close(pfd[0]);
	return pid;
}

/* Stdin back from stdin_from_pipe(); the writer child must have exited cleanly. */
static void stdin_restore(int saved, pid_t pid)
{
	dup2(saved, STDIN_FILENO);
	close(saved);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void input_reads_gzip_from_stdin(void **state)
{
	(void)state;
	size_t len = 200000;
	char *s = gen_text(len);
	const char *path = tmp_path("stdin.json.gz");
	write_gz(path, s, len, 2);
	/* through a pipe, so nothing can seek back over the peeked magic */
	int saved;
	pid_t pid = stdin_from_pipe(path, 1000, &saved);

	struct kp_input in;
	struct kp_diag d = { 0 };
	assert_int_equal(input_open(&in, "-", &d), 0);
	assert_string_equal(in.name, "<stdin>");
	assert_int_equal(in.is_gzip, 1);
	size_t n;
	char *r = read_all(&in, 1 << 20, &n, &d);
	input_close(&in);
	stdin_restore(saved, pid);
	assert_non_null(r);
	assert_int_equal(n, len);
	assert_memory_equal(r, s, n);
	free(r);
	free(s);
}

static void input_names_a_missing_file(void **state)
{
	(void)state;
	struct kp_input in;
	struct kp_diag d = { 0 };
	assert_int_equal(input_open(&in, "no-such-trace.json", &d), -1);
	assert_int_equal(d.status, KP_ENV);
	assert_string_equal(d.msg,
			    "error: cannot open 'no-such-trace.json': No such file or directory");
}

static void input_refuses_a_directory(void **state)
{
	(void)state;
	struct kp_input in;
	struct kp_diag d = { 0 };
	assert_int_equal(input_open(&in, tmpdir, &d), -1);
	assert_int_equal(d.status, KP_ENV);
	char want[512];
	snprintf(want, sizeof(want), "error: cannot open '%s': Is a directory", tmpdir);
	assert_string_equal(d.msg, want);
}

/* Read @path to the end; returns the diag of the failure (the test fails if none). */
static struct kp_diag read_fails(const char *path)
{
	struct kp_input in;
	struct kp_diag d = { 0 };
	assert_int_equal(input_open(&in, path, &d), 0);
	assert_int_equal(in.is_gzip, 1);
	size_t n;
	char *r = read_all(&in, 4096, &n, &d);
	input_close(&in);
	if (r)
		fail_msg("%s: read %zu bytes without an error", path, n);
	return d;
}

static void input_rejects_corrupt_gzip_naming_the_file(void **state)
{
	(void)state;
	char path[4096];
	snprintf(path, sizeof(path), "%s/bad/corrupt.json.gz", testdata());
	struct kp_diag d = read_fails(path);
	assert_int_equal(d.status, KP_BADINPUT);
	char want[4200];
	snprintf(want, sizeof(want), "error: corrupt gzip data in '%s': invalid block type", path);
	assert_string_equal(d.msg, want);

	/* a flipped byte in the data fails the CRC or the inflate */
	size_t len = 100000;
	char *s = gen_text(len);
	const char *p = tmp_path("flipped.json.gz");
	write_gz(p, s, len, 1);
	size_t zlen;
	FILE *f = fopen(p, "rb");
	assert_non_null(f);
	unsigned char *z = malloc(len);
	zlen = fread(z, 1, len, f);
	fclose(f);
	z[zlen / 2] ^= 0x55;
	write_file(p, z, zlen);
	d = read_fails(p);
	assert_int_equal(d.status, KP_BADINPUT);
	snprintf(want, sizeof(want), "error: corrupt gzip data in '%s': ", p);
	assert_memory_equal(d.msg, want, strlen(want));
	free(z);
	free(s);
}

static void input_ends_a_cut_gzip_stream_where_it_was_cut(void **state)
{
	(void)state;
	char path[4096];
	snprintf(path, sizeof(path), "%s/bad/truncated.json.gz", testdata());
	struct kp_diag d = { 0 };
	struct kp_input in;
	assert_int_equal(input_open(&in, path, &d), 0);
	size_t n;
	char *r = read_all(&in, 7, &n, &d);
	assert_non_null(r);
	assert_int_equal(in.truncated, 1);
	assert_int_equal(in.trunc_out, (long long)n);
	FILE *f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	assert_int_equal(in.trunc_raw, ftell(f));
	fclose(f);
	assert_memory_equal(r, "{\n  \"schemaVersion\": 1,", 23);
	input_close(&in);
	free(r);

	/* every cut of a small stream, including inside the 8-byte trailer, returns a prefix */
	const char *doc = "{\"traceEvents\": []}";
	const char *p = tmp_path("cut.json.gz");
	write_gz(p, doc, 19, 1);
	f = fopen(p, "rb");
	unsigned char z[256];
	size_t zlen = fread(z, 1, sizeof(z), f);
	fclose(f);
	for (size_t cut = 10; cut < zlen; cut++) {
		write_file(p, z, cut);
		assert_int_equal(input_open(&in, p, &d), 0);
		r = read_all(&in, 4096, &n, &d);
		assert_non_null(r);
		assert_true(n <= 19);
		assert_memory_equal(r, doc, n);
		assert_int_equal(in.truncated, 1);
		assert_int_equal(in.trunc_raw, (long long)cut);
		input_close(&in);
		free(r);
	}
	write_file(p, z, zlen);
	assert_int_equal(input_open(&in, p, &d), 0);
	r = read_all(&in, 4096, &n, &d);
	assert_int_equal(n, 19);
	assert_int_equal(in.truncated, 0);
	input_close(&in);
	free(r);
}

struct src {
	struct kp_input in;
	struct kp_diag d;
};

static ssize_t src_read(void *ctx, void *buf, size_t cap)
{
	struct src *s = ctx;
	return input_read(&s->in, buf, cap, &s->d);
}

static void input_feeds_the_tokenizer(void **state)
{
	(void)state;
	const char *doc = "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 4795881956492.880}]}\n";
	const char *p = tmp_path("feed.json.gz");
	write_gz(p, doc, strlen(doc), 1);
	struct src s = { 0 };
	assert_int_equal(input_open(&s.in, p, &s.d), 0);
	struct kp_json j;
	struct kp_json_tok t;
	json_init(&j, src_read, &s, 16);
	int64_t ns = 0;
	enum kp_json_type ty;
	while ((ty = json_next(&j, &t)) != JT_END && ty != JT_ERROR)
		if (ty == JT_NUM)
			assert_int_equal(json_num_us_to_ns(t.s, t.len, &ns), 0);
	assert_int_equal(ty, JT_END);
	assert_int_equal(ns, 4795881956492880LL);
	json_free(&j);
	input_close(&s.in);

	/* a corrupt stream surfaces as a read error with the input's message */
	char path[4096];
	snprintf(path, sizeof(path), "%s/bad/corrupt.json.gz", testdata());
	memset(&s, 0, sizeof(s));
	assert_int_equal(input_open(&s.in, path, &s.d), 0);
	json_init(&j, src_read, &s, 0);
	while ((ty = json_next(&j, &t)) != JT_END && ty != JT_ERROR)
		;
	assert_int_equal(ty, JT_ERROR);
	assert_int_equal(j.read_failed, 1);
	assert_int_equal(s.d.status, KP_BADINPUT);
	json_free(&j);
	input_close(&s.in);
}

/* A CRC error at the end of a member: every inflated byte comes first, then the error. */
static void input_returns_the_bytes_inflated_before_a_gzip_error(void **state)
{
	(void)state;
	char path[512], text[4000];
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (char)('a' + i % 26);
	snprintf(path, sizeof(path), "%s/crc.json.gz", tmpdir);
	gzFile g = gzopen(path, "wb");
	gzwrite(g, text, sizeof(text));
	gzclose(g);
	/* break the CRC-32 in the trailer (8 bytes before the end) */
	int fd = open(path, O_RDWR);
	off_t end = lseek(fd, 0, SEEK_END);
	unsigned char b;
	assert_int_equal(pread(fd, &b, 1, end - 8), 1);
	b ^= 0xff;
	assert_int_equal(pwrite(fd, &b, 1, end - 8), 1);
	close(fd);
	for (size_t cap = 1000; cap <= 8000; cap += 7000) {
		struct kp_input in;
		struct kp_diag d = { 0 };
		assert_int_equal(input_open(&in, path, &d), 0);
		char buf[8000];
		size_t got = 0;
		ssize_t n;
		while ((n = input_read(&in, buf + got,
				       cap < sizeof(buf) - got ? cap : sizeof(buf) - got, &d)) > 0)
			got += (size_t)n;
		assert_int_equal(n, -1);
		assert_int_equal(got, sizeof(text)); /* whatever the read size */
		assert_memory_equal(buf, text, sizeof(text));
		assert_int_equal(d.status, KP_BADINPUT);
		assert_non_null(strstr(d.msg, "corrupt gzip data"));
		assert_int_equal(input_read(&in, buf, cap, &d), -1); /* and again */
		input_close(&in);
	}
}

/* One whole read of a gzip file: the stream, how it ended, and the inflater at open and end. */
struct gz_run {
	char *bytes;
	size_t n;
	ssize_t last; /* 0 at the end, -1 on an error */
	struct kp_diag d;
	int truncated;
	long long trunc_raw, trunc_out, raw, out;
	const char *first, *final; /* in.inflater after input_open and at the end */
};

static struct gz_run gz_read_with(const char *path, int zlib_only, size_t step)
{
	struct gz_run g = { 0 };
	if (zlib_only)
		setenv("KPROF_INFLATE", "zlib", 1);
	else
		unsetenv("KPROF_INFLATE");
	struct kp_input in;
	assert_int_equal(input_open(&in, path, &g.d), 0);
	unsetenv("KPROF_INFLATE");
	assert_int_equal(in.is_gzip, 1);
	g.first = in.inflater;
	size_t cap = 1 << 16;
	g.bytes = malloc(cap);
	for (;;) {
		if (cap - g.n < step)
			g.bytes = realloc(g.bytes, cap = cap * 2 + step);
		g.last = input_read(&in, g.bytes + g.n, step, &g.d);
		if (g.last <= 0)
			break;
		g.n += (size_t)g.last;
	}
	g.truncated = in.truncated;
	g.trunc_raw = in.trunc_raw;
	g.trunc_out = in.trunc_out;
	g.raw = in.raw_bytes;
	g.out = in.out_bytes;
	g.final = in.inflater;
	input_close(&in);
	return g;
}

/* @z (@zlen bytes) read with ISA-L and with zlib only, in reads of 4 KiB and 1 MiB: the same. */
static const char *gz_same_both_ways(const unsigned char *z, size_t zlen)
{
	const char *p = tmp_path("both.json.gz");
	write_file(p, z, zlen);
	const char *final = NULL;
	for (size_t step = 4096; step <= (1 << 20); step <<= 8) {
		struct gz_run a = gz_read_with(p, 0, step), b = gz_read_with(p, 1, step);
		assert_string_equal(a.first, "isal"); /* libisal2 comes with make deps */
		assert_string_equal(b.first, "zlib");
		assert_string_equal(b.final, "zlib");
		assert_int_equal(a.last, b.last);
		assert_int_equal(a.n, b.n);
		assert_memory_equal(a.bytes, b.bytes, a.n);
		assert_int_equal(a.d.status, b.d.status);
		assert_string_equal(a.d.msg, b.d.msg);
		assert_int_equal(a.truncated, b.truncated);
		assert_int_equal(a.trunc_raw, b.trunc_raw);
		assert_int_equal(a.trunc_out, b.trunc_out);
		if (a.last == 0) /* at an error, compressed bytes read ahead differ: not shown */
			assert_int_equal(a.raw, b.raw);
		assert_int_equal(a.out, b.out);
		final = a.final;
		free(a.bytes);
		free(b.bytes);
	}
	return final;
}

/*
 * ISA-L inflates regular gzip files; whatever it does not finish cleanly (a cut, a corrupt
 * member, a header only zlib refuses) zlib inflates again, so the stream, the cut offsets and
 * the messages are zlib's for every variant of a three-member file.
 */
static void input_inflates_gzip_with_isal_as_zlib_does(void **state)
{
	(void)state;
	size_t len = 900000; /* members of ~170 kB compressed: several input buffers in all */
	char *s = gen_text(len);
	const char *p = tmp_path("three.json.gz");
	write_gz(p, s, len, 3);
	size_t zlen;
	unsigned char *z = slurp(p, &zlen);
	unsigned char *t = malloc(zlen + 16);
	/* where the second member starts: its magic after the first one's deflate data */
	size_t m2 = 10;
	while (!(z[m2] == 0x1f && z[m2 + 1] == 0x8b && z[m2 + 2] == 8))
		m2++;

	assert_string_equal(gz_same_both_ways(z, zlen), "isal");
	/* bytes after the last member: ignored, also a lone magic byte */
	memcpy(t, z, zlen);
	memcpy(t + zlen, "\0\0\0\0\0\0\0\0", 8);
	assert_string_equal(gz_same_both_ways(t, zlen + 8), "isal");
	t[zlen] = 0x1f;
	assert_string_equal(gz_same_both_ways(t, zlen + 1), "isal");
	/* cut: in the first header, mid-data, in a trailer, in the next header; between members
	 * and after a lone magic byte the stream just ends (no cut member, ISA-L to the end) */
	size_t cuts[] = { 2,  3,      5,      100,    m2 / 2,   m2 - 5,
			  m2, m2 + 1, m2 + 2, m2 + 7, zlen / 2, zlen - 1 };
	for (size_t k = 0; k < sizeof(cuts) / sizeof(cuts[0]); k++) {
		const char *final = gz_same_both_ways(z, cuts[k]);
		if (cuts[k] == m2 || cuts[k] == m2 + 1)
			assert_string_equal(final, "isal");
		else
			assert_string_equal(final, "zlib");
	}
	/* corrupt: CRC, length, data of each member, second member's method and flags */
	size_t flips[] = { m2 - 8, m2 - 1, zlen - 8, zlen - 1, 20, m2 / 2, m2 + 300, zlen - 500 };
	for (size_t k = 0; k < sizeof(flips) / sizeof(flips[0]); k++) {
		memcpy(t, z, zlen);
		t[flips[k]] ^= 0x55;
		assert_string_equal(gz_same_both_ways(t, zlen), "zlib");
	}
	memcpy(t, z, zlen);
	t[m2 + 2] = 7; /* method */
	assert_string_equal(gz_same_both_ways(t, zlen), "zlib");
	memcpy(t, z, zlen);
	t[m2 + 3] |= 0x20; /* a reserved flag: ISA-L would read on, zlib refuses */
	assert_string_equal(gz_same_both_ways(t, zlen), "zlib");
	free(t);
	free(z);
	free(s);
}

/* The magic peek (4 bytes) is given back whole for plain files shorter than it. */
static void input_returns_short_plain_files_whole(void **state)
{
	(void)state;
	const char *texts[] = { "[", "[]", "[1]", "[12]", "[123]", "\x28\xb5\x2f" };
	for (size_t k = 0; k < sizeof(texts) / sizeof(texts[0]); k++) {
		const char *p = tmp_path("short.json");
		write_file(p, texts[k], strlen(texts[k]));
		struct kp_input in;
		struct kp_diag d = { 0 };
		assert_int_equal(input_open(&in, p, &d), 0);
		assert_null(in.codec);
		for (size_t step = 1; step <= 5; step += 4) {
			size_t n;
			char *r = read_all(&in, step, &n, &d);
			assert_non_null(r);
			assert_int_equal(n, step == 1 ? strlen(texts[k]) : 0);
			assert_memory_equal(r, texts[k], n);
			free(r);
		}
		input_close(&in);
	}
}

/* input_pread(): any range of a plain file, short only at its end, the read position unmoved */
static void input_preads_ranges_of_a_plain_file(void **state)
{
	(void)state;
	size_t size = 100000;
	char *s = gen_text(size);
	const char *path = tmp_path("pread.json");
	write_file(path, s, size);
	struct kp_input in;
	struct kp_diag d = { 0 };
	assert_int_equal(input_open(&in, path, &d), 0);
	char buf[5000];
	const long long offs[] = { 0, 1, 4095, 50000, 96000, 99999, 100000, 200000 };
	for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
		long long want = (long long)size - offs[k];
		want = want<0 ? 0 : want>(long long) sizeof(buf) ? (long long)sizeof(buf) : want;
		assert_int_equal(input_pread(&in, buf, sizeof(buf), offs[k], &d), want);
		assert_memory_equal(buf, s + (want ? offs[k] : 0), (size_t)want);
	}
	assert_int_equal(input_pread(&in, buf, 0, 10, &d), 0);
	size_t n;
	char *r = read_all(&in, 4096, &n, &d); /* the stream still reads from its start */
	assert_int_equal(n, size);
	assert_memory_equal(r, s, n);
	free(r);
	input_close(&in);

	/* a descriptor that cannot be read: status 4, the file named */
	assert_int_equal(input_open(&in, path, &d), 0);
	close(in.fd);
	in.fd = open("/", O_RDONLY | O_DIRECTORY);
	assert_int_equal(input_pread(&in, buf, sizeof(buf), 0, &d), -1);
	assert_int_equal(d.status, KP_ENV);
	assert_non_null(strstr(d.msg, "cannot read"));
	assert_non_null(strstr(d.msg, "pread.json"));
	input_close(&in);
	free(s);
}

static void input_decompresses_zstd_detected_by_magic(void **state)
{
	(void)state;
	size_t len = 700000; /* several 128 KiB blocks */
	char *s = gen_text(len);
	for (int frames = 1; frames <= 3; frames += 2) {
		const char *path = tmp_path("t.json.zst");
		size_t zlen = write_zst(path, s, len, frames);
		for (size_t step = 7; step <= (1 << 20); step *= 397) {
			struct kp_input in;
			struct kp_diag d = { 0 };
			assert_int_equal(input_open(&in, path, &d), 0);
			assert_int_equal(in.is_zstd, 1);
			assert_int_equal(in.is_gzip, 0);
			assert_string_equal(in.codec, "zstd");
			size_t n;
			char *r = read_all(&in, step, &n, &d);
			assert_non_null(r);
			assert_int_equal(n, len);
			assert_memory_equal(r, s, len);
			assert_int_equal(in.truncated, 0);
			assert_int_equal(in.raw_bytes, (long long)zlen);
			assert_int_equal(in.out_bytes, (long long)len);
			input_close(&in);
			free(r);
		}
	}
	free(s);
}

static void input_reads_zstd_from_stdin(void **state)
{
	(void)state;
	size_t len = 300000;
	char *s = gen_text(len);
	const char *path = tmp_path("stdin.json.zst");
	write_zst(path, s, len, 2);
	/* through a pipe, in writes of 3 bytes: the magic comes in two reads */
	int saved;
	pid_t pid = stdin_from_pipe(path, 3, &saved);

	struct kp_input in;
	struct kp_diag d = { 0 };
	assert_int_equal(input_open(&in, "-", &d), 0);
	assert_int_equal(in.is_zstd, 1);
	size_t n;
	char *r = read_all(&in, 1 << 20, &n, &d);
	input_close(&in);
	stdin_restore(saved, pid);
	assert_non_null(r);
	assert_int_equal(n, len);
	assert_memory_equal(r, s, n);
	free(r);
	free(s);
}

/* An empty frame is an empty stream; the magic alone is a cut frame. */
static void input_reads_an_empty_zstd_stream(void **state)
{
	(void)state;
	const char *p = tmp_path("empty.json.zst");
	size_t zlen = write_zst(p, "", 0, 1);
	struct kp_input in;
	struct kp_diag d = { 0 };
	assert_int_equal(input_open(&in, p, &d), 0);
	assert_int_equal(in.is_zstd, 1);
	size_t n;
	char *r = read_all(&in, 4096, &n, &d);
	assert_non_null(r);
	assert_int_equal(n, 0);
	assert_int_equal(in.truncated, 0);
	assert_int_equal(in.raw_bytes, (long long)zlen);
	input_close(&in);
	free(r);

	write_file(p, "\x28\xb5\x2f\xfd", 4);
	assert_int_equal(input_open(&in, p, &d), 0);
	assert_int_equal(in.is_zstd, 1);
	r = read_all(&in, 4096, &n, &d);
	assert_non_null(r);
	assert_int_equal(n, 0);
	assert_int_equal(in.truncated, 1);
	assert_int_equal(in.trunc_raw, 4);
	assert_int_equal(in.trunc_out, 0);
	input_close(&in);
	free(r);
}

static void input_ends_a_cut_zstd_stream_where_it_was_cut(void **state)
{
	(void)state;
	/* every cut of a small stream, in the header, the block and the checksum: a prefix */
	const char *doc = "{\"traceEvents\": []}";
	const char *p = tmp_path("cut.json.zst");
	size_t zlen = write_zst(p, doc, 19, 1);
	size_t blen;
	unsigned char *z = slurp(p, &blen);
	assert_int_equal(blen, zlen);
	struct kp_input in;
	struct kp_diag d = { 0 };
	size_t n;
	char *r;
	for (size_t cut = 4; cut < zlen; cut++) {
		write_file(p, z, cut);
		assert_int_equal(input_open(&in, p, &d), 0);
		r = read_all(&in, 4096, &n, &d);
		assert_non_null(r);
		assert_true(n <= 19);
		assert_memory_equal(r, doc, n);
		assert_int_equal(in.truncated, 1);
		assert_int_equal(in.trunc_raw, (long long)cut);
		assert_int_equal(in.trunc_out, (long long)n);
		input_close(&in);
		free(r);
	}
	free(z);

	/* a large stream cut in its middle (in the second of 2 frames): the blocks before */
	size_t len = 900000;
	char *s = gen_text(len);
	zlen = write_zst(p, s, len, 2);
	z = slurp(p, &blen);
	size_t cut = zlen * 3 / 4;
	write_file(p, z, cut);
	for (size_t step = 7; step <= (1 << 20); step *= 397) {
		assert_int_equal(input_open(&in, p, &d), 0);
		r = read_all(&in, step, &n, &d);
		assert_non_null(r);
		assert_true(n > len / 2 && n < len);
		assert_memory_equal(r, s, n);
		assert_int_equal(in.truncated, 1);
		assert_int_equal(in.trunc_raw, (long long)cut);
		assert_int_equal(in.trunc_out, (long long)n);
		input_close(&in);
		free(r);
	}
	free(z);
	free(s);
}

/*
 * Read zstd @path to the end: the same bytes for any read size, then the error.  They are @s's
 * up to the damage at @s[want_min], less at most one output block: libzstd drops what the
 * failing call decoded (and a corrupt block may decode to wrong bytes before its checksum).
 */
static struct kp_diag zst_read_fails(const char *path, const char *s, size_t want_min)
{
	struct kp_diag d = { 0 };
	size_t first = (size_t)-1;
	size_t lo = want_min > (128 << 10) ? want_min - (128 << 10) : 0;
	for (size_t step = 7; step <= (1 << 20); step *= 397) {
		struct kp_input in;
		memset(&d, 0, sizeof(d));
		assert_int_equal(input_open(&in, path, &d), 0);
		assert_int_equal(in.is_zstd, 1);
		char *buf = malloc(2 << 20);
		size_t got = 0;
		ssize_t n;
		while ((n = input_read(&in, buf + got, step, &d)) > 0)
			got += (size_t)n;
		if (n != -1)
			fail_msg("%s: read %zu bytes (step %zu) without an error", path, got, step);
		if (first == (size_t)-1)
			first = got;
		assert_int_equal(got, first);
		assert_true(got >= lo);
		assert_memory_equal(buf, s, got < want_min ? got : want_min);
		assert_int_equal(input_read(&in, buf, step, &d), -1); /* and again */
		input_close(&in);
		free(buf);
	}
	return d;
}

static void input_rejects_corrupt_zstd_naming_the_file(void **state)
{
	(void)state;
	size_t len = 500000;
	char *s = gen_text(len);
	const char *p = tmp_path("corrupt.json.zst");
	char want[600];
	snprintf(want, sizeof(want), "error: corrupt zstd data in '%s': ", p);

	/* a flipped byte in the second frame: the first frame's bytes come first */
	size_t zlen = write_zst(p, s, len, 2), blen;
	unsigned char *z = slurp(p, &blen);
	z[zlen * 3 / 4] ^= 0x55;
	write_file(p, z, zlen);
	struct kp_diag d = zst_read_fails(p, s, len / 2);
	assert_int_equal(d.status, KP_BADINPUT);
	assert_memory_equal(d.msg, want, strlen(want));

	/* a broken checksum (the last 4 bytes): every byte of the frame, then the error */
	z[zlen * 3 / 4] ^= 0x55;
	z[zlen - 2] ^= 0xff;
	write_file(p, z, zlen);
	d = zst_read_fails(p, s, len);
	assert_int_equal(d.status, KP_BADINPUT);
	assert_memory_equal(d.msg, want, strlen(want));
	assert_non_null(strstr(d.msg, "checksum"));
	z[zlen - 2] ^= 0xff;

	/* bytes after the last frame that are no frame (as `zstd -d`: an error) */
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	fwrite(z, 1, zlen, f);
	fwrite("\0\0\0\0\0\0\0\0", 1, 8, f);
	fclose(f);
	d = zst_read_fails(p, s, len);
	assert_int_equal(d.status, KP_BADINPUT);
	assert_memory_equal(d.msg, want, strlen(want));

	/* a bad frame header right after the magic: nothing, then the error */
	write_file(p, "\x28\xb5\x2f\xfdxxxxxx", 10); /* a reserved bit set */
	d = zst_read_fails(p, s, 0);
	assert_int_equal(d.status, KP_BADINPUT);
	assert_memory_equal(d.msg, want, strlen(want));
	free(z);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(input_reads_a_plain_file_whole),
		cmocka_unit_test(input_inflates_gzip_detected_by_magic),
		cmocka_unit_test(input_ignores_bytes_after_the_last_gzip_member),
		cmocka_unit_test(input_reads_gzip_from_stdin),
		cmocka_unit_test(input_names_a_missing_file),
		cmocka_unit_test(input_refuses_a_directory),
		cmocka_unit_test(input_rejects_corrupt_gzip_naming_the_file),
		cmocka_unit_test(input_ends_a_cut_gzip_stream_where_it_was_cut),
		cmocka_unit_test(input_feeds_the_tokenizer),
		cmocka_unit_test(input_returns_the_bytes_inflated_before_a_gzip_error),
		cmocka_unit_test(input_inflates_gzip_with_isal_as_zlib_does),
		cmocka_unit_test(input_returns_short_plain_files_whole),
		cmocka_unit_test(input_preads_ranges_of_a_plain_file),
		cmocka_unit_test(input_decompresses_zstd_detected_by_magic),
		cmocka_unit_test(input_reads_zstd_from_stdin),
		cmocka_unit_test(input_reads_an_empty_zstd_stream),
		cmocka_unit_test(input_ends_a_cut_zstd_stream_where_it_was_cut),
		cmocka_unit_test(input_rejects_corrupt_zstd_naming_the_file),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
