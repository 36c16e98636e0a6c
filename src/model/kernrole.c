/*
 * kernrole.c — kernel name -> math or data movement (a table of name fragments, no I/O).
 *
 * Names seen in real traces: cuBLAS nvjet_sm90_*, sm80_xmma_gemm_*, ampere_*gemm*,
 * cutlass::Kernel2<cutlass_80_*>, cuDNN sm90_xmma_fprop_implicit_gemm_*,
 * cudnn::detail::dgrad_engine, convolve_common_engine_float_NHWC,
 * cudnn_generated_fort_native_sdpa_*, pytorch_flash::flash_fwd_kernel, fmha_cutlassF_*,
 * Triton templates triton_tem_fused_mm_*, ROCm Tensile Cijk_*; and beside them the
 * helpers cuDNN::nchwToNhwcKernel, scalePackedTensor_kernel, ReduceSplitK,
 * init_device_workspace_kernel, flash_bwd_convert_dq_kernel, flash_bwd_dot_do_o_kernel,
 * and PyTorch's at::native::*elementwise_kernel, FillFunctor, CatArrayBatchedCopy,
 * reduce_kernel, Triton triton_poi_/triton_red_/triton_per_, kprof capture's kprof_bias_rows
 * and kprof_activation (GELU/ReLU after a GEMM).
 */
#include "kprof/kernrole.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/arena.h"
#include "kprof/devdb.h"

/* helpers inside math libraries: data movement although the name says cudnn/flash/gemm */
/* clang-format off */
static const char *const helper[] = {
	"splitkreduce", "splitk_reduce", "reducesplitk", "reduce_splitk",
	"nchwtonhwc", "nhwctonchw", "scalepackedtensor", "init_device_workspace",
	"computeoffsets", "reduce_wgrad", "convert_dq", "dot_do_o", "splitkv_combine",
	"fillfunctor", "direct_copy", "elementwise_kernel", "im2col", "col2im", NULL
};
/* clang-format on */

/* math libraries and math templates */
static const char *const math[] = { "gemm",      "gemv",   "nvjet", "cutlass",    "xmma",
				    "cublas",    "cudnn",  "conv",  "implicit",   "winograd",
				    "dgrad",     "wgrad",  "fprop", "flash",      "fmha",
				    "attention", "attn",   "sdpa",  "wgmma",      "hmma",
				    "tensorop",  "s16816", "s1688", "triton_tem", "matmul",
				    "bmm",       "cijk_",  "magma", NULL };

/* generic data movement */
static const char *const move[] = { "elementwise", "vectorized", "unrolled",   "fill",
				    "copy",        "memcpy",     "memset",     "reduce",
				    "catarray",    "transpose",  "triton_poi", "triton_red",
				    "triton_per",  "index",      "gather",     "scatter",
				    "softmax",     "bias",       "swap01",     "activation",
				    "gelu",        "relu",       NULL };

/* @lower: the name in lower case (the fragments are); strstr is vectorised, strcasestr not */
static int any_of(const char *lower, const char *const *frag)
{
	for (; *frag; frag++)
		if (strstr(lower, *frag))
			return 1;
	return 0;
}

enum kp_krole kernrole_of(const char *name)
{
	if (name == NULL)
		return KROLE_MATH;
	/* names up to this long are matched in a copy on the stack, longer ones in one of
	 * their own */
	char buf[1024], *lower = buf;
	size_t n = strlen(name);
	if (n >= sizeof(buf))
		lower = xmalloc(n + 1);
	for (size_t i = 0; i <= n; i++)
		lower[i] = (char)tolower((unsigned char)name[i]);
	enum kp_krole r = any_of(lower, helper) ? KROLE_MOVE
			  : any_of(lower, math) ? KROLE_MATH
			  : any_of(lower, move) ? KROLE_MOVE
						: KROLE_MATH;
	if (lower != buf)
		free(lower);
	return r;
}

