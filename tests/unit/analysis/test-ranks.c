/*
 * test-ranks.c — one job's ranks: identity from distributedInfo or file names, parallel
 * loading, collectives matched across ranks with nccl-tests bandwidths, a known straggler.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "kprof/paths.h"
#include "kprof/ranks.h"

static char tmpdir[] = "/tmp/kprof-test-ranks-XXXXXX";

#include "ranks-job.h"

static void load_job(struct kp_ranks *rs, int with_info, int jobs)
{
	size_t n;
	char **paths = write_job(tmpdir, with_info, &n);
	struct kp_load_opts lo = { 0 };
	struct kp_diag d = { 0 };
	assert_int_equal(ranks_load(rs, paths, n, jobs, &lo, &d), 0);
	ranks_compare(rs, 450e9);
}

static void ranks_come_from_distributed_info_in_rank_order(void **state)
{
	(void)state;
	struct kp_ranks rs;
	load_job(&rs, 1, 2);
	assert_int_equal(rs.n, NR);
	for (size_t i = 0; i < rs.n; i++) {
		assert_int_equal(rs.r[i].rank, (int64_t)i);
		assert_int_equal(rs.r[i].rank_from, 0);
		assert_int_equal(rs.r[i].world_size, NR);
		assert_string_equal(rs.r[i].backend, "nccl");
		assert_int_equal(rs.r[i].ncomms, 2);
		assert_int_equal(rs.r[i].nsteps, 2);
	}
	assert_int_equal(rs.warn.nkinds, 0);
	ranks_free(&rs);
}

static void collectives_get_nccl_tests_bandwidths(void **state)
{
	(void)state;
	struct kp_ranks rs;
	load_job(&rs, 1, 1);
	assert_int_equal(rs.matched, 2);
	assert_int_equal(rs.unmatched, 0);
	assert_int_equal(rs.ncolls, 1);
	const struct kp_coll_row *c = &rs.colls[0];
	assert_int_equal(c->kind, COLL_ALLREDUCE);
	assert_int_equal(c->bytes, 4194304);
	assert_int_equal(c->n, 4);
	assert_int_equal(c->calls, 2);
	/* the shortest rank's duration of each instance: 100 us + 100 us */
	assert_int_equal(c->time_ns, 200000);
	/* algbw = 2 x 4 MiB / 200 us; busbw = algbw x 2(n-1)/n = x 1.5 */
	assert_true(c->algbw > 41.943039e9 && c->algbw < 41.943041e9);
	assert_true(c->busbw > 62.914559e9 && c->busbw < 62.914561e9);
	ranks_free(&rs);
}

static void the_late_rank_of_a_step_is_its_straggler(void **state)
{
	(void)state;
	struct kp_ranks rs;
	load_job(&rs, 1, 2);
	assert_int_equal(rs.nstrag, 2);
	assert_int_equal(rs.strag[1].step, 2);
	assert_int_equal(rs.strag[1].rank, 2);
	assert_int_equal(rs.strag[1].instances, 1);
	assert_int_equal(rs.strag[1].late, 1);
	/* rank 2 reached the all-reduce 500 us after the others */
	assert_int_equal(rs.strag[1].lag_ns, 500000);
	/* step 1: everyone arrived together */
	assert_int_equal(rs.strag[0].lag_ns, 0);
	/* the straggler's compute shows in its breakdown, the others' wait in their comm */
	assert_int_equal(rs.r[2].bd.class_ns[BD_COMPUTE], 300000 + 800000);
	assert_int_equal(rs.r[0].bd.class_ns[BD_COMPUTE], 600000);
	assert_int_equal(rs.r[0].bd.class_ns[BD_COMM], 100000 + 600000);
	assert_int_equal(rs.r[2].bd.class_ns[BD_COMM], 200000);
	for (size_t i = 0; i < rs.n; i++) {
		const struct kp_bd *b = &rs.r[i].bd;
		assert_int_equal(b->class_ns[0] + b->class_ns[1] + b->class_ns[2] + b->class_ns[3] +
					 b->idle_ns,
				 b->span_ns);
	}
	ranks_free(&rs);
}

/*
 * One trace without distributedInfo or a rank in its name: the rank from the argument order,
 * the device, steps (the slowest, the mean), and communication kernels without collective
 * records: their kind from the kernel name, no group or size, in start order.
 */
