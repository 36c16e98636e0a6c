/*
 * recfile.c — per-process record files: kprof-inject.so writes one at exit, the parent merges
 * them (binary, names written once each).
 */
#include "record/recfile.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/ctrace.h"

#define RECFILE_MAGIC "KPROFREC"
/* 4: REC_MEMORY and struct kp_rec's addr, mem_op, mem_kind (--memory) */
#define RECFILE_VERSION 4u
#define NO_NAME UINT32_MAX

/* All integers in host order: the file never leaves the machine that ran the capture. */
struct hdr {
	char magic[8];
	uint32_t version;
	uint32_t rec_size, ext_size; /* sizeof(struct kp_rec), sizeof(struct kp_extcorr) */
	uint32_t hcall_size, pad2;   /* sizeof(struct kp_hcall) */
	uint32_t pid;
	int32_t cupti_version;
	uint32_t pad;
	uint64_t dropped_records;
	uint64_t nrecs, next;
	uint64_t nnames, names_bytes;  /* NUL-terminated names, back to back */
	uint64_t nhcalls;              /* then name and domain indices, then the calls */
	uint32_t kmet_size, mwin_size; /* sizeof(struct kp_kmet), sizeof(struct kp_mwin) */
	uint64_t nkmet, nmwin;         /* --metrics: range values, then their windows */
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

/*
 * The names of @t's records and host calls, sorted and unique (*@n of them, *@bytes with their
 * NULs); malloc'ed, NULL with errno = ENOMEM.
 */
static const char **unique_names(const struct kp_ctrace *t, size_t *n, uint64_t *bytes)
{
	/* names are interned in @t, so one pointer is one string */
	const char **names = malloc((t->nrecs + 2 * t->nhcalls + 1) * sizeof(*names));
	if (!names) {
		errno = ENOMEM;
		return NULL;
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
	*bytes = 0;
	for (size_t i = 0; i < nn; i++)
		if (!u || names[u - 1] != names[i]) {
			names[u++] = names[i];
			*bytes += strlen(names[i]) + 1;
		}
	*n = u;
	return names;
}

/* The header of @t's file: the layout's sizes and every section's count */
static void fill_hdr(struct hdr *h, const struct kp_ctrace *t, uint32_t pid, size_t nnames,
		     uint64_t bytes)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, RECFILE_MAGIC, 8);
	h->version = RECFILE_VERSION;
	h->rec_size = sizeof(struct kp_rec);
	h->ext_size = sizeof(struct kp_extcorr);
	h->hcall_size = sizeof(struct kp_hcall);
	h->nhcalls = t->nhcalls;
	h->kmet_size = sizeof(struct kp_kmet);
	h->mwin_size = sizeof(struct kp_mwin);
	h->nkmet = t->nkmet;
	h->nmwin = t->nmwin;
	h->pid = pid;
	h->cupti_version = t->cupti_version;
	h->dropped_records = t->dropped_records;
	h->nrecs = t->nrecs;
	h->next = t->next;
	h->nnames = nnames;
	h->names_bytes = bytes;
}

/* The records' name indices, the records without their name pointers, the External ids */
static void write_recs(const struct kp_ctrace *t, const char **names, size_t u, FILE *out)
{
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
}

/* The host calls' name and domain indices, then the calls without their pointers */
static void write_hcalls(const struct kp_ctrace *t, const char **names, size_t u, FILE *out)
{
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
}

