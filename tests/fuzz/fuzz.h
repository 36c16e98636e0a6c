/*
 * fuzz.h — what every libFuzzer harness of tests/fuzz/ shares: CHECK(), a check beyond the
 * sanitizers that aborts with the harness's name (FUZZ_NAME, defined before the include) and
 * the line, and a memfd for harnesses that load their input by path (fuzz_memfd, fuzz_fill).
 */
#ifndef KPROF_FUZZ_H
#define KPROF_FUZZ_H

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

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

/* the memfd @fd holds @size bytes of @data, nothing else */
static inline void fuzz_fill(int fd, const uint8_t *data, size_t size)
{
	CHECK(ftruncate(fd, 0) == 0);
	CHECK(pwrite(fd, data, size, 0) == (ssize_t)size);
}

#endif /* KPROF_FUZZ_H */
