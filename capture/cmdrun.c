/*
 * cmdrun.c — `kprof capture -- <cmd>`: run the command with kprof-inject.so as its CUDA
 * injection library, sample NVML here while it runs, merge its record files into one trace.
 */
#include "kprof/capture.h"
#include "kprof/arena.h"
#include "kprof/jsonw.h"

#include <errno.h>
#include <inttypes.h>
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
#include "record/cmsg.h"
#include "record/ctrace.h"
#include "record/devprops.h"
#include "record/kmetrics.h"
#include "record/nvml.h"
#include "record/recfile.h"
#include "record/wtrace.h"

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
static void setup_devices(const struct kp_capture_opts *o, struct kp_ctrace *t, struct kp_nvml *nv,
			  int *nvml_ok)
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
		cmsg_warn(o, "%s; the SM clock is unknown", why);
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
	char inj[4200], dvar[4200], nvtx[4200], shimv[64], nvtxv[64], apiv[64], memv[64], shapev[64];
	char *preload; /* malloc'ed LD_PRELOAD=..., or NULL */
	char *pypath;  /* malloc'ed PYTHONPATH=<torch hook>:..., or NULL */
	char *set[13]; /* NULL-terminated, for child_env() */
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
	v->preload = xmalloc(len);
	snprintf(v->preload, len, "LD_PRELOAD=%s%s%s", o->shim_so, op && *op ? ":" : "",
		 op && *op ? op : "");
	v->set[ns++] = v->preload;
	snprintf(v->shimv, sizeof(v->shimv), "KPROF_SHIM=%s", o->libs ? "on" : "off");
	v->set[ns++] = v->shimv;
	if (o->nvtx) {
		const char *on = getenv("NVTX_INJECTION64_PATH");
		if (on && *on && strcmp(on, o->shim_so))
			cmsg_warn(o, "overriding NVTX_INJECTION64_PATH='%s'", on);
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
		cmsg_warn(o, "overriding CUDA_INJECTION64_PATH='%s'", old);
	snprintf(v->inj, sizeof(v->inj), "CUDA_INJECTION64_PATH=%s", o->inject_so);
	snprintf(v->dvar, sizeof(v->dvar), "KPROF_INJECT_DIR=%s", dir);
	int ns = 0;
	v->set[ns++] = v->inj;
	v->set[ns++] = v->dvar;
	snprintf(v->apiv, sizeof(v->apiv), "KPROF_TRACE_API=%s",
		 capture_trace_api_names[o->trace_api]);
	v->set[ns++] = v->apiv;
	/* always set: a KPROF_MEMORY of the caller's environment must not turn it on */
	snprintf(v->memv, sizeof(v->memv), "KPROF_MEMORY=%s", o->memory ? "on" : "off");
	v->set[ns++] = v->memv;
	v->preload = NULL;
	if (o->shim_so && (o->libs || o->nvtx))
		ns = shim_vars(v, o, ns);
	if (o->metrics)
		v->set[ns++] = met; /* kprof-inject.so: the range profiler, no activity */
	/* --torch: kprof's sitecustomize first, the command's own PYTHONPATH after it */
	v->pypath = o->torch_dir ? capture_pythonpath(o->torch_dir, getenv("PYTHONPATH")) : NULL;
	if (o->torch_dir && !v->pypath)
		cmsg_warn(o, "cannot put '%s' on PYTHONPATH; no torch hook", o->torch_dir);
	if (v->pypath) {
		v->set[ns++] = v->pypath;
		/* always set with the hook: the caller's KPROF_TORCH_SHAPES must not decide */
		snprintf(v->shapev, sizeof(v->shapev), "KPROF_TORCH_SHAPES=%d", o->torch_shapes ? 1 : 0);
		v->set[ns++] = v->shapev;
	}
	v->set[ns] = NULL;
}

/*
 * The command spawned and waited for; its exit status (CHILD_CANNOT_EXEC/CHILD_NOT_FOUND when
 * it did not start, KP_ENV when it cannot be waited for: the error in @d).
 */
