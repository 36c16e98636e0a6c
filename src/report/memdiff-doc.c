/*
 * memdiff-doc.c — the memory comparison in the diff document (include/kprof/memdiff-doc.h).
 */
#include "kprof/memdiff-doc.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kprof/memory-doc.h"
#include "kprof/units.h"

/* "+184.88 MiB", "-2.00 KiB", "0 B" */
static const char *signed_bytes(char *buf, size_t cap, int64_t v)
{
	return units_signed(buf, cap, v, memory_bytes);
}

static const struct kp_mem_dev *either(const struct kp_memdiff_dev *d)
{
	return d->base ? d->base : d->new;
}

/* ---- json: every device, every op ---- */

/* clang-format off */
enum grew_col { GC_OP, GC_BASE, GC_NEW, GC_DELTA, GC_N };
/* clang-format on */

static const struct kp_col grew_json[GC_N] = {
	[GC_OP] = { NULL, "op", COL_MACHINE, 1 },
	[GC_BASE] = { NULL, "base_bytes", COL_MACHINE, 0 },
	[GC_NEW] = { NULL, "new_bytes", COL_MACHINE, 0 },
	[GC_DELTA] = { NULL, "delta_bytes", COL_MACHINE, 0 },
};

static void fact_bytes(struct kp_doc *doc, const char *jkey, int known, int64_t v)
{
	if (known)
		doc_fact_count(doc, NULL, jkey, v);
	else
		doc_fact_null(doc, NULL, jkey);
}

static void json_dev(struct kp_doc *doc, const struct kp_memdiff_dev *d)
{
	const struct kp_mem_dev *e = either(d);
	doc_object(doc, NULL);
	doc_fact_count(doc, NULL, "device", e->dev_id);
	const char *tn = memory_type_name(e->dev_type);
	if (tn)
		doc_fact_text(doc, NULL, "device_type", tn);
	else
		doc_fact_count(doc, NULL, "device_type", e->dev_type);
	fact_bytes(doc, "base_peak_allocated_bytes", d->base != NULL, d->base_alloc);
	fact_bytes(doc, "new_peak_allocated_bytes", d->new != NULL, d->new_alloc);
	doc_fact_count(doc, NULL, "delta_bytes", d->delta_alloc);
	doc_fact_num(doc, NULL, "ratio", d->ratio_alloc >= 0 ? d->ratio_alloc : NAN);
	fact_bytes(doc, "base_peak_reserved_bytes", d->base_res >= 0, d->base_res);
	fact_bytes(doc, "new_peak_reserved_bytes", d->new_res >= 0, d->new_res);
	int res = d->base_res >= 0 && d->new_res >= 0;
	fact_bytes(doc, "reserved_delta_bytes", res, d->delta_res);
	doc_fact_num(doc, NULL, "reserved_ratio", d->ratio_res >= 0 ? d->ratio_res : NAN);
	if (!d->live_known) {
		doc_fact_null(doc, NULL, "grew");
	} else {
		struct kp_table *tb = doc_table(doc, "grew", grew_json, GC_N);
		for (size_t i = 0; i < d->nops; i++) {
			const struct kp_memdiff_op *o = &d->ops[i];
			struct kp_cell *c = doc_row(tb);
			doc_cell_str(tb, &c[GC_OP], o->op, NULL);
			doc_cell_int(tb, &c[GC_BASE], o->base_bytes, NULL);
			doc_cell_int(tb, &c[GC_NEW], o->new_bytes, NULL);
			doc_cell_int(tb, &c[GC_DELTA], o->delta_bytes, NULL);
		}
	}
	doc_end(doc);
}

