/*
 * test-memory.c — memory_run (src/analysis/memory.c) on synthetic traces read by pipeline_run:
 * pairing by address, the remainder allocated before the trace, equal timestamps, frees of
 * blocks from before the window, the CPU apart, the 2021 layout (Bytes only), and the same
 * figures from a parallel parse (src/ingest/trace-chunk.c).  Expected figures are worked out
 * by hand in the comments.
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

#include "kprof/memory.h"
#include "kprof/pipeline.h"

#define MEM(ts, addr, bytes, ta, tr)                                                               \
	"{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":1,"  \
	"\"tid\":1,\"ts\":" #ts ",\"args\":{\"Total Reserved\":" #tr ",\"Total Allocated\":" #ta    \
	",\"Bytes\":" #bytes ",\"Device Id\":0,\"Device Type\":1,\"Addr\":" #addr "}},\n"

/*
 * Ops on thread 1: outer [0,100) us, aten::mm [10,20), aten::add [30,40); ProfilerStep#3.
 * Allocator events (time order; TA = Total Allocated after each, 500 before the window):
 *   5   +100 @A  TA 600   outer
 *   10  +200 @B  TA 800   aten::mm (starts at 10: the inner op holds it)
 *   15  -300 @Z  TA 500   a block from before the window (no alloc)
 *   30  +400 @C  TA 900   aten::add  <- the peak (reserved 4096)
 *   30  -100 @A  TA 800   equal time, after it in the file
 *   35  +50  @D  TA 850   aten::add
 *   50  -400 @C  TA 450   (written before the ts 35 event: file order is not time order)
 *   120 +64  @A  TA 514   no op (outer ended at 100); A reused after its free
 * Live at the peak: A 100 (outer), B 200 (aten::mm), C 400 (aten::add) = 700, so 900 - 700 =
 * 200 was allocated before the trace (500 less the 300 freed).  Never freed: B, D, A again.
 * The ts 10 event lists its keys name, cat, ph: the decoder keeps it in any order.  Other
 * instants (a "[memory]" under another category, another instant name) are not memory.
 */
static const char full_trace[] =
	"{\"traceEvents\":[\n"
	"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#3\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":200},\n"
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"outer\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100},\n"
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":10},\n"
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":1,\"tid\":1,\"ts\":30,\"dur\":10},\n"
	MEM(5, 1000, 100, 600, 2048)
	"{\"name\":\"[memory]\",\"cat\":\"cpu_instant_event\",\"pid\":1,\"tid\":1,\"ts\":10,\"args\":"
	"{\"Total Reserved\":2048,\"Total Allocated\":800,\"Bytes\":200,\"Device Id\":0,"
	"\"Device Type\":1,\"Addr\":2000},\"ph\":\"i\"},\n"
	"{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":12,"
	"\"args\":{\"Total Reserved\":0,\"Total Allocated\":8,\"Bytes\":8,\"Device Id\":-1,"
	"\"Device Type\":0,\"Addr\":77}},\n"
	MEM(15, 9999, -300, 500, 2048)
	MEM(30, 3000, 400, 900, 4096)
	MEM(30, 1000, -100, 800, 4096)
	MEM(50, 3000, -400, 450, 4096)
	MEM(35, 4000, 50, 850, 4096)
	MEM(120, 1000, 64, 514, 4096)
	"{\"ph\":\"i\",\"cat\":\"cpu_op\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":60,"
	"\"args\":{\"Bytes\":1000000,\"Device Id\":0,\"Device Type\":1}},\n"
	"{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[OutOfMemory]\",\"pid\":1,\"tid\":1,"
	"\"ts\":61,\"args\":{\"Bytes\":1000000,\"Device Id\":0,\"Device Type\":1}}\n"
	"]}\n";

