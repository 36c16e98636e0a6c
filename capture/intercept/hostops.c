/*
 * hostops.c — library calls and NVTX ranges -> cpu_op / user_annotation events
 * (doc/capture-any.md §1.4-1.6, §2.4).  The GEMM slot layout is documented in kprof-capture(1).
 */
#include "intercept/hostops.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "intercept/hcall.h"
#include "kprof/hmap.h"
#include "kprof/jsonw.h"
#include "kprof/opmodel.h"
#include "record/ctrace.h"

/* ---- emit_nvtx messages (pytorch torch/csrc/profiler/util.cpp getNvtxStr) ---- */

static const char *skip_sp(const char *p)
{
	while (*p == ' ')
		p++;
	return p;
}

static int parse_i64(const char **pp, int64_t *v)
{
	const char *p = skip_sp(*pp);
	char *end;
	if (!(*p == '-' || isdigit((unsigned char)*p)))
		return -1;
	errno = 0;
	long long x = strtoll(p, &end, 10);
	if (errno || end == p)
		return -1;
	*v = x;
	*pp = end;
	return 0;
}

/* ", " or "," with spaces around; 1 when one was there */
static int comma(const char **pp)
{
	const char *p = skip_sp(*pp);
	if (*p != ',')
		return 0;
	*pp = skip_sp(p + 1);
	return 1;
}

static int expect(const char **pp, char c)
{
	const char *p = skip_sp(*pp);
	if (*p != c)
		return -1;
	*pp = p + 1;
	return 0;
}

static int fail(char *why, size_t whylen, const char *msg)
{
	snprintf(why, whylen, "%s", msg);
	return -1;
}

static int parse_sizes(const char **pp, struct kp_nvtx_msg *m, char *why, size_t whylen)
{
	if (expect(pp, '['))
		return fail(why, whylen, "sizes: expected '['");
	m->nslots = 0;
	if (!expect(pp, ']'))
		return 0;
	for (;;) {
		if (m->nslots == NVTX_MAX_SLOTS)
			return fail(why, whylen, "sizes: more than 64 inputs");
		if (expect(pp, '['))
			return fail(why, whylen, "sizes: expected '[' before an input's dims");
		int nd = 0;
		if (expect(pp, ']')) {
			for (;;) {
				int64_t v;
				if (nd == NVTX_MAX_DIMS)
					return fail(why, whylen, "sizes: more than 8 dims");
				if (parse_i64(pp, &v) || v < 0)
					return fail(why, whylen, "sizes: bad dimension");
				m->slot[m->nslots].d[nd++] = v;
				if (!expect(pp, ']'))
					break;
				if (!comma(pp))
					return fail(why, whylen,
						    "sizes: expected ',' or ']' after a dimension");
			}
		}
		m->slot[m->nslots++].nd = nd;
		if (!expect(pp, ']'))
			return 0;
		if (!comma(pp))
			return fail(why, whylen, "sizes: expected ',' or ']' after an input");
	}
}

static int parse_ids(const char **pp, struct kp_nvtx_msg *m, char *why, size_t whylen)
{
	if (expect(pp, '['))
		return fail(why, whylen, "input_op_ids: expected '['");
	m->ninput_ids = 0;
	if (!expect(pp, ']'))
		return 0;
	for (;;) {
		int64_t a, b;
		if (expect(pp, '(') || parse_i64(pp, &a) || !comma(pp) || parse_i64(pp, &b) ||
		    expect(pp, ')'))
			return fail(why, whylen, "input_op_ids: expected '(op,output)'");
		if (m->ninput_ids == NVTX_MAX_SLOTS)
			return fail(why, whylen, "input_op_ids: more than 64 inputs");
		m->input_op[m->ninput_ids++] = a > 0 ? a : 0;
		if (!expect(pp, ']'))
			return 0;
		if (!comma(pp))
			return fail(why, whylen, "input_op_ids: expected ',' or ']'");
	}
}

int nvtxmsg_parse(const char *msg, struct kp_nvtx_msg *m, char *why, size_t whylen)
{
	memset(m, 0, sizeof(*m));
	m->seq = m->op_id = -1;
	if (!msg)
		return 1;
	/*
	 * The name ends where the first of torch's fields begins: a record_function label may
	 * itself hold ", " (Dynamo's "entire_frame_compile_data: fn_name=..., compile_id=0/0").
	 */
	static const char *const anchors[] = { ", seq = ", ", op_id = ", ", sizes = " };
	const char *p = NULL;
	for (size_t i = 0; i < sizeof(anchors) / sizeof(anchors[0]); i++) {
		const char *a = strstr(msg, anchors[i]);
		if (a && (!p || a < p))
			p = a;
	}
	if (!p)
		return 1;
	size_t len = (size_t)(p - msg);
	if (len == 0)
		return fail(why, whylen, "empty op name");
	if (len >= sizeof(m->name))
		return fail(why, whylen, "op name longer than 255 bytes");
	memcpy(m->name, msg, len);
	m->name[len] = '\0';
	/* op and kernel names are identifiers; a name with a space is a record_function label */
	m->label = memchr(msg, ' ', len) != NULL;
	while (*p) {
		if (p[0] != ',' || p[1] != ' ')
			return fail(why, whylen, "expected ', ' between fields");
		p += 2;
		const char *eq = strstr(p, " = ");
		if (!eq)
			return fail(why, whylen, "field without ' = '");
		size_t kl = (size_t)(eq - p);
		const char *v = eq + 3;
		if (kl == 3 && !strncmp(p, "seq", 3)) {
			if (parse_i64(&v, &m->seq))
				return fail(why, whylen, "seq: expected an integer");
		} else if (kl == 5 && !strncmp(p, "op_id", 5)) {
			if (parse_i64(&v, &m->op_id))
				return fail(why, whylen, "op_id: expected an integer");
		} else if (kl == 5 && !strncmp(p, "sizes", 5)) {
			if (parse_sizes(&v, m, why, whylen))
				return -1;
			m->has_sizes = 1;
		} else if (kl == 12 && !strncmp(p, "input_op_ids", 12)) {
			if (parse_ids(&v, m, why, whylen))
				return -1;
		} else {
			return fail(why, whylen, "unknown field");
		}
		p = v;
	}
	return 0;
}

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

