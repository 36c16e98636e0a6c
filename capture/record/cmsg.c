/*
 * cmsg.c — a capture's progress lines, warnings, notes and error through the command's sinks.
 */
#include "record/cmsg.h"

#include <stdarg.h>
#include <stdio.h>

#include "kprof/capture.h"
#include "kprof/diag.h"

void cmsg_out(const struct kp_capture_opts *o, const char *fmt, ...)
{
	if (!o->out)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(o->out, fmt, ap);
	va_end(ap);
}

void cmsg_flush(const struct kp_capture_opts *o)
{
	if (o->out)
		fflush(o->out);
	if (o->msg)
		fflush(o->msg);
}

/* @prefix and the message, without its newline, through diag_print() */
static void vline(FILE *fp, const char *prefix, const char *fmt, va_list ap)
{
	char buf[2048];
	int n = snprintf(buf, sizeof(buf), "%s", prefix);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	diag_print(fp, buf);
}

void cmsg_warn(const struct kp_capture_opts *o, const char *fmt, ...)
{
	if (!o->msg)
		return;
	va_list ap;
	va_start(ap, fmt);
	vline(o->msg, "warning: ", fmt, ap);
	va_end(ap);
}

void cmsg_note(const struct kp_capture_opts *o, const char *fmt, ...)
{
	if (!o->msg)
		return;
	va_list ap;
	va_start(ap, fmt);
	vline(o->msg, "", fmt, ap);
	va_end(ap);
}

int cmsg_error(const struct kp_capture_opts *o, struct kp_diag *d, int status, const char *fmt,
	       ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(buf, sizeof(buf), "error: ");
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	if (d && !d->msg[0])
		return diag_error(d, status, "%s", buf);
	if (o->msg)
		diag_print(o->msg, buf);
	return -1;
}

int cmsg_pass(const struct kp_capture_opts *o, struct kp_diag *d, const struct kp_diag *e)
{
	if (d && !d->msg[0]) {
		*d = *e;
		return -1;
	}
	if (o->msg)
		diag_print(o->msg, e->msg);
	return -1;
}
