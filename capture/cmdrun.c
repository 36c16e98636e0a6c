/*
 * cmdrun.c — `kprof capture -- <cmd>`: run the command with kprof-inject.so as its CUDA
 * injection library, sample NVML here while it runs, merge its record files into one trace.
 */
#include "kprof/capture.h"
#include "kprof/jsonw.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "intercept/child.h"
#include "intercept/hostops.h"
#include "kprof/diag.h"
#include "record/ctrace.h"
#include "record/devprops.h"
#include "record/kmetrics.h"
#include "record/nvml.h"
#include "record/recfile.h"

/* The names of enum kp_trace_api, in its order (KPROF_TRACE_API for kprof-inject.so). */
const char *const capture_trace_api_names[] = { "launch", "all", "none" };

const char *capture_parse_trace_api(const char *arg, void *mode)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(arg, capture_trace_api_names[i])) {
			*(int *)mode = i;
			return NULL;
		}
	return "valid: launch, all, none";
}

extern char **environ;

/* "kprof":{...} members: the command, its processes and exit status */
static char *run_meta(const struct kp_capture_opts *o, int nprocs, int status)
{
	char *meta = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&meta, &len);
	if (!f)
		return NULL;
	fputs("\"command\":[", f);
	for (char **a = o->cmd; *a; a++) {
		if (a != o->cmd)
			putc(',', f);
		jw_put_string(f, *a);
	}
	fprintf(f, "],\"processes\":%d,\"exit_status\":%d", nprocs, status);
	fclose(f);
	return meta;
}

/* Devices, versions and NVML as the child will see them: same environment, same order. */
static void setup_devices(struct kp_ctrace *t, struct kp_nvml *nv, int *nvml_ok)
{
	char why[512], bus[32] = "";
	int ndev = devprops_count();
	for (int i = 0; i < ndev && i < (int)(sizeof(t->dev) / sizeof(t->dev[0])); i++)
		if (devprops_read(&t->dev[t->ndev], i) == 0)
			t->ndev++;
	t->cuda_driver_version = devprops_driver_version();
	if (ndev > 0)
		devprops_pci_bus_id(0, bus, sizeof(bus));
	*nvml_ok = nvml_open(nv, "libnvidia-ml.so.1", bus[0] ? bus : NULL, why, sizeof(why)) == 0;
	if (!*nvml_ok) {
		fprintf(stderr, "kprof: warning: %s; the SM clock is unknown\n", why);
		return;
	}
	unsigned sm_max = 0, mem_max = 0;
	nvml_max_clocks(nv, &sm_max, &mem_max);
	t->sm_clock_max_mhz = sm_max, t->mem_clock_max_mhz = mem_max;
	if (t->ndev && !t->dev[0].clock_rate_khz)
		t->dev[0].clock_rate_khz = (int)sm_max * 1000;
	if (t->ndev && !t->dev[0].mem_clock_rate_khz)
		t->dev[0].mem_clock_rate_khz = (int)mem_max * 1000;
}

/* The variables the command runs with: kprof's, set over its own environment's */
struct child_vars {
	char inj[4200], dvar[4200], nvtx[4200], shimv[64], nvtxv[64], apiv[64];
	char *preload; /* malloc'ed LD_PRELOAD=..., or NULL */
	char *pypath;  /* malloc'ed PYTHONPATH=<torch hook>:..., or NULL */
	char *set[12]; /* NULL-terminated, for child_env() */
};

/*
 * --libs/--nvtx: kprof-shim.so preloaded before the command's own preloads, and NVTX's
 * injection library; appended to @v->set from @ns, returns the new count.
 */
