"""Relax operators driven by their Python signatures: every argument form, every dtype.

The operators come from modules others import (the frontend tests' PyTorch models through the
Relax frontends: ``corpus_calls``); for each operator the default pipeline legalizes, one call
found there is the base (its tensor arguments' shapes and its attributes), and the operator's
Python signature (``inspect.signature(tvm.relax.op.<name>)``) is walked from it:

- each argument with a default: omitted; ``None`` where its annotation admits None;
- an axis argument (``axis`` / ``axes``): every axis as a non-negative and a negative int where
  an int is admitted, every tuple of two or more axes and the whole tuple written negatively
  where a list is admitted;
- a bool argument (``keepdims``, ``center``, ...): both ways, crossed with every axis form;
- every dtype of ``DTYPES`` for the tensor arguments.

A point TVM refuses while it builds the call (struct-info inference, the argument's FFI
conversion) is recorded as refused, with TVM's message: the op does not accept it. Every point
an op accepts becomes one Relax function of one IRModule per op, compiled once per exec mode.

    calls = corpus_calls(modules)
    plan = plan_op("relax.mean", calls["relax.mean"])
    plan.points, plan.refused, plan.module
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import tvm
import tvm_ffi
from tvm import relax

# The dtypes every tensor argument is walked through; TVM's struct-info inference decides
# which an op accepts.
DTYPES: tuple[str, ...] = ("float32", "float16", "int32", "int64", "bool")
AXIS_PARAMETERS = ("axis", "axes")

# What refusing a point looks like: TVM's errors and the FFI's conversion errors.
REFUSALS: tuple[type[BaseException], ...] = (tvm.error.InternalError, TypeError, ValueError)


def python_op(op_name: str) -> Callable[..., Any]:
    """``relax.nn.softmax`` -> ``tvm.relax.op.nn.softmax``."""
    obj: Any = relax.op
    for part in op_name.removeprefix("relax.").split("."):
        obj = getattr(obj, part)
    return obj


def legalized(op_name: str) -> bool:
    """True if the default pipeline legalizes ``op_name`` (it has an ``FLegalize``)."""
    return tvm.ir.Op.get(op_name).get_attr("FLegalize") is not None


def corpus_calls(modules: Iterable[tvm.IRModule]) -> dict[str, relax.Call]:
    """The first call of each operator in ``modules`` whose tensor arguments have static
    shapes (a base for the walk)."""
    calls: dict[str, relax.Call] = {}

    def visit(expr: relax.Expr) -> None:
        if not (isinstance(expr, relax.Call) and isinstance(expr.op, tvm.ir.Op)):
            return
        if expr.op.name in calls or not expr.op.name.startswith("relax."):
            return
        if all(_static(arg) for arg in expr.args):
            calls[expr.op.name] = expr

    for mod in modules:
        for _, func in mod.functions_items():
            if isinstance(func, relax.Function):
                relax.analysis.post_order_visit(func.body, visit)
    return calls


def call_record(call: relax.Call) -> dict[str, Any]:
    """A base call as JSON data: its arguments' shapes and dtypes (a shape argument as its
    values) and the attributes its op's Python signature takes (``call_from_record`` inverts
    it); what ``tools/relax_op_corpus`` writes to ``python/tests/relax/op_corpus.json``."""
    args: list[dict[str, Any]] = []
    for arg in call.args:
        if isinstance(arg.ty, relax.TensorType):
            shape = [int(d) for d in arg.ty.shape.values]
            args.append({"tensor": shape, "dtype": str(arg.ty.dtype)})
        else:
            args.append({"shape": [int(d) for d in arg.values]})
    given = _given(call)
    params = list(inspect.signature(python_op(call.op.name)).parameters)[len(call.args) :]
    attrs = {n: _python_value(getattr(call.attrs, n)) for n in params if n in given}
    return {"args": args, "attrs": attrs}


def call_from_record(op_name: str, record: Mapping[str, Any]) -> relax.Call:
    """The call ``record`` describes, built by the op's Python function and normalized (its
    arguments typed, its attributes those of the recorded call)."""
    args: list[relax.Expr] = []
    for i, arg in enumerate(record["args"]):
        if "tensor" in arg:
            args.append(relax.Var(f"a{i}", relax.TensorType(arg["tensor"], arg["dtype"])))
        else:
            args.append(relax.ShapeExpr(arg["shape"]))
    call = relax.BlockBuilder().normalize(python_op(op_name)(*args, **record["attrs"]))
    if not (isinstance(call, relax.Call) and call.op.name == op_name):
        raise ValueError(f"{op_name}: the record builds {call}, not a call of the op")
    return call


def _static(arg: relax.Expr) -> bool:
    info = arg.ty
    if isinstance(info, relax.TensorType):
        return info.shape is not None and all(
            isinstance(d, tvm.tirx.IntImm) for d in info.shape.values
        )
    return isinstance(arg, relax.ShapeExpr)


def _python_value(value: Any) -> Any:
    """An attribute value as the Python op function takes it."""
    if isinstance(value, tvm.tirx.IntImm):
        return int(value)
    if isinstance(value, tvm.tirx.FloatImm):
        return float(value)
    if isinstance(value, (tvm_ffi.Array, list, tuple)):
        return [_python_value(v) for v in value]
    if isinstance(value, str):
        return str(value)
    if isinstance(value, tvm_ffi.dtype):
        return str(value)
    return value


@dataclasses.dataclass(frozen=True)
class Point:
    """One argument form of an op: the walked keywords (omitted ones absent) and the dtype."""

    op: str
    kwargs: tuple[tuple[str, Any], ...]
    dtype: str

    @property
    def id(self) -> str:
        shown = ",".join(f"{k}={v!r}" for k, v in self.kwargs)
        return f"{self.op}({shown})[{self.dtype}]"


@dataclasses.dataclass
class OpPlan:
    """What the walk of one op produced: accepted points (one function each in ``module``,
    named ``p<i>``, with its argument shapes in ``shapes``) and refused ones (TVM's message)."""

    op: str
    points: list[Point]
    shapes: list[list[tuple[tuple[int, ...], str]]]
    refused: dict[Point, str]
    module: tvm.IRModule | None


def _forms(param: inspect.Parameter, base: Any, ndim: int) -> list[Any]:
    """The forms of one keyword argument: ``inspect._empty`` stands for 'omitted'."""
    omitted = inspect.Parameter.empty
    annotation = str(param.annotation)
    forms: list[Any] = [omitted] if param.default is not omitted else []
    if param.default is omitted and base is not omitted:
        forms.append(base)  # a required argument: the corpus's value first
    if "None" in annotation or param.default is None:
        forms.append(None)
    if param.name in AXIS_PARAMETERS:
        if "int" in annotation.replace("list[int]", ""):
            forms += list(range(ndim)) + list(range(-ndim, 0))
        if "list" in annotation:
            for size in range(2, ndim + 1):
                forms += [list(c) for c in itertools.combinations(range(ndim), size)]
            forms.append(list(range(-ndim, 0)))
    elif param.annotation is bool or annotation == "bool":
        forms += [False, True]
    if base is not omitted and not any(_same(base, f) for f in forms):
        forms.append(base)
    return forms


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _tensor_arg_count(call: relax.Call) -> int:
    return len(call.args)


def walk(op_name: str, call: relax.Call) -> list[Point]:
    """Every point of the signature walk from ``call`` (see the module docstring)."""
    function = python_op(op_name)
    params = list(inspect.signature(function).parameters.values())[_tensor_arg_count(call) :]
    attrs = call.attrs
    ndim = len(call.args[0].ty.shape.values)
    per_param = []
    for param in params:
        base = inspect.Parameter.empty
        if attrs is not None and param.name in dir(attrs):
            base = _python_value(getattr(attrs, param.name))
        per_param.append((param.name, _forms(param, base, ndim)))
    # The axis arguments and keepdims are crossed (keepdims both ways for every axis form); every
    # other argument varies alone, the rest at their first form (omitted, else the base).
    crossed = [(n, f) for n, f in per_param if n in AXIS_PARAMETERS or n == "keepdims"]
    alone = [(n, f) for n, f in per_param if (n, f) not in crossed]
    first = {n: f[0] for n, f in per_param}
    combos: list[dict[str, Any]] = []
    for values in itertools.product(*[f for _, f in crossed]):
        combos.append(first | dict(zip([n for n, _ in crossed], values, strict=True)))
    for name, forms in alone:
        combos += [first | {name: form} for form in forms[1:]]
    # The corpus's own dtype (float32) takes every form; the other dtypes take the first point
    # and the corpus's own arguments (CI time: each point is a compiled function).
    base_dtype = str(call.args[0].ty.dtype)
    base_combo = {n: (f[1] if f[0] is inspect.Parameter.empty and len(f) > 1 and n in
                      _given(call) else f[0]) for n, f in per_param}  # fmt: skip
    points = []
    seen = set()
    for i, combo in enumerate([*combos, base_combo]):
        kwargs = tuple(
            (k, tuple(v) if isinstance(v, list) else v)
            for k, v in combo.items()
            if v is not inspect.Parameter.empty
        )
        for dtype in DTYPES:
            if dtype != base_dtype and 0 < i < len(combos):
                continue
            point = Point(op_name, kwargs, dtype)
            if point not in seen:
                seen.add(point)
                points.append(point)
    return points


def _given(call: relax.Call) -> set[str]:
    """The attribute names the call sets."""
    return set(dir(call.attrs)) if call.attrs is not None else set()


def _args(call: relax.Call, dtype: str) -> tuple[list[tvm.ir.Var], list[relax.Expr]]:
    """Fresh parameters for the call's tensor arguments, their floating ones in ``dtype``;
    a shape argument stays what the call passes."""
    params, args = [], []
    for i, arg in enumerate(call.args):
        info = arg.ty
        if isinstance(info, relax.TensorType):
            shape = [int(d) for d in info.shape.values]
            keep = not str(info.dtype).startswith("float")
            var = relax.Var(f"a{i}", relax.TensorType(shape, info.dtype if keep else dtype))
            params.append(var)
            args.append(var)
        else:
            args.append(arg)
    return params, args


def reference_arguments(call: relax.Call) -> list[Any]:
    """The call's arguments as its reference takes them: ``None`` where a tensor goes (the
    inputs fill them in order), a shape argument as its tuple of ints."""
    return [
        None if isinstance(arg.ty, relax.TensorType) else tuple(int(d) for d in arg.values)
        for arg in call.args
    ]


def plan_op(
    op_name: str, call: relax.Call, skip: Callable[[Point], bool] = lambda _: False
) -> OpPlan:
    """Walk ``op_name`` from ``call`` and build the module of every point TVM accepts (and
    ``skip`` does not set aside)."""
    function = python_op(op_name)
    builder = relax.BlockBuilder()
    points, shapes, refused = [], [], {}
    for point in walk(op_name, call):
        params, args = _args(call, point.dtype)
        kwargs = {k: list(v) if isinstance(v, tuple) else v for k, v in point.kwargs}
        try:
            # The struct-info inference runs when the call is normalized: a refusal there is
            # TVM saying the op does not take these arguments.
            expr = builder.normalize(function(*args, **kwargs))
        except REFUSALS as err:
            refused[point] = f"{type(err).__name__}: {_last_sentence(str(err))}"
            continue
        if skip(point):
            continue
        name = f"p{len(points)}"
        with builder.function(name, params):
            out = builder.emit(expr)
            builder.emit_func_output(out)
        points.append(point)
        shapes.append([(tuple(int(d) for d in p.ty.shape.values), str(p.ty.dtype)) for p in params])
    module = builder.get() if points else None
    return OpPlan(op_name, points, shapes, refused, module)


def _last_sentence(message: str) -> str:
    """TVM's message without the traceback and the operator's repr it quotes."""
    line = message.strip().splitlines()[-1] if message.strip() else ""
    return line.rpartition(") ")[2] if line.startswith("ir.Op(") else line


def function_prefix(op_name: str) -> str:
    """The prefix of an op's functions in a module of several ops (``combined_module``)."""
    return op_name.removeprefix("relax.").replace(".", "_") + "__"


def combined_module(plans: Iterable[OpPlan]) -> tvm.IRModule:
    """The functions of every plan's module in one IRModule (one build for several ops), each
    renamed ``function_prefix(op) + name``."""
    functions = {}
    for plan in plans:
        if plan.module is None:
            continue
        for gvar, func in plan.module.functions_items():
            name = function_prefix(plan.op) + gvar.name_hint
            functions[tvm.ir.GlobalVar(name)] = func.with_attr("global_symbol", name)
    return tvm.IRModule(functions)


def run_plan(
    plan: OpPlan, call: relax.Call, vm: Any, dev: tvm.runtime.Device, seed: int = 0,
    prefix: str = "", cache: dict[tuple[Point, int], Any] | None = None,
) -> list[str]:  # fmt: skip
    """Call every point's function in ``vm`` (named ``prefix`` + ``p<i>``) and compare with its
    reference by the kit's tolerance rule; the failures, one message per point (empty: all
    match). ``cache`` keeps each point's inputs and references for the next exec mode."""
    import torch

    from tvm_conformance import numerics

    reference = REFERENCES[plan.op]
    layout = reference_arguments(call)
    failures = []
    cache = {} if cache is None else cache
    for i, (point, shapes) in enumerate(zip(plan.points, plan.shapes, strict=True)):
        if (point, seed + i) not in cache:
            inputs = inputs_for(shapes, seed + i)
            for position in NON_NEGATIVE.get(plan.op, ()):
                inputs[position] = np.abs(inputs[position])  # a variance
            kwargs = dict(point.kwargs)

            def fn(*tensors: Any, kwargs: dict[str, Any] = kwargs) -> Any:
                it = iter(tensors)
                return reference(*[next(it) if a is None else a for a in layout], **kwargs)

            refs = numerics.references(fn, [torch.from_numpy(x) for x in inputs])
            cache[point, seed + i] = (inputs, refs)
        inputs, refs = cache[point, seed + i]
        result = vm[f"{prefix}p{i}"](*[tvm.runtime.tensor(x, dev) for x in inputs])
        outputs = [r.numpy() for r in (result if isinstance(result, tvm_ffi.Array) else [result])]
        try:
            numerics.check_outputs(outputs, refs, where=point.id)
        except AssertionError as err:
            failures.append(str(err))
    return failures


def inputs_for(shapes: list[tuple[tuple[int, ...], str]], seed: int) -> list[np.ndarray]:
    """numpy inputs of the given shapes and dtypes: normal floats, small ints (exact sums and
    products), random bools."""
    rng = np.random.default_rng(seed)
    out = []
    for shape, dtype in shapes:
        if dtype.startswith("float"):
            out.append(rng.standard_normal(shape).astype(dtype))
        elif dtype == "bool":
            out.append(rng.integers(0, 2, shape).astype(bool))
        else:
            out.append(rng.integers(-4, 5, shape).astype(dtype))
    return out


def _positive_axes(axis: Any, ndim: int) -> tuple[int, ...] | None:
    if axis is None:
        return None
    axes = axis if isinstance(axis, tuple | list) else (axis,)
    return tuple(a % ndim for a in axes)


def _exact(compute: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``compute`` on integer or bool tensors in float64 (torch's CPU kernels take few of
    them; the kit's small integers are exact there) and cast the result back."""

    def run(*tensors: Any, **kwargs: Any) -> Any:
        import torch

        dtype = tensors[0].dtype
        if dtype.is_floating_point:
            return compute(*tensors, **kwargs)
        out = compute(*[t.to(torch.float64) for t in tensors], **kwargs)
        return out != 0 if dtype == torch.bool else out.trunc().to(dtype)

    return run


def _reduction(name: str) -> Callable[..., Any]:
    """sum / mean in Relax's dtype rule: the result keeps the input's dtype (numpy's sum of an
    int32 or bool tensor is int64, its mean float64: cast back; an integer mean truncates)."""

    def compute(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        import torch

        dims = _positive_axes(axis, x.dim())
        if dims is None:
            out = getattr(torch, name)(x)
            return out.reshape([1] * x.dim()) if keepdims else out
        return getattr(torch, name)(x, dim=dims, keepdim=keepdims)

    return _exact(compute)


def _argmax(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    import torch

    work = x if x.is_floating_point() else x.to(torch.float64)
    if axis is None:
        out = torch.argmax(work.reshape(-1))
        return out.reshape([1] * x.dim()) if keepdims else out
    return torch.argmax(work, dim=axis, keepdim=keepdims)


def _matmul(x1: Any, x2: Any, out_dtype: Any = None) -> Any:
    import torch

    out = _exact(torch.matmul)(x1, x2)
    return out if out_dtype is None else out.to(getattr(torch, str(out_dtype)))


def _conv2d(data: Any, weight: Any, **kw: Any) -> Any:
    import torch

    if kw.get("data_layout", "NCHW") != "NCHW" or kw.get("kernel_layout", "OIHW") != "OIHW":
        raise NotImplementedError(f"layouts {kw}")
    pad = kw.get("padding", (0, 0))
    pad = [pad] * 4 if isinstance(pad, int) else list(pad)
    pad = pad * 2 if len(pad) == 2 else pad  # (top, left, bottom, right)

    def compute(d: Any, w: Any) -> Any:
        d = torch.nn.functional.pad(d, (pad[1], pad[3], pad[0], pad[2]))
        return torch.nn.functional.conv2d(
            d, w, stride=kw.get("strides", 1), dilation=kw.get("dilation", 1),
            groups=kw.get("groups", 1),
        )  # fmt: skip

    out = _exact(compute)(data, weight)
    dtype = kw.get("out_dtype")
    return out if dtype in (None, "") else out.to(getattr(torch, str(dtype)))


def _layer_norm(
    data: Any, gamma: Any, beta: Any, axes: Any, epsilon: float = 1e-5, center: bool = True,
    scale: bool = True,
) -> Any:  # fmt: skip
    import torch

    dims = _positive_axes(axes, data.dim())
    mean = data.mean(dim=dims, keepdim=True)
    var = ((data - mean) ** 2).mean(dim=dims, keepdim=True)
    out = (data - mean) / torch.sqrt(var + epsilon)
    return out * (gamma if scale else 1) + (beta if center else 0)


def _batch_norm(
    data: Any, gamma: Any, beta: Any, moving_mean: Any, moving_var: Any, axis: int,
    epsilon: float = 1e-5, center: bool = True, scale: bool = True, momentum: float = 0.1,
    training: bool = True,
) -> Any:  # fmt: skip
    """Relax's batch_norm: (output, new moving mean, new moving variance); training mode
    normalizes by the batch's (biased) statistics and moves the running ones by momentum."""
    import torch

    axis %= data.dim()
    dims = tuple(d for d in range(data.dim()) if d != axis)
    shape = [-1 if d == axis else 1 for d in range(data.dim())]
    if training:
        mean = data.mean(dim=dims)
        var = ((data - mean.reshape(shape)) ** 2).mean(dim=dims)
        new_mean = (1 - momentum) * moving_mean + momentum * mean
        new_var = (1 - momentum) * moving_var + momentum * var
    else:
        mean, var, new_mean, new_var = moving_mean, moving_var, moving_mean, moving_var
    out = (data - mean.reshape(shape)) / torch.sqrt(var.reshape(shape) + epsilon)
    out = out * (gamma.reshape(shape) if scale else 1) + (beta.reshape(shape) if center else 0)
    return out, new_mean, new_var


def _max_pool2d(data: Any, **kw: Any) -> Any:
    import torch

    if kw.get("layout", "NCHW") != "NCHW" or kw.get("out_layout") not in (None, "NCHW"):
        raise NotImplementedError(f"layouts {kw}")
    pad = kw.get("padding", (0, 0))
    pad = [pad] * 4 if isinstance(pad, int) else list(pad)
    pad = pad * 2 if len(pad) == 2 else pad  # (top, left, bottom, right)

    def compute(d: Any) -> Any:
        d = torch.nn.functional.pad(d, (pad[1], pad[3], pad[0], pad[2]), value=-torch.inf)
        return torch.nn.functional.max_pool2d(
            d, kw.get("pool_size", (1, 1)), stride=kw.get("strides", (1, 1)),
            dilation=kw.get("dilation", (1, 1)), ceil_mode=kw.get("ceil_mode", False),
        )  # fmt: skip

    return _exact(compute)(data)


def _torch(name: str, **fixed: Any) -> Callable[..., Any]:
    def run(*tensors: Any, **kwargs: Any) -> Any:
        import torch

        fn: Any = torch
        for part in name.split("."):
            fn = getattr(fn, part)
        return fn(*tensors, **fixed, **kwargs)

    return run


def _softmax(log: bool) -> Callable[..., Any]:
    def run(data: Any, axis: int = -1) -> Any:
        import torch

        return (torch.log_softmax if log else torch.softmax)(data, dim=axis)

    return run


def _permute_dims(x: Any, axes: Any = None) -> Any:
    return x.permute(*(axes if axes is not None else reversed(range(x.dim()))))


def _reshape(x: Any, shape: Any) -> Any:
    return x.reshape([int(d) for d in shape])


def _leakyrelu(data: Any, alpha: float = 0.01) -> Any:
    import torch

    return torch.nn.functional.leaky_relu(data, alpha)


# Tensor arguments that hold a variance (non-negative), by position among the op's tensors.
NON_NEGATIVE: Mapping[str, tuple[int, ...]] = {"relax.nn.batch_norm": (4,)}

# The reference of each walked op: a torch callable with Relax's semantics (the op's tensor
# arguments, then its keywords, as the Python op function takes them), evaluated in float64 by
# tvm_conformance.numerics. An op the frontends start to emit needs its entry here; the test
# of the walk names any op without one.
REFERENCES: Mapping[str, Callable[..., Any]] = {
    "relax.add": _exact(_torch("add")),
    "relax.multiply": _exact(_torch("mul")),
    "relax.matmul": _matmul,
    "relax.sum": _reduction("sum"),
    "relax.mean": _reduction("mean"),
    "relax.argmax": _argmax,
    "relax.nn.relu": _exact(_torch("relu")),
    "relax.nn.gelu": _torch("nn.functional.gelu"),
    "relax.nn.leakyrelu": _leakyrelu,
    "relax.nn.softmax": _softmax(log=False),
    "relax.nn.log_softmax": _softmax(log=True),
    "relax.nn.layer_norm": _layer_norm,
    "relax.nn.batch_norm": _batch_norm,
    "relax.nn.conv2d": _conv2d,
    "relax.nn.max_pool2d": _max_pool2d,
    "relax.permute_dims": _permute_dims,
    "relax.reshape": _reshape,
}
