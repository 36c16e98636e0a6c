/*
 * kprof_torch_obs.cpp — kprof's op observer for PyTorch: a global RecordFunction callback that
 * opens, for every ATen op, autograd node and record_function label, the range that
 * torch.autograd.profiler.emit_nvtx(record_shapes=True) opens, plus each input's type and
 * each scalar argument ("NAME, seq = S, sizes = [[4, 8], []], dtypes = [c10::BFloat16, ],
 * concrete = ["", "2"]", parsed by
 * capture/intercept/nvtxmsg.c), straight into kprof-shim.so's range recorder
 * (kprof_shim_range_push/pop, capture/intercept/shim.c) instead of through NVTX.
 *
 * Why not emit_nvtx: with shapes it also asks RecordFunction for every op's outputs and keeps a
 * map from every output tensor to its producer (input_op_ids), and builds the message with
 * fmt::format a field at a time; that costs 15.4 us per op against 3.3 us plain
 * (bench/RESULTS.md, issue 24).  Here the inputs' sizes are written into a per-thread buffer.
 *
 * Not part of kprof's C build: kprof_torch_hook.py compiles it once per torch build against
 * torch's own headers (torch.utils.cpp_extension.include_paths()) into a cache directory, and
 * loads it with ctypes; without a C++ compiler it falls back to emit_nvtx.  doc/attribution.md §3.
 */
#include <ATen/record_function.h>
#include <ATen/core/ivalue.h>

#include <dlfcn.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_set>

namespace {

using push_fn = int (*)(const char *);
using pop_fn = int (*)();

push_fn g_push;
pop_fn g_pop;
int g_mode; /* OBS_* */
std::atomic<unsigned long long> g_calls{ 0 };
std::mutex g_lock;
at::CallbackHandle g_handle = 0, g_node_handle = 0; /* ops; autograd nodes */
std::atomic<unsigned long long> g_truncated{ 0 };
std::atomic<unsigned long long> g_unread{ 0 }; /* inputs that threw: the name alone */
std::atomic<bool> g_said{ false };
char g_first_error[256]; /* what the first of them said */

constexpr size_t MSG_MAX = 8192;
/* what capture/intercept/nvtxmsg.c reads (hostops.h NVTX_MAX_SLOTS, NVTX_MAX_DIMS, the size
 * of kp_nvtx_msg.dtype): past them a message would not parse, and its range would not be an
 * op, so the sizes are left out instead, as for a message over MSG_MAX */
constexpr size_t MAX_SLOTS = 64, MAX_DIMS = 8, MAX_TYPE = 31;

/* kprof_obs_start's modes: names only; names, sizes and types (the hook's); and, for
 * bench/torch-obs-cost.py and bench/rf-floor.py only, RecordFunction's inputs asked for but
 * not read, sizes without types, callbacks that record nothing (with and without the inputs
 * asked for: what torch's RecordFunction costs by itself), and the hook's messages composed
 * but not recorded */
enum {
	OBS_NAMES = 0,
	OBS_SHAPES = 1,
	OBS_INPUTS_UNREAD = 2,
	OBS_SIZES_ONLY = 3,
	OBS_NOOP_INPUTS = 4,
	OBS_NOOP = 5,
	OBS_UNRECORDED = 6,
};

struct buf {
	char *p, *end;
	bool full = false;