static int shim_vars(struct child_vars *v, const struct kp_capture_opts *o, int ns)
{
	/* kprof-shim.so first, the command's own preloads after it */
	const char *op = getenv("LD_PRELOAD");
	size_t len = strlen(o->shim_so) + (op ? strlen(op) : 0) + 16;
	if ((v->preload = malloc(len)))
		snprintf(v->preload, len, "LD_PRELOAD=%s%s%s", o->shim_so, op && *op ? ":" : "",
			 op && *op ? op : "");
	if (v->preload)
		v->set[ns++] = v->preload;
	snprintf(v->shimv, sizeof(v->shimv), "KPROF_SHIM=%s", o->libs ? "on" : "off");
	v->set[ns++] = v->shimv;
	if (o->nvtx) {
		const char *on = getenv("NVTX_INJECTION64_PATH");
		if (on && *on && strcmp(on, o->shim_so))
			fprintf(stderr, "kprof: warning: overriding NVTX_INJECTION64_PATH='%s'\n",
				on);
		/* kprof's own library: never a libcupti it did not pick (NVTX#125) */
		snprintf(v->nvtx, sizeof(v->nvtx), "NVTX_INJECTION64_PATH=%s", o->shim_so);
		v->set[ns++] = v->nvtx;
	}
	snprintf(v->nvtxv, sizeof(v->nvtxv), "KPROF_NVTX=%s", o->nvtx ? "on" : "off");
	v->set[ns++] = v->nvtxv;
	return ns;
}

/* kprof-inject.so as the CUDA injection library, its record directory @dir, and the rest */
static void set_vars(struct child_vars *v, const struct kp_capture_opts *o, const char *dir)
{
	static char met[] = "KPROF_METRICS=only";
	const char *old = getenv("CUDA_INJECTION64_PATH");
	if (old && *old && strcmp(old, o->inject_so))
		fprintf(stderr, "kprof: warning: overriding CUDA_INJECTION64_PATH='%s'\n", old);
	snprintf(v->inj, sizeof(v->inj), "CUDA_INJECTION64_PATH=%s", o->inject_so);
	snprintf(v->dvar, sizeof(v->dvar), "KPROF_INJECT_DIR=%s", dir);
	int ns = 0;
	v->set[ns++] = v->inj;
	v->set[ns++] = v->dvar;
	snprintf(v->apiv, sizeof(v->apiv), "KPROF_TRACE_API=%s",
		 capture_trace_api_names[o->trace_api]);
	v->set[ns++] = v->apiv;
	v->preload = NULL;
	if (o->shim_so && (o->libs || o->nvtx))
		ns = shim_vars(v, o, ns);
	if (o->metrics)
		v->set[ns++] = met; /* kprof-inject.so: the range profiler, no activity */
	/* --torch: kprof's sitecustomize first, the command's own PYTHONPATH after it */
	v->pypath = o->torch_dir ? capture_pythonpath(o->torch_dir, getenv("PYTHONPATH")) : NULL;
	if (o->torch_dir && !v->pypath)
		fprintf(stderr, "kprof: warning: cannot put '%s' on PYTHONPATH; no torch hook\n",
			o->torch_dir);
	if (v->pypath)
		v->set[ns++] = v->pypath;
	v->set[ns] = NULL;
}

/*
 * The command spawned and waited for; its exit status (CHILD_CANNOT_EXEC/CHILD_NOT_FOUND when
 * it did not start, KP_ENV when it cannot be waited for).
 */
static int spawn_and_wait(const struct kp_capture_opts *o, char **envp)
{
	pid_t pid;
	int err, status;
	if (child_spawn(o->cmd, envp, &pid, &err) < 0) {
		fprintf(stderr, "kprof: error: cannot run '%s': %s\n", o->cmd[0], strerror(err));
		return pid ? child_exec_status(err) : CHILD_CANNOT_EXEC;
	}
	int ws = child_wait(pid);
	if (ws < 0) {
		fprintf(stderr, "kprof: error: waitpid: %s\n", strerror(errno));
		return KP_ENV;
	}
	status = child_exit_status(ws);
	if (WIFSIGNALED(ws))
		fprintf(stderr,
			"kprof: warning: '%s' was ended by signal %d (%s); records "
			"it had not flushed are lost\n",
			o->cmd[0], WTERMSIG(ws), strsignal(WTERMSIG(ws)));
	return status;
}

/* Run o->cmd to its end; returns its exit status (CHILD_CANNOT_EXEC/CHILD_NOT_FOUND when it did not start). */
static int run_child(const struct kp_capture_opts *o, const char *dir, struct kp_nvml *nv,
		     struct kp_ctrace *t, int nvml_ok)
{
	struct child_vars v;
	set_vars(&v, o, dir);
	char **envp = child_env(environ, v.set);
	if (!envp) {
		free(v.preload);
		free(v.pypath);
		fprintf(stderr, "kprof: error: out of memory\n");
		return KP_ENV;
	}
	/* like time(1): ^C goes to the command, and kprof stays to write the trace */
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	fflush(stdout);
	fflush(stderr);
	if (nvml_ok && nvml_sampler_start(nv, t, o->sample_period_ms) < 0)
		fprintf(stderr, "kprof: warning: cannot start the clock sampler thread\n");
	int status = spawn_and_wait(o, envp);
	nvml_sampler_stop(nv);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	free(envp);
	free(v.preload);
	free(v.pypath);
	return status;
}

