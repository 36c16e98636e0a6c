/*
 * trace.c — Chrome/Kineto trace JSON -> struct kp_trace, one streaming pass.
 *
 * Each element of traceEvents is read key by key; categories nobody needs are
 * skipped with json_skip_rest() as soon as "cat" is known, args keys outside a
 * whitelist are skipped without building anything, and a record is appended only
 * when its event is complete, so a truncated file keeps every whole event.
 */
#include "kprof/trace.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/dtype.h"
#include "kprof/hmap.h"
#include "kprof/input.h"
#include "kprof/json.h"
#include "kprof/utf8.h"

/* "%.*s" arguments: a name cut to at most 80 bytes, never inside a UTF-8 sequence */
#define NAME80(s) (int)utf8_prefix((s), strlen(s), 80), (s)

enum cat {
	CAT_NONE = 0, /* absent */
	CAT_SKIP,     /* a category kprof does not need */
	CAT_OP,
	CAT_ANNOT,
	CAT_LAUNCH,
	CAT_KERNEL,
	CAT_MEMCPY,
	CAT_MEMSET,
	CAT_RANGE,    /* cuda_profiler_range: measured counters, no time */
};

/* 1 MB: RSS, not speed, changes with it.  tests/fuzz/run.sh builds with a small window, so the
 * refill and locate paths run on every input. */
#ifndef TRACE_JSON_WINDOW
#define TRACE_JSON_WINDOW (1u << 20)
#endif

#define MAX_SLOTS 128
#define MAX_DIMS 1024
#define MAX_LIST 256

/* The fields of one event being read; reset per event. */
struct ev {
	char ph;
	enum cat cat;
	const char *name;
	int64_t pid, tid;
	uint8_t pid_str, tid_str, has_pid, has_tid;
	int64_t ts, dur;
	uint8_t has_ts, has_dur;
	int64_t ext_id, corr, device, stream, bytes, kernel_flop;
	int64_t seq;            /* "Sequence number" */
	double kernel_num_gb;
	int64_t mflops, mbytes;  /* "kprof measured flops", "kprof dram bytes" */
	int32_t sm_clock_mhz;
	int8_t prec_hint;
	int64_t range_flops[3]; /* CAT_RANGE: fp64, fp32, fp16; -1 none */
	const char *bad;        /* why the event is malformed (skipped and warned), or NULL */
	const char *coll, *coll_dtype; /* kernels: "Collective name", "dtype" */
	int64_t coll_in, coll_out, coll_group;
	/* shapes: counts first, so the memset up to slot_ndim resets them */
	int nslots_dims, nslots_type, nslots_conc;
	int ndims_used;
	int shapes_overflow;
	int nlist_used;
	int slot_ndim[MAX_SLOTS];
	int slot_nlist[MAX_SLOTS];   /* TensorList: tensors in the slot */
	int slot_list0[MAX_SLOTS];   /* TensorList: first entry in list_* */
	int list_ndim[MAX_LIST];
	int list_dim0[MAX_LIST];
	int slot_dim0[MAX_SLOTS];
	int64_t dims[MAX_DIMS];
	enum kp_dtype slot_type[MAX_SLOTS];
	const char *slot_conc[MAX_SLOTS];
};

struct loader {
	struct kp_trace *t;
	int annotations;     /* keep user annotations (kp_load_opts) */
	struct kp_json p;
	struct kp_input in;
	struct kp_diag *d;
	struct kp_diag read_diag;
	int read_err;
	char *scratch[2];    /* unescape and utf8_clean buffers */
	size_t scratch_cap[2];
	/* (pid, tid, pid_str, tid_str) bytes (copies in t->arena) -> index into t->threads */
	struct kp_hmap threads;
	int32_t last_thread;   /* index of the last thread_index() answer, -1 none */
	/* B/E pairing: stack of open ops (index into t->ops) */
	int32_t *open;
	size_t nopen, capopen;
	int64_t last_good_off; /* offset just past the last complete event */
	int has_events;        /* a traceEvents array (or the array form) was seen */
	/* interned op name -> name_info() flags: shapes are kept only for modelled ops */
	struct kp_hmap names;
	/* serialized slots (copies in t->arena) -> shared decoded array (see copy_slots) */
	struct kp_hmap slots;
	unsigned char enc[16384];
};

static struct kp_slot *decode_new(struct loader *L, struct ev *e, int n);

static const char empty_str[] = "";

#define VEC_PUSH(vec, n, cap)                                                   \
	((n) == (cap) ? ((cap) = (cap) ? (cap) * 2 : 256,                       \
			 (vec) = xrealloc((vec), (cap) * sizeof(*(vec))), &(vec)[(n)++]) \
		      : &(vec)[(n)++])

static ssize_t read_cb(void *ctx, void *buf, size_t cap)
{
	struct loader *L = ctx;
	ssize_t n = input_read(&L->in, buf, cap, &L->read_diag);
	if (n < 0)
		L->read_err = 1;
	return n;
}

static void locate(struct loader *L, int64_t off, char *buf, size_t cap)
{
	int line, col;
	json_locate(&L->p, off, &line, &col);
	snprintf(buf, cap, "%s:%d:%d", L->t->display, line, col);
}

