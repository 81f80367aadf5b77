"""Global functions across the FFI: registered in Python or C++, called from the other side."""

import pytest
import tvm
import tvm_ffi

from tvm_conformance import deviations, observed

# C++ extensions loaded for this module by conftest.py.
EXTENSIONS = ("hello", "ffi_testing")


TARGS = (10, 10.0, "hello")


def test_register_python_global_and_call_from_python() -> None:
    seen = []

    @tvm.register_global_func("conformance.function.py_packed", override=True)
    def my_packed_func(*args: object) -> int:
        seen.append(tuple(args))
        return 10

    f = tvm.get_global_func("conformance.function.py_packed")
    assert isinstance(f, tvm_ffi.Function)
    assert f(*TARGS) == 10
    assert seen == [TARGS]
    assert [type(v) for v in seen[0]] == [int, float, str]


def test_python_global_called_from_cpp_by_name() -> None:
    seen = []

    @tvm.register_global_func("conformance.function.py_triple", override=True)
    def py_triple(*args: object) -> int:
        seen.append(tuple(args))
        return 30

    call_global = tvm.get_global_func("testing.call_global")
    assert call_global("conformance.function.py_triple", *TARGS) == 30
    assert seen == [TARGS]


def test_cpp_calls_python_callback_n_times() -> None:
    calls = []

    def square(i: int) -> int:
        calls.append(i)
        return i * i

    result = tvm.get_global_func("testing.call_n_times")(square, 5)
    assert list(result) == [0, 1, 4, 9, 16]
    assert calls == [0, 1, 2, 3, 4]


def test_variadic_packed_function() -> None:
    vsum = tvm.get_global_func("testing.variadic_sum")
    assert vsum() == 0
    assert vsum(1, 2, 3, 4, 5, 6, 7, 8, 9, 10) == 55
    keys = tvm.get_global_func("testing.variadic_type_keys")
    assert list(keys(*TARGS, None, tvm.cpu(0))) == [
        "int",
        "float",
        "ffi.SmallStr",
        "None",
        "Device",
    ]


def test_variadic_rejects_non_int_with_type_error() -> None:
    with pytest.raises(TypeError, match=r"argument 1 has type `float`, expected int"):
        tvm.get_global_func("testing.variadic_sum")(1, 2.5)


def test_wrong_argument_count_names_signature() -> None:
    myadd = tvm.get_global_func("myadd")
    sig = r"`myadd\(0: int, 1: int\) -> int`"
    with pytest.raises(
        TypeError,
        match=rf"Mismatched number of arguments when calling: {sig}\. Expected 2 but got 1",
    ):
        myadd(1)
    with pytest.raises(TypeError, match=rf"{sig}\. Expected 2 but got 3"):
        myadd(1, 2, 3)


def test_wrong_argument_type_names_signature() -> None:
    with pytest.raises(
        TypeError,
        match=r"Mismatched type on argument #0 when calling: `myadd\(0: int, 1: int\) -> int`\. "
        r"Expected `int` but got `ffi\.SmallStr`",
    ):
        tvm.get_global_func("myadd")("a", 1)


@deviations.xfail("ffi-int-beyond-int64-overflow")
def test_int_beyond_int64_rejected_by_int_parameter() -> None:
    myadd = tvm.get_global_func("myadd")
    assert myadd((1 << 63) - 6, 5) == (1 << 63) - 1  # int64 max is still an int
    assert myadd(-(1 << 63) + 5, -5) == -(1 << 63)
    with (
        observed.int_beyond_int64_overflow(),
        pytest.raises(TypeError, match=r"argument #0 .*Expected `int` but got `ffi\.BigInt`"),
    ):
        myadd(1 << 63, 0)
    with (
        observed.int_beyond_int64_overflow(),
        pytest.raises(TypeError, match=r"argument #1 .*Expected `int` but got `ffi\.BigInt`"),
    ):
        myadd(0, -(1 << 63) - 1)


@deviations.xfail("ffi-int-beyond-int64-overflow")
def test_int_beyond_int64_in_array_rejected() -> None:
    with (
        observed.int_beyond_int64_overflow(),
        pytest.raises(
            TypeError, match=r"Expected `Array<int>` but got `Array\[index 0: ffi\.BigInt\]`"
        ),
    ):
        tvm.get_global_func("testing.array_sum")([1 << 64])


def test_missing_global_raises_clear_error() -> None:
    with pytest.raises(
        ValueError, match=r"Cannot find global function conformance\.no_such_function"
    ):
        tvm.get_global_func("conformance.no_such_function")
    assert tvm.get_global_func("conformance.no_such_function", allow_missing=True) is None


def test_missing_global_called_from_cpp_raises_clear_error() -> None:
    with pytest.raises(
        ValueError, match=r"global function `conformance\.no_such_function` is not registered"
    ):
        tvm.get_global_func("testing.call_global")("conformance.no_such_function", 1)
