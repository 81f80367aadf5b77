"""conformance_check: rows of docs/conformance.md hold only when their case passed or xfailed."""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conformance_check  # noqa: E402

_PYTEST_XML = """<?xml version="1.0"?><testsuites><testsuite name="pytest">
<testcase classname="python.tests.x" name="test_ok[llvm]"/>
<testcase classname="python.tests.x" name="test_bad"><failure message="boom"/></testcase>
<testcase classname="python.tests.x" name="test_skip"><skipped message="no gpu"/></testcase>
<testcase classname="python.tests.x" name="test_known">
<skipped type="pytest.xfail" message="deviation"/></testcase>
</testsuite></testsuites>"""

_GTEST_XML = """<?xml version="1.0"?><testsuites><testsuite name="Hello">
<testcase name="Adds" status="run" result="completed" classname="Hello"/>
</testsuite></testsuites>"""


def _testlogs(tmp_path: Path) -> str:
    for label, text in (("pkg/py_test", _PYTEST_XML), ("cpp/gtest", _GTEST_XML)):
        target = tmp_path / label
        target.mkdir(parents=True)
        (target / "test.xml").write_text(text)
    return str(tmp_path)


def _doc(*cells: str) -> str:
    rows = "\n".join(f"| 001 | behaviour {i} | {cell} |" for i, cell in enumerate(cells))
    return "| seed | behaviour | test |\n|---|---|---|\n" + rows


@pytest.mark.parametrize(
    "cell",
    [
        "`//pkg:py_test :: test_ok[llvm]`",
        "`//pkg:py_test :: test_known`",
        "//cpp:gtest :: Hello.Adds",
    ],
)
def test_passed_and_xfailed_cases_hold(tmp_path: Path, cell: str) -> None:
    rows = conformance_check.parse_rows(_doc(cell))
    assert conformance_check.check(rows, _testlogs(tmp_path), require_all=True) == 0


@pytest.mark.parametrize(
    "case",
    ["test_bad", "test_skip", "test_absent", "test_ok"],  # test_ok lacks its [llvm] id
)
def test_failed_skipped_or_missing_cases_are_problems(tmp_path: Path, case: str) -> None:
    rows = conformance_check.parse_rows(_doc(f"`//pkg:py_test :: {case}`"))
    assert conformance_check.check(rows, _testlogs(tmp_path), require_all=False) == 1


def test_target_not_run_is_a_problem_only_when_required(tmp_path: Path) -> None:
    rows = conformance_check.parse_rows(_doc("`//pkg:other_cuda :: test_x[cuda]`"))
    logs = _testlogs(tmp_path)
    assert conformance_check.check(rows, logs, require_all=False) == 0
    assert conformance_check.check(rows, logs, require_all=True) == 1


def test_row_without_a_test_reference_is_an_error() -> None:
    with pytest.raises(ValueError, match="names no"):
        conformance_check.parse_rows(_doc("see the ffi tests"))
