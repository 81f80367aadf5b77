"""The conformance report: which behaviours hold for each TVM build, config and machine tested.

    ./bazelw run //tools/report                          # newest run per identity and config
    ./bazelw run //tools/report -- conformance-runs/A conformance-runs/B   # exactly these runs
    ./bazelw run //tools/report -- --all                 # every archived run, one column each

writes `conformance-report/` at the workspace root: report.md, report.html (self-contained, no
network) and report.json, prints each column's verdict line and summary line

    verdict: PASS|FAIL (<identity>): T targets (...), C cases (...), bazel exit N, P problems
    N behaviours: P hold, D deviations, F fail, S skipped on <column>

and exits 1 when any column's verdict is FAIL (results.verdict(), the same function as
`./bazelw test` and the conformance check).

A column is one run. Runs are never merged: by default the newest run of each identity
(lane + the sha256 of the TVM and tvm-ffi wheels its venv installed, from run.json) and config
(cpu, cuda, cuda_gpu, +asan/+ubsan) is shown, so a user's wheel is its own column and a run of
another wheel can never relabel one. Each column's header is what ./bazelw recorded in that
run's archive: the identity, the machine, and where the results came from (executed here, the
action cache, the disk cache or a remote cache). Rows are the behaviours of docs/conformance.md
(labels only: the verdict counts every case); a cell aggregates the row's cases over targets
and exec modes ("2/2", a deviation id, "crashed", "1/2 failed"), details on hover. A section
lists the rows whose outcome differs between columns, and each column is compared with the
previous run of the same identity and config (added, fixed, newly failing, changed).
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import sys
from dataclasses import dataclass, field

import conformance_check
import render
import results

# A JSON table a test writes into its undeclared outputs ({"title", "rows": [...]}); shown as
# a section per column (//python/tests/robustness:exception_fidelity_test writes it).
FIDELITY_OUTPUT = "exception_fidelity.json"
# ns per call beside an in-process floor ({"rows": [{"case", "ns", "floor", "floor_ns",
# "ratio"}]}), written by //benchmarks:overhead_ratio_test.
OVERHEAD_OUTPUT = "overhead.json"
# Cell statuses, worst first: a cell over several cases shows the worst.
CELL_ORDER = ("failed", "crashed", "deviation", "skipped", "passed", "not run")
# A behaviour's summary key per cell status.
SUMMARY_KEY = {"passed": "hold", "deviation": "deviation", "crashed": "deviation"}


@dataclass
class Outcome:
    """One case of a row in one column."""

    test: str  # `//pkg:target :: case`
    target: str  # tvm_target (llvm, cuda) or "any"
    mode: str  # exec_mode or "any"
    status: str  # CELL_ORDER
    detail: str = ""
    deviation: str = ""


@dataclass
class Cell:
    """A behaviour in one column: its cases' outcomes aggregated."""

    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def status(self) -> str:
        """The worst status of its cases; `not run` when none ran."""
        statuses = [o.status for o in self.outcomes] or ["not run"]
        return min(statuses, key=CELL_ORDER.index)

    def text(self) -> str:
        """What the cell says at a glance."""
        status = self.status
        ran = [o for o in self.outcomes if o.status != "not run"]
        if status == "passed":
            return f"{len(ran)}/{len(ran)}"
        if status in ("deviation", "crashed"):
            ids = sorted({o.deviation for o in ran if o.status == status})
            return ("crashed: " if status == "crashed" else "") + ", ".join(ids)
        if status == "failed":
            bad = sum(o.status == "failed" for o in ran)
            return f"{bad}/{len(ran)} failed"
        if status == "skipped":
            return "skipped"
        return "not run"

    def key(self) -> str:
        """The outcome compared between columns: status and deviation ids, not counts."""
        status = self.status
        if status in ("deviation", "crashed"):
            return self.text()
        return status

    def to_json(self) -> dict[str, object]:
        """The cell in report.json."""
        return {
            "status": self.status,
            "text": self.text(),
            "outcomes": [vars(o) for o in self.outcomes],
        }


def outcome_of(
    label: str, case_id: str, run: results.Run, registry: results.Registry
) -> Outcome | None:
    """The outcome of one case a row names, or None when its target did not run."""
    target = run.targets.get(label)
    if target is None:
        return None
    test = f"{label} :: {case_id}"
    case = target.case(case_id)
    suffix = results.variant_suffix(label)
    default_target = suffix if suffix in results.TARGET_SUFFIXES else "any"
    if case is None:
        detail = f"target {target.status}" if target.status != results.PASSING_STATUS else ""
        return Outcome(test, default_target, "any", "failed", detail or "case not reported")
    where = (
        case.properties.get("tvm_target") or default_target,
        case.properties.get("exec_mode") or "any",
    )
    table = registry.by_id()
    if case.outcome == "passed":
        return Outcome(test, *where, "passed")
    if case.outcome in ("skipped", "disabled"):
        return Outcome(test, *where, "skipped", case.message)
    if case.outcome == "xfailed":
        dev = table.get(case.deviation or "")
        if dev is not None and registry.lists(dev, label, case.name):
            status = "crashed" if dev.kind == "crash" else "deviation"
            return Outcome(test, *where, status, dev.actual, dev.id)
        return Outcome(test, *where, "failed", f"xfail not listed for this case: {case.message}")
    if case.xpass_strict:
        return Outcome(
            test, *where, "failed", f"XPASS: deviation {case.deviation} no longer occurs"
        )
    return Outcome(test, *where, "failed", (case.message.splitlines() or ["failed"])[0][:300])


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


