/*
 * suite.c — `kprof capture --config FILE.yaml`: libyaml's document tree -> one
 * struct kp_capture_opts per case (the structs the command line fills).
 *
 * Format: torchao's microbenchmark configs (pytorch/ao benchmarks/microbenchmarks at dbef699,
 * deleted upstream): `model_params` (or `cases`) is a list of cases, `matrix_shapes` a list of
 * generators with torchao's names and parameters.  kprof keys add the other workloads.
 * Scalars are typed as PyYAML's safe_load types plain scalars (YAML 1.1): quoted ones are
 * always strings.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "kprof/hmap.h"
#include "kprof/opts.h"
#include "kprof/sidefile.h"
#include "kprof/suite.h"

struct ctx {
	yaml_document_t *doc;
	const char *file;
	struct kp_diag *d;
};

/* A growing string. */
struct sbuf {
	char *p;
	size_t n, cap;
};

static int sb_add(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sb_add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int need = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (need < 0)
		return -1;
	if (b->n + (size_t)need + 1 > b->cap) {
		size_t nc = (b->n + (size_t)need + 1) * 2;
		char *p = realloc(b->p, nc);
		if (!p)
			return -1;
		b->p = p;
		b->cap = nc;
	}
	va_start(ap, fmt);
	vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
	va_end(ap);
	b->n += (size_t)need;
	return 0;
}

