/*
 * analyze.c — linked GPU work -> rows: time, calls, FLOPs, bytes, rates and % of peak.
 *
 * Op rows carry their op's FLOPs/bytes over the sum of its kernels' time.  Kernel
 * rows get each op's FLOPs/bytes split over its kernels in proportion to duration.
 * % of peak = FLOPs / sum(peak_i x dur_i) over the row's kernels, i.e. achieved
 * FLOP/s over the time-weighted peak, so kernels at different clocks or
 * precisions weigh by their time.
 */
#include "kprof/analyze.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kprof/dtype.h"
#include "kprof/hmap.h"
#include "kprof/fwdbwd.h"
#include "kprof/kernrole.h"
#include "kprof/opmodel.h"
#include "kprof/par.h"
#include "kprof/strtab.h"
#include "kprof/units.h"
#include "kprof/utf8.h"
#include "kprof/where.h"

/* One per op that GPU work is attributed to (flags in bytes: memory, issue 14). */
struct op_info {
	struct kp_cost cost;
	int64_t kernel_ns; /* sum of its GPU kernel durations */
	int64_t math_ns;   /* ... of its math kernels (kernrole_of) */
	int64_t move_ns;   /* ... of its data-movement kernels */
	int32_t row_added; /* row that holds its FLOPs/bytes, -1 */
	int32_t row_seen;  /* row that counted this op call, -1 */
	int64_t call_at;   /* its call's entry in that row's durs */
	uint8_t evaluated;
	uint8_t tf32;        /* a kernel of the op runs TF32 */
	uint8_t causal;      /* is_causal its kernels' names say: enum kp_causal_hint, 3 both */
	uint8_t counted;     /* counted in totals.ops */
	uint8_t total_added; /* its FLOPs/bytes are in the totals */
	uint8_t warned;      /* eval_once: the model's warnings given */
};

/* What -g op-shape adds per op_info (same index; allocated for that grouping only). */
struct op_shape {
	const char *shape;   /* interned "[M,K]x[K,N]" */
	const char *key;     /* op-shape key */
	const char *sig;     /* functional signature (op_signature()), interned; NULL none */
	const char *variant; /* the backend its counted op names ("cudnn", "mm"), interned */
	int32_t sig_op;      /* the op the signature is of, -1 */
	uint8_t sig_done;    /* sig and variant looked up */
};

/* The value of an interned pointer key (hmap), -1 when first seen. */
static int64_t *rowmap_slot(struct kp_hmap *m, const void *key)
{
	int created;
	struct kp_hmap_entry *e = hmap_put_ptr(m, key, &created);
	if (created)
		e->val.i = -1;
	return &e->val.i;
}

static const char unlinked_name[] = "(unlinked)";

/*
 * Does this kernel run fp32 inputs on TF32 tensor cores?  Either the name says
 * "tf32" (sm80_xmma_gemm_f32f32_tf32f32_f32, cutlass_tensorop_s1688tf32gemm), or
 * it is a CUTLASS tensor-op kernel with an fp32 accumulator ("tensorop_s1688gemm",
 * "tensorop_s16816gemm"): CUTLASS converts fp32 operands to TF32 before the MMA
 * (NVIDIA/cutlass#466).  Only asked for ops whose inputs are fp32; fp16/bf16
 * variants name their element type ("tensorop_bf16_s16816gemm").
 */
static int has_tf32(const char *name)
{
	for (const char *p = name; (p = strpbrk(p, "tT")); p++)
		if (strncasecmp(p, "tf32", 4) == 0 || strncmp(p, "tensorop_s", 10) == 0)
			return 1;
	return 0;
}

/* "[8192,8192]x[8192,8192]" of the tensor slots (non-tensor slots skipped) */
static const char *shape_text(struct kp_strtab *st, const struct kp_op *op)
{
	char buf[1024];
	size_t n = 0;
	int first = 1;
	for (int i = 0; i < op->nslots && n < sizeof(buf) - 64; i++) {
		const struct kp_slot *s = &op->slots[i];
		if (s->dtype == DT_NONE && s->nlist == 0)
			continue;
		n += snprintf(buf + n, sizeof(buf) - n, "%s", first ? "" : "x");
		first = 0;
		int nl = s->nlist ? s->nlist : 1;
		if (s->nlist)
			n += snprintf(buf + n, sizeof(buf) - n, "{");
		for (int j = 0; j < nl && n < sizeof(buf) - 64; j++) {
			const struct kp_slot *e = s->nlist ? &s->list[j] : s;
			n += snprintf(buf + n, sizeof(buf) - n, "%s[", j ? "," : "");
			for (int k = 0; k < e->ndim && n < sizeof(buf) - 32; k++)
				n += e->dims[k] == KP_DIM_BAD /* out of range: trace.c warned */
					     ? snprintf(buf + n, sizeof(buf) - n, "%s?", k ? "," : "")
					     : snprintf(buf + n, sizeof(buf) - n, "%s%lld",
							k ? "," : "", (long long)e->dims[k]);
			n += snprintf(buf + n, sizeof(buf) - n, "]");
		}
		if (s->nlist)
			n += snprintf(buf + n, sizeof(buf) - n, "}");
	}
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	return strtab_intern(st, buf, n);
}

static void eval_op(struct op_info *oi, const struct kp_trace *t, const struct kp_op *op)
{
	if (oi->evaluated)
		return;
	oi->evaluated = 1;
	struct kp_op_in in = {
		.name = op->name,
		.nslots = op->nslots,
		.slots = op->slots,
		.kernel_flop = trace_opx(t, op)->kernel_flop,
		.kernel_num_gb = trace_opx(t, op)->kernel_num_gb,
		.causal_hint = oi->causal < 3 ? oi->causal : CAUSAL_HINT_NONE,
	};
	fwdbwd_inputs(t, (int32_t)(op - t->ops), &in);
	if (opmodel_eval(&in, &oi->cost) != 0 && oi->cost.cls == MODEL_NONE) {
		oi->cost.flops = oi->cost.bytes = -1;
	}
	if (oi->tf32 && oi->cost.prec == PREC_FP32)
		oi->cost.prec = PREC_TF32;
	/* kprof's own traces say which math the backend ran ("kprof compute") */
	if (op->prec_hint != PREC_NONE && oi->cost.cls != MODEL_NONE)
		oi->cost.prec = op->prec_hint;
}

/*
 * This kernel's share of its op's FLOPs and bytes, for kernel rows.  An op with a math
 * model (GEMM, conv, attention) gives its FLOPs to its math kernels only, by duration;
 * its data-movement kernels (copy of C, bias add, fills, layout transforms) get the
 * bytes of the op's data-movement part when the model knows them, and no FLOPs.  Other
 * ops (pointwise, copies, Inductor kernels) spread their figures over all their
 * kernels by duration.  -1: none or unknown.
 */
static void kernel_share(const struct op_info *oi, const struct kp_gpu *g, int role, double *f,
			 double *b)
{
	const struct kp_cost *c = &oi->cost;
	double d = (double)g->dur_ns;

	*f = *b = -1;
	if (oi->kernel_ns <= 0)
		return;
	if (c->cls != MODEL_PRIMARY || (c->family && !strcmp(c->family, "inductor"))) {
		if (c->flops >= 0)
			*f = (double)c->flops * d / (double)oi->kernel_ns;
		if (c->bytes >= 0)
			*b = (double)c->bytes * d / (double)oi->kernel_ns;
		return;
	}
	if (role == KROLE_MATH) {
		int64_t mb = oi->move_ns > 0 && c->math_bytes >= 0 ? c->math_bytes : c->bytes;
		if (c->flops >= 0)
			*f = (double)c->flops * d / (double)oi->math_ns;
		if (mb >= 0)
			*b = (double)mb * d / (double)oi->math_ns;
		return;
	}
	/* data movement: its own bytes; all the op's bytes when no math kernel ran */
	int64_t vb = c->move_bytes >= 0 ? c->move_bytes : oi->math_ns == 0 ? c->bytes : -1;
	if (vb >= 0)
		*b = (double)vb * d / (double)oi->move_ns;
}

