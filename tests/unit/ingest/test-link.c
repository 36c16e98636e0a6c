/*
 * test-link.c — the op tree: strict nesting, siblings with identical intervals, explicit
 * B/E parents, the model level memoized down deep chains, and linking in linear time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "kprof/analyze.h"
#include "kprof/devdb.h"
#include "kprof/diag.h"
#include "kprof/input.h"
#include "kprof/json.h"
#include "kprof/link.h"
#include "kprof/trace.h"

static char tmpdir[] = "/tmp/kprof-test-link-XXXXXX";
static struct kp_devdb db;

static const char *tmp_path(const char *name)
{
	static char path[512];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

static void load_text(struct kp_trace *t, const char *text)
{
	const char *path = tmp_path("t.json");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	struct kp_load_opts o = { 0 };
	struct kp_diag d = { 0 };
	assert_int_equal(trace_load(t, path, &o, &d), 0);
	link_trace(t);
}

static int32_t op_index(const struct kp_trace *t, const char *name, int nth)
{
	for (size_t i = 0; i < t->nops; i++)
		if (!strcmp(t->ops[i].name, name) && nth-- == 0)
			return (int32_t)i;
	fail_msg("no op '%s'", name);
	return -1;
}

static int32_t gpu_op(const struct kp_trace *t, const char *kernel)
{
	for (size_t i = 0; i < t->ngpu; i++)
		if (!strcmp(t->gpu[i].name, kernel))
			return t->gpu[i].op;
	fail_msg("no kernel '%s'", kernel);
	return -2;
}

#define OP(name, ts, dur, ext)                                                                     \
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,\"ts\":" #ts   \
	",\"dur\":" #dur ",\"args\":{\"External id\":" #ext "}},"
#define LAUNCH(ts, ext, corr)                                                                       \
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1," \
	"\"ts\":" #ts ",\"dur\":1,\"args\":{\"External id\":" #ext ",\"correlation\":" #corr "}},"
#define KERNEL(name, ts, corr)                                                                     \
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts   \
	",\"dur\":1,\"args\":{\"correlation\":" #corr ",\"device\":0,\"stream\":7}},"
#define END "{\"ph\":\"i\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":0,\"s\":\"t\"}]}"

static void identical_intervals_are_siblings(void **state)
{
	(void)state;
	/* three aten::mm with the same ts and dur under one aten::linear; each launches one
	 * kernel named by External id; a fourth mm without External id launches by nesting */
	static const char text[] = "{\"traceEvents\":[" OP("aten::linear", 100, 50, 1)
		OP("aten::mm", 110, 20, 2) OP("aten::mm", 110, 20, 3) OP("aten::mm", 110, 20, 4)
			LAUNCH(115, 2, 10) LAUNCH(116, 3, 11) LAUNCH(117, 4, 12)
				KERNEL("k2", 200, 10) KERNEL("k3", 210, 11) KERNEL("k4", 220, 12)
					END;
	struct kp_trace t;
	load_text(&t, text);
	int32_t lin = op_index(&t, "aten::linear", 0);
	for (int k = 0; k < 3; k++) {
		int32_t mm = op_index(&t, "aten::mm", k);
		assert_int_equal(t.ops[mm].parent, lin);
		assert_int_equal(t.ops[mm].model, mm);
	}
	/* each kernel is counted at its own mm, not at the first one */
	assert_int_equal(gpu_op(&t, "k2"), op_index(&t, "aten::mm", 0));
	assert_int_equal(gpu_op(&t, "k3"), op_index(&t, "aten::mm", 1));
	assert_int_equal(gpu_op(&t, "k4"), op_index(&t, "aten::mm", 2));
	trace_free(&t);
}

