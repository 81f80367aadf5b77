"""Helpers of the `python_venv` repository rule: a user's own wheels and the venv's record.

    venv_tool.py install-wheel DIST WHEEL     (venv python) check, then install WHEEL for DIST
    venv_tool.py record OUT LANE LOCK PIP_REPORT [--instead-of=LOCK] [DIST=WHEEL ...]  the record
    venv_tool.py sha256 FILE                  print the file's sha256
    venv_tool.py entries OUT [BASE]           (venv python) each distribution's files, by entry
    venv_tool.py groups OUT ENTRIES           (venv python) the runfiles groups
    venv_tool.py unlayer ENTRIES DIST...      (venv python) remove DIST's files from this venv
    venv_tool.py tops ENTRIES DIST...         print DIST's top-level site-packages entries
    venv_tool.py lane-layer LOCK BASE OUT     OUT: LOCK's apache-tvm / apache-tvm-ffi pins, where
                                              LOCK pins the rest as the lock BASE does (else exit 3)
    venv_tool.py merge-report BASE LAYER OUT  BASE's pip report with LAYER's installs in place

A user's wheel must be a wheel of the distribution it replaces, and its own requirement on
apache-tvm-ffi must be met by the tvm-ffi this venv has; otherwise the error names the file and
the requirement. The record (tvm_conformance_venv.json) names the lane, its lock, every
installed distribution with its version, the wheel file name and sha256 pip installed for
apache-tvm and apache-tvm-ffi (from `pip install --report`), a user's wheels likewise, and
what TVM's libinfo says of the build (commit, CUDA, LLVM); it holds no path of this machine,
so two clones get identical venvs. `./bazelw` copies it into each run archive: it is the
identity of what a run tested.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import subprocess
import sys
import urllib.parse
import zipfile


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _metadata(wheel: str) -> tuple[str, list[str]]:
    try:
        with zipfile.ZipFile(wheel) as archive:
            name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
            text = archive.read(name).decode("utf-8", "replace")
    except (OSError, zipfile.BadZipFile, StopIteration) as err:
        raise SystemExit(f"python_venv: {wheel} is not a wheel with METADATA: {err}") from None
    dist = next((line[6:].strip() for line in text.splitlines() if line.startswith("Name: ")), "")
    requires = [
        line[15:].strip() for line in text.splitlines() if line.startswith("Requires-Dist: ")
    ]
    return dist, requires


def install_wheel(dist: str, wheel: str) -> None:
    """Check `wheel` is `dist` and fits this venv's tvm-ffi, then pip-install it (no deps)."""
    from importlib.metadata import PackageNotFoundError, version

    from packaging.requirements import Requirement

    if not os.path.isfile(wheel):
        raise SystemExit(f"python_venv: the wheel {wheel} does not exist")
    name, requires = _metadata(wheel)
    if _canonical(name) != _canonical(dist):
        raise SystemExit(
            f"python_venv: {wheel} is a wheel of {name or 'an unnamed distribution'!r}, "
            f"not {dist}: point the variable at a wheel of {dist}"
        )
    for text in requires:
        req = Requirement(text)
        if _canonical(req.name) != "apache-tvm-ffi" or (req.marker and "extra" in str(req.marker)):
            continue
        try:
            have = version("apache-tvm-ffi")
        except PackageNotFoundError:
            have = "none"
        if have == "none" or not req.specifier.contains(have, prereleases=True):
            raise SystemExit(
                f"python_venv: {wheel} requires {req}, but this lane's apache-tvm-ffi is {have}; "
                "use a lane whose tvm-ffi meets it, or give TVM_CONFORMANCE_TVM_FFI_WHEEL too"
            )
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    command += ["--no-input", "--no-deps", "--no-compile", "--no-index", wheel]
    subprocess.run(command, check=True)


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# What the record says of each of these: the wheel installed and its sha256.
_IDENTITY_DISTS = ("apache-tvm", "apache-tvm-ffi")
# TVM's libinfo keys worth a line in the report's header.
_LIBINFO_KEYS = ("GIT_COMMIT_HASH", "USE_CUDA", "USE_LLVM")


