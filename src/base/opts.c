/*
 * opts.c — table-driven option parsing; "-h" output comes from the same table.
 */
#include "kprof/opts.h"

#include <errno.h>
#include <stdio.h>
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

const char *opts_suggest(const char *word, const char *const *names)
{
	const char *best = NULL;
	int bestd = 3;
	size_t len = strlen(word);
	for (size_t i = 0; names[i]; i++) {
		/* "ana" -> "analyze": a prefix is as good as one edit */
		int dist = len && !strncmp(word, names[i], len) ? 1 : edit_distance(word, names[i]);
		if (dist < bestd) {
			bestd = dist;
			best = names[i];
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

/* "-g, --group-by=KEY" or "    --[no-]stats": the left column of one help line */
static void usage_left(const struct kp_opt *o, char *left, size_t cap)
{
	int n = o->sname ? snprintf(left, cap, "-%c, ", o->sname) : snprintf(left, cap, "    ");
	if (o->type == OPT_FLAG)
		snprintf(left + n, cap - n, "--[no-]%s", o->lname);
	else
		snprintf(left + n, cap - n, "--%s=%s", o->lname, o->argname ? o->argname : "VALUE");
}

#define USAGE_MAX_LEFT 28 /* a longer left column puts its help on the next line (git) */

void opts_usage(FILE *fp, const char *cmd, const char *synopsis, const struct kp_opt *opts)
{
	char left[160];
	int width = (int)strlen("-h, --help");
	for (const struct kp_opt *o = opts; o->lname; o++) {
		usage_left(o, left, sizeof(left));
		int n = (int)strlen(left);
		if (n > width && n <= USAGE_MAX_LEFT)
			width = n;
	}
	fprintf(fp, "usage: kprof %s %s\n\n", cmd, synopsis);
	for (const struct kp_opt *o = opts; o->lname; o++) {
		usage_left(o, left, sizeof(left));
		if ((int)strlen(left) > width)
			fprintf(fp, "    %s\n    %-*s  %s", left, width, "",
				o->help ? o->help : "");
		else
			fprintf(fp, "    %-*s  %s", width, left, o->help ? o->help : "");
		if (o->type == OPT_CHOICE && o->choices) {
			fputs(" (", fp);
			for (const char *const *c = o->choices; *c; c++)
				fprintf(fp, "%s%s", c == o->choices ? "" : "|", *c);
			fputc(')', fp);
		}
		fputc('\n', fp);
	}
	fprintf(fp, "    %-*s  %s\n", width, "-h, --help", "show this help");
}

static int bad(const char *cmd, const char *fmt, const char *a, const char *b)
{
	diag_fprintf(stderr, "kprof: error: ");
	diag_fprintf(stderr, fmt, a, b);
	diag_fprintf(stderr, "\nkprof: see 'kprof %s -h'\n", cmd);
	return -1;
}

/* "a number from 0 to 100", "an integer >= 1": the range in words, in static storage */
static const char *range_reason(int integer, double min, double max, int unbounded)
{
	static _Thread_local char why[96];
	if (unbounded)
		snprintf(why, sizeof(why), "expects %s >= %.15g",
			 integer ? "an integer" : "a number", min);
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

int opts_env_long(const char *name, long min, long max, long *out, struct kp_diag *d)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	const char *why = opts_parse_long(v, min, max, out);
	if (why)
		return diag_error(d, KP_USAGE, "error: invalid value '%s' for %s: %s", v, name, why);
	return 1;
}

int opts_env_choice(const char *name, const char *const *choices, int *out, struct kp_diag *d)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	char valid[256];
	size_t n = 0;
	valid[0] = '\0';
	for (int i = 0; choices[i]; i++) {
		if (!strcmp(v, choices[i])) {
			*out = i;
			return 1;
		}
		n += snprintf(valid + n, n < sizeof(valid) ? sizeof(valid) - n : 0, "%s%s",
			      i ? ", " : "", choices[i]);
		if (n >= sizeof(valid))
			n = sizeof(valid) - 1;
	}
	return diag_error(d, KP_USAGE, "error: invalid value '%s' for %s (valid: %s)", v, name,
			  valid);
}

/* clang-format off */
static const char *const env_simd[] = { "scalar", "sse2", "avx2", NULL };
static const char *const env_inflate[] = { "zlib", "isal", NULL };
static const char *const env_bool[] = { "0", "1", NULL };
/* clang-format on */

int opts_env_check(struct kp_diag *d)
{
	long l;
	int k;
	if (opts_env_long("KPROF_PARSE_CHUNK", OPTS_CHUNK_MIN, OPTS_CHUNK_MAX, &l, d) < 0 ||
	    opts_env_choice("KPROF_SIMD", env_simd, &k, d) < 0 ||
	    opts_env_choice("KPROF_INFLATE", env_inflate, &k, d) < 0 ||
	    opts_env_choice("KPROF_TIMING", env_bool, &k, d) < 0)
		return -1;
	return 0;
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
			diag_fprintf(stderr, "kprof: error: invalid value '%s' for '--%s' (valid: %s)\n",
				arg, o->lname, list);
			diag_fprintf(stderr, "kprof: see 'kprof %s -h'\n", cmd);
			return -1;
		}
	case OPT_CALLBACK: {
		why = o->cb(arg, o->dst);
		if (why) {
			diag_fprintf(stderr, "kprof: error: invalid value '%s' for '--%s': %s\n", arg,
				o->lname, why);
			diag_fprintf(stderr, "kprof: see 'kprof %s -h'\n", cmd);
			return -1;
		}
		return 0;
	}
	case OPT_FLAG:
		return -1;
	}
	if (why) {
		diag_fprintf(stderr, "kprof: error: option '--%s' %s, not '%s'\n", o->lname, why, arg);
		diag_fprintf(stderr, "kprof: see 'kprof %s -h'\n", cmd);
		return -1;
	}
	return 0;
}