static void strict_containment_nests_even_at_the_same_start_or_end(void **state)
{
	(void)state;
	static const char text[] = "{\"traceEvents\":[" OP("outer", 100, 50, 1)
		OP("aten::linear", 100, 40, 2) /* same start, shorter: inside outer */
		OP("aten::addmm", 120, 20, 3)  /* same end as linear: inside it */
		OP("aten::mm", 100, 50, 4)     /* same interval as outer: a sibling */
		OP("later", 150, 10, 5)        /* starts where outer ends: not inside */
		END;
	struct kp_trace t;
	load_text(&t, text);
	int32_t outer = op_index(&t, "outer", 0), lin = op_index(&t, "aten::linear", 0);
	assert_int_equal(t.ops[outer].parent, -1);
	assert_int_equal(t.ops[op_index(&t, "aten::mm", 0)].parent, -1);
	/* linear is inside whichever of the two identical ops comes last in file order */
	assert_int_equal(t.ops[lin].parent, op_index(&t, "aten::mm", 0));
	assert_int_equal(t.ops[op_index(&t, "aten::addmm", 0)].parent, lin);
	assert_int_equal(t.ops[op_index(&t, "later", 0)].parent, -1);
	trace_free(&t);
}

static void b_e_nesting_is_an_explicit_parent(void **state)
{
	(void)state;
	/* aten::linear opens, aten::addmm opens inside it, both close at the same time: the
	 * intervals are identical, yet addmm is linear's child */
	static const char text[] =
		"{\"traceEvents\":["
		"{\"ph\":\"B\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":100},"
		"{\"ph\":\"B\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,\"tid\":1,\"ts\":100},"
		"{\"ph\":\"B\",\"cat\":\"cpu_op\",\"name\":\"aten::t\",\"pid\":1,\"tid\":2,\"ts\":100},"
		"{\"ph\":\"E\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":2,\"ts\":150},"
		"{\"ph\":\"E\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":1,\"ts\":150},"
		"{\"ph\":\"E\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":1,\"ts\":150}"
		"]}";
	struct kp_trace t;
	load_text(&t, text);
	int32_t lin = op_index(&t, "aten::linear", 0), addmm = op_index(&t, "aten::addmm", 0);
	assert_int_equal(t.ops[lin].dur_ns, t.ops[addmm].dur_ns);
	assert_int_equal(t.ops[addmm].parent, lin);
	assert_int_equal(t.ops[lin].parent, -1);
	/* another thread's open op is not a parent */
	assert_int_equal(t.ops[op_index(&t, "aten::t", 0)].parent, -1);
	trace_free(&t);
}

static void model_level_outermost_primary_else_nearest_secondary(void **state)
{
	(void)state;
	/* block > aten::matmul-less chain: aten::add_ (secondary) > aten::mm (primary) >
	 * aten::mm (primary) > aten::copy_ (secondary) > leaf (no model); and a second tree
	 * without a primary: aten::add_ > aten::copy_ > leaf2 */
	static const char text[] = "{\"traceEvents\":[" OP("block", 100, 100, 1)
		OP("aten::add_", 110, 80, 2) OP("aten::mm", 120, 60, 3) OP("aten::mm", 130, 40, 4)
			OP("aten::copy_", 140, 20, 5) OP("leaf", 145, 10, 6)
				OP("aten::add_", 300, 100, 7) OP("aten::copy_", 310, 80, 8)
					OP("leaf2", 320, 10, 9) OP("bare", 500, 10, 10)
						LAUNCH(146, 6, 20) LAUNCH(321, 9, 21)
							LAUNCH(501, 10, 22) KERNEL("k1", 600, 20)
								KERNEL("k2", 610, 21)
									KERNEL("k3", 620, 22) END;
	struct kp_trace t;
	load_text(&t, text);
	assert_int_equal(gpu_op(&t, "k1"), op_index(&t, "aten::mm", 0));
	assert_int_equal(t.ops[op_index(&t, "aten::add_", 0)].model, op_index(&t, "aten::add_", 0));
	assert_int_equal(t.ops[op_index(&t, "block", 0)].model, op_index(&t, "block", 0));
	assert_int_equal(gpu_op(&t, "k2"), op_index(&t, "aten::copy_", 1));
	assert_int_equal(gpu_op(&t, "k3"), op_index(&t, "bare", 0));
	trace_free(&t);
}

