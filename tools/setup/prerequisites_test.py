"""The one list of the machine's prerequisites (tools/setup/prerequisites.txt) is whole and used.

Every program that a test, a repository rule, ./bazelw or a CI step probes for (`shutil.which`,
`rctx.which`, `command -v`, `type -ap`) is on the list, as a prerequisite or as "probed, not
needed" with its reason; the list names nothing no one probes; no script but
tools/setup/prerequisites.sh runs apt-get itself; and the script's check, apt-line and install
read the list as documented (run on a stand-in list, never installing anything).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

# The source tree (this file's real path: tools/setup/prerequisites_test.py).
ROOT = Path(os.path.realpath(__file__)).parents[2]
LIST = ROOT / "tools" / "setup" / "prerequisites.txt"
SCRIPT = ROOT / "tools" / "setup" / "prerequisites.sh"
SKIP_DIRS = {".git", "conformance-runs", "conformance-report", "mutation-runs", "__pycache__"}
SUFFIXES = {".py", ".sh", ".bzl", ".yml", ".yaml"}
EXTRA_FILES = ("bazelw", ".ci/run")

# A probe names its program literally: `which("x")`, `map(which, ("x", "y"))`, `command -v x`,
# `type -ap x`, or a `_NAMES = [...]` list that a repository rule's `rctx.which(name)` walks.
_LITERAL = re.compile(r"""which\(\s*["']([\w.+-]+)["']\s*\)""")
_MAPPED = re.compile(r"""map\(\s*shutil\.which\s*,\s*[(\[]([^)\]]*)[)\]]""")
_NAMES_LIST = re.compile(r"""^_NAMES\s*=\s*\[([^\]]*)\]""", re.M)
# (A name that goes on with a variable, "python$version", is not a literal probe.)
_SHELL = re.compile(r"""(?:command\s+-v|type\s+-ap?)\s+["']?([A-Za-z][\w.+-]*)(?=["'\s;)|&]|$)""")
_QUOTED = re.compile(r"""["']([\w.+-]+)["']""")
# A line that runs apt-get install (not one that names the command in a message).
_RUNS_APT = re.compile(r"""(?:^|[;&|(]\s*|\bsudo\s+)apt-get\s+(?:-\S+\s+)*install\b""")


def parse_list(text: str) -> tuple[dict[str, str], dict[str, str]]:
    """({program: package} of the prerequisites' cmd probes, {program: why} of `probed` lines)."""
    needed: dict[str, str] = {}
    probed: dict[str, str] = {}
    for line in text.splitlines():
        fields = line.split(None, 2)
        if not fields or fields[0].startswith("#"):
            continue
        assert len(fields) == 3, f"prerequisites.txt: three columns wanted: {line!r}"
        if fields[0] == "probed":
            name, why = fields[1], fields[2]
            assert why.strip(), f"prerequisites.txt: {name}: say why it is not needed"
            probed[name] = why
            continue
        kind, _, arg = fields[1].partition(":")
        assert kind in ("cmd", "file", "pymod"), f"prerequisites.txt: unknown probe {fields[1]!r}"
        if kind == "cmd":
            for name in arg.split("|"):
                needed[name] = fields[0]
    return needed, probed


def probes_in(text: str) -> set[str]:
    """The programs a file's text probes for by name."""
    found = set(_LITERAL.findall(text)) | set(_SHELL.findall(text))
    for group in _MAPPED.findall(text):
        found |= set(_QUOTED.findall(group))
    if "rctx.which(name)" in text:
        for group in _NAMES_LIST.findall(text):
            found |= set(_QUOTED.findall(group))
    return found


def source_files() -> list[Path]:
    """The repo's scripts, Python, Starlark and workflow files (no run outputs, no bazel-*)."""
    files = [ROOT / extra for extra in EXTRA_FILES]
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith("bazel-")]
        for name in filenames:
            if Path(name).suffix in SUFFIXES:
                files.append(Path(dirpath) / name)
    return files


def probes_by_file() -> dict[str, set[str]]:
    out = {}
    for path in source_files():
        if path.name == "prerequisites_test.py":
            continue  # this file's examples are not probes
        found = probes_in(path.read_text(encoding="utf-8", errors="replace"))
        if found:
            out[str(path.relative_to(ROOT))] = found
    return out


def test_every_probed_program_is_on_the_list() -> None:
    needed, probed = parse_list(LIST.read_text(encoding="utf-8"))
    by_file = probes_by_file()
    # The scan found the probes this check is about (not nothing).
    everything = set().union(*by_file.values())
    assert {"chromium", "npm", "bwrap", "node", "python3.10"} <= everything, sorted(everything)
    unlisted = sorted(
        f"{where}: {name}"
        for where, names in by_file.items()
        for name in names
        if name not in needed and name not in probed
    )
    assert not unlisted, (
        "probed but not in tools/setup/prerequisites.txt (add it as a prerequisite, or as "
        "`probed NAME why` if the step does without it):\n" + "\n".join(unlisted)
    )


def test_the_list_names_nothing_no_one_probes() -> None:
    _, probed = parse_list(LIST.read_text(encoding="utf-8"))
    everything = set().union(*probes_by_file().values())
    stale = sorted(set(probed) - everything)
    assert not stale, f"`probed` lines no file probes for any more: {stale}"


def test_a_planted_probe_is_caught() -> None:
    needed, probed = parse_list(LIST.read_text(encoding="utf-8"))
    planted = (
        'x = shutil.which("frobnicate")\n'
        'if command -v "zorblax" >/dev/null; then :; fi\n'
        "y = next(map(shutil.which, ('quux-browser', 'quux')))\n"
    )
    found = probes_in(planted)
    assert found == {"frobnicate", "zorblax", "quux-browser", "quux"}
    assert not found & (set(needed) | set(probed))


def test_only_the_setup_script_runs_apt_get() -> None:
    runners = []
    for path in source_files():
        rel = str(path.relative_to(ROOT))
        if rel == "tools/setup/prerequisites.sh" or path.suffix not in (".sh", ".yml", ""):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.strip()
            if code.startswith(("#", "echo")) or "echo " in code:
                continue
            if _RUNS_APT.search(code):
                runners.append(f"{rel}:{number}: {code}")
    assert not runners, "install through tools/setup/prerequisites.sh:\n" + "\n".join(runners)


@pytest.fixture
def stand_in(tmp_path: Path) -> Path:
    """The real script beside a stand-in list: one present program, one absent one, one
    absent non-Debian program, a present file and an absent one, an importable module."""
    shutil.copy(SCRIPT, tmp_path / "prerequisites.sh")
    (tmp_path / "prerequisites.txt").write_text(
        "# a comment\n"
        "present-pkg   cmd:no-such-program-zz|sh        a test\n"
        "absent-pkg    cmd:no-such-program-zz           the lint\n"
        "-             cmd:no-such-python-zz            a CI step; pyenv install it\n"
        "file-pkg      file:/\n"
        "gone-file     file:/no/such/file/zz            the build\n"
        "mod-pkg       pymod:os,sys                     the venv\n"
        "probed nvidia-smi   a GPU machine's\n",
        encoding="utf-8",
    )
    return tmp_path / "prerequisites.sh"


def _run(script: Path, *args: str, uid: int | None = None) -> subprocess.CompletedProcess:
    """The script on the stand-in list; `uid`: what a stand-in `id -u` says."""
    env = {k: v for k, v in os.environ.items() if k != "TVM_CONFORMANCE_QUIET_PREREQUISITES"}
    if uid is not None:
        bin_dir = script.parent / "bin"
        bin_dir.mkdir(exist_ok=True)
        (bin_dir / "id").write_text(f"#!/bin/sh\necho {uid}\n", encoding="utf-8")
        (bin_dir / "id").chmod(0o755)
        env["PATH"] = f"{bin_dir}:{env['PATH']}"
    return subprocess.run(
        ["bash", str(script), *args], capture_output=True, text=True, env=env, check=False
    )


def test_check_lists_what_is_missing(stand_in: Path) -> None:
    out = _run(stand_in, "check")
    assert out.returncode == 1
    names = [line.split("\t")[0] for line in out.stdout.splitlines()]
    assert names == ["absent-pkg", "-", "gone-file"]


def test_apt_line_names_the_debian_packages_and_says_how_to_get_the_others(stand_in: Path) -> None:
    out = _run(stand_in, "apt-line")
    assert out.returncode == 0
    assert out.stdout == "apt-get update && apt-get install -y absent-pkg gone-file\n"
    assert "no-such-python-zz: a CI step; pyenv install it" in out.stderr


def test_install_without_root_prints_the_line_and_fails(stand_in: Path) -> None:
    out = _run(stand_in, "install", uid=1000)
    assert out.returncode == 1
    assert "as root: apt-get update && apt-get install -y absent-pkg gone-file" in out.stderr


def test_a_bad_probe_or_command_is_a_usage_error(stand_in: Path) -> None:
    list_file = stand_in.parent / "prerequisites.txt"
    list_file.write_text("x   http:example   who\n", encoding="utf-8")
    assert _run(stand_in, "check").returncode == 2
    assert _run(stand_in, "frobnicate").returncode == 2


def test_nothing_missing_is_silent(stand_in: Path) -> None:
    (stand_in.parent / "prerequisites.txt").write_text("ok  cmd:sh  all\n", encoding="utf-8")
    assert _run(stand_in, "check").returncode == 0
    out = _run(stand_in, "apt-line")
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")
