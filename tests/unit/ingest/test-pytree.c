/*
 * test-pytree.c — the Python frame tree (src/ingest/pytree.c) and kprof analyze -g module /
 * -g source / --depth / folded stacks on testdata/handmade/pytree.json (made by hand; see
 * testdata/README.md): nesting, equal timestamps, a long bleed cut at the parent's end, a
 * short one made a sibling, C-call frames (address stripped in stacks, never a source line),
 * backward ops placed by their node's Sequence number, and a deep equal-timestamp chain
 * built in linear time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/analyze.h"
#include "kprof/devdb.h"
#include "kprof/link.h"
#include "kprof/pytree.h"
#include "kprof/trace.h"

static const char *path(void)
{
	static char p[512];
	const char *d = getenv("KPROF_TESTDATA");
	snprintf(p, sizeof(p), "%s/handmade/pytree.json", d ? d : "../../testdata");
	return p;
}

static void load(struct kp_trace *t, int jobs)
{
	struct kp_diag d;
	struct kp_load_opts lo = { .jobs = jobs, .chunk = jobs > 1 ? 64 : 0 };
	assert_int_equal(trace_load(t, path(), &lo, &d), 0);
	link_trace(t);
}

static int32_t frame_named(const struct kp_trace *t, const char *name)
{
	for (size_t i = 0; i < t->npy; i++)
		if (!strcmp(t->py[i].name, name))
			return (int32_t)i;
	fail_msg("no frame '%s'", name);
	return -1;
}

static int32_t op_named(const struct kp_trace *t, const char *name)
{
	for (size_t i = 0; i < t->nops; i++)
		if (!strcmp(t->ops[i].name, name))
			return (int32_t)i;
	fail_msg("no op '%s'", name);
	return -1;
}

static void predicates(void **state)
{
	(void)state;
	assert_true(pytree_user_source("e1.py(7): forward"));
	assert_true(pytree_user_source("transformers/models/bert/modeling_bert.py(123): forward"));
	assert_false(pytree_user_source("torch/nn/modules/linear.py(130): forward"));
	assert_false(pytree_user_source("<built-in method linear of PyCapsule object at 0x1>"));
	assert_false(pytree_user_source("nn.Module: Linear_0"));
	assert_false(pytree_user_source("forward"));
	assert_false(pytree_user_source("a.py(x): f"));
	assert_true(pytree_bwd_node("AddmmBackward0"));
	assert_true(pytree_bwd_node("autograd::engine::evaluate_function: AddmmBackward0"));
	assert_false(pytree_bwd_node("aten::convolution_backward"));
	assert_false(pytree_bwd_node("aten::mm"));
	/* one rule with capture's fwdbwd links: in-place-on-view nodes are nodes, helpers not */
	assert_true(pytree_bwd_node("torch::autograd::CopySlices"));
	assert_true(pytree_bwd_node("CompiledFunctionBackward"));
	assert_false(pytree_bwd_node("FooBackwardHelper"));
}

