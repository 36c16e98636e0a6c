/*
 * pytree.c — python_function events as a tree per thread, and the frame each op, launch and
 * GPU event runs under (include/kprof/pytree.h; doc/attribution.md §1, §2.3-2.6).
 *
 * Frames nest by time on their thread (sorted once by thread, start, longer first): a frame
 * that outlives the stack top by less than PYTREE_BLEED_NS is its sibling (TraceLens), a
 * longer overlap is cut at the top's end (HTA).  Ops and launches get the innermost frame
 * open at their start.  A backward op inherits the frame of its forward op: the nearest
 * backward node above it ("AddmmBackward0") whose Sequence number a forward op of its process
 * with a frame shares (the latest-starting one before the node, as PyTorch's fwdbwd flows
 * pick).
 */
#include "kprof/pytree.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/arena.h"
#include "kprof/hmap.h"
#include "kprof/strtab.h"
#include "kprof/utf8.h"

int pytree_bwd_node(const char *name)
{
	static const char eval[] = "autograd::engine::evaluate_function: ",
			  node[] = "torch::autograd::";
	if (!strncmp(name, eval, sizeof(eval) - 1) || !strncmp(name, node, sizeof(node) - 1))
		return 1;
	if (strstr(name, "::"))
		return 0; /* an ATen op, aten::convolution_backward among them */
	size_t n = strlen(name);
	while (n > 0 && name[n - 1] >= '0' && name[n - 1] <= '9')
		n--;
	return n >= 8 && !memcmp(name + n - 8, "Backward", 8);
}

int pytree_user_source(const char *name)
{
	if (name[0] == '<' || !strncmp(name, "nn.Module: ", 11))
		return 0;
	/* "path(line): func" */
	const char *p = strstr(name, "): ");
	if (!p)
		return 0;
	const char *o = p;
	while (o > name && o[-1] >= '0' && o[-1] <= '9')
		o--;
	if (o == p || o == name || o[-1] != '(')
		return 0;
	const char *t = strstr(name, "torch/");
	return !t || t >= o;
}

/* ---- the frame tree ---- */

static int cmp_frame(const void *a, const void *b, void *arg)
{
	const struct kp_pyframe *v = arg;
	int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
	const struct kp_pyframe *x = &v[i], *y = &v[j];
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	if (x->dur_ns != y->dur_ns)
		return x->dur_ns > y->dur_ns ? -1 : 1; /* the enclosing one first */
	return i < j ? -1 : i > j;
}

/* An op or a launch: where and when it starts. */
struct item {
	int64_t ts;
	int32_t thread, idx; /* idx: op index, or -(launch index) - 1 */
};

