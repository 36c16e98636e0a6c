/*
 * libops.c — one library call as the PyTorch op the analyzer's models know: a cuBLAS / cuBLASLt
 * GEMM as aten::mm, addmm, bmm or baddbmm (hostops_gemm), a cuDNN convolution as
 * aten::convolution or convolution_backward (hostops_conv), a cuDNN attention graph as
 * aten::_scaled_dot_product_cudnn_attention (hostops_sdpa), another cuDNN graph as cudnn::graph
 * (hostops_cudnn_graph): the op's name and its JSON args text (doc/capture-any.md §1.4-1.6).
 * The GEMM slot layout is documented in kprof-capture(1).  hostops.c writes the events.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "intercept/hcall.h"
#include "intercept/hostops.h"
#include "kprof/jsonw.h"

/* ---- GEMM calls -> ops ---- */

const char *hostops_type_name(int32_t t)
{
	switch (t) {
	case 0:
		return "float"; /* CUDA_R_32F */
	case 1:
		return "double"; /* CUDA_R_64F */
	case 2:
		return "c10::Half"; /* CUDA_R_16F */
	case 3:
		return "signed char"; /* CUDA_R_8I */
	case 8:
		return "unsigned char"; /* CUDA_R_8U */
	case 10:
		return "int"; /* CUDA_R_32I */
	case 14:
		return "c10::BFloat16"; /* CUDA_R_16BF */
	case 4:
		return "c10::complex<float>"; /* CUDA_C_32F */
	case 5:
		return "c10::complex<double>"; /* CUDA_C_64F */
	case 6:
		return "c10::complex<c10::Half>";
	case 28:
		return "c10::Float8_e4m3fn"; /* CUDA_R_8F_E4M3 */
	case 29:
		return "c10::Float8_e5m2"; /* CUDA_R_8F_E5M2 */
	default:
		return "";
	}
}

/* "kprof compute" of a cublasComputeType_t that says more than the input dtype, or NULL */
static const char *compute_hint(int32_t cp)
{
	switch (cp) {
	case 74:
		return "fp16"; /* CUBLAS_COMPUTE_32F_FAST_16F */
	case 75:
		return "bf16"; /* CUBLAS_COMPUTE_32F_FAST_16BF */
	case 77:
		return "tf32"; /* CUBLAS_COMPUTE_32F_FAST_TF32 */
	default:
		return NULL;
	}
}

static void put_dims(FILE *f, int batched, int64_t b, int64_t x, int64_t y)
{
	if (batched)
		fprintf(f, "[%" PRId64 ",%" PRId64 ",%" PRId64 "]", b, x, y);
	else
		fprintf(f, "[%" PRId64 ",%" PRId64 "]", x, y);
}

static const char trans_ch[] = "NTC";

/* "Input Dims": [bias or C,] mat1, mat2[, alpha, beta], out; @add: addmm/baddbmm */
static void gemm_dims(FILE *f, int add, int bias, int batched, int64_t B, int64_t M, int64_t N,
		      int64_t K)
{
	fputs("\"Input Dims\":[", f);
	if (add) {
		if (bias)
			fprintf(f, "[%" PRId64 "]", N);
		else
			put_dims(f, batched, B, M, N);
		putc(',', f);
	}
	put_dims(f, batched, B, M, K);
	putc(',', f);
	put_dims(f, batched, B, K, N);
	if (add)
		fputs(",[],[]", f);
	putc(',', f);
	put_dims(f, batched, B, M, N);
}

/* "Input type" and "Concrete Inputs": mat1 is cuBLAS's B, mat2 its A */
static void gemm_types(FILE *f, const struct kp_hcall *c, int add, int bias, int zero)
{
	const char *t1 = hostops_type_name(c->btype), *t2 = hostops_type_name(c->atype);
	const char *to = hostops_type_name(c->dtype);
	fputs("],\"Input type\":[", f);
	if (add) {
		jw_put_string(f,
			      bias ? hostops_type_name(c->bias_type) : hostops_type_name(c->ctype));
		putc(',', f);
	}
	jw_put_string(f, t1);
	putc(',', f);
	jw_put_string(f, t2);
	if (add)
		fputs(",\"Scalar\",\"Scalar\"", f);
	putc(',', f);
	jw_put_string(f, to);
	fputs("],\"Concrete Inputs\":[", f);
	/* beta is 1 for a bias epilogue; unknown (device pointer) or non-zero otherwise */
	if (add)
		fprintf(f, "\"\",\"\",\"\",\"%s\",\"\",\"\"", bias && zero ? "1" : "");
	else
		fputs("\"\",\"\",\"\"", f);
}

