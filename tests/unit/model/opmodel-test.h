/*
 * opmodel-test.h — what the op-model suites (test-opmodel.c, test-opmodel-gemm.c, -conv, -attn,
 * -pointwise, -norm; one per family of src/model/opmodel-*.c) share: slot literals copied from
 * the torch211-h100 fixtures' cpu_op events, opmodel_eval over them, and FlopCounterMode's
 * counts (testdata/torch211-h100/flop_counter.json).
 */
#ifndef KPROF_TEST_OPMODEL_H
#define KPROF_TEST_OPMODEL_H

#include "kprof/opmodel-internal.h"
#include "kprof/opmodel.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

/* A tensor slot with the given dims, a 0-dim tensor, a scalar / None slot */
#define T(dt, ...)                                                                                 \
	{ .ndim = (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)),                     \
	  .dims = (const int64_t[]){ __VA_ARGS__ },                                                \
	  .dtype = (dt),                                                                           \
	  .concrete = "" }
#define T0(dt) { .ndim = 0, .dims = NULL, .dtype = (dt), .concrete = "" }
#define SC(txt) { .ndim = 0, .dims = NULL, .dtype = DT_NONE, .concrete = (txt) }
#define NONE SC("")
#define SLOTS(...) ((const struct kp_slot[]){ __VA_ARGS__ })
#define NSLOTS(...) ((int)(sizeof(SLOTS(__VA_ARGS__)) / sizeof(struct kp_slot)))

/* Evaluate op @nm over the slots; the result code goes to @rc, the cost to @c. */
#define EVAL(c, nm, ...)                                                                           \
	opmodel_eval(&(struct kp_op_in){ .name = (nm),                                             \
					 .nslots = NSLOTS(__VA_ARGS__),                            \
					 .slots = SLOTS(__VA_ARGS__),                              \
					 .kernel_flop = -1,                                        \
					 .kernel_num_gb = -1.0 },                                  \
		     (c))

/* FlopCounterMode per_call counts, testdata/torch211-h100/flop_counter.json */
#define FC_MATMUL_MM 1153198718976LL
#define FC_MATMUL_ADDMM 2306397437952LL
#define FC_MATMUL_BMM 576599359488LL
#define FC_SDPA_FLASH_FWD 2667174690816LL
#define FC_SDPA_FLASH_BWD 6667936727040LL
#define FC_CONV_FWD 36325818368LL
#define FC_CONV_BWD 72651636736LL
#define FC_COMPILED_CONV 4867200LL
#define FC_COMPILED_MM 201326592LL
#define FC_COMPILED_BMM 1610612736LL
#define FC_BLOCK_CUDNN_FWD 68719476736LL
#define FC_BLOCK_CUDNN_BWD 171798691840LL

static inline int64_t eval_ok(const struct kp_op_in *in, struct kp_cost *c)
{
	assert_int_equal(opmodel_eval(in, c), 0);
	assert_null(c->note);
	return c->flops;
}

#endif /* KPROF_TEST_OPMODEL_H */
