"""Build a Relax VM the way the seed 000/004 tests do: one module, a target, an exec mode.

vm = build_vm(MyModule, target, dev, exec_mode)            # one of EXEC_MODES
vm = build_vm(mod, target, dev, "compiled", memory_cfg="naive", opt_level=3)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tvm
from tvm import relax

from tvm_conformance.testing import assert_on_device

# relax.build's exec modes: the VM interprets bytecode, or runs the module compiled to TIR.
EXEC_MODES: tuple[str, ...] = ("bytecode", "compiled")


def doubling_module() -> tvm.IRModule:
    """The smallest Relax program the API tests build: `main(x: float32[3]) -> x + x`."""
    from tvm.script import ir as I
    from tvm.script import relax as R

    @I.ir_module
    class Double:
        @R.function
        def main(x: R.Tensor((3,), "float32")):
            y = R.add(x, x)
            return y

    return Double


def build_vm(
    mod: Any,
    target: str,
    dev: tvm.runtime.Device,
    exec_mode: str,
    *,
    memory_cfg: str | None = None,
    opt_level: int | None = None,
) -> DeviceCheckedVM:
    """`relax.build(mod, target, exec_mode)` in a VM on `dev` (an unknown mode is an error),
    whose results are checked to be on `dev` (DeviceCheckedVM)."""
    if exec_mode not in EXEC_MODES:
        raise ValueError(f"exec_mode must be one of {EXEC_MODES}, not {exec_mode!r}")
    if opt_level is None:
        executable = relax.build(mod, target=target, exec_mode=exec_mode)
    else:
        with tvm.transform.PassContext(opt_level=opt_level):
            executable = relax.build(mod, target=target, exec_mode=exec_mode)
    if memory_cfg is None:
        vm = relax.VirtualMachine(executable, dev)
    else:
        vm = relax.VirtualMachine(executable, dev, memory_cfg=memory_cfg)
    return DeviceCheckedVM(vm, dev)


class DeviceCheckedVM:
    """A Relax VM whose results are checked to be on its device, inside the test that calls it.

    ``vm["f"](...)`` and ``vm.get_outputs("f")`` return what the VM returns, after asserting
    that every tensor in it is on ``dev`` (tvm_conformance.testing.assert_on_device): a cuda case
    whose result was computed or left on the CPU fails. Everything else is the VM's own.
    """

    def __init__(self, vm: relax.VirtualMachine, dev: tvm.runtime.Device) -> None:
        self.vm = vm
        self.dev = dev

    def __getitem__(self, name: str) -> Callable[..., Any]:
        function = self.vm[name]

        def checked(*args: Any) -> Any:
            result = function(*args)
            assert_on_device(result, self.dev, require_tensor=False)
            return result

        return checked

    def get_outputs(self, name: str) -> Any:
        result = self.vm.get_outputs(name)
        assert_on_device(result, self.dev, require_tensor=False)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.vm, name)


# The VM builtin through which an executable calls a closure (an R.Callable argument).
INVOKE_CLOSURE = "vm.builtin.invoke_closure"


def _sources(module: tvm.runtime.Module) -> list[str]:
    """The inspectable source of ``module`` and of every module it imports (depth first)."""
    out = []
    try:
        out.append(module.inspect_source())
    except Exception:  # noqa: BLE001 (a module kind without source: nothing to read)
        pass
    for imported in module.imports:
        out += _sources(imported)
    return out


def invokes_closure(executable: relax.VMExecutable) -> bool:
    """True if ``executable`` calls a closure: ``vm.builtin.invoke_closure`` in its bytecode
    (exec mode ``bytecode``) or in the host code it was compiled to (``compiled``)."""
    if INVOKE_CLOSURE in executable.as_text():
        return True
    return any(INVOKE_CLOSURE in text for text in _sources(executable.mod))
