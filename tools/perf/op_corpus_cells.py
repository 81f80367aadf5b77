"""The op corpus's cells and how many of them the //... tier covers (issue 69, point 1).

A cell is (kind, op or module, dtype, frontend, exec mode) with at least one sample. The
corpus's cells are read from a whole run's result files (`python -m tvm_conformance.op_corpus
run KIND --shard I/N --all --exec-modes bytecode,compiled --json FILE`, or the JSON in the
outputs of `//python/tests/op_corpus:op_corpus_all`), the tier's from a lane's pinned
expectations (`python/tvm_conformance/expectations/<lane>/op_corpus_tier.json`: one key per
case, `kind|name|dtype|frontend|index`), with the compiled cells a tier run built from its
results (`--tier-results`). Each corpus cell the tier leaves out gets the first reason that
applies: its exec mode is not one the tier runs, its frontend is not one the tier runs, its
name has no tier case, or its dtype has none (the tier's dtype choice), or the tier has the
cell in another mode only (outside that mode's share).

    python3 tools/perf/op_corpus_cells.py \
        --tier python/tvm_conformance/expectations/default/op_corpus_tier.json \
        --whole RESULTS.json ... [--tier-results TIER_RESULTS.json ...] \
        [--list cells.md] [--json out.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

# Every tier case is a bytecode cell (its pinned expectations); the compiled cells it builds
# (a share, op_corpus.TIER_SHARE_MODES) are read from a tier run's results (--tier-results).
# The whole corpus runs both modes (op_corpus_outcomes.EXEC_MODES).
TIER_EXEC_MODES: tuple[str, ...] = ("bytecode",)
WHOLE_EXEC_MODES: tuple[str, ...] = ("bytecode", "compiled")

REASONS: tuple[str, ...] = (
    "exec mode not in the tier",
    "frontend not in the tier",
    "name without a tier case",
    "dtype without a tier case",
    "no tier case in this frontend",
    "outside the mode's share (op_corpus.TIER_SHARE_MODES)",
)

Cell = tuple[str, str, str, str, str]  # kind, name, dtype, frontend, exec mode


def tier_cells(expectations: dict, modes: Sequence[str] = TIER_EXEC_MODES) -> set[Cell]:
    """The cells of a lane's pinned tier expectations."""
    cases = expectations.get("cases")
    if not isinstance(cases, dict):
        raise ValueError("not an expectations file: no 'cases' object")
    cells: set[Cell] = set()
    for key in cases:
        parts = key.split("|")
        if len(parts) != 5:
            raise ValueError(f"malformed case key {key!r}: want kind|name|dtype|frontend|index")
        kind, name, dtype, frontend, _ = parts
        cells |= {(kind, name, dtype, frontend, m) for m in modes}
    return cells


def built_cells(results: Iterable[dict]) -> set[Cell]:
    """The cells of a tier run's results in the exec modes TVM built each case in (a result's
    ``modes``: the tier builds a share of its cases in compiled mode too,
    op_corpus.TIER_SHARE_MODES)."""
    cells: set[Cell] = set()
    for r in results:
        try:
            cell = (r["kind"], r["name"], r["dtype"], r["frontend"])
        except (KeyError, TypeError) as err:
            raise ValueError(f"not a result of the op corpus: {r!r}") from err
        cells |= {(*cell, m) for m in str(r.get("modes") or "").split(",") if m}
    return cells


def corpus_cells(results: Iterable[dict], modes: Sequence[str] = WHOLE_EXEC_MODES) -> set[Cell]:
    """The cells of a whole run's results (a name without a sample, dtype ``*``, has none)."""
    cells: set[Cell] = set()
    for r in results:
        try:
            kind, name, dtype, frontend = r["kind"], r["name"], r["dtype"], r["frontend"]
        except (KeyError, TypeError) as err:
            raise ValueError(f"not a result of the op corpus: {r!r}") from err
        if dtype == "*":
            continue
        cells |= {(kind, name, dtype, frontend, m) for m in modes}
    return cells


def left_out(corpus: set[Cell], tier: set[Cell]) -> dict[Cell, str]:
    """Each corpus cell the tier does not cover, with the first reason of REASONS that applies."""
    modes = {c[4] for c in tier}
    frontends = {(c[0], c[3]) for c in tier}
    names = {(c[0], c[1]) for c in tier}
    dtypes = {(c[0], c[1], c[2]) for c in tier}
    in_frontend = {c[:4] for c in tier}
    out: dict[Cell, str] = {}
    for cell in sorted(corpus - tier):
        kind, name, dtype, frontend, mode = cell
        if mode not in modes:
            out[cell] = REASONS[0]
        elif (kind, frontend) not in frontends:
            out[cell] = REASONS[1]
        elif (kind, name) not in names:
            out[cell] = REASONS[2]
        elif (kind, name, dtype) not in dtypes:
            out[cell] = REASONS[3]
        elif cell[:4] in in_frontend:
            out[cell] = REASONS[5]
        else:
            out[cell] = REASONS[4]
    return out


