/*
 * test-inject.c — `kprof capture -- <cmd>` without a GPU: record files (write, read, merge of
 * several processes), argv splitting, the child's environment and exit statuses, and the whole
 * parent run with a command that drops a record file where kprof-inject.so would.
 */
#include <errno.h>
#include <math.h>
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

#include <cmocka.h>

#include "intercept/child.h"
#include "kprof/capture.h"
#include "kprof/diag.h"
#include "kprof/link.h"
#include "kprof/opts.h"
#include "kprof/trace.h"
#include "record/ctrace.h"
#include "record/recfile.h"

#define T0 1795653390000000000ull /* CLOCK_REALTIME ns */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *buf = malloc(n + 1);
	assert_int_equal(fread(buf, 1, n, f), n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* One process's records: a cudaLaunchKernel, its kernel, a memcpy and an External id. */
static void fill_process(struct kp_ctrace *t, uint32_t pid, uint32_t corr0)
{
	ctrace_init(t);
	struct kp_rec api = { .kind = REC_RUNTIME,
			      .start_ns = T0 + 1000,
			      .end_ns = T0 + 5000,
			      .corr = corr0,
			      .cbid = 211,
			      .pid = pid,
			      .tid = pid + 1,
			      .name = ctrace_intern(t, "cudaLaunchKernel", 16) };
	struct kp_rec k = {
		.kind = REC_KERNEL,
		.start_ns = T0 + 20000,
		.end_ns = T0 + 26241,
		.corr = corr0,
		.device = 0,
		.context = 1,
		.stream = 7,
		.grid = { 2, 64, 1 },
		.block = { 128, 1, 1 },
		.regs = 32,
		.smem = 1024,
		.graph_node_id = 41,
		.gext = 9,
		.name = ctrace_intern(t, "void at::native::vectorized_elementwise_kernel<4>()", 51)
	};
	struct kp_rec m = { .kind = REC_MEMCPY,
			    .start_ns = T0 + 30000,
			    .end_ns = T0 + 31000,
			    .corr = corr0 + 1,
			    .stream = 7,
			    .bytes = 4096,
			    .name = ctrace_intern(t, "Memcpy HtoD (Pageable -> Device)", 32) };
	/* a static name, not interned, as recorder_convert gives overhead records */
	struct kp_rec o = { .kind = REC_OVERHEAD,
			    .start_ns = T0 + 100,
			    .end_ns = T0 + 200,
			    .name = ctrace_overhead_name(1 << 16) };
	ctrace_add_rec(t, &api);
	ctrace_add_rec(t, &k);
	ctrace_add_rec(t, &m);
	ctrace_add_rec(t, &o);
	ctrace_add_ext(t, corr0, 77);
	t->cupti_version = 130001;
	t->dropped_records = 2;
}

static void save(struct kp_ctrace *t, uint32_t pid, const char *path)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(recfile_write(t, pid, f), 0);
	assert_int_equal(fclose(f), 0);
}

