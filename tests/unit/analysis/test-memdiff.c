/*
 * test-memdiff.c — memdiff_join/memdiff_gate (src/analysis/memdiff.c) on memory reports built
 * from struct literals: devices paired by type and id, live rows merged by op across modules,
 * growth order, the gate's boundary, a device found on one side, and the gate's message.
 * Expected figures are worked out by hand in the comments.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/memdiff.h"

#define MIB (1024 * 1024)

/*
 * base cuda:0: peak 100 MiB = mm 30 (two modules: 20 + 10) + mul 10 + before 60.
 * new  cuda:0: peak 160 MiB = mm 70 (one module) + add 5 + mul 5 + before 80.
 * By op: mm 30 -> 70 (+40), before 60 -> 80 (+20), add 0 -> 5 (+5), mul 10 -> 5 (-5);
 * the deltas sum to +60 = 160 - 100.
 */
static struct kp_mem_row base_live[] = {
	{ .op = "aten::mm", .module = "M/Linear_0", .bytes = 20 * MIB, .count = 1 },
	{ .op = "aten::mm", .module = "M/Linear_1", .bytes = 10 * MIB, .count = 1 },
	{ .op = "aten::mul", .module = "M", .bytes = 10 * MIB, .count = 2 },
	{ .op = MEM_BEFORE, .bytes = 60 * MIB },
};
static struct kp_mem_row new_live[] = {
	{ .op = "aten::mm", .module = "M/Linear_0", .bytes = 70 * MIB, .count = 2 },
	{ .op = "aten::add", .module = "M", .bytes = 5 * MIB, .count = 1 },
	{ .op = "aten::mul", .module = "M", .bytes = 5 * MIB, .count = 1 },
	{ .op = MEM_BEFORE, .bytes = 80 * MIB },
};

static void reps(struct kp_memrep *b, struct kp_memrep *n, struct kp_mem_dev *bd,
		 struct kp_mem_dev *nd)
{
	memset(b, 0, sizeof(*b));
	memset(n, 0, sizeof(*n));
	bd[0] = (struct kp_mem_dev){ .dev_type = 1, .dev_id = 0, .peak_alloc = 100 * MIB,
				     .peak_res = 128 * MIB, .live = base_live, .nlive = 4 };
	nd[0] = (struct kp_mem_dev){ .dev_type = 1, .dev_id = 0, .peak_alloc = 160 * MIB,
				     .peak_res = 192 * MIB, .live = new_live, .nlive = 4 };
	b->devs = bd;
	n->devs = nd;
	b->ndevs = b->ngpu = n->ndevs = n->ngpu = 1;
}

static void memdiff_pairs_ops_by_name_and_sorts_by_growth(void **state)
{
	(void)state;
	struct kp_memrep b, n;
	struct kp_mem_dev bd[1], nd[1];
	reps(&b, &n, bd, nd);
	struct kp_memdiff md;
	memdiff_join(&md, &b, &n);
	assert_int_equal(md.ndevs, 1);
	const struct kp_memdiff_dev *d = &md.devs[0];
	assert_int_equal(d->delta_alloc, 60 * MIB);
	assert_true(fabs(d->ratio_alloc - 1.6) < 1e-12);
	assert_int_equal(d->delta_res, 64 * MIB);
	assert_true(fabs(d->ratio_res - 1.5) < 1e-12);
	assert_true(d->live_known);
	assert_int_equal(d->nops, 4);
	const char *order[] = { "aten::mm", MEM_BEFORE, "aten::add", "aten::mul" };
	const int64_t delta[] = { 40 * MIB, 20 * MIB, 5 * MIB, -5 * MIB };
	int64_t sum = 0;
	for (size_t i = 0; i < 4; i++) {
		assert_string_equal(d->ops[i].op, order[i]);
		assert_int_equal(d->ops[i].delta_bytes, delta[i]);
		sum += d->ops[i].delta_bytes;
	}
	assert_int_equal(d->ops[0].base_bytes, 30 * MIB);
	assert_int_equal(d->ops[2].base_bytes, 0);
	assert_int_equal(sum, d->delta_alloc);
	memdiff_free(&md);
}

/* +60%: a limit of 60 passes (not more than), 59.9 trips; the message names the growers */
static void memdiff_gate_trips_only_above_the_limit(void **state)
{
	(void)state;
	struct kp_memrep b, n;
	struct kp_mem_dev bd[1], nd[1];
	reps(&b, &n, bd, nd);
	struct kp_memdiff md;
	memdiff_join(&md, &b, &n);
	struct kp_memgate_hit h[2];
	assert_int_equal(memdiff_gate(&md, 60, h, 2), 0);
	assert_int_equal(memdiff_gate(&md, 59.9, h, 2), 1);
	assert_true(fabs(h[0].change_pct - 60) < 1e-9);
	char msg[512];
	memdiff_gate_message(&h[0], 3, msg, sizeof(msg));
	assert_string_equal(
		msg,
		"cuda:0 peak allocated 100.00 MiB -> 160.00 MiB (+60.0%), limit 59.9%; grew most: aten::mm +40.00 MiB, (allocated before the trace) +20.00 MiB, aten::add +5.00 MiB");
	memdiff_free(&md);
}

