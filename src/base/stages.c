/*
 * stages.c — KPROF_TIMING's stage times: a clock and one line per stage on stderr.
 */
#include "kprof/stages.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int stages_on(void)
{
	const char *e = getenv("KPROF_TIMING");
	return e && *e && strcmp(e, "0") != 0;
}

int64_t stages_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void stages_print(FILE *out, const char *stage, int64_t ns, const char *fmt, ...)
{
	fprintf(out, "kprof: timing: %s %.4f s", stage, (double)ns / 1e9);
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		fputs(" (", out);
		vfprintf(out, fmt, ap);
		fputc(')', out);
		va_end(ap);
	}
	fputc('\n', out);
}
