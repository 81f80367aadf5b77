"""`tvm_ffi.convert_func`: a Python callable as an FFI function, and the tensor class its
tensor arguments arrive as (`tensor_cls`), called from Python and from a C++ closure.

Without `tensor_cls` (like `tvm_ffi.convert`) a tensor argument arrives as `tvm_ffi.Tensor`;
with `tensor_cls=torch.Tensor` as a `torch.Tensor` over the same memory (DLPack, no copy),
its dtype, shape and values kept. Other arguments arrive as they do without it.
"""

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import tvm
import tvm_ffi

# C++ extensions loaded for this module by conftest.py.
EXTENSIONS = ("robustness_testing",)


def _recording(seen: list[Any]) -> Callable[..., Any]:
    def callback(tensor: Any, scale: int, name: str) -> int:
        seen.append((tensor, scale, name))
        return scale + len(name)

    return callback


def _callers() -> dict[str, Callable[[Any], Callable[..., Any]]]:
    forward = tvm.get_global_func("testing.robust.make_forwarding_closure")
    return {"python": lambda f: f, "cpp": lambda f: forward(f)}


@pytest.mark.parametrize("caller", ["python", "cpp"])
@pytest.mark.parametrize("dtype_name", ["float32", "int16", "float64"])
def test_tensor_cls_torch_delivers_torch_tensors_zero_copy(caller: str, dtype_name: str) -> None:
    dtype = getattr(torch, dtype_name)
    seen: list[Any] = []
    func = tvm_ffi.convert_func(_recording(seen), tensor_cls=torch.Tensor)
    assert isinstance(func, tvm_ffi.Function)
    x = torch.arange(12, dtype=dtype).reshape(3, 4)[:, 1:]  # a strided view
    assert _callers()[caller](func)(x, 5, "abc") == 8
    ((tensor, scale, name),) = seen
    assert type(tensor) is torch.Tensor
    assert (tensor.dtype, tuple(tensor.shape), tensor.stride()) == (dtype, (3, 3), x.stride())
    assert tensor.data_ptr() == x.data_ptr()
    assert torch.equal(tensor, x)
    assert (scale, name) == (5, "abc")


@pytest.mark.parametrize("caller", ["python", "cpp"])
@pytest.mark.parametrize("convert", ["convert_func", "convert"])
def test_without_tensor_cls_tensors_arrive_as_ffi_tensors(caller: str, convert: str) -> None:
    seen: list[Any] = []
    func = getattr(tvm_ffi, convert)(_recording(seen))
    x = torch.arange(6, dtype=torch.int32).reshape(2, 3)
    assert _callers()[caller](func)(x, 2, "") == 2
    ((tensor, _, _),) = seen
    assert isinstance(tensor, tvm_ffi.Tensor)
    assert not isinstance(tensor, torch.Tensor)
    assert tensor.dtype == "int32" and tuple(tensor.shape) == (2, 3)
    np.testing.assert_array_equal(tensor.numpy(), x.numpy())


def test_tensor_cls_without_the_dlpack_exchange_api_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        tvm_ffi.convert_func(lambda t: t, tensor_cls=np.ndarray)
