"""`R.match_cast` in the Relax VM refuses a value whose shape or dtype differs from its target.

`main(x, y, z)` takes tensors of unknown shape and dtype (`R.Tensor`) and match-casts them to
`R.Tensor((2, 3), "float32")`, `R.Tensor(("n",), "int32")` and `R.Tensor(("n", 2), "float32")`,
so the checks are match_cast's own, not the parameters'. The wrong values come from those
declarations (tvm_conformance.struct_info_inputs: each dimension in turn, one dimension more and
fewer, every other dtype; `n` is checked where z repeats it). Each is refused with an error
naming match_cast and what differs, in both exec modes; the same VM (one per exec mode, for
every case) then computes the conforming call's result.
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


def _module() -> tuple[tvm.IRModule, list[relax.Var]]:
    n = tirx.Var("n", "int64")
    types = [((2, 3), "float32"), ((n,), "int32"), ((n, 2), "float32")]
    params = [relax.Var(name, relax.TensorType(None, None)) for name in ("x", "y", "z")]
    builder = relax.BlockBuilder()
    casts = []
    with builder.function("main", params):
        with builder.dataflow():
            casts = [
                builder.match_cast(p, relax.TensorType(*t))
                for p, t in zip(params, types, strict=True)
            ]
            outs = [builder.emit_output(relax.op.add(c, c)) for c in casts]
        builder.emit_func_output(relax.Tuple(outs))
    return builder.get(), casts


MODULE, CASTS = _module()
DECLARED = declared_of(CASTS)
WRONG = wrong_inputs(DECLARED)
_VMS: dict[tuple[str, str], Any] = {}


def _vm(target: str, dev: tvm.runtime.Device, exec_mode: str) -> Any:
    if (target, exec_mode) not in _VMS:
        _VMS[target, exec_mode] = build_vm(MODULE, target, dev, exec_mode)
    return _VMS[target, exec_mode]


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
@pytest.mark.parametrize("case", WRONG, ids=[c.id for c in WRONG])
def test_wrong_value_is_refused_and_vm_stays_usable(
    case: WrongInput, exec_mode: str, target: str, dev: tvm.runtime.Device
) -> None:
    vm = _vm(target, dev, exec_mode)
    good = [tensor_of(shape, dtype, i) for i, (shape, dtype) in enumerate(conforming(DECLARED))]
    bad = list(good)
    bad[case.index] = tensor_of(case.shape, case.dtype, case.index)
    with pytest.raises(RAISES[case.kind]) as info:
        vm["main"](*[tvm.runtime.tensor(a, dev) for a in bad])
    message = str(info.value)
    dims, dtype = DECLARED[case.index]
    assert "match_cast" in message, f"{case.what}: the error does not name match_cast: {message!r}"
    if case.kind == "dtype":
        assert f"dtype {dtype} but get {case.dtype}" in message, message
    elif case.kind == "ndim":
        assert f"ndim {len(dims)} but get {len(case.shape)}" in message, message
    else:
        assert f"shape[{case.axis}]" in message and str(case.shape[case.axis]) in message, message
    out = vm["main"](*[tvm.runtime.tensor(a, dev) for a in good])
    # Each output is its input doubled, which rounds nothing: numpy's result, exactly.
    for got, a in zip(out, good, strict=True):
        np.testing.assert_array_equal(got.numpy(), a + a, f"after {case.what}", strict=True)