/* The call's name and cuBLAS's own view of it (column-major m, n, k, transposes, compute) */
static void gemm_call(FILE *f, const struct kp_hcall *c)
{
	fputs("],\"kprof library call\":", f);
	jw_put_string(f, c->name ? c->name : "");
	fprintf(f,
		",\"kprof gemm\":\"m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " batch=%" PRId64
		" transa=%c transb=%c compute=%d epilogue=%u status=%d\"",
		c->m, c->n, c->k, c->batch,
		c->transa >= 0 && c->transa < 3 ? trans_ch[c->transa] : '?',
		c->transb >= 0 && c->transb < 3 ? trans_ch[c->transb] : '?', (int)c->compute,
		c->epilogue, (int)c->status);
	const char *hint = compute_hint(c->compute);
	if (hint)
		fprintf(f, ",\"kprof compute\":\"%s\"", hint);
}

int hostops_gemm(const struct kp_hcall *c, const char **name, char **args)
{
	*name = NULL;
	*args = NULL;
	if (c->m <= 0 || c->n <= 0 || c->k <= 0 || c->batch <= 0)
		return -1;
	/* row-major torch view: C[M,N] = mat1[M,K] mat2[K,N] with mat1 = cuBLAS's B */
	int64_t M = c->n, N = c->m, K = c->k, B = c->batch;
	int batched = B > 1;
	int bias = (c->flags & HCF_BIAS) != 0;
	int zero = (c->flags & HCF_BETA_ZERO) != 0;
	int add = bias || !zero;
	*name = add ? (batched ? "aten::baddbmm" : "aten::addmm")
		    : (batched ? "aten::bmm" : "aten::mm");
	size_t len = 0;
	FILE *f = open_memstream(args, &len);
	if (!f)
		return -1;
	gemm_dims(f, add, bias, batched, B, M, N, K);
	gemm_types(f, c, add, bias, zero);
	gemm_call(f, c);
	fclose(f);
	return *args ? 0 : -1;
}

/* ---- cuDNN convolutions -> aten::convolution / convolution_backward ---- */

const char *hostops_cudnn_type_name(int32_t t)
{
	switch (t) {
	case 0:
		return "float"; /* CUDNN_DATA_FLOAT */
	case 1:
		return "double"; /* CUDNN_DATA_DOUBLE */
	case 2:
		return "c10::Half"; /* CUDNN_DATA_HALF */
	case 3:
		return "signed char"; /* CUDNN_DATA_INT8 */
	case 4:
		return "int"; /* CUDNN_DATA_INT32 */
	case 6:
		return "unsigned char"; /* CUDNN_DATA_UINT8 */
	case 9:
		return "c10::BFloat16"; /* CUDNN_DATA_BFLOAT16 */
	case 10:
		return "long int"; /* CUDNN_DATA_INT64 */
	case 11:
		return "bool"; /* CUDNN_DATA_BOOLEAN */
	case 12:
		return "c10::Float8_e4m3fn"; /* CUDNN_DATA_FP8_E4M3 */
	case 13:
		return "c10::Float8_e5m2"; /* CUDNN_DATA_FP8_E5M2 */
	default:
		return "";
	}
}

static void put_idims(FILE *f, const int32_t *d, int n)
{
	putc('[', f);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%d", i ? "," : "", (int)d[i]);
	putc(']', f);
}

static void put_list(FILE *f, const int16_t *v, int n)
{
	fputs("\"[", f);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%d", i ? ", " : "", (int)v[i]);
	fputs("]\"", f);
}

