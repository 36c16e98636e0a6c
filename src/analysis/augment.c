/*
 * augment.c — copy a trace byte for byte, inserting kprof's per-event numbers into the args
 * of attributed GPU events (found by the first pass's byte offsets) and counter tracks; a
 * truncated trace closed after its last complete event; written to a temp file, renamed.
 */
#include "kprof/augment.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "kprof/input.h"
#include "kprof/jsonw.h"
#include "kprof/output.h"

/*
 * The output: a plain file or gzip, written under a temporary name beside it (@tmp, NULL
 * when the output is not a regular file: /dev/null, a pipe) and renamed at the end.  Bytes
 * go to @held until the input reaches a point where the document could be closed.
 */
struct sink {
	FILE *fp;
	gzFile gz;
	int err;
	struct kp_output out; /* the temporary file beside the output (output.c) */
	char *held;
	size_t nheld, capheld;
	size_t safe; /* held bytes before the last place the document could close */
};

static void write_out(struct sink *s, const void *p, size_t n)
{
	if (!n || s->err)
		return;
	if (s->gz)
		s->err = gzwrite(s->gz, p, (unsigned)n) != (int)n;
	else
		s->err = fwrite(p, 1, n, s->fp) != n;
}

static void put(struct sink *s, const void *p, size_t n)
{
	if (!n || s->err)
		return;
	if (s->nheld + n > s->capheld) {
		s->capheld = (s->nheld + n) * 2;
		s->held = xrealloc(s->held, s->capheld);
	}
	memcpy(s->held + s->nheld, p, n);
	s->nheld += n;
}

/* The bytes held so far may go out (in writes of 64 KiB or more); with @all, now. */
static void release(struct sink *s, int all)
{
	if (all || s->nheld >= 1 << 16) {
		write_out(s, s->held, s->nheld);
		s->nheld = 0;
	}
	s->safe = s->nheld;
}

/* one insertion: before the args' closing brace of the event at @off */
struct job {
	int64_t off;
	size_t gpu;
	int args;     /* kprof's members go into its args (an op was attributed) */
	int counters; /* the counter events follow this event */
};

static int cmp_job(const void *a, const void *b)
{
	const struct job *x = a, *y = b;
	return (x->off > y->off) - (x->off < y->off);
}

static void num(FILE *fp, double v)
{
	char b[40];
	fputs(v >= 0 && isfinite(v) ? jw_format_double(b, sizeof(b), v) : "null", fp);
}

/* the args members for GPU event @i, as text (malloc'ed) */
static char *members(const struct kp_trace *t, const struct kp_event_cost *e, size_t i, size_t *len)
{
	const struct kp_gpu *g = &t->gpu[i];
	char *buf = NULL;
	FILE *fp = open_memstream(&buf, len);
	double secs = g->dur_ns > 0 ? (double)g->dur_ns / 1e9 : 0;
	double fps = e->flops >= 0 && secs > 0 ? e->flops / secs : -1;
	double bps = e->bytes >= 0 && secs > 0 ? e->bytes / secs : -1;
	fputs("\"kprof op\": ", fp);
	jw_put_string(fp, t->ops[g->op].name);
	fputs(", \"kprof flops\": ", fp);
	num(fp, e->flops >= 0 ? round(e->flops) : -1);
	fputs(", \"kprof bytes\": ", fp);
	num(fp, e->bytes >= 0 ? round(e->bytes) : -1);
	fputs(", \"kprof TFLOP/s\": ", fp);
	num(fp, fps >= 0 ? round(fps / 1e12 * 1000) / 1000 : -1);
	fputs(", \"kprof % peak\": ", fp);
	double pct = -1;
	if (fps >= 0 && e->peak_flops > 0)
		pct = 100 * fps / e->peak_flops;
	else if (fps < 0 && bps >= 0 && e->peak_bw > 0)
		pct = 100 * bps / e->peak_bw; /* data movement: % of its path's bandwidth */
	num(fp, pct >= 0 ? round(pct * 10) / 10 : -1);
	fputs(", \"kprof bound\": ", fp);
	if (e->flops >= 0 && e->bytes > 0 && e->peak_flops > 0 && e->peak_bw > 0)
		fputs(e->flops / e->bytes >= e->peak_flops / e->peak_bw ? "\"compute\""
									: "\"memory\"",
		      fp);
	else
		fputs("null", fp);
	fclose(fp);
	return buf;
}

