/*
 * opmodel-args.c — the readers the op models share (doc/flops-bytes.md §6.1): the out= slot,
 * Concrete Inputs text (ints, bools, lists, ScalarType) and torch.result_type's promotion.
 * Pure functions of one slot or string; no I/O.
 */
#include "kprof/opmodel-internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The out= tensor: a tensor slot at index >= @first (the last one); NULL if none. */
const struct kp_slot *opm_out_slot(const struct kp_op_in *in, int first)
{
	int i;

	for (i = in->nslots - 1; i >= first; i--) {
		if (is_tensor(&in->slots[i]))
			return &in->slots[i];
	}
	return NULL;
}

/* ---- Concrete Inputs text ----------------------------------------------- */

const char *opm_skip_ws(const char *p)
{
	while (*p == ' ')
		p++;
	return p;
}

/* A whole-string integer ("2", "-1"); 0 on success. */
int opm_parse_int(const char *s, int64_t *v)
{
	char *end;
	long long x;

	s = opm_skip_ws(s);
	if (*s == '\0')
		return -1;
	errno = 0;
	x = strtoll(s, &end, 10);
	/* beyond int64 is unreadable: strtoll would saturate to a plausible INT64_MAX */
	if (end == s || errno == ERANGE || *opm_skip_ws(end) != '\0')
		return -1;
	*v = x;
	return 0;
}

/* "True" / "False" (also "1" / "0"); -1 when neither. */
int opm_parse_bool(const char *s)
{
	s = opm_skip_ws(s);
	if (strcmp(s, "True") == 0 || strcmp(s, "true") == 0 || strcmp(s, "1") == 0)
		return 1;
	if (strcmp(s, "False") == 0 || strcmp(s, "false") == 0 || strcmp(s, "0") == 0)
		return 0;
	return -1;
}

/*
 * A list of integers "[2, 2]" or a bare integer "2" into @v (at most @max).
 * Returns the count (0 for "[]"), or -1 when the text is not such a list.
 */
int opm_parse_ints(const char *s, int64_t *v, int max)
{
	char *end;
	int n = 0;

	s = opm_skip_ws(s);
	if (*s != '[')
		return opm_parse_int(s, v) == 0 && max >= 1 ? 1 : -1;
	s = opm_skip_ws(s + 1);
	if (*s == ']')
		return *opm_skip_ws(s + 1) == '\0' ? 0 : -1;
	for (;;) {
		if (n == max)
			return -1;
		errno = 0;
		v[n++] = strtoll(s, &end, 10);
		if (end == s || errno == ERANGE)
			return -1;
		s = opm_skip_ws(end);
		if (*s == ']')
			return *opm_skip_ws(s + 1) == '\0' ? n : -1;
		if (*s != ',')
			return -1;
		s = opm_skip_ws(s + 1);
	}
}

/* A list of booleans "[True, True, False]"; the count, or -1. */
int opm_parse_bools(const char *s, int *v, int max)
{
	int n = 0;
	size_t len;

	s = opm_skip_ws(s);
	if (*s++ != '[')
		return -1;
	s = opm_skip_ws(s);
	if (*s == ']')
		return 0;
	for (;;) {
		if (n == max)
			return -1;
		if (strncmp(s, "True", 4) == 0) {
			v[n++] = 1;
			len = 4;
		} else if (strncmp(s, "False", 5) == 0) {
			v[n++] = 0;
			len = 5;
		} else {
			return -1;
		}
		s = opm_skip_ws(s + len);
		if (*s == ']')
			return *opm_skip_ws(s + 1) == '\0' ? n : -1;
		if (*s != ',')
			return -1;
		s = opm_skip_ws(s + 1);
	}
}

/* A numeric scalar equal to zero ("0", "0.", "0.0"); "" is not. */
int opm_is_zero(const char *s)
{
	char *end;
	double x;

	s = opm_skip_ws(s);
	if (*s == '\0')
		return 0;
	x = strtod(s, &end);
	return *opm_skip_ws(end) == '\0' && x == 0.0;
}

/* A ScalarType number in Concrete Inputs ("15"): its dtype, or @def when absent. */
enum kp_dtype opm_scalar_type_or(const struct kp_slot *s, enum kp_dtype def)
{
	int64_t st;

	if (s == NULL || opm_parse_int(text(s), &st) != 0)
		return def;
	return st < 0 || st > INT_MAX ? DT_UNKNOWN : dtype_from_scalar_type((int)st);
}

/* ---- type promotion (torch.result_type, simplified) ---------------------- */

int opm_category(enum kp_dtype dt)
{
	switch (dt) {
	case DT_BOOL:
		return 0;
	case DT_I8:
	case DT_U8:
	case DT_I16:
	case DT_I32:
	case DT_I64:
	case DT_U16:
	case DT_U32:
	case DT_U64:
		return 1;
	case DT_C32:
	case DT_C64:
	case DT_C128:
		return 3;
	default:
		return 2;
	}
}

/*
 * Promote two dtypes: the higher category wins; within one, the wider type.
 * Same-width pairs go up: bf16 with fp16 -> fp32, int8 with uint8 -> int16.
 */
enum kp_dtype opm_promote(enum kp_dtype a, enum kp_dtype b)
{
	if (a == DT_NONE)
		return b;
	if (b == DT_NONE || a == b)
		return a;
	if (a == DT_UNKNOWN || b == DT_UNKNOWN)
		return DT_UNKNOWN;
	if (opm_category(a) != opm_category(b))
		return opm_category(a) > opm_category(b) ? a : b;
	if (dtype_size(a) != dtype_size(b))
		return dtype_size(a) > dtype_size(b) ? a : b;
	if (opm_category(a) == 2)
		return dtype_size(a) < 4 ? DT_F32 : a;
	if (opm_category(a) == 1 && dtype_size(a) == 1)
		return DT_I16;
	return a;
}

/* A Python float as Concrete Inputs prints it: "0.5", "1.", "1e-05", "-inf", "nan" */
static int is_float_literal(const char *s)
{
	char *end;

	s = opm_skip_ws(s);
	if (*s == '\0')
		return 0;
	strtod(s, &end);
	return *opm_skip_ws(end) == '\0' && strpbrk(s, ".eEnN") != NULL;
}

/*
 * Result dtype of a pointwise op over @n slots: dimensioned tensors decide,
 * unless a 0-dim tensor or a Python scalar is of a higher category (a float
 * scalar turns an integer tensor into the default fp32).
 */
enum kp_dtype opm_result_type(const struct kp_slot *const *s, int n)
{
	enum kp_dtype dim = DT_NONE, zero = DT_NONE;
	int i, float_scalar = 0;

	for (i = 0; i < n; i++) {
		if (s[i] == NULL)
			continue;
		if (is_tensor(s[i])) {
			if (s[i]->ndim > 0)
				dim = opm_promote(dim, s[i]->dtype);
			else
				zero = opm_promote(zero, s[i]->dtype);
		} else if (s[i]->dtype == DT_NONE && is_float_literal(text(s[i]))) {
			float_scalar = 1;
		}
	}
	if (dim == DT_NONE)
		dim = zero;
	else if (zero != DT_NONE && opm_category(zero) > opm_category(dim))
		dim = zero;
	if (float_scalar && dim != DT_NONE && dim != DT_UNKNOWN && opm_category(dim) < 2)
		dim = DT_F32;
	return dim;
}