enum { FIND_NONE, FIND_ONE, FIND_AMBIGUOUS, FIND_HELP };

/* Does @name ("group", "no-st") name @o, exactly or as a prefix?  2 exact, 1 prefix, 0 no. */
static int name_match(const struct kp_opt *o, const char *name, int *negate)
{
	size_t len = strlen(name);
	*negate = 0;
	if (!strcmp(name, o->lname))
		return 2;
	if (o->type == OPT_FLAG && !strncmp(name, "no-", 3)) {
		*negate = 1;
		if (!strcmp(name + 3, o->lname))
			return 2;
		if (name[3] && !strncmp(name + 3, o->lname, len - 3))
			return 1;
	}
	*negate = 0;
	return len && !strncmp(name, o->lname, len);
}

/*
 * The option @name names: an exact long name (or "no-" + a flag's) wins; else a prefix of
 * exactly one ("--group" for "--group-by", "--no-st" for "--no-stats", as in git and GNU
 * getopt); "--help" and its prefixes count as one more candidate.
 */
static int find_long(const struct kp_opt *opts, size_t n, const char *name,
		     const struct kp_opt **out, int *negate)
{
	const struct kp_opt *pick = NULL;
	int npick = 0, pick_neg = 0, neg;
	*out = NULL;
	for (size_t k = 0; k < n; k++) {
		int m = name_match(&opts[k], name, &neg);
		if (m == 2) {
			*out = &opts[k];
			*negate = neg;
			return FIND_ONE;
		}
		if (m == 1) {
			pick = &opts[k];
			pick_neg = neg;
			npick++;
		}
	}
	int help = !strcmp(name, "help") || (*name && !strncmp(name, "help", strlen(name)));
	if (help && (npick == 0 || !strcmp(name, "help")))
		return FIND_HELP;
	if (npick + help > 1)
		return FIND_AMBIGUOUS;
	if (npick == 1) {
		*out = pick;
		*negate = pick_neg;
		return FIND_ONE;
	}
	return FIND_NONE;
}

