"""The conformance report: which behaviours hold on which lane, target and exec mode.

    ./bazelw run //tools/report                          # every run in conformance-runs/
    ./bazelw run //tools/report -- conformance-runs/A conformance-runs/B

writes `conformance-report/` at the workspace root: report.md, report.html (self-contained, no
network) and report.json, and prints one summary line per lane:

    N behaviours: P hold, D deviations, F fail, S skipped on lane X

Inputs are run archives that `./bazelw test` writes (tools/testing/results.py). Runs of one
lane (`--//tools/config:lane`) merge into that lane (a later run's result of a target replaces
an earlier one); each lane x target x exec mode that ran is a column. Rows are the behaviours
of docs/conformance.md, grouped by seed; a cell is passed, failed, skipped (reason), deviation
(id), crashed (a deviation of kind crash) or not run. The lane header comes from the
JUnit properties of //tools/report:lane_info_test and the run's run.json. A lane whose run
archived an `exception_fidelity.json` test output gets an 'Exception fidelity' section; the
`overhead.json` of //benchmarks:overhead_ratio_test becomes one 'FFI and VM overhead' table
with a column per lane.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import html
import json
import os
import re
import sys
from dataclasses import dataclass, field

import conformance_check
import results

LANE_INFO_LABEL = "//tools/report:lane_info_test"
# A JSON table a test writes into its undeclared outputs ({"title", "rows": [...]}); shown as
# a section per lane (//python/tests/robustness:exception_fidelity_test writes it).
FIDELITY_OUTPUT = "exception_fidelity.json"
# ns per call beside an in-process floor ({"rows": [{"case", "ns", "floor", "floor_ns",
# "ratio"}]}), written by //benchmarks:overhead_ratio_test.
OVERHEAD_OUTPUT = "overhead.json"
FIDELITY_COLUMNS = (
    ("case", "case"),
    ("crossing", "crossing"),
    ("caught", "arrives as"),
    ("type_kept", "type kept"),
    ("args_kept", "args kept"),
    ("picklable", "picklable"),
    ("attribute_kept", "attribute kept"),
)
# Worst first: a cell with several cases shows the worst.
CELL_ORDER = ("failed", "crashed", "deviation", "skipped", "passed", "not run")
CELL_COLOURS = {
    "passed": "#c8f0c8",
    "failed": "#f6b3b3",
    "crashed": "#e39be3",
    "deviation": "#f8e3a3",
    "skipped": "#dde3ea",
    "not run": "#ffffff",
}


@dataclass
class Cell:
    """One behaviour in one column."""

    status: str = "not run"
    detail: str = ""  # skip reason, deviation id, failure message

    def merge(self, other: Cell) -> Cell:
        """The worse of two cells (CELL_ORDER)."""
        if CELL_ORDER.index(other.status) < CELL_ORDER.index(self.status):
            return other
        return self


@dataclass
class Lane:
    """Runs of one lane merged."""

    name: str
    runs: list[results.Run] = field(default_factory=list)
    targets: dict[str, results.TargetResult] = field(default_factory=dict)

    def info(self) -> dict[str, str]:
        """lane_info_test's properties, plus what the runs' run.json record."""
        info: dict[str, str] = {}
        lane_info = self.targets.get(LANE_INFO_LABEL)
        if lane_info is not None:
            info.update(lane_info.suite_properties)
        configs = sorted(
            {a for r in self.runs for a in r.meta.get("bazel_args", []) if a.startswith("--config")}
        )
        info["bazel_configs"] = " ".join(configs) or "(default)"
        starts = [float(r.meta["start"]) for r in self.runs if r.meta.get("start")]
        if starts:
            info["date"] = datetime.datetime.fromtimestamp(
                max(starts), datetime.timezone.utc
            ).strftime("%Y-%m-%d %H:%M UTC")
        venv = info.get("venv_info")
        if venv:
            try:
                for key, value in json.loads(venv).items():
                    if "sha256" in key or "wheel" in key:
                        info[key] = json.dumps(value) if not isinstance(value, str) else value
            except json.JSONDecodeError:
                pass
        return info

    def wall_s(self) -> float:
        """Sum of the runs' wall times (run.json)."""
        return sum(float(r.meta.get("wall_s", 0.0)) for r in self.runs)

    def case_count(self) -> int:
        """Test cases over the merged targets."""
        return sum(len(t.cases) for t in self.targets.values())


