"""Deployed artefacts run on TVM's runtime alone: no compiler library in the process.

The artefacts are built once, by the build step, with the full TVM (artefact_builder.py and the
Relax VM tests' own vm_exported_module.so); this process has TVM_USE_RUNTIME_LIB=1 set before
`import tvm` (conftest.py). Each model runs through tvm.runtime.load_module and
tvm.runtime.vm.VirtualMachine, and its numbers are checked against numpy computed here.
The cuda variant runs the cuda artefacts where a GPU is, and otherwise skips with a reason
(fails in the GPU runner config); the fatbin check needs no GPU.
"""

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
import tvm
import tvm.runtime.vm
import tvm_ffi

from tvm_conformance import deploy, deviations, numerics
from tvm_conformance.observed import LoaderNotRegistered
from tvm_conformance.runfiles import rlocation
from tvm_conformance.testing import assert_on_device, compiles_for, requires_cuda

pytestmark = pytest.mark.usefixtures("runtime_only")

MODELS = ("mul_add", "mlp", "callback")
# Libraries a deployed process may map from TVM: tvm-ffi (with its testing library, which
# tvm_ffi loads itself), the runtime and the runtime's CUDA sidecar.
ALLOWED_TVM_LIBRARIES = {
    "libtvm_ffi.so",
    "libtvm_ffi_testing.so",
    "libtvm_runtime.so",
    "libtvm_runtime_cuda.so",
}


# The global that loads a cuda module from an artefact; the CUDA sidecar registers it.
CUDA_LOADER = "ffi.Module.load_from_bytes.cuda"
CUDA_SIDECAR = "libtvm_runtime_cuda.so"
# A fresh process: import tvm, never load the sidecar itself, load a cuda artefact.
_CHILD = """
import tvm, tvm_ffi
print("LOADER", tvm_ffi.get_global_func({loader!r}, allow_missing=True) is not None)
try:
    tvm.runtime.load_module({path!r})
except Exception as err:
    print("LOAD_ERROR", type(err).__name__, str(err).replace("\\n", " "))
else:
    print("LOADED")
"""


def _child_import(
    runtime_only: bool, artefact: str, debug_dir: Path, library: str = CUDA_SIDECAR
) -> tuple[str, bool]:
    """Run _CHILD with or without TVM_USE_RUNTIME_LIB=1: (its stdout, whether the dynamic
    loader was asked to open `library`, as LD_DEBUG=files records even a failed open)."""
    env = {k: v for k, v in os.environ.items() if k != "TVM_USE_RUNTIME_LIB"}
    if runtime_only:
        env["TVM_USE_RUNTIME_LIB"] = "1"
    log = debug_dir / ("runtime_only" if runtime_only else "full")
    env.update(LD_DEBUG="files", LD_DEBUG_OUTPUT=str(log))
    code = _CHILD.format(loader=CUDA_LOADER, path=artefact)
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    opened = any(
        f"{library} [0];  dynamically loaded" in p.read_text(errors="replace")
        for p in debug_dir.glob(log.name + ".*")
    )
    return proc.stdout, opened


def load_vm(model: str, target: str, dev: tvm.runtime.Device) -> tvm.runtime.vm.VirtualMachine:
    """The exported `model` for `target` in a VM on `dev`."""
    library = tvm.runtime.load_module(rlocation(deploy.artefact(model, target)))
    return tvm.runtime.vm.VirtualMachine(library, dev)


def mlp_reference(
    x: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor, w2: torch.Tensor, b2: torch.Tensor
) -> torch.Tensor:
    """The MLP written out, relu(x W1^T + b1) W2^T + b2 (numerics evaluates it in float64)."""
    return torch.relu(x @ w1.T + b1) @ w2.T + b2


def run_callback_model(target: str, dev: tvm.runtime.Device, x: np.ndarray) -> tuple:
    """Run the callback artefact with this process's Python global; (output, seen inputs)."""
    seen = []

    def scale_and_shift(a: tvm.runtime.Tensor, out: tvm.runtime.Tensor) -> None:
        value = a.numpy()
        seen.append(value.copy())
        out.copyfrom((value * 3.0 - 0.5).astype("float32"))

    tvm_ffi.register_global_func(deploy.CALLBACK_GLOBAL, scale_and_shift, override=True)
    vm = load_vm("callback", target, dev)
    out = vm["main"](tvm.runtime.tensor(x, dev))
    assert_on_device(out, dev)
    return out.numpy(), seen


def test_mul_add_matches_numpy(target: str, dev: tvm.runtime.Device) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3)).astype("float32")
    y = rng.standard_normal((2, 3)).astype("float32")

    out = load_vm("mul_add", target, dev)["main"](
        tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev)
    )

    assert out.device == dev
    # Two roundings in numpy, one where TVM contracts to an FMA: the rule, not equality.
    numerics.assert_close(out.numpy(), lambda a, b: a * b + 1.0, x, y)


