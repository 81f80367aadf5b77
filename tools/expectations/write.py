"""Write a lane's pinned expectations from the kit's own run on the lane's pinned wheels.

    ./bazelw run [--config=<lane>] //tools/expectations -- --write   # one lane
    tools/expectations/regenerate.sh                                 # every lane
    ./bazelw run //tools/expectations                                # compare only, no write
    ... -- [--write] --suite relax_op_walk                           # one suite

The op corpus tier (op_corpus_tier.json): it runs the op corpus's //... tier twice, chunk by
chunk in child processes as its test does (op_corpus_outcomes.run_shard_isolated): a case with
two outcomes is refused, and a figure of a deviation that differs between the runs (or from the
file it replaces) is pinned loose (`~`). It writes
python/tvm_conformance/expectations/<lane>/op_corpus_tier.json: every case's outcome
(tvm_conformance.expectations), and the run's scoreboard as the lane's recorded run
(docs/op_corpus_scoreboard.json, docs/op_corpus.md; the README's sentence is printed). It
refuses a venv holding a user's wheel (expectations are the lane's pinned wheels' own) and a run
with a failing case (record it as a deviation first: op_corpus.py record). Without --write it
prints how the run compares with the file.

The Relax op walk (relax_op_walk.json, and relax_op_walk_full.json for `--config=op_corpus`'s
whole walk): every point's outcome as its test computes it (op_signatures_test.walk_outcomes:
normalizing, no build), twice; the writer refuses a point whose two outcomes differ.

The whole corpus (op_corpus_all.json, what `--config=op_corpus` judges once it exists): only
when named, `./bazelw run --config=op_corpus //tools/expectations -- --write --suite
op_corpus_all`, the same two runs over the whole corpus's chunks (hours of CPU each).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib.util
import json
import os
import re
import sys
from pathlib import Path

from tvm_conformance import expectations, runfiles
from tvm_conformance import op_corpus_outcomes as outcomes

SUITE = "op_corpus_tier"
WALK_TEST = "python/tests/relax/op_signatures_test.py"
SUITES = (SUITE, "relax_op_walk")
# The whole corpus (--config=op_corpus: every sample, frontend, dtype and exec mode): hours of
# CPU per run, so only when named (`--suite op_corpus_all`), never in "all".
FULL_SUITE = "op_corpus_all"


def record_scoreboard(workspace: Path, lane: str, tvm: str, results: list, cpu_s: float) -> None:
    """The lane's recorded run (docs/op_corpus_scoreboard.json) and its table in
    docs/op_corpus.md, from this run: one source, the run the expectations were written from.
    The README's sentence of the run (op_corpus_outcomes.headline) is printed to paste."""
    record_file = workspace / "docs" / "op_corpus_scoreboard.json"
    runs = json.loads(record_file.read_text(encoding="utf-8"))
    old = runs["runs"].get(lane)
    new = dict(old or {"scope": "//... tier"}, tvm=tvm, cpu_s=round(cpu_s, 1))
    new["scoreboard"] = outcomes.scoreboard(results)
    runs["runs"][lane] = new
    record_file.write_text(json.dumps(runs, indent=1) + "\n", encoding="utf-8")
    doc_file = workspace / "docs" / "op_corpus.md"
    doc = doc_file.read_text(encoding="utf-8")
    if old:
        doc = doc.replace(
            outcomes.scoreboard_markdown(old["scoreboard"]),
            outcomes.scoreboard_markdown(new["scoreboard"]),
        )
        heading = re.compile(rf"^(### [^\n]*\(TVM {re.escape(old['tvm'])}\)): [\d,]+ s CPU$", re.M)
        lane_heading = [m for m in heading.finditer(doc) if lane in m.group(1) or (
            lane == "default" and "Default lane" in m.group(1))]  # fmt: skip
        for m in lane_heading[:1]:
            title = m.group(1).replace(f"TVM {old['tvm']}", f"TVM {tvm}")
            doc = doc[: m.start()] + f"{title}: {cpu_s:.0f} s CPU" + doc[m.end() :]
    doc_file.write_text(doc, encoding="utf-8")
    print(f"expectations: README's sentence: {outcomes.headline(lane, new)}")


