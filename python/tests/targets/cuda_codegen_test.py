"""CUDA without a GPU: TVM generates, compiles and exports CUDA code; only execution needs one.

Codegen cases run on any machine; execution cases skip with a reason where no CUDA device
exists. Built as the `_cuda` variant, which exists under --config=cuda only.
"""

import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
import tvm
from tvm import relax, te
from tvm.script import relax as R

from tvm_conformance import numerics
from tvm_conformance.testing import (
    assert_on_device,
    compiles_for,
    parametrize_targets,
    requires_cuda,
)

# Codegen cases take no target but belong to the cuda variant (--config=cuda).
pytestmark = compiles_for("cuda")

# A fixed architecture: no "Unable to detect CUDA version" fallback, same code everywhere.
CUDA = {"kind": "cuda", "arch": "sm_75"}
N = 1024
THREADS = 128


def scale2_module() -> tvm.IRModule:
    """B = A * 2 over N floats, split into blocks of THREADS threads."""
    a = te.placeholder((N,), name="A", dtype="float32")
    b = te.compute((N,), lambda i: a[i] * 2.0, name="B")
    func = te.create_prim_func([a, b]).with_attr("global_symbol", "scale2")
    sch = tvm.s_tir.Schedule(tvm.IRModule({"scale2": func}))
    (loop,) = sch.get_loops(sch.get_sblock("B", func_name="scale2"))
    block_x, thread_x = sch.split(loop, factors=[None, THREADS])
    sch.bind(block_x, "blockIdx.x")
    sch.bind(thread_x, "threadIdx.x")
    return sch.mod


@tvm.script.ir_module
class MatmulRelu:
    @R.function
    def main(x: R.Tensor((4, 8), "float32"), w: R.Tensor((8, 16), "float32")) -> R.Tensor(
        (4, 16), "float32"
    ):
        with R.dataflow():
            y = R.matmul(x, w)
            z = R.nn.relu(y)
            R.output(z)
        return z


@pytest.fixture(scope="module")
def kernel() -> tvm.runtime.Executable:
    return tvm.compile(scale2_module(), target=tvm.target.Target(CUDA))


@pytest.fixture(scope="module")
def model() -> relax.VMExecutable:
    return tvm.compile(MatmulRelu, target=tvm.target.Target(CUDA))


def cuda_modules(module: tvm.runtime.Module) -> list[tvm.runtime.Module]:
    found = [module] if module.kind == "cuda" else []
    for imported in module.imports:
        found += cuda_modules(imported)
    return found


def kernel_names(source: str) -> list[str]:
    return re.findall(r'extern "C" __global__ void __launch_bounds__\(\d+\) (\w+)\(', source)


def test_scheduled_kernel_generates_cuda_source(kernel: tvm.runtime.Executable) -> None:
    (cuda,) = cuda_modules(kernel.mod)
    source = cuda.inspect_source()
    assert kernel.mod.kind == "llvm"  # host side; the kernel is an imported cuda module
    assert kernel_names(source) == ["scale2_kernel", "scale2_kernel"]  # declaration, definition
    assert f"__launch_bounds__({THREADS}) scale2_kernel(float* __restrict__ A_ptr" in source
    assert "blockIdx.x" in source and "threadIdx.x" in source


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
def test_generated_kernel_source_compiles_with_nvcc(kernel: tvm.runtime.Executable) -> None:
    from tvm.support import nvcc

    (cuda,) = cuda_modules(kernel.mod)
    with tvm.target.Target(CUDA):
        ptx = bytes(
            nvcc.compile_cuda(
                cuda.inspect_source(), target_format="ptx", arch="sm_75", compiler="nvcc"
            )
        )
    assert b".target sm_75" in ptx
    assert b".entry scale2_kernel(" in ptx


def test_relax_model_generates_fused_cuda_kernel(model: relax.VMExecutable) -> None:
    (cuda,) = cuda_modules(model.mod)
    assert model.mod.kind == "relax.VMExecutable"
    assert set(kernel_names(cuda.inspect_source())) == {"fused_matmul_relu_kernel"}
    assert "call  fused_matmul_relu in:" in model.as_text()


@pytest.mark.parametrize("artifact", ["kernel", "model"])
def test_export_library_writes_a_shared_object_with_the_kernels(
    artifact: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    executable = request.getfixturevalue(artifact)
    path = tmp_path / f"{artifact}.so"
    executable.export_library(str(path))
    data = path.read_bytes()
    assert data[:4] == b"\x7fELF"
    name = {"kernel": b"scale2_kernel", "model": b"fused_matmul_relu_kernel"}[artifact]
    assert name in data


def test_exported_library_without_cuda_runtime_fails_to_load_naming_cuda(
    kernel: tvm.runtime.Executable, tmp_path: Path
) -> None:
    if tvm.runtime.enabled("cuda"):
        pytest.skip("this TVM has the cuda runtime: the library loads")
    path = tmp_path / "kernel.so"
    kernel.export_library(str(path))
    with pytest.raises(RuntimeError, match=r"ffi\.Module\.load_from_bytes\.cuda"):
        tvm.runtime.load_module(str(path))


@requires_cuda
def test_scheduled_kernel_runs_on_cuda(kernel: tvm.runtime.Executable) -> None:
    dev = tvm.cuda(0)
    a = np.arange(N, dtype="float32")
    a_dev = tvm.runtime.tensor(a, dev)
    b_dev = tvm.runtime.tensor(np.zeros(N, dtype="float32"), dev)
    kernel["scale2"](a_dev, b_dev)
    assert_on_device([a_dev, b_dev], dev)
    np.testing.assert_array_equal(b_dev.numpy(), a + a)


@parametrize_targets("cuda")
def test_relax_model_runs_on_cuda(model: relax.VMExecutable, target: str, dev) -> None:
    x = np.linspace(-1.0, 1.0, 32, dtype="float32").reshape(4, 8)
    w = np.linspace(1.0, -1.0, 128, dtype="float32").reshape(8, 16)
    vm = relax.VirtualMachine(model, dev)
    out = vm["main"](tvm.runtime.tensor(x, dev), tvm.runtime.tensor(w, dev))
    assert_on_device(out, dev)
    numerics.assert_close(out.numpy(), lambda a, b: torch.relu(a @ b), x, w)
