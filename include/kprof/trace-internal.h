/*
 * trace-internal.h — what the three parts of the trace loader share (not for other modules):
 * the event being read (struct ev), the loader's state (struct loader) and the calls
 * between src/ingest/trace.c (the loader: the document's top-level keys, device properties,
 * trace_load), src/ingest/trace-decode.c (one event's members -> kp_op / kp_launch / kp_gpu ...)
 * and src/ingest/trace-chunk.c (the parallel chunk engine: cutting the input, parsing chunks on
 * worker threads, merging their records).
 */
#ifndef KPROF_TRACE_INTERNAL_H
#define KPROF_TRACE_INTERNAL_H

#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "kprof/arena.h"
#include "kprof/diag.h"
#include "kprof/dtype.h"
#include "kprof/hmap.h"
#include "kprof/input.h"
#include "kprof/json.h"
#include "kprof/trace.h"
#include "kprof/utf8.h"

struct par;
struct chunk;

/* "%.*s" arguments: a name cut to at most 80 bytes, never inside a UTF-8 sequence */
#define NAME80(s) (int)utf8_prefix((s), strlen(s), 80), (s)

enum cat {
	CAT_NONE = 0, /* absent */
	CAT_SKIP,     /* a category kprof does not need */
	CAT_OP,
	CAT_ANNOT,
	CAT_LAUNCH,
	CAT_KERNEL,
	CAT_MEMCPY,
	CAT_MEMSET,
	CAT_RANGE, /* cuda_profiler_range: measured counters, no time */
	CAT_PY,    /* python_function: a Python frame (with_stack) */
	CAT_INSTANT, /* cpu_instant_event: only "[memory]" ones are kept (profile_memory) */
};

/* 256 kB: RSS, not speed, changes with it (1 MB: the same seconds, 0.4 MB more on a 35 MB
 * trace; it grows for an event larger than itself).  tests/fuzz/run.sh builds with a small
 * window, so the refill and locate paths run on every input. */
#ifndef TRACE_JSON_WINDOW
#define TRACE_JSON_WINDOW (256u << 10)
#endif

#define MAX_SLOTS 128
#define MAX_DIMS 1024
#define MAX_LIST 256
/* deviceProperties "name": bytes kept (CUDA's cudaDeviceProp.name holds 256) */
#define DEVNAME_MAX 256

/* The fields of one event being read; reset per event. */
struct ev {
	char ph;
	enum cat cat;
	const char *name;
	int64_t pid, tid;
	uint8_t pid_str, tid_str, has_pid, has_tid;
	int64_t ts, dur;
	uint8_t has_ts, has_dur;
	uint8_t time_range; /* a number past int64 ns: 1 "ts", 2 "dur" (the has_ bit stays 0) */
	int64_t ext_id, corr, device, stream, bytes, kernel_flop;
	int64_t seq; /* "Sequence number" */
	int64_t py_id, py_parent, py_module; /* CAT_PY: "Python id", "Python parent id", ... */
	/* [memory]: "Addr", "Bytes", "Total Allocated", "Total Reserved", "Device Type",
	   "Device Id"; KP_MEM_NONE when absent */
	int64_t m_addr, m_bytes, m_talloc, m_tres, m_dtype, m_did;
	double kernel_num_gb;
	int64_t mflops, mbytes; /* "kprof measured flops", "kprof dram bytes" */
	int32_t sm_clock_mhz;
	int8_t prec_hint;
	int64_t range_flops[3]; /* CAT_RANGE: fp64, fp32, fp16; -1 none */
	const char *bad;        /* why the event is malformed (skipped and warned), or NULL */
	const char *coll, *coll_dtype; /* kernels: "Collective name", "dtype" */
	int64_t coll_in, coll_out, coll_group;
	/* shapes: counts first, so the memset up to slot_ndim resets them */
	int nslots_dims, nslots_type, nslots_conc;
	int ndims_used;
	int shapes_overflow;
	int nlist_used;
	int slot_ndim[MAX_SLOTS];
	int slot_nlist[MAX_SLOTS]; /* TensorList: tensors in the slot */
	int slot_list0[MAX_SLOTS]; /* TensorList: first entry in list_* */
	int list_ndim[MAX_LIST];
	int list_dim0[MAX_LIST];
	int slot_dim0[MAX_SLOTS];
	int64_t dims[MAX_DIMS];
	enum kp_dtype slot_type[MAX_SLOTS];
	const char *slot_conc[MAX_SLOTS];
};

