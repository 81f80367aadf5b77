"""Value conversion across the FFI: `tvm.runtime.convert`, numpy scalars, functions in maps."""

import numpy as np
import pytest
import tvm
import tvm.testing
import tvm_ffi
from tvm import tirx

from tvm_conformance import deviations, observed

INT64_MAX = (1 << 63) - 1
INT64_MIN = -(1 << 63)


def test_convert_list_to_array() -> None:
    a = tvm.runtime.convert([1, 2, 3])
    assert isinstance(a, tvm_ffi.Array)
    assert len(a) == 3
    assert a[-1] == 3
    assert type(a[-1]) is int


def test_array_slicing() -> None:
    a = tvm.runtime.convert([1, 2, 3])
    assert list(a[-3:-1]) == [1, 2]
    assert list(a[::2]) == [1, 3]
    assert list(a[1:]) == [2, 3]


def test_convert_dict_to_map() -> None:
    amap = tvm.runtime.convert({"a": 2, "b": 3})
    assert isinstance(amap, tvm_ffi.Map)
    assert amap["a"] == 2
    assert dict(amap.items()) == {"a": 2, "b": 3}


def test_convert_python_function() -> None:
    f = tvm.runtime.convert(lambda x, y: x * y)
    assert isinstance(f, tvm_ffi.Function)
    assert f(6, 7) == 42


def test_convert_empty_tuple() -> None:
    seen = []

    def myfunc(ss: object) -> None:
        seen.append(tuple(ss))

    x = tvm.runtime.convert(())
    assert isinstance(x, tvm_ffi.Array)
    tvm.runtime.convert(myfunc)(x)
    assert seen == [()]


def test_convert_bytearray() -> None:
    a = bytearray("hello", encoding="ascii")
    seen = []
    tvm.runtime.convert(seen.append)(a)
    assert seen == [b"hello"]
    assert isinstance(tvm.runtime.convert(a), tvm_ffi.core.Bytes)


def test_convert_list_of_tensors_keeps_identity() -> None:
    x = tvm.runtime.tensor(np.array([1, 2, 3], dtype="int32"))
    arr = tvm.runtime.convert([x, x])
    assert arr[0].same_as(x)
    assert arr[1].same_as(x)


@pytest.mark.parametrize("value", [INT64_MAX, INT64_MIN, 0, -1])
def test_numpy_int64_scalar_through_echo(value: int) -> None:
    out = tvm.testing.echo(np.int64(value))
    assert type(out) is int
    assert out == value


def test_python_int_at_int64_limits_through_echo() -> None:
    assert tvm.testing.echo(INT64_MAX) == INT64_MAX
    assert tvm.testing.echo(INT64_MIN) == INT64_MIN


@deviations.xfail("ffi-int-beyond-int64-overflow")
def test_int_beyond_int64_through_echo_round_trips_as_bigint() -> None:
    # An Any parameter accepts a big int (ffi.BigInt) and gives the exact value back.
    with observed.int_beyond_int64_overflow():
        assert tvm.testing.echo(1 << 64) == 1 << 64
    with observed.int_beyond_int64_overflow():
        assert tvm.testing.echo(np.uint64((1 << 64) - 1)) == (1 << 64) - 1


def test_dict_function_value_type() -> None:
    converted = tvm.runtime.convert({"add": lambda a, b: a + b})
    f = converted["add"]
    assert isinstance(f, tvm_ffi.Function)
    a = tirx.Var("a", "float32")
    b = tirx.Var("b", "float32")
    tvm.ir.assert_structural_equal(f(a, b), tirx.Add(a, b))


def test_callback_receives_and_returns_object() -> None:
    x = tvm.runtime.convert([10])

    def identity(y: object) -> object:
        assert y.same_as(x)
        return y

    f2 = tvm.runtime.convert(identity)

    @tvm.register_global_func("conformance.any.callback_with_node", override=True)
    def my_callback_with_node(y: object, f: tvm_ffi.Function) -> object:
        assert y.same_as(x)
        return f(y)

    f = tvm.get_global_func("conformance.any.callback_with_node")
    y = f(x, f2)
    assert y.same_as(x)
    assert list(y) == [10]
