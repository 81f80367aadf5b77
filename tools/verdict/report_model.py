"""The conformance report's model: columns (runs), rows (behaviours), cells, and the views of
them that every renderer shows (render_md.py, render_html.py, render_json.py).

`build()` turns runs into one JSON-able dict; report.py is the command line.
"""

from __future__ import annotations

import collections
import datetime
import os
import re
from dataclasses import dataclass, field

import conformance_check
import results
import run_identity
import verdict

# A JSON table a test writes into its undeclared outputs ({"title", "rows": [...]}); shown as
# a section per column (//python/tests/robustness:exception_fidelity_test writes it).
FIDELITY_OUTPUT = "exception_fidelity.json"
# ns per call beside an in-process floor ({"rows": [{"case", "ns", "floor", "floor_ns",
# "ratio"}]}), written by //benchmarks:overhead_ratio_test.
OVERHEAD_OUTPUT = "overhead.json"
# The op corpus tier (//python/tests/op_corpus:op_corpus_tier_test) writes one board per
# chunk: {"kind", "chunk", "scope", "tvm", "scoreboard": {"kind/frontend/dtype": {"names":
# {outcome: n}, "samples": {outcome: n}}}, "worst": {"kind name frontend dtype": outcome}}.
# Chunks hold disjoint names, so their counts add up.
OP_CORPUS_PREFIX = "op_corpus_board_"
OP_CORPUS_OUTCOMES = ("correct", "deviating", "failing", "refused", "excluded")
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
    label: str,
    case_id: str,
    run: results.Run,
    registry: verdict.Registry,
    fixed: verdict.Fixed | None = None,
) -> Outcome | None:
    """The outcome of one case a row names, or None when its target did not run; of several
    runs of the case (--runs_per_test), the worst (CELL_ORDER), whatever their order. `fixed`:
    the run's fixed deviations (verdict.fixed_deviations), computed when not given."""
    target = run.targets.get(label)
    if target is None:
        return None
    case = target.case(case_id)
    if case is None:
        return _run_outcome(label, case_id, target, None, registry)
    fixed = verdict.fixed_deviations(run, registry) if fixed is None else fixed
    fixed_id = fixed.cases.get((label, case.name), "")
    found = [_run_outcome(label, case_id, target, each, registry, fixed_id) for each in case.runs()]
    return min(found, key=lambda o: CELL_ORDER.index(o.status))


def _run_outcome(
    label: str,
    case_id: str,
    target: results.TargetResult,
    case: results.Case | None,
    registry: verdict.Registry,
    fixed_id: str = "",
) -> Outcome:
    """The outcome of one run of one case (None: the target did not report it); `fixed_id`:
    the deviation an unpinned TVM fixed in this case (its strict XPASS holds the behaviour)."""
    test = f"{label} :: {case_id}"
    suffix = verdict.variant_suffix(label)
    default_target = suffix if suffix in verdict.TARGET_SUFFIXES else "any"
    if case is None:
        detail = "" if verdict.status_passed(target.status) else f"target {target.status}"
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
    if case.xpass_strict and fixed_id:
        return Outcome(
            test, *where, "passed", f"deviation {fixed_id} fixed: its xfail passed", fixed_id
        )
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


def cells_of(run: results.Run, items: list[Behaviour], registry: verdict.Registry) -> list[Cell]:
    """One cell per behaviour for one run."""
    cells = []
    fixed = verdict.fixed_deviations(run, registry)
    for item in items:
        cell = Cell()
        for label, case_id in item.tests:
            found = outcome_of(label, case_id, run, registry, fixed)
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
    """`lane <lane> · <config> · Python <version>`, the index's torch where it stood in for the
    lane's CPU-only one, the user's wheel file where one was tested, the target
    patterns and selecting options where they are not plain `//...`, `PARTIAL: <what it left
    out>` for a run that left part of the suite out, and for a run that required a GPU, the
    GPU's name."""
    ident = run_identity.venv_identity(run)
    title = f"lane {ident.get('lane', run.lane)} · {run_identity.config(run)}"
    # The interpreter, and a torch other than the lane's lock pins (a stock pip's fallback).
    if ident.get("python"):
        title += f" · Python {ident['python']}"
    torch = ident.get("torch")
    if isinstance(torch, dict) and torch.get("instead_of"):
        title += f" · torch {torch.get('version')} (index)"
    for dist in ("tvm", "tvm_ffi"):
        entry = ident.get(dist)
        if isinstance(entry, dict) and entry.get("source") == "user wheel":
            title += f" · {entry.get('file', dist)}"
    if run_identity.patterns(run) not in ("//...", "(unknown)"):
        title += f" · {run_identity.patterns(run)}"
    if run_identity.selection(run):
        title += " · " + " ".join(run_identity.selection(run))
    if run_identity.partial(run):
        title += " · PARTIAL: " + " ".join(run_identity.partial(run))
    gpu = dict(run.meta.get("machine") or {}).get("gpu", "")
    if run_identity.config(run).startswith("cuda_gpu") and gpu and gpu != "none":
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


