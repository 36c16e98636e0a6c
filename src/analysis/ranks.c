/*
 * ranks.c — many traces of one job: parallel load into per-rank summaries, then the
 * cross-rank view (collectives matched by order, nccl-tests bandwidths, stragglers, skew).
 */
#include "kprof/ranks.h"

#include <ctype.h>
#include <inttypes.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "kprof/arena.h"
#include "kprof/pipeline.h"

/* c10 ScalarType names (record_param_comms "dtype") -> bytes; 0 unknown */
static int c10_dtype_bytes(const char *s)
{
	/* clang-format off */
	static const struct { const char *name; int bytes; } tab[] = {
		{ "Byte", 1 }, { "Char", 1 }, { "Bool", 1 }, { "QInt8", 1 }, { "QUInt8", 1 },
		{ "Short", 2 }, { "Half", 2 }, { "BFloat16", 2 }, { "UInt16", 2 },
		{ "Int", 4 }, { "Float", 4 }, { "QInt32", 4 }, { "UInt32", 4 },
		{ "ComplexHalf", 4 },
		{ "Long", 8 }, { "Double", 8 }, { "ComplexFloat", 8 }, { "UInt64", 8 },
		{ "ComplexDouble", 16 },
	};
	/* clang-format on */
	if (!s)
		return 0;
	if (!strncmp(s, "Float8_", 7))
		return 1;
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (!strcmp(s, tab[i].name))
			return tab[i].bytes;
	return 0;
}

/* "Collective name" ("all_reduce", "_allgather_base", "reduce_scatter_tensor_coalesced") */
static int kind_from_coll(const char *s)
{
	char b[64];
	size_t n = 0;
	for (; *s && n + 1 < sizeof(b); s++)
		if (*s != '_')
			b[n++] = (char)tolower((unsigned char)*s);
	b[n] = '\0';
	if (strstr(b, "allreduce"))
		return COLL_ALLREDUCE;
	if (strstr(b, "allgather"))
		return COLL_ALLGATHER;
	if (strstr(b, "reducescatter"))
		return COLL_REDUCESCATTER;
	if (strstr(b, "alltoall"))
		return COLL_ALLTOALL;
	if (!strncmp(b, "send", 4) || !strncmp(b, "recv", 4))
		return COLL_SENDRECV;
	if (strstr(b, "broadcast"))
		return COLL_BROADCAST;
	if (!strcmp(b, "reduce"))
		return COLL_REDUCE;
	return COLL_OTHER; /* barrier, wait, coalesced, gather, scatter: no bandwidth */
}

/* ncclKernel_AllReduce_RING_LL_Sum_float, ncclDevKernel_ReduceScatter_Sum_f32_RING_LL */
static int kind_from_kernel(const char *s)
{
	if (strstr(s, "AllReduce"))
		return COLL_ALLREDUCE;
	if (strstr(s, "AllGather"))
		return COLL_ALLGATHER;
	if (strstr(s, "ReduceScatter"))
		return COLL_REDUCESCATTER;
	if (strstr(s, "SendRecv") || strstr(s, "_Send") || strstr(s, "_Recv"))
		return COLL_SENDRECV; /* all-to-all runs as SendRecv too */
	if (strstr(s, "Broadcast"))
		return COLL_BROADCAST;
	if (strstr(s, "_Reduce"))
		return COLL_REDUCE;
	return COLL_OTHER;
}

/*
 * nccl-tests S: all-gather the whole gathered array (Out nelems), every other kind this
 * rank's input array (In nelems; for reduce-scatter that is the whole array).
 */
static int64_t coll_bytes(int kind, const struct kp_coll *c)
{
	int b = c10_dtype_bytes(c->dtype);
	if (!b)
		return -1;
	int64_t n = kind == COLL_ALLGATHER ? c->out_nelems : c->in_nelems;
	if (n < 0)
		n = kind == COLL_ALLGATHER ? c->in_nelems : c->out_nelems;
	if (n < 0 || n > INT64_MAX / b)
		return -1;
	return n * b;
}