static void warn_at(struct loader *L, int64_t off, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void warn_at(struct loader *L, int64_t off, const char *kind, const char *fmt, ...)
{
	char loc[512], msg[768];
	locate(L, off, loc, sizeof(loc));
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag_warn_add(&L->t->warn, kind, loc, "%s", msg);
}

static int json_fail(struct loader *L)
{
	if (L->read_err) {
		*L->d = L->read_diag;
		return -1;
	}
	char loc[512];
	locate(L, L->p.err_off, loc, sizeof(loc));
	return diag_error(L->d, KP_BADINPUT, "%s: error: %s", loc, L->p.err ? L->p.err : "bad JSON");
}

/* Room for @n bytes in one of the two scratch buffers. */
static char *scratch(struct loader *L, int which, size_t n)
{
	if (L->scratch_cap[which] < n) {
		L->scratch_cap[which] = n > 4096 ? n : 4096;
		L->scratch[which] = xrealloc(L->scratch[which], L->scratch_cap[which]);
	}
	return L->scratch[which];
}

/*
 * A token's string, unescaped when needed, made valid UTF-8 without NUL (utf8_clean()),
 * interned.  Every name kprof prints passes here, so every output format gets clean text.
 * Interned strings are all clean, so a raw token already in the table is returned as is:
 * names repeat by the thousand, and only a name seen for the first time is checked.
 */
static const char *intern_tok(struct loader *L, const struct kp_json_tok *tk)
{
	const char *s = tk->s;
	size_t n = tk->len;
	if (!tk->escaped) {
		const char *hit = strtab_lookup(&L->t->strs, s, n);
		if (hit)
			return hit;
	} else {
		char *u = scratch(L, 0, n + 1);
		n = json_unescape(s, n, u, n + 1);
		s = u;
	}
	if (!utf8_is_clean(s, n)) {
		char *c = scratch(L, 1, n * UTF8_REPLACEMENT_LEN + 1);
		n = utf8_clean(s, n, c);
		s = c;
	}
	return strtab_intern(&L->t->strs, s, n);
}

static int tok_is(const struct kp_json_tok *tk, const char *s, size_t n)
{
	return tk->len == n && memcmp(tk->s, s, n) == 0;
}
#define TOK_IS(tk, lit) tok_is((tk), (lit), sizeof(lit) - 1)

static enum cat classify(const struct kp_json_tok *tk)
{
	switch (tk->len) {
	case 6:
		if (TOK_IS(tk, "cpu_op"))
			return CAT_OP;
		if (TOK_IS(tk, "kernel") || TOK_IS(tk, "Kernel"))
			return CAT_KERNEL;
		if (TOK_IS(tk, "Memcpy"))
			return CAT_MEMCPY;
		if (TOK_IS(tk, "Memset"))
			return CAT_MEMSET;
		if (TOK_IS(tk, "Driver"))
			return CAT_LAUNCH;
		break;
	case 7:
		if (TOK_IS(tk, "Runtime"))
			return CAT_LAUNCH;
		break;
	case 8:
		if (TOK_IS(tk, "Operator"))
			return CAT_OP;
		break;
	case 10:
		if (TOK_IS(tk, "gpu_memcpy"))
			return CAT_MEMCPY;
		if (TOK_IS(tk, "gpu_memset"))
			return CAT_MEMSET;
		break;
	case 11:
		if (TOK_IS(tk, "cuda_driver"))
			return CAT_LAUNCH;
		break;
	case 12:
		if (TOK_IS(tk, "cuda_runtime"))
			return CAT_LAUNCH;
		break;
	case 15:
		if (TOK_IS(tk, "user_annotation"))
			return CAT_ANNOT;
		break;
	case 19:
		if (TOK_IS(tk, "cuda_profiler_range"))
			return CAT_RANGE;
		break;
	}
	return CAT_SKIP;
}

/*
 * Read a value expected to be a string into @tk: 1 when it is one, 0 when it is something
 * else (a container is skipped whole), -1 on a JSON error.
 */
static int read_str(struct loader *L, struct kp_json_tok *tk)
{
	enum kp_json_type ty = json_next(&L->p, tk);
	if (ty == JT_STR)
		return 1;
	if (ty == JT_OBJ || ty == JT_ARR)
		return json_skip_rest(&L->p) < 0 ? -1 : 0;
	return ty == JT_ERROR ? -1 : 0;
}

/* Read a number value into *out (ns when @us).  Non-numbers are skipped; returns 1 if set. */
static int read_int(struct loader *L, int us, int64_t *out)
{
	struct kp_json_tok tk;
	int r;
	enum kp_json_type ty = json_next_int(&L->p, &tk, us, out, &r);
	if (ty == JT_NUM) {
		if (r < 0 && !us) {
			/* "1.5" where an integer id was expected: not an id we can use */
			return 0;
		}
		return r == 0;
	}
	if (ty == JT_OBJ || ty == JT_ARR)
		return json_skip_rest(&L->p) < 0 ? -1 : 0;
	return ty == JT_ERROR ? -1 : 0;
}

/* pid / tid: a number or any string ("Spans", "", "stream 7"). */
static int read_id(struct loader *L, int64_t *out, uint8_t *is_str)
{
	struct kp_json_tok tk;
	int r;
	enum kp_json_type ty = json_next_int(&L->p, &tk, 0, out, &r);
	if (ty == JT_NUM) {
		*is_str = 0;
		if (r < 0)
			*out = 0;
		return 1;
	}
	if (ty == JT_STR) {
		*is_str = 1;
		*out = (int64_t)(intptr_t)intern_tok(L, &tk);
		return 1;
	}
	if (ty == JT_OBJ || ty == JT_ARR)
		return json_skip_rest(&L->p) < 0 ? -1 : 0;
	return ty == JT_ERROR ? -1 : 0;
}

/* "Input Dims": [[1024, 1024], [], [8, 256, 1024], ...] */
static int read_dims(struct loader *L, struct ev *e)
{
	struct kp_json_tok tk;
	enum kp_json_type ty = json_next(&L->p, &tk);
	if (ty != JT_ARR)
		return ty == JT_ERROR ? -1 : (ty == JT_OBJ ? json_skip_rest(&L->p) : 0);
	int slot = 0;
	for (;;) {
		ty = json_next(&L->p, &tk);
		if (ty == JT_ARR_END)
			break;
		if (ty == JT_ERROR)
			return -1;
		if (slot >= MAX_SLOTS) {
			e->shapes_overflow = 1;
			if (ty == JT_ARR || ty == JT_OBJ)
				if (json_skip_rest(&L->p) < 0)
					return -1;
			continue;
		}
		e->slot_ndim[slot] = 0;
		e->slot_nlist[slot] = 0;
		e->slot_dim0[slot] = e->ndims_used;
		if (ty == JT_ARR) {
			for (;;) {
				ty = json_next(&L->p, &tk);
				if (ty == JT_ARR_END)
					break;
				if (ty == JT_ERROR)
					return -1;
				if (ty == JT_NUM && e->ndims_used < MAX_DIMS) {
					int64_t v;
					if (json_num_i64(tk.s, tk.len, &v) < 0)
						v = -1;
					e->dims[e->ndims_used++] = v;
					e->slot_ndim[slot]++;
				} else if (ty == JT_ARR && e->nlist_used < MAX_LIST) {
					/* a TensorList: [[8,16,1024,128], [8,16,1024,128]] */
					if (e->slot_nlist[slot]++ == 0)
						e->slot_list0[slot] = e->nlist_used;
					int li = e->nlist_used++;
					e->list_ndim[li] = 0;
					e->list_dim0[li] = e->ndims_used;
					while ((ty = json_next(&L->p, &tk)) != JT_ARR_END) {
						if (ty == JT_ERROR)
							return -1;
						if (ty == JT_ARR || ty == JT_OBJ) {
							if (json_skip_rest(&L->p) < 0)
								return -1;
							e->shapes_overflow = 1;
						} else if (ty == JT_NUM && e->ndims_used < MAX_DIMS) {
							int64_t v;
							if (json_num_i64(tk.s, tk.len, &v) < 0)
								v = -1;
							e->dims[e->ndims_used++] = v;
							e->list_ndim[li]++;
						} else {
							e->shapes_overflow = 1;
						}
					}
				} else if (ty == JT_ARR || ty == JT_OBJ) {
					if (json_skip_rest(&L->p) < 0)
						return -1;
					e->shapes_overflow = 1;
				} else if (ty == JT_NUM) {
					e->shapes_overflow = 1;
				}
			}
		} else if (ty == JT_OBJ) {
			if (json_skip_rest(&L->p) < 0)
				return -1;
		}
		slot++;
	}
	e->nslots_dims = slot;
	return 0;
}

/* "Input type" or "Concrete Inputs": arrays of strings */
static int read_str_list(struct loader *L, struct ev *e, int types)
{
	struct kp_json_tok tk;
	enum kp_json_type ty = json_next(&L->p, &tk);
	if (ty != JT_ARR)
		return ty == JT_ERROR ? -1 : (ty == JT_OBJ ? json_skip_rest(&L->p) : 0);
	int slot = 0;
	for (;;) {
		ty = json_next(&L->p, &tk);
		if (ty == JT_ARR_END)
			break;
		if (ty == JT_ERROR)
			return -1;
		if (ty == JT_ARR || ty == JT_OBJ) {
			if (json_skip_rest(&L->p) < 0)
				return -1;
		}
		if (slot < MAX_SLOTS) {
			if (types)
				e->slot_type[slot] = ty == JT_STR ? dtype_parse(tk.s, tk.len) : DT_NONE;
			else
				e->slot_conc[slot] = ty == JT_STR && tk.len ? intern_tok(L, &tk)
									    : empty_str;
		}
		slot++;
	}
	if (slot > MAX_SLOTS) {
		e->shapes_overflow = 1;
		slot = MAX_SLOTS;
	}
	if (types)
		e->nslots_type = slot;
	else
		e->nslots_conc = slot;
	return 0;
}

#define NI_CLASS 0x0f        /* enum kp_model_class */
#define NI_CONV_BWD_NODE 0x10 /* an autograd node of a convolution: its Sequence number is read */
#define NI_SHAPES 0x20        /* no model, but its shapes feed another op's (fwdbwd.c) */

/*
 * An autograd node of a convolution ("CudnnConvolutionBackward", "ConvolutionBackward0",
 * "ThnnConv2DBackward"): it carries the Sequence number of its forward.  Not the
 * "autograd::engine::evaluate_function: ..." wrapper, not an aten:: op.
 */
static int conv_bwd_node(const char *name)
{
	return !strchr(name, ':') && strstr(name, "Backward") && strstr(name, "Conv");
}

/* The model class and flags of an interned op name, looked up once per distinct name. */
static int name_info(struct loader *L, const char *name)
{
	int created;
	struct kp_hmap_entry *e = hmap_put_ptr(&L->names, name, &created);
	if (created)
		e->val.i = opmodel_class(name) | (conv_bwd_node(name) ? NI_CONV_BWD_NODE : 0) |
			   (!strcmp(name, "aten::cudnn_convolution_backward") ||
			    !strcmp(name, "aten::miopen_convolution_backward") ? NI_SHAPES : 0);
	return (int)e->val.i;
}

static int name_class(struct loader *L, const char *name)
{
	return name_info(L, name) & NI_CLASS;
}

/* Shapes are read only for ops with a model; others' are skipped unbuilt (most bytes). */
static int wants_shapes(struct loader *L, const struct ev *e)
{
	if (e->cat != CAT_OP && e->cat != CAT_NONE)
		return 0;
	if (!e->name)
		return 1; /* args before name: keep to be safe */
	return (name_info(L, e->name) & (NI_CLASS | NI_SHAPES)) != 0;
}

/*
 * Range-profiler counters smsp__sass_thread_inst_executed_op_{d,f,h}{add,mul,fma}_pred_on.sum:
 * FLOPs = add + mul + 2 x fma per precision.  Returns 1 when @key was one (value read).
 */
static int range_counter(struct loader *L, struct ev *e, const struct kp_json_tok *key, int *r)
{
	static const char pfx[] = "smsp__sass_thread_inst_executed_op_";
	static const char sfx[] = "_pred_on.sum";
	size_t np = sizeof(pfx) - 1, ns = sizeof(sfx) - 1;
	if (key->len != np + 4 + ns || memcmp(key->s, pfx, np) || memcmp(key->s + key->len - ns, sfx, ns))
		return 0;
	const char *op = key->s + np;
	int prec = op[0] == 'd' ? 0 : op[0] == 'f' ? 1 : op[0] == 'h' ? 2 : -1;
	int mul = !memcmp(op + 1, "fma", 3) ? 2 : (!memcmp(op + 1, "add", 3) || !memcmp(op + 1, "mul", 3)) ? 1 : 0;
	if (prec < 0 || !mul)
		return 0;
	int64_t v;
	if ((*r = read_int(L, 0, &v)) > 0 && v >= 0) {
		int64_t add;
		if (__builtin_mul_overflow(v, mul, &add) ||
		    __builtin_add_overflow(e->range_flops[prec] < 0 ? 0 : e->range_flops[prec], add,
					   &e->range_flops[prec]))
			e->range_flops[prec] = INT64_MAX;
	}
	return 1;
}

/*
 * The record_param_comms metadata Kineto copies onto NCCL kernels (2024+).  Returns 1
 * when @key was one of them (value read into @e, status in *r).
 */
static int coll_arg(struct loader *L, struct ev *e, const struct kp_json_tok *key, int *r)
{
	struct kp_json_tok tk;
	int64_t v;
	if (TOK_IS(key, "Collective name") || TOK_IS(key, "dtype")) {
		int is_name = key->len != 5;
		if ((*r = read_str(L, &tk)) > 0) {
			if (is_name)
				e->coll = intern_tok(L, &tk);
			else
				e->coll_dtype = intern_tok(L, &tk);
		}
		return 1;
	}
	int64_t *dst = TOK_IS(key, "In msg nelems") ? &e->coll_in :
		       TOK_IS(key, "Out msg nelems") ? &e->coll_out :
		       TOK_IS(key, "Group size") ? &e->coll_group : NULL;
	if (!dst)
		return 0;
	if ((*r = read_int(L, 0, &v)) > 0 && v >= 0)
		*dst = v;
	return 1;
}

/*
 * The integer members of args (and "External id" without its early stop): 1 when @tk named
 * one, with *r the reader's result.
 */
static int int_arg(struct loader *L, struct ev *e, const struct kp_json_tok *tk, int *r)
{
	int64_t v;
	switch (tk->len) {
	case 16:
		if (TOK_IS(tk, "kprof dram bytes")) {
			if ((*r = read_int(L, 0, &v)) > 0 && v >= 0)
				e->mbytes = v;
			return 1;
		}
		break;
	case 20:
		if (TOK_IS(tk, "kprof measured flops")) {
			if ((*r = read_int(L, 0, &v)) > 0 && v >= 0)
				e->mflops = v;
			return 1;
		}
		break;
	case 6:
		if (TOK_IS(tk, "device")) {
			if ((*r = read_int(L, 0, &v)) > 0)
				e->device = v;
			return 1;
		}
		if (TOK_IS(tk, "stream")) {
			if ((*r = read_int(L, 0, &v)) > 0)
				e->stream = v;
			return 1;
		}
		break;
	case 5:
		if (TOK_IS(tk, "bytes")) {
			if ((*r = read_int(L, 0, &v)) > 0)
				e->bytes = v;
			return 1;
		}
		break;
	case 11:
		if (TOK_IS(tk, "correlation")) {
			if ((*r = read_int(L, 0, &v)) > 0)
				e->corr = v;
			return 1;
		}
		if (TOK_IS(tk, "kernel_flop")) {
			if ((*r = read_int(L, 0, &v)) > 0)
				e->kernel_flop = v;
			return 1;
		}
		break;
	case 12:
		if (TOK_IS(tk, "sm_clock_mhz")) {
			if ((*r = read_int(L, 0, &v)) > 0 && v > 0 && v < 100000)
				e->sm_clock_mhz = (int32_t)v;
			return 1;
		}
		break;
	case 15:
		if (TOK_IS(tk, "Sequence number")) {
			if ((*r = read_int(L, 0, &v)) > 0)
				e->seq = v;
			return 1;
		}
		break;
	}
	return 0;
}

/* The other members read: shapes (when @shapes), "kprof compute", "kernel_num_gb". */
static int other_arg(struct loader *L, struct ev *e, const struct kp_json_tok *key, int shapes,
		     int *r)
{
	struct kp_json_tok tk;
	if (shapes && TOK_IS(key, "Input Dims")) {
		*r = read_dims(L, e);
		return 1;
	}
	if (shapes && TOK_IS(key, "Input type")) {
		*r = read_str_list(L, e, 1);
		return 1;
	}
	if (shapes && TOK_IS(key, "Concrete Inputs")) {
		*r = read_str_list(L, e, 0);
		return 1;
	}
	if (TOK_IS(key, "kprof compute")) {
		if ((*r = read_str(L, &tk)) > 0 && tk.len < 16) {
			char b[16];
			memcpy(b, tk.s, tk.len);
			b[tk.len] = '\0';
			e->prec_hint = (int8_t)dtype_prec_parse(b);
		}
		return 1;
	}
	if (TOK_IS(key, "kernel_num_gb")) {
		enum kp_json_type ty = json_next(&L->p, &tk);
		if (ty == JT_NUM)
			e->kernel_num_gb = json_num_double(tk.s, tk.len);
		else if (ty == JT_OBJ || ty == JT_ARR)
			*r = json_skip_rest(&L->p);
		else if (ty == JT_ERROR)
			*r = -1;
		return 1;
	}
	return 0;
}

static int read_args(struct loader *L, struct ev *e)
{
	int shapes = wants_shapes(L, e);
	/*
	 * An op without a model needs only its External id: skip the rest of its args
	 * unread.  Inductor's kernels (triton_*) may carry kernel_flop / kernel_num_gb.
	 */
	int id_only = e->cat == CAT_OP && !shapes && e->name && strncmp(e->name, "triton", 6) &&
		      !(name_info(L, e->name) & NI_CONV_BWD_NODE);
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
		int r = 0;
		int64_t v;
		if (TOK_IS(&tk, "External id")) {
			if ((r = read_int(L, 0, &v)) > 0)
				e->ext_id = v;
			if (r >= 0 && id_only)
				return json_skip_rest(&L->p);
		} else if (!int_arg(L, e, &tk, &r) && !other_arg(L, e, &tk, shapes, &r) &&
			   !(e->cat == CAT_RANGE && range_counter(L, e, &tk, &r)) &&
			   !(e->cat == CAT_KERNEL && coll_arg(L, e, &tk, &r))) {
			r = json_skip(&L->p);
		}
		if (r < 0)
			return -1;
	}
}

