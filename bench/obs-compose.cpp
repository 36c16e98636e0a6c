/*
 * bench/obs-compose.cpp — what kprof's op observer (capture/intercept/python/kprof_torch_obs.cpp)
 * spends composing one op's message, without torch: against the stand-in torch of
 * tests/obs/mock (its IValues and tensors are plain vectors, so this is the observer's own
 * formatting, not torch's accessors), the ops' callbacks run a million times on a
 * convolution's arguments, an add's and an add with a double (an eps); the range recorder is
 * a stub.  MODE is kprof_obs_start's: 1 the hook's (sizes, types, scalars), 0 names only.
 *
 *   g++ -std=c++17 -O2 -DNDEBUG -Itests/obs/mock bench/obs-compose.cpp \
 *       capture/intercept/python/kprof_torch_obs.cpp -rdynamic -ldl -o build/obs-compose
 *   build/obs-compose [MODE]
 */
#include <ATen/record_function.h>
#include <chrono>
#include <cstdio>
#include <vector>
extern "C" {
int kprof_obs_start(int mode);
void kprof_obs_stop(void);
static int depth;
__attribute__((visibility("default"))) int kprof_shim_range_push(const char *msg) { (void)msg; return depth++; }
__attribute__((visibility("default"))) int kprof_shim_range_pop(void) { return --depth; }
}
namespace at {
std::vector<std::pair<CallbackHandle, RecordFunctionCallback>> g_callbacks;
static CallbackHandle next_handle = 1;
CallbackHandle addGlobalCallback(const RecordFunctionCallback &cb) { g_callbacks.emplace_back(next_handle, cb); return next_handle++; }
void removeCallback(CallbackHandle h) { for (size_t i = 0; i < g_callbacks.size(); i++) if (g_callbacks[i].first == h) g_callbacks.erase(g_callbacks.begin() + (long)i); }
}
using c10::IValue;
static double run(at::RecordFunction &fn, int n) {
	auto &cb = at::g_callbacks[0].second;
	auto t0 = std::chrono::steady_clock::now();
	for (int i = 0; i < n; i++) { auto c = cb.start(fn); cb.end(fn, c.get()); }
	return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / n;
}
int main(int argc, char **argv)
{
	int mode = argc > 1 ? atoi(argv[1]) : 1;
	kprof_obs_start(mode);
	at::RecordFunction conv, add, addd;
	conv.name_ = "aten::convolution"; conv.seq_ = 12;
	conv.inputs_ = { IValue::of(at::Tensor({ 16, 64, 32, 32 }, "c10::BFloat16")), IValue::of(at::Tensor({ 128, 64, 3, 3 }, "c10::BFloat16")),
		      IValue(), IValue::ints({ 1, 1 }), IValue::ints({ 1, 1 }), IValue::ints({ 1, 1 }),
		      IValue::of(false), IValue::ints({ 0, 0 }), IValue::of((int64_t)1) };
	add.name_ = "aten::add"; add.seq_ = 40;
	add.inputs_ = { IValue::of(at::Tensor({ 4, 512, 1024 }, "c10::BFloat16")), IValue::of(at::Tensor({ 4, 512, 1024 }, "c10::BFloat16")), IValue::of((int64_t)1) };
	addd.name_ = "aten::add"; addd.seq_ = 41;
	addd.inputs_ = { IValue::of(at::Tensor({ 4, 512, 1 }, "float")), IValue::of(1e-6), IValue::of((int64_t)1) };
	for (int k = 0; k < 3; k++)
		printf("mode %d: conv %.1f ns, add %.1f ns, add(eps) %.1f ns\n", mode, run(conv, 1000000), run(add, 1000000), run(addd, 1000000));
}
