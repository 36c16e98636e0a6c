/*
 * workloads.c — the driver of the built-in workloads: workloads_run()'s loop over dtypes, shapes
 * and backends.  The families, each recorded as the PyTorch op with the same meaning
 * (doc/flops-bytes.md §4.3) and checked once against a host fp64 reference: wl-matmul.c
 * (mm/addmm/bmm), wl-sdpa.c (attention), wl-conv.c (conv2d), wl-rowwise.c (softmax, RMSNorm,
 * LayerNorm, cross-entropy); what they share is in wl-common.c.
 */
#include "workloads/wl-common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kprof/capture.h"
#include "kprof/diag.h"
#include "kprof/jsonw.h"
#include "workloads/shapes.h"

#ifdef KPROF_HAVE_CUPTI

#include "kernels/membound.h"
#include "kprof/arena.h"
#include "kprof/diag.h"
#include "record/cmsg.h"
#include "workloads/cudnn-graph.h"
#include "workloads/wl-cudnn.h"

/*
 * The conv and sdpa backends: --backend as given, else cudnn when it loads, else reference.
 * cuDNN's absence is a warning and the reference backend runs instead.
 */
static int pick_backends(struct kp_wl *w)
{
	const struct kp_capture_opts *o = w->o;
	int be = o->backends & BE_CONV;
	if (!(o->workloads & (WL_CONV | WL_SDPA)) || (be && !(be & BE_CUDNN)))
		return be ? be : BE_REFERENCE;
	char why[2400];
	if (!w->cudnn)
		w->cudnn = cudnn_open(why, sizeof(why));
	if (!w->cudnn) {
		cmsg_warn(w->o, "%s; conv and sdpa run on the reference backend", why);
		return BE_REFERENCE;
	}
	long v = cudnn_version(w->cudnn);
	cmsg_out(w->o, "     cudnn  %ld.%ld.%ld from %s\n", v / 10000, v / 100 % 100, v % 100,
		 cudnn_path(w->cudnn));
	return be ? be : BE_CUDNN;
}

int workloads_run(struct kp_wl *w)
{
	const struct kp_capture_opts *o = w->o;
	int backends = pick_backends(w), layouts = o->layouts ? o->layouts : LAYOUT_NCHW;
	int mm_be = o->backends & BE_MATMUL ? o->backends & BE_MATMUL : BE_CUBLAS;
	for (int cdt = 0; cdt < CDT_N; cdt++) {
		if (!(o->dtypes & (1 << cdt)))
			continue;
		if (o->workloads & WL_MATMUL)
			for (size_t i = 0; i < o->nmm; i++)
				for (int op = MM_MM; op < 1 << MM_NVARIANTS; op <<= 1)
					for (int be = BE_CUBLAS; be <= BE_CUBLASLT; be <<= 1)
						if ((o->mm_ops & op) && (mm_be & be) &&
						    wl_run_matmul(w, op, cdt, &o->mm[i],
								  be == BE_CUBLASLT) < 0)
							return -1;
		if (o->workloads & WL_SDPA)
			for (size_t i = 0; i < o->nsdpa; i++)
				for (int be = BE_REFERENCE; be <= BE_CUDNN; be <<= 1) {
					if (!(backends & be))
						continue;
					/* the default backend: cuDNN where it plans the case */
					int r = wl_run_sdpa(w, cdt, &o->sdpa[i], be == BE_CUDNN,
							    !(o->backends & BE_CONV));
					if (r < 0 ||
					    (r > 0 && wl_run_sdpa(w, cdt, &o->sdpa[i], 0, 0) < 0))
						return -1;
				}
		if (o->workloads & WL_CONV)
			for (size_t i = 0; i < o->nconv; i++)
				for (int be = BE_REFERENCE; be <= BE_CUDNN; be <<= 1)
					for (int l = LAYOUT_NCHW; l <= LAYOUT_NHWC; l <<= 1)
						if ((backends & be) && (layouts & l) &&
						    wl_run_conv(w, cdt, &o->conv[i], be == BE_CUDNN,
								l == LAYOUT_NHWC) < 0)
							return -1;
		for (int op = RW_SOFTMAX; op <= RW_LAYERNORM; op++)
			if (o->workloads & (WL_SOFTMAX << op))
				for (size_t i = 0; i < o->nnorm; i++)
					if (wl_run_norm(w, op, cdt, &o->norm[i]) < 0)
						return -1;
		if (o->workloads & WL_XENT)
			for (size_t i = 0; i < o->nxent; i++)
				if (wl_run_xent(w, cdt, &o->xent[i]) < 0)
					return -1;
	}
	return 0;
}

#endif /* KPROF_HAVE_CUPTI */
