/*
 * devdb.c — the device_db/ stanzas -> dense peaks per precision and clock, DRAM B/s;
 * name matching (exact, then word-anchored patterns longest first).
 */
#include "kprof/devdb.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/diag.h"
#include "kprof/sidefile.h"

/* One pattern of one entry; db->pat is sorted longest first, then file order. */
struct kp_devdb_pat {
	const char *text;
	size_t len;
	const char *how; /* "pattern 'TEXT'" */
	int dev;
	int order; /* position in the file, for a stable sort */
};

/* Confidence flags, strongest first; datasheet and observed rank equal. */
static const char *const flag_names[] = { "datasheet", "observed",   "secondary",
					  "derived",   "unverified", NULL };

static int flag_rank(const char *f)
{
	for (int i = 0; flag_names[i]; i++)
		if (f == flag_names[i])
			return i <= 1 ? 0 : i - 1;
	return 3;
}

static const char *flag_lookup(const char *s, size_t n)
{
	for (int i = 0; flag_names[i]; i++)
		if (strlen(flag_names[i]) == n && !memcmp(s, flag_names[i], n))
			return flag_names[i];
	return NULL;
}

/* ASCII-only case folding: device names are ASCII and the locale must not matter. */
static int lc(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 'a' - 'A' : c;
}

