// Robustness fixtures (docs/robustness.md): a closure made in C++ that
// forwards to a Python callable, and a C++ loop that calls a callback many
// times and counts the errors it raised, for the property and leak checks of
// python/tests/robustness/.
#include <tvm/ffi/any.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <cstdint>

namespace tvm_conformance {
namespace {

namespace ffi = tvm::ffi;

// Returns a C++ closure that captures `target` and forwards every call to it:
// the value crosses Python -> C++ closure -> Python -> C++ -> Python.
ffi::Function MakeForwardingClosure(ffi::Function target) {
  return ffi::Function::FromPacked(
      [target](ffi::PackedArgs args, ffi::Any* ret) {
        target.CallPacked(args, ret);
      });
}

// Calls `func(arg)` `n` times from C++; an ffi::Error raised by a call is
// caught and counted. Returns the number of calls that raised.
int64_t CallRepeatedlyCountingErrors(ffi::Function func, ffi::Any arg,
                                     int64_t n) {
  if (n < 0) {
    TVM_FFI_THROW(ValueError)
        << "testing.robust.call_repeatedly: n must be >= 0, got " << n;
  }
  int64_t errors = 0;
  for (int64_t i = 0; i < n; ++i) {
    try {
      func(arg);
    } catch (const ffi::Error&) {
      ++errors;
    }
  }
  return errors;
}

}  // namespace

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def("testing.robust.make_forwarding_closure", MakeForwardingClosure)
      .def("testing.robust.call_repeatedly", CallRepeatedlyCountingErrors);
}

}  // namespace tvm_conformance
