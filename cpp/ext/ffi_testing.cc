// FFI conformance fixtures (seed 001): global functions registered under the
// `testing.` prefix that the C++ and Python suites call through the FFI
// registry. `myadd` and `callhello` live in //cpp/ext:hello.
#include <dlpack/dlpack.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace tvm_conformance {
namespace {

namespace ffi = tvm::ffi;

// ---------------------------------------------------------------- function --

// Sums any number of integer arguments; a non-integer is a TypeError.
void VariadicSum(ffi::PackedArgs args, ffi::Any* ret) {
  int64_t total = 0;
  for (int i = 0; i < args.size(); ++i) {
    std::optional<int64_t> value = args[i].as<int64_t>();
    if (!value.has_value()) {
      TVM_FFI_THROW(TypeError)
          << "testing.variadic_sum: argument " << i << " has type `"
          << args[i].GetTypeKey() << "`, expected int";
    }
    total += *value;
  }
  *ret = total;
}

// Returns the FFI type key of every argument, in order.
void VariadicTypeKeys(ffi::PackedArgs args, ffi::Any* ret) {
  ffi::Array<ffi::String> keys;
  for (int i = 0; i < args.size(); ++i) {
    keys.push_back(ffi::String(args[i].GetTypeKey()));
  }
  *ret = keys;
}

// Looks up a global by name (e.g. one registered from Python) and calls it
// with the remaining arguments.
void CallGlobal(ffi::PackedArgs args, ffi::Any* ret) {
  if (args.size() < 1) {
    TVM_FFI_THROW(TypeError)
        << "testing.call_global(name, *args) expects at least 1 argument";
  }
  ffi::String name = args[0].cast<ffi::String>();
  std::optional<ffi::Function> func = ffi::Function::GetGlobal(name);
  if (!func.has_value()) {
    TVM_FFI_THROW(ValueError) << "testing.call_global: global function `"
                              << name << "` is not registered";
  }
  func->CallPacked(args.Slice(1), ret);
}

// Calls `func` with the remaining arguments.
void Invoke(ffi::PackedArgs args, ffi::Any* ret) {
  if (args.size() < 1) {
    TVM_FFI_THROW(TypeError)
        << "testing.invoke(func, *args) expects at least 1 argument";
  }
  ffi::Function func = args[0].cast<ffi::Function>();
  func.CallPacked(args.Slice(1), ret);
}

// Calls `func(i)` for i in [0, n) and returns the results.
ffi::Array<ffi::Any> CallNTimes(ffi::Function func, int64_t n) {
  if (n < 0) {
    TVM_FFI_THROW(ValueError)
        << "testing.call_n_times: n must be >= 0, got " << n;
  }
  ffi::Array<ffi::Any> results;
  for (int64_t i = 0; i < n; ++i) {
    results.push_back(func(i));
  }
  return results;
}

// ------------------------------------------------------------------- error --

// Throws an ffi::Error of the named kind through TVM_FFI_THROW for the builtin
// kinds and `ConformanceError`; `std` throws a std::runtime_error; any other
// kind string is thrown as an ffi::Error of that (custom) kind.
void ThrowError(const ffi::String& kind, const ffi::String& message) {
  const std::string k = kind;
  if (k == "ValueError") TVM_FFI_THROW(ValueError) << message;
  if (k == "TypeError") TVM_FFI_THROW(TypeError) << message;
  if (k == "IndexError") TVM_FFI_THROW(IndexError) << message;
  if (k == "KeyError") TVM_FFI_THROW(KeyError) << message;
  if (k == "RuntimeError") TVM_FFI_THROW(RuntimeError) << message;
  if (k == "ConformanceError") TVM_FFI_THROW(ConformanceError) << message;
  if (k == "std") throw std::runtime_error(message);
  throw ffi::Error(k, message, "");
}

// ---------------------------------------------------------------- closure --

// Returns a closure that adds `step` to its captured counter on each call and
// returns the new value.
ffi::Function MakeCounter(int64_t start, int64_t step) {
  auto state = std::make_shared<int64_t>(start);
  return ffi::Function::FromTyped([state, step]() -> int64_t {
    *state += step;
    return *state;
  });
}

// Returns a closure computing `x + y` for the captured `y`.
ffi::Function MakeAdder(int64_t y) {
  return ffi::Function::FromTyped([y](int64_t x) { return x + y; });
}

// -------------------------------------------------------------- container --

int64_t ArraySum(const ffi::Array<int64_t>& values) {
  int64_t total = 0;
  for (int64_t v : values) total += v;
  return total;
}

ffi::Array<ffi::Any> ArrayReverse(const ffi::Array<ffi::Any>& values) {
  ffi::Array<ffi::Any> out;
  for (int64_t i = static_cast<int64_t>(values.size()) - 1; i >= 0; --i) {
    out.push_back(values[i]);
  }
  return out;
}

// Swaps keys and values: {"a": 1} -> {1: "a"}.
ffi::Map<int64_t, ffi::String> MapInvert(
    const ffi::Map<ffi::String, int64_t>& map) {
  ffi::Map<int64_t, ffi::String> out;
  for (const auto& kv : map) out.Set(kv.second, kv.first);
  return out;
}

// Returns map[key]; a missing key is a KeyError naming the key.
int64_t MapGet(const ffi::Map<ffi::String, int64_t>& map,
               const ffi::String& key) {
  std::optional<int64_t> value = map.Get(key);
  if (!value.has_value()) {
    TVM_FFI_THROW(KeyError) << "testing.map_get: key `" << key << "` not found";
  }
  return *value;
}

// Returns values[index]; out of range is an IndexError.
ffi::Any ArrayGet(const ffi::Array<ffi::Any>& values, int64_t index) {
  if (index < 0 || index >= static_cast<int64_t>(values.size())) {
    TVM_FFI_THROW(IndexError) << "testing.array_get: index " << index
                              << " out of range for size " << values.size();
  }
  return values[index];
}

ffi::String StringConcat(const ffi::String& a, const ffi::String& b) {
  return ffi::String(std::string(a) + std::string(b));
}

int64_t StringLength(const ffi::String& s) {
  return static_cast<int64_t>(s.size());
}

// Returns `value` when present, `fallback` otherwise.
int64_t OptionalOr(ffi::Optional<int64_t> value, int64_t fallback) {
  return value.has_value() ? *value : fallback;
}

// Returns "found:<name>" for a non-empty name and None for an empty one.
ffi::Optional<ffi::String> OptionalLookup(const ffi::String& name) {
  if (name.empty()) return std::nullopt;
  return ffi::String("found:" + std::string(name));
}

// ----------------------------------------------------------------- device --

// Returns the device with the same type and id + 1.
DLDevice DeviceNext(DLDevice device) {
  return DLDevice{device.device_type, device.device_id + 1};
}

ffi::Array<int64_t> DeviceParts(DLDevice device) {
  return {static_cast<int64_t>(device.device_type),
          static_cast<int64_t>(device.device_id)};
}

// ----------------------------------------------------------------- tensor --

// Checks that `t` is a contiguous float32 CPU tensor; raises a clear error
// naming the function otherwise.
void CheckFloat32Contiguous(const char* fname, const ffi::TensorView& t) {
  DLDataType dt = t.dtype();
  if (dt.code != kDLFloat || dt.bits != 32 || dt.lanes != 1) {
    TVM_FFI_THROW(TypeError) << fname << ": expected dtype float32, got "
                             << ffi::DLDataTypeToString(dt);
  }
  if (!t.IsContiguous()) {
    TVM_FFI_THROW(ValueError) << fname << ": expected a contiguous tensor";
  }
  if (t.device().device_type != kDLCPU) {
    TVM_FFI_THROW(ValueError) << fname << ": expected a CPU tensor";
  }
}

// Adds `value` to every element of a float32 tensor, in place (zero copy).
void TensorAddInplace(ffi::TensorView t, double value) {
  CheckFloat32Contiguous("testing.tensor_add_inplace", t);
  float* data = reinterpret_cast<float*>(static_cast<char*>(t.data_ptr()) +
                                         t.byte_offset());
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) data[i] += static_cast<float>(value);
}

