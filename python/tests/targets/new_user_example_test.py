"""A test file as a new user writes it from docs/targets.md: fixtures, decorators, nothing else.

Vector add through TE and a small Relax model, checked against numpy on every target in
TVM_TEST_TARGETS (the Bazel variant sets it), each target its own test id.
"""

import re

import numpy as np
import pytest
import tvm
from tvm import relax, te
from tvm.script import relax as R

from tvm_conformance.testing import (
    assert_on_device,
    exclude_targets,
    parametrize_targets,
    requires_llvm,
)


def vector_add(target: str) -> tvm.runtime.Executable:
    n = 256
    a = te.placeholder((n,), name="A", dtype="float32")
    b = te.placeholder((n,), name="B", dtype="float32")
    c = te.compute((n,), lambda i: a[i] + b[i], name="C")
    mod = tvm.IRModule({"add": te.create_prim_func([a, b, c]).with_attr("global_symbol", "add")})
    if "gpu" in tvm.target.Target(target).keys:  # GPU kernels need a thread binding
        sch = tvm.s_tir.Schedule(mod)
        (loop,) = sch.get_loops(sch.get_sblock("C", func_name="add"))
        outer, inner = sch.split(loop, factors=[None, 64])
        sch.bind(outer, "blockIdx.x")
        sch.bind(inner, "threadIdx.x")
        mod = sch.mod
    return tvm.compile(mod, target=target)


@tvm.script.ir_module
class AddRelu:
    @R.function
    def main(x: R.Tensor((8,), "float32"), y: R.Tensor((8,), "float32")) -> R.Tensor(
        (8,), "float32"
    ):
        with R.dataflow():
            z = R.nn.relu(R.add(x, y))
            R.output(z)
        return z


def test_vector_add(target: str, dev: tvm.runtime.Device) -> None:
    a = np.arange(256, dtype="float32")
    b = np.full(256, 0.5, dtype="float32")
    c = tvm.runtime.tensor(np.zeros(256, dtype="float32"), dev)
    vector_add(target)["add"](tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), c)
    assert_on_device(c, dev)  # computed on the target's device, not on the CPU
    np.testing.assert_array_equal(c.numpy(), a + b)


@parametrize_targets("llvm", "cuda")
def test_relax_add_relu(target: str, dev: tvm.runtime.Device) -> None:
    x = np.array([-3, -2, -1, 0, 1, 2, 3, 4], dtype="float32")
    y = np.ones(8, dtype="float32")
    vm = relax.VirtualMachine(tvm.compile(AddRelu, target=target), dev)
    out = vm["main"](tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev))
    assert_on_device(out, dev)
    np.testing.assert_array_equal(out.numpy(), [0, 0, 0, 1, 2, 3, 4, 5])


@exclude_targets("cuda")
def test_host_only_numpy_round_trip(target: str, dev: tvm.runtime.Device) -> None:
    data = np.arange(6, dtype="int32").reshape(2, 3)
    assert dev.exist
    np.testing.assert_array_equal(tvm.runtime.tensor(data, dev).numpy(), data)


@requires_llvm
def test_llvm_codegen_emits_named_function() -> None:
    source = vector_add("llvm").mod.inspect_source("ll")
    # The exported entry point of `add`, and the compute body adding floats from A and B.
    assert re.search(r"^define .* @__tvm_ffi_add\(", source, re.M)
    compute = r"^define .* @add_compute_\(ptr .*%A, ptr .*%B, ptr .*%C\)"
    assert re.search(compute, source, re.M), "no add_compute_(A, B, C) function in the LLVM IR"
    assert re.search(r"\bfadd\b.*float", source), "the compute body adds no floats"


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_zeros_on_every_target(target: str, dev: tvm.runtime.Device, dtype: str) -> None:
    zeros = tvm.runtime.tensor(np.zeros(4, dtype=dtype), dev)
    assert_on_device(zeros, dev)
    assert not zeros.numpy().any()
