/*
 * fake-cudart.c — a stand-in libcudart.so.13 for test-shim.c (no GPU): cudaMalloc hands out
 * addresses from a counter and returns $FAKE_CUDART_STATUS (0), keeping its size.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

size_t fake_size;
int fake_calls;

int cudaMalloc(void **p, size_t size);

int cudaMalloc(void **p, size_t size)
{
	static uintptr_t next = 0x7f0000000000;
	const char *e = getenv("FAKE_CUDART_STATUS");
	fake_calls++;
	fake_size = size;
	if (e && atoi(e))
		return atoi(e);
	*p = (void *)next;
	next += size;
	return 0;
}
