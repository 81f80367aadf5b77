#!/usr/bin/env python3
"""The one verdict of a run: PASS only when every target passed and every case counts.

Read by ./bazelw (after each `test`), .ci/run, check_my_wheel.py, the conformance check and the
report. Standard library only.

    verdict.py RUN       # print the run's problems and its verdict line; exit 1 on FAIL
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import results
from results import OUTCOMES, Case, Run

# Label suffixes of per-target variants (tvm_py_test(targets = [...])) and of the
# target-independent ones.
TARGET_SUFFIXES = ("llvm", "cuda", "rocm", "vulkan", "metal", "opencl", "nvptx", "hexagon")
INDEPENDENT_SUFFIX = "independent"
# Bazel's status of a target whose every case counts (anything else is a problem).
PASSING_STATUS = "PASSED"


class Registry(Protocol):
    """What the verdict needs of tvm_conformance.deviation_registry."""

    def by_id(self) -> dict[str, Any]: ...

    def lists(self, dev: Any, label: str, case: str) -> bool: ...


def load_registry(workspace: str | None = None) -> Registry:
    """tvm_conformance.deviation_registry (standard library only), from `python/` of the
    workspace this file is in unless it is importable already (under Bazel)."""
    root = workspace or os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
    try:
        from tvm_conformance import deviation_registry
    except ImportError:
        sys.path.insert(0, os.path.join(root, "python"))
        from tvm_conformance import deviation_registry
    return deviation_registry  # type: ignore[return-value]


@dataclass
class Verdict:
    """What one run says about the TVM it tested: PASS only when nothing is wrong."""

    problems: list[str]
    outcomes: collections.Counter[str]  # every case of the run, by outcome
    statuses: collections.Counter[str]  # every target of the run, by Bazel status
    deviations: collections.Counter[str]  # xfailed cases by deviation id
    exit_code: int | None

    @property
    def passed(self) -> bool:
        """True when the run has no problem at all."""
        return not self.problems

    def line(self, what: str = "") -> str:
        """`verdict: PASS|FAIL (what): T targets (...), C cases: ..., N problems`."""
        targets = ", ".join(f"{n} {s}" for s, n in sorted(self.statuses.items()))
        cases = ", ".join(f"{self.outcomes[o]} {o}" for o in OUTCOMES if self.outcomes[o])
        head = f"verdict: {'PASS' if self.passed else 'FAIL'}" + (f" ({what})" if what else "")
        return (
            f"{head}: {sum(self.statuses.values())} targets ({targets or 'none'}), "
            f"{sum(self.outcomes.values())} cases ({cases or 'none'}), "
            f"bazel exit {self.exit_code if self.exit_code is not None else 'unknown'}, "
            f"{len(self.problems)} problems"
        )

    def to_json(self) -> dict[str, object]:
        """A JSON-able summary (the report embeds it per column)."""
        return {
            "passed": self.passed,
            "problems": self.problems,
            "outcomes": dict(self.outcomes),
            "statuses": dict(self.statuses),
            "deviations": dict(self.deviations),
            "exit_code": self.exit_code,
        }


def variant_suffix(label: str) -> str | None:
    """`llvm` for `//pkg:x_test_llvm`, `independent` for `..._independent`, else None."""
    name = label.rpartition(":")[2]
    for suffix in (*TARGET_SUFFIXES, INDEPENDENT_SUFFIX):
        if name.endswith("_" + suffix):
            return suffix
    return None


def _other_target_in_id(case: Case, own: str) -> str | None:
    """A target other than `own` among the case id's parameters (`test_x[cuda-compiled]`)."""
    params = case.name.partition("[")[2].rstrip("]")
    for token in re.split(r"[-_,\s]+", params):
        if token in TARGET_SUFFIXES and token != own:
            return token
    return None


def isolation_problems(run: Run) -> list[str]:
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
            where = f"VARIANT ISOLATION: {label} :: {case.name}"
            if suffix == INDEPENDENT_SUFFIX and recorded:
                problems.append(
                    f"{where} records tvm_target={recorded!r} in a target-independent test"
                )
            elif suffix != INDEPENDENT_SUFFIX and recorded != suffix:
                problems.append(f"{where} records tvm_target={recorded!r}, not {suffix!r}")
            if suffix != INDEPENDENT_SUFFIX and (other := _other_target_in_id(case, suffix)):
                problems.append(
                    f"{where}: the case id names target {other!r} in the {suffix!r} variant"
                )
    return problems


