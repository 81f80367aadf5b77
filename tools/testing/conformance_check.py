#!/usr/bin/env python3
"""Check docs/conformance.md, the deviations list and lane isolation against one run's results.

A run is a run archive that `./bazelw test` writes (`conformance-runs/<stamp>-<lane>/`) or a
build event JSON file; only the tests that invocation names count, never a stale
`bazel-testlogs` entry (tools/testing/results.py).

Every table row `| seed | behaviour | test |` names a test as `//package:target :: case`
(case: the pytest node name with parameters, or googletest's `Suite.Case`); the seed cell is a
3-digit seed or a lowercase word (`robust`, `deploy`). A row holds when its case passed, or
xfailed as a deviation listed in docs/deviations.md (the xfail reason says `deviation <id>:`).
Rows whose behaviour starts with `kit:` test the kit's own fixtures or harness; they are
counted apart from TVM behaviours. Rows whose target did not run in this invocation (e.g.
cuda variants without --config=cuda) are listed as not run; with --require-all they fail.

Over every case of the run, not only the rows:
* an xfail whose reason names no listed deviation fails the check;
* a strict XPASS (a listed deviation's test now passes) fails it, naming the deviation to remove;
* lane isolation: in a `<name>_<target>` variant (llvm, cuda, ...) every pytest case records
  the JUnit property `tvm_target` equal to that target and no case id names another target
  (`test_x[cuda]` in `x_test_llvm`); in a `<name>_independent` target no case records one.
  (googletest cases record no properties and are not checked.)

    conformance_check.py --run conformance-runs/<stamp>-<lane> docs/conformance.md [--require-all]

Standard library only. Exit status 1 when anything does not hold.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
from dataclasses import dataclass

import results

_SEED = r"`?(?P<seed>\d{3}|[a-z][a-z0-9_-]*)`?"
_ROW = re.compile(r"^\|\s*" + _SEED + r"\s*\|(?P<behaviour>.*)\|(?P<tests>.*)\|\s*$")
_TEST = re.compile(r"`?(?P<label>//[^\s:`]*:[^\s`]+)\s+::\s+(?P<case>[^`;]+?)`?\s*(?:;|$)")
_DEVIATION_ROW = re.compile(r"^\|\s*`(?P<id>[a-z0-9][a-z0-9-]*)`\s*\|\s*(?P<kind>[a-z]+)\s*\|")
# Label suffixes of per-target variants (tvm_py_test(targets = [...])) and of the
# target-independent ones.
TARGET_SUFFIXES = ("llvm", "cuda", "rocm", "vulkan", "metal", "opencl", "nvptx", "hexagon")
INDEPENDENT_SUFFIX = "independent"
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


def parse_rows(markdown: str) -> list[Row]:
    """Every test named in the conformance tables (a row naming several gives several)."""
    rows = []
    for line in markdown.splitlines():
        match = _ROW.match(line.strip())
        if not match or match["seed"] == "seed":  # the header row
            continue
        tests = list(_TEST.finditer(match["tests"].strip()))
        if not tests:
            raise ValueError(f"conformance row names no `//pkg:target :: case`: {line.strip()}")
        for test in tests:
            rows.append(
                Row(match["seed"], match["behaviour"].strip(), test["label"], test["case"].strip())
            )
    return rows


def parse_deviations(markdown: str) -> dict[str, str]:
    """Deviation id -> kind, from docs/deviations.md (tools/testing/deviations_doc.py)."""
    found = {}
    for line in markdown.splitlines():
        match = _DEVIATION_ROW.match(line.strip())
        if match:
            found[match["id"]] = match["kind"]
    return found


def row_outcome(row: Row, run: results.Run, deviations: dict[str, str]) -> str:
    """passed / deviation / failed / xpass / unlisted xfail / skipped / disabled / missing /
    not run, for one row's case in one run."""
    target = run.targets.get(row.label)
    if target is None:
        return "not run"
    case = target.case(row.case)
    if case is None:
        return "missing"
    if case.outcome == "xfailed":
        return "deviation" if case.deviation in deviations else "unlisted xfail"
    if case.xpass_strict:
        return "xpass"
    return case.outcome


def deviation_problems(run: results.Run, deviations: dict[str, str]) -> list[str]:
    """Xfails that name no listed deviation, and strict XPASSes, over every case of the run."""
    problems = []
    for target, case in run.cases():
        where = f"{target.label} :: {case.name}"
        if case.outcome == "xfailed" and case.deviation not in deviations:
            named = (
                f"names deviation {case.deviation!r}, which is not in docs/deviations.md"
                if case.deviation
                else "names no deviation"
            )
            problems.append(
                f"UNLISTED XFAIL: {where}: its reason {named} (mark it with "
                f"tvm_conformance.deviations.xfail('<id>')): {case.message[:200]}"
            )
        elif case.xpass_strict:
            dev = case.deviation or "(unknown)"
            problems.append(
                f"XPASS: {where} passed: deviation {dev} no longer occurs; remove it from "
                "tvm_conformance.deviations (and its xfail mark)"
            )
    return problems


