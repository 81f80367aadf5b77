"""Every argument of the modules and functions the frontend tests use, one at a time.

One table per op: each constructor argument of the module (and each argument of its functional
form) has a row, either the non-default values to try or why none applies (device, dtype). A
case builds the op from a non-trivial base with one argument changed, seeds its parameters and
runs it two ways: as a module inside a model (an fx ``call_module`` node: the module is a child
of an ``nn.Sequential``, not the traced root, whose translation is another code path) and as
its functional call. Each goes through ``from_fx``, ``from_exported_program`` and the
undecomposed exported-program path, and is compared with PyTorch by ``verify_model`` (its
tolerance rule: docs/model_import.md). Inputs make a dropped argument show: a border where
``count_include_pad`` changes the divisor, sizes where ``ceil_mode`` adds a window, a low
variance where ``eps`` matters, values beyond every clipping bound.

``test_every_argument_has_a_row`` walks ``inspect.signature`` of each module class and function
and fails on an argument without a row, so an argument PyTorch adds is noticed.

Where TVM deviates (docs/deviations.md), the case checks that TVM's output is exactly the
recorded wrong one (the argument read as its default, or the recorded import error) before
raising the deviation's observed type; any other wrong output is a plain failure.
"""

from __future__ import annotations

import fnmatch
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
import torch
import tvm
from tvm import relax

from tvm_conformance import deviations, numerics, observed
from tvm_conformance.model_import import bind_weights, import_model, seed_parameters, verify_model
from tvm_conformance.testing import assert_on_device

F = torch.nn.functional
nn = torch.nn


@dataclass(frozen=True)
class NotApplicable:
    """A row that tries no value, with the reason."""

    why: str


@dataclass(frozen=True)
class Follows:
    """A functional argument that the module's constructor row(s) drive (the call passes the
    module's attribute or parameter)."""

    rows: tuple[str, ...]


DEVICE = NotApplicable("placement: the case runs the model on the target's device")
DTYPE = NotApplicable("parameter dtype: float32 throughout (numerics_test covers dtypes)")
INPUT = NotApplicable("the input tensor itself")
STACKLEVEL = NotApplicable("only the stack level of a deprecation warning")


@dataclass(frozen=True)
class Table:
    """One op's arguments and the values tried for each."""

    functional: Callable[..., Any]  # the function whose signature is walked
    # (module or None, input, functional-only arguments) -> the functional call's output
    call: Callable[[nn.Module | None, torch.Tensor, dict[str, Any]], torch.Tensor]
    functional_rows: dict[str, tuple[Any, ...] | Follows | NotApplicable]
    make_input: Callable[[nn.Module | None, dict[str, Any]], torch.Tensor]
    module: type[nn.Module] | None = None
    base: dict[str, Any] = field(default_factory=dict)  # constructor arguments of the base
    rows: dict[str, tuple[Any, ...] | NotApplicable] = field(default_factory=dict)
    functional_base: dict[str, Any] = field(default_factory=dict)


def _randn(*shape: int, scale: float = 1.0, shift: float = 0.0) -> torch.Tensor:
    return torch.randn(*shape) * scale + shift


def _ramp(*_: Any) -> torch.Tensor:
    """Values from -5 to 5: beyond every clipping bound tried, both signs for every slope."""
    return torch.linspace(-5.0, 5.0, 48).reshape(4, 12)


