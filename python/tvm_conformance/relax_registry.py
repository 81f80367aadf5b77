"""TVM's registry of Relax ops as the walk's reference: every registered ``relax.*`` op
(``tvm.ir.Op.list_op_names()``) is walked, named as not walked yet with the reason
(``relax_signatures.UNREFERENCED``), or excluded by name as no operator a user calls
(``EXCLUDED``: the compiler's and the VM's internals, each with its reason).

An op no frontend emits gets a base call synthesized from its Python signature
(``synthesized_call``): its required tensor parameters a small tensor each, of the first rank,
shape pattern and dtype (in a fixed order) that TVM's struct-info inference accepts; a required
``shape`` the first tensor's shape (a creation op's: the candidate rank's), ``dtype`` the
candidate dtype, its other required parameters the value ``REQUIRED_VALUES`` names for them;
every other argument omitted (its default); a list of index tensors (``indices: Expr |
list[Expr]``) one int64 tensor. Where no call with float32 for every tensor is accepted, a
float first tensor beside tensors of other dtypes comes next (``_MIXED_DTYPES``: quantize's
integer zero point, scatter_nd's integer indices beside float data), then one integer or bool
dtype for all, then any mix; where omitting an optional tensor parameter makes the function emit
another op (``R.nn.attention_bias`` without a bias is ``relax.nn.attention``), that parameter
is given too. Only once every such candidate is refused, the same again with a batch of one
first (``_BATCH_OF_ONE_DIMS``: affine_grid's (1, 2, 3) matrices). An op whose docstring says
what an ``Expr`` argument must be (a shape value, an int32 offsets tensor beside float data),
or whose required argument is a function (an index map), gets the call its docstring
describes (``DOCUMENTED_CALLS``). The walk's forms (axis, keepdims, dtypes) then start from
that call.

    synthesized_call("relax.repeat")   # R.repeat(a0: Tensor((2, 3), "float32"), 2)
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Iterator
from typing import Any

import tvm
from tvm import relax

from tvm_conformance import relax_signatures

# Registered ops that are no operator a user calls on tensors, by name or by prefix (ending in
# "."), each with why; the test of the walk shows each as a skip with its reason.
_CALLEE = "calls a function the caller supplies (a PrimFunc, a packed or Python function): the "
_CALLEE += "callee computes, not the op; the kit's VM tests drive such calls"
_CLOSURE = "a closure of the VM's calling convention (lambda lifting emits it): no tensor op"
_SHAPE = "its result is a shape, not a tensor: nothing for a tensor reference to compare"
_DEVICE = "places data on a virtual device of the module's global info: needs several devices"
EXCLUDED: dict[str, str] = {
    "relax.memory.": "memory planning's internals (StaticPlanBlockMemory's storage and views)",
    "relax.vm.": "the VM's lowered instructions (VMBuiltinLower / VMShapeLower emit them)",
    "relax.builtin.": "the builtin lowering's internals (alloc_tensor; stop_lift_params marks "
    "LiftTransformParams' boundary)",
    "relax.inspect.": "DLTensor field accessors the lowering emits; no Python op function",
    "relax.dist.": "distributed sharding annotations (relax.distributed): need a device mesh; "
    "no Python op function",
    "relax.ccl.": "collective communication across workers (disco): needs several workers",
    "relax.grad.": "the gradient pass's own ops (relax.transform.Gradient emits their calls; "
    "checkpoints and no_grad mark its regions): no op of a model's forward code",
    "relax.call_tir": _CALLEE,
    "relax.call_tir_inplace": _CALLEE,
    "relax.call_tir_with_grad": _CALLEE,
    "relax.call_dps_packed": _CALLEE,
    "relax.call_pure_packed": _CALLEE,
    "relax.call_inplace_packed": _CALLEE,
    "relax.call_builtin_with_ctx": _CALLEE,
    "relax.call_py_func": _CALLEE,
    "relax.invoke_closure": _CLOSURE,
    "relax.invoke_pure_closure": _CLOSURE,
    "relax.make_closure": _CLOSURE,
    "relax.null_value": "the VM's null object: no tensor",
    "relax.print": "a side effect (stdout), no tensor result",
    "relax.assert_op": "a runtime check, no tensor result: //python/tests/relax:"
    "vm_runtime_checks_test drives it (vm_assert_op_test.py)",
    "relax.shape_of": _SHAPE,
    "relax.tensor_to_shape": _SHAPE,
    "relax.hint_on_device": _DEVICE,
    "relax.to_vdevice": _DEVICE,
}

# The value of a required non-tensor parameter a synthesized call passes, by name ("shape": the
# candidate rank's shape, "dtype": the candidate dtype); an op with a required parameter named
# in neither is not synthesized.
REQUIRED_VALUES: dict[str, Any] = {
    "repeats": 2, "depth": 3, "on_value": 1.0, "off_value": 0.0,
    # R.hamming_window's, all required: torch.hamming_window's defaults (a = 0.54, b = 0.46,
    # periodic) over five points.
    "window_size": 5, "periodic": True, "alpha": 0.54, "beta": 0.46,
    # R.image.affine_grid's output (H, W): unequal, so a transposed grid shows.
    "size": (3, 4),
    # R.vision.roi_pool's: 2 x 2 bins, boxes in a frame twice the feature map's size
    # (relax_signatures' "roi_boxes" domain places them for this scale).
    "pooled_size": 2, "spatial_scale": 0.5,
}  # fmt: skip
# Ops whose docstring says what an argument is where its annotation (``Expr``) does not, so no
# candidate below meets it: the base call the docstring describes, as a call record
# (``relax_signatures.call_record``'s form). The walk's forms then start from it as from any
# base call.
DOCUMENTED_CALLS: dict[str, dict[str, Any]] = {
    # "index_map: The transformation to apply": the NCHW -> NCHW4c packing (a channel axis
    # split in blocks of 4, the block innermost), the form layout rewriting gives it.
    "relax.layout_transform": {
        "args": [{"tensor": [1, 8, 2, 3], "dtype": "float32"}],
        "attrs": {"index_map": lambda n, c, h, w: (n, c // 4, h, w, c % 4)},
    },
    # "Convert shape to tensor expr": its struct-info inference takes a shape value only.
    "relax.shape_to_tensor": {"args": [{"shape": [2, 3, 4]}], "attrs": {}},
    # Queries, keys and values "concatenated along the second axis", shape (1, total_seq_len,
    # num_head, head_dim); seqstart_q "the cumsum of query sequence lengths, prepended with 0.
    # Its dtype must be int32" (two sequences: (3,)); max_seqlen_q an int32 scalar. seqstart_k
    # and max_seqlen_k default to the queries'; relax_signatures.DOMAINS gives their values.
    "relax.nn.attention_var_len": {
        "args": [
            *[{"tensor": [1, 5, 2, 4], "dtype": "float32"}] * 3,
            {"tensor": [3], "dtype": "int32"},
            {"tensor": [], "dtype": "int32"},
        ],
        "attrs": {},
    },
    # cls_pred "[B, C, N] class logits", loc_pred "[B, 4*N] per-anchor encodings", anchor
    # "[1, N, 4] priors" (its notes: the three of one dtype): two images, three classes, four
    # anchors. variances "(x,y,w,h) = TFLite 1/x_scale, 1/y_scale, 1/w_scale, 1/h_scale", one
    # different value each (a swapped pair shows), and a threshold a third of three classes'
    # softmax scores fall under; the walk gives both omitted too.
    "relax.vision.multibox_transform_loc": {
        "args": [
            {"tensor": [2, 3, 4], "dtype": "float32"},
            {"tensor": [2, 16], "dtype": "float32"},
            {"tensor": [1, 4, 4], "dtype": "float32"},
        ],
        "attrs": {"variances": (0.1, 0.2, 0.3, 0.4), "threshold": 0.25},
    },
    # data "[batch_size, num_anchors, elem_length]" (rows as get_valid_counts leaves them:
    # class id, score, four corners), valid_count "1-D tensor for valid number of boxes" and
    # indices "[batch_size, num_anchors]" (int32, get_valid_counts' outputs); a limit and a
    # top_k that bind, so the walk gives each omitted and given.
    "relax.vision.non_max_suppression": {
        "args": [
            {"tensor": [2, 8, 6], "dtype": "float32"},
            {"tensor": [2], "dtype": "int32"},
            {"tensor": [2, 8], "dtype": "int32"},
        ],
        "attrs": {"max_output_size": 2, "top_k": 3},
    },
    # ONNX NonMaxSuppression's inputs, which the docstring names: boxes "(batch_size,
    # num_boxes, 4)", scores "(batch_size, num_classes, num_boxes)", and the three that ONNX
    # says are scalars, 0-d tensors (an int64 limit, float thresholds).
    "relax.vision.all_class_non_max_suppression": {
        "args": [
            {"tensor": [2, 6, 4], "dtype": "float32"},
            {"tensor": [2, 2, 6], "dtype": "float32"},
            {"tensor": [], "dtype": "int64"},
            {"tensor": [], "dtype": "float32"},
            {"tensor": [], "dtype": "float32"},
        ],
        "attrs": {},
    },
}  # fmt: skip
# The candidates, in order: dtypes, then ranks (2 first: an axis has two to walk), then the
# shapes of the tensors after the first (the same, its last axis, its first axis, 0-d; or every
# tensor's every axis 2; a column of its rows, multinomial_from_uniform's (n, 1) samples; rows
# as long as its last axis, roi_pool's (num_roi, 5) boxes beside (2, 3, 4, 5) data).
_DTYPES = ("float32", "int64", "bool")
# Each tensor's own candidates, in order, once no single dtype serves every tensor.
_MIXED_DTYPES = ("float32", "int32", "int64", "bool")
_RANKS = (2, 1, 3, 4, 5, 0)
_DIMS = (2, 3, 4, 5, 6)
# The first tensor's axes once no candidate of _DIMS serves (a second pass): a batch of one
# before the same small sizes (R.image.affine_grid's (batch, 2, 3) matrices).
_BATCH_OF_ONE_DIMS = (1, 2, 3, 4, 5)
_TENSOR_NAMES = ("data", "x", "x1", "x2", "x3", "input_tensor")


def registered_ops() -> list[str]:
    """Every ``relax.*`` op TVM registers, sorted."""
    return sorted(n for n in tvm.ir.Op.list_op_names() if n.startswith("relax."))


def exclusion(op_name: str) -> str | None:
    """Why ``op_name`` is no op a user calls (EXCLUDED, by name or prefix); None if it is one."""
    if op_name in EXCLUDED:
        return EXCLUDED[op_name]
    for prefix, reason in EXCLUDED.items():
        if prefix.endswith(".") and op_name.startswith(prefix):
            return reason
    return None


def _is_tensor(param: inspect.Parameter) -> bool:
    """A required parameter that takes a tensor: annotated ``Expr``, or unannotated with a
    tensor's name (``data``, ``x``, ...)."""
    if param.default is not inspect.Parameter.empty:
        return False
    annotation = param.annotation
    if annotation is inspect.Parameter.empty:
        return param.name in _TENSOR_NAMES
    return annotation is tvm.ir.Expr or annotation in ("Expr", "relax.Expr")


