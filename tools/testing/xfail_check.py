#!/usr/bin/env python3
"""Check that every expected failure under python/tests goes through deviations.xfail.

A bare `pytest.mark.xfail` or `pytest.xfail()` is an expected failure that names no listed
deviation (and need not be strict or name its exception). Code inside strings (pytester inner
tests) is not code of this tree and is not checked; `known_failing_targets` (the plugin's
per-target xfail) is allowed. .ci/run runs it over the source tree:

    xfail_check.py [python/tests]

Standard library only. Exit status 1 when a bare xfail is found.
"""

from __future__ import annotations

import ast
import os
import sys

# Files whose xfails another branch converts to deviations.xfail; the lead empties this list
# when merging it (the check fails while a listed file no longer needs to be here).
NOT_YET_CONVERTED: tuple[str, ...] = ()


def bare_xfails(source: str) -> list[int]:
    """Line numbers of `pytest.mark.xfail`, `pytest.xfail` and `from pytest import xfail`."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr == "xfail":
            base = node.value
            if (isinstance(base, ast.Name) and base.id == "pytest") or (
                isinstance(base, ast.Attribute)
                and base.attr == "mark"
                and isinstance(base.value, ast.Name)
                and base.value.id == "pytest"
            ):
                lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module in ("pytest", "_pytest.outcomes"):
            lines += [node.lineno for alias in node.names if alias.name == "xfail"]
    return sorted(lines)


def problems(root: str, allowed: tuple[str, ...] = NOT_YET_CONVERTED) -> list[str]:
    """One line per file with a bare xfail, and per allowed file that no longer has one."""
    offenders: dict[str, list[int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as stream:
                    found = bare_xfails(stream.read())
                if found:
                    offenders[os.path.relpath(path, root).replace(os.sep, "/")] = found
    out = [
        f"xfail_check: {root}/{rel}:{lines[0]}: bare xfail (lines {lines}); use "
        "tvm_conformance.deviations.xfail('<id>') with a registry entry"
        for rel, lines in sorted(offenders.items())
        if rel not in allowed
    ]
    out += [
        f"xfail_check: {rel} is converted; remove it from NOT_YET_CONVERTED"
        for rel in allowed
        if rel not in offenders and os.path.exists(os.path.join(root, rel))
    ]
    return out


def main(argv: list[str]) -> int:
    """Command-line entry point."""
    root = (
        argv[0]
        if argv
        else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "tests")
    )
    found = problems(os.path.normpath(root))
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
