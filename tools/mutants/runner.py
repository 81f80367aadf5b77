"""Run the mutant catalogue against the kit: each mutant wheel through check-my-wheel.

    ./bazelw run //tools/mutants -- [--only ID ...] [--area A ...] [--lane L]
                                    [--scope area|all] [--no-baseline] [--record FILE]
    ./bazelw run //tools/mutants -- --list
    ./bazelw run //tools/mutants -- --table RESULTS.json

For each mutant of tools/mutants/catalogue.json it builds the mutant wheel (mutant_wheel.py:
the lane's pinned wheel, fetched with pip from the lane's hashed lock, with one file edited and
its RECORD line fixed, under the original file name), runs tools/verdict/check_my_wheel.py with
it (the other wheel is the lane's pinned one) and classifies the run:

  killed        a case failed (or a strict xfail passed), or a test target crashed or timed
                out again when rerun alone: the kit caught the break; the failing cases
                are recorded
  survived      the run passed: the kit did not see the break
  inconclusive  the run broke for another reason (the wheel did not build, Bazel failed to
                build, check-my-wheel did not test this very wheel): never counted as killed
  equivalent    listed as such in the catalogue (no observable difference), not run

Killed mutants are cheap: check-my-wheel runs with --fail-fast (Bazel stops at the first failed
test target). --scope area (the default) runs only the test packages of the mutant's area
(the catalogue's `areas`): a partial run, said so in the results; --scope rows runs only the
targets of the conformance rows that should catch the mutant (CI's cheap check); --scope all
runs `//...`.
The baseline (on by default; --no-baseline skips it) first runs the unmutated wheels over the
union of the targets: it must PASS, or every kill would be meaningless (the runner then
stops); the report refuses the score of results without a passing baseline of their commit.
A TIMEOUT or crash without a failed case counts as killed only when a rerun of that target
alone reproduces it; else it stays inconclusive. Each result records the kit commit, lane,
scope, baseline and the digest of its catalogue entry, so the report marks stale ones. Results go to
mutation-runs/<UTC start>/results.json (and one log per mutant); --record merges them into a
results file the report's strength section reads (docs/mutation_results.json).
Every entry names rows, and a kill must name a target of its mutant's rows (under --scope
area, fail-fast may stop at another target: rerun it with --scope rows, or correct the rows).
Exit status: 0 when every mutant run was killed inside its rows (or equivalent) and the
baseline passed, 1 otherwise, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("BUILD_WORKSPACE_DIRECTORY") or os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.append(os.path.join(os.path.dirname(HERE), "config"))
sys.path.append(os.path.join(os.path.dirname(HERE), "verdict"))

import catalogue as catalogue_lib  # noqa: E402
import lanes as lanes_table  # noqa: E402
import mutant_wheel  # noqa: E402
import results  # noqa: E402
import strength  # noqa: E402

WHEEL_FLAGS = {"apache-tvm": "--tvm-wheel", "apache-tvm-ffi": "--tvm-ffi-wheel"}
# The host's python3, as the README runs check_my_wheel.py: under `bazel run` sys.executable is
# the lane venv's, which each mutant's `./bazelw test` re-creates under this very process.
PYTHON = shutil.which("python3") or sys.executable
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "tvm_conformance", "mutants")


def lock_entry(lock_text: str, dist: str) -> str:
    """The `dist==version \\ --hash=...` block of a hashed lock; ValueError if absent."""
    match = re.search(rf"^{re.escape(dist)}==\S+(?: \\\n\s+--hash=\S+)+", lock_text, re.M)
    if not match:
        raise ValueError(f"the lock pins no {dist}")
    return match.group(0)


def pinned_wheel(lane: str, dist: str, cache: str = CACHE) -> str:
    """The lane's pinned wheel of `dist`, downloaded once (pip, hash-checked) into `cache`."""
    table = lanes_table.read_lanes(Path(ROOT, "tools", "config", "lanes.bzl"))
    lock = Path(ROOT, "third_party", "python", table[lane]["lock"]).read_text()
    entry = lock_entry(lock, dist)
    version = entry.split("==", 1)[1].split()[0]
    prefix = f"{dist.replace('-', '_')}-{version}-"
    where = os.path.join(cache, "wheels", lane)
    found = (
        [n for n in sorted(os.listdir(where)) if n.startswith(prefix)]
        if os.path.isdir(where)
        else []
    )
    if not found:
        os.makedirs(where, exist_ok=True)
        requirement = os.path.join(where, f"{dist}.txt")
        with open(requirement, "w", encoding="utf-8") as stream:
            stream.write(entry + "\n")
        subprocess.run(
            [
                PYTHON,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--require-hashes",
                "--only-binary=:all:",
                "-r",
                requirement,
                "-d",
                where,
            ],
            check=True,
        )
        found = [
            n for n in sorted(os.listdir(where)) if n.startswith(prefix) and n.endswith(".whl")
        ]
    if len(found) != 1:
        raise ValueError(f"expected one {prefix}*.whl in {where}, found {found}")
    return os.path.join(where, found[0])


