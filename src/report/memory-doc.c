/*
 * memory-doc.c — the memory analysis in the document (include/kprof/memory-doc.h).
 */
#include "kprof/memory-doc.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kprof/units.h"

const char *memory_type_name(int type)
{
	return type == 0 ? "cpu" : type == 1 ? "cuda" : type == 6 ? "hip" : NULL;
}

const char *memory_dev_name(const struct kp_mem_dev *d, char *buf, size_t cap)
{
	const char *tn = memory_type_name(d->dev_type);
	if (d->dev_type == 0)
		snprintf(buf, cap, "cpu");
	else if (tn)
		snprintf(buf, cap, "%s:%d", tn, d->dev_id);
	else
		snprintf(buf, cap, "device type %d:%d", d->dev_type, d->dev_id);
	return buf;
}

const char *memory_dev_label(const struct kp_memrep *m, const struct kp_mem_dev *d, char *buf,
			     size_t cap)
{
	memory_dev_name(d, buf, cap);
	int several = 0;
	for (size_t i = 0; i < m->ndevs && !several && d->pid >= 0; i++)
		several = m->devs[i].pid >= 0 && m->devs[i].pid != d->pid;
	if (several) {
		size_t n = strlen(buf);
		snprintf(buf + n, cap - n, " (pid %" PRId64 ")", d->pid);
	}
	return buf;
}

const char *memory_bytes(char *buf, size_t cap, int64_t bytes)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	int64_t a = bytes < 0 ? -bytes : bytes;
	if (a < 1024) {
		snprintf(buf, cap, "%" PRId64 " B", bytes);
		return buf;
	}
	double v = (double)bytes / 1024;
	int u = 0;
	while (u < 3 && (v >= 1024 || v <= -1024)) {
		v /= 1024;
		u++;
	}
	snprintf(buf, cap, "%.2f %s", v, unit[u]);
	return buf;
}

static double pct(int64_t x, int64_t of)
{
	return of > 0 ? 100.0 * (double)x / (double)of : 0;
}

/* ---- json: every row, exact ---- */

/* clang-format off */
enum live_col { LV_OP, LV_MODULE, LV_BYTES, LV_COUNT, LV_N };
enum op_col { OC_OP, OC_MODULE, OC_ABYTES, OC_ACOUNT, OC_FBYTES, OC_FCOUNT, OC_KBYTES, OC_KCOUNT,
	      OC_N };
/* clang-format on */

static const struct kp_col live_json[LV_N] = {
	[LV_OP] = { NULL, "op", COL_MACHINE, 1 },
	[LV_MODULE] = { NULL, "module", COL_MACHINE, 1 },
	[LV_BYTES] = { NULL, "bytes", COL_MACHINE, 0 },
	[LV_COUNT] = { NULL, "count", COL_MACHINE, 0 },
};

static const struct kp_col op_json[OC_N] = {
	[OC_OP] = { NULL, "op", COL_MACHINE, 1 },
	[OC_MODULE] = { NULL, "module", COL_MACHINE, 1 },
	[OC_ABYTES] = { NULL, "allocated_bytes", COL_MACHINE, 0 },
	[OC_ACOUNT] = { NULL, "allocs", COL_MACHINE, 0 },
	[OC_FBYTES] = { NULL, "freed_bytes", COL_MACHINE, 0 },
	[OC_FCOUNT] = { NULL, "frees", COL_MACHINE, 0 },
	[OC_KBYTES] = { NULL, "never_freed_bytes", COL_MACHINE, 0 },
	[OC_KCOUNT] = { NULL, "never_freed", COL_MACHINE, 0 },
};

/* an int cell, null when < 0 (unknown) */
static void cell_known(struct kp_table *tb, struct kp_cell *c, int64_t v)
{
	if (v >= 0)
		doc_cell_int(tb, c, v, NULL);
}

static void fact_known(struct kp_doc *doc, const char *jkey, int64_t v)
{
	if (v >= 0)
		doc_fact_count(doc, NULL, jkey, v);
	else
		doc_fact_null(doc, NULL, jkey);
}

static void fact_str(struct kp_doc *doc, const char *jkey, const char *s)
{
	if (s)
		doc_fact_text(doc, NULL, jkey, s);
	else
		doc_fact_null(doc, NULL, jkey);
}

