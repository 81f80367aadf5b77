"""The tolerance rule's floors at the widths users run: small wrong weights and constants FAIL.

TVM runs each model, imported once with its weights as parameters, with a wrong weight (the
float64 reference keeps the right one), or imports a model with a wrong constant; the correct
run of each model passes. The models: the kit's MLP, and tvm_conformance.wide_models' Linear
layers 1024 and 4096 wide and pre-LayerNorm transformer MLP block of width 512 (PyTorch's own
initialisation). docs/model_import.md ("The tolerance rule") gives the figures of each.
"""

import copy
from collections.abc import Callable

import numpy as np
import pytest
import torch
import tvm
from tvm import relax

from tvm_conformance import numerics, wide_models
from tvm_conformance.model_import import bind_weights, import_model, seed_parameters
from tvm_conformance.seed_models import Mlp

OUT_OF_RULE = r"differ from the float64 reference by more than float32 rounding allows"


class _Built:
    """A model imported once with its weights as parameters and built once for a target, run
    with any weights: the floors change weights, not the program."""

    def __init__(self, model: torch.nn.Module, x: torch.Tensor, target: str, dev) -> None:
        self.model, self.x, self.dev = model, x, dev
        imported = import_model(model, [x])
        by_var = {v: k for k, v in imported.var_names.items()}
        self.order = [
            by_var[var.name] for var in list(imported.mod["main"].params)[imported.num_inputs :]
        ]
        self.vm = relax.VirtualMachine(relax.build(imported.mod, target, exec_mode="bytecode"), dev)
        self.refs = numerics.references(model, [x], target=target)

    def run(self, change: dict[str, Callable[[np.ndarray], np.ndarray]]) -> list[np.ndarray]:
        """The outputs with ``change`` applied to the named weights (the reference keeps the
        model's own)."""
        weights = {k: v.detach().numpy().copy() for k, v in self.model.named_parameters()}
        for name, edit in change.items():
            weights[name] = edit(weights[name]).astype(np.float32)
        args = [self.x.numpy(), *(weights[name] for name in self.order)]
        out = self.vm["main"](*[tvm.runtime.tensor(a, self.dev) for a in args])
        return [o.numpy() for o in out]


_BUILT: dict[tuple[str, str], _Built] = {}


def _built(name: str, make: Callable, target: str, dev) -> _Built:
    if (name, str(target)) not in _BUILT:
        model, x = make()
        _BUILT[name, str(target)] = _Built(model, x, target, dev)
    return _BUILT[name, str(target)]


def _to_bfloat16(values: np.ndarray) -> np.ndarray:
    return torch.from_numpy(values).bfloat16().float().numpy()


def _scaled(factor: float) -> Callable[[np.ndarray], np.ndarray]:
    return lambda values: values * np.float32(factor)


def _kit_mlp() -> tuple[torch.nn.Module, torch.Tensor]:
    """mlp_test's model and input (seeded N(0, 1) weights, the input x4)."""
    torch.manual_seed(0)
    model = seed_parameters(Mlp()).eval()
    return model, torch.randn(2, 16) * 4.0


def _block() -> tuple[torch.nn.Module, torch.Tensor]:
    model, _ = wide_models.make("mlp_block_512", 0)
    return model, torch.randn(1, 16, 512, generator=torch.Generator().manual_seed(1))


