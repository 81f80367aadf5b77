"""pool_simulation.py: the schedules it simulates and how it reads a run's shards."""

import itertools
import json
import random
import zipfile
from pathlib import Path

import pool_simulation
import pytest


def _optimal(times: list[float], workers: int) -> float:
    """The best makespan over every assignment of shards to workers (small inputs only)."""
    best = float("inf")
    for assignment in itertools.product(range(workers), repeat=len(times)):
        loads = [0.0] * workers
        for t, w in zip(times, assignment, strict=True):
            loads[w] += t
        best = min(best, max(loads))
    return best


def test_fifo_gives_each_shard_the_first_free_worker() -> None:
    # Worker A: 5, then 1 (free at 5 before B at 6); worker B: 3, then 3.
    assert pool_simulation.makespan([5, 3, 3, 1], 2) == 6
    # In the order given, the long shard comes last: A runs 1 and 1, B runs 1 and then 5.
    assert pool_simulation.makespan([1, 1, 1, 5], 2) == 6


def test_more_workers_than_shards_is_the_longest_shard() -> None:
    assert pool_simulation.makespan([4, 9, 2], 128) == 9


def test_schedules_against_the_exhaustive_optimum() -> None:
    rng = random.Random(0)
    for _ in range(60):
        times = [rng.choice([1, 2, 3, 5, 8, 13]) * 1.0 for _ in range(rng.randint(1, 7))]
        workers = rng.randint(1, 3)
        got = pool_simulation.schedules(times, workers)
        best = _optimal(times, workers)
        assert got["bound"] <= best <= got["lpt"] and best <= got["fifo"]
        # Graham: longest first is within 4/3 of the optimum.
        assert got["lpt"] <= best * 4 / 3 + 1e-9


def test_overhead_is_paid_by_every_shard() -> None:
    assert pool_simulation.schedules([10, 10], 1, overhead_s=2)["fifo"] == 24


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="workers"):
        pool_simulation.makespan([1.0], 0)
    with pytest.raises(ValueError, match="negative"):
        pool_simulation.makespan([-1.0], 2)


def test_shards_are_read_in_part_then_shard_order(tmp_path: Path) -> None:
    for part, shard, wall, cpu in [(0, 10, 7.5, 6.0), (0, 2, 3.0, None), (1, 1, 4.0, 3.5)]:
        d = tmp_path / f"op_corpus_all_part{part}_test" / f"shard_{shard}_of_32"
        d.mkdir(parents=True)
        (d / "test.xml").write_text(
            f'<testsuites><testsuite name="t" time="{wall}"></testsuite></testsuites>'
        )
        if cpu is not None:
            (d / "test.outputs").mkdir()
            with zipfile.ZipFile(d / "test.outputs" / "outputs.zip", "w") as z:
                z.writestr("op_corpus_board_op_1of128.json", json.dumps({"cpu_s": cpu}))
    shards = pool_simulation.read_shards(tmp_path)
    assert [(s.wall_s, s.cpu_s) for s in shards] == [(3.0, None), (7.5, 6.0), (4.0, 3.5)]
    assert shards[0].label == "op_corpus_all_part0_test/shard_2_of_32"


def test_times_are_read_from_a_json_object(tmp_path: Path) -> None:
    path = tmp_path / "times.json"
    path.write_text(json.dumps({"op-1of120": 12.5, "module-0of8": 3}))
    shards = pool_simulation.read_times(path)
    assert [(s.label, s.wall_s) for s in shards] == [("op-1of120", 12.5), ("module-0of8", 3.0)]
    path.write_text(json.dumps({"op-1of120": "slow"}))
    with pytest.raises(ValueError, match="op-1of120"):
        pool_simulation.read_times(path)
