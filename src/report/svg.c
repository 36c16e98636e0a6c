/*
 * svg.c — report charts as SVG: roofline (log-log), top ops (stacked bars), GPU timeline
 * (one lane per stream), waterfall and dumbbell (diff), icicle, and capture results' lines
 * (shapes on x, one line per backend).  Coordinates are in a fixed
 * viewBox; the element scales to its container.
 */
#include "kprof/svg.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/arena.h"
#include "kprof/memory-doc.h"
#include "kprof/units.h"
#include "kprof/utf8.h"

/* Okabe-Ito (colour-blind safe) first, then purple, brown, grey; the rest darker */
static const char *const palette[CHART_SERIES_MAX] = {
	"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#b8a200", "#7f3c8d",
	"#8c6d31", "#8c8c8c", "#004c78", "#9c6c00", "#006b4e", "#8f4f74", "#913f00", "#5c5c5c",
};

void svg_css(FILE *fp)
{
	for (int i = 0; i < CHART_SERIES_MAX; i++)
		fprintf(fp, ".s%d{fill:%s;stroke:%s}\n", i, palette[i], palette[i]);
	fputs(".kc{font:12px system-ui,sans-serif;fill:var(--fg,#222)}\n"
	      ".kc text{fill:var(--fg,#222);stroke:none}\n"
	      ".kc .ax{stroke:var(--fg,#222);stroke-width:1;fill:none}\n"
	      ".kc .grid{stroke:var(--grid,#ddd);stroke-width:1;fill:none}\n"
	      ".kc .roof{stroke:var(--roof,#444);stroke-width:2;fill:none}\n"
	      ".kc .ridge{fill:var(--bg,#fff);stroke:var(--roof,#444);stroke-width:1.5}\n"
	      ".kc .pt{fill-opacity:.55;stroke-width:1}\n"
	      ".kc .lane{fill:var(--idle,#eee);stroke:none}\n"
	      ".kc .step{stroke:var(--fg,#222);stroke-width:1;stroke-dasharray:3 3;opacity:.6}\n"
	      ".kc .bad{fill:#c62828;stroke:#c62828}\n"
	      ".kc .good{fill:#2e7d32;stroke:#2e7d32}\n"
	      ".kc .tot{fill:var(--tot,#607d8b);stroke:none}\n"
	      ".kc .base{fill:var(--bg,#fff);stroke:var(--fg,#222);stroke-width:1.5}\n"
	      ".kc .link{stroke:var(--grid,#bbb);stroke-width:3}\n"
	      ".kc .sm{font-size:10px}\n"
	      ".kc .ttl{font-size:11px;font-weight:600}\n"
	      ".kc g.ib{cursor:pointer}.kc g.ib rect{stroke:var(--bg,#fff);stroke-width:.5}\n"
	      ".kc g.ib text{font-size:11px;fill:#111;pointer-events:none}\n"
	      ".kc g.io rect{stroke:#999;stroke-dasharray:2 2}\n"
	      ".kc .ml{stroke:var(--mem,#0072b2);stroke-width:1.5;fill:none}\n"
	      ".kc .mr{stroke:#e69f00;stroke-width:1.5;fill:none}\n"
	      ".kc .ma{fill:var(--mem,#0072b2);fill-opacity:.15;stroke:none}\n"
	      ".kc .opt{fill:var(--fg,#222);fill-opacity:.08;stroke:none}\n"
	      ".kc .hv{fill:var(--fg,#222);fill-opacity:0;stroke:none}.kc .hv:hover{fill-opacity:.12}\n"
	      ".kc .pk circle{fill:#d55e00;stroke:var(--bg,#fff);stroke-width:1.5}.kc .pk text{font-weight:600}\n"
	      ".kc .ln{fill:none;stroke-width:2}\n"
	      ".kc .peak{stroke:var(--roof,#444);stroke-width:1.5;stroke-dasharray:6 4;fill:none}\n"
	      ".kc .fail{fill:none;stroke:#c62828;stroke-width:2}\n",
	      fp);
}

/* @s escaped for xml after @vis (utf8_visible or utf8_visible_lines) */
static void xml_escape(const char *s, const char *(*vis)(const char *, struct kp_visbuf *), FILE *fp)
{
	if (!s)
		return;
	struct kp_visbuf vb = { 0 };
	for (s = vis(s, &vb); *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '&':
			fputs("&amp;", fp);
			break;
		case '<':
			fputs("&lt;", fp);
			break;
		case '>':
			fputs("&gt;", fp);
			break;
		case '"':
			fputs("&quot;", fp);
			break;
		case '\'':
			fputs("&#39;", fp);
			break;
		default:
			fputc(c, fp);
		}
	}
	utf8_visible_free(&vb);
}

void svg_escape(const char *s, FILE *fp)
{
	xml_escape(s, utf8_visible_lines, fp);
}

/*
 * A name (a kernel's, an op's, a module path, a shape) on one line: LF and tab escaped too
 * ("\n"), so that a name from a trace cannot add lines to a tooltip or a label.
 */
void svg_escape_line(const char *s, FILE *fp)
{
	xml_escape(s, utf8_visible, fp);
}

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, drawn one character wide */

static int utf8_cont(const char *s, size_t i)
{
	return ((unsigned char)s[i] & 0xc0) == 0x80;
}

/*
 * @s in @max bytes plus the ellipsis: its first bytes and its last @tail bytes (both moved
 * to UTF-8 boundaries, the tail at least one character; @tail 0: none), then @suffix.
 */
static char *cut_label(const char *s, size_t max, size_t tail, const char *suffix)
{
	size_t n = strlen(s), sl = strlen(suffix);
	size_t budget = max > sl + 2 ? max - sl : 2;
	if (tail >= budget)
		tail = budget - 1;
	size_t head = budget - tail;
	while (head > 0 && utf8_cont(s, head))
		head--;
	size_t t0 = n - tail;
	while (t0 < n && utf8_cont(s, t0))
		t0++;
	char *out = xmalloc(head + sizeof(ELLIPSIS) + (n - t0) + sl);
	memcpy(out, s, head);
	memcpy(out + head, ELLIPSIS, sizeof(ELLIPSIS) - 1);
	memcpy(out + head + sizeof(ELLIPSIS) - 1, s + t0, n - t0);
	memcpy(out + head + sizeof(ELLIPSIS) - 1 + (n - t0), suffix, sl + 1);
	return out;
}

/* Whether out[i] equals another label's while the full labels differ. */
static int collides(const char *const *full, char **out, size_t n, size_t i)
{
	for (size_t j = 0; j < n; j++)
		if (j != i && !strcmp(out[i], out[j]) && strcmp(full[i], full[j]))
			return 1;
	return 0;
}

/* Whether out[i] equals that of an earlier label with a different full text. */
static int collides_before(const char *const *full, char **out, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (!strcmp(out[i], out[j]) && strcmp(full[i], full[j]))
			return 1;
	return 0;
}

/* The first byte where @i differs from a label its cut collides with. */
static size_t first_difference(const char *const *full, char **out, size_t n, size_t i)
{
	size_t first = strlen(full[i]);
	for (size_t j = 0; j < n; j++) {
		if (j == i || strcmp(out[i], out[j]) || !strcmp(full[i], full[j]))
			continue;
		size_t d = 0;
		while (full[i][d] && full[i][d] == full[j][d])
			d++;
		if (d < first)
			first = d;
	}
	while (first > 0 && utf8_cont(full[i], first))
		first--;
	return first;
}

/*
 * A cut of @s that shows byte @first, where it differs from a label with the same head: the
 * tail from a few bytes before it ("[4096,1024]" rather than "24]"), else the tail from it,
 * else a window from it between two ellipses, "aten…_backward [8,32,…".  Heads keep 4
 * bytes at least.
 */
