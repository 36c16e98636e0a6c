/*
 * diff.c — pair the analysis rows of two traces by key -> base/new/delta/ratio, summary, gate;
 * diff_run(): the whole of kprof diff between its options and its document.
 */
#include "kprof/diff.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "kprof/devdb.h"
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

const char *diff_normalize_kernel(struct kp_arena *a, const char *name)
{
	const char *s = name;
	size_t n = strlen(s);
	if (!strncmp(s, "void ", 5)) {
		/* return type and argument list: the arguments follow from the template */
		s += 5;
		n -= 5;
		if (n && s[n - 1] == ')') {
			int depth = 0;
			for (size_t i = n; i-- > 0;) {
				if (s[i] == ')')
					depth++;
				else if (s[i] == '(' && --depth == 0) {
					if (i > 0)
						n = i;
					break;
				}
			}
		}
	}
	/* spacing and literal suffixes are only normalized inside template arguments */
	char *out = arena_alloc(a, 2 * n + 1);
	size_t k = 0;
	int depth = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '<')
			depth++;
		else if (c == '>' && depth > 0)
			depth--;
		if (depth == 0 && c != '>') {
			out[k++] = (char)c;
			continue;
		}
		if (c == ' ') {
			size_t j = i;
			while (j < n && s[j] == ' ')
				j++;
			int prev = k ? (unsigned char)out[k - 1] : 0;
			int next = j < n ? (unsigned char)s[j] : 0;
			if (prev && next && prev != ' ' && !spaceless(prev) && !spaceless(next))
				out[k++] = ' ';
			i = j - 1;
			continue;
		}
		if (c == ',') {
			out[k++] = ',';
			out[k++] = ' ';
			continue;
		}
		if (isdigit(c) && (k == 0 || !is_ident((unsigned char)out[k - 1]))) {
			/* an integer literal: "1ul" -> "1" (compilers differ in the suffix they print) */
			size_t j = i;
			while (j < n && isdigit((unsigned char)s[j]))
				j++;
			size_t m = j;
			while (m < n && strchr("uUlL", s[m]))
				m++;
			memcpy(out + k, s + i, j - i);
			k += j - i;
			i = (m > j && (m == n || !is_ident((unsigned char)s[m])) ? m : j) - 1;
			continue;
		}
		out[k++] = (char)c;
	}
	while (k && out[k - 1] == ' ')
		k--;
	out[k] = '\0';
	/* Inductor numbers the kernels of a graph: triton_poi_fused_add_0, ..._1 */
	if (!strncmp(out, "triton_", 7)) {
		size_t e = k;
		while (e > 7 && isdigit((unsigned char)out[e - 1]))
			e--;
		if (e < k && e > 8 && out[e - 1] == '_')
			out[e - 1] = '\0';
	}
	return out;
}

const char *diff_row_key(struct kp_arena *a, const struct kp_row *row, const struct kp_diff_opts *o)
{
	switch (o->key) {
	case GROUP_KERNEL:
		return o->full_names ? row->name : diff_normalize_kernel(a, row->name);
	case GROUP_OP_SHAPE: {
		/* "aten::mm [8192,8192]x[8192,8192]": the dtype is left out so bf16 pairs with fp16 */
		if (!row->shape || !*row->shape)
			return row->name;
		size_t ln = strlen(row->name), ls = strlen(row->shape);
		char *k = arena_alloc(a, ln + ls + 2);
		memcpy(k, row->name, ln);
		k[ln] = ' ';
		memcpy(k + ln + 1, row->shape, ls + 1);
		return k;
	}
	default:
		return row->name;
	}
}

/* ---- join ---- */

struct ent {
	const char *key;
	size_t idx;
	UT_hash_handle hh;
};

struct side_acc {
	int64_t raw_ns, flops;
	double calls, peak_flop_ns;
	const char *dtype;
	int has, mixed;
};

static void acc_row(struct side_acc *s, const struct kp_row *r)
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
	s->has = 1;
}

struct join_row {
	const char *key, *name;
	struct side_acc side[2];
};

