"""Shared fixture of the plugin tests: run an inner pytest file with the plugin.

The inner run is in-process (pytester.runpytest_inprocess): TVM is imported once, not once per
case. The plugin keeps no process-wide state between runs (its selection lives on the inner
config, TVM_TEST_TARGETS is restored at unconfigure), so nothing needs a fresh interpreter.
"""

from __future__ import annotations

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