static void tree_from_time_nesting(void **state)
{
	(void)state;
	struct kp_trace t;
	load(&t, 1);
	assert_int_equal(t.npy, 9);
	int32_t root = frame_named(&t, "e1.py(16): <module>"),
		m0 = frame_named(&t, "nn.Module: M_0"), fwd = frame_named(&t, "e1.py(7): forward"),
		b0 = frame_named(&t, "nn.Module: B_0"),
		lin = frame_named(&t, "torch/nn/modules/linear.py(130): forward"),
		cc = frame_named(&t, "<built-in method linear of PyCapsule object at 0x7fb6f5b21a40>"),
		helper = frame_named(&t, "e1.py(30): helper"), sib = frame_named(&t, "e1.py(40): sib;x");
	assert_int_equal(t.py[root].parent, -1);
	/* equal start and length: the first in the file encloses the second */
	assert_int_equal(t.py[m0].parent, root);
	assert_int_equal(t.py[fwd].parent, m0);
	assert_int_equal(t.py[b0].parent, fwd);
	assert_int_equal(t.py[cc].parent, lin);
	assert_int_equal(t.py[cc].kind, PYF_CCALL);
	assert_int_equal(t.py[b0].kind, PYF_MODULE);
	assert_int_equal(t.py[m0].module_id, 0);
	assert_int_equal(t.py[fwd].pyid, 3);
	assert_int_equal(t.py[fwd].pyparent, 1);
	/* a 40 us bleed past forward's end: still its child (cut); 0.5 us: a sibling of both */
	assert_int_equal(t.py[helper].parent, fwd);
	assert_int_equal(t.py[sib].parent, root);
	assert_string_equal(t.py[b0].path, "M_0/B_0");
	assert_int_equal(t.py[cc].module, b0);
	assert_int_equal(t.py[cc].source, fwd); /* linear.py is torch's, a C call is no line */
	assert_int_equal(t.py[lin].source, fwd);
	assert_int_equal(t.py[root].source, root);
	char buf[512];
	pytree_stack_folded(&t, t.py[cc].stack, buf, sizeof(buf));
	assert_string_equal(buf, "e1.py(16): <module>;nn.Module: M_0;e1.py(7): forward;"
				 "nn.Module: B_0;torch/nn/modules/linear.py(130): forward;"
				 "<built-in method linear of PyCapsule object>");
	pytree_stack_folded(&t, t.py[sib].stack, buf, sizeof(buf));
	assert_string_equal(buf, "e1.py(16): <module>;e1.py(40): sib_x");
	/* an op starting with a frame is inside it; one after a cut bleed is not */
	assert_int_equal(t.op_frame[op_named(&t, "aten::linear")], cc);
	assert_int_equal(t.op_frame[op_named(&t, "aten::mul")], helper);
	assert_int_equal(t.op_frame[op_named(&t, "aten::sum")], root);
	/* backward: the node's Sequence number names the forward op; children inherit */
	int32_t mm = op_named(&t, "aten::mm");
	assert_int_equal(t.op_frame[mm], cc);
	assert_int_equal(t.op_bwd[mm], 1);
	assert_int_equal(t.op_bwd[op_named(&t, "aten::addmm")], 0);
	int32_t acc = op_named(&t, "torch::autograd::AccumulateGrad"); /* no seq: unplaced */
	assert_int_equal(t.op_frame[acc], -1);
	assert_int_equal(t.op_bwd[acc], 0);
	trace_free(&t);
}

/* Sequence numbers are per process: a backward node pairs with its own process's forward op */
static void backward_per_process(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_diag d;
	char p[512];
	const char *dir = getenv("KPROF_TESTDATA");
	snprintf(p, sizeof(p), "%s/handmade/pytree-2proc.json", dir ? dir : "../../testdata");
	struct kp_load_opts lo = { .jobs = 1 };
	assert_int_equal(trace_load(&t, p, &lo, &d), 0);
	link_trace(&t);
	int32_t a0 = frame_named(&t, "nn.Module: A_0"), b0 = frame_named(&t, "nn.Module: B_0");
	int seen = 0;
	for (size_t i = 0; i < t.nops; i++) {
		if (strcmp(t.ops[i].name, "aten::mm"))
			continue;
		int64_t pid = t.threads[t.ops[i].thread].pid;
		assert_int_equal(t.op_frame[i], pid == 1 ? a0 : b0);
		assert_int_equal(t.op_bwd[i], 1);
		seen++;
	}
	assert_int_equal(seen, 2);
	trace_free(&t);
}

static const struct kp_row *row(const struct kp_report *r, const char *name)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (!strcmp(r->rows[i].name, name))
			return &r->rows[i];
	fail_msg("no row '%s'", name);
	return NULL;
}

