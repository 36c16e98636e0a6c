/*
 * trace.c — Chrome/Kineto trace JSON -> struct kp_trace, one streaming pass: the loader.
 *
 * Opens the input (input.c: gzip, zstd, stdin), walks the document's top-level keys
 * (traceEvents, deviceProperties, baseTimeNanoseconds, kprof, distributedInfo), hands each
 * event to src/ingest/trace-decode.c and, with --jobs, runs the chunk engine of src/ingest/trace-chunk.c;
 * then truncation, --strict and the trace's lifetime (trace_load / trace_free).
 */
#include "kprof/trace-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct kp_opx kp_opx_none = { -1, -1, -1, -1, -1 };

struct kp_opx *trace_opx_of(const struct kp_trace *t, const struct kp_op *op)
{
	int32_t i = (int32_t)(op - t->ops);
	size_t a = 0, b = t->nopx;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (t->opx[mid].op < i)
			a = mid + 1;
		else
			b = mid;
	}
	return a < t->nopx && t->opx[a].op == i ? &t->opx[a] : NULL;
}
const struct kp_gpux kp_gpux_none = { -1, -1, -1, -1, -1, 0 };

static ssize_t read_cb(void *ctx, void *buf, size_t cap)
{
	struct loader *L = ctx;
	if (L->par)
		return trace_par_read(L, buf, cap);
	ssize_t n = input_read(&L->in, buf, cap, &L->read_diag);
	if (n < 0)
		L->read_err = 1;
	return n;
}

/*
 * The elements of an event array, its '[' just read at @arr_off (@what names it in errors).
 * A non-empty array with no object in it is not a trace: "not a Chrome trace: ...".
 */
static int parse_event_array(struct loader *L, int64_t arr_off, const char *what)
{
	struct kp_json_tok tk;
	int64_t nobj = 0, nother = 0, first_other = arr_off;
	L->has_events = 1;
	for (;;) {
		/* parallel: take the chunks parsed ahead that start where the parser stands */
		if (L->par)
			nobj += trace_par_sync(L);
		enum kp_json_type ty = json_next(&L->p, &tk);
		if (ty == JT_ARR_END)
			break;
		if (ty == JT_ERROR)
			return -1;
		if (ty == JT_OBJ) {
			nobj++;
			/* its warnings name where it starts, however long it is */
			L->p.pin = tk.off;
			int rc = trace_parse_event(L, tk.off);
			L->p.pin = -1;
			if (rc < 0)
				return -1;
			continue;
		}
		if (ty == JT_ARR && json_skip_rest(&L->p) < 0)
			return -1;
		if (nother++ == 0)
			first_other = tk.off;
		L->t->nevents++;
		trace_skip_malformed(L, tk.off, "not an object");
	}
	if (L->par)
		trace_par_nowork(L->par);
	if (nother && !nobj) {
		/* not a trace: the per-element warnings would only repeat the error */
		diag_warn_free(&L->t->warn);
		char loc[512];
		trace_locate(L, first_other, loc, sizeof(loc));
		return diag_error(L->d, KP_BADINPUT,
				  "%s: error: not a Chrome trace: %s holds no event objects", loc,
				  what);
	}
	return 0;
}

static int parse_events(struct loader *L)
{
	struct kp_json_tok tk;
	enum kp_json_type ty = json_next(&L->p, &tk);
	if (ty == JT_ERROR)
		return -1;
	if (ty != JT_ARR) {
		char loc[512];
		trace_locate(L, tk.off, loc, sizeof(loc));
		return diag_error(L->d, KP_BADINPUT,
				  "%s: error: not a Chrome trace: 'traceEvents' is not an array",
				  loc);
	}
	return parse_event_array(L, tk.off, "'traceEvents'");
}

/* The next entry of t->devs, zeroed, its id its index until an "id" member says otherwise. */
static struct kp_devprop *new_devprop(struct kp_trace *t)
{
	if (t->ndevs == t->capdevs) {
		t->capdevs = t->capdevs ? t->capdevs * 2 : 8;
		t->devs = xrealloc(t->devs, t->capdevs * sizeof(*t->devs));
	}
	struct kp_devprop *dp = &t->devs[t->ndevs++];
	memset(dp, 0, sizeof(*dp));
	dp->id = t->ndevs - 1;
	return dp;
}

