/*
 * test-opmodel-attn.c — attention (src/model/opmodel-attn.c): flash, efficient and cuDNN SDPA
 * forward and backward, causal pairs, GQA, masks, against FlopCounterMode and hand math.
 * Shared slot macros and FlopCounterMode counts: opmodel-test.h.
 */
#include "opmodel-test.h"

/* ---- attention ---- */

static void causal_pairs_count_top_left_and_bottom_right_masks_exactly(void **state)
{
	(void)state;
	assert_int_equal(opmodel_causal_pairs(4, 4, 0), 10);
	assert_int_equal(opmodel_causal_pairs(4, 4, 1), 10);
	assert_int_equal(opmodel_causal_pairs(1024, 1024, 0), 524800);
	/* s_q < s_k: top-left rows 1, 2; bottom-right rows 3, 4 */
	assert_int_equal(opmodel_causal_pairs(2, 4, 0), 3);
	assert_int_equal(opmodel_causal_pairs(2, 4, 1), 7);
	/* s_q > s_k: top-left 1, 2, 2, 2; bottom-right 0, 0, 1, 2 */
	assert_int_equal(opmodel_causal_pairs(4, 2, 0), 7);
	assert_int_equal(opmodel_causal_pairs(4, 2, 1), 3);
	assert_int_equal(opmodel_causal_pairs(0, 5, 0), 0);
	assert_int_equal(opmodel_causal_pairs(-1, 5, 0), -1);
	assert_int_equal(opmodel_causal_pairs((int64_t)1 << 30, (int64_t)1 << 30, 1),
			 ((int64_t)1 << 29) * (((int64_t)1 << 30) + 1));
	assert_int_equal(opmodel_causal_pairs((int64_t)1 << 62, (int64_t)1 << 62, 0), -1);
}

#define FLASH "aten::_scaled_dot_product_flash_attention"

/*
 * sdpa_flash: B in (1, 8), H 16, S in (512, 1024, 4096), D 128, is_causal False
 * and True.  FC counts causal calls dense; kprof counts S(S+1)/2 pairs of S^2.
 */