// Returns the address of the first element the callee sees.
int64_t TensorDataPtr(ffi::TensorView t) {
  return static_cast<int64_t>(reinterpret_cast<intptr_t>(
      static_cast<char*>(t.data_ptr()) + t.byte_offset()));
}

ffi::Array<int64_t> TensorShape(ffi::TensorView t) {
  ffi::Array<int64_t> out;
  for (int64_t d : t.shape()) out.push_back(d);
  return out;
}

// CPU allocator for tensors created in C++.
struct CPUAlloc {
  void AllocData(DLTensor* tensor) {
    const size_t bytes = static_cast<size_t>(ffi::GetDataSize(*tensor));
    tensor->data = std::malloc(bytes == 0 ? 1 : bytes);
  }
  void FreeData(DLTensor* tensor) { std::free(tensor->data); }
};

// Returns a new float32 CPU tensor holding 0, 1, ..., n - 1.
ffi::Tensor TensorArange(int64_t n) {
  if (n < 0) {
    TVM_FFI_THROW(ValueError) << "testing.tensor_arange: n must be >= 0";
  }
  ffi::Tensor t = ffi::Tensor::FromNDAlloc(CPUAlloc(), ffi::Shape({n}),
                                           DLDataType{kDLFloat, 32, 1},
                                           DLDevice{kDLCPU, 0});
  float* data = static_cast<float*>(t.data_ptr());
  for (int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(i);
  return t;
}

}  // namespace

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def_packed("testing.variadic_sum", VariadicSum)
      .def_packed("testing.variadic_type_keys", VariadicTypeKeys)
      .def_packed("testing.any_echo",
                  [](ffi::PackedArgs args, ffi::Any* ret) { *ret = args[0]; })
      .def_packed("testing.call_global", CallGlobal)
      .def_packed("testing.invoke", Invoke)
      .def("testing.call_n_times", CallNTimes)
      .def("testing.throw_error", ThrowError)
      .def("testing.make_counter", MakeCounter)
      .def("testing.make_adder", MakeAdder)
      .def("testing.array_sum", ArraySum)
      .def("testing.array_reverse", ArrayReverse)
      .def("testing.array_get", ArrayGet)
      .def("testing.map_invert", MapInvert)
      .def("testing.map_get", MapGet)
      .def("testing.string_concat", StringConcat)
      .def("testing.string_length", StringLength)
      .def("testing.optional_or", OptionalOr)
      .def("testing.optional_lookup", OptionalLookup)
      .def("testing.device_next", DeviceNext)
      .def("testing.device_parts", DeviceParts)
      .def("testing.tensor_add_inplace", TensorAddInplace)
      .def("testing.tensor_data_ptr", TensorDataPtr)
      .def("testing.tensor_shape", TensorShape)
      .def("testing.tensor_arange", TensorArange);
}

}  // namespace tvm_conformance