int kernrole_mempath(const char *name, int is_memcpy)
{
	static const struct {
		const char *kind;
		int path;
	} kinds[] = {
		{ "DtoD", MEMPATH_DTOD }, { "AtoD", MEMPATH_DTOD }, { "DtoA", MEMPATH_DTOD },
		{ "AtoA", MEMPATH_DTOD }, { "HtoD", MEMPATH_HOST }, { "DtoH", MEMPATH_HOST },
		{ "HtoA", MEMPATH_HOST }, { "AtoH", MEMPATH_HOST }, { "PtoP", MEMPATH_PEER },
	};
	if (!is_memcpy)
		return MEMPATH_DRAM;
	if (name == NULL || strncmp(name, "Memcpy ", 7) != 0)
		return MEMPATH_UNKNOWN;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strncmp(name + 7, kinds[i].kind, 4) && (name[11] == ' ' || name[11] == '\0'))
			return kinds[i].path;
	return MEMPATH_UNKNOWN;
}

/*
 * FlashAttention 2 kernels (PyTorch's pytorch_flash:: copy and flash-attn's flash::) name
 * Is_causal among their template arguments: its position in the top-level argument list,
 * the kernel traits being 0 (aten/src/ATen/native/transformers/cuda/flash_attn/
 * flash_{fwd,bwd}_launch_template.h).  Each function name is matched with its '<'.
 */
static const struct {
	const char *fn;
	int arg;
} causal_arg[] = {
	{ "flash_fwd_kernel<", 2 },         /* Traits, Is_dropout, Is_causal, ... */
	{ "flash_fwd_splitkv_kernel<", 1 }, /* Traits, Is_causal, ... */
	{ "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<", 2 }, /* Traits, Is_dropout, Is_causal */
	{ "flash_bwd_dq_dk_dv_loop_seqq_parallel_kernel<", 2 },
	{ "flash_bwd_dq_dk_dv_loop_kernel<", 2 },
};

int kernrole_causal(const char *name)
{
	const char *p = NULL;
	int want = -1;
	if (!name)
		return -1;
	for (size_t i = 0; i < sizeof(causal_arg) / sizeof(causal_arg[0]) && !p; i++) {
		const char *f = strstr(name, causal_arg[i].fn);
		/* the function name itself, not the tail of a longer identifier */
		if (f && (f == name || f[-1] == ':' || f[-1] == ' ')) {
			p = f + strlen(causal_arg[i].fn);
			want = causal_arg[i].arg;
		}
	}
	if (!p)
		return -1;
	/* walk the top-level template arguments: <...> and (...) nest */
	int depth = 0, arg = 0;
	const char *start = p;
	for (; *p; p++) {
		if (*p == '<' || *p == '(') {
			depth++;
		} else if ((*p == '>' || *p == ')') && depth > 0) {
			depth--;
		} else if ((*p == ',' || *p == '>') && depth == 0) {
			if (arg == want) {
				while (*start == ' ')
					start++;
				size_t len = (size_t)(p - start);
				while (len && start[len - 1] == ' ')
					len--;
				if ((len == 4 && !strncmp(start, "true", 4)) ||
				    (len == 7 && !strncmp(start, "(bool)1", 7)))
					return 1;
				if ((len == 5 && !strncmp(start, "false", 5)) ||
				    (len == 7 && !strncmp(start, "(bool)0", 7)))
					return 0;
				return -1;
			}
			if (*p == '>')
				return -1; /* fewer arguments than the template has */
			arg++;
			start = p + 1;
		}
	}
	return -1;
}

const char *kernrole_short_name(struct kp_arena *a, const char *name)
{
	/*
	 * Demangled CUDA kernels read "void ns::kern<...>(args)": drop the return type
	 * and the argument list.  Other names ("Memcpy HtoD (Pageable -> Device)") stay.
	 */
	const char *s = name;
	if (strncmp(s, "void ", 5))
		return name;
	s += 5;
	size_t n = strlen(s);
	if (n && s[n - 1] == ')') {
		int depth = 0;
		for (size_t i = n; i-- > 0;) {
			if (s[i] == ')')
				depth++;
			else if (s[i] == '(' && --depth == 0) {
				if (i > 0)
					n = i;
				break;
			}
		}
	}
	if (s == name && n == strlen(name))
		return name;
	return arena_strndup(a, s, n);
}
