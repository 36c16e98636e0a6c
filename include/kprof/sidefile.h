/*
 * sidefile.h — small side files read whole (device table, --fail-above @FILE, a capture suite).
 */
#ifndef KPROF_SIDEFILE_H
#define KPROF_SIDEFILE_H

#include <stddef.h>

#include "kprof/diag.h"

/* The largest side file read (kprof(1), FILES): the built-in device table is 40 kB */
#define SIDEFILE_MAX ((size_t)16 << 20)

/* Prototypes */
/*
 * The whole of @path, a regular file of at most @max bytes: malloc'ed, NUL-terminated (*len
 * bytes before the NUL), free with free().  NULL with @d set, naming @what ("device table")
 * and @path: cannot open or read it (status 4), not a regular file -- a FIFO, a device such
 * as /dev/zero, a directory -- (status 4, never read, so a FIFO cannot hang), or larger than
 * @max (status 3; a file growing while read stops at @max + 1 bytes).
 */
char *sidefile_read(const char *path, const char *what, size_t max, size_t *len,
		    struct kp_diag *d);

#endif /* KPROF_SIDEFILE_H */
