/*
 * results-read.c — the results container (results_add/free) and benchmark-db records
 * (src/report/results.c's writers: a JSON array, or CSV) read back into it, for
 * `kprof analyze --results` and a capture trace's "kprof"."results" (trace.c).  Here in
 * ingest so the trace loader can read them; the table, charts and writers are in src/report.
 */
#include "kprof/results.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/arena.h"
#include "kprof/diag.h"
#include "kprof/hmap.h"
#include "kprof/input.h"
#include "kprof/json.h"
#include "kprof/utf8.h"

int results_add(struct kp_results *rs, const struct kp_result *r)
{
	if (rs->n == rs->cap) {
		size_t nc = rs->cap ? rs->cap * 2 : 32;
		struct kp_result *p = realloc(rs->r, nc * sizeof(*p));
		if (!p)
			return -1;
		rs->r = p, rs->cap = nc;
	}
	rs->r[rs->n++] = *r;
	return 0;
}

void results_free(struct kp_results *rs)
{
	free(rs->r);
	rs->r = NULL;
	rs->n = rs->cap = 0;
}

/* One record's fields, whichever format it came in. */
struct rec {
	char name[160], kind[24], dtype[16], device[64], backend[16], op[48], layout[8], mode[16],
		metric[40];
	char ok[8];
	double v, err;
	int sm_mhz, mem_mhz;
};

/* @s[0..len) into @dst, cut to fit on a UTF-8 character's boundary */
static void set(char *dst, size_t cap, const char *s, size_t len)
{
	if (len >= cap)
		len = utf8_prefix(s, len, cap - 1);
	memcpy(dst, s, len);
	dst[len] = 0;
}

/* benchmark.dtype as results.c's torch_dtype() writes it, back to kprof's spelling */
static const char *kprof_dtype(const char *d)
{
	if (!strcmp(d, "bfloat16"))
		return "bf16";
	if (!strcmp(d, "float16"))
		return "fp16";
	if (!strcmp(d, "tf32"))
		return "tf32";
	return "fp32";
}

/* The field at @path ("model.extra_info.op") of @x: a pointer to fill, or NULL. */
static char *field(struct rec *x, const char *path, size_t *cap)
{
	static const struct {
		const char *path;
		size_t off, cap;
	} f[] = {
#define F(p, m) { p, offsetof(struct rec, m), sizeof(((struct rec *)0)->m) }
		F("benchmark.dtype", dtype),
		F("benchmark_dtype", dtype),
		F("benchmark.extra_info.device", device),
		F("device", device),
		F("model.name", name),
		F("model_name", name),
		F("model.type", kind),
		F("model_type", kind),
		F("model.backend", backend),
		F("backend", backend),
		F("model.extra_info.op", op),
		F("op", op),
		F("model.extra_info.layout", layout),
		F("layout", layout),
		F("model.extra_info.pass", mode),
		F("pass", mode),
		F("model.extra_info.accuracy_ok", ok),
		F("accuracy_ok", ok),
		F("metric.name", metric),
		F("metric_name", metric),
#undef F
	};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (!strcmp(f[i].path, path)) {
			*cap = f[i].cap;
			return (char *)x + f[i].off;
		}
	return NULL;
}

/* A scalar @s[0..len) at @path of record @x. */
static void put(struct rec *x, const char *path, const char *s, size_t len)
{
	size_t cap;
	char *dst = field(x, path, &cap);
	char num[64];
	set(num, sizeof(num), s, len);
	if (dst)
		set(dst, cap, s, len);
	else if (!strcmp(path, "metric.benchmark_values") || !strcmp(path, "benchmark_value"))
		x->v = strtod(num, NULL);
	else if (!strcmp(path, "model.extra_info.accuracy_err") || !strcmp(path, "accuracy_err"))
		x->err = strtod(num, NULL);
	else if (!strcmp(path, "benchmark.extra_info.sm_clock_mhz") ||
		 !strcmp(path, "sm_clock_mhz"))
		x->sm_mhz = atoi(num);
	else if (!strcmp(path, "benchmark.extra_info.mem_clock_mhz") ||
		 !strcmp(path, "mem_clock_mhz"))
		x->mem_mhz = atoi(num);
}

/* Why record @x cannot be read (both formats), or NULL. */
static const char *rec_bad(const struct rec *x)
{
	if (!x->metric[0] || !x->backend[0])
		return "record without metric.name or model.backend";
	if (!isfinite(x->v) || x->v < 0)
		return "metric value is not a finite number >= 0";
	if (!isfinite(x->err))
		return "accuracy_err is not a finite number";
	return NULL;
}

