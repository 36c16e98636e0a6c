/*
 * listcases.c — `kprof capture --list-cases`: the cases and shapes a capture expands to,
 * without touching the GPU.
 */
#include <stdio.h>

#include "kprof/capture.h"
#include "kprof/utf8.h"
#include "workloads/shapes.h"

/* "a,b" of the names whose bit is set in @mask */
static void names(FILE *fp, int mask, const char *const *n, int count)
{
	int first = 1;
	for (int i = 0; i < count; i++)
		if (mask & (1 << i)) {
			fprintf(fp, "%s%s", first ? "" : ",", n[i]);
			first = 0;
		}
	if (first)
		fputs("auto", fp);
}

void capture_list_cases(FILE *fp, const char *name, const struct kp_capture_opts *o)
{
	static const char *const wl[] = { "matmul",  "sdpa",      "conv",         "softmax",
					  "rmsnorm", "layernorm", "cross_entropy" };
	static const char *const dt[] = { "bf16", "fp16", "fp32", "tf32" };
	static const char *const ops[] = { "mm",         "addmm",   "bmm",       "mm+relu",
					   "addmm+relu", "mm+gelu", "addmm+gelu" };
	static const char *const be[] = { "reference", "cudnn", "cublas", "cublaslt" };
	static const char *const lay[] = { "nchw", "nhwc" };
	/* the suite's strings shown, not obeyed: a C1 control or a bidi override escaped */
	fputs("case ", fp);
	utf8_fputs_visible(name, fp);
	fputs(": output ", fp);
	utf8_fputs_visible(o->output, fp);
	fputs(", results ", fp);
	utf8_fputs_visible(o->results ? o->results : "-", fp);
	fprintf(fp, ", warmup %ld, iters %ld, backward %s, dtypes ", o->warmup, o->iters,
		o->backward ? "on" : "off");
	names(fp, o->dtypes, dt, 4);
	fputc('\n', fp);
	if (o->workloads & WL_MATMUL) {
		fprintf(fp, "  matmul: %zu shapes, ops ", o->nmm);
		names(fp, o->mm_ops, ops, 7);
		fputs(", backends ", fp);
		names(fp, o->backends & BE_MATMUL ? o->backends & BE_MATMUL : BE_CUBLAS, be, 4);
		fputc('\n', fp);
		for (size_t i = 0; i < o->nmm; i++)
			fprintf(fp, "    %ldx%ldx%ld%s%s\n", o->mm[i].m, o->mm[i].k, o->mm[i].n,
				o->mm[i].label[0] ? " " : "", o->mm[i].label);
	}
	if (o->workloads & WL_SDPA) {
		fprintf(fp, "  sdpa: %zu shapes (BxHxH_KVxS_QxS_KxD, c: causal)\n", o->nsdpa);
		for (size_t i = 0; i < o->nsdpa; i++) {
			const struct kp_sdpa_shape *s = &o->sdpa[i];
			fprintf(fp, "    %ldx%ldx%ldx%ldx%ldx%ld%s\n", s->b, s->h, s->hkv, s->sq,
				s->sk, s->d, s->causal ? "c" : "");
		}
	}
	if (o->workloads & WL_CONV) {
		fprintf(fp, "  conv: %zu shapes (NxCxHxWxKxRxS:s:p:d:g), backends ", o->nconv);
		names(fp, o->backends & BE_CONV, be, 2);
		fputs(", layouts ", fp);
		names(fp, o->layouts ? o->layouts : LAYOUT_NCHW, lay, 2);
		fputc('\n', fp);
		for (size_t i = 0; i < o->nconv; i++) {
			const struct kp_conv_shape *s = &o->conv[i];
			fprintf(fp, "    %ldx%ldx%ldx%ldx%ldx%ldx%ld:s%ld:p%ld:d%ld:g%ld\n", s->n,
				s->c, s->h, s->w, s->k, s->r, s->s, s->stride, s->pad, s->dil,
				s->groups);
		}
	}
	for (int w = 3; w < 6; w++)
		if (o->workloads & (1 << w)) {
			fprintf(fp, "  %s: %zu shapes (ROWSxHIDDEN)\n", wl[w], o->nnorm);
			for (size_t i = 0; i < o->nnorm; i++)
				fprintf(fp, "    %ldx%ld\n", o->norm[i].rows, o->norm[i].hidden);
		}
	if (o->workloads & WL_XENT) {
		fprintf(fp, "  %s: %zu shapes (ROWSxVOCAB)\n", wl[6], o->nxent);
		for (size_t i = 0; i < o->nxent; i++)
			fprintf(fp, "    %ldx%ld\n", o->xent[i].rows, o->xent[i].hidden);
	}
}