static int32_t thread_index(struct loader *L, int64_t pid, uint8_t pid_str, int64_t tid,
			    uint8_t tid_str)
{
	struct kp_trace *t = L->t;
	/* runs of events on one thread are the rule: check the last answer first */
	if (L->last_thread >= 0) {
		const struct kp_thread *lt = &t->threads[L->last_thread];
		if (lt->pid == pid && lt->tid == tid && lt->pid_str == pid_str && lt->tid_str == tid_str)
			return L->last_thread;
	}
	struct { int64_t pid, tid; uint8_t pid_str, tid_str; } key;
	memset(&key, 0, sizeof(key)); /* padding bytes take part in the key */
	key.pid = pid;
	key.tid = tid;
	key.pid_str = pid_str;
	key.tid_str = tid_str;
	int created;
	struct kp_hmap_entry *e = hmap_put_str(&L->threads, &key, sizeof(key), &created);
	if (!created)
		return L->last_thread = (int32_t)e->val.i;
	e->key.ptr = memcpy(arena_alloc(&t->arena, sizeof(key)), &key, sizeof(key));
	struct kp_thread *th = VEC_PUSH(t->threads, t->nthreads, t->capthreads);
	th->pid = pid;
	th->tid = tid;
	th->pid_str = pid_str;
	th->tid_str = tid_str;
	e->val.i = (int64_t)t->nthreads - 1;
	return L->last_thread = (int32_t)e->val.i;
}

