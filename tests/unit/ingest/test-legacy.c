/*
 * test-legacy.c — 2020-2021 traces (PyTorch 1.8-1.10): legacy categories, ProfilerStep#N
 * under "Operator", conv FLOPs through the forward/backward link (fwdbwd.c) and the
 * cudnn_convolution_backward_input / _weight models.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/analyze.h"
#include "kprof/devdb.h"
#include "kprof/link.h"
#include "kprof/opmodel.h"
#include "kprof/trace.h"

static struct kp_devdb db;

static const char *data(const char *rel)
{
	static char buf[1024];
	const char *dir = getenv("KPROF_TESTDATA");
	snprintf(buf, sizeof(buf), "%s/%s", dir ? dir : "../../testdata", rel);
	return buf;
}

static void load(struct kp_trace *t, const char *rel)
{
	struct kp_diag d = { 0 };
	struct kp_load_opts lo = { 0 };
	int rc = trace_load(t, data(rel), &lo, &d);
	if (rc)
		fprintf(stderr, "%s\n", d.msg);
	assert_int_equal(rc, 0);
	link_trace(t);
}

static struct kp_slot tensor(int nd, const int64_t *dims)
{
	return (struct kp_slot){ .ndim = nd, .dims = dims, .dtype = DT_F32, .concrete = "" };
}

/* a slot of a 2021 trace: a GenericList / int / bool with no value recorded */
static struct kp_slot empty(void)
{
	return (struct kp_slot){ .dtype = DT_NONE, .concrete = "" };
}

static void conv_without_stride_takes_its_output_from_the_backward(void **state)
{
	(void)state;
	/* convolution(x [8,16,32,32], w [32,16,3,3], bias [32], stride 2, padding 1): y [8,32,16,16] */
	static const int64_t x[] = { 8, 16, 32, 32 }, w[] = { 32, 16, 3, 3 }, b[] = { 32 };
	static const int64_t y[] = { 8, 32, 16, 16 };
	struct kp_slot s[9] = { tensor(4, x), tensor(4, w), tensor(1, b), empty(), empty(),
				empty(),      empty(),      empty(),      empty() };
	struct kp_slot dy = tensor(4, y);
	struct kp_op_in in = { .name = "aten::convolution",
			       .nslots = 9,
			       .slots = s,
			       .kernel_flop = -1,
			       .kernel_num_gb = -1 };
	struct kp_cost c;
	/* no link: the stride is unknown, no figures */
	assert_int_equal(opmodel_eval(&in, &c), -1);
	assert_int_equal(c.flops, -1);
	in.linked_out = &dy;
	assert_int_equal(opmodel_eval(&in, &c), 0);
	assert_int_equal(c.flops, 2LL * 8 * 32 * 16 * 9 * 16 * 16);
	assert_int_equal(c.bytes, (8 * 16 * 32 * 32 + 32 * 16 * 9 + 32 + 8 * 32 * 16 * 16) * 4);
	/* grouped: w [32,4,3,3] on 16 channels is 4 groups */
	static const int64_t wg[] = { 32, 4, 3, 3 };
	s[1] = tensor(4, wg);
	assert_int_equal(opmodel_eval(&in, &c), 0);
	assert_int_equal(c.flops, 2LL * 8 * 32 * 4 * 9 * 16 * 16);
	/* a grad_output that does not fit the weight is no link */
	static const int64_t bad[] = { 8, 31, 16, 16 };
	struct kp_slot dbad = tensor(4, bad);
	in.linked_out = &dbad;
	assert_int_equal(opmodel_eval(&in, &c), -1);
	/* a larger output than input: transposed (weight [C_in, C_out/g, k..]) */
	static const int64_t xt[] = { 8, 32, 16, 16 }, wt[] = { 32, 16, 3, 3 },
			     yt[] = { 8, 16, 32, 32 };
	struct kp_slot st[9] = { tensor(4, xt), tensor(4, wt), empty(), empty(), empty(),
				 empty(),       empty(),       empty(), empty() };
	struct kp_slot dyt = tensor(4, yt);
	struct kp_op_in tin = { .name = "aten::convolution",
				.nslots = 9,
				.slots = st,
				.kernel_flop = -1,
				.kernel_num_gb = -1,
				.linked_out = &dyt };
	assert_int_equal(opmodel_eval(&tin, &c), 0);
	assert_int_equal(c.flops, 2LL * 8 * 32 * 16 * 9 * 16 * 16);
}

