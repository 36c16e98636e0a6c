/*
 * test-cmem.c — `kprof capture --memory` without a GPU: synthetic CUPTI memory records
 * (REC_MEMORY) written as [memory] events by ctrace_write (capture/record/cmem.c), read back by
 * `kprof analyze --memory` (memory_run through pipeline_run), carried by the record files of
 * `-- <cmd>` (recfile.c, version 4), and KPROF_MEMORY in the command's environment.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kprof/capture.h"
#include "kprof/diag.h"
#include "kprof/memory.h"
#include "kprof/pipeline.h"
#include "record/cmem.h"
#include "record/ctrace.h"
#include "record/recfile.h"
#include "record/recorder.h"

#define T0 1795653390000000000ull /* CLOCK_REALTIME ns; the trace's base */
#define MiB (1024 * 1024)

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

static void api(struct kp_ctrace *t, const char *name, uint32_t corr, uint32_t tid,
		uint64_t start, uint64_t end)
{
	struct kp_rec r = { .kind = REC_RUNTIME,
			    .start_ns = T0 + start,
			    .end_ns = T0 + end,
			    .corr = corr,
			    .pid = 100,
			    .tid = tid,
			    .name = ctrace_intern(t, name, strlen(name)) };
	assert_int_equal(ctrace_add_rec(t, &r), 0);
}

static void mem(struct kp_ctrace *t, uint32_t op, uint32_t kind, uint32_t corr, uint32_t dev,
		uint64_t ts, uint64_t addr, uint64_t bytes)
{
	struct kp_rec r = { .kind = REC_MEMORY,
			    .start_ns = T0 + ts,
			    .end_ns = T0 + ts,
			    .corr = corr,
			    .device = dev,
			    .pid = 100,
			    .addr = addr,
			    .bytes = bytes,
			    .mem_op = op,
			    .mem_kind = kind,
			    .name = "" };
	assert_int_equal(ctrace_add_rec(t, &r), 0);
}

static void span(struct kp_ctrace *t, const char *name, uint64_t start, uint64_t end,
		 uint64_t ext)
{
	assert_int_equal(ctrace_add_span(t, "cpu_op", strdup(name), T0 + start, T0 + end, 100,
					 101, ext, NULL),
			 0);
}

/*
 * Process 100, thread 101 (ops aten::empty [0.5,2.5) us and aten::mm [2.8,4.5) us), records
 * added out of time order.  Device 0 in time order:
 *   1.5  +2 MiB  @0x1000  cudaMalloc corr 10 on 101            sum  2 MiB  aten::empty
 *   4.0  +20 MiB @0x2000  corr 11: CUPTI says 5.0, after the call [3,4): clamped to 4.0
 *                                                              sum 22 MiB  aten::mm
 *   6.0  +4 MiB  @0x3000  corr 12 has no API record: on thread 100  sum 26 MiB  <- the peak
 *   7.05 -20 MiB @0x2000  cudaFree corr 13, CUPTI's size 0: the allocation's  sum 6 MiB
 * Left out: a release of unknown 0x9000, a zero-size allocation, a pinned host block.
 * Device 1: +8 MiB at 6.5 on thread 102 (corr 14): its own sum.
 */
static void fill(struct kp_ctrace *t)
{
	ctrace_init(t);
	t->memory = 1;
	span(t, "aten::empty", 500, 2500, 1);
	span(t, "aten::mm", 2800, 4500, 2);
	api(t, "cudaMalloc", 10, 101, 1000, 2000);
	api(t, "cudaMalloc", 11, 101, 3000, 4000);
	api(t, "cudaFree", 13, 101, 7000, 7100);
	api(t, "cudaMalloc", 14, 102, 6400, 6600);
	mem(t, 2, 3, 13, 0, 7050, 0x2000, 0);
	mem(t, 1, 3, 12, 0, 6000, 0x3000, 4 * MiB);
	mem(t, 1, 3, 10, 0, 1500, 0x1000, 2 * MiB);
	mem(t, 1, 3, 11, 0, 5000, 0x2000, 20 * MiB);
	mem(t, 2, 3, 0, 0, 6800, 0x9000, 1 * MiB);
	mem(t, 1, 3, 0, 0, 6900, 0x8000, 0);
	mem(t, 1, 2, 0, 0, 6950, 0x7000, 4 * MiB);
	mem(t, 1, 3, 14, 1, 6500, 0x1000, 8 * MiB);
}

