// Global functions through the FFI registry from C++: typed, variadic, calling
// globals by name, callbacks, missing globals and bad arguments.
#include <gtest/gtest.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cpp/tests/test_util.h"

namespace {

namespace ffi = tvm::ffi;

using tvm_conformance::testing::RequireGlobal;

TEST(Function, MyAddFromCppRegistry) {
  EXPECT_EQ(RequireGlobal("myadd")(4, 5).cast<int64_t>(), 9);
}

TEST(Function, VariadicSumTakesAnyArgumentCount) {
  ffi::Function vsum = RequireGlobal("testing.variadic_sum");
  EXPECT_EQ(vsum().cast<int64_t>(), 0);
  EXPECT_EQ(vsum(1).cast<int64_t>(), 1);
  EXPECT_EQ(vsum(1, 2, 3, 4, 5, 6, 7, 8, 9, 10).cast<int64_t>(), 55);
}

TEST(Function, VariadicSeesEachArgumentType) {
  ffi::Array<ffi::String> keys = RequireGlobal("testing.variadic_type_keys")(
                                     10, 10.0, ffi::String("hello"))
                                     .cast<ffi::Array<ffi::String>>();
  ASSERT_EQ(keys.size(), 3u);
  EXPECT_EQ(std::string(keys[0]), "int");
  EXPECT_EQ(std::string(keys[1]), "float");
  EXPECT_EQ(std::string(keys[2]), "ffi.SmallStr");
}

TEST(Function, VariadicRejectsNonIntArgument) {
  EXPECT_FFI_ERROR(RequireGlobal("testing.variadic_sum")(1, 2.5), "TypeError",
                   "argument 1 has type `float`, expected int");
}

TEST(Function, CallGlobalCallsFunctionRegisteredAtRunTime) {
  // Stands in for a global registered from Python: set from this process.
  std::vector<std::string> seen;
  ffi::Function::SetGlobal(
      "conformance.cpp.recorder",
      ffi::Function::FromPacked([&seen](ffi::PackedArgs args, ffi::Any* ret) {
        for (int i = 0; i < args.size(); ++i) {
          seen.push_back(args[i].GetTypeKey());
        }
        *ret = static_cast<int64_t>(args.size());
      }),
      /*override=*/true);
  ffi::Any out = RequireGlobal("testing.call_global")(
      ffi::String("conformance.cpp.recorder"), 10, 10.0, ffi::String("hello"));
  EXPECT_EQ(out.cast<int64_t>(), 3);
  EXPECT_EQ(seen, (std::vector<std::string>{"int", "float", "ffi.SmallStr"}));
}

TEST(Function, CallNTimesCallsCallbackWithIndex) {
  std::vector<int64_t> calls;
  ffi::Function square = ffi::Function::FromTyped([&calls](int64_t i) {
    calls.push_back(i);
    return i * i;
  });
  ffi::Array<ffi::Any> out = RequireGlobal("testing.call_n_times")(square, 4)
                                 .cast<ffi::Array<ffi::Any>>();
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[3].cast<int64_t>(), 9);
  EXPECT_EQ(calls, (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(Function, CallNTimesRejectsNegativeCount) {
  ffi::Function noop = ffi::Function::FromTyped([](int64_t) {});
  EXPECT_FFI_ERROR(RequireGlobal("testing.call_n_times")(noop, -1),
                   "ValueError", "n must be >= 0, got -1");
}

TEST(Function, MissingGlobalIsNullopt) {
  EXPECT_FALSE(
      ffi::Function::GetGlobal("conformance.no_such_function").has_value());
}

TEST(Function, CallGlobalOfMissingNameIsValueError) {
  EXPECT_FFI_ERROR(
      RequireGlobal("testing.call_global")(
          ffi::String("conformance.no_such_function")),
      "ValueError",
      "global function `conformance.no_such_function` is not registered");
}

TEST(Function, WrongArgumentCountNamesSignature) {
  EXPECT_FFI_ERROR(RequireGlobal("myadd")(1), "TypeError",
                   "`myadd(0: int, 1: int) -> int`. Expected 2 but got 1");
}

TEST(Function, WrongArgumentTypeNamesSignature) {
  EXPECT_FFI_ERROR(RequireGlobal("testing.array_sum")(ffi::String("x")),
                   "TypeError", "`testing.array_sum(0: Array<int>) -> int`");
}

TEST(Function, VariadicSumOverflowIsValueError) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_FFI_ERROR(RequireGlobal("testing.variadic_sum")(kMax, 1), "ValueError",
                   "testing.variadic_sum: int64 overflow");
}

TEST(Function, AnyEchoTakesExactlyOneArgument) {
  ffi::Function echo = RequireGlobal("testing.any_echo");
  EXPECT_EQ(echo(42).cast<int64_t>(), 42);
  EXPECT_FFI_ERROR(echo(), "TypeError",
                   "testing.any_echo(value) takes exactly 1 argument, got 0");
  EXPECT_FFI_ERROR(echo(1, 2), "TypeError", "got 2");
}

}  // namespace