/* A number member into an int field (when it is a number); the reader's result. */
static int devprop_int(struct loader *L, int *dst)
{
	int64_t v;
	int r = trace_read_int(L, 0, &v);
	if (r > 0)
		*dst = (int)v;
	return r;
}

/* One member of a deviceProperties entry (Kineto's names, and CUDA's where they differ). */
static int devprop_member(struct loader *L, struct kp_devprop *dp, struct kp_json_tok *tk)
{
	int r = 0;
	if (TOK_IS(tk, "name")) {
		/* kept whole nowhere: a name past DEVNAME_MAX is cut, its rest skipped */
		char name[DEVNAME_MAX + 1], loc[512];
		int cut;
		trace_locate(L, tk->off, loc, sizeof(loc)); /* the key: still in the window */
		enum kp_json_type ty = json_str_capped(&L->p, tk, name, sizeof(name), &cut);
		if (ty == JT_OBJ || ty == JT_ARR)
			return json_skip_rest(&L->p) < 0 ? -1 : 0;
		if (ty != JT_STR)
			return ty == JT_ERROR ? -1 : 0;
		dp->name = trace_intern_tok(L, tk);
		if (cut)
			diag_warn_add(&L->t->warn, "long device names", loc,
				"device name longer than %d bytes; cut to '%.*s'", DEVNAME_MAX,
				NAME80(dp->name));
		return 1;
	}
	if (TOK_IS(tk, "id"))
		return devprop_int(L, &dp->id);
	if (TOK_IS(tk, "numSms") || TOK_IS(tk, "multiProcessorCount"))
		return devprop_int(L, &dp->sms);
	if (TOK_IS(tk, "computeMajor") || TOK_IS(tk, "major"))
		return devprop_int(L, &dp->cc_major);
	if (TOK_IS(tk, "computeMinor") || TOK_IS(tk, "minor"))
		return devprop_int(L, &dp->cc_minor);
	if (TOK_IS(tk, "totalGlobalMem")) {
		int64_t v;
		if ((r = trace_read_int(L, 0, &v)) > 0)
			dp->total_mem = v; /* any value (int_member()'s INT64_MIN) */
		return r;
	}
	if (TOK_IS(tk, "clockRate"))
		return devprop_int(L, &dp->clock_khz);
	if (TOK_IS(tk, "memoryClockRate"))
		return devprop_int(L, &dp->mem_clock_khz);
	if (TOK_IS(tk, "memoryBusWidth"))
		return devprop_int(L, &dp->bus_bits);
	return json_skip(&L->p);
}

/* The members of one deviceProperties entry; its '{' was just read. */
static int read_devprop(struct loader *L, struct kp_devprop *dp)
{
	struct kp_json_tok tk;
	for (;;) {
		enum kp_json_type ty = json_key(&L->p, &tk);
		if (ty == JT_OBJ_END)
			return 0;
		if (ty != JT_KEY || devprop_member(L, dp, &tk) < 0)
			return -1;
	}
}

/* "deviceProperties": an array of objects (other elements skipped); anything else ignored. */
static int parse_devprops(struct loader *L)
{
	struct kp_json_tok tk;
	enum kp_json_type ty = json_next(&L->p, &tk);
	if (ty != JT_ARR)
		return ty == JT_ERROR ? -1 : (ty == JT_OBJ ? json_skip_rest(&L->p) : 0);
	for (;;) {
		ty = json_next(&L->p, &tk);
		if (ty == JT_ARR_END)
			return 0;
		if (ty == JT_ERROR)
			return -1;
		if (ty == JT_OBJ) {
			if (read_devprop(L, new_devprop(L->t)) < 0)
				return -1;
		} else if (ty == JT_ARR && json_skip_rest(&L->p) < 0) {
			return -1;
		}
	}
}

