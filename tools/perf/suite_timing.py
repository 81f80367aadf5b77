#!/usr/bin/env python3
"""Time the suite several ways in one run on one machine and print a table with ratios.

Rows (choose with --rows; --quick drops `cold`):
  pytest      plain pytest over the Python tests in one process, TVM_TEST_TARGETS=llvm
              (the baseline every ratio is taken against)
  pytest_xdist  the same with `-n <CPUs>` (pytest-xdist, as Apache TVM's CI runs its tests;
              pinned in tools/perf/requirements.lock, installed beside the venv for this row)
  bazel_test  `./bazelw test --nocache_test_results TARGETS` with the build already cached
  noop        `./bazelw test TARGETS` with everything cached
  edit        a comment appended to one test file: only its targets re-run (then reverted)
  cold        a fresh clone in a temporary directory, new output base and new disk cache
              (pip's download cache may be warm)
  wheel       check my wheel: tools/verdict/check_my_wheel.py with a TVM wheel nothing has seen
              (the pinned apache-tvm wheel with a new zip comment, or --wheel), Bazel server
              warm: the lane venv's layer, then every test of //... against it, and the report
  wheel_pytest  its peer: a fresh venv, pip install of the lane's lock with that wheel in place
              of apache-tvm, then plain pytest over --pytest-paths, writing bytecode as any
              venv does (the other pytest rows write none, to leave the Bazel venv as it is)
  floor       not a run: the part of the Bazel phase that one process per target costs,
              (torch targets x `import tvm` + other TVM targets x `import tvm` without torch +
              tool targets x a bare pytest start) / CPUs, each start timed here (median of 3)

--repeat N measures the rows N times, round by round (each round in --rows order, a new wheel
for the wheel rows each round): a row's seconds are then its median, its note gives the range,
and a row beside pytest in every round also gets its ratio per round (the host's speed drifts
between rounds; within a round both saw the same host).

Run from anywhere with python3 (it drives the repo's ./bazelw and the Bazel venv's python):
  python3 tools/perf/suite_timing.py                    # everything, //...
  python3 tools/perf/suite_timing.py --quick --targets //python/tests/ffi/... \\
      --pytest-paths python/tests/ffi --edit-file python/tests/ffi/any_test.py
Measure on an otherwise idle machine: the rows share the CPUs with anything else running.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROWS = (
    "pytest",
    "pytest_xdist",
    "bazel_test",
    "noop",
    "edit",
    "cold",
    "wheel",
    "wheel_pytest",
    "floor",
)
LOCK = REPO / "third_party" / "python" / "requirements.lock"
XDIST_LOCK = REPO / "tools" / "perf" / "requirements.lock"
# Test packages whose targets never import TVM (the kit's own tools), unless they use torch.
_TOOL_PACKAGES = ("//tools/", "//python/tests/harness:")
# Starting a test process three ways, as the runner starts one: torch kept out (absent to TVM)
# and the collector's startup thresholds (tools/build_defs/pytest_runner.py).
_RUNNER_GC = "import gc; gc.set_threshold(100_000, 50, 100); "
_STARTS = {
    "torch": _RUNNER_GC + "import tvm",
    "no_torch": _RUNNER_GC + "import sys; sys.modules['torch'] = None; import tvm",
    "tool": _RUNNER_GC + "import pytest",
}
_SUMMARY = re.compile(
    r"Test cases in \d+ target\(s\): (\d+) passed, (\d+) failed, (\d+) skipped, (\d+) xfailed"
)
_ELAPSED = re.compile(r"INFO: Elapsed time: ([0-9.]+)s")
_RAN = re.compile(r"^(//\S+)\s+(?!\(cached\))(PASSED|FAILED)\b", re.M)


@dataclasses.dataclass
class Row:
    """One timed way of running the suite."""

    name: str
    what: str
    seconds: float
    cases: int | None = None
    note: str = ""


def _run(
    cmd: list[str], cwd: Path, env: dict[str, str] | None = None, check: bool = True
) -> tuple[float, str]:
    """Run `cmd`, return (wall seconds, combined output); raise with the output on failure."""
    start = time.monotonic()
    proc = subprocess.run(
        cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    elapsed = time.monotonic() - start
    if check and proc.returncode != 0:
        tail = "\n".join(proc.stdout.splitlines()[-30:])
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{tail}")
    return elapsed, proc.stdout


def _bazel_cases(output: str) -> int | None:
    """Cases bazelw's summary counted (passed + failed + skipped + xfailed), or None."""
    match = _SUMMARY.search(output)
    return sum(int(g) for g in match.groups()) if match else None


