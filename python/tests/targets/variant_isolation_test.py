"""Bazel variants hold only their own target's cases (--tvm-variant), seed 002's lane rule."""

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

# The inner sessions run through pytest's own pytester plugin (off by default).
pytest_plugins = ["pytester"]

MIXED = """
import pytest
from tvm_conformance.testing import compiles_for, parametrize_targets, requires_llvm

@parametrize_targets("llvm", "cuda")
def test_listed(target):
    pass

@pytest.mark.parametrize("target", ["llvm", "cuda"])
def test_upstream(target):
    pass

@pytest.mark.parametrize("exec_mode", ["bytecode", "compiled"])
def test_modes(target, exec_mode):
    pass

@requires_llvm
def test_needs_llvm():
    pass

@compiles_for("cuda")
def test_cuda_codegen():
    pass

def test_neither():
    pass
"""


def cases(xml_path: Path) -> dict[str, dict[str, str]]:
    """JUnit case name -> its properties."""
    out = {}
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        out[case.get("name")] = props
    return out


def test_target_variant_keeps_only_its_target_cases(run_inner, tmp_path: Path) -> None:
    xml = tmp_path / "llvm.xml"
    result = run_inner(MIXED, "--tvm-variant=llvm", f"--junitxml={xml}", targets="llvm")
    result.assert_outcomes(passed=5, deselected=4)
    found = cases(xml)
    assert sorted(found) == [
        "test_listed[llvm]",
        "test_modes[llvm-bytecode]",
        "test_modes[llvm-compiled]",
        "test_needs_llvm",
        "test_upstream[llvm]",
    ]
    assert {props["tvm_target"] for props in found.values()} == {"llvm"}
    assert found["test_modes[llvm-compiled]"]["exec_mode"] == "compiled"


def test_cuda_variant_holds_no_llvm_case(run_inner, tmp_path: Path, cuda_target) -> None:
    xml = tmp_path / "cuda.xml"
    result = run_inner(
        MIXED,
        "--tvm-variant=cuda",
        "--tvm-target-fallback=none",
        f"--junitxml={xml}",
        targets="cuda",
    )
    found = cases(xml)
    assert sorted(found) == [
        "test_cuda_codegen",
        "test_listed[cuda]",
        "test_modes[cuda-bytecode]",
        "test_modes[cuda-compiled]",
        "test_upstream[cuda]",
    ]
    assert {props["tvm_target"] for props in found.values()} == {"cuda"}
    # The codegen case needs no device; the others run on a cuda device, or skip without one.
    if cuda_target.runnable:
        result.assert_outcomes(passed=5, deselected=4)
    else:
        result.assert_outcomes(passed=1, skipped=4, deselected=4)
        result.stdout.fnmatch_lines([f"*target 'cuda' cannot run here: {cuda_target.reason}*"])


def test_cuda_variant_without_a_device_skips_its_device_cases(
    run_inner, tmp_path: Path, without_gpu: str
) -> None:
    # Forced, so a GPU machine checks the GPU-less outcome too.
    result = run_inner(MIXED, "--tvm-variant=cuda", "--tvm-target-fallback=none", targets="cuda")
    result.assert_outcomes(passed=1, skipped=4, deselected=4)
    result.stdout.fnmatch_lines([f"*target 'cuda' cannot run here: {without_gpu}*"])


def test_independent_variant_keeps_only_untargeted_cases(run_inner, tmp_path: Path) -> None:
    xml = tmp_path / "independent.xml"
    result = run_inner(MIXED, "--tvm-variant=independent", f"--junitxml={xml}", targets="llvm")
    result.assert_outcomes(passed=1, deselected=8)
    found = cases(xml)
    assert list(found) == ["test_neither"]
    assert "tvm_target" not in found["test_neither"]


def test_untargeted_cases_without_an_independent_variant_are_a_usage_error(run_inner) -> None:
    result = run_inner(MIXED, "--tvm-variant=llvm", "--tvm-independent-cases=error", targets="llvm")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*1 case(s) take no target and would run in no Bazel variant (*test_neither*"
            "set target_independent = True*"
        ]
    )


def test_variant_that_is_not_a_target_is_a_usage_error(run_inner) -> None:
    result = run_inner(MIXED, "--tvm-variant=cdua", targets="llvm")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --tvm-variant entry 'cdua' is not a TVM target: *"])


SKIPS = """
import pytest
from tvm_conformance.testing import requires_llvm

@pytest.mark.parametrize("target", ["llvm", "cuda"])
def test_upstream(target):
    pass

@requires_llvm
def test_needs_llvm():
    pass

def test_own_skip():
    pytest.skip("no torch here")
"""


def test_a_skip_for_a_target_that_cannot_run_names_it_in_a_property(
    run_inner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, without_gpu: str
) -> None:
    """The verdict classifies skips by `tvm_unavailable_target` (tools/verdict/verdict.py): it
    names the target whose runtime or device is missing, and only then."""
    import dataclasses

    import tvm_conformance.targets

    real = tvm_conformance.targets._describe

    def no_llvm(key: str, source: str) -> tvm_conformance.targets.TargetInfo:
        info = real(key, source)
        if info.kind != "llvm":
            return info
        return dataclasses.replace(info, runnable=False, reason="planted: no llvm")

    monkeypatch.setattr(tvm_conformance.targets, "_describe", no_llvm)
    xml = tmp_path / "skips.xml"
    run_inner(SKIPS, "--tvm-target-fallback=none", f"--junitxml={xml}", targets="llvm;cuda")
    found = cases(xml)
    prop = tvm_conformance.targets.UNAVAILABLE_TARGET_PROPERTY
    assert found["test_upstream[llvm]"][prop] == "llvm"
    assert found["test_upstream[cuda]"][prop] == "cuda"
    assert found["test_needs_llvm"][prop] == "llvm"
    assert prop not in found["test_own_skip"]
    # A target left out of the session is a choice, not a missing target.
    monkeypatch.setattr(tvm_conformance.targets, "_describe", real)
    run_inner(SKIPS, "--tvm-target-fallback=none", f"--junitxml={xml}", targets="cuda")
    found = cases(xml)
    assert prop not in found["test_upstream[llvm]"]
    assert found["test_upstream[cuda]"][prop] == "cuda"