/* ---- emitting ---- */

static int cmp_idx_tid_start(const void *a, const void *b, void *arg)
{
	const struct kp_hcall *v = arg;
	const struct kp_hcall *x = &v[*(const size_t *)a], *y = &v[*(const size_t *)b];
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static int cmp_idx_start(const void *a, const void *b, void *arg)
{
	const struct kp_hcall *v = arg;
	const struct kp_hcall *x = &v[*(const size_t *)a], *y = &v[*(const size_t *)b];
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

struct launch {
	uint32_t tid;
	uint64_t t;
	uint32_t corr;
};

static int cmp_launch(const void *a, const void *b)
{
	const struct launch *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->t < y->t ? -1 : x->t > y->t;
}

struct kern {
	uint32_t corr;
	const char *name;
};

static int cmp_kern(const void *a, const void *b)
{
	const struct kern *x = a, *y = b;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

/* PyTorch's type name from a kernel's template arguments, or NULL */
static const char *kernel_dtype(const char *k)
{
	if (strstr(k, "BFloat16") || strstr(k, "bfloat16") || strstr(k, "bf16"))
		return "c10::BFloat16";
	if (strstr(k, "c10::Half") || strstr(k, "__half"))
		return "c10::Half";
	if (strstr(k, "double"))
		return "double";
	if (strstr(k, "float"))
		return "float";
	return NULL;
}

/* A forward op with a seq: where its fwdbwd flow starts, the number of its thread. */
struct fwdop {
	uint64_t start_ns;
	uint32_t pid, tid;
	int64_t thread_no;
	int flowed; /* its first autograd node has its flow */
};

struct ctx {
	struct kp_ctrace *t;
	struct kp_hmap ops; /* op_key(pid, op_id) -> dtype name of the op's output (val.ptr) */
	struct kp_hmap fwd; /* op_key(pid, seq) -> 1 + index in @fw of its latest forward op */
	struct fwdop *fw;
	size_t nfw;
	struct kp_hmap threads; /* pid << 32 | tid -> the number of a forward thread */
	int64_t nthreads;
	size_t *gemm;       /* indices of GEMM calls by (tid, start) */
	size_t ngemm;
	size_t *sdpa; /* indices of cuDNN attention graphs by (tid, start) */
	size_t nsdpa;
	size_t *conv; /* indices of cuDNN convolutions by (tid, start) */
	size_t nconv;
	struct launch *l;
	size_t nl;
	struct kern *k;
	size_t nk;
};

/* The first of @idx[@n] (calls by (tid, start)) at or after range @r's start on its thread. */
static size_t first_call_in(const struct kp_hcall *v, const size_t *idx, size_t n,
			    const struct kp_hcall *r)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct kp_hcall *g = &v[idx[mid]];
		if (g->tid < r->tid || (g->tid == r->tid && g->start_ns < r->start_ns))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first cuDNN attention graph executed inside NVTX range @r on its thread, or NULL. */
static const struct kp_hcall *enclosed_sdpa(const struct ctx *x, const struct kp_hcall *r)
{
	const struct kp_hcall *v = x->t->hcalls;
	size_t lo = first_call_in(v, x->sdpa, x->nsdpa, r);
	if (lo < x->nsdpa) {
		const struct kp_hcall *g = &v[x->sdpa[lo]];
		if (g->tid == r->tid && g->start_ns <= r->end_ns)
			return g;
	}
	return NULL;
}

/* "True" or "False": the is_causal of the attention graph inside @r, NULL when none */
static const char *enclosed_causal(const struct ctx *x, const struct kp_hcall *r)
{
	const struct kp_hcall *g = enclosed_sdpa(x, r);
	return g ? g->sdpa_flags & SDPA_F_CAUSAL ? "True" : "False" : NULL;
}

/*
 * emit_nvtx records sizes, never scalars: an aten convolution op's stride, padding, dilation,
 * transposed, output_padding, groups (and the backward's output_mask) are "[]" in its message,
 * so no model applied ("convolution 'transposed' is not True or False").  The cuDNN
 * convolutions executed inside the range on its thread (HC_CONV: a legacy call or a graph of
 * one conv op, capture/intercept/cudnnrec.c) say them.  A call belongs to the op when its tensors are the
 * op's (the weight always; torch's input and output as below), so a range that encloses other
 * convolutions takes only its own:
 *   convolution (x, w):  CONV_FWD (x, w, y) is a convolution; CONV_BWD_DATA with dy = x is a
 *     transposed one (cuDNN's dgrad computes its output, dx).
 *   convolution_backward (dy, x, w):  not transposed, CONV_BWD_DATA (dx = x, dy) is the grad
 *     input and CONV_BWD_FILTER (x, dy) the grad weight; transposed, CONV_FWD (x = dy, y = x)
 *     is the grad input and CONV_BWD_FILTER (x = dy, dy = x) the grad weight.
 * A grad weight alone with dy and x of one shape fits both; it counts as not transposed, which
 * gives the same FLOPs (the spatial sizes multiplied are equal).  output_mask[2] (the bias
 * gradient, a reduction cuDNN does not run) is False: the op's bytes leave it out, as those of
 * the library ops a capture without NVTX writes (hostops_conv).
 */
struct conv_slots {
	const char *name;
	int bwd;
	int stride, pad, dil, transposed, opad, groups, mask; /* Concrete Inputs slots */
};

/* clang-format off */
static const struct conv_slots conv_ops[] = {
	/* (input, weight, bias, stride, padding, dilation, transposed, output_padding, groups) */
	{ "aten::convolution",          0, 3, 4, 5, 6, 7, 8, -1 },
	{ "aten::_convolution",         0, 3, 4, 5, 6, 7, 8, -1 },
	/* (grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
	 *  output_padding, groups, output_mask) */
	{ "aten::convolution_backward", 1, 4, 5, 6, 7, 8, 9, 10 },
};
/* clang-format on */

/* The Concrete Inputs texts an emit_nvtx conv op takes from its cuDNN calls (conv_fill). */
struct conv_args {
	const char *conc[NVTX_MAX_SLOTS]; /* NULL: "" */
	char buf[7][64];
	const char *from; /* the call's function name */
};

/* cuDNN's dims @cd (int32, @nd of them) are slot @i's */
static int same_dims(const int32_t *cd, int nd, const struct kp_nvtx_msg *m, int i)
{
	if (i >= m->nslots || m->slot[i].nd != nd)
		return 0;
	for (int k = 0; k < nd; k++)
		if (m->slot[i].d[k] != cd[k])
			return 0;
	return 1;
}

enum { CF_PLAIN = 1, CF_TRANSPOSED = 2 };

/*
 * What call @c says of conv op @m (@cs): the forms it allows (CF_*, 0 when it is not the op's)
 * and, for a backward, the gradient it computes in *@grad (0 input, 1 weight).
 */
static int conv_call_fits(const struct kp_hcall *c, const struct kp_nvtx_msg *m,
			  const struct conv_slots *cs, int *grad)
{
	int nd = c->conv_nd + 2;
	if (c->conv_nd < 1 || c->conv_nd > 3 || c->groups < 1)
		return 0;
	if (!cs->bwd) {
		if (!same_dims(c->wd, nd, m, 1))
			return 0;
		if (c->conv_op == CONV_FWD && same_dims(c->xd, nd, m, 0))
			return CF_PLAIN;
		if (c->conv_op == CONV_BWD_DATA && same_dims(c->yd, nd, m, 0))
			return CF_TRANSPOSED;
		return 0;
	}
	if (!same_dims(c->wd, nd, m, 2))
		return 0;
	int plain = same_dims(c->xd, nd, m, 1) && same_dims(c->yd, nd, m, 0);
	int tr = same_dims(c->xd, nd, m, 0) && same_dims(c->yd, nd, m, 1);
	*grad = c->conv_op == CONV_BWD_FILTER;
	switch (c->conv_op) {
	case CONV_BWD_DATA:
		return plain ? CF_PLAIN : 0;
	case CONV_FWD:
		return tr ? CF_TRANSPOSED : 0;
	default:
		return (plain ? CF_PLAIN : 0) | (tr ? CF_TRANSPOSED : 0);
	}
}

static void put_ilist(char *buf, size_t len, const int64_t *v, int n)
{
	size_t o = (size_t)snprintf(buf, len, "[");
	for (int i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%" PRId64, i ? ", " : "", v[i]);
	if (o < len)
		snprintf(buf + o, len - o, "]");
}

/*
 * output_padding of a transposed conv: out - ((in - 1) s - 2p + d(k - 1) + 1) per spatial dim,
 * torch's input @in and output @out; 0 when it is not in [0, max(s, d)) (not what torch took).
 */
static int conv_opad(const struct kp_hcall *c, const int64_t *in, const int32_t *out,
		     int64_t *op)
{
	for (int i = 0; i < c->conv_nd; i++) {
		int64_t s = c->cstride[i], d = c->cdil[i];
		op[i] = out[2 + i] - ((in[2 + i] - 1) * s - 2 * (int64_t)c->cpad[i] +
				      d * (c->wd[2 + i] - 1) + 1);
		if (op[i] < 0 || (op[i] >= s && op[i] >= d))
			return 0;
	}
	return 1;
}

/* The texts of @cs's scalar slots from call @c in form @tr (1 transposed), grads @mask. */
static void conv_texts(struct conv_args *a, const struct conv_slots *cs,
		       const struct kp_nvtx_msg *m, const struct kp_hcall *c, int tr,
		       const int *mask)
{
	int nd = c->conv_nd;
	int64_t v[3][3], op[3] = { 0, 0, 0 };
	for (int i = 0; i < nd; i++)
		v[0][i] = c->cstride[i], v[1][i] = c->cpad[i], v[2][i] = c->cdil[i];
	const int slots[3] = { cs->stride, cs->pad, cs->dil };
	for (int k = 0; k < 3; k++) {
		put_ilist(a->buf[k], sizeof(a->buf[k]), v[k], nd);
		a->conc[slots[k]] = a->buf[k];
	}
	a->conc[cs->transposed] = tr ? "True" : "False";
	/* torch's input and output: (x, cuDNN's dx) forward, (x, dy) backward */
	if (!tr || conv_opad(c, m->slot[cs->bwd ? 1 : 0].d, c->xd, op)) {
		put_ilist(a->buf[3], sizeof(a->buf[3]), op, nd);
		a->conc[cs->opad] = a->buf[3];
	}
	snprintf(a->buf[4], sizeof(a->buf[4]), "%d", (int)c->groups);
	a->conc[cs->groups] = a->buf[4];
	if (cs->mask >= 0) {
		snprintf(a->buf[5], sizeof(a->buf[5]), "[%s, %s, False]",
			 mask[0] ? "True" : "False", mask[1] ? "True" : "False");
		a->conc[cs->mask] = a->buf[5];
	}
	a->from = c->name ? c->name : "cudnn";
}

/*
 * Fill @a for emit_nvtx op @m (range @r) from the cuDNN convolutions inside it; 1 when it
 * did, 0 when @m is no conv op kprof fills or none of its calls is there.
 */
static int conv_fill(const struct ctx *x, const struct kp_hcall *r, const struct kp_nvtx_msg *m,
		     struct conv_args *a)
{
	const struct conv_slots *cs = NULL;
	for (size_t i = 0; i < sizeof(conv_ops) / sizeof(conv_ops[0]); i++)
		if (!strcmp(m->name, conv_ops[i].name))
			cs = &conv_ops[i];
	if (!cs || !m->has_sizes || m->nslots <= (cs->mask >= 0 ? cs->mask : cs->groups))
		return 0;
	const struct kp_hcall *v = x->t->hcalls, *first = NULL;
	int forms = CF_PLAIN | CF_TRANSPOSED, mask[2] = { 0, 0 };
	for (size_t i = first_call_in(v, x->conv, x->nconv, r); i < x->nconv; i++) {
		const struct kp_hcall *c = &v[x->conv[i]];
		if (c->tid != r->tid || c->start_ns > r->end_ns)
			break;
		int grad = 0, f = conv_call_fits(c, m, cs, &grad);
		if (!(f & forms))
			continue;
		forms &= f;
		mask[grad] = 1;
		if (!first)
			first = c;
	}
	if (!first)
		return 0;
	/* both forms only when dy and x have one shape: the same FLOPs (see above) */
	conv_texts(a, cs, m, first, forms == CF_TRANSPOSED, mask);
	return 1;
}

static const char *infer_dtype(const struct ctx *x, const struct kp_hcall *r)
{
	const struct kp_hcall *v = x->t->hcalls;
	size_t lo = 0, hi = x->ngemm;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct kp_hcall *g = &v[x->gemm[mid]];
		if (g->tid < r->tid || (g->tid == r->tid && g->start_ns < r->start_ns))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < x->ngemm) {
		const struct kp_hcall *g = &v[x->gemm[lo]];
		if (g->tid == r->tid && g->start_ns <= r->end_ns && g->m > 0) {
			const char *s = hostops_type_name(g->btype);
			if (*s)
				return s;
		}
	}
	const struct kp_hcall *a = enclosed_sdpa(x, r);
	if (a && *hostops_cudnn_type_name(a->atype))
		return hostops_cudnn_type_name(a->atype);
	/*
	 * a cuDNN convolution inside: its input's type (the first conv of a program, whose input
	 * no op in the trace made, and whose kernel names say no type: "..._f32f32_f32f32_...")
	 */
	lo = first_call_in(v, x->conv, x->nconv, r);
	if (lo < x->nconv) {
		const struct kp_hcall *c = &v[x->conv[lo]];
		if (c->tid == r->tid && c->start_ns <= r->end_ns &&
		    *hostops_cudnn_type_name(c->atype))
			return hostops_cudnn_type_name(c->atype);
	}
	lo = 0, hi = x->nl;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (x->l[mid].tid < r->tid ||
		    (x->l[mid].tid == r->tid && x->l[mid].t < r->start_ns))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, n = 0; i < x->nl && n < 64; i++, n++) {
		if (x->l[i].tid != r->tid || x->l[i].t > r->end_ns)
			break;
		struct kern key = { x->l[i].corr, NULL };
		struct kern *k = bsearch(&key, x->k, x->nk, sizeof(*x->k), cmp_kern);
		const char *s = k ? kernel_dtype(k->name) : NULL;
		if (s)
			return s;
	}
	return "";
}

static int64_t op_key(uint32_t pid, int64_t op_id)
{
	return (int64_t)((uint64_t)pid << 40 ^ (uint64_t)op_id);
}

static const char *producer_dtype(const struct ctx *x, uint32_t pid, int64_t op_id)
{
	if (op_id <= 0)
		return "";
	struct kp_hmap_entry *e = hmap_get_int(&x->ops, op_key(pid, op_id));
	return e ? e->val.ptr : "";
}

/* Each input slot's dtype (@dts), the op's own dtype returned; remembered for consumers. */
static const char *op_dtypes(struct ctx *x, const struct kp_hcall *r, const struct kp_nvtx_msg *m,
			     const char **dts)
{
	const char *own = infer_dtype(x, r);
	for (int i = 0; i < m->ninput_ids && !*own; i++)
		own = producer_dtype(x, r->pid, m->input_op[i]);
	for (int i = 0; i < m->nslots; i++) {
		const char *p = i < m->ninput_ids ? producer_dtype(x, r->pid, m->input_op[i]) : "";
		dts[i] = *p ? p : own;
	}
	if (*own && m->op_id > 0) {
		int created;
		struct kp_hmap_entry *e = hmap_put_int(&x->ops, op_key(r->pid, m->op_id), &created);
		if (created)
			e->val.ptr = (void *)
				own; /* static or interned; never freed through the map */
	}
	return own;
}

/*
 * The args of range @m: @conc[i] is slot i's Concrete Input (a value the op's library calls
 * say; NULL: ""), @from_key ("kprof is_causal from") names where they came from, @from_val.
 */
static char *nvtx_args(const struct kp_nvtx_msg *m, const char *const *dts, const char *domain,
		       const char *const *conc, const char *from_key, const char *from_val)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	if (m && m->has_sizes) {
		fputs("\"Input Dims\":[", f);
		for (int i = 0; i < m->nslots; i++) {
			fputs(i ? ",[" : "[", f);
			for (int j = 0; j < m->slot[i].nd; j++)
				fprintf(f, "%s%" PRId64, j ? "," : "", m->slot[i].d[j]);
			putc(']', f);
		}
		fputs("],\"Input type\":[", f);
		for (int i = 0; i < m->nslots; i++) {
			fputs(i ? "," : "", f);
			jw_put_string(f, m->slot[i].nd > 0 ? dts[i] : "");
		}
		fputs("],\"Concrete Inputs\":[", f);
		for (int i = 0; i < m->nslots; i++) {
			fputs(i ? "," : "", f);
			jw_put_string(f, conc[i] ? conc[i] : "");
		}
		fputs("],", f);
		if (from_key) {
			jw_put_string(f, from_key);
			putc(':', f);
			jw_put_string(f, from_val);
			putc(',', f);
		}
	}
	if (m && m->seq >= 0)
		fprintf(f, "\"Sequence number\":%" PRId64 ",", m->seq);
	if (m && m->op_id >= 0)
		fprintf(f, "\"kprof op_id\":%" PRId64 ",", m->op_id);
	fputs("\"kprof source\":\"nvtx\"", f);
	if (domain) {
		fputs(",\"kprof nvtx domain\":", f);
		jw_put_string(f, domain);
	}
	fclose(f);
	return buf;
}

/* ---- CUDA graph replays ---- */

struct extspan {
	uint64_t ext;
	size_t span;
};

static int cmp_extspan(const void *a, const void *b)
{
	const struct extspan *x = a, *y = b;
	return x->ext < y->ext ? -1 : x->ext > y->ext;
}

struct apiref {
	uint32_t corr;
	size_t rec;
};

static int cmp_apiref(const void *a, const void *b)
{
	const struct apiref *x = a, *y = b;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static int cmp_replay(const void *a, const void *b, void *arg)
{
	const struct kp_rec *v = arg;
	const struct kp_rec *x = &v[*(const size_t *)a], *y = &v[*(const size_t *)b];
	if (x->corr != y->corr)
		return x->corr < y->corr ? -1 : 1;
	if (x->gext != y->gext)
		return x->gext < y->gext ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* What the replays are built from: the replayed kernels, the ops and launches they point to. */
struct replays {
	struct kp_ctrace *t;
	size_t *idx; /* replayed kernels (recs with a gext), by (corr, gext, start) */
	size_t n;
	struct extspan *es; /* cpu_op spans by External id */
	size_t nsp;
	struct apiref *api; /* runtime and driver API records by correlation id */
	size_t napi;
	uint64_t maxext; /* highest External id in use: new ops take the ones above it */
};

/* The launch window of one replay: the graph launch's time, thread and process. */
struct replay_window {
	const struct apiref *launch; /* NULL: no API record for the replay's correlation id */
	uint64_t s0, dur;
	uint32_t pid, tid;
	size_t k; /* distinct creating ops in the replay: the window's slices */
};

static void replays_free(struct replays *rp)
{
	free(rp->idx), free(rp->es), free(rp->api);
}

/* Records with a gext; 0 when there are none. */
static size_t count_replayed(const struct kp_ctrace *t)
{
	size_t n = 0;
	for (size_t i = 0; i < t->nrecs; i++)
		n += t->recs[i].gext != 0;
	return n;
}

/* The cpu_op spans by External id, and the highest External id of spans and calls. */
static void index_cpu_ops(struct replays *rp)
{
	const struct kp_ctrace *t = rp->t;
	for (size_t i = 0; i < t->nspans; i++) {
		if (t->spans[i].ext > rp->maxext)
			rp->maxext = t->spans[i].ext;
		if (!strcmp(t->spans[i].cat, "cpu_op"))
			rp->es[rp->nsp++] = (struct extspan){ t->spans[i].ext, i };
	}
	for (size_t i = 0; i < t->nhcalls; i++)
		if (t->hcalls[i].ext > rp->maxext)
			rp->maxext = t->hcalls[i].ext;
	qsort(rp->es, rp->nsp, sizeof(*rp->es), cmp_extspan);
}

/* The replayed kernels in replay order, and the API records by correlation id. */
static void index_records(struct replays *rp)
{
	const struct kp_ctrace *t = rp->t;
	for (size_t i = 0, k = 0; i < t->nrecs; i++) {
		const struct kp_rec *r = &t->recs[i];
		if (r->gext)
			rp->idx[k++] = i;
		if (r->kind == REC_RUNTIME || r->kind == REC_DRIVER)
			rp->api[rp->napi++] = (struct apiref){ r->corr, i };
	}
	qsort(rp->api, rp->napi, sizeof(*rp->api), cmp_apiref);
	qsort_r(rp->idx, rp->n, sizeof(*rp->idx), cmp_replay, t->recs);
}

/* Allocate and fill @rp for the @n replayed kernels of @t; -1: out of memory. */
static int replays_index(struct replays *rp, struct kp_ctrace *t, size_t n)
{
	*rp = (struct replays){ .t = t, .n = n };
	rp->idx = malloc(n * sizeof(*rp->idx));
	rp->es = malloc((t->nspans + 1) * sizeof(*rp->es));
	rp->api = malloc((t->nrecs + 1) * sizeof(*rp->api));
	if (!rp->idx || !rp->es || !rp->api) {
		replays_free(rp);
		return -1;
	}
	index_cpu_ops(rp);
	index_records(rp);
	return 0;
}

/* The end of the replay starting at idx[@a] (same corr), its distinct creating ops in *@k. */
static size_t replay_end(const struct replays *rp, size_t a, size_t *k)
{
	const struct kp_rec *v = rp->t->recs;
	uint32_t corr = v[rp->idx[a]].corr;
	size_t b = a;
	*k = 0;
	for (; b < rp->n && v[rp->idx[b]].corr == corr; b++)
		*k += b == a || v[rp->idx[b]].gext != v[rp->idx[b - 1]].gext;
	return b;
}

/* The graph launch of the replay starting at idx[@a]; without one, its first kernel's start. */
static struct replay_window replay_window(const struct replays *rp, size_t a)
{
	const struct kp_rec *first = &rp->t->recs[rp->idx[a]];
	struct apiref key = { first->corr, 0 };
	struct replay_window w = { 0 };
	w.launch = bsearch(&key, rp->api, rp->napi, sizeof(*rp->api), cmp_apiref);
	if (w.launch) {
		const struct kp_rec *lr = &rp->t->recs[w.launch->rec];
		w.s0 = lr->start_ns;
		w.dur = lr->end_ns > lr->start_ns ? lr->end_ns - lr->start_ns : 0;
		w.pid = lr->pid, w.tid = lr->tid;
	} else {
		w.s0 = first->start_ns;
	}
	return w;
}

/* The original op's args plus "kprof graph replay of" (malloc'ed; NULL without memory). */
static char *replay_args(const struct kp_span *sp, uint64_t gext)
{
	char *args = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&args, &len);
	if (f) {
		fprintf(f, "%s%s\"kprof graph replay of\":%" PRIu64, sp->args ? sp->args : "",
			sp->args ? "," : "", gext);
		fclose(f);
	}
	return args;
}

/* The copy of op @o for kernels idx[@c..@d) in slice @slice of @w; the kernels relinked to it */
static int emit_replay_op(struct replays *rp, const struct extspan *o, size_t c, size_t d,
			  struct replay_window *w, size_t slice, struct kp_hostops_stats *st)
{
	struct kp_ctrace *t = rp->t;
	const struct kp_span *sp = &t->spans[o->span];
	uint64_t gext = t->recs[rp->idx[c]].gext;
	uint64_t ext = ++rp->maxext;
	uint64_t b0 = w->s0 + w->dur * slice / w->k, b1 = w->s0 + w->dur * (slice + 1) / w->k;
	char *args = replay_args(sp, gext);
	if (!w->launch)
		w->pid = sp->pid, w->tid = sp->tid;
	int rc = ctrace_add_span(t, "cpu_op", strdup(sp->name), b0, b1 > b0 ? b1 - 1 : b0, w->pid,
				 w->tid + HOSTOPS_REPLAY_TID, ext, args);
	for (size_t e = c; e < d; e++)
		t->recs[rp->idx[e]].gext = ext;
	st->replay_ops++;
	st->replay_kernels += d - c;
	return rc;
}

/* One replay, kernels idx[@a..@b): one op per distinct creating op, in disjoint slices. */
static int emit_replay(struct replays *rp, size_t a, size_t b, size_t k,
		       struct kp_hostops_stats *st)
{
	const struct kp_rec *v = rp->t->recs;
	struct replay_window w = replay_window(rp, a);
	w.k = k;
	int rc = 0;
	size_t slice = 0;
	for (size_t c = a; c < b && rc == 0; slice++) {
		uint64_t gext = v[rp->idx[c]].gext;
		size_t d = c;
		while (d < b && v[rp->idx[d]].gext == gext)
			d++;
		struct extspan ek = { gext, 0 };
		const struct extspan *o = bsearch(&ek, rp->es, rp->nsp, sizeof(*rp->es),
						  cmp_extspan);
		if (o)
			rc = emit_replay_op(rp, o, c, d, &w, slice, st);
		c = d;
	}
	return rc;
}

/*
 * Kernels replayed from a CUDA graph carry (gext) the op their node was created in.  Each
 * replay (graph launch) gets its own copy of that op, so that the op's FLOPs count once per
 * replay: a cpu_op with the original's name and args plus "kprof graph replay of", on a thread
 * beside the launching one (tid + HOSTOPS_REPLAY_TID), in a slice of the graph launch's time.
 */
static int emit_replays(struct kp_ctrace *t, struct kp_hostops_stats *st)
{
	size_t n = count_replayed(t);
	if (!n)
		return 0;
	struct replays rp;
	if (replays_index(&rp, t, n) < 0)
		return -1;
	int rc = 0;
	for (size_t a = 0; a < n && rc == 0;) {
		size_t k;
		size_t b = replay_end(&rp, a, &k);
		rc = emit_replay(&rp, a, b, k, st);
		a = b;
	}
	replays_free(&rp);
	return rc;
}

static void ctx_free(struct ctx *x)
{
	free(x->gemm), free(x->sdpa), free(x->conv), free(x->l), free(x->k), free(x->fw);
	hmap_free(&x->ops), hmap_free(&x->fwd), hmap_free(&x->threads);
}

/* The GEMM and attention calls by (tid, start), for the ranges that enclose them. */
static void index_library_calls(struct ctx *x)
{
	const struct kp_ctrace *t = x->t;
	for (size_t i = 0; i < t->nhcalls; i++) {
		if (t->hcalls[i].kind == HC_GEMM)
			x->gemm[x->ngemm++] = i;
		else if (t->hcalls[i].kind == HC_SDPA)
			x->sdpa[x->nsdpa++] = i;
		else if (t->hcalls[i].kind == HC_CONV)
			x->conv[x->nconv++] = i;
	}
	if (x->ngemm)
		qsort_r(x->gemm, x->ngemm, sizeof(*x->gemm), cmp_idx_tid_start, t->hcalls);
	if (x->nsdpa)
		qsort_r(x->sdpa, x->nsdpa, sizeof(*x->sdpa), cmp_idx_tid_start, t->hcalls);
	if (x->nconv)
		qsort_r(x->conv, x->nconv, sizeof(*x->conv), cmp_idx_tid_start, t->hcalls);
}

/* The launches by (tid, time) and the kernels by correlation id, for kernel dtypes. */
static void index_launches(struct ctx *x)
{
	const struct kp_ctrace *t = x->t;
	for (size_t i = 0; i < t->nrecs; i++) {
		const struct kp_rec *r = &t->recs[i];
		if (r->kind == REC_RUNTIME || r->kind == REC_DRIVER)
			x->l[x->nl++] = (struct launch){ r->tid, r->start_ns, r->corr };
		else if (r->kind == REC_KERNEL)
			x->k[x->nk++] = (struct kern){ r->corr, r->name };
	}
	if (x->nl)
		qsort(x->l, x->nl, sizeof(*x->l), cmp_launch);
	if (x->nk)
		qsort(x->k, x->nk, sizeof(*x->k), cmp_kern);
}

/* Allocate and fill @x's indices of @t; -1: out of memory (nothing held). */
static int ctx_index(struct ctx *x, struct kp_ctrace *t)
{
	*x = (struct ctx){ .t = t };
	hmap_init(&x->ops, HMAP_INT);
	hmap_init(&x->fwd, HMAP_INT);
	hmap_init(&x->threads, HMAP_INT);
	x->fw = malloc((t->nhcalls + 1) * sizeof(*x->fw));
	x->gemm = malloc((t->nhcalls + 1) * sizeof(*x->gemm));
	x->sdpa = malloc((t->nhcalls + 1) * sizeof(*x->sdpa));
	x->conv = malloc((t->nhcalls + 1) * sizeof(*x->conv));
	x->l = malloc((t->nrecs + 1) * sizeof(*x->l));
	x->k = malloc((t->nrecs + 1) * sizeof(*x->k));
	if (!x->gemm || !x->sdpa || !x->conv || !x->l || !x->k || !x->fw) {
		ctx_free(x);
		return -1;
	}
	index_library_calls(x);
	index_launches(x);
	return 0;
}

/* The indices of @t's calls in time order (malloc'ed): producers before their consumers. */
static size_t *calls_in_time_order(const struct kp_ctrace *t)
{
	size_t *order = malloc((t->nhcalls + 1) * sizeof(*order));
	if (!order)
		return NULL;
	for (size_t i = 0; i < t->nhcalls; i++)
		order[i] = i;
	qsort_r(order, t->nhcalls, sizeof(*order), cmp_idx_start, t->hcalls);
	return order;
}

static int is_library_op(const struct kp_hcall *c)
{
	return c->kind == HC_GEMM || c->kind == HC_CONV || c->kind == HC_SDPA ||
	       c->kind == HC_CUDNN_GRAPH;
}

/* A library call as a cpu_op: shaped when its call says the shape, else only named. */
static int emit_library_op(struct kp_ctrace *t, const struct kp_hcall *c,
			   struct kp_hostops_stats *st)
{
	const char *name;
	char *args = NULL;
	int shaped = c->kind == HC_GEMM   ? hostops_gemm(c, &name, &args)
		     : c->kind == HC_CONV ? hostops_conv(c, &name, &args)
		     : c->kind == HC_SDPA ? hostops_sdpa(c, &name, &args)
					  : hostops_cudnn_graph(c, &name, &args);
	if (shaped < 0) {
		/* no shape: the call still holds its kernels, without a model */
		st->gemms_unshaped++;
		name = c->name ? c->name : "cublas";
		FILE *f = open_memstream(&args, &(size_t){ 0 });
		if (f) {
			fputs("\"kprof library call\":", f);
			jw_put_string(f, name);
			fclose(f);
		}
	}
	st->gemms++;
	return ctrace_add_span(t, "cpu_op", strdup(name), c->start_ns, c->end_ns, c->pid, c->tid,
			       c->ext, args);
}

/* Parse range @c's message into @m: 0, 1 (no emit_nvtx message) or -1 (warned, counted). */
static int parse_range(const struct kp_hcall *c, struct kp_nvtx_msg *m, struct kp_hostops_stats *st,
		       FILE *warn)
{
	char why[128];
	int p = nvtxmsg_parse(c->name, m, why, sizeof(why));
	if (p < 0) {
		if (warn && st->nvtx_malformed < 5)
			fprintf(warn,
				"kprof: warning: NVTX range '%.120s': %s; kept as an "
				"annotation\n",
				c->name, why);
		st->nvtx_malformed++;
	}
	return p;
}

/* ---- forward and backward ops (doc: ../shared/docs/attribution.md §2.4) ---- */

/*
 * An autograd node: torch names a backward node after its Node class, "AddmmBackward0",
 * "<Function>Backward" for a custom Function, "torch::autograd::CopySlices" for C++ nodes
 * (torch/csrc/autograd/function.h, Node::name); ops are "aten::..." or Triton kernels.
 */
static int is_autograd_node(const char *name)
{
	if (!strncmp(name, "torch::autograd::", 17))
		return 1;
	size_t n = strlen(name);
	while (n > 0 && isdigit((unsigned char)name[n - 1]))
		n--;
	return n >= 8 && !memcmp(name + n - 8, "Backward", 8);
}

/* The number of @pid/@tid as a forward thread: 1, 2, ... in the order they first appear. */
static int64_t thread_no(struct ctx *x, uint32_t pid, uint32_t tid)
{
	int created;
	struct kp_hmap_entry *e = hmap_put_int(&x->threads, (int64_t)((uint64_t)pid << 32 | tid),
					       &created);
	if (created)
		e->val.i = ++x->nthreads;
	return e->val.i;
}

/*
 * Range @c (name @name, seq @seq): a forward op is remembered as the latest of its seq; an
 * autograd node takes the latest forward op of its seq in its process, and the first node of
 * that op gets the fwdbwd flow from it.  Returns the "Fwd thread id": 0 forward, else the
 * number of the forward op's thread (without one: 1, torch's number of the first thread that
 * records); -1 out of memory.
 */
static int64_t fwdbwd_link(struct ctx *x, const struct kp_hcall *c, const char *name, int64_t seq,
			   struct kp_hostops_stats *st)
{
	int64_t key = op_key(c->pid, seq);
	if (!is_autograd_node(name)) {
		int created;
		struct kp_hmap_entry *e = hmap_put_int(&x->fwd, key, &created);
		if (created)
			e->val.i = (int64_t)++x->nfw;
		x->fw[e->val.i - 1] = (struct fwdop){ c->start_ns, c->pid, c->tid,
						      thread_no(x, c->pid, c->tid), 0 };
		return 0;
	}
	st->bwd_ops++;
	struct kp_hmap_entry *e = hmap_get_int(&x->fwd, key);
	if (!e)
		return 1;
	struct fwdop *f = &x->fw[e->val.i - 1];
	if (!f->flowed) {
		uint64_t id = (uint64_t)f->thread_no << 48 | ((uint64_t)seq & ((1ull << 48) - 1));
		if (ctrace_add_flow(x->t, 's', id, f->start_ns, f->pid, f->tid) < 0 ||
		    ctrace_add_flow(x->t, 'f', id, c->start_ns, c->pid, c->tid) < 0)
			return -1;
		f->flowed = 1;
		st->bwd_linked++;
	}
	return f->thread_no;
}

/* @args (malloc'ed) with ,"Fwd thread id":@v appended; @v < 0: freed, NULL. */
static char *fwd_thread_arg(char *args, int64_t v)
{
	if (v < 0) {
		free(args);
		return NULL;
	}
	size_t n = strlen(args);
	char *a = realloc(args, n + 48);
	if (!a) {
		free(args);
		return NULL;
	}
	snprintf(a + n, 48, ",\"Fwd thread id\":%" PRId64, v);
	return a;
}

/* ---- module ranges -> python_function events ---- */

static int is_module_range(const struct kp_hcall *c)
{
	static const char pre[] = HOSTOPS_MODULE_PREFIX HOSTOPS_MODULE_NAME;
	return c->kind == HC_NVTX_PUSH && c->name && !strncmp(c->name, pre, sizeof(pre) - 1);
}

/* Ranges by start, longer (the enclosing one) first, then in the order they were opened. */
static int cmp_modrange_time(const void *a, const void *b, void *arg)
{
	const struct kp_hcall *v = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct kp_hcall *x = &v[i], *y = &v[j];
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->end_ns != y->end_ns)
		return x->end_ns > y->end_ns ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* The same within each (pid, tid). */
static int cmp_modrange_thread(const void *a, const void *b, void *arg)
{
	const struct kp_hcall *v = arg;
	const struct kp_hcall *x = &v[*(const size_t *)a], *y = &v[*(const size_t *)b];
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return cmp_modrange_time(a, b, arg);
}

/* The _N of "Class_N", -1 without one. */
static int64_t module_index(const char *name)
{
	const char *u = strrchr(name, '_');
	if (!u || !isdigit((unsigned char)u[1]))
		return -1;
	char *end;
	errno = 0;
	long long v = strtoll(u + 1, &end, 10);
	return errno || *end ? -1 : v;
}

/* One python_function event: module range @c, its Python id @id and its parent's @parent. */
static int emit_module(struct kp_ctrace *t, const struct kp_hcall *c, int64_t id, int64_t parent)
{
	const char *name = c->name + strlen(HOSTOPS_MODULE_PREFIX);
	int64_t mi = module_index(name + strlen(HOSTOPS_MODULE_NAME));
	char *args = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&args, &len);
	if (!f)
		return -1;
	if (parent > 0)
		fprintf(f, "\"Python parent id\":%" PRId64, parent);
	else
		fputs("\"Python parent id\":null", f);
	fprintf(f, ",\"Python id\":%" PRId64, id);
	if (mi >= 0)
		fprintf(f, ",\"Python module id\":%" PRId64, mi);
	fclose(f);
	if (!args)
		return -1;
	return ctrace_add_span(t, "python_function", strdup(name), c->start_ns, c->end_ns, c->pid,
			       c->tid, 0, args);
}

/*
 * The closed module ranges as python_function events: ids by start over the trace, each
 * one's parent the innermost module range around it on its thread (push/pop ranges nest).
 */
static int emit_modules(struct kp_ctrace *t, struct kp_hostops_stats *st)
{
	size_t n = 0;
	for (size_t i = 0; i < t->nhcalls; i++)
		n += is_module_range(&t->hcalls[i]) && !(t->hcalls[i].flags & HCF_OPEN);
	if (!n)
		return 0;
	size_t *v = malloc(n * sizeof(*v)), *stack = malloc(n * sizeof(*stack));
	int64_t *id = calloc(t->nhcalls, sizeof(*id));
	int rc = -1;
	if (!v || !stack || !id)
		goto out;
	n = 0;
	for (size_t i = 0; i < t->nhcalls; i++)
		if (is_module_range(&t->hcalls[i]) && !(t->hcalls[i].flags & HCF_OPEN))
			v[n++] = i;
	qsort_r(v, n, sizeof(*v), cmp_modrange_time, t->hcalls);
	for (size_t k = 0; k < n; k++)
		id[v[k]] = (int64_t)k + 1;
	qsort_r(v, n, sizeof(*v), cmp_modrange_thread, t->hcalls);
	size_t depth = 0;
	rc = 0;
	for (size_t k = 0; k < n && rc == 0; k++) {
		const struct kp_hcall *c = &t->hcalls[v[k]];
		while (depth > 0) {
			const struct kp_hcall *top = &t->hcalls[stack[depth - 1]];
			if (top->pid == c->pid && top->tid == c->tid && top->end_ns >= c->end_ns)
				break;
			depth--;
		}
		rc = emit_module(t, c, id[v[k]], depth ? id[stack[depth - 1]] : 0);
		stack[depth++] = v[k];
		st->module_ranges++;
	}
out:
	free(v), free(stack), free(id);
	return rc;
}

/* A closed NVTX range as a cpu_op (an emit_nvtx op) or a user_annotation. */
static int emit_range(struct ctx *x, const struct kp_hcall *c, struct kp_hostops_stats *st,
		      FILE *warn)
{
	struct kp_nvtx_msg m;
	int p = parse_range(c, &m, st, warn);
	st->nvtx_ranges++;
	/*
	 * An emit_nvtx op is a cpu_op; one of a primary model (matmul, conv, attention)
	 * without shapes stays an annotation, so that the library op inside it counts.
	 */
	int op = p == 0 && !m.label && (m.has_sizes || opmodel_class(m.name) != MODEL_PRIMARY);
	const char *dts[NVTX_MAX_SLOTS] = { 0 };
	if (op && m.has_sizes)
		op_dtypes(x, c, &m, dts);
	/* scalars emit_nvtx does not record, from the library calls inside the range */
	struct conv_args ca = { .conc = { 0 } };
	const char *from_key = NULL;
	int cslot = op && m.has_sizes ? opmodel_causal_slot(m.name) : -1;
	const char *cval = cslot >= 0 ? enclosed_causal(x, c) : NULL;
	if (cval && cslot < m.nslots) {
		ca.conc[cslot] = cval;
		from_key = "kprof is_causal from";
		ca.from = "cudnnBackendExecute";
	} else if (op && conv_fill(x, c, &m, &ca)) {
		from_key = "kprof conv args from";
	}
	char *args = nvtx_args(p == 0 && !m.label ? &m : NULL, dts, c->domain, ca.conc, from_key,
			       ca.from);
	if (p == 0 && !m.label && m.seq >= 0 && args)
		args = fwd_thread_arg(args, fwdbwd_link(x, c, m.name, m.seq, st));
	if (op)
		st->nvtx_ops++;
	return ctrace_add_span(x->t, op ? "cpu_op" : "user_annotation",
			       strdup(p == 0    ? m.name
				      : c->name ? c->name
						: ""),
			       c->start_ns, c->end_ns, c->pid, c->tid, c->ext, args);
}

/* One call: a library op, a range, or (never closed) only counted. */
static int emit_call(struct ctx *x, const struct kp_hcall *c, struct kp_hostops_stats *st,
		     FILE *warn)
{
	if (is_library_op(c))
		return emit_library_op(x->t, c, st);
	if (c->flags & HCF_OPEN) {
		st->nvtx_open++;
		return 0;
	}
	if (is_module_range(c))
		return 0; /* emit_modules() */
	return emit_range(x, c, st, warn);
}

int hostops_emit(struct kp_ctrace *t, struct kp_hostops_stats *st, FILE *warn)
{
	struct kp_hostops_stats s0;
	if (!st)
		st = &s0;
	memset(st, 0, sizeof(*st));
	struct ctx x;
	if (ctx_index(&x, t) < 0)
		return -1;
	size_t *order = calls_in_time_order(t);
	if (!order) {
		ctx_free(&x);
		return -1;
	}
	int rc = 0;
	for (size_t oi = 0, n = t->nhcalls; oi < n && rc == 0; oi++) {
		const struct kp_hcall c = t->hcalls[order[oi]];
		rc = emit_call(&x, &c, st, warn);
	}
	if (rc == 0)
		rc = emit_replays(t, st);
	if (rc == 0)
		rc = emit_modules(t, st);
	free(order);
	ctx_free(&x);
	return rc;
}