/*
 * Coverage of one GPU event (kp_totals): 0 its FLOPs are modelled, 1 it moves data with a
 * byte model and no FLOPs, 2 no model; *why for 2.
 */
static int coverage(const struct op_info *oi, const struct kp_op *op, const struct kp_gpu *g,
		    const struct kp_gpux *gx, int role, enum kp_nomodel *why)
{
	if (g->kind != GPU_KERNEL)
		return 1;
	if (gx->kernel_flop >= 0)
		return 0;
	if (oi && oi->cost.flops >= 0 && oi->kernel_ns > 0) {
		int split = oi->cost.cls == MODEL_PRIMARY &&
			    !(oi->cost.family && !strcmp(oi->cost.family, "inductor"));
		return !split || role == KROLE_MATH ? 0 : 1;
	}
	if (gx->kernel_num_gb >= 0 || (oi && oi->cost.bytes >= 0))
		return 1;
	if (oi && oi->cost.cls == MODEL_PRIMARY && role == KROLE_MOVE)
		return 1;
	*why = !strncmp(g->name, "triton", 6)             ? NOMODEL_TRITON
	       : strcasestr(g->name, "nccl")              ? NOMODEL_NCCL
	       : !op                                      ? NOMODEL_UNLINKED
	       : op->cls != MODEL_NONE && op->nslots == 0 ? NOMODEL_NOSHAPES
	       : !strncmp(op->name, "aten::", 6)          ? NOMODEL_ATEN
							  : NOMODEL_CUSTOM;
	return 2;
}

/* GPU events (indexes) by start time, for the busy union */
static int cmp_start(const void *a, const void *b, void *arg)
{
	const struct kp_gpu *g = arg;
	int64_t x = g[*(const int32_t *)a].ts_ns, y = g[*(const int32_t *)b].ts_ns;
	return x < y ? -1 : x > y;
}

static int32_t dominant_device(const struct kp_trace *t)
{
	/* the device with the most GPU time; devices are few, so a linear search */
	struct {
		int32_t dev;
		int64_t ns;
	} *seen = NULL;
	size_t nseen = 0, cap = 0;
	for (size_t i = 0; i < t->ngpu; i++) {
		size_t k;
		for (k = 0; k < nseen && seen[k].dev != t->gpu[i].device; k++)
			;
		if (k == nseen) {
			if (nseen == cap) {
				cap = cap ? 2 * cap : 8;
				seen = xrealloc(seen, cap * sizeof(*seen));
			}
			seen[nseen].dev = t->gpu[i].device;
			seen[nseen++].ns = 0;
		}
		seen[k].ns += t->gpu[i].dur_ns;
	}
	int64_t best = -1;
	int32_t dev = 0;
	for (size_t k = 0; k < nseen; k++)
		if (seen[k].ns > best) {
			best = seen[k].ns;
			dev = seen[k].dev;
		}
	free(seen);
	return dev;
}

static void setup_device(const struct kp_trace *t, const struct kp_analyze_opts *o,
			 struct kp_report *r)
{
	int32_t dev = dominant_device(t);
	const struct kp_devprop *dp = NULL;
	for (int i = 0; i < t->ndevs; i++)
		if (t->devs[i].id == dev)
			dp = &t->devs[i];
	if (!dp && t->ndevs)
		dp = &t->devs[0];
	struct kp_devprops q = { 0 };
	if (dp)
		q = (struct kp_devprops){ dp->sms, dp->total_mem, dp->cc_major, dp->cc_minor };
	struct kp_devchoice c;
	devdb_choose(o->db, o->device, dp ? dp->name : NULL, dp ? &q : NULL, &c);
	r->dev = c.dev;
	r->device_name = c.name;
	r->match = c.how == c.buf ? arena_strdup(&r->arena, c.buf) : c.how;
	r->device_warning = c.warning ? arena_strdup(&r->arena, c.warning) : NULL;

	if (t->kprof_clock_known) {
		r->clock_source = CLOCK_TRACE;
	} else if (o->sm_clock_mhz > 0) {
		r->clock_source = CLOCK_OPTION;
		r->sm_clock_mhz = o->sm_clock_mhz;
	} else {
		r->clock_source = CLOCK_DATASHEET;
	}
}

static int64_t mrow_total(const struct kp_mrow *m)
{
	int64_t n = 0;
	for (int k = 0; k < 3; k++)
		if (m->flops[k] > 0 && __builtin_add_overflow(n, m->flops[k], &n))
			return INT64_MAX;
	return n;
}

