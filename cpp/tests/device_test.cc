// DLDevice values as FFI arguments and return values.
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/function.h>

#include <cstdint>
#include <limits>

#include "cpp/tests/test_util.h"

namespace {

namespace ffi = tvm::ffi;

using tvm_conformance::testing::RequireGlobal;

// Passed as lvalues: an AnyView binds a DLDevice by const reference.
const DLDevice kCuda7{kDLCUDA, 7};
const DLDevice kOpenCL10{kDLOpenCL, 10};

TEST(Device, DeviceArgumentParts) {
  ffi::Array<int64_t> parts =
      RequireGlobal("testing.device_parts")(kCuda7).cast<ffi::Array<int64_t>>();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0], static_cast<int64_t>(kDLCUDA));
  EXPECT_EQ(parts[1], 7);
}

TEST(Device, DeviceReturnValue) {
  DLDevice next = RequireGlobal("testing.device_next")(kCuda7).cast<DLDevice>();
  EXPECT_EQ(next.device_type, kDLCUDA);
  EXPECT_EQ(next.device_id, 8);
}

TEST(Device, DeviceRoundTripThroughEcho) {
  DLDevice dev = RequireGlobal("testing.any_echo")(kOpenCL10).cast<DLDevice>();
  EXPECT_EQ(dev.device_type, kDLOpenCL);
  EXPECT_EQ(dev.device_id, 10);
}

TEST(Device, NonDeviceArgumentIsTypeError) {
  EXPECT_FFI_ERROR(RequireGlobal("testing.device_next")(3), "TypeError",
                   "Expected `Device` but got `int`");
}

TEST(Device, DeviceNextOfLastIdIsValueError) {
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  EXPECT_FFI_ERROR(
      RequireGlobal("testing.device_next")(DLDevice{kDLCUDA, kMax}),
      "ValueError", "device id 2147483647 has no successor");
}

}  // namespace
