"""Containers across the FFI: Array, Map, String and Optional into and out of C++."""

import pytest
import tvm
import tvm_ffi

# C++ extensions loaded for this module by conftest.py.
EXTENSIONS = ("ffi_testing",)


def test_python_list_into_cpp_array() -> None:
    array_sum = tvm.get_global_func("testing.array_sum")
    assert array_sum([1, 2, 3, 4]) == 10
    assert array_sum([]) == 0
    assert array_sum(tvm.runtime.convert([5, 6])) == 11


def test_cpp_array_returned_to_python() -> None:
    out = tvm.get_global_func("testing.array_reverse")([1, "two", 3.0, None])
    assert isinstance(out, tvm_ffi.Array)
    assert list(out) == [None, 3.0, "two", 1]


def test_cpp_array_index_out_of_range_is_index_error() -> None:
    array_get = tvm.get_global_func("testing.array_get")
    assert array_get([7, 8, 9], 2) == 9
    with pytest.raises(IndexError, match=r"index 3 out of range for size 3"):
        array_get([7, 8, 9], 3)


def test_python_dict_into_cpp_map_and_back() -> None:
    out = tvm.get_global_func("testing.map_invert")({"a": 1, "b": 2})
    assert isinstance(out, tvm_ffi.Map)
    assert dict(out.items()) == {1: "a", 2: "b"}


def test_cpp_map_missing_key_is_key_error() -> None:
    map_get = tvm.get_global_func("testing.map_get")
    assert map_get({"x": 42}, "x") == 42
    with pytest.raises(KeyError, match=r"key `y` not found"):
        map_get({"x": 42}, "y")


def test_map_with_wrong_value_type_names_signature() -> None:
    with pytest.raises(TypeError, match=r"testing\.map_invert\(0: Map<str, int>\)"):
        tvm.get_global_func("testing.map_invert")({"a": "not an int"})


@pytest.mark.parametrize(
    "a, b", [("hello", " world"), ("", ""), ("long" * 100, "!")], ids=["short", "empty", "long"]
)
def test_string_into_and_out_of_cpp(a: str, b: str) -> None:
    out = tvm.get_global_func("testing.string_concat")(a, b)
    assert isinstance(out, str)
    assert out == a + b


def test_non_ascii_string_length_counts_utf8_bytes() -> None:
    assert tvm.get_global_func("testing.string_length")("héllo") == len("héllo".encode())


def test_optional_argument_none_and_value() -> None:
    optional_or = tvm.get_global_func("testing.optional_or")
    assert optional_or(None, 3) == 3
    assert optional_or(5, 3) == 5


def test_optional_return_none_and_value() -> None:
    lookup = tvm.get_global_func("testing.optional_lookup")
    assert lookup("") is None
    assert lookup("k") == "found:k"
