"""The GPU-runner preflight (tvm_conformance.preflight) on faked machines.

Each case runs the preflight as a process, as ./bazelw and run.sh do, on a machine made of
scripts: a fake ``nvidia-smi`` (GPU name, compute capability, driver and its CUDA version) and
``ldconfig`` alone on PATH, a fake test interpreter that reports torch's build, a copy of this
TVM's real ``libtvm_runtime_cuda.so`` and a fatbin written here. Nothing in the module is
patched. One case uses the real interpreter and torch of this venv, whatever they are.
"""

import importlib.util
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import tvm_conformance

DRIVER_BANNER = """\
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI {driver}              Driver Version: {driver}      CUDA Version: {cuda}     |
+-----------------------------------------------------------------------------------------+
"""


def tvm_sidecar() -> Path:
    """This venv's libtvm_runtime_cuda.so (found without importing tvm)."""
    spec = importlib.util.find_spec("tvm")
    assert spec and spec.submodule_search_locations, "no tvm package in this venv"
    return Path(list(spec.submodule_search_locations)[0]) / "lib" / "libtvm_runtime_cuda.so"


def sidecar_cuda_major() -> str:
    """The CUDA major version the real sidecar's libcudart soname says (read from its bytes)."""
    found = re.search(rb"libcudart\.so\.(\d+)\x00", tvm_sidecar().read_bytes())
    assert found, "the wheel's libtvm_runtime_cuda.so names no libcudart"
    return found.group(1).decode()


def fatbin(images: list[tuple[int, int]]) -> bytes:
    """A CUDA fat binary: (kind, arch) images, kind 1 PTX / 2 cubin, 64-byte image headers."""
    body = b""
    for kind, arch in images:
        payload = bytes(48)
        header = bytearray(64)
        struct.pack_into("<HHIQ", header, 0, kind, 0x0101, 64, len(payload))
        struct.pack_into("<I", header, 28, arch)
        body += bytes(header) + payload
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


