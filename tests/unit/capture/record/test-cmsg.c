/*
 * test-cmsg.c — capture's messages through the command's sinks (capture/record/cmsg.c): the
 * run's first error returned, a later one printed, warnings and notes with kprof's prefix.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "kprof/capture.h"
#include "kprof/diag.h"
#include "record/cmsg.h"

static void first_error_is_returned_later_ones_printed(void **state)
{
	(void)state;
	char *buf = NULL, *out = NULL;
	size_t len = 0, olen = 0;
	struct kp_capture_opts o = { .msg = open_memstream(&buf, &len),
				     .out = open_memstream(&out, &olen) };
	struct kp_diag d = { 0 };
	assert_int_equal(cmsg_error(&o, &d, KP_ENV, "cuBLASLt: %s: %s", "matmul", "not supported"),
			 -1);
	assert_int_equal(cmsg_error(&o, &d, KP_REGRESSION, "%d accuracy checks failed", 2), -1);
	cmsg_warn(&o, "CUPTI dropped %llu records", 7ull);
	cmsg_note(&o, "--metrics: counters for %zu kernel%s", (size_t)1, "");
	cmsg_out(&o, "# results %s: %zu cases\n", "r.json", (size_t)3);
	fclose(o.msg);
	fclose(o.out);
	assert_int_equal(d.status, KP_ENV);
	assert_string_equal(d.msg, "error: cuBLASLt: matmul: not supported");
	assert_string_equal(buf, "kprof: error: 2 accuracy checks failed\n"
				 "kprof: warning: CUPTI dropped 7 records\n"
				 "kprof: --metrics: counters for 1 kernel\n");
	assert_string_equal(out, "# results r.json: 3 cases\n");
	free(buf);
	free(out);
	/* no sinks: nothing printed, the error still returned */
	struct kp_capture_opts q = { 0 };
	struct kp_diag e = { 0 };
	cmsg_warn(&q, "unseen");
	cmsg_out(&q, "unseen\n");
	cmsg_error(&q, &e, KP_ENV, "cannot open '%s': %s", "x", "denied");
	assert_string_equal(e.msg, "error: cannot open 'x': denied");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(first_error_is_returned_later_ones_printed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
