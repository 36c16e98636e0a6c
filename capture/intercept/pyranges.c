/*
 * pyranges.c — the module ranges of kprof's torch hook (capture/intercept/python/
 * kprof_torch_hook.py: "kprof: nn.Module: Linear_3") as python_function events with Python ids
 * and parents, as torch's profiler writes them (hostops_emit_modules, called by hostops_emit in
 * hostops.c, which skips these ranges: hostops_is_module_range).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "intercept/hcall.h"
#include "intercept/hostops-internal.h"
#include "intercept/hostops.h"
#include "record/ctrace.h"

/* ---- module ranges -> python_function events ---- */

int hostops_is_module_range(const struct kp_hcall *c)
{
	static const char pre[] = HOSTOPS_MODULE_PREFIX HOSTOPS_MODULE_NAME;
	return c->kind == HC_NVTX_PUSH && c->name && !strncmp(c->name, pre, sizeof(pre) - 1);
}

/* Ranges by start, longer (the enclosing one) first, then in the order they were opened. */
static int cmp_modrange_time(const void *a, const void *b, void *arg)
{
	const struct kp_hcall *v = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct kp_hcall *x = &v[i], *y = &v[j];
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->end_ns != y->end_ns)
		return x->end_ns > y->end_ns ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* The same within each (pid, tid). */
static int cmp_modrange_thread(const void *a, const void *b, void *arg)
{
	const struct kp_hcall *v = arg;
	const struct kp_hcall *x = &v[*(const size_t *)a], *y = &v[*(const size_t *)b];
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return cmp_modrange_time(a, b, arg);
}

/* The _N of "Class_N", -1 without one. */
static int64_t module_index(const char *name)
{
	const char *u = strrchr(name, '_');
	if (!u || !isdigit((unsigned char)u[1]))
		return -1;
	char *end;
	errno = 0;
	long long v = strtoll(u + 1, &end, 10);
	return errno || *end ? -1 : v;
}

/* One python_function event: module range @c, its Python id @id and its parent's @parent. */
static int emit_module(struct kp_ctrace *t, const struct kp_hcall *c, int64_t id, int64_t parent)
{
	const char *name = c->name + strlen(HOSTOPS_MODULE_PREFIX);
	int64_t mi = module_index(name + strlen(HOSTOPS_MODULE_NAME));
	char *args = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&args, &len);
	if (!f)
		return -1;
	if (parent > 0)
		fprintf(f, "\"Python parent id\":%" PRId64, parent);
	else
		fputs("\"Python parent id\":null", f);
	fprintf(f, ",\"Python id\":%" PRId64, id);
	if (mi >= 0)
		fprintf(f, ",\"Python module id\":%" PRId64, mi);
	fclose(f);
	if (!args)
		return -1;
	return ctrace_add_span(t, "python_function", strdup(name), c->start_ns, c->end_ns, c->pid,
			       c->tid, 0, args);
}

/*
 * The closed module ranges as python_function events: ids by start over the trace, each
 * one's parent the innermost module range around it on its thread (push/pop ranges nest).
 */
int hostops_emit_modules(struct kp_ctrace *t, struct kp_hostops_stats *st)
{
	size_t n = 0;
	for (size_t i = 0; i < t->nhcalls; i++)
		n += hostops_is_module_range(&t->hcalls[i]) && !(t->hcalls[i].flags & HCF_OPEN);
	if (!n)
		return 0;
	size_t *v = malloc(n * sizeof(*v)), *stack = malloc(n * sizeof(*stack));
	int64_t *id = calloc(t->nhcalls, sizeof(*id));
	int rc = -1;
	if (!v || !stack || !id)
		goto out;
	n = 0;
	for (size_t i = 0; i < t->nhcalls; i++)
		if (hostops_is_module_range(&t->hcalls[i]) && !(t->hcalls[i].flags & HCF_OPEN))
			v[n++] = i;
	qsort_r(v, n, sizeof(*v), cmp_modrange_time, t->hcalls);
	for (size_t k = 0; k < n; k++)
		id[v[k]] = (int64_t)k + 1;
	qsort_r(v, n, sizeof(*v), cmp_modrange_thread, t->hcalls);
	size_t depth = 0;
	rc = 0;
	for (size_t k = 0; k < n && rc == 0; k++) {
		const struct kp_hcall *c = &t->hcalls[v[k]];
		while (depth > 0) {
			const struct kp_hcall *top = &t->hcalls[stack[depth - 1]];
			if (top->pid == c->pid && top->tid == c->tid && top->end_ns >= c->end_ns)
				break;
			depth--;
		}
		rc = emit_module(t, c, id[v[k]], depth ? id[stack[depth - 1]] : 0);
		stack[depth++] = v[k];
		st->module_ranges++;
	}
out:
	free(v), free(stack), free(id);
	return rc;
}
