"""Copies between TVM tensors: `copyfrom` of another TVM tensor, `copyto` a tensor or a device,
both directions, beside the numpy sources scalar_types_test.py tries.

Each destination starts with values different from the source's, so a copy made the wrong
way round, or not at all, shows; the source is checked unchanged. Expected values, shapes and
dtypes come from numpy. A destination of another shape or dtype is the deviation
runtime-tensor-copy-unchecked.
"""

import numpy as np
import pytest
import tvm

from tvm_conformance import deviations
from tvm_conformance.observed import TensorCopyUnchecked

DTYPES = ["bool", "int8", "int32", "int64", "uint16", "float16", "float32", "float64"]
SHAPE = (2, 3)


def _values(dtype: str, flip: bool = False) -> np.ndarray:
    """Six distinct values of `dtype` (bools alternate), reversed with `flip`."""
    base = np.arange(1, 7)
    if flip:
        base = base[::-1] + 10
    return (base % 2 == 0 if dtype == "bool" else base).astype(dtype).reshape(SHAPE)


def _check(tensor: tvm.runtime.Tensor, want: np.ndarray) -> None:
    out = tensor.numpy()
    assert (tensor.shape, str(tensor.dtype)) == (want.shape, str(want.dtype))
    assert (out.shape, out.dtype) == (want.shape, want.dtype)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_copyfrom_a_tvm_tensor_copies_into_self(dtype: str) -> None:
    values = _values(dtype)
    source = tvm.runtime.tensor(values)
    dest = tvm.runtime.tensor(_values(dtype, flip=True))

    assert dest.copyfrom(source) is dest

    _check(dest, values)
    _check(source, values)


@pytest.mark.parametrize("dtype", DTYPES)
def test_copyto_a_tvm_tensor_copies_into_it(dtype: str) -> None:
    values = _values(dtype)
    source = tvm.runtime.tensor(values)
    dest = tvm.runtime.tensor(_values(dtype, flip=True))

    assert source.copyto(dest).same_as(dest)

    _check(dest, values)
    _check(source, values)


@pytest.mark.parametrize("index", [0, 1])
@pytest.mark.parametrize("dtype", DTYPES)
def test_copyto_a_device_gives_a_new_tensor_there(dtype: str, index: int) -> None:
    values = _values(dtype)
    source = tvm.runtime.tensor(values)

    out = source.copyto(tvm.cpu(index))

    assert out.device == tvm.cpu(index)
    _check(out, values)
    out.copyfrom(_values(dtype, flip=True))  # a copy, not a view: the source keeps its values
    _check(source, values)


def test_copies_chain_both_ways_across_devices() -> None:
    values = _values("float32")
    on_cpu0 = tvm.runtime.empty(SHAPE, "float32", tvm.cpu(0)).copyfrom(values)
    on_cpu1 = tvm.runtime.empty(SHAPE, "float32", tvm.cpu(1))
    on_cpu1.copyfrom(on_cpu0)
    assert on_cpu1.device == tvm.cpu(1)
    _check(on_cpu1, values)
    on_cpu1.copyfrom(values * 3)
    on_cpu1.copyto(on_cpu0)
    _check(on_cpu0, values * 3)
    with pytest.raises(ValueError, match="Unsupported target type"):
        on_cpu0.copyto("cpu")


@pytest.mark.parametrize("direction", ["copyfrom", "copyto"])
@pytest.mark.parametrize(("shape", "dtype"), [((3, 3), "int32"), (SHAPE, "int64"), ((5,), "int8")])
def test_copy_to_another_size_in_bytes_is_refused(
    shape: tuple[int, ...], dtype: str, direction: str
) -> None:
    source = tvm.runtime.tensor(_values("int32"))
    dest = tvm.runtime.tensor(np.full(shape, 9, dtype))
    with pytest.raises(RuntimeError, match="size in bytes must exactly match"):
        if direction == "copyfrom":
            dest.copyfrom(source)
        else:
            source.copyto(dest)
    _check(dest, np.full(shape, 9, dtype))
    _check(source, _values("int32"))


@deviations.xfail("runtime-tensor-copy-unchecked")
@pytest.mark.parametrize("direction", ["copyfrom", "copyto"])
@pytest.mark.parametrize(
    ("shape", "dtype"), [((3, 2), "int32"), ((6,), "int32"), (SHAPE, "float32")],
    ids=["shape-3x2", "shape-6", "dtype-float32"],
)  # fmt: skip
def test_copy_to_another_shape_or_dtype_is_refused_or_converted(
    shape: tuple[int, ...], dtype: str, direction: str
) -> None:
    """The same size in bytes, another shape or dtype: refused, as copyfrom of a numpy array of
    another shape is (a ValueError), or (dtype only) converted as copyfrom of numpy converts."""
    values = _values("int32")
    source = tvm.runtime.tensor(values)
    dest = tvm.runtime.tensor(np.zeros(shape, dtype))
    try:
        if direction == "copyfrom":
            dest.copyfrom(source)
        else:
            source.copyto(dest)
    except (ValueError, TypeError):
        _check(dest, np.zeros(shape, dtype))
        return
    _check(source, values)
    if shape == SHAPE:
        converted = dest.numpy()
        if np.array_equal(converted, values.astype(dtype)):
            return
    # The recorded behaviour: the bytes copied as they are, reshaped or reinterpreted.
    _check(dest, values.view(dtype).reshape(shape))
    raise TensorCopyUnchecked(f"{direction} into {shape} {dtype} copied the raw bytes")
