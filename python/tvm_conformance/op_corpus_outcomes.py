"""The op corpus's outcomes, without torch or TVM: its results, its recorded deviations, its
scoreboards, and the child processes that run it (:mod:`tvm_conformance.op_corpus` runs the
cases). A shard's test process imports this alone: torch, TVM and PyTorch's corpus cost
seconds, and the child that runs the shard imports them anyway."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from tvm_conformance import crash_isolation

OUTCOMES: tuple[str, ...] = ("correct", "deviating", "failing", "refused", "excluded")
EXEC_MODES: tuple[str, ...] = ("bytecode", "compiled")
DEVIATIONS_FILE = Path(__file__).with_name("op_corpus_deviations.json")
# The //... tier's chunks per kind (its test's shards; tools/expectations runs the same).
TIER_CHUNKS: dict[str, int] = {"op": 7, "module": 3}
# The whole corpus's (//python/tests/op_corpus:op_corpus_all_test, one chunk a shard): 128, fine
# enough for a pool of workers (docs/remote.md), each child with 3,000 s.
FULL_CHUNKS: dict[str, int] = {"op": 120, "module": 8}
FULL_TIMEOUT = 3000.0
# The whole corpus deals its chunks (op, listed dtype) units, not names: an op with thousands of
# samples (max_pool2d: 12,960 over its dtypes) is spread over as many chunks as it lists dtypes,
# so no chunk holds a whole heavy op (docs/remote.md, "Pool size"). A unit is ``name@dtype``;
# a name that lists no scored dtype is its own unit, the bare name. A name too heavy for one
# chunk even in one dtype (op_corpus.SAMPLE_PARTS) is dealt in parts: ``name@dtype#kofm`` holds
# the samples whose index is k modulo m.
UNIT_SEP = "@"
PART_SEP = "#"


def unit_name(unit: str) -> str:
    """The op or module name of a chunk's unit (``max_pool2d@float16`` -> ``max_pool2d``)."""
    return unit.partition(UNIT_SEP)[0]


def unit_dtype(unit: str) -> str:
    """The dtype of a chunk's unit, or "" for a bare name (every listed dtype)."""
    return unit.partition(UNIT_SEP)[2].partition(PART_SEP)[0]


def unit_part(unit: str) -> tuple[int, int] | None:
    """``(k, m)`` of a unit that holds the samples of index k modulo m, else None. A malformed
    part raises ValueError naming the unit."""
    part = unit.partition(UNIT_SEP)[2].partition(PART_SEP)[2]
    if not part:
        return None
    match = re.fullmatch(r"(\d+)of(\d+)", part)
    if not match or not int(match.group(1)) < int(match.group(2)):
        raise ValueError(f"unit {unit!r}: expected name@dtype#kofm with 0 <= k < m")
    return int(match.group(1)), int(match.group(2))


def chunk_id(kind: str, shard: int, shards: int) -> str:
    """A chunk's name: ``op-3of120``."""
    return f"{kind}-{shard}of{shards}"


def select_chunks(
    chunks: Sequence[tuple[str, int, int]], part: str = "", names: str = ""
) -> list[tuple[str, int, int]]:
    """``chunks`` kept by ``part`` (``p/n``: every n-th from the p-th) and ``names`` (comma-
    separated chunk ids); either empty keeps all. A malformed part or an unknown id raises
    ValueError naming it."""
    kept = list(chunks)
    if part:
        match = re.fullmatch(r"(\d+)/(\d+)", part.strip())
        if not match or not int(match.group(1)) < int(match.group(2)):
            raise ValueError(f"TVM_OP_CORPUS_PART={part!r}: expected p/n with 0 <= p < n")
        kept = kept[int(match.group(1)) :: int(match.group(2))]
    if names:
        wanted = [n.strip() for n in names.split(",") if n.strip()]
        known = {chunk_id(*c) for c in chunks}
        if unknown := [n for n in wanted if n not in known]:
            raise ValueError(
                f"TVM_OP_CORPUS_CHUNKS: unknown chunk(s) {unknown}; the chunks are "
                f"{chunk_id(*chunks[0])} ... {chunk_id(*chunks[-1])}"
            )
        kept = [c for c in kept if chunk_id(*c) in wanted]
    return kept


