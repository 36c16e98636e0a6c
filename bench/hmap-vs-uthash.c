/*
 * hmap-vs-uthash.c — kprof's maps replayed on hmap.c and on uthash, same keys, one run.
 *
 * usage: hmap-vs-uthash [-n RUNS] [-m MINOPS] [-g] --exe KPROF REC...
 * Each REC is what bench/hmap-record.c wrote while KPROF (the recording build) ran; a map's
 * label is the function that called hmap_init (or first used a zeroed map), named by
 * addr2line on KPROF, or the name of a link/capture stream; -g: one label per site over all
 * recordings (else one per recording and site).  Every label with MINOPS calls or more
 * (default 1000) is replayed RUNS times (default 5) on each implementation, the
 * implementations interleaved within each run, each time repeated as often as the hmap replay
 * fits in 20 ms (a run's figure: their mean); the best run counts.  Times are the thread's CPU
 * time (CLOCK_THREAD_CPUTIME_ID): time spent descheduled on a busy machine is left out.
 * Printed per label: calls, entries, ns per call of each implementation, bytes per entry of
 * hmap, uthash and imap (the table: keys not counted, they are the trace's), and whether every
 * implementation created and found the same entries; last, per key kind, the maps above
 * (link.* apart) summed: their time over their calls, their bytes over their entries.
 * Implementations: hmap (src/base/hmap.c), uthash with HASH_JEN (its default), HASH_FNV,
 * HASH_SFH, HASH_OAT, HASH_BER, HASH_SAX and HASH_FUNCTION = kprof's hashes
 * (bench/hmap-vs-uthash-ut.c), and for the link.* streams link.c's id map (src/ingest/idmap.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hmap-vs-uthash.h"
#include "kprof/hmap.h"
#include "kprof/idmap.h"

/* CPU time of this thread: on a shared machine, time spent descheduled is not the map's */
uint64_t hv_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* src/base/hmap.c's hashes: Fibonacci for 8-byte keys, word-wise FNV-1a for strings */
uint32_t hv_kp_hash(const void *p, size_t len)
{
	const unsigned char *s = p;
	if (len == 8) {
		uint64_t x;
		memcpy(&x, s, 8);
		uint32_t h = (uint32_t)((x * 0x9E3779B97F4A7C15ull) >> 32);
		return h ? h : 1;
	}
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

static size_t hmap_bytes(const struct kp_hmap *m)
{
	return m->cap * (sizeof(uint32_t) + sizeof(struct kp_hmap_entry) +
			 (m->kind == HMAP_STR ? sizeof(size_t) : 0));
}

static uint64_t hv_hmap(const struct hv_stream *s, struct hv_result *r)
{
	struct kp_hmap *m = malloc(s->ninst * sizeof(*m));
	for (uint32_t k = 0; k < s->ninst; k++)
		hmap_init(&m[k], (enum kp_hmap_kind)s->kind);
	uint64_t t0 = hv_now_ns();
	uint64_t created = 0, hits = 0;
	for (size_t i = 0; i < s->nops; i++) {
		const struct hv_op *o = &s->ops[i];
		struct kp_hmap *h = &m[o->inst];
		struct kp_hmap_entry *e;
		int c;
		int64_t k;
		switch (o->op) {
		case 'P':
			if (s->kind == HMAP_STR) {
				e = hmap_put_str(h, o->key, o->len, &c);
			} else {
				memcpy(&k, o->key, 8);
				e = s->kind == HMAP_INT ? hmap_put_int(h, k, &c)
							: hmap_put_ptr(h, (const void *)k, &c);
			}
			if (c)
				e->val.i = (int64_t)created++;
			break;
		case 'G':
			if (s->kind == HMAP_STR) {
				e = hmap_get_str(h, o->key, o->len);
			} else {
				memcpy(&k, o->key, 8);
				e = s->kind == HMAP_INT ? hmap_get_int(h, k)
							: hmap_get_ptr(h, (const void *)k);
			}
			hits += e != NULL;
			break;
		case 'R':
			memcpy(&k, o->key, 8);
			hmap_reserve(h, (size_t)k);
			break;
		case 'F':
			r->bytes += hmap_bytes(h), r->entries += h->n;
			hmap_free(h);
			break;
		}
	}
	for (uint32_t k = 0; k < s->ninst; k++) {
		r->bytes += hmap_bytes(&m[k]), r->entries += m[k].n;
		hmap_free(&m[k]);
	}
	uint64_t t = hv_now_ns() - t0;
	free(m);
	r->created += created;
	r->hits += hits;
	return t;
}

/*
 * link.c's id map itself (src/ingest/idmap.c, on one thread): pages of values over the key
 * range where the ids are dense, else the values sorted by key with a bucket directory.
 * Its table's bytes (the keys are the trace's) and the keys it holds, read off its fields
 * (include/kprof/idmap.h).
 */
static size_t imap_bytes(const struct kp_idmap *m)
{
	if (m->page) {
		size_t npages = (size_t)((uint64_t)(m->hi - m->lo) >> IDMAP_PAGE_BITS) + 1, used = 0;
		for (size_t p = 0; p < npages; p++)
			used += m->page[p] != NULL;
		return npages * sizeof(*m->page) + used * IDMAP_PAGE * sizeof(*m->val);
	}
	if (!m->ord)
		return 0;
	return (m->n + 1) * sizeof(*m->ord) +
	       (m->dir ? (((size_t)(m->hi - m->lo) >> m->shift) + 2) * sizeof(*m->dir) : 0);
}

static size_t imap_entries(const struct kp_idmap *m)
{
	if (!m->page)
		return m->ord ? m->n : 0;
	size_t e = 0, npages = (size_t)((uint64_t)(m->hi - m->lo) >> IDMAP_PAGE_BITS) + 1;
	for (size_t p = 0; p < npages; p++)
		for (size_t j = 0; m->page[p] && j < IDMAP_PAGE; j++)
			e += m->page[p][j] >= 0;
	return e;
}

/*
 * The link streams on the imap: each instance's puts are the keys array the trace holds
 * (gathered before the clock starts), then the build and the gets are timed.
 */
static uint64_t hv_imap(const struct hv_stream *s, struct hv_result *r)
{
	int64_t **keys = calloc(s->ninst, sizeof(*keys));
	size_t *n = calloc(s->ninst, sizeof(*n)), *cap = calloc(s->ninst, sizeof(*cap));
	for (size_t i = 0; i < s->nops; i++) {
		const struct hv_op *o = &s->ops[i];
		if (o->op != 'P')
			continue;
		if (n[o->inst] == cap[o->inst]) {
			cap[o->inst] = cap[o->inst] ? 2 * cap[o->inst] : 1024;
			keys[o->inst] = realloc(keys[o->inst], cap[o->inst] * sizeof(**keys));
		}
		memcpy(&keys[o->inst][n[o->inst]++], o->key, 8);
	}
	struct kp_idmap *m = calloc(s->ninst, sizeof(*m));
	char *built = calloc(s->ninst, 1);
	uint64_t t0 = hv_now_ns();
	uint64_t hits = 0;
	for (size_t i = 0; i < s->nops; i++) {
		const struct hv_op *o = &s->ops[i];
		if (o->op == 'G') {
			if (!built[o->inst]) {
				idmap_build(&m[o->inst], keys[o->inst], sizeof(int64_t),
					    n[o->inst], 1);
				built[o->inst] = 1;
			}
			int64_t k;
			memcpy(&k, o->key, 8);
			hits += idmap_get(&m[o->inst], k) >= 0;
		}
	}
	uint64_t t = hv_now_ns() - t0;
	for (uint32_t k = 0; k < s->ninst; k++) {
		if (!built[k])
			idmap_build(&m[k], keys[k], sizeof(int64_t), n[k], 1);
		r->bytes += imap_bytes(&m[k]);
		/* distinct keys: the entries a map holds */
		r->entries += imap_entries(&m[k]);
		r->created += imap_entries(&m[k]);
		idmap_free(&m[k]), free(keys[k]);
	}
	r->hits += hits;
	free(m), free(built), free(keys), free(n), free(cap);
	return t;
}

struct rec {
	uint8_t op, kind;
	uint16_t pad;
	uint32_t map;
	uint32_t len;
};

struct inst {
	uint32_t stream, local;
};

static struct hv_stream *streams;
static int group; /* -g: one label per site over all recordings */
static size_t nstreams;

static struct hv_stream *stream_of(const char *label, int kind)
{
	for (size_t i = 0; i < nstreams; i++)
		if (!strcmp(streams[i].label, label))
			return &streams[i];
	streams = realloc(streams, (nstreams + 1) * sizeof(*streams));
	struct hv_stream *s = &streams[nstreams++];
	memset(s, 0, sizeof(*s));
	s->label = strdup(label);
	s->kind = kind;
	return s;
}

/* addr2line's name for an offset in @exe: "function file:line" */
static char *site_name(const char *exe, uint64_t off)
{
	char cmd[4096], fn[512] = "?", loc[1024] = "?";
	snprintf(cmd, sizeof(cmd), "addr2line -f -s -e '%s' 0x%llx", exe,
		 (unsigned long long)(off - 1));
	FILE *p = popen(cmd, "r");
	if (p) {
		if (fgets(fn, sizeof(fn), p) && fgets(loc, sizeof(loc), p)) {
			fn[strcspn(fn, "\n")] = 0;
			loc[strcspn(loc, "\n (")] = 0;
		}
		pclose(p);
	}
	char *s = malloc(strlen(fn) + strlen(loc) + 4);
	sprintf(s, "%s %s", fn, loc);
	return s;
}

/* Keys of every recording: blocks of 64 MB, never freed */
static char *keybuf;
static size_t keyused, keycap;

static char *key_alloc(size_t n)
{
	if (keyused + n > keycap) {
		keycap = n > (64u << 20) ? n : (64u << 20);
		keybuf = malloc(keycap);
		keyused = 0;
	}
	keyused += n;
	return keybuf + keyused - n;
}

static void load(const char *path, const char *exe)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(4);
	}
	const char *tag = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	struct inst *ids = NULL;
	size_t nids = 0;
	struct {
		uint64_t off;
		char *name;
	} *sites = NULL;
	size_t nsites = 0;
	struct rec r;
	while (fread(&r, sizeof(r), 1, f) == 1) {
		char *key = key_alloc(r.len + 1);
		if (r.len && fread(key, 1, r.len, f) != r.len)
			break;
		key[r.len] = 0;
		keyused = (keyused + 7) & ~(size_t)7; /* 8-byte keys stay aligned */
		if (r.map >= nids) {
			size_t nn = (r.map + 1) * 2;
			ids = realloc(ids, nn * sizeof(*ids));
			memset(ids + nids, 0xff, (nn - nids) * sizeof(*ids));
			nids = nn;
		}
		if (r.op == 'I' || r.op == 'N') {
			char label[2048];
			const char *name = key;
			if (r.op == 'I') {
				uint64_t off;
				memcpy(&off, key, 8);
				size_t j = 0;
				while (j < nsites && sites[j].off != off)
					j++;
				if (j == nsites) {
					sites = realloc(sites, (nsites + 1) * sizeof(*sites));
					sites[nsites].off = off;
					sites[nsites++].name = site_name(exe, off);
				}
				name = sites[j].name;
			}
			if (group)
				snprintf(label, sizeof(label), "%s", name);
			else
				snprintf(label, sizeof(label), "%s: %s", tag, name);
			struct hv_stream *s = stream_of(label, r.kind);
			ids[r.map].stream = (uint32_t)(s - streams);
			ids[r.map].local = s->ninst++;
			continue;
		}
		struct hv_stream *s = &streams[ids[r.map].stream];
		if (s->nops == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 1024;
			s->ops = realloc(s->ops, s->cap * sizeof(*s->ops));
		}
		s->ops[s->nops++] = (struct hv_op){ r.op, ids[r.map].local, r.len, key };
	}
	fclose(f);
	free(ids);
}

