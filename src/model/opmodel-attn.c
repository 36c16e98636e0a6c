/*
 * opmodel-attn.c — the attention family (doc/flops-bytes.md §3.3-§3.6, §6.2): SDPA's flash,
 * efficient and cuDNN ops and the raw flash/efficient/cuDNN kernels' ops, forward and backward;
 * their rows of the model table, the causal pair count, and the functional signatures of
 * attention calls (kprof-diff(1)), the math path's enclosing ops included.
 */
#include "kprof/opmodel-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- attention (§3.3-§3.6, §6.2) -------------------------------------------- */

enum { L_BHSD, L_BSHD }; /* SDPA level [B,H,S,D]; flash [B,S,H,D], efficient [B,M,H,K] */
enum { CAUSAL_NONE, CAUSAL_TOP_LEFT, CAUSAL_BOTTOM_RIGHT };
enum { LSE_ALWAYS = -2 };

struct attn_schema {
	int bwd;
	int layout;
	int q, k, v;
	int grad_out, o, lse; /* backward reads; -1 in forward */
	int bias;             /* attn_bias, -1 */
	int cum_q;            /* cum_seq_q / cu_seqlens_q: varlen when a tensor; -1 */
	int causal;           /* is_causal flag, -1 */
	int causal_align;     /* what is_causal means */
	int mask_type;        /* _efficient_attention_*: custom_mask_type 0/1/2, -1 */
	int lse_flag;         /* forward: slot of compute_log_sumexp, or LSE_ALWAYS */
	int bias_grad;        /* backward: slot saying grad_bias is written, -1 */
	int bias_grad_index;  /* -1: @bias_grad is a bool; else an index into a bool list */
};

/*
 * is_causal at the _scaled_dot_product_* level is PyTorch's top-left tril.  The
 * flash kernel called directly is FlashAttention >= 2.1, bottom-right aligned
 * (identical when s_q == s_k, the only causal case sdpa lets flash run).
 */
/* clang-format off */
static const struct attn_schema s_sdpa_flash = {
	0, L_BHSD, 0, 1, 2, -1, -1, -1, -1, -1, 4, CAUSAL_TOP_LEFT, -1, LSE_ALWAYS, -1, -1 };
static const struct attn_schema s_sdpa_flash_bwd = {
	1, L_BHSD, 1, 2, 3, 0, 4, 5, -1, 6, 11, CAUSAL_TOP_LEFT, -1, 0, -1, -1 };
static const struct attn_schema s_sdpa_eff = {
	0, L_BHSD, 0, 1, 2, -1, -1, -1, 3, -1, 6, CAUSAL_TOP_LEFT, -1, 4, -1, -1 };
static const struct attn_schema s_sdpa_eff_bwd = {
	1, L_BHSD, 1, 2, 3, 0, 5, 6, 4, -1, 11, CAUSAL_TOP_LEFT, -1, 0, 10, 3 };
static const struct attn_schema s_sdpa_cudnn = {
	0, L_BHSD, 0, 1, 2, -1, -1, -1, 3, -1, 6, CAUSAL_TOP_LEFT, -1, 4, -1, -1 };
static const struct attn_schema s_sdpa_cudnn_bwd = {
	1, L_BHSD, 1, 2, 3, 0, 4, 5, 8, 9, 14, CAUSAL_TOP_LEFT, -1, 0, -1, -1 };
static const struct attn_schema s_flash_fwd = {
	0, L_BSHD, 0, 1, 2, -1, -1, -1, -1, 3, 8, CAUSAL_BOTTOM_RIGHT, -1, LSE_ALWAYS, -1, -1 };
static const struct attn_schema s_flash_bwd = {
	1, L_BSHD, 1, 2, 3, 0, 4, 5, -1, 6, 11, CAUSAL_BOTTOM_RIGHT, -1, 0, -1, -1 };
static const struct attn_schema s_eff_fwd = {
	0, L_BSHD, 0, 1, 2, -1, -1, -1, 3, 4, -1, CAUSAL_NONE, 9, 10, -1, -1 };
static const struct attn_schema s_eff_bwd = {
	1, L_BSHD, 1, 2, 3, 0, 5, 10, 4, 6, -1, CAUSAL_NONE, 14, 0, 15, -1 };
/* _cudnn_attention_forward adds cum_seq_q/k, max_q/k at 4-7: is_causal at 10 (NF 15291) */
static const struct attn_schema s_cudnn_fwd = {
	0, L_BHSD, 0, 1, 2, -1, -1, -1, 3, 4, 10, CAUSAL_TOP_LEFT, -1, 8, -1, -1 };