	void put(const char *s, size_t n)
	{
		if (full || (size_t)(end - p) < n + 1) {
			full = true;
			return;
		}
		memcpy(p, s, n);
		p += n;
	}
	void put(const char *s) { put(s, strlen(s)); }
	void num(int64_t v)
	{
		char t[24];
		int i = sizeof(t);
		uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
		do
			t[--i] = (char)('0' + u % 10);
		while (u /= 10);
		if (v < 0)
			t[--i] = '-';
		put(t + i, sizeof(t) - i);
	}
};

/* "[d0, d1, ...]" of a defined dense tensor; "[]" for anything else (as torch's inputSizes) */
void dims(buf &b, const at::Tensor &t)
{
	b.put("[", 1);
	if (t.defined() && !t.is_nested() && !t.unsafeGetTensorImpl()->has_symbolic_sizes_strides()) {
		auto s = t.sizes();
		if (s.size() > MAX_DIMS)
			b.full = true;
		for (size_t i = 0; i < s.size() && !b.full; i++) {
			if (i)
				b.put(", ", 2);
			b.num(s[i]);
		}
	}
	b.put("]", 1);
}

/* each input, a tensor list flattened into one slot per tensor (torch/csrc/profiler/
 * util.cpp inputSizes(fn, true), what emit_nvtx writes): @each(tensor, NULL) for a tensor,
 * @each(NULL, value) for anything else */
template <typename F> void slots(const at::RecordFunction &fn, F each)
{
	for (const c10::IValue &v : fn.inputs()) {
		if (v.isTensorList()) {
			auto l = v.toTensorList();
			if (l.size() == 0)
				each(nullptr, &v);
			for (size_t i = 0; i < l.size(); i++) {
				const at::Tensor t = l.get(i);
				each(&t, nullptr);
			}
		} else if (v.isTensor()) {
			each(&v.toTensor(), nullptr);
		} else {
			each(nullptr, &v);
		}
	}
}

/* A non-tensor input as Kineto's "Concrete Inputs" writes it ("2", "False", "1.", "0.5",
 * "[1, 1]"), quoted; "" for other kinds and for texts over 63 bytes (nvtxmsg.c's limit).
 * Integers by buf::num: no snprintf on the common path. */
void concrete(buf &b, const c10::IValue *v)
{
	b.put("\"", 1);
	char *start = b.p;
	if (!v) {
	} else if (v->isBool()) {
		b.put(v->toBool() ? "True" : "False");
	} else if (v->isInt()) {
		b.num(v->toInt());
	} else if (v->isDouble()) {
		/* as torch's operator<<(ostream, IValue) (aten/src/ATen/core/ivalue.cpp): a normal
		 * or zero double that an int64 holds exactly as that integer and a dot ("2.", and
		 * "0." for -0.0), anything else with 17 significant digits */
		double d = v->toDouble();
		int c = std::fpclassify(d);
		if ((c == FP_NORMAL || c == FP_ZERO) && d >= -9223372036854775808.0 &&
		    d < 9223372036854775808.0 && (double)(int64_t)d == d) {
			b.num((int64_t)d);
			b.put(".", 1);
		} else {
			char t[40];
			int n = snprintf(t, sizeof(t), "%.17g", d);
			if (n > 0 && n < (int)sizeof(t))
				b.put(t, (size_t)n);
		}
	} else if (v->isIntList()) {
		auto l = v->toIntList();
		b.put("[", 1);
		for (size_t i = 0; i < l.size() && b.p - start <= 63; i++) {
			if (i)
				b.put(", ", 2);
			b.num(l.get(i));
		}
		b.put("]", 1);
	}
	if (b.p - start > 63 && !b.full)
		b.p = start;
	b.put("\"", 1);
}

/*
 * ", sizes = [[..], ..], dtypes = [.., ..], concrete = [".", ..]" in one walk over the inputs:
 * the types and texts go to per-thread side buffers, appended after the sizes.
 */
void shapes(buf &b, const at::RecordFunction &fn, bool types)
{
	static thread_local char tmem[MSG_MAX / 2], cmem[MSG_MAX / 2];
	buf bt{ tmem, tmem + sizeof(tmem) }, bc{ cmem, cmem + sizeof(cmem) };
	size_t n = 0;
	b.put(", sizes = [", 11);
	slots(fn, [&](const at::Tensor *t, const c10::IValue *v) {
		if (n == MAX_SLOTS)
			b.full = true;
		if (b.full)
			return;
		if (n++) {
			b.put(", ", 2);
			bt.put(", ", 2);
			bc.put(", ", 2);
		}
		if (t)
			dims(b, *t);
		else
			b.put("[]", 2);
		if (!types)
			return;
		if (t && t->defined()) {
			auto name = t->dtype().name();
			if (name.size() <= MAX_TYPE)
				bt.put(name.data(), name.size());
		}
		concrete(bc, v);
	});
	if (types) {
		b.put("], dtypes = [", 13);
		b.put(tmem, (size_t)(bt.p - tmem));
		b.put("], concrete = [", 15);
		b.put(cmem, (size_t)(bc.p - cmem));
	}
	b.put("]", 1);
	b.full |= bt.full || bc.full; /* a list cut short would misplace the slots: none */
}

void unread(const char *what)
{
	g_unread.fetch_add(1, std::memory_order_relaxed);
	bool no = false;
	if (g_said.compare_exchange_strong(no, true))
		snprintf(g_first_error, sizeof(g_first_error), "%s", what);
}

std::unique_ptr<at::ObserverContext> enter(const at::RecordFunction &fn)
{
	static thread_local char mem[MSG_MAX];
	buf b{ mem, mem + sizeof(mem) };
	g_calls.fetch_add(1, std::memory_order_relaxed);
	try {
		b.put(fn.name());
		if (fn.seqNr() >= 0) {
			b.put(", seq = ", 8);
			b.num(fn.seqNr());
		} else if (g_mode == OBS_NAMES) {
			/* a field all the same, so that the range reads as an op, not a label */
			b.put(", seq = -1", 10);
		}
		if (g_mode == OBS_SHAPES || g_mode == OBS_SIZES_ONLY || g_mode == OBS_UNRECORDED) {
			char *keep = b.p;
			shapes(b, fn, g_mode != OBS_SIZES_ONLY);
			if (b.full) { /* a message cut short would claim wrong shapes: none */
				b.p = keep, b.full = false;
				g_truncated.fetch_add(1, std::memory_order_relaxed);
			}
		}
	} catch (const std::exception &e) {
		/* an input we cannot read: the name alone */
		unread(e.what());
		b.p = mem, b.full = false;
		b.put(fn.name());
	} catch (...) {
		unread("not a std::exception");
		b.p = mem, b.full = false;
		b.put(fn.name());
	}
	*b.p = 0;
	if (g_mode != OBS_UNRECORDED)
		g_push(mem);
	return nullptr;
}

/*
 * An autograd node's range (scope BACKWARD_FUNCTION: "ConvolutionBackward0", which torch's
 * Node::operator() records with the node's sequence number; the engine's wrapper around it,
 * "autograd::engine::evaluate_function: ConvolutionBackward0", is scope FUNCTION with no
 * inputs and goes through enter()): its name and sequence number, which tie it to its forward
 * op (capture/intercept/nvtxmsg.c, src/ingest/pytree.c), without its inputs.  The ATen ops
 * the node runs carry their own shapes, and a FLOP or byte count is never read off a node;
 * so its callback does not ask RecordFunction for inputs, which spares the autograd thread a
 * copy of every node's gradients into IValues and the observer their formatting.
 */
std::unique_ptr<at::ObserverContext> enter_node(const at::RecordFunction &fn)
{
	static thread_local char mem[MSG_MAX];
	buf b{ mem, mem + sizeof(mem) };
	g_calls.fetch_add(1, std::memory_order_relaxed);
	b.put(fn.name());
	b.put(", seq = ", 8);
	b.num(fn.seqNr());
	*b.p = 0;
	g_push(mem);
	return nullptr;
}

void leave(const at::RecordFunction &, at::ObserverContext *)
{
	g_pop();
}

/* OBS_NOOP*: the callbacks torch runs, doing nothing (and OBS_UNRECORDED's end and nodes) */
std::unique_ptr<at::ObserverContext> enter_noop(const at::RecordFunction &)
{
	return nullptr;
}
void leave_noop(const at::RecordFunction &, at::ObserverContext *)
{
}

/* every scope but BACKWARD_FUNCTION, which has enter_node's callback */
std::unordered_set<at::RecordScope, std::hash<at::RecordScope>> op_scopes()
{
	std::unordered_set<at::RecordScope, std::hash<at::RecordScope>> s;
	for (int i = 0; i < (int)at::RecordScope::NUM_SCOPES; i++)
		if (i != (int)at::RecordScope::BACKWARD_FUNCTION)
			s.insert((at::RecordScope)i);
	return s;
}

} // namespace