def _report_wheels(pip_report: str) -> dict[str, dict[str, str]]:
    """Every distribution pip installed -> {version, file, sha256}, from its install report."""
    try:
        with open(pip_report, encoding="utf-8") as stream:
            report = json.load(stream)
    except (OSError, ValueError):
        return {}
    found = {}
    for item in report.get("install", []):
        name = _canonical(item.get("metadata", {}).get("name", ""))
        info = item.get("download_info", {})
        hashes = info.get("archive_info", {}).get("hashes", {})
        sha = (
            hashes.get("sha256")
            or info.get("archive_info", {}).get("hash", "").partition("sha256=")[2]
        )
        found[name] = {
            "version": item.get("metadata", {}).get("version", ""),
            "file": os.path.basename(urllib.parse.urlparse(info.get("url", "")).path),
            "sha256": sha,
        }
    return found


def _tvm_libinfo() -> dict[str, str]:
    """A few keys of tvm.support.libinfo(), read in a child (a broken wheel must not stop
    the record; its error is recorded instead)."""
    code = "import json, tvm; print(json.dumps(dict(tvm.support.libinfo())))"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["import tvm failed"])[-1]}
    try:
        info = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": "tvm.support.libinfo() printed no JSON"}
    return {key: str(info.get(key, "")) for key in _LIBINFO_KEYS}


def record(
    out: str, lane: str, lock: str, pip_report: str, wheels: list[str], instead_of: str = ""
) -> None:
    """Write the venv's record to `out` (sorted, machine independent). `instead_of`: the lock
    that pip could not install (no source for its CPU-only torch), `lock` installed in its
    place."""
    from importlib.metadata import distributions

    packages = {_canonical(d.metadata["Name"]): d.version for d in distributions()}
    user_wheels = {}
    for item in wheels:
        dist, _, path = item.partition("=")
        user_wheels[dist] = {"file": os.path.basename(path), "sha256": _sha256(path)}
    # A user's wheel replaced the pinned one that the base venv's pip report names.
    pinned = {k: v for k, v in _report_wheels(pip_report).items() if k not in user_wheels}
    info = {
        "lane": lane,
        "lock": lock,
        "lock_instead_of": instead_of,
        "packages": dict(sorted(packages.items())),
        "installed": {k: v for k, v in pinned.items() if k in _IDENTITY_DISTS},
        # Every wheel and the interpreter: this file is a runfile of every Python target, and
        # Bazel checks the venv's package directories only by content hash in its caches, not
        # locally (BUILD.venv.tpl), so a venv that differs in any wheel differs here too.
        "wheel_sha256": {k: v["sha256"] for k, v in sorted(pinned.items())},
        "python": platform.python_version(),
        "user_wheels": user_wheels,
        "tvm_libinfo": _tvm_libinfo(),
    }
    with open(out, "w", encoding="utf-8") as stream:
        json.dump(info, stream, indent=1, sort_keys=True)
        stream.write("\n")


# The distributions that only some targets need, each group with its roots: torch and what only
# torch requires (tests with uses_torch, exporters), and the installers (tests that pip-install).
_GROUP_ROOTS = {"TORCH_ONLY": ("torch",), "INSTALLERS": ("pip", "setuptools")}


def _requirements(dist) -> set[str]:
    """Canonical names `dist` requires in this environment (markers evaluated, no extras)."""
    from packaging.requirements import InvalidRequirement, Requirement

    names = set()
    for text in dist.requires or []:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            names.add(_canonical(req.name))
    return names


def _closure(roots: set[str], requires: dict[str, set[str]]) -> set[str]:
    seen, todo = set(), [r for r in roots if r in requires]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(r for r in requires[name] if r in requires and r not in seen)
    return seen