struct impl {
	const char *name;
	hv_replay_fn fn;
	int link_only;
};

static const struct impl impls[] = {
	{ "hmap", hv_hmap, 0 },	       { "ut-jen", hv_ut_jen, 0 }, { "ut-fnv", hv_ut_fnv, 0 },
	{ "ut-sfh", hv_ut_sfh, 0 },    { "ut-oat", hv_ut_oat, 0 }, { "ut-ber", hv_ut_ber, 0 },
	{ "ut-sax", hv_ut_sax, 0 },    { "ut-kp", hv_ut_kp, 0 },   { "imap", hv_imap, 1 },
};
#define NIMPL (sizeof(impls) / sizeof(impls[0]))

int main(int argc, char **argv)
{
	int runs = 5;
	size_t minops = 1000;
	const char *exe = NULL;
	int a = 1;
	for (; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "-n") && a + 1 < argc)
			runs = atoi(argv[++a]);
		else if (!strcmp(argv[a], "-m") && a + 1 < argc)
			minops = (size_t)atol(argv[++a]);
		else if (!strcmp(argv[a], "-g"))
			group = 1;
		else if (!strcmp(argv[a], "--exe") && a + 1 < argc)
			exe = argv[++a];
		else
			break;
	}
	if (!exe || a >= argc) {
		fprintf(stderr, "usage: hmap-vs-uthash [-n RUNS] [-m MINOPS] [-g] --exe KPROF REC...\n");
		return 2;
	}
	for (; a < argc; a++)
		load(argv[a], exe);
	/* ns per call for each implementation, then bytes per entry for these */
	static const int bcols[] = { 0, 1, 7, 8 };
