"""Reductions of boolean masks and integer tensors, in the Relax VM (both exec modes) and in TE.

Float sums are what the model tests reduce; these are the other inputs. Relax's statistical
operators (`R.sum`, `R.prod`, `R.max`, `R.min`) keep the input's dtype (TVM's rule, from the
operator's struct-info inference): numpy's `sum` / `prod` promote bool and int32 to int64, so
the expected value is numpy's result cast back to the input's dtype (a bool sum is "any", a bool
product "all"); numpy's `max` / `min` keep the dtype, as TVM does. `topi.all` / `topi.any`
give bool, like numpy's. A max / min of a bool mask is the deviation relax-bool-max-min-refused.
"""

import numpy as np
import pytest
import tvm
from tvm import relax, te, topi
from tvm.script import relax as R

from tvm_conformance import deviations
from tvm_conformance.observed import BoolReductionRefused, recorded
from tvm_conformance.relax_vm import EXEC_MODES, build_vm

DATA = {
    "bool": np.array(
        [[True, False, True, False], [False, False, False, False], [True, True, True, True]]
    ),
    "int32": np.array([[5, -3, 2, 1], [-7, 4, 9, -1], [2**20, 3, -(2**20), 2]], "int32"),
    "int64": np.array([[2**40, -5, 3, 1], [-(2**33), 7, 0, 2], [1, 1, 1, -1]], "int64"),
}
# (axis, keepdims) of each case: the whole tensor, each axis, kept or dropped.
AXES = [(None, False), ([0], False), ([-1], True)]


def _reduce(op: str, dtype: str, shape: tuple[int, ...], axis: list[int] | None, keep: bool):
    """A Relax module whose `main(x)` is `R.<op>(x, axis, keepdims)`."""
    builder = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor(shape, dtype))
    with builder.function("main", [x]):
        y = builder.emit(getattr(relax.op, op)(x, axis=axis, keepdims=keep))
        builder.emit_func_output(y)
    return builder.get()


def _numpy(op: str, data: np.ndarray, axis: list[int] | None, keep: bool) -> np.ndarray:
    """numpy's reduction, in the input's dtype (TVM's rule for Relax reductions)."""
    want = getattr(np, op)(data, axis=None if axis is None else tuple(axis), keepdims=keep)
    return np.asarray(want).astype(data.dtype)


def _run(vm: object, data: np.ndarray, dev: tvm.runtime.Device) -> np.ndarray:
    out = vm["main"](tvm.runtime.tensor(data, dev))
    assert isinstance(out, tvm.runtime.Tensor) and out.device == dev
    return out.numpy()


def _assert_same(out: np.ndarray, want: np.ndarray) -> None:
    assert (out.shape, out.dtype) == (want.shape, want.dtype)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
@pytest.mark.parametrize(("axis", "keep"), AXES, ids=["all", "axis0", "axis-1-keepdims"])
@pytest.mark.parametrize(
    ("op", "dtype"),
    [(op, dtype) for op in ("sum", "prod") for dtype in DATA]
    + [(op, dtype) for op in ("max", "min") for dtype in ("int32", "int64")],
)
def test_reduction_keeps_the_input_dtype_and_numpy_value(
    target: str,
    dev: tvm.runtime.Device,
    op: str,
    dtype: str,
    axis: list[int] | None,
    keep: bool,
    exec_mode: str,
) -> None:
    data = DATA[dtype]
    vm = build_vm(_reduce(op, dtype, data.shape, axis, keep), target, dev, exec_mode)
    _assert_same(_run(vm, data, dev), _numpy(op, data, axis, keep))


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
@pytest.mark.parametrize(("op", "dtype"), [("sum", "bool"), ("prod", "bool"), ("sum", "int32"),
                                           ("prod", "int64")])  # fmt: skip
def test_reduction_over_an_empty_axis_gives_the_identity(
    target: str, dev: tvm.runtime.Device, op: str, dtype: str, exec_mode: str
) -> None:
    """Summing nothing gives 0 (False), multiplying nothing 1 (True), as in numpy."""
    data = np.zeros((2, 0), dtype)
    vm = build_vm(_reduce(op, dtype, data.shape, [1], False), target, dev, exec_mode)
    _assert_same(_run(vm, data, dev), _numpy(op, data, [1], False))


@deviations.xfail("relax-bool-max-min-refused")
@pytest.mark.parametrize("exec_mode", EXEC_MODES)
@pytest.mark.parametrize("op", ["max", "min"])
def test_max_and_min_of_a_bool_mask_are_any_and_all(
    target: str, dev: tvm.runtime.Device, op: str, exec_mode: str
) -> None:
    data = DATA["bool"]
    module = _reduce(op, "bool", data.shape, [1], False)
    identity = "min" if op == "max" else "max"
    message = rf"(?s).*Cannot decide {identity}_value for type\s*T\.bool.*"
    with recorded(tvm.error.InternalError, message, BoolReductionRefused):
        vm = build_vm(module, target, dev, exec_mode)
    _assert_same(_run(vm, data, dev), getattr(np, op)(data, axis=1))


@pytest.mark.parametrize(
    ("name", "dtype"),
    [("all", "bool"), ("any", "bool"), ("sum", "bool"), ("max", "int64"), ("min", "int32"),
     ("prod", "int32")],
)  # fmt: skip
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_te_reduction_matches_numpy(
    target: str, dev: tvm.runtime.Device, name: str, dtype: str, axis: int | None
) -> None:
    """topi's reductions compiled with tvm.compile: all / any are numpy's; sum, prod, max, min
    keep the input's dtype (numpy's sum / prod cast back to it)."""
    data = DATA[dtype]
    placeholder = te.placeholder(data.shape, dtype, name="A")
    result = getattr(topi, name)(placeholder, axis=axis)
    function = tvm.compile(te.create_prim_func([placeholder, result]), target=target)
    want = _numpy(name, data, None if axis is None else [axis], False)
    out = tvm.runtime.empty(want.shape, str(result.dtype), dev)
    function(tvm.runtime.tensor(data, dev), out)
    _assert_same(out.numpy(), want)