def groups(out: str, entries_json: str) -> None:
    """Write a .bzl file: for each group, the top-level site-packages entries that only that
    group's roots (and what only they require) own. Everything else is the core every
    py target gets; the groups are runfiles only the targets that need them add. The entries
    come from `entries_json` (written by `entries`), as RECORD files are scrubbed."""
    from importlib.metadata import distributions

    with open(entries_json, encoding="utf-8") as stream:
        known = json.load(stream)
    dists = {_canonical(d.metadata["Name"]): d for d in distributions()}
    requires = {name: _requirements(d) for name, d in dists.items()}

    def entries(names: set[str]) -> set[str]:
        return {top for name in names for top in known[name]["top"]}

    lines = ["# Generated by venv_tool.py groups (third_party/python/venv.bzl). Do not edit.\n"]
    for group, roots in _GROUP_ROOTS.items():
        members = _closure({_canonical(r) for r in roots}, requires)
        others = _closure(set(dists) - members, requires)
        own = members - others
        shared = entries(set(dists) - own)
        names = sorted(entries(own) - shared)
        listing = json.dumps(names, indent=4).replace("\n]", ",\n]")
        lines.append(f"{group} = {listing}\n")
    with open(out, "w", encoding="utf-8") as stream:
        stream.write("\n".join(lines))


def _site_packages() -> str:
    import sysconfig

    return sysconfig.get_paths()["purelib"]


def entries(out: str, base: str | None = None) -> None:
    """Write, for each installed distribution, its top-level site-packages entries and its
    files outside site-packages (venv-relative). Read from RECORD where it is still there
    (before the scrub, or a wheel just installed), else from `base`, the same file written
    for the venv this one was copied from."""
    from importlib.metadata import distributions

    known: dict[str, dict[str, list[str]]] = {}
    if base:
        with open(base, encoding="utf-8") as stream:
            known = json.load(stream)
    site = _site_packages()
    found = {}
    for dist in distributions():
        name = _canonical(dist.metadata["Name"])
        if dist.files is None:
            if name not in known:
                raise SystemExit(f"python_venv: {name} has no RECORD and no entry in {base}")
            found[name] = known[name]
            continue
        top, outside = set(), set()
        for path in dist.files:
            if path.parts and path.parts[0] == "..":
                located = os.path.normpath(os.path.join(site, str(path)))
                outside.add(os.path.relpath(located, sys.prefix))
            elif path.parts and path.parts[0] != "__pycache__":
                top.add(path.parts[0])
        found[name] = {"top": sorted(top), "outside": sorted(outside)}
    with open(out, "w", encoding="utf-8") as stream:
        json.dump(found, stream, indent=1, sort_keys=True)
        stream.write("\n")


def unlayer(entries_json: str, dists: list[str]) -> None:
    """Remove `dists` from this venv (a copy whose files may be hard links into the base
    venv: files are unlinked, never written). An entry another distribution shares cannot
    be removed alone: that is an error, not a partial removal."""
    import shutil

    with open(entries_json, encoding="utf-8") as stream:
        known = json.load(stream)
    site = _site_packages()
    names = {_canonical(d) for d in dists}
    for name in sorted(names):
        if name not in known:
            raise SystemExit(f"python_venv: this venv has no {name} to replace")
        for top in known[name]["top"]:
            sharers = sorted(o for o, e in known.items() if o not in names and top in e["top"])
            if sharers:
                raise SystemExit(
                    f"python_venv: {name} shares {top} with {', '.join(sharers)}; "
                    "it cannot be replaced by a layer"
                )
            path = os.path.join(site, top)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            elif os.path.lexists(path):
                os.remove(path)
            cache = os.path.join(site, "__pycache__")
            if top.endswith(".py") and os.path.isdir(cache):  # a top-level module's bytecode
                for pyc in os.listdir(cache):
                    if pyc.startswith(top[:-3] + "."):
                        os.remove(os.path.join(cache, pyc))
        for rel in known[name]["outside"]:
            path = os.path.join(sys.prefix, rel)
            if os.path.lexists(path):
                os.remove(path)


