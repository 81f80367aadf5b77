"""PyTorch's own test corpus through TVM's PyTorch frontends, scored against PyTorch.

Every op of ``torch.testing._internal.common_methods_invocations.op_db`` (OpInfo) and every
module of ``torch.testing._internal.common_modules.module_db`` (ModuleInfo), with the sample
inputs PyTorch's own tests use, goes through ``from_exported_program`` (decomposed and not) and
``from_fx`` (an op wrapped in a module fx traces; a module as the traced root and as a child,
the ``call_module`` path), and is compared with PyTorch by :mod:`tvm_conformance.numerics`
(float64 reference; exact for integer and bool outputs; shapes and dtypes exactly).

Each case ends in one outcome (:data:`OUTCOMES`):

- ``correct``: TVM's result is PyTorch's within the rule.
- ``refused``: the frontend says it does not support the op (a clear error at import):
  coverage, not a failure.
- ``deviating``: a wrong result or error recorded in ``op_corpus_deviations.json`` (beside
  this module) for this op, sample class, frontend and dtype, with the exact message.
- ``failing``: any other wrong value, shape or dtype, error at import, build or run time.
- ``excluded``: the case has no defined result to compare (:data:`EXCLUSION_RULES`), or
  PyTorch itself cannot trace it (``torch.export`` / ``torch.fx`` refuse it).

Compilation dominates the cost, so the cases of a batch are imported one by one and merged
into one IRModule (one function each), built once per exec mode; a batch whose build fails is
split until the failing case is found. ``python -m tvm_conformance.op_corpus`` runs a shard
and writes its outcomes as JSON; ``op_corpus_outcomes.run_isolated`` runs a batch in a child
process and splits it when TVM kills the process (that module holds the outcomes side, which
needs neither torch nor TVM, re-exported here).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import hashlib
import json
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

# The outcomes side (results, recorded deviations, scoreboards, child processes) needs neither
# torch nor TVM; it lives in its own module and is re-exported here.
from tvm_conformance.op_corpus_outcomes import (  # noqa: F401
    DEVIATIONS_FILE,
    EXEC_MODES,
    OUTCOMES,
    PART_SEP,
    UNIT_SEP,
    Result,
    ShardRun,
    _tvm_version,
    behaviour_pattern,
    chunk_id,
    crash_detail,
    crashers,
    deviations_doc,
    diff,
    digest,
    fixed,
    headline,
    match_deviation,
    record,
    recorded_deviations,
    run_isolated,
    run_shard_isolated,
    run_with_fixed_hash_seed,
    scoreboard,
    scoreboard_markdown,
    unit_dtype,
    unit_name,
    unit_part,
    unsafe_record,
    worst_outcomes,
)

OP_FRONTENDS: tuple[str, ...] = ("exported_program", "exported_program_undecomposed", "fx")
MODULE_FRONTENDS: tuple[str, ...] = OP_FRONTENDS + ("fx_child",)
# The dtypes scored wherever OpInfo / ModuleInfo lists them for CPU.
DTYPES: tuple[str, ...] = ("float32", "float16", "bfloat16", "int32", "int64", "bool")

# What leaves a case out, checked on PyTorch alone before TVM sees it.
EXCLUSION_RULES: dict[str, str] = {
    "random": "the result depends on the random generator: OpInfo runs the op through "
    "wrapper_set_seed, or two runs under different torch.manual_seed differ",
    "no_sample": "no sample in a scored dtype (the op lists none of DTYPES for CPU)",
    "undefined": "the result is uninitialized memory: OpInfo skips its own comparisons of "
    "the op as 'Expected: <op> is not comparable', or the result differs when PyTorch fills "
    "uninitialized memory (torch.utils.deterministic.fill_uninitialized_memory)",
    "not_tensor": "the op returns something other than tensors (a Python scalar, None)",
    "untraceable": "PyTorch cannot capture it (torch.export or torch.fx raises)",
    "no_reference": "the float64 reference cannot be evaluated (the op has no float64 "
    "kernel or its ATen graph cannot be recorded, or the rule has no rounding model for one "
    "of its ATen ops: numerics.rounding_model refuses it); TVM still imports, builds and runs "
    "it, so a refusal or a crash is its outcome",
    "unjudgeable": "the rule's allowance at this sample would accept an all-zero output and "
    "the doubled one (numerics.vacuity: the computation is too ill-conditioned there), so a "
    "result cannot be told right or wrong; TVM still imports, builds and runs it",
    "complex_output": "a complex output (TVM has no complex dtype)",
    "sparse_output": "an output in a sparse layout (TVM's tensors are dense)",
    "rule_unbounded": "PyTorch's own result in the case's dtype is outside the tolerance rule "
    "(tvm_conformance.numerics): the rule does not bound this op's rounding yet, so TVM's "
    "result cannot be scored by it",
}

# A refusal is the frontend's own: an exception raised by TVM's PyTorch frontend itself (the
# innermost frame of its traceback in tvm/relax/frontend/, at a `raise` or `assert`) saying
# it does not handle the op ("Unsupported function types [...]", "Multi-layer GRU is not yet
# supported"), or a NotImplementedError it raises. The same words from anywhere else (torch's
# "Got unsupported ScalarType BFloat16" inside a converter, a TVM error below the frontend)
# are a failure.
_REFUSAL = re.compile(r"[Uu]nsupported|not (yet )?supported|[Nn]ot implemented")
_FRONTEND_PATH = re.compile(r"[/\\]tvm[/\\]relax[/\\]frontend[/\\]")


def frontend_refusal(err: BaseException) -> bool:
    """Whether ``err``, raised while importing a case, is the frontend refusing it."""
    import traceback

    frames = traceback.extract_tb(err.__traceback__)
    if not frames or not _FRONTEND_PATH.search(frames[-1].filename):
        return False
    # Its own `raise` or `assert` statement: an error of a call it makes into C (torch's
    # `.numpy()` of a bfloat16 tensor) also ends in a frontend frame, on the calling line.
    if not (frames[-1].line or "").lstrip().startswith(("raise", "assert")):
        return False
    return isinstance(err, NotImplementedError) or bool(_REFUSAL.search(str(err)))


@dataclasses.dataclass
class Case:
    """One sample of one op or module in one dtype (frontend-independent)."""

    kind: str  # "op" or "module"
    name: str  # OpInfo name[.variant] or ModuleInfo name
    dtype: str
    index: int  # the sample's position in PyTorch's list for this (name, dtype)
    sample_class: str
    model: torch.nn.Module | None
    inputs: tuple[torch.Tensor, ...]
    excluded: str = ""  # an EXCLUSION_RULES key
    # What PyTorch alone says of the case, computed elsewhere (torch_side: a build action the
    # lanes share): (exclusion reason, float64 references, why TVM's result goes unscored).
    # None: computed here from `model` (_torch_facts).
    facts: tuple[str, list[Any], str] | None = None

    @property
    def frontends(self) -> tuple[str, ...]:
        return MODULE_FRONTENDS if self.kind == "module" else OP_FRONTENDS

    def key(self, frontend: str) -> str:
        return f"{self.kind}:{self.name}:{self.dtype}:{frontend}:{self.index}"


# --------------------------------------------------------------------------------------------
# The corpus


@functools.cache
def op_db() -> list[Any]:
    from torch.testing._internal.common_methods_invocations import op_db as db

    return list(db)


@functools.cache
def module_db() -> list[Any]:
    from torch.testing._internal.common_modules import module_db as db

    return list(db)


@contextlib.contextmanager
def _no_test_lookup() -> Iterator[None]:
    """PyTorch's sample iterators look for the calling ``unittest`` test (to seed by its name
    and to track inputs) by ``inspect.stack()``, which reads every frame's source file and
    scans ``sys.modules`` per frame: two thirds of the samples' cost. No caller here is a
    ``unittest.TestCase``, so that lookup always finds none: answering none at once gives the
    same seed (``common_utils.SEED``) and the same samples."""
    from torch.testing._internal import common_utils
    from torch.testing._internal.opinfo import core

    # A torch without the lookup (older or newer) keeps whatever it does.
    patched = [m for m in (common_utils, core) if hasattr(m, "extract_test_fn")]
    saved = [m.extract_test_fn for m in patched]
    for module in patched:
        module.extract_test_fn = lambda: None
    try:
        yield
    finally:
        for module, fn in zip(patched, saved, strict=True):
            module.extract_test_fn = fn


# The device modules whose seeding PyTorch defers until the device starts (torch.manual_seed
# seeds each of them): each deferred seed keeps the caller's whole stack as text.
_LAZY_SEED_MODULES = ("torch.cuda", "torch.xpu", "torch.mtia")


class _NoStackText:
    """Stands in for ``traceback`` in a device module while the corpus seeds: its deferred
    seeds keep this line, not the stack."""

    @staticmethod
    def format_stack(*_args: Any, **_kwargs: Any) -> list[str]:
        return ["(stack not recorded while tvm_conformance.op_corpus seeds PyTorch)\n"]


@contextlib.contextmanager
def _unrecorded_lazy_seeds() -> Iterator[None]:
    """``torch.manual_seed`` also seeds CUDA, XPU and MTIA; where one of them has not started
    (always on a CPU run) it queues the seed with ``traceback.format_stack()``, text kept only
    to tell where the seed came from should that device fail to start later. Samples and
    exclusion runs seed thousands of times a chunk, at 0.2-0.6 ms of stack formatting each
    (about a twentieth of a tier chunk's CPU). The seeds are still queued and every generator
    seeded as before; only that text is a fixed line meanwhile. A decorator of the functions
    that make samples and run them."""
    modules = [sys.modules.get(name) for name in _LAZY_SEED_MODULES]
    # A torch without the queue's stack text (older or newer) keeps whatever it does.
    patched = [m for m in modules if m is not None and getattr(m, "traceback", None) is not None]
    saved = [m.traceback for m in patched]
    for module in patched:
        module.traceback = _NoStackText
    try:
        yield
    finally:
        for module, original in zip(patched, saved, strict=True):
            module.traceback = original


def op_name(op: Any) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def names(kind: str) -> list[str]:
    """Every op (``kind="op"``) or module name of the corpus, in PyTorch's order."""
    if kind == "op":
        return [op_name(op) for op in op_db()]
    if kind == "module":
        return [m.name for m in module_db()]
    raise ValueError(f"kind must be 'op' or 'module', not {kind!r}")


def _dtype(name: str) -> torch.dtype:
    return getattr(torch, name)


def _is_tensor_list(value: Any) -> bool:
    return (
        isinstance(value, (list, tuple))
        and bool(value)
        and all(isinstance(v, torch.Tensor) for v in value)
    )


def _tensors_of(values: Sequence[Any]) -> list[torch.Tensor]:
    out = []
    for v in values:
        if isinstance(v, torch.Tensor):
            out.append(v)
        elif _is_tensor_list(v):
            out.extend(v)
    return out


def _template(value: Any, counter: list[int]) -> Any:
    """``value`` with each tensor replaced by its input position (an _Input)."""
    if isinstance(value, torch.Tensor):
        counter[0] += 1
        return _Input(counter[0] - 1)
    if _is_tensor_list(value):
        return type(value)(_template(v, counter) for v in value)
    return value


@dataclasses.dataclass(frozen=True)
class _Input:
    position: int


def _fill(value: Any, tensors: Sequence[Any]) -> Any:
    if isinstance(value, _Input):
        return tensors[value.position]
    if isinstance(value, (list, tuple)) and any(isinstance(v, _Input) for v in value):
        return type(value)(_fill(v, tensors) for v in value)
    return value


class _OpModel(torch.nn.Module):
    """An OpInfo sample as a module: its tensors are the inputs, the rest constants."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]):
        super().__init__()
        self.fn, self.args, self.kwargs = fn, args, kwargs

    def call(self, tensors: Sequence[Any]) -> Any:
        args = [_fill(a, tensors) for a in self.args]
        kwargs = {k: _fill(v, tensors) for k, v in self.kwargs.items()}
        return self.fn(*args, **kwargs)


def _fixed_arity(base: type, arity: int) -> type:
    """A subclass of ``base`` whose forward takes ``arity`` tensors and hands them to
    ``self.call``: fx traces a forward of fixed arity, not ``*args``."""
    params = ", ".join(f"t{i}" for i in range(arity))
    packed = params + ("," if arity == 1 else "")
    namespace: dict[str, Any] = {}
    source = f"def forward(self, {params}):\n    return self.call(({packed}))\n"
    exec(source, namespace)  # noqa: S102 - a generated signature, no outside input
    return type(f"{base.__name__}{arity}", (base,), {"forward": namespace["forward"]})


@functools.cache
def _op_model_class(arity: int) -> type[_OpModel]:
    return _fixed_arity(_OpModel, arity)


def _sample_class(values: Sequence[Any], kwargs: dict[str, Any]) -> str:
    """What distinguishes samples for recording a deviation: the tensor ranks (``e`` for an
    empty tensor) and the keywords given."""
    ranks = ",".join(
        ("e" if t.numel() == 0 else "") + str(t.dim()) for t in _tensors_of(list(values))
    )
    return f"r[{ranks}]" + (f"k[{','.join(sorted(kwargs))}]" if kwargs else "")


# The //... tier's frontends: the decomposed export costs about 0.8 s per decomposition (a
# fixed cost of torch.export's run_decompositions), so it runs under --config=op_corpus only.
TIER_FRONTENDS: tuple[str, ...] = ("exported_program_undecomposed", "fx", "fx_child")
# The tier's exec modes besides bytecode, each on a share of its cases: every name's first case
# in each frontend that bytecode did not already fail (with the cases batched with it), so every
# op and module with a case left to judge meets each mode, for one more merged build a chunk.
# Measured on op-3of7 (user CPU, 2 cores beside other work, paired runs): this share 29.3-31.3 s
# in three runs, none 27.7-32.5 s (no difference within the noise); the first case of every
# (name, dtype, frontend) cell 35.2-37.6 s in two, against 28.2-35.4 s (about 14 % more); every
# case in both modes 40.0 s (about 27 % more).
TIER_SHARE_MODES: tuple[str, ...] = ("compiled",)


def _argument_kind(value: Any) -> str:
    """How a sample gives an argument: None, an empty list or tuple (PyTorch's spelling of
    "the default" for sizes and strides: avg_pool2d's ``stride=()``), or a value."""
    if value is None:
        return "none"
    if isinstance(value, (list, tuple)) and not value:
        return "empty"
    return "given"


def _rank_class(value: Any) -> int:
    """0, 1 or 2 (two axes or more): what an argument left at its default can mean for a
    tensor. A default often means "every axis", which a 0-d or 1-d input cannot tell from
    "one axis"; -1 for an input that is no tensor."""
    return min(value.dim(), 2) if isinstance(value, torch.Tensor) else -1


def _tier_subset(
    samples: list[Any],
    calls_of: Callable[[Any], list[tuple]],
    input_of: Callable[[Any], Any],
) -> list[int]:
    """The fixed float32 subset the //... tier runs: the first sample, and each later one that
    gives an argument in a way not seen yet: every position and keyword of the signature as
    PyTorch's samples walk it, omitted, None (or empty) and explicit, and each default form
    (omitted, None, empty) with an input of each rank class (:func:`_rank_class`).
    ``calls_of(sample)`` is its calls' ``(namespace, args, kwargs)`` (a module's constructor
    and forward), ``input_of(sample)`` the tensor the op or module works on."""
    arity: dict[str, int] = {}
    keywords: dict[str, set[str]] = {}
    for sample in samples:
        for namespace, args, kwargs in calls_of(sample):
            arity[namespace] = max(arity.get(namespace, 0), len(args))
            keywords.setdefault(namespace, set()).update(kwargs)
    chosen: list[int] = []
    seen: set[tuple[object, ...]] = set()
    for i, sample in enumerate(samples):
        kinds: set[tuple[object, ...]] = set()
        for namespace, args, kwargs in calls_of(sample):
            kinds |= {(namespace, j, _argument_kind(v)) for j, v in enumerate(args)}
            kinds |= {(namespace, j, "omitted") for j in range(len(args), arity[namespace])}
            kinds |= {(namespace, k, _argument_kind(v)) for k, v in kwargs.items()}
            kinds |= {(namespace, k, "omitted") for k in keywords[namespace] - set(kwargs)}
        rank = _rank_class(input_of(sample))
        kinds |= {(*kind, rank) for kind in kinds if kind[2] in ("omitted", "none", "empty")}
        if not chosen or kinds - seen:
            chosen.append(i)
            seen |= kinds
    return chosen


def _first_and_largest(values_of_samples: Sequence[Sequence[Any]]) -> list[int]:
    """The tier's samples in an op's other dtype: the first (often a 0-d or empty edge case)
    and the one holding the most tensor elements (the first of them on a tie), where that is
    another: a single small sample tells little of a kernel in that dtype (issue 69)."""
    if not values_of_samples:
        return []
    sizes = [sum(t.numel() for t in _tensors_of(list(v))) for v in values_of_samples]
    largest = max(range(len(sizes)), key=lambda i: (sizes[i], -i))
    return [0] if largest == 0 else [0, largest]


def tier_dtypes(name: str, listed: Sequence[str]) -> list[str]:
    """The op's main dtype first: float32, or for an op that lists no float32 (the integer and
    bool ops: gcd, bitwise_and, bincount, ...) one of its listed dtypes; then, for one name in
    three, one other listed dtype. Both are chosen by the name (stable across runs and
    machines), so that every op with a sample has a case and every listed dtype appears."""
    others = [d for d in listed if d != "float32"]
    chosen = [d for d in listed if d == "float32"]
    number = int(hashlib.sha256(name.encode()).hexdigest(), 16)
    # One name in three: enough that every listed dtype appears, at a third of the cost.
    if others and (number % 3 == 0 or not chosen):
        chosen.append(others[(number // 3) % len(others)])
    return chosen


def _listed_dtypes(supported: Iterable[torch.dtype], dtypes: Sequence[str]) -> list[str]:
    have = {str(d).removeprefix("torch.") for d in supported}
    return [d for d in dtypes if d in have]


_NOT_COMPARABLE = re.compile(r"Expected: \S+ is not comparable")


def _marked_not_comparable(op: Any) -> bool:
    """Whether OpInfo skips a comparison of the op's eager results as not comparable
    (TestDecomp's skips are about a decomposition, not the op, and do not count)."""
    import inspect

    for info in op.decorators:
        if getattr(info, "cls_name", None) == "TestDecomp":
            continue
        for decorator in getattr(info, "decorators", [info]):
            try:
                reason = inspect.getclosurevars(decorator).nonlocals.get("reason")
            except TypeError:  # not a plain function (a class decorator): no skip reason
                continue
            if isinstance(reason, str) and _NOT_COMPARABLE.fullmatch(reason):
                return True
    return False


def _bool_parameters(op: Any) -> dict[str, tuple[int, bool]]:
    """The op's bool parameters that have a default, by name: (position, counting the input
    as 0; default). From its ATen schema (every overload that neither mutates nor writes an
    ``out``), or, for an op with no ATen packet of its name (``nn.functional.*``), its Python
    signature: the op's own reference for the values PyTorch's samples leave out."""
    import inspect

    found: dict[str, tuple[int, bool]] = {}
    packet = getattr(torch.ops.aten, op.aten_name, None) if op.aten_name else None
    if packet is not None:
        for overload in packet.overloads():
            schema = getattr(packet, overload)._schema
            if schema.is_mutable or "out" in overload.split("_"):
                continue
            for position, arg in enumerate(schema.arguments):
                if str(arg.type) == "bool" and arg.has_default_value():
                    found.setdefault(arg.name, (position, bool(arg.default_value)))
        return found
    try:
        params = list(inspect.signature(op.op).parameters.values())
    except (TypeError, ValueError):  # a builtin with no signature: nothing to read
        return found
    for position, param in enumerate(params):
        if isinstance(param.default, bool):
            found[param.name] = (position, param.default)
    return found


# Bool parameters not varied, by name, and why: each changes nothing an inference run can
# compare element by element.
UNVARIED_PARAMETERS: dict[str, str] = {
    "requires_grad": "autograd only: the corpus runs inference",
    "sparse_grad": "autograd only: the corpus runs inference",
    "sorted": "sorted=False leaves the order unspecified: no element-wise reference",
}


def _schema_variants(
    op: Any, samples: Sequence[Any]
) -> list[tuple[int, tuple[Any, ...], dict[str, Any], str]]:
    """Samples with one bool parameter the samples never give its other value (topk's
    ``largest=False``) set to it, one per such parameter: ``(sample index, args, kwargs,
    label)``, the label ``v[largest=False]`` added to the case's sample class.
    The sample is the one holding the most tensor elements that PyTorch runs with the value
    (a variant PyTorch rejects in every sample, such as max.binary's ``keepdim``, which
    belongs to another overload, is left out): deterministic, chosen by size then position."""
    given: dict[str, set[bool]] = {}
    bools = _bool_parameters(op)
    for s in samples:
        for key, (position, _) in bools.items():
            if isinstance(s.kwargs.get(key), bool):
                given.setdefault(key, set()).add(s.kwargs[key])
            if 0 < position <= len(s.args) and isinstance(s.args[position - 1], bool):
                given.setdefault(key, set()).add(s.args[position - 1])
    sizes = [
        sum(t.numel() for t in _tensors_of([s.input, *s.args, *s.kwargs.values()])) for s in samples
    ]
    by_size = sorted(range(len(samples)), key=lambda i: (-sizes[i], i))
    variants = []
    for key, (position, default) in sorted(bools.items()):
        value = not default
        if key in UNVARIED_PARAMETERS or value in given.get(key, set()):
            continue
        for i in by_size:
            s = samples[i]
            args, kwargs = list(s.args), dict(s.kwargs)
            if 0 < position <= len(args):
                # Given positionally: replaced where that position holds a bool, else the
                # op's Python arguments do not line up with its schema here.
                if not isinstance(args[position - 1], bool):
                    continue
                args[position - 1] = value
            else:
                kwargs[key] = value
            try:  # on copies: an op may write to its input (`inplace=True`)
                probe = copy.deepcopy((s.input, args, kwargs))
                with torch.no_grad(), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    op.op(probe[0], *probe[1], **probe[2])
            except Exception:  # noqa: BLE001, S112 - PyTorch rejects it here: the next sample
                continue
            variants.append((i, tuple(args), kwargs, f"v[{key}={value}]"))
            break
    return variants


@_unrecorded_lazy_seeds()
def op_cases(name: str, *, dtypes: Sequence[str] = DTYPES, tier: bool = True) -> list[Case]:
    """The cases of OpInfo op ``name`` (``name.variant``): its CPU samples in each listed
    dtype (the tier's subset, or all)."""
    ops = [op for op in op_db() if op_name(op) == name]
    if not ops:
        raise ValueError(f"no OpInfo op named {name!r} in torch {torch.__version__}")
    op = ops[0]
    # OpInfo runs an op whose result depends on the random generator through
    # wrapper_set_seed (its own marking: the seed is reset on every call, so two runs agree).
    code = getattr(op.op, "__code__", None)
    seeded = "random" if code is not None and "wrapper_set_seed" in code.co_names else ""
    # An op returning uninitialized memory (the empty family) is marked by OpInfo itself: it
    # skips its eager comparisons as not comparable. Measuring it instead is chance: a 1-byte
    # bool is as likely to hold True, the filled value, as anything else.
    seeded = seeded or ("undefined" if _marked_not_comparable(op) else "")
    cases = []
    listed = _listed_dtypes(op.supported_dtypes("cpu"), dtypes)
    chosen = tier_dtypes(name, listed) if tier else listed
    # The tier walks the argument forms in the op's main dtype, sample 0 in the other.
    main = chosen[0] if chosen else ""
    for dtype in chosen:
        torch.manual_seed(0)
        with _no_test_lookup():
            samples = list(op.sample_inputs("cpu", _dtype(dtype), requires_grad=False))
        keep = range(len(samples))
        if tier:
            keep = (
                _tier_subset(samples, lambda s: [("", s.args, s.kwargs)], lambda s: s.input)
                if dtype == main
                else _first_and_largest([[s.input, *s.args, *s.kwargs.values()] for s in samples])
            )
        picked = [(i, samples[i].args, samples[i].kwargs, "") for i in keep]
        if tier and dtype == main:
            # An argument the samples never vary, varied from the op's own signature; a
            # variant's index follows the samples' (len(samples) + its rank).
            picked += _schema_variants(op, samples)
        for n, (i, s_args, s_kwargs, varied) in enumerate(picked):
            s = samples[i]
            values = [s.input, *s_args]
            counter = [0]
            args = tuple(_template(v, counter) for v in values)
            kwargs = {k: _template(v, counter) for k, v in s_kwargs.items()}
            inputs = tuple(_tensors_of([*values, *s_kwargs.values()]))
            model = _op_model_class(len(inputs))(op.op, args, kwargs).eval()
            klass = _sample_class(values, s_kwargs) + varied
            index = i if not varied else len(samples) + n - len(keep)
            cases.append(Case("op", name, dtype, index, klass, model, inputs, seeded))
    return cases


@_unrecorded_lazy_seeds()
def module_cases(name: str, *, dtypes: Sequence[str] = DTYPES, tier: bool = True) -> list[Case]:
    """The cases of ModuleInfo module ``name``: each constructor and forward input in eval
    mode, in each listed dtype."""
    infos = [m for m in module_db() if m.name == name]
    if not infos:
        raise ValueError(f"no ModuleInfo module named {name!r} in torch {torch.__version__}")
    info = infos[0]
    cases = []
    listed = _listed_dtypes(info.supported_dtypes("cpu"), dtypes)
    for dtype in tier_dtypes(name, listed) if tier else listed:
        torch.manual_seed(0)
        samples = list(
            info.module_inputs_func(
                info, device="cpu", dtype=_dtype(dtype), requires_grad=False, training=False
            )
        )

        def ctor_kwargs(s: Any) -> dict[str, Any]:
            return {**s.constructor_input.kwargs, **s.forward_input.kwargs}

        def calls(s: Any) -> list[tuple]:
            ctor, forward = s.constructor_input, s.forward_input
            return [("init", ctor.args, ctor.kwargs), ("forward", forward.args, forward.kwargs)]

        keep = range(len(samples))
        if tier:
            keep = (
                _tier_subset(samples, calls, lambda s: next(iter(s.forward_input.args), None))
                if dtype == "float32"
                else [0][: len(samples)]
            )
        for i in keep:
            s = samples[i]
            forward = [*s.forward_input.args, *s.forward_input.kwargs.values()]
            klass = (
                "c" + str(len(s.constructor_input.args)) + _sample_class(forward, ctor_kwargs(s))
            )
            excluded = ""
            if s.forward_input.kwargs or not all(isinstance(a, torch.Tensor) for a in forward):
                excluded = "untraceable"
            try:
                torch.manual_seed(0)
                model = info.module_cls(*s.constructor_input.args, **s.constructor_input.kwargs).to(
                    _dtype(dtype)
                )
                model.eval()
            except Exception:  # noqa: BLE001 - a constructor PyTorch's own tests expect to raise
                model, excluded = None, "untraceable"
            inputs = tuple(a for a in forward if isinstance(a, torch.Tensor))
            cases.append(Case("module", name, dtype, i, klass, model, inputs, excluded))
    return cases


# --------------------------------------------------------------------------------------------
# Exclusion (PyTorch alone)


def _flatten(output: Any) -> list[Any]:
    if isinstance(output, (list, tuple)):
        return [x for o in output for x in _flatten(o)]
    return [output]


def _same(a: list[Any], b: list[Any]) -> bool:
    """Bit-identical outputs (NaN where NaN): PyTorch ran the same op twice; any difference
    means the op is random or reads undefined memory, not a rounding question."""

    def identical(x: torch.Tensor, y: torch.Tensor) -> bool:
        x, y = x.double(), y.double()
        return bool(((x == y) | (x.isnan() & y.isnan())).all())

    return len(a) == len(b) and all(
        isinstance(x, torch.Tensor)
        and isinstance(y, torch.Tensor)
        and x.shape == y.shape
        and identical(x, y)
        for x, y in zip(a, b, strict=True)
    )


@_unrecorded_lazy_seeds()
def exclusion(case: Case) -> str:
    """The EXCLUSION_RULES key that leaves ``case`` out, or ""."""
    if case.excluded:
        return case.excluded
    assert case.model is not None

    def run(seed: int) -> list[Any]:
        torch.manual_seed(seed)
        return _flatten(case.model(*[t.clone() for t in case.inputs]))

    import torch.utils.deterministic as deterministic

    with torch.no_grad():
        try:
            plain = run(0)
        except Exception:  # noqa: BLE001 - PyTorch refuses its own sample (an error input)
            return "untraceable"
        if not all(isinstance(t, torch.Tensor) for t in plain):
            return "not_tensor"
        if any(t.is_complex() for t in plain):
            return "complex_output"
        if any(t.layout != torch.strided for t in plain):
            return "sparse_output"
        # What uninitialized memory holds is chance (a freed buffer of the same size, perhaps
        # one PyTorch filled with NaN a moment ago), so each question is asked in a way chance
        # cannot answer: the seeds are compared with uninitialized memory filled (NaN, the
        # integer maximum), and two plain runs, the second after freed zeros of each output's
        # size (a buffer malloc is likely to hand back), against the filled one.
        old = (
            torch.are_deterministic_algorithms_enabled(),
            deterministic.fill_uninitialized_memory,
        )
        try:
            torch.use_deterministic_algorithms(True, warn_only=True)
            deterministic.fill_uninitialized_memory = True
            filled = [run(0), run(1)]
        except Exception:  # noqa: BLE001 - no deterministic kernel: only the plain runs
            filled = []
        finally:
            torch.use_deterministic_algorithms(old[0])
            deterministic.fill_uninitialized_memory = old[1]
        if filled and not _same(filled[0], filled[1]):
            return "random"
        zeros = [torch.zeros_like(t) for t in plain]
        del zeros
        after_zeros = run(1)
        if not _same(plain, after_zeros):
            # Not random when filled (checked above), so memory; without a deterministic
            # kernel the two plain runs under two seeds are all there is to compare.
            return "undefined" if filled else "random"
        if filled and not _same(plain, filled[0]):
            return "undefined"
    return ""


# --------------------------------------------------------------------------------------------
# Through TVM


def import_case(case: Case, frontend: str) -> Any:
    """The case's model as a Relax function (its weights bound as constants)."""
    assert case.model is not None
    model, inputs = case.model, case.inputs
    if frontend.startswith("exported_program"):
        from tvm.relax.frontend.torch import from_exported_program

        try:
            program = torch.export.export(model, inputs)
        except Exception as err:  # noqa: BLE001
            raise _Untraceable(f"{type(err).__name__}: {err}") from err
        mod = from_exported_program(program, run_ep_decomposition=frontend == "exported_program")
    else:
        from tvm.relax.frontend.torch import from_fx

        root = _child_class(len(inputs))(model) if frontend == "fx_child" else model
        try:
            graph = torch.fx.symbolic_trace(root)
        except Exception as err:  # noqa: BLE001
            raise _Untraceable(f"{type(err).__name__}: {err}") from err
        info = [(tuple(t.shape), str(t.dtype).removeprefix("torch.")) for t in inputs]
        mod = from_fx(graph, info)
    return mod


class _Untraceable(Exception):
    pass


class _Child(torch.nn.Module):
    """A module as the child of the traced root: fx records a call_module."""

    def __init__(self, child: torch.nn.Module):
        super().__init__()
        self.child = child

    def call(self, tensors: Sequence[Any]) -> Any:
        return self.child(*tensors)


@functools.cache
def _child_class(arity: int) -> type[_Child]:
    return _fixed_arity(_Child, arity)


def _message(err: BaseException) -> str:
    """The error's first three lines, whole: TVM's messages carry C++ backtraces after the
    lines that name the error. Never cut shorter: a record compares the whole message, so a
    new failure in a later output of a recorded case is not taken for the recorded one."""
    text = f"{type(err).__name__}: {err}"
    return " ".join(text.split("\n")[:3])


def _numpy(t: torch.Tensor) -> np.ndarray:
    """A tensor's values as numpy (bfloat16 as ml_dtypes' bfloat16, which numpy lacks)."""
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        import ml_dtypes

        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def _to_numpy(value: Any) -> list[np.ndarray]:
    import tvm

    if isinstance(value, tvm.runtime.Tensor):
        return [value.numpy()]
    if isinstance(value, (list, tuple)) or hasattr(value, "__len__"):
        return [a for v in value for a in _to_numpy(v)]
    return [np.asarray(value)]


def _pytorch_within_rule(case: Case, refs: Sequence[Any]) -> bool:
    """Whether PyTorch's own outputs (in the case's dtype) are within the tolerance rule: a
    rule that rejects PyTorch itself would fail TVM for rounding, not for a fault."""
    from tvm_conformance import numerics

    assert case.model is not None
    with torch.no_grad():
        torch.manual_seed(0)
        outputs = _flatten(case.model(*[t.clone() for t in case.inputs]))
    own = [
        t.detach().float().numpy().astype(numerics.numpy_dtype(t.dtype))
        if t.dtype == torch.bfloat16
        else t.detach().numpy()
        for t in outputs
    ]
    return numerics.matches(own, refs)


def _unscored_outputs(case: Case) -> list[None] | None:
    """One placeholder per output PyTorch gives (how a batch splits TVM's outputs among its
    cases) for a case the reference cannot score; None when PyTorch itself fails."""
    assert case.model is not None
    try:
        with torch.no_grad():
            torch.manual_seed(0)
            return [None] * len(_flatten(case.model(*[t.clone() for t in case.inputs])))
    except Exception:  # noqa: BLE001
        return None


def _progress(step: str) -> None:
    """Name the step under way in the file $OP_CORPUS_PROGRESS (run_isolated's child): a
    process TVM kills names its culprit there, when the step is one case's."""
    path = os.environ.get("OP_CORPUS_PROGRESS")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            f.write(step)


class _Batch(torch.nn.Module):
    """Several cases as one model: one export and one decomposition for all (the
    decomposition costs about 0.8 s per call, whatever the graph), each output flattened."""

    def __init__(self, cases: Sequence[Case], root: bool):
        super().__init__()
        self.parts = torch.nn.ModuleList([c.model for c in cases])
        self.arities = [len(c.inputs) for c in cases]

    def call(self, tensors: Sequence[Any]) -> tuple[Any, ...]:
        outputs, start = [], 0
        for part, arity in zip(self.parts, self.arities, strict=True):
            outputs.extend(_flatten(part(*tensors[start : start + arity])))
            start += arity
        return tuple(outputs)


@functools.cache
def _batch_class(arity: int) -> type[_Batch]:
    return _fixed_arity(_Batch, arity)


@dataclasses.dataclass
class _Unit:
    """What one Relax function computes: one case, or a batch of cases (outputs in order)."""

    mod: Any
    items: list[tuple[Case, list[Any], Result]]


def _split_unit(unit: _Unit) -> list[_Unit] | None:
    """A batch's function as two, each computing half of its cases from their own inputs
    (the other half's graph dropped by DeadCodeElimination): no export or decomposition
    again. None where the function is not the batch's inputs in order, giving one flat tuple
    of the cases' outputs."""
    import tvm
    from tvm import relax

    main = unit.mod["main"]
    body = main.body
    counts = [len(refs) for _, refs, _ in unit.items]
    arities = [len(case.inputs) for case, _, _ in unit.items]
    last = body.blocks[-1].bindings[-1] if body.blocks and body.blocks[-1].bindings else None
    if (
        len(main.params) != sum(arities)
        or not isinstance(last, relax.VarBinding)
        or not last.var.same_as(body.body)
        or not isinstance(last.value, relax.Tuple)
        or len(last.value.fields) != sum(counts)
    ):
        return None
    half = len(unit.items) // 2
    units = []
    for items, lo, hi in ((unit.items[:half], 0, half), (unit.items[half:], half, len(counts))):
        first, out_start = sum(arities[:lo]), sum(counts[:lo])
        value = relax.Tuple(last.value.fields[out_start : out_start + sum(counts[lo:hi])])
        # The tuple's type: `ty` from TVM 0.27, `struct_info` before.
        info = value.ty if hasattr(value, "ty") else value.struct_info
        out = relax.Var("gv", info)
        block = body.blocks[-1]
        block = type(block)([*block.bindings[:-1], relax.VarBinding(out, value)])
        seq = relax.SeqExpr([*body.blocks[:-1], block], out)
        part = tvm.IRModule(
            {gv: f for gv, f in unit.mod.functions.items() if gv.name_hint != "main"}
        )
        part["main"] = relax.Function(main.params, seq, info, main.is_pure, main.attrs)
        part = relax.transform.DeadCodeElimination(["main"])(part)
        kept = part["main"]
        # The half's own inputs only: what DCE left must use no other parameter.
        params = main.params[first : first + sum(arities[lo:hi])]
        func = relax.Function(params, kept.body, info, kept.is_pure, kept.attrs)
        if relax.analysis.free_vars(func):
            return None
        part["main"] = func
        units.append(_Unit(part, items))
    return units


# Cases per Relax function in the compiled exec mode: a decomposed batch is one function, and
# the compiled mode turns a function into one TIR function whose LLVM code generation grows
# faster than its size (nn.LinearCrossEntropyLoss, float32, samples k mod 8 = 0: one batch of
# 108 cases, 1.9 MB of TIR, 48.7 s of code generation alone against 1.3 s for the module's 141
# other functions). The bytecode mode interprets the function and keeps the batch whole.
COMPILED_CASES = 16


def _bounded(unit: _Unit, cases: int) -> list[_Unit]:
    """``unit`` as functions of at most ``cases`` cases each (halved by _split_unit), in
    order; whole where its function cannot be split."""
    if len(unit.items) <= cases or (parts := _split_unit(unit)) is None:
        return [unit]
    return [bounded for part in parts for bounded in _bounded(part, cases)]


# Cases per batch of an op the undecomposed import refused (run_cases' import_probed): a batch
# whose build fails is built again in halves down to the case that fails, so a smaller batch
# bounds that cost, and a larger one saves little (a decomposition costs ~0.4 s of CPU
# whatever the graph).
PROBED_BATCH = 16


@_unrecorded_lazy_seeds()
def run_cases(
    cases: Sequence[Case],
    frontends: Sequence[str] | None = None,
    *,
    exec_modes: Sequence[str] = ("bytecode",),
    share_modes: Sequence[str] = (),
    target: str = "llvm",
) -> list[Result]:
    """Every case through every frontend of its kind (or ``frontends``), scored: built and
    run in each of ``exec_modes``, and in each of ``share_modes`` on every name's first unit
    per frontend (_first_units)."""
    import tvm
    from tvm import relax

    from tvm_conformance import numerics

    results: list[Result] = []
    # Per frontend, the cases PyTorch can evaluate, with their references.
    ready: dict[str, list[tuple[Case, list[Any], Result]]] = {}
    for case in cases:
        _progress(f"case {case.name}")
        reason, refs, unscored = _torch_facts(case)
        for frontend in frontends or case.frontends:
            if frontend not in case.frontends:
                continue
            result = Result(
                case.kind, case.name, case.dtype, frontend, case.index, case.sample_class, ""
            )
            results.append(result)
            unsafe = unsafe_record(result)
            if reason:
                result.outcome, result.detail = "excluded", reason
            elif unsafe:
                result.outcome, result.deviation = "deviating", unsafe["id"]
                result.detail = f"not run: {unsafe['unsafe']} (pinned by {unsafe['pinned_by']})"
            else:
                if unscored:
                    result.detail = f"{unscored}: not scored"
                ready.setdefault(frontend, []).append((case, refs, result))

    def import_one(item: tuple[Case, list[Any], Result], frontend: str) -> _Unit | None:
        case, _, result = item
        _progress(f"case {case.name}")
        try:
            return _Unit(import_case(case, frontend), [item])
        except _Untraceable as err:
            result.outcome, result.detail = "excluded", f"untraceable: {err}"[:300]
        except Exception as err:  # noqa: BLE001
            result.detail = "import: " + _message(err)
            result.outcome = "refused" if frontend_refusal(err) else "failing"
        return None

    def import_batch(items: list[tuple[Case, list[Any], Result]], frontend: str) -> list[_Unit]:
        # The decomposed path: one export of the whole batch; halves where it fails.
        if not items:  # (an empty batch would fail, and halve, without end)
            return []
        if len(items) == 1:
            unit = import_one(items[0], frontend)
            return [unit] if unit else []
        _progress("batch")
        batch = [c for c, _, _ in items]
        model = _batch_class(sum(len(c.inputs) for c in batch))(batch, True).eval()
        flat = tuple(t for c in batch for t in c.inputs)
        try:
            batch_case = Case("op", "batch", "", 0, "", model, flat)
            return [_Unit(import_case(batch_case, frontend), items)]
        except Exception:  # noqa: BLE001 - some case of the batch: find it
            half = len(items) // 2
            return import_batch(items[:half], frontend) + import_batch(items[half:], frontend)

    def import_probed(items: list[tuple[Case, list[Any], Result]], frontend: str) -> list[_Unit]:
        # Cases the undecomposed import refused, decomposed, per op: the op's first case
        # alone; where it imports, the op's other cases in batches of PROBED_BATCH (the
        # decomposition is what lets an op PyTorch's export keeps whole be imported: rot90's
        # 204 samples 14 decompositions instead of 204); where it does not, each of them
        # alone (a batch of refusals would cost a bisection).
        by_name: dict[str, list[tuple[Case, list[Any], Result]]] = {}
        for item in items:
            by_name.setdefault(item[0].name, []).append(item)
        found: list[_Unit] = []
        for group in by_name.values():
            first = import_one(group[0], frontend)
            if first:
                found.append(first)
                for at in range(1, len(group), PROBED_BATCH):
                    found += import_batch(group[at : at + PROBED_BATCH], frontend)
            else:
                found += [u for item in group[1:] if (u := import_one(item, frontend))]
        return found

    units: list[tuple[_Unit, str]] = []
    # The undecomposed import first: a case it cannot import is imported decomposed apart
    # from the others, its op's cases probed first (import_probed): one failure in a batch
    # costs a bisection of decompositions.
    order = sorted(ready, key=lambda f: f != "exported_program_undecomposed")
    alone: set[int] = set()
    for frontend in order:
        items = ready[frontend]
        if frontend == "exported_program":
            batched = [i for i in items if id(i[0]) not in alone]
            units += [(u, frontend) for u in import_batch(batched, frontend)]
            probed = [i for i in items if id(i[0]) in alone]
            units += [(u, frontend) for u in import_probed(probed, frontend)]
            continue
        for item in items:
            if unit := import_one(item, frontend):
                units.append((unit, frontend))
            elif frontend == "exported_program_undecomposed":
                alone.add(id(item[0]))

    def build(batch: list[tuple[_Unit, str]], mode: str) -> Any:
        merged = tvm.IRModule()
        for n, (unit, _) in enumerate(batch):
            for gv, func in unit.mod.functions.items():
                name = f"f{n}" if gv.name_hint == "main" else f"f{n}_{gv.name_hint}"
                if isinstance(func, relax.Function):
                    func = func.with_attr("global_symbol", name)
                merged[name] = func
        return relax.VirtualMachine(relax.build(merged, target, exec_mode=mode), tvm.cpu())

    def resplit(unit: _Unit, frontend: str, mode: str, message: str) -> None:
        # A batch unit that failed to build or run: its function split in two halves of its
        # cases (again where a half fails); where that cannot be done, imported again, in
        # halves.
        if len(unit.items) == 1:
            result = unit.items[0][2]
            _ran_in(result, mode)
            result.outcome, result.detail = "failing", message
            return
        if (parts := _split_unit(unit)) is not None:
            run_batch([(u, frontend) for u in parts], mode)
            return
        half = len(unit.items) // 2
        for part in (unit.items[:half], unit.items[half:]):
            run_batch([(u, frontend) for u in import_batch(part, frontend)], mode)

    def run_batch(batch: list[tuple[_Unit, str]], mode: str) -> None:
        if not batch:
            return
        _progress(
            "batch"
            if len(batch) > 1 or len(batch[0][0].items) > 1
            else f"case {batch[0][0].items[0][0].name}"
        )
        try:
            vm = build(batch, mode)
        except Exception as err:  # noqa: BLE001
            if len(batch) == 1:
                resplit(*batch[0], mode, f"build ({mode}): " + _message(err))
                return
            half = len(batch) // 2
            run_batch(batch[:half], mode)
            run_batch(batch[half:], mode)
            return
        for n, (unit, frontend) in enumerate(batch):
            _progress("batch" if len(unit.items) > 1 else f"case {unit.items[0][0].name}")
            try:
                args = [
                    tvm.runtime.tensor(_numpy(t), tvm.cpu())
                    for case, _, _ in unit.items
                    for t in case.inputs
                ]
                actual = _to_numpy(vm[f"f{n}"](*args))
            except Exception as err:  # noqa: BLE001
                resplit(unit, frontend, mode, f"run ({mode}): " + _message(err))
                continue
            if len(actual) != sum(len(refs) for _, refs, _ in unit.items):
                if len(unit.items) > 1:
                    resplit(unit, frontend, mode, "")
                    continue
            start = 0
            for _, refs, result in unit.items:
                _ran_in(result, mode)
                if result.outcome:
                    start += len(refs)
                    continue
                mine = actual[start : start + len(refs)] if len(unit.items) > 1 else actual
                start += len(refs)
                if result.detail.endswith(": not scored"):
                    if len(mine) != len(refs):
                        result.outcome = "failing"
                        result.detail = (
                            f"{mode}: the result has {len(mine)} output(s), PyTorch {len(refs)}"
                        )
                    continue
                try:
                    numerics.check_outputs(mine, refs)
                except AssertionError as err:
                    result.outcome, result.detail = "failing", f"{mode}: " + _message(err)

    def for_mode(units: list[tuple[_Unit, str]], mode: str) -> list[tuple[_Unit, str]]:
        if mode != "compiled":
            return units
        return [(part, f) for unit, f in units for part in _bounded(unit, COMPILED_CASES)]

    for mode in exec_modes:
        run_batch(for_mode(units, mode), mode)
    for mode in (m for m in share_modes if m not in exec_modes):
        run_batch(for_mode(_first_units(units), mode), mode)
    for result in results:
        if not result.outcome and result.detail.endswith(": not scored"):
            # TVM ran it; the reference cannot score what it gave.
            result.outcome, result.detail = "excluded", result.detail.removesuffix(": not scored")
        elif not result.outcome:
            result.outcome = "correct"
        elif result.outcome == "failing" and (dev := match_deviation(result)):
            result.outcome, result.deviation = "deviating", dev
    return results


def _torch_facts(case: Case) -> tuple[str, list[Any], str]:
    """What PyTorch alone says of a case: the EXCLUSION_RULES key that leaves it out (or ""),
    its float64 references, and why TVM's result goes unscored (or "")."""
    if case.facts is not None:
        return case.facts
    from tvm_conformance import numerics

    reason = exclusion(case)
    refs: list[Any] = []
    # A reason of the reference's own: TVM still runs the case (its refusal or crash is the
    # outcome); only a result it gives is left unscored, as excluded for that reason.
    unscored = ""
    if not reason:
        try:
            refs = numerics.references(case.model, [t.clone() for t in case.inputs])
            unscored = "unjudgeable" if numerics.judgeable(refs) else ""
        except Exception:  # noqa: BLE001
            unscored = "no_reference"
            found = _unscored_outputs(case)
            if found is None:
                reason = "no_reference"
            else:
                refs = found
    if not reason and not unscored and not _pytorch_within_rule(case, refs):
        reason = "rule_unbounded"
    return reason, refs, unscored


def _ran_in(result: Result, mode: str) -> None:
    """Note that TVM built (and, where the build passed, ran) ``result``'s case in ``mode``."""
    if mode not in result.modes.split(","):
        result.modes = ",".join(filter(None, (result.modes, mode)))


def _first_units(units: Sequence[tuple[_Unit, str]]) -> list[tuple[_Unit, str]]:
    """Each unit that holds some name's first case in its frontend that has not already
    failed (in an earlier mode), in order: a share of the cases that every name meets which
    has a case left to judge. A case keeps the outcome its first failing mode gave it."""
    seen: set[tuple[str, str]] = set()
    first = []
    for unit, frontend in units:
        keys = {(item[0].name, frontend) for item in unit.items if not item[2].outcome}
        if keys - seen:
            first.append((unit, frontend))
            seen |= keys
    return first


# --------------------------------------------------------------------------------------------
# Shards, isolation and the scoreboard


def shard_names(kind: str, shard: int, shards: int) -> list[str]:
    """The names of shard ``shard`` of ``shards`` (round-robin over PyTorch's order)."""
    if not 0 <= shard < shards:
        raise ValueError(f"shard {shard} is not in [0, {shards})")
    return names(kind)[shard::shards]


# Names too heavy for one chunk even in one dtype, dealt in parts of their samples (index k
# modulo m: ``name@dtype#kofm``), measured on the whole corpus's run (docs/op_corpus.md):
# nn.LinearCrossEntropyLoss, 857 samples a dtype, ran 900 s (848 s of CPU) in float32, float16
# and bfloat16 together without finishing, and its chunk (module-6of8) 4,599 s; a quarter of its
# float32 samples over 600 s, a sixty-fourth (14 samples) 24 s with the process's start (the
# cost grew faster than the samples: the compiled mode's one function of a decomposed batch,
# COMPILED_CASES since): sixteen parts a dtype. Bicubic
# interpolation: its 24 float32 samples ran over 600 s (597 s of CPU), three of them 29 s with the
# process's start: eight parts a dtype.
SAMPLE_PARTS: dict[tuple[str, str], int] = {
    ("module", "nn.LinearCrossEntropyLoss"): 16,
    ("op", "nn.functional.interpolate.bicubic"): 8,
}


def units(kind: str) -> list[str]:
    """The whole corpus's units of ``kind``, in PyTorch's order: each name once per scored dtype
    it lists for CPU (``name@dtype``; in parts, ``name@dtype#kofm``, for SAMPLE_PARTS), a name
    that lists none as itself (its ``no_sample`` result). Reading the listed dtypes builds no
    sample."""
    if kind == "op":
        listed = {op_name(op): op.supported_dtypes("cpu") for op in reversed(op_db())}
    elif kind == "module":
        listed = {m.name: m.supported_dtypes("cpu") for m in reversed(module_db())}
    else:
        raise ValueError(f"kind must be 'op' or 'module', not {kind!r}")
    # reversed: the first entry of a name wins, as op_cases and module_cases take the first.
    out = []
    for name in names(kind):
        dtypes = _listed_dtypes(listed[name], DTYPES)
        parts = SAMPLE_PARTS.get((kind, name), 1)
        tails = [f"{PART_SEP}{k}of{parts}" for k in range(parts)] if parts > 1 else [""]
        out += [f"{name}{UNIT_SEP}{d}{t}" for d in dtypes for t in tails] if dtypes else [name]
    return out


def shard_units(kind: str, shard: int, shards: int) -> list[str]:
    """The units of shard ``shard`` of ``shards`` (round-robin over :func:`units`): a name's
    dtypes, consecutive there, land in consecutive shards."""
    if not 0 <= shard < shards:
        raise ValueError(f"shard {shard} is not in [0, {shards})")
    return units(kind)[shard::shards]


def _cases(kind: str, name: str, tier: bool, dtypes: Sequence[str]) -> list[Case]:
    return (op_cases if kind == "op" else module_cases)(name, dtypes=dtypes, tier=tier)


def _unit_cases(kind: str, unit: str, tier: bool, dtypes: Sequence[str]) -> list[Case]:
    """A unit's cases: a ``name@dtype`` unit's in that dtype only (``#kofm``: those whose sample
    index is k modulo m), a bare name's in ``dtypes``."""
    dtype, part = unit_dtype(unit), unit_part(unit)
    cases = _cases(kind, unit_name(unit), tier, (dtype,) if dtype else dtypes)
    return [c for c in cases if c.index % part[1] == part[0]] if part else cases


def run_names(
    kind: str,
    batch: Sequence[str],
    *,
    tier: bool = True,
    dtypes: Sequence[str] = DTYPES,
    exec_modes: Sequence[str] = ("bytecode",),
    prepared: Mapping[str, list[Case]] | None = None,
) -> list[Result]:
    """Every case of the named ops or modules (or ``name@dtype`` units), in this process. A
    name without a case is one ``no_sample`` result; so is a unit's dtype without a sample.
    A unit in ``prepared`` (load_torch_side) takes its cases from there."""
    made = prepared or {}

    def cases_of(unit: str) -> list[Case]:
        return made[unit] if unit in made else _unit_cases(kind, unit, tier, dtypes)

    per_unit = [(unit, cases_of(unit)) for unit in batch]
    cases = [c for _, unit_cases in per_unit for c in unit_cases]
    results = run_cases(
        cases,
        TIER_FRONTENDS if tier else None,
        exec_modes=exec_modes,
        share_modes=TIER_SHARE_MODES if tier else (),
    )
    empty = [unit for unit, unit_cases in per_unit if not unit_cases]
    return results + [
        Result(kind, unit_name(u), "*", unit_dtype(u) or "*", -1, "*", "excluded", "no_sample")
        for u in empty
    ]


def _run_here(
    kind: str,
    batch: list[str],
    *,
    tier: bool,
    exec_modes: Sequence[str],
    prepared: Mapping[str, list[Case]] | None = None,
) -> list[Result]:
    """The batch in this process, less a name recorded as killing the process (a crash
    record): that one runs in a child of its own, after the rest, so their results survive it
    and no other name pays a process start. Alone, it runs here: this process is that child."""
    recorded = crashers(kind, _tvm_version()) if len(batch) > 1 else set()
    alone = [n for n in batch if unit_name(n) in recorded]
    rest = [n for n in batch if n not in alone]
    results = (
        run_names(kind, rest, tier=tier, exec_modes=exec_modes, prepared=prepared) if rest else []
    )
    for name in alone:
        results += run_isolated(kind, [name], tier=tier, exec_modes=exec_modes)
    return results


# --------------------------------------------------------------------------------------------
# PyTorch's side, once for every lane
#
# Much of a tier case's CPU is PyTorch's alone: its sample, the exclusion rules' runs, the
# float64 references (docs/op_corpus.md). No lane's TVM changes it, and the three lanes' torch
# (one version) gives it alike. torch_side computes it for chunks of the tier, a file a chunk
# (a build action of the default lane's venv, whose output every lane reads: BUILD.bazel's
# op_corpus_tier_torch_side); load_torch_side turns a file back into cases for run_names. A
# case keeps its model (an op's sample arguments, a module itself, pickled), so the lane
# exports and traces it as before: what TVM's frontends receive is made in the lane's own
# process (a program that torch.export saved and loaded is not the same input: TVM 0.26's
# importer fails on such programs where it imports the exported ones). A file is used only
# by the torch and numpy that wrote it; a unit whose model does not pickle is made by the
# reader, from PyTorch's corpus, as before.

# 3: the pickles name tvm_conformance.op_corpus's classes, never __main__'s (format 2 named
# __main__._Input: only another `python -m` of this module could read them).
TORCH_SIDE_FORMAT = 3


def _frozen_model(case: Case) -> bytes | None:
    """The case's model, pickled: an op's sample arguments (the op is looked up by name on
    loading: OpInfo's functions are often lambdas), a module itself; None where it does not
    pickle."""
    import pickle

    try:
        if case.kind == "op":
            assert isinstance(case.model, _OpModel)
            return pickle.dumps((case.model.args, case.model.kwargs))
        return pickle.dumps(case.model)
    except Exception:  # noqa: BLE001 - the reader makes this unit's cases itself
        return None


@functools.cache
def _op_function(name: str) -> Callable[..., Any]:
    return next(op for op in op_db() if op_name(op) == name).op


def _thawed_model(kind: str, name: str, arity: int, frozen: bytes) -> torch.nn.Module:
    import pickle

    if kind == "op":
        args, kwargs = pickle.loads(frozen)
        return _op_model_class(arity)(_op_function(name), args, kwargs).eval()
    return pickle.loads(frozen)


def torch_side(kind: str, batch: Sequence[str]) -> dict[str, Any]:
    """PyTorch's side of the tier's cases of ``batch`` (names or units of ``kind``): each
    case's sample, model and what PyTorch says of it (_torch_facts), in PyTorch's order."""
    units: dict[str, list[dict[str, Any]]] = {}
    for unit in batch:
        records = units.setdefault(unit, [])
        for case in _unit_cases(kind, unit, True, DTYPES):
            _progress(f"case {case.name}")
            facts = _torch_facts(case)
            records.append({
                "name": case.name, "dtype": case.dtype, "index": case.index,
                "sample_class": case.sample_class, "excluded": case.excluded,
                "inputs": list(case.inputs), "facts": facts,
                # An excluded case is never imported: its model is not needed.
                "model": b"" if facts[0] else _frozen_model(case),
            })  # fmt: skip
    return {
        "format": TORCH_SIDE_FORMAT,
        "torch": torch.__version__,
        "numpy": np.__version__,
        "kind": kind,
        "names": list(batch),
        "units": units,
    }


def load_torch_side(path: Path) -> tuple[list[str], dict[str, list[Case]], str]:
    """The names of a torch_side file and the cases of its units whose every model came
    back, ready for run_names; the others are left out (run_names makes them). Where this
    process's torch or numpy is not the writer's, nothing: ([], {}, why)."""
    data = torch.load(path, weights_only=False)
    mine = {"format": TORCH_SIDE_FORMAT, "torch": torch.__version__, "numpy": np.__version__}
    if theirs := {k: data.get(k) for k in mine if data.get(k) != mine[k]}:
        return [], {}, f"written by {theirs}, not {mine}"
    kind = data["kind"]
    prepared: dict[str, list[Case]] = {}
    for unit, records in data["units"].items():
        if any(r["model"] is None for r in records):
            continue
        try:
            prepared[unit] = [
                Case(
                    kind, r["name"], r["dtype"], r["index"], r["sample_class"],
                    _thawed_model(kind, r["name"], len(r["inputs"]), r["model"])
                    if r["model"] else None,
                    tuple(r["inputs"]), r["excluded"], tuple(r["facts"]),
                )
                for r in records
            ]  # fmt: skip
        except Exception:  # noqa: BLE001 - a model that does not come back: run_names makes it
            continue
    left = len(data["units"]) - len(prepared)
    return data["names"], prepared, f"{left} unit(s) made here" if left else ""


def _shard_spec(spec: str) -> tuple[str, int, int]:
    """``KIND:I/N`` as (kind, I, N)."""
    kind, _, fraction = spec.partition(":")
    i, n = (int(x) for x in fraction.split("/"))
    return kind, i, n


def _torch_side_name(kind: str, shard: int, shards: int) -> str:
    """A shard's torch_side file: its chunk's name (``op-3of7.pt``)."""
    return chunk_id(kind, shard, shards) + ".pt"


def _write_torch_side(shards: Sequence[str], out: Path) -> int:
    """``torch-side``: each ``KIND:I/N`` tier shard's torch_side to ``<out>/KIND-IofN.pt``."""
    for spec in shards:
        kind, i, n = _shard_spec(spec)
        torch.save(torch_side(kind, shard_names(kind, i, n)), out / _torch_side_name(kind, i, n))
    # What it wrote depends on torch alone, so every lane may read it: TVM was never imported.
    if "tvm" in sys.modules:
        raise RuntimeError("torch-side imported tvm: its files would depend on a lane's TVM")
    return 0


def _run_chunks(
    shards: Sequence[str],
    out: Path,
    *,
    tier: bool,
    exec_modes: Sequence[str],
    torch_sides: Path | None = None,
) -> int:
    """``op_corpus_outcomes.run_shards_isolated``'s child: each ``KIND:I/N`` shard's names
    run here as ``run KIND --shard I/N`` runs them, one shard after another; shard j's names
    and TVM version go to ``<j>.meta.json`` (with its CPU seconds, this process's and its
    children's; the first's from this process's start, and where PyTorch's side came from) and
    its results to ``<j>.json``, each progress step to ``<j>.progress``. A tier shard whose
    ``<torch_sides>/KIND-IofN.pt`` exists (torch_side) takes PyTorch's side from it."""
    import resource

    def cpu() -> float:
        own = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    # The first shard's CPU counts from the process's start (its imports), so the shards'
    # figures add up to the child's.
    start = 0.0
    for j, spec in enumerate(shards):
        kind, i, n = _shard_spec(spec)
        os.environ["OP_CORPUS_PROGRESS"] = str(out / f"{j}.progress")
        side = torch_sides / _torch_side_name(kind, i, n) if torch_sides and tier else None
        batch, prepared, how = [], {}, "here"
        if side and side.exists():
            batch, prepared, why = load_torch_side(side)
            how = f"{side.name}" + (f" ({why})" if why else "")
        batch = batch or shard_names(kind, i, n)
        results = _run_here(kind, batch, tier=tier, exec_modes=exec_modes, prepared=prepared)
        end = cpu()
        said = {
            "names": batch, "tvm": _tvm_version(), "cpu_s": round(end - start, 2),
            "torch_side": how,
        }  # fmt: skip
        start = end
        (out / f"{j}.json").write_text(json.dumps([dataclasses.asdict(r) for r in results]))
        (out / f"{j}.meta.json").write_text(json.dumps(said))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tvm_conformance.op_corpus")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run named ops or modules, or a shard")
    run.add_argument("kind", choices=("op", "module"))
    run.add_argument("names", nargs="*")
    run.add_argument("--shard", help="I/N: shard I of N of every name of the kind")
    run.add_argument(
        "--by-dtype", action="store_true", help="--shard deals (name, dtype) units (units())"
    )
    run.add_argument("--all", action="store_true", help="every sample (the tier's subset else)")
    run.add_argument("--exec-modes", default="bytecode")
    run.add_argument("--isolated", action="store_true", help="batches in child processes")
    run.add_argument("--json", default="-", help="where the results go ('-': stdout)")
    run.add_argument("--scoreboard", help="write the scoreboard (JSON) here")
    run.add_argument("--meta", help="write the names run and the TVM version (JSON) here")
    run.add_argument("--list-only", action="store_true", help="write --meta, run nothing")
    chunks = sub.add_parser(
        "chunks", help="run shards one after another, each's names, results and CPU in --dir"
    )
    chunks.add_argument("shards", nargs="+", help="KIND:I/N: shard I of N of the kind's names")
    chunks.add_argument("--dir", required=True, help="where <j>.meta.json and <j>.json go")
    chunks.add_argument("--all", action="store_true", help="every sample (the tier's subset else)")
    chunks.add_argument("--exec-modes", default="bytecode")
    chunks.add_argument("--torch-sides", help="where torch-side wrote its files (the tier)")
    side = sub.add_parser(
        "torch-side", help="PyTorch's side of tier shards, a file each, for `chunks`"
    )
    side.add_argument("shards", nargs="+", help="KIND:I/N: shard I of N of the kind's names")
    side.add_argument("--dir", required=True, help="where KIND-IofN.pt go")
    rec = sub.add_parser("record", help="record the failing results of JSON files as deviations")
    rec.add_argument("results", nargs="+")
    doc = sub.add_parser("doc", help="write the deviations doc")
    doc.add_argument("out")
    board = sub.add_parser("scoreboard", help="merge result JSON files into a scoreboard")
    board.add_argument("results", nargs="+")
    board.add_argument("--markdown")
    board.add_argument("--previous", nargs="*", default=[], help="the previous run's JSON files")
    args = parser.parse_args(argv)
    if args.command in ("record", "scoreboard"):
        results = [Result(**r) for f in args.results for r in json.loads(Path(f).read_text())]
        if args.command == "scoreboard":
            merged = scoreboard(results)
            sys.stdout.write(json.dumps(merged, indent=1) + "\n")
            if args.markdown:
                Path(args.markdown).write_text(scoreboard_markdown(merged))
            if args.previous:
                old = [Result(**r) for f in args.previous for r in json.loads(Path(f).read_text())]
                sys.stderr.write("\n".join(diff(old, results)) + "\n")
            return 0
        entries = record(results, recorded_deviations())
        DEVIATIONS_FILE.write_text(json.dumps({"deviations": entries}, indent=1) + "\n")
        print(f"{len(entries)} deviations in {DEVIATIONS_FILE}")
        return 0
    if args.command == "doc":
        Path(args.out).write_text(deviations_doc(recorded_deviations()))
        return 0
    if args.command == "torch-side":
        return _write_torch_side(args.shards, Path(args.dir))
    modes = tuple(m for m in args.exec_modes.split(",") if m)
    if bad := [m for m in modes if m not in EXEC_MODES]:
        parser.error(f"unknown exec mode(s) {bad}; expected some of {list(EXEC_MODES)}")
    if args.command == "chunks":
        return _run_chunks(
            args.shards,
            Path(args.dir),
            tier=not args.all,
            exec_modes=modes,
            torch_sides=Path(args.torch_sides) if args.torch_sides else None,
        )
    batch = list(args.names)
    if args.shard:
        i, n = (int(x) for x in args.shard.split("/"))
        batch += (shard_units if args.by_dtype else shard_names)(args.kind, i, n)
    if not batch:
        parser.error("name ops or modules, or give --shard")
    if args.meta:  # first: a parent reads the names from it even where this process dies
        Path(args.meta).write_text(json.dumps({"names": batch, "tvm": _tvm_version()}))
    if args.list_only:
        return 0
    if args.isolated:
        results = run_isolated(args.kind, batch, tier=not args.all, exec_modes=modes)
    else:
        results = _run_here(args.kind, batch, tier=not args.all, exec_modes=modes)
    text = json.dumps([dataclasses.asdict(r) for r in results], indent=0)
    if args.json == "-":
        sys.stdout.write(text)
    else:
        Path(args.json).write_text(text)
    if args.scoreboard:
        Path(args.scoreboard).write_text(json.dumps(scoreboard(results), indent=1))
    return 0


if __name__ == "__main__":
    # The corpus's samples in one order on every run (op_corpus_outcomes.HASH_SEED).
    run_with_fixed_hash_seed()
    # TVM and torch print to stdout; the JSON goes to the real one only. main() runs in the
    # importable module, not in this __main__ copy: the classes torch-side pickles (_Input)
    # are then named tvm_conformance.op_corpus._Input, which any reader finds.
    from tvm_conformance import op_corpus as _importable

    sys.exit(_importable.main())
