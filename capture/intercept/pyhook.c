/*
 * pyhook.c — kprof's Python start-up hook (capture/intercept/python/) for `kprof capture --
 * <cmd>`: --torch's values, which commands get it by default, and the PYTHONPATH that puts it
 * first.  Pure: no CUDA, no Python.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kprof/capture.h"

const char *const capture_torch_names[] = { "auto", "on", "off" };

const char *capture_parse_torch(const char *arg, void *mode)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(arg, capture_torch_names[i])) {
			*(int *)mode = i;
			return NULL;
		}
	return "valid: auto, on, off";
}

/* "python", "python3", "python3.12" (and a trailing 'd' or 'm' ABI letter of old builds) */
static int python_name(const char *base)
{
	if (strncmp(base, "python", 6))
		return 0;
	const char *p = base + 6;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p == '.' && p[1] >= '0' && p[1] <= '9')
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	if (*p == 'd' || *p == 'm')
		p++;
	return *p == '\0';
}

/* @file's first line is "#!..." naming python (torchrun, accelerate: Python console scripts) */
static int python_shebang(const char *file)
{
	char line[256];
	FILE *f = fopen(file, "r");
	if (!f)
		return 0;
	size_t n = fread(line, 1, sizeof(line) - 1, f);
	fclose(f);
	line[n] = '\0';
	if (n < 2 || line[0] != '#' || line[1] != '!')
		return 0;
	line[strcspn(line, "\n")] = '\0';
	return strstr(line, "python") != NULL;
}

/* @name found as execvp finds it: as given with a '/', else in @path's directories */
static int python_script(const char *name, const char *path)
{
	if (strchr(name, '/'))
		return python_shebang(name);
	if (!path || !*name)
		return 0;
	char buf[4200];
	for (const char *d = path;; d++) {
		size_t len = strcspn(d, ":");
		if (len + strlen(name) + 2 <= sizeof(buf)) {
			snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len ? d : ".", name);
			if (access(buf, X_OK) == 0)
				return python_shebang(buf);
		}
		d += len;
		if (!*d)
			return 0;
	}
}

int capture_cmd_is_python(char *const *cmd, const char *path_env)
{
	if (!cmd || !cmd[0])
		return 0;
	const char *base = strrchr(cmd[0], '/');
	base = base ? base + 1 : cmd[0];
	size_t n = strlen(base);
	if (python_name(base) || (n > 3 && !strcmp(base + n - 3, ".py")))
		return 1;
	return python_script(cmd[0], path_env);
}

char *capture_pythonpath(const char *dir, const char *old)
{
	/* PYTHONPATH splits at ':'; an empty entry would add the working directory */
	if (!dir || !*dir || strchr(dir, ':') || strlen(dir) > 4096)
		return NULL;
	size_t len = strlen(dir) + (old ? strlen(old) : 0) + 16;
	char *s = malloc(len);
	if (s)
		snprintf(s, len, "PYTHONPATH=%s%s%s", dir, old && *old ? ":" : "",
			 old && *old ? old : "");
	return s;
}
