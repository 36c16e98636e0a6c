/*
 * test-capture.c — capture without a GPU: CUPTI record conversion from synthetic records, the
 * Kineto writer (read back by trace_load), clock weighting, shape sets, options, NVML absence.
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
#include "kprof/link.h"
#include "kprof/trace.h"
#include "record/ctrace.h"
#include "record/nvml.h"
#include "record/recorder.h"
#include "workloads/shapes.h"
#include "workloads/workloads.h"

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

/* A trace as one aten::mm with its cuLaunchKernelEx and kernel, plus two clock samples. */
static void fill_mm_trace(struct kp_ctrace *t, int with_clock)
{
	ctrace_init(t);
	struct kp_cdevprops *d = &t->dev[0];
	d->id = 0;
	snprintf(d->name, sizeof(d->name), "NVIDIA H100 80GB HBM3");
	d->num_sms = 132, d->warp_size = 32, d->compute_major = 9;
	d->clock_rate_khz = 1980000, d->mem_clock_rate_khz = 2619000, d->mem_bus_width = 5120;
	t->ndev = 1;
	ctrace_add_span(
		t, "cpu_op", strdup("aten::mm"), T0 + 1000, T0 + 60000, 483, 483, 1,
		strdup("\"Input Dims\":[[1024,1024],[1024,1024]],\"Input type\":[\"c10::BFloat16\","
		       "\"c10::BFloat16\"],\"Concrete Inputs\":[\"\",\"\"],\"kprof backend\":\"cublas\""));
	ctrace_add_span(t, "user_annotation", strdup("ProfilerStep#0"), T0 + 500, T0 + 70000, 483,
			483, 2, NULL);
	ctrace_add_ext(t, 14, 1);
	struct kp_rec api = { .kind = REC_DRIVER,
			      .start_ns = T0 + 2000,
			      .end_ns = T0 + 51063,
			      .corr = 14,
			      .cbid = 652,
			      .pid = 483,
			      .tid = 483,
			      .name = ctrace_intern(t, "cuLaunchKernelEx", 16) };
	struct kp_rec k = { .kind = REC_KERNEL,
			    .start_ns = T0 + 100000,
			    .end_ns = T0 + 106241,
			    .corr = 14,
			    .device = 0,
			    .context = 1,
			    .stream = 7,
			    .grid = { 2, 64, 1 },
			    .block = { 384, 1, 1 },
			    .regs = 168,
			    .smem = 213268,
			    .name = ctrace_intern(t, "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_NNT",
						  39) };
	ctrace_add_rec(t, &api);
	ctrace_add_rec(t, &k);
	if (with_clock) {
		struct kp_clk_sample s1 = { T0 + 0, 1755, 2619, 0 },
				     s2 = { T0 + 10000000, 1980, 2619, 4 };
		ctrace_add_sample(t, &s2); /* out of order on purpose: the writer sorts */
		ctrace_add_sample(t, &s1);
		t->clock_known = 1;
		t->sm_clock_max_mhz = 1980;
	}
}

