/*
 * hmap-record.c — record the key streams of kprof's maps while kprof runs (bench only).
 *
 * Linked into a copy of kprof (bench/hmap-vs-uthash.sh) with -Wl,--wrap for every hmap_*
 * function of include/kprof/hmap.h and for link_trace (include/kprof/link.h): each call is
 * written to $KPROF_HMAP_REC and then made as usual, so the run's output is kprof's.
 * Records (native endian): struct rec, then len bytes of key:
 *   'I' a map's first use (hmap_init, or the first put/get of a zeroed map): key = the
 *       caller's address minus the executable's base (named with addr2line -f later);
 *   'N' a stream link.c builds (its sorted/dense imap, not hmap): key = its name;
 *   'R' hmap_reserve: key = n as an int64;
 *   'P' put, 'G' get: key = the bytes (HMAP_STR), the int64 (HMAP_INT) or the pointer's
 *       value (HMAP_PTR); 'F' hmap_free.
 * link_trace's streams are the ids link.c's imap_build/imap_get see (src/ingest/link.c):
 * "link.ext" puts ops' External ids (first op wins), gets launches' and GPU events'; "link.corr"
 * puts launches' correlation ids, gets GPU events'.  capture's maps cannot run here (no GPU):
 * "capture.names" replays the names of a kprof capture trace as capture/record/ctrace.c
 * interns them (get, then put when absent), "capture.ops" the op ids of its ops as
 * capture/intercept/hostops.c keys them (op_key(pid, External id): put, then a get per launch).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/hmap.h"
#include "kprof/link.h"
#include "kprof/trace.h"

struct rec {
	uint8_t op, kind;
	uint16_t pad;
	uint32_t map;
	uint32_t len;
};

/* Prototypes (the --wrap pairs) */
void __real_hmap_init(struct kp_hmap *m, enum kp_hmap_kind kind);
void __real_hmap_free(struct kp_hmap *m);
struct kp_hmap_entry *__real_hmap_put_ptr(struct kp_hmap *m, const void *key, int *created);
struct kp_hmap_entry *__real_hmap_put_int(struct kp_hmap *m, int64_t key, int *created);
struct kp_hmap_entry *__real_hmap_put_str(struct kp_hmap *m, const void *s, size_t len,
					  int *created);
struct kp_hmap_entry *__real_hmap_get_ptr(const struct kp_hmap *m, const void *key);
struct kp_hmap_entry *__real_hmap_get_int(const struct kp_hmap *m, int64_t key);
struct kp_hmap_entry *__real_hmap_get_str(const struct kp_hmap *m, const void *s, size_t len);
void __real_link_trace(struct kp_trace *t);
void __real_hmap_reserve(struct kp_hmap *m, size_t n);
void __wrap_hmap_reserve(struct kp_hmap *m, size_t n);
void __wrap_hmap_init(struct kp_hmap *m, enum kp_hmap_kind kind);
void __wrap_hmap_free(struct kp_hmap *m);
struct kp_hmap_entry *__wrap_hmap_put_ptr(struct kp_hmap *m, const void *key, int *created);
struct kp_hmap_entry *__wrap_hmap_put_int(struct kp_hmap *m, int64_t key, int *created);
struct kp_hmap_entry *__wrap_hmap_put_str(struct kp_hmap *m, const void *s, size_t len,
					  int *created);
struct kp_hmap_entry *__wrap_hmap_get_ptr(const struct kp_hmap *m, const void *key);
struct kp_hmap_entry *__wrap_hmap_get_int(const struct kp_hmap *m, int64_t key);
struct kp_hmap_entry *__wrap_hmap_get_str(const struct kp_hmap *m, const void *s, size_t len);
void __wrap_link_trace(struct kp_trace *t);

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;
static int off;           /* $KPROF_HMAP_REC unset: record nothing */
static struct kp_hmap ids; /* map address -> id (a real hmap: not recorded) */
static uint32_t nextid = 1;
static uintptr_t base;

static int start(void)
{
	if (out)
		return 1;
	if (off)
		return 0;
	const char *p = getenv("KPROF_HMAP_REC");
	if (!p || !(out = fopen(p, "wb"))) {
		off = 1;
		return 0;
	}
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	Dl_info di;
	if (dladdr((void *)start, &di))
		base = (uintptr_t)di.dli_fbase;
	__real_hmap_init(&ids, HMAP_PTR);
	return 1;
}

static void put(uint8_t op, uint8_t kind, uint32_t map, const void *key, size_t len)
{
	struct rec r = { op, kind, 0, map, (uint32_t)len };
	fwrite(&r, sizeof(r), 1, out);
	if (len)
		fwrite(key, 1, len, out);
}

/* The map's id; a new one (and its 'I' record) on first sight. */
static uint32_t map_id(const struct kp_hmap *m, void *site, int fresh)
{
	struct kp_hmap_entry *e = __real_hmap_put_ptr(&ids, m, NULL);
	if (!e->val.i || fresh) {
		e->val.i = nextid++;
		uint64_t a = (uint64_t)((uintptr_t)site - base);
		put('I', (uint8_t)m->kind, (uint32_t)e->val.i, &a, sizeof(a));
	}
	return (uint32_t)e->val.i;
}

static void rec_key(uint8_t op, const struct kp_hmap *m, void *site, const void *key, size_t len)
{
	pthread_mutex_lock(&mu);
	if (start())
		put(op, (uint8_t)m->kind, map_id(m, site, 0), key, len);
	pthread_mutex_unlock(&mu);
}

