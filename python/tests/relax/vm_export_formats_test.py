"""Export formats of a Relax executable beyond the shared library: a `.tar` archive loaded back
with `tvm.runtime.load_module`, and `Executable.jit()` of a build whose host code is C source
(target "c": the one module that must be compiled before it can run). Values from numpy."""

import os
from pathlib import Path

import numpy as np
import tvm
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

X = np.array([1.0, -2.0, 3.5], "float32")


@I.ir_module
class Double:
    """x + x."""

    @R.function
    def main(x: R.Tensor((3,), "float32")):
        y = R.add(x, x)
        return y


def _run(module: tvm.runtime.Module) -> np.ndarray:
    vm = relax.VirtualMachine(module, tvm.cpu())
    return vm["main"](tvm.runtime.tensor(X)).numpy()


def test_tar_export_loads_and_runs(tmp_path: Path) -> None:
    path = os.fspath(tmp_path / "double.tar")
    relax.build(Double, "llvm").export_library(path)
    np.testing.assert_array_equal(_run(tvm.runtime.load_module(path)), X + X)


def test_jit_of_c_source_host_code_compiles_it_and_runs() -> None:
    executable = relax.build(Double, "c")
    np.testing.assert_array_equal(_run(executable.jit()), X + X)
