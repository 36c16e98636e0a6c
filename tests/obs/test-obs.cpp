/*
 * tests/obs/test-obs.cpp — kprof's op observer (capture/intercept/python/kprof_torch_obs.cpp)
 * without torch: compiled against tests/obs/mock/ (torch's RecordFunction, IValue and Tensor
 * as torch 2.11 has them), its callbacks run on made-up op calls, and each range message it
 * hands to kprof-shim.so's recorder (kprof_shim_range_push, defined here) checked as text and
 * through capture/intercept/nvtxmsg.c's parser, the other side of the format.
 *
 *     make obs-check
 */
#include <ATen/record_function.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "intercept/hostops.h"
int kprof_obs_start(int mode);
void kprof_obs_stop(void);
unsigned long long kprof_obs_calls(void);
unsigned long long kprof_obs_unread(void);
const char *kprof_obs_first_error(void);
unsigned long long kprof_obs_truncated(void);

/* kprof-shim.so's recorder, found by the observer with dlsym(RTLD_DEFAULT) (-rdynamic) */
static std::vector<std::string> pushed;
static int depth, pops;
__attribute__((visibility("default"))) int kprof_shim_range_push(const char *msg)
{
	pushed.push_back(msg);
	return depth++;
}
__attribute__((visibility("default"))) int kprof_shim_range_pop(void)
{
	pops++;
	return --depth;
}
}

namespace at {
std::vector<std::pair<CallbackHandle, RecordFunctionCallback>> g_callbacks;
static CallbackHandle next_handle = 1;
CallbackHandle addGlobalCallback(const RecordFunctionCallback &cb)
{
	g_callbacks.emplace_back(next_handle, cb);
	return next_handle++;
}
void removeCallback(CallbackHandle h)
{
	for (size_t i = 0; i < g_callbacks.size(); i++)
		if (g_callbacks[i].first == h)
			g_callbacks.erase(g_callbacks.begin() + (long)i);
}
} // namespace at

using c10::IValue;
static int failed;
static unsigned long long unrecorded; /* messages composed in mode 6, never pushed */

#define CHECK(cond, ...)                                                                   \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fprintf(stderr, "test-obs: %s:%d: ", __FILE__, __LINE__);           \
			fprintf(stderr, __VA_ARGS__);                                       \
			fputc('\n', stderr);                                                \
			failed++;                                                           \
		}                                                                           \
	} while (0)

/* One op call through the global callbacks of its scope (start, then end); the message it
 * pushed, or "(nothing)" */
static std::string call(const char *name, int64_t seq, std::vector<IValue> in, bool throws = false,
			at::RecordScope scope = at::RecordScope::FUNCTION)
{
	at::RecordFunction fn;
	fn.name_ = name, fn.seq_ = seq, fn.inputs_ = std::move(in), fn.throw_inputs = throws;
	fn.scope_ = scope;
	size_t n = pushed.size();
	for (auto &cb : at::g_callbacks) {
		if (!cb.second.checkScope(scope))
			continue;
		auto ctx = cb.second.start(fn);
		if (cb.second.end)
			cb.second.end(fn, ctx.get());
	}
	return pushed.size() > n ? pushed.back() : std::string("(nothing)");
}

static void expect(const std::string &got, const char *want)
{
	CHECK(got == want, "message\n  got  %s\n  want %s", got.c_str(), want);
}

static at::Tensor T(std::vector<int64_t> s, const char *type = "c10::BFloat16")
{
	return at::Tensor(std::move(s), type);
}

