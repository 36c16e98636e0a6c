/*
 * hmap-on-uthash.c — include/kprof/hmap.h's API on uthash (bench only): linked in place of
 * src/base/hmap.o, it makes the "uthash build" of kprof whose peak RSS and time
 * bench/hmap-vs-uthash.sh sets beside the hmap build.  Every map of kprof that is an hmap
 * becomes a uthash table (HASH_FUNCTION left at its default, HASH_JEN): one malloc'ed entry
 * per key ({key, val} as struct kp_hmap_entry, then the UT_hash_handle), entries at fixed
 * addresses.  The head is kept in kp_hmap.ent, the count in kp_hmap.n.  String keys are
 * reached through the entry's key.ptr (hh.key points at that field), so a caller may point
 * key.ptr at an equal copy after the put (src/base/strtab.c does).  hmap_reserve does
 * nothing: uthash has no way to size a table ahead.  Iteration is in insertion order.
 */
#include <stdlib.h>
#include <string.h>

#include "kprof/arena.h"
#include "kprof/hmap.h"

#include <uthash.h>

struct ue {
	struct kp_hmap_entry e;
	UT_hash_handle hh;
};

#define HEAD(m) ((struct ue *)(void *)(m)->ent)
#define SET_HEAD(m, h) ((m)->ent = &(h)->e)

void hmap_init(struct kp_hmap *m, enum kp_hmap_kind kind)
{
	memset(m, 0, sizeof(*m));
	m->kind = kind;
}

void hmap_free(struct kp_hmap *m)
{
	struct ue *head = HEAD(m), *e, *tmp;
	HASH_ITER(hh, head, e, tmp)
	{
		HASH_DEL(head, e);
		free(e);
	}
	enum kp_hmap_kind kind = m->kind;
	memset(m, 0, sizeof(*m));
	m->kind = kind;
}

void hmap_reserve(struct kp_hmap *m, size_t n)
{
	(void)m, (void)n;
}

static struct ue *fresh(void)
{
	struct ue *e = xcalloc(1, sizeof(*e));
	return e;
}

struct kp_hmap_entry *hmap_get_int(const struct kp_hmap *m, int64_t key)
{
	struct ue *head = HEAD(m), *e;
	HASH_FIND(hh, head, &key, sizeof(key), e);
	return e ? &e->e : NULL;
}

struct kp_hmap_entry *hmap_put_int(struct kp_hmap *m, int64_t key, int *created)
{
	struct kp_hmap_entry *f = hmap_get_int(m, key);
	if (created)
		*created = !f;
	if (f)
		return f;
	struct ue *head = HEAD(m), *e = fresh();
	e->e.key.i = key;
	HASH_ADD(hh, head, e.key.i, sizeof(key), e);
	SET_HEAD(m, head);
	m->n++;
	return &e->e;
}

struct kp_hmap_entry *hmap_get_ptr(const struct kp_hmap *m, const void *key)
{
	struct ue *head = HEAD(m), *e;
	HASH_FIND_PTR(head, &key, e);
	return e ? &e->e : NULL;
}

struct kp_hmap_entry *hmap_put_ptr(struct kp_hmap *m, const void *key, int *created)
{
	struct kp_hmap_entry *f = hmap_get_ptr(m, key);
	if (created)
		*created = !f;
	if (f)
		return f;
	struct ue *head = HEAD(m), *e = fresh();
	e->e.key.ptr = key;
	HASH_ADD_PTR(head, e.key.ptr, e);
	SET_HEAD(m, head);
	m->n++;
	return &e->e;
}

/* String keys: hh.key is &entry->e.key.ptr, compared through it */
#undef HASH_KEYCMP
#define HASH_KEYCMP(a, b, n) memcmp(*(const void *const *)(a), b, n)

struct kp_hmap_entry *hmap_get_str(const struct kp_hmap *m, const void *s, size_t len)
{
	struct ue *head = HEAD(m), *e = NULL;
	unsigned hv;
	if (!head)
		return NULL;
	HASH_VALUE(s, len, hv);
	HASH_FIND_BYHASHVALUE(hh, head, s, len, hv, e);
	return e ? &e->e : NULL;
}

struct kp_hmap_entry *hmap_put_str(struct kp_hmap *m, const void *s, size_t len, int *created)
{
	struct kp_hmap_entry *f = hmap_get_str(m, s, len);
	if (created)
		*created = !f;
	if (f)
		return f;
	struct ue *head = HEAD(m), *e = fresh();
	unsigned hv;
	e->e.key.ptr = s;
	HASH_VALUE(s, len, hv);
	HASH_ADD_KEYPTR_BYHASHVALUE(hh, head, &e->e.key.ptr, len, hv, e);
	SET_HEAD(m, head);
	m->n++;
	return &e->e;
}

struct kp_hmap_entry *hmap_next(const struct kp_hmap *m, const struct kp_hmap_entry *e)
{
	const struct ue *u = e ? (const struct ue *)e : NULL;
	struct ue *nx = u ? u->hh.next : HEAD(m);
	return nx ? &nx->e : NULL;
}