static void summary(const struct kp_ctrace *t, const char *path, int nprocs)
{
	size_t nkern = 0;
	for (size_t i = 0; i < t->nrecs; i++)
		nkern += t->recs[i].kind == REC_KERNEL;
	unsigned lo = 0, hi = 0;
	for (size_t i = 0; i < t->nsamples; i++) {
		if (t->samples[i].reasons & 1) /* GpuIdle */
			continue;
		unsigned v = t->samples[i].sm_mhz;
		lo = !lo || v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	fprintf(stderr,
		"kprof: trace '%s': %zu kernel records from %d process%s, %llu dropped "
		"records, %zu clock samples",
		path, nkern, nprocs, nprocs == 1 ? "" : "es",
		(unsigned long long)t->dropped_records, t->nsamples);
	if (hi)
		fprintf(stderr, " (SM %u-%u MHz while busy)", lo, hi);
	fputc('\n', stderr);
}

/*
 * --metrics: the command once more, under the range profiler only (its kernels replayed, no
 * activity tracing: CUPTI 13.0 cannot flush activity records once the range profiler has
 * replayed kernels in a process), its counters joined to the timed run @t's kernels.
 */
static void metrics_run(const struct kp_capture_opts *o, const char *dir, struct kp_nvml *nv,
			struct kp_ctrace *t)
{
	char why[512];
	struct kp_capture_opts mo = *o;
	mo.libs = mo.nvtx = 0;
	mo.torch_dir = NULL; /* no NVTX recorded: the hook's ranges would only cost */
	struct kp_ctrace m;
	ctrace_init(&m);
	if (mkdir(dir, 0700) < 0) {
		fprintf(stderr, "kprof: warning: --metrics: cannot create '%s': %s; no counters\n",
			dir, strerror(errno));
		ctrace_free(&m);
		return;
	}
	fprintf(stderr, "kprof: --metrics: running '%s' again under the CUPTI range profiler\n",
		o->cmd[0]);
	int st = run_child(&mo, dir, nv, &m, 0);
	if (st != 0)
		fprintf(stderr,
			"kprof: warning: --metrics: the metrics run exited with status %d\n", st);
	if (recfile_merge_dir(&m, dir, why, sizeof(why)) < 0)
		fprintf(stderr, "kprof: warning: --metrics: %s\n", why);
	rmdir(dir);
	size_t n = kmetrics_join_runs(t, &m, stderr);
	fprintf(stderr, "kprof: --metrics: counters for %zu kernel%s\n", n, n == 1 ? "" : "s");
	ctrace_free(&m);
}

/* o->output opened and the record files' directory made; 0, or KP_ENV with nothing left behind */
static int open_run(const struct kp_capture_opts *o, FILE **out, char *dir, size_t dirlen)
{
	*out = fopen(o->output, "w");
	if (!*out) {
		fprintf(stderr, "kprof: error: cannot open '%s': %s\n", o->output, strerror(errno));
		return KP_ENV;
	}
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, dirlen, "%s/kprof-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "kprof: error: cannot create a directory in '%s': %s\n",
			tmp && *tmp ? tmp : "/tmp", strerror(errno));
		fclose(*out);
		unlink(o->output);
		return KP_ENV;
	}
	return 0;
}

/*
 * The command's timed run, its processes' record files merged into @t (their count in
 * *nprocs), then the --metrics run; returns the command's exit status.
 */
static int timed_run(const struct kp_capture_opts *o, const char *dir, struct kp_ctrace *t,
		     struct kp_nvml *nv, int *nprocs)
{
	char why[512];
	int nvml_ok;
	setup_devices(t, nv, &nvml_ok);

	struct kp_capture_opts timed = *o;
	timed.metrics = 0;
	int status = run_child(&timed, dir, nv, t, nvml_ok);