/* "'--device', '--device-db'": the options @name is a prefix of */
static void candidates(const struct kp_opt *opts, size_t n, const char *name, char *buf, size_t cap)
{
	size_t used = 0;
	int neg;
	buf[0] = '\0';
	for (size_t k = 0; k < n; k++)
		if (name_match(&opts[k], name, &neg) == 1 && used < cap)
			used += (size_t)snprintf(buf + used, cap - used, "%s'--%s%s'",
						 used ? ", " : "", neg ? "no-" : "", opts[k].lname);
	if (*name && !strncmp(name, "help", strlen(name)) && used < cap)
		snprintf(buf + used, cap - used, "%s'--help'", used ? ", " : "");
}

/* "--name" or "--name=value": the option it names, its value if inline; 1 for help, -1 bad */
static int parse_long(const char *cmd, const char *synopsis, const struct kp_opt *opts, size_t n,
		      const char *a, const struct kp_opt **o, const char **val, int *negate)
{
	char name[128];
	const char *eq = strchr(a + 2, '=');
	size_t len = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
	if (len >= sizeof(name))
		len = sizeof(name) - 1;
	memcpy(name, a + 2, len);
	name[len] = '\0';
	if (eq)
		*val = eq + 1;
	int r = find_long(opts, n, name, o, negate);
	if (r == FIND_HELP) {
		if (*val)
			return bad(cmd, "option '--%s' takes no value%s", "help", "");
		opts_usage(stdout, cmd, synopsis, opts);
		return 1;
	}
	if (r == FIND_AMBIGUOUS) {
		char list[512];
		candidates(opts, n, name, list, sizeof(list));
		return bad(cmd, "ambiguous option '--%s' (could be %s)", name, list);
	}
	if (!*o) {
		const char *s = closest(name, &opts[0].lname, n, sizeof(opts[0]));
		if (s)
			return bad(cmd, "unknown option '--%s' (did you mean '--%s'?)", name, s);
		return bad(cmd, "unknown option '--%s'%s", name, "");
	}
	return 0;
}

/* "-n" or "-n5": the option it names, its value if attached; -1 if unknown */
static int parse_short(const char *cmd, const struct kp_opt *opts, size_t n, const char *a,
		       const struct kp_opt **o, const char **val)
{
	for (size_t k = 0; k < n && !*o; k++)
		if (opts[k].sname == a[1])
			*o = &opts[k];
	if (!*o) {
		char s[2] = { a[1], 0 };
		return bad(cmd, "unknown switch '-%s'%s", s, "");
	}
	if (a[2])
		*val = a + 2;
	return 0;
}

/* Set @o from @val, or from the next argument (advancing *@i) when it needs one; -1 if bad */
static int apply_option(const char *cmd, const struct kp_opt *o, const char *val, int negate,
			int argc, char **argv, int *i)
{
	if (o->type == OPT_FLAG) {
		if (val)
			return bad(cmd, "option '--%s' takes no value%s", o->lname, "");
		*(int *)o->dst = !negate;
		return 0;
	}
	if (!val) {
		if (*i + 1 >= argc)
			return bad(cmd, "option '--%s' requires a value%s", o->lname, "");
		val = argv[++*i];
	}
	return set_value(cmd, o, val) < 0 ? -1 : 0;
}

/* One option argument argv[*@i]: parse and apply it; 1 for help, -1 bad, else 0 */
static int parse_option(const char *cmd, const char *synopsis, const struct kp_opt *opts, size_t n,
			int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
		opts_usage(stdout, cmd, synopsis, opts);
		return 1;
	}
	const struct kp_opt *o = NULL;
	const char *val = NULL;
	int negate = 0;
	int r = a[1] == '-' ? parse_long(cmd, synopsis, opts, n, a, &o, &val, &negate)
			    : parse_short(cmd, opts, n, a, &o, &val);
	if (r)
		return r;
	return apply_option(cmd, o, val, negate, argc, argv, i);
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
		int r = parse_option(cmd, synopsis, opts, n, argc, argv, &i);
		if (r)
			return r;
	}
	argv[nout] = NULL;
	*nargs = nout - 1;
	return 0;
}