static int is_alnum(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int ieq(const char *a, size_t na, const char *b, size_t nb)
{
	if (na != nb)
		return 0;
	for (size_t i = 0; i < na; i++)
		if (lc((unsigned char)a[i]) != lc((unsigned char)b[i]))
			return 0;
	return 1;
}

static void trim(const char **s, size_t *n)
{
	while (*n && (**s == ' ' || **s == '\t'))
		(*s)++, (*n)--;
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r'))
		(*n)--;
}

/*
 * Parser state for one text.  Keys set in the current stanza are tracked so a
 * repeated key is an error while a key inherited through 'base' may be overridden.
 */
/* clang-format off */
enum key {
	K_BASE, K_EXACT, K_PATTERN, K_MATCH_SMS, K_SMS, K_CLK, K_MEM, K_DRAM, K_MEMCLK,
	K_BUS, K_NOSCALE, K_CONF, K_SOURCE, K_CC, K_HOST, K_PEER, K_L2, K_PEAK /* + prec */
};
/* clang-format on */

static const char *const key_names[] = {
	"base",        "exact",       "pattern",          "match_sms",
	"sms",         "clk_max_mhz", "mem_gb",           "dram_gbs",
	"mem_clk_mhz", "bus_bits",    "no_clock_scaling", "confidence",
	"source",      "cc",          "host_link",        "peer_gbs",
	"l2_mb",       NULL
};

static const char *const prec_keys[PREC_N] = {
	"fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8"
};

struct parser {
	struct kp_devdb *db;
	struct kp_diag *d;
	const char *origin;
	int line;
	const char *lb; /* the current line's first byte */
	int col;        /* column errors point at (1-based) */
	struct kp_device *cur; /* NULL before the first [entry] */
	unsigned long set;     /* bit per enum key set in this stanza */
	int peak_line[PREC_N]; /* where each peak was set (the entry's line if inherited) */
	int inherited;         /* the stanza began with 'base' */
	int maxdev;
};

static int perr_lc(struct parser *p, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* "ORIGIN:LINE:COL: error: ..." (STYLE.md's located errors) */
static int perr_lc(struct parser *p, int line, int col, const char *fmt, ...)
{
	char why[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return diag_error(p->d, KP_BADINPUT, "%s:%d:%d: error: %s", p->origin, line, col, why);
}

/* errors about a whole stanza point at its first column */
#define perr_at(p, line, ...) perr_lc((p), (line), 1, __VA_ARGS__)
#define perr(p, ...) perr_lc((p), (p)->line, (p)->col, __VA_ARGS__)

/* Point the next error at @s, a byte of the current line. */
static struct parser *at(struct parser *p, const char *s)
{
	p->col = (int)(s - p->lb) + 1;
	return p;
}

/* Split @s on @sep into trimmed, non-empty arena strings. */
static int split_list(struct parser *p, const char *key, const char *s, size_t n, const char ***out,
		      int *nout)
{
	int cnt = 1;
	for (size_t i = 0; i < n; i++)
		cnt += s[i] == ',';
	const char **v = arena_alloc(&p->db->arena, sizeof(*v) * cnt);
	int k = 0;
	while (1) {
		const char *comma = memchr(s, ',', n);
		size_t len = comma ? (size_t)(comma - s) : n;
		const char *item = s;
		size_t ilen = len;
		trim(&item, &ilen);
		if (!ilen)
			return perr(p, "empty name in '%s' of [%s]", key, p->cur->name);
		v[k++] = arena_strndup(&p->db->arena, item, ilen);
		if (!comma)
			break;
		n -= len + 1;
		s = comma + 1;
	}
	*out = v;
	*nout = k;
	return 0;
}

/* Split a value into at most @max whitespace-separated tokens. */
static int tokens(const char *s, size_t n, const char **tok, size_t *tlen, int max)
{
	int k = 0;
	size_t i = 0;
	while (i < n) {
		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i == n)
			break;
		size_t start = i;
		while (i < n && s[i] != ' ' && s[i] != '\t')
			i++;
		if (k == max)
			return max + 1;
		tok[k] = s + start;
		tlen[k] = i - start;
		k++;
	}
	return k;
}

static int parse_num(const char *s, size_t n, double *v)
{
	char buf[64];
	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	char *end;
	errno = 0;
	*v = strtod(buf, &end);
	if (errno || *end || !isfinite(*v) || *v < 0)
		return -1;
	return 0;
}

/*
 * Physical ranges of the numbers, in the table's units.  They are generous, 10x to 100x
 * beyond the parts of 2026 on either side (this file's entries: 40..304 SMs/CUs, 1410..2520
 * MHz, 16..288 GB, 300..8000 GB/s, 4..256 MB of L2, FP64 0.25 to FP8 4614 TFLOPS), so that a
 * future part fits while a unit slip (TB/s written as GB/s, a sparse or per-node figure) or a
 * value that would make a peak infinite or zero does not.
 */
struct range {
	double lo, hi;
	int zero_ok; /* 0 also valid: "none" */
};
static const struct range r_sms = { 1, 100000, 0 };      /* SMs/CUs per device */
static const struct range r_clk = { 100, 10000, 0 };     /* SM clock, MHz */
static const struct range r_mem = { 0.1, 100000, 0 };    /* GB */
static const struct range r_dram = { 1, 1000000, 0 };    /* GB/s; 1 PB/s is 125 B200s */
static const struct range r_memclk = { 100, 100000, 0 }; /* memory clock, MHz (HBM ~1-4
							    GHz, GDDR as reported ~10-16) */
static const struct range r_bus = { 8, 65536, 0 };       /* bits (HBM4: 2048 per stack) */
static const struct range r_link = { 1, 100000, 1 };     /* peer/host link GB/s; 0: none */
static const struct range r_l2 = { 0.25, 65536, 0 };     /* L2 / last-level cache, MiB */
static const struct range r_peak = { 0.01, 100000, 0 };  /* TFLOPS (TOPS) */

/* @v (the token @tok) within @r (@unit is appended to the bounds), else a located error. */
static int check_range(struct parser *p, const char *key, const char *tok, size_t tlen, double v,
		       const struct range *r, double scale, const char *unit)
{
	if ((v >= r->lo * scale && v <= r->hi * scale) || (r->zero_ok && v == 0))
		return 0;
	const char *sp = unit[0] ? " " : "";
	return perr(at(p, tok), "%s = %.*s%s%s is outside %s%.15g..%.15g%s%s in [%s]", key,
		    (int)tlen, tok, sp, unit, r->zero_ok ? "0 or " : "", r->lo * scale,
		    r->hi * scale, sp, unit, p->cur->name);
}

static int bad_flag(struct parser *p, const char *s, size_t n)
{
	return perr(at(p, s),
		    "unknown flag '%.*s' in [%s] (valid: datasheet, secondary, derived, "
		    "unverified, observed)",
		    (int)n, s, p->cur->name);
}

/* "N [flag]" for the scalar keys; @integer rejects fractions; @r: the valid range. */
static int scalar(struct parser *p, const char *key, const char *s, size_t n, int integer,
		  const struct range *r, double *v, const char **flag)
{
	const char *tok[2];
	size_t tlen[2];
	int k = tokens(s, n, tok, tlen, 2);
	if (k < 1 || k > 2)
		return perr(p, "expected 'NUMBER [FLAG]' for '%s' in [%s]", key, p->cur->name);
	if (parse_num(tok[0], tlen[0], v) < 0 || (integer && (*v != floor(*v) || *v > 1e9)))
		return perr(p, "bad %s '%.*s' for '%s' in [%s]", integer ? "integer" : "number",
			    (int)tlen[0], tok[0], key, p->cur->name);
	if (check_range(p, key, tok[0], tlen[0], *v, r, 1, "") < 0)
		return -1;
	*flag = NULL;
	if (k == 2 && !(*flag = flag_lookup(tok[1], tlen[1])))
		return bad_flag(p, tok[1], tlen[1]);
	return 0;
}

/* "VALUE UNIT [@MHZ] FLAG" */
static int parse_peak(struct parser *p, enum kp_prec prec, const char *s, size_t n)
{
	const char *tok[4];
	size_t tlen[4];
	int k = tokens(s, n, tok, tlen, 4);
	const char *key = prec_keys[prec];
	struct kp_peak *pk = &p->cur->peak[prec];
	if (k < 3 || k > 4)
		return perr(p, "expected 'VALUE UNIT [@MHZ] FLAG' for 'peak.%s' in [%s]", key,
			    p->cur->name);
	double v;
	if (parse_num(tok[0], tlen[0], &v) < 0)
		return perr(p, "bad number '%.*s' for 'peak.%s' in [%s]", (int)tlen[0], tok[0], key,
			    p->cur->name);
	double scale = 0;
	int ops = prec == PREC_INT8;
	if (ieq(tok[1], tlen[1], ops ? "TOPS" : "TFLOPS", ops ? 4 : 6))
		scale = 1e12;
	else if (ieq(tok[1], tlen[1], ops ? "GOPS" : "GFLOPS", ops ? 4 : 6))
		scale = 1e9;
	else
		return perr(at(p, tok[1]), "unknown unit '%.*s' for 'peak.%s' in [%s] (valid: %s)",
			    (int)tlen[1], tok[1], key, p->cur->name,
			    ops ? "TOPS, GOPS" : "TFLOPS, GFLOPS");
	char full[16];
	snprintf(full, sizeof(full), "peak.%s", key);
	const char *unit = ops ? (scale == 1e12 ? "TOPS" : "GOPS")
			       : (scale == 1e12 ? "TFLOPS" : "GFLOPS");
	if (check_range(p, full, tok[0], tlen[0], v, &r_peak, 1e12 / scale, unit) < 0)
		return -1;
	int clk = 0;
	if (k == 4) {
		double c;
		if (tok[2][0] != '@' || parse_num(tok[2] + 1, tlen[2] - 1, &c) < 0 || c < 1 ||
		    c != floor(c) || c > 1e6)
			return perr(at(p, tok[2]),
				    "bad clock '%.*s' for 'peak.%s' in [%s] (expected '@MHZ')",
				    (int)tlen[2], tok[2], key, p->cur->name);
		if (check_range(p, full, tok[2] + 1, tlen[2] - 1, c, &r_clk, 1, "MHz") < 0)
			return -1;
		clk = (int)c;
	}
	if (tok[k - 1][0] == '@')
		return perr(at(p, tok[k - 1]), "expected a flag after '%.*s' for 'peak.%s' in [%s]",
			    (int)tlen[k - 1], tok[k - 1], key, p->cur->name);
	const char *flag = flag_lookup(tok[k - 1], tlen[k - 1]);
	if (!flag)
		return bad_flag(p, tok[k - 1], tlen[k - 1]);
	pk->flop_per_s = v * scale;
	pk->clk_ref_mhz = clk;
	pk->flag = flag;
	p->peak_line[prec] = p->line;
	return 0;
}

/*
 * "PCIe GEN xLANES [FLAG]" or "NVLink-C2C GB/s [FLAG]" (per direction).  PCIe per lane
 * and direction: 2.5 and 5 GT/s with 8b/10b (gen 1, 2), 8/16/32 GT/s with 128b/130b
 * (gen 3-5), 64 GT/s with 242/256 FLITs (gen 6).
 */
static int parse_host_link(struct parser *p, const char *s, size_t n)
{
	/* clang-format off */
	static const double lane_gbs[] = { 0, 0.25, 0.5, 8 * 128.0 / 130 / 8, 16 * 128.0 / 130 / 8,
					   32 * 128.0 / 130 / 8, 64 * 242.0 / 256 / 8 };
	/* clang-format on */
	struct kp_device *dv = p->cur;
	const char *tok[4];
	size_t tlen[4];
	int k = tokens(s, n, tok, tlen, 4);
	double gen, lanes, v;
	char buf[48];

	if (k == 1 && ieq(tok[0], tlen[0], "none", 4)) {
		/* no single host link (unified memory, a link shared by two GCDs) */
		dv->host_link = NULL;
		dv->host_bw_byte_per_s = 0;
		return 0;
	}
	if (k >= 2 && ieq(tok[0], tlen[0], "NVLink-C2C", 10) && k <= 3) {
		if (parse_num(tok[1], tlen[1], &v) < 0 || v <= 0)
			return perr(at(p, tok[1]),
				    "bad bandwidth '%.*s' for 'host_link' in [%s] (GB/s per direction)",
				    (int)tlen[1], tok[1], dv->name);
		if (check_range(p, "host_link NVLink-C2C", tok[1], tlen[1], v, &r_link, 1, "GB/s") <
		    0)
			return -1;
		dv->host_bw_byte_per_s = v * 1e9;
		dv->host_link = "NVLink-C2C";
	} else if (k >= 3 && k <= 4 && ieq(tok[0], tlen[0], "PCIe", 4)) {
		if (parse_num(tok[1], tlen[1], &gen) < 0 || gen != floor(gen) || gen < 1 ||
		    gen > 6 || tok[2][0] != 'x' || parse_num(tok[2] + 1, tlen[2] - 1, &lanes) < 0 ||
		    lanes != floor(lanes) || lanes < 1 || lanes > 32)
			return perr(p,
				    "bad PCIe link '%.*s' for 'host_link' in [%s] (expected 'PCIe 5.0 x16')",
				    (int)n, s, dv->name);
		dv->host_bw_byte_per_s = lane_gbs[(int)gen] * lanes * 1e9;
		snprintf(buf, sizeof(buf), "PCIe %d.0 x%d", (int)gen, (int)lanes);
		dv->host_link = arena_strdup(&p->db->arena, buf);
	} else {
		return perr(p,
			    "expected 'PCIe GEN xLANES [FLAG]', 'NVLink-C2C GBS [FLAG]' or 'none' for "
			    "'host_link' in [%s]",
			    dv->name);
	}
	dv->host_flag = NULL;
	if (k == (dv->host_link[0] == 'N' ? 3 : 4) &&
	    !(dv->host_flag = flag_lookup(tok[k - 1], tlen[k - 1])))
		return bad_flag(p, tok[k - 1], tlen[k - 1]);
	return 0;
}

/*
 * The first control byte of line @s[0..@n) (tab aside): any in an entry or a key's line, a
 * NUL only in a comment (@comment).  A NUL would end a name where the line does not, and a
 * CR or ESC would be written into every report that names the device.  NULL when none.
 */
static const char *control_byte(const char *s, size_t n, int comment)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == 0 || (!comment && ((c < 0x20 && c != '\t') || c == 0x7f)))
			return s + i;
	}
	return NULL;
}

