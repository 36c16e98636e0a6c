/*
 * diag.c — error messages and grouped warnings.
 */
#include "kprof/diag.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/arena.h"
#include "kprof/utf8.h"

/* the bytes of a warning's location kept in its message (diag_warn_add) */
#define WARN_LOC_MAX 512

int diag_error(struct kp_diag *d, int status, const char *fmt, ...)
{
	if (!d)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
	d->msg[utf8_prefix(d->msg, strlen(d->msg), sizeof(d->msg))] = '\0';
	d->status = status;
	return -1;
}

/* The kind @kind of @w, added empty when new (@kind kept as given, or copied when @copy). */
static struct kp_warn_kind *warn_kind(struct kp_warnings *w, const char *kind, int copy)
{
	for (int i = 0; i < w->nkinds; i++)
		if (w->k[i].kind == kind || strcmp(w->k[i].kind, kind) == 0)
			return &w->k[i];
	if (w->nkinds == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 8;
		w->k = xrealloc(w->k, (size_t)w->cap * sizeof(*w->k));
	}
	struct kp_warn_kind *k = &w->k[w->nkinds++];
	memset(k, 0, sizeof(*k));
	k->kind = copy ? (k->kind_copy = xstrdup(kind)) : kind;
	return k;
}

void diag_warn_add(struct kp_warnings *w, const char *kind, const char *loc, const char *fmt, ...)
{
	struct kp_warn_kind *k = warn_kind(w, kind, 0);
	if (k->count++ == 0 && loc)
		k->first_loc = xstrdup(loc);
	/* only kept messages are formatted: a million anomalies cost a counter each */
	if (k->nshown == KP_WARN_SHOW && !w->all)
		return;
	char buf[1024];
	int n = 0;
	if (loc) {
		/* a location is a path or a name out of the input: at most WARN_LOC_MAX bytes of it
		 * (cut between UTF-8 sequences, "..." after), so "warning: " and the text always
		 * fit after it (a longer one once had the next snprintf start past buf) */
		size_t ll = strlen(loc), keep = utf8_prefix(loc, ll, WARN_LOC_MAX);
		n = snprintf(buf, sizeof(buf), "%.*s%s: ", (int)keep, loc, keep < ll ? "..." : "");
	}
	n += snprintf(buf + n, sizeof(buf) - n, "warning: ");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	buf[utf8_prefix(buf, strlen(buf), sizeof(buf))] = '\0'; /* a cut name stays UTF-8 */
	if (k->nshown < KP_WARN_SHOW) {
		k->text_off[k->nshown] = n;
		k->shown[k->nshown++] = xstrdup(buf);
		return;
	}
	if (k->nmore == k->capmore) {
		k->capmore = k->capmore ? k->capmore * 2 : 16;
		k->more = xrealloc(k->more, (size_t)k->capmore * sizeof(*k->more));
		k->more_off = xrealloc(k->more_off, (size_t)k->capmore * sizeof(*k->more_off));
	}
	k->more_off[k->nmore] = n;
	k->more[k->nmore++] = xstrdup(buf);
}

void diag_warn_restore(struct kp_warnings *w, const char *kind, long count, char *const *shown,
		       int nshown)
{
	struct kp_warn_kind *k = warn_kind(w, kind, 1);
	long add = count > nshown ? count : nshown; /* a summary's count: input, so saturating */
	k->count = add > LONG_MAX - k->count ? LONG_MAX : k->count + add;
	for (int j = 0; j < nshown && k->nshown < KP_WARN_SHOW; j++) {
		/* TEXT starts after the first "warning: " (diag_warn_add() wrote it so) */
		const char *t = strstr(shown[j], "warning: ");
		k->text_off[k->nshown] = t ? (int)(t - shown[j]) + 9 : 0;
		k->shown[k->nshown++] = xstrdup(shown[j]);
	}
}

/* "LOC: warning: [base] TEXT" + @tail */
static void emit_msg(const char *msg, int off, const char *side, const char *tail,
		     void (*emit)(const char *line, void *arg), void *arg)
{
	char buf[1400];
	if (side)
		snprintf(buf, sizeof(buf), "%.*s[%s] %s%s", off, msg, side, msg + off, tail);
	else
		snprintf(buf, sizeof(buf), "%s%s", msg, tail);
	emit(buf, arg);
}

long diag_warn_lines(const struct kp_warnings *w, const char *side,
		     void (*emit)(const char *line, void *arg), void *arg)
{
	long n = 0;
	for (int i = 0; i < w->nkinds; i++) {
		const struct kp_warn_kind *k = &w->k[i];
		if (!k->nshown)
			continue;
		if (w->all) {
			for (int j = 0; j < k->nshown; j++, n++)
				emit_msg(k->shown[j], k->text_off[j], side, "", emit, arg);
			for (long j = 0; j < k->nmore; j++, n++)
				emit_msg(k->more[j], k->more_off[j], side, "", emit, arg);
			continue;
		}
		char tail[160] = "";
		if (k->count > 1)
			snprintf(tail, sizeof(tail), " (first of %ld %s)", k->count, k->kind);
		emit_msg(k->shown[0], k->text_off[0], side, tail, emit, arg);
		n++;
	}
	return n;
}

void diag_print(FILE *fp, const char *line)
{
	fputs("kprof: ", fp);
	utf8_fputs_visible(line, fp);
	fputc('\n', fp);
}

void diag_fprintf(FILE *fp, const char *fmt, ...)
{
	va_list ap;
	char *text = NULL;
	va_start(ap, fmt);
	int n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	struct kp_visbuf b = { 0 };
	fputs(utf8_visible_lines(text, &b), fp);
	utf8_visible_free(&b);
	free(text);
}

void diag_note_print(FILE *fp, const char *note)
{
	fputs("kprof: note: ", fp);
	utf8_fputs_visible(note, fp);
	fputc('\n', fp);
}

static void print_line(const char *line, void *arg)
{
	diag_print(arg, line);
}

void diag_warn_print(const struct kp_warnings *w, enum kp_warn_mode mode, const char *side,
		     FILE *fp)
{
	if (mode != WARN_QUIET)
		diag_warn_lines(w, side, print_line, fp);
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
		for (long j = 0; j < w->k[i].nmore; j++)
			free(w->k[i].more[j]);
		free(w->k[i].more);
		free(w->k[i].more_off);
		free(w->k[i].first_loc);
		free(w->k[i].kind_copy);
	}
	free(w->k);
	memset(w, 0, sizeof(*w));
}
