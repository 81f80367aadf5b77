"""tools/verdict/skip_report.py: per-case counts and skip reasons of one run, as the verdict
reads it (its build events, through results.py), never leftovers in bazel-testlogs."""

import subprocess
import sys
from pathlib import Path

import fake_runs
import pytest
import results
import verdict

# Beside this test (in runfiles under Bazel, by the :skip_report dep).
SCRIPT = Path(__file__).with_name("skip_report.py")

PYTEST_XML = """<?xml version="1.0" encoding="utf-8"?>
<testsuites name="pytest tests"><testsuite name="pytest" errors="0" failures="1" skipped="3"
 tests="6">
<testcase classname="m" name="test_a[llvm]" time="0.1" />
<testcase classname="m" name="test_a[cuda]"><skipped type="pytest.skip"
 message="target 'cuda' cannot run here: no cuda:0 device present">m.py:3: target 'cuda'
 cannot run here: no cuda:0 device present</skipped></testcase>
<testcase classname="m" name="test_b"><skipped type="pytest.skip"
 message="Skipped: requires cuda: no GPU">m.py:9: requires cuda: no GPU</skipped></testcase>
<testcase classname="m" name="test_c[llvm]"><skipped type="pytest.xfail"
 message="known bug" /></testcase>
<testcase classname="m" name="test_d"><failure message="assert 1 == 2">boom</failure></testcase>
<testcase classname="m" name="test_e"><error message="fixture failed">boom</error></testcase>
</testsuite></testsuites>
"""

GTEST_XML = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="4" failures="1" disabled="1" errors="0" name="AllTests">
  <testsuite name="Ffi" tests="4" failures="1" disabled="1" skipped="1" errors="0">
    <testcase name="Runs" status="run" result="completed" classname="Ffi" />
    <testcase name="Skips" status="run" result="skipped" classname="Ffi">
      <skipped message="no device"><![CDATA[t.cc:5 no device]]></skipped>
    </testcase>
    <testcase name="DISABLED_Off" status="notrun" result="suppressed" classname="Ffi" />
    <testcase name="Fails" status="run" result="completed" classname="Ffi">
      <failure message="t.cc:9 Expected equality" type=""></failure>
    </testcase>
  </testsuite>
</testsuites>
"""

PASS_ONLY_XML = """<?xml version="1.0"?><testsuites><testsuite name="p" tests="1">
<testcase classname="m" name="test_ok" /></testsuite></testsuites>
"""


def run(*args: str | Path) -> subprocess.CompletedProcess:
    # -E -S: no PYTHONPATH and no site-packages, so the tool must be standard library only
    # (not -I: the tool imports results.py and verdict.py from its own directory).
    return subprocess.run(
        [sys.executable, "-E", "-S", str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
    )


def bep(tmp_path: Path, tests: dict[str, str], **kwargs) -> Path:
    """The build event file of a fake run of `tests` (label -> JUnit text)."""
    return fake_runs.write_bep(tmp_path, tests, **kwargs)


def test_counts_pytest_outcomes_with_final_summary_line(tmp_path: Path) -> None:
    result = run("--bep", bep(tmp_path, {"//pkg:a_test_cuda": PYTEST_XML}))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Test cases in 1 target(s): 1 passed, 2 failed, 2 skipped, 1 xfailed"
    assert lines[-1] == "1 passed, 2 failed, 2 skipped"


def test_groups_skips_by_reason_with_targets(tmp_path: Path) -> None:
    tests = {"//pkg:a_test_cuda": PYTEST_XML, "//pkg:b_test_cuda": PYTEST_XML}
    out = run("--run", fake_runs.archive(tmp_path, tests)).stdout
    assert "     2  target 'cuda' cannot run here: no cuda:0 device present\n" in out
    assert "     2  requires cuda: no GPU\n" in out  # pytest's "Skipped: " prefix dropped
    assert "in //pkg:a_test_cuda (1), //pkg:b_test_cuda (1)" in out
    assert out.splitlines()[-1] == "2 passed, 4 failed, 4 skipped"


def test_runs_of_one_target_count_once_under_its_label(tmp_path: Path) -> None:
    """--runs_per_test: the run's reader keeps one case per case id, the worst of its runs."""
    passing = fake_runs.junit([fake_runs.case_xml("test_a"), fake_runs.case_xml("test_b")])
    failing = fake_runs.junit(
        [fake_runs.case_xml("test_a"), fake_runs.case_xml("test_b", "failed")]
    )
    path = bep(tmp_path, {"//pkg:x_test": passing}, extra_runs={"//pkg:x_test": [failing, passing]})
    result = run("--bep", path)
    assert result.stdout.splitlines()[0].startswith("Test cases in 1 target(s): ")
    assert result.stdout.splitlines()[-1] == "1 passed, 1 failed, 0 skipped"