/*
 * The slots of one op, serialized: the same shapes, types and scalars repeat every step of
 * a training trace, so ops share one decoded kp_slot array per distinct serialization.
 */
static size_t encode_slots(const struct ev *e, int n, unsigned char *buf, size_t cap)
{
	size_t len = 0;
#define PUT(v)                                                   \
	do {                                                     \
		if (len <= cap && cap - len >= sizeof(v))      \
			memcpy(buf + len, &(v), sizeof(v));      \
		len += sizeof(v);                                \
	} while (0)
	for (int i = 0; i < n; i++) {
		int32_t ndim = i < e->nslots_dims && e->slot_ndim[i] > 0 ? e->slot_ndim[i] : 0;
		int32_t dt = i < e->nslots_type ? (int32_t)e->slot_type[i] : DT_NONE;
		int32_t nl = i < e->nslots_dims ? e->slot_nlist[i] : 0;
		const char *conc = i < e->nslots_conc ? e->slot_conc[i] : empty_str;
		PUT(ndim);
		PUT(dt);
		PUT(nl);
		PUT(conc); /* interned: equal text, equal pointer */
		for (int k = 0; k < ndim; k++)
			PUT(e->dims[e->slot_dim0[i] + k]);
		for (int k = 0; k < nl; k++) {
			int li = e->slot_list0[i] + k;
			int32_t ln = e->list_ndim[li];
			PUT(ln);
			for (int j = 0; j < ln; j++)
				PUT(e->dims[e->list_dim0[li] + j]);
		}
	}
#undef PUT
	return len;
}