TABLES: dict[str, Table] = {
    "Conv2d": Table(
        module=nn.Conv2d,
        base={"in_channels": 4, "out_channels": 6, "kernel_size": 3, "padding": 1},
        rows={
            "in_channels": (2,),
            "out_channels": (2,),
            "kernel_size": ((2, 3),),
            "stride": (2, (1, 2)),
            "padding": (2, "same"),
            "dilation": (2,),
            "groups": (2,),
            "bias": (False,),
            "padding_mode": ("reflect", "circular"),
            "device": DEVICE,
            "dtype": DTYPE,
        },
        functional=F.conv2d,
        call=lambda m, x, a: F.conv2d(
            x, m.weight, m.bias, m.stride, m.padding, m.dilation, m.groups
        ),
        functional_rows={
            "input": INPUT,
            "weight": Follows(("in_channels", "out_channels", "kernel_size", "groups")),
            "bias": Follows(("bias",)),
            "stride": Follows(("stride",)),
            "padding": Follows(("padding",)),
            "dilation": Follows(("dilation",)),
            "groups": Follows(("groups",)),
        },
        make_input=lambda m, a: _randn(1, m.in_channels, 7, 7),
    ),
    "LayerNorm": Table(
        module=nn.LayerNorm,
        base={"normalized_shape": 8},
        rows={
            "normalized_shape": ((4, 8),),
            "eps": (0.1,),
            "elementwise_affine": (False,),
            "bias": (False,),
            "device": DEVICE,
            "dtype": DTYPE,
        },
        functional=F.layer_norm,
        call=lambda m, x, a: F.layer_norm(x, m.normalized_shape, m.weight, m.bias, m.eps),
        functional_rows={
            "input": INPUT,
            "normalized_shape": Follows(("normalized_shape",)),
            "weight": Follows(("elementwise_affine",)),
            "bias": Follows(("bias", "elementwise_affine")),
            "eps": Follows(("eps",)),
        },
        # A low variance: eps 0.1 against 1e-5 shows.
        make_input=lambda m, a: _randn(3, *m.normalized_shape, scale=0.05),
    ),
    "BatchNorm2d": Table(
        module=nn.BatchNorm2d,
        base={"num_features": 4},
        rows={
            "num_features": (2,),
            "eps": (0.5,),
            # Eval mode ignores it; a translator must too.
            "momentum": (0.5, None),
            "affine": (False,),
            "bias": (False,),
            # No running statistics: eval mode normalizes by the batch's.
            "track_running_stats": (False,),
            "device": DEVICE,
            "dtype": DTYPE,
        },
        functional=F.batch_norm,
        call=lambda m, x, a: F.batch_norm(
            x,
            m.running_mean,
            m.running_var,
            m.weight,
            m.bias,
            m.running_mean is None,
            m.momentum or 0.0,
            m.eps,
        ),
        functional_rows={
            "input": INPUT,
            "running_mean": Follows(("track_running_stats",)),
            "running_var": Follows(("track_running_stats",)),
            "weight": Follows(("affine",)),
            "bias": Follows(("affine", "bias")),
            "training": Follows(("track_running_stats",)),
            "momentum": Follows(("momentum",)),
            "eps": Follows(("eps",)),
        },
        make_input=lambda m, a: _randn(2, m.num_features, 4, 4),
    ),
    "ReLU": Table(
        module=nn.ReLU,
        rows={"inplace": (True,)},
        functional=F.relu,
        call=lambda m, x, a: F.relu(x, m.inplace),
        functional_rows={"input": INPUT, "inplace": Follows(("inplace",))},
        make_input=_ramp,
    ),
    "GELU": Table(
        module=nn.GELU,
        rows={"approximate": ("tanh",)},
        functional=F.gelu,
        call=lambda m, x, a: F.gelu(x, approximate=m.approximate),
        functional_rows={"input": INPUT, "approximate": Follows(("approximate",))},
        make_input=_ramp,
    ),
    "LeakyReLU": Table(
        module=nn.LeakyReLU,
        base={"negative_slope": 0.2},
        rows={"negative_slope": (0.5,), "inplace": (True,)},
        functional=F.leaky_relu,
        call=lambda m, x, a: F.leaky_relu(x, m.negative_slope, m.inplace),
        functional_rows={
            "input": INPUT,
            "negative_slope": Follows(("negative_slope",)),
            "inplace": Follows(("inplace",)),
        },
        make_input=_ramp,
    ),
    "Softmax": Table(
        module=nn.Softmax,
        base={"dim": 1},
        rows={"dim": (0, -1)},
        functional=F.softmax,
        call=lambda m, x, a: F.softmax(x, m.dim, 3, a.get("dtype")),
        functional_rows={
            "input": INPUT,
            "dim": Follows(("dim",)),
            "_stacklevel": STACKLEVEL,
            "dtype": (torch.float64,),
        },
        make_input=lambda m, a: _randn(3, 4, 5, scale=3.0),
    ),
    "LogSoftmax": Table(
        module=nn.LogSoftmax,
        base={"dim": 1},
        rows={"dim": (0, -1)},
        functional=F.log_softmax,
        call=lambda m, x, a: F.log_softmax(x, m.dim, 3, a.get("dtype")),
        functional_rows={
            "input": INPUT,
            "dim": Follows(("dim",)),
            "_stacklevel": STACKLEVEL,
            "dtype": (torch.float64,),
        },
        make_input=lambda m, a: _randn(3, 4, 5, scale=3.0),
    ),
    "Linear": Table(
        module=nn.Linear,
        base={"in_features": 8, "out_features": 4},
        rows={
            "in_features": (5,),
            "out_features": (2,),
            "bias": (False,),
            "device": DEVICE,
            "dtype": DTYPE,
        },
        functional=F.linear,
        call=lambda m, x, a: F.linear(x, m.weight, m.bias),
        functional_rows={
            "input": INPUT,
            "weight": Follows(("in_features", "out_features")),
            "bias": Follows(("bias",)),
        },
        make_input=lambda m, a: _randn(3, m.in_features),
    ),
    "MaxPool2d": Table(
        module=nn.MaxPool2d,
        base={"kernel_size": 3, "stride": 2, "padding": 1},
        rows={
            "kernel_size": (2, (2, 3)),
            "stride": (1,),
            "padding": (0,),
            "dilation": (2,),
            "return_indices": NotApplicable(
                "the indices output is an op of its own (aten.max_pool2d_with_indices' second "
                "result), outside this table's one-output comparison"
            ),
            # 6x6, kernel 3, stride 2, padding 1: 3x3 floored, 4x4 with ceil_mode.
            "ceil_mode": (True,),
        },
        functional=F.max_pool2d,
        call=lambda m, x, a: F.max_pool2d(
            x, m.kernel_size, m.stride, m.padding, m.dilation, m.ceil_mode
        ),
        functional_rows={
            "input": INPUT,
            "kernel_size": Follows(("kernel_size",)),
            "stride": Follows(("stride",)),
            "padding": Follows(("padding",)),
            "dilation": Follows(("dilation",)),
            "ceil_mode": Follows(("ceil_mode",)),
            "return_indices": NotApplicable("as the module's return_indices row"),
        },
        make_input=lambda m, a: _randn(1, 2, 6, 6),
    ),
    "AvgPool2d": Table(
        module=nn.AvgPool2d,
        base={"kernel_size": 3, "stride": 2, "padding": 1},
        rows={
            "kernel_size": (2,),
            "stride": (1,),
            "padding": (0,),
            # 6x6, kernel 3, stride 2, padding 1: 3x3 floored, 4x4 with ceil_mode.
            "ceil_mode": (True,),
            # Padding 1 puts a border in every edge window: the divisor changes.
            "count_include_pad": (False,),
            "divisor_override": (2,),
        },
        functional=F.avg_pool2d,
        call=lambda m, x, a: F.avg_pool2d(
            x,
            m.kernel_size,
            m.stride,
            m.padding,
            m.ceil_mode,
            m.count_include_pad,
            m.divisor_override,
        ),
        functional_rows={
            "input": INPUT,
            "kernel_size": Follows(("kernel_size",)),
            "stride": Follows(("stride",)),
            "padding": Follows(("padding",)),
            "ceil_mode": Follows(("ceil_mode",)),
            "count_include_pad": Follows(("count_include_pad",)),
            "divisor_override": Follows(("divisor_override",)),
        },
        # Away from zero: a window's sum never nearly cancels, so the divisor shows.
        make_input=lambda m, a: _randn(1, 2, 6, 6, shift=2.0),
    ),
    "Hardtanh": Table(
        module=nn.Hardtanh,
        base={"min_val": -2.0, "max_val": 3.0},
        rows={
            "min_val": (-0.5,),
            "max_val": (0.5,),
            "inplace": (True,),
            "min_value": NotApplicable("deprecated alias of min_val (a warning, the same value)"),
            "max_value": NotApplicable("deprecated alias of max_val (a warning, the same value)"),
        },
        functional=F.hardtanh,
        call=lambda m, x, a: F.hardtanh(x, m.min_val, m.max_val, m.inplace),
        functional_rows={
            "input": INPUT,
            "min_val": Follows(("min_val",)),
            "max_val": Follows(("max_val",)),
            "inplace": Follows(("inplace",)),
        },
        make_input=_ramp,
    ),
    "argmax": Table(
        functional=torch.argmax,
        functional_base={"dim": 1, "keepdim": False},
        call=lambda m, x, a: torch.argmax(x, a["dim"], a["keepdim"]),
        functional_rows={"input": INPUT, "dim": (0, -1), "keepdim": (True,)},
        make_input=lambda m, a: _randn(3, 7, 5),
    ),
    "mean": Table(
        functional=torch.mean,
        functional_base={"dim": 1, "keepdim": False, "dtype": None},
        call=lambda m, x, a: torch.mean(x, a["dim"], a["keepdim"], dtype=a["dtype"]),
        functional_rows={
            "input": INPUT,
            "dim": (0, (0, 2)),
            "keepdim": (True,),
            "dtype": (torch.float64,),
            "out": NotApplicable("an output buffer: a traced model returns its result"),
        },
        make_input=lambda m, a: _randn(3, 7, 5),
    ),
}

