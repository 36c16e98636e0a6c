/*
 * main.c — command table, global options, exit status, stdout check.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kprof/cmd.h"
#include "kprof/diag.h"
#include "kprof/opts.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{ "analyze", cmd_analyze, "FLOPs, bytes and % of device peak per kernel or op of a trace" },
	{ "diff", cmd_diff, "compare two traces side by side; gate CI on regressions" },
	{ "capture", cmd_capture,
	  "record a Chrome trace with CUPTI around built-in workloads or any CUDA command" },
	{ "augment", cmd_augment,
	  "the trace with kprof's numbers in GPU events' args and TFLOP/s, GB/s counters, for Perfetto" },
	{ "merge", cmd_merge,
	  "combine per-rank summaries (analyze --ranks -f json) into one job's view" },
	{ "devices", cmd_devices, "print the device datasheet table" },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: kprof [-V | --version] [-h | --help] <command> [<args>]\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(fp, "   %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(fp,
		"\n'kprof <command> -h' shows a command's options; man kprof-<command> explains its output.\n");
}

/* "unknown command 'analyse' (did you mean 'analyze'?)" */
static void unknown_command(const char *cmd)
{
	const char *names[NCOMMANDS + 2];
	for (size_t i = 0; i < NCOMMANDS; i++)
		names[i] = commands[i].name;
	names[NCOMMANDS] = "help";
	names[NCOMMANDS + 1] = NULL;
	const char *s = opts_suggest(cmd, names);
	diag_fprintf(stderr, "kprof: error: unknown command '%s'", cmd);
	if (s)
		diag_fprintf(stderr, " (did you mean '%s'?)", s);
	fputc('\n', stderr);
}

static int finish_stdout(int status)
{
	/* perf's run_builtin: a full disk or closed pipe must not pass silently */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno == EPIPE)
			return status;
		diag_fprintf(stderr, "kprof: error: write failed on standard output: %s\n",
			strerror(errno));
		return KP_ENV;
	}
	if (fclose(stdout) != 0 && errno != EPIPE) {
		diag_fprintf(stderr, "kprof: error: close failed on standard output: %s\n",
			strerror(errno));
		return KP_ENV;
	}
	return status;
}

int main(int argc, char **argv)
{
	/*
	 * A fixed threshold: glibc raises it to the size of each large block freed (up to 32 MB),
	 * after which a trace's record vectors grow in the heap, copied on realloc and kept by
	 * it when freed; `diff` then read its second trace 14 MB above one analysis (big200.json).
	 * Mapped, they grow by mremap and go back to the system when freed.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	if (argc < 2) {
		usage(stderr);
		return KP_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V") || !strcmp(cmd, "version")) {
		printf("kprof %s\n", KPROF_VERSION);
		return finish_stdout(KP_OK);
	}
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		if (argc > 2 && strcmp(cmd, "help") == 0) {
			for (size_t i = 0; i < NCOMMANDS; i++)
				if (!strcmp(argv[2], commands[i].name)) {
					char *hargv[] = { argv[2], "-h", NULL };
					return finish_stdout(commands[i].fn(2, hargv));
				}
			unknown_command(argv[2]);
			return KP_USAGE;
		}
		usage(stdout);
		return finish_stdout(KP_OK);
	}
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(cmd, commands[i].name)) {
			/* a bad KPROF_* value is a usage error, as a bad option is */
			struct kp_diag d = { 0 };
			if (opts_env_check(&d) < 0) {
				diag_fprintf(stderr, "kprof: %s\n", d.msg);
				return d.status;
			}
			return finish_stdout(commands[i].fn(argc - 1, argv + 1));
		}
	if (cmd[0] == '-') {
		diag_fprintf(stderr, "kprof: error: unknown option '%s'\n", cmd);
		usage(stderr);
		return KP_USAGE;
	}
	unknown_command(cmd);
	usage(stderr);
	return KP_USAGE;
}