static void add_side(struct kp_diff *d, struct ent **map, struct join_row **jr, size_t *cap,
		     const struct kp_row *rows, size_t n, int side, size_t *nkeys)
{
	for (size_t i = 0; i < n; i++) {
		const char *key = diff_row_key(&d->arena, &rows[i], &d->opts);
		struct ent *e;
		HASH_FIND_STR(*map, key, e);
		if (!e) {
			if (d->nrows == *cap) {
				*cap = *cap ? *cap * 2 : 64;
				*jr = xrealloc(*jr, *cap * sizeof(**jr));
			}
			struct join_row *r = &(*jr)[d->nrows];
			memset(r, 0, sizeof(*r));
			r->key = key;
			r->name = d->opts.key == GROUP_OP ? rows[i].name : key;
			r->side[0].flops = r->side[1].flops = -1;
			e = arena_zalloc(&d->arena, sizeof(*e));
			e->key = key;
			e->idx = d->nrows++;
			HASH_ADD_KEYPTR(hh, *map, e->key, strlen(e->key), e);
		}
		if (!(*jr)[e->idx].side[side].has)
			(*nkeys)++;
		acc_row(&(*jr)[e->idx].side[side], &rows[i]);
	}
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

static const char *display_name(struct kp_diff *d, const struct kp_diff_row *r)
{
	/* op-shape: the dtype of each side after the key, "bf16" or "bf16->fp16" */
	const char *b = r->base_dtype, *n = r->new_dtype;
	if (d->opts.key != GROUP_OP_SHAPE || (!b && !n))
		return r->name;
	char buf[64];
	if (b && n && strcmp(b, n))
		snprintf(buf, sizeof(buf), " %s->%s", b, n);
	else
		snprintf(buf, sizeof(buf), " %s", b ? b : n);
	size_t ln = strlen(r->name), lb = strlen(buf);
	char *s = arena_alloc(&d->arena, ln + lb + 1);
	memcpy(s, r->name, ln);
	memcpy(s + ln, buf, lb + 1);
	return s;
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

	struct ent *map = NULL, *e, *tmp;
	struct join_row *jr = NULL;
	size_t cap = 0;
	add_side(d, &map, &jr, &cap, brows, nb, 0, &d->base.nkeys);
	add_side(d, &map, &jr, &cap, nrows, nn, 1, &d->new.nkeys);
	HASH_ITER(hh, map, e, tmp)
		HASH_DEL(map, e);

	d->rows = xcalloc(d->nrows + 1, sizeof(*d->rows));
	for (size_t i = 0; i < d->nrows; i++) {
		const struct side_acc *b = &jr[i].side[0], *n = &jr[i].side[1];
		struct kp_diff_row *r = &d->rows[i];
		r->key = jr[i].key;
		r->name = jr[i].name;
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
		d->base.time_ns += r->base_ns;
		d->new.time_ns += r->new_ns;
		r->name = display_name(d, r);
	}
	free(jr);

	struct kp_diff_summary *s = &d->sum;
	s->base_ns = d->base.time_ns;
	s->new_ns = d->new.time_ns;
	s->delta_ns = s->new_ns - s->base_ns;
	s->total_ratio = s->base_ns > 0 ? (double)s->new_ns / (double)s->base_ns : -1;
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
			continue;
		}
		if (!r->has_new) {
			r->status = DIFF_GONE;
			s->removed++;
			continue;
		}
		s->matched++;
		if (r->ratio < 0)
			r->status = nt > 0 ? DIFF_CHANGED : DIFF_UNCHANGED;
		else
			r->status = fabs(r->ratio - 1) * 100 <= d->opts.threshold_pct + PCT_EPS
					    ? DIFF_UNCHANGED : DIFF_CHANGED;
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
	snprintf(buf, sizeof(buf), "(others: %lld %s)", (long long)o.nfolded,
		 d->opts.key == GROUP_KERNEL ? units_plural(o.nfolded, "kernel", "kernels")
						 : units_plural(o.nfolded, "op", "ops"));
	o.name = o.key = arena_strdup(&d->arena, buf);
	tmp[keep] = o;
	memcpy(d->rows, tmp, (keep + 1) * sizeof(*tmp));
	d->nrows = keep + 1;
	free(tmp);
}

/* ---- gate ---- */

size_t diff_gate(const struct kp_diff *d, double fail_above_pct, double min_pct,
		 struct kp_gate_hit *hits, size_t cap)
{
	size_t n = 0;
	const struct kp_diff_summary *s = &d->sum;
	if (fail_above_pct < 0)
		return 0;
	if (s->total_ratio > 0 && (s->total_ratio - 1) * 100 > fail_above_pct + PCT_EPS) {
		if (n < cap)
			hits[n] = (struct kp_gate_hit){ NULL, "total GPU time", s->base_ns, s->new_ns,
							(s->total_ratio - 1) * 100 };
		n++;
	}
	for (size_t i = 0; i < d->nrows; i++) {
		const struct kp_diff_row *r = &d->rows[i];
		if (!r->has_base || !r->has_new || r->status == DIFF_OTHERS || r->ratio <= 0)
			continue;
		if (r->base_pct < min_pct || (r->ratio - 1) * 100 <= fail_above_pct + PCT_EPS)
			continue;
		if (n < cap)
			hits[n] = (struct kp_gate_hit){ r->key, r->name, r->base_ns, r->new_ns,
							(r->ratio - 1) * 100 };
		n++;
	}
	return n;
}