static void json_gate(struct kp_doc *doc, const struct kp_memdiff_doc_opts *o)
{
	doc_object(doc, "gate");
	doc_fact_num(doc, NULL, "fail_above_mem_pct", o->limit_pct >= 0 ? o->limit_pct : NAN);
	doc_fact_bool(doc, NULL, "tripped", o->nhits != 0);
	doc_array(doc, "crossed", 0);
	for (size_t i = 0; i < o->nhits; i++) {
		const struct kp_memgate_hit *h = &o->hits[i];
		doc_object(doc, NULL);
		doc_fact_text(doc, NULL, "device", h->dev->label);
		doc_fact_num(doc, NULL, "change_pct", h->change_pct);
		doc_fact_num(doc, NULL, "limit_pct", h->limit_pct);
		doc_end(doc);
	}
	doc_end(doc);
	doc_end(doc);
}

static void json_memory(struct kp_doc *doc, const struct kp_memdiff_doc_opts *o)
{
	doc_object(doc, "memory");
	doc_array(doc, "devices", 1);
	for (size_t i = 0; o->md && i < o->md->ndevs; i++)
		json_dev(doc, &o->md->devs[i]);
	doc_end(doc);
	doc_array(doc, "without_memory_events", 0);
	for (int s = 0; s < 2; s++)
		if (o->no_mem[s])
			doc_fact_text(doc, NULL, NULL, s ? "new" : "base");
	doc_end(doc);
	json_gate(doc, o);
	doc_end(doc);
}

/* ---- people: one line per device, one table ---- */

static void peak_text(char *buf, size_t cap, const char *what, int64_t b, int64_t n,
		      double ratio)
{
	char x[32], y[32], z[32];
	size_t k = snprintf(buf, cap, "%s %s -> %s: %s", what, memory_bytes(x, sizeof(x), b),
			    memory_bytes(y, sizeof(y), n), signed_bytes(z, sizeof(z), n - b));
	if (k < cap && ratio >= 0)
		snprintf(buf + k, cap - k, " (%+.1f%%, %.3fx)", (ratio - 1) * 100, ratio);
}

static void human_dev(struct kp_doc *doc, const struct kp_memdiff_dev *d)
{
	const char *dn = d->label;
	char a[256], r[256], x[32];
	if (!d->base || !d->new) {
		doc_fact_textf(doc, "memory", NULL, "%s: only in %s, peak allocated %s", dn,
			       d->base ? "base" : "new",
			       memory_bytes(x, sizeof(x), d->base ? d->base_alloc : d->new_alloc));
		return;
	}
	peak_text(a, sizeof(a), "peak allocated", d->base_alloc, d->new_alloc, d->ratio_alloc);
	if (d->base_res >= 0 && d->new_res >= 0)
		peak_text(r, sizeof(r), "; peak reserved", d->base_res, d->new_res, d->ratio_res);
	else
		snprintf(r, sizeof(r), "; peak reserved unknown (torch <= 1.9 layout)");
	doc_fact_textf(doc, "memory", NULL, "%s: %s%s", dn, a, r);
}

/* clang-format off */
enum mt_col { MT_BASE, MT_NEW, MT_DELTA, MT_RATIO, MT_DEVICE, MT_NAME, MT_N };
/* clang-format on */

static const struct kp_col mem_cols[MT_N] = {
	[MT_BASE] = { "Base", "base_bytes", COL_BOTH, 0 },
	[MT_NEW] = { "New", "new_bytes", COL_BOTH, 0 },
	[MT_DELTA] = { "Delta", "delta_bytes", COL_BOTH, 0 },
	[MT_RATIO] = { "Ratio", "ratio", COL_BOTH, 0 },
	[MT_DEVICE] = { "Device", "device", COL_BOTH, 1 },
	[MT_NAME] = { "Peak / live at peak by op", "name", COL_BOTH, 1 },
};