static int err(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int err(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return diag_error(c->d, KP_USAGE, "%s:%zu:%zu: error: %s", c->file, n->start_mark.line + 1,
			  n->start_mark.column + 1, msg);
}

static yaml_node_t *node(struct ctx *c, int idx)
{
	return yaml_document_get_node(c->doc, idx);
}

static const char *sval(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

static int plain(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

static int is_word(const char *v, const char *const *words)
{
	for (size_t i = 0; words[i]; i++)
		if (!strcmp(v, words[i]))
			return 1;
	return 0;
}

static const char *const true_words[] = { "true", "True", "TRUE", "yes", "Yes",
					  "YES",  "on",   "On",   "ON",  NULL };
static const char *const false_words[] = { "false", "False", "FALSE", "no",  "No",
					   "NO",    "off",   "Off",   "OFF", NULL };
static const char *const null_words[] = { "", "~", "null", "Null", "NULL", NULL };

/* -1: not a boolean */
static int as_bool(const yaml_node_t *n)
{
	if (!plain(n))
		return -1;
	return is_word(sval(n), true_words) ? 1 : is_word(sval(n), false_words) ? 0 : -1;
}

/* Decimal integer with '_' allowed (YAML 1.1); 0 when @n is one, -1 otherwise. */
static int as_int(const yaml_node_t *n, long *out)
{
	if (!plain(n))
		return -1;
	const char *s = sval(n);
	char digits[32];
	size_t k = 0;
	if (*s == '-' || *s == '+')
		digits[k++] = *s++;
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s == '_')
			continue;
		if (*s < '0' || *s > '9' || k + 1 >= sizeof(digits))
			return -1;
		digits[k++] = *s;
	}
	digits[k] = '\0';
	errno = 0;
	*out = strtol(digits, NULL, 10);
	return errno ? -1 : 0;
}

/* "a list", "an integer", ...: what @n is, for "expected X, got Y" */
static const char *what(const yaml_node_t *n)
{
	long v;
	if (n->type == YAML_SEQUENCE_NODE)
		return "a list";
	if (n->type == YAML_MAPPING_NODE)
		return "a mapping";
	if (plain(n) && is_word(sval(n), null_words))
		return "null";
	if (as_bool(n) >= 0)
		return "a boolean";
	if (as_int(n, &v) == 0)
		return "an integer";
	return "a string";
}

/* " 'VALUE'" after what() for a non-null scalar */
#define Q(n)                                                                                       \
	((n)->type == YAML_SCALAR_NODE && *sval(n) ? " '" : ""),                                   \
		((n)->type == YAML_SCALAR_NODE ? sval(n) : ""),                                    \
		((n)->type == YAML_SCALAR_NODE && *sval(n) ? "'" : "")

static int get_int(struct ctx *c, const yaml_node_t *n, const char *key, long min, long max,
		   long *out)
{
	if (as_int(n, out) < 0)
		return err(c, n, "'%s': expected an integer, got %s%s%s%s", key, what(n), Q(n));
	if (*out < min || *out > max)
		return err(c, n, "'%s': %ld is out of range %ld..%ld", key, *out, min, max);
	return 0;
}

static int get_bool(struct ctx *c, const yaml_node_t *n, const char *key, int *out)
{
	int b = as_bool(n);
	if (b < 0)
		return err(c, n, "'%s': expected true or false, got %s%s%s%s", key, what(n), Q(n));
	*out = b;
	return 0;
}

/* A string (a quoted scalar, or a plain one that is not null, a boolean or a number). */
static int get_str(struct ctx *c, const yaml_node_t *n, const char *key, const char **out)
{
	long v;
	if (n->type != YAML_SCALAR_NODE ||
	    (plain(n) && (is_word(sval(n), null_words) || as_bool(n) >= 0 || as_int(n, &v) == 0)))
		return err(c, n, "'%s': expected a string, got %s%s%s%s", key, what(n), Q(n));
	*out = sval(n);
	return 0;
}

/* A string or a list of strings, joined with ',' into @b. */
static int get_list(struct ctx *c, yaml_node_t *n, const char *key, struct sbuf *b)
{
	const char *s;
	b->n = 0;
	if (n->type != YAML_SEQUENCE_NODE) {
		if (get_str(c, n, key, &s) < 0)
			return -1;
		return sb_add(b, "%s", s) < 0 ? err(c, n, "out of memory") : 0;
	}
	yaml_node_item_t *it = n->data.sequence.items.start;
	if (it == n->data.sequence.items.top)
		return err(c, n, "'%s': expected at least one value", key);
	for (; it < n->data.sequence.items.top; it++) {
		if (get_str(c, node(c, *it), key, &s) < 0)
			return -1;
		if (sb_add(b, "%s%s", b->n ? "," : "", s) < 0)
			return err(c, n, "out of memory");
	}
	return 0;
}

/* Unknown key @k among @names: an error with a suggestion. */
static int unknown(struct ctx *c, const yaml_node_t *k, const char *where, const char *const *names)
{
	const char *s = opts_suggest(sval(k), names);
	if (s)
		return err(c, k, "unknown key '%s' in %s (did you mean '%s'?)", sval(k), where, s);
	return err(c, k, "unknown key '%s' in %s", sval(k), where);
}

/* The index of key @k in @names (at most 32); a repeated one (bit set in @seen) is an error. */
static int key_index(struct ctx *c, yaml_node_t *k, const char *where, const char *const *names,
		     unsigned *seen)
{
	if (k->type != YAML_SCALAR_NODE)
		return err(c, k, "%s: expected a string key, got %s", where, what(k));
	for (int i = 0; names[i]; i++)
		if (!strcmp(sval(k), names[i])) {
			if (*seen & (1u << i))
				return err(c, k, "duplicate key '%s' in %s", names[i], where);
			*seen |= 1u << i;
			return i;
		}
	unknown(c, k, where, names);
	return -1;
}

/* Keep a copy of @b's text in @k; NULL when out of memory. */
static const char *own(struct kp_suite_case *k, const char *text)
{
	if (k->nown == SUITE_STRS)
		return NULL;
	char *p = strdup(text);
	if (p)
		k->own[k->nown++] = p;
	return p;
}

/* Generators of `matrix_shapes` and their parameters (torchao's utils.py). */
enum { G_CUSTOM, G_LLAMA, G_POW2, G_POW2_EXT, G_SWEEP, G_SMALL_SWEEP };
static const char *const gen_names[] = { "custom", "llama",       "pow2", "pow2_extended",
					 "sweep",  "small_sweep", NULL };

/* generator 'custom': "custom:MxKxN,..." */
static int gen_custom(struct ctx *c, yaml_node_t *g, yaml_node_t *shapes, struct sbuf *spec)
{
	if (!shapes)
		return err(c, g, "generator 'custom' needs 'shapes: [[M, K, N], ...]'");
	if (shapes->type != YAML_SEQUENCE_NODE ||
	    shapes->data.sequence.items.start == shapes->data.sequence.items.top)
		return err(c, shapes, "'shapes': expected a list of [M, K, N], got %s",
			   shapes->type == YAML_SEQUENCE_NODE ? "an empty list" : what(shapes));
	sb_add(spec, "custom:");
	int first = 1;
	for (yaml_node_item_t *it = shapes->data.sequence.items.start;
	     it < shapes->data.sequence.items.top; it++) {
		yaml_node_t *sh = node(c, *it);
		long d[3];
		int nd = 0;
		if (sh->type != YAML_SEQUENCE_NODE)
			return err(c, sh, "a shape is [M, K, N], got %s", what(sh));
		for (yaml_node_item_t *j = sh->data.sequence.items.start;
		     j < sh->data.sequence.items.top; j++, nd++) {
			if (nd == 3)
				break;
			if (get_int(c, node(c, *j), "shapes", 1, 1L << 31, &d[nd]) < 0)
				return -1;
		}
		if (nd != 3 || sh->data.sequence.items.start + 3 != sh->data.sequence.items.top)
			return err(c, sh, "a shape is [M, K, N]: expected 3 integers, got %d",
				   (int)(sh->data.sequence.items.top -
					 sh->data.sequence.items.start));
		if (sb_add(spec, "%s%ldx%ldx%ld", first ? "" : ",", d[0], d[1], d[2]) < 0)
			return err(c, sh, "out of memory");
		first = 0;
	}
	return 0;
}

/* generator 'llama': "llama", its M list into @m (one per case) */
static int gen_llama(struct ctx *c, yaml_node_t *g, yaml_node_t *ms, struct sbuf *spec,
		     struct sbuf *m, const yaml_node_t **m_node)
{
	/* torchao: M = 4 * 4096 */
	struct sbuf one = { 0 };
	long v;
	if (!ms) {
		sb_add(&one, "16384");
	} else if (ms->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *it = ms->data.sequence.items.start;
		     it < ms->data.sequence.items.top; it++) {
			if (get_int(c, node(c, *it), "m", 1, 1L << 31, &v) < 0) {
				free(one.p);
				return -1;
			}
			sb_add(&one, "%s%ld", one.n ? "," : "", v);
		}
	} else if (get_int(c, ms, "m", 1, 1L << 31, &v) == 0) {
		sb_add(&one, "%ld", v);
	} else {
		free(one.p);
		return -1;
	}
	if (!one.p || !one.n) {
		free(one.p);
		return err(c, ms ? ms : g, "'m': expected at least one value");
	}
	if (m->n && strcmp(m->p, one.p)) {
		free(one.p);
		return err(c, g,
			   "two 'llama' generators of one case with different 'm' "
			   "(the first at line %zu)",
			   (*m_node)->start_mark.line + 1);
	}
	if (!m->n)
		sb_add(m, "%s", one.p);
	*m_node = g;
	free(one.p);
	return sb_add(spec, "llama") < 0 ? err(c, g, "out of memory") : 0;
}

