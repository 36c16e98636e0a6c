/*
 * hmap.c — the one hash map (open addressing, linear probing, load at most 1/2).
 */
#include "kprof/hmap.h"

#include <stdlib.h>
#include <string.h>

#include "kprof/arena.h"

#define HMAP_MIN_CAP 64

/* Fibonacci hashing; the fold brings the well-mixed high bits down to the index bits. */
static uint64_t mix(uint64_t x)
{
	uint64_t h = x * 0x9E3779B97F4A7C15ull;
	h ^= h >> 32;
	return h ? h : 1;
}

/*
 * FNV-1a over 8-byte words, then bytes: kernel names are long C++ templates, and
 * distribution only needs to spread them.
 */
uint64_t hmap_hash_bytes(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t h = 1469598103934665603ull;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	h ^= h >> 32;
	return h ? h : 1;
}

void hmap_init(struct kp_hmap *m, enum kp_hmap_kind kind)
{
	memset(m, 0, sizeof(*m));
	m->kind = kind;
}

void hmap_free(struct kp_hmap *m)
{
	free(m->slot);
	m->slot = NULL;
	m->cap = m->n = 0;
}

static void rehash(struct kp_hmap *m, size_t cap)
{
	struct kp_hmap_entry *slot = xcalloc(cap, sizeof(*slot));
	for (size_t i = 0; i < m->cap; i++) {
		const struct kp_hmap_entry *e = &m->slot[i];
		if (!e->hash)
			continue;
		size_t j = e->hash & (cap - 1);
		while (slot[j].hash)
			j = (j + 1) & (cap - 1);
		slot[j] = *e;
	}
	free(m->slot);
	m->slot = slot;
	m->cap = cap;
}

void hmap_reserve(struct kp_hmap *m, size_t n)
{
	size_t cap = m->cap ? m->cap : HMAP_MIN_CAP;
	while (n * 2 > cap)
		cap *= 2;
	if (cap != m->cap)
		rehash(m, cap);
}

static int same_key(const struct kp_hmap *m, const struct kp_hmap_entry *e, uint64_t h,
		    const void *p, int64_t i, size_t len)
{
	if (e->hash != h)
		return 0;
	switch (m->kind) {
	case HMAP_PTR:
		return e->key.ptr == p;
	case HMAP_INT:
		return e->key.i == i;
	case HMAP_STR:
		return e->len == len && memcmp(e->key.ptr, p, len) == 0;
	}
	return 0;
}

/* The slot of the key, or the empty slot where it would go. */
static struct kp_hmap_entry *find(const struct kp_hmap *m, uint64_t h, const void *p, int64_t i,
				  size_t len)
{
	size_t j = h & (m->cap - 1);
	while (m->slot[j].hash && !same_key(m, &m->slot[j], h, p, i, len))
		j = (j + 1) & (m->cap - 1);
	return &m->slot[j];
}

static struct kp_hmap_entry *put(struct kp_hmap *m, uint64_t h, const void *p, int64_t i,
				 size_t len, int *created)
{
	if ((m->n + 1) * 2 > m->cap)
		rehash(m, m->cap ? m->cap * 2 : HMAP_MIN_CAP);
	struct kp_hmap_entry *e = find(m, h, p, i, len);
	if (created)
		*created = !e->hash;
	if (!e->hash) {
		e->hash = h;
		if (m->kind == HMAP_INT)
			e->key.i = i;
		else
			e->key.ptr = p;
		e->len = len;
		e->val.i = 0;
		m->n++;
	}
	return e;
}

static struct kp_hmap_entry *get(const struct kp_hmap *m, uint64_t h, const void *p, int64_t i,
				 size_t len)
{
	if (!m->n)
		return NULL;
	struct kp_hmap_entry *e = find(m, h, p, i, len);
	return e->hash ? e : NULL;
}

struct kp_hmap_entry *hmap_put_ptr(struct kp_hmap *m, const void *key, int *created)
{
	return put(m, mix((uint64_t)(uintptr_t)key), key, 0, 0, created);
}

struct kp_hmap_entry *hmap_put_int(struct kp_hmap *m, int64_t key, int *created)
{
	return put(m, mix((uint64_t)key), NULL, key, 0, created);
}

struct kp_hmap_entry *hmap_put_str(struct kp_hmap *m, const void *s, size_t len, int *created)
{
	return put(m, hmap_hash_bytes(s, len), s, 0, len, created);
}

struct kp_hmap_entry *hmap_get_ptr(const struct kp_hmap *m, const void *key)
{
	return get(m, mix((uint64_t)(uintptr_t)key), key, 0, 0);
}

struct kp_hmap_entry *hmap_get_int(const struct kp_hmap *m, int64_t key)
{
	return get(m, mix((uint64_t)key), NULL, key, 0);
}

struct kp_hmap_entry *hmap_get_str(const struct kp_hmap *m, const void *s, size_t len)
{
	return get(m, hmap_hash_bytes(s, len), s, 0, len);
}

struct kp_hmap_entry *hmap_next(const struct kp_hmap *m, const struct kp_hmap_entry *e)
{
	size_t i = e ? (size_t)(e - m->slot) + 1 : 0;
	for (; i < m->cap; i++)
		if (m->slot[i].hash)
			return &m->slot[i];
	return NULL;
}