static void sdpa_flash_matches_flop_counter_dense_and_counts_causal_pairs(void **state)
{
	static const int64_t bs[2] = { 1, 8 }, ss[3] = { 512, 1024, 4096 };
	struct kp_cost c;
	int64_t dense_fwd = 0, dense_bwd = 0;
	int i, j, causal;

	(void)state;
	for (i = 0; i < 2; i++) {
		for (j = 0; j < 3; j++) {
			for (causal = 0; causal < 2; causal++) {
				int64_t b = bs[i], s = ss[j], dense = 4 * b * 16 * s * s * 128;
				const int64_t *qd = (const int64_t[]){ b, 16, s, 128 };
				const int64_t *lse = (const int64_t[]){ b, 16, s };
				const char *flag = causal ? "True" : "False";
				struct kp_slot fw[7] = {
					{ 4, qd, DT_BF16, "", 0, NULL },
					{ 4, qd, DT_BF16, "", 0, NULL },
					{ 4, qd, DT_BF16, "", 0, NULL },
					{ 0, NULL, DT_NONE, "0.", 0, NULL },
					{ 0, NULL, DT_NONE, flag, 0, NULL },
					{ 0, NULL, DT_NONE, "False", 0, NULL },
					{ 0, NULL, DT_NONE, "0.088388347648318433", 0, NULL },
				};
				struct kp_slot bw[15] = {
					{ 4, qd, DT_BF16, "", 0, NULL },
					{ 4, qd, DT_BF16, "", 0, NULL },
					{ 4, qd, DT_BF16, "", 0, NULL },
					{ 4, qd, DT_BF16, "", 0, NULL },
					{ 4, qd, DT_BF16, "", 0, NULL },
					{ 3, lse, DT_F32, "", 0, NULL },
					{ 0, NULL, DT_NONE, "", 0, NULL },
					{ 0, NULL, DT_NONE, "", 0, NULL },
					{ 0, NULL, DT_NONE, "512", 0, NULL },
					{ 0, NULL, DT_NONE, "512", 0, NULL },
					{ 0, NULL, DT_NONE, "0.", 0, NULL },
					{ 0, NULL, DT_NONE, flag, 0, NULL },
					{ 1, (const int64_t[]){ 2 }, DT_U64, "", 0, NULL },
					{ 0, NULL, DT_U64, "", 0, NULL },
					{ 0, NULL, DT_NONE, "0.088388347648318433", 0, NULL },
				};
				struct kp_op_in f = { .name = FLASH,
						      .nslots = 7,
						      .slots = fw,
						      .kernel_flop = -1,
						      .kernel_num_gb = -1.0 };
				struct kp_op_in bk = { .name = FLASH "_backward",
						       .nslots = 15,
						       .slots = bw,
						       .kernel_flop = -1,
						       .kernel_num_gb = -1.0 };
				int64_t qb = b * 16 * s * 128 * 2, lb = b * 16 * s * 4;

				eval_ok(&f, &c);
				if (causal)
					assert_int_equal(c.flops * 2 * s, dense * (s + 1));
				else
					assert_int_equal(c.flops, dense);
				dense_fwd += dense;
				/* read Q, K, V; write O and the fp32 logsumexp */
				assert_int_equal(c.bytes, 4 * qb + lb);
				assert_string_equal(c.family, "attn");

				eval_ok(&bk, &c);
				/* backward = 2.5x forward: 10*b*h*d per pair */
				if (causal)
					assert_int_equal(c.flops * 2 * s, dense * 5 / 2 * (s + 1));
				else
					assert_int_equal(c.flops, dense * 5 / 2);
				dense_bwd += dense * 5 / 2;
				/* read Q, K, V, O, dO, LSE; write dQ, dK, dV */
				assert_int_equal(c.bytes, 8 * qb + lb);
			}
		}
	}
	assert_int_equal(dense_fwd, FC_SDPA_FLASH_FWD);
	assert_int_equal(dense_bwd, FC_SDPA_FLASH_BWD);
}

/* block_bf16: cuDNN SDPA, causal, B=8, H=16, S=1024, D=128 (doc/flops-bytes.md §3.5) */
static void cudnn_attention_of_block_bf16_counts_unmasked_pairs(void **state)
{
	struct kp_cost c;
	const int64_t qb = 8LL * 16 * 1024 * 128 * 2, lb = 8LL * 16 * 1024 * 4;

	(void)state;
	assert_int_equal(EVAL(&c, "aten::_scaled_dot_product_cudnn_attention",
			      T(DT_BF16, 8, 16, 1024, 128), T(DT_BF16, 8, 16, 1024, 128),
			      T(DT_BF16, 8, 16, 1024, 128), NONE, SC("True"), SC("0."), SC("True"),
			      SC("False"), NONE),
			 0);
	assert_int_equal(c.flops, 34393292800LL);
	assert_int_equal(c.flops * 2 * 1024, FC_BLOCK_CUDNN_FWD * 1025);
	assert_int_equal(c.bytes, 4 * qb + lb);
	assert_int_equal(EVAL(&c, "aten::_scaled_dot_product_cudnn_attention_backward",
			      T(DT_BF16, 8, 16, 1024, 128), T(DT_BF16, 8, 16, 1024, 128),
			      T(DT_BF16, 8, 16, 1024, 128), T(DT_BF16, 8, 16, 1024, 128),
			      T(DT_BF16, 8, 16, 1024, 128), T(DT_F32, 8, 16, 1024, 1), T0(DT_I64),
			      T0(DT_I64), NONE, NONE, NONE, SC("1024"), SC("1024"), SC("0."),
			      SC("True"), NONE),
			 0);
	assert_int_equal(c.flops, 85983232000LL);
	assert_int_equal(c.flops * 2 * 1024, FC_BLOCK_CUDNN_BWD * 1025);
	/* + the two 0-dim int64 philox tensors are not attention operands */
	assert_int_equal(c.bytes, 8 * qb + lb);
	/* the inner _cudnn_attention_forward: is_causal at slot 10 */
	assert_int_equal(EVAL(&c, "aten::_cudnn_attention_forward", T(DT_BF16, 8, 16, 1024, 128),
			      T(DT_BF16, 8, 16, 1024, 128), T(DT_BF16, 8, 16, 1024, 128), NONE,
			      NONE, NONE, SC("1024"), SC("1024"), SC("True"), SC("0."), SC("True"),
			      SC("False"), NONE),
			 0);
	assert_int_equal(c.flops, 34393292800LL);
	assert_int_equal(c.bytes, 4 * qb + lb);
	assert_int_equal(EVAL(&c, "aten::_cudnn_attention_backward", T(DT_BF16, 8, 16, 1024, 128),
			      T(DT_BF16, 8, 16, 1024, 128), T(DT_BF16, 8, 16, 1024, 128),
			      T(DT_BF16, 8, 16, 1024, 128), T(DT_BF16, 8, 16, 1024, 128),
			      T(DT_F32, 8, 16, 1024, 1), T0(DT_I64), T0(DT_I64), NONE, NONE, NONE,
			      SC("1024"), SC("1024"), SC("0."), SC("True"), NONE),
			 0);
	assert_int_equal(c.flops, 85983232000LL);
}

