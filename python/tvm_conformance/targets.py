"""Resolve ``TVM_TEST_TARGETS`` into the targets a test session runs on.

This module knows nothing about pytest hooks: it parses target lists, asks
TVM whether each target's runtime is built in and its device present (through
``tvm.testing``'s own probe, so the kit and TVM never disagree), and applies
the seed-002 fallback (no listed target can run -> ``llvm``). What it adds to
``tvm.testing``: clear errors naming a bad entry, a reason for every target
that cannot run, and readable test ids. The pytest plugin and
:mod:`tvm_conformance.testing` both build on it.

TVM is imported lazily, so importing this module is cheap.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

ENV_VAR = "TVM_TEST_TARGETS"
FALLBACK_TARGET = "llvm"
# Used when tvm.testing no longer defines DEFAULT_TEST_TARGETS.
_BUILTIN_DEFAULT: tuple[str, ...] = ("llvm",)
# Device kinds that count as "a GPU" for requires_gpu.
GPU_RUNTIMES: tuple[str, ...] = ("cuda", "rocm", "opencl", "metal", "vulkan")

TargetEntry = str | dict[str, Any]
# The JUnit property of a case skipped because a target cannot run here (its runtime is not in
# this TVM, or its device is absent): the target kind. The verdict (tools/verdict/verdict.py)
# reads it, not the reason's text: a skip for a target the run's config requires is a problem.
UNAVAILABLE_TARGET_PROPERTY = "tvm_unavailable_target"


class TargetSpecError(ValueError):
    """A target list entry that TVM cannot parse as a target."""


@dataclass(frozen=True)
class TargetInfo:
    """One target of a target list and whether it can run on this machine."""

    entry: str  # the ``target`` fixture value: "llvm" or a JSON object
    id: str  # the pytest id: "llvm", "opencl-device=mali"
    kind: str
    keys: tuple[str, ...]
    runnable: bool
    reason: str  # why it cannot run; "" when runnable

    @property
    def is_gpu(self) -> bool:
        """True for targets whose TVM keys include ``gpu``."""
        return "gpu" in self.keys

    @property
    def skip_reason(self) -> str:
        """Skip message naming the target."""
        return f"target {self.id!r} cannot run here: {self.reason}"

    def matches(self, name: TargetEntry) -> bool:
        """True if ``name`` (a kind, an id or an entry) designates this target."""
        if isinstance(name, dict):
            return canonical_entry(name) == self.entry
        return name in (self.kind, self.id, self.entry)


@dataclass(frozen=True)
class TargetSelection:
    """The targets in force for a session and where they came from."""

    listed: tuple[TargetInfo, ...]
    source: str  # e.g. "TVM_TEST_TARGETS", "--tvm-targets"
    raw: str  # the text as given, for the report header
    fallback: TargetInfo | None  # set when no listed target can run

    @property
    def active(self) -> tuple[TargetInfo, ...]:
        """Targets that implicitly parametrized tests run over."""
        return (self.fallback,) if self.fallback is not None else self.listed

    @property
    def runnable(self) -> tuple[TargetInfo, ...]:
        """Active targets that can run here."""
        return tuple(t for t in self.active if t.runnable)

    def has_kind(self, kind: str) -> bool:
        """True if an active target has this kind (``nvptx`` counts for nothing else)."""
        return any(t.kind == kind for t in self.active)


def canonical_entry(entry: TargetEntry) -> str:
    """The string form of an entry: itself, or sorted JSON for a dict."""
    if isinstance(entry, dict):
        return json.dumps(entry, sort_keys=True, separators=(",", ":"))
    return entry.strip()


def target_id(entry: TargetEntry) -> str:
    """A short test id: the string itself, or ``kind-key=value-...`` for a dict."""
    if isinstance(entry, str) and entry.lstrip().startswith("{"):
        entry = json.loads(entry)
    if isinstance(entry, dict):
        rest = [f"{k}={entry[k]}" for k in sorted(entry) if k != "kind"]
        return "-".join([str(entry.get("kind", "?")), *rest])
    return entry.strip()


def split_entries(text: str, source: str = ENV_VAR) -> list[TargetEntry]:
    """Split a ``;``-separated list; JSON objects become dicts; duplicates dropped."""
    entries: list[TargetEntry] = []
    seen: set[str] = set()
    for piece in text.split(";"):
        piece = piece.strip()
        if not piece:
            continue
        entry: TargetEntry = piece
        if piece.startswith("{"):
            try:
                entry = json.loads(piece)
            except json.JSONDecodeError as err:
                raise TargetSpecError(
                    f"{source} entry {piece!r} is not a TVM target: invalid JSON ({err.msg})"
                ) from None
            if not isinstance(entry, dict):
                raise TargetSpecError(f"{source} entry {piece!r} is not a TVM target")
        key = canonical_entry(entry)
        if key not in seen:
            seen.add(key)
            entries.append(entry)
    return entries


def default_entries() -> list[TargetEntry]:
    """TVM's default test targets (``tvm.testing.DEFAULT_TEST_TARGETS``), else ``llvm``."""
    import tvm.testing

    return list(getattr(tvm.testing, "DEFAULT_TEST_TARGETS", _BUILTIN_DEFAULT))


