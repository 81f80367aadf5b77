"""Object ownership across the FFI: `_move()` rvalue passing and reference counts."""

import numpy as np
import tvm
import tvm.testing
import tvm_ffi
from tvm import tirx


def _checking_callback() -> tvm_ffi.Function:
    def callback(x: object, expected_count: int) -> object:
        assert tvm.testing.object_use_count(x) == expected_count
        return x

    return tvm.runtime.convert(callback)


def test_fresh_object_has_use_count_one() -> None:
    x = tirx.Var("x", "int32")
    assert tvm.testing.object_use_count(x) == 1
    alias = x  # a second Python name for the same handle: no new FFI reference
    assert tvm.testing.object_use_count(alias) == 1
    holder = tvm.runtime.convert([x])  # an FFI Array holds a reference
    assert tvm.testing.object_use_count(x) == 2
    del holder
    assert tvm.testing.object_use_count(x) == 1


def test_move_transfers_the_only_reference() -> None:
    f = _checking_callback()
    x = tirx.Var("x", "int32")
    f(x, 2)  # the caller's and the callee's reference
    assert tvm.testing.object_use_count(x) == 1
    y = f(x._move(), 1)  # moved: the callee holds the only reference
    assert x.__chandle__() == 0
    assert y.__chandle__() != 0
    assert y.name == "x"


def test_move_of_shared_object_keeps_other_references() -> None:
    f = _checking_callback()
    x = tirx.Var("x", "int32")
    y = f(x, 2)
    assert tvm.testing.object_use_count(x) == 2  # x and y
    z = f(x._move(), 2)  # y still holds one
    assert x.__chandle__() == 0
    assert y.__chandle__() != 0
    assert z.same_as(y)


def test_tensor_argument_use_count() -> None:
    counts = []

    def check(arr: tvm.runtime.Tensor) -> None:
        counts.append(tvm.testing.object_use_count(arr))

    x = tvm.runtime.tensor(np.array([1, 2, 3], dtype="int64"))
    assert tvm.testing.object_use_count(x) == 1
    tvm.runtime.convert(check)(x)
    assert counts == [2]
    assert tvm.testing.object_use_count(x) == 1