static void gqa_counts_flops_with_query_heads_and_bytes_with_kv_heads(void **state)
{
	struct kp_cost c;
	const int64_t q = 2 * 8 * 128 * 64, kv = 2 * 2 * 128 * 64;

	(void)state;
	/* cuDNN accepts GQA: Q 8 heads, K/V 2 heads, compute_log_sumexp True */
	assert_int_equal(EVAL(&c, "aten::_scaled_dot_product_cudnn_attention",
			      T(DT_BF16, 2, 8, 128, 64), T(DT_BF16, 2, 2, 128, 64),
			      T(DT_BF16, 2, 2, 128, 64), NONE, SC("True"), SC("0."), SC("False"),
			      SC("False"), NONE),
			 0);
	assert_int_equal(c.flops, 4LL * 2 * 8 * 128 * 128 * 64);
	assert_int_equal(c.bytes, 2 * (q + kv + kv + q) + 2 * 8 * 128 * 4);
	/* no logsumexp when compute_log_sumexp is False (inference) */
	assert_int_equal(EVAL(&c, "aten::_scaled_dot_product_cudnn_attention",
			      T(DT_BF16, 2, 8, 128, 64), T(DT_BF16, 2, 2, 128, 64),
			      T(DT_BF16, 2, 2, 128, 64), NONE, SC("False"), SC("0."), SC("False"),
			      SC("False"), NONE),
			 0);
	assert_int_equal(c.bytes, 2 * (q + kv + kv + q));
	/* flash backward in [B,S,H,D]: Q/dO/O 8 heads, K/V 2 heads */
	assert_int_equal(EVAL(&c, "aten::_flash_attention_backward", T(DT_F16, 2, 128, 8, 64),
			      T(DT_F16, 2, 128, 8, 64), T(DT_F16, 2, 128, 2, 64),
			      T(DT_F16, 2, 128, 2, 64), T(DT_F16, 2, 128, 8, 64),
			      T(DT_F32, 2, 8, 128), NONE, NONE, SC("128"), SC("128"), SC("0."),
			      SC("False"), T(DT_U64, 2), T0(DT_U64), NONE, NONE, NONE),
			 0);
	assert_int_equal(c.flops, 10LL * 2 * 8 * 128 * 128 * 64);
	assert_int_equal(c.bytes, 2 * (3 * q + 2 * kv) + 2 * 8 * 128 * 4 + 2 * (q + 2 * kv));
	assert_int_equal(c.prec, PREC_FP16);
	/* 8 query heads over 3 key/value heads */
	assert_int_equal(EVAL(&c, "aten::_scaled_dot_product_cudnn_attention",
			      T(DT_BF16, 2, 8, 128, 64), T(DT_BF16, 2, 3, 128, 64),
			      T(DT_BF16, 2, 3, 128, 64), NONE, SC("True"), SC("0."), SC("False"),
			      SC("False"), NONE),
			 -1);
	assert_string_equal(c.note, "attention query heads are not a multiple of key/value heads");
}