/* _cudnn_attention_backward: the slots of its sdpa parent (observed) */
static const struct attn_schema s_cudnn_bwd = {
	1, L_BHSD, 1, 2, 3, 0, 4, 5, 8, 9, 14, CAUSAL_TOP_LEFT, -1, 0, -1, -1 };
/* clang-format on */

struct attn_dims {
	int64_t b, h, s, d;
};

static void attn_unpack(const struct kp_slot *t, int layout, struct attn_dims *a)
{
	a->b = t->dims[0];
	a->h = t->dims[layout == L_BHSD ? 1 : 2];
	a->s = t->dims[layout == L_BHSD ? 2 : 1];
	a->d = t->dims[3];
}

int64_t opmodel_causal_pairs(int64_t s_q, int64_t s_k, int bottom_right)
{
	int64_t n, tri, rest;

	if (s_q < 0 || s_k < 0)
		return -1;
	/*
	 * Top-left: sum_{i<s_q} min(i+1, s_k) = T(min(s_q,s_k)) + (s_q - s_k)^+ * s_k.
	 * Bottom-right: sum_i clamp(s_k - s_q + i + 1, 0, s_k)
	 *   s_q <= s_k: s_q*(s_k - s_q) + T(s_q);  s_q > s_k: T(s_k).
	 * T(n) = n(n+1)/2, halved on the even factor so it cannot overflow early.
	 */
	n = s_q < s_k ? s_q : s_k;
	/* odd n: (n + 1) / 2 = n / 2 + 1, which cannot overflow for n = INT64_MAX */
	tri = n % 2 == 0 ? mul(n / 2, n + 1) : mul(n, n / 2 + 1);
	if (!bottom_right)
		rest = s_q > s_k ? mul(s_q - s_k, s_k) : 0;
	else
		rest = s_q <= s_k ? mul(s_q, s_k - s_q) : 0;
	n = add(tri, rest);
	return n < 0 ? -1 : n;
}

/*
 * The mask of an attention op into @causal (CAUSAL_NONE unless set).  A flag without a value
 * (emit_nvtx records no scalars): what the op's kernels say (FlashAttention names Is_causal),
 * else dense, with the assumption reported.  0, or -1 with the note set.
 */
static int attn_mask(const struct kp_op_in *in, const struct attn_schema *as, struct kp_cost *c,
		     int *causal)
{
	int flag = as->causal >= 0 ? as->causal : as->mask_type;

	if (flag >= 0 && *text(slot(in, flag)) == '\0') {
		if (in->causal_hint == CAUSAL_HINT_CAUSAL)
			*causal = as->causal >= 0 ? as->causal_align : CAUSAL_BOTTOM_RIGHT;
		else if (in->causal_hint != CAUSAL_HINT_DENSE)
			c->assumed =
				"is_causal not recorded and not in its kernels' names: FLOPs "
				"assume is_causal=False (every query-key pair; causal does about half)";
	} else if (as->causal >= 0) {
		if ((flag = opm_parse_bool(text(slot(in, as->causal)))) < 0)
			return fail(c, "attention 'is_causal' is not True or False");
		*causal = flag ? as->causal_align : CAUSAL_NONE;
	} else if (as->mask_type >= 0) {
		int64_t mt;

		/* custom_mask_type: 0 none, 1 causal top-left, 2 causal bottom-right */
		if (opm_parse_int(text(slot(in, as->mask_type)), &mt) != 0 || mt < 0 || mt > 2)
			return fail(c, "attention 'custom_mask_type' is not 0, 1 or 2");
		*causal = (int)mt;
	}
	return 0;
}

/*
 * Bytes of an attention op, compulsory (§6.2), each tensor in its own dtype; K/V sized by
 * H_kv as recorded.  Forward: read Q, K, V (+ attn_bias), write O = @rows_q * @d_v in Q's
 * dtype and the fp32 logsumexp [B, H_q, S_q] when it is computed.  Backward: read Q, K, V,
 * O, dO, LSE (+ attn_bias), write dQ, dK, dV (+ grad_bias).  FA2's fp32 dQ accumulator is
 * workspace, not counted.
 */
