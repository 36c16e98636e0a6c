/*
 * test-breakdown.c — the GPU time breakdown on synthetic traces: overlap resolved by
 * priority, every ns of the span in one bucket, each idle cause, step windows that
 * partition the span, per-stream idle, launch statistics.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kprof/breakdown.h"
#include "kprof/link.h"
#include "kprof/trace.h"

static char tmpdir[] = "/tmp/kprof-test-breakdown-XXXXXX";

static void load_text(struct kp_trace *t, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/t.json", tmpdir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	struct kp_load_opts o = { 0 };
	struct kp_diag d = { 0 };
	assert_int_equal(trace_load(t, path, &o, &d), 0);
	link_trace(t);
}

/* compute + comm + memcpy + other + idle == span, causes add up to idle */
static void assert_partition(const struct kp_bd *b, int causes)
{
	int64_t sum = b->idle_ns;
	for (int c = 0; c < BD_NCLASS; c++) {
		assert_true(b->class_ns[c] >= 0);
		sum += b->class_ns[c];
	}
	assert_int_equal(sum, b->span_ns);
	assert_true(b->idle_ns >= 0);
	if (causes) {
		int64_t idle = 0;
		for (int c = 0; c < IDLE_NCAUSE; c++)
			idle += b->idle_cause_ns[c];
		assert_int_equal(idle, b->idle_ns);
	}
}

#define KERN(name, ts, dur, stream, corr)                                                          \
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":" #stream        \
	",\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"correlation\":" #corr                        \
	",\"device\":0,\"stream\":" #stream "}},"
#define COPY(ts, dur, stream, corr)                                                                     \
	"{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> Device)\",\"pid\":0," \
	"\"tid\":" #stream ",\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"correlation\":" #corr          \
	",\"device\":0,\"stream\":" #stream ",\"bytes\":1024}},"
#define RT(name, ts, dur, corr)                                                                    \
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"" name                                  \
	"\",\"pid\":1,\"tid\":1,\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"correlation\":" #corr  \
	"}},"
#define STEP(n, ts, dur)                                                                           \
	"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#" #n                    \
	"\",\"pid\":1,\"tid\":1,"                                                                  \
	"\"ts\":" #ts ",\"dur\":" #dur "},"
#define END "{\"ph\":\"i\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":0,\"s\":\"t\"}]}"

static void overlap_goes_to_the_first_class_in_priority_order(void **state)
{
	(void)state;
	/* compute [100,200) s7; nccl [150,250) s8; memcpy [240,300) s9; idle [300,400);
	 * compute [400,450) s7 */
	static const char text[] = "{\"traceEvents\":[" KERN("gemm", 100, 100, 7, 1)
		KERN("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
		     150, 100, 8, 2) COPY(240, 60, 9, 3) KERN("gemm", 400, 50, 7, 4) END;
	struct kp_trace t;
	load_text(&t, text);
	struct kp_breakdown b;
	breakdown_run(&t, NULL, &b);
	assert_int_equal(b.all.span_ns, 350000);
	assert_int_equal(b.all.class_ns[BD_COMPUTE], 150000);
	assert_int_equal(b.all.class_ns[BD_COMM], 50000);   /* [200,250): not under compute */
	assert_int_equal(b.all.class_ns[BD_MEMCPY], 50000); /* [250,300): not under comm */
	assert_int_equal(b.all.class_ns[BD_OTHER], 0);
	assert_int_equal(b.all.idle_ns, 100000);
	assert_int_equal(b.all.comm_total_ns, 100000);
	assert_int_equal(b.all.comm_overlapped_ns, 50000);
	assert_partition(&b.all, 1);
	/* no launches at all: the gap is of unknown cause */
	assert_int_equal(b.all.idle_cause_ns[IDLE_OTHER], 100000);
	assert_int_equal(b.unlaunched, 4);
	/* streams: s7 busy 150 of 350, s8 comm 100, s9 memcpy 60 */
	assert_int_equal(b.nstreams, 3);
	assert_int_equal(b.streams[0].stream, 7);
	assert_int_equal(b.streams[0].b.class_ns[BD_COMPUTE], 150000);
	assert_int_equal(b.streams[0].b.idle_ns, 200000);
	assert_int_equal(b.streams[1].b.class_ns[BD_COMM], 100000);
	assert_int_equal(b.streams[2].b.class_ns[BD_MEMCPY], 60000);
	for (size_t i = 0; i < b.nstreams; i++)
		assert_partition(&b.streams[i].b, 0);
	breakdown_free(&b);
	trace_free(&t);
}