def merge_lanes(runs: list[results.Run]) -> dict[str, Lane]:
    """Runs grouped by lane, in start order; later results of a target replace earlier ones."""
    lanes: dict[str, Lane] = {}
    for run in sorted(runs, key=lambda r: float(r.meta.get("start", 0.0))):
        lane = lanes.setdefault(run.lane, Lane(run.lane))
        lane.runs.append(run)
        lane.targets.update(run.targets)
    return lanes


def parse_deviations_table(markdown: str) -> dict[str, dict[str, str]]:
    """Every column of docs/deviations.md's rows, by deviation id."""
    table: dict[str, dict[str, str]] = {}
    header: list[str] = []
    for line in markdown.splitlines():
        line = line.strip()
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip("|"))]
        if cells and cells[0] == "id":
            header = cells
        elif header and cells[0].startswith("`"):
            table[cells[0].strip("`")] = dict(zip(header, cells, strict=False))
    return table


def column_of(label: str, case: results.Case) -> tuple[str, str]:
    """(target, exec mode) of a case: its JUnit properties, else the label's variant suffix."""
    target = case.properties.get("tvm_target") or ""
    if not target:
        suffix = conformance_check.variant_suffix(label)
        target = suffix if suffix and suffix != conformance_check.INDEPENDENT_SUFFIX else "any"
    return target, case.properties.get("exec_mode") or "any"


def cell_of(case: results.Case, kinds: dict[str, str]) -> Cell:
    """The cell a case gives."""
    if case.outcome == "passed":
        return Cell("passed")
    if case.outcome == "xfailed" and case.deviation in kinds:
        status = "crashed" if kinds[case.deviation] == "crash" else "deviation"
        return Cell(status, case.deviation)
    if case.outcome in ("skipped", "disabled"):
        return Cell("skipped", case.message)
    if case.xpass_strict:
        return Cell("failed", f"XPASS: deviation {case.deviation} no longer occurs")
    if case.outcome == "xfailed":
        return Cell("failed", f"xfail naming no listed deviation: {case.message}")
    return Cell("failed", case.message.splitlines()[0][:200] if case.message else "failed")


@dataclass
class Behaviour:
    """One row of the conformance map and the tests it names."""

    seed: str
    text: str
    kit: bool
    tests: list[tuple[str, str]] = field(default_factory=list)


def behaviours(rows: list[conformance_check.Row]) -> list[Behaviour]:
    """Rows merged by (seed, behaviour), in document order."""
    found: dict[tuple[str, str], Behaviour] = {}
    for row in rows:
        key = (row.seed, row.behaviour)
        found.setdefault(key, Behaviour(row.seed, row.behaviour, row.kit)).tests.append(
            (row.label, row.case)
        )
    return list(found.values())


