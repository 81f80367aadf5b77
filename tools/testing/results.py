#!/usr/bin/env python3
"""Read the results of one `bazel test` invocation: its build events and the JUnit XML they name.

The one reader behind the console summary (skip_report.py), the conformance check
(conformance_check.py) and the report (//tools/report). Standard library only, so any python3
runs it.

A run is either a build event JSON file (`bazel test --build_event_json_file=FILE`) or a run
archive: a directory that `./bazelw test` writes under `conformance-runs/` with

    build_events.json          the invocation's build events
    tests/<pkg>/<name>/test.xml a copy of every test.xml those events name (by label path)
    tests/<pkg>/<name>/outputs.zip  the test's undeclared outputs ($TEST_UNDECLARED_OUTPUTS_DIR),
                               where the events name one (e.g. exception_fidelity.json)
    run.json                   bazel args, exit code, start/end/wall time, lane, config flags

Only what the build events name is read, never what `bazel-testlogs` still holds from earlier
invocations: a stale test.xml of a removed target cannot count.

    results.py archive --bep FILE --root DIR --exit-code N --start T --end T -- ARGS...
    results.py verdict RUN       # the run's verdict (exit 1 on FAIL): see verdict()
    results.py show RUN          # print targets and cases of a run (archive dir or BEP file)
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import urllib.parse
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

# pytest writes "Skipped: <reason>" or "<file>:<line>: <reason>" in some versions.
_REASON_PREFIX = re.compile(r"^(Skipped: |\S+:\d+: )")
# tvm_conformance.deviations.REASON_PATTERN (kept in step by results_test.py).
DEVIATION_PATTERN = re.compile(r"deviation (?P<id>[a-z0-9][a-z0-9-]*):")
# pytest's message for a strict xfail that passed.
XPASS_STRICT = "[XPASS(strict)]"
# Build settings the lanes and configs are made of (`--//tools/config:<name>=<value>`; from a
# workspace using the kit, `--@tvm_conformance//tools/config:...`).
_CONFIG_FLAG = re.compile(
    r"^--(?P<no>no)?(@(tvm_conformance)?)?//tools/config:(?P<name>[A-Za-z0-9_]+)"
    r"(=(?P<value>.*))?$"
)
OUTCOMES = ("passed", "failed", "skipped", "xfailed", "disabled")
ARCHIVE_EVENTS = "build_events.json"
ARCHIVE_META = "run.json"
ARCHIVE_TESTS = "tests"
ARCHIVE_OUTPUTS = "outputs.zip"
# The build event output name of a test's zipped undeclared outputs.
_OUTPUTS_EVENT_NAME = "test.outputs__outputs.zip"


@dataclass
class Case:
    """One JUnit test case."""

    name: str
    classname: str
    outcome: str  # one of OUTCOMES
    message: str = ""  # skip or xfail reason, failure text
    properties: dict[str, str] = field(default_factory=dict)
    deviation: str | None = None  # id named by an xfail (or strict XPASS) reason
    time_s: float = 0.0
    googletest: bool = False  # googletest writes `status`/`result` attributes; pytest does not

    @property
    def xpass_strict(self) -> bool:
        """True for a strict xfail that passed (pytest reports it as a failure)."""
        return self.outcome == "failed" and self.message.startswith(XPASS_STRICT)

    def ids(self) -> list[str]:
        """Names a conformance row may use: `name`, and googletest's `Suite.Case`."""
        ids = [self.name]
        if self.classname and "/" not in self.classname and "." not in self.classname:
            ids.append(f"{self.classname}.{self.name}")
        return ids


