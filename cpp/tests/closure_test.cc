// Closures returned through the FFI keep captured state between calls.
#include <gtest/gtest.h>
#include <tvm/ffi/function.h>

#include <cstdint>
#include <limits>

#include "cpp/tests/test_util.h"

namespace {

namespace ffi = tvm::ffi;

using tvm_conformance::testing::RequireGlobal;

TEST(Closure, AdderCapturesValue) {
  ffi::Function add5 =
      RequireGlobal("testing.make_adder")(5).cast<ffi::Function>();
  EXPECT_EQ(add5(1).cast<int64_t>(), 6);
  EXPECT_EQ(add5(-5).cast<int64_t>(), 0);
}

TEST(Closure, CounterKeepsStateBetweenCalls) {
  ffi::Function counter =
      RequireGlobal("testing.make_counter")(10, 5).cast<ffi::Function>();
  EXPECT_EQ(counter().cast<int64_t>(), 15);
  EXPECT_EQ(counter().cast<int64_t>(), 20);
  EXPECT_EQ(counter().cast<int64_t>(), 25);
}

TEST(Closure, CountersHaveIndependentState) {
  ffi::Function make_counter = RequireGlobal("testing.make_counter");
  ffi::Function a = make_counter(0, 1).cast<ffi::Function>();
  ffi::Function b = make_counter(100, -1).cast<ffi::Function>();
  EXPECT_EQ(a().cast<int64_t>(), 1);
  EXPECT_EQ(b().cast<int64_t>(), 99);
  EXPECT_EQ(a().cast<int64_t>(), 2);
}

TEST(Closure, CopiesShareState) {
  ffi::Function counter =
      RequireGlobal("testing.make_counter")(0, 1).cast<ffi::Function>();
  ffi::Function copy = counter;
  EXPECT_EQ(counter().cast<int64_t>(), 1);
  EXPECT_EQ(copy().cast<int64_t>(), 2);
}

TEST(Closure, CppLambdaClosurePassedToCpp) {
  int64_t total = 0;
  ffi::Function accumulate = ffi::Function::FromTyped([&total](int64_t i) {
    total += i;
    return total;
  });
  RequireGlobal("testing.call_n_times")(accumulate, 5);
  EXPECT_EQ(total, 0 + 1 + 2 + 3 + 4);
}

TEST(Closure, WrongArgumentToClosureIsTypeError) {
  ffi::Function add5 =
      RequireGlobal("testing.make_adder")(5).cast<ffi::Function>();
  EXPECT_FFI_ERROR(add5(1.5), "TypeError", "Expected `int` but got `float`");
}

TEST(Closure, AdderOverflowIsValueError) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  ffi::Function add_max =
      RequireGlobal("testing.make_adder")(kMax).cast<ffi::Function>();
  EXPECT_EQ(add_max(-1).cast<int64_t>(), kMax - 1);
  EXPECT_FFI_ERROR(add_max(1), "ValueError",
                   "testing.make_adder closure: int64 overflow");
}

TEST(Closure, CounterOverflowIsValueErrorAndKeepsState) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  ffi::Function down =
      RequireGlobal("testing.make_counter")(kMin + 2, -1).cast<ffi::Function>();
  EXPECT_EQ(down().cast<int64_t>(), kMin + 1);
  EXPECT_EQ(down().cast<int64_t>(), kMin);
  EXPECT_FFI_ERROR(down(), "ValueError",
                   "testing.make_counter closure: int64 overflow");
  // The failed step left the state alone: the next call fails the same way.
  EXPECT_FFI_ERROR(down(), "ValueError", "-9223372036854775808 + -1");
}

}  // namespace