static int begin_entry(struct parser *p, const char *name, size_t n)
{
	trim(&name, &n);
	if (!n)
		return perr(p, "empty entry name '[]'");
	for (int i = 0; i < p->db->ndev; i++)
		if (ieq(p->db->dev[i].name, strlen(p->db->dev[i].name), name, n))
			return perr(p, "duplicate entry [%.*s] (first at line %d)", (int)n, name,
				    p->db->dev[i].line);
	if (p->db->ndev == p->maxdev)
		return perr(p, "internal error: entry count changed while parsing");
	struct kp_device *dv = &p->db->dev[p->db->ndev++];
	memset(dv, 0, sizeof(*dv));
	dv->name = arena_strndup(&p->db->arena, name, n);
	dv->line = p->line;
	p->cur = dv;
	p->set = 0;
	p->inherited = 0;
	for (int i = 0; i < PREC_N; i++)
		p->peak_line[i] = p->line;
	return 0;
}

/* Inherit every number of @base; identity (names, patterns, match_sms) stays empty. */
static void inherit(struct kp_device *dv, const struct kp_device *base)
{
	const char *name = dv->name;
	int line = dv->line;
	*dv = *base;
	dv->name = name;
	dv->line = line;
	dv->exact = dv->substr = NULL;
	dv->nexact = dv->nsubstr = 0;
	dv->match_sms = 0;
}

