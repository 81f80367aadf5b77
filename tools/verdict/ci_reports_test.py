"""ci_reports.py: the merged JUnit, the CTRF report and the job summary of a judged run, and
the `whose` of each problem kind against docs/results.md's "Reading a FAIL" table."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import ci_reports
import fake_runs
import pytest
import results
import run_record
import verdict
from fake_runs import case_xml, junit

from tvm_conformance.runfiles import rlocation

LLVM = {"tvm_target": "llvm"}
REGISTRY = fake_runs.Registry(
    fake_runs.deviation("ffi-listed", ("//pkg:a_test_llvm :: test_known[llvm]",))
)
TESTS = {
    "//pkg:a_test_llvm": junit(
        [
            case_xml("test_ok[llvm]", properties=LLVM),
            case_xml("test_known[llvm]", "xfailed", "deviation ffi-listed: x", properties=LLVM),
            case_xml("test_off[llvm]", "skipped", "needs a thing", properties=LLVM),
            # Two classnames, one name: still two distinct JUnit names.
            case_xml("test_same", properties=LLVM, classname="a"),
            case_xml("test_same", properties=LLVM, classname="b"),
        ]
    ),
    "//pkg:b_test_llvm": junit([case_xml("test_bad[llvm]", "failed", "boom", properties=LLVM)]),
}
# CTRF's required fields (its JSON Schema, schema/ctrf.schema.json of the ctrf-io/ctrf
# specification): the root's, results', tool's, summary's and each test's.
CTRF_REQUIRED = {
    "root": ("reportFormat", "specVersion", "results"),
    "results": ("tool", "summary", "tests"),
    "tool": ("name",),
    "summary": ("tests", "passed", "failed", "skipped", "pending", "other", "start", "stop"),
    "test": ("name", "status", "duration"),
}
CTRF_SUMMARY_FIELDS = {*CTRF_REQUIRED["summary"], "flaky", "suites", "duration", "extra"}


def _judged(tmp_path: Path, tests: dict = TESTS, **kwargs) -> str:
    run_dir = fake_runs.archive(tmp_path, tests, exit_code=3, **kwargs)
    verdict.judge(results.read_run(run_dir), REGISTRY, record_to=run_dir)
    return run_dir


def test_the_merged_junit_names_each_case_once_and_marks_deviations(tmp_path: Path) -> None:
    root = ET.parse(Path(_judged(tmp_path), ci_reports.JUNIT_FILE)).getroot()
    cases = {c.get("name"): c for c in root.iter("testcase")}
    names = [c.get("name") for c in root.iter("testcase")]
    assert len(names) == len(set(names)) == 7  # 6 cases and the verdict
    assert "//pkg:a_test_llvm :: test_same (2)" in cases
    known = cases["//pkg:a_test_llvm :: test_known[llvm]"]
    assert known.find("skipped").get("type") == "xfail"
    props = {p.get("name"): p.get("value") for p in known.iter("property")}
    assert props["tvm_deviation"] == "ffi-listed" and props["tvm_target"] == "llvm"
    assert cases["//pkg:b_test_llvm :: test_bad[llvm]"].find("failure") is not None
    # The verdict is a case of its own: it fails with every problem.
    failure = cases["verdict"].find("failure")
    assert failure.get("message").startswith("verdict: FAIL") and "BAZEL EXIT 3" in failure.text
    suite = root.find("testsuite")
    assert suite.get("failures") == "2" and suite.get("skipped") == "2"


def test_over_the_size_limit_the_junit_is_cut_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir = _judged(tmp_path)
    record = run_record.read(run_dir)
    full = len(ci_reports.junit_bytes(record))
    monkeypatch.setattr(ci_reports, "JUNIT_MAX_BYTES", full - 1)
    cut = ET.fromstring(ci_reports.junit_bytes(record))
    props = {p.get("name"): p.get("value") for p in cut.find("testsuite/properties")}
    assert props["tvm_passed_cases_left_out"] == "3"
    assert all(c.get("name") != "//pkg:a_test_llvm :: test_ok[llvm]" for c in cut.iter("testcase"))
    monkeypatch.setattr(ci_reports, "JUNIT_MAX_BYTES", 100)
    with pytest.raises(ValueError, match="over 100 bytes"):
        ci_reports.junit_bytes(record)


def test_the_ctrf_report_has_every_required_field(tmp_path: Path) -> None:
    report = json.loads(Path(_judged(tmp_path), ci_reports.CTRF_FILE).read_text())
    assert all(key in report for key in CTRF_REQUIRED["root"])
    assert report["reportFormat"] == "CTRF"
    assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", report["specVersion"])
    res = report["results"]
    assert all(key in res for key in CTRF_REQUIRED["results"])
    assert all(isinstance(res["tool"].get(key), str) and res["tool"][key] for key in ("name",))
    summary = res["summary"]
    assert all(isinstance(summary[key], int) for key in CTRF_REQUIRED["summary"])
    assert set(summary) <= CTRF_SUMMARY_FIELDS  # CTRF's summary takes no other field
    # The six cases and the verdict's own test, failed as the verdict is FAIL.
    assert summary["tests"] == len(res["tests"]) == 7
    assert summary["failed"] == 2 and summary["skipped"] == 2 and summary["passed"] == 3
    for test in res["tests"]:
        assert all(key in test for key in CTRF_REQUIRED["test"])
        assert test["status"] in ci_reports.CTRF_STATUSES
        assert isinstance(test["duration"], int) and test["name"]
    known = next(t for t in res["tests"] if t["name"].endswith("test_known[llvm]"))
    assert known["rawStatus"] == "xfailed" and known["labels"]["deviation"] == "ffi-listed"
    assert report["extra"]["verdict"] == "FAIL"
    verdict_test = next(t for t in res["tests"] if t["name"] == "verdict")
    assert verdict_test["status"] == "failed" and verdict_test["rawStatus"] == "FAIL"
    assert verdict_test["message"].startswith("verdict: FAIL")
    assert "test_bad[llvm]" in verdict_test["trace"]


def test_ctrf_fails_a_fail_verdict_that_no_case_shows(tmp_path: Path) -> None:
    # A run whose only problem is a target whose every case skipped (a machine without the
    # browser): no case failed, and CTRF's summary must still count a failure.
    record = run_record.read(_judged(tmp_path))
    verdict_part = record["verdict"]
    verdict_part["cases"] = [c for c in verdict_part["cases"] if c["outcome"] != "failed"]
    verdict_part["status"] = "FAIL"
    verdict_part["line"] = "verdict: FAIL (x): all skipped"
    verdict_part["problems"] = [{"text": "ALL SKIPPED: //a:b_test: all 3 cases skipped"}]
    report = ci_reports.ctrf(record)
    assert report["results"]["summary"]["failed"] == 1
    assert [t["name"] for t in report["results"]["tests"] if t["status"] == "failed"] == ["verdict"]
    verdict_part["status"], verdict_part["problems"] = "PASS", []
    report = ci_reports.ctrf(record)
    assert report["results"]["summary"]["failed"] == 0
    assert report["results"]["tests"][-1]["status"] == "passed"


def test_the_summary_is_markdown_under_1_mib_naming_the_problems(tmp_path: Path) -> None:
    text = Path(_judged(tmp_path), ci_reports.SUMMARY_FILE).read_text()
    assert text.startswith("## tvm_conformance: FAIL")
    assert "| tvm | FAILED | //pkg:b_test_llvm :: test_bad[llvm] |" in text
    assert len(text.encode()) <= ci_reports.SUMMARY_MAX_BYTES


def test_a_long_problem_list_still_fits_the_summary(tmp_path: Path) -> None:
    record = run_record.read(_judged(tmp_path))
    problem = record["verdict"]["problems"][0]
    record["verdict"]["problems"] = [dict(problem, message="x" * 300)] * 20000
    data = ci_reports.summary_bytes(record)
    assert len(data) <= ci_reports.SUMMARY_MAX_BYTES
    assert b"more problems: see run.json" in data


def _docs_whose() -> dict[str, str]:
    """The problem kind table of docs/results.md: kind -> the first owner its whose cell names."""
    text = Path(rlocation("docs/results.md")).read_text(encoding="utf-8")
    found = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and cells[0].startswith("`") and cells[0].endswith("`"):
            owner = re.match(r"(TVM|machine|kit)\b", cells[1])
            if owner:
                found[cells[0].strip("`")] = owner.group(1).lower()
    return found


def test_whose_each_kind_is_agrees_with_the_docs_table() -> None:
    docs = _docs_whose()
    assert docs == verdict.WHOSE


@pytest.mark.parametrize(
    ("text", "kind", "whose", "target", "case"),
    [
        ("TARGET TIMEOUT: //a:b_test", "TARGET TIMEOUT", "machine", "//a:b_test", ""),
        ("TARGET FAILED: //a:b_test", "TARGET FAILED", "tvm", "//a:b_test", ""),
        (
            "ALL SKIPPED: //a:b_test: all 2 cases skipped",
            "ALL SKIPPED",
            "machine",
            "//a:b_test",
            "",
        ),
        (
            "XPASS: //a:b :: test_x[llvm] passed: deviation d",
            "XPASS",
            "tvm",
            "//a:b",
            "test_x[llvm]",
        ),
        ("UNREADABLE: cannot read test.xml of //a:b: gone", "UNREADABLE", "machine", "//a:b", ""),
    ],
)
def test_a_problem_line_becomes_its_fields(
    text: str, kind: str, whose: str, target: str, case: str
) -> None:
    got = verdict.problem_record(text)
    assert (got["kind"], got["whose"], got["target"], got["case"]) == (kind, whose, target, case)
