/*
 * nvml.c — NVML loaded at run time with kprof's own prototypes; a sampler thread records the SM
 * clock, memory clock and clock-event reasons (doc/cupti-capture.md §5).
 */
#include "record/nvml.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "record/ctrace.h"

/* NVIDIA/go-nvml pkg/nvml/nvml.h: nvmlClockType_t */
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_SUCCESS 0

typedef int (*init_fn)(void);
typedef const char *(*errstr_fn)(int);
typedef int (*by_index_fn)(unsigned, void **);
typedef int (*by_pci_fn)(const char *, void **);

int nvml_open(struct kp_nvml *n, const char *libname, const char *pci_bus_id, char *why,
	      size_t whylen)
{
	memset(n, 0, sizeof(*n));
	n->lib = dlopen(libname, RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		snprintf(why, whylen, "cannot load %s: %s", libname, dlerror());
		return -1;
	}
	init_fn init = (init_fn)dlsym(n->lib, "nvmlInit_v2");
	errstr_fn errstr = (errstr_fn)dlsym(n->lib, "nvmlErrorString");
	by_index_fn by_index = (by_index_fn)dlsym(n->lib, "nvmlDeviceGetHandleByIndex_v2");
	by_pci_fn by_pci = (by_pci_fn)dlsym(n->lib, "nvmlDeviceGetHandleByPciBusId_v2");
	n->get_clock = (int (*)(void *, int, unsigned *))dlsym(n->lib, "nvmlDeviceGetClockInfo");
	n->get_max_clock = (int (*)(void *, int, unsigned *))dlsym(n->lib,
								   "nvmlDeviceGetMaxClockInfo");
	n->get_reasons = (int (*)(void *, unsigned long long *))
		dlsym(n->lib, "nvmlDeviceGetCurrentClocksEventReasons");
	if (!n->get_reasons) /* drivers before 535 */
		n->get_reasons = (int (*)(void *, unsigned long long *))
			dlsym(n->lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
	n->shutdown = (int (*)(void))dlsym(n->lib, "nvmlShutdown");
	if (!init || !by_index || !n->get_clock || !n->get_max_clock) {
		snprintf(why, whylen, "%s lacks nvmlInit_v2/nvmlDeviceGetClockInfo", libname);
		n->lib = NULL; /* never dlclose a library that may be in use elsewhere */
		return -1;
	}
	int rc = init();
	if (rc != NVML_SUCCESS) {
		snprintf(why, whylen, "nvmlInit failed: %s", errstr ? errstr(rc) : "unknown error");
		n->lib = NULL;
		return -1;
	}
	rc = pci_bus_id && by_pci ? by_pci(pci_bus_id, &n->dev) : by_index(0, &n->dev);
	if (rc != NVML_SUCCESS) {
		snprintf(why, whylen, "no NVML device for %s: %s",
			 pci_bus_id ? pci_bus_id : "index 0",
			 errstr ? errstr(rc) : "unknown error");
		n->shutdown();
		n->lib = NULL;
		return -1;
	}
	return 0;
}

void nvml_max_clocks(struct kp_nvml *n, unsigned *sm_mhz, unsigned *mem_mhz)
{
	*sm_mhz = *mem_mhz = 0;
	if (!n->lib)
		return;
	if (n->get_max_clock(n->dev, NVML_CLOCK_SM, sm_mhz) != NVML_SUCCESS)
		*sm_mhz = 0;
	if (n->get_max_clock(n->dev, NVML_CLOCK_MEM, mem_mhz) != NVML_SUCCESS)
		*mem_mhz = 0;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int nvml_sample(struct kp_nvml *n, struct kp_ctrace *t)
{
	struct kp_clk_sample s = { 0 };
	unsigned long long reasons = 0;
	/* NVML calls take tens to hundreds of µs: stamp the midpoint */
	uint64_t t0 = realtime_ns();
	if (n->get_clock(n->dev, NVML_CLOCK_SM, &s.sm_mhz) != NVML_SUCCESS)
		return -1;
	if (n->get_clock(n->dev, NVML_CLOCK_MEM, &s.mem_mhz) != NVML_SUCCESS)
		s.mem_mhz = 0;
	if (n->get_reasons && n->get_reasons(n->dev, &reasons) == NVML_SUCCESS)
		s.reasons = reasons;
	uint64_t t1 = realtime_ns();
	s.t_ns = t0 + (t1 - t0) / 2;
	return ctrace_add_sample(t, &s);
}

static void *sampler(void *arg)
{
	struct kp_nvml *n = arg;
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!n->stop) {
		nvml_sample(n, n->t);
		next.tv_nsec += (long)n->period_ms * 1000000L;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
	}
	return NULL;
}

int nvml_sampler_start(struct kp_nvml *n, struct kp_ctrace *t, int period_ms)
{
	if (!n->lib)
		return -1;
	n->t = t;
	n->period_ms = period_ms < 1 ? 1 : period_ms > 100 ? 100 : period_ms;
	n->stop = 0;
	if (pthread_create(&n->thread, NULL, sampler, n) != 0)
		return -1;
	n->running = 1;
	return 0;
}

void nvml_sampler_stop(struct kp_nvml *n)
{
	if (!n->running)
		return;
	n->stop = 1;
	pthread_join(n->thread, NULL);
	n->running = 0;
	nvml_sample(n, n->t); /* close the window after the last kernel */
}

void nvml_close(struct kp_nvml *n)
{
	nvml_sampler_stop(n);
	if (n->lib && n->shutdown)
		n->shutdown();
	n->lib = NULL;
}