def _is_index_list(param: inspect.Parameter) -> bool:
    """A required parameter that takes a tensor or a list of them (``indices: Expr |
    list[Expr]``: R.index_tensor's and R.index_put's index tensors, which must be integer)."""
    return (
        param.name == "indices"
        and param.default is inspect.Parameter.empty
        and any(f"{kind}[tvm.ir.expr.Expr]" in str(param.annotation) for kind in ("list", "tuple"))
    )


def _is_optional_tensor(param: inspect.Parameter) -> bool:
    """A parameter that takes a tensor or None, None by default (``bias: Expr | None = None``)."""
    return param.default is None and str(param.annotation) in (
        "tvm.ir.expr.Expr | None", "typing.Optional[tvm.ir.expr.Expr]", "Expr | None",
        "Optional[Expr]",
    )  # fmt: skip


def _shapes(
    rank: int, count: int, dims: tuple[int, ...] = _DIMS
) -> Iterator[list[tuple[int, ...]]]:
    """The candidate shapes of ``count`` tensors of the first's ``rank`` (its axes ``dims``'
    first)."""
    first = dims[:rank]
    rest = [
        first, first[-1:], first[:1], (), (2,) * rank, first[:1] + (1,) * (rank - 1),
        first[:1] + first[-1:],
    ]  # fmt: skip
    seen = []
    for shape in rest:
        shapes = [first, *[shape] * (count - 1)] if shape != (2,) * rank else [shape] * count
        if shapes not in seen:
            seen.append(shapes)
            yield shapes