/* generators pow2, pow2_extended, sweep, small_sweep: "NAME:MIN:MAX" */
static int gen_powers(struct ctx *c, yaml_node_t *g, int kind, const char *gn, yaml_node_t *minp,
		      yaml_node_t *maxp, struct sbuf *spec)
{
	/* torchao's defaults: sweep 8..15, the others 10..14 */
	long lo = kind == G_SWEEP ? 8 : 10, hi = kind == G_SWEEP ? 15 : 14;
	if ((minp && get_int(c, minp, "min_power", 0, 30, &lo) < 0) ||
	    (maxp && get_int(c, maxp, "max_power", 0, 30, &hi) < 0))
		return -1;
	if (lo > hi)
		return err(c, minp ? minp : g, "min_power %ld is greater than max_power %ld", lo,
			   hi);
	/* kprof's sets take MIN:MAX values; pow2_extended's last shape is 2^max + 2^(max-1) */
	long vhi = (1L << hi) + (kind == G_POW2_EXT && hi >= 1 ? 1L << (hi - 1) : 0);
	if (kind == G_SWEEP || kind == G_SMALL_SWEEP) {
		long k = hi - lo + 1;
		long nshapes = kind == G_SWEEP ? k * k * k : k * (k + 1) * (k + 2) / 6;
		if (k * k * k > 4096)
			return err(c, g, "'%s' with %ld powers makes %ld shapes; at most %d powers",
				   gn, k, nshapes, 16);
	}
	if (sb_add(spec, "%s:%ld:%ld", gn, 1L << lo, vhi) < 0)
		return err(c, g, "out of memory");
	return 0;
}

/* One generator mapping -> "SET" appended to @spec; llama's M list into @m. */
static int generator(struct ctx *c, yaml_node_t *g, struct sbuf *spec, struct sbuf *m,
		     const yaml_node_t **m_node)
{
	if (g->type != YAML_MAPPING_NODE)
		return err(c, g, "'matrix_shapes': expected a mapping with 'name', got %s",
			   what(g));
	yaml_node_t *name = NULL, *shapes = NULL, *ms = NULL, *minp = NULL, *maxp = NULL;
	unsigned seen = 0;
	for (yaml_node_pair_t *p = g->data.mapping.pairs.start; p < g->data.mapping.pairs.top;
	     p++) {
		static const char *const keys[] = { "name",      "shapes",    "m",
						    "min_power", "max_power", NULL };
		yaml_node_t *k = node(c, p->key), *v = node(c, p->value);
		int i = key_index(c, k, "a shape generator", keys, &seen);
		if (i < 0)
			return -1;
		yaml_node_t **slot[] = { &name, &shapes, &ms, &minp, &maxp };
		*slot[i] = v;
	}
	const char *gn;
	if (!name)
		return err(c, g, "shape generator without 'name'");
	if (get_str(c, name, "name", &gn) < 0)
		return -1;
	int kind = -1;
	for (int i = 0; gen_names[i]; i++)
		if (!strcmp(gn, gen_names[i]))
			kind = i;
	if (kind < 0) {
		const char *s = opts_suggest(gn, gen_names);
		return err(c, name,
			   "unknown shape generator '%s'%s%s%s; valid: custom, llama, pow2, "
			   "pow2_extended, sweep, small_sweep",
			   gn, s ? " (did you mean '" : "", s ? s : "", s ? "'?)" : "");
	}
	/* parameters that this generator does not take */
	const char *bad = kind != G_CUSTOM && shapes          ? "shapes"
			  : kind != G_LLAMA && ms             ? "m"
			  : kind <= G_LLAMA && (minp || maxp) ? (minp ? "min_power" : "max_power")
							      : NULL;
	if (bad)
		return err(c, g, "generator '%s' takes no '%s'", gn, bad);
	if (spec->n && sb_add(spec, "+") < 0)
		return err(c, g, "out of memory");
	if (kind == G_CUSTOM)
		return gen_custom(c, g, shapes, spec);
	if (kind == G_LLAMA)
		return gen_llama(c, g, ms, spec, m, m_node);
	return gen_powers(c, g, kind, gn, minp, maxp, spec);
}

/* clang-format off */
enum {
	K_NAME, K_WORKLOADS, K_OPS, K_EPILOGUES, K_DTYPES, K_HPD, K_BACKENDS, K_LAYOUTS, K_MATRIX,
	K_SDPA, K_CAUSAL, K_KVH, K_CONV, K_NORM, K_BATCH, K_WARMUP, K_ITERS, K_BACKWARD, K_OUTPUT,
	K_RESULTS, K_DEVICE, K_MODEL_TYPE, K_SPARSITY, K_USE_COMPILE, K_COMPILE_MODE, K_COMPILE,
	K_PROFILER, K_MEM_PROFILER, K_N
};
/* clang-format on */
static const char *const case_keys[] = {
	"name", "workloads", "ops", "epilogues", "dtypes", "high_precision_dtype", "backends",
	"layouts", "matrix_shapes", "sdpa_shapes", "causal", "kv_heads", "conv_shapes",
	"norm_shapes", "batch", "warmup", "iters", "backward", "output", "results",
	/* torchao's, accepted where kprof does what they ask */
	"device", "model_type", "sparsity", "use_torch_compile", "torch_compile_mode", "compile",
	"enable_profiler", "enable_memory_profiler", NULL
};

