#!/usr/bin/env python3
"""The run's verdict, with docs/conformance.md's rows as labels: what CI checks per run.

A run is a run archive that `./bazelw test` writes (`conformance-runs/<stamp>-<lane>/`) or a
build event JSON file; only the tests that invocation names count, never a stale
`bazel-testlogs` entry (tools/verdict/results.py).

The verdict is `verdict.verdict_of()`, the one function `./bazelw test`, this check and the report
call: Bazel's exit code, every target's status and every case count, mapped to a row or not;
an xfail counts only as a listed deviation (tvm_conformance.deviation_registry) that lists
that very case; a strict XPASS, an empty run and a case of another target in a
`<name>_<target>` variant (variant isolation) are problems.

Every table row `| seed | behaviour | test |` names a test as `//package:target :: case`
(case: the pytest node name with parameters, or googletest's `Suite.Case`); the seed cell is a
3-digit seed or a lowercase word (`robust`, `deploy`). Rows label behaviours and are tallied per
seed (rows whose behaviour starts with `kit:` test the kit's own fixtures, counted apart); they
decide nothing, except that a row naming a case its target did not report is a problem, and
with --require-all so is a row whose target did not run (a cuda run must run every row).

    conformance_check.py --run conformance-runs/<stamp>-<lane> docs/conformance.md [--require-all]

Standard library only. Exit status 1 when the verdict is FAIL.
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from dataclasses import dataclass

import results
import run_identity
import verdict

_SEED = r"`?(?P<seed>\d{3}|[a-z][a-z0-9_-]*)`?"
_ROW = re.compile(r"^\|\s*" + _SEED + r"\s*\|(?P<behaviour>.*)\|(?P<tests>.*)\|\s*$")
# One `;`-separated piece of a row's test cell: `//package:target :: case`, or a bare `case` of
# the label named before it in the same cell (`//pkg:t :: a; b; c` is three cases of //pkg:t).
_LABELLED = re.compile(r"^(?P<label>//[^\s:]*:\S+)\s+::\s+(?P<case>\S.*)$")
KIT_PREFIX = "kit:"
# Outcomes of a row's case that make the row hold.
HOLDS = ("passed", "deviation")


@dataclass(frozen=True)
class Row:
    """One test named by one row of the conformance map."""

    seed: str
    behaviour: str
    label: str
    case: str

    @property
    def kit(self) -> bool:
        """True for a self-test of the kit (behaviour starts with `kit:`)."""
        return self.behaviour.strip("` ").startswith(KIT_PREFIX)


def parse_tests(cell: str, line: str = "") -> list[tuple[str, str]]:
    """(label, case) of every case a row's test cell names, each `;`-separated piece one case:
    `//pkg:target :: case`, or a bare `case` of the label before it. A cell naming none, an
    empty piece or a bare case before any label is an error (a case that would be skipped)."""
    pieces = [piece.strip() for piece in cell.replace("`", "").split(";")]
    tests: list[tuple[str, str]] = []
    label = None
    for piece in pieces:
        if not piece:
            raise ValueError(f"conformance row has an empty case (a stray `;`): {line.strip()}")
        labelled = _LABELLED.match(piece)
        if labelled:
            label = labelled["label"]
            piece = labelled["case"].strip()
        elif label is None or "::" in piece or piece.startswith("//"):
            raise ValueError(
                f"conformance row names no `//pkg:target :: case` before {piece!r}: {line.strip()}"
            )
        tests.append((label, piece))
    return tests


def parse_rows(markdown: str) -> list[Row]:
    """Every test named in the conformance tables (a row naming several gives several)."""
    rows = []
    for line in markdown.splitlines():
        match = _ROW.match(line.strip())
        if not match or match["seed"] == "seed":  # the header row
            continue
        for label, case in parse_tests(match["tests"], line):
            rows.append(Row(match["seed"], match["behaviour"].strip(), label, case))
    return rows


def row_outcome(row: Row, run: results.Run, registry: verdict.Registry) -> str:
    """passed / deviation / failed / xpass / unlisted xfail / skipped / disabled / missing /
    not run, for one row's case in one run (a label for the report; the verdict counts)."""
    target = run.targets.get(row.label)
    if target is None:
        return "not run"
    case = target.case(row.case)
    if case is None:
        return "missing"
    if case.outcome == "xfailed":
        dev = registry.by_id().get(case.deviation or "")
        listed = dev is not None and registry.lists(dev, row.label, case.name)
        return "deviation" if listed else "unlisted xfail"
    if case.xpass_strict:
        return "xpass"
    return case.outcome


def check(
    rows: list[Row],
    run: results.Run,
    registry: verdict.Registry,
    require_all: bool,
    isolation: bool = True,
) -> int:
    """Print the run's verdict (every problem, then the verdict line) after the rows' tallies;
    return the number of problems. The rows only label: the verdict counts every case."""
    tally: dict[bool, collections.Counter[str]] = {
        False: collections.Counter(),
        True: collections.Counter(),
    }
    per_seed: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for row in rows:
        outcome = row_outcome(row, run, registry)
        tally[row.kit][outcome] += 1
        per_seed[row.seed][outcome] += 1
    for seed in sorted(per_seed):
        counts = ", ".join(f"{n} {k}" for k, n in sorted(per_seed[seed].items()))
        print(f"conformance: seed {seed}: {counts}")
    for kit, what in (
        (False, "row cases of TVM behaviours"),
        (True, "row cases of kit self-tests"),
    ):
        t = tally[kit]
        print(
            f"conformance: lane {run.lane}: {sum(t.values())} {what}: {t['passed']} passed, "
            f"{t['deviation']} deviations, {t['not run']} not run, "
            f"{sum(t.values()) - t['passed'] - t['deviation'] - t['not run']} not holding"
        )
    result = verdict.verdict_of(run, registry, rows, require_all, isolation)
    for problem in result.problems:
        print(f"conformance: {problem}")
    print(result.line(run_identity.identity_key(run)))
    return len(result.problems)


def main(argv: list[str]) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("doc", help="docs/conformance.md")
    parser.add_argument(
        "--run", required=True, help="run archive (conformance-runs/...) or build event JSON file"
    )
    parser.add_argument(
        "--require-all", action="store_true", help="a row whose target did not run is a problem"
    )
    parser.add_argument(
        "--no-variant-isolation", action="store_true", help="skip the variant-isolation check"
    )
    args = parser.parse_args(argv)
    with open(args.doc, encoding="utf-8") as fh:
        rows = parse_rows(fh.read())
    if not rows:
        print(f"conformance: no rows found in {args.doc}", file=sys.stderr)
        return 1
    try:
        run = results.read_run(args.run)
    except (OSError, ValueError) as err:
        print(f"conformance: cannot read the run: {err}", file=sys.stderr)
        return 2
    print(f"conformance: run {args.run} (lane {run.lane}, {len(run.targets)} test targets)")
    problems = check(
        rows, run, verdict.load_registry(), args.require_all, not args.no_variant_isolation
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