static struct kp_slot *copy_slots(struct loader *L, struct ev *e, int *nslots)
{
	int n = e->nslots_dims;
	if (e->nslots_type > n)
		n = e->nslots_type;
	if (e->nslots_conc > n)
		n = e->nslots_conc;
	if (n > MAX_SLOTS)
		n = MAX_SLOTS;
	*nslots = n;
	if (n == 0)
		return NULL;
	size_t len = encode_slots(e, n, L->enc, sizeof(L->enc));
	if (len > sizeof(L->enc))
		return decode_new(L, e, n);
	int created;
	struct kp_hmap_entry *m = hmap_put_str(&L->slots, L->enc, len, &created);
	if (created) {
		m->key.ptr = arena_strndup(&L->t->arena, (const char *)L->enc, len);
		m->val.ptr = decode_new(L, e, n);
	}
	return m->val.ptr;
}

static struct kp_slot *decode_new(struct loader *L, struct ev *e, int n)
{
	struct kp_slot *s = arena_alloc(&L->t->arena, n * sizeof(*s));
	for (int i = 0; i < n; i++) {
		s[i].ndim = i < e->nslots_dims && e->slot_ndim[i] > 0 ? e->slot_ndim[i] : 0;
		if (s[i].ndim) {
			int64_t *d = arena_alloc(&L->t->arena, s[i].ndim * sizeof(*d));
			memcpy(d, &e->dims[e->slot_dim0[i]], s[i].ndim * sizeof(*d));
			s[i].dims = d;
		} else {
			s[i].dims = NULL;
		}
		s[i].dtype = i < e->nslots_type ? e->slot_type[i] : DT_NONE;
		s[i].concrete = i < e->nslots_conc ? e->slot_conc[i] : empty_str;
		s[i].nlist = 0;
		s[i].list = NULL;
		int nl = i < e->nslots_dims ? e->slot_nlist[i] : 0;
		if (nl > 0) {
			/* Kineto records no element type for TensorList members */
			struct kp_slot *l = arena_zalloc(&L->t->arena, nl * sizeof(*l));
			for (int k = 0; k < nl; k++) {
				int li = e->slot_list0[i] + k;
				l[k].ndim = e->list_ndim[li];
				int64_t *d = arena_alloc(&L->t->arena, (l[k].ndim + 1) * sizeof(*d));
				memcpy(d, &e->dims[e->list_dim0[li]], l[k].ndim * sizeof(*d));
				l[k].dims = d;
				l[k].dtype = DT_UNKNOWN;
				l[k].concrete = empty_str;
			}
			s[i].nlist = nl;
			s[i].list = l;
		}
	}
	return s;
}

static int parse_step_num(const char *name, int64_t *num)
{
	static const char pfx[] = "ProfilerStep#";
	if (strncmp(name, pfx, sizeof(pfx) - 1))
		return 0;
	char *end;
	long long v = strtoll(name + sizeof(pfx) - 1, &end, 10);
	if (end == name + sizeof(pfx) - 1)
		return 0;
	*num = v;
	return 1;
}

/*
 * An event the Trace Event Format does not allow (no "ph", a field of the wrong type, not an
 * object): counted in nskipped and warned, so --strict refuses the trace.
 */
static int skip_malformed(struct loader *L, int64_t off, const char *why)
{
	L->t->nskipped++;
	warn_at(L, off, "malformed events", "skipped malformed event: %s", why);
	return 0;
}

/*
 * PyTorch 1.8-1.10 (2020-2021) file ProfilerStep#N under cat "Operator" (later
 * "user_annotation"): it is a step span, not an op.  Returns 1 when @e was one.
 */
static int legacy_step(struct loader *L, const struct ev *e)
{
	int64_t num;
	if (e->name[0] != 'P' || !parse_step_num(e->name, &num))
		return 0;
	struct kp_trace *t = L->t;
	struct kp_step *s = VEC_PUSH(t->steps, t->nsteps, t->capsteps);
	s->ts_ns = e->ts;
	s->dur_ns = e->dur;
	s->num = num;
	s->thread = thread_index(L, e->pid, e->pid_str, e->tid, e->tid_str);
	return 1;
}

/* One element of traceEvents; the '{' was just read at @off. */
/*
 * The members of one event object into @e.  Returns 1 when the event was read, 0 when it was
 * skipped on sight (metadata, flows, categories kprof ignores; counted), -1 on a JSON error.
 */
static int read_event(struct loader *L, struct ev *e)
{
	struct kp_trace *t = L->t;
	struct kp_json_tok tk;
	for (;;) {
		enum kp_json_type ty = json_key(&L->p, &tk);
		if (ty == JT_OBJ_END)
			break;
		if (ty != JT_KEY)
			return -1; /* JT_ERROR: the tokenizer validated the grammar */
		int r = 0;
		if (tk.len == 2 && tk.s[0] == 'p' && tk.s[1] == 'h') {
			if ((r = read_str(L, &tk)) > 0 && tk.len >= 1)
				e->ph = tk.s[0];
			else if (r == 0)
				e->bad = "'ph' is not a string";
			/* metadata, instants, flows, counters: nothing kprof reads */
			if (r >= 0 && e->ph && e->ph != 'X' && e->ph != 'B' && e->ph != 'E') {
				if (e->ph == 's' || e->ph == 'f' || e->ph == 't')
					t->nflows++;
				t->nskipped++;
				t->nevents++;
				return json_skip_rest(&L->p) < 0 ? -1 : 0;
			}
		} else if (TOK_IS(&tk, "cat")) {
			if ((r = read_str(L, &tk)) > 0)
				e->cat = classify(&tk);
			else if (r == 0)
				e->bad = "'cat' is not a string";
			if (r >= 0 && e->cat == CAT_SKIP) {
				t->nskipped++;
				t->nevents++;
				return json_skip_rest(&L->p) < 0 ? -1 : 0;
			}
		} else if (TOK_IS(&tk, "name")) {
			if ((r = read_str(L, &tk)) > 0) {
				/* user annotations other than ProfilerStep#N are kept only on request */
				if (e->cat == CAT_ANNOT && !L->annotations &&
				    strncmp(tk.s, "ProfilerStep#", tk.len < 13 ? tk.len : 13)) {
					t->nskipped++;
					t->nevents++;
					return json_skip_rest(&L->p) < 0 ? -1 : 0;
				}
				e->name = intern_tok(L, &tk);
			} else if (r == 0) {
				e->bad = "'name' is not a string";
			}
		} else if (TOK_IS(&tk, "ts")) {
			r = read_int(L, 1, &e->ts);
			if (r > 0)
				e->has_ts = 1;
		} else if (TOK_IS(&tk, "dur")) {
			r = read_int(L, 1, &e->dur);
			if (r > 0)
				e->has_dur = 1;
		} else if (TOK_IS(&tk, "pid")) {
			r = read_id(L, &e->pid, &e->pid_str);
			if (r > 0)
				e->has_pid = 1;
		} else if (TOK_IS(&tk, "tid")) {
			r = read_id(L, &e->tid, &e->tid_str);
			if (r > 0)
				e->has_tid = 1;
		} else if (TOK_IS(&tk, "args")) {
			r = read_args(L, e);
		} else {
			r = json_skip(&L->p);
		}
		if (r < 0)
			return -1;
	}
	return 1;
}

