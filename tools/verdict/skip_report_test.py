"""tools/verdict/skip_report.py: per-case counts and skip reasons from Bazel's JUnit XML."""

import json
import subprocess
import sys
from pathlib import Path

import fake_runs

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


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel / "test.xml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run(*args: str | Path) -> subprocess.CompletedProcess:
    # -E -S: no PYTHONPATH and no site-packages, so the tool must be standard library only
    # (not -I: the tool imports results.py from its own directory).
    return subprocess.run(
        [sys.executable, "-E", "-S", str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_counts_pytest_outcomes_with_final_summary_line(tmp_path: Path) -> None:
    xml = write(tmp_path, "pkg/a_test_cuda", PYTEST_XML)
    result = run(xml)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Test cases in 1 target(s): 1 passed, 2 failed, 2 skipped, 1 xfailed"
    assert lines[-1] == "1 passed, 2 failed, 2 skipped"


def test_groups_skips_by_reason_with_targets(tmp_path: Path) -> None:
    write(tmp_path, "pkg/a_test_cuda", PYTEST_XML)
    write(tmp_path, "pkg/b_test_cuda", PYTEST_XML)
    result = run("--testlogs", tmp_path)
    out = result.stdout
    assert "     2  target 'cuda' cannot run here: no cuda:0 device present\n" in out
    assert "     2  requires cuda: no GPU\n" in out  # pytest's "Skipped: " prefix dropped
    assert "in //pkg:a_test_cuda (1), //pkg:b_test_cuda (1)" in out
    assert out.splitlines()[-1] == "2 passed, 4 failed, 4 skipped"


def test_shard_directories_belong_to_their_target(tmp_path: Path) -> None:
    write(tmp_path, "pkg/sharded/shard_1_of_2", PYTEST_XML)
    write(tmp_path, "pkg/sharded/shard_2_of_2", PYTEST_XML)
    write(tmp_path, "pkg/both/shard_1_of_2_run_2_of_3", PYTEST_XML)
    result = run("--testlogs", tmp_path)
    assert "in //pkg:both (1), //pkg:sharded (2)" in result.stdout


def test_restricts_to_target_patterns(tmp_path: Path) -> None:
    write(tmp_path, "python/tests/targets/x_test_llvm", PASS_ONLY_XML)
    write(tmp_path, "python/tests/targets/x_test_cuda", PYTEST_XML)
    write(tmp_path, "python/tests/ffi/y_test", PASS_ONLY_XML)
    write(tmp_path, "python/tests/ffi/deep/z_test", PASS_ONLY_XML)

    def summary(*patterns: str) -> str:
        return run("--testlogs", tmp_path, *patterns).stdout.splitlines()[-1]

    assert summary() == "4 passed, 2 failed, 2 skipped"
    assert summary("//python/tests/targets:x_test_llvm") == "1 passed, 0 failed, 0 skipped"
    assert summary("//python/tests/targets:x_test") == "2 passed, 2 failed, 2 skipped"
    assert summary("//python/tests/ffi/...") == "2 passed, 0 failed, 0 skipped"
    assert summary("//python/tests/ffi:all") == "1 passed, 0 failed, 0 skipped"
    assert summary("--target", "//python/tests/ffi:y_test") == "1 passed, 0 failed, 0 skipped"


def test_reads_googletest_xml(tmp_path: Path) -> None:
    result = run(write(tmp_path, "cpp/tests/g_test", GTEST_XML))
    assert "     1  no device\n" in result.stdout
    assert "disabled (googletest DISABLED_)" in result.stdout
    assert result.stdout.splitlines()[-1] == "1 passed, 1 failed, 2 skipped"


def test_unreadable_xml_counts_as_failed_and_is_named(tmp_path: Path) -> None:
    bad = write(tmp_path, "pkg/broken", "<testsuites><testcase")
    result = run(bad)
    assert f"skip_report: cannot read {bad}" in result.stderr
    assert result.stdout.splitlines()[-1] == "0 passed, 1 failed, 0 skipped"


def test_without_inputs_is_a_usage_error() -> None:
    result = run()
    assert result.returncode == 2
    assert "give --testlogs DIR, --bep FILE, --run DIR or test.xml paths" in result.stderr


def test_missing_path_is_reported_not_fatal(tmp_path: Path) -> None:
    result = run(tmp_path / "no/such/test.xml")
    assert result.returncode == 0
    assert "no such file or directory" in result.stderr
    assert result.stdout.splitlines()[-1] == "0 passed, 0 failed, 0 skipped"


def test_build_event_file_limits_report_to_that_invocation(tmp_path: Path) -> None:
    current = write(tmp_path / "testlogs", "pkg/now_test", PYTEST_XML)
    write(tmp_path / "testlogs", "pkg/stale_test_cuda", PASS_ONLY_XML)  # an earlier run's
    events = [
        {"id": {"progress": {}}, "progress": {}},
        {
            "id": {"testResult": {"label": "//pkg:now_test", "run": 1, "shard": 1}},
            "testResult": {
                "testActionOutput": [
                    {"name": "test.log", "uri": "file:///nowhere/test.log"},
                    {"name": "test.xml", "uri": f"file://{current}"},
                ]
            },
        },
    ]
    bep = tmp_path / "bep.json"
    bep.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    result = run("--bep", bep, "--testlogs", tmp_path / "testlogs")
    assert "in //pkg:now_test (1)" in result.stdout
    assert result.stdout.splitlines()[-1] == "1 passed, 2 failed, 2 skipped"


def test_failed_target_without_a_failed_case_counts_as_failed(tmp_path: Path) -> None:
    """A usage error (pytest exit 4) leaves an XML without cases; the summary still fails."""
    empty = '<?xml version="1.0"?><testsuites><testsuite name="pytest"/></testsuites>'
    bep = fake_runs.write_bep(
        tmp_path, {"//pkg:usage_error_test": empty}, statuses={"//pkg:usage_error_test": "FAILED"}
    )
    result = run("--bep", bep)
    assert result.stdout.splitlines()[-1] == "0 passed, 1 failed, 0 skipped"
    assert "//pkg:usage_error_test FAILED with no failed case" in result.stderr
