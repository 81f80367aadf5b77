#!/usr/bin/env python3
"""Check docs/conformance.md against the JUnit XML of a `bazel test` run.

Every table row `| seed | behaviour | test |` names a test as `//package:target :: case`
(case: the pytest node name with parameters, or googletest's `Suite.Case`). A row holds when
that case ran and passed, or is an expected failure (a strict xfail: an unexpected pass fails
its target). Rows whose target did not run in this invocation (e.g. cuda variants without
--config=cuda) are listed as not run; with --require-all they are problems too.

    conformance_check.py --testlogs bazel-testlogs docs/conformance.md [--require-all]

Standard library only. Exit status 1 when any row does not hold.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import xml.etree.ElementTree as ET

from skip_report import case_outcome

_ROW = re.compile(r"^\|\s*`?(?P<seed>\d{3})`?\s*\|(?P<behaviour>.*)\|(?P<tests>.*)\|\s*$")
_TEST = re.compile(r"`?(?P<label>//[^\s:`]*:[^\s`]+)\s+::\s+(?P<case>[^`;]+?)`?\s*(?:;|$)")


def parse_rows(markdown: str) -> list[tuple[str, str, str, str]]:
    """(seed, behaviour, label, case) for every test named in the conformance tables."""
    rows = []
    for line in markdown.splitlines():
        match = _ROW.match(line.strip())
        if not match:
            continue
        tests = list(_TEST.finditer(match["tests"].strip()))
        if not tests:
            raise ValueError(f"conformance row names no `//pkg:target :: case`: {line.strip()}")
        for test in tests:
            rows.append(
                (match["seed"], match["behaviour"].strip(), test["label"], test["case"].strip())
            )
    return rows


def case_outcomes(xml_path: str) -> dict[str, str]:
    """Map test case name -> its outcome (skip_report.case_outcome) for one JUnit XML file.

    pytest cases are keyed by their name (`test_x[llvm]`), googletest's by `Suite.Case`.
    """
    outcomes = {}
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        outcome = case_outcome(case)
        name = case.get("name", "")
        outcomes[name] = outcome
        classname = case.get("classname", "")
        if classname and "/" not in classname and "." not in classname:
            outcomes[f"{classname}.{name}"] = outcome
    return outcomes


def xml_of(label: str, testlogs: str) -> str:
    """Path of a target's test.xml under bazel-testlogs."""
    package, _, name = label[2:].partition(":")
    return os.path.join(testlogs, package, name, "test.xml")


def check(rows: list[tuple[str, str, str, str]], testlogs: str, require_all: bool) -> int:
    """Print one line per problem and a summary; return the number of problems."""
    cache: dict[str, dict[str, str] | None] = {}
    tally: collections.Counter[str] = collections.Counter()
    per_seed: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    problems = 0
    for seed, behaviour, label, case in rows:
        if label not in cache:
            path = xml_of(label, testlogs)
            cache[label] = case_outcomes(path) if os.path.isfile(path) else None
        outcomes = cache[label]
        if outcomes is None:
            outcome = "not run"
        else:
            outcome = outcomes.get(case, "missing")
        tally[outcome] += 1
        per_seed[seed][outcome] += 1
        bad = outcome in ("failed", "skipped", "disabled", "missing") or (
            outcome == "not run" and require_all
        )
        if bad or outcome == "not run":
            print(f"conformance: {outcome.upper()}: seed {seed}: {behaviour}: {label} :: {case}")
        problems += bad
    for seed in sorted(per_seed):
        counts = ", ".join(f"{n} {k}" for k, n in sorted(per_seed[seed].items()))
        print(f"conformance: seed {seed}: {counts}")
    print(
        f"conformance: {len(rows)} rows: {tally['passed']} passed, {tally['xfailed']} xfailed, "
        f"{tally['not run']} not run, {problems} problems"
    )
    return problems


def main(argv: list[str]) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("doc", help="docs/conformance.md")
    parser.add_argument("--testlogs", default="bazel-testlogs", help="bazel-testlogs directory")
    parser.add_argument(
        "--require-all", action="store_true", help="a row whose target did not run is a problem"
    )
    args = parser.parse_args(argv)
    with open(args.doc, encoding="utf-8") as fh:
        rows = parse_rows(fh.read())
    if not rows:
        print(f"conformance: no rows found in {args.doc}", file=sys.stderr)
        return 1
    return 1 if check(rows, args.testlogs, args.require_all) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
