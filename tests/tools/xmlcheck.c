/*
 * xmlcheck.c — is a kprof html/svg file well-formed XML and self-contained?
 *   xmlcheck [-s MAXBYTES] FILE...
 * Checks: elements nest and close, attributes are name="value" with no '<' inside, entity
 * references are the five XML ones or numeric, one root element, no text outside it;
 * no "http://" or "https://" except in xmlns attributes; no src or href attribute other
 * than a local "#fragment"; the file is at most MAXBYTES.  Prints "FILE:LINE: reason" for
 * the first problem and exits 1; exit 0 when every file passes.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *path;
static const char *base;

static int fail(const char *p, const char *why)
{
	int line = 1;
	for (const char *q = base; q < p; q++)
		line += *q == '\n';
	fprintf(stderr, "%s:%d: %s\n", path, line, why);
	return 1;
}

static int is_name(int c)
{
	return isalnum(c) || c == '_' || c == '-' || c == ':' || c == '.';
}

/* an entity reference at @p ('&'); returns its length or 0 */
static size_t entity(const char *p)
{
	static const char *const named[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
	for (size_t i = 0; i < 5; i++)
		if (!strncmp(p, named[i], strlen(named[i])))
			return strlen(named[i]);
	if (p[1] != '#')
		return 0;
	const char *q = p + 2;
	int hex = *q == 'x';
	q += hex;
	const char *d = q;
	while (hex ? isxdigit((unsigned char)*q) : isdigit((unsigned char)*q))
		q++;
	return q > d && *q == ';' ? (size_t)(q - p + 1) : 0;
}

/* character data from @p to @end: '&' must start an entity, no '<' */
static int text(const char *p, const char *end)
{
	for (; p < end; p++)
		if (*p == '&' && !entity(p))
			return fail(p, "bare '&' (not an entity reference)");
	return 0;
}

static int check(const char *s, size_t n, long max)
{
	if (max >= 0 && (long)n > max) {
		fprintf(stderr, "%s: %zu bytes, over the bound of %ld\n", path, n, max);
		return 1;
	}
	for (const char *u = s; (u = strstr(u, "http")) != NULL; u++) {
		if (strncmp(u, "http://", 7) && strncmp(u, "https://", 8))
			continue;
		const char *a = u;
		while (a > s && a[-1] != ' ' && a[-1] != '\n')
			a--;
		if (strncmp(a, "xmlns", 5))
			return fail(u, "external URL outside an xmlns attribute");
	}
	const char *stack[256];
	size_t nstack[256];
	int depth = 0, roots = 0;
	const char *p = s, *end = s + n;
	while (p < end) {
		const char *lt = memchr(p, '<', (size_t)(end - p));
		if (!lt)
			lt = end;
		if (depth == 0) {
			for (const char *q = p; q < lt; q++)
				if (!isspace((unsigned char)*q))
					return fail(q, "text outside the root element");
		} else if (text(p, lt)) {
			return 1;
		}
		if (lt == end)
			break;
		p = lt;
		if (!strncmp(p, "<!--", 4)) {
			const char *e = strstr(p + 4, "-->");
			if (!e)
				return fail(p, "unterminated comment");
			p = e + 3;
		} else if (!strncmp(p, "<![CDATA[", 9)) {
			const char *e = strstr(p + 9, "]]>");
			if (!e || depth == 0)
				return fail(p, "unterminated or misplaced CDATA section");
			p = e + 3;
		} else if (!strncmp(p, "<!DOCTYPE", 9) || !strncmp(p, "<?", 2)) {
			const char *e = strchr(p, '>');
			if (!e || depth || roots)
				return fail(p, "misplaced declaration");
			p = e + 1;
		} else if (p[1] == '/') {
			const char *q = p + 2, *nm = q;
			while (q < end && is_name((unsigned char)*q))
				q++;
			size_t len = (size_t)(q - nm);
			while (q < end && isspace((unsigned char)*q))
				q++;
			if (q >= end || *q != '>')
				return fail(p, "malformed end tag");
			if (!depth || nstack[depth - 1] != len ||
			    strncmp(stack[depth - 1], nm, len))
				return fail(p, "end tag does not match the open element");
			depth--;
			p = q + 1;
		} else {
			const char *q = p + 1, *nm = q;
			if (!isalpha((unsigned char)*q))
				return fail(p, "'<' that starts no tag");
			while (q < end && is_name((unsigned char)*q))
				q++;
			size_t len = (size_t)(q - nm);
			int empty = 0;
			for (;;) {
				const char *ws = q;
				while (q < end && isspace((unsigned char)*q))
					q++;
				if (q >= end)
					return fail(p, "unterminated tag");
				if (*q == '>') {
					q++;
					break;
				}
				if (*q == '/' && q + 1 < end && q[1] == '>') {
					q += 2;
					empty = 1;
					break;
				}
				if (q == ws)
					return fail(q, "attributes must be separated by space");
				const char *an = q;
				while (q < end && is_name((unsigned char)*q))
					q++;
				size_t alen = (size_t)(q - an);
				if (!alen || q >= end || *q != '=' || (q[1] != '"' && q[1] != '\''))
					return fail(q, "attribute is not name=\"value\"");
				char quote = q[1];
				const char *v = q + 2, *ve = memchr(v, quote, (size_t)(end - v));
				if (!ve)
					return fail(q, "unterminated attribute value");
				if (memchr(v, '<', (size_t)(ve - v)))
					return fail(v, "'<' in an attribute value");
				if (text(v, ve))
					return 1;
				if (((alen == 3 && !strncmp(an, "src", 3)) ||
				     (alen == 4 && !strncmp(an, "href", 4)) ||
				     (alen == 10 && !strncmp(an, "xlink:href", 10))) &&
				    *v != '#')
					return fail(
						an,
						"src/href to something other than a local #fragment");
				q = ve + 1;
			}
			if (depth == 0 && roots++)
				return fail(p, "a second root element");
			if (!empty) {
				if (depth == 256)
					return fail(p, "nesting deeper than 256");
				stack[depth] = nm;
				nstack[depth++] = len;
			}
			p = q;
		}
	}
	if (depth)
		return fail(stack[depth - 1], "element never closed");
	if (!roots)
		return fail(s, "no root element");
	return 0;
}

int main(int argc, char **argv)
{
	long max = -1;
	int i = 1, bad = 0;
	if (argc > 2 && !strcmp(argv[1], "-s")) {
		max = atol(argv[2]);
		i = 3;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: xmlcheck [-s MAXBYTES] FILE...\n");
		return 2;
	}
	for (; i < argc; i++) {
		path = argv[i];
		FILE *fp = fopen(path, "rb");
		if (!fp) {
			perror(path);
			return 2;
		}
		size_t cap = 1 << 16, n = 0, k;
		char *buf = malloc(cap + 1);
		while (buf && (k = fread(buf + n, 1, cap - n, fp)) > 0) {
			n += k;
			if (n == cap)
				buf = realloc(buf, (cap *= 2) + 1);
		}
		fclose(fp);
		if (!buf)
			return 2;
		buf[n] = '\0';
		base = buf;
		bad |= check(buf, n, max);
		free(buf);
	}
	return bad;
}
