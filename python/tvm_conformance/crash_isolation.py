"""Run code that may crash the interpreter (a segfault in TVM or tvm-ffi) in a child process.

    outcome = run_isolated("import tvm; ...")     # never kills the calling test process
    check_isolated("...")                         # raises ProcessCrashed naming the signal

A known crasher is then an ordinary failure of one test (a strict xfail of kind "crash" in
tvm_conformance.deviations), and a fixed TVM shows up as that test passing.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from dataclasses import dataclass

from tvm_conformance import torch_guard


class ProcessCrashed(RuntimeError):
    """The child process died of a signal (SIGSEGV, SIGABRT, ...)."""


@dataclass(frozen=True)
class Outcome:
    """How a child process ended."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def signal_name(self) -> str | None:
        """``SIGSEGV`` and the like when a signal ended the process, else None."""
        if self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"


def run_isolated(code: str, timeout: float = 300.0) -> Outcome:
    """Run `code` with this interpreter in a fresh process; return how it ended."""
    # The child keeps torch out as this process does (tvm_py_test without uses_torch).
    proc = subprocess.run(
        [sys.executable, "-c", torch_guard.child_prelude() + code],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


def check_isolated(code: str, timeout: float = 300.0) -> Outcome:
    """Run `code` isolated; raise ProcessCrashed on a signal, AssertionError on another exit."""
    outcome = run_isolated(code, timeout)
    tail = outcome.stderr.strip().splitlines()[-5:]
    if outcome.signal_name is not None:
        raise ProcessCrashed(
            f"the child process died of {outcome.signal_name}; last stderr lines: {tail}"
        )
    assert outcome.returncode == 0, f"exit status {outcome.returncode}; stderr: {tail}"
    return outcome
