"""The Relax ops the frontend tests emit, driven by their Python signatures (tvm_conformance.
relax_signatures): `axis` omitted, None, each axis as a non-negative and a negative int, tuples of
axes; `keepdims` both ways; every dtype of float32 / float16 / int32 / int64 / bool that the op's
struct-info inference accepts (a refusal there is TVM's answer, recorded, not a failure). Each
op's accepted points are one IRModule (one function per point), compiled once per exec mode and
compared with a float64 torch reference by the kit's tolerance rule (exact for integer and bool).

The ops come from the modules the frontend tests import, collected by tools/relax_op_corpus into
op_corpus.json (importing the models costs ~20 s): each op's base call (argument shapes,
attributes) is the first call found. The file records a digest of the files that decide it; a
change to them fails test_corpus_file_is_current until the file is regenerated. All ops'
accepted points are one IRModule, built once per exec mode.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import tvm
from tvm import relax

from tvm_conformance import deviations, relax_signatures, runfiles
from tvm_conformance.observed import (
    BoolArithmeticBuildFailed,
    BoolReductionRefused,
    CenterScaleIgnored,
    NegativeAxisLegalizeFailed,
    UndeclaredDtypeReturned,
    recorded,
)
from tvm_conformance.relax_vm import EXEC_MODES, build_vm

CORPUS = "python/tests/relax/op_corpus.json"


def _collect_tool() -> Any:
    """tools/relax_op_corpus/collect.py (standard library at import): its SOURCES and digest."""
    spec = importlib.util.spec_from_file_location(
        "relax_op_corpus", runfiles.rlocation("tools/relax_op_corpus/collect.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def corpus_file() -> dict[str, Any]:
    return json.loads(Path(runfiles.rlocation(CORPUS)).read_text())


@cache
def corpus() -> tuple[dict[str, relax.Call], set[str]]:
    """The base call of every op the frontend tests emit, and every op name collected."""
    data = corpus_file()
    calls = {op: relax_signatures.call_from_record(op, r) for op, r in data["ops"].items()}
    return calls, set(data["names"])


# Known deviations: which points show them (a point is set aside from its op's module and
# built alone by test_known_deviation, whose strict xfail names the deviation).
_BOOL_ARITHMETIC = {
    "relax.add", "relax.multiply", "relax.matmul", "relax.nn.relu", "relax.nn.conv2d",
}  # fmt: skip


def _negative_axis(point: relax_signatures.Point) -> bool:
    axis = dict(point.kwargs).get("axis")
    return isinstance(axis, int) and axis < 0


KNOWN: dict[str, tuple[Callable[[relax_signatures.Point], bool], type | None, str, type]] = {
    # id -> (the points, the exception relax.build raises, its message, the observed class);
    # no exception: the points build and run, and every one of them fails with the message.
    "relax-bool-arithmetic-build-fails": (
        lambda p: p.op in _BOOL_ARITHMETIC and p.dtype == "bool",
        tvm.error.InternalError,
        r"(?s).*Check failed: \(t\.MatchesCode\(DLDataTypeCode::kDLFloat\)\) is false.*",
        BoolArithmeticBuildFailed,
    ),
    "relax-bool-argmax-max-pool-refused": (
        lambda p: p.op in ("relax.argmax", "relax.nn.max_pool2d") and p.dtype == "bool",
        tvm.error.InternalError,
        r"(?s).*Cannot decide min_value for type\s*T\.bool.*",
        BoolReductionRefused,
    ),
    "relax-batch-norm-negative-axis": (
        lambda p: p.op == "relax.nn.batch_norm" and _negative_axis(p),
        ValueError,
        r"list\.remove\(x\): x not in list",
        NegativeAxisLegalizeFailed,
    ),
    "relax-layer-norm-center-scale-ignored": (
        lambda p: (
            p.op == "relax.nn.layer_norm"
            and (dict(p.kwargs).get("center") is False or dict(p.kwargs).get("scale") is False)
        ),
        None,
        r"output 0: (\d+) of \1 elements differ from the float64 reference .*",
        CenterScaleIgnored,
    ),
    "relax-int-mean-returns-int64": (
        lambda p: p.op == "relax.mean" and p.dtype in ("int32", "bool"),
        None,
        r"output 0: dtype int64 differs from (int32|bool) .*",
        UndeclaredDtypeReturned,
    ),
    "relax-batch-norm-float16-returns-float32": (
        lambda p: p.op == "relax.nn.batch_norm" and p.dtype == "float16",
        None,
        r"output 0: dtype float32 differs from float16(; output \d: dtype float32 differs from "
        r"float16)* .*",
        UndeclaredDtypeReturned,
    ),
}


def _known(point: relax_signatures.Point) -> str | None:
    for dev_id, (applies, *_) in KNOWN.items():
        if applies(point):
            return dev_id
    return None


@cache
def plan(op: str) -> relax_signatures.OpPlan:
    calls, _ = corpus()
    return relax_signatures.plan_op(op, calls[op], skip=lambda p: _known(p) is not None)


def _ops() -> list[str]:
    calls, _ = corpus()
    return sorted(op for op in calls if relax_signatures.legalized(op))


def test_every_collected_op_is_walked(target: str) -> None:
    """Every op the sources emit has a base call with static shapes and a reference; none is
    dropped silently. (Target independent, but it runs in the variant, whose process has the
    corpus imported already: an _independent target would import it again.)"""
    calls, names = corpus()
    assert names and set(calls) == names, f"no static base call for {sorted(names - set(calls))}"
    missing = sorted(op for op in _ops() if op not in relax_signatures.REFERENCES)
    assert not missing, f"ops without a reference in relax_signatures.REFERENCES: {missing}"


_VMS: dict[tuple[str, str], Any] = {}
# Each point's inputs and float64 references, computed once for both exec modes.
_REFERENCES: dict[Any, Any] = {}


def _vm(target: str, dev: tvm.runtime.Device, exec_mode: str) -> Any:
    """Every op's accepted points in one module, built once per exec mode (CI time: a build
    has a fixed cost; the ops' cases share it)."""
    if (target, exec_mode) not in _VMS:
        module = relax_signatures.combined_module(plan(op) for op in _ops())
        _VMS[target, exec_mode] = build_vm(module, target, dev, exec_mode)
    return _VMS[target, exec_mode]


