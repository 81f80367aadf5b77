"""The deployment contract: artefacts built once by the compiler, run by the runtime alone.

Shared by the build step (python/tests/deploy/artefact_builder.py, with the full TVM) and the
runtime-only tests (python/tests/deploy/, ``TVM_USE_RUNTIME_LIB=1``). Importing this module
imports numpy only: a deployed process must not pull in TVM's compiler through it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import struct
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

# The one list of CUDA architectures the cuda artefacts carry (one cubin each, in one fatbin),
# oldest first: the GPUs of common CI runners. sm_75 Tesla T4 (GitHub's hosted GPU runners),
# sm_80 A100, sm_86 A10G / RTX 30xx, sm_89 L4 / RTX 40xx, sm_90 H100 / H200, sm_100 B200.
# sm_75 is the oldest CUDA 13's nvcc compiles for; sm_100 needs nvcc 12.8 or newer.
CUDA_ARCHS: tuple[str, ...] = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100")
# The PTX they also carry: of the oldest, so that any newer GPU (one without its own cubin here,
# say sm_120) JIT-compiles it when the artefact loads.
CUDA_PTX_ARCH: str = CUDA_ARCHS[0]

# The Python global that the callback artefact calls with R.call_dps_packed; the runtime-only
# process registers it.
CALLBACK_GLOBAL = "testing.deploy_scale_and_shift"

# MLP shapes (in -> hidden -> out) of the model exported from PyTorch.
MLP_SHAPE: tuple[int, int, int] = (8, 16, 4)
MLP_BATCH = 3

# Libraries of TVM's compiler, by file name prefix (0.27: libtvm_compiler; before: libtvm).
COMPILER_LIBRARIES: tuple[str, ...] = ("libtvm_compiler", "libtvm.so")


@contextlib.contextmanager
def nvcc_tmpdir() -> Iterator[str]:
    """Run nvcc inside with a TMPDIR of its own (a fresh directory, removed afterwards).

    nvcc names its intermediate files after its process id (``$TMPDIR/tmpxft_<pid>_...``, /tmp
    when TMPDIR is unset). Bazel's linux-sandbox starts each action in a new PID namespace on the
    host's /tmp, so two actions running nvcc at once can have the same pid and overwrite each
    other's files (nvcc picks another name only for files already there). A CI run's cuda
    artefact failed inside nvcc, its message cut, and this race is the cause found. The
    directory's name is random, so the collision cannot happen in it.
    """
    previous = os.environ.get("TMPDIR")
    with tempfile.TemporaryDirectory(prefix="nvcc-") as scratch:
        os.environ["TMPDIR"] = scratch
        try:
            yield scratch
        finally:
            if previous is None:
                del os.environ["TMPDIR"]
            else:
                os.environ["TMPDIR"] = previous


def artefact(model: str, target: str) -> str:
    """Workspace-relative path of the artefact of ``model`` built for ``target``.

    The llvm ``mul_add`` model is the Relax VM tests' own artefact (built once, shared).
    """
    if model == "mul_add" and target == "llvm":
        return "python/tests/relax/vm_exported_module.so"
    return f"python/tests/deploy/{model}_{target}.so"


def mlp_weights() -> dict[str, np.ndarray]:
    """Deterministic MLP weights (PyTorch Linear layout: weight is [out, in]).

    A closed form, so the build step and the tests agree without sharing a random state.
    """
    n_in, n_hidden, n_out = MLP_SHAPE

    def ramp(shape: tuple[int, ...], scale: float, phase: float) -> np.ndarray:
        count = int(np.prod(shape))
        return (
            (np.sin(np.arange(count, dtype=np.float64) * 0.37 + phase) * scale)
            .reshape(shape)
            .astype("float32")
        )

    return {
        "fc1.weight": ramp((n_hidden, n_in), 0.5, 0.1),
        "fc1.bias": ramp((n_hidden,), 0.2, 1.3),
        "fc2.weight": ramp((n_out, n_hidden), 0.4, 2.2),
        "fc2.bias": ramp((n_out,), 0.1, 0.7),
    }


def mapped_paths() -> set[str]:
    """Paths of the shared libraries mapped into this process (/proc/self/maps)."""
    paths = set()
    with open("/proc/self/maps", encoding="utf-8") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and ".so" in os.path.basename(fields[5]):
                paths.add(fields[5])
    return paths


def mapped_libraries() -> set[str]:
    """File names of the shared libraries mapped into this process."""
    return {os.path.basename(path) for path in mapped_paths()}


def compiler_libraries_mapped() -> list[str]:
    """The TVM compiler libraries mapped into this process (empty in a deployed process)."""
    return sorted(
        name for name in mapped_libraries() if any(name.startswith(p) for p in COMPILER_LIBRARIES)
    )


def load_cuda_runtime() -> str:
    """Load TVM's CUDA runtime sidecar (``libtvm_runtime_cuda.so``) into this process.

    ``import tvm`` loads it only when the compiler is loaded too (TVM 0.27 autoloads device
    backends outside runtime-only mode), so a runtime-only process loads it itself. Returns ""
    when loaded (or when this TVM has CUDA inside libtvm_runtime), else why it cannot load
    (no such file, or libcuda.so.1 missing: no GPU driver).
    """
    import tvm

    runtime = next(
        (Path(p) for p in mapped_paths() if os.path.basename(p) == "libtvm_runtime.so"), None
    )
    if runtime is None:
        return "libtvm_runtime.so is not loaded (import tvm first)"
    sidecar = runtime.parent / "libtvm_runtime_cuda.so"
    if not sidecar.exists():
        return "" if tvm.runtime.enabled("cuda") else f"no {sidecar.name} beside {runtime.name}"
    try:
        ctypes.CDLL(str(sidecar), mode=ctypes.RTLD_LOCAL)
    except OSError as err:
        return f"{sidecar.name} does not load: {err}"
    return ""


# A CUDA fat binary: a 16-byte header (magic, version, header size, payload size), then images,
# each with its own header: kind (1 PTX, 2 cubin) at 0, header size at 4, payload size at 8,
# architecture (80 for sm_80) at 28. The layout nvcc, cuobjdump and the driver share.
_FATBIN_MAGIC = 0xBA55ED50
_FATBIN_KINDS = {1: "ptx", 2: "cubin"}


def arch_number(arch: str) -> int:
    """The number of an architecture name: 75 for ``sm_75`` or ``compute_75``."""
    return int(arch.rsplit("_", 1)[1])


def fatbins(data: bytes) -> list[bytes]:
    """Every CUDA fat binary inside ``data`` (TVM keeps it in its module blob, not in an ELF
    section, so cuobjdump reads these, not the artefact).

    Raises ValueError when ``data`` holds no fat binary, or one whose sizes run past its end.
    """
    found = []
    start = data.find(struct.pack("<I", _FATBIN_MAGIC))
    if start < 0:
        raise ValueError("no CUDA fat binary (magic 0xBA55ED50) in the data")
    while start >= 0:
        _, _, header_size, payload_size = struct.unpack_from("<IHHQ", data, start)
        end = start + header_size + payload_size
        if end > len(data):
            raise ValueError(f"fat binary at {start} runs past the end of the data")
        found.append(data[start:end])
        start = data.find(struct.pack("<I", _FATBIN_MAGIC), end)
    return found


def fatbin_images(data: bytes) -> list[tuple[str, int]]:
    """(kind, architecture) of every image of every CUDA fat binary inside ``data``.

    Raises ValueError when ``data`` holds no fat binary, or one whose sizes run past its end.
    """
    images: list[tuple[str, int]] = []
    for fatbin in fatbins(data):
        (header_size,) = struct.unpack_from("<H", fatbin, 6)
        pos = header_size
        while pos < len(fatbin):
            kind, _, image_header, image_size = struct.unpack_from("<HHIQ", fatbin, pos)
            (arch,) = struct.unpack_from("<I", fatbin, pos + 28)
            images.append((_FATBIN_KINDS.get(kind, f"kind{kind}"), arch))
            pos += image_header + image_size
    return images


def describe_images(images: list[tuple[str, int]]) -> str:
    """One line naming the images: ``cubin sm_75 sm_80 ...; ptx compute_75``."""
    cubins = " ".join(f"sm_{a}" for a in sorted({a for k, a in images if k == "cubin"}))
    ptx = " ".join(f"compute_{a}" for a in sorted({a for k, a in images if k == "ptx"}))
    return f"cubin {cubins or '(none)'}; ptx {ptx or '(none)'}"


def runs_on(images: list[tuple[str, int]], capability: int) -> str:
    """How a GPU of compute ``capability`` (86 for 8.6) runs these images; "" when it cannot.

    A cubin runs on GPUs of its major version and the same or a newer minor one (sm_80 on 8.0,
    8.6, 8.9); PTX is JIT-compiled by the driver on its own architecture or any newer one.
    """
    cubins = sorted(
        (a for k, a in images if k == "cubin" and a // 10 == capability // 10 and a <= capability),
        reverse=True,
    )
    if cubins:
        return f"cubin sm_{cubins[0]}"
    ptx = sorted((a for k, a in images if k == "ptx" and a <= capability), reverse=True)
    if ptx:
        return f"ptx compute_{ptx[0]} (JIT-compiled by the driver at load)"
    return ""
