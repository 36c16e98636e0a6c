/*
 * opts.h — table-driven option parsing; "-h" output comes from the same table.
 */
#ifndef KPROF_OPTS_H
#define KPROF_OPTS_H

#include <stdio.h>

#include "kprof/diag.h"

enum kp_opt_type {
	OPT_FLAG,     /* int *dst = 1; "--no-NAME" sets 0 */
	OPT_STR,      /* const char **dst = arg (borrowed from argv) */
	OPT_INT,      /* long *dst; decimal, whole string, >= 0 (opts_parse_long) */
	OPT_DOUBLE,   /* double *dst; finite, >= 0 (opts_parse_double) */
	OPT_PCT,      /* double *dst; finite, 0 to 100; other ranges: OPT_CALLBACK */
	OPT_CHOICE,   /* int *dst = index into choices; error lists valid values */
	OPT_CALLBACK, /* cb(arg, dst) returns NULL or a static error reason */
};

struct kp_opt {
	const char *lname; /* long name without "--" */
	char sname;        /* short name or 0 */
	enum kp_opt_type type;
	const char *argname; /* "N", "FILE", ...; NULL for flags */
	const char *help;    /* one line */
	void *dst;
	const char *const *choices; /* OPT_CHOICE: NULL-terminated */
	const char *(*cb)(const char *arg, void *dst);
};

/* Prototypes */
/*
 * Parse argv[1..] (argv[0] is the command name).  Options and operands may mix;
 * "--" ends options; "--name=value" and "--name value" both work.  Positional
 * operands are compacted to argv[1 .. 1 + *nargs).  @opts ends with an entry
 * whose lname is NULL.  Returns 0 on success, 1
 * when -h/--help printed the usage on stdout (exit 0), -1 after printing a usage
 * error on stderr ("kprof: error: unknown option '--x' (did you mean '--y'?)"),
 * exit status 2.
 */
int opts_parse(const char *cmd, const char *synopsis, const struct kp_opt *opts, int argc,
	       char **argv, int *nargs);
/*
 * The one validated number parser behind OPT_INT, OPT_DOUBLE and callbacks: the whole of
 * @arg, decimal, finite (no "nan", "inf", overflow or underflow), within [@min, @max].
 * Returns NULL with *out set, or a static reason ("expects a number from 0 to 100").
 */
const char *opts_parse_long(const char *arg, long min, long max, long *out);
const char *opts_parse_double(const char *arg, double min, double max, double *out);
/*
 * The name of NULL-terminated @names closest to @word for "did you mean": one it starts, or
 * one within 2 edits; NULL when none is that close.
 */
const char *opts_suggest(const char *word, const char *const *names);
/* KPROF_PARSE_CHUNK's range in bytes (kprof-analyze(1), ENVIRONMENT) */
#define OPTS_CHUNK_MIN 64L
#define OPTS_CHUNK_MAX (1L << 30)
/*
 * Environment variables, read like options.  opts_env_long(): $@name, when set and not empty,
 * as opts_parse_long() reads an option: 1 with *out set, 0 when unset or empty, -1 with @d
 * set (status 2) naming the variable and the range.  opts_env_choice(): the index of its
 * value in NULL-terminated @choices, same returns (the error lists the valid values).
 */
int opts_env_long(const char *name, long min, long max, long *out, struct kp_diag *d);
int opts_env_choice(const char *name, const char *const *choices, int *out, struct kp_diag *d);
/*
 * Every KPROF_* variable the kprof command reads (kprof(1), ENVIRONMENT): KPROF_PARSE_CHUNK,
 * KPROF_SIMD, KPROF_INFLATE and KPROF_TIMING; 0, or -1 with @d set for the first bad one.
 * (KPROF_DEVICE_DB and KPROF_CAPTURE_SO are paths, checked when opened.)
 */
int opts_env_check(struct kp_diag *d);
/* OPT_CALLBACK for a clock in MHz (double *dst): 100 to 10000, beyond any GPU's range. */
const char *opts_cb_clock_mhz(const char *arg, void *dst);
void opts_usage(FILE *fp, const char *cmd, const char *synopsis, const struct kp_opt *opts);

#endif /* KPROF_OPTS_H */