@dataclass
class TargetResult:
    """One test target of a run (the last attempt of each shard/run, cases merged)."""

    label: str
    status: str  # Bazel's: PASSED, FAILED, FLAKY, TIMEOUT, NO_STATUS, ...
    cached: bool
    duration_s: float
    # Where the result came from (SOURCES): executed in this invocation, or a cache.
    source: str = "executed"
    host: str = ""  # the executing host, where the build events name one (remote execution)
    xml_paths: list[str] = field(default_factory=list)
    cases: list[Case] = field(default_factory=list)
    suite_properties: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # unreadable / missing test.xml
    outputs_paths: list[str] = field(default_factory=list)  # outputs.zip files that exist

    def output_json(self, name: str) -> object | None:
        """The JSON file `name` of the test's undeclared outputs (first shard that has it)."""
        for path in self.outputs_paths:
            try:
                with zipfile.ZipFile(path) as archive:
                    if name in archive.namelist():
                        return json.loads(archive.read(name).decode("utf-8"))
            except (OSError, zipfile.BadZipFile, ValueError):
                continue
        return None

    def case(self, case_id: str) -> Case | None:
        """The case a conformance row names (see Case.ids), or None."""
        for case in self.cases:
            if case_id in case.ids():
                return case
        return None


@dataclass
class Run:
    """One invocation: its targets and what run.json (or the build events) say about it."""

    source: str
    targets: dict[str, TargetResult]
    flags: dict[str, str]  # //tools/config:<name> -> value, e.g. {"cuda": "true", "lane": "x"}
    lane: str
    meta: dict[str, object] = field(default_factory=dict)

    def cases(self) -> list[tuple[TargetResult, Case]]:
        """Every (target, case) pair of the run, targets in label order."""
        return [
            (t, c) for label in sorted(self.targets) for t in [self.targets[label]] for c in t.cases
        ]

    @property
    def exit_code(self) -> int | None:
        """Bazel's exit code (run.json, else the build events), None when neither says."""
        code = self.meta.get("exit_code")
        if code is None:
            code = self.meta.get("bep_exit_code")
        try:
            return None if code is None else int(code)  # type: ignore[call-overload]
        except (TypeError, ValueError):
            return None

    @property
    def config(self) -> str:
        """What the run asked for: cpu, cuda or cuda_gpu, plus +asan / +ubsan."""
        return config_name(self.flags)

    @property
    def identity(self) -> dict[str, object]:
        """The venv identity the run tested (run.json `identity`), or the lane alone."""
        found = self.meta.get("identity")
        if isinstance(found, dict) and found:
            return found
        return {"lane": self.lane}

    @property
    def patterns(self) -> str:
        """The target patterns the invocation asked for (`//...`), from run.json."""
        args = [str(a) for a in self.meta.get("bazel_args", [])]  # type: ignore[union-attr]
        found = [a for a in args[1:] if not a.startswith("-")] if args else []
        return " ".join(found) or "(unknown)"

    def identity_key(self) -> str:
        """Lane + the sha256 of the installed TVM and tvm-ffi + config + target patterns: runs
        with equal keys tested the same thing and may be compared; others never merge (so a
        later run of one target cannot stand for an earlier run of `//...`)."""
        ident = self.identity
        parts = [str(ident.get("lane", self.lane))]
        for dist in ("tvm", "tvm_ffi"):
            entry = ident.get(dist)
            sha = entry.get("sha256", "") if isinstance(entry, dict) else ""
            parts.append(f"{dist}={sha[:16] or 'unknown'}")
        parts += [self.config, self.patterns]
        return "/".join(parts)


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


def _properties(element: ET.Element) -> dict[str, str]:
    props = element.find("properties")
    if props is None:
        return {}
    return {p.get("name", ""): p.get("value", "") for p in props.iter("property")}


def _case(element: ET.Element) -> Case:
    outcome = case_outcome(element)
    message = ""
    children = {child.tag: child for child in element}
    for tag in ("failure", "error"):
        if tag in children:
            node = children[tag]
            message = (node.get("message") or node.text or "").strip()
            break
    else:
        if "skipped" in children:
            message = skip_reason(children["skipped"])
        elif outcome == "disabled":
            message = "disabled (googletest DISABLED_)"
        elif outcome == "skipped":
            message = "(no reason given)"
    found = DEVIATION_PATTERN.search(message) if outcome in ("xfailed", "failed") else None
    try:
        time_s = float(element.get("time") or 0.0)
    except ValueError:
        time_s = 0.0
    return Case(
        name=element.get("name", ""),
        classname=element.get("classname", ""),
        outcome=outcome,
        message=message,
        properties=_properties(element),
        deviation=found["id"] if found else None,
        time_s=time_s,
        googletest=element.get("status") is not None,
    )


