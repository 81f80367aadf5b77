"""Python hooked into compiled code: `te.extern` + `tvm.tirx.call_packed` call a Python global."""

import numpy as np
import pytest
import tvm
from tvm import te


def test_call_packed_runs_python_function_in_compiled_code() -> None:
    calls = []

    @tvm.register_global_func("conformance.extern.addone", override=True)
    def my_tvm_addone(x: tvm.runtime.Tensor, y: tvm.runtime.Tensor) -> None:
        calls.append((type(x), type(y)))
        tvm.runtime.tensor(x.numpy() + 1).copyto(y)

    n = 10
    a_ph = te.placeholder((n,), name="A")
    b_ph = te.extern(
        a_ph.shape,
        [a_ph],
        lambda ins, outs: tvm.tirx.call_packed("conformance.extern.addone", ins[0], outs[0]),
        name="C",
    )
    f = tvm.compile(te.create_prim_func([a_ph, b_ph]), target="llvm")
    rng = np.random.default_rng(1)
    a = tvm.runtime.tensor(rng.uniform(size=(n,)).astype(str(a_ph.dtype)))
    b = tvm.runtime.tensor(np.zeros(n, dtype=str(b_ph.dtype)))
    f(a, b)
    assert calls == [(tvm.runtime.Tensor, tvm.runtime.Tensor)]
    # One float32 addition, correctly rounded on both sides: bit-exact.
    np.testing.assert_array_equal(b.numpy(), a.numpy() + np.float32(1))


def test_python_error_in_extern_callback_reaches_caller() -> None:
    @tvm.register_global_func("conformance.extern.fail", override=True)
    def fail(x: tvm.runtime.Tensor, y: tvm.runtime.Tensor) -> None:
        raise ValueError("extern callback failed")

    a_ph = te.placeholder((4,), name="A")
    b_ph = te.extern(
        a_ph.shape,
        [a_ph],
        lambda ins, outs: tvm.tirx.call_packed("conformance.extern.fail", ins[0], outs[0]),
        name="C",
    )
    f = tvm.compile(te.create_prim_func([a_ph, b_ph]), target="llvm")
    a = tvm.runtime.tensor(np.zeros(4, dtype="float32"))
    b = tvm.runtime.tensor(np.zeros(4, dtype="float32"))
    with pytest.raises(ValueError, match=r"^extern callback failed$"):
        f(a, b)
