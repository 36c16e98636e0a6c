/*
 * test-metric.c — the figures table (metric.h) against what kprof shows for real traces:
 * each entry's header and json key are the rows table's column, in order, its values are
 * the csv's, and its --sort key orders that column; a half-added figure fails here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/devdb.h"
#include "kprof/metric.h"
#include "kprof/pipeline.h"
#include "kprof/report-doc.h"
#include "kprof/sort.h"
#include "kprof/table.h"

static struct kp_devdb db;

static int setup(void **state)
{
	(void)state;
	struct kp_diag d = { 0 };
	return devdb_load_builtin(&db, &d);
}

static int teardown(void **state)
{
	(void)state;
	devdb_free(&db);
	return 0;
}

/*
 * traces with every column: measured counters (m* columns), several kernels and ops; each by
 * kernel (the Op column) and by op and shape (the Shape column)
 */
static const char *const traces[] = { "measured/kprof-metrics.json",
				      "torch211-h100/block_bf16.json" };
/* and a trace with the Python tree, by module and by source (the Module and Source columns) */
static const char *const pytrace = "torch211-h200/llama_eager.json.gz";

static void load(struct kp_pipeline_out *o, const char *rel, enum kp_group group)
{
	char p[4096];
	const char *dir = getenv("KPROF_TESTDATA");
	snprintf(p, sizeof(p), "%s/%s", dir ? dir : "../../testdata", rel);
	struct kp_pipeline_in in = { .path = p, .db = &db, .analyze = { .group = group } };
	assert_int_equal(pipeline_run(&in, o), 0);
	assert_true(o->report.nrows >= 1);
}

static char *render(struct kp_doc *doc, enum kp_format f)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&buf, &n);
	table_render(doc, f, 0, fp);
	fclose(fp);
	return buf;
}

/* Line @line (from 0) of @s split at commas (csv quotes undone) into @f; the field count. */
static int csv_fields(const char *s, int line, char f[][4096], int max)
{
	for (; line > 0 && s; line--)
		s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL;
	assert_non_null(s);
	int n = 0;
	size_t len = 0;
	int quoted = 0;
	f[0][0] = '\0';
	for (; *s && (*s != '\n' || quoted); s++) {
		if (*s == '\r' && !quoted) /* csv lines end in CRLF (RFC 4180) */
			continue;
		if (*s == '"' && quoted && s[1] == '"') {
			s++;
		} else if (*s == '"') {
			quoted = !quoted;
			continue;
		} else if (*s == ',' && !quoted) {
			f[n++][len] = '\0';
			assert_true(n < max);
			len = 0;
			continue;
		}
		if (len < 4095)
			f[n][len++] = *s;
	}
	f[n][len] = '\0';
	return n + 1;
}

static char csvf[METRIC_N + 8][4096];