@dataclasses.dataclass
class Result:
    """The outcome of one case through one frontend."""

    kind: str
    name: str
    dtype: str
    frontend: str
    index: int
    sample_class: str
    outcome: str
    detail: str = ""
    deviation: str = ""
    # The exec modes TVM built and ran the case in ("bytecode,compiled"); "" where it was
    # never built (excluded, refused or failing at import).
    modes: str = ""


@functools.cache
def recorded_deviations() -> list[dict[str, str]]:
    """The deviations the corpus found, recorded: each binds an op or module, a sample class,
    a frontend, a dtype, the TVM versions it was seen on and the exact wrong behaviour (a
    regular expression the whole message must match: the failing stage, exception and text,
    with only the numbers left open)."""
    if not DEVIATIONS_FILE.exists():
        return []
    return json.loads(DEVIATIONS_FILE.read_text())["deviations"]


def _tvm_version() -> str:
    import tvm

    return tvm.__version__


def _binds(dev: dict[str, Any], result: Result, any_version: bool = False) -> bool:
    """Whether recorded deviation ``dev`` is of ``result``'s case (op or module, frontend,
    dtype, sample class) on this TVM (``any_version``: on whichever TVM), whatever its
    message."""
    return (
        dev["kind"] == result.kind
        and dev["name"] == result.name
        and dev["frontend"] in ("*", result.frontend)
        and dev["dtype"] in ("*", result.dtype)
        and dev["sample_class"] in ("*", result.sample_class)
        and (any_version or _tvm_version() in dev["tvm_versions"])
    )


def release_of(version: str) -> tuple[int, ...] | None:
    """A PEP 440 version's epoch and release, trailing zeros dropped (``0.27.0.post1+g1`` and
    ``0.27`` are one release), or None for a string that is no version."""
    from tvm_conformance import pep440

    try:
        parsed = pep440.Version.parse(version)
    except ValueError:
        return None
    release = list(parsed.release)
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    return (parsed.epoch, *release)


def _same_release(version: str, versions: Iterable[str]) -> bool:
    mine = release_of(version)
    return mine is not None and any(release_of(v) == mine for v in versions)


def match_deviation(result: Result) -> str:
    """The id of the recorded deviation ``result`` (failing) is, or "". This TVM's own
    records of the case first; where this version string has none (a user's build, a
    post-release of a recorded one), the records of the same release (PEP 440 epoch and
    release): the same behaviour, whole message matched, is the same deviation, not a new
    failure."""
    version = _tvm_version()
    records = [d for d in recorded_deviations() if _binds(d, result, any_version=True)]
    own = [d for d in records if version in d["tvm_versions"]]
    pool = own or [d for d in records if _same_release(version, d["tvm_versions"])]
    for dev in pool:
        if re.fullmatch(dev["message"], result.detail):
            return dev["id"]
    return ""


def unsafe_record(result: Result) -> dict[str, Any]:
    """The recorded deviation of ``result``'s case that is unsafe to run in a shared process
    (TVM corrupts memory there: "unsafe" says how), or {}. Such a case is not run; it counts
    as that deviation, and the registry deviation the record names ("pinned_by") runs it in a
    child process of its own, where a fix shows. It binds on any TVM, not only the versions
    it was recorded on: a wheel with another version string (a user's build of the same
    release) must not run a known memory corruption beside other cases, whose results it
    could change; the pin, in its child, says whether that TVM still corrupts."""
    # This TVM's own record first (each version's record has its own id); another version's
    # record of the case only where this TVM has none.
    unsafe = [d for d in recorded_deviations() if d.get("unsafe") and _binds(d, result, True)]
    return next((d for d in unsafe if _binds(d, result)), unsafe[0] if unsafe else {})


def behaviour_pattern(detail: str) -> str:
    """The regular expression a recorded deviation keeps of a failing result's message: the
    message itself with every number left open (values and counts vary with the sample's
    data; the stage, the exception and the wording do not)."""
    # A number's sign is open too: the same deviation's worst element may be either side of 0.
    parts = re.split(r"(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)", detail)
    return "".join(re.escape(p) if i % 2 == 0 else r"[-+.e\d]+" for i, p in enumerate(parts))


