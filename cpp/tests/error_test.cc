// Errors raised in C++ FFI functions arrive as ffi::Error with their kind and
// message, including custom kinds, std exceptions and errors from callbacks.
#include <gtest/gtest.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <stdexcept>
#include <string>

#include "cpp/tests/test_util.h"

namespace {

namespace ffi = tvm::ffi;

using tvm_conformance::testing::RequireGlobal;

void Throw(const std::string& kind, const std::string& message) {
  RequireGlobal("testing.throw_error")(ffi::String(kind), ffi::String(message));
}

TEST(Error, ValueErrorKindAndMessage) {
  EXPECT_FFI_ERROR(Throw("ValueError", "bad value"), "ValueError", "bad value");
}

TEST(Error, TypeErrorKindAndMessage) {
  EXPECT_FFI_ERROR(Throw("TypeError", "bad type"), "TypeError", "bad type");
}

TEST(Error, IndexErrorKindAndMessage) {
  EXPECT_FFI_ERROR(Throw("IndexError", "bad index"), "IndexError", "bad index");
}

TEST(Error, KeyErrorKindAndMessage) {
  EXPECT_FFI_ERROR(Throw("KeyError", "bad key"), "KeyError", "bad key");
}

TEST(Error, RuntimeErrorKindAndMessage) {
  EXPECT_FFI_ERROR(Throw("RuntimeError", "bad state"), "RuntimeError",
                   "bad state");
}

TEST(Error, CustomKindFromThrowMacro) {
  EXPECT_FFI_ERROR(Throw("ConformanceError", "custom"), "ConformanceError",
                   "custom");
}

TEST(Error, ArbitraryCustomKind) {
  EXPECT_FFI_ERROR(Throw("MyOwnError", "anything"), "MyOwnError", "anything");
}

TEST(Error, StdExceptionPropagatesUnchangedInProcess) {
  // C++ calling a C++ global in the same process gets the std::exception as
  // thrown (Python, across the C ABI, sees it as InternalError: error_test.py).
  EXPECT_THROW(Throw("std", "from std"), std::runtime_error);
}

TEST(Error, ErrorInCallbackPropagatesThroughCpp) {
  ffi::Function callback = ffi::Function::FromTyped(
      []() { TVM_FFI_THROW(IndexError) << "from the callback"; });
  EXPECT_FFI_ERROR(RequireGlobal("testing.invoke")(callback), "IndexError",
                   "from the callback");
}

TEST(Error, NestedInvokePropagatesInnermostError) {
  ffi::Function invoke = RequireGlobal("testing.invoke");
  ffi::Function inner = ffi::Function::FromTyped(
      []() { TVM_FFI_THROW(KeyError) << "innermost"; });
  ffi::Function outer =
      ffi::Function::FromTyped([invoke, inner]() { invoke(inner); });
  EXPECT_FFI_ERROR(invoke(outer), "KeyError", "innermost");
}

}  // namespace