def _venv_python(bazelw: list[str]) -> Path:
    _, out = _run([*bazelw, "info", "output_base"], REPO)
    return Path(out.strip().splitlines()[-1]) / "external/python_venv/venv/bin/python"


def _tree_pycache() -> set[Path]:
    """The repo's __pycache__ folders (rglob does not enter the bazel-* links)."""
    return set(REPO.rglob("__pycache__"))


def _pytest(
    python: Path,
    paths: list[str],
    extra: list[str],
    env_extra: dict[str, str],
    tmp: Path,
    bytecode: bool = False,
) -> tuple[float, int]:
    """Plain pytest with `python` over `paths`, TVM_TEST_TARGETS=llvm: (seconds, cases).

    Without `bytecode` nothing writes .pyc files: the Bazel venv must stay as Bazel made it.
    With it, Python and pytest's assertion rewriter cache bytecode as in any venv (the tree's
    new __pycache__ folders are removed afterwards)."""
    xml = tmp / "junit.xml"
    env = dict(os.environ, TVM_TEST_TARGETS="llvm", **env_extra)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if not bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    before = _tree_pycache()
    seconds, out = _run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={xml}"]
        + [*extra, *paths],
        REPO,
        env=env,
        check=False,
    )
    for folder in _tree_pycache() - before:
        shutil.rmtree(folder, ignore_errors=True)
    if not xml.exists():
        raise RuntimeError(f"pytest wrote no JUnit XML:\n{out[-3000:]}")
    suites = ET.parse(xml).getroot().iter("testsuite")
    return seconds, sum(int(s.get("tests", 0)) for s in suites)


def time_pytest(bazelw: list[str], paths: list[str], extra: list[str], workers: int = 0) -> Row:
    """Plain pytest over `paths`, TVM_TEST_TARGETS=llvm: one process, or `workers` xdist
    workers (pytest-xdist from XDIST_LOCK, put on PYTHONPATH for this run only)."""
    python = _venv_python(bazelw)
    if not python.exists():
        raise RuntimeError(f"{python} missing: run ./bazelw build //... first")
    with tempfile.TemporaryDirectory() as tmp:
        env: dict[str, str] = {}
        xdist: list[str] = []
        if workers:
            site = Path(tmp) / "xdist"
            _run(
                [str(python), "-m", "pip", "install", "-q", "--require-hashes", "--no-deps"]
                + ["--target", str(site), "-r", str(XDIST_LOCK)],
                REPO,
            )
            env["PYTHONPATH"] = os.pathsep.join(
                p for p in (str(site), os.environ.get("PYTHONPATH")) if p
            )
            xdist = ["-p", "xdist", "-n", str(workers)]
        seconds, cases = _pytest(python, paths, [*xdist, *extra], env, Path(tmp))
    if workers:
        what = f"plain pytest -n {workers} (pytest-xdist)"
        return Row("pytest_xdist", what, seconds, cases)
    return Row("pytest", f"plain pytest, 1 process ({' '.join(paths)})", seconds, cases)


def time_bazel_test(bazelw: list[str], targets: list[str]) -> Row:
    """The test phase alone: build cached first (untimed), then every test runs again."""
    _run([*bazelw, "build", "--build_tests_only", *targets], REPO)
    seconds, out = _run([*bazelw, "test", "--nocache_test_results", *targets], REPO)
    return Row(
        "bazel_test",
        "./bazelw test --nocache_test_results (build cached)",
        seconds,
        _bazel_cases(out),
    )


def time_noop(bazelw: list[str], targets: list[str]) -> Row:
    """Everything cached: the cost of asking."""
    _run([*bazelw, "test", *targets], REPO)  # make sure results are cached (untimed)
    seconds, out = _run([*bazelw, "test", *targets], REPO)
    elapsed = _ELAPSED.search(out)
    note = f"Bazel's own elapsed time {elapsed.group(1)} s" if elapsed else ""
    return Row("noop", "./bazelw test, all cached", seconds, _bazel_cases(out), note=note)


