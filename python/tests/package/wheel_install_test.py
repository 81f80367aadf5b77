"""The Bazel-built wheel, installed into a fresh venv, runs a downstream project's tests.

The fresh venv is conftest.py's (the wheel installed with pip, offline). pytest then runs
foreign_project/ from a temporary directory with its own ini: no
`-p tvm_conformance.pytest_plugin`, no conftest, no repo pyproject, no PYTHONPATH to the repo's
sources, so only the wheel's pytest11 entry point can load the plugin. The expected outcome of
each case follows from whether CUDA can run here (tvm.cuda().exist), so the test holds on GPU
machines too.
"""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING

import tvm

from tvm_conformance.runfiles import rlocation

if TYPE_CHECKING:
    from conftest import FreshVenv

PLUGIN = "tvm_conformance.pytest_plugin"
PASSED, SKIPPED, FAILED = "passed", "skipped", "failed"
HAS_CUDA = bool(tvm.cuda().exist)
CUDA = PASSED if HAS_CUDA else SKIPPED


def _run(
    fresh: FreshVenv, tmp_path: Path, targets: str, *args: str, files: tuple[str, ...] = ()
) -> dict[str, tuple[str, str]]:
    """Run pytest on a copy of foreign_project; {file::case: (outcome, message)}."""
    project = tmp_path / "project"
    shutil.copytree(Path(rlocation("python/tests/package/foreign_project")), project)
    xml = tmp_path / "junit.xml"
    result = subprocess.run(
        [fresh.python, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", project]
        + ["-c", project / "pytest.ini", f"--junitxml={xml}", "-rsx", *args]
        + [project / f for f in files or ("",)],
        cwd=project,
        env=fresh.env(TVM_TEST_TARGETS=targets),
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


def test_not_gpu_runs_the_cpu_cases(fresh: FreshVenv, tmp_path: Path) -> None:
    results = _run(fresh, tmp_path, "llvm", "-m", "not gpu")
    assert _outcomes(results) == {**CPU_CASES, **UNRELATED}
    assert results[LEGACY + "test_missing_package"][1] == (
        "Cannot import 'no_such_package_in_this_venv'"
    )


def test_gpu_runs_the_gpu_cases(fresh: FreshVenv, tmp_path: Path) -> None:
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


def test_all_targets(fresh: FreshVenv, tmp_path: Path) -> None:
    results = _run(fresh, tmp_path, "llvm;cuda")
    assert _outcomes(results) == {
        **CPU_CASES,
        **UNRELATED,
        LEGACY + "test_cuda_device": CUDA,
        LEGACY + "test_tensor_roundtrip[cuda]": CUDA,
        LEGACY + "test_uses_gpu_runs_anywhere": PASSED,
        UPSTREAM + "test_device_exists[cuda]": CUDA,
    }


def test_tvm_test_targets_leaves_cuda_out(fresh: FreshVenv, tmp_path: Path) -> None:
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


def test_the_entry_point_is_what_loads_the_plugin(fresh: FreshVenv, tmp_path: Path) -> None:
    results = _run(fresh, tmp_path, "llvm", "-p", f"no:{PLUGIN}", files=("test_unrelated.py",))
    assert _outcomes(results) == {
        **UNRELATED,
        "test_unrelated::test_plugin_came_from_the_installed_wheel": FAILED,
    }
    assert (
        "the tvm_conformance plugin is not loaded"
        in (results["test_unrelated::test_plugin_came_from_the_installed_wheel"][1])
    )


def test_the_runner_has_no_repo_sources_on_its_path(fresh: FreshVenv) -> None:
    found = subprocess.run(
        [fresh.python, "-c", "import tvm_conformance; print(tvm_conformance.__file__)"],
        env=fresh.env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(found).parent.parent == fresh.site, found
