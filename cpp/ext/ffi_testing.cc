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

#include "cpp/ext/checked_int.h"

namespace tvm_conformance {
namespace {

namespace ffi = tvm::ffi;

// ---------------------------------------------------------------- function --

// Sums any number of integer arguments; a non-integer is a TypeError, an int64
// overflow a ValueError.
void VariadicSum(ffi::PackedArgs args, ffi::Any* ret) {
  int64_t total = 0;
  for (int i = 0; i < args.size(); ++i) {
    std::optional<int64_t> value = args[i].as<int64_t>();
    if (!value.has_value()) {
      TVM_FFI_THROW(TypeError)
          << "testing.variadic_sum: argument " << i << " has type `"
          << args[i].GetTypeKey() << "`, expected int";
    }
    total = CheckedAdd("testing.variadic_sum", total, *value);
  }
  *ret = total;
}

// Returns its one argument unchanged; any other argument count is a TypeError.
void AnyEcho(ffi::PackedArgs args, ffi::Any* ret) {
  if (args.size() != 1) {
    TVM_FFI_THROW(TypeError) << "testing.any_echo(value) takes exactly 1 "
                             << "argument, got " << args.size();
  }
  *ret = args[0];
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
    // On overflow the counter keeps its last value.
    *state = CheckedAdd("testing.make_counter closure", *state, step);
    return *state;
  });
}

// Returns a closure computing `x + y` for the captured `y`.
ffi::Function MakeAdder(int64_t y) {
  return ffi::Function::FromTyped([y](int64_t x) {
    return CheckedAdd("testing.make_adder closure", x, y);
  });
}

// -------------------------------------------------------------- container --

int64_t ArraySum(const ffi::Array<int64_t>& values) {
  int64_t total = 0;
  for (int64_t v : values) total = CheckedAdd("testing.array_sum", total, v);
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

// Returns the device with the same type and id + 1; an id that has no
// successor (INT32_MAX) is a ValueError.
DLDevice DeviceNext(DLDevice device) {
  int32_t next = 0;
  if (__builtin_add_overflow(device.device_id, 1, &next)) {
    TVM_FFI_THROW(ValueError) << "testing.device_next: device id "
                              << device.device_id << " has no successor";
  }
  return DLDevice{device.device_type, next};
}

ffi::Array<int64_t> DeviceParts(DLDevice device) {
  return {static_cast<int64_t>(device.device_type),
          static_cast<int64_t>(device.device_id)};
}

// ----------------------------------------------------------------- tensor --

// Names any dtype ("float64", "complex64", "int32x4", "code7_bits16") without
// throwing. ffi::DLDataTypeToString throws for some codes (complex in tvm-ffi
// 0.1.14); called inside a TVM_FFI_THROW message that second throw ends in
// std::terminate, so error messages use this instead.
std::string DescribeDType(DLDataType dt) {
  std::string name;
  switch (dt.code) {
    case kDLInt:
      name = "int";
      break;
    case kDLUInt:
      name = "uint";
      break;
    case kDLFloat:
      name = "float";
      break;
    case kDLBfloat:
      name = "bfloat";
      break;
    case kDLComplex:
      name = "complex";
      break;
    case kDLBool:
      name = "bool";
      break;
    default:
      name = "code" + std::to_string(static_cast<int>(dt.code)) + "_bits";
  }
  name += std::to_string(static_cast<int>(dt.bits));
  if (dt.lanes != 1) name += "x" + std::to_string(static_cast<int>(dt.lanes));
  return name;
}

// Checks that `t` is a contiguous float32 CPU tensor; raises a clear error
// naming the function otherwise.
void CheckFloat32Contiguous(const char* fname, const ffi::TensorView& t) {
  DLDataType dt = t.dtype();
  if (dt.code != kDLFloat || dt.bits != 32 || dt.lanes != 1) {
    TVM_FFI_THROW(TypeError)
        << fname << ": expected dtype float32, got " << DescribeDType(dt);
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

// Hands a buffer the caller already allocated (and checked) to the tensor, so
// nothing can fail inside FromNDAlloc; the tensor frees it.
struct OwnedBufferAlloc {
  void* buffer;
  void AllocData(DLTensor* tensor) { tensor->data = buffer; }
  void FreeData(DLTensor* tensor) { std::free(tensor->data); }
};

// The largest tensor_arange: 2^28 float32 elements (1 GiB). A fixture has no
// use for more, and a larger request on a shared CI machine would only page.
constexpr int64_t kMaxArangeElements = int64_t{1} << 28;

// Returns a new float32 CPU tensor holding 0, 1, ..., n - 1. A negative n, or
// one beyond kMaxArangeElements, is a ValueError; a failed allocation a
// MemoryError.
ffi::Tensor TensorArange(int64_t n) {
  if (n < 0) {
    TVM_FFI_THROW(ValueError) << "testing.tensor_arange: n must be >= 0";
  }
  if (n > kMaxArangeElements) {
    TVM_FFI_THROW(ValueError)
        << "testing.tensor_arange: n = " << n << " exceeds the fixture's limit "
        << "of " << kMaxArangeElements << " elements";
  }
  size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(n), sizeof(float), &bytes)) {
    TVM_FFI_THROW(ValueError)
        << "testing.tensor_arange: byte count of " << n << " floats overflows";
  }
  void* buffer = std::malloc(bytes == 0 ? 1 : bytes);
  if (buffer == nullptr) {
    TVM_FFI_THROW(MemoryError)
        << "testing.tensor_arange: could not allocate " << bytes << " bytes";
  }
  ffi::Tensor t = ffi::Tensor::FromNDAlloc(
      OwnedBufferAlloc{buffer}, ffi::Shape({n}), DLDataType{kDLFloat, 32, 1},
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
      .def_packed("testing.any_echo", AnyEcho)
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
