// The vertical slice in C++: the hello extension's globals, called through the
// FFI registry.
#include <gtest/gtest.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <limits>
#include <string>

#include "cpp/tests/test_util.h"

namespace {

TEST(Hello, MyAddAddsThroughGlobalRegistry) {
  auto myadd = tvm::ffi::Function::GetGlobal("myadd");
  ASSERT_TRUE(myadd.has_value());
  EXPECT_EQ((*myadd)(4, 5).cast<int64_t>(), 9);
  EXPECT_EQ((*myadd)(-7, 3).cast<int64_t>(), -4);
}

TEST(Hello, CallHelloPassesHelloWorld) {
  auto callhello = tvm::ffi::Function::GetGlobal("callhello");
  ASSERT_TRUE(callhello.has_value());
  std::string received;
  auto record = tvm::ffi::Function::FromTyped(
      [&received](tvm::ffi::String s) { received = std::string(s); });
  (*callhello)(record);
  EXPECT_EQ(received, "hello world");
}

TEST(Hello, MyAddRejectsWrongArgumentType) {
  auto myadd = tvm::ffi::Function::GetGlobal("myadd");
  ASSERT_TRUE(myadd.has_value());
  EXPECT_FFI_ERROR((*myadd)(4, tvm::ffi::String("five")), "TypeError", "myadd");
}

TEST(Hello, MyAddOverflowIsValueError) {
  auto myadd = tvm::ffi::Function::GetGlobal("myadd");
  ASSERT_TRUE(myadd.has_value());
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ((*myadd)(kMax, 0).cast<int64_t>(), kMax);
  EXPECT_FFI_ERROR((*myadd)(kMax, 1), "ValueError",
                   "myadd: int64 overflow in 9223372036854775807 + 1");
  EXPECT_FFI_ERROR((*myadd)(kMin, -1), "ValueError", "myadd: int64 overflow");
}

}  // namespace
