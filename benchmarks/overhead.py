"""FFI and Relax VM call overhead, each next to a floor measured in the same process.

`./bazelw run //benchmarks:overhead [-- --json PATH]` prints one row per case: the case's ns
per call, its floor's ns per call, and the ratio. Each case and its floor are timed in
alternating short blocks and the best block of each is kept (`measure_case`). Ratios travel
between machines and loads far better than absolute times, so the regression test
(overhead_ratio_test.py) checks ratios only.
"""

from __future__ import annotations

import argparse
import ctypes
import dataclasses
import gc
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

_EXT = "liboverhead_ext.so"


@dataclasses.dataclass(frozen=True)
class Row:
    """One measured case: ns per call of the case and of its floor."""

    name: str
    ns: float
    floor_name: str
    floor_ns: float

    @property
    def ratio(self) -> float:
        """Case time over floor time."""
        return self.ns / self.floor_ns


def _ext_path() -> str:
    # In runfiles (bazel run / bazel test) the library sits beside this file; from a checkout
    # (plain python or pytest) it is in bazel-bin after `./bazelw build //benchmarks:all`.
    here = Path(__file__)
    candidates = [here.parent / _EXT, here.resolve().parents[1] / "bazel-bin" / "benchmarks" / _EXT]
    for candidate in candidates:
        if candidate.exists():
            return str(candidate)
    raise FileNotFoundError(
        f"{_EXT} not found in {[str(c) for c in candidates]}; run ./bazelw build //benchmarks:all"
    )


def python_loop(fn: Callable[[], object], count: int) -> None:
    """Call `fn` `count` times from Python."""
    for _ in range(count):
        fn()


@dataclasses.dataclass(frozen=True)
class Timed:
    """One side of a case: the call, how many of it one timed block makes, and who loops.

    `loop(fn, calls)` makes the calls: `python_loop`, or C++ for the callback case.
    """

    name: str
    fn: Callable[[], object]
    calls: int
    loop: Callable[[Callable[[], object], int], object] = python_loop


@dataclasses.dataclass(frozen=True)
class Case:
    """A measured call and the floor it is compared with."""

    subject: Timed
    floor: Timed