def test_restricts_to_target_patterns(tmp_path: Path) -> None:
    tests = {
        "//python/tests/targets:x_test_llvm": PASS_ONLY_XML,
        "//python/tests/targets:x_test_cuda": PYTEST_XML,
        "//python/tests/ffi:y_test": PASS_ONLY_XML,
        "//python/tests/ffi/deep:z_test": PASS_ONLY_XML,
    }
    path = bep(tmp_path, tests)

    def summary(*patterns: str) -> str:
        return run("--bep", path, *patterns).stdout.splitlines()[-1]

    assert summary() == "4 passed, 2 failed, 2 skipped"
    assert summary("//python/tests/targets:x_test_llvm") == "1 passed, 0 failed, 0 skipped"
    assert summary("//python/tests/targets:x_test") == "2 passed, 2 failed, 2 skipped"
    assert summary("//python/tests/ffi/...") == "2 passed, 0 failed, 0 skipped"
    assert summary("//python/tests/ffi:all") == "1 passed, 0 failed, 0 skipped"
    assert summary("--target", "//python/tests/ffi:y_test") == "1 passed, 0 failed, 0 skipped"


def test_reads_googletest_xml(tmp_path: Path) -> None:
    result = run("--bep", bep(tmp_path, {"//cpp/tests:g_test": GTEST_XML}))
    assert "     1  no device\n" in result.stdout
    assert "disabled (googletest DISABLED_)" in result.stdout
    assert result.stdout.splitlines()[-1] == "1 passed, 1 failed, 2 skipped"


def test_unreadable_xml_counts_as_failed_and_is_named(tmp_path: Path) -> None:
    path = bep(tmp_path, {"//pkg:broken": "<testsuites><testcase"})
    result = run("--bep", path)
    assert "skip_report: cannot read test.xml of //pkg:broken" in result.stderr
    assert result.stdout.splitlines()[-1] == "0 passed, 1 failed, 0 skipped"


def test_suite_level_error_counts_as_failed_and_is_named(tmp_path: Path) -> None:
    # A passing case beside an <error> of the suite itself (a collection error): the verdict
    # fails the run (SUITE ERROR), so the summary counts it as failed too.
    junit = (
        '<?xml version="1.0"?><testsuites><testsuite name="pytest" errors="1">'
        '<error message="collection failed: ImportError"/>'
        '<testcase classname="m" name="test_ok"/></testsuite></testsuites>'
    )
    path = bep(tmp_path, {"//pkg:e_test": junit})
    result = run("--bep", path)
    assert "skip_report: //pkg:e_test suite error: collection failed: ImportError" in result.stderr
    assert result.stdout.splitlines()[-1] == "1 passed, 1 failed, 0 skipped"


def test_without_a_run_is_a_usage_error() -> None:
    result = run()
    assert result.returncode == 2
    assert "one of the arguments --run --bep is required" in result.stderr


