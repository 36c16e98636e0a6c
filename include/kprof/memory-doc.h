/*
 * memory-doc.h — the memory analysis (memory.h) in the document: one json object "memory"
 * (every row, exact bytes) and, for people, a few facts and two tables per device.
 */
#ifndef KPROF_MEMORY_DOC_H
#define KPROF_MEMORY_DOC_H

#include "kprof/doc.h"
#include "kprof/memory.h"

/* Prototypes */
/*
 * Append @m to @doc: the json object "memory" ({"devices": [...], "cpu": [...]}; columns in
 * kprof-analyze(1), MEMORY) and the human sections, whose tables show @top rows (0 all) and
 * fold the rest into "(others)".
 */
void memory_doc(struct kp_doc *doc, const struct kp_memrep *m, long top);
/* "cpu", "cuda", "hip" for Device Type 0, 1, 6 (doc/memory.md); NULL for others. */
const char *memory_type_name(int type);
/* "cuda:0", "cpu", "hip:1", "device type 12:0" into @buf. */
const char *memory_dev_name(const struct kp_mem_dev *d, char *buf, size_t cap);
/* memory_dev_name(), and " (pid N)" after it when @m's devices are of several processes
 * (two ranks' cuda:0 in one trace): how the memory report, its charts and diff --memory name
 * a device */
const char *memory_dev_label(const struct kp_memrep *m, const struct kp_mem_dev *d, char *buf,
			     size_t cap);
/* "189.22 MiB" (binary units, two decimals; plain bytes under 1 KiB) into @buf. */
const char *memory_bytes(char *buf, size_t cap, int64_t bytes);

#endif /* KPROF_MEMORY_DOC_H */