static char *write_tmp(struct kp_ctrace *t, char *path)
{
	strcpy(path, "/tmp/kprof-test-capture-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_int_equal(ctrace_write(t, f, "trace.json"), 0);
	fclose(f);
	return slurp(path);
}

static void writer_emits_kineto_events_with_clock(void **state)
{
	(void)state;
	struct kp_ctrace t;
	char path[64];
	fill_mm_trace(&t, 1);
	char *j = write_tmp(&t, path);
	assert_non_null(strstr(j, "\"baseTimeNanoseconds\":1795653390000000000"));
	assert_non_null(
		strstr(j,
		       "\"clockRate\":1980000,\"memoryClockRate\":2619000,\"memoryBusWidth\":5120"));
	assert_non_null(strstr(j, "\"clock\":\"nvml\""));
	assert_non_null(strstr(j, "\"dropped_records\":0"));
	/* ts in µs relative to the base with ns decimals; dur likewise */
	assert_non_null(
		strstr(j,
		       "\"cat\":\"kernel\",\"name\":\"nvjet_sm90_tst_128x64_64x8_1x2_h_bz_NNT\""
		       ",\"pid\":0,\"tid\":7,\"ts\":100.000,\"dur\":6.241,\"args\":{\"External id\":1,"
		       "\"queued\":0,\"device\":0,\"context\":1,\"stream\":7,\"correlation\":14,"
		       "\"registers per thread\":168,\"shared memory\":213268,\"blocks per SM\":0.969697,"
		       "\"warps per SM\":11.636364,\"grid\":[2,64,1],\"block\":[384,1,1],"
		       "\"sm_clock_mhz\":1755.0}}"));
	assert_non_null(
		strstr(j, "\"cat\":\"cuda_driver\",\"name\":\"cuLaunchKernelEx\",\"pid\":483,"
			  "\"tid\":483,\"ts\":2.000,\"dur\":49.063,\"args\":{\"External id\":1,"
			  "\"cbid\":652,\"correlation\":14}}"));
	assert_non_null(strstr(j, "{\"ph\":\"s\",\"id\":14,\"pid\":483,\"tid\":483,\"ts\":2.000,"
				  "\"cat\":\"ac2g\",\"name\":\"ac2g\"}"));
	assert_non_null(strstr(j, "{\"ph\":\"f\",\"id\":14,\"pid\":0,\"tid\":7,\"ts\":100.000,"
				  "\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}"));
	assert_non_null(
		strstr(j, "{\"ph\":\"C\",\"cat\":\"gpu_clock\",\"name\":\"GPU 0 SM clock (MHz)\","
			  "\"pid\":0,\"tid\":0,\"ts\":10000.000,\"args\":{\"sm_mhz\":1980,"
			  "\"mem_mhz\":2619,\"reasons\":4}}"));
	assert_non_null(strstr(j, "\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#0\""));
	assert_non_null(
		strstr(j, "\"args\":{\"External id\":1,\"Input Dims\":[[1024,1024],[1024,1024]]"));
	assert_non_null(strstr(j, "\"thread_name\",\"ph\":\"M\",\"ts\":0.000,\"pid\":0,\"tid\":7,"
				  "\"args\":{\"name\":\"stream 7 \"}}"));

	/* kprof's own reader links the kernel to aten::mm and picks up the clock */
	struct kp_trace tr;
	struct kp_diag d;
	memset(&tr, 0, sizeof(tr));
	struct kp_load_opts lo = { 0 };
	assert_int_equal(trace_load(&tr, path, &lo, &d), 0);
	link_trace(&tr);
	assert_int_equal(tr.ngpu, 1);
	assert_int_equal(tr.nlaunches, 1);
	assert_true(tr.gpu[0].op >= 0);
	assert_string_equal(tr.ops[tr.gpu[0].op].name, "aten::mm");
	assert_int_equal(trace_gpux(&tr, &tr.gpu[0])->sm_clock_mhz, 1755);
	assert_int_equal(tr.gpu[0].dur_ns, 6241);
	assert_true(tr.kprof_trace);
	assert_true(tr.kprof_clock_known);
	assert_int_equal(tr.devs[0].clock_khz, 1980000);
	assert_int_equal(tr.nsteps, 1);
	trace_free(&tr);
	unlink(path);
	free(j);
	ctrace_free(&t);
}

static void writer_without_nvml_says_clock_unknown(void **state)
{
	(void)state;
	struct kp_ctrace t;
	char path[64];
	fill_mm_trace(&t, 0);
	char *j = write_tmp(&t, path);
	assert_non_null(strstr(j, "\"clock\":\"unknown\""));
	assert_non_null(strstr(j, "\"sm_clock_max_mhz\":null"));
	assert_null(strstr(j, "sm_clock_mhz"));
	assert_null(strstr(j, "\"ph\":\"C\""));
	unlink(path);
	free(j);
	ctrace_free(&t);
}

static void writer_drops_records_of_untraced_ops(void **state)
{
	(void)state;
	struct kp_ctrace t;
	char path[64];
	fill_mm_trace(&t, 0);
	ctrace_add_ext(&t, 20, t.untraced_ext);
	struct kp_rec k = { .kind = REC_KERNEL,
			    .start_ns = T0 + 200000,
			    .end_ns = T0 + 201000,
			    .corr = 20,
			    .name = "warmup_kernel" };
	struct kp_rec z = { .kind = REC_KERNEL, .corr = 21, .name = "never_timed" };
	ctrace_add_rec(&t, &k);
	ctrace_add_rec(&t, &z);
	char *j = write_tmp(&t, path);
	assert_null(strstr(j, "warmup_kernel"));
	assert_null(strstr(j, "never_timed"));
	assert_non_null(strstr(j, "nvjet_sm90"));
	unlink(path);
	free(j);
	ctrace_free(&t);
}

static void clock_is_weighted_by_overlap(void **state)
{
	(void)state;
	/* samples every 10 ms; each holds from the midpoint with its neighbours */
	struct kp_clk_sample s[3] = { { 0, 1000, 0, 0 },
				      { 10000000, 2000, 0, 0 },
				      { 20000000, 1500, 0, 0 } };
	uint64_t p = 10000000;
	double mhz;
	/* inside one cell: the nearest sample */
	assert_int_equal(ctrace_clock_at(s, 3, p, 6000000, 7000000, &mhz), 0);
	assert_true(mhz == 2000.0);
	assert_int_equal(ctrace_clock_at(s, 3, p, 1000000, 1000000, &mhz), 0);
	assert_true(mhz == 1000.0);
	/* [0, 10 ms): half at 1000, half at 2000 */
	assert_int_equal(ctrace_clock_at(s, 3, p, 0, 10000000, &mhz), 0);
	assert_true(mhz == 1500.0);
	/* [4 ms, 16 ms): 1 ms at 1000, 10 ms at 2000, 1 ms at 1500 */
	assert_int_equal(ctrace_clock_at(s, 3, p, 4000000, 16000000, &mhz), 0);
	assert_true(mhz > 1874.99 && mhz < 1875.01);
	/* after the last sample, within a period: held; beyond: unknown */
	assert_int_equal(ctrace_clock_at(s, 3, p, 25000000, 26000000, &mhz), 0);
	assert_true(mhz == 1500.0);
	assert_int_equal(ctrace_clock_at(s, 3, p, 40000000, 41000000, &mhz), -1);
	assert_int_equal(ctrace_clock_at(s, 0, p, 0, 1, &mhz), -1);
}

static void api_names_lose_the_version_suffix(void **state)
{
	(void)state;
	assert_int_equal(ctrace_api_name_len("cudaLaunchKernel_v7000"), 16);
	assert_int_equal(ctrace_api_name_len("cuLaunchKernelEx"), 16);
	assert_int_equal(ctrace_api_name_len("cuMemcpyHtoD_v2"), 12);
	assert_int_equal(ctrace_api_name_len("cuda_vx"), 7);
	char buf[64];
	ctrace_memcpy_name(buf, sizeof(buf), 1, 1, 3);
	assert_string_equal(buf, "Memcpy HtoD (Pageable -> Device)");
	ctrace_memset_name(buf, sizeof(buf), 3);
	assert_string_equal(buf, "Memset (Device)");
	assert_string_equal(ctrace_overhead_name(7 << 16), "Activity Buffer Request");
	assert_string_equal(ctrace_sync_name(4), "Context Sync");
}

#ifdef KPROF_HAVE_CUPTI
static void cupti_records_convert_to_kprof_records(void **state)
{
	(void)state;
	struct kp_ctrace t;
	ctrace_init(&t);

	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = T0 + 10, k.end = T0 + 20, k.correlationId = 5, k.deviceId = 0, k.contextId = 1;
	k.streamId = 7, k.gridX = 2, k.gridY = 66, k.gridZ = 1, k.blockX = 384, k.blockY = 1;
	k.blockZ = 1, k.registersPerThread = 168, k.staticSharedMemory = 100;
	k.dynamicSharedMemory = 213088, k.name = "_Z6kernelPf";
	assert_int_equal(recorder_convert(&t, (CUpti_Activity *)&k), 0);

	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof(a));
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
	a.start = T0 + 1, a.end = T0 + 9, a.processId = 483, a.threadId = 484, a.correlationId = 5;
	assert_int_equal(recorder_convert(&t, (CUpti_Activity *)&a), 0);
	a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
	a.cbid = CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2; /* not a launch: dropped as Kineto does */
	assert_int_equal(recorder_convert(&t, (CUpti_Activity *)&a), 0);
	a.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx;
	a.correlationId = 6;
	assert_int_equal(recorder_convert(&t, (CUpti_Activity *)&a), 0);

	CUpti_ActivityMemcpy6 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, m.bytes = 4096, m.correlationId = 7;
	assert_int_equal(recorder_convert(&t, (CUpti_Activity *)&m), 0);

	CUpti_ActivityMemset4 s;
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, s.bytes = 4, s.correlationId = 8;
	assert_int_equal(recorder_convert(&t, (CUpti_Activity *)&s), 0);

	CUpti_ActivitySynchronization2 y;
	memset(&y, 0, sizeof(y));
	y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, y.cudaEventId = 3;
	y.start = T0 + 30, y.end = T0 + 40, y.correlationId = 9, y.streamId = 7;
	assert_int_equal(recorder_convert(&t, (CUpti_Activity *)&y), 0);

	CUpti_ActivityOverhead3 o;
	memset(&o, 0, sizeof(o));
	o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST;
	o.start = T0 + 41, o.end = T0 + 42;
	assert_int_equal(recorder_convert(&t, (CUpti_Activity *)&o), 0);

	CUpti_ActivityExternalCorrelation e;
	memset(&e, 0, sizeof(e));
	e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
	e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, e.externalId = 42,
	e.correlationId = 5;
	assert_int_equal(recorder_convert(&t, (CUpti_Activity *)&e), 0);
	e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1,
	e.externalId = 43; /* annotations */
	assert_int_equal(recorder_convert(&t, (CUpti_Activity *)&e), 0);

	assert_int_equal(t.nrecs, 7);
	assert_int_equal(t.recs[0].kind, REC_KERNEL);
	assert_string_equal(t.recs[0].name, "kernel(float*)");
	assert_int_equal(t.recs[0].smem, 213188);
	assert_int_equal(t.recs[0].grid[1], 66);
	assert_int_equal(t.recs[0].regs, 168);
	assert_int_equal(t.recs[1].kind, REC_RUNTIME);
	assert_string_equal(t.recs[1].name, "cudaLaunchKernel");
	assert_int_equal(t.recs[1].tid, 484);
	assert_int_equal(t.recs[2].kind, REC_DRIVER);
	assert_string_equal(t.recs[2].name, "cuLaunchKernelEx");
	assert_string_equal(t.recs[3].name, "Memcpy HtoD (Pageable -> Device)");
	assert_int_equal(t.recs[3].bytes, 4096);
	assert_string_equal(t.recs[4].name, "Memset (Device)");
	assert_int_equal(t.recs[5].kind, REC_SYNC);
	assert_string_equal(t.recs[5].name, "Context Sync");
	assert_int_equal(t.recs[5].sync_type, 4);
	assert_int_equal(t.recs[5].event_id, 3);
	assert_int_equal(t.recs[5].stream, 7);
	assert_int_equal(t.recs[6].kind, REC_OVERHEAD);
	assert_string_equal(t.recs[6].name, "Activity Buffer Request");
	assert_int_equal(t.recs[6].end_ns - t.recs[6].start_ns, 1);
	assert_int_equal(t.next, 1);
	assert_int_equal(t.ext[0].corr, 5);
	assert_int_equal(t.ext[0].ext, 42);
	ctrace_free(&t);
}
#endif

