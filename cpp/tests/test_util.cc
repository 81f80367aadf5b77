#include "cpp/tests/test_util.h"

#include <cstdlib>
#include <fstream>
#include <optional>
#include <stdexcept>

namespace tvm_conformance {
namespace testing {

std::string Rlocation(const std::string& workspace_relative_path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) {
    ADD_FAILURE()
        << "TEST_SRCDIR / TEST_WORKSPACE unset: run this test with bazel test";
    return workspace_relative_path;
  }
  std::string path =
      std::string(srcdir) + "/" + workspace + "/" + workspace_relative_path;
  if (!std::ifstream(path).good()) {
    ADD_FAILURE() << workspace_relative_path << " not in runfiles (" << path
                  << "); list it in the test's data";
  }
  return path;
}

tvm::ffi::Function RequireGlobal(const std::string& name) {
  std::optional<tvm::ffi::Function> func = tvm::ffi::Function::GetGlobal(name);
  if (!func.has_value()) {
    throw std::runtime_error("global function `" + name +
                             "` is not registered");
  }
  return *func;
}

tvm::ffi::Function RequireFunction(const tvm::ffi::Module& module,
                                   const std::string& name) {
  tvm::ffi::Optional<tvm::ffi::Function> func = module->GetFunction(name);
  if (!func.has_value()) {
    throw std::runtime_error("the module has no function " + name);
  }
  return *func;
}

}  // namespace testing
}  // namespace tvm_conformance