# Runtime-only TVM (TVM_USE_RUNTIME_LIB=1, or a package without the compiler library) has no
# tvm.target: kinds whose device is not named after them, for the runtime's own probe.
_RUNTIME_DEVICE: dict[str, str] = {"llvm": "cpu", "c": "cpu", "nvptx": "cuda"}


def compiler_loaded() -> bool:
    """False in runtime-only TVM, where ``tvm.target`` and everything that compiles is absent."""
    import tvm

    return tvm.get_global_func("target.Target", allow_missing=True) is not None


def runtime_device(entry: TargetEntry) -> Any:
    """``tvm.runtime.Device`` 0 of a target entry; works in runtime-only TVM too."""
    import tvm

    if compiler_loaded():
        return tvm.device_from_target(entry if isinstance(entry, str) else json.dumps(entry))
    return tvm.device(_runtime_kind(entry)[1], 0)


# The driver library a GPU runtime of TVM loads: without it there is no GPU to run on.
_DRIVER_LIBRARIES = {"cuda": "libcuda.so.1"}


def runtime_not_enabled_reason(kind: str) -> str:
    """Why ``tvm.runtime.enabled(kind)`` is False: "no GPU" when the kind's driver library does
    not load (a machine without the NVIDIA driver), else the runtime is not built in or cannot
    load."""
    library = _DRIVER_LIBRARIES.get(kind)
    if library:
        try:
            ctypes.CDLL(library)
        except OSError:
            return (
                f"no GPU: the {kind} driver library {library} does not load (no driver on this "
                f"machine), so this TVM's {kind} runtime is not enabled"
            )
    return (
        f"the {kind} runtime is not enabled in this TVM build "
        "(not built in, or its driver library is missing)"
    )


def kind_of(entry: TargetEntry) -> str:
    """The target kind of an entry ("cuda" for "cuda -arch=sm_90" or {"kind": "cuda"})."""
    return _runtime_kind(entry)[0]


def _runtime_kind(entry: TargetEntry) -> tuple[str, str]:
    """(target kind, device name) of an entry, read without tvm.target."""
    if isinstance(entry, str) and entry.lstrip().startswith("{"):
        entry = json.loads(entry)
    kind = str(entry.get("kind", "")) if isinstance(entry, dict) else entry.split()[0]
    return kind, _RUNTIME_DEVICE.get(kind, kind)


def _describe_runtime_only(key: str, source: str) -> TargetInfo:
    """A target described by the runtime alone: kind from the entry, runnable if the device
    API is registered and device 0 exists (the compiler's target parser is absent)."""
    import tvm

    entry: TargetEntry = json.loads(key) if key.startswith("{") else key
    kind, device_name = _runtime_kind(entry)
    try:
        device = tvm.device(device_name, 0)
    except ValueError:
        raise TargetSpecError(
            f"{source} entry {key!r} is not a TVM target: unknown device kind {kind!r} "
            "(runtime-only TVM)"
        ) from None
    is_gpu = kind in GPU_RUNTIMES or device_name in GPU_RUNTIMES
    keys = (kind, "gpu") if is_gpu else (kind, "cpu")
    if not tvm.runtime.enabled(device_name):
        runnable, reason = False, runtime_not_enabled_reason(kind)
    elif not device.exist:
        runnable, reason = False, f"no {device} device present"
    else:
        runnable, reason = True, ""
    return TargetInfo(key, target_id(entry), kind, keys, runnable, reason)


@functools.cache
def _describe(key: str, source: str) -> TargetInfo:
    import tvm

    if not compiler_loaded():
        return _describe_runtime_only(key, source)
    entry: TargetEntry = json.loads(key) if key.startswith("{") else key
    try:
        tvm_target = tvm.target.Target(entry)
    except Exception as err:  # TVM raises ValueError today; any failure means "not a target"
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise TargetSpecError(f"{source} entry {key!r} is not a TVM target: {first}") from None
    kind = tvm_target.kind.name
    keys = tuple(str(k) for k in tvm_target.keys)
    runnable, reason = _runnable(entry, kind)
    return TargetInfo(key, target_id(entry), kind, keys, runnable, reason)


def describe(entry: TargetEntry, source: str = ENV_VAR) -> TargetInfo:
    """Parse one entry with ``tvm.target.Target`` and probe it.

    Raises :class:`TargetSpecError` naming the entry when it is not a target.
    """
    if not isinstance(entry, (str, dict)):
        entry = str(entry)  # a tvm.target.Target prints as JSON
    return _describe(canonical_entry(entry), source)


def _tvm_probe(entry: TargetEntry) -> dict[str, Any]:
    """``tvm.testing``'s own enabled/runnable record for one target entry.

    llvm is asked for alongside: ``_get_targets`` replaces an all-unrunnable list by llvm,
    which would hide the entry's own record.
    """
    from tvm.testing import utils

    return utils._get_targets([entry, FALLBACK_TARGET])[0]


