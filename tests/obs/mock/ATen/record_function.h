/*
 * tests/obs/mock/ATen/record_function.h — a stand-in for the few PyTorch C++ entry points that
 * capture/intercept/python/kprof_torch_obs.cpp uses (RecordFunction, its callbacks, IValue,
 * Tensor, TypeMeta, c10::List), each with the meaning torch 2.11's has, so that the observer's
 * messages can be checked without torch (tests/obs/test-obs.cpp).  That the real ones behave
 * so is checked on the GPU machine (tests/gpu/torch_hook.sh, tests/gpu/obs_probe.sh).
 */
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace c10 {
using string_view = std::string_view;
template <class T> class ArrayRef {
	const T *b_ = nullptr, *e_ = nullptr;

public:
	ArrayRef() = default;
	ArrayRef(const T *b, size_t n) : b_(b), e_(b + n) {}
	const T *begin() const { return b_; }
	const T *end() const { return e_; }
	size_t size() const { return (size_t)(e_ - b_); }
	const T &operator[](size_t i) const { return b_[i]; }
};
template <class T> class List {
	std::vector<T> v_;

public:
	List() = default;
	explicit List(std::vector<T> v) : v_(std::move(v)) {}
	size_t size() const { return v_.size(); }
	T get(size_t i) const { return v_.at(i); }
};
} // namespace c10

namespace at {
using IntArrayRef = c10::ArrayRef<int64_t>;
struct TensorImpl {
	bool symbolic = false;
	bool has_symbolic_sizes_strides() const { return symbolic; }
};
struct TypeMeta {
	const char *n;
	c10::string_view name() const { return n; }
};
/* a tensor: undefined (no sizes), or sizes and a type name; nested or symbolic on request */
class Tensor {
	bool defined_ = false, nested_ = false;
	std::vector<int64_t> sizes_;
	const char *type_ = "float";
	std::shared_ptr<TensorImpl> impl_ = std::make_shared<TensorImpl>();

public:
	Tensor() = default;
	Tensor(std::vector<int64_t> s, const char *type, bool nested = false, bool symbolic = false)
		: defined_(true), nested_(nested), sizes_(std::move(s)), type_(type)
	{
		impl_->symbolic = symbolic;
	}
	bool defined() const { return defined_; }
	bool is_nested() const { return nested_; }
	TensorImpl *unsafeGetTensorImpl() const { return impl_.get(); }
	IntArrayRef sizes() const
	{
		if (impl_->symbolic)
			throw std::runtime_error("Cannot call sizes() on tensor with symbolic sizes/strides");
		return IntArrayRef(sizes_.data(), sizes_.size());
	}
	TypeMeta dtype() const { return TypeMeta{ type_ }; }
};
} // namespace at

namespace c10 {
class IValue {
public:
	enum Tag { None, Tensor, TensorList, Int, Double, Bool, IntList, String } tag = None;
	at::Tensor t;
	std::vector<at::Tensor> tl;
	int64_t i = 0;
	double d = 0;
	bool b = false;
	std::vector<int64_t> il;
	std::string s;

	IValue() = default;
	static IValue of(at::Tensor x) { IValue v; v.tag = Tensor; v.t = x; return v; }
	static IValue list(std::vector<at::Tensor> x) { IValue v; v.tag = TensorList; v.tl = x; return v; }
	static IValue of(int64_t x) { IValue v; v.tag = Int; v.i = x; return v; }
	static IValue of(double x) { IValue v; v.tag = Double; v.d = x; return v; }
	static IValue of(bool x) { IValue v; v.tag = Bool; v.b = x; return v; }
	static IValue ints(std::vector<int64_t> x) { IValue v; v.tag = IntList; v.il = x; return v; }
	static IValue str(std::string x) { IValue v; v.tag = String; v.s = x; return v; }

	bool isTensor() const { return tag == Tensor; }
	const at::Tensor &toTensor() const { return t; }
	bool isTensorList() const { return tag == TensorList; }
	List<at::Tensor> toTensorList() const { return List<at::Tensor>(tl); }
	bool isInt() const { return tag == Int; }
	int64_t toInt() const { return i; }
	bool isDouble() const { return tag == Double; }
	double toDouble() const { return d; }
	bool isBool() const { return tag == Bool; }
	bool toBool() const { return b; }
	bool isIntList() const { return tag == IntList; }
	List<int64_t> toIntList() const { return List<int64_t>(il); }
	std::vector<int64_t> toIntVector() const { return il; }
};
} // namespace c10

namespace at {
/* torch 2.11's scopes, in its order */
enum class RecordScope : uint8_t {
	FUNCTION = 0,
	BACKWARD_FUNCTION,
	TORCHSCRIPT_FUNCTION,
	KERNEL_FUNCTION_DTYPE,
	CUSTOM_CLASS,
	BUILD_FEATURE,
	LITE_INTERPRETER,
	USER_SCOPE,
	STATIC_RUNTIME_OP,
	STATIC_RUNTIME_MODEL,
	NUM_SCOPES,
};
struct ObserverContext {
	virtual ~ObserverContext() = default;
};
/* one op call: its name, sequence number and inputs (inputs() throws when asked to, as a
 * debug build's inputs_valid_ check does) */
struct RecordFunction {
	std::string name_;
	int64_t seq_ = -1;
	RecordScope scope_ = RecordScope::FUNCTION;
	std::vector<c10::IValue> inputs_;
	bool throw_inputs = false;
	const char *name() const { return name_.c_str(); }
	int64_t seqNr() const { return seq_; }
	c10::ArrayRef<const c10::IValue> inputs() const
	{
		if (throw_inputs)
			throw std::runtime_error("Called inputs() outside RecordFunction start callback");
		return c10::ArrayRef<const c10::IValue>(inputs_.data(), inputs_.size());
	}
};
using CallbackHandle = uint64_t;
struct RecordFunctionCallback {
	using StartCallback = std::unique_ptr<ObserverContext> (*)(const RecordFunction &);
	using EndCallback = void (*)(const RecordFunction &, ObserverContext *);
	StartCallback start;
	EndCallback end;
	bool inputs = false;
	std::unordered_set<RecordScope, std::hash<RecordScope>> scopes_; /* empty: all */
	explicit RecordFunctionCallback(StartCallback s, EndCallback e = nullptr) : start(s), end(e) {}
	RecordFunctionCallback &needsInputs(bool v) { inputs = v; return *this; }
	RecordFunctionCallback &scopes(const std::unordered_set<RecordScope, std::hash<RecordScope>> &s)
	{
		scopes_ = s;
		return *this;
	}
	bool checkScope(RecordScope sc) const { return scopes_.empty() || scopes_.count(sc); }
	RecordFunctionCallback &needsIds(bool) { return *this; }
};
/* the global callbacks: tests/obs/test-obs.cpp runs them around each RecordFunction */
extern std::vector<std::pair<CallbackHandle, RecordFunctionCallback>> g_callbacks;
CallbackHandle addGlobalCallback(const RecordFunctionCallback &cb);
void removeCallback(CallbackHandle h);
} // namespace at
