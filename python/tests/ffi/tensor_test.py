"""Tensors across the FFI: TensorView written in place, DLPack with numpy and torch, bad input."""

import numpy as np
import pytest
import torch
import tvm
import tvm.testing
from tvm import te
from tvm.contrib.dlpack import to_pytorch_func

from tvm_conformance import numerics

# C++ extensions loaded for this module by conftest.py.
EXTENSIONS = ("ffi_testing",)


def test_torch_tensor_written_in_place_by_cpp_tensorview() -> None:
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    tvm.get_global_func("testing.tensor_add_inplace")(t, 1.5)
    torch.testing.assert_close(t, torch.arange(6, dtype=torch.float32).reshape(2, 3) + 1.5)


def test_torch_tensor_into_cpp_is_zero_copy() -> None:
    t = torch.zeros(16, dtype=torch.float32)
    assert tvm.get_global_func("testing.tensor_data_ptr")(t) == t.data_ptr()
    assert list(tvm.get_global_func("testing.tensor_shape")(t.view(4, 4))) == [4, 4]


def test_tvm_tensor_written_in_place_by_cpp() -> None:
    x = tvm.runtime.tensor(np.arange(3, dtype="float32"))
    tvm.get_global_func("testing.tensor_add_inplace")(x, 1.0)
    np.testing.assert_array_equal(x.numpy(), np.array([1.0, 2.0, 3.0], dtype="float32"))


def test_numpy_array_where_tensor_required_is_taken_zero_copy() -> None:
    # tvm-ffi takes any object with __dlpack__ where a Tensor is required; numpy is one.
    a = np.zeros(4, dtype="float32")
    tvm.get_global_func("testing.tensor_add_inplace")(a, 2.0)
    np.testing.assert_array_equal(a, np.full(4, 2.0, dtype="float32"))
    assert tvm.get_global_func("testing.tensor_data_ptr")(a) == a.ctypes.data


def test_readonly_numpy_array_where_tensor_required_is_rejected() -> None:
    a = np.zeros(4, dtype="float32")
    a.flags.writeable = False
    with pytest.raises(BufferError, match=r"readonly"):
        tvm.get_global_func("testing.tensor_add_inplace")(a, 1.0)
    np.testing.assert_array_equal(a, np.zeros(4, dtype="float32"))


@pytest.mark.parametrize("bad", [None, [1.0, 2.0], 3.0], ids=["none", "list", "float"])
def test_non_tensor_where_tensor_required_is_type_error(bad: object) -> None:
    with pytest.raises(
        TypeError,
        match=r"Mismatched type on argument #0 when calling: "
        r"`testing\.tensor_add_inplace\(0: DLTensor\*, 1: float\) -> void`",
    ):
        tvm.get_global_func("testing.tensor_add_inplace")(bad, 1.0)


def test_wrong_dtype_into_tensorview_function_is_clear_error() -> None:
    t = torch.zeros(4, dtype=torch.float64)
    with pytest.raises(TypeError, match=r"expected dtype float32, got float64"):
        tvm.get_global_func("testing.tensor_add_inplace")(t, 1.0)
    assert torch.count_nonzero(t) == 0


def test_non_contiguous_into_tensorview_function_is_clear_error() -> None:
    t = torch.zeros(4, 4, dtype=torch.float32).t()[:, :2]
    assert not t.is_contiguous()
    with pytest.raises(ValueError, match=r"expected a contiguous tensor"):
        tvm.get_global_func("testing.tensor_add_inplace")(t, 1.0)


def test_cpp_allocated_tensor_returned_to_python() -> None:
    x = tvm.get_global_func("testing.tensor_arange")(5)
    assert isinstance(x, tvm.runtime.Tensor)
    assert (x.shape, str(x.dtype)) == ((5,), "float32")
    np.testing.assert_array_equal(x.numpy(), np.array([0, 1, 2, 3, 4], dtype="float32"))
    assert tvm.testing.object_use_count(x) == 1


def test_tensor_argument_use_count_in_cpp_callback() -> None:
    x = tvm.runtime.tensor(np.array([1, 2, 3], dtype="int64"))
    counts = tvm.get_global_func("testing.call_n_times")(
        lambda _: tvm.testing.object_use_count(x), 1
    )
    assert list(counts) == [1]
    arr = tvm.runtime.convert([x, x])
    assert tvm.testing.object_use_count(x) == 3
    del arr
    assert tvm.testing.object_use_count(x) == 1


def test_dlpack_numpy_to_tvm_to_numpy() -> None:
    a = np.random.default_rng(0).standard_normal(1337)
    tvm_a = tvm.runtime.tensor(a)
    back = tvm.runtime.from_dlpack(tvm_a)
    np.testing.assert_array_equal(back.numpy(), a)
    np.testing.assert_array_equal(np.from_dlpack(back), a)


def test_dlpack_torch_to_tvm_to_torch_zero_copy() -> None:
    x = torch.rand(56, 56)
    tvm_x = tvm.runtime.from_dlpack(x)
    y = tvm.runtime.from_dlpack(tvm_x)
    np.testing.assert_array_equal(tvm_x.numpy(), x.numpy())
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    back = torch.from_dlpack(y)
    assert back.data_ptr() == x.data_ptr()
    x[0, 0] = 123.0  # shared memory: the write is visible on the other side
    assert back[0, 0].item() == 123.0
    assert tvm_x.numpy()[0, 0] == np.float32(123.0)


def test_to_pytorch_func_matmul_matches_torch_mm() -> None:
    n = 137
    xx = te.placeholder((n, n), name="X")
    yy = te.placeholder((n, n), name="Y")
    k = te.reduce_axis((0, n), name="k")
    zz = te.compute((n, n), lambda i, j: te.sum(xx[i, k] * yy[k, j], axis=k))
    f = tvm.compile(te.create_prim_func([xx, yy, zz]), target="llvm")
    x = torch.rand(n, n)
    y = torch.rand(n, n)
    z = torch.empty(n, n)
    to_pytorch_func(f)(x, y, z)
    numerics.assert_close(z.numpy(), torch.mm, x, y)


def test_compiled_function_rejects_none_and_wrong_dtype() -> None:
    a = te.placeholder((4,), name="A")
    b = te.compute((4,), lambda i: a[i] + 1.0, name="B")
    f = tvm.compile(te.create_prim_func([a, b]), target="llvm")
    out = np.zeros(4, dtype="float32")
    with pytest.raises(TypeError, match=r"(?s)Mismatched type on argument #0 .*expected Tensor"):
        f(None, out)
    with pytest.raises(TypeError, match=r"(?s)Mismatched A\.dtype on argument #0.*float32"):
        f(np.zeros(4, dtype="float64"), out)
    f(np.arange(4, dtype="float32"), out)  # numpy goes in through DLPack
    np.testing.assert_array_equal(out, np.arange(1, 5, dtype="float32"))
