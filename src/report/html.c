/*
 * html.c — a document as one self-contained XHTML-compatible page: header facts, a
 * verdict banner (toned facts), charts as inline SVG (svg.c), tables sortable by a click on
 * a header.  No external resource: inline CSS, one small inline script, works from file://
 * and printed; light and dark (prefers-color-scheme).
 */
#include "kprof/html.h"

#include <inttypes.h>
#include <string.h>

#include "kprof/jsonw.h"
#include "kprof/svg.h"
#include "kprof/units.h"

static const char css[] =
	":root{--bg:#fff;--fg:#1d1d1f;--mut:#666;--grid:#ddd;--roof:#444;--idle:#eee;--tot:#607d8b;"
	"--row:#f5f5f7;--bad:#c62828;--good:#2e7d32;--warn:#9a6700}\n"
	"@media (prefers-color-scheme:dark){:root{--bg:#16171a;--fg:#e6e6e6;--mut:#9a9a9a;--grid:#3a3b40;"
	"--roof:#cfcfcf;--idle:#26272c;--tot:#90a4ae;--mem:#56b4e9;--row:#1f2024;--bad:#ef5350;--good:#66bb6a;--warn:#e3b341}}\n"
	"body{background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,sans-serif;margin:0 auto;"
	"max-width:1100px;padding:16px}\n"
	"h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 6px}\n"
	".sum,.note{color:var(--mut);margin:0 0 8px}\n"
	"table{border-collapse:collapse;font-size:12.5px}\n"
	"table.facts th{text-align:left;padding:2px 14px 2px 0;color:var(--mut);font-weight:500;vertical-align:top}\n"
	"table.facts td{padding:2px 0;word-break:break-word}\n"
	".wrap{overflow-x:auto}\n"
	"table.rows th{position:sticky;top:0;background:var(--bg);border-bottom:2px solid var(--grid);"
	"padding:4px 8px;cursor:pointer;white-space:nowrap;user-select:none}\n"
	"table.rows th.num,table.rows td.num{text-align:right;font-variant-numeric:tabular-nums}table.rows th.txt{text-align:left}\n"
	"table.rows td{padding:3px 8px;border-bottom:1px solid var(--grid);white-space:nowrap}\n"
	"table.rows td.txt{text-align:left}table.rows td.name{max-width:32em;overflow:hidden;"
	"text-overflow:ellipsis;font-family:ui-monospace,monospace;font-size:12px}\n"
	"table.rows tbody tr:nth-child(even){background:var(--row)}\n"
	/* the name column, last by style, stays in view at the right edge of a table wider than
	   the page (1100 px), which otherwise scrolls it out of sight */
	"table.rows th.name,table.rows td.name{position:sticky;right:0;background:var(--bg);"
	"box-shadow:-1px 0 0 var(--grid)}\n"
	"table.rows tbody tr:nth-child(even) td.name{background:var(--row)}\n"
	"th[aria-sort=ascending]::after{content:' \\25b2'}th[aria-sort=descending]::after{content:' \\25bc'}\n"
	".bad{color:var(--bad)}.good{color:var(--good)}.warn{color:var(--warn)}\n"
	".verdict{border-radius:6px;padding:10px 14px;margin:12px 0;font-weight:600;border:2px solid}\n"
	".verdict.bad{background:rgba(198,40,40,.1)}.verdict.good{background:rgba(46,125,50,.1)}\n"
	"figure{margin:0}figure svg{width:100%;height:auto;max-width:900px}figure svg.ic{max-width:none}\n"
	"ul.list{columns:2;font-family:ui-monospace,monospace;font-size:12px}\n"
	"footer{color:var(--mut);font-size:12px;margin-top:32px}\n"
	"@media print{body{max-width:none;padding:0}table.rows th{position:static}"
	"section{break-inside:avoid}.wrap{overflow:visible}"
	"table.rows th.name,table.rows td.name{position:static}}\n";

