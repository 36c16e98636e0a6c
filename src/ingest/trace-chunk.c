/*
 * trace-chunk.c — the parallel parse of a trace (kp_load_opts.jobs > 1): a producer cutting
 * the input into chunks, workers parsing them with src/ingest/trace-decode.c into records of their
 * own, and the main thread taking those records into the trace (merge) where its serial
 * parse stands on a chunk's start.
 */
#include "kprof/trace-internal.h"

#include <limits.h>
#include <pthread.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kprof/stages.h"

/* ---- parallel parse ---- */

/*
 * With kp_load_opts.jobs > 1 a producer thread reads (and inflates) the stream ahead and cuts
 * it into chunks, each right after a '}' that looks like the end of an event ('}' ws ',' ws
 * '{' ws '"').  A plain regular file is not read by the producer ("direct"): it only finds
 * the cuts, about every chunk size of the file, in a few kB read around each, and each worker
 * reads its chunk's bytes with pread(2) into a buffer of its own, so reading is as parallel
 * as parsing; the main thread reads what it parses itself from the file too.  Workers parse every chunk as if it stood inside the event array right after an
 * element, into records of its own (trace_parse_event(), the serial code).  The main thread parses
 * serially as before and, whenever it stands after an element of the event array exactly
 * where a chunk starts, takes that chunk's records instead of parsing its bytes.  A chunk is
 * taken only when its own parse ended after an element at array level exactly at its last
 * byte, so the cut after it is an element boundary too (the parser is deterministic and it
 * started from one): the records are the ones the serial parse makes of those bytes.  The
 * guess of a cut is only a guess; its check is that parse.  Anything else -- the first chunk,
 * a cut inside a string or a nested object, JSON errors, truncation, the array's end,
 * non-object elements, B/E pairs -- is parsed serially from the chunk's start, and the main
 * thread takes chunks again at the next chunk start it stands on.  So output, warnings and
 * errors are those of --jobs 1 (tests/jobs/run.sh compares them).
 *
 * Strings are interned in t->strs under a lock, each loader keeping the canonical pointers it
 * has seen (L->cache), so records hold final pointers; threads are numbered per chunk and
 * renumbered in stream order when the chunk is merged, which keeps first-appearance order.
 */

#define PAR_MIN_CHUNK (64u << 10)
#define PAR_MAX_CHUNK (256u << 10)
#define PAR_MIN_BYTES (4u << 20)
/* the chunks being parsed hold at most max(this, 1/32 of the input) of input bytes in their
 * buffers, whatever --jobs asks: buffers, records of chunks not yet merged and each thread's
 * own tables are what the parallel parse costs on top of the serial one */
#define PAR_MIN_BUDGET (1u << 20)
#define PAR_BUDGET_DIV 32

enum { CH_QUEUED, CH_TAKEN, CH_DONE, CH_CANCELLED };

/* A warning of a worker, located when its chunk is merged (the line needs earlier chunks). */
struct dwarn {
	const char *kind;
	int64_t off;
	char *msg;
	int64_t nl, last_nl; /* '\n' in the chunk before off; stream offset of the last, -1 */
};

struct chunk {
	char *buf; /* stream bytes [start, start + len); buf[len] NUL, JSON_PAD */
	size_t len;
	int64_t start;
	int unread;         /* direct: the worker that takes it reads its bytes into buf */
	struct chunk *next; /* set once by the producer (atomic) */
	int state; /* CH_*, written under par.lock (atomic: wait_done() reads it without) */
	/* the worker's results */
	int clean;           /* parsed to its last byte, ending after an element */
	struct kp_trace out; /* records; thread indexes local to the chunk */
	int64_t nobj, last_good_off;
	struct dwarn *warns;
	size_t nwarns, capwarns;
	int64_t nl, last_nl; /* '\n' in buf; stream offset of the last one, -1 none */
};

struct worker {
	struct par *P;
	struct loader L;
	struct kp_arena arena; /* its slots and thread keys; given to t->arena at the end */
	pthread_t th;
	int started;
	int64_t busy_ns, read_ns, life_ns; /* parsing chunks, reading them (direct), alive */
};

