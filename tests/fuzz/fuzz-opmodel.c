/*
 * fuzz-opmodel.c — libFuzzer harness for opmodel.c: the input bytes are decoded
 * into a struct kp_op_in — an op name from the model table (or a near miss), slot
 * counts, dims (small, zero, negative, huge), dtypes, TensorLists and Concrete
 * Inputs texts (typical ones or raw bytes) — and opmodel_eval()/opmodel_class()
 * run on it.  The op names come from the model table in src/opmodel-*.c (run.sh extracts
 * them into opnames.h), so new models are fuzzed without editing this file.
 *
 * Checked beyond the sanitizers: the result contract of opmodel.h (return code,
 * class, family, -1/-2 only where documented, a note on failure).
 * Build and run: tests/fuzz/run.sh opmodel.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/opmodel.h"

#include "opnames.h" /* static const char *const opnames[] = { "aten::mm", ... }; */

#define FUZZ_NAME "fuzz-opmodel"
#include "fuzz.h"

#define NOPNAMES (sizeof(opnames) / sizeof(opnames[0]))

/* clang-format off */
static const char *const othernames[] = {
	"aten::linear", "aten::matmul", "aten::", "", "mm", "aten::mm ", "aten::zzz",
	"aten::scaled_dot_product_attention", "triton_poi_fused_0", "ProfilerStep#3",
};
/* clang-format on */

/* clang-format off */
static const char *const texts[] = {
	"", "0", "1", "-1", "2", "3", "5", "6", "15", "23", "44", "-9223372036854775808",
	"9223372036854775807", "99999999999999999999", "True", "False", "true", "None",
	"[]", "[1]", "[0]", "[-1]", "[1, 1]", "[2, 2]", "[0, 0]", "[3, 3]", "[1, 1, 1]",
	"[-1, -2]", "[9223372036854775807, 2]", "[True, True, False]", "[True]",
	"[False, False, False]", "0.0", "0.5", "1e400", "-0.0", "nan", "inf", "[", "[1,",
	"[1 2]", " 7 ", "[ ]", "cuda:0", "'mean'", "[[1]]", "0.125", "-inf",
};
/* clang-format on */

/* clang-format off */
static const int64_t dimvals[] = {
	0, 1, 2, 3, 4, 7, 8, 16, 64, 128, 1024, 4096, 65536, 1ll << 31, 1ll << 32,
	1ll << 40, 3037000500ll, INT64_MAX, INT64_MAX / 2, INT64_MIN, -1, -2, -3,
};
/* clang-format on */

struct rd {
	const uint8_t *d;
	size_t n, i;
};

static unsigned u8(struct rd *r)
{
	return r->i < r->n ? r->d[r->i++] : 0;
}

static int64_t i64(struct rd *r)
{
	uint64_t v = 0;
	for (int k = 0; k < 8; k++)
		v = v << 8 | u8(r);
	return (int64_t)v;
}

/* All allocations of one input, freed at the end. */
struct pool {
	void *p[4096];
	int n;
};

static void *palloc(struct pool *pl, size_t sz)
{
	void *p = calloc(1, sz ? sz : 1);
	CHECK(p && pl->n < 4096);
	pl->p[pl->n++] = p;
	return p;
}

static const char *text_of(struct rd *r, struct pool *pl)
{
	unsigned c = u8(r);
	if (c < 0xf0)
		return texts[c % (sizeof(texts) / sizeof(texts[0]))];
	/* raw bytes up to a NUL or 24 bytes */
	size_t len = u8(r) % 24;
	char *s = palloc(pl, len + 1);
	for (size_t k = 0; k < len; k++)
		s[k] = (char)u8(r);
	return s;
}

static int64_t dim_of(struct rd *r)
{
	unsigned c = u8(r);
	if (c < 0xc0)
		return dimvals[c % (sizeof(dimvals) / sizeof(dimvals[0]))];
	if (c < 0xe0)
		return c - 0xc0 + 1;
	return i64(r);
}