/* Click a header: sort the body by that column (data-v numbers, else text; empty last). */
static const char script[] =
	"document.querySelectorAll('table.rows').forEach(function(t){\n"
	"t.querySelectorAll('th').forEach(function(h,i){h.addEventListener('click',function(){\n"
	"var d=h.getAttribute('aria-sort')==='descending'?1:-1,b=t.tBodies[0],num=h.className==='num';\n"
	"var rs=Array.prototype.slice.call(b.rows);\n"
	"rs.sort(function(x,y){var a=x.cells[i].getAttribute('data-v'),c=y.cells[i].getAttribute('data-v');\n"
	"if(a===null){a=x.cells[i].textContent}if(c===null){c=y.cells[i].textContent}\n"
	"if(a===''){return c===''?0:1}if(c===''){return -1}\n"
	"if(num){return d*(Number(a)-Number(c))}return d*a.localeCompare(c)});\n"
	"t.querySelectorAll('th').forEach(function(o){o.removeAttribute('aria-sort')});\n"
	"h.setAttribute('aria-sort',d===1?'ascending':'descending');\n"
	"rs.forEach(function(r){b.appendChild(r)})})})});\n"
	/* icicle (svg.c icicle()): a click on a box zooms to it, its ancestors span the width,
	   other boxes hide; labels re-cut to their new width (head, ellipsis, a third tail) */
	"document.querySelectorAll('svg.ic').forEach(function(s){\n"
	"var L=+s.getAttribute('data-l'),W=+s.getAttribute('data-w'),gs=s.querySelectorAll('g.ib');\n"
	"function fit(g,w){var t=g.querySelector('text'),n=g.getAttribute('data-n');\n"
	"if(n===null){n=t.textContent;g.setAttribute('data-n',n)}\n"
	"var k=Math.floor((w-5)/7),c=Array.from(n);\n"
	"t.textContent=k>=1&&c.length<=k?n:k<6?'':c.slice(0,k-1-Math.floor((k-1)/3)).join('')+'\\u2026'+c.slice(c.length-Math.floor((k-1)/3)).join('')}\n"
	"gs.forEach(function(c){c.addEventListener('click',function(){\n"
	"var a=+c.getAttribute('data-a'),b=+c.getAttribute('data-b'),d=+c.getAttribute('data-d');\n"
	"gs.forEach(function(g){var A=+g.getAttribute('data-a'),B=+g.getAttribute('data-b'),\n"
	"D=+g.getAttribute('data-d'),r=g.querySelector('rect'),x,w;\n"
	"if(D<d&&A<=a&&B>=b){x=L;w=W}else if(D>=d&&A>=a&&B<=b){x=L+(A-a)/(b-a)*W;w=(B-A)/(b-a)*W}\n"
	"else{g.style.display='none';return}\n"
	"g.style.display='';r.setAttribute('x',x);r.setAttribute('width',Math.max(w,0.5));\n"
	"g.querySelector('text').setAttribute('x',x+3);fit(g,w)})})})});\n";

static void esc(const char *s, FILE *fp)
{
	svg_escape(s, fp);
}

static const char *tone_class(enum kp_tone t)
{
	return t == TONE_BAD ? "bad" : t == TONE_GOOD ? "good" : t == TONE_WARN ? "warn" : NULL;
}

static void facts(const struct kp_doc *doc, FILE *fp)
{
	char buf[64];
	int depth = 0, open = 0;
	for (size_t i = 0; i < doc->nitems; i++) {
		const struct kp_item *it = &doc->items[i];
		if (it->type == ITEM_OBJECT || it->type == ITEM_ARRAY) {
			depth++;
			continue;
		}
		if (it->type == ITEM_END) {
			depth--;
			continue;
		}
		if (depth || it->type != ITEM_FACT || !it->key)
			continue;
		if (!open)
			fputs("<table class=\"facts\">\n", fp);
		open = 1;
		const char *cls = tone_class(it->tone);
		fputs("<tr><th>", fp);
		esc(it->key, fp);
		fprintf(fp, "</th><td%s%s%s>", cls ? " class=\"" : "", cls ? cls : "",
			cls ? "\"" : "");
		esc(doc_val_text(&it->v, buf, sizeof(buf)), fp);
		fputs("</td></tr>\n", fp);
	}
	if (open)
		fputs("</table>\n", fp);
}

/* toned facts at the top: the gate's verdict */
static void verdicts(const struct kp_doc *doc, FILE *fp)
{
	char buf[64];
	for (size_t i = 0; i < doc->nitems; i++) {
		const struct kp_item *it = &doc->items[i];
		if (it->type != ITEM_FACT || !it->key || !tone_class(it->tone) ||
		    it->tone == TONE_WARN)
			continue;
		fprintf(fp, "<p class=\"verdict %s\" role=\"status\">%s ", tone_class(it->tone),
			it->tone == TONE_BAD ? "&#10007; FAILED" : "&#10003; PASSED");
		esc(it->key, fp);
		fputs(": ", fp);
		esc(doc_val_text(&it->v, buf, sizeof(buf)), fp);
		fputs("</p>\n", fp);
	}
}

static void list_chart(const struct kp_chart *ch, FILE *fp)
{
	char b[64];
	if (!ch->npts) {
		fputs("<p class=\"note\">none</p>\n", fp);
		return;
	}
	fputs("<ul class=\"list\">\n", fp);
	for (size_t i = 0; i < ch->npts; i++) {
		fputs("<li>", fp);
		esc(ch->pts[i].label, fp);
		fprintf(fp, " <span class=\"note\">%s</span></li>\n",
			units_time(b, sizeof(b), (int64_t)ch->pts[i].x));
	}
	fputs("</ul>\n", fp);
}

