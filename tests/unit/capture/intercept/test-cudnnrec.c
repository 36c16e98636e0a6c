/*
 * test-cudnnrec.c — cuDNN graph-API executions of `kprof capture -- <cmd>` without a GPU: the
 * descriptor sequences cudnn-frontend issues (its composite SDPA graphs as capture/workloads/cudnn-graph.c
 * builds them, a convolution graph, heuristics- and engine-made plans) fed through the recorder,
 * the ops they become, and the FLOPs `kprof analyze` gives them, plain and under emit_nvtx.
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

#include "intercept/cudnnrec.h"
#include "intercept/hcall.h"
#include "intercept/hostops.h"
#include "kprof/analyze.h"
#include "kprof/devdb.h"
#include "kprof/link.h"
#include "kprof/trace.h"
#include "record/ctrace.h"
#include "workloads/cudnn-graph.h"

#define T0 1795653390000000000ull /* CLOCK_REALTIME ns */

/* cudnn_graph.h values the sequences below use */
enum {
	D_CONVOLUTION = 1,
	D_ENGINE = 2,
	D_ENGINECFG = 3,
	D_ENGINEHEUR = 4,
	D_PLAN = 5,
	D_OP_CONV_FWD = 10,
	D_OP_CONV_BWD_FILTER = 11,
	D_OPERATIONGRAPH = 15,
	D_TENSOR = 17
};
enum { T_HANDLE = 0, T_DATA_TYPE = 1, T_INT64 = 3, T_CONV_MODE = 7, T_HEUR_MODE = 8, T_DESC = 15 };
/* clang-format off */
enum {
	A_CONV_COMP = 100, A_CONV_MODE = 101, A_CONV_DIL = 102, A_CONV_STRIDES = 103,
	A_CONV_POST_PAD = 104, A_CONV_PRE_PAD = 105, A_CONV_SPATIAL = 106, A_HEUR_MODE = 200,
	A_HEUR_GRAPH = 201, A_HEUR_RESULTS = 202, A_CFG_ENGINE = 300, A_PLAN_HANDLE = 400,
	A_PLAN_CFG = 401, A_FWD_CONV = 702, A_FWD_W = 703, A_FWD_X = 704, A_FWD_Y = 705,
	A_BF_CONV = 714, A_BF_DW = 715, A_BF_X = 716, A_BF_DY = 717, A_GRAPH_HANDLE = 800,
	A_GRAPH_OPS = 801, A_T_DTYPE = 901, A_T_DIMS = 902, A_T_STRIDES = 903, A_T_UID = 906,
	A_ENGINE_GRAPH = 1300, A_ENGINE_INDEX = 1301
};
/* clang-format on */

/* ---- the backend API as the recorder sees it ---- */

static struct cr_store *g_s;
static char g_addr[4096]; /* descriptor addresses handed out */
static int g_type[4096];  /* and their types */
static int g_next;

static int f_create(int type, void **d)
{
	if (g_next == (int)sizeof(g_addr))
		return 1;
	g_type[g_next] = type;
	*d = &g_addr[g_next++];
	cr_create(g_s, *d, type);
	return 0;
}
static int f_destroy(void *d)
{
	cr_destroy(g_s, d);
	return 0;
}
static int f_set(void *d, int attr, int type, int64_t n, const void *v)
{
	cr_set(g_s, d, attr, type, n, v);
	return 0;
}
static int f_finalize(void *d)
{
	cr_finalize(g_s, d);
	return 0;
}
static const char *f_errstr(int st)
{
	(void)st;
	return "error";
}
static const struct cg_api api = { f_create, f_destroy, f_set, f_finalize, f_errstr, NULL, NULL };

static void *handle = (void *)0x1234;

/*
 * A plan for @graph as cudnn-frontend makes one: heuristics fill in a config and are destroyed
 * (a local of get_heuristics_list), then the plan takes the config.
 */
