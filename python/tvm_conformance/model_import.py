"""Import PyTorch models into Relax and check them against PyTorch (seed 003 on TVM 0.27).

Relay's ``from_pytorch`` + ``bind_params_by_name`` + ``create_executor(kind=...)`` path was
removed in TVM v0.20. This harness runs the same checks on its replacement: a Relax frontend
(``from_exported_program`` or ``from_fx``), ``detach_params`` + ``BindParams`` by name, and the
Relax VM in ``bytecode`` and ``compiled`` modes. See docs/model_import.md for the mapping.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import tvm

try:
    import torch
except ImportError as err:  # the package's torch extra: say how to get it
    raise ImportError(
        "tvm_conformance.model_import imports PyTorch models and needs torch: "
        "pip install 'tvm_conformance[torch]' (or install torch)"
    ) from err
from tvm import relax

from tvm_conformance import numerics
from tvm_conformance.testing import assert_on_device

# "exported_program_undecomposed" is from_exported_program(run_ep_decomposition=False): the
# program's ATen ops (aten.layer_norm, aten.batch_norm, ...) reach TVM's translators as they are,
# not decomposed into core ATen first (the default), so those translators are checked too.
FRONTENDS: tuple[str, ...] = ("exported_program", "exported_program_undecomposed", "fx")
EXEC_MODES: tuple[str, ...] = ("bytecode", "compiled")

WeightValue = torch.Tensor | np.ndarray | tvm.runtime.Tensor


@dataclasses.dataclass(frozen=True)
class ImportedModel:
    """A model imported into Relax with its weights detached.

    ``mod["main"]`` takes ``num_inputs`` user inputs followed by one parameter per weight.
    ``weights`` holds the weight values the importer captured, keyed by the PyTorch name
    (``model.named_parameters()``); ``var_names`` maps that name to the Relax parameter name.
    """

    mod: tvm.IRModule
    weights: dict[str, tvm.runtime.Tensor]
    var_names: dict[str, str]
    num_inputs: int


def _check_model_and_inputs(model: Any, inputs: Any) -> tuple[torch.Tensor, ...]:
    """Validate the model and normalize inputs to a non-empty tuple of tensors."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if model.training:
        raise ValueError(
            f"model {type(model).__name__} is in training mode; call model.eval() first "
            "(the importers translate inference semantics)"
        )
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    if not isinstance(inputs, Sequence) or isinstance(inputs, str) or not inputs:
        raise TypeError("inputs must be a torch.Tensor or a non-empty sequence of torch.Tensor")
    for i, inp in enumerate(inputs):
        if not isinstance(inp, torch.Tensor):
            raise TypeError(f"inputs[{i}] must be a torch.Tensor, got {type(inp).__name__}")
    return tuple(inputs)


def _check_frontend(frontend: str) -> None:
    if frontend not in FRONTENDS:
        raise ValueError(f"unknown frontend {frontend!r}; expected one of {list(FRONTENDS)}")


def _check_exec_modes(exec_modes: Any) -> tuple[str, ...]:
    if isinstance(exec_modes, str):
        raise TypeError(
            f"exec_modes must be a sequence of mode names such as ({exec_modes!r},), "
            f"not the string {exec_modes!r}"
        )
    modes = tuple(exec_modes)
    if not modes:
        raise ValueError(f"exec_modes is empty; expected some of {list(EXEC_MODES)}")
    unknown = [m for m in modes if m not in EXEC_MODES]
    if unknown:
        raise ValueError(f"unknown exec mode(s) {unknown}; expected some of {list(EXEC_MODES)}")
    return modes


def _check_expected_ops(expected_ops: Any) -> list[str]:
    if isinstance(expected_ops, str):
        raise TypeError(
            f"expected_ops must be a sequence of operator names such as [{expected_ops!r}], "
            f"not the string {expected_ops!r}"
        )
    names = list(expected_ops)
    unregistered = []
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"expected_ops entries must be str, got {type(name).__name__}")
        try:
            tvm.ir.Op.get(name)
        except AttributeError:
            unregistered.append(name)
    if unregistered:
        raise ValueError(
            f"expected_ops names no registered operator: {unregistered} "
            "(Relax operators are spelled like 'relax.nn.conv2d')"
        )
    return names