static void matmul_shape_sets_expand(void **state)
{
	(void)state;
	struct kp_mm_shape *s;
	size_t n;
	char why[128];
	long ms[] = { 16, 8192 };
	assert_int_equal(shapes_matmul("llama", ms, 2, &s, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 8);
	assert_int_equal(s[0].m, 16);
	assert_int_equal(s[0].k, 8192);
	assert_int_equal(s[0].n, 1280);
	assert_string_equal(s[0].label, "attn.wqkv");
	assert_int_equal(s[3].k, 3584);
	assert_int_equal(s[3].n, 8192);
	assert_int_equal(s[7].m, 8192);
	free(s);
	assert_int_equal(shapes_matmul("pow2:256:1024", ms, 0, &s, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 3);
	assert_int_equal(s[2].m, 1024);
	assert_int_equal(s[2].k, 1024);
	free(s);
	assert_int_equal(shapes_matmul("pow2_extended:256:1024", ms, 0, &s, &n, why, sizeof(why)),
			 0);
	assert_int_equal(n, 5);
	long want[] = { 256, 384, 512, 768, 1024 };
	for (int i = 0; i < 5; i++)
		assert_int_equal(s[i].n, want[i]);
	free(s);
	assert_int_equal(shapes_matmul("sweep:1:4", ms, 0, &s, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 27);
	assert_int_equal(s[1].m, 1);
	assert_int_equal(s[1].k, 1);
	assert_int_equal(s[1].n, 2);
	free(s);
	assert_int_equal(shapes_matmul("custom:1x2x3,40x50x60", ms, 0, &s, &n, why, sizeof(why)),
			 0);
	assert_int_equal(n, 2);
	assert_int_equal(s[1].k, 50);
	free(s);
	assert_int_equal(shapes_matmul("custom:1x2", ms, 0, &s, &n, why, sizeof(why)), -1);
	assert_string_equal(why, "expected custom:MxKxN[,MxKxN...]");
	assert_int_equal(shapes_matmul("pow2:9:8", ms, 0, &s, &n, why, sizeof(why)), -1);
	/* up to LONG_MAX: stops at 2^62 instead of overflowing */
	assert_int_equal(shapes_matmul("pow2:1:9223372036854775807", ms, 0, &s, &n, why,
				       sizeof(why)),
			 0);
	assert_int_equal(n, 63);
	assert_true(s[62].m == 1L << 62);
	free(s);
	assert_int_equal(shapes_matmul("pow2_extended:4611686018427387904:9223372036854775807", ms,
				       0, &s, &n, why, sizeof(why)),
			 0);
	assert_int_equal(n, 2);
	assert_true(s[1].m == (1L << 62) + (1L << 61));
	free(s);
	assert_int_equal(shapes_matmul("sweep:1:65536", ms, 0, &s, &n, why, sizeof(why)), -1);
	assert_string_equal(why, "sweep has more than 4096 shapes");
	assert_int_equal(shapes_matmul("llama", ms, 0, &s, &n, why, sizeof(why)), -1);
	assert_int_equal(shapes_matmul("cube", ms, 0, &s, &n, why, sizeof(why)), -1);
}

static void sdpa_and_conv_shape_sets_expand(void **state)
{
	(void)state;
	struct kp_sdpa_shape *s;
	struct kp_conv_shape *c;
	size_t n;
	char why[128];
	assert_int_equal(shapes_sdpa("default", CAUSAL_BOTH, 0, &s, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 30);
	assert_int_equal(s[29].b, 16);
	assert_int_equal(s[29].sq, 8192);
	assert_int_equal(s[29].d, 128);
	assert_int_equal(s[29].causal, 1);
	assert_int_equal(s[0].hkv, 16);
	free(s);
	assert_int_equal(shapes_sdpa("default", CAUSAL_NO, 4, &s, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 15);
	assert_int_equal(s[0].hkv, 4);
	assert_int_equal(s[0].causal, 0);
	free(s);
	assert_int_equal(shapes_sdpa("custom:2x8x2x128x256x64c,1x4x4x9x9x32", 0, 0, &s, &n, why,
				     sizeof(why)),
			 0);
	assert_int_equal(n, 2);
	assert_int_equal(s[0].hkv, 2);
	assert_int_equal(s[0].sk, 256);
	assert_int_equal(s[0].causal, 1);
	assert_int_equal(s[1].causal, 0);
	free(s);
	assert_int_equal(shapes_sdpa("custom:2x8x3x128x128x64", 0, 0, &s, &n, why, sizeof(why)),
			 -1);
	assert_string_equal(why, "H must be a multiple of H_KV");

	assert_int_equal(shapes_conv("resnet50", 32, &c, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 23);
	assert_int_equal(c[0].r, 7);
	assert_int_equal(c[0].stride, 2);
	assert_int_equal(c[0].pad, 3);
	assert_int_equal(c[0].n, 32);
	free(c);
	assert_int_equal(shapes_conv("custom:2x8x9x9x16x3x3:s2:p1:d2:g2", 1, &c, &n, why,
				     sizeof(why)),
			 0);
	assert_int_equal(n, 1);
	assert_int_equal(c[0].stride, 2);
	assert_int_equal(c[0].pad, 1);
	assert_int_equal(c[0].dil, 2);
	assert_int_equal(c[0].groups, 2);
	free(c);
	assert_int_equal(shapes_conv("custom:2x6x9x9x16x3x3:g4", 1, &c, &n, why, sizeof(why)), -1);
	assert_string_equal(why, "groups must divide C and K");
	assert_int_equal(shapes_conv("custom:1x1x2x2x1x5x5", 1, &c, &n, why, sizeof(why)), -1);
	/* floor((x + 2p - d(k-1) - 1)/s) + 1 */
	assert_int_equal(conv_out_dim(224, 7, 2, 3, 1), 112);
	assert_int_equal(conv_out_dim(56, 3, 2, 1, 1), 28);
	assert_int_equal(conv_out_dim(9, 3, 2, 1, 2), 4);
}

/* Each step of the shape sets: small_sweep's order, pow2's range messages, the conv options */
static void shape_set_steps_check_their_input(void **state)
{
	(void)state;
	struct kp_mm_shape *s;
	struct kp_conv_shape *c;
	size_t n;
	char why[160];
	long ms[] = { 16 };
	/* 1, 2, 4: the 10 triples with M <= K <= N */
	assert_int_equal(shapes_matmul("small_sweep:1:4", ms, 0, &s, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 10);
	for (size_t i = 0; i < n; i++)
		assert_true(s[i].m <= s[i].k && s[i].k <= s[i].n);
	assert_int_equal(s[9].m, 4);
	free(s);
	assert_int_equal(shapes_matmul("pow2_extended:3:3", ms, 0, &s, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].m, 3);
	free(s);
	assert_int_equal(shapes_matmul("pow2:5:7", ms, 0, &s, &n, why, sizeof(why)), -1);
	assert_string_equal(why, "no power of two between MIN and MAX");
	assert_int_equal(shapes_matmul("pow2:0:8", ms, 0, &s, &n, why, sizeof(why)), -1);
	assert_string_equal(why, "expected MIN:MAX with 0 < MIN <= MAX");
	assert_int_equal(shapes_matmul("llama+pow2:1:8", ms, 0, &s, &n, why, sizeof(why)), -1);
	assert_string_equal(why, "llama needs --m");
	assert_int_equal(shapes_matmul("custom:1x2x3,", ms, 0, &s, &n, why, sizeof(why)), -1);
	assert_string_equal(why, "expected custom:MxKxN[,MxKxN...]");
	assert_int_equal(shapes_matmul("cube", ms, 0, &s, &n, why, sizeof(why)), -1);
	assert_string_equal(why, "valid: custom:MxKxN,..., llama, pow2:MIN:MAX, "
				 "pow2_extended:MIN:MAX, sweep:MIN:MAX, small_sweep:MIN:MAX");

	/* resnet50's last conv and its last downsample */
	assert_int_equal(shapes_conv("resnet50", 8, &c, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 23);
	assert_true(c[22].c == 512 && c[22].h == 7 && c[22].k == 512 && c[22].r == 3 &&
		    c[22].stride == 1 && c[22].pad == 1);
	assert_true(c[20].c == 1024 && c[20].h == 14 && c[20].k == 2048 && c[20].r == 1 &&
		    c[20].stride == 2 && c[20].pad == 0);
	free(c);
	assert_int_equal(shapes_conv("custom:1x1x9x9x1x3x3:p0:d3,2x2x8x8x2x1x1:g2", 1, &c, &n, why,
				     sizeof(why)),
			 0);
	assert_int_equal(n, 2);
	assert_int_equal(c[0].dil, 3);
	assert_int_equal(c[0].stride, 1);
	assert_int_equal(c[1].groups, 2);
	assert_int_equal(c[1].dil, 1);
	free(c);
	const char *usage = "expected custom:NxCxHxWxKxRxS[:sS][:pP][:dD][:gG],...";
	const char *bad[] = { "custom:1x1x9x9x1x3x3:s0", "custom:1x1x9x9x1x3x3:x1",
			      "custom:1x1x9x9x1x3x3:s",  "custom:1x1x9x9x1x3x3:s-1",
			      "custom:1x1x9x9x1x3x3,",   "custom:1x1x9x9x1x3x3;" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(shapes_conv(bad[i], 1, &c, &n, why, sizeof(why)), -1);
		assert_string_equal(why, usage);
	}
	assert_int_equal(shapes_conv("custom:1x1x2x2x1x5x5", 1, &c, &n, why, sizeof(why)), -1);
	assert_string_equal(why, "the filter is larger than the padded input");
	assert_int_equal(shapes_conv("custom:1x1x2x2x1x5x5:p2", 1, &c, &n, why, sizeof(why)), 0);
	free(c);
	assert_int_equal(shapes_conv("alexnet", 1, &c, &n, why, sizeof(why)), -1);
	assert_string_equal(why, "valid: resnet50, custom:NxCxHxWxKxRxS[:sS][:pP][:dD][:gG],...");
}

static void capture_options_parse_and_default(void **state)
{
	(void)state;
	int mask = 0;
	assert_null(capture_parse_workloads("matmul,conv", &mask));
	assert_null(capture_parse_workloads("sdpa", &mask));
	assert_int_equal(mask, WL_MATMUL | WL_CONV | WL_SDPA);
	assert_string_equal(capture_parse_workloads("attention", &mask),
			    "valid: matmul, sdpa, conv, softmax, rmsnorm, layernorm, cross_entropy");
	mask = 0;
	assert_null(capture_parse_dtypes("tf32,bf16", &mask));
	assert_int_equal(mask, (1 << CDT_TF32) | (1 << CDT_BF16));
	assert_non_null(capture_parse_dtypes("fp8", &mask));
	assert_string_equal(capture_parse_mm_ops("mm,,", &mask), "valid: mm, addmm, bmm");
	mask = 0;
	assert_null(capture_parse_mm_ops("bmm,mm", &mask));
	assert_int_equal(mask, MM_BMM | MM_MM);
	int causal = -1;
	assert_null(capture_parse_causal("yes", &causal));
	assert_int_equal(causal, CAUSAL_YES);
	assert_non_null(capture_parse_causal("maybe", &causal));

	struct kp_capture_opts o = { .iters = 10, .sample_period_ms = 10 };
	char why[256];
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_string_equal(why, "missing output file (-o FILE)");
	o.output = "t.json";
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), 0);
	assert_int_equal(o.workloads, WL_MATMUL);
	assert_int_equal(o.dtypes, 1 << CDT_BF16);
	assert_int_equal(o.mm_ops, MM_MM | MM_ADDMM | MM_BMM);
	assert_int_equal(o.nmm, 1);
	assert_int_equal(o.mm[0].m, 4096);
	capture_opts_free(&o);
	o.shapes = "llama", o.m_list = "1,x";
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_string_equal(why, "invalid value '1,x' for '--m': expected M[,M...]");
	char many[65 * 2 + 1] = "";
	for (int i = 0; i < 65; i++)
		strcat(many, i ? ",1" : "1");
	o.m_list = many;
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_true(strstr(why, "for '--m': at most 64 values") != NULL);
	many[64 * 2 - 1] = '\0';
	o.m_list = many;
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), 0);
	assert_int_equal(o.nmm, 64 * 4);
	capture_opts_free(&o);
	o.m_list = "1,16";
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), 0);
	assert_int_equal(o.nmm, 8);
	capture_opts_free(&o);
	o.workloads = WL_CONV, o.conv_shapes = "vgg";
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_string_equal(why, "invalid value 'vgg' for '--conv-shapes': valid: resnet50, "
				 "custom:NxCxHxWxKxRxS[:sS][:pP][:dD][:gG],...");
	capture_opts_free(&o);
}

static void capture_option_checks_name_the_option(void **state)
{
	(void)state;
	char why[256];
	char *none[] = { NULL }, *cmd[] = { "python3", NULL };
	struct kp_capture_opts o = { .output = "t.json", .iters = 10, .sample_period_ms = 10 };

	/* -- <cmd>: the command and the sampling period only, no workload defaults */
	o.cmd = none;
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_string_equal(why, "missing command after '--'");
	o.cmd = cmd, o.sample_period_ms = 101;
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_string_equal(why, "--sample-period must be 1..100 ms");
	o.sample_period_ms = 100, o.iters = 0;
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), 0);
	assert_int_equal(o.workloads, 0);
	assert_int_equal(o.dtypes, 0);

	/* the defaults come before the value checks */
	o.cmd = NULL;
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_string_equal(why, "--iters must be at least 1 and --warmup at least 0");
	assert_int_equal(o.workloads, WL_MATMUL);
	assert_int_equal(o.dtypes, 1 << CDT_BF16);
	o.iters = 10, o.warmup = -1;
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_string_equal(why, "--iters must be at least 1 and --warmup at least 0");
	o.warmup = 0, o.batch = -1;
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_string_equal(why, "--batch and --kv-heads must be positive");
	o.batch = 0, o.kv_heads = -2;
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_string_equal(why, "--batch and --kv-heads must be positive");
	o.kv_heads = 0, o.sample_period_ms = 0;
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_string_equal(why, "--sample-period must be 1..100 ms");
	o.sample_period_ms = 10, o.results = "r.txt";
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_string_equal(why,
			    "invalid value 'r.txt' for '--results': expected FILE.json or FILE.csv");
	o.results = ".csv"; /* a suffix alone is no file name */
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	o.results = "r.csv";
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), 0);
	capture_opts_free(&o);

	/* a matmul backend without the matmul workload */
	o.workloads = WL_SDPA, o.backends = BE_CUBLASLT;
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_string_equal(why, "'--backend cublaslt' is a matmul backend: add '-w matmul'");
	o.backends = BE_CUBLAS;
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_string_equal(why, "'--backend cublas' is a matmul backend: add '-w matmul'");

	/* each workload's shape set, named by its option */
	o.backends = 0, o.sdpa_shapes = "huge";
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_string_equal(why, "invalid value 'huge' for '--sdpa-shapes': valid: default, "
				 "custom:BxHxH_KVxS_QxS_KxD[c],...");
	o.workloads = WL_XENT, o.norm_shapes = "bogus";
	assert_int_equal(capture_opts_finish(&o, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "invalid value 'bogus' for '--norm-shapes': "));
	capture_opts_free(&o);
}

