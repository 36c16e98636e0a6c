/*
 * wl-cudnn-sdpa.c — cuDNN's fused flash attention for the sdpa workload: the composite graphs
 * of cudnn-graph.c emitted through the loaded library's backend API, planned once per case
 * (heuristics mode A as PyTorch's MHA.cpp asks, then fallback; the first NTRY configurations
 * that finalize are each timed and the fastest kept, cudnn-tune.c), executed over the case's
 * fixed buffers (doc/workloads.md §a.6-a.8).
 */
#include "workloads/wl-cudnn.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef KPROF_HAVE_CUPTI
#include <cuda_runtime.h>

#include "workloads/cudnn-graph.h"
#include "workloads/cudnn-tune.h"

/* cudnn_graph.h (cuDNN 9): what the plans need beyond cudnn-graph.c */
enum { D_ENGINE = 2, D_ENGINECFG = 3, D_ENGINEHEUR = 4, D_EXECUTION_PLAN = 5, D_VARIANT_PACK = 16 };
enum { T_HANDLE = 0, T_INT64 = 3, T_VOID_PTR = 6, T_HEUR_MODE = 8, T_BACKEND_DESCRIPTOR = 15 };
/* clang-format off */
enum {
	A_HEUR_MODE = 200, A_HEUR_GRAPH = 201, A_HEUR_RESULTS = 202, A_CFG_ENGINE = 300,
	A_PLAN_HANDLE = 400, A_PLAN_CONFIG = 401, A_PLAN_WORKSPACE = 402, A_VP_UIDS = 1000,
	A_VP_PTRS = 1001, A_VP_WORKSPACE = 1003, A_ENGINE_INDEX = 1301
};
/* clang-format on */
enum { HEUR_MODE_FALLBACK = 2, HEUR_MODE_A = 3 };

#define MAXCFG 32
#define NVP 16
#define NTRY 4 /* configurations timed per graph (each finalize may run NVRTC) */

struct plan {
	struct cg_built g;
	void *heur[2], *cfg[2 * MAXCFG];
	int ncfg;
	void *cand[NTRY]; /* finalized plans, in the heuristics' order */
	int64_t cand_ws[NTRY];
	int ncand;
	struct tune t; /* the candidates' engines, sources, ranks and times */
	void *plan, *vpack;
	int64_t engine, ws;
	char why[200]; /* tune_describe() of the kept plan */
	int64_t uid[NVP];
	void *ptr[NVP];
	int n;
};

struct kp_cudnn_sdpa {
	struct kp_cudnn *c;
	struct cg_api api;
	void *h;
	struct plan f, b;
	int backward;
	void *ws;
	size_t side, sum_off, acc_bytes;
	int zero_acc;          /* cuDNN < 9.6: dQ_accum is zeroed before each backward */
	float scale, neg, one; /* by-value scalars: the variant packs point here */
};

static void vp_add(struct plan *p, int64_t uid, void *ptr)
{
	p->uid[p->n] = uid, p->ptr[p->n] = ptr, p->n++;
}

/*
 * Engine configurations of @mode for the plan's graph, tried in order; each that finalizes (an
 * engine not offered yet, up to NTRY) becomes a candidate.  1 found, 0 none, -1 error (in @why).
 */
