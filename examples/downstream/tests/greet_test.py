"""The downstream extension from Python: libgreet.so loaded with tvm_ffi, its globals called.

The tensor cases run per target through the kit's pytest plugin (`target` / `dev` fixtures):
once in greet_py_test_llvm, and in greet_py_test_cuda, where they skip naming why when this
machine cannot run CUDA. The greet cases take no target and run once (`_independent`).
"""

from collections.abc import Iterator

import numpy as np
import pytest
import tvm
import tvm_ffi

from tvm_conformance.runfiles import rlocation


@pytest.fixture(scope="module", autouse=True)
def greet_library() -> Iterator[tvm_ffi.Module]:
    """libgreet.so, loaded once; its `downstream.*` globals exist while it is held."""
    module = tvm_ffi.load_module(rlocation("ext/libgreet.so"))
    yield module
    del module


def test_greet_returns_the_greeting() -> None:
    assert tvm.get_global_func("downstream.greet")("downstream") == "hello, downstream"


def test_greet_rejects_an_empty_name_with_value_error() -> None:
    with pytest.raises(ValueError, match="name must not be empty"):
        tvm.get_global_func("downstream.greet")("")


def test_describe_names_device_dtype_and_shape(target: str, dev: tvm.runtime.Device) -> None:
    x = tvm.runtime.tensor(np.zeros((2, 3), dtype="float32"), dev)

    described = tvm.get_global_func("downstream.describe")(x)

    assert described == f"{'cpu' if target == 'llvm' else 'cuda'}:{dev.index} float32 [2, 3]"


def test_weighted_sum_reads_host_memory_only(target: str, dev: tvm.runtime.Device) -> None:
    weighted_sum = tvm.get_global_func("downstream.weighted_sum")
    x = tvm.runtime.tensor(np.arange(4, dtype="float32"), dev)

    if target == "llvm":
        assert weighted_sum(x, 0.5) == pytest.approx(3.0)  # 0.5 * (0 + 1 + 2 + 3)
    else:
        with pytest.raises(ValueError, match="host memory only, got cuda"):
            weighted_sum(x, 0.5)


def test_weighted_sum_rejects_other_dtypes_with_type_error() -> None:
    x = tvm.runtime.tensor(np.arange(4, dtype="int32"), tvm.cpu())

    with pytest.raises(TypeError, match="expected float32, got cpu:0 int32"):
        tvm.get_global_func("downstream.weighted_sum")(x, 1.0)
