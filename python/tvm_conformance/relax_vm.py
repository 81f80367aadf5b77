"""Build a Relax VM the way the seed 000/004 tests do: one module, a target, an exec mode.

vm = build_vm(MyModule, target, dev, exec_mode)            # one of EXEC_MODES
vm = build_vm(mod, target, dev, "compiled", memory_cfg="naive", opt_level=3)
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import relax

# relax.build's exec modes: the VM interprets bytecode, or runs the module compiled to TIR.
EXEC_MODES: tuple[str, ...] = ("bytecode", "compiled")


def build_vm(
    mod: Any,
    target: str,
    dev: tvm.runtime.Device,
    exec_mode: str,
    *,
    memory_cfg: str | None = None,
    opt_level: int | None = None,
) -> relax.VirtualMachine:
    """`relax.build(mod, target, exec_mode)` in a VM on `dev` (an unknown mode is an error)."""
    if exec_mode not in EXEC_MODES:
        raise ValueError(f"exec_mode must be one of {EXEC_MODES}, not {exec_mode!r}")
    if opt_level is None:
        executable = relax.build(mod, target=target, exec_mode=exec_mode)
    else:
        with tvm.transform.PassContext(opt_level=opt_level):
            executable = relax.build(mod, target=target, exec_mode=exec_mode)
    if memory_cfg is None:
        return relax.VirtualMachine(executable, dev)
    return relax.VirtualMachine(executable, dev, memory_cfg=memory_cfg)


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
