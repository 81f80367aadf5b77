#!/usr/bin/env python3
"""Read the results of one `bazel test` invocation: its build events and the JUnit XML they name.

Its one job is reading: a run becomes a Run of TargetResults of Cases. The one reader behind the
verdict (verdict.py), the console summary (skip_report.py), the conformance check
(conformance_check.py) and the report (report.py). What a run's identity is and whether it is
partial is run_identity.py's policy (functions of a Run); judging a run is verdict.py's.
Standard library only, so any python3 runs it.

A run is either a build event JSON file (`bazel test --build_event_json_file=FILE`) or a run
archive: a directory that `./bazelw test` writes under `conformance-runs/` (archive.py) with

    build_events.json          the invocation's build events
    tests/<pkg>/<name>/test.xml a copy of every test.xml those events name (by label path)
    tests/<pkg>/<name>/outputs.zip  the test's undeclared outputs ($TEST_UNDECLARED_OUTPUTS_DIR),
                               where the events name one (e.g. exception_fidelity.json)
    run.json                   the run record (run_record.py): runner, bazel args, exit code,
                               start/end/wall time, lane, config flags, identity, verdict

Only what the build events name is read, never what `bazel-testlogs` still holds from earlier
invocations: a stale test.xml of a removed target cannot count.

    results.py RUN       # print the targets and cases of a run (archive dir or BEP file), as JSON
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import urllib.parse
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import asdict, dataclass, field

import run_identity
import run_record

# pytest writes "Skipped: <reason>" or "<file>:<line>: <reason>" in some versions.
_REASON_PREFIX = re.compile(r"^(Skipped: |\S+:\d+: )")
# tvm_conformance.deviations.REASON_PATTERN (kept in step by results_test.py).
DEVIATION_PATTERN = re.compile(r"deviation (?P<id>[a-z0-9][a-z0-9-]*):")
# pytest's message for a strict xfail that passed.
XPASS_STRICT = "[XPASS(strict)]"
CASE_OUTCOMES = ("passed", "failed", "skipped", "xfailed", "disabled")
ARCHIVE_EVENTS = "build_events.json"
# The run record (run_record.py owns it: its schema, writer and reader).
ARCHIVE_META = run_record.RECORD_FILE
ARCHIVE_TESTS = "tests"
ARCHIVE_OUTPUTS = "outputs.zip"
# Who wrote a JUnit file: pytest names its suite "pytest", googletest its root "AllTests";
# anything else (Bazel's own XML for a test that wrote none) is "other".
PYTEST, GOOGLETEST, OTHER = "pytest", "googletest", "other"
# Attributes of googletest's <testsuites> that are its own; any other is a property recorded
# outside a test (the kit's gtest main records `gtest_filter` there).
_GOOGLETEST_ROOT_ATTRIBUTES = frozenset(
    ("tests", "failures", "disabled", "errors", "time", "timestamp", "name", "random_seed")
)
# The build event output name of a test's zipped undeclared outputs.
_OUTPUTS_EVENT_NAME = "test.outputs__outputs.zip"


@dataclass
class Case:
    """One JUnit test case."""

    name: str
    classname: str
    outcome: str  # one of CASE_OUTCOMES
    message: str = ""  # skip or xfail reason, failure text
    properties: dict[str, str] = field(default_factory=dict)
    deviation: str | None = None  # id named by an xfail (or strict XPASS) reason
    time_s: float = 0.0
    googletest: bool = False  # googletest writes `status`/`result` attributes; pytest does not
    # The other runs of this case (`--runs_per_test`): every run counts in the verdict.
    other_runs: list[Case] = field(default_factory=list)
    # A failure's whole report (the element's text): pytest shortens a long message
    # attribute to its first lines ("[+N more lines; full report in element text]").
    report: str = ""

    def runs(self) -> list[Case]:
        """This case and its other runs (one element without --runs_per_test)."""
        return [self, *self.other_runs]

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
    # Who wrote its JUnit files (PYTEST, GOOGLETEST, OTHER), one entry per kind seen.
    producers: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # unreadable / missing test.xml
    # <error>/<failure> elements of a <testsuite> itself, outside any <testcase>.
    suite_errors: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)  # the target's tags (targetConfigured event)
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

    def output_jsons(self, prefix: str) -> dict[str, object]:
        """Every JSON file of the test's undeclared outputs, over all its shards, whose name
        starts with `prefix`: {name: its JSON}. An unreadable archive or file is left out."""
        found: dict[str, object] = {}
        for path in self.outputs_paths:
            try:
                with zipfile.ZipFile(path) as archive:
                    for name in archive.namelist():
                        if name.startswith(prefix) and name.endswith(".json"):
                            try:
                                found[name] = json.loads(archive.read(name).decode("utf-8"))
                            except ValueError:
                                continue
            except (OSError, zipfile.BadZipFile):
                continue
        return found

    def case(self, case_id: str) -> Case | None:
        """The case a conformance row names (see Case.ids), or None."""
        for case in self.cases:
            if case_id in case.ids():
                return case
        return None


@dataclass
class Run:
    """One invocation, as plain data: its targets and what run.json (or the build events) say
    about it. What it was and whether it is partial are run_identity.py's functions of it."""

    source: str
    targets: dict[str, TargetResult]
    flags: dict[str, str]  # //tools/config:<name> -> value, e.g. {"cuda": "true", "lane": "x"}
    lane: str
    meta: dict[str, object] = field(default_factory=dict)
    # What made it (run_record.RUNNERS): the record says; a build event file alone is Bazel's.
    runner: str = run_record.BAZEL

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
    message = report = ""
    children = {child.tag: child for child in element}
    for tag in ("failure", "error"):
        if tag in children:
            node = children[tag]
            message = (node.get("message") or node.text or "").strip()
            report = (node.text or "").strip()
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
        report=report,
    )


