/*
 * diff.c — pair the analysis rows of two traces by key -> base/new/delta/ratio, summary, gate;
 * diff_run(): the whole of kprof diff between its options and its document.
 */
#include "kprof/diff.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/devdb.h"
#include "kprof/hmap.h"
#include "kprof/pipeline.h"
#include "kprof/trace.h"
#include "kprof/units.h"

/* a change exactly at a limit (2% of 10000 ns) is within it, whatever the rounding of ratio */
#define PCT_EPS 1e-9

/* ---- keys ---- */

static int is_ident(int c)
{
	return isalnum(c) || c == '_';
}

/* spaces next to these carry no meaning in a demangled name: "a<b<int> >" == "a<b<int>>" */
static int spaceless(int c)
{
	return c == '<' || c == '>' || c == ',' || c == '*' || c == '&';
}

/* "void k<T>(int *, float)" -> the length of "k<T>": the arguments follow from the template */
static size_t drop_signature(const char *s, size_t n)
{
	if (!n || s[n - 1] != ')')
		return n;
	int depth = 0;
	for (size_t i = n; i-- > 0;) {
		if (s[i] == ')')
			depth++;
		else if (s[i] == '(' && --depth == 0)
			return i > 0 ? i : n;
	}
	return n;
}

/* A run of spaces at s[i] inside template arguments: one space, or none next to "<>,*&" */
static size_t put_spaces(const char *s, size_t n, size_t i, char *out, size_t *k)
{
	size_t j = i;
	while (j < n && s[j] == ' ')
		j++;
	int prev = *k ? (unsigned char)out[*k - 1] : 0;
	int next = j < n ? (unsigned char)s[j] : 0;
	if (prev && next && prev != ' ' && !spaceless(prev) && !spaceless(next))
		out[(*k)++] = ' ';
	return j - 1;
}

/* An integer literal at s[i]: "1ul" -> "1" (compilers differ in the suffix they print) */
static size_t put_literal(const char *s, size_t n, size_t i, char *out, size_t *k)
{
	size_t j = i;
	while (j < n && isdigit((unsigned char)s[j]))
		j++;
	size_t m = j;
	while (m < n && strchr("uUlL", s[m]))
		m++;
	memcpy(out + *k, s + i, j - i);
	*k += j - i;
	return (m > j && (m == n || !is_ident((unsigned char)s[m])) ? m : j) - 1;
}

/* Copy s[0..n) to @out, normalizing spacing and literal suffixes inside template arguments */
static size_t normalize_templates(const char *s, size_t n, char *out)
{
	size_t k = 0;
	int depth = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '<')
			depth++;
		else if (c == '>' && depth > 0)
			depth--;
		if (depth == 0 && c != '>')
			out[k++] = (char)c;
		else if (c == ' ')
			i = put_spaces(s, n, i, out, &k);
		else if (c == ',') {
			out[k++] = ',';
			out[k++] = ' ';
		} else if (isdigit(c) && (k == 0 || !is_ident((unsigned char)out[k - 1])))
			i = put_literal(s, n, i, out, &k);
		else
			out[k++] = (char)c;
	}
	while (k && out[k - 1] == ' ')
		k--;
	out[k] = '\0';
	return k;
}

/* Inductor numbers the kernels of a graph: triton_poi_fused_add_0, ..._1 */
static void drop_triton_index(char *out, size_t k)
{
	if (strncmp(out, "triton_", 7))
		return;
	size_t e = k;
	while (e > 7 && isdigit((unsigned char)out[e - 1]))
		e--;
	if (e < k && e > 8 && out[e - 1] == '_')
		out[e - 1] = '\0';
}

const char *diff_normalize_kernel(struct kp_arena *a, const char *name)
{
	const char *s = name;
	size_t n = strlen(s);
	if (!strncmp(s, "void ", 5)) {
		s += 5;
		n = drop_signature(s, n - 5);
	}
	char *out = arena_alloc(a, 2 * n + 1);
	size_t k = normalize_templates(s, n, out);
	drop_triton_index(out, k);
	return out;
}

/*
 * Ops whose out= variant (what Inductor's extern kernels call) records one more tensor slot
 * than the functional op: the output, last.  Tensor slots only (scalars such as beta and
 * alpha never show in the shape text).  Documented in kprof-diff(1), OUT= VARIANTS.
 */
static const struct {
	const char *op;
	int inputs; /* tensor inputs of the functional op */
} out_ops[] = {
	{ "aten::mm", 2 },      { "aten::bmm", 2 },    { "aten::addmm", 3 },
	{ "aten::baddbmm", 3 }, { "aten::addbmm", 3 }, { "aten::addmv", 3 },
	{ "aten::mv", 2 },      { "aten::dot", 2 },    { "aten::_int_mm", 2 },
};

/* tensor slots of a shape text "[a]x{[b],[c]}x[d]": separators at bracket depth 0 */
static int shape_slots(const char *s, size_t *last)
{
	int n = *s ? 1 : 0, depth = 0;
	for (const char *p = s; *p; p++) {
		if (*p == '[' || *p == '{')
			depth++;
		else if ((*p == ']' || *p == '}') && depth > 0)
			depth--;
		else if (*p == 'x' && depth == 0) {
			n++;
			*last = (size_t)(p - s);
		}
	}
	return n;
}

const char *diff_functional_shape(struct kp_arena *a, const char *op, const char *shape)
{
	if (!op || !shape)
		return shape;
	for (size_t i = 0; i < sizeof(out_ops) / sizeof(out_ops[0]); i++) {
		if (strcmp(op, out_ops[i].op))
			continue;
		size_t cut = 0;
		if (shape_slots(shape, &cut) == out_ops[i].inputs + 1)
			return arena_strndup(a, shape, cut);
		break;
	}
	return shape;
}

/* "bf16", or "fp32/tf32" when the math precision is not the dtype's own (as analyze keys) */
static const char *dtype_label(struct kp_arena *a, const struct kp_row *row)
{
	if (!row->dtype)
		return NULL;
	/* the precision names the dtype's family: "fp8" for fp8e4m3, "bf16" for bf16 */
	size_t ld = strlen(row->dtype), lp = row->prec ? strlen(row->prec) : 0;
	if (!lp || !strncmp(row->dtype, row->prec, lp))
		return row->dtype;
	char *s = arena_alloc(a, ld + lp + 2);
	memcpy(s, row->dtype, ld);
	s[ld] = '/';
	memcpy(s + ld + 1, row->prec, lp + 1);
	return s;
}

