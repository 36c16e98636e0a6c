/*
 * shapes.c — shape sets of the built-in workloads.
 */
#include "workloads/shapes.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vec {
	void *p;
	size_t n, cap, size;
};

static void *push(struct vec *v)
{
	if (v->n == v->cap) {
		size_t nc = v->cap ? v->cap * 2 : 16;
		void *p = realloc(v->p, nc * v->size);
		if (!p)
			return NULL;
		v->p = p;
		v->cap = nc;
	}
	void *e = (char *)v->p + v->n++ * v->size;
	memset(e, 0, v->size);
	return e;
}

static int fail(struct vec *v, char *why, size_t len, const char *msg)
{
	snprintf(why, len, "%s", msg);
	free(v->p);
	v->p = NULL;
	return -1;
}

/* Parse "A" "xB" ... : up to @max positive integers separated by 'x'; returns count or -1. */
static int parse_dims(const char *s, const char **end, long *out, int max)
{
	int k = 0;
	for (;;) {
		char *e;
		errno = 0;
		long v = strtol(s, &e, 10);
		if (e == s || errno || v <= 0 || k == max)
			return -1;
		out[k++] = v;
		s = e;
		if (*s != 'x')
			break;
		s++;
	}
	*end = s;
	return k;
}

static int parse_range(const char *s, long *lo, long *hi)
{
	char *e;
	errno = 0;
	*lo = strtol(s, &e, 10);
	if (e == s || *e != ':' || errno || *lo <= 0)
		return -1;
	s = e + 1;
	*hi = strtol(s, &e, 10);
	if (e == s || *e || errno || *hi < *lo)
		return -1;
	return 0;
}

static int shapes_matmul1(const char *spec, const long *ms, size_t nms, struct kp_mm_shape **out,
			  size_t *n, char *why, size_t whylen);

int shapes_matmul(const char *spec, const long *ms, size_t nms, struct kp_mm_shape **out, size_t *n,
		  char *why, size_t whylen)
{
	if (!strchr(spec, '+'))
		return shapes_matmul1(spec, ms, nms, out, n, why, whylen);
	/* "SET+SET...": the sets concatenated in order */
	struct kp_mm_shape *all = NULL;
	size_t nall = 0;
	const char *s = spec;
	for (;;) {
		const char *e = strchr(s, '+');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		char *one = strndup(s, len);
		struct kp_mm_shape *part;
		size_t np;
		if (!one || shapes_matmul1(one, ms, nms, &part, &np, why, whylen) < 0) {
			if (!one)
				snprintf(why, whylen, "out of memory");
			free(one);
			free(all);
			return -1;
		}
		free(one);
		struct kp_mm_shape *grown = nall + np > SHAPES_MAX
						    ? NULL
						    : realloc(all, (nall + np) * sizeof(*all));
		if (!grown) {
			if (nall + np > SHAPES_MAX)
				snprintf(why, whylen, "%zu shapes: a set holds at most %d",
					 nall + np, SHAPES_MAX);
			else
				snprintf(why, whylen, "out of memory");
			free(part);
			free(all);
			return -1;
		}
		all = grown;
		memcpy(all + nall, part, np * sizeof(*part));
		nall += np;
		free(part);
		if (!e)
			break;
		s = e + 1;
	}
	*out = all;
	*n = nall;
	return 0;
}

/* "custom:MxKxN,...": @s after the prefix; NULL or a reason */
static const char *mm_custom(struct vec *v, const char *s)
{
	struct kp_mm_shape *e;
	for (;;) {
		long d[3];
		if (parse_dims(s, &s, d, 3) != 3 || (*s && *s != ','))
			return "expected custom:MxKxN[,MxKxN...]";
		if (!(e = push(v)))
			return "out of memory";
		e->m = d[0], e->k = d[1], e->n = d[2];
		if (!*s++)
			break;
	}
	return NULL;
}

/* "llama": each M of --m times the four linear layers; NULL or a reason */
static const char *mm_llama(struct vec *v, const long *ms, size_t nms)
{
	/* LLaMA-2-70B, 8-way tensor parallel: per-GPU K x N of the four linear layers */
	static const struct {
		const char *label;
		long k, n;
	} l[] = {
		{ "attn.wqkv", 8192, 1280 },
		{ "attn.w0", 1024, 8192 },
		{ "ffn.w13", 8192, 7168 },
		{ "ffn.w2", 3584, 8192 },
	};
	struct kp_mm_shape *e;
	if (nms == 0)
		return "llama needs --m";
	for (size_t i = 0; i < nms; i++)
		for (size_t j = 0; j < sizeof(l) / sizeof(l[0]); j++) {
			if (!(e = push(v)))
				return "out of memory";
			e->m = ms[i], e->k = l[j].k, e->n = l[j].n;
			snprintf(e->label, sizeof(e->label), "%s", l[j].label);
		}
	return NULL;
}