def _candidates(count: int) -> Iterator[tuple[tuple[str, ...], list[tuple[int, ...]]]]:
    """The synthesis's candidates for ``count`` tensors, in order: (each tensor's dtype, their
    shapes); first one float dtype for all, then each its own (``_MIXED_DTYPES``) with a float
    first, then one of ``_DTYPES``' others for all, then each its own."""
    count = max(1, count)
    mixed = [
        d for d in itertools.product(_MIXED_DTYPES, repeat=count) if len(set(d)) > 1
    ] if count > 1 else []  # fmt: skip
    # A float first tensor before an integer or bool one (indices beside float data: the walk
    # varies a float call's dtypes, an integer call keeps its own).
    same = [(d,) * count for d in _DTYPES]
    float_first = [d for d in mixed if d[0].startswith("float")]
    others = [d for d in mixed if d not in float_first]
    for dims in (_DIMS, _BATCH_OF_ONE_DIMS):
        for dtypes in same[:1] + float_first + same[1:] + others:
            # Mixed dtypes at the first ranks only (the search's time grows with the product):
            # a float first tensor up to rank 3 (scatter_nd's data beside its index tuples),
            # others 2.
            ranks = _RANKS[:3] if dtypes in float_first else _RANKS[:2]
            for rank in _RANKS if len(set(dtypes)) == 1 else ranks:
                for shapes in _shapes(rank, count, dims):
                    yield dtypes, shapes


