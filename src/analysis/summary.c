/*
 * summary.c — kprof summary json (ranks-doc.c writes it) -> struct kp_rank records.
 */
#include "kprof/summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/arena.h"
#include "kprof/collective.h"
#include "kprof/input.h"
#include "kprof/json.h"

struct rd {
	struct kp_json p;
	struct kp_input in;
	struct kp_diag rdiag;
	int read_err;
	int64_t version;
};

static ssize_t read_cb(void *ctx, void *buf, size_t cap)
{
	struct rd *R = ctx;
	ssize_t n = input_read(&R->in, buf, cap, &R->rdiag);
	if (n < 0)
		R->read_err = 1;
	return n;
}

static int key_is(const struct kp_json_tok *tk, const char *s)
{
	return tk->len == strlen(s) && !memcmp(tk->s, s, tk->len);
}

/* A number or null (-1) into *out; 0 ok, -1 bad */
static int get_int(struct rd *R, int64_t *out)
{
	struct kp_json_tok tk;
	enum kp_json_type ty = json_next(&R->p, &tk);
	if (ty == JT_NULL) {
		*out = -1;
		return 0;
	}
	if (ty != JT_NUM)
		return -1;
	if (json_num_i64(tk.s, tk.len, out) < 0) {
		/* a number written as a double ("1.5e3"): within int64's range, else malformed
		 * (fuzz-summary: 4.2e218 was cast, undefined behaviour) */
		double v = json_num_double(tk.s, tk.len);
		if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
			return -1;
		*out = (int64_t)v;
	}
	return 0;
}

static int get_str(struct rd *R, char *buf, size_t cap)
{
	struct kp_json_tok tk;
	enum kp_json_type ty = json_next(&R->p, &tk);
	if (ty == JT_NULL) {
		buf[0] = '\0';
		return 0;
	}
	if (ty != JT_STR)
		return -1;
	size_t n = json_unescape(tk.s, tk.len, buf, cap - 1);
	buf[n < cap ? n : cap - 1] = '\0';
	return 0;
}

/* A string value as a malloc'ed copy of its whole text (NULL for null); -1 otherwise. */
static int get_dup(struct rd *R, char **out)
{
	struct kp_json_tok tk;
	enum kp_json_type ty = json_next(&R->p, &tk);
	*out = NULL;
	if (ty == JT_NULL)
		return 0;
	if (ty != JT_STR)
		return -1;
	/* NUL-terminated, never longer than the escaped text */
	*out = xmalloc(tk.len + 1);
	json_unescape(tk.s, tk.len, *out, tk.len + 1);
	return 0;
}

/* An object of named integers; @names[i] -> @dst[i]. */
static int get_obj(struct rd *R, const char *const *names, int64_t **dst, int n)
{
	struct kp_json_tok tk;
	if (json_next(&R->p, &tk) != JT_OBJ)
		return -1;
	for (;;) {
		enum kp_json_type ty = json_next(&R->p, &tk);
		if (ty == JT_OBJ_END)
			return 0;
		if (ty != JT_KEY)
			return -1;
		int i = 0;
		while (i < n && !key_is(&tk, names[i]))
			i++;
		if (i < n) {
			if (get_int(R, dst[i]) < 0)
				return -1;
		} else if (json_skip(&R->p) < 0) {
			return -1;
		}
	}
}

static int get_breakdown(struct rd *R, struct kp_bd *b)
{
	/* "gpu_span_ns" was "span_ns" in summaries before issue 23: both are read */
	static const char *const names[] = {
		"gpu_span_ns",   "compute_ns",         "comm_ns",
		"memcpy_ns",     "other_ns",           "idle_ns",
		"comm_total_ns", "comm_overlapped_ns", "idle_by_cause", "span_ns"
	};
	struct kp_json_tok tk;
	if (json_next(&R->p, &tk) != JT_OBJ)
		return -1;
	/* clang-format off */
	int64_t *dst[] = { &b->span_ns, &b->class_ns[BD_COMPUTE], &b->class_ns[BD_COMM],
			   &b->class_ns[BD_MEMCPY], &b->class_ns[BD_OTHER], &b->idle_ns,
			   &b->comm_total_ns, &b->comm_overlapped_ns };
	/* clang-format on */
	for (;;) {
		enum kp_json_type ty = json_next(&R->p, &tk);
		if (ty == JT_OBJ_END)
			return 0;
		if (ty != JT_KEY)
			return -1;
		int i = 0;
		while (i < 10 && !key_is(&tk, names[i]))
			i++;
		if (i == 9)
			i = 0;
		if (i == 8) {
			static const char *const causes[] = { "host_ns", "sync_ns", "launch_ns",
							      "other_ns" };
			int64_t *c[] = { &b->idle_cause_ns[0], &b->idle_cause_ns[1],
					 &b->idle_cause_ns[2], &b->idle_cause_ns[3] };
			if (get_obj(R, causes, c, 4) < 0)
				return -1;
		} else if (i < 8) {
			if (get_int(R, dst[i]) < 0)
				return -1;
		} else if (json_skip(&R->p) < 0) {
			return -1;
		}
	}
}

