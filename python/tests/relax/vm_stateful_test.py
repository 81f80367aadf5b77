"""Seed 004: the Relax VM stateful API (`set_input` / `invoke_stateful` / `get_outputs`).

Outputs follow the latest inputs, and misuse gets a clear Python error instead of stale data
or a crash. Runs in both exec modes and once per target.
"""

import numpy as np
import pytest
import tvm
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

from tvm_conformance.relax_vm import EXEC_MODES, build_vm


@I.ir_module
class StatefulModule:
    """One function to drive statefully."""

    @R.function
    def main(x: R.Tensor((2, 2), "float32")):
        y = R.add(x, x)
        return y


def _vm(target: str, dev: tvm.runtime.Device, exec_mode: str) -> relax.VirtualMachine:
    return build_vm(StatefulModule, target, dev, exec_mode)


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
def test_outputs_follow_latest_inputs(target: str, dev: tvm.runtime.Device, exec_mode: str) -> None:
    vm = _vm(target, dev, exec_mode)

    vm.set_input("main", tvm.runtime.tensor(np.ones((2, 2), "float32"), dev))
    vm.invoke_stateful("main")
    first = vm.get_outputs("main").numpy()
    vm.set_input("main", tvm.runtime.tensor(np.full((2, 2), 3.0, "float32"), dev))
    vm.invoke_stateful("main")
    second = vm.get_outputs("main").numpy()

    np.testing.assert_array_equal(first, np.full((2, 2), 2.0))
    np.testing.assert_array_equal(second, np.full((2, 2), 6.0))


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
def test_get_outputs_before_invoke_fails(
    target: str, dev: tvm.runtime.Device, exec_mode: str
) -> None:
    vm = _vm(target, dev, exec_mode)

    with pytest.raises(
        ValueError, match='No output saved for call of "main"; use `invoke_stateful`'
    ):
        vm.get_outputs("main")


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
def test_invoke_without_inputs_fails(target: str, dev: tvm.runtime.Device, exec_mode: str) -> None:
    vm = _vm(target, dev, exec_mode)

    with pytest.raises(
        ValueError, match="No inputs set for stateful call of main; use `set_input`"
    ):
        vm.invoke_stateful("main")


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
def test_set_input_unknown_function_fails(
    target: str, dev: tvm.runtime.Device, exec_mode: str
) -> None:
    vm = _vm(target, dev, exec_mode)

    with pytest.raises(ValueError, match="Unknown function: no_such_function"):
        vm.set_input("no_such_function", tvm.runtime.tensor(np.ones((2, 2), "float32"), dev))


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
def test_set_input_wrong_arity_fails(target: str, dev: tvm.runtime.Device, exec_mode: str) -> None:
    vm = _vm(target, dev, exec_mode)
    x = tvm.runtime.tensor(np.ones((2, 2), "float32"), dev)

    with pytest.raises(
        tvm.error.InternalError,
        match=r"The number of provided parameters doesn't match the number of arguments",
    ):
        vm.set_input("main", x, x)