/* The powers of two in [@lo, @hi] (@ext: and each 1.5x between them) into @vals; their count */
static int pow2_values(long lo, long hi, int ext, long vals[128])
{
	int nv = 0;
	for (long p = 1; p <= hi && nv < 126; p *= 2) {
		if (p >= lo)
			vals[nv++] = p;
		if (ext && p >= 2 && p + p / 2 >= lo && p + p / 2 <= hi)
			vals[nv++] = p + p / 2;
		if (p > LONG_MAX / 2) /* 2^62: the last power of two a long holds */
			break;
	}
	return nv;
}

/*
 * "pow2:MIN:MAX" and "pow2_extended:MIN:MAX": square shapes; "sweep:MIN:MAX": every M, K, N of
 * them; "small_sweep:MIN:MAX": those with M <= K <= N.  NULL or a reason.
 */
static const char *mm_pow2(struct vec *v, const char *spec)
{
	int ext = !strncmp(spec, "pow2_extended:", 14), sweep = spec[0] == 's';
	int small = !strncmp(spec, "small_sweep:", 12);
	struct kp_mm_shape *e;
	long lo, hi, vals[128];
	if (parse_range(strchr(spec, ':') + 1, &lo, &hi) < 0)
		return "expected MIN:MAX with 0 < MIN <= MAX";
	int nv = pow2_values(lo, hi, ext, vals);
	if (nv == 0)
		return "no power of two between MIN and MAX";
	if (sweep && (size_t)nv * nv * nv > SHAPES_MAX)
		return "sweep has more than 4096 shapes";
	for (int a = 0; a < nv; a++)
		for (int b = 0; b < (sweep ? nv : 1); b++)
			for (int c = 0; c < (sweep ? nv : 1); c++) {
				/* small_sweep keeps M <= K <= N (torchao) */
				if (small && (vals[a] > vals[b] || vals[b] > vals[c]))
					continue;
				if (!(e = push(v)))
					return "out of memory";
				e->m = vals[a];
				e->k = sweep ? vals[b] : vals[a];
				e->n = sweep ? vals[c] : vals[a];
			}
	return NULL;
}

static int shapes_matmul1(const char *spec, const long *ms, size_t nms, struct kp_mm_shape **out,
			  size_t *n, char *why, size_t whylen)
{
	struct vec v = { .size = sizeof(struct kp_mm_shape) };
	const char *err;
	if (!strncmp(spec, "custom:", 7))
		err = mm_custom(&v, spec + 7);
	else if (!strcmp(spec, "llama"))
		err = mm_llama(&v, ms, nms);
	else if (!strncmp(spec, "pow2:", 5) || !strncmp(spec, "pow2_extended:", 14) ||
		 !strncmp(spec, "sweep:", 6) || !strncmp(spec, "small_sweep:", 12))
		err = mm_pow2(&v, spec);
	else
		err = "valid: custom:MxKxN,..., llama, pow2:MIN:MAX, pow2_extended:MIN:MAX, "
		      "sweep:MIN:MAX, small_sweep:MIN:MAX";
	if (err)
		return fail(&v, why, whylen, err);
	if (v.n > SHAPES_MAX) {
		char m[80];
		snprintf(m, sizeof(m), "%zu shapes: a set holds at most %d", v.n, SHAPES_MAX);
		return fail(&v, why, whylen, m);
	}
	*out = v.p;
	*n = v.n;
	return 0;
}