static void flash_attention_forward_reads_batch_seq_heads_dim(void **state)
{
	struct kp_cost c;

	(void)state;
	/* observed [2,128,8,64]: B 2, S 128, H 8, D 64; FC's observed dense 67,108,864 */
	assert_int_equal(EVAL(&c, "aten::_flash_attention_forward", T(DT_BF16, 2, 128, 8, 64),
			      T(DT_BF16, 2, 128, 8, 64), T(DT_BF16, 2, 128, 8, 64), NONE, NONE,
			      SC("128"), SC("128"), SC("0."), SC("False"), SC("False"), SC("0.125"),
			      NONE, NONE, NONE, NONE),
			 0);
	assert_int_equal(c.flops, 67108864);
	assert_int_equal(c.bytes, 4 * 2 * 2 * 128 * 8 * 64 + 2 * 8 * 128 * 4);
	/* causal: 128*129/2 of 128^2 pairs */
	assert_int_equal(EVAL(&c, "aten::_flash_attention_forward", T(DT_BF16, 2, 128, 8, 64),
			      T(DT_BF16, 2, 128, 8, 64), T(DT_BF16, 2, 128, 8, 64), NONE, NONE,
			      SC("128"), SC("128"), SC("0."), SC("True"), SC("False"), SC("0.125"),
			      NONE, NONE, NONE, NONE),
			 0);
	assert_int_equal(c.flops, 4LL * 2 * 8 * 64 * (128 * 129 / 2));
	/* called directly with s_q != s_k, causal is FlashAttention's bottom-right */
	assert_int_equal(EVAL(&c, "aten::_flash_attention_forward", T(DT_BF16, 1, 64, 4, 32),
			      T(DT_BF16, 1, 256, 4, 32), T(DT_BF16, 1, 256, 4, 32), NONE, NONE,
			      SC("64"), SC("256"), SC("0."), SC("True"), SC("False"), NONE, NONE,
			      NONE, NONE, NONE),
			 0);
	assert_int_equal(c.flops, 4LL * 1 * 4 * 32 * (64 * 192 + 64 * 65 / 2));
}

/* _efficient_attention_forward(q, k, v, bias, cu_seqlens_q, cu_seqlens_k, max_q, max_k,
 * dropout_p, custom_mask_type, compute_log_sumexp, scale, seqlen_k, window_size) */