def time_edit(bazelw: list[str], targets: list[str], edit_file: str) -> Row:
    """Append a comment to `edit_file`, re-test, then restore it (and its cached results)."""
    path = REPO / edit_file
    original = path.read_bytes()
    try:
        path.write_bytes(original + b"\n# suite_timing.py: a comment-only edit\n")
        seconds, out = _run([*bazelw, "test", *targets], REPO)
    finally:
        path.write_bytes(original)
    ran = sorted(set(_RAN.findall(out)))
    _run([*bazelw, "test", *targets], REPO)  # back to the cached state (untimed)
    names = ", ".join(t for t, _ in ran) or "none"
    return Row(
        "edit",
        f"comment added to {edit_file}",
        seconds,
        _bazel_cases(out),
        note=f"{len(ran)} target(s) re-ran: {names}",
    )


def time_cold(targets: list[str]) -> Row:
    """A fresh clone of HEAD, new output base and disk cache; removed afterwards."""
    tmp = Path(tempfile.mkdtemp(prefix="suite-timing-cold."))
    clone = tmp / "clone"
    bazelw = [str(clone / "bazelw"), f"--output_base={tmp / 'output_base'}"]
    try:
        _run(["git", "clone", "-q", str(REPO), str(clone)], tmp)
        user_rc = REPO / ".bazelrc.user"
        if user_rc.exists():  # the machine's resource limits apply to the clone too
            shutil.copy(user_rc, clone / ".bazelrc.user")
        seconds, out = _run(
            [*bazelw, "test", f"--disk_cache={tmp / 'disk_cache'}", *targets], clone
        )
        return Row(
            "cold", "fresh clone: new output base and disk cache", seconds, _bazel_cases(out)
        )
    finally:
        _run([*bazelw, "shutdown"], clone, check=False)
        shutil.rmtree(tmp, ignore_errors=True)


def fresh_wheel(bazelw: list[str], tmp: Path) -> Path:
    """The pinned apache-tvm wheel (pip download, its sha256 checked against the lock) with a
    zip comment naming this moment: the same files under a sha256 no cache has seen."""
    python = _venv_python(bazelw)
    pinned = re.search(r"^apache-tvm==(\S+)", LOCK.read_text(), re.M)
    if not pinned:
        raise RuntimeError(f"no apache-tvm pin in {LOCK}")
    _run(
        [str(python), "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"]
        + ["-d", str(tmp / "pinned"), f"apache-tvm=={pinned.group(1)}"],
        REPO,
    )
    (wheel,) = (tmp / "pinned").glob("*.whl")
    fresh = tmp / wheel.name
    shutil.copy(wheel, fresh)
    with zipfile.ZipFile(fresh, "a") as archive:
        archive.comment = f"suite_timing {time.time()}".encode()
    return fresh


def time_wheel(bazelw: list[str], wheel: Path) -> Row:
    """check_my_wheel.py over //... (the cpu config) with `wheel` as apache-tvm."""
    script = REPO / "tools" / "verdict" / "check_my_wheel.py"
    _run([*bazelw, "info", "release"], REPO)  # the server is warm, as for a user
    seconds, out = _run([sys.executable, str(script), "--tvm-wheel", str(wheel)], REPO, check=False)
    return Row(
        "wheel",
        "check_my_wheel.py --tvm-wheel (new wheel; layer venv, all tests, report)",
        seconds,
        _bazel_cases(out),
    )


def time_wheel_pytest(paths: list[str], extra: list[str], wheel: Path) -> Row:
    """A fresh venv with the lane's lock, `wheel` as apache-tvm, then plain pytest."""
    with tempfile.TemporaryDirectory() as tmp:
        venv = Path(tmp) / "venv"
        lock = Path(tmp) / "requirements.lock"
        kept, skipping = [], False
        for line in LOCK.read_text().splitlines(keepends=True):
            head = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", line)
            if head:
                skipping = head.group(1).lower() == "apache-tvm"
            if not skipping:
                kept.append(line)
        lock.write_text("".join(kept))
        start = time.monotonic()
        _run(["python3", "-m", "venv", str(venv)], REPO)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps"]
        _run([*pip, "--require-hashes", "--only-binary=:all:", "-r", str(lock)], REPO)
        _run([*pip, str(wheel)], REPO)
        seconds, cases = _pytest(venv / "bin" / "python", paths, extra, {}, Path(tmp), True)
        total = time.monotonic() - start
    return Row(
        "wheel_pytest",
        "fresh venv + pip install (lock, the wheel) + plain pytest",
        total,
        cases,
        note=f"pytest alone {seconds:.1f} s",
    )