/* 'cc = MAJOR.MINOR', both small integers */
static int parse_cc(struct parser *p, const char *val, size_t vlen)
{
	struct kp_device *dv = p->cur;
	unsigned maj = 0, min = 0;
	size_t i = 0;
	while (i < vlen && val[i] >= '0' && val[i] <= '9' && maj < 1000)
		maj = maj * 10 + (unsigned)(val[i++] - '0');
	size_t dot = i;
	if (i < vlen && val[i] == '.')
		i++;
	size_t m0 = i;
	while (i < vlen && val[i] >= '0' && val[i] <= '9' && min < 1000)
		min = min * 10 + (unsigned)(val[i++] - '0');
	if (dot == 0 || dot == vlen || val[dot] != '.' || m0 == i || i != vlen || maj < 1 ||
	    maj >= 1000 || min >= 1000)
		return perr(p, "bad value '%.*s' for 'cc' in [%s] (want MAJOR.MINOR, e.g. 9.0)",
			    (int)vlen, val, dv->name);
	dv->cc_major = (int)maj;
	dv->cc_minor = (int)min;
	return 0;
}

/* Repeated 'source' lines append; the first one replaces an inherited source. */
static int set_source(struct parser *p, const char *val, size_t vlen, int first_source)
{
	struct kp_device *dv = p->cur;
	if (!vlen)
		return perr(p, "empty value for 'source' in [%s]", dv->name);
	if (first_source || !dv->source) {
		dv->source = arena_strndup(&p->db->arena, val, vlen);
	} else {
		size_t old = strlen(dv->source);
		char *s = arena_alloc(&p->db->arena, old + 2 + vlen + 1);
		memcpy(s, dv->source, old);
		memcpy(s + old, "; ", 2);
		memcpy(s + old + 2, val, vlen);
		s[old + 2 + vlen] = '\0';
		dv->source = s;
	}
	return 0;
}

/* 'base': copy an earlier entry's numbers into the current one. */
static int set_base(struct parser *p, const char *val, size_t vlen)
{
	struct kp_device *dv = p->cur;
	for (int i = 0; i < p->db->ndev - 1; i++)
		if (ieq(p->db->dev[i].name, strlen(p->db->dev[i].name), val, vlen)) {
			inherit(dv, &p->db->dev[i]);
			p->inherited = 1;
			return 0;
		}
	return perr(p, "unknown base entry '%.*s' in [%s] (it must come earlier)", (int)vlen, val,
		    dv->name);
}

/* 'match_sms': a bare count, at least 1. */
static int set_match_sms(struct parser *p, const char *val, size_t vlen)
{
	double v = 0;
	const char *flag = NULL;
	if (scalar(p, "match_sms", val, vlen, 1, &r_sms, &v, &flag) < 0)
		return -1;
	if (flag || v < 1)
		return perr(p, "'match_sms' takes a count only in [%s]", p->cur->name);
	p->cur->match_sms = (int)v;
	return 0;
}

/* An integer scalar key ("N [flag]") into @n and its flag into @nflag. */
static int set_count(struct parser *p, const char *key, const char *val, size_t vlen,
		     const struct range *r, int *n, const char **nflag)
{
	double v = 0;
	const char *flag = NULL;
	if (scalar(p, key, val, vlen, 1, r, &v, &flag) < 0)
		return -1;
	*n = (int)v;
	*nflag = flag;
	return 0;
}

/* A real scalar key ("X [flag]") times @scale into @x and its flag into @xflag. */
static int set_real(struct parser *p, const char *key, const char *val, size_t vlen,
		    const struct range *r, double scale, double *x, const char **xflag)
{
	double v = 0;
	const char *flag = NULL;
	if (scalar(p, key, val, vlen, 0, r, &v, &flag) < 0)
		return -1;
	*x = v * scale;
	*xflag = flag;
	return 0;
}

/* 'no_clock_scaling': yes or no. */
static int set_noscale(struct parser *p, const char *val, size_t vlen)
{
	if (ieq(val, vlen, "yes", 3))
		p->cur->no_clock_scaling = 1;
	else if (ieq(val, vlen, "no", 2))
		p->cur->no_clock_scaling = 0;
	else
		return perr(p, "bad value '%.*s' for 'no_clock_scaling' in [%s] (valid: yes, no)",
			    (int)vlen, val, p->cur->name);
	return 0;
}

/* The value of key @k (enum above; K_PEAK + @prec for peaks) of the current entry. */
static int set_value(struct parser *p, int k, enum kp_prec prec, const char *val, size_t vlen,
		     int first_source)
{
	struct kp_device *dv = p->cur;
	switch (k) {
	case K_BASE:
		return set_base(p, val, vlen);
	case K_EXACT:
		return split_list(p, "exact", val, vlen, &dv->exact, &dv->nexact);
	case K_PATTERN:
		return split_list(p, "pattern", val, vlen, &dv->substr, &dv->nsubstr);
	case K_MATCH_SMS:
		return set_match_sms(p, val, vlen);
	case K_SMS:
		return set_count(p, "sms", val, vlen, &r_sms, &dv->sms, &dv->sms_flag);
	case K_CLK:
		return set_count(p, "clk_max_mhz", val, vlen, &r_clk, &dv->clk_max_mhz,
				 &dv->clk_flag);
	case K_MEM:
		return set_real(p, "mem_gb", val, vlen, &r_mem, 1, &dv->mem_gb, &dv->mem_flag);
	case K_DRAM:
		return set_real(p, "dram_gbs", val, vlen, &r_dram, 1e9, &dv->mem_bw_byte_per_s,
				&dv->bw_flag);
	case K_MEMCLK:
		return set_count(p, "mem_clk_mhz", val, vlen, &r_memclk, &dv->mem_clk_mhz,
				 &dv->mem_clk_flag);
	case K_BUS:
		return set_count(p, "bus_bits", val, vlen, &r_bus, &dv->bus_bits, &dv->bus_flag);
	case K_L2: /* MiB: what NVIDIA's and AMD's datasheets call MB (an H100's 50 MB L2
		      is cudaDevAttrL2CacheSize 52428800) */
		return set_real(p, "l2_mb", val, vlen, &r_l2, 1024.0 * 1024, &dv->l2_bytes,
				&dv->l2_flag);
	case K_CC:
		return parse_cc(p, val, vlen);
	case K_NOSCALE:
		return set_noscale(p, val, vlen);
	case K_HOST:
		return parse_host_link(p, val, vlen);
	case K_PEER: /* 0: no peer link (peer copies cross the host link) */
		return set_real(p, "peer_gbs", val, vlen, &r_link, 1e9, &dv->peer_bw_byte_per_s,
				&dv->peer_flag);
	case K_CONF:
		if (!(dv->confidence = flag_lookup(val, vlen)))
			return bad_flag(p, val, vlen);
		return 0;
	case K_SOURCE:
		return set_source(p, val, vlen, first_source);
	default:
		return parse_peak(p, prec, val, vlen);
	}
}