struct par {
	struct loader *L; /* the main thread's */
	pthread_mutex_t lock;
	/* each waits on its own: one wake-up a chunk for one worker, none for the others */
	pthread_cond_t cv;         /* the main thread: published, done, produced all */
	pthread_cond_t wcv;        /* workers: published, no more work, stop */
	pthread_cond_t pcv;        /* the producer: released, hungry, stop */
	int main_waits;            /* the main thread waits on cv */
	pthread_mutex_t str_lock;  /* t->strs */
	struct kp_arena str_arena; /* t->strs' strings while threads run */
	size_t size;               /* target chunk bytes; buffers hold 2 * size + JSON_PAD */
	int direct;                /* a plain regular file: workers pread their own chunks */
	int64_t chunks, merged;    /* published, taken by the main thread */
	int64_t prod_busy_ns;      /* the producer's time less its waits for room */
	int64_t merge_ns, release_ns, wait_ns; /* the main thread's */
	int64_t fsize;                         /* direct: the file's size when the parse started */
	pthread_t prod;
	struct chunk *head, *tail;
	int produced_all, read_failed;
	struct kp_diag read_diag;
	size_t nlive, maxlive; /* chunks published and not released */
	size_t lowlive;        /* a release wakes a waiting producer at this many, so it
				  publishes a few chunks a wake-up (a wake-up costs a switch) */
	int prod_waits;        /* the producer waits on pcv */
	int hungry;            /* the main thread waits for a chunk: publish past maxlive */
	char **pool;           /* buffers of released chunks: all are reused, none freed */
	size_t npool, cappool;
	struct kp_trace *spare; /* record vectors of released chunks, counts 0, for reuse: as
				   many as threads, the others freed */
	size_t nspare, capspare;
	int trim;         /* spare vectors were freed: give the heap's free pages back */
	int trimmed;      /* ... done (once) */
	struct worker *w; /* w[0]: the main thread's, for chunks it parses itself */
	int nw;
	struct chunk *qnext; /* no queued chunk before it */
	int nowork, stop;
	/* main thread only */
	struct chunk *cur; /* read cursor */
	size_t cur_off;
	int64_t pos;       /* direct: the stream offset of its next read */
	struct chunk *rel; /* last released (chunks are released in order) */
};

static struct chunk *next_of(struct par *P, struct chunk *c)
{
	return c ? __atomic_load_n(&c->next, __ATOMIC_ACQUIRE)
		 : __atomic_load_n(&P->head, __ATOMIC_ACQUIRE);
}

static void defer_warn(struct loader *L, int64_t off, const char *kind, const char *msg)
{
	struct chunk *c = L->chunk;
	struct dwarn *w = VEC_PUSH(c->warns, c->nwarns, c->capwarns);
	w->kind = kind;
	w->off = off;
	w->msg = xstrdup(msg);
}

static const char *par_intern(struct loader *L, const char *s, size_t n)
{
	struct kp_hmap_entry *e = hmap_get_str(&L->cache, s, n);
	if (e)
		return e->key.ptr;
	struct par *P = L->par;
	pthread_mutex_lock(&P->str_lock);
	const char *c = strtab_intern(&P->L->t->strs, s, n);
	pthread_mutex_unlock(&P->str_lock);
	hmap_put_str(&L->cache, c, n, NULL); /* keyed by the canonical copy itself */
	return c;
}

