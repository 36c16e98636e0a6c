/*
 * paths.h — command-line trace arguments to a list of files.
 */
#ifndef KPROF_PATHS_H
#define KPROF_PATHS_H

#include <stddef.h>

#include "kprof/diag.h"

/* Prototypes */
/*
 * @args with each directory replaced by its *.json, *.json.gz and *.json.zst files (name order; "-"
 * and files as given).  Returns a NULL-terminated malloc'ed vector of malloc'ed strings
 * (free with paths_free()), or NULL with @d set: a directory without traces (status 3) or
 * one that cannot be read (status 4).  A directory's entries that are not regular files
 * (a FIFO, a device, a directory named *.json) are left out, each a warning in @w (may be NULL).
 */
char **paths_expand(char *const *args, size_t nargs, size_t *npaths, struct kp_warnings *w,
		    struct kp_diag *d);
void paths_free(char **v);
/*
 * Create the missing directories above the file @path (as mkdir -p of its dirname; the
 * file itself is not created).  0, or -1 with @d set (status 4) naming the directory.
 */
int paths_mkdir_parents(const char *path, struct kp_diag *d);

#endif /* KPROF_PATHS_H */