static char *cut_at_difference(const char *s, size_t max, size_t first)
{
	size_t len = strlen(s);
	size_t ctx = first >= 4 ? 4 : first;
	if (len - (first - ctx) + 4 <= max)
		return cut_label(s, max, len - (first - ctx), "");
	if (len - first + 4 <= max)
		return cut_label(s, max, len - first, "");
	size_t head = 4, w = max > head + 1 ? max - head - 1 : 1;
	while (head > 0 && utf8_cont(s, head))
		head--;
	if (first < head)
		first = head;
	size_t end = first + w < len ? first + w : len;
	/* not below @first: in bytes that are all continuations (not UTF-8) it would pass 0 */
	while (end > first && end < len && utf8_cont(s, end))
		end--;
	char *out = xmalloc(head + 2 * (sizeof(ELLIPSIS) - 1) + (end - first) + 1);
	size_t k = 0;
	memcpy(out + k, s, head);
	k += head;
	memcpy(out + k, ELLIPSIS, sizeof(ELLIPSIS) - 1);
	k += sizeof(ELLIPSIS) - 1;
	memcpy(out + k, s + first, end - first);
	k += end - first;
	memcpy(out + k, ELLIPSIS, sizeof(ELLIPSIS));
	return out;
}

char **svg_short_labels(const char *const *full, size_t n, size_t max)
{
	char **out = xcalloc(n ? n : 1, sizeof(*out));
	if (max < 4)
		max = 4;
	/* first the head alone, "aten::mm [4096,4096]x[4096,102…", which reads best */
	for (size_t i = 0; i < n; i++)
		out[i] = strlen(full[i]) <= max ? xstrdup(full[i]) : cut_label(full[i], max, 0, "");
	/* labels whose heads collide show where they differ: "aten::mm [4096,4096]x[409…1024]" */
	size_t *first = xcalloc(n ? n : 1, sizeof(*first));
	for (size_t i = 0; i < n; i++)
		first[i] = strlen(full[i]) > max && collides(full, out, n, i)
				   ? first_difference(full, out, n, i) + 1
				   : 0;
	for (size_t i = 0; i < n; i++)
		if (first[i]) {
			free(out[i]);
			out[i] = cut_at_difference(full[i], max, first[i] - 1);
		}
	free(first);
	/* a difference too far from the end for the tail to show: the first keeps its text,
	   the others are numbered in order, "kernel_co… #2" */
	for (size_t i = 0; i < n; i++)
		for (int k = 2; collides_before(full, out, i); k++) {
			char sfx[16];
			snprintf(sfx, sizeof(sfx), " #%d", k);
			free(out[i]);
			out[i] = cut_label(full[i], max, 0, sfx);
		}
	return out;
}