# The module classes and functions the other frontend tests use (op_translation_test,
# functional_keywords_test) and those of issue 44; test_tables_cover_the_frontend_tests checks
# this list against those files' calls. torch.softmax and torch.log_softmax reach the same ATen
# ops as F.softmax / F.log_softmax (their tables).
COVERED_CALLS = {
    "torch.nn.LayerNorm": "LayerNorm",
    "torch.nn.BatchNorm2d": "BatchNorm2d",
    "torch.nn.Conv2d": "Conv2d",
    "torch.nn.ReLU": "ReLU",
    "torch.nn.GELU": "GELU",
    "torch.nn.LeakyReLU": "LeakyReLU",
    "torch.nn.Linear": "Linear",
    "torch.softmax": "Softmax",
    "torch.log_softmax": "LogSoftmax",
    "torch.argmax": "argmax",
    "torch.mean": "mean",
    "functional.layer_norm": "LayerNorm",
    "functional.conv2d": "Conv2d",
    "functional.linear": "Linear",
    "F.conv2d": "Conv2d",
    "F.linear": "Linear",
    "F.layer_norm": "LayerNorm",
    "F.max_pool2d": "MaxPool2d",
    "F.softmax": "Softmax",
    "F.leaky_relu": "LeakyReLU",
}

FORMS = ("module", "functional")
FRONTENDS = ("fx", "exported_program", "exported_program_undecomposed")