static void mem_row(struct kp_table *tb, const char *dn, const char *name, int64_t b, int64_t n,
		    int has_b, int has_n)
{
	char x[32];
	struct kp_cell *c = doc_row(tb);
	if (has_b)
		doc_cell_int(tb, &c[MT_BASE], b, memory_bytes(x, sizeof(x), b));
	if (has_n)
		doc_cell_int(tb, &c[MT_NEW], n, memory_bytes(x, sizeof(x), n));
	if (has_b && has_n) {
		doc_cell_int(tb, &c[MT_DELTA], n - b, signed_bytes(x, sizeof(x), n - b));
		if (b > 0) {
			snprintf(x, sizeof(x), "%.3fx", (double)n / (double)b);
			doc_cell_num(tb, &c[MT_RATIO], (double)n / (double)b, x);
		} else {
			doc_cell_num(tb, &c[MT_RATIO], -1, "N/A");
		}
		c[MT_DELTA].tone = c[MT_RATIO].tone = n > b ? TONE_BAD : n < b ? TONE_GOOD : TONE_NONE;
	}
	doc_cell_str(tb, &c[MT_DEVICE], dn, NULL);
	doc_cell_str(tb, &c[MT_NAME], name, NULL);
}

/* the ops that grew, @top of them (0: every op), then "(others: N ops)" */
static void op_rows(struct kp_doc *doc, struct kp_table *tb, const char *dn,
		    const struct kp_memdiff_dev *d, long top)
{
	size_t shown = 0;
	int64_t ob = 0, on = 0;
	for (size_t i = 0; i < d->nops; i++) {
		const struct kp_memdiff_op *o = &d->ops[i];
		if (top == 0 || (o->delta_bytes > 0 && shown < (size_t)top)) {
			mem_row(tb, dn, o->op, o->base_bytes, o->new_bytes, 1, 1);
			shown++;
		} else {
			ob += o->base_bytes;
			on += o->new_bytes;
		}
	}
	if (shown < d->nops) {
		char *name = arena_alloc(&doc->arena, 48);
		snprintf(name, 48, "(others: %zu %s)", d->nops - shown,
			 units_plural((int64_t)(d->nops - shown), "op", "ops"));
		mem_row(tb, dn, name, ob, on, 1, 1);
	}
}

static void mem_table(struct kp_doc *doc, const struct kp_memdiff *md, long top)
{
	struct kp_table *tb = doc_table(doc, NULL, mem_cols, MT_N);
	for (size_t i = 0; i < md->ndevs; i++) {
		const struct kp_memdiff_dev *d = &md->devs[i];
		const char *dcopy = arena_strdup(&doc->arena, d->label);
		mem_row(tb, dcopy, "(peak allocated)", d->base_alloc, d->new_alloc, d->base != NULL,
			d->new != NULL);
		if (d->base_res >= 0 || d->new_res >= 0)
			mem_row(tb, dcopy, "(peak reserved)", d->base_res, d->new_res,
				d->base_res >= 0, d->new_res >= 0);
		if (d->live_known)
			op_rows(doc, tb, dcopy, d, top);
	}
}

static void gate_fact(struct kp_doc *doc, const struct kp_memdiff_doc_opts *o)
{
	char buf[512];
	size_t n = snprintf(buf, sizeof(buf), "--fail-above-mem %g%% (peak allocated per device)",
			    o->limit_pct);
	if (!o->nhits)
		snprintf(buf + n, sizeof(buf) - n, ": passed");
	for (size_t i = 0; i < o->nhits && n < sizeof(buf); i++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? ", " : ": tripped by ",
			      o->hits[i].dev->label);
	doc_fact_text(doc, "gate", NULL, buf);
	doc_fact_tone(doc, o->nhits ? TONE_BAD : TONE_GOOD);
}

void memdiff_doc(struct kp_doc *doc, const struct kp_memdiff_doc_opts *o)
{
	for (int s = 0; s < 2; s++)
		if (o->no_mem[s])
			doc_fact_textf(doc, "memory", NULL,
				       "%s '%s': no [memory] events on a GPU: record with torch.profiler.profile(profile_memory=True)",
				       s ? "new" : "base", o->no_mem[s]);
	for (size_t i = 0; o->md && i < o->md->ndevs; i++)
		human_dev(doc, &o->md->devs[i]);
	if (o->limit_pct >= 0 && o->md)
		gate_fact(doc, o);
	/* the people's table first: csv prints a document's first table */
	if (o->md)
		mem_table(doc, o->md, o->top);
	json_memory(doc, o);
}