static void shapes_and_types(void)
{
	CHECK(kprof_obs_start(1) == 0, "start");
	CHECK(at::g_callbacks.size() == 2 && at::g_callbacks[0].second.inputs &&
		      !at::g_callbacks[1].second.inputs,
	      "two callbacks: ops with inputs, autograd nodes without");
	expect(call("aten::addmm", 5,
		    { IValue::of(T({ 128 })), IValue::of(T({ 4, 64 })), IValue::of(T({ 64, 128 })),
		      IValue::of((int64_t)1), IValue::of(1.0) }),
	       "aten::addmm, seq = 5, sizes = [[128], [4, 64], [64, 128], [], []], dtypes = "
	       "[c10::BFloat16, c10::BFloat16, c10::BFloat16, , ], concrete = [\"\", \"\", \"\", "
	       "\"1\", \"1.\"]");
	/* a tensor list: a slot per tensor; no sequence number: no seq field */
	expect(call("aten::cat", -1,
		    { IValue::list({ T({ 2, 3 }, "float"), T({ 2, 5 }, "float") }),
		      IValue::of((int64_t)-1) }),
	       "aten::cat, sizes = [[2, 3], [2, 5], []], dtypes = [float, float, ], concrete = "
	       "[\"\", \"\", \"-1\"]");
	/* an empty list, an undefined, a nested and a symbolic tensor: no dims; a string: no text */
	expect(call("aten::stack", 3,
		    { IValue::list({}), IValue::of(at::Tensor()),
		      IValue::of(at::Tensor({ 2 }, "float", true)),
		      IValue::of(at::Tensor({ 2 }, "float", false, true)), IValue::str("mean") }),
	       "aten::stack, seq = 3, sizes = [[], [], [], [], []], dtypes = [, , float, float, ], "
	       "concrete = [\"\", \"\", \"\", \"\", \"\"]");
	/* a convolution's arguments as torch.profiler writes them */
	expect(call("aten::convolution", 0,
		    { IValue::of(T({ 16, 3, 64, 64 }, "float")), IValue::of(T({ 32, 3, 7, 7 }, "float")),
		      IValue(), IValue::ints({ 2, 2 }), IValue::ints({ 3, 3 }), IValue::ints({ 1, 1 }),
		      IValue::of(false), IValue::ints({ 0, 0 }), IValue::of((int64_t)1) }),
	       "aten::convolution, seq = 0, sizes = [[16, 3, 64, 64], [32, 3, 7, 7], [], [], [], "
	       "[], [], [], []], dtypes = [float, float, , , , , , , ], concrete = [\"\", \"\", \"\", "
	       "\"[2, 2]\", \"[3, 3]\", \"[1, 1]\", \"False\", \"[0, 0]\", \"1\"]");
	/* floats; a text over 63 bytes is left out */
	std::vector<int64_t> many(30, 1024);
	expect(call("aten::foo", 1, { IValue::of(0.5), IValue::of(-3.0), IValue::of(1e300), IValue::ints(many) }),
	       "aten::foo, seq = 1, sizes = [[], [], [], []], dtypes = [, , , ], concrete = "
	       "[\"0.5\", \"-3.\", \"1.0000000000000001e+300\", \"\"]");
	/* torch's operator<< for a double: integral in int64's range "N." (-0.0 too, unsigned),
	 * past it, subnormal or not finite %.17g */
	expect(call("aten::bar", 2,
		    { IValue::of(1e15), IValue::of(-0.0), IValue::of(-9223372036854775808.0), IValue::of(1e19),
		      IValue::of(5e-324), IValue::of(1.0 / 0.0) }),
	       "aten::bar, seq = 2, sizes = [[], [], [], [], [], []], dtypes = [, , , , , ], concrete = "
	       "[\"1000000000000000.\", \"0.\", \"-9223372036854775808.\", \"1e+19\", "
	       "\"4.9406564584124654e-324\", \"inf\"]");
	/* one input, not a tensor: its type list reads "[]" (seen on the GPU: PythonDispatchMode) */
	expect(call("PythonDispatchMode", -1, { IValue::str("mode") }),
	       "PythonDispatchMode, sizes = [[]], dtypes = [], concrete = [\"\"]");
	/* an autograd node: its name and sequence number, whatever its inputs (never read: a
	 * node asked would throw here), once; AccumulateGrad's has none (-1), still an op */
	size_t before = pushed.size();
	expect(call("MmBackward0", 5, { IValue::of(T({ 4, 128 })) }, true,
		    at::RecordScope::BACKWARD_FUNCTION),
	       "MmBackward0, seq = 5");
	CHECK(pushed.size() == before + 1, "the node's range once, got %zu", pushed.size() - before);
	expect(call("torch::autograd::AccumulateGrad", -1, {}, false, at::RecordScope::BACKWARD_FUNCTION),
	       "torch::autograd::AccumulateGrad, seq = -1");
	CHECK(kprof_obs_unread() == 0, "a node's inputs are not read, got %llu unread", kprof_obs_unread());
	/* the engine's wrapper around a node: scope FUNCTION, no inputs, no sequence number */
	expect(call("autograd::engine::evaluate_function: MmBackward0", -1, {}),
	       "autograd::engine::evaluate_function: MmBackward0, sizes = [], dtypes = [], "
	       "concrete = []");
	/* a label (record_function, scope USER_SCOPE): the ops' callback, with its inputs */
	expect(call("## forward ##", -1, {}, false, at::RecordScope::USER_SCOPE),
	       "## forward ##, sizes = [], dtypes = [], concrete = []");
	kprof_obs_stop();
	CHECK(at::g_callbacks.empty(), "stop removes the callbacks");
}