#define EV(pid, tid, ts, total, bytes, dev, addr)                                                  \
	"{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":" #pid \
	",\"tid\":" #tid ",\"ts\":" ts ",\"args\":{\"Total Reserved\":" #total                       \
	",\"Total Allocated\":" #total ",\"Bytes\":" #bytes ",\"Device Id\":" #dev                  \
	",\"Device Type\":1,\"Addr\":" #addr ",\"kprof source\":\"cupti\"}}"

static const char *const want_events[] = {
	EV(100, 101, "1.500", 2097152, 2097152, 0, 4096),
	EV(100, 101, "4.000", 23068672, 20971520, 0, 8192),
	EV(100, 100, "6.000", 27262976, 4194304, 0, 12288),
	EV(100, 102, "6.500", 8388608, 8388608, 1, 4096),
	EV(100, 101, "7.050", 6291456, -20971520, 0, 8192),
};

static char *write_trace(struct kp_ctrace *t, char *path)
{
	strcpy(path, "/tmp/kprof-test-cmem-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_int_equal(ctrace_write(t, f, "trace.json"), 0);
	fclose(f);
	return slurp(path);
}

/* The events, exactly, in time order; the header says what they are */
static void writer_emits_memory_events_with_running_sums(void **state)
{
	(void)state;
	struct kp_ctrace t;
	char path[64];
	fill(&t);
	char *j = write_trace(&t, path);
	const char *at = j;
	for (size_t i = 0; i < sizeof(want_events) / sizeof(want_events[0]); i++) {
		const char *e = strstr(j, want_events[i]);
		if (!e)
			fail_msg("missing event %zu: %s\nin:\n%s", i, want_events[i], j);
		assert_true(e > at); /* in this order */
		at = e;
	}
	size_t n = 0;
	for (const char *p = j; (p = strstr(p, "\"[memory]\"")); p++)
		n++;
	assert_int_equal(n, 5);
	assert_non_null(strstr(j, "\"memory\":{\"source\":\"cupti\",\"events\":5,"
				  "\"unattributed\":1,\"other_kinds\":1,\"unmatched_releases\":1,"
				  "\"library_allocations\":0,\"library_bytes\":0}"));
	free(j);
	unlink(path);
	ctrace_free(&t);

	/* without --memory and without records: no header member, no event */
	ctrace_init(&t);
	api(&t, "cudaLaunchKernel", 1, 101, 1000, 2000);
	j = write_trace(&t, path);
	assert_null(strstr(j, "[memory]"));
	assert_null(strstr(j, "\"memory\":"));
	free(j);
	unlink(path);
	ctrace_free(&t);
}

/* cmem_build's own figures: the stats and sums, independent of the JSON text */
static void build_counts_what_it_left_out(void **state)
{
	(void)state;
	struct kp_ctrace t;
	fill(&t);
	struct kp_cmem_stats st;
	size_t n;
	struct kp_cmem *ev = cmem_build(&t, &n, &st);
	assert_int_equal(n, 5);
	int64_t sum0 = 0, peak0 = 0;
	for (size_t i = 0; i < n; i++) {
		if (i)
			assert_true(ev[i - 1].ts_ns <= ev[i].ts_ns);
		if (ev[i].device == 0) {
			sum0 += ev[i].bytes;
			assert_int_equal(ev[i].total, sum0);
			peak0 = sum0 > peak0 ? sum0 : peak0;
		}
	}
	assert_int_equal(peak0, 26 * MiB);
	assert_int_equal(st.unattributed, 1);
	assert_int_equal(st.other_kinds, 1);
	assert_int_equal(st.unmatched_releases, 1);
	free(ev);
	ctrace_free(&t);
}

static const struct kp_mem_row *live_row(const struct kp_mem_dev *d, const char *op)
{
	for (size_t i = 0; i < d->nlive; i++)
		if (!strcmp(d->live[i].op, op))
			return &d->live[i];
	return NULL;
}

/* kprof analyze --memory on the written trace: the peak, when, and who holds it */
static void analyze_reads_the_capture_like_torch_profiler(void **state)
{
	(void)state;
	struct kp_ctrace t;
	char path[64];
	fill(&t);
	free(write_trace(&t, path));
	ctrace_free(&t);
	struct kp_pipeline_in in = { .path = path, .memory = 1 };
	struct kp_pipeline_out p;
	assert_int_equal(pipeline_run(&in, &p), 0);
	const struct kp_memrep *m = &p.memory;
	assert_int_equal(m->nevents, 5);
	assert_int_equal(m->ngpu, 2);
	const struct kp_mem_dev *d = &m->devs[0];
	assert_int_equal(d->dev_type, 1);
	assert_int_equal(d->dev_id, 0);
	assert_false(d->bytes_only);
	assert_int_equal(d->peak_alloc, 26 * MiB);
	assert_int_equal(d->peak_res, 26 * MiB);
	assert_int_equal(d->baseline, 0);
	assert_int_equal(d->nallocs, 3);
	assert_int_equal(d->nfrees, 1);
	assert_int_equal(d->unmatched_frees, 0);
	/* 6.0 us after the trace's first timestamp, the aten::empty span at 0.5 us */
	assert_int_equal(d->peak_ts_ns - m->t0_ns, 5500);
	/* the allocations' ops: through the API call's thread and time */
	assert_int_equal(live_row(d, "aten::empty")->bytes, 2 * MiB);
	assert_int_equal(live_row(d, "aten::mm")->bytes, 20 * MiB);
	assert_int_equal(live_row(d, MEM_NO_OP)->bytes, 4 * MiB);
	assert_int_equal(live_row(d, MEM_BEFORE)->bytes, 0);
	assert_int_equal(m->devs[1].dev_id, 1);
	assert_int_equal(m->devs[1].peak_alloc, 8 * MiB);
	pipeline_free(&p);
	unlink(path);
}

/* REC_MEMORY survives the record file of `-- <cmd>`; a version 3 file is refused */
static void record_file_carries_memory_records(void **state)
{
	(void)state;
	char dir[] = "/tmp/kprof-test-cmem-XXXXXX", path[128], why[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/100.kprec", dir);
	struct kp_ctrace a, b;
	fill(&a);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(recfile_write(&a, 100, f), 0);
	assert_int_equal(fclose(f), 0);
	ctrace_init(&b);
	struct kp_recfile_info info;
	assert_int_equal(recfile_read(&b, path, 1000, 0, &info, why, sizeof(why)), 0);
	assert_int_equal(b.nrecs, a.nrecs);
	for (size_t i = 0; i < a.nrecs; i++) {
		assert_int_equal(b.recs[i].kind, a.recs[i].kind);
		assert_int_equal(b.recs[i].addr, a.recs[i].addr);
		assert_int_equal(b.recs[i].bytes, a.recs[i].bytes);
		assert_int_equal(b.recs[i].mem_op, a.recs[i].mem_op);
		assert_int_equal(b.recs[i].mem_kind, a.recs[i].mem_kind);
		assert_int_equal(b.recs[i].corr, a.recs[i].corr ? a.recs[i].corr + 1000 : 0);
	}
	/* the correlation ids moved together: the same events come out */
	struct kp_cmem_stats sa, sb;
	size_t na, nb;
	struct kp_cmem *ea = cmem_build(&a, &na, &sa), *eb = cmem_build(&b, &nb, &sb);
	assert_int_equal(na, nb);
	for (size_t i = 0; i < na; i++) {
		assert_int_equal(ea[i].tid, eb[i].tid);
		assert_int_equal(ea[i].total, eb[i].total);
		assert_true(ea[i].ts_ns == eb[i].ts_ns);
	}
	free(ea);
	free(eb);
	ctrace_free(&b);

	/* an older kprof's file (version 3) */
	FILE *g = fopen(path, "r+b");
	uint32_t v3 = 3;
	fseek(g, 8, SEEK_SET);
	fwrite(&v3, sizeof(v3), 1, g);
	fclose(g);
	ctrace_init(&b);
	assert_int_equal(recfile_read(&b, path, 0, 0, &info, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "not a kprof record file of this version"));
	assert_int_equal(b.nrecs, 0);
	ctrace_free(&b);
	ctrace_free(&a);
	unlink(path);
	rmdir(dir);
}

static void devalloc(struct kp_ctrace *t, uint32_t tid, uint64_t addr, uint64_t bytes,
		     uint64_t start, uint64_t end)
{
	struct kp_hcall c = { .kind = HC_DEVALLOC, .name = "cudaMalloc", .pid = 100, .tid = tid,
			      .m = (int64_t)bytes, .k = (int64_t)addr,
			      .start_ns = T0 + start, .end_ns = T0 + end };
	assert_int_equal(ctrace_add_hcall(t, &c), 0);
}

/*
 * A cudaMalloc that kprof-shim.so did not see pass through the dynamic runtime is a library's
 * own (cuBLAS's handle and workspace, observed on an H200: tests/gpu/mem_allocs.py): it and its
 * release stay out of the sums; an address reused later by the program's allocator counts then.
 */
static void library_allocations_are_left_out(void **state)
{
	(void)state;
	for (int with_calls = 1; with_calls >= 0; with_calls--) {
		struct kp_ctrace t;
		ctrace_init(&t);
		t.memory = 1;
		api(&t, "cudaMalloc", 1, 101, 1000, 2000); /* the program's */
		mem(&t, 1, 3, 1, 0, 1500, 0xA00000, 64 * MiB);
		api(&t, "cudaMalloc", 2, 101, 3000, 4000); /* cuBLAS's own */
		mem(&t, 1, 3, 2, 0, 3500, 0xB00000, 32 * MiB);
		api(&t, "cudaFree", 3, 101, 5000, 5100);
		mem(&t, 2, 3, 3, 0, 5050, 0xB00000, 32 * MiB);
		api(&t, "cudaMalloc", 4, 101, 7000, 8000); /* the program's, at the same address */
		mem(&t, 1, 3, 4, 0, 7500, 0xB00000, 16 * MiB);
		api(&t, "cuMemCreate", 5, 101, 9000, 9500); /* not cudaMalloc: always kept */
		mem(&t, 1, 3, 5, 0, 9200, 0xD00000, 8 * MiB);
		if (with_calls) {
			devalloc(&t, 101, 0xA00000, 64 * MiB, 900, 2100);
			devalloc(&t, 101, 0xB00000, 16 * MiB, 6900, 8100);
		}
		struct kp_cmem_stats st;
		size_t n;
		struct kp_cmem *ev = cmem_build(&t, &n, &st);
		if (with_calls) {
			int64_t want[] = { 64 * MiB, 80 * MiB, 88 * MiB };
			assert_int_equal(n, 3);
			for (size_t i = 0; i < n; i++)
				assert_int_equal(ev[i].total, want[i]);
			assert_int_equal(st.library, 1);
			assert_int_equal(st.library_bytes, 32 * MiB);
			assert_int_equal(st.unmatched_releases, 0);
			char path[64];
			char *j = write_trace(&t, path);
			assert_non_null(strstr(j, "\"unmatched_releases\":0,\"library_allocations\":1,"
						  "\"library_bytes\":33554432}"));
			assert_int_equal(t.mem_library, 1);
			free(j);
			unlink(path);
		} else { /* no call recorded (a program with a static runtime): all kept */
			int64_t want[] = { 64 * MiB, 96 * MiB, 64 * MiB, 80 * MiB, 88 * MiB };
			assert_int_equal(n, 5);
			for (size_t i = 0; i < n; i++)
				assert_int_equal(ev[i].total, want[i]);
			assert_int_equal(st.library, 0);
		}
		free(ev);
		ctrace_free(&t);
	}
}

/* --memory adds the allocation calls to those --trace-api launch records, and only then */
static void memory_calls_are_wanted_only_with_memory(void **state)
{
	(void)state;
	static const char *const calls[] = { "cudaMalloc_v3020", "cudaFree_v3020",
					     "cudaMallocAsync_v11020", "cudaFreeAsync_v11020",
					     "cuMemAlloc_v2", "cuMemFree_v2", "cuMemCreate",
					     "cuMemRelease" };
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		assert_false(recorder_api_wanted(calls[i]));
	recorder_set_memory(1);
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		assert_true(recorder_api_wanted(calls[i]));
	assert_false(recorder_api_wanted("cudaGetDevice"));
	assert_true(recorder_api_wanted("cudaLaunchKernel"));
	recorder_set_memory(0);
	assert_false(recorder_api_wanted("cudaMalloc"));
}

/*
 * The whole parent with --memory: the command sees KPROF_MEMORY=on (off without it, whatever
 * the caller's environment says) and its record file's memory records become [memory] events.
 */
static void command_run_passes_memory_and_writes_events(void **state)
{
	(void)state;
	struct kp_diag d;
	char rec[] = "/tmp/kprof-test-cmem-XXXXXX", out[64], script[512];
	int fd = mkstemp(rec);
	assert_true(fd >= 0);
	close(fd);
	struct kp_ctrace p;
	fill(&p);
	FILE *f = fopen(rec, "wb");
	assert_int_equal(recfile_write(&p, 100, f), 0);
	fclose(f);
	ctrace_free(&p);
	snprintf(out, sizeof(out), "%s.json", rec);
	snprintf(script, sizeof(script),
		 "test \"$KPROF_MEMORY\" = \"$WANT\" || exit 9; cp %s \"$KPROF_INJECT_DIR/100.kprec\"",
		 rec);
	char *cmd[] = { "/bin/sh", "-c", script, NULL };
	struct kp_capture_opts o = { .output = out,
				     .sample_period_ms = 10,
				     .cmd = cmd,
				     .inject_so = "/nonexistent/kprof-inject.so",
				     .memory = 1 };
	setenv("WANT", "on", 1);
	assert_int_equal(capture_run_cmd(&o, &d), 0);
	char *j = slurp(out);
	assert_non_null(strstr(j, want_events[2]));
	assert_non_null(strstr(j, "\"memory\":{\"source\":\"cupti\",\"events\":5,"));
	free(j);
	/* without --memory: off, even with KPROF_MEMORY=on around kprof */
	setenv("KPROF_MEMORY", "on", 1);
	setenv("WANT", "off", 1);
	o.memory = 0;
	assert_int_equal(capture_run_cmd(&o, &d), 0);
	j = slurp(out);
	assert_null(strstr(j, "\"memory\":{"));
	free(j);
	unsetenv("KPROF_MEMORY");
	unsetenv("WANT");
	unlink(out);
	unlink(rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(writer_emits_memory_events_with_running_sums),
		cmocka_unit_test(build_counts_what_it_left_out),
		cmocka_unit_test(analyze_reads_the_capture_like_torch_profiler),
		cmocka_unit_test(record_file_carries_memory_records),
		cmocka_unit_test(library_allocations_are_left_out),
		cmocka_unit_test(memory_calls_are_wanted_only_with_memory),
		cmocka_unit_test(command_run_passes_memory_and_writes_events),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
