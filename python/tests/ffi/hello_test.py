"""The vertical slice in Python: load the hello extension, call myadd and callhello."""

import tvm

# C++ extensions loaded for this module by conftest.py.
EXTENSIONS = ("hello",)


def test_myadd_adds_two_ints() -> None:
    myadd = tvm.get_global_func("myadd")
    assert myadd(4, 5) == 9
    assert myadd(-7, 3) == -4


def test_callhello_calls_python_with_hello_world() -> None:
    received = []
    tvm.get_global_func("callhello")(received.append)
    assert received == ["hello world"]
