#!/usr/bin/env python3
"""A snapshot of TVM's registries, and what a TVM build changed in them.

    ./bazelw run [--config=LANE] //tools/registry_snapshot -- --write   # writes LANE.json
    tools/registry_snapshot/regenerate.sh                               # every lane's
    python snapshot.py take [--rows docs/conformance.md --root DIR] [--out FILE]
    python snapshot.py diff --against LANE.json [--rows ... --root DIR] [--json]

Taken in the process that runs this file (a fresh one: nothing but `import tvm, tvm.relax,
tvm.relax.frontend.torch` has run), with the Python of the TVM it describes:

- `globals`: every global function name (tvm_ffi's registry);
- `ops`: every op (`tvm.ir.Op.list_op_names()`) with its number of inputs, arguments, attrs
  type key, support level and attributes; an attribute's value is kept where it is plain data
  (bool, int, float, str), else its type (`<ffi.Function>`);
- `target_kinds`: every target kind with its options, name -> type;
- `target_tags`: every target tag's config (`Target(tag).export()`);
- `python_api`: the signatures of the TVM classes and functions that the Python tests named by
  docs/conformance.md's rows use (every `tvm...` / `tvm_ffi...` attribute chain in those files,
  read with `ast`; each prefix of a chain that is a class or a function); a class with its
  public methods' signatures;
- `versions`: of apache-tvm and apache-tvm-ffi;
- `build`: the build options TVM reports (`tvm.support.libinfo()`, its `USE_*` flags): a build
  without CUDA registers fewer globals, so a user's wheel is judged against a lane's snapshot
  only where its version and build options are the lane's (snapshot_test.py).

Rules that keep a snapshot the same on every machine (RULES below, written into the file):
`feature.*` keys of a target config are left out (TVM's target parser derives them from LLVM
and, where a tag names no triple, from the host CPU); memory addresses in a signature's
defaults (` at 0x...`) are cut; op attribute names are the ones the registry answers for among
the candidates: identifier-like strings of the compiler library's `.rodata`, string literals of
TVM's Python sources and the reference snapshot's names (TVM lists no attribute names; a name
found nowhere is not seen). The file is JSON with sorted keys, one key a line.

`diff` names each difference: `global removed: relax.foo`, `target tag arm/rasp4b64: mcpu
changed cortex-a72 -> generic`, `op relax.add: attribute FPurity added (True)`. Standard
library and the TVM under description only: the run archive (tools/verdict/archive.py) runs it
with a user's venv to record the drift of their wheel.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import mmap
import os
import re
import struct
import sys
from pathlib import Path
from typing import Any

FORMAT = 1
IMPORTS = "import tvm, tvm.relax, tvm.relax.frontend.torch"
RULES = [
    "feature.* keys of target configs are left out: derived by TVM's target parser from LLVM "
    "and, where a tag names no triple, from the host CPU",
    "' at 0x...' addresses are cut from signatures",
    "op attribute names: those the op registry answers for among the compiler library's "
    ".rodata identifiers, TVM's Python string literals and the reference snapshot's names",
]
SECTIONS = ("versions", "build", "globals", "ops", "target_kinds", "target_tags", "python_api")
REGENERATE = "tools/registry_snapshot/regenerate.sh"
# Where the lane snapshots live, relative to the workspace.
SNAPSHOT_DIR = "tools/registry_snapshot"
_ROW_TEST = re.compile(r"`?//(?P<package>[^\s:`]*):(?P<name>[^\s`]+)\s+::")
_VARIANT = re.compile(r"_(llvm|cuda|independent)$")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_ATTR_NAME = re.compile(rb"(?<![A-Za-z0-9_])[TF][A-Z][A-Za-z0-9]{2,60}(?=\x00)")
_PY_ATTR_NAME = re.compile(r"""["']([TF][A-Z][A-Za-z0-9]{2,60})["']""")
_ROOTS = ("tvm", "tvm_ffi")


def snapshot_path(root: str | os.PathLike[str], lane: str) -> Path:
    """The lane's snapshot file under the workspace `root`."""
    return Path(root, SNAPSHOT_DIR, f"{lane}.json")


# --- Which Python API the rows use (read from the tests, no TVM needed) -----------------------


def row_test_files(rows_md: str, root: str | os.PathLike[str]) -> list[Path]:
    """The Python test files of docs/conformance.md's rows (a `<name>_<target>` variant is its
    `<name>.py`), sorted, those that exist under `root`."""
    found = set()
    for match in _ROW_TEST.finditer(rows_md):
        name = _VARIANT.sub("", match["name"])
        path = Path(root, match["package"], f"{name}.py")
        if path.is_file():
            found.add(path)
    return sorted(found)


def _chain(node: ast.AST) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def api_chains(source: str) -> set[str]:
    """Every dotted `tvm...` / `tvm_ffi...` name a Python file uses: its imports' aliases
    resolved, each attribute chain at its longest."""
    tree = ast.parse(source)
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in _ROOTS:
                    aliases[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0]
                    )
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] in _ROOTS:
                for alias in node.names:
                    if alias.name != "*":
                        aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    chains = set()
    inner = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            inner.add(id(node.value))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)) and id(node) not in inner:
            parts = _chain(node)
            if parts and parts[0] in aliases:
                chains.add(".".join([aliases[parts[0]], *parts[1:]]))
    return chains


