// The deployment contract from C++: an exported Relax model runs on the TVM
// runtime alone (this binary links only libtvm_ffi.so and libtvm_runtime.so;
// see python/tests/deploy/elf_deps_test.py). One variant per target
// (TVM_TEST_TARGETS): llvm runs python/tests/relax/vm_exported_module.so on the
// CPU; cuda runs python/tests/deploy/mul_add_cuda.so (a fatbin for every
// architecture in tvm_conformance.deploy.CUDA_ARCHS) on GPU 0, and skips where
// no GPU is, unless TVM_CONFORMANCE_REQUIRE_GPU=1 (the GPU runner config) makes
// that a failure. Mirrors python/tests/deploy/runtime_only_test.py.
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpp/tests/test_util.h"

namespace {

namespace ffi = tvm::ffi;
using tvm_conformance::testing::RequireFunction;
using tvm_conformance::testing::RequireGlobal;
using tvm_conformance::testing::Rlocation;
using tvm_conformance::testing::VariantDevice;
using tvm_conformance::testing::VariantTarget;

constexpr int kPooledAllocator = 2;
std::string Artefact() {
  return VariantTarget() == "cuda" ? "python/tests/deploy/mul_add_cuda.so"
                                   : "python/tests/relax/vm_exported_module.so";
}

// A float32 tensor on `device` holding `values`, through the runtime's globals.
ffi::Tensor DeviceTensor(DLDevice device, std::vector<int64_t> shape,
                         const std::vector<float>& values) {
  DLDataType f32{kDLFloat, 32, 1};
  ffi::Tensor host = RequireGlobal("runtime.TVMTensorAllocWithScope")(
                         ffi::Shape(shape), f32, DLDevice{kDLCPU, 0},
                         ffi::Optional<ffi::String>())
                         .cast<ffi::Tensor>();
  std::memcpy(host.data_ptr(), values.data(), values.size() * sizeof(float));
  ffi::Tensor out =
      RequireGlobal("runtime.TVMTensorAllocWithScope")(
          ffi::Shape(shape), f32, device, ffi::Optional<ffi::String>())
          .cast<ffi::Tensor>();
  RequireGlobal("runtime.TVMTensorCopyFromTo")(host, out);
  return out;
}

std::vector<float> HostValues(const ffi::Tensor& tensor) {
  ffi::Tensor host =
      RequireGlobal("runtime.TVMTensorAllocWithScope")(
          ffi::Shape(std::vector<int64_t>(tensor.shape().begin(),
                                          tensor.shape().end())),
          tensor.dtype(), DLDevice{kDLCPU, 0}, ffi::Optional<ffi::String>())
          .cast<ffi::Tensor>();
  RequireGlobal("runtime.TVMTensorCopyFromTo")(tensor, host);
  const float* data = static_cast<const float*>(host.data_ptr());
  return std::vector<float>(data, data + host.numel());
}

// Mapped shared objects whose file name starts with `prefix`.
std::vector<std::string> MappedLibraries(const std::string& prefix) {
  std::ifstream maps("/proc/self/maps");
  std::vector<std::string> found;
  for (std::string line; std::getline(maps, line);) {
    std::string path = line.substr(line.find_last_of(' ') + 1);
    std::string name = path.substr(path.rfind('/') + 1);
    if (name.rfind(prefix, 0) == 0) found.push_back(name);
  }
  return found;
}

class DeployVm : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why_not;
    device_ = VariantDevice(&why_not);
    TVM_CONFORMANCE_SKIP_UNLESS_RUNNABLE(why_not);
  }

  ffi::Function LoadMain() {
    ffi::Module library = ffi::Module::LoadFromFile(Rlocation(Artefact()));
    ffi::Module vm =
        RequireFunction(library, "vm_load_executable")().cast<ffi::Module>();
    ffi::Function init = RequireFunction(vm, "vm_initialization");
    if (device_.device_type == kDLCPU) {
      init(static_cast<int>(kDLCPU), 0, kPooledAllocator);
    } else {  // the device, then the host (as tvm.runtime.vm.VirtualMachine)
      init(static_cast<int>(device_.device_type), device_.device_id,
           kPooledAllocator, static_cast<int>(kDLCPU), 0, kPooledAllocator);
    }
    return RequireFunction(vm, "main");
  }

  DLDevice device_{kDLCPU, 0};
};

TEST_F(DeployVm, RunsMulAddOnTheVariantsDevice) {
  const std::vector<float> x = {0.0f, 1.0f, 2.0f, 3.0f, -4.0f, 5.5f};
  const std::vector<float> y = {2.0f, 2.0f, 0.5f, -1.0f, 0.25f, 2.0f};

  ffi::Tensor out = LoadMain()(DeviceTensor(device_, {2, 3}, x),
                               DeviceTensor(device_, {2, 3}, y))
                        .cast<ffi::Tensor>();

  EXPECT_EQ(out.device().device_type, device_.device_type);
  std::vector<float> got = HostValues(out);
  ASSERT_EQ(got.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_FLOAT_EQ(got[i], x[i] * y[i] + 1.0f) << "at " << i;
  }
}

TEST_F(DeployVm, CompilerLibraryNeverMapped) {
  const std::vector<float> ones(6, 1.0f);
  LoadMain()(DeviceTensor(device_, {2, 3}, ones),
             DeviceTensor(device_, {2, 3}, ones));

  EXPECT_TRUE(MappedLibraries("libtvm_compiler").empty());
  EXPECT_TRUE(MappedLibraries("libtvm.so").empty());
  EXPECT_FALSE(MappedLibraries("libtvm_runtime.so").empty());
}

}  // namespace
