"""Run code that may crash the interpreter (a segfault in TVM or tvm-ffi) in a child process.

    outcome = run_isolated("import tvm; ...")     # never kills the calling test process
    check_isolated("...")                         # raises crashed_by("SIGSEGV") and the like

A known crasher is then an ordinary failure of one test (a strict xfail of kind "crash" in
tvm_conformance.deviations, bound to the recorded signal: a child dying of another signal
fails the test), and a fixed TVM shows up as that test passing.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from functools import cache

from tvm_conformance import torch_guard


class ProcessCrashed(RuntimeError):
    """The child process died of a signal (SIGSEGV, SIGABRT, ...); raised as a subclass per
    signal (:func:`crashed_by`), so an xfail can accept one signal only."""

    signal_name: str = ""


@cache
def crashed_by(signal_name: str) -> type[ProcessCrashed]:
    """The ProcessCrashed subclass for one signal: ``crashed_by("SIGSEGV")`` is
    ``ProcessCrashedSIGSEGV``, the same class on every call."""
    suffix = re.sub(r"\W", "_", signal_name)
    cls = type(
        f"ProcessCrashed{suffix}",
        (ProcessCrashed,),
        {"__doc__": f"The child process died of {signal_name}.", "signal_name": signal_name},
    )
    cls.__module__ = __name__
    globals()[cls.__name__] = cls  # resolvable by dotted name, and picklable
    return cls


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
    """Run `code` isolated; raise ``crashed_by(<signal>)`` (a ProcessCrashed) on a signal,
    AssertionError on another exit."""
    outcome = run_isolated(code, timeout)
    tail = outcome.stderr.strip().splitlines()[-5:]
    if outcome.signal_name is not None:
        raise crashed_by(outcome.signal_name)(
            f"the child process died of {outcome.signal_name}; last stderr lines: {tail}"
        )
    assert outcome.returncode == 0, f"exit status {outcome.returncode}; stderr: {tail}"
    return outcome
