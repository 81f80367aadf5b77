// Checked int64 arithmetic for the fixtures: an overflow is a ValueError
// naming the function and the operands, never a silently wrapped result.
// (tvm_ffi registers no OverflowError kind: a ValueError arrives in Python as
// ValueError, an unregistered kind as RuntimeError.)
#ifndef TVM_CONFORMANCE_CPP_EXT_CHECKED_INT_H_
#define TVM_CONFORMANCE_CPP_EXT_CHECKED_INT_H_

#include <tvm/ffi/error.h>

#include <cstdint>

namespace tvm_conformance {

// a + b, or a ValueError "<fname>: int64 overflow in a + b".
inline int64_t CheckedAdd(const char* fname, int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    TVM_FFI_THROW(ValueError)
        << fname << ": int64 overflow in " << a << " + " << b;
  }
  return sum;
}

}  // namespace tvm_conformance

#endif  // TVM_CONFORMANCE_CPP_EXT_CHECKED_INT_H_