int recfile_write(const struct kp_ctrace *t, uint32_t pid, FILE *out)
{
	size_t u;
	uint64_t bytes;
	const char **names = unique_names(t, &u, &bytes);
	if (!names)
		return -1;
	struct hdr h;
	fill_hdr(&h, t, pid, u, bytes);
	fwrite(&h, sizeof(h), 1, out);
	for (size_t i = 0; i < u; i++)
		fwrite(names[i], 1, strlen(names[i]) + 1, out);
	write_recs(t, names, u, out);
	write_hcalls(t, names, u, out);
	if (t->nkmet)
		fwrite(t->kmet, sizeof(*t->kmet), t->nkmet, out);
	if (t->nmwin)
		fwrite(t->mwin, sizeof(*t->mwin), t->nmwin, out);
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

/* One record file in memory: its header and sections, names still as indices. */
struct rfile {
	struct hdr h;
	char *blob;         /* names_bytes of NUL-terminated names, and a NUL */
	const char **names; /* interned, nnames */
	uint32_t *idx;      /* per record: its name's index or NO_NAME */
	struct kp_rec *recs;
	struct kp_extcorr *ext;
	uint32_t *hidx; /* per host call: name and domain indices */
	struct kp_hcall *hc;
	struct kp_kmet *km; /* --metrics: range values */
	struct kp_mwin *mw; /* and their windows */
};

/* The header, checked against this build and the file's size; NULL or a reason. */
static const char *read_header(FILE *f, struct hdr *h)
{
	const char *err = read_all(f, h, sizeof(*h));
	if (err)
		return err;
	if (memcmp(h->magic, RECFILE_MAGIC, 8) || h->version != RECFILE_VERSION)
		return "not a kprof record file of this version";
	if (h->rec_size != sizeof(struct kp_rec) || h->ext_size != sizeof(struct kp_extcorr) ||
	    h->hcall_size != sizeof(struct kp_hcall) || h->kmet_size != sizeof(struct kp_kmet) ||
	    h->mwin_size != sizeof(struct kp_mwin))
		return "written by another kprof build (record sizes differ)";
	/* a corrupt count must fail the read, not the allocation */
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, (long)sizeof(*h), SEEK_SET);
	uint64_t need = sizeof(*h) + h->names_bytes +
			h->nrecs * (sizeof(uint32_t) + sizeof(struct kp_rec)) +
			h->next * sizeof(struct kp_extcorr) +
			h->nhcalls * (2 * sizeof(uint32_t) + sizeof(struct kp_hcall)) +
			h->nkmet * sizeof(struct kp_kmet) + h->nmwin * sizeof(struct kp_mwin);
	if (size < 0 || h->nnames > h->names_bytes || h->nrecs > (uint64_t)size ||
	    h->next > (uint64_t)size || h->names_bytes > (uint64_t)size ||
	    h->nhcalls > (uint64_t)size || h->nkmet > (uint64_t)size || h->nmwin > (uint64_t)size ||
	    need != (uint64_t)size)
		return "truncated kprof record file";
	return NULL;
}

/* The sections after the header; NULL or a reason. */
static const char *read_body(FILE *f, struct rfile *rf)
{
	const struct hdr *h = &rf->h;
	rf->blob = malloc(h->names_bytes + 1);
	rf->names = malloc((h->nnames + 1) * sizeof(*rf->names));
	rf->idx = malloc((h->nrecs + 1) * sizeof(*rf->idx));
	rf->recs = malloc((h->nrecs + 1) * sizeof(*rf->recs));
	rf->ext = malloc((h->next + 1) * sizeof(*rf->ext));
	rf->hidx = malloc((2 * h->nhcalls + 1) * sizeof(*rf->hidx));
	rf->hc = malloc((h->nhcalls + 1) * sizeof(*rf->hc));
	rf->km = malloc((h->nkmet + 1) * sizeof(*rf->km));
	rf->mw = malloc((h->nmwin + 1) * sizeof(*rf->mw));
	if (!rf->blob || !rf->names || !rf->idx || !rf->recs || !rf->ext || !rf->hidx || !rf->hc ||
	    !rf->km || !rf->mw)
		return "out of memory";
	const char *err;
	if ((err = read_all(f, rf->blob, h->names_bytes)) ||
	    (err = read_all(f, rf->idx, h->nrecs * sizeof(*rf->idx))) ||
	    (err = read_all(f, rf->recs, h->nrecs * sizeof(*rf->recs))) ||
	    (err = read_all(f, rf->ext, h->next * sizeof(*rf->ext))) ||
	    (err = read_all(f, rf->hidx, 2 * h->nhcalls * sizeof(*rf->hidx))) ||
	    (err = read_all(f, rf->hc, h->nhcalls * sizeof(*rf->hc))) ||
	    (err = read_all(f, rf->km, h->nkmet * sizeof(*rf->km))) ||
	    (err = read_all(f, rf->mw, h->nmwin * sizeof(*rf->mw))))
		return err;
	rf->blob[h->names_bytes] = '\0';
	return NULL;
}