struct loader {
	struct kp_trace *t;
	int annotations; /* keep user annotations (kp_load_opts) */
	struct kp_json p;
	struct kp_input in;
	struct kp_diag *d;
	struct kp_diag read_diag;
	int read_err;
	char *scratch[2]; /* unescape and utf8_clean buffers */
	size_t scratch_cap[2];
	/* (pid, tid, pid_str, tid_str) bytes (copies in t->arena) -> index into t->threads */
	struct kp_hmap threads;
	int32_t last_thread; /* index of the last trace_thread_index() answer, -1 none */
	/* B/E pairing: stack of open ops (index into t->ops) */
	int32_t *open;
	size_t nopen, capopen;
	int64_t last_good_off; /* offset just past the last complete event */
	int has_events;        /* a traceEvents array (or the array form) was seen */
	/* interned op name -> name_info() flags: shapes are kept only for modelled ops */
	struct kp_hmap names;
	/* serialized slots (copies in t->arena) -> shared decoded array (see copy_slots) */
	struct kp_hmap slots;
	struct kp_arena *arena; /* thread keys, slots: t->arena, or a parallel worker's own */
	struct par *par;        /* parallel parse (see par_*), NULL for a serial one */
	/*
	 * With @par, set by the chunk engine (trace-chunk.c): the event decoder calls back
	 * through these, so trace-decode.c depends on no function of trace-chunk.c.
	 */
	const char *(*par_intern)(struct loader *L, const char *s, size_t n);
	void (*defer_warn)(struct loader *L, int64_t off, const char *kind, const char *msg);
	struct chunk *chunk;    /* a worker: the chunk being parsed (warnings wait in it) */
	int bail;               /* a worker met what only the serial path can do (B/E pairs) */
	/* parallel: interned bytes -> canonical string of t->strs (the key points at it) */
	struct kp_hmap cache;
	unsigned char enc[16384];
};



#define VEC_PUSH(vec, n, cap)                                                                      \
	((n) == (cap) ? ((cap) = (cap) ? (cap) * 2 : 256,                                          \
			 (vec) = xrealloc((vec), (cap) * sizeof(*(vec))), &(vec)[(n)++])           \
		      : &(vec)[(n)++])

/* @vec with room for index @i (a side vector indexed like its records) */
static inline void *grow_at(void *vec, size_t *cap, size_t i, size_t size)
{
	if (i >= *cap) {
		size_t c = *cap ? *cap : 256;
		while (c <= i)
			c *= 2;
		vec = xrealloc(vec, c * size);
		*cap = c;
	}
	return vec;
}
#define VEC_AT(vec, i, cap) ((vec) = grow_at((vec), &(cap), (i), sizeof(*(vec))), &(vec)[(i)])

/* How a parallel parse runs: chunk bytes, threads (the main one included). */
struct par_plan {
	size_t size;
	int jobs;
};

static inline int tok_is(const struct kp_json_tok *tk, const char *s, size_t n)
{
	return tk->len == n && memcmp(tk->s, s, n) == 0;
}
#define TOK_IS(tk, lit) tok_is((tk), (lit), sizeof(lit) - 1)

/* Prototypes */
/* trace-decode.c */
/* "FILE:LINE:COL" of stream offset @off into @buf. */
void trace_locate(struct loader *L, int64_t off, char *buf, size_t cap);
/* The JSON (or read) error as the load's diagnostic; returns -1. */
int trace_json_fail(struct loader *L);
/* A token's string, unescaped, clean UTF-8, interned (t->strs, or the worker's cache). */
const char *trace_intern_tok(struct loader *L, const struct kp_json_tok *tk);
/* A string value into @tk: 1, 0 when something else (skipped), -1 on a JSON error. */
int trace_read_str(struct loader *L, struct kp_json_tok *tk);
/* A number value into *out (ns when @us).  Non-numbers are skipped; returns 1 if set. */
int trace_read_int(struct loader *L, int us, int64_t *out);
/* The index into t->threads of (pid, tid), added on first sight. */
int32_t trace_thread_index(struct loader *L, int64_t pid, uint8_t pid_str, int64_t tid,
			   uint8_t tid_str);
/* An element that is no valid event: counted in nskipped and warned (--strict refuses). */
int trace_skip_malformed(struct loader *L, int64_t off, const char *why);
/* The event object whose '{' was just read at @off: its record, if any.  -1 JSON error. */
int trace_parse_event(struct loader *L, int64_t off);

/* trace-chunk.c */
/* The main parser's reads during a parallel parse: the chunks' bytes from its cursor on. */
ssize_t trace_par_read(struct loader *L, void *buf, size_t cap);
/* Merge the chunks parsed ahead that start where the parser stands; event objects merged. */
int64_t trace_par_sync(struct loader *L);
/* The event array ended: parsing ahead is of no more use. */
void trace_par_nowork(struct par *P);
/* The plan of a parallel parse of @in into @plan: 1, or 0 for a serial parse. */
int trace_par_plan(struct kp_input *in, const struct kp_load_opts *o, struct par_plan *plan);
/* Start the producer and the workers of @plan over L->in. */
void trace_par_start(struct loader *L, const struct par_plan *plan);
/* Stop the threads, give their arenas and strings to the trace; stats into @st (or NULL). */
void trace_par_stop(struct loader *L, struct kp_load_stats *st);

#endif /* KPROF_TRACE_INTERNAL_H */