static void efficient_attention_reads_bmhk_and_custom_mask_type(void **state)
{
	struct kp_cost c;
	const int64_t dense = 4LL * 2 * 16 * 1024 * 1024 * 64;

	(void)state;
	/* §3.7: B 2, M 1024, H 16, K 64 -> 8,589,934,592 dense */
	assert_int_equal(EVAL(&c, "aten::_efficient_attention_forward", T(DT_BF16, 2, 1024, 16, 64),
			      T(DT_BF16, 2, 1024, 16, 64), T(DT_BF16, 2, 1024, 16, 64), NONE, NONE,
			      NONE, SC("1024"), SC("1024"), SC("0."), SC("0"), SC("True"), NONE,
			      NONE, NONE),
			 0);
	assert_int_equal(c.flops, dense);
	assert_int_equal(c.flops, 8589934592LL);
	assert_int_equal(c.bytes, 4 * 2 * 2 * 1024 * 16 * 64 + 2 * 16 * 1024 * 4);
	/* mask type 1: causal top-left */
	assert_int_equal(EVAL(&c, "aten::_efficient_attention_forward", T(DT_BF16, 2, 1024, 16, 64),
			      T(DT_BF16, 2, 1024, 16, 64), T(DT_BF16, 2, 1024, 16, 64), NONE, NONE,
			      NONE, SC("1024"), SC("1024"), SC("0."), SC("1"), SC("False"), NONE,
			      NONE, NONE),
			 0);
	assert_int_equal(c.flops * 2 * 1024, dense * 1025);
	assert_int_equal(c.bytes, 4 * 2 * 2 * 1024 * 16 * 64);
	/* s_q 256 < s_k 1024: top-left keeps 256*257/2 pairs, bottom-right adds 256*768 */
	assert_int_equal(EVAL(&c, "aten::_efficient_attention_forward", T(DT_BF16, 1, 256, 2, 64),
			      T(DT_BF16, 1, 1024, 2, 64), T(DT_BF16, 1, 1024, 2, 64), NONE, NONE,
			      NONE, SC("8"), SC("8"), SC("0."), SC("1"), SC("False"), NONE, NONE,
			      NONE),
			 0);
	assert_int_equal(c.flops, 4LL * 2 * 64 * (256 * 257 / 2));
	assert_int_equal(EVAL(&c, "aten::_efficient_attention_forward", T(DT_BF16, 1, 256, 2, 64),
			      T(DT_BF16, 1, 1024, 2, 64), T(DT_BF16, 1, 1024, 2, 64), NONE, NONE,
			      NONE, SC("8"), SC("8"), SC("0."), SC("2"), SC("False"), NONE, NONE,
			      NONE),
			 0);
	assert_int_equal(c.flops, 4LL * 2 * 64 * (256 * 768 + 256 * 257 / 2));
	assert_int_equal(EVAL(&c, "aten::_efficient_attention_forward", T(DT_BF16, 1, 256, 2, 64),
			      T(DT_BF16, 1, 1024, 2, 64), T(DT_BF16, 1, 1024, 2, 64), NONE, NONE,
			      NONE, SC("8"), SC("8"), SC("0."), SC("3"), SC("False"), NONE, NONE,
			      NONE),
			 -1);
	assert_string_equal(c.note, "attention 'custom_mask_type' is not 0, 1 or 2");
}

static void efficient_attention_backward_reads_mask_type_at_slot_14(void **state)
{
	struct kp_cost c;
	const int64_t t = 2LL * 128 * 8 * 64;

	(void)state;
	/* observed: max_seqlen_q/k recorded as "8" for S = 128; lengths come from shapes */
	assert_int_equal(EVAL(&c, "aten::_efficient_attention_backward", T(DT_F16, 2, 128, 8, 64),
			      T(DT_F16, 2, 128, 8, 64), T(DT_F16, 2, 128, 8, 64),
			      T(DT_F16, 2, 128, 8, 64), NONE, T(DT_F16, 2, 128, 8, 64), NONE, NONE,
			      SC("8"), SC("8"), T(DT_F32, 2, 8, 128), SC("0."), T0(DT_I64),
			      T0(DT_I64), SC("1"), SC("False"), SC("0.125"), NONE, NONE,
			      SC("False")),
			 0);
	assert_int_equal(c.flops, 10LL * 2 * 8 * 64 * (128 * 129 / 2));
	assert_int_equal(c.bytes, 2 * 5 * t + 2 * 8 * 128 * 4 + 2 * 3 * t);
}

static void sdpa_efficient_reads_attn_bias_and_writes_its_gradient_when_asked(void **state)
{
	struct kp_cost c;
	const int64_t t = 1LL * 4 * 64 * 32, bias = 1LL * 4 * 64 * 64;

	(void)state;
	assert_int_equal(EVAL(&c, "aten::_scaled_dot_product_efficient_attention",
			      T(DT_F32, 1, 4, 64, 32), T(DT_F32, 1, 4, 64, 32),
			      T(DT_F32, 1, 4, 64, 32), T(DT_F32, 1, 4, 64, 64), SC("False"),
			      SC("0."), SC("False"), NONE),
			 0);
	assert_int_equal(c.flops, 4LL * 4 * 64 * 64 * 32);
	assert_int_equal(c.bytes, 4 * (4 * t + bias));
	assert_int_equal(EVAL(&c, "aten::_scaled_dot_product_efficient_attention_backward",
			      T(DT_F32, 1, 4, 64, 32), T(DT_F32, 1, 4, 64, 32),
			      T(DT_F32, 1, 4, 64, 32), T(DT_F32, 1, 4, 64, 32),
			      T(DT_F32, 1, 4, 64, 64), T(DT_F32, 1, 4, 64, 32), T(DT_F32, 1, 4, 64),
			      T0(DT_I64), T0(DT_I64), SC("0."), SC("[True, True, True, True]"),
			      SC("False"), NONE),
			 0);
	assert_int_equal(c.flops, 10LL * 4 * 64 * 64 * 32);
	/* dO, Q, K, V, O, LSE, bias; dQ, dK, dV, dbias */
	assert_int_equal(c.bytes, 4 * (5 * t + 4 * 64 + bias) + 4 * (3 * t + bias));
}

