/*
 * kmetrics.c — measured counters per kernel: join range-profiler windows to the timed trace's
 * kernels (by start order inside the window) and write them as kernel args.
 */
#include "record/kmetrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "record/ctrace.h"

const char *const kmetrics_names[KM_N] = {
	[KM_TENSOR_BF16] = "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
	[KM_TENSOR_FP16] = "sm__ops_path_tensor_src_fp16.sum",
	[KM_TENSOR_TF32] = "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
	[KM_TENSOR_FP64] = "sm__ops_path_tensor_src_fp64.sum",
	[KM_DFMA] = "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
	[KM_DADD] = "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
	[KM_DMUL] = "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
	[KM_FFMA] = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
	[KM_FADD] = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
	[KM_FMUL] = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
	[KM_HFMA] = "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum",
	[KM_HADD] = "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum",
	[KM_HMUL] = "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum",
	[KM_DRAM_READ] = "dram__bytes_read.sum",
	[KM_DRAM_WRITE] = "dram__bytes_write.sum",
	[KM_SM_HZ] = "sm__cycles_elapsed.avg.per_second",
};

const char *const kmetrics_flop_names[7] = {
	"tensor_bf16", "tensor_fp16", "tensor_tf32", "tensor_fp64", "fp64", "fp32", "fp16",
};

int kmetrics_sass(int k)
{
	return k >= 0 && k < KM_N && strstr(kmetrics_names[k], "__sass_") != NULL;
}

static int64_t count(double v)
{
	return isfinite(v) && v >= 0 && v < 9.2e18 ? (int64_t)llround(v) : -1;
}

int64_t kmetrics_flops(const struct kp_kmet *m, int64_t out[7])
{
	int64_t tot = -1;
	for (int k = 0; k < 4; k++)
		out[k] = count(m->v[KM_TENSOR_BF16 + k]);
	for (int p = 0; p < 3; p++) {
		int64_t fma = count(m->v[KM_DFMA + 3 * p]), add = count(m->v[KM_DADD + 3 * p]),
			mul = count(m->v[KM_DMUL + 3 * p]);
		out[4 + p] = fma < 0 && add < 0 && mul < 0
				     ? -1
				     : 2 * (fma < 0 ? 0 : fma) + (add < 0 ? 0 : add) +
					       (mul < 0 ? 0 : mul);
	}
	for (int k = 0; k < 7; k++)
		if (out[k] >= 0)
			tot = (tot < 0 ? 0 : tot) + out[k];
	return tot;
}

struct kref {
	uint64_t start;
	uint32_t corr;
	size_t i;
};

