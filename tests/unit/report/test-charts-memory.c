/*
 * test-charts-memory.c — the memory chart's data (src/report/charts-memory.c over memory.c's
 * downsampled curve) on a synthetic trace of a million [memory] events built in memory: the
 * curve's maximum is the peak exactly, its minimum the lowest event, the first and last
 * events kept, the size bounded; names in the hover text escaped in html and svg.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/charts.h"
#include "kprof/memory.h"
#include "kprof/table.h"

#define HOSTILE "<b>x</b> & \"q\" 'a'\nfake line"
#define HOSTILE_SHOWN "<b>x</b> & \"q\" 'a'\\nfake line" /* as a tip shows it */
#define MIB (1024 * 1024LL)

/*
 * N events on one thread, ts k * 997 + 3 ns: even k allocates 1 KiB x (1 + k % 13) at address
 * k, odd k frees it, so allocated is BASE or BASE + that block.  Two pairs differ: at DIP a
 * 500 MiB free of a block from before the trace (allocated BASE - 500 MiB, the lowest), then
 * its allocation again; at PEAK a 1 GiB block (BASE + 1 GiB, the highest: one event), freed
 * by the next.  Reserved is 2 x BASE, 2 x BASE + 1 GiB from PEAK on.  Ops: "outer" over all,
 * HOSTILE around PEAK.
 */
enum { N = 1000000, DIP = 250000, PEAK = 777776 };
static const int64_t BASE = 100 * MIB;

struct synth {
	struct kp_trace t;
	struct kp_thread th;
	struct kp_op ops[2];
};

static int64_t ts_of(size_t k)
{
	return (int64_t)k * 997 + 3;
}

static void synth_build(struct synth *s)
{
	memset(s, 0, sizeof(*s));
	s->th = (struct kp_thread){ .pid = 1, .tid = 1 };
	s->t.threads = &s->th;
	s->t.nthreads = 1;
	s->ops[0] = (struct kp_op){ .ts_ns = 0, .dur_ns = ts_of(N) + 10, .name = "outer",
				    .parent = -1 };
	s->ops[1] = (struct kp_op){ .ts_ns = ts_of(PEAK) - 1, .dur_ns = 10, .name = HOSTILE,
				    .parent = 0 };
	s->t.ops = s->ops;
	s->t.nops = 2;
	s->t.mem = calloc(N, sizeof(*s->t.mem));
	s->t.nmem = N;
	int64_t res = 2 * BASE;
	for (size_t k = 0; k < N; k++) {
		struct kp_mem *e = &s->t.mem[k];
		int64_t sz = 1024 * (1 + (int64_t)((k & ~(size_t)1) % 13));
		if (k == DIP || k == DIP + 1)
			sz = 500 * MIB;
		if (k == PEAK || k == PEAK + 1)
			sz = 1024 * MIB;
		if (k == PEAK)
			res += 1024 * MIB;
		int even = !(k & 1);
		if (k == DIP || k == DIP + 1) /* the free first, then the allocation */
			even = !even;
		*e = (struct kp_mem){ .ts_ns = ts_of(k),
				      .addr = k == DIP ? 1 : (int64_t)(k & ~(size_t)1) + 2,
				      .bytes = even ? sz : -sz,
				      .total_res = res,
				      .dev_type = 1,
				      .dev_id = 0 };
		e->total_alloc = k == DIP ? BASE - sz : even && k != DIP + 1 ? BASE + sz : BASE;
	}
}

static char *render(const struct kp_doc *doc, enum kp_format f)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&buf, &n);
	table_render(doc, f, 0, fp);
	fclose(fp);
	return buf;
}

