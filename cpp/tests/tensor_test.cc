// Tensors through TensorView parameters: written in place with zero copy,
// returned from C++, and rejected with clear errors for bad dtype or layout.
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

#include <cstdint>
#include <vector>

#include "cpp/tests/test_util.h"

namespace {

namespace ffi = tvm::ffi;

using tvm_conformance::testing::RequireGlobal;

// A DLTensor over caller-owned memory (no ownership: passed as DLTensor*).
DLTensor MakeView(void* data, DLDataType dtype, std::vector<int64_t>* shape,
                  std::vector<int64_t>* strides) {
  DLTensor t{};
  t.data = data;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = static_cast<int32_t>(shape->size());
  t.dtype = dtype;
  t.shape = shape->data();
  t.strides = strides == nullptr ? nullptr : strides->data();
  t.byte_offset = 0;
  return t;
}

TEST(Tensor, InplaceWriteIsZeroCopy) {
  std::vector<float> buf{0.0f, 1.0f, 2.0f, 3.0f};
  std::vector<int64_t> shape{2, 2};
  DLTensor view =
      MakeView(buf.data(), DLDataType{kDLFloat, 32, 1}, &shape, nullptr);
  RequireGlobal("testing.tensor_add_inplace")(&view, 1.5);
  EXPECT_EQ(buf, (std::vector<float>{1.5f, 2.5f, 3.5f, 4.5f}));
  EXPECT_EQ(RequireGlobal("testing.tensor_data_ptr")(&view).cast<int64_t>(),
            reinterpret_cast<intptr_t>(buf.data()));
}

TEST(Tensor, ReturnedTensorOwnsItsData) {
  ffi::Tensor t = RequireGlobal("testing.tensor_arange")(5).cast<ffi::Tensor>();
  ASSERT_EQ(t.ndim(), 1);
  EXPECT_EQ(t.shape()[0], 5);
  EXPECT_EQ(t.dtype().code, kDLFloat);
  EXPECT_EQ(t.dtype().bits, 32);
  const float* data = static_cast<const float*>(t.data_ptr());
  EXPECT_EQ(data[4], 4.0f);
  // The same Tensor object into a TensorView function: written in place.
  RequireGlobal("testing.tensor_add_inplace")(t, 10.0);
  EXPECT_EQ(data[0], 10.0f);
  EXPECT_EQ(data[4], 14.0f);
}

TEST(Tensor, ShapeSeenByCallee) {
  ffi::Tensor t = RequireGlobal("testing.tensor_arange")(6).cast<ffi::Tensor>();
  ffi::Array<int64_t> shape =
      RequireGlobal("testing.tensor_shape")(t).cast<ffi::Array<int64_t>>();
  ASSERT_EQ(shape.size(), 1u);
  EXPECT_EQ(shape[0], 6);
}

TEST(Tensor, WrongDtypeIsTypeError) {
  std::vector<double> buf(4, 0.0);
  std::vector<int64_t> shape{4};
  DLTensor view =
      MakeView(buf.data(), DLDataType{kDLFloat, 64, 1}, &shape, nullptr);
  EXPECT_FFI_ERROR(RequireGlobal("testing.tensor_add_inplace")(&view, 1.0),
                   "TypeError", "expected dtype float32, got float64");
  EXPECT_EQ(buf, std::vector<double>(4, 0.0));
}

TEST(Tensor, NonContiguousIsValueError) {
  std::vector<float> buf(8, 0.0f);
  std::vector<int64_t> shape{4};
  std::vector<int64_t> strides{2};  // every other element
  DLTensor view =
      MakeView(buf.data(), DLDataType{kDLFloat, 32, 1}, &shape, &strides);
  EXPECT_FFI_ERROR(RequireGlobal("testing.tensor_add_inplace")(&view, 1.0),
                   "ValueError", "expected a contiguous tensor");
}

TEST(Tensor, NoneWhereTensorRequiredIsTypeError) {
  EXPECT_FFI_ERROR(RequireGlobal("testing.tensor_add_inplace")(nullptr, 1.0),
                   "TypeError", "Expected `DLTensor*` but got `None`");
}

TEST(Tensor, NegativeSizeIsValueError) {
  EXPECT_FFI_ERROR(RequireGlobal("testing.tensor_arange")(-1), "ValueError",
                   "n must be >= 0");
}

TEST(Tensor, ComplexDtypeIsTypeErrorNamingIt) {
  // The error message names a complex dtype instead of aborting the process.
  std::vector<float> buf(8, 0.0f);
  std::vector<int64_t> shape{4};
  DLTensor view =
      MakeView(buf.data(), DLDataType{kDLComplex, 64, 1}, &shape, nullptr);
  EXPECT_FFI_ERROR(RequireGlobal("testing.tensor_add_inplace")(&view, 1.0),
                   "TypeError", "expected dtype float32, got complex64");
}

TEST(Tensor, ZeroStrideIsValueError) {
  std::vector<float> buf{0.0f};
  std::vector<int64_t> shape{4};
  std::vector<int64_t> strides{0};
  DLTensor view =
      MakeView(buf.data(), DLDataType{kDLFloat, 32, 1}, &shape, &strides);
  EXPECT_FFI_ERROR(RequireGlobal("testing.tensor_add_inplace")(&view, 1.0),
                   "ValueError", "expected a contiguous tensor");
  EXPECT_EQ(buf[0], 0.0f);
}

TEST(Tensor, NonCpuDeviceIsValueError) {
  std::vector<float> buf(4, 0.0f);
  std::vector<int64_t> shape{4};
  DLTensor view =
      MakeView(buf.data(), DLDataType{kDLFloat, 32, 1}, &shape, nullptr);
  view.device = DLDevice{kDLCUDA, 0};
  EXPECT_FFI_ERROR(RequireGlobal("testing.tensor_add_inplace")(&view, 1.0),
                   "ValueError", "expected a CPU tensor");
  EXPECT_EQ(buf, std::vector<float>(4, 0.0f));
}

TEST(Tensor, HugeArangeIsValueError) {
  EXPECT_FFI_ERROR(RequireGlobal("testing.tensor_arange")(int64_t{1} << 40),
                   "ValueError", "exceeds the fixture's limit");
  EXPECT_FFI_ERROR(RequireGlobal("testing.tensor_arange")(int64_t{1} << 62),
                   "ValueError", "exceeds the fixture's limit");
}

}  // namespace
