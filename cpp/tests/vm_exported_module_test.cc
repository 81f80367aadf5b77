// Exported executables from C++: the Relax model that
// //python/tests/relax:vm_exported_module builds (main(x, y) = x * y + 1 on
// float32[2, 3]) loaded through the FFI globals of the Relax VM. Mirrors
// python/tests/relax/vm_exported_module_test.py.
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpp/tests/test_util.h"

namespace {

namespace ffi = tvm::ffi;
using tvm_conformance::testing::RequireFunction;

constexpr char kArtefact[] = "python/tests/relax/vm_exported_module.so";
// Allocator kinds of vm_initialization (tvm/runtime/memory/memory_manager.h).
constexpr int kNaiveAllocator = 1;
constexpr int kPooledAllocator = 2;

struct CpuAlloc {
  void AllocData(DLTensor* tensor) {
    tensor->data = std::malloc(ffi::GetDataSize(*tensor));
  }
  void FreeData(DLTensor* tensor) { std::free(tensor->data); }
};

ffi::Tensor CpuTensor(std::vector<int64_t> shape, DLDataType dtype) {
  return ffi::Tensor::FromNDAlloc(CpuAlloc(), ffi::Shape(shape), dtype,
                                  DLDevice{kDLCPU, 0});
}

ffi::Tensor Float32(std::vector<int64_t> shape,
                    const std::vector<float>& values) {
  ffi::Tensor tensor = CpuTensor(shape, DLDataType{kDLFloat, 32, 1});
  float* data = static_cast<float*>(tensor.data_ptr());
  for (size_t i = 0; i < values.size(); ++i) data[i] = values[i];
  return tensor;
}

// vm_load_executable on the library, then vm_initialization for the CPU.
ffi::Function LoadMain(int allocator) {
  ffi::Module library =
      ffi::Module::LoadFromFile(tvm_conformance::testing::Rlocation(kArtefact));
  ffi::Module vm =
      RequireFunction(library, "vm_load_executable")().cast<ffi::Module>();
  RequireFunction(vm, "vm_initialization")(static_cast<int>(kDLCPU), 0,
                                           allocator);
  return RequireFunction(vm, "main");
}

ffi::Tensor X() {
  return Float32({2, 3}, {0.0f, 1.0f, 2.0f, 3.0f, -4.0f, 5.5f});
}
ffi::Tensor Y() {
  return Float32({2, 3}, {2.0f, 2.0f, 0.5f, -1.0f, 0.25f, 2.0f});
}

void ExpectMainResult(const ffi::Tensor& out) {
  ASSERT_EQ(out.ndim(), 2);
  EXPECT_EQ(out.shape()[0], 2);
  EXPECT_EQ(out.shape()[1], 3);
  const float* data = static_cast<const float*>(out.data_ptr());
  const std::vector<float> expected = {1.0f, 3.0f, 2.0f, -2.0f, 0.0f, 12.0f};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_FLOAT_EQ(data[i], expected[i]) << "at " << i;
  }
}

TEST(VmExportedModule, RunsMainWithPooledAllocator) {
  ffi::Function main_fn = LoadMain(kPooledAllocator);
  ExpectMainResult(main_fn(X(), Y()).cast<ffi::Tensor>());
}

TEST(VmExportedModule, RunsMainWithNaiveAllocator) {
  ffi::Function main_fn = LoadMain(kNaiveAllocator);
  ExpectMainResult(main_fn(X(), Y()).cast<ffi::Tensor>());
}

TEST(VmExportedModule, WrongShapeIsFfiError) {
  ffi::Function main_fn = LoadMain(kPooledAllocator);
  EXPECT_FFI_ERROR(main_fn(CpuTensor({3, 2}, DLDataType{kDLFloat, 32, 1}), Y()),
                   "RuntimeError", "shape[0] mismatch to specified constant");
}

TEST(VmExportedModule, WrongDtypeIsFfiError) {
  ffi::Function main_fn = LoadMain(kPooledAllocator);
  EXPECT_FFI_ERROR(main_fn(X(), CpuTensor({2, 3}, DLDataType{kDLInt, 32, 1})),
                   "ValueError",
                   "expect Tensor with dtype float32 but get int32");
}

TEST(VmExportedModule, WrongArityIsFfiError) {
  ffi::Function main_fn = LoadMain(kPooledAllocator);
  EXPECT_FFI_ERROR(main_fn(X()), "InternalError",
                   "expects 2 arguments (x, y), but 1 arguments were provided");
}

TEST(VmExportedModule, UsableAfterError) {
  ffi::Function main_fn = LoadMain(kPooledAllocator);
  EXPECT_FFI_ERROR(main_fn(CpuTensor({3, 2}, DLDataType{kDLFloat, 32, 1}), Y()),
                   "RuntimeError", "mismatch");
  ExpectMainResult(main_fn(X(), Y()).cast<ffi::Tensor>());
}

}  // namespace
