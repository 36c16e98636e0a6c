/*
 * membound.cu — kprof's memory-bound row-wise kernels (membound.h): what their launchers ask of
 * the device, kept per device (membound-dev.h), and kk_dram_peak.  The kernels and their
 * launchers: membound-rowwise.cu (softmax, RMSNorm, LayerNorm forwards), membound-bwd.cu
 * (their backwards; membound-pipe.cuh the pipelined one), membound-xent.cu (cross-entropy), on
 * the primitives of membound-prims.cuh; the launch choices: membound-plan.c.
 *
 * Each row is read from DRAM once and written once (the byte count analyze's models assume):
 * one block per row, each thread keeping ITEMS 16-byte vectors of the row in registers
 * (packed); rows too long for that are read twice by their block, the second time from L2
 * (kprof_rowwise_l2), split over a cluster (kprof_rowwise_cl), or staged through shared memory
 * by persistent blocks (kprof_norm_bwd_pipe); DRAM still sees one read.
 */
#include "kernels/membound-dev.h"
#include "kernels/membound.h"

#include <cuda_runtime.h>
#include <string.h>

void mb_device(struct mb_dev *d, int *devp)
{
	static struct {
		int known;
		struct mb_dev d;
	} cache[MB_MAX_DEV];
	int dev = 0, khz = 0, bits = 0;
	memset(d, 0, sizeof(*d));
	*devp = -1;
	if (cudaGetDevice(&dev) != cudaSuccess) {
		cudaGetLastError();
		return;
	}
	*devp = dev;
	if (dev >= 0 && dev < MB_MAX_DEV && cache[dev].known) {
		*d = cache[dev].d;
		return;
	}
	if (cudaDeviceGetAttribute(&d->major, cudaDevAttrComputeCapabilityMajor, dev) !=
		    cudaSuccess ||
	    cudaDeviceGetAttribute(&d->sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&d->optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) !=
		    cudaSuccess ||
	    cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, dev) != cudaSuccess) {
		cudaGetLastError();
		memset(d, 0, sizeof(*d));
		return;
	}
	d->peak = 2.0 * khz * 1e3 * bits / 8;
	if (dev >= 0 && dev < MB_MAX_DEV)
		cache[dev].d = *d, cache[dev].known = 1;
}

/* membound.h; kept per device once known */
extern "C" double kk_dram_peak(void)
{
	struct mb_dev d;
	int dev;
	mb_device(&d, &dev);
	return d.peak;
}

/* cached per device, kernel and size */
long mb_resident_blocks(const void *fn, unsigned threads)
{
	static struct {
		int dev;
		const void *fn;
		unsigned threads;
		long n;
	} cache[64];
	static int ncache;
	int dev = 0, sms = 1, per = 1;
	if (cudaGetDevice(&dev) != cudaSuccess) {
		cudaGetLastError();
		dev = -1;
	}
	for (int i = 0; i < ncache; i++)
		if (cache[i].dev == dev && cache[i].fn == fn && cache[i].threads == threads)
			return cache[i].n;
	if (dev < 0 ||
	    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
	    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, fn, (int)threads, 0) !=
		    cudaSuccess ||
	    per < 1)
		per = 1;
	long n = (long)per * (sms > 0 ? sms : 1);
	if (ncache < 64 && dev >= 0) {
		cache[ncache].dev = dev, cache[ncache].fn = fn, cache[ncache].threads = threads;
		cache[ncache].n = n;
		ncache++;
	}
	return n;
}

/* cached per device, kernel and size */
long mb_pipe_resident(const void *fn, unsigned threads, size_t smem, int nc)
{
	static struct {
		int dev;
		const void *fn;
		unsigned threads;
		size_t smem;
		int nc;
		long n;
	} cache[64];
	static int ncache;
	long n = 0;
	int dev = 0, sms = 0, per = 0, optin = 0;
	if (cudaGetDevice(&dev) != cudaSuccess) {
		cudaGetLastError();
		return 0;
	}
	for (int i = 0; i < ncache; i++)
		if (cache[i].dev == dev && cache[i].fn == fn && cache[i].threads == threads &&
		    cache[i].smem == smem && cache[i].nc == nc)
			return cache[i].n;
	cudaFuncAttributes fa;
	/*
	 * The attribute is the kernel's, not the plan's: set to the most a block may have beside
	 * its static shared memory, so that a plan of this kernel with a smaller ring, made after
	 * this one and before this one's launch, does not leave it too low for it (a capture of
	 * 77x65536, 300x24584, 40x40968, 1000x65536 failed the last launch: "invalid argument")
	 */
	if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) !=
		    cudaSuccess ||
	    cudaFuncGetAttributes(&fa, fn) != cudaSuccess ||
	    (size_t)optin < fa.sharedSizeBytes + smem ||
	    cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
				 optin - (int)fa.sharedSizeBytes) != cudaSuccess) {
		cudaGetLastError();
		return 0;
	}
	if (nc == 1) {
		if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, fn, (int)threads, smem) ==
		    cudaSuccess)
			n = (long)per * sms;
	} else {
		cudaLaunchConfig_t cfg;
		cudaLaunchAttribute at[1];
		memset(&cfg, 0, sizeof(cfg));
		memset(at, 0, sizeof(at));
		cfg.gridDim = dim3((unsigned)(nc * (sms / nc > 0 ? sms / nc : 1)));
		cfg.blockDim = dim3(threads);
		cfg.dynamicSmemBytes = smem;
		at[0].id = cudaLaunchAttributeClusterDimension;
		at[0].val.clusterDim.x = (unsigned)nc, at[0].val.clusterDim.y = 1;
		at[0].val.clusterDim.z = 1;
		cfg.attrs = at, cfg.numAttrs = 1;
		int ncl = 0;
		if (cudaOccupancyMaxActiveClusters(&ncl, fn, &cfg) == cudaSuccess)
			n = ncl;
	}
	cudaGetLastError();
	if (ncache < 64) {
		cache[ncache].dev = dev, cache[ncache].fn = fn;
		cache[ncache].threads = threads, cache[ncache].smem = smem;
		cache[ncache].nc = nc, cache[ncache].n = n;
		ncache++;
	}
	return n;
}