static void a_summary_without_collective_records(void **state)
{
	(void)state;
	char path[512];
	snprintf(path, sizeof(path), "%s/trace.json", tmpdir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "{\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H200\"}],\n"
		   "\"traceEvents\": [\n");
	static const struct {
		int step_ts, step_dur, launch_ts, ts, dur;
		const char *kernel;
	} ev[] = {
		{ 2000, 3000, 2010, 2500, 400,
		  "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)" },
		{ 0, 2000, 10, 100, 250, "ncclKernel_ReduceScatter_RING_LL_Sum_float" },
		{ 0, 0, 20, 400, 50, "sm90_gemm" },
	};
	for (int i = 0; i < 3; i++) {
		if (ev[i].step_dur)
			fprintf(f,
				"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\","
				"\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":%d},\n",
				6 - i, ev[i].step_ts, ev[i].step_dur);
		fprintf(f,
			"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
			"\"tid\":1,\"ts\":%d,\"dur\":3,\"args\":{\"correlation\":%d}},\n"
			"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":7,\"ts\":%d,"
			"\"dur\":%d,\"args\":{\"correlation\":%d,\"device\":0,\"stream\":7}},\n",
			ev[i].launch_ts, i + 1, ev[i].kernel, ev[i].ts, ev[i].dur, i + 1);
	}
	fprintf(f, "{\"ph\":\"i\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":0,\"s\":\"t\"}]}\n");
	fclose(f);
	char *paths[] = { path, NULL };
	struct kp_ranks rs;
	struct kp_load_opts lo = { 0 };
	struct kp_diag d = { 0 };
	assert_int_equal(ranks_load(&rs, paths, 1, 1, &lo, &d), 0);
	const struct kp_rank *r = &rs.r[0];
	assert_int_equal(r->rank, -1);
	assert_int_equal(r->rank_from, 2);
	assert_int_equal(r->world_size, -1);
	assert_string_equal(r->backend, "");
	assert_string_equal(r->device, "NVIDIA H200");
	assert_int_equal(r->gpu_time_ns, 700000);
	/* step 6, the partial last one, is kept but left out of the mean and the slowest */
	assert_int_equal(r->nsteps, 2);
	assert_int_equal(r->steps[0].num, 5);
	assert_int_equal(r->steps[0].span_ns, 2400000);
	assert_int_equal(r->steps[0].partial, 0);
	assert_int_equal(r->steps[1].num, 6);
	assert_int_equal(r->steps[1].partial, 1);
	assert_int_equal(r->step_mean_ns, 2400000);
	assert_int_equal(r->step_max_ns, 2400000);
	assert_int_equal(r->slowest_step, 5);
	/* written later in the file, started first */
	assert_int_equal(r->ncomms, 2);
	assert_int_equal(r->comms[0].ts_ns, 100000);
	assert_int_equal(r->comms[0].dur_ns, 250000);
	assert_int_equal(r->comms[0].kind, COLL_REDUCESCATTER);
	assert_int_equal(r->comms[0].step, 5);
	assert_int_equal(r->comms[1].ts_ns, 2500000);
	assert_int_equal(r->comms[1].kind, COLL_SENDRECV);
	assert_int_equal(r->comms[1].step, 6);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(r->comms[i].group, -1);
		assert_int_equal(r->comms[i].bytes, -1);
	}
	unlink(path);
	ranks_free(&rs);
}

static void parallel_and_serial_loads_agree(void **state)
{
	(void)state;
	struct kp_ranks a, b;
	load_job(&a, 1, 1);
	load_job(&b, 1, 4);
	assert_int_equal(a.jobs, 1);
	assert_int_equal(b.jobs, 4);
	for (size_t i = 0; i < NR; i++) {
		assert_int_equal(a.r[i].rank, b.r[i].rank);
		assert_memory_equal(&a.r[i].bd, &b.r[i].bd, sizeof(a.r[i].bd));
		assert_int_equal(a.r[i].step_mean_ns, b.r[i].step_mean_ns);
	}
	ranks_free(&a);
	ranks_free(&b);
}

static void ranks_come_from_file_names_without_distributed_info(void **state)
{
	(void)state;
	struct kp_ranks rs;
	load_job(&rs, 0, 2);
	for (size_t i = 0; i < rs.n; i++) {
		assert_int_equal(rs.r[i].rank, (int64_t)i);
		assert_int_equal(rs.r[i].rank_from, 1);
		assert_int_equal(rs.r[i].world_size, -1);
	}
	/* no world size: the group size comes from the kernels' metadata */
	assert_int_equal(rs.colls[0].n, 4);
	ranks_free(&rs);
	assert_int_equal(ranks_rank_from_name("/data/run_rank12.json"), 12);
	assert_int_equal(ranks_rank_from_name("rank-3.pt.trace.json"), 3);
	assert_int_equal(ranks_rank_from_name("Rank[7]/trace.json.gz"), 7);
	assert_int_equal(ranks_rank_from_name("rank_2/worker_rank5.json"), 5);
	assert_int_equal(ranks_rank_from_name("trace.json"), -1);
	assert_int_equal(ranks_rank_from_name("ranking.json"), -1);
}

