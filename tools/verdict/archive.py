#!/usr/bin/env python3
"""Archive one `bazel test` invocation as a run (the layout results.py reads).

./bazelw calls it after each `test`: the build events, a copy of every test.xml and outputs.zip
they name, and run.json (run_record.py's record: what was tested, the venv identity; this
machine's facts; verdict.py --record adds the verdict). Standard library only.

    archive.py --bep FILE --root DIR --exit-code N --start T --end T -- ARGS...
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import results
import run_identity
import run_record
from results import ARCHIVE_EVENTS, archived_outputs, archived_xml

# The workspace this file is in: the lanes table and every lane's locks are read from it.
WORKSPACE = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def venv_repository(lane: str, gpu: bool = False) -> str:
    """The external repository of a lane's venv (WORKSPACE): python_venv[_<lane>], with `_gpu`
    for its GPU flavour (torch's CUDA build, --//tools/config:gpu_torch)."""
    name = "python_venv" if lane == "default" else f"python_venv_{lane}"
    return name + "_gpu" if gpu else name


def venv_record_path(events: list[dict], lane: str, gpu: bool = False) -> str | None:
    """tvm_conformance_venv.json of the lane's venv (`gpu`: its GPU flavour), found from the
    build events' exec root."""
    for event in events:
        exec_root = event.get("workspaceInfo", {}).get("localExecRoot")
        if exec_root:
            output_base = os.path.dirname(os.path.dirname(exec_root))
            path = os.path.join(
                output_base,
                "external",
                venv_repository(lane, gpu),
                "venv",
                "tvm_conformance_venv.json",
            )
            return path if os.path.isfile(path) else None
    return None


def identity_of(record: dict[str, Any], lane: str) -> dict[str, Any]:
    """The venv identity from its record: lane, and version, wheel file and sha256 of TVM and
    tvm-ffi (a user's wheel, or the pinned one pip installed)."""
    identity: dict[str, Any] = {"lane": record.get("lane", lane)}
    installed = record.get("installed", {})
    for key, dist in (("tvm", "apache-tvm"), ("tvm_ffi", "apache-tvm-ffi")):
        entry = dict(installed.get(dist, {}))
        entry.setdefault("version", record.get("packages", {}).get(dist, "unknown"))
        user = record.get("user_wheels", {}).get(dist)
        if user:
            entry.update(user, source="user wheel")
        entry.setdefault("source", "pinned lock")
        identity[key] = entry
    identity["tvm_libinfo"] = record.get("tvm_libinfo", {})
    # The interpreter and the torch build (2.13.0+cpu, or the index's CUDA build where pip had
    # no CPU-only torch: the lock installed instead of the lane's CPU lock) are what ran too.
    if record.get("python"):
        identity["python"] = record["python"]
    torch = record.get("packages", {}).get("torch")
    if torch:
        identity["torch"] = {"version": torch, "lock": record.get("lock", "")}
        if record.get("lock_instead_of"):
            identity["torch"]["instead_of"] = record["lock_instead_of"]
    return identity


# The registry snapshot tool and the lanes' snapshots (tools/registry_snapshot/), and the
# variable that turns the drift off (`0`: the mutant runner, whose kill times measure tests).
SNAPSHOT_TOOL = os.path.join("tools", "registry_snapshot", "snapshot.py")
DRIFT_ENV = "TVM_CONFORMANCE_REGISTRY_DRIFT"


def registry_drift(venv_record: str, lane: str, workspace: str = WORKSPACE) -> dict[str, Any]:
    """What a user's wheel changed in TVM's registries: the lane's snapshot
    (tools/registry_snapshot/<lane>.json) against one taken with the run's venv (a fresh
    process of its Python). `{"against", "differences": [text], "counts"}`, or `{"error"}`:
    a difference is information, never a failure, and neither is an error here."""
    against = os.path.join("tools", "registry_snapshot", f"{lane}.json")
    python = os.path.join(os.path.dirname(venv_record), "bin", "python")
    command = [python, os.path.join(workspace, SNAPSHOT_TOOL), "diff", "--json"]
    command += ["--against", os.path.join(workspace, against)]
    if not os.path.isfile(os.path.join(workspace, against)):
        return {"against": against, "error": "the lane has no snapshot file"}
    try:
        proc = subprocess.run(
            command, capture_output=True, text=True, timeout=300, check=False, cwd=workspace
        )
        if proc.returncode != 0:
            said = (proc.stderr.strip().splitlines() or ["no message"])[-1][:200]
            return {"against": against, "error": f"exit status {proc.returncode}: {said}"}
        found = json.loads(proc.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as err:
        return {"against": against, "error": f"{type(err).__name__}: {err}"[:300]}
    return {
        "against": against,
        "differences": [str(d["text"]) for d in found.get("differences", [])],
        "counts": found.get("counts", {}),
    }


# The identity's keys of the wheels a lane pins, and their distributions in a lock.
PINNED_DISTS = {"tvm": "apache-tvm", "tvm_ffi": "apache-tvm-ffi"}
_REQUIREMENT = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(\[[^]]*\])?\s*==")
_HASH = re.compile(r"--hash=sha256:(?P<sha>[0-9a-fA-F]{64})")


def lock_hashes(text: str) -> dict[str, set[str]]:
    """{distribution: its sha256s} of a hashed lock (pip-compile --generate-hashes: a
    `name==version \\` line, then its `--hash=sha256:...` lines), names canonical."""
    found: dict[str, set[str]] = {}
    current = ""
    for line in text.splitlines():
        match = _REQUIREMENT.match(line)
        if match:
            current = re.sub(r"[-_.]+", "-", match["name"]).lower()
            found.setdefault(current, set())
        elif not line[:1].isspace():
            current = ""  # a comment or option line ends the entry
        if current:
            found[current].update(h["sha"].lower() for h in _HASH.finditer(line))
    return found


def lane_locks(workspace: str = WORKSPACE) -> list[str]:
    """Every lane's locks (lock, GPU flavour, per-Python), workspace-relative, from the lanes
    table (tools/config/lanes.bzl). Raises ImportError, OSError or ValueError when the table
    cannot be read (a GPU-runner bundle has none)."""
    try:
        import lanes
    except ImportError:
        sys.path.append(os.path.join(workspace, "tools", "config"))
        import lanes
    table = lanes.read_lanes(Path(workspace, "tools", "config", "lanes.bzl"))
    found = []
    for lane in table.values():
        names = [lane.get("lock"), lane.get("gpu_lock"), *lane.get("python_locks", {}).values()]
        found += [f"third_party/python/{n}" for n in names if n]
    return list(dict.fromkeys(found))


def pinned_of(identity: dict[str, Any], workspace: str = WORKSPACE) -> dict[str, Any]:
    """Whether the run's TVM x tvm-ffi pair is one a lane pins: `{"pinned": True, "pinned_by":
    lock}` when one of the lanes' locks hashes both wheels' sha256, `{"pinned": False}` when
    none does; `{"pinned_unknown": why}` when a sha256 or the locks cannot be read (the
    verdict then holds the run to the registry as a pinned one: verdict.pinned_run)."""
    shas = {}
    for key, dist in PINNED_DISTS.items():
        entry = identity.get(key)
        sha = entry.get("sha256") if isinstance(entry, dict) else None
        if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-fA-F]{64}", sha):
            return {"pinned_unknown": f"no sha256 of {dist} in the venv record"}
        shas[dist] = sha.lower()
    try:
        for lock in lane_locks(workspace):
            with open(os.path.join(workspace, lock), encoding="utf-8") as stream:
                hashes = lock_hashes(stream.read())
            if all(sha in hashes.get(dist, set()) for dist, sha in shas.items()):
                return {"pinned": True, "pinned_by": lock}
    except (ImportError, OSError, ValueError) as err:
        return {"pinned_unknown": f"the lanes' locks cannot be read: {err}"[:300]}
    return {"pinned": False}


