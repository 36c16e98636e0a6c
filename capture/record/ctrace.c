/*
 * ctrace.c — capture buffers and the Kineto-compatible JSON writer (integer ns throughout).
 */
#include "record/ctrace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/hmap.h"
#include "kprof/jsonw.h"
#include "record/cmem.h"

void ctrace_init(struct kp_ctrace *t)
{
	memset(t, 0, sizeof(*t));
	hmap_init(&t->strs, HMAP_STR);
	pthread_mutex_init(&t->lock, NULL);
	t->sample_period_ms = 10;
	t->untraced_ext = UINT64_MAX;
}

void ctrace_free(struct kp_ctrace *t)
{
	for (struct kp_hmap_entry *e = hmap_next(&t->strs, NULL); e; e = hmap_next(&t->strs, e))
		free(e->val.ptr);
	hmap_free(&t->strs);
	for (size_t i = 0; i < t->nspans; i++) {
		free(t->spans[i].name);
		free(t->spans[i].args);
	}
	free(t->spans);
	free(t->flows);
	free(t->hcalls);
	free(t->gnodes);
	free(t->recs);
	free(t->ext);
	free(t->samples);
	free(t->kmet);
	free(t->mwin);
	free(t->meta);
	free(t->process_name);
	pthread_mutex_destroy(&t->lock);
}

const char *ctrace_intern(struct kp_ctrace *t, const char *s, size_t len)
{
	pthread_mutex_lock(&t->lock);
	struct kp_hmap_entry *e = hmap_get_str(&t->strs, s, len);
	char *copy = e ? e->val.ptr : malloc(len + 1);
	if (!e && copy) {
		memcpy(copy, s, len);
		copy[len] = '\0';
		e = hmap_put_str(&t->strs, copy, len, NULL);
		e->val.ptr = copy;
	}
	pthread_mutex_unlock(&t->lock);
	return copy ? copy : "";
}

/* Grow *arr to hold one more element of @size; caller holds the lock. */
static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 1024;
	void *p = realloc(*arr, nc * size);
	if (!p)
		return -1;
	*arr = p;
	*cap = nc;
	return 0;
}