int64_t ranks_rank_from_name(const char *path)
{
	int64_t found = -1;
	for (const char *p = path; *p; p++) {
		if (strncasecmp(p, "rank", 4))
			continue;
		const char *q = p + 4;
		if (*q == '[' || *q == '-' || *q == '_' || *q == '/')
			q++;
		if (!isdigit((unsigned char)*q))
			continue;
		int64_t v = 0;
		while (isdigit((unsigned char)*q) && v < INT32_MAX)
			v = v * 10 + (*q++ - '0');
		found = v;
	}
	return found;
}

static int cmp_comm(const void *pa, const void *pb)
{
	const struct kp_rank_comm *a = pa, *b = pb;
	return (a->ts_ns > b->ts_ns) - (a->ts_ns < b->ts_ns);
}

/* World size, backend, device and the rank: from the trace, else from the file name */
static void summarize_identity(struct kp_rank *r, const struct kp_trace *t)
{
	r->world_size = t->world_size;
	if (t->backend)
		snprintf(r->backend, sizeof(r->backend), "%s", t->backend);
	if (t->ndevs && t->devs[0].name)
		snprintf(r->device, sizeof(r->device), "%s", t->devs[0].name);
	if (t->ndevs)
		r->props = (struct kp_devprops){ t->devs[0].sms, t->devs[0].total_mem,
						 t->devs[0].cc_major, t->devs[0].cc_minor };
	if (t->rank >= 0) {
		r->rank = t->rank;
		r->rank_from = 0;
	} else if ((r->rank = ranks_rank_from_name(r->file)) >= 0) {
		r->rank_from = 1;
	} else {
		r->rank_from = 2;
	}
}

/* The numbered steps of @b, their mean span and the slowest one (-1 without steps) */
static void summarize_steps(struct kp_rank *r, const struct kp_breakdown *b)
{
	r->step_mean_ns = r->step_max_ns = r->slowest_step = -1;
	if (!b->nsteps || b->steps[0].num < 0)
		return;
	r->steps = xcalloc(b->nsteps, sizeof(*r->steps));
	r->nsteps = b->nsteps;
	int64_t sum = 0, n = 0;
	for (size_t i = 0; i < b->nsteps; i++) {
		const struct kp_bd_step *s = &b->steps[i];
		r->steps[i] = (struct kp_rank_step){ s->num, s->b.start_ns, s->b.span_ns,
						     s->partial };
		/* the partial last step holds the trace's tail: left out when others exist */
		if (s->partial && b->nsteps > 1)
			continue;
		sum += s->b.span_ns;
		n++;
		if (s->b.span_ns > r->step_max_ns) {
			r->step_max_ns = s->b.span_ns;
			r->slowest_step = s->num;
		}
	}
	r->step_mean_ns = n ? sum / n : -1;
}

/* Per GPU event, the index of its collective record in t->colls, -1 for none (malloc'ed) */
static int32_t *colls_by_gpu(const struct kp_trace *t)
{
	int32_t *coll = xmalloc((t->ngpu ? t->ngpu : 1) * sizeof(*coll));
	memset(coll, 0xff, (t->ngpu ? t->ngpu : 1) * sizeof(*coll));
	for (size_t i = 0; i < t->ncolls; i++)
		if (t->colls[i].gpu >= 0 && (size_t)t->colls[i].gpu < t->ngpu)
			coll[t->colls[i].gpu] = (int32_t)i;
	return coll;
}

/* GPU event @g as a communication: when, which step, its kind, group and bytes (@m: NULL) */
static void fill_comm(struct kp_rank_comm *c, const struct kp_trace *t, const struct kp_gpu *g,
		      const struct kp_coll *m)
{
	c->ts_ns = g->ts_ns;
	c->dur_ns = g->dur_ns;
	c->step = g->step >= 0 && (size_t)g->step < t->nsteps ? t->steps[g->step].num : -1;
	c->group = -1;
	c->bytes = -1;
	c->kind = (int8_t)(m && m->name ? kind_from_coll(m->name) : kind_from_kernel(g->name));
	if (m) {
		c->group = m->group_size;
		c->bytes = coll_bytes(c->kind, m);
	}
}