static int is_space(int c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/*
 * Whether b[0..len) starts as what follows a cut ('}' before it): ws ',' ws '{' ws '"': 1 yes,
 * 0 no, -1 it ends before that is known.
 */
static int cut_follows(const char *b, size_t len)
{
	static const char want[] = ",{\"";
	size_t j = 0;
	for (int w = 0; w < 3; w++) {
		while (j < len && is_space((unsigned char)b[j]))
			j++;
		if (j >= len)
			return -1;
		if (b[j++] != want[w])
			return 0;
	}
	return 1;
}

/*
 * Where to cut b[0..len): just after the last '}' of '}' ws ',' ws '{' ws '"' in the second
 * half; len when there is none (the chunks on both sides of such a cut parse serially).
 */
static size_t find_cut(const char *b, size_t len)
{
	size_t lo = len / 2, i = len;
	while (i > lo) {
		const char *q = memrchr(b + lo, '{', i - lo);
		if (!q)
			break;
		i = (size_t)(q - b);
		size_t j = i + 1, k = i;
		while (j < len && is_space((unsigned char)b[j]))
			j++;
		if (j >= len || b[j] != '"')
			continue;
		while (k > 0 && is_space((unsigned char)b[k - 1]))
			k--;
		if (k == 0 || b[k - 1] != ',')
			continue;
		k--;
		while (k > 0 && is_space((unsigned char)b[k - 1]))
			k--;
		if (k > 0 && b[k - 1] == '}')
			return k;
	}
	return len;
}

/* under P->lock */
static char *get_buf(struct par *P)
{
	return P->npool ? P->pool[--P->npool] : xmalloc(2 * P->size + JSON_PAD);
}

/* under P->lock: something the main thread may wait for happened */
static void wake_main(struct par *P)
{
	if (P->main_waits)
		pthread_cond_signal(&P->cv);
}

/* under P->lock: the main thread waits for a change */
static void main_wait(struct par *P)
{
	int64_t t0 = stages_now();
	P->main_waits = 1;
	pthread_cond_wait(&P->cv, &P->lock);
	P->main_waits = 0;
	P->wait_ns += stages_now() - t0;
}

/* A chunk of @len bytes at @start, in @buf (NULL: direct, its worker reads them). */
static void publish(struct par *P, char *buf, size_t len, int64_t start)
{
	struct chunk *c = xcalloc(1, sizeof(*c));
	c->buf = buf;
	c->len = len;
	c->start = start;
	c->unread = !buf;
	if (buf)
		memset(buf + len, 0, JSON_PAD);
	/* the stream's first bytes never parse as elements of the event array */
	c->state = start == 0 ? CH_CANCELLED : CH_QUEUED;
	pthread_mutex_lock(&P->lock);
	if (P->tail)
		__atomic_store_n(&P->tail->next, c, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&P->head, c, __ATOMIC_RELEASE);
	P->tail = c;
	P->chunks++;
	if (!P->qnext && c->state == CH_QUEUED)
		P->qnext = c;
	P->nlive++;
	if (c->state == CH_QUEUED)
		pthread_cond_signal(&P->wcv);
	wake_main(P);
	pthread_mutex_unlock(&P->lock);
}

/* The producer after a publish: wait for room (chunks released); 1: stop. */
static int wait_room(struct par *P, int64_t *waited)
{
	int64_t t0 = stages_now();
	pthread_mutex_lock(&P->lock);
	while (!P->stop && P->nlive >= P->maxlive && !P->hungry) {
		P->prod_waits = 1;
		pthread_cond_wait(&P->pcv, &P->lock);
		P->prod_waits = 0;
	}
	if (P->nlive >= P->maxlive)
		P->hungry = 0; /* one chunk past the bound per request of the main thread */
	int stop = P->stop;
	pthread_mutex_unlock(&P->lock);
	*waited += stages_now() - t0;
	return stop;
}

/* The producer is done; it started at @t0 and waited @waited ns for room. */
static void produced_all(struct par *P, int64_t t0, int64_t waited)
{
	pthread_mutex_lock(&P->lock);
	P->prod_busy_ns = stages_now() - t0 - waited;
	P->produced_all = 1;
	wake_main(P);
	pthread_mutex_unlock(&P->lock);
}

/* The producer: reads (inflates) the input into chunks ahead of the parsers. */
static void *producer(void *arg)
{
	struct par *P = arg;
	size_t S = P->size;
	int64_t off = 0, t0 = stages_now(), waited = 0;
	pthread_mutex_lock(&P->lock);
	char *buf = get_buf(P);
	pthread_mutex_unlock(&P->lock);
	size_t len = 0;
	for (;;) {
		int end = 0;
		while (len < S) {
			/* up to S: the buffer holds 2 S, for a carry of up to S, but only the
			 * bytes read are touched (RSS) */
			ssize_t n = input_read(&P->L->in, buf + len, S - len, &P->read_diag);
			if (n <= 0) {
				P->read_failed = n < 0; /* published under the lock below */
				end = 1;
				break;
			}
			len += (size_t)n;
		}
		if (end) {
			publish(P, buf, len, off);
			break;
		}
		size_t cut = find_cut(buf, len);
		pthread_mutex_lock(&P->lock);
		char *nb = get_buf(P);
		pthread_mutex_unlock(&P->lock);
		memcpy(nb, buf + cut, len - cut);
		publish(P, buf, cut, off);
		off += (int64_t)cut;
		buf = nb;
		len -= cut;
		if (wait_room(P, &waited)) {
			free(buf);
			break;
		}
	}
	produced_all(P, t0, waited);
	return NULL;
}

/*
 * The end of a chunk that starts before @from: just after the first '}' at or after @from
 * that find_cut() would cut after, or @limit (cuts are read from the file, a window at a time).
 */
static int64_t next_cut(struct par *P, int64_t from, int64_t limit)
{
	char b[8192];
	struct kp_diag d;
	while (from < limit) {
		ssize_t n = input_pread(&P->L->in, b, sizeof(b), from, &d);
		if (n <= 0)
			break;
		size_t len = (size_t)n, i = 0, next = len;
		const char *q;
		while (i < len && (q = memchr(b + i, '}', len - i))) {
			i = (size_t)(q - b);
			if (from + (int64_t)i + 1 > limit)
				return limit;
			int r = cut_follows(b + i + 1, len - i - 1);
			if (r > 0)
				return from + (int64_t)i + 1;
			if (r < 0 && i > 0 && len == sizeof(b)) {
				next = i; /* the window ends in it: look again from the '}' */
				break;
			}
			i++;
		}
		from += (int64_t)next;
		if (len < sizeof(b))
			break;
	}
	return limit;
}

/*
 * The producer of a direct parse: only the chunks' bounds, cut about every P->size bytes of
 * the file (next_cut()); the workers read the chunks' bytes themselves, in parallel, into
 * buffers of their own.
 */
static void *producer_direct(void *arg)
{
	struct par *P = arg;
	int64_t S = (int64_t)P->size, size = P->fsize, start = 0;
	int64_t t0 = stages_now(), waited = 0;
	for (int64_t k = 1; start < size; k++) {
		int64_t lim = (k + 1) * S < size ? (k + 1) * S : size;
		int64_t end = k * S >= size ? size : next_cut(P, k * S, lim);
		publish(P, NULL, (size_t)(end - start), start);
		start = end;
		if (wait_room(P, &waited))
			break;
	}
	produced_all(P, t0, waited);
	return NULL;
}

/* Direct: chunk @c's bytes into its buffer; 0 when they cannot all be read. */
static int chunk_read(struct worker *W, struct chunk *c)
{
	struct kp_diag d;
	c->unread = 0;
	int64_t t0 = stages_now();
	ssize_t n = input_pread(&W->P->L->in, c->buf, c->len, c->start, &d);
	W->read_ns += stages_now() - t0;
	if (n != (ssize_t)c->len)
		return 0;
	memset(c->buf + c->len, 0, JSON_PAD);
	return 1;
}

/*
 * The lines of a clean chunk's warnings within the chunk (one pass over it), so merging them
 * needs only the lines before it, not its bytes.
 */
static void locate_warns(struct chunk *c)
{
	size_t at = 0;
	int64_t lines = 0, last_nl = -1;
	for (size_t i = 0; i < c->nwarns; i++) {
		struct dwarn *w = &c->warns[i];
		size_t k = (size_t)(w->off - c->start);
		lines += json_count_nl(c->buf + at, k - at);
		const char *nl = memrchr(c->buf + at, '\n', k - at);
		if (nl)
			last_nl = c->start + (nl - c->buf);
		at = k;
		w->nl = lines;
		w->last_nl = last_nl;
	}
}

/* Parse chunk @c as elements of the event array, into c->out. */
static void chunk_parse(struct worker *W, struct chunk *c)
{
	struct loader *L = &W->L;
	struct kp_json_tok tk;
	if (c->unread && !chunk_read(W, c))
		return; /* not clean: the main thread reads it and meets what went wrong */
	L->t = &c->out;
	L->chunk = c;
	L->bail = 0;
	L->last_thread = -1;
	L->last_good_off = -1;
	hmap_free(&L->threads);
	hmap_init(&L->threads, HMAP_STR);
	/* depth counted from the array: one level less than the stream's parser, so a chunk
	 * too deep for it is too deep here (and parsed serially) */
	json_init_elems(&L->p, c->buf, c->len, c->start, JSON_MAX_DEPTH - 1);
	for (;;) {
		if (json_elems_done(&L->p)) {
			c->clean = 1;
			break;
		}
		if (json_next(&L->p, &tk) != JT_OBJ)
			break;
		c->nobj++;
		if (trace_parse_event(L, tk.off) < 0 || L->bail)
			break;
	}
	json_free(&L->p);
	c->last_good_off = L->last_good_off;
	L->chunk = NULL;
	L->t = NULL;
	if (c->clean) {
		locate_warns(c);
		c->nl = json_count_nl(c->buf, c->len);
		const char *nl = memrchr(c->buf, '\n', c->len);
		c->last_nl = nl ? c->start + (nl - c->buf) : -1;
	}
}

static void parse_timed(struct worker *W, struct chunk *c)
{
	int64_t t0 = stages_now();
	chunk_parse(W, c);
	W->busy_ns += stages_now() - t0;
}

/*
 * under P->lock: @c is parsed.  Direct, its buffer goes back at once: the main thread reads
 * from the file, and merging needs no bytes of the chunk (locate_warns()).
 */
static void chunk_done(struct par *P, struct chunk *c)
{
	__atomic_store_n(&c->state, CH_DONE, __ATOMIC_RELEASE);
	if (P->direct && c->buf) {
		*VEC_PUSH(P->pool, P->npool, P->cappool) = c->buf;
		c->buf = NULL;
	}
	wake_main(P);
}

/* under P->lock: the first queued chunk, now taken, or NULL */
static struct chunk *take(struct par *P)
{
	struct chunk *c = P->qnext;
	while (c && c->state != CH_QUEUED)
		c = next_of(P, c);
	P->qnext = c;
	if (c) {
		__atomic_store_n(&c->state, CH_TAKEN, __ATOMIC_RELAXED);
		if (c->unread)
			c->buf = get_buf(P);
		/* vectors already grown and touched: no page faults, no regrowth per chunk */
		if (P->nspare)
			c->out = P->spare[--P->nspare];
	}
	return c;
}

static void *worker_main(void *arg)
{
	struct worker *W = arg;
	struct par *P = W->P;
	int64_t t0 = stages_now();
	pthread_mutex_lock(&P->lock);
	for (;;) {
		struct chunk *c = NULL;
		while (!P->stop && !P->nowork && !(c = take(P)))
			pthread_cond_wait(&P->wcv, &P->lock);
		if (!c)
			break;
		pthread_mutex_unlock(&P->lock);
		parse_timed(W, c);
		pthread_mutex_lock(&P->lock);
		chunk_done(P, c);
	}
	pthread_mutex_unlock(&P->lock);
	W->life_ns = stages_now() - t0;
	return NULL;
}

static void chunk_free_results(struct chunk *c)
{
	trace_free(&c->out);
	for (size_t i = 0; i < c->nwarns; i++)
		free(c->warns[i].msg);
	free(c->warns);
	c->warns = NULL;
	c->nwarns = c->capwarns = 0;
}

/* under P->lock: the main thread is done with @c (the oldest not released). */
static void release_locked(struct par *P, struct chunk *c)
{
	if (c->state == CH_QUEUED)
		__atomic_store_n(&c->state, CH_CANCELLED, __ATOMIC_RELAXED);
	while (c->state == CH_TAKEN)
		main_wait(P);
	/* kept even past maxlive: a burst of releases is followed by a burst of reads */
	if (c->buf)
		*VEC_PUSH(P->pool, P->npool, P->cappool) = c->buf;
	c->buf = NULL;
	P->nlive--;
	P->rel = c;
	if (P->nspare >= (size_t)P->nw) {
		/* freed (chunk_free_results()): the vectors of a burst of chunks parsed ahead
		 * (e.g. while the main thread parses the document's start) would stay for the
		 * whole parse.  The first burst's pages go back to the system; not at every
		 * release: faulting them in again cost 1.1-1.2x wall time on big200 -j 2 */
		P->trim = P->trim || !P->trimmed;
	} else if (c->out.capops || c->out.capgpu || c->out.caplaunches) {
		struct kp_trace *o = &c->out, *k = VEC_PUSH(P->spare, P->nspare, P->capspare);
		memset(k, 0, sizeof(*k));
		k->ops = o->ops, k->capops = o->capops;
		k->launches = o->launches, k->caplaunches = o->caplaunches;
		k->gpu = o->gpu, k->capgpu = o->capgpu;
		k->op_ext = o->op_ext, k->capop_ext = o->capop_ext;
		k->launch_ids = o->launch_ids, k->caplaunch_ids = o->caplaunch_ids;
		k->gpu_ids = o->gpu_ids, k->capgpu_ids = o->capgpu_ids;
		o->op_ext = NULL, o->launch_ids = NULL, o->gpu_ids = NULL;
		k->threads = o->threads, k->capthreads = o->capthreads;
		k->steps = o->steps, k->capsteps = o->capsteps;
		k->annots = o->annots, k->capannots = o->capannots;
		k->ranges = o->ranges, k->capranges = o->capranges;
		k->colls = o->colls, k->capcolls = o->capcolls;
		o->ops = NULL, o->launches = NULL, o->gpu = NULL, o->threads = NULL;
		o->steps = NULL, o->annots = NULL, o->ranges = NULL, o->colls = NULL;
	}
}

/*
 * The main thread is done with the chunks up to @last (released in order): their buffers and
 * record vectors go back, under one lock.
 */
static void release_upto(struct par *P, struct chunk *last)
{
	int64_t t0 = stages_now();
	struct chunk *first = next_of(P, P->rel);
	pthread_mutex_lock(&P->lock);
	for (struct chunk *c = first;; c = next_of(P, c)) {
		release_locked(P, c);
		if (c == last)
			break;
	}
	int wake = P->prod_waits && P->nlive <= P->lowlive, trim = P->trim;
	P->trimmed |= trim;
	P->trim = 0;
	pthread_mutex_unlock(&P->lock);
	if (wake)
		pthread_cond_signal(&P->pcv);
	for (struct chunk *c = first;; c = next_of(P, c)) {
		chunk_free_results(c);
		if (c == last)
			break;
	}
#ifdef __GLIBC__
	if (trim)
		malloc_trim(0);
#endif
	P->release_ns += stages_now() - t0;
}

/* The chunk after @c (NULL: the first), waiting for the producer; NULL after the last. */
static struct chunk *wait_next(struct par *P, struct chunk *c)
{
	struct chunk *n = next_of(P, c);
	if (n)
		return n;
	pthread_mutex_lock(&P->lock);
	while (!(n = next_of(P, c)) && !P->produced_all) {
		P->hungry = 1;
		pthread_cond_signal(&P->pcv);
		main_wait(P);
	}
	P->hungry = 0;
	pthread_mutex_unlock(&P->lock);
	return n;
}

/* Wait until @c is parsed, parsing it (or later queued chunks) on this thread meanwhile. */
static void wait_done(struct par *P, struct chunk *c)
{
	if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == CH_DONE)
		return;
	pthread_mutex_lock(&P->lock);
	while (c->state == CH_QUEUED || c->state == CH_TAKEN) {
		struct chunk *s = P->nowork ? NULL : take(P);
		if (!s) {
			main_wait(P);
			continue;
		}
		pthread_mutex_unlock(&P->lock);
		parse_timed(&P->w[0], s);
		pthread_mutex_lock(&P->lock);
		chunk_done(P, s);
	}
	pthread_mutex_unlock(&P->lock);
}

