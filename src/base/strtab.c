/*
 * strtab.c — string interning over the one hash map (hmap.c).
 */
#include "kprof/strtab.h"

void strtab_init(struct kp_strtab *st, struct kp_arena *arena)
{
	st->arena = arena;
	hmap_init(&st->map, HMAP_STR);
	hmap_reserve(&st->map, 512);
}

const char *strtab_intern(struct kp_strtab *st, const char *s, size_t len)
{
	int created;
	struct kp_hmap_entry *e = hmap_put_str(&st->map, s, len, &created);
	if (created)
		e->key.ptr = arena_strndup(st->arena, s, len); /* equal bytes that outlive @s */
	return e->key.ptr;
}

const char *strtab_lookup(const struct kp_strtab *st, const char *s, size_t len)
{
	const struct kp_hmap_entry *e = hmap_get_str(&st->map, s, len);
	return e ? e->key.ptr : NULL;
}

void strtab_free(struct kp_strtab *st)
{
	hmap_free(&st->map);
}