static const char *join3(struct kp_arena *a, const char *x, const char *sep, const char *y)
{
	size_t lx = strlen(x), ls = strlen(sep), ly = strlen(y);
	char *k = arena_alloc(a, lx + ls + ly + 1);
	memcpy(k, x, lx);
	memcpy(k + lx, sep, ls);
	memcpy(k + lx + ls, y, ly + 1);
	return k;
}

const char *diff_row_key(struct kp_arena *a, const struct kp_row *row, const struct kp_diff_opts *o,
			 const char **group)
{
	const char *k;
	switch (o->key) {
	case GROUP_KERNEL:
		k = o->full_names ? row->name : diff_normalize_kernel(a, row->name);
		break;
	case GROUP_OP_SHAPE: {
		/* "aten::mm [8192,8192]x[8192,8192]" + " bf16": exact pairs first, then across dtypes */
		const char *shape = diff_functional_shape(a, row->name, row->shape);
		const char *g = shape && *shape ? join3(a, row->name, " ", shape) : row->name;
		const char *dt = dtype_label(a, row);
		if (group)
			*group = g;
		return dt ? join3(a, g, " ", dt) : g;
	}
	default:
		k = row->name;
		break;
	}
	if (group)
		*group = k;
	return k;
}

/* ---- join ---- */

struct side_acc {
	int64_t raw_ns, flops;
	double calls, peak_flop_ns;
	const char *dtype;
	int64_t *steps; /* per-step series (diff arena), NULL without */
	int has, mixed;
	/* op-shape: the rows' parts by functional signature (kp_row.parts), diff arena */
	const struct kp_sigpart **parts;
	uint8_t *used; /* parts paired across backends */
	size_t nparts, capparts;
	const char *variant; /* pair_backends(): the variant of a merged side */
};

struct join_row {
	const char *key, *group, *name, *label; /* label: the exact key's dtype, NULL none */
	struct side_acc side[2];
	int dead; /* merged into another row (cross-dtype or -backend pairing) */
	int cross;
	int cross_backend;
};

struct join {
	struct kp_hmap map; /* HMAP_STR: key -> index into jr */
	struct join_row *jr;
	size_t n, cap;
};

static void acc_row(struct kp_arena *a, struct side_acc *s, const struct kp_row *r, size_t nsteps)
{
	s->raw_ns += r->time_ns;
	s->calls += (double)r->calls;
	if (r->flops >= 0)
		s->flops = (s->flops < 0 ? 0 : s->flops) + r->flops;
	s->peak_flop_ns += r->peak_flop_ns;
	if (!s->has)
		s->dtype = r->dtype;
	else if (s->dtype != r->dtype && (!s->dtype || !r->dtype || strcmp(s->dtype, r->dtype)))
		s->mixed = 1;
	for (int k = 0; k < r->nparts; k++) {
		if (s->nparts == s->capparts) {
			size_t cap = s->capparts ? 2 * s->capparts : 4;
			const struct kp_sigpart **np = arena_alloc(a, cap * sizeof(*np));
			if (s->nparts)
				memcpy(np, s->parts, s->nparts * sizeof(*np));
			s->parts = np;
			s->capparts = cap;
		}
		s->parts[s->nparts++] = &r->parts[k];
	}
	s->has = 1;
	if (nsteps && r->step_ns) {
		if (!s->steps)
			s->steps = arena_zalloc(a, nsteps * sizeof(*s->steps));
		for (size_t i = 0; i < nsteps; i++)
			s->steps[i] += r->step_ns[i];
	}
}

/* a new zeroed row at the end of @j */
static struct join_row *join_append(struct join *j)
{
	j->jr = xgrow(j->jr, j->n, &j->cap, 64, sizeof(*j->jr));
	struct join_row *r = &j->jr[j->n++];
	memset(r, 0, sizeof(*r));
	return r;
}

static struct join_row *join_find(struct join *j, const char *key)
{
	int created;
	struct kp_hmap_entry *e = hmap_put_str(&j->map, key, strlen(key), &created);
	if (!created)
		return &j->jr[e->val.i];
	e->val.i = (int64_t)j->n;
	struct join_row *r = join_append(j);
	r->key = key;
	r->side[0].flops = r->side[1].flops = -1;
	return r;
}

static void add_side(struct kp_diff *d, struct join *j, const struct kp_row *rows, size_t n,
		     int side, size_t nsteps, size_t *nkeys)
{
	for (size_t i = 0; i < n; i++) {
		const char *group;
		const char *key = diff_row_key(&d->arena, &rows[i], &d->opts, &group);
		struct join_row *r = join_find(j, key);
		if (!r->group) {
			r->group = group;
			r->name = d->opts.key == GROUP_OP ? rows[i].name : key;
			r->label = d->opts.key == GROUP_OP_SHAPE ? dtype_label(&d->arena, &rows[i])
								 : NULL;
		}
		if (!r->side[side].has)
			(*nkeys)++;
		acc_row(&d->arena, &r->side[side], &rows[i], nsteps);
	}
}

/* leftovers of one op and shape, most time first (then by dtype): paired in this order */
static int cmp_leftover(const void *a, const void *b, void *arg)
{
	const struct join_row *jr = arg;
	const struct join_row *x = &jr[*(const size_t *)a], *y = &jr[*(const size_t *)b];
	const struct side_acc *u = x->side[0].has ? &x->side[0] : &x->side[1];
	const struct side_acc *v = y->side[0].has ? &y->side[0] : &y->side[1];
	if (u->raw_ns != v->raw_ns)
		return u->raw_ns > v->raw_ns ? -1 : 1;
	return strcmp(x->label ? x->label : "", y->label ? y->label : "");
}

/*
 * op-shape: rows with no exact (op, shapes, dtype) partner pair across dtypes when the
 * other side has one left over under the same op and shapes: "bf16->fp32".
 */
