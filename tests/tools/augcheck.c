/*
 * augcheck.c — did kprof augment keep every original byte?
 *   augcheck IN.json OUT.json      (plain files; gunzip first)
 * Removes from OUT, outside JSON strings, exactly what augment may insert:
 *   , "kprof op": ... up to the enclosing '}'      (args that had members)
 *   "kprof op": ... up to the enclosing '}'        (args that were {})
 *   , "args": {"kprof op": ... }                    (events without args)
 *   ,\n{"ph": "C", "name": "kprof ...}              (counter events)
 * then compares the rest with IN byte for byte.  Prints the counts, or the first
 * difference, and exits 1 when they differ or nothing was inserted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		perror(path);
		exit(2);
	}
	size_t cap = 1 << 20, k;
	char *b = malloc(cap);
	*n = 0;
	while ((k = fread(b + *n, 1, cap - *n, fp)) > 0) {
		*n += k;
		if (*n == cap)
			b = realloc(b, cap *= 2);
	}
	fclose(fp);
	return b;
}

/* from @p (outside a string), the end of the balanced object starting at *p == '{' */
static const char *skip_object(const char *p, const char *end)
{
	int depth = 0, str = 0, esc = 0;
	for (; p < end; p++) {
		if (str) {
			if (esc)
				esc = 0;
			else if (*p == '\\')
				esc = 1;
			else if (*p == '"')
				str = 0;
		} else if (*p == '"') {
			str = 1;
		} else if (*p == '{') {
			depth++;
		} else if (*p == '}' && --depth == 0) {
			return p + 1;
		}
	}
	return NULL;
}

/* from @p, the enclosing object's '}' (not consumed) */
static const char *to_close(const char *p, const char *end)
{
	int depth = 0, str = 0, esc = 0;
	for (; p < end; p++) {
		if (str) {
			if (esc)
				esc = 0;
			else if (*p == '\\')
				esc = 1;
			else if (*p == '"')
				str = 0;
		} else if (*p == '"') {
			str = 1;
		} else if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			if (depth-- == 0)
				return p;
		}
	}
	return NULL;
}

#define STARTS(p, lit)                                                                             \
	((size_t)(end - (p)) >= sizeof(lit) - 1 && !memcmp((p), lit, sizeof(lit) - 1))

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: augcheck IN.json OUT.json\n");
		return 2;
	}
	size_t nin, nout;
	char *in = slurp(argv[1], &nin), *out = slurp(argv[2], &nout);
	char *keep = malloc(nout + 1);
	size_t nk = 0;
	long args = 0, newargs = 0, counters = 0;
	const char *p = out, *end = out + nout;
	int str = 0, esc = 0;
	while (p < end) {
		if (str) {
			if (esc)
				esc = 0;
			else if (*p == '\\')
				esc = 1;
			else if (*p == '"')
				str = 0;
			keep[nk++] = *p++;
			continue;
		}
		const char *q = NULL;
		if (STARTS(p, ", \"kprof op\": ") || STARTS(p, "\"kprof op\": ")) {
			q = to_close(p + (*p == ',' ? 2 : 0), end);
			args++;
		} else if (STARTS(p, ", \"args\": {\"kprof op\": ")) {
			q = skip_object(p + 10, end);
			newargs++;
		} else if (STARTS(p, ",\n{\"ph\": \"C\", \"name\": \"kprof ")) {
			q = skip_object(p + 2, end);
			counters++;
		}
		if (q) {
			p = q;
			continue;
		}
		if (*p == '"')
			str = 1;
		keep[nk++] = *p++;
	}
	size_t i = 0;
	while (i < nin && i < nk && in[i] == keep[i])
		i++;
	if (i != nin || nk != nin) {
		long line = 1;
		for (size_t k = 0; k < i && k < nin; k++)
			line += in[k] == '\n';
		fprintf(stderr,
			"augcheck: %s:%ld: the output without kprof's insertions differs from the input (byte %zu; %zu vs %zu bytes)\n",
			argv[1], line, i, nk, nin);
		return 1;
	}
	if (!args && !newargs) {
		fprintf(stderr, "augcheck: %s: nothing was inserted\n", argv[2]);
		return 1;
	}
	printf("%ld args extended, %ld args added, %ld counter events; every input byte kept\n",
	       args, newargs, counters);
	free(in);
	free(out);
	free(keep);
	return 0;
}