static void *plan_by_heuristics(void *graph)
{
	void *heur = NULL, *cfg = NULL, *plan = NULL;
	int64_t mode = 0;
	assert_int_equal(f_create(D_ENGINEHEUR, &heur), 0);
	f_set(heur, A_HEUR_GRAPH, T_DESC, 1, &graph);
	f_set(heur, A_HEUR_MODE, T_HEUR_MODE, 1, &mode);
	f_finalize(heur);
	assert_int_equal(f_create(D_ENGINECFG, &cfg), 0);
	cr_got(g_s, heur, A_HEUR_RESULTS, T_DESC, 1, &cfg);
	f_destroy(heur);
	assert_int_equal(f_create(D_PLAN, &plan), 0);
	f_set(plan, A_PLAN_HANDLE, T_HANDLE, 1, &handle);
	f_set(plan, A_PLAN_CFG, T_DESC, 1, &cfg);
	f_finalize(plan);
	return plan;
}

/* A plan for @graph from an engine picked by index (the frontend's fallback path). */
static void *plan_by_engine(void *graph)
{
	void *eng = NULL, *cfg = NULL, *plan = NULL;
	int64_t idx = 0;
	assert_int_equal(f_create(D_ENGINE, &eng), 0);
	f_set(eng, A_ENGINE_GRAPH, T_DESC, 1, &graph);
	f_set(eng, A_ENGINE_INDEX, T_INT64, 1, &idx);
	f_finalize(eng);
	assert_int_equal(f_create(D_ENGINECFG, &cfg), 0);
	f_set(cfg, A_CFG_ENGINE, T_DESC, 1, &eng);
	f_finalize(cfg);
	assert_int_equal(f_create(D_PLAN, &plan), 0);
	f_set(plan, A_PLAN_CFG, T_DESC, 1, &cfg);
	f_finalize(plan);
	return plan;
}

/*
 * Emit @g's tensors and operations as cudnn-frontend does, then its operation graph.  The
 * frontend destroys each operation's mode descriptor (pointwise, matmul, reduction) once the
 * operation is finalized, and may drop its tensors: both go before the graph is made here.
 */
static void *emit(const struct cg_graph *g)
{
	struct cg_built b;
	char why[128];
	int first = g_next;
	assert_int_equal(cg_emit(&api, NULL, g, &b, why, sizeof(why)), 0);
	void *ops[CG_MAXOP], *gr = NULL;
	int nops = 0;
	for (int i = first; i < g_next; i++) {
		int t = g_type[i];
		if (t == 0 || t == D_TENSOR || t == 18 || t == 21)
			f_destroy(&g_addr[i]);
		else
			ops[nops++] = &g_addr[i];
	}
	assert_int_equal(nops, g->nop);
	assert_int_equal(f_create(D_OPERATIONGRAPH, &gr), 0);
	f_set(gr, A_GRAPH_HANDLE, T_HANDLE, 1, &handle);
	f_set(gr, A_GRAPH_OPS, T_DESC, nops, ops);
	f_finalize(gr);
	return gr;
}

static int setup(void **state)
{
	(void)state;
	g_s = calloc(1, sizeof(*g_s));
	cr_init(g_s);
	g_next = 0;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	cr_free(g_s);
	free(g_s);
	return 0;
}

static struct kp_hcall decode(void *plan)
{
	struct kp_hcall c;
	memset(&c, 0, sizeof(c));
	assert_int_equal(cr_plan(g_s, plan, &c), 0);
	c.name = "cudnnBackendExecute";
	return c;
}

/* causal GQA: 2 x 8 query heads over 2 key/value heads, 256 x 256, head dim 64, bf16 */
static const struct cg_sdpa gqa = { .b = 2,
				    .h = 8,
				    .hkv = 2,
				    .sq = 256,
				    .sk = 256,
				    .d = 64,
				    .io = CG_BF16,
				    .causal = 1,
				    .stats = 1,
				    .scale = 0.125f };

