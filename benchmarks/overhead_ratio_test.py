"""Regression bounds on FFI / VM call overhead, as ratios to floors measured in-process.

Each bound is several times the ratio measured on a quiet 2-core machine (the figures are in
the README's Performance section), so load that slows a case and its floor alike does not
fail it, while a real regression (an extra copy, a slow path taken per call) does.
The measured figures go to $TEST_UNDECLARED_OUTPUTS_DIR/overhead.json for the report.
"""

import json
import os
from pathlib import Path

import overhead
import pytest

# case name -> (floor name, largest acceptable ratio).
BOUNDS = {
    ("tvm_ffi bench.add(1, 2)", "ctypes bench_c_add(1, 2)"): 3.0,
    ("tvm_ffi bench.add(1, 2)", "empty Python call"): 40.0,
    ("C++ -> Python callback", "Python -> Python call"): 40.0,
    ("numpy -> TVM -> numpy (DLPack)", "numpy -> numpy (DLPack)"): 30.0,
    ("torch -> TVM -> torch (DLPack)", "torch -> torch (DLPack)"): 10.0,
    ("vm['main'] identity (bytecode)", "tvm_ffi bench.add(1, 2)"): 200.0,
    ("vm['main'] identity (compiled)", "tvm_ffi bench.add(1, 2)"): 200.0,
    ("tvm.runtime.convert(1000-int list)", "list(1000-int list)"): 1000.0,
}


@pytest.fixture(scope="module")
def rows() -> dict[tuple[str, str], overhead.Row]:
    """One measurement (a fifth of the benchmark's calls) shared by every case."""
    measured = overhead.measure(scale=0.2, repeats=5)
    out_dir = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR")
    if out_dir:
        Path(out_dir, "overhead.json").write_text(json.dumps(overhead.to_json(measured), indent=2))
    return {(r.name, r.floor_name): r for r in measured}


def test_every_case_has_a_bound(rows: dict[tuple[str, str], overhead.Row]) -> None:
    assert set(rows) == set(BOUNDS)


@pytest.mark.parametrize("case", sorted(BOUNDS), ids=lambda c: f"{c[0]} vs {c[1]}")
def test_ratio_within_bound(
    case: tuple[str, str], rows: dict[tuple[str, str], overhead.Row]
) -> None:
    row = rows[case]
    assert row.ns > 0 and row.floor_ns > 0
    assert row.ratio <= BOUNDS[case], (
        f"{row.name}: {row.ns:.0f} ns vs {row.floor_name}: {row.floor_ns:.0f} ns "
        f"= {row.ratio:.2f}x, bound {BOUNDS[case]}x"
    )
