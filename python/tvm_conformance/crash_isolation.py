"""Run code that may crash the interpreter (a segfault in TVM or tvm-ffi) in a child process.

    outcome = run_isolated("import tvm; ...")     # never kills the calling test process
    check_isolated("...")                         # raises crashed_by("SIGSEGV") and the like

A known crasher is then an ordinary failure of one test (a strict xfail of kind "crash" in
tvm_conformance.deviations, bound to the recorded signal: a child dying of another signal
fails the test), and a fixed TVM shows up as that test passing.

A crash counts as the known one only where it happens: the child calls ``reproducing_call()``
(defined in every child) right before the call that reproduces it, and ``crash_step("name")``
before each step leading there (``import tvm``, ``relax.build``, the valid first call, loading
the extension). A child that dies before printing that marker raises
:class:`CrashedBeforeReproducingCall`, an AssertionError naming the last step it reached,
which no crash deviation accepts::

    check_isolated(
        "crash_step('import tvm'); import tvm_ffi\n"
        "crash_step('load the extension'); tvm_ffi.load_module(path)\n"
        "reproducing_call(); tvm_ffi.get_global_func('testing.invoke')(None)\n"
    )
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Mapping
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


class CrashedBeforeReproducingCall(AssertionError):
    """The child died of a signal before it printed the reproducing-call marker: a crash in
    the setup (``import tvm``, a build, the extension load), not the recorded one."""


# What a child prints, unbuffered, before each step and right before the reproducing call.
STEP_PREFIX = "tvm_conformance.crash_isolation: step "
CALL_MARKER = "tvm_conformance.crash_isolation: reproducing call"
# Defined in every child (run_isolated): crash_step(name) and reproducing_call().
_CHILD_HELPERS = f"""
def _tvm_conformance_mark(line):
    import os as _os, sys as _sys
    _sys.stdout.flush()
    _os.write(1, (line + "\\n").encode("utf-8", "backslashreplace"))
def crash_step(name):
    _tvm_conformance_mark({STEP_PREFIX!r} + name)
def reproducing_call():
    _tvm_conformance_mark({CALL_MARKER!r})
"""


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

    @property
    def reached_call(self) -> bool:
        """True once the child printed the reproducing-call marker."""
        return CALL_MARKER in self.stdout.splitlines()

    @property
    def last_step(self) -> str | None:
        """The last step the child announced (crash_step), None if it announced none."""
        steps = [
            line[len(STEP_PREFIX) :]
            for line in self.stdout.splitlines()
            if line.startswith(STEP_PREFIX)
        ]
        return steps[-1] if steps else None


PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child_env(base: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """The environment of a child of this interpreter that imports this package: `base` (this
    process's environment if None) updated with `extra`, with the package's root put first on
    its PYTHONPATH. Plain pytest puts the root on sys.path from pyproject.toml, which a child
    does not read; under Bazel PYTHONPATH already holds it."""
    env = dict(os.environ if base is None else base, **extra)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
    return env


def run_isolated(code: str, timeout: float = 300.0) -> Outcome:
    """Run `code` with this interpreter in a fresh process; return how it ended."""
    # The child keeps torch out as this process does (tvm_py_test without uses_torch).
    proc = subprocess.run(
        [sys.executable, "-c", torch_guard.child_prelude() + _CHILD_HELPERS + code],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env(),
    )
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


def check_isolated(code: str, timeout: float = 300.0) -> Outcome:
    """Run `code` isolated; raise ``crashed_by(<signal>)`` (a ProcessCrashed) on a signal after
    the child printed the reproducing-call marker, CrashedBeforeReproducingCall on a signal
    before it (naming the last step), AssertionError on another exit."""
    outcome = run_isolated(code, timeout)
    tail = outcome.stderr.strip().splitlines()[-5:]
    if outcome.signal_name is not None and not outcome.reached_call:
        step = outcome.last_step
        where = f"in step {step!r}" if step else "before its first step"
        raise CrashedBeforeReproducingCall(
            f"the child process died of {outcome.signal_name} {where}, before the reproducing "
            f"call (crash_isolation: reproducing_call()); last stderr lines: {tail}"
        )
    if outcome.signal_name is not None:
        raise crashed_by(outcome.signal_name)(
            f"the child process died of {outcome.signal_name} in the reproducing call; "
            f"last stderr lines: {tail}"
        )
    assert outcome.returncode == 0, f"exit status {outcome.returncode}; stderr: {tail}"
    return outcome
