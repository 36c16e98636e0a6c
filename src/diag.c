/*
 * diag.c — error messages and grouped warnings.
 */
#include "kprof/diag.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/arena.h"

int diag_error(struct kp_diag *d, int status, const char *fmt, ...)
{
	if (!d)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
	d->status = status;
	return -1;
}

void diag_warn_add(struct kp_warnings *w, const char *kind, const char *loc, const char *fmt, ...)
{
	struct kp_warn_kind *k = NULL;
	for (int i = 0; i < w->nkinds; i++)
		if (w->k[i].kind == kind || strcmp(w->k[i].kind, kind) == 0) {
			k = &w->k[i];
			break;
		}
	if (!k) {
		if (w->nkinds == w->cap) {
			w->cap = w->cap ? 2 * w->cap : 8;
			w->k = xrealloc(w->k, (size_t)w->cap * sizeof(*w->k));
		}
		k = &w->k[w->nkinds++];
		memset(k, 0, sizeof(*k));
		k->kind = kind;
	}
	if (k->count++ == 0 && loc)
		k->first_loc = xstrdup(loc);
	if (k->nshown < KP_WARN_SHOW) {
		char buf[1024];
		int n = 0;
		if (loc)
			n = snprintf(buf, sizeof(buf), "%s: ", loc);
		n += snprintf(buf + n, sizeof(buf) - n, "warning: ");
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
		va_end(ap);
		k->shown[k->nshown++] = xstrdup(buf);
	}
}

void diag_warn_print(const struct kp_warnings *w, FILE *fp)
{
	for (int i = 0; i < w->nkinds; i++) {
		const struct kp_warn_kind *k = &w->k[i];
		for (int j = 0; j < k->nshown; j++)
			fprintf(fp, "kprof: %s\n", k->shown[j]);
		if (k->count > k->nshown) {
			fprintf(fp, "kprof: warning: skipped %ld more %s", k->count - k->nshown, k->kind);
			if (k->first_loc)
				fprintf(fp, " (first at %s)", k->first_loc);
			fputc('\n', fp);
		}
	}
}

long diag_warn_total(const struct kp_warnings *w)
{
	long n = 0;
	for (int i = 0; i < w->nkinds; i++)
		n += w->k[i].count;
	return n;
}

void diag_warn_free(struct kp_warnings *w)
{
	for (int i = 0; i < w->nkinds; i++) {
		for (int j = 0; j < w->k[i].nshown; j++)
			free(w->k[i].shown[j]);
		free(w->k[i].first_loc);
	}
	free(w->k);
	memset(w, 0, sizeof(*w));
}
