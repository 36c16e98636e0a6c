/*
 * html.h — a document as one self-contained html page (table.h's html format).
 */
#ifndef KPROF_HTML_H
#define KPROF_HTML_H

#include <stdio.h>

#include "kprof/doc.h"

/* Prototypes */
/*
 * Write @doc as an XHTML-compatible html page: title and summary, toned facts as verdict
 * banners, the facts, each chart (inline SVG, or a list), each table with rows (a click on
 * a header sorts it).  Inline CSS and script only: no URL is fetched.
 */
void html_render(const struct kp_doc *doc, FILE *fp);

#endif /* KPROF_HTML_H */
