#!/usr/bin/env python3
"""Check that every expected failure under python/tests goes through a listed deviation.

* A bare `pytest.mark.xfail` or `pytest.xfail()` is an expected failure that names no listed
  deviation (and need not be strict or name its exception).
* `deviations.xfail("<id>")` with an id that tvm_conformance.deviation_registry does not list
  (read statically, with ast; a non-literal argument is checked at import time instead).

Code inside strings (pytester inner tests) is not code of this tree and is not checked;
`known_failing_targets` (the plugin's per-target xfail) is allowed. .ci/run runs it over the
source tree:

    xfail_check.py [python/tests]

Standard library only (the registry is too). Exit status 1 when something is found.
"""

from __future__ import annotations

import ast
import os
import sys
from collections.abc import Iterable

_REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(_REPO, "python"))

from tvm_conformance import deviation_registry  # noqa: E402 (after the sys.path entry)


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


def _is_deviations_xfail(func: ast.expr) -> bool:
    """`deviations.xfail` or `tvm_conformance.deviations.xfail`."""
    if not (isinstance(func, ast.Attribute) and func.attr == "xfail"):
        return False
    base = func.value
    return (isinstance(base, ast.Name) and base.id == "deviations") or (
        isinstance(base, ast.Attribute) and base.attr == "deviations"
    )


def unknown_ids(source: str, known: Iterable[str]) -> list[tuple[int, str]]:
    """(line, id) of each `deviations.xfail("<id>")` whose literal id is not in `known`."""
    known = set(known)
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and _is_deviations_xfail(node.func) and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                if arg.value not in known:
                    found.append((node.lineno, arg.value))
    return sorted(found)


def problems(root: str, known: Iterable[str] | None = None) -> list[str]:
    """One line per file with a bare xfail, and per xfail naming an unlisted deviation id."""
    ids = set(deviation_registry.by_id()) if known is None else set(known)
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            with open(path, encoding="utf-8") as stream:
                source = stream.read()
            lines = bare_xfails(source)
            if lines:
                out.append(
                    f"xfail_check: {root}/{rel}:{lines[0]}: bare xfail (lines {lines}); use "
                    "tvm_conformance.deviations.xfail('<id>') with a registry entry"
                )
            out += [
                f"xfail_check: {root}/{rel}:{line}: deviations.xfail({dev_id!r}) names no "
                "deviation of tvm_conformance.deviation_registry"
                for line, dev_id in unknown_ids(source, ids)
            ]
    return out


def main(argv: list[str]) -> int:
    """Command-line entry point."""
    root = argv[0] if argv else os.path.join(_REPO, "python", "tests")
    found = problems(os.path.normpath(root))
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
