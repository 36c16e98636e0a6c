/*
 * test-fwdbwd.c — forward/backward convolution links (fwdbwd.c) on synthetic op trees: the
 * Sequence number pairs a forward conv with its backward, shapes settle collisions, and legacy
 * cudnn backward_input/_weight ops borrow their parent's shapes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/fwdbwd.h"
#include "kprof/opmodel.h"
#include "kprof/trace.h"

static const int64_t X[] = { 8, 3, 32, 32 }, W[] = { 16, 3, 3, 3 }, Y[] = { 8, 16, 30, 30 };
static const int64_t W2[] = { 16, 3, 5, 5 }, Y2[] = { 8, 16, 28, 28 };

#define SLOT(d) { .ndim = 4, .dims = (d), .dtype = DT_F32, .concrete = "" }

static struct kp_slot fwd_slots[] = { SLOT(X), SLOT(W) };
/* aten::convolution_backward(grad_output, input, weight, ...) */
static struct kp_slot bwd_slots[] = { SLOT(Y), SLOT(X), SLOT(W) };
static struct kp_slot bwd2_slots[] = { SLOT(Y2), SLOT(X), SLOT(W2) };
/* aten::cudnn_convolution_backward(input, grad_output, weight, ...) */
static struct kp_slot cudnn_slots[] = { SLOT(X), SLOT(Y), SLOT(W) };

/* the op's Sequence number rides in model until trace_of() moves it to the trace's opx */
static struct kp_op op(const char *name, int32_t parent, int64_t seq, struct kp_slot *slots, int n)
{
	return (struct kp_op){ .name = name,
			       .parent = parent,
			       .model = (int32_t)seq,
			       .slots = slots,
			       .nslots = (int16_t)n,
			       .cls = (int8_t)opmodel_class(name) };
}

static struct kp_trace trace_of(struct kp_op *ops, size_t n)
{
	static struct kp_opx opx[16];
	assert_true(n <= 16);
	for (size_t i = 0; i < n; i++) {
		opx[i] = (struct kp_opx){ .kernel_flop = -1,
					  .kernel_num_gb = -1,
					  .seq = ops[i].model,
					  .op = (int32_t)i,
					  .bwd = -1 };
		ops[i].model = -1;
	}
	return (struct kp_trace){ .ops = ops, .nops = n, .capops = n, .opx = opx, .nopx = n };
}

/* op @i's backward (kp_opx.bwd), -1 */
static int32_t bwd_of(const struct kp_trace *t, int i)
{
	return trace_opx(t, &t->ops[i])->bwd;
}

static void a_forward_conv_links_to_the_backward_of_its_sequence_number(void **state)
{
	(void)state;
	struct kp_op ops[] = {
		op("aten::conv2d", -1, -1, NULL, 0),
		op("aten::convolution", 0, 7, fwd_slots, 2), /* 1: forward */
		op("ConvolutionBackward0", -1, 7, NULL, 0),  /* 2: autograd node */
		op("autograd::engine::evaluate_function", 2, -1, NULL, 0),
		op("aten::convolution_backward", 3, -1, bwd_slots, 3), /* 4: two levels down */
	};
	struct kp_trace t = trace_of(ops, 5);
	fwdbwd_link(&t);
	assert_int_equal(bwd_of(&t, 1), 4);
	assert_int_equal(bwd_of(&t, 0), -1);
	struct kp_op_in in;
	fwdbwd_inputs(&t, 1, &in);
	assert_ptr_equal(in.linked_out, &bwd_slots[0]); /* grad_output: the forward's output */
	assert_null(in.linked_x);
	assert_null(in.linked_w);
	fwdbwd_inputs(&t, 0, &in);
	assert_null(in.linked_out);
}