static void chart(const struct kp_chart *ch, FILE *fp)
{
	fprintf(fp, "<section id=\"%s\"><h2>", ch->name);
	esc(ch->title, fp);
	fputs("</h2>\n", fp);
	if (ch->note) {
		fputs("<p class=\"note\">", fp);
		esc(ch->note, fp);
		fputs("</p>\n", fp);
	}
	if (svg_drawable(ch)) {
		fputs("<figure>\n", fp);
		svg_chart(ch, 0, fp);
		fputs("</figure>\n", fp);
	} else {
		list_chart(ch, fp);
	}
	fputs("</section>\n", fp);
}

static void table(const struct kp_table *tb, const char *jkey, FILE *fp)
{
	char buf[128];
	int last = -1;
	for (int j = 0; j < tb->ncols; j++)
		if (tb->cols[j].where & COL_HUMAN)
			last = j;
	fputs("<section><h2>", fp);
	esc(tb->title ? tb->title : jkey ? jkey : "table", fp);
	fprintf(fp, " (%zu)</h2>\n<div class=\"wrap\"><table class=\"rows\"><thead><tr>",
		tb->nrows);
	for (int j = 0; j < tb->ncols; j++) {
		const struct kp_col *c = &tb->cols[j];
		if (!(c->where & COL_HUMAN))
			continue;
		fprintf(fp, "<th class=\"%s\" title=\"click to sort\">",
			c->text ? (j == last ? "txt name" : "txt") : "num");
		esc(c->title, fp);
		fputs("</th>", fp);
	}
	fputs("</tr></thead>\n<tbody>\n", fp);
	for (size_t i = 0; i < tb->nrows; i++) {
		fputs("<tr>", fp);
		for (int j = 0; j < tb->ncols; j++) {
			const struct kp_col *col = &tb->cols[j];
			const struct kp_cell *c = &tb->cells[i * (size_t)tb->ncols + (size_t)j];
			if (!(col->where & COL_HUMAN))
				continue;
			const char *cls = tone_class(c->tone);
			fprintf(fp, "<td class=\"%s%s%s\"",
				col->text ? (j == last ? "txt name" : "txt") : "num",
				cls ? " " : "", cls ? cls : "");
			if (j == last && c->type == CELL_STR) {
				/* the whole name on hover: the cell shows what fits */
				fputs(" title=\"", fp);
				svg_escape_line(c->s, fp);
				fputc('"', fp);
			}
			if (!col->text) {
				fputs(" data-v=\"", fp);
				if (c->type == CELL_INT)
					fprintf(fp, "%" PRId64, c->i);
				else if (c->type == CELL_NUM)
					fputs(jw_format_double(buf, sizeof(buf), c->d), fp);
				fputc('"', fp);
			}
			fputc('>', fp);
			esc(doc_cell_text(c, buf, sizeof(buf)), fp);
			fputs("</td>", fp);
		}
		fputs("</tr>\n", fp);
	}
	fputs("</tbody></table></div></section>\n", fp);
}

void html_render(const struct kp_doc *doc, FILE *fp)
{
	fputs("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
	      "<meta charset=\"utf-8\"/>\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
	      "<meta name=\"color-scheme\" content=\"light dark\"/>\n<title>kprof ",
	      fp);
	/* the page's title (the tab's text) is one line: a device or file name's LF escaped */
	svg_escape_line(doc->command, fp);
	if (doc->summary) {
		fputs(": ", fp);
		svg_escape_line(doc->summary, fp);
	}
	fputs("</title>\n<style>\n", fp);
	fputs(css, fp);
	svg_css(fp);
	fputs("</style>\n</head>\n<body>\n<header><h1>kprof ", fp);
	esc(doc->command, fp);
	fputs("</h1>\n", fp);
	if (doc->summary) {
		fputs("<p class=\"sum\">", fp);
		esc(doc->summary, fp);
		fputs("</p>\n", fp);
	}
	fputs("</header>\n", fp);
	verdicts(doc, fp);
	facts(doc, fp);
	int depth = 0;
	for (size_t i = 0; i < doc->nitems; i++) {
		const struct kp_item *it = &doc->items[i];
		if (it->type == ITEM_OBJECT || it->type == ITEM_ARRAY)
			depth++;
		else if (it->type == ITEM_END)
			depth--;
		else if (!depth && it->type == ITEM_CHART)
			chart(it->chart, fp);
	}
	for (size_t i = 0; i < doc->nitems; i++) {
		const struct kp_item *it = &doc->items[i];
		if (it->type == ITEM_OBJECT || it->type == ITEM_ARRAY)
			depth++;
		else if (it->type == ITEM_END)
			depth--;
		else if (!depth && it->type == ITEM_TABLE && it->table->nrows)
			table(it->table, it->jkey, fp);
	}
	fprintf(fp,
		"<footer>kprof %s; charts: hover for numbers, click an icicle box to zoom; tables: click a header to sort</footer>\n",
		KPROF_VERSION);
	fputs("<script>\n//<![CDATA[\n", fp);
	fputs(script, fp);
	fputs("//]]>\n</script>\n</body>\n</html>\n", fp);
}