def read_junit(path: str) -> tuple[list[Case], dict[str, str]]:
    """Cases and testsuite properties of one JUnit XML file (pytest, googletest, Bazel's own).

    Raises OSError or xml.etree.ElementTree.ParseError for a missing or broken file.
    """
    root = ET.parse(path).getroot()
    suite_props: dict[str, str] = {}
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    for suite in suites:
        suite_props.update(_properties(suite))
    return [_case(c) for c in root.iter("testcase")], suite_props


# --- Writing build events (the GPU runner's archives, the tests' fake runs) ------------------
# One writer for the events this module reads, so a runner without Bazel and the tests' fixtures
# produce exactly what a `./bazelw test` archive holds.


def test_result_event(
    label: str,
    status: str,
    outputs: list[tuple[str, str]],
    millis: int,
    run: int = 1,
    cached_locally: bool = False,
    cached_remotely: bool | None = None,
) -> dict:
    """A testResult event: `outputs` are (name, path) of the attempt's files (test.xml, ...)."""
    result: dict[str, object] = {
        "status": status,
        "testAttemptDurationMillis": str(millis),
        "testActionOutput": [{"name": name, "uri": "file://" + path} for name, path in outputs],
    }
    if cached_locally:
        result["cachedLocally"] = True
    if cached_remotely is not None:
        result["executionInfo"] = {"cachedRemotely": cached_remotely}
    return {
        "id": {"testResult": {"label": label, "run": run, "shard": 1, "attempt": 1}},
        "testResult": result,
    }


def test_summary_event(label: str, status: str) -> dict:
    """A testSummary event: the target's overall status (PASSED, FAILED, FAILED_TO_BUILD...)."""
    return {"id": {"testSummary": {"label": label}}, "testSummary": {"overallStatus": status}}


def build_finished_event(finish_ms: int, exit_code: int) -> dict:
    """The buildFinished event: when, and the exit code (0: success)."""
    return {
        "id": {"buildFinished": {}},
        "finished": {
            "overallSuccess": exit_code == 0,
            "finishTimeMillis": str(finish_ms),
            "exitCode": {"name": "OK" if exit_code == 0 else "FAILED", "code": exit_code},
        },
    }


def write_events(path: str, events: list[dict]) -> None:
    """Write `events` as a build event file (one JSON object a line), as Bazel's BEP JSON."""
    with open(path, "w", encoding="utf-8") as stream:
        stream.writelines(json.dumps(event) + "\n" for event in events)


def _events(bep_path: str) -> list[dict]:
    events = []
    with open(bep_path, encoding="utf-8") as stream:
        for line in stream:
            line = line.strip()
            if line:
                try:
                    events.append(json.loads(line))
                except json.JSONDecodeError:
                    continue  # a run killed mid-write leaves a partial last line
    return events


def _millis(value: object) -> float:
    try:
        return float(value) / 1000.0  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0


def config_flags(options: list[str]) -> dict[str, str]:
    """`//tools/config:<name>` build settings in an (expanded) option list, by name."""
    flags: dict[str, str] = {}
    for option in options:
        match = _CONFIG_FLAG.match(option)
        if match:
            value = match["value"]
            flags[match["name"]] = "false" if match["no"] else ("true" if value is None else value)
    return flags


def _command_options(events: list[dict]) -> list[str]:
    """The canonical (configs expanded) command options of the invocation."""
    for event in events:
        line = event.get("structuredCommandLine", {})
        if line.get("commandLineLabel") != "canonical":
            continue
        for section in line.get("sections", []):
            if section.get("sectionLabel") == "command options":
                return [o.get("combinedForm", "") for o in section["optionList"].get("option", [])]
    return []


def lane_of(flags: dict[str, str]) -> str:
    """The lane a run belongs to: `--//tools/config:lane`, "default" when absent."""
    return flags.get("lane") or "default"


def _on(flags: dict[str, str], name: str) -> bool:
    return flags.get(name, "false") not in ("false", "0", "")