void diff_gate_message(const struct kp_gate_hit *h, double fail_above_pct, char *buf, size_t cap)
{
	char b1[32], b2[32];
	units_time(b1, sizeof(b1), h->base_ns);
	units_time(b2, sizeof(b2), h->new_ns);
	if (h->key)
		snprintf(buf, cap, "'%s' %s -> %s (%+.1f%%, above --fail-above %g%%)", h->name, b1, b2,
			 h->change_pct, fail_above_pct);
	else
		snprintf(buf, cap, "total GPU time %s -> %s (%+.1f%%, above --fail-above %g%%)", b1, b2,
			 h->change_pct, fail_above_pct);
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
	int rc;
};

static void *run_side(void *arg)
{
	struct side_job *j = arg;
	struct kp_analyze_opts ao = j->o->analyze;
	ao.device = j->device;
	j->rc = trace_load(j->t, j->path, &j->o->load, j->d);
	if (j->rc == 0) {
		trace_link(j->t);
		analyze_run(j->t, &ao, j->r);
	}
	return NULL;
}

/* both inputs at once: they share nothing */
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
		job[i] = (struct side_job){ o->path[i], dev[i], o, &run->trace[i], &run->rep[i],
					    &run->diag[i], -1 };
	pthread_t th;
	int threaded = pthread_create(&th, NULL, run_side, &job[0]) == 0;
	if (!threaded)
		run_side(&job[0]);
	run_side(&job[1]);
	if (threaded)
		pthread_join(th, NULL);
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
	return KP_OK;
}

int diff_run(struct kp_diff_run *run, const struct kp_diff_run_opts *o)
{
	memset(run, 0, sizeof(*run));
	run->fail_above_pct = o->fail_above_pct;
	int status = load_sides(run, o);
	if (status != KP_OK)
		return status;
	struct kp_diff_opts dopts = o->diff;
	status = normalization(run, o, &dopts);
	if (status != KP_OK)
		return status;
	diff_join(&run->diff, run->rep[0].rows, run->rep[0].nrows, run->rep[1].rows, run->rep[1].nrows,
		  &dopts, &run->rep[0], &run->rep[1]);
	run->joined = 1;
	sort_diff(&run->diff, &o->sort);
	run->nhits = diff_gate(&run->diff, o->fail_above_pct, o->min_pct, NULL, 0);
	run->hits = xcalloc(run->nhits + 1, sizeof(*run->hits));
	diff_gate(&run->diff, o->fail_above_pct, o->min_pct, run->hits, run->nhits);
	diff_select(&run->diff, o->top, o->min_pct);
	return run->nhits ? KP_REGRESSION : KP_OK;
}

void diff_run_print(const struct kp_diff_run *run, FILE *fp)
{
	if (!run->loaded[0] || !run->loaded[1]) {
		for (int i = 0; i < 2; i++)
			if (!run->loaded[i]) {
				warn_print(&run->trace[i].warn, fp);
				fprintf(fp, "kprof: %s\n", run->diag[i].msg);
			}
		return;
	}
	if (run->err.status) {
		fprintf(fp, "kprof: %s\n", run->err.msg);
		return;
	}
	for (int i = 0; i < 2; i++) {
		warn_print(&run->trace[i].warn, fp);
		warn_print(&run->rep[i].warn, fp);
	}
	char msg[1024];
	for (size_t i = 0; i < run->nhits && i < DIFF_GATE_SHOW; i++) {
		diff_gate_message(&run->hits[i], run->fail_above_pct, msg, sizeof(msg));
		fprintf(fp, "kprof: regression: %s\n", msg);
	}
	if (run->nhits > DIFF_GATE_SHOW)
		fprintf(fp, "kprof: regression: and %zu more above --fail-above %g%%\n",
			run->nhits - DIFF_GATE_SHOW, run->fail_above_pct);
}

void diff_run_free(struct kp_diff_run *run)
{
	if (run->joined)
		diff_free(&run->diff);
	free(run->hits);
	for (int i = 0; i < 2; i++) {
		if (run->loaded[i])
			analyze_free(&run->rep[i]);
		trace_free(&run->trace[i]);
	}
	memset(run, 0, sizeof(*run));
}