def op_corpus_board(run: results.Run) -> dict | None:
    """The run's op-corpus scoreboard, its chunks' boards merged: {"chunks", "scope",
    "scoreboard", "worst"}; None when no target wrote one."""
    boards: dict[str, object] = {}
    for label in sorted(run.targets):
        boards.update(run.targets[label].output_jsons(OP_CORPUS_PREFIX))
    merged: dict[str, dict[str, dict[str, int]]] = {}
    worst: dict[str, str] = {}
    chunks, scopes = [], set()
    for name, board in sorted(boards.items()):
        if not isinstance(board, dict):
            continue
        chunks.append(name.removeprefix(OP_CORPUS_PREFIX).removesuffix(".json"))
        scopes.add(str(board.get("scope", "?")))
        for key, cell in (board.get("scoreboard") or {}).items():
            out = merged.setdefault(
                key, {part: dict.fromkeys(OP_CORPUS_OUTCOMES, 0) for part in ("names", "samples")}
            )
            for part in ("names", "samples"):
                for outcome, n in (cell.get(part) or {}).items():
                    out[part][outcome] = out[part].get(outcome, 0) + int(n)
        worst.update({str(k): str(v) for k, v in (board.get("worst") or {}).items()})
    if not chunks:
        return None
    return {
        "chunks": chunks,
        "scope": " + ".join(sorted(scopes)),
        "scoreboard": dict(sorted(merged.items())),
        "worst": dict(sorted(worst.items())),
    }


def op_corpus_diff(before: dict, after: dict) -> list[str]:
    """Each op or module, frontend and dtype whose worst outcome changed between two boards,
    named: `op addmm fx float32: correct -> refused` is an op that stopped translating."""
    old, new = before.get("worst") or {}, after.get("worst") or {}
    return [
        f"{key}: {old.get(key, 'absent')} -> {new.get(key, 'absent')}"
        for key in sorted(set(old) | set(new))
        if old.get(key) != new.get(key)
    ]


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
    """The runs shown and, by run (its `source`), the previous run of its identity key.

    With `every`, every run is shown; otherwise the newest whole-suite run of each identity
    key: a partial run (run_identity.partial) is never a default column (name it, or --all).
    """
    ordered = sorted(runs, key=lambda r: float(r.meta.get("start", 0.0) or 0.0))
    by_key: dict[str, list[results.Run]] = collections.defaultdict(list)
    for run in ordered:
        by_key[run_identity.identity_key(run)].append(run)
    if every:
        return ordered, {}
    shown = [group[-1] for group in by_key.values() if not run_identity.partial(group[-1])]
    previous = {group[-1].source: group[-2] for group in by_key.values() if len(group) > 1}
    return shown, previous


def partial_left_out(runs: list[results.Run], every: bool) -> list[str]:
    """The archives of partial runs the default selection leaves out (none with `every`)."""
    if every:
        return []
    return [os.path.basename(os.path.normpath(r.source)) for r in runs if run_identity.partial(r)]


