"""Closures across the FFI: functions returning functions, state kept between calls."""

import tvm
import tvm_ffi

# C++ extensions loaded for this module by conftest.py.
EXTENSIONS = ("ffi_testing",)


def test_python_closure_returned_through_ffi() -> None:
    def addy(y: int) -> object:
        def add(x: int) -> object:
            return tvm.runtime.convert(x + y)

        return add

    myf = tvm.runtime.convert(addy)
    f = myf(10)
    assert isinstance(f, tvm_ffi.Function)
    assert f(11) == 21
    assert myf(-3)(3) == 0


def test_cpp_closure_captures_value() -> None:
    add5 = tvm.get_global_func("testing.make_adder")(5)
    assert isinstance(add5, tvm_ffi.Function)
    assert add5(1) == 6
    assert add5(-5) == 0


def test_cpp_closure_keeps_state_between_calls() -> None:
    make_counter = tvm.get_global_func("testing.make_counter")
    counter = make_counter(10, 5)
    assert [counter(), counter(), counter()] == [15, 20, 25]


def test_cpp_closures_have_independent_state() -> None:
    make_counter = tvm.get_global_func("testing.make_counter")
    a = make_counter(0, 1)
    b = make_counter(100, -1)
    assert a() == 1
    assert a() == 2
    assert b() == 99
    assert a() == 3


def test_cpp_closure_outlives_the_factory_handle() -> None:
    make_counter = tvm.get_global_func("testing.make_counter")
    counter = make_counter(0, 2)
    del make_counter
    assert counter() == 2
    assert counter() == 4


def test_cpp_calls_python_closure() -> None:
    offset = 100
    result = tvm.get_global_func("testing.call_n_times")(lambda i: i + offset, 3)
    assert list(result) == [100, 101, 102]