static void million_events_keep_the_peak_and_stay_small(void **state)
{
	(void)state;
	struct synth *s = malloc(sizeof(*s));
	synth_build(s);
	struct kp_memrep m;
	memory_run(&s->t, &m);
	assert_int_equal(m.ngpu, 1);
	const struct kp_mem_dev *d = &m.devs[0];
	assert_int_equal(d->peak_alloc, BASE + 1024 * MIB);
	assert_true(d->ncurve <= 5 * MEM_CURVE_BUCKETS);

	struct kp_doc doc;
	doc_init(&doc, "analyze", 8);
	charts_memory(&doc, &m, &s->t);
	const struct kp_chart *ch = doc_find_chart(&doc, "memory");
	assert_non_null(ch);
	assert_int_equal(ch->kind, CHART_MEMORY);
	double hi = -1, lo = 1e300, rhi = -1;
	size_t n = 0, hover = 0;
	for (size_t i = 0; i < ch->npts; i++)
		if (ch->pts[i].series == 0) {
			hi = ch->pts[i].y > hi ? ch->pts[i].y : hi;
			lo = ch->pts[i].y < lo ? ch->pts[i].y : lo;
			rhi = ch->pts[i].w > rhi ? ch->pts[i].w : rhi;
			n++;
		}
	/* exact: the one-event spike and the one-event dip survive 1,000,000 -> n points */
	assert_true(hi == (double)(BASE + 1024 * MIB));
	assert_true(lo == (double)(BASE - 500 * MIB));
	assert_true(rhi == (double)(2 * BASE + 1024 * MIB));
	assert_true(n > 2 * MEM_CURVE_BUCKETS && n <= 5 * MEM_CURVE_BUCKETS);
	/* the first and last events, at their times since the trace's first op (0) */
	assert_true(ch->pts[0].x == (double)ts_of(0) && ch->pts[0].y == (double)(BASE + 1024));
	assert_true(ch->pts[n - 1].x == (double)ts_of(N - 1) && ch->pts[n - 1].y == (double)BASE);
	/* the peak: one point after the curve, at the spike's time, in its op */
	const struct kp_cpoint *pk = &ch->pts[ch->npts - 1];
	assert_int_equal(pk->series, 2);
	assert_true(pk->x == (double)ts_of(PEAK) && pk->y == hi);
	assert_string_equal(pk->label, HOSTILE);
	assert_non_null(strstr(pk->tip, "allocated 1.10 GiB, reserved 1.20 GiB"));
	/* hover bands: bounded, and the one holding the peak tells its op */
	int found = 0;
	for (size_t i = 0; i < ch->nspans; i++) {
		const struct kp_cspan *sp = &ch->spans[i];
		hover += sp->lane == 0;
		if (sp->lane == 0 && sp->t0 <= ts_of(PEAK) && ts_of(PEAK) < sp->t1)
			found = strstr(sp->tip, "allocated 1.10 GiB") && strstr(sp->tip, HOSTILE_SHOWN) &&
				strchr(sp->tip, '\n') == strrchr(sp->tip, '\n'); /* the tip's own */
	}
	assert_true(hover <= 2 * MEM_CURVE_BUCKETS);
	assert_true(found);
	assert_non_null(strstr(ch->note, "no ProfilerStep nor Optimizer.step"));

	/* the page and the svg: small, the name escaped in the hover text and the label */
	char *html = render(&doc, FMT_HTML), *svg = render(&doc, FMT_SVG);
	assert_true(strlen(html) < 2000000 && strlen(svg) < 2000000);
	for (int k = 0; k < 2; k++) {
		const char *p = k ? svg : html;
		assert_null(strstr(p, "<b>x"));
		assert_null(strstr(p, "\"q\" 'a'"));
		assert_non_null(strstr(p, "in &lt;b&gt;x&lt;/b&gt; &amp; &quot;q&quot; &#39;a&#39;"));
		assert_non_null(strstr(p, "class=\"hv\""));
	}
	free(html);
	free(svg);
	doc_free(&doc);
	memory_free(&m);
	free(s->t.mem);
	free(s);
}

/* No GPU device: one chart that says how to record memory, drawn as such. */
static void no_gpu_events_say_so(void **state)
{
	(void)state;
	struct kp_trace t = { 0 };
	struct kp_memrep m;
	memory_run(&t, &m);
	struct kp_doc doc;
	doc_init(&doc, "analyze", 8);
	charts_memory(&doc, &m, &t);
	const struct kp_chart *ch = doc_find_chart(&doc, "memory");
	assert_non_null(ch);
	assert_int_equal(ch->npts, 0);
	char *svg = render(&doc, FMT_SVG);
	assert_non_null(strstr(svg, "no GPU [memory] events: record with"));
	free(svg);
	doc_free(&doc);
	memory_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(million_events_keep_the_peak_and_stay_small),
		cmocka_unit_test(no_gpu_events_say_so),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