static void bus_factors_follow_nccl_tests(void **state)
{
	(void)state;
	assert_true(coll_bus_factor(COLL_ALLREDUCE, 8) == 2.0 * 7 / 8);
	assert_true(coll_bus_factor(COLL_ALLGATHER, 8) == 7.0 / 8);
	assert_true(coll_bus_factor(COLL_REDUCESCATTER, 2) == 0.5);
	assert_true(coll_bus_factor(COLL_ALLTOALL, 4) == 0.75);
	assert_true(coll_bus_factor(COLL_SENDRECV, 4) == 1);
	assert_true(coll_bus_factor(COLL_BROADCAST, 4) == 1);
	assert_true(coll_bus_factor(COLL_OTHER, 4) < 0);
}

static void directories_expand_to_their_traces_in_name_order(void **state)
{
	(void)state;
	size_t n;
	write_job(tmpdir, 1, &n);
	char sub[600];
	snprintf(sub, sizeof(sub), "%s/notes.txt", tmpdir);
	FILE *f = fopen(sub, "w");
	assert_non_null(f);
	fclose(f);
	char *args[] = { tmpdir };
	struct kp_diag d = { 0 };
	char **v = paths_expand(args, 1, &n, NULL, &d);
	assert_non_null(v);
	assert_int_equal(n, NR);
	for (size_t i = 0; i < n; i++) {
		char want[600];
		snprintf(want, sizeof(want), "%s/job_rank%zu.json", tmpdir, i);
		assert_string_equal(v[i], want);
	}
	assert_null(v[n]);
	paths_free(v);

	snprintf(sub, sizeof(sub), "%s/empty", tmpdir);
	assert_int_equal(mkdir(sub, 0700), 0);
	char *args2[] = { sub };
	assert_null(paths_expand(args2, 1, &n, NULL, &d));
	assert_int_equal(d.status, KP_BADINPUT);
	char want[700];
	snprintf(want, sizeof(want), "error: no *.json, *.json.gz or *.json.zst traces in '%s'",
		 sub);
	assert_string_equal(d.msg, want);
}

/* A rank of the hand-made job below: one step window, @n collectives {ts, dur, bytes, step,
 * group, kind} */
static void hand_rank(struct kp_rank *r, int64_t rank, const int64_t (*c)[6], size_t n)
{
	memset(r, 0, sizeof(*r));
	r->file = strdup("r.json");
	r->rank = rank;
	r->world_size = -1;
	r->bd.span_ns = 10000;
	r->steps = calloc(1, sizeof(*r->steps));
	r->steps[0] = (struct kp_rank_step){ .num = 1, .start_ns = 0, .span_ns = 100000 };
	r->nsteps = 1;
	r->comms = calloc(n, sizeof(*r->comms));
	for (size_t k = 0; k < n; k++)
		r->comms[k] = (struct kp_rank_comm){ .ts_ns = c[k][0],
						     .dur_ns = c[k][1],
						     .bytes = c[k][2],
						     .step = c[k][3],
						     .group = (int32_t)c[k][4],
						     .kind = (int8_t)c[k][5] };
	r->ncomms = n;
}

/*
 * match_collectives' steps: matched by order up to the fewest (the rest unmatched), the
 * shortest duration per instance, the group size from the metadata else the ranks, the last
 * starter per step, and the warnings on unmatched, far-apart and differing collectives.
 */