static void sdpa_forward_graph_becomes_cudnn_attention(void **state)
{
	(void)state;
	struct cg_graph g;
	assert_int_equal(cg_sdpa_fwd(&g, &gqa), 0);
	struct kp_hcall c = decode(plan_by_heuristics(emit(&g)));
	assert_int_equal(c.kind, HC_SDPA);
	assert_int_equal(c.sdpa_flags, SDPA_F_CAUSAL | SDPA_F_STATS);
	int64_t want[7] = { 2, 8, 2, 256, 256, 64, 64 };
	assert_memory_equal(c.sd, want, sizeof(want));
	assert_int_equal(c.atype, CG_BF16);
	const char *name;
	char *args;
	assert_int_equal(hostops_sdpa(&c, &name, &args), 0);
	assert_string_equal(name, "aten::_scaled_dot_product_cudnn_attention");
	assert_non_null(strstr(args, "\"Input Dims\":[[2,8,256,64],[2,2,256,64],[2,2,256,64],[],[],"
				     "[],[],[],[]]"));
	assert_non_null(strstr(args, "\"Concrete Inputs\":[\"\",\"\",\"\",\"\",\"True\",\"0.\","
				     "\"True\",\"False\",\"\"]"));
	assert_non_null(strstr(args, "\"kprof library call\":\"cudnnBackendExecute\""));
	free(args);

	/* inference: no mask, no Stats; through an engine picked by index */
	struct cg_sdpa dense = gqa;
	dense.causal = 0, dense.stats = 0, dense.sq = 1, dense.hkv = 8;
	assert_int_equal(cg_sdpa_fwd(&g, &dense), 0);
	c = decode(plan_by_engine(emit(&g)));
	assert_int_equal(c.kind, HC_SDPA);
	assert_int_equal(c.sdpa_flags, 0);
	int64_t want2[7] = { 2, 8, 8, 1, 256, 64, 64 };
	assert_memory_equal(c.sd, want2, sizeof(want2));
}

static void sdpa_backward_graph_becomes_its_backward(void **state)
{
	(void)state;
	struct cg_graph g;
	assert_int_equal(cg_sdpa_bwd(&g, &gqa), 0);
	struct kp_hcall c = decode(plan_by_heuristics(emit(&g)));
	assert_int_equal(c.kind, HC_SDPA);
	assert_int_equal(c.sdpa_flags, SDPA_F_BWD | SDPA_F_CAUSAL);
	int64_t want[7] = { 2, 8, 2, 256, 256, 64, 64 };
	assert_memory_equal(c.sd, want, sizeof(want));
	const char *name;
	char *args;
	assert_int_equal(hostops_sdpa(&c, &name, &args), 0);
	assert_string_equal(name, "aten::_scaled_dot_product_cudnn_attention_backward");
	assert_non_null(
		strstr(args,
		       "\"Input Dims\":[[2,8,256,64],[2,8,256,64],[2,2,256,64],"
		       "[2,2,256,64],[2,8,256,64],[2,8,256,1],[],[],[],[],[],[],[],[],[],[]]"));
	assert_non_null(strstr(args, "\"256\",\"256\",\"0.\",\"True\",\"\"]"));
	free(args);
	/* MHA, not causal */
	struct cg_sdpa mha = gqa;
	mha.hkv = 8, mha.causal = 0;
	assert_int_equal(cg_sdpa_bwd(&g, &mha), 0);
	c = decode(plan_by_heuristics(emit(&g)));
	assert_int_equal(c.sdpa_flags, SDPA_F_BWD);
	assert_int_equal(c.sd[SD_HKV], 8);
}

/* ---- through the analyzer ---- */

static void add_kernel(struct kp_ctrace *t, uint32_t corr, uint64_t launch_ns, uint64_t ext,
		       const char *kname)
{
	struct kp_rec a = { .kind = REC_DRIVER,
			    .start_ns = launch_ns,
			    .end_ns = launch_ns + 1000,
			    .corr = corr,
			    .cbid = 652,
			    .pid = 483,
			    .tid = 483,
			    .name = ctrace_intern(t, "cuLaunchKernelEx", 16) };
	struct kp_rec k = { .kind = REC_KERNEL,
			    .start_ns = launch_ns + 50000,
			    .end_ns = launch_ns + 60000,
			    .corr = corr,
			    .stream = 7,
			    .grid = { 1, 1, 1 },
			    .block = { 128, 1, 1 },
			    .name = ctrace_intern(t, kname, strlen(kname)) };
	ctrace_add_rec(t, &a);
	ctrace_add_rec(t, &k);
	if (ext)
		ctrace_add_ext(t, corr, ext);
}

