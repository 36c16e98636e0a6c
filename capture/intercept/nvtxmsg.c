/*
 * nvtxmsg.c — PyTorch's emit_nvtx range messages ("aten::mm, seq = 12, op_id = 7, sizes =
 * [[4, 8], []], input_op_ids = [...]") and kprof's op observer's ("aten::mm, seq = 12, sizes =
 * [[4, 8], []], dtypes = [c10::BFloat16, ], concrete = ["", "2"]":
 * capture/intercept/python/kprof_torch_obs.cpp)
 * parsed into struct kp_nvtx_msg (nvtxmsg_parse, declared in hostops.h).  hostops.c turns the
 * parsed ranges into cpu_ops (doc/capture-any.md §2.4).
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "intercept/hostops.h"

/* ---- emit_nvtx messages (pytorch torch/csrc/profiler/util.cpp getNvtxStr) ---- */

static const char *skip_sp(const char *p)
{
	while (*p == ' ')
		p++;
	return p;
}

static int parse_i64(const char **pp, int64_t *v)
{
	const char *p = skip_sp(*pp);
	char *end;
	if (!(*p == '-' || isdigit((unsigned char)*p)))
		return -1;
	errno = 0;
	long long x = strtoll(p, &end, 10);
	if (errno || end == p)
		return -1;
	*v = x;
	*pp = end;
	return 0;
}

/* ", " or "," with spaces around; 1 when one was there */
static int comma(const char **pp)
{
	const char *p = skip_sp(*pp);
	if (*p != ',')
		return 0;
	*pp = skip_sp(p + 1);
	return 1;
}

static int expect(const char **pp, char c)
{
	const char *p = skip_sp(*pp);
	if (*p != c)
		return -1;
	*pp = p + 1;
	return 0;
}

static int fail(char *why, size_t whylen, const char *msg)
{
	snprintf(why, whylen, "%s", msg);
	return -1;
}

/* Past a bound (NVTX_MAX_SLOTS, NVTX_MAX_DIMS): -2, the list to be skipped, not an error. */
static int over(char *why, size_t whylen, const char *msg)
{
	snprintf(why, whylen, "%s", msg);
	return -2;
}

/*
 * Past the list at *@pp ("[...]", nested [ ] and ( ), texts in "" without escapes, as
 * torch's and the observer's lists are): 0, or -1 when it does not end.
 */
static int skip_list(const char **pp)
{
	const char *p = skip_sp(*pp);
	if (*p != '[')
		return -1;
	int depth = 0;
	for (; *p; p++) {
		if (*p == '"') {
			const char *q = strchr(p + 1, '"');
			if (!q)
				return -1;
			p = q;
		} else if (*p == '[' || *p == '(') {
			depth++;
		} else if ((*p == ']' || *p == ')') && --depth == 0) {
			*pp = p + 1;
			return 0;
		}
	}
	return -1;
}

static int parse_sizes(const char **pp, struct kp_nvtx_msg *m, char *why, size_t whylen)
{
	if (expect(pp, '['))
		return fail(why, whylen, "sizes: expected '['");
	m->nslots = 0;
	if (!expect(pp, ']'))
		return 0;
	for (;;) {
		if (m->nslots == NVTX_MAX_SLOTS)
			return over(why, whylen, "sizes: more than 64 inputs");
		if (expect(pp, '['))
			return fail(why, whylen, "sizes: expected '[' before an input's dims");
		int nd = 0;
		if (expect(pp, ']')) {
			for (;;) {
				int64_t v;
				if (nd == NVTX_MAX_DIMS)
					return over(why, whylen, "sizes: more than 8 dims");
				if (parse_i64(pp, &v) || v < 0)
					return fail(why, whylen, "sizes: bad dimension");
				m->slot[m->nslots].d[nd++] = v;
				if (!expect(pp, ']'))
					break;
				if (!comma(pp))
					return fail(why, whylen,
						    "sizes: expected ',' or ']' after a dimension");
			}
		}
		m->slot[m->nslots++].nd = nd;
		if (!expect(pp, ']'))
			return 0;
		if (!comma(pp))
			return fail(why, whylen, "sizes: expected ',' or ']' after an input");
	}
}