/* the columns of the rows table are the entries, in order, and csv shows them all */
static void every_entry_is_a_column_with_its_header_and_json_key(void **state)
{
	(void)state;
	int known[METRIC_N] = { 0 }; /* rows where the entry shows a value */
	for (int k = 0; k < METRIC_N; k++) {
		const struct kp_metric *m = &metric_table[k];
		/* the reader its form writes from */
		if (m->form == MF_TIME || m->form == MF_COUNT)
			assert_non_null(m->count);
		else if (m->form == MF_FIXED)
			assert_non_null(m->num);
		else
			assert_true(m->text || m->cell);
		if (m->sort) /* a sort key compares a value */
			assert_true(m->form == MF_TEXT ? m->text != NULL : (m->num || m->count));
	}
	for (size_t t = 0; t < 6; t++) {
		static const enum kp_group groups[] = { GROUP_KERNEL, GROUP_KERNEL, GROUP_OP_SHAPE,
							GROUP_OP_SHAPE, GROUP_MODULE, GROUP_SOURCE };
		struct kp_pipeline_out o;
		load(&o, t < 4 ? traces[t % 2] : pytrace, groups[t]);
		struct kp_report_doc_opts ro = { .format = FMT_TABLE, .stats = 1 };
		struct kp_doc doc;
		report_doc(&o.report, &ro, &doc);
		const struct kp_table *tb = NULL;
		for (size_t i = 0; i < doc.nitems && !tb; i++)
			if (doc.items[i].type == ITEM_TABLE && !strcmp(doc.items[i].jkey, "rows"))
				tb = doc.items[i].table;
		assert_non_null(tb);
		assert_int_equal(tb->ncols, METRIC_N);
		/* the text table's header: the titles of the columns shown to humans, in order */
		char *txt = render(&doc, FMT_TABLE), *hdr = txt;
		while (*hdr == '#')
			hdr = strchr(hdr, '\n') + 1;
		char *eol = strchr(hdr, '\n');
		*eol = '\0';
		char *save = NULL, *tok = strtok_r(hdr, " ", &save);
		for (int k = 0; k < METRIC_N; k++) {
			const struct kp_metric *m = &metric_table[k];
			assert_non_null(m->col.title);
			assert_non_null(m->col.key);
			assert_string_equal(tb->cols[k].key, m->col.key);
			if (k != METRIC_NAME || t < 2) /* by op and shape it reads "Op", ... */
				assert_string_equal(tb->cols[k].title, m->col.title);
			if (!(tb->cols[k].where & COL_HUMAN))
				continue;
			assert_non_null(tok);
			assert_string_equal(tok, tb->cols[k].title);
			tok = strtok_r(NULL, " ", &save);
		}
		assert_null(tok);
		free(txt);
		/* csv: every entry's json key, and each row's value read through the entry */
		char *csv = render(&doc, FMT_CSV);
		int n = csv_fields(csv, 0, csvf, METRIC_N + 8);
		if (t == 0) /* the measured trace by kernel: every column but Module and Source */
			assert_int_equal(n, METRIC_N - 2);
		for (int k = 0, j = 0; k < METRIC_N; k++) {
			if (!(tb->cols[k].where & COL_MACHINE))
				continue;
			assert_string_equal(csvf[j++], metric_table[k].col.key);
		}
		for (size_t i = 0; i < o.report.nrows; i++) {
			const struct kp_row *row = &o.report.rows[i];
			csv_fields(csv, (int)i + 1, csvf, METRIC_N + 8);
			for (int k = 0, j = 0; k < METRIC_N; k++) {
				const struct kp_metric *m = &metric_table[k];
				if (!(tb->cols[k].where & COL_MACHINE))
					continue;
				const char *v = csvf[j++];
				known[k] += *v != '\0';
				if (m->form == MF_TEXT) {
					const char *s = metric_text(row, k);
					if (s)
						assert_string_equal(v, s);
				} else if (m->form == MF_FIXED) {
					double x = metric_num(row, k);
					if (x < 0)
						assert_string_equal(v, "");
					else
						assert_true(fabs(strtod(v, NULL) - x) <= 1e-9 * x);
				} else {
					int64_t x = m->count(row);
					if (x < 0)
						assert_string_equal(v, "");
					else
						assert_int_equal(strtoll(v, NULL, 10), x);
				}
			}
		}
		free(csv);
		doc_free(&doc);
		pipeline_free(&o);
	}
	/* no entry is a column that stays empty on real traces */
	for (int k = 0; k < METRIC_N; k++)
		if (!known[k])
			fail_msg("'%s' shows no value", metric_table[k].col.key);
}

/* the --sort keys: listed once each, in .sort_at order, and each orders its own column */
static void every_sort_key_orders_the_column_it_names(void **state)
{
	(void)state;
	int nkeys = 0;
	for (int k = 0; k < METRIC_N; k++)
		if (metric_table[k].sort) {
			nkeys++;
			assert_true(metric_table[k].sort_at >= 1);
			assert_int_equal(metric_by_sort_key(metric_table[k].sort), k);
			assert_int_equal(metric_sort_key_at(metric_table[k].sort_at - 1), k);
		}
	for (int i = 0; i < nkeys; i++) /* the key list has them all */
		assert_true(metric_sort_key_at(i) >= 0);
	assert_int_equal(metric_sort_key_at(nkeys), -1);
	assert_true(nkeys <= SORT_MAX_KEYS);
	for (size_t t = 0; t < 4; t++) {
		struct kp_pipeline_out o;
		load(&o, traces[t % 2], t < 2 ? GROUP_KERNEL : GROUP_OP_SHAPE);
		for (int k = 0; k < METRIC_N; k++) {
			const struct kp_metric *m = &metric_table[k];
			if (!m->sort)
				continue;
			struct kp_sort_spec sp;
			const char *bad = NULL;
			assert_int_equal(sort_parse(&sp, SORT_ANALYZE, m->sort, &bad), 0);
			assert_int_equal(sp.k[0].key, k);
			sort_analyze(&o.report, &sp);
			struct kp_report_doc_opts ro = { .format = FMT_CSV, .stats = 1 };
			struct kp_doc doc;
			report_doc(&o.report, &ro, &doc);
			char *csv = render(&doc, FMT_CSV);
			int n = csv_fields(csv, 0, csvf, METRIC_N + 8), col = -1;
			for (int j = 0; j < n; j++)
				if (!strcmp(csvf[j], m->col.key))
					col = j;
			assert_true(col >= 0);
			char prev[4096] = "";
			double prevx = INFINITY;
			for (size_t i = 0; i < o.report.nrows; i++) {
				csv_fields(csv, (int)i + 1, csvf, METRIC_N + 8);
				const char *v = csvf[col];
				if (m->form == MF_TEXT) { /* text ascends */
					assert_true(strcmp(prev, v) <= 0);
					snprintf(prev, sizeof(prev), "%s", v);
				} else { /* numbers descend, unknown (empty) last */
					double x = *v ? strtod(v, NULL) : -1;
					assert_true(x <= prevx);
					prevx = x;
				}
			}
			free(csv);
			doc_free(&doc);
		}
		pipeline_free(&o);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_entry_is_a_column_with_its_header_and_json_key),
		cmocka_unit_test(every_sort_key_orders_the_column_it_names),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