/* torchao's sparsity entries: null only (kprof runs no sparse kernel) */
static int no_sparsity(struct ctx *c, yaml_node_t *v, const char *key)
{
	yaml_node_item_t *it = v->type == YAML_SEQUENCE_NODE ? v->data.sequence.items.start : NULL;
	yaml_node_item_t *top = it ? v->data.sequence.items.top : NULL;
	for (yaml_node_t *e = it ? (it < top ? node(c, *it) : NULL) : v; e;
	     e = it && ++it < top ? node(c, *it) : NULL)
		if (!plain(e) || !is_word(sval(e), null_words))
			return err(c, e,
				   "'%s': kprof runs no sparse kernels: only null is accepted",
				   key);
	return 0;
}

/* "dir/name" unless @name is absolute or @dir is NULL */
static const char *in_dir(struct kp_suite_case *k, const char *dir, const char *name)
{
	if (!dir || name[0] == '/')
		return own(k, name);
	struct sbuf b = { 0 };
	if (sb_add(&b, "%s/%s", dir, name) < 0)
		return NULL;
	const char *r = own(k, b.p);
	free(b.p);
	return r;
}

/* What parse_case() gathers across a case's keys. */
struct case_st {
	struct sbuf b, spec, m;
	const yaml_node_t *m_node, *where[K_N];
	const char *output, *results;
};

/* case_key(), case_defaults(): out of memory, to be reported at the case */
#define CASE_OOM (-2)

/* high_precision_dtype: "torch.bfloat16", the name after the last '.' */
static int hp_dtype(struct ctx *c, yaml_node_t *v, const char *ks, struct kp_suite_case *k)
{
	static const char *const torch[][2] = { { "bfloat16", "bf16" },
						{ "float16", "fp16" },
						{ "half", "fp16" },
						{ "float32", "fp32" },
						{ "float", "fp32" } };
	const char *s;
	if (get_str(c, v, ks, &s) < 0)
		return -1;
	const char *dot = strrchr(s, '.'), *t = dot ? dot + 1 : s;
	const char *kd = NULL;
	for (size_t j = 0; j < sizeof(torch) / sizeof(torch[0]); j++)
		if (!strcmp(t, torch[j][0]))
			kd = torch[j][1];
	k->o.dtypes = 0;
	if (!kd || capture_parse_dtypes(kd, &k->o.dtypes))
		return err(c, v,
			   "invalid value '%s' for '%s': valid: torch.bfloat16, "
			   "torch.float16, torch.float32",
			   s, ks);
	return 0;
}

/* matrix_shapes: the generators -> k->o.shapes (and m_list); 0, -1 or CASE_OOM */
static int matrix_shapes(struct ctx *c, yaml_node_t *v, const char *ks, struct case_st *st,
			 struct kp_suite_case *k)
{
	st->spec.n = 0;
	if (v->type != YAML_SEQUENCE_NODE ||
	    v->data.sequence.items.start == v->data.sequence.items.top)
		return err(c, v, "'%s': expected a list of generators, got %s", ks,
			   v->type == YAML_SEQUENCE_NODE ? "an empty list" : what(v));
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
	     it++)
		if (generator(c, node(c, *it), &st->spec, &st->m, &st->m_node) < 0)
			return -1;
	if (!st->spec.p || !(k->o.shapes = own(k, st->spec.p)))
		return CASE_OOM;
	if (st->m.n && !(k->o.m_list = own(k, st->m.p)))
		return CASE_OOM;
	return 0;
}

/*
 * A string key that names a case or a file (name, output, results): get_str(), not empty and
 * without a control character, which would reach the terminal (--list) and file names.
 */
