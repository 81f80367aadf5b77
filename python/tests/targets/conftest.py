"""Shared fixture of the plugin tests: run an inner pytest file with the plugin.

The inner run is in-process (pytester.runpytest_inprocess): TVM is imported once, not once per
case. The plugin keeps no process-wide state between runs (its selection lives on the inner
config, TVM_TEST_TARGETS is restored at unconfigure), so nothing needs a fresh interpreter.
"""

from __future__ import annotations

import dataclasses
import textwrap
from collections.abc import Callable

import pytest

# Imported here, in the outer session, on purpose: pytester drops the modules an in-process
# inner run imported when it ends, and numpy's extension cannot be loaded twice in one process.
# The plugin itself imports TVM only when a test takes a target.
import tvm  # noqa: F401

import tvm_conformance.targets

InnerRun = Callable[..., pytest.RunResult]


@pytest.fixture
def run_inner(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> InnerRun:
    """Write `source` as an inner test file and run pytest on it (in-process) with the plugin.

    `targets` sets TVM_TEST_TARGETS for the inner run (None: unset). The inner run has
    --strict-markers and -rsxX, like every tvm_py_test.
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


# The reason the `without_gpu` fixture gives cuda: what a GPU-less machine says, marked as faked.
FAKED_REASON = "the cuda runtime is not enabled in this TVM build (faked: without_gpu)"


@pytest.fixture
def cuda_target() -> tvm_conformance.targets.TargetInfo:
    """cuda as the plugin sees it on this machine (runnable only where a device exists)."""
    return tvm_conformance.targets.describe("cuda")


@pytest.fixture
def without_gpu(monkeypatch: pytest.MonkeyPatch) -> str:
    """Force the no-GPU path on any machine: the plugin sees every GPU target as unrunnable.

    The plugin asks ``tvm_conformance.targets`` (describe, gpu_present) whether a target can
    run; this replaces those answers for the test's duration, so a GPU machine checks what a
    GPU-less one does. Returns the reason the faked cuda target gives.
    """
    real = tvm_conformance.targets._describe

    def describe(key: str, source: str) -> tvm_conformance.targets.TargetInfo:
        info = real(key, source)
        if not info.is_gpu:
            return info
        return dataclasses.replace(info, runnable=False, reason=FAKED_REASON)

    monkeypatch.setattr(tvm_conformance.targets, "_describe", describe)
    monkeypatch.setattr(tvm_conformance.targets, "gpu_present", lambda: False)
    return FAKED_REASON
