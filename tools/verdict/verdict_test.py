"""verdict.verdict_of(): every target, every case and Bazel's exit code count; rows only label.

One test per hole the verdict once had: each plants the hole in a small synthetic run and
asserts the verdict is FAIL, naming it.
"""

import subprocess
import sys
from pathlib import Path

import conformance_check
import fake_runs
import pytest
import results
import verdict
from fake_runs import case_xml, junit

LLVM = {"tvm_target": "llvm"}
REGISTRY = fake_runs.Registry(
    fake_runs.deviation("ffi-listed", ("//pkg:a_test_llvm :: test_known[llvm]",)),
    fake_runs.deviation(
        "robust-family", ("//pkg:a_test_llvm :: test_family[*-cpp]",), kind="crash"
    ),
)
GOOD = {
    "//pkg:a_test_llvm": junit(
        [
            case_xml("test_ok[llvm]", properties=LLVM),
            case_xml("test_known[llvm]", "xfailed", "deviation ffi-listed: x", properties=LLVM),
            case_xml(
                "test_family[OSError-cpp]", "xfailed", "deviation robust-family: x", properties=LLVM
            ),
        ]
    )
}


def _verdict(tmp_path: Path, tests: dict[str, str], **kwargs) -> verdict.Verdict:
    run = results.read_run(fake_runs.archive(tmp_path, tests, **kwargs))
    return verdict.verdict_of(run, REGISTRY)


def test_a_clean_run_passes_and_counts_every_case(tmp_path: Path) -> None:
    result = _verdict(tmp_path, GOOD)
    assert result.passed, result.problems
    assert result.outcomes == {"passed": 1, "xfailed": 2}
    assert result.statuses == {"PASSED": 1}
    assert result.line().startswith("verdict: PASS: 1 targets (1 PASSED), 3 cases")


def test_a_failing_case_in_no_conformance_row_fails_the_verdict(tmp_path: Path) -> None:
    tests = {**GOOD, "//pkg:unmapped_test": junit([case_xml("test_nobody_maps", "failed")])}
    result = _verdict(tmp_path, tests)
    rows = conformance_check.parse_rows(
        "| seed | behaviour | test |\n|---|---|---|\n"
        "| 001 | ok | `//pkg:a_test_llvm :: test_ok[llvm]` |\n"
    )
    run = results.read_run(fake_runs.archive(tmp_path, tests))
    with_rows = verdict.verdict_of(run, REGISTRY, rows)
    for v in (result, with_rows):
        assert not v.passed
        assert any("FAILED: //pkg:unmapped_test :: test_nobody_maps" in p for p in v.problems)
        assert "TARGET FAILED: //pkg:unmapped_test" in v.problems


def test_an_empty_run_fails(tmp_path: Path) -> None:
    result = _verdict(tmp_path, {})
    assert not result.passed
    assert any(p.startswith("EMPTY RUN") for p in result.problems)


def test_bazel_exit_code_counts_even_when_every_case_passed(tmp_path: Path) -> None:
    result = _verdict(tmp_path, GOOD, exit_code=1)
    assert result.problems == ["BAZEL EXIT 1: the invocation did not succeed"]


def test_a_target_that_failed_to_build_fails(tmp_path: Path) -> None:
    result = _verdict(tmp_path, GOOD, not_built=("//cpp:broken_test",))
    assert result.problems == ["TARGET FAILED_TO_BUILD: //cpp:broken_test"]


def test_a_target_status_other_than_passed_fails_even_with_clean_cases(tmp_path: Path) -> None:
    result = _verdict(tmp_path, GOOD, statuses={"//pkg:a_test_llvm": "FLAKY"})
    assert result.problems == ["TARGET FLAKY: //pkg:a_test_llvm"]


def test_a_deviation_id_on_a_case_it_does_not_list_fails(tmp_path: Path) -> None:
    # A listed id, but on a case of another test: it must not count as that deviation.
    tests = {
        **GOOD,
        "//python/tests/ffi:hello_test": junit(
            [case_xml("test_myadd", "xfailed", "deviation robust-family: x")]
        ),
    }
    result = _verdict(tmp_path, tests)
    assert [p for p in result.problems if "MISATTRIBUTED" in p] == [
        "MISATTRIBUTED XFAIL: //python/tests/ffi:hello_test :: test_myadd xfails as deviation "
        "robust-family, which does not list this case (tvm_conformance.deviation_registry, "
        "its `tests`)"
    ]


def test_a_wildcard_binds_only_the_cases_it_matches(tmp_path: Path) -> None:
    cases = [
        case_xml(
            "test_family[KeyError-cpp]", "xfailed", "deviation robust-family: x", properties=LLVM
        ),
        case_xml(
            "test_family[KeyError-relax_vm]",
            "xfailed",
            "deviation robust-family: x",
            properties=LLVM,
        ),
    ]
    result = _verdict(tmp_path, {"//pkg:a_test_llvm": junit(cases)})
    assert len(result.problems) == 1 and "test_family[KeyError-relax_vm]" in result.problems[0]


def test_an_xfail_naming_no_listed_deviation_fails(tmp_path: Path) -> None:
    tests = {"//pkg:b_test": junit([case_xml("test_x", "xfailed", "known bug")])}
    result = _verdict(tmp_path, tests)
    assert any(p.startswith("UNLISTED XFAIL: //pkg:b_test :: test_x") for p in result.problems)


