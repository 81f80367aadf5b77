#!/usr/bin/env python3
"""Summarise one `bazel test` run: passed, failed, skipped (by reason), xfailed cases.

Bazel prints a py_test whose cases all skipped as PASSED; this makes the skips visible. It
reads what the verdict reads (verdict.py): the run, through the one reader (results.py), never
bazel-testlogs, which keeps results of earlier invocations too. Standard library only, so any
python3 runs it (./bazelw calls it after each `test`).

    skip_report.py --run conformance-runs/<stamp>-<lane>     # a run archive of ./bazelw test
    skip_report.py --bep build_events.json                   # bazel test --build_event_json_file
    skip_report.py --run DIR //python/tests/targets/...      # only those targets of the run

Labels (`//pkg:name`, `//pkg:all`, `//pkg/...`) restrict the report to those targets; a
`//pkg:name` that is not a target of the run also matches its `name_<variant>` targets (the
per-target variants of a tvm_py_test suite). The last line is always
`N passed, N failed, N skipped`; errors count as failed (an unreadable test.xml, and an error
of a suite outside its cases, too), xfailed cases are shown apart, and a target whose status the
verdict does not pass (verdict.status_passed: FAILED, FLAKY, NO_STATUS, TIMEOUT, ...) counts as
one failed when none of its cases failed. These are counts; the verdict line ./bazelw prints
after them judges the run (deviations named by the right cases, targets without cases, ...).
"""

from __future__ import annotations

import argparse
import collections
import sys
from dataclasses import dataclass, field

import results
import verdict


@dataclass
class Counts:
    """Outcome counts over many test cases, and skip reasons with their targets."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0
    xfailed: int = 0
    targets: int = 0
    reasons: dict[str, collections.Counter[str]] = field(default_factory=dict)

    def skip(self, reason: str, label: str) -> None:
        """Record one skipped case."""
        self.skipped += 1
        self.reasons.setdefault(reason, collections.Counter())[label] += 1


def add_cases(counts: Counts, cases: list[results.Case], label: str) -> None:
    """Count the test cases of one target."""
    counts.targets += 1
    for case in cases:
        if case.outcome == "failed":
            counts.failed += 1
        elif case.outcome == "xfailed":
            counts.xfailed += 1
        elif case.outcome in ("skipped", "disabled"):
            counts.skip(case.message, label)
        else:
            counts.passed += 1


def label_matches(label: str, patterns: list[str], all_labels: set[str]) -> bool:
    """True if `label` falls under one of the Bazel target patterns."""
    if not patterns:
        return True
    if not label.startswith("//"):
        return False
    package, _, name = label[2:].partition(":")
    for pattern in patterns:
        pattern = pattern.lstrip("@")
        if pattern.endswith("/..."):
            root = pattern[2:-4]
            if package == root or package.startswith(root + "/") or root == "":
                return True
        elif pattern == "//...":
            return True
        else:
            p_package, _, p_name = pattern[2:].partition(":")
            p_name = p_name or p_package.rsplit("/", 1)[-1]
            if p_package != package:
                continue
            if p_name in ("all", "*", "all-targets") or p_name == name:
                return True
            # A suite label matches its variants when it has no results of its own.
            if f"//{package}:{p_name}" not in all_labels and name.startswith(p_name + "_"):
                return True
    return False


def summarise_run(run: results.Run, patterns: list[str]) -> Counts:
    """Count outcomes over one run's targets that match `patterns` (all when empty)."""
    counts = Counts()
    for label in sorted(run.targets):
        target = run.targets[label]
        if not label_matches(label, patterns, set(run.targets)):
            continue
        for error in target.errors:
            counts.failed += 1
            print(f"skip_report: {error}", file=sys.stderr)
        # An <error>/<failure> outside any case (a collection error, a crashed fixture): a
        # problem of the verdict's (SUITE ERROR), so one failed each here too.
        for error in target.suite_errors:
            counts.failed += 1
            print(f"skip_report: {label} suite {error}", file=sys.stderr)
        failed_before = counts.failed
        add_cases(counts, target.cases, label)
        if not verdict.status_passed(target.status) and counts.failed == failed_before:
            # A usage error, a crash, a timeout, a flaky retry or a target with no status
            # leaves no failed case behind: the target itself counts as one, as the verdict
            # fails it.
            counts.failed += 1
            print(f"skip_report: {label} {target.status} with no failed case", file=sys.stderr)
    return counts


def render(counts: Counts) -> str:
    """The report text; its last line is `N passed, N failed, N skipped`."""
    lines = [
        f"Test cases in {counts.targets} target(s): {counts.passed} passed, "
        f"{counts.failed} failed, {counts.skipped} skipped, {counts.xfailed} xfailed"
    ]
    if counts.reasons:
        lines.append("Skipped, by reason:")
        for reason, labels in sorted(counts.reasons.items(), key=lambda kv: -sum(kv[1].values())):
            lines.append(f"  {sum(labels.values()):4d}  {reason}")
            where = ", ".join(f"{label} ({n})" for label, n in sorted(labels.items()))
            lines.append(f"        in {where}")
    lines.append(f"{counts.passed} passed, {counts.failed} failed, {counts.skipped} skipped")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line entry; returns 0 (the report never changes the verdict), 2 on bad input."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--run", help="a run archive of ./bazelw test (conformance-runs/...)")
    source.add_argument(
        "--bep", help="build event JSON file of the run (--build_event_json_file): its tests only"
    )
    parser.add_argument("patterns", nargs="*", help="target patterns (//pkg:name, //pkg/...)")
    parser.add_argument(
        "--target",
        action="append",
        default=[],
        help="restrict to this target pattern (repeatable; same as a // argument)",
    )
    args = parser.parse_args(argv)
    not_patterns = [p for p in args.patterns if not p.startswith("//")]
    if not_patterns:
        parser.error(f"not a target pattern: {not_patterns[0]} (give the run with --run or --bep)")
    try:
        run = results.read_run(args.run or args.bep)
    except (OSError, ValueError) as err:
        print(f"skip_report: cannot read the run: {err}", file=sys.stderr)
        return 2
    print(render(summarise_run(run, args.target + args.patterns)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
