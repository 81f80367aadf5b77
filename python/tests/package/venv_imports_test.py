"""Every top-level package installed in the lane's venv imports, each in a process of its own
(one that crashes is one failed case), and the lock's every distribution is installed.

The venv's scrub (third_party/python/scrub_venv.py) renames or removes files whose names hold
spaces (Bazel 4 runfiles cannot carry them); this is what shows that no package lost a file it
reads at import (setuptools reads its vendored `Lorem ipsum.txt`). PyTorch's test corpus
(torch.testing._internal: OpInfo, ModuleInfo) needs setuptools and expecttest.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import sysconfig

import pytest

from tvm_conformance.runfiles import rlocation

SITE_PACKAGES = sysconfig.get_paths()["purelib"]
LOCKS = [
    "third_party/python/requirements.lock",
    "third_party/python/requirements_gpu.lock",
    "third_party/python/requirements_py310.lock",
    "third_party/python/lanes/tvm_prev.lock",
    "third_party/python/lanes/tvm_prev_gpu.lock",
    "third_party/python/lanes/tvm_prev_py310.lock",
    "third_party/python/lanes/ffi_next.lock",
    "third_party/python/lanes/ffi_next_gpu.lock",
    "third_party/python/lanes/ffi_next_py310.lock",
]
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==([^ \\;]+)", re.M)


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def top_level_names() -> list[str]:
    """The importable top-level names in site-packages: packages (with or without
    __init__.py), modules and extension modules."""
    names = set()
    for entry in os.listdir(SITE_PACKAGES):
        path = os.path.join(SITE_PACKAGES, entry)
        if (
            entry.startswith(".")
            or entry == "__pycache__"
            or entry.endswith((".dist-info", ".data"))
        ):
            continue
        if os.path.isdir(path) and entry.isidentifier():
            names.add(entry)
        elif entry.endswith(".py"):
            names.add(entry[: -len(".py")])
        elif entry.endswith(".so"):
            names.add(entry.split(".", 1)[0])
    return sorted(names)


def installed() -> dict[str, str]:
    return {
        canonical(d.metadata["Name"]): d.version
        for d in importlib.metadata.distributions(path=[SITE_PACKAGES])
    }


def test_site_packages_lists_the_kits_own_imports() -> None:
    # The listing is what the cases below import: it must find the packages the kit uses.
    assert {"tvm", "tvm_ffi", "torch", "numpy", "setuptools", "expecttest"} <= set(
        top_level_names()
    )


def test_the_venv_holds_every_distribution_of_one_lane_lock() -> None:
    have = installed()
    matching = []
    for lock in LOCKS:
        path = rlocation(lock)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            pins = {canonical(name): version for name, version in PIN.findall(f.read())}
        if pins["apache-tvm"] == have.get("apache-tvm") and pins["torch"] == have.get("torch"):
            matching.append((lock, {n: v for n, v in pins.items() if have.get(n) != v}))
    assert matching, f"no lane lock pins this venv's apache-tvm and torch ({SITE_PACKAGES})"
    # Several locks can pin the same TVM and torch (lanes differ in tvm-ffi): one holds all.
    assert any(not missing for _, missing in matching), matching


def _import(names: list[str]) -> subprocess.CompletedProcess:
    code = "import importlib, sys\nfor n in sys.argv[1:]:\n    importlib.import_module(n)"
    return subprocess.run(
        [sys.executable, "-c", code, *names], capture_output=True, text=True, timeout=600
    )


def test_every_top_level_package_imports() -> None:
    # One process for all (fast); when it fails, one per package names each that fails to
    # import or crashes the interpreter, so one broken package hides no other.
    names = top_level_names()
    if _import(names).returncode == 0:
        return
    failed = {n: r for n in names if (r := _import([n])).returncode != 0}
    assert not failed, "\n".join(
        f"import {n}: exit {r.returncode}\n{r.stderr[-2000:]}" for n, r in failed.items()
    )


@pytest.mark.parametrize(
    ("module", "check"),
    [
        ("torch.utils.cpp_extension", ""),
        ("torch.testing._internal.common_methods_invocations", "assert len(m.op_db) > 500"),
        ("torch.testing._internal.common_modules", "assert len(m.module_db) > 50"),
    ],
)
def test_pytorch_test_corpus_imports(module: str, check: str) -> None:
    # OpInfo's op_db and ModuleInfo's module_db: the model-import corpus (op_corpus).
    code = f"import {module} as m\n{check}"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, f"{module}: exit {result.returncode}\n{result.stderr[-3000:]}"
