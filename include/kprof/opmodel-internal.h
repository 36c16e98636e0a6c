/*
 * opmodel-internal.h — what the op model files share (src/opmodel*.c; doc/flops-bytes.md):
 * checked arithmetic with the UNK/OVF poison values, slot accessors, the Concrete Inputs readers
 * and dtype promotion of src/model/opmodel-args.c, and the model table's row and family types.
 * src/model/opmodel.c looks a name up in the families' tables (src/model/opmodel-gemm.c, -conv.c, -attn.c,
 * -pointwise.c, -norm.c) and dispatches; only those files include this header.
 */
#ifndef KPROF_OPMODEL_INTERNAL_H
#define KPROF_OPMODEL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "kprof/dtype.h"
#include "kprof/opmodel.h"

/*
 * Checked arithmetic.  Every real quantity (a count of elements, bytes or FLOPs)
 * is >= 0, so two negative values poison a result: UNK when a tensor's dtype has
 * no size (bytes unknown), OVF when a product leaves int64.  OVF wins over UNK.
 */
#define UNK (-1)
#define OVF (-2)

#define MAXSP 3   /* spatial dims of conv1d/2d/3d */
#define MAXDIM 64 /* dims of a tensor the models accept */

/* What a result of @a and @b is when either is negative (OVF or UNK); 0 when both are real. */
static inline int64_t poisoned(int64_t a, int64_t b)
{
	if (a == OVF || b == OVF)
		return OVF;
	return a < 0 || b < 0 ? UNK : 0;
}

static inline int64_t mul(int64_t a, int64_t b)
{
	int64_t r = poisoned(a, b);

	if (r == 0 && __builtin_mul_overflow(a, b, &r))
		return OVF;
	return r;
}

static inline int64_t add(int64_t a, int64_t b)
{
	int64_t r = poisoned(a, b);

	if (r == 0 && __builtin_add_overflow(a, b, &r))
		return OVF;
	return r;
}

static inline int64_t mul3(int64_t a, int64_t b, int64_t c)
{
	return mul(mul(a, b), c);
}

/* ---- slots -------------------------------------------------------------- */

static inline const struct kp_slot *slot(const struct kp_op_in *in, int i)
{
	if (i < 0 || i >= in->nslots)
		return NULL;
	return &in->slots[i];
}

/*
 * A tensor slot: a tensor dtype, not a TensorList.  An unknown type string on a
 * [] slot is taken for a non-tensor argument (a Device or a string) rather than a
 * 0-dim tensor: either way it is at most one element.
 */
static inline int is_tensor(const struct kp_slot *s)
{
	return s != NULL && s->nlist == 0 && s->dtype != DT_NONE &&
	       !(s->dtype == DT_UNKNOWN && s->ndim == 0);
}

static inline const char *text(const struct kp_slot *s)
{
	return s != NULL && s->concrete != NULL ? s->concrete : "";
}

/* Elements of a tensor slot: the product of its dims (1 for a 0-dim tensor). */
static inline int64_t numel(const struct kp_slot *s)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < s->ndim; i++)
		n = mul(n, s->dims[i]);
	return n;
}

/* @n elements of @dt in bytes; UNK when @dt has no size. */
static inline int64_t nbytes(int64_t n, enum kp_dtype dt)
{
	size_t sz = dtype_size(dt);

	return sz == 0 ? (n == OVF ? OVF : UNK) : mul(n, (int64_t)sz);
}

/* Bytes of a whole tensor slot; 0 for a non-tensor (scalars cost nothing, §6.2). */
static inline int64_t tbytes(const struct kp_slot *s)
{
	return is_tensor(s) ? nbytes(numel(s), s->dtype) : 0;
}

/* ---- Concrete Inputs text and type promotion (src/model/opmodel-args.c) --------------------- */

const struct kp_slot *opm_out_slot(const struct kp_op_in *in, int first);
const char *opm_skip_ws(const char *p);
int opm_parse_int(const char *s, int64_t *v);
int opm_parse_bool(const char *s);
int opm_parse_ints(const char *s, int64_t *v, int max);
int opm_parse_bools(const char *s, int *v, int max);
int opm_is_zero(const char *s);
enum kp_dtype opm_scalar_type_or(const struct kp_slot *s, enum kp_dtype def);
int opm_category(enum kp_dtype dt);
enum kp_dtype opm_promote(enum kp_dtype a, enum kp_dtype b);
enum kp_dtype opm_result_type(const struct kp_slot *const *s, int n);

struct model;
typedef int (*eval_fn)(const struct kp_op_in *in, const struct model *m, struct kp_cost *c);

struct model {
	const char *name;
	enum kp_model_class cls;
	const char *family;
	eval_fn eval;
	const void *aux; /* the model's schema descriptor */
};

static inline int fail(struct kp_cost *c, const char *note)
{
	c->note = note;
	return -1;
}

/* One op family's rows of the model table (names in strcmp order) and its hooks */
struct opm_family {
	const struct model *models;
	size_t n;
	/* the functional signature of a row (opmodel_signature); NULL: the family has none */
	int (*signature)(const struct kp_op_in *in, const struct model *m, char *buf, size_t cap);
	/* the slot of a row's is_causal flag (opmodel_causal_slot); NULL: none */
	int (*causal_slot)(const struct model *m);
};

extern const struct opm_family opm_family_gemm;      /* src/model/opmodel-gemm.c */
extern const struct opm_family opm_family_conv;      /* src/model/opmodel-conv.c */
extern const struct opm_family opm_family_attn;      /* src/model/opmodel-attn.c */
extern const struct opm_family opm_family_pointwise; /* src/model/opmodel-pointwise.c */
extern const struct opm_family opm_family_norm;      /* src/model/opmodel-norm.c */

/* The signature of an attention call's enclosing op (opmodel_sig_carrier); -1 if none */
int opm_attn_top_signature(const struct kp_op_in *in, char *buf, size_t cap);

#endif
