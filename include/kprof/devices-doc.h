/*
 * devices-doc.h — device-table entries (kprof devices) as a document.
 */
#ifndef KPROF_DEVICES_DOC_H
#define KPROF_DEVICES_DOC_H

#include "kprof/devdb.h"
#include "kprof/doc.h"

/* Prototypes */
/*
 * Build the document of @n entries of @db: facts (with @query and @how, the entry's peaks,
 * clocks and source when one name was looked up) and one table; csv and json in base
 * units.  Strings of @db must outlive @doc; free it with doc_free().
 */
void devices_doc(const struct kp_devdb *db, const struct kp_device *const *devs, int n,
		  const char *query, const char *how, struct kp_doc *doc);

#endif /* KPROF_DEVICES_DOC_H */
