// A downstream project's own TVM-FFI extension, built with the kit's
// tvm_cc_extension: three globals under `downstream.`, registered when
// libgreet.so is loaded.
#include <dlpack/dlpack.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <sstream>
#include <string>

namespace downstream {
namespace {

namespace ffi = tvm::ffi;

// "hello, <name>"; an empty name is a ValueError (arrives in Python as one).
ffi::String Greet(ffi::String name) {
  if (name.size() == 0) {
    TVM_FFI_THROW(ValueError) << "downstream.greet: name must not be empty";
  }
  return ffi::String("hello, " + std::string(name));
}

std::string DeviceName(DLDevice device) {
  switch (device.device_type) {
    case kDLCPU:
      return "cpu";
    case kDLCUDA:
      return "cuda";
    default:
      return "device" + std::to_string(device.device_type);
  }
}

// "<device>:<index> <dtype> [d0, d1, ...]" of any tensor, without touching its
// data: this works for a tensor on any device.
ffi::String Describe(ffi::TensorView t) {
  std::ostringstream os;
  os << DeviceName(t.device()) << ":" << t.device().device_id << " "
     << std::string(ffi::DLDataTypeToString(t.dtype())) << " [";
  for (int i = 0; i < t.ndim(); ++i) os << (i ? ", " : "") << t.shape()[i];
  os << "]";
  return ffi::String(os.str());
}

// Sum of w * x[i] over a contiguous float32 tensor in host memory. Reading
// device memory from the host would crash, so other devices are a ValueError.
double WeightedSum(ffi::TensorView t, double w) {
  if (t.device().device_type != kDLCPU) {
    TVM_FFI_THROW(ValueError)
        << "downstream.weighted_sum: host memory only, got " << Describe(t);
  }
  DLDataType dt = t.dtype();
  if (dt.code != kDLFloat || dt.bits != 32 || dt.lanes != 1) {
    TVM_FFI_THROW(TypeError)
        << "downstream.weighted_sum: expected float32, got " << Describe(t);
  }
  if (!t.IsContiguous()) {
    TVM_FFI_THROW(ValueError)
        << "downstream.weighted_sum: expected a contiguous tensor";
  }
  const float* data = reinterpret_cast<const float*>(
      static_cast<const char*>(t.data_ptr()) + t.byte_offset());
  double sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) sum += w * data[i];
  return sum;
}

TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef()
      .def("downstream.greet", Greet)
      .def("downstream.describe", Describe)
      .def("downstream.weighted_sum", WeightedSum);
}

}  // namespace
}  // namespace downstream
