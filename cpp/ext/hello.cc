// The seed's first extension: `myadd` (int + int) and `callhello` (calls the
// function it is given with "hello world"). Registered as globals when the
// library is loaded.
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <cstdint>

#include "cpp/ext/checked_int.h"

namespace tvm_conformance {
namespace {

// a + b; an int64 overflow is a ValueError, not a wrapped result.
int64_t MyAdd(int64_t a, int64_t b) { return CheckedAdd("myadd", a, b); }

void CallHello(tvm::ffi::Function f) { f(tvm::ffi::String("hello world")); }

TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef()
      .def("myadd", MyAdd)
      .def("callhello", CallHello);
}

}  // namespace
}  // namespace tvm_conformance