def build(
    runs: list[results.Run],
    rows: list[conformance_check.Row],
    deviations: dict[str, dict[str, str]],
) -> dict:
    """The report as a JSON-able dict: lanes, columns, matrix, deviations, skips, summaries."""
    kinds = {dev_id: d.get("kind", "deviation") for dev_id, d in deviations.items()}
    lanes = merge_lanes(runs)
    items = behaviours(rows)
    columns: list[tuple[str, str, str]] = []
    for lane in lanes.values():
        cols = set()
        for label, target in lane.targets.items():
            cols.update(column_of(label, case) for case in target.cases)
        columns += [(lane.name, t, m) for t, m in sorted(cols)]
    matrix = []
    summaries = {}
    for lane in lanes.values():
        counts = {False: collections.Counter(), True: collections.Counter()}
        for item in items:
            overall = Cell()
            for label, case_id in item.tests:
                target = lane.targets.get(label)
                if target is None:
                    continue
                case = target.case(case_id)
                if case is None:
                    overall = overall.merge(
                        Cell("failed", "case missing from its target's results")
                    )
                    continue
                overall = overall.merge(cell_of(case, kinds))
            key = {"passed": "hold", "deviation": "deviation", "crashed": "deviation"}.get(
                overall.status, overall.status
            )
            counts[item.kit][key] += 1
        summaries[lane.name] = {
            kit: {
                "behaviours": sum(c.values()),
                "hold": c["hold"],
                "deviations": c["deviation"],
                "fail": c["failed"],
                "skipped": c["skipped"],
                "not_run": c["not run"],
            }
            for kit, c in (("tvm", counts[False]), ("kit", counts[True]))
        }
    for item in items:
        cells: dict[tuple[str, str, str], Cell] = {}
        for lane in lanes.values():
            for label, case_id in item.tests:
                target = lane.targets.get(label)
                if target is None:
                    continue
                case = target.case(case_id)
                if case is None:
                    suffix = conformance_check.variant_suffix(label)
                    key = (
                        lane.name,
                        suffix if suffix in conformance_check.TARGET_SUFFIXES else "any",
                        "any",
                    )
                    cell = Cell("failed", "case missing from its target's results")
                else:
                    key = (lane.name, *column_of(label, case))
                    cell = cell_of(case, kinds)
                if key not in columns:
                    columns.append(key)
                cells[key] = cells.get(key, Cell()).merge(cell)
        matrix.append(
            {
                "seed": item.seed,
                "behaviour": item.text,
                "kit": item.kit,
                "tests": [f"{label} :: {case}" for label, case in item.tests],
                "cells": {"|".join(k): vars(c) for k, c in cells.items()},
            }
        )
    lane_reports = {}
    for lane in lanes.values():
        fidelity = _output_rows(lane, FIDELITY_OUTPUT)
        overhead = _output_rows(lane, OVERHEAD_OUTPUT)
        seen: dict[str, list[str]] = {}
        skips: collections.Counter[str] = collections.Counter()
        for label in sorted(lane.targets):
            for case in lane.targets[label].cases:
                if case.outcome == "xfailed" and case.deviation:
                    seen.setdefault(case.deviation, []).append(f"{label} :: {case.name}")
                if case.outcome in ("skipped", "disabled"):
                    skips[case.message] += 1
        lane_reports[lane.name] = {
            "info": lane.info(),
            "runs": [r.source for r in lane.runs],
            "wall_s": round(lane.wall_s(), 1),
            "cases": lane.case_count(),
            "targets": len(lane.targets),
            "deviations": {
                dev_id: {
                    "listed": dev_id in deviations,
                    "kind": kinds.get(dev_id, "unlisted"),
                    "expected": deviations.get(dev_id, {}).get("expected (seed / upstream)", ""),
                    "actual": deviations.get(dev_id, {}).get("what TVM does", ""),
                    "cases": cases,
                }
                for dev_id, cases in sorted(seen.items())
            },
            "skips": dict(skips.most_common()),
            "exception_fidelity": fidelity,
            "overhead": overhead,
            "summary": summaries[lane.name],
            "summary_line": summary_line(lane.name, summaries[lane.name]["tvm"]),
        }
    return {
        "generated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "lanes": lane_reports,
        "columns": ["|".join(c) for c in columns],
        "matrix": matrix,
    }


def _output_rows(lane: Lane, name: str) -> list[dict]:
    """The `rows` of the JSON table `name` that a target of the lane wrote, or []."""
    rows: list[dict] = []
    for label in sorted(lane.targets):
        table = lane.targets[label].output_json(name)
        if isinstance(table, dict) and isinstance(table.get("rows"), list):
            rows = table["rows"]
    return rows


