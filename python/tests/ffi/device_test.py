"""Devices as FFI arguments and return values."""

import tvm
import tvm.testing

# C++ extensions loaded for this module by conftest.py.
EXTENSIONS = ("ffi_testing",)


def test_python_device_function_cuda_in_cpu_out() -> None:
    seen = []

    def test_device_func(dev: tvm.runtime.Device) -> tvm.runtime.Device:
        seen.append(dev)
        return tvm.cpu(0)

    x = tvm.runtime.convert(test_device_func)(tvm.cuda(7))
    assert seen == [tvm.cuda(7)]
    assert x == tvm.cpu(0)
    assert x != tvm.cuda(0)


def test_device_round_trip_through_echo() -> None:
    x = tvm.testing.echo(tvm.opencl(10))
    assert x == tvm.opencl(10)
    assert (x.dlpack_device_type(), x.index) == (tvm.opencl(10).dlpack_device_type(), 10)


def test_cpp_device_parts_and_next() -> None:
    parts = tvm.get_global_func("testing.device_parts")
    assert list(parts(tvm.cuda(7))) == [2, 7]  # kDLCUDA = 2
    assert list(parts(tvm.cpu(0))) == [1, 0]  # kDLCPU = 1
    nxt = tvm.get_global_func("testing.device_next")(tvm.cuda(7))
    assert nxt == tvm.cuda(8)