static void touching_intervals_do_not_overlap_and_same_class_streams_count_once(void **state)
{
	(void)state;
	static const char text[] = "{\"traceEvents\":[" KERN("a", 100, 50, 7, 1)
		KERN("b", 120, 50, 8, 2)      /* compute on two streams: [100,170) once */
		KERN("nccl_x", 170, 30, 9, 3) /* touches compute at 170: not overlapped */
		END;
	struct kp_trace t;
	load_text(&t, text);
	struct kp_breakdown b;
	breakdown_run(&t, NULL, &b);
	assert_int_equal(b.all.class_ns[BD_COMPUTE], 70000);
	assert_int_equal(b.all.class_ns[BD_COMM], 30000);
	assert_int_equal(b.all.comm_overlapped_ns, 0);
	assert_int_equal(b.all.idle_ns, 0);
	assert_partition(&b.all, 1);
	breakdown_free(&b);
	trace_free(&t);
}

/*
 * One CPU thread, one stream.  Gaps: [110,160) host (launched at 150, after the stream went
 * idle); [170,190) sync (launched at 180 right after a cudaDeviceSynchronize that covered 170);
 * [200,210) launch latency (queued at 186, 10 us < 30 us); [220,300) other (queued, 80 us);
 * [310,400) sync (a cudaStreamWaitEvent at 188 between the launch of the previous kernel, 187,
 * and this one, 189); [410,500) other (no launch call).
 */
static const char causes_text[] = "{\"traceEvents\":[" STEP(1, 80,
							    90) STEP(2, 170,
								     130) RT("cudaLaunchKernel", 90,
									     2, 1)
	RT("cudaLaunchKernel", 150, 2, 2) "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaDeviceSynchronize\",\"pid\":1,\"tid\":1,\"ts\":165,\"dur\":10,\"args\":{}}," RT(
		"cudaLaunchKernel", 180, 2, 3) RT("cudaLaunchKernel", 186, 1, 4)
		RT("cudaLaunchKernel", 187, 1, 5) "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaStreamWaitEvent\",\"pid\":1,\"tid\":1,\"ts\":188,\"dur\":1,\"args\":{}}," RT(
			"cudaLaunchKernel", 189, 1, 6) KERN("k1", 100, 10, 7, 1)
			KERN("k2", 160, 10, 7, 2) KERN("k3", 190, 10, 7, 3)
				KERN("k4", 210, 10, 7, 4) KERN("k5", 300, 10, 7, 5)
					KERN("k6", 400, 10, 7, 6) KERN("k7", 500, 10, 7, 99) END;

