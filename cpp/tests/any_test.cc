// ffi::Any conversions: cast (throws), try_cast (converts or nullopt) and
// as (exact type, no conversion), on values returned by FFI calls.
#include <gtest/gtest.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "cpp/tests/test_util.h"

namespace {

namespace ffi = tvm::ffi;

ffi::Any Echo(ffi::Any value) {
  return tvm_conformance::testing::RequireGlobal("testing.any_echo")(value);
}

TEST(Any, CastReturnsTheValue) {
  EXPECT_EQ(Echo(42).cast<int64_t>(), 42);
  EXPECT_DOUBLE_EQ(Echo(2.5).cast<double>(), 2.5);
  EXPECT_EQ(std::string(Echo(ffi::String("s")).cast<ffi::String>()), "s");
}

TEST(Any, CastToWrongTypeIsTypeError) {
  EXPECT_FFI_ERROR(Echo(42).cast<ffi::String>(), "TypeError",
                   "Cannot convert from type `int` to `str`");
}

TEST(Any, TryCastConvertsCompatibleTypes) {
  ffi::Any i = Echo(3);
  std::optional<double> as_double = i.try_cast<double>();
  ASSERT_TRUE(as_double.has_value());
  EXPECT_DOUBLE_EQ(*as_double, 3.0);
  EXPECT_FALSE(i.try_cast<ffi::String>().has_value());
}

TEST(Any, AsDoesNotConvert) {
  ffi::Any i = Echo(3);
  EXPECT_EQ(i.as<int64_t>(), std::optional<int64_t>(3));
  EXPECT_FALSE(i.as<double>().has_value());
  EXPECT_EQ(i.as<ffi::Object>(), nullptr);
}

TEST(Any, Int64LimitsRoundTrip) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t min = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(Echo(max).cast<int64_t>(), max);
  EXPECT_EQ(Echo(min).cast<int64_t>(), min);
}

TEST(Any, NoneIsNullOptional) {
  ffi::Any none = Echo(nullptr);
  EXPECT_EQ(none, nullptr);
  EXPECT_EQ(none.GetTypeKey(), "None");
  EXPECT_FALSE(none.cast<ffi::Optional<int64_t>>().has_value());
}

TEST(Any, ArrayElementsKeepTheirTypes) {
  ffi::Array<ffi::Any> arr{1, 2.0, ffi::String("three")};
  ffi::Any back = Echo(arr);
  ffi::Array<ffi::Any> out = back.cast<ffi::Array<ffi::Any>>();
  EXPECT_TRUE(out.same_as(arr));
  EXPECT_EQ(out[0].GetTypeKey(), "int");
  EXPECT_EQ(out[1].GetTypeKey(), "float");
  EXPECT_FALSE(back.try_cast<ffi::Array<int64_t>>().has_value());
}

}  // namespace