/* counter events of achieved FLOP/s and B/s per bucket of the GPU span, as text */
static char *counters(const struct kp_trace *t, const struct kp_event_cost *ev, size_t *len)
{
	char *buf = NULL;
	FILE *fp = open_memstream(&buf, len);
	int64_t t0 = INT64_MAX, t1 = INT64_MIN;
	for (size_t i = 0; i < t->ngpu; i++) {
		t0 = t->gpu[i].ts_ns < t0 ? t->gpu[i].ts_ns : t0;
		t1 = t->gpu[i].ts_ns + t->gpu[i].dur_ns > t1 ? t->gpu[i].ts_ns + t->gpu[i].dur_ns
							     : t1;
	}
	int64_t bw = (t1 - t0 + AUGMENT_BUCKETS - 1) / AUGMENT_BUCKETS;
	if (bw < 1)
		bw = 1;
	size_t nb = (size_t)((t1 - t0 + bw - 1) / bw) + 1;
	double *fl = xcalloc(nb, sizeof(*fl)), *by = xcalloc(nb, sizeof(*by));
	for (size_t i = 0; i < t->ngpu; i++) {
		const struct kp_gpu *g = &t->gpu[i];
		if (g->dur_ns <= 0 || (ev[i].flops < 0 && ev[i].bytes < 0))
			continue;
		int64_t a = g->ts_ns - t0, e = a + g->dur_ns;
		for (int64_t k = a / bw; (size_t)k < nb && k * bw < e; k++) {
			int64_t lo = k * bw > a ? k * bw : a,
				hi = (k + 1) * bw < e ? (k + 1) * bw : e;
			double share = (double)(hi - lo) / (double)g->dur_ns;
			if (ev[i].flops >= 0)
				fl[k] += ev[i].flops * share;
			if (ev[i].bytes >= 0)
				by[k] += ev[i].bytes * share;
		}
	}
	int32_t pid = t->ngpu ? t->gpu[0].device : 0;
	double lastf = -1, lastb = -1;
	for (size_t k = 0; k < nb; k++) {
		double f = round(fl[k] / (double)bw * 1e9 / 1e12 * 1000) / 1000; /* TFLOP/s */
		double b = round(by[k] / (double)bw * 1e9 / 1e9 * 10) / 10;      /* GB/s */
		if (k == nb - 1)
			f = b = 0; /* the tracks end at the span's end */
		int64_t ts = t0 + (int64_t)k * bw;
		if (f != lastf) {
			fprintf(fp,
				",\n{\"ph\": \"C\", \"name\": \"kprof TFLOP/s\", \"pid\": %" PRId32
				", \"ts\": %" PRId64 ".%03" PRId64 ", \"args\": {\"TFLOP/s\": ",
				pid, ts / 1000, ts % 1000);
			num(fp, f);
			fputs("}}", fp);
			lastf = f;
		}
		if (b != lastb) {
			fprintf(fp,
				",\n{\"ph\": \"C\", \"name\": \"kprof GB/s\", \"pid\": %" PRId32
				", \"ts\": %" PRId64 ".%03" PRId64 ", \"args\": {\"GB/s\": ",
				pid, ts / 1000, ts % 1000);
			num(fp, b);
			fputs("}}", fp);
			lastb = b;
		}
	}
	free(fl);
	free(by);
	fclose(fp);
	return buf;
}

/* the scanner of one event object, from its '{' */
struct scan {
	int on;
	int depth;
	int in_str, esc;
	int expect_key, capturing;
	char key[8];
	int keylen;
	int key_is_args;
	int args_depth; /* depth inside the args object, 0 outside */
	int args_nonempty;
	int args_done;
	int has_args; /* an "args" member, object or not (then nothing is added) */
};

/*
 * Where each GPU event of the first pass gets its members, by byte offset; the counter
 * tracks follow the event that ends last in the file.  *nj jobs, sorted by offset.
 */
