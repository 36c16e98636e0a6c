/*
 * arena.c — bump allocator and the out-of-memory exit.
 */
#include "kprof/arena.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/diag.h"

struct kp_arena_block {
	struct kp_arena_block *next;
	size_t size;
	_Alignas(16) unsigned char data[];
};

/* tests/fuzz/run.sh builds with small blocks: fewer large mallocs per input under ASan, and
 * the block-chaining path runs on every input */
#ifndef ARENA_MIN_BLOCK
#define ARENA_MIN_BLOCK (256 * 1024)
#endif

/*
 * The one exit outside main.c (STYLE.md §4): otherwise every caller of the x* family and of
 * arena_alloc() would carry an error path no test reaches.  git's xmalloc() dies the same way.
 */
static void oom(size_t n)
{
	fprintf(stderr, "kprof: error: out of memory (allocating %zu bytes)\n", n);
	exit(KP_ENV);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p)
		oom(n * m);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xgrow(void *v, size_t n, size_t *cap, size_t first, size_t size)
{
	if (n < *cap)
		return v;
	while (*cap <= n)
		*cap = *cap ? *cap * 2 : first;
	return xrealloc(v, *cap * size);
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

void arena_init(struct kp_arena *a)
{
	memset(a, 0, sizeof(*a));
}

void *arena_alloc(struct kp_arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (!a->head || a->cap - a->used < n) {
		size_t size = n > ARENA_MIN_BLOCK ? n : ARENA_MIN_BLOCK;
		/* grow blocks with the arena so big traces make few blocks */
		if (a->total / 4 > size)
			size = a->total / 4 < 64u * 1024 * 1024 ? a->total / 4 : 64u * 1024 * 1024;
		if (size < n)
			size = n;
		struct kp_arena_block *b = xmalloc(sizeof(*b) + size);
		b->next = a->head;
		b->size = size;
		a->head = b;
		a->used = 0;
		a->cap = size;
		a->total += size;
	}
	void *p = a->head->data + a->used;
	a->used += n;
	return p;
}

void *arena_zalloc(struct kp_arena *a, size_t n)
{
	return memset(arena_alloc(a, n), 0, n);
}

char *arena_strndup(struct kp_arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *arena_strdup(struct kp_arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

void arena_adopt(struct kp_arena *dst, struct kp_arena *src)
{
	if (!src->head)
		return;
	if (!dst->head) {
		*dst = *src;
	} else {
		/* behind dst's head, whose free room stays in use */
		struct kp_arena_block *last = src->head;
		while (last->next)
			last = last->next;
		last->next = dst->head->next;
		dst->head->next = src->head;
		dst->total += src->total;
	}
	memset(src, 0, sizeof(*src));
}

void arena_free(struct kp_arena *a)
{
	struct kp_arena_block *b = a->head;
	while (b) {
		struct kp_arena_block *next = b->next;
		free(b);
		b = next;
	}
	memset(a, 0, sizeof(*a));
}