/* torch <= 1.9: Bytes, Device Type, Device Id only; running sums 100, 300, 200, 250 */
static const char old_trace[] =
	"{\"traceEvents\":[\n"
	"{\"ph\":\"X\",\"cat\":\"Operator\",\"name\":\"aten::empty\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10},\n"
	"{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":1,\"args\":{\"Device Type\":1,\"Device Id\":0,\"Bytes\":100}},\n"
	"{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":2,\"args\":{\"Device Type\":1,\"Device Id\":0,\"Bytes\":200}},\n"
	"{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":20,\"args\":{\"Device Type\":1,\"Device Id\":0,\"Bytes\":-100}},\n"
	"{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":21,\"args\":{\"Device Type\":1,\"Device Id\":0,\"Bytes\":50}}\n"
	"]}\n";

struct run {
	char path[64];
	struct kp_pipeline_out p;
};

static const struct kp_memrep *load(struct run *r, const char *text, int jobs)
{
	strcpy(r->path, "/tmp/kprof-test-memory-XXXXXX");
	int fd = mkstemp(r->path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	struct kp_pipeline_in in = { .path = r->path,
				     .load = { .jobs = jobs, .chunk = jobs > 1 ? 64 : 0 },
				     .memory = 1 };
	assert_int_equal(pipeline_run(&in, &r->p), 0);
	unlink(r->path);
	return &r->p.memory;
}

static const struct kp_mem_row *live_row(const struct kp_mem_dev *d, const char *op)
{
	for (size_t i = 0; i < d->nlive; i++)
		if (!strcmp(d->live[i].op, op))
			return &d->live[i];
	return NULL;
}

static const struct kp_mem_row *op_row(const struct kp_mem_dev *d, const char *op)
{
	for (size_t i = 0; i < d->nops; i++)
		if (!strcmp(d->ops[i].op, op))
			return &d->ops[i];
	return NULL;
}

static void check_full(const struct kp_memrep *m)
{
	assert_int_equal(m->nevents, 9); /* the cpu_op "[memory]" and [OutOfMemory] are not */
	assert_int_equal(m->ndevs, 2);
	assert_int_equal(m->ngpu, 1);
	const struct kp_mem_dev *d = &m->devs[0];
	assert_int_equal(d->dev_type, 1);
	assert_int_equal(d->dev_id, 0);
	assert_false(d->bytes_only);
	assert_int_equal(d->nallocs, 5);
	assert_int_equal(d->nfrees, 3);
	assert_int_equal(d->peak_alloc, 900);
	assert_int_equal(d->peak_ts_ns, 30000);
	assert_int_equal(d->peak_res, 4096);
	assert_int_equal(d->res_at_peak, 4096);
	assert_int_equal(d->baseline, 500);
	assert_int_equal(d->step, 3);
	assert_string_equal(d->peak_op, "aten::add");
	assert_int_equal(d->unmatched_frees, 1);
	assert_int_equal(d->unmatched_free_bytes, 300);
	assert_int_equal(d->double_allocs, 0);
	assert_int_equal(d->kept_count, 3);
	assert_int_equal(d->kept_bytes, 200 + 50 + 64);
	/* live at the peak: add 400, mm 200, outer 100, then the remainder 200 */
	assert_int_equal(d->nlive, 4);
	assert_string_equal(d->live[0].op, "aten::add");
	assert_int_equal(d->live[0].bytes, 400);
	assert_int_equal(d->live[1].bytes, 200);
	assert_string_equal(d->live[1].op, "aten::mm");
	assert_int_equal(live_row(d, "outer")->bytes, 100);
	assert_string_equal(d->live[3].op, MEM_BEFORE);
	assert_int_equal(d->live[3].bytes, 200);
	int64_t sum = 0;
	for (size_t i = 0; i < d->nlive; i++)
		sum += d->live[i].bytes;
	assert_int_equal(sum, d->peak_alloc);
	const struct kp_mem_row *add = op_row(d, "aten::add");
	assert_int_equal(add->alloc_bytes, 450);
	assert_int_equal(add->alloc_count, 2);
	assert_int_equal(add->freed_bytes, 400);
	assert_int_equal(add->kept_bytes, 50);
	assert_int_equal(op_row(d, MEM_NO_OP)->kept_bytes, 64);
	assert_int_equal(op_row(d, "outer")->freed_count, 1);
	/* the CPU apart, last */
	assert_int_equal(m->devs[1].dev_type, 0);
	assert_int_equal(m->devs[1].dev_id, -1);
	assert_int_equal(m->devs[1].peak_alloc, 8);
	assert_string_equal(m->devs[1].peak_op, "aten::mm");
}

static void full_layout(void **state)
{
	(void)state;
	struct run r;
	check_full(load(&r, full_trace, 1));
	pipeline_free(&r.p);
}

static void full_layout_parallel(void **state)
{
	(void)state;
	struct run r;
	check_full(load(&r, full_trace, 3));
	pipeline_free(&r.p);
}

static void layout_2021(void **state)
{
	(void)state;
	struct run r;
	const struct kp_memrep *m = load(&r, old_trace, 1);
	assert_int_equal(m->ndevs, 1);
	const struct kp_mem_dev *d = &m->devs[0];
	assert_true(d->bytes_only);
	assert_int_equal(d->peak_alloc, 300);
	assert_int_equal(d->peak_ts_ns, 2000);
	assert_int_equal(d->peak_res, -1);
	assert_int_equal(d->baseline, -1);
	assert_int_equal(d->nlive, 0);
	assert_string_equal(d->peak_op, "aten::empty");
	const struct kp_mem_row *e = op_row(d, "aten::empty");
	assert_int_equal(e->alloc_bytes, 300);
	assert_int_equal(e->alloc_count, 2);
	assert_int_equal(e->freed_bytes, -1);
	assert_int_equal(op_row(d, MEM_NO_OP)->alloc_bytes, 50);
	/* the curve: few events, each kept, the running sums, reserved unknown, ops by time */
	static const int64_t ts[] = { 1000, 2000, 20000, 21000 }, sums[] = { 100, 300, 200, 250 };
	assert_int_equal(d->ncurve, 4);
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(d->curve[i].ts_ns, ts[i]);
		assert_int_equal(d->curve[i].alloc, sums[i]);
		assert_int_equal(d->curve[i].res, -1);
	}
	assert_string_equal(d->curve[1].op, "aten::empty");
	assert_null(d->curve[2].op); /* 20 us: after aten::empty's [0, 10) */
	assert_int_equal(d->curve_t0, 1000);
	assert_int_equal(d->curve_bw, (20001 + MEM_CURVE_BUCKETS - 1) / MEM_CURVE_BUCKETS);
	pipeline_free(&r.p);
}