def classify(run_dir: str | None, status: int, output: str) -> dict:
    """killed / survived / inconclusive, with the cases that failed, from one check's run."""
    if status == 2 or not run_dir:
        return {"outcome": "inconclusive", "reason": f"no run archived (exit {status})"}
    if "NOT TESTED:" in output:
        return {"outcome": "inconclusive", "reason": "the run did not test the mutant wheel"}
    run = results.read_run(run_dir)
    killed_by = [
        f"{target.label} :: {case.name}" for target, case in run.cases() if case.outcome == "failed"
    ]
    if killed_by:
        return {"outcome": "killed", "killed_by": killed_by}
    # A TIMEOUT or a crash without a failed case may be the machine's load, not the mutant: it
    # is inconclusive until a rerun of that target alone reproduces it (confirm_crashes).
    crashed = [
        label
        for label, target in sorted(run.targets.items())
        if target.status in ("FAILED", "TIMEOUT")
        and not any(c.outcome == "failed" for c in target.cases)
        and (target.errors or target.status == "TIMEOUT")
    ]
    if crashed:
        statuses = "; ".join(f"{run.targets[t].status}: {t}" for t in crashed[:3])
        return {
            "outcome": "inconclusive",
            "reason": f"a crash or timeout without a failed case ({statuses}), not yet rerun alone",
            "crashed": crashed,
        }
    if status == 0 and run.targets:
        return {"outcome": "survived"}
    failing = sorted(
        f"{t.status}: {label}" for label, t in run.targets.items() if t.status != "PASSED"
    )
    return {
        "outcome": "inconclusive",
        "reason": f"check-my-wheel exit {status}, bazel exit {run.exit_code}, no failed case"
        + (f" ({'; '.join(failing[:3])})" if failing else ""),
    }


def confirm_crashes(entry: dict, rerun: Callable[[str], tuple[int, str, str | None]]) -> dict:
    """An inconclusive crash (classify's `crashed`) becomes a kill only when a rerun of each
    crashed target alone, with its own timeout (`rerun(label)` -> exit, output, run archive),
    fails again; otherwise it stays inconclusive, saying which rerun passed."""
    crashed = entry.pop("crashed", None)
    if entry.get("outcome") != "inconclusive" or not crashed:
        return entry
    confirmed = []
    for label in crashed:
        code, output, run_dir = rerun(label)
        again = classify(run_dir, code, output)
        if again["outcome"] == "killed":
            return dict(entry, outcome="killed", killed_by=again["killed_by"], reason=None)
        if again.get("crashed") == [label]:
            confirmed.append(f"crashed (reproduced alone): {label}")
    if confirmed:
        entry = dict(entry, outcome="killed", killed_by=confirmed)
        entry.pop("reason", None)
        return entry
    return dict(
        entry, reason=entry["reason"].replace("not yet rerun alone", "not reproduced alone")
    )


