#!/usr/bin/env python3
"""Summarise the JUnit XML of a `bazel test` run: passed, failed, skipped (by reason), xfailed.

Bazel prints a py_test whose cases all skipped as PASSED; this makes the skips visible.
Standard library only, so any python3 runs it (./bazelw and .ci/run call it after `test`).

    skip_report.py --testlogs bazel-testlogs                 # every test.xml under it
    skip_report.py --testlogs bazel-testlogs //python/tests/targets/...
    skip_report.py path/to/test.xml other/dir                # files, or dirs searched for test.xml
    skip_report.py --bep build_events.json                   # exactly this invocation's tests

bazel-testlogs keeps results of earlier invocations too (e.g. cuda variants from a previous
--config=cuda run); `--bep` reads the file of `bazel test --build_event_json_file=FILE` and
reports only the tests of that invocation, cached ones included.

Labels (`//pkg:name`, `//pkg:all`, `//pkg/...`) restrict the report to those targets; a
`//pkg:name` with no test.xml of its own also matches its `name_<variant>` targets (the
per-target variants of a tvm_py_test suite). The last line is always
`N passed, N failed, N skipped`; errors count as failed, xfailed and xpassed are shown apart.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import urllib.parse
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

# pytest writes "Skipped: <reason>" or "<file>:<line>: <reason>" in some versions.
_REASON_PREFIX = re.compile(r"^(Skipped: |\S+:\d+: )")
# Bazel stores shards and runs of one target below its directory.
_SHARD_DIR = re.compile(r"^(shard_\d+_of_\d+|run_\d+_of_\d+|attempt_\d+)$")


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


def skip_reason(element: ET.Element) -> str:
    """The reason of a <skipped> element, without pytest's location prefix."""
    reason = (element.get("message") or element.text or "").strip()
    reason = _REASON_PREFIX.sub("", reason, count=1).strip()
    return reason or "(no reason given)"


def case_outcome(case: ET.Element) -> str:
    """passed / failed / xfailed / skipped / disabled for one <testcase> (pytest or googletest)."""
    children = {child.tag: child for child in case}
    skipped = children.get("skipped")
    if "failure" in children or "error" in children:
        return "failed"
    if skipped is not None and (skipped.get("type") or "").endswith("xfail"):
        return "xfailed"
    if skipped is not None or case.get("result") == "skipped":
        return "skipped"
    if case.get("status") == "notrun":
        return "disabled"
    return "passed"


def add_file(counts: Counts, xml_path: str, label: str) -> None:
    """Count the test cases of one JUnit XML file (pytest, googletest or Bazel's own)."""
    try:
        root = ET.parse(xml_path).getroot()
    except (ET.ParseError, OSError) as err:
        counts.failed += 1
        print(f"skip_report: cannot read {xml_path}: {err}", file=sys.stderr)
        return
    counts.targets += 1
    for case in root.iter("testcase"):
        outcome = case_outcome(case)
        if outcome == "failed":
            counts.failed += 1
        elif outcome == "xfailed":
            counts.xfailed += 1
        elif outcome == "skipped":
            skipped = case.find("skipped")
            counts.skip(skip_reason(skipped if skipped is not None else case), label)
        elif outcome == "disabled":
            counts.skip("disabled (googletest DISABLED_)", label)
        else:
            counts.passed += 1


def bep_results(bep_path: str) -> list[tuple[str, str]]:
    """(test.xml path, label) for each test result in a build event JSON file."""
    found = []
    with open(bep_path, encoding="utf-8") as stream:
        for line in stream:
            line = line.strip()
            if not line:
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            label = event.get("id", {}).get("testResult", {}).get("label")
            outputs = event.get("testResult", {}).get("testActionOutput", [])
            for output in outputs:
                uri = output.get("uri", "")
                if label and output.get("name") == "test.xml" and uri.startswith("file://"):
                    found.append((urllib.parse.unquote(uri[len("file://") :]), label))
    return found


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


def summarise(
    xml_files: list[str],
    testlogs: str | None,
    patterns: list[str],
    labelled_extra: list[tuple[str, str]] | None = None,
) -> Counts:
    """Count outcomes over the files whose targets match `patterns` (all when empty)."""
    labelled = [(path, label_of(path, testlogs)) for path in xml_files]
    labelled += labelled_extra or []
    all_labels = {label for _, label in labelled}
    counts = Counts()
    for path, label in labelled:
        if label_matches(label, patterns, all_labels):
            add_file(counts, path, label)
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
    from_bep = bep_results(args.bep) if args.bep else []
    if args.testlogs and not args.bep:
        paths.append(args.testlogs)
    if not paths and not args.bep:
        parser.error("give --testlogs DIR, --bep FILE or test.xml paths")
    print(render(summarise(find_xml(paths), args.testlogs, patterns, from_bep)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