def _lock_blocks(path: str) -> dict[str, str]:
    """A hashed lock's requirements: canonical name -> its block (the `name==version` line and
    its sorted `--hash` options; comments and `# via` lines dropped)."""
    blocks: dict[str, list[str]] = {}
    current = None
    with open(path, encoding="utf-8") as stream:
        for raw in stream:
            line = raw.split("#", 1)[0].strip().rstrip("\\").strip()
            if not line:
                continue
            if line.startswith("--hash="):
                if current is None:
                    raise SystemExit(f"python_venv: {path}: a --hash line before any requirement")
                blocks[current].append(line)
                continue
            name = _canonical(re.split(r"[=<>!~;\[ ]", line, maxsplit=1)[0])
            current = name
            blocks[name] = [line]
    return {name: "\n".join([lines[0], *sorted(lines[1:])]) for name, lines in blocks.items()}


def lane_layer(lock: str, base_lock: str, out: str) -> bool:
    """Where `lock` pins every distribution but apache-tvm and apache-tvm-ffi exactly as
    `base_lock` does (same versions, same hashes), write those two requirements to `out` (a
    lock a layer installs over the base's venv) and return True; else say what differs and
    return False. A lane's venv is then the default lane's with the lane's TVM pair in place:
    torch and the rest are not installed and compiled again for each lane."""
    mine, theirs = _lock_blocks(lock), _lock_blocks(base_lock)
    differ = sorted(
        name
        for name in set(mine) | set(theirs)
        if name not in _IDENTITY_DISTS and mine.get(name) != theirs.get(name)
    )
    missing = [name for name in _IDENTITY_DISTS if name not in mine]
    if differ or missing:
        what = ", ".join(differ[:5]) or f"no {' / '.join(missing)} in {lock}"
        print(f"python_venv: {lock} differs from {base_lock} beyond TVM's pair ({what})")
        return False
    with open(out, "w", encoding="utf-8") as stream:
        for name in _IDENTITY_DISTS:
            first, *hashes = mine[name].split("\n")
            stream.write(" \\\n    ".join([first, *hashes]) + "\n")
    return True


def merge_report(base: str, layer: str, out: str) -> None:
    """Write `base`'s pip install report with the distributions `layer`'s report installed in
    place of its own entries for them: the report of the venv the layer made."""
    with open(base, encoding="utf-8") as stream:
        merged = json.load(stream)
    with open(layer, encoding="utf-8") as stream:
        added = json.load(stream).get("install", [])
    names = {_canonical(item.get("metadata", {}).get("name", "")) for item in added}
    kept = [
        item
        for item in merged.get("install", [])
        if _canonical(item.get("metadata", {}).get("name", "")) not in names
    ]
    merged["install"] = kept + added
    with open(out, "w", encoding="utf-8") as stream:
        json.dump(merged, stream, indent=1)


def main(argv: list[str]) -> None:
    """Command-line entry point (see the module docstring)."""
    if len(argv) == 3 and argv[0] == "install-wheel":
        install_wheel(argv[1], argv[2])
    elif len(argv) >= 5 and argv[0] == "record":
        rest = argv[5:]
        instead_of = ""
        if rest and rest[0].startswith("--instead-of="):
            instead_of = rest.pop(0).partition("=")[2]
        record(argv[1], argv[2], argv[3], argv[4], rest, instead_of)
    elif len(argv) == 3 and argv[0] == "groups":
        groups(argv[1], argv[2])
    elif len(argv) in (2, 3) and argv[0] == "entries":
        entries(argv[1], argv[2] if len(argv) == 3 else None)
    elif len(argv) >= 3 and argv[0] == "tops":
        with open(argv[1], encoding="utf-8") as stream:
            known = json.load(stream)
        print(" ".join(t for d in argv[2:] for t in known[_canonical(d)]["top"]))
    elif len(argv) >= 3 and argv[0] == "unlayer":
        unlayer(argv[1], argv[2:])
    elif len(argv) == 4 and argv[0] == "lane-layer":
        if not lane_layer(argv[1], argv[2], argv[3]):
            raise SystemExit(3)
    elif len(argv) == 4 and argv[0] == "merge-report":
        merge_report(argv[1], argv[2], argv[3])
    elif len(argv) == 2 and argv[0] == "sha256":
        print(_sha256(argv[1]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