static int64_t attn_bytes(const struct kp_op_in *in, const struct attn_schema *as, int64_t rows_q,
			  int64_t d_v)
{
	const struct kp_slot *q = slot(in, as->q), *k = slot(in, as->k), *v = slot(in, as->v);
	const struct kp_slot *bias = slot(in, as->bias);
	int64_t bytes = add(add(tbytes(q), tbytes(k)), add(tbytes(v), tbytes(bias)));
	int flag, list[8];

	if (!as->bwd) {
		bytes = add(bytes, nbytes(mul(rows_q, d_v), q->dtype));
		if (as->lse_flag == LSE_ALWAYS ||
		    (as->lse_flag >= 0 && opm_parse_bool(text(slot(in, as->lse_flag))) == 1))
			bytes = add(bytes, nbytes(rows_q, DT_F32)); /* one fp32 per row */
		return bytes;
	}
	bytes = add(bytes, tbytes(slot(in, as->grad_out)));
	bytes = add(bytes, tbytes(slot(in, as->o)));
	bytes = add(bytes, tbytes(slot(in, as->lse)));
	bytes = add(bytes, add(add(tbytes(q), tbytes(k)), tbytes(v)));
	if (is_tensor(bias) && as->bias_grad >= 0) {
		const char *t = text(slot(in, as->bias_grad));

		flag = as->bias_grad_index < 0 ? opm_parse_bool(t)
					       : (opm_parse_bools(t, list, 8) > as->bias_grad_index
							  ? list[as->bias_grad_index]
							  : 0);
		if (flag == 1)
			bytes = add(bytes, tbytes(bias));
	}
	return bytes;
}

/*
 * Query, key and value: tensors of one rank, 4-D ([B, H, S, D] in the op's layout) or, for
 * varlen ops (cum_seq/cu_seqlens tensors, or 3-D [total, H, D] inputs where the op has
 * them), 3-D.  Sets c->dtype and *varlen; -1 (with the reason in @c) when they are not.
 */
static int attn_operands(const struct kp_op_in *in, const struct attn_schema *as, struct kp_cost *c,
			 int *varlen)
{
	const struct kp_slot *q = slot(in, as->q), *k = slot(in, as->k), *v = slot(in, as->v);

	if (!is_tensor(q) || !is_tensor(k) || !is_tensor(v))
		return fail(c, "attention query, key or value is not a tensor");
	if (q->ndim != k->ndim || q->ndim != v->ndim || q->ndim < 3 || q->ndim > 4)
		return fail(c, "attention query, key and value are not all 3-D or all 4-D");
	c->dtype = q->dtype;
	*varlen = is_tensor(slot(in, as->cum_q)) || (q->ndim == 3 && as->cum_q >= 0);
	if (!*varlen && q->ndim != 4)
		return fail(c, "attention query, key and value are not 4-D");
	return 0;
}

/* Rows of Q and O: B*H_q*S_q (or total_q*H_q when varlen) = numel(q) / D. */
static int64_t attn_rows(const struct kp_slot *q)
{
	int64_t rows = 1;

	for (int i = 0; i < q->ndim - 1; i++)
		rows = mul(rows, q->dims[i]);
	return rows;
}

/*
 * The 4-D query, key and value into @aq and @ak: one batch, one head dim for Q and K, K and
 * V alike, and (GQA/MQA) H_q a multiple of H_kv; -1 (with the reason in @c) otherwise.
 */
static int attn_heads(const struct kp_op_in *in, const struct attn_schema *as, struct attn_dims *aq,
		      struct attn_dims *ak, struct kp_cost *c)
{
	struct attn_dims av;

	attn_unpack(slot(in, as->q), as->layout, aq);
	attn_unpack(slot(in, as->k), as->layout, ak);
	attn_unpack(slot(in, as->v), as->layout, &av);
	if (aq->b != ak->b || aq->b != av.b)
		return fail(c, "attention query, key and value differ in batch size");
	if (aq->d != ak->d)
		return fail(c, "attention query and key differ in head dim");
	if (ak->s != av.s || ak->h != av.h)
		return fail(c, "attention key and value differ in length or heads");
	/* FLOPs use the query heads (§3.6) */
	if (ak->h < 1 || aq->h % ak->h != 0)
		return fail(c, "attention query heads are not a multiple of key/value heads");
	return 0;
}

/*
 * FLOPs per (b, h_q) head and unmasked (i, j) pair (§3.3, §3.5):
 *   forward  QK^T + PV                          = 2*(d + d_v)
 *   backward QK^T, dO V^T, P^T dO, dS K, dS^T Q = 2*(3d + 2d_v)  (2.5x forward)
 * pairs = s_q*s_k dense, or the exact causal count, so causal FLOPs are the
 * dense ones times pairs/(s_q*s_k), kept exact in integers.
 */