class Machine:
    """A faked machine: scripts on PATH, a fake interpreter, TVM's lib dir, an artefact."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = root / "bin"
        self.bin.mkdir()
        self.tvm_lib = root / "tvm_lib"
        self.tvm_lib.mkdir()
        shutil.copy(tvm_sidecar(), self.tvm_lib / "libtvm_runtime_cuda.so")
        self.cudart = f"libcudart.so.{sidecar_cuda_major()}"
        self.artefact = root / "model_cuda.so"
        # A cubin for sm_75 and sm_90 and PTX of sm_75, inside other bytes (as in a .so).
        self.artefact.write_bytes(b"\x7fELF" + bytes(60) + fatbin([(2, 75), (2, 90), (1, 75)]))
        self.python = root / "python"
        self.ldconfig(found=True)
        self.torch(cuda="13.0")

    def script(self, name: str, body: str) -> None:
        path = self.bin / name if name != "python" else self.python
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(0o755)

    def nvidia_smi(self, rows: list[str], driver: str = "580.82.07", cuda: str = "13.0") -> None:
        """nvidia-smi listing `rows` ("index, name, compute_cap") with this driver."""
        # Shell builtins only: PATH holds nothing but the fakes.
        query = "".join(f"echo '{row}, {driver}'\n" for row in rows)
        banner = DRIVER_BANNER.format(driver=driver, cuda=cuda).splitlines()
        banner_echo = "".join(f"echo '{line}'\n" for line in banner)
        self.script(
            "nvidia-smi",
            f'case "$1" in\n  --query-gpu=*)\n{query}    ;;\n  *)\n{banner_echo}    ;;\nesac\n',
        )

    def ldconfig(self, found: bool) -> None:
        line = f"\t{self.cudart} (libc6,x86-64) => /opt/cuda/lib/{self.cudart}" if found else ""
        self.script("ldconfig", f"echo '1 libs found in cache'\necho '{line}'\n")

    def torch(self, cuda: str | None, version: str = "2.13.0") -> None:
        """The fake test interpreter: torch `version` built with CUDA `cuda` (None: CPU)."""
        probe = {
            "python": "3.12.3",
            "executable": str(self.python),
            "tvm_dir": None,
            "torch": version if cuda else version + "+cpu",
            "torch_cuda": cuda,
            "torch_cuda_available": False,
            "torch_devices": 0,
            "torch_cudart": [],
        }
        self.script("python", f"echo 'PREFLIGHT_PROBE {json.dumps(probe)}'\n")

    def preflight(self, *args: str, env: dict[str, str] | None = None) -> tuple[int, list[str]]:
        """Run the preflight (full stage against this machine): exit status, MISSING lines."""
        run_env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH")
        }
        run_env["PATH"] = str(self.bin)
        # The child imports the package from where this process did: under plain pytest that
        # is pyproject's `pythonpath`, which reaches sys.path but not the environment.
        package_root = str(Path(tvm_conformance.__file__).resolve().parents[1])
        run_env["PYTHONPATH"] = os.pathsep.join(
            p for p in (package_root, os.environ.get("PYTHONPATH", "")) if p
        )
        run_env.update(env or {})
        proc = subprocess.run(
            [sys.executable, "-m", "tvm_conformance.preflight", *args],
            capture_output=True,
            text=True,
            env=run_env,
            timeout=120,
        )
        self.output = proc.stdout + proc.stderr
        missing = [x.split("MISSING: ", 1)[1] for x in proc.stdout.splitlines() if "MISSING: " in x]
        return proc.returncode, missing

    def full(self, *args: str, env: dict[str, str] | None = None) -> tuple[int, list[str]]:
        return self.preflight(
            "--python",
            str(self.python),
            "--tvm-lib",
            str(self.tvm_lib),
            "--artefact",
            str(self.artefact),
            *args,
            env=env,
        )


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return Machine(tmp_path)


def test_no_driver_is_one_line_before_anything_else(machine: Machine) -> None:
    rc, missing = machine.preflight("--stage", "host")

    assert rc == 1
    assert missing == ["no GPU: nvidia-smi is not on PATH (no NVIDIA driver on this machine)"]


def test_no_gpu_and_cpu_torch_each_get_their_line(machine: Machine) -> None:
    machine.torch(cuda=None)

    rc, missing = machine.full()

    assert rc == 1
    assert len(missing) == 2, machine.output
    assert missing[0].startswith("no GPU: nvidia-smi is not on PATH")
    assert missing[1].startswith("torch: torch 2.13.0+cpu is a CPU-only build")
    assert "Torch not compiled" not in machine.output


def test_every_prerequisite_present_passes_and_says_the_facts(
    machine: Machine, tmp_path: Path
) -> None:
    machine.nvidia_smi(["0, NVIDIA H100 80GB HBM3, 9.0"])

    rc, missing = machine.full("--json", str(tmp_path / "facts.json"))

    assert (rc, missing) == (0, []), machine.output
    assert "preflight: gpu: NVIDIA H100 80GB HBM3 (sm_90)" in machine.output
    assert "preflight: gpu_driver: 580.82.07 (CUDA 13.0)" in machine.output
    facts = json.loads((tmp_path / "facts.json").read_text())["facts"]
    assert facts["tvm_runtime_cuda"] == f"{sidecar_cuda_major()}.0"
    assert facts["tvm_cudart_found"] == f"/opt/cuda/lib/{machine.cudart}"
    assert facts["torch_cuda"] == "13.0"
    assert facts["artefacts"]["model_cuda.so on GPU 0"] == "cubin sm_90"


def test_old_driver_is_named_against_tvm_and_torch(machine: Machine) -> None:
    # A T4 runner with a CUDA 12.2 driver (535), this TVM (its libcudart) and a CUDA 13 torch.
    machine.nvidia_smi(["0, Tesla T4, 7.5"], driver="535.104.05", cuda="12.2")

    rc, missing = machine.full()

    assert rc == 1
    need = f"{sidecar_cuda_major()}.0"
    expected = []
    if int(sidecar_cuda_major()) > 12:
        expected.append(
            f"driver: driver 535.104.05 supports CUDA 12.2; TVM's libtvm_runtime_cuda.so needs "
            f"CUDA {need} (driver 580 or newer)"
        )
    expected.append(
        "driver: driver 535.104.05 supports CUDA 12.2; torch 2.13.0 needs CUDA 13.0 "
        "(driver 580 or newer)"
    )
    assert missing == expected
    assert "artefact model_cuda.so on GPU 0: cubin sm_75" in machine.output


def test_gpu_without_an_image_is_named(machine: Machine) -> None:
    # A V100 (sm_70) is older than every image; an sm_120 GPU JIT-compiles the PTX.
    machine.nvidia_smi(["0, Tesla V100-SXM2-16GB, 7.0", "1, NVIDIA RTX PRO 6000, 12.0"])

    rc, missing = machine.full()

    assert rc == 1
    assert missing == [
        "artefacts: model_cuda.so has no image for GPU 0 (Tesla V100-SXM2-16GB, sm_70): it "
        "carries cubin sm_75 sm_90; ptx compute_75"
    ]
    assert "artefact model_cuda.so on GPU 1: ptx compute_75 (JIT-compiled" in machine.output


def test_hidden_devices_count_as_no_gpu(machine: Machine) -> None:
    machine.nvidia_smi(["0, NVIDIA L4, 8.9"])

    rc, missing = machine.full(env={"CUDA_VISIBLE_DEVICES": ""})

    assert rc == 1
    assert missing == ["no GPU: CUDA_VISIBLE_DEVICES='' hides every GPU"]


def test_failing_nvidia_smi_says_why(machine: Machine) -> None:
    machine.script(
        "nvidia-smi",
        'echo "NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver" >&2\n'
        "exit 9\n",
    )

    rc, missing = machine.preflight("--stage", "host")

    assert rc == 1
    assert missing == [
        "no GPU: nvidia-smi failed: NVIDIA-SMI has failed because it couldn't communicate "
        "with the NVIDIA driver"
    ]


def test_missing_cuda_runtime_library_is_named(machine: Machine) -> None:
    machine.nvidia_smi(["0, NVIDIA A10G, 8.6"])
    machine.ldconfig(found=False)

    rc, missing = machine.full()

    assert rc == 1
    assert len(missing) == 1 and missing[0].startswith(f"CUDA runtime: {machine.cudart} (CUDA ")
    # LD_LIBRARY_PATH is where the loader looks too.
    libdir = machine.root / "cuda_lib"
    libdir.mkdir()
    (libdir / machine.cudart).write_bytes(b"")
    assert machine.full(env={"LD_LIBRARY_PATH": str(libdir)}) == (0, [])


def test_warn_only_prints_and_exits_zero(machine: Machine) -> None:
    rc, missing = machine.preflight("--stage", "host", "--warn-only")

    assert rc == 0
    assert missing == ["no GPU: nvidia-smi is not on PATH (no NVIDIA driver on this machine)"]


def test_this_venvs_torch_is_judged_by_its_build(machine: Machine) -> None:
    # The real interpreter of this test and its torch: a CPU build must get the torch line,
    # a CUDA build must not.
    import torch

    machine.nvidia_smi(["0, NVIDIA H100 80GB HBM3, 9.0"])

    rc, missing = machine.preflight("--python", sys.executable, "--tvm-lib", str(machine.tvm_lib))

    torch_lines = [x for x in missing if x.startswith("torch:")]
    if torch.version.cuda is None:
        assert rc == 1
        assert torch_lines == [
            f"torch: torch {torch.__version__} is a CPU-only build (torch.version.cuda is None): "
            "the cuda cases need a CUDA build of torch (the lane's GPU lock, --config=cuda_gpu, "
            "installs torch==2.13.0 from PyPI)"
        ]
    else:
        assert torch_lines == []


def test_attach_puts_the_facts_into_the_run_archive(machine: Machine, tmp_path: Path) -> None:
    machine.nvidia_smi(["0, Tesla T4, 7.5"])
    machine.full("--json", str(tmp_path / "facts.json"))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "run.json").write_text(json.dumps({"machine": {"host": "h", "gpu": "Tesla T4"}}))

    rc, _ = machine.preflight("--json", str(tmp_path / "facts.json"), "--attach", str(run_dir))

    assert rc == 0
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["preflight"]["missing"] == []
    assert meta["preflight"]["facts"]["gpus"][0]["compute_capability"] == "7.5"
    assert meta["machine"]["host"] == "h"
    assert meta["machine"]["gpu"] == "Tesla T4 (sm_75)"
    assert meta["machine"]["torch_cuda"] == "2.13.0 (CUDA 13.0)"