/*
 * The main parser's reads in a direct parse: the file's bytes from P->pos on, a chunk's worth
 * at most (the parser goes on after the chunks it takes: more would be read for nothing).
 */
static ssize_t par_pread(struct loader *L, void *buf, size_t cap)
{
	struct par *P = L->par;
	if (cap > P->size)
		cap = P->size;
	ssize_t n = input_pread(&L->in, buf, cap, P->pos, &L->read_diag);
	if (n < 0) {
		L->read_err = 1;
		return -1;
	}
	P->pos += n;
	return n;
}

/* The main parser's reads: the chunks' bytes from the cursor on. */
ssize_t trace_par_read(struct loader *L, void *buf, size_t cap)
{
	struct par *P = L->par;
	if (P->direct)
		return par_pread(L, buf, cap);
	for (;;) {
		struct chunk *c = P->cur;
		if (c && P->cur_off < c->len) {
			size_t n = c->len - P->cur_off < cap ? c->len - P->cur_off : cap;
			memcpy(buf, c->buf + P->cur_off, n);
			P->cur_off += n;
			return (ssize_t)n;
		}
		struct chunk *n = wait_next(P, c);
		if (!n) {
			pthread_mutex_lock(&P->lock);
			int failed = P->read_failed;
			pthread_mutex_unlock(&P->lock);
			if (!failed)
				return 0;
			L->read_diag = P->read_diag;
			L->read_err = 1;
			return -1;
		}
		P->cur = n;
		P->cur_off = 0;
	}
}