static void other_sequence_numbers_and_nodes_do_not_link(void **state)
{
	(void)state;
	struct kp_op ops[] = {
		op("aten::convolution", -1, 7, fwd_slots, 2),
		op("ConvolutionBackward0", -1, 8, NULL, 0),
		op("aten::convolution_backward", 1, -1, bwd_slots, 3),
		op("MmBackward0", -1, 7, NULL, 0), /* not a conv node */
		op("aten::convolution_backward", 3, -1, bwd_slots, 3),
		op("aten::convolution_backward", -1, -1, bwd_slots, 3), /* no node at all */
	};
	struct kp_trace t = trace_of(ops, 6);
	fwdbwd_link(&t);
	assert_int_equal(bwd_of(&t, 0), -1);
	/* a forward without a Sequence number never links */
	struct kp_op ops2[] = {
		op("aten::convolution", -1, -1, fwd_slots, 2),
		op("ConvolutionBackward0", -1, -1, NULL, 0),
		op("aten::convolution_backward", 1, -1, bwd_slots, 3),
	};
	t = trace_of(ops2, 3);
	fwdbwd_link(&t);
	assert_int_equal(bwd_of(&t, 0), -1);
}

static void shapes_settle_a_sequence_number_shared_by_two_threads(void **state)
{
	(void)state;
	struct kp_slot fwd2[] = { SLOT(X), SLOT(W2) };
	struct kp_op ops[] = {
		op("aten::convolution", -1, 3, fwd_slots, 2), /* 0: thread A, 3x3 */
		op("aten::convolution", -1, 3, fwd2, 2),      /* 1: thread B, 5x5 */
		op("ConvolutionBackward0", -1, 3, NULL, 0),
		op("aten::convolution_backward", 2, -1, bwd2_slots, 3), /* 3: the 5x5's */
		op("ConvolutionBackward0", -1, 3, NULL, 0),
		op("aten::convolution_backward", 4, -1, bwd_slots, 3), /* 5: the 3x3's */
	};
	struct kp_trace t = trace_of(ops, 6);
	fwdbwd_link(&t);
	assert_int_equal(bwd_of(&t, 0), 5);
	assert_int_equal(bwd_of(&t, 1), 3);
	struct kp_op_in in;
	fwdbwd_inputs(&t, 1, &in);
	assert_ptr_equal(in.linked_out, &bwd2_slots[0]);
	assert_int_equal(in.linked_out->dims[3], 28);
}

static void cudnn_backward_puts_grad_output_second(void **state)
{
	(void)state;
	struct kp_op ops[] = {
		op("aten::cudnn_convolution", -1, 11, fwd_slots, 2),
		op("CudnnConvolutionBackward", -1, 11, NULL, 0),
		op("aten::cudnn_convolution_backward", 1, -1, cudnn_slots, 3),
		op("aten::cudnn_convolution_backward_input", 2, -1, NULL, 0),
		op("aten::cudnn_convolution_backward_weight", 2, -1, NULL, 0),
	};
	struct kp_trace t = trace_of(ops, 5);
	fwdbwd_link(&t);
	assert_int_equal(bwd_of(&t, 0), 2);
	struct kp_op_in in;
	fwdbwd_inputs(&t, 0, &in);
	assert_ptr_equal(in.linked_out, &cudnn_slots[1]);
	/* the legacy split ops take input and weight from their parent */
	fwdbwd_inputs(&t, 3, &in);
	assert_ptr_equal(in.linked_x, &cudnn_slots[0]);
	assert_ptr_equal(in.linked_w, &cudnn_slots[2]);
	assert_null(in.linked_out);
	fwdbwd_inputs(&t, 4, &in);
	assert_ptr_equal(in.linked_x, &cudnn_slots[0]);
	/* not under aten::cudnn_convolution_backward: nothing */
	ops[3].parent = 1;
	fwdbwd_inputs(&t, 3, &in);
	assert_null(in.linked_x);
	assert_null(in.linked_w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_forward_conv_links_to_the_backward_of_its_sequence_number),
		cmocka_unit_test(other_sequence_numbers_and_nodes_do_not_link),
		cmocka_unit_test(shapes_settle_a_sequence_number_shared_by_two_threads),
		cmocka_unit_test(cudnn_backward_puts_grad_output_second),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