static void free_labels(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* A name's or a one-line text's tooltip */
static void title_el(const char *s, FILE *fp)
{
	fputs("<title>", fp);
	svg_escape_line(s, fp);
	fputs("</title>", fp);
}

/*
 * A tooltip of lines: @tip (a chart's span or point tip, whose composer made each name in it
 * visible, src/report/charts.c), else the name @name on one line.
 */
static void title_tip(const char *tip, const char *name, FILE *fp)
{
	if (!tip) {
		title_el(name, fp);
		return;
	}
	fputs("<title>", fp);
	svg_escape(tip, fp);
	fputs("</title>", fp);
}

/* The chart's marks' / points' labels, shortened unique (svg_short_labels()). */
static char **marks_short(const struct kp_chart *ch, size_t max)
{
	const char **v = xcalloc(ch->nmarks + 1, sizeof(*v));
	for (size_t i = 0; i < ch->nmarks; i++)
		v[i] = ch->marks[i].label ? ch->marks[i].label : "";
	char **out = svg_short_labels(v, ch->nmarks, max);
	free(v);
	return out;
}

static char **pts_short(const struct kp_chart *ch, size_t max)
{
	const char **v = xcalloc(ch->npts + 1, sizeof(*v));
	for (size_t i = 0; i < ch->npts; i++)
		v[i] = ch->pts[i].label ? ch->pts[i].label : "";
	char **out = svg_short_labels(v, ch->npts, max);
	free(v);
	return out;
}

/* "1.5 T" style SI text of @v for tick labels */
static void si_text(char *buf, size_t cap, double v)
{
	static const char *const pre[] = { "", "k", "M", "G", "T", "P", "E" };
	int k = 0;
	double a = fabs(v);
	if (a < 1 && a > 0) {
		snprintf(buf, cap, "%g", v);
		return;
	}
	while (a >= 1000 && k < 6) {
		a /= 1000;
		v /= 1000;
		k++;
	}
	snprintf(buf, cap, "%g%s", v, pre[k]);
}

/* a "nice" tick step for @range split in about @n */
static double nice_step(double range, int n)
{
	if (!(range > 0))
		return 1;
	double raw = range / n, p = pow(10, floor(log10(raw))), f = raw / p;
	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

/* the time unit for an axis reaching @max ns */
static void time_unit(double max, double *div, const char **unit)
{
	if (max >= 1e9) {
		*div = 1e9;
		*unit = "s";
	} else if (max >= 1e6) {
		*div = 1e6;
		*unit = "ms";
	} else if (max >= 1e3) {
		*div = 1e3;
		*unit = "us";
	} else {
		*div = 1;
		*unit = "ns";
	}
}

static void open_svg(const struct kp_chart *ch, int standalone, int w, int h, FILE *fp)
{
	fprintf(fp,
		"<svg class=\"kc\" id=\"chart-%s\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\"",
		ch->name, w, h, w, h);
	if (standalone)
		fputs(" xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\"", fp);
	fputs(">\n", fp);
	if (standalone) {
		title_el(ch->title, fp);
		fputs("\n<style>\n", fp);
		fputs("svg{--bg:#fff;background:#fff}\n", fp);
		svg_css(fp);
		fputs("</style>\n", fp);
		fprintf(fp, "<text class=\"ttl\" x=\"8\" y=\"14\">");
		svg_escape_line(ch->title, fp);
		fputs("</text>\n", fp);
	}
}

static int series_used(const struct kp_chart *ch, int s)
{
	for (size_t i = 0; i < ch->npts; i++)
		if (ch->pts[i].series == s)
			return 1;
	for (size_t i = 0; i < ch->nspans; i++)
		if (ch->spans[i].series == s)
			return 1;
	return 0;
}

/* legend row of the chart's series in use at @y, from @x, wrapping at @w */
static int legend(const struct kp_chart *ch, int x0, int y, int w, FILE *fp)
{
	int x = x0;
	for (int i = 0; i < ch->nseries; i++) {
		if (!series_used(ch, i))
			continue;
		int tw = 30 + 8 * (int)strlen(ch->series[i]);
		if (x + tw > w && x > x0) {
			x = x0;
			y += 16;
		}
		fprintf(fp, "<rect class=\"s%d\" x=\"%d\" y=\"%d\" width=\"10\" height=\"10\"/>", i,
			x, y - 9);
		fprintf(fp, "<text x=\"%d\" y=\"%d\">", x + 14, y);
		svg_escape_line(ch->series[i], fp);
		fputs("</text>\n", fp);
		x += tw;
	}
	return y;
}

static void no_data(int w, int h, FILE *fp)
{
	fprintf(fp,
		"<rect class=\"grid\" x=\"1\" y=\"20\" width=\"%d\" height=\"%d\"/>"
		"<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">no data</text>\n",
		w - 2, h - 22, w / 2, h / 2);
}

/* ---- roofline ---- */

struct logax {
	double lo, hi; /* log10 */
	double p0, p1; /* pixels */
};

static double lmap(const struct logax *a, double v)
{
	return a->p0 + (log10(v) - a->lo) / (a->hi - a->lo) * (a->p1 - a->p0);
}

static int cmp_pt_w_desc(const void *a, const void *b)
{
	const struct kp_cpoint *x = *(const struct kp_cpoint *const *)a,
			       *y = *(const struct kp_cpoint *const *)b;
	return (x->w < y->w) - (x->w > y->w);
}

/* The decade grid and tick labels of the plot box that @ax and @ay span (whole pixels). */
static void decade_grid(const struct logax *ax, const struct logax *ay, FILE *fp)
{
	int L = (int)ax->p0, WR = (int)ax->p1, HB = (int)ay->p0, T = (int)ay->p1;
	char b[64];
	for (double e = ax->lo; e <= ax->hi + 1e-9; e++) {
		double x = lmap(ax, pow(10, e));
		fprintf(fp, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x,
			T, x, HB);
		si_text(b, sizeof(b), pow(10, e));
		fprintf(fp, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x,
			HB + 16, b);
	}
	for (double e = ay->lo; e <= ay->hi + 1e-9; e++) {
		double y = lmap(ay, pow(10, e));
		fprintf(fp, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", L,
			y, WR, y);
		si_text(b, sizeof(b), pow(10, e));
		fprintf(fp, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", L - 6,
			y + 4, b);
	}
}

/* The points with x, y > 0, largest first so small ones stay visible; area ~ w / @wmax. */
static void points(const struct kp_chart *ch, const struct logax *ax, const struct logax *ay,
		   double wmax, FILE *fp)
{
	const struct kp_cpoint **ord = xcalloc(ch->npts + 1, sizeof(*ord));
	size_t n = 0;
	for (size_t i = 0; i < ch->npts; i++)
		if (ch->pts[i].x > 0 && ch->pts[i].y > 0)
			ord[n++] = &ch->pts[i];
	qsort(ord, n, sizeof(*ord), cmp_pt_w_desc);
	for (size_t i = 0; i < n; i++) {
		const struct kp_cpoint *p = ord[i];
		double r = 2.5 + 14 * (wmax > 0 ? sqrt(p->w / wmax) : 0);
		fprintf(fp, "<circle class=\"pt s%d\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\">",
			p->series, lmap(ax, p->x), lmap(ay, p->y), r);
		title_tip(p->tip, p->label, fp);
		fputs("</circle>\n", fp);
	}
	free(ord);
}

/* What the roofline spans: the points with x, y > 0 and the roofs with their ridges. */
struct roof_range {
	double xmin, xmax, ymin, ymax;
	double wmax; /* the largest point's weight */
};

static struct roof_range roof_range(const struct kp_chart *ch)
{
	struct roof_range g = { INFINITY, -INFINITY, INFINITY, -INFINITY, 0 };
	for (size_t i = 0; i < ch->npts; i++) {
		const struct kp_cpoint *p = &ch->pts[i];
		if (!(p->x > 0 && p->y > 0))
			continue;
		g.xmin = fmin(g.xmin, p->x);
		g.xmax = fmax(g.xmax, p->x);
		g.ymin = fmin(g.ymin, p->y);
		g.ymax = fmax(g.ymax, p->y);
		g.wmax = fmax(g.wmax, p->w);
	}
	for (size_t i = 0; i < ch->nmarks; i++) {
		double r = ch->marks[i].v;
		g.ymax = fmax(g.ymax, r);
		g.ymin = fmin(g.ymin, r / 100);
		if (ch->bw > 0) {
			g.xmax = fmax(g.xmax, r / ch->bw * 4);
			g.xmin = fmin(g.xmin, r / ch->bw / 100);
		}
	}
	return g;
}

/* The grid, the plot box, the axis titles, and the opening of the group clipped to the box. */
static void roof_axes(const struct kp_chart *ch, const struct logax *ax, const struct logax *ay,
		      FILE *fp)
{
	int L = (int)ax->p0, WR = (int)ax->p1, HB = (int)ay->p0, T = (int)ay->p1;
	decade_grid(ax, ay, fp);
	fprintf(fp, "<rect class=\"ax\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n", L, T,
		WR - L, HB - T);
	fprintf(fp,
		"<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">arithmetic intensity (FLOP/byte, log)</text>\n",
		(L + WR) / 2, HB + 34);
	fprintf(fp,
		"<text transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">performance (FLOP/s, log)</text>\n",
		(T + HB) / 2);
	/* clip the roofs and points to the plot */
	fprintf(fp,
		"<clipPath id=\"clip-%s\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/></clipPath>\n",
		ch->name, L, T, WR - L, HB - T);
	fprintf(fp, "<g clip-path=\"url(#clip-%s)\">\n", ch->name);
}

/* The DRAM roof up to the highest ridge, and one flat roof per mark from its ridge on. */
static void roofs(const struct kp_chart *ch, const struct logax *ax, const struct logax *ay,
		  FILE *fp)
{
	char b[64];
	double xl = pow(10, ax->lo), xh = pow(10, ax->hi);
	double top = 0;
	for (size_t i = 0; i < ch->nmarks; i++)
		top = fmax(top, ch->marks[i].v);
	if (ch->bw > 0 && top > 0) {
		/* DRAM roof: bw x intensity up to the highest ridge */
		double xr = top / ch->bw;
		fprintf(fp, "<line class=\"roof\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\">",
			lmap(ax, xl), lmap(ay, ch->bw * xl), lmap(ax, xr), lmap(ay, top));
		units_rate(b, sizeof(b), ch->bw, "B/s");
		fprintf(fp, "<title>DRAM roof %s</title></line>\n", b);
	}
	for (size_t i = 0; i < ch->nmarks; i++) {
		double v = ch->marks[i].v, xr = ch->bw > 0 ? v / ch->bw : xl;
		fprintf(fp, "<line class=\"roof\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\">",
			lmap(ax, xr), lmap(ay, v), lmap(ax, xh), lmap(ay, v));
		title_el(ch->marks[i].label, fp);
		fputs("</line>\n", fp);
	}
}

/* Ridge points and roof labels (outside the clip, right margin), and the DRAM roof's label. */
static void roof_labels(const struct kp_chart *ch, const struct logax *ax, const struct logax *ay,
			FILE *fp)
{
	int WR = (int)ax->p1;
	char b[64];
	char **shown = marks_short(ch, 26);
	for (size_t i = 0; i < ch->nmarks; i++) {
		double v = ch->marks[i].v;
		if (ch->bw > 0) {
			double xr = v / ch->bw;
			fprintf(fp,
				"<circle class=\"ridge\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\"><title>ridge point: ",
				lmap(ax, xr), lmap(ay, v));
			svg_escape_line(ch->marks[i].label, fp);
			fprintf(fp, " at %.1f FLOP/byte</title></circle>\n", xr);
		}
		fprintf(fp, "<text class=\"sm\" x=\"%d\" y=\"%.1f\">", WR + 4,
			lmap(ay, v) + 3 + 11.0 * 0);
		title_el(ch->marks[i].label, fp);
		svg_escape_line(shown[i], fp);
		fputs("</text>\n", fp);
	}
	free_labels(shown, ch->nmarks);
	if (ch->bw > 0) {
		units_rate(b, sizeof(b), ch->bw, "B/s");
		/* the label sits just above where the DRAM roof enters the plot */
		double xv = fmax(pow(10, ax->lo), pow(10, ay->lo) / ch->bw) * 30;
		fprintf(fp,
			"<text class=\"sm\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">DRAM %s</text>\n",
			lmap(ax, xv) - 6, lmap(ay, ch->bw * xv) - 6, b);
	}
}

static void roofline(const struct kp_chart *ch, int standalone, FILE *fp)
{
	const int W = 760, H = 470, L = 72, R = 150, T = 28, B = 86;
	struct roof_range g = roof_range(ch);
	open_svg(ch, standalone, W, H, fp);
	if (!(g.xmin <= g.xmax) || !(g.ymin <= g.ymax)) {
		no_data(W, H, fp);
		fputs("</svg>\n", fp);
		return;
	}
	struct logax ax = { floor(log10(g.xmin / 1.5)), ceil(log10(g.xmax * 1.5)), L, W - R };
	struct logax ay = { floor(log10(g.ymin)), ceil(log10(g.ymax * 1.2)), H - B, T };
	if (ax.hi <= ax.lo)
		ax.hi = ax.lo + 1;
	if (ay.hi <= ay.lo)
		ay.hi = ay.lo + 1;
	roof_axes(ch, &ax, &ay, fp);
	roofs(ch, &ax, &ay, fp);
	points(ch, &ax, &ay, g.wmax, fp);
	fputs("</g>\n", fp);
	roof_labels(ch, &ax, &ay, fp);
	legend(ch, L, H - B + 56, W - 10, fp);
	fprintf(fp, "<text class=\"sm\" x=\"%d\" y=\"%d\">circle area ~ GPU time</text>\n",
		W - R + 4, H - B + 34);
	fputs("</svg>\n", fp);
}

/* ---- horizontal time bars: top ops, waterfall ---- */

static int64_t lane_total(const struct kp_chart *ch, int lane)
{
	int64_t t = 0;
	for (size_t i = 0; i < ch->nspans; i++)
		if (ch->spans[i].lane == lane && ch->spans[i].t1 > t)
			t = ch->spans[i].t1;
	return t;
}

/* x axis ticks for [lo, hi] ns over pixels [p0, p1] at y @y */
static void time_axis(double lo, double hi, double p0, double p1, int y, int ytop, const char *what,
		      FILE *fp)
{
	double div;
	const char *unit;
	time_unit(fmax(fabs(lo), fabs(hi)), &div, &unit);
	double step = nice_step((hi - lo) / div, 6);
	for (double v = ceil(lo / div / step) * step; v <= hi / div + 1e-9; v += step) {
		double x = p0 + (v * div - lo) / (hi - lo) * (p1 - p0);
		fprintf(fp, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x,
			ytop, x, y);
		fprintf(fp, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", x,
			y + 14, fabs(v) < step / 1e6 ? 0 : v);
	}
	fprintf(fp, "<line class=\"ax\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", p0, y, p1,
		y);
	fprintf(fp, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s (%s)</text>\n",
		(p0 + p1) / 2, y + 30, what, unit);
}

static void top_bars(const struct kp_chart *ch, int standalone, FILE *fp)
{
	const int W = 760, L = 250, R = 80, T = 28, RH = 22;
	int nl = (int)ch->nlanes;
	int H = T + nl * RH + 48 + 20 * ((ch->nseries + 5) / 6);
	open_svg(ch, standalone, W, H, fp);
	int64_t max = 0;
	for (int l = 0; l < nl; l++)
		if (lane_total(ch, l) > max)
			max = lane_total(ch, l);
	if (!nl || max <= 0) {
		no_data(W, H, fp);
		fputs("</svg>\n", fp);
		return;
	}
	int yax = T + nl * RH + 4;
	time_axis(0, (double)max, L, W - R, yax, T, "GPU time", fp);
	char b[64], tip[1024];
	struct kp_visbuf vl = { 0 }, vk = { 0 };
	int *seg = xcalloc((size_t)nl, sizeof(*seg));
	for (size_t i = 0; i < ch->nspans; i++) {
		const struct kp_cspan *s = &ch->spans[i];
		double x0 = L + (double)s->t0 / max * (W - R - L),
		       x1 = L + (double)s->t1 / max * (W - R - L);
		int y = T + s->lane * RH + 3;
		double op = seg[s->lane]++ % 2 ? 0.6 : 1.0;
		fprintf(fp,
			"<rect class=\"s%d\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill-opacity=\"%.1f\" stroke=\"none\">",
			s->series, x0, y, fmax(x1 - x0, 0.5), RH - 6, op);
		int64_t tot = lane_total(ch, s->lane);
		snprintf(tip, sizeof(tip), "%s\n%s: %s (%.1f%% of the op)",
			 utf8_visible(ch->lanes[s->lane], &vl), utf8_visible(s->label ? s->label : "", &vk),
			 units_time(b, sizeof(b), s->t1 - s->t0),
			 tot ? 100.0 * (double)(s->t1 - s->t0) / (double)tot : 0);
		title_tip(tip, NULL, fp);
		fputs("</rect>\n", fp);
	}
	utf8_visible_free(&vl);
	utf8_visible_free(&vk);
	free(seg);
	char **shown = svg_short_labels((const char *const *)ch->lanes, (size_t)nl, 30);
	for (int l = 0; l < nl; l++) {
		int y = T + l * RH + RH / 2 + 4;
		fprintf(fp, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", L - 6, y);
		title_el(ch->lanes[l], fp);
		svg_escape_line(shown[l], fp);
		fputs("</text>", fp);
		double x = L + (double)lane_total(ch, l) / max * (W - R - L);
		fprintf(fp, "<text class=\"sm\" x=\"%.1f\" y=\"%d\">%s</text>\n", x + 4, y,
			units_time(b, sizeof(b), lane_total(ch, l)));
	}
	free_labels(shown, (size_t)nl);
	legend(ch, 8, yax + 50, W - 10, fp);
	fputs("</svg>\n", fp);
}

/* The waterfall's layout: rows from @T, @RH apart; times a0..a1 across pixels L..WR. */
struct wf_geom {
	int L, WR, T, RH;
	double a0, a1;
};

static double wf_x(const struct wf_geom *g, double v)
{
	return g->L + (v - g->a0) / (g->a1 - g->a0) * (g->WR - g->L);
}

/*
 * The time axis of the @n points: the first point is the base total, the last the new
 * total, the others deltas; the axis starts near the smallest running total so the deltas
 * are visible.
 */
static void wf_range(const struct kp_chart *ch, int n, struct wf_geom *g)
{
	double run = ch->pts[0].x, lo = run, hi = run;
	for (int i = 1; i < n - 1; i++) {
		run += ch->pts[i].x;
		lo = fmin(lo, run);
		hi = fmax(hi, run);
	}
	lo = fmin(lo, ch->pts[n - 1].x);
	hi = fmax(hi, ch->pts[n - 1].x);
	double pad = (hi - lo) * 0.15 + 1;
	g->a0 = lo - pad > hi * 0.05 ? lo - pad : 0;
	g->a1 = hi + pad;
}

/*
 * Point @i's bar from *v0 to *v1: a total (first, last) from the axis start, a delta from the
 * running total *run, which it moves on.  Returns the bar's class.
 */
static const char *wf_span(const struct kp_chart *ch, int i, double a0, double *run, double *v0,
			   double *v1)
{
	const struct kp_cpoint *p = &ch->pts[i];
	if (i == 0 || i == (int)ch->npts - 1) {
		*v0 = a0;
		*v1 = p->x;
		*run = p->x;
		return "tot";
	}
	*v0 = *run;
	*v1 = *run + p->x;
	*run = *v1;
	return p->x > 0 ? "bad" : "good";
}

/* Row @i: the bar and its tooltip, the connector to the next delta, the label, the value. */
static void wf_row(const struct kp_chart *ch, int i, const struct wf_geom *g, double *run,
		   const char *shown, FILE *fp)
{
	const struct kp_cpoint *p = &ch->pts[i];
	int n = (int)ch->npts, delta = i > 0 && i < n - 1, y = g->T + i * g->RH + 3;
	double v0, v1;
	const char *cls = wf_span(ch, i, g->a0, run, &v0, &v1);
	double x0 = wf_x(g, fmin(v0, v1)), x1 = wf_x(g, fmax(v0, v1));
	const char *sign = delta && p->x > 0 ? "+" : "";
	char b[64], tip[1024];

	fprintf(fp, "<rect class=\"%s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\">", cls, x0,
		y, fmax(x1 - x0, 1), g->RH - 6);
	snprintf(tip, sizeof(tip), "%s: %s%s", p->label, sign,
		 units_time(b, sizeof(b), (int64_t)p->x));
	title_tip(p->tip, tip, fp);
	fputs("</rect>", fp);
	if (delta && i + 1 < n - 1)
		fprintf(fp, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>",
			wf_x(g, v1), y + g->RH - 6, wf_x(g, v1), y + g->RH);
	fprintf(fp, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", g->L - 6, y + g->RH / 2 + 1);
	title_el(p->label, fp);
	svg_escape_line(shown, fp);
	fputs("</text>", fp);
	fprintf(fp, "<text class=\"sm\" x=\"%.1f\" y=\"%d\">%s%s</text>\n", x1 + 4,
		y + g->RH / 2 + 1, sign, units_time(b, sizeof(b), (int64_t)p->x));
}

static void waterfall(const struct kp_chart *ch, int standalone, FILE *fp)
{
	const int W = 760, L = 250, R = 90, T = 28, RH = 22;
	int n = (int)ch->npts;
	int H = T + n * RH + 60;
	open_svg(ch, standalone, W, H, fp);
	if (n < 2) {
		no_data(W, H, fp);
		fputs("</svg>\n", fp);
		return;
	}
	struct wf_geom g = { L, W - R, T, RH, 0, 0 };
	wf_range(ch, n, &g);
	time_axis(g.a0, g.a1, L, W - R, T + n * RH + 4, T, "GPU time", fp);
	if (g.a0 > 0)
		fprintf(fp,
			"<text class=\"sm\" x=\"%d\" y=\"%d\" text-anchor=\"end\">axis does not start at 0</text>\n",
			W - R, T - 6);
	double run = 0;
	char **shown = pts_short(ch, 30);
	for (int i = 0; i < n; i++)
		wf_row(ch, i, &g, &run, shown[i], fp);
	free_labels(shown, ch->npts);
	fputs("</svg>\n", fp);
}

/* ---- dumbbell: base vs new TFLOP/s per paired row ---- */

static void dumbbell(const struct kp_chart *ch, int standalone, FILE *fp)
{
	const int W = 760, L = 250, R = 60, T = 40, RH = 20;
	int n = (int)ch->npts;
	int H = T + n * RH + 50;
	open_svg(ch, standalone, W, H, fp);
	double max = 0;
	for (int i = 0; i < n; i++)
		max = fmax(max, fmax(ch->pts[i].x, ch->pts[i].y));
	if (!n || max <= 0) {
		no_data(W, H, fp);
		fputs("</svg>\n", fp);
		return;
	}
	double step = nice_step(max / 1e12, 6), hi = ceil(max / 1e12 / step) * step;
	int yax = T + n * RH + 4;
	for (double v = 0; v <= hi + 1e-9; v += step) {
		double x = L + v / hi * (W - R - L);
		fprintf(fp, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x,
			T, x, yax);
		fprintf(fp, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", x,
			yax + 14, v);
	}
	fprintf(fp, "<line class=\"ax\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", L, yax, W - R,
		yax);
	fprintf(fp, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">achieved TFLOP/s</text>\n",
		(L + W - R) / 2, yax + 30);
	fprintf(fp,
		"<circle class=\"base\" cx=\"%d\" cy=\"%d\" r=\"5\"/><text x=\"%d\" y=\"%d\">base</text>"
		"<circle class=\"good\" cx=\"%d\" cy=\"%d\" r=\"5\"/><text x=\"%d\" y=\"%d\">new, faster</text>"
		"<circle class=\"bad\" cx=\"%d\" cy=\"%d\" r=\"5\"/><text x=\"%d\" y=\"%d\">new, slower</text>\n",
		L, T - 14, L + 8, T - 10, L + 60, T - 14, L + 68, T - 10, L + 170, T - 14, L + 178,
		T - 10);
	char tip[1024];
	char **shown = pts_short(ch, 30);
	for (int i = 0; i < n; i++) {
		const struct kp_cpoint *p = &ch->pts[i];
		double xb = L + p->x / 1e12 / hi * (W - R - L),
		       xn = L + p->y / 1e12 / hi * (W - R - L);
		int y = T + i * RH + RH / 2;
		snprintf(tip, sizeof(tip), "%s: %.1f -> %.1f TFLOP/s (%.2fx)", p->label,
			 p->x / 1e12, p->y / 1e12, p->x > 0 ? p->y / p->x : 0);
		fprintf(fp, "<g><line class=\"link\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>",
			xb, y, xn, y);
		fprintf(fp, "<circle class=\"base\" cx=\"%.1f\" cy=\"%d\" r=\"5\"/>", xb, y);
		fprintf(fp, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%d\" r=\"5\"/>",
			p->y >= p->x ? "good" : "bad", xn, y);
		title_tip(p->tip, tip, fp);
		fprintf(fp, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", L - 8, y + 4);
		title_el(p->label, fp);
		svg_escape_line(shown[i], fp);
		fputs("</text></g>\n", fp);
	}
	free_labels(shown, ch->npts);
	fputs("</svg>\n", fp);
}

/* ---- GPU timeline: one lane per stream ---- */

static void timeline(const struct kp_chart *ch, int standalone, FILE *fp)
{
	const int W = 760, L = 110, R = 20, T = 40, RH = 18;
	int nl = (int)ch->nlanes;
	int H = T + nl * (RH + 4) + 48 + 20 * ((ch->nseries + 5) / 6);
	open_svg(ch, standalone, W, H, fp);
	if (!nl || ch->x1 <= 0) {
		no_data(W, H, fp);
		fputs("</svg>\n", fp);
		return;
	}
	double span = (double)ch->x1, pw = W - R - L;
	int yax = T + nl * (RH + 4);
	time_axis(0, span, L, W - R, yax, T, "time since the first GPU event", fp);
	char **lanes = svg_short_labels((const char *const *)ch->lanes, (size_t)nl, 16);
	for (int l = 0; l < nl; l++) {
		int y = T + l * (RH + 4);
		fprintf(fp,
			"<rect class=\"lane\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"><title>idle</title></rect>",
			L, y, (int)pw, RH);
		fprintf(fp, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", L - 6, y + RH - 5);
		title_el(ch->lanes[l], fp);
		svg_escape_line(lanes[l], fp);
		fputs("</text>\n", fp);
	}
	free_labels(lanes, (size_t)nl);
	char b[64], tip[512];
	for (size_t i = 0; i < ch->nspans; i++) {
		const struct kp_cspan *s = &ch->spans[i];
		double x0 = L + (double)s->t0 / span * pw, x1 = L + (double)s->t1 / span * pw;
		int y = T + s->lane * (RH + 4);
		fprintf(fp,
			"<rect class=\"s%d\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill-opacity=\"%.2f\" stroke=\"none\">",
			s->series, x0, y, fmax(x1 - x0, 0.3), RH,
			0.3 + 0.7 * fmin(fmax(s->fill, 0), 1));
		snprintf(tip, sizeof(tip), "%s, %s busy %.0f%% from %s", s->label ? s->label : "",
			 ch->series[s->series], 100 * s->fill, units_time(b, sizeof(b), s->t0));
		title_el(tip, fp);
		fputs("</rect>\n", fp);
	}
	double lastx = -1e9;
	char **marks = marks_short(ch, 12);
	for (size_t i = 0; i < ch->nmarks; i++) {
		double x = L + ch->marks[i].v / span * pw;
		fprintf(fp, "<line class=\"step\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\">", x,
			T - 6, x, yax);
		title_el(ch->marks[i].label, fp);
		fputs("</line>", fp);
		if (x - lastx > 50) {
			fprintf(fp, "<text class=\"sm\" x=\"%.1f\" y=\"%d\">", x + 2, T - 8);
			title_el(ch->marks[i].label, fp);
			svg_escape_line(marks[i], fp);
			fputs("</text>", fp);
			lastx = x;
		}
		fputc('\n', fp);
	}
	free_labels(marks, ch->nmarks);
	legend(ch, 8, yax + 50, W - 10, fp);
	fputs("</svg>\n", fp);
}

/* ---- icicle: GPU time by module path ---- */

#define IC_CHAR_PX 7.0 /* width of a label character at 11px, for eliding */

/* A box's fill: a light tint (far from the peak) to the full hue (at it), by series. */
static void icicle_fill(int series, double fill, char *b, size_t cap)
{
	static const int lo[2][3] = { { 0xc4, 0xda, 0xee }, { 0xf8, 0xdc, 0xb0 } };
	static const int hi[2][3] = { { 0x2c, 0x7f, 0xc0 }, { 0xe0, 0x8a, 0x00 } };
	if (series == 2 || series == 3) {
		snprintf(b, cap, series == 2 ? "#cfcfcf" : "#ececec");
		return;
	}
	double f = fmin(fmax(fill, 0), 1);
	int c[3];
	for (int k = 0; k < 3; k++)
		c[k] = (int)lround(lo[series][k] + (hi[series][k] - lo[series][k]) * f);
	snprintf(b, cap, "#%02x%02x%02x", c[0], c[1], c[2]);
}

/* @s cut to what fits in @w pixels: head, ellipsis, a third for the tail; "" when a cut
   would keep under 6 characters. */
static char *icicle_label(const char *s, double w)
{
	long k = (long)((w - 5) / IC_CHAR_PX);
	size_t n = strlen(s), chars = 0;
	for (size_t i = 0; i < n; i++)
		chars += !utf8_cont(s, i);
	if (k >= 1 && chars <= (size_t)k)
		return xstrdup(s);
	if (k < 6) /* "Li…4", "[b…]" say little: the hover text has it */
		return xstrdup("");
	/* bytes ~ characters for the names here; cut_label keeps UTF-8 whole */
	return cut_label(s, (size_t)k - 1, (size_t)(k - 1) / 3, ""); /* + the ellipsis: k */
}

/* One box: <g> with its tip, rect and label (data-n: the name when the label is cut). */
static void icicle_box(const struct kp_chart *ch, const struct kp_cspan *s, int L, int T, int RH,
		       FILE *fp)
{
	double x0 = L + (double)s->t0 / (double)ch->x1 * CHART_ICICLE_PX,
	       w = (double)(s->t1 - s->t0) / (double)ch->x1 * CHART_ICICLE_PX;
	int y = T + s->lane * RH;
	char fill[16];
	icicle_fill(s->series, s->fill, fill, sizeof(fill));
	const char *name = s->label ? s->label : "";
	char *shown = icicle_label(name, w);
	fprintf(fp, "<g class=\"ib%s\" data-a=\"%" PRId64 "\" data-b=\"%" PRId64 "\" data-d=\"%d\"",
		s->series == 3 ? " io" : "", s->t0, s->t1, s->lane);
	if (strcmp(shown, name)) {
		fputs(" data-n=\"", fp);
		svg_escape_line(name, fp);
		fputc('"', fp);
	}
	fputc('>', fp);
	title_tip(s->tip, name, fp);
	fprintf(fp, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>", x0, y,
		fmax(w, 0.5), RH - 1, fill);
	fprintf(fp, "<text x=\"%.1f\" y=\"%d\">", x0 + 3, y + RH - 6);
	svg_escape_line(shown, fp);
	fputs("</text></g>\n", fp);
	free(shown);
}

static void icicle(const struct kp_chart *ch, int standalone, FILE *fp)
{
	const int L = 8, RH = 18, W = CHART_ICICLE_PX + 2 * L;
	int T = standalone ? 52 : 30, depth = 0;
	for (size_t i = 0; i < ch->nspans; i++)
		depth = ch->spans[i].lane + 1 > depth ? ch->spans[i].lane + 1 : depth;
	int H = T + (depth ? depth : 4) * RH + 8;
	/* as open_svg, with what the html script needs to zoom */
	fprintf(fp,
		"<svg class=\"kc ic\" id=\"chart-%s\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" data-l=\"%d\" data-w=\"%d\"",
		ch->name, W, H, W, H, L, CHART_ICICLE_PX);
	if (standalone)
		fputs(" xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\"", fp);
	fputs(">\n", fp);
	if (standalone) {
		title_el(ch->title, fp);
		fputs("\n<style>\nsvg{--bg:#fff;background:#fff}\n", fp);
		svg_css(fp);
		fputs("</style>\n<text class=\"ttl\" x=\"8\" y=\"14\">", fp);
		svg_escape_line(ch->title, fp);
		fputs("</text>\n", fp);
	}
	/* legend: the four kinds of box, and what the shade says */
	static const char *const key[] = { "compute-bound", "memory-bound",
					   "no FLOPs or bytes modelled", "(others)" };
	int x = L, ly = T - 10;
	char fill[16];
	for (int k = 0; k < 4; k++) {
		icicle_fill(k, 0.7, fill, sizeof(fill));
		fprintf(fp,
			"<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n",
			x, ly - 9, fill, x + 14, ly, key[k]);
		x += 30 + 7 * (int)strlen(key[k]);
	}
	fprintf(fp, "<text class=\"sm\" x=\"%d\" y=\"%d\">darker: nearer the peak</text>\n", x, ly);
	if (!ch->nspans || ch->x1 <= 0) {
		fprintf(fp,
			"<text x=\"%d\" y=\"%d\">no module frames: record with torch.profiler.profile(with_stack=True, with_modules=True)</text>\n",
			L, T + 2 * RH);
		fputs("</svg>\n", fp);
		return;
	}
	for (size_t i = 0; i < ch->nspans; i++)
		icicle_box(ch, &ch->spans[i], L, T, RH, fp);
	fputs("</svg>\n", fp);
}

/* ---- memory: allocated and reserved over time, one device ---- */

/* The memory chart's plot: times 0..x1 across L..WR, bytes 0..ymax up from B to T. */
struct mem_geom {
	double L, WR, T, B;
	double x1, ymax;
};

static double mem_x(const struct mem_geom *g, double t)
{
	return g->L + t / g->x1 * (g->WR - g->L);
}

static double mem_y(const struct mem_geom *g, double v)
{
	return g->B - v / g->ymax * (g->B - g->T);
}

/* The byte axis: grid lines and "128 MiB" labels at a nice step of a binary unit. */
static void bytes_axis(const struct mem_geom *g, FILE *fp)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;
	double div = 1;
	while (u < 4 && g->ymax / div >= 1024) {
		div *= 1024;
		u++;
	}
	double step = nice_step(g->ymax / div, 5);
	for (double v = 0; v * div <= g->ymax * (1 + 1e-9); v += step) {
		double y = mem_y(g, v * div);
		fprintf(fp, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
			g->L, y, g->WR, y);
		fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g %s</text>\n",
			g->L - 6, y + 4, v, unit[u]);
	}
	fprintf(fp, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", g->L,
		g->T, g->L, g->B);
}

/* A step path through the curve's points (series 0): @res draws w (reserved), else y. */
static void mem_path(const struct kp_chart *ch, const struct mem_geom *g, int res, int area,
		     FILE *fp)
{
	int open = 0;
	double x = 0;
	for (size_t i = 0; i < ch->npts; i++) {
		const struct kp_cpoint *p = &ch->pts[i];
		double v = res ? p->w : p->y;
		if (p->series || v < 0)
			continue;
		x = mem_x(g, p->x);
		if (!open)
			fprintf(fp, "<path class=\"%s\" d=\"M%.1f %.1f", area ? "ma" : res ? "mr" : "ml",
				x, area ? g->B : mem_y(g, v));
		if (area && !open)
			fprintf(fp, "V%.1f", mem_y(g, v));
		else if (open)
			fprintf(fp, "H%.1fV%.1f", x, mem_y(g, v));
		open = 1;
	}
	if (!open)
		return;
	/* the level holds to the axis' end */
	fprintf(fp, "H%.1f", g->WR);
	if (area)
		fprintf(fp, "V%.1fZ", g->B);
	fputs("\"/>\n", fp);
}

/* Optimizer.step bands (lane 1) and ProfilerStep lines (marks), under the curves. */
static void mem_steps(const struct kp_chart *ch, const struct mem_geom *g, FILE *fp)
{
	for (size_t i = 0; i < ch->nspans; i++) {
		const struct kp_cspan *s = &ch->spans[i];
		if (s->lane != 1)
			continue;
		double x0 = mem_x(g, (double)s->t0), x1 = mem_x(g, (double)s->t1);
		fprintf(fp,
			"<rect class=\"opt\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
			x0, g->T, fmax(x1 - x0, 1), g->B - g->T);
		if (x1 - x0 > 92)
			fprintf(fp, "<text class=\"sm\" x=\"%.1f\" y=\"%.1f\">Optimizer.step</text>",
				x0 + 3, g->T + 11);
		fputc('\n', fp);
	}
	double lastx = -1e9;
	for (size_t i = 0; i < ch->nmarks; i++) {
		double x = mem_x(g, ch->marks[i].v);
		fprintf(fp, "<line class=\"step\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
			x, g->T - 4, x, g->B);
		if (x - lastx > 50) {
			fprintf(fp, "<text class=\"sm\" x=\"%.1f\" y=\"%.1f\">", x + 2, g->T - 6);
			svg_escape_line(ch->marks[i].label, fp);
			fputs("</text>", fp);
			lastx = x;
		}
		fputc('\n', fp);
	}
}

/* The hover bands (lane 0, their tips), then the peak's dot and label on top. */
static void mem_hover_peak(const struct kp_chart *ch, const struct mem_geom *g, FILE *fp)
{
	for (size_t i = 0; i < ch->nspans; i++) {
		const struct kp_cspan *s = &ch->spans[i];
		if (s->lane != 0)
			continue;
		double x0 = mem_x(g, (double)s->t0), x1 = mem_x(g, (double)s->t1);
		fprintf(fp,
			"<rect class=\"hv\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\">", x0,
			g->T, fmax(x1 - x0, 0.5), g->B - g->T);
		title_tip(s->tip, "", fp);
		fputs("</rect>\n", fp);
	}
	const struct kp_cpoint *p = ch->npts ? &ch->pts[ch->npts - 1] : NULL;
	if (!p || p->series != 2)
		return;
	double x = mem_x(g, p->x), y = mem_y(g, p->y);
	char b[32], lab[256];
	snprintf(lab, sizeof(lab), "peak %s%s%s", memory_bytes(b, sizeof(b), (int64_t)p->y),
		 p->label ? " in " : "", p->label ? p->label : "");
	char **shown = svg_short_labels((const char *const[]){ lab }, 1, 60);
	int right = x > (g->L + g->WR) / 2;
	fprintf(fp, "<g class=\"pk\"><circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\">", x, y);
	title_tip(p->tip, lab, fp);
	fprintf(fp, "</circle><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", right ? x - 8 : x + 8,
		fmax(y - 8, g->T + 12), right ? "end" : "start");
	title_tip(p->tip, lab, fp);
	svg_escape_line(shown[0], fp);
	fputs("</text></g>\n", fp);
	free_labels(shown, 1);
}

/* The legend of the memory chart, at @y from @x. */
static void mem_legend(const struct kp_chart *ch, int x, int y, FILE *fp)
{
	int opt = 0;
	for (size_t i = 0; i < ch->nspans; i++)
		opt |= ch->spans[i].lane == 1;
	fprintf(fp,
		"<path class=\"ml\" d=\"M%d %dh16\"/><text x=\"%d\" y=\"%d\">allocated</text>"
		"<path class=\"mr\" d=\"M%d %dh16\"/><text x=\"%d\" y=\"%d\">reserved</text>"
		"<g class=\"pk\"><circle cx=\"%d\" cy=\"%d\" r=\"4.5\"/></g><text x=\"%d\" y=\"%d\">peak</text>",
		x, y - 4, x + 20, y, x + 100, y - 4, x + 120, y, x + 196, y - 4, x + 204, y);
	x += 250;
	if (opt) {
		fprintf(fp,
			"<rect class=\"opt\" x=\"%d\" y=\"%d\" width=\"12\" height=\"10\"/><text x=\"%d\" y=\"%d\">Optimizer.step</text>",
			x, y - 9, x + 16, y);
		x += 130;
	}
	if (ch->nmarks)
		fprintf(fp,
			"<line class=\"step\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/><text x=\"%d\" y=\"%d\">ProfilerStep start</text>",
			x + 5, y - 10, x + 5, y + 2, x + 12, y);
	fputc('\n', fp);
}

/* @s in small lines of at most @max bytes from (@x, @y), cut after "; " or ", " where it can. */
static void note_lines(const char *s, int x, int y, size_t max, FILE *fp)
{
	char line[256];
	while (*s) {
		size_t n = strlen(s), cut = n;
		if (n > max) {
			cut = max;
			while (cut > max / 2 && !(s[cut - 1] == ' ' && (s[cut - 2] == ';' || s[cut - 2] == ',')))
				cut--;
			if (cut <= max / 2)
				for (cut = max; cut > 1 && s[cut - 1] != ' '; cut--)
					;
		}
		if (cut >= sizeof(line))
			cut = sizeof(line) - 1;
		memcpy(line, s, cut);
		line[cut] = 0;
		fprintf(fp, "<text class=\"sm\" x=\"%d\" y=\"%d\">", x, y);
		svg_escape_line(line, fp);
		fputs("</text>\n", fp);
		s += cut;
		y += 13;
	}
}

static void memory_chart(const struct kp_chart *ch, int standalone, FILE *fp)
{
	const int W = 760, H = standalone ? 420 : 380, T = standalone ? 82 : 42;
	struct mem_geom g = { 78, W - 20, T, H - 62, (double)(ch->x1 > 0 ? ch->x1 : 1), 0 };
	open_svg(ch, standalone, W, H, fp);
	if (standalone && ch->note) /* the html page has it above the figure */
		note_lines(ch->note, 8, 30, 120, fp);
	for (size_t i = 0; i < ch->npts; i++)
		g.ymax = fmax(g.ymax, fmax(ch->pts[i].y, ch->pts[i].w));
	if (!ch->npts || g.ymax <= 0) {
		fprintf(fp, "<text x=\"%d\" y=\"%d\">no GPU [memory] events: record with torch.profiler.profile(profile_memory=True)</text>\n",
			8, T + 20);
		fputs("</svg>\n", fp);
		return;
	}
	g.ymax *= 1.12; /* room for the peak's label */
	mem_legend(ch, (int)g.L, T - 22, fp);
	bytes_axis(&g, fp);
	time_axis(0, g.x1, g.L, g.WR, (int)g.B, (int)g.T, "time since the trace's first event", fp);
	mem_steps(ch, &g, fp);
	mem_path(ch, &g, 0, 1, fp);
	mem_path(ch, &g, 1, 0, fp);
	mem_path(ch, &g, 0, 0, fp);
	mem_hover_peak(ch, &g, fp);
	fputs("</svg>\n", fp);
}

/* ---- lines: capture results, shapes on x, one line per backend ---- */

#define LINES_LABEL 34 /* x labels cut to this many bytes (svg_short_labels()) */

/* legend rows legend() takes for @ch at width @w from @x0 */
static int legend_rows(const struct kp_chart *ch, int x0, int w)
{
	int x = x0, rows = 1;
	for (int i = 0; i < ch->nseries; i++) {
		if (!series_used(ch, i))
			continue;
		int tw = 30 + 8 * (int)strlen(ch->series[i]);
		if (x + tw > w && x > x0) {
			x = x0;
			rows++;
		}
		x += tw;
	}
	return rows;
}

struct lgeom {
	int L, R, T, B; /* plot box */
	double hi;      /* top of the y axis, yunit */
	size_t n;       /* x positions */
};

static double lx(const struct lgeom *g, double i)
{
	return g->L + (i + 0.5) * (g->R - g->L) / (double)g->n;
}

static double ly(const struct lgeom *g, double v)
{
	return g->B - v / g->hi * (g->B - g->T);
}

static void lines_axes(const struct kp_chart *ch, const struct lgeom *g, int rot, FILE *fp)
{
	double step = nice_step(g->hi, 6);
	for (double v = 0; v <= g->hi + 1e-9 * g->hi; v += step) {
		double y = ly(g, v);
		fprintf(fp, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", g->L,
			y, g->R, y);
		fprintf(fp, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", g->L - 6,
			y + 4, v);
	}
	fprintf(fp,
		"<path class=\"ax\" d=\"M%d %d V%d H%d\"/>\n"
		"<text transform=\"translate(14 %d) rotate(-90)\" text-anchor=\"middle\">",
		g->L, g->T, g->B, g->R, (g->T + g->B) / 2);
	svg_escape_line(ch->yunit ? ch->yunit : "", fp);
	fputs("</text>\n", fp);
	char **shown = svg_short_labels(ch->lanes, ch->nlanes, LINES_LABEL);
	for (size_t i = 0; i < ch->nlanes; i++) {
		double x = lx(g, (double)i);
		if (rot)
			fprintf(fp,
				"<text class=\"sm\" transform=\"translate(%.1f %d) rotate(-40)\" "
				"text-anchor=\"end\">",
				x + 3, g->B + 14);
		else
			fprintf(fp, "<text class=\"sm\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", x,
				g->B + 16);
		title_el(ch->lanes[i], fp);
		svg_escape_line(shown[i], fp);
		fputs("</text>\n", fp);
	}
	free_labels(shown, ch->nlanes);
}

static void lines_peaks(const struct kp_chart *ch, const struct lgeom *g, FILE *fp)
{
	for (size_t i = 0; i < ch->nmarks; i++) {
		double y = ly(g, ch->marks[i].v);
		fprintf(fp,
			"<g><line class=\"peak\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
			"<text class=\"sm\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">",
			g->L, y, g->R, y, g->R - 4, y - 4);
		svg_escape_line(ch->marks[i].label, fp);
		fputs("</text>", fp);
		title_el(ch->marks[i].label, fp);
		fputs("</g>\n", fp);
	}
}

static void lines_series(const struct kp_chart *ch, const struct lgeom *g, FILE *fp)
{
	for (int s = 0; s < ch->nseries; s++) {
		int open = 0;
		for (size_t x = 0; x < g->n; x++)
			for (size_t i = 0; i < ch->npts; i++)
				if (ch->pts[i].series == s && ch->pts[i].x == (double)x) {
					if (!open)
						fprintf(fp, "<polyline class=\"ln s%d\" points=\"", s);
					fprintf(fp, "%s%.1f,%.1f", open ? " " : "", lx(g, (double)x),
						ly(g, ch->pts[i].y));
					open = 1;
					break;
				}
		if (open)
			fputs("\"/>\n", fp);
	}
	for (size_t i = 0; i < ch->npts; i++) {
		const struct kp_cpoint *p = &ch->pts[i];
		double x = lx(g, p->x), y = ly(g, p->y);
		fprintf(fp, "<g><circle class=\"s%d\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\"/>", p->series,
			x, y);
		if (p->flag)
			fprintf(fp, "<circle class=\"fail\" cx=\"%.1f\" cy=\"%.1f\" r=\"7\"/>", x, y);
		title_tip(p->tip, p->label, fp);
		fputs("</g>\n", fp);
	}
}

static void lines(const struct kp_chart *ch, int standalone, FILE *fp)
{
	const int W = 760;
	size_t longest = 0;
	for (size_t i = 0; i < ch->nlanes; i++)
		longest = fmax(longest, strlen(ch->lanes[i]));
	if (longest > LINES_LABEL)
		longest = LINES_LABEL;
	struct lgeom g = { .L = 64, .R = W - 16, .n = ch->nlanes };
	double half = ch->nlanes ? (g.R - g.L) / 2.0 / (double)ch->nlanes : 0;
	/* labels rotated 40 degrees when they do not fit their slot; 6 px a character */
	int rot = ch->nlanes && longest * 6.5 > 2 * half;
	if (rot && longest * 6 * 0.77 > g.L + half - 8)
		g.L = (int)(longest * 6 * 0.77 - half + 8);
	/* the standalone svg's note (html prints it above the figure) and legend rows */
	int note = standalone && ch->note;
	int nl = legend_rows(ch, 8, W), xlab = rot ? (int)(longest * 6 * 0.65) + 24 : 28;
	int top = standalone ? 30 + (note ? 16 : 0) : 2; /* below the title and note */
	g.T = top + 16 * nl + 14;
	g.B = g.T + 260;
	int H = g.B + xlab + 8;
	open_svg(ch, standalone, W, H, fp);
	if (note) {
		fprintf(fp, "<text class=\"sm\" x=\"8\" y=\"%d\">", 30);
		svg_escape_line(ch->note, fp);
		fputs("</text>\n", fp);
	}
	legend(ch, 8, top + 14, W, fp);
	double max = 0;
	for (size_t i = 0; i < ch->npts; i++)
		max = fmax(max, ch->pts[i].y);
	for (size_t i = 0; i < ch->nmarks; i++)
		max = fmax(max, ch->marks[i].v);
	if (!ch->npts || !(max > 0)) {
		no_data(W, H, fp);
		fputs("</svg>\n", fp);
		return;
	}
	double step = nice_step(max * 1.05, 6);
	g.hi = ceil(max * 1.05 / step) * step;
	lines_axes(ch, &g, rot, fp);
	lines_peaks(ch, &g, fp);
	lines_series(ch, &g, fp);
	fputs("</svg>\n", fp);
}

int svg_drawable(const struct kp_chart *ch)
{
	return ch->kind != CHART_LIST;
}

void svg_chart(const struct kp_chart *ch, int standalone, FILE *fp)
{
	switch (ch->kind) {
	case CHART_ROOFLINE:
		roofline(ch, standalone, fp);
		break;
	case CHART_TOP:
		top_bars(ch, standalone, fp);
		break;
	case CHART_TIMELINE:
		timeline(ch, standalone, fp);
		break;
	case CHART_WATERFALL:
		waterfall(ch, standalone, fp);
		break;
	case CHART_DUMBBELL:
		dumbbell(ch, standalone, fp);
		break;
	case CHART_ICICLE:
		icicle(ch, standalone, fp);
		break;
	case CHART_MEMORY:
		memory_chart(ch, standalone, fp);
		break;
	case CHART_LINES:
		lines(ch, standalone, fp);
		break;
	default:
		break;
	}
}
