#!/usr/bin/env python3
"""Check my wheel: run the suite against your TVM (and tvm-ffi) wheel, report, give the verdict.

    tools/verdict/check_my_wheel.py --tvm-wheel /path/apache_tvm-X-py3-none-any.whl
    tools/verdict/check_my_wheel.py --tvm-wheel W [--tvm-ffi-wheel F] [--config cpu|cuda|cuda_gpu]
                            [--lane default|ffi_next|tvm_prev] [--targets PATTERN ...]
                            [--fail-fast] [-- extra ./bazelw test args]

It checks the wheels before anything is built (a wheel of the right distribution, a readable
file), runs `./bazelw test` over `//...` with the wheels replacing the lane's pinned TVM /
tvm-ffi (the venv is keyed by each wheel's sha256), writes the report of that run alone to
`conformance-report/` (or --out), compared with the previous run of the same wheels and config
where there is one, prints the verdict (tools/verdict/verdict.py verdict_of()) and exits with it:
0 only when every target and every case of the run is as the registry of deviations says.

configs: cpu runs the llvm set; cuda adds the CUDA variants (cuda cases skip, with their reason,
without a GPU); cuda_gpu is cuda where a cuda case that cannot run fails (a GPU runner).
--targets runs only those target patterns instead of `//...` (a partial check: the verdict
speaks for those targets alone); --fail-fast stops at the first failed test target (Bazel's
--notest_keep_going), for a FAIL as cheap as possible (tools/mutants uses both).
Standard library only.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("BUILD_WORKSPACE_DIRECTORY") or os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.append(os.path.join(os.path.dirname(HERE), "config"))

import conformance_check  # noqa: E402
import lanes as lanes_table  # noqa: E402
import report  # noqa: E402
import report_model  # noqa: E402
import results  # noqa: E402
import verdict  # noqa: E402

CONFIGS = {"cpu": [], "cuda": ["--config=cuda"], "cuda_gpu": ["--config=cuda_gpu"]}
WHEEL_VARS = {
    "apache-tvm": "TVM_CONFORMANCE_TVM_WHEEL",
    "apache-tvm-ffi": "TVM_CONFORMANCE_TVM_FFI_WHEEL",
}


KEYS = {"apache-tvm": "tvm", "apache-tvm-ffi": "tvm_ffi"}  # archive.identity_of's keys


def sha256_of(path: str) -> str:
    """The file's sha256, hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class UsageError(Exception):
    """Bad input: printed as one line, exit status 2."""


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def check_wheel(path: str, dist: str) -> str:
    """The wheel's absolute path, once it is shown to be a readable wheel of `dist`."""
    path = os.path.abspath(os.path.expanduser(path))
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    if not path.endswith(".whl"):
        raise UsageError(
            f"{path}: not a wheel (.whl); build one with `pip wheel` or `python -m build`"
        )
    try:
        with zipfile.ZipFile(path) as archive:
            meta = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
            text = archive.read(meta).decode("utf-8", "replace")
    except (OSError, zipfile.BadZipFile, StopIteration) as err:
        raise UsageError(f"{path}: not a readable wheel with METADATA ({err})") from None
    name = next((line[6:].strip() for line in text.splitlines() if line.startswith("Name: ")), "")
    if _canonical(name) != dist:
        raise UsageError(f"{path}: a wheel of {name or 'an unnamed distribution'!r}, not {dist}")
    return path


def lanes() -> list[str]:
    """The lanes of the lanes table (tools/config/lanes.bzl), default first."""
    return list(lanes_table.read_lanes(Path(ROOT, "tools", "config", "lanes.bzl")))


def bazel_command(args: argparse.Namespace, wheels: dict[str, str]) -> list[str]:
    """The ./bazelw test command line for these wheels, lane and config."""
    command = [os.path.join(ROOT, "bazelw"), "test"]
    if args.lane != "default":
        command.append(f"--config={args.lane}")
    command += CONFIGS[args.config]
    command += [f"--repo_env={WHEEL_VARS[dist]}={path}" for dist, path in wheels.items()]
    if getattr(args, "fail_fast", False):
        command.append("--notest_keep_going")
    return command + list(args.bazel_args or []) + list(getattr(args, "targets", None) or ["//..."])


