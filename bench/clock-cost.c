/*
 * bench/clock-cost.c — what one timestamp and one range of kprof-shim.so's recorder cost on
 * this host (issue 24: the observer records two timestamps a range, from CUPTI's clock once
 * kprof-inject.so attaches it, capture/intercept/shim.c now_ns()).  Prints ns per call of
 * clock_gettime's clocks, cuptiGetTimestamp, and kprof_shim_range_push + pop with a message
 * the size of the observer's (750 that repeat, as a training loop's steps open them, and one
 * in four new, as those with a growing sequence number are), on CUPTI's clock and on the
 * shim's own.
 *
 *   cc -O2 -I/usr/local/cuda/include bench/clock-cost.c -o build/clock-cost \
 *      -L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lcupti -ldl
 *   build/clock-cost build/kprof-shim.so
 */
#include <cupti.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define N 2000000

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t cupti_clock(void)
{
	uint64_t t = 0;
	cuptiGetTimestamp(&t);
	return t;
}

static void per_clock(const char *name, clockid_t id)
{
	struct timespec ts;
	uint64_t t0 = mono();
	for (int i = 0; i < N; i++)
		clock_gettime(id, &ts);
	printf("| clock_gettime(%s) | %.1f |\n", name, (double)(mono() - t0) / N);
}

int main(int argc, char **argv)
{
	char src[128] = "?";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (f) {
		if (fgets(src, sizeof(src), f))
			src[strcspn(src, "\n")] = 0;
		fclose(f);
	}
	printf("clocksource: %s\n| call | ns |\n|---|---:|\n", src);
	per_clock("REALTIME", CLOCK_REALTIME);
	per_clock("MONOTONIC", CLOCK_MONOTONIC);
	per_clock("MONOTONIC_RAW", CLOCK_MONOTONIC_RAW);
	cupti_clock();
	uint64_t t0 = mono(), sink = 0;
	for (int i = 0; i < N; i++)
		sink += cupti_clock();
	printf("| cuptiGetTimestamp | %.1f |\n", (double)(mono() - t0) / N);
	if (argc < 2)
		return (int)(sink & 0);
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		fprintf(stderr, "clock-cost: %s\n", dlerror());
		return 1;
	}
	int (*push)(const char *) = (int (*)(const char *))dlsym(h, "kprof_shim_range_push");
	int (*pop)(void) = (int (*)(void))dlsym(h, "kprof_shim_range_pop");
	void (*attach)(void *, void *, uint64_t (*)(void)) =
		(void (*)(void *, void *, uint64_t (*)(void)))dlsym(h, "kprof_shim_attach");
	if (!push || !pop || !attach) {
		fprintf(stderr, "clock-cost: %s lacks the range recorder\n", argv[1]);
		return 1;
	}
	const char *msg0 = "aten::convolution, seq = 12, sizes = [[16, 64, 32, 32], [128, 64, 3, 3], [], "
			  "[], [], [], [], [], []], dtypes = [c10::BFloat16, c10::BFloat16, , , , , "
			  ", , ], concrete = [\"\", \"\", \"\", \"[1, 1]\", \"[1, 1]\", \"[1, 1]\", "
			  "\"False\", \"[0, 0]\", \"1\"]";
	/* a training step's messages, opened again every step, but for one in four, which
	 * carries a sequence number that grows for the whole run (the observer's "seq = N" of
	 * a forward op that records for autograd, or of an autograd node): new every time */
	enum { DISTINCT = 750, PAIRS = N / 4 };
	static char msgs[DISTINCT][300];
	for (int i = 0; i < DISTINCT; i++)
		snprintf(msgs[i], sizeof(msgs[i]), "%d %s", i, msg0);
	static char fresh[PAIRS / 4][300];
	for (int i = 0; i < PAIRS / 4; i++)
		snprintf(fresh[i], sizeof(fresh[i]), "aten::convolution, seq = %d%s", 1000 + i,
			 strchr(msg0, 's') + 8);
	size_t len = strlen(msgs[0]);
	for (int c = 0; c < 2; c++) {
		attach(NULL, NULL, c ? NULL : cupti_clock);
		struct rusage ru0, ru1;
		getrusage(RUSAGE_SELF, &ru0);
		t0 = mono();
		for (int i = 0; i < N / 4; i++) {
			push(i % 4 == 3 ? fresh[i / 4] : msgs[(i - i / 4) % DISTINCT]);
			pop();
		}
		double ns = (double)(mono() - t0) / (N / 4);
		getrusage(RUSAGE_SELF, &ru1);
		printf("| range push + pop (~%zu-byte messages, %d repeating + 1 in 4 new), %s; page faults per 1000 ranges %.1f | %.1f |\n",
		       len, DISTINCT, c ? "clock_gettime(REALTIME)" : "cuptiGetTimestamp",
		       (double)(ru1.ru_minflt - ru0.ru_minflt) * 1000.0 / (N / 4), ns);
	}
	return (int)(sink & 0);
}
