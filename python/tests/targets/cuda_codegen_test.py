"""CUDA without a GPU: TVM generates, compiles and exports CUDA code; only execution needs one.

Codegen cases run on any machine; execution cases skip with a reason where no CUDA device
exists. Built as the `_cuda` variant, which exists under --config=cuda only.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
import tvm
from tvm import relax, te
from tvm.script import relax as R

from tvm_conformance import deploy, numerics
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


# TVM's CUDA preamble includes two libcu++ headers under NVRTC. The CUDA wheels a GPU runner's
# torch brings carry NVRTC but no CUDA headers (no CCCL), so NVRTC gets these stand-ins: the
# fixed-width types, and the traits the preamble names (declared only where the kernels here
# use none, so a kernel that did would fail to compile rather than get a wrong answer).
_NVRTC_HEADERS = {
    "cuda/std/cstdint": """#pragma once
namespace cuda { namespace std {
typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long long int64_t;
typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
} }
""",
    "cuda/std/type_traits": """#pragma once
namespace cuda { namespace std {
template <class T, T v> struct integral_constant { static constexpr T value = v; };
template <class A, class B> struct is_same : integral_constant<bool, false> {};
template <class A> struct is_same<A, A> : integral_constant<bool, true> {};
template <class A, class B> constexpr bool is_same_v = is_same<A, B>::value;
template <class T> struct is_integral;
template <class T> struct is_signed;
template <class T> struct is_unsigned;
template <class T> struct is_floating_point;
template <bool B, class T = void> struct enable_if {};
template <class T> struct enable_if<true, T> { typedef T type; };
template <bool B, class T, class F> struct conditional { typedef T type; };
template <class T, class F> struct conditional<false, T, F> { typedef F type; };
} }
""",
}


def nvrtc_library() -> str | None:
    """libnvrtc of the interpreter's CUDA wheels (nvidia-cuda-nvrtc, which CUDA torch requires),
    else the system's; None where neither is."""
    import ctypes.util
    import sys

    for entry in sys.path:
        for lib in ("nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"):
            found = sorted(Path(entry, lib).glob("libnvrtc.so.*")) if entry else []
            if found:
                return str(found[0])
    return ctypes.util.find_library("nvrtc")


def nvrtc_ptx(source: str, arch: str, library: str) -> bytes:
    """PTX of `source` for `arch` (sm_75) by NVRTC through its C API (no cuda-python)."""
    import ctypes

    # NVRTC opens its builtins library by name: load the one beside it first.
    for builtins in sorted(Path(library).parent.glob("libnvrtc-builtins.so.*")):
        ctypes.CDLL(str(builtins))
    lib = ctypes.CDLL(library)
    prog = ctypes.c_void_p()
    names = list(_NVRTC_HEADERS)
    texts = (ctypes.c_char_p * len(names))(*(_NVRTC_HEADERS[n].encode() for n in names))
    includes = (ctypes.c_char_p * len(names))(*(n.encode() for n in names))
    status = lib.nvrtcCreateProgram(
        ctypes.byref(prog), source.encode(), b"kernel.cu", len(names), texts, includes
    )
    assert status == 0, f"nvrtcCreateProgram: status {status}"
    options = (ctypes.c_char_p * 1)(f"--gpu-architecture=compute_{arch[3:]}".encode())
    status = lib.nvrtcCompileProgram(prog, 1, options)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    assert status == 0, f"NVRTC did not compile the kernel: {log.value.decode(errors='replace')}"
    lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetPTX(prog, ptx)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return ptx.raw.rstrip(b"\0")


def test_generated_kernel_source_compiles_with_nvcc(kernel: tvm.runtime.Executable) -> None:
    # nvcc where a CUDA toolkit is (the build machines); a GPU runner needs none: there NVIDIA's
    # runtime compiler from its CUDA wheels compiles the same source.
    from tvm.support import nvcc

    (cuda,) = cuda_modules(kernel.mod)
    library = nvrtc_library()
    if shutil.which("nvcc") is not None:
        with tvm.target.Target(CUDA), deploy.nvcc_tmpdir():
            ptx = bytes(
                nvcc.compile_cuda(
                    cuda.inspect_source(), target_format="ptx", arch="sm_75", compiler="nvcc"
                )
            )
    elif library is not None:
        ptx = nvrtc_ptx(cuda.inspect_source(), "sm_75", library)
    else:
        pytest.fail("neither nvcc (a CUDA toolkit) nor libnvrtc (CUDA torch's wheels) is here")
    assert b".target sm_75" in ptx
    assert b".entry scale2_kernel(" in ptx