def config_name(flags: dict[str, str]) -> str:
    """cpu, cuda or cuda_gpu (`--config=cuda_gpu` sets require_gpu), plus +asan / +ubsan."""
    name = "cuda_gpu" if _on(flags, "require_gpu") else "cuda" if _on(flags, "cuda") else "cpu"
    return name + "".join(f"+{s}" for s in ("asan", "ubsan") if _on(flags, s))


def archived_xml(label: str, shard: int = 1, run: int = 1, shards: int = 1) -> str:
    """Path (relative to a run archive) of the copy of one test.xml, by label path."""
    package, _, name = label.lstrip("@").lstrip("/").partition(":")
    parts = [ARCHIVE_TESTS, *package.split("/"), name]
    if shards > 1 or shard > 1 or run > 1:
        parts.append(f"shard_{shard}_run_{run}")
    return os.path.join(*[p for p in parts if p], "test.xml")


# Where a target's result came from: run in this invocation, Bazel's action cache of this
# output base (an earlier invocation here), the disk cache (shared by clones on this machine;
# made here or by whoever filled it) or a remote cache (made on another machine).
SOURCES = ("executed", "action cache", "disk cache", "remote cache")


@dataclass
class _Attempt:
    label: str
    shard: int
    run: int
    attempt: int
    status: str
    cached: bool
    duration_s: float
    xml: str | None
    outputs: str | None = None  # local outputs.zip, when the events name one by a file URI
    source: str = "executed"
    host: str = ""


def archived_outputs(label: str, shard: int = 1, run: int = 1, shards: int = 1) -> str:
    """Path (relative to a run archive) of the copy of one test's outputs.zip."""
    return os.path.join(os.path.dirname(archived_xml(label, shard, run, shards)), ARCHIVE_OUTPUTS)


def _local_testlog(workspace: str, label: str) -> str | None:
    """`<workspace>/bazel-testlogs/<pkg>/<name>/test.xml`: where Bazel also downloads a test.xml
    that the build events name by a remote-cache URI (bytestream://) instead of a file."""
    if not workspace:
        return None
    package, _, name = label.lstrip("@").lstrip("/").partition(":")
    return os.path.join(workspace, "bazel-testlogs", *package.split("/"), name, "test.xml")


def _remote_cache_in_use(events: list[dict]) -> bool:
    """True when the invocation named a remote cache (else a remote hit is the disk cache)."""
    return any(
        o.startswith(("--remote_cache=", "--remote_executor=")) and not o.endswith("=")
        for o in _command_options(events)
    )


def _attempts(events: list[dict]) -> list[_Attempt]:
    found = []
    remote = _remote_cache_in_use(events)
    workspace = next(
        (e["started"].get("workspaceDirectory", "") for e in events if "started" in e), ""
    )
    for event in events:
        test_id = event.get("id", {}).get("testResult")
        if not test_id:
            continue
        result = event.get("testResult", {})
        xml = outputs = None
        for output in result.get("testActionOutput", []):
            uri = output.get("uri", "")
            if output.get("name") == _OUTPUTS_EVENT_NAME and uri.startswith("file://"):
                outputs = urllib.parse.unquote(uri[len("file://") :])
            if output.get("name") != "test.xml":
                continue
            if uri.startswith("file://"):
                xml = urllib.parse.unquote(uri[len("file://") :])
            elif int(test_id.get("shard", 1)) <= 1 and int(test_id.get("run", 1)) <= 1:
                xml = _local_testlog(workspace, test_id.get("label", ""))
        info = result.get("executionInfo", {})
        source = "executed"
        if result.get("cachedLocally"):
            source = "action cache"
        elif info.get("cachedRemotely"):
            source = "remote cache" if remote else "disk cache"
        found.append(
            _Attempt(
                label=test_id.get("label", ""),
                shard=int(test_id.get("shard", 1)),
                run=int(test_id.get("run", 1)),
                attempt=int(test_id.get("attempt", 1)),
                status=result.get("status", "NO_STATUS"),
                cached=bool(result.get("cachedLocally") or info.get("cachedRemotely")),
                duration_s=_millis(result.get("testAttemptDurationMillis")),
                xml=xml,
                outputs=outputs,
                source=source,
                host=str(info.get("hostname", "")),
            )
        )
    # The last attempt of each (shard, run) counts (flaky retries).
    last: dict[tuple[str, int, int], _Attempt] = {}
    for attempt in found:
        key = (attempt.label, attempt.shard, attempt.run)
        if key not in last or attempt.attempt >= last[key].attempt:
            last[key] = attempt
    return list(last.values())


