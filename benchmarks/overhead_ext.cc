// Fixtures for //benchmarks:overhead. Each FFI function has a floor beside it:
// `bench.add` is timed against `bench_c_add` through ctypes (a plain C symbol,
// no FFI), and `bench.call_n_times` (C++ calling a Python callback) against a
// Python loop of the same calls.
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <cstdint>

namespace tvm_conformance {
namespace {

int64_t Add(int64_t a, int64_t b) { return a + b; }

// Calls `f()` `n` times; the per-call cost is the C++ -> Python callback
// overhead.
void CallNTimes(tvm::ffi::Function f, int64_t n) {
  for (int64_t i = 0; i < n; ++i) f();
}

TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef()
      .def("bench.add", Add)
      .def("bench.call_n_times", CallNTimes);
}

}  // namespace
}  // namespace tvm_conformance

// The ctypes floor: the cheapest foreign call Python can make into the same
// library.
extern "C" __attribute__((visibility("default"))) int64_t
bench_c_add(int64_t a, int64_t b) {
  return a + b;
}
