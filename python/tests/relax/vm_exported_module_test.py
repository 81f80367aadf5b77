"""Exported executables: load the Relax model built by the Bazel step and run it from Python.

The artefact is `python/tests/relax/vm_exported_module.so` (the `tvm_exported_module` genrule
over vm_exported_module_builder.py): `main(x, y) = x * y + 1` on float32[2, 3], built for llvm.
cpp/tests/vm_exported_module_test.cc loads the same file from C++. Bad inputs must raise a
clear Python exception, never crash the process.
"""

import numpy as np
import pytest
import tvm
from tvm import relax

from tvm_conformance.runfiles import rlocation

ARTEFACT = "python/tests/relax/vm_exported_module.so"


@pytest.fixture(scope="module")
def vm() -> relax.VirtualMachine:
    """A VM over the exported library, on the CPU."""
    return relax.VirtualMachine(tvm.runtime.load_module(rlocation(ARTEFACT)), tvm.cpu())


def _x() -> np.ndarray:
    return np.array([[0.0, 1.0, 2.0], [3.0, -4.0, 5.5]], dtype="float32")


def _y() -> np.ndarray:
    return np.array([[2.0, 2.0, 0.5], [-1.0, 0.25, 2.0]], dtype="float32")


def test_exported_module_computes_main(vm: relax.VirtualMachine) -> None:
    out = vm["main"](tvm.runtime.tensor(_x()), tvm.runtime.tensor(_y()))

    np.testing.assert_array_equal(out.numpy(), [[1.0, 3.0, 2.0], [-2.0, 0.0, 12.0]])


def test_exported_module_stateful_api(vm: relax.VirtualMachine) -> None:
    vm.set_input("main", tvm.runtime.tensor(_x()), tvm.runtime.tensor(_y()))
    vm.invoke_stateful("main")

    np.testing.assert_array_equal(
        vm.get_outputs("main").numpy(), [[1.0, 3.0, 2.0], [-2.0, 0.0, 12.0]]
    )


def test_exported_module_rejects_wrong_shape(vm: relax.VirtualMachine) -> None:
    wrong = tvm.runtime.tensor(np.zeros((3, 2), dtype="float32"))

    with pytest.raises(RuntimeError, match=r"param=x.*shape\[0\] mismatch to specified constant"):
        vm["main"](wrong, tvm.runtime.tensor(_y()))


def test_exported_module_rejects_wrong_dtype(vm: relax.VirtualMachine) -> None:
    wrong = tvm.runtime.tensor(np.zeros((2, 3), dtype="int32"))

    with pytest.raises(
        ValueError, match=r"param=y.*expect Tensor with dtype float32 but get int32"
    ):
        vm["main"](tvm.runtime.tensor(_x()), wrong)


def test_exported_module_rejects_non_tensor(vm: relax.VirtualMachine) -> None:
    with pytest.raises(TypeError, match=r"param=x.*expect a Tensor but get int"):
        vm["main"](1, tvm.runtime.tensor(_y()))


def test_exported_module_rejects_wrong_arity(vm: relax.VirtualMachine) -> None:
    with pytest.raises(
        tvm.error.InternalError,
        match=r"Invoking function main expects 2 arguments \(x, y\), but 1 arguments were provided",
    ):
        vm["main"](tvm.runtime.tensor(_x()))


def test_exported_module_still_works_after_errors(vm: relax.VirtualMachine) -> None:
    # A (2, 2) x where R.Tensor((2, 3)) is declared: the VM's match_cast rejects it.
    with pytest.raises(
        RuntimeError, match=r"param=x, annotation=R.Tensor\(\(2, 3\).*shape\[1\] mismatch"
    ) as info:
        vm["main"](tvm.runtime.tensor(np.zeros((2, 2), dtype="float32")), tvm.runtime.tensor(_y()))
    assert type(info.value) is RuntimeError

    out = vm["main"](tvm.runtime.tensor(_x()), tvm.runtime.tensor(_y()))
    np.testing.assert_array_equal(out.numpy(), [[1.0, 3.0, 2.0], [-2.0, 0.0, 12.0]])