static int cmp_mrow(const void *a, const void *b)
{
	const struct kp_mrow *x = a, *y = b;
	int64_t u = mrow_total(x), v = mrow_total(y);
	if (u != v)
		return u > v ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* cuda_profiler_range records grouped by kernel name: calls and measured FLOPs */
static void measured_rows(const struct kp_trace *t, struct kp_report *r)
{
	if (!t->nranges)
		return;
	struct kp_hmap map = { 0 };
	r->mrows = xcalloc(t->nranges, sizeof(*r->mrows));
	for (size_t i = 0; i < t->nranges; i++) {
		const struct kp_range *rg = &t->ranges[i];
		int64_t *slot = rowmap_slot(&map, rg->name);
		if (*slot < 0) {
			struct kp_mrow *m = &r->mrows[r->nmrows];
			m->name = rg->name;
			m->flops[0] = m->flops[1] = m->flops[2] = -1;
			*slot = (int32_t)r->nmrows++;
		}
		struct kp_mrow *m = &r->mrows[*slot];
		m->calls++;
		for (int k = 0; k < 3; k++)
			if (rg->flops[k] >= 0 &&
			    __builtin_add_overflow(m->flops[k] < 0 ? 0 : m->flops[k], rg->flops[k],
						   &m->flops[k]))
				m->flops[k] = INT64_MAX;
	}
	qsort(r->mrows, r->nmrows, sizeof(*r->mrows), cmp_mrow);
	hmap_free(&map);
}

/* ---- --group-by annotation ---- */

static const char no_annot_name[] = "(no annotation)";

static int cmp_annot_idx(const void *a, const void *b, void *arg)
{
	const struct kp_annot *v = arg;
	const struct kp_annot *x = &v[*(const int32_t *)a], *y = &v[*(const int32_t *)b];
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	if (x->dur_ns != y->dur_ns)
		return x->dur_ns > y->dur_ns ? -1 : 1; /* the enclosing one first */
	return *(const int32_t *)a < *(const int32_t *)b ? -1 : 1;
}

struct glaunch {
	int32_t thread, gpu;
	int64_t ts;
};

static int cmp_glaunch(const void *a, const void *b)
{
	const struct glaunch *x = a, *y = b;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->gpu < y->gpu ? -1 : x->gpu > y->gpu;
}

/*
 * For each GPU event, the innermost annotation enclosing its launch on the launching thread
 * (index into t->annots), -1 when none: one sweep over both orders with a stack.
 */
static int32_t *gpu_annotations(const struct kp_trace *t)
{
	int32_t *out = xmalloc((t->ngpu + 1) * sizeof(*out));
	memset(out, 0xff, (t->ngpu + 1) * sizeof(*out));
	int32_t *ord = xmalloc((t->nannots + 1) * sizeof(*ord));
	for (size_t i = 0; i < t->nannots; i++)
		ord[i] = (int32_t)i;
	if (t->nannots)
		qsort_r(ord, t->nannots, sizeof(*ord), cmp_annot_idx, t->annots);
	struct glaunch *gl = xmalloc((t->ngpu + 1) * sizeof(*gl));
	size_t n = 0;
	for (size_t i = 0; i < t->ngpu; i++) {
		int32_t l = t->gpu[i].launch;
		if (l >= 0)
			gl[n++] = (struct glaunch){ t->launches[l].thread, (int32_t)i,
						    t->launches[l].ts_ns };
	}
	if (n)
		qsort(gl, n, sizeof(*gl), cmp_glaunch);
	int32_t *stack = xmalloc((t->nannots + 1) * sizeof(*stack));
	size_t sp = 0, k = 0;
	for (size_t i = 0; i < n; i++) {
		while (k < t->nannots) {
			const struct kp_annot *a = &t->annots[ord[k]];
			if (a->thread > gl[i].thread ||
			    (a->thread == gl[i].thread && a->ts_ns > gl[i].ts))
				break;
			stack[sp++] = ord[k++];
		}
		while (sp) {
			const struct kp_annot *a = &t->annots[stack[sp - 1]];
			if (a->thread == gl[i].thread && a->ts_ns <= gl[i].ts &&
			    gl[i].ts <= a->ts_ns + a->dur_ns)
				break;
			sp--;
		}
		/* an enclosing span may sit below one that ended: look down the stack */
		int32_t hit = -1;
		for (size_t j = sp; j-- > 0;) {
			const struct kp_annot *a = &t->annots[stack[j]];
			if (a->thread != gl[i].thread)
				break;
			if (a->ts_ns <= gl[i].ts && gl[i].ts <= a->ts_ns + a->dur_ns) {
				hit = stack[j];
				break;
			}
		}
		out[gl[i].gpu] = hit;
	}
	free(stack);
	free(gl);
	free(ord);
	return out;
}

/* ---- analyze_run: named passes over one run's state ---- */

/*
 * The state of one analyze_run().  The passes, in order: op_state() and kernel_roles()
 * (per-op kernel time and roles), eval_range() (each op's model, ops in parallel), then per
 * GPU event group_event() (key -> row, time, calls) and attribute() (FLOPs/bytes, peaks,
 * coverage) in event order on one thread (rows, sums and warnings in first-seen order),
 * then busy_span() (its sort in parallel) and derive_columns() (rows in parallel).
 */
struct run {
	const struct kp_trace *t;
	const struct kp_analyze_opts *o;
	struct kp_report *r;
	struct kp_strtab st; /* shapes and op-shape keys, in r->arena */
	int32_t *gannot;     /* GROUP_ANNOT: innermost annotation per GPU event, -1 none */
	int64_t *acall;      /* GROUP_ANNOT: annotation span's call in its row's durs, -1 none */
	struct kp_where *where; /* GROUP_MODULE, GROUP_SOURCE: keys and call marks */
	int64_t *wmark;         /* ... the current event's call mark, NULL: its own call */
	int32_t *oidx;       /* op index -> oi index, -1 for ops without GPU work */
	struct op_info *oi;
	struct op_shape *osh;   /* GROUP_OP_SHAPE: one per oi */
	uint8_t *role;          /* per GPU event: enum kp_krole */
	struct kp_hmap map;     /* row key -> row index */
	struct kp_hmap nomodel; /* kernel name -> reasons counted (bit per enum kp_nomodel) */
	size_t caprows;
	int64_t tot_flops, tot_bytes;
	int64_t t_first, t_last; /* span over every kept event */
	int64_t g_first, g_last; /* GPU span: GPU events with a duration */
	double clk_ns;           /* sum of SM clock x kernel time, for the average clock */
	int64_t clk_w;
	int32_t *iv; /* GPU events counted, for busy time (indexes: 4 bytes, not 16) */
	size_t niv;
	struct kp_hmap sigseen; /* op-shape: (part, signature op) pairs counted in sig_calls */
};

static void oi_init(void *arg, size_t lo, size_t hi)
{
	struct op_info *oi = arg;
	for (size_t i = lo; i < hi; i++)
		oi[i].row_added = oi[i].row_seen = -1;
}

/* Per-op state only for the ops that GPU work is attributed to (few of all ops). */
static void op_state(struct run *R)
{
	const struct kp_trace *t = R->t;
	R->oidx = xmalloc((t->nops + 1) * sizeof(*R->oidx));
	memset(R->oidx, 0xff, (t->nops + 1) * sizeof(*R->oidx));
	size_t noi = 0;
	for (size_t i = 0; i < t->ngpu; i++)
		if (t->gpu[i].op >= 0 && R->oidx[t->gpu[i].op] < 0)
			R->oidx[t->gpu[i].op] = (int32_t)noi++;
	R->oi = xcalloc(noi + 1, sizeof(*R->oi));
	R->osh = R->o->group == GROUP_OP_SHAPE ? xcalloc(noi + 1, sizeof(*R->osh)) : NULL;
	par_for(t->jobs, noi, 16384, oi_init, R->oi);
}

/* Per op, kernel time (math and data movement) and the TF32 hint. */
static void kernel_roles(struct run *R)
{
	const struct kp_trace *t = R->t;
	struct kp_hmap tf32s = { 0 }, roles = { 0 };
	R->role = xcalloc(t->ngpu + 1, 1);
	for (size_t i = 0; i < t->ngpu; i++) {
		const struct kp_gpu *g = &t->gpu[i];
		if (g->op < 0 || g->kind != GPU_KERNEL)
			continue;
		struct op_info *info = &R->oi[R->oidx[g->op]];
		info->kernel_ns += g->dur_ns;
		/* per distinct name: its role, and above it what it says of is_causal */
		int64_t *rl = rowmap_slot(&roles, g->name);
		if (*rl < 0)
			*rl = (int32_t)kernrole_of(g->name) | (kernrole_causal(g->name) + 1) << 4;
		R->role[i] = (uint8_t)(*rl & 15);
		int cz = (int)(*rl >> 4);
		if (cz != CAUSAL_HINT_NONE)
			info->causal = (uint8_t)(info->causal == CAUSAL_HINT_NONE ||
								 info->causal == cz
							 ? cz
							 : 3);
		if (R->role[i] == KROLE_MATH)
			info->math_ns += g->dur_ns;
		else
			info->move_ns += g->dur_ns;
		if (!info->tf32) {
			/* names are interned: test each distinct kernel name once */
			int64_t *hint = rowmap_slot(&tf32s, g->name);
			if (*hint < 0)
				*hint = has_tf32(g->name);
			info->tf32 = (uint8_t)*hint;
		}
	}
	hmap_free(&tf32s);
	hmap_free(&roles);
}

/* The models of ops [lo, hi) with GPU work (each op's own op_info: a parallel for). */
static void eval_range(void *arg, size_t lo, size_t hi)
{
	struct run *R = arg;
	for (size_t i = lo; i < hi; i++)
		if (R->oidx[i] >= 0)
			eval_op(&R->oi[R->oidx[i]], R->t, &R->t->ops[i]);
}

/*
 * The op's model (evaluated beforehand by eval_range, or now), with a warning when it does
 * not apply: once per op, in the order of the GPU events, whatever evaluated it.
 */
static void eval_once(struct run *R, struct op_info *info, const struct kp_op *op)
{
	if (!info || info->warned)
		return;
	info->warned = 1;
	eval_op(info, R->t, op);
	if (info->cost.cls != MODEL_NONE && op->nslots == 0)
		diag_warn_add(
			&R->r->warn, "modelled ops without shapes", R->t->display,
			"op '%s' at byte %lld has no recorded shapes (record_shapes off?): FLOPs and bytes unknown",
			op->name, (long long)op->off);
	else if (info->cost.note)
		diag_warn_add(&R->r->warn, "ops whose model did not apply", R->t->display,
			      "op '%s' at byte %lld: %s", op->name, (long long)op->off,
			      info->cost.note);
	if (info->cost.assumed && info->cost.flops >= 0)
		diag_warn_add(&R->r->warn,
			      strcmp(info->cost.family, "attn") == 0
				      ? "attention ops without is_causal"
				      : "ops with an argument assumed",
			      R->t->display,
			      "op '%s' at byte %lld: %s", op->name, (long long)op->off,
			      info->cost.assumed);
}

/* Trace totals: GPU time, kernels and memory operations, ops, the span and busy intervals. */
static void count_totals(struct run *R, const struct kp_gpu *g, struct op_info *info,
			 const struct kp_op *op)
{
	struct kp_report *r = R->r;
	if (g->ts_ns < R->t_first)
		R->t_first = g->ts_ns;
	if (g->ts_ns + g->dur_ns > R->t_last)
		R->t_last = g->ts_ns + g->dur_ns;
	/* the GPU span is breakdown.c's window: events with a duration */
	if (g->dur_ns > 0 && g->ts_ns < R->g_first)
		R->g_first = g->ts_ns;
	if (g->dur_ns > 0 && g->ts_ns + g->dur_ns > R->g_last)
		R->g_last = g->ts_ns + g->dur_ns;
	R->iv[R->niv++] = (int32_t)(g - R->t->gpu);
	r->tot.gpu_time_ns += g->dur_ns;
	if (g->kind == GPU_KERNEL)
		r->tot.kernels++;
	else
		r->tot.memops++;
	if (!op)
		r->tot.unlinked++;
	else if (!info->counted) {
		info->counted = 1;
		r->tot.ops++;
	}
}

/* The op-shape key of an op: name, shapes, dtype, and the math precision when it differs. */
/* @info's op-shape fields */
static struct op_shape *shape_of(struct run *R, const struct op_info *info)
{
	return &R->osh[info - R->oi];
}

static const char *op_shape_key(struct run *R, struct op_info *info, const struct kp_op *op)
{
	struct op_shape *sh = shape_of(R, info);
	if (!sh->key) {
		char buf[1536];
		sh->shape = shape_text(&R->st, op);
		/* the math precision joins the key when it is not the dtype's own */
		const char *pn = info->cost.prec != PREC_NONE &&
						 info->cost.prec != dtype_prec(info->cost.dtype)
					 ? dtype_prec_name(info->cost.prec)
					 : NULL;
		int n = snprintf(buf, sizeof(buf), "%s %s %s%s%s", op->name, sh->shape,
				 dtype_name(info->cost.dtype), pn ? "/" : "", pn ? pn : "");
		size_t len = n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1;
		sh->key = strtab_intern(&R->st, buf, utf8_prefix(buf, len, len));
	}
	return sh->key;
}

/*
 * The functional signature of the work of @op (the op its kernels are counted under): that
 * of its outermost ancestor-or-self with one (opmodel_signature()), so the bmm and softmax
 * of a math-path attention carry their aten::scaled_dot_product_attention's.  The variant
 * names the backend: for attention the one its counted op says (math for bmm/softmax),
 * else the counted op's name.
 */
static void op_signature(struct run *R, struct op_info *info, const struct kp_op *op)
{
	const struct kp_trace *t = R->t;
	char buf[512], best[512];
	int found = 0;
	struct op_shape *sh = shape_of(R, info);
	sh->sig_done = 1;
	sh->sig_op = -1;
	for (int32_t p = (int32_t)(op - t->ops); p >= 0; p = t->ops[p].parent) {
		const struct kp_op *a = &t->ops[p];
		if (a->cls != MODEL_PRIMARY && !opmodel_sig_carrier(a->name))
			continue;
		struct kp_op_in in = { .name = a->name,
				       .nslots = a->nslots,
				       .slots = a->slots,
				       .kernel_flop = -1,
				       .kernel_num_gb = -1 };
		if (opmodel_signature(&in, buf, sizeof(buf)) == 0) {
			memcpy(best, buf, sizeof(buf));
			found = 1;
			sh->sig_op = p;
		}
	}
	if (!found)
		return;
	sh->sig = strtab_intern(&R->st, best, strlen(best));
	const char *v = op->name;
	if (!strncmp(best, "attention ", 10))
		v = opmodel_attn_variant(op->name);
	else if (!strncmp(v, "aten::", 6))
		v += 6;
	sh->variant = strtab_intern(&R->st, v, strlen(v));
}

/*
 * The part of @row that GPU events of one signature (and variant) put in it, created on
 * first sight: pointers compare, both are interned.
 */
static struct kp_sigpart *row_part(struct run *R, struct kp_row *row, struct op_info *info,
				   const struct kp_op *op)
{
	const char *sig = NULL, *var = NULL;
	if (info && op) {
		if (!shape_of(R, info)->sig_done)
			op_signature(R, info, op);
		sig = shape_of(R, info)->sig;
		var = shape_of(R, info)->variant;
	}
	for (int k = 0; k < row->nparts; k++)
		if (row->parts[k].sig == sig && row->parts[k].variant == var)
			return &row->parts[k];
	if (row->nparts == row->capparts) {
		/* a row holds few signatures: grow in the arena */
		int cap = row->capparts ? 2 * row->capparts : 2;
		struct kp_sigpart *np = arena_alloc(&R->r->arena, (size_t)cap * sizeof(*np));
		if (row->nparts)
			memcpy(np, row->parts, (size_t)row->nparts * sizeof(*np));
		row->parts = np;
		row->capparts = cap;
	}
	struct kp_sigpart *p = &row->parts[row->nparts++];
	memset(p, 0, sizeof(*p));
	p->sig = sig;
	p->variant = var;
	p->flops = -1;
	if (row->step_ns)
		p->step_ns = arena_zalloc(&R->r->arena, R->t->nsteps * sizeof(*p->step_ns));
	return p;
}

/* The grouping key of GPU event @i (an interned pointer) and the row's name. */
static const void *row_key(struct run *R, size_t i, const struct kp_gpu *g, struct op_info *info,
			   const struct kp_op *op, const char **name)
{
	const void *key;
	switch (R->o->group) {
	case GROUP_KERNEL:
		key = *name = g->name;
		break;
	case GROUP_OP_SHAPE:
		if (op) {
			key = op_shape_key(R, info, op);
			*name = op->name;
		} else {
			key = *name = unlinked_name;
		}
		break;
	case GROUP_ANNOT:
		key = *name = R->gannot[i] >= 0 ? R->t->annots[R->gannot[i]].name : no_annot_name;
		break;
	case GROUP_MODULE:
	case GROUP_SOURCE:
		key = *name = where_key(R->where, i, &R->wmark);
		if (R->o->folded)
			where_fold(R->where, i, *name);
		break;
	default:
		key = *name = op ? op->name : unlinked_name;
		break;
	}
	return key;
}

/* The index of the row of @key, created on first sight. */
static int32_t row_of(struct run *R, const void *key, const char *name, struct op_info *info,
		      const struct kp_op *op)
{
	struct kp_report *r = R->r;
	const struct kp_analyze_opts *o = R->o;
	int64_t *slot = rowmap_slot(&R->map, key);
	if (*slot >= 0)
		return (int32_t)*slot;
	if (r->nrows == R->caprows) {
		R->caprows = R->caprows ? R->caprows * 2 : 64;
		r->rows = xrealloc(r->rows, R->caprows * sizeof(*r->rows));
	}
	struct kp_row *nr = &r->rows[r->nrows];
	memset(nr, 0, sizeof(*nr));
	nr->name = name;
	nr->key = o->group == GROUP_OP_SHAPE ? (const char *)key : name;
	nr->op = op ? op->name : unlinked_name;
	if (o->group == GROUP_OP_SHAPE && op)
		nr->shape = shape_of(R, info)->shape;
	nr->dtype = info && info->cost.dtype != DT_NONE && info->cost.dtype != DT_UNKNOWN
			    ? dtype_name(info->cost.dtype)
			    : NULL;
	nr->prec = info && info->cost.prec != PREC_NONE ? dtype_prec_name(info->cost.prec) : NULL;
	nr->flops = nr->bytes = -1;
	nr->mflops = nr->mbytes = -1;
	if (o->step_series && R->t->nsteps && R->t->nsteps <= KP_STEP_SERIES_MAX)
		nr->step_ns = arena_zalloc(&r->arena, R->t->nsteps * sizeof(*nr->step_ns));
	if (!op)
		nr->flags |= ROW_UNLINKED;
	*slot = (int32_t)r->nrows++;
	return (int32_t)*slot;
}

/*
 * The call of its row that GPU event @i belongs to, in *@at: an index into row->durs, or -1
 * when the event starts a call (a kernel of a kernel row, an unlinked event, a span's or an
 * op call's first event).  Returns where the new call's index is to be kept, NULL nowhere.
 */
static int64_t *call_of(struct run *R, size_t i, int32_t slot, struct op_info *info,
			const struct kp_op *op, int64_t *at)
{
	*at = -1;
	if (R->where) {
		if (!R->wmark)
			return NULL;
		*at = *R->wmark;
		return R->wmark;
	}
	if (R->gannot) {
		if (R->gannot[i] < 0)
			return NULL;
		*at = R->acall[R->gannot[i]];
		return &R->acall[R->gannot[i]];
	}
	if (R->o->group == GROUP_KERNEL || !op)
		return NULL;
	/* an op call's work is in one row: its key is the op's (name, shapes) */
	if (info->row_seen == slot)
		*at = info->call_at;
	info->row_seen = slot;
	return &info->call_at;
}

/*
 * Time, per-step time, calls and per-call durations of GPU event @i in its row.  A call is a
 * kernel for kernel rows, an op instance for op rows, a span for annotations: its GPU time is
 * the sum of its events in the row, so Avg, Med, Min and Max are all per call.
 */
static void add_event(struct run *R, size_t i, struct kp_row *row, int32_t slot,
		      struct op_info *info, const struct kp_op *op)
{
	const struct kp_trace *t = R->t;
	const struct kp_gpu *g = &t->gpu[i];
	const char *opname = op ? op->name : unlinked_name;
	if (row->op != opname)
		row->mixed_op = 1;
	const char *dt = info && info->cost.dtype != DT_NONE && info->cost.dtype != DT_UNKNOWN
				 ? dtype_name(info->cost.dtype)
				 : NULL;
	if (row->dtype != dt)
		row->mixed_dtype = 1;

	row->kernels++;
	row->time_ns += g->dur_ns;
	/* the step of the launch (link.c); work outside every step is in time_ns only */
	if (row->step_ns && g->step >= 0 && (size_t)g->step < t->nsteps)
		row->step_ns[g->step] += g->dur_ns;

	int64_t at;
	int64_t *mark = call_of(R, i, slot, info, op, &at);
	if (at >= 0) {
		row->durs[at] += g->dur_ns;
		return;
	}
	if (row->ndurs == row->capdurs) {
		row->capdurs = row->capdurs ? row->capdurs * 2 : 8;
		row->durs = xrealloc(row->durs, row->capdurs * sizeof(*row->durs));
	}
	if (mark)
		*mark = row->ndurs;
	row->durs[row->ndurs++] = g->dur_ns;
	row->calls++;
}

static double event_clock(struct run *R, const struct kp_gpu *g)
{
	double clk = 0;
	if (R->r->clock_source == CLOCK_TRACE)
		clk = trace_gpux(R->t, g)->sm_clock_mhz > 0 ? trace_gpux(R->t, g)->sm_clock_mhz
							    : R->t->kprof_sm_clock_max_mhz;
	else if (R->r->clock_source == CLOCK_OPTION)
		clk = R->o->sm_clock_mhz;
	if (clk > 0 && g->kind == GPU_KERNEL) {
		R->clk_ns += clk * (double)g->dur_ns;
		R->clk_w += g->dur_ns;
	}
	return clk;
}

/* Model coverage of one event: modelled FLOPs, bytes only, or no model (and why). */
static void count_coverage(struct run *R, size_t i, struct op_info *info, const struct kp_op *op)
{
	struct kp_report *r = R->r;
	const struct kp_gpu *g = &R->t->gpu[i];
	enum kp_nomodel why = NOMODEL_CUSTOM;
	int cov = coverage(info, op, g, trace_gpux(R->t, g), R->role[i], &why);
	if (cov == 0)
		r->tot.flops_ns += g->dur_ns;
	else if (cov == 1)
		r->tot.bytes_only_ns += g->dur_ns;
	else {
		r->tot.unmodelled_ns += g->dur_ns;
		/* distinct kernel names per reason (names are interned) */
		int64_t *seen = rowmap_slot(&R->nomodel, g->name);
		if (*seen < 0 || !(*seen & (1 << why))) {
			*seen = (*seen < 0 ? 0 : *seen) | 1 << why;
			r->tot.nomodel_kernels[why]++;
		}
	}
}

/* Adds @x to a sum that is -1 while unknown. */
static void add_known(int64_t *sum, int64_t x)
{
	*sum = (*sum < 0 ? 0 : *sum) + x;
}

/* One event's FLOPs and bytes as attribute() settles them. */
struct share {
	double f, b;     /* this event's share, -1 unknown */
	int whole;       /* op row: the op's figures are added once, by add_row_figures() */
	int meas, measf; /* a figure / the FLOPs of this kernel are measured counters */
};

/* Inductor's per-kernel args, else the op's model (a share, or the whole op once). */
static void modelled_share(struct run *R, size_t i, const struct op_info *info, struct share *s)
{
	const struct kp_gpu *g = &R->t->gpu[i];
	const struct kp_gpux *gx = trace_gpux(R->t, g);
	int kernel = g->kind == GPU_KERNEL;
	double sf = -1, sb = -1;
	*s = (struct share){ .f = -1, .b = -1 };
	if (kernel && info && R->o->group == GROUP_KERNEL)
		kernel_share(info, g, R->role[i], &sf, &sb);
	if (kernel && info && gx->kernel_flop >= 0)
		s->f = (double)gx->kernel_flop;
	else if (kernel && info && info->cost.flops >= 0 && info->kernel_ns > 0)
		s->f = R->o->group == GROUP_KERNEL ? sf : (s->whole = 1, 0);
	if (kernel && gx->kernel_num_gb >= 0)
		s->b = gx->kernel_num_gb * 1e9;
	else if (!kernel && gx->bytes >= 0)
		s->b = (double)gx->bytes;
	else if (kernel && info && info->cost.bytes >= 0 && info->kernel_ns > 0)
		s->b = R->o->group == GROUP_KERNEL ? sb : (s->whole = 1, 0);
}

/*
 * kprof capture --metrics: the measured counters of a kernel, kept apart in its row; they
 * stand in where nothing else gave a figure.
 */
static void measured_share(struct run *R, const struct kp_gpu *g, struct kp_row *row,
			   const struct op_info *info, struct share *s)
{
	const struct kp_gpux *gx = trace_gpux(R->t, g);
	if (gx->mflops >= 0) {
		add_known(&row->mflops, gx->mflops);
		row->mflops_ns += g->dur_ns;
		if (s->f < 0 && !s->whole && !(info && info->cost.flops >= 0)) {
			s->f = (double)gx->mflops;
			s->meas = s->measf = 1;
		}
	}
	if (gx->mbytes >= 0) {
		add_known(&row->mbytes, gx->mbytes);
		row->mbytes_ns += g->dur_ns;
		if (s->b < 0 && !s->whole && !(info && info->cost.bytes >= 0)) {
			s->b = (double)gx->mbytes;
			s->meas = 1;
		}
	}
	if (s->meas) {
		row->flags |= ROW_MEASURED;
		R->r->tot.measured++;
	}
}

/* The row's FLOPs and bytes: the whole op's once per op call (op rows), else the share. */
static void add_row_figures(struct kp_row *row, int32_t slot, struct op_info *info,
			    const struct kp_gpux *gx, const struct share *s)
{
	if (s->whole && info->row_added != slot) {
		info->row_added = slot;
		if (info->cost.flops >= 0 && gx->kernel_flop < 0)
			add_known(&row->flops, info->cost.flops);
		if (info->cost.bytes >= 0 && gx->kernel_num_gb < 0)
			add_known(&row->bytes, info->cost.bytes);
	}
	if (s->f >= 0)
		add_known(&row->flops, (int64_t)llround(s->f));
	if (s->b >= 0)
		add_known(&row->bytes, (int64_t)llround(s->b));
}

/* The report's FLOPs and bytes: each op call once, exactly, whatever the grouping. */
static void add_totals(struct run *R, const struct kp_gpu *g, struct op_info *info,
		       const struct share *s)
{
	const struct kp_gpux *gx = trace_gpux(R->t, g);
	int kernel = g->kind == GPU_KERNEL;
	int modelled = kernel && info && info->kernel_ns > 0;
	if (kernel && info && !info->total_added) {
		info->total_added = 1;
		if (info->cost.flops >= 0 && info->kernel_ns > 0)
			add_known(&R->tot_flops, info->cost.flops);
		if (info->cost.bytes >= 0 && info->kernel_ns > 0)
			add_known(&R->tot_bytes, info->cost.bytes);
	}
	if (kernel && gx->kernel_flop >= 0)
		add_known(&R->tot_flops, gx->kernel_flop);
	else if (s->measf)
		add_known(&R->tot_flops, gx->mflops);
	if (s->b >= 0 && !(modelled && info->cost.bytes >= 0 && gx->kernel_num_gb < 0))
		add_known(&R->tot_bytes, (int64_t)llround(s->b));
}

/*
 * The peaks the row's FLOPs and bytes are held against: each event against its own (also
 * into @ev, the event's cost for kprof augment, when asked for).
 */
static void add_peaks(struct run *R, const struct kp_gpu *g, struct kp_row *row,
		      const struct op_info *info, double clk, const struct share *s,
		      struct kp_event_cost *ev)
{
	struct kp_report *r = R->r;
	if (s->f >= 0 && r->dev) {
		enum kp_prec p = info && info->cost.prec != PREC_NONE ? info->cost.prec : PREC_NONE;
		double pk = p != PREC_NONE ? devdb_peak_flops(r->dev, p, clk) : 0;
		if (ev && pk > 0) {
			ev->peak_flops = pk;
			ev->prec = dtype_prec_name(p);
		}
		if (pk > 0) {
			row->peak_flop_ns += pk * (double)g->dur_ns;
			row->flops_time_ns += g->dur_ns;
		}
	}
	int path = kernrole_mempath(g->name, g->kind == GPU_MEMCPY);
	if (g->kind != GPU_KERNEL)
		r->mempaths |= 1u << path;
	if (s->b >= 0 && r->dev) {
		/* each event against the peak of the path it crossed */
		double bw = devdb_path_bw(r->dev, (enum kp_mempath)path);
		if (ev)
			ev->peak_bw = bw;
		row->off_dram |= path != MEMPATH_DRAM;
		if (bw > 0) {
			row->peak_bw_ns += bw * (double)g->dur_ns;
			row->bytes_time_ns += g->dur_ns;
		}
	}
}

/*
 * FLOPs and bytes of GPU event @i, into its row and the totals, with the peaks they are
 * held against.  Inductor's per-kernel args win; else the op's model: kernel rows take a
 * duration-weighted share, op rows add the op's figures once per op call (`whole`).
 * memcpy/memset carry their own bytes.
 */
static void attribute(struct run *R, size_t i, struct kp_row *row, int32_t slot,
		      struct op_info *info, double clk)
{
	const struct kp_gpu *g = &R->t->gpu[i];
	struct share s;
	modelled_share(R, i, info, &s);
	if (g->kind == GPU_KERNEL) {
		row->kern_ns += g->dur_ns;
		measured_share(R, g, row, info, &s);
	}
	add_row_figures(row, slot, info, trace_gpux(R->t, g), &s);
	add_totals(R, g, info, &s);
	/* kprof augment: the event's own figures, the ones its kernel row sums (llround) */
	struct kp_event_cost *ev = R->o->events ? &R->o->events[i] : NULL;
	if (ev)
		*ev = (struct kp_event_cost){ .flops = s.f, .bytes = s.b };
	add_peaks(R, g, row, info, clk, &s, ev);
}

/* One GPU event: totals, its row (grouping), time and calls, FLOPs/bytes, coverage. */
static void group_event(struct run *R, size_t i)
{
	const struct kp_trace *t = R->t;
	const struct kp_gpu *g = &t->gpu[i];
	struct op_info *info = g->op >= 0 ? &R->oi[R->oidx[g->op]] : NULL;
	const struct kp_op *op = g->op >= 0 ? &t->ops[g->op] : NULL;
	eval_once(R, info, op);
	count_totals(R, g, info, op);
	const char *name;
	const void *key = row_key(R, i, g, info, op, &name);
	int32_t slot = row_of(R, key, name, info, op);
	struct kp_row *row = &R->r->rows[slot];
	/* op-shape: what this event adds to the row goes to its signature's part too */
	int64_t t0 = row->time_ns, c0 = row->calls, f0 = row->flops < 0 ? 0 : row->flops;
	double p0 = row->peak_flop_ns;
	add_event(R, i, row, slot, info, op);
	double clk = event_clock(R, g);
	attribute(R, i, row, slot, info, clk);
	if (R->o->group == GROUP_OP_SHAPE) {
		struct kp_sigpart *p = row_part(R, row, info, op);
		p->time_ns += row->time_ns - t0;
		p->calls += row->calls - c0;
		if (row->flops >= 0)
			p->flops = (p->flops < 0 ? 0 : p->flops) + row->flops - f0;
		p->peak_flop_ns += row->peak_flop_ns - p0;
		if (p->step_ns && g->step >= 0 && (size_t)g->step < t->nsteps)
			p->step_ns[g->step] += g->dur_ns;
		if (info && shape_of(R, info)->sig_op >= 0) {
			/* sig_calls: distinct (signature op, part) pairs */
			struct {
				const void *part;
				int64_t op;
			} k = { p, shape_of(R, info)->sig_op };
			int created;
			struct kp_hmap_entry *e = hmap_put_str(&R->sigseen, &k, sizeof(k),
							       &created);
			if (created) {
				void *kc = arena_alloc(&R->r->arena, sizeof(k));
				memcpy(kc, &k, sizeof(k));
				e->key.ptr = kc;
				p->sig_calls++;
			}
		}
	}
	count_coverage(R, i, info, op);
}

/* First start and last end of the ops and launches of one part (integers: any order). */
struct span {
	const struct kp_trace *t;
	size_t lo, hi; /* [0, nops) are ops, [nops, nops + nlaunches) launches */
	int64_t first, last;
};

#define SPAN_PARTS 64

static void span_part(void *arg, size_t k)
{
	struct span *s = (struct span *)arg + k;
	const struct kp_trace *t = s->t;
	s->first = INT64_MAX;
	s->last = INT64_MIN;
	for (size_t i = s->lo; i < s->hi; i++) {
		int64_t ts = i < t->nops ? t->ops[i].ts_ns : t->launches[i - t->nops].ts_ns;
		int64_t dur = i < t->nops ? t->ops[i].dur_ns : t->launches[i - t->nops].dur_ns;
		s->first = ts < s->first ? ts : s->first;
		s->last = ts + dur > s->last ? ts + dur : s->last;
	}
}

/* The span of ops and launches in parts (as many as the jobs, up to SPAN_PARTS); how many. */
static size_t span_parts(const struct kp_trace *t, struct span *sp)
{
	size_t n = t->nops + t->nlaunches;
	size_t np = n / 16384 + 1;
	np = np < (size_t)t->jobs ? np : (size_t)(t->jobs > 1 ? t->jobs : 1);
	np = np < SPAN_PARTS ? np : SPAN_PARTS;
	for (size_t k = 0; k < np; k++)
		sp[k] = (struct span){ t, n * k / np, n * (k + 1) / np, 0, 0 };
	par_run(t->jobs, np, span_part, sp);
	return np;
}

/*
 * The trace span over every kept event (GPU work, ops, launches), the GPU span over GPU work;
 * busy time as the union of GPU intervals.
 */
static void busy_span(struct run *R)
{
	const struct kp_trace *t = R->t;
	struct kp_report *r = R->r;
	struct span sp[SPAN_PARTS];
	size_t nparts = span_parts(t, sp);
	int64_t t_first = R->t_first, t_last = R->t_last;
	for (size_t k = 0; k < nparts; k++) {
		t_first = sp[k].first < t_first ? sp[k].first : t_first;
		t_last = sp[k].last > t_last ? sp[k].last : t_last;
	}
	r->tot.trace_span_ns = t_last > t_first ? t_last - t_first : 0;
	r->tot.gpu_span_ns = R->g_last > R->g_first ? R->g_last - R->g_first : 0;
	par_sort_i32(t->jobs, R->iv, R->niv, cmp_start, (void *)t->gpu);
	int64_t cur_s = 0, cur_e = INT64_MIN;
	for (size_t i = 0; i < R->niv; i++) {
		const struct kp_gpu *g = &t->gpu[R->iv[i]];
		int64_t s = g->ts_ns, e = g->ts_ns + g->dur_ns;
		if (s > cur_e) {
			if (cur_e > INT64_MIN)
				r->tot.gpu_busy_ns += cur_e - cur_s;
			cur_s = s;
			cur_e = e;
		} else if (e > cur_e) {
			cur_e = e;
		}
	}
	if (cur_e > INT64_MIN)
		r->tot.gpu_busy_ns += cur_e - cur_s;
	r->tot.steps = (int64_t)t->nsteps;
	if (r->clock_source == CLOCK_TRACE && R->clk_w > 0)
		r->sm_clock_mhz = R->clk_ns / (double)R->clk_w;
}

/*
 * The @k-th smallest of v[0..n) (k < n), v reordered so that v[0..k) <= v[k] <= v[k+1..n):
 * quickselect, median-of-three pivots and three-way partitions (runs of equal durations are
 * common), linear on average where the sort it replaced took n log n.
 */
static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int64_t select_i64(int64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n; /* the k-th is in v[lo..hi) */
	/*
	 * Median-of-three rounds, linear on real durations; an order built against them (a
	 * hostile trace) keeps a round from shrinking the range, so after 2 log2(n) + 8 rounds
	 * what is left is sorted: n log n at worst, as the sort this replaced.
	 */
	int rounds = 8;
	for (size_t m = n; m > 1; m >>= 1)
		rounds += 2;
	while (hi - lo > 1) {
		if (rounds-- == 0) {
			qsort(v + lo, hi - lo, sizeof(*v), cmp_i64);
			return v[k];
		}
		int64_t a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi - 1];
		int64_t p = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
		size_t lt = lo, i = lo, gt = hi; /* < p: [lo, lt), == p: [lt, i), > p: [gt, hi) */
		while (i < gt) {
			int64_t x = v[i];
			if (x < p) {
				v[i++] = v[lt];
				v[lt++] = x;
			} else if (x > p) {
				v[i] = v[--gt];
				v[gt] = x;
			} else {
				i++;
			}
		}
		if (k < lt)
			hi = lt;
		else if (k >= gt)
			lo = gt;
		else
			return p;
	}
	return v[k];
}