def machine_facts() -> dict[str, str]:
    """OS, CPU, GPU and driver of this machine (for the report's header), Python standard
    library only: what executed the run's uncached tests."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gpu, driver = "none", "nvidia-smi not found"
    smi = shutil.which("nvidia-smi")
    if smi:
        query = [smi, "--query-gpu=name,driver_version", "--format=csv,noheader"]
        try:
            out = subprocess.run(query, capture_output=True, text=True, timeout=30, check=True)
            rows = [r.split(",") for r in out.stdout.strip().splitlines() if r.strip()]
            if rows:
                gpu, driver = "; ".join(r[0].strip() for r in rows), rows[0][-1].strip()
            else:
                driver = "nvidia-smi lists no GPU"
        except (subprocess.SubprocessError, OSError) as err:
            driver = f"nvidia-smi failed: {err}"
    return {
        "host": platform.node(),
        "os": platform.platform(),
        "cpu": f"{cpu} ({os.cpu_count()} cores)",
        "gpu": gpu,
        "gpu_driver": driver,
        "python": platform.python_version(),
    }


# The build graph's `_cuda` tests of a workspace's suite (`//...`, less `manual`): what a GPU
# run (--config=cuda_gpu) must run (verdict.gpu_suite_problems). Every cuda variant is tagged
# tvm_cuda (tools/build_defs/tvm.bzl).
CUDA_SUITE_QUERY = (
    'attr(tags, "\\btvm_cuda\\b", tests(//...)) except attr(tags, "\\bmanual\\b", //...)'
)


def cuda_suite(bazel: str, workspace: str) -> dict[str, Any]:
    """{"source": the query, "targets": labels} from `bazel query` in `workspace`; on a failed
    query "targets" is absent and "error" says why (the verdict then fails the GPU run)."""
    command = [bazel, "query", "--output=label", CUDA_SUITE_QUERY]
    record: dict[str, Any] = {"source": "bazel query " + CUDA_SUITE_QUERY}
    try:
        out = subprocess.run(
            command, cwd=workspace, capture_output=True, text=True, timeout=600, check=True
        )
    except (OSError, subprocess.SubprocessError) as err:
        record["error"] = str(err)[:500]
        return record
    record["targets"] = sorted(line.strip() for line in out.stdout.splitlines() if line.strip())
    return record


# What `bazel test //...` runs under a run's own flags: every test of the workspace less the
# `manual` ones and those incompatible with the configuration (a `_cuda` variant without
# --config=cuda). A run that ran fewer is partial (run_identity.partial), whatever option made
# it so. Measured on 2 shared cores right after a run with the same flags: about 1-2 s (the
# analysis is cached); after a change of flags the first one re-analyses.
SUITE_QUERY = 'tests(//...) except attr(tags, "\\bmanual\\b", //...)'
SUITE_EXPR = 'str(target.label) + " " + str("IncompatiblePlatformProvider" in providers(target))'
# Options that change which packages `//...` reaches or where patterns come from: the suite is
# asked for without them (a run using them is then partial by what it did not run).
_NOT_SUITE_OPTIONS = ("deleted_packages", "target_pattern_file", "build_event_json_file")


def suite_command(bazel: str, args: list[str]) -> list[str]:
    """The cquery of the suite under a run's own flags: its startup options, then every option
    of its command (`--name=value` words; patterns dropped) except _NOT_SUITE_OPTIONS."""
    index = next((i for i, a in enumerate(args) if not a.startswith("-")), len(args))
    options = []
    for arg in args[index + 1 :]:
        if arg == "--":
            break
        name = arg.lstrip("-").partition("=")[0]
        if arg.startswith("-") and name not in _NOT_SUITE_OPTIONS:
            options.append(arg)
    return [
        bazel,
        *args[:index],
        "cquery",
        *options,
        "--output=starlark",
        f"--starlark:expr={SUITE_EXPR}",
        SUITE_QUERY,
    ]


def whole_suite(bazel: str, workspace: str, args: list[str]) -> dict[str, Any]:
    """{"source": the command, "targets": labels, "seconds": its cost} of the suite the run's
    flags give (SUITE_QUERY); on a failure "targets" is absent and "error" says why (the run
    is then partial: nothing shows it ran the whole suite)."""
    command = suite_command(bazel, args)
    record: dict[str, Any] = {"source": " ".join(["bazel", *command[1:]])}
    began = time.monotonic()
    # A second try: a query that failed once for a reason outside the suite (seen once in a
    # mutant run, not reproducible) would otherwise make a whole run partial, which CI fails.
    for attempt in (1, 2):
        try:
            out = subprocess.run(
                command, cwd=workspace, capture_output=True, text=True, timeout=600, check=True
            )
            break
        except subprocess.CalledProcessError as err:
            lines = (err.stderr or "").strip().splitlines()
            errors = [line for line in lines if line.startswith("ERROR:")]
            record["error"] = (" ".join(errors[:2]) or (lines[-1] if lines else str(err)))[:500]
        except (OSError, subprocess.SubprocessError) as err:
            record["error"] = str(err)[:500]
        if attempt == 2:
            return record
    record.pop("error", None)
    labels = []
    for line in out.stdout.splitlines():
        label, _, incompatible = line.strip().rpartition(" ")
        if label and incompatible == "False":
            labels.append(label)
    record["targets"] = sorted(labels)
    record["seconds"] = round(time.monotonic() - began, 2)
    return record


def archive_run(
    bep: str,
    root: str,
    args: list[str],
    exit_code: int,
    start: float,
    end: float,
    venv_record: str | None = None,
    gpu_suite: dict[str, Any] | None = None,
    suite: dict[str, Any] | None = None,
) -> str:
    """Copy one invocation into `<root>/<UTC start>-<lane>/`; return that directory.

    run.json records what was tested (the venv identity: lane, TVM and tvm-ffi versions, wheel
    files and sha256, from the venv's record) and this machine's facts, so that the report's
    header never comes from a test result (which a cache could bring from another machine).
    """
    events = results.read_events(bep)
    flags = run_identity.config_flags(results.command_options(events))
    lane = run_identity.lane_of(flags)
    record_path = venv_record or venv_record_path(
        events, lane, run_identity.flag_on(flags, "gpu_torch")
    )
    record: dict[str, Any] = {}
    if record_path:
        try:
            with open(record_path, encoding="utf-8") as stream:
                record = json.load(stream)
        except (OSError, ValueError):
            record = {}
    stamp = datetime.datetime.fromtimestamp(start, datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    # A run of a user's wheel is named by it too: `<stamp>-<lane>-wheel-<sha256 prefix>`.
    user = sorted(w.get("sha256", "")[:12] for w in record.get("user_wheels", {}).values())
    name = f"{stamp}-{lane}" + "".join(f"-wheel-{sha}" for sha in user)
    dest = os.path.join(root, name)
    suffix = 1
    while os.path.exists(dest):
        suffix += 1
        dest = os.path.join(root, f"{name}-{suffix}")
    os.makedirs(dest)
    shutil.copyfile(bep, os.path.join(dest, ARCHIVE_EVENTS))
    attempts = results.attempts_of(events)
    shard_count = results.shard_counts(attempts)
    missing = []
    for a in attempts:
        target = os.path.join(dest, archived_xml(a.label, a.shard, a.run, shard_count[a.label]))
        if a.xml and os.path.isfile(a.xml):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(a.xml, target)
        else:
            missing.append(a.label)
        if a.outputs and os.path.isfile(a.outputs):
            outputs = os.path.join(
                dest, archived_outputs(a.label, a.shard, a.run, shard_count[a.label])
            )
            os.makedirs(os.path.dirname(outputs), exist_ok=True)
            shutil.copyfile(a.outputs, outputs)
    identity = identity_of(record, lane) if record else {"lane": lane}
    if record:
        identity.update(pinned_of(identity))
    # A user's wheel: what it changed in TVM's registries, against the lane's snapshot.
    if record.get("user_wheels") and record_path and os.environ.get(DRIFT_ENV, "1") != "0":
        identity["registry_drift"] = registry_drift(record_path, lane)
    extra: dict[str, Any] = {}
    if gpu_suite is not None:
        extra["gpu_suite"] = gpu_suite
    if suite is not None:
        extra[run_identity.SUITE_KEY] = suite
    meta = run_record.new_record(
        run_record.BAZEL,
        exit_code=exit_code,
        start=start,
        end=end,
        lane=lane,
        flags=flags,
        config=run_identity.config_name(flags),
        identity=identity,
        machine=machine_facts(),
        targets=len({a.label for a in attempts}),
        bazel_args=list(args),
        cuda=run_identity.flag_on(flags, "cuda"),
        cuda_gpu=run_identity.flag_on(flags, "require_gpu"),
        venv_record=record,
        missing_test_xml=sorted(set(missing)),
        **extra,
    )
    run_record.write(dest, meta)
    return dest


def main(argv: list[str] | None = None) -> int:
    """Command line: archive one invocation; print the run's directory."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bep", required=True)
    parser.add_argument("--root", required=True, help="e.g. <workspace>/conformance-runs")
    parser.add_argument("--exit-code", type=int, required=True)
    parser.add_argument("--start", type=float, required=True, help="seconds since the epoch")
    parser.add_argument("--end", type=float, required=True)
    parser.add_argument("--venv-record", help="the lane venv's tvm_conformance_venv.json")
    parser.add_argument(
        "--bazel", help="the Bazel binary: a GPU run records the suite's _cuda tests with it"
    )
    parser.add_argument("bazel_args", nargs="*")
    args = parser.parse_args(argv)
    gpu_suite = None
    flags = run_identity.config_flags(results.command_options(results.read_events(args.bep)))
    if run_identity.flag_on(flags, "require_gpu"):
        workspace = os.path.dirname(os.path.abspath(args.root))
        gpu_suite = (
            cuda_suite(args.bazel, workspace)
            if args.bazel
            else {"source": "none", "error": "archive.py was given no --bazel to query"}
        )
    workspace = os.path.dirname(os.path.abspath(args.root))
    suite = (
        whole_suite(args.bazel, workspace, args.bazel_args)
        if args.bazel
        else {"source": "none", "error": "archive.py was given no --bazel to query"}
    )
    print(
        archive_run(
            args.bep,
            args.root,
            args.bazel_args,
            args.exit_code,
            args.start,
            args.end,
            args.venv_record,
            gpu_suite,
            suite,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