static int spawn_and_wait(const struct kp_capture_opts *o, char **envp, struct kp_diag *d)
{
	pid_t pid;
	int err, status;
	if (child_spawn(o->cmd, envp, &pid, &err) < 0) {
		int st = pid ? child_exec_status(err) : CHILD_CANNOT_EXEC;
		cmsg_error(o, d, st, "cannot run '%s': %s", o->cmd[0], strerror(err));
		return st;
	}
	int ws = child_wait(pid);
	if (ws < 0) {
		cmsg_error(o, d, KP_ENV, "waitpid: %s", strerror(errno));
		return KP_ENV;
	}
	status = child_exit_status(ws);
	if (WIFSIGNALED(ws))
		cmsg_warn(o,
			  "'%s' was ended by signal %d (%s); records it had not flushed are lost",
			  o->cmd[0], WTERMSIG(ws), strsignal(WTERMSIG(ws)));
	return status;
}

/* Run o->cmd to its end; returns its exit status (CHILD_CANNOT_EXEC/CHILD_NOT_FOUND when it did not start). */
static int run_child(const struct kp_capture_opts *o, const char *dir, struct kp_nvml *nv,
		     struct kp_ctrace *t, int nvml_ok, struct kp_diag *d)
{
	struct child_vars v;
	set_vars(&v, o, dir);
	char **envp = child_env(environ, v.set);
	/* like time(1): ^C goes to the command, and kprof stays to write the trace */
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	cmsg_flush(o);
	if (nvml_ok && nvml_sampler_start(nv, t, o->sample_period_ms) < 0)
		cmsg_warn(o, "cannot start the clock sampler thread");
	int status = spawn_and_wait(o, envp, d);
	nvml_sampler_stop(nv);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	free(envp);
	free(v.preload);
	free(v.pypath);
	return status;
}

static void summary(const struct kp_capture_opts *o, const struct kp_ctrace *t,
		    const struct kp_trace_sum *sum, int nprocs)
{
	cmsg_note(o,
		  "trace '%s': %zu kernel records from %d process%s, %llu dropped records, %zu "
		  "clock samples%s",
		  o->output, sum->nkern, nprocs, nprocs == 1 ? "" : "es",
		  (unsigned long long)t->dropped_records, t->nsamples, sum->sm_range);
}

/*
 * --metrics: the command once more, under the range profiler only (its kernels replayed, no
 * activity tracing: CUPTI 13.0 cannot flush activity records once the range profiler has
 * replayed kernels in a process), its counters joined to the timed run @t's kernels.
 */
static void metrics_run(const struct kp_capture_opts *o, const char *dir, struct kp_nvml *nv,
			struct kp_ctrace *t, struct kp_diag *d)
{
	char why[512];
	struct kp_capture_opts mo = *o;
	mo.libs = mo.nvtx = mo.memory = 0;
	mo.torch_dir = NULL; /* no NVTX recorded: the hook's ranges would only cost */
	struct kp_ctrace m;
	ctrace_init(&m);
	if (mkdir(dir, 0700) < 0) {
		cmsg_warn(o, "--metrics: cannot create '%s': %s; no counters", dir,
			  strerror(errno));
		ctrace_free(&m);
		return;
	}
	cmsg_note(o, "--metrics: running '%s' again under the CUPTI range profiler", o->cmd[0]);
	int st = run_child(&mo, dir, nv, &m, 0, d);
	if (st != 0)
		cmsg_warn(o, "--metrics: the metrics run exited with status %d", st);
	if (recfile_merge_dir(&m, dir, o->msg, why, sizeof(why)) < 0)
		cmsg_warn(o, "--metrics: %s", why);
	rmdir(dir);
	size_t n = kmetrics_join_runs(t, &m, o->msg);
	cmsg_note(o, "--metrics: counters for %zu kernel%s", n, n == 1 ? "" : "s");
	ctrace_free(&m);
}

/*
 * o->output opened and the record files' directory made; 0, or KP_ENV with the error in @d and
 * nothing left behind
 */
static int open_run(const struct kp_capture_opts *o, FILE **out, char *dir, size_t dirlen,
		    struct kp_diag *d)
{
	*out = fopen(o->output, "w");
	if (!*out) {
		cmsg_error(o, d, KP_ENV, "cannot open '%s': %s", o->output, strerror(errno));
		return KP_ENV;
	}
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, dirlen, "%s/kprof-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		cmsg_error(o, d, KP_ENV, "cannot create a directory in '%s': %s",
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
		     struct kp_nvml *nv, int *nprocs, struct kp_diag *d)
{
	char why[512];
	int nvml_ok;
	setup_devices(o, t, nv, &nvml_ok);

	struct kp_capture_opts timed = *o;
	timed.metrics = 0;
	int status = run_child(&timed, dir, nv, t, nvml_ok, d);

