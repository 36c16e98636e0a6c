/*
 * hmap-vs-uthash.h — what bench/hmap-vs-uthash.c and its uthash builds share (bench only).
 */
#ifndef KPROF_BENCH_HMAP_VS_UTHASH_H
#define KPROF_BENCH_HMAP_VS_UTHASH_H

#include <stddef.h>
#include <stdint.h>

/* One recorded call (bench/hmap-record.c): 'P' put, 'G' get, 'R' reserve, 'F' free. */
struct hv_op {
	uint8_t op;
	uint32_t inst; /* the map instance, 0 .. ninst-1 within the stream */
	uint32_t len;
	const void *key; /* len bytes; an int64 for HMAP_INT and HMAP_PTR */
};

/* Every call on the maps of one label (one hmap_init site, or a link/capture stream). */
struct hv_stream {
	char *label;
	int kind; /* enum kp_hmap_kind */
	struct hv_op *ops;
	size_t nops, cap;
	uint32_t ninst;
};

/* What a replay saw: the same for every implementation, or one of them is wrong. */
struct hv_result {
	uint64_t created, hits;
	uint64_t bytes, entries; /* summed over instances, at their free (or the end) */
};

/* A replay of @s on one implementation; returns nanoseconds. */
typedef uint64_t (*hv_replay_fn)(const struct hv_stream *s, struct hv_result *r);

uint64_t hv_now_ns(void);

/* The uthash builds: bench/hmap-vs-uthash-ut.c compiled once per HASH_FUNCTION */
uint64_t hv_ut_jen(const struct hv_stream *s, struct hv_result *r);
uint64_t hv_ut_fnv(const struct hv_stream *s, struct hv_result *r);
uint64_t hv_ut_sfh(const struct hv_stream *s, struct hv_result *r);
uint64_t hv_ut_oat(const struct hv_stream *s, struct hv_result *r);
uint64_t hv_ut_ber(const struct hv_stream *s, struct hv_result *r);
uint64_t hv_ut_sax(const struct hv_stream *s, struct hv_result *r);
uint64_t hv_ut_kp(const struct hv_stream *s, struct hv_result *r);

/* kprof's hmap.c hashes (copied from src/base/hmap.c for HASH_FUNCTION = kprof's) */
uint32_t hv_kp_hash(const void *p, size_t len);

#endif
