/*
 * fuzz-summary.c — libFuzzer harness for src/analysis/summary.c: the input bytes are a
 * per-rank summary (`kprof analyze --ranks -f json`, read back by `kprof merge`; a file
 * anyone may hand over), put in a memfd and loaded by path (/proc/self/fd/N, gzip detected);
 * when it loads, the cross-rank view is built and rendered in every format as merge does
 * (src/cli/cmd-merge.c), with the built-in device table.
 *
 * Checked beyond the sanitizers: 0, or -1 with status 3 (4 for I/O or memory) and a message;
 * every rendering valid UTF-8 without NUL.
 * Build and run: tests/fuzz/run.sh summary.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kprof/devdb.h"
#include "kprof/diag.h"
#include "kprof/doc.h"
#include "kprof/ranks-doc.h"
#include "kprof/ranks.h"
#include "kprof/summary.h"
#include "kprof/table.h"
#include "kprof/utf8.h"

#define FUZZ_NAME "fuzz-summary"
#include "fuzz.h"

static struct kp_devdb db;
static int fd = -1;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct kp_diag d = { 0 };
	(void)argc;
	(void)argv;
	CHECK(devdb_load_builtin(&db, &d) == 0);
	fd = fuzz_memfd(path, sizeof(path));
	return 0;
}

/* @doc rendered in @fmt: valid UTF-8 without NUL */
static void render(const struct kp_doc *doc, enum kp_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK(f != NULL);
	table_render(doc, fmt, 0, f);
	CHECK(fclose(f) == 0);
	CHECK(utf8_is_clean(buf, len));
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_fill(fd, data, size);
	struct kp_ranks rs;
	memset(&rs, 0, sizeof(rs));
	struct kp_diag d = { 0 };
	if (summary_load(&rs, path, &d) < 0) {
		CHECK((d.status == KP_BADINPUT || d.status == KP_ENV) && d.msg[0]);
		ranks_free(&rs);
		return 0;
	}
	struct kp_devchoice dc;
	ranks_device(&rs, &db, NULL, &dc);
	const struct kp_device *dev = dc.dev;
	ranks_compare(&rs, dev && dev->peer_bw_byte_per_s > 0 ? dev->peer_bw_byte_per_s : -1);
	struct kp_doc doc;
	ranks_doc(&rs, dev ? dev->name : dc.name, &doc);
	static const enum kp_format fmts[] = { FMT_TABLE, FMT_CSV, FMT_JSON, FMT_MARKDOWN,
					       FMT_HTML, FMT_SVG };
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++)
		render(&doc, fmts[i]);
	doc_free(&doc);
	ranks_free(&rs);
	return 0;
}
