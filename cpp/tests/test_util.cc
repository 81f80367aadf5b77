#include "cpp/tests/test_util.h"

#include <dlfcn.h>
#include <link.h>

#include <climits>
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

namespace {

// runtime.GetDeviceAttr's kind for "does this device exist".
constexpr int kDeviceExist = 0;

// The directory of the loaded libtvm_runtime.so (its CUDA sidecar lives there).
std::string RuntimeDirectory() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        std::string name = info->dlpi_name == nullptr ? "" : info->dlpi_name;
        const std::string lib = "/libtvm_runtime.so";
        if (name.size() >= lib.size() &&
            name.compare(name.size() - lib.size(), lib.size(), lib) == 0) {
          char resolved[PATH_MAX];
          if (realpath(name.c_str(), resolved) != nullptr) name = resolved;
          *static_cast<std::string*>(data) = name.substr(0, name.rfind('/'));
          return 1;
        }
        return 0;
      },
      &found);
  return found;
}

// Loads TVM's CUDA runtime as a deployed program must; "" when loaded, else
// why not.
std::string LoadCudaRuntime() {
  if (tvm::ffi::Function::GetGlobal("device_api.cuda").has_value()) return "";
  std::string directory = RuntimeDirectory();
  if (directory.empty()) return "libtvm_runtime.so is not loaded";
  std::string path = directory + "/libtvm_runtime_cuda.so";
  if (dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    return std::string("the CUDA runtime does not load: ") + dlerror();
  }
  return "";
}

}  // namespace

std::string VariantTarget() {
  const char* targets = std::getenv("TVM_TEST_TARGETS");
  return targets == nullptr ? "llvm" : targets;
}

bool GpuRequired() {
  const char* value = std::getenv("TVM_CONFORMANCE_REQUIRE_GPU");
  return value != nullptr && std::string(value) == "1";
}

DLDevice VariantDevice(std::string* why_not) {
  if (VariantTarget() != "cuda") return DLDevice{kDLCPU, 0};
  *why_not = LoadCudaRuntime();
  if (why_not->empty()) {
    int exists = RequireGlobal("runtime.GetDeviceAttr")(
                     static_cast<int>(kDLCUDA), 0, kDeviceExist)
                     .cast<int>();
    if (!exists) *why_not = "no CUDA device present";
  }
  return DLDevice{kDLCUDA, 0};
}

}  // namespace testing
}  // namespace tvm_conformance
