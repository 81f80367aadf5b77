"""Seed 004: Relax VM storage with an explicit memory scope, driven through the stateful API.

`R.vm.alloc_storage(..., storage_scope=...)` + `R.vm.alloc_tensor` + a TIR add, run with
`set_input` / `invoke_stateful` / `get_outputs` under each allocator and exec mode, checked
against numpy. TIR is TVM 0.27 s_tir (`T.sblock`), so GPU targets get a default schedule.
"""

import numpy as np
import pytest
import tvm
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T

from tvm_conformance.relax_vm import EXEC_MODES, build_vm


# One line: TVMScript's source finder ends a function at a line as indented as its `def`.
def _storage_module(scope: str = "global", offset: int = 16, factor: int = 0) -> tvm.IRModule:
    """One TIR add, called by two Relax functions that carve tensors out of VM storage.

    `scoped(x) = x + x`, its output in a tensor carved from storage of `scope` (seed 004's
    program). `two_offsets(x, y) = (a, b)`: a = x + x at byte 0, b = y + y at byte `offset` of
    one storage. `factor` is the buffers' offset_factor: 0 (the TIR default) requires them to
    start at their tensor's data pointer, 1 accepts any element offset.
    """

    @I.ir_module(s_tir=True)
    class Module:
        @T.prim_func(s_tir=True)
        def add(
            arg0: T.Buffer((2, 2), "float32", offset_factor=factor),
            arg1: T.Buffer((2, 2), "float32", offset_factor=factor),
            output: T.Buffer((2, 2), "float32", offset_factor=factor),
        ):
            T.func_attr({"operator_name": "relax.add"})
            for ax0, ax1 in T.grid(2, 2):
                with T.sblock("T_add"):
                    v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(arg0[v_ax0, v_ax1], arg1[v_ax0, v_ax1])
                    T.writes(output[v_ax0, v_ax1])
                    output[v_ax0, v_ax1] = arg0[v_ax0, v_ax1] + arg1[v_ax0, v_ax1]

        @R.function(pure=False)
        def scoped(x: R.Tensor((2, 2), dtype="float32")):
            cls = Module
            storage = R.vm.alloc_storage(
                R.shape([2 * 2]),
                runtime_device_index=0,
                dtype="float32",
                storage_scope=scope,
            )
            alloc = R.vm.alloc_tensor(storage, offset=0, shape=R.shape([2, 2]), dtype="float32")
            _: R.Tuple = cls.add(x, x, alloc)
            out: R.Tensor((2, 2), dtype="float32") = alloc
            return out

        @R.function(pure=False)
        def two_offsets(x: R.Tensor((2, 2), dtype="float32"), y: R.Tensor((2, 2), dtype="float32")):
            cls = Module
            storage = R.vm.alloc_storage(
                R.shape([32]), runtime_device_index=0, dtype="uint8", storage_scope="global"
            )
            a = R.vm.alloc_tensor(storage, offset=0, shape=R.shape([2, 2]), dtype="float32")
            b = R.vm.alloc_tensor(storage, offset=offset, shape=R.shape([2, 2]), dtype="float32")
            _1: R.Tuple = cls.add(x, x, a)
            _2: R.Tuple = cls.add(y, y, b)
            out = (a, b)
            return out

    return Module


def _run_stateful(
    mod: tvm.IRModule,
    func: str,
    target: str,
    dev: tvm.runtime.Device,
    exec_mode: str,
    memory_cfg: str | None,
    *inputs: np.ndarray,
) -> object:
    vm = build_vm(mod, target, dev, exec_mode, memory_cfg=memory_cfg, opt_level=3)
    vm.set_input(func, *[tvm.runtime.tensor(x, dev) for x in inputs])
    vm.invoke_stateful(func)
    return vm.get_outputs(func)


def _run_two_offsets(
    offset: int, factor: int, target: str, dev: tvm.runtime.Device, exec_mode: str
) -> object:
    """`two_offsets(_input(), _second_input())` with b at byte `offset`, naive allocator."""
    module = _storage_module(offset=offset, factor=factor)
    return _run_stateful(
        module, "two_offsets", target, dev, exec_mode, "naive", _input(), _second_input()
    )


def _input() -> np.ndarray:
    return np.array([[0.25, -1.5], [3.0, 7.75]], dtype="float32")


def _second_input() -> np.ndarray:
    return np.array([[1.0, 2.5], [-4.0, 0.125]], dtype="float32")


def test_global_scope_storage_compiled_naive(target: str, dev: tvm.runtime.Device) -> None:
    out = _run_stateful(_storage_module(), "scoped", target, dev, "compiled", "naive", _input())

    np.testing.assert_array_equal(out.numpy(), [[0.5, -3.0], [6.0, 15.5]])


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
@pytest.mark.parametrize(
    "memory_cfg", ["naive", "pooled", None], ids=["naive", "pooled", "default"]
)
def test_global_scope_storage_every_allocator(
    target: str, dev: tvm.runtime.Device, exec_mode: str, memory_cfg: str | None
) -> None:
    out = _run_stateful(_storage_module(), "scoped", target, dev, exec_mode, memory_cfg, _input())

    np.testing.assert_array_equal(out.numpy(), [[0.5, -3.0], [6.0, 15.5]])


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
def test_two_tensors_at_different_offsets_of_one_storage(
    target: str, dev: tvm.runtime.Device, exec_mode: str
) -> None:
    a, b = _run_two_offsets(16, 1, target, dev, exec_mode)

    np.testing.assert_array_equal(a.numpy(), [[0.5, -3.0], [6.0, 15.5]])
    np.testing.assert_array_equal(b.numpy(), [[2.0, 5.0], [-8.0, 0.25]])


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
def test_overlapping_offsets_share_storage(
    target: str, dev: tvm.runtime.Device, exec_mode: str
) -> None:
    # b starts 8 bytes (2 floats) into a: writing b, after a, overwrites a's second row.
    a, b = _run_two_offsets(8, 1, target, dev, exec_mode)

    np.testing.assert_array_equal(b.numpy(), [[2.0, 5.0], [-8.0, 0.25]])
    np.testing.assert_array_equal(a.numpy(), [[0.5, -3.0], [2.0, 5.0]])


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
def test_offset_tensor_rejected_by_prim_func_requiring_zero_offset(
    target: str, dev: tvm.runtime.Device, exec_mode: str
) -> None:
    with pytest.raises(
        ValueError, match=r"(?s)Invalid output\.byte_offset on argument #2.*expected 0"
    ):
        _run_two_offsets(16, 0, target, dev, exec_mode)


@pytest.mark.parametrize("exec_mode", EXEC_MODES)
@pytest.mark.parametrize("storage_scope", ["global.texture", "shared", "local"])
def test_non_global_scope_on_cpu_fails(exec_mode: str, storage_scope: str) -> None:
    # CPU-only by nature: no target fixture, so it runs once, in vm_storage_test_independent.
    with pytest.raises(tvm.error.InternalError) as info:
        _run_stateful(
            _storage_module(storage_scope),
            "scoped",
            "llvm",
            tvm.cpu(),
            exec_mode,
            "naive",
            _input(),
        )
    assert (
        f"Device does not support allocate data space with specified memory scope: {storage_scope}"
        in str(info.value)
    )