static void *vec_append(void *vec, size_t *n, size_t *cap, const void *src, size_t m, size_t size)
{
	if (m == 0)
		return vec;
	if (*n + m > *cap) {
		size_t c = *cap ? *cap : 256;
		while (c < *n + m)
			c *= 2;
		vec = xrealloc(vec, c * size);
		*cap = c;
	}
	memcpy((char *)vec + *n * size, src, m * size);
	*n += m;
	return vec;
}
#define APPEND(v, n, cap, src, m) ((v) = vec_append((v), &(n), &(cap), (src), (m), sizeof(*(v))))

/* The ids of @o's records after @t's (before the records themselves are appended). */
static void merge_ids(struct kp_trace *t, const struct kp_trace *o)
{
	size_t n = t->nops;
	APPEND(t->op_ext, n, t->capop_ext, o->op_ext, o->nops);
	n = t->nlaunches;
	APPEND(t->launch_ids, n, t->caplaunch_ids, o->launch_ids, o->nlaunches);
	n = t->ngpu;
	APPEND(t->gpu_ids, n, t->capgpu_ids, o->gpu_ids, o->ngpu);
}

/* Chunk @c's records after the trace's; @lines, @last_nl: json_lines_at() at its start. */
static void merge(struct loader *L, struct chunk *c, int64_t lines, int64_t last_nl)
{
	struct kp_trace *t = L->t, *o = &c->out;
	int32_t *map = xmalloc((o->nthreads ? o->nthreads : 1) * sizeof(*map));
	for (size_t i = 0; i < o->nthreads; i++)
		map[i] = trace_thread_index(L, o->threads[i].pid, o->threads[i].pid_str,
					    o->threads[i].tid, o->threads[i].tid_str);
	merge_ids(t, o);
	size_t i0 = t->nops, x0 = t->nopx;
	APPEND(t->ops, t->nops, t->capops, o->ops, o->nops);
	APPEND(t->opx, t->nopx, t->capopx, o->opx, o->nopx);
	for (size_t i = i0; i < t->nops; i++)
		t->ops[i].thread = map[t->ops[i].thread];
	for (size_t i = x0; i < t->nopx; i++)
		t->opx[i].op += (int32_t)i0;
	i0 = t->nlaunches;
	APPEND(t->launches, t->nlaunches, t->caplaunches, o->launches, o->nlaunches);
	for (size_t i = i0; i < t->nlaunches; i++)
		t->launches[i].thread = map[t->launches[i].thread];
	size_t g0 = t->ngpu;
	x0 = t->ngpux;
	APPEND(t->gpu, t->ngpu, t->capgpu, o->gpu, o->ngpu);
	APPEND(t->gpux, t->ngpux, t->capgpux, o->gpux, o->ngpux);
	for (size_t i = g0; i < t->ngpu; i++)
		if (t->gpu[i].x >= 0)
			t->gpu[i].x += (int32_t)x0;
	i0 = t->ncolls;
	APPEND(t->colls, t->ncolls, t->capcolls, o->colls, o->ncolls);
	for (size_t i = i0; i < t->ncolls; i++)
		t->colls[i].gpu += (int32_t)g0;
	i0 = t->nsteps;
	APPEND(t->steps, t->nsteps, t->capsteps, o->steps, o->nsteps);
	for (size_t i = i0; i < t->nsteps; i++)
		t->steps[i].thread = map[t->steps[i].thread];
	i0 = t->nannots;
	APPEND(t->annots, t->nannots, t->capannots, o->annots, o->nannots);
	for (size_t i = i0; i < t->nannots; i++)
		t->annots[i].thread = map[t->annots[i].thread];
	APPEND(t->ranges, t->nranges, t->capranges, o->ranges, o->nranges);
	i0 = t->nmem;
	APPEND(t->mem, t->nmem, t->capmem, o->mem, o->nmem);
	for (size_t i = i0; i < t->nmem; i++)
		t->mem[i].thread = map[t->mem[i].thread];
	i0 = t->npy;
	APPEND(t->py, t->npy, t->cappy, o->py, o->npy);
	for (size_t i = i0; i < t->npy; i++)
		t->py[i].thread = map[t->py[i].thread];
	t->nevents += o->nevents;
	t->nskipped += o->nskipped;
	t->nflows += o->nflows;
	if (c->last_good_off >= 0)
		L->last_good_off = c->last_good_off;
	/* warnings in stream order, located as json_locate() does (see locate_warns()) */
	for (size_t i = 0; i < c->nwarns; i++) {
		const struct dwarn *w = &c->warns[i];
		int64_t l = lines + w->nl + 1,
			col = w->off - (w->last_nl >= 0 ? w->last_nl : last_nl);
		char loc[512];
		snprintf(loc, sizeof(loc), "%s:%d:%d", t->display, l > INT_MAX ? INT_MAX : (int)l,
			 col > INT_MAX ? INT_MAX : (int)col);
		diag_warn_add(&t->warn, w->kind, loc, "%s", w->msg);
	}
	free(map);
}

