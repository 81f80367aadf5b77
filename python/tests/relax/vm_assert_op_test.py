"""`R.assert_op` in the Relax VM: a true condition passes, a false one raises its message.

The argument forms come from `relax.op.assert_op`'s Python signature, walked: `format_args`
omitted, one expression, a list of two; `format` omitted and given. The condition is a bool
scalar the caller passes, as a tensor (`R.Tensor((), "bool")`) and as a `R.Prim("bool")`. The
expected message is the documented rule (`relax.op.base.relax_assert_op`): the format string
formatted with the arguments as numpy prints them; no format string: the arguments joined by
", "; neither: "Assertion Failed". Both exec modes; after each failure the same VM is called
again with a true condition and must still compute its result.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest
import tvm
from tvm import relax

from tvm_conformance.relax_vm import EXEC_MODES, build_vm

SHAPE = (2, 3)
CONDITIONS = {
    "tensor": relax.TensorType((), "bool"),
    "prim": tvm.ir.PrimType("bool"),
}


def _format_arg_forms() -> dict[str, int | None]:
    """`format_args` forms from the signature: omitted (None), a single Expr (1), a list (2)."""
    annotation = str(inspect.signature(relax.op.assert_op).parameters["format_args"].annotation)
    forms: dict[str, int | None] = {"omitted": None}
    if "Expr" in annotation.replace("list[", ""):
        forms["one"] = 1
    if "list" in annotation:
        forms["list"] = 2
    return forms


FORMAT_ARGS = _format_arg_forms()
FORMATS = {"format-omitted": None, "format-given": "check failed: "}


def _variants() -> list[tuple[str, str, str]]:
    return [(c, a, f) for c in CONDITIONS for a in FORMAT_ARGS for f in FORMATS]


def _module() -> tvm.IRModule:
    """One function per variant, `f<i>(c, x)`: assert_op(c, ...) then `x + x`; the format
    arguments are x, then c."""
    builder = relax.BlockBuilder()
    for i, (condition, format_args, fmt) in enumerate(_variants()):
        n_args, prefix = FORMAT_ARGS[format_args], FORMATS[fmt]
        c = relax.Var("c", CONDITIONS[condition])
        x = relax.Var("x", relax.TensorType(SHAPE, "float32"))
        kwargs: dict[str, Any] = {}
        if n_args is not None:
            kwargs["format_args"] = x if n_args == 1 else [x, c][:n_args]
        if prefix is not None:
            kwargs["format"] = prefix + " ".join("{}" for _ in range(n_args or 0))
        with builder.function(f"f{i}", [c, x], pure=False):
            builder.emit(relax.op.assert_op(c, **kwargs))
            y = builder.emit(relax.op.add(x, x))
            builder.emit_func_output(y)
    return builder.get()


_VMS: dict[tuple[str, str], Any] = {}


def _vm(target: str, dev: tvm.runtime.Device, exec_mode: str) -> Any:
    """One VM per exec mode for every variant: each case's failures leave it usable."""
    if (target, exec_mode) not in _VMS:
        _VMS[target, exec_mode] = build_vm(_module(), target, dev, exec_mode)
    return _VMS[target, exec_mode]


def _condition(kind: str, value: bool, dev: tvm.runtime.Device) -> Any:
    return tvm.runtime.tensor(np.array(value), dev) if kind == "tensor" else value


def _expected_message(x: np.ndarray, n_args: int | None, fmt: str | None) -> str:
    """The documented message of a false assertion (numpy renders the tensors)."""
    shown = [str(v) for v in [x, np.array(False)][: n_args or 0]]
    if fmt is not None:
        return fmt + " ".join(shown)
    return ", ".join(shown) if shown else "Assertion Failed"


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
@pytest.mark.parametrize("fmt", list(FORMATS), ids=list(FORMATS))
@pytest.mark.parametrize("format_args", list(FORMAT_ARGS), ids=list(FORMAT_ARGS))
@pytest.mark.parametrize("condition", list(CONDITIONS))
def test_false_condition_raises_its_message_and_true_passes(
    condition: str, format_args: str, fmt: str, exec_mode: str, target: str,
    dev: tvm.runtime.Device,
) -> None:  # fmt: skip
    n_args, prefix = FORMAT_ARGS[format_args], FORMATS[fmt]
    vm = _vm(target, dev, exec_mode)
    main = vm[f"f{_variants().index((condition, format_args, fmt))}"]
    x = np.random.default_rng(0).standard_normal(SHAPE).astype("float32")
    want = _expected_message(x, n_args, prefix)
    for _ in range(2):  # a failed assertion leaves the VM usable: call it twice, both ways
        with pytest.raises(AssertionError) as info:
            main(_condition(condition, False, dev), tvm.runtime.tensor(x, dev))
        assert str(info.value) == want
        out = main(_condition(condition, True, dev), tvm.runtime.tensor(x, dev))
        # x + x rounds nothing (a doubling is exact), so the result equals numpy's exactly.
        np.testing.assert_array_equal(out.numpy(), x + x, "after a failed assert", strict=True)