def overhead_table(report: dict) -> tuple[list[str], list[list[str]]]:
    """Lanes that measured the overhead, and a row per case: case, floor, `ns (ratio x)` each."""
    lanes = [name for name, lane in report["lanes"].items() if lane.get("overhead")]
    cases: dict[tuple[str, str], dict[str, str]] = {}
    for name in lanes:
        for row in report["lanes"][name]["overhead"]:
            key = (str(row.get("case", "?")), str(row.get("floor", "?")))
            cases.setdefault(key, {})[name] = (
                f"{float(row.get('ns', 0)):.0f} ({float(row.get('ratio', 0)):.2f}x)"
            )
    rows = [
        [case, floor] + [by_lane.get(n, "") for n in lanes]
        for (case, floor), by_lane in cases.items()
    ]
    return lanes, rows


def summary_line(lane: str, s: dict[str, int]) -> str:
    """`N behaviours: P hold, D deviations, F fail, S skipped on lane X` (+ not run)."""
    line = (
        f"{s['behaviours']} behaviours: {s['hold']} hold, {s['deviations']} deviations, "
        f"{s['fail']} fail, {s['skipped']} skipped on lane {lane}"
    )
    return line + (f" ({s['not_run']} not run)" if s["not_run"] else "")


def _cell_text(cell: dict) -> str:
    status, detail = cell["status"], cell.get("detail", "")
    if status in ("deviation", "crashed"):
        return f"{status} ({detail})"
    if status in ("skipped", "failed") and detail:
        return f"{status}: {detail}"
    return status


def _md(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _fidelity_value(row: dict, key: str) -> str:
    value = row.get(key, "")
    text = ("yes" if value else "NO") if isinstance(value, bool) else str(value)
    if key == "attribute_kept" and "attribute" in row:
        return f"{row['attribute']}: {text}"
    return text


OVERHEAD_NOTE = (
    "ns per call (ratio to a floor timed in the same process), from "
    "//benchmarks:overhead_ratio_test; compare ratios across machines, not ns."
)


def render_md(report: dict) -> str:
    """report.md."""
    out = ["# TVM conformance report", "", f"Generated {report['generated']}.", ""]
    for name, lane in report["lanes"].items():
        out += [f"## Lane {name}", "", "| | |", "|---|---|"]
        out += [f"| {_md(k)} | {_md(v)} |" for k, v in sorted(lane["info"].items())]
        out += [
            f"| wall time | {lane['wall_s']} s |",
            f"| test cases | {lane['cases']} in {lane['targets']} targets |",
            "",
            f"**{lane['summary_line']}**",
            f"(kit self-tests: {summary_line(name, lane['summary']['kit'])})",
            "",
        ]
    out += ["## Matrix", ""]
    cols = report["columns"]
    header = ["seed", "behaviour"] + [c.replace("|", " / ") for c in cols]
    out += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in report["matrix"]:
        cells = [_md(_cell_text(row["cells"].get(c, {"status": "not run"}))) for c in cols]
        out.append(f"| {row['seed']} | {_md(row['behaviour'])} | " + " | ".join(cells) + " |")
    out.append("")
    overhead_lanes, overhead_rows = overhead_table(report)
    if overhead_lanes:
        out += ["## FFI and VM overhead", "", OVERHEAD_NOTE, ""]
        header = ["case", "floor"] + [f"lane {n}" for n in overhead_lanes]
        out += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(_md(c) for c in row) + " |" for row in overhead_rows]
        out.append("")
    for name, lane in report["lanes"].items():
        out += [f"## Known deviations on lane {name}", ""]
        if not lane["deviations"]:
            out += ["None seen.", ""]
        else:
            out += ["| id | kind | expected | what TVM does | cases |", "|---|---|---|---|---|"]
            for dev_id, d in lane["deviations"].items():
                out.append(
                    f"| `{dev_id}` | {d['kind']} | {_md(d['expected'])} | {_md(d['actual'])} | "
                    f"{len(d['cases'])} |"
                )
            out.append("")
        out += [f"## Skips on lane {name}", ""]
        if not lane["skips"]:
            out += ["None.", ""]
        else:
            out += ["| cases | reason |", "|---|---|"]
            out += [f"| {n} | {_md(reason)} |" for reason, n in lane["skips"].items()]
            out.append("")
        if lane.get("exception_fidelity"):
            out += [f"## Exception fidelity on lane {name}", ""]
            out += ["| " + " | ".join(h for _, h in FIDELITY_COLUMNS) + " |"]
            out += ["|" + "---|" * len(FIDELITY_COLUMNS)]
            for row in lane["exception_fidelity"]:
                values = [_md(_fidelity_value(row, k)) for k, _ in FIDELITY_COLUMNS]
                out.append("| " + " | ".join(values) + " |")
            out.append("")
    return "\n".join(out)


