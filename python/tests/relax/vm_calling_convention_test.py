"""Every calling convention of `relax.VirtualMachine` that TVM documents, not only positional.

`vm["f"](*args)`; `set_input(f, *args, **kwargs)` + `invoke_stateful` + `get_outputs`, with
keyword arguments bound by parameter name (any order, mixed with positional ones), numpy
arrays, Python numbers and tuples converted; `save_function(f, name, *args, include_return,
**kwargs)`. The functions are asymmetric in their parameters (x - y), so a swapped binding
shows. Expected values come from numpy. Both exec modes, once per target.
"""

import numpy as np
import pytest
import tvm
import tvm_ffi
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

from tvm_conformance.relax_vm import EXEC_MODES, build_vm
from tvm_conformance.testing import assert_on_device

X = np.array([10.0, 20.0, 30.0], "float32")
Y = np.array([1.0, 2.0, 4.0], "float32")


@I.ir_module
class Functions:
    """Functions whose results depend on which argument is which."""

    @R.function
    def sub(x: R.Tensor((3,), "float32"), y: R.Tensor((3,), "float32")):
        z = R.subtract(x, y)
        return z

    @R.function
    def sub3(
        x: R.Tensor((3,), "float32"), y: R.Tensor((3,), "float32"), w: R.Tensor((3,), "float32")
    ):
        z = R.subtract(R.subtract(x, y), R.multiply(w, w))
        return z

    @R.function
    def pair(x: R.Tensor((3,), "float32"), y: R.Tensor((3,), "float32")):
        a = R.subtract(x, y)
        b = R.multiply(x, R.const(2.0, "float32"))
        return (a, b)

    @R.function
    def scale(x: R.Tensor((3,), "float32"), k: R.Tensor((), "int32")):
        z = R.multiply(x, R.astype(k, "float32"))
        return z

    @R.function
    def nested(x: R.Tensor((3,), "float32"), y: R.Tensor((3,), "float32")):
        a = R.subtract(x, y)
        b = R.multiply(x, y)
        c = R.add(x, R.const(1.0, "float32"))
        d = R.subtract(y, x)
        return ((a, (b, (c, d))), x)

    @R.function
    def tuple_arg(t: R.Tuple(R.Tensor((3,), "float32"), R.Tensor((3,), "float32"))):
        z = R.subtract(t[0], t[1])
        return z


def _vm(target: str, dev: tvm.runtime.Device, exec_mode: str) -> relax.VirtualMachine:
    return build_vm(Functions, target, dev, exec_mode)


def _t(array: np.ndarray, dev: tvm.runtime.Device) -> tvm.runtime.Tensor:
    return tvm.runtime.tensor(array, dev)


def _stateful(vm: relax.VirtualMachine, name: str, *args: object, **kwargs: object) -> object:
    vm.set_input(name, *args, **kwargs)
    vm.invoke_stateful(name)
    return vm.get_outputs(name)


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
def test_positional_call(target: str, dev: tvm.runtime.Device, exec_mode: str) -> None:
    vm = _vm(target, dev, exec_mode)
    np.testing.assert_array_equal(vm["sub"](_t(X, dev), _t(Y, dev)).numpy(), X - Y)


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
def test_keyword_arguments_bind_by_parameter_name(
    target: str, dev: tvm.runtime.Device, exec_mode: str
) -> None:
    vm = _vm(target, dev, exec_mode)
    x, y, w = _t(X, dev), _t(Y, dev), _t(np.array([1.0, 2.0, 3.0], "float32"), dev)
    want = X - Y - np.array([1.0, 4.0, 9.0], "float32")
    np.testing.assert_array_equal(_stateful(vm, "sub", x=x, y=y).numpy(), X - Y)
    np.testing.assert_array_equal(_stateful(vm, "sub", y=y, x=x).numpy(), X - Y)
    np.testing.assert_array_equal(_stateful(vm, "sub", y=x, x=y).numpy(), Y - X)
    np.testing.assert_array_equal(_stateful(vm, "sub3", x, w=w, y=y).numpy(), want)
    np.testing.assert_array_equal(_stateful(vm, "sub3", x, y, w=w).numpy(), want)


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
def test_numpy_arrays_python_ints_and_tuples_are_converted(
    target: str, dev: tvm.runtime.Device, exec_mode: str
) -> None:
    vm = _vm(target, dev, exec_mode)
    np.testing.assert_array_equal(_stateful(vm, "sub", X, Y).numpy(), X - Y)
    np.testing.assert_array_equal(_stateful(vm, "scale", X, 3).numpy(), X * 3)
    np.testing.assert_array_equal(_stateful(vm, "scale", x=X, k=-2).numpy(), X * -2)
    np.testing.assert_array_equal(_stateful(vm, "tuple_arg", (X, Y)).numpy(), X - Y)


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
def test_tuple_outputs_keep_their_order(
    target: str, dev: tvm.runtime.Device, exec_mode: str
) -> None:
    vm = _vm(target, dev, exec_mode)
    first, second = _stateful(vm, "pair", _t(X, dev), _t(Y, dev))
    np.testing.assert_array_equal(first.numpy(), X - Y)
    np.testing.assert_array_equal(second.numpy(), X * 2)
    direct = vm["pair"](_t(X, dev), _t(Y, dev))
    np.testing.assert_array_equal(direct[0].numpy(), X - Y)
    np.testing.assert_array_equal(direct[1].numpy(), X * 2)


