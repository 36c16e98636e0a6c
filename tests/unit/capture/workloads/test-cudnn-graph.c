/*
 * test-cudnn-graph.c — the SDPA operation graphs cudnn-graph.c builds (the composite graphs of
 * cudnn-frontend) and their emission through a fake backend API table: no GPU, no cuDNN.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "workloads/cudnn-graph.h"

static const struct cg_sdpa mha = {
	.b = 2, .h = 8, .hkv = 8, .sq = 256, .sk = 384, .d = 64, .io = CG_BF16, .scale = 0.125f
};

/* The (kind, mode) sequence of @g's operations. */
static void expect_ops(const struct cg_graph *g, const int (*want)[2], int n)
{
	assert_int_equal(g->nop, n);
	for (int i = 0; i < n; i++) {
		assert_int_equal(g->op[i].kind, want[i][0]);
		if (want[i][0] != CG_MATMUL && want[i][0] != CG_RESHAPE)
			assert_int_equal(g->op[i].mode, want[i][1]);
	}
}

static const struct cg_tensor *out_of(const struct cg_graph *g, int op)
{
	return &g->t[g->op[op].out];
}

static void fwd_graph_is_the_frontends(void **state)
{
	(void)state;
	static struct cg_graph g;
	assert_int_equal(cg_sdpa_fwd(&g, &mha), 0);
	/* clang-format off */
	static const int want[][2] = {
		{ CG_MATMUL, 0 }, { CG_POINTWISE, CG_PW_MUL }, { CG_REDUCTION, CG_RED_MAX },
		{ CG_POINTWISE, CG_PW_SUB }, { CG_POINTWISE, CG_PW_EXP }, { CG_REDUCTION, CG_RED_ADD },
		{ CG_POINTWISE, CG_PW_LOG }, { CG_POINTWISE, CG_PW_ADD }, { CG_POINTWISE, CG_PW_DIV },
		{ CG_MATMUL, 0 },
	};
	/* clang-format on */
	expect_ops(&g, want, 10);
	/* K enters as K^T by metadata: dims and strides 2 and 3 swapped */
	const struct cg_tensor *k = cg_find(&g, SDPA_K);
	assert_non_null(k);
	assert_false(k->virt);
	int64_t kd[4] = { 2, 8, 64, 384 }, ks[4] = { 8 * 384 * 64, 384 * 64, 1, 64 };
	assert_memory_equal(k->dim, kd, sizeof(kd));
	assert_memory_equal(k->stride, ks, sizeof(ks));
	const struct cg_tensor *q = cg_find(&g, SDPA_Q);
	int64_t qs[4] = { 8 * 256 * 64, 256 * 64, 64, 1 };
	assert_memory_equal(q->stride, qs, sizeof(qs));
	assert_int_equal(q->dtype, CG_BF16);
	/* scores are fp32 [b, h, sq, sk]; the row max is [b, h, sq, 1] with (h*sq, sq, 1, 1) */
	const struct cg_tensor *s = out_of(&g, 0);
	assert_true(s->virt);
	assert_int_equal(s->dtype, CG_FLOAT);
	assert_int_equal(s->dim[3], 384);
	const struct cg_tensor *m = out_of(&g, 2);
	int64_t md[4] = { 2, 8, 256, 1 }, ms[4] = { 8 * 256, 256, 1, 1 };
	assert_memory_equal(m->dim, md, sizeof(md));
	assert_memory_equal(m->stride, ms, sizeof(ms));
	/* the scale is a by-value fp32 scalar of rank 4 */
	const struct cg_tensor *sc = cg_find(&g, SDPA_SCALE);
	assert_true(sc->by_value);
	assert_true(sc->value == 0.125f);
	assert_int_equal(sc->nd, 4);
	assert_int_equal(g.t[g.op[1].in[1]].uid, SDPA_SCALE);
	/* P is in the I/O type, O = P V */
	assert_int_equal(out_of(&g, 8)->dtype, CG_BF16);
	assert_int_equal(out_of(&g, 9)->uid, SDPA_O);
	assert_int_equal(g.t[g.op[9].in[1]].uid, SDPA_V);
	/* inference: Stats is computed into a virtual tensor, no SDPA_STATS in the variant pack */
	assert_null(cg_find(&g, SDPA_STATS));
	assert_true(out_of(&g, 7)->virt);
	assert_null(cg_find(&g, SDPA_NEG_INF));
	/* training: Stats is written */
	struct cg_sdpa t = mha;
	t.stats = 1;
	assert_int_equal(cg_sdpa_fwd(&g, &t), 0);
	assert_int_equal(out_of(&g, 7)->uid, SDPA_STATS);
	assert_false(out_of(&g, 7)->virt);
	assert_int_equal(out_of(&g, 7)->dtype, CG_FLOAT);
	/* uids are unique */
	for (int i = 0; i < g.nt; i++)
		for (int j = i + 1; j < g.nt; j++)
			assert_true(g.t[i].uid != g.t[j].uid);
}