void __wrap_hmap_init(struct kp_hmap *m, enum kp_hmap_kind kind)
{
	__real_hmap_init(m, kind);
	pthread_mutex_lock(&mu);
	if (start())
		map_id(m, __builtin_return_address(0), 1);
	pthread_mutex_unlock(&mu);
}

void __wrap_hmap_free(struct kp_hmap *m)
{
	pthread_mutex_lock(&mu);
	if (start()) {
		struct kp_hmap_entry *e = __real_hmap_get_ptr(&ids, m);
		if (e && e->val.i) {
			put('F', (uint8_t)m->kind, (uint32_t)e->val.i, NULL, 0);
			e->val.i = 0;
		}
	}
	pthread_mutex_unlock(&mu);
	__real_hmap_free(m);
}

void __wrap_hmap_reserve(struct kp_hmap *m, size_t n)
{
	int64_t k = (int64_t)n;
	rec_key('R', m, __builtin_return_address(0), &k, sizeof(k));
	__real_hmap_reserve(m, n);
}

struct kp_hmap_entry *__wrap_hmap_put_ptr(struct kp_hmap *m, const void *key, int *created)
{
	uint64_t k = (uint64_t)(uintptr_t)key;
	rec_key('P', m, __builtin_return_address(0), &k, sizeof(k));
	return __real_hmap_put_ptr(m, key, created);
}

struct kp_hmap_entry *__wrap_hmap_put_int(struct kp_hmap *m, int64_t key, int *created)
{
	rec_key('P', m, __builtin_return_address(0), &key, sizeof(key));
	return __real_hmap_put_int(m, key, created);
}

struct kp_hmap_entry *__wrap_hmap_put_str(struct kp_hmap *m, const void *s, size_t len,
					  int *created)
{
	rec_key('P', m, __builtin_return_address(0), s, len);
	return __real_hmap_put_str(m, s, len, created);
}

struct kp_hmap_entry *__wrap_hmap_get_ptr(const struct kp_hmap *m, const void *key)
{
	uint64_t k = (uint64_t)(uintptr_t)key;
	rec_key('G', m, __builtin_return_address(0), &k, sizeof(k));
	return __real_hmap_get_ptr(m, key);
}

struct kp_hmap_entry *__wrap_hmap_get_int(const struct kp_hmap *m, int64_t key)
{
	rec_key('G', m, __builtin_return_address(0), &key, sizeof(key));
	return __real_hmap_get_int(m, key);
}

struct kp_hmap_entry *__wrap_hmap_get_str(const struct kp_hmap *m, const void *s, size_t len)
{
	rec_key('G', m, __builtin_return_address(0), s, len);
	return __real_hmap_get_str(m, s, len);
}

/* A named stream's id and its 'N' record. */
static uint32_t named(const char *name, uint8_t kind)
{
	uint32_t id = nextid++;
	put('N', kind, id, name, strlen(name));
	return id;
}

static void put_int(uint8_t op, uint32_t id, int64_t k)
{
	put(op, HMAP_INT, id, &k, sizeof(k));
}

static void link_streams(const struct kp_trace *t)
{
	uint32_t ext = named("link.ext", HMAP_INT), corr = named("link.corr", HMAP_INT);
	for (size_t i = 0; t->op_ext && i < t->nops; i++)
		if (t->op_ext[i] >= 0)
			put_int('P', ext, t->op_ext[i]);
	for (size_t i = 0; t->launch_ids && i < t->nlaunches; i++)
		if (t->launch_ids[i].corr >= 0)
			put_int('P', corr, t->launch_ids[i].corr);
	for (size_t i = 0; t->launch_ids && i < t->nlaunches; i++)
		put_int('G', ext, t->launch_ids[i].ext_id);
	for (size_t i = 0; t->gpu_ids && i < t->ngpu; i++) {
		put_int('G', corr, t->gpu_ids[i].corr);
		put_int('G', ext, t->gpu_ids[i].ext_id);
	}
	put('F', HMAP_INT, ext, NULL, 0);
	put('F', HMAP_INT, corr, NULL, 0);
}

static void name_rec(uint32_t id, const char *s)
{
	if (!s)
		return;
	put('G', HMAP_STR, id, s, strlen(s));
	put('P', HMAP_STR, id, s, strlen(s));
}

static void capture_streams(const struct kp_trace *t)
{
	uint32_t names = named("capture.names", HMAP_STR), ops = named("capture.ops", HMAP_INT);
	for (size_t i = 0; i < t->nops; i++)
		name_rec(names, t->ops[i].name);
	for (size_t i = 0; i < t->nlaunches; i++)
		name_rec(names, t->launches[i].name);
	for (size_t i = 0; i < t->ngpu; i++)
		name_rec(names, t->gpu[i].name);
	put('F', HMAP_STR, names, NULL, 0);
	for (size_t i = 0; t->op_ext && i < t->nops; i++)
		if (t->op_ext[i] > 0)
			put_int('P', ops,
				(int64_t)((uint64_t)t->threads[t->ops[i].thread].pid << 40 ^
					  (uint64_t)t->op_ext[i]));
	for (size_t i = 0; t->launch_ids && i < t->nlaunches; i++)
		put_int('G', ops,
			(int64_t)((uint64_t)t->threads[t->launches[i].thread].pid << 40 ^
				  (uint64_t)t->launch_ids[i].ext_id));
	put('F', HMAP_INT, ops, NULL, 0);
}

void __wrap_link_trace(struct kp_trace *t)
{
	pthread_mutex_lock(&mu);
	if (start()) {
		link_streams(t);
		capture_streams(t);
	}
	pthread_mutex_unlock(&mu);
	__real_link_trace(t);
}