def _summaries(events: list[dict]) -> dict[str, str]:
    return {
        e["id"]["testSummary"].get("label", ""): e.get("testSummary", {}).get("overallStatus", "")
        for e in events
        if "testSummary" in e.get("id", {})
    }


def _started_finished(events: list[dict]) -> dict[str, object]:
    meta: dict[str, object] = {}
    for event in events:
        if "started" in event.get("id", {}):
            meta["start"] = _millis(event.get("started", {}).get("startTimeMillis"))
        if "buildFinished" in event.get("id", {}):
            finished = event.get("finished", {})
            meta["end"] = _millis(finished.get("finishTimeMillis"))
            meta["success"] = bool(finished.get("overallSuccess"))
            code = finished.get("exitCode", {})
            meta["bep_exit_code"] = int(code.get("code", 0)) if code else None
    return meta


def read_run(path: str) -> Run:
    """Read a run archive directory or a build event JSON file."""
    archive = os.path.isdir(path)
    bep = os.path.join(path, ARCHIVE_EVENTS) if archive else path
    if not os.path.isfile(bep):
        raise FileNotFoundError(f"{path}: no build event file ({ARCHIVE_EVENTS}) in it")
    events = _events(bep)
    meta: dict[str, object] = _started_finished(events)
    if archive and os.path.isfile(os.path.join(path, ARCHIVE_META)):
        with open(os.path.join(path, ARCHIVE_META), encoding="utf-8") as stream:
            meta.update(json.load(stream))
    flags = config_flags(_command_options(events))
    summaries = _summaries(events)
    attempts = _attempts(events)
    shard_count: dict[str, int] = {}
    for a in attempts:
        shard_count[a.label] = max(shard_count.get(a.label, 1), a.shard, a.run)
    targets: dict[str, TargetResult] = {}
    for a in sorted(attempts, key=lambda a: (a.label, a.shard, a.run)):
        target = targets.setdefault(
            a.label,
            TargetResult(a.label, summaries.get(a.label) or a.status, a.cached, 0.0, a.source),
        )
        target.cached = target.cached and a.cached
        if a.source != "executed":
            target.source = a.source
        target.host = target.host or a.host
        target.duration_s += a.duration_s
        if archive:
            xml = os.path.join(path, archived_xml(a.label, a.shard, a.run, shard_count[a.label]))
            outputs = os.path.join(
                path, archived_outputs(a.label, a.shard, a.run, shard_count[a.label])
            )
        else:
            xml, outputs = a.xml or "", a.outputs or ""
        target.xml_paths.append(xml)
        if outputs and os.path.isfile(outputs):
            target.outputs_paths.append(outputs)
        try:
            cases, props = read_junit(xml)
        except (OSError, ET.ParseError) as err:
            target.errors.append(f"cannot read test.xml of {a.label}: {err}")
            continue
        target.cases.extend(cases)
        target.suite_properties.update(props)
    for label, status in summaries.items():
        if label not in targets:  # no attempt ran: FAILED_TO_BUILD, NO_STATUS, ...
            targets[label] = TargetResult(label, status or "NO_STATUS", False, 0.0)
    for target in targets.values():
        target.cases = merge_runs(target.cases)
    return Run(path, targets, flags, lane_of(flags), meta)


# Of the runs of one case (`--runs_per_test`), the worst counts: a failure in run 3 is not
# hidden by run 1 passing.
_WORST_FIRST = ("failed", "xfailed", "skipped", "disabled", "passed")


def merge_runs(cases: list[Case]) -> list[Case]:
    """One case per (classname, name): the worst outcome of its runs, in first-seen order."""
    merged: dict[tuple[str, str], Case] = {}
    for case in cases:
        key = (case.classname, case.name)
        seen = merged.get(key)
        if seen is None or _WORST_FIRST.index(case.outcome) < _WORST_FIRST.index(seen.outcome):
            merged[key] = case
    return list(merged.values())


