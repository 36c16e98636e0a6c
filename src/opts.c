/*
 * opts.c — table-driven option parsing; "-h" output comes from the same table.
 */
#include "kprof/opts.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Damerau-free edit distance for "did you mean" (short strings only). */
static int edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return 99;
	int d[64][64];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			d[i][j] = c;
		}
	return d[la][lb];
}

static const char *closest(const char *s, const char *const *cands, size_t n, size_t stride)
{
	const char *best = NULL;
	int bestd = 3;
	for (size_t i = 0; i < n; i++) {
		const char *c = *(const char *const *)((const char *)cands + i * stride);
		if (!c)
			continue;
		int dist = edit_distance(s, c);
		if (dist < bestd) {
			bestd = dist;
			best = c;
		}
	}
	return best;
}

static size_t nopts(const struct kp_opt *opts)
{
	size_t n = 0;
	while (opts[n].lname)
		n++;
	return n;
}

void opts_usage(FILE *fp, const char *cmd, const char *synopsis, const struct kp_opt *opts)
{
	fprintf(fp, "usage: kprof %s %s\n\n", cmd, synopsis);
	for (const struct kp_opt *o = opts; o->lname; o++) {
		char left[96];
		int n = 0;
		if (o->sname)
			n = snprintf(left, sizeof(left), "-%c, ", o->sname);
		else
			n = snprintf(left, sizeof(left), "    ");
		if (o->type == OPT_FLAG)
			snprintf(left + n, sizeof(left) - n, "--[no-]%s", o->lname);
		else
			snprintf(left + n, sizeof(left) - n, "--%s=%s", o->lname,
				 o->argname ? o->argname : "VALUE");
		fprintf(fp, "    %-28s %s", left, o->help ? o->help : "");
		if (o->type == OPT_CHOICE && o->choices) {
			fputs(" (", fp);
			for (const char *const *c = o->choices; *c; c++)
				fprintf(fp, "%s%s", c == o->choices ? "" : "|", *c);
			fputc(')', fp);
		}
		fputc('\n', fp);
	}
	fprintf(fp, "    %-28s %s\n", "-h, --help", "show this help");
}

static int bad(const char *cmd, const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "kprof: error: ");
	fprintf(stderr, fmt, a, b);
	fprintf(stderr, "\nkprof: see 'kprof %s -h'\n", cmd);
	return -1;
}

/* "a number from 0 to 100", "an integer >= 1": the range in words, in static storage */
static const char *range_reason(int integer, double min, double max, int unbounded)
{
	static _Thread_local char why[96];
	if (unbounded)
		snprintf(why, sizeof(why), "expects %s >= %.15g", integer ? "an integer" : "a number",
			 min);
	else
		snprintf(why, sizeof(why), "expects %s from %.15g to %.15g",
			 integer ? "an integer" : "a number", min, max);
	return why;
}

const char *opts_parse_long(const char *arg, long min, long max, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max)
		return range_reason(1, (double)min, (double)max, max == LONG_MAX);
	*out = v;
	return NULL;
}

const char *opts_parse_double(const char *arg, double min, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	/* ERANGE: overflow to inf or underflow to (sub)zero; isfinite: "nan", "inf" */
	if (errno || end == arg || *end || !isfinite(v) || v < min || v > max)
		return range_reason(0, min, max, max == HUGE_VAL);
	*out = v;
	return NULL;
}

const char *opts_cb_clock_mhz(const char *arg, void *dst)
{
	return opts_parse_double(arg, 100, 10000, dst);
}

static int set_value(const char *cmd, const struct kp_opt *o, const char *arg)
{
	const char *why = NULL;
	switch (o->type) {
	case OPT_STR:
		*(const char **)o->dst = arg;
		return 0;
	case OPT_INT:
		why = opts_parse_long(arg, 0, LONG_MAX, (long *)o->dst);
		break;
	case OPT_DOUBLE:
		why = opts_parse_double(arg, 0, HUGE_VAL, (double *)o->dst);
		break;
	case OPT_PCT:
		why = opts_parse_double(arg, 0, 100, (double *)o->dst);
		break;
	case OPT_CHOICE:
		for (int i = 0; o->choices[i]; i++)
			if (!strcmp(arg, o->choices[i])) {
				*(int *)o->dst = i;
				return 0;
			}
		{
			char list[512] = "";
			for (int i = 0; o->choices[i]; i++) {
				strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
				strncat(list, o->choices[i], sizeof(list) - strlen(list) - 1);
			}
			fprintf(stderr, "kprof: error: invalid value '%s' for '--%s' (valid: %s)\n", arg,
				o->lname, list);
			fprintf(stderr, "kprof: see 'kprof %s -h'\n", cmd);
			return -1;
		}
	case OPT_CALLBACK: {
		why = o->cb(arg, o->dst);
		if (why) {
			fprintf(stderr, "kprof: error: invalid value '%s' for '--%s': %s\n", arg, o->lname,
				why);
			fprintf(stderr, "kprof: see 'kprof %s -h'\n", cmd);
			return -1;
		}
		return 0;
	}
	case OPT_FLAG:
		return -1;
	}
	if (why) {
		fprintf(stderr, "kprof: error: option '--%s' %s, not '%s'\n", o->lname, why, arg);
		fprintf(stderr, "kprof: see 'kprof %s -h'\n", cmd);
		return -1;
	}
	return 0;
}

int opts_parse(const char *cmd, const char *synopsis, const struct kp_opt *opts, int argc,
	       char **argv, int *nargs)
{
	size_t n = nopts(opts);
	int nout = 1;
	int only_operands = 0;
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		if (only_operands || a[0] != '-' || a[1] == '\0') {
			argv[nout++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_operands = 1;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			opts_usage(stdout, cmd, synopsis, opts);
			return 1;
		}
		const struct kp_opt *o = NULL;
		const char *val = NULL;
		int negate = 0;
		if (a[1] == '-') {
			char name[128];
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
			if (len >= sizeof(name))
				len = sizeof(name) - 1;
			memcpy(name, a + 2, len);
			name[len] = '\0';
			if (eq)
				val = eq + 1;
			for (size_t k = 0; k < n && !o; k++) {
				if (!strcmp(name, opts[k].lname))
					o = &opts[k];
				else if (opts[k].type == OPT_FLAG && !strncmp(name, "no-", 3) &&
					 !strcmp(name + 3, opts[k].lname)) {
					o = &opts[k];
					negate = 1;
				}
			}
			if (!o) {
				const char *s = closest(name, &opts[0].lname, n, sizeof(opts[0]));
				if (s)
					return bad(cmd, "unknown option '--%s' (did you mean '--%s'?)", name, s);
				return bad(cmd, "unknown option '--%s'%s", name, "");
			}
		} else {
			for (size_t k = 0; k < n && !o; k++)
				if (opts[k].sname == a[1])
					o = &opts[k];
			if (!o) {
				char s[2] = { a[1], 0 };
				return bad(cmd, "unknown switch '-%s'%s", s, "");
			}
			if (a[2])
				val = a + 2;
		}
		if (o->type == OPT_FLAG) {
			if (val)
				return bad(cmd, "option '--%s' takes no value%s", o->lname, "");
			*(int *)o->dst = !negate;
			continue;
		}
		if (!val) {
			if (i + 1 >= argc)
				return bad(cmd, "option '--%s' requires a value%s", o->lname, "");
			val = argv[++i];
		}
		if (set_value(cmd, o, val) < 0)
			return -1;
	}
	argv[nout] = NULL;
	*nargs = nout - 1;
	return 0;
}
