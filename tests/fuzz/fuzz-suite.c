/*
 * fuzz-suite.c — libFuzzer harness for capture/suites/suite.c: the input bytes are a
 * `kprof capture --config FILE.yaml` suite (a user's file), parsed by suite_parse() with the
 * command line's defaults, which also expands each case's shape sets (capture_opts_finish(),
 * capture/capture.c).  suite.c, capture.c and record/cmsg.c are compiled into the harness
 * without CUDA, as CI builds them.
 *
 * Checked beyond the sanitizers (and libFuzzer's memory limit, for a suite that asks for
 * more shapes than memory): 0, or -1 with status 2 (4 when out of memory) and a message
 * naming the file; each case named, with its warmup and iterations >= 0.
 * Build and run: tests/fuzz/run.sh suite.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/capture.h"
#include "kprof/diag.h"
#include "kprof/suite.h"

#define FUZZ_NAME "fuzz-suite"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct kp_capture_opts base = { .warmup = 3, .iters = 10, .backward = 1,
						     .sample_period_ms = 10, .nvtx = 1, .libs = 1 };
	struct kp_suite s;
	struct kp_diag d;
	memset(&d, 0, sizeof(d));
	int rc = suite_parse((const char *)data, size, "fuzz.yaml", &base, &s, &d);
	CHECK(rc == 0 || rc == -1);
	if (rc < 0) {
		CHECK((d.status == KP_USAGE || d.status == KP_ENV) && strstr(d.msg, "fuzz.yaml"));
		return 0;
	}
	for (size_t i = 0; i < s.n; i++) {
		CHECK(s.c[i].name && s.c[i].name[0]);
		CHECK(s.c[i].o.warmup >= 0 && s.c[i].o.iters >= 0);
	}
	suite_free(&s);
	return 0;
}
