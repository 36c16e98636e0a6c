/*
 * trace-decode.c — one trace event's members -> the records of struct kp_trace (kp_op,
 * kp_launch, kp_gpu, kp_step, kp_annot, kp_range, kp_coll): categories, names, times, ids,
 * args (shapes, dtypes, Inductor and kprof counters), threads, B/E pairing.
 *
 * Each element of traceEvents is read key by key; categories nobody needs are
 * skipped with json_skip_rest() as soon as "cat" is known, args keys outside a
 * whitelist are skipped without building anything, and a record is appended only
 * when its event is complete, so a truncated file keeps every whole event.  The serial
 * parse and every worker of src/ingest/trace-chunk.c run this code (trace_parse_event()).
 */
#include "kprof/trace-internal.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/stages.h"

static const char empty_str[] = "";

static struct kp_slot *decode_new(struct loader *L, struct ev *e, int n);

void trace_locate(struct loader *L, int64_t off, char *buf, size_t cap)
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
		L->defer_warn(L, off, kind, msg); /* located when the chunk is merged */
		return;
	}
	trace_locate(L, off, loc, sizeof(loc));
	diag_warn_add(&L->t->warn, kind, loc, "%s", msg);
}

int trace_json_fail(struct loader *L)
{
	if (L->read_err) {
		*L->d = L->read_diag;
		return -1;
	}
	char loc[512];
	trace_locate(L, L->p.err_off, loc, sizeof(loc));
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
const char *trace_intern_tok(struct loader *L, const struct kp_json_tok *tk)
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
	return L->par ? L->par_intern(L, s, n) : strtab_intern(&L->t->strs, s, n);
}


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
		if (TOK_IS(tk, "python_function"))
			return CAT_PY;
		break;
	case 19:
		if (TOK_IS(tk, "cuda_profiler_range"))
			return CAT_RANGE;
		break;
	case 17:
		if (TOK_IS(tk, "cpu_instant_event"))
			return CAT_INSTANT;
		break;
	}
	return CAT_SKIP;
}

/*
 * Read a value expected to be a string into @tk: 1 when it is one, 0 when it is something
 * else (a container is skipped whole), -1 on a JSON error.
 */
int trace_read_str(struct loader *L, struct kp_json_tok *tk)
{
	enum kp_json_type ty = json_next(&L->p, tk);
	if (ty == JT_STR)
		return 1;
	if (ty == JT_OBJ || ty == JT_ARR)
		return json_skip_rest(&L->p) < 0 ? -1 : 0;
	return ty == JT_ERROR ? -1 : 0;
}

/* Read a number value into *out (ns when @us).  Non-numbers are skipped; returns 1 if set. */
int trace_read_int(struct loader *L, int us, int64_t *out)
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
		*out = (int64_t)(intptr_t)trace_intern_tok(L, &tk);
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
				e->slot_conc[slot] = ty == JT_STR && tk.len ? trace_intern_tok(L, &tk)
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
#define NI_SEQ 0x20           /* its Sequence number is kept (trace_keeps_seq) */
#define NI_SHAPES                                                                                  \
	0x20 /* no model, but its shapes feed another op's (fwdbwd.c) or a
				 signature (opmodel_signature: the sdpa entry point) */

/* Forward convolution ops: their Sequence number is kept for fwdbwd.c. */
static const char *const conv_fwd_ops[] = { "aten::convolution",
					    "aten::_convolution",
					    "aten::convolution_overrideable",
					    "aten::cudnn_convolution",
					    "aten::cudnn_convolution_transpose",
					    "aten::miopen_convolution",
					    "aten::miopen_convolution_transpose",
					    "aten::mkldnn_convolution",
					    NULL };

int trace_conv_fwd_op(const char *name)
{
	for (const char *const *f = conv_fwd_ops; *f; f++)
		if (!strcmp(name, *f))
			return 1;
	return 0;
}

int trace_conv_bwd_node(const char *name)
{
	return !strchr(name, ':') && strstr(name, "Backward") && strstr(name, "Conv");
}