static int cmp_item(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* A C call's name without its object address: "<built-in method append of list object>". */
static const char *norm_name(struct kp_trace *t, const struct kp_pyframe *f)
{
	if (f->kind != PYF_CCALL)
		return f->name;
	const char *a = strstr(f->name, " at 0x");
	if (!a)
		return f->name;
	const char *e = a + 6;
	while ((*e >= '0' && *e <= '9') || (*e >= 'a' && *e <= 'f') || (*e >= 'A' && *e <= 'F'))
		e++;
	size_t n = (size_t)(a - f->name), m = strlen(e);
	char *b = xmalloc(n + m + 1);
	memcpy(b, f->name, n);
	memcpy(b + n, e, m + 1);
	const char *s = strtab_intern(&t->strs, b, n + m);
	free(b);
	return s;
}

/* Stack-trie keys: (parent node, interned name) */
struct skey {
	int64_t parent;
	const char *name;
};

/* Frame @i's derived fields; its parent's are set (the parent sorts first). */
static void derive_frame(struct kp_trace *t, int32_t i, struct kp_hmap *trie, struct skey *keys)
{
	struct kp_pyframe *f = &t->py[i];
	const struct kp_pyframe *p = f->parent >= 0 ? &t->py[f->parent] : NULL;
	int32_t pm = p ? p->module : -1;
	if (f->kind == PYF_MODULE) {
		f->module = i;
		const char *nm = f->name + 11;
		if (pm < 0) {
			f->path = strtab_intern(&t->strs, nm, strlen(nm));
		} else {
			const char *pp = t->py[pm].path;
			size_t a = strlen(pp), b = strlen(nm);
			char *s = xmalloc(a + b + 2);
			memcpy(s, pp, a);
			s[a] = '/';
			memcpy(s + a + 1, nm, b + 1);
			f->path = strtab_intern(&t->strs, s, a + b + 1);
			free(s);
		}
	} else {
		f->module = pm;
	}
	f->source = pytree_user_source(f->name) ? i : p ? p->source : -1;
	struct skey *k = &keys[t->npystacks];
	k->parent = p ? p->stack : -1;
	k->name = norm_name(t, f);
	int created;
	struct kp_hmap_entry *e = hmap_put_str(trie, k, sizeof(*k), &created);
	if (created) {
		e->val.i = (int64_t)t->npystacks;
		t->pystacks[t->npystacks] = (struct kp_pystack){
			k->name, (int32_t)k->parent, p ? t->pystacks[p->stack].depth + 1 : 1
		};
		t->npystacks++;
	}
	f->stack = (int32_t)e->val.i;
}

/* Open frames of one thread's sweep: indexes and their (possibly cut) ends. */
struct fstack {
	int32_t *f;
	int64_t *end;
	size_t n;
};

/* Frame @i opens: ended frames close; a bleeding top is a sibling or cuts @i. */
static void push_frame(struct kp_trace *t, struct fstack *s, int32_t i)
{
	struct kp_pyframe *f = &t->py[i];
	int64_t end = f->ts_ns + f->dur_ns;
	for (;;) {
		while (s->n && s->end[s->n - 1] <= f->ts_ns)
			s->n--;
		if (s->n && s->end[s->n - 1] < end) {
			if (end - s->end[s->n - 1] < PYTREE_BLEED_NS) {
				s->n--; /* a sibling that overlaps by a rounding */
				continue;
			}
			end = s->end[s->n - 1];
		}
		break;
	}
	f->parent = s->n ? s->f[s->n - 1] : -1;
	s->f[s->n] = i;
	s->end[s->n++] = end;
}

/* The innermost frame open at @ts (a frame starting at @ts is open there, even empty). */
static int32_t frame_at(const struct kp_trace *t, struct fstack *s, int64_t ts)
{
	while (s->n && s->end[s->n - 1] <= ts && t->py[s->f[s->n - 1]].ts_ns != ts)
		s->n--;
	return s->n ? s->f[s->n - 1] : -1;
}

/* The sweep over both orders: frame tree, then each op's and launch's own frame. */
static void sweep(struct kp_trace *t, const int32_t *ford, const struct item *it, size_t nit,
		  int32_t *opf)
{
	struct fstack s = { xmalloc((t->npy + 1) * sizeof(*s.f)),
			    xmalloc((t->npy + 1) * sizeof(*s.end)), 0 };
	size_t k = 0;
	int32_t th = -1;
	for (size_t j = 0; j <= nit; j++) {
		/* frames up to this item (all of the thread's frames before its next thread) */
		while (k < t->npy) {
			const struct kp_pyframe *f = &t->py[ford[k]];
			if (j < nit && (f->thread > it[j].thread ||
					(f->thread == it[j].thread && f->ts_ns > it[j].ts)))
				break;
			if (f->thread != th)
				th = f->thread, s.n = 0;
			push_frame(t, &s, ford[k++]);
		}
		if (j == nit)
			break;
		if (it[j].thread != th)
			th = it[j].thread, s.n = 0;
		int32_t fr = frame_at(t, &s, it[j].ts);
		if (it[j].idx >= 0)
			opf[it[j].idx] = fr;
		else
			t->launch_frame[-(it[j].idx + 1)] = fr;
	}
	free(s.f);
	free(s.end);
}

/* ---- backward ops ---- */

struct fwd {
	int64_t pid, seq, ts;
	int32_t op;
};

static int cmp_fwd(const void *a, const void *b)
{
	const struct fwd *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->op < y->op ? -1 : x->op > y->op;
}

/* The process an op runs in (the pid's value, or its interned string's address). */
static int64_t op_pid(const struct kp_trace *t, int32_t i)
{
	return t->threads[t->ops[i].thread].pid;
}

/*
 * Per op, the forward frame of a backward node (the latest-starting forward op of its process
 * with its Sequence number that starts before it and has a frame: PyTorch counts sequence
 * numbers per forward thread, and a file may hold several processes, e.g. ranks joined; two
 * forward threads of one process can still collide), -1 for other ops.
 */
static int32_t *node_frames(const struct kp_trace *t, const int32_t *opf)
{
	int32_t *nf = xmalloc((t->nops + 1) * sizeof(*nf));
	memset(nf, 0xff, (t->nops + 1) * sizeof(*nf));
	struct fwd *fw = xmalloc((t->nopx + 1) * sizeof(*fw));
	size_t n = 0;
	for (size_t x = 0; x < t->nopx; x++) {
		int32_t i = t->opx[x].op;
		if (t->opx[x].seq >= 0 && opf[i] >= 0 && !pytree_bwd_node(t->ops[i].name))
			fw[n++] = (struct fwd){ op_pid(t, i), t->opx[x].seq, t->ops[i].ts_ns, i };
	}
	qsort(fw, n, sizeof(*fw), cmp_fwd);
	for (size_t x = 0; x < t->nopx && n; x++) {
		int32_t i = t->opx[x].op;
		const struct kp_op *op = &t->ops[i];
		if (t->opx[x].seq < 0 || !pytree_bwd_node(op->name))
			continue;
		/* the last forward op with (pid, seq, ts) <= (its pid, its seq, its start) */
		struct fwd key = { op_pid(t, i), t->opx[x].seq, op->ts_ns, INT32_MAX };
		size_t lo = 0, hi = n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (cmp_fwd(&fw[mid], &key) <= 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > 0 && fw[lo - 1].pid == key.pid && fw[lo - 1].seq == key.seq &&
		    fw[lo - 1].op != i)
			nf[i] = opf[fw[lo - 1].op];
	}
	free(fw);
	return nf;
}

/* Each op's frame: a backward node's forward frame, inherited down its op subtree. */
static void resolve_ops(struct kp_trace *t, const int32_t *opf, const int32_t *nf)
{
	uint8_t *done = xcalloc(t->nops + 1, 1);
	int32_t *chain = xmalloc((t->nops + 1) * sizeof(*chain));
	for (size_t i = 0; i < t->nops; i++) {
		size_t n = 0;
		int32_t j = (int32_t)i;
		while (j >= 0 && !done[j] && nf[j] < 0) {
			chain[n++] = j;
			j = t->ops[j].parent;
		}
		int32_t f = -1;
		uint8_t bwd = 0;
		if (j >= 0 && !done[j]) { /* a linked backward node */
			f = nf[j], bwd = 1;
			t->op_frame[j] = f, t->op_bwd[j] = 1, done[j] = 1;
		} else if (j >= 0) {
			f = t->op_frame[j], bwd = t->op_bwd[j];
		}
		while (n--) {
			int32_t o = chain[n];
			t->op_frame[o] = bwd ? f : opf[o];
			t->op_bwd[o] = bwd;
			done[o] = 1;
		}
	}
	free(chain);
	free(done);
}

void pytree_link(struct kp_trace *t)
{
	if (!t->npy)
		return;
	int32_t *ford = xmalloc(t->npy * sizeof(*ford));
	for (size_t i = 0; i < t->npy; i++)
		ford[i] = (int32_t)i;
	qsort_r(ford, t->npy, sizeof(*ford), cmp_frame, t->py);
	size_t nit = t->nops + t->nlaunches;
	struct item *it = xmalloc((nit + 1) * sizeof(*it));
	for (size_t i = 0; i < t->nops; i++)
		it[i] = (struct item){ t->ops[i].ts_ns, t->ops[i].thread, (int32_t)i };
	for (size_t i = 0; i < t->nlaunches; i++)
		it[t->nops + i] = (struct item){ t->launches[i].ts_ns, t->launches[i].thread,
						 -(int32_t)i - 1 };
	qsort(it, nit, sizeof(*it), cmp_item);
	int32_t *opf = xmalloc((t->nops + 1) * sizeof(*opf));
	t->op_frame = xmalloc((t->nops + 1) * sizeof(*t->op_frame));
	t->op_bwd = xcalloc(t->nops + 1, 1);
	t->launch_frame = xmalloc((t->nlaunches + 1) * sizeof(*t->launch_frame));
	sweep(t, ford, it, nit, opf);
	free(it);

	t->pystacks = xmalloc(t->npy * sizeof(*t->pystacks));
	struct skey *keys = xmalloc(t->npy * sizeof(*keys));
	struct kp_hmap trie;
	hmap_init(&trie, HMAP_STR);
	for (size_t k = 0; k < t->npy; k++)
		derive_frame(t, ford[k], &trie, keys);
	hmap_free(&trie);
	free(keys); /* the trie's keys: not read after it is freed */
	free(ford);

	int32_t *nf = node_frames(t, opf);
	resolve_ops(t, opf, nf);
	free(nf);
	free(opf);
}

int32_t pytree_gpu_frame(const struct kp_trace *t, size_t i, int *bwd)
{
	*bwd = 0;
	int32_t l = t->gpu[i].launch;
	if (!t->op_frame || l < 0)
		return -1;
	int32_t op = t->launches[l].op;
	if (op >= 0) {
		*bwd = t->op_bwd[op];
		if (t->op_frame[op] >= 0 || *bwd)
			return t->op_frame[op];
	}
	return t->launch_frame[l];
}

size_t pytree_fold_name(const char *name, char *buf, size_t n, size_t cap)
{
	/* the one escape of names for text (utf8.c), then ';' -- the frame separator -- as '_' */
	struct kp_visbuf vb = { 0 };
	const char *v = utf8_visible(name, &vb);
	size_t len = strlen(v), take = len;
	if (n + take + 1 > cap)
		take = n + 1 < cap ? utf8_prefix(v, len, cap - n - 1) : 0;
	for (size_t i = 0; i < take; i++)
		buf[n++] = v[i] == ';' ? '_' : v[i];
	utf8_visible_free(&vb);
	if (cap)
		buf[n < cap ? n : cap - 1] = '\0';
	return n;
}

size_t pytree_stack_folded(const struct kp_trace *t, int32_t s, char *buf, size_t cap)
{
	if (!cap)
		return 0;
	buf[0] = '\0';
	if (s < 0)
		return 0;
	int32_t d = t->pystacks[s].depth;
	int32_t *path = xmalloc((size_t)d * sizeof(*path));
	for (int32_t k = d; k-- > 0; s = t->pystacks[s].parent)
		path[k] = s;
	size_t n = 0;
	for (int32_t k = 0; k < d; k++) {
		if (k && n + 1 < cap)
			buf[n++] = ';';
		n = pytree_fold_name(t->pystacks[path[k]].name, buf, n, cap);
	}
	free(path);
	return n;
}