static void add_call(struct kp_ctrace *t, struct kp_hcall c, uint64_t s, uint64_t e, uint64_t ext)
{
	c.start_ns = s, c.end_ns = e, c.pid = 483, c.tid = 483, c.ext = ext;
	assert_int_equal(ctrace_add_hcall(t, &c), 0);
}

static void add_range(struct kp_ctrace *t, const char *msg, uint64_t s, uint64_t e, uint64_t ext)
{
	struct kp_hcall c;
	memset(&c, 0, sizeof(c));
	c.kind = HC_NVTX_PUSH;
	c.name = msg;
	add_call(t, c, s, e, ext);
}

static void analyze_ctrace(struct kp_ctrace *t, struct kp_trace *tr, struct kp_report *r,
			   struct kp_devdb *db)
{
	char path[64];
	static int seq;
	snprintf(path, sizeof(path), "/tmp/kprof-test-cudnnrec-%d-%d.json", (int)getpid(), seq++);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(ctrace_write(t, f, "t"), 0);
	fclose(f);
	struct kp_diag d;
	memset(tr, 0, sizeof(*tr));
	struct kp_load_opts lo = { 0 };
	assert_int_equal(trace_load(tr, path, &lo, &d), 0);
	link_trace(tr);
	memset(db, 0, sizeof(*db));
	assert_int_equal(devdb_load_builtin(db, &d), 0);
	struct kp_analyze_opts o = { .group = GROUP_OP, .db = db };
	memset(r, 0, sizeof(*r));
	assert_int_equal(analyze_run(tr, &o, r), 0);
	if (!getenv("KEEP"))
		unlink(path);
}

static const struct kp_row *row_named(const struct kp_report *r, const char *name)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (!strcmp(r->rows[i].name, name))
			return &r->rows[i];
	return NULL;
}

static int has_warning(const struct kp_report *r, const char *kind)
{
	for (int i = 0; i < r->warn.nkinds; i++)
		if (!strcmp(r->warn.k[i].kind, kind))
			return 1;
	return 0;
}

#define FWD_KERNEL "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64"
#define BWD_KERNEL "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_3_64x128x64"

/* causal pairs of 256 x 256 (top-left); FLOPs per (b, h_q) head and pair */
static const int64_t pairs = 256ll * 257 / 2;
static const int64_t per_fwd = 2ll * 2 * 8 * (64 + 64), per_bwd = 2ll * 2 * 8 * (3 * 64 + 2 * 64);

/*
 * Plain capture: the graphs' executions are the attention ops, with exact causal FLOPs.  Under
 * emit_nvtx the aten op encloses the execution: it counts (one level) and takes is_causal from
 * it, so its FLOPs are the causal ones, without the dense assumption's warning.
 */