_MODELS = {
    "kit_mlp": _kit_mlp,
    "linear_1024": lambda: wide_models.make("linear_1024", 0),
    "linear_4096": lambda: wide_models.make("linear_4096", 0),
    "mlp_block_512": _block,
}
_FLOORS = [
    pytest.param("kit_mlp", {"fc2.bias": _scaled(1 + 1e-4)}, id="kit_mlp-bias_off_by_1e-4"),
    pytest.param("kit_mlp", {"fc2.bias": _scaled(1 - 1e-4)}, id="kit_mlp-bias_off_by_-1e-4"),
    *(
        pytest.param(name, {"fc.bias": change}, id=f"{name}-{what}")
        for name in ("linear_1024", "linear_4096")
        for what, change in (
            ("bias_off_by_1e-3", _scaled(1 + 1e-3)),
            ("bias_rounded_to_bfloat16", _to_bfloat16),
        )
    ),
    pytest.param(
        "mlp_block_512", {"down.bias": _scaled(1 + 1e-3)}, id="mlp_block_512-down_bias_1e-3"
    ),
    # Caught by the previous rule too; kept as a regression check.
    pytest.param(
        "mlp_block_512", {"norm.weight": _scaled(1 + 1e-3)}, id="mlp_block_512-norm_gain_1e-3"
    ),
]


@pytest.mark.parametrize("name", sorted(_MODELS))
def test_correct_weights_pass(name: str, target: str, dev: tvm.runtime.Device) -> None:
    built = _built(name, _MODELS[name], target, dev)
    numerics.check_outputs(built.run({}), built.refs)


@pytest.mark.parametrize(("name", "change"), _FLOORS)
def test_a_small_weight_error_fails(
    name: str, change: dict, target: str, dev: tvm.runtime.Device
) -> None:
    built = _built(name, _MODELS[name], target, dev)
    with pytest.raises(AssertionError, match=OUT_OF_RULE):
        numerics.check_outputs(built.run(change), built.refs)


def test_transformer_block_layer_norm_eps_1e_4_instead_of_1e_5_fails(
    target: str, dev: tvm.runtime.Device
) -> None:
    built = _built("mlp_block_512", _block, target, dev)
    model, x, refs = built.model, built.x, built.refs
    planted = copy.deepcopy(model)
    planted.norm.eps = 1e-4
    bound = bind_weights(import_model(planted, [x]))
    vm = relax.VirtualMachine(relax.build(bound, target, exec_mode="bytecode"), dev)
    out = vm["main"](tvm.runtime.tensor(x.numpy(), dev))
    with pytest.raises(AssertionError, match=OUT_OF_RULE):
        numerics.check_outputs([o.numpy() for o in out], refs)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("width", [512, 4096])
def test_half_precision_matmul_is_within_the_rule(
    dtype: str, width: int, target: str, dev: tvm.runtime.Device
) -> None:
    """A float16 / bfloat16 matmul and tanh compiled by TVM (accumulating in the dtype or
    wider, whichever it does) is within the rule; the same program given the weight doubled
    is not."""
    from tvm.script import relax as R  # noqa: N812

    builder = relax.BlockBuilder()
    a = relax.Var("a", R.Tensor((16, width), dtype))
    w = relax.Var("w", R.Tensor((width, 64), dtype))
    with builder.function("main", [a, w]):
        y = builder.emit(relax.op.matmul(a, w))
        builder.emit_func_output(relax.Tuple([y, builder.emit(relax.op.tanh(y))]))
    vm = relax.VirtualMachine(relax.build(builder.get(), target, exec_mode="bytecode"), dev)
    generator = torch.Generator().manual_seed(width)
    torch_dtype = getattr(torch, dtype)
    ta = torch.randn(16, width, generator=generator).to(torch_dtype)
    tw = (torch.randn(width, 64, generator=generator) / width**0.5).to(torch_dtype)
    refs = numerics.references(lambda p, q: (p @ q, torch.tanh(p @ q)), [ta, tw], target=target)
    as_numpy = numerics.numpy_dtype(dtype)

    def tensor(t: torch.Tensor) -> tvm.runtime.Tensor:
        return tvm.runtime.tensor(t.view(torch.int16).numpy().view(as_numpy), dev)

    out = [o.numpy() for o in vm["main"](tensor(ta), tensor(tw))]
    assert [o.dtype for o in out] == [as_numpy, as_numpy]
    numerics.check_outputs(out, refs)
    wrong = [o.numpy() for o in vm["main"](tensor(ta), tensor(tw * 2))]
    assert not numerics.matches(wrong, refs)