static void json_rows_of(struct kp_doc *doc, const struct kp_mem_dev *d)
{
	struct kp_table *tb;
	if (d->bytes_only) {
		doc_fact_null(doc, NULL, "live_at_peak");
	} else {
		tb = doc_table(doc, "live_at_peak", live_json, LV_N);
		for (size_t i = 0; i < d->nlive; i++) {
			const struct kp_mem_row *r = &d->live[i];
			struct kp_cell *c = doc_row(tb);
			doc_cell_str(tb, &c[LV_OP], r->op, NULL);
			doc_cell_str(tb, &c[LV_MODULE], r->module, NULL);
			doc_cell_int(tb, &c[LV_BYTES], r->bytes, NULL);
			doc_cell_int(tb, &c[LV_COUNT], r->count, NULL);
		}
	}
	tb = doc_table(doc, "ops", op_json, OC_N);
	for (size_t i = 0; i < d->nops; i++) {
		const struct kp_mem_row *r = &d->ops[i];
		struct kp_cell *c = doc_row(tb);
		doc_cell_str(tb, &c[OC_OP], r->op, NULL);
		doc_cell_str(tb, &c[OC_MODULE], r->module, NULL);
		doc_cell_int(tb, &c[OC_ABYTES], r->alloc_bytes, NULL);
		doc_cell_int(tb, &c[OC_ACOUNT], r->alloc_count, NULL);
		cell_known(tb, &c[OC_FBYTES], r->freed_bytes);
		cell_known(tb, &c[OC_FCOUNT], r->freed_count);
		cell_known(tb, &c[OC_KBYTES], r->kept_bytes);
		cell_known(tb, &c[OC_KCOUNT], r->kept_count);
	}
}

static void json_dev(struct kp_doc *doc, const struct kp_memrep *m, const struct kp_mem_dev *d)
{
	doc_object(doc, NULL);
	doc_fact_count(doc, NULL, "device", d->dev_id);
	const char *tn = memory_type_name(d->dev_type);
	if (tn)
		doc_fact_text(doc, NULL, "device_type", tn);
	else
		doc_fact_count(doc, NULL, "device_type", d->dev_type);
	fact_known(doc, "pid", d->pid);
	doc_fact_text(doc, NULL, "layout", d->bytes_only ? "bytes_only" : "addr_totals");
	doc_fact_count(doc, NULL, "events", d->nevents);
	doc_fact_count(doc, NULL, "allocs", d->nallocs);
	doc_fact_count(doc, NULL, "frees", d->nfrees);
	doc_fact_count(doc, NULL, "peak_allocated_bytes", d->peak_alloc);
	fact_known(doc, "peak_reserved_bytes", d->peak_res);
	doc_fact_count(doc, NULL, "peak_ts_ns", d->peak_ts_ns);
	doc_fact_time(doc, NULL, "peak_time_ns", d->peak_ts_ns - m->t0_ns);
	fact_known(doc, "peak_step", d->step);
	fact_str(doc, "peak_op", d->peak_op);
	fact_str(doc, "peak_module", d->peak_module);
	fact_known(doc, "reserved_at_peak_bytes", d->res_at_peak);
	fact_known(doc, "reserved_gap_at_peak_bytes",
		   d->res_at_peak >= 0 ? d->res_at_peak - d->peak_alloc : -1);
	fact_known(doc, "allocated_before_trace_bytes", d->baseline);
	if (d->bytes_only) {
		doc_fact_null(doc, NULL, "unmatched_frees");
		doc_fact_null(doc, NULL, "never_freed");
		doc_fact_null(doc, NULL, "never_freed_bytes");
	} else {
		doc_fact_count(doc, NULL, "unmatched_frees", d->unmatched_frees);
		doc_fact_count(doc, NULL, "unmatched_free_bytes", d->unmatched_free_bytes);
		doc_fact_count(doc, NULL, "lost_frees", d->double_allocs);
		doc_fact_count(doc, NULL, "never_freed", d->kept_count);
		doc_fact_count(doc, NULL, "never_freed_bytes", d->kept_bytes);
	}
	json_rows_of(doc, d);
	doc_end(doc);
}

/* ---- people: facts and two tables per device ---- */

/* clang-format off */
enum hl_col { HL_BYTES, HL_SHARE, HL_COUNT, HL_MODULE, HL_OP, HL_N };
enum ho_col { HO_ABYTES, HO_ACOUNT, HO_FBYTES, HO_FCOUNT, HO_KBYTES, HO_KCOUNT, HO_MODULE, HO_OP,
	      HO_N };
/* clang-format on */