static void run(const struct kp_trace *t, enum kp_group g, int depth, struct kp_report *r)
{
	struct kp_analyze_opts o = { .group = g, .depth = depth, .folded = 1 };
	assert_int_equal(analyze_run(t, &o, r), 0);
	/* rows and folded lines partition the GPU time */
	int64_t sum = 0, fsum = 0;
	for (size_t i = 0; i < r->nrows; i++)
		sum += r->rows[i].time_ns;
	for (size_t i = 0; i < r->nfolds; i++)
		fsum += r->folds[i].ns;
	assert_int_equal(sum, 45000);
	assert_int_equal(fsum, 45000);
	assert_int_equal(r->tot.gpu_time_ns, 45000);
}

/* kernels (us): k1 10 under B_0, k2 4 under B_1, k3 2 under helper, k4 1 under sib, k5 1
 * outside modules, backward k6 20 (addmm), k7 3 (relu), k8 1 (sum), k9 2 (AccumulateGrad),
 * one memcpy of 1 without a launch */
static void module_rows(void **state)
{
	(void)state;
	for (int jobs = 1; jobs <= 3; jobs += 2) {
		struct kp_trace t;
		load(&t, jobs);
		struct kp_report r;
		run(&t, GROUP_MODULE, 0, &r);
		assert_int_equal(r.nrows, 6);
		assert_int_equal(row(&r, "M_0/B_0")->time_ns, 10000);
		assert_int_equal(row(&r, "M_0/B_1")->time_ns, 4000);
		assert_int_equal(row(&r, "M_0")->time_ns, 2000);
		assert_int_equal(row(&r, "M_0/B_0 [bwd]")->time_ns, 20000);
		assert_int_equal(row(&r, "M_0/B_1 [bwd]")->time_ns, 3000);
		assert_int_equal(row(&r, "(no module)")->time_ns, 6000);
		assert_int_equal(row(&r, "(no module)")->calls, 5);
		analyze_free(&r);

		run(&t, GROUP_MODULE, 1, &r);
		assert_int_equal(r.nrows, 3);
		assert_int_equal(row(&r, "M_0")->time_ns, 16000);
		assert_int_equal(row(&r, "M_0")->calls, 1); /* one call of M_0 */
		assert_int_equal(row(&r, "M_0 [bwd]")->time_ns, 23000);
		assert_int_equal(r.nfolds, 3);
		assert_string_equal(r.folds[0].stack, "M_0");
		assert_int_equal(r.folds[0].ns, 16000);
		analyze_free(&r);

		run(&t, GROUP_MODULE, 0, &r);
		int bwd = 0;
		for (size_t i = 0; i < r.nfolds; i++)
			if (!strcmp(r.folds[i].stack, "M_0;B_0;[bwd]"))
				bwd = 1, assert_int_equal(r.folds[i].ns, 20000);
		assert_true(bwd);
		analyze_free(&r);
		trace_free(&t);
	}
}

static void source_rows(void **state)
{
	(void)state;
	struct kp_trace t;
	load(&t, 1);
	struct kp_report r;
	run(&t, GROUP_SOURCE, 0, &r);
	assert_int_equal(r.nrows, 7);
	assert_int_equal(row(&r, "e1.py(7): forward")->time_ns, 14000);
	assert_int_equal(row(&r, "e1.py(30): helper")->time_ns, 2000);
	assert_int_equal(row(&r, "e1.py(40): sib;x")->time_ns, 1000);
	assert_int_equal(row(&r, "e1.py(16): <module>")->time_ns, 1000);
	assert_int_equal(row(&r, "e1.py(7): forward [bwd]")->time_ns, 23000);
	assert_int_equal(row(&r, "e1.py(16): <module> [bwd]")->time_ns, 1000);
	assert_int_equal(row(&r, "(no source)")->time_ns, 3000);
	/* the whole stack, one line per distinct stack */
	assert_int_equal(r.nfolds, 9);
	assert_string_equal(r.folds[3].stack, "e1.py(16): <module>;e1.py(40): sib_x");
	analyze_free(&r);
	trace_free(&t);
}