static int try_mode(struct kp_cudnn_sdpa *a, struct plan *p, int mode, char *why, size_t whylen)
{
	const struct cg_api *api = &a->api;
	int slot = mode == HEUR_MODE_A ? 0 : 1, st;
	void *heur = NULL;
	if ((st = api->create(D_ENGINEHEUR, &heur)) != 0) {
		snprintf(why, whylen, "cudnnBackendCreateDescriptor(heuristics): %s",
			 api->errstr(st));
		return -1;
	}
	p->heur[slot] = heur;
	int64_t n = 0;
	if (api->set(heur, A_HEUR_GRAPH, T_BACKEND_DESCRIPTOR, 1, &p->g.graph) != 0 ||
	    api->set(heur, A_HEUR_MODE, T_HEUR_MODE, 1, &mode) != 0 || api->finalize(heur) != 0 ||
	    api->get(heur, A_HEUR_RESULTS, T_BACKEND_DESCRIPTOR, 0, &n, NULL) != 0)
		return 0;
	if (n > MAXCFG)
		n = MAXCFG;
	void **cfg = p->cfg + p->ncfg;
	for (int64_t i = 0; i < n; i++) {
		if (api->create(D_ENGINECFG, &cfg[i]) != 0) {
			n = i;
			break;
		}
		p->ncfg++;
	}
	int64_t got = 0;
	if (n == 0 || api->get(heur, A_HEUR_RESULTS, T_BACKEND_DESCRIPTOR, n, &got, cfg) != 0)
		return 0;
	for (int64_t i = 0; i < got; i++) {
		void *plan = NULL, *eng = NULL;
		int64_t ne = 0, idx = -1, ws = 0;
		if (api->create(D_EXECUTION_PLAN, &plan) != 0)
			continue;
		if (api->set(plan, A_PLAN_HANDLE, T_HANDLE, 1, &a->h) != 0 ||
		    api->set(plan, A_PLAN_CONFIG, T_BACKEND_DESCRIPTOR, 1, &cfg[i]) != 0 ||
		    api->finalize(plan) != 0 ||
		    api->get(plan, A_PLAN_WORKSPACE, T_INT64, 1, &ne, &ws) != 0) {
			api->destroy(plan);
			continue;
		}
		if (api->create(D_ENGINE, &eng) == 0) {
			if (api->get(cfg[i], A_CFG_ENGINE, T_BACKEND_DESCRIPTOR, 1, &ne, &eng) == 0)
				api->get(eng, A_ENGINE_INDEX, T_INT64, 1, &ne, &idx);
			api->destroy(eng);
		}
		int src = mode == HEUR_MODE_A ? TUNE_HEUR : TUNE_FALLBACK;
		if (!tune_wants(&p->t, idx, src)) {
			api->destroy(plan);
			continue;
		}
		tune_add(&p->t, idx, src, (int)i + 1);
		p->cand[p->ncand] = plan, p->cand_ws[p->ncand] = ws;
		if (++p->ncand == NTRY)
			break;
	}
	return p->ncand > 0;
}

static int build(struct kp_cudnn_sdpa *a, struct plan *p, const struct cg_graph *g,
		 const char *what, char *why, size_t whylen)
{
	char e[300];
	if (cg_emit(&a->api, a->h, g, &p->g, e, sizeof(e)) < 0) {
		snprintf(why, whylen, "%s graph: %s", what, e);
		return -1;
	}
	p->t.max = NTRY;
	int r = try_mode(a, p, HEUR_MODE_A, why, whylen);
	if (r == 0)
		r = try_mode(a, p, HEUR_MODE_FALLBACK, why, whylen);
	cudaGetLastError();
	if (r == 0)
		snprintf(why, whylen,
			 "no cuDNN engine configuration finalizes for the SDPA %s graph "
			 "(heuristics A and fallback)",
			 what);
	return r > 0 ? 0 : -1;
}

static int mk_vpack(struct kp_cudnn_sdpa *a, struct plan *p, void *ws, char *why, size_t whylen)
{
	const struct cg_api *api = &a->api;
	int st = api->create(D_VARIANT_PACK, &p->vpack);
	if (st == 0 && (st = api->set(p->vpack, A_VP_UIDS, T_INT64, p->n, p->uid)) == 0 &&
	    (st = api->set(p->vpack, A_VP_PTRS, T_VOID_PTR, p->n, p->ptr)) == 0 &&
	    (st = api->set(p->vpack, A_VP_WORKSPACE, T_VOID_PTR, 1, &ws)) == 0)
		st = api->finalize(p->vpack);
	if (st != 0)
		snprintf(why, whylen, "variant pack: %s", api->errstr(st));
	return st ? -1 : 0;
}

/*
 * Keep the fastest of @p's candidate plans over the buffers of its variant pack (@ws: a
 * workspace large enough for every candidate); one candidate is kept untimed.  The others are
 * destroyed.  0, or -1 with a reason in @why.
 */
static int choose(struct kp_cudnn_sdpa *a, struct plan *p, void *ws, char *why, size_t whylen)
{
	for (int i = 0; i < p->ncand && p->ncand > 1; i++) {
		p->vpack = NULL;
		if (mk_vpack(a, p, ws, why, whylen) < 0)
			return -1;
		p->t.c[i].ms = cudnn_time_plan(a->api.execute, a->h, p->cand[i], p->vpack);
		a->api.destroy(p->vpack);
		p->vpack = NULL;
	}
	cudaGetLastError();
	int bi = tune_best(&p->t);
	if (bi < 0)
		bi = 0; /* one candidate, kept untimed (or none ran: the heuristics' first) */
	for (int i = 0; i < p->ncand; i++)
		if (i != bi)
			a->api.destroy(p->cand[i]);
	p->plan = p->cand[bi], p->engine = p->t.c[bi].engine, p->ws = p->cand_ws[bi];
	tune_describe(&p->t, bi, p->why, sizeof(p->why));
	p->ncand = 0;
	return 0;
}

