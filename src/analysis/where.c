/*
 * where.c — the keys of -g module and -g source, and their folded stacks (include/kprof/where.h).
 */
#include "kprof/where.h"

#include <stdlib.h>
#include <string.h>

#include "kprof/arena.h"
#include "kprof/pytree.h"

void where_init(struct kp_where *w, const struct kp_trace *t, enum kp_group g, int depth,
		struct kp_strtab *st)
{
	memset(w, 0, sizeof(*w));
	w->t = t;
	w->group = g;
	w->depth = depth;
	w->st = st;
	w->keys = xcalloc(2 * t->npy + 2, sizeof(*w->keys));
	w->calls = xmalloc((2 * t->npy + 2) * sizeof(*w->calls));
	memset(w->calls, 0xff, (2 * t->npy + 2) * sizeof(*w->calls));
	hmap_init(&w->folds, HMAP_INT);
}

static int path_depth(const char *p)
{
	int d = 1;
	for (; *p; p++)
		d += *p == '/';
	return d;
}

/* The module or source frame GPU event @i is keyed by (-1 none), *bwd. */
static int32_t key_frame(const struct kp_where *w, size_t i, int *bwd)
{
	const struct kp_trace *t = w->t;
	int32_t f = pytree_gpu_frame(t, i, bwd);
	if (f < 0)
		return -1;
	if (w->group == GROUP_SOURCE)
		return t->py[f].source;
	int32_t m = t->py[f].module;
	/* --depth N: the ancestor at depth N (the enclosing module of a module's parent) */
	while (m >= 0 && w->depth > 0 && path_depth(t->py[m].path) > w->depth)
		m = t->py[m].parent >= 0 ? t->py[t->py[m].parent].module : -1;
	return m;
}

const char *where_key(struct kp_where *w, size_t i, int64_t **mark)
{
	const struct kp_trace *t = w->t;
	int bwd;
	int32_t m = key_frame(w, i, &bwd);
	*mark = NULL;
	if (m < 0)
		return strtab_intern(w->st, w->group == GROUP_MODULE ? WHERE_NO_MODULE
								     : WHERE_NO_SOURCE,
				     strlen(w->group == GROUP_MODULE ? WHERE_NO_MODULE
								    : WHERE_NO_SOURCE));
	size_t k = 2 * (size_t)m + (size_t)bwd;
	*mark = &w->calls[k];
	if (w->keys[k])
		return w->keys[k];
	const char *name = w->group == GROUP_MODULE ? t->py[m].path : t->py[m].name;
	size_t n = strlen(name);
	char *s = xmalloc(n + sizeof(WHERE_BWD));
	memcpy(s, name, n);
	if (bwd) {
		memcpy(s + n, WHERE_BWD, sizeof(WHERE_BWD));
		n += sizeof(WHERE_BWD) - 1;
	}
	w->keys[k] = strtab_intern(w->st, s, n);
	free(s);
	return w->keys[k];
}

void where_fold(struct kp_where *w, size_t i, const char *key)
{
	int bwd;
	int64_t fk;
	if (w->group == GROUP_MODULE) {
		/* one line per row key; its frame stands for the stack */
		int32_t m = key_frame(w, i, &bwd);
		fk = m < 0 ? -1 : (int64_t)m * 2 + bwd;
		/* same key, another instance: the first one's line */
		int created;
		struct kp_hmap_entry *e = hmap_put_int(&w->folds, (int64_t)(intptr_t)key, &created);
		if (created) {
			e->val.i = (int64_t)w->nf;
			w->fv = xgrow(w->fv, w->nf + 1, &w->capf, 64, sizeof(*w->fv));
			w->fkey = xrealloc(w->fkey, w->capf * sizeof(*w->fkey));
			w->fv[w->nf] = (struct kp_fold){ NULL, 0 };
			w->fkey[w->nf++] = fk;
		}
		w->fv[e->val.i].ns += w->t->gpu[i].dur_ns;
		return;
	}
	int32_t f = pytree_gpu_frame(w->t, i, &bwd);
	fk = f < 0 || w->t->py[f].source < 0 ? -1 : (int64_t)w->t->py[f].stack * 2 + bwd;
	int created;
	struct kp_hmap_entry *e = hmap_put_int(&w->folds, fk, &created);
	if (created) {
		e->val.i = (int64_t)w->nf;
		w->fv = xgrow(w->fv, w->nf + 1, &w->capf, 64, sizeof(*w->fv));
		w->fkey = xrealloc(w->fkey, w->capf * sizeof(*w->fkey));
		w->fv[w->nf] = (struct kp_fold){ NULL, 0 };
		w->fkey[w->nf++] = fk;
	}
	w->fv[e->val.i].ns += w->t->gpu[i].dur_ns;
}

/* The folded stack of fold key @fk into @buf. */
static void fold_text(const struct kp_where *w, int64_t fk, char *buf, size_t cap)
{
	const struct kp_trace *t = w->t;
	size_t n = 0;
	if (fk < 0) {
		strcpy(buf, w->group == GROUP_MODULE ? WHERE_NO_MODULE : WHERE_NO_SOURCE);
		return;
	}
	int bwd = (int)(fk & 1);
	int32_t x = (int32_t)(fk >> 1);
	if (w->group == GROUP_MODULE) {
		/* the module path, one frame per module */
		const char *p = t->py[x].path;
		char name[4096];
		while (*p) {
			size_t k = strcspn(p, "/");
			size_t m = k < sizeof(name) - 1 ? k : sizeof(name) - 1;
			memcpy(name, p, m);
			name[m] = '\0';
			if (n && n + 1 < cap)
				buf[n++] = ';';
			n = pytree_fold_name(name, buf, n, cap);
			p += k + (p[k] == '/');
		}
	} else {
		n = pytree_stack_folded(t, x, buf, cap);
	}
	if (bwd && n + 7 < cap)
		memcpy(buf + n, ";[bwd]", 7);
}

void where_folds(struct kp_where *w, struct kp_report *r)
{
	size_t cap = 1 << 20;
	char *buf = xmalloc(cap);
	r->folds = arena_alloc(&r->arena, (w->nf + 1) * sizeof(*r->folds));
	for (size_t k = 0; k < w->nf; k++) {
		buf[0] = '\0';
		fold_text(w, w->fkey[k], buf, cap);
		r->folds[k] = (struct kp_fold){ arena_strdup(&r->arena, buf), w->fv[k].ns };
	}
	r->nfolds = w->nf;
	free(buf);
}

void where_free(struct kp_where *w)
{
	free(w->keys);
	free(w->calls);
	free(w->fv);
	free(w->fkey);
	hmap_free(&w->folds);
	memset(w, 0, sizeof(*w));
}