static int set_key(struct parser *p, const char *key, size_t klen, const char *val, size_t vlen)
{
	struct kp_device *dv = p->cur;
	int k = -1;
	enum kp_prec prec = PREC_NONE;
	if (!dv)
		return perr(at(p, key), "'%.*s' before the first [entry]", (int)klen, key);
	for (int i = 0; key_names[i]; i++)
		if (strlen(key_names[i]) == klen && !memcmp(key, key_names[i], klen))
			k = i;
	if (k < 0 && klen > 5 && !memcmp(key, "peak.", 5)) {
		for (int i = 0; i < PREC_N; i++)
			if (strlen(prec_keys[i]) == klen - 5 &&
			    !memcmp(key + 5, prec_keys[i], klen - 5))
				prec = (enum kp_prec)i;
		if (prec == PREC_NONE)
			return perr(at(p, key + 5),
				    "unknown precision '%.*s' in [%s] (valid: fp64, fp32, tf32, "
				    "bf16, fp16, fp8, int8)",
				    (int)(klen - 5), key + 5, dv->name);
		k = K_PEAK + prec;
	}
	at(p, key);
	if (k < 0)
		return perr(p, "unknown key '%.*s' in [%s]", (int)klen, key, dv->name);
	if (k != K_SOURCE && (p->set & (1ul << k)))
		return perr(p, "duplicate key '%.*s' in [%s]", (int)klen, key, dv->name);
	if (k == K_BASE && p->set)
		return perr(p, "'base' must be the first key in [%s]", dv->name);
	int first_source = k == K_SOURCE && !(p->set & (1ul << K_SOURCE));
	p->set |= 1ul << k;
	if (!vlen && k != K_SOURCE)
		return perr(p, "empty value for '%.*s' in [%s]", (int)klen, key, dv->name);
	at(p, val); /* errors about the value point at it, or at the token they name */
	return set_value(p, k, prec, val, vlen, first_source);
}

static const char *weaker(const char *f, const char *cap)
{
	return flag_rank(f) < flag_rank(cap) ? cap : f;
}

/* Defaults, caps and cross-checks of the finished stanza. */
static int end_entry(struct parser *p)
{
	struct kp_device *dv = p->cur;
	if (!dv)
		return 0;
	if (!dv->source)
		return perr_at(p, dv->line, "[%s] has no 'source'", dv->name);
	if (!dv->confidence)
		return perr_at(p, dv->line, "[%s] has no 'confidence'", dv->name);
	if (!dv->nexact && !dv->nsubstr)
		return perr_at(p, dv->line, "[%s] has neither 'exact' nor 'pattern'", dv->name);

	/* An entry is never more confident than the numbers it inherits claim, nor
	 * they more than it: inherited flags are capped at its confidence. */
	const char **flags[] = { &dv->sms_flag,     &dv->clk_flag, &dv->mem_flag,
				 &dv->bw_flag,      &dv->mem_clk_flag, &dv->bus_flag,
				 &dv->host_flag,    &dv->peer_flag, &dv->l2_flag };
	static const int keys[] = { K_SMS,  K_CLK,  K_MEM,  K_DRAM, K_MEMCLK,
				    K_BUS,  K_HOST, K_PEER, K_L2 };
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!*flags[i])
			*flags[i] = dv->confidence;
		else if (p->inherited && !(p->set & (1ul << keys[i])))
			*flags[i] = weaker(*flags[i], dv->confidence);
	}
	for (int i = 0; i < PREC_N; i++) {
		struct kp_peak *pk = &dv->peak[i];
		if (!pk->flop_per_s)
			continue;
		if (p->inherited && !(p->set & (1ul << (K_PEAK + i))))
			pk->flag = weaker(pk->flag, dv->confidence);
		if (dv->clk_max_mhz && pk->clk_ref_mhz > dv->clk_max_mhz)
			return perr_at(p, p->peak_line[i],
				       "clock %d MHz of 'peak.%s' is above clk_max_mhz %d in [%s]",
				       pk->clk_ref_mhz, prec_keys[i], dv->clk_max_mhz, dv->name);
	}
	/* doc/devices.md §5: BW = mem_clock × 2 × bus_bits / 8; a typo shows as a mismatch */
	if (dv->mem_clk_mhz && dv->bus_bits && dv->mem_bw_byte_per_s) {
		double calc = dv->mem_clk_mhz * 1e6 * 2 * dv->bus_bits / 8;
		if (fabs(calc / dv->mem_bw_byte_per_s - 1) > 0.05)
			return perr_at(p, dv->line,
				       "dram_gbs %g differs from mem_clk_mhz x 2 x bus_bits / 8 = "
				       "%.0f GB/s by more than 5%% in [%s]",
				       dv->mem_bw_byte_per_s / 1e9, calc / 1e9, dv->name);
	}
	p->cur = NULL;
	return 0;
}