static void idle_gaps_get_their_causes(void **state)
{
	(void)state;
	struct kp_trace t;
	load_text(&t, causes_text);
	struct kp_breakdown b;
	breakdown_run(&t, NULL, &b);
	assert_int_equal(b.all.span_ns, 410000);
	assert_int_equal(b.all.class_ns[BD_COMPUTE], 70000);
	assert_int_equal(b.all.idle_ns, 340000);
	assert_int_equal(b.all.idle_cause_ns[IDLE_HOST], 50000 + 15000);
	assert_int_equal(b.all.idle_cause_ns[IDLE_SYNC], 5000 + 90000);
	assert_int_equal(b.all.idle_cause_ns[IDLE_LAUNCH], 10000);
	assert_int_equal(b.all.idle_cause_ns[IDLE_OTHER], 80000 + 90000);
	assert_int_equal(b.all.idle_gaps[IDLE_HOST], 2);
	assert_int_equal(b.all.idle_gaps[IDLE_SYNC], 2);
	assert_int_equal(b.all.idle_gaps[IDLE_LAUNCH], 1);
	assert_int_equal(b.all.idle_gaps[IDLE_OTHER], 2);
	assert_partition(&b.all, 1);
	breakdown_free(&b);

	/* a larger launch-gap threshold turns the 80 us queued gap into launch latency */
	struct kp_bd_opts o = { .launch_gap_ns = 100000 };
	breakdown_run(&t, &o, &b);
	assert_int_equal(b.all.idle_cause_ns[IDLE_LAUNCH], 10000 + 80000);
	assert_int_equal(b.all.idle_cause_ns[IDLE_OTHER], 90000);
	assert_partition(&b.all, 1);
	breakdown_free(&b);
	trace_free(&t);
}

static void step_windows_partition_the_span(void **state)
{
	(void)state;
	struct kp_trace t;
	load_text(&t, causes_text);
	struct kp_breakdown b;
	breakdown_run(&t, NULL, &b);
	/* step 1 launched k1, k2; step 2 k3..k6 (k7 has no launch): windows [100,190), [190,510) */
	assert_int_equal(b.nsteps, 2);
	assert_int_equal(b.steps[0].num, 1);
	assert_int_equal(b.steps[0].partial, 0);
	assert_int_equal(b.steps[0].cpu_ns, 90000);
	assert_int_equal(b.steps[0].b.start_ns, 100000);
	assert_int_equal(b.steps[0].b.span_ns, 90000);
	assert_int_equal(b.steps[0].b.class_ns[BD_COMPUTE], 20000);
	assert_int_equal(b.steps[0].b.idle_cause_ns[IDLE_HOST], 50000 + 15000);
	assert_int_equal(b.steps[0].b.idle_cause_ns[IDLE_SYNC], 5000);
	assert_int_equal(b.steps[1].num, 2);
	assert_int_equal(b.steps[1].partial, 1);
	assert_int_equal(b.steps[1].b.start_ns, 190000);
	assert_int_equal(b.steps[1].b.span_ns, 320000);
	int64_t span = 0, idle = 0, comp = 0;
	for (size_t i = 0; i < b.nsteps; i++) {
		assert_partition(&b.steps[i].b, 1);
		span += b.steps[i].b.span_ns;
		idle += b.steps[i].b.idle_ns;
		comp += b.steps[i].b.class_ns[BD_COMPUTE];
	}
	assert_int_equal(span, b.all.span_ns);
	assert_int_equal(idle, b.all.idle_ns);
	assert_int_equal(comp, b.all.class_ns[BD_COMPUTE]);
	breakdown_free(&b);
	trace_free(&t);
}

static void work_running_past_a_step_boundary_counts_in_the_next_window(void **state)
{
	(void)state;
	/* step 1 launches k1 [100,110) and k0 [100,200); step 2's first work, k2, starts at 160:
	 * windows [100,160) and [160,200), and k0's time past 160 counts in step 2 */
	static const char text[] = "{\"traceEvents\":[" STEP(1, 80, 60) STEP(2, 140, 100)
		RT("cudaLaunchKernel", 90, 2, 1) RT("cudaLaunchKernel", 95, 2, 2)
			RT("cudaLaunchKernel", 150, 2, 3) KERN("k1", 100, 10, 7, 1)
				KERN("k0", 100, 100, 8, 2) KERN("k2", 160, 10, 7, 3) END;
	struct kp_trace t;
	load_text(&t, text);
	struct kp_breakdown b;
	breakdown_run(&t, NULL, &b);
	assert_int_equal(b.nsteps, 2);
	assert_int_equal(b.steps[0].b.span_ns, 60000);
	assert_int_equal(b.steps[0].b.class_ns[BD_COMPUTE], 60000);
	assert_int_equal(b.steps[1].b.span_ns, 40000);
	assert_int_equal(b.steps[1].b.class_ns[BD_COMPUTE], 40000);
	assert_int_equal(b.all.idle_ns, 0);
	for (size_t i = 0; i < b.nsteps; i++)
		assert_partition(&b.steps[i].b, 1);
	breakdown_free(&b);
	trace_free(&t);
}