static void sdpa_ops_get_exact_causal_flops(void **state)
{
	(void)state;
	struct cg_graph g;
	assert_int_equal(cg_sdpa_fwd(&g, &gqa), 0);
	struct kp_hcall fwd = decode(plan_by_heuristics(emit(&g)));
	assert_int_equal(cg_sdpa_bwd(&g, &gqa), 0);
	struct kp_hcall bwd = decode(plan_by_heuristics(emit(&g)));

	struct kp_ctrace t;
	ctrace_init(&t);
	add_call(&t, fwd, T0 + 1000, T0 + 9000, 1);
	add_kernel(&t, 10, T0 + 2000, 1, FWD_KERNEL);
	add_call(&t, bwd, T0 + 20000, T0 + 29000, 2);
	add_kernel(&t, 11, T0 + 21000, 2, BWD_KERNEL);
	struct kp_hostops_stats st;
	assert_int_equal(hostops_emit(&t, &st, NULL), 0);
	assert_int_equal(st.gemms, 2);
	assert_int_equal(st.gemms_unshaped, 0);
	struct kp_trace tr;
	struct kp_report r;
	struct kp_devdb db;
	analyze_ctrace(&t, &tr, &r, &db);
	assert_int_equal(r.tot.unlinked, 0);
	const struct kp_row *f = row_named(&r, "aten::_scaled_dot_product_cudnn_attention");
	const struct kp_row *b = row_named(&r,
					   "aten::_scaled_dot_product_cudnn_attention_backward");
	assert_non_null(f);
	assert_non_null(b);
	assert_int_equal(f->flops, per_fwd * pairs);
	assert_int_equal(b->flops, per_bwd * pairs);
	assert_false(has_warning(&r, "attention ops without is_causal"));
	analyze_free(&r);
	devdb_free(&db);
	trace_free(&tr);
	ctrace_free(&t);

	/* emit_nvtx: the aten ops have sizes, no is_causal; the executions inside them say it */
	ctrace_init(&t);
	add_range(&t,
		  "aten::_scaled_dot_product_cudnn_attention, seq = 3, op_id = 30, sizes = "
		  "[[2, 8, 256, 64], [2, 2, 256, 64], [2, 2, 256, 64], [], [], [], [], [], []]",
		  T0 + 500, T0 + 9500, 3);
	add_call(&t, fwd, T0 + 1000, T0 + 9000, 1);
	add_kernel(&t, 10, T0 + 2000, 1, FWD_KERNEL);
	add_range(&t,
		  "aten::_scaled_dot_product_cudnn_attention_backward, seq = 3, op_id = 40, "
		  "sizes = [[2, 8, 256, 64], [2, 8, 256, 64], [2, 2, 256, 64], [2, 2, 256, 64], "
		  "[2, 8, 256, 64], [2, 8, 256, 1], [], [], [], [], [], [], [], [], [], []]",
		  T0 + 19500, T0 + 29500, 4);
	add_call(&t, bwd, T0 + 20000, T0 + 29000, 2);
	add_kernel(&t, 11, T0 + 21000, 2, BWD_KERNEL);
	/* a cuDNN attention op without an execution inside keeps the dense assumption */
	add_range(&t,
		  "aten::_scaled_dot_product_cudnn_attention, seq = 5, op_id = 50, sizes = "
		  "[[2, 8, 256, 64], [2, 2, 256, 64], [2, 2, 256, 64], [], [], [], [], [], []]",
		  T0 + 40000, T0 + 49000, 5);
	add_kernel(&t, 12, T0 + 41000, 0, "sdpa_flash_fprop_bf16_kernel");
	assert_int_equal(hostops_emit(&t, &st, NULL), 0);
	analyze_ctrace(&t, &tr, &r, &db);
	f = row_named(&r, "aten::_scaled_dot_product_cudnn_attention");
	b = row_named(&r, "aten::_scaled_dot_product_cudnn_attention_backward");
	assert_non_null(f);
	assert_non_null(b);
	assert_int_equal(f->calls, 2);
	assert_int_equal(f->flops, per_fwd * pairs + per_fwd * 256 * 256);
	assert_int_equal(b->flops, per_bwd * pairs);
	assert_true(has_warning(&r, "attention ops without is_causal"));
	analyze_free(&r);
	devdb_free(&db);
	trace_free(&tr);
	ctrace_free(&t);
}

/* ---- convolutions and other graphs ---- */

static void *tensor(int64_t uid, int nd, const int64_t *dims, int dtype)
{
	void *d = NULL;
	int64_t st[8];
	st[nd - 1] = 1;
	for (int i = nd - 2; i >= 0; i--)
		st[i] = st[i + 1] * dims[i + 1];
	assert_int_equal(f_create(D_TENSOR, &d), 0);
	f_set(d, A_T_DTYPE, T_DATA_TYPE, 1, &dtype);
	f_set(d, A_T_DIMS, T_INT64, nd, dims);
	f_set(d, A_T_STRIDES, T_INT64, nd, st);
	f_set(d, A_T_UID, T_INT64, 1, &uid);
	f_finalize(d);
	return d;
}