/*
 * The records read, kept until the last one (cases_finish()), by what names a case (backend,
 * dtype, mode, op, layout, model.name): a case run twice is two cases, and which record is
 * whose is read from the order of the key's records.  Records of each metric in one stretch
 * (a CSV sorted by metric): the k-th record of a metric is the k-th case's.  Otherwise (case
 * by case, as capture writes them, including runs with different metrics): a record belongs
 * to the key's newest case, unless that case has its metric, when it starts a new one.
 */
struct prec {
	double v, err;
	uint32_t key, cs; /* index into keyv; the key's case (cases_finish) */
	uint8_t m;        /* metric_idx() */
	uint8_t failed;   /* accuracy_ok false */
};

struct kcases {
	struct rec first; /* the key's first record: every field its cases share */
	uint32_t ncases;
	size_t *res; /* per case: its result, SIZE_MAX until made */
};

struct cases {
	struct kp_hmap map; /* key -> index into keyv */
	struct kp_arena keys;
	struct kcases *keyv;
	size_t nkeys, capkeys;
	struct prec *recs;
	size_t nrecs, caprecs;
};

static void cases_free(struct cases *c)
{
	hmap_free(&c->map);
	arena_free(&c->keys);
	for (size_t i = 0; i < c->nkeys; i++)
		free(c->keyv[i].res);
	free(c->keyv);
	free(c->recs);
}

/* 1-4 for the metrics a case has, 0 for any other */
static int metric_idx(const char *metric)
{
	return !strcmp(metric, "latency (ms)")	     ? 1
	       : !strcmp(metric, "TFLOPS")	     ? 2
	       : !strcmp(metric, "bandwidth (GB/s)") ? 3
	       : !strcmp(metric, "% of DRAM peak")   ? 4
						     : 0;
}

/* The index of record @x's key in @c (added, with @x as its first record, when new); -1 out of
 * memory. */
static int64_t key_of(struct cases *c, const struct rec *x, const char *dt)
{
	char key[512];
	int klen = snprintf(key, sizeof(key), "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", x->backend, dt,
			    x->mode, x->op, x->layout, x->name);
	if (klen < 0 || klen >= (int)sizeof(key))
		klen = sizeof(key) - 1;
	int created;
	struct kp_hmap_entry *e = hmap_put_str(&c->map, key, (size_t)klen, &created);
	if (created) {
		e->key.ptr = arena_strndup(&c->keys, key, (size_t)klen);
		if (c->nkeys == c->capkeys) {
			size_t nc = c->capkeys ? 2 * c->capkeys : 64;
			struct kcases *v = realloc(c->keyv, nc * sizeof(*v));
			if (!v)
				return -1;
			c->keyv = v, c->capkeys = nc;
		}
		c->keyv[c->nkeys] = (struct kcases){ .first = *x };
		e->val.i = (int64_t)c->nkeys++;
	}
	return e->val.i;
}

/* records in one file: a key's cases and records are counted in 32 bits */
#define RESULTS_MAX_RECORDS ((size_t)1 << 30)

/* Record @x kept for cases_finish(); 0, -1 (out of memory) or -2 (past RESULTS_MAX_RECORDS). */
static int add_rec(struct kp_results *rs, struct cases *c, const struct rec *x)
{
	if (c->nrecs >= RESULTS_MAX_RECORDS)
		return -2;
	int64_t k = key_of(c, x, kprof_dtype(x->dtype));
	if (k < 0)
		return -1;
	if (c->nrecs == c->caprecs) {
		size_t nc = c->caprecs ? 2 * c->caprecs : 256;
		struct prec *v = realloc(c->recs, nc * sizeof(*v));
		if (!v)
			return -1;
		c->recs = v, c->caprecs = nc;
	}
	c->recs[c->nrecs++] = (struct prec){ .v = x->v, .err = x->err, .key = (uint32_t)k,
					     .m = (uint8_t)metric_idx(x->metric),
					     .failed = !strcmp(x->ok, "false") };
	if (!rs->device[0])
		snprintf(rs->device, sizeof(rs->device), "%s", x->device);
	if (!rs->sm_clock_mhz)
		rs->sm_clock_mhz = x->sm_mhz;
	if (!rs->mem_clock_mhz)
		rs->mem_clock_mhz = x->mem_mhz;
	return 0;
}

/* add_rec()'s failure @rc as a diagnostic */
static int add_failed(struct kp_diag *d, const char *origin, int rc)
{
	if (rc == -2)
		return diag_error(d, KP_BADINPUT, "%s: error: more than %zu records", origin,
				  RESULTS_MAX_RECORDS);
	return diag_error(d, KP_ENV, "error: out of memory reading '%s'", origin);
}