def run_tier(jobs: int, full: bool = False) -> tuple[str, list[str], list[outcomes.Result]]:
    """Every chunk of the tier (``full``: of the whole corpus, as --config=op_corpus runs it):
    (TVM version, names, results)."""
    sizes = outcomes.FULL_CHUNKS if full else outcomes.TIER_CHUNKS
    chunks = [(k, i, n) for k, n in sizes.items() for i in range(n)]
    kw = (
        {
            "tier": False,
            "exec_modes": outcomes.EXEC_MODES,
            "timeout": outcomes.FULL_TIMEOUT,
            "by_dtype": True,
        }
        if full
        else {}
    )
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        runs = list(pool.map(lambda c: outcomes.run_shard_isolated(*c, **kw), chunks))
    versions = {r.tvm for r in runs}
    if len(versions) != 1:
        raise RuntimeError(f"the chunks ran different TVMs: {sorted(versions)}")
    return versions.pop(), [n for r in runs for n in r.names], [x for r in runs for x in r.results]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write the lane's file")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="chunks at once")
    parser.add_argument(
        "--suite", choices=(*SUITES, FULL_SUITE, "all"), default="all", help="which file"
    )
    args = parser.parse_args(argv)
    record = expectations.venv_record()
    lane = expectations.lane_of(record)
    if args.write and not expectations.pinned(record):
        print(
            f"expectations: this venv holds a user's wheel ({', '.join(record['user_wheels'])}): "
            "expectations are written from a lane's pinned wheels only",
            file=sys.stderr,
        )
        return 2
    workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY")
    if args.write and not workspace:
        print("expectations: --write needs `./bazelw run //tools/expectations`", file=sys.stderr)
        return 2
    suites = SUITES if args.suite == "all" else (args.suite,)
    status = 0
    if "relax_op_walk" in suites:
        status = max(status, write_walk(lane, args.write, workspace, expectations.pinned(record)))
    for suite in (SUITE, FULL_SUITE):
        if suite in suites:
            status = max(status, write_tier(lane, args, workspace, record, suite))
    return status


