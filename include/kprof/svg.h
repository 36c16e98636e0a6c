/*
 * svg.h — draw a chart of a document (doc.h, kp_chart) as SVG: axes with units and ticks,
 * legend, <title> hover text.  Colours are CSS classes (s0..s15, bad, good, ...) styled by
 * svg_css(), so one drawing serves the html page (its stylesheet, dark mode, print) and a
 * standalone .svg (its own <style>).
 */
#ifndef KPROF_SVG_H
#define KPROF_SVG_H

#include <stdio.h>

#include "kprof/doc.h"

/* Prototypes */
/* Whether @ch draws as SVG (CHART_LIST is an html list, not a picture). */
int svg_drawable(const struct kp_chart *ch);
/*
 * Write @ch as one <svg> element; @standalone adds the xmlns attributes, a <title> and the
 * stylesheet (for --format svg).  Charts without data draw a frame with "no data".
 */
void svg_chart(const struct kp_chart *ch, int standalone, FILE *fp);
/* The chart stylesheet (palette, axes, light and dark). */
void svg_css(FILE *fp);
/*
 * The @n labels of one chart, each cut to at most @max bytes (UTF-8 whole), as malloc'ed
 * strings in a malloc'ed array (free each, then the array).  A cut keeps a head and the
 * tail, "head…tail", since the tail tells rows apart (shapes, variants, "forward" and
 * "backward"); labels that differ stay different: when two cuts collide the tail grows, and
 * when that does not part them a " #k" suffix does.  Labels of @max bytes or fewer are kept.
 */
char **svg_short_labels(const char *const *labels, size_t n, size_t max);
/*
 * @s as XML character data / attribute value: control characters but LF and tab, and bidi
 * marks, escaped as text (utf8_visible_lines: ESC is \u001b), then & < > " ' as entities.
 */
void svg_escape(const char *s, FILE *fp);
/* svg_escape() on one line: LF and tab escaped too ("\n"), for a name in a tooltip (a <title>,
 * an html title attribute) or a label, where a name's line break would start a line of its own */
void svg_escape_line(const char *s, FILE *fp);

#endif /* KPROF_SVG_H */
