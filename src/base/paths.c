/*
 * paths.c — command-line trace arguments to a list of files: directories give their traces.
 */
#include "kprof/paths.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kprof/arena.h"

static int is_trace_name(const char *s)
{
	size_t n = strlen(s);
	return (n > 5 && !strcmp(s + n - 5, ".json")) ||
	       (n > 8 && !strcmp(s + n - 8, ".json.gz")) ||
	       (n > 9 && !strcmp(s + n - 9, ".json.zst"));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **paths_expand(char *const *args, size_t nargs, size_t *npaths, struct kp_warnings *w,
		    struct kp_diag *d)
{
	size_t n = 0, cap = nargs + 1;
	char **v = xmalloc(cap * sizeof(*v));
	for (size_t i = 0; i < nargs; i++) {
		struct stat st;
		if (strcmp(args[i], "-") && stat(args[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			DIR *dir = opendir(args[i]);
			if (!dir) {
				diag_error(d, KP_ENV, "error: cannot open '%s': %s", args[i],
					   strerror(errno));
				goto fail;
			}
			size_t first = n;
			struct dirent *e;
			while ((e = readdir(dir))) {
				if (e->d_name[0] == '.' || !is_trace_name(e->d_name))
					continue;
				if (n + 1 >= cap) {
					cap *= 2;
					v = xrealloc(v, cap * sizeof(*v));
				}
				size_t len = strlen(args[i]) + strlen(e->d_name) + 2;
				v[n] = xmalloc(len);
				snprintf(v[n], len, "%s%s%s", args[i],
					 args[i][strlen(args[i]) - 1] == '/' ? "" : "/", e->d_name);
				/* a FIFO would hang the load, a device never end: only files */
				struct stat es;
				if (stat(v[n], &es) == 0 && !S_ISREG(es.st_mode)) {
					if (w)
						diag_warn_add(w, "non-regular directory entries", NULL,
							      "skipped '%s': not a regular file", v[n]);
					free(v[n]);
					continue;
				}
				n++;
			}
			closedir(dir);
			if (n == first) {
				diag_error(d, KP_BADINPUT,
					   "error: no *.json, *.json.gz or *.json.zst traces in '%s'",
					   args[i]);
				goto fail;
			}
			qsort(v + first, n - first, sizeof(*v), cmp_str);
			continue;
		}
		if (n + 1 >= cap) {
			cap *= 2;
			v = xrealloc(v, cap * sizeof(*v));
		}
		v[n] = xmalloc(strlen(args[i]) + 1);
		strcpy(v[n], args[i]);
		n++;
	}
	v[n] = NULL;
	*npaths = n;
	return v;
fail:
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return NULL;
}

void paths_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

int paths_mkdir_parents(const char *path, struct kp_diag *d)
{
	size_t n = strlen(path);
	char *dir = xmalloc(n + 1);
	memcpy(dir, path, n + 1);
	int rc = 0;
	for (char *p = dir + 1; *p && rc == 0; p++) {
		if (*p != '/' || p[-1] == '/')
			continue;
		*p = '\0';
		struct stat st;
		if (mkdir(dir, 0777) < 0 && errno != EEXIST)
			rc = diag_error(d, KP_ENV, "error: cannot create directory '%s': %s", dir,
					strerror(errno));
		else if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
			rc = diag_error(d, KP_ENV, "error: '%s' is not a directory", dir);
		*p = '/';
	}
	free(dir);
	return rc;
}