/*
 * An attention op whose is_causal slot holds no value (emit_nvtx): the kernels' hint decides;
 * without one the FLOPs are dense and the assumption is said; a recorded flag wins.
 */
static void unrecorded_is_causal_takes_the_kernel_hint_else_assumes_dense(void **state)
{
	const int64_t *qd = (const int64_t[]){ 2, 8, 256, 64 };
	int64_t dense = 2ll * 2 * 8 * (64 + 64) * 256 * 256,
		causal = dense / 256 / 256 * (256 * 257 / 2);
	struct kp_slot fw[7] = {
		{ 4, qd, DT_BF16, "", 0, NULL },   { 4, qd, DT_BF16, "", 0, NULL },
		{ 4, qd, DT_BF16, "", 0, NULL },   { 0, NULL, DT_NONE, "", 0, NULL },
		{ 0, NULL, DT_NONE, "", 0, NULL }, { 0, NULL, DT_NONE, "", 0, NULL },
		{ 0, NULL, DT_NONE, "", 0, NULL },
	};
	struct kp_op_in in = {
		.name = FLASH, .nslots = 7, .slots = fw, .kernel_flop = -1, .kernel_num_gb = -1
	};
	struct kp_cost c;

	(void)state;
	in.causal_hint = CAUSAL_HINT_CAUSAL;
	assert_int_equal(opmodel_eval(&in, &c), 0);
	assert_int_equal(c.flops, causal);
	assert_null(c.assumed);
	in.causal_hint = CAUSAL_HINT_DENSE;
	assert_int_equal(opmodel_eval(&in, &c), 0);
	assert_int_equal(c.flops, dense);
	assert_null(c.assumed);
	in.causal_hint = CAUSAL_HINT_NONE;
	assert_int_equal(opmodel_eval(&in, &c), 0);
	assert_int_equal(c.flops, dense);
	assert_non_null(c.assumed);
	assert_non_null(strstr(c.assumed, "is_causal=False"));
	/* a recorded flag is the op's own argument: it wins over the kernels */
	fw[4].concrete = "False";
	in.causal_hint = CAUSAL_HINT_CAUSAL;
	assert_int_equal(opmodel_eval(&in, &c), 0);
	assert_int_equal(c.flops, dense);
	assert_null(c.assumed);
	fw[4].concrete = "maybe";
	assert_int_equal(opmodel_eval(&in, &c), -1);
	/* _efficient_attention_forward's custom_mask_type alike: causal is bottom-right there */
	const int64_t *ed = (const int64_t[]){ 1, 128, 4, 64 },
		      *kd = (const int64_t[]){ 1, 256, 4, 64 };
	struct kp_slot ef[12] = {
		{ 4, ed, DT_F16, "", 0, NULL },    { 4, kd, DT_F16, "", 0, NULL },
		{ 4, kd, DT_F16, "", 0, NULL },    { 0, NULL, DT_NONE, "", 0, NULL },
		{ 0, NULL, DT_NONE, "", 0, NULL }, { 0, NULL, DT_NONE, "", 0, NULL },
		{ 0, NULL, DT_NONE, "", 0, NULL }, { 0, NULL, DT_NONE, "", 0, NULL },
		{ 0, NULL, DT_NONE, "", 0, NULL }, { 0, NULL, DT_NONE, "", 0, NULL },
		{ 0, NULL, DT_NONE, "", 0, NULL }, { 0, NULL, DT_NONE, "", 0, NULL },
	};
	struct kp_op_in ein = { .name = "aten::_efficient_attention_forward",
				.nslots = 12,
				.slots = ef,
				.kernel_flop = -1,
				.kernel_num_gb = -1,
				.causal_hint = CAUSAL_HINT_CAUSAL };
	assert_int_equal(opmodel_eval(&ein, &c), 0);
	assert_int_equal(c.flops, 2ll * 1 * 4 * (64 + 64) * opmodel_causal_pairs(128, 256, 1));
	ein.causal_hint = CAUSAL_HINT_NONE;
	assert_int_equal(opmodel_eval(&ein, &c), 0);
	assert_int_equal(c.flops, 2ll * 1 * 4 * (64 + 64) * 128 * 256);
	assert_non_null(c.assumed);
}