static void causal_mask_is_gen_index_compare_select(void **state)
{
	(void)state;
	static struct cg_graph g;
	struct cg_sdpa s = mha;
	s.causal = 1;
	assert_int_equal(cg_sdpa_fwd(&g, &s), 0);
	assert_int_equal(g.nop, 14);
	/* after the scale: row index (axis 2), col index (axis 3), row >= col, select */
	assert_int_equal(g.op[2].mode, CG_PW_GEN_INDEX);
	assert_int_equal(g.op[2].axis, 2);
	assert_int_equal(out_of(&g, 2)->dtype, CG_INT32);
	assert_int_equal(g.op[3].mode, CG_PW_GEN_INDEX);
	assert_int_equal(g.op[3].axis, 3);
	assert_int_equal(g.op[4].mode, CG_PW_CMP_GE);
	assert_int_equal(g.op[4].comp, CG_BOOL);
	assert_int_equal(g.op[4].in[0], g.op[2].out);
	assert_int_equal(g.op[4].in[1], g.op[3].out);
	assert_int_equal(out_of(&g, 4)->dtype, CG_BOOL);
	const struct cg_op *sel = &g.op[5];
	assert_int_equal(sel->mode, CG_PW_BINARY_SELECT);
	assert_int_equal(sel->nin, 3);
	assert_int_equal(sel->in[0], g.op[1].out);
	assert_int_equal(g.t[sel->in[1]].uid, SDPA_NEG_INF);
	assert_int_equal(sel->in[2], g.op[4].out);
	assert_true(isinf(g.t[sel->in[1]].value) && g.t[sel->in[1]].value < 0);
	/* the softmax's max reads the masked scores */
	assert_int_equal(g.op[6].mode, CG_RED_MAX);
	assert_int_equal(g.op[6].in[0], sel->out);
	/* cuDNN < 9.10: the lowest finite float, as the frontend */
	s.lowest_mask = 1;
	assert_int_equal(cg_sdpa_fwd(&g, &s), 0);
	assert_true(cg_find(&g, SDPA_NEG_INF)->value == -FLT_MAX);
}

static void bwd_graph_mha_and_gqa(void **state)
{
	(void)state;
	static struct cg_graph g;
	assert_int_equal(cg_sdpa_bwd(&g, &mha), 0);
	/* clang-format off */
	static const int want[][2] = {
		{ CG_POINTWISE, CG_PW_MUL }, { CG_REDUCTION, CG_RED_ADD }, { CG_POINTWISE, CG_PW_MUL },
		{ CG_MATMUL, 0 }, { CG_POINTWISE, CG_PW_MUL }, { CG_POINTWISE, CG_PW_SUB },
		{ CG_POINTWISE, CG_PW_EXP }, { CG_RESHAPE, 0 }, { CG_MATMUL, 0 }, { CG_MATMUL, 0 },
		{ CG_POINTWISE, CG_PW_SUB }, { CG_POINTWISE, CG_PW_MUL }, { CG_POINTWISE, CG_PW_MUL },
		{ CG_RESHAPE, 0 }, { CG_MATMUL, 0 }, { CG_RESHAPE, 0 }, { CG_MATMUL, 0 },
		{ CG_POINTWISE, CG_PW_IDENTITY },
	};
	/* clang-format on */
	expect_ops(&g, want, 18);
	/* softmax_sum and dQ_accum are written by cuDNN into kprof's workspace: not virtual */
	assert_int_equal(out_of(&g, 2)->uid, SDPA_SOFTMAX_SUM);
	assert_false(out_of(&g, 2)->virt);
	assert_int_equal(g.t[g.op[2].in[1]].uid, SDPA_ONE);
	assert_int_equal(out_of(&g, 16)->uid, SDPA_DQ_ACCUM);
	assert_int_equal(out_of(&g, 16)->dtype, CG_FLOAT);
	assert_int_equal(out_of(&g, 17)->uid, SDPA_DQ);
	/* MHA: the matmuls write dV and dK directly */
	assert_int_equal(out_of(&g, 8)->uid, SDPA_DV);
	assert_int_equal(out_of(&g, 14)->uid, SDPA_DK);
	/* P^T is [b, h, sk, sq] by strides, in the I/O type */
	const struct cg_tensor *pt = out_of(&g, 7);
	int64_t pd[4] = { 2, 8, 384, 256 }, ps[4] = { 8 * 256 * 384, 256 * 384, 1, 384 };
	assert_memory_equal(pt->dim, pd, sizeof(pd));
	assert_memory_equal(pt->stride, ps, sizeof(ps));
	assert_int_equal(pt->dtype, CG_BF16);
	/* V enters transposed for dP = dO V^T */
	assert_int_equal(cg_find(&g, SDPA_V)->dim[2], 64);
	/* GQA: full-head products reduced over each group */
	struct cg_sdpa s = mha;
	s.hkv = 2;
	s.causal = 1;
	assert_int_equal(cg_sdpa_bwd(&g, &s), 0);
	assert_int_equal(g.nop, 18 + 4 + 2);
	int reductions = 0;
	for (int i = 0; i < g.nop; i++)
		if (g.op[i].kind == CG_REDUCTION &&
		    (out_of(&g, i)->uid == SDPA_DK || out_of(&g, i)->uid == SDPA_DV)) {
			const struct cg_tensor *full = &g.t[g.op[i].in[0]];
			assert_true(full->virt);
			assert_int_equal(full->dim[1], 8);
			assert_int_equal(out_of(&g, i)->dim[1], 2);
			reductions++;
		}
	assert_int_equal(reductions, 2);
	size_t sum_off, side = cg_sdpa_bwd_side_bytes(&s, &sum_off);
	assert_int_equal(sum_off, 2 * 8 * 256 * 64 * 4);
	assert_int_equal(side, sum_off + 2 * 8 * 256 * 4);
}

