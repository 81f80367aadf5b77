"""Run the mutant catalogue against the kit: each mutant wheel through check-my-wheel.

    ./bazelw run //tools/mutants -- run [--only ID ...] [--area A ...] [--lane L]
                                        [--scope area|rows|all] [--no-baseline] [--no-fail-fast]
                                        [--out DIR] [--record FILE]
    ./bazelw run //tools/mutants -- fix [--only ID ...] [--scope rows|all] [--no-baseline]
    ./bazelw run //tools/mutants -- list
    ./bazelw run //tools/mutants -- table RESULTS.json ...
    ./bazelw run //tools/mutants -- merge RESULTS.json ... --record FILE

`run` is the default: the command lines of before subcommands still work (`-- --baseline
--only ID` is `-- run --baseline --only ID`; `--list`, `--table R`, `--merge R --record F` are
`list`, `table R`, `merge R --record F`).

For each mutant of tools/mutants/catalogue.json it builds the mutant wheel (mutant_wheel.py:
the lane's pinned wheel, fetched with pip from the lane's hashed lock, with one file edited and
its RECORD line fixed, under the original file name), runs tools/verdict/check_my_wheel.py with
it (the other wheel is the lane's pinned one) and classifies the run:

  killed        a case failed (or a strict xfail passed), the verdict failed for a problem
                of the TVM's own (a REGRESSION against a pinned expectation), or a test
                target crashed or timed out again when rerun alone: the kit caught the
                break; the failing cases or problems are recorded
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
`fix` runs the catalogue's fixes instead (edits that fix a recorded deviation): each must
PASS, its verdict naming exactly the cases the entry's `improves` lists as improvements.
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
import run_record  # noqa: E402
import strength  # noqa: E402
import verdict as verdict_lib  # noqa: E402

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


# Problem kinds of the TVM's own that count as a kill without a failed case; a target's status
# (a crash, a timeout) is confirm_crashes' to judge, and FAILED is a failed case.
_VERDICT_LINE = re.compile(r"^verdict: (?P<kind>[A-Z][A-Z0-9 ]*[A-Z0-9]): (?P<rest>.*)$", re.M)


def verdict_kills(output: str) -> list[str]:
    """The problems a check's verdict printed whose kind is the TVM's (verdict.WHOSE), less
    FAILED and a target's status: `KIND: label :: case: ...`."""
    kills = []
    for m in _VERDICT_LINE.finditer(output):
        kind = verdict_lib.table_kind(m.group("kind"))
        if verdict_lib.WHOSE.get(kind) == verdict_lib.TVM and kind not in (
            "FAILED", "TARGET <status>"
        ):  # fmt: skip
            kills.append(f"{m.group('kind')}: {m.group('rest')[:300]}")
    return kills


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
    # A FAIL verdict for a problem of the TVM's own that no case shows failed (a REGRESSION
    # against a pinned expectation, a required target skipped): a kill too.
    judged = verdict_kills(output)
    if judged:
        return {"outcome": "killed", "killed_by": judged}
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
        # No registry drift in a mutant's run record: the kill time measures the tests.
        env = dict(os.environ, TVM_CONFORMANCE_REGISTRY_DRIFT="0")
        status = subprocess.run(
            command, cwd=ROOT, stdout=stream, stderr=subprocess.STDOUT, check=False, env=env
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


# The subcommands; `run` is the default, and the flags of before subcommands (--list, --table,
# --merge) still name the others (legacy_argv).
COMMANDS = ("run", "fix", "list", "table", "merge")


def build_parser() -> argparse.ArgumentParser:
    """The command line: one subparser per subcommand, each calling its `cmd_*` function."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Without a subcommand, `run` is meant (--list, --table and --merge as before).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = sub.add_parser("run", help="put mutants through check-my-wheel (the default)")
    run.add_argument("--only", nargs="+", default=[], metavar="ID", help="these mutants")
    run.add_argument("--area", nargs="+", default=[], help="the mutants of these areas")
    run.add_argument(
        "--lane", help="the lane whose pinned wheels are mutated (default: the catalogue's)"
    )
    run.add_argument(
        "--scope",
        choices=("area", "rows", "all"),
        default="area",
        help="area: the mutant's test packages (default); rows: only the targets "
        "of the rows that should catch it (CI); all: //...",
    )
    run.add_argument(
        "--no-fail-fast", action="store_true", help="run every target even after a failure"
    )
    run.add_argument(
        "--baseline",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="first check the unmutated wheels, which must PASS (default; --no-baseline "
        "skips it, and the report then refuses the score of those results)",
    )
    run.add_argument("--out", help="results directory (default mutation-runs/<UTC start>)")
    run.add_argument(
        "--record", help="merge the results into this file (e.g. docs/mutation_results.json)"
    )
    run.set_defaults(func=cmd_run)
    fix = sub.add_parser(
        "fix", help="put the catalogue's fixes through check-my-wheel: PASS, their improvements"
    )
    fix.add_argument("--only", nargs="+", default=[], metavar="ID", help="these fixes")
    fix.add_argument("--lane", help="the lane whose pinned wheels are edited")
    fix.add_argument(
        "--scope", choices=("rows", "all"), default="rows", help="rows (default) or all: //..."
    )
    fix.add_argument(
        "--baseline", action=argparse.BooleanOptionalAction, default=True,
        help="first check the unedited wheels, which must PASS (default)",
    )  # fmt: skip
    fix.add_argument("--out", help="results directory (default mutation-runs/<UTC start>-fixes)")
    fix.set_defaults(func=cmd_fix)
    listing = sub.add_parser("list", help="list the catalogue")
    listing.set_defaults(func=cmd_list)
    tables = sub.add_parser("table", help="print the table of results files")
    tables.add_argument("results", nargs="+", metavar="RESULTS", help="results.json files")
    tables.set_defaults(func=cmd_table)
    merge = sub.add_parser("merge", help="merge results files (in order) into --record FILE")
    merge.add_argument("results", nargs="+", metavar="RESULTS", help="results.json files")
    merge.add_argument(
        "--record",
        required=True,
        help="the results file to merge into (docs/mutation_results.json)",
    )
    merge.set_defaults(func=cmd_merge)
    return parser


def legacy_argv(argv: list[str]) -> list[str]:
    """The command line of before subcommands, as one: `--list` is `list`, `--table R...` is
    `table R...`, `--merge R... --record F` is `merge R... --record F`, anything else is `run`
    with the same options. A command line that starts with a subcommand (or -h) is kept."""
    if argv and (argv[0] in COMMANDS or argv[0] in ("-h", "--help")):
        return list(argv)
    if "--list" in argv:
        return ["list"]
    for flag in ("--merge", "--table"):
        if flag not in argv:
            continue
        at = argv.index(flag)
        paths = []
        for arg in argv[at + 1 :]:
            if arg.startswith("-"):
                break
            paths.append(arg)
        rest = argv[:at] + argv[at + 1 + len(paths) :]
        command = [flag[2:], *paths]
        if flag == "--merge" and "--record" in rest:
            command += rest[rest.index("--record") : rest.index("--record") + 2]
        return command
    return ["run", *argv]


def main(argv: list[str] | None = None) -> int:
    """Command line (see the module docstring): parse, then the subcommand's function."""
    given = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(legacy_argv(given))
    args.given = given
    return args.func(args)


def read_results(paths: list[str]) -> list[dict]:
    """The results files at `paths`, in order, each path relative to the workspace (under
    `bazel run` the working directory is the runfiles tree)."""
    loaded = []
    for path in paths:
        with open(os.path.join(ROOT, path), encoding="utf-8") as stream:
            loaded.append(json.load(stream))
    return loaded


def cmd_merge(args: argparse.Namespace) -> int:
    """`merge RESULTS... --record FILE`: merge the results files, in order, into FILE."""
    for data in read_results(args.results):
        meta = {k: v for k, v in data.items() if k != "results"}
        record(os.path.join(ROOT, args.record), entries_of(data.get("results")), meta)
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    """`table RESULTS...`: the per-area table of the results files (a later one wins)."""
    merged: dict[str, dict] = {}
    for data in read_results(args.results):
        merged.update({e["id"]: e for e in entries_of(data.get("results"))})
    print(table(list(merged.values()), catalogue_lib.load()))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """`list`: one line per mutant of the catalogue, then their number."""
    catalogue = catalogue_lib.load()
    for m in catalogue.mutants:
        print(f"{m.id:45} {m.area:9} {m.kind:7} {m.breaks}")
    print(f"{len(catalogue.mutants)} mutants")
    return 0


def choose(
    catalogue: catalogue_lib.Catalogue, only: list[str], areas: list[str]
) -> list[catalogue_lib.Mutant]:
    """The mutants `only` names (all without it), of `areas` when given; ValueError naming an
    unknown id or area."""
    try:
        chosen = [catalogue.by_id(i) for i in only] if only else list(catalogue.mutants)
    except KeyError as err:
        raise ValueError(err.args[0]) from None
    unknown = sorted(set(areas) - set(catalogue.areas))
    if unknown:
        raise ValueError(f"unknown area {unknown}; one of {sorted(catalogue.areas)}")
    return [m for m in chosen if m.area in areas] if areas else chosen


def scope_targets(
    catalogue: catalogue_lib.Catalogue, mutant: catalogue_lib.Mutant, scope: str
) -> list[str]:
    """The targets one mutant's check runs under --scope `scope`."""
    if scope == "all":
        return ["//..."]
    if scope == "rows" and mutant.rows:
        return catalogue.row_targets_of(mutant)
    return catalogue.targets_of(mutant)


def run_baseline(
    originals: dict[str, str], lane: str, targets: list[str], out: str, fail_fast: bool
) -> dict:
    """Check the unmutated wheels over `targets`: the `baseline` record (verdict, seconds)."""
    log = os.path.join(out, "baseline.log")
    command = check_command(
        originals, lane, targets, os.path.join(out, "report-baseline"), fail_fast
    )
    code, output, _, seconds = run_check(command, log)
    verdict = "PASS" if code == 0 and "NOT TESTED" not in output else "FAIL"
    print(
        f"mutants: baseline (unmutated wheels) {verdict} in {seconds:.0f} s; log {log}", flush=True
    )
    return {"verdict": verdict, "seconds": round(seconds, 1), "targets": targets}


def run_mutant(  # noqa: PLR0913
    mutant: catalogue_lib.Mutant,
    originals: dict[str, str],
    lane: str,
    targets: list[str],
    out: str,
    fail_fast: bool,
) -> dict:
    """One mutant: its wheel written, checked and classified (a crash rerun alone); the entry
    of results.json. Equivalent mutants are not run; a wheel that cannot be written is
    inconclusive."""
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
        return dict(entry, outcome="equivalent", reason=mutant.equivalent, seconds=0.0)
    original = originals[mutant.wheel]
    wheel = os.path.join(out, "wheels", mutant.id, os.path.basename(original))
    try:
        sha = mutant_wheel.write_mutant(
            original, wheel, mutant.file, lambda text: catalogue_lib.apply(text, mutant)
        )
    except (catalogue_lib.CatalogueError, mutant_wheel.WheelError) as err:
        return dict(entry, outcome="inconclusive", reason=str(err), seconds=0.0)
    wheels = dict(originals, **{mutant.wheel: wheel})
    log = os.path.join(out, f"{mutant.id}.log")
    command = check_command(
        wheels, lane, targets, os.path.join(out, f"report-{mutant.id}"), fail_fast
    )
    code, output, run_dir, seconds = run_check(command, log)
    entry.update(classify(run_dir, code, output))

    def rerun(label: str) -> tuple[int, str, str | None]:
        alone = os.path.join(out, f"{mutant.id}.rerun.log")
        command = check_command(
            wheels, lane, [label], os.path.join(out, f"report-{mutant.id}-rerun"), False
        )
        code, output, run_dir, _ = run_check(command, alone)
        return code, output, run_dir

    entry = confirm_crashes(entry, rerun)
    entry.update(seconds=round(seconds, 1), sha256=sha, targets=targets, log=log, run_dir=run_dir)
    # The wheel is 100 MB and reproducible from the catalogue: keep its sha256 only.
    os.remove(wheel)
    return entry


def improved_cases(improvements: list[str]) -> list[str]:
    """The case keys of a verdict's improvements (`label :: suite: <case>: was -> now`)."""
    cases = []
    for line in improvements:
        parts = line.split(" :: ", 1)[-1].split(": ")
        cases.append(parts[1] if len(parts) > 2 else line)
    return sorted(cases)


def judge_fix(fix: catalogue_lib.Mutant, status: int, run_dir: str | None) -> dict:
    """improved (the check passed, its verdict naming exactly the fix's cases as improvements)
    or not improved, with why."""
    try:
        verdict = run_record.read(run_dir).get(run_record.VERDICT_KEY) if run_dir else None
    except (OSError, ValueError):
        verdict = None
    if not isinstance(verdict, dict):
        return {"outcome": "not improved", "reason": f"no verdict recorded (exit {status})"}
    cases = improved_cases(list(verdict.get("improvements") or []))
    word = verdict.get("status")
    if status != 0 or word not in ("PASS", "PARTIAL PASS"):
        reason = f"verdict {word} (exit {status}); a fix must not fail the run"
        return {"outcome": "not improved", "reason": reason, "improved": cases}
    if cases != sorted(fix.improves):
        reason = f"improvements {cases}, not the fix's {sorted(fix.improves)}"
        return {"outcome": "not improved", "reason": reason, "improved": cases}
    return {"outcome": "improved", "verdict": word, "improved": cases}


def run_fix(
    fix: catalogue_lib.Mutant, originals: dict[str, str], lane: str, targets: list[str], out: str
) -> dict:
    """One fix: its wheel written, checked (every target: no fail-fast) and judged."""
    entry = {
        "id": fix.id, "area": fix.area, "wheel": fix.wheel, "lane": lane, "fixes": fix.fixes,
        "improves": list(fix.improves), "entry_digest": fix.digest,
    }  # fmt: skip
    wheel = os.path.join(out, "wheels", fix.id, os.path.basename(originals[fix.wheel]))
    try:
        sha = mutant_wheel.write_mutant(
            originals[fix.wheel], wheel, fix.file, lambda text: catalogue_lib.apply(text, fix)
        )
    except (catalogue_lib.CatalogueError, mutant_wheel.WheelError) as err:
        return dict(entry, outcome="not improved", reason=str(err), seconds=0.0)
    wheels = dict(originals, **{fix.wheel: wheel})
    log = os.path.join(out, f"{fix.id}.log")
    command = check_command(wheels, lane, targets, os.path.join(out, f"report-{fix.id}"), False)
    code, _, run_dir, seconds = run_check(command, log)
    entry.update(judge_fix(fix, code, run_dir))
    entry.update(seconds=round(seconds, 1), sha256=sha, targets=targets, log=log, run_dir=run_dir)
    os.remove(wheel)
    return entry


def cmd_fix(args: argparse.Namespace) -> int:
    """`fix`: the baseline, then each chosen fix; results.json; exit 0 when every fix
    improved exactly its cases and the run passed."""
    catalogue = catalogue_lib.load()
    lane = args.lane or catalogue.lane
    known = {f.id: f for f in catalogue.fixes}
    unknown = [i for i in args.only if i not in known]
    if unknown:
        print(f"mutants: no fix {unknown}; known: {sorted(known)}", file=sys.stderr)
        return 2
    chosen = [known[i] for i in args.only] if args.only else list(catalogue.fixes)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    out = os.path.abspath(
        os.path.join(ROOT, args.out or os.path.join("mutation-runs", f"{stamp}-fixes"))
    )
    os.makedirs(out, exist_ok=True)
    originals = {dist: pinned_wheel(lane, dist) for dist in WHEEL_FLAGS}
    meta = {"lane": lane, "scope": args.scope, "started": stamp, "kit_commit": kit_commit(),
            "command": "./bazelw run //tools/mutants -- " + " ".join(args.given),
            "baseline": {"verdict": "not run"}}  # fmt: skip

    def targets_of(fix: catalogue_lib.Mutant) -> list[str]:
        return ["//..."] if args.scope == "all" else catalogue.row_targets_of(fix)

    if args.baseline:
        targets = sorted({t for f in chosen for t in targets_of(f)})
        meta["baseline"] = run_baseline(originals, lane, targets, out, False)
        if meta["baseline"]["verdict"] != "PASS":
            print("mutants: the unedited wheels must PASS; no fix was run", file=sys.stderr)
            _write(out, meta, [])
            return 1
    records, status = [], 0
    for fix in chosen:
        entry = run_fix(fix, originals, lane, targets_of(fix), out)
        records.append(entry)
        print(f"mutants: {fix.id}: {entry['outcome']} in {entry['seconds']:.0f} s "
              f"({entry.get('reason') or entry.get('improved')})", flush=True)  # fmt: skip
        _write(out, meta, records)
        status = status or int(entry["outcome"] != "improved")
    print(f"mutants: results in {os.path.relpath(out, ROOT)}/results.json")
    return status


def say(entry: dict) -> str:
    """The line printed when one mutant is done."""
    if entry["outcome"] in ("equivalent", "inconclusive") and "sha256" not in entry:
        return f"mutants: {entry['id']}: {entry['outcome']} ({entry.get('reason', '')})"
    said = entry.get("killed_by", [entry.get("reason", "")])[:2]
    return f"mutants: {entry['id']}: {entry['outcome']} in {entry['seconds']:.0f} s {said}"


def cmd_run(args: argparse.Namespace) -> int:
    """`run`: the baseline, then each chosen mutant; results.json, the table, the exit status
    (0 when every mutant run was killed inside its rows and the baseline passed)."""
    catalogue = catalogue_lib.load()
    lane = args.lane or catalogue.lane
    try:
        chosen = choose(catalogue, args.only, args.area)
    except ValueError as err:
        print(f"mutants: {err}", file=sys.stderr)
        return 2
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    out = os.path.abspath(os.path.join(ROOT, args.out or os.path.join("mutation-runs", stamp)))
    os.makedirs(out, exist_ok=True)
    originals = {dist: pinned_wheel(lane, dist) for dist in WHEEL_FLAGS}
    fail_fast = not args.no_fail_fast
    meta = {
        "lane": lane,
        "scope": args.scope,
        "fail_fast": fail_fast,
        "command": "./bazelw run //tools/mutants -- " + " ".join(args.given),
        "started": stamp,
        "catalogue_size": len(catalogue.mutants),
        "kit_commit": kit_commit(),
        "baseline": {"verdict": "not run"},
    }
    records: list[dict] = []
    if args.baseline:
        targets = (
            sorted({t for m in chosen for t in scope_targets(catalogue, m, args.scope)})
            if args.scope != "all"
            else ["//..."]
        )
        meta["baseline"] = run_baseline(originals, lane, targets, out, fail_fast)
        if meta["baseline"]["verdict"] != "PASS":
            print("mutants: the unmutated wheels must PASS; no mutant was run", file=sys.stderr)
            _write(out, meta, records)
            return 1
    status = 0
    for mutant in chosen:
        targets = scope_targets(catalogue, mutant, args.scope)
        entry = run_mutant(mutant, originals, lane, targets, out, fail_fast)
        records.append(entry)
        print(say(entry), flush=True)
        _write(out, meta, records)
        # As before subcommands: a mutant that ran (it has a wheel's sha256) must be killed;
        # an equivalent one, or one whose wheel could not be written, is reported only.
        if "sha256" in entry and entry["outcome"] != "killed":
            status = 1
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
