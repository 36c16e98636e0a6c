/*
 * test-recfile.c — capture/record/recfile.c without a GPU: the per-process record files of
 * `kprof capture -- <cmd>` merged from their folder (recfile_merge_dir): in pid order, each
 * file's correlation and External ids shifted past the previous ones', leftovers removed, a
 * damaged file skipped.  (The file format's round trip: tests/unit/capture/intercept/test-inject.c.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include <cmocka.h>

#include "record/ctrace.h"
#include "record/recfile.h"

/* one process: a kernel with correlation id @corr linked to External id @ext */
static void save(const char *dir, const char *file, uint32_t pid, const char *kname,
		 uint32_t corr, uint64_t ext, uint64_t start)
{
	struct kp_ctrace t;
	ctrace_init(&t);
	struct kp_rec k = { .kind = REC_KERNEL,
			    .start_ns = start,
			    .end_ns = start + 5000,
			    .corr = corr,
			    .stream = 7,
			    .name = ctrace_intern(&t, kname, strlen(kname)) };
	assert_int_equal(ctrace_add_rec(&t, &k), 0);
	assert_int_equal(ctrace_add_ext(&t, corr, ext), 0);
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(recfile_write(&t, pid, f), 0);
	assert_int_equal(fclose(f), 0);
	ctrace_free(&t);
}

static void put(const char *dir, const char *file, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	for (struct dirent *de; (de = readdir(d));)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static void merge_in_pid_order_with_shifted_ids(void **state)
{
	(void)state;
	char dir[] = "/tmp/kprof-test-recfile-XXXXXX", why[256];
	assert_non_null(mkdtemp(dir));
	/* written out of order: "1000" sorts before "999" as text, not as a pid */
	save(dir, "1000.kprec", 1000, "kernel_b", 3, 40, 2000000);
	save(dir, "999.kprec", 999, "kernel_a", 5, 7, 1000000);
	put(dir, "1001.kprec.tmp", "half written");
	put(dir, "1002.kprec", "KPROFREC but cut short");
	struct kp_ctrace t;
	ctrace_init(&t);
	/* two merged, the damaged one skipped with a warning on the stream given */
	FILE *warn = tmpfile();
	assert_non_null(warn);
	assert_int_equal(recfile_merge_dir(&t, dir, warn, why, sizeof(why)), 2);
	char wtext[600] = "";
	rewind(warn);
	size_t nw = fread(wtext, 1, sizeof(wtext) - 1, warn);
	wtext[nw] = '\0';
	fclose(warn);
	assert_non_null(strstr(wtext, "kprof: warning: skipped "));
	assert_non_null(strstr(wtext, "1002.kprec"));
	assert_null(strstr(wtext, "999.kprec"));
	assert_int_equal(t.nrecs, 2);
	assert_string_equal(t.recs[0].name, "kernel_a");
	assert_string_equal(t.recs[1].name, "kernel_b");
	/* pid 999 first, ids as written; pid 1000's shifted by 999's largest (corr 5, ext 7) */
	assert_int_equal(t.recs[0].corr, 5);
	assert_int_equal(t.recs[1].corr, 3 + 5);
	assert_int_equal(t.next, 2);
	assert_int_equal(t.ext[0].corr, 5);
	assert_int_equal(t.ext[0].ext, 7);
	assert_int_equal(t.ext[1].corr, 8);
	assert_int_equal(t.ext[1].ext, 40 + 7);
	assert_int_equal(t.recs[1].start_ns, 2000000);
	/* every file is consumed, the .tmp leftover and the damaged one included */
	assert_int_equal(entries(dir), 0);
	ctrace_free(&t);
	/* an empty folder merges nothing; a missing one says why */
	ctrace_init(&t);
	assert_int_equal(recfile_merge_dir(&t, dir, NULL, why, sizeof(why)), 0);
	rmdir(dir);
	assert_int_equal(recfile_merge_dir(&t, dir, NULL, why, sizeof(why)), -1);
	char want[300];
	snprintf(want, sizeof(want), "cannot read '%s': No such file or directory", dir);
	assert_string_equal(why, want);
	ctrace_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(merge_in_pid_order_with_shifted_ids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