static int parse_ids(const char **pp, struct kp_nvtx_msg *m, char *why, size_t whylen)
{
	if (expect(pp, '['))
		return fail(why, whylen, "input_op_ids: expected '['");
	m->ninput_ids = 0;
	if (!expect(pp, ']'))
		return 0;
	for (;;) {
		int64_t a, b;
		if (expect(pp, '(') || parse_i64(pp, &a) || !comma(pp) || parse_i64(pp, &b) ||
		    expect(pp, ')'))
			return fail(why, whylen, "input_op_ids: expected '(op,output)'");
		if (m->ninput_ids == NVTX_MAX_SLOTS)
			return over(why, whylen, "input_op_ids: more than 64 inputs");
		m->input_op[m->ninput_ids++] = a > 0 ? a : 0;
		if (!expect(pp, ']'))
			return 0;
		if (!comma(pp))
			return fail(why, whylen, "input_op_ids: expected ',' or ']'");
	}
}

/*
 * "[float, , c10::BFloat16]": a type name per input, "" for one that is not a tensor; after
 * the sizes (m->nslots), so "[]" is one "" for one input (kprof_torch_obs.cpp writes a lone
 * non-tensor so) and none for none.
 */
static int parse_dtypes(const char **pp, struct kp_nvtx_msg *m, char *why, size_t whylen)
{
	if (expect(pp, '['))
		return fail(why, whylen, "dtypes: expected '['");
	m->ndtypes = 0;
	const char *p = skip_sp(*pp);
	if (*p == ']') {
		*pp = p + 1;
		if (m->nslots == 1) {
			m->dtype[0][0] = '\0';
			m->ndtypes = 1;
		}
		return 0;
	}
	for (;;) {
		p = skip_sp(p);
		size_t n = strcspn(p, ",]");
		while (n && p[n - 1] == ' ')
			n--;
		if (m->ndtypes == NVTX_MAX_SLOTS)
			return over(why, whylen, "dtypes: more than 64 inputs");
		if (n >= sizeof(m->dtype[0]) || memchr(p, '[', n))
			return fail(why, whylen, "dtypes: not a type name");
		memcpy(m->dtype[m->ndtypes], p, n);
		m->dtype[m->ndtypes++][n] = '\0';
		p = skip_sp(p + n);
		if (*p == ']') {
			*pp = p + 1;
			return 0;
		}
		if (*p != ',')
			return fail(why, whylen, "dtypes: expected ',' or ']'");
		p++;
	}
}

/* ["", "2", "[1, 1]"]: quoted texts without escapes, one per input */
static int parse_conc(const char **pp, struct kp_nvtx_msg *m, char *why, size_t whylen)
{
	if (expect(pp, '['))
		return fail(why, whylen, "concrete: expected '['");
	m->nconc = 0;
	if (!expect(pp, ']'))
		return 0;
	for (;;) {
		if (expect(pp, '"'))
			return fail(why, whylen, "concrete: expected '\"'");
		const char *p = *pp, *q = strchr(p, '"');
		if (!q)
			return fail(why, whylen, "concrete: unterminated text");
		size_t n = (size_t)(q - p);
		if (m->nconc == NVTX_MAX_SLOTS)
			return over(why, whylen, "concrete: more than 64 inputs");
		if (n >= sizeof(m->conc[0]) || memchr(p, '\\', n))
			return fail(why, whylen, "concrete: text too long or escaped");
		memcpy(m->conc[m->nconc], p, n);
		m->conc[m->nconc++][n] = '\0';
		*pp = q + 1;
		if (!expect(pp, ']'))
			return 0;
		if (!comma(pp))
			return fail(why, whylen, "concrete: expected ',' or ']'");
	}
}

/* nvtxmsg_parse() clears what comes before the observer's texts, which must stay last */
_Static_assert(offsetof(struct kp_nvtx_msg, dtype) > offsetof(struct kp_nvtx_msg, nconc) &&
		       offsetof(struct kp_nvtx_msg, conc) > offsetof(struct kp_nvtx_msg, dtype) &&
		       sizeof(struct kp_nvtx_msg) - offsetof(struct kp_nvtx_msg, conc) ==
			       sizeof(((struct kp_nvtx_msg *)0)->conc),
	       "kp_nvtx_msg: dtype and conc last");

/*
 * The list field at *@pp read by @parse.  A list past a bound (-2 from @parse) is skipped
 * whole and marks the message (m->over) when it may be (@may_overflow: sizes, input_op_ids);
 * a types or texts list past the bound of sizes that were within it is malformed.  Once the
 * message is marked, every later list is skipped.  0, or -1 (@why says why).
 */
