"""Every Relax op TVM registers, by its Python signature (tvm_conformance.relax_signatures):
`axis` omitted, None, each axis as a non-negative and a negative int, tuples of axes; `keepdims`
both ways; every dtype of float32 / float16 / int32 / int64 / bool that the op's struct-info
inference accepts (a refusal there is TVM's answer; which points refuse, with which exception and
message, is pinned per lane: test_walk_outcomes_are_pinned). Each op's accepted points are one
IRModule (one function per point), compiled once per exec mode and compared with a float64 torch
reference by the kit's tolerance rule (exact for integer and bool).

The ops are TVM's registry (`tvm.ir.Op.list_op_names()`, tvm_conformance.relax_registry): each
registered `relax.*` op is walked, shown as not walked with its reason, or excluded by name as no
op a user calls (the compiler's and the VM's internals, each with its reason):
test_every_registered_op_is_classified. An op's base call is the first call the frontend tests'
and the op corpus's tier's imported modules make (collected by tools/relax_op_corpus into
op_corpus.json, the frontend tests' first; importing them costs ~70 s); an op none of them
emits gets one synthesized from its signature (relax_registry.synthesized_call). The file
records a digest of the files that decide it; a change to them fails
test_corpus_file_is_current until the file is regenerated. All ops' accepted points are one
IRModule, built once per exec mode: every op is walked whole in bytecode; in compiled mode the
frontend tests' ops and the synthesized ones at their own call in every dtype, the op corpus's
others not; TVM_CONFORMANCE_FULL_WALK=1 (`--config=op_corpus`) walks every op whole in both
(_scope: CI time). Plain pytest skips the builds unless TVM_CONFORMANCE_OP_WALK=1 asks for them
(walk_builds).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import tvm
from tvm import relax

from tvm_conformance import (
    crash_isolation,
    deviations,
    expectations,
    relax_registry,
    relax_signatures,
    runfiles,
)
from tvm_conformance.observed import (
    BoolArithmeticBuildFailed,
    BoolOpBuildFailed,
    BoolReductionRefused,
    CenterScaleIgnored,
    DefaultArgumentBuildFailed,
    DtypeBuildFailed,
    DtypeRunFailed,
    EqualIouSuppressed,
    FirstAxisOnlyReduced,
    GridLayoutMisread,
    InfiniteIntBoundClamped,
    InfiniteIntBoundFailed,
    LegalizationMissing,
    LegalizationUnsupported,
    LimitIgnored,
    MathIntrinsicMissing,
    NegativeAxisLegalizeFailed,
    NothingSelected,
    ScalarParameterRefused,
    UndeclaredDtypeReturned,
    UndeclaredShapeReturned,
    VmCodegenMissing,
    recorded,
)
from tvm_conformance.relax_vm import EXEC_MODES, build_vm

try:  # where TVM 0.26 and 0.27 keep it (relax-bool-layout-transform-build-fails raises it)
    from tvm.s_tir.schedule import ScheduleError
except ImportError:  # another TVM's: its error is not this one, so the deviation does not hold

    class ScheduleError(RuntimeError):  # type: ignore[no-redef]
        """Stands for TVM 0.26 / 0.27's ScheduleError, which this TVM does not have."""


CORPUS = "python/tests/relax/op_corpus.json"
FULL_WALK = "TVM_CONFORMANCE_FULL_WALK"
# Bazel runs the walk's builds in each lane's //... (TEST_TARGET is set there). Plain pytest of
# python/tests, the quick-iteration path, leaves them out, visibly, unless asked for (the walk
# costs ~55 s of one core, which CI spends in each lane already); the checks of the corpus file
# and of every op's reason still run.
_WALK_HERE = bool(
    os.environ.get("TEST_TARGET")
    or os.environ.get(FULL_WALK) == "1"
    or os.environ.get("TVM_CONFORMANCE_OP_WALK") == "1"
)
walk_builds = pytest.mark.skipif(
    not _WALK_HERE,
    reason="the Relax op walk builds ~1,300 functions (~55 s): it runs under Bazel "
    "(//python/tests/relax:op_signatures_test_llvm); run it here with TVM_CONFORMANCE_OP_WALK=1",
)


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
    """The base call of every op walked from one: the ops the frontend tests and the op corpus
    emit (their first call with static arguments), then every other op TVM registers that a
    user calls (relax_registry: a call synthesized from its signature); and every op name
    collected or registered."""
    data = corpus_file()
    calls = {op: relax_signatures.call_from_record(op, r) for op, r in data["ops"].items()}
    for op, call in _synthesized().items():
        if call is not None and op not in calls:
            calls[op] = call
    registered = {op for op in relax_registry.registered_ops() if not relax_registry.exclusion(op)}
    return calls, set(data["names"]) | registered


@cache
def _synthesized() -> dict[str, relax.Call | None]:
    """Each registered op a user calls that the corpus gives no base call: the call
    synthesized from its signature, or None (_unwalked says why)."""
    have = set(corpus_file()["ops"])
    return {
        op: relax_registry.synthesized_call(op)[0]
        for op in relax_registry.registered_ops()
        if op not in have and not relax_registry.exclusion(op)
    }


def synthesized(op: str) -> bool:
    """Whether the op's base call was synthesized from its signature (no frontend emits it)."""
    return _synthesized().get(op) is not None


def _unwalked() -> dict[str, str]:
    """Every collected or registered op the walk does not drive, with the reason: no base
    call (neither the collection's nor one synthesized from the signature), no reference yet
    (relax_signatures.UNREFERENCED)."""
    calls, names = corpus()
    reasons = {}
    for op in sorted(names - set(calls)):
        why = relax_registry.synthesized_call(op)[1]
        collected = corpus_file()["unwalked"].get(op)
        reasons[op] = f"{collected}; from the signature: {why}" if collected else why
    for op in calls:
        if op not in relax_signatures.REFERENCES:
            reasons[op] = relax_signatures.UNREFERENCED.get(op, _unknown_op_reason())
    return reasons