@dataclass(frozen=True)
class Case:
    """One op with one argument changed from its base, in one form, through one frontend."""

    table: str
    form: str
    frontend: str
    argument: str  # "base" for the base itself
    value: Any = None

    @property
    def id(self) -> str:
        changed = "base" if self.argument == "base" else f"{self.argument}={_show(self.value)}"
        return f"{self.table}-{self.form}-{self.frontend}-{changed}"


def _show(value: Any) -> str:
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    return re.sub(r"\s+", "", repr(value)).strip("'")


# Constructor arguments newer than some torch a GPU runner brings (it runs the _cuda cases on
# its own CUDA torch): on a torch without the argument its row makes no case. Seen on the H100
# runner of 2026-11-27 (torch 2.11.0+cu130): `nn.BatchNorm2d(4, bias=False)` raised "TypeError:
# _BatchNorm.__init__() got an unexpected keyword argument 'bias'"; the pinned 2.13.0 has it.
NEWER_ARGUMENTS = {("BatchNorm2d", "bias")}


def _in_this_torch(table: Table, name: str) -> bool:
    """Whether constructor row ``name`` is an argument of this torch's module (a row listed in
    NEWER_ARGUMENTS may not be; test_every_argument_has_a_row holds every other row to it)."""
    if table.module is None or (table.module.__name__, name) not in NEWER_ARGUMENTS:
        return True
    return name in inspect.signature(table.module).parameters