def read_junit(path: str) -> tuple[list[Case], dict[str, str]]:
    """Cases and testsuite properties of one JUnit XML file (pytest, googletest, Bazel's own).

    Raises OSError or xml.etree.ElementTree.ParseError for a missing or broken file.
    """
    cases, props, _, _ = read_junit_full(path)
    return cases, props


def read_junit_full(path: str) -> tuple[list[Case], dict[str, str], list[str], str]:
    """read_junit, the <error>/<failure> elements a <testsuite> holds outside any case
    (a collection error, a crashed fixture), each as `<tag>: <message>`, and who wrote the
    file (PYTEST, GOOGLETEST or OTHER)."""
    root = ET.parse(path).getroot()
    suite_props: dict[str, str] = {}
    suite_errors: list[str] = []
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    producer = OTHER
    if any(suite.get("name") == "pytest" for suite in suites):
        producer = PYTEST
    elif root.tag == "testsuites" and root.get("name") == "AllTests":
        producer = GOOGLETEST
        suite_props.update(
            {k: v for k, v in root.attrib.items() if k not in _GOOGLETEST_ROOT_ATTRIBUTES}
        )
    if root.tag == "testsuites":
        suites.append(root)
    for suite in suites:
        suite_props.update(_properties(suite))
        for child in suite:
            if child.tag in ("error", "failure"):
                text = (child.get("message") or child.text or "").strip()
                suite_errors.append(f"{child.tag}: {text[:200] or '(no message)'}")
    return [_case(c) for c in root.iter("testcase")], suite_props, suite_errors, producer


def read_events(bep_path: str) -> list[dict]:
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


def command_options(events: list[dict]) -> list[str]:
    """The canonical (configs expanded) command options of the invocation."""
    for event in events:
        line = event.get("structuredCommandLine", {})
        if line.get("commandLineLabel") != "canonical":
            continue
        for section in line.get("sections", []):
            if section.get("sectionLabel") == "command options":
                return [o.get("combinedForm", "") for o in section["optionList"].get("option", [])]
    return []


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
class Attempt:
    """One test attempt the build events report (a shard, a run, a flaky retry)."""

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