def _start_seconds(python: Path, code: str, repeats: int = 3) -> float:
    return statistics.median(_run([str(python), "-c", code], REPO)[0] for _ in range(repeats))


def _query(bazelw: list[str], expression: str) -> set[str]:
    _, out = _run([*bazelw, "query", "--noshow_progress", expression], REPO)
    return {line for line in out.splitlines() if line.startswith("//")}


def time_floor(bazelw: list[str], targets: list[str]) -> Row:
    """What starting one process per py test costs at the least, spread over the CPUs."""
    python = _venv_python(bazelw)
    starts = {kind: _start_seconds(python, code) for kind, code in _STARTS.items()}
    pattern = " + ".join(targets)
    # The cuda variants are incompatible (not run) without --config=cuda; `manual` tests (the
    # whole op corpus) are not in `//...`.
    query = f'kind(py_test, tests({pattern})) except attr(tags, "\\bmanual\\b", {pattern})'
    py_tests = {t for t in _query(bazelw, query) if not t.endswith("_cuda")}
    torch = py_tests & _query(
        bazelw, f'attr(env, "TVM_CONFORMANCE_TORCH.?.?.?1", kind(py_test, {pattern}))'
    )
    tools = {t for t in py_tests - torch if t.startswith(_TOOL_PACKAGES)}
    others = py_tests - torch - tools
    cpus = os.cpu_count() or 1
    cpu_seconds = (
        len(torch) * starts["torch"]
        + len(others) * starts["no_torch"]
        + len(tools) * starts["tool"]
    )
    note = (
        f"({len(torch)} x {starts['torch']:.2f} s import tvm with torch + {len(others)} x "
        f"{starts['no_torch']:.2f} s without + {len(tools)} x {starts['tool']:.2f} s pytest "
        f"only) / {cpus} CPUs"
    )
    return Row(
        "floor", "process starts alone, spread over the CPUs", cpu_seconds / cpus, None, note
    )


def summarize(rounds: list[list[Row]]) -> list[Row]:
    """One row per name from several rounds: the median seconds, the range in the note, and,
    for a row measured beside `pytest` in every round, its ratio to pytest per round. One
    round gives its rows back unchanged."""
    if len(rounds) == 1:
        return rounds[0]
    names = list(dict.fromkeys(r.name for rows in rounds for r in rows))
    by_name = {name: [r for rows in rounds for r in rows if r.name == name] for name in names}
    pytest_each = [next((r for r in rows if r.name == "pytest"), None) for rows in rounds]
    summary = []
    for name in names:
        samples = by_name[name]
        seconds = [r.seconds for r in samples]
        note = (
            f"median of {len(seconds)}: "
            + ", ".join(f"{s:.1f}" for s in seconds)
            + f" s (range {min(seconds):.1f}-{max(seconds):.1f})"
        )
        if name != "pytest" and len(samples) == len(rounds) and all(pytest_each):
            ratios = [
                r.seconds / base.seconds
                for r, base in zip(samples, pytest_each, strict=True)  # type: ignore[union-attr]
            ]
            note += "; x pytest per round: " + ", ".join(f"{x:.2f}" for x in ratios)
        cases = {r.cases for r in samples}
        last = samples[-1]
        extra = f"; last round: {last.note}" if last.note else ""
        summary.append(
            Row(
                name,
                last.what,
                statistics.median(seconds),
                last.cases if len(cases) == 1 else None,
                note + extra,
            )
        )
    return summary


