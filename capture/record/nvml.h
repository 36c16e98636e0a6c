/*
 * nvml.h — NVML through dlopen (no nvml.h on the build machine) and the SM-clock sampler thread.
 */
#ifndef KPROF_NVML_H
#define KPROF_NVML_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct kp_ctrace;

/* An opened NVML device; zero-initialise before nvml_open(). */
struct kp_nvml {
	void *lib; /* dlopen handle; never dlclose'd while the sampler runs */
	void *dev; /* nvmlDevice_t */
	int (*get_clock)(void *dev, int type, unsigned *mhz);
	int (*get_max_clock)(void *dev, int type, unsigned *mhz);
	int (*get_reasons)(void *dev, unsigned long long *reasons);
	int (*shutdown)(void);
	pthread_t thread;
	int running;
	volatile int stop;
	int period_ms;
	struct kp_ctrace *t;
};

/* Prototypes */
/*
 * Load @libname (normally "libnvidia-ml.so.1"), initialise NVML and find the device with PCI bus
 * id @pci_bus_id ("0000:18:00.0"; NULL: device index 0).  Returns 0, or -1 with a one-line
 * reason in @why ("cannot load libnvidia-ml.so.1: ...").
 */
int nvml_open(struct kp_nvml *n, const char *libname, const char *pci_bus_id, char *why,
	      size_t whylen);
/* Max SM and memory clocks in MHz; 0 where NVML does not know. */
void nvml_max_clocks(struct kp_nvml *n, unsigned *sm_mhz, unsigned *mem_mhz);
/* Take one sample now into @t (also used by the thread). Returns 0 or -1. */
int nvml_sample(struct kp_nvml *n, struct kp_ctrace *t);
/* Sample every @period_ms (1..100) into @t until nvml_sampler_stop(). */
int nvml_sampler_start(struct kp_nvml *n, struct kp_ctrace *t, int period_ms);
void nvml_sampler_stop(struct kp_nvml *n);
void nvml_close(struct kp_nvml *n);

#endif /* KPROF_NVML_H */