static int64_t max_ws(const struct plan *p)
{
	int64_t m = 0;
	for (int i = 0; i < p->ncand; i++)
		m = p->cand_ws[i] > m ? p->cand_ws[i] : m;
	return m;
}

/* The case's buffers, as cudnn_sdpa_new() takes them */
struct sdpa_bufs {
	const void *q, *k, *v, *dout;
	void *o, *dq, *dk, *dv;
	float *stats;
};

/* 0, or -1 with the reason when this cuDNN cannot run the backward of @s */
static int check_bwd(const struct kp_cudnn_sdpa *a, const struct cg_sdpa *s, long ver, char *why,
		     size_t whylen)
{
	if (a->backward && s->sk % 128 && ver < 91600) {
		/* cudnn-frontend adds a padding-mask workaround there; kprof does not */
		snprintf(why, whylen,
			 "the backward needs S_k %% 128 == 0 with cuDNN < 9.16 (S_k %ld)", s->sk);
		return -1;
	}
	return 0;
}

/* The forward graph's candidate plans, and its buffers and scalars for its variant pack */
static int plan_fwd(struct kp_cudnn_sdpa *a, struct cg_graph *g, const struct cg_sdpa *fs,
		    const struct sdpa_bufs *bu, char *why, size_t whylen)
{
	if (cg_sdpa_fwd(g, fs) < 0 || build(a, &a->f, g, "forward", why, whylen) < 0)
		return -1;
	a->neg = cg_find(g, SDPA_NEG_INF) ? cg_find(g, SDPA_NEG_INF)->value : 0;
	vp_add(&a->f, SDPA_Q, (void *)bu->q), vp_add(&a->f, SDPA_K, (void *)bu->k);
	vp_add(&a->f, SDPA_V, (void *)bu->v), vp_add(&a->f, SDPA_O, bu->o);
	vp_add(&a->f, SDPA_SCALE, &a->scale);
	if (fs->stats)
		vp_add(&a->f, SDPA_STATS, bu->stats);
	if (fs->causal)
		vp_add(&a->f, SDPA_NEG_INF, &a->neg);
	return 0;
}

/*
 * The backward graph's candidate plans and the side tensors it needs before them in the
 * workspace; *@wsz grown to hold both.
 */
static int plan_bwd(struct kp_cudnn_sdpa *a, struct cg_graph *g, const struct cg_sdpa *fs, long ver,
		    size_t *wsz, char *why, size_t whylen)
{
	if (cg_sdpa_bwd(g, fs) < 0 || build(a, &a->b, g, "backward", why, whylen) < 0)
		return -1;
	a->side = cg_sdpa_bwd_side_bytes(fs, &a->sum_off);
	a->acc_bytes = (size_t)fs->b * fs->h * fs->sq * fs->d * 4;
	a->zero_acc = ver < 90600;
	if (a->side + (size_t)max_ws(&a->b) > *wsz)
		*wsz = a->side + (size_t)max_ws(&a->b);
	return 0;
}

/* One workspace, sized for every candidate: the kept plans run in it */
static int alloc_ws(struct kp_cudnn_sdpa *a, size_t wsz, char *why, size_t whylen)
{
	if (wsz && cudaMalloc(&a->ws, wsz) != cudaSuccess) {
		cudaGetLastError();
		snprintf(why, whylen, "cannot allocate a %zu-byte cuDNN workspace", wsz);
		return -1;
	}
	return 0;
}

/*
 * The backward's buffers (its side tensors at the workspace's start) into its variant pack,
 * and the fastest of its plans, timed after a forward run.
 */
static int bind_bwd(struct kp_cudnn_sdpa *a, const struct sdpa_bufs *bu, int causal, char *why,
		    size_t whylen)
{
	struct plan *b = &a->b;
	char *ws = a->ws;
	vp_add(b, SDPA_Q, (void *)bu->q), vp_add(b, SDPA_K, (void *)bu->k),
		vp_add(b, SDPA_V, (void *)bu->v);
	vp_add(b, SDPA_O, bu->o), vp_add(b, SDPA_DO, (void *)bu->dout),
		vp_add(b, SDPA_STATS, bu->stats);
	vp_add(b, SDPA_DQ, bu->dq), vp_add(b, SDPA_DK, bu->dk), vp_add(b, SDPA_DV, bu->dv);
	vp_add(b, SDPA_SCALE, &a->scale), vp_add(b, SDPA_ONE, &a->one);
	vp_add(b, SDPA_DQ_ACCUM, ws), vp_add(b, SDPA_SOFTMAX_SUM, ws + a->sum_off);
	if (causal)
		vp_add(b, SDPA_NEG_INF, &a->neg);
	/* the backward candidates run on the forward's O and Stats */
	if (cudnn_sdpa_fwd(a, why, whylen) < 0 ||
	    (a->zero_acc && cudaMemset(ws, 0, a->acc_bytes) != cudaSuccess) ||
	    choose(a, b, ws + a->side, why, whylen) < 0 ||
	    mk_vpack(a, b, ws + a->side, why, whylen) < 0)
		return -1;
	return 0;
}