def test_nvcc_writes_its_intermediate_files_in_a_directory_of_its_own(tmp_path: Path) -> None:
    # The kit's nvcc calls (this file's, the cuda artefacts') run inside deploy.nvcc_tmpdir:
    # nvcc names its files after its pid, which repeats across Bazel's sandboxed actions.
    # nvcc's dry run prints the files it would write.
    if shutil.which("nvcc") is None:
        pytest.skip("no nvcc here (a CUDA toolkit's compiler): nothing of the kit runs it")
    source = tmp_path / "kernel.cu"
    source.write_text("__global__ void kernel(float* x) { x[0] = 1.0f; }\n")
    before = os.environ.get("TMPDIR")
    command = ["nvcc", "-dryrun", "--ptx", "-arch", "sm_75", str(source)]
    with deploy.nvcc_tmpdir() as scratch:
        plan = subprocess.run(command + ["-o", str(tmp_path / "kernel.ptx")], capture_output=True)
    assert plan.returncode == 0, plan.stderr.decode(errors="replace")
    # Paths only: cicc also gets a bare tmpxft_ name to write into the code it generates.
    printed = plan.stdout.decode() + plan.stderr.decode()
    files = set(re.findall(r"/[^\s\"']*tmpxft_[^\s\"']+", printed))
    assert files, "nvcc -dryrun named no intermediate (tmpxft_) file"
    assert {f for f in files if not f.startswith(scratch + os.sep)} == set()
    assert not os.path.exists(scratch), "the directory outlived the block"
    assert os.environ.get("TMPDIR") == before


def test_generated_kernel_source_compiles_with_nvrtc(kernel: tvm.runtime.Executable) -> None:
    # The runner's path where it exists (a GPU runner's CUDA torch); skips elsewhere, saying so.
    library = nvrtc_library()
    if library is None:
        pytest.skip("no libnvrtc here (CUDA torch's nvidia-cuda-nvrtc wheel, or a CUDA toolkit)")
    (cuda,) = cuda_modules(kernel.mod)
    ptx = nvrtc_ptx(cuda.inspect_source(), "sm_75", library)
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


# In a child process whose TVM loads no device backend (TVM_DEVICE_BACKEND_AUTOLOAD=0, TVM's
# own switch): there the cuda runtime is not loaded, on a machine with a GPU as without one.
_LOAD_WITHOUT_CUDA_RUNTIME = """
import json, sys, tvm
enabled = bool(tvm.runtime.enabled("cuda"))
try:
    tvm.runtime.load_module(PATH)
    error = None
except Exception as err:
    error = [type(err).__name__, str(err)]
print(json.dumps({"enabled": enabled, "error": error}))
"""


def test_exported_library_without_cuda_runtime_fails_to_load_naming_cuda(
    kernel: tvm.runtime.Executable, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from tvm_conformance import crash_isolation

    path = tmp_path / "kernel.so"
    kernel.export_library(str(path))
    monkeypatch.setenv("TVM_DEVICE_BACKEND_AUTOLOAD", "0")
    child = crash_isolation.run_isolated(
        f"PATH = {str(path)!r}\n" + _LOAD_WITHOUT_CUDA_RUNTIME, timeout=120
    )
    assert child.returncode == 0, child.stderr
    seen = json.loads(child.stdout.strip().splitlines()[-1])
    assert seen["enabled"] is False, "the child's TVM has the cuda runtime: nothing to check"
    assert seen["error"] is not None, "the library loaded without the cuda runtime"
    kind, message = seen["error"]
    assert kind == "RuntimeError"
    assert re.search(r"ffi\.Module\.load_from_bytes\.cuda", message), message


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
