"""Every default argument of the public functions the conformance rows call, omitted and passed
explicitly: the two calls must agree. The parameters are read with `inspect.signature`, so a
parameter added upstream is driven without editing this file (a test fails on a function whose
defaults it cannot observe). The value passed explicitly is the default the lane's registry
snapshot recorded (tools/registry_snapshot/<lane>.json, `python_api`), not the one the
signature has now: a TVM whose default changed behaves otherwise when it is omitted, and the
case fails (passing the signature's own default would call the function twice alike). A
`device` parameter defaulting to None must mean the default device, `tvm.cpu()` with its own
defaults.
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import tvm
from tvm import relax

from tvm_conformance import expectations, relax_vm
from tvm_conformance.runfiles import rlocation

X = np.array([1.0, -2.0, 3.5], "float32")


# x + x, the smallest program the VM builds.
Double = relax_vm.doubling_module()


def _tensor_facts(t: tvm.runtime.Tensor) -> tuple:
    return (t.device, str(t.dtype), tuple(t.shape))


def _run(ex: tvm.runtime.Executable, memory_cfg: Any = None) -> list:
    vm = relax.VirtualMachine(ex, tvm.cpu(), memory_cfg=memory_cfg)
    return vm["main"](tvm.runtime.tensor(X)).numpy().tolist()


# name -> (the function, its required arguments, what a call's result is compared by).
Call = tuple[Callable[..., Any], tuple, Callable[[Any], Any]]
CALLS: dict[str, Call] = {
    "tvm.runtime.tensor": (
        tvm.runtime.tensor,
        (X,),
        lambda t: (*_tensor_facts(t), t.numpy().tolist()),
    ),
    "tvm.runtime.empty": (tvm.runtime.empty, ((2, 3),), _tensor_facts),
    "tvm.runtime.Tensor.copyto": (
        lambda target, mem_scope=None: tvm.runtime.tensor(X).copyto(target, mem_scope),
        (tvm.cpu(0),),
        lambda t: (*_tensor_facts(t), t.numpy().tolist()),
    ),
    "tvm.cpu": (tvm.cpu, (), lambda d: d),
    "tvm.device": (tvm.device, ("cpu",), lambda d: d),
    "tvm.target.Target": (tvm.target.Target, ("llvm",), lambda t: str(t)),
    "tvm.target.Target.current": (tvm.target.Target.current, (), lambda t: t),
    "tvm.transform.PassContext": (
        tvm.transform.PassContext,
        (),
        lambda c: (
            int(c.opt_level),
            list(c.required_pass),
            list(c.disabled_pass),
            len(c.instruments),
            dict(c.config),
        ),
    ),
    "tvm.relax.build": (relax.build, (Double, "llvm"), _run),
    "tvm.relax.VirtualMachine": (
        relax.VirtualMachine,
        (relax.build(Double, "llvm"), tvm.cpu()),
        lambda vm: vm["main"](tvm.runtime.tensor(X)).numpy().tolist(),
    ),
}

# The wrapped copyto above stands for the method; its signature is the method's.
SIGNATURES = {"tvm.runtime.Tensor.copyto": tvm.runtime.Tensor.copyto}


def signature_of(name: str) -> inspect.Signature:
    func = SIGNATURES.get(name, CALLS[name][0])
    sig = inspect.signature(func.__init__ if inspect.isclass(func) else func)
    params = [p for p in sig.parameters.values() if p.name != "self"]
    return sig.replace(parameters=params)


def defaults(name: str) -> list[inspect.Parameter]:
    """The parameters of `name` that have a default, walked from its signature (those the
    call passes positionally, as relax.build's target, are not omitted here)."""
    passed = len(CALLS[name][1])
    params = list(signature_of(name).parameters.values())[passed:]
    return [p for p in params if p.default is not p.empty]


CASES = [(name, p.name) for name in CALLS for p in defaults(name)]


def _call(name: str, **kwargs: Any) -> Any:
    func, required, observe = CALLS[name]
    return observe(func(*required, **kwargs))


@functools.cache
def _recorded_api() -> dict[str, Any]:
    lane = expectations.lane_of(expectations.venv_record())
    path = rlocation(f"tools/registry_snapshot/{lane}.json")
    with open(path, encoding="utf-8") as f:
        return json.load(f)["python_api"]


def recorded_default(name: str, param: str) -> Any:
    """The default of `param` that the lane's snapshot recorded for `name` (a literal: the
    test fails on a default it cannot read)."""
    api = _recorded_api()
    if name in api:
        text = api[name]["signature"]
    else:
        owner, member = name.rsplit(".", 1)
        text = api[owner]["members"][member]
    args = ast.parse(f"def f{text}: pass").body[0].args  # type: ignore[attr-defined]
    positional = [a.arg for a in args.posonlyargs + args.args]
    with_defaults = positional[len(positional) - len(args.defaults) :]
    found = dict(zip(with_defaults, args.defaults, strict=True))
    kwonly = zip(args.kwonlyargs, args.kw_defaults, strict=True)
    found.update((a.arg, d) for a, d in kwonly if d is not None)
    assert param in found, f"{name}: the snapshot records no default of {param} ({text})"
    return ast.literal_eval(found[param])


@pytest.mark.parametrize(("name", "param"), CASES, ids=[f"{n}-{p}" for n, p in CASES])
def test_a_default_omitted_equals_it_passed_explicitly(name: str, param: str) -> None:
    assert _call(name) == _call(name, **{param: recorded_default(name, param)})


def test_a_changed_default_is_told_from_the_recorded_one() -> None:
    """The comparison can fail: PassContext's opt_level passed as another value differs."""
    recorded = recorded_default("tvm.transform.PassContext", "opt_level")
    assert recorded == signature_of("tvm.transform.PassContext").parameters["opt_level"].default
    assert _call("tvm.transform.PassContext") != _call(
        "tvm.transform.PassContext", opt_level=recorded + 1
    )


def test_every_default_is_driven() -> None:
    """Each function driven has defaults, and the cases cover every one of them."""
    assert all(defaults(name) for name in CALLS)
    assert len(CASES) == sum(len(defaults(name)) for name in CALLS)


@pytest.mark.parametrize("name", ["tvm.runtime.tensor", "tvm.runtime.empty"])
def test_omitted_device_is_the_default_device(name: str) -> None:
    """`device=None` means `tvm.cpu()` called with its own default index (walked)."""
    assert signature_of(name).parameters["device"].default is None
    index = inspect.signature(tvm.cpu).parameters["dev_id"].default
    func, required, _ = CALLS[name]
    assert func(*required).device == tvm.cpu() == tvm.cpu(index)
