"""The wall time of the whole op corpus on a pool of workers, simulated from measured shards.

Reads each shard of a run of //python/tests/op_corpus:op_corpus_all (its testlogs: every
`test.xml`'s duration, and the chunk's CPU from the board in its `outputs.zip`), then schedules
the shards on W workers, each running one shard at a time:

- `fifo`: the shards in the order given (Bazel's order: part, then shard), each to the first
  free worker, as a REAPI pool takes queued actions;
- `lpt`: longest first, each to the first free worker (a scheduler that knows the durations);
- `bound`: no schedule does better than the longest shard or the total over W.

`--overhead-s` adds a fixed cost to every shard (a remote worker's set-up: fetching the inputs,
starting the sandbox), measured from a remote run of a slice (docs/remote.md). `--times FILE`
reads the shards' times from a JSON object instead (`{"op-3of120": 83.5, ...}`, seconds).

    python3 tools/perf/pool_simulation.py bazel-testlogs/python/tests/op_corpus \
        --workers 8 32 128 [--overhead-s 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import heapq
import json
import re
import sys
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_SHARD_DIR = re.compile(r"shard_(\d+)_of_(\d+)$")


@dataclass(frozen=True)
class Shard:
    """One shard of the run: where it is, its wall time and its chunk's CPU time."""

    label: str
    wall_s: float
    cpu_s: float | None


def makespan(times: Sequence[float], workers: int) -> float:
    """The time the last of ``times`` ends when each, in order, goes to the first free one of
    ``workers`` workers."""
    if workers < 1:
        raise ValueError(f"workers must be at least 1, not {workers}")
    if any(t < 0 for t in times):
        raise ValueError("a shard's time is negative")
    free = [0.0] * min(workers, max(1, len(times)))
    heapq.heapify(free)
    end = 0.0
    for t in times:
        start = heapq.heappop(free)
        end = max(end, start + t)
        heapq.heappush(free, start + t)
    return end


def schedules(times: Sequence[float], workers: int, overhead_s: float = 0.0) -> dict[str, float]:
    """The ``fifo`` and ``lpt`` makespans and the lower ``bound`` for ``workers`` workers."""
    each = [t + overhead_s for t in times]
    return {
        "fifo": makespan(each, workers),
        "lpt": makespan(sorted(each, reverse=True), workers),
        "bound": max(max(each, default=0.0), sum(each) / workers),
    }


def _shard_order(path: Path) -> tuple[str, int]:
    match = _SHARD_DIR.search(path.parent.name)
    return (str(path.parent.parent), int(match.group(1)) if match else 0)


def read_shards(testlogs: Path) -> list[Shard]:
    """Every shard under ``testlogs`` with a test.xml, in part then shard order."""
    shards = []
    for xml in sorted(testlogs.rglob("test.xml"), key=_shard_order):
        suites = ET.parse(xml).getroot()
        wall = sum(float(s.get("time", 0)) for s in suites.iter("testsuite"))
        cpu = None
        outputs = xml.parent / "test.outputs" / "outputs.zip"
        if outputs.exists():
            with zipfile.ZipFile(outputs) as z:
                for name in z.namelist():
                    if Path(name).name.startswith("op_corpus_board_"):
                        cpu = float(json.loads(z.read(name)).get("cpu_s", 0.0)) or None
        shards.append(Shard(str(xml.parent.relative_to(testlogs)), wall, cpu))
    return shards


def read_times(path: Path) -> list[Shard]:
    """Shards from a JSON object of name -> seconds, in its order; a time that is no
    non-negative number raises ValueError naming the shard."""
    data = json.loads(path.read_text())
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object of shard -> seconds")
    shards = []
    for label, seconds in data.items():
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
            raise ValueError(f"{path}: shard {label!r} has no time in seconds: {seconds!r}")
        shards.append(Shard(str(label), float(seconds), None))
    return shards


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("testlogs", type=Path, nargs="?", help="the run's testlogs")
    parser.add_argument("--times", type=Path, help="a JSON object of shard -> seconds instead")
    parser.add_argument("--workers", type=int, nargs="+", default=[8, 32, 128])
    parser.add_argument("--overhead-s", type=float, default=0.0, help="added to every shard")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    if (args.testlogs is None) == (args.times is None):
        parser.error("give the testlogs or --times, one of them")
    if args.times:
        shards = read_times(args.times)
    elif not args.testlogs.is_dir():
        parser.error(f"{args.testlogs} is not a directory")
    else:
        shards = read_shards(args.testlogs)
    if not shards:
        parser.error(f"no shard in {args.testlogs or args.times}")
    if bad := [w for w in args.workers if w < 1]:
        parser.error(f"workers must be at least 1: {bad}")
    times = [s.wall_s for s in shards]
    cpu = [s.cpu_s for s in shards if s.cpu_s is not None]
    figures = {
        "shards": len(shards),
        "wall_s_total": round(sum(times), 1),
        "wall_s_longest": round(max(times), 1),
        "cpu_s_total": round(sum(cpu), 1) if cpu else None,
        "overhead_s": args.overhead_s,
        "workers": {
            str(w): {k: round(v, 1) for k, v in schedules(times, w, args.overhead_s).items()}
            for w in args.workers
        },
    }
    print(
        f"{len(shards)} shards, {sum(times):.0f} s of shard time (longest {max(times):.0f} s)"
        + (f", {sum(cpu):.0f} s of the chunks' CPU" if cpu else "")
    )
    print("| workers | fifo, s | longest first, s | lower bound, s |")
    print("|---:|---:|---:|---:|")
    for w, row in figures["workers"].items():
        print(f"| {w} | {row['fifo']:.0f} | {row['lpt']:.0f} | {row['bound']:.0f} |")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
