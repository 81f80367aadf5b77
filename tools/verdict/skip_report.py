#!/usr/bin/env python3
"""Summarise the JUnit XML of a `bazel test` run: passed, failed, skipped (by reason), xfailed.

Bazel prints a py_test whose cases all skipped as PASSED; this makes the skips visible.
Standard library only, so any python3 runs it (./bazelw and .ci/run call it after `test`).

    skip_report.py --testlogs bazel-testlogs                 # every test.xml under it
    skip_report.py --testlogs bazel-testlogs //python/tests/targets/...
    skip_report.py path/to/test.xml other/dir                # files, or dirs searched for test.xml
    skip_report.py --bep build_events.json                   # exactly this invocation's tests
    skip_report.py --run conformance-runs/<stamp>-<lane>     # a run archive of ./bazelw test

bazel-testlogs keeps results of earlier invocations too (e.g. cuda variants from a previous
--config=cuda run); `--bep` reads the file of `bazel test --build_event_json_file=FILE` and
`--run` a run archive (tools/verdict/results.py); both report only the tests of that
invocation, cached ones included.

Labels (`//pkg:name`, `//pkg:all`, `//pkg/...`) restrict the report to those targets; a
`//pkg:name` with no test.xml of its own also matches its `name_<variant>` targets (the
per-target variants of a tvm_py_test suite). The last line is always
`N passed, N failed, N skipped`; errors count as failed, xfailed and xpassed are shown apart.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import results

# Bazel test statuses that fail a target.
_FAILED_STATUSES = ("FAILED", "TIMEOUT", "INCOMPLETE", "REMOTE_FAILURE", "FAILED_TO_BUILD")
# Bazel stores shards and runs of one target below its directory.
_SHARD_DIR = re.compile(r"^(shard_\d+_of_\d+(_run_\d+_of_\d+)?|run_\d+_of_\d+|attempt_\d+)$")


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


def label_of(xml_path: str, testlogs: str | None) -> str:
    """`//pkg:name` for `<testlogs>/pkg/name[/shard_..]/test.xml`; else the path itself."""
    if testlogs is None:
        return xml_path
    rel = os.path.relpath(os.path.dirname(os.path.abspath(xml_path)), os.path.abspath(testlogs))
    parts = [p for p in rel.split(os.sep) if p not in (".", "")]
    while parts and _SHARD_DIR.match(parts[-1]):
        parts.pop()
    if not parts or parts[0] == "..":
        return xml_path
    package = "/".join(parts[:-1])
    return f"//{package}:{parts[-1]}"


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


def add_file(counts: Counts, xml_path: str, label: str) -> None:
    """Count the test cases of one JUnit XML file (pytest, googletest or Bazel's own)."""
    try:
        cases, _ = results.read_junit(xml_path)
    except (ET.ParseError, OSError) as err:
        counts.failed += 1
        print(f"skip_report: cannot read {xml_path}: {err}", file=sys.stderr)
        return
    add_cases(counts, cases, label)


def find_xml(paths: list[str]) -> list[str]:
    """test.xml files: the files given, and every test.xml below the directories given."""
    found = []
    for path in paths:
        if os.path.isdir(path):
            for dirpath, dirnames, filenames in os.walk(path, followlinks=True):
                dirnames.sort()
                if "test.xml" in filenames:
                    found.append(os.path.join(dirpath, "test.xml"))
        elif os.path.isfile(path):
            found.append(path)
        else:
            print(f"skip_report: no such file or directory: {path}", file=sys.stderr)
    return found


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


def summarise(xml_files: list[str], testlogs: str | None, patterns: list[str]) -> Counts:
    """Count outcomes over the files whose targets match `patterns` (all when empty)."""
    labelled = [(path, label_of(path, testlogs)) for path in xml_files]
    all_labels = {label for _, label in labelled}
    counts = Counts()
    for path, label in labelled:
        if label_matches(label, patterns, all_labels):
            add_file(counts, path, label)
    return counts


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
        failed_before = counts.failed
        add_cases(counts, target.cases, label)
        if target.status in _FAILED_STATUSES and counts.failed == failed_before:
            # A usage error, a crash or a timeout leaves no failed case behind: the target
            # itself counts as one, so the closing line never says 0 failed.
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
    """Command line entry; returns 0 (the report never changes Bazel's verdict)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--testlogs", help="bazel-testlogs directory (labels are relative to it)")
    parser.add_argument(
        "--bep", help="build event JSON file of the run (--build_event_json_file): its tests only"
    )
    parser.add_argument("--run", help="a run archive of ./bazelw test (conformance-runs/...)")
    parser.add_argument(
        "items",
        nargs="*",
        help="test.xml files or directories; arguments starting with // are target patterns",
    )
    parser.add_argument(
        "--target",
        action="append",
        default=[],
        help="restrict to this target pattern (repeatable; same as a // argument)",
    )
    args = parser.parse_args(argv)
    patterns = args.target + [i for i in args.items if i.startswith("//")]
    paths = [i for i in args.items if not i.startswith("//")]
    if args.bep or args.run:
        print(render(summarise_run(results.read_run(args.run or args.bep), patterns)))
        return 0
    if args.testlogs:
        paths.append(args.testlogs)
    if not paths:
        parser.error("give --testlogs DIR, --bep FILE, --run DIR or test.xml paths")
    print(render(summarise(find_xml(paths), args.testlogs, patterns)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