def _resolve_device(
    target: str | tvm.target.Target, dev: tvm.runtime.Device | None
) -> tuple[tvm.target.Target, tvm.runtime.Device]:
    """Return the Target and a device for it, checking that they agree and that it exists."""
    tgt = target if isinstance(target, tvm.target.Target) else tvm.target.Target(target)
    device_type = tgt.get_target_device_type()
    if dev is None:
        dev = tvm.device(device_type, 0)
    elif dev.dlpack_device_type() != device_type:
        raise ValueError(f"device {dev} does not match target {tgt.kind.name!r}")
    if not dev.exist:
        raise RuntimeError(f"device {dev} for target {tgt.kind.name!r} is not available")
    return tgt, dev


def _torch_dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def import_model(
    model: torch.nn.Module,
    inputs: torch.Tensor | Sequence[torch.Tensor],
    *,
    frontend: str = "exported_program",
) -> ImportedModel:
    """Import ``model`` through a Relax frontend and detach its weights, named as in PyTorch."""
    inputs = _check_model_and_inputs(model, inputs)
    _check_frontend(frontend)
    if frontend.startswith("exported_program"):
        from tvm.relax.frontend.torch import from_exported_program

        program = torch.export.export(model, inputs)
        mod = from_exported_program(
            program,
            keep_params_as_input=True,
            run_ep_decomposition=frontend == "exported_program",
        )
        kind = torch.export.graph_signature.InputKind.PARAMETER
        torch_name_of = {
            spec.arg.name: spec.target
            for spec in program.graph_signature.input_specs
            if spec.kind is kind
        }
    else:
        from tvm.relax.frontend.torch import from_fx

        graph_module = torch.fx.symbolic_trace(model)
        input_info = [(tuple(t.shape), _torch_dtype_name(t.dtype)) for t in inputs]
        mod = from_fx(graph_module, input_info, keep_params_as_input=True)
        # from_fx names each weight parameter after its PyTorch name.
        torch_name_of = {name: name for name, _ in model.named_parameters()}

    num_inputs = int(mod["main"].attrs["num_input"])
    mod, detached = relax.frontend.detach_params(mod)
    weight_vars = list(mod["main"].params)[num_inputs:]
    values = list(detached.get("main", []))
    if len(values) != len(weight_vars):
        raise AssertionError(
            f"{frontend} importer detached {len(values)} weights for "
            f"{len(weight_vars)} weight parameters"
        )
    weights: dict[str, tvm.runtime.Tensor] = {}
    var_names: dict[str, str] = {}
    for var, value in zip(weight_vars, values, strict=True):
        if var.name not in torch_name_of:
            raise AssertionError(
                f"{frontend} importer made weight parameter {var.name!r}, which names no "
                f"parameter of the model; known: {sorted(torch_name_of)}"
            )
        torch_name = torch_name_of[var.name]
        weights[torch_name] = value
        var_names[torch_name] = var.name

    model_names = {name for name, _ in model.named_parameters()}
    if set(weights) != model_names:
        raise AssertionError(
            f"{frontend} importer weights {sorted(weights)} differ from the model's parameters "
            f"{sorted(model_names)}"
        )
    return ImportedModel(mod=mod, weights=weights, var_names=var_names, num_inputs=num_inputs)


