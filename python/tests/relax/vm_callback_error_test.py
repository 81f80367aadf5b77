"""Seed 000: exceptions raised by Python callbacks that a Relax VM function calls.

What reaches the caller (type, message, traceback), what TVM 0.27 loses on the way (callback
locals, unregistered exception classes), and that the VM stays usable afterwards. Every case
runs in both exec modes and once per target of the plugin's `target`/`dev` fixtures.
"""

import inspect
import types

import numpy as np
import pytest
import tvm
import tvm_ffi
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

from tvm_conformance import deviations, observed
from tvm_conformance.observed import FidelityLost
from tvm_conformance.relax_vm import EXEC_MODES, build_vm


@I.ir_module
class RaisingModule:
    """Relax functions around a callback that may raise."""

    @R.function
    def call_callback(callback: R.Callable([], R.Tensor([16], "int32"))):
        A = callback()
        return A

    @R.function
    def double(A: R.Tensor([16], "int32")):
        B = R.multiply(A, R.const(2))
        return B


class UnregisteredError(Exception):
    """A user exception tvm_ffi does not know."""


class UnregisteredValueError(ValueError):
    """A user subclass of a builtin exception tvm_ffi does not know."""


@tvm_ffi.register_error("RelaxConformanceRegisteredError")
class RegisteredError(Exception):
    """A user exception registered with tvm_ffi under its own kind."""


def _vm(target: str, dev: tvm.runtime.Device, exec_mode: str) -> relax.VirtualMachine:
    return build_vm(RaisingModule, target, dev, exec_mode)


def _innermost_frame(err: BaseException) -> types.TracebackType:
    tb = err.__traceback__
    assert tb is not None
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
@pytest.mark.parametrize("exc_type", [RuntimeError, ValueError, TypeError, IndexError])
def test_builtin_exception_type_reaches_caller(
    target: str, dev: tvm.runtime.Device, exec_mode: str, exc_type: type
) -> None:
    vm = _vm(target, dev, exec_mode)

    def raising() -> None:
        raise exc_type("Error thrown from callback")

    with pytest.raises(exc_type) as info:
        vm["call_callback"](raising)
    assert type(info.value) is exc_type
    assert str(info.value) == "Error thrown from callback"


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
def test_innermost_traceback_frame_is_the_callback(
    target: str, dev: tvm.runtime.Device, exec_mode: str
) -> None:
    vm = _vm(target, dev, exec_mode)
    raise_line = []

    def raising() -> None:
        raise_line.append(inspect.currentframe().f_lineno + 1)
        raise RuntimeError("Error thrown from callback")

    with pytest.raises(RuntimeError, match=r"^Error thrown from callback$") as info:
        vm["call_callback"](raising)

    tb = _innermost_frame(info.value)
    assert tb.tb_frame.f_code.co_filename == __file__
    assert tb.tb_frame.f_code.co_name == "raising"
    assert tb.tb_lineno == raise_line[0]


@deviations.xfail("relax-callback-locals-lost")
@pytest.mark.parametrize("exec_mode", EXEC_MODES)
def test_innermost_traceback_frame_keeps_callback_locals(
    target: str, dev: tvm.runtime.Device, exec_mode: str
) -> None:
    vm = _vm(target, dev, exec_mode)

    def raising() -> None:
        local_var = 42  # noqa: F841 (read back from the traceback frame)
        raise RuntimeError("Error thrown from callback")

    with pytest.raises(RuntimeError, match=r"^Error thrown from callback$") as info:
        vm["call_callback"](raising)

    frame = _innermost_frame(info.value).tb_frame
    assert frame.f_code.co_name == "raising", frame.f_code  # the callback's own frame
    if "local_var" not in frame.f_locals:  # the recorded loss: a rebuilt frame, no locals
        raise FidelityLost(f"the callback's frame has no locals: {sorted(frame.f_locals)}")
    assert frame.f_locals["local_var"] == 42


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
def test_vm_usable_after_callback_raised(
    target: str, dev: tvm.runtime.Device, exec_mode: str
) -> None:
    vm = _vm(target, dev, exec_mode)
    np_a = np.arange(16, dtype="int32")

    def raising() -> None:
        raise ValueError("first call fails")

    with pytest.raises(ValueError, match="first call fails"):
        vm["call_callback"](raising)

    out = vm["call_callback"](lambda: tvm.runtime.tensor(np_a, dev))
    np.testing.assert_array_equal(out.numpy(), np_a)
    doubled = vm["double"](tvm.runtime.tensor(np_a, dev))
    np.testing.assert_array_equal(doubled.numpy(), np_a * 2)


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
@pytest.mark.parametrize("exc_type", [UnregisteredError, UnregisteredValueError])
@deviations.xfail("ffi-unregistered-error-class-lost")
def test_unregistered_custom_exception_keeps_its_class(
    target: str, dev: tvm.runtime.Device, exec_mode: str, exc_type: type
) -> None:
    # Builtin classes keep their type through the VM (the tests above); a custom one should too.
    vm = _vm(target, dev, exec_mode)

    def raising() -> None:
        raise exc_type("custom failure 17")

    with observed.error_class_lost("custom failure 17"):
        with pytest.raises(exc_type, match=r"^custom failure 17$"):
            vm["call_callback"](raising)


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
def test_registered_custom_exception_keeps_its_class(
    target: str, dev: tvm.runtime.Device, exec_mode: str
) -> None:
    vm = _vm(target, dev, exec_mode)

    def raising() -> None:
        raise RegisteredError("registered failure 23")

    with pytest.raises(RegisteredError) as info:
        vm["call_callback"](raising)
    assert type(info.value) is RegisteredError
    assert str(info.value) == "registered failure 23"