/* Names interned into @t, every index and kind checked; NULL or a reason. */
static const char *check_body(struct kp_ctrace *t, struct rfile *rf)
{
	const struct hdr *h = &rf->h;
	size_t off = 0;
	for (uint64_t i = 0; i < h->nnames; i++) {
		if (off >= h->names_bytes)
			return "corrupt name table in kprof record file";
		size_t len = strlen(rf->blob + off);
		rf->names[i] = ctrace_intern(t, rf->blob + off, len);
		off += len + 1;
	}
	for (uint64_t i = 0; i < h->nrecs; i++)
		if ((rf->idx[i] != NO_NAME && rf->idx[i] >= h->nnames) ||
		    rf->recs[i].kind < REC_KERNEL || rf->recs[i].kind > REC_MEMORY)
			return "corrupt record in kprof record file";
	for (uint64_t i = 0; i < h->nhcalls; i++)
		if ((rf->hidx[2 * i] != NO_NAME && rf->hidx[2 * i] >= h->nnames) ||
		    (rf->hidx[2 * i + 1] != NO_NAME && rf->hidx[2 * i + 1] >= h->nnames) ||
		    rf->hc[i].kind < HC_GEMM || rf->hc[i].kind > HC_DEVALLOC)
			return "corrupt host call in kprof record file";
	for (uint64_t i = 0; i < h->nmwin; i++)
		if (rf->mw[i].first > h->nkmet || rf->mw[i].n > h->nkmet - rf->mw[i].first)
			return "corrupt metrics window in kprof record file";
	return NULL;
}

/* Room in @t for the file's metric values and windows; NULL or a reason */
static const char *grow_metrics(struct kp_ctrace *t, const struct hdr *h)
{
	if (!h->nkmet && !h->nmwin)
		return NULL;
	struct kp_kmet *nk = realloc(t->kmet, (t->nkmet + h->nkmet + 1) * sizeof(*nk));
	if (nk)
		t->kmet = nk;
	struct kp_mwin *nw = nk ? realloc(t->mwin, (t->nmwin + h->nmwin + 1) * sizeof(*nw)) : NULL;
	if (!nw)
		return "out of memory";
	t->mwin = nw;
	return NULL;
}

/* The records, named and with their ids shifted by the bases; NULL or a reason */
static const char *append_recs(struct kp_ctrace *t, struct rfile *rf, uint32_t corr_base,
			       uint64_t ext_base, struct kp_recfile_info *info)
{
	for (uint64_t i = 0; i < rf->h.nrecs; i++) {
		struct kp_rec *r = &rf->recs[i];
		r->name = rf->idx[i] == NO_NAME ? "" : rf->names[rf->idx[i]];
		if (r->corr > info->max_corr)
			info->max_corr = r->corr;
		if (r->corr)
			r->corr += corr_base;
		if (r->gext)
			r->gext += ext_base;
		if (ctrace_add_rec(t, r) < 0)
			return "out of memory";
	}
	return NULL;
}

/* The correlation -> External id pairs, both shifted by the bases; NULL or a reason */
static const char *append_ext(struct kp_ctrace *t, const struct rfile *rf, uint32_t corr_base,
			      uint64_t ext_base, struct kp_recfile_info *info)
{
	for (uint64_t i = 0; i < rf->h.next; i++) {
		const struct kp_extcorr *e = &rf->ext[i];
		if (e->corr > info->max_corr)
			info->max_corr = e->corr;
		if (e->ext > info->max_ext)
			info->max_ext = e->ext;
		if (ctrace_add_ext(t, e->corr ? e->corr + corr_base : 0,
				   e->ext ? e->ext + ext_base : 0) < 0)
			return "out of memory";
	}
	return NULL;
}