static const struct kp_col live_human[HL_N] = {
	[HL_BYTES] = { "Live at peak", NULL, COL_HUMAN, 0 },
	[HL_SHARE] = { "Share", NULL, COL_HUMAN, 0 },
	[HL_COUNT] = { "Blocks", NULL, COL_HUMAN, 0 },
	[HL_MODULE] = { "Module", NULL, COL_HUMAN, 1 },
	[HL_OP] = { "Allocated by", NULL, COL_HUMAN, 1 },
};

static const struct kp_col op_human[HO_N] = {
	[HO_ABYTES] = { "Allocated", NULL, COL_HUMAN, 0 },
	[HO_ACOUNT] = { "Allocs", NULL, COL_HUMAN, 0 },
	[HO_FBYTES] = { "Freed", NULL, COL_HUMAN, 0 },
	[HO_FCOUNT] = { "Frees", NULL, COL_HUMAN, 0 },
	[HO_KBYTES] = { "Never freed", NULL, COL_HUMAN, 0 },
	[HO_KCOUNT] = { "Blocks", NULL, COL_HUMAN, 0 },
	[HO_MODULE] = { "Module", NULL, COL_HUMAN, 1 },
	[HO_OP] = { "Op", NULL, COL_HUMAN, 1 },
};

static void bytes_cell(struct kp_table *tb, struct kp_cell *c, int64_t v)
{
	char b[32];
	if (v >= 0)
		doc_cell_int(tb, c, v, memory_bytes(b, sizeof(b), v));
}

static int has_modules(const struct kp_mem_row *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].module)
			return 1;
	return 0;
}

static void human_live(struct kp_doc *doc, const struct kp_mem_dev *d, const char *dn, long top)
{
	struct kp_table *tb = doc_table(doc, NULL, live_human, HL_N);
	char title[96];
	snprintf(title, sizeof(title), "live at the peak, %s", dn);
	tb->title = arena_strdup(&doc->arena, title);
	if (!has_modules(d->live, d->nlive))
		doc_col_show(tb, HL_MODULE, 0);
	/* the window's rows, then (others), then the remainder from before the trace */
	size_t nwin = d->nlive - 1, shown = top > 0 && (size_t)top < nwin ? (size_t)top : nwin;
	int64_t ob = 0, oc = 0;
	for (size_t i = 0; i < d->nlive; i++) {
		const struct kp_mem_row *r = &d->live[i];
		if (i >= shown && i < nwin) {
			ob += r->bytes;
			oc += r->count;
			if (i + 1 < nwin)
				continue;
		}
		int other = i >= shown && i < nwin;
		struct kp_cell *c = doc_row(tb);
		int64_t b = other ? ob : r->bytes;
		if (b >= 0)
			bytes_cell(tb, &c[HL_BYTES], b);
		else /* lost free events: the remainder is negative */
			doc_cell_int(tb, &c[HL_BYTES], b, NULL);
		char s[32];
		snprintf(s, sizeof(s), "%.1f%%", pct(b, d->peak_alloc));
		doc_cell_num(tb, &c[HL_SHARE], pct(b, d->peak_alloc), s);
		if (other || strcmp(r->op, MEM_BEFORE))
			doc_cell_int(tb, &c[HL_COUNT], other ? oc : r->count, NULL);
		doc_cell_str(tb, &c[HL_MODULE], other ? NULL : r->module, NULL);
		doc_cell_str(tb, &c[HL_OP], other ? "(others)" : r->op, NULL);
	}
}

static void human_ops(struct kp_doc *doc, const struct kp_mem_dev *d, const char *dn, long top)
{
	struct kp_table *tb = doc_table(doc, NULL, op_human, HO_N);
	char title[96];
	snprintf(title, sizeof(title), "allocations per op, %s", dn);
	tb->title = arena_strdup(&doc->arena, title);
	if (!has_modules(d->ops, d->nops))
		doc_col_show(tb, HO_MODULE, 0);
	if (d->bytes_only)
		for (int k = HO_FBYTES; k <= HO_KCOUNT; k++)
			doc_col_show(tb, k, 0);
	size_t shown = top > 0 && (size_t)top < d->nops ? (size_t)top : d->nops;
	struct kp_mem_row o = { .op = "(others)", .freed_bytes = d->bytes_only ? -1 : 0 };
	o.freed_count = o.kept_bytes = o.kept_count = o.freed_bytes;
	for (size_t i = shown; i < d->nops; i++) {
		const struct kp_mem_row *r = &d->ops[i];
		o.alloc_bytes += r->alloc_bytes;
		o.alloc_count += r->alloc_count;
		if (!d->bytes_only) {
			o.freed_bytes += r->freed_bytes;
			o.freed_count += r->freed_count;
			o.kept_bytes += r->kept_bytes;
			o.kept_count += r->kept_count;
		}
	}
	for (size_t i = 0; i <= shown && i <= d->nops; i++) {
		const struct kp_mem_row *r = i < shown ? &d->ops[i] : &o;
		if (i == shown && shown == d->nops)
			break;
		struct kp_cell *c = doc_row(tb);
		bytes_cell(tb, &c[HO_ABYTES], r->alloc_bytes);
		doc_cell_int(tb, &c[HO_ACOUNT], r->alloc_count, NULL);
		bytes_cell(tb, &c[HO_FBYTES], r->freed_bytes);
		cell_known(tb, &c[HO_FCOUNT], r->freed_count);
		bytes_cell(tb, &c[HO_KBYTES], r->kept_bytes);
		cell_known(tb, &c[HO_KCOUNT], r->kept_count);
		doc_cell_str(tb, &c[HO_MODULE], r->module, NULL);
		doc_cell_str(tb, &c[HO_OP], r->op, NULL);
	}
}