static int cmp_pat(const void *a, const void *b)
{
	const struct kp_devdb_pat *x = a, *y = b;
	if (x->len != y->len)
		return x->len > y->len ? -1 : 1;
	return x->order - y->order;
}

/* Two entries may share a name only when match_sms tells them apart (MI250X/MI250). */
static int distinct(const struct kp_device *a, const struct kp_device *b)
{
	return a->match_sms && b->match_sms && a->match_sms != b->match_sms;
}

static int index_names(struct parser *p)
{
	struct kp_devdb *db = p->db;
	int n = 0;
	for (int i = 0; i < db->ndev; i++)
		n += db->dev[i].nsubstr;
	db->pat = arena_zalloc(&db->arena, sizeof(*db->pat) * (n ? n : 1));
	for (int i = 0; i < db->ndev; i++) {
		const struct kp_device *dv = &db->dev[i];
		for (int j = 0; j < dv->nsubstr; j++) {
			struct kp_devdb_pat *pt = &db->pat[db->npat];
			pt->text = dv->substr[j];
			pt->len = strlen(pt->text);
			size_t hl = pt->len + 11;
			char *how = arena_alloc(&db->arena, hl + 1);
			snprintf(how, hl + 1, "pattern '%s'", pt->text);
			pt->how = how;
			pt->dev = i;
			pt->order = db->npat++;
		}
	}
	qsort(db->pat, db->npat, sizeof(*db->pat), cmp_pat);

	/* the same exact name or pattern in two entries would make matching depend on order */
	for (int i = 0; i < db->ndev; i++) {
		const struct kp_device *a = &db->dev[i];
		for (int j = 0; j < i; j++) {
			const struct kp_device *b = &db->dev[j];
			if (distinct(a, b))
				continue;
			for (int x = 0; x < a->nexact; x++)
				for (int y = 0; y < b->nexact; y++)
					if (ieq(a->exact[x], strlen(a->exact[x]), b->exact[y],
						strlen(b->exact[y])))
						return perr_at(p, a->line,
							       "exact name '%s' of [%s] is also in "
							       "[%s] (line %d)",
							       a->exact[x], a->name, b->name,
							       b->line);
			for (int x = 0; x < a->nsubstr; x++)
				for (int y = 0; y < b->nsubstr; y++)
					if (ieq(a->substr[x], strlen(a->substr[x]), b->substr[y],
						strlen(b->substr[y])))
						return perr_at(p, a->line,
							       "pattern '%s' of [%s] is also in "
							       "[%s] (line %d)",
							       a->substr[x], a->name, b->name,
							       b->line);
		}
	}
	return 0;
}

int devdb_parse(struct kp_devdb *db, const char *text, size_t len, const char *origin,
		struct kp_diag *d)
{
	memset(db, 0, sizeof(*db));
	arena_init(&db->arena);
	db->origin = arena_strdup(&db->arena, origin);

	/* entries are counted first so the array never moves */
	int maxdev = 0;
	for (size_t i = 0; i < len;) {
		while (i < len && (text[i] == ' ' || text[i] == '\t'))
			i++;
		maxdev += i < len && text[i] == '[';
		const char *nl = memchr(text + i, '\n', len - i);
		i = nl ? (size_t)(nl - text) + 1 : len;
	}
	db->dev = arena_zalloc(&db->arena, sizeof(*db->dev) * (maxdev ? maxdev : 1));

	struct parser p = { .db = db, .d = d, .origin = db->origin, .maxdev = maxdev };
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len;
		const char *s = text + i;
		size_t n = end - i;
		i = nl ? end + 1 : len;
		p.line++;
		p.lb = s;
		trim(&s, &n);
		at(&p, s);
		const char *bad = control_byte(s, n, n && s[0] == '#');
		if (bad) {
			at(&p, bad);
			perr(&p, "a control character (0x%02x): a device table is text",
			     (unsigned char)*bad);
			goto fail;
		}
		if (!n || s[0] == '#')
			continue;
		if (s[0] == '[') {
			if (s[n - 1] != ']')
				goto fail_msg;
			if (end_entry(&p) < 0 || begin_entry(&p, s + 1, n - 2) < 0)
				goto fail;
			continue;
		}
		const char *eq = memchr(s, '=', n);
		if (!eq)
			goto fail_msg;
		const char *key = s, *val = eq + 1;
		size_t klen = (size_t)(eq - s), vlen = n - klen - 1;
		trim(&key, &klen);
		trim(&val, &vlen);
		if (!klen)
			goto fail_msg;
		if (set_key(&p, key, klen, val, vlen) < 0)
			goto fail;
	}
	if (end_entry(&p) < 0)
		goto fail;
	if (!db->ndev) {
		diag_error(d, KP_BADINPUT, "%s: error: no device entries", db->origin);
		goto fail;
	}
	if (index_names(&p) < 0)
		goto fail;
	return 0;
fail_msg:
	perr(&p, "expected '[name]' or 'key = value'");
fail:
	devdb_free(db);
	return -1;
}

int devdb_load_builtin(struct kp_devdb *db, struct kp_diag *d)
{
	return devdb_parse(db, devdb_builtin_text, strlen(devdb_builtin_text), "built-in", d);
}

int devdb_load_file(struct kp_devdb *db, const char *path, struct kp_diag *d)
{
	memset(db, 0, sizeof(*db));
	size_t len;
	char *buf = sidefile_read(path, "device table", SIDEFILE_MAX, &len, d);
	if (!buf)
		return -1;
	int rc = devdb_parse(db, buf, len, path, d);
	free(buf);
	return rc;
}