static void pair_leftovers(struct kp_diff *d, struct join *j)
{
	struct kp_hmap groups;                                   /* group -> leftovers in it */
	const char **gkey = xmalloc((j->n + 1) * sizeof(*gkey)); /* groups, first seen first */
	size_t ngroups = 0;
	size_t *idx = xmalloc((j->n + 1) * sizeof(*idx));
	size_t *b = xmalloc((j->n + 1) * sizeof(*b)), *nw = xmalloc((j->n + 1) * sizeof(*nw));
	size_t nidx = 0;
	for (size_t i = 0; i < j->n; i++) {
		const struct join_row *r = &j->jr[i];
		if (r->side[0].has != r->side[1].has && r->label)
			idx[nidx++] = i;
	}
	/* one bucket per group: the leftovers' indices, sorted by group, then by cmp_leftover */
	hmap_init(&groups, HMAP_STR);
	for (size_t i = 0; i < nidx; i++) {
		const char *g = j->jr[idx[i]].group;
		int created;
		struct kp_hmap_entry *e = hmap_put_str(&groups, g, strlen(g), &created);
		if (created)
			gkey[ngroups++] = g;
		e->val.i++;
	}
	for (size_t gi = 0; gi < ngroups; gi++) {
		const char *g = gkey[gi];
		if (hmap_get_str(&groups, g, strlen(g))->val.i < 2)
			continue;
		size_t nb = 0, nn = 0;
		for (size_t i = 0; i < nidx; i++) {
			const struct join_row *r = &j->jr[idx[i]];
			if (strcmp(r->group, g))
				continue;
			if (r->side[0].has)
				b[nb++] = idx[i];
			else if (r->side[1].has)
				nw[nn++] = idx[i];
		}
		qsort_r(b, nb, sizeof(*b), cmp_leftover, j->jr);
		qsort_r(nw, nn, sizeof(*nw), cmp_leftover, j->jr);
		for (size_t k = 0; k < nb && k < nn; k++) {
			struct join_row *x = &j->jr[b[k]], *y = &j->jr[nw[k]];
			x->side[1] = y->side[1];
			y->dead = 1;
			x->cross = 1;
			char buf[128];
			snprintf(buf, sizeof(buf), "%s->%s", x->label, y->label);
			x->key = x->name = join3(&d->arena, x->group, " ", buf);
		}
	}
	hmap_free(&groups);
	free(gkey);
	free(idx);
	free(b);
	free(nw);
}

/* the parts of one signature on each side: (join row, part) index pairs */
struct sig_group {
	size_t *m[2];
	size_t n[2], cap[2];
	int tainted; /* a matched row holds some of its work */
};

static void group_add(struct sig_group *g, int side, size_t row, size_t part)
{
	if (g->n[side] + 2 > g->cap[side]) {
		g->cap[side] = g->cap[side] ? 2 * g->cap[side] : 8;
		g->m[side] = xrealloc(g->m[side], g->cap[side] * sizeof(*g->m[side]));
	}
	g->m[side][g->n[side]++] = row;
	g->m[side][g->n[side]++] = part;
}

static struct sig_group *group_of(struct kp_hmap *map, struct sig_group **g, size_t *ng,
				  size_t *cap, const char *sig)
{
	int created;
	struct kp_hmap_entry *e = hmap_put_str(map, sig, strlen(sig), &created);
	if (created) {
		if (*ng == *cap) {
			*cap = *cap ? 2 * *cap : 16;
			*g = xrealloc(*g, *cap * sizeof(**g));
		}
		memset(&(*g)[*ng], 0, sizeof(**g));
		e->val.i = (int64_t)(*ng)++;
	}
	return &(*g)[e->val.i];
}

static void add_part(struct kp_arena *a, struct side_acc *s, const struct kp_sigpart *p,
		     size_t nsteps)
{
	s->raw_ns += p->time_ns;
	s->calls += (double)p->calls;
	if (p->flops >= 0)
		s->flops = (s->flops < 0 ? 0 : s->flops) + p->flops;
	s->peak_flop_ns += p->peak_flop_ns;
	if (nsteps && p->step_ns) {
		if (!s->steps)
			s->steps = arena_zalloc(a, nsteps * sizeof(*s->steps));
		for (size_t i = 0; i < nsteps; i++)
			s->steps[i] += p->step_ns[i];
	}
}

/* One side of a pair across backends: its parts summed; calls, the most of any one row. */
static void group_side(struct kp_diff *d, struct join *j, const struct sig_group *g, int side,
		       size_t nsteps, struct side_acc *out)
{
	const struct kp_sigpart *first = j->jr[g->m[side][0]].side[side].parts[g->m[side][1]];
	const char *sp = strrchr(first->sig, ' ');
	memset(out, 0, sizeof(*out));
	out->flops = -1;
	out->has = 1;
	out->dtype = sp ? arena_strdup(&d->arena, sp + 1) : NULL; /* the signature's dtype */
	out->variant = first->variant;
	for (size_t k = 0; k < g->n[side]; k += 2) {
		struct side_acc *s = &j->jr[g->m[side][k]].side[side];
		const struct kp_sigpart *p = s->parts[g->m[side][k + 1]];
		double calls = out->calls;
		add_part(&d->arena, out, p, nsteps);
		/* a math path's bmm may run twice per attention call: count the attention calls */
		out->calls = (double)p->sig_calls > calls ? (double)p->sig_calls : calls;
		if (!p->variant || strcmp(out->variant ? out->variant : "", p->variant))
			out->variant = "mixed";
		s->used[g->m[side][k + 1]] = 1;
	}
}

/* A row some of whose parts paired across backends: what is left of it, or dead when none. */
static void side_rest(struct kp_diff *d, struct join_row *r, int side, size_t nsteps)
{
	struct side_acc *s = &r->side[side], rest = *s;
	size_t left = 0;
	rest.raw_ns = 0;
	rest.calls = 0;
	rest.flops = -1;
	rest.peak_flop_ns = 0;
	rest.steps = NULL;
	for (size_t k = 0; k < s->nparts; k++)
		if (!s->used[k]) {
			add_part(&d->arena, &rest, s->parts[k], nsteps);
			left++;
		}
	if (!left)
		r->dead = 1;
	*s = rest;
}


