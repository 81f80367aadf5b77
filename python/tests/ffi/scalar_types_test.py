"""Scalar types at their bounds: the dtype TVM infers for a Python number, numpy dtypes named
by tvm-ffi, integers at and beyond the int32 / int64 limits through a tensor, and a copy into a
tensor of another shape. Expected values come from numpy and the dtype definitions."""

import re

import numpy as np
import pytest
import tvm
import tvm_ffi

from tvm_conformance import deviations, observed

INT32_MAX, INT32_MIN = 2**31 - 1, -(2**31)


def _dtype(expr: object) -> str:
    # TVM 0.27 names an expression's type `ty`; older releases `dtype`.
    return str(expr.ty) if hasattr(expr, "ty") else str(expr.dtype)


@pytest.mark.parametrize(
    ("value", "dtype"),
    [
        (INT32_MAX, "int32"),
        (INT32_MIN, "int32"),
        (INT32_MAX + 1, "int64"),
        (INT32_MIN - 1, "int64"),
        (2**62, "int64"),
        (1.5, "float32"),
    ],
    ids=["int32-max", "int32-min", "int32-max+1", "int32-min-1", "2**62", "float"],
)
def test_const_infers_the_narrowest_type_that_holds_the_value(value: object, dtype: str) -> None:
    const = tvm.runtime.const(value)
    assert _dtype(const) == dtype
    assert const.value == value


# TVM's message for a value its const() cannot classify (numpy.bool_ is no Python bool subclass).
CONST_OPAQUE_MESSAGE = (
    "First argument to tvm.tirx.const must be int, float, or bool, but instead received "
    "argument with type code ffi.OpaquePyObject"
)


@pytest.mark.parametrize(
    ("value", "dtype"),
    [
        (np.int32(-7), "int32"),
        (np.int64(2**40), "int64"),
        (np.float32(1.5), "float32"),
        (np.float64(2.5), "float64"),
        pytest.param(
            np.bool_(True), "bool", marks=deviations.xfail("ffi-const-numpy-bool-refused")
        ),
    ],
    ids=["int32", "int64", "float32", "float64", "bool"],
)
def test_const_of_numpy_scalar_keeps_its_dtype(value: object, dtype: str) -> None:
    """A numpy scalar is a constant of its own dtype and value, as the Python value is."""
    with observed.recorded(
        tvm.error.InternalError, re.escape(CONST_OPAQUE_MESSAGE), observed.NumpyScalarRefused
    ):
        const = tvm.runtime.const(value)
    assert _dtype(const) == dtype
    assert const.value == value.item()


@pytest.mark.parametrize(
    "np_dtype",
    ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
     "float16", "float32", "float64"],
)  # fmt: skip
def test_numpy_dtypes_keep_their_name_and_values(np_dtype: str) -> None:
    assert str(tvm_ffi.dtype(np.dtype(np_dtype))) == np_dtype
    info = np.iinfo(np_dtype) if np.dtype(np_dtype).kind in "iu" else None
    values = np.array([info.min, info.max] if info else [0, 1], dtype=np_dtype)
    tensor = tvm.runtime.tensor(values)
    assert str(tensor.dtype) == np_dtype
    out = tensor.numpy()
    assert out.dtype == values.dtype
    np.testing.assert_array_equal(out, values)
    empty = tvm.runtime.empty(values.shape, np.dtype(np_dtype))
    empty.copyfrom(values)
    np.testing.assert_array_equal(empty.numpy(), values)


def test_copy_from_another_shape_is_refused_even_with_the_same_size() -> None:
    tensor = tvm.runtime.empty((2, 3), "float32")
    with pytest.raises(ValueError, match="shape do not match"):
        tensor.copyfrom(np.zeros((3, 2), "float32"))
    with pytest.raises(ValueError, match="shape do not match"):
        tensor.copyfrom(np.zeros((6,), "float32"))


@pytest.mark.parametrize(
    ("source", "target"),
    [("int64", "int32"), ("int32", "int64"), ("float64", "float32"), ("uint8", "int64")],
)
def test_copy_from_another_dtype_converts_like_numpy(source: str, target: str) -> None:
    values = np.array([[1, 2, 3], [4, 5, 100]], dtype=source)
    tensor = tvm.runtime.empty(values.shape, target)
    tensor.copyfrom(values)
    out = tensor.numpy()
    assert out.dtype == np.dtype(target)
    np.testing.assert_array_equal(out, values.astype(target))


def test_tensor_keeps_its_memory_scope_request() -> None:
    """`tvm.runtime.tensor(..., mem_scope=S)` allocates in S: the CPU has no texture memory, so
    asking for it is refused (a dropped scope would silently allocate global memory)."""
    values = np.arange(4, dtype="float32")
    np.testing.assert_array_equal(tvm.runtime.tensor(values, mem_scope="global").numpy(), values)
    with pytest.raises(tvm.error.InternalError, match="memory scope: global.texture"):
        tvm.runtime.tensor(values, mem_scope="global.texture")
