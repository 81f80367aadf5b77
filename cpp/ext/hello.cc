// The seed's first extension: `myadd` (int + int) and `callhello` (calls the
// function it is given with "hello world"). Registered as globals when the
// library is loaded.
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <cstdint>

namespace tvm_conformance {
namespace {

int64_t MyAdd(int64_t a, int64_t b) { return a + b; }

void CallHello(tvm::ffi::Function f) { f(tvm::ffi::String("hello world")); }

TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef()
      .def("myadd", MyAdd)
      .def("callhello", CallHello);
}

}  // namespace
}  // namespace tvm_conformance