/*
 * op-shape, after the exact and cross-dtype pairs: the work still without a partner pairs
 * across backends by functional signature (kprof-diff(1), PAIRS ACROSS BACKENDS): all of a
 * signature's work on one side against all of it on the other, "math->cudnn".  The rows
 * it came from keep the rest of their work, or go.  A signature pairs only whole: none of
 * its work may sit in a row paired otherwise.
 */
static void pair_backends(struct kp_diff *d, struct join *j)
{
	struct kp_hmap map;
	hmap_init(&map, HMAP_STR);
	size_t ng = 0, cap = 0, n0 = j->n;
	struct sig_group *g = NULL;
	for (size_t i = 0; i < n0; i++) {
		struct join_row *r = &j->jr[i];
		if (r->dead)
			continue;
		int both = r->side[0].has && r->side[1].has;
		for (int s = 0; s < 2; s++) {
			struct side_acc *a = &r->side[s];
			for (size_t k = 0; a->has && k < a->nparts; k++) {
				if (!a->parts[k]->sig)
					continue;
				struct sig_group *x = group_of(&map, &g, &ng, &cap,
							       a->parts[k]->sig);
				if (both)
					x->tainted = 1;
				else
					group_add(x, s, i, k);
			}
			if (!both && a->nparts)
				a->used = arena_zalloc(&d->arena, a->nparts);
		}
	}
	for (size_t k = 0; k < ng; k++) {
		struct sig_group *x = &g[k];
		if (x->n[0] && x->n[1] && !x->tainted) {
			struct join_row *r = join_append(j);
			group_side(d, j, x, 0, d->opts.base_steps, &r->side[0]);
			group_side(d, j, x, 1, d->opts.new_steps, &r->side[1]);
			const char *sig = j->jr[x->m[0][0]].side[0].parts[x->m[0][1]]->sig;
			char buf[160];
			snprintf(buf, sizeof(buf), "%s->%s", r->side[0].variant,
				 r->side[1].variant);
			r->group = sig;
			r->key = r->name = join3(&d->arena, sig, " ", buf);
			r->cross_backend = 1;
			for (int s = 0; s < 2; s++)
				for (size_t m = 0; m < x->n[s]; m += 2)
					side_rest(d, &j->jr[x->m[s][m]], s,
						  s ? d->opts.new_steps : d->opts.base_steps);
		}
		free(x->m[0]);
		free(x->m[1]);
	}
	free(g);
	hmap_free(&map);
}

static int64_t div_ns(int64_t ns, double div)
{
	return div == 1 ? ns : (int64_t)llround((double)ns / div);
}

/* achieved FLOP/s and % of peak of summed rows, as analyze.c derives them */
static void rates(const struct side_acc *s, double *fps, double *pct)
{
	*fps = s->flops >= 0 && s->raw_ns > 0 ? s->flops * 1e9 / s->raw_ns : -1;
	*pct = s->flops >= 0 && s->peak_flop_ns > 0 ? 100.0 * s->flops * 1e9 / s->peak_flop_ns : -1;
}

/* sum of squared deviations of a per-step series (a missing side is all zeros) */
static double sq_dev(const int64_t *x, size_t n)
{
	if (!x || n == 0)
		return 0;
	double mean = 0, ss = 0;
	for (size_t i = 0; i < n; i++)
		mean += (double)x[i];
	mean /= (double)n;
	for (size_t i = 0; i < n; i++)
		ss += ((double)x[i] - mean) * ((double)x[i] - mean);
	return ss;
}

/*
 * Noise of a per-step delta: k x pooled sd x sqrt(1/nb + 1/nn), the limit of a two-sample
 * t-test at t = k (k = 3: about 1% of unchanged rows would cross it with 5+5 steps).
 */
static double noise_of(const struct kp_diff *d, const int64_t *b, const int64_t *n)
{
	size_t nb = d->opts.base_steps, nn = d->opts.new_steps;
	double k = d->opts.noise_k > 0 ? d->opts.noise_k : KP_NOISE_K;
	double pooled = (sq_dev(b, nb) + sq_dev(n, nn)) / (double)(nb + nn - 2);
	return k * sqrt(pooled) * sqrt(1.0 / (double)nb + 1.0 / (double)nn);
}

/*
 * The joined rows of @j, divided per step, with their noise; the per-step totals of both sides
 * go to @tot (when @noise).
 */
static void join_rows(struct kp_diff *d, const struct join *j, int noise, int64_t *tot[2])
{
	d->rows = xcalloc(j->n + 1, sizeof(*d->rows));
	if (noise) {
		tot[0] = arena_zalloc(&d->arena, d->opts.base_steps * sizeof(int64_t));
		tot[1] = arena_zalloc(&d->arena, d->opts.new_steps * sizeof(int64_t));
	}
	for (size_t i = 0; i < j->n; i++) {
		if (j->jr[i].dead)
			continue;
		const struct side_acc *b = &j->jr[i].side[0], *n = &j->jr[i].side[1];
		struct kp_diff_row *r = &d->rows[d->nrows++];
		r->key = j->jr[i].key;
		r->name = j->jr[i].name;
		r->cross_dtype = j->jr[i].cross;
		r->cross_backend = j->jr[i].cross_backend;
		r->has_base = b->has;
		r->has_new = n->has;
		r->base_dtype = b->mixed ? NULL : b->dtype;
		r->new_dtype = n->mixed ? NULL : n->dtype;
		r->base_mixed_dtype = b->mixed;
		r->new_mixed_dtype = n->mixed;
		r->base_raw_ns = b->raw_ns;
		r->new_raw_ns = n->raw_ns;
		r->base_ns = div_ns(b->raw_ns, d->base.div);
		r->new_ns = div_ns(n->raw_ns, d->new.div);
		r->base_calls = b->calls / d->base.div;
		r->new_calls = n->calls / d->new.div;
		r->base_flops = b->flops;
		r->new_flops = n->flops;
		r->base_peak_flop_ns = b->peak_flop_ns;
		r->new_peak_flop_ns = n->peak_flop_ns;
		rates(b, &r->base_flops_per_s, &r->base_pct_peak);
		rates(n, &r->new_flops_per_s, &r->new_pct_peak);
		r->delta_ns = r->new_ns - r->base_ns;
		r->noise_ns = noise ? noise_of(d, b->steps, n->steps) : -1;
		for (size_t k = 0; noise && k < d->opts.base_steps && b->steps; k++)
			tot[0][k] += b->steps[k];
		for (size_t k = 0; noise && k < d->opts.new_steps && n->steps; k++)
			tot[1][k] += n->steps[k];
		d->base.time_ns += r->base_ns;
		d->new.time_ns += r->new_ns;
	}
}