static int get_text(struct ctx *c, const yaml_node_t *n, const char *key, const char **out)
{
	if (get_str(c, n, key, out) < 0)
		return -1;
	if (!(*out)[0])
		return err(c, n, "'%s': empty (leave the key out for its default)", key);
	for (const unsigned char *p = (const unsigned char *)*out; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return err(c, n, "'%s': a control character (0x%02x)", key, *p);
	return 0;
}

/* name: the case's name (replacing a default) */
static int case_name(struct ctx *c, yaml_node_t *v, struct kp_suite_case *k)
{
	const char *s;
	if (get_text(c, v, case_keys[K_NAME], &s) < 0)
		return -1;
	free(k->name);
	if (!(k->name = strdup(s)))
		return CASE_OOM;
	return 0;
}

/* The option that list key @i sets in @o, and the parser of its values. */
static void list_key(int i, struct kp_capture_opts *o, int **mask,
		     const char *(**parse)(const char *, void *))
{
	switch (i) {
	case K_WORKLOADS:
		*mask = &o->workloads, *parse = capture_parse_workloads;
		break;
	case K_OPS:
		*mask = &o->mm_ops, *parse = capture_parse_mm_ops;
		break;
	case K_EPILOGUES:
		*mask = &o->epilogues, *parse = capture_parse_epilogues;
		break;
	case K_DTYPES:
		*mask = &o->dtypes, *parse = capture_parse_dtypes;
		break;
	case K_BACKENDS:
		*mask = &o->backends, *parse = capture_parse_backends;
		break;
	case K_LAYOUTS:
		*mask = &o->layouts, *parse = capture_parse_layouts;
		break;
	}
}

/* workloads, ops, epilogues, dtypes, backends, layouts: a value or a list, as on the command
 * line */
static int case_list(struct ctx *c, int i, yaml_node_t *v, struct case_st *st,
		     struct kp_suite_case *k)
{
	int *mask = NULL;
	const char *(*parse)(const char *, void *) = NULL;
	const char *why;
	list_key(i, &k->o, &mask, &parse);
	if (get_list(c, v, case_keys[i], &st->b) < 0)
		return -1;
	*mask = 0;
	if ((why = parse(st->b.p, mask)))
		return err(c, v, "invalid value '%s' for '%s': %s", st->b.p, case_keys[i], why);
	return 0;
}

/* sdpa_shapes, conv_shapes, norm_shapes: kept as text, expanded by case_expand() */
static int case_shape_set(struct ctx *c, int i, yaml_node_t *v, struct kp_suite_case *k)
{
	const char *s;
	if (get_str(c, v, case_keys[i], &s) < 0)
		return -1;
	if (!(s = own(k, s)))
		return CASE_OOM;
	*(i == K_SDPA   ? &k->o.sdpa_shapes
	  : i == K_CONV ? &k->o.conv_shapes
			: &k->o.norm_shapes) = s;
	return 0;
}

/* causal: a boolean, or one of the command line's words */
static int case_causal(struct ctx *c, yaml_node_t *v, struct kp_suite_case *k)
{
	const char *ks = case_keys[K_CAUSAL], *s, *why;
	int bv = as_bool(v);
	if (bv >= 0)
		s = bv ? "yes" : "no";
	else if (get_str(c, v, ks, &s) < 0)
		return -1;
	if ((why = capture_parse_causal(s, &k->o.causal)))
		return err(c, v, "invalid value '%s' for '%s': %s", s, ks, why);
	return 0;
}

/* kv_heads, batch, warmup, iters */
static int case_count(struct ctx *c, int i, yaml_node_t *v, struct kp_suite_case *k)
{
	long l;
	if (i == K_KVH || i == K_BATCH) {
		if (get_int(c, v, case_keys[i], 1, 1L << 20, &l) < 0)
			return -1;
		*(i == K_KVH ? &k->o.kv_heads : &k->o.batch) = l;
		return 0;
	}
	if (get_int(c, v, case_keys[i], i == K_WARMUP ? 0 : 1, 1000000, &l) < 0)
		return -1;
	*(i == K_WARMUP ? &k->o.warmup : &k->o.iters) = l;
	return 0;
}

/* torchao's keys that ask for what kprof does anyway: checked, then ignored */
static int case_torchao(struct ctx *c, int i, yaml_node_t *v)
{
	const char *ks = case_keys[i], *s;
	int ignored;
	switch (i) {
	case K_DEVICE:
	case K_MODEL_TYPE:
		/* torchao: device cuda/xpu/mps/cpu, model_type linear/ln_linear_<act>/... */
		if (get_str(c, v, ks, &s) < 0)
			return -1;
		if (strcmp(s, i == K_DEVICE ? "cuda" : "linear"))
			return err(c, v, "'%s': kprof runs '%s' only, not '%s'", ks,
				   i == K_DEVICE ? "cuda" : "linear", s);
		return 0;
	case K_SPARSITY:
		return no_sparsity(c, v, ks) < 0 ? -1 : 0;
	case K_USE_COMPILE:
	case K_PROFILER:
	case K_MEM_PROFILER:
		/* no compile step, and kprof always traces */
		return get_bool(c, v, ks, &ignored) < 0 ? -1 : 0;
	case K_COMPILE_MODE:
	case K_COMPILE:
		if (v->type != YAML_SCALAR_NODE)
			return err(c, v, "'%s': expected a scalar, got %s", ks, what(v));
		return 0;
	}
	return 0;
}

/* Key @i of a case, value @v, into @k / @st: 0, -1 (reported) or CASE_OOM. */
static int case_key(struct ctx *c, int i, yaml_node_t *v, struct case_st *st,
		    struct kp_suite_case *k)
{
	const char *ks = case_keys[i];
	switch (i) {
	case K_NAME:
		return case_name(c, v, k);
	case K_WORKLOADS:
	case K_OPS:
	case K_EPILOGUES:
	case K_DTYPES:
	case K_BACKENDS:
	case K_LAYOUTS:
		return case_list(c, i, v, st, k);
	case K_HPD:
		return hp_dtype(c, v, ks, k);
	case K_MATRIX:
		return matrix_shapes(c, v, ks, st, k);
	case K_SDPA:
	case K_CONV:
	case K_NORM:
		return case_shape_set(c, i, v, k);
	case K_CAUSAL:
		return case_causal(c, v, k);
	case K_KVH:
	case K_BATCH:
	case K_WARMUP:
	case K_ITERS:
		return case_count(c, i, v, k);
	case K_BACKWARD:
		return get_bool(c, v, ks, &k->o.backward) < 0 ? -1 : 0;
	case K_OUTPUT:
	case K_RESULTS:
		return get_text(c, v, ks, i == K_OUTPUT ? &st->output : &st->results) < 0 ? -1 : 0;
	case K_DEVICE:
	case K_MODEL_TYPE:
	case K_SPARSITY:
	case K_USE_COMPILE:
	case K_COMPILE_MODE:
	case K_COMPILE:
	case K_PROFILER:
	case K_MEM_PROFILER:
		return case_torchao(c, i, v);
	}
	return 0;
}

/* After the keys: the default name ("caseN"), output ("NAME.json") and both paths under
 * @dir; 0 or CASE_OOM. */
static int case_defaults(size_t idx, const char *dir, struct case_st *st, struct kp_suite_case *k)
{
	if (!k->name) {
		char nm[32];
		snprintf(nm, sizeof(nm), "case%zu", idx + 1);
		if (!(k->name = strdup(nm)))
			return CASE_OOM;
	}
	if (!st->output) {
		st->b.n = 0;
		if (sb_add(&st->b, "%s.json", k->name) < 0)
			return CASE_OOM;
		st->output = st->b.p;
	}
	if (!(k->o.output = in_dir(k, dir, st->output)) ||
	    (st->results && !(k->o.results = in_dir(k, dir, st->results))))
		return CASE_OOM;
	return 0;
}

/* Expand the shape sets now: a bad one is reported at its key, named as in the file
 * (at case @n when that key is absent). */
static int case_expand(struct ctx *c, yaml_node_t *n, const yaml_node_t *const *where,
		       struct kp_suite_case *k)
{
	char why[512];
	if (capture_opts_finish(&k->o, why, sizeof(why)) >= 0)
		return 0;
	static const struct {
		const char *opt;
		int key;
	} map[] = {
		{ "'--shapes'", K_MATRIX },    { "'--m'", K_MATRIX },
		{ "'--sdpa-shapes'", K_SDPA }, { "'--conv-shapes'", K_CONV },
		{ "'--norm-shapes'", K_NORM }, { "'--results'", K_RESULTS },
	};
	const yaml_node_t *at = n;
	for (size_t j = 0; j < sizeof(map) / sizeof(map[0]); j++) {
		char *o = strstr(why, map[j].opt);
		if (!o || !where[map[j].key])
			continue;
		at = where[map[j].key];
		/* "for '--sdpa-shapes'" -> "for 'sdpa_shapes'" */
		char tail[512];
		snprintf(tail, sizeof(tail), "'%s'%s", case_keys[map[j].key],
			 o + strlen(map[j].opt));
		snprintf(o, sizeof(why) - (size_t)(o - why), "%s", tail);
		break;
	}
	return err(c, at, "case '%s': %s", k->name, why);
}

static int parse_case(struct ctx *c, yaml_node_t *n, size_t idx, const char *dir,
		      struct kp_suite_case *k)
{
	if (n->type != YAML_MAPPING_NODE)
		return err(c, n, "a case is a mapping, got %s", what(n));
	struct case_st st = { 0 };
	unsigned seen = 0;
	int rc = 0;
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
	     rc == 0 && p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *key = node(c, p->key), *v = node(c, p->value);
		int i = key_index(c, key, "a case", case_keys, &seen);
		if (i < 0) {
			rc = -1;
			break;
		}
		st.where[i] = v;
		rc = case_key(c, i, v, &st, k);
	}
	if (rc == 0)
		rc = case_defaults(idx, dir, &st, k);
	if (rc == 0)
		rc = case_expand(c, n, st.where, k);
	if (rc == CASE_OOM)
		rc = err(c, n, "out of memory");
	free(st.b.p);
	free(st.spec.p);
	free(st.m.p);
	return rc;
}