/*
 * At the top of the event array's loop: when the parser stands after an element where a
 * chunk starts, merge that chunk and the clean ones after it and go on after them.  Returns
 * the event objects merged.
 */
int64_t trace_par_sync(struct loader *L)
{
	struct par *P = L->par;
	int64_t off;
	if (P->nowork || !json_after_value(&L->p, &off))
		return 0;
	struct chunk *c, *behind = NULL;
	/* chunks wholly behind the parser are of no more use */
	for (c = next_of(P, P->rel); c && c->start + (int64_t)c->len <= off; c = next_of(P, c))
		behind = c;
	if (behind)
		release_upto(P, behind);
	if (!c)
		c = wait_next(P, P->rel); /* off is the end of every published byte */
	if (!c || c->start != off)
		return 0;
	int64_t lines, last_nl, nobj = 0;
	json_lines_at(&L->p, &lines, &last_nl);
	int merged = 0;
	while (c && c->start == off) {
		wait_done(P, c);
		if (!c->clean)
			break;
		int64_t t1 = stages_now();
		merge(L, c, lines, last_nl);
		P->merge_ns += stages_now() - t1;
		nobj += c->nobj;
		lines += c->nl;
		if (c->last_nl >= 0)
			last_nl = c->last_nl;
		off += (int64_t)c->len;
		P->merged++;
		/* released a few at a time: one lock for them all */
		if (++merged % 8 == 0)
			release_upto(P, c);
		behind = c;
		c = wait_next(P, c);
	}
	if (merged) {
		if (P->rel != behind)
			release_upto(P, behind);
		json_resume(&L->p, off, lines, last_nl);
		P->cur = P->rel;
		P->cur_off = P->rel->len;
		P->pos = off;
	}
	return nobj;
}