/* The summary over the rows, and each row's shares, ratio and status. */
static void summarize(struct kp_diff *d, int noise, int64_t *const tot[2])
{
	struct kp_diff_summary *s = &d->sum;
	s->base_ns = d->base.time_ns;
	s->new_ns = d->new.time_ns;
	s->delta_ns = s->new_ns - s->base_ns;
	s->total_ratio = s->base_ns > 0 ? (double)s->new_ns / (double)s->base_ns : -1;
	s->noise_ns = noise ? noise_of(d, tot[0], tot[1]) : -1;
	double lnsum = 0;
	int64_t nln = 0;
	for (size_t i = 0; i < d->nrows; i++) {
		struct kp_diff_row *r = &d->rows[i];
		r->base_pct = s->base_ns > 0 ? 100.0 * r->base_ns / s->base_ns : 0;
		r->new_pct = s->new_ns > 0 ? 100.0 * r->new_ns / s->new_ns : 0;
		r->share_pt = r->new_pct - r->base_pct;
		/* ratio from the undivided sums: no rounding in the per-step case */
		double bt = r->base_raw_ns / d->base.div, nt = r->new_raw_ns / d->new.div;
		r->ratio = r->has_base && r->has_new && bt > 0 ? nt / bt : -1;
		if (!r->has_base) {
			r->status = DIFF_NEW;
			s->added++;
			s->onesided_new_ns += r->new_ns;
			continue;
		}
		if (!r->has_new) {
			r->status = DIFF_GONE;
			s->removed++;
			s->onesided_base_ns += r->base_ns;
			continue;
		}
		s->matched++;
		s->paired_delta_ns += r->delta_ns;
		s->cross_dtype += r->cross_dtype;
		s->cross_backend += r->cross_backend;
		if (r->ratio < 0)
			r->status = nt > 0 ? DIFF_CHANGED : DIFF_UNCHANGED;
		else
			r->status = fabs(r->ratio - 1) * 100 <= d->opts.threshold_pct + PCT_EPS
					    ? DIFF_UNCHANGED
					    : DIFF_CHANGED;
		if (r->status == DIFF_UNCHANGED)
			s->unchanged++;
		else if (r->ratio < 0 || r->ratio > 1)
			s->regressed++;
		else
			s->improved++;
		if (bt > 0 && nt > 0) {
			lnsum += log(bt / nt);
			nln++;
		}
	}
	s->geomean_speedup = nln ? exp(lnsum / (double)nln) : -1;
	s->geomean_rows = nln;
}

int diff_join(struct kp_diff *d, const struct kp_row *brows, size_t nb, const struct kp_row *nrows,
	      size_t nn, const struct kp_diff_opts *o, const struct kp_report *base_rep,
	      const struct kp_report *new_rep)
{
	memset(d, 0, sizeof(*d));
	arena_init(&d->arena);
	d->opts = *o;
	if (!(d->opts.base_div > 0))
		d->opts.base_div = 1;
	if (!(d->opts.new_div > 0))
		d->opts.new_div = 1;
	d->base = (struct kp_diff_side){ "base", base_rep, d->opts.base_div, 0, 0 };
	d->new = (struct kp_diff_side){ "new", new_rep, d->opts.new_div, 0, 0 };
	/* noise needs per-step division by the spans and a few steps on both sides */
	int noise = d->opts.noise_k >= 0 && d->opts.per_step && d->opts.how != NORM_STEPS &&
		    d->opts.base_steps >= KP_NOISE_MIN_STEPS &&
		    d->opts.new_steps >= KP_NOISE_MIN_STEPS;
	if (!noise)
		d->opts.base_steps = d->opts.new_steps = 0;
	d->sum.noise_steps = noise;

	struct join j = { 0 };
	hmap_init(&j.map, HMAP_STR);
	add_side(d, &j, brows, nb, 0, d->opts.base_steps, &d->base.nkeys);
	add_side(d, &j, nrows, nn, 1, d->opts.new_steps, &d->new.nkeys);
	hmap_free(&j.map);
	if (d->opts.key == GROUP_OP_SHAPE) {
		pair_leftovers(d, &j);
		pair_backends(d, &j);
	}

	int64_t *tot[2] = { NULL, NULL };
	join_rows(d, &j, noise, tot);
	free(j.jr);

	summarize(d, noise, tot);
	return 0;
}

/* ---- select ---- */

void diff_select(struct kp_diff *d, long top, double min_pct)
{
	struct kp_diff_row *tmp = xmalloc((d->nrows + 1) * sizeof(*tmp));
	size_t keep = 0;
	for (size_t i = 0; i < d->nrows; i++) {
		const struct kp_diff_row *r = &d->rows[i];
		int big = (r->base_pct > r->new_pct ? r->base_pct : r->new_pct) >= min_pct;
		if ((top <= 0 || keep < (size_t)top) && big && r->status != DIFF_OTHERS)
			tmp[keep++] = *r;
	}
	if (keep == d->nrows) {
		free(tmp);
		return;
	}
	struct kp_diff_row o;
	memset(&o, 0, sizeof(o));
	o.status = DIFF_OTHERS;
	o.base_flops = o.new_flops = -1;
	o.base_flops_per_s = o.new_flops_per_s = o.base_pct_peak = o.new_pct_peak = -1;
	for (size_t i = 0, k = 0; i < d->nrows; i++) {
		const struct kp_diff_row *x = &d->rows[i];
		if (k < keep && x->key == tmp[k].key) {
			k++;
			continue;
		}
		o.nfolded += x->status == DIFF_OTHERS ? x->nfolded : 1;
		o.has_base |= x->has_base;
		o.has_new |= x->has_new;
		o.base_raw_ns += x->base_raw_ns;
		o.new_raw_ns += x->new_raw_ns;
		o.base_ns += x->base_ns;
		o.new_ns += x->new_ns;
		o.delta_ns += x->delta_ns;
		o.base_calls += x->base_calls;
		o.new_calls += x->new_calls;
		o.base_pct += x->base_pct;
		o.new_pct += x->new_pct;
		o.share_pt += x->share_pt;
	}
	o.ratio = o.has_base && o.has_new && o.base_ns > 0 ? (double)o.new_ns / o.base_ns : -1;
	char buf[96];
	enum kp_group k = d->opts.key;
	snprintf(buf, sizeof(buf), "(others: %lld %s)", (long long)o.nfolded,
		 k == GROUP_KERNEL   ? units_plural(o.nfolded, "kernel", "kernels")
		 : k == GROUP_MODULE ? units_plural(o.nfolded, "module", "modules")
		 : k == GROUP_SOURCE ? units_plural(o.nfolded, "source line", "source lines")
				     : units_plural(o.nfolded, "op", "ops"));
	o.name = o.key = arena_strdup(&d->arena, buf);
	tmp[keep] = o;
	memcpy(d->rows, tmp, (keep + 1) * sizeof(*tmp));
	d->nrows = keep + 1;
	free(tmp);
}