static int list_field(const char **pp, struct kp_nvtx_msg *m,
		      int (*parse)(const char **, struct kp_nvtx_msg *, char *, size_t),
		      int may_overflow, char *why, size_t whylen)
{
	if (!m->over) {
		const char *start = *pp;
		int r = parse(pp, m, why, whylen);
		if (r != -2)
			return r;
		if (!may_overflow)
			return -1; /* "dtypes: more than 64 inputs", for at most 64 sizes */
		m->over = 1;
		*pp = start;
	}
	return skip_list(pp) ? fail(why, whylen, "a list that does not end") : 0;
}

/* the fields of a message, a bit each (a field given twice is malformed) */
enum { F_SEQ = 1, F_OP_ID = 2, F_SIZES = 4, F_IDS = 8, F_DTYPES = 16, F_CONC = 32 };

/* The F_* of the field named @k[0..@kl), 0 for one not known */
static int field_bit(const char *k, size_t kl)
{
	static const char *const names[] = { "seq",	"op_id",  "sizes",
					     "input_op_ids", "dtypes", "concrete" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == kl && !strncmp(k, names[i], kl))
			return 1 << i;
	return 0;
}

int nvtxmsg_parse(const char *msg, struct kp_nvtx_msg *m, char *why, size_t whylen)
{
	memset(m, 0, offsetof(struct kp_nvtx_msg, dtype)); /* the texts are read up to their counts */
	m->seq = m->op_id = -1;
	if (!msg)
		return 1;
	/*
	 * The name ends where the first of torch's fields begins: a record_function label may
	 * itself hold ", " (Dynamo's "entire_frame_compile_data: fn_name=..., compile_id=0/0").
	 */
	static const char *const anchors[] = { ", seq = ", ", op_id = ", ", sizes = " };
	const char *p = NULL;
	for (size_t i = 0; i < sizeof(anchors) / sizeof(anchors[0]); i++) {
		const char *a = strstr(msg, anchors[i]);
		if (a && (!p || a < p))
			p = a;
	}
	if (!p)
		return 1;
	size_t len = (size_t)(p - msg);
	if (len == 0)
		return fail(why, whylen, "empty op name");
	if (len >= sizeof(m->name))
		return fail(why, whylen, "op name longer than 255 bytes");
	memcpy(m->name, msg, len);
	m->name[len] = '\0';
	/* op and kernel names are identifiers; a name with a space is a record_function label */
	m->label = memchr(msg, ' ', len) != NULL;
	int seen = 0;
	while (*p) {
		if (p[0] != ',' || p[1] != ' ')
			return fail(why, whylen, "expected ', ' between fields");
		p += 2;
		const char *eq = strstr(p, " = ");
		if (!eq)
			return fail(why, whylen, "field without ' = '");
		const char *v = eq + 3;
		int f = field_bit(p, (size_t)(eq - p));
		if (f & seen) /* a second sizes would leave the first one's types and texts behind */
			return fail(why, whylen, "a field given twice");
		seen |= f;
		switch (f) {
		case F_SEQ:
			if (parse_i64(&v, &m->seq))
				return fail(why, whylen, "seq: expected an integer");
			break;
		case F_OP_ID:
			if (parse_i64(&v, &m->op_id))
				return fail(why, whylen, "op_id: expected an integer");
			break;
		case F_SIZES:
			if (list_field(&v, m, parse_sizes, 1, why, whylen))
				return -1;
			m->has_sizes = 1;
			break;
		case F_IDS:
			if (list_field(&v, m, parse_ids, 1, why, whylen))
				return -1;
			break;
		case F_DTYPES:
			if (!m->has_sizes)
				return fail(why, whylen, "dtypes before sizes");
			if (list_field(&v, m, parse_dtypes, 0, why, whylen))
				return -1;
			if (!m->over && m->ndtypes != m->nslots)
				return fail(why, whylen, "dtypes: not one per input");
			break;
		case F_CONC:
			if (!m->has_sizes)
				return fail(why, whylen, "concrete before sizes");
			if (list_field(&v, m, parse_conc, 0, why, whylen))
				return -1;
			if (!m->over && m->nconc != m->nslots)
				return fail(why, whylen, "concrete: not one per input");
			break;
		default:
			return fail(why, whylen, "unknown field");
		}
		p = v;
	}
	if (m->over) /* the lists say one thing an input each: none kept, the op stays an op */
		m->has_sizes = m->nslots = m->ninput_ids = m->ndtypes = m->nconc = 0;
	return 0;
}