def rows_api_chains(rows_md: str, root: str | os.PathLike[str]) -> set[str]:
    """api_chains() of every Python test file the rows name."""
    chains: set[str] = set()
    for path in row_test_files(rows_md, root):
        chains |= api_chains(path.read_text(encoding="utf-8"))
    return chains


# --- Taking the snapshot (in the TVM's own Python) --------------------------------------------


def _plain(value: Any) -> Any:
    """A JSON value for plain data (str subclasses as str), else `<type>`."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if value == value else "nan"
    if isinstance(value, str):
        return str(value)
    key = getattr(type(value), "__tvm_ffi_type_key__", None) or getattr(value, "type_key", None)
    if type(value).__name__ == "Function":
        key = "ffi.Function"
    return f"<{key or type(value).__name__}>"


def _config(value: Any) -> Any:
    """A target config as JSON: arrays as lists, `feature.*` keys left out (RULES)."""
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _config(v) for k, v in value.items() if not str(k).startswith("feature.")}
    if isinstance(value, (list, tuple)) or type(value).__name__ in ("Array", "List"):
        return [_config(v) for v in value]
    plain = _plain(value)
    return plain if not (isinstance(plain, str) and plain.startswith("<")) else str(value)


def _elf_rodata_names(path: str) -> set[str]:
    """Identifier-like `T...` / `F...` strings of an ELF shared library's .rodata (64-bit
    little endian; other files give nothing)."""
    try:
        with (
            open(path, "rb") as stream,
            mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as m,
        ):
            if m[:6] != b"\x7fELF\x02\x01":
                return set()
            shoff = struct.unpack_from("<Q", m, 0x28)[0]
            entsize, count, strndx = struct.unpack_from("<HHH", m, 0x3A)
            headers = [
                struct.unpack_from("<IIQQQQIIQQ", m, shoff + i * entsize) for i in range(count)
            ]
            names_at = headers[strndx][4]
            for header in headers:
                start = names_at + header[0]
                if m[start : m.find(b"\x00", start)] == b".rodata":
                    data = m[header[4] : header[4] + header[5]]
                    return {n.decode() for n in _ATTR_NAME.findall(data)}
    except (OSError, ValueError, struct.error):
        pass
    return set()


def _attr_candidates(tvm: Any, reference: dict[str, Any] | None) -> set[str]:
    package = Path(tvm.__file__).parent
    names: set[str] = set()
    for lib in sorted(package.glob("lib/libtvm*.so")) + sorted(package.glob("libtvm*.so")):
        names |= _elf_rodata_names(str(lib))
    for source in package.rglob("*.py"):
        try:
            names |= set(_PY_ATTR_NAME.findall(source.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    for op in (reference or {}).get("ops", {}).values():
        names |= set(op.get("attrs", {}))
    return names


def _ops(tvm: Any, reference: dict[str, Any] | None) -> dict[str, Any]:
    from tvm.ir import _ffi_api

    ops = {name: tvm.ir.Op.get(name) for name in tvm.ir.Op.list_op_names()}
    anyone = next(iter(ops.values()), None)
    attr_names = sorted(
        n
        for n in _attr_candidates(tvm, reference)
        if anyone is not None and _ffi_api.OpHasAttr(anyone, n)
    )
    out = {}
    for name, op in sorted(ops.items()):
        attrs = {}
        for attr in attr_names:
            value = _ffi_api.OpGetAttr(op, attr)
            if value is not None:
                attrs[attr] = _plain(value)
        out[name] = {
            "num_inputs": int(op.num_inputs),
            "arguments": [[str(a.name), str(a.type_info)] for a in op.arguments],
            "attrs_type_key": str(op.attrs_type_key),
            "support_level": int(op.support_level),
            "attrs": attrs,
        }
    return out


def _signature(obj: Any) -> str:
    try:
        return _ADDRESS.sub("", str(inspect.signature(obj)))
    except (TypeError, ValueError):
        return "<no signature>"


def _api_entry(obj: Any) -> dict[str, Any]:
    if inspect.isclass(obj):
        methods = {}
        for name in sorted(dir(obj)):
            if name.startswith("_"):
                continue
            try:
                member = inspect.getattr_static(obj, name)
            except AttributeError:
                continue
            if isinstance(member, property):
                methods[name] = "<property>"
            elif isinstance(member, (staticmethod, classmethod)):
                methods[name] = _signature(member.__func__)
            elif inspect.isroutine(member):
                methods[name] = _signature(member)
        return {"kind": "class", "signature": _signature(obj), "members": methods}
    return {"kind": "function", "signature": _signature(obj)}


def _is_tvm(obj: Any) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module.split(".")[0] in _ROOTS


def _python_api(chains: set[str]) -> dict[str, Any]:
    import importlib

    out: dict[str, Any] = {}
    for chain in sorted(chains):
        parts = chain.split(".")
        obj: Any = None
        for i in range(1, len(parts) + 1):
            name = ".".join(parts[:i])
            if obj is None or inspect.ismodule(obj):
                try:
                    obj = importlib.import_module(name)
                    continue
                except ImportError:
                    pass
            if i == 1 or not hasattr(obj, parts[i - 1]):
                break
            obj = getattr(obj, parts[i - 1])
            if (inspect.isclass(obj) or inspect.isroutine(obj)) and _is_tvm(obj):
                out.setdefault(name, _api_entry(obj))
            elif not inspect.ismodule(obj):
                break
    return out


def take(chains: set[str], reference: dict[str, Any] | None = None) -> dict[str, Any]:
    """The snapshot of the TVM this process imports (`chains`: the Python API to describe;
    `reference`: another snapshot whose op attribute names are candidates too)."""
    import tvm
    import tvm.relax
    import tvm.relax.frontend.torch  # noqa: F401  (its registrations are part of the state)
    import tvm_ffi

    kinds = {
        str(kind): {
            str(k): str(v) for k, v in tvm.target.TargetKind.options_from_name(kind).items()
        }
        for kind in tvm.target.Target.list_kinds()
    }
    tags = {str(n): _config(t.export()) for n, t in (tvm.target.list_tags() or {}).items()}
    libinfo = dict(tvm.support.libinfo())
    return {
        "format": FORMAT,
        "taken_after": IMPORTS,
        "rules": RULES,
        "versions": {"apache-tvm": tvm.__version__, "apache-tvm-ffi": tvm_ffi.__version__},
        "build": {str(k): str(v) for k, v in sorted(libinfo.items()) if k.startswith("USE_")},
        "globals": sorted(str(n) for n in tvm_ffi.registry.list_global_func_names()),
        "ops": _ops(tvm, reference),
        "target_kinds": dict(sorted(kinds.items())),
        "target_tags": dict(sorted(tags.items())),
        "python_api": _python_api(chains),
    }


def dumps(snapshot: dict[str, Any]) -> str:
    """The file's text: sorted keys, one key a line (stable, diffable)."""
    return json.dumps(snapshot, indent=1, sort_keys=True, ensure_ascii=True) + "\n"