static void nvml_absence_is_reported(void **state)
{
	(void)state;
	struct kp_nvml n;
	char why[256];
	assert_int_equal(nvml_open(&n, "libkprof-no-such-nvml.so.1", NULL, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "cannot load libkprof-no-such-nvml.so.1: "));
	unsigned sm = 1, mem = 1;
	nvml_max_clocks(&n, &sm, &mem);
	assert_int_equal(sm, 0);
	assert_int_equal(mem, 0);
	struct kp_ctrace t;
	ctrace_init(&t);
	assert_int_equal(nvml_sampler_start(&n, &t, 10), -1);
	nvml_sampler_stop(&n);
	nvml_close(&n);
	assert_int_equal(t.nsamples, 0);
	ctrace_free(&t);
}

static void host_conversions_are_exact(void **state)
{
	(void)state;
	assert_true(workloads_bf16_to_double(0x3f80) == 1.0);
	assert_true(workloads_bf16_to_double(0xc040) == -3.0);
	assert_true(workloads_fp16_to_double(0x3c00) == 1.0);
	assert_true(workloads_fp16_to_double(0xc000) == -2.0);
	assert_true(workloads_fp16_to_double(0x0001) == 5.9604644775390625e-8);
	assert_true(workloads_fp16_to_double(0x7bff) == 65504.0);
	/* fp32 must reject TF32-sized errors (~1e-3) */
	assert_true(workloads_tolerance(CDT_FP32) < 1e-4);
	assert_true(workloads_tolerance(CDT_TF32) >= 1e-3);
}

