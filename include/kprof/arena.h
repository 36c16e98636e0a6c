/*
 * arena.h — bump allocator; everything of one parsed trace or report lives in one arena.
 */
#ifndef KPROF_ARENA_H
#define KPROF_ARENA_H

#include <stddef.h>

/*
 * A chain of blocks.  Allocations are never freed alone; arena_free() releases all.
 * Out of memory is the one exit outside main.c (KP_ENV, status 4).
 */
struct kp_arena {
	struct kp_arena_block *head; /* newest block first */
	size_t used;                 /* bytes used in head */
	size_t cap;                  /* bytes available in head */
	size_t total;                /* bytes allocated from the system */
};

/* Prototypes */
void arena_init(struct kp_arena *a);
void *arena_alloc(struct kp_arena *a, size_t n);  /* 16-byte aligned, uninitialized */
void *arena_zalloc(struct kp_arena *a, size_t n); /* zeroed */
char *arena_strndup(struct kp_arena *a, const char *s, size_t n); /* NUL-terminated copy */
char *arena_strdup(struct kp_arena *a, const char *s);
/* Move every block of @src into @dst (freed with it); @src is left empty. */
void arena_adopt(struct kp_arena *dst, struct kp_arena *src);
void arena_free(struct kp_arena *a);

/* xmalloc family: exit(KP_ENV) with a message on out-of-memory */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);
/* Vector @v of @size-byte elements, @n used, with room for one more: *@cap doubles from @first. */
void *xgrow(void *v, size_t n, size_t *cap, size_t first, size_t size);
char *xstrdup(const char *s);

#endif /* KPROF_ARENA_H */