def render_html(report: dict) -> str:
    """report.html: one file, inline CSS, no scripts or network."""
    e = html.escape
    style = "".join(
        f"td.s-{k.replace(' ', '-')}{{background:{v}}}" for k, v in CELL_COLOURS.items()
    )
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<title>TVM conformance report</title><style>",
        "body{font-family:sans-serif;margin:1.5em;color:#111}"
        "table{border-collapse:collapse;margin:0.5em 0 1.5em}"
        "td,th{border:1px solid #999;padding:3px 6px;font-size:13px;vertical-align:top}"
        "th{background:#eef}tr.seed th{background:#dde;text-align:left}"
        "p.summary{font-weight:bold}" + style,
        "</style></head><body><h1>TVM conformance report</h1>",
        f"<p>Generated {e(report['generated'])}.</p>",
    ]
    for name, lane in report["lanes"].items():
        parts.append(f"<h2>Lane {e(name)}</h2><table>")
        for key, value in sorted(lane["info"].items()):
            parts.append(f"<tr><th>{e(key)}</th><td>{e(str(value))}</td></tr>")
        parts.append(
            f"<tr><th>wall time</th><td>{lane['wall_s']} s</td></tr>"
            f"<tr><th>test cases</th><td>{lane['cases']} in {lane['targets']} targets</td></tr>"
            f"</table><p class='summary'>{e(lane['summary_line'])}</p>"
        )
    cols = report["columns"]
    parts.append("<h2>Matrix</h2><table><tr><th>seed</th><th>behaviour</th>")
    for col in cols:
        lane, target, mode = col.split("|")
        parts.append(f"<th>{e(lane)}<br>{e(target)}<br>{e(mode)}</th>")
    parts.append("</tr>")
    seed = None
    for row in report["matrix"]:
        if row["seed"] != seed:
            seed = row["seed"]
            parts.append(f"<tr class='seed'><th colspan='{len(cols) + 2}'>seed {e(seed)}</th></tr>")
        parts.append(
            f"<tr><td>{e(row['seed'])}</td><td title='{e('; '.join(row['tests']))}'>"
            f"{e(row['behaviour'])}</td>"
        )
        for col in cols:
            cell = row["cells"].get(col, {"status": "not run"})
            cls = "s-" + cell["status"].replace(" ", "-")
            parts.append(f"<td class='{cls}'>{e(_cell_text(cell))}</td>")
        parts.append("</tr>")
    parts.append("</table>")
    overhead_lanes, overhead_rows = overhead_table(report)
    if overhead_lanes:
        parts.append(f"<h2>FFI and VM overhead</h2><p>{e(OVERHEAD_NOTE)}</p><table><tr>")
        parts += [f"<th>{e(h)}</th>" for h in ["case", "floor"]]
        parts += [f"<th>lane {e(n)}</th>" for n in overhead_lanes]
        parts.append("</tr>")
        for row in overhead_rows:
            parts.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>")
        parts.append("</table>")
    for name, lane in report["lanes"].items():
        parts.append(f"<h2>Known deviations on lane {e(name)}</h2>")
        if lane["deviations"]:
            parts.append(
                "<table><tr><th>id</th><th>kind</th><th>expected</th><th>what TVM does"
                "</th><th>cases</th></tr>"
            )
            for dev_id, d in lane["deviations"].items():
                parts.append(
                    f"<tr><td>{e(dev_id)}</td><td>{e(d['kind'])}</td><td>{e(d['expected'])}</td>"
                    f"<td>{e(d['actual'])}</td><td>{len(d['cases'])}</td></tr>"
                )
            parts.append("</table>")
        else:
            parts.append("<p>None seen.</p>")
        parts.append(f"<h2>Skips on lane {e(name)}</h2>")
        if lane["skips"]:
            parts.append("<table><tr><th>cases</th><th>reason</th></tr>")
            parts += [f"<tr><td>{n}</td><td>{e(r)}</td></tr>" for r, n in lane["skips"].items()]
            parts.append("</table>")
        else:
            parts.append("<p>None.</p>")
        if lane.get("exception_fidelity"):
            parts.append(f"<h2>Exception fidelity on lane {e(name)}</h2><table><tr>")
            parts += [f"<th>{e(h)}</th>" for _, h in FIDELITY_COLUMNS]
            parts.append("</tr>")
            for row in lane["exception_fidelity"]:
                parts.append("<tr>")
                parts += [f"<td>{e(_fidelity_value(row, k))}</td>" for k, _ in FIDELITY_COLUMNS]
                parts.append("</tr>")
            parts.append("</table>")
    parts.append("</body></html>\n")
    return "".join(parts)


