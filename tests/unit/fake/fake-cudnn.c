/*
 * fake-cudnn.c — a stand-in libcudnn.so.9 for test-shim.c (no GPU): the graph-API entry points
 * kprof-shim.so wraps, with plain int/void* types.  Descriptors are heap blocks; heuristics
 * report one configuration; cudnnBackendExecute returns 3000 (CUDNN_STATUS_EXECUTION_FAILED,
 * passed through as is) and counts its calls; cudnnGetVersion reports $FAKE_CUDNN_VERSION
 * (91900).
 */
#include <stdint.h>
#include <stdlib.h>

int fake_sets, fake_executes;

size_t cudnnGetVersion(void);
int cudnnBackendCreateDescriptor(int type, void **desc);
int cudnnBackendDestroyDescriptor(void *desc);
int cudnnBackendSetAttribute(void *desc, int name, int type, int64_t n, const void *v);
int cudnnBackendGetAttribute(void *desc, int name, int type, int64_t requested, int64_t *count,
			     void *v);
int cudnnBackendFinalize(void *desc);
int cudnnBackendExecute(void *handle, void *plan, void *vpack);

size_t cudnnGetVersion(void)
{
	const char *e = getenv("FAKE_CUDNN_VERSION");
	return e ? (size_t)atol(e) : 91900;
}

int cudnnBackendCreateDescriptor(int type, void **desc)
{
	int *d = malloc(sizeof(int));
	if (!d)
		return 2; /* CUDNN_STATUS_ALLOC_FAILED */
	*d = type;
	*desc = d;
	return 0;
}

int cudnnBackendDestroyDescriptor(void *desc)
{
	free(desc);
	return 0;
}

int cudnnBackendSetAttribute(void *desc, int name, int type, int64_t n, const void *v)
{
	(void)desc, (void)name, (void)type, (void)n, (void)v;
	fake_sets++;
	return 0;
}

int cudnnBackendGetAttribute(void *desc, int name, int type, int64_t requested, int64_t *count,
			     void *v)
{
	(void)desc, (void)name, (void)type, (void)v;
	*count = requested < 1 ? requested : 1; /* the caller's configurations, filled in */
	return 0;
}

int cudnnBackendFinalize(void *desc)
{
	(void)desc;
	return 0;
}

int cudnnBackendExecute(void *handle, void *plan, void *vpack)
{
	(void)handle, (void)plan, (void)vpack;
	fake_executes++;
	return 3000;
}