/*
 * Per key: whether its records are grouped by metric: each metric's records in one stretch
 * (no other metric inside) and as many of each.  With fewer of one metric (joined runs that
 * measured different things) the stretches cannot say which run lacks it, and the records
 * are read case by case, the order capture writes.
 */
static uint8_t *keys_grouped(const struct cases *c)
{
	uint8_t *grouped = malloc(c->nkeys + 1), *prev = calloc(c->nkeys + 1, 1);
	uint32_t(*cnt)[5] = calloc(c->nkeys + 1, sizeof(*cnt));
	if (!grouped || !prev || !cnt) {
		free(grouped), free(prev), free(cnt);
		return NULL;
	}
	memset(grouped, 1, c->nkeys + 1);
	for (size_t i = 0; i < c->nrecs; i++) {
		const struct prec *r = &c->recs[i];
		if (!r->m)
			continue;
		if (cnt[r->key][r->m]++ && prev[r->key] != r->m)
			grouped[r->key] = 0;
		prev[r->key] = r->m;
	}
	for (size_t k = 0; k < c->nkeys; k++) {
		uint32_t n = 0;
		for (int m = 1; m < 5; m++) {
			if (!cnt[k][m])
				continue;
			if (n && cnt[k][m] != n)
				grouped[k] = 0;
			n = cnt[k][m];
		}
	}
	free(prev);
	free(cnt);
	return grouped;
}

/* Each record's case (its cs), by the rule of its key's order (struct prec's comment). */
static int assign_cases(struct cases *c)
{
	uint8_t *grouped = keys_grouped(c);
	/* per key: records of each metric so far (grouped), the newest case's metrics (not) */
	uint32_t(*cnt)[5] = calloc(c->nkeys + 1, sizeof(*cnt));
	uint8_t *has = calloc(c->nkeys + 1, 1);
	if (!grouped || !cnt || !has) {
		free(grouped), free(cnt), free(has);
		return -1;
	}
	for (size_t i = 0; i < c->nrecs; i++) {
		struct prec *r = &c->recs[i];
		struct kcases *k = &c->keyv[r->key];
		if (!r->m) /* another metric: the newest case, the first if none */
			r->cs = k->ncases ? k->ncases - 1 : k->ncases++;
		else if (grouped[r->key])
			r->cs = cnt[r->key][r->m]++;
		else if (k->ncases && !(has[r->key] & (1u << r->m)))
			r->cs = k->ncases - 1;
		else
			r->cs = k->ncases++, has[r->key] = 0;
		if (r->cs >= k->ncases)
			k->ncases = r->cs + 1;
		if (r->m)
			has[r->key] |= (uint8_t)(1u << r->m);
	}
	free(grouped), free(cnt), free(has);
	return 0;
}

/* A new result for the case of record @r of key @k: the key's fields, @r's accuracy. */
static int new_case(struct kp_results *rs, const struct kcases *k, const struct prec *r)
{
	const struct rec *x = &k->first;
	struct kp_result res = { .err = r->err, .tol = r->failed ? -1 : r->err };
	snprintf(res.op, sizeof(res.op), "%s", x->op);
	snprintf(res.kind, sizeof(res.kind), "%s", x->kind);
	snprintf(res.dtype, sizeof(res.dtype), "%s", kprof_dtype(x->dtype));
	snprintf(res.backend, sizeof(res.backend), "%s", x->backend);
	snprintf(res.layout, sizeof(res.layout), "%s", x->layout);
	snprintf(res.mode, sizeof(res.mode), "%s", x->mode);
	/* model.name is "kind-shape[-layout]" (results.c's model_name()) */
	const char *sh = x->name;
	size_t kl = strlen(x->kind), ll = strlen(x->layout), n = strlen(sh);
	if (kl && !strncmp(sh, x->kind, kl) && sh[kl] == '-')
		sh += kl + 1, n -= kl + 1;
	if (ll && n > ll + 1 && sh[n - ll - 1] == '-' && !strcmp(sh + n - ll, x->layout))
		n -= ll + 1;
	set(res.shape, sizeof(res.shape), sh, n);
	return results_add(rs, &res);
}