def _variants(table: Table, form: str) -> list[tuple[str, Any]]:
    """(argument, value) changes tried for ``form``: the base, then one argument at a time.

    A constructor row is tried in the functional form only where a functional argument follows
    it (``padding_mode`` and ``inplace`` have none: the functional call is the base's)."""
    variants: list[tuple[str, Any]] = [("base", None)]
    rows = {name: values for name, values in table.rows.items() if _in_this_torch(table, name)}
    if form == "module":
        for name, values in rows.items():
            if isinstance(values, tuple):
                variants += [(name, v) for v in values]
        return variants
    followed = {
        row
        for spec in table.functional_rows.values()
        if isinstance(spec, Follows)
        for row in spec.rows
    }
    for name, values in rows.items():
        if isinstance(values, tuple) and name in followed:
            variants += [(name, v) for v in values]
    for name, spec in table.functional_rows.items():
        if isinstance(spec, tuple):
            variants += [(f"functional:{name}", v) for v in spec]
    return variants


# Paths that would show on every row only what is recorded elsewhere: from_fx's call_module and
# the undecomposed path translate eval-mode BatchNorm with batch statistics (deviations
# frontend-fx-batchnorm-batch-stats, frontend-ep-batchnorm-default-batch-stats, checked by
# normalization_test), and from_fx has no translator for F.batch_norm at all ("Unsupported
# function types ['batch_norm']"), which is no argument's translation. BatchNorm2d's arguments
# are checked through the decomposed exported-program path, in both forms.
LEFT_OUT = {
    ("BatchNorm2d", "functional", "fx"),
    ("BatchNorm2d", "module", "fx"),
    ("BatchNorm2d", "module", "exported_program_undecomposed"),
    ("BatchNorm2d", "functional", "exported_program_undecomposed"),
}


def _cases() -> list[Case]:
    cases = []
    for name, table in TABLES.items():
        for form in FORMS:
            if form == "module" and table.module is None:
                continue
            for frontend in FRONTENDS:
                if (name, form, frontend) in LEFT_OUT:
                    continue
                cases += [Case(name, form, frontend, a, v) for a, v in _variants(table, form)]
    return cases


CASES = {case.id: case for case in _cases()}


class Functional(nn.Module):
    """The functional form: calls the function with the (child) module's attributes and
    parameters; the child is never called, so fx records a call_function node."""

    def __init__(self, table: Table, op: nn.Module | None, arguments: dict[str, Any]) -> None:
        super().__init__()
        self.table = table
        self.op = op
        self.arguments = arguments

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.table.call(self.op, x, self.arguments)


def build(case: Case, overrides: dict[str, Any] | None = None) -> tuple[nn.Module, torch.Tensor]:
    """The case's model (eval mode, seeded parameters) and its input; ``overrides`` changes
    arguments further (``functional:<name>`` for an argument of the call only)."""
    table = TABLES[case.table]
    kwargs = dict(table.base)
    arguments = dict(table.functional_base)
    changes = {} if case.argument == "base" else {case.argument: case.value}
    for name, value in {**changes, **(overrides or {})}.items():
        if name.startswith("functional:"):
            arguments[name.removeprefix("functional:")] = value
        else:
            kwargs[name] = value
    op = table.module(**kwargs) if table.module is not None else None
    if case.form == "module":
        model: nn.Module = nn.Sequential(op)
    else:
        model = Functional(table, op, arguments)
    seed_parameters(model, seed=11).eval()
    torch.manual_seed(13)
    return model, table.make_input(op, arguments)


