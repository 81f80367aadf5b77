#include "cpp/tests/test_util.h"

#include <cstdlib>
#include <fstream>

namespace tvm_conformance {
namespace testing {

std::string Rlocation(const std::string& workspace_relative_path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) {
    ADD_FAILURE() << "TEST_SRCDIR / TEST_WORKSPACE unset: run this test with bazel test";
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

}  // namespace testing
}  // namespace tvm_conformance
