/*
 * strtab.h — string interning: equal strings share one pointer, so grouping compares pointers.
 */
#ifndef KPROF_STRTAB_H
#define KPROF_STRTAB_H

#include <stddef.h>

#include "kprof/arena.h"
#include "kprof/hmap.h"

/* Interned strings: an HMAP_STR map whose keys point at the copies in @arena (not owned). */
struct kp_strtab {
	struct kp_arena *arena;
	struct kp_hmap map;
};

/* Prototypes */
void strtab_init(struct kp_strtab *st, struct kp_arena *arena);
/* The interned copy of s[0..len) (NUL-terminated), allocated on first sight. */
const char *strtab_intern(struct kp_strtab *st, const char *s, size_t len);
/* The interned copy of s[0..len), or NULL when it was never interned (nothing allocated). */
const char *strtab_lookup(const struct kp_strtab *st, const char *s, size_t len);
void strtab_free(struct kp_strtab *st);

#endif /* KPROF_STRTAB_H */