static void names_only(void)
{
	CHECK(kprof_obs_start(0) == 0, "start, names");
	CHECK(!at::g_callbacks[0].second.inputs, "no inputs asked for");
	expect(call("aten::mm", 3, {}), "aten::mm, seq = 3");
	/* an op without a sequence number still reads as an op, not a label */
	expect(call("aten::empty", -1, {}), "aten::empty, seq = -1");
	kprof_obs_stop();
}

/* bench/rf-floor.py's modes: torch's callbacks with nothing behind them; the op callback asks
 * for the inputs in mode 4 as the hook's does, not in mode 5; an unknown mode starts nothing */
static void noop_modes(void)
{
	unsigned long long calls = kprof_obs_calls();
	size_t n = pushed.size();
	int pops0 = pops;
	for (int mode = 4; mode <= 5; mode++) {
		CHECK(kprof_obs_start(mode) == 0, "start, mode %d", mode);
		CHECK(at::g_callbacks.size() == 2, "mode %d: %zu callbacks", mode, at::g_callbacks.size());
		CHECK(at::g_callbacks[0].second.inputs == (mode == 4), "mode %d: inputs asked: %d", mode,
		      at::g_callbacks[0].second.inputs);
		CHECK(!at::g_callbacks[1].second.inputs, "mode %d: the nodes' callback asks no inputs",
		      mode);
		expect(call("aten::mm", 3, { IValue::of(T({ 2, 2 })) }), "(nothing)");
		expect(call("MmBackward0", 3, {}, false, at::RecordScope::BACKWARD_FUNCTION), "(nothing)");
		kprof_obs_stop();
	}
	CHECK(pushed.size() == n && kprof_obs_calls() == calls && depth == 0,
	      "no-op modes recorded %zu ranges", pushed.size() - n);
	/* mode 6: the hook's messages composed, not recorded */
	CHECK(kprof_obs_start(6) == 0 && at::g_callbacks[0].second.inputs, "start, unrecorded");
	expect(call("aten::mm", 3, { IValue::of(T({ 2, 2 })) }), "(nothing)");
	expect(call("MmBackward0", 3, {}, false, at::RecordScope::BACKWARD_FUNCTION), "(nothing)");
	CHECK(kprof_obs_calls() == calls + 1 && depth == 0 && pops == pops0,
	      "unrecorded: composed once, no range");
	unrecorded++;
	kprof_obs_stop();
	calls = kprof_obs_calls();
	CHECK(kprof_obs_start(7) == -1 && kprof_obs_start(-1) == -1 && at::g_callbacks.empty(),
	      "unknown modes start nothing");
}