/* A row's shortest, median (the mean of the two middle ones of an even count) and longest
 * of its @n durations, in linear time; @d reordered. */
static void durs_stats(int64_t *d, size_t n, int64_t *min, int64_t *med, int64_t *max)
{
	*min = *med = *max = 0;
	if (!n)
		return;
	int64_t lo = d[0], hi = d[0];
	for (size_t i = 1; i < n; i++) {
		lo = d[i] < lo ? d[i] : lo;
		hi = d[i] > hi ? d[i] : hi;
	}
	*min = lo;
	*max = hi;
	int64_t m = select_i64(d, n, n / 2);
	if (n % 2 == 0) { /* the largest of d[0..n/2): the lower middle one */
		int64_t m0 = d[0];
		for (size_t i = 1; i < n / 2; i++)
			m0 = d[i] > m0 ? d[i] : m0;
		m = (m0 + m) / 2;
	}
	*med = m;
}

/* Columns computed from a row's sums: median, shares, rates, % of peak, bound, flags. */
static void derive_columns(struct kp_report *r, struct kp_row *row)
{
	if (row->mixed_op)
		row->op = NULL;
	if (row->mixed_dtype)
		row->dtype = NULL;
	durs_stats(row->durs, row->ndurs, &row->min_ns, &row->med_ns, &row->max_ns);
	free(row->durs);
	row->durs = NULL;
	row->time_pct = r->tot.gpu_time_ns > 0 ? 100.0 * row->time_ns / r->tot.gpu_time_ns : 0;
	row->flops_per_s = row->flops >= 0 && row->time_ns > 0 ? row->flops * 1e9 / row->time_ns
							       : -1;
	row->bytes_per_s = row->bytes >= 0 && row->time_ns > 0 ? row->bytes * 1e9 / row->time_ns
							       : -1;
	row->pct_peak_flops = row->flops >= 0 && row->peak_flop_ns > 0
				      ? 100.0 * row->flops * 1e9 / row->peak_flop_ns
				      : -1;
	row->pct_peak_bw = row->bytes >= 0 && row->peak_bw_ns > 0
				   ? 100.0 * row->bytes * 1e9 / row->peak_bw_ns
				   : -1;
	row->intensity = row->flops >= 0 && row->bytes > 0 ? (double)row->flops / row->bytes : -1;
	row->mflops_per_s = row->mflops >= 0 && row->mflops_ns > 0
				    ? row->mflops * 1e9 / row->mflops_ns
				    : -1;
	row->mbytes_per_s = row->mbytes >= 0 && row->mbytes_ns > 0
				    ? row->mbytes * 1e9 / row->mbytes_ns
				    : -1;
	/* measured / modelled over the same kernels: only when every kernel was measured */
	int allm = row->mflops_ns == row->kern_ns, allb = row->mbytes_ns == row->kern_ns;
	row->mratio_flops = allm && row->mflops >= 0 && row->flops > 0 &&
					    !(row->flags & ROW_MEASURED)
				    ? (double)row->mflops / row->flops
				    : -1;
	row->mratio_bytes = allb && row->mbytes >= 0 && row->bytes > 0 &&
					    !(row->flags & ROW_MEASURED)
				    ? (double)row->mbytes / row->bytes
				    : -1;
	if (row->intensity >= 0 && r->dev && row->prec) {
		double pk = devdb_peak_flops(r->dev, dtype_prec_parse(row->prec), r->sm_clock_mhz);
		double bw = devdb_peak_bw(r->dev, 0);
		if (pk > 0 && bw > 0)
			row->bound = row->intensity >= pk / bw ? "compute" : "memory";
	}
	if (row->pct_peak_flops > 100 || row->pct_peak_bw > 100)
		row->flags |= ROW_OVER_PEAK;
	/* over the DRAM peak on bytes alone, with each kernel's modelled bytes (reads + writes,
	   at least its working set) within L2: the data can come from L2, written there by the
	   kernel before (issue 23 item 8) */
	if (row->pct_peak_bw > 100 && row->pct_peak_flops <= 100 && !row->off_dram && r->dev &&
	    r->dev->l2_bytes > 0 && row->kernels > 0 &&
	    (double)row->bytes / (double)row->kernels <= r->dev->l2_bytes)
		row->flags |= ROW_FITS_L2;
	else if (row->pct_peak_flops >= 90 || row->pct_peak_bw >= 90)
		row->flags |= ROW_VERIFY;
	if (!isfinite(row->flops_per_s) || !isfinite(row->bytes_per_s))
		row->flops_per_s = row->bytes_per_s = -1;
}

