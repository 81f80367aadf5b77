#!/usr/bin/env python3
"""Write a pure-Python wheel from a pyproject.toml and the package's source files.

    write_wheel.py --pyproject python/pyproject.toml --package tvm_conformance \
        --out OUT.whl SRC.py...

Used by tvm_py_wheel (tools/build_defs/tvm.bzl) because neither setuptools nor any other build
backend can be fetched in the offline build. It reads the [project] table (name, version,
description, requires-python, license, dependencies, optional-dependencies, entry points) and
[tool.<package>.wheel] modules, checks that the sources given are exactly those modules, and
writes METADATA, WHEEL, entry_points.txt, top_level.txt and RECORD (sha256 of every file).
The output is byte-identical for the same inputs (fixed timestamps and permissions, sorted
entries), so Bazel caches it like any other action. Standard library only (tomli on 3.10).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import re
import sys
import zipfile
from collections.abc import Iterable

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

# Zip entries get a fixed date (the earliest a zip can hold) so rebuilds are byte-identical.
_EPOCH = (1980, 1, 1, 0, 0, 0)
_GENERATOR = "tvm_conformance write_wheel.py"


class WheelError(Exception):
    """The pyproject.toml or the sources do not describe a wheel this script can write."""


def _normalized(name: str) -> str:
    """The distribution name as wheel file names spell it (PEP 427/503)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def _hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode("ascii")


def metadata(project: dict) -> str:
    """The METADATA file (core metadata 2.1) of ``project`` (the [project] table)."""
    for key in ("name", "version"):
        if key not in project:
            raise WheelError(f"[project] has no {key}")
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
    ]
    if "description" in project:
        lines.append(f"Summary: {project['description']}")
    license_ = project.get("license", {})
    if isinstance(license_, dict) and "text" in license_:
        lines.append(f"License: {license_['text']}")
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    lines += [f"Requires-Dist: {dep}" for dep in project.get("dependencies", [])]
    for extra, deps in sorted(project.get("optional-dependencies", {}).items()):
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {dep}; extra == "{extra}"' for dep in deps]
    return "\n".join(lines) + "\n"


def entry_points(project: dict) -> str:
    """entry_points.txt: [project.entry-points] and [project.scripts]."""
    groups = dict(project.get("entry-points", {}))
    if "scripts" in project:
        groups["console_scripts"] = project["scripts"]
    out = []
    for group, entries in sorted(groups.items()):
        out.append(f"[{group}]")
        out += [f"{name} = {target}" for name, target in sorted(entries.items())]
        out.append("")
    return "\n".join(out)


def _module_files(modules: Iterable[str], sources: list[str], package: str) -> dict[str, str]:
    """{archive path: source path}; the sources must be exactly the listed modules."""
    by_module = {os.path.splitext(os.path.basename(s))[0]: s for s in sources}
    if len(by_module) != len(sources):
        raise WheelError("two sources have the same file name")
    wanted = set(modules)
    if set(by_module) != wanted:
        missing = ", ".join(sorted(wanted - set(by_module))) or "none"
        extra = ", ".join(sorted(set(by_module) - wanted)) or "none"
        raise WheelError(
            f"the sources are not the modules of [tool.{package}.wheel] modules "
            f"(listed but not given: {missing}; given but not listed: {extra})"
        )
    return {f"{package}/{m}.py": by_module[m] for m in sorted(by_module)}


def write(pyproject_path: str, package: str, sources: list[str], out: str) -> str:
    """Write the wheel to ``out``; return its canonical file name."""
    with open(pyproject_path, "rb") as f:
        config = tomllib.load(f)
    project = config.get("project")
    if not project:
        raise WheelError(f"{pyproject_path} has no [project] table")
    modules = config.get("tool", {}).get(package, {}).get("wheel", {}).get("modules")
    if not modules:
        raise WheelError(f"{pyproject_path} has no [tool.{package}.wheel] modules")
    dist = _normalized(project["name"])
    version = str(project["version"])
    info = f"{dist}-{version}.dist-info"

    files: list[tuple[str, bytes]] = []
    for arcname, source in _module_files(modules, sources, package).items():
        with open(source, "rb") as f:
            files.append((arcname, f.read()))
    files += [
        (f"{info}/METADATA", metadata(project).encode()),
        (
            f"{info}/WHEEL",
            (
                f"Wheel-Version: 1.0\nGenerator: {_GENERATOR}\n"
                "Root-Is-Purelib: true\nTag: py3-none-any\n"
            ).encode(),
        ),
        (f"{info}/top_level.txt", f"{package}\n".encode()),
    ]
    points = entry_points(project)
    if points:
        files.append((f"{info}/entry_points.txt", points.encode()))
    record = [f"{name},{_hash(data)},{len(data)}" for name, data in files]
    record.append(f"{info}/RECORD,,")
    files.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode()))

    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files:  # dist-info last, RECORD last of all (PEP 427)
            entry = zipfile.ZipInfo(name, date_time=_EPOCH)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(entry, data)
    return f"{dist}-{version}-py3-none-any.whl"


def main(argv: list[str]) -> int:
    """Command line: see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pyproject", required=True)
    parser.add_argument("--package", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument(
        "--expect-name",
        help="fail unless the wheel's canonical file name is this (the Bazel output's name)",
    )
    parser.add_argument("sources", nargs="+")
    args = parser.parse_args(argv)
    try:
        name = write(args.pyproject, args.package, args.sources, args.out)
    except WheelError as err:
        print(f"write_wheel: {err}", file=sys.stderr)
        return 1
    if args.expect_name and os.path.basename(args.expect_name) != name:
        print(
            f"write_wheel: the wheel is {name}, but the target declares "
            f"{os.path.basename(args.expect_name)}: update the version in the BUILD file",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