def measure_case(case: Case, repeats: int) -> Row:
    """Best-of-`repeats` ns per call of a case and of its floor, timed alternately.

    Each repeat times one short block (about a millisecond) of the case and one of the floor,
    in alternating order, so load on a shared machine hits both alike; the minimum of each
    side is the figure least disturbed by it. The garbage collector is off while timing.
    """
    if repeats <= 0:
        raise ValueError(f"repeats must be positive, got {repeats}")
    sides = (case.subject, case.floor)
    if any(side.calls <= 0 for side in sides):
        raise ValueError(f"calls must be positive: {case}")
    best = [float("inf"), float("inf")]
    gc_was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for side in sides:  # warm-up: first-call caches, lazy imports, allocator pools
            side.loop(side.fn, max(1, side.calls // 4))
        for i in range(repeats):
            for k in (0, 1) if i % 2 == 0 else (1, 0):
                side = sides[k]
                start = time.perf_counter_ns()
                side.loop(side.fn, side.calls)
                best[k] = min(best[k], (time.perf_counter_ns() - start) / side.calls)
    finally:
        if gc_was_enabled:
            gc.enable()
    return Row(case.subject.name, best[0], case.floor.name, best[1])


def _aligned_float32(size: int) -> np.ndarray:
    # TVM takes a DLPack tensor only when its data is 64-byte aligned; numpy's need not be.
    buf = np.zeros(size + 16, dtype="float32")
    offset = (-buf.ctypes.data % 64) // buf.itemsize
    return buf[offset : offset + size]


def _trivial_relax_vms() -> dict[str, Callable[..., object]]:
    import tvm
    from tvm import relax
    from tvm.script import relax as R

    @tvm.script.ir_module
    class Identity:
        @R.function
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            return x

    vms = {}
    for mode in ("bytecode", "compiled"):
        ex = relax.build(Identity, target="llvm", exec_mode=mode)
        vms[mode] = relax.VirtualMachine(ex, tvm.cpu())["main"]
    return vms


def build_cases(scale: float = 1.0) -> list[Case]:
    """Every case and its floor, ready to time; `scale` multiplies the calls per block.

    At scale 1 a block takes about a millisecond on the machines of docs/performance.md.
    """
    import torch
    import tvm
    import tvm_ffi

    def n(calls: int) -> int:
        return max(1, int(calls * scale))

    tvm_ffi.load_module(_ext_path())
    c_add = ctypes.CDLL(_ext_path()).bench_c_add
    c_add.argtypes = [ctypes.c_int64, ctypes.c_int64]
    c_add.restype = ctypes.c_int64
    ffi_add = tvm_ffi.get_global_func("bench.add")
    call_n_times = tvm_ffi.get_global_func("bench.call_n_times")
    if ffi_add(1, 2) != 3 or c_add(1, 2) != 3:
        raise RuntimeError("bench.add / bench_c_add do not add: the fixture library is wrong")

    def empty() -> None:
        return None

    def noop_cb() -> None:
        return None

    # The lambda wrapper is in both the case and the ctypes floor, so they compare like for like.
    ffi = Timed("tvm_ffi bench.add(1, 2)", lambda: ffi_add(1, 2), n(2_500))
    arr = _aligned_float32(16)
    tt = torch.arange(16, dtype=torch.float32)
    vms = _trivial_relax_vms()
    x = tvm.runtime.tensor(np.zeros(4, dtype="float32"))
    items = list(range(1000))
    return [
        Case(ffi, Timed("ctypes bench_c_add(1, 2)", lambda: c_add(1, 2), n(2_500))),
        Case(ffi, Timed("empty Python call", empty, n(25_000))),
        Case(
            Timed("C++ -> Python callback", noop_cb, n(10_000), loop=call_n_times),
            Timed("Python -> Python call", noop_cb, n(25_000)),
        ),
        Case(
            Timed(
                "numpy -> TVM -> numpy (DLPack)",
                lambda: np.from_dlpack(tvm.runtime.from_dlpack(arr)),
                n(1_000),
            ),
            Timed("numpy -> numpy (DLPack)", lambda: np.from_dlpack(np.from_dlpack(arr)), n(1_500)),
        ),
        Case(
            Timed(
                "torch -> TVM -> torch (DLPack)",
                lambda: torch.from_dlpack(tvm.runtime.from_dlpack(tt)),
                n(400),
            ),
            Timed(
                "torch -> torch (DLPack)", lambda: torch.from_dlpack(torch.from_dlpack(tt)), n(100)
            ),
        ),
        *(
            Case(Timed(f"vm['main'] identity ({mode})", lambda f=f: f(x), n(1_500)), ffi)
            for mode, f in vms.items()
        ),
        Case(
            Timed("tvm.runtime.convert(1000-int list)", lambda: tvm.runtime.convert(items), n(40)),
            Timed("list(1000-int list)", lambda: list(items), n(1_000)),
        ),
    ]


def measure(scale: float = 1.0, repeats: int = 31) -> list[Row]:
    """Measure every case and its floor (`measure_case`); `scale` multiplies the calls."""
    return [measure_case(case, repeats) for case in build_cases(scale)]


def to_json(rows: list[Row]) -> dict[str, object]:
    """The figures with the versions and machine they were measured on."""
    import tvm
    import tvm_ffi

    return {
        "tvm": tvm.__version__,
        "tvm_ffi": getattr(tvm_ffi, "__version__", "unknown"),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "rows": [
            {
                "case": r.name,
                "ns": round(r.ns, 1),
                "floor": r.floor_name,
                "floor_ns": round(r.floor_ns, 1),
                "ratio": round(r.ratio, 3),
            }
            for r in rows
        ],
    }


def format_table(rows: list[Row]) -> str:
    """Rows as an aligned text table."""
    width = max(len(r.name) for r in rows)
    fwidth = max(len(r.floor_name) for r in rows)
    lines = [f"{'case':<{width}}  {'ns/call':>10}  {'floor':<{fwidth}}  {'ns/call':>10}  ratio"]
    for r in rows:
        lines.append(
            f"{r.name:<{width}}  {r.ns:>10.1f}  {r.floor_name:<{fwidth}}  "
            f"{r.floor_ns:>10.1f}  {r.ratio:6.2f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, and optionally write JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the figures as JSON to this file")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply call counts by this")
    parser.add_argument("--repeats", type=int, default=31, help="repeats per case (best is kept)")
    args = parser.parse_args(argv)
    if args.scale <= 0 or args.repeats <= 0:
        parser.error("--scale and --repeats must be positive")
    rows = measure(scale=args.scale, repeats=args.repeats)
    print(format_table(rows))
    if args.json:
        out = args.json
        if not out.is_absolute() and "BUILD_WORKING_DIRECTORY" in os.environ:
            # `bazel run` starts in the runfiles; a relative path means the caller's directory.
            out = Path(os.environ["BUILD_WORKING_DIRECTORY"]) / out
        out.write_text(json.dumps(to_json(rows), indent=2) + "\n")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
