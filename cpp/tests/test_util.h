// Shared helpers of the C++ conformance tests.
#ifndef TVM_CONFORMANCE_CPP_TESTS_TEST_UTIL_H_
#define TVM_CONFORMANCE_CPP_TESTS_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>

#include <string>

namespace tvm_conformance {
namespace testing {

// Absolute path of a workspace-relative file in the test's runfiles
// ($TEST_SRCDIR/$TEST_WORKSPACE/<path>). Fails the test when the file is
// missing.
std::string Rlocation(const std::string& workspace_relative_path);

// The global function `name`. Throws std::runtime_error (failing the test, not
// crashing it on a null call) when no such global is registered.
tvm::ffi::Function RequireGlobal(const std::string& name);

// The module's function `name` (e.g. an exported library's
// `vm_load_executable`). Throws std::runtime_error when the module has none,
// failing the calling test before anything dereferences an empty Optional.
tvm::ffi::Function RequireFunction(const tvm::ffi::Module& module,
                                   const std::string& name);

}  // namespace testing
}  // namespace tvm_conformance

// Asserts that `stmt` throws a tvm::ffi::Error of kind `expected_kind` (e.g.
// "ValueError") whose message contains `expected_substr`.
#define EXPECT_FFI_ERROR(stmt, expected_kind, expected_substr)              \
  do {                                                                      \
    bool tvm_conformance_thrown = false;                                    \
    try {                                                                   \
      stmt;                                                                 \
    } catch (const ::tvm::ffi::Error& tvm_conformance_err) {                \
      tvm_conformance_thrown = true;                                        \
      EXPECT_EQ(std::string(tvm_conformance_err.kind()),                    \
                std::string(expected_kind));                                \
      EXPECT_NE(                                                            \
          std::string(tvm_conformance_err.message()).find(expected_substr), \
          std::string::npos)                                                \
          << "message: " << tvm_conformance_err.message();                  \
    }                                                                       \
    EXPECT_TRUE(tvm_conformance_thrown)                                     \
        << #stmt " did not throw " << expected_kind;                        \
  } while (false)

#endif  // TVM_CONFORMANCE_CPP_TESTS_TEST_UTIL_H_