static int64_t attn_flops(const struct attn_schema *as, const struct attn_dims *aq,
			  const struct attn_dims *ak, int64_t d_v, int causal)
{
	int64_t pairs, flops;

	if (causal == CAUSAL_NONE)
		pairs = mul(aq->s, ak->s);
	else
		pairs = opmodel_causal_pairs(aq->s, ak->s, causal == CAUSAL_BOTTOM_RIGHT);
	if (!as->bwd)
		flops = mul(mul3(2, aq->b, aq->h), mul(add(aq->d, d_v), pairs));
	else
		flops = mul(mul3(2, aq->b, aq->h), mul(add(mul(3, aq->d), mul(2, d_v)), pairs));
	return pairs < 0 ? OVF : flops;
}

static int eval_attn(const struct kp_op_in *in, const struct model *m, struct kp_cost *c)
{
	const struct attn_schema *as = m->aux;
	const struct kp_slot *v = slot(in, as->v);
	struct attn_dims aq, ak;
	int causal = CAUSAL_NONE, varlen;
	int64_t d_v;

	if (attn_operands(in, as, c, &varlen) < 0 || attn_mask(in, as, c, &causal) < 0)
		return -1;
	d_v = v->dims[v->ndim - 1];
	c->bytes = attn_bytes(in, as, attn_rows(slot(in, as->q)), d_v);
	if (varlen) {
		/*
		 * Per-sequence lengths live in the cum_seq tensors, whose values are not
		 * recorded; max lengths would overstate ragged batches, so no FLOPs.
		 */
		c->flops = -1;
		c->note = "varlen attention: sequence lengths not recorded, FLOPs unknown";
		return 0;
	}
	if (attn_heads(in, as, &aq, &ak, c) < 0)
		return -1;
	c->flops = attn_flops(as, &aq, &ak, d_v, causal);
	return 0;
}

/* ---- functional signatures (kprof-diff(1), PAIRS ACROSS BACKENDS) ------------------ */

/*
 * Ops without a model whose slots name a whole attention call: the sdpa entry point,
 * its math decomposition, and the enclosing op kprof capture records around the math
 * path's backward (autograd runs it as bmm/softmax nodes of its own).  The layout of
 * aten::scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal,
 * scale, enable_gqa): is_causal is top-left.
 */
static const struct attn_schema s_sdpa_top = { 0, L_BHSD,          0,  1,  2,  -1, -1, -1, 3, -1,
					       5, CAUSAL_TOP_LEFT, -1, -1, -1, -1 };
static const struct attn_schema s_sdpa_top_bwd = { 1,  L_BHSD, 0,  1,  2, -1,
						   -1, -1,     3,  -1, 5, CAUSAL_TOP_LEFT,
						   -1, -1,     -1, -1 };

static const struct {
	const char *name;
	const struct attn_schema *s;
} sig_attn_tops[] = {
	{ "aten::scaled_dot_product_attention", &s_sdpa_top },
	{ "aten::_scaled_dot_product_attention_math", &s_sdpa_top },
	{ "kprof::scaled_dot_product_attention_math_backward", &s_sdpa_top_bwd },
};

int opmodel_sig_carrier(const char *name)
{
	for (size_t i = 0; i < sizeof(sig_attn_tops) / sizeof(sig_attn_tops[0]); i++)
		if (name && !strcmp(name, sig_attn_tops[i].name))
			return 1;
	return 0;
}

/* "flash", "efficient", "cudnn" from an attention op's name; "math" for the rest */
const char *opmodel_attn_variant(const char *name)
{
	if (!name)
		return "math";
	if (strstr(name, "flash"))
		return "flash";
	if (strstr(name, "efficient"))
		return "efficient";
	if (strstr(name, "cudnn"))
		return "cudnn";
	return "math";
}