@cache
def _unknown_op_reason() -> str:
    """The reason of an op with a base call but neither a reference nor a reason: none on a
    lane's pinned wheels (the kit must add one: test_every_collected_op_is_walked fails); on a
    user's wheel, which may register ops the lane's TVM does not, a visible skip saying so."""
    if expectations.pinned(expectations.venv_record()):
        return ""
    return "registered by this wheel's TVM, unknown to the kit: no reference or reason yet"


# Known deviations: which points show them (a point is set aside from its op's module and
# built alone by test_known_deviation, whose strict xfail names the deviation).
_BOOL_ARITHMETIC = {
    "relax.add", "relax.multiply", "relax.nn.relu",
    "relax.subtract", "relax.maximum", "relax.minimum", "relax.greater", "relax.greater_equal",
    "relax.less", "relax.less_equal", "relax.outer", "relax.square", "relax.divide",
    "relax.floor_divide", "relax.floor_mod", "relax.mod", "relax.nn.avg_pool1d",
    "relax.nn.avg_pool2d", "relax.nn.avg_pool3d", "relax.nn.adaptive_avg_pool2d",
    "relax.nn.nll_loss", "relax.cumsum", "relax.cumprod", "relax.bucketize",
}  # fmt: skip
# Ops (convolutions, matmul) whose bool points fail to build only without an out_dtype (a bool
# result); with a float out_dtype they build and compute (checked as any other point). Each
# point is built alone (test_known_deviation): matmul's and conv2d's float out_dtype points, once
# credited by their op's other point failing in the same module, build.
_BOOL_CONVOLUTIONS = {
    "relax.matmul", "relax.nn.conv1d", "relax.nn.conv2d", "relax.nn.conv3d",
    "relax.nn.conv1d_transpose", "relax.nn.conv2d_transpose", "relax.nn.conv3d_transpose",
}  # fmt: skip
_AVG_POOLS = ("relax.nn.avg_pool1d", "relax.nn.avg_pool2d", "relax.nn.avg_pool3d")
_BOOL_REDUCTIONS = {
    "relax.argmax", "relax.argmin", "relax.max", "relax.min", "relax.nn.max_pool1d",
    "relax.nn.max_pool2d", "relax.nn.max_pool3d",
}  # fmt: skip
# Deviations whose points deviate another way on another TVM: the installed TVM's entry applies.
_APPLIES = {
    d: deviations.applies(d)
    for d in (
        "relax-clip-infinite-bound-int", "relax-clip-infinite-bound-int-tvm026",
        "relax-clip-infinite-bound-int64-min-tvm026", "relax-int-roi-pool-build-fails",
        "relax-int-roi-pool-build-fails-tvm026", "relax-int64-roi-pool-build-fails-tvm026",
        "relax-roi-align-float16-returns-float32", "relax-roi-align-build-fails-tvm026",
    )
}  # fmt: skip
_BITWISE = (
    "relax.bitwise_and", "relax.bitwise_or", "relax.bitwise_xor", "relax.bitwise_not",
    "relax.left_shift", "relax.right_shift",
)  # fmt: skip
_FLOAT16_MISSING = ("acos", "acosh", "asin", "asinh", "atan", "atan2", "cosh", "sinh")
_INTEGER = ("int32", "int64", "bool")
# Ops whose legalization negates, or writes -1 (get_valid_counts' invalid rows).
_NEGATING = (
    "relax.negative", "relax.sign", "relax.nn.cross_entropy_with_logits",
    "relax.vision.get_valid_counts",
)  # fmt: skip
_ATTENTION = ("relax.nn.attention", "relax.nn.attention_bias")


def _negative_axis(point: relax_signatures.Point) -> bool:
    axis = dict(point.kwargs).get("axis")
    return isinstance(axis, int) and axis < 0


