"""Property-based round trips (issue 12, section 2): generated values through every crossing.

Crossings: the C++ echo (`testing.any_echo`), a Python global called from C++ by name
(`testing.call_global`), a C++ closure forwarding to a Python callable
(`testing.robust.make_forwarding_closure`), and the Relax VM in both exec modes: a Python
callback passed as an `R.Callable` argument, and a Python global called by name through
`R.call_packed` and `R.call_pure_packed`, each with an `R.Object` argument.

Each property runs in a worker process (this file run as a script) that writes the example it
is about to send to a file before sending it, so a crash names its example and signal instead
of killing the test run. Comparison is exact: every value is reduced to a tagged form that
keeps the Python type and, for floats, the 64 bits.

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
  surrogates in str (a known crasher recorded by the crash-isolation tests of issue 12,
  section 3).

Profiles (ROBUST_PROFILE): `ci` (default, derandomized, 200 examples per crossing) and
`full` (>= 10,000 examples per crossing; the `roundtrip_property_full_test` target, tagged
`long` and `manual`, in `//python/tests/robustness:long_tests`).
"""

from __future__ import annotations

import json
import math
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from tvm_conformance import deviations

CROSSINGS = (
    "cpp_echo",
    "python_global_from_cpp",
    "cpp_closure",
    "relax_vm_bytecode",
    "relax_vm_compiled",
)
PROFILES = {"ci": 200, "full": 10_000}
INT64 = (-(2**63), 2**63 - 1)


# ----------------------------------------------------------------- the contract --


def _float_bits(value: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", value))[0]


def tagged(value: Any) -> Any:
    """What came back, reduced to a hashable form that keeps type and float bits."""
    import numpy as np
    import tvm_ffi

    if value is None:
        return ("None",)
    if type(value) is bool:
        return ("bool", value)
    if type(value) is int:
        return ("int", value)
    if type(value) is float:
        return ("float", _float_bits(value))
    # Longer strings and bytes come back as tvm_ffi.core.String / Bytes, subclasses of
    # str / bytes: the contract is the content, with no other subclass accepted.
    if type(value) in (str, tvm_ffi.core.String):
        return ("str", str(value))
    if type(value) in (bytes, tvm_ffi.core.Bytes):
        return ("bytes", bytes(value))
    if isinstance(value, tvm_ffi.Array):
        return ("array", tuple(tagged(v) for v in value))
    if isinstance(value, tvm_ffi.Map):
        return ("map", frozenset((tagged(k), tagged(v)) for k, v in value.items()))
    if isinstance(value, (complex, np.complexfloating, np.datetime64)):
        return ("same-object", id(value))
    return ("unexpected", type(value).__name__, repr(value))


def expected(value: Any) -> Any:
    """The tagged form the contract says `value` comes back as."""
    import numpy as np

    if value is None:
        return ("None",)
    if type(value) is bool:
        return ("bool", value)
    if isinstance(value, np.str_):
        # Its content as a str (value[:]), trailing NULs included; numpy's str() drops them.
        return ("str", value[:])
    if isinstance(value, np.bytes_):
        return ("bytes", bytes(value))
    if isinstance(value, (complex, np.complexfloating, np.datetime64)):
        return ("same-object", id(value))
    if isinstance(value, np.integer):
        return ("int", int(value))
    if isinstance(value, np.floating):
        return ("float", _float_bits(float(value)))
    if type(value) is int:
        return ("int", value)
    if type(value) is float:
        return ("float", _float_bits(value))
    if type(value) is str:
        return ("str", value)
    if isinstance(value, (bytes, bytearray)):
        return ("bytes", bytes(value))
    if isinstance(value, (list, tuple)):
        return ("array", tuple(expected(v) for v in value))
    if isinstance(value, dict):
        return ("map", frozenset((expected(k), expected(v)) for k, v in value.items()))
    raise TypeError(f"no contract for {type(value).__name__}")


# ------------------------------------------------------------------- strategies --


def values_strategy(beyond_int64: bool) -> Any:
    """Every generated value: scalars, numpy scalars, nested lists / tuples / dicts."""
    import numpy as np
    from hypothesis import strategies as st

    ints = st.integers() if beyond_int64 else st.integers(*INT64)
    edge_ints = st.sampled_from(
        [0, -1, 1, *INT64, INT64[0] - 1, INT64[1] + 1, 2**64, -(2**64), 2**200]
        if beyond_int64
        else [0, -1, 1, *INT64]
    )
    nan_payloads = st.tuples(st.integers(0, 1), st.integers(1, 2**52 - 1)).map(
        lambda sp: struct.unpack("<d", struct.pack("<Q", (sp[0] << 63) | (0x7FF << 52) | sp[1]))[0]
    )
    floats = st.floats(allow_nan=True, allow_infinity=True) | nan_payloads
    floats |= st.sampled_from([0.0, -0.0, math.inf, -math.inf, 5e-324, -5e-324])
    # Lone surrogates (category Cs) are left out: a message or value holding one is a known
    # crasher of tvm-ffi 0.1.14, isolated in its own crash test (issue 12, section 3).
    text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=20)
    text |= st.sampled_from(["", "\x00", "a\x00b", "\x00" * 8, "\U0010ffff", "é😀"])
    binary = st.binary(max_size=20)
    numpy_ints = st.sampled_from(
        [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
    ).flatmap(
        lambda t: st.integers(
            int(np.iinfo(t).min),
            int(np.iinfo(t).max) if beyond_int64 else min(INT64[1], int(np.iinfo(t).max)),
        ).map(t)
    )
    numpy_floats = st.one_of(
        st.floats(width=16).map(np.float16),
        st.floats(width=32).map(np.float32),
        st.floats().map(np.float64),
        st.floats().map(np.longdouble),
    )
    numpy_other = st.one_of(
        st.complex_numbers(width=64).map(np.complex64),
        st.complex_numbers().map(np.complex128),
        st.complex_numbers(),
        st.integers(-(10**9), 10**9).map(lambda d: np.datetime64(d, "D")),
        text.map(np.str_),
        binary.filter(lambda b: not b.endswith(b"\x00")).map(np.bytes_),
        binary.map(bytearray),
    )
    leaves = st.one_of(
        st.none(),
        st.booleans(),
        ints,
        edge_ints,
        floats,
        text,
        binary,
        numpy_ints,
        numpy_floats,
        numpy_other,
    )
    keys = text | st.integers(*INT64)
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.lists(inner, max_size=4).map(tuple),
            st.dictionaries(keys, inner, max_size=4),
        ),
        max_leaves=12,
    )