int shapes_sdpa(const char *spec, int causal, long hkv, struct kp_sdpa_shape **out, size_t *n,
		char *why, size_t whylen)
{
	struct vec v = { .size = sizeof(struct kp_sdpa_shape) };
	struct kp_sdpa_shape *e;
	if (!strcmp(spec, "default")) {
		static const long bs[] = { 1, 8, 16 }, ss[] = { 128, 256, 512, 1024, 8192 };
		if (hkv < 0 || (hkv && 16 % hkv))
			return fail(&v, why, whylen, "--kv-heads must divide 16");
		for (size_t i = 0; i < 3; i++)
			for (size_t j = 0; j < 5; j++)
				for (int c = 0; c < 2; c++) {
					if ((c == 0 && causal == CAUSAL_YES) ||
					    (c == 1 && causal == CAUSAL_NO))
						continue;
					if (!(e = push(&v)))
						return fail(&v, why, whylen, "out of memory");
					*e = (struct kp_sdpa_shape){ bs[i], 16,    hkv ? hkv : 16,
								     ss[j], ss[j], 128,
								     c };
				}
	} else if (!strncmp(spec, "custom:", 7)) {
		const char *s = spec + 7;
		for (;;) {
			long d[6];
			if (parse_dims(s, &s, d, 6) != 6)
				return fail(&v, why, whylen,
					    "expected custom:BxHxH_KVxS_QxS_KxD[c],...");
			int c = 0;
			if (*s == 'c')
				c = 1, s++;
			if (*s && *s != ',')
				return fail(&v, why, whylen,
					    "expected custom:BxHxH_KVxS_QxS_KxD[c],...");
			if (d[1] % d[2])
				return fail(&v, why, whylen, "H must be a multiple of H_KV");
			if (!(e = push(&v)))
				return fail(&v, why, whylen, "out of memory");
			*e = (struct kp_sdpa_shape){ d[0], d[1], d[2], d[3], d[4], d[5], c };
			if (!*s++)
				break;
		}
	} else {
		return fail(&v, why, whylen, "valid: default, custom:BxHxH_KVxS_QxS_KxD[c],...");
	}
	*out = v.p;
	*n = v.n;
	return 0;
}

long conv_out_dim(long x, long k, long stride, long pad, long dil)
{
	long num = x + 2 * pad - dil * (k - 1) - 1;
	return num < 0 ? 0 : num / stride + 1;
}

/* rows x hidden sets: "default" is @dflt (@nd pairs), custom hidden up to @max */
static int rows_cols(const char *spec, const long (*dflt)[2], size_t nd, long max,
		     struct kp_norm_shape **out, size_t *n, char *why, size_t whylen)
{
	struct vec v = { .size = sizeof(struct kp_norm_shape) };
	struct kp_norm_shape *e;
	if (!strcmp(spec, "default")) {
		for (size_t i = 0; i < nd; i++) {
			if (!(e = push(&v)))
				return fail(&v, why, whylen, "out of memory");
			e->rows = dflt[i][0], e->hidden = dflt[i][1];
		}
	} else if (!strncmp(spec, "custom:", 7)) {
		const char *s = spec + 7;
		for (;;) {
			long d[2];
			if (parse_dims(s, &s, d, 2) != 2)
				return fail(&v, why, whylen, "expected custom:ROWSxHIDDEN,...");
			if (d[1] % 8 || d[1] > max) {
				char m[80];
				snprintf(m, sizeof(m),
					 "hidden must be a multiple of 8, at most %ld", max);
				return fail(&v, why, whylen, m);
			}
			if (!(e = push(&v)))
				return fail(&v, why, whylen, "out of memory");
			e->rows = d[0], e->hidden = d[1];
			if (*s == '\0')
				break;
			if (*s != ',')
				return fail(&v, why, whylen, "expected custom:ROWSxHIDDEN,...");
			s++;
		}
	} else {
		return fail(&v, why, whylen, "expected default or custom:ROWSxHIDDEN,...");
	}
	*out = v.p;
	*n = v.n;
	return 0;
}

int shapes_norm(const char *spec, struct kp_norm_shape **out, size_t *n, char *why, size_t whylen)
{
	static const long d[][2] = {
		{ 4096, 4096 }, { 16384, 4096 }, { 32768, 8192 }, { 8192, 32768 }
	};
	return rows_cols(spec, d, sizeof(d) / sizeof(d[0]), 65536, out, n, why, whylen);
}

int shapes_vocab(const char *spec, struct kp_norm_shape **out, size_t *n, char *why, size_t whylen)
{
	/* LLaMA-2 (32000) and LLaMA-3 (128256) vocabularies, 4096 and 16384 tokens */
	static const long d[][2] = {
		{ 4096, 32000 }, { 16384, 32000 }, { 4096, 128256 }, { 16384, 128256 }
	};
	return rows_cols(spec, d, sizeof(d) / sizeof(d[0]), 1L << 20, out, n, why, whylen);
}