int ctrace_add_rec(struct kp_ctrace *t, const struct kp_rec *r)
{
	int rc = 0;
	pthread_mutex_lock(&t->lock);
	if (grow((void **)&t->recs, &t->caprecs, t->nrecs, sizeof(*r)) < 0)
		rc = -1;
	else
		t->recs[t->nrecs++] = *r;
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int ctrace_add_ext(struct kp_ctrace *t, uint32_t corr, uint64_t ext)
{
	int rc = 0;
	pthread_mutex_lock(&t->lock);
	if (grow((void **)&t->ext, &t->capext, t->next, sizeof(*t->ext)) < 0)
		rc = -1;
	else
		t->ext[t->next++] = (struct kp_extcorr){ corr, ext };
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int ctrace_add_sample(struct kp_ctrace *t, const struct kp_clk_sample *s)
{
	int rc = 0;
	pthread_mutex_lock(&t->lock);
	if (grow((void **)&t->samples, &t->capsamples, t->nsamples, sizeof(*s)) < 0)
		rc = -1;
	else
		t->samples[t->nsamples++] = *s;
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int ctrace_add_hcall(struct kp_ctrace *t, const struct kp_hcall *c)
{
	struct kp_hcall h = *c;
	h.name = c->name ? ctrace_intern(t, c->name, strlen(c->name)) : "";
	h.domain = c->domain ? ctrace_intern(t, c->domain, strlen(c->domain)) : NULL;
	int rc = 0;
	pthread_mutex_lock(&t->lock);
	if (grow((void **)&t->hcalls, &t->caphcalls, t->nhcalls, sizeof(h)) < 0)
		rc = -1;
	else
		t->hcalls[t->nhcalls++] = h;
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int ctrace_add_gnode(struct kp_ctrace *t, uint64_t node, uint64_t ext, uint64_t orig)
{
	int rc = 0;
	pthread_mutex_lock(&t->lock);
	if (grow((void **)&t->gnodes, &t->capgnodes, t->ngnodes, sizeof(*t->gnodes)) < 0)
		rc = -1;
	else
		t->gnodes[t->ngnodes++] = (struct kp_gnode){ node, ext, orig };
	pthread_mutex_unlock(&t->lock);
	return rc;
}

static int cmp_gnode(const void *a, const void *b)
{
	const struct kp_gnode *x = a, *y = b;
	return x->node < y->node ? -1 : x->node > y->node;
}

static const struct kp_gnode *gnode_find(const struct kp_gnode *v, size_t n, uint64_t node)
{
	struct kp_gnode key = { node, 0, 0 };
	return bsearch(&key, v, n, sizeof(*v), cmp_gnode);
}

size_t ctrace_resolve_gnodes(struct kp_ctrace *t)
{
	size_t set = 0;
	pthread_mutex_lock(&t->lock);
	if (t->ngnodes) {
		qsort(t->gnodes, t->ngnodes, sizeof(*t->gnodes), cmp_gnode);
		for (size_t i = 0; i < t->nrecs; i++) {
			struct kp_rec *r = &t->recs[i];
			if (!r->graph_node_id || r->gext)
				continue;
			const struct kp_gnode *g = gnode_find(t->gnodes, t->ngnodes,
							      r->graph_node_id);
			/* clones of clones (instantiating an instantiated graph's source) */
			for (int hop = 0; g && !g->ext && g->orig && hop < 8; hop++)
				g = gnode_find(t->gnodes, t->ngnodes, g->orig);
			if (g && g->ext) {
				r->gext = g->ext;
				set++;
			}
		}
	}
	pthread_mutex_unlock(&t->lock);
	return set;
}

int ctrace_add_span(struct kp_ctrace *t, const char *cat, char *name, uint64_t start_ns,
		    uint64_t end_ns, uint32_t pid, uint32_t tid, uint64_t ext, char *args)
{
	int rc = 0;
	pthread_mutex_lock(&t->lock);
	if (!name || grow((void **)&t->spans, &t->capspans, t->nspans, sizeof(*t->spans)) < 0) {
		free(name);
		free(args);
		rc = -1;
	} else {
		t->spans[t->nspans++] = (struct kp_span){ cat, name, start_ns, end_ns,
							  pid, tid,  ext,      args };
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int ctrace_add_flow(struct kp_ctrace *t, char ph, uint64_t id, uint64_t ts_ns, uint32_t pid,
		    uint32_t tid)
{
	pthread_mutex_lock(&t->lock);
	int rc = grow((void **)&t->flows, &t->capflows, t->nflows, sizeof(*t->flows));
	if (rc == 0)
		t->flows[t->nflows++] = (struct kp_flow){ ph, id, ts_ns, pid, tid };
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int ctrace_clock_at(const struct kp_clk_sample *s, size_t n, uint64_t period_ns, uint64_t start_ns,
		    uint64_t end_ns, double *mhz)
{
	if (n == 0 || end_ns < start_ns)
		return -1;
	if (start_ns > s[n - 1].t_ns + period_ns || end_ns + period_ns < s[0].t_ns)
		return -1;
	/* first cell whose upper edge (midpoint with the next sample) is above start */
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		uint64_t edge = s[mid].t_ns + (s[mid + 1].t_ns - s[mid].t_ns) / 2;
		if (edge <= start_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (end_ns == start_ns) {
		*mhz = s[lo].sm_mhz;
		return 0;
	}
	/* integrate the step function over [start, end): MHz x ns, exact in 128 bits */
	unsigned __int128 acc = 0;
	uint64_t cur = start_ns;
	for (size_t i = lo; i < n && cur < end_ns; i++) {
		uint64_t edge = i + 1 < n ? s[i].t_ns + (s[i + 1].t_ns - s[i].t_ns) / 2
					  : UINT64_MAX;
		uint64_t stop = edge < end_ns ? edge : end_ns;
		if (stop > cur) {
			acc += (unsigned __int128)s[i].sm_mhz * (stop - cur);
			cur = stop;
		}
	}
	*mhz = (double)acc / (double)(end_ns - start_ns);
	return 0;
}

size_t ctrace_api_name_len(const char *name)
{
	size_t len = strlen(name);
	const char *v = strrchr(name, '_');
	if (v && v[1] == 'v' && v[2]) {
		const char *p = v + 2;
		while (*p >= '0' && *p <= '9')
			p++;
		if (*p == '\0')
			return (size_t)(v - name);
	}
	return len;
}

/* CUpti_ActivityMemoryKind, as Kineto's memoryKindString */
static const char *mem_kind(int k)
{
	static const char *const names[] = { "Unknown",       "Pageable",      "Pinned",
					     "Device",        "Array",         "Managed",
					     "Device Static", "Managed Static" };
	return k >= 0 && k < (int)(sizeof(names) / sizeof(names[0])) ? names[k] : "Unknown";
}

void ctrace_memcpy_name(char *buf, size_t size, int copy_kind, int src_kind, int dst_kind)
{
	/* CUpti_ActivityMemcpyKind, as Kineto's memcpyKindString */
	static const char *const kinds[] = { "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
					     "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP" };
	const char *k = copy_kind >= 0 && copy_kind < (int)(sizeof(kinds) / sizeof(kinds[0]))
				? kinds[copy_kind]
				: "Unknown";
	snprintf(buf, size, "Memcpy %s (%s -> %s)", k, mem_kind(src_kind), mem_kind(dst_kind));
}

void ctrace_memset_name(char *buf, size_t size, int kind)
{
	snprintf(buf, size, "Memset (%s)", mem_kind(kind));
}

const char *ctrace_overhead_name(int k)
{
	switch (k) {
	case 1:
		return "Driver Compiler";
	case 1 << 16:
		return "Buffer Flush";
	case 2 << 16:
		return "Instrumentation";
	case 3 << 16:
		return "Resource";
	case 4 << 16:
		return "Runtime Triggered Module Loading";
	case 5 << 16:
		return "Lazy Function Loading";
	case 6 << 16:
		return "Command Buffer Full";
	case 7 << 16:
		return "Activity Buffer Request";
	case 8 << 16:
		return "UVM Activity Init";
	default:
		return "Unknown";
	}
}

const char *ctrace_sync_name(int type)
{
	switch (type) {
	case 1:
		return "Event Sync";
	case 2:
		return "Stream Wait Event";
	case 3:
		return "Stream Sync";
	case 4:
		return "Context Sync";
	default:
		return "Unknown";
	}
}

/* µs with ns decimals relative to @base, integer-only: "{us}.{ns%1000:03}" */
static void put_ts(FILE *out, const char *key, uint64_t ns, uint64_t base)
{
	uint64_t rel = ns >= base ? ns - base : 0;
	fprintf(out, ",\"%s\":%" PRIu64 ".%03" PRIu64, key, rel / 1000, rel % 1000);
}

static void put_dur(FILE *out, uint64_t start, uint64_t end)
{
	uint64_t d = end > start ? end - start : 0;
	fprintf(out, ",\"dur\":%" PRIu64 ".%03" PRIu64, d / 1000, d % 1000);
}

/* ",\n{ph X, cat, name, pid, tid, ts, dur" of a complete event; the caller adds args and '}'. */
static void put_x(FILE *out, const char *cat, const char *name, int64_t pid, int64_t tid,
		  uint64_t start, uint64_t end, uint64_t base)
{
	fprintf(out, ",\n{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", cat);
	jw_put_string(out, name);
	fprintf(out, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64, pid, tid);
	put_ts(out, "ts", start, base);
	put_dur(out, start, end);
}

static int cmp_ext(const void *a, const void *b)
{
	const struct kp_extcorr *x = a, *y = b;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static int cmp_sample(const void *a, const void *b)
{
	const struct kp_clk_sample *x = a, *y = b;
	return x->t_ns < y->t_ns ? -1 : x->t_ns > y->t_ns;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* External id of correlation @corr, 0 when unlinked. */
static uint64_t ext_of(const struct kp_ctrace *t, uint32_t corr)
{
	size_t lo = 0, hi = t->next;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->ext[mid].corr < corr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->next && t->ext[lo].corr == corr ? t->ext[lo].ext : 0;
}

static int has_u32(const uint32_t *v, size_t n, uint32_t x)
{
	return bsearch(&x, v, n, sizeof(*v), cmp_u32) != NULL;
}

static const struct kp_cdevprops *dev_of(const struct kp_ctrace *t, uint32_t id)
{
	for (int i = 0; i < t->ndev; i++)
		if ((uint32_t)t->dev[i].id == id)
			return &t->dev[i];
	return NULL;
}

static int is_gpu(int kind)
{
	return kind == REC_KERNEL || kind == REC_MEMCPY || kind == REC_MEMSET;
}

/* A record is written unless it belongs to an untraced (warm-up, check) op or has no timing. */
static int rec_written(const struct kp_ctrace *t, const struct kp_rec *r, uint64_t *ext)
{
	*ext = r->gext ? r->gext : r->corr ? ext_of(t, r->corr) : 0;
	if (*ext && *ext == t->untraced_ext)
		return 0;
	if (r->kind == REC_KERNEL && r->start_ns == 0 && r->end_ns == 0)
		return 0;
	return 1;
}

static void put_devprops(FILE *out, const struct kp_cdevprops *d)
{
	fprintf(out, "{\"id\":%d,\"name\":", d->id);
	jw_put_string(out, d->name);
	fprintf(out,
		",\"totalGlobalMem\":%" PRIu64 ",\"computeMajor\":%d,\"computeMinor\":%d"
		",\"maxThreadsPerBlock\":%d,\"maxThreadsPerMultiprocessor\":%d,\"regsPerBlock\":%d"
		",\"warpSize\":%d,\"sharedMemPerBlock\":%" PRIu64 ",\"numSms\":%d"
		",\"regsPerMultiprocessor\":%d,\"sharedMemPerBlockOptin\":%" PRIu64
		",\"sharedMemPerMultiprocessor\":%" PRIu64,
		d->total_global_mem, d->compute_major, d->compute_minor, d->max_threads_per_block,
		d->max_threads_per_mp, d->regs_per_block, d->warp_size, d->smem_per_block,
		d->num_sms, d->regs_per_mp, d->smem_per_block_optin, d->smem_per_mp);
	if (d->clock_rate_khz)
		fprintf(out, ",\"clockRate\":%d", d->clock_rate_khz);
	if (d->mem_clock_rate_khz)
		fprintf(out, ",\"memoryClockRate\":%d", d->mem_clock_rate_khz);
	if (d->mem_bus_width)
		fprintf(out, ",\"memoryBusWidth\":%d", d->mem_bus_width);
	putc('}', out);
}

static void put_kernel(FILE *out, const struct kp_ctrace *t, const struct kp_rec *r, uint64_t ext,
		       uint64_t base)
{
	put_x(out, "kernel", r->name, r->device, r->stream, r->start_ns, r->end_ns, base);
	fputs(",\"args\":{", out);
	if (ext)
		fprintf(out, "\"External id\":%" PRIu64 ",", ext);
	fprintf(out,
		"\"queued\":%" PRIu64
		",\"device\":%u,\"context\":%u,\"stream\":%u,\"correlation\":%u"
		",\"registers per thread\":%u,\"shared memory\":%u",
		r->queued, r->device, r->context, r->stream, r->corr, r->regs, r->smem);
	const struct kp_cdevprops *d = dev_of(t, r->device);
	if (d && d->num_sms > 0 && d->warp_size > 0) {
		/* Kineto: blocks/SM = grid blocks / SMs; warps/SM = blocks/SM x threads / warpSize */
		double blocks = (double)r->grid[0] * r->grid[1] * r->grid[2] / d->num_sms;
		double warps = blocks * ((double)r->block[0] * r->block[1] * r->block[2]) /
			       d->warp_size;
		fprintf(out, ",\"blocks per SM\":%.6f,\"warps per SM\":%.6f", blocks, warps);
	}
	fprintf(out, ",\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d]", r->grid[0], r->grid[1],
		r->grid[2], r->block[0], r->block[1], r->block[2]);
	if (r->graph_id)
		fprintf(out, ",\"graph id\":%u,\"graph node id\":%" PRIu64, r->graph_id,
			r->graph_node_id);
	double mhz;
	if (t->clock_known &&
	    ctrace_clock_at(t->samples, t->nsamples, (uint64_t)t->sample_period_ms * 1000000u,
			    r->start_ns, r->end_ns, &mhz) == 0)
		fprintf(out, ",\"sm_clock_mhz\":%.1f", mhz);
	if (r->met && r->met <= t->nkmet)
		kmetrics_put_args(out, &t->kmet[r->met - 1]);
	fputs("}}", out);
}

static void put_mem(FILE *out, const struct kp_rec *r, uint64_t ext, uint64_t base)
{
	put_x(out, r->kind == REC_MEMCPY ? "gpu_memcpy" : "gpu_memset", r->name, r->device,
	      r->stream, r->start_ns, r->end_ns, base);
	fputs(",\"args\":{", out);
	if (ext)
		fprintf(out, "\"External id\":%" PRIu64 ",", ext);
	fprintf(out,
		"\"device\":%u,\"context\":%u,\"stream\":%u,\"correlation\":%u,\"bytes\":%" PRIu64,
		r->device, r->context, r->stream, r->corr, r->bytes);
	/* bytes per ns = GB/s */
	if (r->end_ns > r->start_ns)
		fprintf(out, ",\"memory bandwidth (GB/s)\":%.6g",
			(double)r->bytes / (double)(r->end_ns - r->start_ns));
	fputs("}}", out);
}

static void put_api(FILE *out, const struct kp_rec *r, uint64_t ext, uint64_t base)
{
	put_x(out, r->kind == REC_RUNTIME ? "cuda_runtime" : "cuda_driver", r->name, r->pid, r->tid,
	      r->start_ns, r->end_ns, base);
	fputs(",\"args\":{", out);
	if (ext)
		fprintf(out, "\"External id\":%" PRIu64 ",", ext);
	fprintf(out, "\"cbid\":%u,\"correlation\":%u}}", r->cbid, r->corr);
}

static void put_sync(FILE *out, const struct kp_rec *r, uint32_t device, uint64_t base)
{
	int has_stream = r->stream != 0xFFFFFFFFu;
	put_x(out, "cuda_sync", r->name, device, has_stream ? (int)r->stream : -1, r->start_ns,
	      r->end_ns, base);
	fprintf(out,
		",\"args\":{\"cuda_sync_kind\":\"%s\",\"stream\":%d,\"correlation\":%u,\"device\":%u"
		",\"context\":%u}}",
		r->name, has_stream ? (int)r->stream : -1, r->corr, device, r->context);
}

static void put_overhead(FILE *out, const struct kp_rec *r, uint64_t base)
{
	put_x(out, "overhead", r->name, -1, 0, r->start_ns, r->end_ns, base);
	fputs("}", out);
}

static void put_meta(FILE *out, const char *what, int64_t pid, int64_t tid, const char *key,
		     const char *val, uint64_t ts_ns, uint64_t base)
{
	fprintf(out, ",\n{\"name\":\"%s\",\"ph\":\"M\"", what);
	put_ts(out, "ts", ts_ns, base);
	fprintf(out, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"args\":{\"%s\":", pid, tid, key);
	jw_put_string(out, val);
	fputs("}}", out);
}

/* One ctrace_write(): the trace, the stream and the sets built before writing. */
struct wctx {
	const struct kp_ctrace *t;
	FILE *out;
	uint64_t first, base; /* earliest timestamp (UINT64_MAX: none), whole second below it */
	uint32_t *gpu, *api;  /* sorted correlations: reached the GPU / have an API record */
	size_t ngpu, napi;
	uint32_t *pids; /* CPU processes, named in first-seen order */
	size_t npids;
	uint32_t *streams; /* GPU streams seen, device << 24 | stream */
	size_t nstreams;
};

/* The earliest timestamp of spans, records and samples; UINT64_MAX when there is none. */
static uint64_t first_ts(const struct kp_ctrace *t)
{
	uint64_t first = UINT64_MAX;
	for (size_t i = 0; i < t->nspans; i++)
		if (t->spans[i].start_ns < first)
			first = t->spans[i].start_ns;
	for (size_t i = 0; i < t->nrecs; i++)
		if (t->recs[i].start_ns && t->recs[i].start_ns < first)
			first = t->recs[i].start_ns;
	for (size_t i = 0; i < t->nsamples; i++)
		if (t->samples[i].t_ns < first)
			first = t->samples[i].t_ns;
	return first;
}

/* correlations that reached the GPU (flow ends) and that have an API record (flow starts) */
static void flow_sets(struct wctx *w)
{
	const struct kp_ctrace *t = w->t;
	for (size_t i = 0; i < t->nrecs; i++) {
		const struct kp_rec *r = &t->recs[i];
		uint64_t ext;
		if (!rec_written(t, r, &ext))
			continue;
		if (is_gpu(r->kind))
			w->gpu[w->ngpu++] = r->corr;
		else if (r->kind == REC_RUNTIME || r->kind == REC_DRIVER)
			w->api[w->napi++] = r->corr;
	}
	qsort(w->gpu, w->ngpu, sizeof(*w->gpu), cmp_u32);
	qsort(w->api, w->napi, sizeof(*w->api), cmp_u32);
}

/* Everything before the events: deviceProperties, versions, the "kprof" object. */
static void put_header(const struct kp_ctrace *t, FILE *out, uint64_t base,
		       const struct kp_cmem_stats *ms)
{
	fputs("{\n\"schemaVersion\":1,\n\"deviceProperties\":[", out);
	for (int i = 0; i < t->ndev; i++) {
		if (i)
			putc(',', out);
		put_devprops(out, &t->dev[i]);
	}
	fputs("],\n", out);
	if (t->cupti_version)
		fprintf(out, "\"cupti_version\":%d,\n", t->cupti_version);
	if (t->cuda_runtime_version)
		fprintf(out, "\"cuda_runtime_version\":%d,\n", t->cuda_runtime_version);
	if (t->cuda_driver_version)
		fprintf(out, "\"cuda_driver_version\":%d,\n", t->cuda_driver_version);
	fputs("\"record_shapes\":1,\n\"kprof\":{\"version\":\"" KPROF_VERSION "\"", out);
	if (t->sm_clock_max_mhz)
		fprintf(out, ",\"sm_clock_max_mhz\":%u", t->sm_clock_max_mhz);
	else
		fputs(",\"sm_clock_max_mhz\":null", out);
	if (t->mem_clock_max_mhz)
		fprintf(out, ",\"mem_clock_max_mhz\":%u", t->mem_clock_max_mhz);
	fprintf(out, ",\"sample_period_ms\":%d,\"clock\":\"%s\",\"clock_samples\":%zu",
		t->sample_period_ms, t->clock_known ? "nvml" : "unknown", t->nsamples);
	fprintf(out, ",\"dropped_records\":%" PRIu64, t->dropped_records);
	if (t->memory) /* --memory: what the [memory] events are (kprof-capture(1)) */
		fprintf(out,
			",\"memory\":{\"source\":\"cupti\",\"events\":%zu,\"unattributed\":%zu"
			",\"other_kinds\":%zu,\"unmatched_releases\":%zu,\"library_allocations\":%zu"
			",\"library_bytes\":%" PRIu64 "}",
			ms->events, ms->unattributed, ms->other_kinds, ms->unmatched_releases,
			ms->library, ms->library_bytes);
	if (t->meta)
		fprintf(out, ",%s", t->meta);
	fprintf(out,
		"},\n\"displayTimeUnit\":\"ms\",\n\"baseTimeNanoseconds\":%" PRIu64
		",\n\"traceEvents\":[",
		base);
}

/*
 * The first event carries no leading comma: the CPU process name.  Without spans (an
 * injected command) the processes are those of the API calls, each named once.
 */
static void put_processes(struct wctx *w)
{
	const struct kp_ctrace *t = w->t;
	FILE *out = w->out;
	const char *pname = t->process_name ? t->process_name : "kprof";
	if (t->nspans)
		w->pids[w->npids++] = t->spans[0].pid;
	for (size_t i = 0; i < t->nrecs; i++) {
		const struct kp_rec *r = &t->recs[i];
		if (r->kind != REC_RUNTIME && r->kind != REC_DRIVER && r->kind != REC_MEMORY)
			continue;
		int seen = 0;
		for (size_t k = 0; k < w->npids && !seen; k++)
			seen = w->pids[k] == r->pid;
		if (!seen)
			w->pids[w->npids++] = r->pid;
	}
	if (!w->npids)
		w->pids[w->npids++] = 0;
	fprintf(out, "\n{\"name\":\"process_name\",\"ph\":\"M\"");
	put_ts(out, "ts", w->first == UINT64_MAX ? w->base : w->first, w->base);
	fprintf(out, ",\"pid\":%u,\"tid\":0,\"args\":{\"name\":", w->pids[0]);
	jw_put_string(out, pname);
	fputs("}}", out);
	put_meta(out, "process_labels", w->pids[0], 0, "labels", "CPU", w->first, w->base);
	for (size_t k = 1; k < w->npids; k++) {
		put_meta(out, "process_name", w->pids[k], 0, "name", pname, w->first, w->base);
		put_meta(out, "process_labels", w->pids[k], 0, "labels", "CPU", w->first, w->base);
	}
}

/* A GPU record: the end of its flow arrow when its API call is written; its stream noted. */
static void put_gpu_flow(struct wctx *w, const struct kp_rec *r)
{
	FILE *out = w->out;
	if (has_u32(w->api, w->napi, r->corr)) {
		fprintf(out, ",\n{\"ph\":\"f\",\"id\":%u,\"pid\":%u,\"tid\":%u", r->corr, r->device,
			r->stream);
		put_ts(out, "ts", r->start_ns, w->base);
		fputs(",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}", out);
	}
	int seen = 0;
	for (size_t k = 0; k < w->nstreams; k++)
		seen |= w->streams[k] == (r->device << 24 | r->stream);
	if (!seen)
		w->streams[w->nstreams++] = r->device << 24 | r->stream;
}

/* Every written record in buffer order, with the flow arrows from API calls to GPU work. */
static void put_records(struct wctx *w)
{
	const struct kp_ctrace *t = w->t;
	FILE *out = w->out;
	uint64_t base = w->base;
	for (size_t i = 0; i < t->nrecs; i++) {
		const struct kp_rec *r = &t->recs[i];
		uint64_t ext;
		if (!rec_written(t, r, &ext))
			continue;
		switch (r->kind) {
		case REC_KERNEL:
			put_kernel(out, t, r, ext, base);
			break;
		case REC_MEMCPY:
		case REC_MEMSET:
			put_mem(out, r, ext, base);
			break;
		case REC_RUNTIME:
		case REC_DRIVER:
			put_api(out, r, ext, base);
			if (has_u32(w->gpu, w->ngpu, r->corr)) {
				fprintf(out, ",\n{\"ph\":\"s\",\"id\":%u,\"pid\":%u,\"tid\":%u",
					r->corr, r->pid, r->tid);
				put_ts(out, "ts", r->start_ns, base);
				fputs(",\"cat\":\"ac2g\",\"name\":\"ac2g\"}", out);
			}
			break;
		case REC_SYNC:
			put_sync(out, r, t->ndev ? (uint32_t)t->dev[0].id : 0, base);
			break;
		case REC_OVERHEAD:
			put_overhead(out, r, base);
			break;
		default:
			break; /* REC_MEMORY: cmem_put() */
		}
		if (is_gpu(r->kind))
			put_gpu_flow(w, r);
	}
}

/* Clock samples as counter events, then the GPU processes' and streams' names. */
static void put_clocks_and_labels(const struct wctx *w)
{
	const struct kp_ctrace *t = w->t;
	FILE *out = w->out;
	for (size_t i = 0; i < t->nsamples; i++) {
		const struct kp_clk_sample *s = &t->samples[i];
		int devid = t->ndev ? t->dev[0].id : 0;
		fprintf(out,
			",\n{\"ph\":\"C\",\"cat\":\"gpu_clock\",\"name\":\"GPU %d SM clock (MHz)\""
			",\"pid\":%d,\"tid\":0",
			devid, devid);
		put_ts(out, "ts", s->t_ns, w->base);
		fprintf(out, ",\"args\":{\"sm_mhz\":%u,\"mem_mhz\":%u,\"reasons\":%" PRIu64 "}}",
			s->sm_mhz, s->mem_mhz, s->reasons);
	}
	for (int i = 0; i < t->ndev; i++) {
		char label[32];
		snprintf(label, sizeof(label), "GPU %d", t->dev[i].id);
		put_meta(out, "process_name", t->dev[i].id, 0, "name", label, w->first, w->base);
		put_meta(out, "process_labels", t->dev[i].id, 0, "labels", label, w->first,
			 w->base);
	}
	for (size_t k = 0; k < w->nstreams; k++) {
		char label[32];
		uint32_t s = w->streams[k];
		snprintf(label, sizeof(label), "stream %u ", s & 0xFFFFFFu);
		put_meta(out, "thread_name", s >> 24, s & 0xFFFFFFu, "name", label, w->first,
			 w->base);
	}
}

/*
 * The host spans, then the fwdbwd flow ends between them, as Kineto writes them
 * (pytorch/kineto: libkineto/src/output_json.cpp, handleLink); python_function events carry
 * the Python ids only.
 */
static void put_spans(const struct kp_ctrace *t, FILE *out, uint64_t base)
{
	for (size_t i = 0; i < t->nspans; i++) {
		const struct kp_span *s = &t->spans[i];
		put_x(out, s->cat, s->name, s->pid, s->tid, s->start_ns, s->end_ns, base);
		if (!strcmp(s->cat, "python_function"))
			fprintf(out, ",\"args\":{%s}}", s->args ? s->args : "");
		else
			fprintf(out, ",\"args\":{\"External id\":%" PRIu64 "%s%s}}", s->ext,
				s->args ? "," : "", s->args ? s->args : "");
	}
	for (size_t i = 0; i < t->nflows; i++) {
		const struct kp_flow *f = &t->flows[i];
		fprintf(out, ",\n{\"ph\":\"%c\",\"id\":%" PRIu64 ",\"pid\":%u,\"tid\":%u", f->ph,
			f->id, f->pid, f->tid);
		put_ts(out, "ts", f->ts_ns, base);
		fprintf(out, ",\"cat\":\"fwdbwd\",\"name\":\"fwdbwd\"%s}",
			f->ph == 'f' ? ",\"bp\":\"e\"" : "");
	}
}

int ctrace_write(struct kp_ctrace *t, FILE *out, const char *trace_name)
{
	pthread_mutex_lock(&t->lock);
	if (t->next)
		qsort(t->ext, t->next, sizeof(*t->ext), cmp_ext);
	if (t->nsamples)
		qsort(t->samples, t->nsamples, sizeof(*t->samples), cmp_sample);
	struct wctx w = { .t = t, .out = out, .first = first_ts(t) };
	w.base = w.first == UINT64_MAX ? 0 : w.first / 1000000000u * 1000000000u;
	/* at most one correlation, process and stream per record, plus the spans' process */
	w.gpu = malloc((t->nrecs + 1) * sizeof(*w.gpu));
	w.api = malloc((t->nrecs + 1) * sizeof(*w.api));
	w.pids = malloc((t->nrecs + 1) * sizeof(*w.pids));
	w.streams = malloc((t->nrecs + 1) * sizeof(*w.streams));
	int rc = -1;
	if (!w.gpu || !w.api || !w.pids || !w.streams) {
		errno = ENOMEM;
		goto out;
	}
	flow_sets(&w);
	struct kp_cmem_stats ms;
	size_t nmem;
	struct kp_cmem *mem = cmem_build(t, &nmem, &ms);
	if (nmem == SIZE_MAX) {
		errno = ENOMEM;
		goto out;
	}
	t->mem_library = ms.library, t->mem_library_bytes = ms.library_bytes;
	put_header(t, out, w.base, &ms);
	put_processes(&w);
	put_spans(t, out, w.base);
	put_records(&w);
	cmem_put(out, mem, nmem, w.base);
	free(mem);
	put_clocks_and_labels(&w);
	fputs("\n],\n\"traceName\":", out);
	jw_put_string(out, trace_name ? trace_name : "");
	fputs("\n}\n", out);
	rc = ferror(out) ? -1 : 0;
out:
	free(w.gpu);
	free(w.api);
	free(w.pids);
	free(w.streams);
	pthread_mutex_unlock(&t->lock);
	return rc;
}
