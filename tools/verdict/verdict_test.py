"""verdict.verdict_of(): every target, every case and Bazel's exit code count; rows only label.

One test per hole the verdict once had: each plants the hole in a small synthetic run and
asserts the verdict is FAIL, naming it.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import conformance_check
import fake_runs
import pytest
import report_model
import results
import run_identity
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
        case_xml("test_other[llvm]", properties=LLVM),
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
        return run_identity.identity_key(
            results.read_run(fake_runs.archive(tmp_path, GOOD, flags=flags, venv_record=record))
        )

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
                key(python="3.12.1", torch="2.13.0+cpu"),
                key(python="3.11.7", torch="2.13.0+cpu"),
                key(python="3.11.7", torch="2.13.0"),
            }
        )
        == 9
    )


def test_a_gpu_runner_run_cannot_pass_by_skipping_its_cuda_cases(tmp_path: Path) -> None:
    tests = {
        "//pkg:b_test_cuda": junit(
            [
                case_xml(
                    "test_run[cuda]",
                    "skipped",
                    "no cuda:0",
                    properties={"tvm_target": "cuda", verdict.UNAVAILABLE_TARGET_PROPERTY: "cuda"},
                )
            ]
        ),
        "//pkg:c_test_llvm": junit(
            [
                case_xml("test_x[llvm]", "skipped", "no torch", properties=LLVM),
                case_xml("test_y[llvm]", properties=LLVM),
            ]
        ),
    }
    gpu = ["--//tools/config:cuda", "--//tools/config:require_gpu"]
    suite = {"source": "bazel query", "targets": ["//pkg:b_test_cuda"]}
    assert _verdict(tmp_path, tests, flags=gpu, gpu_suite=suite).problems == [
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


# --- Issue 36: a verdict with no blind spots -------------------------------------------------
# Each test plants one hole and asserts the verdict (or the report) sees it.
B_FAILS = {
    "//pkg:a_test": junit([case_xml("test_a")]),
    "//pkg:b_test": junit([case_xml("test_b", "failed", "b is broken")]),
}


def test_identity_names_the_python_and_the_torch_build_and_its_lock() -> None:
    import archive

    record = fake_runs.venv_record(python="3.12.1", torch="2.13.0")
    record.update(lock="//third_party/python:requirements_gpu.lock")
    record["lock_instead_of"] = "//third_party/python:requirements.lock"
    identity = archive.identity_of(record, "default")
    assert identity["python"] == "3.12.1"
    assert identity["torch"] == {
        "version": "2.13.0",
        "lock": "//third_party/python:requirements_gpu.lock",
        "instead_of": "//third_party/python:requirements.lock",
    }
    # A record without them (an older venv) names neither.
    assert not {"python", "torch"} & set(archive.identity_of(fake_runs.venv_record(), "default"))


def test_the_column_title_names_the_python_and_an_index_torch(tmp_path: Path) -> None:
    own = fake_runs.venv_record(python="3.11.7", torch="2.13.0+cpu")
    stock_pip = fake_runs.venv_record(python="3.12.1", torch="2.13.0")
    stock_pip.update(lock="//gpu.lock", lock_instead_of="//cpu.lock")
    titles = [
        report_model.column_title(
            results.read_run(fake_runs.archive(tmp_path, GOOD, venv_record=record))
        )
        for record in (own, stock_pip, fake_runs.venv_record())
    ]
    assert titles == [
        "lane default · cpu · Python 3.11.7",
        "lane default · cpu · Python 3.12.1 · torch 2.13.0 (index)",
        "lane default · cpu",  # an older record names neither
    ]


def test_negative_patterns_and_filters_are_part_of_the_identity(tmp_path: Path) -> None:
    def run(**kwargs) -> results.Run:
        return results.read_run(fake_runs.archive(tmp_path, GOOD, **kwargs))

    whole = run()
    assert run_identity.partial(whole) == [] and run_identity.selection(whole) == []
    keys = {
        run_identity.identity_key(whole),
        run_identity.identity_key(run(patterns=("//...", "-//pkg:b_test"))),
        run_identity.identity_key(run(flags=["--test_tag_filters=-gpu"])),
        run_identity.identity_key(run(flags=["--test_filter=test_a*"])),
        run_identity.identity_key(run(flags=["--runs_per_test=2"])),
        run_identity.identity_key(run(patterns=("//pkg/...",))),
    }
    assert len(keys) == 6, keys
    excluded = run(patterns=("//...", "-//pkg:b_test"))
    assert run_identity.patterns(excluded) == "//... -//pkg:b_test"
    assert run_identity.partial(excluded) == ["-//pkg:b_test"]
    assert run_identity.partial(run(flags=["--test_tag_filters=-gpu"])) == [
        "--test_tag_filters=-gpu"
    ]
    assert run_identity.partial(run(patterns=("//pkg/...",))) == ["not //..."]
    assert run_identity.partial(run(patterns=("//pkg/...", "-//pkg:x"))) == [
        "not //...",
        "-//pkg:x",
    ]
    # --runs_per_test runs every case, more often: its own identity, not partial.
    assert run_identity.partial(run(flags=["--runs_per_test=2"])) == []


def test_a_partial_run_never_replaces_the_whole_run_of_its_wheel(tmp_path: Path) -> None:
    # Planted (issue 36, point 1): A runs //... and b_test fails; B, same wheel, later,
    # leaves b_test out. The report of the archive directory must still show A and fail.
    record = fake_runs.venv_record()
    a = fake_runs.archive(tmp_path, B_FAILS, venv_record=record, exit_code=3)
    b = fake_runs.archive(
        tmp_path,
        {"//pkg:a_test": B_FAILS["//pkg:a_test"]},
        venv_record=record,
        patterns=("//...", "-//pkg:b_test"),
        start_ms=1_795_000_000_000 + 3_600_000,
    )
    runs = [results.read_run(d) for d in results.runs_in(str(Path(a).parent))]
    built = report_model.build(runs, [], REGISTRY)
    assert [c["run"] for c in built["columns"]] == [Path(a).name]
    assert built["partial_left_out"] == [Path(b).name]
    assert not built["passed"]
    # Named on its own, B is shown, and its title and verdict line say partial.
    named = report_model.build([results.read_run(b)], [], REGISTRY, every=True)
    (column,) = named["columns"]
    assert column["title"] == "lane default · cpu · //... -//pkg:b_test · PARTIAL: -//pkg:b_test"
    assert column["verdict"]["line"].startswith(
        "verdict: PARTIAL PASS (lane default · cpu · //... -//pkg:b_test · "
        "PARTIAL: -//pkg:b_test): 1 targets (1 PASSED)"
    )
    # verdict.py's own line (./bazelw) says it too.
    line = verdict.verdict_of(results.read_run(b), REGISTRY).line(
        run_identity.identity_key(results.read_run(b))
    )
    assert "PARTIAL: -//pkg:b_test" in line


def test_report_command_exits_1_when_a_later_partial_run_hides_a_failure(tmp_path: Path) -> None:
    record = fake_runs.venv_record()
    fake_runs.archive(tmp_path, B_FAILS, venv_record=record)
    fake_runs.archive(
        tmp_path,
        {"//pkg:a_test": B_FAILS["//pkg:a_test"]},
        venv_record=record,
        patterns=("//...", "-//pkg:b_test"),
        start_ms=1_795_000_000_000 + 3_600_000,
    )
    (tmp_path / "conformance.md").write_text("")
    script = Path(verdict.__file__).with_name("report.py")
    proc = subprocess.run(
        [sys.executable, str(script), "--conformance", str(tmp_path / "conformance.md"),
         "--out", str(tmp_path / "out"), str(tmp_path / "conformance-runs")],
        capture_output=True, text=True, env={"PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "verdict: FAIL (lane default · cpu)" in proc.stdout
    assert "never a default column" in proc.stdout


GPU_FLAGS = ["--//tools/config:cuda", "--//tools/config:require_gpu"]
CUDA_CASE = case_xml("test_run[cuda]", properties={"tvm_target": "cuda"})
LLVM_ONLY = {"//pkg:c_test_llvm": junit([case_xml("test_x[llvm]", properties=LLVM)])}


def test_a_gpu_run_with_its_cuda_targets_filtered_out_fails(tmp_path: Path) -> None:
    # Planted (point 2): --test_tag_filters=-gpu drops every _cuda target; the build graph
    # (the archive's gpu_suite) says which should have run.
    suite = {"source": "bazel query", "targets": ["//pkg:b_test_cuda"]}
    result = _verdict(
        tmp_path, LLVM_ONLY, flags=[*GPU_FLAGS, "--test_tag_filters=-gpu"], gpu_suite=suite
    )
    assert not result.passed
    assert (
        "GPU TARGET NOT RUN: //pkg:b_test_cuda (bazel query has it; this run did not run it)"
        in (result.problems)
    )
    # A GPU run that records nothing about its suite proves nothing.
    unproven = _verdict(tmp_path, LLVM_ONLY, flags=GPU_FLAGS)
    assert any(p.startswith("GPU RUN UNPROVEN") for p in unproven.problems)
    empty = _verdict(tmp_path, LLVM_ONLY, flags=GPU_FLAGS, gpu_suite={"source": "q", "targets": []})
    assert any(p.startswith("GPU RUN WITHOUT CUDA TARGETS") for p in empty.problems)
    # Every cuda target ran and none skipped: PASS.
    ran = {**LLVM_ONLY, "//pkg:b_test_cuda": junit([CUDA_CASE])}
    assert _verdict(tmp_path, ran, flags=GPU_FLAGS, gpu_suite=suite).passed


def test_a_gpu_runner_bundle_is_held_to_its_tests_json(tmp_path: Path) -> None:
    # A bundle's archive records the tests of its tests.json (run_bundle.py).
    suite = {"source": "tests.json", "targets": ["//pkg:b_test_cuda", "//pkg:d_test_cuda"]}
    result = _verdict(
        tmp_path, {"//pkg:b_test_cuda": junit([CUDA_CASE])}, flags=GPU_FLAGS, gpu_suite=suite
    )
    assert result.problems == [
        "GPU TARGET NOT RUN: //pkg:d_test_cuda (tests.json has it; this run did not run it)"
    ]


def test_archive_records_the_cuda_suite_from_bazel_query(tmp_path: Path) -> None:
    import archive

    fake = tmp_path / "bazel"
    fake.write_text(
        '#!/bin/sh\n[ "$1" = query ] || exit 9\necho //pkg:b_test_cuda\necho //pkg:a_test_cuda\n'
    )
    fake.chmod(0o755)
    record = archive.cuda_suite(str(fake), str(tmp_path))
    assert record["targets"] == ["//pkg:a_test_cuda", "//pkg:b_test_cuda"]
    assert "tvm_cuda" in record["source"] and "manual" in record["source"]
    failing = tmp_path / "failing"
    failing.write_text("#!/bin/sh\nexit 2\n")
    failing.chmod(0o755)
    assert "targets" not in archive.cuda_suite(str(failing), str(tmp_path))
    # archive.py's command line queries only for a GPU run.
    bep = fake_runs.write_bep(tmp_path / "w", LLVM_ONLY, GPU_FLAGS)
    argv = ["--bep", str(bep), "--root", str(tmp_path / "runs"), "--exit-code", "0"]
    argv += ["--start", "1", "--end", "2", "--bazel", str(fake), "--", "test", "//..."]
    script = Path(archive.__file__)
    out = subprocess.run(
        [sys.executable, "-E", "-S", str(script), *argv], capture_output=True, text=True, check=True
    )
    meta = json.loads((Path(out.stdout.strip()) / "run.json").read_text())
    assert meta["gpu_suite"]["targets"] == ["//pkg:a_test_cuda", "//pkg:b_test_cuda"]


LISTED = case_xml("test_known[llvm]", "xfailed", "deviation ffi-listed: x", properties=LLVM)
UNNAMED = case_xml("test_known[llvm]", "xfailed", "flaky, who knows", properties=LLVM)


@pytest.mark.parametrize("order", ["listed first", "listed last"])
def test_runs_per_test_an_unlisted_xfail_in_any_run_fails_whatever_the_order(
    tmp_path: Path, order: str
) -> None:
    # Planted (point 6): run 1 xfails under the listed deviation, run 2 xfails naming none.
    runs = [junit([LISTED]), junit([UNNAMED])]
    if order == "listed last":
        runs.reverse()
    result = _verdict(
        tmp_path, {"//pkg:a_test_llvm": runs[0]}, extra_runs={"//pkg:a_test_llvm": runs[1:]}
    )
    assert not result.passed
    assert any(
        p.startswith("UNLISTED XFAIL: //pkg:a_test_llvm :: test_known[llvm]")
        for p in result.problems
    )
    run = results.read_run(
        fake_runs.archive(
            tmp_path, {"//pkg:a_test_llvm": runs[0]}, extra_runs={"//pkg:a_test_llvm": runs[1:]}
        )
    )
    case = run.targets["//pkg:a_test_llvm"].case("test_known[llvm]")
    assert case is not None and case.deviation is None  # the worse run stands for the case
    assert len(case.runs()) == 2


@pytest.mark.parametrize("order", ["xfail first", "skip first"])
def test_runs_per_test_a_skip_on_a_gpu_runner_fails_whatever_the_order(
    tmp_path: Path, order: str
) -> None:
    registry = fake_runs.Registry(
        fake_runs.deviation("ffi-cuda-listed", ("//pkg:b_test_cuda :: test_run[cuda]",))
    )
    props = {"tvm_target": "cuda"}
    xfail = case_xml("test_run[cuda]", "xfailed", "deviation ffi-cuda-listed: x", properties=props)
    skip = case_xml("test_run[cuda]", "skipped", "no cuda:0", properties=props)
    runs = [junit([xfail]), junit([skip])]
    if order == "skip first":
        runs.reverse()
    suite = {"source": "q", "targets": ["//pkg:b_test_cuda"]}
    run = results.read_run(
        fake_runs.archive(
            tmp_path,
            {
                "//pkg:b_test_cuda": runs[0],
                "//pkg:c_test_llvm": junit([case_xml("test_y[llvm]", properties=LLVM)]),
            },
            GPU_FLAGS,
            extra_runs={"//pkg:b_test_cuda": runs[1:]},
            gpu_suite=suite,
        )
    )
    result = verdict.verdict_of(run, registry)
    assert result.problems == [
        "SKIPPED ON A GPU RUNNER: //pkg:b_test_cuda :: test_run[cuda]: no cuda:0"
    ]
    # The report's cell is the same whatever the order.
    cell = report_model.outcome_of("//pkg:b_test_cuda", "test_run[cuda]", run, registry)
    assert cell is not None and cell.status == "deviation"


GTEST_EMPTY = '<?xml version="1.0"?><testsuites tests="0" name="AllTests"></testsuites>'
SUITE_ERROR = (
    '<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="0" errors="1">'
    '<error message="collection failed: ImportError"/></testsuite></testsuites>'
)


def test_a_target_that_reports_no_case_is_a_problem(tmp_path: Path) -> None:
    # Planted (point 7): a filtered or empty gtest binary exits 0 with no case.
    result = _verdict(tmp_path, {**GOOD, "//cpp:empty_test": GTEST_EMPTY})
    assert not result.passed
    assert result.problems == [
        "NO CASES: //cpp:empty_test passed without reporting a single test case (a filtered or "
        "empty binary); tag it `empty_on_purpose` if that is intended"
    ]
    # Declared empty on purpose (its tags in the build events): no problem.
    declared = _verdict(
        tmp_path,
        {**GOOD, "//cpp:empty_test": GTEST_EMPTY},
        tags={"//cpp:empty_test": ["cc_test", verdict.EMPTY_ON_PURPOSE_TAG]},
    )
    assert declared.passed, declared.problems


def test_a_suite_level_error_is_a_problem_even_when_the_target_passed(tmp_path: Path) -> None:
    result = _verdict(tmp_path, {**GOOD, "//pkg:e_test": SUITE_ERROR})
    assert "SUITE ERROR: //pkg:e_test: error: collection failed: ImportError" in result.problems
    assert not result.passed


# --- Issue 44: nothing that did not run passes -----------------------------------------------
NO_LLVM = "target 'llvm' cannot run here: the llvm runtime is not enabled in this TVM build"
NO_GPU = "target 'cuda' cannot run here: no GPU: the cuda driver library does not load"


def test_a_run_whose_every_case_skipped_fails(tmp_path: Path) -> None:
    """The planted run of the issue: 2 targets, 3 cases, all skipped, bazel exit 0."""
    tests = {
        "//pkg:a_test": junit([case_xml("test_a", "skipped", "no torch")]),
        "//pkg:b_test": junit(
            [case_xml("test_b", "skipped", "no torch"), case_xml("test_c", "skipped", "later")]
        ),
    }
    result = _verdict(tmp_path, tests)
    assert not result.passed
    assert [p for p in result.problems if p.startswith("NOTHING PASSED")] == [
        "NOTHING PASSED: not one of the run's 3 cases passed; a run that checked nothing is "
        "never PASS"
    ]
    assert "skipped 3 (2: no torch; 1: later)" in result.line()


@pytest.mark.parametrize(
    ("flags", "skipped", "problem"),
    [
        ([], "llvm", True),  # a TVM without LLVM, on the default config
        (["--//tools/config:cuda"], "llvm", True),
        (["--//tools/config:cuda"], "cuda", False),  # --config=cuda without a GPU stays green
        ([], "", False),  # a skip the plugin did not classify stays allowed, with its reason
    ],
)
def test_a_skip_of_a_required_target_is_a_problem(
    tmp_path: Path, flags: list[str], skipped: str, problem: bool
) -> None:
    # The same reason text either way: the property classifies, never the text.
    props = {"tvm_target": skipped or "llvm"}
    if skipped:
        props[verdict.UNAVAILABLE_TARGET_PROPERTY] = skipped
    reason = NO_GPU if skipped == "cuda" else NO_LLVM
    cases = [case_xml(f"test_x[{skipped or 'llvm'}]", "skipped", reason, properties=props)]
    if not skipped:  # beside a case that ran (a target whose every case skipped: ALL SKIPPED)
        cases.append(case_xml("test_y[llvm]", properties={"tvm_target": "llvm"}))
    tests = {f"//pkg:a_test_{skipped or 'llvm'}": junit(cases), **LLVM_ONLY}
    result = _verdict(tmp_path, tests, flags=flags)
    assert result.passed is not problem, result.problems
    required = [p for p in result.problems if p.startswith("REQUIRED TARGET SKIPPED")]
    assert len(required) == int(problem)
    assert f"skipped 1 (1: {reason[:60]}" in result.line()


def test_every_config_requires_llvm_and_the_gpu_runner_cuda() -> None:
    assert verdict.required_targets("cpu") == ("llvm",)
    assert verdict.required_targets("cuda+asan") == ("llvm",)
    assert verdict.required_targets("cuda_gpu") == ("llvm", "cuda")
    assert verdict.required_targets("a config from later") == ("llvm",)


def test_the_property_name_is_the_plugins() -> None:
    from tvm_conformance import targets

    assert verdict.UNAVAILABLE_TARGET_PROPERTY == targets.UNAVAILABLE_TARGET_PROPERTY


def test_the_verdict_line_always_shows_the_skipped_count(tmp_path: Path) -> None:
    assert ", skipped 0, bazel exit 0" in _verdict(tmp_path, LLVM_ONLY).line()


# --- Issue 44: partial by what ran, not by options -------------------------------------------
SUITE = {
    "source": "bazel cquery ...",
    "targets": ["//python/tests/ffi:a_test", "//python/tests/relax:b_test", "//pkg:c_test_llvm"],
}
RELAX_ONLY = {"//python/tests/relax:b_test": junit([case_xml("test_b")]), **LLVM_ONLY}


@pytest.mark.parametrize(
    ("args", "patterns"),
    [
        (["--deleted_packages=python/tests/ffi"], ("//...",)),
        (["--target_pattern_file=p.txt"], ()),
        (["--some_option_from_later=x"], ("//...",)),
    ],
)
def test_a_run_that_ran_fewer_tests_than_the_suite_is_partial(
    tmp_path: Path, args: list[str], patterns: tuple[str, ...]
) -> None:
    """The planted runs of the issue: options no list knows still leave a test out."""
    result = _verdict(tmp_path, RELAX_ONLY, flags=args, patterns=patterns, suite=SUITE)
    assert result.passed, result.problems
    assert "1 of 3 suite tests not run (//python/tests/ffi:a_test)" in result.partial
    assert "PARTIAL" in result.line()


def test_a_run_of_the_whole_suite_is_whole_and_an_unrecorded_suite_is_not(tmp_path: Path) -> None:
    whole = {**RELAX_ONLY, "//python/tests/ffi:a_test": junit([case_xml("test_a")])}
    assert _verdict(tmp_path, whole, suite=SUITE).partial == []
    assert _verdict(tmp_path, whole, suite={"source": "none", "error": "no bazel"}).partial == [
        "suite not recorded (no bazel)"
    ]


def test_the_suite_is_asked_for_under_the_runs_flags_not_its_selection(tmp_path: Path) -> None:
    import archive

    args = ["--output_base=/x", "test", "--config=cuda", "--deleted_packages=a", "--", "//a/..."]
    command = archive.suite_command("bazel-4", [*args[:-2], "--target_pattern_file=p", "//b"])
    assert command[:4] == ["bazel-4", "--output_base=/x", "cquery", "--config=cuda"]
    assert command[-1] == archive.SUITE_QUERY and "manual" in command[-1]
    assert not any("deleted_packages" in w or "pattern_file" in w or w == "//b" for w in command)
    fake = tmp_path / "bazel"
    fake.write_text(
        '#!/bin/sh\n[ "$1" = cquery ] || exit 9\n'
        'echo "//pkg:b_test False"\necho "//pkg:c_test_cuda True"\necho "//pkg:a_test False"\n'
    )
    fake.chmod(0o755)
    record = archive.whole_suite(str(fake), str(tmp_path), ["test", "//..."])
    assert record["targets"] == ["//pkg:a_test", "//pkg:b_test"]  # incompatible left out
    failing = tmp_path / "failing"
    failing.write_text("#!/bin/sh\necho 'ERROR: no such package' >&2\nexit 2\n")
    failing.chmod(0o755)
    record = archive.whole_suite(str(failing), str(tmp_path), ["test", "//..."])
    assert "targets" not in record and record["error"] == "ERROR: no such package"
    # A query that fails once and then answers is the suite: it is asked a second time.
    once = tmp_path / "once"
    once.write_text(
        '#!/bin/sh\nif [ ! -e "$0.failed" ]; then : >"$0.failed"; echo "ERROR: x" >&2; exit 1; fi\n'
        'echo "//pkg:a_test False"\n'
    )
    once.chmod(0o755)
    record = archive.whole_suite(str(once), str(tmp_path), ["test", "//..."])
    assert record["targets"] == ["//pkg:a_test"] and "error" not in record


# --- Issue 50: a target whose cases all skipped -----------------------------------------------
def _skipped(name: str, **properties: str) -> str:
    return case_xml(name, "skipped", "needs a feature", properties=properties)


@pytest.mark.parametrize(
    ("flags", "cases", "tags", "problem"),
    [
        # 2 cases skipped for a reason no config allows: the target checked nothing.
        ([], [_skipped("test_a"), _skipped("test_b")], [], True),
        # One case ran: skips beside it are allowed, with their reasons.
        ([], [_skipped("test_a"), case_xml("test_b")], [], False),
        # A _cuda target without a GPU under --config=cuda: each skip names cuda, which the
        # config does not require.
        (
            ["--//tools/config:cuda"],
            [_skipped("test_a[cuda]", tvm_target="cuda", tvm_unavailable_target="cuda")],
            [],
            False,
        ),
        # Tagged as allowed, with the reason.
        ([], [_skipped("test_a")], ["may_skip_all=runtime-only cases skip outside deploy"], False),
        # The tag without a reason allows nothing.
        ([], [_skipped("test_a")], ["may_skip_all="], True),
    ],
)
def test_a_target_whose_cases_all_skipped_is_a_problem_unless_allowed(
    tmp_path: Path, flags: list[str], cases: list[str], tags: list[str], problem: bool
) -> None:
    label = "//pkg:b_test_cuda" if flags else "//pkg:b_test"
    tests = {label: junit(cases), **GOOD}
    result = _verdict(tmp_path, tests, flags=flags, tags={label: tags})
    found = [p for p in result.problems if p.startswith("ALL SKIPPED")]
    if problem:
        assert found == [
            f"ALL SKIPPED: {label}: all {len(cases)} cases skipped ({len(cases)}: needs a "
            "feature); none ran. Make them run, or tag the target `may_skip_all=<why>` if that "
            "is its design"
        ]
    else:
        assert found == [] and result.passed, result.problems


def test_a_generated_case_worse_than_its_expectation_is_a_regression_of_its_own(
    tmp_path: Path,
) -> None:
    # The tier's message (op_corpus_tier_test): one line per case, pytest indents them.
    message = (
        "AssertionError: 2 case(s) of the default lane's expectations changed:\n"
        "  regression: op|add|float32|fx|0: correct -> refused import: AssertionError (x)\n"
        "  stale expectation: op|sub|float32|fx|1: correct -> no result\n"
        "assert not [...]"
    )
    tier = "//python/tests/op_corpus:op_corpus_tier_test"
    tests = {**GOOD, tier: junit([case_xml("test_tier_chunk[op-0of7]", "failed", message)])}
    result = _verdict(tmp_path, tests, statuses={tier: "FAILED"}, exit_code=3)
    case = f"{tier} :: test_tier_chunk[op-0of7]"
    regression = "op|add|float32|fx|0: correct -> refused import: AssertionError (x)"
    assert f"REGRESSION: {case}: {regression}" in result.problems
    stale = "stale expectation: op|sub|float32|fx|1: correct -> no result"
    assert f"STALE EXPECTATION: {case}: {stale}" in result.problems
    assert not any(p.startswith("FAILED:") for p in result.problems), result.problems
    assert {verdict.table_kind(p.split(":")[0]) for p in result.problems} <= set(verdict.WHOSE)


def test_improvements_on_a_users_wheel_are_counted_in_the_verdict_line(tmp_path: Path) -> None:
    tier = "//python/tests/op_corpus:op_corpus_tier_test"
    judged = {"pinned": False, "improvements": ["op|add|float32|fx|0: deviating x -> correct"]}
    pinned = {"pinned": True, "improvements": ["op|mul|float32|fx|0: deviating y -> correct"]}
    tests = {**GOOD, tier: junit([case_xml("test_tier_chunk[op-0of7]")])}
    outputs = {
        tier: {
            "expectations_op_corpus_op_0of7.json": json.dumps(judged),
            "expectations_op_corpus_op_1of7.json": json.dumps(pinned),
        }
    }
    result = _verdict(tmp_path, tests, outputs=outputs)
    assert result.passed, result.problems
    assert result.improvements == [
        f"{tier} :: op_corpus_op_0of7: op|add|float32|fx|0: deviating x -> correct"
    ]
    assert "1 improvement, " in result.line()


def test_a_users_registry_drift_is_counted_in_the_verdict_line(tmp_path: Path) -> None:
    run = results.read_run(fake_runs.archive(tmp_path, GOOD))
    plain = results.read_run(fake_runs.archive(tmp_path, GOOD))
    run.meta["identity"] = {
        "lane": "default",
        "registry_drift": {
            "against": "tools/registry_snapshot/default.json",
            "differences": ["x"] * 9,
            "counts": {
                "versions": {"added": 0, "removed": 0, "changed": 1},
                "globals": {"added": 5, "removed": 1, "changed": 0},
                "target_tags": {"added": 0, "removed": 0, "changed": 2},
            },
        },
    }
    result = verdict.verdict_of(run, REGISTRY)
    assert result.passed, result.problems
    assert result.drift == {"added": 5, "removed": 1, "changed": 2}
    assert "registry drift 8 (5 added, 2 changed, 1 removed), " in result.line()
    assert verdict.verdict_of(plain, REGISTRY).drift == {}


def test_regression_lines_are_read_from_the_report_where_pytest_shortened_the_message(
    tmp_path: Path,
) -> None:
    from xml.sax.saxutils import escape, quoteattr

    # pytest >= 8 shortens a long message attribute; the lines are in the element's text.
    message = (
        "AssertionError: 1 case(s) of the default lane's expectations changed:\n"
        "[+2 more lines; full report in element text]"
    )
    report = (
        "    def test_tier_chunk(kind):\n"
        "        # each `regression: <case>` line is a problem\n"
        "E       AssertionError: 1 case(s) of the default lane's expectations changed:\n"
        "E         regression: op|add|float32|fx|0: correct -> failing (boom)\n"
        "E       assert not ['regression: op|add|float32|fx|0: ...']\n"
    )
    tier = "//python/tests/op_corpus:op_corpus_tier_test"
    case = (
        '<testcase classname="x" name="test_tier_chunk[op-0of7]" time="1">'
        f"<failure message={quoteattr(message)}>{escape(report)}</failure></testcase>"
    )
    tests = {**GOOD, tier: junit([case])}
    result = _verdict(tmp_path, tests, statuses={tier: "FAILED"}, exit_code=3)
    changed = "op|add|float32|fx|0: correct -> failing (boom)"
    expected = f"REGRESSION: {tier} :: test_tier_chunk[op-0of7]: {changed}"
    assert [p for p in result.problems if "op_corpus_tier_test ::" in p] == [expected]