def variant_suffix(label: str) -> str | None:
    """`llvm` for `//pkg:x_test_llvm`, `independent` for `..._independent`, else None."""
    name = label.rpartition(":")[2]
    for suffix in (*TARGET_SUFFIXES, INDEPENDENT_SUFFIX):
        if name.endswith("_" + suffix):
            return suffix
    return None


def _other_target_in_id(case: results.Case, own: str) -> str | None:
    """A target other than `own` among the case id's parameters (`test_x[cuda-compiled]`)."""
    params = case.name.partition("[")[2].rstrip("]")
    for token in re.split(r"[-_,\s]+", params):
        if token in TARGET_SUFFIXES and token != own:
            return token
    return None


def isolation_problems(run: results.Run) -> list[str]:
    """Cases of one target's variant that belong to another target (or to none)."""
    problems = []
    for label in sorted(run.targets):
        suffix = variant_suffix(label)
        if suffix is None:
            continue
        for case in run.targets[label].cases:
            if case.googletest:
                continue
            recorded = case.properties.get("tvm_target")
            if suffix == INDEPENDENT_SUFFIX and recorded:
                problems.append(
                    f"LANE ISOLATION: {label} :: {case.name} records tvm_target={recorded!r} "
                    "in a target-independent test"
                )
            elif suffix != INDEPENDENT_SUFFIX and recorded != suffix:
                problems.append(
                    f"LANE ISOLATION: {label} :: {case.name} records tvm_target={recorded!r}, "
                    f"not {suffix!r}"
                )
            if suffix != INDEPENDENT_SUFFIX and (other := _other_target_in_id(case, suffix)):
                problems.append(
                    f"LANE ISOLATION: {label} :: {case.name}: the case id names target "
                    f"{other!r} in the {suffix!r} variant"
                )
    return problems


def check(
    rows: list[Row],
    run: results.Run,
    deviations: dict[str, str],
    require_all: bool,
    isolation: bool = True,
) -> int:
    """Print one line per problem and a summary; return the number of problems."""
    tally: dict[bool, collections.Counter[str]] = {
        False: collections.Counter(),
        True: collections.Counter(),
    }
    per_seed: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    problems = 0
    for row in rows:
        outcome = row_outcome(row, run, deviations)
        tally[row.kit][outcome] += 1
        per_seed[row.seed][outcome] += 1
        bad = outcome not in (*HOLDS, "not run") or (outcome == "not run" and require_all)
        if outcome not in HOLDS:
            print(
                f"conformance: {outcome.upper()}: seed {row.seed}: {row.behaviour}: "
                f"{row.label} :: {row.case}"
            )
        problems += bad
    for target in run.targets.values():
        for error in target.errors:
            print(f"conformance: {error}")
    extra = deviation_problems(run, deviations) + (isolation_problems(run) if isolation else [])
    for problem in extra:
        print(f"conformance: {problem}")
    problems += len(extra)
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
    print(f"conformance: lane {run.lane}: {problems} problems")
    return problems


def main(argv: list[str]) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("doc", help="docs/conformance.md")
    parser.add_argument(
        "--run", required=True, help="run archive (conformance-runs/...) or build event JSON file"
    )
    parser.add_argument(
        "--deviations",
        help="docs/deviations.md (default: deviations.md beside the conformance map)",
    )
    parser.add_argument(
        "--require-all", action="store_true", help="a row whose target did not run is a problem"
    )
    parser.add_argument(
        "--no-lane-isolation", action="store_true", help="skip the lane-isolation check"
    )
    args = parser.parse_args(argv)
    with open(args.doc, encoding="utf-8") as fh:
        rows = parse_rows(fh.read())
    if not rows:
        print(f"conformance: no rows found in {args.doc}", file=sys.stderr)
        return 1
    deviations_md = args.deviations or os.path.join(os.path.dirname(args.doc), "deviations.md")
    with open(deviations_md, encoding="utf-8") as fh:
        deviations = parse_deviations(fh.read())
    run = results.read_run(args.run)
    print(f"conformance: run {args.run} (lane {run.lane}, {len(run.targets)} test targets)")
    problems = check(rows, run, deviations, args.require_all, not args.no_lane_isolation)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
