/*
 * fuzz.h — what every libFuzzer harness of tests/fuzz/ shares: CHECK(), a check beyond the
 * sanitizers that aborts with the harness's name (FUZZ_NAME, defined before the include) and
 * the line, and a memfd for harnesses that load their input by path.
 */
#ifndef KPROF_FUZZ_H
#define KPROF_FUZZ_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, FUZZ_NAME ": check failed: %s (line %d)\n", #c, __LINE__); \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* A memfd named FUZZ_NAME, its path (/proc/self/fd/N) in @path[0..@cap); the fd. */
static inline int fuzz_memfd(char *path, size_t cap)
{
	int fd = memfd_create(FUZZ_NAME, 0);
	CHECK(fd >= 0);
	snprintf(path, cap, "/proc/self/fd/%d", fd);
	return fd;
}

#endif /* KPROF_FUZZ_H */