/* a self-comparison: every delta 0, no crossing even at a limit of 0 */
static void memdiff_self_passes_at_zero(void **state)
{
	(void)state;
	struct kp_memrep b, n;
	struct kp_mem_dev bd[1], nd[1];
	reps(&b, &n, bd, nd);
	struct kp_memdiff md;
	memdiff_join(&md, &b, &b);
	assert_int_equal(md.devs[0].delta_alloc, 0);
	for (size_t i = 0; i < md.devs[0].nops; i++)
		assert_int_equal(md.devs[0].ops[i].delta_bytes, 0);
	assert_int_equal(memdiff_gate(&md, 0, NULL, 0), 0);
	memdiff_free(&md);
}

/*
 * base: cuda:0, cuda:1; new: cuda:1, hip:0 (type 6).  cuda:1 pairs with cuda:1; cuda:0 is
 * base only (never trips), hip:0 new only (trips: it grew from nothing).
 */
static void memdiff_pairs_devices_by_type_and_id(void **state)
{
	(void)state;
	struct kp_mem_dev bd[2] = {
		{ .dev_type = 1, .dev_id = 0, .peak_alloc = 10, .peak_res = -1, .bytes_only = 1 },
		{ .dev_type = 1, .dev_id = 1, .peak_alloc = 20, .peak_res = -1, .bytes_only = 1 },
	};
	struct kp_mem_dev nd[2] = {
		{ .dev_type = 1, .dev_id = 1, .peak_alloc = 21, .peak_res = -1, .bytes_only = 1 },
		{ .dev_type = 6, .dev_id = 0, .peak_alloc = 2048, .peak_res = -1, .bytes_only = 1 },
	};
	struct kp_memrep b = { .devs = bd, .ndevs = 2, .ngpu = 2 };
	struct kp_memrep n = { .devs = nd, .ndevs = 2, .ngpu = 2 };
	struct kp_memdiff md;
	memdiff_join(&md, &b, &n);
	assert_int_equal(md.ndevs, 3);
	assert_ptr_equal(md.devs[0].base, &bd[0]);
	assert_null(md.devs[0].new);
	assert_ptr_equal(md.devs[1].new, &nd[0]);
	assert_int_equal(md.devs[1].delta_alloc, 1);
	assert_false(md.devs[1].live_known); /* torch <= 1.9: no live set */
	assert_null(md.devs[2].base);
	assert_int_equal(md.devs[2].delta_alloc, 2048);
	assert_true(md.devs[2].ratio_alloc < 0);
	assert_true(md.devs[2].ratio_res < 0);
	struct kp_memgate_hit h[3];
	assert_int_equal(memdiff_gate(&md, 10, h, 3), 1); /* cuda:1 grew 5%: under 10 */
	assert_ptr_equal(h[0].dev, &md.devs[2]);
	char msg[256];
	memdiff_gate_message(&h[0], 3, msg, sizeof(msg));
	assert_string_equal(msg, "hip:0 (new) peak allocated 2.00 KiB, limit 10%");
	assert_int_equal(memdiff_gate(&md, 4, h, 3), 2);
	memdiff_free(&md);
}

/* Two processes' cuda:0 on each side (two ranks in one trace): named apart by process. */
static void devices_of_one_name_are_told_by_process(void **state)
{
	(void)state;
	struct kp_mem_dev bd[2] = {
		{ .dev_type = 1, .dev_id = 0, .pid = 11, .peak_alloc = 10, .peak_res = -1,
		  .bytes_only = 1 },
		{ .dev_type = 1, .dev_id = 0, .pid = 12, .peak_alloc = 10, .peak_res = -1,
		  .bytes_only = 1 },
	};
	struct kp_mem_dev nd[2] = {
		{ .dev_type = 1, .dev_id = 0, .pid = 21, .peak_alloc = 10, .peak_res = -1,
		  .bytes_only = 1 },
		{ .dev_type = 1, .dev_id = 0, .pid = 22, .peak_alloc = 30, .peak_res = -1,
		  .bytes_only = 1 },
	};
	struct kp_memrep b = { .devs = bd, .ndevs = 2, .ngpu = 2 };
	struct kp_memrep n = { .devs = nd, .ndevs = 2, .ngpu = 2 };
	struct kp_memdiff md;
	memdiff_join(&md, &b, &n);
	assert_int_equal(md.ndevs, 2);
	assert_string_equal(md.devs[0].label, "cuda:0 (pid 11)");
	assert_string_equal(md.devs[1].label, "cuda:0 (pid 12)");
	struct kp_memgate_hit h[2];
	assert_int_equal(memdiff_gate(&md, 10, h, 2), 1);
	char msg[256];
	memdiff_gate_message(&h[0], 2, msg, sizeof(msg));
	assert_string_equal(msg, "cuda:0 (pid 12) peak allocated 10 B -> 30 B (+200.0%), limit 10%");
	memdiff_free(&md);
	/* one cuda:0 a side: the name alone */
	b.ndevs = b.ngpu = n.ndevs = n.ngpu = 1;
	memdiff_join(&md, &b, &n);
	assert_string_equal(md.devs[0].label, "cuda:0");
	memdiff_free(&md);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(devices_of_one_name_are_told_by_process),
		cmocka_unit_test(memdiff_pairs_ops_by_name_and_sorts_by_growth),
		cmocka_unit_test(memdiff_gate_trips_only_above_the_limit),
		cmocka_unit_test(memdiff_self_passes_at_zero),
		cmocka_unit_test(memdiff_pairs_devices_by_type_and_id),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
