/*
 * hmap.c — the one hash map (open addressing, linear probing, load at most 1/2).
 */
#include "kprof/hmap.h"

#include <stdlib.h>
#include <string.h>

#include "kprof/arena.h"

#define HMAP_MIN_CAP 64

/* Fibonacci hashing: the high half of the product is well mixed; 0 means empty. */
static uint32_t hash_u64(uint64_t x)
{
	uint32_t h = (uint32_t)((x * 0x9E3779B97F4A7C15ull) >> 32);
	return h ? h : 1;
}

/*
 * FNV-1a over 8-byte words, then bytes: kernel names are long C++ templates, and
 * distribution only needs to spread them.
 */
static uint32_t hash_bytes(const void *p, size_t len)
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
	uint32_t r = (uint32_t)(h ^ (h >> 32));
	return r ? r : 1;
}

void hmap_init(struct kp_hmap *m, enum kp_hmap_kind kind)
{
	memset(m, 0, sizeof(*m));
	m->kind = kind;
}

void hmap_free(struct kp_hmap *m)
{
	free(m->hash);
	free(m->ent);
	free(m->len);
	m->hash = NULL;
	m->ent = NULL;
	m->len = NULL;
	m->cap = m->n = 0;
}

static void rehash(struct kp_hmap *m, size_t cap)
{
	uint32_t *hash = xcalloc(cap, sizeof(*hash));
	struct kp_hmap_entry *ent = xmalloc(cap * sizeof(*ent));
	size_t *len = m->kind == HMAP_STR ? xmalloc(cap * sizeof(*len)) : NULL;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->hash[i])
			continue;
		size_t j = m->hash[i] & (cap - 1);
		while (hash[j])
			j = (j + 1) & (cap - 1);
		hash[j] = m->hash[i];
		ent[j] = m->ent[i];
		if (len)
			len[j] = m->len[i];
	}
	free(m->hash);
	free(m->ent);
	free(m->len);
	m->hash = hash;
	m->ent = ent;
	m->len = len;
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

static inline __attribute__((always_inline)) int same_key(const struct kp_hmap *m, size_t j,
							  const void *p, int64_t i, size_t len)
{
	switch (m->kind) {
	case HMAP_PTR:
		return m->ent[j].key.ptr == p;
	case HMAP_INT:
		return m->ent[j].key.i == i;
	case HMAP_STR:
		return m->len[j] == len && memcmp(m->ent[j].key.ptr, p, len) == 0;
	}
	return 0;
}

/* The slot of the key, or the empty slot where it would go. */
static inline __attribute__((always_inline)) size_t find(const struct kp_hmap *m, uint32_t h,
							 const void *p, int64_t i, size_t len)
{
	size_t j = h & (m->cap - 1);
	while (m->hash[j] && (m->hash[j] != h || !same_key(m, j, p, i, len)))
		j = (j + 1) & (m->cap - 1);
	return j;
}

static struct kp_hmap_entry *put(struct kp_hmap *m, uint32_t h, const void *p, int64_t i,
				 size_t len, int *created)
{
	if ((m->n + 1) * 2 > m->cap)
		rehash(m, m->cap ? m->cap * 2 : HMAP_MIN_CAP);
	size_t j = find(m, h, p, i, len);
	struct kp_hmap_entry *e = &m->ent[j];
	if (created)
		*created = !m->hash[j];
	if (!m->hash[j]) {
		m->hash[j] = h;
		if (m->kind == HMAP_INT)
			e->key.i = i;
		else
			e->key.ptr = p;
		if (m->len)
			m->len[j] = len;
		e->val.i = 0;
		m->n++;
	}
	return e;
}

static struct kp_hmap_entry *get(const struct kp_hmap *m, uint32_t h, const void *p, int64_t i,
				 size_t len)
{
	if (!m->n)
		return NULL;
	size_t j = find(m, h, p, i, len);
	return m->hash[j] ? &m->ent[j] : NULL;
}

struct kp_hmap_entry *hmap_put_ptr(struct kp_hmap *m, const void *key, int *created)
{
	return put(m, hash_u64((uint64_t)(uintptr_t)key), key, 0, 0, created);
}

struct kp_hmap_entry *hmap_put_int(struct kp_hmap *m, int64_t key, int *created)
{
	return put(m, hash_u64((uint64_t)key), NULL, key, 0, created);
}

struct kp_hmap_entry *hmap_put_str(struct kp_hmap *m, const void *s, size_t len, int *created)
{
	return put(m, hash_bytes(s, len), s, 0, len, created);
}

struct kp_hmap_entry *hmap_get_ptr(const struct kp_hmap *m, const void *key)
{
	return get(m, hash_u64((uint64_t)(uintptr_t)key), key, 0, 0);
}

struct kp_hmap_entry *hmap_get_int(const struct kp_hmap *m, int64_t key)
{
	return get(m, hash_u64((uint64_t)key), NULL, key, 0);
}

struct kp_hmap_entry *hmap_get_str(const struct kp_hmap *m, const void *s, size_t len)
{
	return get(m, hash_bytes(s, len), s, 0, len);
}

struct kp_hmap_entry *hmap_next(const struct kp_hmap *m, const struct kp_hmap_entry *e)
{
	size_t i = e ? (size_t)(e - m->ent) + 1 : 0;
	for (; i < m->cap; i++)
		if (m->hash[i])
			return &m->ent[i];
	return NULL;
}