/* A 2-D convolution descriptor: padding 1, stride 2, dilation 1, fp32 math. */
static void *conv_desc(void)
{
	void *cd = NULL;
	int64_t two = 2, pad[2] = { 1, 1 }, str[2] = { 2, 2 }, dil[2] = { 1, 1 };
	int comp = 0, mode = 1;
	assert_int_equal(f_create(D_CONVOLUTION, &cd), 0);
	f_set(cd, A_CONV_SPATIAL, T_INT64, 1, &two);
	f_set(cd, A_CONV_COMP, T_DATA_TYPE, 1, &comp);
	f_set(cd, A_CONV_MODE, T_CONV_MODE, 1, &mode);
	f_set(cd, A_CONV_DIL, T_INT64, 2, dil);
	f_set(cd, A_CONV_STRIDES, T_INT64, 2, str);
	f_set(cd, A_CONV_PRE_PAD, T_INT64, 2, pad);
	f_set(cd, A_CONV_POST_PAD, T_INT64, 2, pad);
	f_finalize(cd);
	return cd;
}

static void *graph_of(void *op)
{
	void *g = NULL;
	assert_int_equal(f_create(D_OPERATIONGRAPH, &g), 0);
	f_set(g, A_GRAPH_HANDLE, T_HANDLE, 1, &handle);
	f_set(g, A_GRAPH_OPS, T_DESC, 1, &op);
	f_finalize(g);
	return g;
}

static void conv_graphs_become_conv_ops(void **state)
{
	(void)state;
	/* torch conv2d(x [8, 64, 56, 56] half, w [128, 32, 3, 3], stride 2, padding 1, groups 2) */
	int64_t xd[4] = { 8, 64, 56, 56 }, wd[4] = { 128, 32, 3, 3 }, yd[4] = { 8, 128, 28, 28 };
	void *x = tensor('x', 4, xd, 2), *w = tensor('w', 4, wd, 2), *y = tensor('y', 4, yd, 2);
	void *cd = conv_desc(), *op = NULL;
	assert_int_equal(f_create(D_OP_CONV_FWD, &op), 0);
	f_set(op, A_FWD_X, T_DESC, 1, &x);
	f_set(op, A_FWD_W, T_DESC, 1, &w);
	f_set(op, A_FWD_Y, T_DESC, 1, &y);
	f_set(op, A_FWD_CONV, T_DESC, 1, &cd);
	f_finalize(op);
	struct kp_hcall c = decode(plan_by_heuristics(graph_of(op)));
	assert_int_equal(c.kind, HC_CONV);
	assert_int_equal(c.conv_op, CONV_FWD);
	assert_int_equal(c.conv_nd, 2);
	assert_int_equal(c.groups, 2);
	assert_int_equal(c.cpad[1], 1);
	assert_int_equal(c.cstride[0], 2);
	const char *name;
	char *args;
	assert_int_equal(hostops_conv(&c, &name, &args), 0);
	assert_string_equal(name, "aten::convolution");
	assert_non_null(
		strstr(args, "\"Input Dims\":[[8,64,56,56],[128,32,3,3],[],[],[],[],[],[],[]]"));
	assert_non_null(
		strstr(args, "\"[2, 2]\",\"[1, 1]\",\"[1, 1]\",\"False\",\"[0, 0]\",\"2\"]"));
	free(args);

	/* backward-filter: dw from x and dy */
	void *dw = tensor('d', 4, wd, 2), *bop = NULL;
	assert_int_equal(f_create(D_OP_CONV_BWD_FILTER, &bop), 0);
	f_set(bop, A_BF_X, T_DESC, 1, &x);
	f_set(bop, A_BF_DW, T_DESC, 1, &dw);
	f_set(bop, A_BF_DY, T_DESC, 1, &y);
	f_set(bop, A_BF_CONV, T_DESC, 1, &cd);
	f_finalize(bop);
	struct kp_hcall cb = decode(plan_by_engine(graph_of(bop)));
	assert_int_equal(cb.kind, HC_CONV);
	assert_int_equal(cb.conv_op, CONV_BWD_FILTER);

	/* through the models: each 2 N K (C/g) R S P Q */
	struct kp_ctrace t;
	ctrace_init(&t);
	add_call(&t, c, T0 + 1000, T0 + 9000, 1);
	add_kernel(&t, 10, T0 + 2000, 1, "sm90_xmma_fprop_implicit_gemm");
	add_call(&t, cb, T0 + 20000, T0 + 29000, 2);
	add_kernel(&t, 11, T0 + 21000, 2, "sm90_xmma_wgrad_implicit_gemm");
	struct kp_hostops_stats st;
	assert_int_equal(hostops_emit(&t, &st, NULL), 0);
	struct kp_trace tr;
	struct kp_report r;
	struct kp_devdb db;
	analyze_ctrace(&t, &tr, &r, &db);
	int64_t fl = 2ll * 8 * 128 * 32 * 3 * 3 * 28 * 28;
	assert_int_equal(r.tot.flops, 2 * fl);
	assert_int_equal(row_named(&r, "aten::convolution")->flops, fl);
	analyze_free(&r);
	devdb_free(&db);
	trace_free(&tr);
	ctrace_free(&t);
}