# --- Differences ------------------------------------------------------------------------------


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _flat(config: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(config, dict):
        return {prefix: config}
    out = {}
    for key, value in config.items():
        out.update(
            _flat(value, f"{prefix}{key}.")
            if isinstance(value, dict)
            else {f"{prefix}{key}": value}
        )
    return out


def _keyed(
    old: dict[str, Any], new: dict[str, Any], what: str, registry: str
) -> list[dict[str, str]]:
    """added / removed / changed of two flat {name: value} maps, `what` prefixing each."""
    out = []
    for key in sorted(set(old) | set(new)):
        if key not in new:
            out.append(_d(registry, "removed", f"{what}{key} removed ({_show(old[key])})"))
        elif key not in old:
            out.append(_d(registry, "added", f"{what}{key} added ({_show(new[key])})"))
        elif old[key] != new[key]:
            out.append(
                _d(
                    registry,
                    "changed",
                    f"{what}{key} changed {_show(old[key])} -> {_show(new[key])}",
                )
            )
    return out


def _d(registry: str, kind: str, text: str) -> dict[str, str]:
    return {"registry": registry, "kind": kind, "text": text}


def diff(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, str]]:
    """Every difference from `old` (the reference) to `new`, each `{registry, kind (added,
    removed, changed), text}`, in a stable order."""
    out = _keyed(old.get("versions", {}), new.get("versions", {}), "version of ", "versions")
    out += _keyed(old.get("build", {}), new.get("build", {}), "build option ", "build")
    before, after = set(old.get("globals", [])), set(new.get("globals", []))
    out += [_d("globals", "removed", f"global removed: {n}") for n in sorted(before - after)]
    out += [_d("globals", "added", f"global added: {n}") for n in sorted(after - before)]
    for section, registry, what in (
        ("ops", "ops", "op"),
        ("target_kinds", "target_kinds", "target kind"),
        ("target_tags", "target_tags", "target tag"),
        ("python_api", "python_api", "python API"),
    ):
        a, b = old.get(section, {}), new.get(section, {})
        out += [_d(registry, "removed", f"{what} removed: {n}") for n in sorted(set(a) - set(b))]
        out += [_d(registry, "added", f"{what} added: {n}") for n in sorted(set(b) - set(a))]
        for name in sorted(set(a) & set(b)):
            if a[name] == b[name]:
                continue
            if section == "ops":
                x, y = dict(a[name]), dict(b[name])
                out += _keyed(
                    x.pop("attrs", {}), y.pop("attrs", {}), f"{what} {name}: attribute ", registry
                )
                out += _keyed(x, y, f"{what} {name}: ", registry)
            elif section == "target_kinds":
                out += _keyed(a[name], b[name], f"{what} {name}: option ", registry)
            elif section == "target_tags":
                out += _keyed(_flat(a[name]), _flat(b[name]), f"{what} {name}: ", registry)
            else:
                x, y = dict(a[name]), dict(b[name])
                out += _keyed(
                    x.pop("members", {}), y.pop("members", {}), f"{what} {name}: member ", registry
                )
                out += _keyed(x, y, f"{what} {name}: ", registry)
    return out


