"""A lane's hashed lock for a CPython its own locks cannot install on (3.10 here).

    lock_for_python.py PYTHON IN PREFERRED OUT

Resolves IN (a lane's `.in`, with its CPU-only `torch==X+cpu` read as the index's `torch==X`:
no CPU-only torch exists for other CPythons) with PYTHON's own pip against the package index,
holding every package at its version in PREFERRED (the lane's GPU lock) where that version
installs on PYTHON, and letting pip choose where it does not (numpy 2.4 needs 3.11, so 3.10
gets 2.2; pytest on 3.10 adds tomli and exceptiongroup). Each resolved release is written with
the sha256 of every file the index has for it, as pip-compile writes them, so that pip installs
it with --require-hashes --no-deps.

pip-compile would hash every file of torch's release itself (22 GB downloaded): this reads the
index's published digests instead (the simple API's JSON form). Standard library only; run by
update_lock.sh --python 3.X.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

INDEX = "https://pypi.org/simple"
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==([^ \\;]+)")


def canonical(name: str) -> str:
    """PEP 503's normalized project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(lock: Path) -> dict[str, str]:
    """{canonical name: version} of a lock's `name==version` lines."""
    return {
        canonical(m[1]): m[2] for line in lock.read_text().splitlines() if (m := PIN.match(line))
    }


# What a lane is: these stay pinned as its `.in` says. Its other pins (a lane's `.in` holds numpy
# and the rest at the default lane's versions) are preferences, like the preferred lock's.
LANE_PINS = {"apache-tvm", "apache-tvm-ffi", "torch"}


def requirements(in_file: Path) -> tuple[list[str], dict[str, str]]:
    """IN's requirements (`torch==X+cpu` read as `torch==X`), and the versions it prefers for
    the packages that do not define the lane."""
    reqs, preferred = [], {}
    for line in in_file.read_text().splitlines():
        line = re.sub(r"^(torch==[^+\s]+)\+cpu$", r"\1", line.split("#", 1)[0].strip())
        pin = PIN.match(line)
        if pin and canonical(pin[1]) not in LANE_PINS:
            preferred[canonical(pin[1])] = pin[2]
            line = pin[1]
        if line:
            reqs.append(line)
    return reqs, preferred


# Run by PYTHON: which (name, version, files) have a file it can install, by its own tags and
# each file's Requires-Python (pip's vendored `packaging`: what pip itself would decide).
_INSTALLABLE = """
import json, sys
from pip._vendor.packaging.specifiers import SpecifierSet
from pip._vendor.packaging.tags import sys_tags
from pip._vendor.packaging.utils import parse_wheel_filename
here, tags = "%d.%d.%d" % sys.version_info[:3], set(sys_tags())
def fits(name, need):
    if need and here not in SpecifierSet(need):
        return False
    return name.endswith(".whl") and bool(tags & set(parse_wheel_filename(name)[3]))
for name, version, files in json.load(sys.stdin):
    if any(fits(f, need) for f, need in files):
        print(name)
"""


def index_files(name: str) -> list[dict]:
    """The index's files of project `name` (simple API, JSON form: filename, hashes,
    requires-python)."""
    request = urllib.request.Request(
        f"{INDEX}/{canonical(name)}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.load(response)["files"]


def release_files(name: str, version: str) -> list[dict]:
    """The index's files of `name==version`."""
    stem = re.compile(rf"^{re.sub(r'[-_.]+', '[-_.]+', name)}-{re.escape(version)}(-|\\.tar)", re.I)
    return [f for f in index_files(name) if stem.match(f["filename"])]


def installable(python: str, held: dict[str, str]) -> dict[str, str]:
    """The pins of `held` that have a wheel PYTHON can install."""
    asked = [
        [n, v, [[f["filename"], f.get("requires-python") or ""] for f in release_files(n, v)]]
        for n, v in sorted(held.items())
    ]
    done = subprocess.run(
        [python, "-c", _INSTALLABLE], input=json.dumps(asked), capture_output=True, text=True
    )
    if done.returncode != 0:
        sys.exit(f"lock_for_python: {python} cannot read wheel tags: {done.stderr.strip()}")
    fits = set(done.stdout.split())
    for name in sorted(set(held) - fits):
        print(f"lock_for_python: {name}=={held[name]} has no wheel for {python}: pip chooses")
    return {n: v for n, v in held.items() if n in fits}


def resolve(python: str, reqs: list[str], held: dict[str, str]) -> list[dict]:
    """pip's install report items for `reqs` on `python`, with `held` as constraints."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL=INDEX, PIP_DISABLE_PIP_VERSION_CHECK="1")
    with tempfile.TemporaryDirectory() as scratch:
        req_file, constraints, report = (Path(scratch, n) for n in ("r.in", "c.txt", "r.json"))
        req_file.write_text("\n".join(reqs) + "\n")
        constraints.write_text("".join(f"{n}=={v}\n" for n, v in sorted(held.items())))
        argv = [python, "-m", "pip", "install", "--dry-run", "--ignore-installed"]
        argv += ["--only-binary=:all:", "--report", str(report), "-r", str(req_file)]
        argv += ["-c", str(constraints)]
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            said = (done.stderr + done.stdout)[-3000:]
            sys.exit(f"lock_for_python: pip cannot resolve {' '.join(reqs)} on {python}:\n{said}")
        return json.loads(report.read_text())["install"]


def index_hashes(name: str, version: str) -> list[str]:
    """The sha256 of every file the index has for `name==version`, sorted."""
    found = sorted({f["hashes"]["sha256"] for f in release_files(name, version)})
    if not found:
        sys.exit(f"lock_for_python: the index lists no file of {name}=={version}")
    return found


def main(argv: list[str]) -> int:
    """Writes OUT; prints what moved from PREFERRED."""
    if len(argv) != 4:
        sys.exit(__doc__.split("\n\n")[1])
    python, in_file, preferred, out = argv[0], Path(argv[1]), Path(argv[2]), Path(argv[3])
    version = subprocess.run(
        [python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    reqs, held = requirements(in_file)
    held = {**pins(preferred), **held}
    items = resolve(python, reqs, installable(python, held))
    lines = [
        f"# Pinned, hashed Python dependencies of the test venv on CPython {version[:4]}, from\n",
        f"# {in_file.name} with the index's torch (no CPU-only torch exists for this Python), "
        "every\n",
        f"# package held at its {preferred.name} version where that installs here. Made by\n",
        "# update_lock.sh --python (lock_for_python.py, the index's published sha256 of every "
        "file);\n",
        "# pip installs it with --require-hashes --no-deps.\n",
    ]
    for item in sorted(items, key=lambda i: canonical(i["metadata"]["name"])):
        name, ver = canonical(item["metadata"]["name"]), item["metadata"]["version"]
        if held.get(name) != ver:
            print(f"lock_for_python: {name}=={ver} (preferred: {held.get(name, 'none')})")
        hashes = index_hashes(name, ver)
        chosen = item["download_info"].get("archive_info", {}).get("hash", "").split("=")[-1]
        if chosen and chosen not in hashes:
            sys.exit(f"lock_for_python: pip's {name}=={ver} file is not among the index's hashes")
        entry = [f"{name}=={ver}"] + [f"    --hash=sha256:{h}" for h in hashes]
        lines.append(" \\\n".join(entry) + "\n")
    out.write_text("".join(lines))
    print(f"lock_for_python: wrote {out} ({len(items)} packages, CPython {version})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