def test_torch_mlp_matches_numpy(target: str, dev: tvm.runtime.Device) -> None:
    x = (
        np.random.default_rng(1)
        .standard_normal((deploy.MLP_BATCH, deploy.MLP_SHAPE[0]))
        .astype("float32")
    )

    # An imported ExportedProgram returns a tuple of its outputs: one here.
    (out,) = load_vm("mlp", target, dev)["main"](tvm.runtime.tensor(x, dev))

    assert_on_device(out, dev)
    assert out.shape == (deploy.MLP_BATCH, deploy.MLP_SHAPE[2])
    weights = deploy.mlp_weights()
    numerics.assert_close(
        out.numpy(),
        mlp_reference,
        x,
        *(weights[k] for k in ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")),
    )


def test_python_callback_of_deployed_process(target: str, dev: tvm.runtime.Device) -> None:
    x = np.array([0.0, 1.5, -2.0, 4.25], dtype="float32")

    out, seen = run_callback_model(target, dev, x)

    assert len(seen) == 1
    # Small binary fractions: every step is exact in float32.
    np.testing.assert_array_equal(seen[0], x + np.float32(1.0))
    np.testing.assert_array_equal(
        out, np.float32(2.0) * ((x + np.float32(1.0)) * np.float32(3.0) - np.float32(0.5))
    )


def test_callback_artefact_names_the_global(target: str) -> None:
    # The builder spells the global in TVMScript; it must be the one this process registers.
    with open(rlocation(deploy.artefact("callback", target)), "rb") as f:
        assert deploy.CALLBACK_GLOBAL.encode() in f.read()


def test_dlpack_in_and_out_with_torch(target: str, dev: tvm.runtime.Device) -> None:
    x_torch = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    y_torch = torch.full((2, 3), 0.5)
    x_host = tvm.runtime.from_dlpack(x_torch)
    # DLPack shares memory: a write through torch is seen by the TVM tensor.
    x_torch[0, 0] = 10.0
    assert x_host.numpy()[0, 0] == 10.0
    x, y = x_host.copyto(dev), tvm.runtime.from_dlpack(y_torch).copyto(dev)

    out = load_vm("mul_add", target, dev)["main"](x, y)
    assert_on_device([x, y, out], dev)
    out_torch = torch.from_dlpack(out.copyto(tvm.cpu()))

    # Halves of small integers: exact in float32, with or without an FMA.
    np.testing.assert_array_equal(
        out_torch.numpy(), x_torch.numpy() * np.float32(0.5) + np.float32(1.0)
    )


def test_compiler_library_never_loaded(target: str, dev: tvm.runtime.Device) -> None:
    rng = np.random.default_rng(2)
    load_vm("mul_add", target, dev)["main"](
        tvm.runtime.tensor(rng.standard_normal((2, 3)).astype("float32"), dev),
        tvm.runtime.tensor(rng.standard_normal((2, 3)).astype("float32"), dev),
    )
    load_vm("mlp", target, dev)["main"](
        tvm.runtime.tensor(np.zeros((deploy.MLP_BATCH, deploy.MLP_SHAPE[0]), "float32"), dev)
    )
    run_callback_model(target, dev, np.zeros(4, dtype="float32"))

    mapped = deploy.mapped_libraries()
    tvm_libraries = {name for name in mapped if name.startswith("libtvm")}
    assert deploy.compiler_libraries_mapped() == []
    assert {"libtvm_ffi.so", "libtvm_runtime.so"} <= tvm_libraries
    assert tvm_libraries <= ALLOWED_TVM_LIBRARIES, sorted(tvm_libraries - ALLOWED_TVM_LIBRARIES)


@compiles_for("cuda")
@pytest.mark.parametrize("model", MODELS)
def test_cuda_artefact_carries_device_code_for_each_arch(model: str) -> None:
    with open(rlocation(deploy.artefact(model, "cuda")), "rb") as f:
        data = f.read()

    images = deploy.fatbin_images(data)

    cubins = sorted(arch for kind, arch in images if kind == "cubin")
    ptx = sorted(arch for kind, arch in images if kind == "ptx")
    assert cubins == sorted(deploy.arch_number(a) for a in deploy.CUDA_ARCHS)
    # PTX of the oldest: a GPU newer than every cubin JIT-compiles it.
    assert ptx == [deploy.arch_number(deploy.CUDA_PTX_ARCH)]
    # Device code only: no CUDA source left to compile where the artefact is loaded.
    assert b"__global__" not in data


# The GPUs of common CI runners (compute capability) and how the artefacts run on each.
RUNNER_GPUS = {
    "Tesla T4": 75,
    "A100": 80,
    "A10G": 86,
    "L4": 89,
    "H100": 90,
    "B200": 100,
    "RTX PRO 6000 Blackwell (sm_120, no cubin here)": 120,
}


@compiles_for("cuda")
def test_cuda_artefact_architectures(record_property: Callable[[str, object], None]) -> None:
    # Lists every artefact's fatbin (kept in test.xml as properties) and checks that each GPU a
    # CI runner has gets its own cubin, and that a newer one gets the PTX.
    listing = {}
    for model in MODELS:
        path = rlocation(deploy.artefact(model, "cuda"))
        with open(path, "rb") as f:
            images = deploy.fatbin_images(f.read())
        listing[model] = deploy.describe_images(images)
        record_property(f"{model}_cuda.so", listing[model])
        print(f"{model}_cuda.so: {listing[model]}")
        assert listing[model] == ("cubin sm_75 sm_80 sm_86 sm_89 sm_90 sm_100; ptx compute_75"), (
            model
        )
        for gpu, capability in RUNNER_GPUS.items():
            how = deploy.runs_on(images, capability)
            expect = "ptx compute_75" if capability == 120 else f"cubin sm_{capability}"
            assert how.startswith(expect), (model, gpu, how)
        # An older GPU than every image (sm_70, Volta) is not covered: CUDA 13 dropped it.
        assert deploy.runs_on(images, 70) == ""
    assert len(set(listing.values())) == 1, listing


@compiles_for("cuda")
def test_cuda_artefact_architectures_match_cuobjdump(tmp_path: Path) -> None:
    # NVIDIA's own reader of fat binaries agrees with deploy.fatbin_images, where it is installed
    # (a CUDA toolkit's cuobjdump, or the nvidia-cuda-cuobjdump wheel's; nvcc's minimal install
    # on the build machines lacks it). It reads the fatbin, not the artefact: TVM keeps the
    # fatbin in its module blob, where cuobjdump finds "no device code".
    cuobjdump = shutil.which("cuobjdump")
    if cuobjdump is None:
        pytest.skip("cuobjdump is not on PATH (a CUDA toolkit without it): nothing to compare")
    for model in MODELS:
        with open(rlocation(deploy.artefact(model, "cuda")), "rb") as f:
            data = f.read()
        ours = deploy.fatbin_images(data)
        theirs: list[tuple[str, int]] = []
        for index, fatbin in enumerate(deploy.fatbins(data)):
            path = tmp_path / f"{model}_{index}.fatbin"
            path.write_bytes(fatbin)
            for option, kind in (("--list-elf", "cubin"), ("--list-ptx", "ptx")):
                listing = subprocess.run(
                    [cuobjdump, option, str(path)], capture_output=True, text=True, check=True
                ).stdout
                theirs += [(kind, int(a)) for a in re.findall(rf"\.sm_(\d+)\.{kind}\b", listing)]
        assert sorted(theirs) == sorted(ours), (model, theirs)


@compiles_for("cuda")
@deviations.xfail("deploy-runtime-cuda-loader-not-registered")
def test_runtime_alone_registers_its_cuda_loader(tmp_path: Path) -> None:
    # Needs no GPU: whether the runtime tries to open its CUDA sidecar does not depend on one.
    artefact = rlocation(deploy.artefact("mul_add", "cuda"))
    out, opened = _child_import(True, artefact, tmp_path)
    if opened or "LOADER True" in out:
        return  # the runtime registers (or tries to register) its CUDA loader by itself
    # The detector sees dynamic loads in this very mode: the runtime library itself.
    (tmp_path / "control").mkdir()
    _, runtime_seen = _child_import(True, artefact, tmp_path / "control", "libtvm_runtime.so")
    assert runtime_seen, "LD_DEBUG records no dynamic load of libtvm_runtime.so here"
    # And an attempt on the sidecar: TVM with its compiler opens it (where the compiler is
    # installed; a GPU-runner bundle ships the runtime alone).
    if (Path(tvm.__file__).parent / "lib" / "libtvm_compiler.so").is_file():
        _, full_opened = _child_import(False, artefact, tmp_path)
        assert full_opened, "LD_DEBUG shows no attempt to open the sidecar even with the compiler"
    assert "LOADER False" in out, out
    assert "LOAD_ERROR RuntimeError" in out and "loader of that name is not registered" in out, out
    raise LoaderNotRegistered(
        f"runtime-only import tvm never opened {CUDA_SIDECAR}; load_module: {out.strip()}"
    )


@requires_cuda
def test_loading_the_sidecar_registers_the_cuda_loader() -> None:
    # The workaround a deployed program uses (conftest.py loads the sidecar with ctypes).
    assert deploy.compiler_libraries_mapped() == []
    assert CUDA_SIDECAR in deploy.mapped_libraries()
    assert tvm_ffi.get_global_func(CUDA_LOADER, allow_missing=True) is not None
    assert tvm.cuda(0).exist
    dev = tvm.cuda(0)
    x = np.arange(6, dtype="float32").reshape(2, 3)
    out = load_vm("mul_add", "cuda", dev)["main"](
        tvm.runtime.tensor(x, dev), tvm.runtime.tensor(x, dev)
    )
    # Small integers: exact in float32, with or without an FMA.
    np.testing.assert_array_equal(out.numpy(), x * x + np.float32(1.0))