/* "kprof"."results": the benchmark-db records capture.c writes (results_read_json()) */
static int read_results(struct loader *L)
{
	struct kp_json_tok tk;
	enum kp_json_type ty = json_next(&L->p, &tk);
	if (ty == JT_ERROR)
		return -1;
	if (ty != JT_ARR)
		return ty == JT_OBJ ? json_skip_rest(&L->p) : 0;
	if (results_read_json(&L->t->kprof_results, &L->p, L->t->display, &L->read_diag) < 0) {
		L->read_err = 1;
		return -1;
	}
	return 0;
}

static int parse_kprof_meta(struct loader *L)
{
	struct kp_trace *t = L->t;
	struct kp_json_tok tk;
	enum kp_json_type ty = json_next(&L->p, &tk);
	if (ty != JT_OBJ)
		return ty == JT_ERROR ? -1 : (ty == JT_ARR ? json_skip_rest(&L->p) : 0);
	t->kprof_trace = 1;
	for (;;) {
		ty = json_next(&L->p, &tk);
		if (ty == JT_OBJ_END)
			return 0;
		if (ty != JT_KEY)
			return -1;
		int r = 0;
		int64_t v;
		if (TOK_IS(&tk, "clock")) {
			if ((r = trace_read_str(L, &tk)) > 0)
				t->kprof_clock_known = TOK_IS(&tk, "nvml");
		} else if (TOK_IS(&tk, "sm_clock_max_mhz")) {
			if ((r = trace_read_int(L, 0, &v)) > 0)
				t->kprof_sm_clock_max_mhz = (int)v;
		} else if (TOK_IS(&tk, "results")) {
			r = read_results(L);
		} else {
			r = json_skip(&L->p);
		}
		if (r < 0)
			return -1;
	}
}

/* distributedInfo: rank, world_size, backend (written by torch.profiler when c10d is up). */
static int parse_distributed(struct loader *L)
{
	struct kp_trace *t = L->t;
	struct kp_json_tok tk;
	enum kp_json_type ty = json_next(&L->p, &tk);
	if (ty != JT_OBJ)
		return ty == JT_ERROR ? -1 : (ty == JT_ARR ? json_skip_rest(&L->p) : 0);
	for (;;) {
		ty = json_key(&L->p, &tk);
		if (ty == JT_OBJ_END)
			return 0;
		if (ty != JT_KEY)
			return -1;
		int r;
		int64_t v;
		if (TOK_IS(&tk, "rank")) {
			if ((r = trace_read_int(L, 0, &v)) > 0 && v >= 0)
				t->rank = v;
		} else if (TOK_IS(&tk, "world_size")) {
			if ((r = trace_read_int(L, 0, &v)) > 0 && v > 0)
				t->world_size = v;
		} else if (TOK_IS(&tk, "backend")) {
			if ((r = trace_read_str(L, &tk)) > 0)
				t->backend = trace_intern_tok(L, &tk);
		} else {
			r = json_skip(&L->p);
		}
		if (r < 0)
			return -1;
	}
}

/* The first token failed on bytes that start no JSON value: not JSON at all (a README). */
static int not_json(struct loader *L)
{
	struct kp_json *p = &L->p;
	if (L->read_err || !p->err || p->err_eof || p->err_off < p->base ||
	    p->err_off >= p->base + (int64_t)p->end)
		return -1; /* the JSON error, or empty input, as it stands */
	int64_t at = p->err_off;
	while (at > p->base && !strchr(" \t\r\n", p->buf[at - 1 - p->base]))
		at--; /* "nul", "+1", "tru x": from the token's first byte */
	unsigned char c = (unsigned char)p->buf[at - p->base];
	char loc[512], found[16];
	trace_locate(L, at, loc, sizeof(loc));
	if (c > 0x20 && c < 0x7f)
		snprintf(found, sizeof(found), "'%c'", c);
	else
		snprintf(found, sizeof(found), "byte 0x%02x", c);
	return diag_error(L->d, KP_BADINPUT,
			  "%s: error: not a JSON trace: expected '{' or '[', found %s", loc, found);
}