def build(
    runs: list[results.Run],
    rows: list[conformance_check.Row],
    registry: verdict.Registry,
    every: bool = False,
    previous_runs: bool = True,
    against: dict[str, results.Run] | None = None,
) -> dict:
    """The report as a JSON-able dict: columns (one run each), matrix, rows that differ.

    `against` (a run's `source` -> the run to diff it with) replaces the previous run that
    `select` finds by start time: check_my_wheel passes the run it made and its own choice."""
    items = behaviours(rows)
    shown, previous = select(runs, every)
    if against is not None:
        previous = dict(against)
    table = registry.by_id()
    columns = []
    all_cells = []
    for run in shown:
        cells = cells_of(run, items, registry)
        all_cells.append(cells)
        title = column_title(run)
        result = verdict.verdict_of(run, registry, rows)
        seen: dict[str, list[str]] = {}
        skips: collections.Counter[str] = collections.Counter()
        for target, case in run.cases():
            if case.outcome == "xfailed" and case.deviation:
                seen.setdefault(case.deviation, []).append(f"{target.label} :: {case.name}")
            if case.outcome in ("skipped", "disabled"):
                skips[case.message] += 1
        counts = summary(items, cells)
        before = previous.get(run.source) if previous_runs else None
        board = op_corpus_board(run)
        board_before = op_corpus_board(before) if before is not None and board else None
        columns.append(
            {
                "key": run_identity.identity_key(run),
                "title": title,
                "run": os.path.basename(os.path.normpath(run.source)),
                "start_utc": str(run.meta.get("start_utc", "")),
                "wall_s": float(run.meta.get("wall_s", 0.0) or 0.0),
                "bazel_args": list(run.meta.get("bazel_args", [])),
                "partial": run_identity.partial(run),
                "lane": run.lane,
                "config": run_identity.config(run),
                "identity": run_identity.venv_identity(run),
                "machine": dict(run.meta.get("machine") or {}),
                "sources": sources(run),
                "verdict": {**result.to_json(), "line": result.line(title)},
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
                # Recorded deviations this TVM (no lane's pin) fixed: their xfails passed.
                "fixed": {
                    dev_id: {
                        "actual": getattr(table.get(dev_id), "actual", ""),
                        "upstream": getattr(table.get(dev_id), "upstream", ""),
                        "cases": cases,
                    }
                    for dev_id, cases in sorted(result.fixed.items())
                },
                "skips": dict(skips.most_common()),
                "exception_fidelity": _output_rows(run, FIDELITY_OUTPUT),
                "overhead": _output_rows(run, OVERHEAD_OUTPUT),
                # The op corpus scoreboard (chunks, scope, per kind/frontend/dtype names and
                # samples per outcome) and what changed since the previous run of its identity.
                "op_corpus": (
                    {k: v for k, v in board.items() if k != "worst"}
                    | {"names": len(board["worst"])}
                    if board
                    else None
                ),
                "op_corpus_diff": (
                    op_corpus_diff(board_before, board) if board and board_before else None
                ),
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
        "passed": bool(columns) and all(c["verdict"]["passed"] for c in columns),
        "columns": columns,
        "partial_left_out": partial_left_out(runs, every),
        "matrix": matrix,
        "deviations": {
            dev.id: {"kind": dev.kind, "actual": dev.actual, "upstream": dev.upstream}
            for dev in table.values()
        },
    }


# --- Views of the model that every renderer shows ----------------------------------------------
FIDELITY_COLUMNS = (
    ("case", "case"),
    ("crossing", "crossing"),
    ("caught", "arrives as"),
    ("type_kept", "type kept"),
    ("args_kept", "args kept"),
    ("picklable", "picklable"),
    ("attribute_kept", "attribute kept"),
)
OVERHEAD_NOTE = (
    "ns per call (ratio to a floor timed in the same process), from "
    "//benchmarks:overhead_ratio_test; compare ratios across machines, not ns."
)
_UPSTREAM = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+)#(?P<num>\d+)$")


def upstream_url(ref: str) -> str:
    """`apache/tvm#123` -> its GitHub URL; a URL stays; anything else gives ""."""
    ref = ref.strip()
    if ref.startswith("https://"):
        return ref
    match = _UPSTREAM.match(ref)
    return f"https://github.com/{match['repo']}/issues/{match['num']}" if match else ""


def short_sha(entry: object) -> str:
    """`0.27.0.post1 (sha256 1a2b3c4d)` of an identity entry."""
    if not isinstance(entry, dict):
        return "unknown"
    sha = str(entry.get("sha256", ""))[:8] or "no sha256"
    text = f"{entry.get('version', '?')} (sha256 {sha})"
    if entry.get("source") == "user wheel":
        text += f", your wheel {entry.get('file', '')}"
    return text


def preflight_facts(machine: dict) -> str:
    """The GPU-runner preflight's facts of a column (tvm_conformance/preflight.py puts them into
    run.json's machine), as the scoreboard's machine cell ends: "" for a run without it."""
    if "torch_cuda" not in machine:
        return ""
    return (
        f", driver {machine.get('gpu_driver', '?')}, TVM needs CUDA "
        f"{machine.get('tvm_runtime_cuda', '?')}, torch {machine['torch_cuda']}"
    )


def scoreboard_rows(report: dict) -> list[dict[str, str]]:
    """One dict per column: the scoreboard's cells as text."""
    out = []
    for col in report["columns"]:
        ident, machine, verdict = col["identity"], col["machine"], col["verdict"]
        s = col["summary"]["tvm"]
        src = ", ".join(f"{n} {k}" for k, n in col["sources"]["targets"].items()) or "no targets"
        if col["sources"]["hosts"]:
            src += " (hosts: " + ", ".join(col["sources"]["hosts"]) + ")"
        outcomes = verdict["outcomes"]
        out.append(
            {
                "column": col["title"],
                "verdict": ("PASS" if verdict["passed"] else f"FAIL ({len(verdict['problems'])})"),
                "behaviours": f"{s['hold']} hold, {s['deviations']} dev, {s['fail']} fail, "
                f"{s['skipped']} skip, {s['not_run']} not run",
                "cases": ", ".join(f"{n} {k}" for k, n in sorted(outcomes.items())),
                "TVM": short_sha(ident.get("tvm")),
                "tvm-ffi": short_sha(ident.get("tvm_ffi")),
                "machine": f"{machine.get('host', '?')}: {machine.get('cpu', '?')}, "
                f"GPU {machine.get('gpu', '?')}" + preflight_facts(machine),
                "results from": src,
                "run": f"{col['run']} ({col['wall_s']:.0f} s)",
            }
        )
    return out


