"""The Bazel-built wheel, installed into a fresh venv, runs a downstream project's tests.

A fresh venv (no pip, nothing installed) sees the lane venv's packages (apache-tvm, pytest,
numpy) through a .pth file, so nothing is downloaded; the wheel is installed into it with pip,
offline. pytest then runs foreign_project/ from a temporary directory with its own ini: no
`-p tvm_conformance.pytest_plugin`, no conftest, no repo pyproject, no PYTHONPATH to the repo's
sources, so only the wheel's pytest11 entry point can load the plugin. The expected outcome of
each case follows from whether CUDA can run here (tvm.cuda().exist), so the test holds on GPU
machines too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import tvm

from tvm_conformance.runfiles import rlocation

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

PLUGIN = "tvm_conformance.pytest_plugin"
PASSED, SKIPPED, FAILED = "passed", "skipped", "failed"
HAS_CUDA = bool(tvm.cuda().exist)
CUDA = PASSED if HAS_CUDA else SKIPPED


def _wheel() -> Path:
    with open(rlocation("python/pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    name = f"{project['name']}-{project['version']}-py3-none-any.whl"
    path = Path(rlocation(f"python/{name}"))
    if not path.exists():  # plain pytest: Bazel's output tree
        path = Path(rlocation(f"bazel-bin/python/{name}"))
    if not path.exists():
        pytest.skip(f"{name} is not built: run ./bazelw build //python:wheel first")
    return path


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with the wheel installed and the lane's packages visible; returns its python."""
    root = tmp_path_factory.mktemp("fresh")
    # In a child without PYTHONPATH: under Bazel, runfiles' `python_venv/venv` directory would
    # shadow the standard library's venv module in this process.
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", "--symlinks", root / "venv"],
        check=True,
        cwd=root,
        env=_clean_env(),
    )
    python = root / "venv" / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # The lane's packages (and pip) come after the venv's own site-packages.
    Path(site, "lane_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = subprocess.run(
        [python, "-m", "pip", "install", "--no-index", "--no-deps", "--no-compile"]
        + ["--disable-pip-version-check", "--no-cache-dir", str(_wheel())],
        env=_clean_env(),
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    assert Path(site, "tvm_conformance", "legacy.py").exists()
    return python


def _clean_env(**extra: str) -> dict[str, str]:
    """This environment without what would reach the repo's sources or steer pytest."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "TVM_TEST_TARGETS")
        and k != "PYTEST_DISABLE_PLUGIN_AUTOLOAD"
    }
    env.update(extra)
    return env


def _run(
    fresh: Path, tmp_path: Path, targets: str, *args: str, files: tuple[str, ...] = ()
) -> dict[str, tuple[str, str]]:
    """Run pytest on a copy of foreign_project; {file::case: (outcome, message)}."""
    project = tmp_path / "project"
    shutil.copytree(Path(rlocation("python/tests/package/foreign_project")), project)
    xml = tmp_path / "junit.xml"
    result = subprocess.run(
        [fresh, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", project]
        + ["-c", project / "pytest.ini", f"--junitxml={xml}", "-rsx", *args]
        + [project / f for f in files or ("",)],
        cwd=project,
        env=_clean_env(TVM_TEST_TARGETS=targets),
        capture_output=True,
        text=True,
    )
    assert xml.exists(), result.stdout + result.stderr
    outcomes = {}
    for case in ET.parse(xml).iter("testcase"):
        key = f"{case.get('classname')}::{case.get('name')}"
        outcome, message = PASSED, ""
        for child, kind in (("skipped", SKIPPED), ("failure", FAILED), ("error", FAILED)):
            found = case.find(child)
            if found is not None:
                outcome, message = kind, found.get("message", "")
        outcomes[key] = (outcome, message)
    return outcomes


LEGACY = "test_legacy_api::"
UPSTREAM = "test_upstream_style::"
UNRELATED = {
    "test_unrelated::test_own_target_fixture": PASSED,
    "test_unrelated::test_plain": PASSED,
    "test_unrelated::test_plugin_came_from_the_installed_wheel": PASSED,
}
CPU_CASES = {
    LEGACY + "test_llvm_runtime": PASSED,
    LEGACY + "test_numpy_present": PASSED,
    LEGACY + "test_missing_package": SKIPPED,
    LEGACY + "test_tensor_roundtrip[llvm]": PASSED,
    UPSTREAM + "test_device_exists[llvm]": PASSED,
}


def _outcomes(results: dict[str, tuple[str, str]]) -> dict[str, str]:
    return {case: outcome for case, (outcome, _) in results.items()}


def test_not_gpu_runs_the_cpu_cases(fresh: Path, tmp_path: Path) -> None:
    results = _run(fresh, tmp_path, "llvm", "-m", "not gpu")
    assert _outcomes(results) == {**CPU_CASES, **UNRELATED}
    assert results[LEGACY + "test_missing_package"][1] == (
        "Cannot import 'no_such_package_in_this_venv'"
    )


def test_gpu_runs_the_gpu_cases(fresh: Path, tmp_path: Path) -> None:
    results = _run(fresh, tmp_path, "cuda", "-m", "gpu")
    assert _outcomes(results) == {
        LEGACY + "test_cuda_device": CUDA,
        LEGACY + "test_tensor_roundtrip[cuda]": CUDA,
        LEGACY + "test_uses_gpu_runs_anywhere": PASSED,
        UPSTREAM + "test_device_exists[cuda]": CUDA,
    }
    if not HAS_CUDA:
        assert results[UPSTREAM + "test_device_exists[cuda]"][1].startswith(
            "target 'cuda' cannot run here: "
        )


def test_all_targets(fresh: Path, tmp_path: Path) -> None:
    results = _run(fresh, tmp_path, "llvm;cuda")
    assert _outcomes(results) == {
        **CPU_CASES,
        **UNRELATED,
        LEGACY + "test_cuda_device": CUDA,
        LEGACY + "test_tensor_roundtrip[cuda]": CUDA,
        LEGACY + "test_uses_gpu_runs_anywhere": PASSED,
        UPSTREAM + "test_device_exists[cuda]": CUDA,
    }


def test_tvm_test_targets_leaves_cuda_out(fresh: Path, tmp_path: Path) -> None:
    # On any machine, GPU or not: TVM_TEST_TARGETS=llvm skips the cuda cases.
    results = _run(fresh, tmp_path, "llvm")
    assert _outcomes(results) == {
        **CPU_CASES,
        **UNRELATED,
        LEGACY + "test_cuda_device": SKIPPED,
        LEGACY + "test_tensor_roundtrip[cuda]": SKIPPED,
        LEGACY + "test_uses_gpu_runs_anywhere": PASSED,
        UPSTREAM + "test_device_exists[cuda]": SKIPPED,
    }
    assert results[UPSTREAM + "test_device_exists[cuda]"][1] == (
        "cuda tests disabled by TVM_TEST_TARGETS environment variable"
    )


def test_the_entry_point_is_what_loads_the_plugin(fresh: Path, tmp_path: Path) -> None:
    results = _run(fresh, tmp_path, "llvm", "-p", f"no:{PLUGIN}", files=("test_unrelated.py",))
    assert _outcomes(results) == {
        **UNRELATED,
        "test_unrelated::test_plugin_came_from_the_installed_wheel": FAILED,
    }
    assert (
        "the tvm_conformance plugin is not loaded"
        in (results["test_unrelated::test_plugin_came_from_the_installed_wheel"][1])
    )


def test_the_runner_has_no_repo_sources_on_its_path(fresh: Path) -> None:
    found = subprocess.run(
        [fresh, "-c", "import tvm_conformance, sys; print(tvm_conformance.__file__)"],
        env=_clean_env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(found).parent.parent == Path(
        subprocess.run(
            [fresh, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    ), found