/* The cases of every record read, in the order of their first records; 0 or -1 (memory). */
static int cases_finish(struct kp_results *rs, struct cases *c)
{
	if (assign_cases(c) < 0)
		return -1;
	for (size_t i = 0; i < c->nkeys; i++) {
		struct kcases *k = &c->keyv[i];
		k->res = malloc((k->ncases + 1) * sizeof(*k->res));
		if (!k->res)
			return -1;
		memset(k->res, 0xff, (k->ncases + 1) * sizeof(*k->res));
	}
	for (size_t i = 0; i < c->nrecs; i++) {
		const struct prec *r = &c->recs[i];
		struct kcases *k = &c->keyv[r->key];
		if (k->res[r->cs] == SIZE_MAX) {
			if (new_case(rs, k, r) < 0)
				return -1;
			k->res[r->cs] = rs->n - 1;
		}
		struct kp_result *res = &rs->r[k->res[r->cs]];
		if (r->m == 1)
			res->ms = r->v;
		else if (r->m == 2)
			res->tflops = r->v;
		else if (r->m == 3)
			res->gbs = r->v;
		else if (r->m == 4)
			res->peak_pct = r->v;
	}
	return 0;
}

/* ---- JSON: an array of nested records ---- */

static int json_fail(struct kp_json *p, const char *origin, struct kp_diag *d, const char *why,
		     int64_t off)
{
	int line, col;
	json_locate(p, off, &line, &col);
	return diag_error(d, KP_BADINPUT, "%s:%d:%d: error: %s", origin, line, col, why);
}

/* The members of the object just opened, their scalars put() under @path. */
static int walk(struct kp_json *p, struct rec *x, char *path, size_t plen, int in_array)
{
	struct kp_json_tok tk;
	for (;;) {
		size_t l = plen;
		enum kp_json_type ty = json_next(p, &tk);
		if (ty == JT_OBJ_END || ty == JT_ARR_END)
			return 0;
		if (!in_array) {
			if (ty != JT_KEY)
				return -1;
			if (plen + tk.len + 2 < 256) {
				if (plen)
					path[l++] = '.';
				memcpy(path + l, tk.s, tk.len);
				l += tk.len;
			}
			path[l] = 0;
			ty = json_next(p, &tk);
		}
		if (ty == JT_ERROR)
			return -1;
		if (ty == JT_OBJ || ty == JT_ARR) {
			if (walk(p, x, path, l, ty == JT_ARR) < 0)
				return -1;
		} else if (ty == JT_STR && tk.escaped) {
			char u[256];
			put(x, path, u, json_unescape(tk.s, tk.len, u, sizeof(u)));
		} else if (ty == JT_STR || ty == JT_NUM || ty == JT_TRUE || ty == JT_FALSE) {
			put(x, path, tk.s, tk.len);
		}
		path[plen] = 0;
	}
}

static int json_records(struct kp_results *rs, struct cases *c, struct kp_json *p,
			const char *origin, struct kp_diag *d)
{
	struct kp_json_tok tk;
	for (;;) {
		enum kp_json_type ty = json_next(p, &tk);
		if (ty == JT_ARR_END)
			return 0;
		if (ty != JT_OBJ)
			return json_fail(p, origin, d,
					 ty == JT_ERROR ? p->err : "expected a record object",
					 ty == JT_ERROR ? p->err_off : tk.off);
		struct rec x = { 0 };
		char path[256] = "";
		int64_t at = tk.off;
		if (walk(p, &x, path, 0, 0) < 0)
			return json_fail(p, origin, d, p->err ? p->err : "malformed record",
					 p->err ? p->err_off : at);
		const char *bad = rec_bad(&x);
		if (bad)
			return json_fail(p, origin, d, bad, at);
		int added = add_rec(rs, c, &x);
		if (added < 0)
			return add_failed(d, origin, added);
	}
}

static int read_json(struct kp_results *rs, const char *s, size_t len, const char *origin,
		     struct kp_diag *d)
{
	struct kp_json p;
	struct kp_json_tok tk;
	json_init_mem(&p, s, len);
	int rc;
	enum kp_json_type ty = json_next(&p, &tk);
	if (ty != JT_ARR)
		rc = json_fail(&p, origin, d,
			       ty == JT_ERROR ? p.err : "expected an array of benchmark records",
			       ty == JT_ERROR ? p.err_off : tk.off);
	else
		rc = results_read_json(rs, &p, origin, d);
	json_free(&p);
	return rc;
}

/* ---- CSV: a header row and one record a line (RFC 4180 quoting) ---- */