def cells_of(run: results.Run, items: list[Behaviour], registry: results.Registry) -> list[Cell]:
    """One cell per behaviour for one run."""
    cells = []
    for item in items:
        cell = Cell()
        for label, case_id in item.tests:
            found = outcome_of(label, case_id, run, registry)
            if found is not None:
                cell.outcomes.append(found)
        cells.append(cell)
    return cells


def summary(items: list[Behaviour], cells: list[Cell]) -> dict[str, dict[str, int]]:
    """Behaviour counts by summary key, TVM behaviours and kit self-tests apart."""
    counts = {False: collections.Counter(), True: collections.Counter()}
    for item, cell in zip(items, cells, strict=True):
        counts[item.kit][SUMMARY_KEY.get(cell.status, cell.status)] += 1
    return {
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


def summary_line(title: str, s: dict[str, int]) -> str:
    """`N behaviours: P hold, D deviations, F fail, S skipped on <column>` (+ not run)."""
    line = (
        f"{s['behaviours']} behaviours: {s['hold']} hold, {s['deviations']} deviations, "
        f"{s['fail']} fail, {s['skipped']} skipped on {title}"
    )
    return line + (f" ({s['not_run']} not run)" if s["not_run"] else "")


def column_title(run: results.Run) -> str:
    """`lane <lane> · <config>`, the user's wheel file where one was tested, and for a run
    that required a GPU, the GPU's name."""
    ident = run.identity
    title = f"lane {ident.get('lane', run.lane)} · {run.config}"
    for dist in ("tvm", "tvm_ffi"):
        entry = ident.get(dist)
        if isinstance(entry, dict) and entry.get("source") == "user wheel":
            title += f" · {entry.get('file', dist)}"
    if run.patterns not in ("//...", "(unknown)"):
        title += f" · {run.patterns}"
    gpu = dict(run.meta.get("machine") or {}).get("gpu", "")
    if run.config.startswith("cuda_gpu") and gpu and gpu != "none":
        title += f" · {gpu}"
    return title


def sources(run: results.Run) -> dict[str, object]:
    """Targets by where their result came from, and the executing hosts the events name."""
    counts = collections.Counter(t.source for t in run.targets.values())
    hosts = sorted({t.host for t in run.targets.values() if t.host})
    return {"targets": {s: counts[s] for s in results.SOURCES if counts[s]}, "hosts": hosts}


def _output_rows(run: results.Run, name: str) -> list[dict]:
    """The `rows` of the JSON table `name` that a target of the run wrote, or []."""
    rows: list[dict] = []
    for label in sorted(run.targets):
        table = run.targets[label].output_json(name)
        if isinstance(table, dict) and isinstance(table.get("rows"), list):
            rows = table["rows"]
    return rows


def diff(before: list[Cell], after: list[Cell], items: list[Behaviour]) -> dict[str, list[str]]:
    """Rows added (ran now, not before), fixed (failed before, hold now), newly failing (did
    not fail before, fail now) and otherwise changed, between two runs of one identity."""
    found: dict[str, list[str]] = {"added": [], "fixed": [], "newly failing": [], "changed": []}
    for item, old, new in zip(items, before, after, strict=True):
        if old.key() == new.key():
            continue
        name = f"{item.seed}: {item.text}"
        if old.status == "not run":
            found["added"].append(f"{name} ({new.text()})")
        elif new.status == "failed":
            found["newly failing"].append(f"{name} (was {old.text()})")
        elif old.status == "failed" and new.status in ("passed", "deviation", "crashed"):
            found["fixed"].append(f"{name} (now {new.text()})")
        else:
            found["changed"].append(f"{name}: {old.text()} -> {new.text()}")
    return found


def select(
    runs: list[results.Run], every: bool
) -> tuple[list[results.Run], dict[str, results.Run]]:
    """The runs shown (newest per identity key unless `every`), and for each shown run's key
    the previous run of that key, where there is one."""
    ordered = sorted(runs, key=lambda r: float(r.meta.get("start", 0.0) or 0.0))
    by_key: dict[str, list[results.Run]] = collections.defaultdict(list)
    for run in ordered:
        by_key[run.identity_key()].append(run)
    shown = ordered if every else [group[-1] for group in by_key.values()]
    previous = {key: group[-2] for key, group in by_key.items() if len(group) > 1 and not every}
    return shown, previous


def build(
    runs: list[results.Run],
    rows: list[conformance_check.Row],
    registry: results.Registry,
    every: bool = False,
    previous_runs: bool = True,
) -> dict:
    """The report as a JSON-able dict: columns (one run each), matrix, rows that differ."""
    items = behaviours(rows)
    shown, previous = select(runs, every)
    table = registry.by_id()
    columns = []
    all_cells = []
    for run in shown:
        cells = cells_of(run, items, registry)
        all_cells.append(cells)
        title = column_title(run)
        verdict = results.verdict(run, registry, rows)
        seen: dict[str, list[str]] = {}
        skips: collections.Counter[str] = collections.Counter()
        for target, case in run.cases():
            if case.outcome == "xfailed" and case.deviation:
                seen.setdefault(case.deviation, []).append(f"{target.label} :: {case.name}")
            if case.outcome in ("skipped", "disabled"):
                skips[case.message] += 1
        counts = summary(items, cells)
        before = previous.get(run.identity_key()) if previous_runs else None
        columns.append(
            {
                "key": run.identity_key(),
                "title": title,
                "run": os.path.basename(os.path.normpath(run.source)),
                "start_utc": str(run.meta.get("start_utc", "")),
                "wall_s": float(run.meta.get("wall_s", 0.0) or 0.0),
                "bazel_args": list(run.meta.get("bazel_args", [])),
                "lane": run.lane,
                "config": run.config,
                "identity": run.identity,
                "machine": dict(run.meta.get("machine") or {}),
                "sources": sources(run),
                "verdict": {**verdict.to_json(), "line": verdict.line(title)},
                "cases": sum(len(t.cases) for t in run.targets.values()),
                "targets": len(run.targets),
                "deviations": {
                    dev_id: {
                        "listed": dev_id in table,
                        "kind": getattr(table.get(dev_id), "kind", "unlisted"),
                        "expected": getattr(table.get(dev_id), "expected", ""),
                        "actual": getattr(table.get(dev_id), "actual", ""),
                        "upstream": getattr(table.get(dev_id), "upstream", ""),
                        "cases": cases,
                    }
                    for dev_id, cases in sorted(seen.items())
                },
                "skips": dict(skips.most_common()),
                "exception_fidelity": _output_rows(run, FIDELITY_OUTPUT),
                "overhead": _output_rows(run, OVERHEAD_OUTPUT),
                "summary": counts,
                "summary_line": summary_line(title, counts["tvm"]),
                "diff": (
                    {
                        "previous": os.path.basename(os.path.normpath(before.source)),
                        **diff(cells_of(before, items, registry), cells, items),
                    }
                    if before is not None
                    else None
                ),
            }
        )
    matrix = []
    for index, item in enumerate(items):
        cells = [c[index] for c in all_cells]
        ran = {c.key() for c in cells if c.status != "not run"}
        matrix.append(
            {
                "seed": item.seed,
                "behaviour": item.text,
                "kit": item.kit,
                "tests": [f"{label} :: {case}" for label, case in item.tests],
                "cells": [c.to_json() for c in cells],
                "differs": len(ran) > 1,
            }
        )
    return {
        "generated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "passed": all(c["verdict"]["passed"] for c in columns),
        "columns": columns,
        "matrix": matrix,
        "deviations": {
            dev.id: {"kind": dev.kind, "actual": dev.actual, "upstream": dev.upstream}
            for dev in table.values()
        },
    }


def write(report: dict, out_dir: str) -> None:
    """report.md, report.html and report.json into `out_dir`."""
    os.makedirs(out_dir, exist_ok=True)
    for name, text in (
        ("report.md", render.markdown(report)),
        ("report.html", render.html_page(report)),
        ("report.json", json.dumps(report, indent=1, sort_keys=True) + "\n"),
    ):
        with open(os.path.join(out_dir, name), "w", encoding="utf-8") as stream:
            stream.write(text)


def main(argv: list[str] | None = None) -> int:
    """Command line: build the report from run archives; exit 1 when a column fails."""
    workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY") or os.getcwd()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "runs", nargs="*", help="run archives or directories of them (default conformance-runs/)"
    )
    parser.add_argument(
        "--all", action="store_true", help="one column per run, even of one identity"
    )
    parser.add_argument("--conformance", default=os.path.join(workspace, "docs", "conformance.md"))
    parser.add_argument("--out", default=os.path.join(workspace, "conformance-report"))
    args = parser.parse_args(argv)
    named = bool(args.runs)
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
    # Runs named on the command line are shown as given (each its own column); a directory of
    # archives shows the newest per identity and config, compared with the one before.
    every = args.all or (
        named
        and all(
            os.path.isfile(os.path.join(d, results.ARCHIVE_EVENTS)) or os.path.isfile(d)
            for d in paths
        )
    )
    report = build(runs, rows, results.load_registry(workspace), every=every)
    write(report, args.out)
    print(f"report: {len(runs)} run(s), {len(report['columns'])} column(s) -> {args.out}")
    for column in report["columns"]:
        print(column["verdict"]["line"])
        print(column["summary_line"])
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