int devdb_load_default(struct kp_devdb *db, const char *path, struct kp_diag *d)
{
	if (!path) {
		path = getenv("KPROF_DEVICE_DB");
		if (path && !*path)
			path = NULL;
	}
	return path ? devdb_load_file(db, path, d) : devdb_load_builtin(db, d);
}

/* @pat occurs in @s with a non-alphanumeric character (or the end) on both sides. */
static int has_word(const char *s, size_t n, const char *pat, size_t plen)
{
	for (size_t i = 0; i + plen <= n; i++) {
		if (i > 0 && is_alnum((unsigned char)s[i - 1]))
			continue;
		if (i + plen < n && is_alnum((unsigned char)s[i + plen]))
			continue;
		if (ieq(s + i, plen, pat, plen))
			return 1;
	}
	return 0;
}

static int sms_ok(const struct kp_device *dv, int sms)
{
	return !dv->match_sms || sms <= 0 || dv->match_sms == sms;
}

const struct kp_device *devdb_match_sms(const struct kp_devdb *db, const char *name, int sms,
					const char **how)
{
	const char *dummy;
	if (!how)
		how = &dummy;
	*how = NULL;
	if (!db || !name)
		return NULL;
	size_t n = strlen(name);
	trim(&name, &n);
	for (int i = 0; i < db->ndev; i++) {
		const struct kp_device *dv = &db->dev[i];
		if (!sms_ok(dv, sms))
			continue;
		for (int j = 0; j < dv->nexact; j++)
			if (ieq(dv->exact[j], strlen(dv->exact[j]), name, n)) {
				*how = dv->match_sms && sms <= 0 ? "exact (SM count not checked)"
								 : "exact";
				return dv;
			}
	}
	for (int i = 0; i < db->npat; i++) {
		const struct kp_devdb_pat *pt = &db->pat[i];
		const struct kp_device *dv = &db->dev[pt->dev];
		if (sms_ok(dv, sms) && has_word(name, n, pt->text, pt->len)) {
			*how = pt->how;
			return dv;
		}
	}
	return NULL;
}

const struct kp_device *devdb_match(const struct kp_devdb *db, const char *name, const char **how)
{
	return devdb_match_sms(db, name, 0, how);
}

int devdb_candidates(const struct kp_devdb *db, const char *name, int sms,
		     const struct kp_device **out, int cap)
{
	int n = 0;
	if (!db || !name)
		return 0;
	size_t len = strlen(name);
	trim(&name, &len);
	if (!len)
		return 0;
	for (int i = 0; i < db->ndev; i++) {
		const struct kp_device *dv = &db->dev[i];
		if (!sms_ok(dv, sms))
			continue;
		int hit = has_word(dv->name, strlen(dv->name), name, len);
		for (int j = 0; !hit && j < dv->nexact; j++)
			hit = has_word(dv->exact[j], strlen(dv->exact[j]), name, len);
		if (hit && n < cap)
			out[n] = dv;
		n += hit;
	}
	return n;
}

int devdb_pick_note(const struct kp_devdb *db, const char *name, int sms, char *buf, size_t cap)
{
	const char *how;
	const struct kp_device *c[DEVDB_MAX_CAND];
	const struct kp_device *dv = devdb_match_sms(db, name, sms, &how);
	if (!dv || strncmp(how, "pattern", 7))
		return 0;
	int n = devdb_candidates(db, name, sms, c, DEVDB_MAX_CAND);
	if (n < 2)
		return 0;
	size_t k = (size_t)snprintf(buf, cap, "'%s' could mean %d entries:", name, n);
	for (int i = 0; i < n && i < DEVDB_MAX_CAND && k < cap; i++)
		k += (size_t)snprintf(buf + k, cap - k, "%s %s", i ? "," : "", c[i]->name);
	if (k < cap && n > DEVDB_MAX_CAND)
		k += (size_t)snprintf(buf + k, cap - k, ", ...");
	/* the longest pattern found in the name decides (devdb_match_sms()); the table gives a
	   bare name to one entry on purpose (device_db/devices.txt: "H100" is the SXM5 part) */
	if (k < cap)
		snprintf(buf + k, cap - k,
			 "; picked %s, the entry the device table gives %s, the longest pattern "
			 "in the name; pass the full name to choose another",
			 dv->name, how);
	return 1;
}

int devdb_generic_name(const char *name)
{
	if (!name)
		return 1;
	size_t n = strlen(name);
	trim(&name, &n);
	static const char generic[] = "AMD Radeon Graphics";
	return n == 0 || ieq(name, n, generic, sizeof(generic) - 1);
}

static int same_peaks(const struct kp_device *a, const struct kp_device *b)
{
	if (a->mem_bw_byte_per_s != b->mem_bw_byte_per_s ||
	    a->no_clock_scaling != b->no_clock_scaling)
		return 0;
	for (int i = 0; i < PREC_N; i++)
		if (a->peak[i].flop_per_s != b->peak[i].flop_per_s ||
		    a->peak[i].clk_ref_mhz != b->peak[i].clk_ref_mhz)
			return 0;
	return 1;
}