static void varlen_flash_attention_leaves_flops_unknown_with_a_note(void **state)
{
	struct kp_cost c;

	(void)state;
	/* 3-D [total, H, D] with cum_seq tensors of B+1 = 5 offsets */
	assert_int_equal(EVAL(&c, "aten::_flash_attention_forward", T(DT_BF16, 1000, 8, 64),
			      T(DT_BF16, 1000, 8, 64), T(DT_BF16, 1000, 8, 64), T(DT_I32, 5),
			      T(DT_I32, 5), SC("400"), SC("400"), SC("0."), SC("True"), SC("False"),
			      NONE, NONE, NONE, NONE, NONE),
			 0);
	assert_int_equal(c.flops, -1);
	assert_int_equal(c.bytes, 4 * 2 * 1000 * 8 * 64 + 1000 * 8 * 4);
	assert_string_equal(c.note,
			    "varlen attention: sequence lengths not recorded, FLOPs unknown");
	/* a 3-D input to an op that has no varlen form */
	assert_int_equal(EVAL(&c, "aten::_scaled_dot_product_flash_attention",
			      T(DT_BF16, 16, 128, 64), T(DT_BF16, 16, 128, 64),
			      T(DT_BF16, 16, 128, 64), SC("0."), SC("False"), SC("False"), NONE),
			 -1);
	assert_string_equal(c.note, "attention query, key and value are not 4-D");
}

/* Each check of eval_attn's steps (attn_operands, attn_heads) and attn_flops' causal pairs */
static void attention_refuses_operands_that_do_not_match(void **state)
{
	static const char *const flash = "aten::_scaled_dot_product_flash_attention";
	struct kp_cost c;

	(void)state;
	assert_int_equal(EVAL(&c, flash, SC("1"), T(DT_BF16, 1, 2, 16, 64),
			      T(DT_BF16, 1, 2, 16, 64), SC("0."), SC("False"), SC("False"), NONE),
			 -1);
	assert_string_equal(c.note, "attention query, key or value is not a tensor");
	assert_int_equal(EVAL(&c, flash, T(DT_BF16, 1, 2, 16, 64), T(DT_BF16, 2, 16, 64),
			      T(DT_BF16, 1, 2, 16, 64), SC("0."), SC("False"), SC("False"), NONE),
			 -1);
	assert_string_equal(c.note, "attention query, key and value are not all 3-D or all 4-D");
	assert_int_equal(EVAL(&c, flash, T(DT_BF16, 1, 1, 2, 16, 64), T(DT_BF16, 1, 1, 2, 16, 64),
			      T(DT_BF16, 1, 1, 2, 16, 64), SC("0."), SC("False"), SC("False"),
			      NONE),
			 -1);
	assert_string_equal(c.note, "attention query, key and value are not all 3-D or all 4-D");
	assert_int_equal(EVAL(&c, flash, T(DT_BF16, 2, 2, 16, 64), T(DT_BF16, 1, 2, 16, 64),
			      T(DT_BF16, 2, 2, 16, 64), SC("0."), SC("False"), SC("False"), NONE),
			 -1);
	assert_string_equal(c.note, "attention query, key and value differ in batch size");
	assert_int_equal(EVAL(&c, flash, T(DT_BF16, 1, 2, 16, 64), T(DT_BF16, 1, 2, 16, 32),
			      T(DT_BF16, 1, 2, 16, 64), SC("0."), SC("False"), SC("False"), NONE),
			 -1);
	assert_string_equal(c.note, "attention query and key differ in head dim");
	assert_int_equal(EVAL(&c, flash, T(DT_BF16, 1, 2, 16, 64), T(DT_BF16, 1, 2, 16, 64),
			      T(DT_BF16, 1, 2, 8, 64), SC("0."), SC("False"), SC("False"), NONE),
			 -1);
	assert_string_equal(c.note, "attention key and value differ in length or heads");
	/* causal 4 x 4: 10 of 16 pairs, 2*(d + d_v) FLOPs each; bytes of q, k, v, o and lse */
	assert_int_equal(EVAL(&c, flash, T(DT_F16, 1, 1, 4, 8), T(DT_F16, 1, 1, 4, 8),
			      T(DT_F16, 1, 1, 4, 8), SC("0."), SC("True"), SC("False"), NONE),
			 0);
	assert_int_equal(c.flops, 2 * (8 + 8) * 10);
	assert_int_equal(c.bytes, 4 * 4 * 8 * 2 + 4 * 4);
	assert_int_equal(c.dtype, DT_F16);
}