static void no_python_events(void **state)
{
	(void)state;
	struct kp_trace t;
	struct kp_diag d;
	struct kp_load_opts lo = { 0 };
	char p[512];
	const char *dir = getenv("KPROF_TESTDATA");
	snprintf(p, sizeof(p), "%s/handmade/annotations.json", dir ? dir : "../../testdata");
	assert_int_equal(trace_load(&t, p, &lo, &d), 0);
	link_trace(&t);
	assert_null(t.op_frame);
	struct kp_analyze_opts o = { .group = GROUP_MODULE };
	struct kp_report r;
	assert_int_equal(analyze_run(&t, &o, &r), 0);
	assert_int_equal(r.nrows, 1);
	assert_string_equal(r.rows[0].name, "(no module)");
	assert_int_equal(r.rows[0].time_ns, r.tot.gpu_time_ns);
	int warned = 0;
	for (int k = 0; k < r.warn.nkinds; k++)
		warned |= !strcmp(r.warn.k[k].kind, "traces without python_function events");
	assert_true(warned);
	analyze_free(&r);
	trace_free(&t);
}

/* 300,000 frames on one thread, all starting at 0 with one length: a chain, built in linear
 * time (a quadratic pass would not finish) */
static void deep_equal_timestamps(void **state)
{
	(void)state;
	enum { N = 300000 };
	struct kp_trace t;
	memset(&t, 0, sizeof(t));
	arena_init(&t.arena);
	strtab_init(&t.strs, &t.arena);
	t.py = xcalloc(N, sizeof(*t.py));
	t.npy = t.cappy = N;
	const char *names[2] = { "a.py(1): f", "nn.Module: L_0" };
	for (size_t i = 0; i < N; i++)
		t.py[i] = (struct kp_pyframe){ .ts_ns = 0,
					       .dur_ns = 1000,
					       .name = names[i == N - 1],
					       .kind = i == N - 1 ? PYF_MODULE : PYF_FUNC };
	struct kp_op op = { .ts_ns = 0, .dur_ns = 10, .name = "aten::add", .parent = -1 };
	t.ops = &op;
	t.nops = 1;
	pytree_link(&t);
	for (size_t i = 1; i < N; i++)
		assert_int_equal(t.py[i].parent, (int32_t)i - 1);
	assert_int_equal(t.op_frame[0], N - 1);
	assert_int_equal(t.pystacks[t.py[N - 1].stack].depth, N);
	assert_string_equal(t.py[N - 1].path, "L_0");
	assert_int_equal(t.py[N - 1].source, N - 2);
	t.ops = NULL;
	t.nops = 0;
	trace_free(&t);
}

/* a folded frame: escaped as every text output escapes names, ';' (the separator) as '_' */
static void fold_names_escaped(void **state)
{
	(void)state;
	char buf[128];
	size_t n = pytree_fold_name("a;b\x1b[2J\xe2\x80\xae\xe2\x80\xa8x", buf, 0, sizeof(buf));
	assert_string_equal(buf, "a_b\\u001b[2J\\u202e\\u2028x");
	assert_int_equal(n, strlen(buf));
	/* appended after @n, cut where it would not fit, never inside a character */
	n = pytree_fold_name("\xc3\xa9\xc3\xa9", buf, n, n + 4);
	assert_string_equal(buf + n - 2, "\xc3\xa9");
	assert_int_equal(n, strlen("a_b\\u001b[2J\\u202e\\u2028x") + 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fold_names_escaped), cmocka_unit_test(predicates),	  cmocka_unit_test(tree_from_time_nesting),
		cmocka_unit_test(module_rows),	  cmocka_unit_test(source_rows),
		cmocka_unit_test(backward_per_process),
		cmocka_unit_test(no_python_events), cmocka_unit_test(deep_equal_timestamps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
