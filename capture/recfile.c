/*
 * recfile.c — per-process record files: kprof-inject.so writes one at exit, the parent merges
 * them (binary, names written once each).
 */
#include "recfile.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctrace.h"

#define RECFILE_MAGIC "KPROFREC"
#define RECFILE_VERSION 2u
#define NO_NAME UINT32_MAX

/* All integers in host order: the file never leaves the machine that ran the capture. */
struct hdr {
	char magic[8];
	uint32_t version;
	uint32_t rec_size, ext_size;   /* sizeof(struct kp_rec), sizeof(struct kp_extcorr) */
	uint32_t hcall_size, pad2;     /* sizeof(struct kp_hcall) */
	uint32_t pid;
	int32_t cupti_version;
	uint32_t pad;
	uint64_t dropped_records;
	uint64_t nrecs, next;
	uint64_t nnames, names_bytes;  /* NUL-terminated names, back to back */
	uint64_t nhcalls;              /* then name and domain indices, then the calls */
};

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(const char *const *)a, y = (uintptr_t)*(const char *const *)b;
	return x < y ? -1 : x > y;
}

/* Index of @name in the sorted, unique @names. */
static uint32_t name_index(const char **names, size_t n, const char *name)
{
	if (!name)
		return NO_NAME;
	const char **p = bsearch(&name, names, n, sizeof(*names), cmp_ptr);
	return p ? (uint32_t)(p - names) : NO_NAME;
}

int recfile_write(const struct kp_ctrace *t, uint32_t pid, FILE *out)
{
	/* names are interned in @t, so one pointer is one string */
	const char **names = malloc((t->nrecs + 2 * t->nhcalls + 1) * sizeof(*names));
	if (!names) {
		errno = ENOMEM;
		return -1;
	}
	size_t nn = 0;
	for (size_t i = 0; i < t->nrecs; i++)
		if (t->recs[i].name)
			names[nn++] = t->recs[i].name;
	for (size_t i = 0; i < t->nhcalls; i++) {
		if (t->hcalls[i].name)
			names[nn++] = t->hcalls[i].name;
		if (t->hcalls[i].domain)
			names[nn++] = t->hcalls[i].domain;
	}
	qsort(names, nn, sizeof(*names), cmp_ptr);
	size_t u = 0;
	uint64_t bytes = 0;
	for (size_t i = 0; i < nn; i++)
		if (!u || names[u - 1] != names[i]) {
			names[u++] = names[i];
			bytes += strlen(names[i]) + 1;
		}

	struct hdr h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, RECFILE_MAGIC, 8);
	h.version = RECFILE_VERSION;
	h.rec_size = sizeof(struct kp_rec);
	h.ext_size = sizeof(struct kp_extcorr);
	h.hcall_size = sizeof(struct kp_hcall);
	h.nhcalls = t->nhcalls;
	h.pid = pid;
	h.cupti_version = t->cupti_version;
	h.dropped_records = t->dropped_records;
	h.nrecs = t->nrecs;
	h.next = t->next;
	h.nnames = u;
	h.names_bytes = bytes;
	fwrite(&h, sizeof(h), 1, out);
	for (size_t i = 0; i < u; i++)
		fwrite(names[i], 1, strlen(names[i]) + 1, out);
	for (size_t i = 0; i < t->nrecs; i++) {
		uint32_t idx = name_index(names, u, t->recs[i].name);
		fwrite(&idx, sizeof(idx), 1, out);
	}
	for (size_t i = 0; i < t->nrecs; i++) {
		struct kp_rec r;
		memset(&r, 0, sizeof(r));
		r = t->recs[i];
		r.name = NULL; /* a pointer into this process; the index above replaces it */
		fwrite(&r, sizeof(r), 1, out);
	}
	if (t->next)
		fwrite(t->ext, sizeof(*t->ext), t->next, out);
	for (size_t i = 0; i < t->nhcalls; i++) {
		uint32_t idx[2] = { name_index(names, u, t->hcalls[i].name),
				    name_index(names, u, t->hcalls[i].domain) };
		fwrite(idx, sizeof(idx), 1, out);
	}
	for (size_t i = 0; i < t->nhcalls; i++) {
		struct kp_hcall c = t->hcalls[i];
		c.name = c.domain = NULL;
		fwrite(&c, sizeof(c), 1, out);
	}
	free(names);
	return ferror(out) ? -1 : 0;
}