static void record_file_round_trips(void **state)
{
	(void)state;
	char dir[] = "/tmp/kprof-test-inject-XXXXXX", path[128], why[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/1234.kprec", dir);
	struct kp_ctrace a, b;
	fill_process(&a, 1234, 5);
	save(&a, 1234, path);
	ctrace_init(&b);
	struct kp_recfile_info info;
	assert_int_equal(recfile_read(&b, path, 100, 1000, &info, why, sizeof(why)), 0);
	assert_int_equal(info.pid, 1234);
	assert_int_equal(info.nrecs, 4);
	assert_int_equal(info.next, 1);
	assert_int_equal(info.max_corr, 6);
	assert_int_equal(b.nrecs, 4);
	assert_int_equal(b.cupti_version, 130001);
	assert_int_equal(b.dropped_records, 2);
	for (size_t i = 0; i < 4; i++) {
		const struct kp_rec *x = &a.recs[i], *y = &b.recs[i];
		assert_int_equal(y->kind, x->kind);
		assert_true(y->start_ns == x->start_ns && y->end_ns == x->end_ns);
		/* correlation ids move by the base; 0 (no correlation) stays 0 */
		assert_int_equal(y->corr, x->corr ? x->corr + 100 : 0);
		assert_string_equal(y->name, x->name);
		assert_int_equal(y->grid[1], x->grid[1]);
		assert_int_equal(y->bytes, x->bytes);
		assert_int_equal(y->tid, x->tid);
		/* External ids of graph-node ops move by the External-id base */
		assert_int_equal(y->gext, x->gext ? x->gext + 1000 : 0);
	}
	/* names are interned in the reader's trace, not pointers into the writer's */
	assert_ptr_equal(b.recs[0].name, ctrace_intern(&b, "cudaLaunchKernel", 16));
	assert_int_equal(b.next, 1);
	assert_int_equal(b.ext[0].corr, 105);
	assert_int_equal(b.ext[0].ext, 1077);
	ctrace_free(&a);
	ctrace_free(&b);
	unlink(path);
	rmdir(dir);
}

/* Host calls of every kind survive the record file: cuDNN attention graphs and other graphs too. */
static void host_calls_of_every_kind_round_trip(void **state)
{
	(void)state;
	char dir[] = "/tmp/kprof-test-inject-XXXXXX", path[128], why[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/1234.kprec", dir);
	struct kp_ctrace a, b;
	fill_process(&a, 1234, 5);
	int kinds[] = { HC_GEMM, HC_NVTX_PUSH, HC_NVTX_START, HC_CONV, HC_SDPA, HC_CUDNN_GRAPH };
	int n = (int)(sizeof(kinds) / sizeof(kinds[0]));
	for (int i = 0; i < n; i++) {
		struct kp_hcall c;
		memset(&c, 0, sizeof(c));
		c.kind = kinds[i];
		c.name = "cudnnBackendExecute";
		c.start_ns = T0 + 1000 * (uint64_t)i, c.end_ns = c.start_ns + 500;
		c.pid = c.tid = 1234;
		c.sdpa_flags = SDPA_F_CAUSAL | SDPA_F_BWD;
		c.sd[SD_SK] = 512;
		assert_int_equal(ctrace_add_hcall(&a, &c), 0);
	}
	save(&a, 1234, path);
	ctrace_init(&b);
	struct kp_recfile_info info;
	assert_int_equal(recfile_read(&b, path, 100, 1000, &info, why, sizeof(why)), 0);
	assert_int_equal(b.nhcalls, n);
	for (int i = 0; i < n; i++) {
		assert_int_equal(b.hcalls[i].kind, kinds[i]);
		assert_int_equal(b.hcalls[i].sdpa_flags, SDPA_F_CAUSAL | SDPA_F_BWD);
		assert_int_equal(b.hcalls[i].sd[SD_SK], 512);
		assert_string_equal(b.hcalls[i].name, "cudnnBackendExecute");
	}
	ctrace_free(&a);
	ctrace_free(&b);
	unlink(path);
	rmdir(dir);
}

/* --metrics run files: range values and their window survive; merged after another process's,
 * the window's first range and its record range move past the earlier ones */
static void metric_values_round_trip(void **state)
{
	(void)state;
	char dir[] = "/tmp/kprof-test-inject-XXXXXX", path[128], why[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/77.kprec", dir);
	struct kp_ctrace a, b;
	fill_process(&a, 77, 1);
	a.kmet = calloc(3, sizeof(*a.kmet));
	a.mwin = calloc(1, sizeof(*a.mwin));
	assert_true(a.kmet && a.mwin);
	for (int i = 0; i < 3; i++)
		for (int k = 0; k < KM_N; k++)
			a.kmet[i].v[k] = k == KM_FFMA ? 1000.0 * (i + 1) : NAN;
	a.nkmet = 3;
	a.mwin[0] = (struct kp_mwin){ .t0_ns = 0, .t1_ns = UINT64_MAX, .first = 0, .n = 3 };
	snprintf(a.mwin[0].label, sizeof(a.mwin[0].label), "process 77");
	a.nmwin = 1;
	save(&a, 77, path);
	/* the reader already holds one process with one range */
	fill_process(&b, 5, 1);
	b.kmet = calloc(1, sizeof(*b.kmet));
	assert_non_null(b.kmet);
	b.nkmet = 1;
	struct kp_recfile_info info;
	assert_int_equal(recfile_read(&b, path, 10, 0, &info, why, sizeof(why)), 0);
	assert_int_equal(info.nkmet, 3);
	assert_int_equal(info.nmwin, 1);
	assert_int_equal(b.nkmet, 4);
	assert_int_equal(b.nmwin, 1);
	assert_true(b.kmet[2].v[KM_FFMA] == 2000.0 && isnan(b.kmet[2].v[KM_FADD]));
	assert_int_equal(b.mwin[0].first, 1);
	assert_int_equal(b.mwin[0].n, 3);
	assert_int_equal(b.mwin[0].rec_lo, 4);
	assert_int_equal(b.mwin[0].rec_hi, 8);
	assert_string_equal(b.mwin[0].label, "process 77");
	/* a window past its file's ranges is corrupt */
	a.mwin[0].n = 4;
	save(&a, 77, path);
	size_t nrecs = b.nrecs;
	assert_int_equal(recfile_read(&b, path, 10, 0, &info, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "corrupt metrics window"));
	assert_int_equal(b.nrecs, nrecs);
	ctrace_free(&a);
	ctrace_free(&b);
	unlink(path);
	rmdir(dir);
}

/* Occurrences of @s in the @n bytes at @buf */
static int count_in(const char *buf, size_t n, const char *s)
{
	int k = 0;
	size_t len = strlen(s);
	for (const char *p = buf; (p = memmem(p, n - (size_t)(p - buf), s, len)); p += len)
		k++;
	return k;
}

/*
 * A name that records and host calls share is written once (names are interned: one pointer,
 * one string); a host call's missing domain stays missing, and its External id moves by the
 * base as the correlation pairs' do.
 */
static void record_files_hold_each_name_once(void **state)
{
	(void)state;
	char dir[] = "/tmp/kprof-test-inject-XXXXXX", path[128], why[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/9.kprec", dir);
	struct kp_ctrace a, b;
	fill_process(&a, 9, 3);
	const char *kname = "void at::native::vectorized_elementwise_kernel<4>()";
	const char *k = ctrace_intern(&a, kname, strlen(kname));
	struct kp_rec r = { .kind = REC_KERNEL,
			    .start_ns = T0 + 40000,
			    .end_ns = T0 + 41000,
			    .corr = 9,
			    .name = k };
	assert_int_equal(ctrace_add_rec(&a, &r), 0);
	struct kp_hcall c;
	memset(&c, 0, sizeof(c));
	c.kind = HC_NVTX_PUSH, c.name = k, c.domain = ctrace_intern(&a, "kprof-domain", 12);
	c.ext = 40, c.start_ns = T0, c.end_ns = T0 + 10;
	assert_int_equal(ctrace_add_hcall(&a, &c), 0);
	c.name = c.domain = NULL, c.ext = 0;
	assert_int_equal(ctrace_add_hcall(&a, &c), 0);
	save(&a, 9, path);
	char *file = NULL;
	size_t n = 0;
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char chunk[4096];
	FILE *m = open_memstream(&file, &n);
	for (size_t got; (got = fread(chunk, 1, sizeof(chunk), f)) > 0;)
		fwrite(chunk, 1, got, m);
	fclose(f);
	fclose(m);
	assert_int_equal(count_in(file, n, kname), 1);
	assert_int_equal(count_in(file, n, "kprof-domain"), 1);
	assert_int_equal(count_in(file, n, "cudaLaunchKernel"), 1);
	free(file);
	ctrace_init(&b);
	struct kp_recfile_info info;
	assert_int_equal(recfile_read(&b, path, 100, 1000, &info, why, sizeof(why)), 0);
	assert_int_equal(b.nrecs, 5);
	assert_string_equal(b.recs[4].name, kname);
	assert_int_equal(b.recs[4].corr, 109);
	assert_int_equal(b.nhcalls, 2);
	assert_string_equal(b.hcalls[0].name, kname);
	assert_string_equal(b.hcalls[0].domain, "kprof-domain");
	assert_int_equal(b.hcalls[0].ext, 1040);
	assert_string_equal(b.hcalls[1].name, ""); /* as ctrace_add_hcall() names it */
	assert_null(b.hcalls[1].domain);
	assert_int_equal(b.hcalls[1].ext, 0);
	assert_int_equal(b.next, 1);
	assert_int_equal(b.ext[0].corr, 103);
	assert_int_equal(b.ext[0].ext, 1077);
	assert_int_equal(info.max_ext, 77);
	assert_int_equal(info.max_corr, 9);
	assert_int_equal(info.nhcalls, 2);
	ctrace_free(&a);
	ctrace_free(&b);
	unlink(path);
	rmdir(dir);
}

static void corrupt_record_files_are_rejected_whole(void **state)
{
	(void)state;
	char dir[] = "/tmp/kprof-test-inject-XXXXXX", path[128], why[256], expect[300];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/9.kprec", dir);
	struct kp_ctrace a, b;
	struct kp_recfile_info info;
	fill_process(&a, 9, 1);
	save(&a, 9, path);
	/* cut the last External-id record in half */
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(truncate(path, st.st_size - 8), 0);
	ctrace_init(&b);
	assert_int_equal(recfile_read(&b, path, 0, 0, &info, why, sizeof(why)), -1);
	snprintf(expect, sizeof(expect), "'%s': truncated kprof record file", path);
	assert_string_equal(why, expect);
	assert_int_equal(b.nrecs, 0);
	FILE *f = fopen(path, "wb");
	fputs("{\"traceEvents\":[]}\n", f);
	fclose(f);
	assert_int_equal(recfile_read(&b, path, 0, 0, &info, why, sizeof(why)), -1);
	snprintf(expect, sizeof(expect), "'%s': truncated kprof record file", path);
	assert_string_equal(why, expect);
	f = fopen(path, "wb");
	char junk[256];
	memset(junk, 'x', sizeof(junk));
	fwrite(junk, 1, sizeof(junk), f);
	fclose(f);
	assert_int_equal(recfile_read(&b, path, 0, 0, &info, why, sizeof(why)), -1);
	snprintf(expect, sizeof(expect), "'%s': not a kprof record file of this version", path);
	assert_string_equal(why, expect);
	assert_int_equal(b.nrecs, 0);
	ctrace_free(&a);
	ctrace_free(&b);
	unlink(path);
	rmdir(dir);
}

static void processes_merge_in_pid_order_with_distinct_correlations(void **state)
{
	(void)state;
	char dir[] = "/tmp/kprof-test-inject-XXXXXX", path[128], why[256];
	assert_non_null(mkdtemp(dir));
	struct kp_ctrace p1, p2, t;
	fill_process(&p1, 300, 1); /* corr 1, 2 */
	fill_process(&p2, 40, 1);  /* the same ids in another process */
	snprintf(path, sizeof(path), "%s/300.kprec", dir);
	save(&p1, 300, path);
	snprintf(path, sizeof(path), "%s/40.kprec", dir);
	save(&p2, 40, path);
	snprintf(path, sizeof(path), "%s/41.kprec.tmp", dir); /* a writer killed half-way */
	FILE *f = fopen(path, "w");
	fputs("KPROFREC", f);
	fclose(f);
	ctrace_init(&t);
	assert_int_equal(recfile_merge_dir(&t, dir, stderr, why, sizeof(why)), 2);
	assert_int_equal(t.nrecs, 8);
	/* pid 40 first with its own ids, then pid 300 after the largest id of pid 40 */
	assert_int_equal(t.recs[0].pid, 41 - 1);
	assert_int_equal(t.recs[0].corr, 1);
	assert_int_equal(t.recs[2].corr, 2);
	assert_int_equal(t.recs[4].pid, 300);
	assert_int_equal(t.recs[4].corr, 3);
	assert_int_equal(t.recs[5].corr, 3);
	assert_int_equal(t.recs[6].corr, 4);
	assert_int_equal(t.next, 2);
	assert_int_equal(t.ext[1].corr, 3);
	assert_int_equal(t.dropped_records, 4);
	/* the files are gone, so the directory can be removed */
	assert_int_equal(rmdir(dir), 0);
	assert_int_equal(recfile_merge_dir(&t, dir, stderr, why, sizeof(why)), -1);
	ctrace_free(&p1);
	ctrace_free(&p2);
	ctrace_free(&t);
}

static void argv_splits_at_the_first_double_dash(void **state)
{
	(void)state;
	char *argv[] = { "capture",      "-o", "t.json", "--", "python3", "-c",
			 "import torch", "--", "-o",     "x",  NULL };
	char **cmd;
	int argc = capture_split_argv(10, argv, &cmd);
	assert_int_equal(argc, 3);
	assert_null(argv[3]);
	assert_non_null(cmd);
	const char *want[] = { "python3", "-c", "import torch", "--", "-o", "x" };
	for (int i = 0; i < 6; i++)
		assert_string_equal(cmd[i], want[i]);
	assert_null(cmd[6]);
	/* the options before it parse as usual and leave the command alone */
	const char *out = NULL;
	/* clang-format off */
	const struct kp_opt table[] = {
		{ .lname = "output", .sname = 'o', .type = OPT_STR, .argname = "FILE", .help = "",
		  .dst = &out },
		{ .lname = NULL },
	};
	/* clang-format on */
	int nargs = -1;
	assert_int_equal(opts_parse("capture", "", table, argc, argv, &nargs), 0);
	assert_int_equal(nargs, 0);
	assert_string_equal(out, "t.json");
	assert_string_equal(cmd[1], "-c");

	char *plain[] = { "capture", "-o", "t.json", NULL };
	assert_int_equal(capture_split_argv(3, plain, &cmd), 3);
	assert_null(cmd);
	char *empty[] = { "capture", "-o", "t.json", "--", NULL };
	assert_int_equal(capture_split_argv(4, empty, &cmd), 3);
	assert_non_null(cmd);
	assert_null(cmd[0]);
	struct kp_capture_opts o = { .output = "t.json", .sample_period_ms = 10, .cmd = cmd };
	char why[128];
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_string_equal(why, "missing command after '--'");
	o.cmd = argv + 4;
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), 0);
	assert_int_equal(o.nmm, 0); /* no workload shapes in command mode */
}

static void child_env_replaces_and_appends(void **state)
{
	(void)state;
	char *env[] = { "PATH=/bin", "CUDA_INJECTION64_PATH=/opt/nsys/libinj.so", "CUDA_X=1",
			NULL };
	char *set[] = { "CUDA_INJECTION64_PATH=/k/kprof-inject.so", "KPROF_INJECT_DIR=/tmp/d",
			NULL };
	char **e = child_env(env, set);
	assert_non_null(e);
	assert_string_equal(e[0], "PATH=/bin");
	assert_string_equal(e[1], "CUDA_X=1");
	assert_string_equal(e[2], "CUDA_INJECTION64_PATH=/k/kprof-inject.so");
	assert_string_equal(e[3], "KPROF_INJECT_DIR=/tmp/d");
	assert_null(e[4]);
	free(e);
}

/* Spawn @argv with this environment; the exit status kprof would return. */
static int status_of(char **argv, int *err)
{
	extern char **environ;
	pid_t pid;
	if (child_spawn(argv, environ, &pid, err) < 0)
		return pid ? child_exec_status(*err) : -1;
	return child_exit_status(child_wait(pid));
}

static void exit_status_follows_bash_and_env(void **state)
{
	(void)state;
	int err = 0;
	char *exit3[] = { "sh", "-c", "exit 3", NULL };
	assert_int_equal(status_of(exit3, &err), 3);
	char *ok[] = { "true", NULL };
	assert_int_equal(status_of(ok, &err), 0);
	char *killed[] = { "sh", "-c", "kill -9 $$", NULL };
	assert_int_equal(status_of(killed, &err), 128 + 9);
	char *term[] = { "sh", "-c", "kill -TERM $$", NULL };
	assert_int_equal(status_of(term, &err), 128 + 15);
	char *missing[] = { "/nonexistent/kprof-no-such-command", NULL };
	assert_int_equal(status_of(missing, &err), 127);
	assert_int_equal(err, ENOENT);
	char *missing_path[] = { "kprof-no-such-command-on-path", NULL };
	assert_int_equal(status_of(missing_path, &err), 127);
	/* a file without execute permission */
	char path[] = "/tmp/kprof-test-inject-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	char *noexec[] = { path, NULL };
	assert_int_equal(status_of(noexec, &err), 126);
	assert_int_equal(err, EACCES);
	unlink(path);
	assert_int_equal(child_exec_status(ENOTDIR), 127);
	assert_int_equal(child_exec_status(ENOEXEC), 126);
}

/* @msgs ends in the line @want (before it: NVML's warning where there is no GPU) */
static void assert_last_line(const char *msgs, const char *want)
{
	size_t n = strlen(msgs), w = strlen(want);
	assert_true(n >= w);
	assert_string_equal(msgs + n - w, want);
	assert_true(n == w || msgs[n - w - 1] == '\n');
}

/*
 * The whole parent: a command that is no CUDA program writes a record file where
 * kprof-inject.so would, then fails; kprof still merges and writes the trace, and returns
 * the command's status.
 */
static void command_run_writes_the_trace_and_keeps_the_status(void **state)
{
	(void)state;
	struct kp_diag d;
	char rec[] = "/tmp/kprof-test-inject-XXXXXX", out[64], script[512];
	int fd = mkstemp(rec);
	assert_true(fd >= 0);
	close(fd);
	struct kp_ctrace p;
	fill_process(&p, 4242, 1);
	save(&p, 4242, rec);
	ctrace_free(&p);
	snprintf(out, sizeof(out), "%s.json", rec);
	snprintf(script, sizeof(script),
		 "test \"$CUDA_INJECTION64_PATH\" = /nonexistent/kprof-inject.so || exit 9; "
		 "cp %s \"$KPROF_INJECT_DIR/4242.kprec\" && exit 5",
		 rec);
	char *cmd[] = { "/bin/sh", "-c", script, NULL };
	struct kp_capture_opts o = { .output = out,
				     .sample_period_ms = 10,
				     .cmd = cmd,
				     .inject_so = "/nonexistent/kprof-inject.so" };
	assert_int_equal(capture_run_cmd(&o, &d), 5);
	char *j = slurp(out);
	assert_non_null(strstr(j, "\"command\":[\"/bin/sh\",\"-c\",\"test "));
	assert_non_null(strstr(j, "\"processes\":1,\"exit_status\":5"));
	assert_non_null(strstr(j, "\"cupti_version\":130001"));
	assert_non_null(strstr(j, "\"dropped_records\":2"));
	assert_non_null(strstr(j,
			       "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0.100,\"pid\":4242,"
			       "\"tid\":0,\"args\":{\"name\":\"sh\"}}"));
	assert_non_null(
		strstr(j, "\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":4242,"
			  "\"tid\":4243"));
	assert_non_null(strstr(j, "{\"ph\":\"f\",\"id\":1,\"pid\":0,\"tid\":7"));
	assert_string_equal(d.msg, "");
	struct kp_trace tr;
	memset(&tr, 0, sizeof(tr));
	struct kp_load_opts lo = { 0 };
	assert_int_equal(trace_load(&tr, out, &lo, &d), 0);
	link_trace(&tr);
	assert_int_equal(tr.ngpu, 2);
	assert_int_equal(tr.nlaunches, 1);
	assert_true(tr.kprof_trace);
	trace_free(&tr);
	free(j);
	unlink(out);

	/* no record file: no trace, and the command's status still */
	char *msgs = NULL;
	size_t mlen = 0;
	o.msg = open_memstream(&msgs, &mlen);
	char *exit0[] = { "sh", "-c", "exit 0", NULL };
	o.cmd = exit0;
	assert_int_equal(capture_run_cmd(&o, &d), 0);
	assert_int_equal(access(out, F_OK), -1);
	assert_string_equal(d.msg, "");
	fclose(o.msg);
	char want[512];
	snprintf(want, sizeof(want),
		 "kprof: warning: no CUDA activity recorded from 'sh'; '%s' not written\n", out);
	assert_last_line(msgs, want);
	free(msgs);
	o.msg = open_memstream(&msgs, &mlen);
	/* a command not found: the error returned, no warning printed */
	char *missing[] = { "kprof-no-such-command-on-path", NULL };
	o.cmd = missing;
	assert_int_equal(capture_run_cmd(&o, &d), 127);
	assert_int_equal(access(out, F_OK), -1);
	assert_int_equal(d.status, 127);
	assert_string_equal(d.msg, "error: cannot run 'kprof-no-such-command-on-path': No such "
				   "file or directory");
	fclose(o.msg);
	assert_null(strstr(msgs, "no CUDA activity"));
	free(msgs);
	unlink(rec);
}

/*
 * What the parent cannot write: an output it cannot open, a record directory it cannot make (no
 * file left), a trace it cannot write (/dev/full, through a link): the command's exit 0
 * becomes 4.
 */
static void command_run_reports_what_it_cannot_write(void **state)
{
	(void)state;
	struct kp_diag d;
	char rec[] = "/tmp/kprof-test-inject-XXXXXX", full[] = "/tmp/kprof-test-full-XXXXXX";
	char out[64], script[512];
	int fd = mkstemp(rec);
	assert_true(fd >= 0);
	close(fd);
	struct kp_ctrace p;
	fill_process(&p, 4242, 1);
	save(&p, 4242, rec);
	ctrace_free(&p);
	snprintf(script, sizeof(script), "cp %s \"$KPROF_INJECT_DIR/4242.kprec\"", rec);
	char *cmd[] = { "/bin/sh", "-c", script, NULL };
	struct kp_capture_opts o = { .output = "/nonexistent-kprof/t.json",
				     .sample_period_ms = 10,
				     .cmd = cmd,
				     .inject_so = "/nonexistent/kprof-inject.so" };
	assert_int_equal(capture_run_cmd(&o, &d), KP_ENV);
	assert_int_equal(d.status, KP_ENV);
	assert_string_equal(d.msg, "error: cannot open '/nonexistent-kprof/t.json': No such file "
				   "or directory");

	const char *tmp = getenv("TMPDIR");
	char *saved = tmp ? strdup(tmp) : NULL;
	snprintf(out, sizeof(out), "%s.json", rec);
	o.output = out;
	setenv("TMPDIR", "/nonexistent-kprof", 1);
	assert_int_equal(capture_run_cmd(&o, &d), KP_ENV);
	assert_int_equal(access(out, F_OK), -1);
	assert_string_equal(d.msg, "error: cannot create a directory in '/nonexistent-kprof': No "
				   "such file or directory");
	if (saved)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	free(saved);

	/* the records arrive, the write fails: 4 instead of the command's 0 */
	fd = mkstemp(full);
	assert_true(fd >= 0);
	close(fd);
	unlink(full);
	assert_int_equal(symlink("/dev/full", full), 0);
	o.output = full;
	char *msgs = NULL;
	size_t mlen = 0;
	o.msg = open_memstream(&msgs, &mlen);
	assert_int_equal(capture_run_cmd(&o, &d), KP_ENV);
	char want[512];
	snprintf(want, sizeof(want), "error: cannot write '%s': No space left on device", full);
	assert_int_equal(d.status, KP_ENV);
	assert_string_equal(d.msg, want);
	fclose(o.msg);
	/* the warning of the dropped records, no summary of a trace not written */
	assert_last_line(msgs, "kprof: warning: CUPTI dropped 2 records\n");
	assert_null(strstr(msgs, "kprof: trace '"));
	free(msgs);

	/* no command: nothing runs */
	o.cmd = NULL;
	o.msg = NULL;
	assert_int_equal(capture_run_cmd(&o, &d), KP_ENV);
	assert_string_equal(d.msg, "error: no command or no kprof-inject.so");
	unlink(full);
	unlink(rec);
}

/*
 * The variables the command runs with: the API to trace, kprof-shim.so before the command's
 * own preloads with --libs, NVTX's injection library with --nvtx, and KPROF_METRICS=only in
 * the --metrics run alone (which records neither library calls nor NVTX).
 */
static void command_run_sets_the_command_environment(void **state)
{
	(void)state;
	struct kp_diag d;
	char env[] = "/tmp/kprof-test-env-XXXXXX", script[512];
	int fd = mkstemp(env);
	assert_true(fd >= 0);
	close(fd);
	snprintf(script, sizeof(script),
		 "printf '%%s|%%s|%%s|%%s|%%s|%%s\\n' \"$KPROF_TRACE_API\" \"$LD_PRELOAD\" "
		 "\"$KPROF_SHIM\" \"$NVTX_INJECTION64_PATH\" \"$KPROF_NVTX\" \"$KPROF_METRICS\" "
		 ">>%s",
		 env);
	char *cmd[] = { "/bin/sh", "-c", script, NULL };
	struct kp_capture_opts o = { .output = "/tmp/kprof-test-env-unwritten.json",
				     .sample_period_ms = 10,
				     .cmd = cmd,
				     .inject_so = "/nonexistent/kprof-inject.so",
				     .shim_so = "/nonexistent/kprof-shim.so",
				     .libs = 1,
				     .trace_api = 1,
				     .metrics = 1 };
	const char *pre = getenv("LD_PRELOAD");
	char *saved = pre ? strdup(pre) : NULL;
	unsetenv("NVTX_INJECTION64_PATH");
	setenv("LD_PRELOAD", "/nonexistent/pre.so", 1);
	assert_int_equal(capture_run_cmd(&o, &d), 0);
	unsetenv("LD_PRELOAD");
	o.libs = 0, o.nvtx = 1, o.metrics = 0, o.trace_api = 0;
	assert_int_equal(capture_run_cmd(&o, &d), 0);
	o.shim_so = NULL;
	assert_int_equal(capture_run_cmd(&o, &d), 0);
	if (saved)
		setenv("LD_PRELOAD", saved, 1);
	free(saved);
	char *got = slurp(env);
	assert_string_equal(got,
			    "all|/nonexistent/kprof-shim.so:/nonexistent/pre.so|on||off|\n"
			    "all|/nonexistent/pre.so||||only\n"
			    "launch|/nonexistent/kprof-shim.so|off|/nonexistent/kprof-shim.so|on|\n"
			    "launch|||||\n");
	free(got);
	unlink(env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(record_file_round_trips),
		cmocka_unit_test(host_calls_of_every_kind_round_trip),
		cmocka_unit_test(metric_values_round_trip),
		cmocka_unit_test(record_files_hold_each_name_once),
		cmocka_unit_test(corrupt_record_files_are_rejected_whole),
		cmocka_unit_test(processes_merge_in_pid_order_with_distinct_correlations),
		cmocka_unit_test(argv_splits_at_the_first_double_dash),
		cmocka_unit_test(child_env_replaces_and_appends),
		cmocka_unit_test(exit_status_follows_bash_and_env),
		cmocka_unit_test(command_run_writes_the_trace_and_keeps_the_status),
		cmocka_unit_test(command_run_reports_what_it_cannot_write),
		cmocka_unit_test(command_run_sets_the_command_environment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