/* --trace-api launch: which API names are recorded; the option's values */
static void launch_api_calls_are_the_ones_analyze_needs(void **state)
{
	(void)state;
	/* clang-format off */
	static const char *const kept[] = {
		"cudaLaunchKernel_v7000", "cudaLaunchKernelExC_v11060", "cudaMemcpyAsync_v3020",
		"cudaMemsetAsync_v3020",  "cudaGraphLaunch_v10000",     "cudaDeviceSynchronize_v3020",
		"cudaStreamSynchronize_v3020", "cudaEventSynchronize_v3020",
		"cudaStreamWaitEvent_v3020", "cuLaunchKernel",           "cuLaunchKernelEx",
		"cuMemcpyHtoDAsync_v2",   "cuMemsetD8Async",            "cuGraphLaunch",
		"cuStreamSynchronize",    "cuCtxSynchronize",           "cuStreamWaitEvent",
	};
	static const char *const dropped[] = {
		"cudaGetDevice_v3020", "cudaMalloc_v3020", "cudaEventRecord_v3020",
		"cudaStreamGetCaptureInfo_v10010", "cudaPeekAtLastError_v3020", "cuCtxGetCurrent",
		"cuGetProcAddress_v2", "cuModuleGetFunction", "cuEventQuery", "", "Synchronize",
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		assert_true(recorder_api_wanted(kept[i]));
	for (size_t i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++)
		assert_false(recorder_api_wanted(dropped[i]));
	assert_false(recorder_api_wanted(NULL));

	int mode = -1;
	assert_null(capture_parse_trace_api("all", &mode));
	assert_int_equal(mode, TRACE_API_ALL);
	assert_null(capture_parse_trace_api("none", &mode));
	assert_int_equal(mode, TRACE_API_NONE);
	assert_null(capture_parse_trace_api("launch", &mode));
	assert_int_equal(mode, TRACE_API_LAUNCH);
	assert_non_null(capture_parse_trace_api("driver", &mode));
	assert_string_equal(capture_trace_api_names[TRACE_API_ALL], "all");
}

/*
 * Calls recorded by the launch callbacks become API events that link: the kernel to its
 * launch by correlation, the launch to the op by its External id, the name without _vNNNN.
 */
static void launch_callback_calls_link_like_activity_records(void **state)
{
	(void)state;
	struct kp_ctrace t;
	char path[64];
	ctrace_init(&t);
	t.dev[0].id = 0, t.dev[0].num_sms = 132, t.dev[0].warp_size = 32, t.ndev = 1;
	ctrace_add_span(&t, "cpu_op", strdup("aten::mul_"), T0 + 1000, T0 + 9000, 483, 490, 5,
			NULL);
	struct kp_apicall launch = { .start_ns = T0 + 2000,
				     .end_ns = T0 + 6500,
				     .ext = 5,
				     .corr = 77,
				     .cbid = 211,
				     .tid = 490,
				     .driver = 0 };
	struct kp_apicall sync = { .start_ns = T0 + 9500,
				   .end_ns = T0 + 30000,
				   .corr = 78,
				   .cbid = 165,
				   .tid = 490,
				   .driver = 0 };
	assert_int_equal(recorder_add_call(&t, &launch, 483, "cudaLaunchKernel_v7000"), 0);
	assert_int_equal(recorder_add_call(&t, &sync, 483, "cudaDeviceSynchronize_v3020"), 0);
	struct kp_rec k = { .kind = REC_KERNEL,
			    .start_ns = T0 + 20000,
			    .end_ns = T0 + 22000,
			    .corr = 77,
			    .stream = 7,
			    .grid = { 1, 1, 1 },
			    .block = { 64, 1, 1 },
			    .name = ctrace_intern(&t, "mul_kernel", 10) };
	ctrace_add_rec(&t, &k);
	assert_int_equal(t.nrecs, 3);
	assert_int_equal(t.recs[0].kind, REC_RUNTIME);
	assert_int_equal(t.recs[0].pid, 483);
	assert_int_equal(t.recs[0].tid, 490);
	assert_int_equal(t.next, 1); /* only the call with an External id maps one */
	char *j = write_tmp(&t, path);
	assert_non_null(strstr(j,
			       "\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":483,"
			       "\"tid\":490,\"ts\":2.000,\"dur\":4.500,\"args\":{\"External id\":5,"
			       "\"cbid\":211,\"correlation\":77}}"));
	assert_non_null(strstr(j, "\"cat\":\"cuda_runtime\",\"name\":\"cudaDeviceSynchronize\""));
	assert_non_null(strstr(j, "\"name\":\"mul_kernel\",\"pid\":0,\"tid\":7,\"ts\":20.000,"
				  "\"dur\":2.000,\"args\":{\"External id\":5,"));
	struct kp_trace tr;
	struct kp_diag d;
	memset(&tr, 0, sizeof(tr));
	struct kp_load_opts lo = { 0 };
	assert_int_equal(trace_load(&tr, path, &lo, &d), 0);
	link_trace(&tr);
	assert_int_equal(tr.ngpu, 1);
	assert_int_equal(tr.nlaunches, 2);
	assert_true(tr.gpu[0].launch >= 0);
	assert_string_equal(tr.launches[tr.gpu[0].launch].name, "cudaLaunchKernel");
	assert_true(tr.gpu[0].op >= 0);
	assert_string_equal(tr.ops[tr.gpu[0].op].name, "aten::mul_");
	trace_free(&tr);
	unlink(path);
	free(j);
	ctrace_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(writer_emits_kineto_events_with_clock),
		cmocka_unit_test(writer_without_nvml_says_clock_unknown),
		cmocka_unit_test(writer_drops_records_of_untraced_ops),
		cmocka_unit_test(clock_is_weighted_by_overlap),
		cmocka_unit_test(api_names_lose_the_version_suffix),
		cmocka_unit_test(launch_api_calls_are_the_ones_analyze_needs),
		cmocka_unit_test(launch_callback_calls_link_like_activity_records),
#ifdef KPROF_HAVE_CUPTI
		cmocka_unit_test(cupti_records_convert_to_kprof_records),
#endif
		cmocka_unit_test(matmul_shape_sets_expand),
		cmocka_unit_test(sdpa_and_conv_shape_sets_expand),
		cmocka_unit_test(shape_set_steps_check_their_input),
		cmocka_unit_test(capture_options_parse_and_default),
		cmocka_unit_test(capture_option_checks_name_the_option),
		cmocka_unit_test(nvml_absence_is_reported),
		cmocka_unit_test(host_conversions_are_exact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