def main(argv: list[str] | None = None) -> int:
    """Command line; exit 0 on PASS, 1 on FAIL, 2 on bad input."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tvm-wheel", required=True, help="your apache-tvm wheel")
    parser.add_argument("--tvm-ffi-wheel", help="your apache-tvm-ffi wheel (else the lane's)")
    parser.add_argument("--config", default="cpu", help="cpu (default), cuda or cuda_gpu")
    parser.add_argument("--lane", default="default", help="whose pins fill in the rest")
    parser.add_argument("--out", default=os.path.join(ROOT, "conformance-report"))
    parser.add_argument(
        "--targets", nargs="+", metavar="PATTERN", help="target patterns instead of //..."
    )
    parser.add_argument(
        "--fail-fast", action="store_true", help="stop at the first failed test target"
    )
    parser.add_argument("bazel_args", nargs="*", help="after --: more ./bazelw test arguments")
    args = parser.parse_args(argv)
    try:
        if args.config not in CONFIGS:
            raise UsageError(f"--config={args.config}: one of {', '.join(CONFIGS)}")
        if args.lane not in lanes():
            raise UsageError(f"--lane={args.lane}: one of {', '.join(lanes())}")
        wheels = {"apache-tvm": check_wheel(args.tvm_wheel, "apache-tvm")}
        if args.tvm_ffi_wheel:
            wheels["apache-tvm-ffi"] = check_wheel(args.tvm_ffi_wheel, "apache-tvm-ffi")
    except UsageError as err:
        print(f"check_my_wheel: {err}", file=sys.stderr)
        return 2
    command = bazel_command(args, wheels)
    print("check_my_wheel: " + " ".join(command), flush=True)
    with tempfile.NamedTemporaryFile("r", suffix=".run") as where:
        env = dict(os.environ, TVM_CONFORMANCE_RUN_DIR_FILE=where.name)
        status = subprocess.run(command, cwd=ROOT, env=env, check=False).returncode
        run_dir = where.read().strip()
    if not run_dir:
        print(
            f"check_my_wheel: ./bazelw archived no run (exit {status}); see its output above",
            file=sys.stderr,
        )
        return 1
    run = results.read_run(run_dir)
    # Earlier runs of the same wheels and config, for the diff; never another identity's.
    same = [
        r
        for d in results.runs_in(os.path.dirname(run_dir))
        if os.path.normpath(d) != os.path.normpath(run_dir)
        for r in [results.read_run(d)]
        if r.identity_key() == run.identity_key()
    ]
    with open(os.path.join(ROOT, "docs", "conformance.md"), encoding="utf-8") as stream:
        rows = conformance_check.parse_rows(stream.read())
    built = report_model.build([*same, run], rows, verdict.load_registry(ROOT))
    report.write(built, args.out)
    column = built["columns"][0]
    for problem in column["verdict"]["problems"]:
        print(f"check_my_wheel: {problem}")
    # The run must have tested these very files: its venv record names their sha256.
    untested = [
        f"NOT TESTED: {path}: the run's venv record does not name this wheel with sha256 {sha}"
        for dist, path in wheels.items()
        for sha in [sha256_of(path)]
        if (run.identity.get(KEYS[dist]) or {}).get("sha256") != sha
    ]
    for problem in untested:
        print(f"check_my_wheel: {problem}")
    print(
        f"check_my_wheel: report of {os.path.relpath(run_dir, ROOT)} -> "
        f"{os.path.relpath(args.out, ROOT)}/report.html"
    )
    print(column["summary_line"])
    print(column["verdict"]["line"])
    return 0 if column["verdict"]["passed"] and not untested else 1


if __name__ == "__main__":
    sys.exit(main())