/* The next field at *@s into @buf; 1 when it ended the line, 0 more follow, -1 bad quoting. */
static int csv_next(const char **s, const char *end, char *buf, size_t cap)
{
	size_t n = 0;
	const char *p = *s;
	int q = p < end && *p == '"', quoted = q;
	if (q)
		p++;
	for (; p < end; p++) {
		if (q && *p == '"') {
			if (p + 1 < end && p[1] == '"') {
				p++;
			} else {
				q = 0;
				continue;
			}
		} else if (!q && (*p == ',' || *p == '\n' || *p == '\r')) {
			break;
		}
		if (n + 1 < cap)
			buf[n++] = *p;
	}
	buf[n] = 0;
	if (q)
		return -1;
	/* a field kprof quoted as a would-be formula ("'=...": table_csv_field) reads as written */
	if (quoted && buf[0] == '\'' && utf8_csv_formula(buf + 1))
		memmove(buf, buf + 1, n);
	int eol = p >= end || *p != ',';
	if (p < end && *p == '\r')
		p++;
	*s = p < end ? p + 1 : p;
	return eol;
}

#define CSV_COLS 32

int results_read_json(struct kp_results *rs, struct kp_json *p, const char *origin,
		      struct kp_diag *d)
{
	struct cases c = { .map = { 0 } };
	hmap_init(&c.map, HMAP_STR);
	arena_init(&c.keys);
	int rc = json_records(rs, &c, p, origin, d);
	if (rc == 0 && cases_finish(rs, &c) < 0)
		rc = diag_error(d, KP_ENV, "error: out of memory reading '%s'", origin);
	cases_free(&c);
	return rc;
}

static int read_csv_with(struct kp_results *rs, struct cases *cs, const char *s, size_t len,
			 const char *origin, struct kp_diag *d)
{
	const char *p = s, *end = s + len;
	char head[CSV_COLS][40], buf[256];
	int nh = 0, line = 1, e = 0;
	while (nh < CSV_COLS && (e = csv_next(&p, end, head[nh], sizeof(head[0]))) == 0)
		nh++;
	if (e < 0 || nh >= CSV_COLS || strcmp(head[0], "benchmark_name"))
		return diag_error(d, KP_BADINPUT,
				  "%s:1:1: error: expected a benchmark-db CSV header "
				  "(benchmark_name,...)",
				  origin);
	nh++;
	while (p < end) {
		line++;
		struct rec x = { 0 };
		int c = 0;
		for (;; c++) {
			e = csv_next(&p, end, buf, sizeof(buf));
			if (e < 0)
				return diag_error(d, KP_BADINPUT, "%s:%d: error: unterminated quote",
						  origin, line);
			if (c < nh)
				put(&x, head[c], buf, strlen(buf));
			if (e)
				break;
		}
		if (c == 0 && !buf[0])
			continue; /* a blank line */
		if (c + 1 != nh)
			return diag_error(d, KP_BADINPUT,
					  "%s:%d: error: %d fields where the header has %d", origin,
					  line, c + 1, nh);
		const char *bad = rec_bad(&x);
		if (bad)
			return diag_error(d, KP_BADINPUT, "%s:%d: error: %s", origin, line, bad);
		int added = add_rec(rs, cs, &x);
		if (added < 0)
			return add_failed(d, origin, added);
	}
	return 0;
}

static int read_csv(struct kp_results *rs, const char *s, size_t len, const char *origin,
		    struct kp_diag *d)
{
	struct cases c = { .map = { 0 } };
	hmap_init(&c.map, HMAP_STR);
	arena_init(&c.keys);
	int rc = read_csv_with(rs, &c, s, len, origin, d);
	if (rc == 0 && cases_finish(rs, &c) < 0)
		rc = diag_error(d, KP_ENV, "error: out of memory reading '%s'", origin);
	cases_free(&c);
	return rc;
}

int results_read(struct kp_results *rs, const char *s, size_t len, const char *origin,
		 struct kp_diag *d)
{
	size_t i = 0;
	while (i < len && strchr(" \t\r\n", s[i]))
		i++;
	if (i < len && s[i] == '[')
		return read_json(rs, s, len, origin, d);
	return read_csv(rs, s, len, origin, d);
}

int results_load(struct kp_results *rs, const char *path, struct kp_diag *d)
{
	struct kp_input in;
	if (input_open(&in, path, d) < 0)
		return -1;
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	ssize_t got = 0;
	while (buf && (got = input_read(&in, buf + len, cap - len, d)) > 0) {
		len += (size_t)got;
		if (len == cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb, cap *= 2;
		}
	}
	int rc = -1;
	if (!buf)
		diag_error(d, KP_ENV, "error: out of memory reading '%s'", in.name);
	else if (got == 0)
		rc = results_read(rs, buf, len, in.name, d);
	free(buf);
	input_close(&in);
	return rc;
}