/* torchvision resnet50's convolutions, batch @batch; NULL or a reason */
static const char *conv_resnet50(struct vec *v, long batch)
{
	/* torchvision resnet50: conv1, then per stage the 1x1/3x3/1x1 bottleneck convs and
	 * the strided 1x1 downsample (stride on the 3x3, v1.5); C x H x W -> K, RxS, s, p */
	static const long l[][7] = {
		{ 3, 224, 64, 7, 2, 3 },    { 64, 56, 64, 1, 1, 0 },    { 64, 56, 64, 3, 1, 1 },
		{ 64, 56, 256, 1, 1, 0 },   { 256, 56, 64, 1, 1, 0 },   { 256, 56, 128, 1, 1, 0 },
		{ 128, 56, 128, 3, 2, 1 },  { 128, 28, 512, 1, 1, 0 },  { 256, 56, 512, 1, 2, 0 },
		{ 512, 28, 128, 1, 1, 0 },  { 128, 28, 128, 3, 1, 1 },  { 512, 28, 256, 1, 1, 0 },
		{ 256, 28, 256, 3, 2, 1 },  { 256, 14, 1024, 1, 1, 0 }, { 512, 28, 1024, 1, 2, 0 },
		{ 1024, 14, 256, 1, 1, 0 }, { 256, 14, 256, 3, 1, 1 },  { 1024, 14, 512, 1, 1, 0 },
		{ 512, 14, 512, 3, 2, 1 },  { 512, 7, 2048, 1, 1, 0 },  { 1024, 14, 2048, 1, 2, 0 },
		{ 2048, 7, 512, 1, 1, 0 },  { 512, 7, 512, 3, 1, 1 },
	};
	struct kp_conv_shape *e;
	for (size_t i = 0; i < sizeof(l) / sizeof(l[0]); i++) {
		if (!(e = push(v)))
			return "out of memory";
		*e = (struct kp_conv_shape){ batch,   l[i][0], l[i][1], l[i][1], l[i][2], l[i][3],
					     l[i][3], l[i][4], l[i][5], 1,       1 };
	}
	return NULL;
}

/* ":sS", ":pP", ":dD", ":gG" after a custom shape into @e, *@s past them; NULL or a reason */
static const char *conv_options(struct kp_conv_shape *e, const char **s, const char *usage)
{
	while (**s == ':') {
		char key = (*s)[1];
		char *end;
		errno = 0;
		long x = strtol(*s + 2, &end, 10);
		if (end == *s + 2 || errno || x < 0)
			return usage;
		if (key == 's' && x > 0)
			e->stride = x;
		else if (key == 'p')
			e->pad = x;
		else if (key == 'd' && x > 0)
			e->dil = x;
		else if (key == 'g' && x > 0)
			e->groups = x;
		else
			return usage;
		*s = end;
	}
	return NULL;
}

/* "custom:NxCxHxWxKxRxS[:sS][:pP][:dD][:gG],...": @s after the prefix; NULL or a reason */
static const char *conv_custom(struct vec *v, const char *s)
{
	const char *usage = "expected custom:NxCxHxWxKxRxS[:sS][:pP][:dD][:gG],...", *err;
	struct kp_conv_shape *e;
	for (;;) {
		long d[7];
		if (parse_dims(s, &s, d, 7) != 7)
			return usage;
		if (!(e = push(v)))
			return "out of memory";
		*e = (struct kp_conv_shape){ d[0], d[1], d[2], d[3], d[4], d[5], d[6], 1, 0, 1, 1 };
		if ((err = conv_options(e, &s, usage)))
			return err;
		if (*s && *s != ',')
			return usage;
		if (e->c % e->groups || e->k % e->groups)
			return "groups must divide C and K";
		if (conv_out_dim(e->h, e->r, e->stride, e->pad, e->dil) < 1 ||
		    conv_out_dim(e->w, e->s, e->stride, e->pad, e->dil) < 1)
			return "the filter is larger than the padded input";
		if (!*s++)
			break;
	}
	return NULL;
}

int shapes_conv(const char *spec, long batch, struct kp_conv_shape **out, size_t *n, char *why,
		size_t whylen)
{
	struct vec v = { .size = sizeof(struct kp_conv_shape) };
	const char *err;
	if (!strcmp(spec, "resnet50"))
		err = conv_resnet50(&v, batch);
	else if (!strncmp(spec, "custom:", 7))
		err = conv_custom(&v, spec + 7);
	else
		err = "valid: resnet50, custom:NxCxHxWxKxRxS[:sS][:pP][:dD][:gG],...";
	if (err)
		return fail(&v, why, whylen, err);
	*out = v.p;
	*n = v.n;
	return 0;
}