def counts(differences: list[dict[str, str]]) -> dict[str, dict[str, int]]:
    """{registry: {added, removed, changed}} of a diff()."""
    out: dict[str, dict[str, int]] = {}
    for d in differences:
        out.setdefault(d["registry"], {"added": 0, "removed": 0, "changed": 0})[d["kind"]] += 1
    return dict(sorted(out.items()))


def sizes(snapshot: dict[str, Any]) -> dict[str, int]:
    """How many entries each registry of a snapshot has (ops' attributes counted apart)."""
    return {
        "globals": len(snapshot.get("globals", [])),
        "ops": len(snapshot.get("ops", {})),
        "op attributes": sum(len(o.get("attrs", {})) for o in snapshot.get("ops", {}).values()),
        "target_kinds": len(snapshot.get("target_kinds", {})),
        "target kind options": sum(len(k) for k in snapshot.get("target_kinds", {}).values()),
        "target_tags": len(snapshot.get("target_tags", {})),
        "python_api": len(snapshot.get("python_api", {})),
    }


# --- Command line -----------------------------------------------------------------------------


def _lane() -> str:
    """The lane of the venv this Python is (its record, tvm_conformance_venv.json)."""
    try:
        record = json.loads(Path(sys.prefix, "tvm_conformance_venv.json").read_text())
    except (OSError, ValueError):
        return "default"
    return str(record.get("lane") or "default")