def test_a_strict_xpass_fails_naming_the_deviation(tmp_path: Path) -> None:
    tests = {
        "//pkg:a_test_llvm": junit(
            [case_xml("test_known[llvm]", "xpass", "deviation ffi-listed: x", properties=LLVM)]
        )
    }
    result = _verdict(tmp_path, tests)
    assert any(
        "XPASS: //pkg:a_test_llvm :: test_known[llvm] passed: deviation ffi-listed" in p
        for p in result.problems
    )


@pytest.mark.parametrize("failing_run", [2, 3])
def test_runs_per_test_a_failure_in_any_run_fails_the_case(
    tmp_path: Path, failing_run: int
) -> None:
    ok = junit([case_xml("test_ok[llvm]", properties=LLVM)])
    bad = junit([case_xml("test_ok[llvm]", "failed", "flaky", properties=LLVM)])
    runs = [ok, ok]
    runs[failing_run - 2] = bad
    run = results.read_run(
        fake_runs.archive(
            tmp_path,
            {"//pkg:a_test_llvm": ok},
            extra_runs={"//pkg:a_test_llvm": runs},
            statuses={"//pkg:a_test_llvm": "PASSED"},  # even if Bazel's summary said so
        )
    )
    case = run.targets["//pkg:a_test_llvm"].case("test_ok[llvm]")
    assert case is not None and case.outcome == "failed"
    result = verdict.verdict_of(run, REGISTRY)
    assert result.outcomes == {"failed": 1}
    assert any(p.startswith("FAILED: //pkg:a_test_llvm :: test_ok[llvm]") for p in result.problems)


def test_where_each_result_came_from_is_recorded(tmp_path: Path) -> None:
    tests = {
        **GOOD,
        "//pkg:c_test": junit([case_xml("test_c")]),
        "//pkg:d_test": junit([case_xml("test_d")]),
    }
    run = results.read_run(
        fake_runs.archive(
            tmp_path, tests, cached=("//pkg:c_test",), remote_cached=("//pkg:d_test",)
        )
    )
    assert {label: t.source for label, t in run.targets.items()} == {
        "//pkg:a_test_llvm": "executed",
        "//pkg:c_test": "action cache",
        "//pkg:d_test": "disk cache",
    }
    flagged = results.read_run(
        fake_runs.archive(
            tmp_path,
            tests,
            flags=["--remote_cache=grpc://127.0.0.1:1"],
            remote_cached=("//pkg:d_test",),
        )
    )
    assert flagged.targets["//pkg:d_test"].source == "remote cache"


def test_identity_key_separates_wheels_lanes_and_configs(tmp_path: Path) -> None:
    def key(**kwargs) -> str:
        flags = kwargs.pop("flags", [])
        record = fake_runs.venv_record(**kwargs)
        return results.read_run(
            fake_runs.archive(tmp_path, GOOD, flags=flags, venv_record=record)
        ).identity_key()

    base = key()
    assert base == key()  # same wheels, same config: comparable
    assert (
        len(
            {
                base,
                key(tvm_sha="c" * 64),
                key(ffi_sha="d" * 64),
                key(lane="ffi_next"),
                key(flags=["--//tools/config:cuda"]),
                key(flags=["--//tools/config:asan"]),
            }
        )
        == 6
    )


def test_a_gpu_runner_run_cannot_pass_by_skipping_its_cuda_cases(tmp_path: Path) -> None:
    tests = {
        "//pkg:b_test_cuda": junit(
            [case_xml("test_run[cuda]", "skipped", "no cuda:0", properties={"tvm_target": "cuda"})]
        ),
        "//pkg:c_test_llvm": junit(
            [case_xml("test_x[llvm]", "skipped", "no torch", properties=LLVM)]
        ),
    }
    gpu = ["--//tools/config:cuda", "--//tools/config:require_gpu"]
    assert _verdict(tmp_path, tests, flags=gpu).problems == [
        "SKIPPED ON A GPU RUNNER: //pkg:b_test_cuda :: test_run[cuda]: no cuda:0"
    ]
    assert _verdict(tmp_path, tests, flags=["--//tools/config:cuda"]).passed


@pytest.mark.parametrize(("outcome", "code"), [("passed", 0), ("failed", 1)])
def test_command_line_prints_the_verdict_and_exits_with_it(
    tmp_path: Path, outcome: str, code: int
) -> None:
    """What ./bazelw runs after each test: standard library only (-E -S: no PYTHONPATH, no
    site-packages), the verdict line last, exit 1 on FAIL."""
    run_dir = fake_runs.archive(
        tmp_path, {"//pkg:a_test_llvm": junit([case_xml("test_x[llvm]", outcome, properties=LLVM)])}
    )
    script = Path(verdict.__file__).with_name("verdict.py")
    proc = subprocess.run(
        [sys.executable, "-E", "-S", str(script), run_dir], capture_output=True, text=True
    )
    assert proc.returncode == code, proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("verdict: PASS" if code == 0 else "verdict: FAIL"), proc.stdout
    assert "1 targets" in last and "1 cases" in last