def kit_commit(root: str = ROOT) -> str:
    """The kit's commit (`git rev-parse HEAD`), `+edits` when the tree differs from it (a
    result of an edited kit is then told apart); `unknown` outside a git checkout."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "diff", "--quiet", "HEAD", "--", ".", ":!docs/mutation_results.json"],
            cwd=root,
            check=False,
        ).returncode
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+edits" if dirty else "")


def check_command(
    wheels: dict[str, str], lane: str, targets: list[str], out: str, fail_fast: bool
) -> list[str]:
    """The check-my-wheel command line for these wheels (both given: the run's identity)."""
    command = [PYTHON, os.path.join(ROOT, "tools", "verdict", "check_my_wheel.py")]
    for dist in ("apache-tvm", "apache-tvm-ffi"):
        command += [WHEEL_FLAGS[dist], wheels[dist]]
    command += ["--lane", lane, "--out", out]
    if targets != ["//..."]:
        command += ["--targets", *targets]
    if fail_fast:
        command.append("--fail-fast")
    return command


def run_check(command: list[str], log: str) -> tuple[int, str, str | None, float]:
    """Run one check, its output to `log`; (exit status, output, run archive, seconds)."""
    start = time.monotonic()
    with open(log, "w", encoding="utf-8") as stream:
        status = subprocess.run(
            command, cwd=ROOT, stdout=stream, stderr=subprocess.STDOUT, check=False
        ).returncode
    seconds = time.monotonic() - start
    output = Path(log).read_text(encoding="utf-8", errors="replace")
    found = re.findall(r"check_my_wheel: report of (\S+) ->", output)
    run_dir = os.path.join(ROOT, found[-1]) if found else None
    return status, output, run_dir, seconds


def table(records: list[dict], catalogue: catalogue_lib.Catalogue) -> str:
    """Markdown: per area, the catalogue's size and each outcome; times to kill; the total."""
    lines = [
        "| area | mutants | run | killed | survived | inconclusive | equivalent "
        "| median s to kill | max s to kill |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    rows = strength.tally(
        list(catalogue.areas),
        [m.area for m in catalogue.mutants],
        ((r["area"], r) for r in records),
    )
    for area, row in rows.items():
        kills = row["kill_seconds"]
        median = f"{statistics.median(kills):.0f}" if kills else "-"
        most = f"{max(kills):.0f}" if kills else "-"
        lines.append(
            f"| {area} | {row['mutants']} | {row['run']} | {row['killed']} | {row['survived']} | "
            f"{row['inconclusive']} | {row['equivalent']} | {median} | {most} |"
        )
    total = sum(r.get("seconds", 0.0) for r in records)
    lines.append("")
    lines.append(f"Total time: {total:.0f} s for {len(records)} mutant(s).")
    return "\n".join(lines)


# What each recorded result carries of the run that made it (record() copies them in), so a
# merge of runs with other lanes, scopes or baselines never rewrites an earlier result's.
RESULT_META = ("kit_commit", "lane", "scope", "fail_fast", "baseline", "started")


def entries_of(results_field: object) -> list[dict]:
    """A results file's `results`: a list of entries, or a dict of them by id."""
    if isinstance(results_field, dict):
        return list(results_field.values())
    return list(results_field or [])  # type: ignore[call-overload]


def record(path: str, new: list[dict], meta: dict) -> None:
    """Merge `new` results (by mutant id, newest wins) into the results file at `path`; each
    result keeps its own run's RESULT_META (its own value where it has one)."""
    data: dict = {"results": {}}
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as stream:
            data = json.load(stream)
        data["results"] = {e["id"]: e for e in entries_of(data.get("results"))}
    data.update({k: v for k, v in meta.items() if k != "results"})
    for entry in new:
        kept = {k: meta[k] for k in RESULT_META if k in meta}
        kept.update({k: v for k, v in entry.items() if k not in ("log", "run_dir")})
        before = data["results"].get(entry["id"], {})
        # A survivor that a later run kills was closed by a new test: keep that history.
        if before.get("outcome") == "survived" or before.get("was_survivor"):
            kept["was_survivor"] = True
        data["results"][entry["id"]] = kept
    data["results"] = dict(sorted(data["results"].items()))
    with open(path, "w", encoding="utf-8") as stream:
        json.dump(data, stream, indent=1, sort_keys=False)
        stream.write("\n")


def main(argv: list[str] | None = None) -> int:  # noqa: PLR0912, PLR0915
    """Command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", default=[], metavar="ID", help="these mutants")
    parser.add_argument("--area", nargs="+", default=[], help="the mutants of these areas")
    parser.add_argument(
        "--lane", help="the lane whose pinned wheels are mutated (default: the catalogue's)"
    )
    parser.add_argument(
        "--scope",
        choices=("area", "rows", "all"),
        default="area",
        help="area: the mutant's test packages (default); rows: only the targets "
        "of the rows that should catch it (CI); all: //...",
    )
    parser.add_argument(
        "--no-fail-fast", action="store_true", help="run every target even after a failure"
    )
    parser.add_argument(
        "--baseline",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="first check the unmutated wheels, which must PASS (default; --no-baseline "
        "skips it, and the report then refuses the score of those results)",
    )
    parser.add_argument("--out", help="results directory (default mutation-runs/<UTC start>)")
    parser.add_argument(
        "--record", help="merge the results into this file (e.g. docs/mutation_results.json)"
    )
    parser.add_argument("--list", action="store_true", help="list the catalogue and exit")
    parser.add_argument(
        "--table", nargs="+", metavar="RESULTS", help="print the table of results files"
    )
    parser.add_argument(
        "--merge",
        nargs="+",
        metavar="RESULTS",
        help="with --record: merge these results files (in order) and exit",
    )
    args = parser.parse_args(argv)
    catalogue = catalogue_lib.load()
    if args.merge:
        if not args.record:
            print("mutants: --merge needs --record FILE", file=sys.stderr)
            return 2
        for path in args.merge:
            # Under `bazel run` the working directory is the runfiles tree: a relative path
            # names a file of the workspace, as --record's does.
            with open(os.path.join(ROOT, path), encoding="utf-8") as stream:
                data = json.load(stream)
            meta = {k: v for k, v in data.items() if k != "results"}
            record(os.path.join(ROOT, args.record), entries_of(data.get("results")), meta)
        return 0
    if args.table:
        merged: dict[str, dict] = {}
        for path in args.table:
            with open(os.path.join(ROOT, path), encoding="utf-8") as stream:
                data = json.load(stream)
            merged.update({e["id"]: e for e in entries_of(data.get("results"))})
        print(table(list(merged.values()), catalogue))
        return 0
    if args.list:
        for m in catalogue.mutants:
            print(f"{m.id:45} {m.area:9} {m.kind:7} {m.breaks}")
        print(f"{len(catalogue.mutants)} mutants")
        return 0
    lane = args.lane or catalogue.lane
    try:
        chosen = [catalogue.by_id(i) for i in args.only] if args.only else list(catalogue.mutants)
    except KeyError as err:
        print(f"mutants: {err.args[0]}", file=sys.stderr)
        return 2
    unknown = sorted(set(args.area) - set(catalogue.areas))
    if unknown:
        print(f"mutants: unknown area {unknown}; one of {sorted(catalogue.areas)}", file=sys.stderr)
        return 2
    if args.area:
        chosen = [m for m in chosen if m.area in args.area]
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    out = os.path.abspath(os.path.join(ROOT, args.out or os.path.join("mutation-runs", stamp)))
    os.makedirs(out, exist_ok=True)
    originals = {dist: pinned_wheel(lane, dist) for dist in WHEEL_FLAGS}
    fail_fast = not args.no_fail_fast

    def scope(mutant: catalogue_lib.Mutant) -> list[str]:
        if args.scope == "all":
            return ["//..."]
        if args.scope == "rows" and mutant.rows:
            return catalogue.row_targets_of(mutant)
        return catalogue.targets_of(mutant)

    meta = {
        "lane": lane,
        "scope": args.scope,
        "fail_fast": fail_fast,
        "command": "./bazelw run //tools/mutants -- "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "started": stamp,
        "catalogue_size": len(catalogue.mutants),
        "kit_commit": kit_commit(),
        "baseline": {"verdict": "not run"},
    }
    records: list[dict] = []
    status = 0
    if args.baseline:
        targets = (
            sorted({t for m in chosen for t in scope(m)}) if args.scope != "all" else ["//..."]
        )
        log = os.path.join(out, "baseline.log")
        command = check_command(
            originals, lane, targets, os.path.join(out, "report-baseline"), fail_fast
        )
        code, output, run_dir, seconds = run_check(command, log)
        verdict = "PASS" if code == 0 and "NOT TESTED" not in output else "FAIL"
        meta["baseline"] = {"verdict": verdict, "seconds": round(seconds, 1), "targets": targets}
        print(
            f"mutants: baseline (unmutated wheels) {verdict} in {seconds:.0f} s; log {log}",
            flush=True,
        )
        if verdict != "PASS":
            print("mutants: the unmutated wheels must PASS; no mutant was run", file=sys.stderr)
            _write(out, meta, records)
            return 1
    for mutant in chosen:
        entry = {
            "id": mutant.id,
            "area": mutant.area,
            "wheel": mutant.wheel,
            "kind": mutant.kind,
            "lane": lane,
            "breaks": mutant.breaks,
            "entry_digest": mutant.digest,
        }
        if mutant.equivalent:
            entry.update(outcome="equivalent", reason=mutant.equivalent, seconds=0.0)
            records.append(entry)
            print(f"mutants: {mutant.id}: equivalent ({mutant.equivalent})", flush=True)
            continue
        original = originals[mutant.wheel]
        wheel = os.path.join(out, "wheels", mutant.id, os.path.basename(original))
        try:
            sha = mutant_wheel.write_mutant(
                original, wheel, mutant.file, lambda text, m=mutant: catalogue_lib.apply(text, m)
            )
        except (catalogue_lib.CatalogueError, mutant_wheel.WheelError) as err:
            entry.update(outcome="inconclusive", reason=str(err), seconds=0.0)
            records.append(entry)
            print(f"mutants: {mutant.id}: inconclusive ({err})", flush=True)
            continue
        wheels = dict(originals, **{mutant.wheel: wheel})
        targets = scope(mutant)
        log = os.path.join(out, f"{mutant.id}.log")
        command = check_command(
            wheels, lane, targets, os.path.join(out, f"report-{mutant.id}"), fail_fast
        )
        code, output, run_dir, seconds = run_check(command, log)
        entry.update(classify(run_dir, code, output))

        def rerun(
            label: str, m: catalogue_lib.Mutant = mutant, w: dict[str, str] = wheels
        ) -> tuple[int, str, str | None]:
            alone = os.path.join(out, f"{m.id}.rerun.log")
            command = check_command(
                w, lane, [label], os.path.join(out, f"report-{m.id}-rerun"), False
            )
            code, output, run_dir, _ = run_check(command, alone)
            return code, output, run_dir

        entry = confirm_crashes(entry, rerun)
        entry.update(
            seconds=round(seconds, 1), sha256=sha, targets=targets, log=log, run_dir=run_dir
        )
        records.append(entry)
        said = entry.get("killed_by", [entry.get("reason", "")])[:2]
        print(f"mutants: {mutant.id}: {entry['outcome']} in {seconds:.0f} s {said}", flush=True)
        _write(out, meta, records)
        if entry["outcome"] != "killed":
            status = 1
        # The wheel is 100 MB and reproducible from the catalogue: keep its sha256 only.
        os.remove(wheel)
    _write(out, meta, records)
    # A kill is checked against the mutant's rows (catalogue_test checks the recorded ones):
    # a kill outside them, e.g. by whichever target failed first under --scope area, leaves
    # the rows unproven.
    for problem in catalogue_lib.kills_outside_rows(catalogue, {"results": records}):
        print(f"mutants: {problem}", flush=True)
        status = 1
    if args.record:
        record(os.path.join(ROOT, args.record), records, meta)
    print(table(records, catalogue))
    print(f"mutants: results in {os.path.relpath(out, ROOT)}/results.json")
    return status


def _write(out: str, meta: dict, records: list[dict]) -> None:
    with open(os.path.join(out, "results.json"), "w", encoding="utf-8") as stream:
        json.dump(dict(meta, results=records), stream, indent=1)
        stream.write("\n")


if __name__ == "__main__":
    sys.exit(main())
