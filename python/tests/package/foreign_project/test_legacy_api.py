"""Tests written against tvm.testing's removed helpers, imported from tvm_conformance.legacy."""

import numpy as np
import tvm

from tvm_conformance.legacy import (
    parametrize_targets,
    requires_cuda,
    requires_llvm,
    requires_package,
    uses_gpu,
)


@requires_llvm
def test_llvm_runtime() -> None:
    assert tvm.runtime.enabled("llvm")


@requires_cuda
def test_cuda_device() -> None:
    assert tvm.cuda().exist


@requires_package("numpy")
def test_numpy_present() -> None:
    assert np.zeros(2).sum() == 0


@requires_package("no_such_package_in_this_venv")
def test_missing_package() -> None:
    raise AssertionError("requires_package must have skipped this test")


@parametrize_targets("llvm", "cuda")
def test_tensor_roundtrip(target: str, dev: object) -> None:
    data = np.arange(4, dtype="float32")
    np.testing.assert_array_equal(tvm.runtime.tensor(data, dev).numpy(), data)


@uses_gpu
def test_uses_gpu_runs_anywhere() -> None:
    assert True
