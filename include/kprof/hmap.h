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
 * One entry.  For HMAP_STR the map keeps key.ptr as given: the bytes must live as long as
 * the entry (the caller may point key.ptr at an equal, longer-lived copy right after
 * hmap_put created the entry).
 */
struct kp_hmap_entry {
	union {
		const void *ptr;
		int64_t i;
	} key;
	union {
		void *ptr;
		int64_t i;
	} val; /* zero when created */
};

/*
 * A map of one key kind.  Invariants: n * 2 <= cap (load at most 1/2); cap is 0 or a power
 * of two; hash[j] == 0 marks slot j empty (stored hashes are never 0), else ent[j] holds
 * its entry.  Probing reads the 4-byte hashes and touches an entry only when they agree;
 * entries are 16 bytes (string keys keep their lengths aside), so a lookup costs about two
 * cache lines and tables of a million ids stay small.
 * A zeroed struct is an empty HMAP_PTR map.  Free with hmap_free().
 */
struct kp_hmap {
	uint32_t *hash;            /* malloc'ed, cap hashes; NULL until the first put */
	struct kp_hmap_entry *ent; /* malloc'ed, cap entries (only those in use initialized) */
	size_t *len;               /* HMAP_STR: key lengths, cap of them; NULL otherwise */
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

#endif /* KPROF_HMAP_H */