/* The host calls, named and with their External ids shifted; NULL or a reason */
static const char *append_hcalls(struct kp_ctrace *t, struct rfile *rf, uint64_t ext_base,
				 struct kp_recfile_info *info)
{
	for (uint64_t i = 0; i < rf->h.nhcalls; i++) {
		struct kp_hcall *c = &rf->hc[i];
		c->name = rf->hidx[2 * i] == NO_NAME ? NULL : rf->names[rf->hidx[2 * i]];
		c->domain = rf->hidx[2 * i + 1] == NO_NAME ? NULL : rf->names[rf->hidx[2 * i + 1]];
		if (c->ext > info->max_ext)
			info->max_ext = c->ext;
		if (c->ext)
			c->ext += ext_base;
		if (ctrace_add_hcall(t, c) < 0)
			return "out of memory";
	}
	return NULL;
}

/*
 * --metrics: the values after @t's (from @kmet_base), the windows pointing at them and joining
 * this file's records only (from @rec_lo)
 */
static void append_metrics(struct kp_ctrace *t, const struct rfile *rf, size_t kmet_base,
			   size_t rec_lo)
{
	const struct hdr *h = &rf->h;
	if (h->nkmet)
		memcpy(t->kmet + t->nkmet, rf->km, h->nkmet * sizeof(*rf->km));
	t->nkmet += h->nkmet;
	for (uint64_t i = 0; i < h->nmwin; i++) {
		struct kp_mwin *w = &t->mwin[t->nmwin++];
		*w = rf->mw[i];
		w->label[sizeof(w->label) - 1] = '\0';
		w->first += kmet_base;
		w->rec_lo = rec_lo, w->rec_hi = t->nrecs;
	}
}

/* The file's dropped records and CUPTI version into @t, its counts into @info */
static void add_header(struct kp_ctrace *t, const struct hdr *h, struct kp_recfile_info *info)
{
	pthread_mutex_lock(&t->lock);
	t->dropped_records += h->dropped_records;
	if (!t->cupti_version)
		t->cupti_version = h->cupti_version;
	pthread_mutex_unlock(&t->lock);
	info->pid = h->pid;
	info->nrecs = h->nrecs;
	info->next = h->next;
	info->nhcalls = h->nhcalls;
	info->nkmet = h->nkmet;
	info->nmwin = h->nmwin;
}

/* The validated file appended to @t, ids shifted by the bases; NULL or a reason. */
static const char *append(struct kp_ctrace *t, struct rfile *rf, uint32_t corr_base,
			  uint64_t ext_base, struct kp_recfile_info *info)
{
	size_t rec_lo = t->nrecs, kmet_base = t->nkmet;
	const char *why;
	if ((why = grow_metrics(t, &rf->h)) ||
	    (why = append_recs(t, rf, corr_base, ext_base, info)) ||
	    (why = append_ext(t, rf, corr_base, ext_base, info)) ||
	    (why = append_hcalls(t, rf, ext_base, info)))
		return why;
	append_metrics(t, rf, kmet_base, rec_lo);
	add_header(t, &rf->h, info);
	return NULL;
}

int recfile_read(struct kp_ctrace *t, const char *path, uint32_t corr_base, uint64_t ext_base,
		 struct kp_recfile_info *info, char *why, size_t whylen)
{
	struct rfile rf = { 0 };
	memset(info, 0, sizeof(*info));
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(why, whylen, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	/* validated before anything is appended, so that a bad file adds nothing */
	const char *err = read_header(f, &rf.h);
	if (!err)
		err = read_body(f, &rf);
	if (!err)
		err = check_body(t, &rf);
	if (!err)
		err = append(t, &rf, corr_base, ext_base, info);
	if (err)
		snprintf(why, whylen, "'%s': %s", path, err);
	free(rf.blob);
	free(rf.names);
	free(rf.idx);
	free(rf.recs);
	free(rf.ext);
	free(rf.hidx);
	free(rf.hc);
	free(rf.km);
	free(rf.mw);
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

int recfile_merge_dir(struct kp_ctrace *t, const char *dir, FILE *warn, char *why, size_t whylen)
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
			if (warn)
				fprintf(warn, "kprof: warning: skipped %s\n", r);
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