def write(report: dict, out_dir: str) -> None:
    """report.md, report.html and report.json into `out_dir`."""
    os.makedirs(out_dir, exist_ok=True)
    for name, text in (
        ("report.md", render_md(report)),
        ("report.html", render_html(report)),
        ("report.json", json.dumps(report, indent=1, sort_keys=True) + "\n"),
    ):
        with open(os.path.join(out_dir, name), "w", encoding="utf-8") as stream:
            stream.write(text)


def main(argv: list[str] | None = None) -> int:
    """Command line: build the report from run archives."""
    workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY") or os.getcwd()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "runs", nargs="*", help="run archives or directories of them (default conformance-runs/)"
    )
    parser.add_argument("--conformance", default=os.path.join(workspace, "docs", "conformance.md"))
    parser.add_argument("--deviations", default=os.path.join(workspace, "docs", "deviations.md"))
    parser.add_argument("--out", default=os.path.join(workspace, "conformance-report"))
    args = parser.parse_args(argv)
    paths = [p if os.path.isabs(p) else os.path.join(workspace, p) for p in args.runs] or [
        os.path.join(workspace, "conformance-runs")
    ]
    try:
        run_dirs = [d for p in paths for d in results.runs_in(p)]
    except FileNotFoundError as err:
        print(f"report: {err}; run ./bazelw test first", file=sys.stderr)
        return 1
    if not run_dirs:
        print(
            f"report: no run archives in {', '.join(paths)}; run ./bazelw test first",
            file=sys.stderr,
        )
        return 1
    runs = [results.read_run(d) for d in run_dirs]
    with open(args.conformance, encoding="utf-8") as stream:
        rows = conformance_check.parse_rows(stream.read())
    with open(args.deviations, encoding="utf-8") as stream:
        deviations = parse_deviations_table(stream.read())
    report = build(runs, rows, deviations)
    write(report, args.out)
    print(f"report: {len(runs)} run(s), {len(report['lanes'])} lane(s) -> {args.out}")
    for lane in report["lanes"].values():
        print(lane["summary_line"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