/* Task k of derive_rows: row k's columns (rows are independent once every event is in). */
static void derive_row(void *arg, size_t k)
{
	struct kp_report *r = arg;
	derive_columns(r, &r->rows[k]);
}

static void device_warnings(const struct kp_trace *t, struct kp_report *r)
{
	if (r->device_warning)
		diag_warn_add(&r->warn, "unknown devices", NULL, "%s", r->device_warning);
	else if (!r->dev && r->device_name)
		diag_warn_add(
			&r->warn, "unknown devices", NULL,
			"device '%s' is not in the device table; %% of peak columns are empty (add an entry to device_db/ or pass --device-db FILE, see kprof devices)",
			r->device_name);
	else if (!r->device_name && t->ngpu)
		diag_warn_add(
			&r->warn, "unknown devices", NULL,
			"the trace names no device; %% of peak columns are empty (pass --device NAME)");
}

int analyze_run(const struct kp_trace *t, const struct kp_analyze_opts *o, struct kp_report *r)
{
	memset(r, 0, sizeof(*r));
	arena_init(&r->arena);
	r->warn.all = o->warn_all;
	r->trace = t;
	r->group = o->group;
	struct run R = { .t = t,
			 .o = o,
			 .r = r,
			 .tot_flops = -1,
			 .tot_bytes = -1,
			 .t_first = INT64_MAX,
			 .t_last = INT64_MIN,
			 .g_first = INT64_MAX,
			 .g_last = INT64_MIN };
	strtab_init(&R.st, &r->arena);
	hmap_init(&R.sigseen, HMAP_STR);
	setup_device(t, o, r);
	R.gannot = o->group == GROUP_ANNOT ? gpu_annotations(t) : NULL;
	R.acall = R.gannot ? xmalloc((t->nannots + 1) * sizeof(*R.acall)) : NULL;
	if (R.acall)
		memset(R.acall, 0xff, (t->nannots + 1) * sizeof(*R.acall));

	struct kp_where where;
	if (o->group == GROUP_MODULE || o->group == GROUP_SOURCE) {
		where_init(&where, t, o->group, o->depth, &R.st);
		R.where = &where;
		if (!t->npy && t->ngpu)
			diag_warn_add(&r->warn, "traces without python_function events", t->display,
				      "no python_function events: all GPU time is in %s (record with torch.profiler.profile(with_stack=True, with_modules=True))",
				      o->group == GROUP_MODULE ? WHERE_NO_MODULE : WHERE_NO_SOURCE);
	}
	op_state(&R);
	kernel_roles(&R);
	par_for(t->jobs, t->nops, 16384, eval_range, &R);
	R.iv = xmalloc((t->ngpu + 1) * sizeof(*R.iv));
	for (size_t i = 0; i < t->ngpu; i++)
		group_event(&R, i);
	r->tot.flops = R.tot_flops;
	r->tot.bytes = R.tot_bytes;
	busy_span(&R);
	par_run(t->jobs, r->nrows, derive_row, r);
	if (R.where) {
		if (o->folded)
			where_folds(R.where, r);
		where_free(R.where);
	}

	free(R.iv);
	hmap_free(&R.sigseen);
	hmap_free(&R.map);
	hmap_free(&R.nomodel);
	measured_rows(t, r);
	free(R.oi);
	free(R.osh);
	free(R.oidx);
	free(R.gannot);
	free(R.acall);
	free(R.role);
	strtab_free(&R.st);
	device_warnings(t, r);
	return 0;
}