	*nprocs = recfile_merge_dir(t, dir, o->msg, why, sizeof(why));
	if (*nprocs < 0) {
		cmsg_warn(o, "%s", why);
		*nprocs = 0;
	}
	rmdir(dir);
	if (o->metrics)
		metrics_run(o, dir, nv, t, d);
	return status;
}

/* library calls and NVTX ranges into ops, with what did not make it */
static void emit_host_ops(const struct kp_capture_opts *o, struct kp_ctrace *t,
			  struct kp_hostops_stats *hs)
{
	if (hostops_emit(t, hs, o->msg) < 0)
		cmsg_warn(o, "out of memory turning library calls and NVTX ranges into ops");
	if (hs->nvtx_open)
		cmsg_warn(o, "%zu NVTX range%s still open at exit; not written", hs->nvtx_open,
			  hs->nvtx_open == 1 ? "" : "s");
	if (hs->nvtx_malformed > 5)
		cmsg_warn(o, "%zu malformed emit_nvtx messages in all", hs->nvtx_malformed);
}

/*
 * @t into @out (closed here, capture/record/wtrace.c) and the summary; no records: no file.
 * Returns @status, or KP_ENV when the trace could not be written after the command succeeded
 * (the error in @d).
 */
static int finish_trace(const struct kp_capture_opts *o, struct kp_ctrace *t, FILE *out,
			const struct kp_hostops_stats *hs, int status, int nprocs,
			struct kp_diag *d)
{
	if (t->nrecs == 0) {
		fclose(out);
		unlink(o->output);
		if (status != CHILD_CANNOT_EXEC && status != CHILD_NOT_FOUND)
			cmsg_warn(o, "no CUDA activity recorded from '%s'; '%s' not written",
				  o->cmd[0], o->output);
		return status;
	}
	struct kp_trace_sum sum;
	struct kp_diag wd;
	if (wtrace_write(t, out, o->output, &sum, &wd) < 0) {
		cmsg_pass(o, d, &wd);
		return status == 0 ? KP_ENV : status;
	}
	summary(o, t, &sum, nprocs);
	if (hs->gemms || hs->nvtx_ranges)
		cmsg_note(o, "%zu library op%s (%zu without a shape), %zu NVTX range%s (%zu as ops)",
			  hs->gemms, hs->gemms == 1 ? "" : "s", hs->gemms_unshaped, hs->nvtx_ranges,
			  hs->nvtx_ranges == 1 ? "" : "s", hs->nvtx_ops);
	if (t->mem_library)
		cmsg_note(o, "%zu device allocation%s (%" PRIu64 " bytes) made by libraries through "
			  "their own CUDA runtime (cuBLAS, cuDNN: handles, workspaces) left out of "
			  "Total Reserved",
			  t->mem_library, t->mem_library == 1 ? "" : "s", t->mem_library_bytes);
	if (hs->module_ranges || hs->bwd_ops)
		cmsg_note(o, "%zu nn.Module range%s, %zu of %zu backward ops linked to their forward op",
			  hs->module_ranges, hs->module_ranges == 1 ? "" : "s", hs->bwd_linked,
			  hs->bwd_ops);
	return status;
}

int capture_run_cmd(const struct kp_capture_opts *o, struct kp_diag *d)
{
	char dir[4096];
	FILE *out;
	d->msg[0] = '\0', d->status = KP_OK;
	if (!o->inject_so || !o->cmd || !o->cmd[0])
		return cmsg_error(o, d, KP_ENV, "no command or no kprof-inject.so"), KP_ENV;
	int rc = open_run(o, &out, dir, sizeof(dir), d);
	if (rc)
		return rc;
	struct kp_ctrace t;
	ctrace_init(&t);
	t.sample_period_ms = o->sample_period_ms;
	t.memory = o->memory;
	struct kp_nvml nv;
	int nprocs;
	int status = timed_run(o, dir, &t, &nv, &nprocs, d);

	struct kp_hostops_stats hs;
	emit_host_ops(o, &t, &hs);
	t.clock_known = t.nsamples > 0;
	t.meta = run_meta(o, nprocs, status);
	const char *base = strrchr(o->cmd[0], '/');
	t.process_name = xstrdup(base ? base + 1 : o->cmd[0]);
	status = finish_trace(o, &t, out, &hs, status, nprocs, d);
	if (t.dropped_records)
		cmsg_warn(o, "CUPTI dropped %llu records", (unsigned long long)t.dropped_records);
	nvml_close(&nv);
	ctrace_free(&t);
	return status;
}