static void slot_of(struct rd *r, struct pool *pl, struct kp_slot *s, int depth)
{
	unsigned c = u8(r);
	s->ndim = c & 7;
	if (c == 0xff)
		s->ndim = -1 - (int)(u8(r) & 1); /* a malformed count: check_slots' job */
	else if (c == 0xfe)
		s->ndim = 65 + u8(r) % 8; /* above MAXDIM */
	if (s->ndim > 0) {
		int64_t *d = palloc(pl, s->ndim * sizeof(*d));
		for (int k = 0; k < s->ndim; k++)
			d[k] = dim_of(r);
		s->dims = d;
	}
	s->dtype = (enum kp_dtype)(u8(r) % DT_N);
	s->concrete = text_of(r, pl);
	if (depth == 0 && (u8(r) & 0x1f) == 0x1f) {
		/* a TensorList: Kineto gives DT_NONE and [] dims for the slot itself */
		int nl = u8(r) % 6;
		struct kp_slot *l = palloc(pl, (nl ? nl : 1) * sizeof(*l));
		for (int k = 0; k < nl; k++)
			slot_of(r, pl, &l[k], 1);
		s->nlist = nl;
		s->list = nl ? l : NULL;
		if (u8(r) & 1) {
			s->dtype = DT_NONE;
			s->ndim = 0;
			s->dims = NULL;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rd r = { data, size, 0 };
	struct pool pl = { .n = 0 };
	struct kp_op_in in = { 0 };
	unsigned c = u8(&r);

	if (c < 0xf0)
		in.name = opnames[(c << 8 | u8(&r)) % NOPNAMES];
	else
		in.name = othernames[u8(&r) % (sizeof(othernames) / sizeof(othernames[0]))];
	c = u8(&r);
	in.nslots = c % 13;
	if (c == 0xff)
		in.nslots = -1;
	c = u8(&r);
	in.kernel_flop = -1;
	in.kernel_num_gb = -1;
	if (c & 1)
		in.kernel_flop = (c & 2) ? (int64_t)(u8(&r) * 1000) : i64(&r);
	if (c & 4) {
		static const double gbs[] = { 0, 1e-9, 0.5, 1, 1e9, 9.3e9, 1e300, 1.0 / 0.0, -0.0 };
		in.kernel_num_gb = gbs[u8(&r) % (sizeof(gbs) / sizeof(gbs[0]))];
	}
	struct kp_slot *slots = NULL;
	if (in.nslots > 0) {
		slots = palloc(&pl, in.nslots * sizeof(*slots));
		for (int i = 0; i < in.nslots; i++)
			slot_of(&r, &pl, &slots[i], 0);
	}
	in.slots = slots;

	enum kp_model_class cls = opmodel_class(in.name);
	struct kp_cost cost;
	memset(&cost, 0x5a, sizeof(cost));
	int rc = opmodel_eval(&in, &cost);

	int inductor = in.kernel_flop >= 0 || in.kernel_num_gb >= 0;
	CHECK(rc >= -1 && rc <= 1);
	if (rc == 1) {
		CHECK(cls == MODEL_NONE && cost.cls == MODEL_NONE && !inductor);
		CHECK(cost.flops == -1 && cost.bytes == -1 && cost.family == NULL);
	} else {
		CHECK(cost.family != NULL);
		CHECK(cls == MODEL_NONE ? strcmp(cost.family, "inductor") == 0 : cost.cls == cls);
		CHECK(cost.flops >= -1 && cost.bytes >= -1);
		/* on failure only Inductor's own counts may survive (they win when present) */
		if (rc == -1)
			CHECK(cost.note != NULL && (cost.flops == -1 || in.kernel_flop >= 0) &&
			      (cost.bytes == -1 || in.kernel_num_gb >= 0));
		if (cls == MODEL_SECONDARY && in.kernel_flop < 0)
			CHECK(cost.flops == -1);
		CHECK(cost.dtype >= DT_NONE && cost.dtype < DT_N);
		CHECK(cost.prec >= PREC_NONE && cost.prec < PREC_N);
	}
	for (int i = 0; i < pl.n; i++)
		free(pl.p[i]);
	return 0;
}