static struct job *plan_jobs(const struct kp_trace *t, size_t *nj)
{
	struct job *jobs = xcalloc(t->ngpu + 1, sizeof(*jobs));
	int64_t last_off = -1;
	size_t last = 0;
	*nj = 0;
	for (size_t i = 0; i < t->ngpu; i++) {
		if (t->gpu[i].op < 0)
			continue;
		jobs[(*nj)++] = (struct job){ .off = t->gpu[i].off, .gpu = i, .args = 1 };
	}
	for (size_t i = 0; i < t->ngpu; i++)
		if (t->gpu[i].off > last_off) {
			last_off = t->gpu[i].off;
			last = i;
		}
	if (t->ngpu && t->gpu[last].op < 0)
		jobs[(*nj)++] = (struct job){ .off = last_off, .gpu = last, .counters = 1 };
	qsort(jobs, *nj, sizeof(*jobs), cmp_job);
	for (size_t j = 0; j < *nj; j++)
		if (jobs[j].off == last_off)
			jobs[j].counters = 1;
	return jobs;
}

/*
 * @path for writing (through a temporary file beside it, output.c), gzip'ed when it ends in
 * ".gz"; -1 with @d (KP_ENV) on failure
 */
static int sink_open(struct sink *s, const char *path, struct kp_diag *d)
{
	size_t plen = strlen(path);
	memset(s, 0, sizeof(*s));
	int fd = output_open_fd(&s->out, path, d);
	if (fd < 0)
		return -1;
	if (plen > 3 && !strcmp(path + plen - 3, ".gz"))
		s->gz = gzdopen(fd, "wb6");
	else
		s->fp = fdopen(fd, "wb");
	if (s->gz || s->fp)
		return 0;
	int err = errno;
	close(fd);
	output_discard(&s->out);
	return diag_error(d, KP_ENV, "error: cannot write '%s': %s", path, strerror(err));
}

/*
 * Close the file; with @keep, the temporary file becomes the output, else it is removed.
 * Nonzero when a write, the close or the rename failed (the output then untouched).
 */
static int sink_close(struct sink *s, int keep)
{
	int werr = s->err;
	if (s->gz)
		werr |= gzclose(s->gz) != Z_OK;
	else
		werr |= fclose(s->fp) != 0;
	free(s->held);
	struct kp_diag d;
	return output_commit(&s->out, !keep || werr, &d) < 0 || werr;
}

/* one byte inside a string: the top-level key is captured to spot "args" */
static void scan_str(struct scan *sc, char c)
{
	if (sc->esc)
		sc->esc = 0;
	else if (c == '\\')
		sc->esc = 1;
	else if (c == '"')
		sc->in_str = 0;
	else if (sc->capturing && sc->keylen < (int)sizeof(sc->key) - 1)
		sc->key[sc->keylen++] = c;
	else if (sc->capturing)
		sc->keylen = sizeof(sc->key); /* too long to be "args" */
}

/* one structural byte other than a closing '}' or ']' */
static void scan_open(struct scan *sc, char c)
{
	if (c == '"') {
		sc->in_str = 1;
		sc->capturing = sc->depth == 1 && sc->expect_key;
		sc->keylen = 0;
	} else if (c == ':' && sc->depth == 1) {
		sc->expect_key = 0;
		sc->key_is_args = sc->capturing && sc->keylen == 4 && !memcmp(sc->key, "args", 4);
		sc->has_args |= sc->key_is_args;
		sc->capturing = 0;
	} else if (c == ',' && sc->depth == 1) {
		sc->expect_key = 1;
		sc->key_is_args = 0;
	} else if (c == '{' || c == '[') {
		sc->depth++;
		if (sc->depth == 1)
			sc->expect_key = 1;
		else if (c == '{' && sc->depth == 2 && sc->key_is_args && !sc->args_done) {
			sc->args_depth = 2;
			sc->args_nonempty = 0;
		}
	} else if (sc->depth == 1) {
		sc->capturing = 0;
	}
}

/*
 * The whole document's nesting, for the last place it could be closed: after a complete
 * value directly inside the top-level container (a member, or an event of a bare array) or
 * inside an array one level below (an event of traceEvents), i.e. before a ',' or after a
 * '}' or ']' there.  Never inside an event: one cut short is left out whole.
 */
struct doc {
	int in_str, esc;
	int64_t depth;
	char open[2];    /* the containers at depth 1 and 2: '{' or '[' */
	char closers[3]; /* what closes the document at the last cut, "" none yet */
	int64_t cut;     /* input offset of the last cut, -1 none */
	int whole;       /* the top-level value closed */
};

enum { CUT_NONE, CUT_BEFORE, CUT_AFTER };

/* Whether a value that ends at the current depth ends where the document could close. */
static int doc_cuttable(const struct doc *dc)
{
	return dc->depth == 1 || (dc->depth == 2 && dc->open[1] == '[');
}