/* The event array ended: parsing ahead is of no more use. */
void trace_par_nowork(struct par *P)
{
	pthread_mutex_lock(&P->lock);
	P->nowork = 1;
	pthread_cond_broadcast(&P->wcv);
	pthread_mutex_unlock(&P->lock);
}

static void worker_init(struct worker *W, struct par *P)
{
	memset(W, 0, sizeof(*W));
	W->P = P;
	arena_init(&W->arena);
	W->L.arena = &W->arena;
	W->L.par = P;
	W->L.par_intern = par_intern;
	W->L.defer_warn = defer_warn;
	W->L.annotations = P->L->annotations;
	W->L.last_thread = -1;
	hmap_init(&W->L.threads, HMAP_STR);
	hmap_init(&W->L.names, HMAP_PTR);
	hmap_init(&W->L.slots, HMAP_STR);
	hmap_init(&W->L.cache, HMAP_STR);
}

/*
 * Start the producer and @jobs - 1 workers (the main thread is the last one) over L->in, in
 * chunks of about @size bytes.  Without a producer the parse stays serial.
 */
void trace_par_start(struct loader *L, const struct par_plan *plan)
{
	int jobs = plan->jobs;
	size_t size = plan->size;
	struct par *P = xcalloc(1, sizeof(*P));
	P->L = L;
	pthread_mutex_init(&P->lock, NULL);
	pthread_cond_init(&P->cv, NULL);
	pthread_cond_init(&P->wcv, NULL);
	pthread_cond_init(&P->pcv, NULL);
	pthread_mutex_init(&P->str_lock, NULL);
	arena_init(&P->str_arena);
	P->size = size;
	P->maxlive = (size_t)jobs + 3;
	struct stat st;
	if (!L->in.codec && fstat(L->in.fd, &st) == 0) {
		P->direct = 1;
		P->fsize = st.st_size;
		/* a chunk holds a buffer only while it is parsed: more of them cost little, and
		 * the producer wakes once every jobs + 6 chunks */
		P->maxlive = 3 * (size_t)jobs + 8;
		P->lowlive = (size_t)jobs + 2;
	} else {
		P->lowlive = P->maxlive / 2;
	}

	P->nw = jobs;
	P->w = xcalloc((size_t)jobs, sizeof(*P->w));
	for (int i = 0; i < jobs; i++)
		worker_init(&P->w[i], P);
	/* from here t->strs is shared: its strings go to their own arena, under str_lock */
	L->t->strs.arena = &P->str_arena;
	L->par = P;
	L->par_intern = par_intern;
	L->defer_warn = defer_warn;
	L->p.short_reads = 1; /* one chunk at a time: the producer may wait for releases */
	if (pthread_create(&P->prod, NULL, P->direct ? producer_direct : producer, P) != 0) {
		L->par = NULL;
		L->p.short_reads = 0;
		L->t->strs.arena = &L->t->arena;
		for (int i = 0; i < jobs; i++)
			hmap_free(&P->w[i].L.threads), hmap_free(&P->w[i].L.names),
				hmap_free(&P->w[i].L.slots), hmap_free(&P->w[i].L.cache);
		free(P->w);
		free(P->pool);
		free(P->spare);
		free(P);
		return;
	}
	for (int i = 1; i < jobs; i++)
		P->w[i].started = pthread_create(&P->w[i].th, NULL, worker_main, &P->w[i]) == 0;
}