def summary(corpus: set[Cell], tier: set[Cell]) -> dict:
    """Per kind: the corpus's cells, those the tier covers, the reasons of the others, and the
    tier's cells no whole-run result has (a chunk not run, or a sample the run did not give)."""
    gone = left_out(corpus, tier)
    out: dict = {}
    for kind in sorted({c[0] for c in corpus | tier}):
        mine = {c for c in corpus if c[0] == kind}
        covered = mine & tier
        reasons = collections.Counter(r for c, r in gone.items() if c[0] == kind)
        out[kind] = {
            "corpus_cells": len(mine),
            "tier_cells_covered": len(covered),
            "share": round(len(covered) / len(mine), 4) if mine else 0.0,
            "left_out": {r: reasons[r] for r in REASONS if reasons[r]},
            "tier_cells_not_in_corpus": len({c for c in tier if c[0] == kind} - corpus),
            "by_frontend_and_mode": {
                f"{f} / {m}": [
                    len({c for c in covered if c[3] == f and c[4] == m}),
                    len({c for c in mine if c[3] == f and c[4] == m}),
                ]
                for f, m in sorted({(c[3], c[4]) for c in mine})
            },
        }
    return out


def listing(corpus: set[Cell], tier: set[Cell]) -> str:
    """The cells left out, as markdown: the reasons that hold for whole modes and frontends
    once, then per name its dtypes (or the whole name) left out, and any other cell alone."""
    gone = left_out(corpus, tier)
    lines = ["# Op corpus cells the //... tier leaves out", ""]
    for reason in REASONS[:2]:
        cells = [c for c, r in gone.items() if r == reason]
        if cells:
            what = sorted({c[4] if reason == REASONS[0] else f"{c[0]} / {c[3]}" for c in cells})
            lines.append(f"- **{reason}** ({len(cells):,} cells): {', '.join(what)}")
    by_name: dict[tuple[str, str], dict[str, set[str]]] = collections.defaultdict(
        lambda: collections.defaultdict(set)
    )
    for (kind, name, dtype, frontend, mode), reason in gone.items():
        if reason in REASONS[2:]:
            by_name[(kind, name)][reason].add(
                dtype if reason not in REASONS[4:] else f"{dtype}/{frontend}/{mode}"
            )
    lines += ["", "| kind | name | left out (in the tier's frontends and mode) |", "|---|---|---|"]
    for (kind, name), reasons in sorted(by_name.items()):
        text = "; ".join(f"{r}: {', '.join(sorted(v))}" for r, v in reasons.items())
        lines.append(f"| {kind} | {name} | {text} |")
    return "\n".join(lines) + "\n"


def _load(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise SystemExit(f"op_corpus_cells: cannot read {path}: {err}") from err


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tier", type=Path, required=True, help="a lane's op_corpus_tier.json")
    parser.add_argument("--whole", type=Path, nargs="+", required=True, help="whole-run results")
    parser.add_argument(
        "--tier-results",
        type=Path,
        nargs="*",
        default=[],
        help="a tier run's results (its chunks' JSON): add the cells of the modes each case was"
        " built in",
    )
    parser.add_argument("--list", type=Path, help="write the cells left out (markdown) here")
    parser.add_argument("--json", type=Path, help="write the summary (JSON) here")
    args = parser.parse_args(argv)
    results: list[dict] = []
    tier_results: list[dict] = []
    for paths, into in ((args.whole, results), (args.tier_results, tier_results)):
        for path in paths:
            data = _load(path)
            if not isinstance(data, list):
                parser.error(f"{path}: not a list of results")
            into += data
    try:
        corpus = corpus_cells(results)
        tier = tier_cells(_load(args.tier)) | built_cells(tier_results)  # type: ignore[arg-type]
    except ValueError as err:
        parser.error(str(err))
    if not corpus:
        parser.error("the whole-run files hold no cell")
    board = summary(corpus, tier)
    text = json.dumps(board, indent=1)
    sys.stdout.write(text + "\n")
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    if args.list:
        args.list.write_text(listing(corpus, tier), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