def _local_testlogs(
    workspace: str, label: str, shard: int = 1, run: int = 1, shards: int = 1, runs: int = 1
) -> str | None:
    """`<workspace>/bazel-testlogs/<pkg>/<name>[/<attempt dir>]`: where Bazel also downloads
    the test.xml and outputs.zip that the build events name by a remote URI (bytestream://)
    instead of a file. A sharded or repeated test keeps each attempt in `shard_S_of_N`,
    `run_R_of_M` or `shard_S_of_N_run_R_of_M`, Bazel's own names for them."""
    if not workspace:
        return None
    package, _, name = label.lstrip("@").lstrip("/").partition(":")
    parts = []
    if shards > 1:
        parts.append(f"shard_{shard}_of_{shards}")
    if runs > 1:
        parts.append(f"run_{run}_of_{runs}")
    attempt_dir = "_".join(parts)
    path = [workspace, "bazel-testlogs", *package.split("/"), name]
    return os.path.join(*path, *([attempt_dir] if attempt_dir else []))


def _remote_cache_in_use(events: list[dict]) -> bool:
    """True when the invocation named a remote cache (else a remote hit is the disk cache)."""
    return any(
        o.startswith(("--remote_cache=", "--remote_executor=")) and not o.endswith("=")
        for o in command_options(events)
    )


def _most(attempts: list[Attempt], field: str) -> dict[str, int]:
    """The highest shard (or run) number the events report, per label."""
    most: dict[str, int] = {}
    for a in attempts:
        most[a.label] = max(most.get(a.label, 1), getattr(a, field))
    return most


