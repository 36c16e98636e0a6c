/*
 * ranks-job.h — a synthetic 4-rank job for test-ranks.c and test-summary.c: each rank's
 * Kineto trace (two steps, a GEMM and an all-reduce per step, rank 2 straggles in step 2).
 * Static functions: include it in one test file.
 */
#ifndef KPROF_TEST_RANKS_JOB_H
#define KPROF_TEST_RANKS_JOB_H

#define NR 4

/*
 * Rank @r of a 4-rank job, two steps of 1000 us.  Each step: a GEMM launched at +10 us runs
 * from +20 us for 300 us (800 us on rank 2 in step 2: the straggler); an all-reduce of 1 Mi
 * floats (4 MiB) launched at +15 us starts when the rank's GEMM ends and ends when the last
 * rank's GEMM ends + 100 us.
 */
static void write_rank(const char *path, int r, int with_info)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	if (with_info)
		fprintf(f,
			"{\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": %d},\n",
			r, NR);
	else
		fprintf(f, "{\n");
	fprintf(f,
		"\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\"}],\n\"traceEvents\": [\n");
	int corr = 1;
	for (int s = 0; s < 2; s++) {
		int base = s * 1000;
		int gemm = (r == 2 && s == 1) ? 800 : 300;
		int gemm_end = base + 20 + gemm;
		int last_end = base + 20 + (s == 1 ? 800 : 300);
		int comm_end = last_end + 100;
		fprintf(f,
			"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":1000},\n",
			s + 1, base);
		fprintf(f,
			"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":3,\"args\":{\"correlation\":%d}},\n",
			base + 10, corr);
		fprintf(f,
			"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sm90_gemm\",\"pid\":0,\"tid\":7,\"ts\":%d,\"dur\":%d,\"args\":{\"correlation\":%d,\"device\":0,\"stream\":7}},\n",
			base + 20, gemm, corr);
		corr++;
		fprintf(f,
			"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":3,\"args\":{\"correlation\":%d}},\n",
			base + 15, corr);
		fprintf(f,
			"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)\",\"pid\":0,\"tid\":20,\"ts\":%d,\"dur\":%d,"
			"\"args\":{\"correlation\":%d,\"device\":0,\"stream\":20,\"Collective name\":\"allreduce\",\"In msg nelems\":1048576,\"Out msg nelems\":1048576,\"Group size\":4,\"dtype\":\"Float\"}},\n",
			gemm_end, comm_end - gemm_end, corr);
		corr++;
	}
	fprintf(f, "{\"ph\":\"i\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":0,\"s\":\"t\"}]}\n");
	fclose(f);
}

static char **write_job(const char *dir, int with_info, size_t *n)
{
	static char paths[NR][512];
	static char *v[NR + 1];
	/* written in an order unlike the ranks' */
	static const int order[NR] = { 3, 1, 0, 2 };
	for (int i = 0; i < NR; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/job_rank%d.json", dir, order[i]);
		write_rank(paths[i], order[i], with_info);
		v[i] = paths[i];
	}
	v[NR] = NULL;
	*n = NR;
	return v;
}

#endif /* KPROF_TEST_RANKS_JOB_H */