/* fread exactly @n bytes; NULL or a reason */
static const char *read_all(FILE *f, void *buf, size_t n)
{
	if (n && fread(buf, 1, n, f) != n)
		return ferror(f) ? strerror(errno) : "truncated kprof record file";
	return NULL;
}

int recfile_read(struct kp_ctrace *t, const char *path, uint32_t corr_base, uint64_t ext_base,
		 struct kp_recfile_info *info, char *why, size_t whylen)
{
	uint32_t *hidx = NULL;
	struct kp_hcall *hc = NULL;
	const char *err = NULL;
	char *blob = NULL;
	const char **names = NULL;
	uint32_t *idx = NULL;
	struct kp_rec *recs = NULL;
	struct kp_extcorr *ext = NULL;
	struct hdr h;
	memset(info, 0, sizeof(*info));
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(why, whylen, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	if ((err = read_all(f, &h, sizeof(h))))
		goto out;
	if (memcmp(h.magic, RECFILE_MAGIC, 8) || h.version != RECFILE_VERSION) {
		err = "not a kprof record file of this version";
		goto out;
	}
	if (h.rec_size != sizeof(struct kp_rec) || h.ext_size != sizeof(struct kp_extcorr) ||
	    h.hcall_size != sizeof(struct kp_hcall)) {
		err = "written by another kprof build (record sizes differ)";
		goto out;
	}
	/* a corrupt count must fail the read, not the allocation */
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, (long)sizeof(h), SEEK_SET);
	uint64_t need = sizeof(h) + h.names_bytes + h.nrecs * (sizeof(uint32_t) + sizeof(*recs)) +
			h.next * sizeof(*ext) + h.nhcalls * (2 * sizeof(uint32_t) + sizeof(*hc));
	if (size < 0 || h.nnames > h.names_bytes || h.nrecs > (uint64_t)size ||
	    h.next > (uint64_t)size || h.names_bytes > (uint64_t)size ||
	    h.nhcalls > (uint64_t)size || need != (uint64_t)size) {
		err = "truncated kprof record file";
		goto out;
	}
	blob = malloc(h.names_bytes + 1);
	names = malloc((h.nnames + 1) * sizeof(*names));
	idx = malloc((h.nrecs + 1) * sizeof(*idx));
	recs = malloc((h.nrecs + 1) * sizeof(*recs));
	ext = malloc((h.next + 1) * sizeof(*ext));
	hidx = malloc((2 * h.nhcalls + 1) * sizeof(*hidx));
	hc = malloc((h.nhcalls + 1) * sizeof(*hc));
	if (!blob || !names || !idx || !recs || !ext || !hidx || !hc) {
		err = "out of memory";
		goto out;
	}
	if ((err = read_all(f, blob, h.names_bytes)) || (err = read_all(f, idx, h.nrecs * sizeof(*idx))) ||
	    (err = read_all(f, recs, h.nrecs * sizeof(*recs))) ||
	    (err = read_all(f, ext, h.next * sizeof(*ext))) ||
	    (err = read_all(f, hidx, 2 * h.nhcalls * sizeof(*hidx))) ||
	    (err = read_all(f, hc, h.nhcalls * sizeof(*hc))))
		goto out;
	blob[h.names_bytes] = '\0';
	size_t off = 0;
	for (uint64_t i = 0; i < h.nnames; i++) {
		if (off >= h.names_bytes) {
			err = "corrupt name table in kprof record file";
			goto out;
		}
		size_t len = strlen(blob + off);
		names[i] = ctrace_intern(t, blob + off, len);
		off += len + 1;
	}
	for (uint64_t i = 0; i < h.nrecs; i++)
		if ((idx[i] != NO_NAME && idx[i] >= h.nnames) || recs[i].kind < REC_KERNEL ||
		    recs[i].kind > REC_OVERHEAD) {
			err = "corrupt record in kprof record file";
			goto out;
		}
	for (uint64_t i = 0; i < h.nhcalls; i++)
		if ((hidx[2 * i] != NO_NAME && hidx[2 * i] >= h.nnames) ||
		    (hidx[2 * i + 1] != NO_NAME && hidx[2 * i + 1] >= h.nnames) ||
		    hc[i].kind < HC_GEMM || hc[i].kind > HC_CONV) {
			err = "corrupt host call in kprof record file";
			goto out;
		}
	/* validated: now append, so that a bad file adds nothing */
	for (uint64_t i = 0; i < h.nrecs; i++) {
		struct kp_rec *r = &recs[i];
		r->name = idx[i] == NO_NAME ? "" : names[idx[i]];
		if (r->corr > info->max_corr)
			info->max_corr = r->corr;
		if (r->corr)
			r->corr += corr_base;
		if (r->gext)
			r->gext += ext_base;
		if (ctrace_add_rec(t, r) < 0) {
			err = "out of memory";
			goto out;
		}
	}
	for (uint64_t i = 0; i < h.next; i++) {
		if (ext[i].corr > info->max_corr)
			info->max_corr = ext[i].corr;
		if (ext[i].ext > info->max_ext)
			info->max_ext = ext[i].ext;
		if (ctrace_add_ext(t, ext[i].corr ? ext[i].corr + corr_base : 0,
				   ext[i].ext ? ext[i].ext + ext_base : 0) < 0) {
			err = "out of memory";
			goto out;
		}
	}
	for (uint64_t i = 0; i < h.nhcalls; i++) {
		struct kp_hcall *c = &hc[i];
		c->name = hidx[2 * i] == NO_NAME ? NULL : names[hidx[2 * i]];
		c->domain = hidx[2 * i + 1] == NO_NAME ? NULL : names[hidx[2 * i + 1]];
		if (c->ext > info->max_ext)
			info->max_ext = c->ext;
		if (c->ext)
			c->ext += ext_base;
		if (ctrace_add_hcall(t, c) < 0) {
			err = "out of memory";
			goto out;
		}
	}
	pthread_mutex_lock(&t->lock);
	t->dropped_records += h.dropped_records;
	if (!t->cupti_version)
		t->cupti_version = h.cupti_version;
	pthread_mutex_unlock(&t->lock);
	info->pid = h.pid;
	info->nrecs = h.nrecs;
	info->next = h.next;
	info->nhcalls = h.nhcalls;
out:
	if (err)
		snprintf(why, whylen, "'%s': %s", path, err);
	free(blob);
	free(names);
	free(idx);
	free(recs);
	free(ext);
	free(hidx);
	free(hc);
	fclose(f);
	return err ? -1 : 0;
}

