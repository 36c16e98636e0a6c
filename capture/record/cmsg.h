/*
 * cmsg.h — what a capture tells the user, through the sinks the command set in its options
 * (src/cli/cmd-capture.c: out = stdout, msg = stderr): progress and result lines, warnings and
 * notes as they happen, and the run's error, returned in a struct kp_diag (include/kprof/diag.h)
 * for the command to print.  Nothing below the command writes to stdout or stderr itself.
 * Not in kprof-inject.so nor kprof-shim.so: they run inside the traced program and print on
 * their own (capture/intercept/inject.c, shim.c).
 */
#ifndef KPROF_CMSG_H
#define KPROF_CMSG_H

struct kp_capture_opts;
struct kp_diag;

/* Prototypes */
/* A progress or result line (printf-style, the newline included) on o->out; none when NULL. */
void cmsg_out(const struct kp_capture_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* o->out flushed (the command's own output follows in order). */
void cmsg_flush(const struct kp_capture_opts *o);
/* "kprof: warning: TEXT" on o->msg (diag_print: escaped); none when NULL. */
void cmsg_warn(const struct kp_capture_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "kprof: TEXT" on o->msg: what a long run did ("--metrics: counters for 3 kernels"). */
void cmsg_note(const struct kp_capture_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * The run's error "error: TEXT" with exit status @status into @d (may be NULL) when @d holds
 * none yet; a later one of the same run (the results file after a failed case) is printed on
 * o->msg at once, so the user reads every one.  Returns -1.
 */
int cmsg_error(const struct kp_capture_opts *o, struct kp_diag *d, int status, const char *fmt,
	       ...) __attribute__((format(printf, 4, 5)));
/* The error @e (a library call's, "error: ...") taken as cmsg_error() takes one; -1. */
int cmsg_pass(const struct kp_capture_opts *o, struct kp_diag *d, const struct kp_diag *e);

#endif /* KPROF_CMSG_H */