#define NBCOL (sizeof(bcols) / sizeof(bcols[0]))
	printf("| map (hmap_init site or stream) | kind | calls | entries |");
	for (size_t k = 0; k < NIMPL; k++)
		printf(" %s ns/call |", impls[k].name);
	for (size_t k = 0; k < NBCOL; k++)
		printf(" %s B/entry |", impls[bcols[k]].name);
	printf(" same answers |\n|---|---|---:|---:|");
	for (size_t k = 0; k < NIMPL + NBCOL; k++)
		printf("---:|");
	printf("---|\n");
	static const char *kinds[] = { "ptr", "int", "str" };
	/* per key kind, the hmap maps only (not link.*): calls, time and bytes summed */
	double ksum[3][NIMPL] = { { 0 } }, kbytes[3][NIMPL] = { { 0 } };
	uint64_t kcalls[3] = { 0 }, kent[3][NIMPL] = { { 0 } };
	for (size_t i = 0; i < nstreams; i++) {
		const struct hv_stream *s = &streams[i];
		if (s->nops < minops)
			continue;
		int islink = strstr(s->label, "link.") != NULL;
		uint64_t best[NIMPL];
		struct hv_result res[NIMPL];
		for (size_t k = 0; k < NIMPL; k++)
			best[k] = UINT64_MAX;
		/* replays a run makes of each: the hmap replay's, to about 20 ms; a run's time is their mean */
		struct hv_result r0 = { 0 };
		uint64_t t1 = hv_hmap(s, &r0) + 1;
		int reps = t1 >= 20000000 ? 1 : (int)(20000000 / t1);
		for (int run = 0; run < runs; run++)
			for (size_t k = 0; k < NIMPL; k++) {
				if (impls[k].link_only && !islink)
					continue;
				uint64_t t = 0;
				for (int j = 0; j < reps; j++) {
					struct hv_result r = { 0 };
					t += impls[k].fn(s, &r);
					res[k] = r;
				}
				if (t / (uint64_t)reps < best[k])
					best[k] = t / (uint64_t)reps;
			}
		size_t calls = 0;
		for (size_t j = 0; j < s->nops; j++)
			calls += s->ops[j].op == 'P' || s->ops[j].op == 'G';
		printf("| %s | %s | %zu | %llu |", s->label, kinds[s->kind], calls,
		       (unsigned long long)res[0].entries);
		int same = 1;
		for (size_t k = 0; k < NIMPL; k++) {
			if (impls[k].link_only && !islink) {
				printf(" - |");
				continue;
			}
			printf(" %.1f |", (double)best[k] / (double)calls);
			same &= res[k].hits == res[0].hits && res[k].entries == res[0].entries;
			if (!islink) {
				ksum[s->kind][k] += (double)best[k];
				kbytes[s->kind][k] += (double)res[k].bytes;
				kent[s->kind][k] += res[k].entries;
			}
		}
		for (size_t k = 0; k < NBCOL; k++) {
			const struct hv_result *q = &res[bcols[k]];
			if (impls[bcols[k]].link_only && !islink)
				printf(" - |");
			else
				printf(" %.1f |", q->entries ? (double)q->bytes / (double)q->entries : 0.0);
		}
		if (!islink)
			kcalls[s->kind] += calls;
		printf(" %s |\n", same ? "yes" : "NO");
		fflush(stdout);
	}
	for (int kd = 0; kd < 3; kd++) {
		if (!kcalls[kd])
			continue;
		printf("| **all %s-keyed maps above** (link.* apart) | %s | %llu | %llu |", kinds[kd],
		       kinds[kd], (unsigned long long)kcalls[kd], (unsigned long long)kent[kd][0]);
		for (size_t k = 0; k < NIMPL; k++)
			if (impls[k].link_only)
				printf(" - |");
			else
				printf(" %.1f |", ksum[kd][k] / (double)kcalls[kd]);
		for (size_t k = 0; k < NBCOL; k++)
			if (impls[bcols[k]].link_only)
				printf(" - |");
			else
				printf(" %.1f |", kent[kd][bcols[k]] ? kbytes[kd][bcols[k]] /
									  (double)kent[kd][bcols[k]]
								    : 0.0);
		printf(" |\n");
	}
	return 0;
}