def test_corpus_file_is_current(target: str) -> None:
    """op_corpus.json was collected from the frontend tests as they are now (its digest of
    tools/relax_op_corpus's SOURCES); in the variant, like test_every_collected_op_is_walked."""
    tool = _collect_tool()
    digest = tool.sources_digest(lambda p: Path(runfiles.rlocation(p)).read_bytes())
    assert corpus_file()["sources"] == digest, (
        f"{CORPUS} is stale (one of {tool.SOURCES} changed): regenerate it with "
        "`./bazelw run //tools/relax_op_corpus -- --write`"
    )


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
@pytest.mark.parametrize("op", _ops())
def test_signature_points_match_numpy(
    op: str, exec_mode: str, target: str, dev: tvm.runtime.Device
) -> None:
    """Every accepted point of the op (in the module of all ops) matches its reference."""
    calls, _ = corpus()
    op_plan = plan(op)
    assert op_plan.points, f"{op}: TVM refused every point: {sorted(set(op_plan.refused.values()))}"
    vm = _vm(target, dev, exec_mode)
    prefix = relax_signatures.function_prefix(op)
    failures = relax_signatures.run_plan(
        op_plan, calls[op], vm, dev, prefix=prefix, cache=_REFERENCES
    )
    assert not failures, f"{len(failures)} of {len(op_plan.points)} points:\n" + "\n".join(failures)


def test_refusals_name_the_argument(target: str) -> None:
    """A point TVM refuses is refused with a message (not an empty or internal one); in the
    variant for the same reason as test_every_collected_op_is_walked."""
    for op in _ops():
        for point, message in plan(op).refused.items():
            assert re.search(r"\w+Error: \S", message), f"{point.id}: {message!r}"


def _known_cases() -> list[Any]:
    cases = []
    for op in _ops():
        calls, _ = corpus()
        for dev_id, (applies, *_) in KNOWN.items():
            if any(applies(p) for p in relax_signatures.walk(op, calls[op])):
                for mode in EXEC_MODES:
                    cases.append(
                        pytest.param(dev_id, op, mode, marks=deviations.xfail(dev_id),
                                     id=f"{dev_id}-{op}-{mode}")
                    )  # fmt: skip
    return cases


@pytest.mark.parametrize(("dev_id", "op", "exec_mode"), _known_cases())
def test_known_deviation(
    dev_id: str, op: str, exec_mode: str, target: str, dev: tvm.runtime.Device
) -> None:
    """The points a known deviation covers, built together: the recorded failure, or a match."""
    calls, _ = corpus()
    applies, exc_type, message, observed = KNOWN[dev_id]
    op_plan = relax_signatures.plan_op(op, calls[op], skip=lambda p: not applies(p))
    assert op_plan.points, f"{op}: no accepted point of {dev_id}"
    if exc_type is None:
        vm = build_vm(op_plan.module, target, dev, exec_mode)
    else:
        with recorded(exc_type, message, observed):
            vm = build_vm(op_plan.module, target, dev, exec_mode)
    failures = relax_signatures.run_plan(op_plan, calls[op], vm, dev, cache=_REFERENCES)
    if exc_type is None and len(failures) == len(op_plan.points):
        if all(re.fullmatch(message, f, re.DOTALL) for f in failures):
            raise observed(f"{len(failures)} points: {failures[0]}")
    assert not failures, "\n".join(failures)
