"""The conformance report: which behaviours hold for each TVM build, config and machine tested.

    ./bazelw run //tools/verdict:report                  # newest run per identity and config
    ./bazelw run //tools/verdict:report -- RUN_A RUN_B   # exactly these runs (conformance-runs/...)
    ./bazelw run //tools/verdict:report -- --all         # every archived run, one column each

writes `conformance-report/` at the workspace root: report.md, report.html (self-contained, no
network) and report.json, prints each column's verdict line and summary line

    verdict: PASS|FAIL (<identity>): T targets (...), C cases (...), bazel exit N, P problems
    N behaviours: P hold, D deviations, F fail, S skipped on <column>

and exits 1 when any column's verdict is FAIL (verdict.verdict_of(), the same function as
`./bazelw test` and the conformance check).

A column is one run. Runs are never merged: by default the newest run of each identity
(lane + the sha256 of the TVM and tvm-ffi wheels its venv installed, from run.json), config
(cpu, cuda, cuda_gpu, +asan/+ubsan), target patterns (negative ones too) and selecting options
(test and tag filters, --runs_per_test) is shown, except partial runs (a pattern other than
`//...`, an exclusion, a filter), which are shown only when named. So a user's wheel is its own
column and a run of another wheel, or of part of the suite, can never relabel one. Each
column's header is what ./bazelw recorded in that run's archive: the identity, the machine,
and where the results came from (executed here, the action cache, the disk cache or a remote
cache). Rows are the behaviours of docs/conformance.md
(labels only: the verdict counts every case); a cell aggregates the row's cases over targets
and exec modes ("2/2", a deviation id, "crashed", "1/2 failed"), details on hover. A section
lists the rows whose outcome differs between columns, and each column is compared with the
previous run of the same identity and config (added, fixed, newly failing, changed).
"""

from __future__ import annotations

import argparse
import os
import sys

import conformance_check
import render_html
import render_json
import render_md
import report_model
import results
import strength
import verdict

# The files of a report and the renderer of each, all over one model (report_model.build()).
RENDERERS = {"report.md": render_md, "report.html": render_html, "report.json": render_json}


def write(report: dict, out_dir: str) -> None:
    """report.md, report.html and report.json into `out_dir`."""
    os.makedirs(out_dir, exist_ok=True)
    for name, renderer in RENDERERS.items():
        with open(os.path.join(out_dir, name), "w", encoding="utf-8") as stream:
            stream.write(renderer.render(report))


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
        return 2 if named else 1
    if not run_dirs:
        print(
            f"report: no run archives in {', '.join(paths)}; run ./bazelw test first",
            file=sys.stderr,
        )
        return 1
    try:
        runs = [results.read_run(d) for d in run_dirs]
    except (OSError, ValueError) as err:
        print(f"report: cannot read a run: {err}", file=sys.stderr)
        return 2
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
    report = report_model.build(runs, rows, verdict.load_registry(workspace), every=every)
    # The kit's own strength (tools/mutants): the same for every column, from the recorded run.
    report["strength"] = strength.load(workspace)
    write(report, args.out)
    print(f"report: {len(runs)} run(s), {len(report['columns'])} column(s) -> {args.out}")
    if report["partial_left_out"]:
        print(
            "report: partial runs (part of the suite left out) are never a default column; "
            "name one to see it: " + ", ".join(report["partial_left_out"])
        )
    for column in report["columns"]:
        print(column["verdict"]["line"])
        print(column["summary_line"])
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