def _walk_module():
    """The Relax op walk's test module (its KNOWN deviations and walk_outcomes)."""
    spec = importlib.util.spec_from_file_location(
        "op_signatures_test", runfiles.rlocation(WALK_TEST)
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_walk(lane: str, write: bool, workspace: str | None, pinned_wheels: bool) -> int:
    """The Relax op walk's two files (CI's scope and the whole walk): written, or compared."""
    import tvm

    walk = _walk_module()
    status = 0
    for full, suite in walk.WALK_SUITES.items():
        cases = walk.walk_outcomes(full)
        if write:
            again = walk.walk_outcomes(full)
            unstable = [
                f"  {k}: {v} / {again.get(k)}" for k, v in cases.items() if again.get(k) != v
            ]
            if unstable or set(again) != set(cases):
                print(
                    f"expectations: {suite}: {len(unstable)} point(s) gave two outcomes, nothing "
                    "written:\n" + "\n".join(unstable[:40]),
                    file=sys.stderr,
                )
                status = 1
                continue
            target = Path(workspace) / "python" / "tvm_conformance" / "expectations" / lane
            target.mkdir(parents=True, exist_ok=True)
            (target / f"{suite}.json").write_text(
                expectations.dumps(lane, suite, tvm.__version__, cases)
            )
            print(f"expectations: wrote {target / f'{suite}.json'}: {len(cases)} points")
            continue
        judgement = expectations.judge_outcomes(cases, expectations.load(lane, suite))
        problems = judgement.problems(pinned_wheels)
        print(
            f"expectations ({lane}, {suite}): {judgement.same} same, "
            f"{len(judgement.regressions)} regression(s), {len(judgement.improvements)} "
            f"improvement(s), {len(judgement.stale)} stale"
        )
        print("\n".join(problems + [f"improvement: {x}" for x in judgement.improvements]))
        status = max(status, 1 if problems else 0)
    return status


def _same_head(previous: str, now: str) -> str:
    """``previous`` under ``now``'s deviation id where only the id differs (a record written
    again, e.g. with a longer message): its figures, loose ones too, still count."""
    head, sep, numbers = previous.partition(" @ ")
    now_head = now.partition(" @ ")[0]
    if (
        sep
        and head != now_head
        and head.startswith("deviating ")
        and now_head.startswith("deviating ")
    ):
        return f"{now_head} @ {numbers}"
    return previous


def write_tier(
    lane: str, args: argparse.Namespace, workspace: str | None, record: dict, suite: str = SUITE
) -> int:
    """The op corpus tier's file (``suite`` op_corpus_all: the whole corpus's): written from
    two runs, or compared."""
    full = suite == FULL_SUITE
    cpu_before = outcomes.children_cpu()
    tvm, names, results = run_tier(max(1, args.jobs), full)
    cpu_s = outcomes.children_cpu() - cpu_before
    failing = [r for r in results if r.outcome == "failing"]
    if args.write and failing:
        print(
            f"expectations: {len(failing)} failing case(s); record them as deviations first "
            "(docs/op_corpus.md), nothing written:\n"
            + "\n".join(f"  {expectations.case_key(r)}: {r.detail[:200]}" for r in failing[:20]),
            file=sys.stderr,
        )
        return 1
    cases = {expectations.case_key(r): expectations.outcome_of(r) for r in results}
    if len(cases) != len(results):
        raise RuntimeError("two results share a case key")
    if args.write:
        # A second run: an outcome that differs between the two is no expectation; a figure
        # that differs (a count over ties) is marked loose, as is one that differs from the
        # file being replaced.
        _, _, again = run_tier(max(1, args.jobs), full)
        second = {expectations.case_key(r): expectations.outcome_of(r) for r in again}
        unstable = [
            f"  {k}: {cases[k].split(' @ ')[0]} / {second.get(k, 'no result').split(' @ ')[0]}"
            for k in sorted(cases)
            if cases[k].split(" @ ")[0] != second.get(k, "").split(" @ ")[0]
        ]
        if unstable:
            print(
                f"expectations: {len(unstable)} case(s) gave two outcomes in two runs, nothing "
                "written:\n" + "\n".join(unstable[:40]),
                file=sys.stderr,
            )
            return 1
        try:
            previous = expectations.load(lane, suite)
        except (OSError, ValueError):
            previous = {}
        for key in cases:
            cases[key] = expectations.merge_runs(cases[key], second[key])
            if key in previous:
                cases[key] = expectations.merge_runs(
                    cases[key], _same_head(previous[key], cases[key])
                )
        target = Path(workspace) / "python" / "tvm_conformance" / "expectations" / lane
        target.mkdir(parents=True, exist_ok=True)
        (target / f"{suite}.json").write_text(expectations.dumps(lane, suite, tvm, cases))
        print(f"expectations: wrote {target / f'{suite}.json'}: {len(cases)} cases, TVM {tvm}")
        if not full:  # the recorded scoreboard is the tier's
            record_scoreboard(Path(workspace), lane, tvm, results, cpu_s)
        return 0
    judgement = expectations.judge(results, names, expectations.load(lane, suite))
    problems = judgement.problems(expectations.pinned(record))
    print(
        f"expectations ({lane}, TVM {tvm}): {judgement.same} same, "
        f"{len(judgement.regressions)} regression(s), {len(judgement.improvements)} "
        f"improvement(s), {len(judgement.stale)} stale"
    )
    print("\n".join(problems + [f"improvement: {x}" for x in judgement.improvements]))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