# --------------------------------------------------------------------- crossings --


def crossing_functions(name: str) -> list[Any]:
    """One-argument Python callables that send their argument through crossing `name`."""
    import tvm
    import tvm_ffi

    from tvm_conformance.extensions import load_extension

    load_extension("ffi_testing")
    load_extension("robustness_testing")
    tvm_ffi.register_global_func("robust.identity", lambda x: x, override=True)
    if name == "cpp_echo":
        return [tvm.get_global_func("testing.any_echo")]
    if name == "python_global_from_cpp":
        call_global = tvm.get_global_func("testing.call_global")
        return [lambda v: call_global("robust.identity", v)]
    if name == "cpp_closure":
        return [tvm.get_global_func("testing.robust.make_forwarding_closure")(lambda x: x)]
    if name.startswith("relax_vm_"):
        from tvm import relax
        from tvm.script import ir as I
        from tvm.script import relax as R

        @I.ir_module
        class CallbackModule:
            @R.function(pure=False)
            def call(cb: R.Callable([R.Object], R.Object), x: R.Object) -> R.Object:
                y = cb(x)
                return y

            @R.function(pure=False)
            def packed(x: R.Object) -> R.Object:
                y = R.call_packed("robust.identity", x, ty_args=R.Object)
                return y

            @R.function
            def pure_packed(x: R.Object) -> R.Object:
                y = R.call_pure_packed("robust.identity", x, ty_args=R.Object)
                return y

        exe = relax.build(CallbackModule, target="llvm", exec_mode=name[len("relax_vm_") :])
        vm = relax.VirtualMachine(exe, tvm.cpu())
        call, packed, pure_packed = vm["call"], vm["packed"], vm["pure_packed"]

        def identity(x: Any) -> Any:
            return x

        # A callback passed as an R.Callable argument, and a global called by name through
        # R.call_packed and R.call_pure_packed.
        return [lambda v: call(identity, v), packed, pure_packed]
    raise ValueError(f"unknown crossing {name!r}; known: {CROSSINGS}")


# ------------------------------------------------------------------------ worker --


def run_worker(crossing: str, examples: int, last_path: str, result_path: str) -> None:
    """Worker process body: run the property, write a JSON result (or die trying)."""
    from hypothesis import HealthCheck, given, settings

    sends = crossing_functions(crossing)
    beyond = not deviations.applies("ffi-int-beyond-int64-overflow")
    count = 0
    last = open(last_path, "w", encoding="utf-8")  # noqa: SIM115 (kept open for speed)

    @settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(values_strategy(beyond))
    def prop(value: Any) -> None:
        nonlocal count
        count += 1
        last.seek(0)
        last.write(ascii(value))
        last.truncate()
        last.flush()
        want = expected(value)
        for i, send in enumerate(sends):
            got = send(value)
            assert tagged(got) == want, (
                f"path {i}: sent {value!r}, got {got!r} ({type(got).__name__})"
            )

    start = time.perf_counter()
    status, error = "passed", ""
    try:
        prop()
    except Exception as err:  # hypothesis adds the falsifying example as a note
        notes = "\n".join(getattr(err, "__notes__", []))
        status, error = "failed", f"{type(err).__name__}: {err}\n{notes}"
    Path(result_path).write_text(
        json.dumps(
            {
                "crossing": crossing,
                "status": status,
                "error": error,
                "examples": count,
                "wall_s": round(time.perf_counter() - start, 3),
                "max_examples": examples,
                "beyond_int64": beyond,
            }
        )
    )


def profile() -> str:
    """The profile in force (ROBUST_PROFILE, default `ci`)."""
    name = os.environ.get("ROBUST_PROFILE", "ci")
    if name not in PROFILES:
        raise ValueError(f"ROBUST_PROFILE must be one of {sorted(PROFILES)}, not {name!r}")
    return name


@pytest.mark.parametrize("crossing", CROSSINGS)
def test_generated_values_round_trip_exactly(crossing: str) -> None:
    """Every generated value comes back as the contract says, with no crash, in a worker."""
    examples = PROFILES[profile()]
    with tempfile.TemporaryDirectory() as tmp:
        last, result = os.path.join(tmp, "last"), os.path.join(tmp, "result.json")
        proc = subprocess.run(
            [sys.executable, __file__, crossing, str(examples), last, result],
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

    got = _echo()(np.timedelta64(3, "s"))
    assert type(got) is int and got == 3


if __name__ == "__main__":
    from tvm_conformance import torch_guard

    torch_guard.install_from_environment()  # as in the test process (uses_torch unset)
    run_worker(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4])