static void legacy_backward_parts_cost_the_forward_each(void **state)
{
	(void)state;
	static const int64_t x[] = { 8, 16, 32, 32 }, w[] = { 32, 16, 3, 3 },
			     y[] = { 8, 32, 16, 16 };
	const int64_t fwd = 2LL * 8 * 32 * 16 * 9 * 16 * 16;
	struct kp_slot px = tensor(4, x), pw = tensor(4, w);
	/* cudnn_convolution_backward_input(self_size, grad_output, weight, padding, ...) */
	struct kp_slot si[10] = { empty(), tensor(4, y), tensor(4, w), empty(), empty(),
				  empty(), empty(),      empty(),      empty(), empty() };
	struct kp_op_in bi = { .name = "aten::cudnn_convolution_backward_input",
			       .nslots = 10,
			       .slots = si,
			       .kernel_flop = -1,
			       .kernel_num_gb = -1 };
	struct kp_cost c;
	assert_int_equal(opmodel_eval(&bi, &c), 0);
	assert_int_equal(c.flops, fwd);
	assert_int_equal(c.bytes, -1); /* dx size not recorded and no parent */
	assert_non_null(c.note);
	bi.linked_x = &px;
	assert_int_equal(opmodel_eval(&bi, &c), 0);
	assert_int_equal(c.bytes, (8 * 32 * 16 * 16 + 32 * 16 * 9 + 8 * 16 * 32 * 32) * 4);
	/* cudnn_convolution_backward_weight(weight_size, grad_output, self, ...) */
	struct kp_slot sw[10] = { empty(), tensor(4, y), tensor(4, x), empty(), empty(),
				  empty(), empty(),      empty(),      empty(), empty() };
	struct kp_op_in bw = { .name = "aten::cudnn_convolution_backward_weight",
			       .nslots = 10,
			       .slots = sw,
			       .kernel_flop = -1,
			       .kernel_num_gb = -1 };
	assert_int_equal(opmodel_eval(&bw, &c), -1); /* no weight shape anywhere */
	bw.linked_w = &pw;
	assert_int_equal(opmodel_eval(&bw, &c), 0);
	assert_int_equal(c.flops, fwd);
	assert_int_equal(c.bytes, (8 * 32 * 16 * 16 + 8 * 16 * 32 * 32 + 32 * 16 * 9) * 4);
	/* a weight_size recorded as text serves too */
	bw.linked_w = NULL;
	sw[0].concrete = "[32, 16, 3, 3]";
	assert_int_equal(opmodel_eval(&bw, &c), 0);
	assert_int_equal(c.flops, fwd);
	assert_int_equal(opmodel_class("aten::cudnn_convolution_backward_input"), MODEL_PRIMARY);
	assert_int_equal(opmodel_class("aten::cudnn_convolution_backward"), MODEL_NONE);
}