# ------------------------------------------------------------------------------------------
# Deviations: which cases show one, and how TVM's output is told from a worse failure.


@dataclass(frozen=True)
class ReadAsDefault:
    """TVM's output is exactly the case's with these arguments at PyTorch's defaults (a
    constructor argument, or ``functional:<name>`` for an argument of the call only)."""

    names: tuple[str, ...]


@dataclass(frozen=True)
class Raises:
    """Importing raises exactly this exception class with a message matching ``message``."""

    exc_type: type[BaseException]
    message: str


@dataclass(frozen=True)
class KeywordsDropped:
    """from_fx's output is exactly the traced call's with every keyword argument removed."""


How = ReadAsDefault | Raises | KeywordsDropped

_LAYER_NORM_NO_BIAS = Raises(KeyError, "None")
_CONV_SAME_FX = Raises(
    TypeError,
    r"Mismatched type on argument #3 when calling: `relax\.op\.nn\.conv2d\(.*"
    r"Expected `Array<int>` but got `ffi\.SmallStr`",
)
_CONV_SAME_EP = Raises(AssertionError, re.escape("Unsupported function types ['conv2d.padding']"))

# (case id pattern, fnmatch style; deviation id; how TVM's output deviates), checked on TVM
# 0.27 (and 0.26: docs/deviations.md). Each pattern names the cases as narrowly as they fail.
DEVIATIONS_SEEN: tuple[tuple[str, str, How], ...] = (
    (
        "AvgPool2d-module-fx-count_include_pad=False",
        "frontend-fx-module-avgpool2d-count-include-pad-ignored",
        ReadAsDefault(("count_include_pad",)),
    ),
    (
        "AvgPool2d-*-divisor_override=2",
        "frontend-avgpool2d-divisor-override-ignored",
        ReadAsDefault(("divisor_override",)),
    ),
    (
        "Hardtanh-module-fx-*",
        "frontend-fx-module-hardtanh-bounds-ignored",
        ReadAsDefault(("min_val", "max_val")),
    ),
    (
        "GELU-module-fx-approximate=tanh",
        "frontend-fx-module-gelu-approximate-ignored",
        ReadAsDefault(("approximate",)),
    ),
    (
        "Conv2d-module-fx-padding_mode=*",
        "frontend-fx-module-conv2d-padding-mode-ignored",
        ReadAsDefault(("padding_mode",)),
    ),
    (
        "*Softmax-functional-fx-functional:dtype=float64",
        "frontend-softmax-dtype-ignored",
        ReadAsDefault(("functional:dtype",)),
    ),
    (
        "*Softmax-functional-exported_program_undecomposed-functional:dtype=float64",
        "frontend-softmax-dtype-ignored",
        ReadAsDefault(("functional:dtype",)),
    ),
    (
        "LayerNorm-module-fx-elementwise_affine=False",
        "frontend-fx-module-layernorm-no-affine-typeerror",
        Raises(
            TypeError,
            re.escape("ones_like(): argument 'input' (position 1) must be Tensor, not tuple"),
        ),
    ),
    ("LayerNorm-module-fx-bias=False", "frontend-layernorm-no-bias-keyerror", _LAYER_NORM_NO_BIAS),
    (
        "LayerNorm-*-exported_program_undecomposed-elementwise_affine=False",
        "frontend-layernorm-no-bias-keyerror",
        _LAYER_NORM_NO_BIAS,
    ),
    (
        "LayerNorm-*-exported_program_undecomposed-bias=False",
        "frontend-layernorm-no-bias-keyerror",
        _LAYER_NORM_NO_BIAS,
    ),
    ("Conv2d-*-fx-padding=same", "frontend-conv2d-padding-same-fails", _CONV_SAME_FX),
    (
        "Conv2d-*-exported_program_undecomposed-padding=same",
        "frontend-conv2d-padding-same-fails",
        _CONV_SAME_EP,
    ),
    # TVM 0.26 only (the deviation's version spec; 0.27 reads it).
    (
        "mean-functional-*-functional:dtype=float64",
        "frontend-mean-dtype-ignored",
        ReadAsDefault(("functional:dtype",)),
    ),
    # F.layer_norm and F.max_pool2d: fx records their arguments as keywords (the deviation of
    # functional_keywords_test); ceil_mode is one of them (issue 44: 2x2 for 3x3 on 5x5).
    # Without affine parameters only eps is a keyword, at its default: that case passes.
    *(
        (
            f"LayerNorm-functional-fx-{changed}",
            "frontend-fx-functional-keywords-ignored",
            KeywordsDropped(),
        )
        for changed in ("base", "normalized_shape=*", "eps=*", "bias=False")
    ),
    ("MaxPool2d-functional-fx-*", "frontend-fx-functional-keywords-ignored", KeywordsDropped()),
)