# --- The verdict ----------------------------------------------------------------------------
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


def verdict(
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


def venv_repository(lane: str) -> str:
    """The external repository of a lane's venv (WORKSPACE): python_venv[_<lane>]."""
    return "python_venv" if lane == "default" else f"python_venv_{lane}"


def venv_record_path(events: list[dict], lane: str) -> str | None:
    """tvm_conformance_venv.json of the lane's venv, found from the build events' exec root."""
    for event in events:
        exec_root = event.get("workspaceInfo", {}).get("localExecRoot")
        if exec_root:
            output_base = os.path.dirname(os.path.dirname(exec_root))
            path = os.path.join(
                output_base, "external", venv_repository(lane), "venv", "tvm_conformance_venv.json"
            )
            return path if os.path.isfile(path) else None
    return None


def identity_of(record: dict[str, Any], lane: str) -> dict[str, Any]:
    """The venv identity from its record: lane, and version, wheel file and sha256 of TVM and
    tvm-ffi (a user's wheel, or the pinned one pip installed)."""
    identity: dict[str, Any] = {"lane": record.get("lane", lane)}
    installed = record.get("installed", {})
    for key, dist in (("tvm", "apache-tvm"), ("tvm_ffi", "apache-tvm-ffi")):
        entry = dict(installed.get(dist, {}))
        entry.setdefault("version", record.get("packages", {}).get(dist, "unknown"))
        user = record.get("user_wheels", {}).get(dist)
        if user:
            entry.update(user, source="user wheel")
        entry.setdefault("source", "pinned lock")
        identity[key] = entry
    identity["tvm_libinfo"] = record.get("tvm_libinfo", {})
    return identity


def machine_facts() -> dict[str, str]:
    """OS, CPU, GPU and driver of this machine (for the report's header), Python standard
    library only: what executed the run's uncached tests."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gpu, driver = "none", "nvidia-smi not found"
    smi = shutil.which("nvidia-smi")
    if smi:
        query = [smi, "--query-gpu=name,driver_version", "--format=csv,noheader"]
        try:
            out = subprocess.run(query, capture_output=True, text=True, timeout=30, check=True)
            rows = [r.split(",") for r in out.stdout.strip().splitlines() if r.strip()]
            if rows:
                gpu, driver = "; ".join(r[0].strip() for r in rows), rows[0][-1].strip()
            else:
                driver = "nvidia-smi lists no GPU"
        except (subprocess.SubprocessError, OSError) as err:
            driver = f"nvidia-smi failed: {err}"
    return {
        "host": platform.node(),
        "os": platform.platform(),
        "cpu": f"{cpu} ({os.cpu_count()} cores)",
        "gpu": gpu,
        "gpu_driver": driver,
        "python": platform.python_version(),
    }


def archive_run(
    bep: str,
    root: str,
    args: list[str],
    exit_code: int,
    start: float,
    end: float,
    venv_record: str | None = None,
) -> str:
    """Copy one invocation into `<root>/<UTC start>-<lane>/`; return that directory.

    run.json records what was tested (the venv identity: lane, TVM and tvm-ffi versions, wheel
    files and sha256, from the venv's record) and this machine's facts, so that the report's
    header never comes from a test result (which a cache could bring from another machine).
    """
    events = _events(bep)
    flags = config_flags(_command_options(events))
    lane = lane_of(flags)
    record_path = venv_record or venv_record_path(events, lane)
    record: dict[str, Any] = {}
    if record_path:
        try:
            with open(record_path, encoding="utf-8") as stream:
                record = json.load(stream)
        except (OSError, ValueError):
            record = {}
    stamp = datetime.datetime.fromtimestamp(start, datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    # A run of a user's wheel is named by it too: `<stamp>-<lane>-wheel-<sha256 prefix>`.
    user = sorted(w.get("sha256", "")[:12] for w in record.get("user_wheels", {}).values())
    name = f"{stamp}-{lane}" + "".join(f"-wheel-{sha}" for sha in user)
    dest = os.path.join(root, name)
    suffix = 1
    while os.path.exists(dest):
        suffix += 1
        dest = os.path.join(root, f"{name}-{suffix}")
    os.makedirs(dest)
    shutil.copyfile(bep, os.path.join(dest, ARCHIVE_EVENTS))
    attempts = _attempts(events)
    shard_count: dict[str, int] = {}
    for a in attempts:
        shard_count[a.label] = max(shard_count.get(a.label, 1), a.shard, a.run)
    missing = []
    for a in attempts:
        target = os.path.join(dest, archived_xml(a.label, a.shard, a.run, shard_count[a.label]))
        if a.xml and os.path.isfile(a.xml):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(a.xml, target)
        else:
            missing.append(a.label)
        if a.outputs and os.path.isfile(a.outputs):
            outputs = os.path.join(
                dest, archived_outputs(a.label, a.shard, a.run, shard_count[a.label])
            )
            os.makedirs(os.path.dirname(outputs), exist_ok=True)
            shutil.copyfile(a.outputs, outputs)
    meta = {
        "bazel_args": args,
        "exit_code": exit_code,
        "start": start,
        "end": end,
        "start_utc": datetime.datetime.fromtimestamp(start, datetime.timezone.utc).isoformat(),
        "wall_s": round(end - start, 3),
        "lane": lane,
        "flags": flags,
        "config": config_name(flags),
        "cuda": _on(flags, "cuda"),
        "cuda_gpu": _on(flags, "require_gpu"),
        "identity": identity_of(record, lane) if record else {"lane": lane},
        "venv_record": record,
        "machine": machine_facts(),
        "targets": len({a.label for a in attempts}),
        "missing_test_xml": sorted(set(missing)),
    }
    with open(os.path.join(dest, ARCHIVE_META), "w", encoding="utf-8") as stream:
        json.dump(meta, stream, indent=1, sort_keys=True)
        stream.write("\n")
    return dest


def runs_in(path: str) -> list[str]:
    """Run archives: `path` itself if it is one (or a BEP file), else its subdirectories."""
    if os.path.isfile(path) or os.path.isfile(os.path.join(path, ARCHIVE_EVENTS)):
        return [path]
    if not os.path.isdir(path):
        raise FileNotFoundError(f"{path}: no run archive or build event file")
    return [
        os.path.join(path, d)
        for d in sorted(os.listdir(path))
        if os.path.isfile(os.path.join(path, d, ARCHIVE_EVENTS))
    ]


def main(argv: list[str] | None = None) -> int:
    """Command line: `archive` (used by ./bazelw) and `show`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    arc = sub.add_parser("archive", help="archive one invocation; prints the directory")
    arc.add_argument("--bep", required=True)
    arc.add_argument("--root", required=True, help="e.g. <workspace>/conformance-runs")
    arc.add_argument("--exit-code", type=int, required=True)
    arc.add_argument("--start", type=float, required=True, help="seconds since the epoch")
    arc.add_argument("--end", type=float, required=True)
    arc.add_argument("--venv-record", help="the lane venv's tvm_conformance_venv.json")
    arc.add_argument("bazel_args", nargs="*")
    ver = sub.add_parser("verdict", help="print a run's verdict and its problems; exit 1 on FAIL")
    ver.add_argument("run")
    show = sub.add_parser("show", help="print a run's targets and cases as JSON")
    show.add_argument("run")
    args = parser.parse_args(argv)
    if args.command == "archive":
        print(
            archive_run(
                args.bep,
                args.root,
                args.bazel_args,
                args.exit_code,
                args.start,
                args.end,
                args.venv_record,
            )
        )
        return 0
    run = read_run(args.run)
    if args.command == "verdict":
        result = verdict(run, load_registry())
        for problem in result.problems:
            print(f"verdict: {problem}")
        print(result.line(f"{run.identity_key()}"))
        return 0 if result.passed else 1
    json.dump(
        {
            "lane": run.lane,
            "flags": run.flags,
            "meta": run.meta,
            "targets": {k: asdict(v) for k, v in run.targets.items()},
        },
        sys.stdout,
        indent=1,
    )
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