/* ---- gate ---- */

/* "+57.769 us", "-3 ns" */
static char *signed_time(char *buf, size_t cap, int64_t ns)
{
	if (ns > 0) {
		buf[0] = '+';
		units_time(buf + 1, cap - 1, ns);
	} else {
		units_time(buf, cap, ns);
	}
	return buf;
}

/* '*' any run, '?' one character, everything else literal (keys are full of '[') */
static int glob_match(const char *p, const char *s)
{
	const char *star = NULL, *resume = NULL;
	while (*s) {
		if (*p == '*') {
			star = p++;
			resume = s;
		} else if (*p && (*p == '?' || *p == *s)) {
			p++;
			s++;
		} else if (star) {
			p = star + 1;
			s = ++resume;
		} else {
			return 0;
		}
	}
	while (*p == '*')
		p++;
	return !*p;
}

static int rule_match(const char *pattern, const char *key, const char *op)
{
	return glob_match(pattern, key) || (op && glob_match(pattern, op));
}

double diff_gate_limit(const struct kp_gate_opts *g, const char *key, int op_key)
{
	/* op and op-shape keys: a pattern also matches the op name, the key's first word */
	char op[256];
	const char *sp = op_key ? strchr(key, ' ') : NULL;
	const char *opname = NULL;
	if (sp && (size_t)(sp - key) < sizeof(op)) {
		memcpy(op, key, (size_t)(sp - key));
		op[sp - key] = '\0';
		opname = op;
	}
	for (size_t i = g->nrules; i-- > 0;)
		if (rule_match(g->rules[i].pattern, key, opname))
			return g->rules[i].pct;
	return g->fail_above_pct;
}

const char *diff_gate_parse_limit(struct kp_arena *a, const char *s, size_t len, double *global,
				  struct kp_gate_rule **rules, size_t *n, size_t *cap)
{
	size_t eq = len;
	for (size_t i = len; i-- > 0;)
		if (s[i] == '=') {
			eq = i;
			break;
		}
	const char *num = eq < len ? s + eq + 1 : s;
	size_t nlen = eq < len ? len - eq - 1 : len;
	char buf[64], *end;
	if (nlen == 0 || nlen >= sizeof(buf))
		return "expected PCT or PATTERN=PCT";
	memcpy(buf, num, nlen);
	buf[nlen] = '\0';
	double pct = strtod(buf, &end);
	if (end == buf || *end || !isfinite(pct) || pct < 0)
		return eq < len ? "expected PATTERN=PCT with PCT a number >= 0"
				: "expected PCT (a number >= 0) or PATTERN=PCT";
	if (eq == len) {
		*global = pct;
		return NULL;
	}
	if (eq == 0)
		return "empty pattern before '='";
	*rules = xgrow(*rules, *n, cap, 8, sizeof(**rules));
	(*rules)[(*n)++] = (struct kp_gate_rule){ arena_strndup(a, s, eq), pct };
	return NULL;
}

int diff_gate_parse_file(struct kp_arena *a, const char *text, size_t len, const char *name,
			 double *global, struct kp_gate_rule **rules, size_t *n, size_t *cap,
			 struct kp_diag *d)
{
	size_t line = 0;
	for (size_t i = 0; i < len;) {
		size_t e = i;
		while (e < len && text[e] != '\n')
			e++;
		line++;
		size_t b = i, f = e;
		while (b < f && isspace((unsigned char)text[b]))
			b++;
		while (f > b && isspace((unsigned char)text[f - 1]))
			f--;
		i = e + 1;
		if (b == f || text[b] == '#')
			continue;
		const char *why = diff_gate_parse_limit(a, text + b, f - b, global, rules, n, cap);
		if (why)
			return diag_error(d, KP_BADINPUT, "%s:%zu: error: %s", name, line, why);
	}
	return 0;
}

/* above the floor and the noise (when known): a change that is not jitter */
static int real_change(int64_t delta_ns, double noise_ns, const struct kp_gate_opts *g)
{
	return delta_ns > g->min_delta_ns && (noise_ns < 0 || (double)delta_ns > noise_ns);
}

size_t diff_gate(const struct kp_diff *d, const struct kp_gate_opts *g, struct kp_gate_hit *hits,
		 size_t cap)
{
	size_t n = 0;
	const struct kp_diff_summary *s = &d->sum;
	if (g->fail_above_pct >= 0 && s->total_ratio > 0 &&
	    (s->total_ratio - 1) * 100 > g->fail_above_pct + PCT_EPS &&
	    real_change(s->delta_ns, s->noise_ns, g)) {
		if (n < cap)
			hits[n] = (struct kp_gate_hit){ NULL,
							"total GPU time",
							DIFF_CHANGED,
							s->base_ns,
							s->new_ns,
							s->delta_ns,
							(s->total_ratio - 1) * 100,
							g->fail_above_pct,
							s->noise_ns };
		n++;
	}
	for (size_t i = 0; i < d->nrows; i++) {
		const struct kp_diff_row *r = &d->rows[i];
		if (r->status == DIFF_OTHERS || !r->has_new)
			continue;
		/* a row found in new only (or with no base time) grew from nothing */
		int grew = !r->has_base || r->ratio < 0;
		if ((grew ? r->new_pct : r->base_pct) < g->min_pct)
			continue;
		/* op names lead op and op-shape keys only: a source key's words are no op */
		double limit = diff_gate_limit(g, r->key,
					       d->opts.key == GROUP_OP || d->opts.key == GROUP_OP_SHAPE);
		if (limit < 0 || !real_change(r->delta_ns, r->noise_ns, g))
			continue;
		if (!grew && (r->ratio - 1) * 100 <= limit + PCT_EPS)
			continue;
		/* the status counts it where the rows line does: new only, or matched */
		if (n < cap)
			hits[n] = (struct kp_gate_hit){ r->key,
							r->name,
							r->has_base ? DIFF_CHANGED : DIFF_NEW,
							r->base_ns,
							r->new_ns,
							r->delta_ns,
							grew ? NAN : (r->ratio - 1) * 100,
							limit,
							r->noise_ns };
		n++;
	}
	return n;
}