static void launch_statistics_per_kernel(void **state)
{
	(void)state;
	struct kp_trace t;
	load_text(&t, causes_text);
	struct kp_breakdown b;
	breakdown_run(&t, NULL, &b);
	/* six launch/kernel pairs, k7 has no launch call */
	assert_int_equal(b.launch_all.launches, 6);
	assert_int_equal(b.unlaunched, 1);
	assert_int_equal(b.launch_all.cpu_ns, (2 + 2 + 2 + 1 + 1 + 1) * 1000);
	/* launch -> start: 10, 10, 10, 24, 113, 211 us */
	assert_int_equal(b.launch_all.lat_ns, (10 + 10 + 10 + 24 + 113 + 211) * 1000);
	assert_int_equal(b.launch_all.lat_max_ns, 211000);
	assert_int_equal(b.launch_all.gpu_ns, 60000);
	/* 10 us kernels are not under 10 us; none ran shorter than its launch call */
	assert_int_equal(b.launch_all.short_n, 0);
	assert_int_equal(b.launch_all.cheaper_n, 0);
	assert_int_equal(b.nlaunch_rows, 6);
	/* ties on CPU time sort by name */
	assert_string_equal(b.launch_rows[0].name, "k1");
	assert_int_equal(b.launch_rows[0].cpu_ns, 2000);
	assert_string_equal(b.launch_rows[3].name, "k4");
	breakdown_free(&b);

	struct kp_bd_opts o = { .short_ns = 11000 };
	breakdown_run(&t, &o, &b);
	assert_int_equal(b.launch_all.short_n, 6);
	assert_int_equal(b.launch_all.short_ns, 60000);
	breakdown_free(&b);
	trace_free(&t);
}

/*
 * Short kernels are kernels: a launched 2 us memcpy is not one (it was counted as one; issue
 * 23 item 7), though it ran shorter than its launch call (HTA counts memory events there).
 */
static void short_kernels_count_kernels_only(void **state)
{
	(void)state;
	static const char text[] = "{\"traceEvents\":[" RT("cudaLaunchKernel", 0, 5, 1)
		RT("cudaMemcpyAsync", 10, 5, 2) RT("cudaLaunchKernel", 20, 5, 3)
			KERN("tiny", 30, 2, 7, 1) COPY(40, 2, 7, 2) KERN("big", 50, 40, 7, 3) END;
	struct kp_trace t;
	load_text(&t, text);
	struct kp_breakdown b;
	breakdown_run(&t, NULL, &b);
	assert_int_equal(b.launch_all.launches, 3);
	assert_int_equal(b.launch_all.kernels, 2);
	assert_int_equal(b.launch_all.kernel_ns, 42000);
	assert_int_equal(b.launch_all.short_n, 1);
	assert_int_equal(b.launch_all.short_ns, 2000);
	assert_int_equal(b.launch_all.cheaper_n, 2);
	breakdown_free(&b);
	trace_free(&t);
}