/* ---- selection ---- */

void analyze_select(struct kp_report *r, long top, double min_pct)
{
	/* rows past --top or under --min-pct fold into one "(others)" row (stable) */
	struct kp_row *tmp = xmalloc((r->nrows + 1) * sizeof(*tmp));
	size_t keep = 0, nfold = 0;
	for (size_t i = 0; i < r->nrows; i++)
		if ((top <= 0 || keep < (size_t)top) && r->rows[i].time_pct >= min_pct)
			tmp[keep++] = r->rows[i];
	for (size_t i = 0, k = 0; i < r->nrows; i++) {
		if (k < keep && r->rows[i].key == tmp[k].key && r->rows[i].name == tmp[k].name) {
			k++;
			continue;
		}
		tmp[keep + nfold++] = r->rows[i];
	}
	if (r->nrows)
		memcpy(r->rows, tmp, r->nrows * sizeof(*tmp));
	free(tmp);
	if (keep == r->nrows)
		return;
	struct kp_row o;
	memset(&o, 0, sizeof(o));
	o.flags = ROW_OTHERS;
	o.flops = o.bytes = o.mflops = o.mbytes = -1;
	o.mflops_per_s = o.mbytes_per_s = o.mratio_flops = o.mratio_bytes = -1;
	o.flops_per_s = o.bytes_per_s = o.pct_peak_flops = o.pct_peak_bw = o.intensity = -1;
	o.min_ns = INT64_MAX;
	for (size_t i = keep; i < r->nrows; i++) {
		const struct kp_row *x = &r->rows[i];
		o.calls += x->calls;
		o.kernels += x->kernels;
		o.time_ns += x->time_ns;
		o.time_pct += x->time_pct;
		o.nfolded++;
		if (x->min_ns < o.min_ns)
			o.min_ns = x->min_ns;
		if (x->max_ns > o.max_ns)
			o.max_ns = x->max_ns;
	}
	if (o.min_ns == INT64_MAX)
		o.min_ns = 0;
	char buf[96];
	snprintf(buf, sizeof(buf), "(others: %lld %s)", (long long)o.nfolded,
		 r->group == GROUP_KERNEL  ? units_plural(o.nfolded, "kernel", "kernels")
		 : r->group == GROUP_ANNOT ? units_plural(o.nfolded, "annotation", "annotations")
		 : r->group == GROUP_MODULE ? units_plural(o.nfolded, "module", "modules")
		 : r->group == GROUP_SOURCE ? units_plural(o.nfolded, "source line", "source lines")
					   : units_plural(o.nfolded, "op", "ops"));
	o.name = o.key = arena_strdup(&r->arena, buf);
	r->rows[keep] = o;
	r->nrows = keep + 1;
}

void analyze_free(struct kp_report *r)
{
	free(r->rows);
	free(r->mrows);
	diag_warn_free(&r->warn);
	arena_free(&r->arena);
	memset(r, 0, sizeof(*r));
}