def attempts_of(events: list[dict]) -> list[Attempt]:
    found: list[Attempt] = []
    by_uri: list[tuple[Attempt, bool, bool]] = []
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
        remote_xml = remote_outputs = False
        for output in result.get("testActionOutput", []):
            uri = output.get("uri", "")
            if output.get("name") == _OUTPUTS_EVENT_NAME:
                if uri.startswith("file://"):
                    outputs = urllib.parse.unquote(uri[len("file://") :])
                else:
                    remote_outputs = True
            if output.get("name") != "test.xml":
                continue
            if uri.startswith("file://"):
                xml = urllib.parse.unquote(uri[len("file://") :])
            else:
                remote_xml = True
        info = result.get("executionInfo", {})
        source = "executed"
        if result.get("cachedLocally"):
            source = "action cache"
        elif info.get("cachedRemotely"):
            source = "remote cache" if remote else "disk cache"
        found.append(
            Attempt(
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
        if remote_xml or remote_outputs:
            by_uri.append((found[-1], remote_xml, remote_outputs))
    # A test.xml named by a remote URI is read where Bazel downloaded it; that directory
    # depends on how many shards and runs the target has, known once every event is read.
    shards = _most(found, "shard")
    runs = _most(found, "run")
    for a, remote_xml, remote_outputs in by_uri:
        local = _local_testlogs(workspace, a.label, a.shard, a.run, shards[a.label], runs[a.label])
        if local and remote_xml:
            a.xml = os.path.join(local, "test.xml")
        if local and remote_outputs:
            a.outputs = os.path.join(local, "test.outputs", ARCHIVE_OUTPUTS)
    # The last attempt of each (shard, run) counts (flaky retries).
    last: dict[tuple[str, int, int], Attempt] = {}
    for attempt in found:
        key = (attempt.label, attempt.shard, attempt.run)
        if key not in last or attempt.attempt >= last[key].attempt:
            last[key] = attempt
    return list(last.values())


def shard_counts(attempts: list[Attempt]) -> dict[str, int]:
    """Shards (or runs) per label: more than one puts each attempt's files in its own folder."""
    shards, runs = _most(attempts, "shard"), _most(attempts, "run")
    return {label: max(shards[label], runs[label]) for label in shards}


def _summaries(events: list[dict]) -> dict[str, str]:
    return {
        e["id"]["testSummary"].get("label", ""): e.get("testSummary", {}).get("overallStatus", "")
        for e in events
        if "testSummary" in e.get("id", {})
    }


def target_tags(events: list[dict]) -> dict[str, list[str]]:
    """Each configured target's tags (the build events' targetConfigured), by label."""
    return {
        e["id"]["targetConfigured"].get("label", ""): list(e.get("configured", {}).get("tag", []))
        for e in events
        if "targetConfigured" in e.get("id", {})
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
    """Read a run archive directory or a build event JSON file (FileNotFoundError when there
    is none; ValueError for a run.json that is not JSON, or of a version this kit does not
    read)."""
    archive = os.path.isdir(path)
    bep = os.path.join(path, ARCHIVE_EVENTS) if archive else path
    if not os.path.isfile(bep):
        raise FileNotFoundError(f"{path}: no build event file ({ARCHIVE_EVENTS}) in it")
    events = read_events(bep)
    meta: dict[str, object] = _started_finished(events)
    runner = run_record.BAZEL
    if archive and os.path.isfile(os.path.join(path, ARCHIVE_META)):
        record = run_record.read(path)
        runner = str(record["runner"])
        meta.update(record)
    options = command_options(events)
    flags = run_identity.config_flags(options)
    if options:
        meta["selection_options"] = run_identity.selection_options(options)
    tags = target_tags(events)
    patterns = [p for e in events for p in e.get("id", {}).get("pattern", {}).get("pattern", [])]
    if patterns:
        meta["bep_patterns"] = patterns
    summaries = _summaries(events)
    attempts = attempts_of(events)
    shard_count = shard_counts(attempts)
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
            cases, props, suite_errors, producer = read_junit_full(xml)
        except (OSError, ET.ParseError) as err:
            target.errors.append(f"cannot read test.xml of {a.label}: {err}")
            continue
        target.cases.extend(cases)
        target.suite_properties.update(props)
        target.suite_errors.extend(suite_errors)
        if producer not in target.producers:
            target.producers.append(producer)
    for label, status in summaries.items():
        if label not in targets:  # no attempt ran: FAILED_TO_BUILD, NO_STATUS, ...
            targets[label] = TargetResult(label, status or "NO_STATUS", False, 0.0)
    for target in targets.values():
        target.cases = merge_runs(target.cases)
        target.tags = tags.get(target.label, [])
    return Run(path, targets, flags, run_identity.lane_of(flags), meta, runner)


# Of the runs of one case (`--runs_per_test`), the reader keeps one Case per case id (read_run),
# and the worst run stands for it in counts and cells: a failure in run 3 is not hidden by run 1
# passing. The order is total and static; an xfail that names no deviation is worse than a skip,
# a skip worse than an xfail naming one. Whether a named deviation lists the case, and whether a
# skip is allowed (not on a GPU runner), is the verdict's to judge: it judges every run
# (Case.runs()), so the order of the runs never decides.
_WORST_FIRST = ("failed", "xfailed-unnamed", "skipped", "xfailed", "disabled", "passed")


def run_rank(case: Case) -> int:
    """The place of one run's outcome in the order above (0 is the worst)."""
    if case.outcome == "xfailed" and not case.deviation:
        return _WORST_FIRST.index("xfailed-unnamed")
    return _WORST_FIRST.index(case.outcome)


def merge_runs(cases: list[Case]) -> list[Case]:
    """One case per (classname, name), in first-seen order: the worst of its runs (ties: the
    first), carrying the others in `other_runs`."""
    grouped: dict[tuple[str, str], list[Case]] = {}
    for case in cases:
        grouped.setdefault((case.classname, case.name), []).extend(case.runs())
    merged = []
    for runs in grouped.values():
        for run in runs:
            run.other_runs = []
        worst = min(runs, key=lambda c: (run_rank(c), c.message))
        worst.other_runs = [r for r in runs if r is not worst]
        merged.append(worst)
    return merged


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
    """Command line: print one run's targets and cases as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", help="a run archive directory or a build event JSON file")
    run = read_run(parser.parse_args(argv).run)
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
