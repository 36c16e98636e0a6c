/*
 * trace.c — Chrome/Kineto trace JSON -> struct kp_trace, one streaming pass.
 *
 * Each element of traceEvents is read key by key; categories nobody needs are
 * skipped with json_skip_rest() as soon as "cat" is known, args keys outside a
 * whitelist are skipped without building anything, and a record is appended only
 * when its event is complete, so a truncated file keeps every whole event.
 */
#include "kprof/trace.h"

#include <limits.h>
#include <pthread.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kprof/dtype.h"
#include "kprof/fwdbwd.h"
#include "kprof/hmap.h"
#include "kprof/input.h"
#include "kprof/json.h"
#include "kprof/stages.h"
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
	CAT_RANGE, /* cuda_profiler_range: measured counters, no time */
};

/* 256 kB: RSS, not speed, changes with it (1 MB: the same seconds, 0.4 MB more on a 35 MB
 * trace; it grows for an event larger than itself).  tests/fuzz/run.sh builds with a small
 * window, so the refill and locate paths run on every input. */
#ifndef TRACE_JSON_WINDOW
#define TRACE_JSON_WINDOW (256u << 10)
#endif

#define MAX_SLOTS 128
#define MAX_DIMS 1024
#define MAX_LIST 256
/* deviceProperties "name": bytes kept (CUDA's cudaDeviceProp.name holds 256) */
#define DEVNAME_MAX 256

/* The fields of one event being read; reset per event. */
struct ev {
	char ph;
	enum cat cat;
	const char *name;
	int64_t pid, tid;
	uint8_t pid_str, tid_str, has_pid, has_tid;
	int64_t ts, dur;
	uint8_t has_ts, has_dur;
	uint8_t time_range; /* a number past int64 ns: 1 "ts", 2 "dur" (the has_ bit stays 0) */
	int64_t ext_id, corr, device, stream, bytes, kernel_flop;
	int64_t seq; /* "Sequence number" */
	double kernel_num_gb;
	int64_t mflops, mbytes; /* "kprof measured flops", "kprof dram bytes" */
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
	int slot_nlist[MAX_SLOTS]; /* TensorList: tensors in the slot */
	int slot_list0[MAX_SLOTS]; /* TensorList: first entry in list_* */
	int list_ndim[MAX_LIST];
	int list_dim0[MAX_LIST];
	int slot_dim0[MAX_SLOTS];
	int64_t dims[MAX_DIMS];
	enum kp_dtype slot_type[MAX_SLOTS];
	const char *slot_conc[MAX_SLOTS];
};

struct loader {
	struct kp_trace *t;
	int annotations; /* keep user annotations (kp_load_opts) */
	struct kp_json p;
	struct kp_input in;
	struct kp_diag *d;
	struct kp_diag read_diag;
	int read_err;
	char *scratch[2]; /* unescape and utf8_clean buffers */
	size_t scratch_cap[2];
	/* (pid, tid, pid_str, tid_str) bytes (copies in t->arena) -> index into t->threads */
	struct kp_hmap threads;
	int32_t last_thread; /* index of the last thread_index() answer, -1 none */
	/* B/E pairing: stack of open ops (index into t->ops) */
	int32_t *open;
	size_t nopen, capopen;
	int64_t last_good_off; /* offset just past the last complete event */
	int has_events;        /* a traceEvents array (or the array form) was seen */
	/* interned op name -> name_info() flags: shapes are kept only for modelled ops */
	struct kp_hmap names;
	/* serialized slots (copies in t->arena) -> shared decoded array (see copy_slots) */
	struct kp_hmap slots;
	struct kp_arena *arena; /* thread keys, slots: t->arena, or a parallel worker's own */
	struct par *par;        /* parallel parse (see par_*), NULL for a serial one */
	struct chunk *chunk;    /* a worker: the chunk being parsed (warnings wait in it) */
	int bail;               /* a worker met what only the serial path can do (B/E pairs) */
	/* parallel: interned bytes -> canonical string of t->strs (the key points at it) */
	struct kp_hmap cache;
	unsigned char enc[16384];
};

static ssize_t par_read(struct loader *L, void *buf, size_t cap);
static void defer_warn(struct loader *L, int64_t off, const char *kind, const char *msg);
static const char *par_intern(struct loader *L, const char *s, size_t n);

static struct kp_slot *decode_new(struct loader *L, struct ev *e, int n);

static const char empty_str[] = "";

#define VEC_PUSH(vec, n, cap)                                                                      \
	((n) == (cap) ? ((cap) = (cap) ? (cap) * 2 : 256,                                          \
			 (vec) = xrealloc((vec), (cap) * sizeof(*(vec))), &(vec)[(n)++])           \
		      : &(vec)[(n)++])

/* @vec with room for index @i (a side vector indexed like its records) */
static void *grow_at(void *vec, size_t *cap, size_t i, size_t size)
{
	if (i >= *cap) {
		size_t c = *cap ? *cap : 256;
		while (c <= i)
			c *= 2;
		vec = xrealloc(vec, c * size);
		*cap = c;
	}
	return vec;
}
#define VEC_AT(vec, i, cap) ((vec) = grow_at((vec), &(cap), (i), sizeof(*(vec))), &(vec)[(i)])

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
		return par_read(L, buf, cap);
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
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (L->chunk) {
		defer_warn(L, off, kind, msg); /* located when the chunk is merged */
		return;
	}
	locate(L, off, loc, sizeof(loc));
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
	return diag_error(L->d, KP_BADINPUT, "%s: error: %s", loc,
			  L->p.err ? L->p.err : "bad JSON");
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
		const char *hit;
		if (L->par) {
			struct kp_hmap_entry *e = hmap_get_str(&L->cache, s, n);
			hit = e ? e->key.ptr : NULL;
		} else {
			hit = strtab_lookup(&L->t->strs, s, n);
		}
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
	return L->par ? par_intern(L, s, n) : strtab_intern(&L->t->strs, s, n);
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

/* A dimension's value, or KP_DIM_BAD (a located warning) where it is no int64 integer */
static int64_t dim_value(struct loader *L, const struct kp_json_tok *tk)
{
	int64_t v;
	if (__builtin_expect(json_num_i64(tk->s, tk->len, &v) < 0, 0)) {
		warn_at(L, tk->off, "Input Dims out of range",
			"dimension %.*s in 'Input Dims' out of range (not an integer below 2^63)",
			(int)(tk->len < 40 ? tk->len : 40), tk->s);
		v = KP_DIM_BAD;
	}
	return v;
}

/* One shape of a TensorList in slot @slot, after its '[': [8,16,1024,128] */
static int read_list_shape(struct loader *L, struct ev *e, int slot)
{
	struct kp_json_tok tk;
	enum kp_json_type ty;
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
			e->dims[e->ndims_used++] = dim_value(L, &tk);
			e->list_ndim[li]++;
		} else {
			e->shapes_overflow = 1;
		}
	}
	return 0;
}

/* Slot @slot's shape, after its '[': [8, 256, 1024], or a TensorList [[...], [...]] */
static int read_slot_shape(struct loader *L, struct ev *e, int slot)
{
	struct kp_json_tok tk;
	for (;;) {
		enum kp_json_type ty = json_next(&L->p, &tk);
		if (ty == JT_ARR_END)
			return 0;
		if (ty == JT_ERROR)
			return -1;
		if (ty == JT_NUM && e->ndims_used < MAX_DIMS) {
			e->dims[e->ndims_used++] = dim_value(L, &tk);
			e->slot_ndim[slot]++;
		} else if (ty == JT_ARR && e->nlist_used < MAX_LIST) {
			if (read_list_shape(L, e, slot) < 0)
				return -1;
		} else if (ty == JT_ARR || ty == JT_OBJ) {
			if (json_skip_rest(&L->p) < 0)
				return -1;
			e->shapes_overflow = 1;
		} else if (ty == JT_NUM) {
			e->shapes_overflow = 1;
		}
	}
}

/* Element @ty of "Input Dims" as slot @slot: a shape; anything else leaves the slot empty */
static int read_slot(struct loader *L, struct ev *e, int slot, enum kp_json_type ty)
{
	e->slot_ndim[slot] = 0;
	e->slot_nlist[slot] = 0;
	e->slot_dim0[slot] = e->ndims_used;
	if (ty == JT_ARR)
		return read_slot_shape(L, e, slot);
	if (ty == JT_OBJ && json_skip_rest(&L->p) < 0)
		return -1;
	return 0;
}

