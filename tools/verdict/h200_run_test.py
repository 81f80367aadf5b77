"""The verdict over a real GPU run: every `_cuda` target of the suite on an NVIDIA H200.

testdata/h200_2026-11-26/ holds the JUnit files of that run as it came back (main at a188e64,
the lane bundle's 16 targets plus the 3 it then lacked: 165 cases, 134 passed, 29 xfailed,
2 skipped), one `<package>/<target>.xml` per target. The archive made from them records the
suite as those 19 labels, frozen here, so the checks do not move with today's build graph.
"""

import copy
import xml.etree.ElementTree as ET
from pathlib import Path

import fake_runs
import results
import run_identity
import verdict

DATA = Path(__file__).parent / "testdata" / "h200_2026-11-26"
GPU_FLAGS = ["--//tools/config:cuda", "--//tools/config:require_gpu"]
# The suite's `_cuda` targets when the run was made (bazel query at a188e64).
SUITE = [
    "//cpp/tests:deploy_vm_test_cuda",
    "//python/tests/deploy:runtime_only_test_cuda",
    "//python/tests/ffi:device_tensor_test_cuda",
    "//python/tests/frontend:expected_ops_test_cuda",
    "//python/tests/frontend:functional_keywords_test_cuda",
    "//python/tests/frontend:mlp_test_cuda",
    "//python/tests/frontend:multi_output_test_cuda",
    "//python/tests/frontend:normalization_test_cuda",
    "//python/tests/frontend:op_translation_test_cuda",
    "//python/tests/frontend:output_mismatch_test_cuda",
    "//python/tests/frontend:seed_conv_softmax_test_cuda",
    "//python/tests/frontend:weight_binding_test_cuda",
    "//python/tests/relax:vm_callback_error_test_cuda",
    "//python/tests/relax:vm_callback_test_cuda",
    "//python/tests/relax:vm_calling_convention_test_cuda",
    "//python/tests/relax:vm_stateful_test_cuda",
    "//python/tests/relax:vm_storage_test_cuda",
    "//python/tests/targets:cuda_codegen_test_cuda",
    "//python/tests/targets:new_user_example_test_cuda",
]
# The two cases that skipped on the healthy GPU.
SKIPPED = {
    "//python/tests/targets:cuda_codegen_test_cuda": (
        "test_exported_library_without_cuda_runtime_fails_to_load_naming_cuda"
    ),
    "//python/tests/targets:new_user_example_test_cuda": (
        "test_host_only_numpy_round_trip[no-target]"
    ),
}


def h200_files() -> dict[str, str]:
    """label -> JUnit text of every target of the H200 run."""
    found = {}
    for path in sorted(DATA.rglob("*.xml")):
        package = path.parent.relative_to(DATA).as_posix()
        found[f"//{package}:{path.stem}"] = path.read_text(encoding="utf-8")
    return found


def without_skip(text: str, case: str) -> str:
    """The JUnit text with `case` passing instead of skipped."""
    root = ET.fromstring(text)
    for element in root.iter("testcase"):
        if element.get("name") == case:
            for skipped in element.findall("skipped"):
                element.remove(skipped)
    return ET.tostring(root, encoding="unicode")


def h200_verdict(tmp_path: Path, tests: dict[str, str]) -> verdict.Verdict:
    run_dir = fake_runs.archive(
        tmp_path,
        tests,
        flags=GPU_FLAGS,
        gpu_suite={"source": "bazel query at a188e64 (frozen)", "targets": list(SUITE)},
    )
    run = results.read_run(run_dir)
    assert run_identity.config(run) == "cuda_gpu"
    return verdict.verdict_of(run, verdict.load_registry())


def test_the_data_is_the_whole_run() -> None:
    assert sorted(h200_files()) == SUITE


def test_as_it_ran_the_verdict_fails_naming_exactly_the_two_skips(tmp_path: Path) -> None:
    result = h200_verdict(tmp_path, h200_files())
    assert not result.passed
    assert len(result.problems) == 2, result.problems
    for problem, (label, case) in zip(
        sorted(result.problems), sorted(SKIPPED.items()), strict=True
    ):
        assert problem.startswith(f"SKIPPED ON A GPU RUNNER: {label} :: {case}: "), problem
    assert result.statuses == {"PASSED": 19}
    assert result.outcomes == {"passed": 134, "xfailed": 29, "skipped": 2}


def test_with_the_two_cases_passing_the_verdict_passes(tmp_path: Path) -> None:
    tests = h200_files()
    for label, case in SKIPPED.items():
        tests[label] = without_skip(tests[label], case)
    result = h200_verdict(tmp_path, tests)
    assert result.passed, result.problems
    assert result.outcomes == {"passed": 136, "xfailed": 29}
    # Its JUnit files predate the selection record (the plugin's and the gtest main's): a
    # run that cannot show it deselected nothing is labelled partial, naming every target.
    assert result.line().startswith("verdict: PARTIAL PASS (PARTIAL: ")
    assert ": 19 targets (19 PASSED), 165 cases" in result.line()
    assert len(result.partial) == 19
    assert all("selection not recorded" in why for why in result.partial), result.partial


def test_with_a_cuda_target_missing_the_verdict_fails_naming_it(tmp_path: Path) -> None:
    tests = h200_files()
    for label, case in SKIPPED.items():
        tests[label] = without_skip(tests[label], case)
    for missing in ("//python/tests/frontend:op_translation_test_cuda", SUITE[0]):
        fewer = copy.copy(tests)
        del fewer[missing]
        work = tmp_path / missing.rpartition(":")[2]
        work.mkdir()
        result = h200_verdict(work, fewer)
        assert result.problems == [
            f"GPU TARGET NOT RUN: {missing} (bazel query at a188e64 (frozen) has it; "
            "this run did not run it)"
        ]