/* A pointwise operation of @mode (GEN_INDEX over @axis) on @x [, @b [, @t]] into @y. */
static void *pwop(int mode, int64_t axis, void *x, void *b, void *t, void *y)
{
	void *pd = NULL, *op = NULL;
	assert_int_equal(f_create(0, &pd), 0);
	f_set(pd, 0, 14, 1, &mode);
	if (axis >= 0)
		f_set(pd, 9, T_INT64, 1, &axis);
	f_finalize(pd);
	assert_int_equal(f_create(13, &op), 0);
	f_set(op, 750, T_DESC, 1, &pd);
	f_set(op, 751, T_DESC, 1, &x);
	if (b)
		f_set(op, 752, T_DESC, 1, &b);
	if (t)
		f_set(op, 758, T_DESC, 1, &t);
	f_set(op, 753, T_DESC, 1, &y);
	f_finalize(op);
	f_destroy(pd);
	return op;
}

/*
 * cuDNN's own SDPA operation (cudnn-frontend's UnifiedSDPANode): Q, K, V, O and Stats are its
 * attributes; the causal mask is a score-modifier operation graph it names.
 */
static void sdpa_operations_give_their_tensors(void **state)
{
	(void)state;
	int64_t q[4] = { 2, 8, 128, 64 }, kv[4] = { 2, 2, 256, 64 }, st[4] = { 2, 8, 128, 1 };
	int64_t sc[4] = { 2, 8, 128, 256 };
	void *tq = tensor(1, 4, q, CG_HALF), *tk = tensor(2, 4, kv, CG_HALF);
	void *tv = tensor(3, 4, kv, CG_HALF), *to = tensor(4, 4, q, CG_HALF);
	void *ts = tensor(5, 4, st, CG_FLOAT);
	/* the subgraph: keep row >= col of the scores, else the lowest value */
	void *x = tensor(100, 4, sc, CG_FLOAT), *row = tensor(101, 4, sc, CG_INT32);
	void *col = tensor(102, 4, sc, CG_INT32), *keep = tensor(103, 4, sc, CG_BOOL);
	void *y = tensor(104, 4, sc, CG_FLOAT), *neg = tensor(105, 4, (int64_t[]){ 1, 1, 1, 1 }, 0);
	void *ops[4] = { pwop(CG_PW_GEN_INDEX, 2, x, NULL, NULL, row),
			 pwop(CG_PW_GEN_INDEX, 3, x, NULL, NULL, col),
			 pwop(CG_PW_CMP_GE, -1, row, col, NULL, keep),
			 pwop(CG_PW_BINARY_SELECT, -1, x, neg, keep, y) };
	void *sub = NULL;
	assert_int_equal(f_create(D_OPERATIONGRAPH, &sub), 0);
	f_set(sub, A_GRAPH_OPS, T_DESC, 4, ops);
	f_finalize(sub);
	for (int causal = 1; causal >= 0; causal--) {
		void *op = NULL;
		assert_int_equal(f_create(41, &op),
				 0); /* CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR */
		f_set(op, 2800, T_DESC, 1, &tq);
		f_set(op, 2801, T_DESC, 1, &tk);
		f_set(op, 2802, T_DESC, 1, &tv);
		f_set(op, 2803, T_DESC, 1, &to);
		f_set(op, 2804, T_DESC, 1, &ts);
		if (causal)
			f_set(op, 2890, T_DESC, 1,
			      &sub); /* a subgraph attribute 9.19 does not name */
		f_finalize(op);
		struct kp_hcall c = decode(plan_by_heuristics(graph_of(op)));
		assert_int_equal(c.kind, HC_SDPA);
		assert_int_equal(c.sdpa_flags, (causal ? SDPA_F_CAUSAL : 0) | SDPA_F_STATS);
		int64_t want[7] = { 2, 8, 2, 128, 256, 64, 64 };
		assert_memory_equal(c.sd, want, sizeof(want));
		assert_int_equal(c.atype, CG_HALF);
	}
}

