// The downstream extension from C++: greet_lib linked in, its globals called
// through TVM-FFI. The tensor cases run on the variant's target
// (TVM_TEST_TARGETS): on cuda they skip, naming why, where no GPU is, unless
// TVM_CONFORMANCE_REQUIRE_GPU=1 (the GPU runner config) makes that a failure.
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/string.h>

#include <cstring>
#include <string>
#include <vector>

#include "cpp/tests/test_util.h"

namespace {

namespace ffi = tvm::ffi;

using tvm_conformance::testing::RequireGlobal;

// A float32 tensor of `values` on `device` (copied from a host tensor).
ffi::Tensor Float32Tensor(DLDevice device, const std::vector<float>& values) {
  ffi::Function alloc = RequireGlobal("runtime.TVMTensorAllocWithScope");
  ffi::Shape shape({static_cast<int64_t>(values.size())});
  DLDataType f32{kDLFloat, 32, 1};
  ffi::Tensor host =
      alloc(shape, f32, DLDevice{kDLCPU, 0}, ffi::Optional<ffi::String>())
          .cast<ffi::Tensor>();
  std::memcpy(host.data_ptr(), values.data(), values.size() * sizeof(float));
  if (device.device_type == kDLCPU) return host;
  ffi::Tensor out = alloc(shape, f32, device, ffi::Optional<ffi::String>())
                        .cast<ffi::Tensor>();
  RequireGlobal("runtime.TVMTensorCopyFromTo")(host, out);
  return out;
}

class GreetOnTarget : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why_not;
    device_ = tvm_conformance::testing::VariantDevice(&why_not);
    TVM_CONFORMANCE_SKIP_UNLESS_RUNNABLE(why_not);
  }

  DLDevice device_{};
};

TEST(Greet, ReturnsTheGreeting) {
  EXPECT_EQ(std::string(RequireGlobal("downstream.greet")(ffi::String("C++"))
                            .cast<ffi::String>()),
            "hello, C++");
}

TEST(Greet, EmptyNameIsValueError) {
  EXPECT_FFI_ERROR(RequireGlobal("downstream.greet")(ffi::String("")),
                   "ValueError", "name must not be empty");
}

TEST_F(GreetOnTarget, DescribeNamesDeviceDtypeAndShape) {
  ffi::Tensor x = Float32Tensor(device_, {1, 2, 3});
  std::string expected = device_.device_type == kDLCPU ? "cpu:0 float32 [3]"
                                                       : "cuda:0 float32 [3]";
  EXPECT_EQ(
      std::string(RequireGlobal("downstream.describe")(x).cast<ffi::String>()),
      expected);
}

TEST_F(GreetOnTarget, WeightedSumReadsHostMemoryOnly) {
  ffi::Tensor x = Float32Tensor(device_, {1, 2, 3});
  ffi::Function weighted_sum = RequireGlobal("downstream.weighted_sum");
  if (device_.device_type == kDLCPU) {
    EXPECT_DOUBLE_EQ(weighted_sum(x, 2.0).cast<double>(), 12.0);
    return;
  }
  try {
    weighted_sum(x, 2.0);
    FAIL() << "weighted_sum of a CUDA tensor did not throw";
  } catch (const ffi::Error& err) {
    EXPECT_EQ(std::string(err.kind()), "ValueError");
  }
}

}  // namespace