static void classes_by_category_name_and_collective_metadata(void **state)
{
	(void)state;
	struct kp_gpu g = { .name = "volta_sgemm_128x64_nn", .kind = GPU_KERNEL };
	assert_int_equal(breakdown_class(&g, 0), BD_COMPUTE);
	assert_int_equal(breakdown_class(&g, 1), BD_COMM);
	g.name = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)";
	assert_int_equal(breakdown_class(&g, 0), BD_COMM);
	g.name = "void rcclGenericKernel<1>(ncclDevComm*)";
	assert_int_equal(breakdown_class(&g, 0), BD_COMM);
	g.name = "__amd_rocclr_fillBufferAligned";
	assert_int_equal(breakdown_class(&g, 0), BD_MEMCPY);
	g.name = "Memset (Device)";
	g.kind = GPU_MEMSET;
	assert_int_equal(breakdown_class(&g, 0), BD_MEMCPY);
}

#define KERN_ON(dev, name, ts, dur, stream, corr)                                                  \
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":" #stream        \
	",\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"correlation\":" #corr ",\"device\":" #dev    \
	",\"stream\":" #stream "}},"

/*
 * Streams sort by device, then stream id, each swept alone over the whole span; a stream of
 * zero-length work only is all idle; devices count once however many streams they have.
 */
static void streams_of_two_devices_are_swept_each_alone(void **state)
{
	(void)state;
	static const char text[] = "{\"traceEvents\":[" KERN_ON(1, "a", 100, 100, 7, 1)
		KERN_ON(0, "b", 150, 100, 7, 2) KERN_ON(0, "c", 300, 10, 3, 3)
			KERN_ON(1, "d", 500, 0, 9, 4) END;
	struct kp_trace t;
	load_text(&t, text);
	struct kp_breakdown b;
	assert_int_equal(breakdown_run(&t, NULL, &b), 0);
	assert_int_equal(b.all.start_ns, 100000);
	assert_int_equal(b.all.span_ns, 210000);
	assert_int_equal(b.all.class_ns[BD_COMPUTE], 160000);
	assert_int_equal(b.all.idle_ns, 50000);
	assert_int_equal(b.ndevices, 2);
	assert_int_equal(b.nstreams, 4);
	static const struct {
		int32_t device;
		int64_t stream, compute_ns;
	} want[] = { { 0, 3, 10000 }, { 0, 7, 100000 }, { 1, 7, 100000 }, { 1, 9, 0 } };
	for (size_t i = 0; i < 4; i++) {
		const struct kp_bd_stream *s = &b.streams[i];
		assert_int_equal(s->device, want[i].device);
		assert_int_equal(s->stream, want[i].stream);
		assert_int_equal(s->b.start_ns, 100000);
		assert_int_equal(s->b.span_ns, 210000);
		assert_int_equal(s->b.class_ns[BD_COMPUTE], want[i].compute_ns);
		assert_int_equal(s->b.idle_ns, 210000 - want[i].compute_ns);
	}
	breakdown_free(&b);
	trace_free(&t);
}

static void an_empty_trace_has_an_empty_breakdown(void **state)
{
	(void)state;
	struct kp_trace t;
	load_text(&t, "{\"traceEvents\":[" END);
	struct kp_breakdown b;
	assert_int_equal(breakdown_run(&t, NULL, &b), 0);
	assert_int_equal(b.all.span_ns, 0);
	assert_int_equal(b.nsteps, 0);
	assert_int_equal(b.nstreams, 0);
	breakdown_free(&b);
	trace_free(&t);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(overlap_goes_to_the_first_class_in_priority_order),
		cmocka_unit_test(
			touching_intervals_do_not_overlap_and_same_class_streams_count_once),
		cmocka_unit_test(idle_gaps_get_their_causes),
		cmocka_unit_test(step_windows_partition_the_span),
		cmocka_unit_test(work_running_past_a_step_boundary_counts_in_the_next_window),
		cmocka_unit_test(launch_statistics_per_kernel),
		cmocka_unit_test(short_kernels_count_kernels_only),
		cmocka_unit_test(classes_by_category_name_and_collective_metadata),
		cmocka_unit_test(streams_of_two_devices_are_swept_each_alone),
		cmocka_unit_test(an_empty_trace_has_an_empty_breakdown),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
