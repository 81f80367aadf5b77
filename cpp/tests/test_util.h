// Shared helpers of the C++ conformance tests.
#ifndef TVM_CONFORMANCE_CPP_TESTS_TEST_UTIL_H_
#define TVM_CONFORMANCE_CPP_TESTS_TEST_UTIL_H_

#include <dlpack/dlpack.h>
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

// The target of this test variant: $TVM_TEST_TARGETS ("llvm" when unset), as
// tvm_cc_test sets it for `<name>_<target>`.
std::string VariantTarget();

// Whether the GPU runner config (--config=cuda_gpu) is on: it sets
// TVM_CONFORMANCE_REQUIRE_GPU=1, and a case that cannot run then fails.
bool GpuRequired();

// The device of this variant, for a test linked with libtvm_runtime.so. Sets
// `why_not` when it cannot run here. For cuda, TVM's CUDA runtime
// (libtvm_runtime_cuda.so, beside the loaded libtvm_runtime.so) is loaded as a
// deployed program must, and device 0 must exist.
DLDevice VariantDevice(std::string* why_not);

}  // namespace testing
}  // namespace tvm_conformance

// In a test body or SetUp: when `why_not` (from VariantDevice) is set, skips
// the case naming why, or fails it under the GPU runner config, where a cuda
// case must never pass by skipping. A skip records the JUnit property
// `tvm_unavailable_target` (as the pytest plugin does), which the verdict
// reads: a skip of a target the config requires is a problem, and a target
// whose cases all skip passes only when they skip for such a target.
#define TVM_CONFORMANCE_SKIP_UNLESS_RUNNABLE(why_not)                      \
  do {                                                                     \
    if (!(why_not).empty()) {                                              \
      if (::tvm_conformance::testing::GpuRequired()) {                     \
        FAIL() << "GPU runner config (TVM_CONFORMANCE_REQUIRE_GPU=1): "    \
               << "target " << ::tvm_conformance::testing::VariantTarget() \
               << " cannot run here: " << (why_not);                       \
      }                                                                    \
      ::testing::Test::RecordProperty(                                     \
          "tvm_unavailable_target",                                        \
          ::tvm_conformance::testing::VariantTarget());                    \
      GTEST_SKIP() << "target '"                                           \
                   << ::tvm_conformance::testing::VariantTarget()          \
                   << "' cannot run here: " << (why_not);                  \
    }                                                                      \
  } while (false)

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
