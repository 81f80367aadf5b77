"""The Relax ops the frontend tests emit, driven by their Python signatures (tvm_conformance.
relax_signatures): `axis` omitted, None, each axis as a non-negative and a negative int, tuples of
axes; `keepdims` both ways; every dtype of float32 / float16 / int32 / int64 / bool that the op's
struct-info inference accepts (a refusal there is TVM's answer, recorded, not a failure). Each
op's accepted points are one IRModule (one function per point), compiled once per exec mode and
compared with a float64 torch reference by the kit's tolerance rule (exact for integer and bool).

The ops come from the modules the frontend tests import (`SOURCES`: add a source to drive the
ops it emits), each op's base call (argument shapes, attributes) from the first call found.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

import pytest
import torch
import tvm
from tvm import relax

from tvm_conformance import deviations, relax_signatures, runfiles
from tvm_conformance.model_import import collect_ops, import_model, seed_parameters
from tvm_conformance.observed import (
    BoolArithmeticBuildFailed,
    BoolReductionRefused,
    CenterScaleIgnored,
    NegativeAxisLegalizeFailed,
    UndeclaredDtypeReturned,
    recorded,
)
from tvm_conformance.relax_vm import EXEC_MODES, build_vm

Model = tuple[str, Callable[[], torch.nn.Module], Callable[[], list[torch.Tensor]], str]


def _frontend_test(name: str) -> Any:
    path = runfiles.rlocation(f"python/tests/frontend/{name}.py")
    spec = importlib.util.spec_from_file_location(f"corpus_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def frontend_test_models() -> Iterator[Model]:
    """The models and inputs of the frontend tests that compare with PyTorch, each through the
    frontends its test imports it with."""
    from tvm_conformance.seed_models import ConvSoftmax, Mlp

    ops = _frontend_test("op_translation_test")
    norm = _frontend_test("normalization_test")
    multi = _frontend_test("multi_output_test")
    keywords = _frontend_test("functional_keywords_test")
    for frontend in ("exported_program", "fx"):
        yield "mlp", Mlp, lambda: [torch.randn(2, 16)], frontend
        yield (
            "conv_softmax",
            lambda: ConvSoftmax().float(),
            lambda: [torch.rand(1, 3, 10, 10)],
            frontend,
        )
        yield "multi_output", multi.MultiOutput, lambda: [torch.randn(3, 8)], frontend
    for frontend in ("exported_program", "exported_program_undecomposed", "fx"):
        yield "layer_norm", norm.LinearLayerNorm, lambda: [torch.randn(2, 5, 8)], frontend
    yield "batch_norm", norm.ConvBatchNorm, lambda: [torch.rand(1, 3, 8, 8)], "exported_program"
    for case, (make, inputs, _) in ops.CASES.items():
        for frontend in ("exported_program", "exported_program_undecomposed"):
            yield f"op:{case}", make, inputs, frontend
    for case, (make, inputs, _) in ops.FX_CASES.items():
        yield f"op:{case}", make, inputs, "fx"
    for case, (call, shapes, shape, scale, _) in keywords.CASES.items():
        yield (
            f"keywords:{case}",
            lambda call=call, shapes=shapes: keywords.Functional(call, **shapes),
            lambda shape=shape, scale=scale: [torch.randn(*shape) * scale],
            "fx",
        )


# Where the ops come from: name -> the models whose imported modules are collected.
SOURCES: dict[str, Callable[[], Iterator[Model]]] = {"frontend_tests": frontend_test_models}


@cache
def corpus() -> tuple[dict[str, relax.Call], set[str]]:
    """The base call of every op the sources emit, and every op name collected."""
    modules, names = [], set()
    torch.manual_seed(0)
    for source in SOURCES.values():
        for _, make, inputs, frontend in source():
            mod = import_model(seed_parameters(make()).eval(), inputs(), frontend=frontend).mod
            modules.append(mod)
            names |= collect_ops(mod)
    return relax_signatures.corpus_calls(modules), names


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


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
@pytest.mark.parametrize("op", _ops())
def test_signature_points_match_numpy(
    op: str, exec_mode: str, target: str, dev: tvm.runtime.Device
) -> None:
    """Every accepted point of the op, compiled in one module, matches its reference."""
    calls, _ = corpus()
    op_plan = plan(op)
    assert op_plan.points, f"{op}: TVM refused every point: {sorted(set(op_plan.refused.values()))}"
    vm = build_vm(op_plan.module, target, dev, exec_mode)
    failures = relax_signatures.run_plan(op_plan, calls[op], vm, dev)
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
    failures = relax_signatures.run_plan(op_plan, calls[op], vm, dev)
    if exc_type is None and len(failures) == len(op_plan.points):
        if all(re.fullmatch(message, f, re.DOTALL) for f in failures):
            raise observed(f"{len(failures)} points: {failures[0]}")
    assert not failures, "\n".join(failures)