enum {
	T_CASES,
	T_MODEL_PARAMS,
	T_WARMUP,
	T_ITERS,
	T_BACKWARD,
	T_MODE,
	T_OUTPUT_DIR,
	T_QUANT,
	T_SPARSITY
};
/* clang-format off */
static const char *const top_keys[] = { "cases", "model_params", "warmup", "iters", "backward",
					"benchmark_mode", "output_dir",
					"quantization_config_recipe_names",
					"sparsity_config_recipe_names", NULL };
/* clang-format on */

/* torchao's recipes: 'baseline' (the high-precision matmul) is what kprof runs */
static int baseline_only(struct ctx *c, yaml_node_t *v, const char *key)
{
	yaml_node_item_t *it = v->type == YAML_SEQUENCE_NODE ? v->data.sequence.items.start : NULL;
	yaml_node_item_t *top = it ? v->data.sequence.items.top : NULL;
	const char *r;
	for (yaml_node_t *e = it ? (it < top ? node(c, *it) : NULL) : v; e;
	     e = it && ++it < top ? node(c, *it) : NULL) {
		if (get_str(c, e, key, &r) < 0)
			return -1;
		if (strcmp(r, "baseline"))
			return err(c, e,
				   "'%s': kprof runs no quantization recipe ('%s'): only "
				   "'baseline'",
				   key, r);
	}
	return 0;
}

/* What parse_root() gathers from the config's keys besides @base's defaults. */
struct root_st {
	yaml_node_t *cases; /* a list of cases, or one case as a mapping */
	const char *dir;    /* output_dir, or NULL */
};