/* a free's address allocated again with no free between: the first block counts as freed */
static void lost_free(void **state)
{
	(void)state;
	static const char text[] = "{\"traceEvents\":[\n" MEM(1, 10, 100, 100, 0)
		MEM(2, 10, 100, 200, 0) MEM(3, 10, -100, 100, 0) "{}]}\n";
	struct run r;
	const struct kp_memrep *m = load(&r, text, 1);
	const struct kp_mem_dev *d = &m->devs[0];
	assert_int_equal(d->double_allocs, 1);
	assert_int_equal(d->peak_alloc, 200);
	assert_int_equal(d->kept_count, 0);
	/* the first block counts as freed at the second allocation: the peak's other 100 bytes
	   fall to the remainder */
	assert_int_equal(live_row(d, MEM_NO_OP)->bytes, 100);
	assert_int_equal(live_row(d, MEM_BEFORE)->bytes, 100);
	pipeline_free(&r.p);
}

static void no_events(void **state)
{
	(void)state;
	struct run r;
	const struct kp_memrep *m = load(&r, "{\"traceEvents\":[]}", 1);
	assert_int_equal(m->nevents, 0);
	assert_int_equal(m->ndevs, 0);
	pipeline_free(&r.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full_layout),
		cmocka_unit_test(full_layout_parallel),
		cmocka_unit_test(layout_2021),
		cmocka_unit_test(lost_free),
		cmocka_unit_test(no_events),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
