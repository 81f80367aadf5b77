"""The kit's gtest main records the test filter in effect, where tools/verdict reads it.

A real googletest binary of the kit (//cpp/tests:hello_test, linked by tvm_cc_test with
//tools/build_defs:gtest_main) runs three ways: unfiltered, with GTEST_FILTER (what
`--test_env=GTEST_FILTER=...` gives it) and with TESTBRIDGE_TEST_ONLY (what Bazel's
`--test_filter` gives it). Its XML report, read by tools/verdict/results.py, carries the
filter; run_identity labels a filtered run partial, naming the target.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import results
import run_identity

from tvm_conformance.runfiles import rlocation

LABEL = "//cpp/tests:hello_test"


def _report(tmp_path: Path, **env: str) -> tuple[list[results.Case], dict[str, str], str]:
    xml = tmp_path / "report.xml"
    environ = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GTEST_FILTER", "TESTBRIDGE_TEST_ONLY", "XML_OUTPUT_FILE")
        and not k.startswith("TEST_SHARD")
        and k != "TEST_TOTAL_SHARDS"
    }
    proc = subprocess.run(
        [rlocation("cpp/tests/hello_test"), f"--gtest_output=xml:{xml}"],
        env={**environ, **env},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cases, props, _, producer = results.read_junit_full(str(xml))
    return cases, props, producer


def _partial(cases: list[results.Case], props: dict[str, str]) -> list[str]:
    target = results.TargetResult(LABEL, "PASSED", False, 0.0, cases=cases)
    target.suite_properties, target.producers = props, [results.GOOGLETEST]
    run = results.Run("x", {LABEL: target}, {}, "default", meta={"partial": []})
    return run_identity.deselected(run)


def test_an_unfiltered_run_records_the_whole_filter(tmp_path: Path) -> None:
    cases, props, producer = _report(tmp_path)
    assert producer == results.GOOGLETEST
    assert props["gtest_filter"] == "*"
    assert len(cases) >= 4
    assert _partial(cases, props) == []


@pytest.mark.parametrize("variable", ["GTEST_FILTER", "TESTBRIDGE_TEST_ONLY"])
def test_a_filtered_run_records_its_filter_and_is_partial(tmp_path: Path, variable: str) -> None:
    cases, props, _ = _report(tmp_path, **{variable: "Hello.CallHello*"})
    assert [c.name for c in cases] == ["CallHelloPassesHelloWorld"]
    assert props["gtest_filter"] == "Hello.CallHello*"
    assert _partial(cases, props) == [f"{LABEL}: googletest filter 'Hello.CallHello*'"]
