/*
 * hmap-vs-uthash-ut.c — the replay on uthash (bench only), compiled once per hash function:
 *   cc -DUT_HASH=HASH_JEN -DUT_FN=hv_ut_jen -c bench/hmap-vs-uthash-ut.c
 * Entries are 72 bytes ({key, val} as struct kp_hmap_entry, then the UT_hash_handle), taken
 * from a bump allocator (no malloc header: the best case, as if the map lived in an arena);
 * uthash's own table and buckets go through malloc (uthash_malloc left as documented).
 * Keys as uthash's guide has them: HASH_ADD_KEYPTR for byte strings, HASH_ADD on the
 * 8-byte key field for integers and pointers.
 */
#include <stdlib.h>
#include <string.h>

#include "hmap-vs-uthash.h"

#define HASH_FUNCTION(keyptr, keylen, hashv) UT_HASH(keyptr, keylen, hashv)
#define HASH_KP(keyptr, keylen, hashv) ((hashv) = hv_kp_hash(keyptr, keylen))
#include <uthash.h>

struct ue {
	union {
		const void *ptr;
		int64_t i;
	} key;
	int64_t val;
	UT_hash_handle hh;
};

/* Entries of one replay: blocks of 4096 */
struct bump {
	struct ue **blk;
	size_t nblk, used;
};

static struct ue *bump_new(struct bump *b)
{
	if (!b->nblk || b->used == 4096) {
		b->blk = realloc(b->blk, (b->nblk + 1) * sizeof(*b->blk));
		b->blk[b->nblk++] = malloc(4096 * sizeof(struct ue));
		b->used = 0;
	}
	return &b->blk[b->nblk - 1][b->used++];
}

static void bump_free(struct bump *b)
{
	for (size_t i = 0; i < b->nblk; i++)
		free(b->blk[i]);
	free(b->blk);
}

static void account(struct ue *head, struct hv_result *r)
{
	if (!head)
		return;
	size_t n = HASH_COUNT(head);
	r->entries += n;
	r->bytes += n * (sizeof(struct ue) - sizeof(UT_hash_handle)) + HASH_OVERHEAD(hh, head);
}

uint64_t UT_FN(const struct hv_stream *s, struct hv_result *r)
{
	struct ue **head = calloc(s->ninst, sizeof(*head));
	struct bump b = { 0 };
	uint64_t t0 = hv_now_ns();
	uint64_t created = 0, hits = 0;
	for (size_t i = 0; i < s->nops; i++) {
		const struct hv_op *o = &s->ops[i];
		struct ue *e;
		switch (o->op) {
		case 'P':
		case 'G':
			HASH_FIND(hh, head[o->inst], o->key, o->len, e);
			if (e) {
				hits += o->op == 'G';
			} else if (o->op == 'P') {
				e = bump_new(&b);
				e->val = (int64_t)created++;
				if (s->kind == 2) {
					e->key.ptr = o->key;
					HASH_ADD_KEYPTR(hh, head[o->inst], e->key.ptr, o->len, e);
				} else {
					memcpy(&e->key.i, o->key, sizeof(e->key.i));
					HASH_ADD(hh, head[o->inst], key.i, sizeof(e->key.i), e);
				}
			}
			break;
		case 'F':
			account(head[o->inst], r);
			HASH_CLEAR(hh, head[o->inst]);
			break;
		}
	}
	for (uint32_t k = 0; k < s->ninst; k++) {
		account(head[k], r);
		HASH_CLEAR(hh, head[k]);
	}
	bump_free(&b);
	uint64_t t = hv_now_ns() - t0;
	free(head);
	r->created += created;
	r->hits += hits;
	return t;
}
