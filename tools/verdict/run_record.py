#!/usr/bin/env python3
"""A run archive's `run.json`: the one writer and the one reader of the run record.

The record says what a run tested (the venv identity), where (this machine), what made it
(`runner`: ./bazelw's `bazel test`, or a GPU-runner bundle), how it ended and, once judged, its
verdict (verdict.py writes it with `--record`). Its shape is the versioned JSON Schema beside
this file, `schema/run_record-v<N>.schema.json`; the writer refuses a record the schema
refuses, and the reader checks every record it reads against it with a small validator of the
schema keywords that file uses (standard library only: the host's python3 runs it).

Versions: 0 is an archive without a version key, 1 wrote `archive_version: 1`, 2 writes
`schema_version: 2` and `runner`. Older records are read (upgraded in memory: `runner` from
what they hold, the one place a record's shape decides it), newer ones are refused with
ValueError (the command lines say so in one line, exit 2).

    run_record.py RUN_DIR   # check RUN_DIR/run.json against the schema; exit 2 when refused
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
from typing import Any

RECORD_FILE = "run.json"
SCHEMA_VERSION = 2
VERSION_KEY = "schema_version"
# The key version 1 wrote its version under (version 0 wrote none).
LEGACY_VERSION_KEY = "archive_version"
SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schema")
# What made a run. ./bazelw's records carry `bazel_args` and `suite`; a bundle's carry
# `bundle` and its own `partial` list (the schema requires them per runner).
BAZEL = "bazel"
GPU_RUNNER_BUNDLE = "gpu_runner_bundle"
RUNNERS = (BAZEL, GPU_RUNNER_BUNDLE)
# The verdict's key in the record.
VERDICT_KEY = "verdict"


def schema_path(version: int = SCHEMA_VERSION) -> str:
    """The schema file of one record version."""
    return os.path.join(SCHEMA_DIR, f"run_record-v{version}.schema.json")


def load_schema(version: int = SCHEMA_VERSION) -> dict[str, Any]:
    """The JSON Schema of one record version."""
    with open(schema_path(version), encoding="utf-8") as stream:
        return json.load(stream)


# Record texts this process has checked against this version's schema and found valid, keyed
# by the digest of the schema's text and the record's: one archive's record is read and
# written several times in one process (verdict.py reads it three times and writes it once),
# and the check, not the reading, was most of a no-op ./bazelw's verdict time.
_CHECKED: set[bytes] = set()


def _checked_key(text: str) -> bytes:
    with open(schema_path(), "rb") as stream:
        schema = stream.read()
    return hashlib.sha256(schema + b"\0" + text.encode("utf-8")).digest()


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "null": (type(None),),
}


def _is_type(value: object, name: str) -> bool:
    # bool is an int in Python, never a number in JSON.
    if isinstance(value, bool) and name in ("number", "integer"):
        return False
    return isinstance(value, _TYPES[name])


def _resolve(root: dict[str, Any], ref: str) -> dict[str, Any]:
    if not ref.startswith("#/"):
        raise ValueError(f"only local $ref is supported, not {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def schema_problems(value: object, schema: dict[str, Any], root: dict | None = None) -> list[str]:
    """Where `value` breaks `schema`, one line each ([] when it conforms).

    The keywords the record's schema uses: type, const, enum, required, properties,
    additionalProperties, items, minimum, minLength, pattern, allOf, if/then and local $ref;
    a schema using another keyword is refused (ValueError), never silently passed."""
    return _check(value, schema, root or schema, "$")


_KNOWN = frozenset(
    (
        "$schema", "$id", "$defs", "title", "description", "type", "const", "enum", "required",
        "properties", "additionalProperties", "items", "minimum", "minLength", "pattern",
        "allOf", "if", "then", "$ref",
    )
)  # fmt: skip


def _check(value: object, schema: dict[str, Any], root: dict, where: str) -> list[str]:
    unknown = set(schema) - _KNOWN
    if unknown:
        raise ValueError(f"schema keyword(s) this reader does not check: {sorted(unknown)}")
    if "$ref" in schema:
        return _check(value, _resolve(root, schema["$ref"]), root, where)
    found: list[str] = []
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_is_type(value, n) for n in names):
            return [f"{where}: {type(value).__name__} is not {' or '.join(names)}"]
    if "const" in schema and (value != schema["const"] or type(value) is not type(schema["const"])):
        found.append(f"{where}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            found.append(f"{where}: shorter than {schema['minLength']}")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            found.append(f"{where}: {value!r} does not match {schema['pattern']!r}")
    if "minimum" in schema and _is_type(value, "number") and value < schema["minimum"]:  # type: ignore[operator]
        found.append(f"{where}: {value!r} is below {schema['minimum']}")
    if isinstance(value, dict):
        found += [f"{where}: no `{k}`" for k in schema.get("required", []) if k not in value]
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                found += _check(item, props[key], root, f"{where}.{key}")
            elif extra is False:
                found.append(f"{where}: `{key}` is not a field of this record")
            elif isinstance(extra, dict):
                found += _check(item, extra, root, f"{where}.{key}")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            found += _check(item, schema["items"], root, f"{where}[{index}]")
    for part in schema.get("allOf", []):
        if "if" not in part:
            found += _check(value, part, root, where)
        elif not _check(value, part["if"], root, where):  # the condition holds
            found += _check(value, part.get("then", {}), root, where)
    return found


def version_of(record: object) -> int:
    """The record's version (0 without a version key). ValueError for a record that is not an
    object, a version that is not an integer, or one newer than SCHEMA_VERSION."""
    version: object = None
    if isinstance(record, dict):
        version = record.get(VERSION_KEY, record.get(LEGACY_VERSION_KEY, 0))
    if not isinstance(version, int) or isinstance(version, bool) or version > SCHEMA_VERSION:
        key = VERSION_KEY
        if isinstance(record, dict) and VERSION_KEY not in record:
            key = LEGACY_VERSION_KEY
        raise ValueError(
            f"{RECORD_FILE} is not a run record of a version this kit reads "
            f"({key} {version!r}; it reads up to {SCHEMA_VERSION})"
        )
    return version


def upgrade(record: dict[str, Any]) -> dict[str, Any]:
    """A record of version 0 or 1 in version 2's terms (in memory; the file is left as it is).

    Those versions did not name their runner: ./bazelw's archive recorded `bazel_args`, a
    bundle's run did not (version 1 bundles also wrote `runner: "gpu_runner bundle"`)."""
    found = dict(record)
    found.pop(LEGACY_VERSION_KEY, None)
    if found.get("runner") not in RUNNERS:
        found["runner"] = BAZEL if "bazel_args" in found else GPU_RUNNER_BUNDLE
    found.setdefault("partial", [])
    found[VERSION_KEY] = SCHEMA_VERSION
    found["upgraded_from"] = version_of(record)
    return found