/*
 * Rows of an array of rows ([[a, b, ...], ...]): open_rows() reads the outer '[', next_row()
 * 1 at a row's '[', 0 at the outer ']', -1 at anything else; the row's values follow, then
 * end_row() its ']'.
 */
static int open_rows(struct rd *R)
{
	struct kp_json_tok tk;
	return json_next(&R->p, &tk) == JT_ARR ? 0 : -1;
}

static int next_row(struct rd *R)
{
	struct kp_json_tok tk;
	enum kp_json_type ty = json_next(&R->p, &tk);
	return ty == JT_ARR ? 1 : ty == JT_ARR_END ? 0 : -1;
}

static int end_row(struct rd *R)
{
	struct kp_json_tok tk;
	return json_next(&R->p, &tk) == JT_ARR_END ? 0 : -1;
}

/* "steps": [[num, start_ns, span_ns, partial], ...] */
static int get_steps(struct rd *R, struct kp_rank *r)
{
	size_t cap = 0;
	int more;
	if (open_rows(R) < 0)
		return -1;
	while ((more = next_row(R)) > 0) {
		/* a second "steps" member appends to the first's rows: xgrow starts from them */
		r->steps = xgrow(r->steps, r->nsteps, &cap, 16, sizeof(*r->steps));
		struct kp_rank_step *s = &r->steps[r->nsteps++];
		int64_t partial;
		if (get_int(R, &s->num) < 0 || get_int(R, &s->start_ns) < 0 ||
		    get_int(R, &s->span_ns) < 0 || get_int(R, &partial) < 0 || end_row(R) < 0)
			return -1;
		s->partial = partial == 1;
	}
	return more;
}

/* "comms": [[ts_ns, dur_ns, bytes, step, group, kind name], ...] */
static int get_comms(struct rd *R, struct kp_rank *r)
{
	size_t cap = 0;
	int more;
	if (open_rows(R) < 0)
		return -1;
	while ((more = next_row(R)) > 0) {
		r->comms = xgrow(r->comms, r->ncomms, &cap, 64, sizeof(*r->comms));
		struct kp_rank_comm *c = &r->comms[r->ncomms++];
		int64_t group;
		char kind[32];
		if (get_int(R, &c->ts_ns) < 0 || get_int(R, &c->dur_ns) < 0 ||
		    get_int(R, &c->bytes) < 0 || get_int(R, &c->step) < 0 ||
		    get_int(R, &group) < 0 || get_str(R, kind, sizeof(kind)) < 0 || end_row(R) < 0)
			return -1;
		c->group = group > 0 && group < INT32_MAX ? (int32_t)group : -1;
		c->kind = COLL_OTHER;
		for (int k = 0; k < COLL_NKIND; k++)
			if (!strcmp(kind, coll_kind_name(k)))
				c->kind = (int8_t)k;
	}
	return more;
}

/* "warnings": [{"kind", "count", "messages": [...]}, ...] (ranks-doc.c) into @w */
static int get_warnings(struct rd *R, struct kp_warnings *w)
{
	struct kp_json_tok tk;
	enum kp_json_type ty;
	if (json_next(&R->p, &tk) != JT_ARR)
		return -1;
	while ((ty = json_next(&R->p, &tk)) == JT_OBJ) {
		char *kind = NULL, *shown[KP_WARN_SHOW];
		int64_t count = 0;
		int nshown = 0, rc = 0;
		while (rc == 0 && (ty = json_next(&R->p, &tk)) == JT_KEY) {
			if (key_is(&tk, "kind")) {
				free(kind);
				rc = get_dup(R, &kind);
			} else if (key_is(&tk, "count")) {
				rc = get_int(R, &count);
			} else if (key_is(&tk, "messages")) {
				rc = json_next(&R->p, &tk) == JT_ARR ? 0 : -1;
				while (rc == 0 && (ty = json_next(&R->p, &tk)) == JT_STR) {
					if (nshown == KP_WARN_SHOW)
						continue;
					shown[nshown] = xmalloc(tk.len + 1);
					json_unescape(tk.s, tk.len, shown[nshown++], tk.len + 1);
				}
				if (rc == 0 && ty != JT_ARR_END)
					rc = -1;
			} else {
				rc = json_skip(&R->p);
			}
		}
		if (rc == 0 && ty == JT_OBJ_END && kind && kind[0])
			diag_warn_restore(w, kind, (long)count, shown, nshown);
		free(kind);
		for (int j = 0; j < nshown; j++)
			free(shown[j]);
		if (rc < 0 || ty != JT_OBJ_END)
			return -1;
	}
	return ty == JT_ARR_END ? 0 : -1;
}