/* ---- generated traces: N ops, each owning one kernel ---------------------------------- */

enum shape { NESTED, SIBLINGS };

/* Same layout as bench/gen-link-trace.py, without shapes. */
static const char *write_generated(enum shape s, long n)
{
	const char *path = tmp_path(s == NESTED ? "nested.json" : "siblings.json");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	fputs("{\"traceEvents\":[\n", f);
	for (long k = 0; k < n; k++) {
		long ts = s == NESTED ? 1000 + k : 1000, dur = s == NESTED ? 4 * n - 2 * k : 4 * n;
		fprintf(f,
			"%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%ld,"
			"\"dur\":%ld,\"args\":{\"External id\":%ld}},\n"
			"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
			"\"tid\":1,\"ts\":%ld.5,\"dur\":0.1,\"args\":{\"External id\":%ld,\"correlation\":%ld}},\n"
			"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":%ld,\"dur\":1,"
			"\"args\":{\"correlation\":%ld,\"stream\":7}}",
			k ? ",\n" : "", s == NESTED ? "aten::add_" : "aten::mm", ts, dur, k + 1, ts,
			k + 1, k + 1, 10 * n + k, k + 1);
	}
	fputs("\n]}\n", f);
	assert_int_equal(fclose(f), 0);
	return path;
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static ssize_t read_input(void *ctx, void *buf, size_t cap)
{
	struct kp_diag d = { 0 };
	return input_read(ctx, buf, cap, &d);
}

/* The plain pass: read the file and tokenize every value, building nothing. */
static double tokenize_seconds(const char *path)
{
	double t0 = cpu_seconds();
	struct kp_input in;
	struct kp_diag d = { 0 };
	assert_int_equal(input_open(&in, path, &d), 0);
	struct kp_json p;
	struct kp_json_tok tok;
	json_init(&p, read_input, &in, 0);
	long ntok = 0;
	enum kp_json_type ty;
	while ((ty = json_next(&p, &tok)) > JT_END)
		ntok++;
	assert_int_equal(ty, JT_END);
	assert_true(ntok > 0);
	json_free(&p);
	input_close(&in);
	return cpu_seconds() - t0;
}

/* load + link + analyze -g op; checks every op is one call with its one kernel */
static double analyze_seconds(const char *path, long n, const char *opname)
{
	double t0 = cpu_seconds();
	struct kp_trace t;
	struct kp_report r;
	struct kp_load_opts lo = { 0 };
	struct kp_diag d = { 0 };
	assert_int_equal(trace_load(&t, path, &lo, &d), 0);
	link_trace(&t);
	struct kp_analyze_opts o = { .group = GROUP_OP, .db = &db };
	assert_int_equal(analyze_run(&t, &o, &r), 0);
	double s = cpu_seconds() - t0;
	assert_int_equal(r.nrows, 1);
	assert_string_equal(r.rows[0].name, opname);
	assert_int_equal(r.rows[0].calls, n);
	assert_int_equal(r.rows[0].kernels, n);
	assert_int_equal(r.tot.ops, n);
	assert_int_equal(r.tot.unlinked, 0);
	analyze_free(&r);
	trace_free(&t);
	return s;
}

/*
 * Linking is linear on any input: analyzing N nested ops, or N ops with one interval,
 * costs a small multiple of tokenizing the same file (CPU time of this process, so load
 * from other processes matters little), and each of the N sibling aten::mm is one call.
 * A walk of the parent chain per op took 51.7 s for 200k nested ops and counted 250k
 * sibling mm as one call.  make check runs N = 250000 (about a second);
 * KPROF_LINK_N=1000000 runs the 1M-op version (bench/README.md).  On one core a linear
 * run is 2-4x; the bound leaves room for sanitizers.
 */
#define LINK_N_DEFAULT 250000L
#define LINK_MAX_RATIO 10.0

static void links_in_linear_time(void **state)
{
	(void)state;
	static const struct {
		enum shape s;
		const char *op;
	} c[] = {
		{ NESTED, "aten::add_" },
		{ SIBLINGS, "aten::mm" },
	};
	const char *env = getenv("KPROF_LINK_N");
	long n = env && atol(env) > 0 ? atol(env) : LINK_N_DEFAULT;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		const char *path = write_generated(c[i].s, n);
		double tok = tokenize_seconds(path);
		double an = analyze_seconds(path, n, c[i].op);
		print_message("  %s: %ld ops, tokenize %.3f s, analyze %.3f s (CPU), ratio %.2f\n",
			      c[i].s == NESTED ? "nested" : "siblings", n, tok, an, an / tok);
		assert_true(an < LINK_MAX_RATIO * tok);
		unlink(path);
	}
}