def synthesized_call(op_name: str) -> tuple[relax.Call | None, str]:
    """A base call of ``op_name`` from its Python signature (module docstring), normalized,
    and "" ; or None and why no call could be made."""
    try:
        function = relax_signatures.python_op(op_name)
        params = list(inspect.signature(function).parameters.values())
    except (AttributeError, TypeError, ValueError):
        return None, "no Python op function in tvm.relax.op"
    if op_name in DOCUMENTED_CALLS:
        try:
            return relax_signatures.call_from_record(op_name, DOCUMENTED_CALLS[op_name]), ""
        except relax_signatures.REFUSALS as err:
            why = f"{type(err).__name__}: {relax_signatures.last_sentence(str(err))}"
            return None, f"TVM's struct-info inference refused the documented call ({why})"
    tensors = [p for p in params if _is_tensor(p) or _is_index_list(p)]
    others = [p for p in params if p.default is inspect.Parameter.empty and p not in tensors]
    unknown = [p.name for p in others if p.name not in (*REQUIRED_VALUES, "shape", "dtype")]
    if not tensors and (unknown or not others):
        return None, (
            "no required parameter the synthesis takes for a tensor (annotated Expr, or "
            f"unannotated and named {' / '.join(_TENSOR_NAMES)}) and no shape: a creation op "
            f"with other arguments ({unknown}), or a signature without annotations"
        )
    if unknown:
        return None, f"required parameters the synthesis gives no value: {unknown}"
    last = ""
    optional = [p for p in params if _is_optional_tensor(p)]
    # An optional tensor is given only where omitting it emits another op (the second round).
    for given in ([], optional) if optional else ([],):
        tensors_given = [p for p in params if p in tensors or p in given]
        emitted = ""
        for dtypes, shapes in _candidates(len(tensors_given)):
            args: dict[str, Any] = {
                p.name: relax.Var(f"a{i}", relax.TensorType(s, d))
                for i, (p, s, d) in enumerate(zip(tensors_given, shapes, dtypes, strict=False))
            }
            for p in tensors_given:
                if _is_index_list(p):  # one index tensor, int64 (the candidate's shape)
                    args[p.name] = [
                        relax.Var(p.name, relax.TensorType(args[p.name].ty.shape, "int64"))
                    ]
            for p in others:
                if p.name in ("shape", "dtype"):
                    # The first tensor's shape (a creation op's: the candidate's), the dtype.
                    args[p.name] = shapes[0] if p.name == "shape" else dtypes[0]
                else:
                    args[p.name] = REQUIRED_VALUES[p.name]
            try:
                call = relax.BlockBuilder().normalize(function(**args))
            except (*relax_signatures.REFUSALS, IndexError) as err:
                last = f"{type(err).__name__}: {relax_signatures.last_sentence(str(err))}"
                continue
            name = getattr(call.op, "name", "") if isinstance(call, relax.Call) else ""
            if name == op_name:
                return call, ""
            emitted = emitted or name
        if emitted:
            last = f"the call normalizes to {emitted}"
    if len(last) > 160:
        last = last[:157] + "..."
    return None, f"TVM's struct-info inference refused every synthesized call (last: {last})"
