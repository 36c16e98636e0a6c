/*
 * strtab.c — string interning with open addressing (FNV-1a hash, linear probing).
 */
#include "kprof/strtab.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct kp_str {
	uint64_t hash;
	size_t len;
	char s[];
};

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	size_t i = 0;
	/* 8 bytes per step: names are long C++ templates; quality only needs to spread */
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h ^ (h >> 32);
}

void strtab_init(struct kp_strtab *st, struct kp_arena *arena)
{
	st->arena = arena;
	st->cap = 1024;
	st->n = 0;
	st->slot = xcalloc(st->cap, sizeof(*st->slot));
}

static void grow(struct kp_strtab *st)
{
	size_t cap = st->cap * 2;
	struct kp_str **slot = xcalloc(cap, sizeof(*slot));
	for (size_t i = 0; i < st->cap; i++) {
		struct kp_str *e = st->slot[i];
		if (!e)
			continue;
		size_t j = e->hash & (cap - 1);
		while (slot[j])
			j = (j + 1) & (cap - 1);
		slot[j] = e;
	}
	free(st->slot);
	st->slot = slot;
	st->cap = cap;
}

const char *strtab_intern(struct kp_strtab *st, const char *s, size_t len)
{
	uint64_t h = hash_bytes(s, len);
	size_t j = h & (st->cap - 1);
	for (struct kp_str *e; (e = st->slot[j]); j = (j + 1) & (st->cap - 1))
		if (e->hash == h && e->len == len && memcmp(e->s, s, len) == 0)
			return e->s;
	struct kp_str *e = arena_alloc(st->arena, sizeof(*e) + len + 1);
	e->hash = h;
	e->len = len;
	memcpy(e->s, s, len);
	e->s[len] = '\0';
	st->slot[j] = e;
	if (++st->n * 2 > st->cap)
		grow(st);
	return e->s;
}

void strtab_free(struct kp_strtab *st)
{
	free(st->slot);
	st->slot = NULL;
	st->cap = st->n = 0;
}