def test_testlogs_and_loose_xml_files_are_not_read(tmp_path: Path) -> None:
    """bazel-testlogs (and any test.xml) may hold earlier invocations: only a run is read."""
    xml = tmp_path / "pkg" / "a_test" / "test.xml"
    xml.parent.mkdir(parents=True)
    xml.write_text(PASS_ONLY_XML)
    path = bep(tmp_path, {"//pkg:b_test": PASS_ONLY_XML})
    gone = run("--bep", path, "--testlogs", tmp_path)
    assert gone.returncode == 2 and "unrecognized arguments: --testlogs" in gone.stderr
    loose = run("--bep", path, xml)
    assert loose.returncode == 2
    assert f"not a target pattern: {xml}" in loose.stderr and not loose.stdout


def test_missing_run_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = run("--run", tmp_path / "no" / "such" / "run")
    assert result.returncode == 2 and not result.stdout
    assert result.stderr.strip().splitlines() == [
        f"skip_report: cannot read the run: {tmp_path / 'no' / 'such' / 'run'}: no build event "
        "file (build_events.json) in it"
    ]


def test_build_event_file_limits_report_to_that_invocation(tmp_path: Path) -> None:
    stale = {"//pkg:stale_test_cuda": PASS_ONLY_XML}  # an earlier run's, in the same testlogs
    path = bep(tmp_path, {"//pkg:now_test": PYTEST_XML}, stale=stale)
    result = run("--bep", path)
    assert "in //pkg:now_test (1)" in result.stdout
    assert "stale_test" not in result.stdout + result.stderr
    assert result.stdout.splitlines()[-1] == "1 passed, 2 failed, 2 skipped"


def test_failed_target_without_a_failed_case_counts_as_failed(tmp_path: Path) -> None:
    """A usage error (pytest exit 4) leaves an XML without cases; the summary still fails."""
    empty = '<?xml version="1.0"?><testsuites><testsuite name="pytest"/></testsuites>'
    path = bep(
        tmp_path, {"//pkg:usage_error_test": empty}, statuses={"//pkg:usage_error_test": "FAILED"}
    )
    result = run("--bep", path)
    assert result.stdout.splitlines()[-1] == "0 passed, 1 failed, 0 skipped"
    assert "//pkg:usage_error_test FAILED with no failed case" in result.stderr


@pytest.mark.parametrize("status", ["FLAKY", "NO_STATUS"])
def test_flaky_and_no_status_targets_count_as_not_passed(tmp_path: Path, status: str) -> None:
    """Every case of the target's last attempt passed; its status still is not PASSED."""
    path = bep(tmp_path, {"//pkg:x_test": PASS_ONLY_XML}, statuses={"//pkg:x_test": status})
    result = run("--bep", path)
    assert result.stdout.splitlines()[-1] == "1 passed, 1 failed, 0 skipped"
    assert f"//pkg:x_test {status} with no failed case" in result.stderr


@pytest.mark.parametrize(
    "status",
    ["PASSED", "FLAKY", "NO_STATUS", "TIMEOUT", "INCOMPLETE", "FAILED", "FAILED_TO_BUILD"],
)
def test_a_target_counts_as_failed_exactly_when_the_verdict_fails_it(
    tmp_path: Path, status: str
) -> None:
    path = bep(tmp_path, {"//pkg:x_test": PASS_ONLY_XML}, statuses={"//pkg:x_test": status})
    judged = verdict.verdict_of(results.read_run(str(path)), registry=_NoDeviations())
    failed_by_verdict = f"TARGET {status}: //pkg:x_test" in judged.problems
    summary = run("--bep", path).stdout.splitlines()[-1]
    assert summary == f"1 passed, {int(failed_by_verdict)} failed, 0 skipped"
    assert failed_by_verdict == (status != "PASSED")


class _NoDeviations:
    """A deviation registry that lists nothing (these runs have no xfail)."""

    def by_id(self) -> dict:
        return {}

    def lists(self, dev: object, label: str, case: str) -> bool:
        return False
