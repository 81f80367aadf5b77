"""The Bazel pytest runner keeps torch out of targets that do not declare uses_torch, splits
a sharded target's cases between its shards, and runs every case under the interpreter's
default collector thresholds (it holds the collector back only while the process starts)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# Beside this file in runfiles too (the runner is in every tvm_py_test's srcs).
RUNNER = Path(__file__).with_name("pytest_runner.py")

WITHOUT_TORCH = """
import sys

import pytest
import tvm
import tvm_ffi


def test_tvm_and_tvm_ffi_import_and_see_no_torch():
    assert "torch" not in sys.modules
    assert tvm.runtime.tensor([1, 2]).numpy().tolist() == [1, 2]


def test_a_test_importing_torch_gets_an_error_naming_the_fix():
    with pytest.raises(RuntimeError, match="set uses_torch = True"):
        import torch  # noqa: F401


def test_importorskip_fails_instead_of_skipping():
    with pytest.raises(RuntimeError, match="kept out of this test target"):
        pytest.importorskip("torch")
"""

WITH_TORCH = """
import sys

import tvm_ffi  # noqa: F401


def test_tvm_ffi_imports_torch_eagerly():
    assert "torch" in sys.modules
"""


SEVEN_CASES = """
import pytest


@pytest.mark.parametrize("n", range(7))
def test_case(n):
    assert n >= 0
"""


# Records the collector's thresholds while the test module is imported (collection) and
# while a case runs.
GC_THRESHOLDS = """
import gc
import os
from pathlib import Path

AT_IMPORT = gc.get_threshold()


def test_record_thresholds():
    Path(os.environ["GC_RECORD"]).write_text(repr((AT_IMPORT, gc.get_threshold())))
"""


def _run_runner(
    tmp_path: Path, source: str, torch_flag: str, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    test_file = tmp_path / "inner_test.py"
    test_file.write_text(textwrap.dedent(source))
    # The runner imports tvm_conformance: give the child this process's path (plain pytest
    # adds `python` to sys.path through pyproject.toml, not through PYTHONPATH).
    env = dict(
        os.environ,
        TVM_CONFORMANCE_TORCH=torch_flag,
        PYTHONPATH=os.pathsep.join(p for p in sys.path if p),
    )
    for name in (
        "XML_OUTPUT_FILE",
        "TEST_TOTAL_SHARDS",
        "TEST_SHARD_INDEX",
        "TEST_SHARD_STATUS_FILE",
    ):
        env.pop(name, None)
    env.update(extra_env or {})
    return subprocess.run(
        [sys.executable, str(RUNNER), "-q", "-rA", str(test_file)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_torch_kept_out_when_the_target_does_not_use_it(tmp_path: Path) -> None:
    proc = _run_runner(tmp_path, WITHOUT_TORCH, "0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed" in proc.stdout


def test_torch_present_when_the_target_uses_it(tmp_path: Path) -> None:
    proc = _run_runner(tmp_path, WITH_TORCH, "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


def test_nothing_collected_fails_the_target(tmp_path: Path) -> None:
    proc = _run_runner(tmp_path, "def helper():\n    return 1\n", "0")
    assert proc.returncode == pytest.ExitCode.NO_TESTS_COLLECTED
    assert "collected no tests; failing the target" in proc.stderr


def _passed_ids(output: str) -> list[str]:
    return sorted(
        line.split("::", 1)[1] for line in output.splitlines() if line.startswith("PASSED ")
    )


def test_shards_split_the_cases_each_exactly_once(tmp_path: Path) -> None:
    whole = _run_runner(tmp_path, SEVEN_CASES, "0")
    assert whole.returncode == 0, whole.stdout + whole.stderr
    everything = _passed_ids(whole.stdout)
    assert len(everything) == 7
    per_shard = []
    for index in range(3):
        status = tmp_path / f"shard_{index}.status"
        proc = _run_runner(
            tmp_path,
            SEVEN_CASES,
            "0",
            {
                "TEST_TOTAL_SHARDS": "3",
                "TEST_SHARD_INDEX": str(index),
                "TEST_SHARD_STATUS_FILE": str(status),
            },
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        # Bazel reads the touched status file as "this runner supports sharding".
        assert status.exists()
        per_shard.append(_passed_ids(proc.stdout))
    assert [len(cases) for cases in per_shard] == [3, 2, 2]
    assert sorted(case for cases in per_shard for case in cases) == everything


def test_an_unsharded_target_ignores_a_single_shard(tmp_path: Path) -> None:
    proc = _run_runner(
        tmp_path, SEVEN_CASES, "0", {"TEST_TOTAL_SHARDS": "1", "TEST_SHARD_INDEX": "0"}
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(_passed_ids(proc.stdout)) == 7


def test_cases_run_with_the_default_collector_thresholds(tmp_path: Path) -> None:
    record = tmp_path / "thresholds.txt"
    proc = _run_runner(tmp_path, GC_THRESHOLDS, "0", {"GC_RECORD": str(record)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    at_import, in_case = ast.literal_eval(record.read_text())
    fresh = subprocess.run(
        [sys.executable, "-c", "import gc; print(gc.get_threshold())"],
        capture_output=True,
        text=True,
        check=True,
    )
    default = ast.literal_eval(fresh.stdout)
    # Held back while modules load (fewer young collections), the defaults for the cases.
    assert at_import[0] > default[0]
    assert in_case == default