static int parse_document(struct loader *L)
{
	struct kp_json_tok tk;
	enum kp_json_type ty = json_next(&L->p, &tk);
	if (ty == JT_ERROR)
		return not_json(L);
	if (ty == JT_ARR) {
		/* the JSON Array Format: a bare list of events */
		if (parse_event_array(L, tk.off, "the top-level array") < 0)
			return -1;
	} else if (ty == JT_OBJ) {
		for (;;) {
			ty = json_next(&L->p, &tk);
			if (ty == JT_OBJ_END)
				break;
			if (ty != JT_KEY)
				return -1;
			int r;
			if (TOK_IS(&tk, "traceEvents")) {
				r = parse_events(L);
			} else if (TOK_IS(&tk, "deviceProperties") ||
				   TOK_IS(&tk, "computeProperties")) {
				/* PyTorch 1.8 (2021) wrote computeProperties with multiProcessorCount,
				 * major, minor (pytorch/kineto tb_plugin/test/gpu_metrics_input.json) */
				r = parse_devprops(L);
			} else if (TOK_IS(&tk, "baseTimeNanoseconds")) {
				int64_t v;
				r = trace_read_int(L, 0, &v);
				if (r > 0) {
					L->t->base_ns = v;
					L->t->has_base = 1;
				}
			} else if (TOK_IS(&tk, "kprof")) {
				r = parse_kprof_meta(L);
			} else if (TOK_IS(&tk, "distributedInfo")) {
				r = parse_distributed(L);
			} else {
				r = json_skip(&L->p);
			}
			if (r < 0)
				return -1;
		}
	} else {
		char loc[512];
		trace_locate(L, tk.off, loc, sizeof(loc));
		return diag_error(
			L->d, KP_BADINPUT,
			"%s: error: not a Chrome trace: expected an object or array at the top level",
			loc);
	}
	ty = json_next(&L->p, &tk);
	if (ty != JT_END)
		return -1;
	if (!L->has_events)
		return diag_error(
			L->d, KP_BADINPUT,
			"%s: error: not a Chrome trace: no 'traceEvents' array in the top-level object",
			L->t->display);
	return 0;
}

/*
 * The JSON document is whole but the gzip (zstd) file around it was cut (in its last block or
 * trailer, so the CRC (checksum) was never checked): a warning, an error under --strict.
 */
static void gzip_cut_after_json(struct loader *L, const struct kp_load_opts *o)
{
	struct kp_trace *t = L->t;
	if (o && o->strict) {
		diag_error(L->d, KP_BADINPUT,
			   "%s: error: %s data ends early at compressed byte %lld, after decompressed byte %lld (--strict)",
			   t->display, L->in.codec, L->in.trunc_raw, L->in.trunc_out);
		return;
	}
	diag_warn_add(
		&t->warn, "truncated traces", t->display,
		"%s data ends early at compressed byte %lld, after decompressed byte %lld; the JSON in it is complete",
		L->in.codec, L->in.trunc_raw, L->in.trunc_out);
}

/* An empty trace named after @path, with its arena, string table and options. */
static void trace_begin(struct kp_trace *t, const char *path, const struct kp_load_opts *o,
			struct kp_diag *d)
{
	memset(t, 0, sizeof(*t));
	t->warn.all = o && o->warn_all;
	d->msg[0] = '\0';
	arena_init(&t->arena);
	strtab_init(&t->strs, &t->arena);
	t->path = arena_strdup(&t->arena, path);
	t->display = strcmp(path, "-") ? t->path : "<stdin>";
	t->rank = t->world_size = -1;
	t->jobs = o && o->jobs > 1 ? o->jobs : 1;
}

/* The loader of @t over its open input, or NULL (diagnosed) when the input cannot open. */
static struct loader *loader_open(struct kp_trace *t, const char *path,
				  const struct kp_load_opts *o, struct kp_diag *d)
{
	struct loader *L = xcalloc(1, sizeof(*L));
	L->t = t;
	L->d = d;
	L->annotations = o && o->annotations;
	if (input_open(&L->in, path, d) < 0) {
		free(L);
		return NULL;
	}
	hmap_init(&L->threads, HMAP_STR);
	L->last_thread = -1;
	hmap_init(&L->names, HMAP_PTR);
	hmap_init(&L->slots, HMAP_STR);
	hmap_init(&L->cache, HMAP_STR);
	L->arena = &t->arena;
	json_init(&L->p, read_cb, L, TRACE_JSON_WINDOW);
	return L;
}