int hostops_conv(const struct kp_hcall *c, const char **name, char **args)
{
	*name = NULL;
	*args = NULL;
	int nd = c->conv_nd, n = nd + 2;
	if (nd < 1 || nd > 3 || c->groups < 1)
		return -1;
	int bwd = c->conv_op != CONV_FWD;
	*name = bwd ? "aten::convolution_backward" : "aten::convolution";
	const char *tx = hostops_cudnn_type_name(c->atype), *tw = hostops_cudnn_type_name(c->btype);
	const char *ty = hostops_cudnn_type_name(c->dtype);
	size_t len = 0;
	FILE *f = open_memstream(args, &len);
	if (!f)
		return -1;
	/* forward (input, weight, bias, stride, padding, dilation, transposed, output_padding,
	 * groups); backward (grad_output, input, weight, bias_sizes, ..., groups, output_mask) */
	fputs("\"Input Dims\":[", f);
	if (bwd) {
		put_idims(f, c->yd, n);
		putc(',', f);
	}
	put_idims(f, c->xd, n);
	putc(',', f);
	put_idims(f, c->wd, n);
	fputs(bwd ? ",[],[],[],[],[],[],[],[]]" : ",[],[],[],[],[],[],[]]", f);
	fputs(",\"Input type\":[", f);
	if (bwd) {
		jw_put_string(f, ty);
		putc(',', f);
	}
	jw_put_string(f, tx);
	putc(',', f);
	jw_put_string(f, tw);
	fputs(",\"\",\"ScalarList\",\"ScalarList\",\"ScalarList\",\"Scalar\",\"ScalarList\",\"Scalar\"",
	      f);
	if (bwd)
		fputs(",\"BoolList\"", f);
	fputs("],\"Concrete Inputs\":[", f);
	fputs(bwd ? "\"\",\"\",\"\",\"\"," : "\"\",\"\",\"\",", f);
	put_list(f, c->cstride, nd);
	putc(',', f);
	put_list(f, c->cpad, nd);
	putc(',', f);
	put_list(f, c->cdil, nd);
	fputs(",\"False\",", f);
	int16_t zero[3] = { 0, 0, 0 };
	put_list(f, zero, nd);
	fprintf(f, ",\"%d\"", (int)c->groups);
	if (bwd)
		fputs(c->conv_op == CONV_BWD_DATA ? ",\"[True, False, False]\""
						  : ",\"[False, True, False]\"",
		      f);
	fputs("],\"kprof library call\":", f);
	jw_put_string(f, c->name ? c->name : "");
	fprintf(f, ",\"kprof conv\":\"groups=%d compute=%d status=%d\"", (int)c->groups,
		(int)c->compute, (int)c->status);
	fclose(f);
	return *args ? 0 : -1;
}

/* ---- cuDNN graphs -> attention ops ---- */

static void put_dims4(FILE *f, int64_t a, int64_t b, int64_t c, int64_t d)
{
	fprintf(f, "[%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "]", a, b, c, d);
}

/*
 * "Input Dims": forward (query, key, value, attn_bias, compute_log_sumexp, dropout_p,
 * is_causal, return_debug_mask, scale); backward (grad_out, query, key, value, out, logsumexp,
 * philox_seed, philox_offset, attn_bias, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p,
 * is_causal, scale)
 */
static void sdpa_dims(FILE *f, const int64_t *v, int bwd, int bias)
{
	fputs("\"Input Dims\":[", f);
	if (bwd) {
		put_dims4(f, v[SD_B], v[SD_H], v[SD_SQ], v[SD_DV]);
		putc(',', f);
	}
	put_dims4(f, v[SD_B], v[SD_H], v[SD_SQ], v[SD_D]);
	putc(',', f);
	put_dims4(f, v[SD_B], v[SD_HKV], v[SD_SK], v[SD_D]);
	putc(',', f);
	put_dims4(f, v[SD_B], v[SD_HKV], v[SD_SK], v[SD_DV]);
	if (bwd) {
		putc(',', f);
		put_dims4(f, v[SD_B], v[SD_H], v[SD_SQ], v[SD_DV]);
		putc(',', f);
		put_dims4(f, v[SD_B], v[SD_H], v[SD_SQ], 1);
		fputs(",[],[],", f);
	} else {
		putc(',', f);
	}
	if (bias)
		put_dims4(f, v[SD_B], v[SD_H], v[SD_SQ], v[SD_SK]);
	else
		fputs("[]", f);
	fputs(bwd ? ",[],[],[],[],[],[],[]]" : ",[],[],[],[],[]]", f);
}