	*nprocs = recfile_merge_dir(t, dir, why, sizeof(why));
	if (*nprocs < 0) {
		fprintf(stderr, "kprof: warning: %s\n", why);
		*nprocs = 0;
	}
	rmdir(dir);
	if (o->metrics)
		metrics_run(o, dir, nv, t);
	return status;
}

/* library calls and NVTX ranges into ops, with what did not make it */
static void emit_host_ops(struct kp_ctrace *t, struct kp_hostops_stats *hs)
{
	if (hostops_emit(t, hs, stderr) < 0)
		fprintf(stderr,
			"kprof: warning: out of memory turning library calls and NVTX ranges "
			"into ops\n");
	if (hs->nvtx_open)
		fprintf(stderr,
			"kprof: warning: %zu NVTX range%s still open at exit; not written\n",
			hs->nvtx_open, hs->nvtx_open == 1 ? "" : "s");
	if (hs->nvtx_malformed > 5)
		fprintf(stderr, "kprof: warning: %zu malformed emit_nvtx messages in all\n",
			hs->nvtx_malformed);
}

/*
 * @t into @out (closed here) and the summary; no records: no file.  Returns @status, or KP_ENV
 * when the trace could not be written after the command succeeded.
 */
static int write_trace(const struct kp_capture_opts *o, struct kp_ctrace *t, FILE *out,
		       const struct kp_hostops_stats *hs, int status, int nprocs)
{
	if (t->nrecs == 0) {
		fclose(out);
		unlink(o->output);
		if (status != CHILD_CANNOT_EXEC && status != CHILD_NOT_FOUND)
			fprintf(stderr,
				"kprof: warning: no CUDA activity recorded from '%s'; '%s' not "
				"written\n",
				o->cmd[0], o->output);
		return status;
	}
	int bad = ctrace_write(t, out, o->output) < 0;
	int e = errno;
	if (fclose(out) != 0 && !bad)
		bad = 1, e = errno;
	if (bad) {
		fprintf(stderr, "kprof: error: cannot write '%s': %s\n", o->output, strerror(e));
		if (status == 0)
			status = KP_ENV;
	} else {
		summary(t, o->output, nprocs);
		if (hs->gemms || hs->nvtx_ranges)
			fprintf(stderr,
				"kprof: %zu library op%s (%zu without a shape), %zu NVTX "
				"range%s (%zu as ops)\n",
				hs->gemms, hs->gemms == 1 ? "" : "s", hs->gemms_unshaped,
				hs->nvtx_ranges, hs->nvtx_ranges == 1 ? "" : "s", hs->nvtx_ops);
		if (hs->module_ranges || hs->bwd_ops)
			fprintf(stderr,
				"kprof: %zu nn.Module range%s, %zu of %zu backward ops linked to "
				"their forward op\n",
				hs->module_ranges, hs->module_ranges == 1 ? "" : "s", hs->bwd_linked,
				hs->bwd_ops);
	}
	return status;
}

int capture_run_cmd(const struct kp_capture_opts *o)
{
	char dir[4096];
	FILE *out;
	if (!o->inject_so || !o->cmd || !o->cmd[0]) {
		fprintf(stderr, "kprof: error: no command or no kprof-inject.so\n");
		return KP_ENV;
	}
	int rc = open_run(o, &out, dir, sizeof(dir));
	if (rc)
		return rc;
	struct kp_ctrace t;
	ctrace_init(&t);
	t.sample_period_ms = o->sample_period_ms;
	struct kp_nvml nv;
	int nprocs;
	int status = timed_run(o, dir, &t, &nv, &nprocs);

	struct kp_hostops_stats hs;
	emit_host_ops(&t, &hs);
	t.clock_known = t.nsamples > 0;
	t.meta = run_meta(o, nprocs, status);
	const char *base = strrchr(o->cmd[0], '/');
	t.process_name = strdup(base ? base + 1 : o->cmd[0]);
	status = write_trace(o, &t, out, &hs, status, nprocs);
	if (t.dropped_records)
		fprintf(stderr, "kprof: warning: CUPTI dropped %llu records\n",
			(unsigned long long)t.dropped_records);
	nvml_close(&nv);
	ctrace_free(&t);
	return status;
}