/* ids far apart (sorted mode, not the dense array): each kernel still finds its launch and op */
static void sparse_ids_link_like_dense_ones(void **state)
{
	(void)state;
	static const char text[] = "{\"traceEvents\":[" OP("aten::mm", 0, 10, 5) LAUNCH(1, 5, 7)
		OP("aten::add", 20, 10, 9000000000123) LAUNCH(21, 9000000000123, 4000000000000)
			OP("aten::mul", 40, 10, 77777777) LAUNCH(41, 77777777, 123456789012)
				KERNEL("k_mm", 100, 7) KERNEL("k_add", 110, 4000000000000)
					KERNEL("k_mul", 120, 123456789012)
						KERNEL("k_orphan", 130, 99999999999) END;
	struct kp_trace t;
	load_text(&t, text);
	assert_int_equal(gpu_op(&t, "k_mm"), op_index(&t, "aten::mm", 0));
	assert_int_equal(gpu_op(&t, "k_add"), op_index(&t, "aten::add", 0));
	assert_int_equal(gpu_op(&t, "k_mul"), op_index(&t, "aten::mul", 0));
	assert_int_equal(gpu_op(&t, "k_orphan"), -1);
	for (size_t i = 0; i < t.ngpu; i++)
		if (strcmp(t.gpu[i].name, "k_orphan"))
			assert_true(t.gpu[i].launch >= 0);
	trace_free(&t);
}

/* Op "op@k", its launch and kernel "k@k" at ts 10k, with External id @ext and correlation
 * @corr: one linked triple of the id-map tests below. */
static void put_linked(FILE *f, long k, long long ext, long long corr)
{
	fprintf(f,
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%ld\",\"pid\":1,\"tid\":1,"
		"\"ts\":%ld,\"dur\":5,\"args\":{\"External id\":%lld}},"
		"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
		"\"tid\":1,\"ts\":%ld,\"dur\":1,\"args\":{\"External id\":%lld,"
		"\"correlation\":%lld}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k%ld\",\"pid\":0,\"tid\":7,"
		"\"ts\":%ld,\"dur\":1,\"args\":{\"correlation\":%lld,\"device\":0,\"stream\":7}},",
		k, 10 * k, ext, 10 * k + 1, ext, corr, k, 10 * k + 2, corr);
}

/* The first @n GPU events each linked to their launch and to op "op<k>" (put_linked). */
static void assert_each_linked(const struct kp_trace *t, long n)
{
	for (long k = 0; k < n; k++) {
		char name[32];
		snprintf(name, sizeof(name), "op%ld", k);
		assert_int_equal(t->gpu[k].launch, (int32_t)k);
		assert_int_equal(t->gpu[k].op, op_index(t, name, 0));
	}
}

/*
 * Many sparse ids (the sorted map, over many buckets of its directory): every kernel finds
 * its launch and op; a repeated External id names the first op in file order.
 */