/* GPU time, and the communication events in time order */
static void summarize_comms(struct kp_rank *r, const struct kp_trace *t)
{
	int32_t *coll = colls_by_gpu(t);
	size_t n = 0;
	for (size_t i = 0; i < t->ngpu; i++) {
		const struct kp_gpu *g = &t->gpu[i];
		r->gpu_time_ns += g->dur_ns;
		n += breakdown_class(g, coll[i] >= 0) == BD_COMM;
	}
	r->comms = xcalloc(n ? n : 1, sizeof(*r->comms));
	for (size_t i = 0; i < t->ngpu; i++) {
		const struct kp_gpu *g = &t->gpu[i];
		if (breakdown_class(g, coll[i] >= 0) == BD_COMM)
			fill_comm(&r->comms[r->ncomms++], t, g,
				  coll[i] >= 0 ? &t->colls[coll[i]] : NULL);
	}
	if (r->ncomms)
		qsort(r->comms, r->ncomms, sizeof(*r->comms), cmp_comm);
	free(coll);
}

void ranks_summarize(struct kp_rank *r, const struct kp_trace *t)
{
	summarize_identity(r, t);
	struct kp_breakdown b;
	breakdown_run(t, NULL, &b);
	r->bd = b.all;
	summarize_steps(r, &b);
	summarize_comms(r, t);
	breakdown_free(&b);
}

/* ---- parallel load ---- */

struct job {
	char *const *paths;
	size_t n;
	size_t next; /* atomic: the next file to take */
	struct kp_rank *r;
	const struct kp_load_opts *lo;
};

static void load_one(struct kp_rank *r, const char *path, const struct kp_load_opts *lo)
{
	r->file = xmalloc(strlen(path) + 1);
	strcpy(r->file, path);
	r->rank = r->world_size = -1;
	struct kp_pipeline_in in = { .path = path, .load = *lo, .link_only = 1 };
	struct kp_pipeline_out p;
	if (pipeline_run(&in, &p) == 0) {
		ranks_summarize(r, &p.trace);
	} else {
		r->status = p.diag.status;
		snprintf(r->err, sizeof(r->err), "%s", p.diag.msg);
	}
	/* the warnings' strings are malloc'ed, not in the trace's arena: they move */
	r->warn = p.trace.warn;
	memset(&p.trace.warn, 0, sizeof(p.trace.warn));
	pipeline_free(&p);
}

static void *worker(void *arg)
{
	struct job *j = arg;
	for (;;) {
		size_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (i >= j->n)
			return NULL;
		load_one(&j->r[i], j->paths[i], j->lo);
	}
}

int ranks_load(struct kp_ranks *out, char *const *paths, size_t npaths, int jobs,
	       const struct kp_load_opts *lo, struct kp_diag *d)
{
	memset(out, 0, sizeof(*out));
	out->link_peak = -1;
#ifdef __GLIBC__
	/*
	 * A trace's big record vectors come and go while small summaries stay: with glibc's
	 * sliding mmap threshold the vectors land on the heap and the summaries pin it, so the
	 * heap grew ~150 KB a trace (bench/ranks-speed.sh).  A fixed threshold keeps them in
	 * their own mappings, returned whole on free: peak RSS stays flat in N.
	 */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
	out->r = xcalloc(npaths ? npaths : 1, sizeof(*out->r));
	out->n = npaths;
	if (jobs <= 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		jobs = c > 0 ? (int)c : 1;
	}
	if ((size_t)jobs > npaths)
		jobs = npaths ? (int)npaths : 1;
	out->jobs = jobs;
	struct job j = { paths, npaths, 0, out->r, lo };
	pthread_t *th = xcalloc((size_t)jobs, sizeof(*th));
	int started = 0;
	for (int i = 1; i < jobs; i++)
		if (pthread_create(&th[i], NULL, worker, &j) == 0)
			started++;
		else
			break;
	worker(&j); /* the calling thread is worker 0 */
	for (int i = 1; i <= started; i++)
		pthread_join(th[i], NULL);
	free(th);
	for (size_t i = 0; i < npaths; i++)
		if (out->r[i].status) {
			d->status = out->r[i].status;
			snprintf(d->msg, sizeof(d->msg), "%s", out->r[i].err);
			return -1;
		}
	return 0;
}

