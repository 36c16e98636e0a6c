/*
 * libpath.c — the search path of kprof's capture libraries (kprof-capture(1), ENVIRONMENT).
 */
#include "kprof/libpath.h"

#include <stdio.h>
#include <string.h>

static void add(struct kp_libpath *lp, const char *p)
{
	for (int i = 0; i < lp->n; i++)
		if (!strcmp(lp->path[i], p))
			return;
	if (lp->n < LIBPATH_MAX)
		snprintf(lp->path[lp->n++], LIBPATH_LEN, "%s", p);
}

void libpath_candidates(struct kp_libpath *lp, const char *exe, const char *env_val,
			const char *libdir, const char *file)
{
	char buf[LIBPATH_LEN];
	lp->n = 0;
	if (env_val && *env_val) {
		add(lp, env_val);
		return;
	}
	const char *slash = exe ? strrchr(exe, '/') : NULL;
	if (slash) {
		int dir = (int)(slash - exe);
		if (dir < LIBPATH_LEN - 64) {
			snprintf(buf, sizeof(buf), "%.*s/%s", dir, exe, file);
			add(lp, buf);
			snprintf(buf, sizeof(buf), "%.*s/../lib/kprof/%s", dir, exe, file);
			add(lp, buf);
		}
	}
	if (libdir && *libdir) {
		snprintf(buf, sizeof(buf), "%s/%s", libdir, file);
		add(lp, buf);
	}
}