/* An 'E' event closes the innermost open 'B' op of its thread. */
static void close_op(struct loader *L, const struct ev *e)
{
	struct kp_trace *t = L->t;
	/* close the innermost open B op of this thread */
	int32_t th = thread_index(L, e->pid, e->pid_str, e->tid, e->tid_str);
	for (size_t i = L->nopen; i-- > 0;) {
		struct kp_op *op = &t->ops[L->open[i]];
		if (op->thread == th) {
			op->dur_ns = e->ts - op->ts_ns;
			if (op->dur_ns < 0)
				op->dur_ns = 0;
			memmove(&L->open[i], &L->open[i + 1], (L->nopen - i - 1) * sizeof(*L->open));
			L->nopen--;
			break;
		}
	}
}

/* Events kept in the trace: locate what is wrong with one (warnings); 0 when it is skipped. */
static int check_event(struct loader *L, int64_t off, struct ev *e)
{
	struct kp_trace *t = L->t;
	if (!e->has_ts) {
		warn_at(L, off, "events without 'ts'", "skipped %s event without 'ts'",
			e->name ? e->name : "an");
		return 0;
	}
	if (e->ph == 'X' && !e->has_dur) {
		warn_at(L, off, "events without 'dur'", "skipped event '%.*s' without 'dur'",
			NAME80(e->name ? e->name : ""));
		return 0;
	}
	if (e->dur < 0) {
		warn_at(L, off, "events with negative 'dur'", "event '%.*s' has negative 'dur'; taken as 0",
			NAME80(e->name ? e->name : ""));
		e->dur = 0;
	}
	if (!e->name)
		e->name = strtab_intern(&t->strs, "(unnamed)", 9);
	if (e->shapes_overflow && e->cat == CAT_OP && opmodel_class(e->name) != MODEL_NONE)
		warn_at(L, off, "ops with too many shape slots",
			"op '%.*s' records more than %d slots or %d dims; extra ones ignored",
			NAME80(e->name), MAX_SLOTS, MAX_DIMS);
	return 1;
}

static void add_op(struct loader *L, int64_t off, struct ev *e)
{
	struct kp_trace *t = L->t;
	struct kp_op *op = VEC_PUSH(t->ops, t->nops, t->capops);
	op->ts_ns = e->ts;
	op->dur_ns = e->ph == 'B' ? 0 : e->dur;
	op->name = e->name;
	op->ext_id = e->ext_id;
	op->off = off;
	op->thread = thread_index(L, e->pid, e->pid_str, e->tid, e->tid_str);
	op->parent = op->model = -1;
	int ns = 0;
	op->slots = copy_slots(L, e, &ns);
	op->nslots = (int16_t)ns;
	op->kernel_flop = e->kernel_flop;
	op->kernel_num_gb = e->kernel_num_gb;
	op->prec_hint = e->prec_hint;
	op->cls = (int8_t)name_class(L, e->name);
	op->seq = e->seq;
	op->bwd = -1;
	if (e->ph == 'B') {
		/* the innermost open B op of this thread is its explicit parent (link) */
		for (size_t i = L->nopen; i-- > 0;)
			if (t->ops[L->open[i]].thread == op->thread) {
				op->parent = L->open[i];
				break;
			}
		*VEC_PUSH(L->open, L->nopen, L->capopen) = (int32_t)(t->nops - 1);
	}
}

/* A ProfilerStep#N span is a step; other annotations are kept only on request. */
static void add_annot(struct loader *L, struct ev *e)
{
	struct kp_trace *t = L->t;
	int64_t num;
	if (e->ph != 'X')
		return;
	if (!parse_step_num(e->name, &num)) {
		if (L->annotations && e->name && e->has_ts) {
			struct kp_annot *a = VEC_PUSH(t->annots, t->nannots, t->capannots);
			a->ts_ns = e->ts;
			a->dur_ns = e->has_dur ? e->dur : 0;
			a->name = e->name;
			a->thread = thread_index(L, e->pid, e->pid_str, e->tid, e->tid_str);
		}
		return;
	}
	struct kp_step *s = VEC_PUSH(t->steps, t->nsteps, t->capsteps);
	s->ts_ns = e->ts;
	s->dur_ns = e->dur;
	s->num = num;
	s->thread = thread_index(L, e->pid, e->pid_str, e->tid, e->tid_str);
}

static void add_range(struct loader *L, int64_t off, struct ev *e)
{
	struct kp_trace *t = L->t;
	struct kp_range *rg = VEC_PUSH(t->ranges, t->nranges, t->capranges);
	rg->name = e->name;
	rg->off = off;
	memcpy(rg->flops, e->range_flops, sizeof(rg->flops));
}

static void add_launch(struct loader *L, int64_t off, struct ev *e)
{
	struct kp_trace *t = L->t;
	if (e->ph != 'X')
		return;
	struct kp_launch *l = VEC_PUSH(t->launches, t->nlaunches, t->caplaunches);
	l->ts_ns = e->ts;
	l->dur_ns = e->dur;
	l->name = e->name;
	l->corr = e->corr;
	l->ext_id = e->ext_id;
	l->off = off;
	l->thread = thread_index(L, e->pid, e->pid_str, e->tid, e->tid_str);
	l->op = -1;
}

