// Array, Map, String and Optional into and out of FFI functions.
#include <gtest/gtest.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <limits>
#include <string>

#include "cpp/tests/test_util.h"

namespace {

namespace ffi = tvm::ffi;

using tvm_conformance::testing::RequireGlobal;

TEST(Container, ArraySum) {
  ffi::Array<int64_t> values{1, 2, 3, 4};
  EXPECT_EQ(RequireGlobal("testing.array_sum")(values).cast<int64_t>(), 10);
  EXPECT_EQ(
      RequireGlobal("testing.array_sum")(ffi::Array<int64_t>{}).cast<int64_t>(),
      0);
}

TEST(Container, ArrayReverseKeepsElementsAndTypes) {
  ffi::Array<ffi::Any> in{1, ffi::String("two"), 3.0};
  ffi::Array<ffi::Any> out =
      RequireGlobal("testing.array_reverse")(in).cast<ffi::Array<ffi::Any>>();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_DOUBLE_EQ(out[0].cast<double>(), 3.0);
  EXPECT_EQ(std::string(out[1].cast<ffi::String>()), "two");
  EXPECT_EQ(out[2].cast<int64_t>(), 1);
  EXPECT_EQ(in[0].cast<int64_t>(), 1);  // input untouched
}

TEST(Container, ArrayGetOutOfRangeIsIndexError) {
  ffi::Array<ffi::Any> in{7, 8, 9};
  EXPECT_EQ(RequireGlobal("testing.array_get")(in, 2).cast<int64_t>(), 9);
  EXPECT_FFI_ERROR(RequireGlobal("testing.array_get")(in, 3), "IndexError",
                   "index 3 out of range for size 3");
}

TEST(Container, MapInvert) {
  ffi::Map<ffi::String, int64_t> in{{"a", 1}, {"b", 2}};
  ffi::Map<int64_t, ffi::String> out =
      RequireGlobal("testing.map_invert")(in)
          .cast<ffi::Map<int64_t, ffi::String>>();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(std::string(out.at(1)), "a");
  EXPECT_EQ(std::string(out.at(2)), "b");
}

TEST(Container, MapMissingKeyIsKeyError) {
  ffi::Map<ffi::String, int64_t> in{{"x", 42}};
  EXPECT_EQ(
      RequireGlobal("testing.map_get")(in, ffi::String("x")).cast<int64_t>(),
      42);
  EXPECT_FFI_ERROR(RequireGlobal("testing.map_get")(in, ffi::String("y")),
                   "KeyError", "key `y` not found");
}

TEST(Container, MapWithWrongValueTypeNamesSignature) {
  ffi::Map<ffi::String, ffi::Any> in{{"a", ffi::String("not an int")}};
  EXPECT_FFI_ERROR(RequireGlobal("testing.map_invert")(in), "TypeError",
                   "testing.map_invert(0: Map<str, int>)");
}

TEST(Container, StringConcat) {
  ffi::String out = RequireGlobal("testing.string_concat")(
                        ffi::String("hello"), ffi::String(" world"))
                        .cast<ffi::String>();
  EXPECT_EQ(std::string(out), "hello world");
  const std::string long_str(1000, 'x');
  EXPECT_EQ(RequireGlobal("testing.string_length")(ffi::String(long_str))
                .cast<int64_t>(),
            1000);
}

TEST(Container, OptionalArgument) {
  ffi::Function optional_or = RequireGlobal("testing.optional_or");
  EXPECT_EQ(optional_or(nullptr, 3).cast<int64_t>(), 3);
  EXPECT_EQ(optional_or(ffi::Optional<int64_t>(5), 3).cast<int64_t>(), 5);
}

TEST(Container, OptionalReturn) {
  ffi::Function lookup = RequireGlobal("testing.optional_lookup");
  EXPECT_FALSE(
      lookup(ffi::String("")).cast<ffi::Optional<ffi::String>>().has_value());
  ffi::Optional<ffi::String> found =
      lookup(ffi::String("k")).cast<ffi::Optional<ffi::String>>();
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(std::string(*found), "found:k");
}

TEST(Container, ArraySumOverflowIsValueError) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  ffi::Array<int64_t> values{kMax, 1};
  EXPECT_FFI_ERROR(RequireGlobal("testing.array_sum")(values), "ValueError",
                   "testing.array_sum: int64 overflow");
}

}  // namespace