static void collectives_match_by_order_and_warn_on_what_differs(void **state)
{
	(void)state;
	enum { AR = COLL_ALLREDUCE, AG = COLL_ALLGATHER };
	static const int64_t c0[][6] = { { 1000, 100, 1024, 1, -1, AR },
					 { 2000, 50, 2048, 1, 4, AR },
					 { 3000, 70, 1024, -1, -1, AR } };
	static const int64_t c1[][6] = { { 1500, 80, 1024, 1, -1, AR },
					 { 2100, 60, 2048, 1, 4, AR },
					 { 63000, 90, 1024, -1, -1, AR } };
	static const int64_t c2[][6] = { { 1200, 90, 1024, 1, -1, AR },
					 { 2050, 40, 2048, 1, 4, AG },
					 { 3000, 75, 1024, -1, -1, AR },
					 { 4000, 75, 1024, -1, -1, AR } };
	struct kp_ranks rs;
	memset(&rs, 0, sizeof(rs));
	rs.r = calloc(3, sizeof(*rs.r));
	rs.n = 3;
	hand_rank(&rs.r[0], 0, c0, 3);
	hand_rank(&rs.r[1], 1, c1, 3);
	hand_rank(&rs.r[2], 2, c2, 4);
	ranks_compare(&rs, -1);
	assert_int_equal(rs.matched, 3);
	assert_int_equal(rs.unmatched, 1);
	assert_int_equal(rs.ncolls, 2);
	/* 1024 bytes: k = 0 and 2, the shortest of each (80 + 70), group: the 3 ranks given */
	assert_int_equal(rs.colls[0].bytes, 1024);
	assert_int_equal(rs.colls[0].calls, 2);
	assert_int_equal(rs.colls[0].time_ns, 150);
	assert_int_equal(rs.colls[0].n, 3);
	/* 2048 bytes: rank 0's kind, the metadata's group */
	assert_int_equal(rs.colls[1].bytes, 2048);
	assert_int_equal(rs.colls[1].kind, COLL_ALLREDUCE);
	assert_int_equal(rs.colls[1].time_ns, 40);
	assert_int_equal(rs.colls[1].n, 4);
	/* step 1: rank 1 started k = 0 and 1 last, 500 + 100 ns after the first */
	assert_int_equal(rs.nstrag, 1);
	assert_int_equal(rs.strag[0].instances, 2);
	assert_int_equal(rs.strag[0].rank, 1);
	assert_int_equal(rs.strag[0].late, 2);
	assert_int_equal(rs.strag[0].lag_ns, 600);
	assert_int_equal(rs.warn.nkinds, 3);
	assert_string_equal(rs.warn.k[0].kind, "unmatched collectives");
	assert_non_null(strstr(rs.warn.k[0].shown[0], "ranks ran 3 to 4 communication kernels"));
	assert_string_equal(rs.warn.k[1].kind, "clocks differ");
	assert_non_null(strstr(rs.warn.k[1].shown[0], "differs by 60000 ns across ranks"));
	assert_string_equal(rs.warn.k[2].kind, "collective kinds differ");
	assert_non_null(strstr(rs.warn.k[2].shown[0], "1 matched communication kernels differ"));
	ranks_free(&rs);
}

/* ranks {ids} of world size @ws compared; the "missing ranks" warning's text, or NULL */
static const char *missing_of(struct kp_ranks *rs, const int64_t *ids, size_t n, int64_t ws,
			      int one_rank)
{
	memset(rs, 0, sizeof(*rs));
	rs->r = calloc(n, sizeof(*rs->r));
	rs->n = n;
	for (size_t i = 0; i < n; i++) {
		hand_rank(&rs->r[i], ids[i], NULL, 0);
		rs->r[i].world_size = ws;
	}
	rs->one_rank = one_rank;
	ranks_compare(rs, -1);
	for (int k = 0; k < rs->warn.nkinds; k++)
		if (!strcmp(rs->warn.k[k].kind, "missing ranks"))
			return rs->warn.k[k].shown[0];
	return NULL;
}

/*
 * A set short of its world size names the ranks it lacks, as ranges; one rank's own summary
 * (analyze --ranks of one trace, for merge) is not a partial set and says nothing.
 */
static void missing_ranks_are_named_except_in_one_ranks_summary(void **state)
{
	(void)state;
	struct kp_ranks rs;
	static const int64_t ids[] = { 0, 4, 5, 9 };
	assert_string_equal(missing_of(&rs, ids, 4, 12, 0),
			    "warning: 4 of 12 ranks given, missing: 1-3, 6-8, 10-11");
	ranks_free(&rs);
	static const int64_t one[] = { 1 };
	assert_null(missing_of(&rs, one, 1, 2, 1));
	ranks_free(&rs);
	/* merge of that one summary: a set of one, rank 0 missing */
	assert_string_equal(missing_of(&rs, one, 1, 2, 0), "warning: 1 of 2 ranks given, missing: 0");
	ranks_free(&rs);
	/* one_rank only excuses a single trace */
	assert_string_equal(missing_of(&rs, ids, 2, 3, 1), "warning: 2 of 3 ranks given, missing: 1-2");
	ranks_free(&rs);
	static const int64_t far[] = { 0 };
	const char *m = missing_of(&rs, far, 1, 100000, 0);
	assert_string_equal(m, "warning: 1 of 100000 ranks given, missing: 1-99999");
	ranks_free(&rs);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ranks_come_from_distributed_info_in_rank_order),
		cmocka_unit_test(a_summary_without_collective_records),
		cmocka_unit_test(collectives_get_nccl_tests_bandwidths),
		cmocka_unit_test(the_late_rank_of_a_step_is_its_straggler),
		cmocka_unit_test(parallel_and_serial_loads_agree),
		cmocka_unit_test(ranks_come_from_file_names_without_distributed_info),
		cmocka_unit_test(bus_factors_follow_nccl_tests),
		cmocka_unit_test(collectives_match_by_order_and_warn_on_what_differs),
		cmocka_unit_test(directories_expand_to_their_traces_in_name_order),
		cmocka_unit_test(missing_ranks_are_named_except_in_one_ranks_summary),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
