"""Property-based round trips (docs/robustness.md): generated values through every crossing.

Crossings: the C++ echo (`testing.any_echo`), a Python global called from C++ by name
(`testing.call_global`), a C++ closure forwarding to a Python callable
(`testing.robust.make_forwarding_closure`), and the Relax VM in both exec modes: a Python
callback passed as an `R.Callable` argument, and a Python global called by name through
`R.call_packed` and `R.call_pure_packed`, each with an `R.Object` argument.

Each property runs in a worker process (`python -m tvm_conformance.roundtrip`, the harness
that also holds the crossings and the contract's comparison) that writes the example it is
about to send to a file before sending it, so a crash names its example and signal instead of
killing the test run. Comparison is exact: every value is reduced to a tagged form that keeps
the Python type and, for floats, the 64 bits.

The contract (measured on tvm-ffi 0.1.14, then decided):
  bool, int (any size), float (bit-exact, NaN payloads too), None: themselves; str and bytes:
  the same content as str / bytes or tvm_ffi.core.String / Bytes (their subclasses);
  bytearray and numpy.bytes_ -> bytes; numpy.str_ -> its str content;
  list and tuple -> ffi.Array; dict -> ffi.Map (compared as tuples / dicts of the same);
  numpy integer scalars -> int, numpy floating scalars -> float(value);
  complex and numpy complex / datetime64 scalars: passed through as the same Python object.
Left out of the generated values, each checked by its own deviation test below:
  numpy.bool_ (arrives as an opaque object, not bool: `ffi-numpy-bool-opaque`), numpy
  timedelta64 with a unit (TypeError: `ffi-numpy-timedelta64-typeerror`), ints (numpy
  uint64 too) beyond int64 on tvm-ffi < 0.1.14 (`ffi-int-beyond-int64-overflow`), and lone
  surrogates in str (a known crasher recorded by the crash-isolation tests,
  known_crashers_test.py).

Profiles (ROBUST_PROFILE): `ci` (default, derandomized, 200 examples per crossing) and
`full` (>= 10,000 examples per crossing; the `roundtrip_property_full_test` target, tagged
`long` and `manual`, in `//python/tests/robustness:long_tests`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tvm_conformance import deviations
from tvm_conformance.roundtrip import CROSSINGS, PROFILES, profile


@pytest.mark.parametrize("crossing", CROSSINGS)
def test_generated_values_round_trip_exactly(crossing: str) -> None:
    """Every generated value comes back as the contract says, with no crash, in a worker."""
    examples = PROFILES[profile()]
    with tempfile.TemporaryDirectory() as tmp:
        last, result = os.path.join(tmp, "last"), os.path.join(tmp, "result.json")
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "tvm_conformance.roundtrip",
                crossing,
                str(examples),
                last,
                result,
            ],
            capture_output=True,
            text=True,
            timeout=1800,
            # The worker imports what this process imports (plain pytest adds `python` to
            # sys.path through pyproject.toml, not through PYTHONPATH).
            env=dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p)),
        )
        example = Path(last).read_text(encoding="utf-8") if os.path.exists(last) else "?"
        if proc.returncode < 0:
            pytest.fail(
                f"{crossing}: the worker died of {signal.Signals(-proc.returncode).name} on "
                f"example {example}; stderr tail: {proc.stderr[-2000:]}"
            )
        assert proc.returncode == 0 and os.path.exists(result), (
            f"{crossing}: worker exit {proc.returncode}; stderr tail: {proc.stderr[-2000:]}"
        )
        outcome = json.loads(Path(result).read_text())
    assert outcome["status"] == "passed", f"{crossing}: {outcome['error'][-3000:]}"
    # hypothesis may stop early only if the space is exhausted, which it never is here.
    assert outcome["examples"] >= examples, outcome
    out_dir = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR")
    if out_dir:
        Path(out_dir, f"roundtrip_{crossing}.json").write_text(json.dumps(outcome, indent=1))
    print(json.dumps(outcome))


# ----------------------------------------------------- values outside the contract --


def _echo() -> Any:
    import tvm

    from tvm_conformance.extensions import load_extension

    load_extension("ffi_testing")
    return tvm.get_global_func("testing.any_echo")


@deviations.xfail("ffi-numpy-bool-opaque")
def test_numpy_bool_arrives_as_bool() -> None:
    import numpy as np

    from tvm_conformance.observed import OpaqueConversion

    got = _echo()(np.bool_(True))
    if type(got) is np.bool_ and bool(got) is True:  # the recorded opaque round trip
        raise OpaqueConversion("numpy.bool_ came back as itself (ffi.OpaquePyObject)")
    assert type(got) is bool and got is True


def test_numpy_timedelta64_without_unit_arrives_as_int() -> None:
    import numpy as np

    got = _echo()(np.timedelta64(3))
    assert type(got) is int and got == 3


@deviations.xfail("ffi-numpy-timedelta64-typeerror")
def test_numpy_timedelta64_with_unit_arrives_as_int_count() -> None:
    import numpy as np

    from tvm_conformance.observed import timedelta64_int_conversion

    echo = _echo()
    with timedelta64_int_conversion():
        got = echo(np.timedelta64(3, "s"))
    assert type(got) is int and got == 3