static void human_dev(struct kp_doc *doc, const struct kp_memrep *m, const struct kp_mem_dev *d,
		      long top)
{
	char dn[48], pk[32], rs[32], t[32], gap[32], where[512] = "";
	memory_dev_label(m, d, dn, sizeof(dn));
	if (d->step >= 0)
		snprintf(where, sizeof(where), ", step %" PRId64, d->step);
	if (d->peak_op)
		snprintf(where + strlen(where), sizeof(where) - strlen(where), ", in %s%s%s%s",
			 d->peak_op, d->peak_module ? " (" : "",
			 d->peak_module ? d->peak_module : "", d->peak_module ? ")" : "");
	doc_fact_textf(doc, "memory", NULL, "%s: peak allocated %s (%" PRId64 " B) at %s%s", dn,
		       memory_bytes(pk, sizeof(pk), d->peak_alloc), d->peak_alloc,
		       units_time(t, sizeof(t), d->peak_ts_ns - m->t0_ns), where);
	if (d->bytes_only) {
		doc_fact_textf(doc, "memory", NULL,
			       "%s: the trace's [memory] events carry no Addr and no Total Allocated (torch <= 1.9): allocated counts from 0 at the trace's start, reserved and the blocks live at the peak are unknown",
			       dn);
	} else {
		if (d->res_at_peak >= 0 && d->dev_type != 0)
			doc_fact_textf(doc, "memory", NULL,
				       "%s: reserved %s at the peak (%s more than allocated), peak reserved %s",
				       dn, memory_bytes(rs, sizeof(rs), d->res_at_peak),
				       memory_bytes(gap, sizeof(gap), d->res_at_peak - d->peak_alloc),
				       memory_bytes(t, sizeof(t), d->peak_res));
		doc_fact_textf(doc, "memory", NULL,
			       "%s: %" PRId64 " allocs, %" PRId64 " frees (%" PRId64
			       " of blocks from before the trace); %s allocated before the trace; %" PRId64
			       " %s never freed in the window (%s)",
			       dn, d->nallocs, d->nfrees, d->unmatched_frees,
			       memory_bytes(rs, sizeof(rs), d->baseline), d->kept_count,
			       units_plural(d->kept_count, "block", "blocks"),
			       memory_bytes(gap, sizeof(gap), d->kept_bytes));
		if (d->double_allocs)
			doc_fact_textf(doc, "memory", NULL,
				       "%s: %" PRId64 " addresses allocated again with no free between (lost free events)",
				       dn, d->double_allocs);
		human_live(doc, d, dn, top);
	}
	human_ops(doc, d, dn, top);
}

void memory_doc(struct kp_doc *doc, const struct kp_memrep *m, long top)
{
	doc_object(doc, "memory");
	doc_fact_count(doc, NULL, "events", m->nevents);
	doc_array(doc, "devices", 1);
	for (size_t i = 0; i < m->ngpu; i++)
		json_dev(doc, m, &m->devs[i]);
	doc_end(doc);
	doc_array(doc, "cpu", 1);
	for (size_t i = m->ngpu; i < m->ndevs; i++)
		json_dev(doc, m, &m->devs[i]);
	doc_end(doc);
	doc_end(doc);
	if (!m->nevents) {
		doc_fact_text(doc, "memory", NULL,
			      "no [memory] events: record with torch.profiler.profile(profile_memory=True)");
		return;
	}
	for (size_t i = 0; i < m->ndevs; i++)
		human_dev(doc, m, &m->devs[i], top);
}