struct entry {
	unsigned long pid;
	char *name;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int recfile_merge_dir(struct kp_ctrace *t, const char *dir, char *why, size_t whylen)
{
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(why, whylen, "cannot read '%s': %s", dir, strerror(errno));
		return -1;
	}
	struct entry *v = NULL;
	size_t n = 0, cap = 0;
	char path[4096];
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		const char *dot = strrchr(de->d_name, '.');
		if (!dot || strcmp(dot, ".kprec")) {
			/* a ".tmp" left by a process killed while writing */
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			unlink(path);
			continue;
		}
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			struct entry *p = realloc(v, nc * sizeof(*v));
			if (!p)
				break;
			v = p, cap = nc;
		}
		v[n].pid = strtoul(de->d_name, NULL, 10);
		if (!(v[n].name = strdup(de->d_name)))
			break;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_entry);
	uint32_t base = 0;
	uint64_t ext_base = 0;
	int merged = 0;
	for (size_t i = 0; i < n; i++) {
		struct kp_recfile_info info;
		char r[512];
		snprintf(path, sizeof(path), "%s/%s", dir, v[i].name);
		if (recfile_read(t, path, base, ext_base, &info, r, sizeof(r)) < 0) {
			fprintf(stderr, "kprof: warning: skipped %s\n", r);
		} else {
			base += info.max_corr;
			ext_base += info.max_ext;
			merged++;
		}
		unlink(path);
		free(v[i].name);
	}
	free(v);
	return merged;
}
