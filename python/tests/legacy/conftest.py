"""Shared fixtures of the legacy-API tests: an inner pytest run with the plugin, and a GPU-less
view of the machine.

The inner run is in-process (pytester): TVM is imported once for the whole file.
"""

from __future__ import annotations

import dataclasses
import textwrap
from collections.abc import Callable

import pytest

# Imported in the outer session on purpose: pytester drops the modules an in-process inner run
# imported, and numpy's extension cannot be loaded twice in one process.
import tvm  # noqa: F401

import tvm_conformance.targets

InnerRun = Callable[..., pytest.RunResult]

# The reason a faked GPU-less machine gives for cuda (see `without_gpu`).
FAKED_REASON = "the cuda runtime is not enabled in this TVM build (faked: without_gpu)"


@pytest.fixture
def run_inner(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> InnerRun:
    """Write `source` as test_inner.py and run pytest on it in-process, with the plugin.

    `targets` sets TVM_TEST_TARGETS (None: unset). No ini file: pytest's defaults apply
    (xfail_strict off), as in a project that never configured them.
    """
    monkeypatch.delenv(tvm_conformance.targets.ENV_VAR, raising=False)

    def run(source: str, *args: str, targets: str | None = None) -> pytest.RunResult:
        if targets is not None:
            monkeypatch.setenv(tvm_conformance.targets.ENV_VAR, targets)
        pytester.makepyfile(test_inner=textwrap.dedent(source))
        return pytester.runpytest_inprocess(
            "-p", "tvm_conformance.pytest_plugin", "--strict-markers", "-rsxX", "-v", *args
        )

    return run


@pytest.fixture
def without_gpu(monkeypatch: pytest.MonkeyPatch) -> str:
    """Make every GPU target unrunnable for the test, so a GPU machine checks the GPU-less
    path too. Returns the reason the faked cuda target gives."""
    real = tvm_conformance.targets._describe

    def describe(key: str, source: str) -> tvm_conformance.targets.TargetInfo:
        info = real(key, source)
        if not info.is_gpu:
            return info
        return dataclasses.replace(info, runnable=False, reason=FAKED_REASON)

    monkeypatch.setattr(tvm_conformance.targets, "_describe", describe)
    monkeypatch.setattr(tvm_conformance.targets, "gpu_present", lambda: False)
    return FAKED_REASON


@pytest.fixture
def with_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every GPU target runnable for the test (nothing runs on it): checks what a GPU
    machine decides, on any machine."""
    real = tvm_conformance.targets._describe

    def describe(key: str, source: str) -> tvm_conformance.targets.TargetInfo:
        info = real(key, source)
        return dataclasses.replace(info, runnable=True, reason="") if info.is_gpu else info

    monkeypatch.setattr(tvm_conformance.targets, "_describe", describe)
    monkeypatch.setattr(tvm_conformance.targets, "gpu_present", lambda: True)
