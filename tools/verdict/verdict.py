#!/usr/bin/env python3
"""The one verdict of a run: PASS only when every target passed and every case counts.

Its one job is judging a run that results.py read; what the run was and whether it is partial
(its label in the verdict line) is run_identity.py's. Read by ./bazelw (after each `test`),
.ci/run, check_my_wheel.py, the conformance check and the report. Standard library only.

    verdict.py RUN       # print the run's problems and its verdict line; exit 1 on FAIL
    verdict.py --record RUN  # also write it into RUN/run.json and the CI reports (./bazelw)
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import ci_reports
import results
import run_identity
import run_record
from results import CASE_OUTCOMES, Case, Run

# Label suffixes of per-target variants (tvm_py_test(targets = [...])) and of the
# target-independent ones.
TARGET_SUFFIXES = ("llvm", "cuda", "rocm", "vulkan", "metal", "opencl", "nvptx", "hexagon")
INDEPENDENT_SUFFIX = "independent"
# Bazel's status of a target whose every case counts (anything else is a problem).
PASSING_STATUS = "PASSED"
# The tag of a test target that reports no case on purpose (a target with no case is otherwise
# a problem: a filtered or empty googletest binary exits 0 and reports nothing).
EMPTY_ON_PURPOSE_TAG = "empty_on_purpose"
# The tag prefix of a test target whose cases may all skip, followed by the reason
# (`may_skip_all=<why>`). Otherwise a target whose every case skipped is a problem unless each
# skip is one its config allows: a target it does not require cannot run here (a `_cuda`
# target without a GPU under --config=cuda), which the case records in
# UNAVAILABLE_TARGET_PROPERTY.
MAY_SKIP_ALL_TAG = "may_skip_all="
# ./bazelw, verdict.py and check-my-wheel: a partial run fails when this is "1" (.ci/run sets
# it; `--allow-partial=<why>` turns it off for one invocation).
REQUIRE_WHOLE_ENV = "TVM_CONFORMANCE_REQUIRE_WHOLE"
# run.json's record of the targets a GPU run had to run: every `_cuda` test of the suite, from
# the build graph (archive.py's `bazel query`), or, for a GPU-runner bundle, the suite's `_cuda`
# list its build recorded (the lane bundle) or its own `_cuda` tests (a partial bundle, whose run
# is labelled partial; run_bundle.py): {"source": "...", "targets": [labels]}.
GPU_SUITE_KEY = "gpu_suite"
# The targets each config requires (its name without +asan/+ubsan): a case skipped because one
# of them cannot run here (its runtime is not in this TVM, or no device) is a problem; other
# skips are allowed and shown with their reasons. The pytest plugin names the target of such a
# skip in the case's JUnit property UNAVAILABLE_TARGET_PROPERTY (never read from reason text).
# Runtime-only processes (TVM_USE_RUNTIME_LIB=1) follow the same rule, judged by the runtime
# alone (tvm_conformance.targets: llvm needs the CPU runtime, cuda the CUDA runtime and a
# device); that such a process has no compiler is its design, never a target skip.
REQUIRED_TARGETS = {"cpu": ("llvm",), "cuda": ("llvm",), "cuda_gpu": ("llvm", "cuda")}
UNAVAILABLE_TARGET_PROPERTY = "tvm_unavailable_target"  # tvm_conformance.targets, in step


def status_passed(status: str) -> bool:
    """True only for PASSING_STATUS: FLAKY, NO_STATUS, TIMEOUT, FAILED_TO_BUILD, ... are not
    passed (the verdict's rule for a target's status; the console summary counts by it too)."""
    return status == PASSING_STATUS


def required_targets(config: str) -> tuple[str, ...]:
    """The targets a config (run_identity.config, e.g. `cuda+asan`) requires; llvm at least."""
    return REQUIRED_TARGETS.get(config.partition("+")[0], ("llvm",))


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
    # What keeps the run from being the whole suite (run_identity.partial); [] when whole.
    partial: list[str] = dataclasses.field(default_factory=list)
    # Skipped and disabled cases by reason (every one allowed by the config, or a problem too).
    skip_reasons: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    # Recorded deviations this (unpinned) TVM fixed: id -> its `label :: case`s (Fixed.by_id).
    fixed: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    # Generated cases better than their lane's pinned expectation on a user's wheel (good
    # news; on the pinned wheels a stale expectation): `label :: case: expected -> actual`.
    improvements: list[str] = dataclasses.field(default_factory=list)
    # Registry entries a user's wheel changed against its lane's snapshot, by what was done to
    # them ({added, removed, changed}): information where the wheel is another TVM build (a
    # same-build wheel's losses fail in snapshot_test as REGRESSION lines).
    drift: dict[str, int] = dataclasses.field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """True when the run has no problem at all."""
        return not self.problems

    @property
    def word(self) -> str:
        """PASS (a whole run without a problem), PARTIAL PASS (a partial one: never read as
        PASS by a job that gates on the text `verdict: PASS`) or FAIL."""
        if not self.passed:
            return "FAIL"
        return "PARTIAL PASS" if self.partial else "PASS"

    def line(self, what: str = "") -> str:
        """`verdict: PASS|PARTIAL PASS|FAIL (what): T targets (...), C cases: ..., N problems`."""
        targets = ", ".join(f"{n} {s}" for s, n in sorted(self.statuses.items()))
        cases = ", ".join(f"{self.outcomes[o]} {o}" for o in CASE_OUTCOMES if self.outcomes[o])
        if self.partial and "PARTIAL" not in what:
            what += (" · " if what else "") + "PARTIAL: " + " ".join(self.partial)
        head = f"verdict: {self.word}" + (f" ({what})" if what else "")
        return (
            f"{head}: {sum(self.statuses.values())} targets ({targets or 'none'}), "
            f"{sum(self.outcomes.values())} cases ({cases or 'none'}), "
            f"{self.skips_text()}, "
            f"bazel exit {self.exit_code if self.exit_code is not None else 'unknown'}, "
            f"{self.fixed_text()}{self.improvements_text()}{self.drift_text()}"
            f"{len(self.problems)} problems"
        )

    def drift_text(self) -> str:
        """`registry drift N (a added, r removed, c changed), ` for a user's wheel whose
        registries differ from its lane's snapshot, else ""."""
        total = sum(self.drift.values())
        if not total:
            return ""
        parts = ", ".join(f"{n} {kind}" for kind, n in sorted(self.drift.items()) if n)
        return f"registry drift {total} ({parts}), "

    def improvements_text(self) -> str:
        """`N improvement(s), ` when generated cases did better than their expectation."""
        n = len(self.improvements)
        return f"{n} improvement{'s' if n > 1 else ''}, " if n else ""

    def skips_text(self, most: int = 3) -> str:
        """`skipped N` and, when N > 0, the commonest reasons: `(5: reason; 2: other; +1
        more reason)`; always in the verdict line, so a skip is never silent."""
        total = sum(self.skip_reasons.values())
        if not total:
            return "skipped 0"
        common = self.skip_reasons.most_common(most)
        parts = [f"{n}: {r if len(r) <= 80 else r[:77] + '...'}" for r, n in common]
        rest = len(self.skip_reasons) - len(common)
        if rest:
            parts.append(f"+{rest} more reason{'s' if rest > 1 else ''}")
        return f"skipped {total} ({'; '.join(parts)})"

    def fixed_text(self) -> str:
        """`N deviation(s) fixed: id, id, ` when this TVM fixed recorded deviations, else ""."""
        if not self.fixed:
            return ""
        n = len(self.fixed)
        return f"{n} deviation{'s' if n > 1 else ''} fixed: {', '.join(sorted(self.fixed))}, "

    def to_json(self) -> dict[str, object]:
        """A JSON-able summary (the report embeds it per column)."""
        return {
            "passed": self.passed,
            "problems": self.problems,
            "outcomes": dict(self.outcomes),
            "statuses": dict(self.statuses),
            "deviations": dict(self.deviations),
            "exit_code": self.exit_code,
            "partial": self.partial,
            "skip_reasons": dict(self.skip_reasons),
            "fixed": self.fixed,
            "improvements": self.improvements,
            "drift": self.drift,
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


# Bazel's exit code when the build succeeded and some tests failed: excused only when every
# target that did not pass failed for fixed deviations alone (Fixed.excuses_exit).
TESTS_FAILED_EXIT = 3


def pinned_run(run: Run) -> bool:
    """True unless the run tested a TVM x tvm-ffi pair no lane pins: run.json's identity says
    `pinned: false` (archive.pinned_of, from the lanes' locks) and names both wheels' sha256.
    A run that cannot show it (an older archive, a GPU-runner bundle) is held as pinned."""
    ident = run_identity.venv_identity(run)
    shas = [ident.get(key) for key in ("tvm", "tvm_ffi")]
    named = all(
        isinstance(e, dict) and isinstance(e.get("sha256"), str) and e["sha256"] for e in shas
    )
    return ident.get("pinned") is not False or not named


@dataclass
class Fixed:
    """Recorded deviations a TVM other than the lanes' pinned ones fixed: each case whose every
    run is a strict XPASS of a listed deviation that lists that very case (nothing on a
    pinned run), and the targets whose FAILED status those cases alone explain."""

    cases: dict[tuple[str, str], str] = dataclasses.field(default_factory=dict)  # -> dev id
    targets: set[str] = dataclasses.field(default_factory=set)

    def by_id(self) -> dict[str, list[str]]:
        """Deviation id -> its fixed cases, `label :: case`, sorted."""
        found: dict[str, list[str]] = {}
        for (label, name), dev_id in sorted(self.cases.items()):
            found.setdefault(dev_id, []).append(f"{label} :: {name}")
        return found

    def excuses_exit(self, run: Run) -> bool:
        """Bazel's exit 3 is excused only when every target that did not pass is excused."""
        failing = {label for label, t in run.targets.items() if not status_passed(t.status)}
        return run.exit_code == TESTS_FAILED_EXIT and bool(failing) and failing <= self.targets


def _fixed_run(registry: Registry, table: dict[str, Any], label: str, case: Case) -> bool:
    """One run of a case is a strict XPASS of a listed deviation that lists this very case."""
    dev = table.get(case.deviation or "")
    return case.xpass_strict and dev is not None and registry.lists(dev, label, case.name)


def fixed_deviations(run: Run, registry: Registry) -> Fixed:
    """The deviations this run's TVM fixed (Fixed); none on a pinned run (pinned_run)."""
    fixed = Fixed()
    if pinned_run(run):
        return fixed
    table = registry.by_id()
    for target, merged in run.cases():
        runs = merged.runs()
        if all(_fixed_run(registry, table, target.label, case) for case in runs):
            fixed.cases[(target.label, merged.name)] = str(merged.deviation)
    for label, target in run.targets.items():
        failed = [c for m in target.cases for c in m.runs() if c.outcome == "failed"]
        # Exactly FAILED (not TIMEOUT, FLAKY, ...), fully read, and only fixed cases failed.
        if (
            target.status == "FAILED"
            and failed
            and not target.errors
            and not target.suite_errors
            and all((label, c.name) in fixed.cases for c in failed)
        ):
            fixed.targets.add(label)
    return fixed


def deviation_problems(run: Run, registry: Registry, fixed: Fixed | None = None) -> list[str]:
    """Over every case: an xfail is a listed deviation that lists this very case; an XPASS is
    a problem unless it is a fixed deviation of an unpinned TVM (fixed_deviations)."""
    table = registry.by_id()
    fixed = fixed_deviations(run, registry) if fixed is None else fixed
    held = ""  # why an XPASS is a stale registry here, or "" on an unpinned TVM
    if run_identity.venv_identity(run).get("pinned") is True:
        held = "on a lane's pinned TVM"
    elif pinned_run(run):
        held = "on a TVM this run does not show to be unpinned (run.json identity `pinned`)"
    problems = []
    for target, merged in run.cases():
        if (target.label, merged.name) in fixed.cases:
            continue
        for case in merged.runs():
            problems.extend(_case_deviation_problems(registry, table, target.label, case, held))
    return problems


def _case_deviation_problems(
    registry: Registry, table: dict[str, Any], label: str, case: Case, held: str
) -> list[str]:
    """deviation_problems of one run of one case (not a fixed one); `held`: why an XPASS
    means the registry is stale, "" on a TVM no lane pins."""
    where = f"{label} :: {case.name}"
    if case.xpass_strict:
        head = f"XPASS: {where} passed: deviation {case.deviation or '(unknown)'} no longer occurs"
        if held:
            return [
                f"{head} {held}: the registry is stale; remove it from the registry (and its "
                "xfail mark)"
            ]
        if not _fixed_run(registry, table, label, case):
            return [
                f"{head}, but is no fixed deviation: the registry does not list this case "
                "under it (tvm_conformance.deviation_registry, its `tests`)"
            ]
        return [f"{head} in some of its runs only (--runs_per_test): not fixed"]
    if case.outcome != "xfailed":
        return []
    dev = table.get(case.deviation or "")
    if dev is None:
        named = (
            f"names {case.deviation!r}, not a listed deviation"
            if case.deviation
            else "names no deviation"
        )
        return [
            f"UNLISTED XFAIL: {where}: its reason {named} (mark it with "
            f"tvm_conformance.deviations.xfail('<id>')): {case.message[:200]}"
        ]
    if not registry.lists(dev, label, case.name):
        return [
            f"MISATTRIBUTED XFAIL: {where} xfails as deviation {dev.id}, which does not "
            "list this case (tvm_conformance.deviation_registry, its `tests`)"
        ]
    return []


def _is_cuda(label: str, case: Case) -> bool:
    """A case of the cuda target: its tvm_target, or its `_cuda` variant."""
    return case.properties.get("tvm_target") == "cuda" or variant_suffix(label) == "cuda"


def gpu_suite_problems(run: Run) -> list[str]:
    """A GPU run proves it ran the GPU: every target its archive says it had to run (the
    suite's `_cuda` tests from the build graph, or a bundle's tests.json) ran; the cases of
    those must not skip (verdict_of). No record, or an empty one, is a problem too."""
    record = run.meta.get(GPU_SUITE_KEY)
    targets = record.get("targets") if isinstance(record, dict) else None
    if not isinstance(targets, list):
        return [
            "GPU RUN UNPROVEN: the archive does not record which _cuda targets the suite has "
            f"(run.json `{GPU_SUITE_KEY}`), so nothing shows the GPU tests ran"
        ]
    source = record.get("source", "?")  # type: ignore[union-attr]
    if not targets:
        return [f"GPU RUN WITHOUT CUDA TARGETS: {source} names no _cuda target to run"]
    return [
        f"GPU TARGET NOT RUN: {label} ({source} has it; this run did not run it)"
        for label in sorted(str(t) for t in targets)
        if label not in run.targets
    ]


def all_skipped_problems(target: Any, gpu_required: bool) -> list[str]:
    """`ALL SKIPPED` for a target that reported cases and ran none of them, unless every skip
    is one its config allows (the case names a target that cannot run here, and the config
    does not require that target: otherwise the skip is a problem of its own, `REQUIRED
    TARGET SKIPPED` or `SKIPPED ON A GPU RUNNER`) or the target is tagged `may_skip_all=<why>`:
    a target that checked nothing must say so."""
    runs = [case for merged in target.cases for case in merged.runs()]
    if not runs or any(case.outcome not in ("skipped", "disabled") for case in runs):
        return []
    if any(t.startswith(MAY_SKIP_ALL_TAG) and t[len(MAY_SKIP_ALL_TAG) :] for t in target.tags):
        return []
    unexplained = [
        case
        for case in runs
        if not case.properties.get(UNAVAILABLE_TARGET_PROPERTY)
        and not (gpu_required and _is_cuda(target.label, case))
    ]
    if not unexplained:
        return []
    reasons = collections.Counter(case.message for case in unexplained)
    shown = "; ".join(f"{n}: {r[:80]}" for r, n in reasons.most_common(2))
    return [
        f"ALL SKIPPED: {target.label}: all {len(runs)} cases skipped ({shown}); none ran. Make "
        f"them run, or tag the target `{MAY_SKIP_ALL_TAG}<why>` if that is its design"
    ]


def verdict_of(
    run: Run,
    registry: Registry,
    rows: Iterable[Any] = (),
    require_all: bool = False,
    isolation: bool = True,
    require_whole: bool = False,
) -> Verdict:
    """The one verdict of a run, from Bazel's exit code, every target's status and every case.

    `rows` (objects with `label` and `case`, the conformance map's) only add problems of their
    own: a row naming a case its target did not report, or (require_all) a row whose target
    did not run. Whether a case counts never depends on a row. `require_whole`: a partial run
    (run_identity.partial) is a problem, `PARTIAL`, naming what it left out.
    """
    problems: list[str] = []
    outcomes: collections.Counter[str] = collections.Counter()
    statuses: collections.Counter[str] = collections.Counter()
    deviations: collections.Counter[str] = collections.Counter()
    if not run.targets:
        problems.append("EMPTY RUN: no test target ran; nothing was checked")
    # A cuda_gpu run (a GPU runner) cannot pass by skipping its cuda cases.
    config = run_identity.config(run)
    partial = run_identity.partial(run)
    gpu_required = config.startswith("cuda_gpu")
    required = required_targets(config)
    skip_reasons: collections.Counter[str] = collections.Counter()
    exit_code = run.exit_code
    fixed = fixed_deviations(run, registry)
    if exit_code not in (0, None) and not fixed.excuses_exit(run):
        problems.append(f"BAZEL EXIT {exit_code}: the invocation did not succeed")
    elif exit_code is None:
        problems.append("BAZEL EXIT UNKNOWN: neither run.json nor the build events record it")
    for label in sorted(run.targets):
        target = run.targets[label]
        statuses[target.status] += 1
        if not status_passed(target.status) and label not in fixed.targets:
            problems.append(f"TARGET {target.status}: {label}")
        problems.extend(f"UNREADABLE: {error}" for error in target.errors)
        problems.extend(f"SUITE ERROR: {label}: {error}" for error in target.suite_errors)
        if (
            not target.cases
            and not target.errors
            and status_passed(target.status)
            and EMPTY_ON_PURPOSE_TAG not in target.tags
        ):
            problems.append(
                f"NO CASES: {label} passed without reporting a single test case (a filtered or "
                f"empty binary); tag it `{EMPTY_ON_PURPOSE_TAG}` if that is intended"
            )
        problems.extend(all_skipped_problems(target, gpu_required))
        for merged in target.cases:
            outcomes[merged.outcome] += 1
            if merged.outcome in ("skipped", "disabled"):
                skip_reasons[merged.message] += 1
            if merged.outcome == "xfailed" and merged.deviation:
                deviations[merged.deviation] += 1
            # Every run of the case counts (--runs_per_test), whatever their order.
            for case in merged.runs():
                # A fixed deviation's XPASS is no failure (fixed_deviations).
                if case.outcome == "failed" and (label, case.name) not in fixed.cases:
                    # A generated suite's failure is one problem per changed case.
                    changed = expectation_problems(label, case)
                    if changed:
                        problems += changed
                    elif NOT_JUDGEABLE_MARK in case.message:
                        problems.append(
                            f"NOT JUDGEABLE: {label} :: {case.name}: {case.message[:200]}"
                        )
                    else:
                        problems.append(f"FAILED: {label} :: {case.name}: {case.message[:200]}")
                elif (
                    case.outcome in ("skipped", "disabled")
                    and gpu_required
                    and _is_cuda(label, case)
                ):
                    problems.append(
                        f"SKIPPED ON A GPU RUNNER: {label} :: {case.name}: {case.message[:200]}"
                    )
                elif (
                    case.outcome == "skipped"
                    and case.properties.get(UNAVAILABLE_TARGET_PROPERTY) in required
                ):
                    problems.append(
                        f"REQUIRED TARGET SKIPPED: {label} :: {case.name}: the "
                        f"{config} config requires "
                        f"{case.properties[UNAVAILABLE_TARGET_PROPERTY]}: {case.message[:200]}"
                    )
    if run.targets and not outcomes["passed"]:
        problems.append(
            f"NOTHING PASSED: not one of the run's {sum(outcomes.values())} cases passed; a run "
            "that checked nothing is never PASS"
        )
    if gpu_required:
        problems += gpu_suite_problems(run)
    problems += deviation_problems(run, registry, fixed)
    if isolation:
        problems += isolation_problems(run)
    for row in rows:
        target = run.targets.get(row.label)
        if target is None:
            if require_all:
                problems.append(f"NOT RUN: {row.label} :: {row.case} (a conformance row)")
        elif target.case(row.case) is None and status_passed(target.status):
            problems.append(
                f"MISSING: {row.label} :: {row.case}: a conformance row names a "
                "case its target did not report"
            )
    if require_whole and partial:
        problems.append(
            "PARTIAL: the run is not the whole suite and the whole suite is required "
            f"(--require-whole): {' '.join(partial)}"
        )
    # One line per problem, in first-seen order (several runs of a case may fail alike).
    problems = list(dict.fromkeys(problems))
    return Verdict(
        problems,
        outcomes,
        statuses,
        deviations,
        exit_code,
        partial,
        skip_reasons,
        fixed.by_id(),
        improvements(run),
        registry_drift(run),
    )


# The judgement each test judged against its lane's pinned expectations writes into its
# undeclared outputs (tvm_conformance.expectations; python/tests/op_corpus).
EXPECTATIONS_PREFIX = "expectations_"


# The exception tvm_conformance.numerics raises where its comparison could not tell a right
# output from a wrong one (numerics.NotJudgeable): the kit's, and never a pass.
NOT_JUDGEABLE_MARK = "NotJudgeable: "


def expectation_problems(label: str, case: Case) -> list[str]:
    """A failure that lists generated cases against their lane's pinned expectations (one
    line each: op_corpus_tier_test): `REGRESSION: label :: case: <generated case>: expected
    -> actual (...)` for a case worse than pinned, `STALE EXPECTATION: ...` for one the file
    does not hold; [] for any other failure."""
    problems = []
    # The message attribute, or where pytest shortened it, the report's `E` lines.
    lines = case.message.splitlines()
    if "full report in element text" in case.message:
        lines = [line[1:] for line in case.report.splitlines() if line.startswith("E ")]
    for line in lines:
        text = line.strip()
        if text.startswith("regression: "):
            what = text.removeprefix("regression: ")[:300]
            problems.append(f"REGRESSION: {label} :: {case.name}: {what}")
        elif text.startswith("stale expectation"):
            problems.append(f"STALE EXPECTATION: {label} :: {case.name}: {text[:300]}")
    return problems


def registry_drift(run: Run) -> dict[str, int]:
    """{added, removed, changed}: the registry differences the archive recorded for a user's
    wheel (run.json identity.registry_drift; archive.registry_drift), summed over registries
    (the versions and build options are identity, not drift)."""
    drift = run_identity.venv_identity(run).get("registry_drift")
    counts = drift.get("counts") if isinstance(drift, dict) else None
    total: dict[str, int] = {}
    for registry, kinds in (counts or {}).items():
        if registry in ("versions", "build") or not isinstance(kinds, dict):
            continue
        for kind, n in kinds.items():
            total[kind] = total.get(kind, 0) + int(n)
    return total


def improvements(run: Run) -> list[str]:
    """Every generated case a user's wheel does better than its lane's expectation, from the
    judgements the tests wrote (an improvement on a lane's pinned wheels fails as stale)."""
    found = []
    for label in sorted(run.targets):
        for name, judgement in sorted(run.targets[label].output_jsons(EXPECTATIONS_PREFIX).items()):
            if isinstance(judgement, dict) and not judgement.get("pinned", True):
                chunk = name.removeprefix(EXPECTATIONS_PREFIX).removesuffix(".json")
                found += [f"{label} :: {chunk}: {x}" for x in judgement.get("improvements", [])]
    return found


# Whose problem each kind is (docs/results.md's "Reading a FAIL", its `whose` column: the first
# owner it names; ci_reports_test.py holds the two in step): the TVM under test, the machine or
# invocation, or the kit itself.
TVM, MACHINE, KIT = "tvm", "machine", "kit"
WHOSE = {
    "FAILED": TVM,
    "TARGET <status>": TVM,
    "NO CASES": KIT,
    "SUITE ERROR": TVM,
    "UNREADABLE": MACHINE,
    "EMPTY RUN": MACHINE,
    "BAZEL EXIT <exit_code>": MACHINE,
    "BAZEL EXIT UNKNOWN": KIT,
    "NOTHING PASSED": MACHINE,
    "XPASS": TVM,
    "UNLISTED XFAIL": KIT,
    "MISATTRIBUTED XFAIL": KIT,
    "REQUIRED TARGET SKIPPED": TVM,
    "SKIPPED ON A GPU RUNNER": MACHINE,
    "GPU RUN UNPROVEN": KIT,
    "GPU RUN WITHOUT CUDA TARGETS": KIT,
    "GPU TARGET NOT RUN": MACHINE,
    "VARIANT ISOLATION": KIT,
    "NOT RUN": MACHINE,
    "MISSING": KIT,
    "PARTIAL": MACHINE,
    "ALL SKIPPED": MACHINE,
    "NOT JUDGEABLE": KIT,
    "REGRESSION": TVM,
    "STALE EXPECTATION": KIT,
}
# Bazel statuses of a target that are the machine's (the table's TARGET row), not the TVM's.
MACHINE_STATUSES = ("TIMEOUT", "FLAKY", "NO_STATUS", "INCOMPLETE", "REMOTE_FAILURE")
_KIND = re.compile(r"^(?P<kind>[A-Z][A-Z0-9_]*(?: [A-Z0-9][A-Z0-9_]*)*):\s*(?P<rest>.*)$", re.S)
_LABEL = re.compile(r"(?:@[\w.~-]*)?//[\w/.+~-]*:[\w/.+=,@~-]+")


def table_kind(kind: str) -> str:
    """The docs table's row of a raised kind: `TARGET TIMEOUT` -> `TARGET <status>`."""
    if kind in WHOSE:
        return kind
    if kind.startswith("BAZEL EXIT "):
        return "BAZEL EXIT <exit_code>"
    if kind.startswith("TARGET "):
        return "TARGET <status>"
    return kind


def problem_record(text: str) -> dict[str, str]:
    """One problem line as the run record holds it: kind, whose, target, case, message (the
    rest of the line) and the line itself."""
    found = _KIND.match(text)
    kind, rest = (found["kind"], found["rest"]) if found else ("PROBLEM", text)
    whose = WHOSE.get(table_kind(kind), KIT)
    if kind.startswith("TARGET ") and kind[len("TARGET ") :] in MACHINE_STATUSES:
        whose = MACHINE
    target = case = ""
    label = _LABEL.search(rest)
    if label:
        target = label.group(0).rstrip(":")
        after = rest[label.end() :]
        if after.startswith(" :: "):
            case = after[4:].split(" ", 1)[0].rstrip(":")
    return {
        "kind": kind,
        "whose": whose,
        "target": target,
        "case": case,
        "message": rest,
        "text": text,
    }


# A case's message kept in the record (failure text; the test.xml in the archive has all).
RECORD_MESSAGE_CHARS = 4000


def case_records(run: Run, result: Verdict) -> list[dict[str, object]]:
    """Every case of the run (the worst of its runs), as the run record holds it."""
    fixed = {case for cases in result.fixed.values() for case in cases}
    found: list[dict[str, object]] = []
    for target, case in run.cases():
        skipped = case.outcome in ("skipped", "disabled")
        found.append(
            {
                "target": target.label,
                "case": case.name,
                "classname": case.classname,
                "outcome": case.outcome,
                "deviation": case.deviation,
                "fixed": f"{target.label} :: {case.name}" in fixed,
                "skip_reason": case.message if skipped else None,
                "message": "" if skipped else case.message[:RECORD_MESSAGE_CHARS],
                "properties": dict(case.properties),
                "time_s": round(case.time_s, 3),
                "runs": len(case.runs()),
            }
        )
    return found


def verdict_record(
    run: Run, result: Verdict, require_whole: bool = False, allow_partial: str | None = None
) -> dict[str, object]:
    """The verdict as the run record holds it (run.json `verdict`): the very result printed."""
    return {
        "status": result.word,
        "line": result.line(run_identity.identity_key(run)),
        "partial": bool(result.partial),
        "partial_why": list(result.partial),
        "require_whole": require_whole,
        "allow_partial": allow_partial,
        "problems": [problem_record(p) for p in result.problems],
        "counts": {
            "targets": dict(result.statuses),
            "cases": {o: result.outcomes[o] for o in CASE_OUTCOMES},
            "skipped": sum(result.skip_reasons.values()),
            "deviations": dict(result.deviations),
        },
        "exit_code": result.exit_code,
        "fixed": result.fixed,
        "improvements": list(result.improvements),
        "skip_reasons": dict(result.skip_reasons),
        "cases": case_records(run, result),
        "identity": dict(run_identity.venv_identity(run)),
        "identity_key": run_identity.identity_key(run),
    }


def record_verdict(
    run: Run,
    result: Verdict,
    run_dir: str,
    require_whole: bool = False,
    allow_partial: str | None = None,
) -> dict[str, int]:
    """Write the verdict into the archive's run.json and the CI reports beside it
    (ci_reports: junit.xml, ctrf.json, summary.md); {file: bytes}. ValueError or OSError when
    the record cannot be written."""
    run_record.attach(
        run_dir, run_record.VERDICT_KEY, verdict_record(run, result, require_whole, allow_partial)
    )
    return ci_reports.write_all(run_dir, run_record.read(run_dir))


def judge(
    run: Run,
    registry: Registry,
    require_whole: bool = False,
    allow_partial: str | None = None,
    record_to: str | None = None,
) -> int:
    """Judge a run, print its problems and verdict line, and (record_to: the archive) record
    it there: 0 on PASS or PARTIAL PASS, 1 on FAIL, 2 when the verdict cannot be recorded."""
    result = verdict_of(run, registry, require_whole=require_whole)
    for problem in result.problems:
        print(f"verdict: {problem}")
    partial = run_identity.partial(run)
    if allow_partial is not None and partial:
        print(f"verdict: partial run allowed (--allow-partial): {allow_partial}")
    print(result.line(run_identity.identity_key(run)))
    if record_to is not None:
        try:
            record_verdict(run, result, record_to, require_whole, allow_partial)
        except (OSError, ValueError) as err:
            print(
                f"verdict: the verdict could not be recorded in {record_to}: {err}", file=sys.stderr
            )
            return 2
    return 0 if result.passed else 1


def main(argv: list[str] | None = None) -> int:
    """Command line: print a run's problems and its verdict line; exit 1 on FAIL."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", help="a run archive directory or a build event JSON file")
    parser.add_argument(
        "--record",
        action="store_true",
        help="write the verdict into the archive's run.json, and junit.xml, ctrf.json and "
        "summary.md beside it (./bazelw does); exit 2 when it cannot",
    )
    add_whole_options(parser)
    args = parser.parse_args(argv)
    whole = require_whole(args)
    try:
        run = results.read_run(args.run)
    except (OSError, ValueError) as err:
        print(f"verdict: cannot read the run: {err}", file=sys.stderr)
        return 2
    if args.record and not os.path.isdir(args.run):
        print(f"verdict: --record needs a run archive, not {args.run}", file=sys.stderr)
        return 2
    return judge(run, load_registry(), whole, args.allow_partial, args.run if args.record else None)


def add_whole_options(parser: argparse.ArgumentParser) -> None:
    """--require-whole and --allow-partial=WHY (default: the REQUIRE_WHOLE_ENV variable)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--require-whole",
        action="store_true",
        default=os.environ.get(REQUIRE_WHOLE_ENV) == "1",
        help="a partial run fails (exit 1), naming what it left out "
        f"(default when ${REQUIRE_WHOLE_ENV}=1)",
    )
    group.add_argument(
        "--allow-partial",
        metavar="WHY",
        default=None,
        help="a partial run may pass; WHY (required) is printed with the verdict",
    )


def require_whole(args: argparse.Namespace) -> bool:
    """Whether the parsed options require a whole run (--allow-partial wins). An empty WHY
    is bad input: exit 2 with one line."""
    if args.allow_partial is not None and not args.allow_partial.strip():
        print("verdict: --allow-partial needs the reason: --allow-partial=<why>", file=sys.stderr)
        raise SystemExit(2)
    return bool(args.require_whole) and args.allow_partial is None


if __name__ == "__main__":
    sys.exit(main())
