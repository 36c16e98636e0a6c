/*
 * output.c — -o FILE: open and close the report's file, write errors as KP_ENV.
 */
#include "kprof/output.h"

#include <errno.h>
#include <string.h>

FILE *output_open(const char *path, struct kp_diag *d)
{
	if (!path || !strcmp(path, "-"))
		return stdout;
	FILE *fp = fopen(path, "w");
	if (!fp) {
		d->status = KP_ENV;
		snprintf(d->msg, sizeof(d->msg), "error: cannot write '%s': %s", path,
			 strerror(errno));
	}
	return fp;
}

int output_close(FILE *fp, const char *path, struct kp_diag *d)
{
	if (fp == stdout)
		return 0;
	int bad = ferror(fp);
	if (fclose(fp) != 0 || bad) {
		d->status = KP_ENV;
		snprintf(d->msg, sizeof(d->msg), "error: cannot write '%s': %s", path,
			 bad ? "write error" : strerror(errno));
		return -1;
	}
	return 0;
}
