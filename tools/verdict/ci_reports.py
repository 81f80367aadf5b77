"""A run's results in the formats CI systems parse, made from its run record alone.

verdict.py (`--record`, which ./bazelw passes) and the GPU runner write them into the run
archive beside run.json, from the record that holds the verdict, so every file tells the same
verdict:

    junit.xml   one merged JUnit XML: each case `<target> :: <case>` once; xfails (deviations)
                are skipped with the deviation id as a property; one `verdict` case fails with
                every problem when the verdict is FAIL. Kept under GitLab's 30 MB per file:
                over it, messages are cut short and passed cases left out (properties say how
                many); run.json keeps every case.
    ctrf.json   a CTRF report (Common Test Report Format), with the same failing `verdict` test
                when the verdict is FAIL: status passed/failed/skipped/
                pending/other, duration in ms, the kit's outcome in `rawStatus`.
    summary.md  Markdown under 1 MiB for $GITHUB_STEP_SUMMARY: the verdict, counts, problems.

Standard library only.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from typing import Any

JUNIT_FILE = "junit.xml"
CTRF_FILE = "ctrf.json"
SUMMARY_FILE = "summary.md"
# GitLab refuses a JUnit report file over 30 MB; GitHub's step summary takes 1 MiB.
JUNIT_MAX_BYTES = 30 * 1000 * 1000
SUMMARY_MAX_BYTES = 1024 * 1024
# CTRF's spec version this report follows, and its five statuses.
CTRF_SPEC_VERSION = "0.0.0"
CTRF_STATUSES = ("passed", "failed", "skipped", "pending", "other")
# The kit's case outcomes in CTRF's terms: an xfail (a recorded deviation) and a googletest
# DISABLED_ case did not run to a pass or a failure of their own, so they are skipped.
CTRF_STATUS = {
    "passed": "passed",
    "failed": "failed",
    "skipped": "skipped",
    "xfailed": "skipped",
    "disabled": "skipped",
}
TOOL_NAME = "tvm_conformance"
DEVIATION_PROPERTY = "tvm_deviation"
FIXED_PROPERTY = "tvm_fixed_deviation"
# Characters of a message in the JUnit file: in full, then when over the size limit.
MESSAGE_CHARS, SHORT_MESSAGE_CHARS = 4000, 200


def _verdict(record: dict[str, Any]) -> dict[str, Any]:
    found = record.get("verdict")
    if not isinstance(found, dict):
        raise ValueError("the run record holds no verdict (verdict.py --record writes it)")
    return found


def _name(case: dict[str, Any]) -> str:
    return f"{case['target']} :: {case['case']}"


def _unique_names(cases: list[dict[str, Any]]) -> list[str]:
    """`target :: case` per case; a repeated one (two classnames, one name) gets ` (2)`."""
    seen: dict[str, int] = {}
    names = []
    for case in cases:
        name = _name(case)
        seen[name] = seen.get(name, 0) + 1
        names.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return names


def _properties(parent: ET.Element, props: dict[str, str]) -> None:
    if props:
        node = ET.SubElement(parent, "properties")
        for key in sorted(props):
            ET.SubElement(node, "property", name=key, value=str(props[key]))


def junit_tree(record: dict[str, Any], short: bool = False) -> ET.ElementTree:
    """The merged JUnit XML of a record (`short`: messages cut, passed cases left out)."""
    verdict = _verdict(record)
    cases = verdict["cases"]
    limit = SHORT_MESSAGE_CHARS if short else MESSAGE_CHARS
    root = ET.Element("testsuites", name=TOOL_NAME)
    suite = ET.SubElement(root, "testsuite", name=TOOL_NAME)
    # The suite's properties come first, as JUnit readers expect; filled in at the end.
    suite_props = ET.SubElement(suite, "properties")
    props = {
        "tvm_verdict": verdict["status"],
        "tvm_verdict_line": verdict["line"],
        "tvm_identity_key": verdict["identity_key"],
    }
    left_out = 0
    counts = {"tests": 0, "failures": 0, "skipped": 0}
    total_s = 0.0
    for name, case in zip(_unique_names(cases), cases, strict=True):
        if short and case["outcome"] == "passed" and not case["fixed"]:
            left_out += 1
            continue
        own = dict(case["properties"])
        if case["deviation"]:
            own[FIXED_PROPERTY if case["fixed"] else DEVIATION_PROPERTY] = case["deviation"]
        node = ET.SubElement(
            suite, "testcase", name=name, classname=case["target"], time=f"{case['time_s']:.3f}"
        )
        _properties(node, own)
        counts["tests"] += 1
        total_s += float(case["time_s"])
        text = str(case.get("message") or case.get("skip_reason") or "")[:limit]
        if case["outcome"] == "failed" and not case["fixed"]:
            ET.SubElement(node, "failure", message=text[:SHORT_MESSAGE_CHARS]).text = text
            counts["failures"] += 1
        elif case["outcome"] in ("skipped", "xfailed", "disabled"):
            kind = "xfail" if case["outcome"] == "xfailed" else case["outcome"]
            ET.SubElement(node, "skipped", type=kind, message=text)
            counts["skipped"] += 1
    # The verdict itself: a case that fails with every problem, so a job that reads JUnit alone
    # sees a FAIL that no case shows (a timeout, a target that did not build, a partial run).
    node = ET.SubElement(suite, "testcase", name="verdict", classname=TOOL_NAME, time="0.000")
    counts["tests"] += 1
    if verdict["status"] == "FAIL":
        lines = [p["text"][:limit] for p in verdict["problems"]]
        ET.SubElement(node, "failure", message=verdict["line"][:limit]).text = "\n".join(lines)
        counts["failures"] += 1
    if left_out:
        props["tvm_passed_cases_left_out"] = str(left_out)
        props["tvm_left_out_why"] = f"over {JUNIT_MAX_BYTES} bytes; run.json has every case"
    for key in sorted(props):
        ET.SubElement(suite_props, "property", name=key, value=props[key])
    for node_, attrs in ((suite, counts), (root, counts)):
        for key, value in attrs.items():
            node_.set(key, str(value))
        node_.set("errors", "0")
        node_.set("time", f"{total_s:.3f}")
    return ET.ElementTree(root)


def junit_bytes(record: dict[str, Any]) -> bytes:
    """The merged JUnit XML, under JUNIT_MAX_BYTES: in full, else messages cut and passed
    cases left out; ValueError when even that is over (the record then stands alone)."""
    for short in (False, True):
        tree = junit_tree(record, short)
        ET.indent(tree)
        data = ET.tostring(tree.getroot(), encoding="utf-8", xml_declaration=True)
        if len(data) <= JUNIT_MAX_BYTES:
            return data
    raise ValueError(f"{JUNIT_FILE} would be over {JUNIT_MAX_BYTES} bytes even when cut short")


def ctrf(record: dict[str, Any]) -> dict[str, Any]:
    """The CTRF report of a record."""
    verdict = _verdict(record)
    tests = []
    summary = {status: 0 for status in CTRF_STATUSES}
    for name, case in zip(_unique_names(verdict["cases"]), verdict["cases"], strict=True):
        status = "passed" if case["fixed"] else CTRF_STATUS.get(case["outcome"], "other")
        summary[status] += 1
        test: dict[str, Any] = {
            "name": name,
            "status": status,
            "duration": int(round(float(case["time_s"]) * 1000)),
            "rawStatus": "xpassed (fixed deviation)" if case["fixed"] else case["outcome"],
            "suite": [case["target"]],
        }
        message = case.get("message") or case.get("skip_reason")
        if message:
            test["message"] = str(message)
        labels: dict[str, Any] = {"target": case["target"]}
        if case["deviation"]:
            labels["deviation"] = case["deviation"]
        test["labels"] = labels
        tests.append(test)
    # The verdict itself, as in junit.xml: a test that fails with every problem, so a reader of
    # CTRF alone (its summary's `failed`) sees a FAIL that no case shows (a target whose every
    # case skipped, a timeout, a partial run refused).
    failed = verdict["status"] == "FAIL"
    summary["failed" if failed else "passed"] += 1
    verdict_test: dict[str, Any] = {
        "name": "verdict",
        "status": "failed" if failed else "passed",
        "duration": 0,
        "rawStatus": verdict["status"],
        "suite": [TOOL_NAME],
        "labels": {"problems": len(verdict["problems"])},
    }
    if failed:
        verdict_test["message"] = verdict["line"]
        verdict_test["trace"] = "\n".join(p["text"] for p in verdict["problems"])
    tests.append(verdict_test)
    start_ms = int(float(record["start"]) * 1000)
    stop_ms = int(float(record["end"]) * 1000)
    return {
        "reportFormat": "CTRF",
        "specVersion": CTRF_SPEC_VERSION,
        "generatedBy": TOOL_NAME,
        "results": {
            "tool": {"name": TOOL_NAME},
            "summary": {
                "tests": len(tests),
                **summary,
                "start": start_ms,
                "stop": stop_ms,
                "duration": max(0, stop_ms - start_ms),
            },
            "tests": tests,
        },
        "extra": {
            "verdict": verdict["status"],
            "verdict_line": verdict["line"],
            "partial_why": verdict["partial_why"],
            "problems": len(verdict["problems"]),
            "identity_key": verdict["identity_key"],
        },
    }


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def summary_markdown(record: dict[str, Any], most_problems: int = 200) -> str:
    """The job summary: verdict, identity, counts, problems (by whose), partial, skips."""
    verdict = _verdict(record)
    ident = verdict["identity"]
    lines = [f"## tvm_conformance: {verdict['status']}", "", f"`{verdict['line']}`", ""]
    tvm = ident.get("tvm") if isinstance(ident.get("tvm"), dict) else {}
    ffi = ident.get("tvm_ffi") if isinstance(ident.get("tvm_ffi"), dict) else {}
    lines += [
        f"- runner: {record.get('runner')}, lane `{ident.get('lane', record.get('lane'))}`, "
        f"config `{record.get('config')}`",
        f"- TVM {tvm.get('version', '?')}, tvm-ffi {ffi.get('version', '?')}",
        f"- Bazel exit {verdict['exit_code']}",
    ]
    if verdict["partial"]:
        lines.append("- **partial**: " + _cell("; ".join(verdict["partial_why"])))
    counts = verdict["counts"]
    lines += ["", "| cases | " + " | ".join(counts["cases"]) + " |"]
    lines += ["|---|" + "---|" * len(counts["cases"])]
    lines += ["| | " + " | ".join(str(n) for n in counts["cases"].values()) + " |", ""]
    targets = ", ".join(f"{n} {s}" for s, n in sorted(counts["targets"].items()))
    lines += [f"Targets: {targets or 'none'}.", ""]
    problems = verdict["problems"]
    if problems:
        lines += [f"### {len(problems)} problems", "", "| whose | kind | where | message |"]
        lines += ["|---|---|---|---|"]
        for p in problems[:most_problems]:
            where = p["target"] + (f" :: {p['case']}" if p["case"] else "")
            lines.append(
                f"| {p['whose']} | {_cell(p['kind'])} | {_cell(where)} | "
                f"{_cell(p['message'][:300])} |"
            )
        if len(problems) > most_problems:
            lines.append(f"\n{len(problems) - most_problems} more problems: see run.json.")
        lines.append("")
    if verdict["fixed"]:
        lines += ["Deviations this TVM fixed: " + ", ".join(sorted(verdict["fixed"])), ""]
    reasons = sorted(verdict["skip_reasons"].items(), key=lambda kv: -kv[1])[:10]
    if reasons:
        lines += ["### Skip reasons", ""]
        lines += [f"- {n}: {_cell(r[:200])}" for r, n in reasons]
        lines.append("")
    return "\n".join(lines)


def summary_bytes(record: dict[str, Any]) -> bytes:
    """summary.md under SUMMARY_MAX_BYTES (fewer problems listed until it fits)."""
    most = 200
    while True:
        data = summary_markdown(record, most).encode("utf-8")
        if len(data) <= SUMMARY_MAX_BYTES or most == 0:
            return data[:SUMMARY_MAX_BYTES]
        most //= 2


def write_all(run_dir: str, record: dict[str, Any]) -> dict[str, int]:
    """Write junit.xml, ctrf.json and summary.md of `record` into `run_dir`; {file: bytes}."""
    files = {
        JUNIT_FILE: junit_bytes(record),
        CTRF_FILE: (json.dumps(ctrf(record), indent=1) + "\n").encode("utf-8"),
        SUMMARY_FILE: summary_bytes(record),
    }
    for name, data in files.items():
        with open(os.path.join(run_dir, name), "wb") as stream:
            stream.write(data)
    return {name: len(data) for name, data in files.items()}