def deviation_of(case_id: str) -> tuple[str, How] | None:
    """The deviation ``case_id`` shows with the installed TVM and how, or None (then the case
    must pass ``verify_model``)."""
    for pattern, dev_id, how in DEVIATIONS_SEEN:
        if fnmatch.fnmatchcase(case_id, pattern) and deviations.applies(dev_id):
            return dev_id, how
    return None


def _mark(case_id: str) -> Any:
    seen = deviation_of(case_id)  # its xfail mark
    return pytest.param(case_id, marks=deviations.xfail(seen[0])) if seen else case_id


def _run(imported: Any, x: torch.Tensor, target: str, dev: tvm.runtime.Device) -> np.ndarray:
    vm = relax.VirtualMachine(relax.build(bind_weights(imported), tvm.target.Target(target)), dev)
    output = vm["main"](tvm.runtime.tensor(x.numpy(), dev))
    assert_on_device(output, dev)
    if not isinstance(output, tvm.runtime.Tensor):
        (output,) = output
    return output.numpy()


def _defaults(case: Case, names: tuple[str, ...]) -> dict[str, Any]:
    table = TABLES[case.table]
    module_defaults = inspect.signature(table.module).parameters if table.module else {}
    values = {}
    for name in names:
        if name.startswith("functional:"):
            values[name] = None  # dtype: the only call-only argument read as default here
        else:
            values[name] = module_defaults[name].default
    return values


def _without_keywords(model: nn.Module) -> torch.fx.GraphModule:
    """The model as fx traced it, with every call's keyword arguments removed."""
    graph_module = torch.fx.symbolic_trace(model)
    for node in graph_module.graph.nodes:
        if node.op == "call_function":
            node.kwargs = {}
    graph_module.recompile()
    return graph_module


@pytest.mark.parametrize("case_id", [_mark(c) for c in CASES])
def test_argument_is_translated(case_id: str, target: str, dev: tvm.runtime.Device) -> None:
    case = CASES[case_id]
    model, x = build(case)
    seen = deviation_of(case_id)
    if seen is None:
        verify_model(
            model,
            [x],
            expected_ops=[],
            frontend=case.frontend,
            # Arguments are the frontend's business: one exec mode (op_translation_test and
            # the others run both).
            exec_modes=("bytecode",),
            target=target,
            dev=dev,
        )
        return
    _, how = seen
    want = numerics.references(model, [x.clone()])
    if isinstance(how, Raises):
        with observed.recorded(how.exc_type, how.message, observed.TranslatorFailed):
            imported = import_model(model, [x], frontend=case.frontend)
    else:
        imported = import_model(model, [x], frontend=case.frontend)
    got = _run(imported, x, target, dev)
    if numerics.matches([got], want):
        return
    if isinstance(how, ReadAsDefault):
        as_read, _ = build(case, _defaults(case, how.names))
        read = numerics.references(as_read, [x.clone()])
        if numerics.matches([got], read) and numerics.distinguishable(read, want):
            raise observed.ArgumentReadAsDefault(
                f"{case_id}: the output is the op's with {', '.join(how.names)} at the default"
            )
    if isinstance(how, KeywordsDropped):
        read = numerics.references(_without_keywords(model), [x.clone()])
        if numerics.matches([got], read) and numerics.distinguishable(read, want):
            raise observed.KeywordArgumentsIgnored(
                f"{case_id}: from_fx's output is the call's without its keyword arguments"
            )
    numerics.check_outputs([got], want, where=case_id)