/* One input byte; where the document could be closed around it. */
static int doc_byte(struct doc *dc, char c)
{
	if (dc->in_str) {
		if (dc->esc)
			dc->esc = 0;
		else if (c == '\\')
			dc->esc = 1;
		else if (c == '"')
			dc->in_str = 0;
		return CUT_NONE;
	}
	if (c == '"') {
		dc->in_str = 1;
	} else if (c == '{' || c == '[') {
		if (dc->depth < 2)
			dc->open[dc->depth] = c;
		dc->depth++;
	} else if (c == '}' || c == ']') {
		dc->depth--;
		dc->whole |= dc->depth == 0;
		return doc_cuttable(dc) ? CUT_AFTER : CUT_NONE;
	} else if (c == ',') {
		return doc_cuttable(dc) ? CUT_BEFORE : CUT_NONE;
	}
	return CUT_NONE;
}

/* the second pass: the input copied to the sink, job by job */
struct pass {
	const struct kp_trace *t;
	const struct kp_event_cost *ev;
	struct sink s;
	const struct job *jobs;
	size_t nj, j; /* jobs, the next one */
	struct scan sc;
	struct doc dc;
	size_t from; /* bytes of the read buffer not yet written */
};

/* The document could end before buf[k] (input offset @pos): what is held goes out. */
static void cut_here(struct pass *p, const char *buf, size_t k, int64_t pos)
{
	struct doc *dc = &p->dc;
	put(&p->s, buf + p->from, k - p->from);
	p->from = k;
	release(&p->s, 0);
	dc->cut = pos;
	for (int64_t i = 0; i < dc->depth; i++)
		dc->closers[i] = dc->open[dc->depth - 1 - i] == '{' ? '}' : ']';
	dc->closers[dc->depth] = '\0';
}

/* Before the args' closing brace at buf[k]: the members of the current job. */
static void end_args(struct pass *p, const char *buf, size_t k)
{
	const struct job *jb = &p->jobs[p->j];
	size_t ml = 0;
	put(&p->s, buf + p->from, k - p->from);
	p->from = k;
	char *m = members(p->t, &p->ev[jb->gpu], jb->gpu, &ml);
	if (p->sc.args_nonempty)
		put(&p->s, ", ", 2);
	put(&p->s, m, ml);
	free(m);
	p->sc.args_depth = 0;
	p->sc.args_done = 1;
}

/* At the event's closing brace buf[k] (file offset @pos): args if it had none, counters. */
static void end_event(struct pass *p, const char *buf, size_t k, int64_t pos)
{
	const struct job *jb = &p->jobs[p->j];
	size_t ml = 0;
	put(&p->s, buf + p->from, k - p->from);
	p->from = k;
	if (!p->sc.has_args && jb->args) {
		char *m = members(p->t, &p->ev[jb->gpu], jb->gpu, &ml);
		put(&p->s, ", \"args\": {", 11);
		put(&p->s, m, ml);
		put(&p->s, "}", 1);
		free(m);
	}
	/* the event's brace, then the counters after the last GPU event */
	put(&p->s, "}", 1);
	p->from = k + 1;
	if (jb->counters) {
		char *cs = counters(p->t, p->ev, &ml);
		put(&p->s, cs, ml);
		free(cs);
	}
	p->sc.on = 0;
	/* several records at one offset cannot happen; skip duplicates anyway */
	while (++p->j < p->nj && p->jobs[p->j].off == pos)
		;
}

/* Byte buf[k] at file offset @pos for the jobs; -1 with @d when an event is not where it was. */
static int job_byte(struct pass *p, const char *buf, size_t k, int64_t pos, const char *name,
		    struct kp_diag *d)
{
	struct scan *sc = &p->sc;
	char c = buf[k];
	if (!sc->on) {
		if (p->j >= p->nj || pos != p->jobs[p->j].off)
			return 0;
		if (c != '{') {
			d->status = KP_BADINPUT;
			snprintf(d->msg, sizeof(d->msg),
				 "%s: error: the event at byte %" PRId64
				 " is not where the first pass found it (did the file change?)",
				 name, pos);
			return -1;
		}
		*sc = (struct scan){ .on = 1 };
		/* fall through: the '{' opens depth 1 below */
	}
	if (sc->in_str) {
		scan_str(sc, c);
		return 0;
	}
	if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
		return 0;
	if (sc->args_depth && sc->depth >= sc->args_depth &&
	    !(c == '}' && sc->depth == sc->args_depth))
		sc->args_nonempty = 1;
	if (c != '}' && c != ']') {
		scan_open(sc, c);
		return 0;
	}
	if (c == '}' && sc->args_depth && sc->depth == sc->args_depth && p->jobs[p->j].args) {
		end_args(p, buf, k);
	} else if (c == '}' && sc->depth == 1) {
		end_event(p, buf, k, pos);
		return 0;
	}
	sc->depth--;
	return 0;
}