static void other_graphs_have_kernels_only(void **state)
{
	(void)state;
	/* a sliding-window mask beside the causal one: not PyTorch's is_causal, no shape */
	struct cg_graph g;
	assert_int_equal(cg_sdpa_fwd(&g, &gqa), 0);
	for (int i = 0; i < g.nop; i++)
		if (g.op[i].kind == CG_POINTWISE && g.op[i].mode == CG_PW_CMP_GE) {
			assert_true(g.nop < CG_MAXOP);
			g.op[g.nop] = g.op[i];
			g.op[g.nop].mode = 302; /* CMP_GT: col + window > row */
			g.op[g.nop].in[0] = g.op[i].in[1], g.op[g.nop].in[1] = g.op[i].in[0];
			g.nop++;
			break;
		}
	struct kp_hcall c = decode(plan_by_heuristics(emit(&g)));
	assert_int_equal(c.kind, HC_CUDNN_GRAPH);
	assert_int_equal(c.sd[0], 2); /* matmuls */
	const char *name;
	char *args;
	assert_int_equal(hostops_cudnn_graph(&c, &name, &args), 0);
	assert_string_equal(name, "cudnn::graph");
	assert_non_null(strstr(args, "\"kprof cudnn graph\":\"matmul=2 pointwise="));
	assert_non_null(strstr(args, " why=mask status=0\""));
	free(args);
	assert_int_equal(hostops_sdpa(&c, &name, &args), -1);

	/* a plan whose graph the recorder never saw (made before it, or from JSON): nothing */
	void *cfg = NULL, *plan = NULL;
	assert_int_equal(f_create(D_ENGINECFG, &cfg), 0);
	assert_int_equal(f_create(D_PLAN, &plan), 0);
	f_set(plan, A_PLAN_CFG, T_DESC, 1, &cfg);
	f_finalize(plan);
	struct kp_hcall u;
	memset(&u, 0, sizeof(u));
	assert_int_equal(cr_plan(g_s, plan, &u), -1);
	assert_int_equal(cr_plan(g_s, (void *)0x99, &u), -1);
	assert_int_equal(u.kind, 0);

	/* destroyed descriptors are forgotten: a plan finalized after its graph went is unknown */
	assert_int_equal(cg_sdpa_fwd(&g, &gqa), 0);
	void *gr = emit(&g);
	f_destroy(gr);
	assert_int_equal(cr_plan(g_s, plan_by_heuristics(gr), &u), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(sdpa_forward_graph_becomes_cudnn_attention, setup,
						teardown),
		cmocka_unit_test_setup_teardown(sdpa_backward_graph_becomes_its_backward, setup,
						teardown),
		cmocka_unit_test_setup_teardown(sdpa_ops_get_exact_causal_flops, setup, teardown),
		cmocka_unit_test_setup_teardown(conv_graphs_become_conv_ops, setup, teardown),
		cmocka_unit_test_setup_teardown(sdpa_operations_give_their_tensors, setup,
						teardown),
		cmocka_unit_test_setup_teardown(other_graphs_have_kernels_only, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