def parse(text: str, where: str = RECORD_FILE) -> dict[str, Any]:
    """A record from its text: versions 0 and 1 upgraded, version 2 checked against its schema.
    ValueError (naming `where`) for text that is not JSON, a newer version, or a version-2
    record the schema refuses."""
    try:
        record = json.loads(text)
    except ValueError as err:
        raise ValueError(f"{where}: not JSON: {err}") from None
    try:
        version = version_of(record)
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None
    if version < SCHEMA_VERSION:
        return upgrade(record)
    key = _checked_key(text)
    if key in _CHECKED:
        return record
    problems = schema_problems(record, load_schema())
    if problems:
        shown = "; ".join(problems[:3]) + ("; ..." if len(problems) > 3 else "")
        raise ValueError(f"{where}: not a valid run record (version {version}): {shown}")
    _CHECKED.add(key)
    return record


def read(run_dir: str) -> dict[str, Any]:
    """The record of a run archive (parse); FileNotFoundError when it has none."""
    path = os.path.join(run_dir, RECORD_FILE)
    with open(path, encoding="utf-8") as stream:
        return parse(stream.read(), path)


def new_record(
    runner: str,
    *,
    exit_code: int | None,
    start: float,
    end: float,
    lane: str,
    flags: dict[str, str],
    config: str,
    identity: dict[str, Any],
    machine: dict[str, Any],
    targets: int,
    **fields: Any,
) -> dict[str, Any]:
    """A record of this version: the fields every run has, then the runner's own (`fields`:
    bazel_args and suite for ./bazelw, bundle and partial for a bundle, gpu_suite, ...)."""
    import datetime

    if runner not in RUNNERS:
        raise ValueError(f"runner {runner!r} is not one of {RUNNERS}")
    record: dict[str, Any] = {
        VERSION_KEY: SCHEMA_VERSION,
        "runner": runner,
        "exit_code": exit_code,
        "start": start,
        "end": end,
        "start_utc": datetime.datetime.fromtimestamp(start, datetime.timezone.utc).isoformat(),
        "wall_s": round(end - start, 3),
        "lane": lane,
        "flags": dict(flags),
        "config": config,
        "identity": identity,
        "machine": machine,
        "targets": targets,
    }
    record.update(fields)
    return record


def _text(record: dict[str, Any]) -> str:
    return json.dumps(record, indent=1, sort_keys=True) + "\n"


def _dump(path: str, text: str) -> None:
    """Write `text` to `path` whole or not at all (a temp file renamed over it)."""
    folder = os.path.dirname(path) or "."
    handle, temp = tempfile.mkstemp(prefix=".run.", suffix=".json", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        # mkstemp makes it owner-only; a record is as readable as any file written here.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp, 0o666 & ~umask)
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise


def write(run_dir: str, record: dict[str, Any]) -> str:
    """Write `record` as `run_dir`/run.json; ValueError (nothing written) when the schema
    refuses it. Returns the file's path."""
    # The text is what is checked, as a reader will see it (a tuple is a list there).
    try:
        text = _text(record)
    except (TypeError, ValueError) as err:  # a value JSON has no form for (a set, an object)
        raise ValueError(f"not a valid run record: not JSON: {err}") from None
    problems = schema_problems(json.loads(text), load_schema())
    if problems:
        raise ValueError("not a valid run record: " + "; ".join(problems[:5]))
    path = os.path.join(run_dir, RECORD_FILE)
    _dump(path, text)
    _CHECKED.add(_checked_key(text))
    return path


def attach(run_dir: str, key: str, value: Any) -> str:
    """Set one field of an archive's record (the verdict) and write it back through write().
    A record of an older version is rewritten in this version's terms."""
    record = read(run_dir)
    record.pop("upgraded_from", None)
    record[key] = value
    if record.get("runner") == BAZEL:
        record.setdefault("bazel_args", [])
    return write(run_dir, record)


def main(argv: list[str] | None = None) -> int:
    """Command line: check one archive's record; one line, exit 2 when it is refused."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: run_record.py RUN_DIR", file=sys.stderr)
        return 2
    try:
        record = read(args[0])
    except (OSError, ValueError) as err:
        print(f"run_record: {err}", file=sys.stderr)
        return 2
    print(f"run_record: {args[0]}: version {record.get('upgraded_from', SCHEMA_VERSION)}, valid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
