/*
 * devprops.h — Kineto's deviceProperties of a CUDA device, read through cudart.
 */
#ifndef KPROF_DEVPROPS_H
#define KPROF_DEVPROPS_H

struct kp_cdevprops;

/* Prototypes */
/*
 * Fill @d for CUDA device @id (cudaGetDeviceProperties, clock attributes).  Returns 0, or -1
 * with @d holding only the id (no device, or built without CUPTI).
 */
int devprops_read(struct kp_cdevprops *d, int id);
/* Number of CUDA devices, 0 when there is none or no driver (or without CUPTI). */
int devprops_count(void);
/* cudaDriverGetVersion (13000 for 13.0), 0 when unknown. */
int devprops_driver_version(void);
/* PCI bus id of device @id into @buf ("0000:18:00.0"); -1 when unknown. */
int devprops_pci_bus_id(int id, char *buf, int len);

#endif /* KPROF_DEVPROPS_H */