/* ---- emission through a fake backend ---- */

static int ncreate, ndestroy, nfinal, fail_at, graph_nops;
static int created_types[512];

static int f_create(int type, void **d)
{
	if (ncreate == 512)
		return 1;
	created_types[ncreate] = type;
	*d = (void *)(intptr_t)(++ncreate);
	return 0;
}

static int f_destroy(void *d)
{
	(void)d;
	ndestroy++;
	return 0;
}

static int f_set(void *d, int attr, int type, int64_t n, const void *v)
{
	(void)d, (void)v;
	if (attr == 801) { /* CUDNN_ATTR_OPERATIONGRAPH_OPS */
		assert_int_equal(type, 15);
		graph_nops = (int)n;
	}
	if (attr == 907 || attr == 908) /* IS_VIRTUAL / IS_BY_VALUE: C bool */
		assert_int_equal(type, 2);
	return 0;
}

static int f_finalize(void *d)
{
	(void)d;
	return ++nfinal == fail_at ? 3000 : 0;
}

static const char *f_errstr(int st)
{
	return st == 3000 ? "CUDNN_STATUS_NOT_SUPPORTED" : "?";
}

static const struct cg_api fake = { f_create, f_destroy, f_set, f_finalize, f_errstr, NULL, NULL };

static void emit_creates_every_descriptor_and_releases_them(void **state)
{
	(void)state;
	static struct cg_graph g;
	struct cg_built b;
	char why[200];
	struct cg_sdpa s = mha;
	s.causal = 1, s.stats = 1;
	assert_int_equal(cg_sdpa_fwd(&g, &s), 0);
	ncreate = ndestroy = nfinal = graph_nops = 0, fail_at = -1;
	int handle = 1;
	assert_int_equal(cg_emit(&fake, &handle, &g, &b, why, sizeof(why)), 0);
	/* tensors first (type 17), then per op its descriptor and the operation, then the graph */
	for (int i = 0; i < g.nt; i++)
		assert_int_equal(created_types[i], 17);
	assert_int_equal(ncreate, g.nt + 2 * g.nop + 1);
	assert_int_equal(created_types[ncreate - 1], 15);
	assert_int_equal(graph_nops, g.nop);
	assert_non_null(b.graph);
	assert_int_equal(nfinal, ncreate);
	cg_release(&fake, &b);
	assert_int_equal(ndestroy, ncreate);

	/* no handle: no operation graph (descriptors only, as a check without a GPU) */
	ncreate = ndestroy = nfinal = 0;
	assert_int_equal(cg_emit(&fake, NULL, &g, &b, why, sizeof(why)), 0);
	assert_null(b.graph);
	assert_int_equal(ncreate, g.nt + 2 * g.nop);
	cg_release(&fake, &b);

	/* a finalize that fails names the call; what was created is released */
	ncreate = ndestroy = nfinal = 0, fail_at = g.nt + 3;
	assert_int_equal(cg_emit(&fake, &handle, &g, &b, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "cudnnBackendFinalize("));
	assert_non_null(strstr(why, "CUDNN_STATUS_NOT_SUPPORTED"));
	cg_release(&fake, &b);
	assert_int_equal(ndestroy, ncreate);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fwd_graph_is_the_frontends),
		cmocka_unit_test(causal_mask_is_gen_index_compare_select),
		cmocka_unit_test(bwd_graph_mha_and_gqa),
		cmocka_unit_test(emit_creates_every_descriptor_and_releases_them),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