/* A kernel, memcpy or memset, and the collective it runs (NCCL args). */
static void add_gpu(struct loader *L, int64_t off, struct ev *e)
{
	struct kp_trace *t = L->t;
	if (e->ph != 'X')
		return;
	if (e->dur == 0)
		warn_at(L, off, "GPU events with zero 'dur'",
			"GPU event '%.*s' has zero duration; kept, rates are N/A", NAME80(e->name));
	struct kp_gpu *g = VEC_PUSH(t->gpu, t->ngpu, t->capgpu);
	g->ts_ns = e->ts;
	g->dur_ns = e->dur;
	g->name = e->name;
	g->corr = e->corr;
	g->ext_id = e->ext_id;
	g->off = off;
	g->device = (int32_t)(e->device >= 0 ? e->device : (e->has_pid && !e->pid_str ? e->pid : 0));
	g->stream = e->stream >= 0 ? e->stream : (e->has_tid && !e->tid_str ? e->tid : 0);
	g->bytes = e->bytes;
	g->kernel_flop = e->kernel_flop;
	g->kernel_num_gb = e->kernel_num_gb;
	g->mflops = e->mflops;
	g->mbytes = e->mbytes;
	g->launch = g->op = -1;
	g->sm_clock_mhz = e->sm_clock_mhz;
	g->step = -1;
	g->kind = e->cat == CAT_KERNEL ? GPU_KERNEL : e->cat == CAT_MEMCPY ? GPU_MEMCPY : GPU_MEMSET;
	if (e->coll || e->coll_in >= 0 || e->coll_out >= 0) {
		struct kp_coll *c = VEC_PUSH(t->colls, t->ncolls, t->capcolls);
		c->gpu = (int32_t)(t->ngpu - 1);
		c->group_size = e->coll_group > 0 && e->coll_group < INT32_MAX ? (int32_t)e->coll_group : -1;
		c->name = e->coll;
		c->dtype = e->coll_dtype;
		c->in_nelems = e->coll_in;
		c->out_nelems = e->coll_out;
	}
}

static int parse_event(struct loader *L, int64_t off)
{
	struct kp_trace *t = L->t;
	struct ev e;
	/* only the scalar part needs resetting; slot arrays are guarded by counts */
	memset(&e, 0, offsetof(struct ev, slot_ndim));
	e.ext_id = e.corr = e.device = e.stream = e.bytes = e.kernel_flop = e.seq = -1;
	e.kernel_num_gb = -1;
	e.mflops = e.mbytes = -1;
	e.prec_hint = PREC_NONE;
	e.range_flops[0] = e.range_flops[1] = e.range_flops[2] = -1;
	e.coll_in = e.coll_out = e.coll_group = -1;

	int rc = read_event(L, &e);
	if (rc <= 0)
		return rc;
	t->nevents++;
	L->last_good_off = L->p.base + (int64_t)L->p.pos;

	if (!e.bad && !e.ph)
		e.bad = "no 'ph'";
	if (e.bad)
		return skip_malformed(L, off, e.bad);
	if (e.cat == CAT_NONE || e.cat == CAT_SKIP) {
		t->nskipped++;
		return 0;
	}
	if (e.ph == 'E') {
		if (e.cat == CAT_OP && e.has_ts)
			close_op(L, &e);
		return 0;
	}
	if (!check_event(L, off, &e))
		return 0;
	if (e.cat == CAT_OP && e.ph == 'X' && legacy_step(L, &e))
		return 0;
	switch (e.cat) {
	case CAT_OP:
		add_op(L, off, &e);
		break;
	case CAT_ANNOT:
		add_annot(L, &e);
		break;
	case CAT_RANGE:
		add_range(L, off, &e);
		break;
	case CAT_LAUNCH:
		add_launch(L, off, &e);
		break;
	case CAT_KERNEL:
	case CAT_MEMCPY:
	case CAT_MEMSET:
		add_gpu(L, off, &e);
		break;
	default:
		break;
	}
	return 0;
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
		enum kp_json_type ty = json_next(&L->p, &tk);
		if (ty == JT_ARR_END)
			break;
		if (ty == JT_ERROR)
			return -1;
		if (ty == JT_OBJ) {
			nobj++;
			if (parse_event(L, tk.off) < 0)
				return -1;
			continue;
		}
		if (ty == JT_ARR && json_skip_rest(&L->p) < 0)
			return -1;
		if (nother++ == 0)
			first_other = tk.off;
		L->t->nevents++;
		skip_malformed(L, tk.off, "not an object");
	}
	if (nother && !nobj) {
		/* not a trace: the per-element warnings would only repeat the error */
		diag_warn_free(&L->t->warn);
		char loc[512];
		locate(L, first_other, loc, sizeof(loc));
		return diag_error(L->d, KP_BADINPUT,
				  "%s: error: not a Chrome trace: %s holds no event objects", loc, what);
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
		locate(L, tk.off, loc, sizeof(loc));
		return diag_error(L->d, KP_BADINPUT,
				  "%s: error: not a Chrome trace: 'traceEvents' is not an array", loc);
	}
	return parse_event_array(L, tk.off, "'traceEvents'");
}

static int parse_devprops(struct loader *L)
{
	struct kp_trace *t = L->t;
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
		if (ty != JT_OBJ) {
			if (ty == JT_ARR && json_skip_rest(&L->p) < 0)
				return -1;
			continue;
		}
		if (t->ndevs == t->capdevs) {
			t->capdevs = t->capdevs ? t->capdevs * 2 : 8;
			t->devs = xrealloc(t->devs, t->capdevs * sizeof(*t->devs));
		}
		struct kp_devprop *dp = &t->devs[t->ndevs++];
		memset(dp, 0, sizeof(*dp));
		dp->id = t->ndevs - 1;
		for (;;) {
			ty = json_next(&L->p, &tk);
			if (ty == JT_OBJ_END)
				break;
			if (ty != JT_KEY)
				return -1;
			int64_t v = 0;
			int r = 0;
			if (TOK_IS(&tk, "name")) {
				if ((r = read_str(L, &tk)) > 0)
					dp->name = intern_tok(L, &tk);
			} else if (TOK_IS(&tk, "id")) {
				if ((r = read_int(L, 0, &v)) > 0)
					dp->id = (int)v;
			} else if (TOK_IS(&tk, "numSms") || TOK_IS(&tk, "multiProcessorCount")) {
				if ((r = read_int(L, 0, &v)) > 0)
					dp->sms = (int)v;
			} else if (TOK_IS(&tk, "computeMajor") || TOK_IS(&tk, "major")) {
				if ((r = read_int(L, 0, &v)) > 0)
					dp->cc_major = (int)v;
			} else if (TOK_IS(&tk, "computeMinor") || TOK_IS(&tk, "minor")) {
				if ((r = read_int(L, 0, &v)) > 0)
					dp->cc_minor = (int)v;
			} else if (TOK_IS(&tk, "totalGlobalMem")) {
				if ((r = read_int(L, 0, &v)) > 0)
					dp->total_mem = v;
			} else if (TOK_IS(&tk, "clockRate")) {
				if ((r = read_int(L, 0, &v)) > 0)
					dp->clock_khz = (int)v;
			} else if (TOK_IS(&tk, "memoryClockRate")) {
				if ((r = read_int(L, 0, &v)) > 0)
					dp->mem_clock_khz = (int)v;
			} else if (TOK_IS(&tk, "memoryBusWidth")) {
				if ((r = read_int(L, 0, &v)) > 0)
					dp->bus_bits = (int)v;
			} else {
				r = json_skip(&L->p);
			}
			if (r < 0)
				return -1;
		}
	}
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
			if ((r = read_str(L, &tk)) > 0)
				t->kprof_clock_known = TOK_IS(&tk, "nvml");
		} else if (TOK_IS(&tk, "sm_clock_max_mhz")) {
			if ((r = read_int(L, 0, &v)) > 0)
				t->kprof_sm_clock_max_mhz = (int)v;
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
			if ((r = read_int(L, 0, &v)) > 0 && v >= 0)
				t->rank = v;
		} else if (TOK_IS(&tk, "world_size")) {
			if ((r = read_int(L, 0, &v)) > 0 && v > 0)
				t->world_size = v;
		} else if (TOK_IS(&tk, "backend")) {
			if ((r = read_str(L, &tk)) > 0)
				t->backend = intern_tok(L, &tk);
		} else {
			r = json_skip(&L->p);
		}
		if (r < 0)
			return -1;
	}
}