/*
 * The input bytes of a parallel parse of @in (gzip and zstd decompress to about 8x their
 * size), 0 for a serial one: only regular files (a pipe's writer could keep the producer
 * waiting after the parse ended), and only when there are a few chunks per job.
 */
static uint64_t par_bytes(struct kp_input *in, const struct kp_load_opts *o)
{
	struct stat st;
	if (o->jobs <= 1 || fstat(in->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	uint64_t bytes = (uint64_t)st.st_size * (in->codec ? 8 : 1);
	if (bytes < PAR_MIN_BYTES && !o->chunk)
		return 0; /* threads cost more than they bring (block_bf16.json, 0.6 MB: 2x slower) */
	return bytes ? bytes : 1;
}

/* The chunk size for @jobs threads over @bytes: about 4 chunks a thread, within bounds. */
static size_t par_chunk(const struct kp_load_opts *o, uint64_t bytes, int jobs)
{
	if (o->chunk) /* bounded: buffers hold 2 * size + JSON_PAD, which must not wrap */
		return o->chunk < 64 ? 64 : o->chunk > (1u << 30) ? (1u << 30) : o->chunk;
	uint64_t size = bytes / (4 * (uint64_t)jobs);
	return size < PAR_MIN_CHUNK ? PAR_MIN_CHUNK : size > PAR_MAX_CHUNK ? PAR_MAX_CHUNK : size;
}

/*
 * The plan of a parallel parse of @in (0: a serial one): threads at most two fewer than the
 * chunks that fit the memory budget (two more for the producer's and the main thread's
 * reads), so that a thread count past what the input's size warrants costs no memory.  Fewer
 * threads make larger chunks, which may fit fewer: until it holds.
 */
int trace_par_plan(struct kp_input *in, const struct kp_load_opts *o, struct par_plan *plan)
{
	uint64_t bytes = par_bytes(in, o);
	if (!bytes)
		return 0;
	uint64_t budget = bytes / PAR_BUDGET_DIV > PAR_MIN_BUDGET ? bytes / PAR_BUDGET_DIV
								  : PAR_MIN_BUDGET;
	plan->jobs = o->jobs;
	for (;;) {
		plan->size = par_chunk(o, bytes, plan->jobs);
		uint64_t fit = budget / plan->size < 4 ? 4 : budget / plan->size;
		if ((uint64_t)plan->jobs + 2 <= fit)
			return 1;
		plan->jobs = (int)(fit - 2);
	}
}

/* Stop and join the threads; their memory goes to the trace's arena. */
/* What the parse's threads did, once they are joined. */
static void par_stats(const struct par *P, struct kp_load_stats *st)
{
	st->threads = P->nw;
	st->direct = P->direct;
	st->chunks = P->chunks;
	st->merged = P->merged;
	st->main_merge_ns = P->merge_ns;
	st->main_release_ns = P->release_ns;
	st->main_wait_ns = P->wait_ns;
	st->reader_busy_ns = P->prod_busy_ns;
	for (int i = 0; i < P->nw; i++) {
		st->workers_busy_ns += P->w[i].busy_ns;
		st->workers_read_ns += P->w[i].read_ns;
		st->workers_ns += P->w[i].life_ns;
	}
}

void trace_par_stop(struct loader *L, struct kp_load_stats *st)
{
	struct par *P = L->par;
	struct kp_trace *t = L->t;
	pthread_mutex_lock(&P->lock);
	P->stop = 1;
	pthread_cond_broadcast(&P->wcv);
	pthread_cond_broadcast(&P->pcv);
	pthread_mutex_unlock(&P->lock);
	pthread_join(P->prod, NULL);
	for (int i = 1; i < P->nw; i++)
		if (P->w[i].started)
			pthread_join(P->w[i].th, NULL);
	if (st)
		par_stats(P, st);
	for (struct chunk *c = P->head, *n; c; c = n) {
		n = c->next;
		free(c->buf);
		chunk_free_results(c);
		free(c);
	}
	for (size_t i = 0; i < P->npool; i++)
		free(P->pool[i]);
	free(P->pool);
	for (size_t i = 0; i < P->nspare; i++)
		trace_free(&P->spare[i]);
	free(P->spare);
	t->strs.arena = &t->arena;
	arena_adopt(&t->arena, &P->str_arena);
	for (int i = 0; i < P->nw; i++) {
		struct loader *W = &P->w[i].L;
		free(W->scratch[0]);
		free(W->scratch[1]);
		free(W->open);
		hmap_free(&W->threads);
		hmap_free(&W->names);
		hmap_free(&W->slots);
		hmap_free(&W->cache);
		arena_adopt(&t->arena, &P->w[i].arena);
	}
	free(P->w);
	pthread_mutex_destroy(&P->lock);
	pthread_cond_destroy(&P->cv);
	pthread_cond_destroy(&P->wcv);
	pthread_cond_destroy(&P->pcv);
	pthread_mutex_destroy(&P->str_lock);
	free(P);
	L->par = NULL;
	L->p.short_reads = 0;
}