# ------------------------------------------------------------------------------------------
# The tables cover every argument.


def _parameter_names(fn: Callable[..., Any]) -> list[str]:
    """Parameter names of ``fn``: its signature, or for a builtin the overloads its docstring
    lists (``conv2d(input, weight, bias=None, ...) -> Tensor``)."""
    if getattr(fn, "__name__", "") == "max_pool2d":
        fn = F._max_pool2d  # boolean_dispatch: the wrapper takes (*args, **kwargs)
    try:
        return [p for p in inspect.signature(fn).parameters if p != "self"]
    except ValueError:
        pass
    names: list[str] = []
    overload = rf"^\s*(?:\.\. function:: )?{fn.__name__}\((.*)\)\s*->"
    for match in re.finditer(overload, fn.__doc__ or "", re.M):
        for part in match[1].split(","):
            name = part.split("=")[0].strip()
            if name and name != "*" and name not in names:
                names.append(name)
    if not names:
        raise AssertionError(f"no signature and no overload in the docstring of {fn}")
    return names


@pytest.mark.parametrize("table_name", list(TABLES))
def test_every_argument_has_a_row(table_name: str) -> None:
    table = TABLES[table_name]
    problems = []
    if table.module is not None:
        wanted = [p for p in inspect.signature(table.module).parameters if p != "self"]
        problems += [
            f"{table.module.__name__}({p}=...) has no row" for p in wanted if p not in table.rows
        ]
        problems += [
            f"row {r!r} is no argument of {table.module.__name__}"
            for r in table.rows
            if r not in wanted and (table.module.__name__, r) not in NEWER_ARGUMENTS
        ]
    wanted = _parameter_names(table.functional)
    name = f"{table.functional.__module__}.{table.functional.__name__}"
    problems += [f"{name}({p}=...) has no row" for p in wanted if p not in table.functional_rows]
    problems += [
        f"functional row {r!r} is no argument of {name}"
        for r in table.functional_rows
        if r not in wanted
    ]
    for arg, spec in table.functional_rows.items():
        if isinstance(spec, Follows):
            problems += [
                f"{name}({arg}) follows {r!r}, no constructor row"
                for r in spec.rows
                if r not in table.rows
            ]
    for rows in (table.rows, table.functional_rows):
        for arg, spec in rows.items():
            if isinstance(spec, tuple) and not spec:
                problems.append(f"{table_name}: row {arg!r} tries no value and says not why")
            if isinstance(spec, NotApplicable) and not spec.why:
                problems.append(f"{table_name}: row {arg!r} is not applicable without a reason")
    assert not problems, "; ".join(problems)


def test_tables_cover_the_frontend_tests() -> None:
    """Every module class and function the other frontend tests call has a table."""
    from pathlib import Path

    here = Path(__file__).resolve().parent
    called: set[str] = set()
    for name in ("op_translation_test.py", "functional_keywords_test.py"):
        text = (here / name).read_text()
        called |= set(
            re.findall(r"\b((?:torch\.nn|torch|functional|F)\.[A-Za-z_][A-Za-z0-9_]*)\(", text)
        )
    ignored = {
        "torch.randn",
        "torch.linspace",
        "torch.manual_seed",
        "torch.empty",
        "torch.nn.Parameter",
        "torch.fx.symbolic_trace",
    }
    missing = sorted(called - ignored - set(COVERED_CALLS))
    assert not missing, f"calls with no table: {missing}"
    assert set(COVERED_CALLS.values()) <= set(TABLES)