/* One element of "ranks"; its '{' was just read. */
static int get_rank_body(struct rd *R, struct kp_rank *r)
{
	static const char *const from[] = { "distributedInfo", "file name", "argument order" };
	struct kp_json_tok tk;
	char buf[4096];
	r->rank = r->world_size = r->step_mean_ns = r->step_max_ns = r->slowest_step = -1;
	for (;;) {
		enum kp_json_type ty = json_next(&R->p, &tk);
		if (ty == JT_OBJ_END)
			return 0;
		if (ty != JT_KEY)
			return -1;
		int rc;
		if (key_is(&tk, "rank")) {
			rc = get_int(R, &r->rank);
		} else if (key_is(&tk, "world_size")) {
			rc = get_int(R, &r->world_size);
		} else if (key_is(&tk, "rank_from")) {
			rc = get_str(R, buf, sizeof(buf));
			for (int i = 0; i < 3; i++)
				if (!strcmp(buf, from[i]))
					r->rank_from = i;
		} else if (key_is(&tk, "file")) {
			rc = get_str(R, buf, sizeof(buf));
			free(r->file);
			r->file = xmalloc(strlen(buf) + 1);
			strcpy(r->file, buf);
		} else if (key_is(&tk, "backend")) {
			rc = get_str(R, r->backend, sizeof(r->backend));
		} else if (key_is(&tk, "device")) {
			rc = get_str(R, r->device, sizeof(r->device));
		} else if (key_is(&tk, "totals")) {
			static const char *const names[] = { "gpu_time_ns" };
			int64_t *dst[] = { &r->gpu_time_ns };
			rc = get_obj(R, names, dst, 1);
		} else if (key_is(&tk, "breakdown")) {
			rc = get_breakdown(R, &r->bd);
		} else if (key_is(&tk, "step_ns")) {
			static const char *const names[] = { "mean", "max", "slowest_step" };
			int64_t *dst[] = { &r->step_mean_ns, &r->step_max_ns, &r->slowest_step };
			rc = get_obj(R, names, dst, 3);
		} else if (key_is(&tk, "steps")) {
			rc = get_steps(R, r);
		} else if (key_is(&tk, "comms")) {
			rc = get_comms(R, r);
		} else if (key_is(&tk, "warnings")) {
			rc = get_warnings(R, &r->warn);
		} else {
			rc = json_skip(&R->p);
		}
		if (rc < 0)
			return -1;
	}
}

static int get_doc(struct rd *R, struct kp_ranks *rs, int *found)
{
	struct kp_json_tok tk;
	if (json_next(&R->p, &tk) != JT_OBJ)
		return -1;
	for (;;) {
		enum kp_json_type ty = json_next(&R->p, &tk);
		if (ty == JT_OBJ_END)
			return json_next(&R->p, &tk) == JT_END ? 0 : -1;
		if (ty != JT_KEY)
			return -1;
		if (key_is(&tk, "kprof_summary_version")) {
			if (get_int(R, &R->version) < 0)
				return -1;
		} else if (key_is(&tk, "ranks")) {
			*found = 1;
			if (json_next(&R->p, &tk) != JT_ARR)
				return -1;
			for (;;) {
				ty = json_next(&R->p, &tk);
				if (ty == JT_ARR_END)
					break;
				if (ty != JT_OBJ)
					return -1;
				rs->r = xrealloc(rs->r, (rs->n + 1) * sizeof(*rs->r));
				struct kp_rank *r = &rs->r[rs->n++];
				memset(r, 0, sizeof(*r));
				if (get_rank_body(R, r) < 0)
					return -1;
			}
		} else if (json_skip(&R->p) < 0) {
			return -1;
		}
	}
}

int summary_load(struct kp_ranks *rs, const char *path, struct kp_diag *d)
{
	struct rd *R = xcalloc(1, sizeof(*R));
	const char *shown = strcmp(path, "-") ? path : "<stdin>";
	if (input_open(&R->in, path, d) < 0) {
		free(R);
		return -1;
	}
	json_init(&R->p, read_cb, R, 1u << 20);
	int found = 0;
	size_t before = rs->n;
	int rc = get_doc(R, rs, &found);
	if (rc < 0) {
		if (R->read_err) {
			*d = R->rdiag;
		} else if (R->p.err) {
			int line, col;
			json_locate(&R->p, R->p.err_off, &line, &col);
			diag_error(d, KP_BADINPUT, "%s:%d:%d: error: %s", shown, line, col,
				   R->p.err);
		} else {
			diag_error(d, KP_BADINPUT,
				   "%s: error: not a kprof summary (a 'ranks' member of an unexpected shape)",
				   shown);
		}
	} else if (!found || R->version != 1) {
		rc = diag_error(
			d, KP_BADINPUT,
			"%s: error: not a kprof summary (write one with 'kprof analyze --ranks --format json')",
			shown);
	} else if (rs->n == before) {
		/* kprof analyze writes at least one rank: an empty list is no job to merge */
		rc = diag_error(d, KP_BADINPUT, "%s: error: the summary holds no ranks ('ranks' is empty)",
				shown);
	}
	if (rc == 0) {
		/* ranks of version 1 carry what ranks_compare() reads; stats of the rest follow */
		for (size_t i = before; i < rs->n; i++)
			if (!rs->r[i].file) {
				rs->r[i].file = xmalloc(strlen(shown) + 1);
				strcpy(rs->r[i].file, shown);
			}
	}
	json_free(&R->p);
	input_close(&R->in);
	free(R);
	return rc;
}