/* cases / model_params: a list of cases, or (torchao's README and sample) one as a mapping */
static int root_cases(struct ctx *c, int i, yaml_node_t *k, yaml_node_t *v, struct root_st *rs)
{
	if (rs->cases)
		return err(c, k, "'cases' and 'model_params' name the same list: give one");
	if (v->type != YAML_MAPPING_NODE &&
	    (v->type != YAML_SEQUENCE_NODE ||
	     v->data.sequence.items.start == v->data.sequence.items.top))
		return err(c, v, "'%s': expected a list of cases, got %s", top_keys[i],
			   v->type == YAML_SEQUENCE_NODE ? "an empty list" : what(v));
	rs->cases = v;
	return 0;
}

/* benchmark_mode: torchao's inference (forward only) or training */
static int benchmark_mode(struct ctx *c, yaml_node_t *v, struct kp_capture_opts *base)
{
	const char *str;
	if (get_str(c, v, top_keys[T_MODE], &str) < 0)
		return -1;
	if (strcmp(str, "inference") && strcmp(str, "training"))
		return err(c, v,
			   "invalid value '%s' for 'benchmark_mode': valid: "
			   "inference, training",
			   str);
	base->backward = !strcmp(str, "training");
	return 0;
}

/* Key @i of the config, value @v: a default of every case into @base, or into @rs. */
static int root_key(struct ctx *c, int i, yaml_node_t *k, yaml_node_t *v,
		    struct kp_capture_opts *base, struct root_st *rs)
{
	long l;
	switch (i) {
	case T_CASES:
	case T_MODEL_PARAMS:
		return root_cases(c, i, k, v, rs);
	case T_WARMUP:
	case T_ITERS:
		if (get_int(c, v, top_keys[i], i == T_WARMUP ? 0 : 1, 1000000, &l) < 0)
			return -1;
		*(i == T_WARMUP ? &base->warmup : &base->iters) = l;
		return 0;
	case T_BACKWARD:
		return get_bool(c, v, top_keys[i], &base->backward) < 0 ? -1 : 0;
	case T_MODE:
		return benchmark_mode(c, v, base);
	case T_OUTPUT_DIR:
		return get_str(c, v, top_keys[i], &rs->dir) < 0 ? -1 : 0;
	case T_QUANT:
		return baseline_only(c, v, top_keys[i]) < 0 ? -1 : 0;
	case T_SPARSITY:
		return no_sparsity(c, v, top_keys[i]) < 0 ? -1 : 0;
	}
	return 0;
}

/* The config's keys, in file order: 0, or -1 at the first bad one. */
static int root_keys(struct ctx *c, yaml_node_t *root, struct kp_capture_opts *base,
		     struct root_st *rs)
{
	unsigned seen = 0;
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = node(c, p->key), *v = node(c, p->value);
		int i = key_index(c, k, "the config", top_keys, &seen);
		if (i < 0 || root_key(c, i, k, v, base, rs) < 0)
			return -1;
	}
	return 0;
}

/*
 * Every file a case writes (its trace and its results) is written by no other case, and a
 * case's two differ.  @files maps each path written so far to 1 + the index of its case: one
 * lookup per file, so a suite of 100k cases is checked in linear time (the pairwise check
 * took 46 s; issue 23 item 19, bench/suite-dedupe.sh).
 */
static int distinct_files(struct ctx *c, const struct kp_suite *s, size_t i, yaml_node_t *cn,
			  struct kp_hmap *files)
{
	const struct kp_suite_case *k = &s->c[i];
	const char *f[2] = { k->o.output, k->o.results };
	const struct kp_hmap_entry *e[2] = { NULL, NULL };
	for (int j = 0; j < 2; j++)
		if (f[j])
			e[j] = hmap_get_str(files, f[j], strlen(f[j]));
	/* the earlier case first; the trace's name when one case writes both */
	int w = e[0] && (!e[1] || e[0]->val.i <= e[1]->val.i) ? 0 : e[1] ? 1 : -1;
	if (w >= 0)
		return err(c, cn, "case '%s' writes '%s', as case '%s' does", k->name, f[w],
			   s->c[e[w]->val.i - 1].name);
	if (f[1] && !strcmp(f[0], f[1]))
		return err(c, cn, "case '%s' writes its trace and results to '%s'", k->name, f[0]);
	for (int j = 0; j < 2; j++)
		if (f[j])
			hmap_put_str(files, f[j], strlen(f[j]), NULL)->val.i = (int64_t)i + 1;
	return 0;
}

/* The cases, each from @base's defaults; s->n counts those begun, for suite_free(). */
static int parse_cases(struct ctx *c, yaml_node_t *root, const struct root_st *rs,
		       const struct kp_capture_opts *base, struct kp_suite *s)
{
	yaml_node_t *cases = rs->cases;
	int one = cases->type == YAML_MAPPING_NODE;
	size_t n = one ? 1
		       : (size_t)(cases->data.sequence.items.top -
				  cases->data.sequence.items.start);
	if (!(s->c = calloc(n, sizeof(*s->c))))
		return err(c, root, "out of memory");
	struct kp_hmap files;
	hmap_init(&files, HMAP_STR);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct kp_suite_case *k = &s->c[i];
		k->o = *base;
		s->n = i + 1;
		yaml_node_t *cn = one ? cases : node(c, cases->data.sequence.items.start[i]);
		if (parse_case(c, cn, i, rs->dir, k) < 0 || distinct_files(c, s, i, cn, &files) < 0)
			rc = -1;
	}
	hmap_free(&files);
	return rc;
}

