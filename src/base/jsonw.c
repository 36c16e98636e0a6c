/*
 * jsonw.c — the JSON writer: separators and indentation follow the container's layout.
 */
#include "kprof/jsonw.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/utf8.h"

void jw_init(struct kp_jw *jw, FILE *fp)
{
	memset(jw, 0, sizeof(*jw));
	jw->fp = fp;
}

static void newline(struct kp_jw *jw, int depth)
{
	fputc('\n', jw->fp);
	for (int i = 0; i < depth; i++)
		fputs("  ", jw->fp);
}

/* the separator before a value, and its member name */
static void begin_value(struct kp_jw *jw, const char *key)
{
	int d = jw->depth;
	if (d > 0) {
		if (jw->any[d])
			fputc(',', jw->fp);
		if (jw->lines[d])
			newline(jw, d);
		else if (jw->any[d])
			fputc(' ', jw->fp);
		jw->any[d] = 1;
	}
	if (key) {
		jw_put_string(jw->fp, key);
		fputs(": ", jw->fp);
	}
}

static void open_container(struct kp_jw *jw, const char *key, int lines, char open, char close)
{
	if (jw->depth == JW_MAX_DEPTH)
		return;
	begin_value(jw, key);
	fputc(open, jw->fp);
	jw->depth++;
	jw->close[jw->depth] = close;
	jw->lines[jw->depth] = (unsigned char)(lines != 0);
	jw->any[jw->depth] = 0;
}

void jw_object_begin(struct kp_jw *jw, const char *key, int lines)
{
	open_container(jw, key, lines, '{', '}');
}

void jw_array_begin(struct kp_jw *jw, const char *key, int lines)
{
	open_container(jw, key, lines, '[', ']');
}

void jw_end(struct kp_jw *jw)
{
	int d = jw->depth;
	if (d == 0)
		return;
	if (jw->lines[d] && jw->any[d])
		newline(jw, d - 1);
	fputc(jw->close[d], jw->fp);
	jw->depth--;
}

/* The length of the valid UTF-8 sequence at @p (a lead byte >= 0x80, NUL-terminated), or 0 */
static size_t valid_at(const unsigned char *p)
{
	size_t k = *p >= 0xF0 ? 4 : *p >= 0xE0 ? 3 : 2;
	if (*p < 0xC2 || *p > 0xF4 || strnlen((const char *)p, k) < k)
		return 0;
	return utf8_is_clean((const char *)p, k) ? k : 0;
}

void jw_put_string(FILE *fp, const char *s)
{
	if (!s) {
		fputs("null", fp);
		return;
	}
	fputc('"', fp);
	unsigned cp;
	size_t k;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", fp);
			break;
		case '\\':
			fputs("\\\\", fp);
			break;
		case '\n':
			fputs("\\n", fp);
			break;
		case '\t':
			fputs("\\t", fp);
			break;
		case '\r':
			fputs("\\r", fp);
			break;
		default:
			if (*p < 0x20 || *p == 0x7F) {
				fprintf(fp, "\\u%04x", *p);
			} else if (*p < 0x80) {
				fputc(*p, fp);
			} else if (!(k = valid_at(p))) {
				/* JSON is UTF-8: a byte of no valid sequence (a summary or results
				 * file's raw bytes; fuzz-summary) is U+FFFD, as utf8_clean() makes it */
				fputs("\\ufffd", fp);
			} else if (k < 4 && (cp = utf8_hidden((const char *)p, k))) {
				fprintf(fp, "\\u%04x", cp); /* C1, bidi marks: to show, not to act */
				p += k - 1;
			} else {
				fwrite(p, 1, k, fp);
				p += k - 1;
			}
		}
	}
	fputc('"', fp);
}

char *jw_format_double(char *buf, size_t cap, double v)
{
	if (v == floor(v) && fabs(v) < 9e15) {
		snprintf(buf, cap, "%.0f", v);
		return buf;
	}
	/*
	 * The shortest %.Ng that strtod() reads back bit for bit (17 digits always do), by
	 * bisection: if N digits read back, so do N + 1 (the N-digit decimal is one of N + 1
	 * digits, so the nearest of N + 1 digits is at least as close to v).  Closer could
	 * still fall outside where v's rounding interval is uneven (v a power of two):
	 * tests/unit/base/test-jsonw.c checks every power of two against the plain search.
	 */
	int lo = 1, hi = 17;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		snprintf(buf, cap, "%.*g", mid, v);
		if (strtod(buf, NULL) == v)
			hi = mid;
		else
			lo = mid + 1;
	}
	snprintf(buf, cap, "%.*g", lo, v);
	return buf;
}

void jw_string(struct kp_jw *jw, const char *key, const char *s)
{
	begin_value(jw, key);
	jw_put_string(jw->fp, s);
}

void jw_int(struct kp_jw *jw, const char *key, int64_t v)
{
	begin_value(jw, key);
	fprintf(jw->fp, "%" PRId64, v);
}

void jw_double(struct kp_jw *jw, const char *key, double v)
{
	char buf[40];
	begin_value(jw, key);
	fputs(isfinite(v) ? jw_format_double(buf, sizeof(buf), v) : "null", jw->fp);
}

void jw_bool(struct kp_jw *jw, const char *key, int v)
{
	begin_value(jw, key);
	fputs(v ? "true" : "false", jw->fp);
}

void jw_null(struct kp_jw *jw, const char *key)
{
	begin_value(jw, key);
	fputs("null", jw->fp);
}