/* "Input type": the tensors' element type @t (fp32 logsumexp), scalars */
static void sdpa_types(FILE *f, const char *t, int bwd, int bias)
{
	fputs(",\"Input type\":[", f);
	int ntensor = bwd ? 5 : 3;
	for (int i = 0; i < ntensor; i++) {
		jw_put_string(f, t);
		putc(',', f);
	}
	if (bwd)
		fputs("\"float\",\"\",\"\",", f);
	jw_put_string(f, bias ? t : "");
	fputs(bwd ? ",\"\",\"\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\",\"\"]"
		  : ",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\",\"\"]",
	      f);
}

/* "Concrete Inputs": max_q and max_k (backward) or compute_log_sumexp, dropout 0, is_causal */
static void sdpa_concrete(FILE *f, const struct kp_hcall *c, int bwd, const char *causal)
{
	const int64_t *v = c->sd;
	fputs(",\"Concrete Inputs\":[", f);
	if (bwd)
		fprintf(f,
			"\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"%" PRId64
			"\",\"%" PRId64 "\",\"0.\",\"%s\",\"\"]",
			v[SD_SQ], v[SD_SK], causal);
	else
		fprintf(f, "\"\",\"\",\"\",\"\",\"%s\",\"0.\",\"%s\",\"False\",\"\"]",
			c->sdpa_flags & SDPA_F_STATS ? "True" : "False", causal);
}

int hostops_sdpa(const struct kp_hcall *c, const char **name, char **args)
{
	*name = NULL;
	*args = NULL;
	const int64_t *v = c->sd;
	for (int i = 0; i < 7; i++)
		if (v[i] < 1)
			return -1;
	int bwd = (c->sdpa_flags & SDPA_F_BWD) != 0, bias = (c->sdpa_flags & SDPA_F_BIAS) != 0;
	const char *causal = c->sdpa_flags & SDPA_F_CAUSAL ? "True" : "False";
	const char *t = hostops_cudnn_type_name(c->atype);
	*name = bwd ? "aten::_scaled_dot_product_cudnn_attention_backward"
		    : "aten::_scaled_dot_product_cudnn_attention";
	size_t len = 0;
	FILE *f = open_memstream(args, &len);
	if (!f)
		return -1;
	sdpa_dims(f, v, bwd, bias);
	sdpa_types(f, t, bwd, bias);
	sdpa_concrete(f, c, bwd, causal);
	fputs(",\"kprof library call\":", f);
	jw_put_string(f, c->name ? c->name : "");
	fprintf(f,
		",\"kprof sdpa\":\"b=%" PRId64 " h=%" PRId64 " hkv=%" PRId64 " sq=%" PRId64
		" sk=%" PRId64 " d=%" PRId64 " dv=%" PRId64 " causal=%d bwd=%d status=%d\"",
		v[SD_B], v[SD_H], v[SD_HKV], v[SD_SQ], v[SD_SK], v[SD_D], v[SD_DV],
		(c->sdpa_flags & SDPA_F_CAUSAL) != 0, bwd, (int)c->status);
	fclose(f);
	return *args ? 0 : -1;
}

int hostops_cudnn_graph(const struct kp_hcall *c, const char **name, char **args)
{
	*name = "cudnn::graph";
	*args = NULL;
	size_t len = 0;
	FILE *f = open_memstream(args, &len);
	if (!f)
		return -1;
	fputs("\"kprof library call\":", f);
	jw_put_string(f, c->name ? c->name : "");
	static const char *const why[] = { "",       "not-recognized", "no-softmax", "scores",
					   "shapes", "mask",           "varlen" };
	int w = c->sd[5] >= 0 && c->sd[5] < (int64_t)(sizeof(why) / sizeof(why[0])) ? (int)c->sd[5]
										    : 0;
	fprintf(f,
		",\"kprof cudnn graph\":\"matmul=%" PRId64 " pointwise=%" PRId64
		" reduction=%" PRId64 " convolution=%" PRId64 " other=%" PRId64
		" why=%s status=%d\"",
		c->sd[0], c->sd[1], c->sd[2], c->sd[3], c->sd[4], why[w], (int)c->status);
	fclose(f);
	return *args ? 0 : -1;
}