static void sparse_ids_find_their_records_and_the_first_op_of_an_id(void **state)
{
	(void)state;
	const char *path = tmp_path("sparse.json");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	enum { N = 3000 };
	fputs("{\"traceEvents\":[", f);
	for (long k = 0; k < N; k++) {
		/* clusters of ids far apart, as copies of one trace offset by a large id */
		long long ext = (k % 7) * 1000000007LL + k * 13 + 1, corr = ext * 3 + 5;
		put_linked(f, k, ext, corr);
	}
	/* a second op with op0's id, and a kernel of that id with no launch: op0 wins */
	fputs("{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"again\",\"pid\":1,\"tid\":1,"
	      "\"ts\":90000,\"dur\":5,\"args\":{\"External id\":1}},"
	      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k_nolaunch\",\"pid\":0,\"tid\":7,"
	      "\"ts\":90001,\"dur\":1,\"args\":{\"External id\":1,\"correlation\":2,"
	      "\"device\":0,\"stream\":7}}]}",
	      f);
	assert_int_equal(fclose(f), 0);
	struct kp_load_opts o = { 0 };
	struct kp_diag d = { 0 };
	struct kp_trace t;
	assert_int_equal(trace_load(&t, path, &o, &d), 0);
	link_trace(&t);
	assert_int_equal(t.ngpu, N + 1);
	assert_each_linked(&t, N);
	assert_int_equal(gpu_op(&t, "k_nolaunch"), op_index(&t, "op0", 0));
	trace_free(&t);
}

/*
 * Ids in dense stretches far apart, as a long trace or bench/gen-big-trace.py's copies have
 * them (src/ingest/link.c's paged map: 4 stretches of 2000 ids 500000 apart, pages of 4096
 * ids only where ids are): every kernel finds its launch and op; a kernel whose id is in a
 * page with ids but not itself an id, or in a page without ids, finds none.
 */
static void stretches_of_ids_find_their_records(void **state)
{
	(void)state;
	const char *path = tmp_path("stretches.json");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	enum { N = 8000 };
	fputs("{\"traceEvents\":[", f);
	for (long k = 0; k < N; k++) {
		long long ext = (k / 2000) * 500000LL + (k % 2000) * 2 + 1, corr = ext + 1000;
		put_linked(f, k, ext, corr);
	}
	/* correlation 1002 (between two ids of a stretch) and 250000 (between stretches) */
	fputs("{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k_between\",\"pid\":0,\"tid\":7,"
	      "\"ts\":90001,\"dur\":1,\"args\":{\"correlation\":1002,\"device\":0,\"stream\":7}},"
	      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k_gap\",\"pid\":0,\"tid\":7,"
	      "\"ts\":90002,\"dur\":1,\"args\":{\"correlation\":250000,\"device\":0,"
	      "\"stream\":7}}]}",
	      f);
	assert_int_equal(fclose(f), 0);
	struct kp_load_opts o = { 0 };
	struct kp_diag d = { 0 };
	struct kp_trace t;
	assert_int_equal(trace_load(&t, path, &o, &d), 0);
	link_trace(&t);
	assert_int_equal(t.ngpu, N + 2);
	assert_each_linked(&t, N);
	assert_int_equal(t.gpu[N].launch, -1);
	assert_int_equal(t.gpu[N + 1].launch, -1);
	trace_free(&t);
}

/* more ProfilerStep spans than a GPU event's step index holds: counted in the last, loudly */
static void steps_past_int16_are_counted_in_the_last_with_a_warning(void **state)
{
	(void)state;
	const char *path = tmp_path("steps.json");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	enum { N = 32770 };
	fputs("{\"traceEvents\":[", f);
	for (int i = 0; i < N; i++)
		fprintf(f,
			"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\","
			"\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":5},",
			i, 10 * i);
	fprintf(f,
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k_last\",\"pid\":0,\"tid\":7,"
		"\"ts\":%d,\"dur\":1,\"args\":{\"device\":0,\"stream\":7}},",
		10 * (N - 1) + 1);
	fputs("{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k_first\",\"pid\":0,\"tid\":7,"
	      "\"ts\":1,\"dur\":1,\"args\":{\"device\":0,\"stream\":7}}]}",
	      f);
	fclose(f);
	struct kp_load_opts o = { 0 };
	struct kp_diag d = { 0 };
	struct kp_trace t;
	assert_int_equal(trace_load(&t, path, &o, &d), 0);
	assert_int_equal(diag_warn_total(&t.warn), 0);
	link_trace(&t);
	assert_int_equal(t.nsteps, N);
	assert_int_equal(diag_warn_total(&t.warn), 1);
	assert_string_equal(t.warn.k[0].kind, "traces with too many steps");
	for (size_t i = 0; i < t.ngpu; i++)
		assert_int_equal(t.gpu[i].step, strcmp(t.gpu[i].name, "k_first") ? INT16_MAX : 0);
	trace_free(&t);
}