def seed_parameters(model: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """Give every parameter and floating-point buffer of ``model`` seeded random values; return it.

    PyTorch's default initialisation hides whole classes of import bugs: a LayerNorm's unit
    weight and zero bias, a BatchNorm's zero mean and unit variance make a dropped or swapped
    parameter invisible. Weights and biases get N(0, 1) values; buffers named ``running_var``
    (variances) get U(0.5, 2.0); integer buffers (``num_batches_tracked``) are kept.
    """
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _, param in sorted(model.named_parameters()):
            param.copy_(torch.randn(param.shape, generator=generator, dtype=param.dtype))
        for name, buffer in sorted(model.named_buffers()):
            if not buffer.is_floating_point():
                continue
            if name.rsplit(".", 1)[-1] == "running_var":
                fresh = (
                    torch.rand(buffer.shape, generator=generator, dtype=buffer.dtype) * 1.5 + 0.5
                )
            else:
                fresh = torch.randn(buffer.shape, generator=generator, dtype=buffer.dtype)
            buffer.copy_(fresh)
    return model


def _to_numpy(value: WeightValue) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    if isinstance(value, tvm.runtime.Tensor):
        return value.numpy()
    if isinstance(value, np.ndarray):
        return value
    raise TypeError(
        f"weight values must be torch.Tensor, numpy.ndarray or tvm.runtime.Tensor, "
        f"got {type(value).__name__}"
    )


def bind_weights(
    imported: ImportedModel, params: Mapping[str, WeightValue] | None = None
) -> tvm.IRModule:
    """Bind weights by their PyTorch name into ``imported.mod`` (Relay's bind_params_by_name).

    ``params`` defaults to the weights the importer captured. Every name of the model must be
    given exactly once: an unknown or a missing name raises ``ValueError`` listing the names.
    """
    if params is None:
        params = imported.weights
    known = sorted(imported.var_names)
    unknown = sorted(set(params) - set(known))
    missing = sorted(set(known) - set(params))
    if unknown or missing:
        raise ValueError(
            f"cannot bind weights by name: unknown name(s) {unknown}, missing name(s) "
            f"{missing}; the model's weight names are {known}"
        )
    main = imported.mod["main"]
    by_var = {var.name: var for var in list(main.params)[imported.num_inputs :]}
    binding: dict[str, np.ndarray] = {}
    for torch_name, value in params.items():
        array = _to_numpy(value)
        var = by_var[imported.var_names[torch_name]]
        want_shape = tuple(int(d) for d in var.ty.shape)
        want_dtype = str(var.ty.dtype)
        if array.shape != want_shape or str(array.dtype) != want_dtype:
            raise ValueError(
                f"weight {torch_name!r} is {array.dtype}{list(array.shape)}, "
                f"the model expects {want_dtype}{list(want_shape)}"
            )
        binding[var.name] = array
    bound = relax.transform.BindParams("main", binding)(imported.mod)
    left = [var.name for var in list(bound["main"].params)[imported.num_inputs :]]
    if left:
        raise AssertionError(f"BindParams left weight parameter(s) {left} unbound")
    return bound


def collect_ops(mod: tvm.IRModule) -> set[str]:
    """Names of the operators called in the Relax functions of ``mod``."""
    names: set[str] = set()

    def visit(expr: relax.Expr) -> None:
        if isinstance(expr, relax.Call) and isinstance(expr.op, tvm.ir.Op):
            names.add(expr.op.name)

    for _, func in mod.functions_items():
        if isinstance(func, relax.Function):
            relax.analysis.post_order_visit(func.body, visit)
    return names


def assert_ops_present(mod: tvm.IRModule, expected_ops: Iterable[str]) -> None:
    """Fail with the missing operator names when ``mod`` lacks some of ``expected_ops``."""
    present = collect_ops(mod)
    missing = [name for name in expected_ops if name not in present]
    if missing:
        raise AssertionError(
            f"TVM Relax IR does not contain expected ops {missing}; ops present: {sorted(present)}"
        )


def assert_shapes_match(expected: np.ndarray, actual: np.ndarray, *, where: str = "") -> None:
    """Fail when the PyTorch (``expected``) and TVM (``actual``) output shapes differ."""
    if expected.shape != actual.shape:
        suffix = f" ({where})" if where else ""
        raise AssertionError(
            f"Output shapes {expected.shape} (PyTorch) and {actual.shape} (TVM) don't match{suffix}"
        )


def _flatten_torch(output: Any, path: str = "output") -> list[np.ndarray]:
    if isinstance(output, torch.Tensor):
        return [output.detach().cpu().numpy()]
    if isinstance(output, (tuple, list)):
        return [a for i, o in enumerate(output) for a in _flatten_torch(o, f"{path}[{i}]")]
    raise TypeError(f"unsupported model output type at {path}: {type(output).__name__}")


def _flatten_tvm(output: Any) -> list[np.ndarray]:
    if isinstance(output, tvm.runtime.Tensor):
        return [output.numpy()]
    if isinstance(output, Sequence) and not isinstance(output, str):
        return [a for o in output for a in _flatten_tvm(o)]
    raise TypeError(f"unsupported Relax VM output type: {type(output).__name__}")


def _compare_outputs(
    expected: list[numerics.Reference],
    actual: list[np.ndarray],
    *,
    where: str,
    rtol: float | None = None,
    atol: float | None = None,
) -> None:
    if len(expected) != len(actual):
        raise AssertionError(
            f"PyTorch returned {len(expected)} output(s), TVM returned {len(actual)} ({where})"
        )
    failures = []
    judged = True
    for i, (want, got) in enumerate(zip(expected, actual, strict=True)):
        label = f"output {i}, {where}"
        assert_shapes_match(want.value, got, where=label)
        if want.dtype != got.dtype:
            raise AssertionError(
                f"Output dtypes {want.dtype} (PyTorch) and {got.dtype} (TVM) don't match ({label})"
            )
        if rtol is not None or atol is not None:
            # The deprecated override: element-wise against the float64 reference.
            np.testing.assert_allclose(
                got, want.value, rtol=rtol or 0.0, atol=atol or 0.0, err_msg=label
            )
            continue
        comparison = numerics.compare(got, want, label=f"output {i}")
        if not comparison.ok:
            failures.append(comparison.message)
            judged = judged and comparison.judgeable
    if failures:
        # An output the rule cannot judge fails closed, as its own kind (numerics.NotJudgeable).
        raise (AssertionError if judged else numerics.NotJudgeable)(
            "; ".join(failures) + f" ({where})"
        )


def verify_model(
    model: torch.nn.Module,
    inputs: torch.Tensor | Sequence[torch.Tensor],
    *,
    expected_ops: Sequence[str],
    rtol: float | None = None,
    atol: float | None = None,
    frontend: str = "exported_program",
    exec_modes: Sequence[str] = EXEC_MODES,
    target: str | tvm.target.Target = "llvm",
    dev: tvm.runtime.Device | None = None,
    params: Mapping[str, WeightValue] | None = None,
) -> None:
    """Import ``model``, bind its weights by name, run it on the Relax VM, compare with PyTorch.

    Checks, in order: ``expected_ops`` appear in the imported IR; every weight binds by name
    (``params``, keyed by PyTorch parameter name, defaults to the imported weights); for each
    exec mode, every output matches PyTorch's in shape and dtype, and in value within what
    rounding in the output's dtype allows (tvm_conformance.numerics: against the model evaluated
    in float64; docs/model_import.md, "The tolerance rule").

    ``rtol``/``atol`` are deprecated: given, they replace the rule by an element-wise
    ``|tvm - float64 reference| <= atol + rtol * |reference|`` and warn.
    """
    inputs = _check_model_and_inputs(model, inputs)
    _check_frontend(frontend)
    modes = _check_exec_modes(exec_modes)
    expected_op_names = _check_expected_ops(expected_ops)
    if rtol is not None or atol is not None:
        if (rtol or 0.0) < 0 or (atol or 0.0) < 0:
            raise ValueError(f"rtol and atol must be >= 0, got rtol={rtol}, atol={atol}")
        warnings.warn(
            "verify_model's rtol/atol are deprecated: the tolerance follows from the computation "
            "(docs/model_import.md, 'The tolerance rule'); given, they replace it",
            DeprecationWarning,
            stacklevel=2,
        )
    tgt, dev = _resolve_device(target, dev)

    expected = numerics.references(model, [t.clone() for t in inputs], target=tgt)

    imported = import_model(model, inputs, frontend=frontend)
    assert_ops_present(imported.mod, expected_op_names)
    bound = bind_weights(imported, params)

    args = [tvm.runtime.tensor(t.detach().cpu().numpy(), dev) for t in inputs]
    for mode in modes:
        executable = relax.build(bound, tgt, exec_mode=mode)
        vm = relax.VirtualMachine(executable, dev)
        output = vm["main"](*args)
        # On the target's device, not a CPU fallback (a cuda case must use the GPU).
        assert_on_device(output, dev)
        actual = _flatten_tvm(output)
        where = f"frontend {frontend!r}, exec mode {mode!r}, target {tgt.kind.name!r}"
        _compare_outputs(expected, actual, where=where, rtol=rtol, atol=atol)