void diff_gate_message(const struct kp_gate_hit *h, const struct kp_gate_opts *g, char *buf,
		       size_t cap)
{
	char b1[32], b2[32], dl[32], fl[32], nz[32], pct[32] = "";
	units_time(b1, sizeof(b1), h->base_ns);
	units_time(b2, sizeof(b2), h->new_ns);
	signed_time(dl, sizeof(dl), h->delta_ns);
	units_time(fl, sizeof(fl), g->min_delta_ns);
	if (h->noise_ns >= 0)
		units_time(nz, sizeof(nz), (int64_t)llround(h->noise_ns));
	else
		snprintf(nz, sizeof(nz), "N/A");
	if (isfinite(h->change_pct))
		snprintf(pct, sizeof(pct), " (%+.1f%%)", h->change_pct);
	if (!h->key)
		snprintf(buf, cap, "total GPU time %s -> %s: %s%s, limit %g%%, floor %s, noise %s",
			 b1, b2, dl, pct, h->limit_pct, fl, nz);
	else if (h->status == DIFF_NEW)
		snprintf(buf, cap, "'%s' (new) %s: %s, floor %s, noise %s", h->name, b2, dl, fl,
			 nz);
	else if (!isfinite(h->change_pct)) /* no base time: grew from nothing, no limit */
		snprintf(buf, cap, "'%s' %s -> %s: %s, floor %s, noise %s", h->name, b1, b2, dl, fl,
			 nz);
	else
		snprintf(buf, cap, "'%s' %s -> %s: %s%s, limit %g%%, floor %s, noise %s", h->name,
			 b1, b2, dl, pct, h->limit_pct, fl, nz);
}

void diff_free(struct kp_diff *d)
{
	free(d->rows);
	arena_free(&d->arena);
	memset(d, 0, sizeof(*d));
}

/* ---- the run ---- */

struct side_job {
	const char *path, *device;
	const struct kp_diff_run_opts *o;
	struct kp_trace *t;
	struct kp_report *r;
	struct kp_diag *d;
	struct kp_memrep *mem; /* o->memory: the side's memory analysis */
	int *has_mem;
	int rc;
};

static void run_side(struct side_job *j)
{
	struct kp_pipeline_in in = { .path = j->path,
				     .load = j->o->load,
				     .db = j->o->analyze.db,
				     .device = j->device,
				     .sm_clock_mhz = j->o->analyze.sm_clock_mhz,
				     .analyze = j->o->analyze,
				     .drop_records = 1, /* the rows hold what the diff needs */
				     .memory = j->o->memory };
	in.analyze.step_series = 1; /* per-step time per row: the gate's noise */
	in.analyze.warn_all = in.load.warn_all = j->o->warn_mode == WARN_ALL;
	struct kp_pipeline_out p;
	j->rc = pipeline_run(&in, &p);
	/* moved into the run: the report borrows the trace where it now lies */
	*j->t = p.trace;
	*j->d = p.diag;
	if (j->rc == 0) {
		*j->r = p.report;
		j->r->trace = j->t;
		if (p.has_memory) { /* its names are the trace's, which the run keeps */
			*j->mem = p.memory;
			*j->has_mem = 1;
		}
	}
}

/*
 * One input after the other, each parsed on o->load.jobs threads: the second is read while
 * only the first one's report is kept, so the peak is about one analysis, not two.
 */
static int load_sides(struct kp_diff_run *run, const struct kp_diff_run_opts *o)
{
	/* --device A,B names each side; --device A names both */
	char devbuf[512];
	const char *dev[2] = { o->device, o->device };
	const char *comma = o->device ? strchr(o->device, ',') : NULL;
	if (comma) {
		snprintf(devbuf, sizeof(devbuf), "%.*s", (int)(comma - o->device), o->device);
		dev[0] = devbuf;
		dev[1] = comma + 1;
	}
	struct side_job job[2];
	for (int i = 0; i < 2; i++)
		job[i] = (struct side_job){ o->path[i],   dev[i],        o,
					    &run->trace[i], &run->rep[i], &run->diag[i],
					    &run->mem[i],   &run->has_mem[i], -1 };
	run_side(&job[0]);
	run_side(&job[1]);
	int status = KP_OK;
	for (int i = 0; i < 2; i++) {
		run->loaded[i] = job[i].rc == 0;
		if (!run->loaded[i] && status == KP_OK)
			status = run->diag[i].status;
	}
	return status;
}

/* times per step when asked, or when both traces have ProfilerStep spans */
static int normalization(struct kp_diff_run *run, const struct kp_diff_run_opts *o,
			 struct kp_diff_opts *dopts)
{
	const struct kp_report *r = run->rep;
	if (o->steps_given) {
		dopts->per_step = 1;
		dopts->how = NORM_STEPS;
		return KP_OK;
	}
	if (o->per_step == 1) {
		for (int i = 0; i < 2; i++)
			if (!r[i].tot.steps) {
				run->err.status = KP_USAGE;
				snprintf(run->err.msg, sizeof(run->err.msg),
					 "error: --per-step: no ProfilerStep spans in '%s' (give the step counts with --steps B,N)",
					 run->trace[i].display);
				return KP_USAGE;
			}
		dopts->per_step = 1;
		dopts->how = NORM_PER_STEP;
	} else if (o->per_step == 0) {
		dopts->how = NORM_TOTAL;
	} else {
		dopts->per_step = r[0].tot.steps > 0 && r[1].tot.steps > 0;
	}
	if (dopts->per_step) {
		dopts->base_div = (double)r[0].tot.steps;
		dopts->new_div = (double)r[1].tot.steps;
	}
	dopts->base_steps = (size_t)r[0].tot.steps;
	dopts->new_steps = (size_t)r[1].tot.steps;
	return KP_OK;
}