static void unreadable_and_oversized(void)
{
	CHECK(kprof_obs_start(1) == 0, "start");
	expect(call("aten::mul", 2, { IValue::of(T({ 4 })) }, true), "aten::mul");
	CHECK(kprof_obs_unread() == 1, "one unread, got %llu", kprof_obs_unread());
	CHECK(strstr(kprof_obs_first_error(), "outside RecordFunction start callback"),
	      "first error: %s", kprof_obs_first_error());
	/* 2,000 tensors: over the 8 KB message, so no sizes rather than some */
	std::vector<at::Tensor> big(2000, T({ 1024, 1024, 8 }));
	expect(call("aten::cat", 7, { IValue::list(big) }), "aten::cat, seq = 7");
	CHECK(kprof_obs_truncated() == 1, "one truncated, got %llu", kprof_obs_truncated());
	/* past what nvtxmsg.c reads (64 inputs, 8 dims): no sizes, so the op stays an op;
	 * a type name over 31 bytes: "" (no type) */
	std::vector<at::Tensor> params(65, T({ 4 }));
	expect(call("aten::_foreach_add_", 8, { IValue::list(params) }), "aten::_foreach_add_, seq = 8");
	expect(call("aten::view", 9, { IValue::of(T({ 1, 1, 1, 1, 1, 1, 1, 1, 1 })) }),
	       "aten::view, seq = 9");
	std::vector<at::Tensor> sixty_four(64, T({ 4 }));
	std::string want = "aten::_foreach_mul_, seq = 10, sizes = [[4]";
	for (int i = 1; i < 64; i++)
		want += ", [4]";
	want += "], dtypes = [c10::BFloat16";
	for (int i = 1; i < 64; i++)
		want += ", c10::BFloat16";
	want += "], concrete = [\"\"";
	for (int i = 1; i < 64; i++)
		want += ", \"\"";
	want += "]";
	expect(call("aten::_foreach_mul_", 10, { IValue::list(sixty_four) }), want.c_str());
	expect(call("aten::neg", 11, { IValue::of(T({ 2 }, "c10::SomeTypeWithAVeryLongNameIndeed")) }),
	       "aten::neg, seq = 11, sizes = [[2]], dtypes = [], concrete = [\"\"]");
	CHECK(kprof_obs_truncated() == 3, "three left without sizes, got %llu", kprof_obs_truncated());
	kprof_obs_stop();
}

/* Every message the observer wrote, through the parser hostops.c uses. */
static void messages_parse(void)
{
	for (const std::string &m : pushed) {
		struct kp_nvtx_msg p;
		char why[128] = "";
		int rc = nvtxmsg_parse(m.c_str(), &p, why, sizeof(why));
		/* the one with unreadable inputs is the name alone: a range, not an op */
		CHECK(rc == (m == "aten::mul" ? 1 : 0), "'%.80s' parses to %d: %s", m.c_str(), rc,
		      why);
		if (rc == 0 && p.has_sizes && strstr(m.c_str(), "dtypes"))
			CHECK(p.ndtypes == p.nslots && p.nconc == p.nslots,
			      "'%.80s': %d slots, %d types, %d texts", m.c_str(), p.nslots,
			      p.ndtypes, p.nconc);
	}
	struct kp_nvtx_msg p;
	char why[128];
	nvtxmsg_parse(pushed[3].c_str(), &p, why, sizeof(why)); /* the convolution */
	CHECK(!strcmp(p.name, "aten::convolution") && p.seq == 0 && p.nslots == 9 &&
		      p.slot[1].nd == 4 && p.slot[1].d[3] == 7 && !strcmp(p.dtype[0], "float") &&
		      !strcmp(p.conc[3], "[2, 2]") && !strcmp(p.conc[6], "False"),
	      "the convolution's fields");
	CHECK(pops == (int)pushed.size() && depth == 0, "%d pops for %zu pushes", pops, pushed.size());
	CHECK(kprof_obs_calls() == pushed.size() + unrecorded, "calls %llu", kprof_obs_calls());
}

int main(void)
{
	shapes_and_types();
	names_only();
	noop_modes();
	unreadable_and_oversized();
	messages_parse();
	if (failed) {
		fprintf(stderr, "test-obs: %d checks failed\n", failed);
		return 1;
	}
	printf("  obs: %zu op observer messages as written and parsed (stand-in torch; the real one: "
	       "tests/gpu/torch_hook.sh)\n",
	       pushed.size());
	return 0;
}