/* The document, by one thread or with par.c's workers; their stats into @o. */
static int parse_all(struct loader *L, const struct kp_load_opts *o)
{
	struct par_plan plan;
	if (o && trace_par_plan(&L->in, o, &plan))
		trace_par_start(L, &plan);
	int rc = parse_document(L);
	if (o && o->stats)
		memset(o->stats, 0, sizeof(*o->stats));
	if (L->par)
		trace_par_stop(L, o->stats);
	return rc;
}

/*
 * A profiler killed mid-write: keep the complete events with a warning (0), or refuse
 * them under --strict (@rc).
 */
static int keep_truncated(struct loader *L, const struct kp_load_opts *o, int rc)
{
	struct kp_trace *t = L->t;
	t->truncated = 1;
	t->trunc_off = L->p.err_off;
	char loc[512], gz[160] = "";
	trace_locate(L, L->p.err_off, loc, sizeof(loc));
	if (L->in.truncated)
		snprintf(gz, sizeof(gz),
			 " (decompressed; the %s data ends at compressed byte %lld)", L->in.codec,
			 L->in.trunc_raw);
	if (o && o->strict) {
		diag_error(L->d, KP_BADINPUT,
			   "%s: error: trace is truncated at byte %lld%s (--strict)", loc,
			   (long long)L->p.err_off, gz);
		return rc;
	}
	diag_warn_add(
		&t->warn, "truncated traces", loc,
		"trace is truncated at byte %lld%s; analyzed the %lld complete event%s that end%s before byte %lld",
		(long long)L->p.err_off, gz, (long long)t->nevents, t->nevents == 1 ? "" : "s",
		t->nevents == 1 ? "s" : "", (long long)L->last_good_off);
	return 0;
}

/* A parse that failed without a message: a truncated trace, else the JSON error. */
static int explain_failure(struct loader *L, const struct kp_load_opts *o, int rc)
{
	if (!L->read_err && L->p.err_eof && L->t->nevents > 0)
		return keep_truncated(L, o, rc);
	trace_json_fail(L);
	return rc;
}

/* The bytes read, a cut gzip stream after the JSON, and --strict's refusal of anomalies. */
static int finish_load(struct loader *L, const struct kp_load_opts *o, int rc)
{
	struct kp_trace *t = L->t;
	struct kp_diag *d = L->d;
	t->bytes = L->p.base + (int64_t)L->p.end;
	if (rc == 0 && L->in.truncated && !t->truncated)
		gzip_cut_after_json(L, o);
	rc = rc == 0 && d->msg[0] ? -1 : rc;
	if (rc == 0 && o && o->strict && diag_warn_total(&t->warn) > 0)
		rc = diag_error(d, KP_BADINPUT,
				"%s: error: %ld data anomalies (--strict); first: %s", t->display,
				diag_warn_total(&t->warn),
				t->warn.k[0].shown[0] ? t->warn.k[0].shown[0] : "");
	return rc;
}

static void loader_close(struct loader *L)
{
	json_free(&L->p);
	input_close(&L->in);
	free(L->scratch[0]);
	free(L->scratch[1]);
	hmap_free(&L->threads);
	free(L->open);
	hmap_free(&L->names);
	hmap_free(&L->slots);
	hmap_free(&L->cache);
	free(L);
}

int trace_load(struct kp_trace *t, const char *path, const struct kp_load_opts *o,
	       struct kp_diag *d)
{
	trace_begin(t, path, o, d);
	struct loader *L = loader_open(t, path, o, d);
	if (!L)
		return -1;
	int rc = parse_all(L, o);
	if (rc < 0 && d->msg[0] == '\0')
		rc = explain_failure(L, o, rc);
	rc = finish_load(L, o, rc);
	/* B without E: give them zero duration rather than dropping them */
	loader_close(L);
	return rc;
}
