"""Leaks and lifetimes (docs/robustness.md): repeated crossings do not grow the process.

Each check warms up (first-call caches, allocator arenas; 1,000 crossings), reads RSS,
repeats the crossing (CALLBACKS or ROUND_TRIPS times), and fails when RSS grew more than the
bound. The bound: a leak of one 64-byte object per call would grow RSS by >= 6.4 MB over
100,000 calls (1.9 MB over 30,000 round trips); with no leak, the growth measured on these machines
(tvm-ffi 0.1.13 - 0.1.15) was 0 KiB for every check. 4 MB leaves room for allocator noise
and still catches a per-call leak of 40 bytes (callbacks: a callback keeping one 40-byte
bytes object per call grew RSS by 6.8 MB, checked by hand) or 140 bytes per round trip (a
leaked tensor of 64 floats is 256 bytes). The figures go to leaks.json in the test outputs.

Default run: the counts of the issue (100,000 callbacks, 30,000 DLPack round trips).
"""

from __future__ import annotations

import gc
import json
import os
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import tvm
import tvm_ffi

BOUND_BYTES = 4 * 1024 * 1024
CALLBACKS = 100_000
ROUND_TRIPS = 30_000


@pytest.fixture(scope="module", autouse=True)
def _extensions() -> Any:
    """`testing.*` and `testing.robust.*` fixtures, registered for the module's tests."""
    from tvm_conformance.extensions import load_extension

    return [load_extension("ffi_testing"), load_extension("robustness_testing")]


def rss_bytes() -> int:
    """Resident set size of this process (Linux /proc)."""
    with open("/proc/self/statm", encoding="ascii") as stream:
        return int(stream.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def growth(work: Callable[[], None], warmup: Callable[[], None]) -> int:
    """RSS growth in bytes across `work`, after `warmup` and a collection."""
    warmup()
    gc.collect()
    before = rss_bytes()
    work()
    gc.collect()
    return rss_bytes() - before


def _report(name: str, grown: int) -> None:
    """Print the figure and add it to $TEST_UNDECLARED_OUTPUTS_DIR/leaks.json."""
    print(f"{name}: RSS growth {grown / 1024:.0f} KiB (bound {BOUND_BYTES // 1024} KiB)")
    out_dir = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR")
    if out_dir:
        path = Path(out_dir, "leaks.json")
        figures = json.loads(path.read_text()) if path.exists() else {}
        figures[name] = {"rss_growth_bytes": grown, "bound_bytes": BOUND_BYTES}
        path.write_text(json.dumps(figures, indent=1))


def _noop(_: Any) -> None:
    return None


def _raising(_: Any) -> None:
    raise ValueError("raised in a callback")


# "raising" (~6 s) third: the runner's two shards take alternate cases, so it and the next
# test (~9 s) land in different shards.
@pytest.mark.parametrize("kind", ["plain", "tensor", "raising"])
def test_cpp_calling_python_callback_does_not_leak(kind: str) -> None:
    call = tvm.get_global_func("testing.robust.call_repeatedly")
    arg: Any = 7
    if kind == "tensor":
        arg = tvm.runtime.tensor(np.arange(64, dtype="float32"))
    func = _raising if kind == "raising" else _noop
    grown = growth(lambda: call(func, arg, CALLBACKS), lambda: call(func, arg, 1000))
    _report(f"{CALLBACKS} {kind} callbacks", grown)
    assert call(func, arg, 10) == (10 if kind == "raising" else 0)
    assert grown < BOUND_BYTES


def test_python_catching_callback_errors_does_not_leak() -> None:
    invoke = tvm.get_global_func("testing.invoke")

    def work(n: int) -> None:
        for _ in range(n):
            try:
                invoke(_raising, 1)
            except ValueError:
                pass

    grown = growth(lambda: work(CALLBACKS), lambda: work(1000))
    _report(f"{CALLBACKS} raising callbacks caught in Python", grown)
    assert grown < BOUND_BYTES


def _numpy_round_trips(n: int) -> None:
    add = tvm.get_global_func("testing.tensor_add_inplace")
    for _ in range(n):
        a = np.zeros(64, dtype="float32")
        t = tvm_ffi.from_dlpack(a)
        add(t, 1.0)
        back = np.from_dlpack(t)
        assert back[0] == 1.0


def _torch_round_trips(n: int) -> None:
    add = tvm.get_global_func("testing.tensor_add_inplace")
    for _ in range(n):
        a = torch.zeros(64, dtype=torch.float32)
        t = tvm_ffi.from_dlpack(a)
        add(t, 1.0)
        back = torch.from_dlpack(t)
        assert back[0] == 1.0


@pytest.mark.parametrize("framework", ["numpy", "torch"])
def test_dlpack_round_trips_do_not_leak(framework: str) -> None:
    trips = _numpy_round_trips if framework == "numpy" else _torch_round_trips
    grown = growth(lambda: trips(ROUND_TRIPS), lambda: trips(1000))
    _report(f"{ROUND_TRIPS} {framework} DLPack round trips", grown)
    assert grown < BOUND_BYTES


def test_in_place_fixture_writes_through_dlpack() -> None:
    """The round trip above really shares memory: the fixture's write is seen by torch."""
    a = torch.zeros(4, dtype=torch.float32)
    add = tvm.get_global_func("testing.tensor_add_inplace")
    t = tvm_ffi.from_dlpack(a)
    add(t, 1.0)
    assert bool((a != 0).all())


def test_tensor_in_raising_callback_is_freed_with_the_exception() -> None:
    invoke = tvm.get_global_func("testing.invoke")
    a = torch.zeros(1024, dtype=torch.float32)
    ref = weakref.ref(a)
    t = tvm_ffi.from_dlpack(a)
    del a
    try:
        invoke(_raising, t)
    except ValueError as err:
        assert err.__traceback__ is not None
    del t
    gc.collect()
    assert ref() is None, "the torch tensor is still alive after the exception was dropped"