# What `nested` returns, from numpy: depth 1, 2, 3 and 4 (`d` is at depth 4).
def _nested_want(x: np.ndarray, y: np.ndarray) -> tuple:
    return ((x - y, (x * y, (x + 1, y - x))), x)


def _assert_nested(out: object, want: object, kinds: tuple[type, ...], depth: int = 0) -> int:
    """`out` has the structure of `want` (each tuple a `kinds` sequence of the same length) and
    its values, dtypes and shapes; returns the deepest level reached."""
    if isinstance(want, np.ndarray):
        assert isinstance(out, tvm.runtime.Tensor), (depth, type(out))
        assert (out.shape, str(out.dtype)) == (want.shape, str(want.dtype))
        np.testing.assert_array_equal(out.numpy(), want)
        return depth
    assert isinstance(out, kinds) and len(out) == len(want), (depth, type(out))
    return max(_assert_nested(o, w, kinds, depth + 1) for o, w in zip(out, want, strict=True))


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
def test_nested_tuple_outputs_keep_structure_and_values(
    target: str, dev: tvm.runtime.Device, exec_mode: str
) -> None:
    """A tuple of tuples, nested four deep: a direct call gives Arrays (tvm_ffi.Array),
    get_outputs gives Python tuples, each level in order and each tensor with its value."""
    vm = _vm(target, dev, exec_mode)
    want = _nested_want(X, Y)
    direct = vm["nested"](_t(X, dev), _t(Y, dev))
    assert _assert_nested(direct, want, (tvm_ffi.Array,)) == 4
    stateful = _stateful(vm, "nested", _t(X, dev), _t(Y, dev))
    assert _assert_nested(stateful, want, (tuple,)) == 4
    # The other way round: a stale or mixed-up path into the tuple shows.
    assert _assert_nested(_stateful(vm, "nested", Y, X), _nested_want(Y, X), (tuple,)) == 4


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
def test_vm_on_cpu_index_1_allocates_and_returns_there(exec_mode: str) -> None:
    """`VirtualMachine(exe, tvm.cpu(1))`: results (nested ones included) are allocated on
    cpu(1), from tensors on cpu(1) and from numpy arrays (which the VM moves there)."""
    dev = tvm.cpu(1)
    vm = relax.VirtualMachine(relax.build(Functions, "llvm", exec_mode=exec_mode), dev)
    out = vm["sub"](_t(X, dev), _t(Y, dev))
    assert out.device == dev
    np.testing.assert_array_equal(out.numpy(), X - Y)
    for result in (vm["nested"](_t(X, dev), _t(Y, dev)), _stateful(vm, "nested", X, Y)):
        _assert_nested(result, _nested_want(X, Y), (tvm_ffi.Array, tuple))
        assert_on_device(result, dev)
        assert result[0][1][1][1].device == dev
    assert _stateful(vm, "sub", X, Y).device == dev


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
def test_save_function_binds_arguments_and_returns_only_when_asked(
    target: str, dev: tvm.runtime.Device, exec_mode: str
) -> None:
    vm = _vm(target, dev, exec_mode)
    vm.save_function("sub", "sub_saved", _t(X, dev), _t(Y, dev))
    np.testing.assert_array_equal(vm["sub_saved"]().numpy(), X - Y)
    vm.save_function("sub", "sub_by_name", y=_t(X, dev), x=_t(Y, dev))
    np.testing.assert_array_equal(vm["sub_by_name"]().numpy(), Y - X)
    vm.save_function("sub", "sub_no_return", _t(X, dev), _t(Y, dev), include_return=False)
    assert vm["sub_no_return"]() is None


def test_exec_mode_is_the_one_built() -> None:
    """`exec_mode="compiled"` lowers each Relax function to one TIR function (no bytecode);
    "bytecode" keeps VM instructions. The other tests run both modes: this checks they differ."""
    text = {mode: relax.build(Functions, "llvm", exec_mode=mode).as_text() for mode in EXEC_MODES}
    assert "@sub num_inputs=2 vm_tir_func" in text["compiled"]
    assert "vm_tir_func" not in text["bytecode"]
    assert "call  " in text["bytecode"] and "call  " not in text["compiled"]