static int parse_document(struct loader *L)
{
	struct kp_json_tok tk;
	enum kp_json_type ty = json_next(&L->p, &tk);
	if (ty == JT_ERROR)
		return -1;
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
			} else if (TOK_IS(&tk, "deviceProperties") || TOK_IS(&tk, "computeProperties")) {
				/* PyTorch 1.8 (2021) wrote computeProperties with multiProcessorCount,
				 * major, minor (pytorch/kineto tb_plugin/test/gpu_metrics_input.json) */
				r = parse_devprops(L);
			} else if (TOK_IS(&tk, "baseTimeNanoseconds")) {
				int64_t v;
				r = read_int(L, 0, &v);
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
		locate(L, tk.off, loc, sizeof(loc));
		return diag_error(L->d, KP_BADINPUT,
				  "%s: error: not a Chrome trace: expected an object or array at the top level",
				  loc);
	}
	ty = json_next(&L->p, &tk);
	if (ty != JT_END)
		return -1;
	if (!L->has_events)
		return diag_error(L->d, KP_BADINPUT,
				  "%s: error: not a Chrome trace: no 'traceEvents' array in the top-level object",
				  L->t->display);
	return 0;
}

/*
 * The JSON document is whole but the gzip file around it was cut (in its last block or
 * trailer, so the CRC was never checked): a warning, an error under --strict.
 */
static void gzip_cut_after_json(struct loader *L, const struct kp_load_opts *o)
{
	struct kp_trace *t = L->t;
	if (o && o->strict) {
		diag_error(L->d, KP_BADINPUT,
			   "%s: error: gzip data ends early at compressed byte %lld, after decompressed byte %lld (--strict)",
			   t->display, L->in.trunc_raw, L->in.trunc_out);
		return;
	}
	diag_warn_add(&t->warn, "truncated traces", t->display,
		 "gzip data ends early at compressed byte %lld, after decompressed byte %lld; the JSON in it is complete",
		 L->in.trunc_raw, L->in.trunc_out);
}

int trace_load(struct kp_trace *t, const char *path, const struct kp_load_opts *o,
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

	struct loader *L = xcalloc(1, sizeof(*L));
	L->t = t;
	L->d = d;
	L->annotations = o && o->annotations;
	if (input_open(&L->in, path, d) < 0) {
		free(L);
		return -1;
	}
	hmap_init(&L->threads, HMAP_STR);
	L->last_thread = -1;
	hmap_init(&L->names, HMAP_PTR);
	hmap_init(&L->slots, HMAP_STR);
	json_init(&L->p, read_cb, L, TRACE_JSON_WINDOW);
	int rc = parse_document(L);
	if (rc < 0 && d->msg[0] == '\0') {
		if (!L->read_err && L->p.err_eof && t->nevents > 0) {
			/* a profiler killed mid-write: keep the complete events */
			t->truncated = 1;
			t->trunc_off = L->p.err_off;
			char loc[512], gz[160] = "";
			locate(L, L->p.err_off, loc, sizeof(loc));
			if (L->in.truncated)
				snprintf(gz, sizeof(gz), " (decompressed; the gzip data ends at compressed byte %lld)",
					 L->in.trunc_raw);
			if (o && o->strict) {
				diag_error(d, KP_BADINPUT,
					   "%s: error: trace is truncated at byte %lld%s (--strict)", loc,
					   (long long)L->p.err_off, gz);
			} else {
				diag_warn_add(&t->warn, "truncated traces", loc,
					 "trace is truncated at byte %lld%s; analyzed the %lld complete events that end before byte %lld",
					 (long long)L->p.err_off, gz, (long long)t->nevents,
					 (long long)L->last_good_off);
				rc = 0;
			}
		} else {
			json_fail(L);
		}
	}
	t->bytes = L->p.base + (int64_t)L->p.end;
	if (rc == 0 && L->in.truncated && !t->truncated)
		gzip_cut_after_json(L, o);
	rc = rc == 0 && d->msg[0] ? -1 : rc;
	if (rc == 0 && o && o->strict && diag_warn_total(&t->warn) > 0)
		rc = diag_error(d, KP_BADINPUT, "%s: error: %ld data anomalies (--strict); first: %s",
				t->display, diag_warn_total(&t->warn),
				t->warn.k[0].shown[0] ? t->warn.k[0].shown[0] : "");
	/* B without E: give them zero duration rather than dropping them */
	json_free(&L->p);
	input_close(&L->in);
	free(L->scratch[0]);
	free(L->scratch[1]);
	hmap_free(&L->threads);
	free(L->open);
	hmap_free(&L->names);
	hmap_free(&L->slots);
	free(L);
	return rc;
}

void trace_free(struct kp_trace *t)
{
	free(t->ops);
	free(t->launches);
	free(t->gpu);
	free(t->threads);
	free(t->devs);
	free(t->steps);
	free(t->annots);
	free(t->ranges);
	free(t->colls);
	strtab_free(&t->strs);
	diag_warn_free(&t->warn);
	arena_free(&t->arena);
	memset(t, 0, sizeof(*t));
}