int devdb_match_props(const struct kp_devdb *db, const struct kp_devprops *q, struct kp_devmatch *m)
{
	memset(m, 0, sizeof(*m));
	if (!db || !q || q->sms <= 0 || q->mem_bytes <= 0 || q->cc_major <= 0)
		return 0;
	double gib = (double)q->mem_bytes / (1024.0 * 1024 * 1024);
	m->same_peaks = 1;
	for (int i = 0; i < db->ndev; i++) {
		const struct kp_device *dv = &db->dev[i];
		if (dv->sms != q->sms || dv->cc_major != q->cc_major ||
		    dv->cc_minor != q->cc_minor || dv->mem_gb <= 0 || gib < 0.90 * dv->mem_gb ||
		    gib > 1.03 * dv->mem_gb)
			continue;
		if (m->ncand && !same_peaks(m->cand[0], dv))
			m->same_peaks = 0;
		if (m->ncand < DEVDB_MAX_CAND)
			m->cand[m->ncand] = dv;
		m->ncand++;
	}
	if (!m->ncand)
		m->same_peaks = 0;
	else if (m->same_peaks)
		m->dev = m->cand[0];
	return m->ncand;
}

/*
 * A device with an empty or generic name ("AMD Radeon Graphics"): the entry whose SMs, cc and
 * memory agree with deviceProperties.  Candidates with different peaks: warn, no guess.
 */
static void choose_by_props(const struct kp_devdb *db, const char *name,
			    const struct kp_devprops *q, struct kp_devchoice *c)
{
	struct kp_devmatch m;
	char props[128];
	snprintf(props, sizeof(props), "numSms %d, %.0f GiB, cc %d.%d", q->sms,
		 (double)q->mem_bytes / (1024.0 * 1024 * 1024), q->cc_major, q->cc_minor);
	if (q->sms <= 0 || q->mem_bytes <= 0 || q->cc_major <= 0)
		return; /* too little to go on: the plain "not in the device table" warning */
	if (!devdb_match_props(db, q, &m)) {
		snprintf(c->buf, sizeof(c->buf),
			 "device '%s' is not in the device table, by name or by its properties (%s); "
			 "%% of peak columns are empty (pass --device NAME, see kprof devices)",
			 name, props);
		c->warning = c->buf;
		return;
	}
	size_t n = 0;
	int shown = m.ncand < DEVDB_MAX_CAND ? m.ncand : DEVDB_MAX_CAND;
	char *buf = c->buf;
	if (!m.dev) {
		n = (size_t)snprintf(buf, sizeof(c->buf),
				     "device '%s' (%s) matches %d entries with different peaks by its "
				     "properties:",
				     name, props, m.ncand);
		for (int i = 0; i < shown && n < sizeof(c->buf); i++)
			n += (size_t)snprintf(buf + n, sizeof(c->buf) - n, "%s '%s'", i ? "," : "",
					      m.cand[i]->name);
		if (n < sizeof(c->buf))
			snprintf(buf + n, sizeof(c->buf) - n,
				 "; %% of peak columns are empty (pass --device NAME)");
		c->warning = c->buf;
		return;
	}
	c->dev = m.dev;
	c->name = name;
	n = (size_t)snprintf(buf, sizeof(c->buf), "match: properties, %s", props);
	for (int i = 1; i < shown && n < sizeof(c->buf); i++)
		n += (size_t)snprintf(buf + n, sizeof(c->buf) - n, "%s%s",
				      i == 1 ? "; same peaks as " : ", ", m.cand[i]->name);
	c->how = c->buf;
}

void devdb_choose(const struct kp_devdb *db, const char *override, const char *name,
		  const struct kp_devprops *q, struct kp_devchoice *c)
{
	memset(c, 0, sizeof(*c));
	c->name = override ? override : name;
	if (c->name && db)
		c->dev = devdb_match_sms(db, c->name, !override && q ? q->sms : 0, &c->how);
	if (!c->dev && !override && q && db && devdb_generic_name(name))
		choose_by_props(db, name ? name : "", q, c);
}

const struct kp_device *devdb_find(const struct kp_devdb *db, const char *name)
{
	for (int i = 0; db && name && i < db->ndev; i++)
		if (ieq(db->dev[i].name, strlen(db->dev[i].name), name, strlen(name)))
			return &db->dev[i];
	return NULL;
}

double devdb_peak_flops(const struct kp_device *dev, enum kp_prec prec, double sm_clock_mhz)
{
	if (!dev || prec < 0 || prec >= PREC_N)
		return 0;
	const struct kp_peak *pk = &dev->peak[prec];
	/* doc/devices.md §4.2: peak(f) = peak_ref × min(f, clk_ref) / clk_ref */
	if (sm_clock_mhz <= 0 || dev->no_clock_scaling || pk->clk_ref_mhz <= 0 ||
	    sm_clock_mhz >= pk->clk_ref_mhz)
		return pk->flop_per_s;
	return pk->flop_per_s * sm_clock_mhz / pk->clk_ref_mhz;
}

double devdb_peak_bw(const struct kp_device *dev, double mem_clock_mhz)
{
	if (!dev)
		return 0;
	/* memory clocks do not boost: scale only down, and only by the memory clock (§5) */
	if (mem_clock_mhz > 0 && dev->mem_clk_mhz > 0 && mem_clock_mhz < dev->mem_clk_mhz)
		return dev->mem_bw_byte_per_s * mem_clock_mhz / dev->mem_clk_mhz;
	return dev->mem_bw_byte_per_s;
}

double devdb_path_bw(const struct kp_device *dev, enum kp_mempath path)
{
	if (!dev)
		return 0;
	switch (path) {
	case MEMPATH_DRAM:
		return devdb_peak_bw(dev, 0);
	case MEMPATH_DTOD:
		return devdb_peak_bw(dev, 0) / 2;
	case MEMPATH_HOST:
		return dev->host_bw_byte_per_s;
	case MEMPATH_PEER:
		return dev->peer_bw_byte_per_s > 0 ? dev->peer_bw_byte_per_s
						   : dev->host_bw_byte_per_s;
	default:
		return 0;
	}
}

void devdb_free(struct kp_devdb *db)
{
	if (!db)
		return;
	arena_free(&db->arena);
	memset(db, 0, sizeof(*db));
}