static int cmp_kref(const void *a, const void *b)
{
	const struct kref *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

size_t kmetrics_join(struct kp_ctrace *t,
		     void (*warn)(void *arg, const struct kp_mwin *w, size_t nkern), void *arg)
{
	size_t bad = 0;
	struct kref *k = malloc((t->nrecs ? t->nrecs : 1) * sizeof(*k));
	if (!k)
		return t->nmwin;
	for (size_t w = 0; w < t->nmwin; w++) {
		const struct kp_mwin *mw = &t->mwin[w];
		size_t n = 0;
		for (size_t i = 0; i < t->nrecs; i++) {
			const struct kp_rec *r = &t->recs[i];
			if (mw->rec_hi && (i < mw->rec_lo || i >= mw->rec_hi))
				continue;
			if (r->kind == REC_KERNEL && r->start_ns >= mw->t0_ns &&
			    r->start_ns <= mw->t1_ns)
				k[n++] = (struct kref){ r->start_ns, r->corr, i };
		}
		if (n != mw->n || mw->first + mw->n > t->nkmet) {
			bad++;
			if (warn)
				warn(arg, mw, n);
			continue;
		}
		qsort(k, n, sizeof(*k), cmp_kref);
		for (size_t j = 0; j < n; j++)
			t->recs[k[j].i].met = (uint32_t)(mw->first + j + 1);
	}
	free(k);
	return bad;
}

struct cpid {
	uint32_t corr, pid;
};

static int cmp_cpid(const void *a, const void *b)
{
	const struct cpid *x = a, *y = b;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* The launch entries of window @w of @m in launch order (start_ns = ordinal). */
static size_t launches(const struct kp_ctrace *m, const struct kp_mwin *w, struct kref *e)
{
	size_t n = 0;
	for (size_t i = w->rec_lo; i < w->rec_hi && i < m->nrecs; i++)
		if (m->recs[i].kind == REC_KERNEL || m->recs[i].kind == REC_MEMSET)
			e[n++] = (struct kref){ m->recs[i].start_ns, 0, i };
	qsort(e, n, sizeof(*e), cmp_kref);
	return n;
}

/* Join window @w of @m to the kernels @k[0..nk) of one process of @t; 0 or -1 (warned). */
static int join_one(struct kp_ctrace *t, const struct kp_ctrace *m, const struct kp_mwin *w,
		    const struct kref *k, size_t nk, struct kref *e, FILE *err)
{
	size_t ne = launches(m, w, e), nl = 0;
	for (size_t j = 0; j < ne; j++)
		nl += m->recs[e[j].i].kind == REC_KERNEL;
	if (w->n != ne && w->n != nl) {
		if (err)
			fprintf(err,
			"kprof: warning: --metrics: %s: %zu ranges for %zu kernel launches and "
			"%zu memsets: not joined\n",
			w->label, w->n, nl, ne - nl);
		return -1;
	}
	if (nk != nl) {
		if (err)
			fprintf(err,
			"kprof: warning: --metrics: %s: %zu kernels in the metrics run, %zu in "
			"the timed run: not joined\n",
			w->label, nl, nk);
		return -1;
	}
	for (size_t j = 0, q = 0; j < ne; j++) {
		const struct kp_rec *r = &m->recs[e[j].i];
		if (r->kind != REC_KERNEL)
			continue;
		const char *a = r->name ? r->name : "", *b = t->recs[k[q].i].name;
		if (strcmp(a, b ? b : "")) {
			if (err)
				fprintf(err,
				"kprof: warning: --metrics: %s: kernel %zu is '%s' in the metrics "
				"run, '%s' in the timed run: not joined\n",
				w->label, q, a, b ? b : "");
			return -1;
		}
		q++;
	}
	struct kp_kmet *km = realloc(t->kmet, (t->nkmet + nl + 1) * sizeof(*km));
	if (!km)
		return -1;
	t->kmet = km;
	for (size_t j = 0, q = 0, rg = 0; j < ne; j++) {
		int kern = m->recs[e[j].i].kind == REC_KERNEL;
		size_t range = w->n == ne ? j : rg;
		if (!kern)
			continue;
		t->kmet[t->nkmet] = m->kmet[w->first + range];
		t->recs[k[q++].i].met = (uint32_t)(++t->nkmet);
		rg++;
	}
	return 0;
}

size_t kmetrics_join_runs(struct kp_ctrace *t, const struct kp_ctrace *m, FILE *err)
{
	size_t joined = 0, nc = 0, np = 0;
	if (!m->nmwin) {
		if (err)
			fprintf(err, "kprof: warning: --metrics: no process of the metrics run recorded "
			     "counters\n");
		return 0;
	}
	struct cpid *c = malloc((t->nrecs + 1) * sizeof(*c));
	uint32_t *pids = malloc((t->nrecs + 1) * sizeof(*pids));
	struct kref *k = malloc((t->nrecs + 1) * sizeof(*k));
	struct kref *e = malloc((m->nrecs + 1) * sizeof(*e));
	if (!c || !pids || !k || !e)
		goto out;
	for (size_t i = 0; i < t->nrecs; i++)
		if ((t->recs[i].kind == REC_RUNTIME || t->recs[i].kind == REC_DRIVER) &&
		    t->recs[i].corr)
			c[nc++] = (struct cpid){ t->recs[i].corr, t->recs[i].pid };
	qsort(c, nc, sizeof(*c), cmp_cpid);
	/* the process of each kernel: its launch call's */
	uint32_t *kp = malloc((t->nrecs + 1) * sizeof(*kp));
	if (!kp)
		goto out;
	for (size_t i = 0; i < t->nrecs; i++) {
		kp[i] = 0;
		if (t->recs[i].kind != REC_KERNEL)
			continue;
		struct cpid key = { t->recs[i].corr, 0 };
		const struct cpid *f = bsearch(&key, c, nc, sizeof(*c), cmp_cpid);
		if (f && (kp[i] = f->pid))
			pids[np++] = f->pid;
	}
	qsort(pids, np, sizeof(*pids), cmp_u32);
	size_t u = 0;
	for (size_t i = 0; i < np; i++)
		if (!u || pids[u - 1] != pids[i])
			pids[u++] = pids[i];
	if (u != m->nmwin)
		if (err)
			fprintf(err,
			"kprof: warning: --metrics: %zu processes launched kernels in the timed "
			"run, %zu in the metrics run; joined in PID order\n",
			u, m->nmwin);
	for (size_t w = 0; w < m->nmwin && w < u; w++) {
		size_t nk = 0;
		for (size_t i = 0; i < t->nrecs; i++)
			if (kp[i] == pids[w])
				k[nk++] = (struct kref){ t->recs[i].start_ns, t->recs[i].corr, i };
		qsort(k, nk, sizeof(*k), cmp_kref);
		if (join_one(t, m, &m->mwin[w], k, nk, e, err) == 0)
			joined += nk;
	}
	free(kp);
out:
	free(c);
	free(pids);
	free(k);
	free(e);
	return joined;
}

void kmetrics_put_args(FILE *out, const struct kp_kmet *m)
{
	/*
	 * A zero total is not written: a kernel that executed no counted FP or tensor instruction
	 * (a copy, an integer kernel) stays without FLOPs, as a data-movement kernel without a
	 * model does, rather than showing a measured 0 FLOP/s.  DRAM bytes are still written.
	 */
	int64_t f[7], tot = kmetrics_flops(m, f);
	if (tot > 0)
		fprintf(out, ",\"kprof measured flops\":%" PRId64, tot);
	for (int k = 0; k < 7; k++)
		if (f[k] > 0)
			fprintf(out, ",\"kprof measured flops %s\":%" PRId64,
				kmetrics_flop_names[k], f[k]);
	int64_t rd = count(m->v[KM_DRAM_READ]), wr = count(m->v[KM_DRAM_WRITE]);
	if (rd >= 0 && wr >= 0)
		fprintf(out, ",\"kprof dram bytes\":%" PRId64, rd + wr);
	if (rd >= 0)
		fprintf(out, ",\"kprof dram bytes read\":%" PRId64, rd);
	if (wr >= 0)
		fprintf(out, ",\"kprof dram bytes written\":%" PRId64, wr);
	if (isfinite(m->v[KM_SM_HZ]) && m->v[KM_SM_HZ] > 0)
		fprintf(out, ",\"kprof measured sm clock mhz\":%.1f", m->v[KM_SM_HZ] / 1e6);
}
