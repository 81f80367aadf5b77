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


# Every scalar type a user hands to `const` / `tensor`: Python's three, and numpy's.
NUMPY_SCALARS = [
    np.int8(-128), np.int16(-32768), np.int32(INT32_MAX), np.int64(-(2**63)),
    np.uint8(255), np.uint16(65535), np.uint32(2**32 - 1), np.uint64(2**64 - 1),
    np.float16(-1.5), np.float32(3.25), np.float64(0.1),
]  # fmt: skip

# TVM's message for a value its const() cannot classify (numpy.bool_ is no Python bool subclass).
CONST_OPAQUE_MESSAGE = (
    "First argument to tvm.tirx.const must be int, float, or bool, but instead received "
    "argument with type code ffi.OpaquePyObject"
)


@pytest.mark.parametrize(
    ("value", "dtype"),
    [(True, "bool"), (False, "bool"), (7, "int32"), (-0.5, "float32")],
    ids=["True", "False", "int", "float"],
)
def test_const_of_a_python_scalar_takes_tvm_default_type(value: object, dtype: str) -> None:
    """TVM's documented defaults, not numpy's: a Python int is int32 and a float float32 where
    they fit (numpy says int64, float64); a bool is bool, never an integer (bool is an int)."""
    const = tvm.runtime.const(value)
    assert _dtype(const) == dtype
    assert const.value == value


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(np.bool_(True), marks=deviations.xfail("ffi-const-numpy-bool-refused")),
        *[
            pytest.param(v, marks=deviations.xfail("ffi-const-large-uint64-as-call"))
            if v.dtype == np.uint64
            else v
            for v in NUMPY_SCALARS
        ],
    ],
    ids=lambda v: type(v).__name__,
)
def test_const_of_a_numpy_scalar_keeps_its_dtype_and_value(value: np.generic) -> None:
    """A numpy scalar is a constant of its own dtype and value, as the Python value is."""
    with observed.recorded(
        tvm.error.InternalError, re.escape(CONST_OPAQUE_MESSAGE), observed.NumpyScalarRefused
    ):
        const = tvm.runtime.const(value)
    assert _dtype(const) == str(value.dtype)
    op = getattr(getattr(const, "op", None), "name", "")
    if op == "tirx.large_uint_imm":
        # The recorded TVM 0.26 form: (low, high) 32-bit halves that make exactly this value.
        low, high = (int(arg.value) for arg in const.args)
        assert (high << 32) | low == value.item(), str(const)
        raise observed.LargeUintAsCall(f"{value!r} came back as {const}")
    assert const.value == value.item()


@pytest.mark.parametrize(
    "value",
    [True, 7, -0.5, 2**40, np.bool_(False), *NUMPY_SCALARS],
    ids=lambda v: f"{type(v).__name__}-{v}",
)
def test_tensor_of_every_scalar_type_matches_numpy(value: object) -> None:
    """`tvm.runtime.tensor` of a scalar is a 0-d tensor of numpy's type for it (not `const`'s
    defaults: a Python int is int64 here), and of a list of it, a 1-d one."""
    want = np.asarray(value)
    tensor = tvm.runtime.tensor(value)
    assert want.shape == () and (tensor.shape, str(tensor.dtype)) == (want.shape, str(want.dtype))
    out = tensor.numpy()
    assert (out.shape, out.dtype) == (want.shape, want.dtype)
    np.testing.assert_array_equal(out, want)
    want = np.asarray([value, value])
    out = tvm.runtime.tensor(want).numpy()
    assert (out.shape, out.dtype) == (want.shape, want.dtype)
    np.testing.assert_array_equal(out, want)


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