def _chains(args: argparse.Namespace) -> set[str]:
    if not args.rows:
        return set()
    rows = Path(args.rows).read_text(encoding="utf-8")
    return rows_api_chains(rows, args.root or Path(args.rows).resolve().parent.parent)


def main(argv: list[str] | None = None) -> int:
    """Command line: see the module docstring. diff exits 0 with or without differences
    (a difference is information); 2 on bad input."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?", choices=("take", "diff", "sizes"), default="take")
    parser.add_argument("--write", action="store_true", help="write this lane's snapshot file")
    parser.add_argument("--out", help="take: write here instead of stdout")
    parser.add_argument("--against", help="diff: the reference snapshot")
    parser.add_argument("--rows", help="docs/conformance.md: describe the API its tests use")
    parser.add_argument("--root", help="the workspace the rows' test paths are relative to")
    parser.add_argument("--json", action="store_true", help="diff: print JSON")
    args = parser.parse_args(argv)
    workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY")
    if args.write:
        if not workspace:
            print(
                "snapshot: --write needs `./bazelw run //tools/registry_snapshot`", file=sys.stderr
            )
            return 2
        args.rows, args.root = os.path.join(workspace, "docs", "conformance.md"), workspace
        args.out = str(snapshot_path(workspace, _lane()))
        if Path(args.out).is_file():  # its op attribute names stay candidates (RULES)
            args.against = args.out
    if args.command == "sizes":
        print(json.dumps(sizes(json.loads(Path(args.against or args.out).read_text())), indent=1))
        return 0
    reference = None
    if args.against:
        try:
            reference = json.loads(Path(args.against).read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            print(f"snapshot: cannot read the reference {args.against}: {err}", file=sys.stderr)
            return 2
    elif args.command == "diff":
        print("snapshot: diff needs --against", file=sys.stderr)
        return 2
    # The API the rows use now; without --rows, the reference's.
    chains = _chains(args) if args.rows else set((reference or {}).get("python_api", {}))
    snapshot = take(chains, reference)
    if args.command == "take":
        if args.out:
            Path(args.out).write_text(dumps(snapshot), encoding="utf-8")
            print(f"snapshot: wrote {args.out}: {json.dumps(sizes(snapshot))}")
        else:
            sys.stdout.write(dumps(snapshot))
        return 0
    differences = diff(reference or {}, snapshot)
    if args.json:
        print(
            json.dumps({"differences": differences, "counts": counts(differences)}, sort_keys=True)
        )
    else:
        for d in differences:
            print(d["text"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