/* An element @ty past MAX_SLOTS: skipped, the shapes marked incomplete */
static int skip_slot(struct loader *L, struct ev *e, enum kp_json_type ty)
{
	e->shapes_overflow = 1;
	if ((ty == JT_ARR || ty == JT_OBJ) && json_skip_rest(&L->p) < 0)
		return -1;
	return 0;
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
		int r = slot < MAX_SLOTS ? read_slot(L, e, slot++, ty) : skip_slot(L, e, ty);
		if (r < 0)
			return -1;
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
				e->slot_type[slot] = ty == JT_STR ? dtype_parse(tk.s, tk.len)
								  : DT_NONE;
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

#define NI_CLASS 0x0f         /* enum kp_model_class */
#define NI_CONV_BWD_NODE 0x10 /* an autograd node of a convolution: its Sequence number is read */
#define NI_SEQ 0x20           /* its Sequence number is kept (fwdbwd_uses_seq) */
#define NI_SHAPES                                                                                  \
	0x20 /* no model, but its shapes feed another op's (fwdbwd.c) or a
				 signature (opmodel_signature: the sdpa entry point) */

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
			   (fwdbwd_uses_seq(name) ? NI_SEQ : 0) |
			   (!strcmp(name, "aten::cudnn_convolution_backward") ||
					    !strcmp(name, "aten::miopen_convolution_backward") ||
					    opmodel_sig_carrier(name)
				    ? NI_SHAPES
				    : 0);
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
	if (key->len != np + 4 + ns || memcmp(key->s, pfx, np) ||
	    memcmp(key->s + key->len - ns, sfx, ns))
		return 0;
	const char *op = key->s + np;
	int prec = op[0] == 'd' ? 0 : op[0] == 'f' ? 1 : op[0] == 'h' ? 2 : -1;
	int mul = !memcmp(op + 1, "fma", 3)                                  ? 2
		  : (!memcmp(op + 1, "add", 3) || !memcmp(op + 1, "mul", 3)) ? 1
									     : 0;
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
 * An integer member of args into *dst when its value is at least @min (INT64_MIN: any).
 * Returns 1 (the member was one kprof reads), with *r the reader's result.
 */
static inline __attribute__((always_inline)) int int_member(struct loader *L, int64_t *dst,
							    int64_t min, int *r)
{
	int64_t v;
	if ((*r = read_int(L, 0, &v)) > 0 && v >= min)
		*dst = v;
	return 1;
}

/*
 * The record_param_comms metadata Kineto copies onto NCCL kernels (2024+).  Returns 1
 * when @key was one of them (value read into @e, status in *r).
 */
static int coll_arg(struct loader *L, struct ev *e, const struct kp_json_tok *key, int *r)
{
	struct kp_json_tok tk;
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
	int64_t *dst = TOK_IS(key, "In msg nelems")    ? &e->coll_in
		       : TOK_IS(key, "Out msg nelems") ? &e->coll_out
		       : TOK_IS(key, "Group size")     ? &e->coll_group
						       : NULL;
	return dst ? int_member(L, dst, 0, r) : 0;
}

/* "sm_clock_mhz" (kprof traces): kept when in (0, 100000). */
static int sm_clock_arg(struct loader *L, struct ev *e, int *r)
{
	int64_t v;
	if ((*r = read_int(L, 0, &v)) > 0 && v > 0 && v < 100000)
		e->sm_clock_mhz = (int32_t)v;
	return 1;
}

/*
 * The integer members of args (and "External id" without its early stop): 1 when @tk named
 * one, with *r the reader's result.
 */
static int int_arg(struct loader *L, struct ev *e, const struct kp_json_tok *tk, int *r)
{
	switch (tk->len) {
	case 16:
		if (TOK_IS(tk, "kprof dram bytes"))
			return int_member(L, &e->mbytes, 0, r);
		break;
	case 20:
		if (TOK_IS(tk, "kprof measured flops"))
			return int_member(L, &e->mflops, 0, r);
		break;
	case 6:
		if (TOK_IS(tk, "device"))
			return int_member(L, &e->device, INT64_MIN, r);
		if (TOK_IS(tk, "stream"))
			return int_member(L, &e->stream, INT64_MIN, r);
		break;
	case 5:
		if (TOK_IS(tk, "bytes"))
			return int_member(L, &e->bytes, INT64_MIN, r);
		break;
	case 11:
		if (TOK_IS(tk, "correlation"))
			return int_member(L, &e->corr, INT64_MIN, r);
		if (TOK_IS(tk, "kernel_flop"))
			return int_member(L, &e->kernel_flop, INT64_MIN, r);
		break;
	case 12:
		if (TOK_IS(tk, "sm_clock_mhz"))
			return sm_clock_arg(L, e, r);
		break;
	case 15:
		if (TOK_IS(tk, "Sequence number"))
			return int_member(L, &e->seq, INT64_MIN, r);
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
		if (lt->pid == pid && lt->tid == tid && lt->pid_str == pid_str &&
		    lt->tid_str == tid_str)
			return L->last_thread;
	}
	struct {
		int64_t pid, tid;
		uint8_t pid_str, tid_str;
	} key;
	memset(&key, 0, sizeof(key)); /* padding bytes take part in the key */
	key.pid = pid;
	key.tid = tid;
	key.pid_str = pid_str;
	key.tid_str = tid_str;
	int created;
	struct kp_hmap_entry *e = hmap_put_str(&L->threads, &key, sizeof(key), &created);
	if (!created)
		return L->last_thread = (int32_t)e->val.i;
	e->key.ptr = memcpy(arena_alloc(L->arena, sizeof(key)), &key, sizeof(key));
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
#define PUT(v)                                                                                     \
	do {                                                                                       \
		if (len <= cap && cap - len >= sizeof(v))                                          \
			memcpy(buf + len, &(v), sizeof(v));                                        \
		len += sizeof(v);                                                                  \
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
		m->key.ptr = arena_strndup(L->arena, (const char *)L->enc, len);
		m->val.ptr = decode_new(L, e, n);
	}
	return m->val.ptr;
}

static struct kp_slot *decode_new(struct loader *L, struct ev *e, int n)
{
	struct kp_slot *s = arena_alloc(L->arena, n * sizeof(*s));
	for (int i = 0; i < n; i++) {
		s[i].ndim = i < e->nslots_dims && e->slot_ndim[i] > 0 ? e->slot_ndim[i] : 0;
		if (s[i].ndim) {
			int64_t *d = arena_alloc(L->arena, s[i].ndim * sizeof(*d));
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
			struct kp_slot *l = arena_zalloc(L->arena, nl * sizeof(*l));
			for (int k = 0; k < nl; k++) {
				int li = e->slot_list0[i] + k;
				l[k].ndim = e->list_ndim[li];
				int64_t *d = arena_alloc(L->arena, (l[k].ndim + 1) * sizeof(*d));
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

/*
 * The member steps of read_event() return the reader's result (-1 on a JSON error, 0 for a
 * value of the wrong type, 1 when read) or EV_SKIPPED when the event was skipped on sight
 * (the rest of its object skipped and counted).  They run once per member of every event:
 * inlined, so read_event() keeps one frame and its loop (bench/RESULTS.md, "src steps").
 */
enum { EV_SKIPPED = 2 };

/* Skip the rest of an event kprof does not keep: counted as read and as skipped. */
static inline __attribute__((always_inline)) int skip_event(struct loader *L)
{
	L->t->nskipped++;
	L->t->nevents++;
	return json_skip_rest(&L->p) < 0 ? -1 : EV_SKIPPED;
}

/* "ph": metadata, instants, flows and counters are skipped (flows counted apart). */
static inline __attribute__((always_inline)) int member_ph(struct loader *L, struct ev *e,
							   struct kp_json_tok *tk)
{
	int r = read_str(L, tk);
	if (r > 0 && tk->len >= 1)
		e->ph = tk->s[0];
	else if (r == 0)
		e->bad = "'ph' is not a string";
	if (r >= 0 && e->ph && e->ph != 'X' && e->ph != 'B' && e->ph != 'E') {
		if (e->ph == 's' || e->ph == 'f' || e->ph == 't')
			L->t->nflows++;
		return skip_event(L);
	}
	return r;
}

/* "cat": a category kprof ignores skips the event. */
static inline __attribute__((always_inline)) int member_cat(struct loader *L, struct ev *e,
							    struct kp_json_tok *tk)
{
	int r = read_str(L, tk);
	if (r > 0)
		e->cat = classify(tk);
	else if (r == 0)
		e->bad = "'cat' is not a string";
	if (r >= 0 && e->cat == CAT_SKIP)
		return skip_event(L);
	return r;
}

/* "name": user annotations other than ProfilerStep#N are kept only on request. */
static inline __attribute__((always_inline)) int member_name(struct loader *L, struct ev *e,
							     struct kp_json_tok *tk)
{
	int r = read_str(L, tk);
	if (r > 0) {
		if (e->cat == CAT_ANNOT && !L->annotations &&
		    strncmp(tk->s, "ProfilerStep#", tk->len < 13 ? tk->len : 13))
			return skip_event(L);
		e->name = intern_tok(L, tk);
	} else if (r == 0) {
		e->bad = "'name' is not a string";
	}
	return r;
}

/* "ts", "dur": microseconds to ns; *has set when read, *range |= @bit for a number past
 * int64 ns (9223372036854775807 us, 1e308), told apart from a missing value. */
static inline __attribute__((always_inline)) int member_time(struct loader *L, int64_t *ns,
							     uint8_t *has, uint8_t *range, int bit)
{
	struct kp_json_tok tk;
	int r;
	enum kp_json_type ty = json_next_int(&L->p, &tk, 1, ns, &r);
	if (ty == JT_NUM) {
		if (r == 0)
			*has = 1;
		else
			*range |= (uint8_t)bit;
		return r == 0;
	}
	if (ty == JT_OBJ || ty == JT_ARR)
		return json_skip_rest(&L->p) < 0 ? -1 : 0;
	return ty == JT_ERROR ? -1 : 0;
}

/* "pid", "tid": a number or a string; *has set when read. */
static inline __attribute__((always_inline)) int member_id(struct loader *L, int64_t *id,
							   uint8_t *is_str, uint8_t *has)
{
	int r = read_id(L, id, is_str);
	if (r > 0)
		*has = 1;
	return r;
}

/* One member of an event object, its key in @tk (reused for the value). */
static inline __attribute__((always_inline)) int read_member(struct loader *L, struct ev *e,
							     struct kp_json_tok *tk)
{
	if (tk->len == 2 && tk->s[0] == 'p' && tk->s[1] == 'h')
		return member_ph(L, e, tk);
	if (TOK_IS(tk, "cat"))
		return member_cat(L, e, tk);
	if (TOK_IS(tk, "name"))
		return member_name(L, e, tk);
	if (TOK_IS(tk, "ts"))
		return member_time(L, &e->ts, &e->has_ts, &e->time_range, 1);
	if (TOK_IS(tk, "dur"))
		return member_time(L, &e->dur, &e->has_dur, &e->time_range, 2);
	if (TOK_IS(tk, "pid"))
		return member_id(L, &e->pid, &e->pid_str, &e->has_pid);
	if (TOK_IS(tk, "tid"))
		return member_id(L, &e->tid, &e->tid_str, &e->has_tid);
	if (TOK_IS(tk, "args"))
		return read_args(L, e);
	return json_skip(&L->p);
}

/*
 * The members of one event object into @e.  Returns 1 when the event was read, 0 when it was
 * skipped on sight (metadata, flows, categories kprof ignores; counted), -1 on a JSON error.
 */
static int read_event(struct loader *L, struct ev *e)
{
	struct kp_json_tok tk;
	for (;;) {
		enum kp_json_type ty = json_key(&L->p, &tk);
		if (ty == JT_OBJ_END)
			break;
		if (ty != JT_KEY)
			return -1; /* JT_ERROR: the tokenizer validated the grammar */
		int r = read_member(L, e, &tk);
		if (r == EV_SKIPPED)
			return 0;
		if (r < 0)
			return -1;
	}
	return 1;
}

/* An 'E' event closes the innermost open 'B' op of its thread. */
static void close_op(struct loader *L, const struct ev *e)
{
	struct kp_trace *t = L->t;
	if (L->chunk) {
		L->bail = 1; /* B/E pairs span chunks: the serial path pairs them */
		return;
	}
	/* close the innermost open B op of this thread */
	int32_t th = thread_index(L, e->pid, e->pid_str, e->tid, e->tid_str);
	for (size_t i = L->nopen; i-- > 0;) {
		struct kp_op *op = &t->ops[L->open[i]];
		if (op->thread == th) {
			op->dur_ns = e->ts - op->ts_ns;
			if (op->dur_ns < 0)
				op->dur_ns = 0;
			memmove(&L->open[i], &L->open[i + 1],
				(L->nopen - i - 1) * sizeof(*L->open));
			L->nopen--;
			break;
		}
	}
}

/* Events kept in the trace: locate what is wrong with one (warnings); 0 when it is skipped. */
static int check_event(struct loader *L, int64_t off, struct ev *e)
{
	struct kp_trace *t = L->t;
	if (!e->has_ts && (e->time_range & 1)) {
		warn_at(L, off, "events with 'ts' out of range",
			"skipped %s event: 'ts' out of range (beyond 2^63 ns)",
			e->name ? e->name : "an");
		return 0;
	}
	if (!e->has_ts) {
		warn_at(L, off, "events without 'ts'", "skipped %s event without 'ts'",
			e->name ? e->name : "an");
		return 0;
	}
	if (e->ph == 'X' && !e->has_dur && (e->time_range & 2)) {
		warn_at(L, off, "events with 'dur' out of range",
			"skipped event '%.*s': 'dur' out of range (beyond 2^63 ns)",
			NAME80(e->name ? e->name : ""));
		return 0;
	}
	if (e->ph == 'X' && !e->has_dur) {
		warn_at(L, off, "events without 'dur'", "skipped event '%.*s' without 'dur'",
			NAME80(e->name ? e->name : ""));
		return 0;
	}
	if (e->dur < 0) {
		warn_at(L, off, "events with negative 'dur'",
			"event '%.*s' has negative 'dur'; taken as 0",
			NAME80(e->name ? e->name : ""));
		e->dur = 0;
	}
	if (!e->name)
		e->name = L->par ? par_intern(L, "(unnamed)", 9)
				 : strtab_intern(&t->strs, "(unnamed)", 9);
	if (e->shapes_overflow && e->cat == CAT_OP && opmodel_class(e->name) != MODEL_NONE)
		warn_at(L, off, "ops with too many shape slots",
			"op '%.*s' records more than %d slots or %d dims; extra ones ignored",
			NAME80(e->name), MAX_SLOTS, MAX_DIMS);
	return 1;
}

static void add_op(struct loader *L, int64_t off, struct ev *e)
{
	struct kp_trace *t = L->t;
	if (e->ph == 'B' && L->chunk) {
		L->bail = 1;
		return;
	}
	struct kp_op *op = VEC_PUSH(t->ops, t->nops, t->capops);
	op->ts_ns = e->ts;
	op->dur_ns = e->ph == 'B' ? 0 : e->dur;
	op->name = e->name;
	op->off = off;
	op->thread = thread_index(L, e->pid, e->pid_str, e->tid, e->tid_str);
	op->parent = op->model = -1;
	int ns = 0;
	op->slots = copy_slots(L, e, &ns);
	op->nslots = (int16_t)ns;
	int64_t seq = name_info(L, e->name) & NI_SEQ ? e->seq : -1;
	if (e->kernel_flop != -1 || e->kernel_num_gb != -1 || seq != -1) /* else kp_opx_none's */
		*VEC_PUSH(t->opx, t->nopx,
			  t->capopx) = (struct kp_opx){ e->kernel_flop, e->kernel_num_gb, seq,
							(int32_t)(t->nops - 1), -1 };
	op->prec_hint = e->prec_hint;
	op->cls = (int8_t)name_class(L, e->name);
	*VEC_AT(t->op_ext, t->nops - 1, t->capop_ext) = e->ext_id;
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
	l->off = off;
	l->thread = thread_index(L, e->pid, e->pid_str, e->tid, e->tid_str);
	l->op = -1;
	*VEC_AT(t->launch_ids, t->nlaunches - 1,
		t->caplaunch_ids) = (struct kp_corr_ids){ e->corr, e->ext_id };
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
	g->off = off;
	g->device = (int32_t)(e->device >= 0 ? e->device
					     : (e->has_pid && !e->pid_str ? e->pid : 0));
	g->stream = e->stream >= 0 ? e->stream : (e->has_tid && !e->tid_str ? e->tid : 0);
	g->launch = g->op = -1;
	g->x = -1;
	if (e->bytes != -1 || e->kernel_flop != -1 || e->kernel_num_gb != -1 || e->mflops != -1 ||
	    e->mbytes != -1 || e->sm_clock_mhz != 0) { /* else kp_gpux_none's */
		g->x = (int32_t)t->ngpux;
		*VEC_PUSH(t->gpux, t->ngpux,
			  t->capgpux) = (struct kp_gpux){ e->bytes,         e->kernel_flop,
							  e->kernel_num_gb, e->mflops,
							  e->mbytes,        e->sm_clock_mhz };
	}
	g->step = -1;
	*VEC_AT(t->gpu_ids, t->ngpu - 1, t->capgpu_ids) = (struct kp_corr_ids){ e->corr,
										e->ext_id };
	g->kind = e->cat == CAT_KERNEL   ? GPU_KERNEL
		  : e->cat == CAT_MEMCPY ? GPU_MEMCPY
					 : GPU_MEMSET;
	if (e->coll || e->coll_in >= 0 || e->coll_out >= 0) {
		struct kp_coll *c = VEC_PUSH(t->colls, t->ncolls, t->capcolls);
		c->gpu = (int32_t)(t->ngpu - 1);
		c->group_size = e->coll_group > 0 && e->coll_group < INT32_MAX
					? (int32_t)e->coll_group
					: -1;
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
	/* only the scalar part needs resetting; slot arrays are guarded by counts.  The length
	 * is hidden from the compiler so this is a call to libc's memset (vector stores), not
	 * an inlined `rep stos`, which takes tens of cycles to start: 4% of a -j 1 parse */
	size_t head = offsetof(struct ev, slot_ndim);
	__asm__("" : "+r"(head));
	memset(&e, 0, head);
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

/* ---- parallel parse ---- */

/*
 * With kp_load_opts.jobs > 1 a producer thread reads (and inflates) the stream ahead and cuts
 * it into chunks, each right after a '}' that looks like the end of an event ('}' ws ',' ws
 * '{' ws '"').  A plain regular file is not read by the producer ("direct"): it only finds
 * the cuts, about every chunk size of the file, in a few kB read around each, and each worker
 * reads its chunk's bytes with pread(2) into a buffer of its own, so reading is as parallel
 * as parsing; the main thread reads what it parses itself from the file too.  Workers parse every chunk as if it stood inside the event array right after an
 * element, into records of its own (parse_event(), the serial code).  The main thread parses
 * serially as before and, whenever it stands after an element of the event array exactly
 * where a chunk starts, takes that chunk's records instead of parsing its bytes.  A chunk is
 * taken only when its own parse ended after an element at array level exactly at its last
 * byte, so the cut after it is an element boundary too (the parser is deterministic and it
 * started from one): the records are the ones the serial parse makes of those bytes.  The
 * guess of a cut is only a guess; its check is that parse.  Anything else -- the first chunk,
 * a cut inside a string or a nested object, JSON errors, truncation, the array's end,
 * non-object elements, B/E pairs -- is parsed serially from the chunk's start, and the main
 * thread takes chunks again at the next chunk start it stands on.  So output, warnings and
 * errors are those of --jobs 1 (tests/jobs/run.sh compares them).
 *
 * Strings are interned in t->strs under a lock, each loader keeping the canonical pointers it
 * has seen (L->cache), so records hold final pointers; threads are numbered per chunk and
 * renumbered in stream order when the chunk is merged, which keeps first-appearance order.
 */

#define PAR_MIN_CHUNK (64u << 10)
#define PAR_MAX_CHUNK (256u << 10)
#define PAR_MIN_BYTES (4u << 20)
/* the chunks being parsed hold at most max(this, 1/32 of the input) of input bytes in their
 * buffers, whatever --jobs asks: buffers, records of chunks not yet merged and each thread's
 * own tables are what the parallel parse costs on top of the serial one */
#define PAR_MIN_BUDGET (1u << 20)
#define PAR_BUDGET_DIV 32

/* How a parallel parse runs: chunk bytes, threads (the main one included). */
struct par_plan {
	size_t size;
	int jobs;
};

enum { CH_QUEUED, CH_TAKEN, CH_DONE, CH_CANCELLED };

/* A warning of a worker, located when its chunk is merged (the line needs earlier chunks). */
struct dwarn {
	const char *kind;
	int64_t off;
	char *msg;
	int64_t nl, last_nl; /* '\n' in the chunk before off; stream offset of the last, -1 */
};

struct chunk {
	char *buf; /* stream bytes [start, start + len); buf[len] NUL, JSON_PAD */
	size_t len;
	int64_t start;
	int unread;         /* direct: the worker that takes it reads its bytes into buf */
	struct chunk *next; /* set once by the producer (atomic) */
	int state; /* CH_*, written under par.lock (atomic: wait_done() reads it without) */
	/* the worker's results */
	int clean;           /* parsed to its last byte, ending after an element */
	struct kp_trace out; /* records; thread indexes local to the chunk */
	int64_t nobj, last_good_off;
	struct dwarn *warns;
	size_t nwarns, capwarns;
	int64_t nl, last_nl; /* '\n' in buf; stream offset of the last one, -1 none */
};

struct worker {
	struct par *P;
	struct loader L;
	struct kp_arena arena; /* its slots and thread keys; given to t->arena at the end */
	pthread_t th;
	int started;
	int64_t busy_ns, read_ns, life_ns; /* parsing chunks, reading them (direct), alive */
};

struct par {
	struct loader *L; /* the main thread's */
	pthread_mutex_t lock;
	/* each waits on its own: one wake-up a chunk for one worker, none for the others */
	pthread_cond_t cv;         /* the main thread: published, done, produced all */
	pthread_cond_t wcv;        /* workers: published, no more work, stop */
	pthread_cond_t pcv;        /* the producer: released, hungry, stop */
	int main_waits;            /* the main thread waits on cv */
	pthread_mutex_t str_lock;  /* t->strs */
	struct kp_arena str_arena; /* t->strs' strings while threads run */
	size_t size;               /* target chunk bytes; buffers hold 2 * size + JSON_PAD */
	int direct;                /* a plain regular file: workers pread their own chunks */
	int64_t chunks, merged;    /* published, taken by the main thread */
	int64_t prod_busy_ns;      /* the producer's time less its waits for room */
	int64_t merge_ns, release_ns, wait_ns; /* the main thread's */
	int64_t fsize;                         /* direct: the file's size when the parse started */
	pthread_t prod;
	struct chunk *head, *tail;
	int produced_all, read_failed;
	struct kp_diag read_diag;
	size_t nlive, maxlive; /* chunks published and not released */
	size_t lowlive;        /* a release wakes a waiting producer at this many, so it
				  publishes a few chunks a wake-up (a wake-up costs a switch) */
	int prod_waits;        /* the producer waits on pcv */
	int hungry;            /* the main thread waits for a chunk: publish past maxlive */
	char **pool;           /* buffers of released chunks: all are reused, none freed */
	size_t npool, cappool;
	struct kp_trace *spare; /* record vectors of released chunks, counts 0, for reuse: as
				   many as threads, the others freed */
	size_t nspare, capspare;
	int trim;         /* spare vectors were freed: give the heap's free pages back */
	int trimmed;      /* ... done (once) */
	struct worker *w; /* w[0]: the main thread's, for chunks it parses itself */
	int nw;
	struct chunk *qnext; /* no queued chunk before it */
	int nowork, stop;
	/* main thread only */
	struct chunk *cur; /* read cursor */
	size_t cur_off;
	int64_t pos;       /* direct: the stream offset of its next read */
	struct chunk *rel; /* last released (chunks are released in order) */
};

static int64_t par_sync(struct loader *L);
static void par_nowork(struct par *P);

static struct chunk *next_of(struct par *P, struct chunk *c)
{
	return c ? __atomic_load_n(&c->next, __ATOMIC_ACQUIRE)
		 : __atomic_load_n(&P->head, __ATOMIC_ACQUIRE);
}

static void defer_warn(struct loader *L, int64_t off, const char *kind, const char *msg)
{
	struct chunk *c = L->chunk;
	struct dwarn *w = VEC_PUSH(c->warns, c->nwarns, c->capwarns);
	w->kind = kind;
	w->off = off;
	w->msg = xstrdup(msg);
}

static const char *par_intern(struct loader *L, const char *s, size_t n)
{
	struct kp_hmap_entry *e = hmap_get_str(&L->cache, s, n);
	if (e)
		return e->key.ptr;
	struct par *P = L->par;
	pthread_mutex_lock(&P->str_lock);
	const char *c = strtab_intern(&P->L->t->strs, s, n);
	pthread_mutex_unlock(&P->str_lock);
	hmap_put_str(&L->cache, c, n, NULL); /* keyed by the canonical copy itself */
	return c;
}

static int is_space(int c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/*
 * Whether b[0..len) starts as what follows a cut ('}' before it): ws ',' ws '{' ws '"': 1 yes,
 * 0 no, -1 it ends before that is known.
 */
static int cut_follows(const char *b, size_t len)
{
	static const char want[] = ",{\"";
	size_t j = 0;
	for (int w = 0; w < 3; w++) {
		while (j < len && is_space((unsigned char)b[j]))
			j++;
		if (j >= len)
			return -1;
		if (b[j++] != want[w])
			return 0;
	}
	return 1;
}

/*
 * Where to cut b[0..len): just after the last '}' of '}' ws ',' ws '{' ws '"' in the second
 * half; len when there is none (the chunks on both sides of such a cut parse serially).
 */
static size_t find_cut(const char *b, size_t len)
{
	size_t lo = len / 2, i = len;
	while (i > lo) {
		const char *q = memrchr(b + lo, '{', i - lo);
		if (!q)
			break;
		i = (size_t)(q - b);
		size_t j = i + 1, k = i;
		while (j < len && is_space((unsigned char)b[j]))
			j++;
		if (j >= len || b[j] != '"')
			continue;
		while (k > 0 && is_space((unsigned char)b[k - 1]))
			k--;
		if (k == 0 || b[k - 1] != ',')
			continue;
		k--;
		while (k > 0 && is_space((unsigned char)b[k - 1]))
			k--;
		if (k > 0 && b[k - 1] == '}')
			return k;
	}
	return len;
}

/* under P->lock */
static char *get_buf(struct par *P)
{
	return P->npool ? P->pool[--P->npool] : xmalloc(2 * P->size + JSON_PAD);
}

/* under P->lock: something the main thread may wait for happened */
static void wake_main(struct par *P)
{
	if (P->main_waits)
		pthread_cond_signal(&P->cv);
}

/* under P->lock: the main thread waits for a change */
static void main_wait(struct par *P)
{
	int64_t t0 = stages_now();
	P->main_waits = 1;
	pthread_cond_wait(&P->cv, &P->lock);
	P->main_waits = 0;
	P->wait_ns += stages_now() - t0;
}

/* A chunk of @len bytes at @start, in @buf (NULL: direct, its worker reads them). */
static void publish(struct par *P, char *buf, size_t len, int64_t start)
{
	struct chunk *c = xcalloc(1, sizeof(*c));
	c->buf = buf;
	c->len = len;
	c->start = start;
	c->unread = !buf;
	if (buf)
		memset(buf + len, 0, JSON_PAD);
	/* the stream's first bytes never parse as elements of the event array */
	c->state = start == 0 ? CH_CANCELLED : CH_QUEUED;
	pthread_mutex_lock(&P->lock);
	if (P->tail)
		__atomic_store_n(&P->tail->next, c, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&P->head, c, __ATOMIC_RELEASE);
	P->tail = c;
	P->chunks++;
	if (!P->qnext && c->state == CH_QUEUED)
		P->qnext = c;
	P->nlive++;
	if (c->state == CH_QUEUED)
		pthread_cond_signal(&P->wcv);
	wake_main(P);
	pthread_mutex_unlock(&P->lock);
}

/* The producer after a publish: wait for room (chunks released); 1: stop. */
static int wait_room(struct par *P, int64_t *waited)
{
	int64_t t0 = stages_now();
	pthread_mutex_lock(&P->lock);
	while (!P->stop && P->nlive >= P->maxlive && !P->hungry) {
		P->prod_waits = 1;
		pthread_cond_wait(&P->pcv, &P->lock);
		P->prod_waits = 0;
	}
	if (P->nlive >= P->maxlive)
		P->hungry = 0; /* one chunk past the bound per request of the main thread */
	int stop = P->stop;
	pthread_mutex_unlock(&P->lock);
	*waited += stages_now() - t0;
	return stop;
}

/* The producer is done; it started at @t0 and waited @waited ns for room. */
static void produced_all(struct par *P, int64_t t0, int64_t waited)
{
	pthread_mutex_lock(&P->lock);
	P->prod_busy_ns = stages_now() - t0 - waited;
	P->produced_all = 1;
	wake_main(P);
	pthread_mutex_unlock(&P->lock);
}

/* The producer: reads (inflates) the input into chunks ahead of the parsers. */
static void *producer(void *arg)
{
	struct par *P = arg;
	size_t S = P->size;
	int64_t off = 0, t0 = stages_now(), waited = 0;
	pthread_mutex_lock(&P->lock);
	char *buf = get_buf(P);
	pthread_mutex_unlock(&P->lock);
	size_t len = 0;
	for (;;) {
		int end = 0;
		while (len < S) {
			/* up to S: the buffer holds 2 S, for a carry of up to S, but only the
			 * bytes read are touched (RSS) */
			ssize_t n = input_read(&P->L->in, buf + len, S - len, &P->read_diag);
			if (n <= 0) {
				P->read_failed = n < 0; /* published under the lock below */
				end = 1;
				break;
			}
			len += (size_t)n;
		}
		if (end) {
			publish(P, buf, len, off);
			break;
		}
		size_t cut = find_cut(buf, len);
		pthread_mutex_lock(&P->lock);
		char *nb = get_buf(P);
		pthread_mutex_unlock(&P->lock);
		memcpy(nb, buf + cut, len - cut);
		publish(P, buf, cut, off);
		off += (int64_t)cut;
		buf = nb;
		len -= cut;
		if (wait_room(P, &waited)) {
			free(buf);
			break;
		}
	}
	produced_all(P, t0, waited);
	return NULL;
}

/*
 * The end of a chunk that starts before @from: just after the first '}' at or after @from
 * that find_cut() would cut after, or @limit (cuts are read from the file, a window at a time).
 */
static int64_t next_cut(struct par *P, int64_t from, int64_t limit)
{
	char b[8192];
	struct kp_diag d;
	while (from < limit) {
		ssize_t n = input_pread(&P->L->in, b, sizeof(b), from, &d);
		if (n <= 0)
			break;
		size_t len = (size_t)n, i = 0, next = len;
		const char *q;
		while (i < len && (q = memchr(b + i, '}', len - i))) {
			i = (size_t)(q - b);
			if (from + (int64_t)i + 1 > limit)
				return limit;
			int r = cut_follows(b + i + 1, len - i - 1);
			if (r > 0)
				return from + (int64_t)i + 1;
			if (r < 0 && i > 0 && len == sizeof(b)) {
				next = i; /* the window ends in it: look again from the '}' */
				break;
			}
			i++;
		}
		from += (int64_t)next;
		if (len < sizeof(b))
			break;
	}
	return limit;
}

/*
 * The producer of a direct parse: only the chunks' bounds, cut about every P->size bytes of
 * the file (next_cut()); the workers read the chunks' bytes themselves, in parallel, into
 * buffers of their own.
 */
static void *producer_direct(void *arg)
{
	struct par *P = arg;
	int64_t S = (int64_t)P->size, size = P->fsize, start = 0;
	int64_t t0 = stages_now(), waited = 0;
	for (int64_t k = 1; start < size; k++) {
		int64_t lim = (k + 1) * S < size ? (k + 1) * S : size;
		int64_t end = k * S >= size ? size : next_cut(P, k * S, lim);
		publish(P, NULL, (size_t)(end - start), start);
		start = end;
		if (wait_room(P, &waited))
			break;
	}
	produced_all(P, t0, waited);
	return NULL;
}

/* Direct: chunk @c's bytes into its buffer; 0 when they cannot all be read. */
static int chunk_read(struct worker *W, struct chunk *c)
{
	struct kp_diag d;
	c->unread = 0;
	int64_t t0 = stages_now();
	ssize_t n = input_pread(&W->P->L->in, c->buf, c->len, c->start, &d);
	W->read_ns += stages_now() - t0;
	if (n != (ssize_t)c->len)
		return 0;
	memset(c->buf + c->len, 0, JSON_PAD);
	return 1;
}

/*
 * The lines of a clean chunk's warnings within the chunk (one pass over it), so merging them
 * needs only the lines before it, not its bytes.
 */
static void locate_warns(struct chunk *c)
{
	size_t at = 0;
	int64_t lines = 0, last_nl = -1;
	for (size_t i = 0; i < c->nwarns; i++) {
		struct dwarn *w = &c->warns[i];
		size_t k = (size_t)(w->off - c->start);
		lines += json_count_nl(c->buf + at, k - at);
		const char *nl = memrchr(c->buf + at, '\n', k - at);
		if (nl)
			last_nl = c->start + (nl - c->buf);
		at = k;
		w->nl = lines;
		w->last_nl = last_nl;
	}
}

/* Parse chunk @c as elements of the event array, into c->out. */
static void chunk_parse(struct worker *W, struct chunk *c)
{
	struct loader *L = &W->L;
	struct kp_json_tok tk;
	if (c->unread && !chunk_read(W, c))
		return; /* not clean: the main thread reads it and meets what went wrong */
	L->t = &c->out;
	L->chunk = c;
	L->bail = 0;
	L->last_thread = -1;
	L->last_good_off = -1;
	hmap_free(&L->threads);
	hmap_init(&L->threads, HMAP_STR);
	/* depth counted from the array: one level less than the stream's parser, so a chunk
	 * too deep for it is too deep here (and parsed serially) */
	json_init_elems(&L->p, c->buf, c->len, c->start, JSON_MAX_DEPTH - 1);
	for (;;) {
		if (json_elems_done(&L->p)) {
			c->clean = 1;
			break;
		}
		if (json_next(&L->p, &tk) != JT_OBJ)
			break;
		c->nobj++;
		if (parse_event(L, tk.off) < 0 || L->bail)
			break;
	}
	json_free(&L->p);
	c->last_good_off = L->last_good_off;
	L->chunk = NULL;
	L->t = NULL;
	if (c->clean) {
		locate_warns(c);
		c->nl = json_count_nl(c->buf, c->len);
		const char *nl = memrchr(c->buf, '\n', c->len);
		c->last_nl = nl ? c->start + (nl - c->buf) : -1;
	}
}

static void parse_timed(struct worker *W, struct chunk *c)
{
	int64_t t0 = stages_now();
	chunk_parse(W, c);
	W->busy_ns += stages_now() - t0;
}

/*
 * under P->lock: @c is parsed.  Direct, its buffer goes back at once: the main thread reads
 * from the file, and merging needs no bytes of the chunk (locate_warns()).
 */
static void chunk_done(struct par *P, struct chunk *c)
{
	__atomic_store_n(&c->state, CH_DONE, __ATOMIC_RELEASE);
	if (P->direct && c->buf) {
		*VEC_PUSH(P->pool, P->npool, P->cappool) = c->buf;
		c->buf = NULL;
	}
	wake_main(P);
}

/* under P->lock: the first queued chunk, now taken, or NULL */
static struct chunk *take(struct par *P)
{
	struct chunk *c = P->qnext;
	while (c && c->state != CH_QUEUED)
		c = next_of(P, c);
	P->qnext = c;
	if (c) {
		__atomic_store_n(&c->state, CH_TAKEN, __ATOMIC_RELAXED);
		if (c->unread)
			c->buf = get_buf(P);
		/* vectors already grown and touched: no page faults, no regrowth per chunk */
		if (P->nspare)
			c->out = P->spare[--P->nspare];
	}
	return c;
}

static void *worker_main(void *arg)
{
	struct worker *W = arg;
	struct par *P = W->P;
	int64_t t0 = stages_now();
	pthread_mutex_lock(&P->lock);
	for (;;) {
		struct chunk *c = NULL;
		while (!P->stop && !P->nowork && !(c = take(P)))
			pthread_cond_wait(&P->wcv, &P->lock);
		if (!c)
			break;
		pthread_mutex_unlock(&P->lock);
		parse_timed(W, c);
		pthread_mutex_lock(&P->lock);
		chunk_done(P, c);
	}
	pthread_mutex_unlock(&P->lock);
	W->life_ns = stages_now() - t0;
	return NULL;
}

static void chunk_free_results(struct chunk *c)
{
	trace_free(&c->out);
	for (size_t i = 0; i < c->nwarns; i++)
		free(c->warns[i].msg);
	free(c->warns);
	c->warns = NULL;
	c->nwarns = c->capwarns = 0;
}

/* under P->lock: the main thread is done with @c (the oldest not released). */
static void release_locked(struct par *P, struct chunk *c)
{
	if (c->state == CH_QUEUED)
		__atomic_store_n(&c->state, CH_CANCELLED, __ATOMIC_RELAXED);
	while (c->state == CH_TAKEN)
		main_wait(P);
	/* kept even past maxlive: a burst of releases is followed by a burst of reads */
	if (c->buf)
		*VEC_PUSH(P->pool, P->npool, P->cappool) = c->buf;
	c->buf = NULL;
	P->nlive--;
	P->rel = c;
	if (P->nspare >= (size_t)P->nw) {
		/* freed (chunk_free_results()): the vectors of a burst of chunks parsed ahead
		 * (e.g. while the main thread parses the document's start) would stay for the
		 * whole parse.  The first burst's pages go back to the system; not at every
		 * release: faulting them in again cost 1.1-1.2x wall time on big200 -j 2 */
		P->trim = P->trim || !P->trimmed;
	} else if (c->out.capops || c->out.capgpu || c->out.caplaunches) {
		struct kp_trace *o = &c->out, *k = VEC_PUSH(P->spare, P->nspare, P->capspare);
		memset(k, 0, sizeof(*k));
		k->ops = o->ops, k->capops = o->capops;
		k->launches = o->launches, k->caplaunches = o->caplaunches;
		k->gpu = o->gpu, k->capgpu = o->capgpu;
		k->op_ext = o->op_ext, k->capop_ext = o->capop_ext;
		k->launch_ids = o->launch_ids, k->caplaunch_ids = o->caplaunch_ids;
		k->gpu_ids = o->gpu_ids, k->capgpu_ids = o->capgpu_ids;
		o->op_ext = NULL, o->launch_ids = NULL, o->gpu_ids = NULL;
		k->threads = o->threads, k->capthreads = o->capthreads;
		k->steps = o->steps, k->capsteps = o->capsteps;
		k->annots = o->annots, k->capannots = o->capannots;
		k->ranges = o->ranges, k->capranges = o->capranges;
		k->colls = o->colls, k->capcolls = o->capcolls;
		o->ops = NULL, o->launches = NULL, o->gpu = NULL, o->threads = NULL;
		o->steps = NULL, o->annots = NULL, o->ranges = NULL, o->colls = NULL;
	}
}

/*
 * The main thread is done with the chunks up to @last (released in order): their buffers and
 * record vectors go back, under one lock.
 */
static void release_upto(struct par *P, struct chunk *last)
{
	int64_t t0 = stages_now();
	struct chunk *first = next_of(P, P->rel);
	pthread_mutex_lock(&P->lock);
	for (struct chunk *c = first;; c = next_of(P, c)) {
		release_locked(P, c);
		if (c == last)
			break;
	}
	int wake = P->prod_waits && P->nlive <= P->lowlive, trim = P->trim;
	P->trimmed |= trim;
	P->trim = 0;
	pthread_mutex_unlock(&P->lock);
	if (wake)
		pthread_cond_signal(&P->pcv);
	for (struct chunk *c = first;; c = next_of(P, c)) {
		chunk_free_results(c);
		if (c == last)
			break;
	}
#ifdef __GLIBC__
	if (trim)
		malloc_trim(0);
#endif
	P->release_ns += stages_now() - t0;
}

/* The chunk after @c (NULL: the first), waiting for the producer; NULL after the last. */
static struct chunk *wait_next(struct par *P, struct chunk *c)
{
	struct chunk *n = next_of(P, c);
	if (n)
		return n;
	pthread_mutex_lock(&P->lock);
	while (!(n = next_of(P, c)) && !P->produced_all) {
		P->hungry = 1;
		pthread_cond_signal(&P->pcv);
		main_wait(P);
	}
	P->hungry = 0;
	pthread_mutex_unlock(&P->lock);
	return n;
}

/* Wait until @c is parsed, parsing it (or later queued chunks) on this thread meanwhile. */
static void wait_done(struct par *P, struct chunk *c)
{
	if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == CH_DONE)
		return;
	pthread_mutex_lock(&P->lock);
	while (c->state == CH_QUEUED || c->state == CH_TAKEN) {
		struct chunk *s = P->nowork ? NULL : take(P);
		if (!s) {
			main_wait(P);
			continue;
		}
		pthread_mutex_unlock(&P->lock);
		parse_timed(&P->w[0], s);
		pthread_mutex_lock(&P->lock);
		chunk_done(P, s);
	}
	pthread_mutex_unlock(&P->lock);
}

/*
 * The main parser's reads in a direct parse: the file's bytes from P->pos on, a chunk's worth
 * at most (the parser goes on after the chunks it takes: more would be read for nothing).
 */
static ssize_t par_pread(struct loader *L, void *buf, size_t cap)
{
	struct par *P = L->par;
	if (cap > P->size)
		cap = P->size;
	ssize_t n = input_pread(&L->in, buf, cap, P->pos, &L->read_diag);
	if (n < 0) {
		L->read_err = 1;
		return -1;
	}
	P->pos += n;
	return n;
}

/* The main parser's reads: the chunks' bytes from the cursor on. */
static ssize_t par_read(struct loader *L, void *buf, size_t cap)
{
	struct par *P = L->par;
	if (P->direct)
		return par_pread(L, buf, cap);
	for (;;) {
		struct chunk *c = P->cur;
		if (c && P->cur_off < c->len) {
			size_t n = c->len - P->cur_off < cap ? c->len - P->cur_off : cap;
			memcpy(buf, c->buf + P->cur_off, n);
			P->cur_off += n;
			return (ssize_t)n;
		}
		struct chunk *n = wait_next(P, c);
		if (!n) {
			pthread_mutex_lock(&P->lock);
			int failed = P->read_failed;
			pthread_mutex_unlock(&P->lock);
			if (!failed)
				return 0;
			L->read_diag = P->read_diag;
			L->read_err = 1;
			return -1;
		}
		P->cur = n;
		P->cur_off = 0;
	}
}

static void *vec_append(void *vec, size_t *n, size_t *cap, const void *src, size_t m, size_t size)
{
	if (m == 0)
		return vec;
	if (*n + m > *cap) {
		size_t c = *cap ? *cap : 256;
		while (c < *n + m)
			c *= 2;
		vec = xrealloc(vec, c * size);
		*cap = c;
	}
	memcpy((char *)vec + *n * size, src, m * size);
	*n += m;
	return vec;
}
#define APPEND(v, n, cap, src, m) ((v) = vec_append((v), &(n), &(cap), (src), (m), sizeof(*(v))))

/* The ids of @o's records after @t's (before the records themselves are appended). */
static void merge_ids(struct kp_trace *t, const struct kp_trace *o)
{
	size_t n = t->nops;
	APPEND(t->op_ext, n, t->capop_ext, o->op_ext, o->nops);
	n = t->nlaunches;
	APPEND(t->launch_ids, n, t->caplaunch_ids, o->launch_ids, o->nlaunches);
	n = t->ngpu;
	APPEND(t->gpu_ids, n, t->capgpu_ids, o->gpu_ids, o->ngpu);
}

/* Chunk @c's records after the trace's; @lines, @last_nl: json_lines_at() at its start. */
static void merge(struct loader *L, struct chunk *c, int64_t lines, int64_t last_nl)
{
	struct kp_trace *t = L->t, *o = &c->out;
	int32_t *map = xmalloc((o->nthreads ? o->nthreads : 1) * sizeof(*map));
	for (size_t i = 0; i < o->nthreads; i++)
		map[i] = thread_index(L, o->threads[i].pid, o->threads[i].pid_str,
				      o->threads[i].tid, o->threads[i].tid_str);
	merge_ids(t, o);
	size_t i0 = t->nops, x0 = t->nopx;
	APPEND(t->ops, t->nops, t->capops, o->ops, o->nops);
	APPEND(t->opx, t->nopx, t->capopx, o->opx, o->nopx);
	for (size_t i = i0; i < t->nops; i++)
		t->ops[i].thread = map[t->ops[i].thread];
	for (size_t i = x0; i < t->nopx; i++)
		t->opx[i].op += (int32_t)i0;
	i0 = t->nlaunches;
	APPEND(t->launches, t->nlaunches, t->caplaunches, o->launches, o->nlaunches);
	for (size_t i = i0; i < t->nlaunches; i++)
		t->launches[i].thread = map[t->launches[i].thread];
	size_t g0 = t->ngpu;
	x0 = t->ngpux;
	APPEND(t->gpu, t->ngpu, t->capgpu, o->gpu, o->ngpu);
	APPEND(t->gpux, t->ngpux, t->capgpux, o->gpux, o->ngpux);
	for (size_t i = g0; i < t->ngpu; i++)
		if (t->gpu[i].x >= 0)
			t->gpu[i].x += (int32_t)x0;
	i0 = t->ncolls;
	APPEND(t->colls, t->ncolls, t->capcolls, o->colls, o->ncolls);
	for (size_t i = i0; i < t->ncolls; i++)
		t->colls[i].gpu += (int32_t)g0;
	i0 = t->nsteps;
	APPEND(t->steps, t->nsteps, t->capsteps, o->steps, o->nsteps);
	for (size_t i = i0; i < t->nsteps; i++)
		t->steps[i].thread = map[t->steps[i].thread];
	i0 = t->nannots;
	APPEND(t->annots, t->nannots, t->capannots, o->annots, o->nannots);
	for (size_t i = i0; i < t->nannots; i++)
		t->annots[i].thread = map[t->annots[i].thread];
	APPEND(t->ranges, t->nranges, t->capranges, o->ranges, o->nranges);
	t->nevents += o->nevents;
	t->nskipped += o->nskipped;
	t->nflows += o->nflows;
	if (c->last_good_off >= 0)
		L->last_good_off = c->last_good_off;
	/* warnings in stream order, located as json_locate() does (see locate_warns()) */
	for (size_t i = 0; i < c->nwarns; i++) {
		const struct dwarn *w = &c->warns[i];
		int64_t l = lines + w->nl + 1,
			col = w->off - (w->last_nl >= 0 ? w->last_nl : last_nl);
		char loc[512];
		snprintf(loc, sizeof(loc), "%s:%d:%d", t->display, l > INT_MAX ? INT_MAX : (int)l,
			 col > INT_MAX ? INT_MAX : (int)col);
		diag_warn_add(&t->warn, w->kind, loc, "%s", w->msg);
	}
	free(map);
}

/*
 * At the top of the event array's loop: when the parser stands after an element where a
 * chunk starts, merge that chunk and the clean ones after it and go on after them.  Returns
 * the event objects merged.
 */
static int64_t par_sync(struct loader *L)
{
	struct par *P = L->par;
	int64_t off;
	if (P->nowork || !json_after_value(&L->p, &off))
		return 0;
	struct chunk *c, *behind = NULL;
	/* chunks wholly behind the parser are of no more use */
	for (c = next_of(P, P->rel); c && c->start + (int64_t)c->len <= off; c = next_of(P, c))
		behind = c;
	if (behind)
		release_upto(P, behind);
	if (!c)
		c = wait_next(P, P->rel); /* off is the end of every published byte */
	if (!c || c->start != off)
		return 0;
	int64_t lines, last_nl, nobj = 0;
	json_lines_at(&L->p, &lines, &last_nl);
	int merged = 0;
	while (c && c->start == off) {
		wait_done(P, c);
		if (!c->clean)
			break;
		int64_t t1 = stages_now();
		merge(L, c, lines, last_nl);
		P->merge_ns += stages_now() - t1;
		nobj += c->nobj;
		lines += c->nl;
		if (c->last_nl >= 0)
			last_nl = c->last_nl;
		off += (int64_t)c->len;
		P->merged++;
		/* released a few at a time: one lock for them all */
		if (++merged % 8 == 0)
			release_upto(P, c);
		behind = c;
		c = wait_next(P, c);
	}
	if (merged) {
		if (P->rel != behind)
			release_upto(P, behind);
		json_resume(&L->p, off, lines, last_nl);
		P->cur = P->rel;
		P->cur_off = P->rel->len;
		P->pos = off;
	}
	return nobj;
}

/* The event array ended: parsing ahead is of no more use. */
static void par_nowork(struct par *P)
{
	pthread_mutex_lock(&P->lock);
	P->nowork = 1;
	pthread_cond_broadcast(&P->wcv);
	pthread_mutex_unlock(&P->lock);
}

static void worker_init(struct worker *W, struct par *P)
{
	memset(W, 0, sizeof(*W));
	W->P = P;
	arena_init(&W->arena);
	W->L.arena = &W->arena;
	W->L.par = P;
	W->L.annotations = P->L->annotations;
	W->L.last_thread = -1;
	hmap_init(&W->L.threads, HMAP_STR);
	hmap_init(&W->L.names, HMAP_PTR);
	hmap_init(&W->L.slots, HMAP_STR);
	hmap_init(&W->L.cache, HMAP_STR);
}

/*
 * Start the producer and @jobs - 1 workers (the main thread is the last one) over L->in, in
 * chunks of about @size bytes.  Without a producer the parse stays serial.
 */
static void par_start(struct loader *L, const struct par_plan *plan)
{
	int jobs = plan->jobs;
	size_t size = plan->size;
	struct par *P = xcalloc(1, sizeof(*P));
	P->L = L;
	pthread_mutex_init(&P->lock, NULL);
	pthread_cond_init(&P->cv, NULL);
	pthread_cond_init(&P->wcv, NULL);
	pthread_cond_init(&P->pcv, NULL);
	pthread_mutex_init(&P->str_lock, NULL);
	arena_init(&P->str_arena);
	P->size = size;
	P->maxlive = (size_t)jobs + 3;
	struct stat st;
	if (!L->in.codec && fstat(L->in.fd, &st) == 0) {
		P->direct = 1;
		P->fsize = st.st_size;
		/* a chunk holds a buffer only while it is parsed: more of them cost little, and
		 * the producer wakes once every jobs + 6 chunks */
		P->maxlive = 3 * (size_t)jobs + 8;
		P->lowlive = (size_t)jobs + 2;
	} else {
		P->lowlive = P->maxlive / 2;
	}

	P->nw = jobs;
	P->w = xcalloc((size_t)jobs, sizeof(*P->w));
	for (int i = 0; i < jobs; i++)
		worker_init(&P->w[i], P);
	/* from here t->strs is shared: its strings go to their own arena, under str_lock */
	L->t->strs.arena = &P->str_arena;
	L->par = P;
	L->p.short_reads = 1; /* one chunk at a time: the producer may wait for releases */
	if (pthread_create(&P->prod, NULL, P->direct ? producer_direct : producer, P) != 0) {
		L->par = NULL;
		L->p.short_reads = 0;
		L->t->strs.arena = &L->t->arena;
		for (int i = 0; i < jobs; i++)
			hmap_free(&P->w[i].L.threads), hmap_free(&P->w[i].L.names),
				hmap_free(&P->w[i].L.slots), hmap_free(&P->w[i].L.cache);
		free(P->w);
		free(P->pool);
		free(P->spare);
		free(P);
		return;
	}
	for (int i = 1; i < jobs; i++)
		P->w[i].started = pthread_create(&P->w[i].th, NULL, worker_main, &P->w[i]) == 0;
}

/*
 * The input bytes of a parallel parse of @in (gzip and zstd decompress to about 8x their
 * size), 0 for a serial one: only regular files (a pipe's writer could keep the producer
 * waiting after the parse ended), and only when there are a few chunks per job.
 */
static uint64_t par_bytes(struct kp_input *in, const struct kp_load_opts *o)
{
	struct stat st;
	if (o->jobs <= 1 || fstat(in->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	uint64_t bytes = (uint64_t)st.st_size * (in->codec ? 8 : 1);
	if (bytes < PAR_MIN_BYTES && !o->chunk)
		return 0; /* threads cost more than they bring (block_bf16.json, 0.6 MB: 2x slower) */
	return bytes ? bytes : 1;
}

/* The chunk size for @jobs threads over @bytes: about 4 chunks a thread, within bounds. */
static size_t par_chunk(const struct kp_load_opts *o, uint64_t bytes, int jobs)
{
	if (o->chunk) /* bounded: buffers hold 2 * size + JSON_PAD, which must not wrap */
		return o->chunk < 64 ? 64 : o->chunk > (1u << 30) ? (1u << 30) : o->chunk;
	uint64_t size = bytes / (4 * (uint64_t)jobs);
	return size < PAR_MIN_CHUNK ? PAR_MIN_CHUNK : size > PAR_MAX_CHUNK ? PAR_MAX_CHUNK : size;
}

/*
 * The plan of a parallel parse of @in (0: a serial one): threads at most two fewer than the
 * chunks that fit the memory budget (two more for the producer's and the main thread's
 * reads), so that a thread count past what the input's size warrants costs no memory.  Fewer
 * threads make larger chunks, which may fit fewer: until it holds.
 */
static int par_plan(struct kp_input *in, const struct kp_load_opts *o, struct par_plan *plan)
{
	uint64_t bytes = par_bytes(in, o);
	if (!bytes)
		return 0;
	uint64_t budget = bytes / PAR_BUDGET_DIV > PAR_MIN_BUDGET ? bytes / PAR_BUDGET_DIV
								  : PAR_MIN_BUDGET;
	plan->jobs = o->jobs;
	for (;;) {
		plan->size = par_chunk(o, bytes, plan->jobs);
		uint64_t fit = budget / plan->size < 4 ? 4 : budget / plan->size;
		if ((uint64_t)plan->jobs + 2 <= fit)
			return 1;
		plan->jobs = (int)(fit - 2);
	}
}

/* Stop and join the threads; their memory goes to the trace's arena. */
/* What the parse's threads did, once they are joined. */
static void par_stats(const struct par *P, struct kp_load_stats *st)
{
	st->threads = P->nw;
	st->direct = P->direct;
	st->chunks = P->chunks;
	st->merged = P->merged;
	st->main_merge_ns = P->merge_ns;
	st->main_release_ns = P->release_ns;
	st->main_wait_ns = P->wait_ns;
	st->reader_busy_ns = P->prod_busy_ns;
	for (int i = 0; i < P->nw; i++) {
		st->workers_busy_ns += P->w[i].busy_ns;
		st->workers_read_ns += P->w[i].read_ns;
		st->workers_ns += P->w[i].life_ns;
	}
}

static void par_stop(struct loader *L, struct kp_load_stats *st)
{
	struct par *P = L->par;
	struct kp_trace *t = L->t;
	pthread_mutex_lock(&P->lock);
	P->stop = 1;
	pthread_cond_broadcast(&P->wcv);
	pthread_cond_broadcast(&P->pcv);
	pthread_mutex_unlock(&P->lock);
	pthread_join(P->prod, NULL);
	for (int i = 1; i < P->nw; i++)
		if (P->w[i].started)
			pthread_join(P->w[i].th, NULL);
	if (st)
		par_stats(P, st);
	for (struct chunk *c = P->head, *n; c; c = n) {
		n = c->next;
		free(c->buf);
		chunk_free_results(c);
		free(c);
	}
	for (size_t i = 0; i < P->npool; i++)
		free(P->pool[i]);
	free(P->pool);
	for (size_t i = 0; i < P->nspare; i++)
		trace_free(&P->spare[i]);
	free(P->spare);
	t->strs.arena = &t->arena;
	arena_adopt(&t->arena, &P->str_arena);
	for (int i = 0; i < P->nw; i++) {
		struct loader *W = &P->w[i].L;
		free(W->scratch[0]);
		free(W->scratch[1]);
		free(W->open);
		hmap_free(&W->threads);
		hmap_free(&W->names);
		hmap_free(&W->slots);
		hmap_free(&W->cache);
		arena_adopt(&t->arena, &P->w[i].arena);
	}
	free(P->w);
	pthread_mutex_destroy(&P->lock);
	pthread_cond_destroy(&P->cv);
	pthread_cond_destroy(&P->wcv);
	pthread_cond_destroy(&P->pcv);
	pthread_mutex_destroy(&P->str_lock);
	free(P);
	L->par = NULL;
	L->p.short_reads = 0;
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
			nobj += par_sync(L);
		enum kp_json_type ty = json_next(&L->p, &tk);
		if (ty == JT_ARR_END)
			break;
		if (ty == JT_ERROR)
			return -1;
		if (ty == JT_OBJ) {
			nobj++;
			/* its warnings name where it starts, however long it is */
			L->p.pin = tk.off;
			int rc = parse_event(L, tk.off);
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
		skip_malformed(L, tk.off, "not an object");
	}
	if (L->par)
		par_nowork(L->par);
	if (nother && !nobj) {
		/* not a trace: the per-element warnings would only repeat the error */
		diag_warn_free(&L->t->warn);
		char loc[512];
		locate(L, first_other, loc, sizeof(loc));
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
		locate(L, tk.off, loc, sizeof(loc));
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
	int r = read_int(L, 0, &v);
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
		locate(L, tk->off, loc, sizeof(loc)); /* the key: still in the window */
		enum kp_json_type ty = json_str_capped(&L->p, tk, name, sizeof(name), &cut);
		if (ty == JT_OBJ || ty == JT_ARR)
			return json_skip_rest(&L->p) < 0 ? -1 : 0;
		if (ty != JT_STR)
			return ty == JT_ERROR ? -1 : 0;
		dp->name = intern_tok(L, tk);
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
		int_member(L, &dp->total_mem, INT64_MIN, &r);
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
	locate(L, at, loc, sizeof(loc));
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
	if (o && par_plan(&L->in, o, &plan))
		par_start(L, &plan);
	int rc = parse_document(L);
	if (o && o->stats)
		memset(o->stats, 0, sizeof(*o->stats));
	if (L->par)
		par_stop(L, o->stats);
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
	locate(L, L->p.err_off, loc, sizeof(loc));
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
	json_fail(L);
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

void trace_free_ids(struct kp_trace *t)
{
	free(t->op_ext);
	free(t->launch_ids);
	free(t->gpu_ids);
	t->op_ext = NULL;
	t->launch_ids = t->gpu_ids = NULL;
	t->capop_ext = t->caplaunch_ids = t->capgpu_ids = 0;
}

void trace_drop_records(struct kp_trace *t)
{
	trace_free_ids(t);
	free(t->ops);
	free(t->launches);
	free(t->gpu);
	free(t->opx);
	free(t->gpux);
	free(t->threads);
	free(t->steps);
	free(t->annots);
	free(t->ranges);
	free(t->colls);
	t->ops = NULL, t->nops = t->capops = 0;
	t->launches = NULL, t->nlaunches = t->caplaunches = 0;
	t->gpu = NULL, t->ngpu = t->capgpu = 0;
	t->opx = NULL, t->nopx = t->capopx = 0;
	t->gpux = NULL, t->ngpux = t->capgpux = 0;
	t->threads = NULL, t->nthreads = t->capthreads = 0;
	t->steps = NULL, t->nsteps = t->capsteps = 0;
	t->annots = NULL, t->nannots = t->capannots = 0;
	t->ranges = NULL, t->nranges = t->capranges = 0;
	t->colls = NULL, t->ncolls = t->capcolls = 0;
}

void trace_free(struct kp_trace *t)
{
	trace_drop_records(t);
	free(t->devs);
	strtab_free(&t->strs);
	diag_warn_free(&t->warn);
	arena_free(&t->arena);
	memset(t, 0, sizeof(*t));
}