int trace_keeps_seq(const char *name)
{
	return trace_conv_fwd_op(name) || trace_conv_bwd_node(name);
}

/* The model class and flags of an interned op name, looked up once per distinct name. */
static int name_info(struct loader *L, const char *name)
{
	int created;
	struct kp_hmap_entry *e = hmap_put_ptr(&L->names, name, &created);
	if (created)
		e->val.i = opmodel_class(name) | (trace_conv_bwd_node(name) ? NI_CONV_BWD_NODE : 0) |
			   (trace_keeps_seq(name) ? NI_SEQ : 0) |
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
	if ((*r = trace_read_int(L, 0, &v)) > 0 && v >= 0) {
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
	if ((*r = trace_read_int(L, 0, &v)) > 0 && v >= min)
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
		if ((*r = trace_read_str(L, &tk)) > 0) {
			if (is_name)
				e->coll = trace_intern_tok(L, &tk);
			else
				e->coll_dtype = trace_intern_tok(L, &tk);
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
	if ((*r = trace_read_int(L, 0, &v)) > 0 && v > 0 && v < 100000)
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
		if (TOK_IS(tk, "Python parent id"))
			return int_member(L, &e->py_parent, 0, r);
		if (TOK_IS(tk, "Python module id"))
			return int_member(L, &e->py_module, 0, r);
		break;
	case 9:
		if (TOK_IS(tk, "Python id"))
			return int_member(L, &e->py_id, 0, r);
		if (TOK_IS(tk, "Device Id"))
			return int_member(L, &e->m_did, INT64_MIN, r);
		break;
	case 4:
		if (TOK_IS(tk, "Addr"))
			return int_member(L, &e->m_addr, 0, r);
		break;
	case 14:
		if (TOK_IS(tk, "Total Reserved"))
			return int_member(L, &e->m_tres, INT64_MIN, r);
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
		if (TOK_IS(tk, "Bytes"))
			return int_member(L, &e->m_bytes, INT64_MIN, r);
		break;
	case 11:
		if (TOK_IS(tk, "correlation"))
			return int_member(L, &e->corr, INT64_MIN, r);
		if (TOK_IS(tk, "kernel_flop"))
			return int_member(L, &e->kernel_flop, INT64_MIN, r);
		if (TOK_IS(tk, "Device Type"))
			return int_member(L, &e->m_dtype, INT64_MIN, r);
		break;
	case 12:
		if (TOK_IS(tk, "sm_clock_mhz"))
			return sm_clock_arg(L, e, r);
		break;
	case 15:
		if (TOK_IS(tk, "Sequence number"))
			return int_member(L, &e->seq, INT64_MIN, r);
		if (TOK_IS(tk, "Total Allocated"))
			return int_member(L, &e->m_talloc, INT64_MIN, r);
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
		if ((*r = trace_read_str(L, &tk)) > 0 && tk.len < 16) {
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
			if ((r = trace_read_int(L, 0, &v)) > 0)
				e->ext_id = v;
			if (r >= 0 && id_only) {
				/*
				 * its Sequence number still links a backward op to its
				 * forward's python frame (pytree.c).  Kineto writes it right
				 * after External id or after Record function id (torch 2.11;
				 * doc/attribution.md §2.1): look that far only, so an
				 * op without one skips its shapes at block speed.
				 */
				for (int k = 0; k < 2; k++) {
					ty = json_key(&L->p, &tk);
					if (ty == JT_OBJ_END)
						return 0;
					if (ty != JT_KEY)
						return -1;
					if (TOK_IS(&tk, "Sequence number")) {
						if (int_member(L, &e->seq, INT64_MIN, &r) && r < 0)
							return -1;
						break;
					}
					if (json_skip(&L->p) < 0)
						return -1;
					if (!TOK_IS(&tk, "Record function id"))
						break;
				}
				return json_skip_rest(&L->p);
			}
		} else if (!int_arg(L, e, &tk, &r) && !other_arg(L, e, &tk, shapes, &r) &&
			   !(e->cat == CAT_RANGE && range_counter(L, e, &tk, &r)) &&
			   !(e->cat == CAT_KERNEL && coll_arg(L, e, &tk, &r))) {
			r = json_skip(&L->p);
		}
		if (r < 0)
			return -1;
	}
}

int32_t trace_thread_index(struct loader *L, int64_t pid, uint8_t pid_str, int64_t tid,
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
int trace_skip_malformed(struct loader *L, int64_t off, const char *why)
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
	s->thread = trace_thread_index(L, e->pid, e->pid_str, e->tid, e->tid_str);
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

/* an instant event ("i", or "I" before the Trace Event Format renamed it) */
#define PH_INSTANT(ph) ((ph) == 'i' || (ph) == 'I')

/*
 * Instants are kept only as cpu_instant_event "[memory]" events (profile_memory): whichever
 * of "ph" and "cat" comes second skips the event when they do not match.
 */
static inline __attribute__((always_inline)) int instant_mismatch(const struct ev *e)
{
	return e->ph && e->cat != CAT_NONE && (PH_INSTANT(e->ph) != (e->cat == CAT_INSTANT));
}

/* "ph": metadata, flows, counters and other instants are skipped (flows counted apart). */
static inline __attribute__((always_inline)) int member_ph(struct loader *L, struct ev *e,
							   struct kp_json_tok *tk)
{
	int r = trace_read_str(L, tk);
	if (r > 0 && tk->len >= 1)
		e->ph = tk->s[0];
	else if (r == 0)
		e->bad = "'ph' is not a string";
	if (r >= 0 && PH_INSTANT(e->ph) && !instant_mismatch(e))
		return r;
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
	int r = trace_read_str(L, tk);
	if (r > 0)
		e->cat = classify(tk);
	else if (r == 0)
		e->bad = "'cat' is not a string";
	if (r >= 0 && (e->cat == CAT_SKIP || instant_mismatch(e)))
		return skip_event(L);
	return r;
}

/* "name": user annotations other than ProfilerStep#N are kept only on request. */
static inline __attribute__((always_inline)) int member_name(struct loader *L, struct ev *e,
							     struct kp_json_tok *tk)
{
	int r = trace_read_str(L, tk);
	if (r > 0) {
		if (e->cat == CAT_ANNOT && !L->annotations &&
		    strncmp(tk->s, "ProfilerStep#", tk->len < 13 ? tk->len : 13))
			return skip_event(L);
		if (e->cat == CAT_INSTANT && !TOK_IS(tk, "[memory]"))
			return skip_event(L);
		e->name = trace_intern_tok(L, tk);
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
	int32_t th = trace_thread_index(L, e->pid, e->pid_str, e->tid, e->tid_str);
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
		e->name = L->par ? L->par_intern(L, "(unnamed)", 9)
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
	op->thread = trace_thread_index(L, e->pid, e->pid_str, e->tid, e->tid_str);
	op->parent = op->model = -1;
	int ns = 0;
	op->slots = copy_slots(L, e, &ns);
	op->nslots = (int16_t)ns;
	/* every op's Sequence number: fwdbwd.c pairs convolutions, pytree.c any backward op */
	int64_t seq = e->seq >= 0 ? e->seq : -1;
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
			a->thread = trace_thread_index(L, e->pid, e->pid_str, e->tid, e->tid_str);
		}
		return;
	}
	struct kp_step *s = VEC_PUSH(t->steps, t->nsteps, t->capsteps);
	s->ts_ns = e->ts;
	s->dur_ns = e->dur;
	s->num = num;
	s->thread = trace_thread_index(L, e->pid, e->pid_str, e->tid, e->tid_str);
}

/* A python_function event: a frame (its tree is built by pytree.c after linking). */
static void add_py(struct loader *L, struct ev *e)
{
	struct kp_trace *t = L->t;
	if (e->ph != 'X')
		return;
	struct kp_pyframe *f = VEC_PUSH(t->py, t->npy, t->cappy);
	memset(f, 0, sizeof(*f));
	f->ts_ns = e->ts;
	f->dur_ns = e->dur;
	f->name = e->name;
	f->pyid = e->py_id;
	f->pyparent = e->py_parent;
	f->module_id = e->py_module;
	f->thread = trace_thread_index(L, e->pid, e->pid_str, e->tid, e->tid_str);
	f->parent = f->module = f->source = f->stack = -1;
	f->kind = !strncmp(e->name, "nn.Module: ", 11) ? PYF_MODULE
		  : e->name[0] == '<'			  ? PYF_CCALL
							  : PYF_FUNC;
}

/* A [memory] event (doc/memory.md §2.1): one without "Bytes" is skipped and warned. */
static void add_mem(struct loader *L, int64_t off, struct ev *e)
{
	struct kp_trace *t = L->t;
	if (e->m_bytes == KP_MEM_NONE) {
		t->nskipped++;
		warn_at(L, off, "[memory] events without 'Bytes'",
			"skipped [memory] event without an integer 'Bytes'");
		return;
	}
	struct kp_mem *m = VEC_PUSH(t->mem, t->nmem, t->capmem);
	m->ts_ns = e->ts;
	m->off = off;
	m->addr = e->m_addr;
	m->bytes = e->m_bytes;
	m->total_alloc = e->m_talloc;
	m->total_res = e->m_tres;
	m->thread = trace_thread_index(L, e->pid, e->pid_str, e->tid, e->tid_str);
	m->dev_type = (int16_t)(e->m_dtype >= 0 && e->m_dtype < INT16_MAX ? e->m_dtype : -1);
	m->dev_id = (int16_t)(e->m_did >= -1 && e->m_did < INT16_MAX ? e->m_did : -1);
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
	l->thread = trace_thread_index(L, e->pid, e->pid_str, e->tid, e->tid_str);
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

int trace_parse_event(struct loader *L, int64_t off)
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
	e.py_id = e.py_parent = e.py_module = -1;
	e.kernel_num_gb = -1;
	e.mflops = e.mbytes = -1;
	e.prec_hint = PREC_NONE;
	e.range_flops[0] = e.range_flops[1] = e.range_flops[2] = -1;
	e.coll_in = e.coll_out = e.coll_group = -1;
	e.m_addr = e.m_bytes = e.m_talloc = e.m_tres = e.m_dtype = e.m_did = KP_MEM_NONE;

	int rc = read_event(L, &e);
	if (rc <= 0)
		return rc;
	t->nevents++;
	L->last_good_off = L->p.base + (int64_t)L->p.pos;

	if (!e.bad && !e.ph)
		e.bad = "no 'ph'";
	if (e.bad)
		return trace_skip_malformed(L, off, e.bad);
	if (e.cat == CAT_NONE || e.cat == CAT_SKIP || PH_INSTANT(e.ph) != (e.cat == CAT_INSTANT) ||
	    (e.cat == CAT_INSTANT && (!e.name || strcmp(e.name, "[memory]")))) {
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
	case CAT_PY:
		add_py(L, &e);
		break;
	case CAT_INSTANT:
		add_mem(L, off, &e);
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
 * The records' lifetime: freed here, beside what fills them (trace-chunk.c frees its workers'
 * partial traces, trace.c the whole one).
 */
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
	free(t->py);
	free(t->mem);
	t->mem = NULL, t->nmem = t->capmem = 0;
	free(t->pystacks);
	free(t->op_frame);
	free(t->op_bwd);
	free(t->launch_frame);
	t->py = NULL, t->npy = t->cappy = 0;
	t->pystacks = NULL, t->npystacks = 0;
	t->op_frame = t->launch_frame = NULL;
	t->op_bwd = NULL;
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
	results_free(&t->kprof_results);
	strtab_free(&t->strs);
	diag_warn_free(&t->warn);
	arena_free(&t->arena);
	memset(t, 0, sizeof(*t));
}
