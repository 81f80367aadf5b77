"""Helpers of the `python_venv` repository rule: a user's own wheels and the venv's record.

    venv_tool.py drop LOCK OUT DIST...        copy the lock without DIST's entries
    venv_tool.py install-wheel DIST WHEEL     (venv python) check, then install WHEEL for DIST
    venv_tool.py record OUT LANE LOCK [DIST=WHEEL ...]   (venv python) write the venv's record

A user's wheel must be a wheel of the distribution it replaces, and its own requirement on
apache-tvm-ffi must be met by the tvm-ffi this venv has; otherwise the error names the file and
the requirement. The record (tvm_conformance_venv.json) names the lane, its lock, every
installed distribution with its version and, for a user's wheel, its file name and sha256; it
holds no path of this machine, so two clones get identical venvs.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def drop(lock: str, out: str, dists: list[str]) -> None:
    """Write `lock` to `out` without the entries (name line + hash lines) of `dists`."""
    names = {_canonical(d) for d in dists}
    kept, skipping = [], False
    with open(lock, encoding="utf-8") as stream:
        for line in stream:
            head = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", line)
            if head:
                skipping = _canonical(head.group(1)) in names
            elif not line.startswith((" ", "\t")):
                skipping = False
            if not skipping:
                kept.append(line)
    with open(out, "w", encoding="utf-8") as stream:
        stream.writelines(kept)


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


def record(out: str, lane: str, lock: str, wheels: list[str]) -> None:
    """Write the venv's record to `out` (sorted, machine independent)."""
    from importlib.metadata import distributions

    packages = {_canonical(d.metadata["Name"]): d.version for d in distributions()}
    user_wheels = {}
    for item in wheels:
        dist, _, path = item.partition("=")
        user_wheels[dist] = {"file": os.path.basename(path), "sha256": _sha256(path)}
    info = {
        "lane": lane,
        "lock": lock,
        "packages": dict(sorted(packages.items())),
        "user_wheels": user_wheels,
    }
    with open(out, "w", encoding="utf-8") as stream:
        json.dump(info, stream, indent=1, sort_keys=True)
        stream.write("\n")


def main(argv: list[str]) -> None:
    """Command-line entry point (see the module docstring)."""
    if len(argv) >= 3 and argv[0] == "drop":
        drop(argv[1], argv[2], argv[3:])
    elif len(argv) == 3 and argv[0] == "install-wheel":
        install_wheel(argv[1], argv[2])
    elif len(argv) >= 4 and argv[0] == "record":
        record(argv[1], argv[2], argv[3], argv[4:])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