struct kp_cudnn_sdpa *cudnn_sdpa_new(struct kp_cudnn *c, const struct cg_sdpa *s, const void *q,
				     const void *k, const void *v, void *o, float *stats,
				     const void *dout, void *dq, void *dk, void *dv, char *algo,
				     size_t algolen, char *why, size_t whylen)
{
	struct kp_cudnn_sdpa *a = calloc(1, sizeof(*a));
	struct cg_graph *g = malloc(sizeof(*g));
	if (!a || !g) {
		free(a), free(g);
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	a->c = c, a->backward = dq != NULL;
	cudnn_backend(c, &a->api, &a->h);
	long ver = cudnn_version(c);
	struct cg_sdpa fs = *s;
	fs.stats = a->backward;
	fs.lowest_mask = ver < 91000;
	a->scale = s->scale, a->one = 1.f;
	struct sdpa_bufs bu = { q, k, v, dout, o, dq, dk, dv, stats };
	if (check_bwd(a, s, ver, why, whylen) < 0 || plan_fwd(a, g, &fs, &bu, why, whylen) < 0)
		goto bad;
	size_t wsz = (size_t)max_ws(&a->f);
	if ((a->backward && plan_bwd(a, g, &fs, ver, &wsz, why, whylen) < 0) ||
	    alloc_ws(a, wsz, why, whylen) < 0)
		goto bad;
	if (choose(a, &a->f, a->ws, why, whylen) < 0 || mk_vpack(a, &a->f, a->ws, why, whylen) < 0)
		goto bad;
	if (a->backward) {
		if (bind_bwd(a, &bu, s->causal, why, whylen) < 0)
			goto bad;
		snprintf(algo, algolen, "graph API; fwd %s; bwd %s", a->f.why, a->b.why);
	} else {
		snprintf(algo, algolen, "graph API; fwd %s", a->f.why);
	}
	free(g);
	return a;
bad:
	free(g);
	cudnn_sdpa_free(a);
	return NULL;
}

static int exec(struct kp_cudnn_sdpa *a, struct plan *p, char *why, size_t whylen)
{
	int st = a->api.execute(a->h, p->plan, p->vpack);
	if (st != 0)
		snprintf(why, whylen, "cudnnBackendExecute: %s", a->api.errstr(st));
	return st ? -1 : 0;
}

int cudnn_sdpa_fwd(struct kp_cudnn_sdpa *a, char *why, size_t whylen)
{
	return exec(a, &a->f, why, whylen);
}

int cudnn_sdpa_bwd(struct kp_cudnn_sdpa *a, char *why, size_t whylen)
{
	if (a->zero_acc && cudaMemsetAsync(a->ws, 0, a->acc_bytes, 0) != cudaSuccess) {
		snprintf(why, whylen, "cudaMemsetAsync(dQ_accum) failed");
		return -1;
	}
	return exec(a, &a->b, why, whylen);
}

static void plan_free(struct kp_cudnn_sdpa *a, struct plan *p)
{
	const struct cg_api *api = &a->api;
	while (p->ncand)
		api->destroy(p->cand[--p->ncand]);
	if (p->vpack)
		api->destroy(p->vpack);
	if (p->plan)
		api->destroy(p->plan);
	while (p->ncfg)
		api->destroy(p->cfg[--p->ncfg]);
	for (int i = 0; i < 2; i++)
		if (p->heur[i])
			api->destroy(p->heur[i]);
	cg_release(api, &p->g);
}

void cudnn_sdpa_free(struct kp_cudnn_sdpa *a)
{
	if (!a)
		return;
	plan_free(a, &a->f);
	plan_free(a, &a->b);
	if (a->ws)
		cudaFree(a->ws);
	free(a);
}
#endif /* KPROF_HAVE_CUPTI */