def _runnable(entry: TargetEntry, kind: str) -> tuple[bool, str]:
    """Whether a target can run here (TVM's answer) and, if not, why."""
    import tvm

    try:
        probe = _tvm_probe(entry)
    except Exception:  # kinds without a runtime of their own (e.g. "c") run on the CPU
        device = tvm.device_from_target(entry if isinstance(entry, str) else json.dumps(entry))
        return (
            (True, "") if int(device.dlpack_device_type()) == 1 else (False, f"no {kind} runtime")
        )
    if probe["is_runnable"]:
        return True, ""
    if kind == "hexagon":
        if not probe["is_enabled"]:
            return False, "the hexagon runtime is not enabled in this TVM build (USE_HEXAGON)"
        return False, "no hexagon device (ANDROID_SERIAL_NUMBER is not set)"
    if not probe["is_enabled"]:
        # tvm.runtime.enabled is False both when TVM was built without the runtime and when
        # its library cannot load (libtvm_runtime_cuda.so without libcuda.so, on a GPU-less
        # machine): say both.
        return False, runtime_not_enabled_reason(kind)
    device = tvm.device_from_target(entry if isinstance(entry, str) else json.dumps(entry))
    return False, f"no {device} device present"


def select(
    text: str | None,
    source: str,
    fallback: bool = True,
) -> TargetSelection:
    """Resolve a target list (``None`` or blank: TVM's defaults).

    With ``fallback`` and no runnable listed target, the session runs on llvm.
    """
    if text is None or not text.strip():
        entries = default_entries()
        source, raw = "tvm.testing.DEFAULT_TEST_TARGETS", ""
    else:
        entries = split_entries(text, source)
        raw = text
    listed = tuple(describe(e, source) for e in entries)
    chosen = None
    if fallback and not any(t.runnable for t in listed):
        chosen = describe(FALLBACK_TARGET, source)
        if not chosen.runnable:
            raise TargetSpecError(
                f"none of the targets in {source} can run here and the {FALLBACK_TARGET} "
                f"fallback cannot either: {chosen.reason}"
            )
    return TargetSelection(listed, source, raw, chosen)


def from_environment(fallback: bool = True) -> TargetSelection:
    """The selection ``TVM_TEST_TARGETS`` asks for."""
    return select(os.environ.get(ENV_VAR), ENV_VAR, fallback)


def gpu_present() -> bool:
    """True if a device of any GPU runtime exists (runtimes not built in count as absent)."""
    import tvm

    for kind in GPU_RUNTIMES:
        try:
            if tvm.runtime.enabled(kind) and tvm.device(kind, 0).exist:
                return True
        except Exception:  # an unknown runtime name is simply not present
            continue
    return False


def requirement_skip_reason(
    kind: str, selection: TargetSelection, compile_only: bool = False
) -> str:
    """Why a ``requires_<kind>`` test cannot run here; "" when it can.

    ``gpu`` means any GPU device. Other kinds need their runtime, a device and
    the kind among the session's targets (so the per-target Bazel variants
    split the work, as TVM's own ``TVM_TEST_TARGETS`` opt-out does). With
    ``compile_only`` (``support_required="compile-only"``) no runtime or device
    is needed: TVM must know the target kind, and it must be among the targets.
    """
    if kind == "gpu":
        if compile_only:
            return ""
        return "" if gpu_present() else "requires a GPU: no GPU device present"
    try:
        probe = describe(kind, f"requires_{kind}")
    except TargetSpecError as err:
        return f"requires {kind}: {err}"
    if compile_only:
        if not selection.has_kind(kind):
            names = ", ".join(t.id for t in selection.active) or "none"
            return f"requires {kind}: {kind} is not among the session's targets ({names})"
        return ""
    if not probe.runnable:
        return f"requires {kind}: {probe.reason}"
    if not selection.has_kind(kind):
        names = ", ".join(t.id for t in selection.active) or "none"
        return f"requires {kind}: {kind} is not among the session's targets ({names})"
    return ""


def unavailable_requirement(kind: str, compile_only: bool = False) -> str | None:
    """The target kind a ``requires_<kind>`` case misses when it cannot run here because the
    runtime or device is absent (``gpu``: ``cuda``, the variant it belongs to); None when
    what is missing is a session choice (the kind is not among the targets) or nothing."""
    if compile_only:
        return None
    if kind == "gpu":
        return None if gpu_present() else "cuda"
    try:
        return None if describe(kind, f"requires_{kind}").runnable else kind
    except TargetSpecError:
        return kind


def iter_names(values: Iterable[Any]) -> list[TargetEntry]:
    """Normalise decorator arguments to entries (strings or dicts)."""
    out: list[TargetEntry] = []
    for value in values:
        if isinstance(value, (list, tuple)):
            out.extend(iter_names(value))
        elif isinstance(value, (str, dict)):
            out.append(value)
        else:
            out.append(str(value))
    return out


def describe_all(entries: Sequence[TargetEntry], source: str) -> list[TargetInfo]:
    """:func:`describe` each entry, dropping duplicates."""
    seen: set[str] = set()
    out = []
    for entry in entries:
        t = describe(entry, source)
        if t.entry not in seen:
            seen.add(t.entry)
            out.append(t)
    return out
