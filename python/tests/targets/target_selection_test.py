"""Which targets a session runs on: TVM_TEST_TARGETS, defaults, bad entries, fallback."""

import os
from pathlib import Path

import pytest
import tvm.testing

import tvm_conformance
from tvm_conformance.targets import canonical_entry, from_environment
from tvm_conformance.testing import enabled_targets

# The inner sessions run through pytest's own pytester plugin (off by default).
pytest_plugins = ["pytester"]

IMPLICIT = """
def test_uses_target(target):
    assert isinstance(target, str)
"""


def test_env_list_is_split_on_semicolons_one_id_each(run_inner) -> None:
    result = run_inner(IMPLICIT, targets=" llvm ; c ;")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*test_uses_target[[]llvm[]] PASSED*", "*[[]c[]] PASSED*"])


def test_unset_env_means_tvm_default_test_targets(run_inner) -> None:
    result = run_inner(IMPLICIT)
    defaults = tvm.testing.DEFAULT_TEST_TARGETS
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] + outcomes.get("skipped", 0) == len(defaults)
    result.stdout.fnmatch_lines(
        [
            "tvm targets: llvm, cuda, *(from tvm.testing.DEFAULT_TEST_TARGETS)",
            "*[[]llvm[]] PASSED*",
            "*[[]vulkan-from_device=0[]]*",
        ]
    )


def test_entry_that_is_not_a_target_is_a_usage_error_naming_it(run_inner) -> None:
    result = run_inner(IMPLICIT, targets="llvm;not_a_target")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: TVM_TEST_TARGETS entry 'not_a_target' is not a TVM target: *"]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_malformed_json_entry_is_a_usage_error_naming_it(run_inner) -> None:
    result = run_inner(IMPLICIT, targets='llvm;{"kind": "opencl"')
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["""ERROR: TVM_TEST_TARGETS entry '{"kind": "opencl"' is not a TVM target: invalid JSON*"""]
    )


def test_json_entry_becomes_a_target_with_a_readable_id(run_inner) -> None:
    result = run_inner(IMPLICIT, targets='llvm;{"kind": "opencl", "device": "mali"}')
    result.stdout.fnmatch_lines(["*test_uses_target[[]opencl-device=mali[]]*"])
    result.assert_outcomes(passed=1, skipped=1)


def test_listed_target_that_cannot_run_is_skipped_with_its_name(run_inner) -> None:
    result = run_inner(IMPLICIT, targets="llvm;metal")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["SKIPPED * target 'metal' cannot run here: the metal runtime is not enabled*"]
    )


def test_no_runnable_target_falls_back_to_llvm(run_inner) -> None:
    result = run_inner(IMPLICIT, targets="metal;hexagon")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "tvm targets: llvm (from TVM_TEST_TARGETS='metal;hexagon')",
            "tvm targets: fell back to llvm: none of the listed targets can run here",
            "*test_uses_target[[]llvm[]] PASSED*",
        ]
    )


def test_fallback_none_reports_every_listed_target_skipped(run_inner) -> None:
    result = run_inner(IMPLICIT, "--tvm-target-fallback=none", targets="metal;hexagon")
    result.assert_outcomes(skipped=2)


def test_report_header_names_targets_source_and_unrunnable(run_inner) -> None:
    result = run_inner(IMPLICIT, targets="llvm;metal")
    result.stdout.fnmatch_lines(
        [
            "tvm targets: llvm, metal (from TVM_TEST_TARGETS='llvm;metal')",
            "tvm targets: metal cannot run here: the metal runtime is not enabled*",
        ]
    )


def test_option_overrides_env_and_ini_applies_when_env_unset(run_inner, pytester) -> None:
    result = run_inner(IMPLICIT, "--tvm-targets=c", targets="llvm")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["tvm targets: c (from --tvm-targets='c')", "*[[]c[]] PASSED*"])
    pytester.makeini("[pytest]\ntvm_test_targets = c;metal\n")
    result = run_inner(IMPLICIT, targets="")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["tvm targets: c, metal (from ini tvm_test_targets='c;metal')"])


def test_enabled_targets_pairs_runnable_targets_with_devices(monkeypatch) -> None:
    monkeypatch.setenv("TVM_TEST_TARGETS", "llvm;metal;c")
    pairs = enabled_targets()
    assert [target for target, _ in pairs] == ["llvm", "c"]
    assert [str(dev) for _, dev in pairs] == ["cpu:0", "cpu:0"]


@pytest.mark.parametrize(
    "listed",
    ["llvm", "llvm;cuda", "cuda;metal", 'llvm;{"kind": "opencl", "device": "mali"}', ""],
    ids=["llvm", "llvm+cuda", "none-runnable", "json-entry", "unset"],
)
def test_enabled_targets_agree_with_tvm_testing(monkeypatch, listed: str) -> None:
    """The kit's selection and TVM 0.27's own tvm.testing answer the same.

    (tvm.testing.enabled_targets raises for the "c" target, whose runtime tvm.runtime.enabled
    does not know; the kit treats it as a CPU target, which is why it keeps its own probe
    wrapper.)
    """
    monkeypatch.setenv("TVM_TEST_TARGETS", listed)
    ours = [(canonical_entry(t), str(dev)) for t, dev in enabled_targets()]
    theirs = [(canonical_entry(t), str(dev)) for t, dev in tvm.testing.enabled_targets()]
    assert ours == theirs
    runnable_kinds = {t.kind for t in from_environment().runnable}
    for kind in ("llvm", "cuda", "metal", "opencl", "vulkan", "rocm"):
        assert tvm.testing.device_enabled(kind) == (kind in runnable_kinds), kind


def test_session_whose_tests_take_no_target_never_imports_tvm(pytester, monkeypatch) -> None:
    # A fresh interpreter: this process imported TVM long ago. The default list is resolved
    # only when a test needs it, so the kit's own tool tests skip TVM's import.
    pytester.makepyfile(
        test_inner="""
        import sys

        def test_no_target():
            assert "tvm" not in sys.modules
        """
    )
    monkeypatch.delenv("TVM_TEST_TARGETS", raising=False)
    package_root = str(Path(tvm_conformance.__file__).parents[1])
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")])
    )
    result = pytester.runpytest_subprocess("-p", "tvm_conformance.pytest_plugin", "-v")
    result.assert_outcomes(passed=1)
    assert "tvm targets:" not in result.stdout.str()


def test_default_list_header_follows_collection_when_a_test_takes_a_target(run_inner) -> None:
    result = run_inner(IMPLICIT)
    result.stdout.fnmatch_lines(
        ["*collected *", "tvm targets: llvm, *(from tvm.testing.DEFAULT_TEST_TARGETS)"]
    )
