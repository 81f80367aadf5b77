"""Records what a lane tested (TVM, tvm-ffi, Python, torch, OS, CPU, GPU) for the report.

Runs in every lane as part of `//...`. It asserts that the TVM it imports is the one the lane's
venv installed (so the report's header cannot describe another TVM), then records the facts as
JUnit testsuite properties, which //tools/report reads from the run archive.
"""

import importlib.metadata
import json
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pytest
import tvm
import tvm_ffi

# Written by the venv rule (third_party/python): lane name, pinned packages, and for a user's
# own wheel its file name and sha256.
VENV_INFO = Path(sys.prefix) / "tvm_conformance_venv.json"

RecordProperty = Callable[[str, object], None]


def _venv_info() -> dict:
    if not VENV_INFO.is_file():
        return {}
    return json.loads(VENV_INFO.read_text(encoding="utf-8"))


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()} ({os.cpu_count()} cores)"
    except OSError:
        pass
    return f"{platform.processor() or platform.machine()} ({os.cpu_count()} cores)"


def _gpu() -> tuple[str, str]:
    """(GPU names, driver version) from nvidia-smi, or ("none", reason)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return "none", "nvidia-smi not found"
    query = [smi, "--query-gpu=name,driver_version", "--format=csv,noheader"]
    try:
        out = subprocess.run(query, capture_output=True, text=True, timeout=30, check=True).stdout
    except (subprocess.SubprocessError, OSError) as err:
        return "none", f"nvidia-smi failed: {err}"
    rows = [line.split(",") for line in out.strip().splitlines() if line.strip()]
    if not rows:
        return "none", "nvidia-smi lists no GPU"
    return "; ".join(r[0].strip() for r in rows), rows[0][-1].strip()


def test_imported_tvm_is_the_installed_one() -> None:
    # Not resolved: under Bazel both are paths in the runfiles tree (symlinks into the venv).
    site = Path(sysconfig.get_paths()["purelib"])
    assert Path(tvm.__file__).is_relative_to(site), (tvm.__file__, site)
    assert Path(tvm_ffi.__file__).is_relative_to(site), (tvm_ffi.__file__, site)
    assert tvm.__version__ == importlib.metadata.version("apache-tvm")
    assert tvm_ffi.__version__ == importlib.metadata.version("apache-tvm-ffi")


def test_venv_record_matches_installed_packages() -> None:
    info = _venv_info()
    if not info:
        pytest.skip(f"{VENV_INFO.name} not written by this venv rule")
    pinned = info.get("packages", {})
    if isinstance(pinned, list):  # ["name==version", ...]
        pinned = dict(p.split("==", 1) for p in pinned if "==" in p)
    checked = 0
    for dist in ("apache-tvm", "apache-tvm-ffi"):
        if dist in pinned:
            assert importlib.metadata.version(dist) == pinned[dist], dist
            checked += 1
    if not checked:
        pytest.skip(f"{VENV_INFO.name} pins neither apache-tvm nor apache-tvm-ffi (user wheels)")


def test_record_lane_facts(record_testsuite_property: RecordProperty) -> None:
    libinfo = tvm.support.libinfo()
    gpu, driver = _gpu()
    facts = {
        "tvm_version": tvm.__version__,
        "tvm_git_commit": libinfo.get("GIT_COMMIT_HASH")
        or "not recorded (tvm.support.libinfo() has no GIT_COMMIT_HASH)",
        "tvm_ffi_version": tvm_ffi.__version__,
        "python": platform.python_version(),
        "torch": _version("torch"),
        "os": platform.platform(),
        "cpu": _cpu(),
        "gpu": gpu,
        "gpu_driver": driver,
        "tvm_use_cuda": str(libinfo.get("USE_CUDA", "")),
        "tvm_use_llvm": str(libinfo.get("USE_LLVM", "")),
        "venv_info": json.dumps(_venv_info(), sort_keys=True),
    }
    for name, value in facts.items():
        assert value != "", name
        record_testsuite_property(name, value)


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"