/* The bytes buf[0..n) at file offset *pos; -1 with @d when an event is not where it was. */
static int copy_block(struct pass *p, const char *buf, size_t n, int64_t *pos, const char *name,
		      struct kp_diag *d)
{
	p->from = 0;
	for (size_t k = 0; k < n; k++, (*pos)++) {
		if (p->dc.in_str && !p->dc.esc && !p->sc.on) {
			/* string bytes outside the events of jobs: to the quote or backslash */
			size_t e = k;
			while (e < n && buf[e] != '"' && buf[e] != '\\')
				e++;
			*pos += (int64_t)(e - k);
			k = e;
			if (k == n)
				break;
		}
		int cut = doc_byte(&p->dc, buf[k]);
		if (cut == CUT_BEFORE)
			cut_here(p, buf, k, *pos);
		if (job_byte(p, buf, k, *pos, name, d) < 0)
			return -1;
		if (cut == CUT_AFTER)
			cut_here(p, buf, k + 1, *pos + 1);
	}
	put(&p->s, buf + p->from, n - p->from);
	return 0;
}

/*
 * The end of the input: what is held goes out when the document closed; when it did not (a
 * truncated trace, @t->truncated), the output ends at the last cut with the closers of what
 * was open there and *@cut is its input offset.  -1 with @d when neither applies.
 */
static int finish(struct pass *p, const char *name, int64_t *cut, struct kp_diag *d)
{
	struct doc *dc = &p->dc;
	if (dc->whole) {
		release(&p->s, 1);
		return 0;
	}
	if (!p->t->truncated || dc->cut < 0) {
		d->status = KP_BADINPUT;
		snprintf(d->msg, sizeof(d->msg),
			 "%s: error: the input ended %s (did the file change?)", name,
			 p->t->truncated ? "before any complete value" : "early");
		return -1;
	}
	p->s.nheld = p->s.safe;
	put(&p->s, "\n", 1);
	put(&p->s, dc->closers, strlen(dc->closers));
	put(&p->s, "\n", 1);
	release(&p->s, 1);
	if (cut)
		*cut = dc->cut;
	return 0;
}

int augment_write(const struct kp_trace *t, const struct kp_event_cost *ev, const char *in_path,
		  const char *out_path, int64_t *cut, struct kp_diag *d)
{
	struct pass p = { .t = t, .ev = ev, .dc = { .cut = -1 } };
	if (cut)
		*cut = -1;
	struct job *jobs = plan_jobs(t, &p.nj);
	p.jobs = jobs;
	struct kp_input in;
	if (input_open(&in, in_path, d) < 0) {
		free(jobs);
		return -1;
	}
	if (sink_open(&p.s, out_path, d) < 0) {
		input_close(&in);
		free(jobs);
		return -1;
	}
	enum { CAP = 1 << 16 };
	char *buf = xmalloc(CAP);
	int64_t pos = 0;
	int rc = 0;
	for (;;) {
		ssize_t n = input_read(&in, buf, CAP, d);
		if (n <= 0) {
			rc = n < 0 ? -1 : 0;
			break;
		}
		if (copy_block(&p, buf, (size_t)n, &pos, in.name, d) < 0) {
			rc = -1;
			break;
		}
	}
	if (!rc && (p.sc.on || p.j < p.nj)) {
		d->status = KP_BADINPUT;
		snprintf(d->msg, sizeof(d->msg),
			 "%s: error: the input ended before every GPU event was found again",
			 in.name);
		rc = -1;
	}
	if (!rc)
		rc = finish(&p, in.name, cut, d);
	free(buf);
	free(jobs);
	input_close(&in);
	if (sink_close(&p.s, !rc) && !rc) {
		d->status = KP_ENV;
		snprintf(d->msg, sizeof(d->msg), "error: cannot write '%s': write error", out_path);
		rc = -1;
	}
	if (rc && cut)
		*cut = -1;
	return rc;
}