def deviation_problems(run: Run, registry: Registry) -> list[str]:
    """Over every case: an xfail is a listed deviation that lists this very case; no XPASS."""
    table = registry.by_id()
    problems = []
    for target, case in run.cases():
        where = f"{target.label} :: {case.name}"
        if case.outcome == "xfailed":
            dev = table.get(case.deviation or "")
            if dev is None:
                named = (
                    f"names {case.deviation!r}, not a listed deviation"
                    if case.deviation
                    else ("names no deviation")
                )
                problems.append(
                    f"UNLISTED XFAIL: {where}: its reason {named} (mark it with "
                    f"tvm_conformance.deviations.xfail('<id>')): {case.message[:200]}"
                )
            elif not registry.lists(dev, target.label, case.name):
                problems.append(
                    f"MISATTRIBUTED XFAIL: {where} xfails as deviation {dev.id}, which does not "
                    "list this case (tvm_conformance.deviation_registry, its `tests`)"
                )
        elif case.xpass_strict:
            problems.append(
                f"XPASS: {where} passed: deviation {case.deviation or '(unknown)'} no longer "
                "occurs; remove it from the registry (and its xfail mark)"
            )
    return problems


def _is_cuda(label: str, case: Case) -> bool:
    """A case of the cuda target: its tvm_target, or its `_cuda` variant."""
    return case.properties.get("tvm_target") == "cuda" or variant_suffix(label) == "cuda"


def verdict_of(
    run: Run,
    registry: Registry,
    rows: Iterable[Any] = (),
    require_all: bool = False,
    isolation: bool = True,
) -> Verdict:
    """The one verdict of a run, from Bazel's exit code, every target's status and every case.

    `rows` (objects with `label` and `case`, the conformance map's) only add problems of their
    own: a row naming a case its target did not report, or (require_all) a row whose target
    did not run. Whether a case counts never depends on a row.
    """
    problems: list[str] = []
    outcomes: collections.Counter[str] = collections.Counter()
    statuses: collections.Counter[str] = collections.Counter()
    deviations: collections.Counter[str] = collections.Counter()
    if not run.targets:
        problems.append("EMPTY RUN: no test target ran; nothing was checked")
    # A cuda_gpu run (a GPU runner) cannot pass by skipping its cuda cases.
    gpu_required = run.config.startswith("cuda_gpu")
    exit_code = run.exit_code
    if exit_code not in (0, None):
        problems.append(f"BAZEL EXIT {exit_code}: the invocation did not succeed")
    elif exit_code is None:
        problems.append("BAZEL EXIT UNKNOWN: neither run.json nor the build events record it")
    for label in sorted(run.targets):
        target = run.targets[label]
        statuses[target.status] += 1
        if target.status != PASSING_STATUS:
            problems.append(f"TARGET {target.status}: {label}")
        problems.extend(f"UNREADABLE: {error}" for error in target.errors)
        for case in target.cases:
            outcomes[case.outcome] += 1
            if case.outcome == "xfailed" and case.deviation:
                deviations[case.deviation] += 1
            if case.outcome == "failed":
                problems.append(f"FAILED: {label} :: {case.name}: {case.message[:200]}")
            elif case.outcome in ("skipped", "disabled") and gpu_required and _is_cuda(label, case):
                problems.append(
                    f"SKIPPED ON A GPU RUNNER: {label} :: {case.name}: {case.message[:200]}"
                )
    problems += deviation_problems(run, registry)
    if isolation:
        problems += isolation_problems(run)
    for row in rows:
        target = run.targets.get(row.label)
        if target is None:
            if require_all:
                problems.append(f"NOT RUN: {row.label} :: {row.case} (a conformance row)")
        elif target.case(row.case) is None and target.status == PASSING_STATUS:
            problems.append(
                f"MISSING: {row.label} :: {row.case}: a conformance row names a "
                "case its target did not report"
            )
    return Verdict(problems, outcomes, statuses, deviations, exit_code)


def main(argv: list[str] | None = None) -> int:
    """Command line: print a run's problems and its verdict line; exit 1 on FAIL."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", help="a run archive directory or a build event JSON file")
    run = results.read_run(parser.parse_args(argv).run)
    result = verdict_of(run, load_registry())
    for problem in result.problems:
        print(f"verdict: {problem}")
    print(result.line(run.identity_key()))
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main())