static void attention_with_different_value_dim_counts_d_and_d_v(void **state)
{
	struct kp_cost c;

	(void)state;
	/* d = 192, d_v = 128 (MLA-like): fwd 2bh(d + d_v)pairs, bwd 2bh(3d + 2d_v)pairs */
	assert_int_equal(EVAL(&c, "aten::_scaled_dot_product_flash_attention",
			      T(DT_BF16, 1, 2, 256, 192), T(DT_BF16, 1, 2, 256, 192),
			      T(DT_BF16, 1, 2, 256, 128), SC("0."), SC("False"), SC("False"), NONE),
			 0);
	assert_int_equal(c.flops, 2LL * 2 * (192 + 128) * 256 * 256);
	assert_int_equal(c.bytes, 2 * (2 * 256 * 192 * 2 + 2 * 256 * 128 * 2) + 2 * 256 * 4);
	assert_int_equal(EVAL(&c, "aten::_scaled_dot_product_flash_attention_backward",
			      T(DT_BF16, 1, 2, 256, 128), T(DT_BF16, 1, 2, 256, 192),
			      T(DT_BF16, 1, 2, 256, 192), T(DT_BF16, 1, 2, 256, 128),
			      T(DT_BF16, 1, 2, 256, 128), T(DT_F32, 1, 2, 256), NONE, NONE,
			      SC("256"), SC("256"), SC("0."), SC("False"), T(DT_U64, 2), T0(DT_U64),
			      NONE),
			 0);
	assert_int_equal(c.flops, 2LL * 2 * (3 * 192 + 2 * 128) * 256 * 256);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(causal_pairs_count_top_left_and_bottom_right_masks_exactly),
		cmocka_unit_test(sdpa_flash_matches_flop_counter_dense_and_counts_causal_pairs),
		cmocka_unit_test(cudnn_attention_of_block_bf16_counts_unmasked_pairs),
		cmocka_unit_test(gqa_counts_flops_with_query_heads_and_bytes_with_kv_heads),
		cmocka_unit_test(flash_attention_forward_reads_batch_seq_heads_dim),
		cmocka_unit_test(efficient_attention_reads_bmhk_and_custom_mask_type),
		cmocka_unit_test(efficient_attention_backward_reads_mask_type_at_slot_14),
		cmocka_unit_test(sdpa_efficient_reads_attn_bias_and_writes_its_gradient_when_asked),
		cmocka_unit_test(varlen_flash_attention_leaves_flops_unknown_with_a_note),
		cmocka_unit_test(attention_refuses_operands_that_do_not_match),
		cmocka_unit_test(unrecorded_is_causal_takes_the_kernel_hint_else_assumes_dense),
		cmocka_unit_test(attention_with_different_value_dim_counts_d_and_d_v),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