static void a_2021_trace_gets_steps_links_and_exact_conv_flops(void **state)
{
	(void)state;
	struct kp_trace t;
	load(&t, "legacy-2021/conv_train_2021.json");
	/* ProfilerStep#1, #2 under cat "Operator" are steps, not ops */
	assert_int_equal(t.nsteps, 2);
	for (size_t i = 0; i < t.nops; i++)
		assert_true(strncmp(t.ops[i].name, "ProfilerStep#", 13));
	/* every kernel, memcpy and memset (cat Kernel / Memcpy / Memset) reaches an op via Runtime */
	assert_int_equal(t.ngpu, 20);
	assert_int_equal(t.nlaunches, 20);
	for (size_t i = 0; i < t.ngpu; i++) {
		assert_true(t.gpu[i].launch >= 0);
		assert_true(t.gpu[i].op >= 0);
		assert_true(t.gpu[i].step >= 0);
	}
	/* each forward aten::convolution found its backward */
	int nconv = 0;
	for (size_t i = 0; i < t.nops; i++)
		if (!strcmp(t.ops[i].name, "aten::convolution")) {
			nconv++;
			assert_true(trace_opx(&t, &t.ops[i])->bwd >=
				    0); /* by its Sequence number */
		}
	assert_int_equal(nconv, 4);

	struct kp_report r;
	struct kp_analyze_opts o = { .group = GROUP_OP, .db = &db };
	assert_int_equal(analyze_run(&t, &o, &r), 0);
	assert_int_equal(r.tot.steps, 2);
	/* per step: conv A [8,3,32,32]*[16,3,3,3] s1 p1, conv B [8,16,32,32]*[32,16,3,3] s2 p1 */
	const int64_t a = 2LL * 8 * 16 * 3 * 9 * 32 * 32, b = 2LL * 8 * 32 * 16 * 9 * 16 * 16;
	int found = 0;
	for (size_t i = 0; i < r.nrows; i++) {
		const struct kp_row *row = &r.rows[i];
		if (!strcmp(row->name, "aten::convolution"))
			found++, assert_int_equal(row->flops, 2 * (a + b));
		if (!strcmp(row->name, "aten::cudnn_convolution_backward_input"))
			found++, assert_int_equal(row->flops, 2 * b);
		if (!strcmp(row->name, "aten::cudnn_convolution_backward_weight"))
			found++, assert_int_equal(row->flops, 2 * (a + b));
	}
	assert_int_equal(found, 3);
	assert_int_equal(r.tot.flops, 2 * (3 * b + 2 * a));
	assert_int_equal(diag_warn_total(&r.warn), 0);
	analyze_free(&r);
	trace_free(&t);
}

static void a_real_2021_trace_links_and_names_its_device(void **state)
{
	(void)state;
	/* 49 events of pytorch/kineto's tb_plugin/test/gpu_metrics_input.json (May 2021) */
	struct kp_trace t;
	load(&t, "kineto-2021/gpu_metrics_input_excerpt.json");
	assert_int_equal(t.nsteps, 1);
	assert_int_equal(t.steps[0].num, 2);
	assert_int_equal(t.ngpu, 11);
	for (size_t i = 0; i < t.ngpu; i++) {
		assert_true(t.gpu[i].op >= 0);
		assert_true(t.gpu[i].step >= 0);
	}
	/* computeProperties with multiProcessorCount, major, minor */
	assert_int_equal(t.ndevs, 1);
	assert_string_equal(t.devs[0].name, "Tesla V100-DGXS-32GB");
	assert_int_equal(t.devs[0].sms, 80);
	assert_int_equal(t.devs[0].cc_major, 7);
	assert_int_equal(t.devs[0].cc_minor, 0);
	struct kp_report r;
	struct kp_analyze_opts o = { .group = GROUP_OP, .db = &db };
	assert_int_equal(analyze_run(&t, &o, &r), 0);
	assert_non_null(r.dev);
	assert_int_equal(r.tot.unlinked, 0);
	/* record_shapes was off: the aten::mm / add_ / fill_ kernels have no figures */
	assert_int_equal(r.tot.flops_ns, 0);
	assert_int_equal(r.tot.nomodel_kernels[NOMODEL_NOSHAPES], 5);
	analyze_free(&r);
	trace_free(&t);
}

static int setup(void **state)
{
	(void)state;
	struct kp_diag d = { 0 };
	return devdb_load_builtin(&db, &d);
}

static int teardown(void **state)
{
	(void)state;
	devdb_free(&db);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(conv_without_stride_takes_its_output_from_the_backward),
		cmocka_unit_test(legacy_backward_parts_cost_the_forward_each),
		cmocka_unit_test(a_2021_trace_gets_steps_links_and_exact_conv_flops),
		cmocka_unit_test(a_real_2021_trace_links_and_names_its_device),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
