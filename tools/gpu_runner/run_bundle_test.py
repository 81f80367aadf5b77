"""run_bundle.py's runner: parallel or in order the same outcome per test, a hang ends as
TIMEOUT (its children killed too), one line per finished target, and a bundle run held to the
suite's `_cuda` list (partial bundles labelled, a missing target named)."""

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "verdict"))
import run_bundle  # noqa: E402

PY = sys.executable
PLANTED = {
    "//pkg:pass_test": ([PY, "-c", "print('ok')"], 30),
    "//pkg:fail_test": ([PY, "-c", "import sys; sys.exit(3)"], 30),
    # Sleeps in a child it starts: the timeout must kill the whole group, not only the parent.
    "//pkg:hang_test": (
        [
            PY,
            "-c",
            "import subprocess, sys; subprocess.run([sys.executable, '-c', "
            "'import time; time.sleep(120)'])",
        ],
        1,
    ),
    "//pkg:slow_pass_test": ([PY, "-c", "import time; time.sleep(0.5)"], 30),
}


def planned() -> list:
    return [(label, argv, {}, timeout) for label, (argv, timeout) in PLANTED.items()]


@pytest.mark.parametrize("jobs", [1, 4])
def test_each_target_gets_its_status_and_a_line_when_it_finishes(tmp_path: Path, jobs: int) -> None:
    lines: list[str] = []
    began = time.monotonic()
    done = run_bundle.run_tests(
        planned(), str(tmp_path), {}, jobs, report=lines.append, cwd=str(tmp_path)
    )
    assert time.monotonic() - began < 60, "the hang was not cut at its timeout"
    assert {label: status for label, (status, _) in done.items()} == {
        "//pkg:pass_test": "PASSED",
        "//pkg:fail_test": "FAILED",
        "//pkg:hang_test": "TIMEOUT",
        "//pkg:slow_pass_test": "PASSED",
    }
    progress = [line for line in lines if line.lstrip().startswith("[")]
    assert len(progress) == len(PLANTED)
    assert sorted(line.split()[2] for line in progress) == sorted(f"{label}:" for label in PLANTED)
    log = tmp_path / "tests" / "pkg" / "hang_test" / "test.log"
    assert "killed after its 1 s timeout" in log.read_text()


def test_a_test_gets_its_own_temp_dir_and_the_xml_path(tmp_path: Path) -> None:
    show = "import os; print(os.environ['TEST_TMPDIR'], os.environ['XML_OUTPUT_FILE'])"
    tests = [(f"//pkg:t{i}_test", [PY, "-c", show], {}, 30) for i in range(2)]
    run_bundle.run_tests(tests, str(tmp_path), {}, 2, report=lambda line: None, cwd=str(tmp_path))
    seen = set()
    for i in range(2):
        log = (tmp_path / "tests" / "pkg" / f"t{i}_test" / "test.log").read_text().split()
        assert log[1] == run_bundle.xml_path(str(tmp_path), f"//pkg:t{i}_test")
        seen.add(log[0])
    assert len(seen) == 2


SUITE = {"source": "build graph: //a:cuda_tests", "targets": ["//a:x_test_cuda", "//a:y_test_cuda"]}


def test_a_whole_suite_bundle_is_held_to_the_suite_not_to_its_own_list() -> None:
    manifest = {
        "bundle": "//tools/gpu_runner:lane_bundle",
        "tests": [{"label": "//a:x_test_cuda"}],  # y went missing from tests.json
        "cuda_suite": SUITE,
        "whole_suite": True,
    }
    record, partial = run_bundle.suite_record(manifest)
    assert record["targets"] == ["//a:x_test_cuda", "//a:y_test_cuda"]
    assert partial == []


def test_a_bundle_carrying_part_of_the_suite_is_labelled_partial() -> None:
    manifest = {
        "bundle": "//tools/gpu_runner:bundle",
        "tests": [{"label": "//a:x_test_cuda"}, {"label": "//a:x_test_llvm"}],
        "cuda_suite": SUITE,
        "whole_suite": False,
    }
    record, partial = run_bundle.suite_record(manifest)
    assert record["targets"] == ["//a:x_test_cuda"]
    assert partial == ["//tools/gpu_runner:bundle carries 1 of the suite's 2 _cuda targets"]


def test_a_manifest_without_the_suite_proves_nothing() -> None:
    assert run_bundle.suite_record({"tests": []}) == (None, [])
