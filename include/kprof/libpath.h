/*
 * libpath.h — where `kprof capture` looks for its libraries (kprof-capture.so, kprof-inject.so,
 * kprof-shim.so): an environment variable, else beside the binary (the build tree), else
 * ../lib/kprof relative to it (an installed tree, wherever PREFIX put it), else the library
 * directory compiled in.
 */
#ifndef KPROF_LIBPATH_H
#define KPROF_LIBPATH_H

#define LIBPATH_MAX 4
#define LIBPATH_LEN 4200

struct kp_libpath {
	int n;
	char path[LIBPATH_MAX][LIBPATH_LEN];
};

/* Prototypes */
/*
 * The candidate paths of @file in search order.  @env_val (the variable's value, NULL or ""
 * when unset) is the only candidate when set: an explicit choice is not second-guessed.  Else
 * <dir of @exe>/@file, <dir of @exe>/../lib/kprof/@file and @libdir/@file, without duplicates
 * (@exe NULL or without a '/': the first two are skipped).
 */
void libpath_candidates(struct kp_libpath *lp, const char *exe, const char *env_val,
			const char *libdir, const char *file);

#endif /* KPROF_LIBPATH_H */
