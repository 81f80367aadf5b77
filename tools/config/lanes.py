"""The lanes table (tools/config/lanes.bzl) for tools that are not Starlark.

    python3 tools/config/lanes.py names [--except default]   # one lane name a line
    python3 tools/config/lanes.py bazelrc [--write FILE]     # the --config=<lane> lines

lanes.bzl is plain data so that it parses as Python: the `LANES = {...}` literal is read with
ast.literal_eval, nothing in it is executed. Standard library only (bazelw runs it with the
system python3).
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

LANES_BZL = Path(__file__).resolve().with_name("lanes.bzl")


def read_lanes(path: Path = LANES_BZL) -> dict[str, dict[str, str]]:
    """The LANES dict of a lanes.bzl file, in table order.

    Raises ValueError naming the file when it has no plain-literal `LANES = {...}`.
    """
    for node in ast.parse(path.read_text(), filename=str(path)).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == [
            "LANES"
        ]:
            try:
                lanes = ast.literal_eval(node.value)
            except ValueError as err:
                raise ValueError(f"{path}: LANES must be plain data ({err})") from None
            if "default" not in lanes:
                raise ValueError(f"{path}: LANES has no 'default' lane")
            return lanes
    raise ValueError(f"{path}: no `LANES = {{...}}` assignment")


def bazelrc(lanes: dict[str, dict[str, str]]) -> str:
    """The .bazelrc lines that make `--config=<lane>` select each non-default lane."""
    lines = [
        "# Written by ./bazelw from tools/config/lanes.bzl (tools/config/lanes.py bazelrc);",
        "# edit that table, not this file. Imported by the kit's .bazelrc.",
    ]
    for name, lane in lanes.items():
        if name != "default":
            lines.append(f"# --config={name}: {lane['summary']}.")
            lines.append(f"build:{name} --//tools/config:lane={name}")
    return "\n".join(lines) + "\n"


def write_if_changed(path: Path, text: str) -> bool:
    """Write `text` to `path` unless it already holds it; True when written."""
    if path.exists() and path.read_text() == text:
        return False
    path.write_text(text)
    return True


def main(argv: list[str]) -> int:
    """The command line; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    names = sub.add_parser("names", help="lane names, one a line, in table order")
    names.add_argument("--except", dest="excluded", action="append", default=[])
    rc = sub.add_parser("bazelrc", help="the --config=<lane> lines")
    rc.add_argument("--write", type=Path, help="write them to this file (only if changed)")
    args = parser.parse_args(argv)
    lanes = read_lanes()
    if args.command == "names":
        print("\n".join(name for name in lanes if name not in args.excluded))
    elif args.write:
        write_if_changed(args.write, bazelrc(lanes))
    else:
        sys.stdout.write(bazelrc(lanes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