/*
 * The unlaunched prefix: GPU events with no launch call that start before the first one with
 * a launch call (here p0 at 1 and p1 at 3; q at 20 has no launch call either but comes after
 * the launched k at 10).  Dropping them keeps the order of the rest and moves the collective
 * record of the NCCL kernel with its kernel.  A trace with no launch call has no prefix.
 */
#define COLL(name, ts)                                                                             \
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts   \
	",\"dur\":4,\"args\":{\"correlation\":99,\"Collective name\":\"allreduce\"}},"
static void the_unlaunched_prefix_is_counted_and_can_be_dropped(void **state)
{
	(void)state;
	static const char text[] = "{\"traceEvents\":[" KERNEL("p0", 1, 1) COLL("ncclp", 3)
		OP("aten::mm", 5, 20, 7) LAUNCH(6, 7, 2) KERNEL("k", 10, 2) COLL("ncclq", 20) END;
	struct kp_trace t;
	load_text(&t, text);
	assert_int_equal(t.ngpu, 4);
	assert_int_equal(t.prefix.n, 2);
	assert_int_equal(t.prefix.gpu_ns, 1000 + 4000);
	assert_int_equal(t.prefix.start_ns, 1000);
	assert_int_equal(t.prefix.until_ns, 10000);
	assert_int_equal(t.ncolls, 2);
	link_drop_unlaunched_prefix(&t);
	assert_int_equal(t.prefix.dropped, 1);
	assert_int_equal(t.ngpu, 2);
	assert_string_equal(t.gpu[0].name, "k");
	assert_string_equal(t.gpu[1].name, "ncclq");
	assert_int_equal(t.ncolls, 1);
	assert_string_equal(t.gpu[t.colls[0].gpu].name, "ncclq");
	link_drop_unlaunched_prefix(&t); /* once */
	assert_int_equal(t.ngpu, 2);
	trace_free(&t);

	static const char none[] = "{\"traceEvents\":[" KERNEL("p0", 1, 1) KERNEL("p1", 3, 2) END;
	load_text(&t, none);
	assert_int_equal(t.prefix.n, 0);
	link_drop_unlaunched_prefix(&t);
	assert_int_equal(t.ngpu, 2);
	assert_int_equal(t.prefix.dropped, 0);
	trace_free(&t);
}

static int setup(void **state)
{
	(void)state;
	struct kp_diag d = { 0 };
	if (!mkdtemp(tmpdir))
		return -1;
	return devdb_load_builtin(&db, &d);
}

static int teardown(void **state)
{
	(void)state;
	char cmd[600];
	devdb_free(&db);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(identical_intervals_are_siblings),
		cmocka_unit_test(strict_containment_nests_even_at_the_same_start_or_end),
		cmocka_unit_test(b_e_nesting_is_an_explicit_parent),
		cmocka_unit_test(model_level_outermost_primary_else_nearest_secondary),
		cmocka_unit_test(links_in_linear_time),
		cmocka_unit_test(sparse_ids_link_like_dense_ones),
		cmocka_unit_test(sparse_ids_find_their_records_and_the_first_op_of_an_id),
		cmocka_unit_test(stretches_of_ids_find_their_records),
		cmocka_unit_test(steps_past_int16_are_counted_in_the_last_with_a_warning),
		cmocka_unit_test(the_unlaunched_prefix_is_counted_and_can_be_dropped),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
