"""Shared fixture of the plugin tests: run an inner pytest file in a subprocess."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

import tvm_conformance.targets

# The directory holding the tvm_conformance package, for the inner process's PYTHONPATH.
_PYTHON_ROOT = str(Path(tvm_conformance.targets.__file__).resolve().parents[1])

InnerRun = Callable[..., pytest.RunResult]


@pytest.fixture
def run_inner(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> InnerRun:
    """Write `source` as an inner test file and run pytest on it with the plugin.

    `targets` sets TVM_TEST_TARGETS for the inner run (None: unset). The inner run has
    --strict-markers and -rsxX, like every tvm_py_test.
    """
    path = os.pathsep.join(p for p in (_PYTHON_ROOT, os.environ.get("PYTHONPATH", "")) if p)
    monkeypatch.setenv("PYTHONPATH", path)
    monkeypatch.delenv(tvm_conformance.targets.ENV_VAR, raising=False)

    def run(source: str, *args: str, targets: str | None = None) -> pytest.RunResult:
        if targets is not None:
            monkeypatch.setenv(tvm_conformance.targets.ENV_VAR, targets)
        pytester.makepyfile(test_inner=textwrap.dedent(source))
        return pytester.runpytest_subprocess(
            "-p", "tvm_conformance.pytest_plugin", "--strict-markers", "-rsxX", "-v", *args
        )

    return run
