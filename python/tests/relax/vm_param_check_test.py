"""The Relax VM checks a function's arguments against its parameters' declared struct info.

`main(x: R.Tensor((2, 3), "float32"), y: R.Tensor(("n",), "int32"), z: R.Tensor(("n", 2),
"float32"))`: the wrong inputs come from that declaration (tvm_conformance.struct_info_inputs:
each dimension in turn, one dimension more and fewer, every other dtype; `n` is checked where
z repeats it). Each is refused with an error that names the parameter and what differs, in both
exec modes, and the same VM (one per exec mode, for every case) then computes the conforming
call's result.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tvm
from tvm import relax, tirx

from tvm_conformance.relax_vm import EXEC_MODES, build_vm
from tvm_conformance.struct_info_inputs import (
    RAISES,
    WrongInput,
    conforming,
    declared_of,
    tensor_of,
    wrong_inputs,
)

NAMES = ("x", "y", "z")


def _module() -> tuple[tvm.IRModule, list[relax.Var]]:
    n = tirx.Var("n", "int64")
    types = [((2, 3), "float32"), ((n,), "int32"), ((n, 2), "float32")]
    params = [relax.Var(name, relax.TensorType(*t)) for name, t in zip(NAMES, types, strict=True)]
    builder = relax.BlockBuilder()
    with builder.function("main", params):
        outs = [builder.emit(relax.op.add(p, p)) for p in params]
        builder.emit_func_output(relax.Tuple(outs))
    return builder.get(), params


MODULE, PARAMS = _module()
DECLARED = declared_of(PARAMS)
WRONG = wrong_inputs(DECLARED)


_VMS: dict[tuple[str, str], Any] = {}


def _vm(target: str, dev: tvm.runtime.Device, exec_mode: str) -> Any:
    """One VM per exec mode: every case calls the same one, which must stay usable."""
    if (target, exec_mode) not in _VMS:
        _VMS[target, exec_mode] = build_vm(MODULE, target, dev, exec_mode)
    return _VMS[target, exec_mode]


def check_refused(call: Any, case: WrongInput, name: str, declared: tuple[Any, str]) -> None:
    """``call()`` raises an error naming ``name`` and the difference ``case`` makes."""
    with pytest.raises(RAISES[case.kind]) as info:
        call()
    message = str(info.value)
    assert name in message, f"{case.what}: the error does not name {name}: {message!r}"
    dims, dtype = declared
    if case.kind == "dtype":
        assert f"dtype {dtype} but get {case.dtype}" in message, message
    elif case.kind == "ndim":
        assert f"ndim {len(dims)} but get {len(case.shape)}" in message, message
    else:
        assert f"shape[{case.axis}]" in message and str(case.shape[case.axis]) in message, message


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
@pytest.mark.parametrize("case", WRONG, ids=[c.id for c in WRONG])
def test_wrong_argument_is_refused_and_vm_stays_usable(
    case: WrongInput, exec_mode: str, target: str, dev: tvm.runtime.Device
) -> None:
    vm = _vm(target, dev, exec_mode)
    good = [tensor_of(shape, dtype, i) for i, (shape, dtype) in enumerate(conforming(DECLARED))]
    bad = list(good)
    bad[case.index] = tensor_of(case.shape, case.dtype, case.index)
    name = f"param={NAMES[case.index]}"
    check_refused(
        lambda: vm["main"](*[tvm.runtime.tensor(a, dev) for a in bad]),
        case, name, DECLARED[case.index],
    )  # fmt: skip
    out = vm["main"](*[tvm.runtime.tensor(a, dev) for a in good])
    # Each output is its input doubled, which rounds nothing: numpy's result, exactly.
    for got, a in zip(out, good, strict=True):
        np.testing.assert_array_equal(got.numpy(), a + a, f"after {case.what}", strict=True)
