#!/usr/bin/env python3
"""Check my wheel: run the suite against your TVM (and tvm-ffi) wheel, report, give the verdict.

    tools/verdict/check_my_wheel.py --tvm-wheel /path/apache_tvm-X-py3-none-any.whl
    tools/verdict/check_my_wheel.py --tvm-wheel W [--tvm-ffi-wheel F] [--config cpu|cuda|cuda_gpu]
                            [--lane default|ffi_next|tvm_prev] [--python 3.X]
                            [--targets PATTERN ...] [--fail-fast] [-- extra ./bazelw test args]

It checks the wheels before anything is built (a wheel of the right distribution, a readable
file, tags that install into the lane's Python and platform), runs `./bazelw test` over `//...`
with the wheels replacing the lane's pinned TVM / tvm-ffi (the venv is keyed by each wheel's
sha256), writes the report of that run alone to `conformance-report/` (or --out), compared with
the previous run of the same wheels and config where there is one, prints the verdict
(tools/verdict/verdict.py verdict_of()) and exits with it: 0 only when every target and every
case of the run is as the registry of deviations says.

configs: cpu runs the llvm set; cuda adds the CUDA variants (cuda cases skip, with their reason,
without a GPU); cuda_gpu is cuda where a cuda case that cannot run fails (a GPU runner).
--targets runs only those target patterns instead of `//...` (a partial check: the verdict
speaks for those targets alone; without --targets a partial run exits 1, naming what it left
out); --fail-fast stops at the first failed test target (Bazel's
--notest_keep_going), for a FAIL as cheap as possible (tools/mutants uses both).

The Python the venv is made with: `--python 3.X` (`python3.X` on PATH) or `--python PATH`,
else the one a tvm-ffi wheel is built for (`cp312` in its tags: python3.12) where the host
python3 cannot install it, else the host python3. Another Python than python3 reaches the venv
rule as --repo_env=TVM_CONFORMANCE_PYTHON (third_party/python/venv.bzl); the run's identity
names it. CPython 3.10 is refused: the locks pin releases that need 3.11.
Standard library only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
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
import run_identity  # noqa: E402
import verdict  # noqa: E402

CONFIGS = {"cpu": [], "cuda": ["--config=cuda"], "cuda_gpu": ["--config=cuda_gpu"]}
WHEEL_VARS = {
    "apache-tvm": "TVM_CONFORMANCE_TVM_WHEEL",
    "apache-tvm-ffi": "TVM_CONFORMANCE_TVM_FFI_WHEEL",
}


KEYS = {"apache-tvm": "tvm", "apache-tvm-ffi": "tvm_ffi"}  # archive.identity_of's keys
# The CPythons a lane's venv can be made with (third_party/python/venv.bzl _SUPPORTED_PYTHON).
PYTHONS = ("3.10", "3.11", "3.12", "3.13")
PYTHON_ENV = "TVM_CONFORMANCE_PYTHON"


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


def check_wheel(path: str, dist: str, python: dict[str, str] | None = None) -> str:
    """The wheel's absolute path, once it is shown to be a readable wheel of `dist` whose tags
    install into `python` (lane_python(): the lane's interpreter and platform) where given."""
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
            wheel_file = meta.rpartition("/")[0] + "/WHEEL"
            wheel_text = (
                archive.read(wheel_file).decode("utf-8", "replace")
                if wheel_file in archive.namelist()
                else ""
            )
    except (OSError, zipfile.BadZipFile, StopIteration) as err:
        raise UsageError(f"{path}: not a readable wheel with METADATA ({err})") from None
    name = next((line[6:].strip() for line in text.splitlines() if line.startswith("Name: ")), "")
    if _canonical(name) != dist:
        raise UsageError(f"{path}: a wheel of {name or 'an unnamed distribution'!r}, not {dist}")
    if python is not None:
        tags = wheel_tags(os.path.basename(path), wheel_text)
        if not tags:
            raise UsageError(f"{path}: no compatibility tags (no `Tag:` in WHEEL, no tags in name)")
        if not any(tag_installs(tag, python) for tag in tags):
            raise UsageError(
                f"{path}: its tags ({', '.join(sorted(tags))}) cannot install into the lane's "
                f"Python {python['version']} on {python['platform']}"
            )
    return path


# The lane's venv is made by the host `python3` on PATH (third_party/python/venv.bzl): this
# asks it what it is. Standard library only.
_PYTHON_FACTS = (
    "import json, platform, sys, sysconfig\n"
    "libc, libc_version = platform.libc_ver()\n"
    "print(json.dumps({'version': '%d.%d' % sys.version_info[:2], "
    "'implementation': sys.implementation.name, "
    "'platform': sysconfig.get_platform().replace('-', '_').replace('.', '_'), "
    "'machine': platform.machine(), 'glibc': libc_version if libc == 'glibc' else '', "
    "'executable': sys.executable}))\n"
)


def lane_python(python: str = "python3") -> dict[str, str]:
    """The lane's Python and platform: version (`3.11`), implementation, platform
    (`linux_x86_64`), machine and glibc version, from the interpreter the venv rule uses."""
    try:
        out = subprocess.run(
            [python, "-c", _PYTHON_FACTS], capture_output=True, text=True, timeout=60, check=True
        )
        return json.loads(out.stdout)
    except subprocess.CalledProcessError as err:
        said = (err.stderr or "").strip().splitlines()[-1:] or ["no message"]
        why = f"exit status {err.returncode}, {said[0][:100]}"
        raise UsageError(f"cannot ask {python} (the lanes' Python) what it is: {why}") from None
    except (OSError, subprocess.SubprocessError, ValueError) as err:
        raise UsageError(f"cannot ask {python} (the lanes' Python) what it is: {err}") from None


def wheel_tags(file_name: str, wheel_text: str = "") -> set[str]:
    """`py-abi-platform` tags of a wheel: its WHEEL file's `Tag:` lines, else its file name's
    (compressed tag sets, `py2.py3-none-any`, expanded)."""
    tags = {line[4:].strip() for line in wheel_text.splitlines() if line.startswith("Tag:")}
    if tags:
        return tags
    parts = file_name[: -len(".whl")].split("-") if file_name.endswith(".whl") else []
    if len(parts) < 5:
        return set()
    pys, abis, plats = (p.split(".") for p in parts[-3:])
    return {f"{py}-{abi}-{plat}" for py in pys for abi in abis for plat in plats}


_MANYLINUX_LEGACY = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


def tag_installs(tag: str, python: dict[str, str]) -> bool:
    """True if pip on `python` (lane_python()) can install a wheel with this one tag."""
    py, _, rest = tag.partition("-")
    abi, _, plat = rest.partition("-")
    major, minor = (int(x) for x in python["version"].split("."))
    cp = f"cp{major}{minor}"
    py_ok = py in (f"py{major}", f"py{major}{minor}", cp) or (
        py.startswith(f"cp{major}") and abi == "abi3" and int(py[3:] or 0) <= minor
    )
    if py.startswith("py") and py[2:].isdigit() and len(py) > 3:
        py_ok = py_ok or (py[2] == str(major) and int(py[3:]) <= minor)
    abi_ok = abi in ("none", "abi3", cp) or (abi.startswith(cp) and abi != cp and abi[-1] in "dmu")
    if abi == "abi3" and python.get("implementation", "cpython") != "cpython":
        abi_ok = False
    return py_ok and abi_ok and _platform_ok(plat, python)


def _platform_ok(plat: str, python: dict[str, str]) -> bool:
    if plat == "any":
        return True
    machine = python.get("machine", "")
    if plat == python.get("platform") or plat == f"linux_{machine}":
        return python.get("platform", "").startswith("linux")
    glibc = tuple(int(x) for x in re.findall(r"\d+", python.get("glibc", ""))[:2])
    for legacy, needs in _MANYLINUX_LEGACY.items():
        if plat == f"{legacy}_{machine}":
            return bool(glibc) and glibc >= needs
    match = re.fullmatch(rf"manylinux_(\d+)_(\d+)_{re.escape(machine)}", plat)
    if match:
        return bool(glibc) and glibc >= (int(match[1]), int(match[2]))
    return False


def wheel_python(path: str) -> str:
    """`3.12` for a wheel whose tags are all for CPython 3.12 (`cp312-...`), else ""."""
    try:
        with zipfile.ZipFile(path) as archive:
            name = next((n for n in archive.namelist() if n.endswith(".dist-info/WHEEL")), "")
            wheel_text = archive.read(name).decode("utf-8", "replace") if name else ""
    except (OSError, zipfile.BadZipFile):
        wheel_text = ""
    found = {
        f"{m[1]}.{m[2]}"
        for tag in wheel_tags(os.path.basename(path), wheel_text)
        for m in [re.fullmatch(r"cp(3)(\d+)-.*", tag)]
        if m
    }
    return found.pop() if len(found) == 1 else ""


def choose_python(asked: str | None, tvm_ffi_wheel: str | None) -> str:
    """The interpreter for the lane's venv: `python3`, or the absolute path of `python3.X` for
    --python 3.X, or for the Python a tvm-ffi wheel is built for where python3 cannot take it."""
    why = f"--python={asked}"
    if asked is None and tvm_ffi_wheel:
        wanted = wheel_python(tvm_ffi_wheel)
        if wanted and wanted != lane_python()["version"]:
            asked, why = wanted, f"{tvm_ffi_wheel} is for CPython {wanted}"
    if asked is None:
        return "python3"
    if "/" in asked:  # an interpreter's path (a pyenv build, say): lane_python() reads it
        if not os.access(asked, os.X_OK):
            raise UsageError(f"--python={asked}: not an executable file")
        return os.path.abspath(asked)
    if asked not in PYTHONS:
        raise UsageError(f"{why}: the kit runs on CPython {', '.join(PYTHONS)}")
    found, tried = find_python(asked)
    if found is None:
        said = "; ".join(tried) or f"no python{asked} on PATH or under pyenv"
        raise UsageError(
            f"{why}, but no working CPython {asked} was found ({said}): "
            "install it, or pass --python PATH"
        )
    return found


def python_candidates(version: str) -> list[str]:
    """Every `python3.X` on PATH, in PATH order, then pyenv's builds of 3.X (newest first).

    All of them, not the first: a pyenv shim is on PATH for every version pyenv knows, but
    runs only where that version is active (exit 127 elsewhere)."""
    name = f"python{version}"
    found = [
        os.path.join(folder, name)
        for folder in os.environ.get("PATH", "").split(os.pathsep)
        if folder and os.access(os.path.join(folder, name), os.X_OK)
    ]
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv", "versions")
    builds = root.glob(f"{version}.*/bin/{name}") if root.is_dir() else []
    patch = lambda path: [int(x) if x.isdigit() else -1 for x in path.parts[-3].split(".")]  # noqa: E731
    found += [str(path) for path in sorted(builds, key=patch, reverse=True)]
    return list(dict.fromkeys(found))


def find_python(version: str) -> tuple[str | None, list[str]]:
    """The first candidate (python_candidates) that runs and is CPython `version`, and what
    each one tried before it said."""
    tried = []
    for candidate in python_candidates(version):
        try:
            facts = lane_python(candidate)
        except UsageError as err:
            tried.append(f"{candidate} does not run ({str(err).rsplit(' is: ', 1)[-1]})")
            continue
        if facts.get("version") == version and facts.get("implementation") == "cpython":
            # The interpreter itself, not a shim that runs it only under this shell's settings.
            return facts.get("executable") or candidate, tried
        tried.append(f"{candidate} is {facts.get('implementation')} {facts.get('version')}")
    return None, tried


def lanes() -> list[str]:
    """The lanes of the lanes table (tools/config/lanes.bzl), default first."""
    return list(lanes_table.read_lanes(Path(ROOT, "tools", "config", "lanes.bzl")))


def bazel_command(args: argparse.Namespace, wheels: dict[str, str]) -> list[str]:
    """The ./bazelw test command line for these wheels, lane and config."""
    command = [os.path.join(ROOT, "bazelw"), "test"]
    # Without --targets the check is of the whole suite: a partial run (a filter among the
    # extra arguments, a suite test that did not run) fails. With them it is partial by design.
    targets = getattr(args, "targets", None)
    command.append(
        f"--allow-partial=check my wheel --targets {' '.join(targets)}"
        if targets
        else "--require-whole"
    )
    if args.lane != "default":
        command.append(f"--config={args.lane}")
    command += CONFIGS[args.config]
    command += [f"--repo_env={WHEEL_VARS[dist]}={path}" for dist, path in wheels.items()]
    python = getattr(args, "interpreter", "python3")
    if python != "python3":
        command.append(f"--repo_env={PYTHON_ENV}={python}")
    if getattr(args, "fail_fast", False):
        command.append("--notest_keep_going")
    return command + list(args.bazel_args or []) + list(getattr(args, "targets", None) or ["//..."])


def own_column(run_dir: str, rows_path: str) -> tuple[dict, dict]:
    """The report column of the run in `run_dir` (the archive ./bazelw just wrote), and the
    report: that run alone, diffed against the newest earlier run (by start time, older than
    this one) of the same identity key. Never chosen by time order among the archives: an
    older archive with a later start (a clock stepped back, a copied archive) is not it."""
    run = results.read_run(run_dir)
    earlier = [
        r
        for d in results.runs_in(os.path.dirname(run_dir))
        if os.path.normpath(d) != os.path.normpath(run_dir)
        for r in [results.read_run(d)]
        if run_identity.identity_key(r) == run_identity.identity_key(run)
        and _start(r) < _start(run)
    ]
    with open(rows_path, encoding="utf-8") as stream:
        rows = conformance_check.parse_rows(stream.read())
    against = {run.source: max(earlier, key=_start)} if earlier else {}
    built = report_model.build(
        [run], rows, verdict.load_registry(ROOT), every=True, against=against
    )
    name = os.path.basename(os.path.normpath(run_dir))
    (column,) = [c for c in built["columns"] if c["run"] == name]
    return column, built


def _start(run: results.Run) -> float:
    return float(run.meta.get("start", 0.0) or 0.0)


def main(argv: list[str] | None = None) -> int:
    """Command line; exit 0 on PASS, 1 on FAIL, 2 on bad input."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tvm-wheel", required=True, help="your apache-tvm wheel")
    parser.add_argument("--tvm-ffi-wheel", help="your apache-tvm-ffi wheel (else the lane's)")
    parser.add_argument("--config", default="cpu", help="cpu (default), cuda or cuda_gpu")
    parser.add_argument("--lane", default="default", help="whose pins fill in the rest")
    parser.add_argument(
        "--python", help="3.10 to 3.13, or an interpreter's path: the venv's CPython"
    )
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
        args.interpreter = choose_python(args.python, args.tvm_ffi_wheel)
        python = lane_python(args.interpreter)
        wheels = {"apache-tvm": check_wheel(args.tvm_wheel, "apache-tvm", python)}
        if args.tvm_ffi_wheel:
            wheels["apache-tvm-ffi"] = check_wheel(args.tvm_ffi_wheel, "apache-tvm-ffi", python)
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
    column, built = own_column(run_dir, rows_path=os.path.join(ROOT, "docs", "conformance.md"))
    report.write(built, args.out)
    for problem in column["verdict"]["problems"]:
        print(f"check_my_wheel: {problem}")
    # The run must have tested these very files: its venv record names their sha256.
    untested = [
        f"NOT TESTED: {path}: the run's venv record does not name this wheel with sha256 {sha}"
        for dist, path in wheels.items()
        for sha in [sha256_of(path)]
        if (run_identity.venv_identity(run).get(KEYS[dist]) or {}).get("sha256") != sha
    ]
    for problem in untested:
        print(f"check_my_wheel: {problem}")
    print(
        f"check_my_wheel: report of {os.path.relpath(run_dir, ROOT)} -> "
        f"{os.path.relpath(args.out, ROOT)}/report.html"
    )
    # Without --targets the whole suite is required (./bazelw's verdict said so too).
    partial = [] if args.targets else list(run_identity.partial(run))
    if partial:
        print(
            "check_my_wheel: PARTIAL: the whole suite is required without --targets, and this "
            f"run left out: {' '.join(partial)}"
        )
    # What the wheel changed in TVM's registries: information, not part of the verdict.
    for line in report_model.drift_lines(column):
        print(f"check_my_wheel: {line}")
    print(column["summary_line"])
    print(column["verdict"]["line"])
    return 0 if column["verdict"]["passed"] and not untested and not partial else 1


if __name__ == "__main__":
    sys.exit(main())