def format_table(rows: list[Row]) -> str:
    """Rows with their ratio to the pytest row (or to the first row without one)."""
    base = next((r for r in rows if r.name == "pytest"), rows[0])
    lines = [f"{'row':<11} {'seconds':>8} {'cases':>6} {'x ' + base.name:>10}  what", "-" * 80]
    for r in rows:
        cases = "" if r.cases is None else str(r.cases)
        lines.append(
            f"{r.name:<11} {r.seconds:>8.1f} {cases:>6} {r.seconds / base.seconds:>9.2f}x  {r.what}"
        )
        if r.note:
            lines.append(f"{'':<38}{r.note}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Measure the chosen rows in order and print the table."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[2:]),
    )
    parser.add_argument(
        "--rows",
        default=",".join(ROWS),
        help=f"comma-separated rows, in order (default: {','.join(ROWS)})",
    )
    parser.add_argument("--quick", action="store_true", help="skip the cold clone")
    parser.add_argument("--targets", nargs="+", default=["//..."], help="Bazel target patterns")
    parser.add_argument(
        "--pytest-paths",
        nargs="+",
        default=["python/tests", "tools/verdict", "tools/deviations", "tools/build_defs"],
        help="what plain pytest runs (the same tests as TARGETS)",
    )
    parser.add_argument(
        "--pytest-args",
        default="-p pytester",
        help="extra plain-pytest arguments (default: %(default)s)",
    )
    parser.add_argument(
        "--edit-file",
        default="python/tests/ffi/any_test.py",
        help="the test file the `edit` row touches",
    )
    parser.add_argument(
        "--wheel",
        type=Path,
        help="the TVM wheel of the wheel rows (default: the pinned one, re-stamped)",
    )
    parser.add_argument("--bazel-args", default="", help="extra Bazel startup options")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="measure every row this many times, round by round; report medians (default 1)",
    )
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args(argv)

    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    unknown = sorted(set(rows) - set(ROWS))
    if unknown:
        parser.error(f"unknown rows {unknown}; known: {', '.join(ROWS)}")
    if args.quick:
        rows = [r for r in rows if r != "cold"]
    if not rows:
        parser.error("no rows left to measure")
    if not (REPO / args.edit_file).is_file():
        parser.error(f"--edit-file {args.edit_file} is not a file in {REPO}")
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, not {args.repeat}")
    if args.repeat > 1 and args.wheel is not None and "wheel" in rows:
        parser.error(
            "--wheel with --repeat: the wheel row needs a wheel nothing has seen each round"
        )

    bazelw = [str(REPO / "bazelw"), *args.bazel_args.split()]
    _run([*bazelw, "build", *args.targets], REPO)  # extensions and venv for every row
    scratch = Path(tempfile.mkdtemp(prefix="suite-timing."))
    rounds = []
    for round_index in range(args.repeat):
        wheel = args.wheel
        if wheel is None and {"wheel", "wheel_pytest"} & set(rows):
            wheel = fresh_wheel(bazelw, scratch / f"round{round_index}")
        rounds.append(_measure_round(args, rows, bazelw, wheel, round_index))
    shutil.rmtree(scratch, ignore_errors=True)
    measured = summarize(rounds)
    print(
        f"{os.cpu_count()} CPUs, targets {' '.join(args.targets)}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    print(format_table(measured))
    if args.json:
        payload = {
            "rows": [dataclasses.asdict(r) for r in measured],
            "rounds": [[dataclasses.asdict(r) for r in rows] for rows in rounds],
        }
        args.json.write_text(json.dumps(payload, indent=2))
    return 0


def _measure_round(
    args: argparse.Namespace,
    rows: list[str],
    bazelw: list[str],
    wheel: Path | None,
    round_index: int,
) -> list[Row]:
    """Every chosen row once, in order."""
    measured: list[Row] = []
    for name in rows:
        where = f" (round {round_index + 1} of {args.repeat})" if args.repeat > 1 else ""
        print(f"suite_timing: measuring {name}{where} ...", file=sys.stderr, flush=True)
        if name == "pytest":
            measured.append(time_pytest(bazelw, args.pytest_paths, args.pytest_args.split()))
        elif name == "pytest_xdist":
            workers = os.cpu_count() or 1
            pytest_args = args.pytest_args.split()
            measured.append(time_pytest(bazelw, args.pytest_paths, pytest_args, workers))
        elif name == "bazel_test":
            measured.append(time_bazel_test(bazelw, args.targets))
        elif name == "noop":
            measured.append(time_noop(bazelw, args.targets))
        elif name == "edit":
            measured.append(time_edit(bazelw, args.targets, args.edit_file))
        elif name == "floor":
            measured.append(time_floor(bazelw, args.targets))
        elif name in ("wheel", "wheel_pytest"):
            assert wheel is not None  # made by main() whenever a wheel row is chosen
            if name == "wheel":
                measured.append(time_wheel(bazelw, wheel))
            else:
                pytest_args = args.pytest_args.split()
                measured.append(time_wheel_pytest(args.pytest_paths, pytest_args, wheel))
        else:
            measured.append(time_cold(args.targets))
    return measured


if __name__ == "__main__":
    sys.exit(main())
