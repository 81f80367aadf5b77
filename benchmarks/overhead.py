"""FFI and Relax VM call overhead, each next to a floor measured in the same process.

`./bazelw run //benchmarks:overhead [-- --json PATH]` prints one row per case: the case's ns
per call (best of several repeats), its floor's ns per call, and the ratio. Ratios travel
between machines and loads far better than absolute times, so the regression test
(overhead_ratio_test.py) checks ratios only.
"""

from __future__ import annotations

import argparse
import ctypes
import dataclasses
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


def ns_per_call(fn: Callable[[], object], calls: int, repeats: int) -> float:
    """Best-of-`repeats` ns per call of `fn`, each repeat timing `calls` calls in a loop.

    The minimum is the figure least disturbed by other processes on a shared machine.
    """
    if calls <= 0 or repeats <= 0:
        raise ValueError(f"calls and repeats must be positive, got {calls}, {repeats}")
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter_ns() - start) / calls)
    return best


def _aligned_float32(size: int) -> np.ndarray:
    # TVM takes a DLPack tensor only when its data is 64-byte aligned; numpy's need not be.
    buf = np.zeros(size + 16, dtype="float32")
    offset = (-buf.ctypes.data % 64) // buf.itemsize
    return buf[offset : offset + size]


def _callback_ns(
    call_n_times: Callable[..., object], cb: Callable[[], None], calls: int, repeats: int
) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter_ns()
        call_n_times(cb, calls)
        best = min(best, (time.perf_counter_ns() - start) / calls)
    return best


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


def measure(scale: float = 1.0, repeats: int = 7) -> list[Row]:
    """Measure every case and its floor; `scale` multiplies the call counts."""
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

    empty_ns = ns_per_call(empty, n(200_000), repeats)
    ctypes_ns = ns_per_call(lambda: c_add(1, 2), n(100_000), repeats)
    # The lambda wrapper is in both the case and the ctypes floor, so they compare like for like.
    ffi_ns = ns_per_call(lambda: ffi_add(1, 2), n(100_000), repeats)

    def python_loop_cb(count: int) -> None:
        for _ in range(count):
            noop_cb()

    cb_ns = _callback_ns(call_n_times, noop_cb, n(100_000), repeats)
    py_cb_ns = _callback_ns(lambda f, count: python_loop_cb(count), noop_cb, n(100_000), repeats)

    arr = _aligned_float32(16)
    np_floor = ns_per_call(lambda: np.from_dlpack(np.from_dlpack(arr)), n(20_000), repeats)
    np_tvm = ns_per_call(lambda: np.from_dlpack(tvm.runtime.from_dlpack(arr)), n(20_000), repeats)
    tt = torch.arange(16, dtype=torch.float32)
    torch_floor = ns_per_call(lambda: torch.from_dlpack(torch.from_dlpack(tt)), n(20_000), repeats)
    torch_tvm = ns_per_call(
        lambda: torch.from_dlpack(tvm.runtime.from_dlpack(tt)), n(20_000), repeats
    )

    vms = _trivial_relax_vms()
    x = tvm.runtime.tensor(np.zeros(4, dtype="float32"))
    vm_rows = [
        Row(
            f"vm['main'] identity ({mode})",
            ns_per_call(lambda f=f: f(x), n(20_000), repeats),
            "tvm_ffi bench.add(1, 2)",
            ffi_ns,
        )
        for mode, f in vms.items()
    ]

    items = list(range(1000))
    convert_ns = ns_per_call(lambda: tvm.runtime.convert(items), n(500), repeats)
    copy_ns = ns_per_call(lambda: list(items), n(500), repeats)

    return [
        Row("tvm_ffi bench.add(1, 2)", ffi_ns, "ctypes bench_c_add(1, 2)", ctypes_ns),
        Row("tvm_ffi bench.add(1, 2)", ffi_ns, "empty Python call", empty_ns),
        Row("C++ -> Python callback", cb_ns, "Python -> Python call", py_cb_ns),
        Row("numpy -> TVM -> numpy (DLPack)", np_tvm, "numpy -> numpy (DLPack)", np_floor),
        Row("torch -> TVM -> torch (DLPack)", torch_tvm, "torch -> torch (DLPack)", torch_floor),
        *vm_rows,
        Row("tvm.runtime.convert(1000-int list)", convert_ns, "list(1000-int list)", copy_ns),
    ]


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
    parser.add_argument("--repeats", type=int, default=7, help="repeats per case (best is kept)")
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