def fidelity_value(row: dict, key: str) -> str:
    """One exception-fidelity cell as text (yes / NO, the attribute it kept)."""
    value = row.get(key, "")
    text = ("yes" if value else "NO") if isinstance(value, bool) else str(value)
    if key == "attribute_kept" and "attribute" in row:
        return f"{row['attribute']}: {text}"
    return text


def overhead_table(report: dict) -> tuple[list[str], list[list[str]]]:
    """Columns that measured the overhead, and a row per case: case, floor, `ns (ratio x)`."""
    cols = [c for c in report["columns"] if c.get("overhead")]
    cases: dict[tuple[str, str], dict[str, str]] = {}
    for col in cols:
        for row in col["overhead"]:
            key = (str(row.get("case", "?")), str(row.get("floor", "?")))
            cases.setdefault(key, {})[col["title"]] = (
                f"{float(row.get('ns', 0)):.0f} ({float(row.get('ratio', 0)):.2f}x)"
            )
    rows = [
        [case, floor] + [by_col.get(c["title"], "") for c in cols]
        for (case, floor), by_col in cases.items()
    ]
    return [c["title"] for c in cols], rows


def op_corpus_table(col: dict) -> tuple[list[str], list[list[str]]]:
    """A column's op-corpus scoreboard: the header and a row per kind/frontend/dtype, names
    and samples as `correct / deviating / failing / refused / excluded`."""
    board = col.get("op_corpus")
    if not board:
        return [], []
    outcomes = " / ".join(OP_CORPUS_OUTCOMES)
    header = ["kind / frontend / dtype", f"names: {outcomes}", f"samples: {outcomes}"]
    rows = [
        [key]
        + [
            " / ".join(str(cell[part].get(o, 0)) for o in OP_CORPUS_OUTCOMES)
            for part in ("names", "samples")
        ]
        for key, cell in board["scoreboard"].items()
    ]
    return header, rows


def op_corpus_lines(col: dict) -> list[str]:
    """What the scoreboard covers, then its diff against the previous run of its identity."""
    board = col.get("op_corpus")
    if not board:
        return []
    lines = [
        f"Op corpus ({board['scope']}): {board['names']} op/module x frontend x dtype "
        f"from {len(board['chunks'])} chunk(s): {', '.join(board['chunks'])}"
    ]
    changed = col.get("op_corpus_diff")
    if changed is None:
        lines.append("No earlier op-corpus board of this identity and config.")
    else:
        lines.append(f"Changed since the previous run: {len(changed)}")
        lines += changed
    return lines


# What drift means for the verdict (issue 66): counted in the verdict line; a removed or changed
# entry of a wheel with the lane's TVM version and build options fails as a REGRESSION
# (//tools/registry_snapshot:snapshot_test), another build's is information.
DRIFT_NOTE = (
    "what this wheel changed in TVM's registries: counted in the verdict line; a REGRESSION "
    "where the wheel has the lane's TVM version and build options, information otherwise"
)


def drift_lines(col: dict) -> list[str]:
    """The registry drift of a column's wheel against its lane's snapshot (run record
    identity.registry_drift): a heading line, then one line per difference; none for a run
    that recorded no drift (a lane's pinned wheels)."""
    drift = (col.get("identity") or {}).get("registry_drift")
    if not isinstance(drift, dict):
        return []
    against = drift.get("against", "the lane's snapshot")
    if drift.get("error"):
        return [f"Registry drift against {against}: not taken ({drift['error']})"]
    found = list(drift.get("differences") or [])
    per = "; ".join(
        f"{registry}: " + ", ".join(f"{n} {kind}" for kind, n in kinds.items() if n)
        for registry, kinds in sorted((drift.get("counts") or {}).items())
    )
    head = f"Registry drift against {against} ({DRIFT_NOTE}): {len(found)} differences"
    return [head + (f" ({per})" if per else "")] + found


def diff_lines(col: dict) -> list[str]:
    """A column's diff against the previous run of its identity, a line per kind."""
    d = col.get("diff")
    if not d:
        return ["No earlier run of this identity and config."]
    lines = [f"Against {d['previous']}:"]
    for key in ("newly failing", "fixed", "added", "changed"):
        lines.append(f"{key}: {len(d[key])}" + (" — " + "; ".join(d[key]) if d[key] else ""))
    return lines
