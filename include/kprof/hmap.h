/*
 * hmap.h — the one hash map: open addressing, linear probing, power-of-two table.
 * Keys are pointers (compared by address: interned names), integers, or byte strings.
 */
#ifndef KPROF_HMAP_H
#define KPROF_HMAP_H

#include <stddef.h>
#include <stdint.h>

enum kp_hmap_kind {
	HMAP_PTR = 0, /* key.ptr compared by address; NULL is a valid key */
	HMAP_INT,     /* key.i; every int64_t is a valid key */
	HMAP_STR,     /* key.ptr[0..len) compared by bytes */
};

/*
 * One slot.  hash == 0 marks it empty (stored hashes are never 0).  For HMAP_STR the map
 * keeps key.ptr as given: the bytes must live as long as the entry (the caller may point
 * key.ptr at an equal, longer-lived copy right after hmap_put created the entry).
 */
struct kp_hmap_entry {
	uint64_t hash;
	union {
		const void *ptr;
		int64_t i;
	} key;
	size_t len;                 /* HMAP_STR: key length in bytes */
	union {
		void *ptr;
		int64_t i;
	} val;                      /* zero when created */
};

/*
 * A map of one key kind.  Invariant: n * 2 <= cap (load at most 1/2); cap is 0 or a power
 * of two.  A zeroed struct is an empty HMAP_PTR map.  Free with hmap_free().
 */
struct kp_hmap {
	struct kp_hmap_entry *slot; /* malloc'ed, cap entries; NULL until the first put */
	size_t cap, n;
	enum kp_hmap_kind kind;
};

/* Prototypes */
void hmap_init(struct kp_hmap *m, enum kp_hmap_kind kind);
void hmap_free(struct kp_hmap *m);

/* Make room for @n entries without growing again. */
void hmap_reserve(struct kp_hmap *m, size_t n);

/*
 * The entry of @key, created with a zero value when absent (*created, may be NULL, says
 * which).  The pointer is valid until the next put: the table may move when it grows.
 */
struct kp_hmap_entry *hmap_put_ptr(struct kp_hmap *m, const void *key, int *created);
struct kp_hmap_entry *hmap_put_int(struct kp_hmap *m, int64_t key, int *created);
struct kp_hmap_entry *hmap_put_str(struct kp_hmap *m, const void *s, size_t len, int *created);

/* The entry of @key, or NULL. */
struct kp_hmap_entry *hmap_get_ptr(const struct kp_hmap *m, const void *key);
struct kp_hmap_entry *hmap_get_int(const struct kp_hmap *m, int64_t key);
struct kp_hmap_entry *hmap_get_str(const struct kp_hmap *m, const void *s, size_t len);

/*
 * Iteration in table order: `for (e = hmap_next(m, NULL); e; e = hmap_next(m, e))`.
 * Do not put while iterating.
 */
struct kp_hmap_entry *hmap_next(const struct kp_hmap *m, const struct kp_hmap_entry *e);

/* The hash of s[0..len) that HMAP_STR uses (never 0); strtab stores it with its strings. */
uint64_t hmap_hash_bytes(const void *s, size_t len);

#endif /* KPROF_HMAP_H */