KNOWN: dict[str, tuple[Callable[[relax_signatures.Point], bool], type | None, str, type]] = {
    # id -> (the points, the exception relax.build raises, its message, the observed class);
    # no exception: the points build and run, and every one of them fails with the message.
    # A point belongs to the first entry whose predicate takes it.
    "relax-pixel-shuffle-legalize-missing": (
        lambda p: p.op == "relax.nn.pixel_shuffle",
        AttributeError,
        r"module 'tvm\.topi\.nn' has no attribute 'pixel_shuffle'",
        LegalizationMissing,
    ),
    "relax-attention-var-len-legalize-unsupported": (
        lambda p: p.op == "relax.nn.attention_var_len",
        RuntimeError,
        r"Legalization of attention_var_len op is not supported yet\.",
        LegalizationUnsupported,
    ),
    "relax-bool-layout-transform-build-fails": (
        lambda p: p.op == "relax.layout_transform" and p.dtype == "bool",
        ScheduleError,
        r"(?s).*ScheduleError: Buffer te_layout_transform has elements of type T\.bool, but the "
        r"transformation fills padding with .*\(T\.float32\(0\.0\),\)\), which is of type "
        r"float32",
        BoolOpBuildFailed,
    ),
    "relax-adaptive-avg-pool1d-default-output-size": (
        lambda p: (
            p.op == "relax.nn.adaptive_avg_pool1d" and dict(p.kwargs).get("output_size") is None
        ),
        TypeError,
        r"(?s).*Cannot convert from type `ir\.IntImm` to `Array<ir\.Expr>`.*",
        DefaultArgumentBuildFailed,
    ),
    "relax-bool-arithmetic-build-fails": (
        lambda p: (
            p.dtype == "bool"
            and (
                p.op in _BOOL_ARITHMETIC
                or (
                    p.op in _BOOL_CONVOLUTIONS and dict(p.kwargs).get("out_dtype") in (None, "bool")
                )
            )
        ),
        tvm.error.InternalError,
        r"(?s).*Check failed: \((t|dtype)\.MatchesCode\(DLDataTypeCode::kDLFloat\)\) is "
        r"false.*",
        BoolArithmeticBuildFailed,
    ),
    "relax-bool-argmax-max-pool-refused": (
        lambda p: p.op in _BOOL_REDUCTIONS and p.dtype == "bool",
        tvm.error.InternalError,
        r"(?s).*Cannot decide (min|max)_value for type\s*T\.bool.*",
        BoolReductionRefused,
    ),
    "relax-bool-unary-build-fails": (
        lambda p: (
            p.op in ("relax.abs", "relax.isfinite", "relax.isinf", "relax.isnan")
            and p.dtype == "bool"
        ),
        tvm.error.InternalError,
        r"(?s).*Data type T\.bool not supported for (absolute op|finiteness ops|isnan op).*",
        BoolOpBuildFailed,
    ),
    "relax-bool-negation-out-of-range": (
        lambda p: p.op in _NEGATING and p.dtype == "bool",
        ValueError,
        r"(?s).*-1 exceeds range of bool.*",
        BoolOpBuildFailed,
    ),
    # Ops walked from the op registry (issue 69).
    "relax-op-not-lowered-by-build": (
        lambda p: p.op in ("relax.ewise_fma", "relax.wrap_param"),
        tvm.error.InternalError,
        r"(?s).*CodeGenVM(TIR)? cannot (emit this Relax operator directly|handle this "
        r"intrinsic now).*(R|relax)\.(ewise_fma|wrap_param).*",
        VmCodegenMissing,
    ),
    "relax-bitwise-float-build-fails": (
        lambda p: (
            (p.op in _BITWISE and p.dtype.startswith("float"))
            or (p.op in ("relax.left_shift", "relax.right_shift") and p.dtype == "bool")
        ),
        tvm.error.InternalError,
        r"(?s).*Expected integer (argument as LHS of (&|\||\^|<<|>>)|or boolean argument for ~) "
        r"operator.*",
        DtypeBuildFailed,
    ),
    "relax-int-cross-entropy-build-fails": (
        lambda p: p.op == "relax.nn.cross_entropy_with_logits" and p.dtype in ("int32", "int64"),
        RuntimeError,
        r"(?s)TVM supports multiple types of integer divisions, please call div.*",
        DtypeBuildFailed,
    ),
    "relax-int-attention-build-fails": (
        lambda p: p.op in _ATTENTION and p.dtype in ("int32", "int64"),
        RuntimeError,
        r"(?s)TVM supports multiple types of integer divisions, please call div.*",
        DtypeBuildFailed,
    ),
    "relax-bool-attention-build-fails": (
        lambda p: p.op in _ATTENTION and p.dtype == "bool",
        tvm.error.InternalError,
        r"(?s).*Cannot decide min_value for type\s*T\.bool.*",
        DtypeBuildFailed,
    ),
    "relax-int-grid-sample-build-fails": (
        lambda p: p.op == "relax.image.grid_sample" and p.dtype in _INTEGER,
        RuntimeError,
        r"(?s)TVM supports multiple types of integer divisions, please call div.*",
        DtypeBuildFailed,
    ),
    "relax-int-roi-pool-build-fails": (
        lambda p: (
            p.op == "relax.vision.roi_pool"
            and p.dtype in _INTEGER
            and _APPLIES["relax-int-roi-pool-build-fails"]
        ),
        RuntimeError,
        r"(?s).*Cannot convert infinity to BigInt.*",
        DtypeBuildFailed,
    ),
    "relax-int-roi-pool-build-fails-tvm026": (
        lambda p: (
            p.op == "relax.vision.roi_pool"
            and p.dtype in ("int32", "bool")
            and _APPLIES["relax-int-roi-pool-build-fails-tvm026"]
        ),
        ValueError,
        r"(?s).*(Check failed: value >= -\(1LL << \(bits - 1\)\) \(-9223372036854775808 vs\. "
        r"-2147483648\)|Check failed: \(value == 0 \|\| value == 1\) is false: "
        r"-9223372036854775808 exceeds range of bool).*",
        DtypeBuildFailed,
    ),
    "relax-int64-roi-pool-build-fails-tvm026": (
        lambda p: (
            p.op == "relax.vision.roi_pool"
            and p.dtype == "int64"
            and _APPLIES["relax-int64-roi-pool-build-fails-tvm026"]
        ),
        RuntimeError,
        r"(?s)TVM supports multiple types of integer divisions, please call div.*",
        DtypeBuildFailed,
    ),
    "relax-roi-align-build-fails-tvm026": (
        lambda p: (
            p.op == "relax.vision.roi_align"
            and p.dtype.startswith("float")
            and _APPLIES["relax-roi-align-build-fails-tvm026"]
        ),
        tvm.error.InternalError,
        r"(?s).*Do not have a default for tirx\.ProducerLoad.*",
        DtypeBuildFailed,
    ),
    "relax-grid-sample-grid-layout": (
        lambda p: p.op == "relax.image.grid_sample" and p.dtype.startswith("float"),
        None,
        r"output 0: shape \(2, 3, 10, 2\) differs from \(2, 3, 13, 10\) .*",
        GridLayoutMisread,
    ),
    "relax-int-instance-norm-build-fails": (
        lambda p: p.op == "relax.nn.instance_norm" and p.dtype in _INTEGER,
        tvm.error.InternalError,
        r"(?s).*instance_norm: only support float32 and float16 for now.*",
        DtypeBuildFailed,
    ),
    "relax-one-hot-negative-axis": (
        lambda p: p.op == "relax.one_hot" and _negative_axis(p) and dict(p.kwargs)["axis"] != -1,
        IndexError,
        r"Index \d+ out of bounds \d+",
        NegativeAxisLegalizeFailed,
    ),
    "relax-bool-sort-unsupported": (
        lambda p: (
            p.op in ("relax.sort", "relax.argsort", "relax.topk", "relax.median")
            and p.dtype == "bool"
        ),
        tvm.error.InternalError,
        r"(?s).*Unsupported input dtype: bool.*",
        DtypeRunFailed,
    ),
    "relax-median-keepdims-without-axis-shape": (
        lambda p: (
            p.op == "relax.median"
            and dict(p.kwargs).get("axis") is None
            and dict(p.kwargs).get("keepdims") is True
        ),
        None,
        r"output 0: shape \(1,\) differs from \(1, 1\) .*",
        UndeclaredShapeReturned,
    ),
    # Run in a child process (_IN_CHILD): the legalization reads past the first axis's end.
    "relax-median-several-axes-out-of-bounds": (
        lambda p: (
            p.op == "relax.median"
            and isinstance(dict(p.kwargs).get("axis"), tuple | list)
            and len(dict(p.kwargs)["axis"]) > 1
        ),
        None,
        r"the reference has 1 output\(s\), the result 2 .*",
        FirstAxisOnlyReduced,
    ),
    "relax-bool-comparison-invalid-llvm": (
        lambda p: p.op in ("relax.equal", "relax.not_equal") and p.dtype == "bool",
        tvm.error.InternalError,
        r"(?s).*= fcmp o(eq|ne) i1 .*",
        BoolOpBuildFailed,
    ),
    "relax-float16-math-intrinsic-missing": (
        lambda p: p.op.removeprefix("relax.") in _FLOAT16_MISSING and p.dtype == "float16",
        tvm.error.InternalError,
        r'(?s).*unknown intrinsic .*name="tirx\.(' + "|".join(_FLOAT16_MISSING) + r')".*',
        MathIntrinsicMissing,
    ),
    "relax-int-float-only-build-fails": (
        lambda p: (
            p.op in ("relax.atan2", "relax.log_add_exp", "relax.power") and p.dtype in _INTEGER
        ),
        tvm.error.InternalError,
        r'(?s).*(unknown intrinsic .*name="tirx\.atan2"|Check failed: \(IsFloatType\(a\.ty\(\)\)\) '
        r"is false|Check failed: \(IsFloatType\(x\.ty\(\)\)\) is false: power only applies to "
        r"float).*",
        MathIntrinsicMissing,
    ),
    # The same points deviate in another way on TVM 0.26: the entry of the installed TVM applies.
    "relax-clip-infinite-bound-int": (
        lambda p: (
            p.op == "relax.clip"
            and p.dtype in _INTEGER
            and _APPLIES["relax-clip-infinite-bound-int"]
        ),
        RuntimeError,
        r"(?s).*Cannot convert infinity to BigInt.*",
        InfiniteIntBoundFailed,
    ),
    "relax-clip-infinite-bound-int-tvm026": (
        lambda p: (
            p.op == "relax.clip"
            # int64 builds on 0.26 (each point built alone shows it): the bound fits.
            and p.dtype in ("int32", "bool")
            and _APPLIES["relax-clip-infinite-bound-int-tvm026"]
        ),
        ValueError,
        # Built alone, the bool point says it in bool's words.
        r"(?s).*(Literal value -9223372036854775808 exceeds minimum of int32|Check failed: "
        r"\(value == 0 \|\| value == 1\) is false: -9223372036854775808 exceeds range of "
        r"bool).*",
        InfiniteIntBoundFailed,
    ),
    "relax-clip-infinite-bound-int64-min-tvm026": (
        lambda p: (
            p.op == "relax.clip"
            and p.dtype == "int64"
            and _APPLIES["relax-clip-infinite-bound-int64-min-tvm026"]
        ),
        None,
        r"output 0: (\d+) of \1 elements differ from the float64 reference .*got "
        r"-9223372036854775808, .*",
        InfiniteIntBoundClamped,
    ),
    "relax-prelu-scalar-alpha-assert": (
        lambda p: p.op == "relax.nn.prelu",
        AssertionError,
        r"",
        ScalarParameterRefused,
    ),
    "relax-batch-norm-negative-axis": (
        lambda p: p.op == "relax.nn.batch_norm" and _negative_axis(p),
        ValueError,
        r"list\.remove\(x\): x not in list",
        NegativeAxisLegalizeFailed,
    ),
    "relax-nms-float16-run-fails": (
        lambda p: p.op == "relax.vision.non_max_suppression" and p.dtype == "float16",
        tvm.error.InternalError,
        r"(?s).*Currently only supports input dtype to be float32\..*",
        DtypeRunFailed,
    ),
    "relax-nms-suppresses-at-equal-iou": (
        lambda p: p.op == "relax.vision.non_max_suppression" and p.dtype == "float32",
        None,
        r"output 0: \d+ of \d+ elements differ from the float64 reference .*",
        EqualIouSuppressed,
    ),
    "relax-nms-runtime-limit-ignored": (
        lambda p: (
            p.op == "relax.vision.all_class_non_max_suppression"
            and dict(p.kwargs).get("output_format", "onnx") == "onnx"
            and p.dtype.startswith("float")
        ),
        None,
        r"output 0: shape \((\d+), 3\) differs from \((\d+), 3\); output 1: 1 of 1 elements "
        r"differ .*got \1, expected \[\2\].*",
        LimitIgnored,
    ),
    "relax-layer-norm-center-scale-ignored": (
        lambda p: (
            p.op in ("relax.nn.layer_norm", "relax.nn.group_norm", "relax.nn.instance_norm")
            and (dict(p.kwargs).get("center") is False or dict(p.kwargs).get("scale") is False)
        ),
        None,
        r"output 0: (\d+) of \1 elements differ from the float64 reference .*",
        CenterScaleIgnored,
    ),
    "relax-int-mean-returns-int64": (
        lambda p: (
            (p.op in ("relax.mean", "relax.variance") and p.dtype in ("int32", "bool"))
            or (p.op in _AVG_POOLS and p.dtype == "int32")
        ),
        None,
        r"output 0: dtype int64 differs from (int32|bool) .*",
        UndeclaredDtypeReturned,
    ),
    "relax-bool-adaptive-pool-returns-int32": (
        lambda p: (
            p.op in ("relax.nn.adaptive_avg_pool1d", "relax.nn.adaptive_avg_pool3d")
            and p.dtype == "bool"
        ),
        None,
        r"output 0: dtype int32 differs from bool .*",
        UndeclaredDtypeReturned,
    ),
    "relax-int-std-returns-float32": (
        lambda p: p.op == "relax.std" and p.dtype in _INTEGER,
        None,
        r"output 0: dtype float32 differs from (int32|int64|bool) .*",
        UndeclaredDtypeReturned,
    ),
    "relax-roi-align-float16-returns-float32": (
        lambda p: (
            p.op == "relax.vision.roi_align"
            and p.dtype == "float16"
            and _APPLIES["relax-roi-align-float16-returns-float32"]
        ),
        None,
        r"output 0: dtype float32 differs from float16 .*",
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


# Deviations whose points read out of bounds when they run: test_known_deviation builds and
# runs them in a child process, which prints each point's failure (a crash there fails the
# case, with its signal, and leaves this process whole).
_IN_CHILD = frozenset({"relax-median-several-axes-out-of-bounds"})


def _nms_without_limit(boxes: Any, scores: Any, _limit: Any, *rest: Any, **kwargs: Any) -> Any:
    """ONNX NonMaxSuppression with every box of a class allowed (the limit the number of
    boxes): relax-nms-runtime-limit-ignored's way."""
    import torch

    limit = torch.tensor(boxes.shape[1], dtype=torch.int64)
    return relax_signatures.REFERENCES["relax.vision.all_class_non_max_suppression"](
        boxes, scores, limit, *rest, **kwargs
    )


def _nms_at_equal_iou(*args: Any, **kwargs: Any) -> Any:
    """MXNet's box_nms suppressing at an IoU equal to the threshold too:
    relax-nms-suppresses-at-equal-iou's way."""
    reference = relax_signatures.REFERENCES["relax.vision.non_max_suppression"]
    return reference(*args, at_equal_iou=True, **kwargs)


# Value deviations whose way is a computation: every point they cover must match it exactly, so
# a worse failure (another selection, not only a lost limit) does not pass as the known one;
# and some point must fail the documented reference (where none does, the deviation no longer
# shows: the strict xfail passes and says so). A deviation that shows only on some inputs
# (an IoU equal to the threshold) covers every point this way.
_DEVIATES_AS: dict[str, Callable[..., Any]] = {
    "relax-nms-runtime-limit-ignored": _nms_without_limit,
    "relax-nms-suppresses-at-equal-iou": _nms_at_equal_iou,
}
_CHILD_RUN = """
crash_step("import tvm")
import json, os
import tvm
from tvm_conformance import relax_registry, relax_signatures
from tvm_conformance.relax_vm import build_vm
op, record, ids, target, device, exec_mode = {arguments!r}
if record is None:
    call, _ = relax_registry.synthesized_call(op)
else:
    call = relax_signatures.call_from_record(op, record)
plan = relax_signatures.plan_op(op, call, skip=lambda p: p.id not in ids, checked_only=False)
dev = tvm.device(*device)
crash_step("relax.build")
vm = build_vm(plan.module, target, dev, exec_mode)
reproducing_call()
failures = relax_signatures.run_plan(plan, call, vm, dev)
print("failures " + json.dumps(failures), flush=True)
os._exit(0)  # memory read outside a tensor must not fail the interpreter's exit
"""


def _known_in_child(
    dev_id: str, op: str, exec_mode: str, target: str, dev: tvm.runtime.Device
) -> tuple[list[str], int]:
    """The failures of the deviation's points, built and run in a child process (_IN_CHILD),
    and how many points ran."""
    # The child makes the same base call: from the op's collected record, else synthesized.
    record = None if synthesized(op) else corpus_file()["ops"][op]
    ids = [p.id for p in _walk(op) if _known(p) == dev_id]
    outcome = crash_isolation.check_isolated(
        _CHILD_RUN.format(
            arguments=(op, record, ids, target, (dev.dlpack_device_type(), dev.index), exec_mode)
        )
    )
    (line,) = [x for x in outcome.stdout.splitlines() if x.startswith("failures ")]
    return json.loads(line.removeprefix("failures ")), len(ids)


def _known(point: relax_signatures.Point) -> str | None:
    for dev_id, (applies, *_) in KNOWN.items():
        if applies(point):
            return dev_id
    return None


@cache
def _scope(op: str, exec_mode: str) -> str | None:
    """What test_signature_points_match_numpy drives of the op in ``exec_mode``: "whole" (every
    form), "base" (the op's own call in every dtype) or nothing. Every op whole in bytecode;
    in compiled mode the own call of the frontend tests' ops and of the ops walked from a call
    synthesized from the signature (relax_registry), an op only the op corpus emits not;
    TVM_CONFORMANCE_FULL_WALK=1 (`--config=op_corpus`): every op whole in both.
    Why (CI time, measured on 2 cores): a point is one compiled function, ~36 ms in bytecode and
    ~49 ms in compiled mode; the two modes share the kernels' code path (legalization, TIR, LLVM)
    and differ in how the VM calls them, which each op's own call in every dtype exercises."""
    if os.environ.get(FULL_WALK) == "1" or exec_mode == "bytecode":
        return "whole"
    return "base" if op in corpus_file()["frontend_ops"] or synthesized(op) else None


def _walk(op: str) -> list[relax_signatures.Point]:
    """The points test_known_deviation looks through."""
    calls, _ = corpus()
    return relax_signatures.walk(op, calls[op])


def _modes(op: str) -> tuple[str, ...]:
    """The exec modes of the op's known-deviation cases: those _scope drives it in."""
    return tuple(mode for mode in EXEC_MODES if _scope(op, mode))


@cache
def plan(op: str, exec_mode: str) -> relax_signatures.OpPlan:
    """The op's points in ``exec_mode`` (_scope) less those under a known deviation."""
    calls, _ = corpus()
    whole = _scope(op, exec_mode) == "whole"
    return relax_signatures.plan_op(
        op, calls[op], skip=lambda p: _known(p) is not None, crossed=whole, only_base=not whole
    )


def _ops() -> list[str]:
    calls, _ = corpus()
    return sorted(op for op in calls if op in relax_signatures.REFERENCES)


def test_every_collected_op_is_walked(target: str) -> None:
    """Every op the sources emit is walked or named with the reason it is not; none is
    dropped silently: a new op needs a reference (relax_signatures.REFERENCES) or a reason
    (UNREFERENCED). (Target independent, but it runs in the variant, whose process has the
    corpus imported already: an _independent target would import it again.)"""
    calls, names = corpus()
    unwalked = _unwalked()
    assert names and set(calls) | set(unwalked) == names, sorted(names - set(calls) - set(unwalked))
    missing = sorted(op for op, why in unwalked.items() if not why)
    assert not missing, f"ops with neither a reference nor a reason (UNREFERENCED): {missing}"
    stale = sorted(set(relax_signatures.UNREFERENCED) & set(relax_signatures.REFERENCES))
    assert not stale, f"ops in both REFERENCES and UNREFERENCED: {stale}"


# None on TVM 0.27 and 0.26 (issue 69): one skip says so, by name, rather than pytest's
# "empty parameter set".
_NONE_UNWALKED = pytest.param(
    "",
    marks=pytest.mark.skip(reason="none: every op the walk collects or TVM registers is walked"),
    id="none",
)


@pytest.mark.parametrize("op", sorted(_unwalked()) or [_NONE_UNWALKED])
def test_unwalked_op(op: str, target: str) -> None:
    """An op the walk does not drive, visible as a skip with its reason (in the variant, like
    test_every_collected_op_is_walked)."""
    pytest.skip(f"{op} not walked: {_unwalked()[op]}")


def test_unchecked_points(target: str) -> None:
    """The accepted points whose form (a documented mode, a layout) the op's reference does not
    model: not built, never counted as matching, shown here as one skip naming each (pinned per
    lane as excluded: test_walk_outcomes_are_pinned)."""
    unchecked = [
        f"{point.id} ({why})"
        for op in _ops()
        for point, why in plan(op, "bytecode").unchecked.items()
    ]
    if unchecked:
        pytest.skip(
            f"{len(unchecked)} points not checked, no reference for the form: "
            + "; ".join(unchecked)
        )


def test_every_registered_op_is_classified(target: str) -> None:
    """Every `relax.*` op TVM registers (tvm.ir.Op.list_op_names()) is walked, not walked
    with its reason, or excluded by name as no op a user calls (relax_registry.EXCLUDED, each
    with its reason); every exclusion names a registered op (none stale). An op a new TVM
    registers is synthesized a base call and needs a reference or a reason
    (test_every_collected_op_is_walked)."""
    registered = relax_registry.registered_ops()
    calls, names = corpus()
    walked = {op for op in calls if op in relax_signatures.REFERENCES}
    unwalked = set(_unwalked())
    excluded = {op for op in registered if relax_registry.exclusion(op)}
    assert not walked & unwalked and not (walked | unwalked) & excluded
    assert set(registered) <= walked | unwalked | excluded, sorted(
        set(registered) - walked - unwalked - excluded
    )
    stale = [
        name for name in relax_registry.EXCLUDED
        if not any(op == name or (name.endswith(".") and op.startswith(name)) for op in registered)
    ]  # fmt: skip
    assert not stale, f"exclusions naming no registered op: {stale}"


def test_synthesized_base_calls_are_stable(target: str) -> None:
    """A base call synthesized from a signature is the same call when synthesized again (the
    walk's pinned point ids and CI's cases rely on it), and relax.repeat's is the call without
    an axis (numpy.repeat's flattening form is its own call, walked in both exec modes)."""
    for op, call in _synthesized().items():
        again, why = relax_registry.synthesized_call(op)
        assert (call is None) == (again is None), f"{op}: {why}"
        if call is not None:
            tvm.ir.assert_structural_equal(call, again, map_free_vars=True)
    repeat = _synthesized()["relax.repeat"]
    assert repeat is not None and repeat.attrs.axis is None


@pytest.mark.parametrize(
    "op", [op for op in relax_registry.registered_ops() if relax_registry.exclusion(op)]
)
def test_excluded_op(op: str, target: str) -> None:
    """A registered op excluded as no op a user calls, visible as a skip with its reason."""
    pytest.skip(f"{op} excluded: {relax_registry.exclusion(op)}")


_VMS: dict[tuple[str, str], Any] = {}
# Each point's inputs and float64 references, computed once for both exec modes.
_REFERENCES: dict[Any, Any] = {}


def _selected(session: pytest.Session, exec_mode: str) -> set[str]:
    """The ops whose test_signature_points_match_numpy case in ``exec_mode`` this session
    runs: all of them, or a Bazel shard's share (the runner keeps every n-th case) or a -k
    selection's."""
    return {
        item.callspec.params["op"]
        for item in session.items
        if getattr(item, "originalname", "") == "test_signature_points_match_numpy"
        and item.callspec.params["exec_mode"] == exec_mode
    }


def _vm(
    target: str, dev: tvm.runtime.Device, exec_mode: str, op: str, session: pytest.Session
) -> Any:
    """The accepted points of every op this session runs in ``exec_mode``, in one module built
    once per exec mode (CI time: a build has a fixed cost; the ops' cases share it). Only the
    session's ops: a -k selection or a shard builds its own ops' module, not every op's.
    Where that build fails (a point that fails to build on this TVM, under no known
    deviation), each op's points are built alone: only the ops whose build fails fail, each
    with its own error, and none waits on a failing build."""
    if (target, exec_mode) not in _VMS:
        selected = _selected(session, exec_mode)
        ops = [o for o in _ops() if _scope(o, exec_mode) and o in selected]
        module = relax_signatures.combined_module(plan(o, exec_mode) for o in ops)
        try:
            _VMS[target, exec_mode] = build_vm(module, target, dev, exec_mode)
        except Exception:  # noqa: BLE001 - the op's own build below reports it
            _VMS[target, exec_mode] = None
    if _VMS[target, exec_mode] is None:
        module = relax_signatures.combined_module([plan(op, exec_mode)])
        return build_vm(module, target, dev, exec_mode)
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


@walk_builds
@pytest.mark.parametrize(
    ("op", "exec_mode"), [(op, mode) for op in _ops() for mode in EXEC_MODES if _scope(op, mode)]
)
def test_signature_points_match_numpy(
    op: str, exec_mode: str, target: str, dev: tvm.runtime.Device, request: pytest.FixtureRequest
) -> None:
    """Every accepted point of the op in the mode's scope (in the module of the session's
    ops) matches its reference."""
    calls, _ = corpus()
    op_plan = plan(op, exec_mode)
    if not op_plan.points:
        # Every point TVM accepts may lie under known deviations (test_known_deviation's).
        known = [p for p in _walk(op) if _known(p)]
        assert known, f"{op}: TVM refused every point: {sorted(set(op_plan.refused.values()))}"
        return
    vm = _vm(target, dev, exec_mode, op, request.session)
    prefix = relax_signatures.function_prefix(op)
    failures = relax_signatures.run_plan(
        op_plan, calls[op], vm, dev, prefix=prefix, cache=_REFERENCES
    )
    assert not failures, f"{len(failures)} of {len(op_plan.points)} points:\n" + "\n".join(failures)


# The walk's pinned expectations, per lane (tvm_conformance/expectations/<lane>/): every point's
# outcome; the whole walk (`--config=op_corpus`) has a file of its own.
WALK_SUITES = {False: "relax_op_walk", True: "relax_op_walk_full"}


def walk_outcomes(full: bool) -> dict[str, str]:
    """Every walked point's outcome, keyed by its id: ``correct`` (accepted; its value is
    test_signature_points_match_numpy's to check), ``refused normalize: <TVM's exception and
    message>`` (the struct-info inference refused it), ``deviating <id>`` (a known
    deviation's point, test_known_deviation's) or ``excluded no reference for the form:
    <why>`` (accepted, but the op's reference does not model the form:
    test_unchecked_points). ``full``: the whole walk of TVM_CONFORMANCE_FULL_WALK=1, else CI's
    scope (the bytecode mode's points, which hold the compiled mode's)."""
    calls, _ = corpus()
    outcomes: dict[str, str] = {}
    for op in _ops():
        whole = full or _scope(op, "bytecode") == "whole"
        if full == (os.environ.get(FULL_WALK) == "1"):
            op_plan = plan(op, "bytecode")
        else:
            op_plan = relax_signatures.plan_op(
                op, calls[op], skip=lambda p: _known(p) is not None, crossed=whole,
                only_base=not whole,
            )  # fmt: skip
        accepted = set(op_plan.points)
        for point in relax_signatures.walk(op, calls[op], crossed=whole, only_base=not whole):
            if point in op_plan.refused:
                # "@" separates a deviation's figures in an outcome: never in a refusal's text.
                outcome = "refused normalize: " + op_plan.refused[point].replace("@", "(at)")
            elif point in op_plan.unchecked:
                # The kit's choice, not TVM's behaviour: its reference does not model the form.
                reason = op_plan.unchecked[point].replace("@", "(at)")
                outcome = f"excluded no reference for the form: {reason}"
            elif point in accepted:
                outcome = "correct"
            else:
                outcome = f"deviating {_known(point)}"
            if outcomes.setdefault(point.id, outcome) != outcome:
                raise AssertionError(f"two points share the id {point.id}")
    return outcomes


def test_walk_outcomes_are_pinned(target: str) -> None:
    """Every point's outcome is the lane's pinned one (tvm_conformance.expectations): a point
    that was accepted and is now refused, or refused another way, is a regression, one line
    per point; on a user's wheel a better one is an improvement (in the variant, like
    test_every_collected_op_is_walked; normalizing only, no build)."""
    full = os.environ.get(FULL_WALK) == "1"
    suite = WALK_SUITES[full]
    record = expectations.venv_record()
    lane, pinned = expectations.lane_of(record), expectations.pinned(record)
    judgement = expectations.judge_outcomes(walk_outcomes(full), expectations.load(lane, suite))
    expectations.assert_as_pinned(judgement, lane, pinned, suite, record_as=suite, what="point")


def test_refusals_name_the_argument(target: str) -> None:
    """A point TVM refuses is refused with a message (not an empty or internal one); in the
    variant for the same reason as test_every_collected_op_is_walked."""
    for op in _ops():
        for point, message in plan(op, "bytecode").refused.items():
            assert re.search(r"\w+Error: \S", message), f"{point.id}: {message!r}"


def _known_cases() -> list[Any]:
    cases = []
    for op in _ops():
        # Each op walked once, not once a deviation (4 s of every process's collection).
        known = {_known(p) for p in _walk(op)}
        for dev_id in KNOWN:
            if dev_id in known:
                for mode in _modes(op):
                    cases.append(
                        pytest.param(dev_id, op, mode, marks=deviations.xfail(dev_id),
                                     id=f"{dev_id}-{op}-{mode}")
                    )  # fmt: skip
    return cases


@walk_builds
@pytest.mark.parametrize(("dev_id", "op", "exec_mode"), _known_cases())
def test_known_deviation(
    dev_id: str, op: str, exec_mode: str, target: str, dev: tvm.runtime.Device
) -> None:
    """The points a known deviation covers (those _known gives it), built together: the
    recorded failure, or a match."""
    calls, _ = corpus()
    _, exc_type, message, observed = KNOWN[dev_id]
    if dev_id in _IN_CHILD:
        failures, count = _known_in_child(dev_id, op, exec_mode, target, dev)
        if len(failures) == count and all(re.fullmatch(message, f, re.DOTALL) for f in failures):
            raise observed(f"{count} points: {failures[0]}")
        assert not failures, "\n".join(failures)
        return
    op_plan = relax_signatures.plan_op(
        op,
        calls[op],
        skip=lambda p: _known(p) != dev_id,
        checked_only=False,
    )
    assert op_plan.points, f"{op}: no accepted point of {dev_id}"
    if exc_type is not None:
        # Each point built alone: one point's failure must not stand for another's.
        built = []
        for i, point in enumerate(op_plan.points):
            single = tvm.IRModule({op_plan.module.get_global_var(f"p{i}"): op_plan.module[f"p{i}"]})
            try:
                with recorded(exc_type, message, observed):
                    build_vm(single, target, dev, exec_mode)
            except observed:
                continue
            built.append(point.id)
        if not built:
            raise observed(f"{len(op_plan.points)} points, each alone: {exc_type.__name__}")
        # Some (or all) points build now: the deviation's points changed (an improvement of
        # those points on a user's wheel; its record and the walk's expectations need review).
        assert len(built) == len(op_plan.points), (
            f"{dev_id}: {len(built)} of {len(op_plan.points)} points build now: {built}"
        )
    vm = build_vm(op_plan.module, target, dev, exec_mode)
    if exc_type is not None:
        # Every point builds: the recorded failure is the call's (a runtime kernel's refusal).
        with recorded(exc_type, message, observed):
            failures = relax_signatures.run_plan(op_plan, calls[op], vm, dev, cache=_REFERENCES)
    else:
        failures = relax_signatures.run_plan(op_plan, calls[op], vm, dev, cache=_REFERENCES)
    if exc_type is None and dev_id in _DEVIATES_AS:
        otherwise = relax_signatures.run_plan(
            op_plan, calls[op], vm, dev, reference=_DEVIATES_AS[dev_id]
        )
        assert not otherwise, f"{dev_id}, not in its recorded way:\n" + "\n".join(otherwise)
        if failures and all(re.fullmatch(message, f, re.DOTALL) for f in failures):
            raise observed(f"{len(failures)} of {len(op_plan.points)} points: {failures[0]}")
    elif exc_type is None and len(failures) == len(op_plan.points):
        if all(re.fullmatch(message, f, re.DOTALL) for f in failures):
            raise observed(f"{len(failures)} points: {failures[0]}")
    assert not failures, "\n".join(failures)


# Deviations of R.vision.all_class_non_max_suppression that the walk's inputs do not reach (an
# IoU equal to the threshold, a threshold of 0), each pinned by one hand-picked case: two boxes
# of one class (y1, x1, y2, x2), scores 0.9 and 0.8, a limit of both, score threshold 0; the
# IoU threshold; the observed class; the deviating selection.
_ALL_CLASS_NMS_PINNED: dict[str, tuple[list[list[float]], float, type, list[int]]] = {
    # Box 1 is half of box 0: an IoU of exactly 0.5, which ONNX does not suppress.
    "relax-all-class-nms-suppresses-at-equal-iou": (
        [[0, 0, 2, 2], [0, 0, 1, 2]], 0.5, EqualIouSuppressed, [0],
    ),
    # Boxes overlapping by an IoU of 1/7: ONNX selects box 0 and suppresses box 1.
    "relax-all-class-nms-zero-iou-threshold-selects-nothing": (
        [[0, 0, 2, 2], [1, 1, 3, 3]], 0.0, NothingSelected, [],
    ),
}  # fmt: skip


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
@pytest.mark.parametrize(
    "dev_id", [pytest.param(d, marks=deviations.xfail(d)) for d in _ALL_CLASS_NMS_PINNED]
)
def test_all_class_nms_pinned_case(
    dev_id: str, exec_mode: str, target: str, dev: tvm.runtime.Device
) -> None:
    """R.vision.all_class_non_max_suppression, its five arguments function parameters as the
    walk gives them, selects what ONNX NonMaxSuppression (the walk's reference) selects."""
    import numpy as np
    import torch

    boxes, iou_threshold, observed, deviating = _ALL_CLASS_NMS_PINNED[dev_id]
    shapes = [((1, 2, 4), "float32"), ((1, 1, 2), "float32"), ((), "int64"), ((), "float32"),
              ((), "float32")]  # fmt: skip
    params = [relax.Var(f"a{i}", relax.TensorType(s, d)) for i, (s, d) in enumerate(shapes)]
    builder = relax.BlockBuilder()
    with builder.function("main", params):
        out = builder.emit(relax.op.vision.all_class_non_max_suppression(*params))
        builder.emit_func_output(out)
    vm = build_vm(builder.get(), target, dev, exec_mode)
    inputs = [np.array([boxes], "float32"), np.array([[[0.9, 0.8]]], "float32"),
              np.array(2, "int64"), np.array(iou_threshold, "float32"),
              np.array(0.0, "float32")]  # fmt: skip
    rows = vm["main"](*[tvm.runtime.tensor(x, dev) for x in inputs])[0].numpy()
    reference = relax_signatures.REFERENCES["relax.vision.all_class_non_max_suppression"]
    expected = reference(*[torch.from_numpy(x) for x in inputs])[0].numpy()
    got = rows[:, 2].tolist()
    if got != expected[:, 2].tolist() and got == deviating and (rows[:, :2] == 0).all():
        raise observed(f"selected boxes {got}; ONNX selects {expected[:, 2].tolist()}")
    np.testing.assert_array_equal(rows, expected)
