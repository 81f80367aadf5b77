"""Devices as FFI arguments and return values."""

import pytest
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


# DLPack's DLDeviceType numbers (dlpack.h): the contract each of TVM's device constructors keeps.
DLPACK_DEVICE_TYPES = {
    "cpu": 1,
    "cuda": 2,
    "opencl": 4,
    "vulkan": 7,
    "metal": 8,
    "vpi": 9,
    "rocm": 10,
    "ext_dev": 12,
    "hexagon": 16,
}


@pytest.mark.parametrize("name", list(DLPACK_DEVICE_TYPES))
def test_device_constructor_gives_its_dlpack_type_and_index(name: str) -> None:
    dev = getattr(tvm, name)(3)
    assert (dev.dlpack_device_type(), dev.index) == (DLPACK_DEVICE_TYPES[name], 3)
    assert dev == tvm.device(name, 3)
    assert str(dev) == f"{name}:3"
    assert tvm.testing.echo(dev) == dev
