/*
 * nvtx-shim-cost.c — what one NVTX push/pop pair costs with kprof-shim.so as the NVTX
 * injection library (capture/intercept/shim.c), without a GPU: N pairs of a PyTorch-like
 * emit_nvtx message, best of 5, ns per pair.  bench/nvtx-shim-cost.sh builds and runs it.
 */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	char msg[128];
	double best = 1e18;
	for (int r = 0; r < 5; r++) {
		double t0 = now();
		for (long i = 0; i < n; i++) {
			/* distinct texts, as sequence numbers and op ids make them */
			snprintf(msg, sizeof(msg), "aten::add_, seq = %ld, op_id = %ld, sizes = [[4], []]",
				 i, i + 1);
			nvtxRangePushA(msg);
			nvtxRangePop();
		}
		double ns = (now() - t0) / n;
		best = ns < best ? ns : best;
	}
	printf("%.1f\n", best);
	return 0;
}