/*
 * --memory: both sides' GPU devices compared and gated.  A side without GPU [memory] events
 * is a warning, or with --fail-above-mem an error (KP_BADINPUT: the gate cannot be judged).
 */
static int memory_compare(struct kp_diff_run *run, const struct kp_diff_run_opts *o)
{
	static const char *const side[2] = { "base", "new" };
	run->mem_limit_pct = o->fail_above_mem_pct;
	for (int i = 0; i < 2; i++) {
		if (run->mem[i].ngpu)
			continue;
		run->no_mem[i] = run->trace[i].display;
		if (o->fail_above_mem_pct >= 0) {
			diag_error(&run->err, KP_BADINPUT,
				   "error: --fail-above-mem: no [memory] events on a GPU in %s '%s' (record with torch.profiler.profile(profile_memory=True))",
				   side[i], run->trace[i].display);
			return KP_BADINPUT;
		}
		diag_warn_add(&run->rep[i].warn, "trace without memory events",
			      run->trace[i].display,
			      "no [memory] events on a GPU: no memory to compare (record with torch.profiler.profile(profile_memory=True))");
	}
	if (run->no_mem[0] || run->no_mem[1])
		return KP_OK;
	memdiff_join(&run->memdiff, &run->mem[0], &run->mem[1]);
	run->has_memdiff = 1;
	if (o->fail_above_mem_pct < 0)
		return KP_OK;
	run->nmemhits = memdiff_gate(&run->memdiff, o->fail_above_mem_pct, NULL, 0);
	run->memhits = xcalloc(run->nmemhits + 1, sizeof(*run->memhits));
	memdiff_gate(&run->memdiff, o->fail_above_mem_pct, run->memhits, run->nmemhits);
	return KP_OK;
}

int diff_run(struct kp_diff_run *run, const struct kp_diff_run_opts *o)
{
	memset(run, 0, sizeof(*run));
	run->gate = o->gate;
	run->warn_mode = o->warn_mode;
	int status = load_sides(run, o);
	if (status != KP_OK)
		return status;
	struct kp_diff_opts dopts = o->diff;
	status = normalization(run, o, &dopts);
	if (status != KP_OK)
		return status;
	diff_join(&run->diff, run->rep[0].rows, run->rep[0].nrows, run->rep[1].rows,
		  run->rep[1].nrows, &dopts, &run->rep[0], &run->rep[1]);
	run->joined = 1;
	sort_diff(&run->diff, &o->sort);
	run->nhits = diff_gated(&o->gate) ? diff_gate(&run->diff, &o->gate, NULL, 0) : 0;
	run->hits = xcalloc(run->nhits + 1, sizeof(*run->hits));
	if (run->nhits)
		diff_gate(&run->diff, &o->gate, run->hits, run->nhits);
	diff_select(&run->diff, o->top, o->min_pct);
	if (o->memory && memory_compare(run, o) != KP_OK)
		return run->err.status;
	return run->nhits || run->nmemhits ? KP_REGRESSION : KP_OK;
}

/* the same warnings, kind for kind, count for count, message for message */
static int warn_same(const struct kp_warnings *a, const struct kp_warnings *b)
{
	if (a->nkinds != b->nkinds)
		return 0;
	for (int i = 0; i < a->nkinds; i++) {
		const struct kp_warn_kind *x = &a->k[i], *y = &b->k[i];
		if (strcmp(x->kind, y->kind) || x->count != y->count || x->nshown != y->nshown ||
		    x->nmore != y->nmore)
			return 0;
		for (int j = 0; j < x->nshown; j++)
			if (strcmp(x->shown[j], y->shown[j]))
				return 0;
		for (long j = 0; j < x->nmore; j++)
			if (strcmp(x->more[j], y->more[j]))
				return 0;
	}
	return 1;
}

void diff_run_print(const struct kp_diff_run *run, FILE *fp)
{
	static const char *const side[2] = { "base", "new" };
	if (!run->loaded[0] || !run->loaded[1]) {
		for (int i = 0; i < 2; i++)
			if (!run->loaded[i]) {
				diag_warn_print(&run->trace[i].warn, run->warn_mode, side[i], fp);
				diag_print(fp, run->diag[i].msg);
			}
		return;
	}
	if (run->err.status) {
		diag_print(fp, run->err.msg);
		return;
	}
	/* once per input file: one file on both sides (same warnings: not --device A,B) once */
	int same = !strcmp(run->trace[0].display, run->trace[1].display) &&
		   warn_same(&run->trace[0].warn, &run->trace[1].warn) &&
		   warn_same(&run->rep[0].warn, &run->rep[1].warn);
	for (int i = 0; i < 2 - same; i++) {
		const char *label = same ? "base, new" : side[i];
		diag_warn_print(&run->trace[i].warn, run->warn_mode, label, fp);
		diag_warn_print(&run->rep[i].warn, run->warn_mode, label, fp);
	}
	/* every crossing, each with base, new, delta and the noise it beat */
	char msg[2048] = "regression: ";
	const size_t off = strlen(msg);
	for (size_t i = 0; i < run->nhits; i++) {
		diff_gate_message(&run->hits[i], &run->gate, msg + off, sizeof(msg) - off);
		diag_print(fp, msg);
	}
	for (size_t i = 0; i < run->nmemhits; i++) {
		memdiff_gate_message(&run->memhits[i], 5, msg + off, sizeof(msg) - off);
		diag_print(fp, msg);
	}
}

void diff_run_free(struct kp_diff_run *run)
{
	if (run->joined)
		diff_free(&run->diff);
	free(run->hits);
	if (run->has_memdiff)
		memdiff_free(&run->memdiff);
	free(run->memhits);
	for (int i = 0; i < 2; i++) {
		if (run->has_mem[i])
			memory_free(&run->mem[i]);
		if (run->loaded[i])
			analyze_free(&run->rep[i]);
		trace_free(&run->trace[i]);
	}
	memset(run, 0, sizeof(*run));
}
