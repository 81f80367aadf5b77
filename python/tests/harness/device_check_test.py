"""The device checks of the cuda cases: tvm_conformance.testing.assert_on_device and the Relax VM
that relax_vm.build_vm returns. A cuda case whose tensors are on the CPU must fail; this proves
the checks fail on such tensors here, with CPU tensors and a CUDA device descriptor (making the
descriptor needs no GPU).
"""

import numpy as np
import pytest
import torch
import tvm
from tvm.script import ir as I
from tvm.script import relax as R

from tvm_conformance.relax_vm import build_vm
from tvm_conformance.testing import assert_on_device


@I.ir_module
class Double:
    @R.function
    def main(x: R.Tensor((3,), "float32")):
        return R.add(x, x)


def test_tensors_on_their_device_pass() -> None:
    x = tvm.runtime.tensor(np.zeros(3, "float32"), tvm.cpu())
    assert_on_device([x, (torch.zeros(2), [x])], tvm.cpu())


def test_a_cpu_tensor_fails_a_cuda_check() -> None:
    x = tvm.runtime.tensor(np.zeros(3, "float32"), tvm.cpu())
    with pytest.raises(AssertionError, match=r"on device \(1, 0\).*not on cuda:0 \(2, 0\)"):
        assert_on_device(x, tvm.cuda(0))
    with pytest.raises(AssertionError, match="not on cuda:0"):
        assert_on_device((torch.zeros(2),), tvm.cuda(0))


def test_another_device_index_fails() -> None:
    x = tvm.runtime.tensor(np.zeros(3, "float32"), tvm.cpu(0))
    with pytest.raises(AssertionError, match=r"not on cpu:1"):
        assert_on_device(x, tvm.cpu(1))


def test_nothing_to_check_fails_unless_allowed() -> None:
    with pytest.raises(AssertionError, match="no tensor in int to check"):
        assert_on_device(5, tvm.cpu())
    assert_on_device(5, tvm.cpu(), require_tensor=False)


def test_build_vm_checks_results_against_its_device() -> None:
    x = np.arange(3, dtype="float32")
    vm = build_vm(Double, "llvm", tvm.cpu(), "bytecode")
    out = vm["main"](tvm.runtime.tensor(x, tvm.cpu()))
    np.testing.assert_array_equal(out.numpy(), 2 * x)
    # The same VM under a cuda name: its CPU results fail the case.
    vm.dev = tvm.cuda(0)
    with pytest.raises(AssertionError, match="not on cuda:0"):
        vm["main"](tvm.runtime.tensor(x, tvm.cpu()))
