/*
 * devprops.c — Kineto's deviceProperties from cudaGetDeviceProperties, plus clock attributes.
 */
#include "record/devprops.h"

#include <stdio.h>
#include <string.h>

#include "record/ctrace.h"

#ifdef KPROF_HAVE_CUPTI

#include <cuda_runtime.h>

int devprops_read(struct kp_cdevprops *d, int id)
{
	struct cudaDeviceProp p;
	memset(d, 0, sizeof(*d));
	d->id = id;
	if (cudaGetDeviceProperties(&p, id) != cudaSuccess)
		return -1;
	snprintf(d->name, sizeof(d->name), "%s", p.name);
	d->total_global_mem = p.totalGlobalMem;
	d->compute_major = p.major, d->compute_minor = p.minor;
	d->max_threads_per_block = p.maxThreadsPerBlock;
	d->max_threads_per_mp = p.maxThreadsPerMultiProcessor;
	d->regs_per_block = p.regsPerBlock, d->warp_size = p.warpSize;
	d->smem_per_block = p.sharedMemPerBlock;
	d->num_sms = p.multiProcessorCount;
	d->regs_per_mp = p.regsPerMultiprocessor;
	d->smem_per_block_optin = p.sharedMemPerBlockOptin;
	d->smem_per_mp = p.sharedMemPerMultiprocessor;
	d->mem_bus_width = p.memoryBusWidth;
	int v;
	if (cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, id) == cudaSuccess)
		d->clock_rate_khz = v;
	if (cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, id) == cudaSuccess)
		d->mem_clock_rate_khz = v;
	return 0;
}

int devprops_count(void)
{
	int n = 0;
	return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

int devprops_driver_version(void)
{
	int v = 0;
	return cudaDriverGetVersion(&v) == cudaSuccess ? v : 0;
}

int devprops_pci_bus_id(int id, char *buf, int len)
{
	return cudaDeviceGetPCIBusId(buf, len, id) == cudaSuccess ? 0 : -1;
}

#else /* !KPROF_HAVE_CUPTI */

int devprops_read(struct kp_cdevprops *d, int id)
{
	memset(d, 0, sizeof(*d));
	d->id = id;
	return -1;
}

int devprops_count(void)
{
	return 0;
}

int devprops_driver_version(void)
{
	return 0;
}

int devprops_pci_bus_id(int id, char *buf, int len)
{
	(void)id;
	if (len > 0)
		buf[0] = '\0';
	return -1;
}

#endif