static int parse_root(struct ctx *c, yaml_node_t *root, struct kp_capture_opts *base,
		      struct kp_suite *s)
{
	if (!root)
		return diag_error(c->d, KP_USAGE,
				  "%s:1:1: error: empty config: expected a mapping "
				  "with 'cases'",
				  c->file);
	if (root->type != YAML_MAPPING_NODE)
		return err(c, root, "expected a mapping with 'cases', got %s", what(root));
	struct root_st rs = { 0 };
	if (root_keys(c, root, base, &rs) < 0)
		return -1;
	if (!rs.cases)
		return err(c, root, "no 'cases' (or 'model_params') list");
	return parse_cases(c, root, &rs, base, s);
}

/* libyaml's error, located, into @d; returns -1 */
static int syntax_error(yaml_parser_t *p, const char *file, struct kp_diag *d)
{
	yaml_mark_t mk = p->problem ? p->problem_mark : p->context_mark;
	char ctx[300] = "";
	if (p->problem && p->context)
		snprintf(ctx, sizeof(ctx), " %s at %zu:%zu", p->context, p->context_mark.line + 1,
			 p->context_mark.column + 1);
	diag_error(d, KP_USAGE, "%s:%zu:%zu: error: YAML: %s%s", file, mk.line + 1, mk.column + 1,
		   p->problem ? p->problem : "malformed", ctx);
	return -1;
}

/*
 * Before libyaml builds the document: mappings and sequences nested deeper than
 * SUITE_MAX_DEPTH (a suite needs five levels) and aliases (an alias repeats a value without
 * its text: a few bytes could stand for millions of cases) are refused at their place, by one
 * pass over the events.  A syntax error stops the pass quietly: the load reports it.
 */
static int check_events(const char *text, size_t len, const char *file, struct kp_diag *d)
{
	yaml_parser_t p;
	yaml_event_t ev;
	int depth = 0, rc = 0;
	if (!yaml_parser_initialize(&p))
		return diag_error(d, KP_ENV, "%s: error: out of memory", file);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (rc == 0 && yaml_parser_parse(&p, &ev)) {
		yaml_event_type_t t = ev.type;
		yaml_mark_t mk = ev.start_mark;
		if ((t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT) &&
		    ++depth > SUITE_MAX_DEPTH)
			rc = diag_error(d, KP_USAGE,
					"%s:%zu:%zu: error: YAML nested deeper than %d levels",
					file, mk.line + 1, mk.column + 1, SUITE_MAX_DEPTH);
		else if (t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT)
			depth--;
		else if (t == YAML_ALIAS_EVENT)
			rc = diag_error(d, KP_USAGE,
					"%s:%zu:%zu: error: YAML alias '*%.64s': a suite writes "
					"each value out",
					file, mk.line + 1, mk.column + 1,
					(const char *)ev.data.alias.anchor);
		yaml_event_delete(&ev);
		if (t == YAML_STREAM_END_EVENT)
			break;
	}
	yaml_parser_delete(&p);
	return rc;
}

int suite_parse(const char *text, size_t len, const char *file, const struct kp_capture_opts *base,
		struct kp_suite *s, struct kp_diag *d)
{
	yaml_parser_t p;
	yaml_document_t doc;
	struct ctx c = { &doc, file, d };
	struct kp_capture_opts b = *base;
	memset(s, 0, sizeof(*s));
	if (len > SUITE_MAX_BYTES)
		return diag_error(d, KP_USAGE,
				  "%s: error: %zu bytes: a suite file holds at most %d (4 MiB)", file,
				  len, SUITE_MAX_BYTES);
	if (check_events(text, len, file, d) < 0)
		return -1;
	if (!yaml_parser_initialize(&p))
		return diag_error(d, KP_ENV, "%s: error: out of memory", file);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!yaml_parser_load(&p, &doc)) {
		syntax_error(&p, file, d);
		yaml_parser_delete(&p);
		return -1;
	}
	int rc = parse_root(&c, yaml_document_get_root_node(&doc), &b, s);
	yaml_document_delete(&doc);
	/* a suite is one document: a second one is a mistake, not something to skip */
	if (rc == 0 && !yaml_parser_load(&p, &doc)) {
		rc = syntax_error(&p, file, d);
	} else if (rc == 0) {
		yaml_node_t *r2 = yaml_document_get_root_node(&doc);
		if (r2)
			rc = err(&c, r2, "a second YAML document: a suite is one document");
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&p);
	if (rc < 0)
		suite_free(s);
	return rc;
}

int suite_load(const char *path, const struct kp_capture_opts *base, struct kp_suite *s,
	       struct kp_diag *d)
{
	memset(s, 0, sizeof(*s));
	size_t len;
	char *text = sidefile_read(path, "suite", SUITE_MAX_BYTES, &len, d);
	if (!text)
		return -1;
	int rc = suite_parse(text, len, path, base, s, d);
	free(text);
	return rc;
}

void suite_free(struct kp_suite *s)
{
	for (size_t i = 0; i < s->n; i++) {
		capture_opts_free(&s->c[i].o);
		free(s->c[i].name);
		for (int j = 0; j < s->c[i].nown; j++)
			free(s->c[i].own[j]);
	}
	free(s->c);
	s->c = NULL;
	s->n = 0;
}
