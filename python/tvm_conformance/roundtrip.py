"""Round trips of generated values through every FFI crossing: the contract and the worker.

Used by python/tests/robustness/roundtrip_property_test.py, which runs each property in a
worker process (`python -m tvm_conformance.roundtrip CROSSING EXAMPLES LAST RESULT`) so that a
crash names its example and signal instead of killing the test run. The worker writes the
example it is about to send to LAST before sending it, and a JSON result to RESULT.

Crossings: the C++ echo (`testing.any_echo`), a Python global called from C++ by name
(`testing.call_global`), a C++ closure forwarding to a Python callable
(`testing.robust.make_forwarding_closure`), and the Relax VM in both exec modes: a Python
callback passed as an `R.Callable` argument, and a Python global called by name through
`R.call_packed` and `R.call_pure_packed`, each with an `R.Object` argument. Comparison is
exact: every value is reduced to a tagged form that keeps the Python type and, for floats,
the 64 bits. The contract itself is in the test module's docstring. Works only inside this
repository (it loads the kit's extensions).
"""

from __future__ import annotations

import json
import math
import os
import struct
import sys
import time
from pathlib import Path
from typing import Any

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
    # crasher of tvm-ffi 0.1.14, isolated in its own crash test (known_crashers_test.py).
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


def main(argv: list[str]) -> int:
    """Worker entry: `CROSSING EXAMPLES LAST RESULT`."""
    from tvm_conformance import torch_guard

    if len(argv) != 4:
        print("usage: python -m tvm_conformance.roundtrip CROSSING EXAMPLES LAST RESULT")
        return 2
    torch_guard.install_from_environment()  # as in the test process (uses_torch unset)
    run_worker(argv[0], int(argv[1]), argv[2], argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