extern "C" {

/* 0: the observer is on in @mode (OBS_*); -1: kprof-shim.so is not in this process (no
 * range recorder) or @mode is unknown */
__attribute__((visibility("default"))) int kprof_obs_start(int mode)
{
	std::lock_guard<std::mutex> l(g_lock);
	if (g_handle)
		return 0;
	g_push = (push_fn)dlsym(RTLD_DEFAULT, "kprof_shim_range_push");
	g_pop = (pop_fn)dlsym(RTLD_DEFAULT, "kprof_shim_range_pop");
	if (!g_push || !g_pop || mode < OBS_NAMES || mode > OBS_UNRECORDED)
		return -1;
	g_mode = mode;
	bool noop = mode == OBS_NOOP_INPUTS || mode == OBS_NOOP, unrec = mode == OBS_UNRECORDED;
	g_handle = at::addGlobalCallback(
		at::RecordFunctionCallback(noop ? enter_noop : enter,
					   noop || unrec ? leave_noop : leave)
			.needsInputs(mode != OBS_NAMES && mode != OBS_NOOP)
			.needsIds(false)
			.scopes(op_scopes()));
	g_node_handle = at::addGlobalCallback(
		at::RecordFunctionCallback(noop || unrec ? enter_noop : enter_node,
					   noop || unrec ? leave_noop : leave)
			.needsInputs(false)
			.needsIds(false)
			.scopes({ at::RecordScope::BACKWARD_FUNCTION }));
	return 0;
}

/* the observer off (the program starts a profiler of its own) */
__attribute__((visibility("default"))) void kprof_obs_stop(void)
{
	std::lock_guard<std::mutex> l(g_lock);
	if (g_handle)
		at::removeCallback(g_handle);
	if (g_node_handle)
		at::removeCallback(g_node_handle);
	g_handle = g_node_handle = 0;
}

/* A range of the hook's own (kprof_torch_hook.py _fast_ranges: Inductor's per-kernel
 * _RecordFunctionFast, which records nothing without a profiler state): 0, or -1 before
 * kprof_obs_start found kprof-shim.so */
__attribute__((visibility("default"))) int kprof_obs_range_push(const char *msg)
{
	return g_push && msg ? (g_push(msg), 0) : -1;
}
__attribute__((visibility("default"))) int kprof_obs_range_pop(void)
{
	return g_pop ? (g_pop(), 0) : -1;
}

/* ranges opened so far */
__attribute__((visibility("default"))) unsigned long long kprof_obs_calls(void)
{
	return g_calls.load();
}

/* ops whose inputs could not be read (their range has the name alone), and why the first */
__attribute__((visibility("default"))) unsigned long long kprof_obs_unread(void)
{
	return g_unread.load();
}
__attribute__((visibility("default"))) const char *kprof_obs_first_error(void)
{
	return g_said.load() ? g_first_error : "";
}

/* messages left without sizes because they did not fit MSG_MAX bytes */
__attribute__((visibility("default"))) unsigned long long kprof_obs_truncated(void)
{
	return g_truncated.load();
}
}
