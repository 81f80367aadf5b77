"""Fixtures of the kit's self-tests of its pytest plugin (python/tests/targets, legacy).

A package's conftest.py imports the ones it uses, so pytest registers them there:

    from tvm_conformance.kit_fixtures import run_inner, without_gpu  # noqa: F401

`run_inner` runs an inner pytest file in-process (pytester), so TVM is imported once, not once
per case: the plugin keeps no process-wide state between runs (its selection lives on the inner
config, TVM_TEST_TARGETS is restored at unconfigure). `without_gpu` / `with_gpu` fake what the
plugin decides about GPU targets, so every machine checks both paths. Repo-only: not shipped
in the wheel (pytester and the fake are for the kit's own tests).
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

# The reason the `without_gpu` fixture gives cuda: what a GPU-less machine says, marked as faked.
FAKED_REASON = "the cuda runtime is not enabled in this TVM build (faked: without_gpu)"


@pytest.fixture
def run_inner(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> InnerRun:
    """Write `source` as test_inner.py and run pytest on it in-process, with the plugin.

    `targets` sets TVM_TEST_TARGETS for the inner run (None: unset). The inner run has
    --strict-markers and -rsxX, like every tvm_py_test, and no ini file: pytest's defaults
    apply (xfail_strict off), as in a project that never configured them.
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
def cuda_target() -> tvm_conformance.targets.TargetInfo:
    """cuda as the plugin sees it on this machine (runnable only where a device exists)."""
    return tvm_conformance.targets.describe("cuda")


def _fake_gpu_targets(monkeypatch: pytest.MonkeyPatch, runnable: bool, reason: str) -> None:
    """Make the plugin see every GPU target as `runnable` (with `reason`) for one test.

    The plugin asks ``tvm_conformance.targets`` (describe, gpu_present) whether a target can
    run; this replaces those answers for the test's duration.
    """
    real = tvm_conformance.targets._describe

    def describe(key: str, source: str) -> tvm_conformance.targets.TargetInfo:
        info = real(key, source)
        return dataclasses.replace(info, runnable=runnable, reason=reason) if info.is_gpu else info

    monkeypatch.setattr(tvm_conformance.targets, "_describe", describe)
    monkeypatch.setattr(tvm_conformance.targets, "gpu_present", lambda: runnable)


@pytest.fixture
def without_gpu(monkeypatch: pytest.MonkeyPatch) -> str:
    """Force the no-GPU path on any machine; returns the reason the faked cuda target gives."""
    _fake_gpu_targets(monkeypatch, runnable=False, reason=FAKED_REASON)
    return FAKED_REASON


@pytest.fixture
def with_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every GPU target runnable (nothing runs on it): what a GPU machine decides."""
    _fake_gpu_targets(monkeypatch, runnable=True, reason="")