def record(results: Iterable[Result], existing: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``existing`` with each failing result of ``results`` recorded: an entry of the same
    case and behaviour gains this TVM version; a new one is added."""
    version = _tvm_version()
    entries = [dict(e) for e in existing]
    for r in results:
        if r.outcome not in ("failing", "deviating"):
            continue
        pattern = behaviour_pattern(r.detail)
        key = (r.kind, r.name, r.sample_class, r.frontend, r.dtype, pattern)
        for e in entries:
            if (
                e["kind"],
                e["name"],
                e["sample_class"],
                e["frontend"],
                e["dtype"],
                e["message"],
            ) == key:
                if version not in e["tvm_versions"]:
                    e["tvm_versions"] = sorted({*e["tvm_versions"], version})
                break
        else:
            stage = r.detail.split(":", 1)[0].split(" ", 1)[0]
            ident = hashlib.sha256("|".join(key).encode()).hexdigest()[:10]
            entries.append({
                "id": f"corpus-{stage}-{ident}", "kind": r.kind, "name": r.name,
                "sample_class": r.sample_class, "frontend": r.frontend, "dtype": r.dtype,
                "message": pattern, "seen": r.detail, "tvm_versions": [version],
            })  # fmt: skip
    return sorted(entries, key=lambda e: (e["kind"], e["name"], e["frontend"], e["dtype"], e["id"]))


def fixed(results: Iterable[Result], version: str | None = None) -> list[str]:
    """Recorded deviations of TVM ``version`` (this process's TVM where omitted) that no result
    matched while a case of theirs (op or module, sample class, frontend, dtype) ran and was
    correct: fixed, to be removed. A sample class can hold several samples, some correct: one
    that still deviates keeps its record."""
    version = version or _tvm_version()
    results = list(results)
    matched = {r.deviation for r in results if r.deviation}
    correct = {
        (r.kind, r.name, r.sample_class, r.frontend, r.dtype)
        for r in results
        if r.outcome == "correct"
    }
    return [
        e["id"]
        for e in recorded_deviations()
        if version in e["tvm_versions"]
        # An unsafe record's cases do not run here (unsafe_record): its registry deviation
        # ("pinned_by") runs it in a child process and notices the fix.
        and not e.get("unsafe")
        and e["id"] not in matched
        and (e["kind"], e["name"], e["sample_class"], e["frontend"], e["dtype"]) in correct
    ]


def deviations_doc(entries: Sequence[dict[str, Any]]) -> str:
    """docs/op_corpus_deviations.md, generated from the recorded deviations."""
    lines = [
        "# Deviations found by the op corpus",
        "",
        "Generated by `python -m tvm_conformance.op_corpus doc` from",
        "`python/tvm_conformance/op_corpus_deviations.json`; do not edit. Each row is one op or",
        "module, sample class, frontend and dtype where TVM's result or error differs from",
        "PyTorch's, with the message seen (the record keeps it with its numbers left open).",
        "",
        f"{len(entries)} recorded.",
        "",
        "| id | kind | name | sample class | frontend | dtype | TVM | seen |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for e in entries:
        seen = e["seen"].replace("|", "\\|").replace("\n", " ")[:160]
        if e.get("unsafe"):
            seen += f" (not run: {e['unsafe']}; pinned by `{e['pinned_by']}`)"
        lines.append(
            f"| {e['id']} | {e['kind']} | `{e['name']}` | `{e['sample_class']}` | "
            f"{e['frontend']} | {e['dtype']} | {', '.join(e['tvm_versions'])} | {seen} |"
        )
    return "\n".join(lines) + "\n"


def crashers(kind: str, version: str) -> set[str]:
    """The names of ``kind`` a record says kill the process on TVM ``version`` (its release)."""
    return {
        e["name"]
        for e in recorded_deviations()
        if e["kind"] == kind
        and e["message"].startswith("crash")
        and (version in e["tvm_versions"] or _same_release(version, e["tvm_versions"]))
    }


@dataclasses.dataclass
class _ChildEnd:
    """How a child ended: its results and what it said of its run (``names``, ``tvm``), or,
    where it failed, its process and the last step its progress file names."""

    proc: subprocess.CompletedProcess
    results: list[Result] | None
    meta: dict[str, Any]
    step: str


# Some of PyTorch's sample functions iterate a set of strings (meshgrid's indexing modes), so
# the order of an op's samples, and so which sample a case index names and which sample a tier
# class keeps, follows Python's string hashing, random per process unless PYTHONHASHSEED fixes
# it. Every process that makes the corpus's cases runs with it fixed.
HASH_SEED = "0"


def fixed_hash_seed_env() -> dict[str, str]:
    """This process's environment with PYTHONHASHSEED fixed (HASH_SEED), for a child that
    makes the corpus's cases."""
    return {**os.environ, "PYTHONHASHSEED": HASH_SEED}


def run_with_fixed_hash_seed() -> None:
    """Re-execute this Python program with PYTHONHASHSEED fixed, unless it has it (a tool that
    makes the corpus's cases in its own process: the seed is read once, at start)."""
    if os.environ.get("PYTHONHASHSEED") != HASH_SEED:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, sys.orig_argv, fixed_hash_seed_env())


def children_cpu() -> float:
    """The CPU seconds (user + system) this process's waited-for children have used: a chunk's
    cost, read before and after it runs in its child processes."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run_child(
    kind: str, selector: Sequence[str], tier: bool, exec_modes: Sequence[str], timeout: float
) -> _ChildEnd:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out, progress = os.path.join(tmp, "results.json"), os.path.join(tmp, "progress")
        meta = os.path.join(tmp, "meta.json")
        command = [
            sys.executable, "-m", "tvm_conformance.op_corpus", "run", kind, *selector,
            "--json", out, "--meta", meta, "--exec-modes", ",".join(exec_modes),
            *([] if tier else ["--all"]),
        ]  # fmt: skip
        # The child imports this package from where this process did.
        env = crash_isolation.child_env(fixed_hash_seed_env(), OP_CORPUS_PROGRESS=progress)
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            proc = subprocess.CompletedProcess(command, -9, "", f"timed out after {timeout} s")
        said = json.loads(Path(meta).read_text()) if os.path.exists(meta) else {}
        if proc.returncode == 0 and os.path.exists(out):
            results = [Result(**r) for r in json.loads(Path(out).read_text())]
            return _ChildEnd(proc, results, said, "")
        step = Path(progress).read_text() if os.path.exists(progress) else ""
        return _ChildEnd(proc, None, said, step)


def run_isolated(
    kind: str,
    batch: Sequence[str],
    *,
    tier: bool = True,
    exec_modes: Sequence[str] = ("bytecode",),
    timeout: float = 600.0,
) -> list[Result]:
    """``op_corpus.run_names`` in a child process; where TVM kills it, the batch is split and
    the name that kills it alone is one failing result (``crash``)."""
    # A name recorded as killing the process runs alone: the batch stays whole (each split
    # costs a child process's start, torch and TVM imported anew).
    recorded = crashers(kind, _tvm_version())
    alone = [n for n in batch if unit_name(n) in recorded]
    if alone and len(batch) > 1:
        rest = [n for n in batch if n not in alone]
        return [
            r
            for part in ([rest] if rest else []) + [[n] for n in alone]
            for r in run_isolated(kind, part, tier=tier, exec_modes=exec_modes, timeout=timeout)
        ]
    end = _run_child(kind, list(batch), tier, exec_modes, timeout)
    if end.results is not None:
        return end.results
    return _split(kind, batch, end, tier=tier, exec_modes=exec_modes, timeout=timeout)


def _split(
    kind: str,
    batch: Sequence[str],
    end: _ChildEnd,
    *,
    tier: bool,
    exec_modes: Sequence[str],
    timeout: float,
) -> list[Result]:
    """The results of a batch whose child failed: the name its last step names alone and the
    rest again, or the batch in halves; a name that fails alone is one ``crash`` result."""
    kw: dict[str, Any] = {"tier": tier, "exec_modes": exec_modes, "timeout": timeout}
    culprit = end.step.removeprefix("case ") if end.step.startswith("case ") else ""
    # The progress file names the case's op, not its unit: the batch's units of that op.
    suspects = [n for n in batch if unit_name(n) == culprit]
    if len(batch) > 1 and suspects and len(suspects) < len(batch):
        rest = [n for n in batch if n not in suspects]
        return [
            r for part in [[n] for n in suspects] + [rest] for r in run_isolated(kind, part, **kw)
        ]
    if len(batch) > 1:
        half = len(batch) // 2
        return run_isolated(kind, batch[:half], **kw) + run_isolated(kind, batch[half:], **kw)
    name, dtype = unit_name(batch[0]), unit_dtype(batch[0]) or "*"
    return [Result(kind, name, "*", dtype, -1, "*", "failing", crash_detail(end.proc))]


@dataclasses.dataclass
class ShardRun:
    """One shard's run: the names (or ``name@dtype`` units) it holds, the TVM version that ran
    them, their results."""

    names: list[str]
    tvm: str
    results: list[Result]
    # The CPU seconds the shard took, where the child that ran it measured them (a child that
    # ran several shards); None: the caller measures its children (children_cpu).
    cpu_s: float | None = None
    # Where PyTorch's side of its cases came from: a torch_side file (op_corpus.torch_side,
    # with what it left to this run), or "here".
    torch_side: str = "here"


def run_shard_isolated(
    kind: str,
    shard: int,
    shards: int,
    *,
    tier: bool = True,
    exec_modes: Sequence[str] = ("bytecode",),
    timeout: float = 600.0,
    by_dtype: bool = False,
) -> ShardRun:
    """Shard ``shard`` of ``shards`` (``op_corpus.shard_names``; ``by_dtype``: of the (name,
    dtype) units, ``op_corpus.shard_units``) in a child process that names the shard's ops
    itself (``--meta``, written before it runs them): this process imports neither torch nor
    TVM, nor builds PyTorch's corpus (about 5 s per shard). Where the child fails, its names are
    split as :func:`run_isolated` splits a batch. A name recorded as killing the process runs in
    a child of the shard's child (``op_corpus`` ``run``), so the shard's other results survive
    it."""
    if not 0 <= shard < shards:
        raise ValueError(f"shard {shard} is not in [0, {shards})")
    kw: dict[str, Any] = {"tier": tier, "exec_modes": exec_modes, "timeout": timeout}
    selector = ["--shard", f"{shard}/{shards}", *(["--by-dtype"] if by_dtype else [])]
    end = _run_child(kind, selector, tier, exec_modes, timeout)
    if end.results is not None:
        return ShardRun(end.meta["names"], end.meta["tvm"], end.results)
    if not end.meta:  # the child died before it named the shard: no name to blame
        raise RuntimeError(f"shard {shard}/{shards}: {crash_detail(end.proc)}")
    names = end.meta["names"]
    return ShardRun(names, end.meta["tvm"], _split(kind, names, end, **kw))


def run_shards_isolated(
    chunks: Sequence[tuple[str, int, int]],
    *,
    tier: bool = True,
    exec_modes: Sequence[str] = ("bytecode",),
    timeout: float = 600.0,
    torch_sides: str | None = None,
) -> list[ShardRun]:
    """The shards ``(kind, shard, shards)`` one after another in one child process (``op_corpus
    chunks``), so that its imports and PyTorch's corpus, about 6 s of CPU, are paid once, not
    once a shard. The child runs each shard's names as :func:`run_shard_isolated`'s child
    does, after the shards before it (a case seeds its own generators; the tier's results were
    compared file by file, docs/performance.md); with ``torch_sides`` (a directory of
    op_corpus.torch_side files) it takes PyTorch's side of a tier shard from there. Where that
    child does not end well (a signal, an error, the time limit), nothing it wrote is kept:
    every shard runs again through :func:`run_shard_isolated`, which makes its own cases and
    splits a failing shard to find its culprit."""
    kw: dict[str, Any] = {"tier": tier, "exec_modes": exec_modes, "timeout": timeout}
    if len(chunks) < 2 and not torch_sides:
        return [run_shard_isolated(*chunk, **kw) for chunk in chunks]
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        command = [
            sys.executable, "-m", "tvm_conformance.op_corpus", "chunks", "--dir", tmp,
            "--exec-modes", ",".join(exec_modes), *([] if tier else ["--all"]),
            *(["--torch-sides", torch_sides] if torch_sides else []),
            *(f"{kind}:{shard}/{shards}" for kind, shard, shards in chunks),
        ]  # fmt: skip
        env = crash_isolation.child_env(fixed_hash_seed_env())
        try:
            proc = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout * len(chunks), env=env
            )
            ended_well = proc.returncode == 0
        except subprocess.TimeoutExpired:
            ended_well = False
        runs: list[ShardRun] = []
        for j in range(len(chunks) if ended_well else 0):
            said = json.loads(Path(tmp, f"{j}.meta.json").read_text())
            results = [Result(**r) for r in json.loads(Path(tmp, f"{j}.json").read_text())]
            runs.append(
                ShardRun(said["names"], said["tvm"], results, said["cpu_s"], said["torch_side"])
            )
    return runs or [run_shard_isolated(*chunk, **kw) for chunk in chunks]


def crash_detail(proc: subprocess.CompletedProcess) -> str:
    """How a child running one name ended: the signal that killed it, or its exit status and
    last error line (a Python error the driver let through)."""
    if "timed out after" in proc.stderr:
        return "crash: " + proc.stderr.strip()
    if proc.returncode < 0:
        import signal

        return f"crash: killed by {signal.Signals(-proc.returncode).name}"
    tail = (proc.stderr.strip().splitlines() or [""])[-1][-200:]
    return f"crash: exit {proc.returncode}: {tail}"


def scoreboard(results: Iterable[Result]) -> dict[str, Any]:
    """Per frontend and dtype: samples per outcome, and ops per outcome (an op counts once,
    under its worst sample: failing > deviating > refused > correct > excluded)."""
    results = list(results)
    board: dict[str, Any] = {}
    for r in results:
        cell = board.setdefault(f"{r.kind}/{r.frontend}/{r.dtype}", {
            "samples": dict.fromkeys(OUTCOMES, 0), "names": dict.fromkeys(OUTCOMES, 0),
        })  # fmt: skip
        cell["samples"][r.outcome] += 1
    for (kind, _, frontend, dtype), outcome in worst_outcomes(results).items():
        board[f"{kind}/{frontend}/{dtype}"]["names"][outcome] += 1
    return dict(sorted(board.items()))


def worst_outcomes(results: Iterable[Result]) -> dict[tuple[str, str, str, str], str]:
    """{(kind, name, frontend, dtype): the worst outcome of its samples}."""
    rank = {"failing": 0, "deviating": 1, "refused": 2, "correct": 3, "excluded": 4}
    worst: dict[tuple[str, str, str, str], str] = {}
    for r in results:
        key = (r.kind, r.name, r.frontend, r.dtype)
        if key not in worst or rank[r.outcome] < rank[worst[key]]:
            worst[key] = r.outcome
    return worst


def diff(previous: Iterable[Result], current: Iterable[Result]) -> list[str]:
    """What changed between two runs, per op or module, frontend and dtype: each line names
    one whose worst outcome differs (an op that stopped translating shows as correct ->
    refused or failing)."""
    before, after = worst_outcomes(previous), worst_outcomes(current)
    return [
        f"{kind} {name} {frontend} {dtype}: {before.get(k, 'absent')} -> {after.get(k, 'absent')}"
        for k in sorted(set(before) | set(after))
        for kind, name, frontend, dtype in [k]
        if before.get(k) != after.get(k)
    ]


def headline(lane: str, run: dict[str, Any]) -> str:
    """The README's sentence of a recorded run (docs/op_corpus_scoreboard.json): its cases
    per outcome."""
    samples = dict.fromkeys(OUTCOMES, 0)
    for cell in run["scoreboard"].values():
        for outcome, n in cell["samples"].items():
            samples[outcome] += n
    counts = ", ".join(f"{samples[o]:,} {o}" for o in OUTCOMES)
    return (
        f"TVM {run['tvm']} ({lane} lane), the //... tier: {sum(samples.values()):,} cases "
        f"(sample x frontend x dtype): {counts}"
    )


def scoreboard_markdown(board: dict[str, Any]) -> str:
    lines = [
        "| kind / frontend / dtype | names: "
        + " / ".join(OUTCOMES)
        + " | samples: "
        + " / ".join(OUTCOMES)
        + " |",
        "|---|---|---|",
    ]
    for key, cell in board.items():
        names_ = " / ".join(str(cell["names"][o]) for o in OUTCOMES)
        samples = " / ".join(str(cell["samples"][o]) for o in OUTCOMES)
        lines.append(f"| {key} | {names_} | {samples} |")
    return "\n".join(lines) + "\n"


def digest(results: Iterable[Result]) -> str:
    """A short digest of the outcomes (to notice a changed run)."""
    text = "\n".join(
        sorted(f"{r.kind}:{r.name}:{r.dtype}:{r.frontend}:{r.index}:{r.outcome}" for r in results)
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]