/* ---- the cross-rank view ---- */

static int cmp_rank(const void *pa, const void *pb)
{
	const struct kp_rank *a = pa, *b = pb;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

/*
 * ", missing: 1-3, 7" (ranks sorted): the ids in [0, @ws) that no trace has, as ranges,
 * cut with ", ..." when long; "" when the ids were not known (@bad: argument order).
 */
static void missing_list(const struct kp_ranks *rs, int64_t ws, int bad, char *buf, size_t cap)
{
	buf[0] = '\0';
	if (bad)
		return;
	size_t len = 0, i = 0;
	int nrange = 0;
	for (int64_t id = 0; id < ws;) {
		while (i < rs->n && rs->r[i].rank < id)
			i++;
		if (i < rs->n && rs->r[i].rank == id) {
			id++;
			continue;
		}
		int64_t end = i < rs->n && rs->r[i].rank < ws ? rs->r[i].rank : ws; /* exclusive */
		char one[64];
		if (end - id == 1)
			snprintf(one, sizeof(one), "%" PRId64, id);
		else
			snprintf(one, sizeof(one), "%" PRId64 "-%" PRId64, id, end - 1);
		if (len + strlen(one) + 16 >= cap) {
			snprintf(buf + len, cap - len, ", ...");
			return;
		}
		len += (size_t)snprintf(buf + len, cap - len, "%s%s",
					nrange++ ? ", " : ", missing: ", one);
		id = end;
	}
}

/* ranks from distributedInfo or file names; argument order when they are missing or clash */
static void order_ranks(struct kp_ranks *rs)
{
	int bad = 0;
	for (size_t i = 0; i < rs->n; i++)
		bad |= rs->r[i].rank < 0;
	if (!bad && rs->n > 0) { /* qsort(NULL, 0): undefined (a summary of no ranks) */
		qsort(rs->r, rs->n, sizeof(*rs->r), cmp_rank);
		for (size_t i = 1; i < rs->n; i++)
			if (rs->r[i].rank == rs->r[i - 1].rank) {
				diag_warn_add(
					&rs->warn, "duplicate ranks", rs->r[i].file,
					"rank %" PRId64
					" appears in '%s' and '%s': ranks follow the argument order",
					rs->r[i].rank, rs->r[i - 1].file, rs->r[i].file);
				bad = 1;
				break;
			}
	} else {
		diag_warn_add(
			&rs->warn, "traces without a rank", NULL,
			"a trace has no distributedInfo.rank and no rank in its file name: ranks follow the argument order");
	}
	if (bad) {
		/* back to argument order: file names were given in it, ranks numbered 0.. */
		for (size_t i = 0; i < rs->n; i++)
			rs->r[i].rank_from = 2;
		for (size_t i = 0; i < rs->n; i++)
			rs->r[i].rank = (int64_t)i;
	}
	int64_t ws = rs->n ? rs->r[0].world_size : -1;
	for (size_t i = 1; i < rs->n; i++)
		if (rs->r[i].world_size != ws) {
			char a[32] = "no world size", b[32] = "no world size";
			if (ws > 0)
				snprintf(a, sizeof(a), "world size %" PRId64, ws);
			if (rs->r[i].world_size > 0)
				snprintf(b, sizeof(b), "world size %" PRId64, rs->r[i].world_size);
			diag_warn_add(&rs->warn, "world sizes differ", rs->r[i].file,
				      "'%s' has %s, '%s' %s", rs->r[0].file, a, rs->r[i].file, b);
			break;
		}
	if (ws > 0 && (int64_t)rs->n < ws && !(rs->one_rank && rs->n == 1)) {
		char list[256];
		missing_list(rs, ws, bad, list, sizeof(list));
		diag_warn_add(&rs->warn, "missing ranks", NULL, "%zu of %" PRId64 " ranks given%s",
			      rs->n, ws, list);
	}
}

static struct kp_coll_row *coll_row(struct kp_ranks *rs, int kind, int64_t bytes, int32_t n,
				    size_t *cap)
{
	for (size_t i = 0; i < rs->ncolls; i++)
		if (rs->colls[i].kind == kind && rs->colls[i].bytes == bytes && rs->colls[i].n == n)
			return &rs->colls[i];
	rs->colls = xgrow(rs->colls, rs->ncolls, cap, 16, sizeof(*rs->colls));
	struct kp_coll_row *c = &rs->colls[rs->ncolls++];
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->bytes = bytes;
	c->n = n;
	return c;
}

static int cmp_coll_row(const void *pa, const void *pb)
{
	const struct kp_coll_row *a = pa, *b = pb;
	if (a->time_ns != b->time_ns)
		return a->time_ns > b->time_ns ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind - b->kind;
	return (a->bytes > b->bytes) - (a->bytes < b->bytes);
}

/* Per step: instances, and per rank the count and lag of last arrivals. */
struct step_acc {
	int64_t num;
	int64_t instances;
	int64_t *late, *lag; /* per rank index */
};

static struct step_acc *step_of(struct step_acc *acc, size_t nacc, int64_t num)
{
	for (size_t i = 0; i < nacc; i++)
		if (acc[i].num == num)
			return &acc[i];
	return NULL;
}

/* Step num's window on rank @r, or NULL. */
static const struct kp_rank_step *rank_step(const struct kp_rank *r, int64_t num)
{
	for (size_t i = 0; i < r->nsteps; i++)
		if (r->steps[i].num == num)
			return &r->steps[i];
	return NULL;
}

/* Steps present on every rank, in rank 0's order (one rank has no stragglers); *nacc of them. */
static struct step_acc *common_steps(const struct kp_ranks *rs, size_t *nacc)
{
	size_t nr = rs->n;
	const struct kp_rank *r0 = &rs->r[0];
	struct step_acc *acc = xcalloc(r0->nsteps ? r0->nsteps : 1, sizeof(*acc));
	*nacc = 0;
	for (size_t s = 0; nr > 1 && s < r0->nsteps; s++) {
		int all = 1;
		for (size_t i = 1; i < nr && all; i++)
			all = rank_step(&rs->r[i], r0->steps[s].num) != NULL;
		if (!all)
			continue;
		acc[*nacc].num = r0->steps[s].num;
		acc[*nacc].late = xcalloc(nr, sizeof(int64_t));
		acc[*nacc].lag = xcalloc(nr, sizeof(int64_t));
		(*nacc)++;
	}
	return acc;
}

/*
 * Collectives are matched by order: the first m of each rank, m the fewest any rank ran; the
 * rest are counted unmatched (and warned about).  Returns m.
 */
static size_t matched_count(struct kp_ranks *rs)
{
	size_t m = SIZE_MAX, mx = 0;
	for (size_t i = 0; i < rs->n; i++) {
		if (rs->r[i].ncomms < m)
			m = rs->r[i].ncomms;
		if (rs->r[i].ncomms > mx)
			mx = rs->r[i].ncomms;
	}
	for (size_t i = 0; i < rs->n; i++)
		rs->unmatched += (int64_t)(rs->r[i].ncomms - m);
	if (mx != m)
		diag_warn_add(
			&rs->warn, "unmatched collectives", NULL,
			"ranks ran %zu to %zu communication kernels: the first %zu of each are matched by order",
			m, mx, m);
	return m;
}

/* One matched collective across the ranks. */
struct coll_instance {
	int64_t tmin;       /* the shortest duration: the collective without waiting */
	int64_t smin, smax; /* the first and last start */
	size_t last;        /* the rank that started last */
};

/* The k-th collective of every rank into @in; returns how many differ in kind from rank 0's. */
static int64_t match_instance(const struct kp_ranks *rs, size_t k, struct coll_instance *in)
{
	const struct kp_rank_comm *c0 = &rs->r[0].comms[k];
	int64_t kind_mismatch = 0;
	*in = (struct coll_instance){ INT64_MAX, INT64_MAX, INT64_MIN, 0 };
	for (size_t i = 0; i < rs->n; i++) {
		const struct kp_rank_comm *c = &rs->r[i].comms[k];
		kind_mismatch += c->kind != c0->kind;
		if (c->dur_ns < in->tmin)
			in->tmin = c->dur_ns;
		if (c->ts_ns > in->smax) {
			in->smax = c->ts_ns;
			in->last = i;
		}
		if (c->ts_ns < in->smin)
			in->smin = c->ts_ns;
	}
	return kind_mismatch;
}

/*
 * The k-th collective into its row (rank 0's kind and size; the group size from the
 * metadata, else the world, else the ranks given) and its step's last arrival.
 */
static void count_instance(struct kp_ranks *rs, struct step_acc *acc, size_t nacc, size_t k,
			   const struct coll_instance *in, size_t *cap)
{
	const struct kp_rank *r0 = &rs->r[0];
	const struct kp_rank_comm *c0 = &r0->comms[k];
	int32_t n = c0->group > 0        ? c0->group
		    : r0->world_size > 0 ? (int32_t)r0->world_size
					 : (int32_t)rs->n;
	struct kp_coll_row *row = coll_row(rs, c0->kind, c0->bytes, n, cap);
	row->calls++;
	row->time_ns += in->tmin;
	struct step_acc *sa = c0->step >= 0 ? step_of(acc, nacc, c0->step) : NULL;
	if (sa) {
		sa->instances++;
		sa->late[in->last]++;
		sa->lag[in->last] += in->smax - in->smin;
	}
}

/* Warnings on the matched collectives: starts too far apart, kinds that differ. */
static void match_warnings(struct kp_ranks *rs, int64_t spread_max, int64_t kind_mismatch)
{
	const struct kp_rank *r0 = &rs->r[0];
	/* a collective cannot start further apart than a whole trace lasts: other clocks */
	if (spread_max > r0->bd.span_ns)
		diag_warn_add(
			&rs->warn, "clocks differ", NULL,
			"one collective's start differs by %" PRId64
			" ns across ranks, more than a trace's GPU span: the ranks' clocks disagree and lags are not meaningful",
			spread_max);
	if (kind_mismatch)
		diag_warn_add(&rs->warn, "collective kinds differ", NULL,
			      "%" PRId64
			      " matched communication kernels differ in kind from rank %" PRId64
			      "'s: rows use rank %" PRId64 "'s",
			      kind_mismatch, r0->rank, r0->rank);
}

/*
 * Collectives: the k-th communication kernel of every rank is one instance; rows per kind and
 * size, last arrivals counted into @acc.
 */
static void match_collectives(struct kp_ranks *rs, struct step_acc *acc, size_t nacc)
{
	size_t m = matched_count(rs), cap = 0;
	int64_t kind_mismatch = 0, spread_max = 0;
	for (size_t k = 0; k < m; k++) {
		struct coll_instance in;
		kind_mismatch += match_instance(rs, k, &in);
		if (in.smax - in.smin > spread_max)
			spread_max = in.smax - in.smin;
		rs->matched++;
		count_instance(rs, acc, nacc, k, &in, &cap);
	}
	match_warnings(rs, spread_max, kind_mismatch);
}

/* Each row's algbw and busbw; rows by time, longest first. */
static void coll_bandwidths(struct kp_ranks *rs)
{
	for (size_t i = 0; i < rs->ncolls; i++) {
		struct kp_coll_row *c = &rs->colls[i];
		c->algbw = c->busbw = -1;
		if (c->bytes >= 0 && c->time_ns > 0) {
			/* algbw = S / t with t the shortest rank's duration (TraceLens' comm_latency) */
			c->algbw = (double)c->bytes * (double)c->calls /
				   ((double)c->time_ns * 1e-9);
			double f = coll_bus_factor(c->kind, c->n);
			c->busbw = f >= 0 ? c->algbw * f : -1;
		}
	}
	if (rs->ncolls)
		qsort(rs->colls, rs->ncolls, sizeof(*rs->colls), cmp_coll_row);
}

/* Stragglers: per common step, the rank that reached its collectives last most often. */
static void find_stragglers(struct kp_ranks *rs, struct step_acc *acc, size_t nacc)
{
	size_t nr = rs->n;
	rs->strag = xcalloc(nacc ? nacc : 1, sizeof(*rs->strag));
	rs->step_skew_max_ns = -1;
	rs->step_skew_step = -1;
	for (size_t s = 0; s < nacc; s++) {
		struct step_acc *a = &acc[s];
		struct kp_straggler *g = &rs->strag[rs->nstrag++];
		g->step = a->num;
		g->instances = a->instances;
		int64_t smin = INT64_MAX, smax = INT64_MIN, emin = INT64_MAX, emax = INT64_MIN;
		size_t last_end = 0;
		int partial = 0;
		for (size_t i = 0; i < nr; i++) {
			const struct kp_rank_step *w = rank_step(&rs->r[i], a->num);
			partial |= w->partial;
			if (w->span_ns < smin)
				smin = w->span_ns;
			if (w->span_ns > smax)
				smax = w->span_ns;
			if (w->start_ns + w->span_ns > emax) {
				emax = w->start_ns + w->span_ns;
				last_end = i;
			}
			if (w->start_ns + w->span_ns < emin)
				emin = w->start_ns + w->span_ns;
		}
		g->skew_ns = smax - smin;
		if (!partial && g->skew_ns > rs->step_skew_max_ns) {
			rs->step_skew_max_ns = g->skew_ns;
			rs->step_skew_step = a->num;
		}
		if (a->instances) {
			size_t best = 0;
			for (size_t i = 1; i < nr; i++)
				if (a->late[i] > a->late[best] ||
				    (a->late[i] == a->late[best] && a->lag[i] > a->lag[best]))
					best = i;
			g->rank = rs->r[best].rank;
			g->late = a->late[best];
			g->lag_ns = a->lag[best];
		} else {
			/* no collectives in the step: the rank whose step window ended last */
			g->rank = rs->r[last_end].rank;
			g->late = 0;
			g->lag_ns = emax - emin;
		}
		free(a->late);
		free(a->lag);
	}
}

void ranks_device(const struct kp_ranks *rs, const struct kp_devdb *db, const char *device,
		  struct kp_devchoice *c)
{
	const struct kp_rank *r = rs->n ? &rs->r[0] : NULL;
	devdb_choose(db, device, r && r->device[0] ? r->device : NULL, r ? &r->props : NULL, c);
}

void ranks_compare(struct kp_ranks *rs, double link_peak)
{
	rs->link_peak = link_peak;
	order_ranks(rs);
	if (!rs->n)
		return;
	size_t nacc;
	struct step_acc *acc = common_steps(rs, &nacc);
	match_collectives(rs, acc, nacc);
	coll_bandwidths(rs);
	find_stragglers(rs, acc, nacc);
	free(acc);
}

void ranks_free(struct kp_ranks *rs)
{
	for (size_t i = 0; i < rs->n; i++) {
		free(rs->r[i].file);
		free(rs->r[i].steps);
		free(rs->r[i].comms);
		diag_warn_free(&rs->r[i].warn);
	}
	free(rs->r);
	free(rs->colls);
	free(rs->strag);
	diag_warn_free(&rs->warn);
	memset(rs, 0, sizeof(*rs));
}