static int sig_attn(const struct kp_op_in *in, const struct attn_schema *as, char *buf, size_t cap)
{
	const struct kp_slot *q = slot(in, as->q), *k = slot(in, as->k), *v = slot(in, as->v);
	const struct kp_slot *bias = slot(in, as->bias);
	struct attn_dims aq, ak, av;
	int causal = CAUSAL_NONE, flag = as->causal >= 0 ? as->causal : as->mask_type;
	char bt[96] = "";

	if (!is_tensor(q) || !is_tensor(k) || !is_tensor(v) || q->ndim != 4 || k->ndim != 4 ||
	    v->ndim != 4 || is_tensor(slot(in, as->cum_q)))
		return -1;
	/* is_causal must be recorded: a guess could pair a causal call with a dense one */
	if (flag < 0 || *text(slot(in, flag)) == '\0') {
		return -1;
	} else if (as->causal >= 0) {
		int f = opm_parse_bool(text(slot(in, as->causal)));
		if (f < 0)
			return -1;
		causal = f ? as->causal_align : CAUSAL_NONE;
	} else {
		int64_t mt;
		if (opm_parse_int(text(slot(in, as->mask_type)), &mt) != 0 || mt < 0 || mt > 2)
			return -1;
		causal = (int)mt;
	}
	attn_unpack(q, as->layout, &aq);
	attn_unpack(k, as->layout, &ak);
	attn_unpack(v, as->layout, &av);
	if (aq.b != ak.b || aq.b != av.b || ak.s != av.s || ak.h != av.h)
		return -1;
	/* top-left and bottom-right masks are one mask when S_q == S_k */
	if (causal != CAUSAL_NONE && aq.s == ak.s)
		causal = CAUSAL_TOP_LEFT;
	if (is_tensor(bias)) {
		size_t n = (size_t)snprintf(bt, sizeof(bt), " bias=[");
		for (int i = 0; i < bias->ndim && n < sizeof(bt) - 24; i++)
			n += (size_t)snprintf(bt + n, sizeof(bt) - n, "%s%lld", i ? "," : "",
					      (long long)bias->dims[i]);
		if (n < sizeof(bt) - 1)
			snprintf(bt + n, sizeof(bt) - n, "]");
	}
	int n = snprintf(buf, cap,
			 "attention %s B=%lld H=%lld H_kv=%lld S_q=%lld S_k=%lld D=%lld "
			 "D_v=%lld%s%s %s",
			 as->bwd ? "bwd" : "fwd", (long long)aq.b, (long long)aq.h, (long long)ak.h,
			 (long long)aq.s, (long long)ak.s, (long long)aq.d, (long long)av.d,
			 causal == CAUSAL_NONE       ? ""
			 : causal == CAUSAL_TOP_LEFT ? " causal"
						     : " causal-br",
			 bt, dtype_name(q->dtype));
	return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* The signature of an attention row */
static int attn_signature(const struct kp_op_in *in, const struct model *m, char *buf, size_t cap)
{
	return sig_attn(in, m->aux, buf, cap);
}

int opm_attn_top_signature(const struct kp_op_in *in, char *buf, size_t cap)
{
	for (size_t i = 0; i < sizeof(sig_attn_tops) / sizeof(sig_attn_tops[0]); i++)
		if (!strcmp(in->name, sig_attn_tops[i].name))
			return sig_attn(in, sig_attn_tops[i].s, buf, cap);
	return -1;
}

/* The slot of an attention row's is_causal flag; -1 when it has none */
static int attn_causal_slot(const struct model *m)
{
	return ((const struct attn_schema *)m->aux)->causal;
}

#define P(n, fam, fn, aux) { "aten::" n, MODEL_PRIMARY, fam, fn, aux }
#define S(n, fam, fn, aux) { "aten::" n, MODEL_SECONDARY, fam, fn, aux }
/* sorted by name (strcmp order) for bsearch */
static const struct model models[] = {
	P("_cudnn_attention_backward", "attn", eval_attn, &s_cudnn_bwd),
	P("_cudnn_attention_forward", "attn", eval_attn, &s_cudnn_fwd),
	P("_efficient_attention_backward", "attn", eval_attn, &s_eff_bwd),
	P("_efficient_attention_forward", "attn", eval_attn, &s_eff_fwd),
	P("_flash_attention_backward", "attn", eval_attn, &s_flash_bwd),
	P("_flash_attention_forward", "attn", eval_attn, &s_flash_fwd),
	P("_scaled_dot_product_cudnn_attention", "attn", eval_attn, &s_sdpa_cudnn),
	P("_scaled_dot_product_cudnn_attention_backward", "attn", eval_attn, &s_sdpa_cudnn_bwd),
	P("_scaled_dot_product_efficient_attention", "attn", eval_attn, &s_sdpa_eff),
	P("_scaled_dot_product_efficient_attention_backward", "attn", eval_attn, &s_sdpa_eff_bwd),
	P("_scaled_dot_product_flash_attention", "attn", eval_attn, &s_sdpa_flash),
	P("_scaled_dot_product_flash_attention_backward", "attn", eval_attn, &s_sdpa_flash_bwd),
};
#undef P
#undef S

const struct opm_family opm_family_attn = {
	.models = models,
	.n = sizeof(models) / sizeof(models[0]),
	.signature = attn_signature,
	.causal_slot = attn_causal_slot,
};
